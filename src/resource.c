/*
 * resource.c - the resources sqlkcm caches: their API paths, tables and typed columns.
 *
 * Adding a resource is one entry here plus its table in a schema file: the store builds
 * its INSERT from the column list, the informer its URLs from the path. Typed columns are
 * copies of fields the controllers query; most are a dotted path into the object, the few
 * that need a rule (the Ready condition, the largest restart count, the deletion-cost
 * annotation) are computed by a function that says which rule it follows.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "resource.h"
#include "util.h"

/* Binds a JSON string, or NULL when the value is absent or not a string. */
static int
bind_string(sqlite3_stmt *stmt, int index, const cJSON *value)
{
	if (cJSON_IsString(value) && value->valuestring != NULL)
		return sqlite3_bind_text(stmt, index, value->valuestring, -1, SQLITE_TRANSIENT);
	return sqlite3_bind_null(stmt, index);
}

int
resource_column_bind(const struct resource_column *c, sqlite3_stmt *stmt, int index,
    const cJSON *object)
{
	const cJSON *value = c->path != NULL ? json_path(object, c->path) : NULL;
	char *text;
	int rc;

	switch (c->type) {
	case COLUMN_TEXT:
		return bind_string(stmt, index, value);
	case COLUMN_INTEGER:
		if (cJSON_IsNumber(value))
			return sqlite3_bind_int64(stmt, index, (sqlite3_int64)value->valuedouble);
		return sqlite3_bind_int64(stmt, index, c->default_value);
	case COLUMN_BOOLEAN:
		if (cJSON_IsBool(value))
			return sqlite3_bind_int(stmt, index, cJSON_IsTrue(value));
		return sqlite3_bind_int64(stmt, index, c->default_value);
	case COLUMN_JSON:
		if (value == NULL || cJSON_IsNull(value))
			return sqlite3_bind_null(stmt, index);
		text = cJSON_PrintUnformatted(value);
		if (text == NULL)
			return SQLITE_NOMEM;
		rc = sqlite3_bind_text(stmt, index, text, -1, SQLITE_TRANSIENT);
		cJSON_free(text);
		return rc;
	case COLUMN_CUSTOM:
		return c->bind(stmt, index, object);
	}
	return SQLITE_MISUSE;
}

/* --- pods ---------------------------------------------------------------------------- */

/* Returns the pod's condition of the given type, or NULL. */
static const cJSON *
pod_condition(const cJSON *pod, const char *type)
{
	const cJSON *conditions = json_path(pod, "status.conditions");
	const cJSON *c;

	cJSON_ArrayForEach(c, conditions) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
		if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0)
			return c;
	}
	return NULL;
}

/* ready: 1 when the Ready condition's status is "True", 0 for any other status, NULL
 * when the pod has no Ready condition (kcm's IsPodReady treats that as not ready). */
static int
pod_bind_ready(sqlite3_stmt *stmt, int index, const cJSON *pod)
{
	const cJSON *ready = pod_condition(pod, "Ready");
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(ready, "status");

	if (ready == NULL)
		return sqlite3_bind_null(stmt, index);
	return sqlite3_bind_int(stmt, index,
	    cJSON_IsString(status) && strcmp(status->valuestring, "True") == 0);
}

/* ready_since: the Ready condition's lastTransitionTime. */
static int
pod_bind_ready_since(sqlite3_stmt *stmt, int index, const cJSON *pod)
{
	const cJSON *ready = pod_condition(pod, "Ready");

	return bind_string(stmt, index,
	    cJSON_GetObjectItemCaseSensitive(ready, "lastTransitionTime"));
}

/* restarts: the largest restartCount among the pod's containers, the figure kcm's pod
 * ranking compares (init containers are not counted, as there). */
