/*
 * test_nodelifecycle.c - the node lifecycle controller's node update pass
 * (controllers/nodelifecycle.c) against kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/nodelifecycle/node_lifecycle_controller.go
 * (doNoScheduleTaintingPass, reconcileNodeLabels, and the node handlers that feed its
 * update queue); the cases are those of TestTaintsNodeByCondition and
 * TestReconcileNodeLabels (node_lifecycle_controller_test.go), one row each, then rows of
 * sqlkcm's own at the rules' edges. kube's tests run their cases one after the other on
 * the same node0, each starting from what the one before left: the rows say what node0
 * holds when each starts.
 *
 * A row caches the node, syncs it, applies the patch the sync wants as the apiserver
 * would (a strategic merge of spec.taints, which replaces the list whole, and of
 * metadata.labels, key by key), and compares the node's taints and labels with kube's.
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
#include "consistency.h"
#include "controller.h"
#include "controllers/nodelifecycle.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

/* kube's fakeNow, 2017-01-01T12:00:00Z. */
#define FAKE_NOW 1483272000.0
#define FAKE_NOW_TEXT "2017-01-01T12:00:00Z"

/* --- the node --------------------------------------------------------------------------- */

/* A node0 as a row describes it. */
struct node_spec {
	const char *conditions;	/* JSON array of {"type","status"}; NULL: none */
	int unschedulable;
	const char *taints;	/* JSON array: spec.taints; NULL: none */
	const char *labels;	/* JSON object; NULL: none */
	const char *rv;		/* NULL: "7" */
	const char *created;	/* creationTimestamp; NULL: 2012, long before FAKE_NOW */
};

/* Node0 as its spec says, as the informer caches it. */
static cJSON *
node_new(const struct node_spec *n)
{
	struct buf b;
	cJSON *node;

	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
	    "\"node0\",\"uid\":\"uid-node0\",\"resourceVersion\":\"%s\",\"creationTimestamp\":"
	    "\"%s\"", n->rv != NULL ? n->rv : "7",
	    n->created != NULL ? n->created : "2012-01-01T00:00:00Z");
	if (n->labels != NULL)
		buf_printf(&b, ",\"labels\":%s", n->labels);
	buf_append_str(&b, "},\"spec\":{");
	if (n->unschedulable)
		buf_append_str(&b, "\"unschedulable\":true");
	if (n->taints != NULL)
		buf_printf(&b, "%s\"taints\":%s", n->unschedulable ? "," : "", n->taints);
	buf_append_str(&b, "},\"status\":{");
	if (n->conditions != NULL)
		buf_printf(&b, "\"conditions\":%s", n->conditions);
	buf_append_str(&b, "}}");
	node = fixture_parse(b.data);
	buf_free(&b);
	return node;
}

/* kube's condition lists (heartbeat and transition times left out: no rule reads them). */
#define READY(s) "{\"type\":\"Ready\",\"status\":\"" s "\"}"
#define COND(t, s) "{\"type\":\"" t "\",\"status\":\"" s "\"}"

/* Applies patch to node as the apiserver's strategic merge does for these fields:
 * spec.taints whole (null removes it), metadata.labels key by key. */
static void
apply_patch(cJSON *node, const cJSON *patch)
{
	const cJSON *taints = json_path(patch, "spec.taints");
	const cJSON *labels = json_path(patch, "metadata.labels"), *l;
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(node, "spec");
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(node, "metadata"), *have;

	if (taints != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "taints");
		if (!cJSON_IsNull(taints))
			cJSON_AddItemToObject(spec, "taints", cJSON_Duplicate(taints, 1));
	}
	if (labels == NULL)
		return;
	if ((have = cJSON_GetObjectItemCaseSensitive(meta, "labels")) == NULL)
		have = cJSON_AddObjectToObject(meta, "labels");
	cJSON_ArrayForEach(l, labels) {
		cJSON_DeleteItemFromObjectCaseSensitive(have, l->string);
		cJSON_AddItemToObject(have, l->string, cJSON_Duplicate(l, 1));
	}
}

/* The taints of node, "key:effect" (with "@now" when added at the sync's time), ", "
 * between them. */
