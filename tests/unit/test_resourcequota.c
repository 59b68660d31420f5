/*
 * test_resourcequota.c - the resource quota controller (controllers/resourcequota.c)
 * against kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/resourcequota and pkg/quota/v1/evaluator/
 * core; the cases are those of their tests: TestPodEvaluatorUsage (what one pod uses:
 * containers, init containers, hugepages, extended resources, overhead, pod-level
 * resources, terminal and deleted pods), TestSyncResourceQuota (a quota's status over the
 * pods of newTestPods, newBestEffortTestPods and newTestPodsWithPriorityClasses, under its
 * scopes), the service and claim evaluators' usage, then rows of sqlkcm's own: sidecars,
 * the scopes kube's table leaves out, object counts, replenishment and the view.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "action.h"
#include "controller.h"
#include "controllers/resourcequota.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

/* "name=value ..." of a list, sorted by name. */
static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct quota_entry *)a)->name,
	    ((const struct quota_entry *)b)->name);
}

static char *
describe(struct quota_list *l)
{
	struct buf b = { 0 };
	char text[QUANTITY_TEXT_MAX];

	if (l->n > 0)
		qsort(l->v, (size_t)l->n, sizeof *l->v, entry_cmp);
	for (int i = 0; i < l->n; i++)
		buf_printf(&b, "%s%s=%s", i > 0 ? " " : "", l->v[i].name,
		    quantity_format(&l->v[i].q, text, sizeof text));
	return b.data != NULL ? b.data : xstrdup("");
}

/* --- TestPodEvaluatorUsage ------------------------------------------------------------- */

struct usage_case {
	const char *name;
	const char *pod;		/* JSON */
	const char *usage;		/* describe()'s */
};

#define C(res) "{\"name\":\"c\",\"resources\":" res "}"
#define RES(req, lim) "{\"requests\":{" req "},\"limits\":{" lim "}}"

