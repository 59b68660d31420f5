/*
 * endpointslicemirroring.c - the EndpointSlice mirroring controller (kube's
 * endpointslice-mirroring-controller, "endpointslicemirroring" in --controllers): the
 * Endpoints of a Service without a selector, which people write, mirrored into
 * EndpointSlices managed by endpointslicemirroring-controller.k8s.io, so that what reads
 * only slices (kube-proxy) sees them.
 *
 * A key is an Endpoints' namespace/name. A sync, from the cache:
 *
 * 1. The Endpoints is not cached, carries endpointslice.kubernetes.io/skip-mirror: "true"
 *    or a leader-election record, its Service is not cached, or its Service has a
 *    selector: the slices mirrored for it are deleted (when the Endpoints is not cached,
 *    after a live read confirms it is gone).
 * 2. The cache has not caught up with this controller's last write for it
 *    (consistency.c, kube's slice tracker): wait, retry with backoff.
 * 3. kube's mirroring reconciler: the Endpoints' subsets, repacked; per subset its ports
 *    and at most --mirroring-max-endpoints-per-subset (1000) addresses, ready ones first,
 *    each an endpoint of its IP's family (ready or not as listed, its targetRef, nodeName
 *    and hostname); an address that is no IP is skipped (a Warning InvalidIPAddress on the
 *    Endpoints), and so are those past the maximum (TooManyAddressesToMirror). One slice
 *    per address type and set of ports: the first existing one is kept when its endpoints,
 *    labels (the Endpoints', the Service's name, the manager) and annotations (the
 *    Endpoints', but last-change-trigger-time and last-applied-configuration) are what
 *    they should be and it is owned by this Endpoints, rewritten otherwise; the others are
 *    deleted, and a slice to delete of an address type is rewritten instead of creating
 *    one. Writes go creations (not while the Endpoints is being deleted), updates,
 *    deletions; the first failure stops the rest and the key is retried with backoff.
 *
 * Differences from kube: a targetRef's resourceVersion is not copied; an address's IP is
 * read with inet_pton (kube's sloppy parser also takes IPv4 with leading zeros).
 *
 * The handlers queue an Endpoints when it changes (if it is mirrored, or was), its Service
 * when it is added or deleted without a selector or gains or loses one, and the key of a
 * mirrored slice's kubernetes.io/service-name when that slice changes (after
 * --mirroring-endpointslice-updates-batch-period). kube runs 5 workers
 * (--mirroring-concurrent-service-endpoint-syncs).
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "controllers/endpoint.h"
#include "controllers/endpointslice.h"
#include "controllers/endpointslicemirroring.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "util.h"

#define LABEL_SERVICE_NAME "kubernetes.io/service-name"
#define LABEL_MANAGED_BY "endpointslice.kubernetes.io/managed-by"
#define LABEL_SKIP_MIRROR "endpointslice.kubernetes.io/skip-mirror"
#define MANAGED_BY "endpointslicemirroring-controller.k8s.io"
#define ANNOTATION_TRIGGER_TIME "endpoints.kubernetes.io/last-change-trigger-time"
#define ANNOTATION_LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"
#define ANNOTATION_LEADER "control-plane.alpha.kubernetes.io/leader"

enum {
	STMT_ENDPOINTS,
	STMT_SERVICE,
	STMT_SLICES,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const esm_sql[STMT_COUNT] = {
	[STMT_ENDPOINTS] =
	    "SELECT body FROM cache_objects"
	    " WHERE resource = 'endpoints' AND namespace = ?1 AND name = ?2",
	[STMT_SERVICE] =
	    "SELECT body FROM cache_objects"
	    " WHERE resource = 'services' AND namespace = ?1 AND name = ?2",
	/* The slices this controller mirrored for ?2, by name. */
	[STMT_SLICES] =
	    "SELECT o.body FROM cache_objects o"
	    " WHERE o.resource = 'endpointslices' AND o.namespace = ?1"
	    "   AND EXISTS (SELECT 1 FROM object_labels l WHERE l.object_id = o.id"
	    "                AND l.key = '" LABEL_SERVICE_NAME "' AND l.value = ?2)"
	    "   AND EXISTS (SELECT 1 FROM object_labels l WHERE l.object_id = o.id"
	    "                AND l.key = '" LABEL_MANAGED_BY "' AND l.value = '" MANAGED_BY "')"
	    " ORDER BY o.name",
	/* Every Endpoints but leader-election records, and every mirrored slice's key. */
	[STMT_KEYS] =
	    "SELECT namespace, name FROM cache_objects WHERE resource = 'endpoints'"
	    "   AND json_extract(body, '$.metadata.annotations.\"" ANNOTATION_LEADER "\"') IS NULL"
	    " UNION"
	    " SELECT namespace,"
	    "        json_extract(body, '$.metadata.labels.\"" LABEL_SERVICE_NAME "\"')"
	    "   FROM cache_objects WHERE resource = 'endpointslices'"
	    "   AND json_extract(body, '$.metadata.labels.\"" LABEL_MANAGED_BY "\"') = '"
	    MANAGED_BY "'"
	    "   AND json_extract(body, '$.metadata.labels.\"" LABEL_SERVICE_NAME "\"') IS NOT NULL"
	    " ORDER BY 1, 2",
};

