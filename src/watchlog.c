/*
 * watchlog.c - read recorded event logs, one event at a time, for `sqlkcm replay`.
 *
 * Two layouts are read, told apart by the first non-blank line:
 *
 * - Lines (WATCHLOG_LINES): every non-blank line is one record. This is what
 *   `sqlkcm run --record` writes ({"time","resource","type","object"}, watchrecord.c), and
 *   also compact watch events, one per line ({"type","object"}, as `kubectl get --watch
 *   -o json --output-watch-events` prints them when its output is not a terminal).
 * - Pretty (WATCHLOG_PRETTY): the first non-blank line is a lone "{". Records are
 *   pretty-printed watch events, as kubectl prints them (several captures may be
 *   concatenated). A record starts at a line whose first byte is '{' and ends at a line
 *   whose first byte is '}': a pretty printer indents everything inside the top-level
 *   object, and JSON strings hold no raw newline, so no line inside a record starts at
 *   column 0. A line "{...}" whole is a record by itself. A '{' line while a record is
 *   open means the open one was cut short: it is reported, and the new one read.
 *
 * Each record is then read by its members, whatever the layout: one with "resource" is a
 * recorded event, its time the recorded one; one without is a watch event, its resource
 * found from the object's apiVersion and kind, its time taken from the object itself:
 * the latest of its creationTimestamp, managedFields times, condition
 * lastTransitionTimes and the moment its deletion was asked for (deletionTimestamp less
 * the grace period). Times never go back: an event is never earlier than the one before.
 * BOOKMARK events are skipped; ERROR events are reported.
 *
 * Memory: the reader holds the read buffer (at least the current line) and the current
 * pretty record, each at most max_record bytes plus a read's worth; nothing grows with the
 * log. An over-long line is skipped to its end without being kept.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonarena.h"
#include "jsonspan.h"
#include "watchlog.h"
#include "json.h"
#include "timeutil.h"
#include "util.h"

#define WATCHLOG_READ_SIZE (64 * 1024)
#define WATCHLOG_MAX_RECORD ((size_t)64 * 1024 * 1024)

struct watchlog {
	FILE *f;
	char *name;
	size_t max_record;
	enum watchlog_format format;

	char *buf;			/* bytes read, not yet consumed: [start, end) */
	size_t cap, start, end;
	int eof;			/* f is exhausted (or failed) */
	int read_failed;		/* a read error, reported once */

	const char *line_text;		/* the current line, without its newline or CR */
	size_t line_len;
	int line_has_newline;		/* the current line ended with a newline */
	unsigned long line;		/* its number */
	int repeat;			/* the next read_line returns the current line again */

	struct buf record;		/* the pretty record being gathered */
	unsigned long record_line;	/* the line it started on; 0: none open */
	unsigned long garbage_first;	/* lines of text outside any record; 0: none */
	unsigned long garbage_last;
	int resync;			/* skipping the rest of a bad record, up to a '{' */
	int read_errno;

	double last_time;
};

/* What read_line found. */
enum line_result { LINE_OK, LINE_END, LINE_TOO_LONG };

struct watchlog *
watchlog_new(FILE *f, const char *name)
{
	struct watchlog *log = xcalloc(1, sizeof *log);

	log->f = f;
	log->name = xstrdup(name);
	log->max_record = WATCHLOG_MAX_RECORD;
	log->cap = WATCHLOG_READ_SIZE;
	log->buf = xmalloc(log->cap);
	buf_init(&log->record);
	return log;
}

void
watchlog_free(struct watchlog *log)
{
	if (log == NULL)
		return;
	free(log->name);
	free(log->buf);
	buf_free(&log->record);
	free(log);
}

void
watchlog_set_max_record(struct watchlog *log, size_t max)
{
	log->max_record = max;
}

enum watchlog_format
watchlog_format(const struct watchlog *log)
{
	return log->format;
}

void
watchlog_event_clear(struct watchlog_event *ev)
{
	cJSON_Delete(ev->object);
	free(ev->text);
	memset(ev, 0, sizeof *ev);
}

/* --- lines ---------------------------------------------------------------------------- */

