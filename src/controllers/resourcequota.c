/*
 * resourcequota.c - the resource quota controller (kube's resourcequota-controller):
 * every ResourceQuota's status says what it allows (status.hard, spec.hard's copy) and
 * what its namespace uses of it (status.used), which the apiserver's ResourceQuota
 * admission charges and checks new objects against.
 *
 * A key is a quota's namespace/name. Its sync takes the resources of spec.hard that an
 * evaluator knows, measures the namespace's usage of them from the cache as kube's
 * evaluators do, and puts the status when hard or used changed (by value, as kube's
 * quota.Equals); the usage of a resource no evaluator knows stays what the status said.
 *
 *   pods: count/pods (every pod), and for the pods that still count (not Succeeded or
 *     Failed, not deleted past their grace): pods, cpu and requests.cpu, memory and
 *     requests.memory, ephemeral-storage and requests.ephemeral-storage, limits.cpu,
 *     limits.memory, limits.ephemeral-storage, hugepages-* and requests.hugepages-*, and
 *     requests.<extended resource>, from the pod's requests and limits as the scheduler
 *     sums them (containers, then the largest init container step, restartable init
 *     containers running beside the rest, pod-level resources, the pod's overhead);
 *     the quota's scopes select the pods (Terminating, NotTerminating, BestEffort,
 *     NotBestEffort, PriorityClass, CrossNamespacePodAffinity).
 *   services: services, count/services, services.loadbalancers, services.nodeports.
 *   persistentvolumeclaims: persistentvolumeclaims, count/persistentvolumeclaims,
 *     requests.storage, and <class>.storageclass.storage.k8s.io/ of either; the
 *     VolumeAttributesClass scope.
 *   configmaps, secrets, replicationcontrollers, resourcequotas, and count/<resource>
 *     [.<group>] of any namespaced resource the cache holds (with the garbage collector's
 *     metadata informers, every one discovery lists): objects counted in SQL
 *     (resourcequota_object_count, schema/028-resourcequota.sql).
 *
 * Replenishment: a pod, Service or claim whose usage changes, and any object deleted,
 * requeue the quotas of its namespace (kube's monitors; an object added was charged by
 * admission already). A quota is synced when it is added and when its spec.hard changes,
 * not on a status update (admission's charges, its own writes), as kube's. Every quota
 * is recalculated at each tick of --resource-quota-sync-period counted from the first
 * sync, as kube's enqueueAll: a sync asks to be synced again at the next tick, not a
 * period after itself (a quota synced just before admission's charge, which admission
 * missed because its cache lagged, would otherwise wait out a whole period from then).
 *
 * A container resized in place counts the larger of its spec's resources and those its
 * status reports (kube's UseStatusResources). Deviations: a pod's resize of pod-level
 * resources is read from spec only; quantities of 10^29 units and more are refused
 * (kube's arbitrary precision holds them).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/resourcequota.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

/* --- resource lists -------------------------------------------------------------------- */

void
quota_list_clear(struct quota_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static struct quota_entry *
list_find(const struct quota_list *l, const char *name)
{
	for (int i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	}
	return NULL;
}

const struct quantity *
quota_list_get(const struct quota_list *l, const char *name)
{
	const struct quota_entry *e = list_find(l, name);

	return e != NULL ? &e->q : NULL;
}

/* l[name] = q. */
static void
list_set(struct quota_list *l, const char *name, const struct quantity *q)
{
	struct quota_entry *e = list_find(l, name);

	if (e == NULL) {
		l->v = xrealloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
		e = &l->v[l->n++];
		e->name = xstrdup(name);
	}
	e->q = *q;
}

/* l[name] += q (a copy when absent); an overflow stays at what it was. */
static void
list_add_one(struct quota_list *l, const char *name, const struct quantity *q)
{
	struct quota_entry *e = list_find(l, name);

	if (e == NULL)
		list_set(l, name, q);
	else if (quantity_add(&e->q, q) != 0)
		log_warning("resourcequota: the sum of %s leaves the range of a quantity", name);
}

static void
list_add(struct quota_list *l, const struct quota_list *other)
{
	for (int i = 0; i < other->n; i++)
		list_add_one(l, other->v[i].name, &other->v[i].q);
}

/* l[name] = the larger of the two, for each of other's (kube's maxResourceList). */
static void
list_max(struct quota_list *l, const struct quota_list *other)
{
	for (int i = 0; i < other->n; i++) {
		struct quota_entry *e = list_find(l, other->v[i].name);

		if (e == NULL || quantity_cmp(&other->v[i].q, &e->q) > 0)
			list_set(l, other->v[i].name, &other->v[i].q);
	}
}

static void
list_copy(struct quota_list *to, const struct quota_list *from)
{
	quota_list_clear(to);
	for (int i = 0; i < from->n; i++)
		list_set(to, from->v[i].name, &from->v[i].q);
}

int
quota_list_read(const cJSON *object, struct quota_list *l, char **error)
{
	const cJSON *item;

	if (!cJSON_IsObject(object))
		return 0;
	cJSON_ArrayForEach(item, object) {
		struct quantity q;

		if (!cJSON_IsString(item) || quantity_parse(item->valuestring, &q) != 0)
			return error_set(error, "%s: %s is no quantity", item->string,
			    cJSON_IsString(item) ? item->valuestring : json_kind_name(item));
		list_set(l, item->string, &q);
	}
	return 0;
}

static int
has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* --- pods ------------------------------------------------------------------------------ */

/* The resource names of the pod evaluator (kube's podResources). */
static const char *const pod_resources[] = {
	"count/pods", "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
	"requests.ephemeral-storage", "limits.cpu", "limits.memory",
	"limits.ephemeral-storage", "pods", NULL,
};

#define DEVICE_CLASS_PREFIX "deviceclass.resource.kubernetes.io/"

/* A native resource: no domain, or one under kubernetes.io. */
static int
native_resource(const char *name)
{
	return strchr(name, '/') == NULL || strstr(name, "kubernetes.io/") != NULL;
}

/* kube's v1helper.IsExtendedResourceName, without its check of the name's syntax (the
 * apiserver made it). */
static int
extended_resource(const char *name)
{
	return !native_resource(name) && !has_prefix(name, "requests.");
}

static int
pod_evaluator_matches(const char *name)
{
	for (int i = 0; pod_resources[i] != NULL; i++) {
		if (strcmp(name, pod_resources[i]) == 0)
			return 1;
	}
	if (has_prefix(name, "hugepages-") || has_prefix(name, "requests.hugepages-"))
		return 1;
	/* an extended resource's requests (kube's isExtendedResourceNameForQuota) */
	return has_prefix(name, "requests.") && (!native_resource(name) ||
	    has_prefix(name, "requests." DEVICE_CLASS_PREFIX));
}

/* What restartPolicy Always makes of an init container: a sidecar. */
static int
sidecar(const cJSON *container)
{
	return strcmp(json_string(container, "restartPolicy"), "Always") == 0;
}

static int
pod_level_resource(const char *name)
{
	return strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 ||
	    has_prefix(name, "hugepages-");
}

/* The status of the container called name (containerStatuses, initContainerStatuses), or
 * NULL. */
static const cJSON *
container_status(const cJSON *pod, const char *name)
{
	static const char *const lists[] = { "status.containerStatuses",
	    "status.initContainerStatuses" };
	const cJSON *cs;

	for (int l = 0; l < 2; l++) {
		cJSON_ArrayForEach(cs, json_path(pod, lists[l])) {
			if (strcmp(json_string(cs, "name"), name) == 0)
				return cs;
		}
	}
	return NULL;
}

/* A resize the kubelet found infeasible (the PodResizePending condition's reason). */
static int
resize_infeasible(const cJSON *pod)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_path(pod, "status.conditions")) {
		if (strcmp(json_string(c, "type"), "PodResizePending") == 0)
			return strcmp(json_string(c, "reason"), "Infeasible") == 0;
	}
	return 0;
}

