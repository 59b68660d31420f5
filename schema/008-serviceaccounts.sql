-- 008-serviceaccounts.sql - what every namespace is given at birth: its default
-- ServiceAccount (src/controllers/serviceaccount.c) and its kube-root-ca.crt ConfigMap
-- (src/controllers/rootcacertpublisher.c). Each controller decides from its view below,
-- filtered on one namespace; the same SELECT without the filter shows every namespace.
--
-- Namespaces are rows of cache_objects with resource 'namespaces' (namespace '', name the
-- namespace's); ServiceAccounts are there by their metadata, ConfigMaps whole.

-- serviceaccount_missing: the namespaces where the serviceaccount controller creates a
-- ServiceAccount: active ones (status.phase Active: kube leaves a Terminating namespace,
-- or one without a phase, alone) that have no ServiceAccount named default in the cache.
-- A ServiceAccount being deleted still counts as there, as it does for kube's lister.
--   namespace       the namespace's name (the controller's key)
--   namespace_uid
--   serviceaccount  the ServiceAccount to create: 'default'
CREATE VIEW serviceaccount_missing AS
SELECT n.name AS namespace, n.uid AS namespace_uid, 'default' AS serviceaccount
  FROM cache_objects n
 WHERE n.resource = 'namespaces' AND n.namespace = ''
   AND json_extract(n.body, '$.status.phase') = 'Active'
   AND NOT EXISTS (SELECT 1 FROM cache_objects s
                    WHERE s.resource = 'serviceaccounts' AND s.namespace = n.name
                      AND s.name = 'default');

-- root_ca_configmaps: every namespace and its kube-root-ca.crt ConfigMap, as the root CA
-- publisher judges it. The publisher leaves the ConfigMap alone when its data is exactly
-- {"ca.crt": the CA} and its kubernetes.io/description annotation is not empty (any text
-- will do: kube compares its presence, not its words); otherwise it replaces the data and
-- sets the annotation to kube's text. A missing one is created, whatever the namespace's
-- phase (the apiserver refuses it in a Terminating namespace; that is not an error).
-- The CA is the controller's (--root-ca-file, or the kubeconfig's CA), which the cache
-- does not hold; in sqlite3 compare with the file, e.g.:
--   SELECT namespace FROM root_ca_configmaps
--    WHERE configmap_uid IS NULL OR NOT described OR other_data_keys > 0
--       OR ca_crt IS NOT CAST(readfile('/etc/kubernetes/pki/ca.crt') AS TEXT);
-- lists the namespaces whose ConfigMap it would create or rewrite.
--   namespace         the namespace's name (the controller's key)
--   namespace_uid
--   phase             the namespace's status.phase
--   configmap_uid     NULL: the ConfigMap is missing
--   resource_version  the ConfigMap's, which an update sends as its precondition
--   ca_crt            its data's ca.crt (NULL: no such key)
--   other_data_keys   how many other keys its data has
--   described         1 when its kubernetes.io/description annotation is not empty
CREATE VIEW root_ca_configmaps AS
SELECT n.name AS namespace, n.uid AS namespace_uid,
       json_extract(n.body, '$.status.phase') AS phase,
       c.uid AS configmap_uid, c.resource_version,
       json_extract(c.body, '$.data."ca.crt"') AS ca_crt,
       (SELECT count(*) FROM json_each(c.body, '$.data') WHERE key <> 'ca.crt')
         AS other_data_keys,
       coalesce(length(json_extract(c.body,
                '$.metadata.annotations."kubernetes.io/description"')), 0) > 0 AS described
  FROM cache_objects n
  LEFT JOIN cache_objects c ON c.resource = 'configmaps' AND c.namespace = n.name
                           AND c.name = 'kube-root-ca.crt'
 WHERE n.resource = 'namespaces' AND n.namespace = '';
