/*
 * test_nodehealth.c - the node lifecycle controller's health monitor
 * (controllers/nodehealth.c, controllers/nodelifecycle.c) against kube-controller-manager's
 * rules.
 *
 * The rules are kube v1.36.3's pkg/controller/nodelifecycle/node_lifecycle_controller.go
 * (tryUpdateNodeHealth, monitorNodeHealth, handleDisruption, ComputeZoneState,
 * processTaintBaseEviction, doNoExecuteTaintingPass) and its rate limited queue. The zone
 * cases are those of TestMonitorNodeHealth (node_lifecycle_controller_test.go), as the
 * Ready counts of each zone its two passes see; then sqlkcm's scenarios, driven as the
 * daemon drives the controller: informer events to its handlers at a time, syncs at a
 * later one.
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
#include "controllers/nodehealth.h"
#include "controllers/nodelifecycle.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "metrics.h"
#include "resource.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

/* kube's defaults. */
static const struct nodehealth_params defaults = {
	.monitor_period = 5, .monitor_grace = 50, .startup_grace = 60,
	.eviction_rate = 0.1, .secondary_eviction_rate = 0.01,
	.large_cluster_threshold = 50, .unhealthy_threshold = 0.55,
};

/* --- zone states ----------------------------------------------------------------------- */

static void
zone_state_by_counts(void **state)
{
	static const struct {
		int nodes, not_ready;
		enum nodehealth_zone_state want;
	} rows[] = {
		{ 1, 0, ZONE_NORMAL },
		{ 1, 1, ZONE_FULL_DISRUPTION },
		{ 3, 2, ZONE_NORMAL },		/* 2 not Ready: never partial */
		{ 3, 3, ZONE_FULL_DISRUPTION },
		{ 4, 3, ZONE_PARTIAL_DISRUPTION },
		{ 5, 3, ZONE_PARTIAL_DISRUPTION },	/* 0.6 */
		{ 5, 2, ZONE_NORMAL },
		{ 100, 55, ZONE_PARTIAL_DISRUPTION },	/* at the threshold */
		{ 100, 54, ZONE_NORMAL },
		{ 0, 0, ZONE_NORMAL },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++)
		assert_string_equal(nodehealth_zone_state_name(nodehealth_zone_state(
		    rows[i].nodes, rows[i].not_ready, 0.55)),
		    nodehealth_zone_state_name(rows[i].want));
}

/* One of TestMonitorNodeHealth's cases: each zone's nodes and those not Ready at the first
 * pass and at the second, and the states kube expects after each. */
struct zone_case {
	const char *name;
	struct nodehealth_zone_count first[3], second[3];
	const char *want_first, *want_second;	/* "zone=State" sorted, ", " between */
};

static const struct zone_case zone_cases[] = {
	{ "No Disruption: Node created recently without failure domain labels",
	    { { "", 1, 0 } }, { { "", 1, 0 } }, "=Normal", "=Normal" },
	{ "No Disruption: Initially both zones down, one comes back",
	    { { "region1:zone1", 1, 1 }, { "region1:zone2", 1, 1 } },
	    { { "region1:zone1", 1, 1 }, { "region1:zone2", 1, 0 } },
	    "region1:zone1=FullDisruption, region1:zone2=FullDisruption",
	    "region1:zone1=FullDisruption, region1:zone2=Normal" },
	{ "Partial Disruption: Nodes created recently without status conditions",
	    { { "region1:zone1", 4, 4 } }, { { "region1:zone1", 4, 3 } },
	    "region1:zone1=FullDisruption", "region1:zone1=PartialDisruption" },
	{ "Partial Disruption: one Node failed",
	    { { "region1:zone1", 5, 2 } }, { { "region1:zone1", 5, 3 } },
	    "region1:zone1=Normal", "region1:zone1=PartialDisruption" },
	{ "Full Disruption: the last Node failed",
	    { { "region1:zone1", 3, 2 } }, { { "region1:zone1", 3, 3 } },
	    "region1:zone1=Normal", "region1:zone1=FullDisruption" },
	{ "Disruption in one zone: the other stays Normal",
	    { { "region1:zone1", 1, 1 }, { "region1:zone2", 1, 0 } },
	    { { "region1:zone1", 1, 1 }, { "region1:zone2", 1, 0 } },
	    "region1:zone1=FullDisruption, region1:zone2=Normal",
	    "region1:zone1=FullDisruption, region1:zone2=Normal" },
	{ "Full Disruption in every zone of two regions",
	    { { "region1:zone1", 1, 1 }, { "region2:zone2", 1, 1 } },
	    { { "region1:zone1", 1, 1 }, { "region2:zone2", 1, 1 } },
	    "region1:zone1=FullDisruption, region2:zone2=FullDisruption",
	    "region1:zone1=FullDisruption, region2:zone2=FullDisruption" },
	{ "Full Disruption: the only Node stopped posting",
	    { { "region1:zone1", 1, 0 } }, { { "region1:zone1", 1, 1 } },
	    "region1:zone1=Normal", "region1:zone1=FullDisruption" },
};

static int
count_len(const struct nodehealth_zone_count *c)
{
	int n = 0;

	while (n < 3 && c[n].name != NULL)
		n++;
	return n;
}