/* What a container asks (path: resources.requests or resources.limits) into one, as
 * kube reads it with in-place resize: where its status reports resources, the larger of
 * the spec's, the actuated (status resources) and, for requests, the allocated ones; only
 * the actuated and allocated ones when the resize is infeasible. */
static int
container_resources(const cJSON *pod, const cJSON *c, const char *path, int limits,
    struct quota_list *one, char **error)
{
	const cJSON *cs = container_status(pod, json_string(c, "name"));
	struct quota_list actuated = { 0 }, allocated = { 0 };
	int rc = -1;

	quota_list_clear(one);
	if (cs == NULL || !cJSON_IsObject(json_path(cs, "resources")))
		return quota_list_read(json_path(c, path), one, error);
	if (quota_list_read(json_path(cs, path), &actuated, error) != 0 ||
	    (!limits && quota_list_read(json_path(cs, "allocatedResources"), &allocated,
	    error) != 0))
		goto out;
	if (!resize_infeasible(pod) && quota_list_read(json_path(c, path), one, error) != 0)
		goto out;
	list_max(one, &actuated);
	list_max(one, &allocated);
	rc = 0;
out:
	quota_list_clear(&actuated);
	quota_list_clear(&allocated);
	return rc;
}

/* The pod's requests or limits (which: "requests", "limits") as kube's PodRequests and
 * PodLimits sum them. */
static int
pod_resources_of(const cJSON *pod, const char *which, struct quota_list *out, char **error)
{
	const cJSON *spec = json_path(pod, "spec"), *c, *podlevel;
	struct quota_list sidecars = { 0 }, init = { 0 }, one = { 0 }, step = { 0 };
	char path[32];
	int rc = -1, limits = strcmp(which, "limits") == 0, set = 0;

	snprintf(path, sizeof path, "resources.%s", which);
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers")) {
		if (container_resources(pod, c, path, limits, &one, error) != 0)
			goto out;
		list_add(out, &one);
	}
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "initContainers")) {
		quota_list_clear(&one);
		if (sidecar(c) ? container_resources(pod, c, path, limits, &one, error) != 0 :
		    quota_list_read(json_path(c, path), &one, error) != 0)
			goto out;
		if (sidecar(c)) {
			/* runs beside the containers, and beside every init container after it */
			list_add(out, &one);
			list_add(&sidecars, &one);
			list_copy(&step, &sidecars);
		} else {
			list_copy(&step, &one);
			list_add(&step, &sidecars);
		}
		list_max(&init, &step);
	}
	list_max(out, &init);
	/* pod-level resources (cpu, memory, hugepages) replace the containers' sum */
	podlevel = json_path(spec, path);
	if (cJSON_IsObject(podlevel)) {
		const cJSON *r;

		cJSON_ArrayForEach(r, podlevel)
			set = set || pod_level_resource(r->string);
		/* limits follow pod-level requests as well (kube's IsPodLevelResourcesSet) */
		if (limits)
			cJSON_ArrayForEach(r, json_path(spec, "resources.requests"))
				set = set || pod_level_resource(r->string);
	}
	if (set) {
		quota_list_clear(&one);
		if (quota_list_read(podlevel, &one, error) != 0)
			goto out;
		for (int i = 0; i < one.n; i++) {
			if (pod_level_resource(one.v[i].name))
				list_set(out, one.v[i].name, &one.v[i].q);
		}
	}
	/* the overhead: added to every request, and to the limits that are set */
	quota_list_clear(&one);
	if (quota_list_read(json_path(spec, "overhead"), &one, error) != 0)
		goto out;
	for (int i = 0; i < one.n; i++) {
		struct quota_entry *e = list_find(out, one.v[i].name);

		if (!limits)
			list_add_one(out, one.v[i].name, &one.v[i].q);
		else if (e != NULL)	/* kube's PodLimits: a limit given, even 0 */
			list_add_one(out, one.v[i].name, &one.v[i].q);
	}
	rc = 0;
out:
	quota_list_clear(&sidecars);
	quota_list_clear(&init);
	quota_list_clear(&one);
	quota_list_clear(&step);
	return rc;
}

