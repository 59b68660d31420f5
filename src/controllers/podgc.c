/*
 * podgc.c - the pod garbage collector: force-deletes the pods no one else will remove.
 *
 * It follows kube-controller-manager's podgc controller rule for rule. Its views
 * (schema/009-podgc.sql) say which pods go and why, with kube's reasons:
 *
 *   terminated      with --terminated-pod-gc-threshold T > 0, the terminated pods past
 *                   the first T, evicted ones first, then the oldest (podgc_terminated)
 *   out-of-service  being deleted on a node that is not Ready and carries the
 *                   node.kubernetes.io/out-of-service taint
 *   orphaned        bound to a node that does not exist
 *   unscheduled     being deleted and bound to no node
 *
 * kube runs the four rules over every pod every 20 seconds, in that order, and deletes the
 * terminated ones all at once. Here a key is a pod ("namespace/name"), and a sync decides
 * for that pod alone: first rule that applies, in kube's order. So a pod whose deletion
 * fails (a webhook refuses it, say) is retried with backoff on its own key, and holds back
 * no other pod, as kube's goroutines do not wait on one another either. The 20-second
 * scan is replaced by the informers' events, which queue every pod a rule may now apply to
 * (see the handlers), and by list_keys at start; the one rule that time alone changes, the
 * orphan's quarantine, requeues its pod when the quarantine ends.
 *
 * A deletion is kube's markFailedAndDeletePod: a pod not yet Succeeded or Failed is first
 * patched to phase Failed (and, when orphaned, given the DisruptionTarget condition kube
 * sets), with a strategic merge patch of its status that names its uid, as kube's
 * PatchPodStatus sends; then it is deleted with gracePeriodSeconds 0 and its uid as
 * precondition. A failed patch stops the deletion, as in kube.
 *
 * Quarantine: a node absent from the cache may only be late to arrive. kube waits 40
 * seconds (quarantineTime) from the first scan that missed the node, then reads it live
 * and deletes the node's pods only if the read finds nothing. Here the first sync that
 * misses a node starts its quarantine (kept in memory, as kube's queue is), and the pod is
 * requeued for when it ends; then the cache, which has had those 40 seconds to catch up,
 * must still lack the node, and a live read of it (the sync's confirm_absent, without a
 * uid: any node of that name exists) must find none before anything is sent. One that
 * finds it fails the execution, and the key is synced again with backoff, by when the
 * cache has it. A node that shows up ends the quarantine.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/podgc.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

/* kube's quarantineTime: how long a node may be missing from the cache before its pods go. */
#define QUARANTINE_SECONDS 40.0
/* A quarantine this old is forgotten when another begins (its pods were dealt with long
 * ago, or start a new one). */
#define QUARANTINE_KEPT 3600.0

#define THRESHOLD_FLAG "terminated-pod-gc-threshold"

enum {
	STMT_POD,
	STMT_RANK,
	STMT_FORCED,
	STMT_TERMINATED_COUNT,
	STMT_EXCESS,
	STMT_FORCED_ALL,
	STMT_PODS_ON_NODE,
	STMT_OUT_OF_SERVICE_ON_NODE,
	STMT_COUNT
};

