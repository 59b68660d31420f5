/*
 * test_daemonset.c - the DaemonSet controller (controllers/daemonset.c) against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/daemon. The cases are its
 * TestNodeShouldRunDaemonPod and the taint tests of daemon_controller_test.go
 * (TestNoScheduleTaintedDoesntEvicitRunningIntolerantPod,
 * TestNoExecuteTaintedDoesEvicitRunningIntolerantPod, TestTaintedNodeDaemonLaunchesToleratePod,
 * TestTaintPressureNodeDaemonLaunchesPod, network-unavailable for hostNetwork), the
 * arithmetic of update_test.go's TestGetUnavailableNumbers, util's
 * TestReplaceDaemonSetPodNodeNameNodeAffinity and TestGetTargetNodeName, the rolling
 * update's choices as update.go makes them, then syncs over an in-memory cache.
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
#include "controllers/daemonset.h"
#include "fixtures.h"
#include "history.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

#define NELEM(a) (sizeof (a) / sizeof (a)[0])

/* kube's simpleDaemonSetLabel, on the test node. */
#define NODE_LABELS "{\"name\":\"simple-daemon\",\"type\":\"production\"}"

/* --- NodeShouldRunDaemonPod ------------------------------------------------------------ */

static const struct should_run_case {
	const char *name;
	const char *spec;	/* the template's pod spec */
	const char *node_spec;	/* the node's spec */
	int should_run, should_continue;
} should_run_cases[] = {
	{ "ShouldRunDaemonPod", "{\"containers\":[{\"name\":\"c\"}]}", "{}", 1, 1 },
	{ "ErrPodNotMatchHostName", "{\"nodeName\":\"other-node\"}", "{}", 0, 0 },
	{ "the template's nodeName is the node", "{\"nodeName\":\"test-node\"}", "{}", 1, 1 },
	{ "ErrNodeSelectorNotMatch",
	    "{\"nodeSelector\":{\"name\":\"simple-daemon\",\"type\":\"test\"}}", "{}", 0, 0 },
	{ "ShouldRunDaemonPod (nodeSelector)", "{\"nodeSelector\":" NODE_LABELS "}", "{}", 1, 1 },
	{ "ErrPodAffinityNotMatch", "{\"affinity\":{\"nodeAffinity\":{"
	    "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
	    "\"matchExpressions\":[{\"key\":\"type\",\"operator\":\"In\",\"values\":[\"test\"]}]"
	    "}]}}}}", "{}", 0, 0 },
	{ "ShouldRunDaemonPod (affinity)", "{\"affinity\":{\"nodeAffinity\":{"
	    "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
	    "\"matchExpressions\":[{\"key\":\"type\",\"operator\":\"In\",\"values\":"
	    "[\"production\"]}]}]}}}}", "{}", 1, 1 },
	{ "affinity terms are ORed", "{\"affinity\":{\"nodeAffinity\":{"
	    "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
	    "{\"matchExpressions\":[{\"key\":\"type\",\"operator\":\"In\",\"values\":[\"x\"]}]},"
	    "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":"
	    "[\"test-node\"]}]}]}}}}", "{}", 1, 1 },
	{ "NotIn, Exists, DoesNotExist", "{\"affinity\":{\"nodeAffinity\":{"
	    "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
	    "\"matchExpressions\":[{\"key\":\"type\",\"operator\":\"NotIn\",\"values\":[\"x\"]},"
	    "{\"key\":\"name\",\"operator\":\"Exists\"},"
	    "{\"key\":\"zone\",\"operator\":\"DoesNotExist\"}]}]}}}}", "{}", 1, 1 },
	{ "Gt on a label that is no number", "{\"affinity\":{\"nodeAffinity\":{"
	    "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
	    "\"matchExpressions\":[{\"key\":\"type\",\"operator\":\"Gt\",\"values\":[\"1\"]}]"
	    "}]}}}}", "{}", 0, 0 },
	{ "an empty term matches nothing", "{\"affinity\":{\"nodeAffinity\":{"
	    "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{}]}}}}",
	    "{}", 0, 0 },
	{ "ShouldRunDaemonPodOnUnschedulableNode", "{}", "{\"unschedulable\":true}", 1, 1 },
	/* The taint tests. */
	{ "TestNoScheduleTaintedDoesntEvicitRunningIntolerantPod", "{}",
	    "{\"taints\":[{\"key\":\"node.kubernetes.io/x\",\"effect\":\"NoSchedule\"}]}", 0, 1 },
	{ "TestNoExecuteTaintedDoesEvicitRunningIntolerantPod", "{}",
	    "{\"taints\":[{\"key\":\"node.kubernetes.io/x\",\"effect\":\"NoExecute\"}]}", 0, 0 },
	{ "TestTaintedNodeDaemonLaunchesToleratePod",
	    "{\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"x\","
	    "\"effect\":\"NoSchedule\"}]}",
	    "{\"taints\":[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]}",
	    1, 1 },
	{ "a toleration of another value does not", "{\"tolerations\":[{\"key\":\"dedicated\","
	    "\"operator\":\"Equal\",\"value\":\"y\",\"effect\":\"NoSchedule\"}]}",
	    "{\"taints\":[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]}",
	    0, 1 },
	{ "Exists with no key tolerates every taint", "{\"tolerations\":[{\"operator\":"
	    "\"Exists\"}]}", "{\"taints\":[{\"key\":\"a\",\"effect\":\"NoExecute\"},{\"key\":\"b\","
	    "\"effect\":\"NoSchedule\"}]}", 1, 1 },
	{ "TestTaintPressureNodeDaemonLaunchesPod", "{}", "{\"taints\":["
	    "{\"key\":\"node.kubernetes.io/disk-pressure\",\"effect\":\"NoSchedule\"},"
	    "{\"key\":\"node.kubernetes.io/memory-pressure\",\"effect\":\"NoSchedule\"},"
	    "{\"key\":\"node.kubernetes.io/pid-pressure\",\"effect\":\"NoSchedule\"},"
	    "{\"key\":\"node.kubernetes.io/unschedulable\",\"effect\":\"NoSchedule\"},"
	    "{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoExecute\"},"
	    "{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":\"NoExecute\"}]}", 1, 1 },
	{ "network-unavailable without hostNetwork", "{}", "{\"taints\":[{\"key\":"
	    "\"node.kubernetes.io/network-unavailable\",\"effect\":\"NoSchedule\"}]}", 0, 1 },
	{ "network-unavailable with hostNetwork", "{\"hostNetwork\":true}", "{\"taints\":[{"
	    "\"key\":\"node.kubernetes.io/network-unavailable\",\"effect\":\"NoSchedule\"}]}",
	    1, 1 },
	{ "PreferNoSchedule is no bar", "{}", "{\"taints\":[{\"key\":\"a\",\"effect\":"
	    "\"PreferNoSchedule\"}]}", 1, 1 },
	{ "a toleration with no key and Equal matches the value", "{\"tolerations\":[{"
	    "\"operator\":\"Equal\",\"value\":\"v\"}]}", "{\"taints\":[{\"key\":\"a\","
	    "\"value\":\"v\",\"effect\":\"NoExecute\"}]}", 1, 1 },
};

