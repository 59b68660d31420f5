/*
 * test_endpoint.c - the Endpoints controller (controllers/endpoint.c) against kube's
 * rules, as data.
 *
 * The subsets rows are cases of kube v1.36.3's pkg/controller/endpoint
 * endpoints_controller_test.go (TestSyncEndpointsItemsPreexisting, ...ProtocolTCP,
 * ...PodsNotReady, ...PublishNotReadyAddresses, ...HeadlessWithoutPort, the terminating
 * and terminal pods, ...MultiplePortsMultiplePods, named target ports), each a Service, its
 * pods and the subsets kube writes, repacked (pkg/api/v1/endpoints RepackSubsets). The
 * truncation rows are TestTruncateEndpoints'. Then a sync through the cache: created,
 * unchanged (no write), and deleted with its Service after a live check.
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
#include "controllers/endpoint.h"
#include "fixtures.h"
#include "json.h"
#include "podendpoints.h"
#include "resource.h"
#include "store.h"
#include "util.h"

/* A pod: its name, IP, Ready status and what else the row needs. */
struct pod_spec {
	const char *name;		/* NULL ends */
	const char *ip;
	int ready;
	const char *phase;		/* NULL: Running */
	int deleting;
	int port;			/* its container port "http"; 0: 8080 */
};

struct subsets_row {
	const char *name;
	const char *service_spec;	/* the Service's spec, JSON (selector foo=bar added) */
	struct pod_spec pods[4];
	const char *want;		/* the subsets, JSON, as kube repacks them */
};

#define ADDR(ip, pod) "{\"ip\":\"" ip "\",\"nodeName\":\"node-1\",\"targetRef\":{\"kind\":" \
	"\"Pod\",\"namespace\":\"ns\",\"name\":\"" pod "\",\"uid\":\"uid-" pod "\"}}"

