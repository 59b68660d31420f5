-- 007-namespaces.sql - what the namespace controller (src/controllers/namespace.c) needs to
-- know of discovery, and the view of the namespaces it is emptying.
--
-- A deleted namespace is emptied of every namespaced resource discovery lists, then loses
-- its finalizer kubernetes. The cache holds the metadata of every such resource
-- (005-objects.sql), so what a namespace still holds is a query, not a live LIST.

-- The verbs discovery lists for each resource, as bits (discovery.h's DISCOVERY_*):
-- 1 list, 2 watch, 4 delete, 8 get, 16 patch, 32 deletecollection. NULL: not known yet
-- (a row written before discovery was read, or by replay); the namespace controller then
-- deletes the collection and each object it knows of as well.
ALTER TABLE api_resources ADD COLUMN verbs INTEGER;

-- The group-versions ('metrics.k8s.io/v1beta1') the last read of discovery could not read
-- (stale in aggregated discovery, or their request failed): the namespace controller
-- reports them in its NamespaceDeletionDiscoveryFailure condition. Empty when the last
-- read was whole.
CREATE TABLE discovery_failures (
    group_version TEXT PRIMARY KEY
) WITHOUT ROWID;

-- namespaces_terminating: every namespace being deleted (it has a deletionTimestamp) and
-- what holds it. One row per resource of which the cache still holds objects in it, with
-- how many (objects), how many of those are being deleted already (deleting), and the
-- finalizers they carry ("example.com/hold in 1 resource instances, ...", as the
-- NamespaceFinalizersRemaining condition words it); a namespace that holds nothing has
-- one row with resource NULL: only spec_finalizers (its own, 'kubernetes' until the
-- controller is done) keep it. phase is its status.phase (Terminating).
CREATE VIEW namespaces_terminating AS
WITH terminating AS (
    SELECT name, deletion_timestamp, json_extract(body, '$.status.phase') AS phase,
           json_extract(body, '$.spec.finalizers') AS spec_finalizers
      FROM cache_objects
     WHERE resource = 'namespaces' AND deletion_timestamp IS NOT NULL),
held AS (
    SELECT o.namespace, o.resource, count(*) AS objects,
           count(o.deleting_since) AS deleting
      FROM objects o JOIN terminating t ON t.name = o.namespace
     WHERE o.namespaced
     GROUP BY o.namespace, o.resource),
finalizer_counts AS (
    SELECT o.namespace, o.resource,
           f.value || ' in ' || count(*) || ' resource instances' AS text
      FROM objects o JOIN terminating t ON t.name = o.namespace, json_each(o.finalizers) f
     WHERE o.namespaced
     GROUP BY o.namespace, o.resource, f.value
     ORDER BY o.namespace, o.resource, text),
finalizers AS (
    SELECT namespace, resource, group_concat(text, ', ') AS finalizers
      FROM finalizer_counts
     GROUP BY namespace, resource)
SELECT t.name AS namespace, t.deletion_timestamp AS deleting_since, t.phase,
       t.spec_finalizers, h.resource, h.objects, h.deleting, f.finalizers
  FROM terminating t
  LEFT JOIN held h ON h.namespace = t.name
  LEFT JOIN finalizers f ON f.namespace = h.namespace AND f.resource = h.resource;