/* The states of z, "zone=State" in name order. */
static char *
describe_zones(const struct nodehealth_zones *z)
{
	struct buf b;
	int *order = xcalloc((size_t)z->n + 1, sizeof *order);

	for (int i = 0; i < z->n; i++)
		order[i] = i;
	for (int i = 1; i < z->n; i++) {
		for (int j = i; j > 0 && strcmp(z->v[order[j - 1]].name,
		    z->v[order[j]].name) > 0; j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	}
	buf_init(&b);
	for (int i = 0; i < z->n; i++)
		buf_printf(&b, "%s%s=%s", i > 0 ? ", " : "", z->v[order[i]].name,
		    nodehealth_zone_state_name(z->v[order[i]].state));
	free(order);
	return buf_detach(&b);
}

static void
zone_case(void **state)
{
	const struct zone_case *row = *state;
	struct nodehealth_zones z = { 0 };
	char *got;

	nodehealth_zones_update(&z, row->first, count_len(row->first), &defaults, NOW);
	got = describe_zones(&z);
	assert_described("first pass", got, row->want_first);
	free(got);
	nodehealth_zones_update(&z, row->second, count_len(row->second), &defaults,
	    NOW + 3600);
	got = describe_zones(&z);
	assert_described("second pass", got, row->want_second);
	free(got);
	nodehealth_zones_clear(&z);
}

/* Each state's limiter, and kube's master disruption mode: every zone fully disrupted
 * stops every limiter; one Ready node ends it, and the grace periods start again. */
static void
zone_limiters_follow_the_states(void **state)
{
	struct nodehealth_params p = defaults;
	struct nodehealth_zone_count c[2] = { { "a", 60, 0 }, { "b", 4, 0 } };
	struct nodehealth_zones z = { 0 };

	(void)state;
	assert_int_equal(nodehealth_zones_update(&z, c, 2, &p, NOW), 0);
	assert_true(nodehealth_zone_find(&z, "a")->limiter.qps == 0.1);
	/* Partially disrupted: the secondary rate above the large cluster size, else none. */
	c[0].not_ready = 40;
	c[1].not_ready = 3;
	assert_int_equal(nodehealth_zones_update(&z, c, 2, &p, NOW + 5), 0);
	assert_int_equal(nodehealth_zone_find(&z, "a")->state, ZONE_PARTIAL_DISRUPTION);
	assert_true(nodehealth_zone_find(&z, "a")->limiter.qps == 0.01);
	assert_true(nodehealth_zone_find(&z, "b")->limiter.qps == 0);
	/* One zone fully disrupted, not all: its limiter is the normal one. */
	c[1].not_ready = 4;
	assert_int_equal(nodehealth_zones_update(&z, c, 2, &p, NOW + 10), 0);
	assert_int_equal(nodehealth_zone_find(&z, "b")->state, ZONE_FULL_DISRUPTION);
	assert_true(nodehealth_zone_find(&z, "b")->limiter.qps == 0.1);
	assert_false(z.all_disrupted);
	/* All of them: every limiter stops. */
	c[0].not_ready = 60;
	assert_int_equal(nodehealth_zones_update(&z, c, 2, &p, NOW + 15),
	    NODEHEALTH_ENTERED_DISRUPTION);
	assert_true(z.all_disrupted);
	assert_true(nodehealth_zone_find(&z, "a")->limiter.qps == 0);
	assert_true(nodehealth_zone_find(&z, "b")->limiter.qps == 0);
	assert_int_equal(nodehealth_zones_update(&z, c, 2, &p, NOW + 20), 0);
	/* A Ready node in one zone ends it. */
	c[1].not_ready = 3;
	assert_int_equal(nodehealth_zones_update(&z, c, 2, &p, NOW + 25),
	    NODEHEALTH_EXITED_DISRUPTION);
	assert_false(z.all_disrupted);
	assert_true(z.exited_at == NOW + 25);
	assert_int_equal(nodehealth_zone_find(&z, "b")->state, ZONE_PARTIAL_DISRUPTION);
	assert_true(nodehealth_zone_find(&z, "a")->limiter.qps == 0.1);
	/* A zone without nodes goes. */
	assert_int_equal(nodehealth_zones_update(&z, c, 1, &p, NOW + 30), 0);
	assert_null(nodehealth_zone_find(&z, "b"));
	nodehealth_zones_clear(&z);
}

/* kube's token bucket of burst 1, and SwapLimiter's draining. */
static void
limiter_paces_and_swaps(void **state)
{
	struct nodehealth_limiter l;
	double wait;

	(void)state;
	nodehealth_limiter_init(&l, 0.1, NOW);
	assert_true(nodehealth_limiter_take(&l, NOW, &wait));
	assert_false(nodehealth_limiter_take(&l, NOW + 4, &wait));
	assert_true(wait > 5.99 && wait < 6.01);
	assert_true(nodehealth_limiter_take(&l, NOW + 10, &wait));
	/* A long idle saves one token, not more. */
	assert_true(nodehealth_limiter_take(&l, NOW + 100, &wait));
	assert_false(nodehealth_limiter_take(&l, NOW + 100, &wait));
	/* Swapped while empty: the new one starts empty too. */
	nodehealth_limiter_swap(&l, 0.01, NOW + 100);
	assert_false(nodehealth_limiter_take(&l, NOW + 101, &wait));
	assert_true(nodehealth_limiter_take(&l, NOW + 200, &wait));
	/* Swapped while it has a token: the new one is full. */
	nodehealth_limiter_swap(&l, 0.01, NOW + 400);	/* same rate: nothing */
	nodehealth_limiter_swap(&l, 0.1, NOW + 400);
	assert_true(nodehealth_limiter_take(&l, NOW + 400, &wait));
	/* A rate of 0 never gives one. */
	nodehealth_limiter_swap(&l, 0, NOW + 500);
	assert_false(nodehealth_limiter_take(&l, NOW + 100000, &wait));
}

/* --- the conditions of a silent node --------------------------------------------------- */

static void
mark_unknown_as_kube(void **state)
{
	cJSON *node = fixture_parse("{\"metadata\":{\"name\":\"n\",\"creationTimestamp\":"
	    "\"2025-12-31T00:00:00Z\"},\"status\":{\"conditions\":["
	    "{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\","
	    "\"lastHeartbeatTime\":\"2025-12-31T23:59:00Z\","
	    "\"lastTransitionTime\":\"2025-12-31T00:00:10Z\"},"
	    "{\"type\":\"MemoryPressure\",\"status\":\"Unknown\",\"reason\":\"Old\"},"
	    "{\"type\":\"NetworkUnavailable\",\"status\":\"False\"}]}}");
	const cJSON *c;
	char *text;

	(void)state;
	/* Within the grace period: nothing. */
	assert_int_equal(nodehealth_mark_unknown(node, NOW - 50, NOW, &defaults), 0);
	assert_string_equal(nodehealth_ready_status(node), "True");
	assert_int_equal(nodehealth_mark_unknown(node, NOW - 51, NOW, &defaults), 1);
	text = cJSON_PrintUnformatted(json_path(node, "status.conditions"));
	assert_string_equal(text, "["
	    "{\"type\":\"Ready\",\"status\":\"Unknown\",\"reason\":\"NodeStatusUnknown\","
	    "\"lastHeartbeatTime\":\"2025-12-31T23:59:00Z\","
	    "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\","
	    "\"message\":\"Kubelet stopped posting node status.\"},"
	    "{\"type\":\"MemoryPressure\",\"status\":\"Unknown\",\"reason\":\"Old\"},"
	    "{\"type\":\"NetworkUnavailable\",\"status\":\"False\"},"
	    "{\"type\":\"DiskPressure\",\"status\":\"Unknown\","
	    "\"lastHeartbeatTime\":\"2025-12-31T00:00:00Z\","
	    "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\","
	    "\"reason\":\"NodeStatusNeverUpdated\","
	    "\"message\":\"Kubelet never posted node status.\"},"
	    "{\"type\":\"PIDPressure\",\"status\":\"Unknown\","
	    "\"lastHeartbeatTime\":\"2025-12-31T00:00:00Z\","
	    "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\","
	    "\"reason\":\"NodeStatusNeverUpdated\","
	    "\"message\":\"Kubelet never posted node status.\"}]");
	free(text);
	/* Unknown already: Ready does not change, nothing to write. */
	assert_int_equal(nodehealth_mark_unknown(node, NOW - 51, NOW + 5, &defaults), 0);
	c = json_path(node, "status.conditions");
	assert_string_equal(json_string(cJSON_GetArrayItem(c, 0), "lastTransitionTime"),
	    "2026-01-01T00:00:00Z");
	cJSON_Delete(node);

	/* Never posted: the startup grace, then all four, Ready first. */
	node = fixture_parse("{\"metadata\":{\"name\":\"n\",\"creationTimestamp\":"
	    "\"2025-12-31T23:59:00Z\"},\"status\":{}}");
	assert_null(nodehealth_ready_status(node));
	assert_int_equal(nodehealth_mark_unknown(node, NOW - 60, NOW, &defaults), 0);
	assert_int_equal(nodehealth_mark_unknown(node, NOW - 61, NOW, &defaults), 1);
	c = json_path(node, "status.conditions");
	assert_int_equal(cJSON_GetArraySize(c), 4);
	assert_string_equal(json_string(cJSON_GetArrayItem(c, 0), "type"), "Ready");
	assert_string_equal(json_string(cJSON_GetArrayItem(c, 0), "reason"),
	    "NodeStatusNeverUpdated");
	assert_string_equal(json_string(cJSON_GetArrayItem(c, 3), "type"), "PIDPressure");
	cJSON_Delete(node);
}

static void
zone_of_a_node(void **state)
{
	static const struct {
		const char *labels, *want;
	} rows[] = {
		{ "{}", "" },
		{ "{\"topology.kubernetes.io/region\":\"r\",\"topology.kubernetes.io/zone\":\"z\"}",
		    "r:z" },
		{ "{\"topology.kubernetes.io/zone\":\"z\"}", ":z" },
		{ "{\"topology.kubernetes.io/region\":\"r\"}", "r:" },
		/* The beta labels first, as kube reads them. */
		{ "{\"topology.kubernetes.io/zone\":\"z\","
		    "\"failure-domain.beta.kubernetes.io/zone\":\"old\"}", ":old" },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		char *text = xasprintf("{\"metadata\":{\"labels\":%s}}", rows[i].labels);
		cJSON *node = fixture_parse(text);
		char *got = nodehealth_zone_of(node);

		assert_string_equal(got, rows[i].want);
		free(got);
		free(text);
		cJSON_Delete(node);
	}
}

/* When a node needs looking at again: the first pass, every monitor period (5 s) from
 * now, at which its grace (50 s; 60 s for a node that never posted Ready) will have passed
 * since it was last seen alive. */
static void
next_check_at_the_pass_past_the_grace(void **state)
{
	static const struct {
		int ready;		/* it has a Ready condition */
		double probe, now, want;
	} rows[] = {
		{ 1, 0, 0, 55 },	/* at 50 it has not passed: 55 */
		{ 1, 0, 1, 50 },	/* passes at 6, ..., 51 */
		{ 1, 40, 80, 15 },
		{ 1, 0, 50, 5 },
		{ 1, 0, 52, 5 },	/* passed already: the next pass */
		{ 1, 0, 500, 5 },
		{ 0, 0, 0, 65 },	/* the startup grace */
		{ 0, 10, 12, 60 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		cJSON *node = fixture_parse(rows[i].ready ? "{\"status\":{\"conditions\":"
		    "[{\"type\":\"Ready\",\"status\":\"True\"}]}}" : "{\"status\":{}}");
		double got = nodehealth_next_check(node, rows[i].probe, rows[i].now, &defaults);

		if (got != rows[i].want)
			fail_msg("row %zu: %g, want %g", i, got, rows[i].want);
		cJSON_Delete(node);
	}
}

/* --- the controller -------------------------------------------------------------------- */

#define AT(s) (NOW + (s))

/* A node as a scenario describes it. */
struct node {
	const char *name;
	const char *ready;	/* NULL: no conditions */
	const char *reason;	/* the Ready condition's; NULL: KubeletReady */
	double heartbeat;	/* its lastHeartbeatTime */
	const char *zone;	/* NULL: none; else "region:zone" */
	const char *taints;	/* JSON; NULL: none */
	const char *rv;		/* NULL: "1" */
	const char *labels;	/* more labels, JSON members; NULL: none */
};

static cJSON *
node_new(const struct node *n)
{
	char hb[TIME_RFC3339_SIZE];
	struct buf b;
	cJSON *node;

	time_format_rfc3339((time_t)n->heartbeat, hb);
	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
	    "\"uid\":\"uid-%s\",\"resourceVersion\":\"%s\","
	    "\"creationTimestamp\":\"2025-12-31T23:59:00Z\",\"labels\":{", n->name, n->name,
	    n->rv != NULL ? n->rv : "1");
	if (n->zone != NULL) {
		const char *colon = strchr(n->zone, ':');

		buf_printf(&b, "\"topology.kubernetes.io/region\":\"%.*s\","
		    "\"topology.kubernetes.io/zone\":\"%s\"", (int)(colon - n->zone), n->zone,
		    colon + 1);
	}
	if (n->labels != NULL)
		buf_printf(&b, "%s%s", n->zone != NULL ? "," : "", n->labels);
	buf_printf(&b, "}},\"spec\":{\"taints\":%s},\"status\":{",
	    n->taints != NULL ? n->taints : "[]");
	if (n->ready != NULL)
		buf_printf(&b, "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\","
		    "\"reason\":\"%s\",\"lastHeartbeatTime\":\"%s\","
		    "\"lastTransitionTime\":\"2025-12-31T23:59:00Z\"}]", n->ready,
		    n->reason != NULL ? n->reason : "KubeletReady", hb);
	buf_append_str(&b, "}}");
	node = fixture_parse(b.data);
	buf_free(&b);
	return node;
}

/* The informer adds (or updates) node n at time t: cached, then told. */
static void
see_node(struct ctl_world *w, const struct node *n, double t)
{
	ctl_cache(w, resource_find("nodes"), node_new(n));
	ctl_tell_at(w, INFORMER_UPDATED, resource_find("nodes"), node_new(n), NULL, t);
}

static void
see_lease(struct ctl_world *w, const char *ns, const char *name, const char *renew, double t)
{
	char *text = xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
	    "\"uid\":\"uid-lease-%s\",\"resourceVersion\":\"1\"},"
	    "\"spec\":{\"holderIdentity\":\"%s\",\"renewTime\":\"%s\"}}", name, ns, name, name,
	    renew);
	cJSON *lease = fixture_parse(text);

	free(text);
	ctl_cache(w, resource_find("leases"), cJSON_Duplicate(lease, 1));
	ctl_tell_at(w, INFORMER_UPDATED, resource_find("leases"), lease, NULL, t);
}