/* Does the pod still count (kube's QuotaV1Pod)? Not once Succeeded or Failed, nor once
 * its deletion's grace period has passed. */
static int
pod_counts(const cJSON *pod, double now)
{
	const char *phase = json_string(pod, "status.phase");
	const char *deleting = json_string(pod, "metadata.deletionTimestamp");
	time_t t;

	if (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)
		return 0;
	if (*deleting != '\0' && json_is_set(pod, "metadata.deletionGracePeriodSeconds") &&
	    time_parse_rfc3339(deleting, &t) == 0 &&
	    now > (double)t + (double)json_int(pod, "metadata.deletionGracePeriodSeconds", 0))
		return 0;
	return 1;
}

int
quota_pod_usage(const cJSON *pod, double now, struct quota_list *out, char **error)
{
	struct quota_list requests = { 0 }, limits = { 0 };
	struct quantity one = quantity_int(1);
	static const struct {
		const char *from, *to[2];
		int limits;
	} copy[] = {
		{ "cpu", { "cpu", "requests.cpu" }, 0 },
		{ "cpu", { "limits.cpu", NULL }, 1 },
		{ "memory", { "memory", "requests.memory" }, 0 },
		{ "memory", { "limits.memory", NULL }, 1 },
		{ "ephemeral-storage", { "ephemeral-storage", "requests.ephemeral-storage" }, 0 },
		{ "ephemeral-storage", { "limits.ephemeral-storage", NULL }, 1 },
	};
	int rc = -1;

	list_add_one(out, "count/pods", &one);
	if (!pod_counts(pod, now))
		return 0;
	if (pod_resources_of(pod, "requests", &requests, error) != 0 ||
	    pod_resources_of(pod, "limits", &limits, error) != 0)
		goto done;
	list_add_one(out, "pods", &one);
	for (size_t i = 0; i < sizeof copy / sizeof copy[0]; i++) {
		const struct quantity *q = quota_list_get(copy[i].limits ? &limits : &requests,
		    copy[i].from);

		for (int k = 0; k < 2 && q != NULL && copy[i].to[k] != NULL; k++)
			list_add_one(out, copy[i].to[k], q);
	}
	for (int i = 0; i < requests.n; i++) {
		const char *name = requests.v[i].name;
		char *masked = xasprintf("requests.%s", name);

		if (has_prefix(name, "hugepages-")) {
			list_add_one(out, name, &requests.v[i].q);
			list_add_one(out, masked, &requests.v[i].q);
		} else if (extended_resource(name) || has_prefix(name, DEVICE_CLASS_PREFIX)) {
			list_add_one(out, masked, &requests.v[i].q);
		}
		free(masked);
	}
	rc = 0;
done:
	quota_list_clear(&requests);
	quota_list_clear(&limits);
	return rc;
}

/* kube's qos.GetPodQOS is BestEffort: status.qosClass when set, else no container (nor
 * the pod level) requests or limits a non-zero cpu or memory. */
static int
pod_best_effort(const cJSON *pod)
{
	const char *qos = json_string(pod, "status.qosClass");
	static const char *const lists[] = { "containers", "initContainers" };
	static const char *const paths[] = { "resources.requests", "resources.limits" };
	const cJSON *spec = json_path(pod, "spec"), *c, *r;

	if (*qos != '\0')
		return strcmp(qos, "BestEffort") == 0;
	for (int k = 0; k < 2; k++) {
		cJSON_ArrayForEach(r, json_path(spec, paths[k])) {
			struct quantity q;

			if ((strcmp(r->string, "cpu") == 0 || strcmp(r->string, "memory") == 0) &&
			    cJSON_IsString(r) && quantity_parse(r->valuestring, &q) == 0 &&
			    q.nanos > 0)
				return 0;
		}
	}
	for (int l = 0; l < 2; l++) {
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, lists[l])) {
			for (int k = 0; k < 2; k++) {
				cJSON_ArrayForEach(r, json_path(c, paths[k])) {
					struct quantity q;

					if ((strcmp(r->string, "cpu") == 0 ||
					    strcmp(r->string, "memory") == 0) && cJSON_IsString(r) &&
					    quantity_parse(r->valuestring, &q) == 0 && q.nanos > 0)
						return 0;
				}
			}
		}
	}
	return 1;
}

/* A term of pod (anti-)affinity reaching other namespaces. */
static int
cross_namespace_terms(const cJSON *terms, int weighted)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, terms) {
		const cJSON *term = weighted ? json_path(t, "podAffinityTerm") : t;
		const cJSON *ns = cJSON_GetObjectItemCaseSensitive(term, "namespaces");

		if (cJSON_GetArraySize(ns) > 0 || json_is_set(term, "namespaceSelector"))
			return 1;
	}
	return 0;
}

static int
pod_cross_namespace_affinity(const cJSON *pod)
{
	static const char *const kinds[] = { "spec.affinity.podAffinity",
	    "spec.affinity.podAntiAffinity" };

	for (int k = 0; k < 2; k++) {
		const cJSON *a = json_path(pod, kinds[k]);

		if (cross_namespace_terms(json_path(a,
		    "requiredDuringSchedulingIgnoredDuringExecution"), 0) ||
		    cross_namespace_terms(json_path(a,
		    "preferredDuringSchedulingIgnoredDuringExecution"), 1))
			return 1;
	}
	return 0;
}

/* A requirement on the one label key s->scope over a set holding value (NULL: the set
 * is empty), as kube's ScopedResourceSelectorRequirementsAsSelector makes it. */