static void
should_run_case(void **state)
{
	const struct should_run_case *c = *state;
	char *ds_text = xasprintf("{\"metadata\":{\"name\":\"ds\",\"namespace\":\"default\"},"
	    "\"spec\":{\"selector\":{\"matchLabels\":" NODE_LABELS "},\"template\":{"
	    "\"metadata\":{\"labels\":" NODE_LABELS "},\"spec\":%s}}}", c->spec);
	char *node_text = xasprintf("{\"metadata\":{\"name\":\"test-node\",\"labels\":"
	    NODE_LABELS "},\"spec\":%s}", c->node_spec);
	cJSON *ds = fixture_parse(ds_text), *node = fixture_parse(node_text);
	int run = -1, cont = -1;

	daemonset_node_should_run(node, ds, &run, &cont);
	assert_int_equal(run, c->should_run);
	assert_int_equal(cont, c->should_continue);
	cJSON_Delete(ds);
	cJSON_Delete(node);
	free(ds_text);
	free(node_text);
}

/* --- the arithmetic -------------------------------------------------------------------- */

/* TestGetUnavailableNumbers: the strategy, desired nodes, maxSurge and maxUnavailable. */
static const struct counts_case {
	const char *name;
	const char *strategy;
	long long desired, max_surge, max_unavailable;
} counts_cases[] = {
	{ "No nodes", "{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":0}}",
	    0, 0, 0 },
	{ "Two nodes with ready pods", "{\"type\":\"RollingUpdate\",\"rollingUpdate\":"
	    "{\"maxUnavailable\":1}}", 2, 0, 1 },
	{ "Two nodes, one node without pods", "{\"type\":\"RollingUpdate\",\"rollingUpdate\":"
	    "{\"maxUnavailable\":0}}", 2, 0, 1 },
	{ "Two nodes, one node without pods, surge", "{\"type\":\"RollingUpdate\","
	    "\"rollingUpdate\":{\"maxUnavailable\":0,\"maxSurge\":0}}", 2, 0, 1 },
	{ "Two nodes with pods, MaxUnavailable in percents", "{\"type\":\"RollingUpdate\","
	    "\"rollingUpdate\":{\"maxUnavailable\":\"50%\"}}", 2, 0, 1 },
	{ "Two nodes with pods, MaxUnavailable in percents, surge", "{\"type\":"
	    "\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":0,\"maxSurge\":\"50%\"}}",
	    2, 1, 0 },
	{ "Two nodes with pods, MaxUnavailable is 100%, surge", "{\"type\":\"RollingUpdate\","
	    "\"rollingUpdate\":{\"maxUnavailable\":0,\"maxSurge\":\"100%\"}}", 2, 2, 0 },
	{ "Two nodes with pods, MaxUnavailable in percents, pod terminating", "{\"type\":"
	    "\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":\"50%\"}}", 3, 0, 2 },
	{ "OnDelete has neither", "{\"type\":\"OnDelete\"}", 3, 0, 1 },
	{ "percentages round up", "{\"type\":\"RollingUpdate\",\"rollingUpdate\":"
	    "{\"maxUnavailable\":\"10%\"}}", 11, 0, 2 },
};