static void
add_pod_on(struct ctl_world *w, const char *name, const char *node, const char *ready)
{
	const struct pod p = { .name = name, .node = node, .ready = ready,
	    .ready_since = NOW - 100, .phase = "Running" };

	ctl_cache(w, resource_find("pods"), pod_new(&p));
}

/* The last sync's writes, "verb name", and its events, "event Reason". */
static const char *
described(struct ctl_world *w)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < w->result.nevents; i++)
		buf_printf(&b, "%sevent %s", b.len > 0 ? "; " : "", w->result.events[i].reason);
	for (int i = 0; i < w->result.nwrites; i++)
		buf_printf(&b, "%s%s %s", b.len > 0 ? "; " : "", w->result.writes[i].verb,
		    w->result.writes[i].name);
	return ctl_keep(w, buf_detach(&b));
}

/* The taint patch of the last sync, "key:effect" of each taint it sets; "" when none. */
static const char *
patched_taints(struct ctl_world *w)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < w->result.nwrites; i++) {
		const cJSON *t;

		if (strcmp(w->result.writes[i].verb, "taint") != 0)
			continue;
		cJSON_ArrayForEach(t, json_path(w->result.writes[i].body, "spec.taints"))
			buf_printf(&b, "%s%s:%s", b.len > 0 ? ", " : "", json_string(t, "key"),
			    json_string(t, "effect"));
	}
	return ctl_keep(w, buf_detach(&b));
}

