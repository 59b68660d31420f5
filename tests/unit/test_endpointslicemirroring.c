/*
 * test_endpointslicemirroring.c - the EndpointSlice mirroring controller
 * (controllers/endpointslicemirroring.c) against kube's rules, as data.
 *
 * The rows are kube v1.36.3's pkg/controller/endpointslicemirroring reconciler_test.go
 * TestReconcile cases: an Endpoints' subsets (and labels, annotations), the slices that
 * exist before (made by mirroring the same Endpoints once, then changed as the case says),
 * the maximum per subset, and what kube expects: the number of slices after and of
 * writes, here as creations, updates and deletions, with the invalid and skipped
 * addresses its metrics count. Then the handlers' and a sync's rules.
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
#include "controllers/endpointslicemirroring.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

enum before {
	NOTHING,		/* no slice before */
	SAME,			/* the slice the Endpoints mirrors to, as written */
	OTHER_OWNER,		/* ... owned by an Endpoints of its name and another uid */
	EXTRA_ANNOTATION,	/* ... with an annotation the Endpoints lacks */
	NO_LABEL,		/* ... without a label the Endpoints has */
	EMPTY,			/* an empty slice of the first subset's ports */
	FIRST_HALF,		/* the first subset's slice with only its first address */
	FIRST_ONLY,		/* the first subset's slice as written, the second none */
};

struct row {
	const char *name;
	const char *subsets;		/* JSON */
	const char *labels;		/* JSON; NULL: none */
	const char *annotations;	/* JSON; NULL: none */
	enum before before;
	int max;			/* 0: 1000 */
	int creates, updates, deletes;
	int invalid, skipped;
};

#define P80 "{\"name\":\"http\",\"port\":80,\"protocol\":\"TCP\"}"
#define P443 "{\"name\":\"https\",\"port\":443,\"protocol\":\"TCP\"}"
#define P3000 "{\"name\":\"a\",\"port\":3000,\"protocol\":\"TCP\"}"
#define P3001 "{\"name\":\"b\",\"port\":3001,\"protocol\":\"UDP\"}"
#define A(ip) "{\"ip\":\"" ip "\",\"nodeName\":\"node-1\"}"
#define TWO_SUBSETS \
	"[{\"ports\":[" P80 "," P443 "],\"addresses\":[" A("10.0.0.1") "," A("10.0.0.2") "]}," \
	"{\"ports\":[" P3000 "," P3001 "],\"addresses\":[" A("10.0.1.1") "," A("10.0.1.2") "," \
	A("10.0.1.3") "]}]"

