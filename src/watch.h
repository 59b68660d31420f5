/*
 * watch.h - one event of a Kubernetes WATCH stream: {"type": "ADDED", "object": {...}}.
 */
#ifndef SQLKCM_WATCH_H
#define SQLKCM_WATCH_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "jsonspan.h"

enum watch_event_type {
	WATCH_ADDED,
	WATCH_MODIFIED,
	WATCH_DELETED,
	WATCH_BOOKMARK,		/* object carries only metadata.resourceVersion (and annotations) */
	WATCH_ERROR,		/* object is a Status; see apistatus.h */
};

struct watch_event {
	enum watch_event_type type;
	cJSON *object;		/* owned; freed by watch_event_clear */
};

/* Parses one event from len bytes of JSON (not NUL-terminated) into *out. Returns 0, or -1
 * with *error naming what is wrong: not JSON (and where), not an object, "type" missing,
 * not a string or unknown, "object" missing or not an object. On error *out is cleared. */
int watch_event_parse(const char *text, size_t len, struct watch_event *out, char **error);

/* As watch_event_parse, except that the object of an ADDED, MODIFIED or DELETED event is
 * not parsed: out->object is NULL and *object is its text within text, for the caller to
 * parse as it keeps it (store_parse_object). Other events' objects are parsed, and
 * *object is empty, as it is when the scanner cannot split the event (a key written with
 * escapes) and the whole was parsed instead. If the object text turns out not to parse,
 * watch_event_parse of the event says why. */
int watch_event_split(const char *text, size_t len, struct watch_event *out,
    struct json_span *object, char **error);

/* Frees the event's object; the event may be parsed into again. */
void watch_event_clear(struct watch_event *ev);

/* Returns the wire name of a type: "ADDED", ... */
const char *watch_event_type_name(enum watch_event_type type);

#endif
