-- 029-access.sql - the access controllers' resources and views: ClusterRoles cached whole
-- for the aggregation controller, and the rules each aggregated role should have;
-- Secrets cached whole for the service account token controllers; ServiceCIDRs and
-- IPAddresses for the Service CIDR controller.
INSERT INTO api_resources (resource, api_version, kind, namespaced, served) VALUES
    ('clusterroles', 'rbac.authorization.k8s.io/v1', 'ClusterRole', 0, 1),
    ('secrets', 'v1', 'Secret', 1, 1),
    ('servicecidrs', 'networking.k8s.io/v1', 'ServiceCIDR', 0, 1),
    ('ipaddresses', 'networking.k8s.io/v1', 'IPAddress', 0, 1)
ON CONFLICT (resource) DO UPDATE SET api_version = excluded.api_version,
    kind = excluded.kind, namespaced = excluded.namespaced, served = 1;

-- An earlier sqlkcm's garbage collector held them by their metadata only, under
-- "plural.group": list them again, whole.
-- ServiceAccounts, cached by their metadata until now, are listed again whole (the legacy
-- token cleaner reads their secrets list).
DELETE FROM cache_objects WHERE resource IN ('clusterroles',
    'clusterroles.rbac.authorization.k8s.io', 'secrets', 'serviceaccounts',
    'servicecidrs.networking.k8s.io', 'ipaddresses.networking.k8s.io');
DELETE FROM informers WHERE resource IN ('clusterroles',
    'clusterroles.rbac.authorization.k8s.io', 'secrets', 'serviceaccounts',
    'servicecidrs.networking.k8s.io', 'ipaddresses.networking.k8s.io');
DELETE FROM api_resources WHERE resource IN ('clusterroles.rbac.authorization.k8s.io',
    'servicecidrs.networking.k8s.io', 'ipaddresses.networking.k8s.io');

-- Every rule of every cached ClusterRole, in the form the aggregation controller compares
-- and writes: a PolicyRule's five lists in a fixed order, each only when it has a member,
-- so that a missing list and an empty one are the same rule (as kube's semantic equality
-- has them). role: the ClusterRole's name; rule_index: the rule's place in its rules.
CREATE VIEW clusterrole_rules AS
SELECT c.name AS role, r.key AS rule_index,
    json_patch('{}', json_object(
        'verbs', CASE WHEN json_array_length(r.value, '$.verbs') > 0
            THEN json_extract(r.value, '$.verbs') END,
        'apiGroups', CASE WHEN json_array_length(r.value, '$.apiGroups') > 0
            THEN json_extract(r.value, '$.apiGroups') END,
        'resources', CASE WHEN json_array_length(r.value, '$.resources') > 0
            THEN json_extract(r.value, '$.resources') END,
        'resourceNames', CASE WHEN json_array_length(r.value, '$.resourceNames') > 0
            THEN json_extract(r.value, '$.resourceNames') END,
        'nonResourceURLs', CASE WHEN json_array_length(r.value, '$.nonResourceURLs') > 0
            THEN json_extract(r.value, '$.nonResourceURLs') END)) AS rule
FROM cache_objects AS c, json_each(c.body, '$.rules') AS r
WHERE c.resource = 'clusterroles' AND c.namespace = ''
    AND json_type(c.body, '$.rules') = 'array' AND r.type = 'object';

