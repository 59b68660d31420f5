/*
 * endpointslice.c - the EndpointSlice controller (kube's endpointslice-controller): every
 * Service with a selector gets EndpointSlices of the pods it selects.
 *
 * A key is a Service's namespace/name. A sync, from the cache:
 *
 * 1. The Service is not cached: nothing (its slices go with it, through their owner
 *    reference and the garbage collector, as in kube).
 * 2. It is of type ExternalName, or has no selector: nothing (people write the slices of
 *    a selector-less Service; the mirroring controller copies its Endpoints).
 * 3. The cache has not caught up with this controller's last write for it
 *    (consistency.c, kube's endpointSliceTracker): wait, retry with backoff. Slices being
 *    deleted are left out of what follows, as kube drops them.
 * 4. kube's reconciler, for each address type of the Service's IP families (IPv4, IPv6):
 *    - the desired endpoints: each pod the selector matches (view service_pods,
 *      schema/022-endpoints.sql) that is not terminal and has an IP; one endpoint per pod
 *      with its addresses of that family, conditions ready (serving and not terminating,
 *      or always when the Service publishes not-ready addresses), serving (its Ready
 *      condition) and terminating (a deletionTimestamp), nodeName, zone (its node's
 *      topology.kubernetes.io/zone), hostname (when its subdomain is the Service) and a
 *      targetRef; grouped by the ports the Service's ports resolve to on the pod (a named
 *      targetPort is looked up among its containers' ports). A pod whose node is not
 *      cached is left out (unless not-ready addresses are published) and the sync fails
 *      after its writes, as kube's;
 *    - for each group of ports, its existing slices: an endpoint still desired and the
 *      same (conditions, node, zone, targetRef) stays where it is; a slice whose endpoints
 *      changed or went is updated (deleted when none is left); one whose labels differ from
 *      the Service's is updated; the rest are left alone. The endpoints left over fill the
 *      updated slices first (fullest first), then the unchanged slice they fit in best,
 *      then new slices of at most --max-endpoints-per-slice;
 *    - slices of other groups of ports, of address types the Service no longer has, and
 *      not owned by the Service are deleted; a slice to delete of the same address type
 *      as one to create is rewritten instead (fewer writes);
 *    - a Service with no endpoint at all keeps (or gets) one placeholder slice with no
 *      endpoints and no ports.
 *    The slices written carry endpoints.kubernetes.io/last-change-trigger-time: the
 *    earliest change this sync is the first to see of the pods' readiness (their Ready
 *    condition's lastTransitionTime) or the Service's creation (podendpoints.h, kube's
 *    trigger time tracker; kept in memory, so a restart starts it again).
 *    The writes go in kube's order: creations (not when the Service is being deleted),
 *    updates, deletions; the first failure stops the rest and records a Warning
 *    FailedToUpdateEndpointSlices on the Service, and the key is retried with backoff.
 *
 * Endpoints are placed in the order of their pods' names where kube takes them in a map's
 * order: the same slices, but which endpoint lands in which new slice is deterministic.
 *
 * Not done (differences from kube, on purpose or for later):
 * - kube's topology-aware hints (the service.kubernetes.io/topology-mode annotation Auto,
 *   which allocates endpoints to zones by their CPUs): slices carry no hints then (the
 *   hints of trafficDistribution PreferClose, PreferSameZone and PreferSameNode are made:
 *   each ready endpoint's zone, and its node for PreferSameNode);
 * - of kube's endpoint_slice_controller_* metrics, only changes{operation} and
 *   endpoints_added_per_sync and endpoints_removed_per_sync;
 * - kube's slice tracker, which skips the events of its own writes: here an event of a
 *   managed slice at the resourceVersion this controller's newest write to the Service's
 *   slices returned is skipped (consistency_is_own); one of its earlier writes in the
 *   same sync, or one whose event comes before the write's answer, queues the Service
 *   (after a second), and that sync finds nothing to do.
 *
 * The handlers queue a Service when it changes; the Services of a pod's namespace whose
 * selector matches the pod's labels, old or new, when a pod changes; and a slice's
 * Service (its kubernetes.io/service-name label) when a slice this controller manages
 * changes. kube runs 5 workers (--concurrent-service-endpoint-syncs).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "controllers/endpointslice.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "podendpoints.h"
#include "resource.h"
#include "util.h"

#define LABEL_SERVICE_NAME "kubernetes.io/service-name"
#define LABEL_MANAGED_BY "endpointslice.kubernetes.io/managed-by"
#define LABEL_HEADLESS "service.kubernetes.io/headless"
#define LABEL_ZONE "topology.kubernetes.io/zone"
#define MANAGED_BY "endpointslice-controller.k8s.io"
#define ANNOTATION_TRIGGER_TIME "endpoints.kubernetes.io/last-change-trigger-time"

enum {
	STMT_SERVICE,
	STMT_PODS,
	STMT_SLICES,
	STMT_NODE,
	STMT_SERVICES_IN_NAMESPACE,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const eps_sql[STMT_COUNT] = {
	/* Service ?2 in namespace ?1, whole. */
	[STMT_SERVICE] =
	    "SELECT body FROM cache_objects"
	    " WHERE resource = 'services' AND namespace = ?1 AND name = ?2",
	/* The pods it selects, by name (the sync leaves out those that are no endpoint). */
	[STMT_PODS] =
	    PODENDPOINTS_SELECTED_PODS_SQL,
	/* The slices of Service ?2 this controller manages, not being deleted, by name. */
	[STMT_SLICES] =
	    "SELECT o.body FROM cache_objects o"
	    " WHERE o.resource = 'endpointslices' AND o.namespace = ?1"
	    "   AND o.deletion_timestamp IS NULL"
	    "   AND EXISTS (SELECT 1 FROM object_labels l WHERE l.object_id = o.id"
	    "                AND l.key = '" LABEL_SERVICE_NAME "' AND l.value = ?2)"
	    "   AND EXISTS (SELECT 1 FROM object_labels l WHERE l.object_id = o.id"
	    "                AND l.key = '" LABEL_MANAGED_BY "' AND l.value = '" MANAGED_BY "')"
	    " ORDER BY o.name",
	/* Node ?1 if cached: its zone label (NULL: none). */
	[STMT_NODE] =
	    "SELECT json_extract(body, '$.metadata.labels.\"" LABEL_ZONE "\"') FROM cache_objects"
	    " WHERE resource = 'nodes' AND namespace = '' AND name = ?1",
	/* The Services of namespace ?1 with a selector, as LabelSelectors. */
	[STMT_SERVICES_IN_NAMESPACE] =
	    "SELECT name, json_object('matchLabels', json_extract(body, '$.spec.selector'))"
	    "  FROM cache_objects WHERE resource = 'services' AND namespace = ?1"
	    "   AND json_type(body, '$.spec.selector') = 'object'"
	    "   AND coalesce(json_extract(body, '$.spec.type'), '') != 'ExternalName'",
	/* Every Service that takes endpoints from a controller. */
	[STMT_KEYS] =
	    "SELECT namespace, name FROM cache_objects WHERE resource = 'services'"
	    "   AND json_type(body, '$.spec.selector') = 'object'"
	    "   AND coalesce(json_extract(body, '$.spec.type'), '') != 'ExternalName'"
	    " ORDER BY namespace, name",
};