static void
counts_case(void **state)
{
	const struct counts_case *c = *state;
	char *text = xasprintf("{\"spec\":{\"updateStrategy\":%s}}", c->strategy);
	cJSON *ds = fixture_parse(text);
	long long surge = -1, unavailable = -1;
	char *error = NULL;

	assert_int_equal(daemonset_max_counts(ds, c->desired, &surge, &unavailable, &error), 0);
	assert_int_equal(surge, c->max_surge);
	assert_int_equal(unavailable, c->max_unavailable);
	cJSON_Delete(ds);
	free(text);
}

static void
bad_percentages_are_errors(void **state)
{
	static const char *const bad[] = { "\"50\"", "\"%\"", "\"x%\"", "\"5.5%\"", "true" };
	(void)state;
	for (size_t i = 0; i < NELEM(bad); i++) {
		char *text = xasprintf("{\"spec\":{\"updateStrategy\":{\"type\":\"RollingUpdate\","
		    "\"rollingUpdate\":{\"maxUnavailable\":%s}}}}", bad[i]);
		cJSON *ds = fixture_parse(text);
		long long s, u;
		char *error = NULL;

		if (daemonset_max_counts(ds, 4, &s, &u, &error) != -1)
			fail_msg("%s was taken", bad[i]);
		assert_non_null(error);
		free(error);
		cJSON_Delete(ds);
		free(text);
	}
}

/* --- the rolling update's choices ------------------------------------------------------ */

/* Each node as "<ok><new><old><new available><old available><should run>" in 0 and 1; the
 * nodes to delete the old pod of and to create a new pod on, as 0/1 strings. */
static const struct rolling_case {
	const char *name;
	long long surge, unavailable, desired;
	const char *nodes[6];
	const char *want_delete, *want_create;
} rolling_cases[] = {
	{ "maxUnavailable 1: one old available pod goes", 0, 1, 3,
	    { "101011", "101011", "101011" }, "100", "000" },
	{ "an unavailable old pod goes whatever the budget", 0, 1, 3,
	    { "101001", "101011", "101011" }, "100", "000" },
	{ "an unavailable new pod uses the budget", 0, 1, 3,
	    { "110001", "101011", "101011" }, "000", "000" },
	{ "an available new pod leaves the budget", 0, 2, 3,
	    { "110101", "101011", "101011" }, "011", "000" },
	{ "a node with no pod counts as unavailable", 0, 1, 3,
	    { "100001", "101011", "101011" }, "000", "000" },
	{ "excess pods count as unavailable", 0, 2, 3,
	    { "000001", "101011", "101011" }, "010", "000" },
	{ "surge 1: one new pod beside an old one", 1, 0, 3,
	    { "101011", "101011", "101011" }, "000", "100" },
	{ "surge: an unavailable old pod gets its new one at once", 1, 0, 3,
	    { "101001", "101001", "101011" }, "000", "111" },
	{ "surge: an available new pod retires the old one", 1, 0, 2,
	    { "111111", "101011" }, "10", "01" },
	{ "surge: an unavailable new pod holds the surge", 1, 0, 2,
	    { "111011", "101011" }, "00", "00" },
	{ "surge: an old pod unavailable where none should run goes", 1, 0, 1,
	    { "101000", "101011" }, "10", "01" },
};

static void
rolling_case(void **state)
{
	const struct rolling_case *c = *state;
	struct daemonset_node_pods nodes[6];
	int del[6], cre[6], n = 0;
	char got_delete[7] = { 0 }, got_create[7] = { 0 };

	memset(nodes, 0, sizeof nodes);
	for (; n < 6 && c->nodes[n] != NULL; n++) {
		const char *s = c->nodes[n];

		nodes[n].node = "n";
		nodes[n].ok = s[0] == '1';
		nodes[n].has_new = s[1] == '1';
		nodes[n].has_old = s[2] == '1';
		nodes[n].new_available = s[3] == '1';
		nodes[n].old_available = s[4] == '1';
		nodes[n].should_run = s[5] == '1';
	}
	daemonset_rolling_update(nodes, n, c->desired, c->surge, c->unavailable, del, cre);
	for (int i = 0; i < n; i++) {
		got_delete[i] = del[i] ? '1' : '0';
		got_create[i] = cre[i] ? '1' : '0';
	}
	assert_string_equal(got_delete, c->want_delete);
	assert_string_equal(got_create, c->want_create);
}

/* --- the pod --------------------------------------------------------------------------- */

/* TestReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become the one on the
 * node's name; preferred terms stay. TestGetTargetNodeName: read back. */
static void
pods_are_pinned_by_node_affinity(void **state)
{
	cJSON *spec = fixture_parse("{\"affinity\":{\"nodeAffinity\":{"
	    "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
	    "\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\"}]}]},"
	    "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1}]}}}");
	cJSON *pod = cJSON_CreateObject();
	char *text;

	(void)state;
	daemonset_pin_to_node(spec, "node-1");
	text = history_canonical_json(spec);
	assert_string_equal(text, "{\"affinity\":{\"nodeAffinity\":{"
	    "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1}],"
	    "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
	    "\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":"
	    "[\"node-1\"]}]}]}}}}");
	free(text);
	cJSON_AddItemToObject(pod, "spec", spec);
	assert_string_equal(daemonset_target_node(pod), "node-1");
	json_set(spec, "nodeName", cJSON_CreateString("node-2"));
	assert_string_equal(daemonset_target_node(pod), "node-2");
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "affinity");
	assert_null(daemonset_target_node(pod));
	cJSON_Delete(pod);
}

