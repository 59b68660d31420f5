/*
 * test_jsonstream.c - splitting a chunked byte stream into whole JSON values.
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
#include <cjson/cJSON.h>

#include "jsonstream.h"
#include "util.h"

#define MAX_VALUES 32

/* What the callback saw. */
struct seen {
	int count;
	char *values[MAX_VALUES];
	unsigned long lines[MAX_VALUES];
	int stop_after;		/* stop after this many values; 0 never */
	int errors;		/* errors met by feed_chunked */
	char *first_error;	/* the first of them */
};

static int
collect(const char *text, size_t len, unsigned long line, void *arg)
{
	struct seen *s = arg;

	assert_true(s->count < MAX_VALUES);
	s->values[s->count] = xstrndup(text, len);
	s->lines[s->count] = line;
	s->count++;
	return s->stop_after != 0 && s->count >= s->stop_after;
}

static void
seen_free(struct seen *s)
{
	for (int i = 0; i < s->count; i++)
		free(s->values[i]);
	free(s->first_error);
	memset(s, 0, sizeof *s);
}

/* Feeds input in chunks of `chunk` bytes, reporting and skipping bad lines as replay does;
 * returns finish's status. */
static int
feed_chunked(struct json_stream *js, const char *input, size_t len, size_t chunk,
    struct seen *s, char **finish_error)
{
	for (size_t at = 0; at < len; at += chunk) {
		size_t n = len - at < chunk ? len - at : chunk;
		char *error = NULL;

		if (json_stream_feed(js, input + at, n, collect, s, &error) == 0)
			continue;
		do {
			assert_non_null(error);
			if (s->errors++ == 0)
				s->first_error = error;
			else
				free(error);
			error = NULL;
			json_stream_skip_line(js);
		} while (json_stream_feed(js, NULL, 0, collect, s, &error) == -1);
	}
	return json_stream_finish(js, finish_error);
}

/* Asserts that haystack contains needle, showing both when it does not. */
static void
assert_contains(const char *haystack, const char *needle)
{
	if (haystack == NULL || strstr(haystack, needle) == NULL)
		fail_msg("\"%s\" does not contain \"%s\"", haystack ? haystack : "(null)", needle);
}

static const char pod[] =
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
    "\"metadata\":{\"name\":\"web-1\",\"annotations\":{\"note\":\"a } and a { and \\\" and \\\\\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"args\":[\"[\",\"]\",\"\\u007b\"]}]}}}";

static void
one_object_split_at_every_byte_yields_the_same_value(void **state)
{
	(void)state;
	size_t len = strlen(pod);

	for (size_t split = 0; split <= len; split++) {
		struct json_stream *js = json_stream_new(1 << 20);
		struct seen s = { 0 };
		char *error = NULL;

		assert_int_equal(json_stream_feed(js, pod, split, collect, &s, &error), 0);
		assert_int_equal(json_stream_feed(js, pod + split, len - split, collect, &s,
		    &error), 0);
		assert_int_equal(json_stream_finish(js, &error), 0);
		assert_null(error);
		assert_int_equal(s.count, 1);
		assert_string_equal(s.values[0], pod);
		assert_int_equal(s.lines[0], 1);
		seen_free(&s);
		json_stream_free(js);
	}
}

static void
one_object_fed_one_byte_at_a_time_yields_the_same_value(void **state)
{
	(void)state;
	struct json_stream *js = json_stream_new(1 << 20);
	struct seen s = { 0 };
	char *error = NULL;

	for (size_t i = 0; pod[i] != '\0'; i++) {
		assert_int_equal(json_stream_feed(js, pod + i, 1, collect, &s, &error), 0);
		assert_int_equal(s.count, pod[i + 1] == '\0' ? 1 : 0);
	}
	assert_int_equal(json_stream_finish(js, &error), 0);
	assert_string_equal(s.values[0], pod);
	assert_int_equal(json_stream_held_bytes(js), 0);
	seen_free(&s);
	json_stream_free(js);
}

