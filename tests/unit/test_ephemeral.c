/*
 * test_ephemeral.c - the ephemeral volume controller: kube v1.36.3's TestSyncHandler rows
 * as data (a failed creation's counting is the executor's: here, that the creation carries
 * kube's two counters and its FailedBinding words), then the claim made from the
 * template, the handlers' queueing and the view ephemeral_volume_claims.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controllers/ephemeral.h"
#include "fixtures.h"
#include "json.h"
#include "metrics.h"
#include "resource.h"
#include "store.h"
#include "util.h"

#define NELEM(a) (sizeof (a) / sizeof (a)[0])

#define POD_KEY "my-namespace/test-pod"
#define CLAIM "test-pod-ephemeral-volume"

/* The pod: test-pod in my-namespace, uid uidpod1, with the volumes of JSON volumes. */
static cJSON *
pod(const char *volumes, int deleted)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
	    "\"name\":\"test-pod\",\"namespace\":\"my-namespace\",\"uid\":\"uidpod1\","
	    "\"resourceVersion\":\"1\"%s},\"spec\":{\"containers\":[{\"name\":\"c\"}],"
	    "\"volumes\":%s}}", deleted ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" :
	    "", volumes);
	cJSON *p = fixture_parse(text);

	free(text);
	return p;
}

#define EPHEMERAL(name) "{\"name\":\"" name "\",\"ephemeral\":{\"volumeClaimTemplate\":" \
	"{\"spec\":{}}}}"

/* A claim name in namespace, controlled by owner_uid (NULL: no owner). */
static cJSON *
claim(const char *name, const char *namespace, const char *owner_uid)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"uid-%s-%s\","
	    "\"resourceVersion\":\"1\"%s%s%s},\"spec\":{}}", name, namespace, namespace, name,
	    owner_uid != NULL ? ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"name\":\"test-pod\",\"controller\":true,\"uid\":\"" : "",
	    owner_uid != NULL ? owner_uid : "", owner_uid != NULL ? "\"}]" : "");
	cJSON *c = fixture_parse(text);

	free(text);
	return c;
}

static const struct sync_case {
	const char *name;
	const char *volumes;		/* the pod's, or NULL: no pod */
	int deleted;
	const char *claim_ns;		/* a cached claim test-pod-ephemeral-volume here */
	const char *claim_owner;	/* its controller's uid, or NULL */
	int want_create;
	int want_error;			/* a FailedBinding event, the sync failed */
} sync_cases[] = {
	{ "create", "[" EPHEMERAL("ephemeral-volume") "]", 0, NULL, NULL, 1, 0 },
	{ "no-such-pod", NULL, 0, NULL, NULL, 0, 0 },
	{ "pod-deleted", "[" EPHEMERAL("ephemeral-volume") "]", 1, NULL, NULL, 0, 0 },
	{ "no-volumes", "[]", 0, NULL, NULL, 0, 0 },
	{ "create-with-other-PVC", "[" EPHEMERAL("ephemeral-volume") "]", 0,
	    "not-my-namespace", NULL, 1, 0 },
	{ "wrong-PVC-owner", "[" EPHEMERAL("ephemeral-volume") "]", 0, "my-namespace", NULL,
	    0, 1 },
	/* Beyond kube's table. */
	{ "PVC owned by another pod", "[" EPHEMERAL("ephemeral-volume") "]", 0,
	    "my-namespace", "uid-other", 0, 1 },
	{ "PVC already created", "[" EPHEMERAL("ephemeral-volume") "]", 0, "my-namespace",
	    "uidpod1", 0, 0 },
	{ "a persistentVolumeClaim volume is not ephemeral",
	    "[{\"name\":\"ephemeral-volume\",\"persistentVolumeClaim\":{\"claimName\":\"x\"}}]",
	    0, NULL, NULL, 0, 0 },
};

