-- 013-nodelifecycle.sql - the node lifecycle controller (src/controllers/nodelifecycle.c):
-- the NoSchedule taints a node's conditions and spec call for (kube's
-- TaintNodesByCondition, done by its doNoScheduleTaintingPass), and the beta OS and arch
-- labels it keeps equal to the stable ones (reconcileNodeLabels).
--
-- Nodes are kept whole in cache_objects (006-core.sql): these read status.conditions,
-- spec.unschedulable, spec.taints and metadata.labels.

-- node_condition_taints: kube's nodeConditionToTaintKeyStatusMap. A node whose condition
-- `condition` has status `status` should carry the NoSchedule taint `taint_key`; the
-- controller owns exactly these keys and node.kubernetes.io/unschedulable (for
-- spec.unschedulable), and leaves every other taint as it is.
CREATE TABLE node_condition_taints (
    condition  TEXT NOT NULL,      -- a node condition's type: 'Ready', 'DiskPressure', ...
    status     TEXT NOT NULL,      -- its status: 'True', 'False' or 'Unknown'
    taint_key  TEXT NOT NULL,      -- the taint it calls for, effect NoSchedule
    PRIMARY KEY (condition, status)
) WITHOUT ROWID;
INSERT INTO node_condition_taints (condition, status, taint_key) VALUES
    ('Ready', 'False', 'node.kubernetes.io/not-ready'),
    ('Ready', 'Unknown', 'node.kubernetes.io/unreachable'),
    ('MemoryPressure', 'True', 'node.kubernetes.io/memory-pressure'),
    ('DiskPressure', 'True', 'node.kubernetes.io/disk-pressure'),
    ('NetworkUnavailable', 'True', 'node.kubernetes.io/network-unavailable'),
    ('PIDPressure', 'True', 'node.kubernetes.io/pid-pressure');

-- nodelifecycle_taint_keys: the NoSchedule taints the controller owns: those of the
-- conditions, and node.kubernetes.io/unschedulable for spec.unschedulable. Every other
-- taint of a node it leaves as it is.
CREATE VIEW nodelifecycle_taint_keys AS
SELECT DISTINCT taint_key FROM node_condition_taints
UNION SELECT 'node.kubernetes.io/unschedulable';

-- nodelifecycle_noschedule_taints: per node, each NoSchedule taint the controller owns
-- that the node should carry or carries. The controller adds the rows with wanted = 1 and
-- present = 0 (in `position` order, with the time it adds them) and removes those with
-- wanted = 0; a node whose rows all have wanted = present is left alone. (Written so that
-- a WHERE on node reads that node alone.)
--   node        the node's name
--   taint_key   the taint's key (its effect is NoSchedule)
--   wanted      1 when a condition (or spec.unschedulable) calls for it
--   present     1 when spec.taints has it (key and effect NoSchedule, any value)
--   position    the order kube adds them in: the first calling condition's index in
--               status.conditions, then unschedulable last; NULL for a taint not wanted
CREATE VIEW nodelifecycle_noschedule_taints AS
SELECT node, taint_key, position IS NOT NULL AS wanted, present, position
  FROM (SELECT n.name AS node, k.taint_key,
               CASE WHEN k.taint_key = 'node.kubernetes.io/unschedulable' THEN
                        CASE WHEN json_extract(n.body, '$.spec.unschedulable') = 1
                             THEN 1000000 END
                    ELSE (SELECT min(c.key)
                            FROM json_each(n.body, '$.status.conditions') c
                            JOIN node_condition_taints m
                              ON m.condition = json_extract(c.value, '$.type')
                             AND m.status = json_extract(c.value, '$.status')
                           WHERE m.taint_key = k.taint_key) END AS position,
               EXISTS (SELECT 1 FROM json_each(n.body, '$.spec.taints') t
                        WHERE json_extract(t.value, '$.key') = k.taint_key
                          AND json_extract(t.value, '$.effect') = 'NoSchedule') AS present
          FROM cache_objects n, nodelifecycle_taint_keys k
         WHERE n.resource = 'nodes' AND n.namespace = '')
 WHERE position IS NOT NULL OR present;

-- node_label_reconcile: kube's labelReconcileInfo. A node with the label `primary_key`
-- should have `secondary_key` with the same value (added when missing).
CREATE TABLE node_label_reconcile (
    primary_key    TEXT PRIMARY KEY,   -- the stable label, the source of truth
    secondary_key  TEXT NOT NULL       -- the beta label kept equal to it
) WITHOUT ROWID;
INSERT INTO node_label_reconcile (primary_key, secondary_key) VALUES
    ('kubernetes.io/os', 'beta.kubernetes.io/os'),
    ('kubernetes.io/arch', 'beta.kubernetes.io/arch');

-- nodelifecycle_labels: the beta labels the controller would set, per node.
--   node, label (the beta key), value (the stable label's), current (NULL: missing)
CREATE VIEW nodelifecycle_labels AS
SELECT n.name AS node, r.secondary_key AS label,
       json_extract(n.body, '$.metadata.labels."' || r.primary_key || '"') AS value,
       json_extract(n.body, '$.metadata.labels."' || r.secondary_key || '"') AS current
  FROM cache_objects n, node_label_reconcile r
 WHERE n.resource = 'nodes' AND n.namespace = ''
   AND json_extract(n.body, '$.metadata.labels."' || r.primary_key || '"') IS NOT NULL
   AND json_extract(n.body, '$.metadata.labels."' || r.secondary_key || '"') IS NOT
       json_extract(n.body, '$.metadata.labels."' || r.primary_key || '"');