static void
many_values_in_one_chunk_are_each_reported(void **state)
{
	(void)state;
	const char input[] = "{\"a\":1}{\"b\":2}\n[1,[2]]\r\n \t{}\r\n[]";
	const char *want[] = { "{\"a\":1}", "{\"b\":2}", "[1,[2]]", "{}", "[]" };
	const unsigned long lines[] = { 1, 1, 2, 3, 4 };
	struct json_stream *js = json_stream_new(1024);
	struct seen s = { 0 };
	char *error = NULL;

	assert_int_equal(json_stream_feed(js, input, strlen(input), collect, &s, &error), 0);
	assert_int_equal(json_stream_finish(js, &error), 0);
	assert_int_equal(s.count, 5);
	for (int i = 0; i < 5; i++) {
		assert_string_equal(s.values[i], want[i]);
		assert_int_equal(s.lines[i], lines[i]);
	}
	seen_free(&s);
	json_stream_free(js);
}

static void
brackets_quotes_backslashes_and_unicode_escapes_in_strings_do_not_end_a_value(void **state)
{
	(void)state;
	/* Each case is one value; every split point must find exactly it. */
	const char *cases[] = {
		"{\"k\":\"}\"}",
		"{\"k\":\"{\"}",
		"{\"k\":\"\\\"}\"}",
		"{\"k\":\"\\\\\"}",
		"{\"k\":\"\\\\\\\"]}\"}",
		"[\"\\u007d\\u005d\\u0022\",\"\\\"\"]",
		"{\"}{][\":\"][}{\",\"\\\\\":[\"\\\\\\\\\"]}",
		"{\"k\":\"\\ud83d\\ude00 \\/ \\b\\f\\n\\r\\t\"}",
	};

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		size_t len = strlen(cases[c]);
		cJSON *parsed = cJSON_Parse(cases[c]);

		assert_non_null(parsed);	/* the cases are valid JSON */
		cJSON_Delete(parsed);
		for (size_t split = 0; split <= len; split++) {
			struct json_stream *js = json_stream_new(1024);
			struct seen s = { 0 };
			char *error = NULL;

			assert_int_equal(json_stream_feed(js, cases[c], split, collect, &s,
			    &error), 0);
			assert_int_equal(json_stream_feed(js, cases[c] + split, len - split,
			    collect, &s, &error), 0);
			assert_int_equal(json_stream_feed(js, "\n{}", 3, collect, &s, &error), 0);
			assert_int_equal(json_stream_finish(js, &error), 0);
			assert_int_equal(s.count, 2);
			assert_string_equal(s.values[0], cases[c]);
			assert_string_equal(s.values[1], "{}");
			seen_free(&s);
			json_stream_free(js);
		}
	}
}

/* Three objects as `kubectl get pods --watch -o json --output-watch-events` prints them. */
static const char pretty[] =
    "{\n"
    "    \"type\": \"ADDED\",\n"
    "    \"object\": {\n"
    "        \"kind\": \"Pod\",\n"
    "        \"metadata\": {\n"
    "            \"name\": \"a\"\n"
    "        }\n"
    "    }\n"
    "}\n"
    "{\n"
    "    \"type\": \"MODIFIED\",\n"
    "    \"object\": {\n"
    "        \"kind\": \"Pod\",\n"
    "        \"metadata\": {\n"
    "            \"name\": \"a\",\n"
    "            \"labels\": {\"x\": \"{\\n}\"}\n"
    "        }\n"
    "    }\n"
    "}\r\n"
    "{\n"
    "    \"type\": \"DELETED\",\n"
    "    \"object\": {\n"
    "        \"kind\": \"Pod\",\n"
    "        \"metadata\": {\n"
    "            \"name\": \"a\"\n"
    "        }\n"
    "    }\n"
    "}\n";

