/*
 * jsonarena.h - parsing the objects the informers receive, with fewer trips to malloc.
 *
 * A parsed 2.5 KB pod is about 150 cJSON nodes and strings; malloc and free of them were
 * a sixth of the store's ingest time. json_arena_parse puts them one after the other in
 * chunks of 256 KiB instead, and a chunk goes back to the system when the last of its
 * allocations is freed, whatever the order. The tree is an ordinary cJSON tree: freed
 * with cJSON_Delete, changed as any other (what is added to it later comes from malloc).
 * Every other cJSON allocation of the process still goes to malloc, so that what cJSON
 * prints can be freed with free() as before.
 */
#ifndef SQLKCM_JSONARENA_H
#define SQLKCM_JSONARENA_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* cJSON_ParseWithLength of len bytes of text, its nodes in the arena. */
cJSON *json_arena_parse(const char *text, size_t len);

/* What the arena holds, for tests and the curious: chunks in use (the spare included) and
 * allocations not yet freed. */
struct json_arena_stats {
	int chunks;
	long live;
};
void json_arena_stats(struct json_arena_stats *out);

#endif
