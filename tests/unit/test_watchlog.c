/*
 * test_watchlog.c - reading recorded event logs: both layouts, positions, bad records.
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

#include "resource.h"
#include "watchlog.h"
#include "json.h"
#include "util.h"

/* A pod watch event, compact, with uid and creationTimestamp. */
#define POD(uid, created) \
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-" uid "\"," \
	"\"namespace\":\"ns\",\"uid\":\"" uid "\",\"resourceVersion\":\"1\"," \
	"\"creationTimestamp\":\"" created "\"}}"

/* Reads the whole log text (len bytes) and returns what the reader said, one line per
 * event ("LINE TYPE RESOURCE TIME UID") or error ("error: MESSAGE"); *format gets the
 * layout. max: the record size limit, 0 for the default. */
static char *
read_log(const char *text, size_t len, size_t max, enum watchlog_format *format)
{
	static const char *const types[] = { "ADDED", "MODIFIED", "DELETED" };
	FILE *f = fmemopen((void *)text, len, "r");
	struct watchlog *log;
	struct watchlog_event ev;
	struct buf out;
	char *error = NULL;
	int r;

	assert_non_null(f);
	log = watchlog_new(f, "LOG");
	if (max > 0)
		watchlog_set_max_record(log, max);
	buf_init(&out);
	while ((r = watchlog_next(log, &ev, &error)) != 0) {
		if (r < 0) {
			assert_non_null(error);
			buf_printf(&out, "error: %s\n", error);
			free(error);
			error = NULL;
			continue;
		}
		buf_printf(&out, "%lu %s %s %s %s\n", ev.line, types[ev.type], ev.resource->name,
		    ev.time_text, json_path(ev.object, "metadata.uid")->valuestring);
		watchlog_event_clear(&ev);
	}
	assert_null(error);
	if (format != NULL)
		*format = watchlog_format(log);
	watchlog_free(log);
	fclose(f);
	return buf_detach(&out);
}

/* Checks that reading text gives want. */
static void
assert_reads(const char *text, const char *want)
{
	char *got = read_log(text, strlen(text), 0, NULL);

	assert_string_equal(got, want);
	free(got);
}

static void
recorded_lines_give_events_with_their_line_and_recorded_time(void **state)
{
	enum watchlog_format format;
	const char *text =
	    "{\"time\":\"2026-11-22T10:00:00.000001Z\",\"resource\":\"pods\",\"type\":\"ADDED\","
	    "\"object\":" POD("a", "2026-01-01T00:00:00Z") "}\n"
	    "\n"
	    "{\"time\":\"2026-11-22T10:00:01.5Z\",\"resource\":\"pods\",\"type\":\"MODIFIED\","
	    "\"object\":" POD("a", "2026-01-01T00:00:00Z") "}\n"
	    "{\"time\":\"2026-11-22T10:00:02Z\",\"resource\":\"replicasets\",\"type\":\"DELETED\","
	    "\"object\":{\"metadata\":{\"uid\":\"r\"}}}\n";
	char *got;

	(void)state;
	got = read_log(text, strlen(text), 0, &format);
	assert_string_equal(got,
	    "1 ADDED pods 2026-11-22T10:00:00.000001Z a\n"
	    "3 MODIFIED pods 2026-11-22T10:00:01.5Z a\n"
	    "4 DELETED replicasets 2026-11-22T10:00:02Z r\n");
	assert_int_equal(format, WATCHLOG_LINES);
	free(got);
}

static void
recorded_time_with_fraction_parses_to_fractional_seconds(void **state)
{
	double t;

	(void)state;
	assert_int_equal(watchlog_parse_time("1970-01-01T00:00:01.25Z", &t), 0);
	assert_true(t > 1.249 && t < 1.251);
	assert_int_equal(watchlog_parse_time("1970-01-01T00:01:00Z", &t), 0);
	assert_true(t == 60);
	assert_int_equal(watchlog_parse_time("yesterday", &t), -1);
}

