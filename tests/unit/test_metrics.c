/*
 * test_metrics.c - the metrics registry and its Prometheus text exposition.
 *
 * Rendering is checked byte for byte: each case builds a registry and compares the whole
 * text with what client_golang would write for the same metrics (HELP and TYPE lines,
 * families sorted by name, series by label values, cumulative histogram buckets, numbers
 * as Go's FormatFloat 'g' -1 writes them). Label values include hostile ones that try to
 * break out of their quotes or lines.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics.h"
#include "util.h"

static const char *const no_labels[] = { NULL };

/* Returns the registry rendered, malloc'd. */
static char *
render(struct metrics_registry *registry)
{
	struct buf out;

	buf_init(&out);
	metrics_render(registry, &out);
	return buf_detach(&out);
}

/* Asserts that registry renders as expected. */
static void
assert_renders(struct metrics_registry *registry, const char *expected)
{
	char *text = render(registry);

	assert_string_equal(text, expected);
	free(text);
}

/* Registers spec, which must be valid. */
static struct metrics_family *
must_register(struct metrics_registry *registry, const struct metrics_spec *spec)
{
	char *error = NULL;
	struct metrics_family *family = metrics_family_register(registry, spec, &error);

	if (family == NULL)
		fail_msg("%s: %s", spec->name, error);
	return family;
}

static void
empty_registry_renders_nothing(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	static const struct metrics_spec spec = { METRICS_COUNTER, "unused_total",
	    "Never counted.", no_labels, NULL, 0 };

	assert_renders(registry, "");
	/* A family without series is left out, as client_golang leaves out an empty vec. */
	must_register(registry, &spec);
	assert_renders(registry, "");
	metrics_registry_free(registry);
}

static void
counter_without_labels_renders_help_type_and_value(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	static const struct metrics_spec spec = { METRICS_COUNTER, "requests_total",
	    "Requests handled.", NULL, NULL, 0 };
	struct metrics_series *series = metrics_series_get(must_register(registry, &spec), NULL);

	assert_renders(registry,
	    "# HELP requests_total Requests handled.\n"
	    "# TYPE requests_total counter\n"
	    "requests_total 0\n");
	metrics_counter_add(series, 3);
	metrics_counter_add(series, 0.5);
	assert_renders(registry,
	    "# HELP requests_total Requests handled.\n"
	    "# TYPE requests_total counter\n"
	    "requests_total 3.5\n");
	metrics_registry_free(registry);
}

static void
counter_ignores_negative_and_nan_increments(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	static const struct metrics_spec spec = { METRICS_COUNTER, "c_total", "C.", NULL,
	    NULL, 0 };
	struct metrics_series *series = metrics_series_get(must_register(registry, &spec), NULL);

	metrics_counter_add(series, 2);
	metrics_counter_add(series, -1);
	metrics_counter_add(series, NAN);
	assert_renders(registry, "# HELP c_total C.\n# TYPE c_total counter\nc_total 2\n");
	metrics_registry_free(registry);
}

/* As client_golang writes them: labels in name order, series sorted by their values taken
 * in that order, whatever order the family declared its labels in. */
static void
families_sort_by_name_and_series_by_label_values(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	static const char *const gauge_labels[] = { "name", "kind", NULL };
	static const struct metrics_spec gauge = { METRICS_GAUGE, "b_items",
	    "Items by name and kind.", gauge_labels, NULL, 0 };
	static const struct metrics_spec counter = { METRICS_COUNTER, "a_events_total",
	    "Events.", NULL, NULL, 0 };
	struct metrics_family *items = must_register(registry, &gauge);

	metrics_gauge_set(metrics_series_get(items, (const char *const[]){ "z", "1" }), 3);
	metrics_gauge_set(metrics_series_get(items, (const char *const[]){ "a", "2" }), -2);
	metrics_gauge_add(metrics_series_get(items, (const char *const[]){ "a", "1" }), 1);
	metrics_gauge_add(metrics_series_get(items, (const char *const[]){ "a", "1" }), 0.25);
	metrics_counter_add(metrics_series_get(must_register(registry, &counter), NULL), 7);
	assert_renders(registry,
	    "# HELP a_events_total Events.\n"
	    "# TYPE a_events_total counter\n"
	    "a_events_total 7\n"
	    "# HELP b_items Items by name and kind.\n"
	    "# TYPE b_items gauge\n"
	    "b_items{kind=\"1\",name=\"a\"} 1.25\n"
	    "b_items{kind=\"1\",name=\"z\"} 3\n"
	    "b_items{kind=\"2\",name=\"a\"} -2\n");
	metrics_registry_free(registry);
}

