/*
 * discovery.c - API discovery as kube-controller-manager's garbage collector does it
 * (GetDeletableResources, over client-go's ServerPreferredResources).
 *
 * Two forms. An apiserver with aggregated discovery (beta and on by default since 1.27,
 * GA in 1.30) answers GET /api and GET /apis, when the Accept header asks for it, with an
 * APIGroupDiscoveryList: every group, its versions in order of preference, and every
 * resource of each version with its kind, scope and verbs; two requests cover the whole
 * cluster. An older server answers with the legacy documents: /api lists the core versions
 * (APIVersions), /apis the groups and their versions (APIGroupList), and the resources of
 * each group-version take one more request (an APIResourceList at /api/v1, /apis/G/V).
 *
 * The rules are client-go's (aggregated_discovery.go, discovery_client.go):
 * - A version marked freshness "Stale" (an aggregated apiserver that did not answer the
 *   kube-apiserver) is failed: its resources are not read and it is named in failed. The
 *   group's preferred version is its first version that is not stale.
 * - A resource is taken at its group's preferred version or, when that version does not
 *   serve it, at the first version that does: ServerPreferredResources keeps one version
 *   per group and resource, not one per group. Both forms list the preferred version
 *   first (the legacy fetch orders the versions so), so "the first one wins" is the rule.
 * - Subresources are never taken: the aggregated form lists them apart, the legacy one as
 *   "pods/status", skipped for its '/'.
 * - An aggregated resource without a responseKind is skipped: client-go keeps it only as
 *   the parent of its subresources.
 * - A resource's group and version are those of the document that lists it, not those of
 *   its responseKind (which the apiserver leaves empty for built-in types).
 *
 * Strictness. Every field read is type-checked; a field of the wrong type, or a required
 * one missing (a version's "version", a resource's "resource" and "scope", a legacy
 * resource's "kind"), rejects the whole document with an error that says where
 * ("items[3].versions[0]: no version"), and nothing of it is kept: the caller, told so,
 * keeps what it had rather than act on a view of the cluster cut short. Fields the Go
 * types mark omitempty (versions, resources, freshness) may be absent, and null stands
 * for an absent list, as Go writes a nil slice. Group, version and resource names become
 * request paths and informer keys, so they must be made of [A-Za-z0-9._-].
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "apistatus.h"
#include "client.h"
#include "discovery.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "util.h"


/* --- the result ----------------------------------------------------------------------- */

/* Frees the strings of r. */
static void
api_resource_clear(struct api_resource *r)
{
	free(r->group);
	free(r->version);
	free(r->resource);
	free(r->kind);
	memset(r, 0, sizeof *r);
}

void
discovery_clear(struct discovery *d)
{
	size_t i;

	for (i = 0; i < d->count; i++)
		api_resource_clear(&d->items[i]);
	free(d->items);
	free(d->failed);
	memset(d, 0, sizeof *d);
}

/* Returns the resource of group and plural in d, or NULL. */
static const struct api_resource *
discovery_find_resource(const struct discovery *d, const char *group, const char *resource)
{
	size_t i;

	for (i = 0; i < d->count; i++) {
		if (strcmp(d->items[i].group, group) == 0 &&
		    strcmp(d->items[i].resource, resource) == 0)
			return &d->items[i];
	}
	return NULL;
}

/* Appends r to d, taking its strings. */
static void
discovery_append(struct discovery *d, struct api_resource *r)
{
	d->items = xrealloc(d->items, (d->count + 1) * sizeof *d->items);
	d->items[d->count++] = *r;
	memset(r, 0, sizeof *r);
}

/* Appends a resource (its strings copied) unless d already has its group and plural:
 * the first version seen of a resource is the one kept. */
static void
discovery_add(struct discovery *d, const char *group, const char *version,
    const char *resource, const char *kind, int namespaced, unsigned verbs)
{
	struct api_resource r;

	if (discovery_find_resource(d, group, resource) != NULL)
		return;
	r.group = xstrdup(group);
	r.version = xstrdup(version);
	r.resource = xstrdup(resource);
	r.kind = xstrdup(kind);
	r.namespaced = namespaced;
	r.verbs = verbs;
	discovery_append(d, &r);
}

/* Adds a group-version to the failed list. */
static void
discovery_add_failed(struct discovery *d, const char *group_version)
{
	char *failed;

	if (d->failed == NULL) {
		d->failed = xstrdup(group_version);
		return;
	}
	failed = xasprintf("%s,%s", d->failed, group_version);
	free(d->failed);
	d->failed = failed;
}