static void
pretty_printed_objects_report_the_line_each_starts_on(void **state)
{
	(void)state;
	size_t len = strlen(pretty);

	for (size_t chunk = 1; chunk <= len; chunk++) {
		struct json_stream *js = json_stream_new(4096);
		struct seen s = { 0 };
		char *error = NULL;

		assert_int_equal(feed_chunked(js, pretty, len, chunk, &s, &error), 0);
		assert_int_equal(s.errors, 0);
		assert_int_equal(s.count, 3);
		assert_int_equal(s.lines[0], 1);
		assert_int_equal(s.lines[1], 10);
		assert_int_equal(s.lines[2], 20);
		for (int i = 0; i < 3; i++) {
			cJSON *v = cJSON_Parse(s.values[i]);
			assert_non_null(v);
			cJSON_Delete(v);
		}
		assert_ptr_equal(strstr(pretty, s.values[2]), pretty + len - strlen(s.values[2]) - 1);
		seen_free(&s);
		json_stream_free(js);
	}
}

static void
truncated_stream_fails_at_finish_naming_the_line_the_value_starts_on(void **state)
{
	(void)state;
	const char input[] = "{\"a\":1}\n\n{\"b\":\n  [1,\n";
	struct json_stream *js = json_stream_new(1024);
	struct seen s = { 0 };
	char *error = NULL;

	assert_int_equal(json_stream_feed(js, input, strlen(input), collect, &s, &error), 0);
	assert_int_equal(s.count, 1);
	assert_int_equal(json_stream_finish(js, &error), -1);
	assert_contains(error, "truncated: value starting at line 3 ends at end of input");
	free(error);
	seen_free(&s);
	json_stream_free(js);
}

static void
truncated_inside_a_string_after_a_backslash_fails_at_finish(void **state)
{
	(void)state;
	const char input[] = "{\"a\":\"x\\";
	struct json_stream *js = json_stream_new(1024);
	struct seen s = { 0 };
	char *error = NULL;

	assert_int_equal(json_stream_feed(js, input, strlen(input), collect, &s, &error), 0);
	assert_int_equal(json_stream_finish(js, &error), -1);
	assert_contains(error, "truncated: value starting at line 1");
	free(error);
	seen_free(&s);
	json_stream_free(js);
}

static void
garbage_between_values_fails_with_line_and_offset_then_skip_line_resumes(void **state)
{
	(void)state;
	const char input[] = "{\"a\":1}\n  xyz {\"lost\":1}\n{\"b\":2}\n";
	size_t len = strlen(input);

	for (size_t chunk = 1; chunk <= len; chunk++) {
		struct json_stream *js = json_stream_new(1024);
		struct seen s = { 0 };
		char *error = NULL;

		assert_int_equal(feed_chunked(js, input, len, chunk, &s, &error), 0);
		assert_int_equal(s.errors, 1);
		assert_contains(s.first_error,
		    "line 2, column 3 (offset 10): unexpected 'x' between values");
		assert_int_equal(s.count, 2);
		assert_string_equal(s.values[0], "{\"a\":1}");
		assert_string_equal(s.values[1], "{\"b\":2}");
		assert_int_equal(s.lines[1], 3);
		seen_free(&s);
		json_stream_free(js);
	}
}

static void
feed_after_an_error_fails_until_the_line_is_skipped(void **state)
{
	(void)state;
	struct json_stream *js = json_stream_new(1024);
	struct seen s = { 0 };
	char *error = NULL;

	assert_int_equal(json_stream_feed(js, "nope\n", 5, collect, &s, &error), -1);
	free(error);
	error = NULL;
	assert_int_equal(json_stream_feed(js, "{}", 2, collect, &s, &error), -1);
	assert_contains(error, "line 1, column 1 (offset 0): the stream stopped at an earlier error");
	free(error);
	error = NULL;
	assert_int_equal(json_stream_finish(js, &error), -1);
	free(error);
	error = NULL;
	json_stream_skip_line(js);
	assert_int_equal(json_stream_feed(js, "{}", 2, collect, &s, &error), 0);
	assert_int_equal(json_stream_finish(js, &error), 0);
	assert_int_equal(s.count, 1);
	seen_free(&s);
	json_stream_free(js);
}

