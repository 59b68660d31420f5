/*
 * fuzz_quantity.c - the quantity reader and printer (quantity.c) from arbitrary bytes.
 *
 * The input is one text. Invariants: what is read prints as text of QUANTITY_TEXT_MAX at
 * most that reads back to the same value, and that text printed again is a fixed point (not
 * the first: a binary "62.5Ki" prints "64000", which reads as decimal and prints "64k", as
 * in kube); a sum with itself is refused or prints and reads back, when within
 * 2^63-1 units (kube caps a binary quantity it reads there, not a sum). Any broken one
 * aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantity.h"

static void
fail(const char *what, const char *text)
{
	fprintf(stderr, "fuzz_quantity: %s: %s\n", what, text);
	abort();
}

static void
round_trip(const struct quantity *q, const char *in)
{
	char text[QUANTITY_TEXT_MAX], again_text[QUANTITY_TEXT_MAX];
	struct quantity again;

	quantity_format(q, text, sizeof text);
	if (strlen(text) + 1 >= sizeof text)
		fail("printed text too long", in);
	if (quantity_parse(text, &again) != 0)
		fail("printed text does not read back", text);
	if (quantity_cmp(q, &again) != 0)
		fail("printed text reads back as another value", text);
	quantity_format(&again, again_text, sizeof again_text);
	if (quantity_parse(again_text, &again) != 0)
		fail("printed text does not read back", again_text);
	quantity_format(&again, text, sizeof text);
	if (strcmp(text, again_text) != 0)
		fail("the canonical form is not a fixed point", again_text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct quantity q, sum;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (quantity_parse(text, &q) == 0) {
		round_trip(&q, text);
		sum = q;
		if (quantity_add(&sum, &q) == 0 &&
		    sum.nanos <= (__int128)INT64_MAX * 1000000000 &&
		    sum.nanos >= -(__int128)INT64_MAX * 1000000000)
			round_trip(&sum, text);
	}
	free(text);
	return 0;
}
