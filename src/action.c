/*
 * action.c - the actions a sync returns, and their JSON-lines form for plan and replay.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "json.h"
#include "resource.h"

struct action *
action_append(struct action **actions, int *n)
{
	struct action *a;

	*actions = xrealloc(*actions, (size_t)(*n + 1) * sizeof **actions);
	a = &(*actions)[(*n)++];
	memset(a, 0, sizeof *a);
	return a;
}

void
action_clear(struct action *a)
{
	free(a->namespace);
	free(a->name);
	free(a->uid);
	free(a->reason);
	free(a->precondition_rv);
	if (!a->body_borrowed)
		cJSON_Delete(a->body);
	cJSON_Delete(a->failure_context);
	free(a->done_message);
	free(a->failed_message);
	memset(a, 0, sizeof *a);
}

void
sync_result_add_event(struct sync_result *r, const char *type, const char *reason,
    char *message)
{
	struct sync_event *ev;

	r->events = xrealloc(r->events, (size_t)(r->nevents + 1) * sizeof *r->events);
	ev = &r->events[r->nevents++];
	memset(ev, 0, sizeof *ev);
	ev->type = type;
	ev->reason = reason;
	ev->message = message;
}

void
sync_result_add_object_event(struct sync_result *r, const struct resource *resource,
    cJSON *object, const char *type, const char *reason, char *message)
{
	sync_result_add_event(r, type, reason, message);
	r->events[r->nevents - 1].resource = resource;
	r->events[r->nevents - 1].object = object;
}

void
sync_result_clear(struct sync_result *r)
{
	for (int i = 0; i < r->nclaims; i++)
		action_clear(&r->claims[i]);
	for (int i = 0; i < r->nmanage; i++)
		action_clear(&r->manage[i]);
	for (int i = 0; i < r->nwrites; i++)
		action_clear(&r->writes[i]);
	for (int i = 0; i < r->nconfirm_absent; i++)
		action_clear(&r->confirm_absent[i]);
	free(r->confirm_absent);
	for (int i = 0; i < r->nevents; i++) {
		free(r->events[i].message);
		cJSON_Delete(r->events[i].object);
	}
	free(r->writes);
	free(r->events);
	free(r->claims);
	free(r->manage);
	if (r->status != NULL) {
		action_clear(r->status);
		free(r->status);
	}
	free(r->key);
	free(r->owner_uid);
	free(r->stale_resource);
	free(r->waiting);
	cJSON_Delete(r->owner);
	memset(r, 0, sizeof *r);
}

/* Adds name: s to o, or null when s is NULL. */
static void
add_string_or_null(cJSON *o, const char *name, const char *s)
{
	if (s != NULL)
		cJSON_AddStringToObject(o, name, s);
	else
		cJSON_AddNullToObject(o, name);
}

/* Starts a line's object: extra's members, then controller and key. */
static cJSON *
line_new(const struct sync_result *r, const cJSON *extra)
{
	cJSON *line = cJSON_CreateObject();
	const cJSON *m;

	if (cJSON_IsObject(extra)) {
		cJSON_ArrayForEach(m, extra)
			cJSON_AddItemToObject(line, m->string, cJSON_Duplicate(m, 1));
	}
	cJSON_AddStringToObject(line, "controller", r->controller);
	cJSON_AddStringToObject(line, "key", r->key);
	return line;
}

/* Appends line to out as one line of compact JSON, and frees it. */
static void
line_emit(cJSON *line, struct buf *out)
{
	char *text = cJSON_PrintUnformatted(line);

	buf_append_str(out, text);
	buf_append(out, "\n", 1);
	free(text);
	cJSON_Delete(line);
}

/* Writes the line for one action. */
static void
action_print(const struct sync_result *r, const struct action *a, const cJSON *extra,
    struct buf *out)
{
	cJSON *line = line_new(r, extra);

