/*
 * test_ttlafterfinished.c - the TTL-after-finished controller
 * (controllers/ttlafterfinished.c) against kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/ttlafterfinished; the first table is its
 * TestTimeLeft (ttlafterfinished_controller_test.go), times as seconds before NOW. Then
 * what a sync does with each kind of Job (nothing, a requeue when it expires, a foreground
 * delete with the uid and resourceVersion as preconditions) and which events queue a Job.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "action.h"
#include "controller.h"
#include "controllers/ttlafterfinished.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "restops.h"
#include "timeutil.h"
#include "util.h"

#define NONE (-1.0)		/* no such time / no TTL */

struct job_shape {
	double completed_ago;	/* the Complete condition's lastTransitionTime; NONE */
	double failed_ago;	/* the Failed condition's; NONE */
	double ttl;		/* spec.ttlSecondsAfterFinished; NONE */
};

/* A Job "foobar" in "default" of that shape; deleting: with a deletionTimestamp. */
static cJSON *
job_new(const struct job_shape *s, int deleting)
{
	char at[TIME_RFC3339_SIZE];
	struct buf b;
	cJSON *job;
	int n = 0;

	buf_init(&b);
	buf_append_str(&b, "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"
	    "\"name\":\"foobar\",\"namespace\":\"default\",\"uid\":\"uid-job\","
	    "\"resourceVersion\":\"42\"");
	if (deleting)
		buf_append_str(&b, ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"");
	buf_append_str(&b, "},\"spec\":{\"selector\":{\"matchLabels\":{\"foo\":\"bar\"}},"
	    "\"template\":{\"metadata\":{\"labels\":{\"foo\":\"bar\"}},\"spec\":{"
	    "\"containers\":[{\"image\":\"foo/bar\"}]}}");
	if (s->ttl != NONE)
		buf_printf(&b, ",\"ttlSecondsAfterFinished\":%.0f", s->ttl);
	buf_append_str(&b, "},\"status\":{\"conditions\":[");
	if (s->completed_ago != NONE) {
		time_format_rfc3339((time_t)(NOW - s->completed_ago), at);
		buf_printf(&b, "{\"type\":\"Complete\",\"status\":\"True\","
		    "\"lastTransitionTime\":\"%s\"}", at);
		n++;
	}
	if (s->failed_ago != NONE) {
		time_format_rfc3339((time_t)(NOW - s->failed_ago), at);
		buf_printf(&b, "%s{\"type\":\"Failed\",\"status\":\"True\","
		    "\"lastTransitionTime\":\"%s\"}", n > 0 ? "," : "", at);
	}
	buf_append_str(&b, "]}}");
	job = fixture_parse(b.data);
	buf_free(&b);
	return job;
}

/* kube's TestTimeLeft. */
static const struct time_left_case {
	const char *name;
	struct job_shape job;
	const char *error;	/* a part of the error; NULL: none */
	double left;		/* seconds */
	double expire_at;	/* seconds after NOW */
} time_left_cases[] = {
	{ "Error case: Job unfinished", { NONE, NONE, 100 }, "should not be cleaned up", 0,
	    0 },
	{ "Error case: Job completed now, no TTL", { 0, NONE, NONE },
	    "should not be cleaned up", 0, 0 },
	{ "Job completed now, 0s TTL", { 0, NONE, 0 }, NULL, 0, 0 },
	{ "Job completed now, 10s TTL", { 0, NONE, 10 }, NULL, 10, 10 },
	{ "Job completed 10s ago, 15s TTL", { 10, NONE, 15 }, NULL, 5, 5 },
	{ "Error case: Job failed now, no TTL", { NONE, 0, NONE }, "should not be cleaned up",
	    0, 0 },
	{ "Job failed now, 0s TTL", { NONE, 0, 0 }, NULL, 0, 0 },
	{ "Job failed now, 10s TTL", { NONE, 0, 10 }, NULL, 10, 10 },
	{ "Job failed 10s ago, 15s TTL", { NONE, 10, 15 }, NULL, 5, 5 },
};

static void
time_left(void **state)
{
	const struct time_left_case *tc = *state;
	cJSON *job = job_new(&tc->job, 0);
	double left = -99, expire_at = -99;
	char *error = NULL;
	int rc = ttlafterfinished_time_left(job, NOW, &left, &expire_at, &error);

	if (tc->error != NULL) {
		assert_int_equal(rc, -1);
		assert_non_null(strstr(error, tc->error));
	} else {
		assert_int_equal(rc, 0);
		assert_true(left == tc->left);
		assert_true(expire_at == NOW + tc->expire_at);
	}
	free(error);
	cJSON_Delete(job);
}

/* A finished Job whose condition has no time it can read is an error, as in kube. */
static void
finish_time_unreadable(void **state)
{
	cJSON *job = fixture_parse("{\"metadata\":{\"name\":\"j\",\"namespace\":\"n\"},"
	    "\"spec\":{\"ttlSecondsAfterFinished\":5},\"status\":{\"conditions\":["
	    "{\"type\":\"Complete\",\"status\":\"True\",\"lastTransitionTime\":\"yesterday\"}]}}");
	double left, at;
	char *error = NULL;

	(void)state;
	assert_int_equal(ttlafterfinished_time_left(job, NOW, &left, &at, &error), -1);
	assert_non_null(strstr(error, "unable to find the time when the Job n/j finished"));
	free(error);
	cJSON_Delete(job);
}

