/*
 * nodelifecycle.c - the node lifecycle controller (kube's node-lifecycle-controller): the
 * part of it that runs on every change of a node, its node update pass.
 *
 * A key is a node's name. A sync, from the cache, does what kube's doNoScheduleTaintingPass
 * and reconcileNodeLabels do for one node:
 *
 * 1. The node is not cached: nothing (it is gone; its write records are dropped).
 * 2. The cache has not caught up with this controller's last patch of the node
 *    (consistency.c): wait, retry with backoff (kube would patch from a stale lister and
 *    be refused for the resourceVersion; this waits for the cache instead).
 * 3. TaintNodesByCondition: the NoSchedule taints the node's conditions call for
 *    (Ready False: not-ready, Ready Unknown: unreachable, MemoryPressure, DiskPressure,
 *    PIDPressure, NetworkUnavailable True: theirs) and spec.unschedulable (unschedulable)
 *    are added, stamped with the time they are added, and those of these keys it carries
 *    but no longer needs are removed; every other taint stays as it is. The rule is the
 *    view nodelifecycle_noschedule_taints (schema/013-nodelifecycle.sql), which the sync
 *    reads for its node. As kube's PatchNodeTaints, the patch replaces spec.taints whole
 *    and carries the node's resourceVersion, so that a taint written meanwhile by someone
 *    else makes it fail (409) rather than be lost.
 * 4. The beta labels beta.kubernetes.io/os and /arch are set to the values of
 *    kubernetes.io/os and /arch when they differ or are missing (nodelifecycle_labels).
 *
 * The handlers queue a node when it is added or updated, as kube's node update queue is
 * fed, and when it is deleted (to drop its records). list_keys gives every cached node.
 * kube runs 8 workers for this pass and records no event in it.
 *
 * Not done yet (kube's other passes, driven by --node-monitor-period): the node health
 * monitor (conditions set to Unknown when the kubelet stops posting, from the node's Lease
 * and status), the NoExecute not-ready/unreachable taints and their per-zone rate limits,
 * zone states, pods marked not ready, its events and node_collector_* metrics. Its flags
 * are accepted and ignored until then, as every flag of a controller sqlkcm lacks is.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consistency.h"
#include "controllers/nodelifecycle.h"
#include "json.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

enum {
	STMT_NODE,
	STMT_TAINTS,
	STMT_LABELS,
	STMT_KEYS,
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
};

struct nodelifecycle_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *nodes;
};

/* --- sync ------------------------------------------------------------------------------ */

/* Appends a strategic merge patch of node name (uid) with body (taken) to r's writes. */
static struct action *
patch_node(struct sync_result *r, const struct resource *nodes, const char *name,
    const char *uid, cJSON *body, const char *verb, char *reason)
{
	struct action *a = action_append(&r->writes, &r->nwrites);

	a->type = ACTION_PATCH;
	a->verb = verb;
	a->resource = nodes;
	a->namespace = xstrdup("");
	a->name = xstrdup(name);
	a->uid = xstrdup(uid);
	a->body = body;
	a->reason = reason;
	return a;
}

/* True when taint t is the NoSchedule taint of key. */
static int
taint_is(const cJSON *t, const char *key)
{
	return strcmp(json_string(t, "key"), key) == 0 &&
	    strcmp(json_string(t, "effect"), "NoSchedule") == 0;
}

/* The taint patch of node (cached body) when rows of stmt (taint_key, wanted) say what
 * to add and remove at now; NULL when nothing changes. *why says what (malloc'd). */
