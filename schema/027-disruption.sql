-- 027-disruption.sql - the disruption controller's budgets as SQL: for each
-- PodDisruptionBudget, the pods it selects and how many of them are healthy now, beside
-- what its status (written by the controller) says it needs.

-- disruption_budgets: one row per cached PodDisruptionBudget.
--   namespace, name, uid
--   min_available, max_unavailable   spec's, as written (a number or "N%"; NULL: unset)
--   selected           the pods of its namespace its spec.selector matches (a missing
--                      selector matches none, an empty one every pod, as policy/v1 says)
--   healthy            of those, the Ready ones not being deleted and not listed in
--                      status.disruptedPods less than two minutes ago: the controller's
--                      currentHealthy
--   desired_integer    minAvailable when it is a whole number (what desiredHealthy then
--                      is); NULL when it is a percentage or maxUnavailable is set, which
--                      the controller resolves against the scale of the pods' controllers
--   expected_pods, desired_healthy, current_healthy, disruptions_allowed,
--   observed_generation, generation   the status as last written, and the spec's
--                      generation (stale when observed_generation lags it)
--   allowed_reason     the DisruptionAllowed condition's reason: SufficientPods,
--                      InsufficientPods or SyncFailed (NULL: no status yet)
-- The eviction API lets a pod of the budget go while disruptions_allowed > 0.
CREATE VIEW disruption_budgets AS
WITH
clock(now) AS (SELECT (julianday('now') - 2440587.5) * 86400.0),
budgets(id, uid, namespace, name, selector, body) AS (
    SELECT id, uid, namespace, name, json_extract(body, '$.spec.selector'), body
      FROM cache_objects WHERE resource = 'poddisruptionbudgets'),
wanted(id, key, value) AS MATERIALIZED (
    SELECT b.id, m.key, m.value FROM budgets b, json_each(b.selector, '$.matchLabels') m),
required(id, key, operator, vals) AS MATERIALIZED (
    SELECT b.id, e.value ->> 'key', e.value ->> 'operator', coalesce(e.value -> 'values', '[]')
      FROM budgets b, json_each(b.selector, '$.matchExpressions') e),
selected(budget_id, pod_id, name, deleting, ready) AS (
    SELECT b.id, p.id, p.name, p.deletion_timestamp IS NOT NULL, coalesce(p.ready, 0)
      FROM budgets b CROSS JOIN cache_pods p
     WHERE p.namespace = b.namespace
       AND b.selector IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM wanted m
                        WHERE m.id = b.id
                          AND NOT EXISTS (SELECT 1 FROM object_labels l
                                           WHERE l.object_id = p.id AND l.key = m.key
                                             AND l.value = m.value))
       AND NOT EXISTS (
           SELECT 1 FROM required e
            WHERE e.id = b.id
              AND CASE e.operator
                  WHEN 'In' THEN NOT EXISTS (
                      SELECT 1 FROM object_labels l, json_each(e.vals) v
                       WHERE l.object_id = p.id AND l.key = e.key AND l.value = v.value)
                  WHEN 'NotIn' THEN EXISTS (
                      SELECT 1 FROM object_labels l, json_each(e.vals) v
                       WHERE l.object_id = p.id AND l.key = e.key AND l.value = v.value)
                  WHEN 'Exists' THEN NOT EXISTS (
                      SELECT 1 FROM object_labels l WHERE l.object_id = p.id AND l.key = e.key)
                  WHEN 'DoesNotExist' THEN EXISTS (
                      SELECT 1 FROM object_labels l WHERE l.object_id = p.id AND l.key = e.key)
                  ELSE 1 END)),
-- The pods an allowed eviction listed less than two minutes ago.
disrupted(budget_id, name) AS (
    SELECT b.id, d.key
      FROM budgets b, json_each(b.body, '$.status.disruptedPods') d, clock
     WHERE (julianday(d.value) - 2440587.5) * 86400.0 + 120 > clock.now)
SELECT b.namespace, b.name, b.uid,
       json_extract(b.body, '$.spec.minAvailable') AS min_available,
       json_extract(b.body, '$.spec.maxUnavailable') AS max_unavailable,
       (SELECT count(*) FROM selected s WHERE s.budget_id = b.id) AS selected,
       (SELECT count(*) FROM selected s
         WHERE s.budget_id = b.id AND NOT s.deleting AND s.ready = 1
           AND NOT EXISTS (SELECT 1 FROM disrupted d
                            WHERE d.budget_id = b.id AND d.name = s.name)) AS healthy,
       CASE WHEN json_type(b.body, '$.spec.maxUnavailable') IS NULL
             AND json_type(b.body, '$.spec.minAvailable') = 'integer'
            THEN json_extract(b.body, '$.spec.minAvailable') END AS desired_integer,
       json_extract(b.body, '$.status.expectedPods') AS expected_pods,
       json_extract(b.body, '$.status.desiredHealthy') AS desired_healthy,
       json_extract(b.body, '$.status.currentHealthy') AS current_healthy,
       json_extract(b.body, '$.status.disruptionsAllowed') AS disruptions_allowed,
       json_extract(b.body, '$.status.observedGeneration') AS observed_generation,
       json_extract(b.body, '$.metadata.generation') AS generation,
       (SELECT c.value ->> 'reason' FROM json_each(b.body, '$.status.conditions') c
         WHERE c.value ->> 'type' = 'DisruptionAllowed') AS allowed_reason
  FROM budgets b;
