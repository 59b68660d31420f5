/*
 * test_podgc.c - the pod garbage collector (controllers/podgc.c) against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/podgc (gc_controller.go): gcTerminated,
 * gcTerminating, gcOrphaned with its quarantine, gcUnscheduledTerminating, the
 * byEvictionAndCreationTimestamp order and markFailedAndDeletePodWithCondition. The case
 * tables are gc_controller_test.go's TestGCTerminated, TestGCOrphaned,
 * TestGCUnscheduledTerminating, TestGCTerminating and
 * TestGCInspectingPatchedPodBeforeDeletion, row for row, with the threshold given through
 * a struct controller_config as --terminated-pod-gc-threshold would give it.
 *
 * kube's tests call gc() over informers and a fake clientset, and look at the pods the
 * clientset saw patched and deleted. Here a "pass" is what the daemon does with the same
 * cache: list_keys, then a sync of each key; the pods patched and deleted are the writes
 * of those syncs (each sync's writes are one pod's: the patch, then the deletion). Two
 * passes stand for kube's two gc() calls around its fake clock's step.
 *
 * kube's metrics checks (testDeletingPodsMetrics) have nothing to port: sqlkcm's
 * controllers have no metrics of their own yet.
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
#include "controllers/podgc.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "metrics.h"
#include "resource.h"
#include "store.h"
#include "util.h"

#define NOW_TEXT "2026-01-01T00:00:00Z"
#define QUARANTINE 40.0		/* kube's quarantineTime */
#define MAX_PODS 32
#define MAX_NODES 8

/* --- objects -------------------------------------------------------------------------- */

/* A node: name, its Ready condition's status (NULL: no condition), its taints (JSON). */
struct node_spec {
	const char *name;	/* NULL ends a list */
	const char *ready;
	const char *taints;
};

/* A pod in namespace default, uid "uid-<name>", created an hour after the one before it
 * (the first at 01:00 on 1 January 1970, as kube's tests count from time.Unix(0, 0)). */
struct pod_spec {
	const char *name;	/* NULL ends a list */
	const char *phase;	/* NULL: none */
	const char *reason;	/* status.reason; NULL: none */
	const char *node;	/* spec.nodeName; NULL: unscheduled */
	int deleting;		/* it has a deletionTimestamp */
	const char *conditions;	/* status.conditions JSON; NULL: none */
	long long generation;	/* 0: none */
};

#define OUT_OF_SERVICE(effect) \
	"[{\"key\":\"node.kubernetes.io/out-of-service\",\"effect\":\"" effect "\"}]"

static cJSON *
node_new(const struct node_spec *spec)
{
	struct buf b;
	cJSON *node;

	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
	    "\"uid\":\"uid-node-%s\",\"resourceVersion\":\"1\"},\"spec\":{", spec->name,
	    spec->name);
	if (spec->taints != NULL)
		buf_printf(&b, "\"taints\":%s", spec->taints);
	buf_append_str(&b, "},\"status\":{");
	if (spec->ready != NULL)
		buf_printf(&b, "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]",
		    spec->ready);
	buf_append_str(&b, "}}");
	node = fixture_parse(b.data);
	buf_free(&b);
	return node;
}

/* The pod spec describes, the i-th of its list. */
static cJSON *
pod_spec_new(const struct pod_spec *spec, int i)
{
	struct buf b;
	cJSON *pod;
	size_t start;
	int hour = i + 1;

	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
	    "\"namespace\":\"default\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\","
	    "\"creationTimestamp\":\"1970-01-%02dT%02d:00:00Z\"", spec->name, spec->name,
	    1 + hour / 24, hour % 24);
	if (spec->deleting)
		buf_printf(&b, ",\"deletionTimestamp\":\"%s\"", NOW_TEXT);
	if (spec->generation > 0)
		buf_printf(&b, ",\"generation\":%lld", spec->generation);
	buf_append_str(&b, "},\"spec\":{");
	if (spec->node != NULL)
		buf_printf(&b, "\"nodeName\":\"%s\"", spec->node);
	/* status members, each after a comma: the first one's is dropped below */
	buf_append_str(&b, "},\"status\":{");
	start = b.len;
	if (spec->phase != NULL)
		buf_printf(&b, ",\"phase\":\"%s\"", spec->phase);
	if (spec->reason != NULL)
		buf_printf(&b, ",\"reason\":\"%s\"", spec->reason);
	if (spec->conditions != NULL)
		buf_printf(&b, ",\"conditions\":%s", spec->conditions);
	if (b.len > start)
		b.data[start] = ' ';
	buf_append_str(&b, "}}");
	pod = fixture_parse(b.data);
	buf_free(&b);
	return pod;
}

/* --- the store and the controller ----------------------------------------------------- */

/* What one pass did: names joined by ",". */
struct pass {
	char *deleted;		/* in the order of the deletions */
	char *patched;
	char *quarantined;	/* the pods left waiting for their node's quarantine */
};

/* One test's world, with the flag the controller is created with and a pass's outcome;
 * the controller is created by the test (controller_start). */
struct env {
	struct ctl_world *w;
	char threshold[32];
	const char *flags[1];
	struct controller_config config;
	struct pass pass;
};

static void
pass_clear(struct pass *p)
{
	free(p->deleted);
	free(p->patched);
	free(p->quarantined);
	memset(p, 0, sizeof *p);
}