static void
same_labels_give_the_same_series(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	static const char *const labels[] = { "name", NULL };
	static const struct metrics_spec spec = { METRICS_GAUGE, "g", "G.", labels, NULL, 0 };
	struct metrics_family *family = must_register(registry, &spec);
	struct metrics_series *a = metrics_series_get(family, (const char *const[]){ "a" });
	char name[] = "a";

	assert_ptr_equal(metrics_series_get(family, (const char *const[]){ name }), a);
	assert_ptr_not_equal(metrics_series_get(family, (const char *const[]){ "b" }), a);
	assert_ptr_equal(must_register(registry, &spec), family);
	metrics_registry_free(registry);
}

static void
histogram_renders_cumulative_buckets_sum_and_count(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	static const double buckets[] = { 0.125, 1, 8 };
	static const char *const labels[] = { "name", NULL };
	static const struct metrics_spec spec = { METRICS_HISTOGRAM, "latency_seconds",
	    "Latency.", labels, buckets, 3 };
	static const struct metrics_spec bare = { METRICS_HISTOGRAM, "size_bytes", "Size.",
	    NULL, buckets, 1 };
	struct metrics_family *family = must_register(registry, &spec);
	struct metrics_series *q = metrics_series_get(family, (const char *const[]){ "q" });
	struct metrics_series *empty = metrics_series_get(family, (const char *const[]){ "e" });
	struct metrics_series *size = metrics_series_get(must_register(registry, &bare), NULL);

	(void)empty;
	/* A value equal to a bound is in that bucket (le: less than or equal). */
	metrics_histogram_observe(q, 0.0625);
	metrics_histogram_observe(q, 0.125);
	metrics_histogram_observe(q, 0.5);
	metrics_histogram_observe(q, 8);
	metrics_histogram_observe(q, 16);
	metrics_histogram_observe(size, 1000);
	assert_renders(registry,
	    "# HELP latency_seconds Latency.\n"
	    "# TYPE latency_seconds histogram\n"
	    "latency_seconds_bucket{name=\"e\",le=\"0.125\"} 0\n"
	    "latency_seconds_bucket{name=\"e\",le=\"1\"} 0\n"
	    "latency_seconds_bucket{name=\"e\",le=\"8\"} 0\n"
	    "latency_seconds_bucket{name=\"e\",le=\"+Inf\"} 0\n"
	    "latency_seconds_sum{name=\"e\"} 0\n"
	    "latency_seconds_count{name=\"e\"} 0\n"
	    "latency_seconds_bucket{name=\"q\",le=\"0.125\"} 2\n"
	    "latency_seconds_bucket{name=\"q\",le=\"1\"} 3\n"
	    "latency_seconds_bucket{name=\"q\",le=\"8\"} 4\n"
	    "latency_seconds_bucket{name=\"q\",le=\"+Inf\"} 5\n"
	    "latency_seconds_sum{name=\"q\"} 24.6875\n"
	    "latency_seconds_count{name=\"q\"} 5\n"
	    "# HELP size_bytes Size.\n"
	    "# TYPE size_bytes histogram\n"
	    "size_bytes_bucket{le=\"0.125\"} 0\n"
	    "size_bytes_bucket{le=\"+Inf\"} 1\n"
	    "size_bytes_sum 1000\n"
	    "size_bytes_count 1\n");
	metrics_registry_free(registry);
}