static int
requirement_matches(const struct quota_scope *s, const char *value, char **error)
{
	int in = strcmp(s->op, "In") == 0, notin = strcmp(s->op, "NotIn") == 0;
	int n = cJSON_GetArraySize(s->values), found = 0;
	const cJSON *v;

	if (in || notin) {
		if (n == 0)
			return error_set(error, "for 'in', 'notin' operators, values set can't "
			    "be empty");
		cJSON_ArrayForEach(v, s->values)
			found = found || (value != NULL && cJSON_IsString(v) &&
			    strcmp(v->valuestring, value) == 0);
		return in ? found : !found;
	}
	if (strcmp(s->op, "Exists") == 0 || strcmp(s->op, "DoesNotExist") == 0) {
		if (n != 0)
			return error_set(error, "values set must be empty for exists and does "
			    "not exist");
		return (value != NULL) == (strcmp(s->op, "Exists") == 0);
	}
	return error_set(error, "%s is not a valid scope selector operator", s->op);
}

int
quota_pod_matches(const cJSON *pod, const struct quota_scope *s, char **error)
{
	const char *pc;

	if (strcmp(s->scope, "Terminating") == 0 || strcmp(s->scope, "NotTerminating") == 0) {
		const cJSON *d = json_path(pod, "spec.activeDeadlineSeconds");
		int terminating = cJSON_IsNumber(d) && d->valuedouble >= 0;

		return strcmp(s->scope, "Terminating") == 0 ? terminating : !terminating;
	}
	if (strcmp(s->scope, "BestEffort") == 0)
		return pod_best_effort(pod);
	if (strcmp(s->scope, "NotBestEffort") == 0)
		return !pod_best_effort(pod);
	if (strcmp(s->scope, "PriorityClass") == 0) {
		pc = json_string(pod, "spec.priorityClassName");
		if (strcmp(s->op, "Exists") == 0)
			return *pc != '\0';
		return requirement_matches(s, *pc != '\0' ? pc : NULL, error);
	}
	if (strcmp(s->scope, "CrossNamespacePodAffinity") == 0)
		return pod_cross_namespace_affinity(pod);
	return 0;
}

/* --- services and claims --------------------------------------------------------------- */

static const char *const service_resources[] = {
	"services", "count/services", "services.loadbalancers", "services.nodeports", NULL,
};

int
quota_service_usage(const cJSON *service, struct quota_list *out)
{
	const char *type = json_string(service, "spec.type");
	const cJSON *ports = json_path(service, "spec.ports"), *p;
	const cJSON *allocate = json_path(service, "spec.allocateLoadBalancerNodePorts");
	struct quantity one = quantity_int(1), zero = quantity_zero(), n;
	long long with_node_port = 0;

	list_add_one(out, "count/services", &one);
	list_add_one(out, "services", &one);
	n = quantity_int(cJSON_GetArraySize(ports));
	if (strcmp(type, "NodePort") == 0) {
		list_add_one(out, "services.nodeports", &n);
		list_add_one(out, "services.loadbalancers", &zero);
	} else if (strcmp(type, "LoadBalancer") == 0) {
		if (cJSON_IsFalse(allocate)) {
			cJSON_ArrayForEach(p, ports)
				with_node_port += json_int(p, "nodePort", 0) != 0;
			n = quantity_int(with_node_port);
		}
		list_add_one(out, "services.nodeports", &n);
		list_add_one(out, "services.loadbalancers", &one);
	} else {
		list_add_one(out, "services.nodeports", &zero);
		list_add_one(out, "services.loadbalancers", &zero);
	}
	return 0;
}

#define STORAGE_CLASS_SUFFIX ".storageclass.storage.k8s.io/"

static int
pvc_evaluator_matches(const char *name)
{
	return strcmp(name, "persistentvolumeclaims") == 0 ||
	    strcmp(name, "count/persistentvolumeclaims") == 0 ||
	    strcmp(name, "requests.storage") == 0 ||
	    has_suffix(name, STORAGE_CLASS_SUFFIX "persistentvolumeclaims") ||
	    has_suffix(name, STORAGE_CLASS_SUFFIX "requests.storage");
}

/* Rounds q up to a whole number of units (kube's RoundUp(0)); a value within a unit of
 * the largest held stays at the largest whole number of units (kube's arbitrary
 * precision would go one further). */
static void
round_up_units(struct quantity *q)
{
	const __int128 unit = 1000000000;
	const __int128 max = (__int128)(((unsigned __int128)1 << 127) - 1);
	__int128 r = q->nanos % unit;

	if (r > 0 && q->nanos > max - (unit - r))
		q->nanos -= r;
	else if (r > 0)
		q->nanos += unit - r;
	else if (r < 0)
		q->nanos -= r;
}

int
quota_pvc_usage(const cJSON *pvc, struct quota_list *out, char **error)
{
	const cJSON *annotation = json_annotation(pvc,
	    "volume.beta.kubernetes.io/storage-class");
	const char *class = cJSON_IsString(annotation) ? annotation->valuestring :
	    json_string(pvc, "spec.storageClassName");
	const cJSON *requested = json_path(pvc, "spec.resources.requests.storage");
	const cJSON *allocated = json_path(pvc, "status.allocatedResources.storage");
	struct quantity one = quantity_int(1), storage, a;
	char *name;

	list_add_one(out, "persistentvolumeclaims", &one);
	list_add_one(out, "count/persistentvolumeclaims", &one);
	if (*class != '\0') {
		name = xasprintf("%s" STORAGE_CLASS_SUFFIX "persistentvolumeclaims", class);
		list_add_one(out, name, &one);
		free(name);
	}
	if (requested == NULL)
		return 0;
	if (!cJSON_IsString(requested) || quantity_parse(requested->valuestring, &storage) != 0)
		return error_set(error, "spec.resources.requests.storage is no quantity");
	round_up_units(&storage);
	/* an expansion allocated more than asked (kube's RecoverVolumeExpansionFailure) */
	if (cJSON_IsString(allocated) && quantity_parse(allocated->valuestring, &a) == 0 &&
	    quantity_cmp(&a, &storage) > 0) {
		storage = a;
		round_up_units(&storage);
	}
	list_add_one(out, "requests.storage", &storage);
	if (*class != '\0') {
		name = xasprintf("%s" STORAGE_CLASS_SUFFIX "requests.storage", class);
		list_add_one(out, name, &storage);
		free(name);
	}
	return 0;
}

