/*
 * test_executor.c - carrying out a ReplicaSet sync against an apiserver: the order and
 * number of requests, the expectations and write records left in the store, the events,
 * and the outcome the workqueue gets.
 *
 * Each test writes ReplicaSets and pods into an in-memory store, syncs the key, and hands
 * the result to a real executor on a real event loop; its requests go through restops and
 * the REST client to the fixtures' fake apiserver (client_new_responder), which records
 * them and answers as an apiserver would unless a fault of the test matches first.
 *
 * The cases are kube-controller-manager v1.36's (pkg/controller/replicaset/
 * replica_set_test.go, pkg/controller/controller_utils_test.go), as data; where kube
 * checks a fake PodControl's counters or a fake clientset's actions, these check the
 * requests that reached the apiserver. Deliberate differences, asserted as sqlkcm has
 * them: a delete carries the pod's uid as a precondition; the live recheck of the owner
 * happens only before an adoption, not before a release.
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
#include <sqlite3.h>

#include "action.h"
#include "client.h"
#include "consistency.h"
#include "controller.h"
#include "kubeevents.h"
#include "executor.h"
#include "expectations.h"
#include "controllers/replicaset.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "metrics.h"
#include "registry.h"
#include "resource.h"
#include "manager.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

/* A fixture, a fake apiserver, and an executor sending to it. */
struct harness {
	struct fixture *f;
	struct fake_apiserver *fake;
	struct kubeevents *events;	/* the ReplicaSet controller's */
	struct kubeevents **recorders;	/* per controller type, as the executor takes them */
	struct executor *e;
	int done;			/* times the done callback ran */
	struct executor_outcome outcome;
	char *dir;			/* for tests with a database file */
};

/* Builds the harness over f. */
static struct harness *
harness_new(struct fixture *f)
{
	struct harness *h = xcalloc(1, sizeof *h);

	h->f = f;
	h->fake = fake_apiserver_new(f);
	h->events = kubeevents_new(h->fake->client,
	    replicaset_controller_type.event_component);
	h->recorders = xcalloc((size_t)controller_type_count, sizeof *h->recorders);
	for (int i = 0; i < controller_type_count; i++) {
		if (controller_types[i] == &replicaset_controller_type)
			h->recorders[i] = h->events;
	}
	h->e = executor_new(h->fake->client, f->store, NULL, h->recorders);
	return h;
}

/* Frees the harness and its fixture. */
static void
harness_free(struct harness *h)
{
	executor_free(h->e);
	kubeevents_free(h->events);
	free(h->recorders);
	fake_apiserver_free(h->fake);
	fixture_free(h->f);
	free(h);
}

/* A harness over an in-memory store for each test. */
static int
setup(void **state)
{
	*state = harness_new(fixture_new());
	return 0;
}

/* Frees the test's harness. */
static int
teardown(void **state)
{
	harness_free(*state);
	return 0;
}

/* The executor's done callback: keeps the outcome. */
static void
on_done(const char *key, const struct executor_outcome *outcome, void *arg)
{
	struct harness *h = arg;

	if (strncmp(key, "other:", 6) != 0)	/* a key that is no namespace/name */
		assert_string_equal(key, KEY);
	h->done++;
	h->outcome = *outcome;
}

/* Syncs KEY, carries the result out, and runs the loop until everything (events too) is
 * sent. */
static void
carry_out(struct harness *h)
{
	struct sync_result r;
	char *error = NULL;

	sync_key(h->f, KEY, time_now(), &r);
	h->done = 0;
	memset(&h->outcome, 0, sizeof h->outcome);
	if (executor_run(h->e, h->f->c, &r, on_done, h, &error) != 0)
		fail_msg("executor_run: %s", error);
	assert_int_equal(h->done, 0);	/* never from inside executor_run */
	fake_apiserver_run(h->fake);
	assert_int_equal(h->done, 1);
	assert_int_equal(executor_in_flight(h->e), 0);
	sync_result_clear(&r);
}

/* Fails unless the outcome is (failed, retry_now). */
static void
assert_outcome(const struct harness *h, int failed, int retry_now)
{
	if (h->outcome.failed != failed || h->outcome.retry_now != retry_now)
		fail_msg("outcome failed=%d retry_now=%d, want failed=%d retry_now=%d",
		    h->outcome.failed, h->outcome.retry_now, failed, retry_now);
}

/* Fails unless the requests (events left out) are want. */
static void
assert_requests(const struct harness *h, const char *want)
{
	char *got = fake_apiserver_requests(h->fake);

	if (strcmp(got, want) != 0)
		fail_msg("requests:\n  got  %s\n  want %s", got, want);
	free(got);
}

/* Fails unless the requests of method on path went out in batches want ("1,2,4"). */
static void
assert_batches(const struct harness *h, const char *method, const char *path,
    const char *want)
{
	char *got = fake_apiserver_batches(h->fake, method, path);

	if (strcmp(got, want) != 0)
		fail_msg("%s %s batches: got \"%s\", want \"%s\"", method, path, got, want);
	free(got);
}

/* Fails unless KEY's expectations are (adds, deletes); -99 for no row. */
static void
assert_expectations(const struct harness *h, long long adds, long long deletes)
{
	long long a = -99, d = -99;
	char *error = NULL;
	int found;

	if (expectations_get(h->f->c->expectations, KEY, &found, &a, &d, NULL, &error) != 0)
		fail_msg("expectations_get: %s", error);
	if (!found)
		a = d = -99;
	if (a != adds || d != deletes)
		fail_msg("expectations adds=%lld deletes=%lld, want adds=%lld deletes=%lld", a, d,
		    adds, deletes);
}

/* Returns the rows of db's query (one text parameter) as "a=b;c=d" (malloc'd). */
static char *
query_pairs(sqlite3 *db, const char *sql, const char *param)
{
	sqlite3_stmt *stmt;
	struct buf b;

	buf_init(&b);
	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_bind_text(stmt, 1, param, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&b, "%s%s=%s", b.len > 0 ? ";" : "", sqlite3_column_text(stmt, 0),
		    sqlite3_column_text(stmt, 1));
	sqlite3_finalize(stmt);
	return buf_detach(&b);
}

/* Fails unless KEY's write records (controller_writes) are want, "pods=109;replicasets=110". */
static void
assert_writes(const struct harness *h, const char *want)
{
	char *got = query_pairs(store_db(h->f->store), "SELECT resource, resource_version"
	    " FROM controller_writes WHERE controller = 'replicaset' AND key = ?1"
	    " ORDER BY resource", KEY);

	if (strcmp(got, want) != 0)
		fail_msg("controller_writes: got \"%s\", want \"%s\"", got, want);
	free(got);
}

/* Fails unless the pods KEY still waits to see deleted are want, "default/a=1;...". */
static void
assert_expected_deletions(const struct harness *h, const char *want)
{
	char *got = query_pairs(store_db(h->f->store), "SELECT pod_key, 1"
	    " FROM expected_deletions WHERE controller = 'replicaset' AND key = ?1"
	    " ORDER BY pod_key", KEY);

	if (strcmp(got, want) != 0)
		fail_msg("expected_deletions: got \"%s\", want \"%s\"", got, want);
	free(got);
}

/* Fails unless the event POSTs are want ("type reason: message;..."). */
static void
assert_events(const struct harness *h, const char *want)
{
	char *got = fake_apiserver_events(h->fake);

	if (strcmp(got, want) != 0)
		fail_msg("events:\n  got  %s\n  want %s", got, want);
	free(got);
}

/* Returns the n-th (from 0) request of method on path; fails if there is none. */
static const struct recorded_request *
nth_request(const struct harness *h, const char *method, const char *path, int n)
{
	for (int i = 0; i < h->fake->nrequests; i++) {
		const struct recorded_request *rq = &h->fake->requests[i];
		if (strcmp(rq->method, method) == 0 && strcmp(rq->short_path, path) == 0 &&
		    n-- == 0)
			return rq;
	}
	fail_msg("no such request: %s %s", method, path);
	return NULL;
}

/* The ReplicaFailure condition of a status PUT as "reason: message", or "" when none. */
static char *
failure_condition(const struct recorded_request *rq)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_path(rq->json, "status.conditions")) {
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(c, "type");
		if (cJSON_IsString(type) && strcmp(type->valuestring, "ReplicaFailure") == 0)
			return xasprintf("%s: %s",
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "reason")),
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "message")));
	}
	return xstrdup("");
}

/* Fails unless the last status PUT's ReplicaFailure condition is want ("" for none). */
static void
assert_failure_condition(const struct harness *h, const char *want)
{
	int n = fake_apiserver_count(h->fake, "PUT", "replicasets/foobar/status");
	char *got;

	assert_true(n > 0);
	got = failure_condition(nth_request(h, "PUT", "replicasets/foobar/status", n - 1));
	if (strcmp(got, want) != 0)
		fail_msg("ReplicaFailure: got \"%s\", want \"%s\"", got, want);
	free(got);
}

/* The events of creations foobar-0 to foobar-<n - 1>. The tenth distinct message of one
 * reason within ten minutes is sent combined, as client-go's EventAggregator does. */
static char *
created_events(int n)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < n; i++)
		buf_printf(&b, "%sNormal SuccessfulCreate: %sCreated pod: foobar-%d",
		    b.len > 0 ? ";" : "", i >= 9 ? "(combined from similar events): " : "", i);
	return buf_detach(&b);
}

/* --- creations: slow start (TestSlowStartBatch, TestSyncReplicaSetCreateFailures) --------- */

/* A slow start case: replicas wanted, creations failing from the fail_from-th on (0:
 * none), and what kube's table says comes of it. */
struct slow_start_case {
	const char *name;
	int replicas;
	int fail_from;
	int fail_to;			/* the last to fail; 0: all from fail_from on */
	const char *batches;		/* the POSTs, per batch */
	int successes;
	long long adds_left;		/* expectations after the skipped ones are lowered */
	const char *writes;		/* the newest resourceVersions recorded */
	int event_patches;		/* identical failures after the first: one PATCH;
					   -1: events not checked */
};

static const struct slow_start_case slow_start_cases[] = {
	/* TestSlowStartBatch, count 10 */
	{ "callLimit = 0 (all fail)", 10, 1, 0, "1", 0, 0, "replicasets=100", 0 },
	{ "callLimit = count (all succeed)", 10, 0, 0, "1,2,4,3", 10, 10,
	    "pods=109;replicasets=110", 0 },
	{ "callLimit < count (some succeed)", 10, 6, 0, "1,2,4", 5, 5,
	    "pods=104;replicasets=105", 1 },
	/* one failure, the 7th: its batch is the last, 4 not made */
	{ "the 7th fails", 10, 7, 7, "1,2,4", 6, 6, "pods=105;replicasets=106", 0 },
	/* TestSyncReplicaSetCreateFailures: CreateLimit 10, 100 replicas; at most
	 * 1+2+4+8 create calls */
	{ "create limit 10 of 100", 100, 11, 0, "1,2,4,8", 10, 10,
	    "pods=109;replicasets=110", 1 },
	/* TestControllerBurstReplicas with kube's burst of 500: 600 wanted, 500 asked for
	 * (events not checked: past 25 the spam filter drops them) */
	{ "burst of 500", 600, 0, 0, "1,2,4,8,16,32,64,128,245", 500, 500,
	    "pods=599;replicasets=600", -1 },
};

/* Creations go out in batches of 1, 2, 4, ...; a batch with a failure is the last; every
 * creation not made lowers the expectations; the status carries FailedCreate. */
static void
creations_go_out_in_slow_start_batches(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(slow_start_cases); i++) {
		const struct slow_start_case *tc = &slow_start_cases[i];
		struct harness *h = harness_new(fixture_new());
		struct fake_fault fault = { "POST", "pods", tc->fail_from, tc->fail_to, 500,
		    "InternalError", "fake error", NULL };
		char *want_events, *created;

		print_message("# %s\n", tc->name);
		add_rs(h->f, &(struct rs){ .replicas = tc->replicas });
		if (tc->fail_from > 0)
			fake_apiserver_set_faults(h->fake, &fault, 1);
		carry_out(h);

		assert_batches(h, "POST", "pods", tc->batches);
		assert_expectations(h, tc->adds_left, 0);
		assert_writes(h, tc->writes);
		assert_outcome(h, tc->fail_from > 0, 0);
		assert_int_equal(fake_apiserver_count(h->fake, "PUT",
		    "replicasets/foobar/status"), 1);
		assert_failure_condition(h, tc->fail_from > 0 ?
		    "FailedCreate: fake error" : "");
		/* One event per pod created; identical failures are one Event (counted by
		 * a PATCH, which is not a POST). */
		created = created_events(tc->successes < 10 ? tc->successes : 10);
		want_events = tc->fail_from > 0 ? xasprintf("%s%sWarning FailedCreate: "
		    "Error creating: fake error", created, *created != '\0' ? ";" : "") :
		    xstrdup(created);
		if (tc->event_patches >= 0) {
			assert_events(h, want_events);
			assert_int_equal(fake_apiserver_count(h->fake, "PATCH", "events/"),
			    tc->event_patches);
		}
		free(created);
		free(want_events);
		harness_free(h);
	}
}

/* kube's RealPodControl creates what the template says (TestCreatePodsWithGenerateName):
 * a POST to the namespace's pods with generateName "<rs>-", the template's labels and
 * spec and the controller reference. */
