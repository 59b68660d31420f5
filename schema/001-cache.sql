-- 001-cache.sql - the informer cache: one table per resource, the label and owner
-- reference indexes shared by all of them, and each informer's resourceVersion.
--
-- sqlkcm applies the files in schema/ in order at startup; each file NNN-*.sql moves the
-- database to PRAGMA user_version = NNN. Open the file read-only with `sqlkcm shell` or
-- `sqlite3 -readonly FILE` while sqlkcm runs (WAL mode lets readers in at any time).
--
-- Conventions:
-- * Every object row has uid (primary key), namespace, name, resource_version, generation,
--   creation_timestamp, deletion_timestamp (RFC 3339 text, as the apiserver writes it, so
--   text order is time order) and body: the whole object as JSON without
--   metadata.managedFields. Typed columns copy the fields the controllers query.
-- * list_epoch: the informer's list generation that last saw the row. After a relist,
--   rows with an older epoch were not in the list: the object is gone, and the row is
--   deleted (in bounded chunks).
-- * Deleting an object row deletes its labels and owner_refs rows (triggers below).

-- Each informer's position in the apiserver's history.
CREATE TABLE informers (
    resource         TEXT PRIMARY KEY,      -- the resource's plural: 'pods', 'replicasets', ...
    resource_version TEXT,                  -- last resourceVersion applied; a restart watches from here
    list_epoch       INTEGER NOT NULL DEFAULT 0,  -- incremented by every (re)list
    synced           INTEGER NOT NULL DEFAULT 0,  -- 1 once a full list has been applied
    updated_at       TEXT                   -- wall-clock time of the last write, RFC 3339
) WITHOUT ROWID;

-- Pods (core/v1).
CREATE TABLE cache_pods (
    uid                  TEXT PRIMARY KEY,
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
    body                 TEXT NOT NULL
);
CREATE UNIQUE INDEX cache_pods_namespace_name ON cache_pods (namespace, name);

-- ReplicaSets (apps/v1).
CREATE TABLE cache_replicasets (
    uid                    TEXT PRIMARY KEY,
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
CREATE UNIQUE INDEX cache_replicasets_namespace_name ON cache_replicasets (namespace, name);

-- Deployments (apps/v1).
CREATE TABLE cache_deployments (
    uid                    TEXT PRIMARY KEY,
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
CREATE UNIQUE INDEX cache_deployments_namespace_name ON cache_deployments (namespace, name);

-- metadata.labels of every cached object, one row per label. Label selectors compile to
-- EXISTS / NOT EXISTS queries over this table. (Replaced by object_labels and a view of
-- the same name in 003-object-ids.sql, as owner_refs is by object_owners.)
CREATE TABLE labels (
    uid   TEXT NOT NULL,   -- the object's uid (in whichever cache_* table holds it)
    key   TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (uid, key)
) WITHOUT ROWID;
CREATE INDEX labels_key_value ON labels (key, value);

-- metadata.ownerReferences of every cached object, one row per reference.
CREATE TABLE owner_refs (
    uid         TEXT NOT NULL,      -- the owned object's uid
    owner_uid   TEXT NOT NULL,      -- ownerReferences[].uid
    controller  INTEGER NOT NULL,   -- 1 when this owner is the object's controller
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL,
    api_version TEXT NOT NULL,
    block_owner_deletion INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (uid, owner_uid)
) WITHOUT ROWID;
CREATE INDEX owner_refs_owner ON owner_refs (owner_uid, controller);

CREATE TRIGGER cache_pods_deleted AFTER DELETE ON cache_pods BEGIN
    DELETE FROM labels WHERE uid = OLD.uid;
    DELETE FROM owner_refs WHERE uid = OLD.uid;
END;
CREATE TRIGGER cache_replicasets_deleted AFTER DELETE ON cache_replicasets BEGIN
    DELETE FROM labels WHERE uid = OLD.uid;
    DELETE FROM owner_refs WHERE uid = OLD.uid;
END;
CREATE TRIGGER cache_deployments_deleted AFTER DELETE ON cache_deployments BEGIN
    DELETE FROM labels WHERE uid = OLD.uid;
    DELETE FROM owner_refs WHERE uid = OLD.uid;
END;

-- Views for people: plain column names, the controller owner joined in.

-- pods: one row per cached pod, with the kind and name of its controller (if any).
CREATE VIEW pods AS
SELECT p.namespace, p.name, p.uid, p.phase, p.node_name AS node, p.ready, p.ready_since,
       p.restarts, p.deletion_cost, p.creation_timestamp AS created,
       p.deletion_timestamp AS deleting_since,
       o.kind AS owner_kind, o.name AS owner_name, o.owner_uid, p.resource_version
  FROM cache_pods p
  LEFT JOIN owner_refs o ON o.uid = p.uid AND o.controller = 1;

-- replicasets: spec and status side by side, with the owning Deployment (if any).
CREATE VIEW replicasets AS
SELECT r.namespace, r.name, r.uid, r.replicas AS desired, r.status_replicas AS current,
       r.status_ready_replicas AS ready, r.status_available_replicas AS available,
       r.status_fully_labeled_replicas AS fully_labeled, r.min_ready_seconds,
       r.generation, r.observed_generation, r.selector,
       o.kind AS owner_kind, o.name AS owner_name, r.creation_timestamp AS created,
       r.deletion_timestamp AS deleting_since, r.resource_version
  FROM cache_replicasets r
  LEFT JOIN owner_refs o ON o.uid = r.uid AND o.controller = 1;

-- deployments: spec and status side by side.
CREATE VIEW deployments AS
SELECT d.namespace, d.name, d.uid, d.replicas AS desired, d.status_replicas AS current,
       d.status_updated_replicas AS updated, d.status_ready_replicas AS ready,
       d.status_available_replicas AS available, d.paused, d.min_ready_seconds,
       d.generation, d.observed_generation, d.selector, d.creation_timestamp AS created,
       d.deletion_timestamp AS deleting_since, d.resource_version
  FROM cache_deployments d;