static const char *const podgc_sql[STMT_COUNT] = {
	/* The pod ?1/?2: uid, phase, node ('' unscheduled), generation, body. */
	[STMT_POD] =
	    "SELECT uid, phase, coalesce(node_name, ''), coalesce(generation, 0), body"
	    " FROM cache_pods WHERE namespace = ?1 AND name = ?2",
	/* How many terminated pods go before the terminated pod ?1/?2 in kube's order
	 * (podgc_terminated's): one count, where ranking them all would sort them all. */
	[STMT_RANK] =
	    "SELECT count(*) FROM podgc_terminated p, podgc_terminated q"
	    " WHERE p.namespace = ?1 AND p.name = ?2"
	    " AND (-q.evicted, coalesce(q.creation_timestamp, ''), q.name, q.namespace, q.uid)"
	    " < (-p.evicted, coalesce(p.creation_timestamp, ''), p.name, p.namespace, p.uid)",
	/* Why the pod ?1/?2 is deleted whatever the threshold, if it is. */
	[STMT_FORCED] = "SELECT reason FROM podgc_forced WHERE namespace = ?1 AND name = ?2",
	/* How many terminated pods there are. */
	[STMT_TERMINATED_COUNT] = "SELECT count(*) FROM podgc_terminated",
	/* The first ?1 terminated pods to go, in kube's order. */
	[STMT_EXCESS] =
	    "SELECT namespace, name FROM podgc_terminated"
	    " ORDER BY evicted DESC, creation_timestamp, name, namespace, uid LIMIT ?1",
	[STMT_FORCED_ALL] = "SELECT namespace, name FROM podgc_forced",
	/* The pods bound to node ?1. */
	[STMT_PODS_ON_NODE] = "SELECT namespace, name FROM cache_pods WHERE node_name = ?1",
	/* The pods being deleted on node ?1 if it is out of service. */
	[STMT_OUT_OF_SERVICE_ON_NODE] =
	    "SELECT namespace, name FROM podgc_forced"
	    " WHERE node_name = ?1 AND reason = 'out-of-service'",
};

/* A node missing from the cache since a sync first saw it so. */
struct quarantine {
	char *node;
	double since;
};

struct podgc_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *pods;
	long long threshold;		/* --terminated-pod-gc-threshold; <= 0: off */
	/* No fewer than the terminated pods: the last count, plus the pods that terminated
	 * since (those deleted are not taken off: a count within the same batch of events
	 * may have missed them already); -1 until counted. While it is within the
	 * threshold, a pod that terminates needs no count. */
	long long terminated_seen;
	struct quarantine *quarantine;
	int nquarantine;
	/* kube's pod_gc_collector_force_delete_pods_total and ..._pod_errors_total, by
	 * namespace and reason; NULL without a registry (plan, replay). */
	struct metrics_family *deleting_total;
	struct metrics_family *deleting_errors;
};

/* Why a pod is deleted: kube's reasons (its metric's reason label). */
enum podgc_reason {
	REASON_NONE,
	REASON_TERMINATED,
	REASON_OUT_OF_SERVICE,
	REASON_ORPHANED,
	REASON_UNSCHEDULED,
};

/* A cached pod, as a sync reads it. */
struct podgc_pod {
	char *namespace;
	const char *name;	/* in the key */
	char *uid;
	char *phase;		/* NULL: none */
	char *node;		/* "" when unscheduled */
	long long generation;
	cJSON *body;
};

static void
pod_clear(struct podgc_pod *p)
{
	free(p->namespace);
	free(p->uid);
	free(p->phase);
	free(p->node);
	cJSON_Delete(p->body);
	memset(p, 0, sizeof *p);
}

/* Duplicates a text column (NULL stays NULL). */
static char *
column_dup(sqlite3_stmt *stmt, int i)
{
	const unsigned char *text = sqlite3_column_text(stmt, i);

	return text != NULL ? xstrdup((const char *)text) : NULL;
}

/* True for a phase kube's isPodTerminated takes for terminated (none included). */
static int
phase_terminated(const char *phase)
{
	return phase == NULL || (strcmp(phase, "Pending") != 0 && strcmp(phase, "Running") != 0 &&
	    strcmp(phase, "Unknown") != 0);
}

/* --- quarantine --------------------------------------------------------------------------- */

static struct quarantine *
quarantine_find(struct podgc_state *st, const char *node)
{
	for (int i = 0; i < st->nquarantine; i++) {
		if (strcmp(st->quarantine[i].node, node) == 0)
			return &st->quarantine[i];
	}
	return NULL;
}

static void
quarantine_remove(struct podgc_state *st, int i)
{
	free(st->quarantine[i].node);
	st->quarantine[i] = st->quarantine[--st->nquarantine];
}