/* TestCreatePodTemplate: the labels, and the daemon tolerations added once. */
static void
pod_template_has_labels_and_tolerations(void **state)
{
	cJSON *ds = fixture_parse("{\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"a\":"
	    "\"b\"}},\"spec\":{\"hostNetwork\":true,\"tolerations\":[{\"key\":"
	    "\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":"
	    "\"NoExecute\"}]}}}}");
	cJSON *t = daemonset_pod_template(ds, 3, "abc");

	(void)state;
	assert_string_equal(json_string(json_path(t, "metadata.labels"),
	    DAEMONSET_GENERATION_LABEL), "3");
	assert_string_equal(json_string(json_path(t, "metadata.labels"), HISTORY_HASH_LABEL),
	    "abc");
	assert_int_equal(cJSON_GetArraySize(json_path(t, "spec.tolerations")), 7);
	cJSON_Delete(t);
	t = daemonset_pod_template(ds, -1, "");
	assert_null(json_path(t, "metadata.labels." DAEMONSET_GENERATION_LABEL));
	cJSON_Delete(t);
	cJSON_Delete(ds);
}

/* --- syncs ----------------------------------------------------------------------------- */

#define SYNC_NOW 1700000000.0

static cJSON *
node_new(const char *name, const char *labels, const char *spec)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{"
	    "\"name\":\"%s\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\",\"labels\":%s},"
	    "\"spec\":%s}", name, name, labels, spec);
	cJSON *n = fixture_parse(text);

	free(text);
	return n;
}

static cJSON *
ds_new(void)
{
	return fixture_parse("{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{"
	    "\"name\":\"ds\",\"namespace\":\"default\",\"uid\":\"ds-uid\",\"resourceVersion\":"
	    "\"5\",\"generation\":1,\"annotations\":{\"" DAEMONSET_GENERATION_ANNOTATION
	    "\":\"1\"}},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":{"
	    "\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":{\"nodeSelector\":{\"ds\":\"yes\"},"
	    "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}},\"updateStrategy\":{\"type\":"
	    "\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":1,\"maxSurge\":0}},"
	    "\"revisionHistoryLimit\":10},\"status\":{}}");
}

/* A pod of the DaemonSet on node with hash, ready or not. */
static cJSON *
ds_pod_new(const char *name, const char *node, const char *hash, const char *phase, int ready)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
	    "\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\",\"resourceVersion\":\"3\","
	    "\"creationTimestamp\":\"2023-11-14T00:00:00Z\",\"labels\":{\"app\":\"d\","
	    "\"controller-revision-hash\":\"%s\"},\"ownerReferences\":[{\"apiVersion\":"
	    "\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"ds\",\"uid\":\"ds-uid\","
	    "\"controller\":true}]},\"spec\":{\"nodeName\":\"%s\"},\"status\":{\"phase\":\"%s\","
	    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\",\"lastTransitionTime\":"
	    "\"2023-11-14T00:00:00Z\"}]}}", name, name, hash, node, phase,
	    ready ? "True" : "False");
	cJSON *p = fixture_parse(text);

	free(text);
	return p;
}

static struct ctl_world *
world_new(void)
{
	struct ctl_world *w = ctl_world_new(&daemonset_controller_type, NULL);

	ctl_cache(w, resource_find("nodes"), node_new("a", "{\"ds\":\"yes\"}", "{}"));
	ctl_cache(w, resource_find("nodes"), node_new("b", "{\"ds\":\"yes\"}", "{}"));
	ctl_cache(w, resource_find("nodes"), node_new("c", "{\"ds\":\"no\"}", "{}"));
	return w;
}

/* The hash this sync would name the revision with. */
static char *
ds_hash(void)
{
	cJSON *ds = ds_new();
	char *h = history_template_hash(json_path(ds, "spec.template"), -1);

	cJSON_Delete(ds);
	return h;
}

/* TestSelectorDaemonLaunchesPods: a revision, then a pod on each selected node, pinned by
 * affinity, with the hash and generation labels; the status counts them desired. */