static int
pod_bind_restarts(sqlite3_stmt *stmt, int index, const cJSON *pod)
{
	const cJSON *statuses = json_path(pod, "status.containerStatuses");
	const cJSON *cs;
	long long max = 0;

	cJSON_ArrayForEach(cs, statuses) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(cs, "restartCount");
		if (cJSON_IsNumber(n) && n->valuedouble > max)
			max = (long long)n->valuedouble;
	}
	return sqlite3_bind_int64(stmt, index, max);
}

/* deletion_cost: the controller.kubernetes.io/pod-deletion-cost annotation when it is a
 * base-10 int32 (an optional sign, digits, nothing else); NULL when absent or invalid,
 * which pod ranking treats as cost 0, as kcm does. */
static int
pod_bind_deletion_cost(sqlite3_stmt *stmt, int index, const cJSON *pod)
{
	const cJSON *annotations = json_path(pod, "metadata.annotations");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(annotations,
	    "controller.kubernetes.io/pod-deletion-cost");
	const char *s, *digits;
	char *end;
	long long n;

	if (!cJSON_IsString(v) || v->valuestring == NULL)
		return sqlite3_bind_null(stmt, index);
	s = v->valuestring;
	/* As kube: no '+', no leading zero but "0" itself. */
	digits = *s == '-' ? s + 1 : s;
	if (*digits < '0' || *digits > '9' || (s[0] == '0' && s[1] != '\0'))
		return sqlite3_bind_null(stmt, index);
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || n < INT32_MIN || n > INT32_MAX)
		return sqlite3_bind_null(stmt, index);
	return sqlite3_bind_int64(stmt, index, n);
}

/* sidecar_restarts: the largest restartCount among the pod's sidecars (init containers
 * with restartPolicy Always), which kcm's ranking compares after the containers'. */
static int
pod_bind_sidecar_restarts(sqlite3_stmt *stmt, int index, const cJSON *pod)
{
	const cJSON *statuses = json_path(pod, "status.initContainerStatuses");
	const cJSON *specs = json_path(pod, "spec.initContainers");
	const cJSON *cs, *c;
	long long max = 0;

	cJSON_ArrayForEach(cs, statuses) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(cs, "name");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(cs, "restartCount");
		int sidecar = 0;

		if (!cJSON_IsString(name) || !cJSON_IsNumber(n) || n->valuedouble <= max)
			continue;
		cJSON_ArrayForEach(c, specs) {
			const cJSON *cn = cJSON_GetObjectItemCaseSensitive(c, "name");
			const cJSON *policy = cJSON_GetObjectItemCaseSensitive(c, "restartPolicy");
			if (cJSON_IsString(cn) && strcmp(cn->valuestring, name->valuestring) == 0 &&
			    cJSON_IsString(policy) && strcmp(policy->valuestring, "Always") == 0)
				sidecar = 1;
		}
		if (sidecar)
			max = (long long)n->valuedouble;
	}
	return sqlite3_bind_int64(stmt, index, max);
}

/* controller_uid: the uid of the pod's controller owner reference, NULL when none. */
static int
pod_bind_controller_uid(sqlite3_stmt *stmt, int index, const cJSON *pod)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, json_path(pod, "metadata.ownerReferences")) {
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")))
			return bind_string(stmt, index, cJSON_GetObjectItemCaseSensitive(ref, "uid"));
	}
	return sqlite3_bind_null(stmt, index);
}

static const struct resource_column pod_columns[] = {
	{ "phase", COLUMN_TEXT, "status.phase", 0, NULL },
	{ "node_name", COLUMN_TEXT, "spec.nodeName", 0, NULL },
	{ "ready", COLUMN_CUSTOM, NULL, 0, pod_bind_ready },
	{ "ready_since", COLUMN_CUSTOM, NULL, 0, pod_bind_ready_since },
	{ "restarts", COLUMN_CUSTOM, NULL, 0, pod_bind_restarts },
	{ "deletion_cost", COLUMN_CUSTOM, NULL, 0, pod_bind_deletion_cost },
	{ "sidecar_restarts", COLUMN_CUSTOM, NULL, 0, pod_bind_sidecar_restarts },
	{ "controller_uid", COLUMN_CUSTOM, NULL, 0, pod_bind_controller_uid },
	{ NULL, 0, NULL, 0, NULL },
};

