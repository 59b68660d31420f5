/*
 * test_statefulset.c - the StatefulSet controller (controllers/statefulset.c) against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/statefulset. The cases are
 * stateful_set_utils_test.go's TestGetParentNameAndOrdinal and TestIsClaimOwnerUpToDate
 * (with TestUpdateClaimOwnerRefForSetAndPod's round trip), then syncs over an in-memory
 * cache in the spirit of stateful_set_control_test.go: OrderedReady and Parallel creation
 * and scale-down, failed pods, the rolling update with and without a partition, OnDelete,
 * spec.ordinals.start, claims and their retention policy, the history and the status.
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
#include "controllers/statefulset.h"
#include "expectations.h"
#include "fixtures.h"
#include "history.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

/* --- getParentNameAndOrdinal ----------------------------------------------------------- */

static const struct ordinal_case {
	const char *pod;
	long long ordinal;
	size_t parent_len;
} ordinal_cases[] = {
	{ "foo-1", 1, 3 },
	{ "foo-bar-12", 12, 7 },
	{ "foo", -1, 0 },
	{ "foo-", -1, 0 },
	{ "foo-1a", -1, 0 },
	{ "1", -1, 0 },
	{ "-7", 7, 0 },
	{ "foo-2147483647", 2147483647LL, 3 },
	{ "foo-2147483648", -1, 0 },		/* past int32, as kube's ParseInt(.., 32) */
	{ "foo-99999999999", -1, 0 },
};

static void
ordinal_case(void **state)
{
	const struct ordinal_case *tc = *state;
	size_t parent_len = 0;

	assert_int_equal(statefulset_ordinal(tc->pod, &parent_len), tc->ordinal);
	if (tc->ordinal >= 0)
		assert_int_equal(parent_len, tc->parent_len);
}

/* --- isClaimOwnerUpToDate -------------------------------------------------------------- */

static const struct owner_case {
	const char *name;
	int scaled_delete, deleted_delete;
	int needs_pod_ref, needs_set_ref;
	int replicas, ordinal;
} owner_cases[] = {
	{ "retain", 0, 0, 0, 0, 0, 0 },
	{ "on SS delete", 0, 1, 0, 1, 0, 0 },
	{ "on scaledown only, condemned", 1, 0, 1, 0, 2, 2 },
	{ "on scaledown only, remains", 1, 0, 0, 0, 2, 1 },
	{ "on both, condemned", 1, 1, 1, 0, 2, 2 },
	{ "on both, remains", 1, 1, 0, 1, 2, 1 },
};

static cJSON *
ref_new(const char *api_version, const char *kind, const char *name, const char *uid,
    int controller)
{
	char *text = xasprintf("{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"name\":\"%s\","
	    "\"uid\":\"%s\"%s}", api_version, kind, name, uid,
	    controller ? ",\"controller\":true,\"blockOwnerDeletion\":true" : "");
	cJSON *r = fixture_parse(text);

	free(text);
	return r;
}

static int
refs_have(const cJSON *refs, const char *uid)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, refs) {
		if (strcmp(json_string(r, "uid"), uid) == 0)
			return 1;
	}
	return 0;
}

/* Every start (others' refs or not, the pod's, the set's) against the policy; then
 * statefulset_claim_owners' answer is up to date, keeps the others and has exactly the
 * owners the policy needs. */
static void
owner_case(void **state)
{
	const struct owner_case *tc = *state;
	struct statefulset_retention policy = { tc->deleted_delete, tc->scaled_delete };
	char *pod_name = xasprintf("pod-%d", tc->ordinal);
	char *pod_text = xasprintf("{\"metadata\":{\"name\":\"%s\",\"uid\":\"pod-123\"}}",
	    pod_name);
	cJSON *pod = fixture_parse(pod_text);
	cJSON *set = fixture_parse("{\"metadata\":{\"name\":\"stateful-set\","
	    "\"uid\":\"ss-456\"}}");
	int scaled_down = tc->ordinal >= tc->replicas;

	for (int others = 0; others < 2; others++) {
		for (int pod_ref = 0; pod_ref < 2; pod_ref++) {
			for (int set_ref = 0; set_ref < 2; set_ref++) {
				cJSON *claim = fixture_parse("{\"metadata\":{\"name\":"
				    "\"target-claim\"}}");
				cJSON *refs = cJSON_AddArrayToObject(json_child_object(claim,
				    "metadata"), "ownerReferences");
				cJSON *fixed, *again;
				int want = pod_ref == tc->needs_pod_ref &&
				    set_ref == tc->needs_set_ref;

				if (pod_ref)
					cJSON_AddItemToArray(refs, ref_new("v1", "Pod", pod_name,
					    "pod-123", 1));
				if (set_ref)
					cJSON_AddItemToArray(refs, ref_new("apps/v1", "StatefulSet",
					    "stateful-set", "ss-456", 1));
				if (others) {
					cJSON_AddItemToArray(refs, ref_new("v1", "Pod", "rand1",
					    "rand1-uid", 0));
					cJSON_AddItemToArray(refs, ref_new("v1", "Pod", "rand2",
					    "rand2-uid", 0));
				}
				if (statefulset_claim_owner_up_to_date(claim, set, pod, scaled_down,
				    &policy) != want)
					fail_msg("%s: pod=%d set=%d others=%d: up to date should be %d",
					    tc->name, pod_ref, set_ref, others, want);
				fixed = statefulset_claim_owners(claim, set, pod, scaled_down, &policy);
				assert_int_equal(refs_have(fixed, "pod-123"), tc->needs_pod_ref);
				assert_int_equal(refs_have(fixed, "ss-456"), tc->needs_set_ref);
				assert_int_equal(refs_have(fixed, "rand1-uid"), others);
				assert_int_equal(refs_have(fixed, "rand2-uid"), others);
				again = cJSON_Duplicate(claim, 1);
				json_set(json_child_object(again, "metadata"), "ownerReferences",
				    fixed);
				assert_true(statefulset_claim_owner_up_to_date(again, set, pod,
				    scaled_down, &policy));
				cJSON_Delete(again);
				cJSON_Delete(claim);
			}
		}
	}
	cJSON_Delete(pod);
	cJSON_Delete(set);
	free(pod_text);
	free(pod_name);
}

/* TestHasUnexpectedController: another controller of the claim leaves it alone (it is up to
 * date whatever the policy) unless the set or pod also own it. */
