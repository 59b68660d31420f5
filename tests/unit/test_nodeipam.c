/*
 * test_nodeipam.c - node IPAM (controllers/nodeipam.c), kube's range allocator, against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/nodeipam/ipam/cidrset/cidr_set.go,
 * pkg/controller/nodeipam/ipam/range_allocator.go and the flag checks of
 * cmd/kube-controller-manager/app/core.go (validateCIDRs, setNodeCIDRMaskSizes) and
 * options/nodeipamcontroller.go. The cases are those of cidrset/cidr_set_test.go
 * (TestCIDRSetFullyAllocated, TestIndexToCIDRBlock, TestCIDRSet_RandomishAllocation,
 * TestCIDRSet_AllocationOccupied, TestDoubleOccupyRelease, TestGetBitforCIDR through
 * occupy, TestOccupy, TestCIDRSetv6, Test_getMaxCIDRs and the numbers the metrics tests
 * show as allocated and max) and of ipam/range_allocator_test.go (TestOccupyPreExistingCIDR,
 * TestAllocateOrOccupyCIDRSuccess, TestAllocateOrOccupyCIDRFailure, TestReleaseCIDRSuccess,
 * TestNodeDeletionReleaseCIDR), run through the controller over a cache of nodes; kube has
 * no table for the flag checks, so those rows are sqlkcm's, written from the rules, as are
 * the rows of the CIDR parser (what Go's net.ParseCIDR, made sloppy by k8s.io/utils/net,
 * gives) and the controller's own behaviours at the end.
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
#include "controllers/nodeipam.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "metrics.h"
#include "resource.h"
#include "store.h"
#include "util.h"

/* --- helpers --------------------------------------------------------------------------- */

/* text parsed; fails the test when it does not parse. */
static struct ipnet
net_of(const char *text)
{
	struct ipnet n;

	if (ipnet_parse(text, &n) != 0)
		fail_msg("ipnet_parse(\"%s\") failed", text);
	return n;
}

/* A set of cluster with blocks of bits; fails the test when it cannot be made. */
static void
set_of(struct cidrset *s, const char *cluster, int bits)
{
	struct ipnet c = net_of(cluster);
	char *error = NULL;

	if (cidrset_init(s, &c, bits, &error) != 0)
		fail_msg("cidrset_init(%s, %d): %s", cluster, bits, error);
}

/* The next block as text ("" when there is none). */
static const char *
next_of(struct cidrset *s, char *out, size_t size)
{
	struct ipnet n;

	if (cidrset_allocate_next(s, &n) != 0) {
		*out = '\0';
		return out;
	}
	ipnet_format(&n, out, size);
	return out;
}

/* --- ipnet_parse, ipnet_format --------------------------------------------------------- */

struct parse_case {
	const char *text;
	const char *want;	/* as Go prints the network; NULL: not a CIDR */
};

static const struct parse_case parse_cases[] = {
	{ "10.244.0.0/16", "10.244.0.0/16" },
	{ "10.244.1.7/24", "10.244.1.0/24" },
	{ "0.0.0.0/0", "0.0.0.0/0" },
	{ "255.255.255.255/32", "255.255.255.255/32" },
	{ "1.2.3.4/0", "0.0.0.0/0" },
	/* Sloppy: leading zeros are decimal, not octal. */
	{ "010.001.0.0/16", "10.1.0.0/16" },
	{ "127.123.234.0/030", "127.123.234.0/30" },
	{ "0000000000000000000010.0.0.0/8", "10.0.0.0/8" },
	/* IPv6 printed compressed, as Go does. */
	{ "ace:cab:deca::/8", "a00::/8" },
	{ "2001:0db8:85a3::8a2e:0370:7334/50", "2001:db8:85a3::/50" },
	{ "2001:0DB8:1234:0:1234::/80", "2001:db8:1234:0:1234::/80" },
	{ "fd00:10:244:1::/64", "fd00:10:244:1::/64" },
	{ "::/0", "::/0" },
	{ "::1/128", "::1/128" },
	{ "1:0:0:1:0:0:0:1/128", "1:0:0:1::1/128" },
	{ "1:0:0:0:1:0:0:1/128", "1::1:0:0:1/128" },
	{ "2001:db8:0:1:0:0:0:0/64", "2001:db8:0:1::/64" },
	{ "1:2:3:4:5:6:7:8/128", "1:2:3:4:5:6:7:8/128" },
	{ "1:0:2:3:4:5:6:7/128", "1:0:2:3:4:5:6:7/128" },
	/* Go prints an address with only its last 32 bits set in hex, not dotted. */
	{ "::1:0/112", "::1:0/112" },
	{ "::102:304/128", "::102:304/128" },
	/* Not CIDRs. */
	{ "", NULL },
	{ "10.0.0.0", NULL },
	{ "10.0.0.0/", NULL },
	{ "/8", NULL },
	{ "10.0.0.0/33", NULL },
	{ "fd00::/129", NULL },
	{ "10.0.0.0/-1", NULL },
	{ "10.0.0.0/+8", NULL },
	{ "10.0.0.0/8 ", NULL },
	{ " 10.0.0.0/8", NULL },
	{ "10.0.0/8", NULL },
	{ "10.0.0.0.0/8", NULL },
	{ "256.0.0.0/8", NULL },
	{ "10..0.0/8", NULL },
	{ "0x0a.0.0.0/8", NULL },
	{ "fe80::1%eth0/64", NULL },
	{ "12345::/16", NULL },
	{ "1:2:3:4:5:6:7:8:9/128", NULL },
	{ "garbage", NULL },
	{ "garbage/24", NULL },
	{ "10.0.0.0/8/8", NULL },
	{ "10.0.0.0/99999999999999999999999999", NULL },
};

/* Each row that disagrees is printed; the test fails after them all. */
static void
ipnet_parse_and_format(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < NELEM(parse_cases); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct ipnet n;
		char got[128];
		int rc = ipnet_parse(c->text, &n);

		if (rc == 0)
			ipnet_format(&n, got, sizeof got);
		if (c->want == NULL ? rc == 0 : rc != 0 || strcmp(got, c->want) != 0 ||
		    n.v6 != (strchr(c->want, ':') != NULL)) {
			print_error("\"%s\": %s, want %s\n", c->text, rc == 0 ? got : "an error",
			    c->want != NULL ? c->want : "an error");
			bad++;
		}
	}
	if (bad > 0)
		fail_msg("%d of %zu rows disagree", bad, NELEM(parse_cases));
}

/* Hostile texts: very long ones, with or without a slash, and a format into a short
 * buffer, are refused or cut without overrunning anything. */
static void
ipnet_parse_refuses_hostile_texts(void **state)
{
	static const char *const tails[] = { "", "/8", "/24", "::/64", ".0.0.0/8" };
	size_t len = 100000;
	char *text = xcalloc(len + 16, 1);
	struct ipnet n = net_of("fd00:1234:5678:9abc:def0:1234:5678:9abc/128");
	char small[8];

	(void)state;
	for (size_t t = 0; t < NELEM(tails); t++) {
		memset(text, t % 2 ? '1' : 'f', len);
		strcpy(text + len, tails[t]);
		assert_int_equal(ipnet_parse(text, &n), -1);
		memset(text, '/', len);
		assert_int_equal(ipnet_parse(text, &n), -1);
		memset(text, ':', len);
		assert_int_equal(ipnet_parse(text, &n), -1);
	}
	/* A slash at the end of a long host part, and a long prefix of digits. */
	memset(text, '1', len);
	text[len - 1] = '/';
	text[len] = '\0';
	assert_int_equal(ipnet_parse(text, &n), -1);
	strcpy(text, "10.0.0.0/");
	memset(text + 9, '9', len - 9);
	text[len] = '\0';
	assert_int_equal(ipnet_parse(text, &n), -1);
	free(text);

	n = net_of("fd00:1234:5678:9abc:def0:1234:5678:9abc/128");
	ipnet_format(&n, small, sizeof small);
	assert_string_equal(small, "fd00:12");
}

/* --- TestCIDRSetFullyAllocated, TestCIDRSetv6 ------------------------------------------ */

struct alloc_case {
	const char *name;
	const char *cluster;
	int bits;
	int init_fails;		/* cidrset_init refuses it */
	const char *first, *second;	/* the first blocks handed out ("": none left) */
};

static const struct alloc_case alloc_cases[] = {
	{ "Fully allocated CIDR with IPv4", "127.123.234.0/30", 30, 0, "127.123.234.0/30", "" },
	{ "Fully allocated CIDR with IPv6", "beef:1234::/30", 30, 0, "beef:1234::/30", "" },
	{ "Max cluster subnet size with IPv4", "127.0.0.0/8", 32, 0, "127.0.0.0/32",
	    "127.0.0.1/32" },
	{ "Max cluster subnet size with IPv6", "beef:1234::/32", 49, 1, NULL, NULL },
	{ "Allocate a few IPv6", "2001:beef:1234:369b::/60", 64, 0,
	    "2001:beef:1234:3690::/64", "2001:beef:1234:3691::/64" },
	/* sqlkcm's: the IPv6 limit itself, and what does not fit at all. */
	{ "IPv6 sixteen bits more is allowed", "beef:1234::/32", 48, 0, "beef:1234::/48",
	    "beef:1234:1::/48" },
	{ "blocks larger than the cluster CIDR", "10.0.0.0/16", 8, 1, NULL, NULL },
	{ "IPv4 blocks longer than an address", "10.0.0.0/16", 33, 1, NULL, NULL },
	{ "IPv6 blocks longer than an address", "fd00::/120", 129, 1, NULL, NULL },
	{ "a /32 IPv4 cluster of /32 blocks", "10.1.2.3/32", 32, 0, "10.1.2.3/32", "" },
	{ "a /128 IPv6 cluster of /128 blocks", "fd00::7/128", 128, 0, "fd00::7/128", "" },
};

