/*
 * test_job.c - the Job controller (controllers/job.c) against kube-controller-manager's
 * rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/job; the first table is the NonIndexed rows
 * of its TestControllerSyncJob (job_controller_test.go), with kube's names. kube's sync
 * records finished pods, removes their finalizers and moves them into the counters in one
 * go; sqlkcm's takes a sync per step (each from the cache). So a row is played as kube's
 * test plays it: synced until a sync writes nothing more, each sync's status and
 * finalizer removals applied to the cache (its creations and deletions are not, as kube's
 * fake pod control does not make them); the creations and deletions counted are the first
 * sync's, the pods patched those of every sync, the counters and conditions the last
 * status written. kube's rows that turn the JobManagedBy and JobPodReplacementPolicy gates
 * off are played as 1.36 runs by default, with them on: a failing Job whose deleted pods
 * are still terminating ends the row with FailureTarget, not yet Failed (kube's own
 * "count terminating pods when indexed job fails" row). Then the backoff between failures (TestGetRemainingTime's cases), the
 * pods created, and what the handlers queue. A second table is kube's
 * TestSyncJobWithJobBackoffLimitPerIndex, played the same way.
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
#include "controllers/job.h"
#include "fixtures.h"
#include "json.h"
#include "metrics.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

#define UNSET (-1)

struct sync_case {
	const char *name;
	int parallelism, completions, backoff_limit;	/* completions UNSET: none */
	int deleting, suspend;
	const char *replacement;	/* podReplacementPolicy; NULL: none */
	const char *status;		/* the Job's initial status JSON; NULL: none */
	int pending, active, ready, succeeded, failed, terminating;
	/* What kube expects. */
	int creations, deletions, want_active, want_ready, want_succeeded, want_failed;
	int want_terminating;		/* UNSET: not checked */
	int patches;
	const char *condition;		/* the condition True at the end; NULL: none */
	const char *reason;
};

static const struct sync_case sync_cases[] = {
	{ "job start", 2, 5, 6, 0, 0, NULL, NULL, 0, 0, 0, 0, 0, 0,
	    2, 0, 2, 0, 0, 0, UNSET, 0, NULL, NULL },
	{ "WQ job start", 2, UNSET, 6, 0, 0, NULL, NULL, 0, 0, 0, 0, 0, 0,
	    2, 0, 2, 0, 0, 0, UNSET, 0, NULL, NULL },
	{ "pending pods", 2, 5, 6, 0, 0, NULL, NULL, 2, 0, 0, 0, 0, 0,
	    0, 0, 2, 0, 0, 0, UNSET, 0, NULL, NULL },
	{ "correct # of pods", 3, 5, 6, 0, 0, NULL, NULL, 0, 3, 2, 0, 0, 0,
	    0, 0, 3, 2, 0, 0, UNSET, 0, NULL, NULL },
	{ "WQ job: correct # of pods", 2, UNSET, 6, 0, 0, NULL, NULL, 0, 2, 0, 0, 0, 0,
	    0, 0, 2, 0, 0, 0, UNSET, 0, NULL, NULL },
	{ "too few active pods", 2, 5, 6, 0, 0, NULL, NULL, 0, 1, 0, 1, 0, 0,
	    1, 0, 2, 0, 1, 0, UNSET, 1, NULL, NULL },
	{ "WQ job: recreate pods when failed", 1, UNSET, 6, 0, 0, "Failed", NULL,
	    0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 1, NULL, NULL },
	{ "WQ job: turn on PodReplacementPolicy but not set PodReplacementPolicy", 1, 1, 6,
	    0, 0, NULL, NULL, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 2, 1, 2, NULL, NULL },
	{ "WQ job: recreate pods when terminating or failed", 1, UNSET, 6, 0, 0,
	    "TerminatingOrFailed", NULL, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 2, 1, 2, NULL,
	    NULL },
	{ "more terminating pods than parallelism", 1, 1, 6, 0, 0, "Failed", NULL,
	    0, 2, 0, 0, 0, 4, 0, 1, 1, 0, 0, 0, 5, 1, NULL, NULL },
	/* sqlkcm's: kube's manageJob creates wantActive - terminating - active */
	{ "a pod being deleted holds its place while only failed pods are replaced", 1, UNSET,
	    6, 0, 0, "Failed", NULL, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, NULL, NULL },
	{ "a pod being deleted is replaced at once under TerminatingOrFailed", 1, UNSET, 6,
	    0, 0, "TerminatingOrFailed", NULL, 0, 0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, NULL,
	    NULL },
	{ "too few active pods with a dynamic job", 2, UNSET, 6, 0, 0, NULL, NULL,
	    0, 1, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, UNSET, 0, NULL, NULL },
	{ "too many active pods", 2, 5, 6, 0, 0, NULL, NULL, 0, 3, 0, 0, 0, 0,
	    0, 1, 2, 0, 0, 0, UNSET, 1, NULL, NULL },
	{ "count ready pods when too many active pods", 2, 5, 6, 0, 0, NULL, NULL,
	    0, 3, 3, 0, 0, 0, 0, 1, 2, 2, 0, 0, UNSET, 1, NULL, NULL },
	{ "failed + succeed pods: reset backoff delay", 2, 5, 6, 0, 0, NULL, NULL,
	    0, 1, 0, 1, 1, 0, 1, 0, 2, 0, 1, 1, UNSET, 2, NULL, NULL },
	{ "new failed pod", 2, 5, 6, 0, 0, NULL, NULL, 0, 1, 0, 0, 1, 0,
	    1, 0, 2, 0, 0, 1, UNSET, 1, NULL, NULL },
	{ "no new pod; possible finalizer update of failed pod", 1, 1, 6, 0, 0, NULL,
	    "{\"active\":1,\"failed\":1}", 0, 1, 0, 0, 0, 0,
	    0, 0, 1, 0, 0, 1, UNSET, 0, NULL, NULL },
	{ "job finish", 2, 5, 6, 0, 0, NULL, NULL, 0, 0, 0, 5, 0, 0,
	    0, 0, 0, 0, 5, 0, UNSET, 5, "Complete", "CompletionsReached" },
	{ "WQ job finishing", 2, UNSET, 6, 0, 0, NULL, NULL, 0, 1, 0, 1, 0, 0,
	    0, 0, 1, 0, 1, 0, UNSET, 1, NULL, NULL },
	{ "WQ job all finished", 2, UNSET, 6, 0, 0, NULL, NULL, 0, 0, 0, 2, 0, 0,
	    0, 0, 0, 0, 2, 0, UNSET, 2, "Complete", "CompletionsReached" },
	{ "WQ job all finished despite one failure", 2, UNSET, 6, 0, 0, NULL, NULL,
	    0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, UNSET, 2, "Complete", "CompletionsReached" },
	{ "more active pods than parallelism", 2, 5, 6, 0, 0, NULL, NULL, 0, 10, 0, 0, 0, 0,
	    0, 8, 2, 0, 0, 0, UNSET, 8, NULL, NULL },
	{ "more active pods than remaining completions", 3, 4, 6, 0, 0, NULL, NULL,
	    0, 3, 0, 2, 0, 0, 0, 1, 2, 0, 2, 0, UNSET, 3, NULL, NULL },
	{ "status change", 2, 5, 6, 0, 0, NULL, NULL, 0, 2, 0, 2, 0, 0,
	    0, 0, 2, 0, 2, 0, UNSET, 2, NULL, NULL },
	{ "deleting job", 2, 5, 6, 1, 0, NULL, NULL, 1, 1, 0, 1, 0, 0,
	    0, 0, 2, 0, 1, 0, UNSET, 3, NULL, NULL },
	{ "too many job failures", 2, 5, 0, 1, 0, NULL, NULL, 0, 0, 0, 0, 1, 0,
	    0, 0, 0, 0, 0, 1, UNSET, 1, "Failed", "BackoffLimitExceeded" },
	{ "count ready pods when job fails", 2, 3, 0, 0, 0, NULL, NULL, 0, 2, 2, 0, 1, 0,
	    0, 2, 0, 0, 0, 3, 2, 3, "FailureTarget", "BackoffLimitExceeded" },
	{ "suspending a job with satisfied expectations", 2, 4, 6, 0, 1, NULL, NULL,
	    0, 2, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, UNSET, 2, "Suspended", "JobSuspended" },
	{ "resuming a suspended job", 2, 4, 6, 0, 0, NULL,
	    "{\"conditions\":[{\"type\":\"Suspended\",\"status\":\"True\","
	    "\"reason\":\"JobSuspended\",\"message\":\"Job suspended\"}]}",
	    0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 0, 0, UNSET, 0, NULL, NULL },
	{ "suspending a deleted job", 2, 4, 6, 1, 1, NULL, NULL, 0, 2, 0, 0, 0, 0,
	    0, 0, 2, 0, 0, 0, UNSET, 2, NULL, NULL },
};