static void
pretty_watch_events_start_on_their_first_line_and_take_their_kind_and_time_from_the_object(
    void **state)
{
	enum watchlog_format format;
	const char *text =
	    "{\n"
	    "    \"type\": \"ADDED\",\n"
	    "    \"object\": {\n"
	    "        \"apiVersion\": \"apps/v1\",\n"
	    "        \"kind\": \"ReplicaSet\",\n"
	    "        \"metadata\": {\"uid\": \"r\", \"name\": \"r\",\n"
	    "            \"creationTimestamp\": \"2026-11-22T10:00:00Z\",\n"
	    "            \"managedFields\": [{\"time\": \"2026-11-22T10:00:05Z\"}]}\n"
	    "    }\n"
	    "}\n"
	    "{\n"
	    "    \"type\": \"MODIFIED\",\n"
	    "    \"object\": {\"apiVersion\": \"v1\", \"kind\": \"Pod\",\n"
	    "        \"metadata\": {\"uid\": \"p\", \"creationTimestamp\": \"2026-11-22T10:00:00Z\"},\n"
	    "        \"status\": {\"conditions\": [\n"
	    "            {\"type\": \"Ready\", \"lastTransitionTime\": \"2026-11-22T10:00:09Z\"}]}\n"
	    "    }\n"
	    "}\n";
	char *got;

	(void)state;
	got = read_log(text, strlen(text), 0, &format);
	assert_string_equal(got,
	    "1 ADDED replicasets 2026-11-22T10:00:05Z r\n"
	    "11 MODIFIED pods 2026-11-22T10:00:09Z p\n");
	assert_int_equal(format, WATCHLOG_PRETTY);
	free(got);
}

static void
a_watch_event_is_never_earlier_than_the_one_before(void **state)
{
	(void)state;
	assert_reads(
	    "{\"type\":\"ADDED\",\"object\":" POD("a", "2026-11-22T10:00:09Z") "}\n"
	    "{\"type\":\"ADDED\",\"object\":" POD("b", "2026-11-22T10:00:01Z") "}\n"
	    "{\"type\":\"ADDED\",\"object\":" POD("c", "2026-11-22T10:00:10Z") "}\n",
	    "1 ADDED pods 2026-11-22T10:00:09Z a\n"
	    "2 ADDED pods 2026-11-22T10:00:09Z b\n"
	    "3 ADDED pods 2026-11-22T10:00:10Z c\n");
}

static void
a_deletion_is_dated_when_it_was_asked_for_not_when_its_grace_period_ends(void **state)
{
	(void)state;
	assert_reads(
	    "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"metadata\":{\"uid\":\"a\",\"creationTimestamp\":\"2026-11-22T10:00:00Z\","
	    "\"deletionTimestamp\":\"2026-11-22T10:01:00Z\",\"deletionGracePeriodSeconds\":30}}}\n",
	    "1 MODIFIED pods 2026-11-22T10:00:30Z a\n");
}

static void
bookmarks_are_skipped_and_error_events_reported(void **state)
{
	(void)state;
	assert_reads(
	    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"resourceVersion\":\"9\"}}}\n"
	    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"message\":\"too old\"}}\n"
	    "{\"type\":\"ADDED\",\"object\":" POD("a", "2026-11-22T10:00:00Z") "}\n",
	    "error: LOG:2: an ERROR event: too old\n"
	    "3 ADDED pods 2026-11-22T10:00:00Z a\n");
}

static void
a_truncated_last_line_is_reported_as_truncated(void **state)
{
	(void)state;
	assert_reads(
	    "{\"type\":\"ADDED\",\"object\":" POD("a", "2026-11-22T10:00:00Z") "}\n"
	    "{\"type\":\"ADDED\",\"object\":{\"apiVe",
	    "1 ADDED pods 2026-11-22T10:00:00Z a\n"
	    "error: LOG:2: truncated record at the end of the log\n");
}

static void
a_truncated_last_pretty_record_is_reported_at_its_first_line(void **state)
{
	(void)state;
	assert_reads(
	    "{\n  \"type\": \"ADDED\",\n  \"object\": " POD("a", "2026-11-22T10:00:00Z") "\n}\n"
	    "{\n  \"type\": \"ADDED\",\n  \"object\": {\n    \"apiVersion\": \"v1\",\n",
	    "1 ADDED pods 2026-11-22T10:00:00Z a\n"
	    "error: LOG:5: truncated record at the end of the log\n");
}

