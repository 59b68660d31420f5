-- 031-storage.sql - the storage controllers' resources, cached whole in cache_objects:
-- PersistentVolumes, StorageClasses, VolumeAttachments, CSIDrivers, CSINodes and
-- VolumeAttributesClasses. Their api_resources rows are fixed, so that the objects view
-- and its graph see them whatever discovery says.
INSERT INTO api_resources (resource, api_version, kind, namespaced, served) VALUES
    ('persistentvolumes', 'v1', 'PersistentVolume', 0, 1),
    ('storageclasses', 'storage.k8s.io/v1', 'StorageClass', 0, 1),
    ('volumeattachments', 'storage.k8s.io/v1', 'VolumeAttachment', 0, 1),
    ('csidrivers', 'storage.k8s.io/v1', 'CSIDriver', 0, 1),
    ('csinodes', 'storage.k8s.io/v1', 'CSINode', 0, 1),
    ('volumeattributesclasses', 'storage.k8s.io/v1', 'VolumeAttributesClass', 0, 1)
ON CONFLICT (resource) DO UPDATE SET api_version = excluded.api_version,
    kind = excluded.kind, namespaced = excluded.namespaced, served = 1;

-- An earlier sqlkcm's garbage collector held them by their metadata only, those of a
-- group under "plural.group": list them again, whole.
DELETE FROM cache_objects WHERE resource IN ('persistentvolumes',
    'storageclasses.storage.k8s.io', 'volumeattachments.storage.k8s.io',
    'csidrivers.storage.k8s.io', 'csinodes.storage.k8s.io',
    'volumeattributesclasses.storage.k8s.io');
DELETE FROM informers WHERE resource IN ('persistentvolumes',
    'storageclasses.storage.k8s.io', 'volumeattachments.storage.k8s.io',
    'csidrivers.storage.k8s.io', 'csinodes.storage.k8s.io',
    'volumeattributesclasses.storage.k8s.io');
DELETE FROM api_resources WHERE resource IN ('storageclasses.storage.k8s.io',
    'volumeattachments.storage.k8s.io', 'csidrivers.storage.k8s.io',
    'csinodes.storage.k8s.io', 'volumeattributesclasses.storage.k8s.io');
