-- 005-objects.sql - every resource of the cluster, by its metadata: the garbage
-- collector's graph.
--
-- The resources the controllers read whole (pods, ReplicaSets, Deployments) keep their own
-- tables. Every other resource that discovery finds with the verbs list, watch and delete
-- (ConfigMaps, Secrets, Services, custom resources, ...) is listed and watched as
-- PartialObjectMetadata, no spec and no status, into one table: cache_objects. Its rows
-- get object ids from the same sequence as the other cache tables, and their labels and
-- owner references go to object_labels and object_owners like everyone's, so the owner
-- graph is one index over all of them.

-- What discovery found: one row per resource cached by its metadata, as the informers
-- table names it ('configmaps', 'widgets.example.com').
CREATE TABLE api_resources (
    resource     TEXT PRIMARY KEY,
    api_version  TEXT NOT NULL,          -- the served version discovery prefers: 'v1', 'example.com/v1'
    kind         TEXT NOT NULL,
    namespaced   INTEGER NOT NULL,       -- 0: cluster-scoped
    served       INTEGER NOT NULL DEFAULT 1,  -- 0: the last discovery no longer lists it
    updated_at   TEXT                    -- when discovery last wrote the row
) WITHOUT ROWID;

-- The objects of every resource in api_resources. Columns as in the other cache tables
-- (001-cache.sql); body is the PartialObjectMetadata the apiserver sent, without
-- metadata.managedFields and metadata.annotations (nothing reads them, and a Secret
-- applied by kubectl carries its data in kubectl's last-applied-configuration annotation).
CREATE TABLE cache_objects (
    id                   INTEGER PRIMARY KEY,
    uid                  TEXT NOT NULL UNIQUE,
    resource             TEXT NOT NULL,      -- api_resources.resource
    namespace            TEXT NOT NULL,      -- '' for a cluster-scoped object
    name                 TEXT NOT NULL,
    resource_version     TEXT NOT NULL,
    generation           INTEGER,
    creation_timestamp   TEXT,
    deletion_timestamp   TEXT,
    list_epoch           INTEGER NOT NULL,
    index_hash           INTEGER NOT NULL,
    body                 TEXT NOT NULL
);
CREATE UNIQUE INDEX cache_objects_resource_name ON cache_objects (resource, namespace, name);
CREATE INDEX cache_objects_resource_epoch ON cache_objects (resource, list_epoch);

CREATE TRIGGER cache_objects_deleted AFTER DELETE ON cache_objects BEGIN
    DELETE FROM object_labels WHERE object_id = OLD.id;
    DELETE FROM object_owners WHERE object_id = OLD.id;
END;

-- The uids of objects the informers saw deleted (a watch's DELETED, or a relist that no
-- longer had them), kept an hour: a uid is never given to another object, so an owner
-- among them is gone for good and the garbage collector needs no live read to know it.
CREATE TABLE deleted_uids (
    uid        TEXT PRIMARY KEY,
    deleted_at REAL NOT NULL              -- Unix seconds
) WITHOUT ROWID;

-- Views for people (and the garbage collector's queries).

-- objects: every cached object of every resource, typed or by its metadata. finalizers is
-- metadata.finalizers as JSON (NULL: none).
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
  FROM cache_deployments d;

-- object_graph: every owner reference, the dependent and its owner side by side. The
-- owner columns are NULL when no cached object has the referenced uid (in the dependent's
-- namespace, or cluster-scoped): the owner is absent from the cache.
CREATE VIEW object_graph AS
SELECT d.kind AS dependent_kind, d.namespace, d.name AS dependent, d.uid AS dependent_uid,
       r.api_version AS owner_api_version, r.kind AS owner_kind, r.name AS owner,
       r.owner_uid, r.controller, r.block_owner_deletion,
       o.uid IS NOT NULL AS owner_cached, o.deleting_since AS owner_deleting_since,
       o.finalizers AS owner_finalizers
  FROM objects d
  JOIN object_owners r ON r.object_id = d.id
  LEFT JOIN objects o ON o.uid = r.owner_uid
                     AND (o.namespace = d.namespace OR o.namespaced = 0);

-- dependents: each cached owner's dependents.
CREATE VIEW dependents AS
SELECT owner_kind, namespace, owner, owner_uid, dependent_kind, dependent, dependent_uid,
       controller, block_owner_deletion
  FROM object_graph
 WHERE owner_cached;

-- dangling_owner_refs: references to owners that no cached object is: the garbage
-- collector's candidates (it confirms each absence with a live GET before it acts).
CREATE VIEW dangling_owner_refs AS
SELECT dependent_kind, namespace, dependent, dependent_uid, owner_api_version, owner_kind,
       owner, owner_uid
  FROM object_graph
 WHERE NOT owner_cached;