struct eps_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	struct podendpoints_tracker *triggers;	/* kube's trigger time tracker */
	struct selector_cache *selectors;	/* its Services' selectors, by namespace */
	double batch;				/* --endpointslice-updates-batch-period, seconds */
	const struct resource *services;
	const struct resource *slices;
	int max_endpoints;
	/* kube's endpoint_slice_controller_* metrics, in the daemon (NULL otherwise). */
	struct metrics_series *changes[3];	/* create, update, delete */
	struct metrics_series *added_per_sync;
	struct metrics_series *removed_per_sync;
};

/* --- endpoints and ports as kube compares them ----------------------------------------- */

static int
strcmp_p(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The identity of an endpoint (kube's endpoint hash): its addresses in order, its
 * hostname, its targetRef's namespace and name. malloc'd. */
char *
endpointslice_endpoint_identity(const cJSON *ep)
{
	const cJSON *a, *addresses = cJSON_GetObjectItemCaseSensitive(ep, "addresses");
	int n = cJSON_GetArraySize(addresses), i = 0;
	const char **v = xcalloc((size_t)n + 1, sizeof *v);
	struct buf b;

	buf_init(&b);
	cJSON_ArrayForEach(a, addresses)
		v[i++] = cJSON_IsString(a) ? a->valuestring : "";
	qsort(v, (size_t)i, sizeof *v, strcmp_p);
	for (int k = 0; k < i; k++)
		buf_printf(&b, "%s,", v[k]);
	free(v);
	buf_printf(&b, "|%s|%s/%s", json_string(ep, "hostname"),
	    json_string(ep, "targetRef.namespace"), json_string(ep, "targetRef.name"));
	return buf_detach(&b);
}

/* 1 when member name of a and b is the same (both absent or null, or equal values). */
static int
same_member(const cJSON *a, const cJSON *b, const char *name)
{
	const cJSON *x = a != NULL ? cJSON_GetObjectItemCaseSensitive(a, name) : NULL;
	const cJSON *y = b != NULL ? cJSON_GetObjectItemCaseSensitive(b, name) : NULL;

	if (x != NULL && cJSON_IsNull(x))
		x = NULL;
	if (y != NULL && cJSON_IsNull(y))
		y = NULL;
	if (x == NULL || y == NULL)
		return x == y;
	return cJSON_Compare(x, y, 1);
}

/* kube's EndpointsEqualBeyondHash: two endpoints of the same identity are the same when
 * their node, zone, conditions and targetRef (but its resourceVersion) are. */
int
endpointslice_endpoints_equal(const cJSON *a, const cJSON *b)
{
	static const char *const conditions[] = { "ready", "serving", "terminating" };
	static const char *const ref[] = {
		"kind", "namespace", "name", "uid", "apiVersion", "fieldPath"
	};
	const cJSON *ra = cJSON_GetObjectItemCaseSensitive(a, "targetRef");
	const cJSON *rb = cJSON_GetObjectItemCaseSensitive(b, "targetRef");

	if (!same_member(a, b, "nodeName") || !same_member(a, b, "zone"))
		return 0;
	for (size_t i = 0; i < sizeof conditions / sizeof *conditions; i++) {
		if (!same_member(cJSON_GetObjectItemCaseSensitive(a, "conditions"),
		    cJSON_GetObjectItemCaseSensitive(b, "conditions"), conditions[i]))
			return 0;
	}
	if (cJSON_IsNull(ra))
		ra = NULL;
	if (cJSON_IsNull(rb))
		rb = NULL;
	if (ra == NULL || rb == NULL)
		return ra == rb;
	for (size_t i = 0; i < sizeof ref / sizeof *ref; i++) {
		/* An empty string is Go's zero value, the same as absent. */
		if (strcmp(json_string(ra, ref[i]), json_string(rb, ref[i])) != 0)
			return 0;
	}
	return 1;
}

/* The key of a list of endpoint ports (kube's PortMapKey): each port's name, number,
 * protocol and appProtocol, sorted. malloc'd. */
char *
endpointslice_port_key(const cJSON *ports)
{
	const cJSON *p;
	int n = cJSON_GetArraySize(ports), i = 0;
	char **v = xcalloc((size_t)n + 1, sizeof *v);
	struct buf b;

	buf_init(&b);
	cJSON_ArrayForEach(p, ports) {
		const cJSON *port = cJSON_GetObjectItemCaseSensitive(p, "port");

		v[i++] = xasprintf("%s\x1f%lld\x1f%s\x1f%s\x1f%d",
		    json_string(p, "name"), cJSON_IsNumber(port) ? (long long)port->valuedouble : -1,
		    json_string(p, "protocol"), json_string(p, "appProtocol"),
		    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, "appProtocol")));
	}
	qsort(v, (size_t)i, sizeof *v, strcmp_p);
	for (int k = 0; k < i; k++) {
		buf_printf(&b, "%s\x1e", v[k]);
		free(v[k]);
	}
	free(v);
	if (b.len == 0)
		buf_append_str(&b, "");
	return buf_detach(&b);
}

/* The endpoint ports of pod for service (kube's getEndpointPorts): one per Service port
 * that resolves on the pod, in the Service's order. */
cJSON *
endpointslice_pod_ports(const cJSON *service, const cJSON *pod)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *sp;

	cJSON_ArrayForEach(sp, json_path(service, "spec.ports")) {
		const cJSON *app = cJSON_GetObjectItemCaseSensitive(sp, "appProtocol");
		const char *protocol = json_string(sp, "protocol");
		cJSON *ep;
		int port;

		if (podendpoints_find_port(pod, sp, &port) != 0)
			continue;
		ep = cJSON_CreateObject();
		cJSON_AddStringToObject(ep, "name", json_string(sp, "name"));
		cJSON_AddNumberToObject(ep, "port", port);
		cJSON_AddStringToObject(ep, "protocol", *protocol != '\0' ? protocol : "TCP");
		if (cJSON_IsString(app))
			cJSON_AddStringToObject(ep, "appProtocol", app->valuestring);
		cJSON_AddItemToArray(out, ep);
	}
	return out;
}

/* The endpoint of pod for service in address_type ("IPv4", "IPv6"), zone its node's zone
 * (NULL: none) (kube's podToEndpoint). Its addresses may be empty. */