static void
creation_posts_the_template_with_the_controller_reference(void **state)
{
	struct harness *h = *state;
	const struct recorded_request *rq;
	const cJSON *ref;

	add_rs(h->f, &(struct rs){ .replicas = 1 });
	carry_out(h);

	rq = nth_request(h, "POST", "pods", 0);
	assert_string_equal(rq->path, "/api/v1/namespaces/default/pods");
	assert_string_equal(rq->content_type, "application/json");
	assert_string_equal(cJSON_GetStringValue(json_path(rq->json, "metadata.generateName")),
	    "foobar-");
	assert_string_equal(cJSON_GetStringValue(json_path(rq->json, "metadata.labels.type")),
	    "production");
	assert_string_equal(cJSON_GetStringValue(json_path(rq->json, "spec.nodeSelector.baz")),
	    "blah");
	ref = cJSON_GetArrayItem(json_path(rq->json, "metadata.ownerReferences"), 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ref, "uid")),
	    "uid-foobar");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(ref, "controller")));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(ref, "blockOwnerDeletion")));
	assert_outcome(h, 0, 0);
}

/* A second apiserver for executor_use_client: counts what it is asked, answers 201 with
 * the body (a creation) or 200 with an empty object. */
static void
count_responder(const char *method, const char *path, const char *content_type,
    const char *body, size_t len, struct client_reply *reply, void *arg)
{
	int *count = arg;

	(void)path;
	(void)content_type;
	(void)len;
	(*count)++;
	reply->http_code = strcmp(method, "POST") == 0 ? 201 : 200;
	reply->body = xstrdup(body != NULL ? body : "{}");
}

/* Each controller writes through its own client (and rate limit), as in
 * kube-controller-manager: the ReplicaSet controller's requests go to the client given for
 * its type, none to the executor's. */
static void
a_controller_writes_through_the_client_given_for_its_type(void **state)
{
	struct harness *h = *state;
	int count = 0;
	struct client *own = client_new_responder(h->fake->base, count_responder, &count);

	executor_use_client(h->e, &replicaset_controller_type, own);
	add_rs(h->f, &(struct rs){ .replicas = 2 });
	carry_out(h);
	/* Two creations and the status; the events go through the recorder's client. */
	assert_int_equal(count, 3);
	assert_requests(h, "");
	assert_outcome(h, 0, 0);
	client_free(own);
}

/* A creation refused because the namespace is being deleted counts as made
 * (manageReplicas' NamespaceTerminatingCause case): no failure, no condition, no event,
 * the expectations stay as set (the namespace's deletion ends the owner). */
static void
creation_refused_by_a_terminating_namespace_is_no_failure(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault terminating = { "POST", "pods", 1, 0, 403, "Forbidden",
	    "unable to create new content in namespace default because it is being terminated",
	    "NamespaceTerminating" };

	add_rs(h->f, &(struct rs){ .replicas = 3 });
	fake_apiserver_set_faults(h->fake, &terminating, 1);
	carry_out(h);

	assert_batches(h, "POST", "pods", "1,2");
	assert_outcome(h, 0, 0);
	assert_expectations(h, 3, 0);
	assert_failure_condition(h, "");
	assert_events(h, "");
}

/* Any other refusal fails the batch, even a 403. */
static void
creation_forbidden_otherwise_is_a_failure(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault quota = { "POST", "pods", 1, 0, 403, "Forbidden",
	    "exceeded quota", NULL };

	add_rs(h->f, &(struct rs){ .replicas = 3 });
	fake_apiserver_set_faults(h->fake, &quota, 1);
	carry_out(h);

	assert_batches(h, "POST", "pods", "1");
	assert_outcome(h, 1, 0);
	assert_expectations(h, 0, 0);
	assert_failure_condition(h, "FailedCreate: exceeded quota");
	assert_events(h, "Warning FailedCreate: Error creating: exceeded quota");
}

/* A creation that got no response at all fails as a refusal does. */
static void
creation_without_a_response_is_a_failure(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault lost = { "POST", "pods", 2, 2, 0, NULL, NULL, NULL };

	add_rs(h->f, &(struct rs){ .replicas = 4 });
	fake_apiserver_set_faults(h->fake, &lost, 1);
	carry_out(h);

	assert_batches(h, "POST", "pods", "1,2");
	assert_outcome(h, 1, 0);
	/* 4 expected, 2 made (the first, and one of the second batch). */
	assert_expectations(h, 2, 0);
}

/*
 * A pods informer over the harness's store, synced from an empty LIST, and the executor
 * rebuilt to tell it of lost answers. Its set has no client (it only remembers the request
 * it would send) and a loop of its own, so that its timers do not keep the fake's loop
 * running. Returns the set; harness_drop_informers frees it.
 */
static struct event_base *informer_base;

static struct informer_set *
harness_with_synced_pods_informer(struct harness *h)
{
	static const char list[] = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}";
	struct client_response resp = { 200, list, sizeof list - 1, NULL, NULL };
	struct informer_set *set;
	char *error = NULL;

	informer_base = event_base_new();
	assert_non_null(informer_base);
	set = informer_set_new(informer_base, NULL, h->f->store);

	informer_set_watch_list(set, INFORMER_WATCH_LIST_OFF);
	informer_set_add(set, h->f->pods);
	if (informer_set_start(set, &error) != 0)
		fail_msg("informer_set_start: %s", error);
	assert_non_null(strstr(informer_set_request_path(set, h->f->pods), "/api/v1/pods?"));
	informer_set_respond(set, h->f->pods, &resp);
	for (int i = 0; i < 20; i++)
		event_base_loop(informer_base, EVLOOP_NONBLOCK);
	informer_set_commit(set);
	assert_int_equal(informer_set_synced(set), 1);
	executor_free(h->e);
	h->e = executor_new(h->fake->client, h->f->store, set, h->recorders);
	return set;
}

/* Frees the harness's executor before the informer set it tells. */
static void
harness_drop_informers(struct harness *h, struct informer_set *set)
{
	executor_free(h->e);
	h->e = executor_new(h->fake->client, h->f->store, NULL, h->recorders);
	informer_set_free(set);
	event_base_free(informer_base);
	informer_base = NULL;
}

/*
 * A creation whose answer was lost may have made its pod: the expectation is lowered as
 * kube lowers it, so the pods informer must sync again before the controller can act on a
 * cache that does not show that pod yet. A creation refused with an answer leaves the
 * informer synced.
 */
