/*
 * serviceaccount.c - the serviceaccount controller: every active namespace has a
 * ServiceAccount named default.
 *
 * It follows kube-controller-manager's ServiceAccountsController (its default options:
 * the one ServiceAccount "default"). A key is a namespace's name. A sync, from the cache:
 *
 * 1. The namespace is not cached: nothing (it is gone; its bookkeeping is dropped).
 * 2. The cache has not caught up with this controller's last creation in it
 *    (consistency.c): wait, retry with backoff.
 * 3. The namespace is not Active (Terminating, or no phase): nothing.
 * 4. No ServiceAccount named default is cached in it: create one, a bare object with its
 *    name and namespace, as kube sends it. The serviceaccount_missing view
 *    (schema/008-serviceaccounts.sql) is that rule; the sync reads it for its namespace.
 *
 * A creation refused because the namespace is terminating is not an error (the executor
 * stops there without a retry), as in kube. One refused because the ServiceAccount exists
 * already (the cache lags) is retried with backoff, where kube takes it as done; the retry
 * finds it in the cache and does nothing.
 *
 * The handlers queue a namespace when it is added or updated (whatever its phase: the sync
 * decides) and when any ServiceAccount in it is deleted, as kube's do. A namespace's
 * deletion queues nothing. list_keys gives every cached namespace, as the namespace
 * informer's first list does in kube.
 *
 * The controller records no events: kube's has no event recorder.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "controllers/serviceaccount.h"
#include "json.h"
#include "resource.h"
#include "util.h"

enum {
	STMT_NAMESPACE,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const sa_sql[STMT_COUNT] = {
	/* Namespace ?1 if cached: its uid, and the ServiceAccount to create in it (NULL:
	 * none, it has one or is not active). */
	[STMT_NAMESPACE] =
	    "SELECT n.uid, m.serviceaccount FROM cache_objects n"
	    " LEFT JOIN serviceaccount_missing m ON m.namespace = n.name"
	    " WHERE n.resource = 'namespaces' AND n.namespace = '' AND n.name = ?1",
	/* Every cached namespace. */
	[STMT_KEYS] =
	    "SELECT name FROM cache_objects WHERE resource = 'namespaces' AND namespace = ''"
	    " ORDER BY name",
};

struct sa_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *namespaces;
	const struct resource *serviceaccounts;
};

/* --- sync ------------------------------------------------------------------------------ */

/* Appends the creation of ServiceAccount name in namespace to r. */
static void
create_serviceaccount(struct sync_result *r, const struct resource *serviceaccounts,
    const char *namespace, const char *name)
{
	struct action *a = action_append(&r->writes, &r->nwrites);
	cJSON *metadata;

	a->type = ACTION_CREATE;
	a->verb = "create";
	a->exists_ok = 1;	/* kube's: someone else made it, which is all we wanted */
	a->resource = serviceaccounts;
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(name);
	a->body = cJSON_CreateObject();
	cJSON_AddStringToObject(a->body, "apiVersion", serviceaccounts->api_version);
	cJSON_AddStringToObject(a->body, "kind", serviceaccounts->kind);
	metadata = cJSON_AddObjectToObject(a->body, "metadata");
	cJSON_AddStringToObject(metadata, "name", name);
	cJSON_AddStringToObject(metadata, "namespace", namespace);
	a->reason = xasprintf("namespace %s is active and has no ServiceAccount %s", namespace,
	    name);
}

static int
sa_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct sa_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_NAMESPACE]);
	char *missing = NULL;
	int rc, caught_up;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->namespaces;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		const char *sa = (const char *)sqlite3_column_text(stmt, 1);

		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		missing = sa != NULL ? xstrdup(sa) : NULL;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "serviceaccount: reading namespace %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_DONE) {
		/* Gone: nothing to create, nothing to wait for any more. */
		out->forget_expectations = 1;
		return 0;
	}
	if ((caught_up = controller_caught_up(c, key, out->owner_uid, out, error)) < 0) {
		free(missing);
		return -1;
	}
	if (caught_up && missing != NULL) {
		create_serviceaccount(out, st->serviceaccounts, key, missing);
	}
	free(missing);
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
sa_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct sa_state *st = c->state;
	const char *key = NULL;

	(void)now;
	if (strcmp(ev->resource->name, st->namespaces->name) == 0 &&
	    ev->type != INFORMER_DELETED)
		key = json_string(ev->object, "metadata.name");
	else if (strcmp(ev->resource->name, st->serviceaccounts->name) == 0 &&
	    ev->type == INFORMER_DELETED)
		key = json_string(ev->object, "metadata.namespace");
	if (key != NULL && *key != '\0')
		q->add(key, q->arg);
}

static int
sa_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct sa_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "serviceaccount", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
sa_init(struct controller *c, char **error)
{
	struct sa_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->namespaces = resource_find("namespaces");
	st->serviceaccounts = resource_find("serviceaccounts");
	if (st->namespaces == NULL || st->serviceaccounts == NULL)
		return error_set(error, "serviceaccount: namespaces and serviceaccounts are not "
		    "known resources");
	return store_prepare_statements(store_db(c->store), sa_sql, STMT_COUNT, st->stmt,
	    "serviceaccount", error);
}

static void
sa_fini(struct controller *c)
{
	struct sa_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const char *const sa_resources[] = { "namespaces", "serviceaccounts", NULL };

const struct controller_type serviceaccount_controller_type = {
	.name = "serviceaccount",
	.resources = sa_resources,
	.default_workers = 1,
	.workers_flag = NULL,		/* kube runs it with one worker, no flag */
	.enable_flag = NULL,
	.flags = NULL,
	/* kube's has no recorder; this is the name its client goes by. */
	.event_component = "service-account-controller",
	.client_name = "service-account-controller",
	.recovery = NULL,
	.init = sa_init,
	.fini = sa_fini,
	.handle_event = sa_handle_event,
	.list_keys = sa_list_keys,
	.sync = sa_sync,
};