/* --- replicasets and deployments ------------------------------------------------------ */

static const struct resource_column replicaset_columns[] = {
	{ "replicas", COLUMN_INTEGER, "spec.replicas", 1, NULL },
	{ "min_ready_seconds", COLUMN_INTEGER, "spec.minReadySeconds", 0, NULL },
	{ "selector", COLUMN_JSON, "spec.selector", 0, NULL },
	{ "status_replicas", COLUMN_INTEGER, "status.replicas", 0, NULL },
	{ "status_fully_labeled_replicas", COLUMN_INTEGER, "status.fullyLabeledReplicas", 0, NULL },
	{ "status_ready_replicas", COLUMN_INTEGER, "status.readyReplicas", 0, NULL },
	{ "status_available_replicas", COLUMN_INTEGER, "status.availableReplicas", 0, NULL },
	{ "observed_generation", COLUMN_INTEGER, "status.observedGeneration", 0, NULL },
	{ NULL, 0, NULL, 0, NULL },
};

/* selector: a ReplicationController's spec.selector (a map of labels) as the LabelSelector
 * kube converts it to, {"matchLabels": {...}}, so that the column reads as a ReplicaSet's;
 * NULL when absent. */
static int
replicationcontroller_bind_selector(sqlite3_stmt *stmt, int index, const cJSON *rc)
{
	const cJSON *selector = json_path(rc, "spec.selector");
	cJSON *wrapped;
	char *text;
	int status;

	if (!cJSON_IsObject(selector))
		return sqlite3_bind_null(stmt, index);
	wrapped = cJSON_CreateObject();
	cJSON_AddItemToObject(wrapped, "matchLabels", cJSON_Duplicate(selector, 1));
	text = cJSON_PrintUnformatted(wrapped);
	cJSON_Delete(wrapped);
	if (text == NULL)
		return SQLITE_NOMEM;
	status = sqlite3_bind_text(stmt, index, text, -1, SQLITE_TRANSIENT);
	cJSON_free(text);
	return status;
}

/* A ReplicationController's columns are a ReplicaSet's (it has no
 * status.terminatingReplicas, which no column holds). */
static const struct resource_column replicationcontroller_columns[] = {
	{ "replicas", COLUMN_INTEGER, "spec.replicas", 1, NULL },
	{ "min_ready_seconds", COLUMN_INTEGER, "spec.minReadySeconds", 0, NULL },
	{ "selector", COLUMN_CUSTOM, NULL, 0, replicationcontroller_bind_selector },
	{ "status_replicas", COLUMN_INTEGER, "status.replicas", 0, NULL },
	{ "status_fully_labeled_replicas", COLUMN_INTEGER, "status.fullyLabeledReplicas", 0, NULL },
	{ "status_ready_replicas", COLUMN_INTEGER, "status.readyReplicas", 0, NULL },
	{ "status_available_replicas", COLUMN_INTEGER, "status.availableReplicas", 0, NULL },
	{ "observed_generation", COLUMN_INTEGER, "status.observedGeneration", 0, NULL },
	{ NULL, 0, NULL, 0, NULL },
};

static const struct resource_column deployment_columns[] = {
	{ "replicas", COLUMN_INTEGER, "spec.replicas", 1, NULL },
	{ "min_ready_seconds", COLUMN_INTEGER, "spec.minReadySeconds", 0, NULL },
	{ "selector", COLUMN_JSON, "spec.selector", 0, NULL },
	{ "paused", COLUMN_BOOLEAN, "spec.paused", 0, NULL },
	{ "status_replicas", COLUMN_INTEGER, "status.replicas", 0, NULL },
	{ "status_updated_replicas", COLUMN_INTEGER, "status.updatedReplicas", 0, NULL },
	{ "status_ready_replicas", COLUMN_INTEGER, "status.readyReplicas", 0, NULL },
	{ "status_available_replicas", COLUMN_INTEGER, "status.availableReplicas", 0, NULL },
	{ "observed_generation", COLUMN_INTEGER, "status.observedGeneration", 0, NULL },
	{ NULL, 0, NULL, 0, NULL },
};