struct esm_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *endpoints;
	const struct resource *services;
	const struct resource *slices;
	int max_per_subset;
	double batch;
};

/* --- the parts ------------------------------------------------------------------------- */

int
endpointslicemirroring_should_mirror(const cJSON *endpoints)
{
	const cJSON *skip = cJSON_GetObjectItemCaseSensitive(json_path(endpoints,
	    "metadata.labels"), LABEL_SKIP_MIRROR);

	if (endpoints == NULL)
		return 0;
	if (cJSON_IsString(skip) && strcmp(skip->valuestring, "true") == 0)
		return 0;
	return json_annotation(endpoints, ANNOTATION_LEADER) == NULL;
}

/* The canonical text of ip and its type ("IPv4", "IPv6"); NULL when it is no IP. */
static const char *
ip_canonical(const char *ip, char out[INET6_ADDRSTRLEN])
{
	unsigned char addr[16];

	if (inet_pton(AF_INET, ip, addr) == 1) {
		inet_ntop(AF_INET, addr, out, INET6_ADDRSTRLEN);
		return "IPv4";
	}
	if (inet_pton(AF_INET6, ip, addr) == 1) {
		/* An IPv4-mapped address is IPv4 to Go (To4 is not nil). */
		static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

		if (memcmp(addr, mapped, sizeof mapped) == 0) {
			inet_ntop(AF_INET, addr + 12, out, INET6_ADDRSTRLEN);
			return "IPv4";
		}
		inet_ntop(AF_INET6, addr, out, INET6_ADDRSTRLEN);
		return "IPv6";
	}
	return NULL;
}

/* kube's addressToEndpoint: the endpoint of an Endpoints' address; NULL when its ip is no
 * IP; *type its address type. */
static cJSON *
address_endpoint(const cJSON *address, int ready, const char **type)
{
	char ip[INET6_ADDRSTRLEN];
	const cJSON *ref = cJSON_GetObjectItemCaseSensitive(address, "targetRef");
	const cJSON *node = cJSON_GetObjectItemCaseSensitive(address, "nodeName");
	cJSON *ep;

	if ((*type = ip_canonical(json_string(address, "ip"), ip)) == NULL)
		return NULL;
	ep = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(ep, "addresses"), cJSON_CreateString(ip));
	cJSON_AddBoolToObject(cJSON_AddObjectToObject(ep, "conditions"), "ready", ready);
	if (*json_string(address, "hostname") != '\0')
		cJSON_AddStringToObject(ep, "hostname", json_string(address, "hostname"));
	if (cJSON_IsObject(ref))
		cJSON_AddItemToObject(ep, "targetRef", cJSON_Duplicate(ref, 1));
	if (cJSON_IsString(node))
		cJSON_AddStringToObject(ep, "nodeName", node->valuestring);
	return ep;
}