static void
corrupted_lines_are_reported_with_their_number_and_the_next_is_read(void **state)
{
	(void)state;
	assert_reads(
	    "{\"type\":\"ADDED\",\"object\":" POD("a", "2026-11-22T10:00:00Z") "}\n"
	    "garbage\n"
	    "{\"type\":\"ADDED\",\"object\":{\"apiVersion:\"v1\"}}\n"
	    "{\"type\":\"ADDED\",\"object\":" POD("b", "2026-11-22T10:00:00Z") "} trailing\n"
	    "{\"type\":\"ADDED\",\"object\":" POD("c", "2026-11-22T10:00:00Z") "}\n",
	    "1 ADDED pods 2026-11-22T10:00:00Z a\n"
	    "error: LOG:2: not JSON\n"
	    "error: LOG:3: not JSON\n"
	    "error: LOG:4: text after the record's JSON object\n"
	    "5 ADDED pods 2026-11-22T10:00:00Z c\n");
}

static void
a_pretty_record_cut_short_is_reported_and_the_next_one_read(void **state)
{
	(void)state;
	assert_reads(
	    "{\n  \"type\": \"ADDED\",\n  \"object\": {\n    \"apiVersion\": \"v1\",\n"
	    "{\n  \"type\": \"ADDED\",\n  \"object\": " POD("b", "2026-11-22T10:00:00Z") "\n}\n"
	    "  stray text\n  more\n"
	    "{\n  \"type\": \"ADDED\",\n  \"object\": " POD("c", "2026-11-22T10:00:00Z") "\n}\n"
	    "{\n  \"type\": \"ADDED\",\n  \"object\": \"x\n}\n",
	    "error: LOG:1: truncated record (the next one starts on line 5)\n"
	    "5 ADDED pods 2026-11-22T10:00:00Z b\n"
	    "error: LOG:9: text outside any record (a record starts with a line that begins "
	    "with '{'); skipped lines 9 to 10\n"
	    "11 ADDED pods 2026-11-22T10:00:00Z c\n"
	    "error: LOG:15: not JSON (the error is on line 17)\n");
}

static void
json_that_is_not_an_object_is_a_bad_record(void **state)
{
	(void)state;
	assert_reads(
	    "[1, 2]\n"
	    "\"text\"\n"
	    "42\n",
	    "error: LOG:1: a record must be a JSON object, not an array\n"
	    "error: LOG:2: a record must be a JSON object, not a string\n"
	    "error: LOG:3: a record must be a JSON object, not a number\n");
}

static void
unknown_kinds_resources_and_types_and_missing_members_are_bad_records(void **state)
{
	(void)state;
	assert_reads(
	    "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Gadget\","
	    "\"metadata\":{\"uid\":\"u\"}}}\n"
	    "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v2\",\"kind\":\"Pod\","
	    "\"metadata\":{\"uid\":\"u\"}}}\n"
	    "{\"time\":\"2026-11-22T10:00:00Z\",\"resource\":\"gadgets\",\"type\":\"ADDED\","
	    "\"object\":{\"metadata\":{\"uid\":\"u\"}}}\n"
	    "{\"time\":\"soon\",\"resource\":\"pods\",\"type\":\"ADDED\","
	    "\"object\":{\"metadata\":{\"uid\":\"u\"}}}\n"
	    "{\"type\":\"CHANGED\",\"object\":" POD("a", "2026-11-22T10:00:00Z") "}\n"
	    "{\"object\":" POD("a", "2026-11-22T10:00:00Z") "}\n"
	    "{\"type\":\"ADDED\"}\n"
	    "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"metadata\":{\"name\":\"n\"}}}\n",
	    "error: LOG:1: unknown kind Gadget (apiVersion v1)\n"
	    "error: LOG:2: unknown kind Pod (apiVersion v2)\n"
	    "error: LOG:3: unknown resource \"gadgets\"\n"
	    "error: LOG:4: \"time\" is not an RFC 3339 time: soon\n"
	    "error: LOG:5: unknown event type \"CHANGED\"\n"
	    "error: LOG:6: \"type\" is missing, not a string\n"
	    "error: LOG:7: \"object\" is missing, not an object\n"
	    "error: LOG:8: the object has no metadata.uid\n");
}