static char *
describe_taints(const cJSON *node)
{
	const cJSON *t;
	struct buf b;

	buf_init(&b);
	cJSON_ArrayForEach(t, json_path(node, "spec.taints")) {
		buf_printf(&b, "%s%s:%s", b.len > 0 ? ", " : "", json_string(t, "key"),
		    json_string(t, "effect"));
		if (strcmp(json_string(t, "timeAdded"), FAKE_NOW_TEXT) == 0)
			buf_append_str(&b, "@now");
	}
	return buf_detach(&b);
}

/* The labels of node, "key=value", sorted, ", " between them. */
static char *
describe_labels(const cJSON *node)
{
	const cJSON *labels = json_path(node, "metadata.labels"), *l;
	const char *keys[16];
	int n = 0;
	struct buf b;

	cJSON_ArrayForEach(l, labels) {
		if (n < 16)
			keys[n++] = l->string;
	}
	for (int i = 1; i < n; i++) {
		for (int j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
			const char *k = keys[j];
			keys[j] = keys[j - 1];
			keys[j - 1] = k;
		}
	}
	buf_init(&b);
	for (int i = 0; i < n; i++)
		buf_printf(&b, "%s%s=%s", b.len > 0 ? ", " : "", keys[i],
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels, keys[i])));
	return buf_detach(&b);
}

/* The writes of r, "VERB nodes NAME" with "; " between them. */
static char *
describe_writes(const struct sync_result *r)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < r->nwrites; i++)
		buf_printf(&b, "%s%s %s %s%s", b.len > 0 ? "; " : "", r->writes[i].verb,
		    r->writes[i].resource->name, r->writes[i].name,
		    r->writes[i].type == ACTION_PATCH ? "" : " (not a patch)");
	return buf_detach(&b);
}

/* --- the cases ------------------------------------------------------------------------- */

struct pass_case {
	const char *name;
	struct node_spec node;
	const char *writes;		/* the patches, by verb; NULL: none */
	const char *taints;		/* the node's taints after them */
	const char *labels;		/* the node's labels after them */
};

#define ZONE1 "\"topology.kubernetes.io/region\":\"region1\"," \
	"\"topology.kubernetes.io/zone\":\"zone1\"," \
	"\"failure-domain.beta.kubernetes.io/region\":\"region1\"," \
	"\"failure-domain.beta.kubernetes.io/zone\":\"zone1\""
#define ZONE1_TEXT "failure-domain.beta.kubernetes.io/region=region1, " \
	"failure-domain.beta.kubernetes.io/zone=zone1, topology.kubernetes.io/region=region1, " \
	"topology.kubernetes.io/zone=zone1"
#define TAINT(k, e) "{\"key\":\"node.kubernetes.io/" k "\",\"effect\":\"" e "\"}"

