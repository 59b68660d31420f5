-- 015-certificates.sql - CertificateSigningRequests (certificates.k8s.io/v1), cached whole in
-- cache_objects under the name 'certificatesigningrequests', for the CSR cleaner
-- (src/controllers/csrcleaner.c).
INSERT INTO api_resources (resource, api_version, kind, namespaced, served) VALUES
    ('certificatesigningrequests', 'certificates.k8s.io/v1', 'CertificateSigningRequest', 0, 1)
ON CONFLICT (resource) DO UPDATE SET api_version = excluded.api_version,
    kind = excluded.kind, namespaced = excluded.namespaced, served = 1;

-- An earlier sqlkcm held them by their metadata only, as the garbage collector's cache
-- names a resource of a group: list them again, whole.
DELETE FROM cache_objects WHERE resource IN ('certificatesigningrequests',
    'certificatesigningrequests.certificates.k8s.io');
DELETE FROM informers WHERE resource IN ('certificatesigningrequests',
    'certificatesigningrequests.certificates.k8s.io');
DELETE FROM api_resources WHERE resource = 'certificatesigningrequests.certificates.k8s.io';

-- csr_status: each CSR as the cleaner reads it: who signs it, when it was made, when it was
-- last approved, denied or failed (the condition's lastUpdateTime), and whether it carries
-- a certificate. The cleaner deletes (as kube's, by these times): an issued CSR an hour
-- after its approval, a denied or failed one an hour after that, a pending one (no
-- condition) 24 hours after its creation, an approved one never issued 24 hours after its
-- approval, and an issued one whose certificate has expired (which SQL cannot read: the
-- cleaner parses the certificate).
--   name, signer, created, approved, denied, failed (each NULL when absent), issued (0/1)
CREATE VIEW csr_status AS
SELECT name, json_extract(body, '$.spec.signerName') AS signer, creation_timestamp AS created,
       (SELECT json_extract(c.value, '$.lastUpdateTime') FROM json_each(body, '$.status.conditions') c
         WHERE json_extract(c.value, '$.type') = 'Approved') AS approved,
       (SELECT json_extract(c.value, '$.lastUpdateTime') FROM json_each(body, '$.status.conditions') c
         WHERE json_extract(c.value, '$.type') = 'Denied') AS denied,
       (SELECT json_extract(c.value, '$.lastUpdateTime') FROM json_each(body, '$.status.conditions') c
         WHERE json_extract(c.value, '$.type') = 'Failed') AS failed,
       coalesce(json_extract(body, '$.status.certificate'), '') <> '' AS issued
  FROM cache_objects
 WHERE resource = 'certificatesigningrequests' AND namespace = '';