/* The Job foobar in default for row r. */
static cJSON *
job_new(const struct sync_case *r)
{
	struct buf b;
	cJSON *job;

	buf_init(&b);
	buf_append_str(&b, "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"
	    "\"name\":\"foobar\",\"namespace\":\"default\",\"uid\":\"uid-job\","
	    "\"resourceVersion\":\"1\"");
	if (r->deleting)
		buf_append_str(&b, ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"");
	buf_printf(&b, "},\"spec\":{\"parallelism\":%d,\"backoffLimit\":%d", r->parallelism,
	    r->backoff_limit);
	if (r->completions != UNSET)
		buf_printf(&b, ",\"completions\":%d", r->completions);
	if (r->suspend)
		buf_append_str(&b, ",\"suspend\":true");
	if (r->replacement != NULL)
		buf_printf(&b, ",\"podReplacementPolicy\":\"%s\"", r->replacement);
	buf_append_str(&b, ",\"selector\":{\"matchLabels\":{\"batch.kubernetes.io/"
	    "controller-uid\":\"uid-job\"}},\"template\":{\"metadata\":{\"labels\":{"
	    "\"batch.kubernetes.io/controller-uid\":\"uid-job\",\"batch.kubernetes.io/"
	    "job-name\":\"foobar\",\"controller-uid\":\"uid-job\",\"job-name\":\"foobar\"}},"
	    "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
	    "\"image\":\"foo/bar\"}]}}}");
	buf_printf(&b, ",\"status\":%s}", r->status != NULL ? r->status : "{}");
	job = fixture_parse(b.data);
	buf_free(&b);
	return job;
}

/* A pod of the Job: phase, Ready, being deleted. */
static cJSON *
job_pod_new(int n, const char *phase, int ready, int deleting)
{
	struct buf b;
	cJSON *pod;

	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
	    "\"name\":\"pod-%d\",\"namespace\":\"default\",\"uid\":\"uid-pod-%d\","
	    "\"resourceVersion\":\"1\",\"creationTimestamp\":\"2025-12-31T23:00:00Z\","
	    "\"finalizers\":[\"batch.kubernetes.io/job-tracking\"],", n, n);
	if (deleting)
		buf_append_str(&b, "\"deletionTimestamp\":\"2025-12-31T23:30:00Z\",");
	buf_printf(&b, "\"labels\":{\"batch.kubernetes.io/controller-uid\":\"uid-job\"},"
	    "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
	    "\"name\":\"foobar\",\"uid\":\"uid-job\",\"controller\":true}]},"
	    "\"spec\":{\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"%s\"",
	    phase);
	if (ready)
		buf_append_str(&b, ",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]");
	buf_append_str(&b, "}}");
	pod = fixture_parse(b.data);
	buf_free(&b);
	return pod;
}

static int
world_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(&job_controller_type, NULL);

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

