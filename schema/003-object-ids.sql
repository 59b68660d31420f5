-- 003-object-ids.sql - label and owner reference rows keyed by an integer object id.
--
-- Every cached object gets an id: an integer unique across the cache_* tables, which the
-- store hands out in increasing order as objects first appear. The label and owner
-- reference rows are keyed by that id instead of by the object's uid. A uid is a random
-- UUID, so rows keyed by it land on a random page of their B-tree, and a transaction of
-- a few hundred new objects dirtied (and wrote to the WAL) nearly every page of both
-- tables, a cost that grew with the cache. Keyed by id, a new object's rows are appended
-- next to those of the objects created just before it (bench/store_ingest measures it).
--
-- The cache tables are rebuilt with the id as their INTEGER PRIMARY KEY, so that a
-- row is found by its id directly and a new object's row is appended too; the uid stays
-- unique and indexed, for the informers' lookups by uid.
--
-- People keep the same relations as before: `labels` and `owner_refs` are now views with
-- the columns the tables had, the object's uid joined in.

-- The views and triggers over the tables rebuilt below go first; they are made anew at
-- the end of this file.
DROP TRIGGER cache_pods_deleted;
DROP TRIGGER cache_replicasets_deleted;
DROP TRIGGER cache_deployments_deleted;
DROP VIEW pods;
DROP VIEW replicasets;
DROP VIEW deployments;
DROP VIEW replicaset_pods;
DROP VIEW replicaset_diff;

-- The cache tables, rebuilt with the object id as their INTEGER PRIMARY KEY (the rowid):
-- rows are stored in the order objects first appeared, and the uid becomes a unique
-- index. Columns as in 001-cache.sql and 002-controllers.sql, which document them.
CREATE TABLE new_cache_pods (
    id                   INTEGER PRIMARY KEY,  -- the object id (see above)
    uid                  TEXT NOT NULL UNIQUE,
    namespace            TEXT NOT NULL,
    name                 TEXT NOT NULL,
    resource_version     TEXT NOT NULL,
    generation           INTEGER,
    creation_timestamp   TEXT,
    deletion_timestamp   TEXT,
    phase                TEXT,       -- status.phase: Pending, Running, Succeeded, Failed, Unknown
    node_name            TEXT,       -- spec.nodeName; NULL while unscheduled
    ready                INTEGER,    -- the Ready condition: 1 True, 0 otherwise (NULL: no condition)
    ready_since          TEXT,       -- the Ready condition's lastTransitionTime
    restarts             INTEGER NOT NULL DEFAULT 0,  -- the largest restartCount of its containers
    deletion_cost        INTEGER,    -- annotation controller.kubernetes.io/pod-deletion-cost, if valid
    list_epoch           INTEGER NOT NULL,
    index_hash           INTEGER NOT NULL,  -- hash of labels and ownerReferences (skip unchanged index rows)
    body                 TEXT NOT NULL,
    sidecar_restarts     INTEGER NOT NULL DEFAULT 0,  -- the largest restartCount of its sidecars
    controller_uid       TEXT        -- the uid of its controller owner reference; NULL: orphan
);
INSERT INTO new_cache_pods
SELECT rowid, uid, namespace, name, resource_version, generation, creation_timestamp,
       deletion_timestamp, phase, node_name, ready, ready_since, restarts, deletion_cost,
       list_epoch, index_hash, body, sidecar_restarts, controller_uid
  FROM cache_pods;

CREATE TABLE new_cache_replicasets (
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
    selector               TEXT,              -- spec.selector as JSON
    status_replicas        INTEGER NOT NULL DEFAULT 0,
    status_fully_labeled_replicas INTEGER NOT NULL DEFAULT 0,
    status_ready_replicas  INTEGER NOT NULL DEFAULT 0,
    status_available_replicas INTEGER NOT NULL DEFAULT 0,
    observed_generation    INTEGER NOT NULL DEFAULT 0,
    list_epoch             INTEGER NOT NULL,
    index_hash             INTEGER NOT NULL,
    body                   TEXT NOT NULL
);
INSERT INTO new_cache_replicasets
SELECT rowid + (SELECT coalesce(max(id), 0) FROM new_cache_pods), uid, namespace, name,
       resource_version, generation, creation_timestamp, deletion_timestamp, replicas,
       min_ready_seconds, selector, status_replicas, status_fully_labeled_replicas,
       status_ready_replicas, status_available_replicas, observed_generation, list_epoch,
       index_hash, body
  FROM cache_replicasets;