static void
crlf_line_endings_read_as_lf(void **state)
{
	(void)state;
	assert_reads(
	    "{\r\n  \"type\": \"ADDED\",\r\n  \"object\": " POD("a", "2026-11-22T10:00:00Z")
	    "\r\n}\r\n\r\n"
	    "{\r\n  \"type\": \"DELETED\",\r\n  \"object\": " POD("a", "2026-11-22T10:00:00Z")
	    "\r\n}\r\n",
	    "1 ADDED pods 2026-11-22T10:00:00Z a\n"
	    "6 DELETED pods 2026-11-22T10:00:00Z a\n");
	assert_reads(
	    "{\"type\":\"ADDED\",\"object\":" POD("a", "2026-11-22T10:00:00Z") "}\r\n"
	    "{\"type\":\"ADDED\",\"object\":" POD("b", "2026-11-22T10:00:00Z") "}\r\n",
	    "1 ADDED pods 2026-11-22T10:00:00Z a\n"
	    "2 ADDED pods 2026-11-22T10:00:00Z b\n");
}

/* Returns a record line whose object carries an annotation of n bytes. */
static char *
huge_line(const char *uid, size_t n)
{
	char *pad = xmalloc(n + 1);
	char *line;

	memset(pad, 'x', n);
	pad[n] = '\0';
	line = xasprintf("{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"metadata\":{\"uid\":\"%s\",\"annotations\":{\"big\":\"%s\"}}}}\n", uid, pad);
	free(pad);
	return line;
}

static void
huge_lines_are_read_and_lines_over_the_limit_skipped(void **state)
{
	char *a = huge_line("a", 3 * 1024 * 1024);
	char *b = huge_line("b", 100);
	char *text = xasprintf("%s%s%s", a, a, b);
	char *got;

	(void)state;
	a[strlen(a) - 1] = '\0';
	got = read_log(text, strlen(text), 0, NULL);
	assert_string_equal(got,
	    "1 ADDED pods 1970-01-01T00:00:00Z a\n"
	    "2 ADDED pods 1970-01-01T00:00:00Z a\n"
	    "3 ADDED pods 1970-01-01T00:00:00Z b\n");
	free(got);
	got = read_log(text, strlen(text), 1024 * 1024, NULL);
	assert_string_equal(got,
	    "error: LOG:1: a line longer than 1048576 bytes\n"
	    "error: LOG:2: a line longer than 1048576 bytes\n"
	    "3 ADDED pods 1970-01-01T00:00:00Z b\n");
	free(got);
	free(text);
	free(a);
	free(b);
}

static void
a_pretty_record_over_the_limit_is_skipped_to_the_next(void **state)
{
	struct buf text;
	char *got;

	(void)state;
	buf_init(&text);
	buf_append_str(&text, "{\n  \"type\": \"ADDED\",\n  \"object\": {\n");
	for (int i = 0; i < 100; i++)
		buf_append_str(&text, "    \"padding padding padding padding padding\": 1,\n");
	buf_append_str(&text, "  \"x\": 1}\n}\n");
	buf_append_str(&text, "{\n  \"type\": \"ADDED\",\n  \"object\": "
	    POD("b", "2026-11-22T10:00:00Z") "\n}\n");
	got = read_log(text.data, text.len, 1000, NULL);
	assert_string_equal(got,
	    "error: LOG:1: the record is longer than 1000 bytes (at line 23)\n"
	    "106 ADDED pods 2026-11-22T10:00:00Z b\n");
	free(got);
	buf_free(&text);
}

static void
an_empty_or_blank_log_has_no_events(void **state)
{
	enum watchlog_format format;
	char *got;

	(void)state;
	got = read_log("", 0, 0, &format);
	assert_string_equal(got, "");
	assert_int_equal(format, WATCHLOG_UNKNOWN);
	free(got);
	assert_reads("\n  \n\t\n", "");
}

/* A resource discovery found is named by "metadataOf", registered as it is first read;
 * anything that does not name a resource is a bad record. */