/* An in-memory store whose nodes informer has listed (the cache holds every node). */
static int
env_setup(void **state)
{
	struct env *env = xcalloc(1, sizeof *env);

	env->w = ctl_world_new(NULL, NULL);
	env->w->row = *state;
	*state = env;
	ctl_listed(env->w, resource_find("nodes"));
	return 0;
}

static int
env_teardown(void **state)
{
	struct env *env = *state;

	pass_clear(&env->pass);
	ctl_world_free(env->w);
	free(env);
	return 0;
}

/* Creates the controller, with --terminated-pod-gc-threshold=threshold (NULL: the
 * default). */
static void
controller_start(struct env *env, const char *threshold)
{
	if (threshold != NULL) {
		snprintf(env->threshold, sizeof env->threshold, "%s", threshold);
		env->flags[0] = env->threshold;
		env->config.flags = env->flags;
	}
	if (ctl_start(env->w, &podgc_controller_type, &env->config) != 0)
		fail_msg("controller_new: %s", env->w->error);
}

static void
cache_nodes(struct ctl_world *w, const struct node_spec *nodes)
{
	for (int i = 0; i < MAX_NODES && nodes[i].name != NULL; i++)
		ctl_cache(w, resource_find("nodes"), node_new(&nodes[i]));
}

static void
cache_pods(struct ctl_world *w, const struct pod_spec *pods)
{
	for (int i = 0; i < MAX_PODS && pods[i].name != NULL; i++)
		ctl_cache(w, resource_find("pods"), pod_spec_new(&pods[i], i));
}

/* Removes node name from the cache, as a watch's DELETED does, and tells the handler. */
static void
uncache_node(struct ctl_world *w, const char *name)
{
	struct node_spec spec = { name, NULL, NULL };

	ctl_uncache(w, resource_find("nodes"), ctl_keep(w, xasprintf("uid-node-%s", name)));
	ctl_tell(w, INFORMER_DELETED, resource_find("nodes"), node_new(&spec), NULL);
}

/* Appends name to a "," list. */
static void
list_add(char **list, const char *name)
{
	char *longer = xasprintf("%s%s%s", *list != NULL ? *list : "", *list != NULL ? "," : "",
	    name);

	free(*list);
	*list = longer;
}