static const struct usage_case usage_cases[] = {
	{ "init container CPU",
	  "{\"spec\":{\"initContainers\":[" C(RES("\"cpu\":\"1m\"", "\"cpu\":\"2m\"")) "]}}",
	  "count/pods=1 cpu=1m limits.cpu=2m pods=1 requests.cpu=1m" },
	{ "init container MEM",
	  "{\"spec\":{\"initContainers\":[" C(RES("\"memory\":\"1m\"", "\"memory\":\"2m\""))
	  "]}}",
	  "count/pods=1 limits.memory=2m memory=1m pods=1 requests.memory=1m" },
	{ "init container local ephemeral storage",
	  "{\"spec\":{\"initContainers\":[" C(RES("\"ephemeral-storage\":\"32Mi\"",
	  "\"ephemeral-storage\":\"64Mi\"")) "]}}",
	  "count/pods=1 ephemeral-storage=32Mi limits.ephemeral-storage=64Mi pods=1 "
	  "requests.ephemeral-storage=32Mi" },
	{ "init container hugepages",
	  "{\"spec\":{\"initContainers\":[" C(RES("\"hugepages-2Mi\":\"100Mi\"", "")) "]}}",
	  "count/pods=1 hugepages-2Mi=100Mi pods=1 requests.hugepages-2Mi=100Mi" },
	{ "init container extended resources",
	  "{\"spec\":{\"initContainers\":[" C(RES("\"example.com/dongle\":\"3\"",
	  "\"example.com/dongle\":\"3\"")) "]}}",
	  "count/pods=1 pods=1 requests.example.com/dongle=3" },
	{ "init container implicit extended resources",
	  "{\"spec\":{\"initContainers\":[" C(RES("\"deviceclass.resource.kubernetes.io/dongle\":"
	  "\"3\"", "\"deviceclass.resource.kubernetes.io/dongle\":\"3\"")) "]}}",
	  "count/pods=1 pods=1 requests.deviceclass.resource.kubernetes.io/dongle=3" },
	{ "container CPU",
	  "{\"spec\":{\"containers\":[" C(RES("\"cpu\":\"1m\"", "\"cpu\":\"2m\"")) "]}}",
	  "count/pods=1 cpu=1m limits.cpu=2m pods=1 requests.cpu=1m" },
	{ "container MEM",
	  "{\"spec\":{\"containers\":[" C(RES("\"memory\":\"1m\"", "\"memory\":\"2m\"")) "]}}",
	  "count/pods=1 limits.memory=2m memory=1m pods=1 requests.memory=1m" },
	{ "container local ephemeral storage",
	  "{\"spec\":{\"containers\":[" C(RES("\"ephemeral-storage\":\"32Mi\"",
	  "\"ephemeral-storage\":\"64Mi\"")) "]}}",
	  "count/pods=1 ephemeral-storage=32Mi limits.ephemeral-storage=64Mi pods=1 "
	  "requests.ephemeral-storage=32Mi" },
	{ "container hugepages",
	  "{\"spec\":{\"containers\":[" C(RES("\"hugepages-2Mi\":\"100Mi\"", "")) "]}}",
	  "count/pods=1 hugepages-2Mi=100Mi pods=1 requests.hugepages-2Mi=100Mi" },
	{ "container extended resources",
	  "{\"spec\":{\"containers\":[" C(RES("\"example.com/dongle\":\"3\"",
	  "\"example.com/dongle\":\"3\"")) "]}}",
	  "count/pods=1 pods=1 requests.example.com/dongle=3" },
	{ "container implicit extended resources",
	  "{\"spec\":{\"containers\":[" C(RES("\"deviceclass.resource.kubernetes.io/dongle\":"
	  "\"3\"", "\"deviceclass.resource.kubernetes.io/dongle\":\"3\"")) "]}}",
	  "count/pods=1 pods=1 requests.deviceclass.resource.kubernetes.io/dongle=3" },
	{ "terminated generic count still appears",
	  "{\"spec\":{\"containers\":[" C(RES("\"example.com/dongle\":\"3\"",
	  "\"example.com/dongle\":\"3\"")) "]},\"status\":{\"phase\":\"Succeeded\"}}",
	  "count/pods=1" },
	{ "init container maximums override sum of containers",
	  "{\"spec\":{\"initContainers\":["
	  C(RES("\"cpu\":\"4\",\"memory\":\"100M\",\"example.com/dongle\":\"4\"",
	  "\"cpu\":\"8\",\"memory\":\"200M\",\"example.com/dongle\":\"4\"")) ","
	  C(RES("\"cpu\":\"1\",\"memory\":\"50M\",\"example.com/dongle\":\"2\"",
	  "\"cpu\":\"2\",\"memory\":\"100M\",\"example.com/dongle\":\"2\"")) "],"
	  "\"containers\":["
	  C(RES("\"cpu\":\"1\",\"memory\":\"50M\",\"example.com/dongle\":\"1\"",
	  "\"cpu\":\"2\",\"memory\":\"100M\",\"example.com/dongle\":\"1\"")) ","
	  C(RES("\"cpu\":\"2\",\"memory\":\"25M\",\"example.com/dongle\":\"2\"",
	  "\"cpu\":\"5\",\"memory\":\"50M\",\"example.com/dongle\":\"2\"")) "]}}",
	  "count/pods=1 cpu=4 limits.cpu=8 limits.memory=200M memory=100M pods=1 "
	  "requests.cpu=4 requests.example.com/dongle=4 requests.memory=100M" },
	/* deleted 60 s before NOW with a grace of 30 s */
	{ "pod deletion timestamp exceeded",
	  "{\"metadata\":{\"deletionTimestamp\":\"2025-12-31T23:59:00Z\","
	  "\"deletionGracePeriodSeconds\":30},\"status\":{\"reason\":\"NodeLost\"},"
	  "\"spec\":{\"containers\":[" C(RES("\"cpu\":\"1\",\"memory\":\"50M\"",
	  "\"cpu\":\"2\",\"memory\":\"100M\"")) "]}}",
	  "count/pods=1" },
	{ "pod deletion timestamp not exceeded",
	  "{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	  "\"deletionGracePeriodSeconds\":30},\"status\":{\"reason\":\"NodeLost\"},"
	  "\"spec\":{\"containers\":[" C(RES("\"cpu\":\"1\"", "\"cpu\":\"2\"")) "]}}",
	  "count/pods=1 cpu=1 limits.cpu=2 pods=1 requests.cpu=1" },
	{ "count pod overhead as usage",
	  "{\"spec\":{\"overhead\":{\"cpu\":\"1\"},\"containers\":["
	  C(RES("\"cpu\":\"1\"", "\"cpu\":\"2\"")) "]}}",
	  "count/pods=1 cpu=2 limits.cpu=3 pods=1 requests.cpu=2" },
	{ "pod-level CPU",
	  "{\"spec\":{\"resources\":" RES("\"cpu\":\"1m\"", "\"cpu\":\"2m\"") "}}",
	  "count/pods=1 cpu=1m limits.cpu=2m pods=1 requests.cpu=1m" },
	{ "pod-level Memory",
	  "{\"spec\":{\"resources\":" RES("\"memory\":\"1Mi\"", "\"memory\":\"2Mi\"") "}}",
	  "count/pods=1 limits.memory=2Mi memory=1Mi pods=1 requests.memory=1Mi" },
	{ "pod-level memory with container-level ephemeral storage",
	  "{\"spec\":{\"resources\":" RES("\"memory\":\"1Mi\"", "\"memory\":\"2Mi\"") ","
	  "\"containers\":[" C(RES("\"ephemeral-storage\":\"32Mi\"",
	  "\"ephemeral-storage\":\"64Mi\"")) "]}}",
	  "count/pods=1 ephemeral-storage=32Mi limits.ephemeral-storage=64Mi "
	  "limits.memory=2Mi memory=1Mi pods=1 requests.ephemeral-storage=32Mi "
	  "requests.memory=1Mi" },
	/* TestPodEvaluatorUsageResourceResize */
	{ "verify Max(Container.Spec.Requests, ContainerStatus.Resources) for memory resource",
	  "{\"spec\":{\"containers\":[" C(RES("\"memory\":\"200Mi\"", "\"memory\":\"400Mi\""))
	  "]},\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"resources\":"
	  "{\"requests\":{\"memory\":\"150Mi\"}}}]}}",
	  "count/pods=1 limits.memory=400Mi memory=200Mi pods=1 requests.memory=200Mi" },
	{ "verify Max(Container.Spec.Requests, ContainerStatus.Resources) for CPU resource",
	  "{\"spec\":{\"containers\":[" C(RES("\"cpu\":\"100m\"", "\"cpu\":\"200m\""))
	  "]},\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"resources\":"
	  "{\"requests\":{\"cpu\":\"150m\"}}}]}}",
	  "count/pods=1 cpu=150m limits.cpu=200m pods=1 requests.cpu=150m" },
	{ "verify Max(Container.Spec.Requests, ContainerStatus.Resources) for CPU and memory",
	  "{\"spec\":{\"containers\":[" C(RES("\"cpu\":\"100m\",\"memory\":\"200Mi\"",
	  "\"cpu\":\"200m\",\"memory\":\"400Mi\"")) "]},\"status\":{\"containerStatuses\":"
	  "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"150m\","
	  "\"memory\":\"250Mi\"}}}]}}",
	  "count/pods=1 cpu=150m limits.cpu=200m limits.memory=400Mi memory=250Mi pods=1 "
	  "requests.cpu=150m requests.memory=250Mi" },
	{ "verify Max(Container.Spec.Requests, ContainerStatus.Resources==nil)",
	  "{\"spec\":{\"containers\":[" C(RES("\"cpu\":\"100m\",\"memory\":\"200Mi\"",
	  "\"cpu\":\"200m\",\"memory\":\"400Mi\"")) "]},\"status\":{\"containerStatuses\":"
	  "[{\"name\":\"c\"}]}}",
	  "count/pods=1 cpu=100m limits.cpu=200m limits.memory=400Mi memory=200Mi pods=1 "
	  "requests.cpu=100m requests.memory=200Mi" },
	/* sqlkcm's: an infeasible resize counts what runs (component-helpers' rule) */
	{ "an infeasible resize: the actuated and allocated resources alone",
	  "{\"spec\":{\"containers\":[" C(RES("\"cpu\":\"4\"", "\"cpu\":\"8\""))
	  "]},\"status\":{\"conditions\":[{\"type\":\"PodResizePending\","
	  "\"reason\":\"Infeasible\"}],\"containerStatuses\":[{\"name\":\"c\","
	  "\"allocatedResources\":{\"cpu\":\"1\"},\"resources\":{\"requests\":"
	  "{\"cpu\":\"500m\"},\"limits\":{\"cpu\":\"2\"}}}]}}",
	  "count/pods=1 cpu=1 limits.cpu=2 pods=1 requests.cpu=1" },
	/* sqlkcm's: sidecars (restartable init containers) run beside the containers and
	 * every init container after them (component-helpers' TestPodResourceRequests) */
	{ "a sidecar adds to the containers and to the init containers after it",
	  "{\"spec\":{\"initContainers\":["
	  C(RES("\"cpu\":\"2\"", "")) ","
	  "{\"name\":\"s\",\"restartPolicy\":\"Always\",\"resources\":"
	  RES("\"cpu\":\"1\"", "") "},"
	  C(RES("\"cpu\":\"3\"", "")) "],"
	  "\"containers\":[" C(RES("\"cpu\":\"1\"", "")) "]}}",
	  "count/pods=1 cpu=4 pods=1 requests.cpu=4" },
	{ "a sidecar alone: the containers' sum with it",
	  "{\"spec\":{\"initContainers\":["
	  "{\"name\":\"s\",\"restartPolicy\":\"Always\",\"resources\":"
	  RES("\"memory\":\"1Gi\"", "\"memory\":\"1Gi\"") "}],"
	  "\"containers\":[" C(RES("\"memory\":\"512Mi\"", "\"memory\":\"512Mi\"")) "]}}",
	  "count/pods=1 limits.memory=1536Mi memory=1536Mi pods=1 requests.memory=1536Mi" },
	{ "overhead only on a limit that is set",
	  "{\"spec\":{\"overhead\":{\"cpu\":\"250m\",\"memory\":\"120Mi\"},\"containers\":["
	  C(RES("\"cpu\":\"1\"", "\"cpu\":\"2\"")) "]}}",
	  "count/pods=1 cpu=1250m limits.cpu=2250m memory=120Mi pods=1 requests.cpu=1250m "
	  "requests.memory=120Mi" },
	{ "a failed pod: only the count",
	  "{\"spec\":{\"containers\":[" C(RES("\"cpu\":\"1\"", "")) "]},"
	  "\"status\":{\"phase\":\"Failed\"}}",
	  "count/pods=1" },
	{ "no resources: the pod alone",
	  "{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
	  "count/pods=1 pods=1" },
};