static const struct row rows[] = {
	{ "Endpoints with no subsets", "[]", .before = NOTHING },
	{ "Endpoints with no addresses", "[{\"ports\":[" P80 "]}]", .before = NOTHING },
	{ "Endpoints with 1 subset, port, and address",
	  "[{\"ports\":[" P80 "],\"addresses\":[" A("10.0.0.1") "]}]", .creates = 1 },
	{ "Endpoints with 2 subset, different port and address",
	  "[{\"ports\":[" P80 "],\"addresses\":[" A("10.0.0.1") "]},"
	  "{\"ports\":[" P443 "],\"addresses\":[" A("10.0.0.2") "]}]", .creates = 2 },
	{ "Endpoints with 2 subset, different port and same address",
	  "[{\"ports\":[" P80 "],\"addresses\":[" A("10.0.0.1") "]},"
	  "{\"ports\":[" P443 "],\"addresses\":[" A("10.0.0.1") "]}]", .creates = 1 },
	{ "Endpoints with 2 subset, different address and same port",
	  "[{\"ports\":[" P80 "],\"addresses\":[" A("10.0.0.1") "]},"
	  "{\"ports\":[" P80 "],\"addresses\":[" A("10.0.0.2") "]}]", .creates = 1 },
	{ "Endpoints with 1 subset, port, and address and existing slice with same fields",
	  "[{\"ports\":[" P80 "],\"addresses\":[" A("10.0.0.1") "]}]", .before = SAME },
	{ "Endpoints with 1 subset, port, and address and existing slice with same fields but "
	  "different OwnerReferences",
	  "[{\"ports\":[" P80 "],\"addresses\":[" A("10.0.0.1") "]}]", .before = OTHER_OWNER,
	  .updates = 1 },
	{ "Endpoints with 1 subset, port, and address and existing slice with an additional "
	  "annotation", "[{\"ports\":[" P80 "],\"addresses\":[" A("10.0.0.1") "]}]",
	  .before = EXTRA_ANNOTATION, .updates = 1 },
	{ "Endpoints with 1 subset, port, label and address and existing slice with same fields "
	  "but the label", "[{\"ports\":[" P80 "],\"addresses\":[" A("10.0.0.1") "]}]",
	  .labels = "{\"foo\":\"bar\"}", .before = NO_LABEL, .updates = 1 },
	{ "Endpoints with 1 subset, 2 ports, and 2 ready and 2 not ready addresses",
	  "[{\"ports\":[" P80 "," P443 "],\"addresses\":[" A("10.0.0.1") "," A("10.0.0.2") "],"
	  "\"notReadyAddresses\":[" A("10.0.0.3") "," A("10.0.0.4") "]}]", .creates = 1 },
	{ "Endpoints with 2 subsets, multiple ports and addresses", TWO_SUBSETS, .creates = 2 },
	{ "Endpoints with 2 subsets, multiple ports and addresses, existing empty EndpointSlice",
	  TWO_SUBSETS, .before = EMPTY, .creates = 1, .updates = 1 },
	{ "Endpoints with 2 subsets, multiple ports and addresses, existing EndpointSlice with "
	  "some addresses", TWO_SUBSETS, .before = FIRST_HALF, .creates = 1, .updates = 1 },
	{ "Endpoints with 2 subsets, multiple ports and addresses, existing EndpointSlice "
	  "identical to subset", TWO_SUBSETS, .before = FIRST_ONLY, .creates = 1 },
	{ "Endpoints with 2 subsets, multiple ports, and dual stack addresses",
	  "[{\"ports\":[" P80 "," P443 "],\"addresses\":[" A("2001:db8:2222:3333:4444:5555:6666:7777")
	  "," A("10.0.0.2") "]},{\"ports\":[" P3000 "," P3001 "],\"addresses\":[" A("10.0.1.1")
	  "," A("2001:db8:3333:3333:4444:5555:6666:7777") "]}]", .creates = 4 },
	{ "Endpoints with 2 subsets, multiple ports, ipv6 only addresses",
	  "[{\"ports\":[" P80 "," P443 "],\"addresses\":[" A("2001:db8:1111:3333:4444:5555:6666:7777")
	  "]},{\"ports\":[" P3000 "," P3001 "],\"addresses\":["
	  A("2001:db8:3333:3333:4444:5555:6666:7777") "]}]", .creates = 2 },
	{ "Endpoints with 2 subsets, multiple ports, some invalid addresses",
	  "[{\"ports\":[" P80 "," P443 "],\"addresses\":[" A("2001:db8:1111:3333:4444:5555:6666:7777")
	  "," A("this-is-not-an-ip") "]},{\"ports\":[" P3000 "," P3001 "],\"addresses\":["
	  A("this-is-also-not-an-ip") "," A("2001:db8:4444:3333:4444:5555:6666:7777") ","
	  A("2001:db8:5555:3333:4444:5555:6666:7777") "]}]", .creates = 2, .invalid = 2,
	  .skipped = 2 },
	{ "Endpoints with 2 subsets, multiple ports, all invalid addresses",
	  "[{\"ports\":[" P80 "," P443 "],\"addresses\":[" A("this-is-not-an-ip1") ","
	  A("this-is-not-an-ip12") "]},{\"ports\":[" P3000 "," P3001 "],\"addresses\":["
	  A("this-is-not-an-ip11") "," A("this-is-not-an-ip12") "," A("this-is-not-an-ip3")
	  "]}]", .invalid = 5, .skipped = 5 },
	{ "Endpoints with 2 subsets, 1 exceeding maxEndpointsPerSubset", TWO_SUBSETS, .max = 2,
	  .creates = 2, .skipped = 1 },
	{ "The last-applied-configuration annotation should not get mirrored",
	  "[{\"ports\":[" P80 "],\"addresses\":[" A("10.0.0.1") "]}]",
	  .annotations = "{\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\","
	  "\"endpoints.kubernetes.io/last-change-trigger-time\":\"x\"}", .before = SAME },
};

static cJSON *
endpoints_new(const struct row *row, const char *uid)
{
	char *text = xasprintf("{\"metadata\":{\"name\":\"test-ep\",\"namespace\":\"ns\","
	    "\"uid\":\"%s\",\"resourceVersion\":\"1\",\"labels\":%s,\"annotations\":%s},"
	    "\"subsets\":%s}", uid, row->labels != NULL ? row->labels : "{}",
	    row->annotations != NULL ? row->annotations : "{}", row->subsets);
	cJSON *o = fixture_parse(text);

	free(text);
	return o;
}