static void
another_controller_is_left_alone(void **state)
{
	struct statefulset_retention policy = { 1, 1 };
	cJSON *pod = fixture_parse("{\"metadata\":{\"name\":\"web-3\",\"uid\":\"p\"}}");
	cJSON *set = fixture_parse("{\"metadata\":{\"name\":\"web\",\"uid\":\"s\"}}");
	cJSON *claim = fixture_parse("{\"metadata\":{\"name\":\"c\",\"ownerReferences\":[{"
	    "\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"x\",\"uid\":\"x\","
	    "\"controller\":true}]}}");
	struct statefulset_retention retain = { 0, 0 };

	(void)state;
	assert_true(statefulset_claim_unexpected_controller(claim, set, pod, &policy));
	assert_false(statefulset_claim_unexpected_controller(claim, set, pod, &retain));
	assert_true(statefulset_claim_owner_up_to_date(claim, set, pod, 1, &policy));
	cJSON_Delete(pod);
	cJSON_Delete(set);
	cJSON_Delete(claim);
}

/* --- syncs ----------------------------------------------------------------------------- */

#define SYNC_NOW 1700000000.0	/* 2023-11-14T22:13:20Z */

/* The set of a case: "web" in default, selector app=web, template image v2 (the update
 * revision "web-new", cached), the current revision "web-old" (image v1). */
struct set_spec {
	int replicas;
	int parallel;
	int on_delete;
	int partition;		/* -1: no rollingUpdate */
	int start;
	int claims;		/* a volumeClaimTemplate "www" */
	int scaled_delete, deleted_delete;
	const char *current;	/* status.currentRevision; NULL: web-old */
};

static cJSON *
template_new(const char *image)
{
	char *text = xasprintf("{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{"
	    "\"containers\":[{\"name\":\"nginx\",\"image\":\"%s\"}]}}", image);
	cJSON *t = fixture_parse(text);

	free(text);
	return t;
}

static cJSON *
set_new(const struct set_spec *s)
{
	cJSON *set = fixture_parse("{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\","
	    "\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"uid\":\"web-uid\","
	    "\"resourceVersion\":\"5\",\"generation\":2},\"spec\":{\"serviceName\":\"nginx\","
	    "\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"revisionHistoryLimit\":10},"
	    "\"status\":{\"observedGeneration\":1,\"collisionCount\":0}}");
	cJSON *spec = json_child_object(set, "spec"), *strategy;

	json_set(spec, "replicas", cJSON_CreateNumber(s->replicas));
	json_set(spec, "template", template_new("v2"));
	json_set(spec, "podManagementPolicy",
	    cJSON_CreateString(s->parallel ? "Parallel" : "OrderedReady"));
	strategy = json_child_object(spec, "updateStrategy");
	json_set(strategy, "type", cJSON_CreateString(s->on_delete ? "OnDelete" :
	    "RollingUpdate"));
	if (s->partition >= 0)
		json_set(json_child_object(strategy, "rollingUpdate"), "partition",
		    cJSON_CreateNumber(s->partition));
	if (s->start > 0)
		json_set(json_child_object(spec, "ordinals"), "start",
		    cJSON_CreateNumber(s->start));
	if (s->claims)
		json_set(spec, "volumeClaimTemplates", fixture_parse("[{\"metadata\":{\"name\":"
		    "\"www\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{"
		    "\"requests\":{\"storage\":\"1Gi\"}}}}]"));
	if (s->scaled_delete || s->deleted_delete) {
		cJSON *p = json_child_object(spec, "persistentVolumeClaimRetentionPolicy");

		json_set(p, "whenScaled", cJSON_CreateString(s->scaled_delete ? "Delete" :
		    "Retain"));
		json_set(p, "whenDeleted", cJSON_CreateString(s->deleted_delete ? "Delete" :
		    "Retain"));
	}
	json_set(json_child_object(set, "status"), "currentRevision",
	    cJSON_CreateString(s->current != NULL ? s->current : "web-old"));
	json_set(json_child_object(set, "status"), "updateRevision",
	    cJSON_CreateString("web-new"));
	return set;
}

static cJSON *
revision_new(const char *name, const char *image, int number)
{
	char *text = xasprintf("{\"apiVersion\":\"apps/v1\",\"kind\":\"ControllerRevision\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\","
	    "\"resourceVersion\":\"4\",\"creationTimestamp\":\"2023-11-14T00:00:0%dZ\","
	    "\"labels\":{\"app\":\"web\",\"controller-revision-hash\":\"%s\"},"
	    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\","
	    "\"name\":\"web\",\"uid\":\"web-uid\",\"controller\":true}]},\"revision\":%d}",
	    name, name, number, name, number);
	cJSON *r = fixture_parse(text), *data = cJSON_CreateObject(), *t = template_new(image);

	json_set(t, "$patch", cJSON_CreateString("replace"));
	cJSON_AddItemToObject(cJSON_AddObjectToObject(data, "spec"), "template", t);
	cJSON_AddItemToObject(r, "data", data);
	free(text);
	return r;
}

/* A pod of "web" from a token "<ordinal><state><revision>": state R Running and Ready, N
 * Running not Ready, P Pending, F Failed, D Running, Ready and being deleted; revision o
 * (web-old) or n (web-new). */
static cJSON *
pod_from_token(const char *token)
{
	char *end;
	long ordinal = strtol(token, &end, 10);
	char state = end[0], rev = end[1];
	const char *phase = state == 'P' ? "Pending" : state == 'F' ? "Failed" : "Running";
	int ready = state == 'R' || state == 'D';
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
	    "\"web-%ld\",\"namespace\":\"default\",\"uid\":\"uid-web-%ld\",\"resourceVersion\":"
	    "\"3\",\"creationTimestamp\":\"2023-11-14T00:00:00Z\",%s\"labels\":{\"app\":\"web\","
	    "\"controller-revision-hash\":\"%s\",\"statefulset.kubernetes.io/pod-name\":"
	    "\"web-%ld\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
	    "\"StatefulSet\",\"name\":\"web\",\"uid\":\"web-uid\",\"controller\":true}]},"
	    "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"%s\",\"conditions\":[{"
	    "\"type\":\"Ready\",\"status\":\"%s\",\"lastTransitionTime\":"
	    "\"2023-11-14T00:00:00Z\"}]}}", ordinal, ordinal,
	    state == 'D' ? "\"deletionTimestamp\":\"2023-11-14T22:00:00Z\"," : "",
	    rev == 'o' ? "web-old" : "web-new", ordinal, phase, ready ? "True" : "False");
	cJSON *p = fixture_parse(text);

	free(text);
	return p;
}

