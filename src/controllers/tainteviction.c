/*
 * tainteviction.c - the taint eviction controller (kube's taint-eviction-controller).
 *
 * A key is a pod's namespace/name. A sync, from the cache, does what kube's
 * processPodOnNode does for one pod bound to a node:
 *
 * 1. The node has no NoExecute taint (or is not cached): a scheduled deletion of the pod is
 *    cancelled, with kube's TaintManagerEviction event "Cancelling deletion of Pod ns/name".
 * 2. A taint no toleration of the pod matches: the pod goes now.
 * 3. All tolerated: the pod may stay the least tolerationSeconds of the tolerations that
 *    matched (tainteviction_tolerated); forever when none has one (a scheduled deletion is
 *    cancelled). Else its deletion is scheduled that long after now, unless one is
 *    scheduled already, which keeps its time (kube's timed workers: a toleration lengthened
 *    later changes nothing). The key is synced again when it is due.
 * 4. A pod that goes: the event "Marking for deletion Pod ns/name", the DisruptionTarget
 *    condition (reason DeletionByTaintManager) patched into its status, then its deletion.
 *
 * As in kube, the scheduled deletions are the controller's memory (a restart schedules
 * them anew from its start), a pod not bound, or already being deleted, is left alone, and
 * a pod deleted meanwhile has its deletion cancelled. The handlers queue a pod when it is
 * bound, when its tolerations change, and when it is deleted with a deletion scheduled;
 * and every pod of a node whose NoExecute taints change. list_keys gives the pods of the
 * nodes that have NoExecute taints. kube runs 8 workers for pods.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/tainteviction.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

enum {
	STMT_POD,
	STMT_TAINTS,
	STMT_NODE_PODS,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const tainteviction_sql[STMT_COUNT] = {
	/* Pod ?1/?2 if cached: uid, node, whether it is being deleted, body. */
	[STMT_POD] =
	    ("SELECT uid, node_name, deletion_timestamp IS NOT NULL, body FROM cache_pods"
	    " WHERE namespace = ?1 AND name = ?2"),
	/* The NoExecute taints of node ?1, as a JSON array, if it is cached. */
	[STMT_TAINTS] =
	    ("SELECT (SELECT json_group_array(json(t.value))"
	    "           FROM json_each(n.body, '$.spec.taints') t"
	    "          WHERE json_extract(t.value, '$.effect') = 'NoExecute')"
	    "  FROM cache_objects n"
	    " WHERE n.resource = 'nodes' AND n.namespace = '' AND n.name = ?1"),
	/* The pods bound to node ?1. */
	[STMT_NODE_PODS] =
	    "SELECT namespace, name FROM cache_pods WHERE node_name = ?1 ORDER BY namespace, name",
	/* The pods of the nodes with a NoExecute taint. */
	[STMT_KEYS] =
	    ("SELECT p.namespace, p.name FROM cache_objects n"
	    "  JOIN cache_pods p ON p.node_name = n.name"
	    " WHERE n.resource = 'nodes' AND n.namespace = ''"
	    "   AND EXISTS (SELECT 1 FROM json_each(n.body, '$.spec.taints') t"
	    "                WHERE json_extract(t.value, '$.effect') = 'NoExecute')"
	    " ORDER BY p.namespace, p.name"),
};

/* A scheduled deletion, as kube's timed worker. */
struct eviction {
	char *key;		/* namespace/name */
	double created;		/* when it was scheduled */
	double fire;		/* when the pod goes */
	int sent;		/* its deletion was handed to the executor: cancelling it
				   now is no news (no event) */
};

struct tainteviction_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *pods;
	struct eviction *v;	/* sorted by key */
	int n;
};

/* --- tolerations ----------------------------------------------------------------------- */

/* kube's ToleratesTaint, without the alpha Lt and Gt operators (off by default). */
static int
tolerates(const cJSON *toleration, const cJSON *taint)
{
	const char *effect = json_string(toleration, "effect");
	const char *key = json_string(toleration, "key");
	const char *op = json_string(toleration, "operator");

	if (*effect != '\0' && strcmp(effect, json_string(taint, "effect")) != 0)
		return 0;
	if (*key != '\0' && strcmp(key, json_string(taint, "key")) != 0)
		return 0;
	if (*op == '\0' || strcmp(op, "Equal") == 0)
		return strcmp(json_string(toleration, "value"), json_string(taint, "value")) == 0;
	return strcmp(op, "Exists") == 0;
}

