/*
 * legacytokencleaner.c - the legacy service account token cleaner (kube's
 * legacy-serviceaccount-token-cleaner-controller, alias
 * legacy-service-account-token-cleaner).
 *
 * kube's cleaner passes over every service account token Secret once a day; here a key is
 * one such Secret (namespace/name), synced when it or the tracking ConfigMap changes and
 * again a day (kube's sync interval) after each sync. With P the clean-up period
 * (--legacy-service-account-token-clean-up-period, 8760h) and "today" now's UTC date, a
 * sync does nothing until P has passed since the day after the date the apiserver began
 * tracking the use of legacy tokens (kube-system's
 * kube-apiserver-legacy-service-account-token-tracking ConfigMap, data "since"; none, or
 * a date that does not parse: nothing). Then, as kube's evaluateSATokens, a token Secret
 * is left alone when it was made less than P ago, is being deleted, carries a last-used
 * label (kubernetes.io/legacy-token-last-used) that does not parse or is no earlier than
 * the date P ago, is not listed in the secrets of the ServiceAccount its annotations name
 * (only auto-generated tokens are cleaned), or is used by a pod of its namespace
 * (schema/029's pod_secret_names). Otherwise one whose
 * kubernetes.io/legacy-token-invalid-since label is missing or does not parse gets it, as
 * today (a merge patch naming its uid); one labelled invalid since a date earlier than P
 * ago is deleted, with its resourceVersion as precondition. The view legacy_token_secrets
 * shows what the cache says of each; the dates are compared here.
 *
 * kube reads the tracking ConfigMap live at each pass; sqlkcm reads the cached one. A
 * write that fails is retried with backoff, where kube logs it and waits for its next
 * pass.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/legacytokencleaner.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

#define DAY_SECONDS 86400.0
#define INVALID_SINCE_LABEL "kubernetes.io/legacy-token-invalid-since"
#define TRACKING_CONFIGMAP "kube-apiserver-legacy-service-account-token-tracking"

enum {
	STMT_SECRET,
	STMT_TRACKING,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const cleaner_sql[STMT_COUNT] = {
	[STMT_SECRET] =
	    "SELECT uid, resource_version, creation_timestamp, deleting, last_used,"
	    " invalid_since, referenced, mounted"
	    " FROM legacy_token_secrets WHERE namespace = ?1 AND name = ?2",
	[STMT_TRACKING] = "SELECT since FROM legacy_token_tracking",
	[STMT_KEYS] =
	    ("SELECT namespace || '/' || name FROM legacy_token_secrets"
	    " ORDER BY namespace, name"),
};

struct cleaner_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *secrets;
	double period;		/* seconds */
};

/* Reads a date as Go's time.Parse("2006-01-02") does (four-digit year, two-digit month
 * and day of that month, nothing more) into *out (its midnight UTC); 0, or -1 when it
 * does not parse. */
static int
parse_date(const char *s, double *out)
{
	struct tm tm;
	int y, m, d, n = 0;
	static const int days[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (s == NULL || strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return -1;
	for (int i = 0; i < 10; i++) {
		if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9'))
			return -1;
	}
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &m, &d, &n) != 3 || n != 10 || m < 1 || m > 12 ||
	    d < 1 || d > days[m - 1])
		return -1;
	if (m == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
		return -1;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = m - 1;
	tm.tm_mday = d;
	*out = (double)timegm(&tm);
	return 0;
}

/* Writes the UTC date of t as "2006-01-02" into out. */
static void
format_date(double t, char out[16])
{
	time_t secs = (time_t)t;
	struct tm tm;

	if (t < 0 && (double)secs != t)
		secs--;		/* toward the earlier second, as Go's Time */
	gmtime_r(&secs, &tm);
	strftime(out, 16, "%Y-%m-%d", &tm);
}

static char *
column_dup(sqlite3_stmt *stmt, int col)
{
	const char *text = (const char *)sqlite3_column_text(stmt, col);

	return text != NULL ? xstrdup(text) : NULL;
}

static int
cleaner_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct cleaner_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_TRACKING]);
	const char *slash = strchr(key, '/');
	char *ns = NULL, *since = NULL, *rv = NULL, *created = NULL, *last_used = NULL;
	char *invalid_since = NULL, today[16], preserve_used[16];
	double tracked, since_day, invalid_day;
	time_t created_at;
	int rc, deleting = 0, referenced = 0, mounted = 0, found = 0;
	struct action *a;
	cJSON *metadata, *labels;

	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->secrets;
	if (slash == NULL)
		return 0;
	/* kube's pass comes again a day later, whatever it did. */
	out->requeue_after = DAY_SECONDS;
	if (sqlite3_step(stmt) == SQLITE_ROW)
		since = column_dup(stmt, 0);
	sqlite3_reset(stmt);
	if (parse_date(since, &since_day) != 0)
		goto done;		/* kube's pass ends at its error */
	tracked = since_day + DAY_SECONDS;	/* the latest the tracking may have begun */
	if (now < tracked + st->period)
		goto done;
	format_date(now - st->period, preserve_used);
	ns = xstrndup(key, (size_t)(slash - key));
	stmt = controller_stmt(st->stmt[STMT_SECRET]);
	sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, slash + 1, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		found = 1;
		out->owner_uid = column_dup(stmt, 0);
		rv = column_dup(stmt, 1);
		created = column_dup(stmt, 2);
		deleting = sqlite3_column_int(stmt, 3);
		if (sqlite3_column_type(stmt, 4) != SQLITE_NULL)
			last_used = column_dup(stmt, 4);
		invalid_since = column_dup(stmt, 5);
		referenced = sqlite3_column_int(stmt, 6);
		mounted = sqlite3_column_int(stmt, 7);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		error_set(error, "legacy-service-account-token-cleaner: reading %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		free(ns);
		free(since);
		return -1;
	}
	if (!found) {
		out->requeue_after = 0;		/* gone */
		goto done;
	}
	/* Made P ago or later (a time that does not parse is the zero time: earlier). */
	if (created != NULL && time_parse_rfc3339(created, &created_at) == 0 &&
	    !((double)created_at < now - st->period))
		goto done;
	if (deleting)
		goto done;
	if (last_used != NULL) {
		double unused;

		if (parse_date(last_used, &unused) != 0) {
			log_warning("legacy-service-account-token-cleaner: %s: the %s label "
			    "\"%s\" is no date", key, "kubernetes.io/legacy-token-last-used",
			    last_used);
			goto done;
		}
		if (strcmp(last_used, preserve_used) >= 0)
			goto done;
	}
	if (!referenced || mounted)
		goto done;
	format_date(now, today);
	if (parse_date(invalid_since, &invalid_day) != 0) {
		a = action_append(&out->writes, &out->nwrites);
		a->type = ACTION_PATCH;
		a->merge_patch = 1;
		a->verb = "invalidate";
		a->resource = st->secrets;
		a->namespace = xstrdup(ns);
		a->name = xstrdup(slash + 1);
		a->uid = xstrdup(out->owner_uid);
		a->body = cJSON_CreateObject();
		cJSON_AddStringToObject(a->body, "kind", "Secret");
		cJSON_AddStringToObject(a->body, "apiVersion", "v1");
		metadata = cJSON_AddObjectToObject(a->body, "metadata");
		cJSON_AddStringToObject(metadata, "name", slash + 1);
		cJSON_AddStringToObject(metadata, "namespace", ns);
		cJSON_AddStringToObject(metadata, "uid", out->owner_uid);
		labels = cJSON_AddObjectToObject(metadata, "labels");
		cJSON_AddStringToObject(labels, INVALID_SINCE_LABEL, today);
		a->reason = xasprintf("unused since before %s, not mounted: invalid since %s",
		    preserve_used, today);
		goto done;
	}
	if (strcmp(invalid_since, preserve_used) >= 0)
		goto done;
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_DELETE;
	a->verb = "delete";
	a->resource = st->secrets;
	a->namespace = xstrdup(ns);
	a->name = xstrdup(slash + 1);
	a->uid = xstrdup(out->owner_uid);
	a->precondition_rv = rv != NULL ? xstrdup(rv) : NULL;
	a->reason = xasprintf("invalid since %s, before %s", invalid_since, preserve_used);