static void
cidrset_allocates_in_order(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(alloc_cases); i++) {
		const struct alloc_case *c = &alloc_cases[i];
		struct ipnet cluster = net_of(c->cluster), p;
		struct cidrset s;
		char *error = NULL, got[64];

		if (c->init_fails) {
			if (cidrset_init(&s, &cluster, c->bits, &error) == 0)
				fail_msg("%s: cidrset_init succeeded", c->name);
			assert_non_null(error);
			free(error);
			continue;
		}
		set_of(&s, c->cluster, c->bits);
		assert_described(c->name, next_of(&s, got, sizeof got), c->first);
		assert_described(c->name, next_of(&s, got, sizeof got), c->second);
		if (c->second[0] == '\0') {
			/* Full: the one block given back is the next one again. */
			p = net_of(c->first);
			assert_int_equal(cidrset_release(&s, &p, NULL), 0);
			assert_described(c->name, next_of(&s, got, sizeof got), c->first);
			assert_described(c->name, next_of(&s, got, sizeof got), "");
		}
		cidrset_free(&s);
	}
}

/* The message of an IPv6 set too large is kube's. */
static void
cidrset_refuses_large_ipv6_sets_in_kubes_words(void **state)
{
	struct ipnet cluster = net_of("beef:1234::/32");
	struct cidrset s;
	char *error = NULL;

	(void)state;
	assert_int_equal(cidrset_init(&s, &cluster, 49, &error), -1);
	assert_string_equal(error, "New CIDR set failed; the node CIDR size is too big");
	free(error);
}

/* --- TestIndexToCIDRBlock -------------------------------------------------------------- */

struct index_case {
	const char *cluster;
	int bits;
	uint64_t index;
	const char *block;
};

static const struct index_case index_cases[] = {
	{ "127.123.3.0/16", 24, 0, "127.123.0.0/24" },
	{ "127.123.0.0/16", 24, 15, "127.123.15.0/24" },
	{ "192.168.5.219/28", 32, 5, "192.168.5.213/32" },
	{ "2001:0db8:1234:3::/48", 64, 0, "2001:db8:1234::/64" },
	{ "2001:0db8:1234::/48", 64, 15, "2001:db8:1234:f::/64" },
	{ "2001:0db8:85a3::8a2e:0370:7334/50", 63, 6425, "2001:db8:85a3:3232::/63" },
	{ "2001:0db8::/32", 48, 0, "2001:db8::/48" },
	{ "2001:0db8::/32", 48, 15, "2001:db8:f::/48" },
	{ "2001:0db8:85a3::8a2e:0370:7334/32", 48, 6425, "2001:db8:1919::/48" },
	{ "2001:0db8:1234:ff00::/56", 72, 0, "2001:db8:1234:ff00::/72" },
	{ "2001:0db8:1234:ff00::/56", 72, 15, "2001:db8:1234:ff00:f00::/72" },
	{ "2001:0db8:1234:ff00::0370:7334/56", 72, 6425, "2001:db8:1234:ff19:1900::/72" },
	{ "2001:0db8:1234:0:1234::/80", 96, 0, "2001:db8:1234:0:1234::/96" },
	{ "2001:0db8:1234:0:1234::/80", 96, 15, "2001:db8:1234:0:1234:f::/96" },
	{ "2001:0db8:1234:ff00::0370:7334/80", 96, 6425, "2001:db8:1234:ff00:0:1919::/96" },
	/* sqlkcm's: the last block of a set. */
	{ "10.0.0.0/8", 32, 16777215, "10.255.255.255/32" },
	{ "2001:db8::/112", 128, 65535, "2001:db8::ffff/128" },
};

static void
cidrset_block_of_index(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(index_cases); i++) {
		const struct index_case *c = &index_cases[i];
		struct cidrset s;
		struct ipnet b;
		char got[64];

		set_of(&s, c->cluster, c->bits);
		cidrset_block(&s, c->index, &b);
		ipnet_format(&b, got, sizeof got);
		if (strcmp(got, c->block) != 0)
			fail_msg("%s, /%d, index %llu: %s, want %s", c->cluster, c->bits,
			    (unsigned long long)c->index, got, c->block);
		cidrset_free(&s);
	}
}

/* --- TestCIDRSet_RandomishAllocation, TestCIDRSet_AllocationOccupied -------------------- */

static const char *const whole_cases[] = { "127.123.234.0/16", "beef:1234::/16" };

/* Every /24 handed out, none left; all given back, the same ones again in the same order
 * (the search comes round to the start). */
static void
cidrset_randomish_allocation(void **state)
{
	(void)state;
	for (size_t k = 0; k < NELEM(whole_cases); k++) {
		struct cidrset s;
		struct ipnet first[256], again;

		set_of(&s, whole_cases[k], 24);
		for (int i = 0; i < 256; i++)
			assert_int_equal(cidrset_allocate_next(&s, &first[i]), 0);
		assert_int_equal(cidrset_allocate_next(&s, &again), -1);
		for (int i = 0; i < 256; i++)
			assert_int_equal(cidrset_release(&s, &first[i], NULL), 0);
		assert_int_equal(s.allocated, 0);
		for (int i = 0; i < 256; i++) {
			assert_int_equal(cidrset_allocate_next(&s, &again), 0);
			assert_memory_equal(&again, &first[i], sizeof again);
		}
		assert_int_equal(cidrset_allocate_next(&s, &again), -1);
		cidrset_free(&s);
	}
}

/* All given back, the last 128 occupied (one of them twice): the first 128 come out, then
 * nothing. */
static void
cidrset_allocation_occupied(void **state)
{
	(void)state;
	for (size_t k = 0; k < NELEM(whole_cases); k++) {
		struct cidrset s;
		struct ipnet all[256], again;

		set_of(&s, whole_cases[k], 24);
		for (int i = 0; i < 256; i++)
			assert_int_equal(cidrset_allocate_next(&s, &all[i]), 0);
		assert_int_equal(cidrset_allocate_next(&s, &again), -1);
		for (int i = 0; i < 256; i++)
			assert_int_equal(cidrset_release(&s, &all[i], NULL), 0);
		for (int i = 128; i < 256; i++)
			assert_int_equal(cidrset_occupy(&s, &all[i], NULL), 0);
		assert_int_equal(cidrset_occupy(&s, &all[128], NULL), 0);
		assert_int_equal(s.allocated, 128);
		for (int i = 0; i < 128; i++) {
			assert_int_equal(cidrset_allocate_next(&s, &again), 0);
			assert_memory_equal(&again, &all[i], sizeof again);
		}
		assert_int_equal(cidrset_allocate_next(&s, &again), -1);
		cidrset_free(&s);
	}
}

/* --- TestDoubleOccupyRelease ----------------------------------------------------------- */

struct op_case {
	const char *cidr;
	int occupy;		/* 1: occupy; 0: release */
	uint64_t allocated;	/* after */
};

static const struct op_case op_cases[] = {
	{ "10.42.5.0/24", 1, 1 },
	{ "10.42.9.0/24", 1, 2 },
	{ "10.42.8.0/22", 1, 5 },
	{ "10.42.9.0/24", 1, 5 },
	{ "10.42.9.0/24", 0, 4 },
	{ "10.42.9.0/24", 0, 4 },
	{ "10.42.4.0/22", 0, 3 },
};

static void
cidrset_double_occupy_release(void **state)
{
	struct cidrset s;
	struct ipnet n;
	uint64_t free_blocks = 256 - 3;

	(void)state;
	set_of(&s, "10.42.0.0/16", 24);
	for (size_t i = 0; i < NELEM(op_cases); i++) {
		n = net_of(op_cases[i].cidr);
		assert_int_equal((op_cases[i].occupy ? cidrset_occupy : cidrset_release)(&s, &n,
		    NULL), 0);
		if (s.allocated != op_cases[i].allocated)
			fail_msg("step %zu (%s %s): %llu taken, want %llu", i,
			    op_cases[i].occupy ? "occupy" : "release", op_cases[i].cidr,
			    (unsigned long long)s.allocated,
			    (unsigned long long)op_cases[i].allocated);
	}
	for (uint64_t i = 0; i < free_blocks; i++)
		assert_int_equal(cidrset_allocate_next(&s, &n), 0);
	assert_int_equal(cidrset_allocate_next(&s, &n), -1);
	cidrset_free(&s);
}

/* --- TestGetBitforCIDR, TestOccupy ----------------------------------------------------- */

struct occupy_case {
	const char *name;
	const char *cluster;
	int bits;
	const char *cidr;
	int fails;		/* occupy refuses it (outside the cluster CIDR) */
	uint64_t begin, end;	/* the blocks taken, and only they */
};

