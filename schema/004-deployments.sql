-- 004-deployments.sql - what each Deployment has, for the people who query the cache:
-- its ReplicaSets by revision, and where its rollout stands. The Deployment controller
-- (src/controllers/deployment.c) decides with the same rules in C; these views show them.

-- deployment_replicasets: each Deployment's ReplicaSets (those whose controller owner
-- reference names it), with their revision, whether each is the new one (its template is
-- the Deployment's, the pod-template-hash label aside: compared as the apiserver's JSON
-- text, which prints both the same way), and their replicas: desired (spec), current,
-- ready and available (status).
CREATE VIEW deployment_replicasets AS
SELECT d.namespace, d.name AS deployment, r.name AS replicaset,
       CAST(json_extract(r.body, '$.metadata.annotations."deployment.kubernetes.io/revision"')
            AS INTEGER) AS revision,
       json_remove(json_extract(r.body, '$.spec.template'),
                   '$.metadata.labels."pod-template-hash"')
         = json_extract(d.body, '$.spec.template') AS is_new,
       r.replicas AS desired, r.status_replicas AS current,
       r.status_ready_replicas AS ready, r.status_available_replicas AS available,
       r.creation_timestamp AS created, r.deletion_timestamp IS NOT NULL AS deleting
  FROM cache_deployments d
  JOIN object_owners o ON o.owner_uid = d.uid AND o.controller = 1
  JOIN cache_replicasets r ON r.id = o.object_id;

-- deployment_diff: desired against actual for every Deployment. updated counts the new
-- ReplicaSet's pods, old the others'; complete is kube's DeploymentComplete (every replica
-- updated, none more, all available, the newest generation observed), from the
-- ReplicaSets' counts rather than the Deployment's status.
CREATE VIEW deployment_diff AS
SELECT d.namespace, d.name, d.uid, d.replicas AS desired, d.paused,
       coalesce(sum(CASE WHEN x.is_new THEN x.current END), 0) AS updated,
       coalesce(sum(CASE WHEN NOT x.is_new THEN x.current END), 0) AS old,
       coalesce(sum(x.available), 0) AS available,
       count(x.replicaset) AS replicasets,
       (SELECT x2.replicaset FROM deployment_replicasets x2
         WHERE x2.namespace = d.namespace AND x2.deployment = d.name AND x2.is_new
         ORDER BY x2.created LIMIT 1) AS new_replicaset,
       coalesce(sum(CASE WHEN x.is_new THEN x.current END), 0) = d.replicas
         AND coalesce(sum(x.current), 0) = d.replicas
         AND coalesce(sum(x.available), 0) = d.replicas
         AND d.observed_generation >= d.generation AS complete
  FROM cache_deployments d
  LEFT JOIN deployment_replicasets x ON x.namespace = d.namespace AND x.deployment = d.name
 GROUP BY d.id;