static int
compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The "," list sorted (malloc'd; "" for none). */
static char *
sorted(const char *list)
{
	char *copy = xstrdup(list != NULL ? list : ""), *names[MAX_PODS], *s, *out = NULL;
	int n = 0;

	for (s = strtok(copy, ","); s != NULL && n < MAX_PODS; s = strtok(NULL, ","))
		names[n++] = s;
	qsort(names, (size_t)n, sizeof *names, compare_names);
	for (int i = 0; i < n; i++)
		list_add(&out, names[i]);
	free(copy);
	return out != NULL ? out : xstrdup("");
}

/* Checks the writes of one pod's sync: kube's markFailedAndDeletePod, the patch with the
 * DisruptionTarget condition when disruption is set. */
static void
check_writes(const struct sync_result *r, int disruption)
{
	const struct action *d = &r->writes[r->nwrites - 1];
	char *uid;

	assert_int_equal(d->type, ACTION_DELETE);
	assert_int_equal(d->delete_now, 1);
	uid = xasprintf("uid-%s", d->name);
	assert_string_equal(d->uid, uid);
	free(uid);
	assert_string_equal(d->namespace, "default");
	if (r->nwrites == 1)
		return;
	assert_int_equal(r->nwrites, 2);
	assert_int_equal(r->writes[0].type, ACTION_PATCH);
	assert_string_equal(r->writes[0].name, d->name);
	assert_string_equal(r->writes[0].subresource, "status");
	assert_int_equal(r->writes[0].merge_patch, 0);
	assert_string_equal(json_string(r->writes[0].body, "status.phase"), "Failed");
	assert_string_equal(json_string(r->writes[0].body, "metadata.uid"), d->uid);
	assert_int_equal(json_path(r->writes[0].body, "status.conditions") != NULL, disruption);
}

/* Whether the live read before an orphan's deletion (a GET of its node, without a uid)
 * finds the node among client_nodes: then the executor sends nothing. */
static int
node_found_live(const struct sync_result *r, const char *const *client_nodes)
{
	assert_true(r->nconfirm_absent <= 1);
	if (r->nconfirm_absent == 0)
		return 0;
	assert_int_equal(r->confirm_absent[0].type, ACTION_GET);
	assert_string_equal(r->confirm_absent[0].resource->name, "nodes");
	assert_null(r->confirm_absent[0].uid);
	for (int i = 0; i < MAX_NODES && client_nodes[i] != NULL; i++) {
		if (strcmp(client_nodes[i], r->confirm_absent[0].name) == 0)
			return 1;
	}
	return 0;
}

static const char *const no_client_nodes[MAX_NODES];

/* One pass at now: list_keys, then a sync of each key, into env->pass. */
static void
gc_pass(struct env *env, double now, int disruption, const char *const *client_nodes)
{
	struct ctl_world *w = env->w;

	ctl_keys_clear(w);
	pass_clear(&env->pass);
	ctl_list_keys(w);
	for (int i = 0; i < w->nkeys; i++) {
		ctl_sync(w, w->keys[i].key, now);
		if (w->result.waiting != NULL) {
			assert_int_equal(w->result.nwrites, 0);
			assert_true(w->result.requeue_after > 0);
			list_add(&env->pass.quarantined, w->keys[i].key + strlen("default/"));
		}
		/* Only an orphan's deletion reads its node first. */
		assert_int_equal(w->result.nconfirm_absent > 0,
		    disruption && w->result.nwrites > 0);
		if (w->result.nwrites == 0 || node_found_live(&w->result, client_nodes))
			continue;
		check_writes(&w->result, disruption);
		if (w->result.nwrites == 2)
			list_add(&env->pass.patched, w->result.writes[0].name);
		list_add(&env->pass.deleted, w->result.writes[w->result.nwrites - 1].name);
	}
}

/* Compares a "," list, sorted unless ordered, with what a row wants (NULL: none). */
static void
assert_names(const char *what, const char *got, const char *want, int ordered)
{
	char *g = ordered ? xstrdup(got != NULL ? got : "") : sorted(got);

	if (want == NULL)
		want = "";
	if (strcmp(g, want) != 0) {
		print_error("%s: got \"%s\", want \"%s\"\n", what, g, want);
		free(g);
		fail();
	}
	free(g);
}

/* --- the case tables ------------------------------------------------------------------- */

/* One row of kube's tables: the cache, one or two passes, the pods patched and deleted
 * by the last (sorted, or in the order of deletion when ordered). */
struct gc_case {
	const char *name;
	const char *threshold;			/* the flag; NULL: the default */
	struct node_spec nodes[MAX_NODES];	/* cached first */
	struct pod_spec pods[MAX_PODS];
	double delay;			/* > 0: a second pass this many seconds later */
	const char *quarantined;	/* pods the first pass leaves waiting (sorted) */
	struct node_spec added_nodes[MAX_NODES];	/* cached between the passes */
	const char *deleted_nodes[MAX_NODES];		/* removed between the passes */
	/* Nodes the apiserver has but the cache does not: the live read of the last pass
	 * finds them, and their pods are left alone. */
	const char *client_nodes[MAX_NODES];
	int disruption;			/* the patches carry the DisruptionTarget condition */
	const char *deleted;
	const char *patched;
	int ordered;
};

#define FAILED "Failed"
#define SUCCEEDED "Succeeded"
#define RUNNING "Running"
#define PENDING "Pending"
#define UNKNOWN "Unknown"
#define ON(n, ph, nd) { .name = n, .phase = ph, .node = nd }
#define EVICTED(n) { .name = n, .phase = FAILED, .reason = "Evicted", .node = "node" }
#define DELETING(n, ph, nd) { .name = n, .phase = ph, .node = nd, .deleting = 1 }

/* TestGCTerminated: every pod on node "node", which exists; kube's order deletes evicted
 * pods first, then the oldest. */
static const struct gc_case terminated_cases[] = {
	{ "TestGCTerminated: delete pod a which is PodFailed and pod b which is PodSucceeded",
	  .threshold = "1", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", FAILED, "node"), ON("b", SUCCEEDED, "node"),
	      ON("c", FAILED, "node") },
	  .deleted = "a,b", .ordered = 1 },
	{ "TestGCTerminated: threshold = 0, disables terminated pod deletion",
	  .threshold = "0", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", FAILED, "node"), ON("b", SUCCEEDED, "node") } },
	{ "TestGCTerminated: threshold = 1, delete pod a which is PodFailed and pod b which is "
	  "PodSucceeded",
	  .threshold = "1", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", FAILED, "node"), ON("b", SUCCEEDED, "node"),
	      ON("c", FAILED, "node") },
	  .deleted = "a,b", .ordered = 1 },
	{ "TestGCTerminated: threshold = 1, delete pod b which is PodSucceeded",
	  .threshold = "1", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", RUNNING, "node"), ON("b", SUCCEEDED, "node"),
	      ON("c", FAILED, "node") },
	  .deleted = "b", .ordered = 1 },
	{ "TestGCTerminated: threshold = 1, delete pod a which is PodFailed",
	  .threshold = "1", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", FAILED, "node"), ON("b", SUCCEEDED, "node") },
	  .deleted = "a", .ordered = 1 },
	{ "TestGCTerminated: threshold = 5, don't delete pod",
	  .threshold = "5", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", FAILED, "node"), ON("b", SUCCEEDED, "node") } },
	{ "TestGCTerminated: row 7: the evicted pod c goes first, then the oldest",
	  .threshold = "1", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", FAILED, "node"), ON("b", SUCCEEDED, "node"), EVICTED("c") },
	  .deleted = "c,a", .ordered = 1 },
	{ "TestGCTerminated: row 8: only the evicted pod c goes",
	  .threshold = "1", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", RUNNING, "node"), ON("b", SUCCEEDED, "node"), EVICTED("c") },
	  .deleted = "c", .ordered = 1 },
};

/*
 * TestGCOrphaned: two passes, kube's two gc() calls around its clock's step. kube's
 * fake clientset also holds nodes the informer does not ("client nodes"), which its live
 * GET after the quarantine finds; sqlkcm reads no node live (see podgc.c), so the cache is
 * the only witness: in the two rows where the client alone has the node, kube keeps the
 * pods and sqlkcm deletes them (the rows say so). itemsInQueue (kube's count of nodes
 * quarantined) is here the pods the first pass leaves waiting.
 */
