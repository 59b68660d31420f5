/*
 * test_endpointslice.c - the EndpointSlice controller (controllers/endpointslice.c)
 * against kube's rules, as data.
 *
 * The reconciler rows are kube v1.36.3's k8s.io/endpointslice reconciler_test.go cases
 * (TestReconcileManyPods, ...SomePreexisting, ...SomePreexistingWorseAllocation,
 * ...Updating, ...Recycling, ...UpdatePacking, ...NamedPorts, TestReconcileMaxEndpoints-
 * PerSlice, TestReconcile1Pod's families, TestReconcileEmpty's placeholder): their pods
 * (pod N: IP from N, node node-1, Ready unless the row says, one container port 80 or a
 * named one), the slices that exist before, the Service's target port now, and what kube
 * expects: how many creations, updates and deletions, and the sizes of the slices after
 * (unordered). The endpoint rows are utils_test.go's podToEndpoint cases (ready, serving,
 * terminating, publishNotReadyAddresses, zone, hostname). Then a sync through the cache
 * (the view service_pods) and the handlers.
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
#include "controllers/endpointslice.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

/* --- objects -------------------------------------------------------------------------- */

enum unready {
	ALL_READY,
	MOD3,			/* pod N with N % 3 == 0 is not ready (kube's ready := i%3 != 0) */
	POS10,			/* the pods at list positions 0, 10, ... below 100 (UpdatePacking) */
};

enum family { V4, V6, DUAL };

static cJSON *
service_new(int target_port, const char *named, enum family fam, int publish)
{
	char *text = xasprintf("{\"metadata\":{\"name\":\"foo\",\"namespace\":\"test\","
	    "\"uid\":\"svc-uid\",\"resourceVersion\":\"1\",\"labels\":{\"foo\":\"bar\"}},\"spec\":{\"selector\":{\"foo\":"
	    "\"bar\"},\"clusterIP\":\"10.0.0.10\",\"ports\":[{\"name\":\"%s\",\"port\":80,"
	    "\"protocol\":\"TCP\",\"targetPort\":%s%s%s}],\"ipFamilies\":%s,"
	    "\"publishNotReadyAddresses\":%s}}",
	    named != NULL ? "" : "foo", named != NULL ? "\"" : "",
	    named != NULL ? named : (target_port == 81 ? "81" : "80"), named != NULL ? "\"" : "",
	    fam == V4 ? "[\"IPv4\"]" : fam == V6 ? "[\"IPv6\"]" : "[\"IPv4\",\"IPv6\"]",
	    publish ? "true" : "false");
	cJSON *s = fixture_parse(text);

	free(text);
	return s;
}

/* Pod n as kube's newPod makes it: on node-1, IPs from n, ready or not; a named port
 * "http" of number named_port when not 0. */
static cJSON *
pod_make(int n, int ready, int named_port, int terminating)
{
	char *text = xasprintf("{\"metadata\":{\"name\":\"pod%d\",\"namespace\":\"test\","
	    "\"uid\":\"uid-pod%d\",\"resourceVersion\":\"1\",\"labels\":{\"foo\":\"bar\"}%s},"
	    "\"spec\":{\"nodeName\":\"node-1\",\"containers\":[{\"name\":\"c\",\"ports\":"
	    "[{\"name\":\"http\",\"containerPort\":%d,\"protocol\":\"TCP\"}]}]},"
	    "\"status\":{\"phase\":\"Running\",\"podIP\":\"1.2.%d.%d\",\"podIPs\":"
	    "[{\"ip\":\"1.2.%d.%d\"},{\"ip\":\"2001:db8::%x\"}],"
	    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
	    n, n, terminating ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "",
	    named_port != 0 ? named_port : 80, n / 250, n % 250, n / 250, n % 250, n + 1,
	    ready ? "True" : "False");
	cJSON *p = fixture_parse(text);

	free(text);
	return p;
}

/* --- the reconciler rows --------------------------------------------------------------- */

struct range {
	int from, to, step;	/* pod numbers from..to-1, every step-th */
};

struct reconcile_row {
	const char *name;
	struct range pods[3];		/* the pods now (to 0 ends) */
	enum unready unready;
	int named_mod;			/* pod N's "http" port is 8080 + N % named_mod; 0: none */
	enum family family;
	struct range existing[12];	/* slices before, of the pods as they were (all ready
					   when existing_ready), target port 80 */
	int existing_ready;
	int recycle_by;			/* or: existing slices of recycle_by pods each */
	int target_port;		/* the Service's now: 80 or 81 */
	int max;
	int creates, updates, deletes;
	int lengths[12];		/* the slices' sizes after, sorted down; 0 ends */
	int check_added;		/* compare with kube's addedPerSync and removedPerSync */
	int added, removed;
};