static void
hostile_label_values_are_escaped_and_stay_on_their_line(void **state)
{
	(void)state;
	static const struct {
		const char *value;
		const char *rendered;
	} cases[] = {
		{ "", "" },
		{ "plain/name", "plain/name" },
		{ "back\\slash", "back\\\\slash" },
		{ "say \"hi\"", "say \\\"hi\\\"" },
		{ "two\nlines", "two\\nlines" },
		{ "\\\"\n", "\\\\\\\"\\n" },
		{ "\\n", "\\\\n" },
		/* An attempt to close the label set and forge a sample. */
		{ "x\"} 1\nforged_total{a=\"", "x\\\"} 1\\nforged_total{a=\\\"" },
		{ "tab\there\r", "tab\there\r" },
		{ "n\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "n\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
		/* Bytes that are not UTF-8 become U+FFFD, one for each byte. */
		{ "\xff\xfe", "\xef\xbf\xbd\xef\xbf\xbd" },
		{ "cut \xe2\x82", "cut \xef\xbf\xbd\xef\xbf\xbd" },
		{ "overlong \xc0\xaf", "overlong \xef\xbf\xbd\xef\xbf\xbd" },
		{ "surrogate \xed\xa0\x80", "surrogate \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "too big \xf4\x90\x80\x80", "too big \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
	};
	static const char *const labels[] = { "v", NULL };
	static const struct metrics_spec spec = { METRICS_COUNTER, "m_total", "M.", labels,
	    NULL, 0 };

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct metrics_registry *registry = metrics_registry_new();
		struct metrics_family *family = must_register(registry, &spec);
		char *expected, *text;

		metrics_counter_add(metrics_series_get(family,
		    (const char *const[]){ cases[i].value }), 1);
		expected = xasprintf("# HELP m_total M.\n# TYPE m_total counter\n"
		    "m_total{v=\"%s\"} 1\n", cases[i].rendered);
		text = render(registry);
		if (strcmp(text, expected) != 0)
			fail_msg("case %zu: got\n%s\nwant\n%s", i, text, expected);
		free(text);
		free(expected);
		metrics_registry_free(registry);
	}
}

static void
help_text_escapes_backslash_and_newline_but_not_quotes(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	static const struct metrics_spec spec = { METRICS_GAUGE, "g",
	    "A \\ in \"quotes\"\nsecond line", NULL, NULL, 0 };

	metrics_series_get(must_register(registry, &spec), NULL);
	assert_renders(registry,
	    "# HELP g A \\\\ in \"quotes\"\\nsecond line\n"
	    "# TYPE g gauge\n"
	    "g 0\n");
	metrics_registry_free(registry);
}

static void
numbers_are_written_as_go_formats_them_and_round_trip(void **state)
{
	(void)state;
	static const struct {
		double value;
		const char *text;
	} cases[] = {
		{ 0, "0" },
		{ -0.0, "0" },
		{ 1, "1" },
		{ -1, "-1" },
		{ 0.1, "0.1" },
		{ 1.5, "1.5" },
		{ 100, "100" },
		{ 123456, "123456" },
		{ 123456.7, "123456.7" },
		{ 1e6, "1e+06" },
		{ 1234567, "1.234567e+06" },
		{ 0.0001, "0.0001" },
		{ 0.00001, "1e-05" },
		{ 1e-8, "1e-08" },
		{ -2.5e-7, "-2.5e-07" },
		{ 0.1 + 0.2, "0.30000000000000004" },
		{ 1.0 / 3, "0.3333333333333333" },
		{ 2.0 / 3, "0.6666666666666666" },
		{ 1e21, "1e+21" },
		{ 9007199254740993.0, "9.007199254740992e+15" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 5e-324, "5e-324" },
		{ INFINITY, "+Inf" },
		{ -INFINITY, "-Inf" },
		{ NAN, "NaN" },
	};
	static const struct metrics_spec spec = { METRICS_GAUGE, "g", "G.", NULL, NULL, 0 };

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct metrics_registry *registry = metrics_registry_new();
		char *expected, *text;

		metrics_gauge_set(metrics_series_get(must_register(registry, &spec), NULL),
		    cases[i].value);
		expected = xasprintf("# HELP g G.\n# TYPE g gauge\ng %s\n", cases[i].text);
		text = render(registry);
		if (strcmp(text, expected) != 0)
			fail_msg("case %zu: got\n%s\nwant\n%s", i, text, expected);
		if (!isnan(cases[i].value) && strtod(cases[i].text, NULL) != cases[i].value)
			fail_msg("case %zu: %s does not read back", i, cases[i].text);
		free(text);
		free(expected);
		metrics_registry_free(registry);
	}
}