cJSON *
endpointslice_pod_endpoint(const cJSON *service, const cJSON *pod, const char *address_type,
    const char *zone)
{
	int v6 = strcmp(address_type, "IPv6") == 0;
	int serving = podendpoints_pod_ready(pod);
	int terminating = json_is_set(pod, "metadata.deletionTimestamp");
	int publish = cJSON_IsTrue(json_path(service, "spec.publishNotReadyAddresses"));
	cJSON *ep = cJSON_CreateObject(), *addresses, *conditions, *ref;
	const cJSON *ip;
	const char *node = json_string(pod, "spec.nodeName");

	addresses = cJSON_AddArrayToObject(ep, "addresses");
	cJSON_ArrayForEach(ip, json_path(pod, "status.podIPs")) {
		const char *text = json_string(ip, "ip");

		if (*text != '\0' && podendpoints_is_ipv6(text) == v6)
			cJSON_AddItemToArray(addresses, cJSON_CreateString(text));
	}
	conditions = cJSON_AddObjectToObject(ep, "conditions");
	cJSON_AddBoolToObject(conditions, "ready", publish || (serving && !terminating));
	cJSON_AddBoolToObject(conditions, "serving", serving);
	cJSON_AddBoolToObject(conditions, "terminating", terminating);
	if (podendpoints_sets_hostname(pod, service))
		cJSON_AddStringToObject(ep, "hostname", json_string(pod, "spec.hostname"));
	ref = cJSON_AddObjectToObject(ep, "targetRef");
	cJSON_AddStringToObject(ref, "kind", "Pod");
	cJSON_AddStringToObject(ref, "namespace", json_string(pod, "metadata.namespace"));
	cJSON_AddStringToObject(ref, "name", json_string(pod, "metadata.name"));
	cJSON_AddStringToObject(ref, "uid", json_string(pod, "metadata.uid"));
	if (*node != '\0')
		cJSON_AddStringToObject(ep, "nodeName", node);
	if (zone != NULL && *zone != '\0')
		cJSON_AddStringToObject(ep, "zone", zone);
	return ep;
}

/* The labels a slice of service carries (kube's setEndpointSliceLabels): the Service's,
 * but the reserved ones, then the headless label for a Service without a cluster IP, the
 * Service's name and the manager. *changed (if not NULL) is 1 when the slice's own labels
 * (slice_labels, but the reserved ones) differ from the Service's. */
cJSON *
endpointslice_labels(const cJSON *service, const cJSON *slice_labels, int *changed)
{
	static const char *const reserved[] = { LABEL_SERVICE_NAME, LABEL_MANAGED_BY,
		LABEL_HEADLESS };
	cJSON *out = cJSON_CreateObject();
	const cJSON *l;
	int n_service = 0, n_slice = 0, differ = 0;

#define RESERVED(k) (strcmp((k), reserved[0]) == 0 || strcmp((k), reserved[1]) == 0 || \
	strcmp((k), reserved[2]) == 0)
	cJSON_ArrayForEach(l, json_path(service, "metadata.labels")) {
		const cJSON *mine;

		if (!cJSON_IsString(l) || RESERVED(l->string))
			continue;
		n_service++;
		mine = cJSON_GetObjectItemCaseSensitive(slice_labels, l->string);
		if (!cJSON_IsString(mine) || strcmp(mine->valuestring, l->valuestring) != 0)
			differ = 1;
		cJSON_AddStringToObject(out, l->string, l->valuestring);
	}
	cJSON_ArrayForEach(l, slice_labels) {
		if (cJSON_IsString(l) && !RESERVED(l->string))
			n_slice++;
	}
#undef RESERVED
	if (changed != NULL)
		*changed = differ || n_service != n_slice;
	if (!podendpoints_service_has_cluster_ip(service))
		cJSON_AddStringToObject(out, LABEL_HEADLESS, "");
	cJSON_AddStringToObject(out, LABEL_SERVICE_NAME, json_string(service, "metadata.name"));
	cJSON_AddStringToObject(out, LABEL_MANAGED_BY, MANAGED_BY);
	return out;
}

/* The Service's owner reference, as kube makes a controller reference. */
static cJSON *
owner_reference(const cJSON *service)
{
	cJSON *ref = cJSON_CreateObject();

	cJSON_AddStringToObject(ref, "apiVersion", "v1");
	cJSON_AddStringToObject(ref, "kind", "Service");
	cJSON_AddStringToObject(ref, "name", json_string(service, "metadata.name"));
	cJSON_AddStringToObject(ref, "uid", json_string(service, "metadata.uid"));
	cJSON_AddBoolToObject(ref, "controller", 1);
	cJSON_AddBoolToObject(ref, "blockOwnerDeletion", 1);
	return ref;
}

/* A new slice of service (kube's newEndpointSlice), with ports (taken) and no endpoint. */
static cJSON *
new_slice(const cJSON *service, const char *address_type, cJSON *ports)
{
	cJSON *s = cJSON_CreateObject(), *meta;
	const char *name = json_string(service, "metadata.name");
	char *prefix = xasprintf("%s-", name);

	cJSON_AddStringToObject(s, "apiVersion", "discovery.k8s.io/v1");
	cJSON_AddStringToObject(s, "kind", "EndpointSlice");
	meta = cJSON_AddObjectToObject(s, "metadata");
	/* kube drops the dash when it would make the prefix no DNS subdomain; a Service's
	 * name is a DNS label, so with the dash it always is one but at 253 characters. */
	cJSON_AddStringToObject(meta, "generateName", strlen(prefix) > 253 ? name : prefix);
	free(prefix);
	cJSON_AddStringToObject(meta, "namespace", json_string(service, "metadata.namespace"));
	cJSON_AddItemToObject(meta, "labels", endpointslice_labels(service, NULL, NULL));
	cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"),
	    owner_reference(service));
	cJSON_AddStringToObject(s, "addressType", address_type);
	cJSON_AddItemToObject(s, "endpoints", cJSON_CreateArray());
	cJSON_AddItemToObject(s, "ports", ports);
	return s;
}

/* 1 when slice is owned by service (kube's ownedBy: a reference of kind Service, v1, its
 * uid). */
static int
owned_by(const cJSON *slice, const cJSON *service)
{
	const cJSON *r;
	const char *uid = json_string(service, "metadata.uid");

	cJSON_ArrayForEach(r, json_path(slice, "metadata.ownerReferences")) {
		if (strcmp(json_string(r, "uid"), uid) == 0 &&
		    strcmp(json_string(r, "kind"), "Service") == 0 &&
		    strcmp(json_string(r, "apiVersion"), "v1") == 0)
			return 1;
	}
	return 0;
}

/* kube's comparison of an existing slice with the placeholder it would make: namespace,
 * labels, owner references, address type, no endpoints and no ports. */
static int
same_as_placeholder(const cJSON *slice, const cJSON *placeholder)
{
	const cJSON *la = json_path(slice, "metadata.labels"), *lb = json_path(placeholder,
	    "metadata.labels");
	const cJSON *ra = json_path(slice, "metadata.ownerReferences");
	const cJSON *rb = json_path(placeholder, "metadata.ownerReferences");
	const cJSON *l;
	int na = 0, nb = 0;

	if (strcmp(json_string(slice, "addressType"), json_string(placeholder, "addressType")) != 0 ||
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(slice, "endpoints")) != 0 ||
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(slice, "ports")) != 0)
		return 0;
	cJSON_ArrayForEach(l, la) {
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(lb, l->string);

		na++;
		if (!cJSON_IsString(l) || !cJSON_IsString(o) ||
		    strcmp(l->valuestring, o->valuestring) != 0)
			return 0;
	}
	cJSON_ArrayForEach(l, lb)
		nb++;
	if (na != nb || cJSON_GetArraySize(ra) != cJSON_GetArraySize(rb))
		return 0;
	for (int i = 0; i < cJSON_GetArraySize(ra); i++) {
		const cJSON *x = cJSON_GetArrayItem(ra, i), *y = cJSON_GetArrayItem(rb, i);
		static const char *const f[] = { "apiVersion", "kind", "name", "uid" };

		for (size_t k = 0; k < sizeof f / sizeof *f; k++) {
			if (strcmp(json_string(x, f[k]), json_string(y, f[k])) != 0)
				return 0;
		}
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "controller")) ||
		    !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "blockOwnerDeletion")))
			return 0;
	}
	return 1;
}