static void
usage_case(void **state)
{
	const struct usage_case *tc = *state;
	cJSON *pod = fixture_parse(tc->pod);
	struct quota_list l = { 0 };
	char *error = NULL, *got;

	if (quota_pod_usage(pod, NOW, &l, &error) != 0)
		fail_msg("%s: %s", tc->name, error);
	got = describe(&l);
	assert_described(tc->name, got, tc->usage);
	free(got);
	quota_list_clear(&l);
	cJSON_Delete(pod);
}

/* A quantity that does not parse is an error, not a crash. */
static void
usage_bad_quantity(void **state)
{
	cJSON *pod = fixture_parse("{\"spec\":{\"containers\":[" C(RES("\"cpu\":\"lots\"", ""))
	    "]}}");
	struct quota_list l = { 0 };
	char *error = NULL;

	(void)state;
	assert_int_equal(quota_pod_usage(pod, NOW, &l, &error), -1);
	assert_non_null(strstr(error, "lots"));
	free(error);
	quota_list_clear(&l);
	cJSON_Delete(pod);
}

/* --- services and claims ---------------------------------------------------------------- */

struct object_case {
	const char *name;
	const char *object;
	const char *usage;
};

static const struct object_case service_cases[] = {
	{ "loadbalancer",
	  "{\"spec\":{\"type\":\"LoadBalancer\",\"ports\":[{\"port\":27443}]}}",
	  "count/services=1 services=1 services.loadbalancers=1 services.nodeports=1" },
	{ "loadbalancer_ports",
	  "{\"spec\":{\"type\":\"LoadBalancer\",\"ports\":[{\"port\":27443},{\"port\":27444}]}}",
	  "count/services=1 services=1 services.loadbalancers=1 services.nodeports=2" },
	{ "clusterip", "{\"spec\":{\"type\":\"ClusterIP\"}}",
	  "count/services=1 services=1 services.loadbalancers=0 services.nodeports=0" },
	{ "nodeports",
	  "{\"spec\":{\"type\":\"NodePort\",\"ports\":[{\"port\":27443}]}}",
	  "count/services=1 services=1 services.loadbalancers=0 services.nodeports=1" },
	{ "multi-nodeports",
	  "{\"spec\":{\"type\":\"NodePort\",\"ports\":[{\"port\":27443},{\"port\":27444}]}}",
	  "count/services=1 services=1 services.loadbalancers=0 services.nodeports=2" },
	{ "target-ports / node ports unallocated",
	  "{\"spec\":{\"type\":\"LoadBalancer\",\"allocateLoadBalancerNodePorts\":false,"
	  "\"ports\":[{\"port\":27443,\"nodePort\":30001},{\"port\":27444}]}}",
	  "count/services=1 services=1 services.loadbalancers=1 services.nodeports=1" },
};

static const struct object_case pvc_cases[] = {
	{ "pvc-usage",
	  "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"10Gi\"}}}}",
	  "count/persistentvolumeclaims=1 persistentvolumeclaims=1 requests.storage=10Gi" },
	{ "pvc-usage-by-class",
	  "{\"spec\":{\"storageClassName\":\"gold\","
	  "\"resources\":{\"requests\":{\"storage\":\"10Gi\"}}}}",
	  "count/persistentvolumeclaims=1 gold.storageclass.storage.k8s.io/"
	  "persistentvolumeclaims=1 gold.storageclass.storage.k8s.io/requests.storage=10Gi "
	  "persistentvolumeclaims=1 requests.storage=10Gi" },
	{ "pvc-usage-rounded",
	  "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"1.5\"}}}}",
	  "count/persistentvolumeclaims=1 persistentvolumeclaims=1 requests.storage=2" },
	{ "sqlkcm's: a request within a unit of the largest held rounds down, not over",
	  "{\"spec\":{\"resources\":{\"requests\":{\"storage\":"
	  "\"170141183460469231731687303715.884105727\"}}}}",
	  "count/persistentvolumeclaims=1 persistentvolumeclaims=1 "
	  "requests.storage=170141183460469231731687303715" },
	{ "pvc-usage-higher-allocated-resource",
	  "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"10Gi\"}}},"
	  "\"status\":{\"allocatedResources\":{\"storage\":\"20Gi\"}}}",
	  "count/persistentvolumeclaims=1 persistentvolumeclaims=1 requests.storage=20Gi" },
	{ "pvc-usage-lower-allocated-resource",
	  "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"10Gi\"}}},"
	  "\"status\":{\"allocatedResources\":{\"storage\":\"5Gi\"}}}",
	  "count/persistentvolumeclaims=1 persistentvolumeclaims=1 requests.storage=10Gi" },
	{ "class by the beta annotation first",
	  "{\"metadata\":{\"annotations\":{\"volume.beta.kubernetes.io/storage-class\":"
	  "\"old\"}},\"spec\":{\"storageClassName\":\"gold\"}}",
	  "count/persistentvolumeclaims=1 old.storageclass.storage.k8s.io/"
	  "persistentvolumeclaims=1 persistentvolumeclaims=1" },
};