/* The slice ports of an Endpoints subset's ports (kube's epPortsToEpsPorts). */
static cJSON *
slice_ports(const cJSON *ports)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *p;

	cJSON_ArrayForEach(p, ports) {
		cJSON *sp = cJSON_CreateObject();
		const cJSON *app = cJSON_GetObjectItemCaseSensitive(p, "appProtocol");

		cJSON_AddStringToObject(sp, "name", json_string(p, "name"));
		cJSON_AddNumberToObject(sp, "port", (double)json_int(p, "port", 0));
		cJSON_AddStringToObject(sp, "protocol", json_string(p, "protocol"));
		if (cJSON_IsString(app))
			cJSON_AddStringToObject(sp, "appProtocol", app->valuestring);
		cJSON_AddItemToArray(out, sp);
	}
	return out;
}

/* The annotations a mirrored slice carries: the Endpoints', but two. */
static cJSON *
slice_annotations(const cJSON *endpoints)
{
	const cJSON *a = json_path(endpoints, "metadata.annotations");
	cJSON *out = cJSON_IsObject(a) ? cJSON_Duplicate(a, 1) : cJSON_CreateObject();

	cJSON_DeleteItemFromObjectCaseSensitive(out, ANNOTATION_TRIGGER_TIME);
	cJSON_DeleteItemFromObjectCaseSensitive(out, ANNOTATION_LAST_APPLIED);
	return out;
}

/* kube's newEndpointSlice of the mirroring controller, named name (NULL: generateName),
 * ports taken. */
static cJSON *
mirror_slice(const cJSON *endpoints, cJSON *ports, const char *type, const char *name)
{
	cJSON *s = cJSON_CreateObject(), *meta, *labels, *ref;
	const cJSON *l = json_path(endpoints, "metadata.labels");
	const char *ep_name = json_string(endpoints, "metadata.name");

	cJSON_AddStringToObject(s, "apiVersion", "discovery.k8s.io/v1");
	cJSON_AddStringToObject(s, "kind", "EndpointSlice");
	meta = cJSON_AddObjectToObject(s, "metadata");
	if (name != NULL) {
		cJSON_AddStringToObject(meta, "name", name);
	} else {
		char *prefix = xasprintf("%s-", ep_name);

		cJSON_AddStringToObject(meta, "generateName", strlen(prefix) > 253 ? ep_name : prefix);
		free(prefix);
	}
	cJSON_AddStringToObject(meta, "namespace", json_string(endpoints, "metadata.namespace"));
	labels = cJSON_IsObject(l) ? cJSON_Duplicate(l, 1) : cJSON_CreateObject();
	json_set(labels, LABEL_SERVICE_NAME, cJSON_CreateString(ep_name));
	json_set(labels, LABEL_MANAGED_BY, cJSON_CreateString(MANAGED_BY));
	cJSON_AddItemToObject(meta, "labels", labels);
	cJSON_AddItemToObject(meta, "annotations", slice_annotations(endpoints));
	ref = cJSON_CreateObject();
	cJSON_AddStringToObject(ref, "apiVersion", "v1");
	cJSON_AddStringToObject(ref, "kind", "Endpoints");
	cJSON_AddStringToObject(ref, "name", ep_name);
	cJSON_AddStringToObject(ref, "uid", json_string(endpoints, "metadata.uid"));
	cJSON_AddBoolToObject(ref, "controller", 1);
	cJSON_AddBoolToObject(ref, "blockOwnerDeletion", 1);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"), ref);
	cJSON_AddStringToObject(s, "addressType", type);
	cJSON_AddItemToObject(s, "endpoints", cJSON_CreateArray());
	cJSON_AddItemToObject(s, "ports", ports);
	return s;
}

