/*
 * test_tainteviction.c - the taint eviction controller (controllers/tainteviction.c)
 * against kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/tainteviction/taint_eviction.go
 * (processPodOnNode, getMinTolerationTime, addConditionAndDeletePod, the pod and node
 * handlers) and k8s.io/api's ToleratesTaint. The cases are those of TestCreatePod,
 * TestUpdatePod, TestUpdateNode, TestUpdateNodeWithMultipleTaints and
 * TestGetMinTolerationTime (taint_eviction_test.go): kube's taints are testTaint<i> with
 * value test<i>, effect NoExecute; its tolerations match one of them, with or without
 * tolerationSeconds.
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
#include "controllers/tainteviction.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

#define TAINT(i) "{\"key\":\"testTaint" #i "\",\"value\":\"test" #i "\",\"effect\":\"NoExecute\"}"
#define TOL(i) "{\"key\":\"testTaint" #i "\",\"value\":\"test" #i "\",\"effect\":\"NoExecute\"}"
#define TOL_FOR(i, s) "{\"key\":\"testTaint" #i "\",\"value\":\"test" #i "\"," \
	"\"effect\":\"NoExecute\",\"tolerationSeconds\":" #s "}"

/* --- tolerations ------------------------------------------------------------------------ */

static void
tolerations_as_kube(void **state)
{
	static const struct {
		const char *taints, *tolerations;
		int tolerated;
		double seconds;
	} rows[] = {
		/* TestGetMinTolerationTime, each toleration matching a taint of its own. */
		{ "[" TAINT(1) "]", "[" TOL(1) "]", 1, -1 },
		{ "[" TAINT(1) "," TAINT(2) "]", "[" TOL_FOR(1, 1) "," TOL_FOR(2, 2) "]", 1, 1 },
		{ "[" TAINT(1) "," TAINT(2) "]", "[" TOL_FOR(1, 1) "," TOL(2) "]", 1, 1 },
		{ "[" TAINT(1) "," TAINT(2) "]", "[" TOL(1) "," TOL_FOR(2, 1) "]", 1, 1 },
		/* No taint: tolerated, for no time (kube never asks). */
		{ "[]", "[]", 1, 0 },
		/* A taint no toleration matches. */
		{ "[" TAINT(1) "]", "[]", 0, 0 },
		{ "[" TAINT(1) "," TAINT(2) "]", "[" TOL_FOR(1, 100) "]", 0, 0 },
		/* Zero or negative seconds: at once. */
		{ "[" TAINT(1) "]", "[" TOL_FOR(1, 0) "]", 1, 0 },
		{ "[" TAINT(1) "]", "[" TOL_FOR(1, -5) "]", 1, 0 },
		/* ToleratesTaint: Exists with no key tolerates every taint; Exists with a key any
		 * value of it; Equal (or no operator) the value only; an effect only its own. */
		{ "[" TAINT(1) "," TAINT(2) "]", "[{\"operator\":\"Exists\"}]", 1, -1 },
		{ "[" TAINT(1) "]", "[{\"key\":\"testTaint1\",\"operator\":\"Exists\","
		    "\"tolerationSeconds\":30}]", 1, 30 },
		{ "[" TAINT(1) "]", "[{\"key\":\"testTaint1\",\"operator\":\"Equal\","
		    "\"value\":\"other\"}]", 0, 0 },
		{ "[" TAINT(1) "]", "[{\"key\":\"testTaint1\",\"value\":\"test1\","
		    "\"effect\":\"NoSchedule\"}]", 0, 0 },
		/* The alpha comparison operators are off, as by default in kube. */
		{ "[{\"key\":\"n\",\"value\":\"5\",\"effect\":\"NoExecute\"}]",
		    "[{\"key\":\"n\",\"operator\":\"Gt\",\"value\":\"1\"}]", 0, 0 },
		/* The first toleration that matches a taint is the one used. */
		{ "[" TAINT(1) "]", "[{\"operator\":\"Exists\"}," TOL_FOR(1, 10) "]", 1, -1 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		cJSON *taints = fixture_parse(rows[i].taints);
		cJSON *tolerations = fixture_parse(rows[i].tolerations);
		double seconds = 99;

		assert_int_equal(tainteviction_tolerated(taints, tolerations, &seconds),
		    rows[i].tolerated);
		if (rows[i].tolerated && seconds != rows[i].seconds)
			fail_msg("row %zu: %g seconds, want %g", i, seconds, rows[i].seconds);
		cJSON_Delete(taints);
		cJSON_Delete(tolerations);
	}
}

/* --- the controller ---------------------------------------------------------------------- */

/* Each object made is a new version of it, as the cache takes it. */
static int next_rv = 1;

static cJSON *
node_new(const char *name, const char *taints)
{
	char *text = xasprintf("{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\","
	    "\"resourceVersion\":\"%d\"},\"spec\":{\"taints\":%s}}", name, name, next_rv++,
	    taints != NULL ? taints : "[]");
	cJSON *node = fixture_parse(text);

	free(text);
	return node;
}

static cJSON *
pod_on(const char *name, const char *node, const char *tolerations)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
	    "\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\","
	    "\"resourceVersion\":\"%d\",\"generation\":1},\"spec\":{%s%s%s"
	    "\"containers\":[{\"name\":\"c\"}]%s%s},\"status\":{\"phase\":\"Running\"}}",
	    name, name, next_rv++, node != NULL ? "\"nodeName\":\"" : "", node != NULL ? node : "",
	    node != NULL ? "\"," : "", tolerations != NULL ? ",\"tolerations\":" : "",
	    tolerations != NULL ? tolerations : "");
	cJSON *pod = fixture_parse(text);

	free(text);
	return pod;
}