/* Ends node's quarantine, if it has one: it is in the cache. */
static void
quarantine_forget(struct podgc_state *st, const char *node)
{
	for (int i = 0; i < st->nquarantine; i++) {
		if (strcmp(st->quarantine[i].node, node) == 0) {
			quarantine_remove(st, i);
			return;
		}
	}
}

/* Seconds left of node's quarantine at now, beginning it if it has none (and forgetting
 * the stale ones then); 0 once it is over. */
static double
quarantine_left(struct podgc_state *st, const char *node, double now)
{
	struct quarantine *q = quarantine_find(st, node);

	if (q == NULL) {
		for (int i = st->nquarantine - 1; i >= 0; i--) {
			if (st->quarantine[i].since < now - QUARANTINE_KEPT)
				quarantine_remove(st, i);
		}
		st->quarantine = xrealloc(st->quarantine,
		    (size_t)(st->nquarantine + 1) * sizeof *st->quarantine);
		q = &st->quarantine[st->nquarantine++];
		q->node = xstrdup(node);
		q->since = now;
	}
	return q->since + QUARANTINE_SECONDS > now ? q->since + QUARANTINE_SECONDS - now : 0;
}

/* --- sync ------------------------------------------------------------------------------- */

/* Reads the pod namespace/name: 1 and *p filled, 0 when the cache has none, -1 on error. */
static int
pod_read(struct controller *c, const char *namespace, const char *name, struct podgc_pod *p,
    char **error)
{
	struct podgc_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_POD]);
	int rc;

	memset(p, 0, sizeof *p);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		p->namespace = xstrdup(namespace);
		p->name = name;
		p->uid = column_dup(stmt, 0);
		p->phase = column_dup(stmt, 1);
		p->node = column_dup(stmt, 2);
		p->generation = sqlite3_column_int64(stmt, 3);
		p->body = controller_column_json(stmt, 4);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "podgc: reading pod %s/%s: %s", namespace, name,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_ROW && p->body == NULL) {
		pod_clear(p);
		return error_set(error, "podgc: pod %s/%s: the cached body is not JSON",
		    namespace, name);
	}
	return rc == SQLITE_ROW;
}

/* Counts the terminated pods into *n; -1 on error. */
static int
terminated_count(struct controller *c, long long *n, char **error)
{
	struct podgc_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_TERMINATED_COUNT]);
	int rc = sqlite3_step(stmt);

	*n = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW)
		return error_set(error, "podgc: counting terminated pods: %s",
		    sqlite3_errmsg(store_db(c->store)));
	return 0;
}

/* Whether the terminated pod p is past the threshold: 1 with *why set, 0, -1 on error. */
static int
past_threshold(struct controller *c, const struct podgc_pod *p, char **why, char **error)
{
	struct podgc_state *st = c->state;
	sqlite3_stmt *stmt;
	long long before = 0, count;
	int rc;

	if (terminated_count(c, &count, error) != 0)
		return -1;
	if (count <= st->threshold)
		return 0;
	stmt = controller_stmt(st->stmt[STMT_RANK]);
	sqlite3_bind_text(stmt, 1, p->namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, p->name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		before = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW)
		return error_set(error, "podgc: ranking terminated pod %s/%s: %s", p->namespace,
		    p->name, sqlite3_errmsg(store_db(c->store)));
	if (before >= count - st->threshold)
		return 0;
	*why = xasprintf("terminated: %lld of %lld terminated pods, threshold %lld",
	    before + 1, count, st->threshold);
	return 1;
}

/* The reason p is deleted for, the first of kube's rules that applies (with *why, for
 * people), or REASON_NONE; -1 on error. */