CREATE TABLE new_cache_deployments (
    id                     INTEGER PRIMARY KEY,
    uid                    TEXT NOT NULL UNIQUE,
    namespace              TEXT NOT NULL,
    name                   TEXT NOT NULL,
    resource_version       TEXT NOT NULL,
    generation             INTEGER,
    creation_timestamp     TEXT,
    deletion_timestamp     TEXT,
    replicas               INTEGER NOT NULL,  -- spec.replicas (1 when unset)
    min_ready_seconds      INTEGER NOT NULL DEFAULT 0,
    selector               TEXT,              -- spec.selector as JSON
    paused                 INTEGER NOT NULL DEFAULT 0,
    status_replicas        INTEGER NOT NULL DEFAULT 0,
    status_updated_replicas INTEGER NOT NULL DEFAULT 0,
    status_ready_replicas  INTEGER NOT NULL DEFAULT 0,
    status_available_replicas INTEGER NOT NULL DEFAULT 0,
    observed_generation    INTEGER NOT NULL DEFAULT 0,
    list_epoch             INTEGER NOT NULL,
    index_hash             INTEGER NOT NULL,
    body                   TEXT NOT NULL
);
INSERT INTO new_cache_deployments
SELECT rowid + (SELECT coalesce(max(id), 0) FROM
                (SELECT id FROM new_cache_pods UNION ALL SELECT id FROM new_cache_replicasets)),
       uid, namespace, name, resource_version, generation, creation_timestamp,
       deletion_timestamp, replicas, min_ready_seconds, selector, paused, status_replicas,
       status_updated_replicas, status_ready_replicas, status_available_replicas,
       observed_generation, list_epoch, index_hash, body
  FROM cache_deployments;

-- metadata.labels of every cached object, one row per label. Label selectors compile to
-- EXISTS / NOT EXISTS queries over this table.
CREATE TABLE object_labels (
    object_id INTEGER NOT NULL,   -- the object's id (in whichever cache_* table holds it)
    key       TEXT NOT NULL,
    value     TEXT NOT NULL,
    PRIMARY KEY (object_id, key)
) WITHOUT ROWID;
CREATE INDEX object_labels_key_value ON object_labels (key, value);

-- metadata.ownerReferences of every cached object, one row per reference.
CREATE TABLE object_owners (
    object_id   INTEGER NOT NULL,   -- the owned object's id
    owner_uid   TEXT NOT NULL,      -- ownerReferences[].uid
    controller  INTEGER NOT NULL,   -- 1 when this owner is the object's controller
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL,
    api_version TEXT NOT NULL,
    block_owner_deletion INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (object_id, owner_uid)
) WITHOUT ROWID;
CREATE INDEX object_owners_owner ON object_owners (owner_uid, controller);

INSERT INTO object_labels (object_id, key, value)
SELECT o.id, l.key, l.value FROM labels l JOIN new_cache_pods o ON o.uid = l.uid
UNION ALL
SELECT o.id, l.key, l.value FROM labels l JOIN new_cache_replicasets o ON o.uid = l.uid
UNION ALL
SELECT o.id, l.key, l.value FROM labels l JOIN new_cache_deployments o ON o.uid = l.uid;

INSERT INTO object_owners (object_id, owner_uid, controller, kind, name, api_version,
                           block_owner_deletion)
SELECT o.id, r.owner_uid, r.controller, r.kind, r.name, r.api_version, r.block_owner_deletion
  FROM owner_refs r JOIN new_cache_pods o ON o.uid = r.uid
UNION ALL
SELECT o.id, r.owner_uid, r.controller, r.kind, r.name, r.api_version, r.block_owner_deletion
  FROM owner_refs r JOIN new_cache_replicasets o ON o.uid = r.uid
UNION ALL
SELECT o.id, r.owner_uid, r.controller, r.kind, r.name, r.api_version, r.block_owner_deletion
  FROM owner_refs r JOIN new_cache_deployments o ON o.uid = r.uid;

DROP TABLE labels;
DROP TABLE owner_refs;
DROP TABLE cache_pods;
DROP TABLE cache_replicasets;
DROP TABLE cache_deployments;
ALTER TABLE new_cache_pods RENAME TO cache_pods;
ALTER TABLE new_cache_replicasets RENAME TO cache_replicasets;
ALTER TABLE new_cache_deployments RENAME TO cache_deployments;
CREATE UNIQUE INDEX cache_pods_namespace_name ON cache_pods (namespace, name);
CREATE INDEX cache_pods_controller ON cache_pods (namespace, controller_uid);
CREATE UNIQUE INDEX cache_replicasets_namespace_name ON cache_replicasets (namespace, name);
CREATE UNIQUE INDEX cache_deployments_namespace_name ON cache_deployments (namespace, name);

-- Deleting an object row deletes its label and owner reference rows, whoever deletes it.
CREATE TRIGGER cache_pods_deleted AFTER DELETE ON cache_pods BEGIN
    DELETE FROM object_labels WHERE object_id = OLD.id;
    DELETE FROM object_owners WHERE object_id = OLD.id;
END;
CREATE TRIGGER cache_replicasets_deleted AFTER DELETE ON cache_replicasets BEGIN
    DELETE FROM object_labels WHERE object_id = OLD.id;
    DELETE FROM object_owners WHERE object_id = OLD.id;