/* The last sync's events and writes: "event Reason: message", "verb name". */
static const char *
described(struct ctl_world *w)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < w->result.nevents; i++)
		buf_printf(&b, "%sevent %s: %s", b.len > 0 ? "; " : "", w->result.events[i].reason,
		    w->result.events[i].message);
	for (int i = 0; i < w->result.nwrites; i++)
		buf_printf(&b, "%s%s %s", b.len > 0 ? "; " : "", w->result.writes[i].verb,
		    w->result.writes[i].name);
	return ctl_keep(w, buf_detach(&b));
}

#define EVICTED "event TaintManagerEviction: Marking for deletion Pod default/pod1; " \
	"mark-disruption-target pod1; evict pod1"
#define CANCELLED "event TaintManagerEviction: Cancelling deletion of Pod default/pod1"

/* One of kube's cases: a pod (with tolerations) on node1 (with taints) at 0 s; then,
 * optionally, the pod's tolerations or the node's taints change at 10 s; what a sync does
 * at each step, and at the time a scheduled deletion is due. */
struct case_row {
	const char *name;
	const char *node, *taints, *tolerations;	/* node NULL: not bound */
	const char *want;				/* at 0 s */
	double requeue;					/* at 0 s; 0: none */
	const char *new_taints, *new_tolerations;	/* at 10 s; NULL: no change */
	const char *want_then;				/* at 10 s */
	double due;					/* a sync then, 0: none */
	const char *want_due;
};

static const struct case_row case_rows[] = {
	/* TestCreatePod */
	{ "not scheduled - ignore", NULL, NULL, NULL, "", 0, NULL, NULL, NULL, 0, NULL },
	{ "scheduled on untainted Node", "node1", "[]", NULL, "", 0, NULL, NULL, NULL, 0, NULL },
	{ "schedule on tainted Node", "node1", "[" TAINT(1) "]", NULL, EVICTED, 0, NULL, NULL,
	    NULL, 0, NULL },
	{ "schedule on tainted Node with finite toleration", "node1", "[" TAINT(1) "]",
	    "[" TOL_FOR(1, 100) "]", "", 100, NULL, NULL, NULL, 100, EVICTED },
	{ "schedule on tainted Node with infinite toleration", "node1", "[" TAINT(1) "]",
	    "[" TOL(1) "]", "", 0, NULL, NULL, NULL, 0, NULL },
	{ "schedule on tainted Node with infinite invalid toleration", "node1",
	    "[" TAINT(1) "]", "[" TOL(2) "]", EVICTED, 0, NULL, NULL, NULL, 0, NULL },
	/* TestUpdatePod */
	{ "removing toleration", "node1", "[" TAINT(1) "]", "[" TOL_FOR(1, 100) "]", "", 100,
	    NULL, "[]", "event TaintManagerEviction: Cancelling deletion of Pod default/pod1; "
	    "event TaintManagerEviction: Marking for deletion Pod default/pod1; "
	    "mark-disruption-target pod1; evict pod1", 0, NULL },
	{ "lengthening toleration shouldn't work", "node1", "[" TAINT(1) "]",
	    "[" TOL_FOR(1, 20) "]", "", 20, NULL, "[" TOL_FOR(1, 100) "]", "", 20, EVICTED },
	/* TestUpdateNode */
	{ "Added taint, expect node patched and deleted", "node1", "[]", NULL, "", 0,
	    "[" TAINT(1) "]", NULL, EVICTED, 0, NULL },
	{ "Added tolerated taint", "node1", "[]", "[" TOL_FOR(1, 100) "]", "", 0,
	    "[" TAINT(1) "]", NULL, "", 110, EVICTED },
	{ "Only one added taint tolerated", "node1", "[]", "[" TOL_FOR(1, 100) "]", "", 0,
	    "[" TAINT(1) "," TAINT(2) "]", NULL, EVICTED, 0, NULL },
	{ "Taint removed", "node1", "[" TAINT(1) "]", "[" TOL_FOR(1, 1) "]", "", 1, "[]", NULL,
	    CANCELLED, 0, NULL },
	{ "Pod with multiple tolerations are evicted when first one runs out", "node1",
	    "[" TAINT(1) "," TAINT(2) "]", "[" TOL_FOR(1, 1) "," TOL_FOR(2, 100) "]", "", 1,
	    NULL, NULL, NULL, 1, EVICTED },
	/* sqlkcm's: a NoSchedule taint is not this controller's business. */
	{ "NoSchedule taints are ignored", "node1",
	    "[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]", NULL, "", 0, NULL, NULL, NULL, 0,
	    NULL },
};

