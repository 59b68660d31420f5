/*
 * test_metadatacache.c - the metadata cache follows discovery: an informer for each
 * deletable resource not cached whole, forgotten when discovery no longer lists it
 * (unless its group-version failed to be read).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "discovery.h"
#include "informer.h"
#include "metadatacache.h"
#include "resource.h"
#include "store.h"
#include "util.h"

struct env {
	struct event_base *base;
	struct store *store;
	struct informer_set *informers;
	struct metadatacache *mc;
};

static int
setup(void **state)
{
	struct env *e = xcalloc(1, sizeof *e);
	char *error = NULL;

	e->base = event_base_new();
	assert_int_equal(store_open(":memory:", NULL, &e->store, &error), 0);
	/* No client: informers remember the request they would send. */
	e->informers = informer_set_new(e->base, NULL, e->store);
	informer_set_add(e->informers, resource_find("pods"));
	assert_int_equal(informer_set_start(e->informers, &error), 0);
	e->mc = metadatacache_new(e->base, NULL, e->store, e->informers);
	*state = e;
	return 0;
}

static int
teardown(void **state)
{
	struct env *e = *state;

	informer_set_stop(e->informers);
	informer_set_free(e->informers);
	metadatacache_free(e->mc);
	store_close(e->store);
	event_base_free(e->base);
	resource_metadata_free_all();
	free(e);
	return 0;
}

/* Appends a discovered resource to d. */
static void
add(struct discovery *d, const char *group, const char *version, const char *plural,
    const char *kind, int namespaced, unsigned verbs)
{
	struct api_resource *a;

	d->items = xrealloc(d->items, (d->count + 1) * sizeof *d->items);
	a = &d->items[d->count++];
	a->group = xstrdup(group);
	a->version = xstrdup(version);
	a->resource = xstrdup(plural);
	a->kind = xstrdup(kind);
	a->namespaced = namespaced;
	a->verbs = verbs;
}

#define ALL (DISCOVERY_LIST | DISCOVERY_WATCH | DISCOVERY_DELETE | DISCOVERY_GET)

/* The served resources of a typical discovery, limitranges and widgets among them when
 * asked. */
static void
discover(struct discovery *d, int limitranges, int widgets)
{
	memset(d, 0, sizeof *d);
	add(d, "", "v1", "pods", "Pod", 1, ALL);
	if (limitranges)
		add(d, "", "v1", "limitranges", "LimitRange", 1, ALL);
	add(d, "", "v1", "events", "Event", 1, ALL);
	add(d, "", "v1", "bindings", "Binding", 1, DISCOVERY_LIST);
	add(d, "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", 0, ALL);
	if (widgets)
		add(d, "example.com", "v1", "widgets", "Widget", 1, ALL);
}

static long long
served(struct store *s, const char *resource)
{
	sqlite3_stmt *stmt;
	long long n = -1;

	assert_int_equal(sqlite3_prepare_v2(store_db(s), "SELECT served FROM api_resources "
	    "WHERE resource = ?", -1, &stmt, NULL), SQLITE_OK);
	sqlite3_bind_text(stmt, 1, resource, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		n = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return n;
}

static void
deletable_resources_get_a_metadata_informer_that_starts_at_once(void **state)
{
	struct env *e = *state;
	struct discovery d;
	const struct resource *svcs, *crs;
	const char *path;

	discover(&d, 1, 0);
	metadatacache_apply(e->mc, &d);
	discovery_clear(&d);
	/* limitranges and priorityclasses; not pods (cached whole), events (ignored by kube's
	 * collector) or bindings (no watch, no delete). */
	assert_int_equal(metadatacache_count(e->mc), 2);
	svcs = resource_find_any("limitranges");
	crs = resource_find_any("priorityclasses.scheduling.k8s.io");
	assert_non_null(svcs);
	assert_non_null(crs);
	assert_null(resource_find_any("events"));
	assert_null(resource_find_any("bindings"));
	assert_true(informer_set_has(e->informers, svcs));
	assert_true(informer_set_has(e->informers, crs));
	assert_int_equal(served(e->store, "limitranges"), 1);
	/* The set was running: the new informer's sync is on its way. */
	path = informer_set_request_path(e->informers, crs);
	assert_non_null(path);
	assert_non_null(strstr(path, "/apis/scheduling.k8s.io/v1/priorityclasses?"));
	/* A second identical discovery changes nothing. */
	discover(&d, 1, 0);
	metadatacache_apply(e->mc, &d);
	discovery_clear(&d);
	assert_int_equal(metadatacache_count(e->mc), 2);
}

static void
a_resource_no_longer_served_is_forgotten(void **state)
{
	struct env *e = *state;
	struct discovery d;
	const struct resource *widgets;

	discover(&d, 1, 1);
	metadatacache_apply(e->mc, &d);
	discovery_clear(&d);
	widgets = resource_find_any("widgets.example.com");
	assert_non_null(widgets);
	assert_true(informer_set_has(e->informers, widgets));
	assert_int_equal(metadatacache_count(e->mc), 3);

	/* The CustomResourceDefinition is gone. */
	discover(&d, 1, 0);
	metadatacache_apply(e->mc, &d);
	discovery_clear(&d);
	assert_false(informer_set_has(e->informers, widgets));
	assert_int_equal(served(e->store, "widgets.example.com"), 0);
	assert_int_equal(metadatacache_count(e->mc), 2);
	/* Created again: watched again. */
	discover(&d, 1, 1);
	metadatacache_apply(e->mc, &d);
	discovery_clear(&d);
	assert_true(informer_set_has(e->informers, widgets));
	assert_int_equal(served(e->store, "widgets.example.com"), 1);
}

static void
a_group_version_that_failed_keeps_its_informers(void **state)
{
	struct env *e = *state;
	struct discovery d;
	const struct resource *svcs;

	discover(&d, 1, 0);
	metadatacache_apply(e->mc, &d);
	discovery_clear(&d);
	svcs = resource_find_any("limitranges");
	/* The core group could not be read this time: nothing is concluded about it. */
	discover(&d, 0, 0);
	d.failed = xstrdup("example.com/v1, v1");
	metadatacache_apply(e->mc, &d);
	discovery_clear(&d);
	assert_true(informer_set_has(e->informers, svcs));
	assert_int_equal(served(e->store, "limitranges"), 1);
	assert_int_equal(metadatacache_count(e->mc), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    deletable_resources_get_a_metadata_informer_that_starts_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(a_resource_no_longer_served_is_forgotten, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(a_group_version_that_failed_keeps_its_informers,
		    setup, teardown),
	};
	return cmocka_run_group_tests_name("metadatacache", tests, NULL, NULL);
}
