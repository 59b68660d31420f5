/*
 * deployment.h - the Deployment controller, and the rules it is made of (kube's
 * deployment/util), exposed for the unit tests that port kube-controller-manager's case
 * tables. Objects are the apiserver's JSON (cJSON): a Deployment, its ReplicaSets.
 */
#ifndef SQLKCM_CONTROLLERS_DEPLOYMENT_H
#define SQLKCM_CONTROLLERS_DEPLOYMENT_H

#include <cjson/cJSON.h>

#include "controller.h"

extern const struct controller_type deployment_controller_type;

/* The annotations kube's Deployment controller reads and writes on ReplicaSets. */
#define DEPLOYMENT_REVISION_ANNOTATION "deployment.kubernetes.io/revision"
#define DEPLOYMENT_REVISION_HISTORY_ANNOTATION "deployment.kubernetes.io/revision-history"
#define DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION "deployment.kubernetes.io/desired-replicas"
#define DEPLOYMENT_MAX_REPLICAS_ANNOTATION "deployment.kubernetes.io/max-replicas"
#define DEPLOYMENT_ROLLBACK_TO_ANNOTATION "deprecated.deployment.rollback.to"
#define DEPLOYMENT_HASH_LABEL "pod-template-hash"
/* The revision-history annotation is kept under this many characters. */
#define DEPLOYMENT_MAX_REVISION_HISTORY_CHARS 2000

/* maxSurge and maxUnavailable of a rolling update for desired replicas (kube's
 * ResolveFenceposts): surge rounds up, unavailable down, both 0 makes unavailable 1. */
int deployment_resolve_fenceposts(const cJSON *max_surge, const cJSON *max_unavailable,
    long long desired, long long *surge, long long *unavailable, char **error);

/* spec.replicas of a Deployment or ReplicaSet (1 when absent, as the API defaults it). */
long long deployment_spec_replicas(const cJSON *object);

/* 1 when the Deployment's strategy is RollingUpdate (the default). */
int deployment_is_rolling(const cJSON *d);

/* kube's MaxSurge and MaxUnavailable of a Deployment: 0 for Recreate; maxUnavailable is at
 * most spec.replicas, and 0 when spec.replicas is. An invalid value counts as 0. */
long long deployment_max_surge(const cJSON *d);
long long deployment_max_unavailable(const cJSON *d);

/* The revision annotation of object as a number: 0 when absent; -1 when it is not one. */
long long deployment_revision(const cJSON *object);

/* The largest revision of n ReplicaSets, and the second largest (kube's MaxRevision and
 * LastRevision); unparseable revisions are skipped. */
long long deployment_max_revision(const cJSON *const *rs, int n);
long long deployment_last_revision(const cJSON *const *rs, int n);

/* Sets the Deployment's annotations on rs as kube's SetNewReplicaSetAnnotations: copies
 * the Deployment's (less last-applied, revision, revision-history, desired and max
 * replicas and rollback-to), raises the revision to new_revision when higher (pushing the
 * old one onto revision-history, within limit_chars), and for a new ReplicaSet (!exists)
 * the desired- and max-replicas annotations. Returns 1 if anything changed. */
int deployment_set_new_rs_annotations(const cJSON *d, cJSON *rs, long long new_revision,
    int exists, int limit_chars);

/* Sets desired- and max-replicas on rs; returns 1 if either changed. */
int deployment_set_replicas_annotations(cJSON *rs, long long desired, long long max);

/* 1 when rs's desired- or max-replicas annotation differs from these. */
int deployment_replicas_annotations_need_update(const cJSON *rs, long long desired,
    long long max);

/* Reads a non-negative int32 annotation of rs (kube's getNonNegativeInt32FromAnnotation):
 * 1 and *out when it holds one, else 0. */
int deployment_int32_annotation(const cJSON *rs, const char *key, long long *out);

/* How many replicas rs gains (or, negative, loses) when to_add replicas are shared
 * proportionally and added have been given out so far (kube's GetReplicaSetProportion). */
long long deployment_rs_proportion(const cJSON *rs, const cJSON *d, long long to_add,
    long long added);

/* The replicas the new ReplicaSet should have now (kube's NewRSNewReplicas), given every
 * ReplicaSet's spec.replicas (all, n of them, the new one among them). */
long long deployment_new_rs_new_replicas(const cJSON *d, const cJSON *const *all, int n,
    const cJSON *new_rs);

/* 1 when two pod templates are equal once the pod-template-hash label is left out (kube's
 * EqualIgnoreHash; absent, null, empty objects and empty arrays are the same). */
int deployment_templates_equal(const cJSON *a, const cJSON *b);

/* 1 when rs is saturated: spec.replicas, desired-replicas and status.availableReplicas all
 * equal the Deployment's spec.replicas (kube's IsSaturated). */
int deployment_is_saturated(const cJSON *d, const cJSON *rs);

/* kube's DeploymentComplete, DeploymentProgressing and DeploymentTimedOut: status is the
 * new status (an object), d the Deployment as cached (its old status). now: Unix seconds. */
int deployment_complete(const cJSON *d, const cJSON *status);
int deployment_progressing(const cJSON *d, const cJSON *status);
int deployment_timed_out(const cJSON *d, const cJSON *status, double now);

/* 1 when spec.progressDeadlineSeconds is set and not MaxInt32; the same for
 * revisionHistoryLimit. */
int deployment_has_progress_deadline(const cJSON *d);
int deployment_has_history_limit(const cJSON *d);

/* The condition of type in status (an object with "conditions"), or NULL. */
const cJSON *deployment_condition_get(const cJSON *status, const char *type);

/* A condition object; both times are stamp (RFC 3339). */
cJSON *deployment_condition_new(const char *type, const char *status, const char *reason,
    const char *message, const char *stamp);

/* kube's SetDeploymentCondition: nothing when one of the same type, status and reason is
 * there; else replaces the one of that type (keeping its lastTransitionTime when the status
 * is the same) or appends. Takes cond. */
void deployment_condition_set(cJSON *status, cJSON *cond);

/* Removes the condition of type from status. */
void deployment_condition_remove(cJSON *status, const char *type);

/* The name of the new ReplicaSet of Deployment name with hash (kube's
 * generateReplicaSetName: the name cut so the whole stays within 253 characters). */
char *deployment_rs_name(const char *name, const char *hash);

/* The pod-template-hash of template with collision_count (a stable hash of its JSON text
 * and the count, in kube's safe alphabet). */
char *deployment_template_hash(const cJSON *template, long long collision_count);

#endif
