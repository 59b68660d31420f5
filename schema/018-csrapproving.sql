-- 018-csrapproving.sql - what the CSR approver (src/controllers/csrapproving.c) reads of
-- the cache before it reads a request.
--
-- csrapproving_queue: each cached CertificateSigningRequest of kubelets' client signer
-- (kubernetes.io/kube-apiserver-client-kubelet) and whether the approver takes it up:
--   name, username, groups (JSON), usages (JSON),
--   to_review (0/1: neither approved nor denied, not issued).
-- A CSR with to_review = 1 whose request is a kubelet's client one (O=system:nodes alone,
-- CN system:node:..., no SANs, digital signature and client auth, with key encipherment
-- or not: read with OpenSSL) is reviewed with a SubjectAccessReview of its requester,
-- selfnodeclient first when the requester is the CN, then nodeclient, and approved by the
-- first the apiserver allows.
--   SELECT name, username FROM csrapproving_queue WHERE to_review;
CREATE VIEW csrapproving_queue AS
SELECT name, json_extract(body, '$.spec.username') AS username,
       json_extract(body, '$.spec.groups') AS groups,
       json_extract(body, '$.spec.usages') AS usages,
       NOT EXISTS (SELECT 1 FROM json_each(body, '$.status.conditions') c
                    WHERE json_extract(c.value, '$.type') IN ('Approved', 'Denied'))
       AND coalesce(json_extract(body, '$.status.certificate'), '') = '' AS to_review
  FROM cache_objects
 WHERE resource = 'certificatesigningrequests' AND namespace = ''
   AND json_extract(body, '$.spec.signerName') = 'kubernetes.io/kube-apiserver-client-kubelet';
