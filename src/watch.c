/*
 * watch.c - one event of a Kubernetes WATCH stream.
 *
 * The apiserver writes each event as {"type": TYPE, "object": OBJECT}: TYPE is ADDED,
 * MODIFIED or DELETED with the object as it now is (or was last), BOOKMARK with an object
 * that carries only metadata.resourceVersion, or ERROR with a Status object (a 410 Expired
 * one means the watch must be restarted from a new LIST). jsonstream.c finds where each
 * event ends; this file parses one and hands its object over to the caller, which owns it.
 * Field names are matched exactly, as the apiserver writes them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "util.h"
#include "json.h"
#include "watch.h"

static const struct {
	const char *name;
	enum watch_event_type type;
} watch_event_types[] = {
	{ "ADDED", WATCH_ADDED },
	{ "MODIFIED", WATCH_MODIFIED },
	{ "DELETED", WATCH_DELETED },
	{ "BOOKMARK", WATCH_BOOKMARK },
	{ "ERROR", WATCH_ERROR },
};

#define WATCH_EVENT_TYPES (sizeof watch_event_types / sizeof watch_event_types[0])

/* Returns a copy of s cut to a few dozen bytes, with bytes that are not printable ASCII
 * replaced by '?', so a message quoting input stays short and readable. */
static char *
watch_quote(const char *s)
{
	size_t n = strlen(s), max = 40;
	char *q = xstrndup(s, n > max ? max : n);

	for (char *p = q; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e || *p == '"')
			*p = '?';
	}
	if (n > max) {
		char *longer = xasprintf("%s...", q);
		free(q);
		q = longer;
	}
	return q;
}

/* Returns the wire name of an event type. */
const char *
watch_event_type_name(enum watch_event_type type)
{
	for (size_t i = 0; i < WATCH_EVENT_TYPES; i++) {
		if (watch_event_types[i].type == type)
			return watch_event_types[i].name;
	}
	return "UNKNOWN";
}

/* Sets *type from the event's "type" member; returns 0 or -1 with *error set. */
static int
watch_event_parse_type(const cJSON *root, enum watch_event_type *type, char **error)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "type");
	char *quoted;

	if (item == NULL)
		return error_set(error, "watch event has no \"type\"");
	if (!cJSON_IsString(item))
		return error_set(error, "watch event \"type\" is %s, not a string",
		    json_kind_name(item));
	for (size_t i = 0; i < WATCH_EVENT_TYPES; i++) {
		if (strcmp(item->valuestring, watch_event_types[i].name) == 0) {
			*type = watch_event_types[i].type;
			return 0;
		}
	}
	quoted = watch_quote(item->valuestring);
	error_set(error, "watch event type \"%s\" is unknown (want ADDED, MODIFIED, DELETED, "
	    "BOOKMARK or ERROR)", quoted);
	free(quoted);
	return -1;
}

/* Parses one event and takes its object out of the parsed tree. */
int
watch_event_parse(const char *text, size_t len, struct watch_event *out, char **error)
{
	const char *end = NULL;
	cJSON *root, *object;

	out->type = WATCH_ERROR;
	out->object = NULL;
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (root == NULL) {
		size_t at = end != NULL && end >= text && end <= text + len ? (size_t)(end - text) : 0;
		return error_set(error, "watch event is not valid JSON (at byte %zu of %zu)", at, len);
	}
	while (end < text + len && strchr(" \t\r\n", *end) != NULL && *end != '\0')
		end++;
	if (end != text + len) {
		cJSON_Delete(root);
		return error_set(error, "watch event has bytes after its JSON value (at byte %zu "
		    "of %zu)", (size_t)(end - text), len);
	}
	if (!cJSON_IsObject(root)) {
		error_set(error, "watch event is %s, not an object", json_kind_name(root));
		cJSON_Delete(root);
		return -1;
	}
	if (watch_event_parse_type(root, &out->type, error) == -1) {
		cJSON_Delete(root);
		return -1;
	}
	object = cJSON_GetObjectItemCaseSensitive(root, "object");
	if (object == NULL || !cJSON_IsObject(object)) {
		if (object == NULL)
			error_set(error, "%s watch event has no \"object\"",
			    watch_event_type_name(out->type));
		else
			error_set(error, "%s watch event \"object\" is %s, not an object",
			    watch_event_type_name(out->type), json_kind_name(object));
		cJSON_Delete(root);
		out->type = WATCH_ERROR;
		return -1;
	}
	out->object = cJSON_DetachItemViaPointer(root, object);
	cJSON_Delete(root);
	return 0;
}

int
watch_event_split(const char *text, size_t len, struct watch_event *out,
    struct json_span *object, char **error)
{
	struct json_span span = { text, text + len };
	cJSON *root = json_parse_object_except(span, "object", object);
	char *ignored = NULL;

	out->type = WATCH_ERROR;
	out->object = NULL;
	if (root == NULL || object->start == NULL || *object->start != '{' ||
	    watch_event_parse_type(root, &out->type, &ignored) != 0) {
		/* Bad, or not what the scanner reads: the whole parse decides, and says why. */
		free(ignored);
		cJSON_Delete(root);
		object->start = object->end = NULL;
		return watch_event_parse(text, len, out, error);
	}
	cJSON_Delete(root);
	if (out->type == WATCH_ADDED || out->type == WATCH_MODIFIED ||
	    out->type == WATCH_DELETED)
		return 0;
	out->object = cJSON_ParseWithLength(object->start, (size_t)(object->end -
	    object->start));
	object->start = object->end = NULL;
	if (out->object == NULL)
		return watch_event_parse(text, len, out, error);
	return 0;
}

/* Frees the event's object. */
void
watch_event_clear(struct watch_event *ev)
{
	cJSON_Delete(ev->object);
	ev->object = NULL;
}