int
quota_pvc_matches(const cJSON *pvc, const struct quota_scope *s, char **error)
{
	const char *names[3] = {
		json_string(pvc, "spec.volumeAttributesClassName"),
		json_string(pvc, "status.currentVolumeAttributesClassName"),
		json_string(pvc, "status.modifyVolumeStatus.targetVolumeAttributesClassName"),
	};
	int any = 0, rc;

	if (strcmp(s->scope, "VolumeAttributesClass") != 0)
		return 0;
	for (int i = 0; i < 3; i++)
		any = any || *names[i] != '\0';
	if (strcmp(s->op, "Exists") == 0)
		return any;
	if (!any)
		return requirement_matches(s, NULL, error);
	for (int i = 0; i < 3; i++) {
		if (*names[i] == '\0')
			continue;
		rc = requirement_matches(s, names[i], error);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* --- the controller -------------------------------------------------------------------- */

enum {
	STMT_QUOTA,
	STMT_QUOTAS_OF,
	STMT_KEYS,
	STMT_PODS,
	STMT_OBJECTS,
	STMT_COUNTABLE,
	STMT_COUNT,
	STMT_COUNT_STMTS
};

static const char *const rq_sql[STMT_COUNT_STMTS] = {
	[STMT_QUOTA] =
	    "SELECT uid, body FROM cache_objects WHERE resource = 'resourcequotas'"
	    " AND namespace = ?1 AND name = ?2",
	[STMT_QUOTAS_OF] =
	    "SELECT name FROM cache_objects WHERE resource = 'resourcequotas' AND namespace = ?1"
	    " ORDER BY name",
	[STMT_KEYS] =
	    "SELECT namespace, name FROM cache_objects WHERE resource = 'resourcequotas'"
	    " ORDER BY namespace, name",
	[STMT_PODS] = "SELECT body FROM cache_pods WHERE namespace = ?1 ORDER BY name",
	/* Services (?1) or claims, whole in cache_objects, of namespace ?2. */
	[STMT_OBJECTS] =
	    "SELECT body FROM cache_objects WHERE resource = ?1 AND namespace = ?2 ORDER BY name",
	/* The cached resource a count/<resource>[.<group>] name (?1) counts, if any. */
	[STMT_COUNTABLE] =
	    "SELECT resource FROM resourcequota_countable WHERE count_name = ?1",
	/* How many objects of resource ?1 namespace ?2 holds. */
	[STMT_COUNT] =
	    "SELECT count(*) FROM objects WHERE resource = ?1 AND namespace = ?2",
};

struct rq_state {
	sqlite3_stmt *stmt[STMT_COUNT_STMTS];
	const struct resource *quotas;
	double period;
	double epoch;		/* the first sync's time: the ticks count from it */
};

/* The resources of kube's legacy object counts, evaluated whatever discovery says. */
static const char *const legacy_counts[] = {
	"configmaps", "secrets", "replicationcontrollers", "resourcequotas", NULL,
};

/* The object count names of kube's legacy aliases. */
static const char *
count_alias(const char *name)
{
	static const char *const aliases[][2] = {
		{ "configmaps", "count/configmaps" },
		{ "secrets", "count/secrets" },
		{ "replicationcontrollers", "count/replicationcontrollers" },
		{ "resourcequotas", "count/resourcequotas" },
	};

	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
		if (strcmp(name, aliases[i][0]) == 0)
			return aliases[i][1];
	}
	return has_prefix(name, "count/") ? name : NULL;
}

static int
service_evaluator_matches(const char *name)
{
	for (int i = 0; service_resources[i] != NULL; i++) {
		if (strcmp(name, service_resources[i]) == 0)
			return 1;
	}
	return 0;
}

enum evaluator { EV_NONE, EV_PODS, EV_SERVICES, EV_PVCS, EV_COUNT };

/* A quota's scopes: spec.scopes (each an Exists) and its scopeSelector's expressions. */
struct scopes {
	struct quota_scope *v;
	int n;
};

static void
scopes_read(const cJSON *quota, struct scopes *s)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, json_path(quota, "spec.scopes")) {
		s->v = xrealloc(s->v, (size_t)(s->n + 1) * sizeof *s->v);
		s->v[s->n].scope = cJSON_IsString(item) ? item->valuestring : "";
		s->v[s->n].op = "Exists";
		s->v[s->n++].values = NULL;
	}
	cJSON_ArrayForEach(item, json_path(quota, "spec.scopeSelector.matchExpressions")) {
		s->v = xrealloc(s->v, (size_t)(s->n + 1) * sizeof *s->v);
		s->v[s->n].scope = json_string(item, "scopeName");
		s->v[s->n].op = json_string(item, "operator");
		s->v[s->n++].values = cJSON_GetObjectItemCaseSensitive(item, "values");
	}
}

/*
 * Adds to used the usage of the objects stmt lists (rows of one body) for the resources
 * wanted, each of those zero first: kube's CalculateUsageStats. An object counts when it
 * matches every scope (matches: NULL for an evaluator that matches none, so that a scoped
 * quota sees nothing). A scope kube cannot read ends the count there, as in kube.
 * Returns 0; 1 with *error when an object's usage cannot be read, which fails the
 * evaluator (used keeps what it had for the resources wanted, as kube's CalculateUsage
 * leaves them out); -1 with *error when the cache cannot be read.
 */