/* Applies a finalizer removal to the cached pod it names. */
static void
apply_patch(struct ctl_world *w, const struct action *a)
{
	char *sql = NULL;
	sqlite3 *db = store_db(w->store);
	sqlite3_stmt *stmt;
	cJSON *pod = NULL;

	(void)sql;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT body FROM cache_pods WHERE name = ?1",
	    -1, &stmt, NULL), SQLITE_OK);
	sqlite3_bind_text(stmt, 1, a->name, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		pod = cJSON_Parse((const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	assert_non_null(pod);
	assert_non_null(json_path(a->body, "metadata.$deleteFromPrimitiveList/finalizers"));
	cJSON_DeleteItemFromObjectCaseSensitive(json_child_object(pod, "metadata"),
	    "finalizers");
	json_set(json_child_object(pod, "metadata"), "resourceVersion",
	    cJSON_CreateString("2"));
	ctl_cache(w, resource_find("pods"), pod);
}

static void
sync_case(void **state)
{
	struct ctl_world *w = *state;
	const struct sync_case *r = w->row;
	const struct resource *pods = resource_find("pods"), *jobs = resource_find("jobs");
	char patched[64] = { 0 };
	cJSON *status = NULL, *job;
	int n = 0, creations = -1, deletions = -1, npatched = 0, rv = 1;

	ctl_cache(w, jobs, job_new(r));
	for (int i = 0; i < r->pending; i++)
		ctl_cache(w, pods, job_pod_new(n++, "Pending", 0, 0));
	for (int i = 0; i < r->active; i++)
		ctl_cache(w, pods, job_pod_new(n++, "Running", i < r->ready, 0));
	for (int i = 0; i < r->succeeded; i++)
		ctl_cache(w, pods, job_pod_new(n++, "Succeeded", 0, 0));
	for (int i = 0; i < r->failed; i++)
		ctl_cache(w, pods, job_pod_new(n++, "Failed", 0, 0));
	for (int i = 0; i < r->terminating; i++)
		ctl_cache(w, pods, job_pod_new(n++, "Running", 0, 1));
	assert_true(n < (int)sizeof patched);
	for (int round = 0; round < 6; round++) {
		const struct action *st = NULL;
		int writes = 0;
		char text[16];

		ctl_sync(w, "default/foobar", NOW);
		if (getenv("JOB_TEST_TRACE") != NULL) {
			struct buf out;

			buf_init(&out);
			sync_result_print(&w->result, NULL, &out);
			fprintf(stderr, "round %d:\n%.*s", round, (int)out.len, out.data);
			buf_free(&out);
		}
		if (creations < 0) {
			creations = w->result.creating ? w->result.nmanage : 0;
			deletions = w->result.creating ? 0 : w->result.nmanage;
		}
		for (int i = 0; i < w->result.nwrites; i++) {
			const struct action *a = &w->result.writes[i];

			if (a->type == ACTION_UPDATE_STATUS) {
				st = a;
				continue;
			}
			assert_int_equal(a->type, ACTION_PATCH);
			apply_patch(w, a);
			writes++;
			n = atoi(a->name + 4);
			if (!patched[n])
				npatched++;
			patched[n] = 1;
		}
		if (st == NULL)
			st = w->result.status;
		if (st == NULL && writes == 0)
			break;
		if (st != NULL) {
			cJSON_Delete(status);
			status = cJSON_Duplicate(json_path(st->body, "status"), 1);
			job = cJSON_Duplicate(st->body, 1);
			snprintf(text, sizeof text, "%d", ++rv);
			json_set(json_child_object(job, "metadata"), "resourceVersion",
			    cJSON_CreateString(text));
			ctl_cache(w, jobs, job);
		}
		if (round == 5)
			fail_msg("%s: still writing after 6 syncs", r->name);
	}
	assert_int_equal(creations, r->creations);
	assert_int_equal(deletions, r->deletions);
	assert_int_equal(npatched, r->patches);
	assert_non_null(status);
	assert_int_equal(json_int(status, "active", 0), r->want_active);
	assert_int_equal(json_int(status, "ready", -1), r->want_ready);
	assert_int_equal(json_int(status, "succeeded", 0), r->want_succeeded);
	assert_int_equal(json_int(status, "failed", 0), r->want_failed);
	if (r->want_terminating != UNSET)
		assert_int_equal(json_int(status, "terminating", -1), r->want_terminating);
	assert_int_equal(cJSON_GetArraySize(json_path(status,
	    "uncountedTerminatedPods.succeeded")), 0);
	assert_int_equal(cJSON_GetArraySize(json_path(status,
	    "uncountedTerminatedPods.failed")), 0);
	{
		const cJSON *c;
		int found = 0;

		cJSON_ArrayForEach(c, json_path(status, "conditions")) {
			if (strcmp(json_string(c, "status"), "True") != 0)
				continue;
			if (r->condition != NULL && strcmp(json_string(c, "type"),
			    r->condition) == 0) {
				assert_string_equal(json_string(c, "reason"), r->reason);
				found = 1;
			} else if (strcmp(json_string(c, "type"), "Complete") == 0 ||
			    (r->condition == NULL &&
			    strcmp(json_string(c, "type"), "FailureTarget") == 0) ||
			    strcmp(json_string(c, "type"), "Failed") == 0 ||
			    strcmp(json_string(c, "type"), "Suspended") == 0) {
				fail_msg("%s: unexpected condition %s", r->name,
				    json_string(c, "type"));
			}
		}
		assert_int_equal(found, r->condition != NULL);
	}
	cJSON_Delete(status);
}

/* kube's TestSyncJobWithJobBackoffLimitPerIndex, as data: an Indexed Job with
 * backoffLimitPerIndex 1 (and backoffLimit, maxFailedIndexes, a podFailurePolicy rule on
 * exit code 3), its pods by index, phase, the failure count annotation and exit code; what
 * kube's status ends with, played as sync_case plays a row. created: the pods the first
 * sync creates, as index:failures:ignored, the annotations the replaced pod's failures
 * give them. */
struct index_pod {
	int index;
	const char *phase;
	int failures;		/* batch.kubernetes.io/job-index-failure-count */
	int exit_code;		/* of container x; UNSET: no container status */
	int finished_now;	/* its container finished at NOW (else long ago) */
};

static const struct per_index_case {
	const char *name;
	int parallelism, completions, backoff_limit, max_failed;	/* UNSET: none */
	const char *policy;		/* the action of the rule on exit code 3; NULL: none */
	struct index_pod pods[4];
	int npods;
	int want_active, want_failed, want_succeeded, want_terminating;
	const char *want_completed, *want_failed_indexes;
	const char *want_conditions;	/* the True ones, "Type/Reason" in order */
	const char *created;
} per_index_cases[] = {
	{ "successful job after a single failure within index", 2, 2, INT32_MAX, UNSET, NULL,
	    { { 0, "Failed", 0, UNSET, 0 }, { 0, "Succeeded", 1, UNSET, 0 },
	    { 1, "Succeeded", 0, UNSET, 0 } }, 3,
	    0, 1, 2, 0, "0,1", "",
	    "SuccessCriteriaMet/CompletionsReached,Complete/CompletionsReached", "" },
	{ "single failed pod, not counted as the replacement pod creation is delayed", 2, 2,
	    INT32_MAX, UNSET, NULL, { { 0, "Failed", 0, UNSET, 0 } }, 1,
	    2, 0, 0, 0, "", "", "", "0:1:0,1:0:0" },
	{ "single failed pod replaced already", 2, 2, INT32_MAX, UNSET, NULL,
	    { { 0, "Failed", 0, UNSET, 0 }, { 0, "Pending", 1, UNSET, 0 } }, 2,
	    2, 1, 0, 0, "", "", "", "1:0:0" },
	{ "replacement pod creation delayed by per-index backoff while another index runs",
	    2, 2, INT32_MAX, UNSET, NULL,
	    { { 0, "Running", 0, UNSET, 0 }, { 1, "Failed", 0, 0, 1 } }, 2,
	    1, 0, 0, 0, "", "", "", "" },
	{ "single failed index due to exceeding the backoff limit per index, the job continues",
	    2, 2, INT32_MAX, UNSET, NULL, { { 0, "Failed", 1, UNSET, 0 } }, 1,
	    1, 1, 0, 0, "", "0", "", "1:0:0" },
	{ "single failed index due to FailIndex action, the job continues", 2, 2, INT32_MAX,
	    UNSET, "FailIndex", { { 0, "Failed", 0, 3, 0 } }, 1,
	    1, 1, 0, 0, "", "0", "", "1:0:0" },
	{ "job failed index due to FailJob action", 2, 2, 6, UNSET, "FailJob",
	    { { 0, "Failed", 0, 3, 0 } }, 1,
	    0, 1, 0, 0, "", "", "FailureTarget/PodFailurePolicy,Failed/PodFailurePolicy", "" },
	{ "job pod failure ignored due to matching Ignore action", 2, 2, 6, UNSET, "Ignore",
	    { { 0, "Failed", 0, 3, 0 } }, 1,
	    2, 0, 0, 0, "", "", "", "0:0:1,1:0:0" },
	{ "job failed due to exceeding backoffLimit before backoffLimitPerIndex", 2, 2, 1, UNSET,
	    NULL, { { 0, "Failed", 0, UNSET, 0 }, { 1, "Failed", 0, UNSET, 0 } }, 2,
	    0, 2, 0, 0, "", "",
	    "FailureTarget/BackoffLimitExceeded,Failed/BackoffLimitExceeded", "" },
	{ "job failed due to failed indexes", 2, 2, INT32_MAX, UNSET, NULL,
	    { { 0, "Failed", 1, UNSET, 0 }, { 1, "Succeeded", 0, UNSET, 0 } }, 2,
	    0, 1, 1, 0, "1", "0", "FailureTarget/FailedIndexes,Failed/FailedIndexes", "" },
	{ "job failed due to exceeding max failed indexes", 4, 4, INT32_MAX, 1, NULL,
	    { { 0, "Failed", 1, UNSET, 0 }, { 1, "Succeeded", 0, UNSET, 0 },
	    { 2, "Failed", 1, UNSET, 0 }, { 3, "Running", 0, UNSET, 0 } }, 4,
	    0, 3, 1, 1, "1", "0,2", "FailureTarget/MaxFailedIndexesExceeded", "" },
};

static cJSON *
per_index_job(const struct per_index_case *r)
{
	struct sync_case shape = { r->name, r->parallelism, r->completions, r->backoff_limit,
	    0, 0, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UNSET, 0, NULL, NULL };
	cJSON *job = job_new(&shape), *spec = json_child_object(job, "spec");

	json_set(spec, "completionMode", cJSON_CreateString("Indexed"));
	json_set(spec, "backoffLimitPerIndex", cJSON_CreateNumber(1));
	if (r->max_failed != UNSET)
		json_set(spec, "maxFailedIndexes", cJSON_CreateNumber(r->max_failed));
	if (r->policy != NULL) {
		char *text = xasprintf("{\"rules\":[{\"action\":\"%s\",\"onExitCodes\":{"
		    "\"operator\":\"In\",\"values\":[3]}}]}", r->policy);

		json_set(spec, "podFailurePolicy", fixture_parse(text));
		free(text);
	}
	return job;
}

static cJSON *
per_index_pod(int n, const struct index_pod *ip)
{
	cJSON *pod = job_pod_new(n, ip->phase, 0, 0);
	cJSON *ann = json_child_object(json_child_object(pod, "metadata"), "annotations");
	char text[32];

	snprintf(text, sizeof text, "%d", ip->index);
	json_set(ann, "batch.kubernetes.io/job-completion-index", cJSON_CreateString(text));
	snprintf(text, sizeof text, "%d", ip->failures);
	json_set(ann, "batch.kubernetes.io/job-index-failure-count", cJSON_CreateString(text));
	if (ip->exit_code != UNSET) {
		char *status = xasprintf("[{\"name\":\"x\",\"state\":{\"terminated\":{"
		    "\"exitCode\":%d,\"finishedAt\":\"%s\"}}}]", ip->exit_code,
		    ip->finished_now ? "2026-01-01T00:00:00Z" : "2025-12-31T23:40:00Z");

		json_set(json_child_object(pod, "status"), "containerStatuses",
		    fixture_parse(status));
		free(status);
	}
	return pod;
}

static void
per_index_case(void **state)
{
	struct ctl_world *w = *state;
	const struct per_index_case *r = w->row;
	const struct resource *pods = resource_find("pods"), *jobs = resource_find("jobs");
	cJSON *status = NULL, *job;
	struct buf created, conditions;
	int rv = 1, first = 1;
	const cJSON *c;

	buf_init(&created);
	buf_init(&conditions);
	ctl_cache(w, jobs, per_index_job(r));
	for (int i = 0; i < r->npods; i++)
		ctl_cache(w, pods, per_index_pod(i, &r->pods[i]));
	for (int round = 0; round < 6; round++) {
		const struct action *st = NULL;
		int writes = 0;
		char text[16];

		ctl_sync(w, "default/foobar", NOW);
		for (int i = 0; first && i < w->result.nmanage; i++) {
			const struct action *a = &w->result.manage[i];
			const cJSON *ann = json_path(a->body, "metadata.annotations");
			const cJSON *ignored;

			if (a->type != ACTION_CREATE)
				continue;
			ignored = cJSON_GetObjectItemCaseSensitive(ann,
			    "batch.kubernetes.io/job-index-ignored-failure-count");
			buf_printf(&created, "%s%s:%s:%s", created.len > 0 ? "," : "",
			    cJSON_GetObjectItemCaseSensitive(ann,
			    "batch.kubernetes.io/job-completion-index")->valuestring,
			    cJSON_GetObjectItemCaseSensitive(ann,
			    "batch.kubernetes.io/job-index-failure-count")->valuestring,
			    ignored != NULL ? ignored->valuestring : "0");
		}
		first = 0;
		for (int i = 0; i < w->result.nwrites; i++) {
			const struct action *a = &w->result.writes[i];

			if (a->type == ACTION_UPDATE_STATUS) {
				st = a;
				continue;
			}
			assert_int_equal(a->type, ACTION_PATCH);
			apply_patch(w, a);
			writes++;
		}
		if (st == NULL)
			st = w->result.status;
		if (st == NULL && writes == 0)
			break;
		if (st != NULL) {
			cJSON_Delete(status);
			status = cJSON_Duplicate(json_path(st->body, "status"), 1);
			job = cJSON_Duplicate(st->body, 1);
			snprintf(text, sizeof text, "%d", ++rv);
			json_set(json_child_object(job, "metadata"), "resourceVersion",
			    cJSON_CreateString(text));
			ctl_cache(w, jobs, job);
		}
		if (round == 5)
			fail_msg("%s: still writing after 6 syncs", r->name);
	}
	assert_non_null(status);
	assert_string_equal(created.data != NULL ? created.data : "", r->created);
	assert_int_equal(json_int(status, "active", 0), r->want_active);
	assert_int_equal(json_int(status, "failed", 0), r->want_failed);
	assert_int_equal(json_int(status, "succeeded", 0), r->want_succeeded);
	assert_int_equal(json_int(status, "terminating", -1), r->want_terminating);
	assert_string_equal(json_string(status, "completedIndexes"), r->want_completed);
	assert_true(cJSON_IsString(json_path(status, "failedIndexes")));
	assert_string_equal(json_string(status, "failedIndexes"), r->want_failed_indexes);
	cJSON_ArrayForEach(c, json_path(status, "conditions")) {
		if (strcmp(json_string(c, "status"), "True") == 0)
			buf_printf(&conditions, "%s%s/%s", conditions.len > 0 ? "," : "",
			    json_string(c, "type"), json_string(c, "reason"));
	}
	assert_string_equal(conditions.data != NULL ? conditions.data : "",
	    r->want_conditions);
	buf_free(&created);
	buf_free(&conditions);
	cJSON_Delete(status);
}

/* Plays the executor's success for every write of the last sync: the counters it adds to,
 * then the end of the key's processing. */
static void
writes_succeed(struct ctl_world *w, const char *key)
{
	struct action *all[64];
	int n = 0;

	for (int i = 0; i < w->result.nmanage && n < 64; i++)
		all[n++] = &w->result.manage[i];
	for (int i = 0; i < w->result.nwrites && n < 64; i++)
		all[n++] = &w->result.writes[i];
	if (w->result.status != NULL)
		all[n++] = w->result.status;
	for (int i = 0; i < n; i++) {
		metrics_counter_add(all[i]->count_done, 1);
		for (int k = 0; k < ACTION_ADD_DONE; k++)
			metrics_counter_add(all[i]->add_done[k], all[i]->add_by[k]);
	}
	w->c->type->processed(w->c, key, 0.01, 0);
}

/* kube's job_controller_* metrics: a Job of 2 completions whose pods are created, both
 * succeed and are counted, and the Job completes; then an Indexed Job with
 * backoffLimitPerIndex whose index 0 fails while index 1 succeeds (kube's "job failed due
 * to failed indexes" row). */
static void
metrics(void **state)
{
	struct metrics_registry *registry = metrics_registry_new();
	struct controller_config config = { NULL, NULL, registry };
	struct ctl_world *w = ctl_world_new(&job_controller_type, &config);
	const struct per_index_case *r = &per_index_cases[9];
	static const char *const want[] = {	/* labels sorted, as metrics_render prints them */
		"job_controller_job_pods_creation_total{reason=\"new\",status=\"succeeded\"} 2\n",
		"job_controller_job_pods_finished_total{completion_mode=\"NonIndexed\","
		    "result=\"succeeded\"} 2\n",
		"job_controller_jobs_finished_total{completion_mode=\"NonIndexed\","
		    "reason=\"CompletionsReached\",result=\"succeeded\"} 1\n",
		"job_controller_job_syncs_total{action=\"pods_created\","
		    "completion_mode=\"NonIndexed\",result=\"success\"} 1\n",
		"job_controller_job_finished_indexes_total{backoffLimit=\"perIndex\","
		    "status=\"failed\"} 1\n",
		"job_controller_job_finished_indexes_total{backoffLimit=\"perIndex\","
		    "status=\"succeeded\"} 1\n",
		"job_controller_job_pods_finished_total{completion_mode=\"Indexed\","
		    "result=\"failed\"} 1\n",
		"job_controller_jobs_finished_total{completion_mode=\"Indexed\","
		    "reason=\"FailedIndexes\",result=\"failed\"} 1\n",
		"job_controller_job_sync_duration_seconds_count{action=\"reconciling\","
		    "completion_mode=\"Indexed\",result=\"success\"} ",
	};
	struct buf text;
	int rv = 1;

	(void)state;
	assert_string_equal(r->name, "job failed due to failed indexes");
	for (int round = 0; round < 2; round++) {
		const struct sync_case *c = &sync_cases[0];
		cJSON *job = round == 0 ? job_new(c) : per_index_job(r);

		if (round == 0) {
			json_set(json_child_object(job, "spec"), "completions",
			    cJSON_CreateNumber(2));
			ctl_cache(w, resource_find("jobs"), job);
			ctl_sync(w, "default/foobar", NOW);
			assert_int_equal(w->result.nmanage, 2);
			writes_succeed(w, "default/foobar");
			for (int i = 0; i < 2; i++)
				ctl_cache(w, resource_find("pods"),
				    job_pod_new(i, "Succeeded", 0, 0));
		} else {
			json_set(json_child_object(job, "metadata"), "name",
			    cJSON_CreateString("indexed"));
			json_set(json_child_object(job, "metadata"), "uid",
			    cJSON_CreateString("uid-indexed"));
			ctl_cache(w, resource_find("jobs"), job);
			for (int i = 0; i < r->npods; i++) {
				cJSON *pod = per_index_pod(10 + i, &r->pods[i]);
				cJSON *ref = cJSON_GetArrayItem(json_path(pod,
				    "metadata.ownerReferences"), 0);

				json_set(ref, "uid", cJSON_CreateString("uid-indexed"));
				json_set(ref, "name", cJSON_CreateString("indexed"));
				ctl_cache(w, resource_find("pods"), pod);
			}
		}
		for (int i = 0; i < 6; i++) {
			const char *key = round == 0 ? "default/foobar" : "default/indexed";
			struct action *st;

			ctl_sync(w, key, NOW);
			st = w->result.status;
			for (int k = 0; k < w->result.nwrites; k++) {
				if (w->result.writes[k].type == ACTION_PATCH)
					apply_patch(w, &w->result.writes[k]);
				else
					st = &w->result.writes[k];
			}
			writes_succeed(w, key);
			if (st == NULL && w->result.nwrites == 0)
				break;
			if (st != NULL) {
				cJSON *next = cJSON_Duplicate(st->body, 1);
				char number[16];

				snprintf(number, sizeof number, "%d", ++rv);
				json_set(json_child_object(next, "metadata"), "resourceVersion",
				    cJSON_CreateString(number));
				ctl_cache(w, resource_find("jobs"), next);
			}
		}
	}
	buf_init(&text);
	metrics_render(registry, &text);
	for (size_t i = 0; i < NELEM(want); i++)
		if (strstr(text.data, want[i]) == NULL)
			fail_msg("no %s", want[i]);
	buf_free(&text);
	ctl_world_free(w);
	metrics_registry_free(registry);
}

/* kube's TestGetIndexFailureCount, as data. */
static void
index_failure_count(void **state)
{
	static const struct {
		const char *text;	/* NULL: no annotation */
		long long want;
	} cases[] = {
		{ NULL, 0 }, { "2", 2 }, { "2147483647", 2147483647LL }, { "2147483648", 0 },
		{ "-1", 0 }, { "xyz", 0 }, { "", 0 }, { " 1", 0 }, { "1 ", 0 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		long long got = job_index_failure_count(cases[i].text);

		if (got != cases[i].want)
			fail_msg("\"%s\": %lld, want %lld", cases[i].text ? cases[i].text : "(none)",
			    got, cases[i].want);
	}
}

/* kube's TestGetRemainingTime and backoff cases: 10 s doubling, at most 10 min. */
static void
backoff(void **state)
{
	static const struct {
		int failures;
		double since_last, want;
	} cases[] = {
		{ 0, 0, 0 },
		{ 1, 0, 10 },
		{ 1, 4, 6 },
		{ 1, 11, 0 },
		{ 2, 0, 20 },
		{ 3, 5, 35 },
		{ 7, 0, 600 },
		{ 30, 0, 600 },
		{ 30, 601, 0 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		double got = job_backoff_remaining(cases[i].failures, NOW - cases[i].since_last,
		    NOW);
		if (got != cases[i].want)
			fail_msg("%d failures, %.0f s ago: %.1f, want %.1f", cases[i].failures,
			    cases[i].since_last, got, cases[i].want);
	}
}

/* The pod created: the template's labels, generateName, the controller reference, the
 * tracking finalizer. */
static void
pod_created(void **state)
{
	struct ctl_world *w = *state;
	const cJSON *pod;
	const cJSON *f;
	int tracked = 0;

	ctl_cache(w, resource_find("jobs"), job_new(&sync_cases[0]));
	ctl_sync(w, "default/foobar", NOW);
	assert_int_equal(w->result.nmanage, 2);
	pod = w->result.manage[0].body;
	assert_string_equal(json_string(pod, "metadata.generateName"), "foobar-");
	assert_string_equal(json_string(cJSON_GetArrayItem(json_path(pod,
	    "metadata.ownerReferences"), 0), "uid"), "uid-job");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(json_path(pod, "metadata.labels"),
	    "batch.kubernetes.io/job-name")->valuestring, "foobar");
	cJSON_ArrayForEach(f, json_path(pod, "metadata.finalizers"))
		tracked |= strcmp(f->valuestring, "batch.kubernetes.io/job-tracking") == 0;
	assert_true(tracked);
	assert_string_equal(w->result.manage[0].done_reason, "SuccessfulCreate");
}

/* A Job managed elsewhere, or finished, is left alone. */
static void
left_alone(void **state)
{
	struct ctl_world *w = *state;
	cJSON *job = job_new(&sync_cases[0]);

	json_set(json_child_object(job, "spec"), "managedBy",
	    cJSON_CreateString("example.com/other"));
	ctl_cache(w, resource_find("jobs"), job);
	ctl_sync(w, "default/foobar", NOW);
	assert_int_equal(w->result.nmanage, 0);
	assert_null(w->result.status);
	assert_int_equal(w->result.nwrites, 0);
}

/* kube's interval strings of completed indexes, both ways. */
static void
index_intervals(void **state)
{
	static const struct {
		const char *text;
		int completions;
		const char *done;	/* '1' per index done */
		const char *formatted;
	} cases[] = {
		{ "", 5, "00000", "" },
		{ "0", 5, "10000", "0" },
		{ "0,1", 5, "11000", "0,1" },
		{ "0-2", 5, "11100", "0-2" },
		{ "0,2-4,7", 10, "1011100100", "0,2-4,7" },
		{ "1-5", 3, "011", "1,2" },
		{ "a,2", 3, "001", "2" },
		{ "5", 3, "000", "" },
		{ "0,1,2,3", 5, "11110", "0-3" },
		{ "-1,1", 3, "010", "1" },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		char done[16] = { 0 }, got[16] = { 0 }, *text;

		job_indexes_parse(cases[i].text, cases[i].completions, done);
		for (int k = 0; k < cases[i].completions; k++)
			got[k] = done[k] ? '1' : '0';
		if (strcmp(got, cases[i].done) != 0)
			fail_msg("parse \"%s\": %s, want %s", cases[i].text, got, cases[i].done);
		text = job_indexes_format(done, cases[i].completions);
		if (strcmp(text, cases[i].formatted) != 0)
			fail_msg("format of \"%s\": \"%s\", want \"%s\"", cases[i].text, text,
			    cases[i].formatted);
		free(text);
	}
	assert_int_equal(job_completion_index("3"), 3);
	assert_int_equal(job_completion_index("+3"), 3);
	assert_int_equal(job_completion_index("-3"), -1);
	assert_int_equal(job_completion_index("x"), -1);
	assert_int_equal(job_completion_index(""), -1);
	assert_int_equal(job_completion_index("99999999999"), -1);
}

/* kube's "indexed job start": the first pods are those of indexes 0 and 1, each with its
 * annotation and label, hostname, JOB_COMPLETION_INDEX and name. */
static void
indexed_start(void **state)
{
	struct ctl_world *w = *state;
	cJSON *job = job_new(&sync_cases[0]);

	json_set(json_child_object(job, "spec"), "completionMode",
	    cJSON_CreateString("Indexed"));
	ctl_cache(w, resource_find("jobs"), job);
	ctl_sync(w, "default/foobar", NOW);
	assert_int_equal(w->result.nmanage, 2);
	for (int i = 0; i < 2; i++) {
		const cJSON *pod = w->result.manage[i].body;
		const cJSON *env = cJSON_GetArrayItem(json_path(pod, "spec.containers"), 0);
		char want[16];

		snprintf(want, sizeof want, "%d", i);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(json_path(pod,
		    "metadata.annotations"), "batch.kubernetes.io/job-completion-index")->valuestring,
		    want);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(json_path(pod,
		    "metadata.labels"), "batch.kubernetes.io/job-completion-index")->valuestring,
		    want);
		snprintf(want, sizeof want, "foobar-%d", i);
		assert_string_equal(json_string(pod, "spec.hostname"), want);
		snprintf(want, sizeof want, "foobar-%d-", i);
		assert_string_equal(json_string(pod, "metadata.generateName"), want);
		env = cJSON_GetArrayItem(json_path(env, "env"), 0);
		assert_string_equal(json_string(env, "name"), "JOB_COMPLETION_INDEX");
		assert_string_equal(json_string(env, "valueFrom.fieldRef.fieldPath"),
		    "metadata.labels['batch.kubernetes.io/job-completion-index']");
	}
}

/* An Indexed Job of 3 with index 0 succeeded and index 1 running: index 0 recorded in
 * completedIndexes (before its finalizer goes), succeeded 1, index 2 created; a second pod
 * of index 1 is deleted. */
static void
indexed_progress(void **state)
{
	struct ctl_world *w = *state;
	static const struct sync_case shape = { "indexed", 3, 3, 6, 0, 0, NULL, NULL,
	    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UNSET, 0, NULL, NULL };
	cJSON *job = job_new(&shape), *pod;
	const char *phases[] = { "Succeeded", "Running", "Running" };
	const int indexes[] = { 0, 1, 1 };
	int created = -1, deleted = 0, patched = 0;

	json_set(json_child_object(job, "spec"), "completionMode",
	    cJSON_CreateString("Indexed"));
	ctl_cache(w, resource_find("jobs"), job);
	for (int i = 0; i < 3; i++) {
		char ix[8];

		pod = job_pod_new(i, phases[i], i == 1, 0);
		snprintf(ix, sizeof ix, "%d", indexes[i]);
		json_set(json_child_object(json_child_object(pod, "metadata"), "annotations"),
		    "batch.kubernetes.io/job-completion-index", cJSON_CreateString(ix));
		ctl_cache(w, resource_find("pods"), pod);
	}
	ctl_sync(w, "default/foobar", NOW);
	/* First the status with index 0 recorded, then its finalizer, and the duplicate of
	 * index 1 (not ready) deleted. */
	assert_true(w->result.nwrites >= 2);
	assert_int_equal(w->result.writes[w->result.nwrites - 2].type, ACTION_UPDATE_STATUS);
	{
		const cJSON *st = json_path(w->result.writes[w->result.nwrites - 2].body,
		    "status");
		assert_string_equal(json_string(st, "completedIndexes"), "0");
		assert_int_equal(json_int(st, "succeeded", 0), 1);
		assert_null(json_path(st, "uncountedTerminatedPods.succeeded"));
	}
	assert_string_equal(w->result.writes[w->result.nwrites - 1].name, "pod-0");
	for (int i = 0; i < w->result.nmanage; i++) {
		if (w->result.manage[i].type == ACTION_DELETE) {
			deleted++;
			assert_string_equal(w->result.manage[i].name, "pod-2");
		}
	}
	assert_int_equal(deleted, 1);
	for (int i = 0; i < w->result.nwrites; i++)
		patched += w->result.writes[i].type == ACTION_PATCH;
	assert_int_equal(patched, 2);	/* pod-0 counted, pod-2 deleted uncounted */
	(void)created;
}

/* kube's TestMatchPodFailurePolicy, as data: a rule list, a failed pod's statuses, the
 * action and FailJob's message. */
static void
pod_failure_policy(void **state)
{
	static const struct {
		const char *name;
		const char *rules;
		const char *status;	/* the pod's status members */
		enum job_failure_action want;
		const char *message;	/* NULL: none */
	} cases[] = {
		{ "unknown action for rule matching by exit codes - skip rule with unknown action",
		    "[{\"action\":\"UnknownAction\",\"onExitCodes\":{\"operator\":\"In\","
		    "\"values\":[1,2]}},{\"action\":\"FailJob\",\"onExitCodes\":{"
		    "\"operator\":\"In\",\"values\":[2,3]}}]",
		    "\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{"
		    "\"terminated\":{\"exitCode\":2}}}]", JOB_FAILURE_FAIL_JOB,
		    "Container main-container for pod default/mypod failed with exit code 2 "
		    "matching FailJob rule at index 1" },
		{ "ignore rule matched for exit codes",
		    "[{\"action\":\"Ignore\",\"onExitCodes\":{\"operator\":\"In\","
		    "\"values\":[1,2,3]}}]",
		    "\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{"
		    "\"terminated\":{\"exitCode\":2}}}]", JOB_FAILURE_IGNORE, NULL },
		{ "FailJob rule matched for exit codes",
		    "[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\","
		    "\"values\":[1,2,3]}}]",
		    "\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{"
		    "\"terminated\":{\"exitCode\":2}}}]", JOB_FAILURE_FAIL_JOB,
		    "Container main-container for pod default/mypod failed with exit code 2 "
		    "matching FailJob rule at index 0" },
		{ "successful containers are skipped by the rules",
		    "[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"NotIn\","
		    "\"values\":[111]}}]",
		    "\"initContainerStatuses\":[{\"name\":\"init-container\",\"state\":{"
		    "\"terminated\":{\"exitCode\":0}}}],\"containerStatuses\":[{\"name\":"
		    "\"main-container\",\"state\":{\"terminated\":{\"exitCode\":111}}},"
		    "{\"name\":\"suppport-container\",\"state\":{\"terminated\":{"
		    "\"exitCode\":0}}}]", JOB_FAILURE_NONE, NULL },
		{ "FailJob rule matched for exit codes in init container",
		    "[{\"action\":\"FailJob\",\"onExitCodes\":{\"containerName\":"
		    "\"init-container\",\"operator\":\"In\",\"values\":[1,2,3]}}]",
		    "\"initContainerStatuses\":[{\"name\":\"init-container\",\"state\":{"
		    "\"terminated\":{\"exitCode\":2}}}]", JOB_FAILURE_FAIL_JOB,
		    "Container init-container for pod default/mypod failed with exit code 2 "
		    "matching FailJob rule at index 0" },
		{ "no match for exit codes, rule for another container",
		    "[{\"action\":\"FailJob\",\"onExitCodes\":{\"containerName\":"
		    "\"other\",\"operator\":\"In\",\"values\":[2]}}]",
		    "\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{"
		    "\"terminated\":{\"exitCode\":2}}}]", JOB_FAILURE_NONE, NULL },
		{ "NotIn operator: 1 not in (2,3) matches",
		    "[{\"action\":\"Count\",\"onExitCodes\":{\"operator\":\"NotIn\","
		    "\"values\":[2,3]}}]",
		    "\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{"
		    "\"terminated\":{\"exitCode\":1}}}]", JOB_FAILURE_COUNT, NULL },
		{ "ignore rule matched for pod conditions",
		    "[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":"
		    "\"DisruptionTarget\",\"status\":\"True\"}]}]",
		    "\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]",
		    JOB_FAILURE_IGNORE, NULL },
		{ "no match for pod conditions of another status",
		    "[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":"
		    "\"DisruptionTarget\",\"status\":\"True\"}]}]",
		    "\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"False\"}]",
		    JOB_FAILURE_NONE, NULL },
		{ "FailJob rule matched for pod conditions",
		    "[{\"action\":\"FailJob\",\"onPodConditions\":[{\"type\":"
		    "\"DisruptionTarget\",\"status\":\"True\"}]}]",
		    "\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]",
		    JOB_FAILURE_FAIL_JOB, "Pod default/mypod has condition DisruptionTarget "
		    "matching FailJob rule at index 0" },
		{ "first rule matched wins",
		    "[{\"action\":\"Count\",\"onPodConditions\":[{\"type\":"
		    "\"DisruptionTarget\",\"status\":\"True\"}]},{\"action\":\"Ignore\","
		    "\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":"
		    "\"True\"}]}]",
		    "\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]",
		    JOB_FAILURE_COUNT, NULL },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		char *text = xasprintf("{\"rules\":%s}", cases[i].rules), *message = NULL;
		cJSON *policy = fixture_parse(text), *pod;
		enum job_failure_action got;

		free(text);
		text = xasprintf("{\"metadata\":{\"name\":\"mypod\",\"namespace\":\"default\"},"
		    "\"status\":{\"phase\":\"Failed\",%s}}", cases[i].status);
		pod = fixture_parse(text);
		free(text);
		got = job_match_pod_failure_policy(policy, pod, &message);
		if (got != cases[i].want)
			fail_msg("%s: action %d, want %d", cases[i].name, got, cases[i].want);
		if (cases[i].message == NULL ? message != NULL :
		    message == NULL || strcmp(message, cases[i].message) != 0)
			fail_msg("%s: message \"%s\", want \"%s\"", cases[i].name,
			    message != NULL ? message : "(none)",
			    cases[i].message != NULL ? cases[i].message : "(none)");
		free(message);
		cJSON_Delete(policy);
		cJSON_Delete(pod);
	}
}

/* kube's TestMatchSuccessPolicy, as data (completions 10): succeeded indexes as an interval
 * string, the rules, the message when met. */
static void
success_policy(void **state)
{
	static const struct {
		const char *succeeded;
		const char *rules;	/* NULL: no successPolicy */
		const char *message;	/* NULL: not met */
	} cases[] = {
		{ "0", NULL, NULL },
		{ "0", "[{\"succeededIndexes\":\"invalid-form\"}]", NULL },
		{ "0-2,4-7", "[{\"succeededIndexes\":\"0-2\"}]", "Matched rules at index 0" },
		{ "0-2", "[{\"succeededIndexes\":\"3\"}]", NULL },
		{ "0-2", "[{\"succeededCount\":2}]", "Matched rules at index 0" },
		{ "0-2", "[{\"succeededCount\":4}]", NULL },
		{ "0-2,4-7", "[{\"succeededIndexes\":\"9\"},{\"succeededIndexes\":\"4,6\"}]",
		    "Matched rules at index 1" },
		{ "0-2,4-7", "[{\"succeededIndexes\":\"0,1\"},{\"succeededIndexes\":\"5\"}]",
		    "Matched rules at index 0" },
		{ "0-2,4-7", "[{\"succeededIndexes\":\"3-6\",\"succeededCount\":2}]",
		    "Matched rules at index 0" },
		{ "0-2,6,7", "[{\"succeededIndexes\":\"3-6\",\"succeededCount\":2}]", NULL },
		{ "", "[{\"succeededCount\":4}]", NULL },
		{ "1-9", "[{\"succeededIndexes\":\"2-4,6-8\"}]", "Matched rules at index 0" },
		{ "2-4,6-9", "[{\"succeededIndexes\":\"2-4,6-9\"}]", "Matched rules at index 0" },
		{ "2-5,7-15", "[{\"succeededIndexes\":\"2-4,8-12\"}]",
		    "Matched rules at index 0" },
		{ "1-3", "[{\"succeededIndexes\":\"\"}]", NULL },
		{ "", "[{\"succeededIndexes\":\"\"}]", NULL },
		{ "1-3,5-7", "[{\"succeededIndexes\":\"10-12,14-16\"}]", NULL },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		char done[10] = { 0 }, *message = NULL, *text;
		cJSON *policy = NULL;
		int met;

		job_indexes_parse(cases[i].succeeded, 10, done);
		if (cases[i].rules != NULL) {
			text = xasprintf("{\"rules\":%s}", cases[i].rules);
			policy = fixture_parse(text);
			free(text);
		}
		met = job_match_success_policy(policy, 10, done, &message);
		if (met != (cases[i].message != NULL) || (met &&
		    strcmp(message, cases[i].message) != 0))
			fail_msg("\"%s\" against %s: %s", cases[i].succeeded,
			    cases[i].rules != NULL ? cases[i].rules : "none",
			    met ? message : "not met");
		free(message);
		cJSON_Delete(policy);
	}
}

/* activeDeadlineSeconds: before it, the Job is synced again when it passes; past it,
 * FailureTarget (DeadlineExceeded) and, with no pod terminating, Failed at once. */
static void
active_deadline(void **state)
{
	struct ctl_world *w = *state;
	char start[TIME_RFC3339_SIZE], *status;
	cJSON *job;
	struct sync_case shape = sync_cases[0];

	time_format_rfc3339((time_t)(NOW - 4), start);
	status = xasprintf("{\"startTime\":\"%s\"}", start);
	shape.status = status;
	job = job_new(&shape);
	json_set(json_child_object(job, "spec"), "activeDeadlineSeconds",
	    cJSON_CreateNumber(10));
	ctl_cache(w, resource_find("jobs"), cJSON_Duplicate(job, 1));
	ctl_sync(w, "default/foobar", NOW);
	assert_true(w->result.requeue_after == 6);
	assert_int_equal(w->result.nmanage, 2);		/* still running: its pods made */
	ctl_sync(w, "default/foobar", NOW + 10);
	assert_int_equal(w->result.nmanage, 0);
	assert_non_null(w->result.status);
	{
		const cJSON *c = cJSON_GetArrayItem(json_path(w->result.status->body,
		    "status.conditions"), 0);
		assert_string_equal(json_string(c, "type"), "FailureTarget");
		assert_string_equal(json_string(c, "reason"), "DeadlineExceeded");
		assert_string_equal(json_string(c, "message"),
		    "Job was active longer than specified deadline");
	}
	{
		/* No pod left terminating: Failed in the same sync, as kube's. */
		const cJSON *c = cJSON_GetArrayItem(json_path(w->result.status->body,
		    "status.conditions"), 1);
		assert_string_equal(json_string(c, "type"), "Failed");
		assert_string_equal(json_string(c, "reason"), "DeadlineExceeded");
	}
	assert_int_equal(w->result.nevents, 1);
	assert_string_equal(w->result.events[0].reason, "DeadlineExceeded");
	json_set(job, "status", cJSON_Duplicate(json_path(w->result.status->body, "status"), 1));
	json_set(json_child_object(job, "metadata"), "resourceVersion", cJSON_CreateString("2"));
	ctl_cache(w, resource_find("jobs"), job);
	ctl_sync(w, "default/foobar", NOW + 11);
	assert_null(w->result.status);		/* finished: left alone */
	assert_int_equal(w->result.nmanage, 0);
	free(status);
}

/* kube's TestGetPodsForJob as data: which pods a Job claims (adopting the orphans its
 * selector matches, with the tracking finalizer; releasing its own it no longer matches),
 * seen through the sync: Running, the pods it counts leave nothing to create or delete
 * for a parallelism of their number; Succeeded, those it counts as tracked go into
 * uncountedTerminatedPods. */
static const struct claim_case {
	const char *name;
	int deleting;
	/* Each pod: its name, then o (the Job's), x (another Job's), n (no owner), then l
	 * (the Job's labels), - (none), then f (the tracking finalizer) or -. */
	const char *pods[4];
	const char *want_pods;		/* counted, by name */
	const char *want_finalizer;	/* counted as tracked */
	const char *claims;		/* "adopt pod2", "release pod2" */
} claim_cases[] = {
	{ "claiming: only matching", 0, { "pod1 olf", "pod2 xl-", "pod3 n--", "pod4 ol-" },
	    "pod1 pod4", "pod1", "" },
	{ "claiming: adopt", 0, { "pod1 ol-", "pod2 nl-", "pod3 xl-" }, "pod1 pod2", "pod2",
	    "adopt pod2" },
	{ "claiming: no adopt when deleting", 1, { "pod1 ol-", "pod2 nl-" }, "pod1", "", "" },
	{ "claiming: release", 0, { "pod1 ol-", "pod2 o--" }, "pod1", "", "release pod2" },
};

static cJSON *
claim_pod_new(const char *spec, const char *phase)
{
	char name[8];
	const char *shape = strchr(spec, ' ') + 1;
	struct buf b;
	cJSON *pod;

	snprintf(name, sizeof name, "%.*s", (int)(shape - 1 - spec), spec);
	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
	    "\"namespace\":\"default\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\"", name,
	    name);
	if (shape[2] == 'f')
		buf_append_str(&b, ",\"finalizers\":[\"batch.kubernetes.io/job-tracking\"]");
	if (shape[1] == 'l')
		buf_append_str(&b, ",\"labels\":{\"batch.kubernetes.io/controller-uid\":"
		    "\"uid-job\"}");
	if (shape[0] != 'n')
		buf_printf(&b, ",\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":"
		    "\"Job\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true}]",
		    shape[0] == 'o' ? "foobar" : "other", shape[0] == 'o' ? "uid-job" :
		    "uid-other");
	buf_printf(&b, "},\"spec\":{\"containers\":[{\"name\":\"c\"}]},\"status\":{"
	    "\"phase\":\"%s\"}}", phase);
	pod = fixture_parse(b.data);
	buf_free(&b);
	return pod;
}

