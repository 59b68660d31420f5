/*
 * controller.c - the controller registry: every controller sqlkcm has, found by name,
 * chosen with --controllers, created over a store.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "controller.h"
#include "controllers/deployment.h"
#include "controllers/garbagecollector.h"
#include "controllers/namespace.h"
#include "controllers/podgc.h"
#include "controllers/replicaset.h"
#include "controllers/rootcacertpublisher.h"
#include "controllers/serviceaccount.h"
#include "expectations.h"
#include "kcmflags.h"
#include "log.h"
#include "selector.h"
#include "timeutil.h"
#include "util.h"

const struct controller_type *const controller_types[] = {
	&replicaset_controller_type,
	&replicationcontroller_controller_type,
	&deployment_controller_type,
	&garbagecollector_controller_type,
	&namespace_controller_type,
	&serviceaccount_controller_type,
	&rootcacertpublisher_controller_type,
	&podgc_controller_type,
};
const int controller_type_count = sizeof controller_types / sizeof controller_types[0];

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

const struct controller_type *
controller_type_find(const char *name)
{
	for (int i = 0; i < controller_type_count; i++) {
		if (strcmp(controller_types[i]->name, name) == 0)
			return controller_types[i];
	}
	return NULL;
}

/* Returns 1 if the n bytes at text are s. */
static int
same(const char *text, size_t n, const char *s)
{
	return s != NULL && strlen(s) == n && strncmp(text, s, n) == 0;
}

/* Returns the index of the controller named by the n bytes at name, as sqlkcm or
 * kube-controller-manager names it (kcm's "replicaset-controller" and its older
 * "replicaset" alike); -2 for a controller of kube-controller-manager that sqlkcm does not
 * run; -1 for a name nobody knows. */
static int
controller_index(const char *name, size_t n)
{
	const char *kcm = NULL;

	for (int i = 0; i < controller_type_count; i++) {
		if (same(name, n, controller_types[i]->name))
			return i;
	}
	for (size_t k = 0; k < kcm_controller_count && kcm == NULL; k++) {
		if (same(name, n, kcm_controllers[k].name) || same(name, n, kcm_controllers[k].alias))
			kcm = kcm_controllers[k].name;
	}
	if (kcm == NULL)
		return -1;
	for (size_t k = 0; k < kcm_controller_count; k++) {
		if (strcmp(kcm_controllers[k].name, kcm) != 0 || kcm_controllers[k].alias == NULL)
			continue;
		for (int i = 0; i < controller_type_count; i++) {
			if (strcmp(controller_types[i]->name, kcm_controllers[k].alias) == 0)
				return i;
		}
	}
	return -2;
}

int
controller_parse_list(const char *list, int *enabled, struct buf *ignored, char **error)
{
	int star = 0, *explicit = xcalloc((size_t)controller_type_count, sizeof *explicit);
	const char *p = list;

	for (int i = 0; i < controller_type_count; i++)
		enabled[i] = 0;
	while (*p != '\0') {
		const char *end = strchr(p, ',');
		size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
		int off = n > 0 && p[0] == '-', i;

		if (n == 1 && p[0] == '*') {
			star = 1;
		} else {
			i = controller_index(p + off, n - (size_t)off);
			if (i == -2) {
				if (ignored != NULL)
					buf_printf(ignored, "%s%.*s", ignored->len > 0 ? ", " : "",
					    (int)n, p);
			} else if (i < 0) {
				char *all = NULL;
				for (int j = 0; j < controller_type_count; j++) {
					char *next = xasprintf("%s%s%s", all != NULL ? all : "",
					    j > 0 ? ", " : "", controller_types[j]->name);
					free(all);
					all = next;
				}
				error_set(error, "--controllers: unknown controller \"%.*s\" "
				    "(known: %s)", (int)(n - (size_t)off), p + off, all);
				free(all);
				free(explicit);
				return -1;
			} else {
				explicit[i] = off ? -1 : 1;
			}
		}
		if (end == NULL)
			break;
		p = end + 1;
	}
	for (int i = 0; i < controller_type_count; i++)
		enabled[i] = explicit[i] == 1 || (star && explicit[i] != -1);
	free(explicit);
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
	case CONTROLLER_FLAG_STRING:
		return 0;
	}
	return error_set(error, "--%s: unknown flag type", f->name);
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
controller_flag_seconds(const struct controller *c, const char *name)
{
	double seconds = 0;

	if (time_parse_duration(controller_flag_text(c, name), &seconds) != 0)
		return 0;
	return seconds;
}

