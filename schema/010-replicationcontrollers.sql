-- 010-replicationcontrollers.sql - ReplicationControllers, which the ReplicaSet controller's
-- rules keep as kube's replicationcontroller controller does.
--
-- Their table has cache_replicasets' shape, so the same queries run on both; selector holds
-- the LabelSelector kube converts their map selector to: {"matchLabels": {...}}.
CREATE TABLE cache_replicationcontrollers (
    id                     INTEGER PRIMARY KEY,
    uid                    TEXT NOT NULL UNIQUE,
    namespace              TEXT NOT NULL,
    name                   TEXT NOT NULL,
    resource_version       TEXT NOT NULL,
    generation             INTEGER,
    creation_timestamp     TEXT,
    deletion_timestamp     TEXT,
    replicas               INTEGER NOT NULL,  -- spec.replicas (1 when unset, as the API defaults it)
    min_ready_seconds      INTEGER NOT NULL DEFAULT 0,
    selector               TEXT,              -- spec.selector as a LabelSelector (JSON)
    status_replicas        INTEGER NOT NULL DEFAULT 0,
    status_fully_labeled_replicas INTEGER NOT NULL DEFAULT 0,
    status_ready_replicas  INTEGER NOT NULL DEFAULT 0,
    status_available_replicas INTEGER NOT NULL DEFAULT 0,
    observed_generation    INTEGER NOT NULL DEFAULT 0,
    list_epoch             INTEGER NOT NULL,
    index_hash             INTEGER NOT NULL,
    body                   TEXT NOT NULL
);
CREATE UNIQUE INDEX cache_replicationcontrollers_namespace_name
    ON cache_replicationcontrollers (namespace, name);
CREATE INDEX cache_replicationcontrollers_epoch ON cache_replicationcontrollers (list_epoch);

CREATE TRIGGER cache_replicationcontrollers_deleted AFTER DELETE ON cache_replicationcontrollers
BEGIN
    DELETE FROM object_labels WHERE object_id = OLD.id;
    DELETE FROM object_owners WHERE object_id = OLD.id;
END;

-- replicationcontroller_diff: desired against actual for every ReplicationController, as
-- replicaset_diff for ReplicaSets: actual counts the active pods it controls.
CREATE VIEW replicationcontroller_diff AS
SELECT namespace, name, uid, desired, actual, desired - actual AS diff, deleting
  FROM (SELECT r.namespace, r.name, r.uid, r.replicas AS desired,
               (SELECT count(*) FROM cache_pods p
                 WHERE p.namespace = r.namespace AND p.controller_uid = r.uid
                   AND p.deletion_timestamp IS NULL
                   AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')) AS actual,
               r.deletion_timestamp IS NOT NULL AS deleting
          FROM cache_replicationcontrollers r);

-- objects (005-objects.sql) again, with the ReplicationControllers.
DROP VIEW objects;
CREATE VIEW objects AS
SELECT o.id, o.uid, a.api_version, a.kind, o.resource, a.namespaced, o.namespace, o.name,
       o.creation_timestamp AS created, o.deletion_timestamp AS deleting_since,
       json_extract(o.body, '$.metadata.finalizers') AS finalizers, o.resource_version
  FROM cache_objects o JOIN api_resources a ON a.resource = o.resource
UNION ALL
SELECT p.id, p.uid, 'v1', 'Pod', 'pods', 1, p.namespace, p.name, p.creation_timestamp,
       p.deletion_timestamp, json_extract(p.body, '$.metadata.finalizers'), p.resource_version
  FROM cache_pods p
UNION ALL
SELECT r.id, r.uid, 'apps/v1', 'ReplicaSet', 'replicasets', 1, r.namespace, r.name,
       r.creation_timestamp, r.deletion_timestamp,
       json_extract(r.body, '$.metadata.finalizers'), r.resource_version
  FROM cache_replicasets r
UNION ALL
SELECT d.id, d.uid, 'apps/v1', 'Deployment', 'deployments', 1, d.namespace, d.name,
       d.creation_timestamp, d.deletion_timestamp,
       json_extract(d.body, '$.metadata.finalizers'), d.resource_version
  FROM cache_deployments d
UNION ALL
SELECT c.id, c.uid, 'v1', 'ReplicationController', 'replicationcontrollers', 1,
       c.namespace, c.name, c.creation_timestamp, c.deletion_timestamp,
       json_extract(c.body, '$.metadata.finalizers'), c.resource_version
  FROM cache_replicationcontrollers c;