static void
creation_without_a_response_makes_the_pods_informer_sync_again(void **state)
{
	static const struct {
		struct fake_fault fault;
		int synced;		/* the informer afterwards */
	} cases[] = {
		{ { "POST", "pods", 2, 2, 500, "InternalError", "fake error", NULL }, 1 },
		{ { "POST", "pods", 2, 2, 409, "AlreadyExists", "exists", NULL }, 1 },
		{ { "POST", "pods", 2, 2, 0, NULL, NULL, NULL }, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct harness *h = harness_new(fixture_new());
		struct informer_set *set = harness_with_synced_pods_informer(h);

		add_rs(h->f, &(struct rs){ .replicas = 4 });
		fake_apiserver_set_faults(h->fake, &cases[i].fault, 1);
		carry_out(h);
		assert_batches(h, "POST", "pods", "1,2");
		assert_outcome(h, 1, 0);
		if (informer_set_synced(set) != cases[i].synced)
			fail_msg("case %zu (code %d): informer synced=%d, want %d", i,
			    cases[i].fault.code, !cases[i].synced, cases[i].synced);
		harness_drop_informers(h, set);
		harness_free(h);
	}
}

/* --- deletions (TestDeletePodsAllowsMissing, manageReplicas' deletions) ---------------- */

/* Adds pods a..c (names) controlled by foobar. */
static void
add_owned_pods(struct harness *h, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		add_pod(h->f, &(struct pod){ .name = names[i], .owner = "foobar",
		    .phase = "Running" });
}

/* Deletions go out together, each with the pod's uid as a precondition (sqlkcm's choice:
 * kube deletes by name alone); success lowers nothing (the informer will see it). */
static void
deletions_go_out_at_once_with_a_uid_precondition(void **state)
{
	struct harness *h = *state;
	static const char *const names[] = { "pod-a", "pod-b", "pod-c" };
	const struct recorded_request *rq;

	add_rs(h->f, &(struct rs){ .replicas = 0 });
	add_owned_pods(h, names, 3);
	carry_out(h);

	assert_batches(h, "DELETE", "pods/", "3");
	assert_requests(h, "DELETE pods/pod-a;DELETE pods/pod-b;DELETE pods/pod-c;"
	    "PUT replicasets/foobar/status");
	rq = nth_request(h, "DELETE", "pods/pod-b", 0);
	assert_string_equal(cJSON_GetStringValue(json_path(rq->json, "preconditions.uid")),
	    "uid-pod-b");
	assert_outcome(h, 0, 0);
	assert_expectations(h, 0, 3);
	assert_expected_deletions(h, "default/pod-a=1;default/pod-b=1;default/pod-c=1");
	assert_failure_condition(h, "");
	assert_events(h, "Normal SuccessfulDelete: Deleted pod: pod-a;"
	    "Normal SuccessfulDelete: Deleted pod: pod-b;"
	    "Normal SuccessfulDelete: Deleted pod: pod-c");
}

/* A deletion whose answer was lost makes the pods informer sync again; a NotFound, which
 * is an answer, does not. */
static void
deletion_without_a_response_makes_the_pods_informer_sync_again(void **state)
{
	struct harness *h = *state;
	static const char *const names[] = { "pod-a", "pod-b", "pod-c" };
	static const struct fake_fault gone = { "DELETE", "pods/", 1, 0, 404, "NotFound",
	    "pod not found", NULL };
	static const struct fake_fault lost = { "DELETE", "pods/", 1, 0, 0, NULL, NULL, NULL };
	struct informer_set *set = harness_with_synced_pods_informer(h);

	add_rs(h->f, &(struct rs){ .replicas = 2 });
	add_owned_pods(h, names, 3);
	fake_apiserver_set_faults(h->fake, &gone, 1);
	carry_out(h);
	assert_batches(h, "DELETE", "pods/", "1");
	assert_int_equal(informer_set_synced(set), 1);

	fake_apiserver_set_faults(h->fake, &lost, 1);
	carry_out(h);
	assert_batches(h, "DELETE", "pods/", "1,1");
	assert_outcome(h, 1, 0);
	assert_int_equal(informer_set_synced(set), 0);
	harness_drop_informers(h, set);
}

/* NotFound is a deletion done (no error, no event); another failure lowers that pod's
 * expectation, records FailedDelete and ends in a backoff. */
static void
deletion_not_found_is_success_and_a_failure_lowers_its_expectation(void **state)
{
	struct harness *h = *state;
	static const char *const names[] = { "pod-a", "pod-b", "pod-c" };
	static const struct fake_fault faults[] = {
		{ "DELETE", "pods/pod-b", 1, 0, 404, "NotFound", "pods \"pod-b\" not found",
		    NULL },
		{ "DELETE", "pods/pod-c", 1, 0, 500, "InternalError", "fake error", NULL },
	};

	add_rs(h->f, &(struct rs){ .replicas = 0 });
	add_owned_pods(h, names, 3);
	fake_apiserver_set_faults(h->fake, faults, 2);
	carry_out(h);

	assert_batches(h, "DELETE", "pods/", "3");
	assert_outcome(h, 1, 0);
	/* pod-b and pod-c will not be seen deleted for this request: only pod-a is
	 * waited for. */
	assert_expectations(h, 0, 1);
	assert_expected_deletions(h, "default/pod-a=1");
	assert_failure_condition(h, "FailedDelete: unable to delete pods: fake error");
	assert_events(h, "Normal SuccessfulDelete: Deleted pod: pod-a;"
	    "Warning FailedDelete: Error deleting: fake error");
}

/* A delete refused by the uid precondition (the pod was replaced under the same name):
 * a failure like any other here, where kube would have deleted the new pod. */
static void
deletion_refused_by_its_precondition_is_a_failure(void **state)
{
	struct harness *h = *state;
	static const char *const names[] = { "pod-a" };
	static const struct fake_fault conflict = { "DELETE", "pods/pod-a", 1, 0, 409,
	    "Conflict", "Precondition failed: UID in precondition: uid-pod-a, UID in object "
	    "meta: uid-other", NULL };

	add_rs(h->f, &(struct rs){ .replicas = 0 });
	add_owned_pods(h, names, 1);
	fake_apiserver_set_faults(h->fake, &conflict, 1);
	carry_out(h);

	assert_outcome(h, 1, 0);
	assert_expectations(h, 0, 0);
	assert_failure_condition(h, "FailedDelete: unable to delete pods: Precondition "
	    "failed: UID in precondition: uid-pod-a, UID in object meta: uid-other");
}

/* --- the status (TestControllerUpdateStatusWithFailure) ------------------------------------ */

/* A failed status PUT is followed by a GET of the ReplicaSet and one more PUT of the new
 * status over what the GET returned; if that fails too, the sync fails: 2 PUTs, 1 GET. */
static void
status_update_failing_twice_fails_after_one_reread(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault fail = { "PUT", "replicasets/foobar/status", 1, 0, 500,
	    "InternalError", "fake error", NULL };
	static const char *const names[] = { "pod-a" };
	const struct recorded_request *rq;

	add_rs(h->f, &(struct rs){ .replicas = 1, .status = "{\"replicas\":0}" });
	add_owned_pods(h, names, 1);
	h->fake->live_rs = rs_new(&(struct rs){ .replicas = 1, .rv = "19",
	    .status = "{\"replicas\":7}" });
	fake_apiserver_set_faults(h->fake, &fail, 1);
	carry_out(h);

	assert_requests(h, "PUT replicasets/foobar/status;GET replicasets/foobar;"
	    "PUT replicasets/foobar/status");
	/* The second PUT has the computed replicas over the GET's object. */
	rq = nth_request(h, "PUT", "replicasets/foobar/status", 1);
	assert_int_equal((int)json_path(rq->json, "status.replicas")->valuedouble, 1);
	assert_string_equal(cJSON_GetStringValue(json_path(rq->json,
	    "metadata.resourceVersion")), "19");
	assert_outcome(h, 1, 0);
	assert_writes(h, "");
}

/* A status PUT that fails once and then succeeds: the sync succeeds, and the second PUT's
 * resourceVersion is recorded. */
static void
status_update_failing_once_succeeds_on_the_second_put(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault conflict = { "PUT", "replicasets/foobar/status", 1, 1,
	    409, "Conflict", "the object has been modified", NULL };
	static const char *const names[] = { "pod-a" };

	add_rs(h->f, &(struct rs){ .replicas = 1, .status = "{\"replicas\":0}" });
	add_owned_pods(h, names, 1);
	fake_apiserver_set_faults(h->fake, &conflict, 1);
	carry_out(h);

	assert_requests(h, "PUT replicasets/foobar/status;GET replicasets/foobar;"
	    "PUT replicasets/foobar/status");
	assert_outcome(h, 0, 0);
	assert_writes(h, "replicasets=100");
}

/* The object read again after a failed status PUT is the one the status names, whatever
 * the key says (a controller's keys need not be namespace/name: the disruption
 * controller's pod keys). */
static void carry_out_result(struct harness *h, struct sync_result *r);

static void
status_update_rereads_the_object_it_names_whatever_the_key(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault conflict = { "PUT", "replicasets/foobar/status", 1, 1,
	    409, "Conflict", "the object has been modified", NULL };
	static const char *const names[] = { "pod-a" };
	const struct recorded_request *rq;
	struct sync_result r;

	add_rs(h->f, &(struct rs){ .replicas = 1, .status = "{\"replicas\":0}" });
	add_owned_pods(h, names, 1);
	fake_apiserver_set_faults(h->fake, &conflict, 1);
	sync_key(h->f, KEY, time_now(), &r);
	free(r.key);
	r.key = xstrdup("other:elsewhere/name");
	carry_out_result(h, &r);

	assert_requests(h, "PUT replicasets/foobar/status;GET replicasets/foobar;"
	    "PUT replicasets/foobar/status");
	rq = nth_request(h, "GET", "replicasets/foobar", 0);
	assert_non_null(strstr(rq->path, "/namespaces/default/replicasets/foobar"));
	assert_outcome(h, 0, 0);
}

/* A status update marked status_no_retry (the disruption controller's) is not sent again
 * over the owner read back after a conflict: the sync fails and runs again. */
static void
status_update_without_retry_fails_at_the_conflict(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault conflict = { "PUT", "replicasets/foobar/status", 1, 1,
	    409, "Conflict", "the object has been modified", NULL };
	static const char *const names[] = { "pod-a" };
	struct sync_result r;

	add_rs(h->f, &(struct rs){ .replicas = 1, .status = "{\"replicas\":0}" });
	add_owned_pods(h, names, 1);
	fake_apiserver_set_faults(h->fake, &conflict, 1);
	sync_key(h->f, KEY, time_now(), &r);
	assert_non_null(r.status);
	r.status->status_no_retry = 1;
	carry_out_result(h, &r);

	assert_requests(h, "PUT replicasets/foobar/status");
	assert_outcome(h, 1, 0);
}

/* A status PUT that finds the ReplicaSet gone is not read again (sqlkcm's choice: kube
 * reads it again, and fails on that GET's NotFound). */
static void
status_update_of_a_deleted_replicaset_is_not_retried(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault gone = { "PUT", "replicasets/foobar/status", 1, 0, 404,
	    "NotFound", "replicasets.apps \"foobar\" not found", NULL };
	static const char *const names[] = { "pod-a" };

	add_rs(h->f, &(struct rs){ .replicas = 1, .status = "{\"replicas\":0}" });
	add_owned_pods(h, names, 1);
	fake_apiserver_set_faults(h->fake, &gone, 1);
	carry_out(h);

	assert_requests(h, "PUT replicasets/foobar/status");
	assert_outcome(h, 1, 0);
}

/* --- claims (TestPatchPodFails, TestDoNotAdoptOrCreateIfBeingDeletedRace, ...) ------------ */

/* An adoption is preceded by a live GET of the owner; then the patches, then the
 * creations, then the status; the pods' and the status' resourceVersions are recorded. */
static void
adoption_rechecks_the_owner_live_first(void **state)
{
	struct harness *h = *state;
	const struct recorded_request *rq;

	add_rs(h->f, &(struct rs){ .replicas = 2 });
	add_pod(h->f, &(struct pod){ .name = "pod1", .phase = "Running" });
	carry_out(h);

	assert_requests(h, "GET replicasets/foobar;PATCH pods/pod1;POST pods;"
	    "PUT replicasets/foobar/status");
	rq = nth_request(h, "PATCH", "pods/pod1", 0);
	assert_string_equal(rq->content_type, "application/strategic-merge-patch+json");
	assert_outcome(h, 0, 0);
	assert_expectations(h, 1, 0);
	/* Adoption rv 100, creation 101, status 102: the newest per resource is kept. */
	assert_writes(h, "pods=101;replicasets=102");
}

/* The owner the live GET returns decides: being deleted, or another object under the same
 * name, and nothing is patched or created; the sync fails. */
static void
adoption_stops_when_the_live_owner_is_going_or_replaced(void **state)
{
	static const struct rs live[] = {
		{ .replicas = 2, .deleting = NOW },
		{ .replicas = 2, .uid = "uid-other" },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(live); i++) {
		struct harness *h = harness_new(fixture_new());

		add_rs(h->f, &(struct rs){ .replicas = 2 });
		add_pod(h->f, &(struct pod){ .name = "pod1", .phase = "Running" });
		h->fake->live_rs = rs_new(&live[i]);
		carry_out(h);

		assert_requests(h, "GET replicasets/foobar");
		assert_outcome(h, 1, 0);
		assert_expectations(h, -99, -99);
		assert_writes(h, "");
		harness_free(h);
	}
}

/* Both adoptions fail: no creations, no status, a backoff (TestPatchPodFails). */
static void
adoption_failures_stop_the_sync(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault fail = { "PATCH", "pods/", 1, 0, 500, "InternalError",
	    "fake Error", NULL };

	add_rs(h->f, &(struct rs){ .replicas = 2 });
	add_pod(h->f, &(struct pod){ .name = "pod1", .phase = "Running" });
	add_pod(h->f, &(struct pod){ .name = "pod2", .phase = "Running" });
	fake_apiserver_set_faults(h->fake, &fail, 1);
	carry_out(h);

	assert_requests(h, "GET replicasets/foobar;PATCH pods/pod1;PATCH pods/pod2");
	assert_batches(h, "PATCH", "pods/", "2");
	assert_outcome(h, 1, 0);
	assert_expectations(h, -99, -99);
}

/* An adoption that finds the pod gone means the sync counted a pod that is not there:
 * sync again at once, creating nothing on that count. (sqlkcm's choice: kube's
 * ClaimObject ignores the NotFound and goes on with the pods it did claim.) */
static void
adoption_of_a_vanished_pod_syncs_again_at_once(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault gone = { "PATCH", "pods/pod1", 1, 0, 404, "NotFound",
	    "pods \"pod1\" not found", NULL };

	add_rs(h->f, &(struct rs){ .replicas = 2 });
	add_pod(h->f, &(struct pod){ .name = "pod1", .phase = "Running" });
	fake_apiserver_set_faults(h->fake, &gone, 1);
	carry_out(h);

	assert_requests(h, "GET replicasets/foobar;PATCH pods/pod1");
	assert_outcome(h, 0, 1);
	assert_expectations(h, -99, -99);
}

/* A pod the selector no longer matches is released without a recheck (sqlkcm rechecks
 * only before adopting); the patch deletes the owner reference by uid. A release that
 * finds the pod gone is fine. */
static void
release_patches_without_a_recheck(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault gone = { "PATCH", "pods/pod2", 1, 0, 404, "NotFound",
	    "pods \"pod2\" not found", NULL };
	const struct recorded_request *rq;
	const cJSON *ref;

	add_rs(h->f, &(struct rs){ .replicas = 0, .status = "{\"replicas\":0,"
	    "\"fullyLabeledReplicas\":0,\"readyReplicas\":0,\"availableReplicas\":0,"
	    "\"terminatingReplicas\":0}" });
	add_pod(h->f, &(struct pod){ .name = "pod1", .owner = "foobar",
	    .labels = "{\"foo\":\"other\"}", .phase = "Running" });
	add_pod(h->f, &(struct pod){ .name = "pod2", .owner = "foobar",
	    .labels = "{\"foo\":\"other\"}", .phase = "Running" });
	fake_apiserver_set_faults(h->fake, &gone, 1);
	carry_out(h);

	assert_requests(h, "PATCH pods/pod1;PATCH pods/pod2");
	rq = nth_request(h, "PATCH", "pods/pod1", 0);
	ref = cJSON_GetArrayItem(json_path(rq->json, "metadata.ownerReferences"), 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ref, "$patch")), "delete");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ref, "uid")),
	    "uid-foobar");
	assert_outcome(h, 0, 0);
	/* A released pod is no longer the owner's: its resourceVersion is not waited for. */
	assert_writes(h, "");
}

/* --- expectations committed first -------------------------------------------------------- */

struct commit_check {
	sqlite3 *other;		/* a second connection to the same database */
	const char *method;	/* the request to check at: "POST" or "DELETE" */
	int checked;
	long long adds, deletes, pods_waited_for;
	int autocommit;
};

/* Returns the integer the query (one text parameter: KEY) gives, or -99. */
static long long
query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *stmt;
	long long v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
	sqlite3_bind_text(stmt, 1, KEY, -1, SQLITE_STATIC);
	v = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -99;
	sqlite3_finalize(stmt);
	return v;
}

/* At the first pod request of cc->method: what a second connection sees. */
static void
check_committed(struct fake_apiserver *fake, const struct recorded_request *rq, void *arg)
{
	struct commit_check *cc = arg;

	if (cc->checked || strcmp(rq->method, cc->method) != 0 ||
	    strncmp(rq->short_path, "pods", 4) != 0)
		return;
	cc->checked = 1;
	cc->autocommit = sqlite3_get_autocommit(store_db(fake->f->store));
	cc->adds = query_int(cc->other, "SELECT adds FROM expectations"
	    " WHERE controller = 'replicaset' AND key = ?1");
	cc->deletes = query_int(cc->other, "SELECT deletes FROM expectations"
	    " WHERE controller = 'replicaset' AND key = ?1");
	cc->pods_waited_for = query_int(cc->other, "SELECT count(*) FROM expected_deletions"
	    " WHERE controller = 'replicaset' AND key = ?1");
}

/* The expectations for the creations or deletions are committed before the first
 * request goes out: a second connection to the database sees them when the apiserver sees
 * the request, so a process killed then knows what it asked for. */
static void
expectations_are_committed_before_the_first_request(void **state)
{
	static const struct {
		const char *method;
		int replicas, pods;
		long long adds, deletes, pods_waited_for;
	} cases[] = {
		{ "POST", 3, 0, 3, 0, 0 },
		{ "DELETE", 0, 2, 0, 2, 2 },
	};
	static const char *const names[] = { "pod-a", "pod-b" };

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		char dir[] = "/tmp/test_executor.XXXXXX", *path;
		struct commit_check cc = { NULL, cases[i].method, 0, 0, 0, 0, 0 };
		struct harness *h;

		assert_non_null(mkdtemp(dir));
		path = xasprintf("%s/sqlkcm.db", dir);
		h = harness_new(fixture_open(path));
		assert_int_equal(sqlite3_open_v2(path, &cc.other, SQLITE_OPEN_READONLY, NULL),
		    SQLITE_OK);
		h->fake->on_request = check_committed;
		h->fake->on_request_arg = &cc;
		add_rs(h->f, &(struct rs){ .replicas = cases[i].replicas });
		add_owned_pods(h, names, cases[i].pods);
		carry_out(h);

		assert_int_equal(cc.checked, 1);
		assert_int_equal(cc.adds, cases[i].adds);
		assert_int_equal(cc.deletes, cases[i].deletes);
		assert_int_equal(cc.pods_waited_for, cases[i].pods_waited_for);
		assert_int_equal(cc.autocommit, 1);	/* no transaction open across it */
		sqlite3_close(cc.other);
		harness_free(h);
		unlink(path);
		for (const char *const *suffix =
		    (const char *const[]){ "-wal", "-shm", "-lock", NULL };
		    *suffix != NULL; suffix++) {
			char *p = xasprintf("%s%s", path, *suffix);
			unlink(p);
			free(p);
		}
		free(path);
		rmdir(dir);
	}
}

/* Makes every write of expectations fail as on a full disk (temporary triggers, gone with
 * the connection). */
static void
fail_expectation_writes(sqlite3 *db)
{
	static const char *const tables[] = { "expectations", "expected_deletions" };
	static const char *const ops[] = { "INSERT", "UPDATE" };

	for (size_t t = 0; t < NELEM(tables); t++) {
		for (size_t o = 0; o < NELEM(ops); o++) {
			char *sql = sqlite3_mprintf("CREATE TEMP TRIGGER full_%s_%s BEFORE %s ON "
			    "main.%s BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
			    tables[t], ops[o], ops[o], tables[t]);
			assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
			sqlite3_free(sql);
		}
	}
}

/* A full disk: expectations that cannot be committed mean no request goes out (a pod
 * created without them would be created again by the next sync, which cannot know of it),
 * and the sync fails, to be retried with backoff. */