/* Reads more of f into the buffer, making room first; 0 at the end of f. */
static size_t
watchlog_fill(struct watchlog *log)
{
	size_t n;

	if (log->eof)
		return 0;
	if (log->start > 0) {
		memmove(log->buf, log->buf + log->start, log->end - log->start);
		log->end -= log->start;
		log->start = 0;
	}
	if (log->cap - log->end < WATCHLOG_READ_SIZE) {
		log->cap = log->end + WATCHLOG_READ_SIZE;
		log->buf = xrealloc(log->buf, log->cap);
	}
	n = fread(log->buf + log->end, 1, log->cap - log->end, log->f);
	log->end += n;
	if (n == 0) {
		log->eof = 1;
		if (ferror(log->f)) {
			log->read_failed = 1;
			log->read_errno = errno;
		}
	}
	return n;
}

/* Drops what is buffered and reads up to the end of the current (over-long) line. */
static void
watchlog_skip_rest_of_line(struct watchlog *log)
{
	for (;;) {
		char *nl = memchr(log->buf + log->start, '\n', log->end - log->start);

		if (nl != NULL) {
			log->start = (size_t)(nl - log->buf) + 1;
			return;
		}
		log->start = log->end = 0;
		if (watchlog_fill(log) == 0)
			return;
	}
}

/* Makes the next line of the log the current one. */
static enum line_result
watchlog_read_line(struct watchlog *log)
{
	size_t scanned = 0, len;
	char *nl;

	if (log->repeat) {
		log->repeat = 0;
		return LINE_OK;
	}
	for (;;) {
		nl = memchr(log->buf + log->start + scanned, '\n',
		    log->end - log->start - scanned);
		if (nl != NULL)
			break;
		scanned = log->end - log->start;
		if (scanned > log->max_record) {
			log->line++;
			watchlog_skip_rest_of_line(log);
			return LINE_TOO_LONG;
		}
		if (watchlog_fill(log) == 0)
			break;
	}
	if (nl == NULL && log->start == log->end)
		return LINE_END;
	log->line++;
	log->line_text = log->buf + log->start;
	if (nl != NULL) {
		len = (size_t)(nl - log->line_text);
		log->start += len + 1;
		log->line_has_newline = 1;
	} else {
		len = log->end - log->start;
		log->start = log->end;
		log->line_has_newline = 0;
	}
	if (len > 0 && log->line_text[len - 1] == '\r')
		len--;
	log->line_len = len;
	if (len > log->max_record)
		return LINE_TOO_LONG;
	return LINE_OK;
}

/* Returns 1 if the current line holds only white space. */
static int
line_is_blank(const struct watchlog *log)
{
	for (size_t i = 0; i < log->line_len; i++) {
		if (!isspace((unsigned char)log->line_text[i]))
			return 0;
	}
	return 1;
}

/* Returns the current line's length without trailing white space. */
static size_t
line_trimmed_len(const struct watchlog *log)
{
	size_t n = log->line_len;

	while (n > 0 && isspace((unsigned char)log->line_text[n - 1]))
		n--;
	return n;
}

/* --- times ----------------------------------------------------------------------------- */

int
watchlog_parse_time(const char *s, double *out)
{
	const char *dot = strchr(s, '.');
	time_t t;
	double frac = 0, scale = 0.1;

	if (time_parse_rfc3339(s, &t) != 0)
		return -1;
	if (dot != NULL && dot - s == 19) {
		for (const char *p = dot + 1; isdigit((unsigned char)*p); p++) {
			frac += (*p - '0') * scale;
			scale /= 10;
		}
	}
	*out = (double)t + frac;
	return 0;
}

/* Raises *latest to the time in item if it is a timestamp string. */
static void
time_max(const cJSON *item, double *latest)
{
	double t;

	if (cJSON_IsString(item) && watchlog_parse_time(item->valuestring, &t) == 0 &&
	    t > *latest)
		*latest = t;
}

