/*
 * test_history.c - ControllerRevision rules (history.c) against kube's, as data.
 *
 * The hashes of kube's HashControllerRevision were computed by Go with kube's own
 * rand.SafeEncodeString and hash/fnv (apimachinery v0.36.3) over the same bytes; the
 * ordering cases are kube v1.36.3's TestSortControllerRevisions, the equality ones its
 * TestFindEqualRevisions (same data equal, another template not), then sqlkcm's own rows.
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

#include "history.h"

#define NELEM(a) (sizeof (a) / sizeof (a)[0])

static const char raw_template[] = "{\"spec\":{\"template\":{\"$patch\":\"replace\","
    "\"metadata\":{\"creationTimestamp\":null,\"labels\":{\"app\":\"x\"}},\"spec\":"
    "{\"containers\":[{\"image\":\"nginx\",\"name\":\"c\",\"resources\":{}}]}}}}";

/* raw data, probe (-1: none), kube's hash. */
static const struct hash_case {
	const char *raw;
	long long probe;
	const char *want;
} hash_cases[] = {
	{ "", -1, "65bb57b6b5" },
	{ "", 0, "d8bfb7bc" },
	{ "", 1, "d8bfb7bb" },
	{ "", 7, "d8bfb7b4" },
	{ "", 42, "8f875b5b7" },
	{ "{\"spec\":{\"template\":{\"$patch\":\"replace\"}}}", -1, "5c7586484" },
	{ "{\"spec\":{\"template\":{\"$patch\":\"replace\"}}}", 0, "589f85db5b" },
	{ "{\"spec\":{\"template\":{\"$patch\":\"replace\"}}}", 1, "589f85db5c" },
	{ "{\"spec\":{\"template\":{\"$patch\":\"replace\"}}}", 7, "589f85db67" },
	{ "{\"spec\":{\"template\":{\"$patch\":\"replace\"}}}", 42, "7fb7486bf8" },
	{ "{\"a\":1}", -1, "69966c9df7" },
	{ "{\"a\":1}", 0, "d55c4ff5f" },
	{ "{\"a\":1}", 1, "d55c4ff5d" },
	{ "{\"a\":1}", 7, "d55c4ff56" },
	{ "{\"a\":1}", 42, "d4d6874c" },
	{ raw_template, -1, "74b566f8fb" },
	{ raw_template, 0, "854bdd4bb8" },
	{ raw_template, 1, "854bdd4bb9" },
	{ raw_template, 7, "854bdd4bc5" },
	{ raw_template, 42, "856cc89f9d" },
};

static void
hash_revision_is_kubes(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(hash_cases); i++) {
		const struct hash_case *c = &hash_cases[i];
		char *got = history_hash_revision(c->raw, strlen(c->raw), c->probe);

		if (strcmp(got, c->want) != 0)
			fail_msg("case %zu (probe %lld): got %s, want %s", i, c->probe, got,
			    c->want);
		free(got);
	}
}

/* Go's json.Marshal of the decoded map gives back raw_template from any member order. */
static void
canonical_json_is_gos(void **state)
{
	cJSON *v = cJSON_Parse("{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":"
	    "\"c\",\"resources\":{},\"image\":\"nginx\"}]},\"metadata\":{\"labels\":{\"app\":"
	    "\"x\"},\"creationTimestamp\":null},\"$patch\":\"replace\"}}}");
	cJSON *escapes = cJSON_Parse("{\"b\":\"<a&b>\\u2028\\n\\u0001\",\"a\":[1,2.5,-3]}");
	char *text;

	(void)state;
	assert_non_null(v);
	text = history_canonical_json(v);
	assert_string_equal(text, raw_template);
	free(text);
	text = history_canonical_json(escapes);
	assert_string_equal(text,
	    "{\"a\":[1,2.5,-3],\"b\":\"\\u003ca\\u0026b\\u003e\\u2028\\n\\u0001\"}");
	free(text);
	cJSON_Delete(v);
	cJSON_Delete(escapes);
}

/* kube's ControllerRevisionName: the prefix gives way at 223 bytes. */
static void
revision_name_cuts_long_prefixes(void **state)
{
	char prefix[301], *name;

	(void)state;
	name = history_revision_name("ds", "abc");
	assert_string_equal(name, "ds-abc");
	free(name);
	memset(prefix, 'p', 300);
	prefix[300] = '\0';
	name = history_revision_name(prefix, "h");
	assert_int_equal(strlen(name), 223 + 2);
	assert_string_equal(name + 223, "-h");
	free(name);
}

