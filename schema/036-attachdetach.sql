-- 036-attachdetach.sql - what the attach/detach controller (attachdetach) reads, for CSI
-- volumes only.
--
-- attachdetach_desired: one row per pod and CSI volume that should be attached to the
-- pod's node. The node must carry volumes.kubernetes.io/controller-managed-attach-detach
-- "true" (kube manages no other node); the pod must not be terminated in kube's sense
-- (phase Succeeded or Failed, or deleted with no container running); the volume is a
-- persistentVolumeClaim, or a generic ephemeral one (claim <pod>-<volume>, controlled by
-- the pod), Bound to a volume whose claimRef is that claim and which has spec.csi; and the
-- CSIDriver of that name, when there is one, does not say attachRequired false (no
-- CSIDriver: attach required). unique_name is kube's name of the volume, as the node's
-- status.volumesAttached and volumesInUse spell it. The attachment columns show the
-- VolumeAttachment for the node, driver and volume, if cached.
--
--   SELECT node, volume, attachment, attached FROM attachdetach_desired;
CREATE VIEW attachdetach_desired AS
WITH pod_claims AS (
    SELECT p.node_name AS node, p.namespace, p.name AS pod, p.uid AS pod_uid,
           json_extract(v.value, '$.name') AS pod_volume,
           CASE WHEN json_type(v.value, '$.persistentVolumeClaim') = 'object'
                THEN json_extract(v.value, '$.persistentVolumeClaim.claimName')
                ELSE p.name || '-' || json_extract(v.value, '$.name') END AS claim,
           json_type(v.value, '$.persistentVolumeClaim') IS NOT 'object' AS ephemeral
    FROM cache_pods p, json_each(p.body, '$.spec.volumes') v
    WHERE p.node_name IS NOT NULL AND p.node_name <> ''
      AND (json_type(v.value, '$.persistentVolumeClaim') = 'object'
           OR json_type(v.value, '$.ephemeral') = 'object')
      AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')
      AND NOT (p.deletion_timestamp IS NOT NULL AND NOT EXISTS (
          SELECT 1 FROM json_each(p.body, '$.status.containerStatuses') s
          WHERE json_extract(s.value, '$.state.terminated') IS NULL
            AND json_extract(s.value, '$.state.waiting') IS NULL
          UNION ALL
          SELECT 1 FROM json_each(p.body, '$.status.initContainerStatuses') s
          WHERE json_extract(s.value, '$.state.terminated') IS NULL
            AND json_extract(s.value, '$.state.waiting') IS NULL
          UNION ALL
          SELECT 1 FROM json_each(p.body, '$.status.ephemeralContainerStatuses') s
          WHERE json_extract(s.value, '$.state.terminated') IS NULL
            AND json_extract(s.value, '$.state.waiting') IS NULL))
)
SELECT pc.node AS node, pc.namespace AS namespace, pc.pod AS pod, pc.claim AS claim,
       pv.name AS volume,
       json_extract(pv.body, '$.spec.csi.driver') AS driver,
       json_extract(pv.body, '$.spec.csi.volumeHandle') AS volume_handle,
       'kubernetes.io/csi/' || json_extract(pv.body, '$.spec.csi.driver') || '^'
           || json_extract(pv.body, '$.spec.csi.volumeHandle') AS unique_name,
       va.name AS attachment,
       coalesce(json_extract(va.body, '$.status.attached'), 0) AS attached
FROM pod_claims pc
JOIN cache_objects n ON n.resource = 'nodes' AND n.namespace = '' AND n.name = pc.node
    AND json_extract(n.body,
        '$.metadata.annotations."volumes.kubernetes.io/controller-managed-attach-detach"')
        = 'true'
JOIN cache_objects c ON c.resource = 'persistentvolumeclaims' AND c.namespace = pc.namespace
    AND c.name = pc.claim
    AND json_extract(c.body, '$.status.phase') = 'Bound'
JOIN cache_objects pv ON pv.resource = 'persistentvolumes' AND pv.namespace = ''
    AND pv.name = json_extract(c.body, '$.spec.volumeName')
    AND json_extract(pv.body, '$.spec.claimRef.uid') = c.uid
    AND json_type(pv.body, '$.spec.csi') = 'object'
LEFT JOIN cache_objects d ON d.resource = 'csidrivers' AND d.namespace = ''
    AND d.name = json_extract(pv.body, '$.spec.csi.driver')
LEFT JOIN cache_objects va ON va.resource = 'volumeattachments' AND va.namespace = ''
    AND json_extract(va.body, '$.spec.nodeName') = pc.node
    AND json_extract(va.body, '$.spec.attacher') = json_extract(pv.body, '$.spec.csi.driver')
    AND json_extract(va.body, '$.spec.source.persistentVolumeName') = pv.name
WHERE (NOT pc.ephemeral OR EXISTS (
          SELECT 1 FROM json_each(c.body, '$.metadata.ownerReferences') o
          WHERE json_extract(o.value, '$.controller') = 1
            AND json_extract(o.value, '$.uid') = pc.pod_uid))
  AND (d.uid IS NULL OR json_extract(d.body, '$.spec.attachRequired') IS NOT 0);

-- attachdetach_attachments: every VolumeAttachment of a persistent volume on a managed
-- node, its volume's unique name (NULL when the volume is not cached), whether the node
-- still reports the volume in use, and whether some pod still wants it there.
CREATE VIEW attachdetach_attachments AS
SELECT json_extract(va.body, '$.spec.nodeName') AS node, va.name AS attachment,
       json_extract(va.body, '$.spec.attacher') AS driver,
       json_extract(va.body, '$.spec.source.persistentVolumeName') AS volume,
       coalesce(json_extract(va.body, '$.status.attached'), 0) AS attached,
       json_extract(va.body, '$.metadata.deletionTimestamp') IS NOT NULL AS deleting,
       CASE WHEN json_type(pv.body, '$.spec.csi') = 'object'
            THEN 'kubernetes.io/csi/' || json_extract(pv.body, '$.spec.csi.driver') || '^'
                 || json_extract(pv.body, '$.spec.csi.volumeHandle') END AS unique_name,
       EXISTS (SELECT 1 FROM json_each(n.body, '$.status.volumesInUse') u
               WHERE u.value = 'kubernetes.io/csi/' || json_extract(pv.body, '$.spec.csi.driver')
                   || '^' || json_extract(pv.body, '$.spec.csi.volumeHandle')) AS in_use,
       EXISTS (SELECT 1 FROM attachdetach_desired dd
               WHERE dd.node = json_extract(va.body, '$.spec.nodeName')
                 AND dd.volume = json_extract(va.body, '$.spec.source.persistentVolumeName')
                 AND dd.driver = json_extract(va.body, '$.spec.attacher')) AS desired
FROM cache_objects va
JOIN cache_objects n ON n.resource = 'nodes' AND n.namespace = ''
    AND n.name = json_extract(va.body, '$.spec.nodeName')
    AND json_extract(n.body,
        '$.metadata.annotations."volumes.kubernetes.io/controller-managed-attach-detach"')
        = 'true'
LEFT JOIN cache_objects pv ON pv.resource = 'persistentvolumes' AND pv.namespace = ''
    AND pv.name = json_extract(va.body, '$.spec.source.persistentVolumeName')
WHERE va.resource = 'volumeattachments' AND va.namespace = ''
  AND json_extract(va.body, '$.spec.source.persistentVolumeName') IS NOT NULL;