/* A gauge callback that counts its calls. */
static double
count_calls(void *arg)
{
	int *calls = arg;

	return ++*calls;
}

static void
gauge_callback_is_computed_at_each_render(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	static const struct metrics_spec spec = { METRICS_GAUGE, "g", "G.", NULL, NULL, 0 };
	struct metrics_series *series = metrics_series_get(must_register(registry, &spec), NULL);
	int calls = 0;

	metrics_gauge_set_callback(series, count_calls, &calls);
	assert_int_equal(calls, 0);
	assert_renders(registry, "# HELP g G.\n# TYPE g gauge\ng 1\n");
	assert_renders(registry, "# HELP g G.\n# TYPE g gauge\ng 2\n");
	/* Without the callback, the gauge keeps the value the callback gave when it was
	 * removed, and can be set again. */
	metrics_gauge_set_callback(series, NULL, NULL);
	assert_int_equal(calls, 3);
	assert_renders(registry, "# HELP g G.\n# TYPE g gauge\ng 3\n");
	metrics_gauge_set(series, 5);
	assert_renders(registry, "# HELP g G.\n# TYPE g gauge\ng 5\n");
	assert_int_equal(calls, 3);
	metrics_registry_free(registry);
}

static void
counter_callback_reads_a_count_kept_elsewhere(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	static const char *const labels[] = { "resource", NULL };
	static const char *const pods[] = { "pods", NULL };
	static const struct metrics_spec spec = { METRICS_COUNTER, "c_total", "C.", labels,
	    NULL, 0 };
	struct metrics_series *series = metrics_series_get(must_register(registry, &spec), pods);
	int calls = 0;

	metrics_counter_set_callback(series, count_calls, &calls);
	assert_renders(registry, "# HELP c_total C.\n# TYPE c_total counter\n"
	    "c_total{resource=\"pods\"} 1\n");
	/* Removed before the count goes away: the counter keeps its final value. */
	metrics_counter_set_callback(series, NULL, NULL);
	calls = 100;
	assert_renders(registry, "# HELP c_total C.\n# TYPE c_total counter\n"
	    "c_total{resource=\"pods\"} 2\n");
	metrics_registry_free(registry);
}

static void
updates_of_a_null_series_do_nothing(void **state)
{
	(void)state;
	metrics_counter_add(NULL, 1);
	metrics_gauge_set(NULL, 1);
	metrics_gauge_add(NULL, 1);
	metrics_gauge_set_callback(NULL, count_calls, NULL);
	metrics_histogram_observe(NULL, 1);
	metrics_registry_free(NULL);
}