int
tainteviction_tolerated(const cJSON *taints, const cJSON *tolerations, double *seconds)
{
	const cJSON *taint, *t;
	double least = -1;
	int used = 0;

	*seconds = 0;
	cJSON_ArrayForEach(taint, taints) {
		const cJSON *match = NULL;

		cJSON_ArrayForEach(t, tolerations) {
			if (tolerates(t, taint)) {
				match = t;
				break;
			}
		}
		if (match == NULL)
			return 0;
		used++;
		t = cJSON_GetObjectItemCaseSensitive(match, "tolerationSeconds");
		if (cJSON_IsNumber(t)) {
			double s = t->valuedouble > 0 ? t->valuedouble : 0;

			if (least < 0 || s < least)
				least = s;
		}
	}
	*seconds = used == 0 ? 0 : least;
	return 1;
}

/* --- scheduled deletions --------------------------------------------------------------- */

static struct eviction *
eviction_find(struct tainteviction_state *st, const char *key, int *at)
{
	int lo = 0, hi = st->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2, c = strcmp(st->v[mid].key, key);

		if (c == 0) {
			*at = mid;
			return &st->v[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return NULL;
}

static struct eviction *
eviction_add(struct tainteviction_state *st, const char *key, double created, double fire)
{
	int at;
	struct eviction *e = eviction_find(st, key, &at);

	if (e == NULL) {
		st->v = xrealloc(st->v, ((size_t)st->n + 1) * sizeof *st->v);
		memmove(&st->v[at + 1], &st->v[at], (size_t)(st->n - at) * sizeof *st->v);
		st->n++;
		e = &st->v[at];
		e->key = xstrdup(key);
	}
	e->created = created;
	e->fire = fire;
	e->sent = 0;
	return e;
}

/* Drops key's scheduled deletion; 1 when there was one not yet sent (kube's CancelWork
 * finds a worker). */
static int
eviction_cancel(struct tainteviction_state *st, const char *key)
{
	int at, pending;
	struct eviction *e = eviction_find(st, key, &at);

	if (e == NULL)
		return 0;
	pending = !e->sent;
	free(e->key);
	memmove(&st->v[at], &st->v[at + 1], (size_t)(st->n - at - 1) * sizeof *st->v);
	st->n--;
	return pending;
}

/* --- sync ------------------------------------------------------------------------------ */

/* A pod's reference for its events when the cache has no body to give. */
static cJSON *
pod_ref(const char *namespace, const char *name)
{
	cJSON *pod = cJSON_CreateObject(), *meta;

	cJSON_AddStringToObject(pod, "apiVersion", "v1");
	cJSON_AddStringToObject(pod, "kind", "Pod");
	meta = cJSON_AddObjectToObject(pod, "metadata");
	cJSON_AddStringToObject(meta, "name", name);
	cJSON_AddStringToObject(meta, "namespace", namespace);
	return pod;
}

/* Cancels key's scheduled deletion, with kube's event when there was one. */
static void
cancel(struct tainteviction_state *st, const char *key, struct sync_result *out)
{
	if (eviction_cancel(st, key))
		sync_result_add_event(out, "Normal", "TaintManagerEviction",
		    xasprintf("Cancelling deletion of Pod %s", key));
}

/* The status patch that adds the DisruptionTarget condition to pod at now, or NULL when it
 * has it already as kube would set it. */
static cJSON *
disruption_patch(const cJSON *pod, double now)
{
	static const char reason[] = "DeletionByTaintManager";
	static const char message[] = "Taint manager: deleting due to NoExecute taint";
	const cJSON *c;
	char stamp[TIME_RFC3339_SIZE];
	long long generation = json_int(pod, "metadata.generation", 0);
	cJSON *patch, *cond;

	cJSON_ArrayForEach(c, json_path(pod, "status.conditions")) {
		if (strcmp(json_string(c, "type"), "DisruptionTarget") == 0 &&
		    strcmp(json_string(c, "status"), "True") == 0 &&
		    strcmp(json_string(c, "reason"), reason) == 0 &&
		    strcmp(json_string(c, "message"), message) == 0)
			return NULL;
	}
	time_format_rfc3339((time_t)now, stamp);
	patch = cJSON_CreateObject();
	cJSON_AddStringToObject(cJSON_AddObjectToObject(patch, "metadata"), "uid",
	    json_string(pod, "metadata.uid"));
	cond = cJSON_CreateObject();
	cJSON_AddStringToObject(cond, "type", "DisruptionTarget");
	cJSON_AddStringToObject(cond, "status", "True");
	if (generation != 0)
		cJSON_AddNumberToObject(cond, "observedGeneration", (double)generation);
	cJSON_AddStringToObject(cond, "lastTransitionTime", stamp);
	cJSON_AddStringToObject(cond, "reason", reason);
	cJSON_AddStringToObject(cond, "message", message);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(cJSON_AddObjectToObject(patch, "status"),
	    "conditions"), cond);
	return patch;
}

/* The pod goes: its event, the condition, the deletion. */
static void
evict(struct tainteviction_state *st, const char *key, const char *namespace,
    const char *name, const char *uid, const cJSON *pod, double now, const char *why,
    struct sync_result *out)
{
	cJSON *patch = disruption_patch(pod, now);
	struct action *a;

	sync_result_add_event(out, "Normal", "TaintManagerEviction",
	    xasprintf("Marking for deletion Pod %s", key));
	if (patch != NULL) {
		a = action_append(&out->writes, &out->nwrites);
		a->type = ACTION_PATCH;
		a->verb = "mark-disruption-target";
		a->resource = st->pods;
		a->namespace = xstrdup(namespace);
		a->name = xstrdup(name);
		a->uid = xstrdup(uid);
		a->subresource = "status";
		a->body = patch;
		a->reason = xasprintf("DisruptionTarget: %s", why);
	}
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_DELETE;
	a->verb = "evict";
	a->resource = st->pods;
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(name);
	a->uid = xstrdup(uid);
	a->reason = xstrdup(why);
}

static int
tainteviction_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct tainteviction_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_POD]);
	char *namespace = NULL, *node = NULL, *uid = NULL;
	const char *name;
	cJSON *pod = NULL, *taints = NULL;
	struct eviction *e;
	double seconds, fire;
	int rc, deleting = 0, at;

	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->pods;
	if (controller_key_split(key, &namespace, &name) != 0)
		return error_set(error, "taint-eviction-controller: %s is not a namespace/name",
		    key);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		if (sqlite3_column_type(stmt, 1) == SQLITE_TEXT)
			node = xstrdup((const char *)sqlite3_column_text(stmt, 1));
		deleting = sqlite3_column_int(stmt, 2);
		pod = controller_column_json(stmt, 3);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		error_set(error, "taint-eviction-controller: reading pod %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		goto fail;
	}
	if (rc == SQLITE_DONE) {
		/* Gone: a deletion it had is cancelled (kube says so, by its name). */
		out->owner = pod_ref(namespace, name);
		cancel(st, key, out);
		out->forget_expectations = 1;
		goto done;
	}
	if (pod == NULL) {
		error_set(error, "taint-eviction-controller: pod %s: the cached body is not JSON",
		    key);
		goto fail;
	}
	out->owner_uid = uid;
	uid = NULL;
	out->owner = pod;
	if (node == NULL || deleting)
		goto done;	/* not bound, or going already */

	stmt = controller_stmt(st->stmt[STMT_TAINTS]);
	sqlite3_bind_text(stmt, 1, node, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		taints = controller_column_json(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		error_set(error, "taint-eviction-controller: reading node %s: %s", node,
		    sqlite3_errmsg(store_db(c->store)));
		goto fail;
	}
	if (cJSON_GetArraySize(taints) == 0) {
		cancel(st, key, out);
		goto done;
	}

	if (!tainteviction_tolerated(taints, json_path(pod, "spec.tolerations"), &seconds)) {
		cancel(st, key, out);
		eviction_add(st, key, now, now)->sent = 1;
		evict(st, key, namespace, name, out->owner_uid, pod, now,
		    "a NoExecute taint of its node is not tolerated", out);
		goto done;
	}
	if (seconds < 0) {
		cancel(st, key, out);
		goto done;
	}
	e = eviction_find(st, key, &at);
	if (e == NULL)
		e = eviction_add(st, key, now, now + seconds);
	fire = e->fire;
	if (fire <= now) {
		/* Sent again if this comes back before the cache shows the pod going (a
		 * failed write, a taint changed): a second delete of a pod going is none. */
		e->sent = 1;
		evict(st, key, namespace, name, out->owner_uid, pod, now,
		    "its tolerationSeconds for its node's NoExecute taints ran out", out);
	} else {
		out->requeue_after = fire - now;
	}
done:
	free(namespace);
	free(node);
	free(uid);
	cJSON_Delete(taints);
	return 0;
fail:
	free(namespace);
	free(node);
	free(uid);
	cJSON_Delete(taints);
	if (out->owner != pod)
		cJSON_Delete(pod);
	return -1;
}

