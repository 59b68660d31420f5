/*
 * nodelifecycle.c - the node lifecycle controller (kube's node-lifecycle-controller): a
 * node's taints and labels as its conditions and spec call for, and its health, watched
 * through its Lease and status.
 *
 * A key is a node's name. A sync, from the cache, does for one node what kube's node
 * update pass (doNoScheduleTaintingPass, reconcileNodeLabels), its health monitor
 * (monitorNodeHealth) and its NoExecute tainting pass do:
 *
 * 1. The node is not cached: nothing (it is gone; its write records are dropped).
 * 2. The cache has not caught up with this controller's last write to the node
 *    (consistency.c): wait, retry with backoff.
 * 3. Health. The handlers keep, in node_health (schema/014-nodehealth.sql), when the
 *    controller last saw the kubelet alive: its Ready heartbeat changed, or its Lease in
 *    kube-node-lease was renewed. Once that is longer ago than the grace period
 *    (--node-monitor-grace-period; --node-startup-grace-period for a node that never
 *    posted a Ready condition), its Ready, MemoryPressure, DiskPressure and PIDPressure
 *    conditions are set Unknown (nodehealth_mark_unknown) and the status is written, with
 *    the NodeNotReady event when Ready was True; the sync stops there, and the node's
 *    update brings it back. After a restart, ages count from the controller's start, as
 *    in kube, whose memory of them starts empty.
 * 4. Pods. While Ready is Unknown by this controller's hand (NodeStatusUnknown or
 *    NodeStatusNeverUpdated), each pod bound to the node whose Ready condition is not
 *    False is set Ready=False, with kube's NodeNotReady event on the pod. (kube does it
 *    at the transition, then for pods bound later; this does it at every pass while the
 *    node stays so, which ends in the same state and survives a failed write or a
 *    restart.)
 * 5. Taints, one patch for both effects. NoSchedule (TaintNodesByCondition): the taints
 *    the node's conditions and spec.unschedulable call for are added, stamped with the
 *    time, and those of the controller's keys it no longer needs removed (view
 *    nodelifecycle_noschedule_taints). NoExecute: a node Ready=False gets
 *    not-ready:NoExecute, one Ready=Unknown unreachable:NoExecute, each paced by its
 *    zone's rate limiter (--node-eviction-rate, one node per 10 s by default); a node
 *    that carries the other one swaps it at once; a Ready node loses both. Every other
 *    taint stays. As kube's PatchNodeTaints, the patch replaces spec.taints whole and
 *    carries the node's resourceVersion, so that a taint written meanwhile by someone
 *    else makes it fail (409) rather than be lost.
 * 6. The beta labels beta.kubernetes.io/os and /arch are set to the values of
 *    kubernetes.io/os and /arch when they differ or are missing (nodelifecycle_labels).
 * 7. The key is synced again after --node-monitor-period (5 s): each node's sync is its
 *    share of kube's periodic monitor pass. A Ready node, which has nothing to do until
 *    its kubelet has been silent past the grace period, comes back at the first of those
 *    passes that would find it so (its Lease renewed meanwhile, it is put off again); an
 *    update of the node brings it back at once. A node whose taint waits for its zone's
 *    limiter comes back when the limiter has a token.
 *
 * Zones: once per monitor period a sync counts the nodes of each zone and how many are
 * not Ready (view nodelifecycle_zones) and moves the zone states as kube's
 * handleDisruption does (nodehealth.c): Normal, PartialDisruption (at least
 * --unhealthy-zone-threshold not Ready, and more than 2: the secondary rate in a zone of
 * more than --large-cluster-size-threshold nodes, else no new taint), FullDisruption (none
 * Ready). When every zone is fully disrupted - the control plane more likely lost the
 * nodes than the nodes died - every NoExecute taint comes off and none is added until a
 * node is Ready again; then every node's grace period starts anew.
 *
 * The zone states, limiters and the nodes it has announced (RegisteredNode, once per node
 * per run, as kube) are the controller's memory, as in kube. kube runs 8 workers for its
 * node updates; this runs 8 for all of it.
 *
 * Its metrics are kube's node_collector_zone_size, _zone_health, _unhealthy_nodes_in_zone
 * (set at each count) and _evictions_total (a NoExecute taint added), by zone.
 *
 * A node is announced once per run (RegisteredNode, at its first sync) and when it is gone
 * (RemovingNode, at the sync its deletion brings), as kube's monitor pass announces the
 * nodes it finds added and deleted.
 *
 * kube's node_collector_update_node_health_duration_seconds times each node's sync with
 * the writes that follow it; node_collector_update_all_nodes_health_duration_seconds, once
 * per monitor period, the sum of that period's node updates (kube times its one pass over
 * every node; here each node's update is its own sync, spread over the period).
 *
 * Left for later: kube's quirk of re-queueing a node already tainted, which spends its
 * zone's tokens again.
 * The taint-eviction controller (the pods a NoExecute taint evicts) is another controller.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consistency.h"
#include "controllers/nodehealth.h"
#include "controllers/nodelifecycle.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

#define TAINT_NOT_READY "node.kubernetes.io/not-ready"
#define TAINT_UNREACHABLE "node.kubernetes.io/unreachable"
#define NODE_LEASE_NAMESPACE "kube-node-lease"

enum {
	STMT_NODE,
	STMT_TAINTS,
	STMT_LABELS,
	STMT_KEYS,
	STMT_HEALTH,
	STMT_ZONES,
	STMT_PODS,
	STMT_SEEN_NODE,
	STMT_SEEN_LEASE,
	STMT_FORGET,
	STMT_COUNT
};

static const char *const nodelifecycle_sql[STMT_COUNT] = {
	/* Node ?1 if cached: its uid and body. */
	[STMT_NODE] =
	    "SELECT uid, body FROM cache_objects"
	    " WHERE resource = 'nodes' AND namespace = '' AND name = ?1",
	/* The NoSchedule taints of node ?1 to add (wanted, in kube's order) or remove. */
	[STMT_TAINTS] =
	    "SELECT taint_key, wanted FROM nodelifecycle_noschedule_taints"
	    " WHERE node = ?1 AND wanted <> present ORDER BY wanted, position, taint_key",
	/* The beta labels to set on node ?1. */
	[STMT_LABELS] =
	    "SELECT label, value FROM nodelifecycle_labels WHERE node = ?1 ORDER BY label",
	/* Every cached node. */
	[STMT_KEYS] =
	    "SELECT name FROM cache_objects WHERE resource = 'nodes' AND namespace = ''"
	    " ORDER BY name",
	/* When node ?1's kubelet was last seen alive, and whether it ever was. */
	[STMT_HEALTH] =
	    "SELECT probe_at, heartbeat IS NOT NULL OR lease_renew IS NOT NULL"
	    " FROM node_health WHERE node = ?1",
	/* Each zone's nodes and those not Ready. */
	[STMT_ZONES] =
	    "SELECT zone, nodes, not_ready FROM nodelifecycle_zones ORDER BY zone",
	/* The pods bound to node ?1 that have a Ready condition. */
	[STMT_PODS] =
	    "SELECT namespace, name, uid, body FROM cache_pods"
	    " WHERE node_name = ?1 AND ready IS NOT NULL ORDER BY namespace, name",
	/* Node ?1 seen with Ready heartbeat ?2 (NULL: no Ready condition): a new row
	 * probed at ?3, an old one at ?4 when the heartbeat moved. */
	[STMT_SEEN_NODE] =
	    ("INSERT INTO node_health (node, heartbeat, probe_at) VALUES (?1, ?2, ?3)"
	    " ON CONFLICT (node) DO UPDATE SET heartbeat = excluded.heartbeat, probe_at = ?4"
	    " WHERE heartbeat IS NOT excluded.heartbeat"),
	/* Node ?1's Lease seen renewed at ?2, at ?3: a sign of life when later. */
	[STMT_SEEN_LEASE] =
	    ("INSERT INTO node_health (node, lease_renew, probe_at) VALUES (?1, ?2, ?3)"
	    " ON CONFLICT (node) DO UPDATE SET lease_renew = excluded.lease_renew,"
	    " probe_at = excluded.probe_at"
	    " WHERE lease_renew IS NULL OR excluded.lease_renew > lease_renew"),
	[STMT_FORGET] =
	    "DELETE FROM node_health WHERE node = ?1",
};

