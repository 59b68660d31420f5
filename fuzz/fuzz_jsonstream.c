/*
 * fuzz_jsonstream.c - the JSON value splitter under arbitrary input and chunking.
 *
 * Input: byte 0 chooses the chunk sizes, byte 1 the limit on a value's size and whether
 * the callback stops after each value; the rest is the stream. Invariants checked:
 * - Chunking never changes the result: the values reported (text and line), the errors
 *   met while replay-style skipping bad lines, and finish's verdict are byte-identical
 *   whether the stream is fed in one piece or in chunks, with or without stops.
 * - Each value starts with '{' or '[', ends with the bracket that matches, and is at most
 *   the limit. The splitter does not validate JSON (see jsonstream.h), so a value may fail
 *   to parse; but when cJSON does parse it, cJSON's value ends exactly where ours does.
 * - Valid JSON always passes: when the stream parses with cJSON as an object or array, its
 *   compact and pretty printings, concatenated, are reported as exactly those values, each
 *   of which cJSON parses back to the same value.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonstream.h"
#include "util.h"

/* Everything a run reported, in order. */
struct transcript {
	struct buf log;
	size_t max_value;
	int stop;		/* the callback asks to stop after each value */
	int stopped;
	int values;
};

/* Checks the shape of one value and appends it to the transcript. */
static int
record_value(const char *text, size_t len, unsigned long line, void *arg)
{
	struct transcript *t = arg;
	const char *end = NULL;
	cJSON *parsed;

	if (len < 2 || len > t->max_value)
		abort();
	if (!((text[0] == '{' && text[len - 1] == '}') || (text[0] == '[' && text[len - 1] == ']')))
		abort();
	parsed = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (parsed != NULL && end != text + len)
		abort();
	cJSON_Delete(parsed);
	buf_printf(&t->log, "value line %lu len %zu:", line, len);
	buf_append(&t->log, text, len);
	buf_append_str(&t->log, "\n");
	t->values++;
	t->stopped = t->stop;
	return t->stop;
}

/* Appends an error to the transcript and frees it. */
static void
record_error(struct transcript *t, char *error)
{
	if (error == NULL)
		abort();
	buf_printf(&t->log, "error: %s\n", error);
	free(error);
}

/* Feeds one chunk as replay would: report and skip bad lines, resume after stops. */
static void
feed_chunk(struct json_stream *js, const char *data, size_t len, struct transcript *t)
{
	char *error = NULL;
	int r;

	t->stopped = 0;
	r = json_stream_feed(js, data, len, record_value, t, &error);
	for (;;) {
		if (r == -1) {
			record_error(t, error);
			error = NULL;
			json_stream_skip_line(js);
		} else if (!t->stopped) {
			break;
		}
		t->stopped = 0;
		r = json_stream_feed(js, NULL, 0, record_value, t, &error);
	}
	if (error != NULL)
		abort();
}

/* Runs the whole stream in chunks of the given sizes (cycled; NULL: one piece). */
static char *
run(const char *data, size_t len, const uint8_t *sizes, size_t nsizes, size_t max_value,
    int stop)
{
	struct json_stream *js = json_stream_new(max_value);
	struct transcript t = { .max_value = max_value, .stop = stop };
	char *error = NULL;
	size_t at = 0, k = 0;

	buf_init(&t.log);
	while (at < len) {
		size_t n = sizes == NULL ? len : (size_t)sizes[k++ % nsizes];
		if (n > len - at)
			n = len - at;
		feed_chunk(js, data + at, n, &t);
		at += n;
		if (json_stream_held_bytes(js) > max_value + len)
			abort();
	}
	if (json_stream_finish(js, &error) == -1)
		record_error(&t, error);
	else
		buf_append_str(&t.log, "finished\n");
	json_stream_free(js);
	return buf_detach(&t.log);
}

/* Counts the values in a stream of valid JSON and checks each parses back to `want`. */
struct valid_check {
	const char *want[3];
	int count;
};

static int
check_valid_value(const char *text, size_t len, unsigned long line, void *arg)
{
	struct valid_check *c = arg;
	cJSON *parsed;
	char *printed;

	(void)line;
	if (c->count >= 3 || strlen(c->want[c->count]) != len ||
	    memcmp(c->want[c->count], text, len) != 0)
		abort();
	parsed = cJSON_ParseWithLength(text, len);
	if (parsed == NULL)
		abort();
	printed = cJSON_PrintUnformatted(parsed);
	if (printed == NULL || strcmp(printed, c->want[0]) != 0)
		abort();
	free(printed);
	cJSON_Delete(parsed);
	c->count++;
	return 0;
}

/* When the stream is one valid object or array, its printings must split exactly. */
static void
check_valid_json(const char *data, size_t len, const uint8_t *sizes, size_t nsizes)
{
	cJSON *root = cJSON_ParseWithLength(data, len);
	struct valid_check c = { { NULL }, 0 };
	struct json_stream *js;
	char *compact, *pretty, *stream, *error = NULL;
	size_t at = 0, k = 0, n;

	if (root == NULL || !(cJSON_IsObject(root) || cJSON_IsArray(root))) {
		cJSON_Delete(root);
		return;
	}
	compact = cJSON_PrintUnformatted(root);
	pretty = cJSON_Print(root);
	if (compact == NULL || pretty == NULL)
		abort();
	stream = xasprintf("%s\n%s\r\n  %s", compact, pretty, compact);
	c.want[0] = compact;
	c.want[1] = pretty;
	c.want[2] = compact;
	n = strlen(stream);
	js = json_stream_new(n);
	while (at < n) {
		size_t m = sizes[k++ % nsizes];
		if (m > n - at)
			m = n - at;
		if (json_stream_feed(js, stream + at, m, check_valid_value, &c, &error) != 0)
			abort();
		at += m;
	}
	if (json_stream_finish(js, &error) != 0 || c.count != 3)
		abort();
	json_stream_free(js);
	free(stream);
	free(compact);
	free(pretty);
	cJSON_Delete(root);
}

/* The libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t sizes[16];
	size_t max_value;
	char *whole, *chunked, *stopped;

	if (size < 2)
		return 0;
	/* Chunk sizes from 1 to 1 + (byte 0 & 31), varied by a tiny generator. */
	for (size_t i = 0, x = data[0]; i < sizeof sizes; i++) {
		x = (x * 37 + 11) & 0xff;
		sizes[i] = (uint8_t)(1 + x % (1 + (data[0] & 31)));
	}
	max_value = data[1] & 0x80 ? (size_t)(data[1] & 0x3f) : (size_t)1 << 20;
	data += 2;
	size -= 2;

	whole = run((const char *)data, size, NULL, 0, max_value, 0);
	chunked = run((const char *)data, size, sizes, sizeof sizes, max_value, 0);
	stopped = run((const char *)data, size, sizes, sizeof sizes, max_value, 1);
	if (strcmp(whole, chunked) != 0 || strcmp(whole, stopped) != 0)
		abort();
	free(whole);
	free(chunked);
	free(stopped);

	check_valid_json((const char *)data, size, sizes, sizeof sizes);
	return 0;
}