/* The resources below share cache_objects with the metadata ones: their controllers read
 * a field or two, which SQL takes from the body (json_extract), so they need no table of
 * their own, and the garbage collector's and namespace controller's queries over
 * cache_objects see them as they see every other resource. */
static const struct resource_column no_columns[] = {
	{ NULL, 0, NULL, 0, NULL },
};

static const struct resource resource_pods = {
	"pods", "Pod", "v1", "/api/v1/pods", "cache_pods", pod_columns, 0, 0, 1, NULL,
};
static const struct resource resource_replicasets = {
	"replicasets", "ReplicaSet", "apps/v1", "/apis/apps/v1/replicasets",
	"cache_replicasets", replicaset_columns, 1, 0, 1, NULL,
};
static const struct resource resource_deployments = {
	"deployments", "Deployment", "apps/v1", "/apis/apps/v1/deployments",
	"cache_deployments", deployment_columns, 2, 0, 1, NULL,
};

/* Whole: the namespace controller reads spec.finalizers and status.phase. */
static const struct resource resource_namespaces = {
	"namespaces", "Namespace", "v1", "/api/v1/namespaces", "cache_objects", no_columns,
	3, 0, 0, NULL,
};
/* Whole: the root CA publisher compares data["ca.crt"]. */
static const struct resource resource_configmaps = {
	"configmaps", "ConfigMap", "v1", "/api/v1/configmaps", "cache_objects", no_columns,
	4, 0, 1, NULL,
};
/* Whole: the serviceaccount and token controllers ask whether one exists, the legacy
 * token cleaner reads its secrets list. */
static const struct resource resource_serviceaccounts = {
	"serviceaccounts", "ServiceAccount", "v1", "/api/v1/serviceaccounts", "cache_objects",
	no_columns, 5, 0, 1, NULL,
};
/* Whole: the pod garbage collector asks which nodes exist, and reads the Ready condition
 * and the out-of-service taint of those that do. */
static const struct resource resource_nodes = {
	"nodes", "Node", "v1", "/api/v1/nodes", "cache_objects", no_columns, 6, 0, 0, NULL,
};

/* Its own table, shaped as cache_replicasets': the ReplicaSet controller's queries run
 * on it. */
static const struct resource resource_replicationcontrollers = {
	"replicationcontrollers", "ReplicationController", "v1",
	"/api/v1/replicationcontrollers", "cache_replicationcontrollers",
	replicationcontroller_columns, 7, 0, 1, NULL,
};

/* Whole: the node lifecycle controller reads the renewTime of each node's Lease in
 * kube-node-lease, the kubelet's heartbeat. */
static const struct resource resource_leases = {
	"leases", "Lease", "coordination.k8s.io/v1", "/apis/coordination.k8s.io/v1/leases",
	"cache_objects", no_columns, 8, 0, 1, NULL,
};

/* Whole: the CSR cleaner reads the conditions and the certificate. */
static const struct resource resource_certificatesigningrequests = {
	"certificatesigningrequests", "CertificateSigningRequest", "certificates.k8s.io/v1",
	"/apis/certificates.k8s.io/v1/certificatesigningrequests", "cache_objects", no_columns,
	9, 0, 0, NULL,
};

/* Whole: the EndpointSlice and Endpoints controllers read the selector, ports and IP
 * families of each Service. */
static const struct resource resource_services = {
	"services", "Service", "v1", "/api/v1/services", "cache_objects", no_columns,
	10, 0, 1, NULL,
};
/* Whole: the Endpoints controller compares the subsets it would write; the mirroring
 * controller copies them into EndpointSlices. */