static int
world_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(&tainteviction_controller_type, NULL);

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
case_row(void **state)
{
	struct ctl_world *w = *state;
	const struct case_row *row = w->row;
	const struct resource *pods = resource_find("pods"), *nodes = resource_find("nodes");

	if (row->node != NULL)
		ctl_cache(w, nodes, node_new(row->node, row->taints));
	ctl_cache(w, pods, pod_on("pod1", row->node, row->tolerations));
	ctl_sync(w, "default/pod1", NOW);
	assert_described("at 0 s", described(w), row->want);
	assert_true(w->result.requeue_after == row->requeue);
	if (row->new_taints != NULL || row->new_tolerations != NULL) {
		if (row->new_taints != NULL)
			ctl_cache(w, nodes, node_new(row->node, row->new_taints));
		if (row->new_tolerations != NULL)
			ctl_cache(w, pods, pod_on("pod1", row->node, row->new_tolerations));
		ctl_sync(w, "default/pod1", NOW + 10);
		assert_described("at 10 s", described(w), row->want_then);
	}
	if (row->due > 0) {
		ctl_sync(w, "default/pod1", NOW + row->due - 0.5);
		assert_described("just before it is due", described(w), "");
		ctl_sync(w, "default/pod1", NOW + row->due);
		assert_described("when due", described(w), row->want_due);
	}
}

/* The eviction's writes: the DisruptionTarget condition into the status (with the pod's
 * uid, and its generation observed), then the delete with the uid as precondition. */
static void
eviction_writes_as_kube(void **state)
{
	struct ctl_world *w = *state;
	const struct action *a;
	const cJSON *cond;

	ctl_cache(w, resource_find("nodes"), node_new("node1", "[" TAINT(1) "]"));
	ctl_cache(w, resource_find("pods"), pod_on("pod1", "node1", NULL));
	ctl_sync(w, "default/pod1", NOW);
	assert_int_equal(w->result.nwrites, 2);
	a = &w->result.writes[0];
	assert_int_equal(a->type, ACTION_PATCH);
	assert_string_equal(a->subresource, "status");
	assert_false(a->merge_patch);
	assert_string_equal(json_string(a->body, "metadata.uid"), "uid-pod1");
	cond = cJSON_GetArrayItem(json_path(a->body, "status.conditions"), 0);
	assert_string_equal(json_string(cond, "type"), "DisruptionTarget");
	assert_string_equal(json_string(cond, "status"), "True");
	assert_string_equal(json_string(cond, "reason"), "DeletionByTaintManager");
	assert_string_equal(json_string(cond, "message"),
	    "Taint manager: deleting due to NoExecute taint");
	assert_int_equal(json_int(cond, "observedGeneration", 0), 1);
	a = &w->result.writes[1];
	assert_int_equal(a->type, ACTION_DELETE);
	assert_string_equal(a->uid, "uid-pod1");
	assert_false(a->delete_now);
	/* A pod going already is left alone. */
	cJSON *going = pod_on("pod1", "node1", NULL);
	json_set(cJSON_GetObjectItemCaseSensitive(going, "metadata"), "deletionTimestamp",
	    cJSON_CreateString("2026-01-01T00:00:00Z"));
	ctl_cache(w, resource_find("pods"), going);
	ctl_sync(w, "default/pod1", NOW + 1);
	assert_described("going", described(w), "");
	/* Deleted: no news of a deletion that was sent. */
	ctl_uncache(w, resource_find("pods"), "uid-pod1");
	ctl_sync(w, "default/pod1", NOW + 2);
	assert_described("gone", described(w), "");
}

