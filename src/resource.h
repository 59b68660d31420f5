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
	int index;		/* position in resource_all (a metadata resource: after them),
				 * for per-resource state */
	int metadata_only;	/* listed and watched as PartialObjectMetadata into
				 * cache_objects (one table for every such resource) */
	int namespaced;
	const char *plural;	/* the path's last segment, when name is not it (a metadata
				 * resource of a group: "widgets" of "widgets.example.com") */
};

/* The Accept headers of metadata-only requests: a LIST answers a PartialObjectMetadataList,
 * a WATCH streams events of PartialObjectMetadata. */
#define RESOURCE_ACCEPT_METADATA_LIST \
	"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
#define RESOURCE_ACCEPT_METADATA \
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


/* Every resource sqlkcm can cache; resource_count of them. */
extern const struct resource *const resource_all[];
extern const int resource_count;

/*
 * True for the resources whose watch events the informers hold for --watch-batch-period
 * and commit together: Leases and Nodes, whose kubelets' heartbeats are most of an idle
 * cluster's events and whose readers (the node lifecycle controller, counting grace
 * periods of tens of seconds) lose nothing by the wait, and the metadata-only resources
 * of the garbage collector. Everything else is applied in the loop turn it arrives in:
 * a controller that chains writes on its events (a StatefulSet rolling its pods one by
 * one) would otherwise wait a period at every step, where kube-controller-manager waits
 * none.
 */
int resource_held_in_batches(const struct resource *r);

/* The longest group, version or resource name accepted (a DNS subdomain's). */
#define RESOURCE_NAME_MAX 253

/* True when s can be a group, version or resource name in a request path: 1 to
 * RESOURCE_NAME_MAX of [A-Za-z0-9._-], not "." or "..". */
int resource_name_valid(const char *s);

/* Returns the resource with plural name, or NULL. */
const struct resource *resource_find(const char *name);

/*
 * The resources discovery finds (every one the garbage collector watches) are cached by
 * their metadata only. Returns the resource of group/version/plural, registered on first
 * use (its name is plural for the core group, "plural.group" otherwise, as kubectl
 * spells it); a resource is never freed before resource_metadata_free_all, so informers
 * and queued work may keep pointers to it. A typed resource of resource_all with the same
 * group and plural is returned instead: it is already cached whole.
 */
const struct resource *resource_metadata(const char *group, const char *version,
    const char *plural, const char *kind, int namespaced);

/* Returns the length of an apiVersion's group ("apps/v1": 4; "v1", the core group: 0). */
size_t resource_group_length(const char *api_version);

/* The same from the resource's name ("plural" or "plural.group") and apiVersion, as the
 * informers table and a record name it; NULL when they do not name a resource. */
const struct resource *resource_metadata_named(const char *name, const char *api_version,
    const char *kind, int namespaced);

/* Returns the resource (typed or metadata) named name, or NULL. */
const struct resource *resource_find_any(const char *name);

/* Returns the resource of an apiVersion and kind among those known (typed ones first,
 * then metadata ones: the exact version, or else another version of the same group), or
 * NULL: kube's REST mapping of an owner reference. */
const struct resource *resource_find_kind(const char *api_version, const char *kind);

/* True when r's rows are in cache_objects (every metadata resource, and the typed ones
 * whose controllers need no columns of their own), told apart by its resource column. */
int resource_in_objects(const struct resource *r);

/* How many resources have an index (resource_all's and the metadata ones). */
int resource_index_count(void);

/* Frees every metadata resource (at exit). */
void resource_metadata_free_all(void);

/* Binds one typed column's value for object. */
int resource_column_bind(const struct resource_column *c, sqlite3_stmt *stmt, int index,
    const cJSON *object);

#endif