/* A node announced: its name (first: name_cmp reads it) and uid, for RemovingNode. */
struct registered {
	char *name;
	char *uid;
};

struct nodelifecycle_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *nodes, *pods;
	struct nodehealth_params params;
	struct nodehealth_zones zones;
	double zones_at;	/* when the zones were last counted; 0: never */
	double started;		/* the first sync's time: ages count from it */
	struct registered *registered;	/* the nodes announced (RegisteredNode), by name */
	int nregistered;
	/* kube's node_collector_* metrics, by zone; NULL without a registry (plan, replay). */
	struct metrics_family *zone_size, *zone_health, *unhealthy, *evictions;
	/* kube's update duration histograms, and the node updates of the monitor period
	 * under way: how many, and the seconds they took in all. */
	struct metrics_series *node_health_duration, *all_nodes_health_duration;
	int period_updates;
	double period_seconds;
};

/* --- the nodes announced --------------------------------------------------------------- */

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds name (of uid) to the nodes announced; 1 when it was not there yet. */
static int
registered_add(struct nodelifecycle_state *st, const char *name, const char *uid)
{
	int lo = 0, hi = st->nregistered;

	while (lo < hi) {
		int mid = (lo + hi) / 2, c = strcmp(st->registered[mid].name, name);

		if (c == 0)
			return 0;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	st->registered = xrealloc(st->registered,
	    ((size_t)st->nregistered + 1) * sizeof *st->registered);
	memmove(&st->registered[lo + 1], &st->registered[lo],
	    (size_t)(st->nregistered - lo) * sizeof *st->registered);
	st->registered[lo].name = xstrdup(name);
	st->registered[lo].uid = xstrdup(uid);
	st->nregistered++;
	return 1;
}

/* Removes name from the nodes announced; returns its uid (malloc'd), or NULL when it was
 * not announced. */
static char *
registered_remove(struct nodelifecycle_state *st, const char *name)
{
	struct registered *hit = st->nregistered == 0 ? NULL : bsearch(&name, st->registered,
	    (size_t)st->nregistered, sizeof *st->registered, name_cmp);
	char *uid;

	if (hit == NULL)
		return NULL;
	free(hit->name);
	uid = hit->uid;
	memmove(hit, hit + 1, (size_t)(&st->registered[st->nregistered] - (hit + 1)) *
	    sizeof *hit);
	st->nregistered--;
	return uid;
}

/* --- zones ----------------------------------------------------------------------------- */

/* Sets zone's gauges to its counts (kube's handleDisruption): a zone without nodes is 0
 * nodes, 100 % healthy. */
static void
zone_gauges(struct nodelifecycle_state *st, const char *zone, int nodes, int not_ready)
{
	const char *labels[] = { zone, NULL };

	if (st->zone_size == NULL)
		return;
	metrics_gauge_set(metrics_series_get(st->zone_size, labels), nodes);
	metrics_gauge_set(metrics_series_get(st->unhealthy, labels), not_ready);
	metrics_gauge_set(metrics_series_get(st->zone_health, labels),
	    nodes > 0 ? 100.0 * (nodes - not_ready) / nodes : 100);
}

/* Counts the zones again when a monitor period has passed since the last count. */
static int
zones_refresh(struct controller *c, double now, char **error)
{
	struct nodelifecycle_state *st = c->state;
	sqlite3_stmt *stmt;
	struct nodehealth_zone_count *counts = NULL;
	int n = 0, rc;

	if (st->zones_at > 0 && now < st->zones_at + st->params.monitor_period)
		return 0;
	stmt = controller_stmt(st->stmt[STMT_ZONES]);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		counts = xrealloc(counts, ((size_t)n + 1) * sizeof *counts);
		counts[n].name = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		counts[n].nodes = sqlite3_column_int(stmt, 1);
		counts[n].not_ready = sqlite3_column_int(stmt, 2);
		n++;
	}
	sqlite3_reset(stmt);
	if (rc == SQLITE_DONE) {
		st->zones_at = now;
		/* A monitor period ends: what its node updates took, one after the other. */
		if (st->all_nodes_health_duration != NULL && st->period_updates > 0)
			metrics_histogram_observe(st->all_nodes_health_duration,
			    st->period_seconds);
		st->period_updates = 0;
		st->period_seconds = 0;
		for (int i = 0; i < st->zones.n; i++)
			zone_gauges(st, st->zones.v[i].name, 0, 0);	/* gone, unless counted */
		for (int i = 0; i < n; i++)
			zone_gauges(st, counts[i].name, counts[i].nodes, counts[i].not_ready);
		switch (nodehealth_zones_update(&st->zones, counts, n, &st->params, now)) {
		case NODEHEALTH_ENTERED_DISRUPTION:
			log_warning("nodelifecycle: no node of any zone is Ready: taking every "
			    "NoExecute taint off and adding none until one is");
			break;
		case NODEHEALTH_EXITED_DISRUPTION:
			log_info("nodelifecycle: some nodes are Ready again: tainting resumes, "
			    "every node's grace period starts now");
			break;
		}
	}
	for (int i = 0; i < n; i++)
		free((char *)counts[i].name);
	free(counts);
	if (rc != SQLITE_DONE)
		return error_set(error, "nodelifecycle: counting the zones: %s",
		    sqlite3_errmsg(store_db(c->store)));
	return 0;
}