static const struct reconcile_row reconcile_rows[] = {
	{ .name = "TestReconcileEmpty: no pods, a placeholder slice",
	  .target_port = 80, .max = 100, .creates = 1, .lengths = { 0 } },
	{ .name = "TestReconcile1Pod: one pod, IPv4", .pods = { { 0, 1, 1 } },
	  .target_port = 80, .max = 100, .creates = 1, .lengths = { 1 } },
	{ .name = "TestReconcile1Pod: one pod, IPv6", .pods = { { 0, 1, 1 } }, .family = V6,
	  .target_port = 80, .max = 100, .creates = 1, .lengths = { 1 } },
	{ .name = "TestReconcile1Pod: one pod, dual stack: a slice per family",
	  .pods = { { 0, 1, 1 } }, .family = DUAL,
	  .target_port = 80, .max = 100, .creates = 2, .lengths = { 1, 1 } },
	{ .name = "TestReconcileManyPods", .pods = { { 0, 250, 1 } }, .unready = MOD3,
	  .target_port = 80, .max = 100, .creates = 3, .lengths = { 100, 100, 50 } ,
	  .check_added = 1, .added = 250 },
	{ .name = "TestReconcileEndpointSlicesSomePreexisting", .pods = { { 0, 250, 1 } },
	  .unready = MOD3, .existing = { { 1, 246, 4 }, { 3, 246, 4 } },
	  .target_port = 80, .max = 100, .creates = 1, .updates = 1,
	  .lengths = { 100, 89, 61 } ,
	  .check_added = 1, .added = 127 },
	{ .name = "TestReconcileEndpointSlicesSomePreexistingWorseAllocation",
	  .pods = { { 0, 300, 1 } }, .unready = MOD3,
	  .existing = { { 1, 296, 4 }, { 3, 296, 4 } },
	  .target_port = 80, .max = 100, .creates = 2, .lengths = { 100, 74, 74, 52 } ,
	  .check_added = 1, .added = 152 },
	{ .name = "TestReconcileEndpointSlicesUpdating: nothing changed, nothing written",
	  .pods = { { 0, 250, 1 } }, .unready = MOD3,
	  .existing = { { 0, 100, 1 }, { 100, 200, 1 }, { 200, 250, 1 } },
	  .target_port = 80, .max = 100, .lengths = { 100, 100, 50 } },
	{ .name = "TestReconcileEndpointSlicesUpdating: a new target port updates each slice",
	  .pods = { { 0, 250, 1 } }, .unready = MOD3,
	  .existing = { { 0, 100, 1 }, { 100, 200, 1 }, { 200, 250, 1 } },
	  .target_port = 81, .max = 100, .updates = 3, .lengths = { 100, 100, 50 } },
	{ .name = "TestReconcileEndpointSlicesRecycling: unchanged, nothing written",
	  .pods = { { 0, 300, 1 } }, .unready = MOD3, .recycle_by = 30,
	  .target_port = 80, .max = 100,
	  .lengths = { 30, 30, 30, 30, 30, 30, 30, 30, 30, 30 } },
	{ .name = "TestReconcileEndpointSlicesRecycling: a new port, 3 rewritten, 7 deleted",
	  .pods = { { 0, 300, 1 } }, .unready = MOD3, .recycle_by = 30,
	  .target_port = 81, .max = 100, .updates = 3, .deletes = 7,
	  .lengths = { 100, 100, 100 } ,
	  .check_added = 1, .added = 300 },
	{ .name = "TestReconcileEndpointSlicesUpdatePacking",
	  .pods = { { 0, 80, 1 }, { 100, 120, 1 }, { 200, 215, 1 } }, .unready = POS10,
	  .existing = { { 0, 80, 1 }, { 100, 120, 1 } }, .existing_ready = 1,
	  .target_port = 80, .max = 100, .updates = 2, .lengths = { 95, 20 } ,
	  .check_added = 1, .added = 15 },
	{ .name = "TestReconcileEndpointSlicesNamedPorts: a slice per port number",
	  .pods = { { 0, 300, 1 } }, .unready = MOD3, .named_mod = 5,
	  .target_port = 80, .max = 100, .creates = 5, .lengths = { 60, 60, 60, 60, 60 } },
	{ .name = "TestReconcileMaxEndpointsPerSlice: 50", .pods = { { 0, 250, 1 } },
	  .unready = MOD3, .target_port = 80, .max = 50, .creates = 5,
	  .lengths = { 50, 50, 50, 50, 50 } },
	{ .name = "TestReconcileMaxEndpointsPerSlice: 80", .pods = { { 0, 250, 1 } },
	  .unready = MOD3, .target_port = 80, .max = 80, .creates = 4,
	  .lengths = { 80, 80, 80, 10 } },
	{ .name = "TestReconcileMaxEndpointsPerSlice: 150", .pods = { { 0, 250, 1 } },
	  .unready = MOD3, .target_port = 80, .max = 150, .creates = 2, .lengths = { 150, 100 } },
	{ .name = "TestReconcileMaxEndpointsPerSlice: 250", .pods = { { 0, 250, 1 } },
	  .unready = MOD3, .target_port = 80, .max = 250, .creates = 1, .lengths = { 250 } },
	{ .name = "TestReconcileMaxEndpointsPerSlice: 500", .pods = { { 0, 250, 1 } },
	  .unready = MOD3, .target_port = 80, .max = 500, .creates = 1, .lengths = { 250 } },
};

static int
desc_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x < y) - (x > y);
}

static int
pod_ready(const struct reconcile_row *row, int n, int position)
{
	switch (row->unready) {
	case MOD3:
		return n % 3 != 0;
	case POS10:
		return !(position < 100 && position % 10 == 0);
	default:
		return 1;
	}
}

