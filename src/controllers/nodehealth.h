/*
 * nodehealth.h - the rules of the node lifecycle controller's health monitor that need no
 * store: when a silent node's conditions turn Unknown, the zone states, and the rate
 * limiters that pace the NoExecute taints of each zone. nodelifecycle.c drives them from
 * the cache; the unit tests drive them with kube's cases.
 */
#ifndef SQLKCM_NODEHEALTH_H
#define SQLKCM_NODEHEALTH_H

#include <cjson/cJSON.h>

/* The monitor's settings, as kube-controller-manager's flags give them (seconds, per
 * second, nodes, a fraction). */
struct nodehealth_params {
	double monitor_period;			/* --node-monitor-period, 5 s */
	double monitor_grace;			/* --node-monitor-grace-period, 50 s */
	double startup_grace;			/* --node-startup-grace-period, 60 s */
	double eviction_rate;			/* --node-eviction-rate, 0.1 */
	double secondary_eviction_rate;		/* --secondary-node-eviction-rate, 0.01 */
	long long large_cluster_threshold;	/* --large-cluster-size-threshold, 50 */
	double unhealthy_threshold;		/* --unhealthy-zone-threshold, 0.55 */
};

/* --- a node gone silent --------------------------------------------------------------- */

/*
 * When now passes probe_at + the node's grace period (the startup grace while it has no
 * Ready condition), sets its Ready, MemoryPressure, DiskPressure and PIDPressure conditions
 * (in node, a Node object) Unknown as kube does: an existing one not Unknown gets reason
 * NodeStatusUnknown, "Kubelet stopped posting node status." and lastTransitionTime now; a
 * missing one is added with NodeStatusNeverUpdated, "Kubelet never posted node status.",
 * lastHeartbeatTime the node's creationTimestamp. NetworkUnavailable is left alone.
 * Returns 1 when the Ready condition changed (the status is to be written), else 0 (node
 * may still have been changed in its other conditions, which kube then does not write).
 */
int nodehealth_mark_unknown(cJSON *node, double probe_at, double now,
    const struct nodehealth_params *p);
/* The delay from now to the first monitor pass (every p->monitor_period from now) at which
 * node's kubelet, last seen alive at probe_at and silent since, will be past its grace
 * period: when a Ready node needs looking at again, if nothing changes meanwhile. */
double nodehealth_next_check(const cJSON *node, double probe_at, double now,
    const struct nodehealth_params *p);
/* True when node's kubelet, last seen alive at probe_at, has been silent past its grace
 * period at now: when nodehealth_mark_unknown may change anything. */
int nodehealth_grace_passed(const cJSON *node, double probe_at, double now,
    const struct nodehealth_params *p);

/* The node's Ready condition, or NULL when it has none. */
const cJSON *nodehealth_ready(const cJSON *node);

/* The node's Ready condition's status ("True", "False", "Unknown"), or NULL when it has
 * none. */
const char *nodehealth_ready_status(const cJSON *node);

/* --- rate limiters -------------------------------------------------------------------- */

/* kube's token bucket of burst 1: a token every 1/qps seconds, at most one saved; qps <= 0
 * never gives one (its "fake never" limiter). Times are Unix seconds. */
struct nodehealth_limiter {
	double qps;
	double tokens;
	double last;
};

void nodehealth_limiter_init(struct nodehealth_limiter *l, double qps, double now);
/* Takes a token if there is one (1); else 0 with *wait the seconds until there is (a
 * large number for a limiter that gives none). */
int nodehealth_limiter_take(struct nodehealth_limiter *l, double now, double *wait);
/* kube's SwapLimiter: a new bucket at qps, full, unless the old one had no token then
 * (which empties the new one); nothing when qps is the same. */
void nodehealth_limiter_swap(struct nodehealth_limiter *l, double qps, double now);

/* --- zones ---------------------------------------------------------------------------- */

enum nodehealth_zone_state {
	ZONE_INITIAL,
	ZONE_NORMAL,
	ZONE_FULL_DISRUPTION,
	ZONE_PARTIAL_DISRUPTION,
};

const char *nodehealth_zone_state_name(enum nodehealth_zone_state s);

/* kube's ComputeZoneState: no Ready node of several: FullDisruption; more than 2 not
 * Ready and at least threshold of them: PartialDisruption; else Normal. */
enum nodehealth_zone_state nodehealth_zone_state(int nodes, int not_ready, double threshold);

struct nodehealth_zone {
	char *name;				/* "region:zone", or "" */
	enum nodehealth_zone_state state;
	struct nodehealth_limiter limiter;	/* paces its NoExecute taints */
	int nodes, not_ready;			/* at the last update */
};

struct nodehealth_zones {
	struct nodehealth_zone *v;
	int n;
	int all_disrupted;	/* every zone in FullDisruption: kube's "master disruption
				   mode", when it takes every NoExecute taint off and adds
				   none */
	double exited_at;	/* when that mode last ended (0: never): every node's grace
				   starts again then */
};

/* A zone's counts from one monitor pass. */
struct nodehealth_zone_count {
	const char *name;
	int nodes, not_ready;
};

enum {
	NODEHEALTH_ENTERED_DISRUPTION = 1,
	NODEHEALTH_EXITED_DISRUPTION = 2,
};

/*
 * One monitor pass over the zones (kube's handleDisruption): zones seen for the first time
 * start in Initial with a limiter at the eviction rate, zones with no node any more are
 * dropped, and each zone moves to its new state with the limiter that state has (Normal
 * and FullDisruption: the eviction rate; PartialDisruption: the secondary rate in a zone
 * of more than large_cluster_threshold nodes, else none) - but when every zone is fully
 * disrupted, every limiter stops and the zones stay so until one is not. Returns
 * NODEHEALTH_ENTERED_DISRUPTION or NODEHEALTH_EXITED_DISRUPTION when that mode begins or
 * ends, else 0.
 */
int nodehealth_zones_update(struct nodehealth_zones *z, const struct nodehealth_zone_count *c,
    int n, const struct nodehealth_params *p, double now);

/* The zone called name, or NULL. */
struct nodehealth_zone *nodehealth_zone_find(struct nodehealth_zones *z, const char *name);

/* The zone called name, made (in Initial, with a limiter at the eviction rate, as kube's
 * addPodEvictorForNewZone) when z has none. */
struct nodehealth_zone *nodehealth_zone_get(struct nodehealth_zones *z, const char *name,
    const struct nodehealth_params *p, double now);

void nodehealth_zones_clear(struct nodehealth_zones *z);

/* A node's zone as nodelifecycle_zones names it: "region:zone" from its labels, or "". */
char *nodehealth_zone_of(const cJSON *node);

#endif