static int
count_words(const char *s)
{
	int n = 0;

	for (const char *p = s; *p != '\0'; p++)
		n += *p != ' ' && (p == s || p[-1] == ' ');
	return n;
}

static void
claim_case(void **state)
{
	const struct claim_case *r = *state;
	struct sync_case shape = sync_cases[0];
	const struct resource *pods = resource_find("pods"), *jobs = resource_find("jobs");

	for (int succeeded = 0; succeeded < 2; succeeded++) {
		struct ctl_world *w = ctl_world_new(&job_controller_type, NULL);
		struct buf claims, tracked;
		const cJSON *uid;

		shape.deleting = r->deleting;
		shape.parallelism = count_words(r->want_pods);
		shape.completions = 6;
		ctl_cache(w, jobs, job_new(&shape));
		ctl_cache(w, jobs, fixture_parse("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
		    "\"metadata\":{\"name\":\"other\",\"namespace\":\"default\",\"uid\":"
		    "\"uid-other\",\"resourceVersion\":\"1\"},\"spec\":{\"selector\":{"
		    "\"matchLabels\":{\"batch.kubernetes.io/controller-uid\":\"uid-other\"}},"
		    "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}}"));
		for (int i = 0; i < 4 && r->pods[i] != NULL; i++)
			ctl_cache(w, pods, claim_pod_new(r->pods[i], succeeded ? "Succeeded" :
			    "Running"));
		ctl_sync(w, "default/foobar", NOW);
		buf_init(&claims);
		for (int i = 0; i < w->result.nclaims; i++) {
			const struct action *a = &w->result.claims[i];
			const cJSON *list = json_path(a->body, strcmp(a->verb, "adopt") == 0 ?
			    "metadata.finalizers" : "metadata.$deleteFromPrimitiveList/finalizers");

			buf_printf(&claims, "%s%s %s", i > 0 ? "; " : "", a->verb, a->name);
			assert_string_equal(json_string(cJSON_GetArrayItem(list, 0), ""),
			    "batch.kubernetes.io/job-tracking");
		}
		assert_string_equal(claims.data != NULL ? claims.data : "", r->claims);
		assert_int_equal(w->result.recheck_owner, strstr(r->claims, "adopt") != NULL);
		if (!succeeded) {
			/* The counted pods are as many as the parallelism asks. */
			assert_int_equal(w->result.nmanage, 0);
		} else {
			const struct action *st = w->result.status;

			/* The uncounted pods are written first, before their finalizers go. */
			for (int i = 0; i < w->result.nwrites; i++)
				if (w->result.writes[i].type == ACTION_UPDATE_STATUS)
					st = &w->result.writes[i];
			buf_init(&tracked);
			cJSON_ArrayForEach(uid, json_path(st != NULL ? st->body : NULL,
			    "status.uncountedTerminatedPods.succeeded"))
				buf_printf(&tracked, "%s%s", tracked.len > 0 ? " " : "",
				    uid->valuestring + 4);
			assert_string_equal(tracked.data != NULL ? tracked.data : "",
			    r->want_finalizer);
			buf_free(&tracked);
		}
		buf_free(&claims);
		ctl_world_free(w);
	}
}

