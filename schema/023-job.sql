-- 023-job.sql - what the Job controller (src/controllers/job.c) reads of a Job's pods.
--
-- job_pods: one row per pod a cached Job controls (its controller ownerReference):
--   namespace, job, job_uid, pod, pod_uid, phase,
--   deleting  (0/1: the pod has a deletionTimestamp),
--   tracked   (0/1: it still carries the batch.kubernetes.io/job-tracking finalizer, so
--              the Job has not counted it for good yet),
--   uncounted (0/1: its uid is in the Job's status.uncountedTerminatedPods: finished,
--              recorded, its finalizer on the way out, not yet in succeeded/failed),
--   state     ('active': running or pending, not being deleted; 'succeeded', 'failed':
--              its phase; 'terminating': being deleted before it finished),
--   ready     (1: its Ready condition is True), body.
-- A finished pod still tracked and not uncounted is what the next sync records in
-- uncountedTerminatedPods; one uncounted and no longer tracked moves into the counters.
--   SELECT pod, state, tracked, uncounted FROM job_pods WHERE namespace = 'ns' AND job = 'j';
CREATE VIEW job_pods AS
SELECT j.namespace AS namespace, j.name AS job, j.uid AS job_uid,
       p.name AS pod, p.uid AS pod_uid, p.phase AS phase,
       p.deletion_timestamp IS NOT NULL AS deleting,
       EXISTS (SELECT 1 FROM json_each(p.body, '$.metadata.finalizers') f
                WHERE f.value = 'batch.kubernetes.io/job-tracking') AS tracked,
       EXISTS (SELECT 1 FROM json_each(j.body, '$.status.uncountedTerminatedPods.succeeded') u
                WHERE u.value = p.uid)
       OR EXISTS (SELECT 1 FROM json_each(j.body, '$.status.uncountedTerminatedPods.failed') u
                   WHERE u.value = p.uid) AS uncounted,
       CASE WHEN p.phase = 'Succeeded' THEN 'succeeded'
            WHEN p.phase = 'Failed' THEN 'failed'
            WHEN p.deletion_timestamp IS NOT NULL THEN 'terminating'
            ELSE 'active' END AS state,
       coalesce(p.ready, 0) AS ready, p.body AS body
  FROM cache_objects j
  JOIN object_owners o ON o.owner_uid = j.uid AND o.controller = 1
  JOIN cache_pods p ON p.id = o.object_id
 WHERE j.resource = 'jobs';

-- job_progress: each cached Job's desired against what it has: parallelism and
-- completions (NULL: any one success completes it) as its spec says them, its active
-- pods and its terminating ones (job_pods), and its counters as its status records them
-- (succeeded, failed, and the uncounted uids on their way into them).
--   SELECT * FROM job_progress WHERE namespace = 'ns';
CREATE VIEW job_progress AS
SELECT j.namespace AS namespace, j.name AS job, j.uid AS job_uid,
       coalesce(json_extract(j.body, '$.spec.parallelism'), 1) AS parallelism,
       json_extract(j.body, '$.spec.completions') AS completions,
       (SELECT count(*) FROM job_pods jp WHERE jp.job_uid = j.uid AND jp.state = 'active')
         AS active,
       (SELECT count(*) FROM job_pods jp WHERE jp.job_uid = j.uid AND jp.state = 'terminating')
         AS terminating,
       coalesce(json_extract(j.body, '$.status.succeeded'), 0) AS succeeded,
       coalesce(json_extract(j.body, '$.status.failed'), 0) AS failed,
       coalesce(json_array_length(j.body, '$.status.uncountedTerminatedPods.succeeded'), 0)
       + coalesce(json_array_length(j.body, '$.status.uncountedTerminatedPods.failed'), 0)
         AS uncounted
  FROM cache_objects j
 WHERE j.resource = 'jobs';
