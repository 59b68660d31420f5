/*
 * test_informer.c - informers over an in-memory store, with the test as the apiserver:
 * WatchList initial events and their end bookmark, the fallback to LIST, bad items in a
 * watch stream, hostile labels and a 1 MB annotation, bounded transactions.
 *
 * The informer set has no client: it remembers the request it would send
 * (informer_set_request_path), and the test answers with stream bytes
 * (informer_set_receive) and the end of the response (informer_set_respond). Log lines
 * go to stderr, which each test sends to a temporary file it then reads.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "client.h"
#include "informer.h"
#include "resource.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

static const struct resource *pods;

/* One test's world: a loop, a store, an informer set for pods, stderr captured. */
struct world {
	struct event_base *base;
	struct store *store;
	struct informer_set *set;
	FILE *log;		/* where stderr goes */
	int saved_stderr;
	int events[3];		/* handler calls by informer_event_type */
};

static void
world_on_event(const struct informer_event *ev, void *arg)
{
	struct world *w = arg;

	w->events[ev->type]++;
}

/* Opens the store and captures stderr; the informers are made by world_start. */
static struct world *
world_new(void)
{
	struct world *w = xcalloc(1, sizeof *w);
	char *error = NULL;

	w->base = event_base_new();
	assert_int_equal(store_open(":memory:", NULL, &w->store, &error), 0);
	w->log = tmpfile();
	assert_non_null(w->log);
	fflush(stderr);
	w->saved_stderr = dup(STDERR_FILENO);
	dup2(fileno(w->log), STDERR_FILENO);
	return w;
}

/* Makes the pods informer with mode and starts it. */
static void
world_start(struct world *w, enum informer_watch_list mode)
{
	struct informer_handlers h = { world_on_event, NULL, w };
	char *error = NULL;

	w->set = informer_set_new(w->base, NULL, w->store);
	informer_set_watch_list(w->set, mode);
	informer_set_add(w->set, pods);
	informer_set_add_handlers(w->set, &h);
	assert_int_equal(informer_set_start(w->set, &error), 0);
}

static void
world_free(struct world *w)
{
	informer_set_free(w->set);
	store_close(w->store);
	event_base_free(w->base);
	dup2(w->saved_stderr, STDERR_FILENO);
	close(w->saved_stderr);
	fclose(w->log);
	free(w);
}

/* Runs the loop until nothing is left to do now: pruning chunks, the flush. */
static void
world_run(struct world *w)
{
	for (int i = 0; i < 50; i++)
		event_base_loop(w->base, EVLOOP_NONBLOCK);
	informer_set_commit(w->set);
}

/* Returns everything logged so far (malloc'd). */
static char *
world_log(struct world *w)
{
	long n;
	char *text;

	fflush(w->log);
	n = lseek(fileno(w->log), 0, SEEK_END);
	text = xmalloc((size_t)n + 1);
	assert_int_equal(pread(fileno(w->log), text, (size_t)n, 0), n);
	text[n] = '\0';
	return text;
}

/* Asserts that the log has a line containing needle. */
static void
assert_logged(struct world *w, const char *needle)
{
	char *text = world_log(w);

	if (strstr(text, needle) == NULL)
		fail_msg("no log line has \"%s\"; the log:\n%s", needle, text);
	free(text);
}

/* The path of the request the pods informer waits on ("" when none). */
static const char *
request(struct world *w)
{
	const char *path = informer_set_request_path(w->set, pods);

	return path != NULL ? path : "";
}

/* Feeds text to the pods watch, in pieces of at most chunk bytes (0: whole). */
static void
feed(struct world *w, const char *text, size_t chunk)
{
	size_t len = strlen(text);

	if (chunk == 0)
		chunk = len;
	for (size_t off = 0; off < len; off += chunk)
		informer_set_receive(w->set, pods, text + off, len - off < chunk ? len - off : chunk);
}

/* Ends the pods request with code and body (NULL: empty). */
static void
respond(struct world *w, int code, const char *body)
{
	struct client_response resp = { code, body != NULL ? body : "",
	    body != NULL ? strlen(body) : 0, NULL, NULL };

	informer_set_respond(w->set, pods, &resp);
}

/* Ends the pods request with a transport failure. */
static void
respond_transport_error(struct world *w)
{
	struct client_response resp = { 0, "", 0, NULL, "Connection refused" };

	informer_set_respond(w->set, pods, &resp);
}

/* A watch event of type for pod uid/name at rv, with extra metadata members. */
static char *
pod_event(const char *type, const char *uid, const char *name, const char *rv,
    const char *meta)
{
	return xasprintf("{\"type\":\"%s\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"uid\":\"%s\",\"namespace\":\"ns\",\"name\":\"%s\","
	    "\"resourceVersion\":\"%s\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"%s%s},"
	    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"pause\"}]}}}\n",
	    type, uid, name, rv, *meta ? "," : "", meta);
}

/* Feeds one pod event. */
static void
feed_pod(struct world *w, const char *type, const char *uid, const char *name,
    const char *rv)
{
	char *text = pod_event(type, uid, name, rv, "");

	feed(w, text, 0);
	free(text);
}

/* Feeds the bookmark that ends the initial events, at rv. */
static void
feed_initial_events_end(struct world *w, const char *rv)
{
	char *text = xasprintf("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\","
	    "\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"%s\",\"annotations\":"
	    "{\"k8s.io/initial-events-end\":\"true\"}}}}\n", rv);

	feed(w, text, 0);
	free(text);
}

