/*
 * test_expectations.c - a controller's bookkeeping in the store: expectations (what it
 * asked for and has not yet seen) and the resourceVersions of its own writes.
 *
 * The case tables are kube-controller-manager's TestControllerExpectations and
 * TestUIDExpectations (pkg/controller/controller_utils_test.go), the consistency store's
 * tests (pkg/controller/util/consistency/consistency_test.go) and apimachinery's
 * TestCompareResourceVersion, as data, against an in-memory store. Times are the `now`
 * each call is given, and the set_at the store keeps.
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

#include "consistency.h"
#include "expectations.h"
#include "resource.h"
#include "store.h"
#include "util.h"

#define NOW 1767225600.0	/* 2026-01-01T00:00:00Z */
#define KEY "default/foobar"

struct fixture {
	struct store *store;
	struct expectations *e;
	struct consistency *w;
};

/* An in-memory store with the replicaset controller's expectations and write log. */
static int
setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof *f);
	char *error = NULL;

	if (store_open(":memory:", NULL, &f->store, &error) != 0)
		return 1;
	f->e = expectations_new(store_db(f->store), "replicaset", &error);
	f->w = consistency_new(store_db(f->store), "replicaset", &error);
	if (f->e == NULL || f->w == NULL)
		return 1;
	*state = f;
	return 0;
}

/* Frees the fixture. */
static int
teardown(void **state)
{
	struct fixture *f = *state;

	expectations_free(f->e);
	consistency_free(f->w);
	store_close(f->store);
	free(f);
	return 0;
}

/* --- expectations ---------------------------------------------------------------------- */

/* Returns whether key's expectations are satisfied at now. */
static int
satisfied(struct fixture *f, const char *key, double now)
{
	char *error = NULL;
	int ok = -1;

	assert_int_equal(expectations_satisfied(f->e, key, now, &ok, &error), 0);
	return ok;
}

/* Asserts key's counters. */
static void
assert_counts(struct fixture *f, const char *key, long long adds, long long deletes)
{
	long long a = 0, d = 0;
	int found;
	char *error = NULL;

	assert_int_equal(expectations_get(f->e, key, &found, &a, &d, NULL, &error), 0);
	assert_true(found);
	assert_int_equal(a, adds);
	assert_int_equal(d, deletes);
}

/* Sets key's expectations to adds creations and the deletions of n pods named
 * "default/<prefix><i>". */