static int
pod_reason(struct controller *c, const struct podgc_pod *p, enum podgc_reason *reason,
    char **why, char **error)
{
	struct podgc_state *st = c->state;
	sqlite3_stmt *stmt;
	const char *text;
	int rc;

	*reason = REASON_NONE;
	if (st->threshold > 0 && phase_terminated(p->phase)) {
		rc = past_threshold(c, p, why, error);
		if (rc != 0) {
			*reason = REASON_TERMINATED;
			return rc < 0 ? -1 : 0;
		}
	}
	stmt = controller_stmt(st->stmt[STMT_FORCED]);
	sqlite3_bind_text(stmt, 1, p->namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, p->name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	text = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(stmt, 0) : NULL;
	if (text != NULL && strcmp(text, "out-of-service") == 0) {
		*reason = REASON_OUT_OF_SERVICE;
		*why = xasprintf("terminating on node %s, not ready and out of service", p->node);
	} else if (text != NULL && strcmp(text, "orphaned") == 0) {
		*reason = REASON_ORPHANED;
		*why = xasprintf("node %s no longer exists", p->node);
	} else if (text != NULL && strcmp(text, "unscheduled") == 0) {
		*reason = REASON_UNSCHEDULED;
		*why = xstrdup("terminating and not scheduled to any node");
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "podgc: reading why pod %s/%s goes: %s", p->namespace,
		    p->name, sqlite3_errmsg(store_db(c->store)));
	return 0;
}

/* Returns p's status condition of type, or NULL. */
static const cJSON *
pod_condition(const struct podgc_pod *p, const char *type)
{
	const cJSON *condition;

	cJSON_ArrayForEach(condition, json_path(p->body, "status.conditions")) {
		if (strcmp(json_string(condition, "type"), type) == 0)
			return condition;
	}
	return NULL;
}

/* kube's last word on an orphan's node, after the quarantine: a live read that must find
 * no node of that name. */
static void
confirm_node_absent(struct sync_result *r, const char *node)
{
	struct action *a = action_append(&r->confirm_absent, &r->nconfirm_absent);

	a->type = ACTION_GET;
	a->verb = "confirm-absent";
	a->resource = resource_find("nodes");
	a->namespace = xstrdup("");
	a->name = xstrdup(node);
	a->reason = xstrdup("the node is not in the cache after its quarantine");
}

/* The DisruptionTarget condition kube gives an orphaned pod, at now: its transition time
 * stays the old one when the pod has the condition True already (UpdatePodCondition). */
static cJSON *
disruption_condition(const struct podgc_pod *p, double now)
{
	const cJSON *old = pod_condition(p, "DisruptionTarget");
	const char *old_status = json_string(old, "status");
	const char *old_time = json_string(old, "lastTransitionTime");
	cJSON *condition = cJSON_CreateObject();
	char when[TIME_RFC3339_SIZE];

	time_format_rfc3339((time_t)now, when);
	cJSON_AddStringToObject(condition, "type", "DisruptionTarget");
	if (p->generation > 0)
		cJSON_AddNumberToObject(condition, "observedGeneration", (double)p->generation);
	cJSON_AddStringToObject(condition, "status", "True");
	cJSON_AddStringToObject(condition, "lastTransitionTime",
	    strcmp(old_status, "True") == 0 && *old_time != '\0' ? old_time : when);
	cJSON_AddStringToObject(condition, "reason", "DeletionByPodGC");
	cJSON_AddStringToObject(condition, "message", "PodGC: node no longer exists");
	return condition;
}

/* Appends {"type": type} to a $setElementOrder list. */
static void
append_type(cJSON *order, const char *type)
{
	cJSON *item = cJSON_CreateObject();

	cJSON_AddStringToObject(item, "type", type);
	cJSON_AddItemToArray(order, item);
}

/* The strategic merge patch of p's status that kube's PatchPodStatus computes for
 * markFailedAndDeletePod: phase Failed, the pod's generation as observed (the
 * PodObservedGenerationTracking gate is locked on), the condition if any (taken), and the
 * uid as precondition. */
static cJSON *
failed_patch(const struct podgc_pod *p, cJSON *condition)
{
	cJSON *patch = cJSON_CreateObject();
	cJSON *status = cJSON_AddObjectToObject(patch, "status");

	cJSON_AddStringToObject(cJSON_AddObjectToObject(patch, "metadata"), "uid", p->uid);
	cJSON_AddStringToObject(status, "phase", "Failed");
	if (p->generation > 0 && json_int(p->body, "status.observedGeneration", 0) !=
	    p->generation)
		cJSON_AddNumberToObject(status, "observedGeneration", (double)p->generation);
	if (condition != NULL) {
		cJSON *order = cJSON_AddArrayToObject(status, "$setElementOrder/conditions");
		const char *type = json_string(condition, "type");
		const cJSON *old;
		int listed = 0;

		/* The conditions' order as it ends on the pod: the old ones, then the new. */
		cJSON_ArrayForEach(old, json_path(p->body, "status.conditions")) {
			const char *old_type = json_string(old, "type");

			if (*old_type == '\0')
				continue;
			listed |= strcmp(old_type, type) == 0;
			append_type(order, old_type);
		}
		if (!listed)
			append_type(order, type);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(status, "conditions"), condition);
	}
	return patch;
}

