-- 032-persistentvolume-binder.sql - the PersistentVolume binder's match: the volumes as
-- kube-controller-manager's findBestMatchForClaim compares them with a claim, and every
-- claim not yet given a volume (spec.volumeName empty) beside the volumes that could be
-- bound to it.
--
-- persistentvolume_match: one row per PersistentVolume with what the match reads:
--   volume_name; phase (status.phase); class (the beta annotation
--   volume.beta.kubernetes.io/storage-class before spec.storageClassName, '' for none);
--   volume_mode (Filesystem when unset); vac (spec.volumeAttributesClassName, '' when
--   unset); access_modes (JSON array) and access_mode_count; capacity (text) and
--   capacity_bytes (the quantity read as a number: binary and decimal suffixes,
--   exponents; close enough to order the volumes, the binder compares the exact
--   quantities); claim_ref_namespace, claim_ref_name, claim_ref_uid (NULL without a
--   claimRef; uid '' when the claimRef has none); deleting (the deletionTimestamp).
-- Two expression indexes serve the binder: the free volumes of a phase and class in the
-- order it takes them (fewest access modes, then smallest), and the volumes by the name of
-- the claim their claimRef names.
--
-- persistentvolume_claim_candidates: one row per (pending claim, volume) that passes
-- kube's checks: the volume is not being deleted; its volumeMode and
-- volumeAttributesClassName are the claim's; its access modes hold every mode the claim asks for; and either it is
-- pre-bound to the claim (prebound = 1: its claimRef names the claim, with the claim's uid
-- or none), which skips the checks below, or it has no claimRef, is Available, has the
-- claim's class, and the claim's class does not wait for its first consumer
-- (delay_binding = 0: the binder never looks at a node, so it never binds such a claim to
-- an unbound volume; the scheduler does); in both cases its capacity_bytes is at least
-- the claim's request_bytes. The binder also checks the exact quantities and the claim's label
-- selector (has_selector = 1: it has one) and takes the first row of
--   ORDER BY access_mode_count, prebound DESC, capacity_bytes, volume_name
-- kube's rule: the volumes of the fewest access modes first, among them one pre-bound to
-- the claim, else the smallest that fits. (The binder reads persistentvolume_match itself,
-- the pre-bound volumes by their claimRef and the free ones in the free index's order, so
-- that a claim's match reads the few volumes it needs, not every volume.)
CREATE VIEW persistentvolume_match AS
SELECT name AS volume_name, json_extract(body, '$.status.phase') AS phase,
    coalesce(json_extract(body,
        '$.metadata.annotations."volume.beta.kubernetes.io/storage-class"'),
        json_extract(body, '$.spec.storageClassName'), '') AS class,
    coalesce(json_extract(body, '$.spec.volumeMode'), 'Filesystem') AS volume_mode,
    coalesce(json_extract(body, '$.spec.volumeAttributesClassName'), '') AS vac,
    coalesce(json_extract(body, '$.spec.accessModes'), '[]') AS access_modes,
    json_array_length(json_extract(body, '$.spec.accessModes')) AS access_mode_count,
    json_extract(body, '$.spec.capacity.storage') AS capacity,
    (CASE
        WHEN json_extract(body, '$.spec.capacity.storage') GLOB '*[KMGTPE]i' THEN CAST(substr(json_extract(body, '$.spec.capacity.storage'), 1, length(json_extract(body, '$.spec.capacity.storage')) - 2) AS REAL) *
            CASE substr(json_extract(body, '$.spec.capacity.storage'), -2, 1) WHEN 'K' THEN 1024.0 WHEN 'M' THEN 1048576.0
            WHEN 'G' THEN 1073741824.0 WHEN 'T' THEN 1099511627776.0
            WHEN 'P' THEN 1125899906842624.0 ELSE 1152921504606846976.0 END
        WHEN json_extract(body, '$.spec.capacity.storage') GLOB '*[0-9.][kMGTPEmun]' THEN CAST(substr(json_extract(body, '$.spec.capacity.storage'), 1, length(json_extract(body, '$.spec.capacity.storage')) - 1) AS REAL) *
            CASE substr(json_extract(body, '$.spec.capacity.storage'), -1, 1) WHEN 'k' THEN 1e3 WHEN 'M' THEN 1e6 WHEN 'G' THEN 1e9
            WHEN 'T' THEN 1e12 WHEN 'P' THEN 1e15 WHEN 'E' THEN 1e18 WHEN 'm' THEN 1e-3
            WHEN 'u' THEN 1e-6 ELSE 1e-9 END
        ELSE CAST(json_extract(body, '$.spec.capacity.storage') AS REAL) END) AS capacity_bytes,
    json_extract(body, '$.spec.claimRef.namespace') AS claim_ref_namespace,
    json_extract(body, '$.spec.claimRef.name') AS claim_ref_name,
    CASE WHEN json_extract(body, '$.spec.claimRef') IS NOT NULL
        THEN coalesce(json_extract(body, '$.spec.claimRef.uid'), '') END AS claim_ref_uid,
    deletion_timestamp AS deleting,
    body
FROM cache_objects
WHERE resource = 'persistentvolumes' AND namespace = '';

CREATE INDEX persistentvolume_free ON cache_objects (json_extract(body, '$.status.phase'),
    coalesce(json_extract(body,
        '$.metadata.annotations."volume.beta.kubernetes.io/storage-class"'),
        json_extract(body, '$.spec.storageClassName'), ''),
    json_array_length(json_extract(body, '$.spec.accessModes')),
    (CASE
        WHEN json_extract(body, '$.spec.capacity.storage') GLOB '*[KMGTPE]i' THEN CAST(substr(json_extract(body, '$.spec.capacity.storage'), 1, length(json_extract(body, '$.spec.capacity.storage')) - 2) AS REAL) *
            CASE substr(json_extract(body, '$.spec.capacity.storage'), -2, 1) WHEN 'K' THEN 1024.0 WHEN 'M' THEN 1048576.0
            WHEN 'G' THEN 1073741824.0 WHEN 'T' THEN 1099511627776.0
            WHEN 'P' THEN 1125899906842624.0 ELSE 1152921504606846976.0 END
        WHEN json_extract(body, '$.spec.capacity.storage') GLOB '*[0-9.][kMGTPEmun]' THEN CAST(substr(json_extract(body, '$.spec.capacity.storage'), 1, length(json_extract(body, '$.spec.capacity.storage')) - 1) AS REAL) *
            CASE substr(json_extract(body, '$.spec.capacity.storage'), -1, 1) WHEN 'k' THEN 1e3 WHEN 'M' THEN 1e6 WHEN 'G' THEN 1e9
            WHEN 'T' THEN 1e12 WHEN 'P' THEN 1e15 WHEN 'E' THEN 1e18 WHEN 'm' THEN 1e-3
            WHEN 'u' THEN 1e-6 ELSE 1e-9 END
        ELSE CAST(json_extract(body, '$.spec.capacity.storage') AS REAL) END), name)
    WHERE resource = 'persistentvolumes' AND namespace = '';
CREATE INDEX persistentvolume_claim_ref ON cache_objects (json_extract(body, '$.spec.claimRef.name'))
    WHERE resource = 'persistentvolumes' AND namespace = '';

CREATE VIEW persistentvolume_claim_candidates AS
WITH claims AS (
    SELECT c.namespace AS claim_namespace, c.name AS claim_name, c.uid AS claim_uid,
        coalesce(json_extract(c.body,
            '$.metadata.annotations."volume.beta.kubernetes.io/storage-class"'),
            json_extract(c.body, '$.spec.storageClassName'), '') AS claim_class,
        coalesce(json_extract(c.body, '$.spec.volumeMode'), 'Filesystem') AS claim_volume_mode,
        coalesce(json_extract(c.body, '$.spec.volumeAttributesClassName'), '') AS claim_vac,
        coalesce(json_extract(c.body, '$.spec.accessModes'), '[]') AS claim_access_modes,
        coalesce(json_extract(c.body, '$.spec.resources.requests.storage'), '0') AS request,
        json_extract(c.body, '$.spec.selector') IS NOT NULL AS has_selector
    FROM cache_objects c
    WHERE c.resource = 'persistentvolumeclaims'
        AND coalesce(json_extract(c.body, '$.spec.volumeName'), '') = ''
), pairs AS (
    SELECT claims.*, m.*,
        coalesce((SELECT json_extract(s.body, '$.volumeBindingMode') = 'WaitForFirstConsumer'
            FROM cache_objects s
            WHERE s.resource = 'storageclasses' AND s.namespace = ''
                AND s.name = claims.claim_class AND claims.claim_class != ''), 0)
            AS delay_binding,
        (m.claim_ref_namespace = claims.claim_namespace
            AND m.claim_ref_name = claims.claim_name
            AND m.claim_ref_uid IN ('', claims.claim_uid)) IS 1 AS prebound,
        (CASE
        WHEN claims.request GLOB '*[KMGTPE]i' THEN CAST(substr(claims.request, 1, length(claims.request) - 2) AS REAL) *
            CASE substr(claims.request, -2, 1) WHEN 'K' THEN 1024.0 WHEN 'M' THEN 1048576.0
            WHEN 'G' THEN 1073741824.0 WHEN 'T' THEN 1099511627776.0
            WHEN 'P' THEN 1125899906842624.0 ELSE 1152921504606846976.0 END
        WHEN claims.request GLOB '*[0-9.][kMGTPEmun]' THEN CAST(substr(claims.request, 1, length(claims.request) - 1) AS REAL) *
            CASE substr(claims.request, -1, 1) WHEN 'k' THEN 1e3 WHEN 'M' THEN 1e6 WHEN 'G' THEN 1e9
            WHEN 'T' THEN 1e12 WHEN 'P' THEN 1e15 WHEN 'E' THEN 1e18 WHEN 'm' THEN 1e-3
            WHEN 'u' THEN 1e-6 ELSE 1e-9 END
        ELSE CAST(claims.request AS REAL) END) AS request_bytes
    FROM claims CROSS JOIN persistentvolume_match m
)
SELECT claim_namespace, claim_name, claim_uid, claim_class, delay_binding, has_selector,
    volume_name, prebound, access_mode_count, capacity, request, capacity_bytes,
    request_bytes
FROM pairs
WHERE deleting IS NULL
    AND volume_mode = claim_volume_mode
    AND vac = claim_vac
    AND NOT EXISTS (SELECT 1 FROM json_each(claim_access_modes) w
        WHERE w.value NOT IN (SELECT value FROM json_each(access_modes)))
    AND capacity_bytes >= request_bytes * (1 - 1e-9)
    AND (prebound OR (claim_ref_uid IS NULL AND phase = 'Available'
        AND class = claim_class AND NOT delay_binding));