/* Two maps of strings equal (absent or null is empty). */
static int
same_strings(const cJSON *a, const cJSON *b)
{
	const cJSON *x;
	int na = 0, nb = 0;

	cJSON_ArrayForEach(x, a) {
		const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);

		na++;
		if (!cJSON_IsString(x) || !cJSON_IsString(y) || strcmp(x->valuestring, y->valuestring))
			return 0;
	}
	cJSON_ArrayForEach(x, b)
		nb++;
	return na == nb;
}

/* One group of desired endpoints: an address type and a set of ports. */
struct mgroup {
	char *key;
	const char *type;
	cJSON *ports;
	cJSON **eps;
	char **ids;
	int n;
};

static struct mgroup *
mgroup_get(struct mgroup **v, int *n, const char *type, const cJSON *ports)
{
	char *pk = endpointslice_port_key(ports);
	char *key = xasprintf("%s-%s", type, pk);

	free(pk);
	for (int i = 0; i < *n; i++) {
		if (strcmp((*v)[i].key, key) == 0) {
			free(key);
			return &(*v)[i];
		}
	}
	*v = xrealloc(*v, ((size_t)*n + 1) * sizeof **v);
	memset(&(*v)[*n], 0, sizeof **v);
	(*v)[*n].key = key;
	(*v)[*n].type = type;
	(*v)[*n].ports = cJSON_Duplicate(ports, 1);
	return &(*v)[(*n)++];
}

static void
mgroup_add(struct mgroup *g, cJSON *ep)
{
	char *id = endpointslice_endpoint_identity(ep);

	for (int i = 0; i < g->n; i++) {
		if (strcmp(g->ids[i], id) == 0) {
			cJSON_Delete(g->eps[i]);
			g->eps[i] = ep;
			free(id);
			return;
		}
	}
	g->eps = xrealloc(g->eps, ((size_t)g->n + 1) * sizeof *g->eps);
	g->ids = xrealloc(g->ids, ((size_t)g->n + 1) * sizeof *g->ids);
	g->eps[g->n] = ep;
	g->ids[g->n++] = id;
}

static void
push(cJSON ***v, int *n, cJSON *s)
{
	*v = xrealloc(*v, ((size_t)*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

/* 1 when existing (the first slice of a group) holds exactly g's endpoints, each the same
 * (kube's totalChanges all zero). */
static int
same_endpoints(const cJSON *existing, const struct mgroup *g)
{
	const cJSON *ep;
	int matches = 0;

	cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(existing, "endpoints")) {
		char *id = endpointslice_endpoint_identity(ep);
		int found = -1;

		for (int i = 0; i < g->n && found < 0; i++) {
			if (strcmp(g->ids[i], id) == 0)
				found = i;
		}
		free(id);
		if (found < 0 || !endpointslice_endpoints_equal(g->eps[found], ep))
			return 0;
		matches++;
	}
	return matches == g->n;
}

/* kube's needRebuildExistingSlices: owned by an Endpoints of this name but another uid. */
static int
owned_by_another(const cJSON *slice, const cJSON *endpoints)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, json_path(slice, "metadata.ownerReferences")) {
		if (strcmp(json_string(r, "kind"), "Endpoints") == 0 &&
		    strcmp(json_string(r, "name"), json_string(endpoints, "metadata.name")) == 0 &&
		    strcmp(json_string(r, "uid"), json_string(endpoints, "metadata.uid")) != 0)
			return 1;
	}
	return 0;
}