/* The slices mirroring ep writes when nothing exists, named slice-N. */
static int
first_mirror(const cJSON *ep, int max, cJSON **out)
{
	struct endpointslice_plan p;
	int invalid, skipped, n = 0;

	memset(&p, 0, sizeof p);
	endpointslicemirroring_reconcile(ep, NULL, 0, max, &p, &invalid, &skipped);
	for (int i = 0; i < p.ncreate; i++) {
		cJSON *meta = (cJSON *)json_path(p.create[i], "metadata");
		char name[32];

		snprintf(name, sizeof name, "slice-%d", i);
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "generateName");
		cJSON_AddStringToObject(meta, "name", name);
		cJSON_AddStringToObject(meta, "uid", name);
		cJSON_AddStringToObject(meta, "resourceVersion", "5");
		out[n++] = p.create[i];
		p.create[i] = NULL;
	}
	endpointslice_plan_clear(&p);
	return n;
}

static void
test_row(void **state)
{
	const struct row *row = *state;
	int max = row->max > 0 ? row->max : 1000, invalid, skipped, n = 0;
	cJSON *ep = endpoints_new(row, "ep-uid"), *existing[8];
	struct endpointslice_plan p;

	memset(&p, 0, sizeof p);
	if (row->before != NOTHING) {
		cJSON *other = endpoints_new(row, row->before == OTHER_OWNER ? "other-uid" : "ep-uid");

		n = first_mirror(other, max, existing);
		cJSON_Delete(other);
		assert_true(n > 0);
		switch (row->before) {
		case EXTRA_ANNOTATION:
			json_set(json_child_object(json_child_object(existing[0], "metadata"),
			    "annotations"), "extra", cJSON_CreateString("yes"));
			break;
		case NO_LABEL:
			cJSON_DeleteItemFromObjectCaseSensitive((cJSON *)json_path(existing[0],
			    "metadata.labels"), "foo");
			break;
		case EMPTY:
			json_set(existing[0], "endpoints", cJSON_CreateArray());
			/* fall through: the second subset has no slice */
		case FIRST_ONLY:
		case FIRST_HALF:
			while (n > 1)
				cJSON_Delete(existing[--n]);
			if (row->before == FIRST_HALF)
				cJSON_DeleteItemFromArray((cJSON *)json_path(existing[0], "endpoints"), 1);
			break;
		default:
			break;
		}
	}
	endpointslicemirroring_reconcile(ep, existing, n, max, &p, &invalid, &skipped);
	if (p.ncreate != row->creates || p.nupdate != row->updates || p.nremove != row->deletes)
		fail_msg("%d creations, %d updates, %d deletions", p.ncreate, p.nupdate, p.nremove);
	assert_int_equal(invalid, row->invalid);
	assert_int_equal(skipped, row->skipped);
	for (int i = 0; i < p.ncreate + p.nupdate; i++) {
		const cJSON *s = i < p.ncreate ? p.create[i] : p.update[i - p.ncreate];
		const cJSON *a = json_path(s, "metadata.annotations");
		const cJSON *l = json_path(s, "metadata.labels");

		/* Every slice written: the manager's labels, no trigger time nor
		 * last-applied-configuration, at most max endpoints, owned by the Endpoints. */
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(l,
		    "endpointslice.kubernetes.io/managed-by")->valuestring,
		    "endpointslicemirroring-controller.k8s.io");
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(l,
		    "kubernetes.io/service-name")->valuestring, "test-ep");
		assert_null(cJSON_GetObjectItemCaseSensitive(a,
		    "kubectl.kubernetes.io/last-applied-configuration"));
		assert_null(cJSON_GetObjectItemCaseSensitive(a,
		    "endpoints.kubernetes.io/last-change-trigger-time"));
		assert_true(cJSON_GetArraySize(json_path(s, "endpoints")) <= max);
		assert_string_equal(json_string(cJSON_GetArrayItem(json_path(s,
		    "metadata.ownerReferences"), 0), "uid"), "ep-uid");
	}
	endpointslice_plan_clear(&p);
	for (int i = 0; i < n; i++)
		cJSON_Delete(existing[i]);
	cJSON_Delete(ep);
}

