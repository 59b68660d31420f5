-- 014-nodehealth.sql - the node lifecycle controller's health monitor
-- (src/controllers/nodelifecycle.c, src/controllers/nodehealth.c): when it last saw each
-- node's kubelet alive, from the node's Ready heartbeat and its Lease, and what that makes
-- of the node.
--
-- Leases (coordination.k8s.io/v1) are cached whole in cache_objects, as nodes are, under
-- the name 'leases': the monitor reads spec.renewTime of those in kube-node-lease.
INSERT INTO api_resources (resource, api_version, kind, namespaced, served) VALUES
    ('leases', 'coordination.k8s.io/v1', 'Lease', 1, 1)
ON CONFLICT (resource) DO UPDATE SET api_version = excluded.api_version,
    kind = excluded.kind, namespaced = excluded.namespaced, served = 1;

-- An earlier sqlkcm held leases by their metadata only, as the garbage collector's
-- cache names a resource of a group (leases.coordination.k8s.io): list them again, whole.
DELETE FROM cache_objects WHERE resource IN ('leases', 'leases.coordination.k8s.io');
DELETE FROM informers WHERE resource IN ('leases', 'leases.coordination.k8s.io');
DELETE FROM api_resources WHERE resource = 'leases.coordination.k8s.io';

-- The pods bound to a node: the monitor marks them not ready when the node stops
-- posting its status.
CREATE INDEX cache_pods_node ON cache_pods (node_name) WHERE node_name IS NOT NULL;

-- node_health: kube's nodeHealthMap, kept by the controller's handlers as nodes and
-- leases change. probe_at moves to the time of the event whenever the kubelet shows a
-- sign of life: the Ready condition's lastHeartbeatTime changes (or the condition comes
-- or goes), or the node's Lease is renewed to a later time. It is the controller's own
-- clock, never the kubelet's, so a skewed node clock does not matter.
--   node        the node's name
--   heartbeat   the Ready condition's lastHeartbeatTime as last seen; NULL while the node
--               has no Ready condition
--   lease_renew the node's Lease spec.renewTime as last seen (RFC 3339 with
--               microseconds); NULL before any
--   probe_at    when the controller last saw a sign of life (Unix seconds); for a node
--               first seen without a Ready condition, its creationTimestamp
CREATE TABLE node_health (
    node         TEXT PRIMARY KEY,
    heartbeat    TEXT,
    lease_renew  TEXT,
    probe_at     REAL NOT NULL
) WITHOUT ROWID;

-- nodelifecycle_zones: the nodes of each zone kube's disruption checks count, and how many
-- of them are not Ready (a Ready condition not True, or none). A zone is
-- "region:zone" from topology.kubernetes.io/region and /zone (the failure-domain.beta
-- labels first, as kube reads them), '' for a node with neither; nodes labelled
-- node.kubernetes.io/exclude-disruption are left out.
CREATE VIEW nodelifecycle_zones AS
SELECT zone, count(*) AS nodes, sum(ready IS NOT 'True') AS not_ready
  FROM (SELECT CASE WHEN coalesce(region, '') = '' AND coalesce(zone, '') = '' THEN ''
                    ELSE coalesce(region, '') || ':' || coalesce(zone, '') END AS zone,
               ready
          FROM (SELECT coalesce(
                         json_extract(n.body,
                           '$.metadata.labels."failure-domain.beta.kubernetes.io/region"'),
                         json_extract(n.body,
                           '$.metadata.labels."topology.kubernetes.io/region"')) AS region,
                       coalesce(
                         json_extract(n.body,
                           '$.metadata.labels."failure-domain.beta.kubernetes.io/zone"'),
                         json_extract(n.body,
                           '$.metadata.labels."topology.kubernetes.io/zone"')) AS zone,
                       (SELECT json_extract(c.value, '$.status')
                          FROM json_each(n.body, '$.status.conditions') c
                         WHERE json_extract(c.value, '$.type') = 'Ready') AS ready
                  FROM cache_objects n
                 WHERE n.resource = 'nodes' AND n.namespace = ''
                   AND json_extract(n.body,
                         '$.metadata.labels."node.kubernetes.io/exclude-disruption"')
                       IS NULL))
 GROUP BY zone;

-- nodelifecycle_health: each node as the monitor sees it: its Ready condition, when the
-- kubelet was last seen alive and how long ago, its Lease's renewTime, and the NoExecute
-- taints it carries. A node whose probe_age passes the grace period (50 s,
-- --node-monitor-grace-period; 60 s, --node-startup-grace-period, for one that never
-- posted a Ready condition) is set Unknown at the next monitor pass. After a restart
-- the controller counts ages from its start, as kube does.
--   node, ready ('True', 'False', 'Unknown'; NULL: never posted), ready_reason,
--   probe_at (ISO 8601), probe_age (seconds), lease_renew, noexecute (the NoExecute
--   taint keys, comma-separated; NULL: none)
CREATE VIEW nodelifecycle_health AS
SELECT n.name AS node,
       (SELECT json_extract(c.value, '$.status') FROM json_each(n.body, '$.status.conditions') c
         WHERE json_extract(c.value, '$.type') = 'Ready') AS ready,
       (SELECT json_extract(c.value, '$.reason') FROM json_each(n.body, '$.status.conditions') c
         WHERE json_extract(c.value, '$.type') = 'Ready') AS ready_reason,
       strftime('%Y-%m-%dT%H:%M:%SZ', h.probe_at, 'unixepoch') AS probe_at,
       round((julianday('now') - 2440587.5) * 86400.0 - h.probe_at, 1) AS probe_age,
       h.lease_renew,
       (SELECT group_concat(json_extract(t.value, '$.key'), ',')
          FROM json_each(n.body, '$.spec.taints') t
         WHERE json_extract(t.value, '$.effect') = 'NoExecute') AS noexecute
  FROM cache_objects n LEFT JOIN node_health h ON h.node = n.name
 WHERE n.resource = 'nodes' AND n.namespace = '';