static void
expect(struct fixture *f, const char *key, int adds, const char *prefix, int n, double now)
{
	char **keys = xcalloc((size_t)n + 1, sizeof *keys);
	char *error = NULL;

	for (int i = 0; i < n; i++)
		keys[i] = xasprintf("default/%s%d", prefix, i);
	assert_int_equal(expectations_expect(f->e, key, adds, (const char *const *)keys, n,
	    now, &error), 0);
	for (int i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
}

/* Tells key's expectations that pod_key was deleted. */
static void
observe_deletion(struct fixture *f, const char *key, const char *pod_key)
{
	char *error = NULL;

	assert_int_equal(expectations_deletion_observed(f->e, key, pod_key, &error), 0);
}

/* Tells key's expectations that one of its pods appeared. */
static void
observe_creation(struct fixture *f, const char *key)
{
	char *error = NULL;

	assert_int_equal(expectations_creation_observed(f->e, key, &error), 0);
}

/*
 * TestControllerExpectations, step by step. kube's test uses plain (count-only)
 * expectations, where the 31st DeletionObserved takes deletes to -1; sqlkcm's are
 * UID-tracking (as the ReplicaSet controller's are), where observing a pod that is no
 * longer tracked lowers nothing, so deletes stops at 0. Satisfied is the same.
 */
static void
expectations_follow_creations_and_deletions_observed(void **state)
{
	struct fixture *f = *state;
	char pod_key[64];

	/* 1. Set(add 10, del 30). */
	expect(f, KEY, 10, "pod", 30, NOW);
	assert_counts(f, KEY, 10, 30);
	assert_false(satisfied(f, KEY, NOW));
	/* 2. CreationObserved x 11: adds below zero, deletions still pending. */
	for (int i = 0; i < 11; i++)
		observe_creation(f, KEY);
	assert_counts(f, KEY, -1, 30);
	assert_false(satisfied(f, KEY, NOW));
	/* 3. DeletionObserved x 31 (the last one of a pod seen already). */
	for (int i = 0; i < 31; i++) {
		snprintf(pod_key, sizeof pod_key, "default/pod%d", i < 30 ? i : 0);
		observe_deletion(f, KEY, pod_key);
	}
	assert_counts(f, KEY, -1, 0);
	assert_true(satisfied(f, KEY, NOW));
	/* 4. Set(1, 2) replaces them. */
	expect(f, KEY, 1, "other", 2, NOW + 10);
	assert_counts(f, KEY, 1, 2);
	assert_false(satisfied(f, KEY, NOW + 10));
	/* 5. Past the TTL they no longer hold the sync back. */
	assert_true(satisfied(f, KEY, NOW + 10 + EXPECTATIONS_TIMEOUT + 1));
}

/* Expired means strictly older than the timeout, measured from set_at (kube's isExpired:
 * now - timestamp > ExpectationsTimeout); observations do not move set_at. */
static void
expectations_expire_strictly_after_the_timeout_from_when_they_were_set(void **state)
{
	static const struct {
		double age;
		int satisfied;
	} cases[] = {
		{ 0, 0 }, { 1, 0 }, { EXPECTATIONS_TIMEOUT - 1, 0 }, { EXPECTATIONS_TIMEOUT, 0 },
		{ EXPECTATIONS_TIMEOUT + 0.5, 1 }, { EXPECTATIONS_TIMEOUT + 3600, 1 },
	};
	struct fixture *f = *state;
	double set_at = 0;
	long long a, d;
	int found;
	char *error = NULL;

	assert_int_equal(EXPECTATIONS_TIMEOUT, 300);
	expect(f, KEY, 2, "pod", 0, NOW);
	observe_creation(f, KEY);
	assert_int_equal(expectations_get(f->e, KEY, &found, &a, &d, &set_at, &error), 0);
	assert_true(set_at == NOW);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (satisfied(f, KEY, NOW + cases[i].age) != cases[i].satisfied)
			fail_msg("age %g: want satisfied=%d", cases[i].age, cases[i].satisfied);
	}
}

/* The number of pod keys key waits to see deleted. */
static long long
pod_keys_waited_for(struct fixture *f, const char *key)
{
	sqlite3_stmt *stmt;
	long long n;

	assert_int_equal(sqlite3_prepare_v2(store_db(f->store),
	    "SELECT count(*) FROM expected_deletions WHERE key = ?1", -1, &stmt, NULL),
	    SQLITE_OK);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	n = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	return n;
}

/* TestUIDExpectations: four controllers sharing one expectations store, each waiting for
 * the deletion of its own five pods; only their own pods' deletions satisfy them. */
static void
uid_expectations_are_satisfied_by_their_own_pods_deletions(void **state)
{
	static const int controllers[] = { 2, 1, 0, 5 };
	struct fixture *f = *state;
	char key[32], prefix[32], pod_key[64], *error = NULL;

	for (size_t c = 0; c < 4; c++) {
		snprintf(key, sizeof key, "default/rc-%d", controllers[c]);
		snprintf(prefix, sizeof prefix, "pod-rc-%d-", controllers[c]);
		expect(f, key, 0, prefix, 5, NOW);
		assert_false(satisfied(f, key, NOW));
	}
	for (size_t c = 0; c < 4; c++) {
		snprintf(key, sizeof key, "default/rc-%d", controllers[c]);
		for (int i = 0; i < 5; i++) {
			assert_false(satisfied(f, key, NOW));
			snprintf(pod_key, sizeof pod_key, "default/pod-rc-%d-%d", controllers[c],
			    i);
			observe_deletion(f, key, pod_key);
		}
		assert_true(satisfied(f, key, NOW));
		assert_int_equal(expectations_delete(f->e, key, &error), 0);
		/* GetUIDs returns nothing afterwards. */
		assert_int_equal(pod_keys_waited_for(f, key), 0);
	}
}