static const struct gc_case orphaned_cases[] = {
	{ "TestGCOrphaned: nodes present in lister",
	  .threshold = "-1",
	  .nodes = { { "existing1", "True", NULL }, { "existing2", "True", NULL } },
	  .delay = 2 * QUARANTINE,
	  .pods = { ON("a", RUNNING, "existing1"), ON("b", FAILED, "existing2"),
	      ON("c", SUCCEEDED, "existing2") } },
	{ "TestGCOrphaned: nodes present in client",
	  .threshold = "-1", .delay = 2 * QUARANTINE,
	  .pods = { ON("a", RUNNING, "existing1"), ON("b", FAILED, "existing2"),
	      ON("c", SUCCEEDED, "existing2") },
	  .client_nodes = { "existing1", "existing2" },
	  .quarantined = "a,b,c", .disruption = 1 },
	{ "TestGCOrphaned: no nodes",
	  .threshold = "-1", .delay = 2 * QUARANTINE,
	  .pods = { ON("a", FAILED, "deleted"), ON("b", SUCCEEDED, "deleted") },
	  .quarantined = "a,b", .disruption = 1, .deleted = "a,b" },
	{ "TestGCOrphaned: no nodes, one running pod",
	  .threshold = "-1", .delay = 2 * QUARANTINE,
	  .pods = { ON("a", FAILED, "deleted"), ON("b", SUCCEEDED, "deleted"),
	      ON("c", RUNNING, "deleted") },
	  .quarantined = "a,b,c", .disruption = 1, .deleted = "a,b,c", .patched = "c" },
	{ "TestGCOrphaned: quarantine not finished",
	  .threshold = "-1", .delay = QUARANTINE / 2,
	  .pods = { ON("a", FAILED, "deleted") },
	  .quarantined = "a" },
	{ "TestGCOrphaned: wrong nodes",
	  .threshold = "-1", .nodes = { { "existing", "True", NULL } },
	  .delay = 2 * QUARANTINE,
	  .pods = { ON("a", RUNNING, "deleted") },
	  .quarantined = "a", .disruption = 1, .deleted = "a", .patched = "a" },
	{ "TestGCOrphaned: some nodes missing",
	  .threshold = "-1", .nodes = { { "existing", "True", NULL } },
	  .delay = 2 * QUARANTINE,
	  .pods = { ON("a", FAILED, "deleted"), ON("b", FAILED, "existing"),
	      ON("c", SUCCEEDED, "deleted"), ON("d", RUNNING, "deleted") },
	  .quarantined = "a,c,d", .disruption = 1, .deleted = "a,c,d", .patched = "d" },
	{ "TestGCOrphaned: node added to client after quarantine",
	  .threshold = "-1", .delay = 2 * QUARANTINE,
	  .pods = { ON("a", RUNNING, "node") }, .client_nodes = { "node" },
	  .quarantined = "a", .disruption = 1 },
	{ "TestGCOrphaned: node added to informer after quarantine",
	  .threshold = "-1", .delay = 2 * QUARANTINE,
	  .pods = { ON("a", FAILED, "node") },
	  .quarantined = "a", .added_nodes = { { "node", "True", NULL } } },
	{ "TestGCOrphaned: node deleted from client after quarantine",
	  .threshold = "-1", .delay = 2 * QUARANTINE,
	  .pods = { ON("a", FAILED, "node") },
	  .quarantined = "a", .disruption = 1, .deleted = "a" },
	{ "TestGCOrphaned: node deleted from informer after quarantine",
	  .threshold = "-1", .nodes = { { "node", "True", NULL } },
	  .delay = 2 * QUARANTINE,
	  .pods = { ON("a", SUCCEEDED, "node") },
	  .deleted_nodes = { "node" } },
};

/* TestGCUnscheduledTerminating. kube's test runs gcUnscheduledTerminating alone; here the
 * whole controller runs, so node "node" is cached lest the orphan rule take b and c. */
static const struct gc_case unscheduled_cases[] = {
	{ "TestGCUnscheduledTerminating: Unscheduled pod in any phase must be deleted",
	  .threshold = "-1", .nodes = { { "node", "True", NULL } },
	  .pods = { DELETING("a", FAILED, NULL), DELETING("b", SUCCEEDED, NULL),
	      DELETING("c", RUNNING, NULL) },
	  .deleted = "a,b,c", .patched = "c" },
	{ "TestGCUnscheduledTerminating: Scheduled pod in any phase must not be deleted",
	  .threshold = "-1", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", FAILED, NULL), ON("b", SUCCEEDED, "node"),
	      DELETING("c", RUNNING, "node") } },
};

#define OOS_NODE(n, ready, taints) { n, ready, taints }
#define NO_PHASE(n, nd) { .name = n, .node = nd }
#define NO_PHASE_DELETING(n, nd) { .name = n, .node = nd, .deleting = 1 }
/* The five pods kube's second TestGCTerminating row puts on a node: no phase, no phase and
 * being deleted, Pending, Running, Unknown. */