-- The rules each ClusterRole with an aggregationRule should have (kube's
-- clusterrole-aggregation-controller): for each of its clusterRoleSelectors in order, the
-- other ClusterRoles it selects by name, each one's rules in order, a rule kept only where
-- it first comes. position: the rule's place in the role's wanted rules (0 first); source
-- and selector_index: the ClusterRole it comes from and the selector that found it.
-- A selector's matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist) must all
-- hold; the controller refuses a selector kube's validation would (an unknown operator, In
-- without values), and so does not write what this view shows for its role.
CREATE VIEW clusterrole_aggregation_rules AS
WITH aggregated AS MATERIALIZED (
    SELECT a.name AS role, s.key AS selector_index, s.value AS selector
    FROM cache_objects AS a,
        json_each(a.body, '$.aggregationRule.clusterRoleSelectors') AS s
    WHERE a.resource = 'clusterroles' AND a.namespace = ''
        AND json_type(a.body, '$.aggregationRule.clusterRoleSelectors') = 'array'
),
selected AS (
    SELECT g.role, g.selector_index, c.name AS source
    FROM aggregated AS g CROSS JOIN cache_objects AS c
    WHERE c.resource = 'clusterroles' AND c.namespace = '' AND c.name <> g.role
        AND NOT EXISTS (
            SELECT 1 FROM json_each(g.selector, '$.matchLabels') AS want
            WHERE NOT EXISTS (
                SELECT 1 FROM json_each(c.body, '$.metadata.labels') AS l
                WHERE l.key = want.key AND l.value = want.value))
        AND NOT EXISTS (
            SELECT 1 FROM json_each(g.selector, '$.matchExpressions') AS e
            WHERE NOT CASE json_extract(e.value, '$.operator')
                WHEN 'In' THEN EXISTS (SELECT 1
                    FROM json_each(c.body, '$.metadata.labels') AS l,
                        json_each(e.value, '$.values') AS v
                    WHERE l.key = json_extract(e.value, '$.key') AND v.value = l.value)
                WHEN 'NotIn' THEN NOT EXISTS (SELECT 1
                    FROM json_each(c.body, '$.metadata.labels') AS l,
                        json_each(e.value, '$.values') AS v
                    WHERE l.key = json_extract(e.value, '$.key') AND v.value = l.value)
                WHEN 'Exists' THEN EXISTS (SELECT 1
                    FROM json_each(c.body, '$.metadata.labels') AS l
                    WHERE l.key = json_extract(e.value, '$.key'))
                WHEN 'DoesNotExist' THEN NOT EXISTS (SELECT 1
                    FROM json_each(c.body, '$.metadata.labels') AS l
                    WHERE l.key = json_extract(e.value, '$.key'))
                ELSE 0 END)
),
occurrences AS (
    SELECT s.role, s.selector_index, s.source, r.rule_index, r.rule,
        row_number() OVER (PARTITION BY s.role, r.rule
            ORDER BY s.selector_index, s.source, r.rule_index) AS nth
    FROM selected AS s CROSS JOIN clusterrole_rules AS r
    WHERE r.role = s.source
)
SELECT role,
    row_number() OVER (PARTITION BY role
        ORDER BY selector_index, source, rule_index) - 1 AS position,
    source, selector_index, rule
FROM occurrences WHERE nth = 1;

-- Each aggregated ClusterRole's rules, wanted beside held (both as JSON arrays in the
-- form of clusterrole_rules), and whether the controller has to write them.
CREATE VIEW clusterrole_aggregation AS
SELECT a.name AS role,
    (SELECT json_group_array(json(w.rule)) FROM (SELECT rule FROM
        clusterrole_aggregation_rules AS r WHERE r.role = a.name ORDER BY position) AS w)
        AS wanted,
    (SELECT json_group_array(json(h.rule)) FROM (SELECT rule FROM clusterrole_rules AS r
        WHERE r.role = a.name ORDER BY rule_index) AS h) AS held,
    (SELECT json_group_array(json(w.rule)) FROM (SELECT rule FROM
        clusterrole_aggregation_rules AS r WHERE r.role = a.name ORDER BY position) AS w)
    IS NOT (SELECT json_group_array(json(h.rule)) FROM (SELECT rule FROM clusterrole_rules
        AS r WHERE r.role = a.name ORDER BY rule_index) AS h) AS differs
FROM cache_objects AS a
WHERE a.resource = 'clusterroles' AND a.namespace = ''
    AND json_type(a.body, '$.aggregationRule') = 'object';

