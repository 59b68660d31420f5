/*
 * discovery.h - which resources the apiserver serves: its aggregated discovery documents
 * (or the older per-group documents), the preferred version of each group.
 *
 * The preferred version of a resource is that of kube's ServerPreferredResources: the
 * group's preferred version (the first version of an aggregated APIGroupDiscovery that is
 * not stale), or, for a resource that version does not serve, the first other version
 * that does. Subresources ("pods/status") are never included.
 */
#ifndef SQLKCM_DISCOVERY_H
#define SQLKCM_DISCOVERY_H

#include <stddef.h>

struct client;

enum {
	DISCOVERY_LIST = 1,
	DISCOVERY_WATCH = 2,
	DISCOVERY_DELETE = 4,
	DISCOVERY_GET = 8,
	DISCOVERY_PATCH = 16,
	DISCOVERY_DELETECOLLECTION = 32
};

struct api_resource {
	char *group;		/* "" for the core group */
	char *version;		/* "v1" */
	char *resource;		/* plural: "configmaps" */
	char *kind;		/* "ConfigMap" */
	int namespaced;
	unsigned verbs;		/* DISCOVERY_* bits */
};

struct discovery {
	struct api_resource *items;
	size_t count;
	/* Group-versions that could not be read (stale, errors), comma-separated, or NULL. */
	char *failed;
};

/* Frees what d holds and leaves it empty. */
void discovery_clear(struct discovery *d);

/*
 * Appends to d the resources of one aggregated discovery document (an
 * APIGroupDiscoveryList, apidiscovery.k8s.io/v2, as GET /api and GET /apis return with the
 * Accept header DISCOVERY_ACCEPT), preferred versions only, and adds its stale
 * group-versions to d->failed. -1 with *error naming what is wrong for a document that is
 * not one (malformed JSON, wrong kind, missing fields, a field of the wrong type); nothing
 * is appended then. A resource already in d (same group and plural) is not added again.
 */
int discovery_parse_aggregated(const char *json, size_t len, struct discovery *d,
    char **error);

/*
 * The older documents, for servers without aggregated discovery: an APIGroupList (GET
 * /apis) gives the preferred groupVersion of each group (*group_versions: NULL-ended,
 * malloc'd, e.g. "apps/v1"; free each string and the array); an APIResourceList (GET
 * /api/v1, GET /apis/G/V) gives the resources of one group-version, appended to d as
 * discovery_parse_aggregated does.
 */
int discovery_parse_group_list(const char *json, size_t len, char ***group_versions,
    char **error);
int discovery_parse_resource_list(const char *json, size_t len, struct discovery *d,
    char **error);

/* Keeps only the resources the garbage collector watches: list, watch and delete, not
 * ignored (events of the core group and of events.k8s.io). */
void discovery_keep_deletable(struct discovery *d);

/*
 * Finds the resource of apiVersion ("apps/v1", "v1") and kind in d, or NULL (kube's REST
 * mapping of an owner reference). Also accepts a match of group and kind in another version
 * when the exact version is absent: the owner's apiVersion may be an older version of the
 * group, and kube's RESTMapper maps group and kind to the served resource.
 */
const struct api_resource *discovery_find_kind(const struct discovery *d,
    const char *api_version, const char *kind);

#define DISCOVERY_ACCEPT \
	"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

/*
 * Fetches the whole discovery asynchronously over client: GET /api and GET /apis with
 * DISCOVERY_ACCEPT; a response that is not an aggregated document (an older server) is
 * followed by GET /api/V for the core versions it lists, and GET /apis/G/V for every
 * version of every group of the APIGroupList (as client-go does, so that a resource only a
 * non-preferred version serves is found). A 404 for /api is an empty core group, as
 * client-go has it.
 *
 * Calls done once, from the loop, with the result: d's contents belong to done, which
 * either discovery_clears them or takes them (copies *d); the struct itself is freed
 * after done returns. error is NULL when everything was read; otherwise d holds what
 * could be read and error says what could not: the group-versions in d->failed (stale,
 * or their request failed), or a whole document (/api, /apis) when d->failed does not
 * name the loss.
 *
 * Returns a handle to cancel with discovery_fetch_cancel (after which done is never
 * called); the handle is valid until done is called.
 */
struct discovery_fetch;
struct discovery_fetch *discovery_fetch_start(struct client *client,
    void (*done)(struct discovery *d, const char *error, void *arg), void *arg);
void discovery_fetch_cancel(struct discovery_fetch *f);

#endif