	cJSON_AddStringToObject(line, "action", a->verb);
	cJSON_AddStringToObject(line, "resource", a->resource->name);
	add_string_or_null(line, "namespace", a->namespace);
	add_string_or_null(line, "name", a->name);
	add_string_or_null(line, "uid", a->uid);
	add_string_or_null(line, "reason", a->reason);
	if (a->propagation != NULL)
		cJSON_AddStringToObject(line, "propagationPolicy", a->propagation);
	if (a->delete_now)
		cJSON_AddNumberToObject(line, "gracePeriodSeconds", 0);
	if (a->subresource != NULL)
		cJSON_AddStringToObject(line, "subresource", a->subresource);
	if (a->type == ACTION_UPDATE_STATUS) {
		/* The status is what changes; the rest of the object is the cached one. */
		cJSON_AddItemToObject(line, "status", cJSON_Duplicate(
		    cJSON_GetObjectItemCaseSensitive(a->body, "status"), 1));
	} else if (a->body != NULL) {
		cJSON *body = cJSON_Duplicate(a->body, 1), *hidden;
		const cJSON *item;

		/* A credential is never printed: its data's members keep their names only. */
		if (a->body_hidden &&
		    cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(body, "data"))) {
			hidden = cJSON_CreateObject();
			cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(body, "data"))
				cJSON_AddStringToObject(hidden, item->string, "(hidden)");
			cJSON_ReplaceItemInObjectCaseSensitive(body, "data", hidden);
		}
		cJSON_AddItemToObject(line, "body", body);
	}
	line_emit(line, out);
}

/* Writes a line saying the key waits, and why. */
static void
wait_print(const struct sync_result *r, const char *why, const cJSON *extra, struct buf *out)
{
	cJSON *line = line_new(r, extra);

	cJSON_AddStringToObject(line, "action", "wait");
	cJSON_AddStringToObject(line, "reason", why);
	line_emit(line, out);
}

/* Writes a line for an event the sync records. */
static void
event_print(const struct sync_result *r, const struct sync_event *ev, const cJSON *extra,
    struct buf *out)
{
	cJSON *line = line_new(r, extra);

	cJSON_AddStringToObject(line, "action", "event");
	if (ev->object != NULL) {
		const cJSON *meta = json_path(ev->object, "metadata");
		const char *ns = json_string(meta, "namespace");

		/* about another object than the key's: named as an action's object is */
		cJSON_AddStringToObject(line, "resource", ev->resource != NULL ?
		    ev->resource->name : "");
		cJSON_AddStringToObject(line, "namespace", ns);
		cJSON_AddStringToObject(line, "name", json_string(meta, "name"));
	}
	cJSON_AddStringToObject(line, "type", ev->type);
	cJSON_AddStringToObject(line, "reason", ev->reason);
	cJSON_AddStringToObject(line, "message", ev->message);
	line_emit(line, out);
}

void
sync_result_print(const struct sync_result *r, const cJSON *extra, struct buf *out)
{
	if (r->stale) {
		char *why = xasprintf("the cache has not caught up with the controller's own "
		    "writes to %s", r->stale_resource != NULL ? r->stale_resource : "?");
		wait_print(r, why, extra, out);
		free(why);
		return;
	}
	for (int i = 0; i < r->nevents; i++)
		event_print(r, &r->events[i], extra, out);
	for (int i = 0; i < r->nconfirm_absent; i++)
		action_print(r, &r->confirm_absent[i], extra, out);
	for (int i = 0; i < r->nclaims; i++)
		action_print(r, &r->claims[i], extra, out);
	for (int i = 0; i < r->nwrites; i++)
		action_print(r, &r->writes[i], extra, out);
	if (r->waiting != NULL)
		wait_print(r, r->waiting, extra, out);
	for (int i = 0; i < r->nmanage; i++)
		action_print(r, &r->manage[i], extra, out);
	/* A status sent only if the creations or deletions fail is not planned. */
	if (r->status != NULL && r->status->body != NULL)
		action_print(r, r->status, extra, out);
}