static cJSON *
taint_patch(sqlite3_stmt *stmt, const cJSON *node, double now, char **why)
{
	const cJSON *old = json_path(node, "spec.taints"), *t;
	const cJSON *list = cJSON_IsArray(old) ? old : NULL;
	char **del = NULL, **add = NULL, stamp[TIME_RFC3339_SIZE];
	int ndel = 0, nadd = 0, rc;
	cJSON *patch, *taints, *meta, *spec;
	struct buf reason;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(stmt, 0);

		if (sqlite3_column_int(stmt, 1)) {
			add = xrealloc(add, ((size_t)nadd + 1) * sizeof *add);
			add[nadd++] = xstrdup(key);
		} else {
			del = xrealloc(del, ((size_t)ndel + 1) * sizeof *del);
			del[ndel++] = xstrdup(key);
		}
	}
	sqlite3_reset(stmt);
	if (nadd == 0 && ndel == 0)
		return NULL;

	/* The taints the node has, but those removed; then those added, in order. */
	taints = cJSON_CreateArray();
	cJSON_ArrayForEach(t, list) {
		int removed = 0;

		for (int i = 0; i < ndel && !removed; i++)
			removed = taint_is(t, del[i]);
		if (!removed)
			cJSON_AddItemToArray(taints, cJSON_Duplicate(t, 1));
	}
	time_format_rfc3339((time_t)now, stamp);
	buf_init(&reason);
	for (int i = 0; i < nadd; i++) {
		cJSON *taint = cJSON_CreateObject();

		cJSON_AddStringToObject(taint, "key", add[i]);
		cJSON_AddStringToObject(taint, "effect", "NoSchedule");
		cJSON_AddStringToObject(taint, "timeAdded", stamp);
		cJSON_AddItemToArray(taints, taint);
		buf_printf(&reason, "%s+%s:NoSchedule", reason.len > 0 ? ", " : "", add[i]);
		free(add[i]);
	}
	for (int i = 0; i < ndel; i++) {
		buf_printf(&reason, "%s-%s:NoSchedule", reason.len > 0 ? ", " : "", del[i]);
		free(del[i]);
	}
	free(add);
	free(del);

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

static int
nodelifecycle_sync(struct controller *c, const char *key, double now,
    struct sync_result *out, char **error)
{
	struct nodelifecycle_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_NODE]);
	const char *behind = NULL;
	char *why = NULL;
	cJSON *node = NULL, *patch;
	int rc, ready = 1;

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
		/* Gone: nothing to do, nothing to wait for any more. */
		out->forget_expectations = 1;
		return 0;
	}
	if (node == NULL)
		return error_set(error, "nodelifecycle: node %s: the cached body is not JSON", key);
	out->owner = node;
	if (consistency_ready(c->writes, key, out->owner_uid, &ready, &behind, error) != 0)
		return -1;
	if (!ready) {
		out->stale = 1;
		out->stale_resource = xstrdup(behind);
		return 0;
	}

	stmt = controller_stmt(st->stmt[STMT_TAINTS]);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	if ((patch = taint_patch(stmt, node, now, &why)) != NULL)
		patch_node(out, st->nodes, key, out->owner_uid, patch, "taint", why);

	stmt = controller_stmt(st->stmt[STMT_LABELS]);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	if ((patch = label_patch(stmt, &why)) != NULL)
		patch_node(out, st->nodes, key, out->owner_uid, patch, "label", why);
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
nodelifecycle_handle_event(struct controller *c, const struct informer_event *ev,
    double now, const struct controller_queue *q)
{
	const char *name;

	(void)c;
	(void)now;
	if (strcmp(ev->resource->name, "nodes") != 0)
		return;
	name = json_string(ev->object, "metadata.name");
	if (*name != '\0')
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

static int
nodelifecycle_init(struct controller *c, char **error)
{
	struct nodelifecycle_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->nodes = resource_find("nodes");
	if (st->nodes == NULL)
		return error_set(error, "nodelifecycle: nodes is not a known resource");
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
	free(st);
	c->state = NULL;
}

static const char *const nodelifecycle_resources[] = { "nodes", NULL };

const struct controller_type nodelifecycle_controller_type = {
	.name = "nodelifecycle",
	.resources = nodelifecycle_resources,
	.default_workers = 8,		/* kube's UpdateWorkerSize; no flag */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "node-controller",
	.recovery = NULL,
	.init = nodelifecycle_init,
	.fini = nodelifecycle_fini,
	.handle_event = nodelifecycle_handle_event,
	.list_keys = nodelifecycle_list_keys,
	.sync = nodelifecycle_sync,
};