/* A deletion observed for a pod the key does not wait for lowers nothing (kube's
 * UIDTrackingControllerExpectations.DeletionObserved), nor does it for another key. */
static void
deletion_of_an_untracked_pod_lowers_nothing(void **state)
{
	struct fixture *f = *state;

	expect(f, KEY, 0, "pod", 2, NOW);
	observe_deletion(f, KEY, "default/stranger");
	observe_deletion(f, "default/other", "default/pod0");
	observe_deletion(f, KEY, "other/pod0");
	assert_counts(f, KEY, 0, 2);
	observe_deletion(f, KEY, "default/pod0");
	observe_deletion(f, KEY, "default/pod0");
	assert_counts(f, KEY, 0, 1);
	assert_false(satisfied(f, KEY, NOW));
}

/* ExpectDeletions builds a set of pod keys: a key given twice is waited for once (kube:
 * the record's del is the size of the set). */
static void
expecting_the_same_pod_twice_waits_for_it_once(void **state)
{
	static const char *const keys[] = { "default/a", "default/b", "default/a" };
	struct fixture *f = *state;
	char *error = NULL;

	assert_int_equal(expectations_expect(f->e, KEY, 0, keys, 3, NOW, &error), 0);
	assert_counts(f, KEY, 0, 2);
	observe_deletion(f, KEY, "default/a");
	observe_deletion(f, KEY, "default/b");
	assert_true(satisfied(f, KEY, NOW));
}

/* With no record, Lower is a no-op and Satisfied is true (a new owner, or one whose
 * expectations were dropped). */
static void
observations_without_expectations_change_nothing(void **state)
{
	struct fixture *f = *state;
	long long a, d;
	int found = -1;
	char *error = NULL;

	assert_true(satisfied(f, KEY, NOW));
	observe_creation(f, KEY);
	observe_deletion(f, KEY, "default/pod0");
	assert_int_equal(expectations_get(f->e, KEY, &found, &a, &d, NULL, &error), 0);
	assert_false(found);
	assert_true(satisfied(f, KEY, NOW));
}

/* DeleteExpectations drops both the counters and the pod keys: the owner syncs freely
 * and later observations of its old pods change nothing. */
static void
deleting_expectations_forgets_counters_and_pod_keys(void **state)
{
	struct fixture *f = *state;
	long long a, d;
	int found = -1;
	char *error = NULL;

	expect(f, KEY, 3, "pod", 2, NOW);
	assert_false(satisfied(f, KEY, NOW));
	assert_int_equal(expectations_delete(f->e, KEY, &error), 0);
	assert_true(satisfied(f, KEY, NOW));
	observe_deletion(f, KEY, "default/pod0");
	assert_int_equal(expectations_get(f->e, KEY, &found, &a, &d, NULL, &error), 0);
	assert_false(found);
	/* Expecting again starts from nothing: the old pod keys are gone. */
	expect(f, KEY, 0, "new", 1, NOW);
	observe_deletion(f, KEY, "default/pod1");
	assert_counts(f, KEY, 0, 1);
}

/* --- consistency ------------------------------------------------------------------------ */

/* TestCompareResourceVersion: kube's CompareResourceVersion, whose error is 2 here. */
static void
resource_versions_compare_as_arbitrary_precision_decimals(void **state)
{
	(void)state;
	static const struct {
		const char *a, *b;
		int want;
	} cases[] = {
		{ "100", "200", -1 },
		{ "200", "100", 1 },
		{ "1", "1", 0 },
		{ "100", "100", 0 },
		{ "99", "100", -1 },
		{ "100", "99", 1 },
		{ "0", "1", 2 },
		{ "0", "0", 2 },
		{ "1", "0", 2 },
		{ "0100", "100", 2 },
		{ "100", "0100", 2 },
		{ "", "100", 2 },
		{ "100", "", 2 },
		{ "100a", "100", 2 },
		{ "100", "100a", 2 },
		{ "99999999999999999999999999999999999999999999999999",
		  "100000000000000000000000000000000000000000000000000", -1 },
		{ "100000000000000000000000000000000000000000000000000",
		  "99999999999999999999999999999999999999999999999999", 1 },
		{ "12345678901234567890123456789012345678901234567890",
		  "12345678901234567890123456789012345678901234567890", 0 },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int got = consistency_compare_rv(cases[i].a, cases[i].b);
		if (got != cases[i].want)
			fail_msg("compare(\"%s\", \"%s\") = %d, want %d", cases[i].a, cases[i].b,
			    got, cases[i].want);
	}
	assert_int_equal(consistency_compare_rv(NULL, "1"), 2);
	assert_int_equal(consistency_compare_rv("1", NULL), 2);
}