static void
object_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(service_cases) + NELEM(pvc_cases); i++) {
		int svc = i < NELEM(service_cases);
		const struct object_case *tc = svc ? &service_cases[i] :
		    &pvc_cases[i - NELEM(service_cases)];
		cJSON *o = fixture_parse(tc->object);
		struct quota_list l = { 0 };
		char *error = NULL, *got;

		if ((svc ? quota_service_usage(o, &l) : quota_pvc_usage(o, &l, &error)) != 0)
			fail_msg("%s: %s", tc->name, error);
		got = describe(&l);
		assert_described(tc->name, got, tc->usage);
		free(got);
		quota_list_clear(&l);
		cJSON_Delete(o);
	}
}

/* --- scopes ----------------------------------------------------------------------------- */

struct scope_case {
	const char *name;
	const char *pod;
	const char *scope, *op, *values;	/* values: JSON array or NULL */
	int match;				/* -1: an error */
};

static const struct scope_case scope_cases[] = {
	{ "Terminating: activeDeadlineSeconds", "{\"spec\":{\"activeDeadlineSeconds\":30}}",
	  "Terminating", "Exists", NULL, 1 },
	{ "Terminating: none", "{\"spec\":{}}", "Terminating", "Exists", NULL, 0 },
	{ "NotTerminating: none", "{\"spec\":{}}", "NotTerminating", "Exists", NULL, 1 },
	{ "NotTerminating: activeDeadlineSeconds 0", "{\"spec\":{\"activeDeadlineSeconds\":0}}",
	  "NotTerminating", "Exists", NULL, 0 },
	{ "BestEffort: no requests", "{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
	  "BestEffort", "Exists", NULL, 1 },
	{ "BestEffort: a cpu request",
	  "{\"spec\":{\"containers\":[" C(RES("\"cpu\":\"1m\"", "")) "]}}",
	  "BestEffort", "Exists", NULL, 0 },
	{ "BestEffort: only an extended resource",
	  "{\"spec\":{\"containers\":[" C(RES("\"example.com/dongle\":\"1\"", "")) "]}}",
	  "BestEffort", "Exists", NULL, 1 },
	{ "BestEffort: status.qosClass decides",
	  "{\"spec\":{\"containers\":[" C(RES("\"cpu\":\"1m\"", "")) "]},"
	  "\"status\":{\"qosClass\":\"BestEffort\"}}",
	  "BestEffort", "Exists", NULL, 1 },
	{ "NotBestEffort: a memory limit in an init container",
	  "{\"spec\":{\"initContainers\":[" C(RES("", "\"memory\":\"1Gi\"")) "]}}",
	  "NotBestEffort", "Exists", NULL, 1 },
	{ "PriorityClass Exists", "{\"spec\":{\"priorityClassName\":\"high\"}}",
	  "PriorityClass", "Exists", NULL, 1 },
	{ "PriorityClass Exists: none", "{\"spec\":{}}", "PriorityClass", "Exists", NULL, 0 },
	{ "PriorityClass In", "{\"spec\":{\"priorityClassName\":\"high\"}}",
	  "PriorityClass", "In", "[\"low\",\"high\"]", 1 },
	{ "PriorityClass In: none", "{\"spec\":{}}", "PriorityClass", "In", "[\"high\"]", 0 },
	{ "PriorityClass NotIn: none", "{\"spec\":{}}", "PriorityClass", "NotIn",
	  "[\"high\"]", 1 },
	{ "PriorityClass NotIn", "{\"spec\":{\"priorityClassName\":\"high\"}}",
	  "PriorityClass", "NotIn", "[\"high\"]", 0 },
	{ "PriorityClass DoesNotExist", "{\"spec\":{}}", "PriorityClass", "DoesNotExist",
	  NULL, 1 },
	{ "PriorityClass DoesNotExist: one", "{\"spec\":{\"priorityClassName\":\"x\"}}",
	  "PriorityClass", "DoesNotExist", NULL, 0 },
	{ "PriorityClass In without values", "{\"spec\":{}}", "PriorityClass", "In", "[]",
	  -1 },
	{ "PriorityClass by an unknown operator", "{\"spec\":{}}", "PriorityClass", "Gt",
	  "[\"1\"]", -1 },
	{ "CrossNamespacePodAffinity: namespaces",
	  "{\"spec\":{\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuring"
	  "Execution\":[{\"namespaces\":[\"ns1\"],\"topologyKey\":\"zone\"}]}}}}",
	  "CrossNamespacePodAffinity", "Exists", NULL, 1 },
	{ "CrossNamespacePodAffinity: a preferred anti-affinity namespaceSelector",
	  "{\"spec\":{\"affinity\":{\"podAntiAffinity\":{\"preferredDuringSchedulingIgnored"
	  "DuringExecution\":[{\"weight\":1,\"podAffinityTerm\":{\"namespaceSelector\":{},"
	  "\"topologyKey\":\"zone\"}}]}}}}",
	  "CrossNamespacePodAffinity", "Exists", NULL, 1 },
	{ "CrossNamespacePodAffinity: own namespace only",
	  "{\"spec\":{\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuring"
	  "Execution\":[{\"topologyKey\":\"zone\"}]}}}}",
	  "CrossNamespacePodAffinity", "Exists", NULL, 0 },
	{ "an unknown scope matches nothing", "{\"spec\":{}}", "Whatever", "Exists", NULL, 0 },
};