static void
no_creation_or_deletion_without_committed_expectations(void **state)
{
	static const char *const names[] = { "pod-a", "pod-b" };
	static const struct {
		const char *method;
		int replicas, pods;
	} cases[] = {
		{ "POST", 3, 0 },
		{ "DELETE", 0, 2 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		struct harness *h = harness_new(fixture_new());

		add_rs(h->f, &(struct rs){ .replicas = cases[i].replicas });
		add_owned_pods(h, names, cases[i].pods);
		fail_expectation_writes(store_db(h->f->store));
		carry_out(h);
		assert_int_equal(fake_apiserver_count(h->fake, cases[i].method, "pods"), 0);
		assert_outcome(h, 1, 0);
		assert_int_equal(h->outcome.store_failed, 1);
		assert_true(store_writes_failing(h->f->store));
		assert_expectations(h, -99, -99);
		harness_free(h);
	}
}

/* A failure of the apiserver is no failure of the store: the key backs off as in kube. */
static void
apiserver_failure_is_not_a_store_failure(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault always = { "POST", "pods", 1, 100, 500, "InternalError",
	    "fake error", NULL };

	add_rs(h->f, &(struct rs){ .replicas = 1 });
	fake_apiserver_set_faults(h->fake, &always, 1);
	carry_out(h);
	assert_outcome(h, 1, 0);
	assert_int_equal(h->outcome.store_failed, 0);
	assert_false(store_writes_failing(h->f->store));
}

/* A write record lost on the store (the pod was created, its resourceVersion could not
 * be kept) holds the key for the store's recovery too, though nothing else failed. */
static void
lost_write_record_is_a_store_failure(void **state)
{
	struct harness *h = *state;

	add_rs(h->f, &(struct rs){ .replicas = 1 });
	assert_int_equal(sqlite3_exec(store_db(h->f->store), "CREATE TEMP TRIGGER full_writes "
	    "BEFORE INSERT ON main.controller_writes BEGIN SELECT RAISE(ABORT, "
	    "'database or disk is full'); END", NULL, NULL, NULL), SQLITE_OK);
	carry_out(h);
	assert_int_equal(fake_apiserver_count(h->fake, "POST", "pods"), 1);
	assert_outcome(h, 0, 0);
	assert_int_equal(h->outcome.store_failed, 1);
	assert_writes(h, "");
}

/* --- the writes recorded, and the next sync ------------------------------------------------ */

/* Sets the resourceVersion the informer of resource has applied. */
static void
informer_at(struct harness *h, const char *resource, const char *rv)
{
	char *error = NULL;

	if (store_set_resource_version(h->f->store, resource_find(resource), rv, &error) != 0)
		fail_msg("store_set_resource_version: %s", error);
}

/* The resourceVersions a sync's writes returned hold the next sync back until both
 * informers have reached them (KEP-5647's EnsureReady after WroteAt). */
static void
next_sync_waits_until_the_cache_shows_the_writes(void **state)
{
	struct harness *h = *state;

	informer_at(h, "pods", "50");
	informer_at(h, "replicasets", "50");
	add_rs(h->f, &(struct rs){ .replicas = 2 });
	carry_out(h);
	assert_writes(h, "pods=101;replicasets=102");
	assert_outcome(h, 0, 0);

	fake_apiserver_clear(h->fake);
	informer_at(h, "pods", "101");
	carry_out(h);		/* the replicasets informer is behind */
	assert_requests(h, "");
	assert_outcome(h, 1, 0);

	informer_at(h, "replicasets", "102");
	carry_out(h);		/* caught up; still waiting for the two pods to be seen */
	assert_outcome(h, 0, 0);
	/* The status again (the cache here never shows the first one), and nothing else.
	 * Records the cache has caught up with are kept, where kube clears them: they
	 * hold nothing back any more. */
	assert_requests(h, "PUT replicasets/foobar/status");
	assert_writes(h, "pods=101;replicasets=103");
}

/* A sync that succeeds passes on when to look again: a ready pod not yet available under
 * minReadySeconds (TestReplicaSetAvailabilityCheck). */
static void
success_passes_on_the_availability_requeue(void **state)
{
	struct harness *h = *state;
	double now = time_now();

	add_rs(h->f, &(struct rs){ .replicas = 1, .min_ready = 10 });
	add_pod(h->f, &(struct pod){ .name = "pod-a", .owner = "foobar", .phase = "Running",
	    .ready = "True", .ready_since = now - 3 });
	carry_out(h);

	assert_outcome(h, 0, 0);
	if (h->outcome.requeue_after < 6 || h->outcome.requeue_after > 7.5)
		fail_msg("requeue_after %g, want about 7", h->outcome.requeue_after);
}

/* A failed one does not: the backoff decides. */
static void
failure_drops_the_availability_requeue(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault fail = { "POST", "pods", 1, 0, 500, "InternalError",
	    "fake error", NULL };
	double now = time_now();

	add_rs(h->f, &(struct rs){ .replicas = 2, .min_ready = 10 });
	add_pod(h->f, &(struct pod){ .name = "pod-a", .owner = "foobar", .phase = "Running",
	    .ready = "True", .ready_since = now - 3 });
	fake_apiserver_set_faults(h->fake, &fail, 1);
	carry_out(h);

	assert_outcome(h, 1, 0);
	assert_true(h->outcome.requeue_after == 0);
}

/* --- writes to other objects (a Deployment's ReplicaSets) ---------------------------------- */

/* The Deployment foobar, the owner of the results these tests build by hand. */
static cJSON *
deployment_object(void)
{
	return fixture_parse("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	    "\"metadata\":{\"name\":\"foobar\",\"namespace\":\"default\",\"uid\":\"uid-foobar\","
	    "\"resourceVersion\":\"18\"},\"spec\":{\"replicas\":3}}");
}

/* Starts a result for the Deployment foobar (KEY): nothing to do yet. */
static void
deployment_result(struct sync_result *r)
{
	memset(r, 0, sizeof *r);
	r->controller = "deployment";
	r->key = xstrdup(KEY);
	r->owner_resource = resource_find("deployments");
	r->owner_uid = xstrdup("uid-foobar");
	r->owner = deployment_object();
}

/* Appends to actions an action of type on resource (default/name; name NULL for a create)
 * with body (taken; NULL for none). */
static struct action *
action_add(struct action **actions, int *n, enum action_type type, const char *verb,
    const char *resource, const char *name, const char *body)
{
	struct action *a = action_append(actions, n);

	a->type = type;
	a->verb = verb;
	a->resource = resource_find(resource);
	a->namespace = xstrdup("default");
	a->name = name != NULL ? xstrdup(name) : NULL;
	a->uid = name != NULL && type != ACTION_CREATE ? xasprintf("uid-%s", name) : NULL;
	a->body = body != NULL ? fixture_parse(body) : NULL;
	a->reason = xstrdup("a test's");
	return a;
}

/* Appends a write of a ReplicaSet: a create of name (with that name in its body), a scale
 * patch or a delete. */
static struct action *
rs_write(struct sync_result *r, enum action_type type, const char *name)
{
	char *body = NULL;
	struct action *a;

	if (type == ACTION_CREATE)
		body = xasprintf("{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
		    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
		    "\"spec\":{\"replicas\":3}}", name);
	else if (type == ACTION_PATCH)
		body = xstrdup("{\"spec\":{\"replicas\":2}}");
	a = action_add(&r->writes, &r->nwrites, type, type == ACTION_CREATE ? "create" :
	    type == ACTION_PATCH ? "scale" : "delete", "replicasets",
	    type == ACTION_CREATE ? NULL : name, body);
	if (type == ACTION_CREATE)
		a->name = xstrdup(name);	/* named in the body, as deployment.c does */
	free(body);
	return a;
}

/* The status to send when writes reporting their failure in the status failed: the
 * Deployment with the failures as status.failure, "first; second". */
static cJSON *
failure_status(const struct action *a, const char *const *messages, int n)
{
	cJSON *object = deployment_object();
	struct buf b;

	(void)a;
	buf_init(&b);
	for (int i = 0; i < n; i++)
		buf_printf(&b, "%s%s", i > 0 ? "; " : "", messages[i]);
	cJSON_AddItemToObject(cJSON_AddObjectToObject(object, "status"), "failure",
	    cJSON_CreateString(b.data));
	buf_free(&b);
	return object;
}

/* Gives r the status update of the Deployment ({"replicas": 3}), with failure_status as
 * its failure body. */
static struct action *
deployment_status(struct sync_result *r)
{
	struct action *a = xcalloc(1, sizeof *a);
	cJSON *body = deployment_object();

	a->type = ACTION_UPDATE_STATUS;
	a->verb = "update-status";
	a->resource = resource_find("deployments");
	a->namespace = xstrdup("default");
	a->name = xstrdup("foobar");
	a->uid = xstrdup("uid-foobar");
	cJSON_AddItemToObject(body, "status", fixture_parse("{\"replicas\":3}"));
	a->body = body;
	a->reason = xstrdup("the status changed");
	a->body_on_failure = failure_status;
	r->status = a;
	return a;
}

/* Carries r (a result built by hand) out and runs the loop until everything is sent. */
static void
carry_out_result(struct harness *h, struct sync_result *r)
{
	char *error = NULL;

	h->done = 0;
	memset(&h->outcome, 0, sizeof h->outcome);
	if (executor_run(h->e, h->f->c, r, on_done, h, &error) != 0)
		fail_msg("executor_run: %s", error);
	assert_int_equal(h->done, 0);
	fake_apiserver_run(h->fake);
	assert_int_equal(h->done, 1);
	assert_int_equal(executor_in_flight(h->e), 0);
	sync_result_clear(r);
}

/* The index in the requests seen of the n-th (from 0) of method on path; -1 if none. */
static int
request_index(const struct harness *h, const char *method, const char *path, int n)
{
	for (int i = 0; i < h->fake->nrequests; i++) {
		const struct recorded_request *rq = &h->fake->requests[i];
		if (strcmp(rq->method, method) == 0 &&
		    strncmp(rq->short_path, path, strlen(path)) == 0 && n-- == 0)
			return i;
	}
	return -1;
}

/* Writes go one at a time (each in a turn of its own, sent once the one before it is back),
 * in the sync's order, after the claims (which go together) and before the status; what
 * each returned is recorded. */
static void
writes_go_one_at_a_time_in_order_after_the_claims_and_before_the_status(void **state)
{
	struct harness *h = *state;
	struct sync_result r;
	int turns[6];

	deployment_result(&r);
	action_add(&r.claims, &r.nclaims, ACTION_PATCH, "adopt", "replicasets", "orphan-a",
	    "{\"metadata\":{}}");
	action_add(&r.claims, &r.nclaims, ACTION_PATCH, "adopt", "replicasets", "orphan-b",
	    "{\"metadata\":{}}");
	rs_write(&r, ACTION_PATCH, "rs-1");
	rs_write(&r, ACTION_PATCH, "rs-2");
	rs_write(&r, ACTION_PATCH, "rs-3");
	deployment_status(&r);
	r.requeue_after = 30;
	carry_out_result(h, &r);

	assert_requests(h, "PATCH replicasets/orphan-a;PATCH replicasets/orphan-b;"
	    "PATCH replicasets/rs-1;PATCH replicasets/rs-2;PATCH replicasets/rs-3;"
	    "PUT deployments/foobar/status");
	assert_batches(h, "PATCH", "replicasets/orphan-", "2");
	assert_batches(h, "PATCH", "replicasets/rs-", "1,1,1");
	turns[0] = nth_request(h, "PATCH", "replicasets/orphan-b", 0)->turn;
	turns[1] = nth_request(h, "PATCH", "replicasets/rs-1", 0)->turn;
	turns[2] = nth_request(h, "PATCH", "replicasets/rs-2", 0)->turn;
	turns[3] = nth_request(h, "PATCH", "replicasets/rs-3", 0)->turn;
	turns[4] = nth_request(h, "PUT", "deployments/foobar/status", 0)->turn;
	for (int i = 1; i < 5; i++)
		if (turns[i] <= turns[i - 1])
			fail_msg("request %d went out in turn %d, not after turn %d", i,
			    turns[i], turns[i - 1]);
	assert_outcome(h, 0, 0);
	assert_true(h->outcome.requeue_after == 30);
	/* Adoptions rv 100 and 101, writes 102 to 104, status 105. */
	assert_writes(h, "deployments=105;replicasets=104");
}

/* An owner the cache lacks is read live first: NotFound lets the writes go, with the
 * delete's preconditions and propagation policy. */
static void
confirmed_absence_lets_the_writes_go(void **state)
{
	struct harness *h = *state;
	struct sync_result r;
	const struct recorded_request *del;
	struct action *a;

	deployment_result(&r);
	action_add(&r.confirm_absent, &r.nconfirm_absent, ACTION_GET, "confirm-absent",
	    "replicasets", "gone", NULL);
	action_add(&r.confirm_absent, &r.nconfirm_absent, ACTION_GET, "confirm-absent",
	    "replicasets", "gone-too", NULL);
	a = rs_write(&r, ACTION_DELETE, "rs-1");
	a->precondition_rv = xstrdup("42");
	a->propagation = "Foreground";
	sync_result_add_event(&r, "Normal", "MissingJob", xstrdup("Active job went missing"));
	carry_out_result(h, &r);
	/* Confirmed: the sync's event goes, before the writes. */
	assert_events(h, "Normal MissingJob: Active job went missing");
	if (request_index(h, "POST", "events", 0) > request_index(h, "DELETE", "replicasets/", 0))
		fail_msg("the sync's event went out after the first write");

	assert_requests(h, "GET replicasets/gone;GET replicasets/gone-too;DELETE replicasets/rs-1");
	assert_batches(h, "GET", "replicasets/gone", "2");
	del = nth_request(h, "DELETE", "replicasets/rs-1", 0);
	assert_string_equal(json_string(del->json, "preconditions.uid"), "uid-rs-1");
	assert_string_equal(json_string(del->json, "preconditions.resourceVersion"), "42");
	assert_string_equal(json_string(del->json, "propagationPolicy"), "Foreground");
	assert_outcome(h, 0, 0);
}

/* An absence confirmed once holds for good (a uid is never reused): the next sync that
 * relies on it reads nothing, as kube's absentOwnerCache spares its GETs. */
static void
absence_confirmed_once_is_not_read_again(void **state)
{
	struct harness *h = *state;
	struct sync_result r;

	deployment_result(&r);
	action_add(&r.confirm_absent, &r.nconfirm_absent, ACTION_GET, "confirm-absent",
	    "replicasets", "gone", NULL);
	rs_write(&r, ACTION_DELETE, "rs-1");
	carry_out_result(h, &r);
	deployment_result(&r);
	action_add(&r.confirm_absent, &r.nconfirm_absent, ACTION_GET, "confirm-absent",
	    "replicasets", "gone", NULL);
	rs_write(&r, ACTION_DELETE, "rs-2");
	carry_out_result(h, &r);

	assert_requests(h, "GET replicasets/gone;DELETE replicasets/rs-1;DELETE replicasets/rs-2");
	assert_outcome(h, 0, 0);
}

/* The owner found live with the uid the reference names: nothing is written, and the key
 * comes back with backoff. */
static void
owner_found_live_stops_the_writes(void **state)
{
	struct harness *h = *state;
	struct sync_result r;

	deployment_result(&r);
	action_add(&r.confirm_absent, &r.nconfirm_absent, ACTION_GET, "confirm-absent",
	    "replicasets", "gone", NULL);
	rs_write(&r, ACTION_DELETE, "rs-1");
	/* The sync's event is about what the cache said: not sent when a read refutes it. */
	sync_result_add_event(&r, "Normal", "MissingJob", xstrdup("Active job went missing"));
	h->fake->live_rs = fixture_parse("{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
	    "\"metadata\":{\"name\":\"gone\",\"namespace\":\"default\",\"uid\":\"uid-gone\"}}");
	carry_out_result(h, &r);

	assert_requests(h, "GET replicasets/gone");
	assert_events(h, "");
	assert_outcome(h, 1, 0);
}

/* Another object under the owner's name (re-created, another uid) is no owner: the writes
 * go. A merge patch goes as one. */
static void
another_uid_under_the_owners_name_confirms_its_absence(void **state)
{
	struct harness *h = *state;
	struct sync_result r;
	struct action *a;

	deployment_result(&r);
	action_add(&r.confirm_absent, &r.nconfirm_absent, ACTION_GET, "confirm-absent",
	    "replicasets", "gone", NULL);
	a = rs_write(&r, ACTION_PATCH, "rs-1");
	a->merge_patch = 1;
	h->fake->live_rs = fixture_parse("{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
	    "\"metadata\":{\"name\":\"gone\",\"namespace\":\"default\",\"uid\":\"uid-new\"}}");
	carry_out_result(h, &r);

	assert_requests(h, "GET replicasets/gone;PATCH replicasets/rs-1");
	assert_string_equal(nth_request(h, "PATCH", "replicasets/rs-1", 0)->content_type,
	    "application/merge-patch+json");
	assert_outcome(h, 0, 0);
}

/* A read without a uid (the pod garbage collector's of a node the cache never had) is
 * answered by any object of that name: found, nothing is written and the key comes back
 * with backoff; NotFound lets the writes go. */
static void
confirmation_without_a_uid_finds_any_object_of_the_name(void **state)
{
	(void)state;
	for (int live = 0; live <= 1; live++) {
		struct harness *h = harness_new(fixture_new());
		struct sync_result r;

		deployment_result(&r);
		free(action_add(&r.confirm_absent, &r.nconfirm_absent, ACTION_GET,
		    "confirm-absent", "replicasets", "gone", NULL)->uid);
		r.confirm_absent[0].uid = NULL;
		rs_write(&r, ACTION_DELETE, "rs-1");
		if (live)
			h->fake->live_rs = fixture_parse("{\"apiVersion\":\"apps/v1\","
			    "\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"gone\","
			    "\"namespace\":\"default\",\"uid\":\"uid-anyone\"}}");
		carry_out_result(h, &r);

		assert_requests(h, live ? "GET replicasets/gone" :
		    "GET replicasets/gone;DELETE replicasets/rs-1");
		assert_outcome(h, live, 0);
		harness_free(h);
	}
}

/* A claim that fails stops the sync before any write. */
static void
failed_claim_sends_no_write(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault fail = { "PATCH", "replicasets/orphan-a", 1, 0, 500,
	    "InternalError", "fake error", NULL };
	struct sync_result r;

	deployment_result(&r);
	action_add(&r.claims, &r.nclaims, ACTION_PATCH, "adopt", "replicasets", "orphan-a",
	    "{\"metadata\":{}}");
	rs_write(&r, ACTION_PATCH, "rs-1");
	deployment_status(&r);
	fake_apiserver_set_faults(h->fake, &fail, 1);
	carry_out_result(h, &r);

	assert_requests(h, "PATCH replicasets/orphan-a");
	assert_outcome(h, 1, 0);
}

/* The first write that fails (a refusal, or no answer at all) stops the rest and the status
 * (even one with a failure body: this write does not report its failure there), and the
 * sync fails: a requeue with backoff, not after requeue_after. */
static void
first_failing_write_stops_the_rest_and_the_status(void **state)
{
	static const struct fake_fault faults[] = {
		{ "PATCH", "replicasets/rs-2", 1, 0, 500, "InternalError", "fake error", NULL },
		{ "PATCH", "replicasets/rs-2", 1, 0, 0, NULL, NULL, NULL },
		{ "PATCH", "replicasets/rs-2", 1, 0, 409, "Conflict",
		    "the object has been modified", NULL },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(faults); i++) {
		struct harness *h = harness_new(fixture_new());
		struct sync_result r;

		print_message("# answered %d\n", faults[i].code);
		deployment_result(&r);
		rs_write(&r, ACTION_PATCH, "rs-1");
		rs_write(&r, ACTION_PATCH, "rs-2");
		rs_write(&r, ACTION_PATCH, "rs-3");
		deployment_status(&r);
		r.requeue_after = 30;
		fake_apiserver_set_faults(h->fake, &faults[i], 1);
		carry_out_result(h, &r);

		assert_requests(h, "PATCH replicasets/rs-1;PATCH replicasets/rs-2");
		assert_int_equal(fake_apiserver_count(h->fake, "PATCH", "replicasets/rs-3"), 0);
		assert_int_equal(fake_apiserver_count(h->fake, "PUT", "deployments/"), 0);
		assert_outcome(h, 1, 0);
		assert_true(h->outcome.requeue_after == 0);
		/* What was written before the failure is still recorded. */
		assert_writes(h, "replicasets=100");
		harness_free(h);
	}
}

/* A failing write with an error_prefix reports its failure in the status: the status's
 * failure body goes out, carrying error_prefix then the error, instead of the sync's
 * status; the writes after it do not go out, and the sync fails. */
static void
failing_write_with_an_error_prefix_sends_the_failure_status(void **state)
{
	static const struct fake_fault fail = { "POST", "replicasets", 1, 0, 500,
	    "InternalError", "fake error", NULL };
	static const struct {
		const char *prefix;
		const char *failure;
	} cases[] = {
		{ "", "fake error" },
		{ "creating: ", "creating: fake error" },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		struct harness *h = harness_new(fixture_new());
		const struct recorded_request *rq;
		struct sync_result r;

		print_message("# error_prefix \"%s\"\n", cases[i].prefix);
		deployment_result(&r);
		rs_write(&r, ACTION_CREATE, "foobar-new")->error_prefix = cases[i].prefix;
		rs_write(&r, ACTION_PATCH, "foobar-old");
		deployment_status(&r);
		fake_apiserver_set_faults(h->fake, &fail, 1);
		carry_out_result(h, &r);

		assert_requests(h, "POST replicasets;PUT deployments/foobar/status");
		rq = nth_request(h, "PUT", "deployments/foobar/status", 0);
		assert_string_equal(cJSON_GetStringValue(json_path(rq->json, "status.failure")),
		    cases[i].failure);
		assert_null(json_path(rq->json, "status.replicas"));
		assert_outcome(h, 1, 0);
		/* The status was written, and is waited for. */
		assert_writes(h, "deployments=100");
		harness_free(h);
	}
}

/*
 * Writes marked failure_goes_on (the namespace's deletions): a failure skips the writes
 * of its resource next in line, the other resources' still go, a write without the mark
 * (the finalize) never follows a failure, and the status's failure body gets every
 * failure in order.
 */
static void
failing_write_that_goes_on_skips_only_its_resource(void **state)
{
	static const struct fake_fault faults[] = {
		{ "DELETE", "configmaps", 1, 0, 500, "InternalError", "configmaps on fire", NULL },
		{ "DELETE", "serviceaccounts", 1, 0, 500, "InternalError", "accounts on fire",
		    NULL },
	};
	static const char *const resources[] = { "configmaps", "configmaps", "serviceaccounts",
	    "pods" };
	struct harness *h = *state;
	const struct recorded_request *rq;
	struct sync_result r;

	deployment_result(&r);
	for (size_t i = 0; i < NELEM(resources); i++) {
		struct action *a = action_add(&r.writes, &r.nwrites, i == 1 ? ACTION_DELETE :
		    ACTION_DELETE_COLLECTION, "delete", resources[i], i == 1 ? "cm-1" : NULL,
		    NULL);
		a->error_prefix = "";
		a->failure_goes_on = 1;
	}
	rs_write(&r, ACTION_PATCH, "rs-1");
	deployment_status(&r);
	fake_apiserver_set_faults(h->fake, faults, NELEM(faults));
	carry_out_result(h, &r);

	assert_requests(h, "DELETE configmaps;DELETE serviceaccounts;DELETE pods;"
	    "PUT deployments/foobar/status");
	rq = nth_request(h, "PUT", "deployments/foobar/status", 0);
	assert_string_equal(cJSON_GetStringValue(json_path(rq->json, "status.failure")),
	    "configmaps on fire; accounts on fire");
	assert_outcome(h, 1, 0);
}

/* A sync that reports an error of its own (kube's sync returning one, as a namespace's
 * discovery failure) is carried out whole, its writes and status, then backs off: the
 * outcome fails and its requeue_after is not used. */
static void
sync_that_failed_is_carried_out_then_backs_off(void **state)
{
	struct harness *h = *state;
	struct sync_result r;

	deployment_result(&r);
	rs_write(&r, ACTION_PATCH, "rs-1");
	deployment_status(&r);
	r.failed = 1;
	r.waiting = xstrdup("discovery failed");
	r.requeue_after = 5;
	carry_out_result(h, &r);

	assert_requests(h, "PATCH replicasets/rs-1;PUT deployments/foobar/status");
	assert_outcome(h, 1, 0);
	assert_true(h->outcome.requeue_after == 0);
}

/* A creation that finds its object already there (AlreadyExists, or a Conflict) is no
 * failure to report in the status, even with an error_prefix (kube's getNewReplicaSet
 * sets ReplicaSetCreateError for other errors only): no status, the sync fails. */
static void
failing_create_that_exists_already_sends_no_failure_status(void **state)
{
	static const struct fake_fault faults[] = {
		{ "POST", "replicasets", 1, 0, 409, "AlreadyExists",
		    "replicasets.apps \"foobar-new\" already exists", NULL },
		{ "POST", "replicasets", 1, 0, 409, "Conflict", "conflict", NULL },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(faults); i++) {
		struct harness *h = harness_new(fixture_new());
		struct sync_result r;

		print_message("# %s\n", faults[i].reason);
		deployment_result(&r);
		rs_write(&r, ACTION_CREATE, "foobar-new")->error_prefix = "";
		rs_write(&r, ACTION_PATCH, "foobar-old");
		deployment_status(&r);
		fake_apiserver_set_faults(h->fake, &faults[i], 1);
		carry_out_result(h, &r);

		assert_requests(h, "POST replicasets");
		assert_outcome(h, 1, 0);
		harness_free(h);
	}
}

/* A review (a create whose answer's status.allowed decides) gates the write after it:
 * allowed, that write goes and is the last; not allowed, it is skipped and the next review
 * goes; every review saying no fails the sync (kube's CSR approver errs then); a review
 * that fails is a failed write. */
static void
review_decides_the_write_after_it(void **state)
{
	static const char allowed[] = "{\"status\":{\"allowed\":true}}";
	static const char denied[] = "{\"status\":{\"allowed\":false,\"reason\":\"no\"}}";
	static const struct {
		const char *name;
		const char *first, *second;	/* the reviews' answers; NULL: not asked */
		int first_code;
		const char *requests;
		int failed;
	} cases[] = {
		{ "the first allows", allowed, NULL, 200,
		    "POST replicasets;PATCH replicasets/rs-1", 0 },
		{ "the second allows", denied, allowed, 200,
		    "POST replicasets;POST replicasets;PATCH replicasets/rs-2", 0 },
		{ "none allows", denied, denied, 200, "POST replicasets;POST replicasets", 1 },
		{ "an answer without status.allowed is no", "{}", denied, 200,
		    "POST replicasets;POST replicasets", 1 },
		{ "the first review fails", NULL, NULL, 403, "POST replicasets", 1 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		struct harness *h = harness_new(fixture_new());
		struct fake_fault faults[2] = {
			{ "POST", "replicasets", 1, 1, cases[i].first_code,
			    cases[i].first_code == 200 ? "" : "Forbidden",
			    cases[i].first != NULL ? cases[i].first : "forbidden", NULL },
			/* The next POST (fault counters count what reaches them). */
			{ "POST", "replicasets", 1, 1, 200, "",
			    cases[i].second != NULL ? cases[i].second : denied, NULL },
		};
		struct sync_result r;

		print_message("# %s\n", cases[i].name);
		deployment_result(&r);
		rs_write(&r, ACTION_CREATE, "review-1")->review = 1;
		rs_write(&r, ACTION_PATCH, "rs-1");
		rs_write(&r, ACTION_CREATE, "review-2")->review = 1;
		rs_write(&r, ACTION_PATCH, "rs-2");
		fake_apiserver_set_faults(h->fake, faults, 2);
		carry_out_result(h, &r);
		assert_requests(h, cases[i].requests);
		assert_outcome(h, cases[i].failed, 0);
		harness_free(h);
	}
}

/* A creation marked exists_ok that finds its object there is done, as kube's
 * serviceaccount controller takes AlreadyExists: the next write goes out, then the status,
 * and the sync succeeds. */
static void
create_write_that_may_exist_already_is_done(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault exists = { "POST", "replicasets", 1, 0, 409,
	    "AlreadyExists", "replicasets.apps \"foobar-new\" already exists", NULL };
	struct sync_result r;

	deployment_result(&r);
	rs_write(&r, ACTION_CREATE, "foobar-new")->exists_ok = 1;
	rs_write(&r, ACTION_PATCH, "rs-1");
	deployment_status(&r);
	fake_apiserver_set_faults(h->fake, &exists, 1);
	carry_out_result(h, &r);

	assert_requests(h, "POST replicasets;PATCH replicasets/rs-1;"
	    "PUT deployments/foobar/status");
	assert_int_equal(nth_request(h, "POST", "replicasets", 0)->code, 409);
	assert_outcome(h, 0, 0);
}

/* A write's counters: count_done when it succeeds, both count_failed when it fails. */
static void
write_counters_count_success_and_failure(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault refused = { "PATCH", "replicasets/rs-2", 1, 0, 500,
	    "InternalError", "fake error", NULL };
	static const char *const labels[] = { "outcome", NULL };
	static const struct metrics_spec spec = { METRICS_COUNTER, "test_writes_total",
	    "Writes.", labels, NULL, 0 };
	struct metrics_registry *registry = metrics_registry_new();
	struct metrics_family *family = metrics_family_register(registry, &spec, NULL);
	struct metrics_series *ok = metrics_series_get(family,
	    (const char *const[]){ "ok", NULL });
	struct metrics_series *tried = metrics_series_get(family,
	    (const char *const[]){ "tried", NULL });
	struct metrics_series *failed = metrics_series_get(family,
	    (const char *const[]){ "failed", NULL });
	struct sync_result r;
	struct action *a;
	struct buf text;

	deployment_result(&r);
	a = rs_write(&r, ACTION_PATCH, "rs-1");
	a->count_done = ok;
	a->count_failed[0] = tried;
	a->count_failed[1] = failed;
	a = rs_write(&r, ACTION_PATCH, "rs-2");
	a->count_done = ok;
	a->count_failed[0] = tried;
	a->count_failed[1] = failed;
	fake_apiserver_set_faults(h->fake, &refused, 1);
	carry_out_result(h, &r);

	buf_init(&text);
	metrics_render(registry, &text);
	assert_non_null(strstr(text.data, "test_writes_total{outcome=\"ok\"} 1\n"));
	assert_non_null(strstr(text.data, "test_writes_total{outcome=\"tried\"} 1\n"));
	assert_non_null(strstr(text.data, "test_writes_total{outcome=\"failed\"} 1\n"));
	buf_free(&text);
	metrics_registry_free(registry);
}

/* A creation refused because the namespace is being deleted stops the writes without a
 * failure (kube's handleErr forgets a NamespaceTerminating error): no further write, no
 * status, no event, no backoff. */
#define TERMINATING \
	"unable to create new content in namespace default because it is being terminated"
static void
create_write_refused_by_a_terminating_namespace_stops_without_failure(void **state)
{
	static const struct fake_fault faults[] = {
		{ "POST", "replicasets", 1, 0, 403, "Forbidden", TERMINATING,
		    "NamespaceTerminating" },
		{ "POST", "replicasets", 1, 0, 409, "Conflict", TERMINATING,
		    "NamespaceTerminating" },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(faults); i++) {
		struct harness *h = harness_new(fixture_new());
		struct action *a;
		struct sync_result r;

		print_message("# %d %s\n", faults[i].code, faults[i].reason);
		deployment_result(&r);
		a = rs_write(&r, ACTION_CREATE, "foobar-new");
		a->error_prefix = "";
		a->failed_reason = "ReplicaSetCreateError";
		a->failed_message = xstrdup("Failed to create new replica set \"foobar-new\": ");
		rs_write(&r, ACTION_PATCH, "foobar-old");
		deployment_status(&r);
		fake_apiserver_set_faults(h->fake, &faults[i], 1);
		carry_out_result(h, &r);

		assert_requests(h, "POST replicasets");
		assert_outcome(h, 0, 0);
		assert_events(h, "");
		harness_free(h);
	}
}
#undef TERMINATING

/* A delete answered NotFound is done (the object is gone, as wanted): the next write goes
 * out, then the status, and the sync succeeds. Any other write answered NotFound fails. */
static void
delete_write_not_found_is_done_and_the_next_write_goes_out(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault gone = { "DELETE", "replicasets/rs-old", 1, 0, 404,
	    "NotFound", "replicasets.apps \"rs-old\" not found", NULL };
	struct sync_result r;

	deployment_result(&r);
	rs_write(&r, ACTION_DELETE, "rs-old");
	rs_write(&r, ACTION_PATCH, "rs-1");
	deployment_status(&r);
	fake_apiserver_set_faults(h->fake, &gone, 1);
	carry_out_result(h, &r);

	assert_requests(h, "DELETE replicasets/rs-old;PATCH replicasets/rs-1;"
	    "PUT deployments/foobar/status");
	assert_int_equal(nth_request(h, "DELETE", "replicasets/rs-old", 0)->code, 404);
	assert_outcome(h, 0, 0);
}

/* A patch answered NotFound is a failure like any other: it stops the rest. */
static void
patch_write_not_found_is_a_failure(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault gone = { "PATCH", "replicasets/rs-1", 1, 0, 404,
	    "NotFound", "replicasets.apps \"rs-1\" not found", NULL };
	struct sync_result r;

	deployment_result(&r);
	rs_write(&r, ACTION_PATCH, "rs-1");
	rs_write(&r, ACTION_DELETE, "rs-old");
	deployment_status(&r);
	fake_apiserver_set_faults(h->fake, &gone, 1);
	carry_out_result(h, &r);

	assert_requests(h, "PATCH replicasets/rs-1");
	assert_outcome(h, 1, 0);
}

/* The sync's own events are recorded as the execution starts: POSTed before any write
 * (or claim) goes out, in the sync's order. */
static void
sync_events_are_recorded_before_any_write(void **state)
{
	struct harness *h = *state;
	struct sync_result r;

	deployment_result(&r);
	sync_result_add_event(&r, "Warning", "SelectingAll",
	    xstrdup("This deployment is selecting all pods. A non-empty selector is required."));
	sync_result_add_event(&r, "Normal", "DeploymentRollback",
	    xstrdup("Rolled back deployment \"foobar\" to revision 2"));
	rs_write(&r, ACTION_PATCH, "rs-1");
	deployment_status(&r);
	carry_out_result(h, &r);

	assert_events(h, "Warning SelectingAll: This deployment is selecting all pods. A "
	    "non-empty selector is required.;"
	    "Normal DeploymentRollback: Rolled back deployment \"foobar\" to revision 2");
	assert_true(request_index(h, "POST", "events", 1) >= 0);
	if (request_index(h, "POST", "events", 1) > request_index(h, "PATCH", "replicasets/", 0))
		fail_msg("the sync's events went out after the first write");
	/* About the Deployment. */
	assert_string_equal(cJSON_GetStringValue(json_path(nth_request(h, "POST", "events",
	    0)->json, "involvedObject.kind")), "Deployment");
	assert_outcome(h, 0, 0);
}

/* A write's events: on success one of done_reason whose message is done_message (Normal),
 * or done_prefix then the object's name when it has none; on failure one of failed_reason
 * whose message is failed_message then the error (Warning); no reason, no event. */
static void
write_events_carry_done_message_or_failed_message_and_the_error(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault fail = { "PATCH", "replicasets/rs-old", 1, 0, 500,
	    "InternalError", "fake error", NULL };
	struct sync_result r;
	struct action *a;

	deployment_result(&r);
	a = rs_write(&r, ACTION_CREATE, "foobar-new");
	a->done_reason = "ScalingReplicaSet";
	a->done_message = xstrdup("Scaled up replica set foobar-new from 0 to 3");
	a->failed_reason = "ReplicaSetCreateError";
	a->failed_message = xstrdup("Failed to create new replica set \"foobar-new\": ");
	a = rs_write(&r, ACTION_DELETE, "rs-older");
	a->done_reason = "SuccessfulDelete";
	a->done_prefix = "Deleted replica set: ";
	rs_write(&r, ACTION_PATCH, "rs-quiet");		/* no reasons: no event */
	a = rs_write(&r, ACTION_PATCH, "rs-old");
	a->done_reason = "ScalingReplicaSet";
	a->done_message = xstrdup("Scaled down replica set rs-old from 3 to 2");
	a->failed_reason = "FailedScale";
	a->failed_message = xstrdup("Failed to scale replica set rs-old: ");
	deployment_status(&r);
	fake_apiserver_set_faults(h->fake, &fail, 1);
	carry_out_result(h, &r);

	assert_requests(h, "POST replicasets;DELETE replicasets/rs-older;"
	    "PATCH replicasets/rs-quiet;PATCH replicasets/rs-old");
	assert_events(h,
	    "Normal ScalingReplicaSet: Scaled up replica set foobar-new from 0 to 3;"
	    "Normal SuccessfulDelete: Deleted replica set: rs-older;"
	    "Warning FailedScale: Failed to scale replica set rs-old: fake error");
	assert_outcome(h, 1, 0);
}

/* An event the sync records about another object than its owner (a pod of a node's
 * sync) is sent about that object; the others about the owner. */
static void
events_about_other_objects_name_them(void **state)
{
	struct harness *h = *state;
	struct sync_result r;
	int n = 0;

	deployment_result(&r);
	sync_result_add_event(&r, "Normal", "Owned", xstrdup("about the owner"));
	sync_result_add_object_event(&r, resource_find("pods"), fixture_parse(
	    "{\"metadata\":{\"name\":\"p1\",\"namespace\":\"other\",\"uid\":\"uid-p1\"}}"),
	    "Normal", "SuccessfulAttachVolume", xstrdup("about a pod"));
	carry_out_result(h, &r);

	assert_events(h, "Normal Owned: about the owner;"
	    "Normal SuccessfulAttachVolume: about a pod");
	for (int i = 0; i < h->fake->nrequests; i++) {
		const struct recorded_request *rq = &h->fake->requests[i];
		const cJSON *o = json_path(rq->json, "involvedObject");

		if (strcmp(rq->method, "POST") != 0 || strcmp(rq->short_path, "events") != 0)
			continue;
		if (n++ == 0) {
			assert_string_equal(json_string(o, "kind"), "Deployment");
			assert_string_equal(json_string(o, "name"), "foobar");
			continue;
		}
		assert_string_equal(json_string(o, "kind"), "Pod");
		assert_string_equal(json_string(o, "apiVersion"), "v1");
		assert_string_equal(json_string(o, "namespace"), "other");
		assert_string_equal(json_string(o, "name"), "p1");
		assert_string_equal(json_string(o, "uid"), "uid-p1");
		assert_string_equal(json_string(rq->json, "metadata.namespace"), "other");
	}
	assert_int_equal(n, 2);
}

/* ACTION_UPDATE PUTs the whole object (not its status) to its path, ACTION_PATCH sends a
 * strategic merge patch to the object's path, ACTION_CREATE POSTs to the collection,
 * ACTION_DELETE deletes with the uid as a precondition: each with the action's body. */
static void
update_write_puts_the_whole_object_and_patch_write_patches(void **state)
{
	struct harness *h = *state;
	const struct recorded_request *rq;
	struct sync_result r;
	struct action *update;
	cJSON *update_body, *patch_body, *create_body;

	deployment_result(&r);
	update = action_add(&r.writes, &r.nwrites, ACTION_UPDATE, "rollback", "deployments",
	    "foobar", NULL);
	update->body = deployment_object();
	cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(update->body, "spec"),
	    "template", fixture_parse("{\"metadata\":{\"labels\":{\"app\":\"v1\"}}}"));
	/* (Copies at once: each append may move the actions before it.) */
	update_body = cJSON_Duplicate(update->body, 1);
	patch_body = cJSON_Duplicate(rs_write(&r, ACTION_PATCH, "rs-1")->body, 1);
	create_body = cJSON_Duplicate(rs_write(&r, ACTION_CREATE, "foobar-new")->body, 1);
	rs_write(&r, ACTION_DELETE, "rs-old");
	carry_out_result(h, &r);

	assert_requests(h, "PUT deployments/foobar;PATCH replicasets/rs-1;POST replicasets;"
	    "DELETE replicasets/rs-old");
	rq = nth_request(h, "PUT", "deployments/foobar", 0);
	assert_string_equal(rq->path, "/apis/apps/v1/namespaces/default/deployments/foobar");
	assert_string_equal(rq->content_type, "application/json");
	assert_true(cJSON_Compare(rq->json, update_body, 1));
	rq = nth_request(h, "PATCH", "replicasets/rs-1", 0);
	assert_string_equal(rq->path, "/apis/apps/v1/namespaces/default/replicasets/rs-1");
	assert_string_equal(rq->content_type, "application/strategic-merge-patch+json");
	assert_true(cJSON_Compare(rq->json, patch_body, 1));
	rq = nth_request(h, "POST", "replicasets", 0);
	assert_string_equal(rq->path, "/apis/apps/v1/namespaces/default/replicasets");
	assert_true(cJSON_Compare(rq->json, create_body, 1));
	rq = nth_request(h, "DELETE", "replicasets/rs-old", 0);
	assert_string_equal(rq->path, "/apis/apps/v1/namespaces/default/replicasets/rs-old");
	assert_string_equal(cJSON_GetStringValue(json_path(rq->json, "preconditions.uid")),
	    "uid-rs-old");
	assert_outcome(h, 0, 0);
	/* The update (rv 100) and the patch and creation (101, 102) are waited for. */
	assert_writes(h, "deployments=100;replicasets=102");
	cJSON_Delete(update_body);
	cJSON_Delete(patch_body);
	cJSON_Delete(create_body);
}

/* A read_modify_write update reads the object live, applies its body as a merge patch
 * (null removes a member) and PUTs the result; a failed read fails the write and stops
 * the rest. */
static void
read_modify_write_update_puts_the_live_object_changed(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault live = { "GET", "secrets/tok", 1, 1, 200, NULL,
	    "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"tok\","
	    "\"namespace\":\"default\",\"resourceVersion\":\"7\",\"labels\":{\"a\":\"1\","
	    "\"b\":\"2\"}},\"type\":\"kubernetes.io/service-account-token\","
	    "\"data\":{\"ca.crt\":\"Q0E=\",\"secret\":\"c2VjcmV0\"}}", NULL };
	const struct recorded_request *rq;
	struct sync_result r;
	struct action *a;
	cJSON *want = fixture_parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
	    "\"metadata\":{\"name\":\"tok\",\"namespace\":\"default\",\"resourceVersion\":"
	    "\"7\",\"labels\":{\"a\":\"1\",\"c\":\"3\"}},\"type\":"
	    "\"kubernetes.io/service-account-token\",\"data\":{\"ca.crt\":\"Q0E=\","
	    "\"secret\":\"c2VjcmV0\",\"token\":\"dG9r\"}}");

	deployment_result(&r);
	a = action_add(&r.writes, &r.nwrites, ACTION_UPDATE, "populate", "secrets", "tok",
	    "{\"metadata\":{\"resourceVersion\":\"7\",\"labels\":{\"b\":null,\"c\":\"3\"}},"
	    "\"data\":{\"token\":\"dG9r\"}}");
	a->read_modify_write = 1;
	fake_apiserver_set_faults(h->fake, &live, 1);
	carry_out_result(h, &r);

	assert_requests(h, "GET secrets/tok;PUT secrets/tok");
	rq = nth_request(h, "PUT", "secrets/tok", 0);
	assert_string_equal(rq->path, "/api/v1/namespaces/default/secrets/tok");
	assert_true(cJSON_Compare(rq->json, want, 0));
	assert_outcome(h, 0, 0);
	cJSON_Delete(want);
}

