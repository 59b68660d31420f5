/*
 * controller.c - what every controller is made of: created over a store with its
 * expectations and write records, its flags read back, the bookkeeping of a sync's result,
 * and the helpers controllers share. The list of controllers is registry.c's.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "controller.h"
#include "expectations.h"
#include "jsonspan.h"
#include "log.h"
#include "selector.h"
#include "timeutil.h"
#include "util.h"
#include "workqueue.h"

void
controller_queue_options(const struct controller_type *t, struct workqueue_options *qo)
{
	qo->max_delay = t->max_backoff;
	qo->base_delay = t->base_backoff;
}

int
controller_watches(const struct controller_type *t, const struct resource *resource)
{
	/* The garbage collector and the namespace controller hear of every resource. */
	if (t->watches_metadata)
		return 1;
	for (const char *const *name = t->resources; *name != NULL; name++) {
		if (strcmp(*name, resource->name) == 0)
			return 1;
	}
	return 0;
}

int
controller_record_result(struct controller *c, const struct sync_result *r, double now,
    char **error)
{
	const char **keys = NULL;
	int n = 0, rc;

	if (r->forget_expectations)
		return expectations_delete(c->expectations, r->key, error) != 0 ||
		    consistency_forget(c->writes, r->key, error) != 0 ? -1 : 0;
	if (r->nmanage == 0)
		return 0;
	if (!r->creating) {
		keys = xcalloc((size_t)r->nmanage, sizeof *keys);
		for (int i = 0; i < r->nmanage; i++)
			keys[n++] = xasprintf("%s/%s", r->manage[i].namespace, r->manage[i].name);
	}
	rc = expectations_expect(c->expectations, r->key, r->creating ? r->nmanage : 0, keys, n,
	    now, error);
	for (int i = 0; i < n; i++)
		free((char *)keys[i]);
	free(keys);
	return rc;
}

int
controller_flag_check(const struct controller_flag *f, const char *text, char **error)
{
	char *end;
	long long n;
	double seconds;

	switch (f->type) {
	case CONTROLLER_FLAG_INT:
		errno = 0;
		n = strtoll(text, &end, 10);
		if (*text == '\0' || *end != '\0' || errno != 0 || n < f->min || n > f->max)
			return error_set(error, "invalid value \"%s\" for --%s: want a whole "
			    "number from %lld to %lld", text, f->name, f->min, f->max);
		return 0;
	case CONTROLLER_FLAG_DURATION:
		if (time_parse_duration(text, &seconds) != 0 || seconds < 0)
			return error_set(error, "invalid value \"%s\" for --%s: want a duration "
			    "such as 30s or 5m0s", text, f->name);
		return 0;
	case CONTROLLER_FLAG_NUMBER:
		errno = 0;
		seconds = strtod(text, &end);
		if (*text == '\0' || *end != '\0' || errno != 0 || !(seconds >= (double)f->min) ||
		    !(seconds <= (double)f->max))
			return error_set(error, "invalid value \"%s\" for --%s: want a number "
			    "from %lld to %lld", text, f->name, f->min, f->max);
		return 0;
	case CONTROLLER_FLAG_STRING:
		return 0;
	case CONTROLLER_FLAG_BOOL:
		if (text_parse_bool(text, &(int){ 0 }) != 0)
			return error_set(error, "invalid value \"%s\" for --%s: want true or "
			    "false", text, f->name);
		return 0;
	}
	return error_set(error, "--%s: unknown flag type", f->name);
}

const char *
controller_flag_metavar(const struct controller_flag *f)
{
	switch (f->type) {
	case CONTROLLER_FLAG_INT:	return " N";
	case CONTROLLER_FLAG_NUMBER:	return " NUMBER";
	case CONTROLLER_FLAG_DURATION:	return " DURATION";
	case CONTROLLER_FLAG_BOOL:	return "[=BOOL]";
	case CONTROLLER_FLAG_STRING:	break;
	}
	return " VALUE";
}

/* Returns the declaration of c's flag called name and its index; aborts when c's type
 * declares none: a controller asking for a flag it did not declare is a bug. */
static const struct controller_flag *
controller_flag_find(const struct controller *c, const char *name, size_t *index)
{
	for (size_t i = 0; c->type->flags != NULL && c->type->flags[i].name != NULL; i++) {
		if (strcmp(c->type->flags[i].name, name) == 0) {
			*index = i;
			return &c->type->flags[i];
		}
	}
	log_error("controller %s: no flag --%s declared", c->type->name, name);
	abort();
}

const char *
controller_flag_text(const struct controller *c, const char *name)
{
	size_t i;
	const struct controller_flag *f = controller_flag_find(c, name, &i);

	if (c->config->flags != NULL && c->config->flags[i] != NULL)
		return c->config->flags[i];
	return f->default_value;
}

long long
controller_flag_int(const struct controller *c, const char *name)
{
	return strtoll(controller_flag_text(c, name), NULL, 10);
}

double
controller_flag_number(const struct controller *c, const char *name)
{
	return strtod(controller_flag_text(c, name), NULL);
}