static void
scope_cases_run(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(scope_cases); i++) {
		const struct scope_case *tc = &scope_cases[i];
		cJSON *pod = fixture_parse(tc->pod);
		cJSON *values = tc->values != NULL ? fixture_parse(tc->values) : NULL;
		struct quota_scope s = { tc->scope, tc->op, values };
		char *error = NULL;
		int got = quota_pod_matches(pod, &s, &error);

		if (got != tc->match)
			fail_msg("%s: got %d, want %d", tc->name, got, tc->match);
		if (got < 0)
			assert_non_null(error);
		free(error);
		cJSON_Delete(values);
		cJSON_Delete(pod);
	}
}

static void
pvc_scopes(void **state)
{
	cJSON *with = fixture_parse("{\"spec\":{\"volumeAttributesClassName\":\"gold\"}}");
	cJSON *modifying = fixture_parse("{\"status\":{\"currentVolumeAttributesClassName\":"
	    "\"silver\",\"modifyVolumeStatus\":{\"targetVolumeAttributesClassName\":\"gold\"}}}");
	cJSON *without = fixture_parse("{\"spec\":{}}");
	cJSON *gold = fixture_parse("[\"gold\"]");
	struct quota_scope exists = { "VolumeAttributesClass", "Exists", NULL };
	struct quota_scope in = { "VolumeAttributesClass", "In", gold };
	struct quota_scope notin = { "VolumeAttributesClass", "NotIn", gold };
	struct quota_scope be = { "BestEffort", "Exists", NULL };
	char *error = NULL;

	(void)state;
	assert_int_equal(quota_pvc_matches(with, &exists, &error), 1);
	assert_int_equal(quota_pvc_matches(without, &exists, &error), 0);
	assert_int_equal(quota_pvc_matches(with, &in, &error), 1);
	assert_int_equal(quota_pvc_matches(modifying, &in, &error), 1);
	assert_int_equal(quota_pvc_matches(without, &in, &error), 0);
	assert_int_equal(quota_pvc_matches(without, &notin, &error), 1);
	assert_int_equal(quota_pvc_matches(with, &notin, &error), 0);
	/* silver is not gold: one class of the claim outside the set is enough */
	assert_int_equal(quota_pvc_matches(modifying, &notin, &error), 1);
	assert_int_equal(quota_pvc_matches(with, &be, &error), 0);
	assert_null(error);
	cJSON_Delete(with);
	cJSON_Delete(modifying);
	cJSON_Delete(without);
	cJSON_Delete(gold);
}

/* --- TestSyncResourceQuota ------------------------------------------------------------- */

enum pods_set { NO_PODS, TEST_PODS, BEST_EFFORT_PODS, PRIORITY_PODS };

struct sync_case {
	const char *name;
	const char *spec;		/* the quota's spec JSON */
	const char *status;		/* its status JSON; NULL: none */
	enum pods_set pods;
	int write;			/* a status update is wanted */
	const char *hard, *used;	/* the status written (when written) */
};

#define HARD3 "\"hard\":{\"cpu\":\"3\",\"memory\":\"100Gi\",\"pods\":\"5\"}"
#define STATUS_HARD3 "{" HARD3 "}"
#define WANT_HARD3 "cpu=3 memory=100Gi pods=5"
#define SELECTOR(expr) ",\"scopeSelector\":{\"matchExpressions\":[" expr "]}"
#define PC(op, values) "{\"scopeName\":\"PriorityClass\",\"operator\":\"" op "\"" values "}"