static int
world_setup(void **state)
{
	*state = ctl_world_new(&nodelifecycle_controller_type, NULL);
	return 0;
}

static int
world_teardown(void **state)
{
	ctl_world_free(*state);
	return 0;
}

#define UNREACHABLE_NS "{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":\"NoSchedule\"}"
#define UNREACHABLE_NE "{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":\"NoExecute\"}"
#define NOT_READY_NS "{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoSchedule\"}"

/* kube's RegisteredNode when the controller first sees a node, and RemovingNode (on the
 * node as it was, by its uid) when it is gone; once each per run, and no RemovingNode for
 * a node never announced. */
static void
nodes_registered_and_removed(void **state)
{
	struct ctl_world *w = *state;
	const struct node n0 = { "n0", "True", NULL, AT(0), NULL, NULL, NULL, NULL };

	see_node(w, &n0, AT(0));
	ctl_sync(w, "n0", AT(0));
	assert_string_equal(described(w), "event RegisteredNode");
	assert_string_equal(w->result.events[0].message,
	    "Node n0 event: Registered Node n0 in Controller");
	ctl_sync(w, "n0", AT(1));
	assert_string_equal(described(w), "");

	ctl_uncache(w, resource_find("nodes"), "uid-n0");
	ctl_tell_at(w, INFORMER_DELETED, resource_find("nodes"), node_new(&n0), NULL, AT(2));
	ctl_sync(w, "n0", AT(2));
	assert_string_equal(described(w), "event RemovingNode");
	assert_string_equal(w->result.events[0].message,
	    "Node n0 event: Removing Node n0 from Controller");
	assert_non_null(w->result.owner);
	assert_string_equal(json_string(w->result.owner, "kind"), "Node");
	assert_string_equal(json_string(w->result.owner, "metadata.uid"), "uid-n0");
	assert_int_equal(w->result.forget_expectations, 1);
	ctl_sync(w, "n0", AT(3));
	assert_string_equal(described(w), "");

	/* Back under the same name: announced again. */
	see_node(w, &n0, AT(4));
	ctl_sync(w, "n0", AT(4));
	assert_string_equal(described(w), "event RegisteredNode");

	/* Never synced while it was there: nothing to announce gone. */
	ctl_sync(w, "never-seen", AT(5));
	assert_string_equal(described(w), "");
}

/* A kubelet that stops posting: its node goes Unknown once the grace period has passed
 * since the controller last saw its heartbeat move, with NodeNotReady; its pods whose Ready
 * condition is not False are marked, each with its event; then the taints follow. */
