/*
 * test_timeutil.c - Go durations, as kube-controller-manager's duration flags take them.
 *
 * The cases are Go's time.ParseDuration tests (parseDurationTests and
 * parseDurationErrorTests) as data.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "timeutil.h"

struct duration_case {
	const char *text;
	double seconds;
};

static void
go_durations_are_parsed(void **state)
{
	static const struct duration_case cases[] = {
		{ "0", 0 }, { "5s", 5 }, { "30s", 30 }, { "1478s", 1478 },
		{ "-5s", -5 }, { "+5s", 5 }, { "-0", 0 }, { "+0", 0 },
		{ "5.0s", 5 }, { "5.6s", 5.6 }, { "5.s", 5 }, { ".5s", 0.5 },
		{ "1.0s", 1 }, { "1.00s", 1 }, { "1.004s", 1.004 }, { "1.0040s", 1.004 },
		{ "100.00100s", 100.001 },
		{ "10ns", 10e-9 }, { "11us", 11e-6 }, { "12\xc2\xb5s", 12e-6 },
		{ "12\xce\xbcs", 12e-6 }, { "13ms", 0.013 }, { "14s", 14 }, { "15m", 900 },
		{ "16h", 57600 },
		{ "3h30m", 12600 }, { "10.5s4m", 250.5 }, { "-2m3.4s", -123.4 },
		{ "1h2m3s4ms5us6ns", 3723.004005006 }, { "39h9m14.425s", 140954.425 },
		{ "52763797000ns", 52.763797 }, { "0.3333333333333333333h", 1200 },
		{ "1m30s", 90 }, { "500ms", 0.5 }, { "15s", 15 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double got = -1;

		if (time_parse_duration(cases[i].text, &got) != 0)
			fail_msg("\"%s\" refused", cases[i].text);
		if (fabs(got - cases[i].seconds) > 1e-9 * fmax(1, fabs(cases[i].seconds)))
			fail_msg("\"%s\": %.12g, want %.12g", cases[i].text, got,
			    cases[i].seconds);
	}
}

static void
bad_durations_are_refused(void **state)
{
	static const char *const bad[] = {
		"", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "\x85\x85", "\xff" "ff",
		"hello \xff" "ff world", "9223372036854775810ns", "10 s", "1s ", " 1s", "1S",
		"1sec", "1.2.3s", "--1s",
	};

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		double got;

		if (time_parse_duration(bad[i], &got) == 0)
			fail_msg("\"%s\" accepted as %g", bad[i], got);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(go_durations_are_parsed),
		cmocka_unit_test(bad_durations_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
