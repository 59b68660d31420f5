/*
 * endpoint.c - the Endpoints controller (kube's endpoints-controller, "endpoint" in
 * --controllers): every Service with a selector gets an Endpoints object of its name,
 * the legacy form of its EndpointSlices.
 *
 * A key is a Service's namespace/name. A sync, from the cache:
 *
 * 1. The Service is not cached: its Endpoints, if cached, is deleted, once a live read
 *    confirms the Service is gone (the cache may lag a new one).
 * 2. Of type ExternalName, or without a selector: nothing (people write those Endpoints).
 * 3. The cache has not caught up with this controller's last write of it
 *    (consistency.c, kube's stale endpoints tracker): wait, retry with backoff.
 * 4. The subsets: each pod the selector matches (view service_pods,
 *    schema/022-endpoints.sql) that is not terminal, has an IP and is not being deleted
 *    (unless the Service publishes not-ready addresses) gives an address, its IP of the
 *    Service's first IP family, nodeName, targetRef and hostname (when its subdomain is
 *    the Service), for each Service port that resolves on it (a named targetPort among
 *    its containers' ports; a headless Service without ports: the address alone); ready
 *    when its Ready condition is True or not-ready addresses are published, else
 *    not-ready. kube's repacking puts addresses that share the same ports in one subset.
 * 5. Unchanged subsets (after repacking what is cached), labels (the Service's, the
 *    headless label for a Service without a cluster IP, endpoints.kubernetes.io/
 *    managed-by: endpoint-controller) and over-capacity annotation: nothing. Else the
 *    Endpoints is created or updated (PUT); more than 1000 addresses are truncated in
 *    kube's proportions, with endpoints.kubernetes.io/over-capacity: truncated. A failed
 *    write records kube's Warning (FailedToCreateEndpoint, FailedToUpdateEndpoint) on the
 *    Endpoints and the key is retried with backoff.
 *
 * A write carries endpoints.kubernetes.io/last-change-trigger-time: the earliest change
 * this sync is the first to see of the pods' readiness or the Service's creation (kube's
 * trigger time tracker, podendpoints.h; in memory).
 *
 * Differences from kube: subsets, addresses and ports are sorted by their text (kube sorts
 * by hashes and IP bytes): the same content, perhaps in another order.
 *
 * The handlers queue a Service when it changes, the Services whose selector matches a
 * pod's labels (old or new) when the pod changes, and an Endpoints' key when it is
 * deleted (it comes back if its Service wants it). list_keys also gives every cached
 * Endpoints but leader-election records, so that those whose Service went while nothing
 * watched are deleted (kube's checkLeftoverEndpoints). 5 workers
 * (--concurrent-endpoint-syncs).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "controllers/endpoint.h"
#include "json.h"
#include "log.h"
#include "podendpoints.h"
#include "resource.h"
#include "util.h"

#define LABEL_MANAGED_BY "endpoints.kubernetes.io/managed-by"
#define MANAGED_BY "endpoint-controller"
#define LABEL_HEADLESS "service.kubernetes.io/headless"
#define ANNOTATION_OVER_CAPACITY "endpoints.kubernetes.io/over-capacity"
#define ANNOTATION_TRIGGER_TIME "endpoints.kubernetes.io/last-change-trigger-time"
#define ANNOTATION_LEADER "control-plane.alpha.kubernetes.io/leader"
#define MAX_CAPACITY 1000

enum {
	STMT_SERVICE,
	STMT_PODS,
	STMT_ENDPOINTS,
	STMT_SERVICES_IN_NAMESPACE,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const ep_sql[STMT_COUNT] = {
	[STMT_SERVICE] =
	    "SELECT body FROM cache_objects"
	    " WHERE resource = 'services' AND namespace = ?1 AND name = ?2",
	/* The pods Service ?2 selects, by name (the sync leaves out those that are no
	 * endpoint). */
	[STMT_PODS] =
	    PODENDPOINTS_SELECTED_PODS_SQL,
	[STMT_ENDPOINTS] =
	    "SELECT body FROM cache_objects"
	    " WHERE resource = 'endpoints' AND namespace = ?1 AND name = ?2",
	[STMT_SERVICES_IN_NAMESPACE] =
	    "SELECT name, json_object('matchLabels', json_extract(body, '$.spec.selector'))"
	    "  FROM cache_objects WHERE resource = 'services' AND namespace = ?1"
	    "   AND json_type(body, '$.spec.selector') = 'object'"
	    "   AND coalesce(json_extract(body, '$.spec.type'), '') != 'ExternalName'",
	/* Every Service that takes endpoints from a controller, and every Endpoints but
	 * leader-election records. */
	[STMT_KEYS] =
	    "SELECT namespace, name FROM cache_objects WHERE resource = 'services'"
	    "   AND json_type(body, '$.spec.selector') = 'object'"
	    "   AND coalesce(json_extract(body, '$.spec.type'), '') != 'ExternalName'"
	    " UNION"
	    " SELECT namespace, name FROM cache_objects WHERE resource = 'endpoints'"
	    "   AND json_extract(body, '$.metadata.annotations.\"" ANNOTATION_LEADER "\"') IS NULL"
	    " ORDER BY 1, 2",
};