/* kube's shouldMirror: the skip-mirror label and a leader-election record. */
static void
test_should_mirror(void **state)
{
	static const struct {
		const char *metadata;
		int want;
	} cases[] = {
		{ "{}", 1 },
		{ "{\"labels\":{\"endpointslice.kubernetes.io/skip-mirror\":\"true\"}}", 0 },
		{ "{\"labels\":{\"endpointslice.kubernetes.io/skip-mirror\":\"false\"}}", 1 },
		{ "{\"annotations\":{\"control-plane.alpha.kubernetes.io/leader\":\"x\"}}", 0 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		char *text = xasprintf("{\"metadata\":%s}", cases[i].metadata);
		cJSON *ep = fixture_parse(text);

		assert_int_equal(endpointslicemirroring_should_mirror(ep), cases[i].want);
		cJSON_Delete(ep);
		free(text);
	}
}

/* A sync through the cache: mirrored for a selector-less Service; a Service with a
 * selector, its mirrored slice deleted. */
static void
test_sync(void **state)
{
	struct ctl_world *w = *state;
	const struct resource *services = resource_find("services");
	const struct resource *endpoints = resource_find("endpoints");
	const struct resource *slices = resource_find("endpointslices");
	struct row r = { "sync", "[{\"ports\":[" P80 "],\"addresses\":[" A("10.0.0.1") "]}]",
	    .before = NOTHING };
	cJSON *slice;

	assert_int_equal(ctl_start(w, &endpointslicemirroring_controller_type, NULL), 0);
	ctl_cache(w, services, fixture_parse("{\"metadata\":{\"name\":\"test-ep\",\"namespace\":"
	    "\"ns\",\"uid\":\"svc\",\"resourceVersion\":\"1\"},\"spec\":{\"ports\":[{\"port\":80}]}}"));
	ctl_cache(w, endpoints, endpoints_new(&r, "ep-uid"));
	ctl_sync(w, "ns/test-ep", NOW);
	assert_int_equal(w->result.nwrites, 1);
	assert_int_equal(w->result.writes[0].type, ACTION_CREATE);
	slice = cJSON_Duplicate(w->result.writes[0].body, 1);
	cJSON_DeleteItemFromObjectCaseSensitive((cJSON *)json_path(slice, "metadata"),
	    "generateName");
	cJSON_AddStringToObject((cJSON *)json_path(slice, "metadata"), "name", "test-ep-abc");
	cJSON_AddStringToObject((cJSON *)json_path(slice, "metadata"), "uid", "slice-uid");
	cJSON_AddStringToObject((cJSON *)json_path(slice, "metadata"), "resourceVersion", "2");
	ctl_cache(w, slices, slice);
	ctl_sync(w, "ns/test-ep", NOW);
	assert_int_equal(w->result.nwrites, 0);
	ctl_cache(w, services, fixture_parse("{\"metadata\":{\"name\":\"test-ep\",\"namespace\":"
	    "\"ns\",\"uid\":\"svc\",\"resourceVersion\":\"2\"},\"spec\":{\"selector\":{\"a\":\"b\"}}}"));
	ctl_sync(w, "ns/test-ep", NOW);
	assert_int_equal(w->result.nwrites, 1);
	assert_int_equal(w->result.writes[0].type, ACTION_DELETE);
	assert_string_equal(w->result.writes[0].name, "test-ep-abc");
}

/* The handlers: an Endpoints deleted, a mirrored slice changed, a Service added without a
 * selector queue the key; a Service with one, or a slice of another manager, do not. */
static void
test_handlers(void **state)
{
	struct ctl_world *w = *state;
	const struct resource *services = resource_find("services");
	const struct resource *endpoints = resource_find("endpoints");
	const struct resource *slices = resource_find("endpointslices");
	char *keys;

	assert_int_equal(ctl_start(w, &endpointslicemirroring_controller_type, NULL), 0);
	ctl_tell(w, INFORMER_DELETED, endpoints, fixture_parse("{\"metadata\":{\"name\":\"a\","
	    "\"namespace\":\"ns\"}}"), NULL);
	ctl_tell(w, INFORMER_ADDED, slices, fixture_parse("{\"metadata\":{\"name\":\"b-x\","
	    "\"namespace\":\"ns\",\"labels\":{\"kubernetes.io/service-name\":\"b\","
	    "\"endpointslice.kubernetes.io/managed-by\":"
	    "\"endpointslicemirroring-controller.k8s.io\"}}}"), NULL);
	ctl_tell(w, INFORMER_ADDED, slices, fixture_parse("{\"metadata\":{\"name\":\"z-x\","
	    "\"namespace\":\"ns\",\"labels\":{\"kubernetes.io/service-name\":\"z\","
	    "\"endpointslice.kubernetes.io/managed-by\":\"other\"}}}"), NULL);
	ctl_tell(w, INFORMER_ADDED, services, fixture_parse("{\"metadata\":{\"name\":\"c\","
	    "\"namespace\":\"ns\"},\"spec\":{}}"), NULL);
	ctl_tell(w, INFORMER_ADDED, services, fixture_parse("{\"metadata\":{\"name\":\"d\","
	    "\"namespace\":\"ns\"},\"spec\":{\"selector\":{\"a\":\"b\"}}}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "ns/a,ns/b,ns/c");
	free(keys);
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
	struct CMUnitTest tests[NELEM(rows) + 3];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(rows); i++)
		tests[n++] = (struct CMUnitTest){ rows[i].name, test_row, NULL, NULL,
		    (void *)&rows[i] };
	tests[n++] = (struct CMUnitTest){ "shouldMirror", test_should_mirror, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the handlers", test_handlers, world_setup,
	    world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "a sync through the cache", test_sync, world_setup,
	    world_teardown, NULL };
	return _cmocka_run_group_tests("endpointslicemirroring", tests, n, NULL, NULL);
}