-- Every Secret of type kubernetes.io/service-account-token, as kube's tokens controller
-- judges it: the ServiceAccount its annotations name (serviceaccount_name, and
-- serviceaccount_uid when set) and the cached ServiceAccount that matches them
-- (account_uid: NULL when none is cached under that name, or it has another uid: the
-- controller then deletes the Secret, once a live read confirms the ServiceAccount is
-- gone); what its data lacks (no token, no namespace: the controller fills them in); its
-- ca.crt as base64, which the controller compares with the root CA it hands out.
CREATE VIEW serviceaccount_token_secrets AS
SELECT s.namespace, s.name, s.uid,
    json_extract(s.body, '$.metadata.resourceVersion') AS resource_version,
    json_extract(s.body,
        '$.metadata.annotations."kubernetes.io/service-account.name"')
        AS serviceaccount_name,
    json_extract(s.body,
        '$.metadata.annotations."kubernetes.io/service-account.uid"')
        AS serviceaccount_uid,
    (SELECT a.uid FROM cache_objects AS a
     WHERE a.resource = 'serviceaccounts' AND a.namespace = s.namespace
         AND a.name = json_extract(s.body,
             '$.metadata.annotations."kubernetes.io/service-account.name"')
         AND (coalesce(json_extract(s.body,
             '$.metadata.annotations."kubernetes.io/service-account.uid"'), '') = ''
             OR a.uid = json_extract(s.body,
             '$.metadata.annotations."kubernetes.io/service-account.uid"')))
        AS account_uid,
    coalesce(length(json_extract(s.body, '$.data.token')), 0) = 0 AS needs_token,
    coalesce(length(json_extract(s.body, '$.data.namespace')), 0) = 0 AS needs_namespace,
    json_extract(s.body, '$.data."ca.crt"') AS ca_crt
FROM cache_objects AS s
WHERE s.resource = 'secrets'
    AND json_extract(s.body, '$.type') = 'kubernetes.io/service-account-token';

