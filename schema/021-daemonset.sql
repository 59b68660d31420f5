-- 021-daemonset.sql - where DaemonSets' pods are and where they should be, for people
-- (the DaemonSet controller, src/controllers/daemonset.c, decides the same in C).
--
-- daemonset_nodes: one row per cached DaemonSet and node that either has a pod of the
-- DaemonSet (its controller, bound there or pinned there by node affinity) or whose labels
-- the DaemonSet's nodeSelector picks:
--   namespace, daemonset, node,
--   selector_fits (0/1: the template's nodeName, if any, is the node, and its nodeSelector's
--     labels are all the node's),
--   affinity_unchecked (0/1: the template has a required node affinity, which this view
--     does not evaluate: the controller does),
--   untolerated_no_schedule, untolerated_no_execute (the node's NoSchedule and NoExecute
--     taints that neither the template's tolerations nor the ones kube adds to every daemon
--     pod tolerate: not-ready and unreachable NoExecute; disk-, memory- and pid-pressure
--     and unschedulable NoSchedule; network-unavailable NoSchedule with hostNetwork),
--   pods (the DaemonSet's pods there, not being deleted),
--   state: 'missing' (it should run a daemon pod and has none), 'evict' (it has pods that
--     may not stay: an untolerated NoExecute taint or a selector that no longer fits),
--     'misscheduled' (pods that may stay but where no new one would go: an untolerated
--     NoSchedule taint), 'extra' (more than one pod), or 'ok'.
--   SELECT node, state FROM daemonset_nodes WHERE daemonset = 'fluentd' AND state <> 'ok';
CREATE VIEW daemonset_nodes AS
WITH
ds AS MATERIALIZED (
  SELECT uid, namespace, name, json_extract(body, '$.spec.template.spec') AS spec
    FROM cache_objects WHERE resource = 'daemonsets'),
node AS MATERIALIZED (
  SELECT name, json_extract(body, '$.metadata.labels') AS labels,
         json_extract(body, '$.spec.taints') AS taints
    FROM cache_objects WHERE resource = 'nodes' AND namespace = ''),
-- The tolerations kube adds to daemon pods: key, effect, whether only with hostNetwork.
added(key, effect, host_network) AS (VALUES
  ('node.kubernetes.io/not-ready', 'NoExecute', 0),
  ('node.kubernetes.io/unreachable', 'NoExecute', 0),
  ('node.kubernetes.io/disk-pressure', 'NoSchedule', 0),
  ('node.kubernetes.io/memory-pressure', 'NoSchedule', 0),
  ('node.kubernetes.io/pid-pressure', 'NoSchedule', 0),
  ('node.kubernetes.io/unschedulable', 'NoSchedule', 0),
  ('node.kubernetes.io/network-unavailable', 'NoSchedule', 1)),
-- Each DaemonSet's tolerations: the template's and the added ones.
toleration(ds_uid, key, operator, value, effect) AS (
  SELECT ds.uid, coalesce(json_extract(t.value, '$.key'), ''),
         coalesce(json_extract(t.value, '$.operator'), ''),
         coalesce(json_extract(t.value, '$.value'), ''),
         coalesce(json_extract(t.value, '$.effect'), '')
    FROM ds, json_each(ds.spec, '$.tolerations') t
  UNION ALL
  SELECT ds.uid, a.key, 'Exists', '', a.effect FROM ds, added a
   WHERE a.host_network = 0 OR coalesce(json_extract(ds.spec, '$.hostNetwork'), 0) = 1),
-- Each pair's taints no toleration tolerates (kube's ToleratesTaint).
untolerated(ds_uid, node, effect) AS (
  SELECT ds.uid, node.name, json_extract(x.value, '$.effect')
    FROM ds, node, json_each(node.taints) x
   WHERE json_extract(x.value, '$.effect') IN ('NoSchedule', 'NoExecute')
     AND NOT EXISTS (
       SELECT 1 FROM toleration t
        WHERE t.ds_uid = ds.uid
          AND (t.effect = '' OR t.effect = json_extract(x.value, '$.effect'))
          AND (t.key = '' OR t.key = json_extract(x.value, '$.key'))
          AND (t.operator = 'Exists' OR (t.operator IN ('', 'Equal')
               AND t.value = coalesce(json_extract(x.value, '$.value'), ''))))),
-- The DaemonSets' live pods by the node they are bound or pinned to.
pod AS MATERIALIZED (
  SELECT p.controller_uid AS ds_uid,
         coalesce(p.node_name, json_extract(p.body,
           '$.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution'
           || '.nodeSelectorTerms[0].matchFields[0].values[0]')) AS node
    FROM cache_pods p JOIN ds ON ds.uid = p.controller_uid
   WHERE p.deletion_timestamp IS NULL),
pair AS (
  SELECT ds.uid AS ds_uid, ds.namespace, ds.name AS daemonset, node.name AS node,
         coalesce(json_extract(ds.spec, '$.nodeName'), node.name) = node.name
         AND NOT EXISTS (SELECT 1 FROM json_each(ds.spec, '$.nodeSelector') s
                          WHERE json_extract(node.labels, '$."' || s.key || '"')
                                IS NOT s.value) AS selector_fits,
         json_extract(ds.spec, '$.affinity.nodeAffinity'
           || '.requiredDuringSchedulingIgnoredDuringExecution') IS NOT NULL
           AS affinity_unchecked,
         (SELECT count(*) FROM untolerated u WHERE u.ds_uid = ds.uid AND u.node = node.name
             AND u.effect = 'NoSchedule') AS untolerated_no_schedule,
         (SELECT count(*) FROM untolerated u WHERE u.ds_uid = ds.uid AND u.node = node.name
             AND u.effect = 'NoExecute') AS untolerated_no_execute,
         (SELECT count(*) FROM pod WHERE pod.ds_uid = ds.uid AND pod.node = node.name) AS pods
    FROM ds CROSS JOIN node)
SELECT namespace, daemonset, node, selector_fits, affinity_unchecked,
       untolerated_no_schedule, untolerated_no_execute, pods,
       CASE
         WHEN pods > 0 AND (NOT selector_fits OR untolerated_no_execute > 0) THEN 'evict'
         WHEN pods = 0 THEN 'missing'
         WHEN untolerated_no_schedule > 0 THEN 'misscheduled'
         WHEN pods > 1 THEN 'extra'
         ELSE 'ok'
       END AS state
  FROM pair
 WHERE pods > 0 OR (selector_fits AND untolerated_no_schedule = 0
                    AND untolerated_no_execute = 0);