static const struct pass_case pass_cases[] = {
	/* --- TestTaintsNodeByCondition --- */
	{
		.name = "TestTaintsNodeByCondition, NetworkUnavailable is true",
		.node = { .conditions = "[" READY("True") "," COND("NetworkUnavailable", "True")
		    "]", .labels = "{" ZONE1 "}" },
		.writes = "taint nodes node0",
		.taints = "node.kubernetes.io/network-unavailable:NoSchedule@now",
		.labels = ZONE1_TEXT,
	},
	{
		.name = "TestTaintsNodeByCondition, NetworkUnavailable is true (again: in step)",
		.node = { .conditions = "[" READY("True") "," COND("NetworkUnavailable", "True")
		    "]", .labels = "{" ZONE1 "}", .taints = "[" TAINT("network-unavailable",
		    "NoSchedule") "]" },
		.taints = "node.kubernetes.io/network-unavailable:NoSchedule",
		.labels = ZONE1_TEXT,
	},
	{
		.name = "TestTaintsNodeByCondition, Ready is false",
		.node = { .conditions = "[" READY("False") "]", .labels = "{" ZONE1 "}",
		    .taints = "[" TAINT("network-unavailable", "NoSchedule") "]" },
		.writes = "taint nodes node0",
		.taints = "node.kubernetes.io/not-ready:NoSchedule@now",
		.labels = ZONE1_TEXT,
	},
	{
		.name = "TestTaintsNodeByCondition, Ready is unknown",
		.node = { .conditions = "[" READY("Unknown") "]", .labels = "{" ZONE1 "}",
		    .taints = "[" TAINT("not-ready", "NoSchedule") "]" },
		.writes = "taint nodes node0",
		.taints = "node.kubernetes.io/unreachable:NoSchedule@now",
		.labels = ZONE1_TEXT,
	},

	/* --- TestReconcileNodeLabels --- */
	{
		.name = "TestReconcileNodeLabels, No-op if node has no labels",
		.node = { .conditions = "[" READY("True") "]" },
		.taints = "", .labels = "",
	},
	{
		.name = "TestReconcileNodeLabels, No-op if no target labels present",
		.node = { .conditions = "[" READY("True") "]",
		    .labels = "{\"topology.kubernetes.io/region\":\"region1\"}" },
		.taints = "", .labels = "topology.kubernetes.io/region=region1",
	},
	{
		.name = "TestReconcileNodeLabels, Create OS/arch beta labels when they don't exist",
		.node = { .conditions = "[" READY("True") "]",
		    .labels = "{\"kubernetes.io/os\":\"linux\",\"kubernetes.io/arch\":\"amd64\"}" },
		.writes = "label nodes node0",
		.taints = "",
		.labels = "beta.kubernetes.io/arch=amd64, beta.kubernetes.io/os=linux, "
		    "kubernetes.io/arch=amd64, kubernetes.io/os=linux",
	},
	{
		.name = "TestReconcileNodeLabels, Reconcile OS/arch beta labels to match stable "
		    "labels",
		.node = { .conditions = "[" READY("True") "]",
		    .labels = "{\"beta.kubernetes.io/os\":\"windows\",\"beta.kubernetes.io/arch\":"
		    "\"arm\",\"kubernetes.io/os\":\"linux\",\"kubernetes.io/arch\":\"amd64\"}" },
		.writes = "label nodes node0",
		.taints = "",
		.labels = "beta.kubernetes.io/arch=amd64, beta.kubernetes.io/os=linux, "
		    "kubernetes.io/arch=amd64, kubernetes.io/os=linux",
	},

	/* --- sqlkcm's: the same rules at their edges --- */
	{
		.name = "a Ready node with no taints: nothing",
		.node = { .conditions = "[" READY("True") "]" },
		.taints = "", .labels = "",
	},
	{
		.name = "a new node tainted not-ready by admission turns Ready: the taint goes, "
		    "and with it the taints list",
		.node = { .conditions = "[" READY("True") "]",
		    .taints = "[" TAINT("not-ready", "NoSchedule") "]" },
		.writes = "taint nodes node0",
		.taints = "", .labels = "",
	},
	{
		.name = "a node without conditions (a kubelet that has not posted yet, within "
		    "its startup grace): no condition calls for the admission's not-ready "
		    "taint, which goes, as in kube",
		.node = { .taints = "[" TAINT("not-ready", "NoSchedule") "]",
		    .created = "2017-01-01T11:59:30Z" },
		.writes = "taint nodes node0",
		.taints = "", .labels = "",
	},
	{
		.name = "every condition's taint, in the conditions' order, and unschedulable last",
		.node = { .conditions = "[" COND("PIDPressure", "True") ","
		    COND("DiskPressure", "True") "," COND("MemoryPressure", "True") ","
		    READY("False") "," COND("NetworkUnavailable", "True") "]",
		    .unschedulable = 1 },
		.writes = "taint nodes node0",
		.taints = "node.kubernetes.io/pid-pressure:NoSchedule@now, "
		    "node.kubernetes.io/disk-pressure:NoSchedule@now, "
		    "node.kubernetes.io/memory-pressure:NoSchedule@now, "
		    "node.kubernetes.io/not-ready:NoSchedule@now, "
		    "node.kubernetes.io/network-unavailable:NoSchedule@now, "
		    "node.kubernetes.io/unschedulable:NoSchedule@now",
		.labels = "",
	},
	{
		.name = "conditions that call for no taint (pressure False or Unknown, Ready True)",
		.node = { .conditions = "[" READY("True") "," COND("MemoryPressure", "False") ","
		    COND("DiskPressure", "Unknown") "," COND("PIDPressure", "False") ","
		    COND("NetworkUnavailable", "False") "," COND("KernelDeadlock", "True") "]" },
		.taints = "", .labels = "",
	},
	{
		.name = "uncordoned: the unschedulable taint goes",
		.node = { .conditions = "[" READY("True") "]",
		    .taints = "[" TAINT("unschedulable", "NoSchedule") "]" },
		.writes = "taint nodes node0",
		.taints = "", .labels = "",
	},
	{
		.name = "taints it does not own stay, in their place: other keys, other effects of "
		    "its keys (a PreferNoSchedule not-ready), and values",
		.node = { .conditions = "[" READY("True") "]",
		    .taints = "[{\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"},"
		    TAINT("not-ready", "PreferNoSchedule") "," TAINT("not-ready", "NoSchedule") ","
		    TAINT("memory-pressure", "PreferNoSchedule") "]" },
		.writes = "taint nodes node0",
		.taints = "dedicated:NoSchedule, node.kubernetes.io/not-ready:PreferNoSchedule, "
		    "node.kubernetes.io/memory-pressure:PreferNoSchedule",
		.labels = "",
	},
	{
		.name = "a Ready node loses the NoExecute not-ready and unreachable taints, with "
		    "the NoSchedule ones, in one patch (kube's markNodeAsReachable)",
		.node = { .conditions = "[" READY("True") "]",
		    .taints = "[" TAINT("unreachable", "NoExecute") "," TAINT("unreachable",
		    "NoSchedule") "," TAINT("not-ready", "NoExecute") "]" },
		.writes = "taint nodes node0",
		.taints = "", .labels = "",
	},
	{
		.name = "a wanted taint present with a value is kept as it is (kube matches key "
		    "and effect)",
		.node = { .conditions = "[" READY("False") "]",
		    .taints = "[{\"key\":\"node.kubernetes.io/not-ready\",\"value\":\"x\","
		    "\"effect\":\"NoSchedule\"}]" },
		.taints = "node.kubernetes.io/not-ready:NoSchedule", .labels = "",
	},
	{
		.name = "a condition listed twice calls for its taint once",
		.node = { .conditions = "[" READY("False") "," READY("False") "]" },
		.writes = "taint nodes node0",
		.taints = "node.kubernetes.io/not-ready:NoSchedule@now", .labels = "",
	},
	{
		.name = "taints and labels both out of step: two patches, the taints first",
		.node = { .conditions = "[" READY("Unknown") "]",
		    .labels = "{\"kubernetes.io/os\":\"linux\",\"beta.kubernetes.io/os\":\"linux\"}" ,
		    .taints = "[" TAINT("not-ready", "NoSchedule") "]" },
		.writes = "taint nodes node0",
		.taints = "node.kubernetes.io/unreachable:NoSchedule@now",
		.labels = "beta.kubernetes.io/os=linux, kubernetes.io/os=linux",
	},
};