struct ep_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	struct podendpoints_tracker *triggers;	/* kube's trigger time tracker */
	struct selector_cache *selectors;	/* its Services' selectors, by namespace */
	double batch;				/* --endpoint-updates-batch-period, seconds */
	const struct resource *services;
	const struct resource *endpoints;
};

/* --- subsets --------------------------------------------------------------------------- */

/* An address in its normal form: ip, hostname (when not empty), nodeName (when set),
 * targetRef's kind, namespace, name, uid, apiVersion and fieldPath (when set): what kube
 * compares, its resourceVersion left out. */
static cJSON *
address_normal(const cJSON *a)
{
	cJSON *out = cJSON_CreateObject(), *ref;
	const cJSON *node = cJSON_GetObjectItemCaseSensitive(a, "nodeName");
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(a, "targetRef");
	static const char *const fields[] = {
		"kind", "namespace", "name", "uid", "apiVersion", "fieldPath"
	};

	cJSON_AddStringToObject(out, "ip", json_string(a, "ip"));
	if (*json_string(a, "hostname") != '\0')
		cJSON_AddStringToObject(out, "hostname", json_string(a, "hostname"));
	if (cJSON_IsString(node))
		cJSON_AddStringToObject(out, "nodeName", node->valuestring);
	if (cJSON_IsObject(r)) {
		ref = cJSON_AddObjectToObject(out, "targetRef");
		for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
			if (*json_string(r, fields[i]) != '\0')
				cJSON_AddStringToObject(ref, fields[i], json_string(r, fields[i]));
		}
	}
	return out;
}

/* A port in its normal form: name (when not empty), port, protocol, appProtocol. */
static cJSON *
port_normal(const cJSON *p)
{
	cJSON *out = cJSON_CreateObject();
	const cJSON *app = cJSON_GetObjectItemCaseSensitive(p, "appProtocol");

	if (*json_string(p, "name") != '\0')
		cJSON_AddStringToObject(out, "name", json_string(p, "name"));
	cJSON_AddNumberToObject(out, "port", (double)json_int(p, "port", 0));
	if (*json_string(p, "protocol") != '\0')
		cJSON_AddStringToObject(out, "protocol", json_string(p, "protocol"));
	if (cJSON_IsString(app))
		cJSON_AddStringToObject(out, "appProtocol", app->valuestring);
	return out;
}

static char *
print_key(const cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);

	return s != NULL ? s : xstrdup("");
}

struct repack {
	struct {
		char *key;		/* ip and targetRef uid */
		char *sort;		/* ip, uid: the order of addresses */
		cJSON *json;
	} *addrs;
	int naddrs;
	struct {
		char *key;		/* "" for the sentinel of a subset without ports */
		cJSON *json;		/* NULL for the sentinel */
		signed char *state;	/* per address: -1 absent, 0 not ready, 1 ready */
	} *ports;
	int nports;
};

