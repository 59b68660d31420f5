/*
 * test_servicecidr.c - the Service CIDR controller (controllers/servicecidr.c) against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/servicecidrs; the rows are those of its
 * TestControllerSync (the requests a sync sends), TestController_canDeleteCIDR (whether a
 * ServiceCIDR being deleted for longer than the grace period may lose its finalizer: its
 * finalizer removed, or its Ready condition False) and TestController_ipToCidrs (the
 * ServiceCIDRs an IPAddress of the ipallocator queues). A ServiceCIDR is a name and one
 * or two CIDRs, as kube's makeServiceCIDR.
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
#include "controllers/servicecidr.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

#define FINALIZER "networking.k8s.io/service-cidr-finalizer"

/* A ServiceCIDR: name, CIDRs, and how long ago its deletion began (-1: not deleted;
 * with the finalizer then). */
struct cidr {
	const char *name, *primary, *secondary;
	double deleted_ago;
};

#define CIDR(n, p, s) { n, p, s, -1 }
#define DELETING(n, p, s) { n, p, s, 0 }	/* just now */
#define DELETED(n, p, s) { n, p, s, 11 }	/* past the 10 s grace period */
#define KUBERNETES CIDR("kubernetes", "192.168.0.0/24", "2001:db2::/64")

static cJSON *
cidr_new(const struct cidr *c)
{
	char stamp[TIME_RFC3339_SIZE];
	struct buf b;
	cJSON *o;

	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"networking.k8s.io/v1\",\"kind\":\"ServiceCIDR\","
	    "\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\"",
	    c->name, c->name);
	if (c->deleted_ago >= 0) {
		time_format_rfc3339((time_t)(NOW - c->deleted_ago), stamp);
		buf_printf(&b, ",\"deletionTimestamp\":\"%s\",\"finalizers\":[\"" FINALIZER
		    "\"]", stamp);
	}
	buf_printf(&b, "},\"spec\":{\"cidrs\":[\"%s\"", c->primary);
	if (c->secondary != NULL)
		buf_printf(&b, ",\"%s\"", c->secondary);
	buf_append_str(&b, "]}}");
	o = fixture_parse(b.data);
	buf_free(&b);
	return o;
}

/* kube's makeIPAddress: the ipallocator's, of the address's family. */
static cJSON *
address_new(const char *ip)
{
	struct buf b;
	cJSON *o;

	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"networking.k8s.io/v1\",\"kind\":\"IPAddress\","
	    "\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\","
	    "\"labels\":{\"ipaddress.kubernetes.io/ip-family\":\"%s\","
	    "\"ipaddress.kubernetes.io/managed-by\":\"ipallocator.k8s.io\"}}}", ip, ip,
	    strchr(ip, ':') != NULL ? "IPv6" : "IPv4");
	o = fixture_parse(b.data);
	buf_free(&b);
	return o;
}

static int
world_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(&servicecidr_controller_type, NULL);

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
cache_all(struct ctl_world *w, const struct cidr *cidrs, size_t n, const char *const *ips,
    size_t nips)
{
	for (size_t i = 0; i < n && cidrs[i].name != NULL; i++)
		ctl_cache(w, resource_find("servicecidrs"), cidr_new(&cidrs[i]));
	for (size_t i = 0; i < nips && ips[i] != NULL; i++)
		ctl_cache(w, resource_find("ipaddresses"), address_new(ips[i]));
}

/* The first member of list, a string; "" when it is none. */
static const char *
first(const cJSON *list)
{
	const cJSON *v = cJSON_GetArrayItem(list, 0);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* The writes of the last sync as kube's test names them: verb, resource, subresource. */
static char *
requests(const struct sync_result *r)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < r->nwrites; i++)
		buf_printf(&b, "%spatch servicecidrs %s", i > 0 ? "; " : "",
		    r->writes[i].subresource != NULL ? r->writes[i].subresource : "");
	return buf_detach(&b);
}

/* --- TestControllerSync ----------------------------------------------------------------- */

