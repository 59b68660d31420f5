-- 011-replicaset-rank.sql - the ReplicaSet controller's manage step as SQL: which pods a
-- ReplicaSet (or ReplicationController) has, how many too many, and the order in which a
-- scale-down deletes them. The controller runs this view's own text (see
-- replicaset_pod_rank below); what `sqlite3` shows is what the sync decides.

-- powers_of_two: 2^0 .. 2^62, for the logarithmic age buckets of the ranking. The bucket
-- of x nanoseconds, floor(log2(x)), is the exponent of the largest power not above x.
-- (SQLite's log2() exists only in builds with its math functions; this works in any.)
CREATE TABLE powers_of_two (
    value    INTEGER PRIMARY KEY,
    exponent INTEGER NOT NULL
);
WITH RECURSIVE p(exponent, value) AS (
    SELECT 0, 1 UNION ALL SELECT exponent + 1, value * 2 FROM p WHERE exponent < 62)
INSERT INTO powers_of_two (value, exponent) SELECT value, exponent FROM p;

-- replicaset_pod_rank: one row per pod a ReplicaSet or ReplicationController claims, in
-- the order its scale-down deletes them (kube-controller-manager's ActivePodsWithRanks).
--   kind, namespace, owner, owner_uid   the ReplicaSet or ReplicationController
--   pod, pod_uid
--   rank         1 goes first
--   excess       claimed pods minus spec.replicas: > 0 pods to delete, < 0 pods to
--                create (an owner with no pod has no row: replicaset_diff shows it)
--   to_delete    1 when a sync would delete it now: rank <= excess, at most 500 (one
--                sync's burst), and the owner not being deleted (the sync also waits for
--                its expectations, which this view does not read)
-- and the rank's keys, compared in this order:
--   assigned           0 before 1: not yet on a node
--   phase_order        Pending (or none) 0, Unknown 1, Running 2
--   ready              not ready before ready
--   deletion_cost      the controller.kubernetes.io/pod-deletion-cost annotation, lowest first
--   colocated          more first: the active pods on its node that any ReplicaSet with the
--                      same controller owner selects (a Deployment's ReplicaSets spread
--                      together); 0 for all when the owner has no controller owner
--   ready_bucket       ready pods only: the age of the Ready condition's
--                      lastTransitionTime, as floor(log2(nanoseconds)), newer first; -2
--                      with no time, -1 for a time not in the past
--   restarts, sidecar_restarts   more first
--   created_bucket     the same bucket of metadata.creationTimestamp, newer first
-- then the uid (see ready_tie below).
--
-- Claimed is kube's ControllerRefManager as the cache shows it: the pods it controls (by
-- kind, name and uid) and the orphans, when it is not being deleted, that its selector
-- matches, neither finished (Succeeded, Failed) nor being deleted. The sync adopts the
-- orphans and releases the pods that stopped matching before it counts.
--
-- The sync runs this text with its own time and one owner: it replaces the clock and
-- focus lines below, which must stay as they are (src/controllers/replicaset.c checks).
CREATE VIEW replicaset_pod_rank AS
WITH
clock(now) AS (SELECT (julianday('now') - 2440587.5) * 86400.0),
focus(owner_uid) AS (SELECT uid FROM cache_replicasets UNION ALL SELECT uid FROM cache_replicationcontrollers),
owners(kind, id, uid, namespace, name, selector, replicas, deleting) AS (
    SELECT 'ReplicaSet', id, uid, namespace, name, selector, replicas,
           deletion_timestamp IS NOT NULL
      FROM cache_replicasets WHERE uid IN (SELECT owner_uid FROM focus)
    UNION ALL
    SELECT 'ReplicationController', id, uid, namespace, name, selector, replicas,
           deletion_timestamp IS NOT NULL
      FROM cache_replicationcontrollers WHERE uid IN (SELECT owner_uid FROM focus)),
-- The owners whose selectors count for an owner's co-location: itself and, when it has a
-- controller owner, the owners of its kind with the same one (a Deployment's ReplicaSets).
-- Each read by its id: the cost is the owner's, not the cache's.
peer_ids(owner_uid, owner_id, kind, grouped, id) AS (
    SELECT o.uid, o.id, o.kind,
           EXISTS (SELECT 1 FROM object_owners c WHERE c.object_id = o.id AND c.controller = 1),
           o.id
      FROM owners o
    UNION
    SELECT o.uid, o.id, o.kind, 1, peer.object_id
      FROM owners o
      JOIN object_owners mine ON mine.object_id = o.id AND mine.controller = 1
      JOIN object_owners peer ON peer.owner_uid = mine.owner_uid AND peer.controller = 1),
peers(owner_uid, grouped, id, own, namespace, selector) AS (
    SELECT i.owner_uid, i.grouped, s.id, s.id = i.owner_id, s.namespace, s.selector
      FROM peer_ids i JOIN cache_replicasets s ON s.id = i.id
     WHERE i.kind = 'ReplicaSet'
    UNION ALL
    SELECT i.owner_uid, i.grouped, s.id, s.id = i.owner_id, s.namespace, s.selector
      FROM peer_ids i JOIN cache_replicationcontrollers s ON s.id = i.id
     WHERE i.kind = 'ReplicationController'),
-- Their selectors, read once (MATERIALIZED: else each pod reads them again, twice the
-- time of the whole query): the labels matchLabels wants, and matchExpressions.
wanted(id, key, value) AS MATERIALIZED (
    SELECT s.id, m.key, m.value FROM peers s, json_each(s.selector, '$.matchLabels') m),
required(id, key, operator, vals) AS MATERIALIZED (
    SELECT s.id, e.value ->> 'key', e.value ->> 'operator', coalesce(e.value -> 'values', '[]')
      FROM peers s, json_each(s.selector, '$.matchExpressions') e),
-- Every active pod a peer's selector (a LabelSelector) matches, once for each owner; own:
-- the owner's own selector matches it.
pool(owner_uid, grouped, id, node, own) AS (
    SELECT s.owner_uid, s.grouped, p.id, coalesce(p.node_name, ''), max(s.own)
      FROM peers s CROSS JOIN cache_pods p
     WHERE p.namespace = s.namespace
       AND p.deletion_timestamp IS NULL
       AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')
       AND s.selector IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM wanted m
                        WHERE m.id = s.id
                          AND NOT EXISTS (SELECT 1 FROM object_labels l
                                           WHERE l.object_id = p.id AND l.key = m.key
                                             AND l.value = m.value))
       AND NOT EXISTS (
           SELECT 1 FROM required e
            WHERE e.id = s.id
              AND CASE e.operator
                  WHEN 'In' THEN NOT EXISTS (
                      SELECT 1 FROM object_labels l, json_each(e.vals) v
                       WHERE l.object_id = p.id AND l.key = e.key AND l.value = v.value)
                  WHEN 'NotIn' THEN EXISTS (
                      SELECT 1 FROM object_labels l, json_each(e.vals) v
                       WHERE l.object_id = p.id AND l.key = e.key AND l.value = v.value)
                  WHEN 'Exists' THEN NOT EXISTS (
                      SELECT 1 FROM object_labels l WHERE l.object_id = p.id AND l.key = e.key)
                  WHEN 'DoesNotExist' THEN EXISTS (
                      SELECT 1 FROM object_labels l WHERE l.object_id = p.id AND l.key = e.key)
                  ELSE 1 END)
     GROUP BY s.owner_uid, p.id),
-- colocated: how many of the pool are on each node.
located(owner_uid, id, own, colocated) AS (
    SELECT owner_uid, id, own,
           CASE WHEN grouped THEN count(*) OVER (PARTITION BY owner_uid, node) ELSE 0 END
      FROM pool),
-- The pods the owner claims (kube's ControllerRefManager, as the cache shows it): those it
-- controls, by kind, name and uid, and the orphans when it is not being deleted.
keyed AS (
    SELECT o.kind, o.uid AS owner_uid, o.namespace, o.name AS owner, o.replicas,
           o.deleting, p.uid, p.name,
           coalesce(p.node_name, '') != '' AS assigned,
           CASE p.phase WHEN 'Unknown' THEN 1 WHEN 'Running' THEN 2 ELSE 0 END AS phase_order,
           coalesce(p.ready, 0) AS ready,
           coalesce(p.deletion_cost, 0) AS deletion_cost,
           l.colocated,
           CASE WHEN coalesce(p.ready, 0) THEN unixepoch(p.ready_since) END AS ready_at,
           p.restarts, p.sidecar_restarts,
           unixepoch(p.creation_timestamp) AS created_at
      FROM located l
      JOIN owners o ON o.uid = l.owner_uid
      JOIN cache_pods p ON p.id = l.id
     WHERE l.own
       AND (p.controller_uid = o.uid
            AND EXISTS (SELECT 1 FROM object_owners c
                         WHERE c.object_id = p.id AND c.controller = 1
                           AND c.kind = o.kind AND c.name = o.name)
            OR p.controller_uid IS NULL AND NOT o.deleting)),
-- The age buckets: floor(log2(nanoseconds)), -1 for a time not in the past.
bucketed AS (
    SELECT *,
           CASE WHEN NOT ready THEN 0
                WHEN ready_at IS NULL THEN -2
                ELSE coalesce((SELECT exponent FROM powers_of_two
                                WHERE value <= CAST(((SELECT now FROM clock) - ready_at) * 1e9
                                                    AS INTEGER)
                                ORDER BY value DESC LIMIT 1), -1) END AS ready_bucket,
           CASE WHEN created_at IS NULL THEN -2
                ELSE coalesce((SELECT exponent FROM powers_of_two
                                WHERE value <= CAST(((SELECT now FROM clock) - created_at) * 1e9
                                                    AS INTEGER)
                                ORDER BY value DESC LIMIT 1), -1) END AS created_bucket
      FROM keyed),
-- Where kube's rule is not an order. Two ready pods in the same bucket: if their ready
-- times differ, kube puts the lower uid first; if the times are equal, it goes on to the
-- restarts and the creation time. With three pods that mixes into a cycle (a before b by
-- restarts, b before c by uid, c before a by uid), and kube's result is then whatever its
-- sort makes of it. A query needs an order, so the pods with the same ready time stand
-- together, under the lowest uid among them (ready_tie), and go on to the later rules among
-- themselves. That is kube's rule whenever kube's rule is an order. The creation time's
-- bucket (rule 8) has the same shape: created_tie.
tied AS (
    SELECT *,
           min(uid) OVER (PARTITION BY owner_uid, assigned, phase_order, ready, deletion_cost,
                                       colocated, ready_bucket, ready_at) AS ready_tie,
           min(uid) OVER (PARTITION BY owner_uid, assigned, phase_order, ready, deletion_cost,
                                       colocated, ready_bucket, ready_at, restarts,
                                       sidecar_restarts, created_bucket, created_at) AS created_tie
      FROM bucketed)
SELECT kind, namespace, owner, owner_uid, name AS pod, uid AS pod_uid,
       row_number() OVER byrank AS rank,
       count(*) OVER byowner - replicas AS excess,
       NOT deleting
       AND row_number() OVER byrank <= min(count(*) OVER byowner - replicas, 500) AS to_delete,
       assigned, phase_order, ready, deletion_cost, colocated, ready_bucket, restarts,
       sidecar_restarts, created_bucket
  FROM tied
WINDOW byowner AS (PARTITION BY owner_uid),
       byrank AS (PARTITION BY owner_uid
                  ORDER BY assigned, phase_order, ready, deletion_cost, colocated DESC,
                           ready_bucket, ready_tie, restarts DESC, sidecar_restarts DESC,
                           created_bucket, created_tie, uid)
;