/* An existing slice named name of the pods of the cJSON endpoints (taken). */
static cJSON *
existing_slice(const cJSON *service, const char *name, cJSON *endpoints, const cJSON *ports)
{
	cJSON *s = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(s, "metadata"), *ref;

	cJSON_AddStringToObject(meta, "name", name);
	cJSON_AddStringToObject(meta, "namespace", "test");
	cJSON_AddStringToObject(meta, "uid", name);
	cJSON_AddStringToObject(meta, "resourceVersion", "1");
	cJSON_AddItemToObject(meta, "labels", endpointslice_labels(service, NULL, NULL));
	ref = cJSON_CreateObject();
	cJSON_AddStringToObject(ref, "apiVersion", "v1");
	cJSON_AddStringToObject(ref, "kind", "Service");
	cJSON_AddStringToObject(ref, "name", "foo");
	cJSON_AddStringToObject(ref, "uid", "svc-uid");
	cJSON_AddBoolToObject(ref, "controller", 1);
	cJSON_AddBoolToObject(ref, "blockOwnerDeletion", 1);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"), ref);
	cJSON_AddStringToObject(s, "addressType", "IPv4");
	cJSON_AddItemToObject(s, "endpoints", endpoints);
	cJSON_AddItemToObject(s, "ports", cJSON_Duplicate(ports, 1));
	return s;
}

static void
test_reconcile_row(void **state)
{
	const struct reconcile_row *row = *state;
	cJSON *service = service_new(row->target_port, row->named_mod ? "http" : NULL, row->family,
	    0);
	cJSON *old_service = service_new(80, row->named_mod ? "http" : NULL, row->family, 0);
	cJSON *pods[400], *existing[16];
	const char *zones[400], *types[2];
	int known[400], npods = 0, nexisting = 0, lengths[32], nlengths = 0, ntypes;
	struct endpointslice_plan plan;

	memset(&plan, 0, sizeof plan);
	for (int r = 0; r < 3 && row->pods[r].to > 0; r++) {
		for (int n = row->pods[r].from; n < row->pods[r].to; n += row->pods[r].step) {
			pods[npods] = pod_make(n, pod_ready(row, n, npods),
			    row->named_mod ? 8080 + n % row->named_mod : 0, 0);
			zones[npods] = NULL;
			known[npods++] = 1;
		}
	}
	/* The slices before: endpoints of the pods as they were, of the old Service. */
	for (int e = 0; e < 12 && (row->existing[e].to > 0 || row->recycle_by); e++) {
		int from = row->recycle_by ? e * row->recycle_by : row->existing[e].from;
		int to = row->recycle_by ? from + row->recycle_by : row->existing[e].to;
		int step = row->recycle_by ? 1 : row->existing[e].step;
		cJSON *eps, *ports = NULL;
		char name[16];

		if (row->recycle_by && from >= npods)
			break;
		eps = cJSON_CreateArray();
		for (int n = from; n < to; n += step) {
			int position = 0;
			char pname[16];
			cJSON *pod;

			snprintf(pname, sizeof pname, "pod%d", n);
			for (int i = 0; i < npods; i++) {
				if (strcmp(json_string(pods[i], "metadata.name"), pname) == 0)
					position = i;
			}
			pod = pod_make(n, row->existing_ready ? 1 : pod_ready(row, n, position),
			    row->named_mod ? 8080 + n % row->named_mod : 0, 0);
			cJSON_AddItemToArray(eps, endpointslice_pod_endpoint(old_service, pod, "IPv4",
			    NULL));
			if (ports == NULL)
				ports = endpointslice_pod_ports(old_service, pod);
			cJSON_Delete(pod);
		}
		snprintf(name, sizeof name, "slice-%d", e);
		existing[nexisting++] = existing_slice(old_service, name, eps, ports);
		cJSON_Delete(ports);
	}
	ntypes = endpointslice_address_types(service, types);
	for (int t = 0; t < ntypes; t++)
		endpointslice_reconcile(service, (const cJSON *const *)pods, zones, known, npods,
		    existing, nexisting, types[t], row->max, &plan);
	assert_int_equal(plan.ncreate, row->creates);
	assert_int_equal(plan.nupdate, row->updates);
	assert_int_equal(plan.nremove, row->deletes);
	assert_int_equal(plan.nskipped, 0);
	if (row->check_added) {
		assert_int_equal(plan.added, row->added);
		assert_int_equal(plan.removed, row->removed);
	}
	/* The sizes after: the existing slices not written, then what was written. */
	for (int i = 0; i < nexisting; i++) {
		int touched = 0;

		for (int k = 0; k < plan.nremove; k++)
			touched |= plan.remove[k] == existing[i];
		for (int k = 0; k < plan.nupdate; k++)
			touched |= strcmp(json_string(plan.update[k], "metadata.name"),
			    json_string(existing[i], "metadata.name")) == 0;
		if (!touched)
			lengths[nlengths++] = cJSON_GetArraySize(
			    cJSON_GetObjectItemCaseSensitive(existing[i], "endpoints"));
	}
	for (int k = 0; k < plan.nupdate; k++) {
		assert_int_not_equal(plan.nupdate, 0);
		assert_true(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(plan.update[k],
		    "endpoints")) <= row->max);
		lengths[nlengths++] = cJSON_GetArraySize(
		    cJSON_GetObjectItemCaseSensitive(plan.update[k], "endpoints"));
	}
	for (int k = 0; k < plan.ncreate; k++)
		lengths[nlengths++] = cJSON_GetArraySize(
		    cJSON_GetObjectItemCaseSensitive(plan.create[k], "endpoints"));
	qsort(lengths, (size_t)nlengths, sizeof *lengths, desc_int);
	{
		int want = 0;

		while (want < 12 && row->lengths[want] > 0)
			want++;
		if (want == 0 && row->creates == 1 && nlengths == 1)
			want = 1;	/* the placeholder: one slice of 0 */
		assert_int_equal(nlengths, want);
		for (int i = 0; i < want; i++)
			assert_int_equal(lengths[i], row->lengths[i]);
	}
	endpointslice_plan_clear(&plan);
	for (int i = 0; i < npods; i++)
		cJSON_Delete(pods[i]);
	for (int i = 0; i < nexisting; i++)
		cJSON_Delete(existing[i]);
	cJSON_Delete(service);
	cJSON_Delete(old_service);
}

