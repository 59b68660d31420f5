-- 017-csrsigning.sql - what the CSR signer (src/controllers/csrsigning.c) decides from the
-- cache alone, before it reads a request: the signer runs this view for each CSR it syncs.
--
-- csrsigning_queue: each cached CertificateSigningRequest as the signer sees it:
--   name, signer (spec.signerName),
--   approved, denied (0/1: it has a condition of that type),
--   failed (0/1: a Failed condition whose status is True or empty),
--   issued (0/1: status.certificate is set),
--   expiration_seconds (spec.expirationSeconds; NULL when the CSR asks for no lifetime),
--   to_sign (0/1: one of kube's four signers takes it up: approved and not denied, not
--     failed, not issued, for kubernetes.io/kube-apiserver-client,
--     kubernetes.io/kube-apiserver-client-kubelet, kubernetes.io/kubelet-serving or
--     kubernetes.io/legacy-unknown).
-- Whether that signer runs (was given CA files) is the daemon's to know, and the request
-- itself (its subject, names, signature) is read with OpenSSL: a CSR with to_sign = 1 gets
-- a certificate or the Failed condition from a signer that runs.
--   SELECT name, signer FROM csrsigning_queue WHERE to_sign;
CREATE VIEW csrsigning_queue AS
SELECT name, signer, approved, denied, failed, issued, expiration_seconds,
       approved AND NOT denied AND NOT failed AND NOT issued AND
       signer IN ('kubernetes.io/kube-apiserver-client',
                  'kubernetes.io/kube-apiserver-client-kubelet',
                  'kubernetes.io/kubelet-serving', 'kubernetes.io/legacy-unknown') AS to_sign
  FROM (SELECT name, json_extract(body, '$.spec.signerName') AS signer,
               EXISTS (SELECT 1 FROM json_each(body, '$.status.conditions') c
                        WHERE json_extract(c.value, '$.type') = 'Approved') AS approved,
               EXISTS (SELECT 1 FROM json_each(body, '$.status.conditions') c
                        WHERE json_extract(c.value, '$.type') = 'Denied') AS denied,
               EXISTS (SELECT 1 FROM json_each(body, '$.status.conditions') c
                        WHERE json_extract(c.value, '$.type') = 'Failed'
                          AND coalesce(json_extract(c.value, '$.status'), '') IN ('', 'True'))
                 AS failed,
               coalesce(json_extract(body, '$.status.certificate'), '') <> '' AS issued,
               json_extract(body, '$.spec.expirationSeconds') AS expiration_seconds
          FROM cache_objects
         WHERE resource = 'certificatesigningrequests' AND namespace = '');