static void
silent_kubelet_goes_unknown(void **state)
{
	struct ctl_world *w = *state;
	const struct node n0 = { "n0", "True", NULL, AT(0), NULL, NULL, NULL, NULL };
	const struct node others[] = {
		{ "n1", "True", NULL, AT(0), NULL, NULL, NULL, NULL },
		{ "n2", "True", NULL, AT(0), NULL, NULL, NULL, NULL },
	};
	const struct action *a;
	const cJSON *ready;

	see_node(w, &n0, AT(0));
	for (size_t i = 0; i < NELEM(others); i++)
		see_node(w, &others[i], AT(0));
	add_pod_on(w, "p0", "n0", "True");
	add_pod_on(w, "p1", "n0", "False");
	add_pod_on(w, "p2", "n1", "True");

	ctl_sync(w, "n0", AT(0));
	assert_string_equal(described(w), "event RegisteredNode");
	/* Ready: looked at again at the first pass, every 5 s from now, past the grace of
	 * 50 s (passed means later than: 55, not 50). */
	assert_true(w->result.requeue_after == 55);
	ctl_sync(w, "n0", AT(50));
	assert_string_equal(described(w), "");
	assert_true(w->result.requeue_after == 5);
	/* The others post. */
	for (size_t i = 0; i < NELEM(others); i++) {
		struct node o = others[i];

		o.heartbeat = AT(40);
		see_node(w, &o, AT(40));
	}
	/* The heartbeat seen again, the same: no sign of life. */
	ctl_tell_at(w, INFORMER_UPDATED, resource_find("nodes"), node_new(&n0), NULL, AT(30));
	ctl_sync(w, "n0", AT(51));
	assert_string_equal(described(w), "event NodeNotReady; mark-unknown n0; "
	    "mark-not-ready p0");
	assert_string_equal(w->result.events[0].message, "Node n0 status is now: NodeNotReady");
	a = &w->result.writes[0];
	assert_int_equal(a->type, ACTION_UPDATE_STATUS);
	assert_string_equal(a->uid, "uid-n0");
	ready = cJSON_GetArrayItem(json_path(a->body, "status.conditions"), 0);
	assert_string_equal(json_string(ready, "status"), "Unknown");
	assert_string_equal(json_string(ready, "reason"), "NodeStatusUnknown");
	assert_string_equal(json_string(ready, "lastTransitionTime"), "2026-01-01T00:00:51Z");
	/* The pod: Ready=False, with kube's Warning on the pod itself. */
	a = &w->result.writes[1];
	assert_int_equal(a->type, ACTION_UPDATE_STATUS);
	assert_string_equal(a->resource->name, "pods");
	assert_true(a->event_on_target && a->failure_stops_nothing && a->failure_goes_on);
	assert_string_equal(a->done_reason, "NodeNotReady");
	assert_string_equal(a->done_type, "Warning");
	assert_string_equal(a->done_message, "Node is not ready");
	ready = NULL;
	cJSON_ArrayForEach(ready, json_path(a->body, "status.conditions")) {
		if (strcmp(json_string(ready, "type"), "Ready") == 0)
			break;
	}
	assert_non_null(ready);
	assert_string_equal(json_string(ready, "status"), "False");
	assert_string_equal(json_string(ready, "lastTransitionTime"), "2026-01-01T00:00:51Z");

	/* The status written comes back: the NoSchedule and NoExecute unreachable taints, at
	 * the zone's first token; the pod not yet seen marked is marked again. */
	see_node(w, &(struct node){ "n0", "Unknown", "NodeStatusUnknown", AT(0), NULL, NULL,
	    "2", NULL }, AT(51));
	ctl_sync(w, "n0", AT(52));
	assert_string_equal(described(w), "mark-not-ready p0; taint n0");
	assert_string_equal(patched_taints(w), "node.kubernetes.io/unreachable:NoSchedule, "
	    "node.kubernetes.io/unreachable:NoExecute");
	/* Its neighbours are untouched. */
	ctl_sync(w, "n1", AT(52));
	assert_string_equal(described(w), "event RegisteredNode");
}

/* A renewed Lease in kube-node-lease is a sign of life, whatever the status says; a Lease
 * renewed at an older time, or another namespace's of the same name, is not. */
static void
lease_keeps_a_node_alive(void **state)
{
	struct ctl_world *w = *state;
	const struct node n0 = { "n0", "True", NULL, AT(0), NULL, NULL, NULL, NULL };

	see_node(w, &n0, AT(0));
	see_node(w, &(struct node){ "n1", "True", NULL, AT(0), NULL, NULL, NULL, NULL }, AT(0));
	ctl_sync(w, "n0", AT(0));
	assert_string_equal(described(w), "event RegisteredNode");
	see_lease(w, "kube-node-lease", "n0", "2026-01-01T00:00:40.000000Z", AT(40));
	ctl_sync(w, "n0", AT(80));
	assert_string_equal(described(w), "");
	/* Seen alive at 40: the grace passes after 90, at the pass at 95. */
	assert_true(w->result.requeue_after == 15);
	see_lease(w, "kube-node-lease", "n0", "2026-01-01T00:00:30.000000Z", AT(85));
	see_lease(w, "default", "n0", "2026-01-01T00:01:25.000000Z", AT(85));
	ctl_sync(w, "n0", AT(90));
	assert_string_equal(described(w), "");
	ctl_sync(w, "n0", AT(91));
	assert_string_equal(described(w), "event NodeNotReady; mark-unknown n0");
}

/* A node that never posted a Ready condition has the startup grace, from its creation. */
static void
never_posted_has_the_startup_grace(void **state)
{
	struct ctl_world *w = *state;
	const struct node n0 = { "n0", NULL, NULL, 0, NULL, NULL, NULL, NULL };
	const cJSON *conditions;

	/* Created 2025-12-31T23:59:00Z, 60 s before NOW. */
	see_node(w, &n0, AT(5));
	see_node(w, &(struct node){ "n1", "True", NULL, AT(0), NULL, NULL, NULL, NULL }, AT(0));
	ctl_sync(w, "n0", AT(0));
	assert_string_equal(described(w), "event RegisteredNode");
	ctl_sync(w, "n0", AT(1));
	assert_string_equal(described(w), "mark-unknown n0");
	conditions = json_path(w->result.writes[0].body, "status.conditions");
	assert_int_equal(cJSON_GetArraySize(conditions), 4);
	assert_string_equal(json_string(cJSON_GetArrayItem(conditions, 0), "reason"),
	    "NodeStatusNeverUpdated");
	assert_string_equal(json_string(cJSON_GetArrayItem(conditions, 0),
	    "lastHeartbeatTime"), "2025-12-31T23:59:00Z");
}

/* A restarted controller counts from its start, as kube's, whose memory starts empty: a
 * node silent since long before gets a whole grace period. */