static void
closing_bracket_or_scalar_at_top_level_is_an_error(void **state)
{
	(void)state;
	const struct {
		const char *input;
		const char *message;
	} cases[] = {
		{ "}", "line 1, column 1 (offset 0): unexpected '}' between values" },
		{ "{}]", "line 1, column 3 (offset 2): unexpected ']' between values" },
		{ "\"s\"", "unexpected '\"' between values" },
		{ "\n\n 12", "line 3, column 2 (offset 3): unexpected '1' between values" },
		{ "\xef\xbb\xbf{}", "unexpected 0xef between values" },
		{ "\0{}", "unexpected 0x00 between values" },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct json_stream *js = json_stream_new(1024);
		struct seen s = { 0 };
		char *error = NULL;
		size_t len = cases[i].input[0] == '\0' ? 3 : strlen(cases[i].input);

		assert_int_equal(json_stream_feed(js, cases[i].input, len, collect, &s, &error),
		    -1);
		assert_contains(error, cases[i].message);
		free(error);
		seen_free(&s);
		json_stream_free(js);
	}
}

static void
mismatched_closing_bracket_is_an_error(void **state)
{
	(void)state;
	struct json_stream *js = json_stream_new(1024);
	struct seen s = { 0 };
	char *error = NULL;
	const char input[] = "{\"a\":[1,\n2}\n{}\n";

	assert_int_equal(json_stream_feed(js, input, strlen(input), collect, &s, &error), -1);
	assert_contains(error, "line 2, column 2 (offset 10): '}' does not close the '[' "
	    "opened before it, in the value starting at line 1");
	free(error);
	error = NULL;
	json_stream_skip_line(js);
	assert_int_equal(json_stream_feed(js, NULL, 0, collect, &s, &error), 0);
	assert_int_equal(s.count, 1);
	assert_string_equal(s.values[0], "{}");
	assert_int_equal(s.lines[0], 3);
	seen_free(&s);
	json_stream_free(js);
}

static void
value_of_exactly_max_value_bytes_is_accepted(void **state)
{
	(void)state;
	struct json_stream *js = json_stream_new(9);
	struct seen s = { 0 };
	char *error = NULL;

	assert_int_equal(json_stream_feed(js, "{\"a\":123}\n", 10, collect, &s, &error), 0);
	assert_int_equal(json_stream_finish(js, &error), 0);
	assert_int_equal(s.count, 1);
	seen_free(&s);
	json_stream_free(js);
}

static void
value_over_max_value_fails_and_memory_stays_bounded(void **state)
{
	(void)state;
	const size_t max = 64;
	struct json_stream *js = json_stream_new(max);
	struct seen s = { 0 };
	char *error = NULL;
	char chunk[10];
	int failed = 0;

	assert_int_equal(json_stream_feed(js, "\n[", 2, collect, &s, &error), 0);
	memset(chunk, '1', sizeof chunk);
	chunk[0] = ',';
	for (int i = 0; i < 100000 && !failed; i++) {
		failed = json_stream_feed(js, chunk, sizeof chunk, collect, &s, &error) == -1;
		assert_true(json_stream_held_bytes(js) <= max + sizeof chunk);
	}
	assert_true(failed);
	assert_contains(error, "line 2, column 65 (offset 65): the value starting at line 2 is "
	    "longer than the limit of 64 bytes");
	free(error);
	error = NULL;
	/* A failed stream takes nothing more in. */
	assert_int_equal(json_stream_feed(js, chunk, sizeof chunk, collect, &s, &error), -1);
	assert_true(json_stream_held_bytes(js) <= max + sizeof chunk);
	free(error);
	assert_int_equal(s.count, 0);
	seen_free(&s);
	json_stream_free(js);
}

static void
max_value_zero_rejects_every_value(void **state)
{
	(void)state;
	struct json_stream *js = json_stream_new(0);
	struct seen s = { 0 };
	char *error = NULL;

	assert_int_equal(json_stream_feed(js, " {}", 3, collect, &s, &error), -1);
	assert_contains(error, "longer than the limit of 0 bytes");
	free(error);
	seen_free(&s);
	json_stream_free(js);
}

