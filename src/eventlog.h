/*
 * eventlog.h - read recorded event logs, one event at a time, for `sqlkcm replay`.
 */
#ifndef SQLKCM_EVENTLOG_H
#define SQLKCM_EVENTLOG_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "resource.h"

/* How the log's records are laid out, decided by its first non-blank line. */
enum eventlog_format {
	EVENTLOG_UNKNOWN,	/* nothing read yet, or an empty log */
	EVENTLOG_LINES,		/* one record per line: `run --record`, or compact watch events */
	EVENTLOG_PRETTY,	/* pretty-printed watch events (kubectl --watch -o json) */
};

enum eventlog_type { EVENTLOG_ADDED, EVENTLOG_MODIFIED, EVENTLOG_DELETED };

/* "2026-11-22T10:00:00.123456Z" and its NUL, with room to spare. */
#define EVENTLOG_TIME_SIZE 40

/* One event of the log. */
struct eventlog_event {
	unsigned long line;		/* the line the record starts on, from 1 */
	enum eventlog_type type;
	const struct resource *resource;
	cJSON *object;			/* owned: eventlog_event_clear frees it */
	double time;			/* Unix seconds, never less than the previous event's */
	char time_text[EVENTLOG_TIME_SIZE];	/* RFC 3339: as recorded, or derived */
};

struct eventlog;

/* Reads the log from f (not closed by eventlog_free); name is used in messages. */
struct eventlog *eventlog_new(FILE *f, const char *name);
void eventlog_free(struct eventlog *log);

/* Records longer than max bytes are errors (default 64 MiB). */
void eventlog_set_max_record(struct eventlog *log, size_t max);

/*
 * Reads the next event into *ev (zeroed first). Returns 1 for an event, 0 at the end of
 * the log, or -1 for a bad record, with *error "NAME:LINE: what is wrong"; the next call
 * goes on after it. Bookmarks are skipped; an ERROR event is a bad record. A read error
 * of f is reported once as a bad record, then the log ends.
 */
int eventlog_next(struct eventlog *log, struct eventlog_event *ev, char **error);

/* Frees the event's object and zeroes it. */
void eventlog_event_clear(struct eventlog_event *ev);

enum eventlog_format eventlog_format(const struct eventlog *log);

/* Parses an RFC 3339 time with its fraction into Unix seconds; -1 if it is not one. */
int eventlog_parse_time(const char *s, double *out);

#endif