static void
sync_creates_a_revision_and_a_pod_per_selected_node(void **state)
{
	struct ctl_world *w = world_new();
	char *hash = ds_hash(), *name = xasprintf("ds-%s", hash), *data;
	const struct sync_result *r = &w->result;

	(void)state;
	ctl_cache(w, resource_find("daemonsets"), ds_new());
	ctl_sync(w, "default/ds", SYNC_NOW);
	assert_int_equal(r->nwrites, 1);
	assert_int_equal(r->writes[0].type, ACTION_CREATE);
	assert_string_equal(r->writes[0].name, name);
	assert_int_equal(json_int(r->writes[0].body, "revision", 0), 1);
	assert_string_equal(json_string(json_path(r->writes[0].body, "metadata.labels"),
	    HISTORY_HASH_LABEL), hash);
	/* The data as kube's getPatch writes it, byte for byte: the template's keys sorted at
	 * every level, "$patch" first, nothing between the tokens. */
	data = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(r->writes[0].body,
	    "data"));
	assert_string_equal(data, "{\"spec\":{\"template\":{\"$patch\":\"replace\","
	    "\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":{\"containers\":"
	    "[{\"image\":\"i\",\"name\":\"c\"}],\"nodeSelector\":{\"ds\":\"yes\"}}}}}");
	free(data);
	assert_true(r->creating);
	assert_int_equal(r->nmanage, 2);
	assert_string_equal(daemonset_target_node(r->manage[0].body), "a");
	assert_string_equal(daemonset_target_node(r->manage[1].body), "b");
	assert_string_equal(json_string(json_path(r->manage[0].body, "metadata.labels"),
	    HISTORY_HASH_LABEL), hash);
	assert_string_equal(json_string(json_path(r->manage[0].body, "metadata.labels"),
	    DAEMONSET_GENERATION_LABEL), "1");
	assert_string_equal(json_string(json_path(r->manage[0].body, "metadata"),
	    "generateName"), "ds-");
	assert_null(json_path(r->manage[0].body, "spec.nodeName"));
	assert_non_null(r->status);
	assert_int_equal(json_int(json_path(r->status->body, "status"),
	    "desiredNumberScheduled", -1), 2);
	assert_int_equal(json_int(json_path(r->status->body, "status"),
	    "numberUnavailable", -1), 2);
	free(name);
	free(hash);
	ctl_world_free(w);
}

/* A revision with the template's data already there (kube's, by another name) is current:
 * its hash labels the pods, nothing is created but the pods. */
static void
sync_adopts_the_hash_of_a_revision_with_the_same_data(void **state)
{
	struct ctl_world *w = world_new();
	cJSON *ds = ds_new();
	cJSON *rev = fixture_parse("{\"apiVersion\":\"apps/v1\",\"kind\":\"ControllerRevision\","
	    "\"metadata\":{\"name\":\"ds-kubehash\",\"namespace\":\"default\",\"uid\":\"rev-uid\","
	    "\"resourceVersion\":\"4\",\"labels\":{\"controller-revision-hash\":\"kubehash\"},"
	    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":"
	    "\"ds\",\"uid\":\"ds-uid\",\"controller\":true}]},\"revision\":1}");
	cJSON *data = cJSON_CreateObject(), *t;
	const struct sync_result *r = &w->result;

	(void)state;
	t = cJSON_Duplicate(json_path(ds, "spec.template"), 1);
	json_set(t, "$patch", cJSON_CreateString("replace"));
	cJSON_AddItemToObject(cJSON_AddObjectToObject(data, "spec"), "template", t);
	cJSON_AddItemToObject(rev, "data", data);
	ctl_cache(w, resource_find("controllerrevisions"), rev);
	ctl_cache(w, resource_find("daemonsets"), ds);
	ctl_sync(w, "default/ds", SYNC_NOW);
	assert_int_equal(r->nwrites, 0);
	assert_int_equal(r->nmanage, 2);
	assert_string_equal(json_string(json_path(r->manage[0].body, "metadata.labels"),
	    HISTORY_HASH_LABEL), "kubehash");
	ctl_world_free(w);
}

/* kube's controlledHistories: an orphan revision the selector matches is adopted and, its
 * data being the template's, current; one it does not match is left alone. */
static void
sync_adopts_an_orphan_revision(void **state)
{
	struct ctl_world *w = world_new();
	cJSON *ds = ds_new();
	const char *labels[2] = { "d", "not-d" };
	const struct sync_result *r = &w->result;

	(void)state;
	for (int i = 0; i < 2; i++) {
		char *text = xasprintf("{\"apiVersion\":\"apps/v1\",\"kind\":"
		    "\"ControllerRevision\",\"metadata\":{\"name\":\"ds-orphan%d\",\"namespace\":"
		    "\"default\",\"uid\":\"rev-%d\",\"resourceVersion\":\"4\",\"labels\":{"
		    "\"app\":\"%s\",\"controller-revision-hash\":\"orphan%d\"}},\"revision\":%d}",
		    i, i, labels[i], i, i + 1);
		cJSON *rev = fixture_parse(text), *data = cJSON_CreateObject(), *t;

		t = cJSON_Duplicate(json_path(ds, "spec.template"), 1);
		json_set(t, "$patch", cJSON_CreateString("replace"));
		cJSON_AddItemToObject(cJSON_AddObjectToObject(data, "spec"), "template", t);
		cJSON_AddItemToObject(rev, "data", data);
		ctl_cache(w, resource_find("controllerrevisions"), rev);
		free(text);
	}
	ctl_cache(w, resource_find("daemonsets"), ds);
	ctl_sync(w, "default/ds", SYNC_NOW);
	assert_int_equal(r->nclaims, 1);
	assert_string_equal(r->claims[0].verb, "adopt");
	assert_string_equal(r->claims[0].name, "ds-orphan0");
	assert_true(r->recheck_owner);
	assert_int_equal(r->nwrites, 0);
	assert_string_equal(json_string(json_path(r->manage[0].body, "metadata.labels"),
	    HISTORY_HASH_LABEL), "orphan0");
	ctl_world_free(w);
}

/* TestNoExecuteTaintedDoesEvicitRunningIntolerantPod and misscheduled pods: pods where
 * they may not stay are deleted; the status counts them misscheduled. A failed pod is
 * deleted with FailedDaemonPod. */