/* The zone of node, made when the last count did not have it (a node new since, or one
 * left out of the disruption checks), as kube gives every zone an evictor. */
static struct nodehealth_zone *
zone_for(struct nodelifecycle_state *st, const cJSON *node, double now)
{
	char *name = nodehealth_zone_of(node);
	struct nodehealth_zone *z = nodehealth_zone_get(&st->zones, name, &st->params, now);

	free(name);
	return z;
}

/* --- writes ---------------------------------------------------------------------------- */

/* Appends a write of node name (uid) with body (taken) to r's writes. */
static struct action *
node_write(struct sync_result *r, enum action_type type, const struct resource *nodes,
    const char *name, const char *uid, cJSON *body, const char *verb, char *reason)
{
	struct action *a = action_append(&r->writes, &r->nwrites);

	a->type = type;
	a->verb = verb;
	a->resource = nodes;
	a->namespace = xstrdup("");
	a->name = xstrdup(name);
	a->uid = xstrdup(uid);
	a->body = body;
	a->reason = reason;
	return a;
}

/* A taint to add or remove. */
struct taint_change {
	char *key;
	const char *effect;
	int add;
};

static void
change_add(struct taint_change **v, int *n, const char *key, const char *effect, int add)
{
	*v = xrealloc(*v, ((size_t)*n + 1) * sizeof **v);
	(*v)[*n].key = xstrdup(key);
	(*v)[*n].effect = effect;
	(*v)[*n].add = add;
	(*n)++;
}