static cJSON *
claim_cached(long ordinal)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
	    "\"metadata\":{\"name\":\"www-web-%ld\",\"namespace\":\"default\",\"uid\":"
	    "\"uid-www-%ld\",\"resourceVersion\":\"2\",\"labels\":{\"app\":\"web\"}},"
	    "\"spec\":{},\"status\":{\"phase\":\"Pending\"}}", ordinal, ordinal);
	cJSON *c = fixture_parse(text);

	free(text);
	return c;
}

/* Caches the set, its two revisions, the pods of the tokens and (claims) their claims. */
static struct ctl_world *
world_new(const struct set_spec *s, const char *pods)
{
	struct ctl_world *w = ctl_world_new(&statefulset_controller_type, NULL);
	char *copy = xstrdup(pods != NULL ? pods : ""), *save = NULL;

	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-old", "v1", 1));
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-new", "v2", 2));
	for (char *t = strtok_r(copy, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save)) {
		ctl_cache(w, resource_find("pods"), pod_from_token(t));
		if (s->claims)
			ctl_cache(w, resource_find("persistentvolumeclaims"),
			    claim_cached(strtol(t, NULL, 10)));
	}
	ctl_cache(w, resource_find("statefulsets"), set_new(s));
	free(copy);
	return w;
}

/* The result as "create pvc www-web-0, create web-0@web-new, delete web-2". */
static char *
describe(const struct sync_result *r)
{
	struct buf b = { 0 };
	const char *sep = "";

	for (int i = 0; i < r->nwrites; i++) {
		const struct action *a = &r->writes[i];

		buf_printf(&b, "%s%s %s %s", sep, a->verb,
		    strcmp(a->resource->name, "persistentvolumeclaims") == 0 ? "pvc" :
		    strcmp(a->resource->name, "pods") == 0 ? "pod" : "revision",
		    a->name != NULL ? a->name : "?");
		sep = ", ";
	}
	for (int i = 0; i < r->nmanage; i++) {
		const struct action *a = &r->manage[i];

		buf_printf(&b, "%s%s %s", sep, a->verb, a->name);
		if (a->type == ACTION_CREATE)
			buf_printf(&b, "@%s", json_string(json_path(a->body, "metadata.labels"),
			    HISTORY_HASH_LABEL));
		sep = ", ";
	}
	return b.data != NULL ? b.data : xstrdup("");
}

