/*
 * fuzz_featuregate.c - the --feature-gates reader (featuregate.c) from arbitrary bytes.
 *
 * The input is one text (a NUL in it ends it). Invariants: a check accepts, with the
 * unknown gates it names or none, or refuses with a message and names none; the known
 * gate's answer is 0 or 1; an accepted text's last entry for the gate decides it (the
 * text with ",MaxUnavailableStatefulSet=true" appended turns it on). Any broken one
 * aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "featuregate.h"
#include "util.h"

static void
fail(const char *what, const char *text)
{
	fprintf(stderr, "fuzz_featuregate: %s: %s\n", what, text);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size), *unknown = NULL, *error = NULL;
	int rc = featuregate_check(text, &unknown, &error), on;

	if (rc == 0 && error != NULL)
		fail("accepted with an error", text);
	if (rc != 0 && (error == NULL || unknown != NULL))
		fail("refused without a message, or with unknown gates", text);
	if (rc == 0) {
		char *more = xasprintf("%s,MaxUnavailableStatefulSet=true", text);

		on = featuregate_enabled(text, "MaxUnavailableStatefulSet");
		if (on != 0 && on != 1)
			fail("an answer neither 0 nor 1", text);
		if (featuregate_check(more, NULL, NULL) == 0 &&
		    featuregate_enabled(more, "MaxUnavailableStatefulSet") != 1)
			fail("the last entry does not decide", more);
		free(more);
	}
	free(unknown);
	free(error);
	free(text);
	return 0;
}