static const struct sync_case sync_cases[] = {
	{ "non-matching-best-effort-scoped-quota", "{" HARD3 ",\"scopes\":[\"BestEffort\"]}",
	  STATUS_HARD3, TEST_PODS, 1, WANT_HARD3, "cpu=0 memory=0 pods=0" },
	{ "matching-best-effort-scoped-quota", "{" HARD3 ",\"scopes\":[\"BestEffort\"]}",
	  STATUS_HARD3, BEST_EFFORT_PODS, 1, WANT_HARD3, "cpu=0 memory=0 pods=2" },
	{ "non-matching-priorityclass-scoped-quota-OpExists",
	  "{" HARD3 SELECTOR(PC("Exists", "")) "}", STATUS_HARD3, TEST_PODS, 1, WANT_HARD3,
	  "cpu=0 memory=0 pods=0" },
	{ "matching-priorityclass-scoped-quota-OpExists",
	  "{" HARD3 SELECTOR(PC("Exists", "")) "}", STATUS_HARD3, PRIORITY_PODS, 1, WANT_HARD3,
	  "cpu=600m memory=51Gi pods=2" },
	{ "matching-priorityclass-scoped-quota-OpIn",
	  "{" HARD3 SELECTOR(PC("In", ",\"values\":[\"high\",\"low\"]")) "}", STATUS_HARD3,
	  PRIORITY_PODS, 1, WANT_HARD3, "cpu=600m memory=51Gi pods=2" },
	{ "matching-priorityclass-scoped-quota-OpIn-high",
	  "{" HARD3 SELECTOR(PC("In", ",\"values\":[\"high\"]")) "}", STATUS_HARD3,
	  PRIORITY_PODS, 1, WANT_HARD3, "cpu=500m memory=50Gi pods=1" },
	{ "matching-priorityclass-scoped-quota-OpIn-low",
	  "{" HARD3 SELECTOR(PC("In", ",\"values\":[\"low\"]")) "}", STATUS_HARD3,
	  PRIORITY_PODS, 1, WANT_HARD3, "cpu=100m memory=1Gi pods=1" },
	{ "matching-priorityclass-scoped-quota-OpNotIn-low",
	  "{" HARD3 SELECTOR(PC("NotIn", ",\"values\":[\"high\"]")) "}", STATUS_HARD3,
	  PRIORITY_PODS, 1, WANT_HARD3, "cpu=100m memory=1Gi pods=1" },
	{ "non-matching-priorityclass-scoped-quota-OpIn",
	  "{" HARD3 SELECTOR(PC("In", ",\"values\":[\"random\"]")) "}", STATUS_HARD3,
	  PRIORITY_PODS, 1, WANT_HARD3, "cpu=0 memory=0 pods=0" },
	{ "non-matching-priorityclass-scoped-quota-OpNotIn",
	  "{" HARD3 SELECTOR(PC("NotIn", ",\"values\":[\"random\"]")) "}", STATUS_HARD3,
	  TEST_PODS, 1, WANT_HARD3, "cpu=200m memory=2Gi pods=2" },
	{ "matching-priorityclass-scoped-quota-OpDoesNotExist",
	  "{" HARD3 SELECTOR(PC("DoesNotExist", "")) "}", STATUS_HARD3, TEST_PODS, 1,
	  WANT_HARD3, "cpu=200m memory=2Gi pods=2" },
	{ "pods", "{" HARD3 "}", STATUS_HARD3, TEST_PODS, 1, WANT_HARD3,
	  "cpu=200m memory=2Gi pods=2" },
	{ "quota-spec-hard-updated", "{\"hard\":{\"cpu\":\"4\"}}",
	  "{\"hard\":{\"cpu\":\"3\"},\"used\":{\"cpu\":\"0\"}}", NO_PODS, 1, "cpu=4", "cpu=0" },
	/* sqlkcm's: what kube's rules give besides */
	{ "a status already right: nothing written", "{\"hard\":{\"cpu\":\"4\"}}",
	  "{\"hard\":{\"cpu\":\"4\"},\"used\":{\"cpu\":\"0\"}}", NO_PODS, 0, NULL, NULL },
	{ "equal by value, not by text: nothing written", "{\"hard\":{\"cpu\":\"4\"}}",
	  "{\"hard\":{\"cpu\":\"4000m\"},\"used\":{\"cpu\":\"0m\"}}", NO_PODS, 0, NULL, NULL },
	{ "no status yet: written even at zero", "{\"hard\":{\"cpu\":\"4\"}}", NULL, NO_PODS, 1,
	  "cpu=4", "cpu=0" },
	{ "a resource no evaluator knows keeps the usage the status gave",
	  "{\"hard\":{\"cpu\":\"4\",\"example.com/unknown\":\"3\"}}",
	  "{\"hard\":{\"cpu\":\"4\"},\"used\":{\"cpu\":\"0\",\"example.com/unknown\":\"1\"}}",
	  NO_PODS, 1, "cpu=4 example.com/unknown=3", "cpu=0 example.com/unknown=1" },
	{ "usage of a resource no longer hard is dropped", "{\"hard\":{\"pods\":\"4\"}}",
	  "{\"hard\":{\"pods\":\"4\"},\"used\":{\"pods\":\"2\",\"cpu\":\"1\"}}", TEST_PODS, 1,
	  "pods=4", "pods=2" },
	{ "requests and limits, count/pods with the failed pod",
	  "{\"hard\":{\"requests.cpu\":\"1\",\"limits.memory\":\"8Gi\",\"count/pods\":\"9\"}}",
	  NULL, TEST_PODS, 1, "count/pods=9 limits.memory=8Gi requests.cpu=1",
	  "count/pods=3 limits.memory=0 requests.cpu=200m" },
	{ "a scoped quota counts no configmap",
	  "{\"hard\":{\"pods\":\"4\",\"configmaps\":\"2\"},\"scopes\":[\"NotTerminating\"]}",
	  NULL, TEST_PODS, 1, "configmaps=2 pods=4", "configmaps=0 pods=2" },
	{ "a scope kube cannot read: the usage counted so far",
	  "{\"hard\":{\"pods\":\"4\"}" SELECTOR(PC("In", ",\"values\":[]")) "}",
	  NULL, TEST_PODS, 1, "pods=4", "pods=0" },
};

static cJSON *
object_new(const char *ns, const char *name, const char *rest)
{
	char *text = xasprintf("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
	    "\"uid\":\"uid-%s-%s\",\"resourceVersion\":\"7\"}%s%s}", name, ns, ns, name,
	    *rest != '\0' ? "," : "", rest);
	cJSON *o = fixture_parse(text);

	free(text);
	return o;
}

#define TEST_POD(name, pc, cpu, mem, phase) \
	{ name, "\"spec\":{" pc "\"containers\":[{\"name\":\"ctr\",\"image\":\"image\"," \
	  "\"resources\":{\"requests\":{" cpu mem "}}}]},\"status\":{\"phase\":\"" phase "\"}" }

static const struct {
	const char *name, *rest;
} test_pods[3][3] = {
	[0] = {
		TEST_POD("pod-running", "", "\"cpu\":\"100m\",", "\"memory\":\"1Gi\"", "Running"),
		TEST_POD("pod-running-2", "", "\"cpu\":\"100m\",", "\"memory\":\"1Gi\"", "Running"),
		TEST_POD("pod-failed", "", "\"cpu\":\"100m\",", "\"memory\":\"1Gi\"", "Failed"),
	},
	[1] = {
		TEST_POD("pod-running", "", "", "", "Running"),
		TEST_POD("pod-running-2", "", "", "", "Running"),
		TEST_POD("pod-failed", "", "\"cpu\":\"100m\",", "\"memory\":\"1Gi\"", "Failed"),
	},
	[2] = {
		TEST_POD("pod-running", "\"priorityClassName\":\"high\",", "\"cpu\":\"500m\",",
		    "\"memory\":\"50Gi\"", "Running"),
		TEST_POD("pod-running-2", "\"priorityClassName\":\"low\",", "\"cpu\":\"100m\",",
		    "\"memory\":\"1Gi\"", "Running"),
		TEST_POD("pod-failed", "", "\"cpu\":\"100m\",", "\"memory\":\"1Gi\"", "Failed"),
	},
};

static void
cache_pods(struct ctl_world *w, const char *ns, enum pods_set set)
{
	if (set == NO_PODS)
		return;
	for (int i = 0; i < 3; i++)
		ctl_cache(w, resource_find("pods"), object_new(ns, test_pods[set - 1][i].name,
		    test_pods[set - 1][i].rest));
}

static void
cache_quota(struct ctl_world *w, const char *ns, const char *name, const char *spec,
    const char *status)
{
	char *rest = xasprintf("\"spec\":%s%s%s", spec, status != NULL ? ",\"status\":" : "",
	    status != NULL ? status : "");

	ctl_cache(w, resource_find("resourcequotas"), object_new(ns, name, rest));
	free(rest);
}

static char *
describe_json(const cJSON *o)
{
	struct quota_list l = { 0 };
	char *error = NULL, *text;

	if (quota_list_read(o, &l, &error) != 0)
		fail_msg("%s", error);
	text = describe(&l);
	quota_list_clear(&l);
	return text;
}