static const struct sync_case {
	const char *name;
	struct set_spec set;
	const char *pods;
	const char *want;
} sync_cases[] = {
	/* Creation (TestStatefulSetControlScaleUp, CreatesPodsWithPodManagementPolicy). */
	{ "OrderedReady creates the first pod", { 3, 0, 0, -1, 0, 0, 0, 0, "web-new" }, "",
	    "create web-0@web-new" },
	{ "OrderedReady waits for a pending pod", { 3, 0, 0, -1, 0, 0, 0, 0, "web-new" },
	    "0Pn", "" },
	{ "OrderedReady waits for a pod not ready", { 3, 0, 0, -1, 0, 0, 0, 0, "web-new" },
	    "0Nn", "" },
	{ "OrderedReady waits for a terminating pod", { 3, 0, 0, -1, 0, 0, 0, 0, "web-new" },
	    "0Dn", "" },
	{ "OrderedReady creates the next once the last is ready",
	    { 3, 0, 0, -1, 0, 0, 0, 0, "web-new" }, "0Rn", "create web-1@web-new" },
	{ "OrderedReady fills a hole first", { 3, 0, 0, -1, 0, 0, 0, 0, "web-new" },
	    "0Rn 2Rn", "create web-1@web-new" },
	{ "Parallel creates every pod at once", { 3, 1, 0, -1, 0, 0, 0, 0, "web-new" }, "",
	    "create web-0@web-new, create web-1@web-new, create web-2@web-new" },
	{ "Parallel creates past a pod not ready", { 3, 1, 0, -1, 0, 0, 0, 0, "web-new" },
	    "0Nn", "create web-1@web-new, create web-2@web-new" },
	{ "spec.ordinals.start names the first pod", { 2, 0, 0, -1, 5, 0, 0, 0, "web-new" },
	    "", "create web-5@web-new" },
	{ "spec.ordinals.start: the next after it", { 2, 0, 0, -1, 5, 0, 0, 0, "web-new" },
	    "5Rn", "create web-6@web-new" },
	{ "spec.ordinals.start: pods below it are condemned",
	    { 2, 0, 0, -1, 5, 0, 0, 0, "web-new" }, "0Rn 5Rn 6Rn", "delete web-0" },
	/* Failed pods (TestStatefulSetControlReplacesPods, processReplica). */
	{ "a failed pod is deleted", { 1, 0, 0, -1, 0, 0, 0, 0, "web-new" }, "0Fn",
	    "delete web-0" },
	{ "OrderedReady: a failed pod holds the next back", { 3, 0, 0, -1, 0, 0, 0, 0,
	    "web-new" }, "0Fn", "delete web-0" },
	{ "Parallel: failed pods are deleted after the creations",
	    { 3, 1, 0, -1, 0, 0, 0, 0, "web-new" }, "0Fn", "create web-1@web-new, "
	    "create web-2@web-new" },
	{ "Parallel: failed pods are deleted", { 2, 1, 0, -1, 0, 0, 0, 0, "web-new" },
	    "0Fn 1Fn", "delete web-0, delete web-1" },
	/* Scale-down (TestStatefulSetControlScaleDown..., processCondemned). */
	{ "OrderedReady deletes the highest condemned pod first",
	    { 1, 0, 0, -1, 0, 0, 0, 0, "web-new" }, "0Rn 1Rn 2Rn", "delete web-2" },
	{ "OrderedReady waits for a terminating condemned pod",
	    { 1, 0, 0, -1, 0, 0, 0, 0, "web-new" }, "0Rn 1Rn 2Dn", "" },
	{ "OrderedReady deletes a condemned pod that is the first unhealthy",
	    { 1, 0, 0, -1, 0, 0, 0, 0, "web-new" }, "0Rn 1Rn 2Nn", "delete web-2" },
	{ "OrderedReady keeps a condemned pod not ready below another unhealthy",
	    { 1, 0, 0, -1, 0, 0, 0, 0, "web-new" }, "0Rn 1Nn 2Nn", "" },
	{ "OrderedReady scales down nothing while a replica is unhealthy",
	    { 1, 0, 0, -1, 0, 0, 0, 0, "web-new" }, "0Nn 1Rn", "" },
	{ "Parallel deletes every condemned pod at once",
	    { 1, 1, 0, -1, 0, 0, 0, 0, "web-new" }, "0Rn 1Nn 2Rn", "delete web-2, delete web-1" },
	{ "scale to zero, OrderedReady", { 0, 0, 0, -1, 0, 0, 0, 0, "web-new" }, "0Rn 1Rn",
	    "delete web-1" },
	/* RollingUpdate (TestStatefulSetControlRollingUpdate, ...WithPartition). */
	{ "a rolling update deletes the highest old pod", { 3, 0, 0, -1, 0, 0, 0, 0, NULL },
	    "0Ro 1Ro 2Ro", "delete web-2" },
	{ "a rolling update waits for the new pod to be ready", { 3, 0, 0, -1, 0, 0, 0, 0,
	    NULL }, "0Ro 1Ro 2Nn", "" },
	{ "a rolling update goes on below once the new pod is ready",
	    { 3, 0, 0, -1, 0, 0, 0, 0, NULL }, "0Ro 1Ro 2Rn", "delete web-1" },
	{ "a rolling update recreates a deleted pod of the update revision",
	    { 3, 0, 0, -1, 0, 0, 0, 0, NULL }, "0Ro 1Ro", "create web-2@web-new" },
	{ "Parallel: a rolling update still goes one at a time",
	    { 3, 1, 0, -1, 0, 0, 0, 0, NULL }, "0Ro 1Ro 2Ro", "delete web-2" },
	{ "a partition keeps the pods below it", { 3, 0, 0, 2, 0, 0, 0, 0, NULL },
	    "0Ro 1Ro 2Rn", "" },
	{ "a partition updates the pods at and above it", { 3, 0, 0, 2, 0, 0, 0, 0, NULL },
	    "0Ro 1Ro 2Ro", "delete web-2" },
	{ "a pod below the partition is made of the current revision",
	    { 3, 0, 0, 2, 0, 0, 0, 0, NULL }, "1Ro 2Rn", "create web-0@web-old" },
	{ "a pod at the partition is made of the update revision",
	    { 3, 0, 0, 2, 0, 0, 0, 0, NULL }, "0Ro 1Ro", "create web-2@web-new" },
	{ "a partition of 0 updates them all", { 3, 0, 0, 0, 0, 0, 0, 0, NULL },
	    "0Ro 1Rn 2Rn", "delete web-0" },
	{ "OnDelete deletes no old pod", { 3, 0, 1, -1, 0, 0, 0, 0, NULL }, "0Ro 1Ro 2Ro",
	    "" },
	{ "OnDelete makes a deleted pod of the update revision",
	    { 3, 0, 1, -1, 0, 0, 0, 0, NULL }, "0Ro 1Ro", "create web-2@web-new" },
	/* Claims (TestStatefulPodControlCreatesPods, the retention policy's cases). */
	{ "claims are created before their pod", { 2, 0, 0, -1, 0, 1, 0, 0, "web-new" }, "",
	    "create pvc www-web-0, create web-0@web-new" },
	{ "a pending pod with its claims waits", { 1, 0, 0, -1, 0, 1, 0, 0, "web-new" },
	    "0Pn", "" },
	{ "whenScaled Delete: a condemned pod's claim gets the pod as owner first",
	    { 1, 0, 0, -1, 0, 1, 1, 0, "web-new" }, "0Rn 1Rn",
	    "update pvc www-web-1, delete web-1" },
	/* kube's UpdateStatefulPod updates the pod too once its claims changed. */
	{ "whenDeleted Delete: a claim gets the set as owner",
	    { 1, 0, 0, -1, 0, 1, 0, 1, "web-new" }, "0Rn", "update pvc www-web-0, "
	    "update pod web-0" },
	{ "Retain: claims are left as they are", { 1, 0, 0, -1, 0, 1, 0, 0, "web-new" },
	    "0Rn 1Rn", "delete web-1" },
};

static void
sync_case(void **state)
{
	const struct sync_case *tc = *state;
	struct ctl_world *w = world_new(&tc->set, tc->pods);
	char *got;

	ctl_sync(w, "default/web", SYNC_NOW);
	got = describe(&w->result);
	assert_described(tc->name, got, tc->want);
	free(got);
	ctl_world_free(w);
}

/* kube's TestStatefulSetControlRollingUpdateWithMaxUnavailableInOrderedModeVerifyInvariant
 * as data, with --feature-gates=MaxUnavailableStatefulSet=true: 6 pods of the current
 * revision, partition 3, maxUnavailable 2; the pods of the ordinals listed are being
 * deleted (unavailable, wherever they are); as many old pods at or above the partition
 * are deleted, highest first, as maxUnavailable leaves room for. kube's test calls the
 * update step alone; a whole sync gets there past terminating pods with Parallel only
 * (OrderedReady waits for them first), so the set is Parallel. Then sqlkcm's rows: a
 * percentage rounds down to at least 1, and without the gate one pod at a time. */
static const struct max_unavailable_case {
	const char *terminating;	/* ordinals, space-separated */
	const char *max_unavailable;	/* JSON; NULL: absent */
	int gate;
	const char *want;
} max_unavailable_cases[] = {
	{ "", "2", 1, "delete web-5, delete web-4" },
	{ "5", "2", 1, "delete web-4" },
	{ "3", "2", 1, "delete web-5" },
	{ "4", "2", 1, "delete web-5" },
	{ "5 4", "2", 1, "" },
	{ "5 3", "2", 1, "" },
	{ "4 3", "2", 1, "" },
	{ "5 4 3", "2", 1, "" },
	{ "2", "2", 1, "delete web-5" },	/* below the partition, counted all the same */
	{ "1", "2", 1, "delete web-5" },
	{ "", "\"50%\"", 1, "delete web-5, delete web-4, delete web-3" },
	{ "", "\"10%\"", 1, "delete web-5" },
	{ "", NULL, 1, "delete web-5" },
	{ "", "2", 0, "delete web-5" },
};