int
controller_flag_bool(const struct controller *c, const char *name)
{
	int on = 0;

	return text_parse_bool(controller_flag_text(c, name), &on) == 0 && on;
}

double
controller_flag_seconds(const struct controller *c, const char *name)
{
	double seconds = 0;

	if (time_parse_duration(controller_flag_text(c, name), &seconds) != 0)
		return 0;
	return seconds;
}

struct controller *
controller_new(const struct controller_type *type, struct store *store,
    const struct controller_config *config, char **error)
{
	static const struct controller_config defaults;
	struct controller *c = xcalloc(1, sizeof *c);
	sqlite3 *db = store_db(store);

	c->type = type;
	c->store = store;
	c->config = config != NULL ? config : &defaults;
	if ((c->expectations = expectations_new(db, type->name, error)) == NULL ||
	    (c->writes = consistency_new(db, type->name, error)) == NULL ||
	    type->init(c, error) != 0) {
		controller_free(c);
		return NULL;
	}
	return c;
}

void
controller_free(struct controller *c)
{
	if (c == NULL)
		return;
	if (c->type->fini != NULL)
		c->type->fini(c);
	expectations_free(c->expectations);
	consistency_free(c->writes);
	free(c);
}

/* --- what controllers share ---------------------------------------------------------- */

int
controller_key_split(const char *key, char **namespace, const char **name)
{
	const char *slash = strchr(key, '/');

	if (slash == NULL || slash == key || slash[1] == '\0')
		return -1;
	*namespace = xstrndup(key, (size_t)(slash - key));
	*name = slash + 1;
	return 0;
}

sqlite3_stmt *
controller_stmt(sqlite3_stmt *stmt)
{
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return stmt;
}

double
controller_column_time(sqlite3_stmt *stmt, int col)
{
	const char *text = (const char *)sqlite3_column_text(stmt, col);
	time_t t;

	if (text == NULL || time_parse_rfc3339(text, &t) != 0)
		return 0;
	return (double)t;
}

char *
controller_column_strdup(sqlite3_stmt *stmt, int col)
{
	const char *text = (const char *)sqlite3_column_text(stmt, col);

	return text != NULL ? xstrdup(text) : NULL;
}

int
controller_read_owner(sqlite3_stmt *stmt, const char *key, const char *what,
    struct sync_result *out, char **error)
{
	const char *slash = strchr(key, '/');
	int rc;

	controller_stmt(stmt);
	if (slash != NULL)
		sqlite3_bind_text(stmt, 1, key, (int)(slash - key), SQLITE_TRANSIENT);
	else
		sqlite3_bind_text(stmt, 1, "", -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, slash != NULL ? slash + 1 : key, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = controller_column_strdup(stmt, 0);
		out->owner = controller_column_json(stmt, 1);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "%s: reading %s: %s", what, key,
		    sqlite3_errmsg(sqlite3_db_handle(stmt)));
	return 0;
}

int
controller_caught_up(struct controller *c, const char *key, const char *owner_uid,
    struct sync_result *out, char **error)
{
	const char *behind = NULL;
	int ready = 1;

	if (c->writes == NULL)		/* a world without the daemon's bookkeeping */
		return 1;
	if (consistency_ready(c->writes, key, owner_uid, &ready, &behind, error) != 0)
		return -1;
	if (ready)
		return 1;
	out->stale = 1;
	free(out->stale_resource);
	out->stale_resource = xstrdup(behind != NULL ? behind : "?");
	return 0;
}

cJSON *
controller_column_json(sqlite3_stmt *stmt, int col)
{
	const char *text = (const char *)sqlite3_column_text(stmt, col);

	return text != NULL ? json_parse_exact(text, (size_t)sqlite3_column_bytes(stmt, col)) :
	    NULL;
}

void
controller_enqueue_matching(sqlite3_stmt *stmt, const char *namespace, const cJSON *labels,
    const struct controller_queue *q)
{
	/* An object without labels has no owner to find, whatever the selectors say (kube's
	 * GetPodReplicaSets and GetDeploymentsForReplicaSet). */
	if (!cJSON_IsObject(labels) || labels->child == NULL)
		return;
	controller_stmt(stmt);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(stmt, 1);
		cJSON *json = text != NULL ? cJSON_Parse(text) : NULL;
		struct selector *sel = selector_from_json(json, NULL);

		/* An empty selector would match everything: kube skips those here. */
		if (sel != NULL && !selector_matches_everything(sel) &&
		    selector_matches(sel, labels)) {
			char *key = xasprintf("%s/%s", namespace, sqlite3_column_text(stmt, 0));
			q->add(key, q->arg);
			free(key);
		}
		selector_free(sel);
		cJSON_Delete(json);
	}
	sqlite3_reset(stmt);
}

/* At most this many namespaces' selectors are kept; the one looked up longest ago goes. */
#define SELECTOR_CACHE_NAMESPACES 64

struct selector_entry {
	char *name;
	struct selector *sel;
};

struct selector_namespace {
	char *namespace;
	struct selector_entry *entries;
	int n;
	unsigned long used;		/* when last looked up (a counter) */
	int incomplete;			/* the read failed: forgotten once used */
};

