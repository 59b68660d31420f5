/*
 * test_deployment.c - the Deployment controller's rules (deploymentrules.c): the case
 * tables of kube-controller-manager's deployment/util tests (deployment_util_test.go,
 * hash_test.go), of the controller's own where they exercise a rule (sync_test.go's
 * TestScale and TestGenerateReplicaSetName), and of apimachinery's intstr_test.go, as
 * data. Each row names the kube case it ports; rows of sqlkcm's own say so.
 *
 * Then the sync itself, through kube's tests of the controller (rolling_test.go,
 * recreate_test.go, sync_test.go, progress_test.go, deployment_controller_test.go): the
 * Deployment and its ReplicaSets (and pods) are written into an in-memory store, the key
 * is synced, and the result (its writes, claims, events, status and requeue) compared with
 * what kube's case expects of the function it calls. Where kube calls a helper on objects
 * a sync would never hand it, the row is set up so that the sync reaches the helper with
 * the same inputs, and says how.
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
#include "consistency.h"
#include "controller.h"
#include "controllers/deployment.h"
#include "fixtures.h"
#include "intstr.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

#define NELEM(a) (sizeof (a) / sizeof (a)[0])
#define ABSENT (-1)		/* a number field the object leaves out */
#define MAX_INT32 2147483647LL

/* --- objects ----------------------------------------------------------------------------- */

/* Parses the JSON that fmt makes; fails the test if it is not JSON. */
static cJSON *
json(const char *fmt, ...)
{
	va_list ap;
	char *text;
	cJSON *v;

	va_start(ap, fmt);
	text = xvasprintf(fmt, ap);
	va_end(ap);
	v = cJSON_Parse(text);
	if (v == NULL)
		fail_msg("not JSON: %s", text);
	free(text);
	return v;
}

/* Prints v compactly; the caller frees it. */
static char *
print(const cJSON *v)
{
	char *text = cJSON_PrintUnformatted(v);

	assert_non_null(text);
	return text;
}

/* A rolling-update Deployment of replicas (ABSENT: left out) whose maxSurge and
 * maxUnavailable are the JSON texts given (NULL: left out). */
static cJSON *
rolling_deployment(long long replicas, const char *max_surge, const char *max_unavailable)
{
	cJSON *d = json("{\"metadata\":{\"name\":\"nginx\",\"annotations\":{}},\"spec\":"
	    "{\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{}}}}");
	cJSON *spec = cJSON_GetObjectItem(d, "spec");
	cJSON *rolling = cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "strategy"),
	    "rollingUpdate");

	if (replicas != ABSENT)
		cJSON_AddNumberToObject(spec, "replicas", (double)replicas);
	if (max_surge != NULL)
		cJSON_AddItemToObject(rolling, "maxSurge", json("%s", max_surge));
	if (max_unavailable != NULL)
		cJSON_AddItemToObject(rolling, "maxUnavailable", json("%s", max_unavailable));
	return d;
}

/* A ReplicaSet of replicas, as kube's rs() fixture makes one. */
static cJSON *
replicaset(const char *name, long long replicas)
{
	return json("{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
	    "\"spec\":{\"replicas\":%lld}}", name, replicas);
}

/* Sets annotation key of object to value (NULL: removes it). */
static void
annotate(cJSON *object, const char *key, const char *value)
{
	cJSON *metadata = cJSON_GetObjectItem(object, "metadata");
	cJSON *annotations;

	if (metadata == NULL)
		metadata = cJSON_AddObjectToObject(object, "metadata");
	annotations = cJSON_GetObjectItem(metadata, "annotations");
	if (annotations == NULL)
		annotations = cJSON_AddObjectToObject(metadata, "annotations");
	cJSON_DeleteItemFromObjectCaseSensitive(annotations, key);
	if (value != NULL)
		cJSON_AddStringToObject(annotations, key, value);
}

/* The annotation key of object, or NULL. */
static const char *
annotation(const cJSON *object, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(object,
	    "metadata"), "annotations"), key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A string of n copies of c; the caller frees it. */
static char *
repeat(char c, int n)
{
	char *s = xmalloc((size_t)n + 1);

	memset(s, c, (size_t)n);
	s[n] = '\0';
	return s;
}

/* --- int-or-percent and the fenceposts --------------------------------------------------- */

/* apimachinery's TestGetIntFromIntOrPercent, and TestGetIntFromIntOrString's values
 * scaled against 100 (where a percentage reads as its number). */
static const struct scaled_case {
	const char *name;
	const char *value;	/* JSON */
	long long total;
	int round_up;
	int error;
	long long want;
} scaled_cases[] = {
	{ "TestGetIntFromIntOrPercent: 123", "123", 0, 0, 0, 123 },
	{ "TestGetIntFromIntOrPercent: 90% of 100, up", "\"90%\"", 100, 1, 0, 90 },
	{ "TestGetIntFromIntOrPercent: 90% of 95, up", "\"90%\"", 95, 1, 0, 86 },
	{ "TestGetIntFromIntOrPercent: 90% of 95, down", "\"90%\"", 95, 0, 0, 85 },
	{ "TestGetIntFromIntOrPercent: %", "\"%\"", 0, 0, 1, 0 },
	{ "TestGetIntFromIntOrPercent: 90#", "\"90#\"", 0, 0, 1, 0 },
	{ "TestGetIntFromIntOrPercent: #%", "\"#%\"", 0, 0, 1, 0 },
	{ "TestGetIntFromIntOrPercent: 90", "\"90\"", 0, 0, 1, 0 },
	{ "TestGetIntFromIntOrString: 200", "200", 100, 0, 0, 200 },
	{ "TestGetIntFromIntOrString: \"200\"", "\"200\"", 100, 0, 1, 0 },
	{ "TestGetIntFromIntOrString: 30%0", "\"30%0\"", 100, 0, 1, 0 },
	{ "TestGetIntFromIntOrString: 40%", "\"40%\"", 100, 0, 0, 40 },
	{ "TestGetIntFromIntOrString: a%", "\"a%\"", 100, 0, 1, 0 },
	{ "TestGetIntFromIntOrString: a", "\"a\"", 100, 0, 1, 0 },
	{ "TestGetIntFromIntOrString: 40#", "\"40#\"", 100, 0, 1, 0 },
	{ "TestGetIntFromIntOrString: 40%%", "\"40%%\"", 100, 0, 1, 0 },
	/* sqlkcm's: Atoi's sign, negative percentages rounding the right way, and what
	 * is neither a number nor a string. */
	{ "sqlkcm: +10% of 15, up", "\"+10%\"", 15, 1, 0, 2 },
	{ "sqlkcm: -10% of 15, up", "\"-10%\"", 15, 1, 0, -1 },
	{ "sqlkcm: -10% of 15, down", "\"-10%\"", 15, 0, 0, -2 },
	{ "sqlkcm: 33% of 3, up", "\"33%\"", 3, 1, 0, 1 },
	{ "sqlkcm: 33% of 3, down", "\"33%\"", 3, 0, 0, 0 },
	{ "sqlkcm: space", "\" 5%\"", 10, 0, 1, 0 },
	{ "sqlkcm: boolean", "true", 10, 0, 1, 0 },
	{ "sqlkcm: fraction", "1.5", 10, 0, 1, 0 },
	{ "sqlkcm: null is absent", "null", 10, 0, 0, 0 },
};

static void
scaled_value_follows_intstr(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(scaled_cases); i++) {
		const struct scaled_case *c = &scaled_cases[i];
		cJSON *v = json("%s", c->value);
		char *error = NULL;
		long long got;
		int rc = intstr_scaled_or_zero(v, c->total, c->round_up, &got, &error);

		if ((rc == -1) != c->error)
			fail_msg("%s: returned %d (%s)", c->name, rc,
			    error != NULL ? error : "no error");
		if (c->error && error == NULL)
			fail_msg("%s: no message", c->name);
		if (got != c->want)
			fail_msg("%s: %lld, want %lld", c->name, got, c->want);
		free(error);
		cJSON_Delete(v);
	}
}

/* An absent value is 0 (the header's contract; kube's ValueOrDefault gives the same). */
static void
scaled_value_of_nothing_is_zero(void **state)
{
	long long got = 7;

	(void)state;
	assert_int_equal(intstr_scaled_or_zero(NULL, 10, 1, &got, NULL), 0);
	assert_int_equal(got, 0);
}

/* kube's TestResolveFenceposts (values given as strings, as the test gives them). */
static const struct fencepost_case {
	const char *name;
	const char *max_surge, *max_unavailable;	/* NULL: nil */
	long long desired;
	long long surge, unavailable;
	int error;
} fencepost_cases[] = {
	{ "TestResolveFenceposts #0", "0%", "0%", 0, 0, 1, 0 },
	{ "TestResolveFenceposts #1", "39%", "39%", 10, 4, 3, 0 },
	{ "TestResolveFenceposts #2", "oops", "39%", 10, 0, 0, 1 },
	{ "TestResolveFenceposts #3", "55%", "urg", 10, 0, 0, 1 },
	{ "TestResolveFenceposts #4", NULL, "39%", 10, 0, 3, 0 },
	{ "TestResolveFenceposts #5", "39%", NULL, 10, 4, 0, 0 },
	{ "TestResolveFenceposts #6", NULL, NULL, 10, 0, 1, 0 },
};

static void
fenceposts_follow_kubes_resolve_fenceposts_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(fencepost_cases); i++) {
		const struct fencepost_case *c = &fencepost_cases[i];
		cJSON *s = c->max_surge ? cJSON_CreateString(c->max_surge) : NULL;
		cJSON *u = c->max_unavailable ? cJSON_CreateString(c->max_unavailable) : NULL;
		long long surge, unavailable;
		char *error = NULL;
		int rc = deployment_resolve_fenceposts(s, u, c->desired, &surge, &unavailable,
		    &error);

		if ((rc == -1) != c->error)
			fail_msg("%s: returned %d (%s)", c->name, rc,
			    error != NULL ? error : "no error");
		if (surge != c->surge || unavailable != c->unavailable)
			fail_msg("%s: %lld:%lld, want %lld:%lld", c->name, surge, unavailable,
			    c->surge, c->unavailable);
		free(error);
		cJSON_Delete(s);
		cJSON_Delete(u);
	}
}

/* kube's TestMaxUnavailable: maxSurge 1 throughout. */
static const struct max_unavailable_case {
	const char *name;
	long long replicas;
	const char *max_unavailable;	/* JSON; NULL: a Recreate Deployment */
	long long want;
} max_unavailable_cases[] = {
	{ "maxUnavailable less than replicas", 10, "5", 5 },
	{ "maxUnavailable equal replicas", 10, "10", 10 },
	{ "maxUnavailable greater than replicas", 5, "10", 5 },
	{ "maxUnavailable with replicas is 0", 0, "10", 0 },
	{ "maxUnavailable with Recreate deployment strategy", ABSENT, NULL, 0 },
	{ "maxUnavailable less than replicas with percents", 10, "\"50%\"", 5 },
	{ "maxUnavailable equal replicas with percents", 10, "\"100%\"", 10 },
	{ "maxUnavailable greater than replicas with percents", 5, "\"100%\"", 5 },
};

static void
max_unavailable_follows_kubes_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(max_unavailable_cases); i++) {
		const struct max_unavailable_case *c = &max_unavailable_cases[i];
		cJSON *d = c->max_unavailable != NULL ?
		    rolling_deployment(c->replicas, "1", c->max_unavailable) :
		    json("{\"spec\":{\"strategy\":{\"type\":\"Recreate\"}}}");
		long long got = deployment_max_unavailable(d);

		if (got != c->want)
			fail_msg("%s: %lld, want %lld", c->name, got, c->want);
		cJSON_Delete(d);
	}
}

/* sqlkcm's: what the apiserver's defaults stand for when a field is absent. */
static void
absent_fields_read_as_the_apis_defaults(void **state)
{
	cJSON *d = json("{\"spec\":{}}");
	cJSON *recreate = json("{\"spec\":{\"replicas\":10,\"strategy\":{\"type\":"
	    "\"Recreate\",\"rollingUpdate\":{\"maxSurge\":3}}}}");
	cJSON *defaulted = rolling_deployment(10, NULL, NULL);
	cJSON *bare = json("{\"spec\":{\"replicas\":10,\"strategy\":{}}}");

	(void)state;
	/* spec.replicas 1, strategy RollingUpdate. */
	assert_int_equal(deployment_spec_replicas(d), 1);
	assert_true(deployment_is_rolling(d));
	assert_true(deployment_is_rolling(bare));
	assert_false(deployment_is_rolling(recreate));
	/* Recreate neither surges nor goes unavailable. */
	assert_int_equal(deployment_max_surge(recreate), 0);
	assert_int_equal(deployment_max_unavailable(recreate), 0);
	/* A rollingUpdate without its fields has 25% of each: 3 up, 2 down of 10. */
	assert_int_equal(deployment_max_surge(defaulted), 3);
	assert_int_equal(deployment_max_unavailable(defaulted), 2);
	/* No rollingUpdate at all reads as nil: no surge, so one unavailable. */
	assert_int_equal(deployment_max_surge(bare), 0);
	assert_int_equal(deployment_max_unavailable(bare), 1);
	cJSON_Delete(d);
	cJSON_Delete(recreate);
	cJSON_Delete(defaulted);
	cJSON_Delete(bare);
}

/* --- the new ReplicaSet's size ----------------------------------------------------------- */

/* kube's TestNewRSNewReplicas: maxUnavailable 1; the ReplicaSets are one of 5 replicas,
 * not the new one. */
static const struct new_replicas_case {
	const char *name;
	int recreate;
	long long deployment_replicas, new_rs_replicas, max_surge, want;
} new_replicas_cases[] = {
	{ "can not scale up - to newRSReplicas", 0, 1, 5, 1, 5 },
	{ "scale up - to depReplicas", 0, 6, 2, 10, 6 },
	{ "recreate - to depReplicas", 1, 3, 1, 1, 3 },
};

static void
new_rs_replicas_follow_kubes_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(new_replicas_cases); i++) {
		const struct new_replicas_case *c = &new_replicas_cases[i];
		char surge[32];
		cJSON *d, *rs5 = replicaset("rs5", 5);
		cJSON *new_rs = replicaset("new", c->new_rs_replicas);
		const cJSON *all[] = { rs5 };
		long long got;

		snprintf(surge, sizeof surge, "%lld", c->max_surge);
		d = rolling_deployment(c->deployment_replicas, surge, "1");
		if (c->recreate)
			cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cJSON_GetObjectItem(d,
			    "spec"), "strategy"), "type", cJSON_CreateString("Recreate"));
		got = deployment_new_rs_new_replicas(d, all, 1, new_rs);
		if (got != c->want)
			fail_msg("%s: %lld, want %lld", c->name, got, c->want);
		cJSON_Delete(d);
		cJSON_Delete(rs5);
		cJSON_Delete(new_rs);
	}
}

/* sqlkcm's: the sum counts every ReplicaSet given, the new one among them; a surge of
 * 25% rounds up. */
static void
new_rs_replicas_count_the_new_one_among_all(void **state)
{
	cJSON *d = rolling_deployment(10, "\"25%\"", "\"25%\"");	/* surge 3 */
	cJSON *old = replicaset("old", 8), *new_rs = replicaset("new", 2);
	const cJSON *all[] = { old, new_rs };

	(void)state;
	/* 10 of 13 allowed: 3 more, within the 8 the new one still lacks. */
	assert_int_equal(deployment_new_rs_new_replicas(d, all, 2, new_rs), 5);
	/* At 13 already: wait. */
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(old, "spec"), "replicas",
	    cJSON_CreateNumber(11));
	assert_int_equal(deployment_new_rs_new_replicas(d, all, 2, new_rs), 2);
	cJSON_Delete(d);
	cJSON_Delete(old);
	cJSON_Delete(new_rs);
}

/* --- proportional scaling ---------------------------------------------------------------- */

/* kube's TestGetReplicaSetFraction: maxUnavailable 1; max_replicas NULL leaves the
 * annotation out. */
static const struct fraction_case {
	const char *name;
	long long replicas, status_replicas, max_surge, rs_replicas;
	const char *max_replicas;
	long long want;
} fraction_cases[] = {
	{ "empty deployment always scales to 0", 0, 0, 0, 10, NULL, -10 },
	{ "unsynced deployment does not scale when max-replicas annotation is missing "
	  "(removed by a 3rd party)", 10, 0, 0, 5, NULL, 0 },
	{ "unsynced deployment does not scale when max-replicas annotation is incorrectly "
	  "set to 0 (by a 3rd party)", 10, 0, 0, 5, "0", 0 },
	{ "scale up by 1/5 should increase RS replicas by 1/5 when max-replicas annotation "
	  "is missing (removed by a 3rd party)", 120, 100, 0, 50, NULL, 10 },
	{ "scale up by 1/5 should increase RS replicas by 1/5 when max-replicas annotation "
	  "is incorrectly set to 0 (by a 3rd party)", 120, 100, 0, 50, "0", 10 },
	{ "scale up by 1/5 should increase RS replicas by 1/5", 120, 0, 0, 50, "100", 10 },
	{ "scale up with maxSurge by 1/5 should increase RS replicas approximately by 1/5",
	  120, 0, 10, 50, "110", 9 },
	{ "scale down by 1/6 should decrease RS replicas by 1/6", 10, 0, 0, 6, "12", -1 },
	{ "scale down with maxSurge by 1/6 should decrease RS replicas approximately by "
	  "1/6", 100, 0, 10, 50, "130", -8 },
};

/* The fraction is GetReplicaSetProportion's before its clamp: with all of a large
 * number still to give out, either way, the proportion is the fraction itself. */
static void
proportion_follows_kubes_get_replica_set_fraction_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(fraction_cases); i++) {
		const struct fraction_case *c = &fraction_cases[i];
		char surge[32];
		cJSON *d, *rs = replicaset("nginx-1", c->rs_replicas);
		long long up, down;

		snprintf(surge, sizeof surge, "%lld", c->max_surge);
		d = rolling_deployment(c->replicas, surge, "1");
		cJSON_AddItemToObject(d, "status", json("{\"replicas\":%lld}",
		    c->status_replicas));
		if (c->max_replicas != NULL)
			annotate(rs, DEPLOYMENT_MAX_REPLICAS_ANNOTATION, c->max_replicas);
		up = deployment_rs_proportion(rs, d, 1000, 0);
		down = deployment_rs_proportion(rs, d, -1000, 0);
		if (up != c->want || down != c->want)
			fail_msg("%s: %lld scaling up, %lld down, want %lld", c->name, up, down,
			    c->want);
		cJSON_Delete(d);
		cJSON_Delete(rs);
	}
}

/* GetReplicaSetProportion's own rules: nothing for an empty ReplicaSet, nothing to give
 * or nothing left; never more than is left, in either direction. */
static void
proportion_stays_within_what_is_left(void **state)
{
	cJSON *d = rolling_deployment(20, "0", "1");
	cJSON *rs = replicaset("rs", 5), *empty = replicaset("empty", 0);

	(void)state;
	annotate(rs, DEPLOYMENT_MAX_REPLICAS_ANNOTATION, "10");	/* fraction +5 */
	annotate(empty, DEPLOYMENT_MAX_REPLICAS_ANNOTATION, "10");
	assert_int_equal(deployment_rs_proportion(NULL, d, 10, 0), 0);
	assert_int_equal(deployment_rs_proportion(empty, d, 10, 0), 0);
	assert_int_equal(deployment_rs_proportion(rs, d, 0, 0), 0);
	assert_int_equal(deployment_rs_proportion(rs, d, 10, 10), 0);
	assert_int_equal(deployment_rs_proportion(rs, d, 10, 0), 5);
	assert_int_equal(deployment_rs_proportion(rs, d, 10, 7), 3);
	/* Scaling down, the fraction is -2 (5 of 10 becomes 3 of 6)... */
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(d, "spec"), "replicas",
	    cJSON_CreateNumber(6));
	assert_int_equal(deployment_rs_proportion(rs, d, -4, 0), -2);
	/* ...but no more than is left to take. */
	assert_int_equal(deployment_rs_proportion(rs, d, -4, -3), -1);
	cJSON_Delete(d);
	cJSON_Delete(rs);
	cJSON_Delete(empty);
}

/* One ReplicaSet of a TestScale case: its size, its age (larger is newer), the desired
 * replicas its annotations record (0: the old Deployment's), and its size after. */
struct scale_rs {
	const char *name;
	long long replicas;
	int age;
	long long desired;
	long long want;
};

/*
 * kube's TestScale, the cases that scale proportionally (two or more active ReplicaSets,
 * the new one not saturated); the others go to one ReplicaSet whole, which is the sync's
 * business. maxUnavailable is 0 unless given; the new ReplicaSet, if any, is rs[0].
 */
