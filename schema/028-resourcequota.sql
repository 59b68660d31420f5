-- 028-resourcequota.sql - what the resource quota controller (src/controllers/
-- resourcequota.c) counts, and each quota's usage beside what its status says.
--
-- resourcequota_countable: every namespaced resource the cache holds and the name a quota
-- counts its objects by, kube's count/<resource>[.<group>] (count/configmaps,
-- count/deployments.apps, count/widgets.example.com):
--   resource (as the objects view names it), count_name.
-- A count/ name no row lists counts nothing: kube has no evaluator for a resource
-- discovery does not list, and the quota's status keeps what it said.
--   SELECT count_name FROM resourcequota_countable ORDER BY 1;
CREATE VIEW resourcequota_countable AS
WITH r(resource, api_version) AS (
    SELECT resource, api_version FROM api_resources WHERE served AND namespaced
    UNION SELECT 'pods', 'v1'
    UNION SELECT 'replicasets', 'apps/v1'
    UNION SELECT 'deployments', 'apps/v1'
    UNION SELECT 'replicationcontrollers', 'v1'
), g(resource, plural, grp) AS (
    SELECT resource,
           CASE WHEN instr(resource, '.') > 0 THEN substr(resource, 1, instr(resource, '.') - 1)
                ELSE resource END,
           CASE WHEN instr(api_version, '/') > 0
                THEN substr(api_version, 1, instr(api_version, '/') - 1) ELSE '' END
      FROM r
)
SELECT resource, 'count/' || plural || CASE grp WHEN '' THEN '' ELSE '.' || grp END AS count_name
  FROM g;

-- resourcequota_usage: each resource of each quota's spec.hard, with what the status says
-- and, where SQL alone can tell it, the usage computed from the cache:
--   namespace, quota, resource, hard (spec.hard's text), status_used (status.used's text;
--   NULL: none yet), computed (a whole number; NULL: not computed here, such as cpu or
--   memory, whose sums the controller makes in C).
-- computed is given for the object counts (count/..., configmaps, secrets, services,
-- persistentvolumeclaims, replicationcontrollers, resourcequotas: 0 under a quota with
-- scopes, which counts no object, as in kube) and for a quota without scopes, for pods
-- (the pods still counted: neither Succeeded nor Failed nor deleted past their grace
-- period, at SQLite's 'now'). After a sync, computed and status_used agree unless the
-- cache moved since.
--   SELECT * FROM resourcequota_usage WHERE computed IS NOT status_used + 0;
CREATE VIEW resourcequota_usage AS
WITH quota AS (
    SELECT namespace, name, body,
           json_array_length(body, '$.spec.scopes') > 0
           OR json_array_length(body, '$.spec.scopeSelector.matchExpressions') > 0 AS scoped
      FROM cache_objects WHERE resource = 'resourcequotas'
), hard AS (
    SELECT q.namespace, q.name AS quota, q.scoped, h.key AS resource, h.value AS hard,
           json_extract(q.body, '$.status.used."' || h.key || '"') AS status_used,
           CASE WHEN h.key IN ('configmaps', 'secrets', 'services', 'persistentvolumeclaims',
                               'replicationcontrollers', 'resourcequotas')
                THEN 'count/' || h.key ELSE h.key END AS count_name
      FROM quota q, json_each(q.body, '$.spec.hard') h
)
SELECT h.namespace, h.quota, h.resource, h.hard, h.status_used,
       CASE
         WHEN h.resource = 'pods' THEN
           CASE WHEN h.scoped THEN NULL ELSE
             (SELECT count(*) FROM cache_pods p
               WHERE p.namespace = h.namespace
                 AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')
                 AND NOT (p.deletion_timestamp IS NOT NULL
                          AND json_extract(p.body, '$.metadata.deletionGracePeriodSeconds')
                              IS NOT NULL
                          AND unixepoch('now') > unixepoch(p.deletion_timestamp)
                              + json_extract(p.body,
                                  '$.metadata.deletionGracePeriodSeconds')))
           END
         WHEN c.resource IS NOT NULL THEN
           CASE WHEN h.scoped THEN 0 ELSE
             (SELECT count(*) FROM objects o
               WHERE o.resource = c.resource AND o.namespace = h.namespace)
           END
       END AS computed
  FROM hard h LEFT JOIN resourcequota_countable c ON c.count_name = h.count_name;
