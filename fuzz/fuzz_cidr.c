/*
 * fuzz_cidr.c - node IPAM's CIDR parser and block sets from arbitrary bytes.
 *
 * The input is lines: the first is a --cluster-cidr value, the second a
 * --service-cluster-ip-range value, the rest CIDRs to take and give back. For every
 * configuration nodeipam_config_parse accepts (with at most 2^16 blocks per set, which keeps
 * a run short), the sets are made, every line is taken then given back, and blocks are
 * handed out until the set is full. Invariants: a CIDR that parses prints as text that
 * parses to the same network; the count of taken blocks never exceeds the set's size and
 * matches the bitmap; a block handed out lies in the cluster CIDR and was free; a full set
 * hands out nothing; a rejected input comes with an error message. Any broken one aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/nodeipam.h"
#include "util.h"

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_cidr: %s\n", what);
	abort();
}

/* The round trip of one CIDR through its text. */
static void
round_trip(const char *text)
{
	struct ipnet a, b;
	char out[64];

	if (ipnet_parse(text, &a) != 0)
		return;
	ipnet_format(&a, out, sizeof out);
	if (ipnet_parse(out, &b) != 0 || a.v6 != b.v6 || a.bits != b.bits || a.addr != b.addr)
		fail("a parsed CIDR does not parse back from its text");
}

static uint64_t
count_used(const struct cidrset *s)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < s->max; i++)
		n += (uint64_t)cidrset_used(s, i);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size), *save = NULL, *line;
	char *lines[16];
	int n = 0;
	struct nodeipam_config config;
	struct cidrset sets[2];
	char *error = NULL;

	for (line = strtok_r(text, "\n", &save); line != NULL && n < 16;
	    line = strtok_r(NULL, "\n", &save))
		lines[n++] = line;
	for (int i = 0; i < n; i++)
		round_trip(lines[i]);
	if (n < 2) {
		free(text);
		return 0;
	}
	if (nodeipam_config_parse(lines[0], lines[1], 0, 0, 0, &config, &error) != 0) {
		if (error == NULL)
			fail("a rejected configuration without a message");
		free(error);
		free(text);
		return 0;
	}
	for (int i = 0; i < config.ncluster; i++) {
		if (config.node_bits[i] - config.cluster[i].bits > 16)
			goto out;
	}
	for (int i = 0; i < config.ncluster; i++) {
		struct cidrset *s = &sets[i];
		struct ipnet got;

		if (cidrset_init(s, &config.cluster[i], config.node_bits[i], &error) != 0) {
			if (error == NULL)
				fail("a set refused without a message");
			free(error);
			error = NULL;
			for (int j = 0; j < i; j++)
				cidrset_free(&sets[j]);
			goto out;
		}
		for (int j = 0; j < config.nservice; j++)
			cidrset_occupy(s, &config.service[j], NULL);
		for (int j = 2; j < n; j++) {
			struct ipnet net;

			if (ipnet_parse(lines[j], &net) != 0)
				continue;
			if (cidrset_occupy(s, &net, &error) != 0) {
				if (error == NULL)
					fail("an occupy refused without a message");
				free(error);
				error = NULL;
			}
			if (s->allocated > s->max || s->allocated != count_used(s))
				fail("the count of taken blocks is off after an occupy");
			if (j % 2 == 1)
				cidrset_release(s, &net, NULL);
		}
		while (cidrset_allocate_next(s, &got) == 0) {
			if (got.v6 != s->cluster.v6 || got.bits != s->node_bits ||
			    got.bits < s->cluster.bits)
				fail("a block of the wrong family or size");
			if (s->allocated > s->max)
				fail("more blocks taken than the set holds");
		}
		if (s->allocated != s->max || count_used(s) != s->max)
			fail("a set that hands out nothing more is not full");
	}
	for (int i = 0; i < config.ncluster; i++)
		cidrset_free(&sets[i]);
out:
	free(text);
	return 0;
}