static void
restart_counts_from_the_start(void **state)
{
	struct ctl_world *w = *state;
	const struct node n0 = { "n0", "True", NULL, AT(0), NULL, NULL, NULL, NULL };

	see_node(w, &n0, AT(0));
	see_node(w, &(struct node){ "n1", "True", NULL, AT(0), NULL, NULL, NULL, NULL }, AT(0));
	controller_free(w->c);
	w->c = NULL;
	assert_int_equal(ctl_start(w, &nodelifecycle_controller_type, NULL), 0);
	ctl_sync(w, "n0", AT(1000));
	assert_string_equal(described(w), "event RegisteredNode");
	ctl_sync(w, "n0", AT(1050));
	assert_string_equal(described(w), "");
	ctl_sync(w, "n0", AT(1051));
	assert_string_equal(described(w), "event NodeNotReady; mark-unknown n0");
}

/* The NoExecute taints of a zone come one node per 10 s (--node-eviction-rate 0.1); a node
 * whose taint waits is looked at again when the zone has a token. */
static void
noexecute_taints_are_paced_per_zone(void **state)
{
	struct ctl_world *w = *state;
	const struct node nodes[] = {
		{ "n0", "Unknown", "NodeStatusUnknown", AT(0), "r:z", NULL, NULL, NULL },
		{ "n1", "Unknown", "NodeStatusUnknown", AT(0), "r:z", NULL, NULL, NULL },
		{ "n2", "True", NULL, AT(0), "r:z", NULL, NULL, NULL },
		{ "n3", "True", NULL, AT(0), "r:z", NULL, NULL, NULL },
		/* Another zone has its own limiter. */
		{ "n4", "Unknown", "NodeStatusUnknown", AT(0), "r:y", NULL, NULL, NULL },
		{ "n5", "True", NULL, AT(0), "r:y", NULL, NULL, NULL },
	};

	for (size_t i = 0; i < NELEM(nodes); i++)
		see_node(w, &nodes[i], AT(0));
	ctl_sync(w, "n0", AT(1));
	assert_string_equal(patched_taints(w), "node.kubernetes.io/unreachable:NoSchedule, "
	    "node.kubernetes.io/unreachable:NoExecute");
	ctl_sync(w, "n1", AT(2));
	assert_string_equal(patched_taints(w), "node.kubernetes.io/unreachable:NoSchedule");
	assert_true(w->result.requeue_after == 5);	/* the monitor period comes first */
	ctl_sync(w, "n4", AT(2));
	assert_string_equal(patched_taints(w), "node.kubernetes.io/unreachable:NoSchedule, "
	    "node.kubernetes.io/unreachable:NoExecute");
	see_node(w, &(struct node){ "n1", "Unknown", "NodeStatusUnknown", AT(0), "r:z",
	    "[" UNREACHABLE_NS "]", "2", NULL }, AT(3));
	ctl_sync(w, "n1", AT(7));
	assert_string_equal(patched_taints(w), "");
	assert_true(w->result.requeue_after > 3.99 && w->result.requeue_after < 4.01);
	ctl_sync(w, "n1", AT(11.001));
	assert_string_equal(patched_taints(w), "node.kubernetes.io/unreachable:NoSchedule, "
	    "node.kubernetes.io/unreachable:NoExecute");
	assert_true(w->result.requeue_after == 5);
}

/* A node that turns from Unknown to False (or back) swaps its NoExecute taint at once,
 * without a token; a Ready node loses it. */
static void
noexecute_taint_swaps_at_once(void **state)
{
	struct ctl_world *w = *state;
	const struct node nodes[] = {
		{ "n0", "False", "KubeletNotReady", AT(0), NULL,
		    "[" UNREACHABLE_NS "," UNREACHABLE_NE "]", NULL, NULL },
		{ "n1", "Unknown", "NodeStatusUnknown", AT(0), NULL, NULL, NULL, NULL },
		{ "n2", "True", NULL, AT(0), NULL, NULL, NULL, NULL },
		{ "n3", "True", NULL, AT(0), NULL, "[" UNREACHABLE_NE "]", NULL, NULL },
	};

	for (size_t i = 0; i < NELEM(nodes); i++)
		see_node(w, &nodes[i], AT(0));
	ctl_sync(w, "n1", AT(1));	/* spends the token */
	assert_string_equal(patched_taints(w), "node.kubernetes.io/unreachable:NoSchedule, "
	    "node.kubernetes.io/unreachable:NoExecute");
	ctl_sync(w, "n0", AT(2));
	assert_string_equal(patched_taints(w), "node.kubernetes.io/not-ready:NoSchedule, "
	    "node.kubernetes.io/not-ready:NoExecute");
	ctl_sync(w, "n3", AT(2));
	assert_string_equal(described(w), "event RegisteredNode; taint n3");
	assert_string_equal(patched_taints(w), "");
}

/* No Ready node left anywhere: the control plane more likely lost the nodes than they all
 * died. Every NoExecute taint comes off and none is added (the NoSchedule ones stay);
 * once a node is Ready again, tainting resumes and every grace period starts anew. */
static void
full_disruption_stops_the_tainting(void **state)
{
	struct ctl_world *w = *state;
	const struct node nodes[] = {
		{ "n0", "Unknown", "NodeStatusUnknown", AT(0), NULL,
		    "[" UNREACHABLE_NS "," UNREACHABLE_NE "]", NULL, NULL },
		{ "n1", "Unknown", "NodeStatusUnknown", AT(0), NULL, "[" UNREACHABLE_NS "]", NULL,
		    NULL },
	};

	for (size_t i = 0; i < NELEM(nodes); i++)
		see_node(w, &nodes[i], AT(0));
	ctl_sync(w, "n0", AT(1));
	assert_string_equal(patched_taints(w), "node.kubernetes.io/unreachable:NoSchedule");
	ctl_sync(w, "n1", AT(1));
	assert_string_equal(patched_taints(w), "");
	/* n1 is back: at the next count, the mode ends. The limiters come back empty (kube's
	 * SwapLimiter from one that gives nothing), so n0 is tainted again 10 s later. */
	see_node(w, &(struct node){ "n0", "Unknown", "NodeStatusUnknown", AT(0), NULL,
	    "[" UNREACHABLE_NS "]", "2", NULL }, AT(1));
	see_node(w, &(struct node){ "n1", "True", NULL, AT(6), NULL, "[" UNREACHABLE_NS "]",
	    "2", NULL }, AT(6));
	ctl_sync(w, "n0", AT(7));
	assert_string_equal(patched_taints(w), "");
	assert_true(w->result.requeue_after == 5);
	ctl_sync(w, "n0", AT(18));
	assert_string_equal(patched_taints(w), "node.kubernetes.io/unreachable:NoSchedule, "
	    "node.kubernetes.io/unreachable:NoExecute");
}