END;
CREATE TRIGGER cache_deployments_deleted AFTER DELETE ON cache_deployments BEGIN
    DELETE FROM object_labels WHERE object_id = OLD.id;
    DELETE FROM object_owners WHERE object_id = OLD.id;
END;

-- Views for people.

-- labels: every label of every cached object, by the object's uid.
CREATE VIEW labels AS
SELECT o.uid, l.key, l.value FROM object_labels l JOIN cache_pods o ON o.id = l.object_id
UNION ALL
SELECT o.uid, l.key, l.value FROM object_labels l JOIN cache_replicasets o ON o.id = l.object_id
UNION ALL
SELECT o.uid, l.key, l.value FROM object_labels l JOIN cache_deployments o ON o.id = l.object_id;

-- owner_refs: every owner reference of every cached object, by the owned object's uid.
CREATE VIEW owner_refs AS
SELECT o.uid, r.owner_uid, r.controller, r.kind, r.name, r.api_version, r.block_owner_deletion
  FROM object_owners r JOIN cache_pods o ON o.id = r.object_id
UNION ALL
SELECT o.uid, r.owner_uid, r.controller, r.kind, r.name, r.api_version, r.block_owner_deletion
  FROM object_owners r JOIN cache_replicasets o ON o.id = r.object_id
UNION ALL
SELECT o.uid, r.owner_uid, r.controller, r.kind, r.name, r.api_version, r.block_owner_deletion
  FROM object_owners r JOIN cache_deployments o ON o.id = r.object_id;

-- pods: one row per cached pod, with the kind and name of its controller (if any).
CREATE VIEW pods AS
SELECT p.namespace, p.name, p.uid, p.phase, p.node_name AS node, p.ready, p.ready_since,
       p.restarts, p.deletion_cost, p.creation_timestamp AS created,
       p.deletion_timestamp AS deleting_since,
       o.kind AS owner_kind, o.name AS owner_name, o.owner_uid, p.resource_version
  FROM cache_pods p
  LEFT JOIN object_owners o ON o.object_id = p.id AND o.controller = 1;

-- replicasets: spec and status side by side, with the owning Deployment (if any).
CREATE VIEW replicasets AS
SELECT r.namespace, r.name, r.uid, r.replicas AS desired, r.status_replicas AS current,
       r.status_ready_replicas AS ready, r.status_available_replicas AS available,
       r.status_fully_labeled_replicas AS fully_labeled, r.min_ready_seconds,
       r.generation, r.observed_generation, r.selector,
       o.kind AS owner_kind, o.name AS owner_name, r.creation_timestamp AS created,
       r.deletion_timestamp AS deleting_since, r.resource_version
  FROM cache_replicasets r
  LEFT JOIN object_owners o ON o.object_id = r.id AND o.controller = 1;

-- deployments: spec and status side by side.
CREATE VIEW deployments AS
SELECT d.namespace, d.name, d.uid, d.replicas AS desired, d.status_replicas AS current,
       d.status_updated_replicas AS updated, d.status_ready_replicas AS ready,
       d.status_available_replicas AS available, d.paused, d.min_ready_seconds,
       d.generation, d.observed_generation, d.selector, d.creation_timestamp AS created,
       d.deletion_timestamp AS deleting_since, d.resource_version
  FROM cache_deployments d;

-- replicaset_pods: each ReplicaSet's active pods, those whose controller owner reference
-- names it and which are neither finished (Succeeded, Failed) nor being deleted.
CREATE VIEW replicaset_pods AS
SELECT r.namespace, r.name AS replicaset, r.uid AS replicaset_uid,
       p.name AS pod, p.uid AS pod_uid, p.phase, p.node_name AS node, p.ready,
       p.ready_since, p.creation_timestamp AS created
  FROM cache_replicasets r
  JOIN cache_pods p ON p.namespace = r.namespace AND p.controller_uid = r.uid
 WHERE p.deletion_timestamp IS NULL
   AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed');

-- replicaset_diff: desired against actual for every ReplicaSet. actual counts the active
-- pods it controls; diff > 0 means pods to create, diff < 0 pods to delete. A sync also
-- adopts matching orphans and releases pods whose labels no longer match the selector,
-- which this view does not show; `sqlkcm plan` shows the whole of it.
CREATE VIEW replicaset_diff AS
SELECT namespace, name, uid, desired, actual, desired - actual AS diff, deleting
  FROM (SELECT r.namespace, r.name, r.uid, r.replicas AS desired,
               (SELECT count(*) FROM cache_pods p
                 WHERE p.namespace = r.namespace AND p.controller_uid = r.uid
                   AND p.deletion_timestamp IS NULL
                   AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')) AS actual,
               r.deletion_timestamp IS NOT NULL AS deleting
          FROM cache_replicasets r);
