/*
 * json.h - small helpers over cJSON values.
 */
#ifndef SQLKCM_JSON_H
#define SQLKCM_JSON_H

#include <cjson/cJSON.h>

/* Returns the value at a dotted path of object keys ("status.phase") under object, or
 * NULL when a step is missing or not an object. */
const cJSON *json_path(const cJSON *object, const char *path);

/* Names the kind of a JSON value with its article ("an object", "null"), for messages. */
const char *json_kind_name(const cJSON *item);

#endif