/* The resourceVersion recorded for key and resource, or NULL (malloc'd). */
static char *
written(struct fixture *f, const char *key, const char *resource)
{
	sqlite3_stmt *stmt;
	char *rv = NULL;

	assert_int_equal(sqlite3_prepare_v2(store_db(f->store), "SELECT resource_version"
	    " FROM controller_writes WHERE controller = 'replicaset' AND key = ?1"
	    " AND resource = ?2", -1, &stmt, NULL), SQLITE_OK);
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, resource, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		rv = xstrdup((const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	return rv;
}

/* Records a write of key (uid) to resource at rv. */
static void
wrote_at(struct fixture *f, const char *key, const char *uid, const char *resource,
    const char *rv)
{
	char *error = NULL;

	assert_int_equal(consistency_wrote_at(f->w, key, uid, resource, rv, &error), 0);
}

/* Fails unless the version recorded for key and resource is want (NULL: none). */
static void
assert_written(struct fixture *f, const char *key, const char *resource, const char *want)
{
	char *got = written(f, key, resource);

	if (want == NULL)
		assert_null(got);
	else
		assert_string_equal(got, want);
	free(got);
}

/* Owner record WroteAt: per resource, the newest version written is kept; a version
 * that cannot be ordered replaces the old one. */
static void
wrote_at_keeps_the_newest_version_per_resource(void **state)
{
	static const struct {
		const char *resource, *rv, *pods, *replicasets;
	} steps[] = {
		{ "pods", "5", "5", NULL },
		{ "pods", "10", "10", NULL },
		{ "pods", "8", "10", NULL },
		{ "replicasets", "1", "10", "1" },	/* kube's test: daemonsets */
		{ "pods", "20", "20", "1" },
		{ "pods", "20", "20", "1" },
		{ "pods", "abc", "abc", "1" },	/* malformed: the new one is stored */
		{ "pods", "7", "7", "1" },
	};
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		wrote_at(f, KEY, "uid-1", steps[i].resource, steps[i].rv);
		assert_written(f, KEY, "pods", steps[i].pods);
		assert_written(f, KEY, "replicasets", steps[i].replicasets);
	}
}

/* Returns whether key (uid) may sync, and the resource holding it back. */
static int
ready(struct fixture *f, const char *key, const char *uid, const char **behind)
{
	char *error = NULL;
	int ok = -1;

	*behind = NULL;
	assert_int_equal(consistency_ready(f->w, key, uid, &ok, behind, &error), 0);
	return ok;
}

/* Sets the resourceVersion the informer of resource has applied. */
static void
informer_at(struct fixture *f, const char *resource, const char *rv)
{
	char *error = NULL;

	assert_int_equal(store_set_resource_version(f->store, resource_find(resource), rv,
	    &error), 0);
}

/* Owner record readiness, step by step: a key is ready once every informer it wrote
 * through has reached the written version; an informer with no version yet (kube: the
 * empty "last sync resourceVersion") holds nothing back. kube's second resource is
 * apps/daemonsets; the ReplicaSet controller's is apps/replicasets. */
static void
ready_waits_for_every_informer_to_reach_the_written_version(void **state)
{
	static const struct {
		const char *write_resource, *write_rv;	/* a write first, or NULL */
		const char *informer, *informer_rv;	/* then an informer moves, or NULL */
		int ready;
		const char *behind;
	} steps[] = {
		{ NULL, NULL, NULL, NULL, 1, NULL },			/* 1: no writes */
		{ "pods", "10", NULL, NULL, 1, NULL },			/* 2: no informer row */
		{ NULL, NULL, "pods", "", 1, NULL },			/* 2: empty version */
		{ NULL, NULL, "pods", "5", 0, "pods" },			/* 3: bookmark 5 */
		{ NULL, NULL, "pods", "10", 1, NULL },			/* 4 */
		{ NULL, NULL, "pods", "15", 1, NULL },			/* 5 */
		{ "replicasets", "100", "replicasets", "50", 0, "replicasets" },	/* 6 */
		{ NULL, NULL, "replicasets", "100", 1, NULL },		/* 7 */
		/* Fail open on a version that cannot be ordered. */
		{ "pods", "20", "pods", "abc", 1, NULL },
		{ NULL, NULL, "pods", "19", 0, "pods" },
		{ NULL, NULL, "pods", "0", 1, NULL },
	};
	struct fixture *f = *state;
	const char *behind;

	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		int got;

		if (steps[i].write_resource != NULL)
			wrote_at(f, KEY, "uid-1", steps[i].write_resource, steps[i].write_rv);
		if (steps[i].informer != NULL)
			informer_at(f, steps[i].informer, steps[i].informer_rv);
		got = ready(f, KEY, "uid-1", &behind);
		if (got != steps[i].ready)
			fail_msg("step %zu: ready %d, want %d", i, got, steps[i].ready);
		if (steps[i].behind != NULL)
			assert_string_equal(behind, steps[i].behind);
	}
}