/* An orphan added or relabelled: the Jobs whose selectors match it look at it; one the
 * Job has just released: that Job looks again. */
static void
orphan_events(void **state)
{
	struct ctl_world *w = ctl_world_new(&job_controller_type, NULL);
	const struct resource *pods = resource_find("pods");
	struct sync_case shape = sync_cases[0];
	cJSON *pod;

	(void)state;
	ctl_cache(w, resource_find("jobs"), job_new(&shape));
	pod = claim_pod_new("pod1 nl-", "Running");
	ctl_cache(w, pods, cJSON_Duplicate(pod, 1));
	ctl_tell(w, INFORMER_ADDED, pods, cJSON_Duplicate(pod, 1), NULL);
	ctl_keys_expect(w, "default/foobar");
	ctl_tell(w, INFORMER_ADDED, pods, claim_pod_new("pod2 n--", "Running"), NULL);
	ctl_keys_expect(w, "");
	/* Released: the old body names the Job, the new one nothing, labels gone. */
	ctl_tell(w, INFORMER_UPDATED, pods, claim_pod_new("pod3 n--", "Running"),
	    claim_pod_new("pod3 ol-", "Running"));
	ctl_keys_expect(w, "default/foobar");
	cJSON_Delete(pod);
	ctl_world_free(w);
}