#define FIVE_PODS(i, nd) NO_PHASE("a" #i, nd), NO_PHASE_DELETING("b" #i, nd), \
	ON("c" #i, PENDING, nd), ON("d" #i, RUNNING, nd), ON("e" #i, UNKNOWN, nd)

/* TestGCTerminating: the out-of-service rule. */
static const struct gc_case terminating_cases[] = {
	{ "TestGCTerminating: pods have deletion timestamp set and the corresponding nodes "
	  "are not ready",
	  .threshold = "-1",
	  .nodes = { OOS_NODE("worker-0", "False", NULL), OOS_NODE("worker-1", "False", NULL) },
	  .pods = { NO_PHASE_DELETING("a", "worker-0"), NO_PHASE_DELETING("b", "worker-1") } },
	{ "TestGCTerminating: some pods have deletion timestamp and/or phase set and some of "
	  "the corresponding nodes have an outofservice taint that are not ready",
	  .threshold = "-1",
	  .nodes = {
	      OOS_NODE("worker-0", "False", OUT_OF_SERVICE("NoExecute")),
	      OOS_NODE("worker-1", "False", NULL),
	      OOS_NODE("worker-2", "True", NULL),
	      OOS_NODE("worker-3", "False", OUT_OF_SERVICE("NoSchedule")),
	      OOS_NODE("worker-4", "False", OUT_OF_SERVICE("PreferNoSchedule")),
	      OOS_NODE("worker-5", "False", "[{\"key\":\"node.kubernetes.io/out-of-service\","
	          "\"value\":\"any-value\",\"effect\":\"NoExecute\"}]"),
	  },
	  .pods = {
	      FIVE_PODS(1, "worker-0"), FIVE_PODS(2, "worker-1"), FIVE_PODS(3, "worker-2"),
	      FIVE_PODS(4, "worker-3"),
	      /* kube's a5 is on worker-3, the others of its five on worker-4 */
	      NO_PHASE("a5", "worker-3"), NO_PHASE_DELETING("b5", "worker-4"),
	      ON("c5", PENDING, "worker-4"), ON("d5", RUNNING, "worker-4"),
	      ON("e5", UNKNOWN, "worker-4"),
	      FIVE_PODS(6, "worker-5"),
	  },
	  .deleted = "b1,b4,b5,b6", .patched = "b1,b4,b5,b6" },
	{ "TestGCTerminating: pods deleted from node tainted out-of-service",
	  .threshold = "-1",
	  .nodes = { OOS_NODE("worker", "False", OUT_OF_SERVICE("NoExecute")) },
	  .pods = { DELETING("a", RUNNING, "worker"), DELETING("b", FAILED, "worker"),
	      DELETING("c", SUCCEEDED, "worker") },
	  .deleted = "a,b,c", .patched = "a" },
};

/* A row: the cache, one pass or two, the last one's deletions and patches. */
static void
gc_case_holds(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct gc_case *row = w->row;

	controller_start(env, row->threshold);
	cache_nodes(w, row->nodes);
	cache_pods(w, row->pods);
	gc_pass(env, NOW, row->disruption, row->client_nodes);
	if (row->delay > 0) {
		assert_names("deleted by the first pass", env->pass.deleted, NULL, 0);
		assert_names("quarantined by the first pass", env->pass.quarantined,
		    row->quarantined, 0);
		for (int i = 0; i < MAX_NODES && row->added_nodes[i].name != NULL; i++) {
			ctl_cache(w, resource_find("nodes"), node_new(&row->added_nodes[i]));
			ctl_tell(w, INFORMER_ADDED, resource_find("nodes"),
			    node_new(&row->added_nodes[i]), NULL);
		}
		for (int i = 0; i < MAX_NODES && row->deleted_nodes[i] != NULL; i++)
			uncache_node(w, row->deleted_nodes[i]);
		gc_pass(env, NOW + row->delay, row->disruption, row->client_nodes);
	}
	assert_names("deleted", env->pass.deleted, row->deleted, row->ordered);
	assert_names("patched", env->pass.patched, row->patched, 0);
}

/* --- TestGCInspectingPatchedPodBeforeDeletion ------------------------------------------- */

/* What the patch makes of a pod, and the deletion after it. */
struct patch_case {
	const char *name;
	struct pod_spec pod;
	const char *patch;	/* the status patch, as JSON text */
};

static const struct patch_case patch_cases[] = {
	{ "TestGCInspectingPatchedPodBeforeDeletion: orphaned pod should have DisruptionTarget "
	  "condition added before deletion",
	  { .name = "testPod", .phase = RUNNING, .node = "deletedNode",
	    .conditions = "[{\"type\":\"Ready\",\"status\":\"True\"}]" },
	  "{\"metadata\":{\"uid\":\"uid-testPod\"},\"status\":{\"phase\":\"Failed\","
	  "\"$setElementOrder/conditions\":[{\"type\":\"Ready\"},{\"type\":\"DisruptionTarget\"}],"
	  "\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
	  "\"lastTransitionTime\":\"2026-01-01T00:00:40Z\",\"reason\":\"DeletionByPodGC\","
	  "\"message\":\"PodGC: node no longer exists\"}]}}" },
	{ "sqlkcm's: the pod's generation is observed by its status and the condition "
	  "(PodObservedGenerationTracking, GA)",
	  { .name = "testPod", .phase = RUNNING, .node = "deletedNode", .generation = 3 },
	  "{\"metadata\":{\"uid\":\"uid-testPod\"},\"status\":{\"phase\":\"Failed\","
	  "\"observedGeneration\":3,"
	  "\"$setElementOrder/conditions\":[{\"type\":\"DisruptionTarget\"}],"
	  "\"conditions\":[{\"type\":\"DisruptionTarget\",\"observedGeneration\":3,"
	  "\"status\":\"True\",\"lastTransitionTime\":\"2026-01-01T00:00:40Z\","
	  "\"reason\":\"DeletionByPodGC\",\"message\":\"PodGC: node no longer exists\"}]}}" },
	{ "sqlkcm's: a DisruptionTarget condition True already keeps its transition time",
	  { .name = "testPod", .phase = RUNNING, .node = "deletedNode",
	    .conditions = "[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
	    "\"lastTransitionTime\":\"2025-12-31T00:00:00Z\"}]" },
	  "{\"metadata\":{\"uid\":\"uid-testPod\"},\"status\":{\"phase\":\"Failed\","
	  "\"$setElementOrder/conditions\":[{\"type\":\"DisruptionTarget\"}],"
	  "\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
	  "\"lastTransitionTime\":\"2025-12-31T00:00:00Z\",\"reason\":\"DeletionByPodGC\","
	  "\"message\":\"PodGC: node no longer exists\"}]}}" },
};

/* The orphan's writes once its quarantine is over: the status patch, then the deletion
 * with gracePeriodSeconds 0. */
static void
patch_case_holds(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct patch_case *row = w->row;
	const struct pod_spec pods[] = { row->pod, { NULL } };
	cJSON *want = fixture_parse(row->patch);

	controller_start(env, NULL);
	cache_pods(w, pods);
	ctl_sync(w, "default/testPod", NOW);
	assert_int_equal(w->result.nwrites, 0);
	ctl_sync(w, "default/testPod", NOW + QUARANTINE);
	assert_int_equal(w->result.nwrites, 2);
	if (!cJSON_Compare(w->result.writes[0].body, want, 1)) {
		char *got = cJSON_PrintUnformatted(w->result.writes[0].body);

		print_error("patch: got %s\nwant %s\n", got, row->patch);
		free(got);
		cJSON_Delete(want);
		fail();
	}
	cJSON_Delete(want);
	assert_string_equal(w->result.writes[0].subresource, "status");
	assert_int_equal(w->result.writes[1].type, ACTION_DELETE);
	assert_string_equal(w->result.writes[1].name, "testPod");
	assert_int_equal(w->result.writes[1].delete_now, 1);
	assert_string_equal(w->result.writes[1].uid, "uid-testPod");
}

/* --- sqlkcm's own: the flag, the quarantine, the handlers ---------------------------------- */

/* The flag's default is kube's 12500: three terminated pods are left alone. */
static void
threshold_defaults_to_12500(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct node_spec nodes[] = { { "node", "True", NULL }, { NULL, NULL, NULL } };
	const struct pod_spec pods[] = { ON("a", FAILED, "node"), ON("b", SUCCEEDED, "node"),
	    ON("c", FAILED, "node"), { NULL } };
	const struct controller_flag *f = podgc_controller_type.flags;

	controller_start(env, NULL);
	assert_string_equal(f[0].name, "terminated-pod-gc-threshold");
	assert_int_equal(f[0].type, CONTROLLER_FLAG_INT);
	assert_null(f[1].name);
	assert_int_equal(controller_flag_int(w->c, "terminated-pod-gc-threshold"), 12500);
	cache_nodes(w, nodes);
	cache_pods(w, pods);
	gc_pass(env, NOW, 0, no_client_nodes);
	assert_names("deleted", env->pass.deleted, NULL, 0);
}

/* The quarantine runs from the first sync that misses the node: the pod is requeued for
 * its end, and deleted then. */
static void
quarantine_requeues_until_it_ends(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct pod_spec pods[] = { ON("a", RUNNING, "gone"), { NULL } };
	static const struct { double at, requeue; int writes; } steps[] = {
		{ NOW, QUARANTINE, 0 },
		{ NOW + 30, 10, 0 },
		{ NOW + 40, 0, 2 },
	};

	controller_start(env, NULL);
	cache_pods(w, pods);
	for (size_t i = 0; i < NELEM(steps); i++) {
		ctl_sync(w, "default/a", steps[i].at);
		assert_true(w->result.requeue_after == steps[i].requeue);
		assert_int_equal(w->result.nwrites, steps[i].writes);
		assert_int_equal(w->result.waiting != NULL, steps[i].writes == 0);
	}
}

/* Until the nodes informer has listed, a node missing from the cache proves nothing: no
 * orphan (a replay of a log without nodes, say). */
static void
no_orphans_before_the_nodes_are_listed(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct pod_spec pods[] = { ON("a", RUNNING, "gone"), { NULL } };

	store_close(w->store);
	if (store_open(":memory:", NULL, &w->store, &w->error) != 0)
		fail_msg("store_open: %s", w->error);
	controller_start(env, NULL);
	cache_pods(w, pods);
	gc_pass(env, NOW, 1, no_client_nodes);
	gc_pass(env, NOW + QUARANTINE, 1, no_client_nodes);
	assert_names("quarantined", env->pass.quarantined, NULL, 0);
	assert_names("deleted", env->pass.deleted, NULL, 0);
	ctl_listed(w, resource_find("nodes"));
	gc_pass(env, NOW + 2 * QUARANTINE, 1, no_client_nodes);
	assert_names("quarantined", env->pass.quarantined, "a", 0);
}

/* A node that shows up ends its quarantine: gone again, it starts a new one. */
static void
quarantine_ends_when_the_node_shows_up(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct node_spec node = { "flaky", "True", NULL };
	const struct pod_spec pods[] = { ON("a", RUNNING, "flaky"), { NULL } };

	controller_start(env, NULL);
	cache_pods(w, pods);
	ctl_sync(w, "default/a", NOW);
	ctl_cache(w, resource_find("nodes"), node_new(&node));
	ctl_tell(w, INFORMER_ADDED, resource_find("nodes"), node_new(&node), NULL);
	uncache_node(w, "flaky");
	ctl_sync(w, "default/a", NOW + QUARANTINE);
	assert_int_equal(w->result.nwrites, 0);
	assert_true(w->result.requeue_after == QUARANTINE);
}

/* What an informer event queues: the handler's rules, as data. */
struct event_case {
	const char *name;
	const char *threshold;
	struct node_spec nodes[MAX_NODES];
	struct pod_spec pods[MAX_PODS];		/* cached; the last is the event's pod */
	const char *old_phase;	/* a pod update: the phase before (NULL: an addition) */
	const char *node;	/* instead, an event on this cached node ... */
	int node_deleted;	/* ... which is deleted */
	const char *queued;	/* sorted */
};

static const struct event_case event_cases[] = {
	{ "sqlkcm's: a pod that terminates past the threshold queues those that go",
	  .threshold = "1", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", FAILED, "node"), ON("b", SUCCEEDED, "node"),
	      ON("c", FAILED, "node") },
	  .old_phase = RUNNING, .queued = "default/a,default/b" },
	{ "sqlkcm's: a terminated pod's update queues nothing",
	  .threshold = "1", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", FAILED, "node"), ON("b", SUCCEEDED, "node"),
	      ON("c", FAILED, "node") },
	  .old_phase = FAILED },
	{ "sqlkcm's: a terminated pod within the threshold queues nothing",
	  .threshold = "5", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", FAILED, "node"), ON("b", SUCCEEDED, "node") } },
	{ "sqlkcm's: a pod bound to a missing node queues itself",
	  .threshold = "-1", .pods = { ON("a", RUNNING, "gone") }, .queued = "default/a" },
	{ "sqlkcm's: an unscheduled pod being deleted queues itself",
	  .threshold = "-1", .pods = { DELETING("a", PENDING, NULL) }, .queued = "default/a" },
	{ "sqlkcm's: a running pod on its node queues nothing",
	  .threshold = "-1", .nodes = { { "node", "True", NULL } },
	  .pods = { ON("a", RUNNING, "node") } },
	{ "sqlkcm's: a deleted node queues its pods",
	  .threshold = "-1", .nodes = { { "node", "True", NULL }, { "other", "True", NULL } },
	  .pods = { ON("a", RUNNING, "node"), ON("b", FAILED, "node"),
	      ON("c", RUNNING, "other") },
	  .node = "node", .node_deleted = 1, .queued = "default/a,default/b" },
	{ "sqlkcm's: an out-of-service node queues its pods being deleted",
	  .threshold = "-1",
	  .nodes = { OOS_NODE("node", "False", OUT_OF_SERVICE("NoExecute")) },
	  .pods = { ON("a", RUNNING, "node"), DELETING("b", RUNNING, "node") },
	  .node = "node", .queued = "default/b" },
	{ "sqlkcm's: a node in service queues nothing",
	  .threshold = "-1", .nodes = { OOS_NODE("node", "True", OUT_OF_SERVICE("NoExecute")) },
	  .pods = { DELETING("b", RUNNING, "node") }, .node = "node" },
};