static int
repack_addr(struct repack *r, const cJSON *a)
{
	cJSON *norm = address_normal(a);
	char *key = xasprintf("%s|%s", json_string(norm, "ip"), json_string(norm, "targetRef.uid"));

	for (int i = 0; i < r->naddrs; i++) {
		if (strcmp(r->addrs[i].key, key) == 0) {
			free(key);
			cJSON_Delete(norm);
			return i;
		}
	}
	r->addrs = xrealloc(r->addrs, ((size_t)r->naddrs + 1) * sizeof *r->addrs);
	r->addrs[r->naddrs].key = key;
	r->addrs[r->naddrs].sort = xstrdup(key);
	r->addrs[r->naddrs].json = norm;
	for (int p = 0; p < r->nports; p++) {
		r->ports[p].state = xrealloc(r->ports[p].state, (size_t)r->naddrs + 1);
		r->ports[p].state[r->naddrs] = -1;
	}
	return r->naddrs++;
}

static int
repack_port(struct repack *r, const cJSON *p)
{
	cJSON *norm = p != NULL ? port_normal(p) : NULL;
	char *key = norm != NULL ? print_key(norm) : xstrdup("");

	for (int i = 0; i < r->nports; i++) {
		if (strcmp(r->ports[i].key, key) == 0) {
			free(key);
			cJSON_Delete(norm);
			return i;
		}
	}
	r->ports = xrealloc(r->ports, ((size_t)r->nports + 1) * sizeof *r->ports);
	r->ports[r->nports].key = key;
	r->ports[r->nports].json = norm;
	r->ports[r->nports].state = xmalloc((size_t)r->naddrs + 1);
	memset(r->ports[r->nports].state, -1, (size_t)r->naddrs + 1);
	return r->nports++;
}

/* Records address a (ready or not) under port p (NULL: the subset has none). */
static void
repack_add(struct repack *r, const cJSON *a, const cJSON *p, int ready)
{
	int ai = repack_addr(r, a), pi = repack_port(r, p);
	signed char *s = &r->ports[pi].state[ai];

	/* Not ready once, not ready for good (kube's wasReady). */
	if (*s != 0)
		*s = (signed char)ready;
}