void
endpointslicemirroring_reconcile(const cJSON *endpoints, cJSON **existing, int nexisting,
    int max_per_subset, struct endpointslice_plan *p, int *invalid, int *skipped)
{
	cJSON *subsets = endpoint_repack(json_path(endpoints, "subsets"));
	struct mgroup *groups = NULL;
	int ngroups = 0, *used = xcalloc((size_t)nexisting + 1, sizeof *used);
	const cJSON *s;

	*invalid = *skipped = 0;
	cJSON_ArrayForEach(s, subsets) {
		cJSON *ports = slice_ports(cJSON_GetObjectItemCaseSensitive(s, "ports"));
		struct mgroup *v4 = mgroup_get(&groups, &ngroups, "IPv4", ports);
		int v4i = (int)(v4 - groups);
		struct mgroup *v6 = mgroup_get(&groups, &ngroups, "IPv6", ports);
		int v6i = (int)(v6 - groups), total = 0, added = 0;
		static const char *const lists[2] = { "addresses", "notReadyAddresses" };

		for (int l = 0; l < 2; l++) {
			const cJSON *a;

			cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(s, lists[l])) {
				const char *type;
				cJSON *ep;

				total++;
				if (added >= max_per_subset)
					continue;
				if ((ep = address_endpoint(a, l == 0, &type)) == NULL) {
					(*invalid)++;
					continue;
				}
				mgroup_add(&groups[strcmp(type, "IPv6") == 0 ? v6i : v4i], ep);
				added++;
			}
		}
		*skipped += total - added;
		cJSON_Delete(ports);
	}
	for (int k = 0; k < ngroups; k++) {
		struct mgroup *g = &groups[k];
		cJSON **mine = NULL, *slice;
		int nmine = 0;

		for (int i = 0; i < nexisting; i++) {
			char *pk = endpointslice_port_key(cJSON_GetObjectItemCaseSensitive(existing[i],
			    "ports"));
			char *key = xasprintf("%s-%s", json_string(existing[i], "addressType"), pk);

			if (strcmp(key, g->key) == 0) {
				push(&mine, &nmine, existing[i]);
				used[i] = 1;
			}
			free(pk);
			free(key);
		}
		if (g->n == 0) {
			for (int i = 0; i < nmine; i++)
				push(&p->remove, &p->nremove, mine[i]);
			free(mine);
			continue;
		}
		if (nmine > 0) {
			cJSON *labels = json_path(mine[0], "metadata.labels") != NULL ?
			    cJSON_Duplicate(json_path(mine[0], "metadata.labels"), 1) : cJSON_CreateObject();
			cJSON *annotations = slice_annotations(endpoints);
			int same;

			for (int i = 1; i < nmine; i++)
				push(&p->remove, &p->nremove, mine[i]);
			cJSON_DeleteItemFromObjectCaseSensitive(labels, LABEL_MANAGED_BY);
			cJSON_DeleteItemFromObjectCaseSensitive(labels, LABEL_SERVICE_NAME);
			same = same_endpoints(mine[0], g) &&
			    same_strings(json_path(endpoints, "metadata.labels"), labels) &&
			    same_strings(annotations, json_path(mine[0], "metadata.annotations")) &&
			    !owned_by_another(mine[0], endpoints);
			cJSON_Delete(labels);
			cJSON_Delete(annotations);
			if (same) {
				free(mine);
				continue;
			}
		}
		slice = mirror_slice(endpoints, cJSON_Duplicate(g->ports, 1), g->type,
		    nmine > 0 ? json_string(mine[0], "metadata.name") : NULL);
		if (nmine > 0) {
			const cJSON *rv = json_path(mine[0], "metadata.resourceVersion");
			cJSON *meta = (cJSON *)json_path(slice, "metadata");

			cJSON_AddStringToObject(meta, "uid", json_string(mine[0], "metadata.uid"));
			if (cJSON_IsString(rv))
				cJSON_AddStringToObject(meta, "resourceVersion", rv->valuestring);
		}
		for (int i = 0; i < g->n && i < max_per_subset; i++) {
			cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(slice, "endpoints"),
			    g->eps[i]);
			g->eps[i] = NULL;
		}
		if (nmine > 0)
			push(&p->update, &p->nupdate, slice);
		else
			push(&p->create, &p->ncreate, slice);
		free(mine);
	}
	for (int i = 0; i < nexisting; i++) {
		if (!used[i])
			push(&p->remove, &p->nremove, existing[i]);
	}
	/* kube's recycleSlices: a slice to delete of an address type is rewritten into one
	 * to create of that type. */
	for (int c = 0; c < p->ncreate;) {
		const char *type = json_string(p->create[c], "addressType");
		int d = -1;

		for (int i = 0; i < p->nremove && d < 0; i++) {
			if (strcmp(json_string(p->remove[i], "addressType"), type) == 0)
				d = i;
		}
		if (d < 0) {
			c++;
			continue;
		}
		{
			cJSON *slice = p->create[c], *meta = (cJSON *)json_path(slice, "metadata");
			const cJSON *rv = json_path(p->remove[d], "metadata.resourceVersion");

			cJSON_DeleteItemFromObjectCaseSensitive(meta, "generateName");
			cJSON_AddStringToObject(meta, "name", json_string(p->remove[d], "metadata.name"));
			cJSON_AddStringToObject(meta, "uid", json_string(p->remove[d], "metadata.uid"));
			if (cJSON_IsString(rv))
				cJSON_AddStringToObject(meta, "resourceVersion", rv->valuestring);
			push(&p->update, &p->nupdate, slice);
			memmove(&p->create[c], &p->create[c + 1],
			    (size_t)(p->ncreate - c - 1) * sizeof *p->create);
			p->ncreate--;
			memmove(&p->remove[d], &p->remove[d + 1],
			    (size_t)(p->nremove - d - 1) * sizeof *p->remove);
			p->nremove--;
		}
	}
	for (int k = 0; k < ngroups; k++) {
		for (int i = 0; i < groups[k].n; i++) {
			cJSON_Delete(groups[k].eps[i]);
			free(groups[k].ids[i]);
		}
		free(groups[k].eps);
		free(groups[k].ids);
		free(groups[k].key);
		cJSON_Delete(groups[k].ports);
	}
	free(groups);
	free(used);
	cJSON_Delete(subsets);
}

