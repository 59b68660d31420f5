/*
 * jsonstream.h - split a byte stream into whole top-level JSON values, incrementally.
 *
 * Used for WATCH response bodies (arbitrary chunks from libcurl) and for replay logs
 * (JSON lines, or concatenated pretty-printed objects as kubectl --watch -o json writes).
 *
 * The contract: a reported value starts with '{' or '[', ends with the matching bracket,
 * has every bracket outside strings matched ('{' with '}', '[' with ']'), and every string
 * closed. Nothing else is checked: a reported value may still be invalid JSON (a bare word,
 * a missing comma, a control byte in a string), which the caller's cJSON parse reports.
 * Every valid top-level JSON object or array is reported exactly as it appears in the input,
 * and where the input is cut into chunks never changes what is reported.
 */
#ifndef SQLKCM_JSONSTREAM_H
#define SQLKCM_JSONSTREAM_H

#include <stddef.h>

struct json_stream;

/* Called once per complete top-level value with its text (len bytes, not NUL-terminated,
 * valid only during the call) and the 1-based line on which it starts. Returns 0 to go on,
 * non-zero to stop: feed then returns 0 at once and keeps the bytes after the value for the
 * next feed. The callback must not feed the same stream. */
typedef int (*json_stream_cb)(const char *text, size_t len, unsigned long line, void *arg);

/* Returns a new stream that rejects any value longer than max_value bytes. */
struct json_stream *json_stream_new(size_t max_value);

/* Frees the stream and every byte it still holds; NULL is allowed. */
void json_stream_free(struct json_stream *js);

/*
 * Scans len bytes (data may be NULL when len is 0), calling cb for each value completed.
 * Returns 0, or -1 with *error naming the line, column and byte offset when the input
 * cannot be a stream of objects and arrays: a byte between values that cannot start one,
 * a closing bracket that does not match, or a value over max_value. After an error, the
 * bytes from the offending one on are kept and every feed fails until the caller calls
 * json_stream_skip_line; the next feed (len 0 is enough) then scans the kept bytes first:
 *
 *	if (json_stream_feed(js, data, len, cb, arg, &error) == -1)
 *		do { report(error); free(error); error = NULL; json_stream_skip_line(js); }
 *		while (json_stream_feed(js, NULL, 0, cb, arg, &error) == -1);
 */
int json_stream_feed(struct json_stream *js, const char *data, size_t len,
    json_stream_cb cb, void *arg, char **error);

/* Declares the end of input; returns -1 if a value is unfinished ("truncated"), if an error
 * was not cleared, or if bytes kept by a stopped or failed feed were never scanned. */
int json_stream_finish(struct json_stream *js, char **error);

/* Returns the input bytes the stream holds: the value in progress from earlier feeds and
 * bytes kept after a stop or an error. At most max_value plus what a stopped or failed
 * feed was given. */
size_t json_stream_held_bytes(const struct json_stream *js);

/* Drops the value in progress, clears an error, and drops input up to and including the
 * next newline (the rest of the current line). */
void json_stream_skip_line(struct json_stream *js);

#endif