static void
max_unavailable_case(void **state)
{
	const struct max_unavailable_case *tc = *state;
	const char *flags[] = { tc->gate ? "MaxUnavailableStatefulSet=true" :
	    "MaxUnavailableStatefulSet=false" };
	struct controller_config config = { .flags = flags };
	struct ctl_world *w = ctl_world_new(&statefulset_controller_type, &config);
	struct set_spec s = { 6, 1, 0, 3, 0, 0, 0, 0, NULL };
	cJSON *set = set_new(&s);
	char *got;

	if (tc->max_unavailable != NULL)
		json_set(json_child_object(json_child_object(json_child_object(set, "spec"),
		    "updateStrategy"), "rollingUpdate"), "maxUnavailable",
		    fixture_parse(tc->max_unavailable));
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-old", "v1", 1));
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-new", "v2", 2));
	for (int i = 0; i < 6; i++) {
		char token[8];

		snprintf(token, sizeof token, "%d%co", i,
		    strchr(tc->terminating, '0' + i) != NULL ? 'D' : 'R');
		ctl_cache(w, resource_find("pods"), pod_from_token(token));
	}
	ctl_cache(w, resource_find("statefulsets"), set);
	ctl_sync(w, "default/web", SYNC_NOW);
	got = describe(&w->result);
	assert_described(tc->terminating, got, tc->want);
	free(got);
	ctl_world_free(w);
}

/* A --feature-gates value that is not NAME=BOOL stops the controller's start. */
static void
bad_feature_gates_refused(void **state)
{
	const char *flags[] = { "MaxUnavailableStatefulSet=maybe" };
	struct controller_config config = { .flags = flags };
	struct controller *c;
	struct store *st = NULL;
	char *error = NULL;

	(void)state;
	if (store_open(":memory:", NULL, &st, &error) != 0)
		fail_msg("store_open: %s", error);
	c = controller_new(&statefulset_controller_type, st, &config, &error);
	assert_null(c);
	assert_non_null(strstr(error, "MaxUnavailableStatefulSet=maybe"));
	free(error);
	store_close(st);
}

/* A pending pod whose claim went missing gets it again (kube's
 * createMissingPersistentVolumeClaims). */
static void
missing_claim_of_a_pending_pod_is_created(void **state)
{
	struct set_spec s = { 1, 0, 0, -1, 0, 1, 0, 0, "web-new" };
	struct ctl_world *w = ctl_world_new(&statefulset_controller_type, NULL);
	char *got;

	(void)state;
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-new", "v2", 2));
	ctl_cache(w, resource_find("pods"), pod_from_token("0Pn"));
	ctl_cache(w, resource_find("statefulsets"), set_new(&s));
	ctl_sync(w, "default/web", SYNC_NOW);
	got = describe(&w->result);
	assert_described("a pending pod without its claim", got, "create pvc www-web-0");
	free(got);
	ctl_world_free(w);
}

/* A claim of the pod to make is being deleted: no pod, and kube's FailedCreate event with
 * its error (an aggregate in brackets when both claims are). */
static void
claim_being_deleted_fails_the_creation(void **state)
{
	struct set_spec s = { 1, 0, 0, -1, 0, 1, 0, 0, "web-new" };
	struct ctl_world *w = ctl_world_new(&statefulset_controller_type, NULL);
	cJSON *claim = claim_cached(0);
	char *got;

	(void)state;
	json_set(json_child_object(claim, "metadata"), "deletionTimestamp",
	    cJSON_CreateString("2023-11-14T22:00:00Z"));
	json_set(json_child_object(claim, "metadata"), "finalizers",
	    fixture_parse("[\"kubernetes.io/pvc-protection\"]"));
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-new", "v2", 2));
	ctl_cache(w, resource_find("persistentvolumeclaims"), claim);
	ctl_cache(w, resource_find("statefulsets"), set_new(&s));
	ctl_sync(w, "default/web", SYNC_NOW);
	got = describe(&w->result);
	assert_described("a claim being deleted", got, "");
	free(got);
	assert_int_equal(w->result.nevents, 1);
	assert_string_equal(w->result.events[0].type, "Warning");
	assert_string_equal(w->result.events[0].reason, "FailedCreate");
	assert_string_equal(w->result.events[0].message, "Create Pod web-0 in StatefulSet web "
	    "failed error: pvc www-web-0 is being deleted");
	ctl_world_free(w);
}

/* The pod made: its name, identity labels, host name, subdomain, owner, claim volume; the
 * claim: its name, the selector's labels, the owner whenDeleted Delete wants; the events
 * as kube's recordPodEvent and recordClaimEvent words them. */
static void
created_pod_and_claim_are_kubes(void **state)
{
	struct set_spec s = { 2, 0, 0, -1, 0, 1, 0, 1, "web-new" };
	struct ctl_world *w = world_new(&s, "");
	const struct sync_result *r = &w->result;
	const cJSON *pod, *claim, *labels, *vol;

	(void)state;
	ctl_sync(w, "default/web", SYNC_NOW);
	assert_int_equal(r->nmanage, 1);
	assert_true(r->creating);
	pod = r->manage[0].body;
	labels = json_path(pod, "metadata.labels");
	assert_string_equal(json_string(json_path(pod, "metadata"), "name"), "web-0");
	assert_null(json_path(pod, "metadata.generateName"));
	/* Label keys have dots, which json_string's paths cannot name. */
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels,
	    STATEFULSET_POD_NAME_LABEL)), "web-0");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels,
	    STATEFULSET_POD_INDEX_LABEL)), "0");
	assert_string_equal(json_string(labels, HISTORY_HASH_LABEL), "web-new");
	assert_string_equal(json_string(labels, "app"), "web");
	assert_string_equal(json_string(json_path(pod, "spec"), "hostname"), "web-0");
	assert_string_equal(json_string(json_path(pod, "spec"), "subdomain"), "nginx");
	assert_string_equal(json_string(cJSON_GetArrayItem(json_path(pod,
	    "metadata.ownerReferences"), 0), "uid"), "web-uid");
	vol = cJSON_GetArrayItem(json_path(pod, "spec.volumes"), 0);
	assert_string_equal(json_string(vol, "name"), "www");
	assert_string_equal(json_string(json_path(vol, "persistentVolumeClaim"), "claimName"),
	    "www-web-0");
	assert_string_equal(r->manage[0].done_message,
	    "Create Pod web-0 in StatefulSet web successful");
	assert_string_equal(r->manage[0].done_reason, "SuccessfulCreate");
	assert_int_equal(r->nwrites, 1);
	claim = r->writes[0].body;
	assert_string_equal(json_string(json_path(claim, "metadata"), "name"), "www-web-0");
	assert_string_equal(json_string(json_path(claim, "metadata.labels"), "app"), "web");
	assert_string_equal(json_string(cJSON_GetArrayItem(json_path(claim,
	    "metadata.ownerReferences"), 0), "kind"), "StatefulSet");
	assert_true(r->writes[0].exists_ok);
	assert_string_equal(r->writes[0].done_message,
	    "Create Claim www-web-0 Pod web-0 in StatefulSet web success");
	ctl_world_free(w);
}