static void
sync_deletes_pods_that_may_not_stay(void **state)
{
	struct ctl_world *w = ctl_world_new(&daemonset_controller_type, NULL);
	char *hash = ds_hash();
	const struct sync_result *r = &w->result;
	cJSON *rev;
	char *rev_text;

	(void)state;
	rev_text = xasprintf("{\"apiVersion\":\"apps/v1\",\"kind\":\"ControllerRevision\","
	    "\"metadata\":{\"name\":\"ds-%s\",\"namespace\":\"default\",\"uid\":\"rev-uid\","
	    "\"resourceVersion\":\"4\",\"labels\":{\"controller-revision-hash\":\"%s\"},"
	    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":"
	    "\"ds\",\"uid\":\"ds-uid\",\"controller\":true}]},\"revision\":1}", hash, hash);
	rev = fixture_parse(rev_text);
	{
		cJSON *ds = ds_new(), *data = cJSON_CreateObject(), *t;

		t = cJSON_Duplicate(json_path(ds, "spec.template"), 1);
		json_set(t, "$patch", cJSON_CreateString("replace"));
		cJSON_AddItemToObject(cJSON_AddObjectToObject(data, "spec"), "template", t);
		cJSON_AddItemToObject(rev, "data", data);
		ctl_cache(w, resource_find("daemonsets"), ds);
	}
	ctl_cache(w, resource_find("controllerrevisions"), rev);
	ctl_cache(w, resource_find("nodes"), node_new("a", "{\"ds\":\"yes\"}",
	    "{\"taints\":[{\"key\":\"k\",\"effect\":\"NoExecute\"}]}"));
	ctl_cache(w, resource_find("nodes"), node_new("b", "{\"ds\":\"no\"}", "{}"));
	ctl_cache(w, resource_find("nodes"), node_new("c", "{\"ds\":\"yes\"}", "{}"));
	ctl_cache(w, resource_find("pods"), ds_pod_new("p-a", "a", hash, "Running", 1));
	ctl_cache(w, resource_find("pods"), ds_pod_new("p-b", "b", hash, "Running", 1));
	ctl_cache(w, resource_find("pods"), ds_pod_new("p-c", "c", hash, "Failed", 0));
	ctl_sync(w, "default/ds", SYNC_NOW);
	assert_int_equal(r->nwrites, 0);
	assert_false(r->creating);
	assert_int_equal(r->nmanage, 3);
	assert_string_equal(r->manage[0].name, "p-a");
	assert_string_equal(r->manage[1].name, "p-b");
	assert_string_equal(r->manage[2].name, "p-c");
	assert_int_equal(r->nevents, 1);
	assert_string_equal(r->events[0].reason, "FailedDaemonPod");
	assert_string_equal(r->events[0].message,
	    "Found failed daemon pod default/p-c on node c, will try to kill it");
	assert_int_equal(json_int(json_path(r->status->body, "status"), "numberMisscheduled",
	    -1), 2);
	assert_int_equal(json_int(json_path(r->status->body, "status"),
	    "desiredNumberScheduled", -1), 1);
	free(rev_text);
	free(hash);
	ctl_world_free(w);
}

/* TestDealsWithExistingPods: of two pods on a node the oldest stays, whatever their names;
 * creations come before deletions (b gets its pod first). */
static void
sync_keeps_the_oldest_of_two_pods(void **state)
{
	struct ctl_world *w = world_new();
	cJSON *newer = ds_pod_new("a-1-newer", "a", "h", "Running", 1);
	const struct sync_result *r = &w->result;

	(void)state;
	json_set(json_child_object(newer, "metadata"), "creationTimestamp",
	    cJSON_CreateString("2023-11-15T00:00:00Z"));
	ctl_cache(w, resource_find("daemonsets"), ds_new());
	ctl_cache(w, resource_find("pods"), newer);
	ctl_cache(w, resource_find("pods"), ds_pod_new("a-2-older", "a", "h", "Running", 1));
	ctl_sync(w, "default/ds", SYNC_NOW);
	assert_true(r->creating);
	assert_int_equal(r->nmanage, 1);
	assert_string_equal(daemonset_target_node(r->manage[0].body), "b");
	ctl_cache(w, resource_find("pods"), ds_pod_new("b-1", "b", "h", "Running", 1));
	ctl_sync(w, "default/ds", SYNC_NOW);
	assert_false(r->creating);
	assert_int_equal(r->nmanage, 1);
	assert_string_equal(r->manage[0].name, "a-1-newer");
	ctl_world_free(w);
}

/* TestDaemonKillFailedPods with kube's backoff: a failed pod is deleted with
 * FailedDaemonPod, then the node's next failed pod waits 1 s, the one after 2 s. */