/* Appends kube's markFailedAndDeletePod for p to r: the status patch unless the pod has
 * finished already, then the forced deletion. */
static void
force_delete(struct podgc_state *st, struct sync_result *r, const struct podgc_pod *p,
    enum podgc_reason reason, const char *why, double now)
{
	static const char *const reasons[] = {
		[REASON_TERMINATED] = "terminated", [REASON_OUT_OF_SERVICE] = "out-of-service",
		[REASON_ORPHANED] = "orphaned", [REASON_UNSCHEDULED] = "unscheduled",
	};
	const char *labels[] = { p->namespace, reasons[reason], NULL };
	const struct resource *pods = st->pods;
	struct metrics_series *total = NULL, *errors = NULL;
	struct action *a;

	/* kube's counts: every pod it tries to delete, and those that fail (the status
	 * patch or the deletion). */
	if (st->deleting_total != NULL) {
		total = metrics_series_get(st->deleting_total, labels);
		errors = metrics_series_get(st->deleting_errors, labels);
	}

	if (p->phase == NULL || (strcmp(p->phase, "Succeeded") != 0 &&
	    strcmp(p->phase, "Failed") != 0)) {
		a = action_append(&r->writes, &r->nwrites);
		a->type = ACTION_PATCH;
		a->verb = "mark-failed";
		a->resource = pods;
		a->namespace = xstrdup(p->namespace);
		a->name = xstrdup(p->name);
		a->uid = xstrdup(p->uid);
		a->subresource = "status";
		a->body = failed_patch(p, reason == REASON_ORPHANED ?
		    disruption_condition(p, now) : NULL);
		a->reason = xstrdup(why);
		a->count_failed[0] = total;
		a->count_failed[1] = errors;
	}
	a = action_append(&r->writes, &r->nwrites);
	a->type = ACTION_DELETE;
	a->verb = "force-delete";
	a->resource = pods;
	a->namespace = xstrdup(p->namespace);
	a->name = xstrdup(p->name);
	a->uid = xstrdup(p->uid);
	a->delete_now = 1;
	a->reason = xstrdup(why);
	a->count_done = total;
	a->count_failed[0] = total;
	a->count_failed[1] = errors;
}

static int
podgc_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct podgc_state *st = c->state;
	struct podgc_pod p;
	enum podgc_reason reason;
	char *namespace, *why = NULL;
	const char *name;
	double left;
	int found;

	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->pods;
	if (controller_key_split(key, &namespace, &name) != 0)
		return error_set(error, "podgc: %s is not a namespace/name key", key);
	found = pod_read(c, namespace, name, &p, error);
	free(namespace);
	if (found <= 0)
		return found;
	if (pod_reason(c, &p, &reason, &why, error) != 0) {
		pod_clear(&p);
		return -1;
	}
	if (reason == REASON_ORPHANED &&
	    (left = quarantine_left(st, p.node, now)) > 0) {
		out->waiting = xasprintf("node %s is not in the cache: quarantined for %.0fs "
		    "more", p.node, left);
		out->requeue_after = left;
	} else if (reason != REASON_NONE) {
		if (reason == REASON_ORPHANED)
			confirm_node_absent(out, p.node);
		force_delete(st, out, &p, reason, why, now);
	}
	free(why);
	pod_clear(&p);
	return 0;
}