static int
strcmp_p(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct subset_sort {
	char *key;
	cJSON *subset;
};

static int
by_key(const void *a, const void *b)
{
	return strcmp(((const struct subset_sort *)a)->key, ((const struct subset_sort *)b)->key);
}

static int
by_port(const void *a, const void *b)
{
	const cJSON *x = *(cJSON *const *)a, *y = *(cJSON *const *)b;
	int c = strcmp(json_string(x, "name"), json_string(y, "name"));

	if (c != 0)
		return c;
	return (json_int(x, "port", 0) > json_int(y, "port", 0)) -
	    (json_int(x, "port", 0) < json_int(y, "port", 0));
}

/* kube's RepackSubsets: the subsets r collected, addresses that have the same ports (and
 * readiness under each) together, in a fixed order. */
static cJSON *
repack_finish(struct repack *r)
{
	struct subset_sort *out = NULL;
	int nout = 0;
	char **sig = xcalloc((size_t)r->nports + 1, sizeof *sig);
	int *done = xcalloc((size_t)r->nports + 1, sizeof *done);
	cJSON *subsets = cJSON_CreateArray();

	for (int p = 0; p < r->nports; p++) {
		struct buf b;

		buf_init(&b);
		for (int a = 0; a < r->naddrs; a++) {
			if (r->ports[p].state[a] >= 0)
				buf_printf(&b, "%s=%d;", r->addrs[a].key, r->ports[p].state[a]);
		}
		buf_append_str(&b, "");
		sig[p] = buf_detach(&b);
	}
	for (int p = 0; p < r->nports; p++) {
		cJSON *subset, *ready = cJSON_CreateArray(), *unready = cJSON_CreateArray();
		cJSON **ports = NULL;
		const char **sorted = xcalloc((size_t)r->naddrs + 1, sizeof *sorted);
		int nports = 0, n = 0;

		if (done[p]) {
			cJSON_Delete(ready);
			cJSON_Delete(unready);
			free(sorted);
			continue;
		}
		for (int q = p; q < r->nports; q++) {
			if (done[q] || strcmp(sig[q], sig[p]) != 0)
				continue;
			done[q] = 1;
			if (r->ports[q].json != NULL) {
				ports = xrealloc(ports, ((size_t)nports + 1) * sizeof *ports);
				ports[nports++] = r->ports[q].json;
			}
		}
		for (int a = 0; a < r->naddrs; a++) {
			if (r->ports[p].state[a] >= 0)
				sorted[n++] = r->addrs[a].key;
		}
		qsort(sorted, (size_t)n, sizeof *sorted, strcmp_p);
		for (int k = 0; k < n; k++) {
			for (int a = 0; a < r->naddrs; a++) {
				if (strcmp(r->addrs[a].key, sorted[k]) != 0)
					continue;
				cJSON_AddItemToArray(r->ports[p].state[a] ? ready : unready,
				    cJSON_Duplicate(r->addrs[a].json, 1));
				break;
			}
		}
		free(sorted);
		subset = cJSON_CreateObject();
		if (cJSON_GetArraySize(ready) > 0)
			cJSON_AddItemToObject(subset, "addresses", ready);
		else
			cJSON_Delete(ready);
		if (cJSON_GetArraySize(unready) > 0)
			cJSON_AddItemToObject(subset, "notReadyAddresses", unready);
		else
			cJSON_Delete(unready);
		if (nports > 0) {
			cJSON *pa = cJSON_AddArrayToObject(subset, "ports");

			qsort(ports, (size_t)nports, sizeof *ports, by_port);
			for (int k = 0; k < nports; k++)
				cJSON_AddItemToArray(pa, cJSON_Duplicate(ports[k], 1));
		}
		free(ports);
		if (subset->child == NULL) {
			cJSON_Delete(subset);
			continue;
		}
		out = xrealloc(out, ((size_t)nout + 1) * sizeof *out);
		out[nout].key = print_key(subset);
		out[nout++].subset = subset;
	}
	if (nout > 1)
		qsort(out, (size_t)nout, sizeof *out, by_key);
	for (int i = 0; i < nout; i++) {
		cJSON_AddItemToArray(subsets, out[i].subset);
		free(out[i].key);
	}
	free(out);
	for (int p = 0; p < r->nports; p++) {
		free(sig[p]);
		free(r->ports[p].key);
		free(r->ports[p].state);
		cJSON_Delete(r->ports[p].json);
	}
	free(sig);
	free(done);
	free(r->ports);
	for (int a = 0; a < r->naddrs; a++) {
		free(r->addrs[a].key);
		free(r->addrs[a].sort);
		cJSON_Delete(r->addrs[a].json);
	}
	free(r->addrs);
	memset(r, 0, sizeof *r);
	return subsets;
}

cJSON *
endpoint_repack(const cJSON *subsets)
{
	struct repack r;
	const cJSON *s, *a, *p;

	memset(&r, 0, sizeof r);
	cJSON_ArrayForEach(s, subsets) {
		const cJSON *ports = cJSON_GetObjectItemCaseSensitive(s, "ports");
		int np = cJSON_GetArraySize(ports);

		for (int i = 0; i < (np > 0 ? np : 1); i++) {
			p = np > 0 ? cJSON_GetArrayItem(ports, i) : NULL;
			cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(s, "addresses"))
				repack_add(&r, a, p, 1);
			cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(s, "notReadyAddresses"))
				repack_add(&r, a, p, 0);
		}
	}
	return repack_finish(&r);
}