/* --- the tests ------------------------------------------------------------------------- */

static int
env_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(&nodelifecycle_controller_type, NULL);

	w->row = *state;
	*state = w;
	return 0;
}

static int
env_teardown(void **state)
{
	ctl_world_free(*state);
	return 0;
}

/* Syncs the row's node0 and checks the patches and what they make of the node. */
static void
pass_case(void **state)
{
	struct ctl_world *w = *state;
	const struct pass_case *row = w->row;
	const struct resource *nodes = resource_find("nodes");
	cJSON *node = node_new(&row->node);
	char *got;

	ctl_cache(w, nodes, cJSON_Duplicate(node, 1));
	ctl_sync(w, "node0", FAKE_NOW);
	assert_int_equal(w->result.stale, 0);
	got = describe_writes(&w->result);
	assert_described("writes", got, row->writes);
	free(got);
	for (int i = 0; i < w->result.nwrites; i++) {
		const struct action *a = &w->result.writes[i];

		assert_string_equal(a->uid, "uid-node0");
		assert_null(a->subresource);
		assert_false(a->merge_patch);
		/* The taints go with the resourceVersion they were computed from, as kube's
		 * PatchNodeTaints; the labels without, as its AddOrUpdateLabelsOnNode. */
		if (strcmp(a->verb, "taint") == 0)
			assert_string_equal(json_string(a->body, "metadata.resourceVersion"),
			    row->node.rv != NULL ? row->node.rv : "7");
		else
			assert_null(json_path(a->body, "metadata.resourceVersion"));
		apply_patch(node, a->body);
	}
	got = describe_taints(node);
	assert_described("taints", got, row->taints);
	free(got);
	got = describe_labels(node);
	assert_described("labels", got, row->labels);
	free(got);

	/* The node as patched (a new resourceVersion) is in step: a sync of it changes
	 * nothing. */
	cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(node,
	    "metadata"), "resourceVersion", cJSON_CreateString("99"));
	ctl_cache(w, nodes, node);
	ctl_sync(w, "node0", FAKE_NOW + 10);
	got = describe_writes(&w->result);
	assert_described("writes once in step", got, NULL);
	free(got);
}

