/*
 * json.c - small helpers over cJSON values.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

const cJSON *
json_path(const cJSON *object, const char *path)
{
	const cJSON *node = object;
	const char *p = path;
	char key[64];

	while (node != NULL && *p != '\0') {
		const char *dot = strchr(p, '.');
		size_t len = dot != NULL ? (size_t)(dot - p) : strlen(p);

		if (!cJSON_IsObject(node) || len >= sizeof key)
			return NULL;
		memcpy(key, p, len);
		key[len] = '\0';
		node = cJSON_GetObjectItemCaseSensitive(node, key);
		p += len;
		if (*p == '.')
			p++;
	}
	return node;
}

/* d as a long long, held within the type's range (a cast outside it is undefined). */
static long long
clamp_ll(double d)
{
	if (d != d)
		return 0;
	if (d >= 9223372036854775807.0)
		return LLONG_MAX;
	if (d <= -9223372036854775808.0)
		return LLONG_MIN;
	return (long long)d;
}

long long
json_int(const cJSON *object, const char *path, long long def)
{
	const cJSON *v = json_path(object, path);
	long long n;
	char *end;

	if (cJSON_IsNumber(v))
		return clamp_ll(v->valuedouble);
	/* A large integer kept as its text (json_parse_exact). */
	if (cJSON_IsRaw(v) && v->valuestring != NULL) {
		errno = 0;
		n = strtoll(v->valuestring, &end, 10);
		if (errno == 0 && *end == '\0')
			return n;
		return clamp_ll(v->valuedouble);
	}
	return def;
}

const char *
json_string(const cJSON *object, const char *path)
{
	const cJSON *v = json_path(object, path);

	return cJSON_IsString(v) ? v->valuestring : "";
}

const cJSON *
json_annotation(const cJSON *object, const char *key)
{
	const cJSON *annotations = json_path(object, "metadata.annotations");

	return cJSON_IsObject(annotations) ?
	    cJSON_GetObjectItemCaseSensitive(annotations, key) : NULL;
}

int
json_is_set(const cJSON *object, const char *path)
{
	const cJSON *v = json_path(object, path);

	return v != NULL && !cJSON_IsNull(v);
}

void
json_set(cJSON *o, const char *name, cJSON *item)
{
	if (cJSON_GetObjectItemCaseSensitive(o, name) != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(o, name, item);
	else
		cJSON_AddItemToObject(o, name, item);
}

cJSON *
json_child_object(cJSON *o, const char *name)
{
	cJSON *child = cJSON_GetObjectItemCaseSensitive(o, name);

	if (cJSON_IsObject(child))
		return child;
	child = cJSON_CreateObject();
	json_set(o, name, child);
	return child;
}

const char *
json_kind_name(const cJSON *item)
{
	if (cJSON_IsObject(item))
		return "an object";
	if (cJSON_IsArray(item))
		return "an array";
	if (cJSON_IsString(item))
		return "a string";
	if (cJSON_IsNumber(item))
		return "a number";
	if (cJSON_IsBool(item))
		return "a boolean";
	if (cJSON_IsNull(item))
		return "null";
	return "an unknown value";
}

cJSON *
json_merge_patch(cJSON *target, const cJSON *patch)
{
	const cJSON *m;

	if (!cJSON_IsObject(patch)) {
		cJSON_Delete(target);
		return cJSON_Duplicate(patch, 1);
	}
	if (!cJSON_IsObject(target)) {
		cJSON_Delete(target);
		target = cJSON_CreateObject();
	}
	cJSON_ArrayForEach(m, patch) {
		cJSON *old;

		if (m->string == NULL)
			continue;
		if (cJSON_IsNull(m)) {
			cJSON_DeleteItemFromObjectCaseSensitive(target, m->string);
			continue;
		}
		old = cJSON_DetachItemFromObjectCaseSensitive(target, m->string);
		cJSON_AddItemToObject(target, m->string, json_merge_patch(old, m));
	}
	return target;
}