struct sync_row {
	const char *name;
	struct cidr cidrs[3];
	const char *ips[2];
	const char *synced;
	const char *requests;
};

#define D DELETED("deleted-cidr", "192.168.0.0/24", "2001:db2::/64")

static const struct sync_row sync_rows[] = {
	{ "no existing service CIDRs", { { NULL, NULL, NULL, 0 } }, { NULL }, "kubernetes",
	    "" },
	{ "default service CIDR must have finalizer", { KUBERNETES }, { NULL }, "kubernetes",
	    "patch servicecidrs ; patch servicecidrs status" },
	{ "service CIDR must have finalizer",
	    { CIDR("no-finalizer", "192.168.0.0/24", "2001:db2::/64") }, { NULL },
	    "no-finalizer", "patch servicecidrs ; patch servicecidrs status" },
	{ "service CIDR being deleted must remove the finalizer", { D }, { NULL },
	    "deleted-cidr", "patch servicecidrs " },
	{ "service CIDR being deleted but within the grace period must be requeued not "
	    "remove the finalizer", { DELETING("deleting-cidr", "192.168.0.0/24",
	    "2001:db2::/64") }, { NULL }, "deleting-cidr", "" },
	{ "service CIDR being deleted with IPv4 addresses should update the status", { D },
	    { "192.168.0.1" }, "deleted-cidr", "patch servicecidrs status" },
	{ "service CIDR being deleted and overlapping same range and IPv4 addresses should "
	    "remove the finalizer", { D, CIDR("overlapping", "192.168.0.0/24",
	    "2001:db2::/64") }, { "192.168.0.1" }, "deleted-cidr", "patch servicecidrs " },
	{ "service CIDR being deleted and overlapping and IPv4 addresses should remove the "
	    "finalizer", { D, CIDR("overlapping", "192.168.0.0/16", "2001:db2::/64") },
	    { "192.168.0.1" }, "deleted-cidr", "patch servicecidrs " },
	{ "service CIDR being deleted and not overlapping and IPv4 addresses should update "
	    "the status", { D, CIDR("overlapping", "192.168.255.0/26", "2001:db2::/64") },
	    { "192.168.0.1" }, "deleted-cidr", "patch servicecidrs status" },
	{ "service CIDR being deleted with IPv6 addresses should update the status", { D },
	    { "2001:db2::1" }, "deleted-cidr", "patch servicecidrs status" },
	{ "service CIDR being deleted and overlapping same range and IPv6 addresses should "
	    "remove the finalizer", { D, CIDR("overlapping", "192.168.0.0/24",
	    "2001:db2::/64") }, { "2001:db2::1" }, "deleted-cidr", "patch servicecidrs " },
	{ "service CIDR being deleted and overlapping and IPv6 addresses should remove the "
	    "finalizer", { D, CIDR("overlapping", "192.168.0.0/16", "2001:db2::/48") },
	    { "2001:db2::1" }, "deleted-cidr", "patch servicecidrs " },
	{ "service CIDR being deleted and not overlapping and IPv6 addresses should update "
	    "the status", { D, CIDR("overlapping", "192.168.255.0/26", "2001:db2:a:b::/64") },
	    { "2001:db2::1" }, "deleted-cidr", "patch servicecidrs status" },
};

static void
sync_row(void **state)
{
	struct ctl_world *w = *state;
	const struct sync_row *row = w->row;
	char *got;

	cache_all(w, row->cidrs, NELEM(row->cidrs), row->ips, NELEM(row->ips));
	ctl_sync(w, row->synced, NOW);
	got = requests(&w->result);
	assert_described(row->name, got, row->requests);
	free(got);
}

/* The writes are kube's: the finalizer's strategic merge patch, and a forced apply of the
 * status by service-cidr-controller whose condition is Ready True with kube's message. */