/* The address of pod for service (kube's podToEndpointAddressForService): its IP of the
 * Service's first family; NULL when it has none. */
static cJSON *
pod_address(const cJSON *service, const cJSON *pod)
{
	const cJSON *families = json_path(service, "spec.ipFamilies"), *ip;
	const char *cluster_ip = json_string(service, "spec.clusterIP");
	const char *found = NULL;
	int v6 = 0;
	cJSON *a, *ref;

	if (cJSON_GetArraySize(families) > 0) {
		const cJSON *first = cJSON_GetArrayItem(families, 0);

		v6 = cJSON_IsString(first) && strcmp(first->valuestring, "IPv6") == 0;
	} else if (*cluster_ip != '\0' && strcmp(cluster_ip, "None") != 0)
		v6 = podendpoints_is_ipv6(cluster_ip);
	else
		v6 = podendpoints_is_ipv6(json_string(pod, "status.podIP"));
	cJSON_ArrayForEach(ip, json_path(pod, "status.podIPs")) {
		const char *text = json_string(ip, "ip");

		if (*text != '\0' && podendpoints_is_ipv6(text) == v6) {
			found = text;
			break;
		}
	}
	if (found == NULL)
		return NULL;
	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "ip", found);
	if (podendpoints_sets_hostname(pod, service))
		cJSON_AddStringToObject(a, "hostname", json_string(pod, "spec.hostname"));
	cJSON_AddStringToObject(a, "nodeName", json_string(pod, "spec.nodeName"));
	ref = cJSON_AddObjectToObject(a, "targetRef");
	cJSON_AddStringToObject(ref, "kind", "Pod");
	cJSON_AddStringToObject(ref, "namespace", json_string(pod, "metadata.namespace"));
	cJSON_AddStringToObject(ref, "name", json_string(pod, "metadata.name"));
	cJSON_AddStringToObject(ref, "uid", json_string(pod, "metadata.uid"));
	return a;
}

cJSON *
endpoint_subsets(const cJSON *service, const cJSON *const *pods, int npods)
{
	struct repack r;
	int publish = cJSON_IsTrue(json_path(service, "spec.publishNotReadyAddresses"));
	const cJSON *ports = json_path(service, "spec.ports");

	memset(&r, 0, sizeof r);
	for (int i = 0; i < npods; i++) {
		const cJSON *sp;
		cJSON *a;
		int ready;

		if (!podendpoints_pod_included(pods[i], publish))
			continue;
		if ((a = pod_address(service, pods[i])) == NULL)
			continue;
		ready = publish || podendpoints_pod_ready(pods[i]);
		if (cJSON_GetArraySize(ports) == 0) {
			if (strcmp(json_string(service, "spec.clusterIP"), "None") == 0)
				repack_add(&r, a, NULL, ready);
		}
		cJSON_ArrayForEach(sp, ports) {
			cJSON *ep;
			int port;

			if (podendpoints_find_port(pods[i], sp, &port) != 0)
				continue;
			ep = cJSON_CreateObject();
			cJSON_AddStringToObject(ep, "name", json_string(sp, "name"));
			cJSON_AddNumberToObject(ep, "port", port);
			cJSON_AddStringToObject(ep, "protocol", json_string(sp, "protocol"));
			if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(sp, "appProtocol")))
				cJSON_AddStringToObject(ep, "appProtocol",
				    json_string(sp, "appProtocol"));
			repack_add(&r, a, ep, ready);
			cJSON_Delete(ep);
		}
		cJSON_Delete(a);
	}
	return repack_finish(&r);
}

/* kube's truncateEndpoints: past 1000 addresses, keeps the ready ones first, each subset
 * its share (rounded up) of what is kept. Returns 1 when it truncated. */