/* --- an endpoint of a pod (utils_test.go's TestPodToEndpoint) -------------------------- */

struct endpoint_row {
	const char *name;
	int ready, terminating, publish;
	enum family family;
	const char *zone;
	const char *hostname, *subdomain;
	const char *want;	/* the endpoint, as JSON */
};

static const struct endpoint_row endpoint_rows[] = {
	{ "ready pod", 1, 0, 0, V4, NULL, NULL, NULL,
	  "{\"addresses\":[\"1.2.0.1\"],\"conditions\":{\"ready\":true,\"serving\":true,"
	  "\"terminating\":false},\"targetRef\":{\"kind\":\"Pod\",\"namespace\":\"test\","
	  "\"name\":\"pod1\",\"uid\":\"uid-pod1\"},\"nodeName\":\"node-1\"}" },
	{ "not ready pod", 0, 0, 0, V4, NULL, NULL, NULL,
	  "{\"addresses\":[\"1.2.0.1\"],\"conditions\":{\"ready\":false,\"serving\":false,"
	  "\"terminating\":false},\"targetRef\":{\"kind\":\"Pod\",\"namespace\":\"test\","
	  "\"name\":\"pod1\",\"uid\":\"uid-pod1\"},\"nodeName\":\"node-1\"}" },
	{ "not ready pod, publishNotReadyAddresses", 0, 0, 1, V4, NULL, NULL, NULL,
	  "{\"addresses\":[\"1.2.0.1\"],\"conditions\":{\"ready\":true,\"serving\":false,"
	  "\"terminating\":false},\"targetRef\":{\"kind\":\"Pod\",\"namespace\":\"test\","
	  "\"name\":\"pod1\",\"uid\":\"uid-pod1\"},\"nodeName\":\"node-1\"}" },
	{ "ready terminating pod", 1, 1, 0, V4, NULL, NULL, NULL,
	  "{\"addresses\":[\"1.2.0.1\"],\"conditions\":{\"ready\":false,\"serving\":true,"
	  "\"terminating\":true},\"targetRef\":{\"kind\":\"Pod\",\"namespace\":\"test\","
	  "\"name\":\"pod1\",\"uid\":\"uid-pod1\"},\"nodeName\":\"node-1\"}" },
	{ "ready terminating pod, publishNotReadyAddresses", 1, 1, 1, V4, NULL, NULL, NULL,
	  "{\"addresses\":[\"1.2.0.1\"],\"conditions\":{\"ready\":true,\"serving\":true,"
	  "\"terminating\":true},\"targetRef\":{\"kind\":\"Pod\",\"namespace\":\"test\","
	  "\"name\":\"pod1\",\"uid\":\"uid-pod1\"},\"nodeName\":\"node-1\"}" },
	{ "IPv6 address, zone of the node", 1, 0, 0, V6, "us-west-2a", NULL, NULL,
	  "{\"addresses\":[\"2001:db8::2\"],\"conditions\":{\"ready\":true,\"serving\":true,"
	  "\"terminating\":false},\"targetRef\":{\"kind\":\"Pod\",\"namespace\":\"test\","
	  "\"name\":\"pod1\",\"uid\":\"uid-pod1\"},\"nodeName\":\"node-1\","
	  "\"zone\":\"us-west-2a\"}" },
	{ "hostname when the subdomain is the Service", 1, 0, 0, V4, NULL, "example-hostname",
	  "foo",
	  "{\"addresses\":[\"1.2.0.1\"],\"conditions\":{\"ready\":true,\"serving\":true,"
	  "\"terminating\":false},\"hostname\":\"example-hostname\",\"targetRef\":{"
	  "\"kind\":\"Pod\",\"namespace\":\"test\",\"name\":\"pod1\",\"uid\":\"uid-pod1\"},"
	  "\"nodeName\":\"node-1\"}" },
	{ "no hostname when the subdomain is another", 1, 0, 0, V4, NULL, "example-hostname",
	  "other",
	  "{\"addresses\":[\"1.2.0.1\"],\"conditions\":{\"ready\":true,\"serving\":true,"
	  "\"terminating\":false},\"targetRef\":{\"kind\":\"Pod\",\"namespace\":\"test\","
	  "\"name\":\"pod1\",\"uid\":\"uid-pod1\"},\"nodeName\":\"node-1\"}" },
};

static void
test_endpoint_row(void **state)
{
	const struct endpoint_row *row = *state;
	cJSON *service = service_new(80, NULL, row->family, row->publish);
	cJSON *pod = pod_make(1, row->ready, 0, row->terminating);
	cJSON *want = fixture_parse(row->want), *got;
	char *a, *b;

	if (row->hostname != NULL) {
		cJSON *spec = json_child_object(pod, "spec");

		cJSON_AddStringToObject(spec, "hostname", row->hostname);
		cJSON_AddStringToObject(spec, "subdomain", row->subdomain);
	}
	got = endpointslice_pod_endpoint(service, pod, row->family == V6 ? "IPv6" : "IPv4",
	    row->zone);
	a = cJSON_PrintUnformatted(got);
	b = cJSON_PrintUnformatted(want);
	if (!cJSON_Compare(got, want, 1))
		fail_msg("got %s\nwant %s", a, b);
	free(a);
	free(b);
	cJSON_Delete(got);
	cJSON_Delete(want);
	cJSON_Delete(pod);
	cJSON_Delete(service);
}

