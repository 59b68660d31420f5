/*
 * nodehealth.c - the store-free rules of the node health monitor (nodehealth.h): the
 * conditions of a node gone silent, kube's zone states and its eviction rate limiters.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/nodehealth.h"
#include "json.h"
#include "timeutil.h"
#include "util.h"

/* --- a node gone silent --------------------------------------------------------------- */

/* The conditions the monitor sets Unknown, in the order kube appends missing ones;
 * NetworkUnavailable is the network plugin's, not the kubelet's, and stays. */
static const char *const silent_conditions[] = {
	"Ready", "MemoryPressure", "DiskPressure", "PIDPressure",
};

/* The condition of type in the array conditions, or NULL. */
static cJSON *
condition_find(const cJSON *conditions, const char *type)
{
	cJSON *c;

	cJSON_ArrayForEach(c, conditions) {
		if (strcmp(json_string(c, "type"), type) == 0)
			return c;
	}
	return NULL;
}

const cJSON *
nodehealth_ready(const cJSON *node)
{
	return condition_find(json_path(node, "status.conditions"), "Ready");
}

const char *
nodehealth_ready_status(const cJSON *node)
{
	const cJSON *ready = nodehealth_ready(node);

	return ready != NULL ? json_string(ready, "status") : NULL;
}

int
nodehealth_grace_passed(const cJSON *node, double probe_at, double now,
    const struct nodehealth_params *p)
{
	const cJSON *conditions = json_path(node, "status.conditions");
	const cJSON *ready = cJSON_IsArray(conditions) ? condition_find(conditions, "Ready") :
	    NULL;

	return now > probe_at + (ready != NULL ? p->monitor_grace : p->startup_grace);
}

double
nodehealth_next_check(const cJSON *node, double probe_at, double now,
    const struct nodehealth_params *p)
{
	const cJSON *conditions = json_path(node, "status.conditions");
	const cJSON *ready = cJSON_IsArray(conditions) ? condition_find(conditions, "Ready") :
	    NULL;
	double left = probe_at + (ready != NULL ? p->monitor_grace : p->startup_grace) - now;

	/* The grace has passed at the pass after now + left (passed means later than). */
	if (left < 0)
		left = 0;
	return (floor(left / p->monitor_period) + 1) * p->monitor_period;
}

int
nodehealth_mark_unknown(cJSON *node, double probe_at, double now,
    const struct nodehealth_params *p)
{
	cJSON *status = json_child_object(node, "status"), *conditions, *ready;
	char *before, *after, stamp[TIME_RFC3339_SIZE];
	const char *created = json_string(node, "metadata.creationTimestamp");
	double grace;
	int changed;

	conditions = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	if (!cJSON_IsArray(conditions)) {
		conditions = cJSON_CreateArray();
		json_set(status, "conditions", conditions);
	}
	ready = condition_find(conditions, "Ready");
	grace = ready != NULL ? p->monitor_grace : p->startup_grace;
	if (!(now > probe_at + grace))
		return 0;

	before = ready != NULL ? cJSON_PrintUnformatted(ready) : NULL;
	time_format_rfc3339((time_t)now, stamp);
	for (size_t i = 0; i < sizeof silent_conditions / sizeof silent_conditions[0]; i++) {
		cJSON *c = condition_find(conditions, silent_conditions[i]);

		if (c == NULL) {
			c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "type", silent_conditions[i]);
			cJSON_AddStringToObject(c, "status", "Unknown");
			cJSON_AddStringToObject(c, "lastHeartbeatTime", created);
			cJSON_AddStringToObject(c, "lastTransitionTime", stamp);
			cJSON_AddStringToObject(c, "reason", "NodeStatusNeverUpdated");
			cJSON_AddStringToObject(c, "message", "Kubelet never posted node status.");
			cJSON_AddItemToArray(conditions, c);
		} else if (strcmp(json_string(c, "status"), "Unknown") != 0) {
			json_set(c, "status", cJSON_CreateString("Unknown"));
			json_set(c, "reason", cJSON_CreateString("NodeStatusUnknown"));
			json_set(c, "message",
			    cJSON_CreateString("Kubelet stopped posting node status."));
			json_set(c, "lastTransitionTime", cJSON_CreateString(stamp));
		}
	}
	after = cJSON_PrintUnformatted(condition_find(conditions, "Ready"));
	changed = before == NULL || strcmp(before, after) != 0;
	free(before);
	free(after);
	return changed;
}