static const struct subsets_row subsets_rows[] = {
	{ "one ready pod, TCP port",
	  "{\"ports\":[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080}],\"clusterIP\":\"10.0.0.1\"}",
	  { { .name = "pod0", .ip = "1.2.3.4", .ready = 1 } },
	  "[{\"addresses\":[" ADDR("1.2.3.4", "pod0") "],"
	  "\"ports\":[{\"port\":8080,\"protocol\":\"TCP\"}]}]" },
	{ "a pod not ready goes to notReadyAddresses",
	  "{\"ports\":[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080}],\"clusterIP\":\"10.0.0.1\"}",
	  { { .name = "pod0", .ip = "1.2.3.4", .ready = 1 }, { .name = "pod1", .ip = "1.2.3.5", .ready = 0 } },
	  "[{\"addresses\":[" ADDR("1.2.3.4", "pod0") "],\"notReadyAddresses\":["
	  ADDR("1.2.3.5", "pod1") "],\"ports\":[{\"port\":8080,\"protocol\":\"TCP\"}]}]" },
	{ "publishNotReadyAddresses: a pod not ready is ready",
	  "{\"ports\":[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080}],\"clusterIP\":\"10.0.0.1\","
	  "\"publishNotReadyAddresses\":true}",
	  { { .name = "pod0", .ip = "1.2.3.4", .ready = 0 } },
	  "[{\"addresses\":[" ADDR("1.2.3.4", "pod0") "],"
	  "\"ports\":[{\"port\":8080,\"protocol\":\"TCP\"}]}]" },
	{ "terminating and terminal pods are left out",
	  "{\"ports\":[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080}],\"clusterIP\":\"10.0.0.1\"}",
	  { { .name = "pod0", .ip = "1.2.3.4", .ready = 1 }, { .name = "pod1", .ip = "1.2.3.5", .ready = 1, .phase = NULL, .deleting = 1 },
	    { .name = "pod2", .ip = "1.2.3.6", .ready = 0, .phase = "Failed" } },
	  "[{\"addresses\":[" ADDR("1.2.3.4", "pod0") "],"
	  "\"ports\":[{\"port\":8080,\"protocol\":\"TCP\"}]}]" },
	{ "publishNotReadyAddresses keeps a terminating pod",
	  "{\"ports\":[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080}],\"clusterIP\":\"10.0.0.1\","
	  "\"publishNotReadyAddresses\":true}",
	  { { .name = "pod1", .ip = "1.2.3.5", .ready = 1, .phase = NULL, .deleting = 1 } },
	  "[{\"addresses\":[" ADDR("1.2.3.5", "pod1") "],"
	  "\"ports\":[{\"port\":8080,\"protocol\":\"TCP\"}]}]" },
	{ "headless without ports: the addresses alone",
	  "{\"clusterIP\":\"None\"}",
	  { { .name = "pod0", .ip = "1.2.3.4", .ready = 1 } },
	  "[{\"addresses\":[" ADDR("1.2.3.4", "pod0") "]}]" },
	{ "no ports and a cluster IP: nothing",
	  "{\"clusterIP\":\"10.0.0.1\"}",
	  { { .name = "pod0", .ip = "1.2.3.4", .ready = 1 } },
	  "[]" },
	{ "a named target port: each pod's number, a subset each",
	  "{\"ports\":[{\"name\":\"web\",\"port\":80,\"protocol\":\"TCP\",\"targetPort\":\"http\"}],"
	  "\"clusterIP\":\"10.0.0.1\"}",
	  { { .name = "pod0", .ip = "1.2.3.4", .ready = 1, .phase = NULL, .deleting = 0, .port = 8080 }, { .name = "pod1", .ip = "1.2.3.5", .ready = 1, .phase = NULL, .deleting = 0, .port = 8081 },
	    { .name = "pod2", .ip = "1.2.3.6", .ready = 1, .phase = NULL, .deleting = 0, .port = 8080 } },
	  "[{\"addresses\":[" ADDR("1.2.3.4", "pod0") "," ADDR("1.2.3.6", "pod2") "],"
	  "\"ports\":[{\"name\":\"web\",\"port\":8080,\"protocol\":\"TCP\"}]},"
	  "{\"addresses\":[" ADDR("1.2.3.5", "pod1") "],"
	  "\"ports\":[{\"name\":\"web\",\"port\":8081,\"protocol\":\"TCP\"}]}]" },
	{ "a named target port no pod has: nothing",
	  "{\"ports\":[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":\"nope\"}],\"clusterIP\":\"10.0.0.1\"}",
	  { { .name = "pod0", .ip = "1.2.3.4", .ready = 1 } },
	  "[]" },
	{ "multiple ports, multiple pods: one subset",
	  "{\"ports\":[{\"name\":\"a\",\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080},"
	  "{\"name\":\"b\",\"port\":81,\"protocol\":\"TCP\",\"targetPort\":8088}],\"clusterIP\":\"10.0.0.1\"}",
	  { { .name = "pod0", .ip = "1.2.3.4", .ready = 1 }, { .name = "pod1", .ip = "1.2.3.5", .ready = 1 } },
	  "[{\"addresses\":[" ADDR("1.2.3.4", "pod0") "," ADDR("1.2.3.5", "pod1") "],"
	  "\"ports\":[{\"name\":\"a\",\"port\":8080,\"protocol\":\"TCP\"},"
	  "{\"name\":\"b\",\"port\":8088,\"protocol\":\"TCP\"}]}]" },
};

static cJSON *
service_from(const char *spec)
{
	char *text = xasprintf("{\"metadata\":{\"name\":\"foo\",\"namespace\":\"ns\",\"uid\":"
	    "\"svc-uid\",\"resourceVersion\":\"1\"},\"spec\":%s}", spec);
	cJSON *s = fixture_parse(text), *sp = (cJSON *)json_path(s, "spec");

	free(text);
	json_set(sp, "selector", fixture_parse("{\"foo\":\"bar\"}"));
	return s;
}