/* The handlers queue a node on every add, update and delete; list_keys gives every node. */
static void
handlers_queue_the_node(void **state)
{
	struct ctl_world *w = *state;
	const struct resource *nodes = resource_find("nodes");
	static const enum informer_event_type types[] = { INFORMER_ADDED, INFORMER_UPDATED,
	    INFORMER_DELETED };
	char *keys;

	for (size_t i = 0; i < NELEM(types); i++) {
		ctl_keys_clear(w);
		ctl_tell(w, types[i], nodes, node_new(&(struct node_spec){ 0 }), NULL);
		keys = ctl_keys(w);
		assert_string_equal(keys, "node0");
		free(keys);
	}
	/* Other resources' events are not its business. */
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_ADDED, resource_find("pods"), fixture_parse("{\"metadata\":{"
	    "\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u\",\"resourceVersion\":\"1\"}}"),
	    NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "");
	free(keys);

	ctl_cache(w, nodes, node_new(&(struct node_spec){ 0 }));
	ctl_cache(w, nodes, fixture_parse("{\"metadata\":{\"name\":\"node1\",\"uid\":\"u1\","
	    "\"resourceVersion\":\"1\"}}"));
	ctl_keys_clear(w);
	ctl_list_keys(w);
	keys = ctl_keys(w);
	assert_string_equal(keys, "node0,node1");
	free(keys);
}

/* A node not in the cache (deleted) is forgotten: nothing to patch. */
static void
deleted_node_is_forgotten(void **state)
{
	struct ctl_world *w = *state;

	ctl_sync(w, "node0", FAKE_NOW);
	assert_int_equal(w->result.forget_expectations, 1);
	assert_int_equal(w->result.nwrites, 0);
}

/* After its own patch, the controller waits for the cache to show it before it syncs the
 * node again (the patch it would send from an older node would be refused anyway). */
static void
waits_for_the_cache_to_show_its_patch(void **state)
{
	struct ctl_world *w = *state;
	const struct resource *nodes = resource_find("nodes");
	char *error = NULL;

	ctl_cache(w, nodes, node_new(&(struct node_spec){ .conditions = "[" READY("False")
	    "]" }));
	assert_int_equal(sqlite3_exec(store_db(w->store), "INSERT INTO informers (resource, "
	    "resource_version, list_epoch, synced) VALUES ('nodes', '10', 1, 1) ON CONFLICT "
	    "(resource) DO UPDATE SET resource_version = '10'", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(consistency_wrote_at(w->c->writes, "node0", "uid-node0", "nodes", "12",
	    &error), 0);
	ctl_sync(w, "node0", FAKE_NOW);
	assert_int_equal(w->result.stale, 1);
	assert_int_equal(w->result.nwrites, 0);
	assert_int_equal(sqlite3_exec(store_db(w->store), "UPDATE informers SET "
	    "resource_version = '12' WHERE resource = 'nodes'", NULL, NULL, NULL), SQLITE_OK);
	ctl_sync(w, "node0", FAKE_NOW);
	assert_int_equal(w->result.stale, 0);
	assert_int_equal(w->result.nwrites, 1);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(pass_cases) + 3];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(pass_cases); i++)
		tests[n++] = (struct CMUnitTest){ pass_cases[i].name, pass_case, env_setup,
		    env_teardown, (void *)&pass_cases[i] };
	tests[n++] = (struct CMUnitTest){ "handlers queue the node", handlers_queue_the_node,
	    env_setup, env_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "a deleted node is forgotten",
	    deleted_node_is_forgotten, env_setup, env_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "it waits for the cache to show its patch",
	    waits_for_the_cache_to_show_its_patch, env_setup, env_teardown, NULL };
	return _cmocka_run_group_tests("nodelifecycle", tests, n, NULL, NULL);
}