static const struct scale_case {
	const char *name;
	long long replicas, old_replicas;
	const char *max_surge, *old_max_surge, *max_unavailable;	/* JSON */
	struct scale_rs rs[3];
	int n;
} scale_cases[] = {
	{ "proportional scaling: 5 -> 10", 10, 5, "0", "0", "0",
	  { { "foo-v2", 2, 2, 0, 4 }, { "foo-v1", 3, 1, 0, 6 } }, 2 },
	{ "proportional scaling: 5 -> 3", 3, 5, "0", "0", "0",
	  { { "foo-v2", 2, 2, 0, 1 }, { "foo-v1", 3, 1, 0, 2 } }, 2 },
	{ "proportional scaling: 9 -> 4", 4, 9, "0", "0", "0",
	  { { "foo-v2", 8, 2, 0, 4 }, { "foo-v1", 1, 1, 0, 0 } }, 2 },
	{ "proportional scaling: 7 -> 10", 10, 7, "0", "0", "0",
	  { { "foo-v3", 2, 2, 0, 3 }, { "foo-v2", 3, 1, 0, 4 }, { "foo-v1", 2, 0, 0, 3 } },
	  3 },
	{ "proportional scaling: 13 -> 8", 8, 13, "0", "0", "0",
	  { { "foo-v3", 2, 2, 0, 1 }, { "foo-v2", 8, 1, 0, 5 }, { "foo-v1", 3, 0, 0, 2 } },
	  3 },
	{ "leftover distribution: 3 -> 4", 4, 3, "0", "0", "0",
	  { { "foo-v3", 1, 2, 0, 2 }, { "foo-v2", 1, 1, 0, 1 }, { "foo-v1", 1, 0, 0, 1 } },
	  3 },
	{ "leftover distribution: 3 -> 2", 2, 3, "0", "0", "0",
	  { { "foo-v3", 1, 2, 0, 1 }, { "foo-v2", 1, 1, 0, 1 }, { "foo-v1", 1, 0, 0, 0 } },
	  3 },
	{ "proportional scaling (no new rs): 4 -> 5", 5, 4, "0", "0", "0",
	  { { "foo-v2", 2, 1, 0, 3 }, { "foo-v1", 2, 0, 0, 2 } }, 2 },
	{ "proportional scaling: 6 -> 0", 0, 6, "0", "0", "0",
	  { { "foo-v3", 3, 2, 0, 0 }, { "foo-v2", 2, 1, 0, 0 }, { "foo-v1", 1, 0, 0, 0 } },
	  3 },
	{ "failed rs update", 5, 5, "0", "0", "0",
	  { { "foo-v3", 2, 2, 0, 2 }, { "foo-v2", 1, 1, 3, 2 }, { "foo-v1", 1, 0, 0, 1 } },
	  3 },
	{ "deployment with surge pods", 20, 10, "2", "2", "0",
	  { { "foo-v2", 6, 2, 0, 11 }, { "foo-v1", 6, 1, 0, 11 } }, 2 },
	{ "change both surge and size", 50, 10, "6", "3", "0",
	  { { "foo-v2", 5, 2, 0, 22 }, { "foo-v1", 8, 1, 0, 34 } }, 2 },
	{ "change both size and template", 14, 10, "0", "0", "0",
	  { { "foo-v2", 7, 2, 0, 10 }, { "foo-v1", 3, 1, 0, 4 } }, 2 },
	{ "saturated but broken new replica set does not affect old pods", 2, 2, "1", "1", "1",
	  { { "foo-v2", 2, 2, 0, 2 }, { "foo-v1", 1, 1, 0, 1 } }, 2 },
};

/* kube's ReplicaSetsBySizeNewer (newer_first) and ReplicaSetsBySizeOlder: larger first,
 * then by age. */
static int
scale_order_less(const struct scale_rs *a, const struct scale_rs *b, int newer_first)
{
	if (a->replicas != b->replicas)
		return a->replicas > b->replicas;
	return newer_first ? a->age > b->age : a->age < b->age;
}

/* The proportional half of kube's scale(): the sizes to add, shared in order, the
 * leftover to the first. Fills sizes[i] for rs[i]. */
static void
scale_proportionally(const struct scale_case *c, const cJSON *d, cJSON *const *rs,
    long long *sizes)
{
	int order[3], n = c->n;
	long long allowed, total = 0, to_add, added = 0;

	for (int i = 0; i < n; i++) {
		total += c->rs[i].replicas;
		order[i] = i;
	}
	allowed = c->replicas > 0 ? c->replicas + deployment_max_surge(d) : 0;
	to_add = allowed - total;
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && scale_order_less(&c->rs[order[j]],
		    &c->rs[order[j - 1]], to_add > 0); j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		int k = order[i];
		long long proportion = 0;

		if (to_add != 0)
			proportion = deployment_rs_proportion(rs[k], d, to_add, added);
		sizes[k] = c->rs[k].replicas + proportion;
		added += proportion;
	}
	if (to_add != 0) {
		sizes[order[0]] += to_add - added;
		if (sizes[order[0]] < 0)
			sizes[order[0]] = 0;
	}
}

static void
proportional_scaling_follows_kubes_scale_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(scale_cases); i++) {
		const struct scale_case *c = &scale_cases[i];
		cJSON *d = rolling_deployment(c->replicas, c->max_surge, c->max_unavailable);
		cJSON *old_d = rolling_deployment(c->old_replicas, c->old_max_surge,
		    c->max_unavailable);
		cJSON *rs[3] = { NULL };
		long long sizes[3] = { 0 };

		/* Each ReplicaSet was last sized for the old Deployment. */
		for (int j = 0; j < c->n; j++) {
			long long desired = c->rs[j].desired != 0 ? c->rs[j].desired :
			    c->old_replicas;

			rs[j] = replicaset(c->rs[j].name, c->rs[j].replicas);
			deployment_set_replicas_annotations(rs[j], desired,
			    desired + deployment_max_surge(old_d));
		}
		if (deployment_is_saturated(d, rs[0]))
			fail_msg("%s: the new ReplicaSet is saturated", c->name);
		scale_proportionally(c, d, rs, sizes);
		for (int j = 0; j < c->n; j++) {
			if (sizes[j] != c->rs[j].want)
				fail_msg("%s: %s has %lld, want %lld", c->name, c->rs[j].name,
				    sizes[j], c->rs[j].want);
			cJSON_Delete(rs[j]);
		}
		cJSON_Delete(d);
		cJSON_Delete(old_d);
	}
}

/* --- annotations ------------------------------------------------------------------------- */

/* kube's TestGetNonNegativeInt32FromAnnotation; value NULL leaves the annotation out. */
static const struct int32_case {
	const char *name;
	const char *value;
	long long want;
	int valid;
} int32_cases[] = {
	{ "invalid empty", NULL, 0, 0 },
	{ "invalid", "invalid", 0, 0 },
	{ "invalid negative ", "-1", 0, 0 },
	{ "valid zero", "0", 0, 1 },
	{ "valid", "13", 13, 1 },
	{ "valid max", "2147483647", 2147483647, 1 },
	{ "invalid max out of range", "2147483648", 0, 0 },
	{ "invalid max out of range 2", "4294967296", 0, 0 },
	/* sqlkcm's: ParseUint takes no sign, and no empty string. */
	{ "sqlkcm: plus sign", "+1", 0, 0 },
	{ "sqlkcm: empty", "", 0, 0 },
};

static void
int32_annotation_follows_kubes_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(int32_cases); i++) {
		const struct int32_case *c = &int32_cases[i];
		cJSON *rs = replicaset("nginx-1", 1);
		long long got = -5;
		int valid;

		annotate(rs, "foo", "2");
		if (c->value != NULL)
			annotate(rs, "test", c->value);
		valid = deployment_int32_annotation(rs, "test", &got);
		if (valid != c->valid || got != c->want)
			fail_msg("%s: %d and %lld, want %d and %lld", c->name, valid, got,
			    c->valid, c->want);
		cJSON_Delete(rs);
	}
}

/* kube's TestAnnotationUtils, SetNewReplicaSetAnnotations: revisions 11 to 20 in turn on
 * an existing ReplicaSet, the history kept within 5 characters. */
static void
new_rs_annotations_follow_kubes_annotation_utils(void **state)
{
	cJSON *d = rolling_deployment(1, "1", "1");
	cJSON *rs = replicaset("nginx-1", 0);

	(void)state;
	annotate(d, DEPLOYMENT_REVISION_ANNOTATION, "1");
	for (int i = 10; i < 20; i++) {
		char next[16], history[32];

		snprintf(next, sizeof next, "%d", i + 1);
		deployment_set_new_rs_annotations(d, rs, i + 1, 1, 5);
		if (i >= 12) {
			const char *got = annotation(rs,
			    DEPLOYMENT_REVISION_HISTORY_ANNOTATION);

			snprintf(history, sizeof history, "%d,%d", i - 1, i);
			assert_non_null(got);
			assert_string_equal(got, history);
		}
		assert_string_equal(annotation(rs, DEPLOYMENT_REVISION_ANNOTATION), next);
	}

	/* SetReplicasAnnotations. */
	assert_true(deployment_set_replicas_annotations(rs, 10, 11));
	assert_string_equal(annotation(rs, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION), "10");
	assert_string_equal(annotation(rs, DEPLOYMENT_MAX_REPLICAS_ANNOTATION), "11");
	/* (sqlkcm's: the same again changes nothing.) */
	assert_false(deployment_set_replicas_annotations(rs, 10, 11));

	/* IsSaturated. */
	annotate(rs, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION, "1");
	cJSON_AddItemToObject(rs, "status", json("{\"availableReplicas\":1}"));
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(rs, "spec"), "replicas",
	    cJSON_CreateNumber(1));
	assert_true(deployment_is_saturated(d, rs));
	cJSON_Delete(d);
	cJSON_Delete(rs);
}

/* sqlkcm's, from IsSaturated's rule: all three must agree with the Deployment. */
static void
saturation_needs_size_annotation_and_availability(void **state)
{
	cJSON *d = rolling_deployment(3, "1", "1");
	cJSON *rs = json("{\"metadata\":{\"annotations\":{\""
	    DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION "\":\"3\"}},\"spec\":{\"replicas\":3},"
	    "\"status\":{\"availableReplicas\":3}}");

	(void)state;
	assert_true(deployment_is_saturated(d, rs));
	assert_false(deployment_is_saturated(d, NULL));
	annotate(rs, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION, "three");
	assert_false(deployment_is_saturated(d, rs));
	annotate(rs, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION, NULL);
	assert_false(deployment_is_saturated(d, rs));
	annotate(rs, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION, "2");
	assert_false(deployment_is_saturated(d, rs));
	annotate(rs, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION, "3");
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(rs, "status"), "availableReplicas",
	    cJSON_CreateNumber(2));
	assert_false(deployment_is_saturated(d, rs));
	cJSON_Delete(d);
	cJSON_Delete(rs);
}

/* kube's TestReplicasAnnotationsNeedUpdate: against desired 10 and max 20. */
static const struct need_update_case {
	const char *name;
	const char *desired, *max;	/* NULL, NULL: no annotations at all */
	int want;
} need_update_cases[] = {
	{ "test Annotations nil", NULL, NULL, 1 },
	{ "test desiredReplicas update", "8", "20", 1 },
	{ "test maxReplicas update", "10", "16", 1 },
	{ "test needn't update", "10", "20", 0 },
};

static void
replicas_annotations_need_update_follows_kubes_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(need_update_cases); i++) {
		const struct need_update_case *c = &need_update_cases[i];
		cJSON *rs = json("{\"metadata\":{\"name\":\"hello\",\"namespace\":\"test\"},"
		    "\"spec\":{\"selector\":{\"matchLabels\":{\"foo\":\"bar\"}}}}");

		if (c->desired != NULL) {
			annotate(rs, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION, c->desired);
			annotate(rs, DEPLOYMENT_MAX_REPLICAS_ANNOTATION, c->max);
		}
		if (deployment_replicas_annotations_need_update(rs, 10, 20) != c->want)
			fail_msg("%s: want %d", c->name, c->want);
		cJSON_Delete(rs);
	}
}

/* sqlkcm's, from copyDeploymentAnnotationsToReplicaSet: the Deployment's annotations go
 * onto the ReplicaSet, less the controller's bookkeeping and kubectl's last apply. */
static void
new_rs_annotations_copy_all_but_the_skipped(void **state)
{
	cJSON *d = rolling_deployment(3, "1", "1");
	cJSON *rs = json("{\"metadata\":{\"name\":\"nginx-1\"},\"spec\":{\"replicas\":1}}");
	char *text;

	(void)state;
	annotate(d, "kubectl.kubernetes.io/last-applied-configuration", "{}");
	annotate(d, DEPLOYMENT_REVISION_ANNOTATION, "9");
	annotate(d, DEPLOYMENT_REVISION_HISTORY_ANNOTATION, "1,2");
	annotate(d, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION, "7");
	annotate(d, DEPLOYMENT_MAX_REPLICAS_ANNOTATION, "8");
	annotate(d, DEPLOYMENT_ROLLBACK_TO_ANNOTATION, "1");
	annotate(d, "team", "web");
	assert_true(deployment_set_new_rs_annotations(d, rs, 1, 1, 2000));
	text = print(cJSON_GetObjectItem(cJSON_GetObjectItem(rs, "metadata"), "annotations"));
	assert_string_equal(text, "{\"team\":\"web\",\"" DEPLOYMENT_REVISION_ANNOTATION
	    "\":\"1\"}");
	free(text);
	/* Again: nothing to change. */
	assert_false(deployment_set_new_rs_annotations(d, rs, 1, 1, 2000));
	/* The Deployment's value wins over the ReplicaSet's. */
	annotate(rs, "team", "db");
	assert_true(deployment_set_new_rs_annotations(d, rs, 1, 1, 2000));
	assert_string_equal(annotation(rs, "team"), "web");
	cJSON_Delete(d);
	cJSON_Delete(rs);
}

/* sqlkcm's, from SetNewReplicaSetAnnotations: a ReplicaSet about to be created records
 * the size it is made for (spec.replicas and spec.replicas + maxSurge). */
static void
new_rs_annotations_size_a_replicaset_to_be_created(void **state)
{
	cJSON *d = rolling_deployment(3, "1", "0");
	cJSON *rs = json("{\"spec\":{\"replicas\":0}}");

	(void)state;
	assert_true(deployment_set_new_rs_annotations(d, rs, 1, 0, 2000));
	assert_string_equal(annotation(rs, DEPLOYMENT_REVISION_ANNOTATION), "1");
	assert_string_equal(annotation(rs, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION), "3");
	assert_string_equal(annotation(rs, DEPLOYMENT_MAX_REPLICAS_ANNOTATION), "4");
	assert_null(annotation(rs, DEPLOYMENT_REVISION_HISTORY_ANNOTATION));
	cJSON_Delete(d);
	cJSON_Delete(rs);
}

/* sqlkcm's, from SetNewReplicaSetAnnotations: the revision never goes down, and one that
 * is not a number is left alone with nothing reported changed, not even a copied
 * annotation. */
static void
new_rs_annotations_keep_a_higher_or_garbled_revision(void **state)
{
	cJSON *d = rolling_deployment(3, "1", "1");
	cJSON *rs = replicaset("nginx-1", 1);

	(void)state;
	annotate(rs, DEPLOYMENT_REVISION_ANNOTATION, "5");
	assert_false(deployment_set_new_rs_annotations(d, rs, 3, 1, 2000));
	assert_string_equal(annotation(rs, DEPLOYMENT_REVISION_ANNOTATION), "5");
	assert_null(annotation(rs, DEPLOYMENT_REVISION_HISTORY_ANNOTATION));

	annotate(rs, DEPLOYMENT_REVISION_ANNOTATION, "five");
	annotate(d, "team", "web");
	assert_false(deployment_set_new_rs_annotations(d, rs, 6, 1, 2000));
	assert_string_equal(annotation(rs, DEPLOYMENT_REVISION_ANNOTATION), "five");
	assert_string_equal(annotation(rs, "team"), "web");
	cJSON_Delete(d);
	cJSON_Delete(rs);
}

/* sqlkcm's, from the revision-history rule: the oldest entries go to make room; an
 * old revision that does not fit even alone is not recorded; an empty first entry is
 * replaced. */
static const struct history_case {
	const char *name;
	const char *history;	/* NULL: none */
	const char *old;
	long long new_revision;
	int limit;
	const char *want;
} history_cases[] = {
	{ "sqlkcm: first rollback", NULL, "3", 4, 2000, "3" },
	{ "sqlkcm: appended", "1,2", "3", 4, 2000, "1,2,3" },
	{ "sqlkcm: oldest dropped", "1,2", "3", 4, 3, "2,3" },
	{ "sqlkcm: all dropped", "1,2", "33", 34, 2, "33" },
	{ "sqlkcm: nothing fits", "1", "22", 23, 1, "1" },
	{ "sqlkcm: empty first entry", ",5", "7", 8, 2000, "7" },
	{ "sqlkcm: empty last entry", "5,", "7", 8, 2000, "5,,7" },
};

static void
revision_history_is_kept_within_the_limit(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(history_cases); i++) {
		const struct history_case *c = &history_cases[i];
		cJSON *d = rolling_deployment(1, "1", "1");
		cJSON *rs = replicaset("nginx-1", 1);
		char revision[32];
		const char *got;

		annotate(rs, DEPLOYMENT_REVISION_ANNOTATION, c->old);
		if (c->history != NULL)
			annotate(rs, DEPLOYMENT_REVISION_HISTORY_ANNOTATION, c->history);
		assert_true(deployment_set_new_rs_annotations(d, rs, c->new_revision, 1,
		    c->limit));
		snprintf(revision, sizeof revision, "%lld", c->new_revision);
		assert_string_equal(annotation(rs, DEPLOYMENT_REVISION_ANNOTATION), revision);
		got = annotation(rs, DEPLOYMENT_REVISION_HISTORY_ANNOTATION);
		if (got == NULL || strcmp(got, c->want) != 0)
			fail_msg("%s: history %s, want %s", c->name, got ? got : "(none)",
			    c->want);
		cJSON_Delete(d);
		cJSON_Delete(rs);
	}
}

/* sqlkcm's, from MaxRevision and LastRevision (kube has no table for them): the largest
 * and second largest revision; unparseable ones skipped, absent ones 0. */
static const struct revision_case {
	const char *name;
	const char *revisions[4];	/* "": no annotation */
	int n;
	long long max, last;
} revision_cases[] = {
	{ "sqlkcm: none", { NULL }, 0, 0, 0 },
	{ "sqlkcm: one", { "4" }, 1, 4, 0 },
	{ "sqlkcm: in any order", { "1", "3", "2" }, 3, 3, 2 },
	{ "sqlkcm: the largest twice", { "3", "1", "3" }, 3, 3, 3 },
	{ "sqlkcm: unparseable skipped", { "x", "5", "2", "1.5" }, 4, 5, 2 },
	{ "sqlkcm: absent counts 0", { "", "2" }, 2, 2, 0 },
	{ "sqlkcm: descending", { "9", "8", "7" }, 3, 9, 8 },
};

static void
max_and_last_revision_skip_the_unparseable(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(revision_cases); i++) {
		const struct revision_case *c = &revision_cases[i];
		cJSON *rs[4];
		long long max, last;

		for (int j = 0; j < c->n; j++) {
			rs[j] = replicaset("rs", 1);
			if (c->revisions[j][0] != '\0')
				annotate(rs[j], DEPLOYMENT_REVISION_ANNOTATION,
				    c->revisions[j]);
		}
		max = deployment_max_revision((const cJSON *const *)rs, c->n);
		last = deployment_last_revision((const cJSON *const *)rs, c->n);
		if (max != c->max || last != c->last)
			fail_msg("%s: %lld and %lld, want %lld and %lld", c->name, max, last,
			    c->max, c->last);
		for (int j = 0; j < c->n; j++)
			cJSON_Delete(rs[j]);
	}
}

static void
revision_reads_the_annotation(void **state)
{
	cJSON *rs = replicaset("rs", 1);

	(void)state;
	assert_int_equal(deployment_revision(rs), 0);
	annotate(rs, DEPLOYMENT_REVISION_ANNOTATION, "12");
	assert_int_equal(deployment_revision(rs), 12);
	annotate(rs, DEPLOYMENT_REVISION_ANNOTATION, "12a");
	assert_int_equal(deployment_revision(rs), -1);
	annotate(rs, DEPLOYMENT_REVISION_ANNOTATION, "");
	assert_int_equal(deployment_revision(rs), -1);
	annotate(rs, DEPLOYMENT_REVISION_ANNOTATION, "99999999999999999999");
	assert_int_equal(deployment_revision(rs), -1);
	cJSON_Delete(rs);
}