int
endpoint_truncate(cJSON *subsets)
{
	int total_ready = 0, total_unready = 0, truncate_ready = 0, max, total, can;
	cJSON *s;

	cJSON_ArrayForEach(s, subsets) {
		total_ready += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "addresses"));
		total_unready += cJSON_GetArraySize(
		    cJSON_GetObjectItemCaseSensitive(s, "notReadyAddresses"));
	}
	if (total_ready + total_unready <= MAX_CAPACITY)
		return 0;
	max = MAX_CAPACITY - total_ready;
	total = total_unready;
	if (total_ready > MAX_CAPACITY) {
		truncate_ready = 1;
		max = MAX_CAPACITY;
		total = total_ready;
	}
	can = max;
	cJSON_ArrayForEach(s, subsets) {
		cJSON *list = cJSON_GetObjectItemCaseSensitive(s,
		    truncate_ready ? "addresses" : "notReadyAddresses");
		int in = cJSON_GetArraySize(list);
		int add = (int)ceil((double)in / (double)total * (double)max);

		if (add > can)
			add = can;
		while (cJSON_GetArraySize(list) > add)
			cJSON_DeleteItemFromArray(list, cJSON_GetArraySize(list) - 1);
		if (truncate_ready)
			cJSON_DeleteItemFromObjectCaseSensitive(s, "notReadyAddresses");
		can -= cJSON_GetArraySize(list);
	}
	return 1;
}

/* The labels the Endpoints of service carries: the Service's, the headless label for one
 * without a cluster IP, the manager. */
static cJSON *
endpoints_labels(const cJSON *service)
{
	const cJSON *labels = json_path(service, "metadata.labels");
	cJSON *out = cJSON_IsObject(labels) ? cJSON_Duplicate(labels, 1) : cJSON_CreateObject();

	cJSON_DeleteItemFromObjectCaseSensitive(out, LABEL_HEADLESS);
	if (!podendpoints_service_has_cluster_ip(service))
		cJSON_AddStringToObject(out, LABEL_HEADLESS, "");
	json_set(out, LABEL_MANAGED_BY, cJSON_CreateString(MANAGED_BY));
	return out;
}

/* kube's labelsCorrectForEndpoints. */
static int
labels_correct(const cJSON *ep_labels, const cJSON *svc_labels)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(ep_labels, LABEL_MANAGED_BY), *l;
	int skipped = 0, n_ep = 0, n_svc = 0;

	if (!cJSON_IsString(m) || strcmp(m->valuestring, MANAGED_BY) != 0)
		return 0;
	cJSON_ArrayForEach(l, ep_labels) {
		const cJSON *sv;

		n_ep++;
		if (strcmp(l->string, LABEL_HEADLESS) == 0 || strcmp(l->string, LABEL_MANAGED_BY) == 0) {
			skipped++;
			continue;
		}
		sv = cJSON_GetObjectItemCaseSensitive(svc_labels, l->string);
		if (!cJSON_IsString(sv) || !cJSON_IsString(l) ||
		    strcmp(sv->valuestring, l->valuestring) != 0)
			return 0;
	}
	cJSON_ArrayForEach(l, svc_labels)
		n_svc++;
	return n_svc == n_ep - skipped;
}

/* --- sync ------------------------------------------------------------------------------ */

static struct action *
endpoints_write(struct sync_result *out, const struct ep_state *st, enum action_type type,
    const char *namespace, const char *name)
{
	struct action *a = action_append(&out->writes, &out->nwrites);

	a->type = type;
	a->resource = st->endpoints;
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(name);
	return a;
}