static void
failed_pods_are_deleted_with_backoff(void **state)
{
	struct ctl_world *w = world_new();
	const struct sync_result *r = &w->result;
	static const struct {
		double at;
		int deleted;
		double requeue;
	} steps[] = {
		{ 0, 1, 0 }, { 0.5, 0, 1 }, { 1.5, 1, 0 }, { 2.5, 0, 2 }, { 3.6, 1, 0 },
	};

	char *hash = ds_hash();

	(void)state;
	/* Pods of the current revision: the rolling update, which replaces unavailable old
	 * pods at once, has nothing to do. */
	ctl_cache(w, resource_find("daemonsets"), ds_new());
	ctl_cache(w, resource_find("pods"), ds_pod_new("a-1", "a", hash, "Failed", 0));
	ctl_cache(w, resource_find("pods"), ds_pod_new("b-1", "b", hash, "Running", 1));
	for (size_t i = 0; i < NELEM(steps); i++) {
		ctl_sync(w, "default/ds", SYNC_NOW + steps[i].at);
		if (steps[i].deleted) {
			assert_int_equal(r->nmanage, 1);
			assert_string_equal(r->manage[0].name, "a-1");
			assert_int_equal(r->nevents, 1);
			assert_string_equal(r->events[0].reason, "FailedDaemonPod");
		} else {
			assert_int_equal(r->nmanage, 0);
			assert_int_equal(r->nevents, 0);
			assert_true(r->requeue_after == steps[i].requeue);
		}
	}
	free(hash);
	ctl_world_free(w);
}

/* TestDaemonSetAdoptsPods / ReleasesPods (kube's ClaimPods): an orphan the selector
 * matches is adopted after a live check of the DaemonSet and counts as its pod; a pod of
 * ours whose labels no longer match is released and no longer counts; an orphan that does
 * not match is left alone. */
static void
sync_adopts_orphans_and_releases_strays(void **state)
{
	struct ctl_world *w = world_new();
	const struct sync_result *r = &w->result;
	cJSON *orphan = ds_pod_new("orphan-a", "a", "h", "Running", 1);
	cJSON *stray = ds_pod_new("stray-b", "b", "h", "Running", 1);
	cJSON *other = ds_pod_new("other-b", "b", "h", "Running", 1);

	(void)state;
	cJSON_DeleteItemFromObjectCaseSensitive(json_child_object(orphan, "metadata"),
	    "ownerReferences");
	json_set(json_child_object(json_child_object(stray, "metadata"), "labels"), "app", cJSON_CreateString("not-d"));
	cJSON_DeleteItemFromObjectCaseSensitive(json_child_object(other, "metadata"),
	    "ownerReferences");
	json_set(json_child_object(json_child_object(other, "metadata"), "labels"), "app", cJSON_CreateString("not-d"));
	ctl_cache(w, resource_find("daemonsets"), ds_new());
	ctl_cache(w, resource_find("pods"), orphan);
	ctl_cache(w, resource_find("pods"), stray);
	ctl_cache(w, resource_find("pods"), other);
	ctl_sync(w, "default/ds", SYNC_NOW);
	assert_int_equal(r->nclaims, 2);
	assert_string_equal(r->claims[0].verb, "release");
	assert_string_equal(r->claims[0].name, "stray-b");
	assert_string_equal(r->claims[1].verb, "adopt");
	assert_string_equal(r->claims[1].name, "orphan-a");
	assert_true(r->recheck_owner);
	/* a has its (adopted) pod; b, whose pod was released, gets one. */
	assert_true(r->creating);
	assert_int_equal(r->nmanage, 1);
	assert_string_equal(daemonset_target_node(r->manage[0].body), "b");
	ctl_world_free(w);
}

/* An undo: the template is an older revision's again; that revision is renumbered past the
 * newest, and its hash is the one new pods carry. */
static void
sync_undo_renumbers_the_old_revision(void **state)
{
	struct ctl_world *w = world_new();
	cJSON *ds = ds_new();
	const struct sync_result *r = &w->result;
	const char *names[2] = { "ds-old", "ds-new" };
	const char *images[2] = { "i", "j" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		char *text = xasprintf("{\"apiVersion\":\"apps/v1\",\"kind\":"
		    "\"ControllerRevision\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
		    "\"default\",\"uid\":\"rev-%d\",\"resourceVersion\":\"4\",\"labels\":{"
		    "\"controller-revision-hash\":\"%s\"},\"ownerReferences\":[{\"apiVersion\":"
		    "\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"ds\",\"uid\":\"ds-uid\","
		    "\"controller\":true}]},\"revision\":%d}", names[i], i, names[i] + 3, i + 1);
		cJSON *rev = fixture_parse(text), *data = cJSON_CreateObject(), *t;

		t = cJSON_Duplicate(json_path(ds, "spec.template"), 1);
		json_set(json_path(t, "spec.containers")->child, "image",
		    cJSON_CreateString(images[i]));
		json_set(t, "$patch", cJSON_CreateString("replace"));
		cJSON_AddItemToObject(cJSON_AddObjectToObject(data, "spec"), "template", t);
		cJSON_AddItemToObject(rev, "data", data);
		ctl_cache(w, resource_find("controllerrevisions"), rev);
		free(text);
	}
	ctl_cache(w, resource_find("daemonsets"), ds);	/* image "i": the old one */
	ctl_sync(w, "default/ds", SYNC_NOW);
	assert_int_equal(r->nwrites, 1);
	assert_int_equal(r->writes[0].type, ACTION_UPDATE);
	assert_string_equal(r->writes[0].name, "ds-old");
	assert_int_equal(json_int(r->writes[0].body, "revision", 0), 3);
	assert_string_equal(json_string(json_path(r->manage[0].body, "metadata.labels"),
	    HISTORY_HASH_LABEL), "old");
	ctl_world_free(w);
}