static const struct occupy_case occupy_cases[] = {
	/* TestGetBitforCIDR: one block, at its index. */
	{ "Get 0 Bit with IPv4", "127.0.0.0/8", 16, "127.0.0.0/16", 0, 0, 0 },
	{ "Get 0 Bit with IPv6", "be00::/8", 16, "be00::/16", 0, 0, 0 },
	{ "Get 123rd Bit with IPv4", "127.0.0.0/8", 16, "127.123.0.0/16", 0, 123, 123 },
	{ "Get xef Bit with IPv6", "be00::/8", 16, "beef::/16", 0, 0xef, 0xef },
	{ "Get 168th Bit with IPv4", "127.0.0.0/8", 16, "127.168.0.0/16", 0, 168, 168 },
	{ "Get x68th Bit with IPv6", "be00::/8", 16, "be68::/16", 0, 0x68, 0x68 },
	{ "Get 224th Bit with IPv4", "127.0.0.0/8", 16, "127.224.0.0/16", 0, 224, 224 },
	{ "Get x24th Bit with IPv6", "be00::/8", 16, "be24::/16", 0, 0x24, 0x24 },
	{ "Get 12th Bit with IPv4", "192.168.0.0/16", 24, "192.168.12.0/24", 0, 12, 12 },
	{ "Get x12th Bit with IPv6", "beef::/16", 24, "beef:1200::/24", 0, 0x12, 0x12 },
	{ "Get 151st Bit with IPv4", "192.168.0.0/16", 24, "192.168.151.0/24", 0, 151, 151 },
	{ "Get x97st Bit with IPv6", "beef::/16", 24, "beef:9700::/24", 0, 0x97, 0x97 },
	{ "Get error with IPv4", "192.168.0.0/16", 24, "127.168.224.0/24", 1, 0, 0 },
	{ "Get error with IPv6", "beef::/16", 24, "2001:db00::/24", 1, 0, 0 },
	/* TestOccupy. */
	{ "Occupy all Bits with IPv4", "127.0.0.0/8", 16, "127.0.0.0/8", 0, 0, 255 },
	{ "Occupy all Bits with IPv6", "2001:beef:1200::/40", 48, "2001:beef:1200::/40", 0, 0,
	    255 },
	{ "Occupy every Bit with IPv4", "127.0.0.0/8", 16, "127.0.0.0/2", 0, 0, 255 },
	{ "Occupy every Bit with IPv6", "2001:beef:1200::/40", 48, "2001:beef:1234::/34", 0, 0,
	    255 },
	{ "Occupy 1st Bit with IPv4", "127.0.0.0/8", 16, "127.0.0.0/16", 0, 0, 0 },
	{ "Occupy 1st Bit with IPv6", "2001:beef:1200::/40", 48, "2001:beef:1200::/48", 0, 0,
	    0 },
	{ "Occupy 65535 Bits with IPv4", "127.0.0.0/8", 32, "127.0.0.0/16", 0, 0, 65535 },
	{ "Occupy 65535 Bits with IPv6", "2001:beef:1200::/48", 64, "2001:beef:1200::/48", 0, 0,
	    65535 },
	{ "Occupy 257th Bit with IPv4", "127.0.0.0/7", 16, "127.0.0.0/15", 0, 256, 257 },
	{ "Occupy 257th Bit with IPv6", "2001:beef:7f00::/39", 48, "2001:beef:7f00::/47", 0,
	    256, 257 },
	{ "Occupy 128th Bit with IPv4", "127.0.0.0/7", 15, "127.0.0.0/15", 0, 128, 128 },
	{ "Occupy 128th Bit with IPv6", "2001:beef:7f00::/39", 47, "2001:beef:7f00::/47", 0,
	    128, 128 },
	{ "Occupy 1031st Bit with IPv4", "127.0.0.0/7", 18, "127.0.0.0/15", 0, 1024, 1031 },
	{ "Occupy 1031st Bit with IPv6", "2001:beef:7f00::/39", 50, "2001:beef:7f00::/47", 0,
	    1024, 1031 },
	/* sqlkcm's: less than a block takes its block; the other family is outside; a
	 * network just beside the cluster CIDR is outside. */
	{ "a /32 in a /24 block", "10.0.0.0/16", 24, "10.0.7.9/32", 0, 7, 7 },
	{ "an IPv6 /128 in a /64 block", "fd00::/48", 64, "fd00:0:0:5::1/128", 0, 5, 5 },
	{ "IPv4 in an IPv6 set", "fd00::/48", 64, "10.0.0.0/24", 1, 0, 0 },
	{ "IPv6 in an IPv4 set", "10.0.0.0/16", 24, "::/0", 1, 0, 0 },
	{ "just after the cluster CIDR", "10.0.0.0/16", 24, "10.1.0.0/24", 1, 0, 0 },
	{ "the last block", "10.0.0.0/16", 24, "10.0.255.0/24", 0, 255, 255 },
	{ "a /0 holds the whole set", "10.0.0.0/16", 24, "0.0.0.0/0", 0, 0, 255 },
};

static void
cidrset_occupy_takes_the_blocks(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(occupy_cases); i++) {
		const struct occupy_case *c = &occupy_cases[i];
		struct cidrset s;
		struct ipnet n = net_of(c->cidr);
		char *error = NULL;
		int rc;

		set_of(&s, c->cluster, c->bits);
		rc = cidrset_occupy(&s, &n, &error);
		if (c->fails) {
			if (rc == 0)
				fail_msg("%s: occupied", c->name);
			assert_non_null(error);
			free(error);
			assert_int_equal(s.allocated, 0);
			/* Release refuses it the same way. */
			assert_int_equal(cidrset_release(&s, &n, NULL), -1);
			cidrset_free(&s);
			continue;
		}
		if (rc != 0)
			fail_msg("%s: %s", c->name, error);
		if (s.allocated != c->end - c->begin + 1)
			fail_msg("%s: %llu taken, want %llu", c->name,
			    (unsigned long long)s.allocated,
			    (unsigned long long)(c->end - c->begin + 1));
		for (uint64_t b = 0; b < s.max; b++) {
			if (cidrset_used(&s, b) != (b >= c->begin && b <= c->end))
				fail_msg("%s: block %llu is %s", c->name, (unsigned long long)b,
				    cidrset_used(&s, b) ? "taken" : "free");
		}
		/* Given back, all are free again. */
		assert_int_equal(cidrset_release(&s, &n, NULL), 0);
		assert_int_equal(s.allocated, 0);
		for (uint64_t b = c->begin; b <= c->end; b++)
			assert_false(cidrset_used(&s, b));
		cidrset_free(&s);
	}
}

/* The message for a network outside the cluster CIDR is kube's. */
static void
cidrset_occupy_outside_in_kubes_words(void **state)
{
	struct cidrset s;
	struct ipnet n = net_of("127.168.224.0/24");
	char *error = NULL;

	(void)state;
	set_of(&s, "192.168.0.0/16", 24);
	assert_int_equal(cidrset_occupy(&s, &n, &error), -1);
	assert_string_equal(error,
	    "cidr 127.168.224.0/24 is out the range of cluster cidr 192.168.0.0/16");
	free(error);
	cidrset_free(&s);
}

/* --- Test_getMaxCIDRs, TestCidrSetMetrics* (allocated and max) ------------------------- */

struct max_case {
	const char *cluster;
	int bits;
	uint64_t max;
};

static const struct max_case max_cases[] = {
	{ "10.0.0.0/16", 24, 256 },
	{ "2001:db8::/48", 64, 65536 },
	/* sqlkcm's: the extremes. */
	{ "10.0.0.0/24", 24, 1 },
	{ "0.0.0.0/0", 32, 4294967296ULL },
	{ "fd00::/112", 128, 65536 },
};

static void
cidrset_max_blocks(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(max_cases); i++) {
		struct cidrset s;

		set_of(&s, max_cases[i].cluster, max_cases[i].bits);
		if (s.max != max_cases[i].max)
			fail_msg("%s /%d: max %llu, want %llu", max_cases[i].cluster,
			    max_cases[i].bits, (unsigned long long)s.max,
			    (unsigned long long)max_cases[i].max);
		assert_string_equal(s.label, max_cases[i].cluster);
		cidrset_free(&s);
	}
}

/* TestCidrSetMetrics: each block handed out counts; the cluster CIDR given back frees
 * them all; occupied, takes them all. */
static void
cidrset_metrics_counts(void **state)
{
	struct cidrset s;
	struct ipnet cluster = net_of("10.0.0.0/16"), n;

	(void)state;
	set_of(&s, "10.0.0.0/16", 24);
	assert_int_equal(s.allocated, 0);
	for (uint64_t i = 1; i <= 256; i++) {
		assert_int_equal(cidrset_allocate_next(&s, &n), 0);
		assert_int_equal(s.allocated, i);
	}
	assert_int_equal(cidrset_release(&s, &cluster, NULL), 0);
	assert_int_equal(s.allocated, 0);
	assert_int_equal(cidrset_occupy(&s, &cluster, NULL), 0);
	assert_int_equal(s.allocated, 256);
	cidrset_free(&s);
}

/* TestCidrSetMetricsHistogram: half occupied, the next search goes past it. */
static void
cidrset_metrics_half_occupied(void **state)
{
	struct cidrset s;
	struct ipnet half = net_of("10.0.0.0/17");
	char got[64];

	(void)state;
	set_of(&s, "10.0.0.0/16", 24);
	assert_int_equal(cidrset_occupy(&s, &half, NULL), 0);
	assert_int_equal(s.allocated, 128);
	assert_string_equal(next_of(&s, got, sizeof got), "10.0.128.0/24");
	assert_int_equal(s.allocated, 129);
	cidrset_free(&s);
}

/* TestCidrSetMetricsDual: both families, all occupied then all given back. */
static void
cidrset_metrics_dual(void **state)
{
	struct cidrset a, b;
	struct ipnet v4 = net_of("10.0.0.0/16"), v6 = net_of("2001:db8::/48");

	(void)state;
	set_of(&a, "10.0.0.0/16", 24);
	set_of(&b, "2001:db8::/48", 64);
	assert_int_equal(a.max, 256);
	assert_int_equal(b.max, 65536);
	assert_int_equal(cidrset_occupy(&a, &v4, NULL), 0);
	assert_int_equal(a.allocated, 256);
	assert_int_equal(cidrset_occupy(&b, &v6, NULL), 0);
	assert_int_equal(b.allocated, 65536);
	assert_int_equal(cidrset_release(&a, &v4, NULL), 0);
	assert_int_equal(a.allocated, 0);
	assert_int_equal(cidrset_release(&b, &v6, NULL), 0);
	assert_int_equal(b.allocated, 0);
	cidrset_free(&a);
	cidrset_free(&b);
}

/* sqlkcm's: the round robin of the set itself, and a set with blocks in several pages. */
static void
cidrset_round_robin_and_pages(void **state)
{
	struct cidrset s;
	struct ipnet n;
	char got[64];

	(void)state;
	set_of(&s, "10.0.0.0/28", 30);
	assert_string_equal(next_of(&s, got, sizeof got), "10.0.0.0/30");
	assert_string_equal(next_of(&s, got, sizeof got), "10.0.0.4/30");
	n = net_of("10.0.0.0/30");
	assert_int_equal(cidrset_release(&s, &n, NULL), 0);
	assert_string_equal(next_of(&s, got, sizeof got), "10.0.0.8/30");
	assert_string_equal(next_of(&s, got, sizeof got), "10.0.0.12/30");
	assert_string_equal(next_of(&s, got, sizeof got), "10.0.0.0/30");
	assert_string_equal(next_of(&s, got, sizeof got), "");
	cidrset_free(&s);

	/* 2^20 /32 blocks: the last page's block, then round past the end. */
	set_of(&s, "10.0.0.0/12", 32);
	n = net_of("10.15.255.254/32");
	assert_int_equal(cidrset_occupy(&s, &n, NULL), 0);
	assert_true(cidrset_used(&s, (1u << 20) - 2));
	assert_false(cidrset_used(&s, (1u << 20) - 1));
	assert_false(cidrset_used(&s, 1u << 18));
	n = net_of("10.0.0.0/13");
	assert_int_equal(cidrset_occupy(&s, &n, NULL), 0);
	assert_int_equal(s.allocated, (1u << 19) + 1);
	assert_string_equal(next_of(&s, got, sizeof got), "10.8.0.0/32");
	cidrset_free(&s);
}

