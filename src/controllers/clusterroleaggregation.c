/*
 * clusterroleaggregation.c - the ClusterRole aggregation controller (kube's
 * clusterrole-aggregation-controller, alias clusterrole-aggregation).
 *
 * A key is the name of a ClusterRole. One with an aggregationRule should hold, in this
 * order, the rules of the other ClusterRoles that each of its clusterRoleSelectors picks
 * (selector by selector, the roles of one selector by name, each role's rules in its own
 * order), every rule once, where it first comes. Two rules are the same when their five
 * lists are (a missing list is an empty one, as kube's semantic equality has it). The view
 * clusterrole_aggregation_rules (schema/029-access.sql) is that decision; the sync reads it
 * for its role beside the rules the role holds (clusterrole_rules) and, when they differ,
 * sends what kube sends: a forced server-side apply, as field manager
 * clusterrole-aggregation-controller, of the role's name and its wanted rules (no rules at
 * all when none is wanted, as kube's apply configuration leaves the list out then).
 *
 * A selector kube's validation refuses (an unknown operator, In or NotIn without values,
 * a key that is no label key) fails the sync, which is retried with backoff, as kube's
 * returns the selector's error; nothing is written for that role meanwhile.
 *
 * Every change to any ClusterRole queues every aggregated role, as kube's handlers do;
 * list_keys gives every aggregated role. kube runs 5 workers and has no flag for them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "controllers/clusterroleaggregation.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "selector.h"
#include "util.h"

enum {
	STMT_ROLE,
	STMT_WANTED,
	STMT_HELD,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const clusterroleaggregation_sql[STMT_COUNT] = {
	/* ClusterRole ?1 if cached: its uid and its aggregationRule (NULL: none). */
	[STMT_ROLE] =
	    "SELECT uid, json_extract(body, '$.aggregationRule')"
	    " FROM cache_objects WHERE resource = 'clusterroles' AND namespace = ''"
	    " AND name = ?1",
	/* The rules ClusterRole ?1 should hold, in order. */
	[STMT_WANTED] =
	    "SELECT rule FROM clusterrole_aggregation_rules WHERE role = ?1 ORDER BY position",
	/* The rules it holds, in order. */
	[STMT_HELD] =
	    "SELECT rule FROM clusterrole_rules WHERE role = ?1 ORDER BY rule_index",
	/* Every cached ClusterRole with an aggregationRule. */
	[STMT_KEYS] =
	    ("SELECT name FROM cache_objects WHERE resource = 'clusterroles' AND namespace = ''"
	    " AND json_type(body, '$.aggregationRule') = 'object' ORDER BY name"),
};

struct clusterroleaggregation_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *clusterroles;
};

/* --- sync ------------------------------------------------------------------------------ */

/* Reads the rules stmt gives for role into a JSON array (*out, NULL first); 0 or -1. */
static int
read_rules(struct controller *c, sqlite3_stmt *stmt, const char *role, cJSON **out,
    char **error)
{
	cJSON *rules = cJSON_CreateArray(), *rule;
	int rc;

	stmt = controller_stmt(stmt);
	sqlite3_bind_text(stmt, 1, role, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		rule = cJSON_Parse((const char *)sqlite3_column_text(stmt, 0));
		if (rule == NULL) {
			rc = SQLITE_ERROR;
			break;
		}
		cJSON_AddItemToArray(rules, rule);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		cJSON_Delete(rules);
		return error_set(error, "clusterrole-aggregation: reading the rules of %s: %s",
		    role, sqlite3_errmsg(store_db(c->store)));
	}
	*out = rules;
	return 0;
}

/* NULL when every selector of rule (an aggregationRule) is one kube accepts, else why not
 * (malloc'd). */
static char *
invalid_selector(const cJSON *rule)
{
	const cJSON *selectors = json_path(rule, "clusterRoleSelectors"), *s;
	struct selector *parsed;
	char *why = NULL, *message;
	int i = 0;

	cJSON_ArrayForEach(s, selectors) {
		/* A null element is an empty selector, which selects every role. */
		if (!cJSON_IsNull(s)) {
			parsed = selector_from_json(s, &why);
			if (parsed == NULL) {
				message = xasprintf("clusterRoleSelectors[%d]: %s", i, why);
				free(why);
				return message;
			}
			selector_free(parsed);
		}
		i++;
	}
	return NULL;
}