/* Moves what from holds to the end of to, but for the resources to has already, and
 * leaves from empty. */
static void
discovery_move(struct discovery *to, struct discovery *from)
{
	size_t i;

	for (i = 0; i < from->count; i++) {
		struct api_resource *r = &from->items[i];

		if (discovery_find_resource(to, r->group, r->resource) != NULL)
			api_resource_clear(r);
		else
			discovery_append(to, r);
	}
	if (from->failed != NULL)
		discovery_add_failed(to, from->failed);
	free(from->items);
	free(from->failed);
	memset(from, 0, sizeof *from);
}

/* Returns "group/version", or "version" for the core group (malloc'd). */
static char *
group_version_string(const char *group, const char *version)
{
	return *group != '\0' ? xasprintf("%s/%s", group, version) : xstrdup(version);
}

/* --- reading JSON --------------------------------------------------------------------- */

/* Where in which document a parser is, for its messages. */
struct place {
	const char *doc;	/* "discovery", "discovery: /apis" */
	char at[160];		/* "items[3].versions[0]", or "" at the top */
};

/* Replaces the control characters of a message, which may quote a hostile document, so
 * that it stays one line of the log. */
static void
message_sanitize(char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
	}
}

/* Sets *error to "DOC: AT: message" and returns -1. */
static int __attribute__((format(printf, 3, 4)))
place_error(const struct place *p, char **error, const char *fmt, ...)
{
	va_list ap;
	char *message;

	va_start(ap, fmt);
	message = xvasprintf(fmt, ap);
	va_end(ap);
	message_sanitize(message);
	error_set(error, "%s: %s%s%s", p->doc, p->at, *p->at != '\0' ? ": " : "", message);
	free(message);
	return -1;
}

/* Returns the name of a cJSON type for messages. */
static const char *
type_name(int type)
{
	switch (type) {
	case cJSON_String:
		return "a string";
	case cJSON_Array:
		return "an array";
	case cJSON_Object:
		return "an object";
	default:
		return "a boolean";
	}
}

/*
 * Sets *out to member name of o when it is of type (cJSON_String, cJSON_Array,
 * cJSON_Object, or cJSON_True|cJSON_False for a boolean), to NULL when it is absent or
 * null. -1 with an error for another type, or for an absent one that is required.
 */
static int
member_get(const struct place *p, const cJSON *o, const char *name, int type, int required,
    const cJSON **out, char **error)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, name);

	*out = NULL;
	if (item == NULL || cJSON_IsNull(item)) {
		if (required)
			return place_error(p, error, "no %s", name);
		return 0;
	}
	if ((item->type & 0xff & type) == 0)
		return place_error(p, error, "%s is %s, not %s", name, json_kind_name(item),
		    type_name(type));
	*out = item;
	return 0;
}

/* Sets *out to the string member name of o, NULL when absent; a required one must be there
 * and not empty. */
static int
member_string(const struct place *p, const cJSON *o, const char *name, int required,
    const char **out, char **error)
{
	const cJSON *item;

	*out = NULL;
	if (member_get(p, o, name, cJSON_String, required, &item, error) != 0)
		return -1;
	if (item == NULL)
		return 0;
	if (required && *item->valuestring == '\0')
		return place_error(p, error, "%s is empty", name);
	*out = item->valuestring;
	return 0;
}

/* Checks that name (what says which field) is valid. */
static int
name_check(const struct place *p, const char *what, const char *name, char **error)
{
	if (!resource_name_valid(name))
		return place_error(p, error, "%s \"%.64s\" is not a valid name", what, name);
	return 0;
}

/* Sets *out to the DISCOVERY_* bits of the verbs array of o (absent or null: none). */
static int
verbs_parse(const struct place *p, const cJSON *o, unsigned *out, char **error)
{
	static const struct {
		const char *name;
		unsigned bit;
	} verbs[] = {
		{ "list", DISCOVERY_LIST }, { "watch", DISCOVERY_WATCH },
		{ "delete", DISCOVERY_DELETE }, { "get", DISCOVERY_GET },
		{ "patch", DISCOVERY_PATCH }, { "deletecollection", DISCOVERY_DELETECOLLECTION },
	};
	const cJSON *array, *verb;
	size_t i, n = 0;

	*out = 0;
	if (member_get(p, o, "verbs", cJSON_Array, 0, &array, error) != 0)
		return -1;
	cJSON_ArrayForEach(verb, array) {
		if (!cJSON_IsString(verb))
			return place_error(p, error, "verbs[%zu] is %s, not a string", n,
			    json_kind_name(verb));
		for (i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
			if (strcmp(verb->valuestring, verbs[i].name) == 0)
				*out |= verbs[i].bit;
		}
		n++;
	}
	return 0;
}