/* --- nodeipam_config_parse: validateCIDRs, setNodeCIDRMaskSizes, the service ranges ---- */

struct config_case {
	const char *name;
	const char *cluster, *services;
	long long mask, mask4, mask6;
	const char *error;	/* kube's; NULL: a configuration */
	const char *clusters;	/* "net/bits" comma-separated: each cluster CIDR and its
				   node mask size */
	int nservice;
};

static const struct config_case config_cases[] = {
	{ "IPv4 single stack, default /24", "10.244.0.0/16", "", 0, 0, 0, NULL,
	    "10.244.0.0/16 24", 0 },
	{ "IPv6 single stack, default /64", "fd00:10:244::/48", "", 0, 0, 0, NULL,
	    "fd00:10:244::/48 64", 0 },
	{ "dual stack v4,v6, defaults", "10.244.0.0/16,fd00:10:244::/48", "", 0, 0, 0, NULL,
	    "10.244.0.0/16 24,fd00:10:244::/48 64", 0 },
	{ "dual stack v6,v4, defaults", "fd00:10:244::/48,10.244.0.0/16", "", 0, 0, 0, NULL,
	    "fd00:10:244::/48 64,10.244.0.0/16 24", 0 },
	{ "dual stack with per-family sizes", "10.244.0.0/16,fd00:10:244::/48", "", 0, 26, 56,
	    NULL, "10.244.0.0/16 26,fd00:10:244::/48 56", 0 },
	{ "dual stack with the IPv4 size only", "10.244.0.0/16,fd00:10:244::/48", "", 0, 26, 0,
	    NULL, "10.244.0.0/16 26,fd00:10:244::/48 64", 0 },
	{ "dual stack refuses --node-cidr-mask-size", "10.244.0.0/16,fd00:10:244::/48", "", 24,
	    0, 0, "usage of --node-cidr-mask-size is not allowed with dual-stack clusters",
	    NULL, 0 },
	{ "IPv4 with --node-cidr-mask-size", "10.244.0.0/16", "", 26, 0, 0, NULL,
	    "10.244.0.0/16 26", 0 },
	{ "IPv6 with --node-cidr-mask-size", "fd00::/48", "", 60, 0, 0, NULL, "fd00::/48 60",
	    0 },
	{ "--node-cidr-mask-size with -ipv4", "10.244.0.0/16", "", 26, 25, 0,
	    "usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is not allowed "
	    "if --node-cidr-mask-size is set. For dual-stack clusters please unset it and use "
	    "IPFamily specific flags", NULL, 0 },
	{ "--node-cidr-mask-size with -ipv6", "fd00::/48", "", 60, 0, 56,
	    "usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is not allowed "
	    "if --node-cidr-mask-size is set. For dual-stack clusters please unset it and use "
	    "IPFamily specific flags", NULL, 0 },
	{ "IPv4 with -ipv4", "10.244.0.0/16", "", 0, 25, 0, NULL, "10.244.0.0/16 25", 0 },
	{ "IPv6 with -ipv6", "fd00::/48", "", 0, 0, 56, NULL, "fd00::/48 56", 0 },
	{ "IPv4 refuses -ipv6", "10.244.0.0/16", "", 0, 0, 64,
	    "usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 "
	    "cluster", NULL, 0 },
	{ "IPv6 refuses -ipv4", "fd00::/48", "", 0, 24, 0,
	    "usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 "
	    "cluster", NULL, 0 },
	{ "IPv4 with both: -ipv6 refused", "10.244.0.0/16", "", 0, 24, 64,
	    "usage of --node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 "
	    "cluster", NULL, 0 },
	{ "IPv6 with both: -ipv4 refused", "fd00::/48", "", 0, 24, 64,
	    "usage of --node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 "
	    "cluster", NULL, 0 },
	{ "two IPv4", "10.244.0.0/16,10.245.0.0/16", "", 0, 0, 0,
	    "len of ClusterCIDRs==2 and they are not configured as dual stack (at least one "
	    "from each IPFamily", NULL, 0 },
	{ "two IPv6", "fd00::/48,fd01::/48", "", 0, 0, 0,
	    "len of ClusterCIDRs==2 and they are not configured as dual stack (at least one "
	    "from each IPFamily", NULL, 0 },
	{ "three, dual stack", "10.244.0.0/16,fd00::/48,10.245.0.0/16", "", 0, 0, 0,
	    "length of clusterCIDRs is:3 more than max allowed of 2", NULL, 0 },
	{ "three, IPv6 last", "10.244.0.0/16,10.245.0.0/16,fd00::/48", "", 0, 0, 0,
	    "length of clusterCIDRs is:3 more than max allowed of 2", NULL, 0 },
	{ "three IPv4", "10.244.0.0/16,10.245.0.0/16,10.246.0.0/16", "", 0, 0, 0,
	    "len of ClusterCIDRs==3 and they are not configured as dual stack (at least one "
	    "from each IPFamily", NULL, 0 },
	{ "not a CIDR", "10.244.0.0", "", 0, 0, 0,
	    "invalid CIDR[0]: <nil> (invalid CIDR address: 10.244.0.0)", NULL, 0 },
	{ "the second not a CIDR", "10.244.0.0/16,fd00::", "", 0, 0, 0,
	    "invalid CIDR[1]: <nil> (invalid CIDR address: fd00::)", NULL, 0 },
	/* kube says "invalid CIDR[0]: <nil> (invalid CIDR address: )"; sqlkcm says what
	 * kube's NewNodeIpamController would, which names the flag. */
	{ "empty", "", "", 0, 0, 0,
	    "Must specify --cluster-cidr if --allocate-node-cidrs is set", NULL, 0 },
	{ "blanks around the list are trimmed", " 10.244.0.0/16 ", "", 0, 0, 0, NULL,
	    "10.244.0.0/16 24", 0 },
	{ "a blank after the comma is not", "10.244.0.0/16, fd00::/48", "", 0, 0, 0,
	    "invalid CIDR[1]: <nil> (invalid CIDR address:  fd00::/48)", NULL, 0 },
	{ "a trailing comma is an empty CIDR", "10.244.0.0/16,", "", 0, 0, 0,
	    "invalid CIDR[1]: <nil> (invalid CIDR address: )", NULL, 0 },
	{ "two commas: an empty CIDR between", "10.244.0.0/16,,fd00::/48", "", 0, 0, 0,
	    "invalid CIDR[1]: <nil> (invalid CIDR address: )", NULL, 0 },
	{ "sloppy leading zeros", "010.244.000.000/016", "", 0, 0, 0, NULL,
	    "10.244.0.0/16 24", 0 },
	{ "the cluster CIDR shorter than the blocks", "10.244.0.0/16", "", 0, 14, 0,
	    "Controller: Invalid --cluster-cidr, mask size of cluster CIDR must be less than or "
	    "equal to --node-cidr-mask-size configured for CIDR family", NULL, 0 },
	{ "the default /64 shorter than an IPv6 /80", "fd00::/80", "", 0, 0, 0,
	    "Controller: Invalid --cluster-cidr, mask size of cluster CIDR must be less than or "
	    "equal to --node-cidr-mask-size configured for CIDR family", NULL, 0 },
	{ "equal sizes are fine", "10.244.0.0/24", "", 0, 0, 0, NULL, "10.244.0.0/24 24", 0 },
	/* The service ranges: --service-cluster-ip-range, split at commas. */
	{ "a service range", "10.244.0.0/16", "10.96.0.0/12", 0, 0, 0, NULL,
	    "10.244.0.0/16 24", 1 },
	{ "two service ranges, one per family", "10.244.0.0/16", "10.96.0.0/12,fd00:1::/112", 0,
	    0, 0, NULL, "10.244.0.0/16 24", 2 },
	{ "two IPv4 service ranges", "10.244.0.0/16", "10.96.0.0/12,10.97.0.0/16", 0, 0, 0,
	    "serviceCIDR and secondaryServiceCIDR are not dualstack (from different IPfamiles)",
	    NULL, 0 },
	{ "three service ranges", "10.244.0.0/16", "10.96.0.0/12,fd00:1::/112,10.97.0.0/16", 0,
	    0, 0, "--service-cluster-ip-range can not contain more than two entries", NULL, 0 },
	{ "three service entries, two not CIDRs", "10.244.0.0/16", "10.96.0.0/12,x,y", 0, 0, 0,
	    "--service-cluster-ip-range can not contain more than two entries", NULL, 0 },
	{ "three service entries, one empty", "10.244.0.0/16", "10.96.0.0/12,,fd00:1::/112", 0,
	    0, 0, "--service-cluster-ip-range can not contain more than two entries", NULL, 0 },
	{ "a service range that is not one is left out", "10.244.0.0/16", "garbage", 0, 0, 0,
	    NULL, "10.244.0.0/16 24", 0 },
	{ "an empty second service range", "10.244.0.0/16", "10.96.0.0/12,", 0, 0, 0, NULL,
	    "10.244.0.0/16 24", 1 },
	{ "a blank before the second service range: it is not one", "10.244.0.0/16",
	    "10.96.0.0/12, 10.97.0.0/16", 0, 0, 0, NULL, "10.244.0.0/16 24", 1 },
};

/* Each row that disagrees is printed; the test fails after them all. */
static void
config_parse_as_kube_checks_the_flags(void **state)
{
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < NELEM(config_cases); i++) {
		const struct config_case *c = &config_cases[i];
		struct nodeipam_config cfg;
		struct buf b;
		char *error = NULL, *got;
		int rc = nodeipam_config_parse(c->cluster, c->services, c->mask, c->mask4,
		    c->mask6, &cfg, &error);

		if (rc != 0) {
			got = error;
		} else {
			buf_init(&b);
			for (int k = 0; k < cfg.ncluster; k++) {
				char text[64];

				ipnet_format(&cfg.cluster[k], text, sizeof text);
				buf_printf(&b, "%s%s %d", k > 0 ? "," : "", text,
				    cfg.node_bits[k]);
			}
			buf_printf(&b, "; %d service ranges", cfg.nservice);
			got = buf_detach(&b);
		}
		if (c->error != NULL ? rc == 0 || strcmp(got, c->error) != 0 :
		    rc != 0 || strncmp(got, c->clusters, strlen(c->clusters)) != 0 ||
		    cfg.nservice != c->nservice) {
			print_error("%s:\n  got:  %s\n  want: %s", c->name, got,
			    c->error != NULL ? c->error : c->clusters);
			if (c->error == NULL)
				print_error("; %d service ranges", c->nservice);
			print_error("\n");
			bad++;
		}
		free(got);
	}
	if (bad > 0)
		fail_msg("%d of %zu rows disagree", bad, NELEM(config_cases));
}