static int
usage_of(sqlite3_stmt *stmt, const struct quota_list *wanted, const struct scopes *scopes,
    int (*matches)(const cJSON *, const struct quota_scope *, char **), int kind,
    double now, struct quota_list *used, const char *key, char **error)
{
	struct quantity zero = quantity_zero();
	struct quota_list acc = { 0 };
	int rc;

	for (int i = 0; i < wanted->n; i++)
		list_set(&acc, wanted->v[i].name, &zero);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cJSON *o = cJSON_Parse((const char *)sqlite3_column_text(stmt, 0));
		struct quota_list u = { 0 };
		char *why = NULL;
		int match = 1, stop = 0, bad = 0;

		for (int i = 0; i < scopes->n && o != NULL && !stop; i++) {
			int m = matches != NULL ? matches(o, &scopes->v[i], &why) : 0;

			if (m < 0)
				stop = 1;
			else if (!m)
				match = 0;
		}
		if (stop) {
			log_warning("resourcequota %s: scope %s: %s", key,
			    scopes->v[0].scope, why != NULL ? why : "?");
			free(why);
			cJSON_Delete(o);
			break;
		}
		if (o != NULL && match) {
			if (kind == EV_PODS)
				bad = quota_pod_usage(o, now, &u, &why);
			else if (kind == EV_SERVICES)
				bad = quota_service_usage(o, &u);
			else
				bad = quota_pvc_usage(o, &u, &why);
			if (bad != 0) {
				/* kube's usage function failing fails the evaluator */
				error_set(error, "%s: %s of %s/%s: %s", key,
				    kind == EV_PODS ? "pod" : "claim",
				    json_string(o, "metadata.namespace"),
				    json_string(o, "metadata.name"), why != NULL ? why : "?");
				free(why);
				quota_list_clear(&u);
				quota_list_clear(&acc);
				cJSON_Delete(o);
				sqlite3_reset(stmt);
				return 1;
			}
			for (int i = 0; i < u.n; i++) {
				if (list_find(wanted, u.v[i].name) != NULL)
					list_add_one(&acc, u.v[i].name, &u.v[i].q);
			}
		}
		quota_list_clear(&u);
		cJSON_Delete(o);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		quota_list_clear(&acc);
		return error_set(error, "%s: reading the cache: %s", key,
		    sqlite3_errstr(rc));
	}
	for (int i = 0; i < acc.n; i++)
		list_set(used, acc.v[i].name, &acc.v[i].q);
	quota_list_clear(&acc);
	return 0;
}

/* An evaluator that failed (usage_of's 1): said in the log as kube's HandleError says
 * it, and the sync marked failed; the other evaluators' resources are written. */
static void
evaluator_failed(char **why, int *failed)
{
	log_warning("resourcequota %s", *why);
	free(*why);
	*why = NULL;
	*failed = 1;
}

/* The same by number for each count name wanted (resources: what each counts). */
static int
count_usage(struct rq_state *st, const struct quota_list *wanted, char *const *resources,
    const struct scopes *scopes, const char *ns, struct quota_list *used, char **error)
{
	for (int i = 0; i < wanted->n; i++) {
		sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_COUNT]);
		long long n = 0;
		struct quantity q;
		int rc = SQLITE_DONE;

		if (scopes->n == 0) {	/* kube's object counts match no scope */
			sqlite3_bind_text(stmt, 1, resources[i], -1, SQLITE_STATIC);
			sqlite3_bind_text(stmt, 2, ns, -1, SQLITE_STATIC);
			rc = sqlite3_step(stmt);
			if (rc == SQLITE_ROW)
				n = sqlite3_column_int64(stmt, 0);
			sqlite3_reset(stmt);
		}
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return error_set(error, "counting %s: %s", resources[i],
			    sqlite3_errstr(rc));
		q = quantity_int(n);
		list_set(used, wanted->v[i].name, &q);
	}
	return 0;
}

/* The cached resource count name counts, or NULL (no evaluator: kube has none for a
 * resource discovery does not list). */
static char *
countable(struct rq_state *st, const char *count_name)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_COUNTABLE]);
	char *resource = NULL;

	sqlite3_bind_text(stmt, 1, count_name, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		resource = xstrdup((const char *)sqlite3_column_text(stmt, 0));
	sqlite3_reset(stmt);
	return resource;
}

/* A ResourceList object of l, sorted by name as kube's maps print. */
static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct quota_entry *)a)->name,
	    ((const struct quota_entry *)b)->name);
}

static cJSON *
list_json(struct quota_list *l)
{
	cJSON *o = cJSON_CreateObject();
	char text[QUANTITY_TEXT_MAX];

	if (l->n > 0)
		qsort(l->v, (size_t)l->n, sizeof *l->v, entry_cmp);
	for (int i = 0; i < l->n; i++)
		cJSON_AddItemToObject(o, l->v[i].name,
		    cJSON_CreateString(quantity_format(&l->v[i].q, text, sizeof text)));
	return o;
}

/* kube's quota.Equals: the same names, each of the same value. */
static int
list_equal(const struct quota_list *a, const struct quota_list *b)
{
	if (a->n != b->n)
		return 0;
	for (int i = 0; i < a->n; i++) {
		const struct quantity *q = quota_list_get(b, a->v[i].name);

		if (q == NULL || quantity_cmp(q, &a->v[i].q) != 0)
			return 0;
	}
	return 1;
}

/* Computes the quota's new usage into used (which holds the old one), kube's
 * CalculateUsage then Mask: only hard's resources remain. An evaluator that fails keeps
 * its resources' old values and sets *failed (the sync is retried with backoff). */