/* Pod events lower expectations and queue the owner; a node's change queues the
 * DaemonSets it changes something for (kube's syncNodeUpdate), heartbeats none. */
static void
events_queue_the_daemonset(void **state)
{
	struct ctl_world *w = world_new();
	char *keys;

	(void)state;
	ctl_cache(w, resource_find("daemonsets"), ds_new());
	ctl_tell(w, INFORMER_ADDED, resource_find("pods"), ds_pod_new("p", "a", "h", "Running",
	    1), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "default/ds");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_UPDATED, resource_find("nodes"), node_new("a", "{\"ds\":\"yes\"}",
	    "{}"), node_new("a", "{\"ds\":\"yes\"}", "{}"));
	keys = ctl_keys(w);
	assert_string_equal(keys, "");
	free(keys);
	/* Labels that take a node with no pod out of the selection: nothing to do. */
	ctl_tell(w, INFORMER_UPDATED, resource_find("nodes"), node_new("a", "{\"ds\":\"no\"}",
	    "{}"), node_new("a", "{\"ds\":\"yes\"}", "{}"));
	keys = ctl_keys(w);
	assert_string_equal(keys, "");
	free(keys);
	/* Labels that bring a node with no pod into it: a pod to create. */
	ctl_tell(w, INFORMER_UPDATED, resource_find("nodes"), node_new("c", "{\"ds\":\"yes\"}",
	    "{}"), node_new("c", "{\"ds\":\"no\"}", "{}"));
	keys = ctl_keys(w);
	assert_string_equal(keys, "default/ds");
	free(keys);
	ctl_world_free(w);
}

/* The view daemonset_nodes names the nodes that miss a pod and the pods to go. */
static void
view_shows_missing_and_misplaced_pods(void **state)
{
	struct ctl_world *w = world_new();
	sqlite3 *db = store_db(w->store);
	sqlite3_stmt *stmt = NULL;
	struct buf got;

	(void)state;
	buf_init(&got);
	ctl_cache(w, resource_find("daemonsets"), ds_new());
	ctl_cache(w, resource_find("nodes"), node_new("d", "{\"ds\":\"yes\"}",
	    "{\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]}"));
	ctl_cache(w, resource_find("nodes"), node_new("e", "{\"ds\":\"yes\"}",
	    "{\"taints\":[{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":"
	    "\"NoExecute\"}]}"));
	ctl_cache(w, resource_find("pods"), ds_pod_new("p-a", "a", "h", "Running", 1));
	ctl_cache(w, resource_find("pods"), ds_pod_new("p-c", "c", "h", "Running", 1));
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT node, state, pods FROM daemonset_nodes"
	    " WHERE namespace = 'default' AND daemonset = 'ds' ORDER BY node", -1, &stmt, NULL),
	    SQLITE_OK);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&got, "%s=%s/%d ", sqlite3_column_text(stmt, 0),
		    sqlite3_column_text(stmt, 1), sqlite3_column_int(stmt, 2));
	sqlite3_finalize(stmt);
	assert_string_equal(got.data, "a=ok/1 b=missing/0 c=evict/1 e=missing/0 ");
	buf_free(&got);
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(should_run_cases) + NELEM(counts_cases) +
	    NELEM(rolling_cases) + 20];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(should_run_cases); i++)
		tests[n++] = (struct CMUnitTest){ should_run_cases[i].name, should_run_case, NULL,
		    NULL, (void *)&should_run_cases[i] };
	for (size_t i = 0; i < NELEM(counts_cases); i++)
		tests[n++] = (struct CMUnitTest){ counts_cases[i].name, counts_case, NULL, NULL,
		    (void *)&counts_cases[i] };
	tests[n++] = (struct CMUnitTest){ "bad percentages are errors",
	    bad_percentages_are_errors, NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(rolling_cases); i++)
		tests[n++] = (struct CMUnitTest){ rolling_cases[i].name, rolling_case, NULL, NULL,
		    (void *)&rolling_cases[i] };
	tests[n++] = (struct CMUnitTest){ "pods are pinned by node affinity",
	    pods_are_pinned_by_node_affinity, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the pod template has the labels and tolerations",
	    pod_template_has_labels_and_tolerations, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a sync creates a revision and a pod per selected node",
	    sync_creates_a_revision_and_a_pod_per_selected_node, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a sync takes the hash of a revision with its data",
	    sync_adopts_the_hash_of_a_revision_with_the_same_data, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a sync adopts an orphan revision",
	    sync_adopts_an_orphan_revision, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a sync deletes pods that may not stay",
	    sync_deletes_pods_that_may_not_stay, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a sync keeps the oldest of two pods on a node",
	    sync_keeps_the_oldest_of_two_pods, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "failed pods are deleted with kube's backoff",
	    failed_pods_are_deleted_with_backoff, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a sync adopts orphans and releases strays",
	    sync_adopts_orphans_and_releases_strays, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "an undo renumbers the old revision",
	    sync_undo_renumbers_the_old_revision, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "events queue the DaemonSet", events_queue_the_daemonset,
	    NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the view daemonset_nodes shows missing and misplaced "
	    "pods", view_shows_missing_and_misplaced_pods, NULL, NULL, NULL };
	assert_true(n <= NELEM(tests));
	return _cmocka_run_group_tests("daemonset", tests, n, NULL, NULL);
}