static const struct resource resource_endpoints = {
	"endpoints", "Endpoints", "v1", "/api/v1/endpoints", "cache_objects", no_columns,
	11, 0, 1, NULL,
};
/* Whole: the slice controllers compare each slice's endpoints and ports. */
static const struct resource resource_endpointslices = {
	"endpointslices", "EndpointSlice", "discovery.k8s.io/v1",
	"/apis/discovery.k8s.io/v1/endpointslices", "cache_objects", no_columns, 12, 0, 1,
	NULL,
};
/* Whole: the history of a DaemonSet's (and a StatefulSet's) templates. */
static const struct resource resource_controllerrevisions = {
	"controllerrevisions", "ControllerRevision", "apps/v1",
	"/apis/apps/v1/controllerrevisions", "cache_objects", no_columns, 13, 0, 1, NULL,
};
static const struct resource resource_daemonsets = {
	"daemonsets", "DaemonSet", "apps/v1", "/apis/apps/v1/daemonsets", "cache_objects",
	no_columns, 14, 0, 1, NULL,
};
static const struct resource resource_jobs = {
	"jobs", "Job", "batch/v1", "/apis/batch/v1/jobs", "cache_objects", no_columns, 15, 0, 1,
	NULL,
};
static const struct resource resource_cronjobs = {
	"cronjobs", "CronJob", "batch/v1", "/apis/batch/v1/cronjobs", "cache_objects",
	no_columns, 16, 0, 1, NULL,
};
/* Whole: the StatefulSet controller's pods and claims, the disruption controller's
 * budgets and the scale of their pods' controllers, the quota controller's usage. */
static const struct resource resource_statefulsets = {
	"statefulsets", "StatefulSet", "apps/v1", "/apis/apps/v1/statefulsets", "cache_objects",
	no_columns, 17, 0, 1, NULL,
};
static const struct resource resource_persistentvolumeclaims = {
	"persistentvolumeclaims", "PersistentVolumeClaim", "v1", "/api/v1/persistentvolumeclaims",
	"cache_objects", no_columns, 18, 0, 1, NULL,
};
static const struct resource resource_poddisruptionbudgets = {
	"poddisruptionbudgets", "PodDisruptionBudget", "policy/v1",
	"/apis/policy/v1/poddisruptionbudgets", "cache_objects", no_columns, 19, 0, 1, NULL,
};
static const struct resource resource_resourcequotas = {
	"resourcequotas", "ResourceQuota", "v1", "/api/v1/resourcequotas", "cache_objects",
	no_columns, 20, 0, 1, NULL,
};
/* Whole: the aggregation controller reads each role's labels, aggregation rule and rules. */
static const struct resource resource_clusterroles = {
	"clusterroles", "ClusterRole", "rbac.authorization.k8s.io/v1",
	"/apis/rbac.authorization.k8s.io/v1/clusterroles", "cache_objects", no_columns, 21, 0, 0,
	NULL,
};
/* Whole: the token controller reads each service-account-token Secret's annotations and
 * data (whether the token, namespace and ca.crt are there), the cleaner its labels. */
static const struct resource resource_secrets = {
	"secrets", "Secret", "v1", "/api/v1/secrets", "cache_objects", no_columns, 22, 0, 1,
	NULL,
};
/* Whole: the Service CIDR controller reads each ServiceCIDR's CIDRs, finalizers and
 * conditions, and the names and labels of the IPAddresses the ipallocator holds. */
static const struct resource resource_servicecidrs = {
	"servicecidrs", "ServiceCIDR", "networking.k8s.io/v1",
	"/apis/networking.k8s.io/v1/servicecidrs", "cache_objects", no_columns, 23, 0, 0, NULL,
};
static const struct resource resource_ipaddresses = {
	"ipaddresses", "IPAddress", "networking.k8s.io/v1",
	"/apis/networking.k8s.io/v1/ipaddresses", "cache_objects", no_columns, 24, 0, 0, NULL,
};