/* True when taint t has key and effect. */
static int
taint_is(const cJSON *t, const char *key, const char *effect)
{
	return strcmp(json_string(t, "key"), key) == 0 &&
	    strcmp(json_string(t, "effect"), effect) == 0;
}

/* True when node carries the taint of key and effect. */
static int
node_has_taint(const cJSON *node, const char *key, const char *effect)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, json_path(node, "spec.taints")) {
		if (taint_is(t, key, effect))
			return 1;
	}
	return 0;
}

/* The NoSchedule changes the rows of stmt (taint_key, wanted) call for. */
static void
noschedule_changes(sqlite3_stmt *stmt, struct taint_change **v, int *n)
{
	while (sqlite3_step(stmt) == SQLITE_ROW)
		change_add(v, n, (const char *)sqlite3_column_text(stmt, 0), "NoSchedule",
		    sqlite3_column_int(stmt, 1));
	sqlite3_reset(stmt);
}

/*
 * The NoExecute changes for node, whose Ready condition's status is ready (NULL: none):
 * kube's processTaintBaseEviction and its tainting pass. A taint to add waits for a token
 * of the node's zone; *retry is then when to look again.
 */
static void
noexecute_changes(struct nodelifecycle_state *st, const cJSON *node, const char *ready,
    double now, struct taint_change **v, int *n, double *retry)
{
	int has_not_ready = node_has_taint(node, TAINT_NOT_READY, "NoExecute");
	int has_unreachable = node_has_taint(node, TAINT_UNREACHABLE, "NoExecute");
	const char *want, *other;
	int has_want, has_other;
	double wait;

	if (st->zones.all_disrupted || (ready != NULL && strcmp(ready, "True") == 0)) {
		if (has_not_ready)
			change_add(v, n, TAINT_NOT_READY, "NoExecute", 0);
		if (has_unreachable)
			change_add(v, n, TAINT_UNREACHABLE, "NoExecute", 0);
		return;
	}
	if (ready == NULL)
		return;		/* never posted: the monitor makes it Unknown first */
	if (strcmp(ready, "False") == 0) {
		want = TAINT_NOT_READY, other = TAINT_UNREACHABLE;
		has_want = has_not_ready, has_other = has_unreachable;
	} else {
		want = TAINT_UNREACHABLE, other = TAINT_NOT_READY;
		has_want = has_unreachable, has_other = has_not_ready;
	}
	if (has_want && !has_other)
		return;
	/* Swapping one for the other needs no token; a first one does. */
	if (!has_other && !has_want &&
	    !nodehealth_limiter_take(&zone_for(st, node, now)->limiter, now, &wait)) {
		if (*retry <= 0 || wait < *retry)
			*retry = wait;
		return;
	}
	if (!has_want)
		change_add(v, n, want, "NoExecute", 1);
	if (has_other)
		change_add(v, n, other, "NoExecute", 0);
}

/* The taint patch of node (cached body) for the changes v at now; NULL when none. *why
 * says what (malloc'd). */
static cJSON *
taint_patch(const cJSON *node, const struct taint_change *v, int n, double now, char **why)
{
	const cJSON *t;
	char stamp[TIME_RFC3339_SIZE];
	cJSON *patch, *taints, *meta, *spec;
	struct buf reason;

	if (n == 0)
		return NULL;
	/* The taints the node has, but those removed; then those added, in order. */
	taints = cJSON_CreateArray();
	cJSON_ArrayForEach(t, json_path(node, "spec.taints")) {
		int removed = 0;

		for (int i = 0; i < n && !removed; i++)
			removed = !v[i].add && taint_is(t, v[i].key, v[i].effect);
		if (!removed)
			cJSON_AddItemToArray(taints, cJSON_Duplicate(t, 1));
	}
	time_format_rfc3339((time_t)now, stamp);
	buf_init(&reason);
	for (int i = 0; i < n; i++) {
		if (v[i].add) {
			cJSON *taint = cJSON_CreateObject();

			cJSON_AddStringToObject(taint, "key", v[i].key);
			cJSON_AddStringToObject(taint, "effect", v[i].effect);
			cJSON_AddStringToObject(taint, "timeAdded", stamp);
			cJSON_AddItemToArray(taints, taint);
		}
	}
	for (int pass = 1; pass >= 0; pass--) {
		for (int i = 0; i < n; i++) {
			if (v[i].add == pass)
				buf_printf(&reason, "%s%c%s:%s", reason.len > 0 ? ", " : "",
				    pass ? '+' : '-', v[i].key, v[i].effect);
		}
	}

	patch = cJSON_CreateObject();
	meta = cJSON_AddObjectToObject(patch, "metadata");
	cJSON_AddStringToObject(meta, "resourceVersion",
	    json_string(node, "metadata.resourceVersion"));
	spec = cJSON_AddObjectToObject(patch, "spec");
	if (cJSON_GetArraySize(taints) > 0) {
		cJSON_AddItemToObject(spec, "taints", taints);
	} else {
		cJSON_Delete(taints);
		cJSON_AddNullToObject(spec, "taints");
	}
	*why = xasprintf("the node's conditions and spec call for %s", reason.data);
	buf_free(&reason);
	return patch;
}