/* EnsureWrittenRecord with another uid replaces the record: what an earlier owner with
 * the same key wrote holds the new one back no more. */
static void
records_of_an_earlier_owner_hold_nothing_back(void **state)
{
	struct fixture *f = *state;
	const char *behind;

	informer_at(f, "pods", "5");
	informer_at(f, "replicasets", "50");
	wrote_at(f, KEY, "uid-1", "pods", "10");
	wrote_at(f, KEY, "uid-1", "replicasets", "100");
	assert_false(ready(f, KEY, "uid-1", &behind));
	assert_true(ready(f, KEY, "uid-2", &behind));
	/* The new owner's write replaces the old one's, even with a smaller version. */
	wrote_at(f, KEY, "uid-2", "pods", "3");
	assert_written(f, KEY, "pods", "3");
	assert_true(ready(f, KEY, "uid-2", &behind));
	wrote_at(f, KEY, "uid-2", "pods", "20");
	assert_written(f, KEY, "pods", "20");
	assert_false(ready(f, KEY, "uid-2", &behind));
	assert_string_equal(behind, "pods");
}

/* Clear: an unknown owner changes nothing; clearing owner1 leaves owner2's record.
 * (kube's Clear also takes a uid and keeps a record of another uid; sqlkcm forgets by
 * key, which its only caller, the ReplicaSet delete handler, needs.) */
static void
forget_drops_only_that_owners_records(void **state)
{
	struct fixture *f = *state;
	char *error = NULL;

	wrote_at(f, "ns/owner1", "uid-1", "pods", "10");
	wrote_at(f, "ns/owner2", "uid-2", "pods", "10");
	assert_int_equal(consistency_forget(f->w, "ns/unknown", &error), 0);
	assert_written(f, "ns/owner1", "pods", "10");
	assert_int_equal(consistency_forget(f->w, "ns/owner1", &error), 0);
	assert_written(f, "ns/owner1", "pods", NULL);
	assert_written(f, "ns/owner2", "pods", "10");
}

int
main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(expectations_follow_creations_and_deletions_observed),
		T(expectations_expire_strictly_after_the_timeout_from_when_they_were_set),
		T(uid_expectations_are_satisfied_by_their_own_pods_deletions),
		T(deletion_of_an_untracked_pod_lowers_nothing),
		T(expecting_the_same_pod_twice_waits_for_it_once),
		T(observations_without_expectations_change_nothing),
		T(deleting_expectations_forgets_counters_and_pod_keys),
		T(resource_versions_compare_as_arbitrary_precision_decimals),
		T(wrote_at_keeps_the_newest_version_per_resource),
		T(ready_waits_for_every_informer_to_reach_the_written_version),
		T(records_of_an_earlier_owner_hold_nothing_back),
		T(forget_drops_only_that_owners_records),
	};
#undef T
	return cmocka_run_group_tests_name("expectations", tests, NULL, NULL);
}