/* --- topology hints -------------------------------------------------------------------- */

static void
push(cJSON ***v, int *n, cJSON *s)
{
	*v = xrealloc(*v, ((size_t)*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

#define ANNOTATION_TOPOLOGY_MODE "service.kubernetes.io/topology-mode"
#define ANNOTATION_TOPOLOGY_HINTS "service.kubernetes.io/topology-aware-hints"

/* kube's hintsEnabled: the topology mode annotation (or its deprecated name) says Auto. */
static int
topology_auto(const cJSON *service)
{
	const cJSON *v = json_annotation(service, ANNOTATION_TOPOLOGY_MODE);

	if (v == NULL)
		v = json_annotation(service, ANNOTATION_TOPOLOGY_HINTS);
	return cJSON_IsString(v) && (strcmp(v->valuestring, "Auto") == 0 ||
	    strcmp(v->valuestring, "auto") == 0);
}

/* The trafficDistribution whose hints the slices carry: PreferClose, PreferSameZone or
 * PreferSameNode (kube's PreferSameTrafficDistribution is on by default in 1.36), unless
 * the topology mode annotation asks for kube's topology-aware hints; NULL: none. */
static const char *
traffic_distribution(const cJSON *service)
{
	const char *td = json_string(service, "spec.trafficDistribution");

	if (topology_auto(service))
		return NULL;
	if (strcmp(td, "PreferClose") == 0 || strcmp(td, "PreferSameZone") == 0 ||
	    strcmp(td, "PreferSameNode") == 0)
		return td;
	return NULL;
}

/* The hints of a ready endpoint under kube's preferClose heuristic: its zone, and its node
 * too for PreferSameNode; NULL: none. */
static cJSON *
close_hints(const cJSON *ep, int nodes)
{
	const cJSON *zone = cJSON_GetObjectItemCaseSensitive(ep, "zone");
	const cJSON *node = cJSON_GetObjectItemCaseSensitive(ep, "nodeName");
	cJSON *h;

	if (!cJSON_IsString(zone) && !(nodes && cJSON_IsString(node)))
		return NULL;
	h = cJSON_CreateObject();
	if (cJSON_IsString(zone)) {
		cJSON *z = cJSON_CreateObject();

		cJSON_AddStringToObject(z, "name", zone->valuestring);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(h, "forZones"), z);
	}
	if (nodes && cJSON_IsString(node)) {
		cJSON *n = cJSON_CreateObject();

		cJSON_AddStringToObject(n, "name", node->valuestring);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(h, "forNodes"), n);
	}
	return h;
}

static int
endpoint_ready(const cJSON *ep)
{
	return cJSON_IsTrue(json_path(ep, "conditions.ready"));
}

/* Sets (td not NULL) or removes the hints of slice's endpoints. */
static void
set_hints(cJSON *slice, const char *td)
{
	cJSON *ep;

	cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(slice, "endpoints")) {
		cJSON *h;

		if (td != NULL && !endpoint_ready(ep))
			continue;	/* kube leaves a not-ready endpoint's hints as they are */
		h = td != NULL ? close_hints(ep, strcmp(td, "PreferSameNode") == 0) : NULL;
		if (h != NULL)
			json_set(ep, "hints", h);
		else
			cJSON_DeleteItemFromObjectCaseSensitive(ep, "hints");
	}
}

/* 1 when an unchanged slice's hints are not what td wants (kube's needsUpdate). */
static int
hints_stale(const cJSON *slice, const char *td)
{
	const cJSON *ep;

	cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(slice, "endpoints")) {
		cJSON *want;
		const cJSON *have = cJSON_GetObjectItemCaseSensitive(ep, "hints");
		int same;

		if (!endpoint_ready(ep))
			continue;
		want = close_hints(ep, strcmp(td, "PreferSameNode") == 0);
		if (cJSON_IsNull(have))
			have = NULL;
		/* Compared as kube does: one zone of the endpoint's, one node of its own. */
		same = want == NULL ? (have == NULL ||
		    (cJSON_GetArraySize(json_path(have, "forZones")) == 0 &&
		    cJSON_GetArraySize(json_path(have, "forNodes")) == 0)) :
		    have != NULL &&
		    cJSON_GetArraySize(json_path(have, "forZones")) ==
		    cJSON_GetArraySize(json_path(want, "forZones")) &&
		    cJSON_GetArraySize(json_path(have, "forNodes")) ==
		    cJSON_GetArraySize(json_path(want, "forNodes")) &&
		    strcmp(json_string(cJSON_GetArrayItem(json_path(have, "forZones"), 0), "name"),
		    json_string(cJSON_GetArrayItem(json_path(want, "forZones"), 0), "name")) == 0 &&
		    strcmp(json_string(cJSON_GetArrayItem(json_path(have, "forNodes"), 0), "name"),
		    json_string(cJSON_GetArrayItem(json_path(want, "forNodes"), 0), "name")) == 0;
		cJSON_Delete(want);
		if (!same)
			return 1;
	}
	return 0;
}

/* kube's hints step of one address type: with a trafficDistribution, the slices written
 * get its hints and an unchanged slice whose hints are stale is written too; without one,
 * the slices written carry none (unchanged ones are left as they are). kube's
 * topology-aware hints (the topology mode annotation) are not made: their slices carry no
 * hints. */
static void
apply_hints(const cJSON *service, cJSON **existing, int nexisting,
    struct endpointslice_plan *p, int created_before, int updated_before, int removed_before)
{
	const char *td = traffic_distribution(service);

	if (td != NULL) {
		for (int i = 0; i < nexisting; i++) {
			int written = 0;

			for (int k = updated_before; k < p->nupdate && !written; k++)
				written = strcmp(json_string(p->update[k], "metadata.name"),
				    json_string(existing[i], "metadata.name")) == 0;
			for (int k = removed_before; k < p->nremove && !written; k++)
				written = p->remove[k] == existing[i];
			if (!written && hints_stale(existing[i], td))
				push(&p->update, &p->nupdate, cJSON_Duplicate(existing[i], 1));
		}
	}
	for (int k = created_before; k < p->ncreate; k++)
		set_hints(p->create[k], td);
	for (int k = updated_before; k < p->nupdate; k++)
		set_hints(p->update[k], td);
}

/* --- the reconciler -------------------------------------------------------------------- */

/* The desired endpoints of one group of ports. */
struct group {
	char *key;
	cJSON *ports;			/* the ports (owned) */
	cJSON **eps;			/* endpoints (owned until taken), in pods' order */
	char **ids;
	int n;
	int left;			/* not yet placed */
};

/* Takes the first desired endpoint of g not yet placed (kube's PopAny, in pods' order). */
static cJSON *
group_pop(struct group *g)
{
	for (int i = 0; i < g->n; i++) {
		if (g->eps[i] != NULL) {
			cJSON *ep = g->eps[i];

			g->eps[i] = NULL;
			g->left--;
			return ep;
		}
	}
	return NULL;
}