/* A v1 PodList page of the given pods ("uid:name:rv" each, up to four), at rv. */
static char *
pod_list(const char *rv, const char *const *items, int n)
{
	struct buf b;
	char *text;

	buf_init(&b);
	buf_printf(&b, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
	    "{\"resourceVersion\":\"%s\"},\"items\":[", rv);
	for (int i = 0; i < n; i++) {
		char uid[64], name[64], irv[64];

		assert_int_equal(sscanf(items[i], "%63[^:]:%63[^:]:%63s", uid, name, irv), 3);
		buf_printf(&b, "%s{\"metadata\":{\"uid\":\"%s\",\"namespace\":\"ns\",\"name\":\"%s\","
		    "\"resourceVersion\":\"%s\"}}", i > 0 ? "," : "", uid, name, irv);
	}
	buf_printf(&b, "]}");
	text = buf_detach(&b);
	return text;
}

/* Runs a query returning one integer. */
static long long
query_int(struct world *w, const char *sql)
{
	sqlite3_stmt *stmt;
	long long v;

	assert_int_equal(sqlite3_prepare_v2(store_db(w->store), sql, -1, &stmt, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	v = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return v;
}

/* Runs a query returning one text value (malloc'd; NULL for SQL NULL). */
static char *
query_text(struct world *w, const char *sql)
{
	sqlite3_stmt *stmt;
	char *v;

	assert_int_equal(sqlite3_prepare_v2(store_db(w->store), sql, -1, &stmt, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	v = sqlite3_column_type(stmt, 0) == SQLITE_NULL ? NULL :
	    xstrdup((const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	return v;
}

static long long
pod_count(struct world *w)
{
	return query_int(w, "SELECT count(*) FROM cache_pods");
}

/* Asserts the stored resourceVersion of the pods informer (NULL: none). */
static void
assert_stored_rv(struct world *w, const char *want)
{
	char *rv = query_text(w, "SELECT resource_version FROM informers WHERE resource = 'pods'");

	if (want == NULL)
		assert_null(rv);
	else
		assert_string_equal(rv, want);
	free(rv);
}

/* Fills the store as a previous run left it: pods a, b, c listed and synced at rv 10. */
static void
store_synced_state(struct world *w)
{
	const char *names[] = { "a", "b", "c" };
	long long epoch;
	char *error = NULL;

	assert_int_equal(store_begin(w->store, &error), 0);
	assert_int_equal(store_begin_list(w->store, pods, &epoch, &error), 0);
	for (int i = 0; i < 3; i++) {
		char *uid = xasprintf("uid-%s", names[i]);
		char *text = pod_event("ADDED", uid, names[i], "10", "");
		cJSON *ev = cJSON_Parse(text);
		cJSON *obj = cJSON_DetachItemFromObject(ev, "object");

		assert_int_equal(store_upsert_object(w->store, pods, obj, epoch, NULL, NULL,
		    &error), 0);
		cJSON_Delete(obj);
		cJSON_Delete(ev);
		free(text);
		free(uid);
	}
	assert_int_equal(store_finish_list(w->store, pods, "10", &error), 0);
	assert_int_equal(store_commit(w->store, &error), 0);
}

/* The informer is starting a WatchList: a watch from "" that asks for initial events. */
static void
assert_watch_list_request(struct world *w)
{
	const char *path = request(w);

	assert_non_null(strstr(path, "/api/v1/pods?watch=1&"));
	assert_non_null(strstr(path, "&sendInitialEvents=true"));
	assert_non_null(strstr(path, "&resourceVersionMatch=NotOlderThan"));
	assert_non_null(strstr(path, "allowWatchBookmarks=true"));
	assert_non_null(strstr(path, "&resourceVersion=&"));
}

/* --- WatchList ----------------------------------------------------------------------- */

static void
cold_start_asks_for_initial_events(void **state)
{
	struct world *w = world_new();

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	assert_watch_list_request(w);
	assert_int_equal(informer_set_stats(w->set)->watch_lists, 1);
	assert_int_equal(informer_set_stats(w->set)->lists, 0);
	world_free(w);
}

static void
initial_events_end_bookmark_syncs_on_the_same_stream(void **state)
{
	struct world *w = world_new();
	char *path;

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	path = xstrdup(request(w));
	feed_pod(w, "ADDED", "uid-a", "a", "7");
	feed_pod(w, "ADDED", "uid-b", "b", "5");
	world_run(w);
	assert_false(informer_set_synced(w->set));
	assert_int_equal(pod_count(w), 2);
	assert_stored_rv(w, NULL);	/* initial events move no resourceVersion */

	feed_initial_events_end(w, "9");
	world_run(w);
	assert_true(informer_set_synced(w->set));
	assert_stored_rv(w, "9");
	assert_int_equal(query_int(w, "SELECT synced FROM informers WHERE resource = 'pods'"), 1);
	assert_logged(w, "informer resource=pods: synced by WatchList resourceVersion=9 objects=2");
	assert_int_equal(informer_set_stats(w->set)->syncs_by_watch_list, 1);
	assert_int_equal(informer_set_stats(w->set)->syncs_by_list, 0);

	/* The same watch goes on with the changes after the bookmark. */
	assert_string_equal(request(w), path);
	feed_pod(w, "MODIFIED", "uid-a", "a", "11");
	feed_pod(w, "DELETED", "uid-b", "b", "12");
	world_run(w);
	assert_stored_rv(w, "12");
	assert_int_equal(pod_count(w), 1);
	assert_int_equal(w->events[INFORMER_ADDED], 2);
	assert_int_equal(w->events[INFORMER_UPDATED], 1);
	assert_int_equal(w->events[INFORMER_DELETED], 1);
	free(path);
	world_free(w);
}

/* With a batch period, a watch's events wait for it to pass and are then applied
 * together, in one transaction; the initial events of a WatchList do not wait. The end
 * of the watch applies what is held before anything else. */
static void
batch_period_holds_watch_events_and_applies_them_in_one_transaction(void **state)
{
	struct world *w = world_new();
	unsigned long batches;

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	informer_set_batch_period(w->set, 0.05, NULL);
	feed_pod(w, "ADDED", "uid-a", "a", "7");
	feed_initial_events_end(w, "9");
	world_run(w);
	assert_true(informer_set_synced(w->set));
	assert_int_equal(pod_count(w), 1);

	batches = informer_set_stats(w->set)->batches;
	feed_pod(w, "MODIFIED", "uid-a", "a", "11");
	feed_pod(w, "ADDED", "uid-b", "b", "12");
	world_run(w);
	assert_int_equal(pod_count(w), 1);		/* held */
	assert_int_equal(w->events[INFORMER_UPDATED], 0);
	assert_stored_rv(w, "9");
	event_base_loop(w->base, EVLOOP_ONCE);		/* the period passes */
	world_run(w);
	assert_int_equal(pod_count(w), 2);
	assert_int_equal(w->events[INFORMER_UPDATED], 1);
	assert_int_equal(w->events[INFORMER_ADDED], 2);
	assert_stored_rv(w, "12");
	assert_int_equal(informer_set_stats(w->set)->batches - batches, 1);

	/* Held, then the watch ends: applied at once, and the next watch is from it. */
	feed_pod(w, "DELETED", "uid-b", "b", "13");
	respond(w, 200, NULL);
	assert_int_equal(pod_count(w), 1);		/* no wait for the period */
	world_run(w);
	assert_int_equal(w->events[INFORMER_DELETED], 1);
	assert_stored_rv(w, "13");
	assert_non_null(strstr(request(w), "resourceVersion=13"));
	world_free(w);
}

static int
holds_nothing(const struct resource *r)
{
	(void)r;
	return 0;
}

/* The batch period holds only the resources it is given: the others' events are applied
 * in the loop turn they arrive in; resource_held_in_batches, run's choice, holds the
 * heartbeats (Leases, Nodes) and the metadata-only resources, not pods. */
static void
batch_period_holds_only_the_resources_chosen(void **state)
{
	struct world *w = world_new();

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	informer_set_batch_period(w->set, 0.05, holds_nothing);
	feed_pod(w, "ADDED", "uid-a", "a", "7");
	feed_initial_events_end(w, "9");
	world_run(w);
	assert_true(informer_set_synced(w->set));
	feed_pod(w, "ADDED", "uid-b", "b", "12");
	world_run(w);
	assert_int_equal(pod_count(w), 2);		/* not held */
	assert_stored_rv(w, "12");
	assert_false(resource_held_in_batches(resource_find("pods")));
	assert_false(resource_held_in_batches(resource_find("statefulsets")));
	assert_true(resource_held_in_batches(resource_find("leases")));
	assert_true(resource_held_in_batches(resource_find("nodes")));
	world_free(w);
}

static void
bookmark_without_the_annotation_does_not_end_initial_events(void **state)
{
	struct world *w = world_new();

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	feed_pod(w, "ADDED", "uid-a", "a", "7");
	feed(w, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"resourceVersion\":\"8\"}}}", 0);
	feed(w, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"resourceVersion\":\"8\",\"annotations\":"
	    "{\"k8s.io/initial-events-end\":\"false\"}}}}", 0);
	world_run(w);
	assert_false(informer_set_synced(w->set));
	assert_stored_rv(w, NULL);
	world_free(w);
}

static void
relist_by_watch_list_removes_what_the_initial_events_lack(void **state)
{
	struct world *w = world_new();

	(void)state;
	store_synced_state(w);
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	/* A warm start watches from the stored resourceVersion: no initial events. */
	assert_non_null(strstr(request(w), "&resourceVersion=10&"));
	assert_null(strstr(request(w), "sendInitialEvents"));
	assert_logged(w, "resuming the watch at resourceVersion=10 objects=3");

	/* 410 Gone: sync again by WatchList, from the newest state. */
	respond(w, 410, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
	    "\"message\":\"too old resource version: 10 (50)\",\"reason\":\"Expired\","
	    "\"code\":410}");
	assert_watch_list_request(w);
	assert_logged(w, "relisting");
	feed_pod(w, "ADDED", "uid-a", "a", "10");
	feed_pod(w, "ADDED", "uid-d", "d", "40");
	world_run(w);
	/* Until the bookmark, nothing already stored is lost. */
	assert_int_equal(pod_count(w), 4);
	assert_true(informer_set_synced(w->set));	/* the old state still serves */

	feed_initial_events_end(w, "50");
	world_run(w);
	assert_int_equal(pod_count(w), 2);
	assert_int_equal(query_int(w, "SELECT count(*) FROM cache_pods WHERE uid IN "
	    "('uid-a', 'uid-d')"), 2);
	assert_int_equal(query_int(w, "SELECT count(*) FROM labels WHERE uid IN "
	    "('uid-b', 'uid-c')"), 0);
	assert_stored_rv(w, "50");
	assert_int_equal(informer_set_stats(w->set)->relists, 1);
	/* As client-go's Replace: the handlers hear of d, new, and of b and c, gone. */
	assert_int_equal(w->events[INFORMER_ADDED], 1);
	assert_int_equal(w->events[INFORMER_DELETED], 2);
	assert_logged(w, "removed 2 objects the apiserver no longer has");
	world_free(w);
}

static void
relist_removes_in_bounded_chunks(void **state)
{
	struct world *w = world_new();
	char *error = NULL;
	long long epoch;
	unsigned long batches;

	(void)state;
	/* 2500 pods from an earlier list, none of which the new state has. */
	assert_int_equal(store_begin(w->store, &error), 0);
	assert_int_equal(store_begin_list(w->store, pods, &epoch, &error), 0);
	for (int i = 0; i < 2500; i++) {
		char *uid = xasprintf("old-%d", i), *name = xasprintf("old-%d", i);
		char *text = pod_event("ADDED", uid, name, "3", "");
		cJSON *ev = cJSON_Parse(text), *obj = cJSON_DetachItemFromObject(ev, "object");

		assert_int_equal(store_upsert_object(w->store, pods, obj, epoch, NULL, NULL,
		    &error), 0);
		cJSON_Delete(obj);
		cJSON_Delete(ev);
		free(text);
		free(uid);
		free(name);
	}
	assert_int_equal(store_commit(w->store, &error), 0);
	world_start(w, INFORMER_WATCH_LIST_AUTO);	/* never synced: a sync */
	feed_pod(w, "ADDED", "uid-new", "new", "20");
	feed_initial_events_end(w, "20");
	informer_set_commit(w->set);
	batches = informer_set_stats(w->set)->batches;
	/* A loop turn deletes a chunk or two, not everything. */
	event_base_loop(w->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	assert_true(pod_count(w) >= 501);
	world_run(w);
	assert_int_equal(pod_count(w), 1);
	/* Each chunk (1000, 1000, 500) was a transaction of its own. */
	assert_true(informer_set_stats(w->set)->batches - batches >= 3);
	world_free(w);
}

static void
refused_watch_list_falls_back_to_a_paginated_list(void **state)
{
	struct world *w = world_new();
	const char *page1[] = { "uid-a:a:4", "uid-b:b:5" };
	const char *page2[] = { "uid-c:c:6" };
	char *body;

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	/* What kube-apiserver answers when its WatchList feature gate is off. */
	respond(w, 422, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
	    "\"status\":\"Failure\",\"message\":\"ListOptions.meta.k8s.io \\\"\\\" is invalid: "
	    "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the "
	    "WatchList feature gate is enabled\",\"reason\":\"Invalid\",\"code\":422}");
	assert_string_equal(request(w), "/api/v1/pods?limit=500");
	assert_logged(w, "informer resource=pods: watch-list failed: HTTP 422 Invalid: "
	    "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden");
	assert_logged(w, "falling back to a paginated LIST");
	assert_int_equal(informer_set_stats(w->set)->watch_list_fallbacks, 1);

	body = pod_list("30", page1, 2);
	{
		/* A first page with a continue token. */
		char *p = strstr(body, "\"resourceVersion\":\"30\"}");
		char *with = xasprintf("%.*s\"resourceVersion\":\"30\",\"continue\":\"tok en\"}%s",
		    (int)(p - body), body, p + strlen("\"resourceVersion\":\"30\"}"));
		respond(w, 200, with);
		free(with);
	}
	free(body);
	assert_string_equal(request(w), "/api/v1/pods?limit=500&continue=tok%20en");
	body = pod_list("30", page2, 1);
	respond(w, 200, body);
	free(body);
	world_run(w);
	assert_true(informer_set_synced(w->set));
	assert_int_equal(pod_count(w), 3);
	assert_stored_rv(w, "30");
	assert_logged(w, "informer resource=pods: synced by LIST resourceVersion=30 objects=3");
	assert_int_equal(informer_set_stats(w->set)->syncs_by_list, 1);
	/* Then a plain watch from the list's resourceVersion. */
	assert_non_null(strstr(request(w), "&resourceVersion=30&"));
	assert_null(strstr(request(w), "sendInitialEvents"));

	/* The next sync (after a 410) tries WatchList again. */
	respond(w, 410, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
	    "\"message\":\"too old resource version\",\"reason\":\"Expired\",\"code\":410}");
	assert_watch_list_request(w);
	world_free(w);
}

static void
stream_ending_before_the_bookmark_falls_back_to_list(void **state)
{
	struct world *w = world_new();

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	feed_pod(w, "ADDED", "uid-a", "a", "7");
	respond(w, 200, NULL);
	assert_string_equal(request(w), "/api/v1/pods?limit=500");
	assert_logged(w, "the stream ended after 1 events without the "
	    "k8s.io/initial-events-end bookmark; falling back to a paginated LIST");
	world_free(w);
}

static void
watch_list_forced_on_retries_instead_of_listing(void **state)
{
	struct world *w = world_new();

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_ON);
	respond(w, 400, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
	    "\"message\":\"bad\",\"reason\":\"BadRequest\",\"code\":400}");
	assert_string_equal(request(w), "");	/* backing off */
	assert_logged(w, "watch-list failed: HTTP 400 BadRequest: bad; retrying in");
	assert_int_equal(informer_set_stats(w->set)->lists, 0);
	assert_int_equal(informer_set_stats(w->set)->watch_list_fallbacks, 0);
	world_free(w);
}

static void
watch_list_off_lists(void **state)
{
	struct world *w = world_new();

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_OFF);
	assert_string_equal(request(w), "/api/v1/pods?limit=500");
	assert_int_equal(informer_set_stats(w->set)->watch_lists, 0);
	world_free(w);
}

/* An empty list: a PartialObjectMetadataList with no items has "items": null. The
 * informer is synced with nothing, as with "items": []; a list with no items at all is
 * refused. */
static void
empty_list_with_null_items_is_synced(void **state)
{
	const char *lists[] = {
		"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
		"{\"resourceVersion\":\"7\"},\"items\":null}",
		"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
		"{\"resourceVersion\":\"7\"},\"items\":[]}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
		struct world *w = world_new();

		world_start(w, INFORMER_WATCH_LIST_OFF);
		respond(w, 200, lists[i]);
		world_run(w);
		assert_true(informer_set_synced(w->set));
		assert_int_equal(pod_count(w), 0);
		assert_logged(w, "synced by LIST resourceVersion=7 objects=0");
		world_free(w);
	}
	{
		struct world *w = world_new();

		world_start(w, INFORMER_WATCH_LIST_OFF);
		respond(w, 200, "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\"}}");
		world_run(w);
		assert_false(informer_set_synced(w->set));
		assert_logged(w, "the response is not a list with items and a resourceVersion");
		world_free(w);
	}
}

static void
transient_failures_retry_watch_list_without_falling_back(void **state)
{
	struct world *w = world_new();

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	respond_transport_error(w);
	assert_string_equal(request(w), "");
	assert_logged(w, "watch-list failed: Connection refused; retrying in");
	informer_set_free(w->set);
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	respond(w, 429, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
	    "\"message\":\"slow down\",\"reason\":\"TooManyRequests\",\"code\":429}");
	assert_string_equal(request(w), "");
	assert_int_equal(informer_set_stats(w->set)->watch_list_fallbacks, 0);
	world_free(w);
}

static void
parse_accepts_auto_true_false(void **state)
{
	enum informer_watch_list mode;

	(void)state;
	assert_int_equal(informer_watch_list_parse("auto", &mode), 0);
	assert_int_equal(mode, INFORMER_WATCH_LIST_AUTO);
	assert_int_equal(informer_watch_list_parse("true", &mode), 0);
	assert_int_equal(mode, INFORMER_WATCH_LIST_ON);
	assert_int_equal(informer_watch_list_parse("false", &mode), 0);
	assert_int_equal(mode, INFORMER_WATCH_LIST_OFF);
	assert_int_equal(informer_watch_list_parse("yes", &mode), -1);
	assert_int_equal(informer_watch_list_parse("", &mode), -1);
}

/* --- bad items ------------------------------------------------------------------------ */

/* A synced informer at rv 10 with pods a, b, c, whose watch is open. */
static struct world *
world_watching(void)
{
	struct world *w = world_new();

	store_synced_state(w);
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	return w;
}

/* Runs the loop until the pods informer sends a request (its backoff over), at most 5 s. */
static void
world_run_until_request(struct world *w)
{
	double deadline = time_monotonic() + 5;

	while (*request(w) == '\0' && time_monotonic() < deadline)
		event_base_loop(w->base, EVLOOP_ONCE);
	assert_string_not_equal(request(w), "");
}

/* Caps the in-memory database at its current size: the next write that needs a page
 * fails as on a full disk (SQLITE_FULL), and SQLite rolls the transaction back. */
static void
disk_full(struct world *w, int full)
{
	char *sql = xasprintf("PRAGMA max_page_count = %lld", full ?
	    query_int(w, "PRAGMA page_count") : 1000000);

	query_int(w, sql);
	free(sql);
}

/* Feeds pods p0..p(n-1), each with a 32 KB annotation, at rv from..from+n-1. */
static void
feed_big_pods(struct world *w, int n, int from)
{
	char *pad = xmalloc(32 * 1024 + 1);

	memset(pad, 'x', 32 * 1024);
	pad[32 * 1024] = '\0';
	for (int i = 0; i < n; i++) {
		char *uid = xasprintf("uid-p%d", i), *name = xasprintf("p%d", i);
		char *rv = xasprintf("%d", from + i);
		char *meta = xasprintf("\"annotations\":{\"pad\":\"%s\"}", pad);
		char *text = pod_event("ADDED", uid, name, rv, meta);

		feed(w, text, 0);
		free(text);
		free(meta);
		free(rv);
		free(name);
		free(uid);
	}
	free(pad);
}

static void
full_disk_loses_the_turn_and_syncs_again_from_the_stored_resource_version(void **state)
{
	struct world *w = world_watching();
	char *text;

	(void)state;
	disk_full(w, 1);
	feed_big_pods(w, 20, 11);
	world_run(w);
	assert_logged(w, "the cache write failed, restarting from the stored state");
	assert_logged(w, "full");
	/* Nothing of the lost turn is stored, the resourceVersion least of all. */
	assert_int_equal(pod_count(w), 3);
	assert_stored_rv(w, "10");
	assert_int_equal(w->events[INFORMER_ADDED], 0);
	assert_false(informer_set_synced(w->set));
	assert_int_equal(query_int(w, "PRAGMA integrity_check = 1") , 0);

	/* Space is back: after the backoff, a sync from the stored resourceVersion, not
	 * from the newest event the lost turn had seen (30). */
	disk_full(w, 0);
	world_run_until_request(w);
	assert_non_null(strstr(request(w), "&sendInitialEvents=true"));
	assert_non_null(strstr(request(w), "&resourceVersion=10&"));
	feed_pod(w, "ADDED", "uid-a", "a", "10");
	feed_pod(w, "ADDED", "uid-b", "b", "10");
	feed_big_pods(w, 20, 11);
	world_run(w);
	assert_false(informer_set_synced(w->set));
	feed_initial_events_end(w, "40");
	world_run(w);
	assert_true(informer_set_synced(w->set));
	assert_int_equal(pod_count(w), 22);		/* c is gone, p0..p19 are in */
	assert_stored_rv(w, "40");
	assert_int_equal(w->events[INFORMER_ADDED], 20);
	assert_int_equal(w->events[INFORMER_DELETED], 1);
	text = world_log(w);
	assert_null(strstr(text, "resourceVersion=30"));
	free(text);
	world_free(w);
}

/* A last LIST page at rv of n pods with 32 KB annotations. */
static char *
big_pod_list(const char *rv, int n)
{
	struct buf b;

	buf_init(&b);
	buf_printf(&b, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
	    "{\"resourceVersion\":\"%s\"},\"items\":[", rv);
	for (int i = 0; i < n; i++) {
		buf_printf(&b, "%s{\"metadata\":{\"uid\":\"uid-p%d\",\"namespace\":\"ns\","
		    "\"name\":\"p%d\",\"resourceVersion\":\"%s\",\"annotations\":{\"pad\":\"",
		    i > 0 ? "," : "", i, i, rv);
		for (int k = 0; k < 32 * 1024; k++)
			buf_append(&b, "x", 1);
		buf_printf(&b, "\"}}}");
	}
	buf_printf(&b, "]}");
	return buf_detach(&b);
}

static void
failed_write_during_a_list_starts_the_list_over(void **state)
{
	struct world *w = world_new();
	char *text;

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_OFF);
	/* The first page, with a continue token. */
	respond(w, 200, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":"
	    "{\"resourceVersion\":\"5\",\"continue\":\"tok\"},\"items\":[{\"metadata\":"
	    "{\"uid\":\"uid-a\",\"namespace\":\"ns\",\"name\":\"a\",\"resourceVersion\":"
	    "\"5\"}}]}");
	/* The next page is asked for before this one is written. */
	assert_non_null(strstr(request(w), "continue=tok"));
	assert_int_equal(pod_count(w), 0);
	world_run(w);
	assert_int_equal(pod_count(w), 1);
	disk_full(w, 1);
	text = big_pod_list("6", 20);
	respond(w, 200, text);
	free(text);
	world_run(w);
	assert_logged(w, "the cache write failed");
	assert_int_equal(pod_count(w), 1);	/* none of the second page */
	disk_full(w, 0);
	world_run_until_request(w);
	/* Not from the continue token: the list in progress is not trusted any more. */
	assert_null(strstr(request(w), "continue="));
	assert_non_null(strstr(request(w), "/api/v1/pods?limit="));
	world_free(w);
}

static void
warm_start_before_controllers_syncs_from_the_stored_resource_version(void **state)
{
	struct world *w = world_new();
	struct informer_handlers h = { world_on_event, NULL, w };
	char *error = NULL;

	(void)state;
	store_synced_state(w);
	w->set = informer_set_new(w->base, NULL, w->store);
	informer_set_confirm_warm_start(w->set, 1);
	informer_set_add(w->set, pods);
	informer_set_add_handlers(w->set, &h);
	assert_int_equal(informer_set_start(w->set, &error), 0);
	assert_logged(w, "the cache holds 3 objects at resourceVersion=10; syncing from there");
	assert_non_null(strstr(request(w), "&sendInitialEvents=true"));
	assert_non_null(strstr(request(w), "&resourceVersionMatch=NotOlderThan"));
	assert_non_null(strstr(request(w), "&resourceVersion=10&"));
	/* The stored cache is there to read, but not current until the bookmark. */
	assert_false(informer_set_synced(w->set));
	assert_int_equal(pod_count(w), 3);
	feed_pod(w, "ADDED", "uid-a", "a", "10");
	feed_pod(w, "ADDED", "uid-b", "b", "12");
	world_run(w);
	assert_false(informer_set_synced(w->set));
	feed_initial_events_end(w, "15");
	world_run(w);
	assert_true(informer_set_synced(w->set));
	assert_int_equal(pod_count(w), 2);
	assert_int_equal(w->events[INFORMER_ADDED], 0);
	assert_int_equal(w->events[INFORMER_UPDATED], 1);	/* b moved on */
	assert_int_equal(w->events[INFORMER_DELETED], 1);	/* c was deleted meanwhile */
	assert_logged(w, "synced by WatchList resourceVersion=15 objects=2");
	world_free(w);
}

/* An ERROR event saying the resourceVersion is too old starts a relist on a new stream
 * while the old stream is still being read: what follows the error in the same chunk is
 * not applied, and the old stream is freed only once its feed is over (ASan and valgrind
 * runs of this test catch a use after free). */
static void
expired_error_event_mid_chunk_relists_on_a_new_stream(void **state)
{
	struct world *w = world_watching();
	char *after = pod_event("MODIFIED", "uid-a", "a", "11", "");
	char *chunk = xasprintf("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
	    "\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"too old resource "
	    "version: 10 (50)\",\"reason\":\"Expired\",\"code\":410}}\n%s", after);

	(void)state;
	feed(w, chunk, 0);
	world_run(w);
	assert_logged(w, "relisting");
	assert_watch_list_request(w);
	assert_int_equal(informer_set_stats(w->set)->relists, 1);
	assert_stored_rv(w, "10");	/* the event after the error was not applied */
	feed_pod(w, "ADDED", "uid-a", "a", "10");
	feed_initial_events_end(w, "50");
	world_run(w);
	assert_int_equal(pod_count(w), 1);
	assert_stored_rv(w, "50");
	free(chunk);
	free(after);
	world_free(w);
}

static void
truncated_event_restarts_the_watch_and_loses_nothing(void **state)
{
	struct world *w = world_watching();

	(void)state;
	feed_pod(w, "MODIFIED", "uid-a", "a", "11");
	feed(w, "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"uid\":\"x", 0);
	respond(w, 200, NULL);
	world_run(w);
	assert_logged(w, "informer resource=pods: watch: ");
	assert_logged(w, "truncated");
	assert_string_equal(request(w), "");	/* backing off, then from rv 11 */
	assert_int_equal(pod_count(w), 3);
	assert_stored_rv(w, "11");
	world_free(w);
}

static void
truncated_initial_events_sync_again_and_lose_nothing(void **state)
{
	struct world *w = world_new();

	(void)state;
	store_synced_state(w);
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	respond(w, 410, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
	    "\"message\":\"too old\",\"reason\":\"Expired\",\"code\":410}");
	feed_pod(w, "ADDED", "uid-a", "a", "10");
	feed(w, "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"uid\":\"x", 0);
	respond_transport_error(w);
	world_run(w);
	assert_logged(w, "watch-list failed: Connection refused; retrying in");
	assert_int_equal(pod_count(w), 3);
	assert_stored_rv(w, "10");
	world_free(w);
}

static void
item_that_is_not_an_object_restarts_the_watch(void **state)
{
	struct world *w = world_watching();

	(void)state;
	feed(w, "{\"type\":\"ADDED\",\"object\":[1,2,3]}\n", 0);
	world_run(w);
	assert_logged(w, "informer resource=pods: watch: bad event:");
	assert_string_equal(request(w), "");
	assert_int_equal(pod_count(w), 3);
	world_free(w);
}

static void
bytes_that_are_not_json_restart_the_watch(void **state)
{
	struct world *w = world_watching();

	(void)state;
	feed(w, "not json at all\n", 0);
	world_run(w);
	assert_logged(w, "informer resource=pods: watch: ");
	assert_string_equal(request(w), "");
	assert_int_equal(pod_count(w), 3);
	world_free(w);
}

static void
unknown_kind_is_skipped_and_the_stream_goes_on(void **state)
{
	struct world *w = world_watching();

	(void)state;
	feed(w, "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Secret\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"uid\":\"s1\",\"namespace\":\"ns\",\"name\":\"token\","
	    "\"resourceVersion\":\"11\"}}}\n", 0);
	feed_pod(w, "ADDED", "uid-d", "d", "12");
	world_run(w);
	assert_logged(w, "informer resource=pods: skipping ns/token of unexpected kind Secret");
	assert_int_equal(pod_count(w), 4);
	assert_int_equal(query_int(w, "SELECT count(*) FROM cache_pods WHERE uid = 's1'"), 0);
	assert_stored_rv(w, "12");
	assert_int_not_equal(request(w)[0], '\0');	/* the watch is still open */
	world_free(w);
}

static void
object_without_uid_is_skipped_and_the_stream_goes_on(void **state)
{
	struct world *w = world_watching();

	(void)state;
	feed(w, "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"namespace\":\"ns\",\"name\":\"nouid\",\"resourceVersion\":\"11\"}}}\n",
	    0);
	feed(w, "{\"type\":\"DELETED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"namespace\":\"ns\",\"name\":\"a\",\"resourceVersion\":\"12\"}}}\n", 0);
	feed_pod(w, "MODIFIED", "uid-b", "b", "13");
	world_run(w);
	assert_logged(w, "informer resource=pods object=ns/nouid: not stored:");
	assert_int_equal(pod_count(w), 3);
	assert_stored_rv(w, "13");
	assert_int_not_equal(request(w)[0], '\0');
	world_free(w);
}

static void
unicode_and_quotes_in_labels_are_stored_verbatim(void **state)
{
	struct world *w = world_new();
	char *text, *v;

	(void)state;
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	text = pod_event("ADDED", "uid-u", "u", "3", "\"labels\":{"
	    "\"ex\\\"ample.com/k'ey\":\"v\\\"al'ue; DROP TABLE labels; --\","
	    "\"\\u00e9t\\u00e9\":\"\\u2603 \\ud83d\\ude80\",\"back\\\\slash\":\"\\\\\"}");
	feed(w, text, 3);	/* cut in the middle of every escape */
	free(text);
	feed_initial_events_end(w, "3");
	world_run(w);
	assert_int_equal(query_int(w, "SELECT count(*) FROM labels WHERE uid = 'uid-u'"), 3);
	v = query_text(w, "SELECT value FROM labels WHERE key = 'ex\"ample.com/k''ey'");
	assert_string_equal(v, "v\"al'ue; DROP TABLE labels; --");
	free(v);
	v = query_text(w, "SELECT value FROM labels WHERE key = '\xc3\xa9t\xc3\xa9'");
	assert_string_equal(v, "\xe2\x98\x83 \xf0\x9f\x9a\x80");
	free(v);
	v = query_text(w, "SELECT value FROM labels WHERE key = 'back\\slash'");
	assert_string_equal(v, "\\");
	free(v);
	world_free(w);
}

static void
megabyte_annotation_is_stored_whole(void **state)
{
	struct world *w = world_new();
	size_t n = 1024 * 1024;
	char *value = xmalloc(n + 1), *meta, *text, *got;

	(void)state;
	for (size_t i = 0; i < n; i++)
		value[i] = "abcxyz'!"[i % 8];
	value[n] = '\0';
	meta = xasprintf("\"annotations\":{\"big\":\"%s\"}", value);
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	text = pod_event("ADDED", "uid-big", "big", "3", meta);
	feed(w, text, 16384);	/* curl's chunk size */
	feed_initial_events_end(w, "3");
	world_run(w);
	got = query_text(w, "SELECT json_extract(body, '$.metadata.annotations.big') "
	    "FROM cache_pods WHERE uid = 'uid-big'");
	assert_non_null(got);
	assert_int_equal(strlen(got), n);
	assert_true(strcmp(got, value) == 0);
	assert_true(informer_set_synced(w->set));
	free(got);
	free(text);
	free(meta);
	free(value);
	world_free(w);
}

/* --- transactions --------------------------------------------------------------------- */

static void
long_streams_commit_in_bounded_batches(void **state)
{
	struct world *w = world_new();
	struct buf b;

	(void)state;
	buf_init(&b);
	world_start(w, INFORMER_WATCH_LIST_AUTO);
	for (int i = 0; i < 2500; i++) {
		char *uid = xasprintf("u-%d", i), *name = xasprintf("p-%d", i);
		char *text = pod_event("ADDED", uid, name, "9", "");

		buf_printf(&b, "%s", text);
		free(text);
		free(uid);
		free(name);
	}
	/* One read, no loop turn in between: the informer commits by itself, every 128
	 * changes when handlers are waiting for them (each holds a parsed object until the
	 * commit), so 19 commits and 2432 changes handed on before the loop turn ends. */
	feed(w, b.data, 0);
	assert_int_equal(informer_set_stats(w->set)->batches, 2500 / 128);
	assert_int_equal(w->events[INFORMER_ADDED], 2500 / 128 * 128);
	feed_initial_events_end(w, "9");
	world_run(w);
	assert_int_equal(w->events[INFORMER_ADDED], 2500);
	assert_int_equal(pod_count(w), 2500);
	buf_free(&b);
	world_free(w);
}

static int
setup(void **state)
{
	(void)state;
	pods = resource_find("pods");
	return pods == NULL;
}

/* A metadata-only informer (a resource discovery found): its WatchList asks for the
 * collection, its events carry PartialObjectMetadata (any other kind is skipped), and its
 * objects land in cache_objects under the resource's name. */
static void
metadata_informer_stores_partial_object_metadata(void **state)
{
	struct world *w = world_new();
	const struct resource *cms = resource_metadata("", "v1", "limitranges", "LimitRange", 1);
	const char *path;
	char *error = NULL;
	static const char events[] =
	    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"PartialObjectMetadata\","
	    "\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{\"uid\":\"cm1\",\"namespace\":"
	    "\"ns\",\"name\":\"settings\",\"resourceVersion\":\"7\",\"ownerReferences\":"
	    "[{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"name\":\"s\",\"uid\":\"s1\"}]}}}\n"
	    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"LimitRange\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"uid\":\"cm2\",\"namespace\":\"ns\",\"name\":\"whole\","
	    "\"resourceVersion\":\"8\"},\"data\":{\"a\":\"b\"}}}\n"
	    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"PartialObjectMetadata\","
	    "\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{\"resourceVersion\":\"9\","
	    "\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}\n";

	(void)state;
	assert_int_equal(store_note_api_resource(w->store, cms, 1, &error), 0);
	w->set = informer_set_new(w->base, NULL, w->store);
	informer_set_add(w->set, cms);
	assert_int_equal(informer_set_start(w->set, &error), 0);
	path = informer_set_request_path(w->set, cms);
	assert_non_null(path);
	assert_non_null(strstr(path, "/api/v1/limitranges?watch=1"));
	assert_non_null(strstr(path, "sendInitialEvents=true"));
	informer_set_receive(w->set, cms, events, strlen(events));
	world_run(w);
	assert_logged(w, "informer resource=limitranges: skipping ns/whole of unexpected kind "
	    "LimitRange");
	assert_int_equal(query_int(w, "SELECT count(*) FROM cache_objects WHERE uid = 'cm1' "
	    "AND resource = 'limitranges' AND name = 'settings'"), 1);
	assert_int_equal(query_int(w, "SELECT count(*) FROM objects WHERE kind = 'LimitRange'"),
	    1);
	assert_int_equal(query_int(w, "SELECT count(*) FROM dangling_owner_refs WHERE "
	    "owner_kind = 'Secret' AND dependent = 'settings'"), 1);
	assert_int_equal(query_int(w, "SELECT synced FROM informers WHERE resource = "
	    "'limitranges'"), 1);
	assert_true(informer_set_synced(w->set));
	/* Removed from the running set: no request of its own any more. */
	informer_set_remove(w->set, cms);
	assert_false(informer_set_has(w->set, cms));
	world_free(w);
	resource_metadata_free_all();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cold_start_asks_for_initial_events),
		cmocka_unit_test(initial_events_end_bookmark_syncs_on_the_same_stream),
		cmocka_unit_test(batch_period_holds_watch_events_and_applies_them_in_one_transaction),
		cmocka_unit_test(batch_period_holds_only_the_resources_chosen),
		cmocka_unit_test(bookmark_without_the_annotation_does_not_end_initial_events),
		cmocka_unit_test(relist_by_watch_list_removes_what_the_initial_events_lack),
		cmocka_unit_test(relist_removes_in_bounded_chunks),
		cmocka_unit_test(refused_watch_list_falls_back_to_a_paginated_list),
		cmocka_unit_test(stream_ending_before_the_bookmark_falls_back_to_list),
		cmocka_unit_test(watch_list_forced_on_retries_instead_of_listing),
		cmocka_unit_test(watch_list_off_lists),
		cmocka_unit_test(empty_list_with_null_items_is_synced),
		cmocka_unit_test(transient_failures_retry_watch_list_without_falling_back),
		cmocka_unit_test(parse_accepts_auto_true_false),
		cmocka_unit_test(full_disk_loses_the_turn_and_syncs_again_from_the_stored_resource_version),
		cmocka_unit_test(failed_write_during_a_list_starts_the_list_over),
		cmocka_unit_test(warm_start_before_controllers_syncs_from_the_stored_resource_version),
		cmocka_unit_test(expired_error_event_mid_chunk_relists_on_a_new_stream),
		cmocka_unit_test(truncated_event_restarts_the_watch_and_loses_nothing),
		cmocka_unit_test(truncated_initial_events_sync_again_and_lose_nothing),
		cmocka_unit_test(item_that_is_not_an_object_restarts_the_watch),
		cmocka_unit_test(bytes_that_are_not_json_restart_the_watch),
		cmocka_unit_test(unknown_kind_is_skipped_and_the_stream_goes_on),
		cmocka_unit_test(object_without_uid_is_skipped_and_the_stream_goes_on),
		cmocka_unit_test(unicode_and_quotes_in_labels_are_stored_verbatim),
		cmocka_unit_test(megabyte_annotation_is_stored_whole),
		cmocka_unit_test(long_streams_commit_in_bounded_batches),
		cmocka_unit_test(metadata_informer_stores_partial_object_metadata),
	};
	return cmocka_run_group_tests_name("informer", tests, setup, NULL);
}