/* Whole, for the storage controllers (persistentvolume-binder, the protection
 * controllers, attachdetach, the expander): volumes and their classes, the drivers that
 * say whether a volume is attached, the nodes' CSI drivers, and the attachments. */
static const struct resource resource_persistentvolumes = {
	"persistentvolumes", "PersistentVolume", "v1", "/api/v1/persistentvolumes",
	"cache_objects", no_columns, 25, 0, 0, NULL,
};
static const struct resource resource_storageclasses = {
	"storageclasses", "StorageClass", "storage.k8s.io/v1",
	"/apis/storage.k8s.io/v1/storageclasses", "cache_objects", no_columns, 26, 0, 0, NULL,
};
static const struct resource resource_volumeattachments = {
	"volumeattachments", "VolumeAttachment", "storage.k8s.io/v1",
	"/apis/storage.k8s.io/v1/volumeattachments", "cache_objects", no_columns, 27, 0, 0,
	NULL,
};
static const struct resource resource_csidrivers = {
	"csidrivers", "CSIDriver", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csidrivers",
	"cache_objects", no_columns, 28, 0, 0, NULL,
};
static const struct resource resource_csinodes = {
	"csinodes", "CSINode", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csinodes",
	"cache_objects", no_columns, 29, 0, 0, NULL,
};
static const struct resource resource_volumeattributesclasses = {
	"volumeattributesclasses", "VolumeAttributesClass", "storage.k8s.io/v1",
	"/apis/storage.k8s.io/v1/volumeattributesclasses", "cache_objects", no_columns, 30, 0,
	0, NULL,
};

const struct resource *const resource_all[] = {
	&resource_pods, &resource_replicasets, &resource_deployments, &resource_namespaces,
	&resource_configmaps, &resource_serviceaccounts, &resource_nodes,
	&resource_replicationcontrollers, &resource_leases, &resource_certificatesigningrequests,
	&resource_services, &resource_endpoints, &resource_endpointslices,
	&resource_controllerrevisions, &resource_daemonsets, &resource_jobs, &resource_cronjobs,
	&resource_statefulsets, &resource_persistentvolumeclaims, &resource_poddisruptionbudgets,
	&resource_resourcequotas, &resource_clusterroles, &resource_secrets,
	&resource_servicecidrs, &resource_ipaddresses, &resource_persistentvolumes,
	&resource_storageclasses, &resource_volumeattachments, &resource_csidrivers,
	&resource_csinodes, &resource_volumeattributesclasses,
};
const int resource_count = sizeof resource_all / sizeof resource_all[0];

int
resource_held_in_batches(const struct resource *r)
{
	return r->metadata_only || r == &resource_leases || r == &resource_nodes;
}

int
resource_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > RESOURCE_NAME_MAX || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
	    n;
}

const struct resource *
resource_find(const char *name)
{
	for (int i = 0; i < resource_count; i++) {
		if (strcmp(resource_all[i]->name, name) == 0)
			return resource_all[i];
	}
	return NULL;
}

/* --- metadata resources --------------------------------------------------------------- */

/* The metadata resources registered so far, by index - resource_count. */
static struct resource **metadata_resources;
static int metadata_count;

size_t
resource_group_length(const char *api_version)
{
	const char *slash = strchr(api_version, '/');

	return slash != NULL ? (size_t)(slash - api_version) : 0;
}

/* True when r's group is the n bytes at group. */
static int
same_group(const struct resource *r, const char *group, size_t n)
{
	return resource_group_length(r->api_version) == n &&
	    strncmp(r->api_version, group, n) == 0;
}