/* What one sync at NOW does with a cached Job. */
static const struct sync_case {
	const char *name;
	struct job_shape job;
	int deleting;
	int deleted;		/* a foreground delete */
	double requeue;		/* seconds; 0: none */
} sync_cases[] = {
	{ "unfinished: nothing", { NONE, NONE, 100 }, 0, 0, 0 },
	{ "complete without a TTL: nothing", { 0, NONE, NONE }, 0, 0, 0 },
	{ "complete 10s ago, 15s TTL: synced again in 5s", { 10, NONE, 15 }, 0, 0, 5 },
	{ "failed 10s ago, 15s TTL: synced again in 5s", { NONE, 10, 15 }, 0, 0, 5 },
	{ "complete now, 0s TTL: deleted", { 0, NONE, 0 }, 0, 1, 0 },
	{ "complete 20s ago, 15s TTL: deleted", { 20, NONE, 15 }, 0, 1, 0 },
	{ "failed 1h ago, 60s TTL: deleted", { NONE, 3600, 60 }, 0, 1, 0 },
	{ "expired but being deleted: nothing", { 20, NONE, 15 }, 1, 0, 0 },
	{ "finished in the future (skew): synced again when it expires", { -30, NONE, 10 }, 0,
	    0, 40 },
};

static int
world_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(&ttlafterfinished_controller_type, NULL);

	w->row = *state;
	*state = w;
	return 0;
}

static int
world_teardown(void **state)
{
	ctl_world_free(*state);
	return 0;
}

static void
sync_case(void **state)
{
	struct ctl_world *w = *state;
	const struct sync_case *tc = w->row;
	const struct action *a;

	ctl_cache(w, resource_find("jobs"), job_new(&tc->job, tc->deleting));
	ctl_sync(w, "default/foobar", NOW);
	assert_int_equal(w->result.nwrites, tc->deleted);
	assert_int_equal(w->result.nmanage, 0);
	assert_null(w->result.status);
	assert_true(w->result.requeue_after == tc->requeue);
	if (!tc->deleted)
		return;
	a = &w->result.writes[0];
	assert_int_equal(a->type, ACTION_DELETE);
	assert_string_equal(a->namespace, "default");
	assert_string_equal(a->name, "foobar");
	assert_string_equal(a->uid, "uid-job");
	assert_string_equal(a->precondition_rv, "42");
	assert_string_equal(a->propagation, RESTOPS_PROPAGATE_FOREGROUND);
}

/* A Job gone from the cache: nothing, and its bookkeeping forgotten. */
static void
sync_gone(void **state)
{
	struct ctl_world *w = *state;

	ctl_sync(w, "default/foobar", NOW);
	assert_int_equal(w->result.nwrites, 0);
	assert_true(w->result.forget_expectations);
}

/* A finished Job whose finish time cannot be read fails its sync (kube returns the
 * error, and the key backs off). */
static void
sync_unreadable(void **state)
{
	struct ctl_world *w = *state;
	struct sync_result r;
	char *error = NULL;

	ctl_cache(w, resource_find("jobs"), fixture_parse("{\"metadata\":{\"name\":\"j\","
	    "\"namespace\":\"n\",\"uid\":\"u\",\"resourceVersion\":\"1\"},"
	    "\"spec\":{\"ttlSecondsAfterFinished\":5},\"status\":{\"conditions\":["
	    "{\"type\":\"Failed\",\"status\":\"True\"}]}}"));
	memset(&r, 0, sizeof r);
	assert_int_equal(w->c->type->sync(w->c, "n/j", NOW, &r, &error), -1);
	assert_non_null(strstr(error, "unable to find the time"));
	assert_int_equal(r.nwrites, 0);
	free(error);
	sync_result_clear(&r);
}

/* kube's addJob/updateJob: only a Job to clean up, not being deleted, is queued; a
 * deleted one never; list_keys gives the Jobs with a TTL. */
static void
events_queue(void **state)
{
	struct ctl_world *w = *state;
	const struct resource *jobs = resource_find("jobs");
	static const struct job_shape done = { 5, NONE, 100 }, running = { NONE, NONE, 100 },
	    no_ttl = { 5, NONE, NONE };
	char *keys;

	ctl_tell(w, INFORMER_ADDED, jobs, job_new(&running, 0), NULL);
	ctl_tell(w, INFORMER_ADDED, jobs, job_new(&no_ttl, 0), NULL);
	ctl_tell(w, INFORMER_UPDATED, jobs, job_new(&done, 1), NULL);
	ctl_tell(w, INFORMER_DELETED, jobs, job_new(&done, 0), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "");
	free(keys);
	ctl_tell(w, INFORMER_UPDATED, jobs, job_new(&done, 0), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "default/foobar");
	free(keys);
	ctl_keys_clear(w);
	ctl_cache(w, jobs, job_new(&running, 0));
	ctl_list_keys(w);
	keys = ctl_keys(w);
	assert_string_equal(keys, "default/foobar");
	free(keys);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(time_left_cases) + NELEM(sync_cases) + 4];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(time_left_cases); i++)
		tests[n++] = (struct CMUnitTest){ time_left_cases[i].name, time_left, NULL, NULL,
		    (void *)&time_left_cases[i] };
	tests[n++] = (struct CMUnitTest){ "a finish time that does not parse",
	    finish_time_unreadable, NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(sync_cases); i++)
		tests[n++] = (struct CMUnitTest){ sync_cases[i].name, sync_case, world_setup,
		    world_teardown, (void *)&sync_cases[i] };
	tests[n++] = (struct CMUnitTest){ "a Job gone", sync_gone, world_setup, world_teardown,
	    NULL };
	tests[n++] = (struct CMUnitTest){ "a finished Job without a finish time",
	    sync_unreadable, world_setup, world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "the events that queue a Job", events_queue,
	    world_setup, world_teardown, NULL };
	return _cmocka_run_group_tests("ttlafterfinished", tests, n, NULL, NULL);
}