static int
rq_usage(struct rq_state *st, const cJSON *quota, const char *ns, const char *key,
    const struct quota_list *hard, double now, struct quota_list *used, int *failed,
    char **error)
{
	struct quota_list wanted[EV_COUNT + 1] = { { 0 } }, fresh = { 0 }, masked = { 0 };
	char **count_resources = xcalloc((size_t)hard->n + 1, sizeof *count_resources);
	struct scopes scopes = { 0 };
	int ncount = 0, rc = -1, r;
	sqlite3_stmt *stmt;

	for (int i = 0; i < hard->n; i++) {
		const char *name = hard->v[i].name, *count;
		char *resource;

		if (pod_evaluator_matches(name)) {
			list_set(&wanted[EV_PODS], name, &hard->v[i].q);
		} else if (service_evaluator_matches(name)) {
			list_set(&wanted[EV_SERVICES], name, &hard->v[i].q);
		} else if (pvc_evaluator_matches(name)) {
			list_set(&wanted[EV_PVCS], name, &hard->v[i].q);
		} else if ((count = count_alias(name)) != NULL) {
			/* kube's four legacy counts are always evaluated; count/ others only
			 * for a resource discovery lists */
			resource = countable(st, count);
			for (int k = 0; resource == NULL && legacy_counts[k] != NULL; k++) {
				if (strcmp(count + strlen("count/"), legacy_counts[k]) == 0)
					resource = xstrdup(legacy_counts[k]);
			}
			if (resource == NULL)
				continue;
			list_set(&wanted[EV_COUNT], name, &hard->v[i].q);
			count_resources[ncount++] = resource;
		}
	}
	scopes_read(quota, &scopes);
	if (wanted[EV_PODS].n > 0) {
		stmt = controller_stmt(st->stmt[STMT_PODS]);
		sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_STATIC);
		if ((r = usage_of(stmt, &wanted[EV_PODS], &scopes, quota_pod_matches, EV_PODS,
		    now, &fresh, key, error)) < 0)
			goto out;
		if (r > 0)
			evaluator_failed(error, failed);
	}
	if (wanted[EV_SERVICES].n > 0) {
		stmt = controller_stmt(st->stmt[STMT_OBJECTS]);
		sqlite3_bind_text(stmt, 1, "services", -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 2, ns, -1, SQLITE_STATIC);
		if ((r = usage_of(stmt, &wanted[EV_SERVICES], &scopes, NULL, EV_SERVICES, now,
		    &fresh, key, error)) < 0)
			goto out;
		if (r > 0)
			evaluator_failed(error, failed);
	}
	if (wanted[EV_PVCS].n > 0) {
		stmt = controller_stmt(st->stmt[STMT_OBJECTS]);
		sqlite3_bind_text(stmt, 1, "persistentvolumeclaims", -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 2, ns, -1, SQLITE_STATIC);
		if ((r = usage_of(stmt, &wanted[EV_PVCS], &scopes, quota_pvc_matches, EV_PVCS,
		    now, &fresh, key, error)) < 0)
			goto out;
		if (r > 0)
			evaluator_failed(error, failed);
	}
	if (count_usage(st, &wanted[EV_COUNT], count_resources, &scopes, ns, &fresh,
	    error) != 0)
		goto out;
	for (int i = 0; i < fresh.n; i++)
		list_set(used, fresh.v[i].name, &fresh.v[i].q);
	for (int i = 0; i < used->n; i++) {
		if (list_find(hard, used->v[i].name) != NULL)
			list_set(&masked, used->v[i].name, &used->v[i].q);
	}
	list_copy(used, &masked);
	rc = 0;
out:
	for (int i = 0; i <= EV_COUNT; i++)
		quota_list_clear(&wanted[i]);
	for (int i = 0; i < ncount; i++)
		free(count_resources[i]);
	free(count_resources);
	free(scopes.v);
	quota_list_clear(&fresh);
	quota_list_clear(&masked);
	return rc;
}

/* Seconds from now to the next full recalculation (kube's enqueueAll every period). */
static double
next_tick(struct rq_state *st, double now)
{
	double since;

	if (st->epoch == 0 || now < st->epoch)
		st->epoch = now;
	since = fmod(now - st->epoch, st->period);
	return since < st->period - 0.001 ? st->period - since : st->period;
}

static int
rq_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct rq_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_QUOTA]);
	struct quota_list hard = { 0 }, old_hard = { 0 }, used = { 0 }, old_used = { 0 };
	const char *name;
	char *ns = NULL, *why = NULL;
	cJSON *quota = NULL;
	int rc, dirty, result = -1;

	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->quotas;
	if (controller_key_split(key, &ns, &name) != 0)
		return error_set(error, "resourcequota: %s is no namespace/name key", key);
	sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		quota = controller_column_json(stmt, 1);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		error_set(error, "resourcequota: reading %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		goto out;
	}
	if (rc == SQLITE_DONE || quota == NULL) {
		out->forget_expectations = rc == SQLITE_DONE;
		result = rc == SQLITE_DONE ? 0 :
		    error_set(error, "resourcequota: %s: the cached body is no JSON", key);
		goto out;
	}
	out->owner = cJSON_Duplicate(quota, 1);
	if (quota_list_read(json_path(quota, "spec.hard"), &hard, &why) != 0) {
		error_set(error, "resourcequota %s: spec.hard: %s", key, why);
		goto out;
	}
	/* a status kube could not have written is one to rewrite */
	dirty = !cJSON_IsObject(json_path(quota, "status.hard")) ||
	    !cJSON_IsObject(json_path(quota, "status.used"));
	if (quota_list_read(json_path(quota, "status.hard"), &old_hard, &why) != 0 ||
	    quota_list_read(json_path(quota, "status.used"), &old_used, &why) != 0) {
		log_warning("resourcequota %s: status: %s", key, why);
		quota_list_clear(&old_hard);
		quota_list_clear(&old_used);
		dirty = 1;
	}
	free(why);
	why = NULL;
	dirty = dirty || !list_equal(&hard, &old_hard);
	list_copy(&used, &old_used);
	if (rq_usage(st, quota, ns, key, &hard, now, &used, &out->failed, error) != 0)
		goto out;
	dirty = dirty || !list_equal(&used, &old_used);
	if (dirty) {
		struct action *a = xcalloc(1, sizeof *a);
		cJSON *status = cJSON_CreateObject();

		cJSON_AddItemToObject(status, "hard", list_json(&hard));
		cJSON_AddItemToObject(status, "used", list_json(&used));
		a->type = ACTION_UPDATE_STATUS;
		a->verb = "update-status";
		a->resource = st->quotas;
		a->namespace = xstrdup(ns);
		a->name = xstrdup(name);
		a->uid = xstrdup(out->owner_uid);
		a->body = cJSON_Duplicate(quota, 1);
		json_set(a->body, "status", status);
		a->reason = xstrdup("status.hard or status.used changed");
		/* As kube's syncResourceQuota: a refused update (a conflict) fails the sync,
		 * which runs again from the cache; no live read of the quota, which
		 * system:controller:resourcequota-controller may not get. */
		a->status_no_retry = 1;
		out->status = a;
	}
	out->requeue_after = next_tick(st, now);
	result = 0;