/* whenScaled Delete on a condemned pod: its claim's update adds the pod as controller. */
static void
condemned_claim_is_owned_by_its_pod(void **state)
{
	struct set_spec s = { 1, 0, 0, -1, 0, 1, 1, 0, "web-new" };
	struct ctl_world *w = world_new(&s, "0Rn 1Rn");
	const struct sync_result *r = &w->result;
	const cJSON *ref;

	(void)state;
	ctl_sync(w, "default/web", SYNC_NOW);
	assert_int_equal(r->nwrites, 1);
	assert_int_equal(r->writes[0].type, ACTION_UPDATE);
	ref = cJSON_GetArrayItem(json_path(r->writes[0].body, "metadata.ownerReferences"), 0);
	assert_string_equal(json_string(ref, "kind"), "Pod");
	assert_string_equal(json_string(ref, "name"), "web-1");
	assert_string_equal(json_string(ref, "uid"), "uid-web-1");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")));
	assert_string_equal(r->manage[0].done_message,
	    "Delete Pod web-1 in StatefulSet web successful");
	ctl_world_free(w);
}

/* kube's identityMatches: a pod whose pod-name label is gone gets it back, with its index
 * label, and kube's SuccessfulUpdate event. */
static void
lost_identity_label_is_restored(void **state)
{
	struct set_spec s = { 1, 0, 0, -1, 0, 0, 0, 0, "web-new" };
	struct ctl_world *w = world_new(&s, "");
	cJSON *pod = pod_from_token("0Rn");
	const struct sync_result *r = &w->result;
	const cJSON *labels;

	(void)state;
	cJSON_DeleteItemFromObjectCaseSensitive(json_child_object(json_child_object(pod,
	    "metadata"), "labels"), STATEFULSET_POD_NAME_LABEL);
	ctl_cache(w, resource_find("pods"), pod);
	ctl_sync(w, "default/web", SYNC_NOW);
	assert_int_equal(r->nwrites, 1);
	assert_int_equal(r->writes[0].type, ACTION_UPDATE);
	assert_string_equal(r->writes[0].name, "web-0");
	labels = json_path(r->writes[0].body, "metadata.labels");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels,
	    STATEFULSET_POD_NAME_LABEL)), "web-0");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(labels,
	    STATEFULSET_POD_INDEX_LABEL)), "0");
	assert_string_equal(r->writes[0].done_message,
	    "Update Pod web-0 in StatefulSet web successful");
	assert_int_equal(r->nmanage, 0);
	ctl_world_free(w);
}

/* The status: counts, revisions, observedGeneration; a rolling update whose pods are all
 * updated and ready is complete (kube's completeRollingUpdate). */
static const struct status_case {
	const char *name;
	struct set_spec set;
	const char *pods;
	int replicas, ready, current, updated;
	const char *current_revision;
} status_cases[] = {
	{ "counts of a rolling update under way", { 3, 0, 0, -1, 0, 0, 0, 0, NULL },
	    "0Ro 1Ro 2Nn", 3, 2, 2, 1, "web-old" },
	{ "a finished rolling update makes the update revision current",
	    { 3, 0, 0, -1, 0, 0, 0, 0, NULL }, "0Rn 1Rn 2Rn", 3, 3, 3, 3, "web-new" },
	{ "OnDelete keeps the current revision", { 3, 0, 1, -1, 0, 0, 0, 0, NULL },
	    "0Rn 1Rn 2Rn", 3, 3, 0, 3, "web-old" },
	{ "terminating pods count as replicas, not as current or updated",
	    { 3, 0, 0, -1, 0, 0, 0, 0, "web-new" }, "0Rn 1Rn 2Dn", 3, 3, 2, 2, "web-new" },
	{ "pending pods count as replicas", { 2, 0, 0, -1, 0, 0, 0, 0, "web-new" },
	    "0Rn 1Pn", 2, 1, 2, 2, "web-new" },
};

static void
status_case(void **state)
{
	const struct status_case *tc = *state;
	struct ctl_world *w = world_new(&tc->set, tc->pods);
	const cJSON *status;

	ctl_sync(w, "default/web", SYNC_NOW);
	assert_non_null(w->result.status);
	status = json_path(w->result.status->body, "status");
	assert_int_equal(json_int(status, "replicas", -1), tc->replicas);
	assert_int_equal(json_int(status, "readyReplicas", -1), tc->ready);
	assert_int_equal(json_int(status, "availableReplicas", -1), tc->ready);
	assert_int_equal(json_int(status, "currentReplicas", -1), tc->current);
	assert_int_equal(json_int(status, "updatedReplicas", -1), tc->updated);
	assert_int_equal(json_int(status, "observedGeneration", -1), 2);
	assert_int_equal(json_int(status, "collisionCount", -1), 0);
	assert_string_equal(json_string(status, "currentRevision"), tc->current_revision);
	assert_string_equal(json_string(status, "updateRevision"), "web-new");
	ctl_world_free(w);
}

/* minReadySeconds: a pod ready for less is not available, and OrderedReady waits on it. */
static void
min_ready_seconds_holds_the_next_pod(void **state)
{
	struct set_spec s = { 2, 0, 0, -1, 0, 0, 0, 0, "web-new" };
	struct ctl_world *w = ctl_world_new(&statefulset_controller_type, NULL);
	cJSON *set = set_new(&s);
	const cJSON *status;

	(void)state;
	json_set(json_child_object(set, "spec"), "minReadySeconds", cJSON_CreateNumber(3600));
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-new", "v2", 2));
	ctl_cache(w, resource_find("pods"), pod_from_token("0Rn"));
	ctl_cache(w, resource_find("statefulsets"), set);
	/* Ready since 00:00; now is 22:13 the same day: available. An hour after 00:00:
	 * not yet. */
	ctl_sync(w, "default/web", 1699920000.0 + 1800);
	assert_int_equal(w->result.nmanage, 0);
	status = json_path(w->result.status->body, "status");
	assert_int_equal(json_int(status, "readyReplicas", -1), 1);
	assert_int_equal(json_int(status, "availableReplicas", -1), 0);
	assert_true(w->result.requeue_after > 0);
	sync_result_clear(&w->result);
	ctl_sync(w, "default/web", SYNC_NOW);
	assert_int_equal(w->result.nmanage, 1);
	assert_string_equal(w->result.manage[0].name, "web-1");
	ctl_world_free(w);
}