/* --- the controller: its world --------------------------------------------------------- */

enum {
	F_ALLOCATE, F_CLUSTER, F_SERVICE, F_MASK, F_MASK4, F_MASK6, F_TYPE, F_COUNT
};

/* The flags as given (NULL: the default), allocate "true" unless off. */
struct ipam_flags {
	const char *cluster, *service, *mask, *mask4, *mask6;
	int off;
	const char *type;
};

struct env {
	struct ctl_world *w;
	const char *flags[F_COUNT];
	struct controller_config config;
	const struct resource *nodes;
	struct metrics_registry *registry;	/* the controller's, if the test makes one */
};

static int
env_setup(void **state)
{
	struct env *e = xcalloc(1, sizeof *e);

	e->w = ctl_world_new(NULL, NULL);
	e->w->row = *state;
	e->nodes = resource_find("nodes");
	e->config.flags = e->flags;
	*state = e;
	return 0;
}

static int
env_teardown(void **state)
{
	struct env *e = *state;

	ctl_world_free(e->w);
	if (e->registry != NULL)
		metrics_registry_free(e->registry);
	free(e);
	return 0;
}

/* Starts the controller with f: 0, or -1 with e->w->error set. */
static int
start(struct env *e, const struct ipam_flags *f)
{
	e->flags[F_ALLOCATE] = f->off ? "false" : "true";
	e->flags[F_CLUSTER] = f->cluster;
	e->flags[F_SERVICE] = f->service;
	e->flags[F_MASK] = f->mask;
	e->flags[F_MASK4] = f->mask4;
	e->flags[F_MASK6] = f->mask6;
	e->flags[F_TYPE] = f->type;
	return ctl_start(e->w, &nodeipam_controller_type, &e->config);
}

/* Starts it with f; fails the test if it does not start. */
static void
started(struct env *e, const struct ipam_flags *f)
{
	if (start(e, f) != 0)
		fail_msg("the controller did not start: %s", e->w->error);
}

/* A restart: the controller freed and made again over the same cache. */
static void
restart(struct env *e)
{
	controller_free(e->w->c);
	e->w->c = NULL;
	if (ctl_start(e->w, &nodeipam_controller_type, &e->config) != 0)
		fail_msg("the controller did not restart: %s", e->w->error);
}

/* A node named name with uid "uid-<name><gen>", a resourceVersion newer than any before
 * (the cache keeps the newer of two), spec.podCIDRs cidrs (a JSON array;
 * NULL: none) and spec.podCIDR their first, being deleted if deleting. */
static cJSON *
node_new(const char *name, int gen, const char *cidrs, int deleting)
{
	static int rv;
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{"
	    "\"name\":\"%s\",\"uid\":\"uid-%s%d\",\"resourceVersion\":\"%d\"}}", name, name, gen,
	    ++rv);
	cJSON *node = fixture_parse(text);

	free(text);
	if (deleting)
		fixture_add_time(cJSON_GetObjectItemCaseSensitive(node, "metadata"),
		    "deletionTimestamp", NOW - 60);
	if (cidrs != NULL) {
		cJSON *spec = cJSON_AddObjectToObject(node, "spec");
		cJSON *list = fixture_parse(cidrs);

		if (cJSON_GetArraySize(list) > 0)
			cJSON_AddStringToObject(spec, "podCIDR",
			    cJSON_GetArrayItem(list, 0)->valuestring);
		cJSON_AddItemToObject(spec, "podCIDRs", list);
	}
	return node;
}

/* Puts node name (generation gen) with cidrs into the cache. */
static void
cache_node(struct env *e, const char *name, int gen, const char *cidrs)
{
	ctl_cache(e->w, e->nodes, node_new(name, gen, cidrs, 0));
}

/* Node name (generation gen, showing cidrs) deleted: gone from the cache, then the
 * handler told. */
static void
delete_node(struct env *e, const char *name, int gen, const char *cidrs)
{
	char uid[64];

	snprintf(uid, sizeof uid, "uid-%s%d", name, gen);
	ctl_uncache(e->w, e->nodes, uid);
	ctl_tell(e->w, INFORMER_DELETED, e->nodes, node_new(name, gen, cidrs, 0), NULL);
}

/*
 * Syncs node name and returns what it was given: its podCIDRs comma-separated ("" when
 * the sync wrote nothing), after checking the patch is kube's (spec.podCIDR the first
 * of spec.podCIDRs, nothing else). Kept until the world is freed.
 */
static const char *
sync_node(struct env *e, const char *name)
{
	struct ctl_world *w = e->w;
	const struct action *a;
	const cJSON *list, *item;
	struct buf b;

	ctl_sync(w, name, NOW);
	if (w->result.nwrites == 0)
		return "";
	assert_int_equal(w->result.nwrites, 1);
	a = &w->result.writes[0];
	assert_int_equal(a->type, ACTION_PATCH);
	assert_string_equal(a->resource->name, "nodes");
	assert_string_equal(a->name, name);
	assert_string_equal(a->namespace, "");
	assert_non_null(a->uid);
	assert_int_equal(cJSON_GetArraySize(a->body), 1);
	assert_int_equal(cJSON_GetArraySize(json_path(a->body, "spec")), 2);
	list = json_path(a->body, "spec.podCIDRs");
	assert_true(cJSON_IsArray(list));
	assert_string_equal(json_string(a->body, "spec.podCIDR"),
	    cJSON_GetStringValue(cJSON_GetArrayItem(list, 0)));
	buf_init(&b);
	cJSON_ArrayForEach(item, list) {
		assert_true(cJSON_IsString(item));
		buf_printf(&b, "%s%s", item != list->child ? "," : "", item->valuestring);
	}
	return ctl_keep(w, buf_detach(&b));
}

/* Whether the last sync recorded kube's CIDRNotAvailable event for node name. */
static int
cidr_not_available(const struct env *e, const char *name)
{
	const struct sync_result *r = &e->w->result;
	char want[128];

	snprintf(want, sizeof want, "Node %s status is now: CIDRNotAvailable", name);
	return r->nevents == 1 && strcmp(r->events[0].type, "Normal") == 0 &&
	    strcmp(r->events[0].reason, "CIDRNotAvailable") == 0 &&
	    strcmp(r->events[0].message, want) == 0;
}

/* --- TestOccupyPreExistingCIDR, TestAllocateOrOccupyCIDR*, TestNodeDeletionReleaseCIDR -- */

struct ra_node {
	const char *name;
	const char *cidrs;	/* spec.podCIDRs, JSON; NULL: none */
	int deleting;
	int gone;		/* deleted after the syncs (removed, then its handler told) */
};

struct ra_case {
	const char *name;
	struct ipam_flags flags;
	const char *start_error;	/* the start fails with this in its error; NULL: it
					   starts */
	struct ra_node nodes[6];	/* cached, then synced in this order */
	/* What the last node synced gets: its podCIDRs ("": no write), whether its sync
	 * failed and whether with CIDRNotAvailable. */
	const char *want;
	int failed, not_available;
	/* What a new node gets after the syncs and deletions; NULL: not looked at. */
	const char *next;
};

#define V4_16 "10.10.0.0/16"
#define DUAL_16_8 "10.10.0.0/16,ace:cab:deca::/8"

