/*
 * fuzz_job_indexes.c - the Job controller's readers of index text from arbitrary bytes:
 * the interval strings of status.completedIndexes and successPolicy's succeededIndexes
 * ("0,2-4,7"), and the completion-index annotation.
 *
 * The first byte of the input sets the completions (1..256), the rest is the text.
 * Invariants: parsing marks only indexes below completions; the text format makes of a
 * set parses back to the same set and formats to the same text; the index of the text, if
 * any, is not negative and prints back as a number that reads the same. Any broken one
 * aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/job.h"
#include "util.h"

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_job_indexes: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char done[257] = { 0 }, again[257] = { 0 }, *text, *formatted, *reformatted, number[16];
	int completions, ix;

	if (size < 1)
		return 0;
	completions = data[0] + 1;
	text = xstrndup((const char *)data + 1, size - 1);
	job_indexes_parse(text, completions, done);
	if (done[completions] != 0)
		fail("an index past completions was marked");
	formatted = job_indexes_format(done, completions);
	job_indexes_parse(formatted, completions, again);
	if (memcmp(done, again, sizeof done) != 0)
		fail("the formatted set does not parse back to the same set");
	reformatted = job_indexes_format(again, completions);
	if (strcmp(formatted, reformatted) != 0)
		fail("formatting is not stable");
	ix = job_completion_index(text);
	if (ix < -1)
		fail("a negative index");
	if (ix >= 0) {
		snprintf(number, sizeof number, "%d", ix);
		if (job_completion_index(number) != ix)
			fail("an index does not read back from its number");
	}
	free(reformatted);
	free(formatted);
	free(text);
	return 0;
}