/* No revision yet: one is created, numbered 1, named "<set>-<hash>" of its data, and is
 * both the current and the update revision; the pod carries its name. */
static void
first_sync_creates_the_revision(void **state)
{
	struct set_spec s = { 1, 0, 0, -1, 0, 0, 0, 0, "" };
	struct ctl_world *w = ctl_world_new(&statefulset_controller_type, NULL);
	const struct sync_result *r = &w->result;
	cJSON *set = set_new(&s), *data = cJSON_CreateObject(), *t;
	char *raw, *hash, *name;
	const cJSON *status;

	(void)state;
	t = cJSON_Duplicate(json_path(set, "spec.template"), 1);
	json_set(t, "$patch", cJSON_CreateString("replace"));
	cJSON_AddItemToObject(cJSON_AddObjectToObject(data, "spec"), "template", t);
	raw = history_canonical_json(data);
	hash = history_hash_revision(raw, strlen(raw), 0);
	name = history_revision_name("web", hash);
	ctl_cache(w, resource_find("statefulsets"), set);
	ctl_sync(w, "default/web", SYNC_NOW);
	assert_int_equal(r->nwrites, 1);
	assert_int_equal(r->writes[0].type, ACTION_CREATE);
	assert_string_equal(r->writes[0].name, name);
	assert_int_equal(json_int(r->writes[0].body, "revision", 0), 1);
	assert_string_equal(json_string(json_path(r->writes[0].body, "metadata.labels"),
	    HISTORY_HASH_LABEL), hash);
	assert_int_equal(r->nmanage, 1);
	assert_string_equal(json_string(json_path(r->manage[0].body, "metadata.labels"),
	    HISTORY_HASH_LABEL), name);
	status = json_path(r->status->body, "status");
	assert_string_equal(json_string(status, "currentRevision"), name);
	assert_string_equal(json_string(status, "updateRevision"), name);
	cJSON_Delete(data);
	free(raw);
	free(hash);
	free(name);
	ctl_world_free(w);
}

/* `kubectl rollout undo`: the template is an older revision's again; that revision is
 * renumbered past the newest and becomes the update revision; nothing new is created. */
static void
undo_renumbers_the_old_revision(void **state)
{
	struct set_spec s = { 2, 0, 0, -1, 0, 0, 0, 0, "web-new" };
	struct ctl_world *w = ctl_world_new(&statefulset_controller_type, NULL);
	const struct sync_result *r = &w->result;
	cJSON *set = set_new(&s);
	char *got;

	(void)state;
	json_set(json_child_object(set, "spec"), "template", template_new("v1"));
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-old", "v1", 1));
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-new", "v2", 2));
	ctl_cache(w, resource_find("pods"), pod_from_token("0Rn"));
	ctl_cache(w, resource_find("pods"), pod_from_token("1Rn"));
	ctl_cache(w, resource_find("statefulsets"), set);
	ctl_sync(w, "default/web", SYNC_NOW);
	got = describe(r);
	assert_described("undo", got, "update revision web-old, delete web-1");
	free(got);
	assert_int_equal(json_int(r->writes[0].body, "revision", 0), 3);
	assert_string_equal(json_string(json_path(r->status->body, "status"),
	    "updateRevision"), "web-old");
	ctl_world_free(w);
}

/* kube's truncateHistory: revisions no pod uses, neither current nor update, past
 * revisionHistoryLimit, oldest first. */
static void
history_is_truncated(void **state)
{
	struct set_spec s = { 1, 0, 0, -1, 0, 0, 0, 0, "web-new" };
	struct ctl_world *w = ctl_world_new(&statefulset_controller_type, NULL);
	cJSON *set = set_new(&s);
	char *got;

	(void)state;
	json_set(json_child_object(set, "spec"), "revisionHistoryLimit", cJSON_CreateNumber(1));
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-a", "va", 1));
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-b", "vb", 2));
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-c", "vc", 3));
	ctl_cache(w, resource_find("controllerrevisions"), revision_new("web-new", "v2", 4));
	ctl_cache(w, resource_find("pods"), pod_from_token("0Rn"));
	ctl_cache(w, resource_find("statefulsets"), set);
	ctl_sync(w, "default/web", SYNC_NOW);
	got = describe(&w->result);
	assert_described("truncate", got, "delete revision web-a, delete revision web-b");
	free(got);
	ctl_world_free(w);
}

/* Orphans named as the set's members and matched by its selector are adopted; others of
 * the namespace are not. */
static void
orphans_are_adopted_by_name_and_selector(void **state)
{
	struct set_spec s = { 2, 0, 0, -1, 0, 0, 0, 0, "web-new" };
	struct ctl_world *w = world_new(&s, "");
	cJSON *orphan = pod_from_token("0Rn"), *stranger = pod_from_token("1Rn");

	(void)state;
	cJSON_DeleteItemFromObjectCaseSensitive(json_child_object(orphan, "metadata"),
	    "ownerReferences");
	cJSON_DeleteItemFromObjectCaseSensitive(json_child_object(stranger, "metadata"),
	    "ownerReferences");
	json_set(json_child_object(stranger, "metadata"), "name", cJSON_CreateString("webx-1"));
	json_set(json_child_object(stranger, "metadata"), "uid", cJSON_CreateString("x"));
	ctl_cache(w, resource_find("pods"), orphan);
	ctl_cache(w, resource_find("pods"), stranger);
	ctl_sync(w, "default/web", SYNC_NOW);
	assert_int_equal(w->result.nclaims, 1);
	assert_string_equal(w->result.claims[0].verb, "adopt");
	assert_string_equal(w->result.claims[0].name, "web-0");
	assert_true(w->result.recheck_owner);
	assert_int_equal(w->result.nmanage, 1);
	assert_string_equal(w->result.manage[0].name, "web-1");
	ctl_world_free(w);
}

/* A pod the set controls whose name is not one of the set's is released (kube's ClaimPods
 * with its isMemberOf filter), not counted, and its ordinal made anew. */