static cJSON *
pod_from(const struct pod_spec *p)
{
	char *text = xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":"
	    "\"uid-%s\",\"resourceVersion\":\"1\",\"labels\":{\"foo\":\"bar\"}%s},"
	    "\"spec\":{\"nodeName\":\"node-1\",\"containers\":[{\"name\":\"c\",\"ports\":[{"
	    "\"name\":\"http\",\"containerPort\":%d}]}]},\"status\":{\"phase\":\"%s\","
	    "\"podIP\":\"%s\",\"podIPs\":[{\"ip\":\"%s\"}],\"conditions\":[{\"type\":\"Ready\","
	    "\"status\":\"%s\"}]}}", p->name, p->name,
	    p->deleting ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "",
	    p->port != 0 ? p->port : 8080, p->phase != NULL ? p->phase : "Running", p->ip, p->ip,
	    p->ready ? "True" : "False");
	cJSON *o = fixture_parse(text);

	free(text);
	return o;
}

static void
test_subsets_row(void **state)
{
	const struct subsets_row *row = *state;
	cJSON *service = service_from(row->service_spec), *pods[4], *got;
	cJSON *want_raw = fixture_parse(row->want), *want;
	int n = 0;
	char *a, *b;

	for (; n < 4 && row->pods[n].name != NULL; n++)
		pods[n] = pod_from(&row->pods[n]);
	got = endpoint_subsets(service, (const cJSON *const *)pods, n);
	want = endpoint_repack(want_raw);
	/* The want as written is already repacked: repacking it changes nothing. */
	a = cJSON_PrintUnformatted(got);
	b = cJSON_PrintUnformatted(want);
	if (!cJSON_Compare(got, want, 1))
		fail_msg("got  %s\nwant %s", a, b);
	free(a);
	free(b);
	cJSON_Delete(got);
	cJSON_Delete(want);
	cJSON_Delete(want_raw);
	for (int i = 0; i < n; i++)
		cJSON_Delete(pods[i]);
	cJSON_Delete(service);
}

/* Repacking is kube's: subsets that share ports merge, an address not ready under a port
 * stays not ready, and the order of the input does not matter. */
static void
test_repack(void **state)
{
	cJSON *a = fixture_parse("[{\"addresses\":[{\"ip\":\"1.1.1.2\"}],\"ports\":[{\"port\":80}]},"
	    "{\"addresses\":[{\"ip\":\"1.1.1.1\"}],\"ports\":[{\"port\":80}]},"
	    "{\"notReadyAddresses\":[{\"ip\":\"1.1.1.2\"}],\"ports\":[{\"port\":80}]}]");
	cJSON *b = fixture_parse("[{\"addresses\":[{\"ip\":\"1.1.1.1\"}],\"notReadyAddresses\":"
	    "[{\"ip\":\"1.1.1.2\"}],\"ports\":[{\"port\":80}]}]");
	cJSON *ra = endpoint_repack(a), *rb = endpoint_repack(b);

	(void)state;
	assert_true(cJSON_Compare(ra, rb, 1));
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(ra);
	cJSON_Delete(rb);
}

/* TestTruncateEndpoints' rows. */
static const struct {
	const char *name;
	int ready[5], not_ready[5], want_ready[5], want_not_ready[5];
	int truncated;
} truncate_rows[] = {
	{ "total endpoints < max capacity", { 50, 100, 100, 100, 100 },
	  { 50, 100, 100, 100, 100 }, { 50, 100, 100, 100, 100 }, { 50, 100, 100, 100, 100 }, 0 },
	{ "total endpoints = max capacity", { 100, 100, 100, 100, 100 },
	  { 100, 100, 100, 100, 100 }, { 100, 100, 100, 100, 100 }, { 100, 100, 100, 100, 100 }, 0 },
	{ "total ready endpoints < max capacity, but total endpoints > max capacity",
	  { 90, 110, 50, 10, 20 }, { 101, 200, 200, 201, 298 }, { 90, 110, 50, 10, 20 },
	  { 73, 144, 144, 145, 214 }, 1 },
	{ "total ready endpoints > max capacity", { 205, 400, 402, 400, 693 },
	  { 100, 200, 200, 200, 300 }, { 98, 191, 192, 191, 328 }, { 0, 0, 0, 0, 0 }, 1 },
};