/* The desired endpoint of g with identity id, taken out of it; NULL if none. */
static cJSON *
group_take(struct group *g, const char *id)
{
	for (int i = 0; i < g->n; i++) {
		if (g->eps[i] != NULL && strcmp(g->ids[i], id) == 0) {
			cJSON *ep = g->eps[i];

			g->eps[i] = NULL;
			g->left--;
			return ep;
		}
	}
	return NULL;
}

static void
group_add(struct group *g, cJSON *ep)
{
	char *id = endpointslice_endpoint_identity(ep);

	/* An endpoint of the same identity replaces the earlier one, as in kube's set. */
	for (int i = 0; i < g->n; i++) {
		if (g->eps[i] != NULL && strcmp(g->ids[i], id) == 0) {
			cJSON_Delete(g->eps[i]);
			g->eps[i] = ep;
			free(id);
			return;
		}
	}
	g->eps = xrealloc(g->eps, ((size_t)g->n + 1) * sizeof *g->eps);
	g->ids = xrealloc(g->ids, ((size_t)g->n + 1) * sizeof *g->ids);
	g->eps[g->n] = ep;
	g->ids[g->n] = id;
	g->n++;
	g->left++;
}

static void
group_clear(struct group *g)
{
	for (int i = 0; i < g->n; i++) {
		cJSON_Delete(g->eps[i]);
		free(g->ids[i]);
	}
	free(g->eps);
	free(g->ids);
	free(g->key);
	cJSON_Delete(g->ports);
}

static int
endpoints_count(const cJSON *slice)
{
	return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(slice, "endpoints"));
}

static int
by_fullness(const void *a, const void *b)
{
	int x = endpoints_count(*(cJSON *const *)a), y = endpoints_count(*(cJSON *const *)b);

	return (x < y) - (x > y);
}

static void
set_endpoints(cJSON *slice, cJSON *endpoints)
{
	json_set(slice, "endpoints", endpoints);
}

/*
 * kube's reconcileByPortMapping for one group: existing (n, owned by the Service, of its
 * ports; borrowed) against the desired endpoints of g. Appends to p: copies to update,
 * new slices to create, existing slices to delete.
 */
static void
reconcile_group(const cJSON *service, cJSON **existing, int n, struct group *g, int max,
    const char *address_type, struct endpointslice_plan *p)
{
	cJSON **updated = NULL;			/* copies, this group's */
	int nupdated = 0;
	cJSON **unchanged = NULL;		/* existing, borrowed */
	int nunchanged = 0;

	for (int i = 0; i < n; i++) {
		const cJSON *ep;
		cJSON *kept = cJSON_CreateArray(), *labels;
		int was = 0, now = 0, changed = 0, labels_changed = 0;

		cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(existing[i], "endpoints")) {
			char *id = endpointslice_endpoint_identity(ep);
			cJSON *got = group_take(g, id);

			free(id);
			was++;
			if (got == NULL)
				continue;
			if (!endpointslice_endpoints_equal(got, ep))
				changed = 1;
			cJSON_AddItemToArray(kept, got);
			now++;
		}
		p->removed += was - now;
		labels = endpointslice_labels(service, json_path(existing[i], "metadata.labels"),
		    &labels_changed);
		if (changed || was != now) {
			if (now == 0) {
				push(&p->remove, &p->nremove, existing[i]);
				cJSON_Delete(kept);
				cJSON_Delete(labels);
				continue;
			}
		} else if (!labels_changed) {
			push(&unchanged, &nunchanged, existing[i]);
			cJSON_Delete(kept);
			cJSON_Delete(labels);
			continue;
		}
		{
			cJSON *copy = cJSON_Duplicate(existing[i], 1);

			if (changed || was != now)
				set_endpoints(copy, kept);
			else
				cJSON_Delete(kept);
			json_set(json_child_object(copy, "metadata"), "labels", labels);
			push(&updated, &nupdated, copy);
		}
	}
	p->added += g->left;
	/* The endpoints left fill the slices updated anyway, fullest first. */
	if (g->left > 0 && nupdated > 0) {
		qsort(updated, (size_t)nupdated, sizeof *updated, by_fullness);
		for (int i = 0; i < nupdated && g->left > 0; i++) {
			cJSON *eps = cJSON_GetObjectItemCaseSensitive(updated[i], "endpoints");

			if (!cJSON_IsArray(eps)) {
				eps = cJSON_CreateArray();
				json_set(updated[i], "endpoints", eps);
			}
			while (g->left > 0 && cJSON_GetArraySize(eps) < max)
				cJSON_AddItemToArray(eps, group_pop(g));
		}
	}
	/* Then the unchanged slice they fit in best, then new slices. */
	while (g->left > 0) {
		cJSON *fill = NULL, *eps;
		int from_unchanged = -1;

		if (g->left < max && nunchanged > 0) {
			int closest = max;

			for (int i = 0; i < nunchanged; i++) {
				int diff;

				if (unchanged[i] == NULL)
					continue;
				diff = max - (g->left + endpoints_count(unchanged[i]));
				if (diff >= 0 && diff < closest) {
					closest = diff;
					from_unchanged = i;
					if (diff == 0)
						break;
				}
			}
		}
		if (from_unchanged >= 0) {
			fill = cJSON_Duplicate(unchanged[from_unchanged], 1);
			unchanged[from_unchanged] = NULL;
			if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(fill, "endpoints")))
				json_set(fill, "endpoints", cJSON_CreateArray());
		} else {
			fill = new_slice(service, address_type, cJSON_Duplicate(g->ports, 1));
		}
		eps = cJSON_GetObjectItemCaseSensitive(fill, "endpoints");
		while (g->left > 0 && cJSON_GetArraySize(eps) < max)
			cJSON_AddItemToArray(eps, group_pop(g));
		if (from_unchanged >= 0)
			push(&updated, &nupdated, fill);
		else
			push(&p->create, &p->ncreate, fill);
	}
	for (int i = 0; i < nupdated; i++)
		push(&p->update, &p->nupdate, updated[i]);
	free(updated);
	free(unchanged);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(json_string(*(cJSON *const *)a, "metadata.name"),
	    json_string(*(cJSON *const *)b, "metadata.name"));
}

