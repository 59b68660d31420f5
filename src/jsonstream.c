/*
 * jsonstream.c - split a byte stream into whole top-level JSON values, incrementally.
 *
 * A scanner with a little state finds where each top-level object or array ends, without
 * parsing it: whether it is between values, inside a value, inside a string, or just after
 * a backslash in a string; the nesting depth, with one bit per level saying whether '{' or
 * '[' opened it; and the line and offset of the next byte. That state survives between
 * feeds, so each input byte is looked at exactly once however the stream is chunked.
 *
 * Invariants:
 * - `value` holds the bytes of the value in progress that came in earlier feeds, and
 *   nothing else; a value that starts and ends within one feed is handed to the callback
 *   straight from the caller's data, never copied. After each value the buffer is emptied
 *   (and released if it grew large), so memory holds at most one value, at most max_value
 *   bytes: consumed bytes are never kept.
 * - `pending` holds the bytes of a feed that were not scanned because a callback asked to
 *   stop or an error was found; the next feed scans them first. After an error the first
 *   pending byte is the offending one, and `line`, `offset` and `line_start` describe it.
 * - `offset` counts bytes scanned; a byte that fails is not scanned until skip_line says
 *   what to do with it.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonstream.h"
#include "util.h"

/* A value buffer larger than this is released after its value rather than kept for reuse. */
#define JSON_STREAM_KEEP_BYTES (64 * 1024)

enum scan_state {
	SCAN_BETWEEN,		/* between values: whitespace, or the first byte of a value */
	SCAN_VALUE,		/* inside a value, outside strings */
	SCAN_STRING,		/* inside a string */
	SCAN_ESCAPE,		/* inside a string, just after a backslash */
	SCAN_SKIP_LINE,		/* dropping bytes up to and including the next newline */
};

enum scan_result {
	SCAN_DONE,		/* every byte scanned */
	SCAN_STOPPED,		/* the callback asked to stop */
	SCAN_FAILED,		/* an error, set in *error */
};

struct json_stream {
	size_t max_value;
	enum scan_state state;
	int failed;			/* an error not yet cleared by json_stream_skip_line */

	size_t depth;			/* brackets open in the current value */
	unsigned char *brackets;	/* bit d set: level d was opened by '[' */
	size_t brackets_size;		/* bytes allocated for brackets */

	struct buf value;		/* the current value's bytes from earlier feeds */
	size_t value_len;		/* bytes of the current value scanned so far */
	unsigned long value_line;	/* the line on which the current value starts */

	struct buf pending;		/* bytes kept by a stopped or failed feed */
	size_t pending_off;		/* how many of them are already scanned */

	unsigned long line;		/* line of the next byte, from 1 */
	unsigned long long offset;	/* bytes scanned */
	unsigned long long line_start;	/* offset of the first byte of the current line */
};

/* Returns a new stream that rejects values over max_value bytes. */
struct json_stream *
json_stream_new(size_t max_value)
{
	struct json_stream *js = xcalloc(1, sizeof *js);

	js->max_value = max_value;
	js->state = SCAN_BETWEEN;
	buf_init(&js->value);
	buf_init(&js->pending);
	js->line = 1;
	return js;
}

/* Frees the stream and every byte it holds. */
void
json_stream_free(struct json_stream *js)
{
	if (js == NULL)
		return;
	free(js->brackets);
	buf_free(&js->value);
	buf_free(&js->pending);
	free(js);
}

/* Returns true while the scanner is inside a value. */
static int
stream_in_value(const struct json_stream *js)
{
	return js->state == SCAN_VALUE || js->state == SCAN_STRING || js->state == SCAN_ESCAPE;
}

/* Opens one nesting level, remembering which bracket opened it. */
static void
stream_push(struct json_stream *js, unsigned char c)
{
	size_t byte = js->depth / 8;

	if (byte >= js->brackets_size) {
		size_t size = js->brackets_size == 0 ? 16 : js->brackets_size * 2;
		js->brackets = xrealloc(js->brackets, size);
		js->brackets_size = size;
	}
	if (c == '[')
		js->brackets[byte] |= (unsigned char)(1u << (js->depth % 8));
	else
		js->brackets[byte] &= (unsigned char)~(1u << (js->depth % 8));
	js->depth++;
}