/* --- smaller rules --------------------------------------------------------------------- */

/* kube's EndpointsEqualBeyondHash: a change of node, zone, condition or targetRef uid is a
 * change; a targetRef's resourceVersion is not. */
static void
test_endpoints_equal(void **state)
{
	static const struct {
		const char *a, *b;
		int equal;
	} rows[] = {
		{ "{\"nodeName\":\"n1\"}", "{\"nodeName\":\"n1\"}", 1 },
		{ "{\"nodeName\":\"n1\"}", "{\"nodeName\":\"n2\"}", 0 },
		{ "{\"nodeName\":\"n1\"}", "{}", 0 },
		{ "{\"zone\":\"a\"}", "{\"zone\":\"b\"}", 0 },
		{ "{\"conditions\":{\"ready\":true}}", "{\"conditions\":{\"ready\":false}}", 0 },
		{ "{\"conditions\":{\"ready\":true}}", "{\"conditions\":{}}", 0 },
		{ "{\"conditions\":{\"serving\":true}}", "{\"conditions\":{\"serving\":true}}", 1 },
		{ "{\"conditions\":{\"terminating\":true}}", "{\"conditions\":{\"terminating\":false}}", 0 },
		{ "{\"targetRef\":{\"uid\":\"1\",\"resourceVersion\":\"5\"}}",
		  "{\"targetRef\":{\"uid\":\"1\",\"resourceVersion\":\"6\"}}", 1 },
		{ "{\"targetRef\":{\"uid\":\"1\"}}", "{\"targetRef\":{\"uid\":\"2\"}}", 0 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		cJSON *a = fixture_parse(rows[i].a), *b = fixture_parse(rows[i].b);

		if (endpointslice_endpoints_equal(a, b) != rows[i].equal)
			fail_msg("row %zu: %s vs %s", i, rows[i].a, rows[i].b);
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
}

/* kube's setEndpointSliceLabels: the Service's labels but the reserved ones, the headless
 * label without a cluster IP, and a change of the Service's labels is a change. */
static void
test_labels(void **state)
{
	cJSON *svc = fixture_parse("{\"metadata\":{\"name\":\"foo\",\"labels\":{\"a\":\"1\","
	    "\"kubernetes.io/service-name\":\"bad\",\"endpointslice.kubernetes.io/managed-by\":"
	    "\"bad\"}},\"spec\":{\"clusterIP\":\"None\"}}");
	cJSON *mine = fixture_parse("{\"a\":\"1\",\"kubernetes.io/service-name\":\"foo\"}");
	cJSON *other = fixture_parse("{\"a\":\"2\"}");
	cJSON *want = fixture_parse("{\"a\":\"1\",\"service.kubernetes.io/headless\":\"\","
	    "\"kubernetes.io/service-name\":\"foo\",\"endpointslice.kubernetes.io/managed-by\":"
	    "\"endpointslice-controller.k8s.io\"}");
	cJSON *got;
	int changed = -1;

	(void)state;
	got = endpointslice_labels(svc, mine, &changed);
	assert_true(cJSON_Compare(got, want, 1));
	assert_int_equal(changed, 0);
	cJSON_Delete(got);
	got = endpointslice_labels(svc, other, &changed);
	assert_int_equal(changed, 1);
	cJSON_Delete(got);
	cJSON_Delete(svc);
	cJSON_Delete(mine);
	cJSON_Delete(other);
	cJSON_Delete(want);
}

/* kube's getAddressTypesForService: the families, else the cluster IP's, else both. */
static void
test_address_types(void **state)
{
	static const struct {
		const char *spec;
		const char *want;
	} rows[] = {
		{ "{\"ipFamilies\":[\"IPv4\"]}", "IPv4" },
		{ "{\"ipFamilies\":[\"IPv6\"]}", "IPv6" },
		{ "{\"ipFamilies\":[\"IPv6\",\"IPv4\"]}", "IPv4,IPv6" },
		{ "{\"clusterIP\":\"1.2.3.4\"}", "IPv4" },
		{ "{\"clusterIP\":\"fd00::1\"}", "IPv6" },
		{ "{\"clusterIP\":\"None\"}", "IPv4,IPv6" },
		{ "{}", "IPv4,IPv6" },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(rows); i++) {
		char *text = xasprintf("{\"spec\":%s}", rows[i].spec);
		cJSON *svc = fixture_parse(text);
		const char *types[2];
		char got[32];
		int n = endpointslice_address_types(svc, types);

		snprintf(got, sizeof got, "%s%s%s", types[0], n > 1 ? "," : "", n > 1 ? types[1] : "");
		assert_string_equal(got, rows[i].want);
		cJSON_Delete(svc);
		free(text);
	}
}

/* TestReconcilerPodMissingNode: a pod whose node is not cached is left out and reported,
 * unless the Service publishes not-ready addresses. */
static void
test_missing_node(void **state)
{
	for (int publish = 0; publish <= 1; publish++) {
		cJSON *svc = service_new(80, NULL, V4, publish);
		cJSON *pods[2] = { pod_make(0, 1, 0, 0), pod_make(1, 1, 0, 0) };
		const char *zones[2] = { NULL, NULL };
		int known[2] = { 1, 0 };
		struct endpointslice_plan plan;

		(void)state;
		memset(&plan, 0, sizeof plan);
		endpointslice_reconcile(svc, (const cJSON *const *)pods, zones, known, 2, NULL, 0,
		    "IPv4", 100, &plan);
		assert_int_equal(plan.ncreate, 1);
		assert_int_equal(plan.nskipped, publish ? 0 : 1);
		assert_int_equal(cJSON_GetArraySize(json_path(plan.create[0], "endpoints")),
		    publish ? 2 : 1);
		if (!publish)
			assert_string_equal(plan.skipped[0],
			    "skipping Pod pod1 for Service test/foo: Node node-1 Not Found");
		endpointslice_plan_clear(&plan);
		cJSON_Delete(pods[0]);
		cJSON_Delete(pods[1]);
		cJSON_Delete(svc);
	}
}

/* trafficdist_test.go's rules: PreferClose gives each ready endpoint its zone as a hint,
 * PreferSameNode its node too, a not-ready endpoint none; an unchanged slice whose hints
 * are missing is rewritten; without a trafficDistribution an unchanged slice with hints
 * is left as it is. */
static void
test_traffic_distribution(void **state)
{
	static const struct {
		const char *td;		/* NULL: none */
		int existing_hinted;	/* -1: no existing slice; 0/1: one of both pods, with
					   or without zone hints */
		int creates, updates;
		const char *hints0, *hints1;	/* the written slice's endpoints' hints */
	} rows[] = {
		{ "PreferClose", -1, 1, 0, "{\"forZones\":[{\"name\":\"z1\"}]}", NULL },
		{ "PreferSameZone", -1, 1, 0, "{\"forZones\":[{\"name\":\"z1\"}]}", NULL },
		{ "PreferSameNode", -1, 1, 0,
		  "{\"forZones\":[{\"name\":\"z1\"}],\"forNodes\":[{\"name\":\"node-1\"}]}", NULL },
		{ "Bogus", -1, 1, 0, NULL, NULL },
		{ NULL, -1, 1, 0, NULL, NULL },
		{ "PreferClose", 0, 0, 1, "{\"forZones\":[{\"name\":\"z1\"}]}", NULL },
		{ "PreferClose", 1, 0, 0, NULL, NULL },
		{ NULL, 1, 0, 0, NULL, NULL },
	};

	(void)state;
	for (size_t r = 0; r < NELEM(rows); r++) {
		cJSON *svc = service_new(80, NULL, V4, 0);
		cJSON *pods[2] = { pod_make(0, 1, 0, 0), pod_make(1, 0, 0, 0) };
		const char *zones[2] = { "z1", "z1" };
		int known[2] = { 1, 1 };
		cJSON *existing[1], *written;
		int nexisting = 0;
		struct endpointslice_plan plan;

		memset(&plan, 0, sizeof plan);
		if (rows[r].td != NULL)
			cJSON_AddStringToObject((cJSON *)json_path(svc, "spec"), "trafficDistribution",
			    rows[r].td);
		if (rows[r].existing_hinted >= 0) {
			cJSON *eps = cJSON_CreateArray(), *ports = endpointslice_pod_ports(svc, pods[0]);

			for (int i = 0; i < 2; i++) {
				cJSON *ep = endpointslice_pod_endpoint(svc, pods[i], "IPv4", "z1");

				if (rows[r].existing_hinted && i == 0)
					cJSON_AddItemToObject(ep, "hints",
					    fixture_parse("{\"forZones\":[{\"name\":\"z1\"}]}"));
				cJSON_AddItemToArray(eps, ep);
			}
			existing[nexisting++] = existing_slice(svc, "slice-0", eps, ports);
			cJSON_Delete(ports);
		}
		endpointslice_reconcile(svc, (const cJSON *const *)pods, zones, known, 2, existing,
		    nexisting, "IPv4", 100, &plan);
		if (plan.ncreate != rows[r].creates || plan.nupdate != rows[r].updates)
			fail_msg("row %zu: %d creates, %d updates", r, plan.ncreate, plan.nupdate);
		written = plan.ncreate > 0 ? plan.create[0] : plan.nupdate > 0 ? plan.update[0] : NULL;
		if (written != NULL) {
			const char *want[2] = { rows[r].hints0, rows[r].hints1 };

			for (int i = 0; i < 2; i++) {
				const cJSON *h = json_path(cJSON_GetArrayItem(json_path(written,
				    "endpoints"), i), "hints");
				cJSON *w = want[i] != NULL ? fixture_parse(want[i]) : NULL;

				if (want[i] == NULL ? h != NULL : !cJSON_Compare(h, w, 1))
					fail_msg("row %zu: endpoint %d's hints are not %s", r, i,
					    want[i] != NULL ? want[i] : "none");
				cJSON_Delete(w);
			}
		}
		endpointslice_plan_clear(&plan);
		for (int i = 0; i < nexisting; i++)
			cJSON_Delete(existing[i]);
		cJSON_Delete(pods[0]);
		cJSON_Delete(pods[1]);
		cJSON_Delete(svc);
	}
}

/* --- a sync through the cache ---------------------------------------------------------- */

static void
test_sync_through_cache(void **state)
{
	struct ctl_world *w = *state;
	const struct resource *services = resource_find("services");
	const struct resource *pods = resource_find("pods");
	const struct resource *nodes = resource_find("nodes");
	const struct resource *slices = resource_find("endpointslices");
	cJSON *other;

	assert_int_equal(ctl_start(w, &endpointslice_controller_type, NULL), 0);
	ctl_cache(w, services, service_new(80, NULL, V4, 0));
	ctl_cache(w, nodes, fixture_parse("{\"metadata\":{\"name\":\"node-1\",\"uid\":\"n1\","
	    "\"resourceVersion\":\"1\",\"labels\":{\"topology.kubernetes.io/zone\":\"z1\"}}}"));
	for (int n = 0; n < 3; n++)
		ctl_cache(w, pods, pod_make(n, n != 1, 0, 0));
	/* A pod of another app, and one that is done: neither is an endpoint. */
	other = pod_make(7, 1, 0, 0);
	json_set((cJSON *)json_path(other, "metadata"), "labels",
	    fixture_parse("{\"foo\":\"baz\"}"));
	ctl_cache(w, pods, other);
	other = pod_make(8, 1, 0, 0);
	json_set((cJSON *)json_path(other, "status"), "phase", cJSON_CreateString("Succeeded"));
	ctl_cache(w, pods, other);
	ctl_sync(w, "test/foo", NOW);
	assert_int_equal(w->result.nwrites, 1);
	assert_int_equal(w->result.writes[0].type, ACTION_CREATE);
	{
		const cJSON *eps = json_path(w->result.writes[0].body, "endpoints");

		assert_int_equal(cJSON_GetArraySize(eps), 3);
		assert_string_equal(json_string(cJSON_GetArrayItem(eps, 0), "zone"), "z1");
		assert_false(cJSON_IsTrue(json_path(cJSON_GetArrayItem(eps, 1), "conditions.ready")));
		assert_string_equal(json_string(w->result.writes[0].body, "metadata.generateName"),
		    "foo-");
	}
	/* The slice written and cached: the next sync writes nothing. */
	{
		cJSON *slice = cJSON_Duplicate(w->result.writes[0].body, 1);
		cJSON *meta = (cJSON *)json_path(slice, "metadata");

		cJSON_DeleteItemFromObjectCaseSensitive(meta, "generateName");
		cJSON_AddStringToObject(meta, "name", "foo-abcde");
		cJSON_AddStringToObject(meta, "uid", "slice-uid");
		cJSON_AddStringToObject(meta, "resourceVersion", "2");
		ctl_cache(w, slices, slice);
	}
	ctl_sync(w, "test/foo", NOW);
	assert_int_equal(w->result.nwrites, 0);
	/* The views show the same: three pods wanted, three held, two of them ready. */
	{
		sqlite3_stmt *q = NULL;

		assert_int_equal(sqlite3_prepare_v2(store_db(w->store),
		    "SELECT s.endpoints, s.ready, s.managed_by, (SELECT count(*) FROM service_pods p"
		    " WHERE p.namespace = s.namespace AND p.service = s.service AND p.has_ip"
		    " AND NOT p.terminal) FROM service_endpointslices s WHERE s.service = 'foo'",
		    -1, &q, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(q), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(q, 0), 3);
		assert_int_equal(sqlite3_column_int(q, 1), 2);
		assert_string_equal((const char *)sqlite3_column_text(q, 2),
		    "endpointslice-controller.k8s.io");
		assert_int_equal(sqlite3_column_int(q, 3), 3);
		sqlite3_finalize(q);
	}
	/* A pod made not ready: its event queues the Service its labels match. */
	other = pod_make(2, 0, 0, 0);
	json_set((cJSON *)json_path(other, "metadata"), "resourceVersion",
	    cJSON_CreateString("2"));
	ctl_cache(w, pods, cJSON_Duplicate(other, 1));
	ctl_tell(w, INFORMER_UPDATED, pods, other, NULL);
	{
		char *keys = ctl_keys(w);

		assert_string_equal(keys, "test/foo");
		free(keys);
	}
	ctl_sync(w, "test/foo", NOW);
	assert_int_equal(w->result.nwrites, 1);
	assert_int_equal(w->result.writes[0].type, ACTION_UPDATE);
	assert_string_equal(w->result.writes[0].name, "foo-abcde");
}

/* --endpointslice-updates-batch-period: a pod's change queues its Service after it (kube's
 * pod queue); a slice's change after a second at least. */
static void
test_batch_period(void **state)
{
	struct ctl_world *w = *state;
	static const char *const flags[] = { NULL, "5s" };
	static const struct controller_config config = { .flags = flags };
	const struct resource *services = resource_find("services");
	const struct resource *pods = resource_find("pods");
	const struct resource *slices = resource_find("endpointslices");
	char *keys;

	assert_int_equal(ctl_start(w, &endpointslice_controller_type, &config), 0);
	ctl_cache(w, services, service_new(80, NULL, V4, 0));
	ctl_cache(w, pods, pod_make(0, 1, 0, 0));
	ctl_tell(w, INFORMER_ADDED, pods, pod_make(0, 1, 0, 0), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "test/foo (after 5s)");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_DELETED, slices, fixture_parse("{\"metadata\":{\"name\":\"foo-x\","
	    "\"namespace\":\"test\",\"labels\":{\"kubernetes.io/service-name\":\"foo\","
	    "\"endpointslice.kubernetes.io/managed-by\":\"endpointslice-controller.k8s.io\"}}}"),
	    NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "test/foo (after 5s)");
	free(keys);
	ctl_keys_clear(w);
	/* A slice another controller manages is none of its business. */
	ctl_tell(w, INFORMER_DELETED, slices, fixture_parse("{\"metadata\":{\"name\":\"foo-y\","
	    "\"namespace\":\"test\",\"labels\":{\"kubernetes.io/service-name\":\"foo\","
	    "\"endpointslice.kubernetes.io/managed-by\":\"someone-else\"}}}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "");
	free(keys);
	/* Its own write coming back (the version its write returned) queues nothing; another
	 * version of the slice does (kube's endpointSliceTracker). */
	{
		char *error = NULL;

		assert_int_equal(consistency_wrote_at(w->c->writes, "test/foo", "svc-uid",
		    "endpointslices", "7", &error), 0);
	}
	ctl_tell(w, INFORMER_UPDATED, slices, fixture_parse("{\"metadata\":{\"name\":\"foo-x\","
	    "\"namespace\":\"test\",\"resourceVersion\":\"7\",\"labels\":{"
	    "\"kubernetes.io/service-name\":\"foo\",\"endpointslice.kubernetes.io/managed-by\":"
	    "\"endpointslice-controller.k8s.io\"}}}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "");
	free(keys);
	ctl_tell(w, INFORMER_UPDATED, slices, fixture_parse("{\"metadata\":{\"name\":\"foo-x\","
	    "\"namespace\":\"test\",\"resourceVersion\":\"8\",\"labels\":{"
	    "\"kubernetes.io/service-name\":\"foo\",\"endpointslice.kubernetes.io/managed-by\":"
	    "\"endpointslice-controller.k8s.io\"}}}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "test/foo (after 5s)");
	free(keys);
}

/* The Services' selectors kept by namespace (kube's selector cache): a Service added, its
 * selector changed or the Service deleted is seen by the next pod event. */
static void
test_selector_cache(void **state)
{
	struct ctl_world *w = *state;
	const struct resource *services = resource_find("services");
	const struct resource *pods = resource_find("pods");
	cJSON *other = service_new(80, NULL, V4, 0);
	char *keys;

	assert_int_equal(ctl_start(w, &endpointslice_controller_type, NULL), 0);
	ctl_cache(w, services, service_new(80, NULL, V4, 0));
	ctl_tell(w, INFORMER_ADDED, pods, pod_make(0, 1, 0, 0), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "test/foo");
	free(keys);
	ctl_keys_clear(w);
	/* A second Service of the same selector. */
	json_set(json_child_object(other, "metadata"), "name", cJSON_CreateString("bar"));
	json_set(json_child_object(other, "metadata"), "uid", cJSON_CreateString("uid-bar"));
	ctl_cache(w, services, cJSON_Duplicate(other, 1));
	ctl_tell(w, INFORMER_ADDED, services, cJSON_Duplicate(other, 1), NULL);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_UPDATED, pods, pod_make(0, 0, 0, 0), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "test/foo,test/bar");
	free(keys);
	ctl_keys_clear(w);
	/* Its selector changed to one the pod does not match. */
	json_set(json_child_object(other, "spec"), "selector",
	    fixture_parse("{\"app\":\"nothing\"}"));
	json_set(json_child_object(other, "metadata"), "resourceVersion",
	    cJSON_CreateString("2"));
	ctl_cache(w, services, cJSON_Duplicate(other, 1));
	ctl_tell(w, INFORMER_UPDATED, services, cJSON_Duplicate(other, 1), NULL);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_UPDATED, pods, pod_make(0, 1, 0, 0), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "test/foo");
	free(keys);
	ctl_keys_clear(w);
	/* The first one deleted: no Service selects the pod. */
	ctl_uncache(w, services, "svc-uid");
	ctl_tell(w, INFORMER_DELETED, services, service_new(80, NULL, V4, 0), NULL);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_UPDATED, pods, pod_make(0, 0, 0, 0), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "");
	free(keys);
	cJSON_Delete(other);
}

static int
world_setup(void **state)
{
	*state = ctl_world_new(NULL, NULL);
	return 0;
}

static int
world_teardown(void **state)
{
	ctl_world_free(*state);
	return 0;
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(reconcile_rows) + NELEM(endpoint_rows) + 8];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(reconcile_rows); i++)
		tests[n++] = (struct CMUnitTest){ reconcile_rows[i].name, test_reconcile_row, NULL,
		    NULL, (void *)&reconcile_rows[i] };
	for (size_t i = 0; i < NELEM(endpoint_rows); i++)
		tests[n++] = (struct CMUnitTest){ endpoint_rows[i].name, test_endpoint_row, NULL,
		    NULL, (void *)&endpoint_rows[i] };
	tests[n++] = (struct CMUnitTest){ "kube's EndpointsEqualBeyondHash", test_endpoints_equal,
	    NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a slice's labels", test_labels, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "address types", test_address_types, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "trafficDistribution hints", test_traffic_distribution,
	    NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "TestReconcilerPodMissingNode", test_missing_node, NULL,
	    NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the Services' selectors kept by namespace",
	    test_selector_cache, world_setup, world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "the batch period", test_batch_period, world_setup,
	    world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "a sync through the cache and a pod's event",
	    test_sync_through_cache, world_setup, world_teardown, NULL };
	return _cmocka_run_group_tests("endpointslice", tests, n, NULL, NULL);
}