/* A pod of a Job that is gone (kube's cleanupPodFinalizers and syncOrphanPod): its event
 * queues the Job's key, whose sync takes the tracking finalizer off; a pod without it, or
 * controlled by something else than a batch/v1 Job, is left alone. */
static cJSON *
gone_job_pod(const char *name, const char *kind, const char *api, int finalizer)
{
	char *text = xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
	    "\"uid\":\"uid-%s\",\"resourceVersion\":\"1\",%s\"ownerReferences\":"
	    "[{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"name\":\"gone\",\"uid\":"
	    "\"uid-gone\",\"controller\":true}]},\"spec\":{\"nodeName\":\"n\"},"
	    "\"status\":{\"phase\":\"Failed\"}}", name, name,
	    finalizer ? "\"finalizers\":[\"batch.kubernetes.io/job-tracking\"]," : "",
	    api, kind);
	cJSON *o = fixture_parse(text);

	free(text);
	return o;
}

/* A pod the garbage collector orphaned: no owner, the tracking finalizer, label key
 * naming job. */
static cJSON *
orphaned_pod(const char *name, const char *key, const char *job)
{
	char *text = xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
	    "\"uid\":\"uid-%s\",\"resourceVersion\":\"2\",\"labels\":{\"%s\":\"%s\"},"
	    "\"finalizers\":[\"batch.kubernetes.io/job-tracking\"]},\"spec\":{\"nodeName\":"
	    "\"n\"},\"status\":{\"phase\":\"Running\"}}", name, name, key, job);
	cJSON *o = fixture_parse(text);

	free(text);
	return o;
}

