/*
 * replicaset.h - the ReplicaSet controller, and the rules it is made of (exposed for the
 * unit tests that port kube-controller-manager's case tables).
 */
#ifndef SQLKCM_CONTROLLERS_REPLICASET_H
#define SQLKCM_CONTROLLERS_REPLICASET_H

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "controller.h"

struct resource;

/* At most this many creations or deletions per sync (kube's burstReplicas). */
#define REPLICASET_BURST_REPLICAS 500

extern const struct controller_type replicaset_controller_type;
/* kube's ReplicationController controller: the same rules over ReplicationControllers. */
extern const struct controller_type replicationcontroller_controller_type;

/* A pod as the availability check reads it. Times are Unix seconds, 0 when absent. */
struct pod_readiness {
	int ready;		/* the Ready condition is True */
	double ready_since;	/* the Ready condition's lastTransitionTime */
};

/* The seconds after now at which the first of n ready-but-not-yet-available pods becomes
 * available given min_ready; 0 when none will (kube's FindMinNextPodAvailabilityCheck). */
double replicaset_next_availability_check(const struct pod_readiness *pods, int n, long long min_ready,
    double now);

/* The SQL a sync ranks an owner's pods with: the view replicaset_pod_rank's own text
 * (schema/011-replicaset-rank.sql) with ?1 its time (Unix seconds) and ?2 the owner's uid,
 * in rank order; NULL with *error set when the view is missing or was changed. */
char *replicaset_rank_sql(sqlite3 *db, char **error);

/* The pod the controller creates for rs (a ReplicaSet object): its template's labels,
 * annotations, finalizers and spec, generateName "<name>-", and rs as controller owner. */
cJSON *replicaset_pod_from_template(const cJSON *rs);
/* The same for an owner of another resource (a ReplicationController). */
cJSON *replicaset_pod_from_template_of(const struct resource *owner, const cJSON *rs);

/* Counts of a ReplicaSet's pods, as its status reports them. */
struct replicaset_counts {
	int replicas;
	int fully_labeled;
	int ready;
	int available;
	int terminating;	/* claimed pods being deleted (status.terminatingReplicas) */
};

/* The status rs (a ReplicaSet object) should have given counts, as a new status object:
 * counts (terminatingReplicas written even when 0, as kube 1.36 does), observedGeneration =
 * metadata.generation, and its current conditions. */
cJSON *replicaset_status_new(const cJSON *rs, const struct replicaset_counts *counts);

/* Returns 1 when status (a status object) differs from rs's current status in what kube
 * compares before writing: the counts, conditions, and whether observedGeneration is
 * metadata.generation. */
int replicaset_status_changed(const cJSON *rs, const cJSON *status);

/* Adds the ReplicaFailure condition (reason FailedCreate when creating, else FailedDelete)
 * to status unless it has one; returns 1 if it added it. */
int replicaset_status_set_failure(cJSON *status, int creating, const char *message,
    const char *now);

/* Removes the ReplicaFailure condition from status; returns 1 if there was one. */
int replicaset_status_clear_failure(cJSON *status);

#endif