/* --- handlers ---------------------------------------------------------------------------- */

/* Calls add(namespace/name) for each row of stmt, bound by the caller; what names the
 * statement in a warning. */
static void
queue_rows(sqlite3_stmt *stmt, void (*add)(const char *key, void *arg), void *arg,
    const char *what)
{
	int rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		char *key = xasprintf("%s/%s", sqlite3_column_text(stmt, 0),
		    sqlite3_column_text(stmt, 1));
		add(key, arg);
		free(key);
	}
	if (rc != SQLITE_DONE)
		log_warning("podgc: listing %s: %s", what, sqlite3_errmsg(sqlite3_db_handle(stmt)));
	sqlite3_reset(stmt);
}

/* Calls add with the key of every terminated pod past the threshold, the first to go
 * first (the threshold is on). */
static void
queue_excess(struct controller *c, void (*add)(const char *key, void *arg), void *arg)
{
	struct podgc_state *st = c->state;
	sqlite3_stmt *stmt;
	long long count;
	char *error = NULL;

	if (terminated_count(c, &count, &error) != 0) {
		log_warning("%s", error);
		free(error);
		return;
	}
	st->terminated_seen = count;
	if (count <= st->threshold)
		return;
	stmt = controller_stmt(st->stmt[STMT_EXCESS]);
	sqlite3_bind_int64(stmt, 1, count - st->threshold);
	queue_rows(stmt, add, arg, "the terminated pods past the threshold");
}

/* True when the pod an update left in old_body (NULL: none) was terminated already. */
static int
was_terminated(const char *old_body)
{
	cJSON *old = old_body != NULL ? cJSON_Parse(old_body) : NULL;
	int terminated = old != NULL && phase_terminated(json_string(old, "status.phase"));

	cJSON_Delete(old);
	return terminated;
}

/* A pod added or changed: queue it if a forced rule applies to it now (an orphan starts
 * or goes on with its quarantine); if it just terminated and the terminated pods are now
 * past the threshold, queue those that go. */
static void
pod_event(struct controller *c, const struct informer_event *ev,
    const struct controller_queue *q)
{
	struct podgc_state *st = c->state;
	const char *namespace = json_string(ev->object, "metadata.namespace");
	const char *name = json_string(ev->object, "metadata.name");
	sqlite3_stmt *stmt;
	int rc;

	if (ev->type == INFORMER_DELETED || *namespace == '\0' || *name == '\0')
		return;
	stmt = controller_stmt(st->stmt[STMT_FORCED]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	sqlite3_reset(stmt);
	if (rc == SQLITE_ROW) {
		char *key = xasprintf("%s/%s", namespace, name);
		q->add(key, q->arg);
		free(key);
	} else if (rc != SQLITE_DONE) {
		log_warning("podgc: reading pod %s/%s: %s", namespace, name,
		    sqlite3_errmsg(store_db(c->store)));
	}
	if (st->threshold <= 0 ||
	    !phase_terminated(json_string(ev->object, "status.phase")) ||
	    (ev->type == INFORMER_UPDATED && was_terminated(ev->old_body)))
		return;
	if (st->terminated_seen >= 0 && ++st->terminated_seen <= st->threshold)
		return;
	queue_excess(c, q->add, q->arg);
}

/* A node: gone, its pods may be orphans (their syncs begin the quarantine); there, it ends
 * its quarantine, and if it is out of service its pods being deleted go. */
static void
node_event(struct controller *c, const struct informer_event *ev,
    const struct controller_queue *q)
{
	struct podgc_state *st = c->state;
	const char *name = json_string(ev->object, "metadata.name");
	sqlite3_stmt *stmt;

	if (*name == '\0')
		return;
	if (ev->type == INFORMER_DELETED) {
		stmt = controller_stmt(st->stmt[STMT_PODS_ON_NODE]);
		sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
		queue_rows(stmt, q->add, q->arg, "the pods of a deleted node");
		return;
	}
	quarantine_forget(st, name);
	stmt = controller_stmt(st->stmt[STMT_OUT_OF_SERVICE_ON_NODE]);
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	queue_rows(stmt, q->add, q->arg, "the pods of an out-of-service node");
}

static void
podgc_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	(void)now;
	if (strcmp(ev->resource->name, "nodes") == 0)
		node_event(c, ev, q);
	else
		pod_event(c, ev, q);
}

