/*
 * metadatacache.c - an informer for the metadata of every resource the apiserver serves
 * with list, watch and delete, kept in step with discovery.
 *
 * The garbage collector needs the owner references of every object in the cluster, of
 * kinds nobody knows in advance (custom resources come and go). Discovery (discovery.c)
 * says which resources exist; for each that has the verbs list, watch and delete (kube's
 * GetDeletableResources, less its ignored events), a metadata-only informer mirrors its
 * objects into cache_objects (resource.c registers the resource, store.c gives it its
 * statements). The resources cached whole by their own tables (pods, ReplicaSets,
 * Deployments) are not cached twice.
 *
 * Discovery is read before the informers start, then every 30 s as kube's garbage
 * collector does, and a few seconds after any change to a CustomResourceDefinition, so
 * that a custom resource created while sqlkcm runs is watched at once and one removed stops
 * being watched. A resource discovery no longer lists loses its informer and its rows,
 * unless its group-version failed to be read (then nothing is concluded about it).
 *
 * Each read also records, for the namespace controller, the verbs of every resource
 * (api_resources.verbs) and the group-versions that could not be read
 * (discovery_failures).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "informer.h"
#include "log.h"
#include "metrics.h"
#include "metadatacache.h"
#include "resource.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

/* The resource whose changes make discovery be read again soon. */
#define CRD_RESOURCE "customresourcedefinitions.apiextensions.k8s.io"
/* How soon after a CustomResourceDefinition changes. */
#define CRD_REFRESH_SECONDS 2

struct metadatacache {
	struct event_base *base;
	struct client *client;
	struct store *store;
	struct informer_set *informers;
	const struct resource **current;	/* the resources with an informer of ours */
	int ncurrent;
	struct discovery_fetch *fetch;		/* the read in flight, or NULL */
	struct event *timer;			/* the next read */
	double period;
	struct metrics_series *sync_errors;	/* NULL without metrics */
	struct metrics_series *resources;
};

static void metadatacache_read(evutil_socket_t fd, short what, void *arg);

/* Schedules the next read of discovery in seconds (an earlier one stands). */
static void
metadatacache_schedule(struct metadatacache *mc, double seconds)
{
	struct timeval tv = { (time_t)seconds, (suseconds_t)((seconds - (double)(time_t)seconds) *
	    1e6) };
	struct timeval left;

	if (evtimer_pending(mc->timer, &left)) {
		struct timeval now, when;

		event_base_gettimeofday_cached(mc->base, &now);
		timeradd(&now, &tv, &when);
		if (timercmp(&left, &when, <=))
			return;
	}
	evtimer_add(mc->timer, &tv);
}

/* True when group-version gv ("apps/v1", "v1") is in the comma-separated list. */
static int
listed(const char *list, const char *gv)
{
	size_t n = strlen(gv);

	for (const char *p = list; p != NULL && *p != '\0';) {
		const char *end = strchr(p, ',');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		while (len > 0 && *p == ' ') {
			p++;
			len--;
		}
		if (len == n && strncmp(p, gv, n) == 0)
			return 1;
		p = end != NULL ? end + 1 : NULL;
	}
	return 0;
}

/* Records what the namespace controller needs of discovery: the verbs of each resource
 * (api_resources.verbs: does it take a collection delete?) and the group-versions that
 * could not be read (discovery_failures, its NamespaceDeletionDiscoveryFailure). */
