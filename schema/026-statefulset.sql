-- 026-statefulset.sql - a StatefulSet's ordinals, for people (the StatefulSet controller,
-- src/controllers/statefulset.c, decides the same in C).
--
-- statefulset_ordinals: one row per cached StatefulSet and ordinal that is either in its
-- range (spec.ordinals.start, spec.replicas of them) or held by a pod it controls named
-- "<set>-<ordinal>":
--   namespace, statefulset, ordinal, pod (the pod's name, "<set>-<ordinal>"),
--   in_range (0/1: the ordinal is one the set wants; 0: a condemned pod, to be deleted),
--   pod_exists (0/1), phase (the pod's status.phase, NULL when none),
--   ready (0/1: Running with the Ready condition True),
--   deleting (0/1: the pod has a deletionTimestamp),
--   revision (its controller-revision-hash label: the ControllerRevision it was made of),
--   current (0/1: that is status.currentRevision), updated (0/1: status.updateRevision),
--   state: 'missing' (in range, no pod), 'condemned' (out of range), 'terminating',
--     'failed' (Failed or Succeeded: the controller replaces it), 'not-ready', 'outdated'
--     (ready, of another revision than the update one), or 'ok'.
--   SELECT ordinal, state FROM statefulset_ordinals WHERE statefulset = 'web' ORDER BY 3;
-- Ordinals past the 100000th of a set are not listed.
CREATE VIEW statefulset_ordinals AS
WITH RECURSIVE
sts AS MATERIALIZED (
  SELECT uid, namespace, name,
         coalesce(json_extract(body, '$.spec.ordinals.start'), 0) AS start,
         coalesce(json_extract(body, '$.spec.replicas'), 1) AS replicas,
         coalesce(json_extract(body, '$.status.currentRevision'), '') AS current_revision,
         coalesce(json_extract(body, '$.status.updateRevision'), '') AS update_revision
    FROM cache_objects WHERE resource = 'statefulsets'),
wanted(sts_uid, ordinal, last) AS (
  SELECT uid, start, start + min(replicas, 100000) - 1 FROM sts WHERE replicas > 0
  UNION ALL
  SELECT sts_uid, ordinal + 1, last FROM wanted WHERE ordinal < last),
-- The set's pods (its controller reference) named "<set>-<digits>".
owned AS MATERIALIZED (
  SELECT sts.uid AS sts_uid, p.name, p.phase, p.ready, p.deletion_timestamp,
         json_extract(p.body, '$.metadata.labels."controller-revision-hash"') AS revision,
         CAST(substr(p.name, length(sts.name) + 2) AS INTEGER) AS ordinal
    FROM sts CROSS JOIN cache_pods p
   WHERE p.namespace = sts.namespace AND p.controller_uid = sts.uid
     AND substr(p.name, 1, length(sts.name) + 1) = sts.name || '-'
     AND length(p.name) > length(sts.name) + 1
     AND substr(p.name, length(sts.name) + 2) NOT GLOB '*[^0-9]*'),
ordinals(sts_uid, ordinal) AS (
  SELECT sts_uid, ordinal FROM wanted
  UNION
  SELECT sts_uid, ordinal FROM owned)
SELECT sts.namespace, sts.name AS statefulset, o.ordinal,
       sts.name || '-' || o.ordinal AS pod,
       (o.ordinal >= sts.start AND o.ordinal < sts.start + sts.replicas) AS in_range,
       p.name IS NOT NULL AS pod_exists, p.phase,
       coalesce(p.phase = 'Running' AND p.ready = 1, 0) AS ready,
       p.deletion_timestamp IS NOT NULL AS deleting,
       p.revision,
       coalesce(p.revision = sts.current_revision, 0) AS current,
       coalesce(p.revision = sts.update_revision, 0) AS updated,
       CASE
         WHEN p.name IS NULL THEN 'missing'
         WHEN NOT (o.ordinal >= sts.start AND o.ordinal < sts.start + sts.replicas)
           THEN 'condemned'
         WHEN p.deletion_timestamp IS NOT NULL THEN 'terminating'
         WHEN p.phase IN ('Failed', 'Succeeded') THEN 'failed'
         WHEN NOT coalesce(p.phase = 'Running' AND p.ready = 1, 0) THEN 'not-ready'
         WHEN coalesce(p.revision, '') <> sts.update_revision THEN 'outdated'
         ELSE 'ok'
       END AS state
  FROM ordinals o
  JOIN sts ON sts.uid = o.sts_uid
  LEFT JOIN owned p ON p.sts_uid = o.sts_uid AND p.ordinal = o.ordinal;