/* --- templates --------------------------------------------------------------------------- */

#define HASH_1 "\"" DEPLOYMENT_HASH_LABEL "\":\"value-1\""
#define HASH_2 "\"" DEPLOYMENT_HASH_LABEL "\":\"value-2\""
#define ELSE "\"something\":\"else\""

/* kube's generatePodTemplateSpec: name, nodeName, annotations and labels (JSON). */
struct pod_template {
	const char *name, *node, *annotations, *labels;
};

static cJSON *
pod_template(const struct pod_template *t)
{
	return json("{\"metadata\":{\"name\":\"%s\",\"annotations\":%s,\"labels\":%s},"
	    "\"spec\":{\"nodeName\":\"%s\"}}", t->name, t->annotations, t->labels, t->node);
}

/* kube's TestEqualIgnoreHash, each case both ways round. */
static const struct equal_case {
	const char *name;
	struct pod_template former, latter;
	int want;
} equal_cases[] = {
	{ "Same spec, same labels",
	  { "foo", "foo-node", "{}", "{" HASH_1 "," ELSE "}" },
	  { "foo", "foo-node", "{}", "{" HASH_1 "," ELSE "}" }, 1 },
	{ "Same spec, only pod-template-hash label value is different",
	  { "foo", "foo-node", "{}", "{" HASH_1 "," ELSE "}" },
	  { "foo", "foo-node", "{}", "{" HASH_2 "," ELSE "}" }, 1 },
	{ "Same spec, the former doesn't have pod-template-hash label",
	  { "foo", "foo-node", "{}", "{" ELSE "}" },
	  { "foo", "foo-node", "{}", "{" HASH_2 "," ELSE "}" }, 1 },
	{ "Same spec, the label is different, the former doesn't have pod-template-hash "
	  "label, same number of labels",
	  { "foo", "foo-node", "{}", "{" ELSE "}" },
	  { "foo", "foo-node", "{}", "{" HASH_2 "}" }, 0 },
	{ "Same spec, the label is different, the latter doesn't have pod-template-hash "
	  "label, same number of labels",
	  { "foo", "foo-node", "{}", "{" HASH_1 "}" },
	  { "foo", "foo-node", "{}", "{" ELSE "}" }, 0 },
	{ "Same spec, the label is different, and the pod-template-hash label value is the "
	  "same",
	  { "foo", "foo-node", "{}", "{" HASH_1 "}" },
	  { "foo", "foo-node", "{}", "{" HASH_1 "," ELSE "}" }, 0 },
	{ "Different spec, same labels",
	  { "foo", "foo-node", "{\"former\":\"value\"}", "{" HASH_1 "," ELSE "}" },
	  { "foo", "foo-node", "{\"latter\":\"value\"}", "{" HASH_1 "," ELSE "}" }, 0 },
	{ "Different spec, different pod-template-hash label value",
	  { "foo-1", "foo-node", "{}", "{" HASH_1 "," ELSE "}" },
	  { "foo-2", "foo-node", "{}", "{" HASH_2 "," ELSE "}" }, 0 },
	{ "Different spec, the former doesn't have pod-template-hash label",
	  { "foo-1", "foo-node-1", "{}", "{" ELSE "}" },
	  { "foo-2", "foo-node-2", "{}", "{" HASH_2 "," ELSE "}" }, 0 },
	{ "Different spec, different labels",
	  { "foo", "foo-node-1", "{}", "{" ELSE "}" },
	  { "foo", "foo-node-2", "{}", "{\"nothing\":\"else\"}" }, 0 },
	/* sqlkcm's: what JSON adds to Go's semantic equality. */
	{ "sqlkcm: only the hash label, against no labels",
	  { "foo", "foo-node", "{}", "{" HASH_1 "}" },
	  { "foo", "foo-node", "{}", "null" }, 1 },
	{ "sqlkcm: empty annotations, against null ones",
	  { "foo", "foo-node", "{}", "{" ELSE "}" },
	  { "foo", "foo-node", "null", "{" ELSE "}" }, 1 },
	{ "sqlkcm: members in another order",
	  { "foo", "foo-node", "{\"a\":\"1\",\"b\":\"2\"}", "{" ELSE "," HASH_1 "}" },
	  { "foo", "foo-node", "{\"b\":\"2\",\"a\":\"1\"}", "{" HASH_2 "," ELSE "}" }, 1 },
};

static void
templates_equal_follows_kubes_equal_ignore_hash_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(equal_cases); i++) {
		const struct equal_case *c = &equal_cases[i];
		cJSON *a = pod_template(&c->former), *b = pod_template(&c->latter);
		char *before_a = print(a), *before_b = print(b), *after_a, *after_b;

		if (deployment_templates_equal(a, b) != c->want)
			fail_msg("%s: want %d", c->name, c->want);
		if (deployment_templates_equal(b, a) != c->want)
			fail_msg("%s (reverse order): want %d", c->name, c->want);
		/* The templates are left as they were (kube checks the labels stay). */
		after_a = print(a);
		after_b = print(b);
		assert_string_equal(before_a, after_a);
		assert_string_equal(before_b, after_b);
		free(before_a);
		free(before_b);
		free(after_a);
		free(after_b);
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
}

/* sqlkcm's: nothing (absent, null, {} and []) is one value; numbers compare by value;
 * arrays keep their order. */
static const struct json_equal_case {
	const char *name;
	const char *a, *b;
	int want;
} json_equal_cases[] = {
	{ "sqlkcm: absent and null", "{}", "{\"spec\":null}", 1 },
	{ "sqlkcm: absent and empty object", "{}", "{\"spec\":{}}", 1 },
	{ "sqlkcm: absent and empty array", "{\"spec\":{}}",
	  "{\"spec\":{\"volumes\":[]}}", 1 },
	{ "sqlkcm: null and empty array", "{\"spec\":{\"volumes\":null}}",
	  "{\"spec\":{\"volumes\":[]}}", 1 },
	{ "sqlkcm: number by value", "{\"spec\":{\"x\":1}}", "{\"spec\":{\"x\":1.0}}", 1 },
	{ "sqlkcm: number and string", "{\"spec\":{\"x\":1}}", "{\"spec\":{\"x\":\"1\"}}",
	  0 },
	{ "sqlkcm: false and absent", "{\"spec\":{\"x\":false}}", "{\"spec\":{}}", 0 },
	{ "sqlkcm: array order", "{\"a\":[1,2]}", "{\"a\":[2,1]}", 0 },
	{ "sqlkcm: array length", "{\"a\":[1,2]}", "{\"a\":[1]}", 0 },
	{ "sqlkcm: nested member order", "{\"a\":[{\"x\":1,\"y\":[]}],\"b\":true}",
	  "{\"b\":true,\"a\":[{\"y\":null,\"x\":1}]}", 1 },
	{ "sqlkcm: hash label elsewhere counts", "{\"spec\":{\"labels\":{" HASH_1 "}}}",
	  "{\"spec\":{\"labels\":{" HASH_2 "}}}", 0 },
};

static void
templates_equal_reads_json_as_go_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(json_equal_cases); i++) {
		const struct json_equal_case *c = &json_equal_cases[i];
		cJSON *a = json("%s", c->a), *b = json("%s", c->b);

		if (deployment_templates_equal(a, b) != c->want ||
		    deployment_templates_equal(b, a) != c->want)
			fail_msg("%s: want %d", c->name, c->want);
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
}

/* --- the hash and the name --------------------------------------------------------------- */

/* hash_test.go's podSpec, in two halves around its image version. */
static const char hash_pod_spec_head[] =
    "{\"metadata\":{\"labels\":{\"app\":\"cats\"}},\"spec\":{\"containers\":[{"
    "\"name\":\"cats\",\"image\":\"registry/test/cats:v0.";
static const char hash_pod_spec_tail[] =
    ".0\","
    "\"ports\":[{\"name\":\"http\",\"containerPort\":9077,\"protocol\":\"TCP\"}],"
    "\"env\":[{\"name\":\"DEPLOYMENT_ENVIRONMENT\",\"value\":\"cats-stubbed-functional\"},"
    "{\"name\":\"APP_NAME\",\"value\":\"cats\"}],"
    "\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},"
    "\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}},"
    "\"livenessProbe\":{\"httpGet\":{\"path\":\"/private/status\",\"port\":9077,"
    "\"scheme\":\"HTTP\"},\"initialDelaySeconds\":30,\"timeoutSeconds\":1,"
    "\"periodSeconds\":10,\"successThreshold\":1,\"failureThreshold\":3},"
    "\"readinessProbe\":{\"httpGet\":{\"path\":\"/private/status\",\"port\":9077,"
    "\"scheme\":\"HTTP\"},\"initialDelaySeconds\":1,\"timeoutSeconds\":1,"
    "\"periodSeconds\":10,\"successThreshold\":1,\"failureThreshold\":3},"
    "\"terminationMessagePath\":\"/dev/termination-log\","
    "\"imagePullPolicy\":\"IfNotPresent\"}],"
    "\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,"
    "\"dnsPolicy\":\"ClusterFirst\",\"securityContext\":{}}}";

static int
string_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* kube's TestPodTemplateSpecHash: a thousand versions of one template, no two alike. */
static void
template_hash_follows_kubes_pod_template_spec_hash(void **state)
{
	enum { VERSIONS = 1000 };
	char **hashes = xcalloc(VERSIONS, sizeof *hashes);

	(void)state;
	for (int i = 0; i < VERSIONS; i++) {
		cJSON *t = json("%s%d%s", hash_pod_spec_head, i, hash_pod_spec_tail);

		hashes[i] = deployment_template_hash(t, 0);
		cJSON_Delete(t);
	}
	qsort(hashes, VERSIONS, sizeof *hashes, string_cmp);
	for (int i = 1; i < VERSIONS; i++)
		if (strcmp(hashes[i - 1], hashes[i]) == 0)
			fail_msg("hash collision: %s", hashes[i]);
	for (int i = 0; i < VERSIONS; i++)
		free(hashes[i]);
	free(hashes);
}

/* sqlkcm's: the hash is fnv-1a of the canonical text (sorted members, no spaces), the
 * collision count after it, in kube's safe alphabet; pinned to values worked out apart
 * from the code, so that a change to the printer shows. */
static void
template_hash_is_stable_and_canonical(void **state)
{
	cJSON *t = json("{\"spec\":{\"containers\":[{\"name\":\"web\","
	    "\"image\":\"nginx:1.27\"}]},\"metadata\":{\"labels\":{\"app\":\"web\"}}}");
	cJSON *same = json("{ \"metadata\" : { \"labels\" : { \"app\" : \"web\" } }, "
	    "\"spec\" : { \"containers\" : [ { \"image\" : \"nginx:1.27\", "
	    "\"name\" : \"web\" } ] } }");
	cJSON *empty = json("{}");
	char *h0 = deployment_template_hash(t, 0), *again = deployment_template_hash(t, 0);
	char *reordered = deployment_template_hash(same, 0);
	char *h1 = deployment_template_hash(t, 1), *h2 = deployment_template_hash(t, 2);
	char *he = deployment_template_hash(empty, 0), *labelled;
	const char *safe = "bcdfghjklmnpqrstvwxz2456789";

	(void)state;
	assert_string_equal(h0, "6c8d7489d5");
	assert_string_equal(h1, "d898ff9b");
	assert_string_equal(he, "5859f96865");
	assert_string_equal(h0, again);
	assert_string_equal(h0, reordered);
	assert_string_not_equal(h0, h1);
	assert_string_not_equal(h1, h2);
	for (const char *p = h2; *p != '\0'; p++)
		assert_non_null(strchr(safe, *p));
	/* The hash label is part of what is hashed. */
	cJSON_AddStringToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "metadata"),
	    "labels"), DEPLOYMENT_HASH_LABEL, h0);
	labelled = deployment_template_hash(t, 0);
	assert_string_not_equal(h0, labelled);
	free(h0);
	free(again);
	free(reordered);
	free(h1);
	free(h2);
	free(he);
	free(labelled);
	cJSON_Delete(t);
	cJSON_Delete(same);
	cJSON_Delete(empty);
}

/* kube's TestGenerateReplicaSetName, and TestDeploymentController_generateReplicaSetName
 * (its hash here of 10 characters): names as runs of one character. */
static const struct name_case {
	const char *name;
	char name_char;
	int name_len;
	char hash_char;
	int hash_len;
	int want_name_len;	/* how much of the name stays */
} name_cases[] = {
	{ "TestGenerateReplicaSetName: maximum length without truncating", 'a', 242, 'h', 10,
	  242 },
	{ "TestGenerateReplicaSetName: very long deployment name is truncated", 'b', 250,
	  'h', 10, 242 },
	{ "TestGenerateReplicaSetName: very long hash is not truncated", 'd', 252, 'h', 252,
	  252 },
	{ "generateReplicaSetName: very long name truncated", 'a', 250, 'h', 10, 242 },
	{ "generateReplicaSetName: very long name not truncated", 'a', 242, 'h', 10, 242 },
	{ "sqlkcm: a hash that leaves one character", 'a', 5, 'h', 251, 1 },
	{ "sqlkcm: a hash that leaves none", 'a', 5, 'h', 252, 5 },
};

static void
rs_name_follows_kubes_generate_replica_set_name_cases(void **state)
{
	char *got;

	(void)state;
	/* TestGenerateReplicaSetName: short name (and generateReplicaSetName's). */
	got = deployment_rs_name("my-deployment", "abcde12345");
	assert_string_equal(got, "my-deployment-abcde12345");
	free(got);
	for (size_t i = 0; i < NELEM(name_cases); i++) {
		const struct name_case *c = &name_cases[i];
		char *name = repeat(c->name_char, c->name_len);
		char *hash = repeat(c->hash_char, c->hash_len);
		char *want = xasprintf("%.*s-%s", c->want_name_len, name, hash);

		got = deployment_rs_name(name, hash);
		if (strcmp(got, want) != 0)
			fail_msg("%s: %zu characters, want %zu", c->name, strlen(got),
			    strlen(want));
		free(name);
		free(hash);
		free(want);
		free(got);
	}
}

/* --- status ------------------------------------------------------------------------------ */

/* kube's TestDeploymentComplete: desired, current, updated, available, maxUnavailable,
 * maxSurge; the new status is the Deployment's own. */
static const struct complete_case {
	const char *name;
	long long desired, current, updated, available, max_unavailable, max_surge;
	int want;
} complete_cases[] = {
	{ "not complete: min but not all pods become available", 5, 5, 5, 4, 1, 0, 0 },
	{ "not complete: min availability is not honored", 5, 5, 5, 3, 1, 0, 0 },
	{ "complete", 5, 5, 5, 5, 0, 0, 1 },
	{ "not complete: all pods are available but not updated", 5, 5, 4, 5, 0, 0, 0 },
	{ "not complete: still running old pods", 1, 2, 1, 1, 0, 1, 0 },
	{ "not complete: one replica deployment never comes up", 1, 1, 1, 0, 1, 1, 0 },
};

static void
complete_follows_kubes_deployment_complete_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(complete_cases); i++) {
		const struct complete_case *c = &complete_cases[i];
		char surge[32], unavailable[32];
		cJSON *d;

		snprintf(surge, sizeof surge, "%lld", c->max_surge);
		snprintf(unavailable, sizeof unavailable, "%lld", c->max_unavailable);
		d = rolling_deployment(c->desired, surge, unavailable);
		cJSON_AddItemToObject(d, "status", json("{\"replicas\":%lld,"
		    "\"updatedReplicas\":%lld,\"availableReplicas\":%lld}", c->current,
		    c->updated, c->available));
		if (deployment_complete(d, cJSON_GetObjectItem(d, "status")) != c->want)
			fail_msg("%s: want %d", c->name, c->want);
		cJSON_Delete(d);
	}
}

/* sqlkcm's, from DeploymentComplete: a status not yet of the latest generation is not
 * complete. */
static void
complete_waits_for_the_generation(void **state)
{
	cJSON *d = json("{\"metadata\":{\"generation\":3},\"spec\":{\"replicas\":2}}");
	cJSON *status = json("{\"replicas\":2,\"updatedReplicas\":2,\"availableReplicas\":2,"
	    "\"observedGeneration\":2}");

	(void)state;
	assert_false(deployment_complete(d, status));
	cJSON_ReplaceItemInObject(status, "observedGeneration", cJSON_CreateNumber(3));
	assert_true(deployment_complete(d, status));
	cJSON_Delete(d);
	cJSON_Delete(status);
}

/* kube's TestDeploymentProgressing: the old status and the new one, each current,
 * updated, ready, available. */
static const struct progressing_case {
	const char *name;
	long long old[4], new[4];
	int want;
} progressing_cases[] = {
	{ "progressing: updated pods", { 10, 4, 4, 4 }, { 10, 6, 4, 4 }, 1 },
	{ "not progressing", { 10, 4, 4, 4 }, { 10, 4, 4, 4 }, 0 },
	{ "progressing: old pods removed", { 10, 4, 6, 6 }, { 8, 4, 6, 6 }, 1 },
	{ "not progressing: less new pods", { 10, 7, 3, 3 }, { 10, 6, 3, 3 }, 0 },
	{ "progressing: less overall but more new pods", { 10, 4, 7, 7 }, { 8, 8, 5, 5 }, 1 },
	{ "progressing: more ready pods", { 10, 10, 9, 8 }, { 10, 10, 10, 8 }, 1 },
	{ "progressing: more available pods", { 10, 10, 10, 9 }, { 10, 10, 10, 10 }, 1 },
};

static cJSON *
status_of(const long long counts[4])
{
	return json("{\"replicas\":%lld,\"updatedReplicas\":%lld,\"readyReplicas\":%lld,"
	    "\"availableReplicas\":%lld}", counts[0], counts[1], counts[2], counts[3]);
}

static void
progressing_follows_kubes_deployment_progressing_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(progressing_cases); i++) {
		const struct progressing_case *c = &progressing_cases[i];
		cJSON *d = json("{}"), *status = status_of(c->new);

		cJSON_AddItemToObject(d, "status", status_of(c->old));
		if (deployment_progressing(d, status) != c->want)
			fail_msg("%s: want %d", c->name, c->want);
		cJSON_Delete(d);
		cJSON_Delete(status);
	}
}

/* kube's TestDeploymentTimedOut: the Progressing condition's status, reason and
 * lastUpdateTime, progressDeadlineSeconds (ABSENT: nil), and now, on 2016-01-01. */
static const struct timed_out_case {
	const char *name;
	const char *type, *reason, *from;
	long long deadline;
	const char *now;
	int want;
} timed_out_cases[] = {
	{ "nil progressDeadlineSeconds specified - no timeout", "Progressing", "",
	  "2016-01-01T00:01:09Z", ABSENT, "2016-01-01T00:01:20Z", 0 },
	{ "infinite progressDeadlineSeconds specified - no timeout", "Progressing", "",
	  "2016-01-01T00:01:09Z", MAX_INT32, "2016-01-01T00:01:20Z", 0 },
	{ "progressDeadlineSeconds: 10s, now - started => 00:01:20 - 00:01:09 => 11s",
	  "Progressing", "", "2016-01-01T00:01:09Z", 10, "2016-01-01T00:01:20Z", 1 },
	{ "progressDeadlineSeconds: 10s, now - started => 00:01:20 - 00:01:11 => 9s",
	  "Progressing", "", "2016-01-01T00:01:11Z", 10, "2016-01-01T00:01:20Z", 0 },
	{ "previous status was a complete deployment", "Progressing",
	  "NewReplicaSetAvailable", "0001-01-01T00:00:00Z", ABSENT, "2016-01-01T00:01:20Z",
	  0 },
	/* sqlkcm's, from DeploymentTimedOut's rules. */
	{ "sqlkcm: exactly at the deadline", "Progressing", "", "2016-01-01T00:01:10Z", 10,
	  "2016-01-01T00:01:20Z", 0 },
	{ "sqlkcm: a complete rollout with a deadline", "Progressing",
	  "NewReplicaSetAvailable", "2016-01-01T00:00:00Z", 10, "2016-01-01T00:01:20Z", 0 },
	{ "sqlkcm: already timed out", "Progressing", "ProgressDeadlineExceeded",
	  "2016-01-01T00:01:19Z", 10, "2016-01-01T00:01:20Z", 1 },
	{ "sqlkcm: no Progressing condition", "Available", "", "2016-01-01T00:00:00Z", 10,
	  "2016-01-01T00:01:20Z", 0 },
};