static void
read_modify_write_update_of_a_missing_object_fails(void **state)
{
	struct harness *h = *state;
	struct sync_result r;
	struct action *a;

	deployment_result(&r);
	a = action_add(&r.writes, &r.nwrites, ACTION_UPDATE, "populate", "secrets", "gone",
	    "{\"data\":{\"token\":\"dG9r\"}}");
	a->read_modify_write = 1;
	rs_write(&r, ACTION_DELETE, "rs-1");
	carry_out_result(h, &r);

	/* The fake has no Secret: NotFound. */
	assert_requests(h, "GET secrets/gone");
	assert_outcome(h, 1, 0);
}

/* A confirm_absent list with confirm_counts reads the whole namespace (no limit) and
 * stops the writes only when an item it counts is there. */
static int
counts_pod_b(const cJSON *item, const cJSON *context)
{
	return strcmp(json_string(item, "metadata.name"), json_string(context, "name")) == 0;
}

static void
filtered_confirmation_lists_everything_and_counts_only_its_items(void **state)
{
	struct harness *h = *state;
	static const char *const names[] = { "pod-a", "pod-b" };
	const struct recorded_request *rq;
	struct sync_result r;
	struct action *a;

	add_owned_pods(h, names, 2);
	for (int i = 0; i < 2; i++) {
		deployment_result(&r);
		a = action_add(&r.confirm_absent, &r.nconfirm_absent, ACTION_GET, "confirm",
		    "pods", NULL, i == 0 ? "{\"name\":\"pod-c\"}" : "{\"name\":\"pod-b\"}");
		a->confirm_counts = counts_pod_b;
		rs_write(&r, ACTION_DELETE, "rs-1");
		fake_apiserver_clear(h->fake);
		carry_out_result(h, &r);
		if (i == 0) {
			assert_requests(h, "GET pods;DELETE replicasets/rs-1");
			rq = nth_request(h, "GET", "pods", 0);
			assert_null(strstr(rq->path, "limit="));
			assert_outcome(h, 0, 0);
		} else {
			assert_requests(h, "GET pods");
			assert_outcome(h, 1, 0);
		}
	}
}