/* --- rate limiters -------------------------------------------------------------------- */

void
nodehealth_limiter_init(struct nodehealth_limiter *l, double qps, double now)
{
	l->qps = qps;
	l->tokens = qps > 0 ? 1 : 0;
	l->last = now;
}

/* Adds the tokens earned since the last look, up to the burst of one. */
static void
limiter_advance(struct nodehealth_limiter *l, double now)
{
	if (l->qps > 0 && now > l->last) {
		l->tokens += (now - l->last) * l->qps;
		if (l->tokens > 1)
			l->tokens = 1;
	}
	if (now > l->last)
		l->last = now;
}

int
nodehealth_limiter_take(struct nodehealth_limiter *l, double now, double *wait)
{
	if (l->qps <= 0) {
		*wait = 1e9;
		return 0;
	}
	limiter_advance(l, now);
	if (l->tokens >= 1) {
		l->tokens -= 1;
		*wait = 0;
		return 1;
	}
	*wait = (1 - l->tokens) / l->qps;
	return 0;
}

void
nodehealth_limiter_swap(struct nodehealth_limiter *l, double qps, double now)
{
	double wait;
	int had;

	if (l->qps == qps)
		return;
	had = nodehealth_limiter_take(l, now, &wait);
	nodehealth_limiter_init(l, qps, now);
	if (qps > 0 && !had)
		l->tokens = 0;
}

/* --- zones ---------------------------------------------------------------------------- */

const char *
nodehealth_zone_state_name(enum nodehealth_zone_state s)
{
	switch (s) {
	case ZONE_INITIAL:
		return "Initial";
	case ZONE_NORMAL:
		return "Normal";
	case ZONE_FULL_DISRUPTION:
		return "FullDisruption";
	case ZONE_PARTIAL_DISRUPTION:
		return "PartialDisruption";
	}
	return "?";
}

enum nodehealth_zone_state
nodehealth_zone_state(int nodes, int not_ready, double threshold)
{
	int ready = nodes - not_ready;

	if (ready == 0 && not_ready > 0)
		return ZONE_FULL_DISRUPTION;
	/* kube divides in float32: so does this, for the same answer at the boundary. */
	if (not_ready > 2 && (float)not_ready / (float)nodes >= (float)threshold)
		return ZONE_PARTIAL_DISRUPTION;
	return ZONE_NORMAL;
}

struct nodehealth_zone *
nodehealth_zone_find(struct nodehealth_zones *z, const char *name)
{
	for (int i = 0; i < z->n; i++) {
		if (strcmp(z->v[i].name, name) == 0)
			return &z->v[i];
	}
	return NULL;
}

/* The rate of zone state s for a zone of size nodes (kube's setLimiterInZone). */
static double
state_rate(enum nodehealth_zone_state s, int nodes, const struct nodehealth_params *p,
    double current)
{
	switch (s) {
	case ZONE_NORMAL:
	case ZONE_FULL_DISRUPTION:
		return p->eviction_rate;
	case ZONE_PARTIAL_DISRUPTION:
		return nodes > p->large_cluster_threshold ? p->secondary_eviction_rate : 0;
	case ZONE_INITIAL:
		break;
	}
	return current;
}