/* --- sync ------------------------------------------------------------------------------ */

static cJSON *
read_one(sqlite3_stmt *stmt, const char *namespace, const char *name)
{
	cJSON *o = NULL;

	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		o = controller_column_json(stmt, 0);
	sqlite3_reset(stmt);
	return o;
}

static struct action *
slice_write(struct sync_result *out, const struct esm_state *st, enum action_type type,
    const char *verb, const char *namespace, const cJSON *slice)
{
	struct action *a = action_append(&out->writes, &out->nwrites);
	const char *name = json_string(slice, "metadata.name");

	a->type = type;
	a->verb = verb;
	a->resource = st->slices;
	a->namespace = xstrdup(namespace);
	a->name = *name != '\0' ? xstrdup(name) : NULL;
	if (type != ACTION_CREATE)
		a->uid = xstrdup(json_string(slice, "metadata.uid"));
	return a;
}

static int
esm_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct esm_state *st = c->state;
	sqlite3_stmt *stmt;
	char *namespace = NULL;
	const char *name, *why = NULL;
	cJSON *endpoints = NULL, *service = NULL, **slices = NULL;
	int nslices = 0, caught_up, rc;
	struct endpointslice_plan plan;

	(void)now;
	memset(&plan, 0, sizeof plan);
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->endpoints;
	if (controller_key_split(key, &namespace, &name) != 0) {
		log_error("endpointslicemirroring: %s is no namespace/name key", key);
		return 0;
	}
	endpoints = read_one(controller_stmt(st->stmt[STMT_ENDPOINTS]), namespace, name);
	service = read_one(controller_stmt(st->stmt[STMT_SERVICE]), namespace, name);
	stmt = controller_stmt(st->stmt[STMT_SLICES]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cJSON *o = controller_column_json(stmt, 0);

		if (o != NULL)
			push(&slices, &nslices, o);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		rc = error_set(error, "endpointslicemirroring: listing the slices of %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		goto done;
	}
	if (endpoints != NULL) {
		out->owner_uid = xstrdup(json_string(endpoints, "metadata.uid"));
		out->owner = cJSON_Duplicate(endpoints, 1);
	}
	if (endpoints == NULL)
		why = "its Endpoints is gone";
	else if (!endpointslicemirroring_should_mirror(endpoints))
		why = "its Endpoints is not mirrored";
	else if (service == NULL)
		why = "its Service is gone";
	else if (json_path(service, "spec.selector") != NULL &&
	    !cJSON_IsNull(json_path(service, "spec.selector")))
		why = "its Service has a selector";
	if (why != NULL) {
		/* Forgetting the key's bookkeeping ends an execution before its writes: only
		 * once there is nothing left to delete. */
		if (endpoints == NULL && nslices == 0)
			out->forget_expectations = 1;
		for (int i = 0; i < nslices; i++) {
			struct action *a = slice_write(out, st, ACTION_DELETE, "delete", namespace,
			    slices[i]);

			a->reason = xstrdup(why);
		}
		if (endpoints == NULL && nslices > 0) {
			struct action *g = action_append(&out->confirm_absent, &out->nconfirm_absent);

			g->type = ACTION_GET;
			g->verb = "get";
			g->resource = st->endpoints;
			g->namespace = xstrdup(namespace);
			g->name = xstrdup(name);
			g->reason = xstrdup("the Endpoints must be gone");
		}
		rc = 0;
		goto done;
	}
	if ((caught_up = controller_caught_up(c, key, out->owner_uid, out, error)) <= 0) {
		rc = caught_up;
		goto done;
	}
	{
		int invalid, skipped;

		endpointslicemirroring_reconcile(endpoints, slices, nslices, st->max_per_subset,
		    &plan, &invalid, &skipped);
		if (invalid > 0)
			sync_result_add_event(out, "Warning", "InvalidIPAddress",
			    xasprintf("Skipped %d invalid IP addresses when mirroring to "
			    "EndpointSlices", invalid));
		if (skipped > invalid)
			sync_result_add_event(out, "Warning", "TooManyAddressesToMirror",
			    xasprintf("A max of %d addresses can be mirrored to EndpointSlices per "
			    "Endpoints subset. %d addresses were skipped", st->max_per_subset,
			    skipped));
	}
	if (!json_is_set(endpoints, "metadata.deletionTimestamp")) {
		for (int i = 0; i < plan.ncreate; i++) {
			struct action *a = slice_write(out, st, ACTION_CREATE, "create", namespace,
			    plan.create[i]);

			a->body = plan.create[i];
			plan.create[i] = NULL;
			a->reason = xasprintf("mirrors %d endpoints",
			    cJSON_GetArraySize(json_path(a->body, "endpoints")));
		}
	}
	for (int i = 0; i < plan.nupdate; i++) {
		struct action *a = slice_write(out, st, ACTION_UPDATE, "update", namespace,
		    plan.update[i]);

		a->body = plan.update[i];
		plan.update[i] = NULL;
		a->reason = xasprintf("mirrors %d endpoints",
		    cJSON_GetArraySize(json_path(a->body, "endpoints")));
	}
	for (int i = 0; i < plan.nremove; i++) {
		struct action *a = slice_write(out, st, ACTION_DELETE, "delete", namespace,
		    plan.remove[i]);

		a->reason = xstrdup("no longer mirrored");
	}
	rc = 0;
done:
	endpointslice_plan_clear(&plan);
	for (int i = 0; i < nslices; i++)
		cJSON_Delete(slices[i]);
	free(slices);
	cJSON_Delete(endpoints);
	cJSON_Delete(service);
	free(namespace);
	return rc;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
queue_key(const struct controller_queue *q, double after, const char *namespace,
    const char *name)
{
	char *key;

	if (*namespace == '\0' || *name == '\0')
		return;
	key = xasprintf("%s/%s", namespace, name);
	if (after > 0)
		q->add_after(key, after, q->arg);
	else
		q->add(key, q->arg);
	free(key);
}

static int
has_selector(const cJSON *service)
{
	const cJSON *s = json_path(service, "spec.selector");

	return s != NULL && !cJSON_IsNull(s);
}

static void
esm_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct esm_state *st = c->state;
	const char *namespace = json_string(ev->object, "metadata.namespace");
	const char *name = json_string(ev->object, "metadata.name");
	cJSON *old = ev->old_body != NULL ? cJSON_Parse(ev->old_body) : NULL;

	(void)now;
	if (strcmp(ev->resource->name, "endpoints") == 0) {
		if (endpointslicemirroring_should_mirror(ev->object) ||
		    (ev->type == INFORMER_UPDATED && endpointslicemirroring_should_mirror(old)))
			queue_key(q, 0, namespace, name);
	} else if (strcmp(ev->resource->name, "services") == 0) {
		if (ev->type == INFORMER_UPDATED ?
		    old != NULL && has_selector(old) != has_selector(ev->object) :
		    !has_selector(ev->object))
			queue_key(q, 0, namespace, name);
	} else if (strcmp(ev->resource->name, "endpointslices") == 0) {
		const cJSON *objects[2] = { ev->object, old };

		for (int i = 0; i < 2; i++) {
			const cJSON *by = json_path(objects[i], "metadata.labels");
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(by, LABEL_MANAGED_BY);
			const cJSON *s = cJSON_GetObjectItemCaseSensitive(by, LABEL_SERVICE_NAME);

			if (cJSON_IsString(m) && strcmp(m->valuestring, MANAGED_BY) == 0 &&
			    cJSON_IsString(s))
				queue_key(q, st->batch, namespace, s->valuestring);
		}
	}
	cJSON_Delete(old);
}