static void
event_case_holds(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct event_case *row = w->row;
	int last = 0;

	controller_start(env, row->threshold);
	cache_nodes(w, row->nodes);
	cache_pods(w, row->pods);
	while (last + 1 < MAX_PODS && row->pods[last + 1].name != NULL)
		last++;
	if (row->node != NULL && row->node_deleted) {
		uncache_node(w, row->node);
	} else if (row->node != NULL) {
		for (int i = 0; row->nodes[i].name != NULL; i++) {
			if (strcmp(row->nodes[i].name, row->node) == 0)
				ctl_tell(w, INFORMER_UPDATED, resource_find("nodes"),
				    node_new(&row->nodes[i]), NULL);
		}
	} else if (row->old_phase != NULL) {
		struct pod_spec old = row->pods[last];

		old.phase = row->old_phase;
		ctl_tell(w, INFORMER_UPDATED, resource_find("pods"),
		    pod_spec_new(&row->pods[last], last), pod_spec_new(&old, last));
	} else {
		ctl_tell(w, INFORMER_ADDED, resource_find("pods"),
		    pod_spec_new(&row->pods[last], last), NULL);
	}
	assert_names("queued", ctl_keep(w, ctl_keys(w)), row->queued, 0);
}

/* Pods terminating one by one: none is queued while the terminated pods are within the
 * threshold (the handler counts them once, then adds), the first to go once past it. */