static void
sync_case(void **state)
{
	const struct sync_case *r = *state;
	struct metrics_registry *registry = metrics_registry_new();
	struct controller_config config = { .metrics = registry };
	struct ctl_world *w = ctl_world_new(&ephemeral_controller_type, &config);

	if (r->volumes != NULL)
		ctl_cache(w, resource_find("pods"), pod(r->volumes, r->deleted));
	if (r->claim_ns != NULL)
		ctl_cache(w, resource_find("persistentvolumeclaims"),
		    claim(CLAIM, r->claim_ns, r->claim_owner));
	ctl_sync(w, POD_KEY, 0);
	assert_int_equal(w->result.nwrites, r->want_create);
	assert_int_equal(w->result.failed, r->want_error);
	assert_int_equal(w->result.nevents, r->want_error);
	if (r->want_error) {
		assert_string_equal(w->result.events[0].type, "Warning");
		assert_string_equal(w->result.events[0].reason, "FailedBinding");
		assert_string_equal(w->result.events[0].message, "ephemeral volume "
		    "ephemeral-volume: PVC my-namespace/" CLAIM " was not created for pod "
		    "my-namespace/test-pod (pod is not owner)");
	}
	if (r->want_create) {
		const struct action *a = &w->result.writes[0];
		struct buf text;

		assert_int_equal(a->type, ACTION_CREATE);
		assert_string_equal(a->namespace, "my-namespace");
		assert_string_equal(a->name, CLAIM);
		assert_string_equal(json_string(a->body, "metadata.name"), CLAIM);
		/* create-conflict: a failed creation is kube's FailedBinding, and counts as
		 * an attempt and a failure; a done one as an attempt. */
		assert_string_equal(a->failed_reason, "FailedBinding");
		assert_string_equal(a->failed_message, "ephemeral volume ephemeral-volume: "
		    "create PVC " CLAIM ": ");
		metrics_counter_add(a->count_failed[0], 1);
		metrics_counter_add(a->count_failed[1], 1);
		metrics_counter_add(a->count_done, 1);
		buf_init(&text);
		metrics_render(registry, &text);
		assert_non_null(strstr(text.data, "ephemeral_volume_controller_create_total 2\n"));
		assert_non_null(strstr(text.data,
		    "ephemeral_volume_controller_create_failures_total 1\n"));
		buf_free(&text);
	}
	ctl_world_free(w);
	metrics_registry_free(registry);
}

/* The claim is the template's labels, annotations and spec, the pod its controller. */
static void
claim_from_template(void **state)
{
	cJSON *p = pod("[{\"name\":\"scratch\",\"ephemeral\":{\"volumeClaimTemplate\":{"
	    "\"metadata\":{\"labels\":{\"a\":\"1\"},\"annotations\":{\"b\":\"2\"},"
	    "\"name\":\"ignored\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
	    "\"storageClassName\":\"fast\",\"resources\":{\"requests\":{\"storage\":"
	    "\"1Gi\"}}}}}}]", 0);
	const cJSON *v = cJSON_GetArrayItem(json_path(p, "spec.volumes"), 0);
	cJSON *c = ephemeral_claim_new(p, v);
	char *text = cJSON_PrintUnformatted(c);

	(void)state;
	assert_string_equal(text, "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
	    "\"metadata\":{\"name\":\"test-pod-scratch\",\"namespace\":\"my-namespace\","
	    "\"labels\":{\"a\":\"1\"},\"annotations\":{\"b\":\"2\"},\"ownerReferences\":[{"
	    "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"test-pod\",\"uid\":\"uidpod1\","
	    "\"controller\":true,\"blockOwnerDeletion\":true}]},\"spec\":{\"accessModes\":["
	    "\"ReadWriteOnce\"],\"storageClassName\":\"fast\",\"resources\":{\"requests\":{"
	    "\"storage\":\"1Gi\"}}}}");
	assert_true(ephemeral_claim_is_for_pod(c, p));
	cJSON_free(text);
	cJSON_Delete(c);
	cJSON_Delete(p);
}

/* Volumes in the pod's order: a foreign claim stops the sync before the next volume. */
static void
stops_at_the_first_foreign_claim(void **state)
{
	struct ctl_world *w = ctl_world_new(&ephemeral_controller_type, NULL);

	(void)state;
	ctl_cache(w, resource_find("pods"), pod("[" EPHEMERAL("a") "," EPHEMERAL("b") ","
	    EPHEMERAL("c") "]", 0));
	ctl_cache(w, resource_find("persistentvolumeclaims"),
	    claim("test-pod-b", "my-namespace", NULL));
	ctl_sync(w, POD_KEY, 0);
	assert_int_equal(w->result.nwrites, 1);
	assert_string_equal(w->result.writes[0].name, "test-pod-a");
	assert_int_equal(w->result.failed, 1);
	ctl_world_free(w);
}

/* Queued: a pod added with an ephemeral volume, not being deleted; the pods whose claim
 * was deleted. Not: a pod's update, a claim's addition. */