int
controller_flag_count(void)
{
	int n = 0;

	for (int i = 0; i < controller_type_count; i++) {
		for (int j = 0; controller_types[i]->flags != NULL &&
		    controller_types[i]->flags[j].name != NULL; j++)
			n++;
	}
	return n;
}

size_t
controller_flag_options(struct option *o, size_t n, int base)
{
	if (controller_type_count * CONTROLLER_FLAGS_PER_TYPE > CONTROLLER_FLAG_CODES)
		abort();
	for (int i = 0; i < controller_type_count; i++) {
		for (int j = 0; controller_types[i]->flags != NULL &&
		    controller_types[i]->flags[j].name != NULL; j++) {
			const char *name = controller_types[i]->flags[j].name;

			if (j == CONTROLLER_FLAGS_PER_TYPE)
				abort();	/* a table to fix, not a user's mistake */
			for (size_t k = 0; k < n; k++) {
				if (strcmp(o[k].name, name) == 0)
					abort();
			}
			o[n].name = name;
			o[n].has_arg = required_argument;
			o[n].flag = NULL;
			o[n++].val = base + CONTROLLER_FLAGS_PER_TYPE * i + j;
		}
	}
	return n;
}

struct option *
controller_longopts_new(const struct option *fixed, int base)
{
	size_t n = 0;
	struct option *o;

	while (fixed[n].name != NULL)
		n++;
	o = xcalloc(n + (size_t)controller_flag_count() + 1, sizeof *o);
	memcpy(o, fixed, n * sizeof *o);
	controller_flag_options(o, n, base);
	return o;
}

void
controller_flags_usage(FILE *out)
{
	fputs("\nThe controllers' flags:\n", out);
	for (int i = 0; i < controller_type_count; i++) {
		const struct controller_type *t = controller_types[i];

		for (const struct controller_flag *f = t->flags; f != NULL && f->name != NULL;
		    f++)
			fprintf(out, "  --%s %s\n                            %s: %s (default: %s)\n",
			    f->name, f->type == CONTROLLER_FLAG_INT ? "N" :
			    f->type == CONTROLLER_FLAG_DURATION ? "DURATION" : "VALUE", t->name,
			    f->help, *f->default_value != '\0' ? f->default_value : "none");
	}
}

struct controller_config *
controller_configs_new(void)
{
	struct controller_config *configs = xcalloc((size_t)controller_type_count,
	    sizeof *configs);

	for (int i = 0; i < controller_type_count; i++)
		configs[i].flags = xcalloc(CONTROLLER_FLAGS_PER_TYPE, sizeof *configs[i].flags);
	return configs;
}

int
controller_configs_set(struct controller_config *configs, int code, const char *value,
    char **error)
{
	int t = code / CONTROLLER_FLAGS_PER_TYPE, j = code % CONTROLLER_FLAGS_PER_TYPE;

	if (code < 0 || t >= controller_type_count)
		return error_set(error, "no controller flag has code %d", code);
	if (controller_flag_check(&controller_types[t]->flags[j], value, error) != 0)
		return -1;
	((const char **)configs[t].flags)[j] = value;
	return 0;
}

void
controller_configs_free(struct controller_config *configs)
{
	for (int i = 0; configs != NULL && i < controller_type_count; i++)
		free((void *)configs[i].flags);
	free(configs);
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

int
controller_list_keys_of(sqlite3_stmt *stmt, const char *what,
    void (*cb)(const char *key, void *arg), void *arg, char **error)
{
	int rc;

	controller_stmt(stmt);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		char *key = xasprintf("%s/%s", sqlite3_column_text(stmt, 0),
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