static void
metadata_records_name_their_resource(void **state)
{
	const struct resource *r;

	(void)state;
#define META(m) "{\"time\":\"2026-11-22T10:00:00Z\",\"metadataOf\":" m ",\"type\":\"ADDED\"," \
	"\"object\":{\"kind\":\"PartialObjectMetadata\",\"metadata\":{\"uid\":\"u\"}}}\n"
	assert_reads(
	    META("{\"resource\":\"widgets.example.com\",\"apiVersion\":\"example.com/v1\","
		"\"kind\":\"Widget\",\"namespaced\":true}")
	    META("{\"resource\":\"services\",\"apiVersion\":\"v1\",\"kind\":\"Service\","
		"\"namespaced\":true}")
	    META("{\"resource\":\"widgets\",\"apiVersion\":\"example.com/v1\",\"kind\":\"W\","
		"\"namespaced\":true}")
	    META("{\"resource\":\"x.other.com\",\"apiVersion\":\"example.com/v1\",\"kind\":\"W\","
		"\"namespaced\":true}")
	    META("{\"resource\":\"a/b\",\"apiVersion\":\"v1\",\"kind\":\"W\",\"namespaced\":true}")
	    META("{\"resource\":\"secrets\",\"apiVersion\":\"v1\",\"kind\":\"Secret\","
		"\"namespaced\":\"yes\"}")
	    META("[]"),
	    "1 ADDED widgets.example.com 2026-11-22T10:00:00Z u\n"
	    "2 ADDED services 2026-11-22T10:00:00Z u\n"
	    "error: LOG:3: \"metadataOf\": resource \"widgets\" and apiVersion \"example.com/v1\" "
	    "do not name a resource\n"
	    "error: LOG:4: \"metadataOf\": resource \"x.other.com\" and apiVersion "
	    "\"example.com/v1\" do not name a resource\n"
	    "error: LOG:5: \"metadataOf\": resource \"a/b\" and apiVersion \"v1\" do not name a "
	    "resource\n"
	    "error: LOG:6: \"metadataOf\": want an object with strings resource, apiVersion, "
	    "kind and a boolean namespaced\n"
	    "error: LOG:7: \"metadataOf\": want an object with strings resource, apiVersion, "
	    "kind and a boolean namespaced\n");
#undef META
	r = resource_find_any("widgets.example.com");
	assert_non_null(r);
	assert_true(r->metadata_only);
	assert_true(r->namespaced);
	assert_string_equal(r->kind, "Widget");
	assert_string_equal(r->path, "/apis/example.com/v1/widgets");
	resource_metadata_free_all();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(metadata_records_name_their_resource),
		cmocka_unit_test(recorded_lines_give_events_with_their_line_and_recorded_time),
		cmocka_unit_test(recorded_time_with_fraction_parses_to_fractional_seconds),
		cmocka_unit_test(pretty_watch_events_start_on_their_first_line_and_take_their_kind_and_time_from_the_object),
		cmocka_unit_test(a_watch_event_is_never_earlier_than_the_one_before),
		cmocka_unit_test(a_deletion_is_dated_when_it_was_asked_for_not_when_its_grace_period_ends),
		cmocka_unit_test(bookmarks_are_skipped_and_error_events_reported),
		cmocka_unit_test(a_truncated_last_line_is_reported_as_truncated),
		cmocka_unit_test(a_truncated_last_pretty_record_is_reported_at_its_first_line),
		cmocka_unit_test(corrupted_lines_are_reported_with_their_number_and_the_next_is_read),
		cmocka_unit_test(a_pretty_record_cut_short_is_reported_and_the_next_one_read),
		cmocka_unit_test(json_that_is_not_an_object_is_a_bad_record),
		cmocka_unit_test(unknown_kinds_resources_and_types_and_missing_members_are_bad_records),
		cmocka_unit_test(crlf_line_endings_read_as_lf),
		cmocka_unit_test(huge_lines_are_read_and_lines_over_the_limit_skipped),
		cmocka_unit_test(a_pretty_record_over_the_limit_is_skipped_to_the_next),
		cmocka_unit_test(an_empty_or_blank_log_has_no_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