/* A Succeeded pod of Job foobar holding the tracking finalizer, deleted or not. */
static cJSON *
owned_pod(const char *name, int deleting)
{
	char *text = xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
	    "\"uid\":\"uid-%s\",\"resourceVersion\":\"1\",%s\"labels\":{"
	    "\"batch.kubernetes.io/controller-uid\":\"uid-job\"},\"finalizers\":"
	    "[\"batch.kubernetes.io/job-tracking\"],\"ownerReferences\":[{\"apiVersion\":"
	    "\"batch/v1\",\"kind\":\"Job\",\"name\":\"foobar\",\"uid\":\"uid-job\","
	    "\"controller\":true}]},\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":"
	    "\"Succeeded\"}}", name, name,
	    deleting ? "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"," : "");
	cJSON *o = fixture_parse(text);

	free(text);
	return o;
}

static void
gone_job_releases_its_pods(void **state)
{
	struct ctl_world *w = ctl_world_new(&job_controller_type, NULL);
	const struct resource *pods = resource_find("pods");

	(void)state;
	ctl_cache(w, pods, gone_job_pod("a", "Job", "batch/v1", 1));
	ctl_cache(w, pods, gone_job_pod("b", "Job", "batch/v1", 0));
	ctl_cache(w, pods, gone_job_pod("c", "CronJob", "batch/v1", 1));
	ctl_cache(w, pods, gone_job_pod("d", "Job", "example.com/v1", 1));
	ctl_tell(w, INFORMER_UPDATED, pods, gone_job_pod("a", "Job", "batch/v1", 1),
	    gone_job_pod("a", "Job", "batch/v1", 1));
	ctl_tell(w, INFORMER_UPDATED, pods, gone_job_pod("b", "Job", "batch/v1", 0),
	    gone_job_pod("b", "Job", "batch/v1", 1));
	ctl_tell(w, INFORMER_UPDATED, pods, gone_job_pod("d", "Job", "example.com/v1", 1),
	    NULL);
	ctl_keys_expect(w, "default/gone");
	ctl_sync(w, "default/gone", 0);
	assert_false(w->result.forget_expectations);	/* that would send nothing */
	assert_int_equal(w->result.nwrites, 1);
	assert_string_equal(w->result.writes[0].verb, "remove-finalizer");
	assert_string_equal(w->result.writes[0].name, "a");
	assert_string_equal(w->result.writes[0].uid, "uid-a");
	assert_non_null(json_path(w->result.writes[0].body,
	    "metadata.$deleteFromPrimitiveList/finalizers"));
	/* a restart lists the gone Job's key too (its pods' events came before) */
	ctl_keys_clear(w);
	ctl_list_keys(w);
	ctl_keys_expect(w, "default/gone");

	/* orphaned by the garbage collector (no owner left): the Job its label names */
	ctl_keys_clear(w);
	ctl_cache(w, pods, orphaned_pod("e", "batch.kubernetes.io/job-name", "gone"));
	ctl_cache(w, pods, orphaned_pod("f", "job-name", "other"));
	ctl_tell(w, INFORMER_UPDATED, pods, orphaned_pod("e", "batch.kubernetes.io/job-name",
	    "gone"), gone_job_pod("e", "Job", "batch/v1", 1));
	ctl_tell(w, INFORMER_ADDED, pods, orphaned_pod("f", "job-name", "other"), NULL);
	ctl_keys_expect(w, "default/gone,default/other");
	ctl_sync(w, "default/gone", 0);
	assert_int_equal(w->result.nwrites, 2);
	assert_string_equal(w->result.writes[0].name, "a");
	assert_string_equal(w->result.writes[1].name, "e");
	ctl_keys_clear(w);
	ctl_list_keys(w);
	ctl_keys_expect(w, "default/gone,default/other");
	ctl_world_free(w);
}

