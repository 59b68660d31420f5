/*
 * test_deployment.c - the Deployment controller's rules (deploymentrules.c): the case
 * tables of kube-controller-manager's deployment/util tests (deployment_util_test.go,
 * hash_test.go), of the controller's own where they exercise a rule (sync_test.go's
 * TestScale and TestGenerateReplicaSetName), and of apimachinery's intstr_test.go, as
 * data. Each row names the kube case it ports; rows of sqlkcm's own say so.
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

#include "controllers/deployment.h"
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
		int rc = deployment_scaled_value(v, c->total, c->round_up, &got, &error);

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
	assert_int_equal(deployment_scaled_value(NULL, 10, 1, &got, NULL), 0);
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
	};

	return cmocka_run_group_tests_name("deployment", tests, NULL, NULL);
}