/* The latest moment an object says something happened to it; 0 if it says none. */
static double
object_time(const cJSON *object)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(object, "metadata"), *item;
	const cJSON *deletion = cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp");
	const cJSON *grace = cJSON_GetObjectItemCaseSensitive(meta,
	    "deletionGracePeriodSeconds");
	double latest = 0, t;

	time_max(cJSON_GetObjectItemCaseSensitive(meta, "creationTimestamp"), &latest);
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(meta, "managedFields"))
		time_max(cJSON_GetObjectItemCaseSensitive(item, "time"), &latest);
	cJSON_ArrayForEach(item, json_path(object, "status.conditions"))
		time_max(cJSON_GetObjectItemCaseSensitive(item, "lastTransitionTime"), &latest);
	/* deletionTimestamp is when the grace period ends: the request came that much
	 * earlier. */
	if (cJSON_IsString(deletion) &&
	    watchlog_parse_time(deletion->valuestring, &t) == 0) {
		if (cJSON_IsNumber(grace))
			t -= grace->valuedouble;
		if (t > latest)
			latest = t;
	}
	return latest;
}

/* Writes t as RFC 3339 in UTC: whole seconds, or microseconds when it has a fraction. */
static void
time_text_set(double t, char out[WATCHLOG_TIME_SIZE])
{
	time_t sec = (time_t)t;
	long usec = (long)((t - (double)sec) * 1e6 + 0.5);
	char whole[TIME_RFC3339_SIZE];

	if (usec >= 1000000) {
		sec++;
		usec -= 1000000;
	}
	time_format_rfc3339(sec, whole);
	if (usec == 0)
		snprintf(out, WATCHLOG_TIME_SIZE, "%s", whole);
	else
		snprintf(out, WATCHLOG_TIME_SIZE, "%.19s.%06ldZ", whole, usec % 1000000);
}

/* --- records --------------------------------------------------------------------------- */

/* Sets *error to "NAME:LINE: message"; returns -1. */
static int __attribute__((format(printf, 4, 5)))
record_error(struct watchlog *log, unsigned long line, char **error, const char *fmt, ...)
{
	va_list ap;
	char *what;

	va_start(ap, fmt);
	what = xvasprintf(fmt, ap);
	va_end(ap);
	error_set(error, "%s:%lu: %s", log->name, line, what);
	free(what);
	return -1;
}

/* Returns the resource of apiVersion and kind, or NULL. */
static const struct resource *
resource_of_kind(const char *api_version, const char *kind)
{
	for (int i = 0; i < resource_count; i++) {
		if (strcmp(resource_all[i]->kind, kind) == 0 &&
		    strcmp(resource_all[i]->api_version, api_version) == 0)
			return resource_all[i];
	}
	return NULL;
}

/* Reads the type name s into *type; -1 if it is not an event type kept. */
static int
type_parse(const char *s, enum watchlog_type *type)
{
	if (strcmp(s, "ADDED") == 0)
		*type = WATCHLOG_ADDED;
	else if (strcmp(s, "MODIFIED") == 0)
		*type = WATCHLOG_MODIFIED;
	else if (strcmp(s, "DELETED") == 0)
		*type = WATCHLOG_DELETED;
	else
		return -1;
	return 0;
}

/* The resource a record's "metadataOf" names ({"resource","apiVersion","kind",
 * "namespaced"}, as watchrecord.c writes it for a resource discovery found), registered
 * on first sight; NULL with *why set when it is not one. */
static const struct resource *
metadata_resource(const cJSON *m, char **why)
{
	const char *name = json_string(m, "resource");
	const char *api_version = json_string(m, "apiVersion");
	const char *kind = json_string(m, "kind");
	const cJSON *namespaced = cJSON_GetObjectItemCaseSensitive(m, "namespaced");
	const struct resource *r;

	if (!cJSON_IsObject(m) || name == NULL || api_version == NULL || kind == NULL ||
	    *kind == '\0' || !cJSON_IsBool(namespaced)) {
		*why = xstrdup("want an object with strings resource, apiVersion, kind and "
		    "a boolean namespaced");
		return NULL;
	}
	r = resource_metadata_named(name, api_version, kind, cJSON_IsTrue(namespaced));
	if (r == NULL)
		*why = xasprintf("resource \"%s\" and apiVersion \"%s\" do not name a "
		    "resource", name, api_version);
	return r;
}