/* --- results that send nothing ------------------------------------------------------------ */

/* A sync held back by a cache that lags the controller's own writes sends nothing and
 * ends in a backoff (kube's ConsistencyError: rate-limited requeue). */
static void
stale_sync_sends_nothing_and_backs_off(void **state)
{
	struct harness *h = *state;
	char *error = NULL;

	add_rs(h->f, &(struct rs){ .replicas = 3 });
	assert_int_equal(consistency_wrote_at(h->f->c->writes, KEY, "uid-foobar", "pods",
	    "500", &error), 0);
	assert_int_equal(store_set_resource_version(h->f->store, h->f->pods, "400", &error),
	    0);
	carry_out(h);

	assert_requests(h, "");
	assert_outcome(h, 1, 0);
}

/* The sync of a ReplicaSet gone from the cache drops its expectations and write records
 * and sends nothing. */
static void
sync_of_a_deleted_replicaset_forgets_its_bookkeeping(void **state)
{
	struct harness *h = *state;
	char *error = NULL;

	assert_int_equal(expectations_expect(h->f->c->expectations, KEY, 2, NULL, 0, NOW,
	    &error), 0);
	assert_int_equal(consistency_wrote_at(h->f->c->writes, KEY, "uid-foobar", "pods",
	    "500", &error), 0);
	carry_out(h);

	assert_requests(h, "");
	assert_outcome(h, 0, 0);
	assert_expectations(h, -99, -99);
	assert_writes(h, "");
}