static void
writes_are_kubes(void **state)
{
	struct ctl_world *w = *state;
	static const struct cidr cidrs[] = { KUBERNETES };
	const struct action *a;
	const cJSON *cond;

	cache_all(w, cidrs, 1, NULL, 0);
	ctl_sync(w, "kubernetes", NOW);
	assert_int_equal(w->result.nwrites, 2);
	a = &w->result.writes[0];
	assert_false(a->merge_patch);
	assert_null(a->field_manager);
	assert_string_equal(first(json_path(a->body, "metadata.finalizers")), FINALIZER);
	a = &w->result.writes[1];
	assert_string_equal(a->field_manager, "service-cidr-controller");
	assert_string_equal(a->subresource, "status");
	cond = cJSON_GetArrayItem(json_path(a->body, "status.conditions"), 0);
	assert_string_equal(json_string(cond, "type"), "Ready");
	assert_string_equal(json_string(cond, "status"), "True");
	assert_string_equal(json_string(cond, "message"), "Kubernetes Service CIDR is ready");
	assert_string_equal(json_string(cond, "lastTransitionTime"), "2026-01-01T00:00:00Z");
	/* The same condition cached: nothing more to write (the finalizer is there too). */
	ctl_cache(w, resource_find("servicecidrs"), fixture_parse("{\"metadata\":{"
	    "\"name\":\"kubernetes\",\"uid\":\"uid-kubernetes\",\"resourceVersion\":\"2\","
	    "\"finalizers\":[\"" FINALIZER "\"]},\"spec\":{\"cidrs\":[\"192.168.0.0/24\"]},"
	    "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
	    "\"reason\":\"\",\"message\":\"Kubernetes Service CIDR is ready\","
	    "\"lastTransitionTime\":\"2025-01-01T00:00:00Z\"}]}}"));
	ctl_sync(w, "kubernetes", NOW);
	assert_int_equal(w->result.nwrites, 0);
}

/* Within the grace period, the sync comes back when it ends. */
static void
grace_period_requeues(void **state)
{
	struct ctl_world *w = *state;
	static const struct cidr cidrs[] = { { "c", "192.168.0.0/24", NULL, 4 } };

	cache_all(w, cidrs, 1, NULL, 0);
	ctl_sync(w, "c", NOW);
	assert_int_equal(w->result.nwrites, 0);
	assert_true(w->result.requeue_after == 6);
}

/* --- TestController_canDeleteCIDR ------------------------------------------------------- */

struct delete_row {
	const char *name;
	struct cidr others[2];
	const char *ips[2];
	int want;
};

static const struct delete_row delete_rows[] = {
	{ "empty", { { NULL, NULL, NULL, 0 } }, { NULL }, 1 },
	{ "CIDR and no IPs", { { NULL, NULL, NULL, 0 } }, { NULL }, 1 },
	{ "CIDR with IPs", { { NULL, NULL, NULL, 0 } }, { "192.168.0.24" }, 0 },
	{ "CIDR without IPs", { { NULL, NULL, NULL, 0 } }, { "192.168.1.24" }, 1 },
	{ "CIDR with IPv4 address referencing the subnet address",
	    { { NULL, NULL, NULL, 0 } }, { "192.168.0.0" }, 1 },
	{ "CIDR with IPv4 address referencing the broadcast address",
	    { { NULL, NULL, NULL, 0 } }, { "192.168.0.255" }, 1 },
	{ "CIDR with IPv6 address referencing the broadcast address",
	    { { NULL, NULL, NULL, 0 } }, { "2001:0db2::ffff:ffff:ffff:ffff" }, 0 },
	{ "CIDR with same range overlapping and IPs",
	    { CIDR("overlapping", "192.168.0.0/24", "2001:db2::/64") }, { "192.168.0.23" },
	    1 },
	{ "CIDR with smaller range overlapping and IPs",
	    { CIDR("overlapping", "192.168.0.0/26", "2001:db2::/64") }, { "192.168.0.23" },
	    1 },
	{ "CIDR with smaller range overlapping but IPs orphan",
	    { CIDR("overlapping", "192.168.0.0/28", "2001:db2::/64") }, { "192.168.0.23" },
	    0 },
	{ "CIDR with larger range overlapping and IPs",
	    { CIDR("overlapping", "192.168.0.0/16", "2001:db2::/64") }, { "192.168.0.23" },
	    1 },
};