static const struct ra_case ra_cases[] = {
	/* TestOccupyPreExistingCIDR: kube's allocator refuses to start over a node whose
	 * podCIDRs are garbage or outside the cluster CIDRs; here it starts, and that node's
	 * sync fails and writes nothing (nodeipam.c's header says so). */
	{ "TestOccupyPreExistingCIDR: success, single stack no node allocation",
	    { V4_16, NULL, "24", NULL, NULL, 0, NULL }, NULL, { { "node0", NULL, 0, 0 } },
	    "10.10.0.0/24", 0, 0, "10.10.1.0/24" },
	{ "TestOccupyPreExistingCIDR: success, dual stack no node allocation",
	    { DUAL_16_8, NULL, NULL, "24", "24", 0, NULL }, NULL, { { "node0", NULL, 0, 0 } },
	    "10.10.0.0/24,a00::/24", 0, 0, "10.10.1.0/24,a00:100::/24" },
	{ "TestOccupyPreExistingCIDR: success, single stack correct node allocation",
	    { V4_16, NULL, "24", NULL, NULL, 0, NULL }, NULL,
	    { { "node0", "[\"10.10.0.1/24\"]", 0, 0 } }, "", 0, 0, "10.10.1.0/24" },
	{ "TestOccupyPreExistingCIDR: success, dual stack both allocated correctly",
	    { DUAL_16_8, NULL, NULL, "24", "24", 0, NULL }, NULL,
	    { { "node0", "[\"10.10.0.1/24\",\"a00::/86\"]", 0, 0 } }, "", 0, 0,
	    "10.10.1.0/24,a00:100::/24" },
	{ "TestOccupyPreExistingCIDR: fail, single stack incorrect node allocation",
	    { V4_16, NULL, "24", NULL, NULL, 0, NULL }, NULL,
	    { { "node0", "[\"172.10.0.1/24\"]", 0, 0 } }, "", 1, 0, "10.10.0.0/24" },
	{ "TestOccupyPreExistingCIDR: fail, dualstack node allocating from non existing cidr",
	    { V4_16, NULL, "24", NULL, NULL, 0, NULL }, NULL,
	    { { "node0", "[\"10.10.0.1/24\",\"a00::/86\"]", 0, 0 } }, "", 1, 0,
	    "10.10.1.0/24" },
	{ "TestOccupyPreExistingCIDR: fail, dualstack node allocating bad v4",
	    { DUAL_16_8, NULL, NULL, "24", "24", 0, NULL }, NULL,
	    { { "node0", "[\"172.10.0.1/24\",\"a00::/86\"]", 0, 0 } }, "", 1, 0,
	    "10.10.0.0/24,a00:100::/24" },
	{ "TestOccupyPreExistingCIDR: fail, dualstack node allocating bad v6",
	    { DUAL_16_8, NULL, NULL, "24", "24", 0, NULL }, NULL,
	    { { "node0", "[\"10.10.0.1/24\",\"cdd::/86\"]", 0, 0 } }, "", 1, 0,
	    "10.10.1.0/24,a00::/24" },
	/* TestAllocateOrOccupyCIDRSuccess; the CIDRs kube occupies by hand are other
	 * nodes'. */
	{ "TestAllocateOrOccupyCIDRSuccess: When there's no ServiceCIDR return first CIDR in "
	    "range", { "127.123.234.0/24", NULL, "30", NULL, NULL, 0, NULL }, NULL,
	    { { "node0", NULL, 0, 0 } }, "127.123.234.0/30", 0, 0, NULL },
	{ "TestAllocateOrOccupyCIDRSuccess: Correctly filter out ServiceCIDR",
	    { "127.123.234.0/24", "127.123.234.0/26", "30", NULL, NULL, 0, NULL }, NULL,
	    { { "node0", NULL, 0, 0 } }, "127.123.234.64/30", 0, 0, NULL },
	{ "TestAllocateOrOccupyCIDRSuccess: Correctly ignore already allocated CIDRs",
	    { "127.123.234.0/24", "127.123.234.0/26", "30", NULL, NULL, 0, NULL }, NULL,
	    { { "pre-0", "[\"127.123.234.64/30\"]", 0, 0 },
	      { "pre-1", "[\"127.123.234.68/30\"]", 0, 0 },
	      { "pre-2", "[\"127.123.234.72/30\"]", 0, 0 },
	      { "pre-3", "[\"127.123.234.80/30\"]", 0, 0 }, { "node0", NULL, 0, 0 } },
	    "127.123.234.76/30", 0, 0, "127.123.234.84/30" },
	{ "TestAllocateOrOccupyCIDRSuccess: Dualstack CIDRs v4,v6",
	    { "127.123.234.0/8,ace:cab:deca::/84", "127.123.234.0/26", NULL, "24", "98", 0,
	    NULL }, NULL, { { "node0", NULL, 0, 0 } }, "127.0.0.0/24,ace:cab:deca::/98", 0, 0,
	    NULL },
	{ "TestAllocateOrOccupyCIDRSuccess: Dualstack CIDRs v6,v4",
	    { "ace:cab:deca::/84,127.123.234.0/8", "127.123.234.0/26", NULL, "24", "98", 0,
	    NULL }, NULL, { { "node0", NULL, 0, 0 } }, "ace:cab:deca::/98,127.0.0.0/24", 0, 0,
	    NULL },
	/* kube's allocator is made with three here; kube-controller-manager's flag check
	 * refuses them before, as sqlkcm's start does. */
	{ "TestAllocateOrOccupyCIDRSuccess: Dualstack CIDRs, more than two",
	    { "127.123.234.0/8,ace:cab:deca::/84,10.0.0.0/8", "127.123.234.0/26", NULL, "24",
	    "98", 0, NULL }, "length of clusterCIDRs is:3 more than max allowed of 2",
	    { { NULL, NULL, 0, 0 } }, NULL, 0, 0, NULL },
	{ "TestAllocateOrOccupyCIDRSuccess: no double counting",
	    { "10.10.0.0/22", NULL, "24", NULL, NULL, 0, NULL }, NULL,
	    { { "node0", "[\"10.10.0.0/24\"]", 0, 0 }, { "node1", "[\"10.10.2.0/24\"]", 0, 0 },
	      { "node2", NULL, 0, 0 } }, "10.10.1.0/24", 0, 0, "10.10.3.0/24" },
	/* TestAllocateOrOccupyCIDRFailure. */
	{ "TestAllocateOrOccupyCIDRFailure: When there's no ServiceCIDR return first CIDR in "
	    "range", { "127.123.234.0/28", NULL, "30", NULL, NULL, 0, NULL }, NULL,
	    { { "pre-0", "[\"127.123.234.0/30\"]", 0, 0 },
	      { "pre-1", "[\"127.123.234.4/30\"]", 0, 0 },
	      { "pre-2", "[\"127.123.234.8/30\"]", 0, 0 },
	      { "pre-3", "[\"127.123.234.12/30\"]", 0, 0 }, { "node0", NULL, 0, 0 } },
	    "", 1, 1, NULL },
	/* TestNodeDeletionReleaseCIDR: the next block after the node's sync. */
	{ "TestNodeDeletionReleaseCIDR: Regular node not under deletion",
	    { V4_16, NULL, "24", NULL, NULL, 0, NULL }, NULL,
	    { { "node0", "[\"10.10.0.0/24\"]", 0, 0 } }, "", 0, 0, "10.10.1.0/24" },
	{ "TestNodeDeletionReleaseCIDR: Node under deletion",
	    { V4_16, NULL, "24", NULL, NULL, 0, NULL }, NULL,
	    { { "node0", "[\"10.10.0.0/24\"]", 1, 0 } }, "", 0, 0, "10.10.1.0/24" },
	{ "TestNodeDeletionReleaseCIDR: Node deleted",
	    { V4_16, NULL, "24", NULL, NULL, 0, NULL }, NULL,
	    { { "node0", "[\"10.10.0.0/24\"]", 0, 1 } }, "", 0, 0, "10.10.0.0/24" },
	/* sqlkcm's: a node being deleted is given nothing; service ranges of both
	 * families, each left out of its own family's CIDR; a service range holding the
	 * whole cluster CIDR; a node with fewer podCIDRs than there are cluster CIDRs keeps
	 * them. */
	{ "a node being deleted is given nothing",
	    { V4_16, NULL, NULL, NULL, NULL, 0, NULL }, NULL, { { "node0", NULL, 1, 0 } }, "",
	    0, 0, "10.10.0.0/24" },
	{ "dual-stack service ranges are left out of each family",
	    { "10.0.0.0/24,fd00::/120", "10.0.0.0/29,fd00::/126", NULL, "30", "126", 0, NULL },
	    NULL, { { "node0", NULL, 0, 0 } }, "10.0.0.8/30,fd00::4/126", 0, 0,
	    "10.0.0.12/30,fd00::8/126" },
	{ "a service range holding the cluster CIDR leaves nothing",
	    { "10.0.0.0/24", "10.0.0.0/16", "30", NULL, NULL, 0, NULL }, NULL,
	    { { "node0", NULL, 0, 0 } }, "", 1, 1, NULL },
	{ "a service range of the other family changes nothing",
	    { "10.0.0.0/24", "fd00::/112", "30", NULL, NULL, 0, NULL }, NULL,
	    { { "node0", NULL, 0, 0 } }, "10.0.0.0/30", 0, 0, NULL },
	{ "a dual-stack node showing only its IPv4 block keeps it",
	    { "10.0.0.0/24,fd00::/120", NULL, NULL, "30", "126", 0, NULL }, NULL,
	    { { "node0", "[\"10.0.0.0/30\"]", 0, 0 } }, "", 0, 0, "10.0.0.4/30,fd00::/126" },
	/* The allocator's flags. */
	{ "the CloudAllocator is refused", { V4_16, NULL, NULL, NULL, NULL, 0,
	    "CloudAllocator" }, "--cidr-allocator-type is set to 'CloudAllocator' but cloud "
	    "provider is not configured", { { NULL, NULL, 0, 0 } }, NULL, 0, 0, NULL },
	{ "an unknown allocator is refused", { V4_16, NULL, NULL, NULL, NULL, 0, "Magic" },
	    "invalid CIDR allocator type: Magic", { { NULL, NULL, 0, 0 } }, NULL, 0, 0, NULL },
	{ "no --cluster-cidr is refused", { NULL, NULL, NULL, NULL, NULL, 0, NULL }, "",
	    { { NULL, NULL, 0, 0 } }, NULL, 0, 0, NULL },
	{ "an IPv6 set of more than 2^16 blocks is refused",
	    { "fd00::/47", NULL, NULL, NULL, NULL, 0, NULL },
	    "New CIDR set failed; the node CIDR size is too big", { { NULL, NULL, 0, 0 } }, NULL,
	    0, 0, NULL },
	{ "IPv4 blocks longer than an address are refused",
	    { V4_16, NULL, "33", NULL, NULL, 0, NULL }, "longer than an IPv4 address",
	    { { NULL, NULL, 0, 0 } }, NULL, 0, 0, NULL },
};

static void
ra_case(void **state)
{
	struct env *e = *state;
	const struct ra_case *row = e->w->row;
	const char *got = NULL, *last = NULL;

	for (int i = 0; i < (int)NELEM(row->nodes) && row->nodes[i].name != NULL; i++)
		ctl_cache(e->w, e->nodes, node_new(row->nodes[i].name, 0, row->nodes[i].cidrs,
		    row->nodes[i].deleting));
	if (row->start_error != NULL) {
		assert_int_equal(start(e, &row->flags), -1);
		if (strstr(e->w->error, row->start_error) == NULL)
			fail_msg("start: %s, want \"%s\" in it", e->w->error, row->start_error);
		return;
	}
	started(e, &row->flags);
	for (int i = 0; i < (int)NELEM(row->nodes) && row->nodes[i].name != NULL; i++) {
		last = row->nodes[i].name;
		got = sync_node(e, last);
	}
	assert_non_null(last);
	assert_described("patched", got, row->want);
	if (e->w->result.failed != row->failed)
		fail_msg("failed: %d, want %d", e->w->result.failed, row->failed);
	assert_int_equal(cidr_not_available(e, last), row->not_available);
	if (!row->not_available)
		assert_int_equal(e->w->result.nevents, 0);
	for (int i = 0; i < (int)NELEM(row->nodes) && row->nodes[i].name != NULL; i++) {
		if (!row->nodes[i].gone)
			continue;
		delete_node(e, row->nodes[i].name, 0, row->nodes[i].cidrs);
		assert_described("a deleted node's sync", sync_node(e, row->nodes[i].name), "");
		assert_int_equal(e->w->result.forget_expectations, 1);
	}
	if (row->next != NULL) {
		cache_node(e, "probe", 0, NULL);
		assert_described("the next node", sync_node(e, "probe"), row->next);
	}
}

