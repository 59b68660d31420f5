-- 019-nodelifecycle-taints.sql - nodelifecycle_noschedule_taints (013) again, the same rows
-- read at a fraction of the cost: the node lifecycle controller asks it for each node at
-- every monitor period (200 times a second on 1000 nodes).
--
-- The first version crossed each node with every key the controller owns and, for each
-- pair, looked the key up in status.conditions and spec.taints with json_each; SQLite
-- (3.40) parses the node's whole JSON body at each json_each, and evaluated those lookups
-- several times per row (the view is flattened into the query, which names position and
-- present again in its WHERE and ORDER BY): about 40 parses of the body per node. This one
-- walks status.conditions once (the wanted taints and their position) and spec.taints
-- once (those present and not wanted), plus one look at spec.unschedulable; a healthy
-- node, which wants none and has none, costs three parses. On a 1000-node cache: 19 us a
-- node against 69-87 us, and the same rows (bench/nodes, in bench/README.md).
--
-- Columns as in 013: node, taint_key, wanted, present, position (kube's order: the
-- first calling condition's index in status.conditions, 1000000 for unschedulable, NULL
-- for a taint not wanted). Three parts: the taints a condition calls for (its first
-- calling condition: a condition type listed twice counts once), unschedulable when
-- spec.unschedulable is true, and the owned NoSchedule taints present that nothing calls
-- for. A WHERE on node reads that node alone in each part.
DROP VIEW nodelifecycle_noschedule_taints;
CREATE VIEW nodelifecycle_noschedule_taints AS
SELECT n.name AS node, m.taint_key, 1 AS wanted,
       EXISTS (SELECT 1 FROM json_each(n.body, '$.spec.taints') t
                WHERE json_extract(t.value, '$.key') = m.taint_key
                  AND json_extract(t.value, '$.effect') = 'NoSchedule') AS present,
       c.key AS position
  FROM cache_objects n, json_each(n.body, '$.status.conditions') c
  JOIN node_condition_taints m
    ON m.condition = json_extract(c.value, '$.type')
   AND m.status = json_extract(c.value, '$.status')
 WHERE n.resource = 'nodes' AND n.namespace = ''
   AND NOT EXISTS (SELECT 1 FROM json_each(n.body, '$.status.conditions') e
                    JOIN node_condition_taints o
                      ON o.condition = json_extract(e.value, '$.type')
                     AND o.status = json_extract(e.value, '$.status')
                   WHERE o.taint_key = m.taint_key AND e.key < c.key)
UNION ALL
SELECT n.name, 'node.kubernetes.io/unschedulable', 1,
       EXISTS (SELECT 1 FROM json_each(n.body, '$.spec.taints') t
                WHERE json_extract(t.value, '$.key') = 'node.kubernetes.io/unschedulable'
                  AND json_extract(t.value, '$.effect') = 'NoSchedule'),
       1000000
  FROM cache_objects n
 WHERE n.resource = 'nodes' AND n.namespace = ''
   AND json_extract(n.body, '$.spec.unschedulable') = 1
UNION ALL
SELECT DISTINCT n.name, json_extract(t.value, '$.key'), 0, 1, NULL
  FROM cache_objects n, json_each(n.body, '$.spec.taints') t
 WHERE n.resource = 'nodes' AND n.namespace = ''
   AND json_extract(t.value, '$.effect') = 'NoSchedule'
   AND json_extract(t.value, '$.key') IN (SELECT taint_key FROM nodelifecycle_taint_keys)
   AND NOT (json_extract(t.value, '$.key') = 'node.kubernetes.io/unschedulable'
            AND json_extract(n.body, '$.spec.unschedulable') IS 1)
   AND NOT EXISTS (SELECT 1 FROM json_each(n.body, '$.status.conditions') c
                    JOIN node_condition_taints m
                      ON m.condition = json_extract(c.value, '$.type')
                     AND m.status = json_extract(c.value, '$.status')
                   WHERE m.taint_key = json_extract(t.value, '$.key'));