/* Names the value of a member for a message: its string, or its kind. */
static const char *
describe(const cJSON *item)
{
	return cJSON_IsString(item) ? item->valuestring : json_kind_name(item);
}

/* The members of an object's metadata that no cache keeps (as store_parse_object drops
 * them; a metadata resource's annotations, which it drops too, are taken out once the
 * record's resource is known). */
static const char *const dropped_metadata[] = { "managedFields", NULL };

/* Parses a record sqlkcm recorded the quick way: its object is copied without what the
 * store drops and only that copy is parsed (into *object_text, and set as the root's
 * "object"). NULL for another record (a kubectl --watch event), one the scanner does not
 * read, or one that is not valid JSON: the whole parse then reads it or says why. */
static cJSON *
record_parse_split(const char *text, size_t len, char **object_text, size_t *object_len)
{
	struct json_span span = { text, text + len }, object;
	cJSON *root = json_parse_object_except(span, "object", &object), *parsed;

	*object_text = NULL;
	if (root == NULL || object.start == NULL || *object.start != '{' ||
	    cJSON_GetObjectItemCaseSensitive(root, "object") != NULL) {
		cJSON_Delete(root);	/* (a second "object" key: the first one counts) */
		return NULL;
	}
	if (cJSON_GetObjectItemCaseSensitive(root, "resource") == NULL &&
	    cJSON_GetObjectItemCaseSensitive(root, "metadataOf") == NULL) {
		/* Not recorded by sqlkcm (kubectl --watch): the event's time is read from the
		 * object's managedFields. */
		cJSON_Delete(root);
		return NULL;
	}
	*object_text = json_copy_without(object, "metadata", dropped_metadata, object_len);
	if (*object_text == NULL ||
	    (parsed = json_arena_parse(*object_text, *object_len)) == NULL) {
		free(*object_text);
		*object_text = NULL;
		cJSON_Delete(root);
		return NULL;
	}
	cJSON_AddItemToObject(root, "object", parsed);
	return root;
}

/* Reads the record text (len bytes starting on line) into *ev. Returns 1 for an event,
 * 0 for a record to skip (a bookmark), -1 for a bad record. */