done:
	free(ns);
	free(since);
	free(rv);
	free(created);
	free(last_used);
	free(invalid_since);
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
cleaner_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct cleaner_state *st = c->state;
	const char *ns = json_string(ev->object, "metadata.namespace");
	const char *name = json_string(ev->object, "metadata.name");
	char *key, *error = NULL;

	(void)now;
	if (strcmp(ev->resource->name, "secrets") == 0) {
		if (strcmp(json_string(ev->object, "type"),
		    "kubernetes.io/service-account-token") != 0 || ev->type == INFORMER_DELETED)
			return;
		key = xasprintf("%s/%s", ns, name);
		q->add(key, q->arg);
		free(key);
		return;
	}
	/* The tracking ConfigMap: every token Secret. */
	if (strcmp(ev->resource->name, "configmaps") != 0 ||
	    strcmp(ns, "kube-system") != 0 || strcmp(name, TRACKING_CONFIGMAP) != 0)
		return;
	if (controller_list_keys_of(st->stmt[STMT_KEYS], "legacy-service-account-token-cleaner",
	    queue_one, (void *)q, &error) != 0) {
		log_error("%s", error);
		free(error);
	}
}

static int
cleaner_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct cleaner_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS],
	    "legacy-service-account-token-cleaner", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
cleaner_init(struct controller *c, char **error)
{
	struct cleaner_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->secrets = resource_find("secrets");
	st->period = controller_flag_seconds(c,
	    "legacy-service-account-token-clean-up-period");
	if (st->secrets == NULL)
		return error_set(error, "legacy-service-account-token-cleaner: secrets is not "
		    "a known resource");
	if (!(st->period > 0))
		return error_set(error, "legacy-service-account-token-cleaner: invalid "
		    "CleanUpPeriod: --legacy-service-account-token-clean-up-period must be "
		    "positive");
	return store_prepare_statements(store_db(c->store), cleaner_sql, STMT_COUNT, st->stmt,
	    "legacy-service-account-token-cleaner", error);
}

static void
cleaner_fini(struct controller *c)
{
	struct cleaner_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const struct controller_flag cleaner_flags[] = {
	{ "legacy-service-account-token-clean-up-period", CONTROLLER_FLAG_DURATION,
	    "8760h0m0s", 0, 0,
	    "how long an auto-generated legacy token must go unused before it is labelled "
	    "invalid, and then before it is deleted" },
	{ NULL, CONTROLLER_FLAG_STRING, NULL, 0, 0, NULL },
};

static const char *const cleaner_resources[] = { "secrets", "serviceaccounts", "pods",
	"configmaps", NULL };

const struct controller_type legacytokencleaner_controller_type = {
	.name = "legacy-service-account-token-cleaner",
	.resources = cleaner_resources,
	.default_workers = 1,		/* kube's one pass at a time */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = cleaner_flags,
	.event_component = "legacy-service-account-token-cleaner",
	.client_name = "legacy-service-account-token-cleaner",
	.recovery = NULL,
	.init = cleaner_init,
	.fini = cleaner_fini,
	.handle_event = cleaner_handle_event,
	.list_keys = cleaner_list_keys,
	.sync = cleaner_sync,
};