/* The label patch from rows of stmt (label, value); NULL when none. */
static cJSON *
label_patch(sqlite3_stmt *stmt, char **why)
{
	cJSON *patch = NULL, *labels = NULL;
	struct buf reason;

	buf_init(&reason);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *label = (const char *)sqlite3_column_text(stmt, 0);
		const char *value = (const char *)sqlite3_column_text(stmt, 1);

		if (patch == NULL) {
			patch = cJSON_CreateObject();
			labels = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch,
			    "metadata"), "labels");
		}
		cJSON_AddStringToObject(labels, label, value != NULL ? value : "");
		buf_printf(&reason, "%s%s=%s", reason.len > 0 ? ", " : "", label,
		    value != NULL ? value : "");
	}
	sqlite3_reset(stmt);
	if (patch != NULL)
		*why = xasprintf("the beta labels follow the stable ones: %s", reason.data);
	buf_free(&reason);
	return patch;
}

/*
 * Appends the status writes that set Ready=False on each pod of node name whose Ready
 * condition is not False yet (kube's MarkPodsNotReady): each is tried whatever the others
 * do, and each done one gets kube's Warning NodeNotReady event.
 */
static int
mark_pods(struct controller *c, const char *name, double now, struct sync_result *out,
    char **error)
{
	struct nodelifecycle_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_PODS]);
	char stamp[TIME_RFC3339_SIZE];
	int rc;

	time_format_rfc3339((time_t)now, stamp);
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cJSON *pod = controller_column_json(stmt, 3), *cond, *ready = NULL;
		struct action *a;

		cJSON_ArrayForEach(cond, json_path(pod, "status.conditions")) {
			if (strcmp(json_string(cond, "type"), "Ready") == 0) {
				ready = cond;
				break;
			}
		}
		if (ready == NULL || strcmp(json_string(ready, "status"), "False") == 0) {
			cJSON_Delete(pod);
			continue;
		}
		json_set(ready, "status", cJSON_CreateString("False"));
		json_set(ready, "lastTransitionTime", cJSON_CreateString(stamp));
		a = action_append(&out->writes, &out->nwrites);
		a->type = ACTION_UPDATE_STATUS;
		a->verb = "mark-not-ready";
		a->resource = st->pods;
		a->namespace = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		a->name = xstrdup((const char *)sqlite3_column_text(stmt, 1));
		a->uid = xstrdup((const char *)sqlite3_column_text(stmt, 2));
		a->body = pod;
		a->reason = xasprintf("its node %s is not ready", name);
		a->failure_goes_on = 1;
		a->failure_stops_nothing = 1;
		a->event_on_target = 1;
		a->done_type = "Warning";
		a->done_reason = "NodeNotReady";
		a->done_message = xstrdup("Node is not ready");
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "nodelifecycle: reading the pods of node %s: %s", name,
		    sqlite3_errmsg(store_db(c->store)));
	return 0;
}

/* When the kubelet of node (cached body) was last seen alive, as kube's monitor counts
 * it. */
static int
probe_time(struct controller *c, const char *name, const cJSON *node, double *probe,
    char **error)
{
	struct nodelifecycle_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_HEALTH]);
	int rc, has_ready = nodehealth_ready_status(node) != NULL;
	time_t created = 0;

	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*probe = sqlite3_column_double(stmt, 0);
		if (has_ready || sqlite3_column_int(stmt, 1))
			*probe = *probe > st->started ? *probe : st->started;
	} else if (has_ready ||
	    time_parse_rfc3339(json_string(node, "metadata.creationTimestamp"), &created) != 0) {
		*probe = st->started;
	} else {
		*probe = (double)created;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "nodelifecycle: reading the health of node %s: %s", name,
		    sqlite3_errmsg(store_db(c->store)));
	if (st->zones.exited_at > *probe)
		*probe = st->zones.exited_at;
	return 0;
}

/* --- sync ------------------------------------------------------------------------------ */