/* Parses a whole document; NULL with an error when it is not one JSON value. */
static cJSON *
document_parse(const char *json, size_t len, const char *doc, char **error)
{
	const char *end = NULL;
	cJSON *root;

	if (json == NULL || text_is_blank(json, len)) {
		error_set(error, "%s: empty document", doc);
		return NULL;
	}
	if ((root = cJSON_ParseWithLengthOpts(json, len, &end, 0)) == NULL) {
		error_set(error, "%s: not JSON (at byte %zu)", doc,
		    end != NULL && end >= json ? (size_t)(end - json) : (size_t)0);
		return NULL;
	}
	if (end != NULL && end >= json && (size_t)(end - json) < len &&
	    !text_is_blank(end, len - (size_t)(end - json))) {
		error_set(error, "%s: not JSON (data after the document at byte %zu)", doc,
		    (size_t)(end - json));
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

/* Checks that root is an object of kind (and apiVersion, when one is given). */
static int
document_check_kind(const struct place *p, const cJSON *root, const char *kind,
    const char *api_version, const char *api_version_alt, char **error)
{
	const char *s;

	if (!cJSON_IsObject(root))
		return place_error(p, error, "the document is %s, not an object",
		    json_kind_name(root));
	if (member_string(p, root, "kind", 1, &s, error) != 0)
		return -1;
	if (strcmp(s, kind) != 0)
		return place_error(p, error, "kind is \"%.64s\", not %s", s, kind);
	if (api_version == NULL)
		return 0;
	if (member_string(p, root, "apiVersion", 1, &s, error) != 0)
		return -1;
	if (strcmp(s, api_version) != 0 &&
	    (api_version_alt == NULL || strcmp(s, api_version_alt) != 0))
		return place_error(p, error, "apiVersion is \"%.64s\", not %s", s, api_version);
	return 0;
}

/* --- the aggregated form -------------------------------------------------------------- */

/* Reads one resource of group/version into t. */
static int
aggregated_resource(struct place *p, const cJSON *r, const char *group, const char *version,
    struct discovery *t, char **error)
{
	const char *name, *scope, *kind = NULL;
	const cJSON *response_kind;
	unsigned verbs;

	if (!cJSON_IsObject(r))
		return place_error(p, error, "is %s, not an object", json_kind_name(r));
	if (member_string(p, r, "resource", 1, &name, error) != 0 ||
	    member_string(p, r, "scope", 1, &scope, error) != 0 ||
	    member_get(p, r, "responseKind", cJSON_Object, 0, &response_kind, error) != 0 ||
	    verbs_parse(p, r, &verbs, error) != 0)
		return -1;
	if (response_kind != NULL) {
		if (member_string(p, response_kind, "kind", 0, &kind, error) != 0)
			return -1;
	}
	if (strcmp(scope, "Namespaced") != 0 && strcmp(scope, "Cluster") != 0)
		return place_error(p, error, "scope is \"%.64s\", neither Namespaced nor Cluster",
		    scope);
	if (strchr(name, '/') != NULL)
		return 0;	/* a subresource, which this form should not list here */
	if (name_check(p, "resource", name, error) != 0)
		return -1;
	if (kind == NULL || *kind == '\0')
		return 0;	/* only the parent of its subresources, for client-go */
	discovery_add(t, group, version, name, kind, strcmp(scope, "Namespaced") == 0, verbs);
	return 0;
}

/* Reads one version of group into t: its resources, or its name in failed when stale. */
static int
aggregated_version(struct place *p, size_t i, size_t j, const cJSON *v, const char *group,
    struct discovery *t, char **error)
{
	const char *version, *freshness;
	const cJSON *resources, *r;
	char *group_version;
	size_t k = 0;

	snprintf(p->at, sizeof p->at, "items[%zu].versions[%zu]", i, j);
	if (!cJSON_IsObject(v))
		return place_error(p, error, "is %s, not an object", json_kind_name(v));
	if (member_string(p, v, "version", 1, &version, error) != 0 ||
	    name_check(p, "version", version, error) != 0 ||
	    member_string(p, v, "freshness", 0, &freshness, error) != 0 ||
	    member_get(p, v, "resources", cJSON_Array, 0, &resources, error) != 0)
		return -1;
	if (freshness != NULL && strcmp(freshness, "Stale") == 0) {
		group_version = group_version_string(group, version);
		discovery_add_failed(t, group_version);
		free(group_version);
		return 0;
	}
	cJSON_ArrayForEach(r, resources) {
		snprintf(p->at, sizeof p->at, "items[%zu].versions[%zu].resources[%zu]", i, j, k);
		if (aggregated_resource(p, r, group, version, t, error) != 0)
			return -1;
		k++;
	}
	return 0;
}

/* Reads an APIGroupDiscoveryList into d (all of it, or nothing on error). */
static int
aggregated_parse(const cJSON *root, const char *doc, struct discovery *d, char **error)
{
	struct discovery t;
	struct place p;
	const cJSON *items, *item, *metadata, *versions, *v;
	const char *group;
	size_t i = 0, j;

	memset(&t, 0, sizeof t);
	memset(&p, 0, sizeof p);
	p.doc = doc;
	if (document_check_kind(&p, root, "APIGroupDiscoveryList", "apidiscovery.k8s.io/v2",
	    "apidiscovery.k8s.io/v2beta1", error) != 0 ||
	    member_get(&p, root, "items", cJSON_Array, 1, &items, error) != 0)
		return -1;
	cJSON_ArrayForEach(item, items) {
		snprintf(p.at, sizeof p.at, "items[%zu]", i);
		if (!cJSON_IsObject(item)) {
			place_error(&p, error, "is %s, not an object", json_kind_name(item));
			goto fail;
		}
		/* The core group of /api has no name at all. */
		group = NULL;
		if (member_get(&p, item, "metadata", cJSON_Object, 0, &metadata, error) != 0 ||
		    (metadata != NULL &&
		    member_string(&p, metadata, "name", 0, &group, error) != 0))
			goto fail;
		if (group == NULL)
			group = "";
		if (*group != '\0' && name_check(&p, "group", group, error) != 0)
			goto fail;
		if (member_get(&p, item, "versions", cJSON_Array, 0, &versions, error) != 0)
			goto fail;
		j = 0;
		cJSON_ArrayForEach(v, versions) {
			if (aggregated_version(&p, i, j, v, group, &t, error) != 0)
				goto fail;
			j++;
		}
		i++;
	}
	discovery_move(d, &t);
	return 0;

fail:
	discovery_clear(&t);
	return -1;
}

int
discovery_parse_aggregated(const char *json, size_t len, struct discovery *d, char **error)
{
	cJSON *root;
	int rc;

	if ((root = document_parse(json, len, "discovery", error)) == NULL)
		return -1;
	rc = aggregated_parse(root, "discovery", d, error);
	cJSON_Delete(root);
	return rc;
}

/* --- the legacy form ------------------------------------------------------------------ */

/* A NULL-ended list of strings being built. */
struct string_list {
	char **items;
	size_t count;
};

/* Appends s (taken). */
static void
string_list_add(struct string_list *l, char *s)
{
	l->items = xrealloc(l->items, (l->count + 2) * sizeof *l->items);
	l->items[l->count++] = s;
	l->items[l->count] = NULL;
}

/* Frees a NULL-ended list of strings. */
static void
string_list_free(char **items)
{
	char **s;

	if (items == NULL)
		return;
	for (s = items; *s != NULL; s++)
		free(*s);
	free(items);
}

/* Returns the list as a NULL-ended array, never NULL (an empty list is { NULL }). */
static char **
string_list_detach(struct string_list *l)
{
	char **items = l->items != NULL ? l->items : xcalloc(1, sizeof *items);

	memset(l, 0, sizeof *l);
	return items;
}

/* Reads the versions of an APIVersions (GET /api of an older server): "v1". */
static int
versions_parse(const cJSON *root, const char *doc, char ***out, char **error)
{
	struct string_list l;
	struct place p;
	const cJSON *versions, *v;
	size_t i = 0;

	memset(&l, 0, sizeof l);
	memset(&p, 0, sizeof p);
	p.doc = doc;
	if (document_check_kind(&p, root, "APIVersions", NULL, NULL, error) != 0 ||
	    member_get(&p, root, "versions", cJSON_Array, 0, &versions, error) != 0)
		return -1;
	cJSON_ArrayForEach(v, versions) {
		snprintf(p.at, sizeof p.at, "versions[%zu]", i++);
		if (!cJSON_IsString(v)) {
			place_error(&p, error, "is %s, not a string", json_kind_name(v));
			goto fail;
		}
		if (name_check(&p, "version", v->valuestring, error) != 0)
			goto fail;
		string_list_add(&l, xstrdup(v->valuestring));
	}
	*out = string_list_detach(&l);
	return 0;

fail:
	string_list_free(l.items);
	return -1;
}

/*
 * Reads an APIGroupList into group-versions ("apps/v1"): with preferred_only the preferred
 * version of each group (its preferredVersion, else its first version), else every
 * version of every group, the preferred one first in its group.
 */
static int
group_list_parse(const cJSON *root, const char *doc, int preferred_only, char ***out,
    char **error)
{
	struct string_list l;
	struct place p;
	const cJSON *groups, *g, *versions, *v, *preferred_version;
	const char *name, *version, *preferred;
	size_t i = 0, j;

	memset(&l, 0, sizeof l);
	memset(&p, 0, sizeof p);
	p.doc = doc;
	if (document_check_kind(&p, root, "APIGroupList", NULL, NULL, error) != 0 ||
	    member_get(&p, root, "groups", cJSON_Array, 1, &groups, error) != 0)
		return -1;
	cJSON_ArrayForEach(g, groups) {
		snprintf(p.at, sizeof p.at, "groups[%zu]", i);
		if (!cJSON_IsObject(g)) {
			place_error(&p, error, "is %s, not an object", json_kind_name(g));
			goto fail;
		}
		preferred = NULL;
		if (member_string(&p, g, "name", 1, &name, error) != 0 ||
		    name_check(&p, "group", name, error) != 0 ||
		    member_get(&p, g, "versions", cJSON_Array, 0, &versions, error) != 0 ||
		    member_get(&p, g, "preferredVersion", cJSON_Object, 0, &preferred_version,
		    error) != 0)
			goto fail;
		if (preferred_version != NULL) {
			snprintf(p.at, sizeof p.at, "groups[%zu].preferredVersion", i);
			if (member_string(&p, preferred_version, "version", 0, &preferred,
			    error) != 0)
				goto fail;
			if (preferred != NULL && *preferred == '\0')
				preferred = NULL;
			if (preferred != NULL && name_check(&p, "version", preferred, error) != 0)
				goto fail;
		}
		/* Every version is checked, whichever are kept. */
		j = 0;
		cJSON_ArrayForEach(v, versions) {
			snprintf(p.at, sizeof p.at, "groups[%zu].versions[%zu]", i, j++);
			if (!cJSON_IsObject(v)) {
				place_error(&p, error, "is %s, not an object", json_kind_name(v));
				goto fail;
			}
			if (member_string(&p, v, "version", 1, &version, error) != 0 ||
			    name_check(&p, "version", version, error) != 0)
				goto fail;
			if (preferred == NULL && preferred_only)
				preferred = version;
		}
		if (preferred_only) {
			if (preferred != NULL)
				string_list_add(&l, xasprintf("%s/%s", name, preferred));
			i++;
			continue;
		}
		/* The preferred version first, if the group lists it, then the others. */
		cJSON_ArrayForEach(v, versions) {
			version = json_string(v, "version");
			if (preferred != NULL && strcmp(version, preferred) == 0)
				string_list_add(&l, xasprintf("%s/%s", name, version));
		}
		cJSON_ArrayForEach(v, versions) {
			version = json_string(v, "version");
			if (preferred == NULL || strcmp(version, preferred) != 0)
				string_list_add(&l, xasprintf("%s/%s", name, version));
		}
		i++;
	}
	*out = string_list_detach(&l);
	return 0;

fail:
	string_list_free(l.items);
	return -1;
}

int
discovery_parse_group_list(const char *json, size_t len, char ***group_versions,
    char **error)
{
	cJSON *root;
	int rc;

	*group_versions = NULL;
	if ((root = document_parse(json, len, "discovery", error)) == NULL)
		return -1;
	rc = group_list_parse(root, "discovery", 1, group_versions, error);
	cJSON_Delete(root);
	return rc;
}

/* Reads an APIResourceList into d (all of it, or nothing on error); when expected is not
 * NULL, the list must be of that group-version. */
static int
resource_list_parse(const cJSON *root, const char *doc, const char *expected,
    struct discovery *d, char **error)
{
	struct discovery t;
	struct place p;
	const cJSON *resources, *r, *namespaced;
	const char *group_version, *slash, *name, *kind;
	char *group = NULL;
	const char *version;
	unsigned verbs;
	size_t i = 0;

	memset(&t, 0, sizeof t);
	memset(&p, 0, sizeof p);
	p.doc = doc;
	if (document_check_kind(&p, root, "APIResourceList", NULL, NULL, error) != 0 ||
	    member_string(&p, root, "groupVersion", 1, &group_version, error) != 0 ||
	    member_get(&p, root, "resources", cJSON_Array, 0, &resources, error) != 0)
		return -1;
	if (expected != NULL && strcmp(group_version, expected) != 0)
		return place_error(&p, error, "groupVersion is \"%.64s\", not the %s asked for",
		    group_version, expected);
	if ((slash = strchr(group_version, '/')) != NULL) {
		group = xstrndup(group_version, (size_t)(slash - group_version));
		version = slash + 1;
		if (name_check(&p, "group", group, error) != 0)
			goto fail;
	} else {
		group = xstrdup("");
		version = group_version;
	}
	if (name_check(&p, "version", version, error) != 0)
		goto fail;
	cJSON_ArrayForEach(r, resources) {
		snprintf(p.at, sizeof p.at, "resources[%zu]", i++);
		if (!cJSON_IsObject(r)) {
			place_error(&p, error, "is %s, not an object", json_kind_name(r));
			goto fail;
		}
		if (member_string(&p, r, "name", 1, &name, error) != 0 ||
		    member_string(&p, r, "kind", 1, &kind, error) != 0 ||
		    member_get(&p, r, "namespaced", cJSON_True | cJSON_False, 0, &namespaced,
		    error) != 0 ||
		    verbs_parse(&p, r, &verbs, error) != 0)
			goto fail;
		if (strchr(name, '/') != NULL)
			continue;	/* a subresource: "pods/status" */
		if (name_check(&p, "resource", name, error) != 0)
			goto fail;
		discovery_add(&t, group, version, name, kind, cJSON_IsTrue(namespaced), verbs);
	}
	free(group);
	discovery_move(d, &t);
	return 0;

fail:
	free(group);
	discovery_clear(&t);
	return -1;
}

int
discovery_parse_resource_list(const char *json, size_t len, struct discovery *d,
    char **error)
{
	cJSON *root;
	int rc;

	if ((root = document_parse(json, len, "discovery", error)) == NULL)
		return -1;
	rc = resource_list_parse(root, "discovery", NULL, d, error);
	cJSON_Delete(root);
	return rc;
}

/* --- what the garbage collector watches ------------------------------------------------ */

/* Returns true for the resources the garbage collector ignores (graph_builder.go's
 * ignoredResources): events come and go too fast to be worth an informer. */
static int
resource_is_ignored(const struct api_resource *r)
{
	return strcmp(r->resource, "events") == 0 &&
	    (strcmp(r->group, "") == 0 || strcmp(r->group, "events.k8s.io") == 0);
}

void
discovery_keep_deletable(struct discovery *d)
{
	const unsigned needed = DISCOVERY_LIST | DISCOVERY_WATCH | DISCOVERY_DELETE;
	size_t i, kept = 0;

	for (i = 0; i < d->count; i++) {
		struct api_resource *r = &d->items[i];

		if ((r->verbs & needed) == needed && !resource_is_ignored(r))
			d->items[kept++] = *r;
		else
			api_resource_clear(r);
	}
	d->count = kept;
}

const struct api_resource *
discovery_find_kind(const struct discovery *d, const char *api_version, const char *kind)
{
	const struct api_resource *other = NULL;
	const char *slash, *version;
	size_t i, group_len;

	if (api_version == NULL || kind == NULL)
		return NULL;
	if ((slash = strchr(api_version, '/')) != NULL) {
		if (strchr(slash + 1, '/') != NULL)
			return NULL;
		group_len = (size_t)(slash - api_version);
		version = slash + 1;
	} else {
		group_len = 0;
		version = api_version;
	}
	for (i = 0; i < d->count; i++) {
		const struct api_resource *r = &d->items[i];

		if (strcmp(r->kind, kind) != 0 || strlen(r->group) != group_len ||
		    strncmp(r->group, api_version, group_len) != 0)
			continue;
		if (strcmp(r->version, version) == 0)
			return r;
		if (other == NULL)
			other = r;
	}
	return other;
}

/* --- fetching ------------------------------------------------------------------------- */

enum discovery_part_role {
	DISCOVERY_PART_API,		/* GET /api */
	DISCOVERY_PART_APIS,		/* GET /apis */
	DISCOVERY_PART_GROUP_VERSION,	/* GET /api/V or /apis/G/V, of an older server */
};

/* One request of a fetch and what it gave. */
struct discovery_part {
	struct discovery_fetch *fetch;
	enum discovery_part_role role;
	char *path;
	char *group_version;		/* of a DISCOVERY_PART_GROUP_VERSION */
	struct client_request *request;	/* while it is out */
	struct discovery result;
};

struct discovery_fetch {
	struct client *client;
	void (*done)(struct discovery *, const char *, void *);
	void *arg;
	/* In the order they were sent, which is the order their results are merged in:
	 * within a group, the preferred version first. */
	struct discovery_part **parts;
	size_t nparts;
	size_t pending;			/* parts whose request is out */
	struct buf errors;		/* "; "-separated */
};

static void discovery_fetch_answered(const struct client_response *, void *);

/* Sends GET path for a part of f. */
static void
discovery_fetch_send(struct discovery_fetch *f, enum discovery_part_role role,
    const char *path, const char *group_version)
{
	struct discovery_part *part = xcalloc(1, sizeof *part);

	part->fetch = f;
	part->role = role;
	part->path = xstrdup(path);
	part->group_version = group_version != NULL ? xstrdup(group_version) : NULL;
	f->parts = xrealloc(f->parts, (f->nparts + 1) * sizeof *f->parts);
	f->parts[f->nparts++] = part;
	part->request = client_get_as(f->client, path,
	    role == DISCOVERY_PART_GROUP_VERSION ? NULL : DISCOVERY_ACCEPT, NULL,
	    discovery_fetch_answered, part);
	f->pending++;
}

/* Notes what could not be read. */
static void __attribute__((format(printf, 2, 3)))
discovery_fetch_error(struct discovery_fetch *f, const char *fmt, ...)
{
	va_list ap;
	char *message;

	va_start(ap, fmt);
	message = xvasprintf(fmt, ap);
	va_end(ap);
	message_sanitize(message);
	if (f->errors.len > 0)
		buf_append_str(&f->errors, "; ");
	buf_append_str(&f->errors, message);
	free(message);
}

/* Frees f and every part, cancelling the requests still out. */
static void
discovery_fetch_free(struct discovery_fetch *f)
{
	size_t i;

	for (i = 0; i < f->nparts; i++) {
		struct discovery_part *part = f->parts[i];

		if (part->request != NULL)
			client_cancel(part->request);
		discovery_clear(&part->result);
		free(part->path);
		free(part->group_version);
		free(part);
	}
	free(f->parts);
	buf_free(&f->errors);
	free(f);
}

/* Every request is answered: merges the parts in order and tells the owner. */
static void
discovery_fetch_finish(struct discovery_fetch *f)
{
	struct discovery d;
	size_t i;

	memset(&d, 0, sizeof d);
	for (i = 0; i < f->nparts; i++)
		discovery_move(&d, &f->parts[i]->result);
	log_v(4, "discovery: %zu resources%s%s", d.count, d.failed != NULL ? ", failed " : "",
	    d.failed != NULL ? d.failed : "");
	f->done(&d, f->errors.len > 0 ? f->errors.data : NULL, f->arg);
	discovery_fetch_free(f);
}

/* Follows an older server's /api: each core version listed is a request. */
static int
discovery_fetch_legacy_api(struct discovery_fetch *f, const cJSON *root, const char *doc,
    char **error)
{
	char **versions, **v, *path;

	if (versions_parse(root, doc, &versions, error) != 0)
		return -1;
	for (v = versions; *v != NULL; v++) {
		path = xasprintf("/api/%s", *v);
		discovery_fetch_send(f, DISCOVERY_PART_GROUP_VERSION, path, *v);
		free(path);
	}
	string_list_free(versions);
	return 0;
}

/* Follows an older server's /apis: each version of each group is a request. */
static int
discovery_fetch_legacy_apis(struct discovery_fetch *f, const cJSON *root, const char *doc,
    char **error)
{
	char **group_versions, **gv, *path;

	if (group_list_parse(root, doc, 0, &group_versions, error) != 0)
		return -1;
	for (gv = group_versions; *gv != NULL; gv++) {
		path = xasprintf("/apis/%s", *gv);
		discovery_fetch_send(f, DISCOVERY_PART_GROUP_VERSION, path, *gv);
		free(path);
	}
	string_list_free(group_versions);
	return 0;
}

/* Reads the document of a part that was answered with a 2xx. */
static int
discovery_fetch_read(struct discovery_part *part, const struct client_response *resp,
    const char *doc, char **error)
{
	struct discovery_fetch *f = part->fetch;
	const char *kind, *legacy;
	cJSON *root;
	int rc;

	if ((root = document_parse(resp->body, resp->len, doc, error)) == NULL)
		return -1;
	if (part->role == DISCOVERY_PART_GROUP_VERSION) {
		rc = resource_list_parse(root, doc, part->group_version, &part->result, error);
		cJSON_Delete(root);
		return rc;
	}
	/* A root document: aggregated, or the legacy one of an older server. */
	kind = json_string(root, "kind");
	legacy = part->role == DISCOVERY_PART_API ? "APIVersions" : "APIGroupList";
	if (strcmp(kind, "APIGroupDiscoveryList") == 0) {
		rc = aggregated_parse(root, doc, &part->result, error);
		if (rc == 0 && part->result.failed != NULL)
			discovery_fetch_error(f, "%s: stale: %s", doc, part->result.failed);
	} else if (strcmp(kind, legacy) == 0) {
		rc = part->role == DISCOVERY_PART_API ?
		    discovery_fetch_legacy_api(f, root, doc, error) :
		    discovery_fetch_legacy_apis(f, root, doc, error);
	} else if (!cJSON_IsObject(root)) {
		rc = error_set(error, "%s: the document is %s, not an object", doc,
		    json_kind_name(root));
	} else {
		rc = error_set(error, "%s: kind is \"%.64s\", neither APIGroupDiscoveryList nor %s",
		    doc, kind, legacy);
	}
	cJSON_Delete(root);
	return rc;
}

/* A request of the fetch ended. */
static void
discovery_fetch_answered(const struct client_response *resp, void *arg)
{
	struct discovery_part *part = arg;
	struct discovery_fetch *f = part->fetch;
	struct api_status st;
	const char *reason;
	char *doc = xasprintf("discovery: %s", part->path), *error = NULL;

	part->request = NULL;
	f->pending--;
	if (resp->transport_error != NULL || resp->http_code == 0) {
		error = xasprintf("%s: %s", doc, resp->transport_error != NULL ?
		    resp->transport_error : "no response");
	} else if (resp->http_code < 200 || resp->http_code > 299) {
		/* An aggregated apiserver may answer 404 for /api: no core group, for client-go. */
		if (part->role != DISCOVERY_PART_API || resp->http_code != 404) {
			api_status_from_response(resp->http_code, resp->body, resp->len,
			    resp->retry_after, &st);
			reason = *st.reason_text != '\0' ? st.reason_text :
			    api_reason_name(st.reason);
			error = xasprintf("%s: HTTP %d %s: %s", doc, resp->http_code, reason,
			    st.message);
			api_status_clear(&st);
		}
	} else if (discovery_fetch_read(part, resp, doc, &error) != 0 && error == NULL) {
		error = xasprintf("%s: unreadable", doc);
	}
	if (error != NULL) {
		discovery_fetch_error(f, "%s", error);
		if (part->role == DISCOVERY_PART_GROUP_VERSION)
			discovery_add_failed(&part->result, part->group_version);
	}
	free(error);
	free(doc);
	if (f->pending == 0)
		discovery_fetch_finish(f);
}

struct discovery_fetch *
discovery_fetch_start(struct client *client,
    void (*done)(struct discovery *d, const char *error, void *arg), void *arg)
{
	struct discovery_fetch *f = xcalloc(1, sizeof *f);

	f->client = client;
	f->done = done;
	f->arg = arg;
	buf_init(&f->errors);
	discovery_fetch_send(f, DISCOVERY_PART_API, "/api", NULL);
	discovery_fetch_send(f, DISCOVERY_PART_APIS, "/apis", NULL);
	return f;
}

void
discovery_fetch_cancel(struct discovery_fetch *f)
{
	if (f != NULL)
		discovery_fetch_free(f);
}
