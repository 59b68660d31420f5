-- 024-cronjob.sql - what the CronJob controller (src/controllers/cronjob.c) reads of a
-- CronJob's Jobs, and each CronJob's schedule at a glance.
--
-- cronjob_jobs: one row per Job a cached CronJob controls (its controller ownerReference):
--   namespace, cronjob, cronjob_uid, job, job_uid, resource_version,
--   state        ('active' unfinished; 'Complete' or 'Failed': its finishing condition
--                 with status True),
--   start_time, completion_time (the Job's status),
--   listed       (0/1: the CronJob's status.active lists its uid),
--   history_rank (among the CronJob's finished Jobs of the same state, 1 for the newest:
--                 kube's byJobStartTime reversed, a Job without a startTime newest, equal
--                 times by name; NULL for an active Job),
--   beyond_limit (1: a finished Job past successfulJobsHistoryLimit or
--                 failedJobsHistoryLimit, which the next sync deletes in the background),
--   body.
--   SELECT job, state, listed, history_rank, beyond_limit FROM cronjob_jobs
--    WHERE namespace = 'ns' AND cronjob = 'c';
CREATE VIEW cronjob_jobs AS
WITH owned AS (
    SELECT c.namespace AS namespace, c.name AS cronjob, c.uid AS cronjob_uid,
           j.name AS job, j.uid AS job_uid, j.resource_version AS resource_version,
           coalesce((SELECT json_extract(k.value, '$.type') FROM json_each(j.body,
                       '$.status.conditions') k
                      WHERE json_extract(k.value, '$.type') IN ('Complete', 'Failed')
                        AND json_extract(k.value, '$.status') = 'True' LIMIT 1),
                    'active') AS state,
           json_extract(j.body, '$.status.startTime') AS start_time,
           json_extract(j.body, '$.status.completionTime') AS completion_time,
           EXISTS (SELECT 1 FROM json_each(c.body, '$.status.active') a
                    WHERE json_extract(a.value, '$.uid') = j.uid) AS listed,
           json_extract(c.body, '$.spec.successfulJobsHistoryLimit') AS successful_limit,
           json_extract(c.body, '$.spec.failedJobsHistoryLimit') AS failed_limit,
           j.body AS body
      FROM cache_objects c
      JOIN object_owners o ON o.owner_uid = c.uid AND o.controller = 1
      CROSS JOIN cache_objects j ON j.id = o.object_id
     WHERE c.resource = 'cronjobs' AND j.resource = 'jobs' AND j.namespace = c.namespace
),
ranked AS (
    SELECT *, CASE WHEN state = 'active' THEN NULL ELSE
                  row_number() OVER (PARTITION BY cronjob_uid, state = 'active', state
                                     ORDER BY start_time IS NULL DESC, start_time DESC,
                                              job DESC) END AS history_rank
      FROM owned
)
SELECT namespace, cronjob, cronjob_uid, job, job_uid, resource_version, state, start_time,
       completion_time, listed, history_rank,
       CASE WHEN state = 'Complete' AND successful_limit IS NOT NULL
                 AND history_rank > successful_limit THEN 1
            WHEN state = 'Failed' AND failed_limit IS NOT NULL
                 AND history_rank > failed_limit THEN 1
            ELSE 0 END AS beyond_limit,
       body
  FROM ranked;

-- cronjob_schedule: one row per cached CronJob: its schedule as written (the next time
-- it names is robfig's cron Next, computed by the controller, which logs and requeues at
-- it), timeZone, suspend, concurrencyPolicy, startingDeadlineSeconds, lastScheduleTime,
-- lastSuccessfulTime, the Jobs its status lists active, and the cached ones unfinished.
--   SELECT name, schedule, last_schedule_time, listed_active, active_jobs
--     FROM cronjob_schedule WHERE namespace = 'ns';
CREATE VIEW cronjob_schedule AS
SELECT c.namespace AS namespace, c.name AS name, c.uid AS uid,
       json_extract(c.body, '$.spec.schedule') AS schedule,
       json_extract(c.body, '$.spec.timeZone') AS time_zone,
       coalesce(json_extract(c.body, '$.spec.suspend'), 0) AS suspend,
       coalesce(json_extract(c.body, '$.spec.concurrencyPolicy'), 'Allow') AS concurrency_policy,
       json_extract(c.body, '$.spec.startingDeadlineSeconds') AS starting_deadline_seconds,
       json_extract(c.body, '$.status.lastScheduleTime') AS last_schedule_time,
       json_extract(c.body, '$.status.lastSuccessfulTime') AS last_successful_time,
       (SELECT group_concat(json_extract(a.value, '$.name'), ',')
          FROM json_each(c.body, '$.status.active') a) AS listed_active,
       (SELECT group_concat(cj.job, ',') FROM cronjob_jobs cj
         WHERE cj.cronjob_uid = c.uid AND cj.state = 'active') AS active_jobs
  FROM cache_objects c
 WHERE c.resource = 'cronjobs';