/* The row's kubernetes ServiceCIDR, deleted past the grace period: its finalizer goes
 * when it may be deleted, else its Ready condition turns False (Terminating). */
static void
delete_row(void **state)
{
	struct ctl_world *w = *state;
	const struct delete_row *row = w->row;
	static const struct cidr deleted = DELETED("kubernetes", "192.168.0.0/24",
	    "2001:db2::/64");
	const struct action *a;

	ctl_cache(w, resource_find("servicecidrs"), cidr_new(&deleted));
	cache_all(w, row->others, NELEM(row->others), row->ips, NELEM(row->ips));
	ctl_sync(w, "kubernetes", NOW);
	assert_int_equal(w->result.nwrites, 1);
	a = &w->result.writes[0];
	if (row->want) {
		assert_null(a->subresource);
		assert_string_equal(first(json_path(a->body,
		    "metadata.$deleteFromPrimitiveList/finalizers")), FINALIZER);
	} else {
		const cJSON *cond = cJSON_GetArrayItem(json_path(a->body, "status.conditions"),
		    0);

		assert_string_equal(a->subresource, "status");
		assert_string_equal(json_string(cond, "status"), "False");
		assert_string_equal(json_string(cond, "reason"), "Terminating");
		assert_string_equal(json_string(cond, "message"), "There are still IPAddresses "
		    "referencing the ServiceCIDR, please remove them or create a new "
		    "ServiceCIDR");
	}
}

/* --- TestController_ipToCidrs ----------------------------------------------------------- */

struct address_row {
	const char *name;
	struct cidr cidrs[5];
	const char *ip;
	const char *queued;
};

#define FIVE { KUBERNETES, CIDR("overlapping", "192.168.0.0/24", "2001:db2::/64"), \
	CIDR("overlapping2", "192.168.0.0/26", "2001:db2::/96"), \
	CIDR("unrelated", "10.0.0.0/24", NULL), CIDR("unrelated2", "10.0.0.0/16", NULL) }

static const struct address_row address_rows[] = {
	{ "empty", { { NULL, NULL, NULL, 0 } }, "192.168.0.23", "" },
	{ "one CIDR", { KUBERNETES, CIDR("unrelated", "10.0.0.0/24", NULL),
	    CIDR("unrelated2", "10.0.0.0/16", NULL) }, "192.168.0.23", "kubernetes" },
	{ "two equal CIDR", { KUBERNETES, CIDR("overlapping", "192.168.0.0/24",
	    "2001:db2::/96"), CIDR("unrelated", "10.0.0.0/24", NULL), CIDR("unrelated2",
	    "10.0.0.0/16", NULL) }, "192.168.0.23", "kubernetes,overlapping" },
	{ "three CIDR - two same and one larger", FIVE, "192.168.0.23",
	    "kubernetes,overlapping,overlapping2" },
	{ "three CIDR - two same and one larger - IPv4 subnet address", FIVE, "192.168.0.0",
	    "" },
	{ "three CIDR - two same and one larger - IPv4 broadcast address", FIVE,
	    "192.168.0.63", "kubernetes,overlapping" },
	{ "three CIDR - two same and one larger - IPv6 subnet address", FIVE, "2001:db2::",
	    "" },
	{ "three CIDR - two same and one larger - IPv6 broadcast address", FIVE,
	    "2001:0db2::ffff:ffff:ffff:ffff", "kubernetes,overlapping" },
};

/* The ServiceCIDRs an IPAddress of the ipallocator queues when it is added. */
static void
address_row(void **state)
{
	struct ctl_world *w = *state;
	const struct address_row *row = w->row;
	char *keys;

	cache_all(w, row->cidrs, NELEM(row->cidrs), NULL, 0);
	ctl_tell(w, INFORMER_ADDED, resource_find("ipaddresses"), address_new(row->ip), NULL);
	keys = ctl_keys(w);
	assert_described(row->name, keys, row->queued);
	free(keys);
}