static void
timed_out_follows_kubes_deployment_timed_out_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(timed_out_cases); i++) {
		const struct timed_out_case *c = &timed_out_cases[i];
		cJSON *d = json("{\"spec\":{},\"status\":{\"conditions\":[{\"type\":\"%s\","
		    "\"status\":\"True\",\"reason\":\"%s\",\"lastUpdateTime\":\"%s\"}]}}",
		    c->type, c->reason, c->from);
		time_t now;

		assert_int_equal(time_parse_rfc3339(c->now, &now), 0);
		if (c->deadline != ABSENT)
			cJSON_AddNumberToObject(cJSON_GetObjectItem(d, "spec"),
			    "progressDeadlineSeconds", (double)c->deadline);
		if (deployment_timed_out(d, cJSON_GetObjectItem(d, "status"), (double)now) !=
		    c->want)
			fail_msg("%s: want %d", c->name, c->want);
		cJSON_Delete(d);
	}
}

/* sqlkcm's, from HasProgressDeadline and HasRevisionHistoryLimit: MaxInt32 means none. */
static void
limits_are_unset_when_absent_or_max_int32(void **state)
{
	cJSON *none = json("{\"spec\":{}}");
	cJSON *max = json("{\"spec\":{\"progressDeadlineSeconds\":2147483647,"
	    "\"revisionHistoryLimit\":2147483647}}");
	cJSON *zero = json("{\"spec\":{\"progressDeadlineSeconds\":600,"
	    "\"revisionHistoryLimit\":0}}");

	(void)state;
	assert_false(deployment_has_progress_deadline(none));
	assert_false(deployment_has_history_limit(none));
	assert_false(deployment_has_progress_deadline(max));
	assert_false(deployment_has_history_limit(max));
	assert_true(deployment_has_progress_deadline(zero));
	assert_true(deployment_has_history_limit(zero));
	cJSON_Delete(none);
	cJSON_Delete(max);
	cJSON_Delete(zero);
}

/* --- conditions -------------------------------------------------------------------------- */

/* The conditions of status as "type/status/reason" joined by spaces; the caller frees it. */
static char *
conditions_summary(const cJSON *status)
{
	const cJSON *c;
	struct buf b;

	buf_init(&b);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(status, "conditions")) {
		const cJSON *reason = cJSON_GetObjectItem(c, "reason");

		buf_printf(&b, "%s%s/%s/%s", b.len > 0 ? " " : "",
		    cJSON_GetObjectItem(c, "type")->valuestring,
		    cJSON_GetObjectItem(c, "status")->valuestring,
		    reason != NULL ? reason->valuestring : "");
	}
	return buf_detach(&b);
}

/* Makes a status from its summary ("" for none); every condition stamped old. */
static cJSON *
status_from_summary(const char *summary)
{
	cJSON *status = json("{}");
	char *copy = xstrdup(summary), *save = NULL;

	for (char *w = strtok_r(copy, " ", &save); w != NULL; w = strtok_r(NULL, " ", &save)) {
		char *type = w, *st = strchr(type, '/'), *reason;

		assert_non_null(st);
		*st++ = '\0';
		reason = strchr(st, '/');
		assert_non_null(reason);
		*reason++ = '\0';
		deployment_condition_set(status, deployment_condition_new(type, st, reason,
		    NULL, "2016-01-01T00:00:00Z"));
	}
	free(copy);
	return status;
}

#define PROGRESSING "Progressing/False/ForSomeReason"
#define PROGRESSING_2 "Progressing/True/BecauseItIs"
#define AVAILABLE "Available/True/AwesomeController"

/* kube's TestSetCondition. */
static const struct set_condition_case {
	const char *name;
	const char *status, *cond, *want;
} set_condition_cases[] = {
	{ "set for the first time", "", AVAILABLE, AVAILABLE },
	{ "simple set", PROGRESSING, AVAILABLE, PROGRESSING " " AVAILABLE },
	{ "overwrite", PROGRESSING, PROGRESSING_2, PROGRESSING_2 },
	/* sqlkcm's: the new one goes last. */
	{ "sqlkcm: overwrite moves it last", PROGRESSING " " AVAILABLE, PROGRESSING_2,
	  AVAILABLE " " PROGRESSING_2 },
};

static void
condition_set_follows_kubes_set_condition_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(set_condition_cases); i++) {
		const struct set_condition_case *c = &set_condition_cases[i];
		cJSON *status = status_from_summary(c->status);
		cJSON *cond = status_from_summary(c->cond);
		char *got;

		deployment_condition_set(status, cJSON_DetachItemFromArray(
		    cJSON_GetObjectItem(cond, "conditions"), 0));
		got = conditions_summary(status);
		if (strcmp(got, c->want) != 0)
			fail_msg("%s: %s, want %s", c->name, got, c->want);
		free(got);
		cJSON_Delete(status);
		cJSON_Delete(cond);
	}
}

/* kube's TestRemoveCondition, and TestGetCondition. */
static const struct remove_condition_case {
	const char *name;
	const char *status, *type, *want;
} remove_condition_cases[] = {
	{ "remove from empty status", "", "Progressing", "{}" },
	{ "simple remove", PROGRESSING, "Progressing", "{}" },
	{ "doesn't remove anything", PROGRESSING " " AVAILABLE, "ReplicaFailure", NULL },
};

static void
condition_remove_follows_kubes_remove_condition_cases(void **state)
{
	cJSON *status;

	(void)state;
	for (size_t i = 0; i < NELEM(remove_condition_cases); i++) {
		const struct remove_condition_case *c = &remove_condition_cases[i];
		char *before, *after;

		status = status_from_summary(c->status);
		before = print(status);
		deployment_condition_remove(status, c->type);
		after = print(status);
		if (strcmp(after, c->want != NULL ? c->want : before) != 0)
			fail_msg("%s: %s", c->name, after);
		free(before);
		free(after);
		cJSON_Delete(status);
	}

	/* TestGetCondition: "condition exists", "condition does not exist". */
	status = status_from_summary(PROGRESSING " " AVAILABLE);
	assert_non_null(deployment_condition_get(status, "Available"));
	assert_null(deployment_condition_get(status, "ReplicaFailure"));
	cJSON_Delete(status);
}

/* sqlkcm's, from SetDeploymentCondition: the same status and reason changes nothing, not
 * even the stamps; a new reason for the same status keeps the transition time; a new
 * status takes both new times. */
static void
condition_set_keeps_the_transition_time(void **state)
{
	cJSON *status = json("{}");
	const cJSON *c;
	char *text;

	(void)state;
	deployment_condition_set(status, deployment_condition_new("Progressing", "True",
	    "NewReplicaSetCreated", "Created new replica set", "2016-01-01T00:00:00Z"));
	text = print(status);
	assert_string_equal(text, "{\"conditions\":[{\"type\":\"Progressing\",\"status\":"
	    "\"True\",\"lastUpdateTime\":\"2016-01-01T00:00:00Z\",\"lastTransitionTime\":"
	    "\"2016-01-01T00:00:00Z\",\"reason\":\"NewReplicaSetCreated\",\"message\":"
	    "\"Created new replica set\"}]}");
	free(text);

	deployment_condition_set(status, deployment_condition_new("Progressing", "True",
	    "NewReplicaSetCreated", "another message", "2016-01-01T00:05:00Z"));
	c = deployment_condition_get(status, "Progressing");
	assert_string_equal(cJSON_GetObjectItem(c, "lastUpdateTime")->valuestring,
	    "2016-01-01T00:00:00Z");
	assert_string_equal(cJSON_GetObjectItem(c, "message")->valuestring,
	    "Created new replica set");

	deployment_condition_set(status, deployment_condition_new("Progressing", "True",
	    "ReplicaSetUpdated", "updated", "2016-01-01T00:10:00Z"));
	c = deployment_condition_get(status, "Progressing");
	assert_string_equal(cJSON_GetObjectItem(c, "lastUpdateTime")->valuestring,
	    "2016-01-01T00:10:00Z");
	assert_string_equal(cJSON_GetObjectItem(c, "lastTransitionTime")->valuestring,
	    "2016-01-01T00:00:00Z");
	assert_string_equal(cJSON_GetObjectItem(c, "reason")->valuestring,
	    "ReplicaSetUpdated");

	deployment_condition_set(status, deployment_condition_new("Progressing", "False",
	    "ProgressDeadlineExceeded", "timed out", "2016-01-01T00:20:00Z"));
	c = deployment_condition_get(status, "Progressing");
	assert_string_equal(cJSON_GetObjectItem(c, "lastTransitionTime")->valuestring,
	    "2016-01-01T00:20:00Z");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(status, "conditions")), 1);
	cJSON_Delete(status);
}

/* --- syncs: the objects ------------------------------------------------------------------- */

#define TEST_TIME "2017-02-15T18:49:00Z"	/* progress_test.go's testTime */

/* A Deployment as kube's newDeployment makes it (name foo in default, maxSurge and
 * maxUnavailable 0, selector and template labels {foo: bar}), with what a case changes. */
struct dep {
	const char *name;		/* NULL: foo; its uid is uid-<name> */
	long long replicas;
	const char *max_surge, *max_unavailable;	/* JSON; NULL: 0 */
	int recreate;
	const char *selector;		/* matchLabels JSON; NULL: {"foo":"bar"} */
	int empty_selector;		/* spec.selector {} */
	const char *labels;		/* the template's labels (JSON); NULL: the
					   selector's */
	const char *history;		/* revisionHistoryLimit JSON; NULL: none */
	const char *deadline;		/* progressDeadlineSeconds JSON; NULL: none */
	const char *revision;		/* its revision annotation; NULL: none */
	const char *rollback_to;	/* the deprecated rollback-to annotation; NULL: none */
	const char *status;		/* JSON; NULL: none */
	int paused;
	double deleting;		/* deletionTimestamp; 0: none */
	long long generation;		/* 0: none */
};

/* A ReplicaSet of a Deployment d, as kube's newReplicaSet makes one: its template is d's
 * (or an old one), with the pod-template-hash label (its name) in the template, the
 * labels and the selector. */
struct rset {
	const char *name;		/* its uid is uid-<name> */
	long long replicas;
	int old;			/* 0: d's template; n > 0: the n-th old one */
	int at;				/* created at NOW - DAY + at hours: larger is
					   newer; all 0 as kube's noTimestamp, then by
					   name */
	const char *revision;		/* NULL: none */
	const char *status;		/* JSON; NULL: none */
	const char *desired, *max;	/* the replicas annotations; NULL: none */
	const char *owner;		/* the controller's uid; NULL: d's; "": an orphan */
	const char *labels;		/* JSON; NULL: its template's */
	double deleting;		/* deletionTimestamp; 0: none */
	long long generation;		/* 0: none */
};

static const char *
dep_name(const struct dep *d)
{
	return d->name != NULL ? d->name : "foo";
}

static const char *
dep_selector(const struct dep *d)
{
	return d->selector != NULL ? d->selector : "{\"foo\":\"bar\"}";
}

/* d's pod template (old 0), or the old-th old one (the selector's labels, another image). */
static cJSON *
pod_template_of(const struct dep *d, int old)
{
	if (old > 0)
		return json("{\"metadata\":{\"labels\":%s},\"spec\":{\"containers\":[{"
		    "\"name\":\"c\",\"image\":\"foo/bar:old-%d\"}],"
		    "\"restartPolicy\":\"Always\"}}", dep_selector(d), old);
	return json("{\"metadata\":{\"labels\":%s},\"spec\":{\"containers\":[{\"name\":\"c\","
	    "\"image\":\"foo/bar\"}],\"restartPolicy\":\"Always\"}}",
	    d->labels != NULL ? d->labels : dep_selector(d));
}

/* Sets annotation key of object to value (NULL: leaves it alone). */
static void
annotate_if(cJSON *object, const char *key, const char *value)
{
	if (value != NULL)
		annotate(object, key, value);
}

static cJSON *
dep_object(const struct dep *d)
{
	cJSON *o = json("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
	    "\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\","
	    "\"resourceVersion\":\"5\",\"annotations\":{}},\"spec\":{\"replicas\":%lld}}",
	    dep_name(d), dep_name(d), d->replicas);
	cJSON *meta = cJSON_GetObjectItem(o, "metadata");
	cJSON *spec = cJSON_GetObjectItem(o, "spec");

	fixture_add_time(meta, "creationTimestamp", NOW - 2 * DAY);
	if (d->generation != 0)
		cJSON_AddNumberToObject(meta, "generation", (double)d->generation);
	if (d->deleting != 0)
		fixture_add_time(meta, "deletionTimestamp", d->deleting);
	annotate_if(o, DEPLOYMENT_REVISION_ANNOTATION, d->revision);
	annotate_if(o, DEPLOYMENT_ROLLBACK_TO_ANNOTATION, d->rollback_to);
	if (d->empty_selector)
		cJSON_AddItemToObject(spec, "selector", json("{}"));
	else
		cJSON_AddItemToObject(spec, "selector", json("{\"matchLabels\":%s}",
		    dep_selector(d)));
	cJSON_AddItemToObject(spec, "template", pod_template_of(d, 0));
	if (d->recreate)
		cJSON_AddItemToObject(spec, "strategy", json("{\"type\":\"Recreate\"}"));
	else
		cJSON_AddItemToObject(spec, "strategy", json("{\"type\":\"RollingUpdate\","
		    "\"rollingUpdate\":{\"maxSurge\":%s,\"maxUnavailable\":%s}}",
		    d->max_surge != NULL ? d->max_surge : "0",
		    d->max_unavailable != NULL ? d->max_unavailable : "0"));
	if (d->history != NULL)
		cJSON_AddItemToObject(spec, "revisionHistoryLimit", json("%s", d->history));
	if (d->deadline != NULL)
		cJSON_AddItemToObject(spec, "progressDeadlineSeconds", json("%s", d->deadline));
	if (d->paused)
		cJSON_AddTrueToObject(spec, "paused");
	if (d->status != NULL)
		cJSON_AddItemToObject(o, "status", json("%s", d->status));
	return o;
}

static cJSON *
rs_object(const struct dep *d, const struct rset *r)
{
	cJSON *o = json("{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{"
	    "\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\","
	    "\"resourceVersion\":\"7\"},\"spec\":{\"replicas\":%lld}}", r->name, r->name,
	    r->replicas);
	cJSON *meta = cJSON_GetObjectItem(o, "metadata");
	cJSON *spec = cJSON_GetObjectItem(o, "spec");
	cJSON *template = pod_template_of(d, r->old), *selector;

	fixture_add_time(meta, "creationTimestamp", NOW - DAY + r->at * HOUR);
	if (r->deleting != 0)
		fixture_add_time(meta, "deletionTimestamp", r->deleting);
	if (r->generation != 0)
		cJSON_AddNumberToObject(meta, "generation", (double)r->generation);
	if (r->owner == NULL || r->owner[0] != '\0')
		cJSON_AddItemToObject(meta, "ownerReferences", json("[{"
		    "\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"%s\","
		    "\"uid\":\"%s%s\",\"controller\":true,\"blockOwnerDeletion\":true}]",
		    dep_name(d), r->owner != NULL ? "" : "uid-",
		    r->owner != NULL ? r->owner : dep_name(d)));
	cJSON_AddStringToObject(cJSON_GetObjectItem(cJSON_GetObjectItem(template, "metadata"),
	    "labels"), DEPLOYMENT_HASH_LABEL, r->name);
	cJSON_AddItemToObject(meta, "labels", r->labels != NULL ? json("%s", r->labels) :
	    cJSON_Duplicate(json_path(template, "metadata.labels"), 1));
	selector = json("{\"matchLabels\":%s}", dep_selector(d));
	cJSON_AddStringToObject(cJSON_GetObjectItem(selector, "matchLabels"),
	    DEPLOYMENT_HASH_LABEL, r->name);
	cJSON_AddItemToObject(spec, "selector", selector);
	cJSON_AddItemToObject(spec, "template", template);
	annotate_if(o, DEPLOYMENT_REVISION_ANNOTATION, r->revision);
	annotate_if(o, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION, r->desired);
	annotate_if(o, DEPLOYMENT_MAX_REPLICAS_ANNOTATION, r->max);
	if (r->status != NULL)
		cJSON_AddItemToObject(o, "status", json("%s", r->status));
	return o;
}

/* --- syncs: the store, the controller and what a sync decides ----------------------------- */

/* A store holding a Deployment and its ReplicaSets, and a Deployment controller over it. */
struct world {
	struct fixture *f;
	struct controller *c;
	cJSON *d;		/* the Deployment as cached */
	char *key;
};

static void
world_add_deployment(struct world *w, const struct dep *d)
{
	fixture_upsert(w->f, resource_find("deployments"), dep_object(d));
}

static void
world_add_rs(struct world *w, const struct dep *d, const struct rset *r)
{
	fixture_upsert(w->f, w->f->replicasets, rs_object(d, r));
}

static void
world_add_pod(struct world *w, const char *name, const char *owner, const char *phase)
{
	add_pod(w->f, &(struct pod){ .name = name, .owner = owner, .phase = phase });
}

static void
world_init(struct world *w, const struct dep *d, const struct rset *rs, int n)
{
	char *error = NULL;

	w->f = fixture_new();
	w->c = controller_new(&deployment_controller_type, w->f->store, NULL, &error);
	if (w->c == NULL)
		fail_msg("controller_new: %s", error);
	w->d = dep_object(d);
	w->key = xasprintf("default/%s", dep_name(d));
	world_add_deployment(w, d);
	for (int i = 0; i < n; i++)
		world_add_rs(w, d, &rs[i]);
}

static void
world_free(struct world *w)
{
	controller_free(w->c);
	fixture_free(w->f);
	cJSON_Delete(w->d);
	free(w->key);
}

/* The annotation key of a write's body (or of its metadata's patch), or NULL. */
static const char *
body_annotation(const struct action *a, const char *key)
{
	return annotation(a->body, key);
}

/*
 * What holds of every sync's writes: a scale is a patch of spec.replicas with the
 * Deployment's desired- and max-replicas annotations (scaleReplicaSet's
 * SetReplicasAnnotations);
 * the first write of a ReplicaSet carries the resourceVersion it was computed from, later
 * ones of the same sync none; a creation is named <deployment>-<hash>; a deletion carries
 * the uid.
 */
static void
check_writes(const struct world *w, const struct sync_result *r)
{
	long long replicas = deployment_spec_replicas(w->d);
	char desired[32], max[32];

	snprintf(desired, sizeof desired, "%lld", replicas);
	snprintf(max, sizeof max, "%lld", replicas + deployment_max_surge(w->d));
	for (int i = 0; i < r->nwrites; i++) {
		const struct action *a = &r->writes[i];
		int first = 1;

		for (int j = 0; j < i; j++)
			if (r->writes[j].name != NULL && a->name != NULL &&
			    strcmp(r->writes[j].name, a->name) == 0)
				first = 0;
		if (strcmp(a->verb, "scale") == 0) {
			const char *d, *m;

			d = body_annotation(a, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION);
			m = body_annotation(a, DEPLOYMENT_MAX_REPLICAS_ANNOTATION);
			assert_int_equal(a->type, ACTION_PATCH);
			assert_ptr_equal(a->resource, resource_find("replicasets"));
			if (d == NULL || strcmp(d, desired) != 0 || m == NULL ||
			    strcmp(m, max) != 0)
				fail_msg("scale %s: annotations %s/%s, want %s/%s", a->name,
				    d != NULL ? d : "-", m != NULL ? m : "-", desired, max);
		}
		if (strcmp(a->verb, "scale") == 0 || strcmp(a->verb, "annotate") == 0) {
			if (first != json_is_set(a->body, "metadata.resourceVersion"))
				fail_msg("%s %s: resourceVersion %s", a->verb, a->name,
				    first ? "missing on its first write" : "on a later write");
		}
		if (strcmp(a->verb, "create") == 0) {
			assert_int_equal(a->type, ACTION_CREATE);
			assert_non_null(a->name);
			assert_int_equal(strncmp(a->name, json_string(w->d, "metadata.name"),
			    strlen(json_string(w->d, "metadata.name"))), 0);
		}
		if (strcmp(a->verb, "delete") == 0) {
			assert_int_equal(a->type, ACTION_DELETE);
			assert_non_null(a->uid);
		}
	}
}

/* Syncs w's Deployment at now into *r. */
static void
world_sync(struct world *w, double now, struct sync_result *r)
{
	char *error = NULL;

	memset(r, 0, sizeof *r);
	if (deployment_controller_type.sync(w->c, w->key, now, r, &error) != 0)
		fail_msg("sync %s: %s", w->key, error);
	check_writes(w, r);
}

/* r's writes as "create 3;scale foo-v1 4;annotate foo-v2;delete foo-1;rollback foo"
 * (a creation by its replicas only: its name is a hash). */
