/*
 * json.c - small helpers over cJSON values.
 */
#include "config.h"

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