/* An IPAddress not of the ipallocator queues nothing. */
static void
foreign_address_queues_nothing(void **state)
{
	struct ctl_world *w = *state;
	static const struct cidr cidrs[] = { KUBERNETES };
	char *keys;

	cache_all(w, cidrs, 1, NULL, 0);
	ctl_tell(w, INFORMER_ADDED, resource_find("ipaddresses"), fixture_parse(
	    "{\"metadata\":{\"name\":\"192.168.0.23\",\"uid\":\"u\",\"labels\":{"
	    "\"ipaddress.kubernetes.io/managed-by\":\"someone-else\"}}}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "");
	free(keys);
}

/* The parsers read what Go's netip reads, and refuse the rest. */
static void
parsers_are_netips(void **state)
{
	static const struct {
		const char *text;
		int prefix_family, prefix_bits;	/* 0: no prefix */
		int addr_family;		/* 0: no address */
	} cases[] = {
		{ "192.168.0.0/24", 4, 24, 0 },
		{ "192.168.0.23/24", 4, 24, 0 },	/* not masked: still a prefix */
		{ "10.0.0.0/0", 4, 0, 0 },
		{ "2001:db2::/64", 6, 64, 0 },
		{ "::ffff:1.2.3.4/128", 6, 128, 0 },	/* IPv4-mapped: IPv6 */
		{ "1.2.3.4/33", 0, 0, 0 },
		{ "1.2.3.4/01", 0, 0, 0 },		/* leading zero */
		{ "1.2.3.4/", 0, 0, 0 },
		{ "1.2.3.4/-1", 0, 0, 0 },
		{ "2001:db2::/129", 0, 0, 0 },
		{ "192.168.0.23", 0, 0, 4 },
		{ "01.2.3.4", 0, 0, 0 },		/* leading zero */
		{ "2001:0db2::ffff:ffff:ffff:ffff", 0, 0, 6 },
		{ "fe80::1%eth0", 0, 0, 0 },		/* a zone */
		{ "", 0, 0, 0 },
		{ "x", 0, 0, 0 },
	};
	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		struct prefix p;
		int rc = servicecidr_parse_prefix(cases[i].text, &p);

		if ((rc == 0) != (cases[i].prefix_family != 0) ||
		    (rc == 0 && (p.family != cases[i].prefix_family ||
		    p.bits != cases[i].prefix_bits)))
			fail_msg("prefix \"%s\": rc %d family %d bits %d", cases[i].text, rc,
			    p.family, p.bits);
		rc = servicecidr_parse_addr(cases[i].text, &p);
		if ((rc == 0) != (cases[i].addr_family != 0) ||
		    (rc == 0 && p.family != cases[i].addr_family))
			fail_msg("address \"%s\": rc %d family %d", cases[i].text, rc, p.family);
	}
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(sync_rows) + NELEM(delete_rows) + NELEM(address_rows) +
	    4];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(sync_rows); i++)
		tests[n++] = (struct CMUnitTest){ sync_rows[i].name, sync_row, world_setup,
		    world_teardown, (void *)&sync_rows[i] };
	for (size_t i = 0; i < NELEM(delete_rows); i++)
		tests[n++] = (struct CMUnitTest){ delete_rows[i].name, delete_row, world_setup,
		    world_teardown, (void *)&delete_rows[i] };
	for (size_t i = 0; i < NELEM(address_rows); i++)
		tests[n++] = (struct CMUnitTest){ address_rows[i].name, address_row,
		    world_setup, world_teardown, (void *)&address_rows[i] };
	tests[n++] = (struct CMUnitTest){ "the parsers are netip's", parsers_are_netips, NULL,
	    NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the writes are kube's", writes_are_kubes,
	    world_setup, world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "within the grace period: synced again at its end",
	    grace_period_requeues, world_setup, world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "an IPAddress not of the ipallocator queues nothing",
	    foreign_address_queues_nothing, world_setup, world_teardown, NULL };
	return _cmocka_run_group_tests("servicecidr", tests, n, NULL, NULL);
}