static void
test_truncate(void **state)
{
	(void)state;
	for (size_t r = 0; r < NELEM(truncate_rows); r++) {
		cJSON *subsets = cJSON_CreateArray();

		for (int i = 0; i < 5; i++) {
			cJSON *s = cJSON_CreateObject();
			cJSON *ready = cJSON_AddArrayToObject(s, "addresses");
			cJSON *not_ready = cJSON_AddArrayToObject(s, "notReadyAddresses");

			for (int k = 0; k < truncate_rows[r].ready[i]; k++)
				cJSON_AddItemToArray(ready, cJSON_CreateObject());
			for (int k = 0; k < truncate_rows[r].not_ready[i]; k++)
				cJSON_AddItemToArray(not_ready, cJSON_CreateObject());
			cJSON_AddItemToArray(subsets, s);
		}
		assert_int_equal(endpoint_truncate(subsets), truncate_rows[r].truncated);
		for (int i = 0; i < 5; i++) {
			const cJSON *s = cJSON_GetArrayItem(subsets, i);

			if (cJSON_GetArraySize(json_path(s, "addresses")) !=
			    truncate_rows[r].want_ready[i] ||
			    cJSON_GetArraySize(json_path(s, "notReadyAddresses")) !=
			    truncate_rows[r].want_not_ready[i])
				fail_msg("%s: subset %d has %d ready, %d not ready", truncate_rows[r].name,
				    i, cJSON_GetArraySize(json_path(s, "addresses")),
				    cJSON_GetArraySize(json_path(s, "notReadyAddresses")));
		}
		cJSON_Delete(subsets);
	}
}

/* kube's TriggerTimeTracker (trigger_time_tracker_test.go's steps): a Service seen the
 * first time gives its creation time; nothing moved gives none; a pod whose Ready
 * condition moved (or a new pod) gives the earliest such time; forgotten, it starts over. */
static void
test_trigger_times(void **state)
{
	static const struct {
		const char *pods[2];	/* the Ready conditions' lastTransitionTime; NULL: no pod */
		int forget_first;
		const char *want;	/* NULL: no trigger time */
	} steps[] = {
		{ { "2026-01-01T00:00:10Z", NULL }, 0, "2026-01-01T00:00:00Z" },
		{ { "2026-01-01T00:00:10Z", NULL }, 0, NULL },
		{ { "2026-01-01T00:00:20Z", NULL }, 0, "2026-01-01T00:00:20Z" },
		{ { "2026-01-01T00:00:30Z", "2026-01-01T00:00:25Z" }, 0, "2026-01-01T00:00:25Z" },
		{ { "2026-01-01T00:00:30Z", "2026-01-01T00:00:25Z" }, 0, NULL },
		{ { "2026-01-01T00:00:30Z", NULL }, 0, NULL },
		{ { "2026-01-01T00:00:30Z", NULL }, 1, "2026-01-01T00:00:00Z" },
	};
	struct podendpoints_tracker *t = podendpoints_tracker_new();
	cJSON *svc = fixture_parse("{\"metadata\":{\"name\":\"foo\",\"creationTimestamp\":"
	    "\"2026-01-01T00:00:00Z\"}}");

	(void)state;
	for (size_t i = 0; i < NELEM(steps); i++) {
		cJSON *pods[2];
		int n = 0;
		double got;
		char text[32];

		for (int k = 0; k < 2 && steps[i].pods[k] != NULL; k++) {
			char *json = xasprintf("{\"metadata\":{\"name\":\"pod%d\"},\"status\":{"
			    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
			    "\"lastTransitionTime\":\"%s\"}]}}", k, steps[i].pods[k]);

			pods[n++] = fixture_parse(json);
			free(json);
		}
		if (steps[i].forget_first)
			podendpoints_tracker_forget(t, "ns/foo");
		got = podendpoints_trigger_time(t, "ns/foo", svc, (const cJSON *const *)pods, n);
		if (steps[i].want == NULL) {
			if (got != 0)
				fail_msg("step %zu: a trigger time where none was due", i);
		} else {
			podendpoints_format_time(got, text, sizeof text);
			if (got == 0 || strcmp(text, steps[i].want) != 0)
				fail_msg("step %zu: %s, not %s", i, got == 0 ? "none" : text,
				    steps[i].want);
		}
		for (int k = 0; k < n; k++)
			cJSON_Delete(pods[k]);
	}
	cJSON_Delete(svc);
	podendpoints_tracker_free(t);
}

