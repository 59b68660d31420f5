/*
 * ttlafterfinished.c - the TTL-after-finished controller (kube's
 * ttl-after-finished-controller).
 *
 * A key is a Job's namespace/name. A Job is the controller's business when it has
 * spec.ttlSecondsAfterFinished and has finished: a Complete or Failed condition with
 * status True, whose lastTransitionTime is the finish time. Once finish time + TTL has
 * passed, and the Job is not being deleted already, the sync deletes it with
 * propagationPolicy Foreground (its pods go first, by the garbage collector) and the
 * Job's uid as precondition. Before that, a sync whose Job has not expired yet is synced
 * again when it does; a finished Job whose finish time cannot be read is an error (the key
 * backs off), as in kube.
 *
 * kube re-reads the Job live before it deletes it and checks the TTL again on what it
 * read, since the cache may lag a change of the TTL. sqlkcm makes the same guarantee with
 * the delete itself: it carries the cached resourceVersion as a second precondition, so
 * the apiserver refuses it (409) when the Job has changed since the cache saw it; the key
 * then backs off and is judged again on the newer Job. The difference: a Job changed in a
 * way that does not matter (a label) costs one refused request and a retry, where kube's
 * GET costs one request every time.
 *
 * kube's metric ttl_after_finished_controller_job_deletion_duration_seconds is not kept
 * yet. kube runs --concurrent-ttl-after-finished-syncs workers (5).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/ttlafterfinished.h"
#include "json.h"
#include "resource.h"
#include "restops.h"
#include "timeutil.h"
#include "util.h"

enum {
	STMT_JOB,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const ttlafterfinished_sql[STMT_COUNT] = {
	/* Job ?2 in namespace ?1 if cached: uid, resourceVersion, whether it is being
	 * deleted, body. */
	[STMT_JOB] =
	    "SELECT uid, resource_version, deletion_timestamp IS NOT NULL, body"
	    " FROM cache_objects WHERE resource = 'jobs' AND namespace = ?1 AND name = ?2",
	/* Every cached Job with a TTL after it finishes. */
	[STMT_KEYS] =
	    "SELECT namespace, name FROM cache_objects WHERE resource = 'jobs'"
	    " AND json_type(body, '$.spec.ttlSecondsAfterFinished') = 'integer'"
	    " ORDER BY namespace, name",
};

struct ttlafterfinished_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *jobs;
};

/* --- the rules ------------------------------------------------------------------------- */

/* The finishing condition of job (Complete or Failed, status True), or NULL. */
static const cJSON *
finished_condition(const cJSON *job)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_path(job, "status.conditions")) {
		const char *type = json_string(c, "type");

		if ((strcmp(type, "Complete") == 0 || strcmp(type, "Failed") == 0) &&
		    strcmp(json_string(c, "status"), "True") == 0)
			return c;
	}
	return NULL;
}

/* The TTL of job in *ttl: 1 when it has one (a whole number), else 0. */
static int
ttl_seconds(const cJSON *job, double *ttl)
{
	const cJSON *v = json_path(job, "spec.ttlSecondsAfterFinished");

	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
		return 0;
	*ttl = v->valuedouble;
	return 1;
}

int
ttlafterfinished_needs_cleanup(const cJSON *job)
{
	double ttl;

	return ttl_seconds(job, &ttl) && finished_condition(job) != NULL;
}

int
ttlafterfinished_time_left(const cJSON *job, double now, double *left, double *expire_at,
    char **error)
{
	const cJSON *c = finished_condition(job);
	const char *ns = json_string(job, "metadata.namespace");
	const char *name = json_string(job, "metadata.name");
	double ttl;
	time_t at;

	if (c == NULL || !ttl_seconds(job, &ttl))
		return error_set(error, "job %s/%s should not be cleaned up", ns, name);
	if (time_parse_rfc3339(json_string(c, "lastTransitionTime"), &at) != 0)
		return error_set(error, "unable to find the time when the Job %s/%s finished",
		    ns, name);
	*expire_at = (double)at + ttl;
	*left = *expire_at - now;
	return 0;
}

/* --- sync ------------------------------------------------------------------------------ */

