/*
 * watchlog.h - read recorded event logs, one event at a time, for `sqlkcm replay`.
 */
#ifndef SQLKCM_WATCHLOG_H
#define SQLKCM_WATCHLOG_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "resource.h"

/* How the log's records are laid out, decided by its first non-blank line. */
enum watchlog_format {
	WATCHLOG_UNKNOWN,	/* nothing read yet, or an empty log */
	WATCHLOG_LINES,		/* one record per line: `run --record`, or compact watch events */
	WATCHLOG_PRETTY,	/* pretty-printed watch events (kubectl --watch -o json) */
};

enum watchlog_type { WATCHLOG_ADDED, WATCHLOG_MODIFIED, WATCHLOG_DELETED };

/* "2026-11-22T10:00:00.123456Z" and its NUL, with room to spare. */
#define WATCHLOG_TIME_SIZE 40

/* One event of the log. */
struct watchlog_event {
	unsigned long line;		/* the line the record starts on, from 1 */
	enum watchlog_type type;
	const struct resource *resource;
	cJSON *object;			/* owned: watchlog_event_clear frees it */
	char *text;			/* owned: object's text as the store keeps it (see
					 * store_parse_object), or NULL: print object */
	size_t text_len;
	double time;			/* Unix seconds, never less than the previous event's */
	char time_text[WATCHLOG_TIME_SIZE];	/* RFC 3339: as recorded, or derived */
};

struct watchlog;

/* Reads the log from f (not closed by watchlog_free); name is used in messages. */
struct watchlog *watchlog_new(FILE *f, const char *name);
void watchlog_free(struct watchlog *log);

/* Records longer than max bytes are errors (default 64 MiB). */
void watchlog_set_max_record(struct watchlog *log, size_t max);

/*
 * Reads the next event into *ev (zeroed first). Returns 1 for an event, 0 at the end of
 * the log, or -1 for a bad record, with *error "NAME:LINE: what is wrong"; the next call
 * goes on after it. Bookmarks are skipped; an ERROR event is a bad record. A read error
 * of f is reported once as a bad record, then the log ends.
 */
int watchlog_next(struct watchlog *log, struct watchlog_event *ev, char **error);

/* Frees the event's object and zeroes it. */
void watchlog_event_clear(struct watchlog_event *ev);

enum watchlog_format watchlog_format(const struct watchlog *log);

/* Parses an RFC 3339 time with its fraction into Unix seconds; -1 if it is not one. */
int watchlog_parse_time(const char *s, double *out);

#endif