/* A sync through the cache: created; cached, nothing to write; the Service's labels
 * changed, updated; the Service gone, deleted after a live check. */
static void
test_sync_through_cache(void **state)
{
	struct ctl_world *w = *state;
	const struct resource *services = resource_find("services");
	const struct resource *pods = resource_find("pods");
	const struct resource *endpoints = resource_find("endpoints");
	struct pod_spec p = { .name = "pod0", .ip = "1.2.3.4", .ready = 1 };
	cJSON *svc = service_from("{\"ports\":[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080}],"
	    "\"clusterIP\":\"None\"}");
	cJSON *ep;

	assert_int_equal(ctl_start(w, &endpoint_controller_type, NULL), 0);
	ctl_cache(w, services, cJSON_Duplicate(svc, 1));
	ctl_cache(w, pods, pod_from(&p));
	ctl_sync(w, "ns/foo", NOW);
	assert_int_equal(w->result.nwrites, 1);
	assert_int_equal(w->result.writes[0].type, ACTION_CREATE);
	ep = cJSON_Duplicate(w->result.writes[0].body, 1);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(json_path(ep, "metadata.labels"),
	    "endpoints.kubernetes.io/managed-by")->valuestring, "endpoint-controller");
	assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(json_path(ep,
	    "metadata.labels"), "service.kubernetes.io/headless")));
	cJSON_AddStringToObject((cJSON *)json_path(ep, "metadata"), "uid", "ep-uid");
	cJSON_AddStringToObject((cJSON *)json_path(ep, "metadata"), "resourceVersion", "2");
	ctl_cache(w, endpoints, ep);
	ctl_sync(w, "ns/foo", NOW);
	assert_int_equal(w->result.nwrites, 0);
	ctl_uncache(w, services, "svc-uid");
	ctl_sync(w, "ns/foo", NOW);
	assert_int_equal(w->result.nwrites, 1);
	assert_int_equal(w->result.writes[0].type, ACTION_DELETE);
	assert_int_equal(w->result.nconfirm_absent, 1);
	/* The bookkeeping is kept until the deletion is done (forgetting it would end the
	 * execution before its writes). */
	assert_int_equal(w->result.forget_expectations, 0);
	cJSON_Delete(svc);
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
	struct CMUnitTest tests[NELEM(subsets_rows) + 4];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(subsets_rows); i++)
		tests[n++] = (struct CMUnitTest){ subsets_rows[i].name, test_subsets_row, NULL, NULL,
		    (void *)&subsets_rows[i] };
	tests[n++] = (struct CMUnitTest){ "RepackSubsets", test_repack, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "TestTruncateEndpoints", test_truncate, NULL, NULL,
	    NULL };
	tests[n++] = (struct CMUnitTest){ "TriggerTimeTracker", test_trigger_times, NULL, NULL,
	    NULL };
	tests[n++] = (struct CMUnitTest){ "a sync through the cache", test_sync_through_cache,
	    world_setup, world_teardown, NULL };
	return _cmocka_run_group_tests("endpoint", tests, n, NULL, NULL);
}