static void
terminations_queue_nothing_until_past_the_threshold(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct node_spec nodes[] = { { "node", "True", NULL }, { NULL, NULL, NULL } };
	const struct pod_spec pods[] = { ON("a", FAILED, "node"), ON("b", SUCCEEDED, "node"),
	    ON("c", FAILED, "node") };
	static const char *const queued[] = { "", "", "default/a" };

	controller_start(env, "2");
	cache_nodes(w, nodes);
	for (int i = 0; i < (int)NELEM(pods); i++) {
		ctl_keys_clear(w);
		ctl_cache(w, resource_find("pods"), pod_spec_new(&pods[i], i));
		ctl_tell(w, INFORMER_ADDED, resource_find("pods"), pod_spec_new(&pods[i], i),
		    NULL);
		assert_names(pods[i].name, ctl_keep(w, ctl_keys(w)), queued[i], 0);
	}
}

/* With the daemon's registry, each deletion carries kube's counters, by namespace and
 * reason: the attempt counted when the delete is answered, attempt and error when the
 * status patch or the delete fails (the executor adds to them). */
static void
deletions_carry_kubes_counters(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct pod_spec pods[] = { DELETING("a", RUNNING, NULL), { NULL } };
	struct metrics_registry *registry = metrics_registry_new();
	struct buf text;

	env->config.metrics = registry;
	controller_start(env, "-1");
	cache_pods(w, pods);
	ctl_sync(w, "default/a", NOW);
	assert_int_equal(w->result.nwrites, 2);
	/* The patch fails: one attempt, one error. */
	assert_null(w->result.writes[0].count_done);
	metrics_counter_add(w->result.writes[0].count_failed[0], 1);
	metrics_counter_add(w->result.writes[0].count_failed[1], 1);
	/* The delete succeeds: one more attempt. */
	metrics_counter_add(w->result.writes[1].count_done, 1);
	buf_init(&text);
	metrics_render(registry, &text);
	assert_non_null(strstr(text.data, "pod_gc_collector_force_delete_pods_total"
	    "{namespace=\"default\",reason=\"unscheduled\"} 2\n"));
	assert_non_null(strstr(text.data, "pod_gc_collector_force_delete_pod_errors_total"
	    "{namespace=\"default\",reason=\"unscheduled\"} 1\n"));
	buf_free(&text);
	sync_result_clear(&w->result);
	controller_free(w->c);
	w->c = NULL;
	metrics_registry_free(registry);
}