out:
	free(why);
	free(ns);
	cJSON_Delete(quota);
	quota_list_clear(&hard);
	quota_list_clear(&old_hard);
	quota_list_clear(&used);
	quota_list_clear(&old_used);
	return result;
}

/* --- handlers -------------------------------------------------------------------------- */

/* Two states of a pod, Service or claim that use the same (kube's update filters:
 * replenish when the usage changed). */
static int
same_usage(const struct informer_event *ev, double now)
{
	const char *r = ev->resource->name;
	cJSON *old;
	struct quota_list a = { 0 }, b = { 0 };
	char *why = NULL;
	int same = 0;

	/* an object counted: only its deletion changes the count (and every update of every
	 * resource comes here: not parsed for nothing) */
	if (strcmp(r, "pods") != 0 && strcmp(r, "services") != 0 &&
	    strcmp(r, "persistentvolumeclaims") != 0)
		return 1;
	old = ev->old_body != NULL ? cJSON_Parse(ev->old_body) : NULL;
	if (old == NULL)
		return 0;
	if (strcmp(r, "pods") == 0) {
		same = quota_pod_usage(old, now, &a, &why) == 0 &&
		    quota_pod_usage(ev->object, now, &b, &why) == 0 &&
		    pod_best_effort(old) == pod_best_effort(ev->object);
	} else if (strcmp(r, "services") == 0) {
		same = quota_service_usage(old, &a) == 0 &&
		    quota_service_usage(ev->object, &b) == 0;
	} else if (strcmp(r, "persistentvolumeclaims") == 0) {
		struct quota_scope vac = { "VolumeAttributesClass", "Exists", NULL };

		same = quota_pvc_usage(old, &a, &why) == 0 &&
		    quota_pvc_usage(ev->object, &b, &why) == 0 &&
		    quota_pvc_matches(old, &vac, &why) == quota_pvc_matches(ev->object, &vac, &why)
		    && strcmp(json_string(old, "spec.volumeAttributesClassName"),
		    json_string(ev->object, "spec.volumeAttributesClassName")) == 0;
	} else {
		same = 1;	/* an object counted: only its deletion changes the count */
	}
	same = same && list_equal(&a, &b);
	free(why);
	quota_list_clear(&a);
	quota_list_clear(&b);
	cJSON_Delete(old);
	return same;
}

static void
rq_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct rq_state *st = c->state;
	const char *ns = json_string(ev->object, "metadata.namespace");
	sqlite3_stmt *stmt;

	if (*ns == '\0')
		return;
	if (ev->resource == st->quotas) {
		char *key;
		cJSON *old;
		int same_hard;

		if (ev->type == INFORMER_DELETED)
			return;
		/* kube's quota handler: an update is looked at only when spec.hard changed.
		 * A status update (the quota admission charging an object, or this
		 * controller's own write) must not start a recount from a cache that may not
		 * show the object charged yet: its ADDED event requeues nothing. */
		if (ev->type == INFORMER_UPDATED && ev->old_body != NULL &&
		    (old = cJSON_Parse(ev->old_body)) != NULL) {
			same_hard = cJSON_Compare(json_path(old, "spec.hard"),
			    json_path(ev->object, "spec.hard"), 1);
			cJSON_Delete(old);
			if (same_hard)
				return;
		}
		key = xasprintf("%s/%s", ns, json_string(ev->object, "metadata.name"));
		q->add(key, q->arg);
		free(key);
		return;
	}
	if (ev->type == INFORMER_ADDED)
		return;		/* admission charged it */
	if (ev->type != INFORMER_DELETED && same_usage(ev, now))
		return;
	stmt = controller_stmt(st->stmt[STMT_QUOTAS_OF]);
	sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_STATIC);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		char *key = xasprintf("%s/%s", ns, (const char *)sqlite3_column_text(stmt, 0));

		q->add(key, q->arg);
		free(key);
	}
	sqlite3_reset(stmt);
}

static int
rq_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct rq_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "resourcequota", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
rq_init(struct controller *c, char **error)
{
	struct rq_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->quotas = resource_find("resourcequotas");
	if (st->quotas == NULL)
		return error_set(error, "resourcequota: resourcequotas is not a known resource");
	st->period = controller_flag_seconds(c, "resource-quota-sync-period");
	return store_prepare_statements(store_db(c->store), rq_sql, STMT_COUNT_STMTS, st->stmt,
	    "resourcequota", error);
}

static void
rq_fini(struct controller *c)
{
	struct rq_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT_STMTS);
	free(st);
	c->state = NULL;
}

/* The quotas and what their evaluators read whole; watches_metadata brings every other
 * resource, for the object counts (metadatacache.c). */
static const char *const rq_resources[] = {
	"resourcequotas", "pods", "services", "persistentvolumeclaims", NULL,
};

static const struct controller_flag rq_flags[] = {
	{ "resource-quota-sync-period", CONTROLLER_FLAG_DURATION, "5m0s", 0, 0,
	  "The period for syncing quota usage status in the system" },
	{ NULL, 0, NULL, 0, 0, NULL },
};

const struct controller_type resourcequota_controller_type = {
	.name = "resourcequota",
	.resources = rq_resources,
	.watches_metadata = 1,
	.default_workers = 5,
	.workers_flag = "concurrent-resource-quota-syncs",
	.workers_help = "The number of resource quotas that are allowed to sync concurrently. "
	    "Larger number = more responsive quota management, but more CPU (and network) load",
	.enable_flag = NULL,
	.flags = rq_flags,
	.event_component = "resource-quota-controller",
	.client_name = "resourcequota-controller",
	.recovery = NULL,
	.init = rq_init,
	.fini = rq_fini,
	.handle_event = rq_handle_event,
	.list_keys = rq_list_keys,
	.sync = rq_sync,
};