/* --- handlers -------------------------------------------------------------------------- */

/* The NoExecute taints of node (NULL: none), as an array (to free). */
static cJSON *
noexecute_taints(const cJSON *node)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *t;

	cJSON_ArrayForEach(t, json_path(node, "spec.taints")) {
		if (strcmp(json_string(t, "effect"), "NoExecute") == 0)
			cJSON_AddItemToArray(out, cJSON_Duplicate(t, 1));
	}
	return out;
}

/* True when a and b (NULL: none) differ at path. */
static int
differs(const cJSON *a, const cJSON *b, const char *path)
{
	const cJSON *x = json_path(a, path), *y = json_path(b, path);

	if (x == NULL || y == NULL)
		return (x == NULL) != (y == NULL);
	return !cJSON_Compare(x, y, 1);
}

static void
tainteviction_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct tainteviction_state *st = c->state;
	cJSON *old = ev->old_body != NULL ? cJSON_Parse(ev->old_body) : NULL;
	const char *name = json_string(ev->object, "metadata.name");

	(void)now;
	if (strcmp(ev->resource->name, "pods") == 0) {
		char *key = xasprintf("%s/%s", json_string(ev->object, "metadata.namespace"),
		    name);
		int at;

		if (ev->type == INFORMER_DELETED) {
			if (eviction_find(st, key, &at) != NULL)
				q->add(key, q->arg);
		} else if (*json_string(ev->object, "spec.nodeName") != '\0' &&
		    (old == NULL || differs(old, ev->object, "spec.nodeName") ||
		    differs(old, ev->object, "spec.tolerations"))) {
			q->add(key, q->arg);
		}
		free(key);
	} else if (strcmp(ev->resource->name, "nodes") == 0 && ev->type != INFORMER_DELETED) {
		cJSON *was = noexecute_taints(old), *is = noexecute_taints(ev->object);

		if ((old == NULL && cJSON_GetArraySize(is) > 0) ||
		    (old != NULL && !cJSON_Compare(was, is, 1))) {
			sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_NODE_PODS]);
			int rc;

			sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
			while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
				char *key = xasprintf("%s/%s", sqlite3_column_text(stmt, 0),
				    sqlite3_column_text(stmt, 1));

				q->add(key, q->arg);
				free(key);
			}
			if (rc != SQLITE_DONE)
				log_error("taint-eviction-controller: the pods of node %s: %s", name,
				    sqlite3_errmsg(store_db(c->store)));
			sqlite3_reset(stmt);
		}
		cJSON_Delete(was);
		cJSON_Delete(is);
	}
	cJSON_Delete(old);
}