static int
esm_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct esm_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "endpointslicemirroring", cb, arg,
	    error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
esm_init(struct controller *c, char **error)
{
	struct esm_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->endpoints = resource_find("endpoints");
	st->services = resource_find("services");
	st->slices = resource_find("endpointslices");
	if (st->endpoints == NULL || st->services == NULL || st->slices == NULL)
		return error_set(error, "endpointslicemirroring: endpoints, services and "
		    "endpointslices are not known resources");
	st->max_per_subset = (int)controller_flag_int(c, "mirroring-max-endpoints-per-subset");
	st->batch = controller_flag_seconds(c, "mirroring-endpointslice-updates-batch-period");
	return store_prepare_statements(store_db(c->store), esm_sql, STMT_COUNT, st->stmt,
	    "endpointslicemirroring", error);
}

static void
esm_fini(struct controller *c)
{
	struct esm_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const char *const esm_resources[] = { "endpoints", "services", "endpointslices", NULL };

static const struct controller_flag esm_flags[] = {
	{ "mirroring-max-endpoints-per-subset", CONTROLLER_FLAG_INT, "1000", 1, 1000,
	  "The maximum number of endpoints that will be added to an EndpointSlice by the "
	  "EndpointSliceMirroring controller." },
	{ "mirroring-endpointslice-updates-batch-period", CONTROLLER_FLAG_DURATION, "0s", 0, 0,
	  "The length of EndpointSlice updates batching period for EndpointSliceMirroring "
	  "controller. Processing of EndpointSlice changes will be delayed by this duration "
	  "to join them with potential upcoming updates and reduce the overall number of "
	  "EndpointSlice updates." },
	{ NULL, 0, NULL, 0, 0, NULL },
};

const struct controller_type endpointslicemirroring_controller_type = {
	.name = "endpointslicemirroring",
	.resources = esm_resources,
	.default_workers = 5,
	.workers_flag = "mirroring-concurrent-service-endpoint-syncs",
	.workers_help = "The number of service endpoint syncing operations that will be done "
	    "concurrently by the EndpointSliceMirroring controller.",
	.enable_flag = NULL,
	.flags = esm_flags,
	.event_component = "endpoint-slice-mirroring-controller",
	.client_name = "endpointslicemirroring-controller",
	.base_backoff = 1,		/* kube's queue: 1 s to 100 s */
	.max_backoff = 100,
	.recovery = NULL,
	.init = esm_init,
	.fini = esm_fini,
	.handle_event = esm_handle_event,
	.list_keys = esm_list_keys,
	.sync = esm_sync,
};