/* A small zone partially disrupted takes no new NoExecute taint (the secondary rate is for
 * zones of more than 50 nodes). */
static void
small_partial_zone_adds_no_noexecute(void **state)
{
	struct ctl_world *w = *state;
	const struct node nodes[] = {
		{ "n0", "Unknown", "NodeStatusUnknown", AT(0), NULL, NULL, NULL, NULL },
		{ "n1", "Unknown", "NodeStatusUnknown", AT(0), NULL, NULL, NULL, NULL },
		{ "n2", "Unknown", "NodeStatusUnknown", AT(0), NULL, NULL, NULL, NULL },
		{ "n3", "True", NULL, AT(0), NULL, NULL, NULL, NULL },
	};

	for (size_t i = 0; i < NELEM(nodes); i++)
		see_node(w, &nodes[i], AT(0));
	ctl_sync(w, "n0", AT(1));
	assert_string_equal(patched_taints(w), "node.kubernetes.io/unreachable:NoSchedule");
	assert_true(w->result.requeue_after == 5);
}

/* kube's node_collector_* metrics: each zone's size, not Ready nodes and health at each
 * count, and an eviction counted when a NoExecute taint is added. */
static void
zone_metrics_as_kube(void **state)
{
	struct ctl_world *w = *state;
	struct metrics_registry *registry = metrics_registry_new();
	struct controller_config config = { .metrics = registry };
	const struct node nodes[] = {
		{ "n0", "Unknown", "NodeStatusUnknown", AT(0), "r:z", NULL, NULL, NULL },
		{ "n1", "True", NULL, AT(0), "r:z", NULL, NULL, NULL },
		{ "n2", "True", NULL, AT(0), "r:y", NULL, NULL, NULL },
	};
	struct buf text;

	controller_free(w->c);
	w->c = NULL;
	assert_int_equal(ctl_start(w, &nodelifecycle_controller_type, &config), 0);
	for (size_t i = 0; i < NELEM(nodes); i++)
		see_node(w, &nodes[i], AT(0));
	ctl_sync(w, "n0", AT(1));
	assert_string_equal(described(w), "event RegisteredNode; taint n0");
	assert_non_null(w->result.writes[0].count_done);
	metrics_counter_add(w->result.writes[0].count_done, 1);	/* the patch went */
	buf_init(&text);
	metrics_render(registry, &text);
	assert_non_null(strstr(text.data, "node_collector_zone_size{zone=\"r:z\"} 2\n"));
	assert_non_null(strstr(text.data, "node_collector_unhealthy_nodes_in_zone{zone=\"r:z\"} 1\n"));
	assert_non_null(strstr(text.data, "node_collector_zone_health{zone=\"r:z\"} 50\n"));
	assert_non_null(strstr(text.data, "node_collector_zone_health{zone=\"r:y\"} 100\n"));
	assert_non_null(strstr(text.data, "node_collector_evictions_total{zone=\"r:z\"} 1\n"));
	buf_free(&text);
	sync_result_clear(&w->result);
	controller_free(w->c);
	w->c = NULL;
	metrics_registry_free(registry);
}

/* kube's update duration histograms: each node's update (its sync and the writes after
 * it, as the daemon reports it) in the one, and at the next count of the zones, a monitor
 * period later, the period's updates added up in the other. */
static void
update_duration_histograms(void **state)
{
	struct ctl_world *w = *state;
	struct metrics_registry *registry = metrics_registry_new();
	struct controller_config config = { .metrics = registry };
	const struct node nodes[] = {
		{ "n0", "True", NULL, AT(0), "r:z", NULL, NULL, NULL },
		{ "n1", "True", NULL, AT(0), "r:z", NULL, NULL, NULL },
	};
	struct buf text;

	controller_free(w->c);
	w->c = NULL;
	assert_int_equal(ctl_start(w, &nodelifecycle_controller_type, &config), 0);
	assert_non_null(nodelifecycle_controller_type.processed);
	for (size_t i = 0; i < NELEM(nodes); i++)
		see_node(w, &nodes[i], AT(0));
	ctl_sync(w, "n0", AT(1));
	nodelifecycle_controller_type.processed(w->c, "n0", 0.003, 0);
	nodelifecycle_controller_type.processed(w->c, "n1", 0.02, 0);
	nodelifecycle_controller_type.processed(w->c, "n1", -1, 1);	/* not timed */
	buf_init(&text);
	metrics_render(registry, &text);
	assert_non_null(strstr(text.data, "node_collector_update_node_health_duration_seconds_"
	    "bucket{le=\"0.001\"} 0\n"));
	assert_non_null(strstr(text.data, "node_collector_update_node_health_duration_seconds_"
	    "bucket{le=\"0.004\"} 1\n"));
	assert_non_null(strstr(text.data, "node_collector_update_node_health_duration_seconds_"
	    "bucket{le=\"0.064\"} 2\n"));
	assert_non_null(strstr(text.data, "node_collector_update_node_health_duration_seconds_"
	    "count 2\n"));
	/* The first count of the zones came before any update: nothing observed yet. */
	assert_non_null(strstr(text.data, "node_collector_update_all_nodes_health_duration_"
	    "seconds_count 0\n"));
	buf_free(&text);
	sync_result_clear(&w->result);

	ctl_sync(w, "n1", AT(3));	/* within the period: no count */
	buf_init(&text);
	metrics_render(registry, &text);
	assert_non_null(strstr(text.data, "node_collector_update_all_nodes_health_duration_"
	    "seconds_count 0\n"));
	buf_free(&text);
	sync_result_clear(&w->result);

	ctl_sync(w, "n1", AT(7));	/* a period later: the zones are counted again */
	buf_init(&text);
	metrics_render(registry, &text);
	assert_non_null(strstr(text.data, "node_collector_update_all_nodes_health_duration_"
	    "seconds_bucket{le=\"0.01\"} 0\n"));
	assert_non_null(strstr(text.data, "node_collector_update_all_nodes_health_duration_"
	    "seconds_bucket{le=\"0.04\"} 1\n"));
	assert_non_null(strstr(text.data, "node_collector_update_all_nodes_health_duration_"
	    "seconds_sum 0.023\n"));
	assert_non_null(strstr(text.data, "node_collector_update_all_nodes_health_duration_"
	    "seconds_count 1\n"));
	buf_free(&text);
	sync_result_clear(&w->result);
	controller_free(w->c);
	w->c = NULL;
	metrics_registry_free(registry);
}