/* A pod deleted while its deletion waits: kube's cancel event, by its name. */
static void
deleted_pod_cancels_its_deletion(void **state)
{
	struct ctl_world *w = *state;
	char *keys;

	ctl_cache(w, resource_find("nodes"), node_new("node1", "[" TAINT(1) "]"));
	ctl_cache(w, resource_find("pods"), pod_on("pod1", "node1", "[" TOL_FOR(1, 100) "]"));
	ctl_sync(w, "default/pod1", NOW);
	ctl_uncache(w, resource_find("pods"), "uid-pod1");
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_DELETED, resource_find("pods"), pod_on("pod1", "node1", NULL), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "default/pod1");
	free(keys);
	ctl_sync(w, "default/pod1", NOW + 5);
	assert_described("gone", described(w), CANCELLED);
	assert_string_equal(json_string(w->result.owner, "metadata.namespace"), "default");
}

/* The handlers: a pod bound, or its tolerations changed, is queued, not any other update;
 * a node's pods when its NoExecute taints change, not its other changes. */
static void
handlers_queue_what_kube_does(void **state)
{
	struct ctl_world *w = *state;
	const struct resource *pods = resource_find("pods"), *nodes = resource_find("nodes");
	cJSON *labelled;
	char *keys;

	ctl_cache(w, pods, pod_on("pod1", "node1", NULL));
	ctl_cache(w, pods, pod_on("pod2", "node1", NULL));
	ctl_cache(w, pods, pod_on("pod3", "node2", NULL));
#define KEYS(want) do {							\
		keys = ctl_keys(w);					\
		assert_string_equal(keys, want);			\
		free(keys);						\
		ctl_keys_clear(w);					\
	} while (0)
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_ADDED, pods, pod_on("pod1", "node1", NULL), NULL);
	KEYS("default/pod1");
	ctl_tell(w, INFORMER_ADDED, pods, pod_on("pod1", NULL, NULL), NULL);
	KEYS("");
	ctl_tell(w, INFORMER_UPDATED, pods, pod_on("pod1", "node1", NULL),
	    pod_on("pod1", NULL, NULL));
	KEYS("default/pod1");
	labelled = pod_on("pod1", "node1", NULL);
	json_set(json_child_object(labelled, "metadata"), "labels", fixture_parse("{\"a\":\"b\"}"));
	ctl_tell(w, INFORMER_UPDATED, pods, labelled, pod_on("pod1", "node1", NULL));
	KEYS("");
	ctl_tell(w, INFORMER_UPDATED, pods, pod_on("pod1", "node1", "[" TOL(1) "]"),
	    pod_on("pod1", "node1", NULL));
	KEYS("default/pod1");
	/* Deleted without a deletion scheduled: nothing to cancel. */
	ctl_tell(w, INFORMER_DELETED, pods, pod_on("pod1", "node1", NULL), NULL);
	KEYS("");

	ctl_tell(w, INFORMER_UPDATED, nodes, node_new("node1", "[" TAINT(1) "]"),
	    node_new("node1", NULL));
	KEYS("default/pod1,default/pod2");
	ctl_tell(w, INFORMER_UPDATED, nodes, node_new("node1",
	    "[" TAINT(1) ",{\"key\":\"k\",\"effect\":\"NoSchedule\"}]"),
	    node_new("node1", "[" TAINT(1) "]"));
	KEYS("");
	ctl_tell(w, INFORMER_ADDED, nodes, node_new("node2", "[" TAINT(2) "]"), NULL);
	KEYS("default/pod3");
	ctl_tell(w, INFORMER_ADDED, nodes, node_new("node2", NULL), NULL);
	KEYS("");
#undef KEYS
	/* list_keys: the pods of the tainted nodes. */
	ctl_cache(w, nodes, node_new("node1", "[" TAINT(1) "]"));
	ctl_cache(w, nodes, node_new("node2", NULL));
	ctl_list_keys(w);
	keys = ctl_keys(w);
	assert_string_equal(keys, "default/pod1,default/pod2");
	free(keys);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(case_rows) + 8];
	size_t n = 0;

	tests[n++] = (struct CMUnitTest){ "tolerations as kube matches them",
	    tolerations_as_kube, NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(case_rows); i++)
		tests[n++] = (struct CMUnitTest){ case_rows[i].name, case_row, world_setup,
		    world_teardown, (void *)&case_rows[i] };
	tests[n++] = (struct CMUnitTest){ "the eviction's writes as kube's",
	    eviction_writes_as_kube, world_setup, world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "a deleted pod cancels its deletion",
	    deleted_pod_cancels_its_deletion, world_setup, world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "the handlers queue what kube's do",
	    handlers_queue_what_kube_does, world_setup, world_teardown, NULL };
	return _cmocka_run_group_tests("tainteviction", tests, n, NULL, NULL);
}