/* --- TestReleaseCIDRSuccess ------------------------------------------------------------ */

struct release_case {
	const char *name;
	const char *taken[4];	/* held by nodes pre-0, pre-1, ... */
	const char *first;	/* node0's first sync ("": none left) */
	const char *deleted;	/* the node deleted, showing the block it holds */
	const char *shown;	/* that block */
	const char *second;	/* node0's (made again if it was deleted) next sync */
};

static const struct release_case release_cases[] = {
	{ "TestReleaseCIDRSuccess: Correctly release preallocated CIDR",
	    { "127.123.234.0/30", "127.123.234.4/30", "127.123.234.8/30", "127.123.234.12/30" },
	    "", "pre-1", "127.123.234.4/30", "127.123.234.4/30" },
	{ "TestReleaseCIDRSuccess: Correctly recycle CIDR",
	    { "127.123.234.4/30", "127.123.234.8/30", "127.123.234.12/30", NULL },
	    "127.123.234.0/30", "node0", "127.123.234.0/30", "127.123.234.0/30" },
};

static void
release_case(void **state)
{
	struct env *e = *state;
	const struct release_case *row = e->w->row;
	static const struct ipam_flags flags = { "127.123.234.0/28", NULL, "30", NULL, NULL, 0,
	    NULL };
	char name[16], *shown;

	for (int i = 0; i < 4 && row->taken[i] != NULL; i++) {
		char *cidrs = xasprintf("[\"%s\"]", row->taken[i]);

		snprintf(name, sizeof name, "pre-%d", i);
		cache_node(e, name, 0, cidrs);
		free(cidrs);
	}
	cache_node(e, "node0", 0, NULL);
	started(e, &flags);
	assert_described("first round", sync_node(e, "node0"), row->first);
	assert_int_equal(e->w->result.failed, row->first[0] == '\0');
	shown = xasprintf("[\"%s\"]", row->shown);
	delete_node(e, row->deleted, 0, shown);
	free(shown);
	if (strcmp(row->deleted, "node0") == 0)
		cache_node(e, "node0", 1, NULL);
	assert_described("second round", sync_node(e, "node0"), row->second);
	assert_int_equal(e->w->result.failed, 0);
}

/* --- the controller's own behaviours --------------------------------------------------- */

static const struct ipam_flags small = { "10.0.0.0/28", NULL, "30", NULL, NULL, 0, NULL };

/* Without --allocate-node-cidrs it does nothing: no keys, no writes, whatever the other
 * flags say. */
static void
inert_without_allocate_node_cidrs(void **state)
{
	struct env *e = *state;
	static const struct ipam_flags off = { "not a cidr", NULL, "99", NULL, NULL, 1,
	    "Magic" };
	char *keys;

	cache_node(e, "node0", 0, NULL);
	cache_node(e, "node1", 0, "[\"10.0.0.0/30\"]");
	started(e, &off);
	ctl_list_keys(e->w);
	ctl_tell(e->w, INFORMER_ADDED, e->nodes, node_new("node2", 0, NULL, 0), NULL);
	ctl_tell(e->w, INFORMER_UPDATED, e->nodes, node_new("node0", 0, NULL, 0), NULL);
	ctl_tell(e->w, INFORMER_DELETED, e->nodes, node_new("node1", 0, "[\"10.0.0.0/30\"]", 0),
	    NULL);
	keys = ctl_keys(e->w);
	assert_string_equal(keys, "");
	free(keys);
	assert_described("node0", sync_node(e, "node0"), "");
	assert_int_equal(e->w->result.failed, 0);
	assert_int_equal(e->w->result.nevents, 0);

	/* The default is off too. */
	restart(e);
	e->flags[F_ALLOCATE] = NULL;
	restart(e);
	ctl_list_keys(e->w);
	keys = ctl_keys(e->w);
	assert_string_equal(keys, "");
	free(keys);
	assert_described("node0", sync_node(e, "node0"), "");
}

/* The keys: every node listed; an add or update queues its node, a deletion none. */
static void
handlers_queue_nodes(void **state)
{
	struct env *e = *state;
	char *keys;

	cache_node(e, "b", 0, NULL);
	cache_node(e, "a", 0, "[\"10.0.0.0/30\"]");
	started(e, &small);
	ctl_list_keys(e->w);
	keys = ctl_keys(e->w);
	assert_string_equal(keys, "a,b");
	free(keys);
	ctl_keys_clear(e->w);
	ctl_tell(e->w, INFORMER_ADDED, e->nodes, node_new("c", 0, NULL, 0), NULL);
	ctl_tell(e->w, INFORMER_UPDATED, e->nodes, node_new("a", 0, "[\"10.0.0.0/30\"]", 0),
	    NULL);
	delete_node(e, "b", 0, NULL);
	keys = ctl_keys(e->w);
	assert_string_equal(keys, "c,a");
	free(keys);
	/* The exact patch. */
	cache_node(e, "c", 0, NULL);
	ctl_sync(e->w, "c", NOW);
	{
		char *body = cJSON_PrintUnformatted(e->w->result.writes[0].body);

		assert_string_equal(body, "{\"spec\":{\"podCIDR\":\"10.0.0.4/30\","
		    "\"podCIDRs\":[\"10.0.0.4/30\"]}}");
		free(body);
	}
	assert_string_equal(e->w->result.writes[0].uid, "uid-c0");
	assert_string_equal(e->w->result.owner_uid, "uid-c0");
}

/* Round robin: a block given back is not handed out again until the search comes round
 * to it. */
static void
round_robin(void **state)
{
	struct env *e = *state;

	cache_node(e, "a", 0, NULL);
	cache_node(e, "b", 0, NULL);
	cache_node(e, "c", 0, NULL);
	cache_node(e, "d", 0, NULL);
	cache_node(e, "x", 0, NULL);
	started(e, &small);
	assert_described("a", sync_node(e, "a"), "10.0.0.0/30");
	assert_described("b", sync_node(e, "b"), "10.0.0.4/30");
	delete_node(e, "a", 0, "[\"10.0.0.0/30\"]");
	assert_described("c", sync_node(e, "c"), "10.0.0.8/30");
	assert_described("d", sync_node(e, "d"), "10.0.0.12/30");
	assert_described("x, come round", sync_node(e, "x"), "10.0.0.0/30");
	cache_node(e, "y", 0, NULL);
	assert_described("y, none left", sync_node(e, "y"), "");
	assert_true(cidr_not_available(e, "y"));
	assert_int_equal(e->w->result.failed, 1);
	/* Failing again changes nothing; a block given back is the one then. */
	assert_described("y again", sync_node(e, "y"), "");
	delete_node(e, "c", 0, NULL);
	assert_described("y, c's block", sync_node(e, "y"), "10.0.0.8/30");
}

/* After a restart, the search starts at the first free block, from what the cache
 * shows. */
static void
restart_starts_at_the_first_free_block(void **state)
{
	struct env *e = *state;

	cache_node(e, "a", 0, "[\"10.0.0.0/30\"]");
	cache_node(e, "b", 0, "[\"10.0.0.4/30\"]");
	cache_node(e, "c", 0, NULL);
	started(e, &small);
	assert_described("c", sync_node(e, "c"), "10.0.0.8/30");
	cache_node(e, "c", 0, "[\"10.0.0.8/30\"]");
	assert_described("c shown", sync_node(e, "c"), "");
	delete_node(e, "a", 0, "[\"10.0.0.0/30\"]");
	/* Without a restart the search goes on... */
	cache_node(e, "d", 0, NULL);
	assert_described("d", sync_node(e, "d"), "10.0.0.12/30");
	/* ...after one (d's patch lost with it), it starts again at the first free block. */
	restart(e);
	assert_described("d after the restart", sync_node(e, "d"), "10.0.0.0/30");
	cache_node(e, "e", 0, NULL);
	assert_described("e after the restart", sync_node(e, "e"), "10.0.0.12/30");
}

/* A sync before the cache shows the patch sends the same blocks again; once it shows
 * them they stay the node's. */
static void
resync_resends_the_same_blocks(void **state)
{
	struct env *e = *state;
	static const struct ipam_flags dual = { "10.0.0.0/28,fd00::/124", NULL, NULL, "30",
	    "126", 0, NULL };

	cache_node(e, "a", 0, NULL);
	cache_node(e, "b", 0, NULL);
	started(e, &dual);
	assert_described("a", sync_node(e, "a"), "10.0.0.0/30,fd00::/126");
	assert_described("a again", sync_node(e, "a"), "10.0.0.0/30,fd00::/126");
	assert_described("a a third time", sync_node(e, "a"), "10.0.0.0/30,fd00::/126");
	assert_described("b", sync_node(e, "b"), "10.0.0.4/30,fd00::4/126");
	cache_node(e, "a", 0, "[\"10.0.0.0/30\",\"fd00::/126\"]");
	ctl_tell(e->w, INFORMER_UPDATED, e->nodes,
	    node_new("a", 0, "[\"10.0.0.0/30\",\"fd00::/126\"]", 0), NULL);
	assert_described("a shown", sync_node(e, "a"), "");
	assert_int_equal(e->w->result.failed, 0);
	/* Its blocks are still taken, b's too. */
	cache_node(e, "c", 0, NULL);
	assert_described("c", sync_node(e, "c"), "10.0.0.8/30,fd00::8/126");
}

/* A node deleted gives its blocks back, whether the cache showed them or they were only
 * handed to it. */
static void
deleted_node_gives_its_blocks_back(void **state)
{
	struct env *e = *state;
	static const struct ipam_flags one = { "10.0.0.0/30", NULL, "30", NULL, NULL, 0, NULL };

	cache_node(e, "a", 0, NULL);
	cache_node(e, "b", 0, NULL);
	started(e, &one);
	assert_described("a", sync_node(e, "a"), "10.0.0.0/30");
	assert_described("b: none left", sync_node(e, "b"), "");
	/* a deleted before the cache showed its patch. */
	delete_node(e, "a", 0, NULL);
	assert_described("b: a's", sync_node(e, "b"), "10.0.0.0/30");
	cache_node(e, "b", 0, "[\"10.0.0.0/30\"]");
	assert_described("b shown", sync_node(e, "b"), "");
	cache_node(e, "c", 0, NULL);
	assert_described("c: none left", sync_node(e, "c"), "");
	/* b deleted showing its block. */
	delete_node(e, "b", 0, "[\"10.0.0.0/30\"]");
	assert_described("c: b's", sync_node(e, "c"), "10.0.0.0/30");
}