const struct resource *
resource_metadata(const char *group, const char *version, const char *plural,
    const char *kind, int namespaced)
{
	struct resource *r;
	char *name, *api_version;

	for (int i = 0; i < resource_count; i++) {
		if (strcmp(resource_all[i]->name, plural) == 0 &&
		    same_group(resource_all[i], group, strlen(group)))
			return resource_all[i];
	}
	name = *group == '\0' ? xstrdup(plural) : xasprintf("%s.%s", plural, group);
	api_version = *group == '\0' ? xstrdup(version) : xasprintf("%s/%s", group, version);
	for (int i = 0; i < metadata_count; i++) {
		r = metadata_resources[i];
		if (strcmp(r->name, name) == 0 && strcmp(r->kind, kind) == 0 &&
		    r->namespaced == namespaced && strcmp(r->api_version, api_version) == 0) {
			free(name);
			free(api_version);
			return r;
		}
	}
	r = xcalloc(1, sizeof *r);
	r->name = name;
	r->kind = xstrdup(kind);
	r->api_version = api_version;
	r->path = *group == '\0' ? xasprintf("/api/%s/%s", version, plural) :
	    xasprintf("/apis/%s/%s/%s", group, version, plural);
	r->plural = xstrdup(plural);
	r->table = "cache_objects";
	r->columns = no_columns;
	r->index = resource_count + metadata_count;
	r->metadata_only = 1;
	r->namespaced = namespaced;
	metadata_resources = xrealloc(metadata_resources,
	    ((size_t)metadata_count + 1) * sizeof *metadata_resources);
	metadata_resources[metadata_count++] = r;
	return r;
}

const struct resource *
resource_metadata_named(const char *name, const char *api_version, const char *kind,
    int namespaced)
{
	const char *slash = strchr(api_version, '/');
	const char *dot = strchr(name, '.');
	const char *version = slash != NULL ? slash + 1 : api_version;
	const struct resource *r = NULL;
	char *group = slash != NULL ? xstrndup(api_version, (size_t)(slash - api_version)) :
	    xstrdup("");
	char *plural = dot != NULL ? xstrndup(name, (size_t)(dot - name)) : xstrdup(name);

	/* "plural" for the core group, "plural.group" for the others. */
	if (resource_name_valid(name) && resource_name_valid(plural) &&
	    resource_name_valid(version) && *kind != '\0' &&
	    (*group == '\0' || resource_name_valid(group)) &&
	    (*group == '\0' ? dot == NULL : dot != NULL && strcmp(dot + 1, group) == 0))
		r = resource_metadata(group, version, plural, kind, namespaced);
	free(group);
	free(plural);
	return r;
}

const struct resource *
resource_find_any(const char *name)
{
	const struct resource *r = resource_find(name);

	/* The newest registration of a name wins (a CRD served at another version). */
	for (int i = metadata_count - 1; r == NULL && i >= 0; i--) {
		if (strcmp(metadata_resources[i]->name, name) == 0)
			r = metadata_resources[i];
	}
	return r;
}

const struct resource *
resource_find_kind(const char *api_version, const char *kind)
{
	const struct resource *other = NULL;
	size_t n = resource_group_length(api_version);

	for (int i = 0; i < resource_count; i++) {
		if (strcmp(resource_all[i]->kind, kind) == 0 &&
		    same_group(resource_all[i], api_version, n))
			return resource_all[i];
	}
	for (int i = metadata_count - 1; i >= 0; i--) {
		const struct resource *r = metadata_resources[i];

		if (strcmp(r->kind, kind) != 0 || !same_group(r, api_version, n))
			continue;
		if (strcmp(r->api_version, api_version) == 0)
			return r;
		if (other == NULL)
			other = r;
	}
	return other;
}

int
resource_in_objects(const struct resource *r)
{
	return strcmp(r->table, "cache_objects") == 0;
}

int
resource_index_count(void)
{
	return resource_count + metadata_count;
}

void
resource_metadata_free_all(void)
{
	for (int i = 0; i < metadata_count; i++) {
		struct resource *r = metadata_resources[i];

		free((char *)r->name);
		free((char *)r->kind);
		free((char *)r->api_version);
		free((char *)r->path);
		free((char *)r->plural);
		free(r);
	}
	free(metadata_resources);
	metadata_resources = NULL;
	metadata_count = 0;
}