void
endpointslice_reconcile(const cJSON *service, const cJSON *const *pods, const char *const *zones,
    const int *node_known, int npods, cJSON **existing, int nexisting, const char *address_type,
    int max, struct endpointslice_plan *out)
{
	struct endpointslice_plan *p = out;
	struct group *groups = NULL;
	int ngroups = 0, removed_before = p->nremove, created_before = p->ncreate;
	int updated_before = p->nupdate;
	int publish = cJSON_IsTrue(json_path(service, "spec.publishNotReadyAddresses"));
	cJSON **owned = NULL;
	char **owned_keys = NULL;
	int nowned = 0;

	for (int i = 0; i < nexisting; i++) {
		if (owned_by(existing[i], service)) {
			owned = xrealloc(owned, ((size_t)nowned + 1) * sizeof *owned);
			owned_keys = xrealloc(owned_keys, ((size_t)nowned + 1) * sizeof *owned_keys);
			owned[nowned] = existing[i];
			owned_keys[nowned++] = endpointslice_port_key(
			    cJSON_GetObjectItemCaseSensitive(existing[i], "ports"));
		} else {
			push(&p->remove, &p->nremove, existing[i]);
		}
	}
	for (int i = 0; i < npods; i++) {
		const cJSON *pod = pods[i];
		cJSON *ports, *ep;
		char *key;
		struct group *g = NULL;

		if (!podendpoints_pod_included(pod, 1))
			continue;
		ports = endpointslice_pod_ports(service, pod);
		key = endpointslice_port_key(ports);
		for (int k = 0; k < ngroups && g == NULL; k++) {
			if (strcmp(groups[k].key, key) == 0)
				g = &groups[k];
		}
		if (g == NULL) {
			groups = xrealloc(groups, ((size_t)ngroups + 1) * sizeof *groups);
			g = &groups[ngroups++];
			memset(g, 0, sizeof *g);
			g->key = key;
			g->ports = ports;
		} else {
			free(key);
			cJSON_Delete(ports);
		}
		if (!node_known[i] && !publish) {
			out->skipped = xrealloc(out->skipped,
			    ((size_t)out->nskipped + 1) * sizeof *out->skipped);
			out->skipped[out->nskipped++] = xasprintf("skipping Pod %s for Service %s/%s: "
			    "Node %s Not Found", json_string(pod, "metadata.name"),
			    json_string(service, "metadata.namespace"),
			    json_string(service, "metadata.name"), json_string(pod, "spec.nodeName"));
			continue;
		}
		ep = endpointslice_pod_endpoint(service, pod, address_type, zones[i]);
		if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ep, "addresses")) > 0)
			group_add(g, ep);
		else
			cJSON_Delete(ep);
	}
	for (int k = 0; k < ngroups; k++) {
		cJSON **mine = NULL;
		int nmine = 0;

		for (int i = 0; i < nowned; i++) {
			if (strcmp(owned_keys[i], groups[k].key) == 0)
				push(&mine, &nmine, owned[i]);
		}
		reconcile_group(service, mine, nmine, &groups[k], max, address_type, p);
		free(mine);
	}
	for (int i = 0; i < nowned; i++) {
		int wanted = 0;

		for (int k = 0; k < ngroups && !wanted; k++)
			wanted = strcmp(owned_keys[i], groups[k].key) == 0;
		if (!wanted)
			push(&p->remove, &p->nremove, owned[i]);
	}
	/* Every existing slice goes and none is made: one placeholder stays or comes. */
	if (nexisting == p->nremove - removed_before && p->ncreate == created_before) {
		cJSON *placeholder = new_slice(service, address_type, cJSON_CreateArray());

		if (p->nremove - removed_before == 1 &&
		    same_as_placeholder(p->remove[removed_before], placeholder)) {
			p->nremove--;
			cJSON_Delete(placeholder);
		} else {
			push(&p->create, &p->ncreate, placeholder);
		}
	}
	apply_hints(service, existing, nexisting, p, created_before, updated_before,
	    removed_before);
	/* Slices to delete of this address type become the new ones instead. */
	for (int i = removed_before; i < p->nremove && p->ncreate > created_before;) {
		cJSON *victim = p->remove[i], *slice = p->create[p->ncreate - 1];

		if (owned_by(victim, service)) {
			cJSON *meta = json_child_object(slice, "metadata");
			const cJSON *rv = json_path(victim, "metadata.resourceVersion");

			cJSON_DeleteItemFromObjectCaseSensitive(meta, "generateName");
			cJSON_AddStringToObject(meta, "name", json_string(victim, "metadata.name"));
			cJSON_AddStringToObject(meta, "uid", json_string(victim, "metadata.uid"));
			if (cJSON_IsString(rv))
				cJSON_AddStringToObject(meta, "resourceVersion", rv->valuestring);
			p->ncreate--;
			push(&p->update, &p->nupdate, slice);
			memmove(&p->remove[i], &p->remove[i + 1],
			    (size_t)(p->nremove - i - 1) * sizeof *p->remove);
			p->nremove--;
		} else {
			i++;
		}
	}
	for (int k = 0; k < ngroups; k++)
		group_clear(&groups[k]);
	free(groups);
	for (int i = 0; i < nowned; i++)
		free(owned_keys[i]);
	free(owned_keys);
	free(owned);
}

void
endpointslice_plan_clear(struct endpointslice_plan *p)
{
	for (int i = 0; i < p->ncreate; i++)
		cJSON_Delete(p->create[i]);
	for (int i = 0; i < p->nupdate; i++)
		cJSON_Delete(p->update[i]);
	for (int i = 0; i < p->nskipped; i++)
		free(p->skipped[i]);
	free(p->create);
	free(p->update);
	free(p->remove);
	free(p->skipped);
	memset(p, 0, sizeof *p);
}

/* The address types of service's IP families (kube's getAddressTypesForService), IPv4
 * first; without families, its cluster IP's, or both for a headless Service. Returns how
 * many (1 or 2) in types. */
int
endpointslice_address_types(const cJSON *service, const char *types[2])
{
	const cJSON *f;
	int n = 0, v4 = 0, v6 = 0;

	cJSON_ArrayForEach(f, json_path(service, "spec.ipFamilies")) {
		if (cJSON_IsString(f) && strcmp(f->valuestring, "IPv4") == 0)
			v4 = 1;
		else if (cJSON_IsString(f) && strcmp(f->valuestring, "IPv6") == 0)
			v6 = 1;
	}
	if (!v4 && !v6) {
		const char *ip = json_string(service, "spec.clusterIP");

		/* No families (an apiserver older than them): the cluster IP's; a headless
		 * Service gets both, as kube does until the apiserver sets them. */
		if (*ip != '\0' && strcmp(ip, "None") != 0)
			*(podendpoints_is_ipv6(ip) ? &v6 : &v4) = 1;
		else
			v4 = v6 = 1;
	}
	if (v4)
		types[n++] = "IPv4";
	if (v6)
		types[n++] = "IPv6";
	return n;
}

/* --- sync ------------------------------------------------------------------------------ */

static cJSON *
read_json_rows(sqlite3_stmt *stmt, cJSON ***v, int *n, int exact)
{
	int rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cJSON *o = exact ? controller_column_json(stmt, 0) :
		    cJSON_Parse((const char *)sqlite3_column_text(stmt, 0));

		if (o != NULL)
			push(v, n, o);
	}
	sqlite3_reset(stmt);
	return rc == SQLITE_DONE ? (cJSON *)1 : NULL;
}

static void
free_rows(cJSON **v, int n)
{
	for (int i = 0; i < n; i++)
		cJSON_Delete(v[i]);
	free(v);
}

static struct action *
slice_write(struct sync_result *out, const struct eps_state *st, enum action_type type,
    const char *verb, const char *namespace, const char *service, const cJSON *slice)
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
	a->count_done = st->changes[type == ACTION_CREATE ? 0 : type == ACTION_UPDATE ? 1 : 2];
	a->failed_reason = "FailedToUpdateEndpointSlices";
	a->failed_message = type == ACTION_CREATE ?
	    xasprintf("Error updating Endpoint Slices for Service %s/%s: failed to create "
	    "EndpointSlice for Service %s/%s: ", namespace, service, namespace, service) :
	    xasprintf("Error updating Endpoint Slices for Service %s/%s: failed to %s %s "
	    "EndpointSlice for Service %s/%s: ", namespace, service, verb, name, namespace,
	    service);
	return a;
}

