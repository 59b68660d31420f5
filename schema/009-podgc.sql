-- 009-podgc.sql - the pod garbage collector (src/controllers/podgc.c): which pods it
-- force-deletes, and why, in kube-controller-manager's words (the reason label of its
-- pod_gc_collector_force_delete_pods_total metric):
--
--   terminated      the phase is neither Pending, Running nor Unknown (a pod without a
--                   phase counts), and more such pods exist than
--                   --terminated-pod-gc-threshold allows: the first ones in kube's order go
--   out-of-service  being deleted on a node that is not Ready and has the
--                   node.kubernetes.io/out-of-service taint
--   orphaned        bound to a node the cache does not have (after a quarantine of 40 s,
--                   which the controller keeps: kube's quarantineTime)
--   unscheduled     being deleted and bound to no node
--
-- Nodes are kept whole (006-core.sql): the two rules above read spec.taints and
-- status.conditions.

-- The terminated pods (podgc_terminated's WHERE, word for word, so that SQLite uses it),
-- in creation order: counting them, or those before one, reads this index.
CREATE INDEX cache_pods_podgc_terminated ON cache_pods (creation_timestamp, name)
 WHERE phase IS NULL OR phase NOT IN ('Pending', 'Running', 'Unknown');

-- podgc_nodes: every cached node, as the out-of-service rule reads it.
--   name
--   ready           1 when its Ready condition is True (kube's IsNodeReady: no condition
--                   is not ready)
--   out_of_service  1 when it has a taint of key node.kubernetes.io/out-of-service,
--                   whatever its value and effect
CREATE VIEW podgc_nodes AS
SELECT n.name,
       coalesce((SELECT json_extract(c.value, '$.status') = 'True'
                   FROM json_each(n.body, '$.status.conditions') c
                  WHERE json_extract(c.value, '$.type') = 'Ready' LIMIT 1), 0) AS ready,
       EXISTS (SELECT 1 FROM json_each(n.body, '$.spec.taints') t
                WHERE json_extract(t.value, '$.key') = 'node.kubernetes.io/out-of-service')
           AS out_of_service
  FROM cache_objects n
 WHERE n.resource = 'nodes' AND n.namespace = '';

-- podgc_terminated: every terminated pod. kube deletes them in the order
-- byEvictionAndCreationTimestamp: evicted ones first (phase Failed, status.reason
-- Evicted), then the oldest by creationTimestamp, then by name; namespace and uid make the
-- order total:  ORDER BY evicted DESC, creation_timestamp, name, namespace, uid.
-- podgc_candidates ranks them so.
--   namespace, name, uid, node_name, creation_timestamp
--   evicted           1 for an evicted pod
CREATE VIEW podgc_terminated AS
SELECT namespace, name, uid, node_name, creation_timestamp,
       coalesce(phase = 'Failed' AND json_extract(body, '$.status.reason') = 'Evicted', 0)
           AS evicted
  FROM cache_pods
 WHERE phase IS NULL OR phase NOT IN ('Pending', 'Running', 'Unknown');

-- podgc_forced: the pods force-deleted whatever the threshold, each with its reason (the
-- three rules exclude one another: the node is cached and out of service, or not cached,
-- or there is none). A node missing from the cache makes an orphan only once the nodes
-- informer has listed every node (kube waits for its node informer's sync too): a cache
-- that never listed them, as a replay's of a log without nodes, knows of no node. An
-- orphaned pod waits out its quarantine first.
--   namespace, name, uid, node_name ('' when unscheduled)
--   reason            'out-of-service', 'orphaned' or 'unscheduled'
CREATE VIEW podgc_forced AS
SELECT namespace, name, uid, node_name, reason
  FROM (SELECT p.namespace, p.name, p.uid, coalesce(p.node_name, '') AS node_name,
               CASE
                 WHEN p.deletion_timestamp IS NOT NULL AND n.name IS NOT NULL
                      AND NOT n.ready AND n.out_of_service THEN 'out-of-service'
                 WHEN coalesce(p.node_name, '') <> '' AND n.name IS NULL
                      AND (SELECT synced FROM informers WHERE resource = 'nodes')
                   THEN 'orphaned'
                 WHEN p.deletion_timestamp IS NOT NULL AND coalesce(p.node_name, '') = ''
                   THEN 'unscheduled'
               END AS reason
          FROM cache_pods p
          LEFT JOIN podgc_nodes n ON n.name = p.node_name)
 WHERE reason IS NOT NULL;

-- podgc_candidates: the pods the pod garbage collector would delete, and why: every row of
-- podgc_forced, and every terminated pod, ranked. With --terminated-pod-gc-threshold T > 0
-- those with terminated_rank <= terminated_count - T are deleted (T <= 0: none); kube's
-- rules run terminated first, so such a pod is deleted as terminated whatever else it is.
-- (The ranking sorts every terminated pod: the controller itself counts instead.)
--   namespace, name, uid, node_name ('' when unscheduled), reason
--   terminated_rank   for reason 'terminated': 1 for the first to go; NULL otherwise
--   terminated_count  for reason 'terminated': how many there are; NULL otherwise
CREATE VIEW podgc_candidates AS
SELECT namespace, name, uid, coalesce(node_name, '') AS node_name, 'terminated' AS reason,
       row_number() OVER (ORDER BY evicted DESC, creation_timestamp, name, namespace, uid)
           AS terminated_rank,
       count(*) OVER () AS terminated_count
  FROM podgc_terminated
UNION ALL
SELECT namespace, name, uid, node_name, reason, NULL, NULL
  FROM podgc_forced;