static void
handlers_queue(void **state)
{
	struct ctl_world *w = ctl_world_new(&ephemeral_controller_type, NULL);
	const struct resource *pods = resource_find("pods");
	const struct resource *claims = resource_find("persistentvolumeclaims");
	char *keys;

	(void)state;
	ctl_tell(w, INFORMER_ADDED, pods, pod("[]", 0), NULL);
	ctl_tell(w, INFORMER_ADDED, pods, pod("[" EPHEMERAL("v") "]", 1), NULL);
	ctl_tell(w, INFORMER_UPDATED, pods, pod("[" EPHEMERAL("v") "]", 0),
	    pod("[" EPHEMERAL("v") "]", 0));
	assert_string_equal(keys = ctl_keys(w), "");
	free(keys);
	ctl_tell(w, INFORMER_ADDED, pods, pod("[" EPHEMERAL("v") "]", 0), NULL);
	assert_string_equal(keys = ctl_keys(w), POD_KEY);
	free(keys);
	ctl_keys_clear(w);
	ctl_cache(w, pods, pod("[" EPHEMERAL("v") "]", 0));
	ctl_tell(w, INFORMER_ADDED, claims, claim("test-pod-v", "my-namespace", "uidpod1"),
	    NULL);
	ctl_tell(w, INFORMER_DELETED, claims, claim("test-pod-w", "my-namespace", "uidpod1"),
	    NULL);
	assert_string_equal(keys = ctl_keys(w), "");
	free(keys);
	ctl_tell(w, INFORMER_DELETED, claims, claim("test-pod-v", "my-namespace", "uidpod1"),
	    NULL);
	assert_string_equal(keys = ctl_keys(w), POD_KEY);
	free(keys);
	ctl_keys_clear(w);
	/* kube's pod-pvc index also holds a persistentVolumeClaim volume's claim: a pod with
	 * an ephemeral volume that names the claim deleted is queued; one without none is. */
	ctl_cache(w, pods, fixture_parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"metadata\":{\"name\":\"named\",\"namespace\":\"my-namespace\",\"uid\":"
	    "\"uidpod2\",\"resourceVersion\":\"1\"},\"spec\":{\"volumes\":["
	    EPHEMERAL("v") ",{\"name\":\"s\",\"persistentVolumeClaim\":{\"claimName\":"
	    "\"shared\"}}]}}"));
	ctl_cache(w, pods, fixture_parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"metadata\":{\"name\":\"plain\",\"namespace\":\"my-namespace\",\"uid\":"
	    "\"uidpod3\",\"resourceVersion\":\"1\"},\"spec\":{\"volumes\":["
	    "{\"name\":\"s\",\"persistentVolumeClaim\":{\"claimName\":\"shared\"}}]}}"));
	ctl_tell(w, INFORMER_DELETED, claims, claim("shared", "my-namespace", NULL), NULL);
	assert_string_equal(keys = ctl_keys(w), "my-namespace/named");
	free(keys);
	ctl_world_free(w);
}

/* The view shows each ephemeral volume's claim, whether it exists and is the pod's. */
static void
view_shows_the_claims(void **state)
{
	struct ctl_world *w = ctl_world_new(&ephemeral_controller_type, NULL);
	sqlite3_stmt *stmt;
	struct buf got;

	(void)state;
	ctl_cache(w, resource_find("pods"), pod("[" EPHEMERAL("a") "," EPHEMERAL("b") ","
	    "{\"name\":\"e\",\"emptyDir\":{}}," EPHEMERAL("c") "]", 0));
	ctl_cache(w, resource_find("persistentvolumeclaims"),
	    claim("test-pod-a", "my-namespace", "uidpod1"));
	ctl_cache(w, resource_find("persistentvolumeclaims"),
	    claim("test-pod-b", "my-namespace", "uid-other"));
	assert_int_equal(sqlite3_prepare_v2(store_db(w->store), "SELECT volume, claim,"
	    " claim_exists, owned_by_pod FROM ephemeral_volume_claims ORDER BY volume", -1,
	    &stmt, NULL), SQLITE_OK);
	buf_init(&got);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&got, "%s %s %d %d;", sqlite3_column_text(stmt, 0),
		    sqlite3_column_text(stmt, 1), sqlite3_column_int(stmt, 2),
		    sqlite3_column_int(stmt, 3));
	sqlite3_finalize(stmt);
	assert_string_equal(got.data, "a test-pod-a 1 1;b test-pod-b 1 0;c test-pod-c 0 0;");
	buf_free(&got);
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(sync_cases) + 4];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(sync_cases); i++)
		tests[n++] = (struct CMUnitTest){ sync_cases[i].name, sync_case, NULL, NULL,
		    (void *)&sync_cases[i] };
	tests[n++] = (struct CMUnitTest){ "the claim made from the template",
	    claim_from_template, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a foreign claim stops the sync",
	    stops_at_the_first_foreign_claim, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "what the handlers queue", handlers_queue, NULL,
	    NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the view ephemeral_volume_claims",
	    view_shows_the_claims, NULL, NULL, NULL };
	return _cmocka_run_group_tests("ephemeral", tests, n, NULL, NULL);
}
