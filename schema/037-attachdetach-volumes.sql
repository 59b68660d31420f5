-- 037-attachdetach-volumes.sql - what the attach/detach controller (attachdetach) reads,
-- again (036 had CSI volumes of managed nodes only): the volumes it can attach, in-tree
-- ones of a migrated plugin included; the pods' wants on every node, with whether the
-- node is managed; every VolumeAttachment of a persistent volume with what the reconciler
-- weighs before it detaches (the node's health, its out-of-service taint, the volume in
-- use, the attacher's error).

-- csi_migrated_plugins: kube 1.36's in-tree volume plugins whose volumes are handled by a
-- CSI driver (csi-translation-lib; every one of them migrated, and completely, so no
-- node's CSINode annotation is asked): the PersistentVolume source field of each and the
-- driver that takes its volumes.
CREATE TABLE csi_migrated_plugins (
    plugin  TEXT PRIMARY KEY,      -- the in-tree plugin: 'kubernetes.io/aws-ebs', ...
    source  TEXT NOT NULL,         -- its field of a PersistentVolume's spec
    driver  TEXT NOT NULL          -- the CSI driver its volumes are translated to
) WITHOUT ROWID;
INSERT INTO csi_migrated_plugins (plugin, source, driver) VALUES
    ('kubernetes.io/aws-ebs', 'awsElasticBlockStore', 'ebs.csi.aws.com'),
    ('kubernetes.io/gce-pd', 'gcePersistentDisk', 'pd.csi.storage.gke.io'),
    ('kubernetes.io/azure-disk', 'azureDisk', 'disk.csi.azure.com'),
    ('kubernetes.io/azure-file', 'azureFile', 'file.csi.azure.com'),
    ('kubernetes.io/cinder', 'cinder', 'cinder.csi.openstack.org'),
    ('kubernetes.io/vsphere-volume', 'vsphereVolume', 'csi.vsphere.vmware.com'),
    ('kubernetes.io/portworx-volume', 'portworxVolume', 'pxd.portworx.com');

-- attachdetach_volumes: each PersistentVolume as the CSI plugin sees it: its own spec.csi,
-- or its in-tree source translated as csi-translation-lib does (migrated_from names the
-- plugin), with the volume handle that translation makes:
--   aws-ebs        volumeID; "aws://ZONE/vol-..." and "aws:///vol-..." give the vol-...
--                  part (which must have no '/'), anything else is taken as it is
--   gce-pd         projects/UNSPECIFIED/zones/ZONE/disks/PD with the PV's zone label
--                  (failure-domain.beta.kubernetes.io/zone, else topology.kubernetes.io/
--                  zone); several zones ("a__b"), all of one region LOCALE-REGION:
--                  projects/UNSPECIFIED/regions/REGION/disks/PD; no zone: zones/UNSPECIFIED
--   azure-disk     diskURI, for kind Managed (or none) only
--   azure-file     RESOURCEGROUP#ACCOUNT#SHARE#PVNAME#NAMESPACE: the group from the
--                  annotation kubernetes.io/azure-file-resource-group, the account from a
--                  secret named azure-storage-account-ACCOUNT-secret (else the secret's
--                  name), the namespace the secret's or the claim's
--   cinder, portworx volumeID; vsphere volumePath
-- A volume the translation refuses (kube logs it and leaves the volume alone) has no
-- driver or handle and no row. unique_name is kube's name of the volume, as the node's
-- status.volumesAttached and volumesInUse spell it; multi_attach is 1 when it may be
-- attached to several nodes (kube's IsMultiAttachAllowed: no access modes, or
-- ReadWriteMany or ReadOnlyMany among them).
--
--   SELECT volume, migrated_from, driver, volume_handle FROM attachdetach_volumes;
CREATE VIEW attachdetach_volumes AS
WITH sources AS (
    SELECT pv.name AS volume, pv.body, m.plugin, m.driver AS migrated_driver,
           json_extract(pv.body, '$.spec.' || m.source) AS source
    FROM cache_objects pv
    LEFT JOIN csi_migrated_plugins m
        ON json_type(pv.body, '$.spec.csi') IS NOT 'object'
       AND json_type(pv.body, '$.spec.' || m.source) = 'object'
    WHERE pv.resource = 'persistentvolumes' AND pv.namespace = ''
), translated AS (
    SELECT volume, body, plugin AS migrated_from,
           CASE WHEN plugin IS NULL THEN json_extract(body, '$.spec.csi.driver')
                ELSE migrated_driver END AS driver,
           CASE
           WHEN plugin IS NULL THEN json_extract(body, '$.spec.csi.volumeHandle')
           WHEN plugin = 'kubernetes.io/aws-ebs' THEN (
               SELECT CASE WHEN substr(id, 1, 6) <> 'aws://' THEN id
                           WHEN path GLOB 'vol-*' AND instr(path, '/') = 0 THEN path END
               FROM (SELECT id, trim(CASE WHEN instr(substr(id, 7), '/') > 0
                                          THEN substr(substr(id, 7), instr(substr(id, 7), '/'))
                                          ELSE '' END, '/') AS path
                     FROM (SELECT json_extract(source, '$.volumeID') AS id)))
           WHEN plugin = 'kubernetes.io/gce-pd' THEN (
               SELECT CASE
                      WHEN zones = '' THEN 'projects/UNSPECIFIED/zones/UNSPECIFIED/disks/' || pd
                      WHEN instr(zones, '__') = 0 THEN
                          'projects/UNSPECIFIED/zones/' || zones || '/disks/' || pd
                      ELSE (SELECT CASE WHEN count(*) = count(region)
                                         AND count(DISTINCT region) = 1
                                        THEN 'projects/UNSPECIFIED/regions/' || min(region)
                                             || '/disks/' || pd END
                            FROM (SELECT CASE WHEN length(z.value)
                                                   - length(replace(z.value, '-', '')) = 2
                                              THEN substr(z.value, 1, instr(z.value, '-')
                                                   + instr(substr(z.value,
                                                       instr(z.value, '-') + 1), '-') - 1)
                                              END AS region
                                  FROM json_each('["' || replace(zones, '__', '","') || '"]') z))
                      END
               FROM (SELECT json_extract(source, '$.pdName') AS pd,
                            coalesce(nullif(json_extract(body,
                              '$.metadata.labels."failure-domain.beta.kubernetes.io/zone"'), ''),
                              json_extract(body,
                              '$.metadata.labels."topology.kubernetes.io/zone"'), '') AS zones))
           WHEN plugin = 'kubernetes.io/azure-disk' THEN
               CASE WHEN json_extract(source, '$.kind') IS NULL
                         OR lower(json_extract(source, '$.kind')) = 'managed'
                    THEN json_extract(source, '$.diskURI') END
           WHEN plugin = 'kubernetes.io/azure-file' THEN (
               SELECT CASE WHEN coalesce(ns, '') <> '' THEN
                   coalesce(json_extract(body,
                       '$.metadata.annotations."kubernetes.io/azure-file-resource-group"'), '')
                   || '#' || CASE WHEN secret GLOB 'azure-storage-account-?*-secret'
                                  THEN substr(secret, 23, length(secret) - 29)
                                  ELSE secret END
                   || '#' || coalesce(json_extract(source, '$.shareName'), '')
                   || '#' || volume || '#' || ns END
               FROM (SELECT coalesce(json_extract(source, '$.secretName'), '') AS secret,
                            coalesce(json_extract(source, '$.secretNamespace'),
                                     json_extract(body, '$.spec.claimRef.namespace')) AS ns))
           WHEN plugin IN ('kubernetes.io/cinder', 'kubernetes.io/portworx-volume') THEN
               json_extract(source, '$.volumeID')
           WHEN plugin = 'kubernetes.io/vsphere-volume' THEN
               json_extract(source, '$.volumePath')
           END AS volume_handle
    FROM sources
    WHERE plugin IS NOT NULL OR json_type(body, '$.spec.csi') = 'object'
)
SELECT volume, migrated_from, driver, volume_handle,
       'kubernetes.io/csi/' || driver || '^' || volume_handle AS unique_name,
       coalesce(json_array_length(body, '$.spec.accessModes'), 0) = 0
           OR EXISTS (SELECT 1 FROM json_each(body, '$.spec.accessModes') m
                      WHERE m.value IN ('ReadWriteMany', 'ReadOnlyMany')) AS multi_attach
FROM translated
WHERE coalesce(driver, '') <> '' AND coalesce(volume_handle, '') <> '';

-- attachdetach_desired: one row per pod and volume that should be attached to the pod's
-- node (kube's desired state of the world): the pod is not terminated in kube's sense
-- (phase Succeeded or Failed, or deleted with no container running); the volume is a
-- persistentVolumeClaim, or a generic ephemeral one (claim <pod>-<volume>, controlled by
-- the pod), Bound to a volume whose claimRef is that claim and that attachdetach_volumes
-- knows; and the CSIDriver of its driver, when there is one, does not say attachRequired
-- false (no CSIDriver: attach required). managed says what kube does with the node: 1 when
-- it carries the annotation volumes.kubernetes.io/controller-managed-attach-detach (any
-- value: kube asks only that it is there), NULL when the node is gone (kube keeps a
-- deleted node whose pods still want volumes), 0 when it has no annotation: no volume is
-- desired there (the controller may still remember the node managed, as kube's desired
-- state keeps a node that lost the annotation until a restart). The attachment columns
-- show the VolumeAttachment for the node, driver and volume, if cached.
--
--   SELECT node, volume, attachment, attached FROM attachdetach_desired WHERE managed;
DROP VIEW attachdetach_attachments;
DROP VIEW attachdetach_desired;
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
SELECT pc.node AS node,
       CASE WHEN n.uid IS NULL THEN NULL
            ELSE json_type(n.body, '$.metadata.annotations.'
                 || '"volumes.kubernetes.io/controller-managed-attach-detach"') IS NOT NULL
            END AS managed,
       pc.namespace AS namespace, pc.pod AS pod, pc.claim AS claim,
       av.volume AS volume, av.driver AS driver, av.volume_handle AS volume_handle,
       av.unique_name AS unique_name, av.multi_attach AS multi_attach,
       va.name AS attachment,
       coalesce(json_extract(va.body, '$.status.attached'), 0) AS attached
FROM pod_claims pc
LEFT JOIN cache_objects n ON n.resource = 'nodes' AND n.namespace = '' AND n.name = pc.node
JOIN cache_objects c ON c.resource = 'persistentvolumeclaims' AND c.namespace = pc.namespace
    AND c.name = pc.claim
    AND json_extract(c.body, '$.status.phase') = 'Bound'
JOIN cache_objects pv ON pv.resource = 'persistentvolumes' AND pv.namespace = ''
    AND pv.name = json_extract(c.body, '$.spec.volumeName')
    AND json_extract(pv.body, '$.spec.claimRef.uid') = c.uid
JOIN attachdetach_volumes av ON av.volume = pv.name
LEFT JOIN cache_objects d ON d.resource = 'csidrivers' AND d.namespace = ''
    AND d.name = av.driver
LEFT JOIN cache_objects va ON va.resource = 'volumeattachments' AND va.namespace = ''
    AND json_extract(va.body, '$.spec.nodeName') = pc.node
    AND json_extract(va.body, '$.spec.attacher') = av.driver
    AND json_extract(va.body, '$.spec.source.persistentVolumeName') = pv.name
WHERE (NOT pc.ephemeral OR EXISTS (
          SELECT 1 FROM json_each(c.body, '$.metadata.ownerReferences') o
          WHERE json_extract(o.value, '$.controller') = 1
            AND json_extract(o.value, '$.uid') = pc.pod_uid))
  AND (d.uid IS NULL OR json_extract(d.body, '$.spec.attachRequired') IS NOT 0);

-- attachdetach_attachments: every VolumeAttachment of a persistent volume (kube's actual
-- state of the world), on any node, with what the reconciler weighs:
--   node, attachment, driver, volume     its spec.nodeName, name, attacher and volume
--   attached, deleting                   status.attached; a deletionTimestamp is set
--   attach_error                         status.attachError.message (the attacher failed)
--   unique_name                          the volume's unique name (NULL when the volume is
--                                        not cached, or not one attachdetach_volumes knows)
--   managed                              as in attachdetach_desired: 1, 0, NULL (node gone)
--   ready                                the node's Ready condition is True (kube's healthy
--                                        node); NULL when the node is gone
--   out_of_service                       the node has a taint of key
--                                        node.kubernetes.io/out-of-service (any effect)
--   in_use                               the node lists the volume in status.volumesInUse
--   wanted                               a pod of the node still wants the volume there
--   desired                              wanted, and the node is managed or gone
CREATE VIEW attachdetach_attachments AS
SELECT node, attachment, driver, volume, attached, deleting, attach_error, unique_name,
       managed, ready, out_of_service, in_use, wanted > 0 AS wanted,
       wanted > 0 AND managed IS NOT 0 AS desired
FROM (
    SELECT json_extract(va.body, '$.spec.nodeName') AS node, va.name AS attachment,
           json_extract(va.body, '$.spec.attacher') AS driver,
           json_extract(va.body, '$.spec.source.persistentVolumeName') AS volume,
           coalesce(json_extract(va.body, '$.status.attached'), 0) AS attached,
           json_extract(va.body, '$.metadata.deletionTimestamp') IS NOT NULL AS deleting,
           json_extract(va.body, '$.status.attachError.message') AS attach_error,
           av.unique_name AS unique_name,
           CASE WHEN n.uid IS NULL THEN NULL
                ELSE json_type(n.body, '$.metadata.annotations.'
                     || '"volumes.kubernetes.io/controller-managed-attach-detach"') IS NOT NULL
                END AS managed,
           CASE WHEN n.uid IS NULL THEN NULL
                ELSE coalesce((SELECT json_extract(c.value, '$.status') = 'True'
                               FROM json_each(n.body, '$.status.conditions') c
                               WHERE json_extract(c.value, '$.type') = 'Ready' LIMIT 1), 0)
                END AS ready,
           EXISTS (SELECT 1 FROM json_each(n.body, '$.spec.taints') t
                   WHERE json_extract(t.value, '$.key') = 'node.kubernetes.io/out-of-service')
               AS out_of_service,
           EXISTS (SELECT 1 FROM json_each(n.body, '$.status.volumesInUse') u
                   WHERE u.value = av.unique_name) AS in_use,
           (SELECT count(*) FROM attachdetach_desired dd
            WHERE dd.node = json_extract(va.body, '$.spec.nodeName')
              AND dd.volume = json_extract(va.body, '$.spec.source.persistentVolumeName')
              AND dd.driver = json_extract(va.body, '$.spec.attacher')) AS wanted
    FROM cache_objects va
    LEFT JOIN cache_objects n ON n.resource = 'nodes' AND n.namespace = ''
        AND n.name = json_extract(va.body, '$.spec.nodeName')
    LEFT JOIN attachdetach_volumes av
        ON av.volume = json_extract(va.body, '$.spec.source.persistentVolumeName')
    WHERE va.resource = 'volumeattachments' AND va.namespace = ''
      AND json_extract(va.body, '$.spec.source.persistentVolumeName') IS NOT NULL);