-- The Secrets each cached pod names (kube's VisitPodSecretNames): its imagePullSecrets,
-- the envFrom and env references of its containers, init and ephemeral containers, and
-- the secret, projected secret and volume plugins' secret references of its volumes.
CREATE VIEW pod_secret_names AS
WITH containers AS (
    SELECT p.namespace, c.value AS container
    FROM cache_pods AS p, json_each(p.body, '$.spec.containers') AS c
    UNION ALL
    SELECT p.namespace, c.value FROM cache_pods AS p,
        json_each(p.body, '$.spec.initContainers') AS c
    UNION ALL
    SELECT p.namespace, c.value FROM cache_pods AS p,
        json_each(p.body, '$.spec.ephemeralContainers') AS c
),
volumes AS (
    SELECT p.namespace, v.value AS volume
    FROM cache_pods AS p, json_each(p.body, '$.spec.volumes') AS v
),
names AS (
    SELECT p.namespace, json_extract(s.value, '$.name') AS secret
    FROM cache_pods AS p, json_each(p.body, '$.spec.imagePullSecrets') AS s
    UNION ALL
    SELECT c.namespace, json_extract(e.value, '$.secretRef.name')
    FROM containers AS c, json_each(c.container, '$.envFrom') AS e
    UNION ALL
    SELECT c.namespace, json_extract(e.value, '$.valueFrom.secretKeyRef.name')
    FROM containers AS c, json_each(c.container, '$.env') AS e
    UNION ALL
    SELECT v.namespace, coalesce(json_extract(v.volume, '$.azureFile.secretName'),
        json_extract(v.volume, '$.cephfs.secretRef.name'),
        json_extract(v.volume, '$.cinder.secretRef.name'),
        json_extract(v.volume, '$.flexVolume.secretRef.name'),
        json_extract(v.volume, '$.rbd.secretRef.name'),
        json_extract(v.volume, '$.secret.secretName'),
        json_extract(v.volume, '$.scaleIO.secretRef.name'),
        json_extract(v.volume, '$.iscsi.secretRef.name'),
        json_extract(v.volume, '$.storageos.secretRef.name'),
        json_extract(v.volume, '$.csi.nodePublishSecretRef.name'))
    FROM volumes AS v
    UNION ALL
    SELECT v.namespace, json_extract(s.value, '$.secret.name')
    FROM volumes AS v, json_each(v.volume, '$.projected.sources') AS s
)
SELECT DISTINCT namespace, secret FROM names
WHERE typeof(secret) = 'text' AND secret <> '';

-- Every service account token Secret as kube's legacy token cleaner judges it: when it
-- was made, whether it is being deleted, its last-used and invalid-since labels (dates,
-- as the apiserver and the cleaner write them), whether the ServiceAccount its
-- annotations name (of that uid, when set) lists it in its secrets (an auto-generated
-- token: only those are cleaned), and whether a pod of its namespace uses it. The dates
-- against the clean-up period are the controller's.
CREATE VIEW legacy_token_secrets AS
SELECT s.namespace, s.name, s.uid, s.resource_version, s.creation_timestamp,
    s.deletion_timestamp IS NOT NULL AS deleting,
    json_extract(s.body, '$.metadata.labels."kubernetes.io/legacy-token-last-used"')
        AS last_used,
    json_extract(s.body, '$.metadata.labels."kubernetes.io/legacy-token-invalid-since"')
        AS invalid_since,
    EXISTS (SELECT 1 FROM cache_objects AS a, json_each(a.body, '$.secrets') AS r
        WHERE a.resource = 'serviceaccounts' AND a.namespace = s.namespace
            AND a.name = json_extract(s.body,
                '$.metadata.annotations."kubernetes.io/service-account.name"')
            AND (coalesce(json_extract(s.body,
                '$.metadata.annotations."kubernetes.io/service-account.uid"'), '') = ''
                OR a.uid = json_extract(s.body,
                '$.metadata.annotations."kubernetes.io/service-account.uid"'))
            AND json_extract(r.value, '$.name') = s.name) AS referenced,
    EXISTS (SELECT 1 FROM pod_secret_names AS m
        WHERE m.namespace = s.namespace AND m.secret = s.name) AS mounted
FROM cache_objects AS s
WHERE s.resource = 'secrets'
    AND json_extract(s.body, '$.type') = 'kubernetes.io/service-account-token';

-- The date since which the apiserver tracks the use of legacy tokens (kube-system's
-- kube-apiserver-legacy-service-account-token-tracking ConfigMap, data "since"); no row
-- when the ConfigMap is not cached, NULL when it has no such data.
CREATE VIEW legacy_token_tracking AS
SELECT json_extract(body, '$.data.since') AS since FROM cache_objects
WHERE resource = 'configmaps' AND namespace = 'kube-system'
    AND name = 'kube-apiserver-legacy-service-account-token-tracking';

-- Every ServiceCIDR as the Service CIDR controller sees it: its CIDRs, whether it is
-- being deleted, whether it holds the networking.k8s.io/service-cidr-finalizer, and its
-- Ready condition. Which IPAddresses lie in which ranges (and so hold a ServiceCIDR being
-- deleted) is prefix arithmetic the controller does in C.
CREATE VIEW service_cidrs AS
SELECT c.name, json_extract(c.body, '$.spec.cidrs') AS cidrs,
    c.deletion_timestamp IS NOT NULL AS deleting,
    EXISTS (SELECT 1 FROM json_each(c.body, '$.metadata.finalizers') AS f
        WHERE f.value = 'networking.k8s.io/service-cidr-finalizer') AS has_finalizer,
    (SELECT json_extract(r.value, '$.status') FROM json_each(c.body, '$.status.conditions')
        AS r WHERE json_extract(r.value, '$.type') = 'Ready') AS ready,
    (SELECT json_extract(r.value, '$.reason') FROM json_each(c.body, '$.status.conditions')
        AS r WHERE json_extract(r.value, '$.type') = 'Ready') AS ready_reason
FROM cache_objects AS c
WHERE c.resource = 'servicecidrs' AND c.namespace = '';
