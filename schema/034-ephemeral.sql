-- 034-ephemeral.sql - what the ephemeral volume controller (ephemeral-volume) reads: each
-- generic ephemeral volume of a cached pod, the claim it needs (<pod>-<volume>), whether
-- the cache holds that claim, and whether the pod is its controller (kube's VolumeIsForPod).
-- A claim that exists and is not the pod's is why the pod gets FailedBinding; one that
-- does not exist is created for a pod not being deleted.
--
--   SELECT * FROM ephemeral_volume_claims WHERE claim_exists = 0 OR owned_by_pod = 0;
CREATE VIEW ephemeral_volume_claims AS
SELECT p.namespace AS namespace,
       p.name AS pod,
       json_extract(v.value, '$.name') AS volume,
       p.name || '-' || json_extract(v.value, '$.name') AS claim,
       c.uid IS NOT NULL AS claim_exists,
       EXISTS (SELECT 1 FROM json_each(c.body, '$.metadata.ownerReferences') r
               WHERE json_extract(r.value, '$.controller') = 1
                 AND json_extract(r.value, '$.uid') = p.uid) AS owned_by_pod,
       p.deletion_timestamp IS NOT NULL AS pod_deleting
FROM cache_pods p
JOIN json_each(p.body, '$.spec.volumes') v
LEFT JOIN cache_objects c ON c.resource = 'persistentvolumeclaims'
    AND c.namespace = p.namespace
    AND c.name = p.name || '-' || json_extract(v.value, '$.name')
WHERE json_extract(v.value, '$.ephemeral') IS NOT NULL;