static void
invalid_or_conflicting_families_are_refused(void **state)
{
	(void)state;
	static const double increasing[] = { 1, 2 };
	static const double flat[] = { 1, 1 };
	static const double other[] = { 1, 3 };
	static const double nan[] = { NAN };
	static const double inf[] = { 1, INFINITY };
	static const char *const name[] = { "name", NULL };
	static const char *const kind[] = { "kind", NULL };
	static const char *const le[] = { "le", NULL };
	static const char *const reserved[] = { "__name", NULL };
	static const char *const digit[] = { "1a", NULL };
	static const char *const colon[] = { "a:b", NULL };
	static const char *const twice[] = { "a", "a", NULL };
	static const struct metrics_spec registered = { METRICS_HISTOGRAM, "h", "H.", name,
	    increasing, 2 };
	static const struct {
		struct metrics_spec spec;
		const char *message;
	} cases[] = {
		{ { METRICS_COUNTER, "", "x", NULL, NULL, 0 }, "invalid metric name" },
		{ { METRICS_COUNTER, NULL, "x", NULL, NULL, 0 }, "invalid metric name" },
		{ { METRICS_COUNTER, "1abc", "x", NULL, NULL, 0 }, "invalid metric name" },
		{ { METRICS_COUNTER, "a-b", "x", NULL, NULL, 0 }, "invalid metric name" },
		{ { METRICS_COUNTER, "a b", "x", NULL, NULL, 0 }, "invalid metric name" },
		{ { METRICS_COUNTER, "c", "x", reserved, NULL, 0 }, "invalid label name" },
		{ { METRICS_COUNTER, "c", "x", digit, NULL, 0 }, "invalid label name" },
		{ { METRICS_COUNTER, "c", "x", colon, NULL, 0 }, "invalid label name" },
		{ { METRICS_COUNTER, "c", "x", twice, NULL, 0 }, "appears twice" },
		{ { METRICS_HISTOGRAM, "c", "x", le, increasing, 2 }, "\"le\"" },
		{ { METRICS_HISTOGRAM, "c", "x", NULL, flat, 2 }, "buckets must increase" },
		{ { METRICS_HISTOGRAM, "c", "x", NULL, nan, 1 }, "not finite" },
		{ { METRICS_HISTOGRAM, "c", "x", NULL, inf, 2 }, "not finite" },
		{ { METRICS_COUNTER, "h", "H.", name, NULL, 0 }, "already registered" },
		{ { METRICS_HISTOGRAM, "h", "Other.", name, increasing, 2 }, "already registered" },
		{ { METRICS_HISTOGRAM, "h", "H.", kind, increasing, 2 }, "already registered" },
		{ { METRICS_HISTOGRAM, "h", "H.", NULL, increasing, 2 }, "already registered" },
		{ { METRICS_HISTOGRAM, "h", "H.", name, increasing, 1 }, "already registered" },
		{ { METRICS_HISTOGRAM, "h", "H.", name, other, 2 }, "already registered" },
	};
	struct metrics_registry *registry = metrics_registry_new();
	static const struct metrics_spec colons = { METRICS_COUNTER, "ns:sub_total", "x",
	    NULL, NULL, 0 };

	must_register(registry, &registered);
	must_register(registry, &colons);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *error = NULL;

		if (metrics_family_register(registry, &cases[i].spec, &error) != NULL)
			fail_msg("case %zu: registered", i);
		if (error == NULL || strstr(error, cases[i].message) == NULL)
			fail_msg("case %zu: \"%s\" does not contain \"%s\"", i,
			    error != NULL ? error : "(null)", cases[i].message);
		free(error);
	}
	metrics_registry_free(registry);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_registry_renders_nothing),
		cmocka_unit_test(counter_without_labels_renders_help_type_and_value),
		cmocka_unit_test(counter_ignores_negative_and_nan_increments),
		cmocka_unit_test(families_sort_by_name_and_series_by_label_values),
		cmocka_unit_test(same_labels_give_the_same_series),
		cmocka_unit_test(histogram_renders_cumulative_buckets_sum_and_count),
		cmocka_unit_test(hostile_label_values_are_escaped_and_stay_on_their_line),
		cmocka_unit_test(help_text_escapes_backslash_and_newline_but_not_quotes),
		cmocka_unit_test(numbers_are_written_as_go_formats_them_and_round_trip),
		cmocka_unit_test(gauge_callback_is_computed_at_each_render),
		cmocka_unit_test(counter_callback_reads_a_count_kept_elsewhere),
		cmocka_unit_test(updates_of_a_null_series_do_nothing),
		cmocka_unit_test(invalid_or_conflicting_families_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