static int
clusterroleaggregation_sync(struct controller *c, const char *key, double now,
    struct sync_result *out, char **error)
{
	struct clusterroleaggregation_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_ROLE]);
	cJSON *rule = NULL, *wanted = NULL, *held = NULL, *apply, *metadata;
	char *invalid;
	struct action *a;
	int rc;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->clusterroles;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		if (sqlite3_column_type(stmt, 1) == SQLITE_TEXT)
			rule = cJSON_Parse((const char *)sqlite3_column_text(stmt, 1));
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "clusterrole-aggregation: reading %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_DONE) {
		out->forget_expectations = 1;	/* gone: nothing to do */
		return 0;
	}
	if (!cJSON_IsObject(rule)) {		/* no aggregationRule: not aggregated */
		cJSON_Delete(rule);
		return 0;
	}
	invalid = invalid_selector(rule);
	cJSON_Delete(rule);
	if (invalid != NULL) {
		log_warning("clusterrole-aggregation: %s: %s", key, invalid);
		free(invalid);
		out->failed = 1;
		return 0;
	}
	if (read_rules(c, st->stmt[STMT_WANTED], key, &wanted, error) != 0)
		return -1;
	if (read_rules(c, st->stmt[STMT_HELD], key, &held, error) != 0) {
		cJSON_Delete(wanted);
		return -1;
	}
	if (cJSON_Compare(wanted, held, 1)) {
		cJSON_Delete(wanted);
		cJSON_Delete(held);
		return 0;
	}
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_PATCH;
	a->verb = "apply";
	a->field_manager = CLUSTERROLEAGGREGATION_FIELD_MANAGER;
	a->resource = st->clusterroles;
	a->namespace = xstrdup("");
	a->name = xstrdup(key);
	a->uid = xstrdup(out->owner_uid);
	a->reason = xasprintf("holds %d rules, its selectors want %d",
	    cJSON_GetArraySize(held), cJSON_GetArraySize(wanted));
	apply = cJSON_CreateObject();
	cJSON_AddStringToObject(apply, "kind", "ClusterRole");
	cJSON_AddStringToObject(apply, "apiVersion", "rbac.authorization.k8s.io/v1");
	metadata = cJSON_AddObjectToObject(apply, "metadata");
	cJSON_AddStringToObject(metadata, "name", key);
	if (cJSON_GetArraySize(wanted) > 0)
		cJSON_AddItemToObject(apply, "rules", wanted);
	else
		cJSON_Delete(wanted);
	a->body = apply;
	cJSON_Delete(held);
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
queue_one(const char *key, void *arg)
{
	const struct controller_queue *q = arg;

	q->add(key, q->arg);
}

static void
clusterroleaggregation_handle_event(struct controller *c, const struct informer_event *ev,
    double now, const struct controller_queue *q)
{
	struct clusterroleaggregation_state *st = c->state;
	char *error = NULL;

	(void)now;
	if (strcmp(ev->resource->name, "clusterroles") != 0)
		return;
	/* Any role may be picked by any aggregated one: queue them all. */
	if (controller_list_keys_of(st->stmt[STMT_KEYS], "clusterrole-aggregation", queue_one,
	    (void *)q, &error) != 0) {
		log_error("%s", error);
		free(error);
	}
}

static int
clusterroleaggregation_list_keys(struct controller *c,
    void (*cb)(const char *key, void *arg), void *arg, char **error)
{
	struct clusterroleaggregation_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "clusterrole-aggregation", cb, arg,
	    error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
clusterroleaggregation_init(struct controller *c, char **error)
{
	struct clusterroleaggregation_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->clusterroles = resource_find("clusterroles");
	if (st->clusterroles == NULL)
		return error_set(error,
		    "clusterrole-aggregation: clusterroles is not a known resource");
	return store_prepare_statements(store_db(c->store), clusterroleaggregation_sql,
	    STMT_COUNT, st->stmt, "clusterrole-aggregation", error);
}

static void
clusterroleaggregation_fini(struct controller *c)
{
	struct clusterroleaggregation_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const char *const clusterroleaggregation_resources[] = { "clusterroles", NULL };

const struct controller_type clusterroleaggregation_controller_type = {
	.name = "clusterrole-aggregation",
	.resources = clusterroleaggregation_resources,
	.default_workers = 5,		/* kube starts it with 5; no flag */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "clusterrole-aggregation-controller",
	.client_name = "clusterrole-aggregation-controller",
	.recovery = NULL,
	.init = clusterroleaggregation_init,
	.fini = clusterroleaggregation_fini,
	.handle_event = clusterroleaggregation_handle_event,
	.list_keys = clusterroleaggregation_list_keys,
	.sync = clusterroleaggregation_sync,
};
