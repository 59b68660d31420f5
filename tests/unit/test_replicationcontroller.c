/*
 * test_replicationcontroller.c - kube's replicationcontroller controller is its ReplicaSet
 * controller over converted objects; so is sqlkcm's. These cases check what the
 * conversion changes: the map selector, the owner references and events naming a
 * ReplicationController, a status without terminatingReplicas, and that pods of a
 * ReplicaSet with the same name are not a ReplicationController's.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller.h"
#include "controllers/replicaset.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

#include "fixtures.h"

/* A fixture whose controller is a replicationcontroller one. */
static int
setup(void **state)
{
	struct fixture *f = fixture_new();
	char *error = NULL;

	controller_free(f->c);
	f->c = controller_new(&replicationcontroller_controller_type, f->store, NULL, &error);
	if (f->c == NULL)
		fail_msg("controller_new: %s", error);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	fixture_free(*state);
	return 0;
}

/* A ReplicationController foobar in default with a map selector {foo: bar}. */
static void
add_rc(struct fixture *f, int replicas, const char *status)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\","
	    "\"metadata\":{\"name\":\"foobar\",\"namespace\":\"default\",\"uid\":\"uid-foobar\","
	    "\"resourceVersion\":\"18\",\"generation\":2},"
	    "\"spec\":{\"replicas\":%d,\"selector\":{\"foo\":\"bar\"},"
	    "\"template\":{\"metadata\":{\"labels\":{\"foo\":\"bar\",\"tier\":\"web\"}},"
	    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}}%s%s}",
	    replicas, status != NULL ? ",\"status\":" : "", status != NULL ? status : "");

	fixture_upsert(f, resource_find("replicationcontrollers"), fixture_parse(text));
	free(text);
}

/* The owner references of a pod controlled by the ReplicationController foobar. */
#define RC_OWNER "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\"," \
	"\"name\":\"foobar\",\"uid\":\"uid-foobar\",\"controller\":true," \
	"\"blockOwnerDeletion\":true}]"

static void
the_map_selector_is_stored_as_a_label_selector(void **state)
{
	struct fixture *f = *state;
	sqlite3_stmt *stmt;

	add_rc(f, 1, NULL);
	assert_int_equal(sqlite3_prepare_v2(store_db(f->store), "SELECT selector FROM "
	    "cache_replicationcontrollers WHERE name = 'foobar'", -1, &stmt, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(stmt, 0),
	    "{\"matchLabels\":{\"foo\":\"bar\"}}");
	sqlite3_finalize(stmt);
}

static void
pods_are_created_owned_by_the_replicationcontroller(void **state)
{
	struct fixture *f = *state;
	struct sync_result r;
	cJSON *expected = fixture_parse(RC_OWNER);

	add_rc(f, 3, NULL);
	sync_key(f, KEY, NOW, &r);
	assert_int_equal(r.nmanage, 3);
	assert_true(r.creating);
	assert_string_equal(r.owner_resource->name, "replicationcontrollers");
	assert_string_equal(r.manage[0].resource->name, "pods");
	assert_string_equal(json_string(json_path(r.manage[0].body, "metadata"),
	    "generateName"), "foobar-");
	assert_true(cJSON_Compare(json_path(r.manage[0].body, "metadata.ownerReferences"),
	    expected, 1));
	assert_string_equal(r.manage[0].done_reason, "SuccessfulCreate");
	cJSON_Delete(expected);
	sync_result_clear(&r);
}

static void
extra_pods_are_deleted_and_the_status_has_no_terminating_replicas(void **state)
{
	struct fixture *f = *state;
	struct sync_result r;
	const char *names[] = { "a", "b", "c" };

	add_rc(f, 1, "{\"replicas\":3}");
	for (size_t i = 0; i < NELEM(names); i++)
		add_pod(f, &(struct pod){ .name = names[i], .owners = RC_OWNER,
		    .phase = "Running", .owner_uid = "uid-foobar" });
	/* One of them is already going: counted by a ReplicaSet as terminating. */
	add_pod(f, &(struct pod){ .name = "d", .owners = RC_OWNER, .phase = "Running",
	    .deleting = NOW - 1 });
	sync_key(f, KEY, NOW, &r);
	assert_int_equal(r.nmanage, 2);
	assert_false(r.creating);
	assert_non_null(r.status);
	assert_string_equal(r.status->resource->name, "replicationcontrollers");
	assert_int_equal(json_int(json_path(r.status->body, "status"), "replicas", -1), 3);
	assert_null(json_path(r.status->body, "status.terminatingReplicas"));
	assert_int_equal(json_int(json_path(r.status->body, "status"), "observedGeneration",
	    -1), 2);
	sync_result_clear(&r);
}

static void
an_orphan_the_map_selector_matches_is_adopted(void **state)
{
	struct fixture *f = *state;
	struct sync_result r;
	char *patch;

	add_rc(f, 1, NULL);
	add_pod(f, &(struct pod){ .name = "orphan", .phase = "Running" });
	add_pod(f, &(struct pod){ .name = "other", .labels = "{\"foo\":\"baz\"}",
	    .phase = "Running" });
	sync_key(f, KEY, NOW, &r);
	assert_int_equal(r.nclaims, 1);
	assert_string_equal(r.claims[0].name, "orphan");
	assert_true(r.recheck_owner);
	patch = cJSON_PrintUnformatted(r.claims[0].body);
	assert_non_null(strstr(patch, "\"kind\":\"ReplicationController\""));
	assert_non_null(strstr(patch, "\"uid\":\"uid-foobar\""));
	free(patch);
	/* The orphan is claimed: nothing to create. */
	assert_int_equal(r.nmanage, 0);
	sync_result_clear(&r);
}

/* kube compares the controller reference's kind: a pod whose controller is a ReplicaSet
 * of the same name and uid is not the ReplicationController's. */
static void
a_pod_of_a_replicaset_is_not_counted(void **state)
{
	struct fixture *f = *state;
	struct sync_result r;

	add_rc(f, 1, NULL);
	add_pod(f, &(struct pod){ .name = "rs-pod", .phase = "Running",
	    .owners = "[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"foobar\","
	    "\"uid\":\"uid-foobar\",\"controller\":true}]" });
	sync_key(f, KEY, NOW, &r);
	assert_int_equal(r.nclaims, 0);
	assert_int_equal(r.nmanage, 1);
	assert_true(r.creating);
	sync_result_clear(&r);
}

static void
a_gone_replicationcontroller_forgets_its_expectations(void **state)
{
	struct fixture *f = *state;
	struct sync_result r;

	sync_key(f, KEY, NOW, &r);
	assert_true(r.forget_expectations);
	assert_int_equal(r.nmanage, 0);
	sync_result_clear(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(the_map_selector_is_stored_as_a_label_selector,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(pods_are_created_owned_by_the_replicationcontroller,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    extra_pods_are_deleted_and_the_status_has_no_terminating_replicas, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(an_orphan_the_map_selector_matches_is_adopted,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(a_pod_of_a_replicaset_is_not_counted, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(a_gone_replicationcontroller_forgets_its_expectations,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