/* A node shown with other blocks than those handed to it gives the handed ones back and
 * holds those it shows. */
static void
other_blocks_shown_give_the_handed_ones_back(void **state)
{
	struct env *e = *state;

	cache_node(e, "a", 0, NULL);
	started(e, &small);
	assert_described("a", sync_node(e, "a"), "10.0.0.0/30");
	cache_node(e, "a", 0, "[\"10.0.0.8/30\"]");
	assert_described("a shown with .8", sync_node(e, "a"), "");
	assert_int_equal(e->w->result.failed, 0);
	cache_node(e, "b", 0, NULL);
	cache_node(e, "c", 0, NULL);
	cache_node(e, "d", 0, NULL);
	cache_node(e, "f", 0, NULL);
	assert_described("b", sync_node(e, "b"), "10.0.0.4/30");
	assert_described("c: .8 is a's", sync_node(e, "c"), "10.0.0.12/30");
	assert_described("d: .0 was given back", sync_node(e, "d"), "10.0.0.0/30");
	assert_described("f: none left", sync_node(e, "f"), "");
}

/* A node added or updated with blocks someone else gave it holds them from then on,
 * before its own sync. */
static void
blocks_seen_in_an_event_are_taken(void **state)
{
	struct env *e = *state;

	cache_node(e, "a", 0, NULL);
	started(e, &small);
	assert_described("a", sync_node(e, "a"), "10.0.0.0/30");
	cache_node(e, "z", 0, "[\"10.0.0.4/30\"]");
	ctl_tell(e->w, INFORMER_ADDED, e->nodes, node_new("z", 0, "[\"10.0.0.4/30\"]", 0),
	    NULL);
	cache_node(e, "b", 0, NULL);
	assert_described("b", sync_node(e, "b"), "10.0.0.8/30");
}

/* Dual stack, one family's set exhausted: the sync fails with CIDRNotAvailable and the
 * other family's block goes back. */
static void
dual_stack_exhaustion_gives_the_first_block_back(void **state)
{
	struct env *e = *state;
	static const struct ipam_flags dual = { "10.0.0.0/24,fd00::/127", NULL, NULL, "30",
	    "128", 0, NULL };

	cache_node(e, "a", 0, NULL);
	cache_node(e, "b", 0, NULL);
	cache_node(e, "c", 0, NULL);
	started(e, &dual);
	assert_described("a", sync_node(e, "a"), "10.0.0.0/30,fd00::/128");
	assert_described("b", sync_node(e, "b"), "10.0.0.4/30,fd00::1/128");
	assert_described("c", sync_node(e, "c"), "");
	assert_int_equal(e->w->result.failed, 1);
	assert_true(cidr_not_available(e, "c"));
	delete_node(e, "a", 0, NULL);
	/* The search went past .8 (handed out, then given back). */
	assert_described("c", sync_node(e, "c"), "10.0.0.12/30,fd00::/128");
}

/* The metrics: kube's node_ipam_controller_cidrset_* by cluster CIDR, each block counted
 * once as it is taken and once as it is given back. */
static double
metric(struct metrics_registry *registry, const char *name, const char *label)
{
	struct buf b;
	char *text, *want, *at;
	double v = -1;

	buf_init(&b);
	metrics_render(registry, &b);
	text = buf_detach(&b);
	want = xasprintf("\n%s{clusterCIDR=\"%s\"} ", name, label);
	at = strstr(text, want);
	if (at != NULL)
		v = strtod(at + strlen(want), NULL);
	free(want);
	free(text);
	return v;
}

static void
metrics_count_each_block_once(void **state)
{
	struct env *e = *state;
	struct metrics_registry *registry = e->registry = metrics_registry_new();
	static const char *const label = "10.0.0.0/28";
	double released;

	e->config.metrics = registry;
	cache_node(e, "a", 0, NULL);
	cache_node(e, "b", 0, "[\"10.0.0.8/30\"]");
	started(e, &small);
	assert_true(metric(registry, "node_ipam_controller_cirdset_max_cidrs", label) == 4);
	assert_described("a", sync_node(e, "a"), "10.0.0.0/30");
	assert_true(metric(registry, "node_ipam_controller_cidrset_cidrs_allocations_total",
	    label) == 2);
	assert_true(metric(registry, "node_ipam_controller_cidrset_usage_cidrs", label) ==
	    0.5);
	/* a's patch done, then a deleted before the cache showed it: one block back. */
	delete_node(e, "a", 0, "[\"10.0.0.0/30\"]");
	assert_true(metric(registry, "node_ipam_controller_cidrset_usage_cidrs", label) ==
	    0.25);
	released = metric(registry, "node_ipam_controller_cidrset_cidrs_releases_total", label);
	if (released != 1)
		fail_msg("releases_total %g after one block given back, want 1", released);
}

/* A node whose podCIDRs are not CIDRs fails its sync and leaves the set as it was. */
static void
garbage_pod_cidrs_fail_the_sync(void **state)
{
	struct env *e = *state;

	cache_node(e, "a", 0, "[\"garbage\"]");
	cache_node(e, "b", 0, "[42]");
	cache_node(e, "c", 0, NULL);
	started(e, &small);
	assert_described("a", sync_node(e, "a"), "");
	assert_int_equal(e->w->result.failed, 1);
	assert_described("b", sync_node(e, "b"), "");
	assert_int_equal(e->w->result.failed, 1);
	assert_described("c", sync_node(e, "c"), "10.0.0.0/30");
	ctl_sync(e->w, "gone", NOW);
	assert_int_equal(e->w->result.nwrites, 0);
	assert_int_equal(e->w->result.forget_expectations, 1);
}

/* The tests of plain[] before this one need no world; those from it on do. */
#define PLAIN_SETS 16

int
main(void)
{
	static const struct {
		const char *name;
		CMUnitTestFunction fn;
		int world;
	} plain[] = {
		{ "ipnet_parse and ipnet_format as Go's sloppy parser and printer",
		    ipnet_parse_and_format, 0 },
		{ "ipnet_parse refuses hostile texts", ipnet_parse_refuses_hostile_texts, 0 },
		{ "TestCIDRSetFullyAllocated, TestCIDRSetv6", cidrset_allocates_in_order, 0 },
		{ "TestCIDRSetv6: kube's words", cidrset_refuses_large_ipv6_sets_in_kubes_words,
		    0 },
		{ "TestIndexToCIDRBlock", cidrset_block_of_index, 0 },
		{ "TestCIDRSet_RandomishAllocation", cidrset_randomish_allocation, 0 },
		{ "TestCIDRSet_AllocationOccupied", cidrset_allocation_occupied, 0 },
		{ "TestDoubleOccupyRelease", cidrset_double_occupy_release, 0 },
		{ "TestGetBitforCIDR, TestOccupy", cidrset_occupy_takes_the_blocks, 0 },
		{ "TestGetBitforCIDR: kube's words", cidrset_occupy_outside_in_kubes_words, 0 },
		{ "Test_getMaxCIDRs", cidrset_max_blocks, 0 },
		{ "TestCidrSetMetrics (allocated)", cidrset_metrics_counts, 0 },
		{ "TestCidrSetMetricsHistogram (allocated)", cidrset_metrics_half_occupied, 0 },
		{ "TestCidrSetMetricsDual (allocated, max)", cidrset_metrics_dual, 0 },
		{ "the set's round robin, over several pages", cidrset_round_robin_and_pages, 0 },
		{ "nodeipam_config_parse: validateCIDRs, setNodeCIDRMaskSizes, service ranges",
		    config_parse_as_kube_checks_the_flags, 0 },
		{ "inert without --allocate-node-cidrs", inert_without_allocate_node_cidrs, 1 },
		{ "the handlers queue nodes", handlers_queue_nodes, 1 },
		{ "round robin", round_robin, 1 },
		{ "a restart starts at the first free block",
		    restart_starts_at_the_first_free_block, 1 },
		{ "a sync before the cache shows the patch resends the same blocks",
		    resync_resends_the_same_blocks, 1 },
		{ "a deleted node gives its blocks back", deleted_node_gives_its_blocks_back, 1 },
		{ "a node shown with other blocks gives the handed ones back",
		    other_blocks_shown_give_the_handed_ones_back, 1 },
		{ "blocks seen in an event are taken", blocks_seen_in_an_event_are_taken, 1 },
		{ "dual stack: one family exhausted gives the other's block back",
		    dual_stack_exhaustion_gives_the_first_block_back, 1 },
		{ "metrics count each block once", metrics_count_each_block_once, 1 },
		{ "podCIDRs that are not CIDRs fail the sync", garbage_pod_cidrs_fail_the_sync,
		    1 },
	};
	struct CMUnitTest tests[NELEM(plain) + NELEM(ra_cases) + NELEM(release_cases)];
	size_t n = 0;

	for (size_t i = 0; i < PLAIN_SETS; i++)
		tests[n++] = (struct CMUnitTest){ plain[i].name, plain[i].fn, NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(ra_cases); i++)
		tests[n++] = (struct CMUnitTest){ ra_cases[i].name, ra_case, env_setup,
		    env_teardown, (void *)&ra_cases[i] };
	for (size_t i = 0; i < NELEM(release_cases); i++)
		tests[n++] = (struct CMUnitTest){ release_cases[i].name, release_case, env_setup,
		    env_teardown, (void *)&release_cases[i] };
	for (size_t i = PLAIN_SETS; i < NELEM(plain); i++)
		tests[n++] = (struct CMUnitTest){ plain[i].name, plain[i].fn,
		    plain[i].world ? env_setup : NULL, plain[i].world ? env_teardown : NULL,
		    NULL };
	return _cmocka_run_group_tests("nodeipam", tests, n, NULL, NULL);
}
