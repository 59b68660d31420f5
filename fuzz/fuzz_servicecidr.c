/*
 * fuzz_servicecidr.c - the Service CIDR controller's prefix and address parsers and the
 * range arithmetic over them, from arbitrary bytes.
 *
 * The input is lines, each read as a prefix and as an address. Invariants: a prefix that
 * parses has a family of 4 or 6 and at most that family's bits; an address that parses is
 * a prefix of all its bits; overlap is symmetric and every prefix overlaps itself; an
 * address a prefix holds overlaps it, and no prefix of the other family holds it; a
 * single-address prefix holds nothing. Any broken one aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/servicecidr.h"
#include "util.h"

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_servicecidr: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size), *save = NULL, *line;
	struct prefix prefixes[16], addrs[16];
	int np = 0, na = 0;

	for (line = strtok_r(text, "\n", &save); line != NULL && (np < 16 || na < 16);
	    line = strtok_r(NULL, "\n", &save)) {
		struct prefix p;

		if (np < 16 && servicecidr_parse_prefix(line, &p) == 0) {
			if ((p.family != 4 && p.family != 6) || p.bits < 0 ||
			    p.bits > (p.family == 4 ? 32 : 128))
				fail("a prefix out of its family");
			prefixes[np++] = p;
		}
		if (na < 16 && servicecidr_parse_addr(line, &p) == 0) {
			if (p.bits != (p.family == 4 ? 32 : 128))
				fail("an address that is not all its bits");
			addrs[na++] = p;
		}
	}
	for (int i = 0; i < np; i++) {
		if (!servicecidr_overlaps(&prefixes[i], &prefixes[i]))
			fail("a prefix that does not overlap itself");
		for (int j = 0; j < np; j++) {
			if (servicecidr_overlaps(&prefixes[i], &prefixes[j]) !=
			    servicecidr_overlaps(&prefixes[j], &prefixes[i]))
				fail("overlap that is not symmetric");
		}
		for (int j = 0; j < na; j++) {
			if (!servicecidr_holds_address(&prefixes[i], &addrs[j]))
				continue;
			if (!servicecidr_overlaps(&prefixes[i], &addrs[j]))
				fail("an address held but not overlapping");
			if (prefixes[i].family != addrs[j].family)
				fail("an address held by a prefix of the other family");
			if (prefixes[i].bits == (prefixes[i].family == 4 ? 32 : 128))
				fail("a single-address prefix holds an address");
		}
	}
	free(text);
	return 0;
}