static void
misnamed_pods_are_released(void **state)
{
	struct set_spec s = { 2, 0, 0, -1, 0, 0, 0, 0, "web-new" };
	struct ctl_world *w = world_new(&s, "");
	cJSON *misnamed = pod_from_token("1Rn");

	(void)state;
	json_set(json_child_object(misnamed, "metadata"), "name", cJSON_CreateString("webx-1"));
	json_set(json_child_object(misnamed, "metadata"), "uid", cJSON_CreateString("x"));
	ctl_cache(w, resource_find("pods"), pod_from_token("0Rn"));
	ctl_cache(w, resource_find("pods"), misnamed);
	ctl_sync(w, "default/web", SYNC_NOW);
	assert_int_equal(w->result.nclaims, 1);
	assert_string_equal(w->result.claims[0].verb, "release");
	assert_string_equal(w->result.claims[0].name, "webx-1");
	assert_non_null(strstr(w->result.claims[0].reason, "name"));
	assert_int_equal(w->result.nmanage, 1);
	assert_string_equal(w->result.manage[0].name, "web-1");
	ctl_world_free(w);
}

/* Parallel: a missing pod is created first; the rolling update's deletion of an old one
 * waits for the next sync, and so does its count out of currentReplicas. */
static void
current_replicas_count_only_sent_deletions(void **state)
{
	struct set_spec s = { 3, 1, 0, 0, 0, 0, 0, 0, "web-old" };
	struct ctl_world *w = world_new(&s, "1Rn 2Ro");
	char *got;

	(void)state;
	ctl_sync(w, "default/web", SYNC_NOW);
	got = describe(&w->result);
	assert_described("parallel", got, "create web-0@web-new");
	free(got);
	assert_int_equal(json_int(json_path(w->result.status->body, "status"),
	    "currentReplicas", -1), 1);
	ctl_world_free(w);
}

/* Expectations: the creation planned holds the next sync back until it is observed. */
static void
expectations_hold_a_second_creation(void **state)
{
	struct set_spec s = { 3, 1, 0, -1, 0, 0, 0, 0, "web-new" };
	struct ctl_world *w = world_new(&s, "");
	char *error = NULL;
	const char *keys[1] = { NULL };

	(void)state;
	assert_int_equal(expectations_expect(w->c->expectations, "default/web", 3, keys, 0,
	    SYNC_NOW, &error), 0);
	ctl_sync(w, "default/web", SYNC_NOW);
	assert_int_equal(w->result.nmanage, 0);
	assert_non_null(w->result.waiting);
	ctl_world_free(w);
}

/* The view statefulset_ordinals: each ordinal's state. */
static void
ordinals_view(void **state)
{
	struct set_spec s = { 4, 0, 0, -1, 0, 0, 0, 0, NULL };
	struct ctl_world *w = world_new(&s, "0Rn 1Ro 2Nn 5Rn");
	sqlite3_stmt *stmt;
	struct buf b = { 0 };

	(void)state;
	assert_int_equal(sqlite3_prepare_v2(store_db(w->store), "SELECT ordinal, state, current,"
	    " updated FROM statefulset_ordinals WHERE statefulset = 'web' ORDER BY ordinal", -1,
	    &stmt, NULL), SQLITE_OK);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&b, "%d:%s:%d%d ", sqlite3_column_int(stmt, 0),
		    sqlite3_column_text(stmt, 1), sqlite3_column_int(stmt, 2),
		    sqlite3_column_int(stmt, 3));
	sqlite3_finalize(stmt);
	assert_string_equal(b.data, "0:ok:01 1:outdated:10 2:not-ready:01 3:missing:00 "
	    "5:condemned:01 ");
	free(b.data);
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(ordinal_cases) + NELEM(owner_cases) + NELEM(sync_cases) +
	    NELEM(status_cases) + NELEM(max_unavailable_cases) + 21];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(ordinal_cases); i++)
		tests[n++] = (struct CMUnitTest){ ordinal_cases[i].pod, ordinal_case, NULL, NULL,
		    (void *)&ordinal_cases[i] };
	for (size_t i = 0; i < NELEM(owner_cases); i++)
		tests[n++] = (struct CMUnitTest){ owner_cases[i].name, owner_case, NULL, NULL,
		    (void *)&owner_cases[i] };
	tests[n++] = (struct CMUnitTest){ "another controller of a claim is left alone",
	    another_controller_is_left_alone, NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(sync_cases); i++)
		tests[n++] = (struct CMUnitTest){ sync_cases[i].name, sync_case, NULL, NULL,
		    (void *)&sync_cases[i] };
	tests[n++] = (struct CMUnitTest){ "a pending pod's missing claim is created",
	    missing_claim_of_a_pending_pod_is_created, NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(max_unavailable_cases); i++)
		tests[n++] = (struct CMUnitTest){ max_unavailable_cases[i].terminating[0] != '\0' ?
		    max_unavailable_cases[i].terminating : "maxUnavailable, none terminating",
		    max_unavailable_case, NULL, NULL, (void *)&max_unavailable_cases[i] };
	tests[n++] = (struct CMUnitTest){ "a malformed --feature-gates is refused",
	    bad_feature_gates_refused, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a claim being deleted fails the pod's creation",
	    claim_being_deleted_fails_the_creation, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the pod and claim made are kube's",
	    created_pod_and_claim_are_kubes, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a condemned pod owns its claim (whenScaled Delete)",
	    condemned_claim_is_owned_by_its_pod, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a lost identity label is restored",
	    lost_identity_label_is_restored, NULL, NULL, NULL };
	for (size_t i = 0; i < NELEM(status_cases); i++)
		tests[n++] = (struct CMUnitTest){ status_cases[i].name, status_case, NULL, NULL,
		    (void *)&status_cases[i] };
	tests[n++] = (struct CMUnitTest){ "minReadySeconds holds the next pod back",
	    min_ready_seconds_holds_the_next_pod, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the first sync creates the revision",
	    first_sync_creates_the_revision, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "an undo renumbers the old revision",
	    undo_renumbers_the_old_revision, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the history is truncated", history_is_truncated,
	    NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "orphans are adopted by name and selector",
	    orphans_are_adopted_by_name_and_selector, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "misnamed pods of the set are released",
	    misnamed_pods_are_released, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "currentReplicas counts only sent deletions",
	    current_replicas_count_only_sent_deletions, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "expectations hold a second creation back",
	    expectations_hold_a_second_creation, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the view statefulset_ordinals", ordinals_view, NULL,
	    NULL, NULL };
	return _cmocka_run_group_tests("statefulset", tests, n, NULL, NULL);
}