/* A sync with nothing to do sends nothing (TestSyncReplicaSetDoesNothing). */
static void
sync_with_nothing_to_do_sends_nothing(void **state)
{
	struct harness *h = *state;
	static const char *const names[] = { "pod-a", "pod-b" };

	add_rs(h->f, &(struct rs){ .replicas = 2, .status = "{\"replicas\":2,"
	    "\"fullyLabeledReplicas\":0,\"readyReplicas\":0,\"availableReplicas\":0,"
	    "\"terminatingReplicas\":0}" });
	add_owned_pods(h, names, 2);
	carry_out(h);

	assert_requests(h, "");
	assert_outcome(h, 0, 0);
	assert_expectations(h, -99, -99);
}

/* An executor freed with requests out (the drain at shutdown timed out) abandons them:
 * they are cancelled, so nothing is delivered to the freed executions (and nothing is
 * left allocated). */
static void
executor_freed_with_requests_out_abandons_them(void **state)
{
	struct harness *h = *state;
	struct sync_result r;
	char *error = NULL;

	add_rs(h->f, &(struct rs){ .replicas = 3 });
	sync_key(h->f, KEY, time_now(), &r);
	if (executor_run(h->e, h->f->c, &r, on_done, h, &error) != 0)
		fail_msg("executor_run: %s", error);
	sync_result_clear(&r);
	assert_int_equal(executor_in_flight(h->e), 1);
	executor_free(h->e);
	h->e = NULL;
	fake_apiserver_run(h->fake);

	assert_int_equal(h->done, 0);
	assert_requests(h, "");		/* it was still waiting to start */
}

/* --- the manager around it ----------------------------------------------------------------- */

/* The manager over a harness: its own ReplicaSet controller on the same store, no
 * informers (so synced at once), the harness's executor. */
struct managed {
	struct harness *h;
	struct informer_set *informers;
	struct manager *m;
	int *enabled;
	int (*until)(struct managed *);	/* the loop stops once this is true */
	struct event *check;
};

/* Creates the manager for h; with_client: it may read live (recovery). */
static struct managed *
managed_new(struct harness *h, int with_client)
{
	struct managed *mg = xcalloc(1, sizeof *mg);
	struct manager_options options;
	char *error = NULL;

	mg->h = h;
	mg->enabled = xcalloc((size_t)controller_type_count, sizeof *mg->enabled);
	assert_int_equal(controller_parse_list("replicaset", mg->enabled, NULL, &error), 0);
	mg->informers = informer_set_new(h->fake->base, h->fake->client, h->f->store);
	memset(&options, 0, sizeof options);
	options.enabled = mg->enabled;
	options.client = with_client ? h->fake->client : NULL;
	mg->m = manager_new(h->fake->base, h->f->store, mg->informers, h->e, &options, &error);
	if (mg->m == NULL)
		fail_msg("manager_new: %s", error);
	return mg;
}

/* Frees the manager and its informer set (not the harness). */
static void
managed_free(struct managed *mg)
{
	manager_free(mg->m);
	informer_set_free(mg->informers);
	if (mg->check != NULL)
		event_free(mg->check);
	free(mg->enabled);
	free(mg);
}

/* Every 5 ms: leave the loop once the condition holds and nothing is in flight. */
static void
managed_check(evutil_socket_t fd, short what, void *arg)
{
	struct managed *mg = arg;
	struct timeval tick = { 0, 5000 };

	(void)fd;
	(void)what;
	if (executor_in_flight(mg->h->e) == 0 && mg->until(mg)) {
		event_base_loopexit(mg->h->fake->base, NULL);
		return;
	}
	evtimer_add(mg->check, &tick);
}

/* Starts the manager and runs the loop until until(mg) holds (at most 10 seconds), then
 * 50 ms more to catch what should not happen, then stops the manager. */
static void
managed_run(struct managed *mg, int (*until)(struct managed *))
{
	struct timeval limit = { 10, 0 }, settle = { 0, 50000 }, tick = { 0, 5000 };
	struct event_base *base = mg->h->fake->base;

	mg->until = until;
	mg->check = evtimer_new(base, managed_check, mg);
	evtimer_add(mg->check, &tick);
	manager_start(mg->m);
	event_base_loopexit(base, &limit);
	event_base_dispatch(base);
	if (!until(mg))
		fail_msg("the manager never got there");
	event_base_loopexit(base, &settle);
	event_base_dispatch(base);
	assert_int_equal(manager_stop(mg->m), 0);
}

/* Until: a status was written. */
static int
status_written(struct managed *mg)
{
	return fake_apiserver_count(mg->h->fake, "PUT", "replicasets/foobar/status") > 0;
}

/* Until: two pods were created. */
static int
two_pods_created(struct managed *mg)
{
	return fake_apiserver_count(mg->h->fake, "POST", "pods") == 2;
}

/* Until: a pod was created. */
static int
pod_created(struct managed *mg)
{
	return fake_apiserver_count(mg->h->fake, "POST", "pods") > 0;
}

/* The pods informer reaches resourceVersion 600, with no event (a bookmark). */
static void
pods_informer_catches_up(evutil_socket_t fd, short what, void *arg)
{
	struct harness *h = arg;
	char *error = NULL;

	(void)fd;
	(void)what;
	if (sqlite3_exec(store_db(h->f->store), "UPDATE informers SET resource_version = '600'"
	    " WHERE resource = 'pods'", NULL, NULL, &error) != SQLITE_OK)
		fail_msg("catching up: %s", error);
}

/* A sync that finds the cache behind the controller's own writes is retried with backoff
 * (kube's AddRateLimited), so that the owner is synced once the cache has caught up even
 * when no event of it brings the key back: an informer that caught up by a bookmark, or a
 * relist that changed nothing of the owner's. */
static void
manager_syncs_a_lagging_key_once_the_cache_caught_up_without_an_event(void **state)
{
	struct harness *h = *state;
	struct timeval later = { 1, 500000 };
	struct event *catch_up;
	struct managed *mg;
	char *error = NULL;

	add_rs(h->f, &(struct rs){ .replicas = 1 });
	/* It wrote pods at resourceVersion 500; the pods informer is at 10. */
	if (sqlite3_exec(store_db(h->f->store), "INSERT INTO informers (resource, "
	    "resource_version, list_epoch, synced) VALUES ('pods', '10', 1, 1) "
	    "ON CONFLICT (resource) DO UPDATE SET resource_version = '10';"
	    "INSERT INTO controller_writes (controller, key, owner_uid, resource, "
	    "resource_version) VALUES ('replicaset', 'default/foobar', 'uid-foobar', 'pods', "
	    "'500')", NULL, NULL, &error) != SQLITE_OK)
		fail_msg("setting up: %s", error);
	catch_up = evtimer_new(h->fake->base, pods_informer_catches_up, h);
	evtimer_add(catch_up, &later);
	mg = managed_new(h, 0);
	managed_run(mg, pod_created);

	/* Nothing before the informer caught up, then the creation. */
	assert_requests(h, "POST pods;PUT replicasets/foobar/status");
	event_free(catch_up);
	managed_free(mg);
}

/* A failed sync is retried after a backoff, and the success that follows is final
 * (processNextWorkItem: AddRateLimited on error, Forget on success). */
static void
manager_retries_a_failed_sync_with_backoff(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault once = { "POST", "pods", 1, 1, 500, "InternalError",
	    "fake error", NULL };
	struct managed *mg;

	add_rs(h->f, &(struct rs){ .replicas = 1 });
	fake_apiserver_set_faults(h->fake, &once, 1);
	mg = managed_new(h, 0);
	managed_run(mg, status_written);
	/* The first sync's status had FailedCreate; the second's does not. */
	while (fake_apiserver_count(h->fake, "PUT", "replicasets/foobar/status") < 2) {
		struct timeval tick = { 0, 20000 };
		event_base_loopexit(h->fake->base, &tick);
		event_base_dispatch(h->fake->base);
	}
	assert_requests(h, "POST pods;PUT replicasets/foobar/status;"
	    "POST pods;PUT replicasets/foobar/status");
	assert_failure_condition(h, "");
	assert_expectations(h, 1, 0);
	managed_free(mg);
}

