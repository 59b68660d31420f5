/*
 * json.h - small helpers over cJSON values.
 */
#ifndef SQLKCM_JSON_H
#define SQLKCM_JSON_H

#include <cjson/cJSON.h>

/* Returns the value at a dotted path of object keys ("status.phase") under object, or
 * NULL when a step is missing or not an object. */
const cJSON *json_path(const cJSON *object, const char *path);

/* The integer at path under object (a large one kept as its text too, held within the
 * range of long long), or def when absent or not a number. */
long long json_int(const cJSON *object, const char *path, long long def);

/* The string at path under object, or "" when absent or not a string. */
const char *json_string(const cJSON *object, const char *path);

/* The annotation key of object (metadata.annotations[key]: keys have dots, which
 * json_path cannot name), or NULL. */
const cJSON *json_annotation(const cJSON *object, const char *key);

/* 1 when path under object holds a value other than null ("metadata.deletionTimestamp"). */
int json_is_set(const cJSON *object, const char *path);

/* Sets member name of object o to item (taken), replacing the one there or adding it. */
void json_set(cJSON *o, const char *name, cJSON *item);

/* Member name of object o, made an empty object first when it is absent or not one. */
cJSON *json_child_object(cJSON *o, const char *name);

/* Names the kind of a JSON value with its article ("an object", "null"), for messages. */
const char *json_kind_name(const cJSON *item);

/* target with patch applied as a JSON merge patch (RFC 7386): a member of patch that is
 * null removes target's, an object member merges into target's, any other replaces it; a
 * patch that is not an object replaces target whole. target is taken (NULL: none) and the
 * result returned (a new object), patch is copied from. */
cJSON *json_merge_patch(cJSON *target, const cJSON *patch);

#endif