static int
world_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(&resourcequota_controller_type, NULL);

	w->row = *state;
	*state = w;
	return 0;
}

static int
world_teardown(void **state)
{
	ctl_world_free(*state);
	return 0;
}

static void
sync_case(void **state)
{
	struct ctl_world *w = *state;
	const struct sync_case *tc = w->row;
	const struct action *a;
	char *got;

	cache_pods(w, "testing", tc->pods);
	cache_pods(w, "elsewhere", TEST_PODS);	/* never counted */
	cache_quota(w, "testing", "quota", tc->spec, tc->status);
	ctl_sync(w, "testing/quota", NOW);
	assert_true(w->result.requeue_after == 300);	/* --resource-quota-sync-period */
	assert_int_equal(w->result.nwrites, 0);
	if (!tc->write) {
		assert_null(w->result.status);
		return;
	}
	a = w->result.status;
	assert_non_null(a);
	assert_int_equal(a->type, ACTION_UPDATE_STATUS);
	assert_string_equal(a->namespace, "testing");
	assert_string_equal(a->name, "quota");
	assert_string_equal(a->uid, "uid-testing-quota");
	assert_string_equal(json_string(a->body, "metadata.resourceVersion"), "7");
	got = describe_json(json_path(a->body, "status.hard"));
	assert_described("status.hard", got, tc->hard);
	free(got);
	got = describe_json(json_path(a->body, "status.used"));
	assert_described("status.used", got, tc->used);
	free(got);
	/* the status written, cached, is one the next sync leaves alone */
	{
		cJSON *written = cJSON_Duplicate(a->body, 1);

		cJSON_ReplaceItemInObject(json_child_object(written, "metadata"),
		    "resourceVersion", cJSON_CreateString("8"));
		ctl_cache(w, resource_find("resourcequotas"), written);
	}
	ctl_sync(w, "testing/quota", NOW);
	assert_null(w->result.status);
}

/* A quota gone: nothing, its bookkeeping forgotten; a spec.hard that does not parse is an
 * error, not a crash. */
static void
sync_gone_and_bad(void **state)
{
	struct ctl_world *w = *state;
	struct sync_result r;
	char *error = NULL;

	ctl_sync(w, "testing/quota", NOW);
	assert_null(w->result.status);
	assert_true(w->result.forget_expectations);
	cache_quota(w, "testing", "bad", "{\"hard\":{\"cpu\":\"a lot\"}}", NULL);
	memset(&r, 0, sizeof r);
	assert_int_equal(w->c->type->sync(w->c, "testing/bad", NOW, &r, &error), -1);
	assert_non_null(strstr(error, "a lot"));
	free(error);
	sync_result_clear(&r);
}

/* Object counts: the legacy names and count/<resource>[.<group>] of resources the cache
 * holds; a count of a resource nobody lists keeps the status's. */
static void
sync_counts(void **state)
{
	struct ctl_world *w = *state;
	char *got;

	ctl_cache(w, resource_find("configmaps"), object_new("testing", "a", ""));
	ctl_cache(w, resource_find("configmaps"), object_new("testing", "b", ""));
	ctl_cache(w, resource_find("configmaps"), object_new("elsewhere", "c", ""));
	ctl_cache(w, resource_find("deployments"), object_new("testing", "d",
	    "\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"b\"}}}"));
	ctl_cache(w, resource_find("services"), object_new("testing", "s",
	    "\"spec\":{\"type\":\"NodePort\",\"ports\":[{\"port\":80},{\"port\":81}]}"));
	cache_quota(w, "testing", "quota", "{\"hard\":{\"configmaps\":\"5\","
	    "\"count/configmaps\":\"5\",\"count/deployments.apps\":\"1\","
	    "\"count/widgets.example.com\":\"3\",\"count/resourcequotas\":\"1\","
	    "\"services.nodeports\":\"4\",\"secrets\":\"2\"}}",
	    "{\"hard\":{},\"used\":{\"count/widgets.example.com\":\"2\"}}");
	ctl_sync(w, "testing/quota", NOW);
	assert_non_null(w->result.status);
	got = describe_json(json_path(w->result.status->body, "status.used"));
	assert_described("status.used", got, "configmaps=2 count/configmaps=2 "
	    "count/deployments.apps=1 count/resourcequotas=1 count/widgets.example.com=2 "
	    "secrets=0 services.nodeports=2");
	free(got);
	/* the full recalculation comes at the ticks of the period counted from the first
	 * sync, whenever a quota was last synced (kube's enqueueAll) */
	assert_true(w->result.requeue_after == 300);
	ctl_sync(w, "testing/quota", NOW + 100);
	assert_true(w->result.requeue_after == 200);
	ctl_sync(w, "testing/quota", NOW + 300);
	assert_true(w->result.requeue_after == 300);
	ctl_sync(w, "testing/quota", NOW + 310);
	assert_true(w->result.requeue_after == 290);
}

/* A pod whose usage cannot be read fails the pods' evaluator only (kube's
 * CalculateUsage): its resources keep the status's values, the others are written, and the
 * sync is marked failed (retried with backoff). */
static void
sync_failed_evaluator(void **state)
{
	struct ctl_world *w = *state;
	char *got;

	ctl_cache(w, resource_find("pods"), object_new("testing", "p",
	    "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
	    "\"cpu\":\"lots\"}}}]},\"status\":{\"phase\":\"Running\"}"));
	ctl_cache(w, resource_find("services"), object_new("testing", "s",
	    "\"spec\":{\"type\":\"ClusterIP\",\"ports\":[{\"port\":80}]}"));
	cache_quota(w, "testing", "quota", "{\"hard\":{\"pods\":\"5\",\"requests.cpu\":"
	    "\"2\",\"services\":\"3\"}}", "{\"hard\":{\"pods\":\"5\",\"requests.cpu\":"
	    "\"2\",\"services\":\"3\"},\"used\":{\"pods\":\"3\",\"requests.cpu\":\"1\","
	    "\"services\":\"0\"}}");
	ctl_sync(w, "testing/quota", NOW);
	assert_true(w->result.failed);
	assert_non_null(w->result.status);
	got = describe_json(json_path(w->result.status->body, "status.used"));
	assert_described("status.used", got, "pods=3 requests.cpu=1 services=1");
	free(got);
}

