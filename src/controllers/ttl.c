/*
 * ttl.c - the TTL controller (kube's ttl-controller): every node's
 * node.alpha.kubernetes.io/ttl annotation says how long a kubelet may cache the Secrets
 * and ConfigMaps its pods use, longer in larger clusters.
 *
 * The desired TTL follows the number of nodes through kube's boundaries, with their
 * hysteresis: a cluster moves up a step once it has more nodes than the step's maximum,
 * and down once it has fewer than its minimum, one step per node added or deleted.
 *
 *   step  nodes (min..max)   TTL
 *   0     0..100             0 s
 *   1     90..500            15 s
 *   2     450..1000          30 s
 *   3     900..2000          60 s
 *   4     1800..             300 s
 *
 * As in kube, the count and the step are the controller's memory, not the cache's: at
 * start they are what adding the cached nodes one by one gives (kube's informer adds them
 * so at its first list), then each node added or deleted moves them. A key is a node's
 * name; its sync patches the annotation when it is missing, not a whole number, or not the
 * desired TTL. The handlers queue a node when it is added or updated (not when the TTL
 * changes: the others follow at their next update, as in kube). kube runs 5 workers.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/ttl.h"
#include "json.h"
#include "resource.h"
#include "util.h"

#define TTL_ANNOTATION "node.alpha.kubernetes.io/ttl"

static const struct {
	int size_min, size_max, seconds;
} ttl_boundaries[] = {
	{ 0, 100, 0 },
	{ 90, 500, 15 },
	{ 450, 1000, 30 },
	{ 900, 2000, 60 },
	{ 1800, INT_MAX, 300 },
};
#define TTL_STEPS ((int)(sizeof ttl_boundaries / sizeof ttl_boundaries[0]))

void
ttl_size_node_added(struct ttl_size *s)
{
	s->count++;
	if (s->step + 1 < TTL_STEPS && s->count > ttl_boundaries[s->step].size_max)
		s->step++;
}

void
ttl_size_node_deleted(struct ttl_size *s)
{
	s->count--;
	if (s->step > 0 && s->count < ttl_boundaries[s->step].size_min)
		s->step--;
}

int
ttl_size_seconds(const struct ttl_size *s)
{
	return ttl_boundaries[s->step].seconds;
}

enum {
	STMT_NODE,
	STMT_COUNT_NODES,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const ttl_sql[STMT_COUNT] = {
	/* Node ?1 if cached: its uid and its TTL annotation (NULL: none). */
	[STMT_NODE] =
	    "SELECT uid, json_extract(body, '$.metadata.annotations.\"" TTL_ANNOTATION "\"')"
	    " FROM cache_objects WHERE resource = 'nodes' AND namespace = '' AND name = ?1",
	[STMT_COUNT_NODES] =
	    "SELECT count(*) FROM cache_objects WHERE resource = 'nodes' AND namespace = ''",
	/* Every cached node. */
	[STMT_KEYS] =
	    ("SELECT name FROM cache_objects WHERE resource = 'nodes' AND namespace = ''"
	    " ORDER BY name"),
};

struct ttl_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *nodes;
	struct ttl_size size;
};

/* --- sync ------------------------------------------------------------------------------ */

/* Reads text as Go's strconv.Atoi does (an optional sign, then decimal digits, within 64
 * bits); 0 when it is not such a number. */
static int
ttl_parse(const char *text, long long *out)
{
	const char *p = text;
	char *end;

	if (*p == '+' || *p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != '\0')
		return 0;
	errno = 0;
	*out = strtoll(text, &end, 10);
	return errno == 0 && *end == '\0';
}

static int
ttl_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct ttl_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_NODE]);
	int rc, desired = ttl_size_seconds(&st->size), found = 0;
	long long current = 0;
	char *annotation = NULL, value[16];
	struct action *a;
	cJSON *annotations;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->nodes;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(stmt, 1);

		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		if (sqlite3_column_type(stmt, 1) == SQLITE_TEXT) {
			annotation = xstrdup(text);
			found = ttl_parse(text, &current);
		}
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "ttl: reading node %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_DONE) {
		out->forget_expectations = 1;	/* gone: nothing to do */
		return 0;
	}
	if (found && current == desired) {
		free(annotation);
		return 0;
	}
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_PATCH;
	a->verb = "annotate";
	a->resource = st->nodes;
	a->namespace = xstrdup("");
	a->name = xstrdup(key);
	a->uid = xstrdup(out->owner_uid);
	a->body = cJSON_CreateObject();
	annotations = cJSON_AddObjectToObject(cJSON_AddObjectToObject(a->body, "metadata"),
	    "annotations");
	snprintf(value, sizeof value, "%d", desired);
	cJSON_AddItemToObject(annotations, TTL_ANNOTATION, cJSON_CreateString(value));
	a->reason = annotation == NULL ?
	    xasprintf("no %s annotation; a cluster of %d nodes wants %d", TTL_ANNOTATION,
	    st->size.count, desired) :
	    xasprintf("%s is \"%s\"; a cluster of %d nodes wants %d", TTL_ANNOTATION,
	    annotation, st->size.count, desired);
	free(annotation);
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
ttl_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct ttl_state *st = c->state;
	const char *name;

	(void)now;
	if (strcmp(ev->resource->name, "nodes") != 0)
		return;
	if (ev->type == INFORMER_DELETED) {
		ttl_size_node_deleted(&st->size);
		return;
	}
	if (ev->type == INFORMER_ADDED)
		ttl_size_node_added(&st->size);
	name = json_string(ev->object, "metadata.name");
	if (*name != '\0')
		q->add(name, q->arg);
}

static int
ttl_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct ttl_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "ttl", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
ttl_init(struct controller *c, char **error)
{
	struct ttl_state *st = xcalloc(1, sizeof *st);
	sqlite3_stmt *stmt;
	long long n = 0;

	c->state = st;
	st->nodes = resource_find("nodes");
	if (st->nodes == NULL)
		return error_set(error, "ttl: nodes is not a known resource");
	if (store_prepare_statements(store_db(c->store), ttl_sql, STMT_COUNT, st->stmt, "ttl",
	    error) != 0)
		return -1;
	/* The nodes the cache holds already, as if the informer had just added them. */
	stmt = controller_stmt(st->stmt[STMT_COUNT_NODES]);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		n = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	for (long long i = 0; i < n; i++)
		ttl_size_node_added(&st->size);
	return 0;
}

static void
ttl_fini(struct controller *c)
{
	struct ttl_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const char *const ttl_resources[] = { "nodes", NULL };

const struct controller_type ttl_controller_type = {
	.name = "ttl",
	.resources = ttl_resources,
	.default_workers = 5,		/* kube starts it with 5; no flag */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "ttl-controller",
	.client_name = "ttl-controller",
	.recovery = NULL,
	.init = ttl_init,
	.fini = ttl_fini,
	.handle_event = ttl_handle_event,
	.list_keys = ttl_list_keys,
	.sync = ttl_sync,
};