static int
nodelifecycle_sync(struct controller *c, const char *key, double now,
    struct sync_result *out, char **error)
{
	struct nodelifecycle_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_NODE]);
	const char *ready, *reason;
	struct taint_change *changes = NULL;
	int rc, nchanges = 0;
	double probe = 0, retry = 0;
	char *why = NULL;
	cJSON *node = NULL, *patch;

	if (st->started == 0)
		st->started = now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->nodes;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		node = controller_column_json(stmt, 1);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "nodelifecycle: reading node %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_DONE) {
		/* Gone: nothing to do, nothing to wait for any more; a node announced is
		 * announced gone (kube's RemovingNode, on the node as it was). */
		char *uid = registered_remove(st, key);

		if (uid != NULL) {
			cJSON *meta;

			out->owner = cJSON_CreateObject();
			cJSON_AddStringToObject(out->owner, "apiVersion", "v1");
			cJSON_AddStringToObject(out->owner, "kind", "Node");
			meta = cJSON_AddObjectToObject(out->owner, "metadata");
			cJSON_AddStringToObject(meta, "name", key);
			cJSON_AddStringToObject(meta, "uid", uid);
			sync_result_add_event(out, "Normal", "RemovingNode",
			    xasprintf("Node %s event: Removing Node %s from Controller", key,
			    key));
			free(uid);
		}
		out->forget_expectations = 1;
		return 0;
	}
	if (node == NULL)
		return error_set(error, "nodelifecycle: node %s: the cached body is not JSON", key);
	out->owner = node;
	if ((rc = controller_caught_up(c, key, out->owner_uid, out, error)) <= 0)
		return rc;
	if (zones_refresh(c, now, error) != 0)
		return -1;
	if (registered_add(st, key, out->owner_uid))
		sync_result_add_event(out, "Normal", "RegisteredNode",
		    xasprintf("Node %s event: Registered Node %s in Controller", key, key));
	out->requeue_after = st->params.monitor_period;

	/* Health: a silent kubelet's conditions go Unknown; the taints follow at the sync
	 * the status update brings. */
	if (probe_time(c, key, node, &probe, error) != 0)
		return -1;
	ready = nodehealth_ready_status(node);
	/* The copy the Unknown conditions are written in is made only past the grace
	 * period: the other syncs, nearly all of them, would throw it away. */
	if (nodehealth_grace_passed(node, probe, now, &st->params)) {
		cJSON *updated = cJSON_Duplicate(node, 1);
		int was_ready = ready != NULL && strcmp(ready, "True") == 0;

		if (nodehealth_mark_unknown(updated, probe, now, &st->params)) {
			node_write(out, ACTION_UPDATE_STATUS, st->nodes, key, out->owner_uid,
			    updated, "mark-unknown", xasprintf("no sign of life from its "
			    "kubelet for %.0f s (grace %.0f s): Ready and the pressure "
			    "conditions are Unknown", now - probe, ready != NULL ?
			    st->params.monitor_grace : st->params.startup_grace));
			if (was_ready)
				sync_result_add_event(out, "Normal", "NodeNotReady",
				    xasprintf("Node %s status is now: NodeNotReady", key));
			return mark_pods(c, key, now, out, error);
		}
		cJSON_Delete(updated);
	}
	reason = json_string(nodehealth_ready(node), "reason");
	if (ready != NULL && strcmp(ready, "Unknown") == 0 &&
	    (strcmp(reason, "NodeStatusUnknown") == 0 ||
	    strcmp(reason, "NodeStatusNeverUpdated") == 0) &&
	    mark_pods(c, key, now, out, error) != 0)
		return -1;

	stmt = controller_stmt(st->stmt[STMT_TAINTS]);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	noschedule_changes(stmt, &changes, &nchanges);
	noexecute_changes(st, node, ready, now, &changes, &nchanges, &retry);
	if ((patch = taint_patch(node, changes, nchanges, now, &why)) != NULL) {
		struct action *a = node_write(out, ACTION_PATCH, st->nodes, key, out->owner_uid,
		    patch, "taint", why);

		/* kube counts a NoExecute taint added as an eviction of its zone. */
		for (int i = 0; i < nchanges && st->evictions != NULL; i++) {
			if (changes[i].add && strcmp(changes[i].effect, "NoExecute") == 0) {
				char *zone = nodehealth_zone_of(node);
				const char *labels[] = { zone, NULL };

				a->count_done = metrics_series_get(st->evictions, labels);
				free(zone);
				break;
			}
		}
	}
	for (int i = 0; i < nchanges; i++)
		free(changes[i].key);
	free(changes);
	/* A Ready node has nothing to do until its grace passes, unless it changes (its
	 * update brings it back): it is looked at again at the monitor pass that would find
	 * the grace passed, one of the passes every monitor period from now, as kube's would.
	 * The others, whose pods and NoExecute taints the passes follow, every period. */
	if (ready != NULL && strcmp(ready, "True") == 0 && retry == 0)
		out->requeue_after = nodehealth_next_check(node, probe, now, &st->params);
	if (retry > 0 && retry < out->requeue_after)
		out->requeue_after = retry;

	stmt = controller_stmt(st->stmt[STMT_LABELS]);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	if ((patch = label_patch(stmt, &why)) != NULL)
		node_write(out, ACTION_PATCH, st->nodes, key, out->owner_uid, patch, "label", why);
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

/* Steps a handler's statement, which logs what fails: a lost sign of life only delays
 * the monitor's view to the next one. */