/* The zones view: kube's zone key, the beta labels first, excluded nodes left out. */
static void
zones_view_counts_as_kube(void **state)
{
	struct ctl_world *w = *state;
	const struct node nodes[] = {
		{ "n0", "True", NULL, AT(0), "r:z", NULL, NULL, NULL },
		{ "n1", "False", NULL, AT(0), "r:z", NULL, NULL, NULL },
		{ "n2", NULL, NULL, AT(0), "r:z", NULL, NULL, NULL },
		{ "n3", "True", NULL, AT(0), NULL, NULL, NULL, NULL },
		{ "n4", "False", NULL, AT(0), "r:z", NULL, NULL,
		    "\"node.kubernetes.io/exclude-disruption\":\"\"" },
		{ "n5", "True", NULL, AT(0), "r:z", NULL, NULL,
		    "\"failure-domain.beta.kubernetes.io/zone\":\"old\"" },
	};
	sqlite3_stmt *stmt;
	struct buf b;

	for (size_t i = 0; i < NELEM(nodes); i++)
		see_node(w, &nodes[i], AT(0));
	assert_int_equal(sqlite3_prepare_v2(store_db(w->store), "SELECT zone, nodes, not_ready "
	    "FROM nodelifecycle_zones ORDER BY zone", -1, &stmt, NULL), SQLITE_OK);
	buf_init(&b);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&b, "%s[%s]=%d/%d", b.len > 0 ? " " : "",
		    (const char *)sqlite3_column_text(stmt, 0), sqlite3_column_int(stmt, 2),
		    sqlite3_column_int(stmt, 1));
	sqlite3_finalize(stmt);
	assert_string_equal(ctl_keep(w, buf_detach(&b)), "[]=0/1 [r:old]=0/1 [r:z]=2/3");
}

/* The handlers keep node_health: a node's heartbeat moving, a lease renewed later; a
 * deleted node's row goes. */
static void
handlers_keep_node_health(void **state)
{
	struct ctl_world *w = *state;
	sqlite3_stmt *stmt;
	double probe;
	char *keys;

	assert_int_equal(sqlite3_prepare_v2(store_db(w->store), "SELECT probe_at FROM "
	    "node_health WHERE node = 'n0'", -1, &stmt, NULL), SQLITE_OK);
#define PROBE() (sqlite3_reset(stmt), sqlite3_step(stmt) == SQLITE_ROW ? \
	sqlite3_column_double(stmt, 0) : -1)
	see_node(w, &(struct node){ "n0", "True", NULL, AT(0), NULL, NULL, NULL, NULL }, AT(3));
	assert_true(PROBE() == AT(3));
	see_node(w, &(struct node){ "n0", "True", NULL, AT(0), NULL, NULL, NULL, NULL }, AT(9));
	assert_true(PROBE() == AT(3));
	see_node(w, &(struct node){ "n0", "True", NULL, AT(10), NULL, NULL, NULL, NULL },
	    AT(12));
	assert_true(PROBE() == AT(12));
	see_lease(w, "kube-node-lease", "n0", "2026-01-01T00:00:20.000000Z", AT(20));
	assert_true(PROBE() == AT(20));
	see_lease(w, "kube-node-lease", "n0", "2026-01-01T00:00:20.000000Z", AT(25));
	probe = PROBE();
	assert_true(probe == AT(20));
	ctl_keys_clear(w);
	ctl_tell_at(w, INFORMER_DELETED, resource_find("nodes"), node_new(&(struct node){ "n0",
	    "True", NULL, AT(10), NULL, NULL, NULL, NULL }), NULL, AT(30));
	assert_true(PROBE() == -1);
	keys = ctl_keys(w);
	assert_string_equal(keys, "n0");
	free(keys);
	sqlite3_finalize(stmt);
#undef PROBE
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(zone_cases) + 32];
	size_t n = 0;

#define T(f) tests[n++] = (struct CMUnitTest){ #f, f, world_setup, world_teardown, NULL }
	tests[n++] = (struct CMUnitTest){ "zone states by counts (ComputeZoneState)",
	    zone_state_by_counts, NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(zone_cases); i++)
		tests[n++] = (struct CMUnitTest){ zone_cases[i].name, zone_case, NULL, NULL,
		    (void *)&zone_cases[i] };
	tests[n++] = (struct CMUnitTest){ "zone limiters follow the states",
	    zone_limiters_follow_the_states, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the limiter paces and swaps as kube's",
	    limiter_paces_and_swaps, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a silent node's conditions go Unknown as kube's",
	    mark_unknown_as_kube, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the zone of a node", zone_of_a_node, NULL, NULL,
	    NULL };
	T(nodes_registered_and_removed);
	T(silent_kubelet_goes_unknown);
	T(lease_keeps_a_node_alive);
	T(never_posted_has_the_startup_grace);
	T(restart_counts_from_the_start);
	T(noexecute_taints_are_paced_per_zone);
	T(noexecute_taint_swaps_at_once);
	T(full_disruption_stops_the_tainting);
	T(small_partial_zone_adds_no_noexecute);
	T(zones_view_counts_as_kube);
	T(zone_metrics_as_kube);
	T(next_check_at_the_pass_past_the_grace);
	T(update_duration_histograms);
	T(handlers_keep_node_health);
#undef T
	return _cmocka_run_group_tests("nodehealth", tests, n, NULL, NULL);
}