static char *
writes_text(const struct sync_result *r)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < r->nwrites; i++) {
		const struct action *a = &r->writes[i];

		buf_printf(&b, "%s%s", i > 0 ? ";" : "", a->verb);
		if (strcmp(a->verb, "create") == 0) {
			buf_printf(&b, " %lld", json_int(a->body, "spec.replicas", -1));
			continue;
		}
		buf_printf(&b, " %s", a->name);
		if (strcmp(a->verb, "scale") == 0)
			buf_printf(&b, " %lld", json_int(a->body, "spec.replicas", -1));
	}
	return buf_detach(&b);
}

/* Fails unless r's writes are want. */
static void
assert_writes(const char *what, const struct sync_result *r, const char *want)
{
	char *got = writes_text(r);

	if (strcmp(got, want) != 0)
		fail_msg("%s: writes \"%s\", want \"%s\"", what, got, want);
	free(got);
}

/* How many replicas r's scale writes whose reason has because took from ReplicaSets. */
static long long
scaled_down_by(const struct sync_result *r, const char *because)
{
	long long total = 0;

	for (int i = 0; i < r->nwrites; i++) {
		const struct action *a = &r->writes[i];
		long long from, to;
		const char *p;

		if (strcmp(a->verb, "scale") != 0 || strstr(a->reason, because) == NULL)
			continue;
		p = strrchr(a->reason, ':');
		assert_non_null(p);
		if (sscanf(p, ": %lld to %lld", &from, &to) != 2)
			fail_msg("reason \"%s\"", a->reason);
		total += from - to;
	}
	return total;
}

/* The size of the ReplicaSet name after r: its last scale write's, else initial. */
static long long
size_after(const struct sync_result *r, const char *name, long long initial)
{
	long long size = initial;

	for (int i = 0; i < r->nwrites; i++) {
		const struct action *a = &r->writes[i];

		if (strcmp(a->verb, "scale") == 0 && strcmp(a->name, name) == 0)
			size = json_int(a->body, "spec.replicas", -1);
	}
	return size;
}

/* The status r writes, or NULL. */
static const cJSON *
written_status(const struct sync_result *r)
{
	if (r->status == NULL || r->status->body == NULL)
		return NULL;
	return cJSON_GetObjectItem(r->status->body, "status");
}

/* The condition of type in status as "Status/Reason", or "none". Static. */
static const char *
condition_text(const cJSON *status, const char *type)
{
	static char text[128];
	const cJSON *c = deployment_condition_get(status, type);

	if (c == NULL)
		return "none";
	snprintf(text, sizeof text, "%s/%s", json_string(c, "status"),
	    json_string(c, "reason"));
	return text;
}

/* A time of a condition: "test" (TEST_TIME), "now" (NOW) or "none" (absent); NULL is
 * not checked. */
static void
assert_condition_time(const char *what, const cJSON *cond, const char *member,
    const char *want)
{
	char now[TIME_RFC3339_SIZE];
	const cJSON *v = cJSON_GetObjectItem(cond, member);
	const char *expect;

	if (want == NULL)
		return;
	time_format_rfc3339((time_t)NOW, now);
	expect = strcmp(want, "test") == 0 ? TEST_TIME : strcmp(want, "now") == 0 ? now : NULL;
	if (expect == NULL) {
		if (v != NULL)
			fail_msg("%s: %s is %s, want none", what, member,
			    cJSON_IsString(v) ? v->valuestring : "set");
		return;
	}
	if (!cJSON_IsString(v) || strcmp(v->valuestring, expect) != 0)
		fail_msg("%s: %s is %s, want %s", what, member,
		    cJSON_IsString(v) ? v->valuestring : "none", expect);
}

static double
parse_time(const char *s)
{
	time_t t;

	assert_int_equal(time_parse_rfc3339(s, &t), 0);
	return (double)t;
}

/* --- syncs: rolling updates (rolling_test.go) --------------------------------------------- */

/*
 * kube's TestDeploymentController_reconcileNewReplicaSet: the new ReplicaSet foo-new and an
 * old one foo-old (kube's rs() gives them no status: nothing available); maxUnavailable 0.
 * When the new one is scaled the sync ends there, as rolloutRolling returns after it; when
 * it is not, reconcileOldReplicaSets runs in the same sync, and its scaling of foo-old
 * (worked out by kube's rules) is part of the writes.
 */
static const struct reconcile_new_case {
	const char *name;
	long long replicas;
	const char *max_surge;
	long long old_replicas, new_replicas;
	int scaled;			/* the new ReplicaSet is scaled */
	long long want_new;
	const char *want;
} reconcile_new_cases[] = {
	{ "reconcileNewReplicaSet #0: should not scale up", 10, "0", 10, 0, 0, 0,
	  "scale foo-old 9" },
	{ "reconcileNewReplicaSet #1", 10, "2", 10, 0, 1, 2, "scale foo-new 2" },
	{ "reconcileNewReplicaSet #2", 10, "2", 5, 0, 1, 7, "scale foo-new 7" },
	{ "reconcileNewReplicaSet #3", 10, "2", 10, 2, 0, 2, "" },
	{ "reconcileNewReplicaSet #4: should scale down", 10, "2", 2, 11, 1, 10,
	  "scale foo-new 10" },
};

static void
sync_reconciles_the_new_replicaset_as_kube(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(reconcile_new_cases); i++) {
		const struct reconcile_new_case *c = &reconcile_new_cases[i];
		struct dep d = { .replicas = c->replicas, .max_surge = c->max_surge,
		    .revision = "2" };
		struct rset rs[] = {
			{ .name = "foo-old", .replicas = c->old_replicas, .old = 1,
			  .revision = "1" },
			{ .name = "foo-new", .replicas = c->new_replicas, .at = 1,
			  .revision = "2" },
		};
		struct world w;
		struct sync_result r;
		long long got;

		world_init(&w, &d, rs, NELEM(rs));
		world_sync(&w, NOW, &r);
		assert_writes(c->name, &r, c->want);
		got = size_after(&r, "foo-new", c->new_replicas);
		if ((got != c->new_replicas) != c->scaled || got != c->want_new)
			fail_msg("%s: the new replica set has %lld, want %lld", c->name, got,
			    c->want_new);
		sync_result_clear(&r);
		world_free(&w);
	}
}

/*
 * kube's TestDeploymentController_reconcileOldReplicaSets: maxSurge 0. kube gives the two
 * ReplicaSets selectors of their own ({foo: new}, {foo: old}) that play no part in
 * reconcileOldReplicaSets; through a sync both must be the Deployment's to be claimed, so
 * both have its labels. reconcileNewReplicaSet, which runs first, scales nothing in these
 * rows.
 */
static const struct reconcile_old_case {
	const char *name;
	long long replicas;
	const char *max_unavailable;
	long long old_replicas, new_replicas, old_ready, new_ready;
	int scaled;
	long long want_old;
	const char *want;
} reconcile_old_cases[] = {
	{ "reconcileOldReplicaSets #0", 10, "0", 10, 0, 10, 0, 1, 9, "scale foo-old 9" },
	{ "reconcileOldReplicaSets #1", 10, "2", 10, 0, 10, 0, 1, 8, "scale foo-old 8" },
	{ "reconcileOldReplicaSets #2: unhealthy replicas from old replica sets cleaned up",
	  10, "2", 10, 0, 8, 0, 1, 8, "scale foo-old 8" },
	{ "reconcileOldReplicaSets #3: 1 unhealthy replica cleaned up, and 1 ready pod "
	  "scaled down", 10, "2", 10, 0, 9, 0, 1, 8, "scale foo-old 9;scale foo-old 8" },
	{ "reconcileOldReplicaSets #4: the unavailable pods from the newRS would not make us "
	  "scale down old RSs in a further step", 10, "2", 8, 2, 8, 0, 0, 8, "" },
};

static void
sync_reconciles_old_replicasets_as_kube(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(reconcile_old_cases); i++) {
		const struct reconcile_old_case *c = &reconcile_old_cases[i];
		struct dep d = { .replicas = c->replicas, .max_unavailable = c->max_unavailable,
		    .revision = "2" };
		char *old_status = xasprintf("{\"availableReplicas\":%lld}", c->old_ready);
		char *new_status = xasprintf("{\"availableReplicas\":%lld}", c->new_ready);
		struct rset rs[] = {
			{ .name = "foo-old", .replicas = c->old_replicas, .old = 1,
			  .revision = "1", .status = old_status },
			{ .name = "foo-new", .replicas = c->new_replicas, .at = 1,
			  .revision = "2", .status = new_status },
		};
		struct world w;
		struct sync_result r;
		long long got;

		world_init(&w, &d, rs, NELEM(rs));
		world_sync(&w, NOW, &r);
		assert_writes(c->name, &r, c->want);
		got = size_after(&r, "foo-old", c->old_replicas);
		if ((got != c->old_replicas) != c->scaled || got != c->want_old)
			fail_msg("%s: the old replica set has %lld, want %lld", c->name, got,
			    c->want_old);
		sync_result_clear(&r);
		world_free(&w);
		free(old_status);
		free(new_status);
	}
}

/*
 * kube's TestDeploymentController_cleanupUnhealthyReplicas: an old ReplicaSet of 10 with
 * ready_pods available, maxSurge and maxUnavailable 2; kube passes maxCleanupCount. A sync
 * passes reconcileOldReplicaSets' maxScaledDown (all pods - minAvailable - the new
 * ReplicaSet's unavailable ones), so the Deployment is sized to make it the row's count: a
 * new ReplicaSet of spec.replicas (nothing available) and 12 - maxCleanupCount replicas.
 * The cleanup's writes are told by their reason; what scaleDownOldReplicaSetsForRollingUpdate
 * then takes in the same sync is in the writes too.
 */
static const struct cleanup_unhealthy_case {
	const char *name;
	long long old_replicas, ready, max_cleanup, want_cleanup;
	const char *want;
} cleanup_unhealthy_cases[] = {
	{ "cleanupUnhealthyReplicas #0", 10, 8, 1, 1, "scale foo-old 9" },
	{ "cleanupUnhealthyReplicas #1", 10, 8, 3, 2, "scale foo-old 8;scale foo-old 7" },
	{ "cleanupUnhealthyReplicas #2", 10, 8, 0, 0, "" },
	{ "cleanupUnhealthyReplicas #3", 10, 10, 3, 0, "scale foo-old 7" },
};

static void
sync_cleans_up_unhealthy_replicas_as_kube(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(cleanup_unhealthy_cases); i++) {
		const struct cleanup_unhealthy_case *c = &cleanup_unhealthy_cases[i];
		long long replicas = 12 - c->max_cleanup, got;
		struct dep d = { .replicas = replicas, .max_surge = "2", .max_unavailable = "2",
		    .revision = "2" };
		char *old_status = xasprintf("{\"availableReplicas\":%lld}", c->ready);
		struct rset rs[] = {
			{ .name = "foo-old", .replicas = c->old_replicas, .old = 1,
			  .revision = "1", .status = old_status },
			{ .name = "foo-new", .replicas = replicas, .at = 1, .revision = "2" },
		};
		struct world w;
		struct sync_result r;

		world_init(&w, &d, rs, NELEM(rs));
		world_sync(&w, NOW, &r);
		assert_writes(c->name, &r, c->want);
		got = scaled_down_by(&r, "unhealthy");
		if (got != c->want_cleanup)
			fail_msg("%s: %lld unhealthy replicas cleaned up, want %lld", c->name,
			    got, c->want_cleanup);
		sync_result_clear(&r);
		world_free(&w);
		free(old_status);
	}
}

/*
 * kube's TestDeploymentController_scaleDownOldReplicaSetsForRollingUpdate: an old
 * ReplicaSet foo-v2 with ready_pods available, maxSurge 0. kube's allRSs is the old one
 * alone; a sync always has a new one, here foo-new of 0 replicas with nothing available,
 * which adds nothing to the sums. What scaleDownOldReplicaSetsForRollingUpdate takes is
 * told by the writes' reason; cleanupUnhealthyReplicas runs before it in a sync, and its
 * writes are in the list (rows #2 and #4); with no old replicas (#3) the new ReplicaSet
 * is scaled up first and the sync ends there.
 */
static const struct scale_down_old_case {
	const char *name;
	long long replicas;
	const char *max_unavailable;
	long long ready, old_replicas, want_scaled_down;
	const char *want;
} scale_down_old_cases[] = {
	{ "scaleDownOldReplicaSetsForRollingUpdate #0", 10, "0", 10, 10, 1, "scale foo-v2 9" },
	{ "scaleDownOldReplicaSetsForRollingUpdate #1", 10, "2", 10, 10, 2, "scale foo-v2 8" },
	{ "scaleDownOldReplicaSetsForRollingUpdate #2", 10, "2", 8, 10, 0, "scale foo-v2 8" },
	{ "scaleDownOldReplicaSetsForRollingUpdate #3", 10, "2", 10, 0, 0, "scale foo-new 10" },
	{ "scaleDownOldReplicaSetsForRollingUpdate #4", 10, "2", 1, 10, 0, "scale foo-v2 8" },
};

static void
sync_scales_down_old_replicasets_as_kube(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(scale_down_old_cases); i++) {
		const struct scale_down_old_case *c = &scale_down_old_cases[i];
		struct dep d = { .replicas = c->replicas, .max_unavailable = c->max_unavailable,
		    .revision = "2" };
		char *old_status = xasprintf("{\"availableReplicas\":%lld}", c->ready);
		struct rset rs[] = {
			{ .name = "foo-v2", .replicas = c->old_replicas, .old = 1,
			  .revision = "1", .status = old_status },
			{ .name = "foo-new", .replicas = 0, .at = 1, .revision = "2" },
		};
		struct world w;
		struct sync_result r;
		long long got;

		world_init(&w, &d, rs, NELEM(rs));
		world_sync(&w, NOW, &r);
		assert_writes(c->name, &r, c->want);
		got = scaled_down_by(&r, "within maxUnavailable");
		if (got != c->want_scaled_down)
			fail_msg("%s: %lld scaled down, want %lld", c->name, got,
			    c->want_scaled_down);
		sync_result_clear(&r);
		world_free(&w);
		free(old_status);
	}
}

/* --- syncs: recreate (recreate_test.go) --------------------------------------------------- */

/* kube's TestScaleDownOldReplicaSets: a Recreate Deployment of 3 scales its old ReplicaSets
 * to 0 and, having scaled, does nothing more in this sync; sqlkcm's rows add an inactive old
 * ReplicaSet (left alone) and a new one (not scaled up yet). */
static const struct recreate_down_case {
	const char *name;
	struct rset rs[4];
	int n;
	const char *want;
} recreate_down_cases[] = {
	{ "TestScaleDownOldReplicaSets #0",
	  { { .name = "foo-0", .replicas = 3, .old = 1, .revision = "1" } }, 1,
	  "scale foo-0 0" },
	{ "sqlkcm: every active old one, none other",
	  { { .name = "foo-0", .replicas = 3, .old = 1, .revision = "1" },
	    { .name = "foo-1", .replicas = 2, .old = 2, .at = 1, .revision = "2" },
	    { .name = "foo-2", .replicas = 0, .old = 3, .at = 2, .revision = "3" },
	    { .name = "foo-new", .replicas = 0, .at = 3, .revision = "4" } }, 4,
	  "scale foo-0 0;scale foo-1 0" },
};

static void
recreate_sync_scales_old_replicasets_down_first(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(recreate_down_cases); i++) {
		const struct recreate_down_case *c = &recreate_down_cases[i];
		struct dep d = { .replicas = 3, .recreate = 1 };
		struct world w;
		struct sync_result r;

		world_init(&w, &d, c->rs, c->n);
		world_sync(&w, NOW, &r);
		assert_writes(c->name, &r, c->want);
		sync_result_clear(&r);
		world_free(&w);
	}
}

/*
 * kube's TestOldPodsRunning, through a Recreate sync with no new ReplicaSet and old ones of
 * 0 replicas: old pods running, it waits (no writes); none, it creates the new ReplicaSet at
 * full size. kube's podMap is keyed by ReplicaSet uid; a sync's holds the pods of the
 * ReplicaSets it claimed, so each key is a ReplicaSet here (rs-1 for kube's uid-1, and so
 * on), whose pods are the map's.
 */
struct pod_of {
	const char *owner;
	const char *phase;
};

static const struct old_pods_case {
	const char *name;
	struct rset rs[3];
	int nrs;
	struct pod_of pods[4];
	int npods;
	int running;
} old_pods_cases[] = {
	{ "no old RSs", { { NULL } }, 0, { { NULL } }, 0, 0 },
	{ "old RSs with running pods",
	  { { .name = "foo-some-uid", .old = 1 }, { .name = "foo-other-uid", .old = 2 } }, 2,
	  { { "foo-some-uid", NULL }, { "foo-some-uid", NULL }, { "foo-other-uid", NULL },
	    { "foo-other-uid", NULL } }, 4, 1 },
	{ "old RSs without pods but with non-zero status replicas",
	  { { .name = "rs-1", .old = 1, .status = "{\"replicas\":1}" } }, 1, { { NULL } }, 0,
	  1 },
	{ "old RSs without pods or non-zero status replicas",
	  { { .name = "rs-1", .old = 1, .status = "{\"replicas\":0}" } }, 1, { { NULL } }, 0,
	  0 },
	{ "old RSs with zero status replicas but pods in terminal state are present",
	  { { .name = "rs-1", .old = 1 } }, 1,
	  { { "rs-1", "Failed" }, { "rs-1", "Succeeded" } }, 2, 0 },
	{ "old RSs with zero status replicas but pod in unknown phase present",
	  { { .name = "rs-1", .old = 1 } }, 1, { { "rs-1", "Unknown" } }, 1, 1 },
	{ "old RSs with zero status replicas with pending pod present",
	  { { .name = "rs-1", .old = 1 } }, 1, { { "rs-1", "Pending" } }, 1, 1 },
	{ "old RSs with zero status replicas with running pod present",
	  { { .name = "rs-1", .old = 1 } }, 1, { { "rs-1", "Running" } }, 1, 1 },
	{ "old RSs with zero status replicas but pods in terminal state and pending are "
	  "present",
	  { { .name = "rs-1", .old = 1 }, { .name = "rs-2", .old = 2, .at = 1 },
	    { .name = "rs-3", .old = 3, .at = 2 } }, 3,
	  { { "rs-1", "Failed" }, { "rs-1", "Succeeded" }, { "rs-3", "Pending" } }, 3, 1 },
	{ "sqlkcm: a pod of a ReplicaSet another Deployment controls does not count",
	  { { .name = "rs-1", .old = 1 },
	    { .name = "rs-other", .old = 2, .owner = "uid-bar" } }, 2,
	  { { "rs-other", "Running" } }, 1, 0 },
};

static void
recreate_sync_waits_for_old_pods_as_kube(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(old_pods_cases); i++) {
		const struct old_pods_case *c = &old_pods_cases[i];
		struct dep d = { .replicas = 1, .recreate = 1 };
		struct world w;
		struct sync_result r;

		world_init(&w, &d, c->rs, c->nrs);
		for (int j = 0; j < c->npods; j++) {
			char *name = xasprintf("%s-pod-%d", c->pods[j].owner, j);
			world_add_pod(&w, name, c->pods[j].owner, c->pods[j].phase);
			free(name);
		}
		world_sync(&w, NOW, &r);
		assert_writes(c->name, &r, c->running ? "" : "create 1");
		sync_result_clear(&r);
		world_free(&w);
	}
}

/* oldPodsRunning skips the new ReplicaSet's pods: with them alone running, the new one is
 * scaled up. */
static void
recreate_sync_does_not_wait_for_the_new_replicasets_pods(void **state)
{
	struct dep d = { .replicas = 2, .recreate = 1, .revision = "2" };
	struct rset rs[] = {
		{ .name = "foo-old", .old = 1, .revision = "1" },
		{ .name = "foo-new", .replicas = 0, .at = 1, .revision = "2" },
	};
	struct world w;
	struct sync_result r;

	(void)state;
	world_init(&w, &d, rs, NELEM(rs));
	world_add_pod(&w, "foo-new-pod", "foo-new", "Running");
	world_sync(&w, NOW, &r);
	assert_writes("new pods", &r, "scale foo-new 2");
	sync_result_clear(&r);
	/* One of the old ReplicaSet's, pending: wait. */
	world_add_pod(&w, "foo-old-pod", "foo-old", "Pending");
	world_sync(&w, NOW, &r);
	assert_writes("an old pod", &r, "");
	assert_non_null(r.status);
	sync_result_clear(&r);
	world_free(&w);
}

/* --- syncs: scaling and the history (sync_test.go) ---------------------------------------- */

/* One ReplicaSet of a TestScale row: its size, its age (larger is newer), the desired
 * replicas its annotations record (0: the old Deployment's), and its size after. */
struct scale_sync_rs {
	const char *name;
	long long replicas;
	int at;
	long long desired;
	long long want;
};