/* Returns the bracket that opened the innermost level. */
static unsigned char
stream_top(const struct json_stream *js)
{
	size_t d = js->depth - 1;

	return (js->brackets[d / 8] >> (d % 8)) & 1 ? '[' : '{';
}

/* Forgets the value in progress, releasing a large buffer. */
static void
stream_drop_value(struct json_stream *js)
{
	if (js->value.cap > JSON_STREAM_KEEP_BYTES)
		buf_free(&js->value);
	else
		buf_reset(&js->value);
	js->value_len = 0;
	js->depth = 0;
}

/* Writes a byte for an error message: 'x' when printable, 0xNN otherwise. */
static void
stream_describe_byte(unsigned char c, char out[8])
{
	if (c > 0x20 && c < 0x7f) {
		out[0] = '\'';
		out[1] = (char)c;
		out[2] = '\'';
		out[3] = '\0';
	} else {
		static const char hex[] = "0123456789abcdef";
		out[0] = '0';
		out[1] = 'x';
		out[2] = hex[c >> 4];
		out[3] = hex[c & 15];
		out[4] = '\0';
	}
}

enum scan_failure {
	FAIL_NOT_A_VALUE,	/* a byte between values that cannot start one */
	FAIL_TOO_LONG,		/* the value would exceed max_value */
	FAIL_MISMATCH,		/* a closing bracket that does not match the open one */
};

/* Marks the stream failed at the next byte, c, and sets the message; returns SCAN_FAILED. */
static enum scan_result
stream_fail(struct json_stream *js, enum scan_failure why, unsigned char c, char **error)
{
	char what[8];
	unsigned long long column = js->offset - js->line_start + 1;

	stream_describe_byte(c, what);
	js->failed = 1;
	switch (why) {
	case FAIL_NOT_A_VALUE:
		error_set(error, "line %lu, column %llu (offset %llu): unexpected %s between "
		    "values; a value must start with '{' or '['", js->line, column, js->offset, what);
		break;
	case FAIL_TOO_LONG:
		error_set(error, "line %lu, column %llu (offset %llu): the value starting at line "
		    "%lu is longer than the limit of %zu bytes", js->line, column, js->offset,
		    stream_in_value(js) ? js->value_line : js->line, js->max_value);
		break;
	case FAIL_MISMATCH:
		error_set(error, "line %lu, column %llu (offset %llu): %s does not close the '%c' "
		    "opened before it, in the value starting at line %lu", js->line, column,
		    js->offset, what, stream_top(js), js->value_line);
		break;
	}
	return SCAN_FAILED;
}

/*
 * Scans data until its end, a stop or an error; sets *used to the bytes scanned. Bytes of
 * a value left unfinished at the end are appended to the value buffer.
 */