static void
metadatacache_note_discovery(struct metadatacache *mc, const struct discovery *d)
{
	static const char *const sql[] = {
		"UPDATE api_resources SET verbs = ?2 WHERE resource = ?1 AND verbs IS NOT ?2",
		"DELETE FROM discovery_failures",
		"INSERT OR IGNORE INTO discovery_failures (group_version) VALUES (?1)",
	};
	sqlite3_stmt *stmt[3] = { NULL, NULL, NULL };
	char *error = NULL, *gv;
	int rc = SQLITE_DONE;

	if (store_prepare_statements(store_db(mc->store), sql, 3, stmt, "metadata cache",
	    &error) != 0)
		goto out;
	for (size_t i = 0; i < d->count && rc == SQLITE_DONE; i++) {
		const struct api_resource *a = &d->items[i];
		const struct resource *r = resource_metadata(a->group, a->version, a->resource,
		    a->kind, a->namespaced);

		sqlite3_bind_text(stmt[0], 1, r->name, -1, SQLITE_STATIC);
		sqlite3_bind_int(stmt[0], 2, (int)a->verbs);
		rc = sqlite3_step(stmt[0]);
		sqlite3_reset(stmt[0]);
	}
	if (rc == SQLITE_DONE)
		rc = sqlite3_step(stmt[1]);
	for (const char *p = d->failed; p != NULL && *p != '\0' && rc == SQLITE_DONE;) {
		size_t n = strcspn(p, ",");

		gv = xstrndup(p + strspn(p, " "), n - strspn(p, " "));
		sqlite3_bind_text(stmt[2], 1, gv, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(stmt[2]);
		sqlite3_reset(stmt[2]);
		free(gv);
		p = p[n] == ',' ? p + n + 1 : NULL;
	}
	if (rc != SQLITE_DONE)
		error = xasprintf("metadata cache: recording discovery's verbs and failures: %s",
		    sqlite3_errmsg(store_db(mc->store)));
out:
	if (error != NULL) {
		log_error("%s", error);
		free(error);
	}
	store_finalize_statements(stmt, 3);
}

void
metadatacache_apply(struct metadatacache *mc, struct discovery *d)
{
	const struct resource **next = xcalloc(d->count + (size_t)mc->ncurrent + 1,
	    sizeof *next);
	int nnext = 0;
	char *error = NULL;

	discovery_keep_deletable(d);
	for (size_t i = 0; i < d->count; i++) {
		const struct api_resource *a = &d->items[i];
		const struct resource *r = resource_metadata(a->group, a->version, a->resource,
		    a->kind, a->namespaced);

		if (r->index < resource_count)
			continue;	/* one of resource_all: the manager starts its informer */
		next[nnext++] = r;
		if (informer_set_has(mc->informers, r))
			continue;
		if (store_note_api_resource(mc->store, r, 1, &error) != 0 ||
		    informer_set_add_started(mc->informers, r, &error) != 0) {
			log_error("metadata cache: %s: %s", r->name, error);
			free(error);
			error = NULL;
			nnext--;
			continue;
		}
		log_v(1, "metadata cache: watching %s (%s %s)", r->name, r->api_version, r->kind);
	}
	/* The resources no longer listed, unless their group-version could not be read. */
	for (int i = 0; i < mc->ncurrent; i++) {
		const struct resource *r = mc->current[i];
		int kept = 0;

		for (int j = 0; j < nnext && !kept; j++)
			kept = next[j] == r;
		if (kept)
			continue;
		if (listed(d->failed, r->api_version)) {
			next[nnext++] = r;
			continue;
		}
		log_info("metadata cache: %s (%s %s) is no longer served: forgetting it",
		    r->name, r->api_version, r->kind);
		informer_set_remove(mc->informers, r);
		/* Another version of the same resource may have taken its rows over. */
		for (int j = 0; j < nnext; j++) {
			if (strcmp(next[j]->name, r->name) == 0)
				goto next;
		}
		if (store_forget_resource(mc->store, r, &error) != 0) {
			log_error("metadata cache: %s", error);
			free(error);
			error = NULL;
		}
	next:
		;
	}
	free(mc->current);
	mc->current = next;
	mc->ncurrent = nnext;
	metrics_gauge_set(mc->resources, nnext);
	metadatacache_note_discovery(mc, d);
}

/* A read of discovery is back. */
static void
metadatacache_fetched(struct discovery *d, const char *error, void *arg)
{
	struct metadatacache *mc = arg;

	mc->fetch = NULL;
	if (error != NULL)
		metrics_counter_add(mc->sync_errors, 1);
	if (error != NULL && d->failed == NULL) {
		/* A whole document is missing: nothing can be said of what it would list. */
		log_warning("metadata cache: discovery: %s (retrying in %.0fs)", error,
		    mc->period);
		discovery_clear(d);
		metadatacache_schedule(mc, mc->period);
		return;
	}
	if (error != NULL)
		log_warning("metadata cache: discovery: %s", error);
	metadatacache_apply(mc, d);
	discovery_clear(d);
	metadatacache_schedule(mc, mc->period);
}

static void
metadatacache_read(evutil_socket_t fd, short what, void *arg)
{
	struct metadatacache *mc = arg;

	(void)fd;
	(void)what;
	if (mc->fetch != NULL)
		return;
	mc->fetch = discovery_fetch_start(mc->client, metadatacache_fetched, mc);
}

/* A CustomResourceDefinition changed: its resource may have appeared or gone. */
static void
metadatacache_on_event(const struct informer_event *ev, void *arg)
{
	struct metadatacache *mc = arg;

	if (strcmp(ev->resource->name, CRD_RESOURCE) == 0)
		metadatacache_schedule(mc, CRD_REFRESH_SECONDS);
}

struct metadatacache *
metadatacache_new(struct event_base *base, struct client *client, struct store *store,
    struct informer_set *informers)
{
	struct metadatacache *mc = xcalloc(1, sizeof *mc);
	struct informer_handlers h = { metadatacache_on_event, NULL, mc };

	mc->base = base;
	mc->client = client;
	mc->store = store;
	mc->informers = informers;
	mc->period = METADATACACHE_PERIOD;
	mc->timer = evtimer_new(base, metadatacache_read, mc);
	informer_set_add_handlers(informers, &h);
	return mc;
}

/* Only wakes the loop up. */
static void
metadatacache_wake(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

void
metadatacache_start(struct metadatacache *mc, double timeout, double period)
{
	double deadline = time_monotonic() + timeout;
	struct event *wake = evtimer_new(mc->base, metadatacache_wake, NULL);
	struct timeval tv = { 0, 100 * 1000 };
	int stopped = 0;

	mc->period = period;
	metadatacache_read(-1, 0, mc);
	/* The loop turns until the first read is back (the wake-up keeps it from blocking
	 * past the deadline). */
	while (mc->fetch != NULL && time_monotonic() < deadline) {
		evtimer_add(wake, &tv);
		event_base_loop(mc->base, EVLOOP_ONCE);
		if (event_base_got_exit(mc->base) || event_base_got_break(mc->base)) {
			/* Told to stop meanwhile (a signal): the caller's loop must stop too,
			 * and this one consumed the request. */
			event_base_loopexit(mc->base, NULL);
			stopped = 1;
			break;
		}
	}
	event_free(wake);
	if (stopped)
		return;
	if (mc->fetch != NULL)
		log_warning("metadata cache: discovery has not answered in %.0fs; starting "
		    "without it", timeout);
	else
		log_info("metadata cache: %d resources cached by their metadata", mc->ncurrent);
}

void
metadatacache_register_metrics(struct metadatacache *mc, struct metrics_registry *registry)
{
	static const struct metrics_spec errors = { METRICS_COUNTER,
	    "garbagecollector_controller_resources_sync_error_total",
	    "Number of garbage collector resources sync errors", NULL, NULL, 0 };
	static const struct metrics_spec resources = { METRICS_GAUGE,
	    "sqlkcm_metadata_cache_resources",
	    "Resources cached by their metadata, as discovery last listed them.", NULL, NULL,
	    0 };
	struct metrics_family *family;
	char *error = NULL;

	if ((family = metrics_family_register(registry, &errors, &error)) != NULL)
		mc->sync_errors = metrics_series_get(family, NULL);
	if (family != NULL && (family = metrics_family_register(registry, &resources,
	    &error)) != NULL)
		mc->resources = metrics_series_get(family, NULL);
	if (family == NULL) {
		log_error("metadata cache: no metric: %s", error);
		free(error);
	}
}

int
metadatacache_count(const struct metadatacache *mc)
{
	return mc->ncurrent;
}

void
metadatacache_free(struct metadatacache *mc)
{
	if (mc == NULL)
		return;
	if (mc->fetch != NULL)
		discovery_fetch_cancel(mc->fetch);
	event_free(mc->timer);
	free(mc->current);
	free(mc);
}