/* Replenishment (kube's monitors): a quota added or whose spec.hard changed is queued, not
 * one whose status alone changed; an object deleted
 * queues its namespace's quotas, one updated only when its usage changed, one added never
 * (admission charged it). */
static void
events_queue(void **state)
{
	struct ctl_world *w = *state;
	const struct resource *pods = resource_find("pods");
	const struct resource *cms = resource_find("configmaps");
	char *keys;

	cache_quota(w, "testing", "q1", "{\"hard\":{\"pods\":\"1\"}}", NULL);
	cache_quota(w, "testing", "q2", "{\"hard\":{\"pods\":\"1\"}}", NULL);
	cache_quota(w, "elsewhere", "q3", "{\"hard\":{\"pods\":\"1\"}}", NULL);
	ctl_tell(w, INFORMER_ADDED, pods, object_new("testing", test_pods[0][0].name,
	    test_pods[0][0].rest), NULL);
	ctl_tell(w, INFORMER_UPDATED, pods, object_new("testing", test_pods[0][0].name,
	    test_pods[0][0].rest), object_new("testing", test_pods[0][0].name,
	    test_pods[0][0].rest));
	ctl_tell(w, INFORMER_UPDATED, cms, object_new("testing", "cm", ""),
	    object_new("testing", "cm", ""));
	keys = ctl_keys(w);
	assert_string_equal(keys, "");
	free(keys);
	/* running, then failed: no longer counted */
	ctl_tell(w, INFORMER_UPDATED, pods, object_new("testing", test_pods[0][2].name,
	    test_pods[0][2].rest), object_new("testing", test_pods[0][0].name,
	    test_pods[0][0].rest));
	keys = ctl_keys(w);
	assert_string_equal(keys, "testing/q1,testing/q2");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_DELETED, cms, object_new("elsewhere", "cm", ""), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "elsewhere/q3");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_UPDATED, resource_find("resourcequotas"),
	    object_new("testing", "q2", "\"spec\":{}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "testing/q2");
	free(keys);
	ctl_keys_clear(w);
	/* A status update (admission charged an object whose event may not have come yet):
	 * not queued, as kube's; a change of spec.hard is. */
	ctl_tell(w, INFORMER_UPDATED, resource_find("resourcequotas"),
	    object_new("testing", "q2", "\"spec\":{\"hard\":{\"pods\":\"1\"}},"
	    "\"status\":{\"used\":{\"pods\":\"1\"}}"), object_new("testing", "q2",
	    "\"spec\":{\"hard\":{\"pods\":\"1\"}},\"status\":{\"used\":{\"pods\":\"0\"}}"));
	keys = ctl_keys(w);
	assert_string_equal(keys, "");
	free(keys);
	ctl_tell(w, INFORMER_UPDATED, resource_find("resourcequotas"),
	    object_new("testing", "q2", "\"spec\":{\"hard\":{\"pods\":\"2\"}}"),
	    object_new("testing", "q2", "\"spec\":{\"hard\":{\"pods\":\"1\"}}"));
	keys = ctl_keys(w);
	assert_string_equal(keys, "testing/q2");
	free(keys);
	ctl_keys_clear(w);
	ctl_list_keys(w);
	keys = ctl_keys(w);
	assert_string_equal(keys, "elsewhere/q3,testing/q1,testing/q2");
	free(keys);
}

/* The view computes the counts and the pods' count as the sync does. */
static void
view_agrees(void **state)
{
	struct ctl_world *w = *state;
	sqlite3_stmt *stmt;
	struct buf b = { 0 };

	cache_pods(w, "testing", TEST_PODS);
	ctl_cache(w, resource_find("configmaps"), object_new("testing", "a", ""));
	cache_quota(w, "testing", "quota", "{\"hard\":{\"pods\":\"5\",\"count/pods\":\"5\","
	    "\"configmaps\":\"3\",\"cpu\":\"1\",\"count/deployments.apps\":\"2\"}}", NULL);
	cache_quota(w, "testing", "scoped", "{\"hard\":{\"pods\":\"5\",\"configmaps\":\"3\"},"
	    "\"scopes\":[\"BestEffort\"]}", NULL);
	assert_int_equal(sqlite3_prepare_v2(store_db(w->store),
	    "SELECT quota, resource, hard, coalesce(computed, 'NULL') FROM resourcequota_usage"
	    " WHERE namespace = 'testing' ORDER BY quota, resource", -1, &stmt, NULL),
	    SQLITE_OK);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&b, "%s %s %s %s;", sqlite3_column_text(stmt, 0),
		    sqlite3_column_text(stmt, 1), sqlite3_column_text(stmt, 2),
		    sqlite3_column_text(stmt, 3));
	sqlite3_finalize(stmt);
	assert_described("resourcequota_usage", b.data,
	    "quota configmaps 3 1;quota count/deployments.apps 2 0;quota count/pods 5 3;"
	    "quota cpu 1 NULL;quota pods 5 2;scoped configmaps 3 0;scoped pods 5 NULL;");
	free(b.data);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(usage_cases) + NELEM(sync_cases) + 9];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(usage_cases); i++)
		tests[n++] = (struct CMUnitTest){ usage_cases[i].name, usage_case, NULL, NULL,
		    (void *)&usage_cases[i] };
	tests[n++] = (struct CMUnitTest){ "a quantity that does not parse", usage_bad_quantity,
	    NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "services and claims", object_cases, NULL, NULL,
	    NULL };
	tests[n++] = (struct CMUnitTest){ "pod scopes", scope_cases_run, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "claim scopes", pvc_scopes, NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(sync_cases); i++)
		tests[n++] = (struct CMUnitTest){ sync_cases[i].name, sync_case, world_setup,
		    world_teardown, (void *)&sync_cases[i] };
	tests[n++] = (struct CMUnitTest){ "a quota gone, a quota unreadable", sync_gone_and_bad,
	    world_setup, world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "object counts", sync_counts, world_setup,
	    world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "a failed evaluator keeps its old values",
	    sync_failed_evaluator, world_setup, world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "replenishment", events_queue, world_setup,
	    world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "the view", view_agrees, world_setup, world_teardown,
	    NULL };
	return _cmocka_run_group_tests("resourcequota", tests, n, NULL, NULL);
}