static enum scan_result
stream_scan(struct json_stream *js, const char *data, size_t len, json_stream_cb cb,
    void *arg, size_t *used, char **error)
{
	size_t seg = 0;		/* where the current value's bytes in data begin */

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)data[i];
		int complete = 0;

		if (stream_in_value(js) && js->value_len >= js->max_value) {
			*used = i;
			return stream_fail(js, FAIL_TOO_LONG, c, error);
		}
		switch (js->state) {
		case SCAN_SKIP_LINE:
			if (c == '\n')
				js->state = SCAN_BETWEEN;
			break;
		case SCAN_BETWEEN:
			if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
				break;
			if (c != '{' && c != '[') {
				*used = i;
				return stream_fail(js, FAIL_NOT_A_VALUE, c, error);
			}
			if (js->max_value == 0) {
				*used = i;
				return stream_fail(js, FAIL_TOO_LONG, c, error);
			}
			js->state = SCAN_VALUE;
			js->value_line = js->line;
			js->value_len = 0;
			seg = i;
			stream_push(js, c);
			break;
		case SCAN_VALUE:
			if (c == '"') {
				js->state = SCAN_STRING;
			} else if (c == '{' || c == '[') {
				stream_push(js, c);
			} else if (c == '}' || c == ']') {
				if (stream_top(js) != (c == '}' ? '{' : '[')) {
					*used = i;
					return stream_fail(js, FAIL_MISMATCH, c, error);
				}
				if (--js->depth == 0)
					complete = 1;
			}
			break;
		case SCAN_STRING:
			if (c == '\\')
				js->state = SCAN_ESCAPE;
			else if (c == '"')
				js->state = SCAN_VALUE;
			break;
		case SCAN_ESCAPE:
			js->state = SCAN_STRING;
			break;
		}
		if (js->state != SCAN_BETWEEN && js->state != SCAN_SKIP_LINE)
			js->value_len++;
		js->offset++;
		if (c == '\n') {
			js->line++;
			js->line_start = js->offset;
		}
		if (complete) {
			const char *text = data + seg;
			size_t n = i + 1 - seg;
			int stop;

			if (js->value.len > 0) {
				buf_append(&js->value, data + seg, n);
				text = js->value.data;
				n = js->value.len;
			}
			js->value_len = n;
			js->state = SCAN_BETWEEN;
			stop = cb(text, n, js->value_line, arg);
			stream_drop_value(js);
			if (stop) {
				*used = i + 1;
				return SCAN_STOPPED;
			}
		}
	}
	if (stream_in_value(js))
		buf_append(&js->value, data + seg, len - seg);
	*used = len;
	return SCAN_DONE;
}

/* Keeps the bytes a scan did not reach, for the next feed. */
static void
stream_keep(struct json_stream *js, const char *data, size_t len)
{
	if (len == 0)
		return;
	if (js->pending_off > 0) {
		buf_consume(&js->pending, js->pending_off);
		js->pending_off = 0;
	}
	buf_append(&js->pending, data, len);
}

/* Scans the bytes kept from an earlier feed, then data, reporting each value. */
int
json_stream_feed(struct json_stream *js, const char *data, size_t len,
    json_stream_cb cb, void *arg, char **error)
{
	enum scan_result r;
	size_t used;

	if (js->failed)
		return error_set(error, "line %lu, column %llu (offset %llu): the stream stopped "
		    "at an earlier error; skip the line to go on", js->line,
		    js->offset - js->line_start + 1, js->offset);
	if (js->pending_off < js->pending.len) {
		r = stream_scan(js, js->pending.data + js->pending_off,
		    js->pending.len - js->pending_off, cb, arg, &used, error);
		js->pending_off += used;
		if (js->pending_off == js->pending.len) {
			if (js->pending.cap > JSON_STREAM_KEEP_BYTES)
				buf_free(&js->pending);
			else
				buf_reset(&js->pending);
			js->pending_off = 0;
		}
		if (r != SCAN_DONE) {
			stream_keep(js, data, len);
			return r == SCAN_FAILED ? -1 : 0;
		}
	}
	if (len == 0)
		return 0;
	r = stream_scan(js, data, len, cb, arg, &used, error);
	stream_keep(js, data + used, len - used);
	return r == SCAN_FAILED ? -1 : 0;
}

/* Declares the end of input; fails on an unfinished value or unscanned bytes. */
int
json_stream_finish(struct json_stream *js, char **error)
{
	if (js->failed)
		return error_set(error, "line %lu, column %llu (offset %llu): the stream ends "
		    "stopped at an earlier error", js->line, js->offset - js->line_start + 1,
		    js->offset);
	if (js->pending_off < js->pending.len)
		return error_set(error, "line %lu: %zu bytes after a stopped feed were never "
		    "scanned", js->line, js->pending.len - js->pending_off);
	if (stream_in_value(js))
		return error_set(error, "truncated: value starting at line %lu ends at end of "
		    "input (line %lu, %zu bytes read)", js->value_line, js->line, js->value_len);
	return 0;
}

/* Returns the input bytes held in memory. */
size_t
json_stream_held_bytes(const struct json_stream *js)
{
	return js->value.len + (js->pending.len - js->pending_off);
}

/* Drops the value in progress and the rest of the line, clearing an error. */
void
json_stream_skip_line(struct json_stream *js)
{
	js->failed = 0;
	js->state = SCAN_SKIP_LINE;
	stream_drop_value(js);
}
