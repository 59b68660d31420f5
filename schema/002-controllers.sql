-- 002-controllers.sql - the controllers' bookkeeping, kept in the database so that it
-- survives a restart: expectations, the resourceVersions of the controllers' own writes,
-- and the views that show what each ReplicaSet wants against what it has.
--
-- kube-controller-manager keeps the same bookkeeping in memory and loses it when it
-- restarts; sqlkcm writes it (and commits it) before the requests it describes are sent.
-- Times are Unix seconds (wall clock, since they must survive a restart).

-- The largest restartCount among a pod's sidecars (init containers with restartPolicy
-- Always): scale-down ranks pods with more sidecar restarts first when their containers'
-- restarts are equal. Rows written before this column existed read 0 until updated.
ALTER TABLE cache_pods ADD COLUMN sidecar_restarts INTEGER NOT NULL DEFAULT 0;

-- The uid of a pod's controller owner reference, NULL for a pod without one (an orphan):
-- a sync finds its own pods and the orphans it may adopt through this index instead of
-- reading the whole namespace. Filled in here for the rows written before it existed.
ALTER TABLE cache_pods ADD COLUMN controller_uid TEXT;
UPDATE cache_pods SET controller_uid = (SELECT o.owner_uid FROM owner_refs o
                                         WHERE o.uid = cache_pods.uid AND o.controller = 1);
CREATE INDEX cache_pods_controller ON cache_pods (namespace, controller_uid);

-- Creations and deletions a controller has asked for and not yet seen in the cache, per
-- owner (kube's ControlleeExpectations). While adds > 0 or deletes > 0 and the row is not
-- older than five minutes, the owner's sync does not create or delete anything: the cache
-- is known to be behind the controller's own requests. Each pod the informer sees appear
-- lowers adds; each expected deletion seen lowers deletes.
CREATE TABLE expectations (
    controller TEXT NOT NULL,       -- 'replicaset', ...
    key        TEXT NOT NULL,       -- the owner: 'namespace/name'
    adds       INTEGER NOT NULL,    -- creations not yet observed (may go below 0)
    deletes    INTEGER NOT NULL,    -- deletions not yet observed
    set_at     REAL NOT NULL,       -- when they were set; after 300 s they are ignored
    PRIMARY KEY (controller, key)
) WITHOUT ROWID;

-- The pods (by 'namespace/name') whose deletion an expectations row waits for. Only the
-- deletion of one of these lowers expectations.deletes (kube's UID-tracking expectations).
CREATE TABLE expected_deletions (
    controller TEXT NOT NULL,
    key        TEXT NOT NULL,       -- the owner, as in expectations
    pod_key    TEXT NOT NULL,       -- 'namespace/name' of a pod being deleted
    PRIMARY KEY (controller, key, pod_key)
) WITHOUT ROWID;

-- The newest resourceVersion the apiserver returned for a controller's own writes, per
-- owner and resource (stale-controller mitigation, KEP-5647). An owner is not synced
-- again until the informer of that resource has reached this resourceVersion, so a sync
-- never acts on a cache that does not yet show the previous sync's writes.
CREATE TABLE controller_writes (
    controller       TEXT NOT NULL,
    key              TEXT NOT NULL,     -- the owner: 'namespace/name'
    owner_uid        TEXT NOT NULL,     -- the owner's uid (a re-created owner starts afresh)
    resource         TEXT NOT NULL,     -- the resource written: 'pods', 'replicasets'
    resource_version TEXT NOT NULL,     -- from the write's response
    PRIMARY KEY (controller, key, resource)
) WITHOUT ROWID;

-- replicaset_pods: each ReplicaSet's active pods, those whose controller owner reference
-- names it and which are neither finished (Succeeded, Failed) nor being deleted.
CREATE VIEW replicaset_pods AS
SELECT r.namespace, r.name AS replicaset, r.uid AS replicaset_uid,
       p.name AS pod, p.uid AS pod_uid, p.phase, p.node_name AS node, p.ready,
       p.ready_since, p.creation_timestamp AS created
  FROM cache_replicasets r
  JOIN owner_refs o ON o.owner_uid = r.uid AND o.controller = 1
  JOIN cache_pods p ON p.uid = o.uid
 WHERE p.deletion_timestamp IS NULL
   AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed');

-- replicaset_diff: desired against actual for every ReplicaSet. actual counts the active
-- pods it controls; diff > 0 means pods to create, diff < 0 pods to delete. A sync also
-- adopts matching orphans and releases pods whose labels no longer match the selector,
-- which this view does not show; `sqlkcm plan` shows the whole of it.
CREATE VIEW replicaset_diff AS
SELECT namespace, name, uid, desired, actual, desired - actual AS diff, deleting
  FROM (SELECT r.namespace, r.name, r.uid, r.replicas AS desired,
               (SELECT count(*) FROM owner_refs o JOIN cache_pods p ON p.uid = o.uid
                 WHERE o.owner_uid = r.uid AND o.controller = 1
                   AND p.deletion_timestamp IS NULL
                   AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')) AS actual,
               r.deletion_timestamp IS NOT NULL AS deleting
          FROM cache_replicasets r);