static int
watchlog_parse_record(struct watchlog *log, const char *text, size_t len, unsigned long line,
    int at_end, struct watchlog_event *ev, char **error)
{
	const char *end = text + len;
	cJSON *root, *object, *type, *time = NULL, *resource, *metadata_of, *uid;
	char *object_text = NULL;
	size_t object_len = 0;
	int recorded, rc = -1;

	root = record_parse_split(text, len, &object_text, &object_len);
	if (root == NULL)
		root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (root == NULL) {
		const char *at = cJSON_GetErrorPtr();
		unsigned long where = line;

		if (at_end)
			return record_error(log, line, error, "truncated record at the end of "
			    "the log");
		for (const char *p = text; at != NULL && p < at && p < text + len; p++)
			where += *p == '\n';
		if (where != line)
			return record_error(log, line, error, "not JSON (the error is on line "
			    "%lu)", where);
		return record_error(log, line, error, "not JSON");
	}
	while (end < text + len && isspace((unsigned char)*end))
		end++;
	if (end != text + len) {
		record_error(log, line, error, "text after the record's JSON object");
		goto out;
	}
	if (!cJSON_IsObject(root)) {
		record_error(log, line, error, "a record must be a JSON object, not %s",
		    json_kind_name(root));
		goto out;
	}
	type = cJSON_GetObjectItemCaseSensitive(root, "type");
	resource = cJSON_GetObjectItemCaseSensitive(root, "resource");
	metadata_of = cJSON_GetObjectItemCaseSensitive(root, "metadataOf");
	object = cJSON_GetObjectItemCaseSensitive(root, "object");
	recorded = resource != NULL || metadata_of != NULL;
	if (!cJSON_IsString(type)) {
		record_error(log, line, error, "\"type\" is %s, not a string",
		    type == NULL ? "missing" : json_kind_name(type));
		goto out;
	}
	if (!recorded && strcmp(type->valuestring, "BOOKMARK") == 0) {
		rc = 0;
		goto out;
	}
	if (!recorded && strcmp(type->valuestring, "ERROR") == 0) {
		const cJSON *message = cJSON_GetObjectItemCaseSensitive(object, "message");
		record_error(log, line, error, "an ERROR event: %s",
		    cJSON_IsString(message) ? message->valuestring : "(no message)");
		goto out;
	}
	if (type_parse(type->valuestring, &ev->type) != 0) {
		record_error(log, line, error, "unknown event type \"%s\"", type->valuestring);
		goto out;
	}
	if (!cJSON_IsObject(object)) {
		record_error(log, line, error, "\"object\" is %s, not an object",
		    object == NULL ? "missing" : json_kind_name(object));
		goto out;
	}
	uid = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(object,
	    "metadata"), "uid");
	if (!cJSON_IsString(uid) || *uid->valuestring == '\0') {
		record_error(log, line, error, "the object has no metadata.uid");
		goto out;
	}
	if (recorded) {
		time = cJSON_GetObjectItemCaseSensitive(root, "time");
		if (metadata_of != NULL) {
			char *why = NULL;

			if ((ev->resource = metadata_resource(metadata_of, &why)) == NULL) {
				record_error(log, line, error, "\"metadataOf\": %s", why);
				free(why);
				goto out;
			}
		} else if (!cJSON_IsString(resource) ||
		    (ev->resource = resource_find(resource->valuestring)) == NULL) {
			record_error(log, line, error, "unknown resource \"%s\"",
			    describe(resource));
			goto out;
		}
		if (!cJSON_IsString(time) || watchlog_parse_time(time->valuestring,
		    &ev->time) != 0 || strlen(time->valuestring) >= WATCHLOG_TIME_SIZE) {
			record_error(log, line, error, "\"time\" is not an RFC 3339 time: %s",
			    time == NULL ? "missing" : describe(time));
			goto out;
		}
	} else {
		const cJSON *api_version = cJSON_GetObjectItemCaseSensitive(object, "apiVersion");
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(object, "kind");

		if (!cJSON_IsString(api_version) || !cJSON_IsString(kind) ||
		    (ev->resource = resource_of_kind(api_version->valuestring,
		    kind->valuestring)) == NULL) {
			record_error(log, line, error, "unknown kind %s (apiVersion %s)",
			    describe(kind), describe(api_version));
			goto out;
		}
		ev->time = object_time(object);
	}
	/* Never earlier than the event before. */
	if (ev->time < log->last_time) {
		ev->time = log->last_time;
		time = NULL;
	}
	log->last_time = ev->time;
	if (time != NULL)
		snprintf(ev->time_text, sizeof ev->time_text, "%s", time->valuestring);
	else
		time_text_set(ev->time, ev->time_text);
	ev->line = line;
	ev->object = cJSON_DetachItemViaPointer(root, object);
	if (ev->resource->metadata_only && object_text != NULL) {
		/* Its annotations go too: the store prints what is left. */
		free(object_text);
		object_text = NULL;
	}
	ev->text = object_text;
	ev->text_len = object_len;
	object_text = NULL;
	rc = 1;
out:
	free(object_text);
	cJSON_Delete(root);
	if (rc != 1) {
		ev->resource = NULL;
		ev->time = 0;
	}
	return rc;
}

/* --- layouts --------------------------------------------------------------------------- */

/* Decides the layout from the first non-blank line (the current one). */
static void
watchlog_detect(struct watchlog *log)
{
	if (line_trimmed_len(log) == 1 && log->line_text[0] == '{')
		log->format = WATCHLOG_PRETTY;
	else
		log->format = WATCHLOG_LINES;
}

/* The pretty record gathered so far is complete: reads it. */
static int
watchlog_pretty_record(struct watchlog *log, int at_end, struct watchlog_event *ev,
    char **error)
{
	unsigned long line = log->record_line;
	int rc;

	log->record_line = 0;
	rc = watchlog_parse_record(log, log->record.data, log->record.len, line, at_end, ev,
	    error);
	if (log->record.cap > WATCHLOG_READ_SIZE * 4)
		buf_free(&log->record);
	buf_reset(&log->record);
	return rc;
}