/*
 * kube's TestScale, every row through a sync: the ReplicaSets' annotations record the old
 * Deployment's size (and maxSurge), so an active one whose desired-replicas differs from
 * spec.replicas makes the sync a scaling event (dc.sync, then scale). The rows that are no
 * scaling event ("0 -> 6", the saturated one) go through the rollout instead, which must
 * give kube's sizes too; and every row is synced again paused, which always goes through
 * scale, as kube's test calls it. kube's timestamps are new (2), old (1), older (0).
 * rs[0] is the new ReplicaSet when has_new; the others have old templates.
 */
static const struct scale_sync_case {
	const char *name;
	long long replicas, old_replicas;
	const char *max_surge, *old_max_surge, *max_unavailable;	/* numbers */
	int has_new;
	int another_label;		/* kube's updatedTemplate: no ReplicaSet is new */
	struct scale_sync_rs rs[3];
	int n;
	int paused_only;		/* not a scaling event, and the rollout would differ */
} scale_sync_cases[] = {
	{ "normal scaling event: 10 -> 12", 12, 10, "0", "0", "0", 1, 0,
	  { { "foo-v1", 10, 2, 0, 12 } }, 1, 0 },
	{ "normal scaling event: 10 -> 5", 5, 10, "0", "0", "0", 1, 0,
	  { { "foo-v1", 10, 2, 0, 5 } }, 1, 0 },
	{ "proportional scaling: 5 -> 10", 10, 5, "0", "0", "0", 1, 0,
	  { { "foo-v2", 2, 2, 0, 4 }, { "foo-v1", 3, 1, 0, 6 } }, 2, 0 },
	{ "proportional scaling: 5 -> 3", 3, 5, "0", "0", "0", 1, 0,
	  { { "foo-v2", 2, 2, 0, 1 }, { "foo-v1", 3, 1, 0, 2 } }, 2, 0 },
	{ "proportional scaling: 9 -> 4", 4, 9, "0", "0", "0", 1, 0,
	  { { "foo-v2", 8, 2, 0, 4 }, { "foo-v1", 1, 1, 0, 0 } }, 2, 0 },
	{ "proportional scaling: 7 -> 10", 10, 7, "0", "0", "0", 1, 0,
	  { { "foo-v3", 2, 2, 0, 3 }, { "foo-v2", 3, 1, 0, 4 }, { "foo-v1", 2, 0, 0, 3 } },
	  3, 0 },
	{ "proportional scaling: 13 -> 8", 8, 13, "0", "0", "0", 1, 0,
	  { { "foo-v3", 2, 2, 0, 1 }, { "foo-v2", 8, 1, 0, 5 }, { "foo-v1", 3, 0, 0, 2 } },
	  3, 0 },
	{ "leftover distribution: 3 -> 4", 4, 3, "0", "0", "0", 1, 0,
	  { { "foo-v3", 1, 2, 0, 2 }, { "foo-v2", 1, 1, 0, 1 }, { "foo-v1", 1, 0, 0, 1 } },
	  3, 0 },
	{ "leftover distribution: 3 -> 2", 2, 3, "0", "0", "0", 1, 0,
	  { { "foo-v3", 1, 2, 0, 1 }, { "foo-v2", 1, 1, 0, 1 }, { "foo-v1", 1, 0, 0, 0 } },
	  3, 0 },
	{ "proportional scaling (no new rs): 4 -> 5", 5, 4, "0", "0", "0", 0, 0,
	  { { "foo-v2", 2, 1, 0, 3 }, { "foo-v1", 2, 0, 0, 2 } }, 2, 0 },
	{ "proportional scaling: 6 -> 0", 0, 6, "0", "0", "0", 1, 0,
	  { { "foo-v3", 3, 2, 0, 0 }, { "foo-v2", 2, 1, 0, 0 }, { "foo-v1", 1, 0, 0, 0 } },
	  3, 0 },
	{ "proportional scaling: 0 -> 6", 6, 6, "0", "0", "0", 1, 0,
	  { { "foo-v3", 0, 2, 0, 6 }, { "foo-v2", 0, 1, 0, 0 }, { "foo-v1", 0, 0, 0, 0 } },
	  3, 0 },
	{ "failed rs update", 5, 5, "0", "0", "0", 1, 0,
	  { { "foo-v3", 2, 2, 0, 2 }, { "foo-v2", 1, 1, 3, 2 }, { "foo-v1", 1, 0, 0, 1 } },
	  3, 0 },
	{ "deployment with surge pods", 20, 10, "2", "2", "0", 1, 0,
	  { { "foo-v2", 6, 2, 0, 11 }, { "foo-v1", 6, 1, 0, 11 } }, 2, 0 },
	{ "change both surge and size", 50, 10, "6", "3", "0", 1, 0,
	  { { "foo-v2", 5, 2, 0, 22 }, { "foo-v1", 8, 1, 0, 34 } }, 2, 0 },
	{ "change both size and template", 14, 10, "0", "0", "0", 0, 1,
	  { { "foo-v2", 7, 2, 0, 10 }, { "foo-v1", 3, 1, 0, 4 } }, 2, 0 },
	{ "saturated but broken new replica set does not affect old pods", 2, 2, "1", "1", "1",
	  1, 0, { { "foo-v2", 2, 2, 0, 2 }, { "foo-v1", 1, 1, 0, 1 } }, 2, 0 },
	/* FindActiveOrLatest's last rule. */
	{ "sqlkcm: none active and no new one: the newest old one takes the size", 3, 3, "0",
	  "0", "0", 0, 0, { { "foo-v2", 0, 1, 0, 3 }, { "foo-v1", 0, 0, 0, 0 } }, 2, 1 },
};

static void
sync_scales_as_kubes_scale_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(scale_sync_cases); i++) {
		const struct scale_sync_case *c = &scale_sync_cases[i];

		for (int paused = c->paused_only; paused <= 1; paused++) {
			struct dep d = { .replicas = c->replicas, .max_surge = c->max_surge,
			    .max_unavailable = c->max_unavailable, .paused = paused,
			    .labels = c->another_label ?
			    "{\"foo\":\"bar\",\"another\":\"label\"}" : NULL };
			long long old_surge = strtoll(c->old_max_surge, NULL, 10);
			struct rset rs[3];
			char desired[3][32], max[3][32], revision[3][16];
			struct world w;
			struct sync_result r;

			for (int j = 0; j < c->n; j++) {
				long long want = c->rs[j].desired != 0 ? c->rs[j].desired :
				    c->old_replicas;

				snprintf(desired[j], sizeof desired[j], "%lld", want);
				snprintf(max[j], sizeof max[j], "%lld", want + old_surge);
				snprintf(revision[j], sizeof revision[j], "%d", c->n - j);
				rs[j] = (struct rset){ .name = c->rs[j].name,
				    .replicas = c->rs[j].replicas, .at = c->rs[j].at,
				    .old = c->has_new && j == 0 ? 0 : j + 1,
				    .revision = revision[j], .desired = desired[j],
				    .max = max[j] };
			}
			world_init(&w, &d, rs, c->n);
			world_sync(&w, NOW, &r);
			for (int j = 0; j < r.nwrites; j++)
				if (strcmp(r.writes[j].verb, "scale") != 0)
					fail_msg("%s%s: a %s write", c->name,
					    paused ? " (paused)" : "", r.writes[j].verb);
			for (int j = 0; j < c->n; j++) {
				long long got = size_after(&r, c->rs[j].name,
				    c->rs[j].replicas);

				if (got != c->rs[j].want)
					fail_msg("%s%s: %s has %lld, want %lld", c->name,
					    paused ? " (paused)" : "", c->rs[j].name, got,
					    c->rs[j].want);
			}
			sync_result_clear(&r);
			world_free(&w);
		}
	}
}

/* The names of the ReplicaSets r deletes, in order, as "a,b". */
static char *
deleted_text(const struct sync_result *r)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < r->nwrites; i++)
		if (strcmp(r->writes[i].verb, "delete") == 0)
			buf_printf(&b, "%s%s", b.len > 0 ? "," : "", r->writes[i].name);
	return buf_detach(&b);
}

/* An old ReplicaSet of a history row: its spec and status replicas, its revision (NULL:
 * none), its age, and whether it is being deleted. */
struct history_rs {
	const char *name;
	long long spec, status;
	const char *revision;
	int at;
	int deleting;
};

/*
 * kube's TestDeploymentController_cleanupDeployment (which counts the deletions) and
 * TestDeploymentController_cleanupDeploymentOrder (which names them), through the sync of
 * a paused Deployment of 1 (dc.sync cleans up a paused one's history): its ReplicaSets are
 * all old, as kube's are (rs() gives them no template). Scaling writes the same sync makes
 * (the paused Deployment's scale) are no deletions and are not counted, as kube's test
 * counts only the delete verbs. kube's order rows are a minute apart; an hour here.
 */
static const struct history_case_sync {
	const char *name;
	const char *limit;
	struct history_rs rs[4];
	int n;
	const char *want;
} history_sync_cases[] = {
	{ "cleanupDeployment #0", "1",
	  { { "foo-1", 0, 0, NULL, 0, 0 }, { "foo-2", 0, 0, NULL, 0, 0 },
	    { "foo-3", 0, 0, NULL, 0, 0 } }, 3, "foo-1,foo-2" },
	{ "cleanupDeployment #1: only delete the replica set with Spec.Replicas = "
	  "Status.Replicas = 0", "0",
	  { { "foo-1", 0, 0, NULL, 0, 0 }, { "foo-2", 0, 1, NULL, 0, 0 },
	    { "foo-3", 1, 0, NULL, 0, 0 }, { "foo-4", 1, 1, NULL, 0, 0 } }, 4, "foo-1" },
	{ "cleanupDeployment #2", "0",
	  { { "foo-1", 0, 0, NULL, 0, 0 }, { "foo-2", 0, 0, NULL, 0, 0 } }, 2, "foo-1,foo-2" },
	{ "cleanupDeployment #3", "0",
	  { { "foo-1", 1, 1, NULL, 0, 0 }, { "foo-2", 1, 1, NULL, 0, 0 } }, 2, "" },
	{ "cleanupDeployment #4: already deleted", "0",
	  { { "foo-1", 0, 0, NULL, 0, 1 } }, 1, "" },
	{ "cleanupDeployment #5: with unlimited revisionHistoryLimit", "2147483647",
	  { { "foo-1", 0, 0, NULL, 0, 0 }, { "foo-2", 0, 0, NULL, 0, 0 },
	    { "foo-3", 0, 0, NULL, 0, 0 } }, 3, "" },
	{ "cleanupDeploymentOrder #0: revision order: rs1 < rs2, delete rs1", "1",
	  { { "foo-1", 0, 0, "1", 0, 0 }, { "foo-2", 0, 0, "2", 1, 0 } }, 2, "foo-1" },
	{ "cleanupDeploymentOrder #1: revision order: rs2 < rs1, delete rs2", "1",
	  { { "foo-1", 0, 0, "2", 0, 0 }, { "foo-2", 0, 0, "1", 1, 0 } }, 2, "foo-2" },
	{ "cleanupDeploymentOrder #2: rs1 has revision but rs2 doesn't have revision, delete "
	  "rs2", "1",
	  { { "foo-1", 0, 0, "1", 0, 0 }, { "foo-2", 0, 0, NULL, 1, 0 } }, 2, "foo-2" },
	{ "cleanupDeploymentOrder #3: rs1 doesn't have revision while rs2 has revision, "
	  "delete rs1", "1",
	  { { "foo-1", 0, 0, NULL, 0, 0 }, { "foo-2", 0, 0, "2", 1, 0 } }, 2, "foo-1" },
	{ "cleanupDeploymentOrder #4: revision order: rs1 < rs2 < r3, but rs1 has replicas, "
	  "delete rs2", "1",
	  { { "foo-1", 1, 1, "1", 0, 0 }, { "foo-2", 0, 0, "2", 1, 0 },
	    { "foo-3", 0, 0, "3", 2, 0 } }, 3, "foo-2" },
	{ "cleanupDeploymentOrder #5: revision order: rs1 < rs2 < r3, both rs1 && rs2 have "
	  "replicas, don't delete", "1",
	  { { "foo-1", 1, 1, "1", 0, 0 }, { "foo-2", 1, 1, "2", 1, 0 },
	    { "foo-3", 0, 0, "3", 2, 0 } }, 3, "" },
	{ "cleanupDeploymentOrder #6: revision order: rs2 < rs4 < rs1 < rs3, delete rs2 && "
	  "rs4", "2",
	  { { "foo-1", 0, 0, "3", 0, 0 }, { "foo-2", 0, 0, "1", 1, 0 },
	    { "foo-3", 0, 0, "4", 2, 0 }, { "foo-4", 0, 0, "2", 3, 0 } }, 4, "foo-2,foo-4" },
	/* sqlkcm's: a ReplicaSet whose status has not caught up with its generation is
	 * kept (cleanupDeployment's rs.Generation > rs.Status.ObservedGeneration). */
	{ "sqlkcm: a generation not yet observed is kept", "0",
	  { { "foo-1", 0, 0, "1", 0, 0 }, { "foo-2", 0, 0, "2", 1, 0 } }, 2, "foo-1" },
};

static void
sync_cleans_up_the_history_as_kube(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(history_sync_cases); i++) {
		const struct history_case_sync *c = &history_sync_cases[i];
		int unobserved = strncmp(c->name, "sqlkcm: a generation", 20) == 0;
		struct dep d = { .replicas = 1, .history = c->limit, .paused = 1 };
		char status[4][64];
		struct rset rs[4];
		struct world w;
		struct sync_result r;
		char *got;

		for (int j = 0; j < c->n; j++) {
			snprintf(status[j], sizeof status[j], "{\"replicas\":%lld%s}",
			    c->rs[j].status, unobserved && j == 1 ?
			    ",\"observedGeneration\":1" : "");
			rs[j] = (struct rset){ .name = c->rs[j].name, .replicas = c->rs[j].spec,
			    .old = j + 1, .at = c->rs[j].at, .revision = c->rs[j].revision,
			    .status = status[j],
			    .deleting = c->rs[j].deleting ? NOW - HOUR : 0,
			    .generation = unobserved && j == 1 ? 2 : 0 };
		}
		world_init(&w, &d, rs, c->n);
		world_sync(&w, NOW, &r);
		got = deleted_text(&r);
		if (strcmp(got, c->want) != 0)
			fail_msg("%s: deleted \"%s\", want \"%s\"", c->name, got, c->want);
		free(got);
		sync_result_clear(&r);
		world_free(&w);
	}
}

/* sqlkcm's, from rolloutRolling: a rolling Deployment cleans up its history only once its
 * cached status is complete, and then with nothing else to do. */
static void
rolling_sync_cleans_up_the_history_when_complete(void **state)
{
	struct dep d = { .replicas = 2, .max_unavailable = "1", .history = "1",
	    .revision = "3", .status = "{\"replicas\":2,\"updatedReplicas\":2,"
	    "\"availableReplicas\":2}" };
	struct rset rs[] = {
		{ .name = "foo-1", .old = 1, .revision = "1", .status = "{}" },
		{ .name = "foo-2", .old = 2, .at = 1, .revision = "2", .status = "{}" },
		{ .name = "foo-3", .replicas = 2, .at = 2, .revision = "3",
		  .status = "{\"replicas\":2,\"availableReplicas\":2}" },
	};
	struct world w;
	struct sync_result r;

	(void)state;
	world_init(&w, &d, rs, NELEM(rs));
	world_sync(&w, NOW, &r);
	assert_writes("complete", &r, "delete foo-1");
	sync_result_clear(&r);
	world_free(&w);

	/* Not complete: no cleanup. */
	d.status = "{\"replicas\":2,\"updatedReplicas\":1,\"availableReplicas\":2}";
	world_init(&w, &d, rs, NELEM(rs));
	world_sync(&w, NOW, &r);
	assert_writes("not complete", &r, "");
	sync_result_clear(&r);
	world_free(&w);
}

/* --- syncs: progress (progress_test.go) --------------------------------------------------- */

#define COND_FAILED "{\"type\":\"Progressing\",\"status\":\"False\"," \
	"\"reason\":\"ProgressDeadlineExceeded\"}"
#define COND_STUCK "{\"type\":\"Progressing\",\"status\":\"True\"," \
	"\"lastUpdateTime\":\"" TEST_TIME "\"}"
#define COND_UPDATED "{\"type\":\"Progressing\",\"status\":\"True\"," \
	"\"reason\":\"ReplicaSetUpdated\",\"lastUpdateTime\":\"" TEST_TIME "\"," \
	"\"lastTransitionTime\":\"" TEST_TIME "\"}"
#define COND_AVAILABLE "{\"type\":\"Progressing\",\"status\":\"True\"," \
	"\"reason\":\"NewReplicaSetAvailable\",\"lastUpdateTime\":\"" TEST_TIME "\"," \
	"\"lastTransitionTime\":\"" TEST_TIME "\"}"

/*
 * The status a Recreate Deployment of replicas has when its one ReplicaSet, of replicas,
 * reports status_replicas and available ones: what calculateStatus makes of it (fields
 * left out when 0, as Go's omitempty), with the Available condition and progressing (a
 * condition, or NULL). Synced with no change, its status is left as it is.
 */
static char *
steady_status(long long replicas, long long status_replicas, long long available,
    const char *progressing)
{
	struct buf b;

	buf_init(&b);
	buf_printf(&b, "{\"terminatingReplicas\":0");
	if (status_replicas != 0)
		buf_printf(&b, ",\"replicas\":%lld,\"updatedReplicas\":%lld", status_replicas,
		    status_replicas);
	if (available != 0)
		buf_printf(&b, ",\"availableReplicas\":%lld", available);
	if (replicas - available > 0)
		buf_printf(&b, ",\"unavailableReplicas\":%lld", replicas - available);
	buf_printf(&b, ",\"conditions\":[{\"type\":\"Available\",\"status\":\"%s\","
	    "\"reason\":\"%s\"}%s%s]}", available >= replicas ? "True" : "False",
	    available >= replicas ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
	    progressing != NULL ? "," : "", progressing != NULL ? progressing : "");
	return buf_detach(&b);
}

/*
 * kube's TestRequeueStuckDeployment, through the sync of kube's currentDeployment (a
 * Recreate one) whose one ReplicaSet, the new one, reports the row's status: the sync finds
 * nothing to change and requeues it (sync_result.requeue_after) as requeueStuckDeployment
 * would. kube's durations are what it returns; the sync requeues after that and a second
 * (enqueueAfter(after + 1s)), or at once (sqlkcm: 1 second) when less than a second is left
 * (enqueueRateLimited, kube's 0); kube's -1, no requeue, is 0 here. kube calls the helper
 * with statuses a sync would change first; through the sync those rows write the change
 * instead, as syncRolloutStatus does (and is then synced again on the update):
 * "no progressing condition found" gets FoundNewReplicaSet (getNewReplicaSet's), the
 * complete one NewReplicaSetAvailable, and the two past the deadline
 * ProgressDeadlineExceeded. "less than a second" is half a second here (1ns is below a
 * double's resolution at these times).
 */
static const struct requeue_case {
	const char *name;
	const char *deadline;		/* JSON; NULL: nil */
	long long replicas, status_replicas, available;
	const char *progressing;	/* the cached Progressing condition; NULL: none */
	const char *now;		/* NULL: NOW */
	double plus;			/* added to now */
	double want_requeue;
	int want_status;		/* the status is written */
	const char *want_progressing;
} requeue_cases[] = {
	{ "nil progressDeadlineSeconds specified", NULL, 4, 3, 2, NULL, NULL, 0, 0, 0,
	  "none" },
	{ "infinite progressDeadlineSeconds specified", "2147483647", 4, 3, 2, NULL, NULL, 0,
	  0, 0, "none" },
	{ "no progressing condition found", "60", 4, 3, 2, NULL, NULL, 0, 0, 1,
	  "True/FoundNewReplicaSet" },
	{ "complete deployment does not need to be requeued", "60", 3, 3, 3, NULL, NULL, 0,
	  0, 1, "True/NewReplicaSetAvailable" },
	{ "sqlkcm: complete deployment, already so reported", "60", 3, 3, 3, COND_AVAILABLE,
	  NULL, 0, 0, 0, "True/NewReplicaSetAvailable" },
	{ "already failed deployment does not need to be requeued", "60", 3, 3, 0,
	  COND_FAILED, NULL, 0, 0, 0, "False/ProgressDeadlineExceeded" },
	{ "stuck deployment - 30s", "60", 3, 3, 1, COND_STUCK, "2017-02-15T18:49:30Z", 0, 31,
	  0, "True/" },
	{ "stuck deployment - 1s", "60", 3, 3, 1, COND_STUCK, "2017-02-15T18:49:59Z", 0, 2, 0,
	  "True/" },
	{ "failed deployment - less than a second => now", "60", 3, 3, 1, COND_STUCK,
	  "2017-02-15T18:49:59Z", 0.5, 1, 0, "True/" },
	{ "failed deployment - now", "60", 3, 3, 1, COND_STUCK, "2017-02-15T18:50:00Z", 0, 1,
	  0, "True/" },
	{ "failed deployment - 1s after deadline", "60", 3, 3, 1, COND_STUCK,
	  "2017-02-15T18:50:01Z", 0, 0, 1, "False/ProgressDeadlineExceeded" },
	{ "failed deployment - 60s after deadline", "60", 3, 3, 1, COND_STUCK,
	  "2017-02-15T18:51:00Z", 0, 0, 1, "False/ProgressDeadlineExceeded" },
};