/* kube's addTriggerTimeAnnotation: the trigger time, or none. */
static void
set_trigger_time(cJSON *slice, double trigger)
{
	cJSON *meta = json_child_object(slice, "metadata");
	cJSON *annotations = json_child_object(meta, "annotations");

	cJSON_DeleteItemFromObjectCaseSensitive(annotations, ANNOTATION_TRIGGER_TIME);
	if (trigger != 0) {
		char text[32];

		podendpoints_format_time(trigger, text, sizeof text);
		cJSON_AddStringToObject(annotations, ANNOTATION_TRIGGER_TIME, text);
	}
	if (annotations->child == NULL)
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "annotations");
}

static int
eps_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct eps_state *st = c->state;
	sqlite3_stmt *stmt;
	char *namespace = NULL;
	const char *name, *types[2];
	cJSON *service = NULL, **pods = NULL, **slices = NULL;
	char **zones = NULL;
	int *known = NULL, npods = 0, nslices = 0, caught_up, ntypes, rc = -1;
	struct endpointslice_plan plan;
	double trigger = 0;

	(void)now;
	memset(&plan, 0, sizeof plan);
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->services;
	if (controller_key_split(key, &namespace, &name) != 0) {
		log_error("endpointslice: %s is no namespace/name key", key);
		return 0;
	}
	stmt = controller_stmt(st->stmt[STMT_SERVICE]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		service = controller_column_json(stmt, 0);
	sqlite3_reset(stmt);
	if (service == NULL) {
		out->forget_expectations = 1;
		podendpoints_tracker_forget(st->triggers, key);
		rc = 0;
		goto done;
	}
	out->owner_uid = xstrdup(json_string(service, "metadata.uid"));
	out->owner = cJSON_Duplicate(service, 1);
	if (!podendpoints_service_selects(service)) {
		rc = 0;
		goto done;
	}
	if ((caught_up = controller_caught_up(c, key, out->owner_uid, out, error)) <= 0) {
		rc = caught_up;
		goto done;
	}
	stmt = controller_stmt(st->stmt[STMT_PODS]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	if (read_json_rows(stmt, &pods, &npods, 0) == NULL) {
		error_set(error, "endpointslice: listing the pods of %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		goto done;
	}
	stmt = controller_stmt(st->stmt[STMT_SLICES]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	if (read_json_rows(stmt, &slices, &nslices, 1) == NULL) {
		error_set(error, "endpointslice: listing the slices of %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		goto done;
	}
	trigger = podendpoints_trigger_time(st->triggers, key, service,
	    (const cJSON *const *)pods, npods);
	zones = xcalloc((size_t)npods + 1, sizeof *zones);
	known = xcalloc((size_t)npods + 1, sizeof *known);
	for (int i = 0; i < npods; i++) {
		stmt = controller_stmt(st->stmt[STMT_NODE]);
		sqlite3_bind_text(stmt, 1, json_string(pods[i], "spec.nodeName"), -1, SQLITE_STATIC);
		if (sqlite3_step(stmt) == SQLITE_ROW) {
			known[i] = 1;
			if (sqlite3_column_type(stmt, 0) == SQLITE_TEXT)
				zones[i] = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		}
		sqlite3_reset(stmt);
	}
	ntypes = endpointslice_address_types(service, types);
	{
		cJSON **of_type = NULL, **other = NULL;
		int nof = 0, nother = 0;

		for (int t = 0; t < ntypes; t++) {
			nof = 0;
			for (int i = 0; i < nslices; i++) {
				if (strcmp(json_string(slices[i], "addressType"), types[t]) == 0)
					push(&of_type, &nof, slices[i]);
			}
			plan.added = plan.removed = 0;
			endpointslice_reconcile(service, (const cJSON *const *)pods,
			    (const char *const *)zones, known, npods, of_type, nof, types[t],
			    st->max_endpoints, &plan);
			metrics_histogram_observe(st->added_per_sync, plan.added);
			metrics_histogram_observe(st->removed_per_sync, plan.removed);
		}
		/* Slices of an address type the Service no longer has go last. */
		for (int i = 0; i < nslices; i++) {
			int wanted = 0;

			for (int t = 0; t < ntypes && !wanted; t++)
				wanted = strcmp(json_string(slices[i], "addressType"), types[t]) == 0;
			if (!wanted)
				push(&other, &nother, slices[i]);
		}
		for (int i = 0; i < nother; i++)
			push(&plan.remove, &plan.nremove, other[i]);
		free(of_type);
		free(other);
	}
	if (!json_is_set(service, "metadata.deletionTimestamp")) {
		for (int i = 0; i < plan.ncreate; i++) {
			struct action *a = slice_write(out, st, ACTION_CREATE, "create", namespace,
			    name, plan.create[i]);

			a->body = plan.create[i];
			plan.create[i] = NULL;
			set_trigger_time(a->body, trigger);
			a->reason = xasprintf("%d endpoints of %s",
			    endpoints_count(a->body), json_string(a->body, "addressType"));
		}
	}
	if (plan.nupdate > 1)
		qsort(plan.update, (size_t)plan.nupdate, sizeof *plan.update, by_name);
	for (int i = 0; i < plan.nupdate; i++) {
		struct action *a = slice_write(out, st, ACTION_UPDATE, "update", namespace, name,
		    plan.update[i]);

		a->body = plan.update[i];
		plan.update[i] = NULL;
		set_trigger_time(a->body, trigger);
		a->reason = xasprintf("now %d endpoints", endpoints_count(a->body));
	}
	for (int i = 0; i < plan.nremove; i++) {
		struct action *a = slice_write(out, st, ACTION_DELETE, "delete", namespace, name,
		    plan.remove[i]);

		a->reason = xstrdup("no longer needed");
	}
	if (plan.nskipped > 0) {
		/* kube writes what it can, then fails the sync with these errors. */
		struct buf b;

		buf_init(&b);
		buf_printf(&b, "Error updating Endpoint Slices for Service %s/%s: ", namespace, name);
		for (int i = 0; i < plan.nskipped; i++)
			buf_printf(&b, "%s%s", i > 0 ? ", " : "", plan.skipped[i]);
		sync_result_add_event(out, "Warning", "FailedToUpdateEndpointSlices",
		    buf_detach(&b));
		out->failed = 1;
	}
	rc = 0;
done:
	endpointslice_plan_clear(&plan);
	for (int i = 0; i < npods; i++)
		free(zones != NULL ? zones[i] : NULL);
	free(zones);
	free(known);
	free_rows(pods, npods);
	free_rows(slices, nslices);
	cJSON_Delete(service);
	free(namespace);
	return rc;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
queue_key(const struct controller_queue *q, const char *namespace, const char *name)
{
	char *key;

	if (*namespace == '\0' || *name == '\0')
		return;
	key = xasprintf("%s/%s", namespace, name);
	q->add(key, q->arg);
	free(key);
}

static void
eps_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct eps_state *st = c->state;
	const char *namespace = json_string(ev->object, "metadata.namespace");
	cJSON *old = ev->old_body != NULL ? cJSON_Parse(ev->old_body) : NULL;

	(void)now;
	if (strcmp(ev->resource->name, "services") == 0) {
		selector_cache_forget(st->selectors, namespace);
		queue_key(q, namespace, json_string(ev->object, "metadata.name"));
	} else if (strcmp(ev->resource->name, "pods") == 0) {
		/* kube's pod queue adds its Services after the batch period. */
		struct controller_delayed_queue d;
		const struct controller_queue *dq = controller_queue_delayed(&d, q, st->batch);

		controller_enqueue_matching_cached(st->selectors,
		    st->stmt[STMT_SERVICES_IN_NAMESPACE], namespace,
		    json_path(ev->object, "metadata.labels"), dq);
		if (old != NULL)
			controller_enqueue_matching_cached(st->selectors,
		    st->stmt[STMT_SERVICES_IN_NAMESPACE], namespace,
			    json_path(old, "metadata.labels"), dq);
	} else if (strcmp(ev->resource->name, "endpointslices") == 0) {
		/* A slice's change: after a second at least, or the batch period (kube's
		 * endpointSliceChangeMinSyncDelay), so that a burst of them is one sync. */
		struct controller_delayed_queue d;
		const struct controller_queue *dq = controller_queue_delayed(&d, q,
		    st->batch > 1 ? st->batch : 1);
		const cJSON *objects[2] = { ev->object, old };
		const cJSON *service = cJSON_GetObjectItemCaseSensitive(json_path(ev->object,
		    "metadata.labels"), LABEL_SERVICE_NAME);

		if (ev->type != INFORMER_DELETED && cJSON_IsString(service)) {
			/* This controller's own write coming back: nothing to do (kube's
			 * endpointSliceTracker.ShouldSync). */
			char *key = xasprintf("%s/%s", namespace, service->valuestring);
			char *error = NULL;
			int own = 0;

			if (consistency_is_own(c->writes, key, "endpointslices",
			    json_string(ev->object, "metadata.resourceVersion"), &own,
			    &error) != 0) {
				log_error("endpointslice %s: %s", key, error);
				free(error);
			}
			free(key);
			if (own) {
				cJSON_Delete(old);
				return;
			}
		}
		for (int i = 0; i < 2; i++) {
			const cJSON *by = json_path(objects[i], "metadata.labels");
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(by, LABEL_MANAGED_BY);
			const cJSON *s = cJSON_GetObjectItemCaseSensitive(by, LABEL_SERVICE_NAME);

			if (cJSON_IsString(m) && strcmp(m->valuestring, MANAGED_BY) == 0 &&
			    cJSON_IsString(s))
				queue_key(dq, namespace, s->valuestring);
		}
	}
	cJSON_Delete(old);
}

static int
eps_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct eps_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "endpointslice", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

/* Registers kube's counter of slice changes and its histograms of the endpoints each
 * sync adds and removes. */
static int
eps_register_metrics(struct eps_state *st, struct metrics_registry *registry, char **error)
{
	static const char *const operation[] = { "operation", NULL };
	static const double buckets[] = { 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096,
		8192, 16384, 32768 };
	static const struct metrics_spec changes = { METRICS_COUNTER,
	    "endpoint_slice_controller_changes", "Number of EndpointSlice changes", operation,
	    NULL, 0 };
	static const struct metrics_spec added = { METRICS_HISTOGRAM,
	    "endpoint_slice_controller_endpoints_added_per_sync",
	    "Number of endpoints added on each Service sync", NULL, buckets,
	    sizeof buckets / sizeof *buckets };
	static const struct metrics_spec removed = { METRICS_HISTOGRAM,
	    "endpoint_slice_controller_endpoints_removed_per_sync",
	    "Number of endpoints removed on each Service sync", NULL, buckets,
	    sizeof buckets / sizeof *buckets };
	static const char *const ops[3] = { "create", "update", "delete" };
	struct metrics_family *fc = metrics_family_register(registry, &changes, error);
	struct metrics_family *fa = fc != NULL ?
	    metrics_family_register(registry, &added, error) : NULL;
	struct metrics_family *fr = fa != NULL ?
	    metrics_family_register(registry, &removed, error) : NULL;

	if (fr == NULL)
		return -1;
	for (int i = 0; i < 3; i++) {
		const char *values[] = { ops[i], NULL };

		st->changes[i] = metrics_series_get(fc, values);
	}
	st->added_per_sync = metrics_series_get(fa, NULL);
	st->removed_per_sync = metrics_series_get(fr, NULL);
	return 0;
}

static int
eps_init(struct controller *c, char **error)
{
	struct eps_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->triggers = podendpoints_tracker_new();
	st->selectors = selector_cache_new();
	st->batch = controller_flag_seconds(c, "endpointslice-updates-batch-period");
	st->services = resource_find("services");
	st->slices = resource_find("endpointslices");
	if (st->services == NULL || st->slices == NULL)
		return error_set(error, "endpointslice: services and endpointslices are not "
		    "known resources");
	st->max_endpoints = (int)controller_flag_int(c, "max-endpoints-per-slice");
	if (c->config->metrics != NULL && eps_register_metrics(st, c->config->metrics,
	    error) != 0)
		return -1;
	return store_prepare_statements(store_db(c->store), eps_sql, STMT_COUNT, st->stmt,
	    "endpointslice", error);
}

static void
eps_fini(struct controller *c)
{
	struct eps_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	podendpoints_tracker_free(st->triggers);
	selector_cache_free(st->selectors);
	free(st);
	c->state = NULL;
}

static const char *const eps_resources[] = {
	"services", "pods", "endpointslices", "nodes", NULL
};

static const struct controller_flag eps_flags[] = {
	{ "max-endpoints-per-slice", CONTROLLER_FLAG_INT, "100", 1, 1000,
	  "The maximum number of endpoints that will be added to an EndpointSlice." },
	{ "endpointslice-updates-batch-period", CONTROLLER_FLAG_DURATION, "0s", 0, 0,
	  "The length of endpoint slice updates batching period. Processing of pod changes "
	  "will be delayed by this duration to join them with potential upcoming updates and "
	  "reduce the overall number of endpoints updates. Larger number = higher endpoint "
	  "programming latency, but lower number of endpoints revision generated" },
	{ NULL, 0, NULL, 0, 0, NULL },
};

const struct controller_type endpointslice_controller_type = {
	.name = "endpointslice",
	.resources = eps_resources,
	.default_workers = 5,
	.workers_flag = "concurrent-service-endpoint-syncs",
	.workers_help = "The number of service endpoint syncing operations that will be done "
	    "concurrently.",
	.enable_flag = NULL,
	.flags = eps_flags,
	.event_component = "endpoint-slice-controller",
	.client_name = "endpointslice-controller",
	.base_backoff = 1,		/* kube's service queue: 1 s to 1000 s */
	.recovery = NULL,
	.init = eps_init,
	.fini = eps_fini,
	.handle_event = eps_handle_event,
	.list_keys = eps_list_keys,
	.sync = eps_sync,
};
