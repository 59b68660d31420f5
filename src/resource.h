/*
 * resource.h - the resources sqlkcm caches: their API paths, tables and typed columns.
 */
#ifndef SQLKCM_RESOURCE_H
#define SQLKCM_RESOURCE_H

#include <cjson/cJSON.h>
#include <sqlite3.h>

/* A typed column of a resource's cache table, copied out of the object. */
struct resource_column {
	const char *name;
	enum resource_column_type {
		COLUMN_TEXT,		/* a string field; NULL when absent */
		COLUMN_INTEGER,		/* a number field; default_value when absent */
		COLUMN_BOOLEAN,		/* a bool field as 0/1; default_value when absent */
		COLUMN_JSON,		/* any field, as compact JSON text; NULL when absent */
		COLUMN_CUSTOM,		/* computed by bind() */
	} type;
	const char *path;	/* dotted path from the object's root, e.g. "status.phase" */
	long long default_value;
	/* COLUMN_CUSTOM: binds the column's value for object at index. */
	int (*bind)(sqlite3_stmt *stmt, int index, const cJSON *object);
};

struct resource {
	const char *name;	/* the plural of the API path and the informers table: "pods" */
	const char *kind;	/* "Pod" */
	const char *api_version;	/* "v1", "apps/v1" */
	const char *path;	/* the collection's path: "/api/v1/pods" */
	const char *table;	/* the cache table: "cache_pods" */
	const struct resource_column *columns;	/* typed columns, ended by a NULL name */
	int index;		/* position in resource_all, for per-resource state */
};

/* Every resource sqlkcm can cache; resource_count of them. */
extern const struct resource *const resource_all[];
extern const int resource_count;

/* Returns the resource with plural name, or NULL. */
const struct resource *resource_find(const char *name);

/* Binds one typed column's value for object. */
int resource_column_bind(const struct resource_column *c, sqlite3_stmt *stmt, int index,
    const cJSON *object);

#endif