/* Attempts to write foobar's expectations while the disk is "full", and how many there
 * had been when it recovered. */
static int store_attempts, store_attempts_at_recovery;

static void
count_store_attempt(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	(void)argv;
	store_attempts++;
	sqlite3_result_null(ctx);
}

/* The disk is back: foobar's expectations can be written, and a commit works, as the
 * informers' first one after a resync. */
static void
store_recovers(evutil_socket_t fd, short what, void *arg)
{
	struct harness *h = arg;
	char *error = NULL;

	(void)fd;
	(void)what;
	assert_int_equal(sqlite3_exec(store_db(h->f->store), "DROP TRIGGER temp.full_foobar",
	    NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(store_begin(h->f->store, &error), 0);
	assert_int_equal(sqlite3_exec(store_db(h->f->store), "UPDATE informers SET synced = "
	    "synced", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(store_commit(h->f->store, &error), 0);
	store_attempts_at_recovery = store_attempts;
}

/* A key whose sync failed on the store (its expectations could not be committed) is held,
 * not backed off: it is not tried again while the store has not written since, and it
 * is synced at once when the store writes again, its backoff forgotten. A key failing on
 * the apiserver meanwhile keeps backing off and being retried, as in kube. */
static void
manager_holds_a_key_failed_on_the_store_until_the_store_writes_again(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault failing = { "PUT", "replicasets/other/status", 1, 1000,
	    500, "InternalError", "fake error", NULL };
	struct timeval later = { 2, 0 };
	struct event *recover;
	struct managed *mg;
	sqlite3 *db = store_db(h->f->store);
	int other_puts;

	add_rs(h->f, &(struct rs){ .replicas = 1 });
	add_rs(h->f, &(struct rs){ .name = "other", .replicas = 0, .selector = "{\"o\":\"x\"}",
	    .template_labels = "{\"o\":\"x\"}" });
	fake_apiserver_set_faults(h->fake, &failing, 1);
	store_attempts = 0;
	store_attempts_at_recovery = -1;
	assert_int_equal(sqlite3_create_function(db, "count_store_attempt", 0, SQLITE_UTF8,
	    NULL, count_store_attempt, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TEMP TRIGGER full_foobar BEFORE INSERT ON "
	    "main.expectations WHEN NEW.key = 'default/foobar' BEGIN "
	    "SELECT count_store_attempt(); SELECT RAISE(ABORT, 'database or disk is full'); "
	    "END", NULL, NULL, NULL), SQLITE_OK);
	recover = evtimer_new(h->fake->base, store_recovers, h);
	evtimer_add(recover, &later);
	mg = managed_new(h, 0);
	managed_run(mg, pod_created);

	/* Two seconds of a full disk: one attempt (the store has not written since, and the
	 * retry without such a sign is 10 s away); with a backoff from 5 ms it would have
	 * been tried about nine times. */
	assert_int_equal(store_attempts_at_recovery, 1);
	/* Then the creation at once, once the store wrote. */
	assert_int_equal(fake_apiserver_count(h->fake, "POST", "pods"), 1);
	/* The other key kept failing on the apiserver and was retried with backoff: its
	 * status PUT (and one PUT after a re-read) each time. */
	other_puts = fake_apiserver_count(h->fake, "PUT", "replicasets/other/status");
	if (other_puts < 8)
		fail_msg("the key failing on the apiserver was tried %d times (PUTs), want its "
		    "backoff's retries", other_puts);
	/* Its PUT after a re-read of an owner that had no status yet carries the status. */
	assert_non_null(json_path(nth_request(h, "PUT", "replicasets/other/status", 1)->json,
	    "status.replicas"));
	event_free(recover);
	managed_free(mg);
}

/* An outcome of retry_now (an adoption found its pod gone) syncs the key again at once. */
static void
manager_syncs_again_at_once_when_the_cache_proved_wrong(void **state)
{
	struct harness *h = *state;
	static const struct fake_fault once = { "PATCH", "pods/pod1", 1, 1, 404, "NotFound",
	    "pods \"pod1\" not found", NULL };
	struct managed *mg;

	add_rs(h->f, &(struct rs){ .replicas = 2 });
	add_pod(h->f, &(struct pod){ .name = "pod1", .phase = "Running" });
	fake_apiserver_set_faults(h->fake, &once, 1);
	mg = managed_new(h, 0);
	managed_run(mg, status_written);

	assert_requests(h, "GET replicasets/foobar;PATCH pods/pod1;"
	    "GET replicasets/foobar;PATCH pods/pod1;POST pods;PUT replicasets/foobar/status");
	managed_free(mg);
}

/* Expectations left by an earlier run hold the owner back until a live LIST of its pods
 * agrees with the cache; then they are released and the owner synced. */
static void
manager_releases_inherited_expectations_when_the_cache_agrees(void **state)
{
	struct harness *h = *state;
	static const char *const names[] = { "pod-a" };
	struct managed *mg;
	char *error = NULL;

	add_rs(h->f, &(struct rs){ .replicas = 3 });
	add_owned_pods(h, names, 1);
	assert_int_equal(expectations_expect(h->f->c->expectations, KEY, 2, NULL, 0,
	    time_now(), &error), 0);
	mg = managed_new(h, 1);
	managed_run(mg, two_pods_created);

	assert_string_equal(nth_request(h, "GET", "pods", 0)->path,
	    "/api/v1/namespaces/default/pods?labelSelector=foo%3Dbar");
	/* The first sync waits on them (and writes the status); once released, the
	 * next one creates the two missing pods. */
	assert_requests(h, "GET pods;PUT replicasets/foobar/status;POST pods;POST pods;"
	    "PUT replicasets/foobar/status");
	assert_expectations(h, 2, 0);
	managed_free(mg);
}

/* Until the live read succeeds, inherited expectations hold: the sync only writes the
 * status. */
static void
manager_keeps_inherited_expectations_until_a_live_read_succeeds(void **state)
{
	struct harness *h = *state;
	static const char *const names[] = { "pod-a" };
	static const struct fake_fault fail = { "GET", "pods", 1, 0, 500, "InternalError",
	    "fake error", NULL };
	struct managed *mg;
	char *error = NULL;

	add_rs(h->f, &(struct rs){ .replicas = 3 });
	add_owned_pods(h, names, 1);
	assert_int_equal(expectations_expect(h->f->c->expectations, KEY, 2, NULL, 0,
	    time_now(), &error), 0);
	fake_apiserver_set_faults(h->fake, &fail, 1);
	mg = managed_new(h, 1);
	managed_run(mg, status_written);

	assert_requests(h, "GET pods;PUT replicasets/foobar/status");
	assert_expectations(h, 2, 0);
	managed_free(mg);
}

/* Until: two pods were deleted. */
static int
two_pods_deleted(struct managed *mg)
{
	return fake_apiserver_count(mg->h->fake, "DELETE", "pods/") >= 2;
}

/* The most executions seen in flight when a pod is created. */
struct in_flight_check {
	struct executor *e;
	int most;
};

/* At each pod POST: notes how many executions are in flight. */
static void
note_in_flight(struct fake_apiserver *fake, const struct recorded_request *rq, void *arg)
{
	struct in_flight_check *ic = arg;

	(void)fake;
	if (strcmp(rq->method, "POST") == 0 && strcmp(rq->short_path, "pods") == 0 &&
	    executor_in_flight(ic->e) > ic->most)
		ic->most = executor_in_flight(ic->e);
}

/* Until: seven pods were created. */
static int
seven_pods_created(struct managed *mg)
{
	return fake_apiserver_count(mg->h->fake, "POST", "pods") == 7;
}

/* At most --concurrent-replicaset-syncs (5) keys are carried out at once; the others wait
 * their turn. */
static void
manager_carries_out_at_most_five_syncs_at_once(void **state)
{
	struct harness *h = *state;
	struct in_flight_check ic = { h->e, 0 };
	struct managed *mg;
	char name[16];

	for (int i = 0; i < 7; i++) {
		snprintf(name, sizeof name, "rs-%d", i);
		add_rs(h->f, &(struct rs){ .name = name, .replicas = 1 });
	}
	h->fake->on_request = note_in_flight;
	h->fake->on_request_arg = &ic;
	mg = managed_new(h, 0);
	managed_run(mg, seven_pods_created);

	assert_int_equal(ic.most, 5);
	managed_free(mg);
}

/* Inherited expectations that have timed out do not hold the first sync back, which sets
 * expectations of its own; the recovery's live read, answered meanwhile, must not release
 * those: the cache agreeing with a LIST read before the deletions took effect says
 * nothing about them, and a sync freed of them would delete more pods than it should. */
static void
manager_recovery_leaves_expectations_of_this_run_alone(void **state)
{
	struct harness *h = *state;
	static const char *const names[] = { "pod-a", "pod-b" };
	struct managed *mg;
	char *error = NULL;

	add_rs(h->f, &(struct rs){ .replicas = 0 });
	add_owned_pods(h, names, 2);
	assert_int_equal(expectations_expect(h->f->c->expectations, KEY, 1, NULL, 0,
	    time_now() - 2 * EXPECTATIONS_TIMEOUT, &error), 0);
	mg = managed_new(h, 1);
	managed_run(mg, two_pods_deleted);

	assert_int_equal(fake_apiserver_count(h->fake, "DELETE", "pods/"), 2);
	assert_expectations(h, 0, 2);
	managed_free(mg);
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		/* creations */
		cmocka_unit_test(creations_go_out_in_slow_start_batches),
		T(a_controller_writes_through_the_client_given_for_its_type),
		T(creation_posts_the_template_with_the_controller_reference),
		T(creation_refused_by_a_terminating_namespace_is_no_failure),
		T(creation_forbidden_otherwise_is_a_failure),
		T(creation_without_a_response_is_a_failure),
		cmocka_unit_test(creation_without_a_response_makes_the_pods_informer_sync_again),
		cmocka_unit_test(expectations_are_committed_before_the_first_request),
		cmocka_unit_test(no_creation_or_deletion_without_committed_expectations),
		T(apiserver_failure_is_not_a_store_failure),
		T(lost_write_record_is_a_store_failure),
		/* deletions */
		T(deletions_go_out_at_once_with_a_uid_precondition),
		T(deletion_not_found_is_success_and_a_failure_lowers_its_expectation),
		T(deletion_refused_by_its_precondition_is_a_failure),
		T(deletion_without_a_response_makes_the_pods_informer_sync_again),
		/* status */
		T(status_update_failing_twice_fails_after_one_reread),
		T(status_update_failing_once_succeeds_on_the_second_put),
		T(status_update_rereads_the_object_it_names_whatever_the_key),
		T(status_update_without_retry_fails_at_the_conflict),
		T(status_update_of_a_deleted_replicaset_is_not_retried),
		/* claims */
		T(adoption_rechecks_the_owner_live_first),
		cmocka_unit_test(adoption_stops_when_the_live_owner_is_going_or_replaced),
		T(adoption_failures_stop_the_sync),
		T(adoption_of_a_vanished_pod_syncs_again_at_once),
		T(release_patches_without_a_recheck),
		/* writes and requeues */
		T(next_sync_waits_until_the_cache_shows_the_writes),
		T(success_passes_on_the_availability_requeue),
		T(failure_drops_the_availability_requeue),
		/* writes to other objects */
		T(writes_go_one_at_a_time_in_order_after_the_claims_and_before_the_status),
		T(confirmed_absence_lets_the_writes_go),
		T(absence_confirmed_once_is_not_read_again),
		T(owner_found_live_stops_the_writes),
		T(another_uid_under_the_owners_name_confirms_its_absence),
		T(confirmation_without_a_uid_finds_any_object_of_the_name),
		T(failed_claim_sends_no_write),
		cmocka_unit_test(first_failing_write_stops_the_rest_and_the_status),
		cmocka_unit_test(failing_write_with_an_error_prefix_sends_the_failure_status),
		T(failing_write_that_goes_on_skips_only_its_resource),
		T(sync_that_failed_is_carried_out_then_backs_off),
		cmocka_unit_test(failing_create_that_exists_already_sends_no_failure_status),
		cmocka_unit_test(
		    create_write_refused_by_a_terminating_namespace_stops_without_failure),
		T(create_write_that_may_exist_already_is_done),
		cmocka_unit_test(review_decides_the_write_after_it),
		T(write_counters_count_success_and_failure),
		T(delete_write_not_found_is_done_and_the_next_write_goes_out),
		T(patch_write_not_found_is_a_failure),
		T(sync_events_are_recorded_before_any_write),
		T(write_events_carry_done_message_or_failed_message_and_the_error),
		T(events_about_other_objects_name_them),
		T(update_write_puts_the_whole_object_and_patch_write_patches),
		T(read_modify_write_update_puts_the_live_object_changed),
		T(read_modify_write_update_of_a_missing_object_fails),
		T(filtered_confirmation_lists_everything_and_counts_only_its_items),
		/* nothing sent */
		T(stale_sync_sends_nothing_and_backs_off),
		T(sync_of_a_deleted_replicaset_forgets_its_bookkeeping),
		T(sync_with_nothing_to_do_sends_nothing),
		T(executor_freed_with_requests_out_abandons_them),
		/* the manager */
		T(manager_retries_a_failed_sync_with_backoff),
		T(manager_holds_a_key_failed_on_the_store_until_the_store_writes_again),
		T(manager_syncs_again_at_once_when_the_cache_proved_wrong),
		T(manager_syncs_a_lagging_key_once_the_cache_caught_up_without_an_event),
		T(manager_releases_inherited_expectations_when_the_cache_agrees),
		T(manager_keeps_inherited_expectations_until_a_live_read_succeeds),
		T(manager_recovery_leaves_expectations_of_this_run_alone),
		T(manager_carries_out_at_most_five_syncs_at_once),
	};
#undef T
	return cmocka_run_group_tests_name("executor", tests, NULL, NULL);
}