static int
ttlafterfinished_sync(struct controller *c, const char *key, double now,
    struct sync_result *out, char **error)
{
	struct ttlafterfinished_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_JOB]);
	char *ns, *rv = NULL;
	const char *name;
	double left, expire_at;
	int rc, deleting = 0;
	struct action *a;

	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->jobs;
	if (controller_key_split(key, &ns, &name) != 0)
		return error_set(error, "ttl-after-finished: %s is not a namespace/name key", key);
	sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		rv = xstrdup((const char *)sqlite3_column_text(stmt, 1));
		deleting = sqlite3_column_int(stmt, 2);
		out->owner = controller_column_json(stmt, 3);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		free(ns);
		return error_set(error, "ttl-after-finished: reading job %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
	}
	if (rc == SQLITE_DONE) {
		free(ns);
		out->forget_expectations = 1;
		return 0;
	}
	if (out->owner == NULL) {
		free(ns);
		free(rv);
		return error_set(error, "ttl-after-finished: job %s: the cached body is not JSON",
		    key);
	}
	if (deleting || !ttlafterfinished_needs_cleanup(out->owner)) {
		free(ns);
		free(rv);
		return 0;
	}
	if (ttlafterfinished_time_left(out->owner, now, &left, &expire_at, error) != 0) {
		free(ns);
		free(rv);
		return -1;
	}
	if (left > 0) {
		out->requeue_after = left;
		free(ns);
		free(rv);
		return 0;
	}
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_DELETE;
	a->verb = "delete";
	a->resource = st->jobs;
	a->namespace = ns;
	a->name = xstrdup(name);
	a->uid = xstrdup(out->owner_uid);
	a->precondition_rv = rv;
	a->propagation = RESTOPS_PROPAGATE_FOREGROUND;
	a->reason = xasprintf("finished, and its ttlSecondsAfterFinished passed %.0f s ago",
	    -left);
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

/* kube's addJob and updateJob: a Job not being deleted that is to be cleaned up. */
static void
ttlafterfinished_handle_event(struct controller *c, const struct informer_event *ev,
    double now, const struct controller_queue *q)
{
	const char *ns = json_string(ev->object, "metadata.namespace");
	const char *name = json_string(ev->object, "metadata.name");
	char *key;

	(void)c;
	(void)now;
	if (ev->type == INFORMER_DELETED || strcmp(ev->resource->name, "jobs") != 0 ||
	    *name == '\0' || json_path(ev->object, "metadata.deletionTimestamp") != NULL ||
	    !ttlafterfinished_needs_cleanup(ev->object))
		return;
	key = xasprintf("%s/%s", ns, name);
	q->add(key, q->arg);
	free(key);
}

static int
ttlafterfinished_list_keys(struct controller *c, void (*cb)(const char *key, void *arg),
    void *arg, char **error)
{
	struct ttlafterfinished_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "ttl-after-finished", cb, arg,
	    error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
ttlafterfinished_init(struct controller *c, char **error)
{
	struct ttlafterfinished_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->jobs = resource_find("jobs");
	if (st->jobs == NULL)
		return error_set(error, "ttl-after-finished: jobs is not a known resource");
	return store_prepare_statements(store_db(c->store), ttlafterfinished_sql, STMT_COUNT,
	    st->stmt, "ttl-after-finished", error);
}

static void
ttlafterfinished_fini(struct controller *c)
{
	struct ttlafterfinished_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const char *const ttlafterfinished_resources[] = { "jobs", NULL };

const struct controller_type ttlafterfinished_controller_type = {
	.name = "ttl-after-finished",
	.resources = ttlafterfinished_resources,
	.default_workers = 5,
	.workers_flag = "concurrent-ttl-after-finished-syncs",
	.workers_help = "finished Jobs checked for their TTL at once",
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "ttlafterfinished-controller",
	.client_name = "ttl-after-finished-controller",
	.recovery = NULL,
	.init = ttlafterfinished_init,
	.fini = ttlafterfinished_fini,
	.handle_event = ttlafterfinished_handle_event,
	.list_keys = ttlafterfinished_list_keys,
	.sync = ttlafterfinished_sync,
};