struct nodehealth_zone *
nodehealth_zone_get(struct nodehealth_zones *z, const char *name,
    const struct nodehealth_params *p, double now)
{
	struct nodehealth_zone *zone = nodehealth_zone_find(z, name);

	if (zone != NULL)
		return zone;
	z->v = xrealloc(z->v, ((size_t)z->n + 1) * sizeof *z->v);
	zone = &z->v[z->n++];
	memset(zone, 0, sizeof *zone);
	zone->name = xstrdup(name);
	zone->state = ZONE_INITIAL;
	nodehealth_limiter_init(&zone->limiter, p->eviction_rate, now);
	return zone;
}

static const struct nodehealth_zone_count *
count_find(const struct nodehealth_zone_count *c, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(c[i].name, name) == 0)
			return &c[i];
	}
	return NULL;
}

int
nodehealth_zones_update(struct nodehealth_zones *z, const struct nodehealth_zone_count *c,
    int n, const struct nodehealth_params *p, double now)
{
	enum nodehealth_zone_state *next = xcalloc((size_t)n + 1, sizeof *next);
	int all_are = 1, all_were = 1, rc = 0;

	/* Zones seen for the first time. */
	for (int i = 0; i < n; i++) {
		struct nodehealth_zone *zone = nodehealth_zone_get(z, c[i].name, p, now);

		zone->nodes = c[i].nodes;
		zone->not_ready = c[i].not_ready;
	}
	for (int i = 0; i < n; i++) {
		next[i] = nodehealth_zone_state(c[i].nodes, c[i].not_ready,
		    p->unhealthy_threshold);
		if (next[i] != ZONE_FULL_DISRUPTION)
			all_are = 0;
	}
	/* Were they all fully disrupted? Zones with no node left go (kube stops at the
	 * first zone that was not, and drops the rest at a later pass). */
	for (int i = 0; i < z->n;) {
		if (count_find(c, n, z->v[i].name) == NULL) {
			free(z->v[i].name);
			z->v[i] = z->v[--z->n];
			continue;
		}
		if (z->v[i].state != ZONE_FULL_DISRUPTION) {
			all_were = 0;
			break;
		}
		i++;
	}

	if (!all_are || !all_were) {
		for (int i = 0; i < z->n; i++) {
			struct nodehealth_zone *zone = &z->v[i];
			const struct nodehealth_zone_count *zc = count_find(c, n, zone->name);
			enum nodehealth_zone_state s;

			if (zc == NULL)
				continue;
			s = next[zc - c];
			if (all_are) {
				nodehealth_limiter_swap(&zone->limiter, 0, now);
				zone->state = ZONE_FULL_DISRUPTION;
			} else if (all_were || zone->state != s) {
				nodehealth_limiter_swap(&zone->limiter,
				    state_rate(s, zc->nodes, p, zone->limiter.qps), now);
				zone->state = s;
			}
		}
		if (all_are) {
			z->all_disrupted = 1;
			rc = NODEHEALTH_ENTERED_DISRUPTION;
		} else if (all_were) {
			z->all_disrupted = 0;
			z->exited_at = now;
			rc = NODEHEALTH_EXITED_DISRUPTION;
		}
	}
	free(next);
	return rc;
}

void
nodehealth_zones_clear(struct nodehealth_zones *z)
{
	for (int i = 0; i < z->n; i++)
		free(z->v[i].name);
	free(z->v);
	memset(z, 0, sizeof *z);
}

/* The value of label key of node, or NULL. */
static const char *
label(const cJSON *node, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(json_path(node, "metadata.labels"),
	    key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

char *
nodehealth_zone_of(const cJSON *node)
{
	const char *zone = label(node, "failure-domain.beta.kubernetes.io/zone");
	const char *region = label(node, "failure-domain.beta.kubernetes.io/region");

	if (zone == NULL)
		zone = label(node, "topology.kubernetes.io/zone");
	if (region == NULL)
		region = label(node, "topology.kubernetes.io/region");
	if (zone == NULL)
		zone = "";
	if (region == NULL)
		region = "";
	if (*zone == '\0' && *region == '\0')
		return xstrdup("");
	return xasprintf("%s:%s", region, zone);
}
