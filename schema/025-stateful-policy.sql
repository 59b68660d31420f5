-- 025-stateful-policy.sql - StatefulSets, PersistentVolumeClaims, PodDisruptionBudgets and
-- ResourceQuotas, cached whole in cache_objects for the StatefulSet, disruption and
-- resource quota controllers. Their api_resources rows are fixed, so that the objects
-- view and its graph see them whatever discovery says.
INSERT INTO api_resources (resource, api_version, kind, namespaced, served) VALUES
    ('statefulsets', 'apps/v1', 'StatefulSet', 1, 1),
    ('persistentvolumeclaims', 'v1', 'PersistentVolumeClaim', 1, 1),
    ('poddisruptionbudgets', 'policy/v1', 'PodDisruptionBudget', 1, 1),
    ('resourcequotas', 'v1', 'ResourceQuota', 1, 1)
ON CONFLICT (resource) DO UPDATE SET api_version = excluded.api_version,
    kind = excluded.kind, namespaced = excluded.namespaced, served = 1;

-- An earlier sqlkcm's garbage collector held them by their metadata only, those of a
-- group under "plural.group": list them again, whole.
DELETE FROM cache_objects WHERE resource IN ('statefulsets', 'statefulsets.apps',
    'persistentvolumeclaims', 'poddisruptionbudgets', 'poddisruptionbudgets.policy',
    'resourcequotas');
DELETE FROM informers WHERE resource IN ('statefulsets', 'statefulsets.apps',
    'persistentvolumeclaims', 'poddisruptionbudgets', 'poddisruptionbudgets.policy',
    'resourcequotas');
DELETE FROM api_resources WHERE resource IN ('statefulsets.apps',
    'poddisruptionbudgets.policy');