/* Every pod a rule applies to: those of podgc_forced, and the terminated ones past the
 * threshold, the first to go first. */
static int
podgc_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct podgc_state *st = c->state;

	if (controller_list_keys_of(st->stmt[STMT_FORCED_ALL], "podgc", cb, arg, error) != 0)
		return -1;
	if (st->threshold > 0)
		queue_excess(c, cb, arg);
	return 0;
}

/* --- the type --------------------------------------------------------------------------- */

/* Registers kube's two counters of the pods it force-deletes. */
static int
podgc_register_metrics(struct podgc_state *st, struct metrics_registry *registry,
    char **error)
{
	static const char *const labels[] = { "namespace", "reason", NULL };
	static const struct metrics_spec total = { METRICS_COUNTER,
	    "pod_gc_collector_force_delete_pods_total",
	    "Number of pods that are being forcefully deleted since the Pod GC Controller "
	    "started.", labels, NULL, 0 };
	static const struct metrics_spec errors = { METRICS_COUNTER,
	    "pod_gc_collector_force_delete_pod_errors_total",
	    "Number of errors encountered when forcefully deleting the pods since the Pod GC "
	    "Controller started.", labels, NULL, 0 };

	st->deleting_total = metrics_family_register(registry, &total, error);
	st->deleting_errors = st->deleting_total != NULL ?
	    metrics_family_register(registry, &errors, error) : NULL;
	return st->deleting_errors != NULL ? 0 : -1;
}

static int
podgc_init(struct controller *c, char **error)
{
	struct podgc_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->pods = resource_find("pods");
	st->threshold = controller_flag_int(c, THRESHOLD_FLAG);
	st->terminated_seen = -1;
	if (c->config->metrics != NULL && podgc_register_metrics(st, c->config->metrics,
	    error) != 0)
		return -1;
	return store_prepare_statements(store_db(c->store), podgc_sql, STMT_COUNT, st->stmt,
	    "podgc", error);
}

static void
podgc_fini(struct controller *c)
{
	struct podgc_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	while (st->nquarantine > 0)
		quarantine_remove(st, st->nquarantine - 1);
	free(st->quarantine);
	free(st);
	c->state = NULL;
}

static const char *const podgc_resources[] = { "pods", "nodes", NULL };

static const struct controller_flag podgc_flags[] = {
	{ THRESHOLD_FLAG, CONTROLLER_FLAG_INT, "12500", INT32_MIN, INT32_MAX,
	    "Number of terminated pods that can exist before the terminated pod garbage "
	    "collector starts deleting terminated pods. If <= 0, the terminated pod garbage "
	    "collector is disabled." },
	{ NULL, 0, NULL, 0, 0, NULL },
};

const struct controller_type podgc_controller_type = {
	.name = "podgc",
	.resources = podgc_resources,
	/* kube has no workers flag: it deletes the terminated pods past the threshold all at
	 * once and the others one by one; ten pods in flight keep to the first without
	 * letting one scan flood the client, whose QPS limit sets the pace anyway. */
	.default_workers = 10,
	.workers_flag = NULL,
	.workers_help = NULL,
	.enable_flag = NULL,
	.flags = podgc_flags,
	.event_component = "pod-garbage-collector",
	.client_name = "pod-garbage-collector",
	.recovery = NULL,
	.init = podgc_init,
	.fini = podgc_fini,
	.handle_event = podgc_handle_event,
	.list_keys = podgc_list_keys,
	.sync = podgc_sync,
};
