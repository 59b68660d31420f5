-- 032-persistentvolume-binder.sql - the PersistentVolume binder's match: every claim not
-- yet given a volume (spec.volumeName empty) beside each PersistentVolume that could be
-- bound to it, as kube-controller-manager's findBestMatchForClaim looks for one.
--
-- persistentvolume_claim_candidates: one row per (claim, volume) that passes kube's
-- checks which SQL can make exactly:
--   - the volume is not being deleted;
--   - its volumeMode (Filesystem when unset) is the claim's;
--   - its volumeAttributesClassName (empty when unset) is the claim's;
--   - its accessModes hold every mode the claim asks for (kube looks only through the
--     volumes indexed under such sets);
--   - and either it is pre-bound to the claim (prebound = 1: its claimRef names the
--     claim, with the claim's uid or none), which skips the checks below, or it has no
--     claimRef, is Available, has the claim's storage class (the beta annotation
--     volume.beta.kubernetes.io/storage-class before spec.storageClassName, for both),
--     and the claim's class does not wait for its first consumer (delay_binding = 0;
--     the binder never looks at a node, so it never binds such a claim to an unbound
--     volume: the scheduler does).
-- capacity_bytes and request_bytes are the volume's capacity and the claim's request read
-- as numbers (binary and decimal suffixes, exponents): close enough to order the rows
-- and to keep out the volumes far too small. The binder checks the exact quantities, and
-- the claim's label selector (has_selector = 1: it has one), on the rows in order and
-- takes the first that passes:
--   ORDER BY access_mode_count, prebound DESC, capacity_bytes, volume_name
-- that is kube's rule: the volumes of the fewest access modes first, among them one
-- pre-bound to the claim, else the smallest that fits.
CREATE VIEW persistentvolume_claim_candidates AS
WITH claims AS (
    SELECT c.namespace AS claim_namespace, c.name AS claim_name, c.uid AS claim_uid,
        coalesce(json_extract(c.body,
            '$.metadata.annotations."volume.beta.kubernetes.io/storage-class"'),
            json_extract(c.body, '$.spec.storageClassName'), '') AS class,
        coalesce(json_extract(c.body, '$.spec.volumeMode'), 'Filesystem') AS volume_mode,
        coalesce(json_extract(c.body, '$.spec.volumeAttributesClassName'), '') AS vac,
        coalesce(json_extract(c.body, '$.spec.accessModes'), '[]') AS access_modes,
        coalesce(json_extract(c.body, '$.spec.resources.requests.storage'), '0') AS request,
        json_extract(c.body, '$.spec.selector') IS NOT NULL AS has_selector
    FROM cache_objects c
    WHERE c.resource = 'persistentvolumeclaims'
        AND coalesce(json_extract(c.body, '$.spec.volumeName'), '') = ''
), volumes AS (
    SELECT v.name AS volume_name,
        coalesce(json_extract(v.body,
            '$.metadata.annotations."volume.beta.kubernetes.io/storage-class"'),
            json_extract(v.body, '$.spec.storageClassName'), '') AS class,
        coalesce(json_extract(v.body, '$.spec.volumeMode'), 'Filesystem') AS volume_mode,
        coalesce(json_extract(v.body, '$.spec.volumeAttributesClassName'), '') AS vac,
        coalesce(json_extract(v.body, '$.spec.accessModes'), '[]') AS access_modes,
        coalesce(json_extract(v.body, '$.spec.capacity.storage'), '0') AS capacity,
        json_extract(v.body, '$.status.phase') AS phase,
        json_extract(v.body, '$.spec.claimRef') IS NOT NULL AS has_claim_ref,
        json_extract(v.body, '$.spec.claimRef.namespace') AS ref_namespace,
        json_extract(v.body, '$.spec.claimRef.name') AS ref_name,
        coalesce(json_extract(v.body, '$.spec.claimRef.uid'), '') AS ref_uid,
        v.deletion_timestamp AS deleting
    FROM cache_objects v
    WHERE v.resource = 'persistentvolumes'
), sized AS (
    SELECT claims.*, volumes.volume_name, volumes.class AS volume_class,
        volumes.volume_mode AS volume_volume_mode, volumes.vac AS volume_vac,
        volumes.access_modes AS volume_access_modes, volumes.capacity, volumes.phase,
        volumes.has_claim_ref, volumes.ref_namespace, volumes.ref_name, volumes.ref_uid,
        volumes.deleting,
        (SELECT json_extract(s.body, '$.volumeBindingMode') = 'WaitForFirstConsumer'
            FROM cache_objects s
            WHERE s.resource = 'storageclasses' AND s.namespace = ''
                AND s.name = claims.class AND claims.class != '') AS delay_binding,
        (volumes.has_claim_ref AND volumes.ref_namespace = claims.claim_namespace
            AND volumes.ref_name = claims.claim_name
            AND volumes.ref_uid IN ('', claims.claim_uid)) AS prebound
    FROM claims CROSS JOIN volumes
), quantities AS (
    SELECT sized.*,
        (SELECT CASE
            WHEN q GLOB '*[KMGTPE]i' THEN CAST(substr(q, 1, length(q) - 2) AS REAL) *
                CASE substr(q, -2, 1) WHEN 'K' THEN 1024.0 WHEN 'M' THEN 1048576.0
                WHEN 'G' THEN 1073741824.0 WHEN 'T' THEN 1099511627776.0
                WHEN 'P' THEN 1125899906842624.0 ELSE 1152921504606846976.0 END
            WHEN q GLOB '*[0-9.][kMGTPEmun]' THEN CAST(substr(q, 1, length(q) - 1) AS REAL) *
                CASE substr(q, -1, 1) WHEN 'k' THEN 1e3 WHEN 'M' THEN 1e6 WHEN 'G' THEN 1e9
                WHEN 'T' THEN 1e12 WHEN 'P' THEN 1e15 WHEN 'E' THEN 1e18 WHEN 'm' THEN 1e-3
                WHEN 'u' THEN 1e-6 ELSE 1e-9 END
            ELSE CAST(q AS REAL) END FROM (SELECT sized.capacity AS q)) AS capacity_bytes,
        (SELECT CASE
            WHEN q GLOB '*[KMGTPE]i' THEN CAST(substr(q, 1, length(q) - 2) AS REAL) *
                CASE substr(q, -2, 1) WHEN 'K' THEN 1024.0 WHEN 'M' THEN 1048576.0
                WHEN 'G' THEN 1073741824.0 WHEN 'T' THEN 1099511627776.0
                WHEN 'P' THEN 1125899906842624.0 ELSE 1152921504606846976.0 END
            WHEN q GLOB '*[0-9.][kMGTPEmun]' THEN CAST(substr(q, 1, length(q) - 1) AS REAL) *
                CASE substr(q, -1, 1) WHEN 'k' THEN 1e3 WHEN 'M' THEN 1e6 WHEN 'G' THEN 1e9
                WHEN 'T' THEN 1e12 WHEN 'P' THEN 1e15 WHEN 'E' THEN 1e18 WHEN 'm' THEN 1e-3
                WHEN 'u' THEN 1e-6 ELSE 1e-9 END
            ELSE CAST(q AS REAL) END FROM (SELECT sized.request AS q)) AS request_bytes
    FROM sized
)
SELECT claim_namespace, claim_name, claim_uid, class, coalesce(delay_binding, 0) AS
        delay_binding, has_selector, volume_name, prebound,
    json_array_length(volume_access_modes) AS access_mode_count, capacity, request,
    capacity_bytes, request_bytes
FROM quantities
WHERE deleting IS NULL
    AND volume_volume_mode = volume_mode
    AND volume_vac = vac
    AND capacity_bytes >= request_bytes * (1 - 1e-9)
    AND NOT EXISTS (SELECT 1 FROM json_each(access_modes) m
        WHERE m.value NOT IN (SELECT value FROM json_each(volume_access_modes)))
    AND (prebound OR (NOT has_claim_ref AND phase = 'Available' AND volume_class = class
        AND NOT coalesce(delay_binding, 0)));
