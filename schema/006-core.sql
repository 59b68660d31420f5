-- 006-core.sql - the core resources the namespace, serviceaccount, root CA and pod garbage
-- collector controllers read, cached in cache_objects beside the metadata resources.
--
-- namespaces, configmaps and nodes are kept whole (the controllers read their spec, status,
-- data, taints and conditions); serviceaccounts by their metadata, as discovery's
-- resources are. Their api_resources rows are fixed, so the objects view and its graph see
-- them whatever discovery says.
INSERT INTO api_resources (resource, api_version, kind, namespaced, served) VALUES
    ('namespaces', 'v1', 'Namespace', 0, 1),
    ('configmaps', 'v1', 'ConfigMap', 1, 1),
    ('serviceaccounts', 'v1', 'ServiceAccount', 1, 1),
    ('nodes', 'v1', 'Node', 0, 1)
ON CONFLICT (resource) DO UPDATE SET api_version = excluded.api_version,
    kind = excluded.kind, namespaced = excluded.namespaced, served = 1;

-- A cache written by an earlier sqlkcm held ConfigMaps (and the others, when its garbage
-- collector ran) by their metadata only: list them again, whole.
DELETE FROM cache_objects
 WHERE resource IN ('namespaces', 'configmaps', 'serviceaccounts', 'nodes');
DELETE FROM informers
 WHERE resource IN ('namespaces', 'configmaps', 'serviceaccounts', 'nodes');

-- What a namespace holds, of every resource: the namespace controller's question.
CREATE INDEX cache_objects_namespace ON cache_objects (namespace, resource);