struct selector_cache {
	struct selector_namespace ns[SELECTOR_CACHE_NAMESPACES];
	int n;
	unsigned long clock;
	int match_empty;		/* empty selectors kept, matching everything */
};

struct selector_cache *
selector_cache_new(void)
{
	return xcalloc(1, sizeof(struct selector_cache));
}

static void
selector_namespace_clear(struct selector_namespace *ns)
{
	for (int i = 0; i < ns->n; i++) {
		free(ns->entries[i].name);
		selector_free(ns->entries[i].sel);
	}
	free(ns->entries);
	free(ns->namespace);
	memset(ns, 0, sizeof *ns);
}

void
selector_cache_free(struct selector_cache *cache)
{
	if (cache == NULL)
		return;
	for (int i = 0; i < cache->n; i++)
		selector_namespace_clear(&cache->ns[i]);
	free(cache);
}

void
selector_cache_match_empty(struct selector_cache *cache)
{
	cache->match_empty = 1;
}

void
selector_cache_forget(struct selector_cache *cache, const char *namespace)
{
	for (int i = 0; i < cache->n; i++) {
		if (strcmp(cache->ns[i].namespace, namespace) != 0)
			continue;
		selector_namespace_clear(&cache->ns[i]);
		cache->ns[i] = cache->ns[--cache->n];
		memset(&cache->ns[cache->n], 0, sizeof cache->ns[cache->n]);
		return;
	}
}

/* The selectors of namespace, read through stmt when not kept. */
static struct selector_namespace *
selector_cache_get(struct selector_cache *cache, sqlite3_stmt *stmt, const char *namespace)
{
	struct selector_namespace *ns = NULL;
	int cap = 0, rc;

	cache->clock++;
	for (int i = 0; i < cache->n; i++) {
		if (strcmp(cache->ns[i].namespace, namespace) == 0) {
			cache->ns[i].used = cache->clock;
			return &cache->ns[i];
		}
	}
	if (cache->n < SELECTOR_CACHE_NAMESPACES) {
		ns = &cache->ns[cache->n++];
	} else {
		ns = &cache->ns[0];
		for (int i = 1; i < cache->n; i++)
			if (cache->ns[i].used < ns->used)
				ns = &cache->ns[i];
		selector_namespace_clear(ns);
	}
	ns->namespace = xstrdup(namespace);
	ns->used = cache->clock;
	controller_stmt(stmt);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(stmt, 1);
		cJSON *json = text != NULL ? cJSON_Parse(text) : NULL;
		struct selector *sel = selector_from_json(json, NULL);

		cJSON_Delete(json);
		/* An empty selector would match everything: kube's owner lookups skip those. */
		if (sel == NULL || (!cache->match_empty && selector_matches_everything(sel))) {
			selector_free(sel);
			continue;
		}
		if (ns->n == cap) {
			cap = cap ? cap * 2 : 16;
			ns->entries = xrealloc(ns->entries, (size_t)cap * sizeof *ns->entries);
		}
		ns->entries[ns->n].name = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		ns->entries[ns->n++].sel = sel;
	}
	sqlite3_reset(stmt);
	ns->incomplete = rc != SQLITE_DONE;
	return ns;
}

void
controller_enqueue_matching_cached(struct selector_cache *cache, sqlite3_stmt *stmt,
    const char *namespace, const cJSON *labels, const struct controller_queue *q)
{
	struct selector_namespace *ns;

	if (!cache->match_empty && (!cJSON_IsObject(labels) || labels->child == NULL))
		return;
	ns = selector_cache_get(cache, stmt, namespace);
	for (int i = 0; i < ns->n; i++) {
		if (selector_matches(ns->entries[i].sel, labels)) {
			char *key = xasprintf("%s/%s", namespace, ns->entries[i].name);

			q->add(key, q->arg);
			free(key);
		}
	}
	if (ns->incomplete)
		selector_cache_forget(cache, namespace);
}

int
controller_list_keys_of(sqlite3_stmt *stmt, const char *what,
    void (*cb)(const char *key, void *arg), void *arg, char **error)
{
	int rc;

	controller_stmt(stmt);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		char *key;

		if (sqlite3_column_count(stmt) == 1) {
			cb((const char *)sqlite3_column_text(stmt, 0), arg);
			continue;
		}
		key = xasprintf("%s/%s", sqlite3_column_text(stmt, 0),
		    sqlite3_column_text(stmt, 1));
		cb(key, arg);
		free(key);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "%s: listing: %s", what,
		    sqlite3_errmsg(sqlite3_db_handle(stmt)));
	return 0;
}

static void
delayed_add(const char *key, void *arg)
{
	const struct controller_delayed_queue *d = arg;

	if (d->seconds > 0)
		d->q->add_after(key, d->seconds, d->q->arg);
	else
		d->q->add(key, d->q->arg);
}

const struct controller_queue *
controller_queue_delayed(struct controller_delayed_queue *d, const struct controller_queue *q,
    double seconds)
{
	d->q = q;
	d->seconds = seconds;
	d->queue.add = delayed_add;
	d->queue.add_after = NULL;
	d->queue.arg = d;
	return &d->queue;
}