static void
handler_step(struct controller *c, sqlite3_stmt *stmt, const char *what, const char *name)
{
	if (sqlite3_step(stmt) != SQLITE_DONE)
		log_error("nodelifecycle: recording %s of node %s: %s", what, name,
		    sqlite3_errmsg(store_db(c->store)));
	sqlite3_reset(stmt);
}

/* Records what node (a Node) shows of its kubelet at now. */
static void
seen_node(struct controller *c, const cJSON *node, const char *name, double now)
{
	struct nodelifecycle_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_SEEN_NODE]);
	const cJSON *ready = nodehealth_ready(node);
	/* A Ready condition without a heartbeat has the empty one, which never moves. */
	const char *heartbeat = ready != NULL ? json_string(ready, "lastHeartbeatTime") : NULL;
	time_t created;
	double first = now;

	/* A node first seen without a Ready condition counts from its creation. */
	if (heartbeat == NULL &&
	    time_parse_rfc3339(json_string(node, "metadata.creationTimestamp"), &created) == 0)
		first = (double)created;
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	if (heartbeat != NULL)
		sqlite3_bind_text(stmt, 2, heartbeat, -1, SQLITE_STATIC);
	sqlite3_bind_double(stmt, 3, first);
	sqlite3_bind_double(stmt, 4, now);
	handler_step(c, stmt, "the heartbeat", name);
}

static void
nodelifecycle_handle_event(struct controller *c, const struct informer_event *ev,
    double now, const struct controller_queue *q)
{
	struct nodelifecycle_state *st = c->state;
	const char *name = json_string(ev->object, "metadata.name");
	sqlite3_stmt *stmt;

	if (*name == '\0')
		return;
	if (strcmp(ev->resource->name, "leases") == 0) {
		const char *renew = json_string(ev->object, "spec.renewTime");

		if (ev->type == INFORMER_DELETED || *renew == '\0' ||
		    strcmp(json_string(ev->object, "metadata.namespace"),
		    NODE_LEASE_NAMESPACE) != 0)
			return;
		stmt = controller_stmt(st->stmt[STMT_SEEN_LEASE]);
		sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 2, renew, -1, SQLITE_STATIC);
		sqlite3_bind_double(stmt, 3, now);
		handler_step(c, stmt, "the lease", name);
		return;
	}
	if (strcmp(ev->resource->name, "nodes") != 0)
		return;
	if (ev->type == INFORMER_DELETED) {
		stmt = controller_stmt(st->stmt[STMT_FORGET]);
		sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
		handler_step(c, stmt, "the deletion", name);
	} else {
		seen_node(c, ev->object, name, now);
	}
	q->add(name, q->arg);
}

static int
nodelifecycle_list_keys(struct controller *c, void (*cb)(const char *key, void *arg),
    void *arg, char **error)
{
	struct nodelifecycle_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "nodelifecycle", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

/* Registers kube's node_collector_* metrics of the zones. */
static int
register_metrics(struct nodelifecycle_state *st, struct metrics_registry *registry,
    char **error)
{
	static const char *const labels[] = { "zone", NULL };
	static const struct metrics_spec specs[] = {
		{ METRICS_GAUGE, "node_collector_zone_size",
		    "Gauge measuring number of registered Nodes per zones.", labels, NULL, 0 },
		{ METRICS_GAUGE, "node_collector_zone_health",
		    "Gauge measuring percentage of healthy nodes per zone.", labels, NULL, 0 },
		{ METRICS_GAUGE, "node_collector_unhealthy_nodes_in_zone",
		    "Gauge measuring number of not Ready Nodes per zones.", labels, NULL, 0 },
		{ METRICS_COUNTER, "node_collector_evictions_total",
		    "Number of Node evictions that happened since current instance of "
		    "NodeController started.", labels, NULL, 0 },
	};
	struct metrics_family **families[] = { &st->zone_size, &st->zone_health,
	    &st->unhealthy, &st->evictions };
	/* kube's buckets: 1 ms to about 16 s, and 10 ms to about 2.7 min, by fours. */
	static const double node_buckets[] = { 0.001, 0.004, 0.016, 0.064, 0.256, 1.024,
	    4.096, 16.384 };
	static const double all_buckets[] = { 0.01, 0.04, 0.16, 0.64, 2.56, 10.24, 40.96,
	    163.84 };
	static const struct metrics_spec node_spec = { METRICS_HISTOGRAM,
	    "node_collector_update_node_health_duration_seconds",
	    "[ALPHA] Seconds one node's health update took: its sync and the writes that "
	    "followed.", NULL, node_buckets, 8 };
	static const struct metrics_spec all_spec = { METRICS_HISTOGRAM,
	    "node_collector_update_all_nodes_health_duration_seconds",
	    "[ALPHA] Seconds the health updates of every node took in one monitor period, "
	    "added up.", NULL, all_buckets, 8 };
	struct metrics_family *f;

	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		if ((*families[i] = metrics_family_register(registry, &specs[i], error)) == NULL)
			return -1;
	}
	if ((f = metrics_family_register(registry, &node_spec, error)) == NULL)
		return -1;
	st->node_health_duration = metrics_series_get(f, NULL);
	if ((f = metrics_family_register(registry, &all_spec, error)) == NULL)
		return -1;
	st->all_nodes_health_duration = metrics_series_get(f, NULL);
	return 0;
}

