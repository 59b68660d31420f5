-- queries.sql - questions to ask sqlkcm's cache in the sqlite3 shell.
--
--   sqlite3 -readonly -header -column sqlkcm.db < contrib/queries.sql
--
-- The views pods, replicasets and deployments have plain column names; the cache_*
-- tables hold the whole objects (column body, JSON) for anything else; the views labels
-- and owner_refs list every object's labels and owner references by uid, from the
-- object_labels and object_owners tables, keyed by the objects' id column. See
-- schema/001-cache.sql and schema/003-object-ids.sql.

-- Pods owned (controlled) by a ReplicaSet, with their phase, node and readiness.
SELECT p.namespace, p.owner_name AS replicaset, p.name, p.phase, p.node, p.ready
  FROM pods p
 WHERE p.owner_kind = 'ReplicaSet'
 ORDER BY p.namespace, p.owner_name, p.name
 LIMIT 20;

-- Orphan pods: no controller owner at all.
SELECT namespace, name, phase, created
  FROM pods
 WHERE owner_uid IS NULL
 ORDER BY namespace, name
 LIMIT 20;

-- Pods whose controller owner is not in the cache (its owner was deleted: garbage).
SELECT p.namespace, p.name, p.owner_kind, p.owner_name
  FROM pods p
 WHERE p.owner_uid IS NOT NULL
   AND p.owner_uid NOT IN (SELECT uid FROM cache_replicasets UNION ALL
                           SELECT uid FROM cache_deployments)
 LIMIT 20;

-- ReplicaSets whose count of active pods differs from spec.replicas.
-- (cache_pods.controller_uid is the uid of a pod's controller owner reference.)
SELECT r.namespace, r.name, r.desired,
       (SELECT count(*) FROM cache_pods p
         WHERE p.namespace = r.namespace AND p.controller_uid = r.uid
           AND p.deletion_timestamp IS NULL
           AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')) AS active
  FROM replicasets r
 WHERE r.desired <> (SELECT count(*) FROM cache_pods p
                      WHERE p.namespace = r.namespace AND p.controller_uid = r.uid
                        AND p.deletion_timestamp IS NULL
                        AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed'));

-- Pods per node, and how many of them are ready.
SELECT coalesce(node, '(unscheduled)') AS node, count(*) AS pods, sum(ready = 1) AS ready
  FROM pods
 GROUP BY node
 ORDER BY pods DESC
 LIMIT 20;

-- The pods a label selector picks ("app=web,tier in (front,back)"), through the label
-- index, as the controllers' listers do.
SELECT p.namespace, p.name
  FROM cache_pods p
 WHERE EXISTS (SELECT 1 FROM object_labels l WHERE l.object_id = p.id
                  AND l.key = 'app' AND l.value = 'web')
   AND EXISTS (SELECT 1 FROM object_labels l WHERE l.object_id = p.id
                  AND l.key = 'tier' AND l.value IN ('front', 'back'))
 LIMIT 20;

-- Where each informer stands: the resourceVersion a restart resumes from.
SELECT resource, resource_version, synced, list_epoch, updated_at FROM informers;

-- Any field of the whole object: container images of the newest pods.
SELECT namespace, name, json_extract(body, '$.spec.containers[0].image') AS image
  FROM cache_pods
 ORDER BY creation_timestamp DESC
 LIMIT 10;

-- The ReplicaSet controller's view: desired against actual per ReplicaSet, the ones
-- that differ first (schema/002-controllers.sql).
SELECT namespace, name, desired, actual, diff, deleting
  FROM replicaset_diff
 ORDER BY abs(diff) DESC, namespace, name
 LIMIT 20;

-- What the controller still waits to see: creations and deletions asked for and not
-- yet in the cache (ignored after five minutes), and the pods it is deleting.
SELECT e.key, e.adds, e.deletes, datetime(e.set_at, 'unixepoch') AS since,
       (SELECT group_concat(pod_key, ' ') FROM expected_deletions d
         WHERE d.controller = e.controller AND d.key = e.key) AS deleting
  FROM expectations e
 WHERE e.adds > 0 OR e.deletes > 0;

-- Rollouts in progress: each Deployment that is not complete, with its new ReplicaSet's
-- pods (updated) against the old ones' (schema/004-deployments.sql).
SELECT namespace, name, desired, updated, old, available, new_replicaset, paused
  FROM deployment_diff
 WHERE NOT complete
 ORDER BY namespace, name;

-- A Deployment's history, as `kubectl rollout history` shows it, with each revision's
-- ReplicaSet and replicas.
SELECT revision, replicaset, is_new, desired, current, available, created
  FROM deployment_replicasets
 WHERE namespace = 'default' AND deployment = 'web'
 ORDER BY revision;

-- With the garbage collector on, every object of the cluster (schema/005-objects.sql):
-- how many of each kind, and where.
SELECT kind, api_version, count(*) AS objects, count(DISTINCT namespace) AS namespaces
  FROM objects
 GROUP BY kind, api_version
 ORDER BY objects DESC;

-- An object's dependents, whatever their kinds (here: a Secret's).
SELECT dependent_kind, dependent, controller, block_owner_deletion
  FROM dependents
 WHERE namespace = 'default' AND owner_kind = 'Secret' AND owner = 'web-tls';

-- What the collector will look at: references to owners the cache does not have.
SELECT dependent_kind, namespace, dependent, owner_kind, owner, owner_uid
  FROM dangling_owner_refs
 ORDER BY namespace, dependent;

-- Deletions held by a finalizer (foreground deletions waiting for their dependents,
-- orphan deletions, anyone's), oldest first.
SELECT kind, namespace, name, deleting_since, finalizers
  FROM objects
 WHERE deleting_since IS NOT NULL
 ORDER BY deleting_since;