/* A new Job of the name of one gone (kube's orphan queue): the pods the gone one
 * controlled, and the orphans the new one's selector does not match, lose the finalizer;
 * an orphan it matches is left for it to adopt. */
static void
new_job_of_the_name_releases_the_old_pods(void **state)
{
	struct ctl_world *w = ctl_world_new(&job_controller_type, NULL);
	const struct resource *pods = resource_find("pods");
	int released_a = 0, released_legacy = 0, released_adoptable = 0;

	(void)state;
	ctl_cache(w, resource_find("jobs"), fixture_parse("{\"metadata\":{\"name\":"
	    "\"gone\",\"namespace\":\"default\",\"uid\":\"uid-new\",\"resourceVersion\":"
	    "\"5\"},\"spec\":{\"parallelism\":1,\"completions\":1,\"selector\":{"
	    "\"matchLabels\":{\"batch.kubernetes.io/job-name\":\"gone\"}},\"template\":{"
	    "\"metadata\":{\"labels\":{\"batch.kubernetes.io/job-name\":\"gone\"}},"
	    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}},"
	    "\"status\":{}}"));
	ctl_cache(w, pods, gone_job_pod("a", "Job", "batch/v1", 1));
	ctl_cache(w, pods, orphaned_pod("legacy", "job-name", "gone"));
	ctl_cache(w, pods, orphaned_pod("adoptable", "batch.kubernetes.io/job-name", "gone"));
	ctl_sync(w, "default/gone", 0);
	for (int i = 0; i < w->result.nwrites; i++) {
		const struct action *a = &w->result.writes[i];

		if (strcmp(a->verb, "remove-finalizer") != 0)
			continue;
		released_a += strcmp(a->name, "a") == 0;
		released_legacy += strcmp(a->name, "legacy") == 0;
		released_adoptable += strcmp(a->name, "adoptable") == 0;
	}
	assert_int_equal(released_a, 1);
	assert_int_equal(released_legacy, 1);
	assert_int_equal(released_adoptable, 0);
	ctl_world_free(w);
}

/* A finished Job: its pods deleted since lose the finalizer; the others keep it. */
static void
finished_job_releases_deleted_pods(void **state)
{
	struct ctl_world *w = ctl_world_new(&job_controller_type, NULL);
	struct sync_case shape = sync_cases[0];
	cJSON *pod;

	(void)state;
	shape.status = "{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}";
	ctl_cache(w, resource_find("jobs"), job_new(&shape));
	pod = owned_pod("held", 1);
	ctl_cache(w, resource_find("pods"), pod);
	ctl_cache(w, resource_find("pods"), owned_pod("kept", 0));
	ctl_sync(w, "default/foobar", 0);
	assert_int_equal(w->result.nwrites, 1);
	assert_string_equal(w->result.writes[0].verb, "remove-finalizer");
	assert_string_equal(w->result.writes[0].name, "held");
	ctl_world_free(w);
}


int
main(void)
{
	struct CMUnitTest tests[NELEM(sync_cases) + NELEM(per_index_cases) +
	    NELEM(claim_cases) + 15];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(sync_cases); i++)
		tests[n++] = (struct CMUnitTest){ sync_cases[i].name, sync_case, world_setup,
		    world_teardown, (void *)&sync_cases[i] };
	for (size_t i = 0; i < NELEM(per_index_cases); i++)
		tests[n++] = (struct CMUnitTest){ per_index_cases[i].name, per_index_case,
		    world_setup, world_teardown, (void *)&per_index_cases[i] };
	for (size_t i = 0; i < NELEM(claim_cases); i++)
		tests[n++] = (struct CMUnitTest){ claim_cases[i].name, claim_case, NULL, NULL,
		    (void *)&claim_cases[i] };
	tests[n++] = (struct CMUnitTest){ "orphan pods' events", orphan_events, NULL, NULL,
	    NULL };
	tests[n++] = (struct CMUnitTest){ "the pods of a Job gone lose the finalizer",
	    gone_job_releases_its_pods, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a new Job of a gone one's name: the gone one's "
	    "pods lose the finalizer", new_job_of_the_name_releases_the_old_pods, NULL, NULL,
	    NULL };
	tests[n++] = (struct CMUnitTest){ "the pods of a finished Job deleted lose it",
	    finished_job_releases_deleted_pods, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the failure count annotations", index_failure_count,
	    NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "kube's job_controller_* metrics", metrics, NULL,
	    NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the backoff after failures", backoff, NULL, NULL,
	    NULL };
	tests[n++] = (struct CMUnitTest){ "the pod created", pod_created, world_setup,
	    world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "a Job managed elsewhere", left_alone, world_setup,
	    world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "completed indexes as interval strings",
	    index_intervals, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "indexed job start", indexed_start, world_setup,
	    world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "an Indexed Job's progress", indexed_progress,
	    world_setup, world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "podFailurePolicy's rules", pod_failure_policy, NULL,
	    NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "successPolicy's rules", success_policy, NULL, NULL,
	    NULL };
	tests[n++] = (struct CMUnitTest){ "activeDeadlineSeconds", active_deadline, world_setup,
	    world_teardown, NULL };
	return _cmocka_run_group_tests("job", tests, n, NULL, NULL);
}