static void
callback_stop_keeps_the_rest_for_the_next_feed(void **state)
{
	(void)state;
	const char input[] = "{\"a\":1}\n{\"b\":2}\n{\"c\":";
	struct json_stream *js = json_stream_new(1024);
	struct seen s = { .stop_after = 1 };
	char *error = NULL;

	assert_int_equal(json_stream_feed(js, input, strlen(input), collect, &s, &error), 0);
	assert_int_equal(s.count, 1);
	assert_int_equal(json_stream_held_bytes(js), strlen(input) - 7);	/* from the newline after the first */
	assert_int_equal(json_stream_finish(js, &error), -1);
	assert_contains(error, "never scanned");
	free(error);
	error = NULL;
	s.stop_after = 0;
	assert_int_equal(json_stream_feed(js, "3}", 2, collect, &s, &error), 0);
	assert_int_equal(json_stream_finish(js, &error), 0);
	assert_int_equal(s.count, 3);
	assert_string_equal(s.values[1], "{\"b\":2}");
	assert_string_equal(s.values[2], "{\"c\":3}");
	assert_int_equal(s.lines[2], 3);
	seen_free(&s);
	json_stream_free(js);
}

static void
skip_line_at_end_of_input_finishes_cleanly(void **state)
{
	(void)state;
	struct json_stream *js = json_stream_new(1024);
	struct seen s = { 0 };
	char *error = NULL;

	assert_int_equal(json_stream_feed(js, "{\"a\":", 5, collect, &s, &error), 0);
	json_stream_skip_line(js);
	assert_int_equal(json_stream_feed(js, "1}", 2, collect, &s, &error), 0);
	assert_int_equal(json_stream_finish(js, &error), 0);
	assert_int_equal(s.count, 0);
	assert_int_equal(json_stream_held_bytes(js), 0);
	seen_free(&s);
	json_stream_free(js);
}

static void
empty_input_finishes_cleanly(void **state)
{
	(void)state;
	struct json_stream *js = json_stream_new(1024);
	struct seen s = { 0 };
	char *error = NULL;

	assert_int_equal(json_stream_feed(js, NULL, 0, collect, &s, &error), 0);
	assert_int_equal(json_stream_feed(js, " \r\n\t", 4, collect, &s, &error), 0);
	assert_int_equal(json_stream_finish(js, &error), 0);
	assert_int_equal(s.count, 0);
	json_stream_free(js);
	json_stream_free(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_object_split_at_every_byte_yields_the_same_value),
		cmocka_unit_test(one_object_fed_one_byte_at_a_time_yields_the_same_value),
		cmocka_unit_test(many_values_in_one_chunk_are_each_reported),
		cmocka_unit_test(brackets_quotes_backslashes_and_unicode_escapes_in_strings_do_not_end_a_value),
		cmocka_unit_test(pretty_printed_objects_report_the_line_each_starts_on),
		cmocka_unit_test(truncated_stream_fails_at_finish_naming_the_line_the_value_starts_on),
		cmocka_unit_test(truncated_inside_a_string_after_a_backslash_fails_at_finish),
		cmocka_unit_test(garbage_between_values_fails_with_line_and_offset_then_skip_line_resumes),
		cmocka_unit_test(feed_after_an_error_fails_until_the_line_is_skipped),
		cmocka_unit_test(closing_bracket_or_scalar_at_top_level_is_an_error),
		cmocka_unit_test(mismatched_closing_bracket_is_an_error),
		cmocka_unit_test(value_of_exactly_max_value_bytes_is_accepted),
		cmocka_unit_test(value_over_max_value_fails_and_memory_stays_bounded),
		cmocka_unit_test(max_value_zero_rejects_every_value),
		cmocka_unit_test(callback_stop_keeps_the_rest_for_the_next_feed),
		cmocka_unit_test(skip_line_at_end_of_input_finishes_cleanly),
		cmocka_unit_test(empty_input_finishes_cleanly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