static int
ep_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct ep_state *st = c->state;
	sqlite3_stmt *stmt;
	char *namespace = NULL;
	const char *name;
	cJSON *service = NULL, *current = NULL, **pods = NULL, *subsets = NULL;
	int npods = 0, caught_up, rc = -1;
	double trigger = 0;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->services;
	if (controller_key_split(key, &namespace, &name) != 0) {
		log_error("endpoint: %s is no namespace/name key", key);
		return 0;
	}
	stmt = controller_stmt(st->stmt[STMT_SERVICE]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		service = controller_column_json(stmt, 0);
	sqlite3_reset(stmt);
	stmt = controller_stmt(st->stmt[STMT_ENDPOINTS]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		current = controller_column_json(stmt, 0);
	sqlite3_reset(stmt);
	if (service == NULL) {
		podendpoints_tracker_forget(st->triggers, key);
		/* Forgetting the key's bookkeeping ends an execution before its writes: only
		 * once there is nothing left to delete. */
		out->forget_expectations = current == NULL;
		if (current != NULL) {
			struct action *a = endpoints_write(out, st, ACTION_DELETE, namespace, name);
			struct action *g = action_append(&out->confirm_absent, &out->nconfirm_absent);

			a->verb = "delete";
			a->uid = xstrdup(json_string(current, "metadata.uid"));
			a->reason = xstrdup("its Service is gone");
			g->type = ACTION_GET;
			g->verb = "get";
			g->resource = st->services;
			g->namespace = xstrdup(namespace);
			g->name = xstrdup(name);
			g->reason = xstrdup("the Service must be gone");
		}
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
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cJSON *pod = cJSON_Parse((const char *)sqlite3_column_text(stmt, 0));

		if (pod == NULL)
			continue;
		pods = xrealloc(pods, ((size_t)npods + 1) * sizeof *pods);
		pods[npods++] = pod;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		rc = error_set(error, "endpoint: listing the pods of %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		goto done;
	}
	rc = -1;
	trigger = podendpoints_trigger_time(st->triggers, key, service,
	    (const cJSON *const *)pods, npods);
	subsets = endpoint_subsets(service, (const cJSON *const *)pods, npods);
	if (current != NULL) {
		cJSON *have = endpoint_repack(json_path(current, "subsets"));
		int total = 0, same;
		const cJSON *s;

		cJSON_ArrayForEach(s, json_path(current, "subsets")) {
			total += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "addresses")) +
			    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s,
			    "notReadyAddresses"));
		}
		same = cJSON_Compare(have, subsets, 1) &&
		    labels_correct(json_path(current, "metadata.labels"),
		    json_path(service, "metadata.labels")) &&
		    total <= MAX_CAPACITY &&
		    json_annotation(current, ANNOTATION_OVER_CAPACITY) == NULL;
		cJSON_Delete(have);
		if (same) {
			rc = 0;
			goto done;
		}
	}
	{
		cJSON *object = current != NULL ? cJSON_Duplicate(current, 1) : cJSON_CreateObject();
		cJSON *meta = json_child_object(object, "metadata"), *annotations;
		struct action *a;
		int truncated = endpoint_truncate(subsets);

		if (current == NULL) {
			cJSON_AddStringToObject(object, "apiVersion", "v1");
			cJSON_AddStringToObject(object, "kind", "Endpoints");
			cJSON_AddStringToObject(meta, "name", name);
			cJSON_AddStringToObject(meta, "namespace", namespace);
		}
		json_set(meta, "labels", endpoints_labels(service));
		annotations = json_child_object(meta, "annotations");
		cJSON_DeleteItemFromObjectCaseSensitive(annotations, ANNOTATION_TRIGGER_TIME);
		if (trigger != 0) {
			char text[32];

			podendpoints_format_time(trigger, text, sizeof text);
			cJSON_AddStringToObject(annotations, ANNOTATION_TRIGGER_TIME, text);
		}
		cJSON_DeleteItemFromObjectCaseSensitive(annotations, ANNOTATION_OVER_CAPACITY);
		if (truncated)
			cJSON_AddStringToObject(annotations, ANNOTATION_OVER_CAPACITY, "truncated");
		if (annotations->child == NULL)
			cJSON_DeleteItemFromObjectCaseSensitive(meta, "annotations");
		if (cJSON_GetArraySize(subsets) > 0) {
			json_set(object, "subsets", subsets);
			subsets = NULL;
		} else {
			cJSON_DeleteItemFromObjectCaseSensitive(object, "subsets");
		}
		a = endpoints_write(out, st, current != NULL ? ACTION_UPDATE : ACTION_CREATE,
		    namespace, name);
		a->verb = current != NULL ? "update" : "create";
		if (current != NULL)
			a->uid = xstrdup(json_string(current, "metadata.uid"));
		a->body = object;
		a->event_on_target = 1;
		a->failed_reason = current != NULL ? "FailedToUpdateEndpoint" :
		    "FailedToCreateEndpoint";
		a->failed_message = current != NULL ?
		    xasprintf("Failed to update endpoint %s/%s: ", namespace, name) :
		    xasprintf("Failed to create endpoint for service %s/%s: ", namespace, name);
		a->reason = xasprintf("%d subsets%s", cJSON_GetArraySize(
		    cJSON_GetObjectItemCaseSensitive(object, "subsets")),
		    truncated ? ", truncated at 1000 addresses" : "");
	}
	rc = 0;
