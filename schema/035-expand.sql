-- 035-expand.sql - what the volume expand controller (persistentvolume-expander) reads:
-- each Bound claim, the storage it requests and the capacity its status reports, its
-- volume (and whether that volume's claimRef is this claim), the in-tree plugin kube
-- migrates that volume from (NULL for a CSI or other volume), the CSI driver that should
-- resize it (the migrated plugin's, or spec.csi.driver) and the resizer the claim's
-- annotation names now. Sizes are the apiserver's text: the controller compares them as
-- quantities (a claim is handed over when the request is above the capacity, or its
-- volume keeps a pre-resize-capacity annotation).
--
--   SELECT * FROM claims_to_expand WHERE requested <> capacity;
CREATE VIEW claims_to_expand AS
SELECT c.namespace AS namespace,
       c.name AS claim,
       json_extract(c.body, '$.spec.resources.requests.storage') AS requested,
       json_extract(c.body, '$.status.capacity.storage') AS capacity,
       json_extract(c.body, '$.spec.volumeName') AS volume,
       v.uid IS NOT NULL AS volume_cached,
       (json_extract(v.body, '$.spec.claimRef.uid') = c.uid
        AND json_extract(v.body, '$.spec.claimRef.namespace') = c.namespace) AS volume_bound_here,
       json_extract(v.body, '$.metadata.annotations."volume.alpha.kubernetes.io/pre-resize-capacity"')
           AS pre_resize_capacity,
       CASE
           WHEN json_extract(v.body, '$.spec.awsElasticBlockStore') IS NOT NULL THEN 'kubernetes.io/aws-ebs'
           WHEN json_extract(v.body, '$.spec.gcePersistentDisk') IS NOT NULL THEN 'kubernetes.io/gce-pd'
           WHEN json_extract(v.body, '$.spec.azureFile') IS NOT NULL THEN 'kubernetes.io/azure-file'
           WHEN json_extract(v.body, '$.spec.azureDisk') IS NOT NULL THEN 'kubernetes.io/azure-disk'
           WHEN json_extract(v.body, '$.spec.cinder') IS NOT NULL THEN 'kubernetes.io/cinder'
           WHEN json_extract(v.body, '$.spec.vsphereVolume') IS NOT NULL THEN 'kubernetes.io/vsphere-volume'
           WHEN json_extract(v.body, '$.spec.portworxVolume') IS NOT NULL THEN 'kubernetes.io/portworx-volume'
       END AS migrated_from,
       CASE
           WHEN json_extract(v.body, '$.spec.awsElasticBlockStore') IS NOT NULL THEN 'ebs.csi.aws.com'
           WHEN json_extract(v.body, '$.spec.gcePersistentDisk') IS NOT NULL THEN 'pd.csi.storage.gke.io'
           WHEN json_extract(v.body, '$.spec.azureFile') IS NOT NULL THEN 'file.csi.azure.com'
           WHEN json_extract(v.body, '$.spec.azureDisk') IS NOT NULL THEN 'disk.csi.azure.com'
           WHEN json_extract(v.body, '$.spec.cinder') IS NOT NULL THEN 'cinder.csi.openstack.org'
           WHEN json_extract(v.body, '$.spec.vsphereVolume') IS NOT NULL THEN 'csi.vsphere.vmware.com'
           WHEN json_extract(v.body, '$.spec.portworxVolume') IS NOT NULL THEN 'pxd.portworx.com'
           ELSE json_extract(v.body, '$.spec.csi.driver')
       END AS resizer,
       json_extract(c.body, '$.metadata.annotations."volume.kubernetes.io/storage-resizer"')
           AS resizer_annotation
FROM cache_objects c
LEFT JOIN cache_objects v ON v.resource = 'persistentvolumes' AND v.namespace = ''
    AND v.name = json_extract(c.body, '$.spec.volumeName')
WHERE c.resource = 'persistentvolumeclaims'
  AND json_extract(c.body, '$.status.phase') = 'Bound';