static void
sync_requeues_a_stuck_deployment_as_kube(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(requeue_cases); i++) {
		const struct requeue_case *c = &requeue_cases[i];
		char *status = steady_status(c->replicas, c->status_replicas, c->available,
		    c->progressing);
		char *rs_status = xasprintf("{\"replicas\":%lld,\"availableReplicas\":%lld}",
		    c->status_replicas, c->available);
		struct dep d = { .replicas = c->replicas, .recreate = 1, .revision = "1",
		    .deadline = c->deadline, .status = status };
		struct rset rs[] = { { .name = "foo-new", .replicas = c->replicas,
		    .revision = "1", .status = rs_status } };
		double now = (c->now != NULL ? parse_time(c->now) : NOW) + c->plus;
		const cJSON *st;
		struct world w;
		struct sync_result r;

		world_init(&w, &d, rs, NELEM(rs));
		world_sync(&w, now, &r);
		assert_writes(c->name, &r, "");
		if ((r.status != NULL) != c->want_status)
			fail_msg("%s: status %swritten", c->name,
			    r.status != NULL ? "" : "not ");
		if (r.requeue_after != c->want_requeue)
			fail_msg("%s: requeue after %g, want %g", c->name, r.requeue_after,
			    c->want_requeue);
		st = r.status != NULL ? written_status(&r) : json_path(w.d, "status");
		if (strcmp(condition_text(st, "Progressing"), c->want_progressing) != 0)
			fail_msg("%s: Progressing %s, want %s", c->name,
			    condition_text(st, "Progressing"), c->want_progressing);
		sync_result_clear(&r);
		world_free(&w);
		free(status);
		free(rs_status);
	}
}

/*
 * kube's TestSyncRolloutStatus, through the sync of kube's currentDeployment (Recreate)
 * with the row's ReplicaSets: where an old one reports replicas, or has a pod running, the
 * sync waits for it and goes to syncRolloutStatus with nothing to scale, as kube's case
 * calls it. The Progressing condition of the status written (or of the cached one, when
 * none is) is compared. kube's case means to check the condition's times but compares its
 * own expectations with testTime; here the condition's times are checked: "test"
 * (testTime), "now" (the sync's) or "none". "only one active ReplicaSet": bar has the
 * Deployment's template (a sync would scale down an old active one first). "newRS=nil":
 * foo is old, with a running pod, so that the sync has no new ReplicaSet when it gets there.
 */
static const struct rollout_status_case {
	const char *name;
	const char *deadline;
	long long replicas, status_replicas, updated, available;
	const char *progressing;	/* the cached Progressing condition; NULL: none */
	struct rset rs[2];
	int n;
	int running_pod;		/* rs[0] has a running pod */
	const char *want;
	const char *last_update, *last_transition;
	const char *message;		/* NULL: not checked */
} rollout_status_cases[] = {
	{ "General: remove Progressing condition and do not estimate progress if deployment "
	  "has no Progress Deadline", NULL, 3, 2, 2, 2, COND_UPDATED,
	  { { .name = "bar", .old = 1, .revision = "1",
	      .status = "{\"replicas\":1,\"availableReplicas\":1}" },
	    { .name = "foo", .replicas = 3, .at = 1, .revision = "2",
	      .status = "{\"replicas\":2,\"availableReplicas\":2}" } }, 2, 0,
	  "none", NULL, NULL, NULL },
	{ "General: do not estimate progress of deployment with only one active ReplicaSet",
	  "60", 3, 3, 3, 3, COND_AVAILABLE,
	  { { .name = "bar", .replicas = 3, .revision = "1",
	      .status = "{\"replicas\":3,\"availableReplicas\":3}" } }, 1, 0,
	  "True/NewReplicaSetAvailable", "test", "test", NULL },
	{ "DeploymentProgressing: dont update lastTransitionTime if deployment already has "
	  "Progressing=True", "60", 3, 2, 2, 2, COND_UPDATED,
	  { { .name = "bar", .old = 1, .revision = "1",
	      .status = "{\"replicas\":1,\"availableReplicas\":1}" },
	    { .name = "foo", .replicas = 3, .at = 1, .revision = "2",
	      .status = "{\"replicas\":2,\"availableReplicas\":2}" } }, 2, 0,
	  "True/ReplicaSetUpdated", "now", "test", "ReplicaSet \"foo\" is progressing." },
	{ "DeploymentProgressing: update everything if deployment has Progressing=False",
	  "60", 3, 2, 2, 2, COND_FAILED,
	  { { .name = "bar", .old = 1, .revision = "1",
	      .status = "{\"replicas\":1,\"availableReplicas\":1}" },
	    { .name = "foo", .replicas = 3, .at = 1, .revision = "2",
	      .status = "{\"replicas\":2,\"availableReplicas\":2}" } }, 2, 0,
	  "True/ReplicaSetUpdated", "now", "now", NULL },
	{ "DeploymentProgressing: create Progressing condition if it does not exist",
	  "60", 3, 2, 2, 2, NULL,
	  { { .name = "bar", .old = 1, .revision = "1",
	      .status = "{\"replicas\":1,\"availableReplicas\":1}" },
	    { .name = "foo", .replicas = 3, .at = 1, .revision = "2",
	      .status = "{\"replicas\":2,\"availableReplicas\":2}" } }, 2, 0,
	  "True/ReplicaSetUpdated", "now", "now", NULL },
	{ "DeploymentComplete: dont update lastTransitionTime if deployment already has "
	  "Progressing=True", "60", 3, 3, 3, 3, COND_UPDATED,
	  { { .name = "foo", .replicas = 3, .revision = "1",
	      .status = "{\"replicas\":3,\"availableReplicas\":3}" } }, 1, 0,
	  "True/NewReplicaSetAvailable", "now", "test",
	  "ReplicaSet \"foo\" has successfully progressed." },
	{ "DeploymentComplete: update everything if deployment has Progressing=False",
	  "60", 3, 3, 3, 3, COND_FAILED,
	  { { .name = "foo", .replicas = 3, .revision = "1",
	      .status = "{\"replicas\":3,\"availableReplicas\":3}" } }, 1, 0,
	  "True/NewReplicaSetAvailable", "now", "now", NULL },
	{ "DeploymentComplete: create Progressing condition if it does not exist",
	  "60", 3, 3, 3, 3, NULL,
	  { { .name = "foo", .replicas = 3, .revision = "1",
	      .status = "{\"replicas\":3,\"availableReplicas\":3}" } }, 1, 0,
	  "True/NewReplicaSetAvailable", "now", "now", NULL },
	{ "DeploymentComplete: defend against NPE when newRS=nil", "60", 0, 3, 3, 3,
	  COND_UPDATED,
	  { { .name = "foo", .old = 1, .revision = "1", .status = "{}" } }, 1, 1,
	  "True/NewReplicaSetAvailable", "now", "test",
	  "Deployment \"foo\" has successfully progressed." },
	{ "DeploymentTimedOut: update status if rollout exceeds Progress Deadline",
	  "60", 3, 2, 2, 2, COND_UPDATED,
	  { { .name = "foo", .replicas = 3, .revision = "1",
	      .status = "{\"replicas\":2,\"availableReplicas\":2}" } }, 1, 0,
	  "False/ProgressDeadlineExceeded", "now", "now",
	  "ReplicaSet \"foo\" has timed out progressing." },
	{ "DeploymentTimedOut: do not update status if deployment has existing timedOut "
	  "condition", "60", 3, 2, 2, 2, COND_FAILED,
	  { { .name = "foo", .replicas = 3, .revision = "1",
	      .status = "{\"replicas\":2,\"availableReplicas\":2}" } }, 1, 0,
	  "False/ProgressDeadlineExceeded", "none", "none", NULL },
};

static void
sync_rollout_status_follows_kubes_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(rollout_status_cases); i++) {
		const struct rollout_status_case *c = &rollout_status_cases[i];
		char *status = xasprintf("{\"replicas\":%lld,\"updatedReplicas\":%lld,"
		    "\"availableReplicas\":%lld,\"conditions\":[%s]}", c->status_replicas,
		    c->updated, c->available, c->progressing != NULL ? c->progressing : "");
		struct dep d = { .replicas = c->replicas, .recreate = 1,
		    .deadline = c->deadline, .status = status,
		    .revision = c->n == 2 ? "2" : "1" };
		const cJSON *st, *cond;
		struct world w;
		struct sync_result r;

		world_init(&w, &d, c->rs, c->n);
		if (c->running_pod)
			world_add_pod(&w, "foo-pod", c->rs[0].name, "Running");
		world_sync(&w, NOW, &r);
		assert_writes(c->name, &r, "");
		st = r.status != NULL ? written_status(&r) : json_path(w.d, "status");
		if (strcmp(condition_text(st, "Progressing"), c->want) != 0)
			fail_msg("%s: Progressing %s, want %s", c->name,
			    condition_text(st, "Progressing"), c->want);
		cond = deployment_condition_get(st, "Progressing");
		assert_condition_time(c->name, cond, "lastUpdateTime", c->last_update);
		assert_condition_time(c->name, cond, "lastTransitionTime", c->last_transition);
		if (c->message != NULL && strcmp(json_string(cond, "message"), c->message) != 0)
			fail_msg("%s: message \"%s\", want \"%s\"", c->name,
			    json_string(cond, "message"), c->message);
		sync_result_clear(&r);
		world_free(&w);
		free(status);
	}
}

/* --- syncs: the controller (deployment_controller_test.go) ------------------------------- */

/* The value at path of o, printed (malloc'd); "(none)" when absent. */
static char *
printed(const cJSON *o, const char *path)
{
	const cJSON *v = json_path(o, path);

	if (v == NULL)
		return xstrdup("(none)");
	return print(v);
}

/* r's claims as "adopt a,release b". */
static char *
claims_text(const struct sync_result *r)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < r->nclaims; i++) {
		assert_int_equal(r->claims[i].type, ACTION_PATCH);
		assert_ptr_equal(r->claims[i].resource, resource_find("replicasets"));
		buf_printf(&b, "%s%s %s", i > 0 ? "," : "", r->claims[i].verb,
		    r->claims[i].name);
	}
	return buf_detach(&b);
}

/* kube's TestSyncDeploymentCreatesReplicaSet: a new Deployment gets its ReplicaSet
 * (newReplicaSet's labels, selector and template, each with the hash; the revision and
 * replicas annotations; the Deployment as controller; its size, maxSurge 0 allowing all of
 * it), then its status (kube's two status updates are one here). */
static void
sync_creates_the_new_replicaset_as_kube(void **state)
{
	struct dep d = { .replicas = 1 };
	struct world w;
	struct sync_result r;
	const struct action *a;
	char *hash, *name, *text, *want;
	const cJSON *refs, *st;

	(void)state;
	world_init(&w, &d, NULL, 0);
	hash = deployment_template_hash(json_path(w.d, "spec.template"), 0);
	name = deployment_rs_name("foo", hash);
	world_sync(&w, NOW, &r);
	assert_writes("creates", &r, "create 1");
	assert_int_equal(r.nclaims, 0);
	assert_int_equal(r.nevents, 0);
	a = &r.writes[0];
	assert_ptr_equal(a->resource, resource_find("replicasets"));
	assert_string_equal(a->namespace, "default");
	assert_string_equal(a->name, name);
	assert_string_equal(json_string(a->body, "metadata.name"), name);
	want = xasprintf("{\"foo\":\"bar\",\"" DEPLOYMENT_HASH_LABEL "\":\"%s\"}", hash);
	text = printed(a->body, "metadata.labels");
	assert_string_equal(text, want);
	free(text);
	text = printed(a->body, "spec.selector.matchLabels");
	assert_string_equal(text, want);
	free(text);
	text = printed(a->body, "spec.template.metadata.labels");
	assert_string_equal(text, want);
	free(text);
	free(want);
	assert_true(cJSON_Compare(json_path(a->body, "spec.template.spec"),
	    json_path(w.d, "spec.template.spec"), 1));
	assert_int_equal(json_int(a->body, "spec.replicas", -1), 1);
	assert_string_equal(body_annotation(a, DEPLOYMENT_REVISION_ANNOTATION), "1");
	assert_string_equal(body_annotation(a, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION), "1");
	assert_string_equal(body_annotation(a, DEPLOYMENT_MAX_REPLICAS_ANNOTATION), "1");
	refs = json_path(a->body, "metadata.ownerReferences");
	assert_int_equal(cJSON_GetArraySize(refs), 1);
	refs = cJSON_GetArrayItem(refs, 0);
	assert_string_equal(json_string(refs, "kind"), "Deployment");
	assert_string_equal(json_string(refs, "apiVersion"), "apps/v1");
	assert_string_equal(json_string(refs, "name"), "foo");
	assert_string_equal(json_string(refs, "uid"), "uid-foo");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(refs, "controller")));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(refs, "blockOwnerDeletion")));
	/* Its event, as scaleReplicaSetAndRecordEvent words it for a creation. */
	assert_string_equal(a->done_reason, "ScalingReplicaSet");
	text = xasprintf("Scaled up replica set %s from 0 to 1", name);
	assert_string_equal(a->done_message, text);
	free(text);
	/* The status: the Deployment takes the revision. */
	assert_non_null(r.status);
	assert_int_equal(r.status->type, ACTION_UPDATE_STATUS);
	assert_string_equal(annotation(r.status->body, DEPLOYMENT_REVISION_ANNOTATION), "1");
	st = written_status(&r);
	assert_string_equal(condition_text(st, "Available"), "True/MinimumReplicasAvailable");
	assert_string_equal(condition_text(st, "Progressing"), "none");
	assert_true(r.requeue_after == 0);
	sync_result_clear(&r);
	free(hash);
	free(name);
	world_free(&w);
}

/* sqlkcm's, from getNewReplicaSet: with a progress deadline, the creation also sets
 * Progressing True NewReplicaSetCreated; a maxSurge of 25% of 3 (rounded up to 1) gives
 * the new ReplicaSet 1 replica while the old one still has 3. */
static void
sync_creates_within_max_surge_and_reports_the_creation(void **state)
{
	struct dep d = { .replicas = 3, .max_surge = "\"25%\"", .max_unavailable = "\"25%\"",
	    .deadline = "600", .revision = "1",
	    .status = "{\"replicas\":3,\"availableReplicas\":3}" };
	struct rset rs[] = { { .name = "foo-old", .replicas = 3, .old = 1, .revision = "1",
	    .status = "{\"replicas\":3,\"availableReplicas\":3}" } };
	struct world w;
	struct sync_result r;
	const cJSON *st;

	(void)state;
	world_init(&w, &d, rs, NELEM(rs));
	world_sync(&w, NOW, &r);
	assert_writes("surge", &r, "create 1");
	assert_string_equal(body_annotation(&r.writes[0], DEPLOYMENT_REVISION_ANNOTATION),
	    "2");
	assert_string_equal(body_annotation(&r.writes[0],
	    DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION), "3");
	assert_string_equal(body_annotation(&r.writes[0], DEPLOYMENT_MAX_REPLICAS_ANNOTATION),
	    "4");
	st = written_status(&r);
	assert_non_null(st);
	assert_string_equal(annotation(r.status->body, DEPLOYMENT_REVISION_ANNOTATION), "2");
	assert_string_equal(condition_text(st, "Progressing"), "True/NewReplicaSetCreated");
	/* The creation's failure goes into the status instead. */
	assert_non_null(r.status->body_on_failure);
	sync_result_clear(&r);
	world_free(&w);
}

/*
 * kube's getNewReplicaSet when the name <deployment>-<hash> is taken (its AlreadyExists
 * branch; sqlkcm sees the name taken in the cache before creating): a ReplicaSet the
 * Deployment controls with its template is the new one; any other is a hash collision,
 * collisionCount goes up in the status, and nothing is written to that ReplicaSet.
 */
static void
sync_of_a_taken_name_is_a_collision_unless_the_replicaset_is_its_own(void **state)
{
	static const struct taken_case {
		const char *name;
		const char *owner;	/* its controller's uid: NULL the Deployment's */
		int old;		/* its template: 0 the Deployment's */
		int collision;
	} cases[] = {
		{ "another template", NULL, 1, 1 },
		{ "another Deployment's, the same template", "uid-bar", 0, 1 },
		{ "an orphan the selector does not match, the same template", "", 0, 1 },
		{ "its own, the same template, released as its labels no longer match",
		  NULL, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		const struct taken_case *c = &cases[i];
		struct dep d = { .replicas = 2 };
		struct world w;
		struct sync_result r;
		char *hash, *name;
		struct rset taken;

		world_init(&w, &d, NULL, 0);
		hash = deployment_template_hash(json_path(w.d, "spec.template"), 0);
		name = deployment_rs_name("foo", hash);
		taken = (struct rset){ .name = name, .replicas = 0, .old = c->old,
		    .owner = c->owner, .labels = (c->owner != NULL && c->owner[0] == '\0') ||
		    !c->collision ? "{\"foo\":\"other\"}" : NULL };
		world_add_rs(&w, &d, &taken);
		world_sync(&w, NOW, &r);
		if (c->collision) {
			assert_int_equal(r.nclaims, 0);
			assert_writes(c->name, &r, "");
			if (r.status == NULL ||
			    json_int(written_status(&r), "collisionCount", 0) != 1)
				fail_msg("%s: no collision in the status", c->name);
		} else {
			char *want = xasprintf("scale %s 2", name), *claims = claims_text(&r);
			char *release = xasprintf("release %s", name);

			assert_string_equal(claims, release);
			assert_writes(c->name, &r, want);
			assert_int_equal(json_int(written_status(&r), "collisionCount", 0), 0);
			free(want);
			free(claims);
			free(release);
		}
		sync_result_clear(&r);
		world_free(&w);
		free(hash);
		free(name);
	}
}

/* kube's TestSyncDeploymentDontDoAnythingDuringDeletion: a Deployment being deleted gets
 * its status and nothing else; sqlkcm's: with ReplicaSets, none is scaled, adopted,
 * released or created. */
static void
sync_of_a_deployment_being_deleted_writes_only_its_status(void **state)
{
	struct dep d = { .replicas = 1, .deleting = NOW - HOUR };
	struct rset rs[] = {
		{ .name = "foo-old", .replicas = 3, .old = 1, .revision = "1" },
		{ .name = "orphan", .replicas = 1, .old = 2, .owner = "" },
		{ .name = "mismatched", .replicas = 1, .old = 3,
		  .labels = "{\"foo\":\"baz\"}" },
	};
	struct world w;
	struct sync_result r;

	(void)state;
	world_init(&w, &d, NULL, 0);
	world_sync(&w, NOW, &r);
	assert_writes("no replica sets", &r, "");
	assert_int_equal(r.nclaims, 0);
	assert_non_null(r.status);
	assert_int_equal(r.status->type, ACTION_UPDATE_STATUS);
	sync_result_clear(&r);
	world_free(&w);

	world_init(&w, &d, rs, NELEM(rs));
	world_sync(&w, NOW, &r);
	assert_writes("replica sets", &r, "");
	assert_int_equal(r.nclaims, 0);
	assert_false(r.recheck_owner);
	/* The status counts the one it controls and matches. */
	assert_non_null(r.status);
	assert_int_equal(json_int(written_status(&r), "unavailableReplicas", 0), 3);
	sync_result_clear(&r);
	world_free(&w);
}

/* kube's TestSyncDeploymentDeletionRace: an orphan the selector matches is adopted, after
 * a live recheck that the Deployment is not being deleted (kube's GET; here
 * recheck_owner, which the executor carries out before the adoption). */
static void
sync_adopts_after_rechecking_the_deployment(void **state)
{
	struct dep d = { .replicas = 1 };
	struct rset rs[] = { { .name = "rs1", .replicas = 1, .owner = "" } };
	struct world w;
	struct sync_result r;
	const cJSON *ref;
	char *text;

	(void)state;
	world_init(&w, &d, rs, NELEM(rs));
	world_sync(&w, NOW, &r);
	text = claims_text(&r);
	assert_string_equal(text, "adopt rs1");
	free(text);
	assert_true(r.recheck_owner);
	assert_string_equal(r.claims[0].uid, "uid-rs1");
	assert_string_equal(json_string(r.claims[0].body, "metadata.uid"), "uid-rs1");
	ref = cJSON_GetArrayItem(json_path(r.claims[0].body, "metadata.ownerReferences"), 0);
	assert_string_equal(json_string(ref, "kind"), "Deployment");
	assert_string_equal(json_string(ref, "name"), "foo");
	assert_string_equal(json_string(ref, "uid"), "uid-foo");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(ref, "controller")));
	/* Adopted, it is the new ReplicaSet: nothing to create. */
	assert_writes("adopted", &r, "annotate rs1");
	sync_result_clear(&r);
	world_free(&w);
}

