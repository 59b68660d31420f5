/*
 * fuzz_cron_schedule.c - the CronJob controller's cron schedule parser from arbitrary
 * bytes, and robfig's Next over what it accepts.
 *
 * Invariants: a schedule that parses names only values within its fields' bounds (bit 63
 * aside, the star mark); Next from a fixed time is later than it, or 0, and a time it
 * gives is one the schedule names again (Next from one second before gives it back; not
 * for @every, whose times count from any start). Any
 * broken one aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/cronjob.h"
#include "util.h"

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_cron_schedule: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cron_schedule s;
	char *text, *error = NULL;
	const uint64_t star = CRON_STAR;
	int64_t t, again;

	if (size > 256)
		return 0;
	text = xstrndup((const char *)data, size);
	if (cron_parse(text, &s, &error) != 0) {
		if (error == NULL)
			fail("refused without an error");
		free(error);
		free(text);
		return 0;
	}
	if ((s.minute & ~star) >> 60 || (s.hour & ~star) >> 24 || (s.dom & ~star) >> 32 ||
	    (s.dom & 1) || (s.month & ~star) >> 13 || (s.month & 1) || (s.dow & ~star) >> 7)
		fail("a value out of its field's bounds");
	t = cron_next(&s, s.zone, 1700000000.5);
	if (t != 0 && t <= 1700000000)
		fail("Next is not later");
	if (t != 0 && s.every == 0) {
		again = cron_next(&s, s.zone, (double)(t - 1));
		if (again != t)
			fail("Next from a second before does not give the time back");
	}
	free(text);
	return 0;
}