static int
tainteviction_list_keys(struct controller *c, void (*cb)(const char *key, void *arg),
    void *arg, char **error)
{
	struct tainteviction_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "taint-eviction-controller", cb, arg,
	    error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
tainteviction_init(struct controller *c, char **error)
{
	struct tainteviction_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->pods = resource_find("pods");
	if (st->pods == NULL)
		return error_set(error, "taint-eviction-controller: pods is not a known resource");
	return store_prepare_statements(store_db(c->store), tainteviction_sql, STMT_COUNT,
	    st->stmt, "taint-eviction-controller", error);
}

static void
tainteviction_fini(struct controller *c)
{
	struct tainteviction_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	for (int i = 0; i < st->n; i++)
		free(st->v[i].key);
	free(st->v);
	free(st);
	c->state = NULL;
}

static const char *const tainteviction_resources[] = { "pods", "nodes", NULL };

const struct controller_type tainteviction_controller_type = {
	.name = "taint-eviction-controller",
	.resources = tainteviction_resources,
	.default_workers = 8,		/* kube's UpdateWorkerSize; no flag */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "taint-eviction-controller",
	.client_name = "node-controller",
	.recovery = NULL,
	.init = tainteviction_init,
	.fini = tainteviction_fini,
	.handle_event = tainteviction_handle_event,
	.list_keys = tainteviction_list_keys,
	.sync = tainteviction_sync,
};