/* kube's TestDontSyncDeploymentsWithEmptyPodSelector: an empty selector gets the
 * SelectingAll warning and nothing else (no status: the fake has no generation); with a
 * generation not yet observed, the status records it, and only that. */
static void
sync_of_an_empty_selector_warns_and_stops(void **state)
{
	struct dep d = { .replicas = 1, .empty_selector = 1 };
	struct rset rs[] = { { .name = "orphan", .replicas = 1, .owner = "" } };
	struct world w;
	struct sync_result r;
	char *text;

	(void)state;
	world_init(&w, &d, rs, NELEM(rs));
	world_sync(&w, NOW, &r);
	assert_int_equal(r.nevents, 1);
	assert_string_equal(r.events[0].type, "Warning");
	assert_string_equal(r.events[0].reason, "SelectingAll");
	assert_string_equal(r.events[0].message,
	    "This deployment is selecting all pods. A non-empty selector is required.");
	assert_writes("empty selector", &r, "");
	assert_int_equal(r.nclaims, 0);
	assert_null(r.status);
	sync_result_clear(&r);
	world_free(&w);

	d.generation = 3;
	d.status = "{\"observedGeneration\":2}";
	world_init(&w, &d, rs, NELEM(rs));
	world_sync(&w, NOW, &r);
	assert_int_equal(r.nevents, 1);
	assert_non_null(r.status);
	text = print(written_status(&r));
	assert_string_equal(text, "{\"observedGeneration\":3}");
	free(text);
	sync_result_clear(&r);
	world_free(&w);
}

/* kube's TestGetReplicaSetsForDeployment: two Deployments with the same selector each
 * claim only the ReplicaSet they control, and count only its replicas. */
static void
sync_claims_only_the_deployments_own_replicasets(void **state)
{
	struct dep d1 = { .name = "foo", .replicas = 1, .revision = "1" };
	struct dep d2 = { .name = "bar", .replicas = 1, .revision = "1" };
	struct rset rs1 = { .name = "rs1", .replicas = 1, .revision = "1",
	    .status = "{\"replicas\":1,\"availableReplicas\":1}" };
	struct rset rs2 = { .name = "rs2", .replicas = 1, .revision = "1",
	    .status = "{\"replicas\":1,\"availableReplicas\":1}" };
	struct world w;
	struct sync_result r;

	(void)state;
	world_init(&w, &d1, &rs1, 1);
	world_add_deployment(&w, &d2);
	world_add_rs(&w, &d2, &rs2);
	world_sync(&w, NOW, &r);
	assert_int_equal(r.nclaims, 0);
	assert_writes("foo", &r, "");
	assert_int_equal(json_int(written_status(&r), "replicas", -1), 1);
	assert_int_equal(json_int(written_status(&r), "updatedReplicas", -1), 1);
	sync_result_clear(&r);
	/* And bar's sync, rs2 only. */
	free(w.key);
	w.key = xstrdup("default/bar");
	world_sync(&w, NOW, &r);
	assert_int_equal(r.nclaims, 0);
	assert_writes("bar", &r, "");
	assert_int_equal(json_int(written_status(&r), "replicas", -1), 1);
	assert_string_equal(r.status->name, "bar");
	sync_result_clear(&r);
	world_free(&w);
}

/* kube's TestGetReplicaSetsForDeploymentAdoptRelease: the matching orphan is adopted and
 * counted; its own ReplicaSet whose labels no longer match is released and not. */
static void
sync_adopts_and_releases_as_kube(void **state)
{
	struct dep d = { .replicas = 1, .revision = "1" };
	struct rset rs[] = {
		{ .name = "rsAdopt", .replicas = 1, .owner = "", .revision = "1",
		  .status = "{\"replicas\":1,\"availableReplicas\":1}" },
		{ .name = "rsRelease", .replicas = 1, .labels = "{\"foo\":\"notbar\"}", .at = 1,
		  .old = 1, .status = "{\"replicas\":1,\"availableReplicas\":1}" },
	};
	struct world w;
	struct sync_result r;
	char *text;

	(void)state;
	world_init(&w, &d, rs, NELEM(rs));
	world_sync(&w, NOW, &r);
	text = claims_text(&r);
	assert_string_equal(text, "adopt rsAdopt,release rsRelease");
	free(text);
	assert_true(r.recheck_owner);
	text = print(r.claims[1].body);
	assert_string_equal(text, "{\"metadata\":{\"uid\":\"uid-rsRelease\","
	    "\"ownerReferences\":[{\"$patch\":\"delete\",\"uid\":\"uid-foo\"}]}}");
	free(text);
	/* rsList is rsAdopt alone: it is the new ReplicaSet, at full size. */
	assert_writes("adopt and release", &r, "");
	assert_int_equal(json_int(written_status(&r), "replicas", -1), 1);
	sync_result_clear(&r);
	world_free(&w);
}

/* sqlkcm's, after kube's selector-update e2e (TestSelectorUpdate): a Deployment whose
 * selector changed releases its ReplicaSets of the old labels, adopts orphans of the new
 * ones, and leaves alone those another controller controls and orphans being deleted. */
static void
sync_after_a_selector_change_adopts_and_releases(void **state)
{
	struct dep d = { .replicas = 2, .selector = "{\"app\":\"new\"}", .revision = "2" };
	struct rset rs[] = {
		{ .name = "old-labels", .replicas = 2, .old = 1, .revision = "1",
		  .labels = "{\"app\":\"old\"}" },
		{ .name = "orphan", .replicas = 0, .old = 2, .at = 1, .owner = "" },
		{ .name = "others", .replicas = 1, .old = 3, .at = 2, .owner = "uid-bar" },
		{ .name = "orphan-deleting", .replicas = 0, .old = 4, .at = 3, .owner = "",
		  .deleting = NOW - HOUR },
		{ .name = "new", .replicas = 2, .at = 4, .revision = "2",
		  .status = "{\"replicas\":2,\"availableReplicas\":2}" },
	};
	struct world w;
	struct sync_result r;
	char *text;

	(void)state;
	world_init(&w, &d, rs, NELEM(rs));
	world_sync(&w, NOW, &r);
	text = claims_text(&r);
	assert_string_equal(text, "release old-labels,adopt orphan");
	free(text);
	assert_true(r.recheck_owner);
	/* old-labels is no longer counted: 2 replicas, all of the new one. */
	assert_writes("selector change", &r, "");
	assert_int_equal(json_int(written_status(&r), "replicas", -1), 2);
	assert_int_equal(json_int(written_status(&r), "updatedReplicas", -1), 2);
	sync_result_clear(&r);
	world_free(&w);
}

/* kube's TestReentrantRollback: rollback-to 0 with revisions 1 and 2 rolls the template
 * back to revision 1's, and only the Deployment is updated (the annotation cleared), no
 * ReplicaSet. */
static void
sync_rolls_back_without_touching_replicasets(void **state)
{
	struct dep d = { .replicas = 1, .revision = "2", .rollback_to = "0" };
	struct rset rs[] = {
		{ .name = "deploymentrs-old", .replicas = 0, .old = 1, .revision = "1" },
		{ .name = "deploymentrs-new", .replicas = 1, .at = 1, .revision = "2" },
	};
	struct world w;
	struct sync_result r;
	const struct action *a;

	(void)state;
	world_init(&w, &d, rs, NELEM(rs));
	world_sync(&w, NOW, &r);
	assert_writes("rollback", &r, "rollback foo");
	a = &r.writes[0];
	assert_int_equal(a->type, ACTION_UPDATE);
	assert_ptr_equal(a->resource, resource_find("deployments"));
	assert_null(annotation(a->body, DEPLOYMENT_ROLLBACK_TO_ANNOTATION));
	assert_string_equal(json_string(cJSON_GetArrayItem(json_path(a->body,
	    "spec.template.spec.containers"), 0), "image"), "foo/bar:old-1");
	assert_null(cJSON_GetObjectItem(json_path(a->body, "spec.template.metadata.labels"),
	    DEPLOYMENT_HASH_LABEL));
	assert_string_equal(a->done_reason, "DeploymentRollback");
	assert_string_equal(a->done_message, "Rolled back deployment \"foo\" to revision 1");
	assert_null(r.status);
	sync_result_clear(&r);
	world_free(&w);
}

/*
 * kube's getRollbackTo: the deprecated rollback-to annotation is a revision as
 * strconv.ParseInt reads it (an optional sign, decimal digits, within int64); an empty or
 * invalid one is ignored (the sync goes on as if it were absent, a paused Deployment's
 * history is cleaned up), and any valid one is a rollback, a negative revision one that
 * is not found (a warning, the annotation cleared). Revisions 1 and 2, the new ReplicaSet
 * at full size; the history limit 0 leaves foo-old to be cleaned up when paused.
 */
static const struct rollback_to_case {
	const char *name;
	const char *value;
	int paused;
	const char *want;
	const char *event;		/* the warning's message; NULL: none */
} rollback_to_cases[] = {
	{ "sqlkcm: revision 1", "1", 0, "rollback foo", NULL },
	{ "sqlkcm: +1 is 1", "+1", 0, "rollback foo", NULL },
	{ "sqlkcm: a negative revision is not found", "-1", 0, "rollback foo",
	  "Unable to find the revision to rollback to." },
	{ "sqlkcm: revision 5 is not found", "5", 0, "rollback foo",
	  "Unable to find the revision to rollback to." },
	{ "sqlkcm: empty is ignored", "", 0, "", NULL },
	{ "sqlkcm: a blank before the digits is invalid", " 1", 0, "", NULL },
	{ "sqlkcm: trailing garbage is invalid", "1x", 0, "", NULL },
	{ "sqlkcm: beyond int64 is invalid", "9223372036854775808", 0, "", NULL },
	{ "sqlkcm: a sign alone is invalid", "-", 0, "", NULL },
	{ "sqlkcm: paused, a valid one holds the cleanup back", "1", 1, "", NULL },
	{ "sqlkcm: paused, an invalid one does not", "x", 1, "delete foo-old", NULL },
};

static void
sync_reads_the_rollback_annotation_as_kube(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(rollback_to_cases); i++) {
		const struct rollback_to_case *c = &rollback_to_cases[i];
		struct dep d = { .replicas = 1, .revision = "2", .rollback_to = c->value,
		    .paused = c->paused, .history = "0" };
		struct rset rs[] = {
			{ .name = "foo-old", .replicas = 0, .old = 1, .revision = "1",
			  .status = "{}" },
			{ .name = "foo-new", .replicas = 1, .at = 1, .revision = "2",
			  .status = "{\"replicas\":1,\"availableReplicas\":1}" },
		};
		struct world w;
		struct sync_result r;

		world_init(&w, &d, rs, NELEM(rs));
		world_sync(&w, NOW, &r);
		assert_writes(c->name, &r, c->want);
		if (strcmp(c->want, "rollback foo") == 0)
			assert_null(annotation(r.writes[0].body,
			    DEPLOYMENT_ROLLBACK_TO_ANNOTATION));
		if (c->event == NULL ? r.nevents != 0 : r.nevents != 1 ||
		    strcmp(r.events[0].reason, "DeploymentRollbackRevisionNotFound") != 0 ||
		    strcmp(r.events[0].message, c->event) != 0)
			fail_msg("%s: %d events, want %s", c->name, r.nevents,
			    c->event != NULL ? c->event : "none");
		sync_result_clear(&r);
		world_free(&w);
	}
}

/* sqlkcm's: the cache lagging the controller's own last write holds the sync back; a
 * Deployment gone from the cache is forgotten. */
static void
sync_waits_for_its_writes_and_forgets_a_gone_deployment(void **state)
{
	struct dep d = { .replicas = 1 };
	struct world w;
	struct sync_result r;
	char *error = NULL;

	(void)state;
	world_init(&w, &d, NULL, 0);
	assert_int_equal(consistency_wrote_at(w.c->writes, "default/foo", "uid-foo",
	    "replicasets", "10", &error), 0);
	assert_int_equal(store_set_resource_version(w.f->store, w.f->replicasets, "9", &error),
	    0);
	world_sync(&w, NOW, &r);
	assert_true(r.stale);
	assert_string_equal(r.stale_resource, "replicasets");
	assert_writes("stale", &r, "");
	assert_null(r.status);
	sync_result_clear(&r);
	assert_int_equal(store_set_resource_version(w.f->store, w.f->replicasets, "10",
	    &error), 0);
	world_sync(&w, NOW, &r);
	assert_false(r.stale);
	assert_writes("caught up", &r, "create 1");
	sync_result_clear(&r);

	free(w.key);
	w.key = xstrdup("default/gone");
	world_sync(&w, NOW, &r);
	assert_true(r.forget_expectations);
	assert_null(r.owner_uid);
	assert_writes("gone", &r, "");
	assert_null(r.status);
	sync_result_clear(&r);
	world_free(&w);
}

/* Bodies go out as they came in: a template's integers of 10^15 and 2^63-1 reach the new
 * ReplicaSet with their digits (cJSON alone would send 1e+15, which the apiserver refuses,
 * and round the other), and so does the Deployment's status update. */
static void
sync_sends_large_integers_of_the_template_as_written(void **state)
{
	(void)state;
	static const char text[] =
	    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
	    "\"name\":\"web\",\"namespace\":\"default\",\"uid\":\"uid-web\","
	    "\"resourceVersion\":\"7\",\"generation\":1},\"spec\":{\"replicas\":2,"
	    "\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"template\":{"
	    "\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{"
	    "\"terminationGracePeriodSeconds\":1000000000000000,"
	    "\"activeDeadlineSeconds\":9223372036854775807,"
	    "\"containers\":[{\"name\":\"c\",\"image\":\"pause\"}]}}}}";
	struct world w = { 0 };
	struct sync_result r;
	char *error = NULL;
	int creates = 0, statuses = 0;

	w.f = fixture_new();
	w.c = controller_new(&deployment_controller_type, w.f->store, NULL, &error);
	if (w.c == NULL)
		fail_msg("controller_new: %s", error);
	fixture_upsert_text(w.f, resource_find("deployments"), text);
	w.d = fixture_parse(text);
	w.key = xstrdup("default/web");
	world_sync(&w, NOW, &r);
	for (int i = 0; i < r.nwrites; i++) {
		const struct action *a = &r.writes[i];
		char *body = cJSON_PrintUnformatted(a->body);

		if (strcmp(a->verb, "create") == 0 || strcmp(a->verb, "update-status") == 0) {
			creates += strcmp(a->verb, "create") == 0;
			statuses += strcmp(a->verb, "update-status") == 0;
			if (strstr(body, "\"terminationGracePeriodSeconds\":1000000000000000,") ==
			    NULL || strstr(body, "\"activeDeadlineSeconds\":"
			    "9223372036854775807,") == NULL)
				fail_msg("%s: the template's integers changed: %s", a->verb, body);
		}
		free(body);
	}
	if (r.status != NULL) {
		char *body = cJSON_PrintUnformatted(r.status->body);

		statuses++;
		if (strstr(body, "\"activeDeadlineSeconds\":9223372036854775807,") == NULL)
			fail_msg("status: the template's integers changed: %s", body);
		free(body);
	}
	assert_int_equal(creates, 1);
	assert_true(statuses >= 1);
	sync_result_clear(&r);
	world_free(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scaled_value_follows_intstr),
		cmocka_unit_test(scaled_value_of_nothing_is_zero),
		cmocka_unit_test(fenceposts_follow_kubes_resolve_fenceposts_cases),
		cmocka_unit_test(max_unavailable_follows_kubes_cases),
		cmocka_unit_test(absent_fields_read_as_the_apis_defaults),
		cmocka_unit_test(new_rs_replicas_follow_kubes_cases),
		cmocka_unit_test(new_rs_replicas_count_the_new_one_among_all),
		cmocka_unit_test(proportion_follows_kubes_get_replica_set_fraction_cases),
		cmocka_unit_test(proportion_stays_within_what_is_left),
		cmocka_unit_test(proportional_scaling_follows_kubes_scale_cases),
		cmocka_unit_test(int32_annotation_follows_kubes_cases),
		cmocka_unit_test(new_rs_annotations_follow_kubes_annotation_utils),
		cmocka_unit_test(saturation_needs_size_annotation_and_availability),
		cmocka_unit_test(replicas_annotations_need_update_follows_kubes_cases),
		cmocka_unit_test(new_rs_annotations_copy_all_but_the_skipped),
		cmocka_unit_test(new_rs_annotations_size_a_replicaset_to_be_created),
		cmocka_unit_test(new_rs_annotations_keep_a_higher_or_garbled_revision),
		cmocka_unit_test(revision_history_is_kept_within_the_limit),
		cmocka_unit_test(max_and_last_revision_skip_the_unparseable),
		cmocka_unit_test(revision_reads_the_annotation),
		cmocka_unit_test(templates_equal_follows_kubes_equal_ignore_hash_cases),
		cmocka_unit_test(templates_equal_reads_json_as_go_values),
		cmocka_unit_test(template_hash_follows_kubes_pod_template_spec_hash),
		cmocka_unit_test(template_hash_is_stable_and_canonical),
		cmocka_unit_test(rs_name_follows_kubes_generate_replica_set_name_cases),
		cmocka_unit_test(complete_follows_kubes_deployment_complete_cases),
		cmocka_unit_test(complete_waits_for_the_generation),
		cmocka_unit_test(progressing_follows_kubes_deployment_progressing_cases),
		cmocka_unit_test(timed_out_follows_kubes_deployment_timed_out_cases),
		cmocka_unit_test(limits_are_unset_when_absent_or_max_int32),
		cmocka_unit_test(condition_set_follows_kubes_set_condition_cases),
		cmocka_unit_test(condition_remove_follows_kubes_remove_condition_cases),
		cmocka_unit_test(condition_set_keeps_the_transition_time),
		/* syncs: rolling_test.go */
		cmocka_unit_test(sync_reconciles_the_new_replicaset_as_kube),
		cmocka_unit_test(sync_reconciles_old_replicasets_as_kube),
		cmocka_unit_test(sync_cleans_up_unhealthy_replicas_as_kube),
		cmocka_unit_test(sync_scales_down_old_replicasets_as_kube),
		/* recreate_test.go */
		cmocka_unit_test(recreate_sync_scales_old_replicasets_down_first),
		cmocka_unit_test(recreate_sync_waits_for_old_pods_as_kube),
		cmocka_unit_test(recreate_sync_does_not_wait_for_the_new_replicasets_pods),
		/* sync_test.go */
		cmocka_unit_test(sync_scales_as_kubes_scale_cases),
		cmocka_unit_test(sync_cleans_up_the_history_as_kube),
		cmocka_unit_test(rolling_sync_cleans_up_the_history_when_complete),
		/* progress_test.go */
		cmocka_unit_test(sync_requeues_a_stuck_deployment_as_kube),
		cmocka_unit_test(sync_rollout_status_follows_kubes_cases),
		/* deployment_controller_test.go */
		cmocka_unit_test(sync_creates_the_new_replicaset_as_kube),
		cmocka_unit_test(sync_creates_within_max_surge_and_reports_the_creation),
		cmocka_unit_test(
		    sync_of_a_taken_name_is_a_collision_unless_the_replicaset_is_its_own),
		cmocka_unit_test(sync_of_a_deployment_being_deleted_writes_only_its_status),
		cmocka_unit_test(sync_adopts_after_rechecking_the_deployment),
		cmocka_unit_test(sync_of_an_empty_selector_warns_and_stops),
		cmocka_unit_test(sync_claims_only_the_deployments_own_replicasets),
		cmocka_unit_test(sync_adopts_and_releases_as_kube),
		cmocka_unit_test(sync_after_a_selector_change_adopts_and_releases),
		cmocka_unit_test(sync_rolls_back_without_touching_replicasets),
		cmocka_unit_test(sync_reads_the_rollback_annotation_as_kube),
		cmocka_unit_test(sync_waits_for_its_writes_and_forgets_a_gone_deployment),
		cmocka_unit_test(sync_sends_large_integers_of_the_template_as_written),
	};

	return cmocka_run_group_tests_name("deployment", tests, NULL, NULL);
}