done:
	for (int i = 0; i < npods; i++)
		cJSON_Delete(pods[i]);
	free(pods);
	cJSON_Delete(subsets);
	cJSON_Delete(service);
	cJSON_Delete(current);
	free(namespace);
	return rc;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
ep_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct ep_state *st = c->state;
	const char *namespace = json_string(ev->object, "metadata.namespace");
	const char *name = json_string(ev->object, "metadata.name");

	(void)now;
	if (strcmp(ev->resource->name, "services") == 0)
		selector_cache_forget(st->selectors, namespace);
	if (strcmp(ev->resource->name, "services") == 0 ||
	    (strcmp(ev->resource->name, "endpoints") == 0 && ev->type == INFORMER_DELETED)) {
		if (*namespace != '\0' && *name != '\0') {
			char *key = xasprintf("%s/%s", namespace, name);

			q->add(key, q->arg);
			free(key);
		}
	} else if (strcmp(ev->resource->name, "pods") == 0) {
		cJSON *old = ev->old_body != NULL ? cJSON_Parse(ev->old_body) : NULL;
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
		cJSON_Delete(old);
	}
}

static int
ep_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct ep_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "endpoint", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
ep_init(struct controller *c, char **error)
{
	struct ep_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->triggers = podendpoints_tracker_new();
	st->selectors = selector_cache_new();
	st->batch = controller_flag_seconds(c, "endpoint-updates-batch-period");
	st->services = resource_find("services");
	st->endpoints = resource_find("endpoints");
	if (st->services == NULL || st->endpoints == NULL)
		return error_set(error, "endpoint: services and endpoints are not known resources");
	return store_prepare_statements(store_db(c->store), ep_sql, STMT_COUNT, st->stmt,
	    "endpoint", error);
}

static void
ep_fini(struct controller *c)
{
	struct ep_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	podendpoints_tracker_free(st->triggers);
	selector_cache_free(st->selectors);
	free(st);
	c->state = NULL;
}

static const char *const ep_resources[] = { "services", "pods", "endpoints", NULL };

static const struct controller_flag ep_flags[] = {
	{ "endpoint-updates-batch-period", CONTROLLER_FLAG_DURATION, "0s", 0, 0,
	  "The length of endpoint updates batching period. Processing of pod changes will be "
	  "delayed by this duration to join them with potential upcoming updates and reduce "
	  "the overall number of endpoints updates. Larger number = higher endpoint "
	  "programming latency, but lower number of endpoints revision generated" },
	{ NULL, 0, NULL, 0, 0, NULL },
};

const struct controller_type endpoint_controller_type = {
	.name = "endpoint",
	.resources = ep_resources,
	.default_workers = 5,
	.workers_flag = "concurrent-endpoint-syncs",
	.workers_help = "The number of endpoint syncing operations that will be done "
	    "concurrently.",
	.enable_flag = NULL,
	.flags = ep_flags,
	.event_component = "endpoint-controller",
	.client_name = "endpoint-controller",
	.recovery = NULL,
	.init = ep_init,
	.fini = ep_fini,
	.handle_event = ep_handle_event,
	.list_keys = ep_list_keys,
	.sync = ep_sync,
};