/* A node's update has ended (in the daemon): kube's duration histograms. kube times each
 * node's update in its monitor pass, and the whole pass; here each node's update is its
 * own sync, spread over the monitor period, so the whole is the sum of the period's
 * updates, observed when the next period's zones are counted. */
static void
nodelifecycle_processed(struct controller *c, const char *key, double seconds, int failed)
{
	struct nodelifecycle_state *st = c->state;

	(void)key;
	(void)failed;
	if (st->node_health_duration == NULL || seconds < 0)
		return;
	metrics_histogram_observe(st->node_health_duration, seconds);
	st->period_updates++;
	st->period_seconds += seconds;
}

static int
nodelifecycle_init(struct controller *c, char **error)
{
	struct nodelifecycle_state *st = xcalloc(1, sizeof *st);
	struct nodehealth_params *p = &st->params;

	c->state = st;
	st->nodes = resource_find("nodes");
	st->pods = resource_find("pods");
	if (st->nodes == NULL || st->pods == NULL)
		return error_set(error, "nodelifecycle: nodes or pods is not a known resource");
	p->monitor_period = controller_flag_seconds(c, "node-monitor-period");
	p->monitor_grace = controller_flag_seconds(c, "node-monitor-grace-period");
	p->startup_grace = controller_flag_seconds(c, "node-startup-grace-period");
	p->eviction_rate = controller_flag_number(c, "node-eviction-rate");
	p->secondary_eviction_rate = controller_flag_number(c, "secondary-node-eviction-rate");
	p->large_cluster_threshold = controller_flag_int(c, "large-cluster-size-threshold");
	p->unhealthy_threshold = controller_flag_number(c, "unhealthy-zone-threshold");
	if (p->monitor_period <= 0)
		return error_set(error, "--node-monitor-period must be more than 0s");
	if (c->config->metrics != NULL && register_metrics(st, c->config->metrics, error) != 0)
		return -1;
	return store_prepare_statements(store_db(c->store), nodelifecycle_sql, STMT_COUNT,
	    st->stmt, "nodelifecycle", error);
}

static void
nodelifecycle_fini(struct controller *c)
{
	struct nodelifecycle_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	nodehealth_zones_clear(&st->zones);
	for (int i = 0; i < st->nregistered; i++) {
		free(st->registered[i].name);
		free(st->registered[i].uid);
	}
	free(st->registered);
	free(st);
	c->state = NULL;
}

static const char *const nodelifecycle_resources[] = { "nodes", "leases", "pods", NULL };

static const struct controller_flag nodelifecycle_flags[] = {
	{ "node-monitor-period", CONTROLLER_FLAG_DURATION, "5s", 0, 0,
	    "how often each node's health is looked at (kube's monitor pass)" },
	{ "node-monitor-grace-period", CONTROLLER_FLAG_DURATION, "50s", 0, 0,
	    "how long a kubelet may stay silent before its node is Unknown" },
	{ "node-startup-grace-period", CONTROLLER_FLAG_DURATION, "1m0s", 0, 0,
	    "the same for a node that never posted a Ready condition" },
	{ "node-eviction-rate", CONTROLLER_FLAG_NUMBER, "0.1", 0, 1000000,
	    "nodes per second that get a NoExecute taint, per healthy zone" },
	{ "secondary-node-eviction-rate", CONTROLLER_FLAG_NUMBER, "0.01", 0, 1000000,
	    "the same in a partially disrupted zone larger than "
	    "--large-cluster-size-threshold (smaller ones: none)" },
	{ "large-cluster-size-threshold", CONTROLLER_FLAG_INT, "50", 0, 2147483647,
	    "the nodes a zone needs for the secondary rate (fewer: no taint while "
	    "disrupted)" },
	{ "unhealthy-zone-threshold", CONTROLLER_FLAG_NUMBER, "0.55", 0, 1,
	    "the fraction of a zone's nodes (at least 3) not Ready that makes it "
	    "partially disrupted" },
	{ NULL, CONTROLLER_FLAG_STRING, NULL, 0, 0, NULL },
};

const struct controller_type nodelifecycle_controller_type = {
	.name = "nodelifecycle",
	.resources = nodelifecycle_resources,
	.default_workers = 8,		/* kube's UpdateWorkerSize; no flag */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = nodelifecycle_flags,
	.event_component = "node-controller",
	.client_name = "node-controller",
	.recovery = NULL,
	.init = nodelifecycle_init,
	.fini = nodelifecycle_fini,
	.handle_event = nodelifecycle_handle_event,
	.list_keys = nodelifecycle_list_keys,
	.sync = nodelifecycle_sync,
	.processed = nodelifecycle_processed,
};