/* TestFindEqualRevisions: the same template is equal whatever its members' order; another
 * template is not; the collision count moves the template's hash. */
static void
equal_revisions_and_collisions(void **state)
{
	cJSON *a = cJSON_Parse("{\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"foo\":"
	    "\"bar\"}},\"$patch\":\"replace\"}}}");
	cJSON *a2 = cJSON_Parse("{\"spec\":{\"template\":{\"$patch\":\"replace\",\"metadata\":"
	    "{\"labels\":{\"foo\":\"bar\"}}}}}");
	cJSON *b = cJSON_Parse("{\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"goo\":"
	    "\"car\"}},\"$patch\":\"replace\"}}}");
	char *h0, *h0again, *h1, *hnil;

	(void)state;
	assert_true(history_data_equal(a, a2));
	assert_false(history_data_equal(a, b));
	assert_false(history_data_equal(a, NULL));
	assert_true(history_data_equal(NULL, NULL));
	h0 = history_template_hash(a, 0);
	h0again = history_template_hash(a2, 0);
	h1 = history_template_hash(a, 1);
	hnil = history_template_hash(a, -1);
	assert_string_equal(h0, h0again);
	assert_string_not_equal(h0, h1);
	assert_string_not_equal(h0, hnil);
	free(h0);
	free(h0again);
	free(h1);
	free(hnil);
	cJSON_Delete(a);
	cJSON_Delete(a2);
	cJSON_Delete(b);
}

/* TestSortControllerRevisions: input order, output names. rev3 at t, rev3time2 at t+1,
 * rev3time2name2 at t+1 with a later name. */
static const struct sort_case {
	const char *name;
	int n;
	struct history_revision in[5];
	const char *want[5];
} sort_cases[] = {
	{ "out of order", 3, { { "r2", 2, 100, 0 }, { "r1", 1, 100, 0 }, { "r3", 3, 100, 0 } },
	    { "r1", "r2", "r3" } },
	{ "sorted", 3, { { "r1", 1, 100, 0 }, { "r2", 2, 100, 0 }, { "r3", 3, 100, 0 } },
	    { "r1", "r2", "r3" } },
	{ "reversed", 3, { { "r3", 3, 100, 0 }, { "r2", 2, 100, 0 }, { "r1", 1, 100, 0 } },
	    { "r1", "r2", "r3" } },
	{ "with ties", 5, { { "r3", 3, 100, 0 }, { "r3t2n2", 3, 101, 0 }, { "r3t2", 3, 101, 0 },
	    { "r2", 2, 100, 0 }, { "r1", 1, 100, 0 } },
	    { "r1", "r2", "r3", "r3t2", "r3t2n2" } },
	{ "empty", 0, { { NULL, 0, 0, 0 } }, { NULL } },
};

static void
sort_case(void **state)
{
	const struct sort_case *c = *state;
	struct history_revision v[5];

	memcpy(v, c->in, sizeof v);
	history_sort(v, c->n);
	for (int i = 0; i < c->n; i++)
		assert_string_equal(v[i].name, c->want[i]);
}

/* kube's NextRevision: max + 1, 1 for none. */
static void
next_revision_is_max_plus_one(void **state)
{
	struct history_revision v[3] = { { "a", 4, 0, 0 }, { "b", 9, 0, 0 }, { "c", 2, 0, 0 } };

	(void)state;
	assert_int_equal(history_next_revision(v, 0), 1);
	assert_int_equal(history_next_revision(v, 3), 10);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(sort_cases) + 5];
	size_t n = 0;

	tests[n++] = (struct CMUnitTest){ "HashControllerRevision is kube's",
	    hash_revision_is_kubes, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "canonical JSON is Go's", canonical_json_is_gos,
	    NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "ControllerRevisionName cuts long prefixes",
	    revision_name_cuts_long_prefixes, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "TestFindEqualRevisions and collisions",
	    equal_revisions_and_collisions, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "NextRevision", next_revision_is_max_plus_one, NULL,
	    NULL, NULL };
	for (size_t i = 0; i < NELEM(sort_cases); i++)
		tests[n++] = (struct CMUnitTest){ sort_cases[i].name, sort_case, NULL, NULL,
		    (void *)&sort_cases[i] };
	return _cmocka_run_group_tests("history", tests, n, NULL, NULL);
}