/* list_keys at start: the forced pods and the terminated ones past the threshold. */
static void
list_keys_lists_every_candidate(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct node_spec nodes[] = {
		{ "node", "True", NULL },
		OOS_NODE("down", "False", OUT_OF_SERVICE("NoExecute")),
		{ NULL, NULL, NULL },
	};
	const struct pod_spec pods[] = {
		ON("old", FAILED, "node"), ON("new", SUCCEEDED, "node"),
		ON("running", RUNNING, "node"), DELETING("drained", RUNNING, "down"),
		ON("orphan", RUNNING, "gone"), DELETING("unscheduled", PENDING, NULL),
		{ NULL },
	};

	controller_start(env, "1");
	cache_nodes(w, nodes);
	cache_pods(w, pods);
	ctl_list_keys(w);
	assert_names("listed", ctl_keep(w, ctl_keys(w)), "default/drained,default/old,"
	    "default/orphan,default/unscheduled", 0);
}

static struct CMUnitTest
row_test(const char *name, CMUnitTestFunction f, const void *row)
{
	struct CMUnitTest t = { name, f, env_setup, env_teardown, (void *)(uintptr_t)row };

	return t;
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(terminated_cases) + NELEM(orphaned_cases) +
	    NELEM(unscheduled_cases) + NELEM(terminating_cases) + NELEM(patch_cases) +
	    NELEM(event_cases) + 7];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(terminated_cases); i++)
		tests[n++] = row_test(terminated_cases[i].name, gc_case_holds,
		    &terminated_cases[i]);
	for (size_t i = 0; i < NELEM(orphaned_cases); i++)
		tests[n++] = row_test(orphaned_cases[i].name, gc_case_holds, &orphaned_cases[i]);
	for (size_t i = 0; i < NELEM(unscheduled_cases); i++)
		tests[n++] = row_test(unscheduled_cases[i].name, gc_case_holds,
		    &unscheduled_cases[i]);
	for (size_t i = 0; i < NELEM(terminating_cases); i++)
		tests[n++] = row_test(terminating_cases[i].name, gc_case_holds,
		    &terminating_cases[i]);
	for (size_t i = 0; i < NELEM(patch_cases); i++)
		tests[n++] = row_test(patch_cases[i].name, patch_case_holds, &patch_cases[i]);
	tests[n++] = row_test("sqlkcm's: --terminated-pod-gc-threshold defaults to 12500",
	    threshold_defaults_to_12500, NULL);
	tests[n++] = row_test("sqlkcm's: the quarantine requeues the pod until it ends",
	    quarantine_requeues_until_it_ends, NULL);
	tests[n++] = row_test("sqlkcm's: no orphans before the nodes are listed",
	    no_orphans_before_the_nodes_are_listed, NULL);
	tests[n++] = row_test("sqlkcm's: the quarantine ends when the node shows up",
	    quarantine_ends_when_the_node_shows_up, NULL);
	for (size_t i = 0; i < NELEM(event_cases); i++)
		tests[n++] = row_test(event_cases[i].name, event_case_holds, &event_cases[i]);
	tests[n++] = row_test("sqlkcm's: terminations queue nothing until past the threshold",
	    terminations_queue_nothing_until_past_the_threshold, NULL);
	tests[n++] = row_test("sqlkcm's: list_keys lists every pod a rule applies to",
	    list_keys_lists_every_candidate, NULL);
	tests[n++] = row_test("kube's metrics: force_delete_pods_total and its errors, by "
	    "namespace and reason", deletions_carry_kubes_counters, NULL);
	return _cmocka_run_group_tests("podgc", tests, n, NULL, NULL);
}