/* Reports the text seen outside any record. */
static int
watchlog_garbage(struct watchlog *log, char **error)
{
	unsigned long first = log->garbage_first, last = log->garbage_last;

	log->garbage_first = log->garbage_last = 0;
	if (first == last)
		return record_error(log, first, error, "text outside any record (a record "
		    "starts with a line that begins with '{'); skipped it");
	return record_error(log, first, error, "text outside any record (a record starts "
	    "with a line that begins with '{'); skipped lines %lu to %lu", first, last);
}

/* Drops the pretty record being gathered, and what is left of it in the log. */
static void
watchlog_drop_record(struct watchlog *log)
{
	log->record_line = 0;
	buf_free(&log->record);
	log->resync = 1;
}

int
watchlog_next(struct watchlog *log, struct watchlog_event *ev, char **error)
{
	enum line_result lr;
	unsigned long line;
	size_t trimmed;
	int rc;

	memset(ev, 0, sizeof *ev);
	for (;;) {
		lr = watchlog_read_line(log);
		if (lr == LINE_END) {
			if (log->record_line != 0) {
				if ((rc = watchlog_pretty_record(log, 1, ev, error)) != 0)
					return rc;
				continue;
			}
			if (log->garbage_first != 0)
				return watchlog_garbage(log, error);
			if (log->read_failed) {
				log->read_failed = 0;
				return record_error(log, log->line + 1, error,
				    "cannot read the log: %s", strerror(log->read_errno));
			}
			return 0;
		}
		if (lr == LINE_TOO_LONG) {
			if (log->format == WATCHLOG_UNKNOWN)
				log->format = WATCHLOG_LINES;
			if (log->record_line != 0) {
				line = log->record_line;
				watchlog_drop_record(log);
				return record_error(log, line, error, "the record is longer than "
				    "%zu bytes (at line %lu)", log->max_record, log->line);
			}
			return record_error(log, log->line, error, "a line longer than %zu bytes",
			    log->max_record);
		}
		if (log->format == WATCHLOG_UNKNOWN) {
			if (line_is_blank(log))
				continue;
			watchlog_detect(log);
		}
		if (log->format == WATCHLOG_LINES) {
			if (line_is_blank(log))
				continue;
			rc = watchlog_parse_record(log, log->line_text, log->line_len, log->line,
			    !log->line_has_newline, ev, error);
			if (rc != 0)
				return rc;
			continue;
		}

		/* Pretty: a line that starts with '{' starts a record. */
		if (log->line_len > 0 && log->line_text[0] == '{') {
			if (log->garbage_first != 0) {
				log->repeat = 1;
				return watchlog_garbage(log, error);
			}
			if (log->record_line != 0) {
				line = log->record_line;
				log->record_line = 0;
				buf_reset(&log->record);
				log->repeat = 1;
				return record_error(log, line, error, "truncated record (the next "
				    "one starts on line %lu)", log->line);
			}
			log->resync = 0;
			log->record_line = log->line;
			buf_append(&log->record, log->line_text, log->line_len);
			buf_append(&log->record, "\n", 1);
			trimmed = line_trimmed_len(log);
			if (trimmed > 1 && log->line_text[trimmed - 1] == '}') {
				/* A whole record on one line. */
				if ((rc = watchlog_pretty_record(log, !log->line_has_newline, ev,
				    error)) != 0)
					return rc;
			}
			continue;
		}
		if (log->record_line == 0) {
			if (!log->resync && !line_is_blank(log)) {
				if (log->garbage_first == 0)
					log->garbage_first = log->line;
				log->garbage_last = log->line;
			}
			continue;
		}
		if (log->record.len + log->line_len + 1 > log->max_record) {
			line = log->record_line;
			watchlog_drop_record(log);
			return record_error(log, line, error, "the record is longer than %zu "
			    "bytes (at line %lu)", log->max_record, log->line);
		}
		buf_append(&log->record, log->line_text, log->line_len);
		buf_append(&log->record, "\n", 1);
		if (log->line_len > 0 && log->line_text[0] == '}') {
			if ((rc = watchlog_pretty_record(log, 0, ev, error)) != 0)
				return rc;
		}
	}
}
