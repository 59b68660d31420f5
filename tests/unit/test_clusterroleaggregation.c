/*
 * test_clusterroleaggregation.c - the ClusterRole aggregation controller
 * (controllers/clusterroleaggregation.c) against kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/clusterroleaggregation; the first cases are
 * those of its TestSyncClusterRole (the roles hammer, chisel, saw and the aggregated
 * "combined"), the expected write the server-side apply configuration kube sends (none
 * when nothing differs). The cases after them are sqlkcm's own: the selector operators,
 * a role that selects itself, lists missing or empty, a refused selector, the handlers.
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
#include "controllers/clusterroleaggregation.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "util.h"

/* kube's hammerRules, chiselRules and sawRules. */
#define HAMMER "{\"verbs\":[\"hammer\"],\"resources\":[\"nails\"]}," \
	"{\"verbs\":[\"hammer\"],\"resources\":[\"wedges\"]}"
#define CHISEL "{\"verbs\":[\"chisel\"],\"resources\":[\"mortises\"]}"
#define SAW "{\"verbs\":[\"saw\"],\"resources\":[\"boards\"]}"

#define FOO_BAR "{\"foo\":\"bar\"}"
#define FOO_NOT_BAR "{\"foo\":\"not-bar\"}"
#define BY_FOO_BAR "{\"matchLabels\":" FOO_BAR "}"
#define BY_FOO_NOT_BAR "{\"matchLabels\":" FOO_NOT_BAR "}"

/* A ClusterRole: its name, labels (JSON; NULL: none), rules (the members of the list;
 * NULL: no rules member) and aggregationRule's selectors (the members of the list; NULL:
 * no aggregationRule). */
struct role {
	const char *name;
	const char *labels;
	const char *rules;
	const char *selectors;
};

struct case_row {
	const char *name;
	struct role roles[6];
	const char *apply;	/* the rules member of the apply, "" none; NULL: no write */
	int failed;		/* the sync fails (and writes nothing) */
};

static const struct case_row rows[] = {
	/* kube's TestSyncClusterRole */
	{ "remove dead rules", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "combined", NULL, SAW, BY_FOO_BAR } },
	    "[" HAMMER "]", 0 },
	{ "strip rules", {
		{ "hammer", FOO_NOT_BAR, HAMMER, NULL },
		{ "combined", NULL, HAMMER, BY_FOO_BAR } },
	    "", 0 },
	{ "select properly and put in order", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "chisel", FOO_BAR, CHISEL, NULL },
		{ "saw", FOO_NOT_BAR, SAW, NULL },
		{ "combined", NULL, NULL, BY_FOO_BAR } },
	    "[" CHISEL "," HAMMER "]", 0 },
	{ "select properly with multiple selectors", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "chisel", FOO_BAR, CHISEL, NULL },
		{ "saw", FOO_NOT_BAR, SAW, NULL },
		{ "combined", NULL, NULL, BY_FOO_BAR "," BY_FOO_NOT_BAR } },
	    "[" CHISEL "," HAMMER "," SAW "]", 0 },
	{ "select properly remove duplicates", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "chisel", FOO_BAR, CHISEL, NULL },
		{ "saw", FOO_BAR, SAW, NULL },
		{ "other-saw", FOO_NOT_BAR, SAW, NULL },
		{ "combined", NULL, NULL, BY_FOO_BAR "," BY_FOO_NOT_BAR } },
	    "[" CHISEL "," HAMMER "," SAW "]", 0 },
	{ "no diff skip", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "combined", NULL, HAMMER, BY_FOO_BAR } },
	    NULL, 0 },
	/* sqlkcm's own */
	{ "the same rules in another order are rewritten in kube's", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "chisel", FOO_BAR, CHISEL, NULL },
		{ "combined", NULL, HAMMER "," CHISEL, BY_FOO_BAR } },
	    "[" CHISEL "," HAMMER "]", 0 },
	{ "a rule twice in one role is kept once", {
		{ "hammer", FOO_BAR, HAMMER "," HAMMER, NULL },
		{ "combined", NULL, NULL, BY_FOO_BAR } },
	    "[" HAMMER "]", 0 },
	{ "a role its own selector picks is left out", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "combined", FOO_BAR, HAMMER "," SAW, BY_FOO_BAR } },
	    "[" HAMMER "]", 0 },
	{ "a missing list is an empty one: nothing to write", {
		{ "hammer", FOO_BAR,
		    "{\"verbs\":[\"get\"],\"apiGroups\":[],\"resources\":[\"pods\"]}", NULL },
		{ "combined", NULL, "{\"verbs\":[\"get\"],\"resources\":[\"pods\"],"
		    "\"resourceNames\":[]}", BY_FOO_BAR } },
	    NULL, 0 },
	{ "every list of a rule is compared and written", {
		{ "hammer", FOO_BAR,
		    "{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"],"
		    "\"resourceNames\":[\"a\"]},{\"verbs\":[\"get\"],"
		    "\"nonResourceURLs\":[\"/healthz\"]}", NULL },
		{ "combined", NULL, "{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],"
		    "\"resources\":[\"pods\"]}", BY_FOO_BAR } },
	    "[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"],"
	    "\"resourceNames\":[\"a\"]},{\"verbs\":[\"get\"],"
	    "\"nonResourceURLs\":[\"/healthz\"]}]", 0 },
	{ "matchExpressions In and NotIn", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "chisel", "{\"foo\":\"baz\"}", CHISEL, NULL },
		{ "saw", NULL, SAW, NULL },
		{ "combined", NULL, NULL, "{\"matchExpressions\":[{\"key\":\"foo\","
		    "\"operator\":\"In\",\"values\":[\"bar\",\"baz\"]},{\"key\":\"foo\","
		    "\"operator\":\"NotIn\",\"values\":[\"baz\"]}]}" } },
	    "[" HAMMER "]", 0 },
	{ "matchExpressions Exists and DoesNotExist", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "chisel", "{\"foo\":\"baz\",\"blunt\":\"yes\"}", CHISEL, NULL },
		{ "saw", NULL, SAW, NULL },
		{ "combined", NULL, NULL, "{\"matchExpressions\":[{\"key\":\"foo\","
		    "\"operator\":\"Exists\"},{\"key\":\"blunt\","
		    "\"operator\":\"DoesNotExist\"}]}" } },
	    "[" HAMMER "]", 0 },
	{ "NotIn takes a role without the label", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "saw", NULL, SAW, NULL },
		{ "combined", NULL, NULL, "{\"matchExpressions\":[{\"key\":\"foo\","
		    "\"operator\":\"NotIn\",\"values\":[\"bar\"]}]}" } },
	    "[" SAW "]", 0 },
	{ "matchLabels and matchExpressions must both hold", {
		{ "hammer", "{\"foo\":\"bar\",\"size\":\"big\"}", HAMMER, NULL },
		{ "chisel", FOO_BAR, CHISEL, NULL },
		{ "combined", NULL, NULL, "{\"matchLabels\":" FOO_BAR ",\"matchExpressions\":"
		    "[{\"key\":\"size\",\"operator\":\"Exists\"}]}" } },
	    "[" HAMMER "]", 0 },
	{ "an empty selector picks every other role", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "saw", NULL, SAW, NULL },
		{ "combined", NULL, NULL, "{}" } },
	    "[" HAMMER "," SAW "]", 0 },
	{ "no selector picks nothing", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "combined", NULL, HAMMER, "" } },
	    "", 0 },
	{ "a role without an aggregationRule is left alone", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "combined", NULL, SAW, NULL } },
	    NULL, 0 },
	{ "an unknown operator fails the sync", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "combined", NULL, SAW, "{\"matchExpressions\":[{\"key\":\"foo\","
		    "\"operator\":\"Near\",\"values\":[\"bar\"]}]}" } },
	    NULL, 1 },
	{ "In without values fails the sync", {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "combined", NULL, SAW, BY_FOO_BAR ",{\"matchExpressions\":[{\"key\":\"foo\","
		    "\"operator\":\"In\",\"values\":[]}]}" } },
	    NULL, 1 },
};

static cJSON *
role_new(const struct role *r)
{
	struct buf b;
	cJSON *role;

	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\","
	    "\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\"",
	    r->name, r->name);
	if (r->labels != NULL)
		buf_printf(&b, ",\"labels\":%s", r->labels);
	buf_append_str(&b, "}");
	if (r->rules != NULL)
		buf_printf(&b, ",\"rules\":[%s]", r->rules);
	if (r->selectors != NULL)
		buf_printf(&b, ",\"aggregationRule\":{\"clusterRoleSelectors\":[%s]}",
		    r->selectors);
	buf_append_str(&b, "}");
	role = fixture_parse(b.data);
	buf_free(&b);
	return role;
}

static int
world_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(&clusterroleaggregation_controller_type, NULL);

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
cache_roles(struct ctl_world *w, const struct role *roles, size_t n)
{
	for (size_t i = 0; i < n && roles[i].name != NULL; i++)
		ctl_cache(w, resource_find("clusterroles"), role_new(&roles[i]));
}

/* The row's roles, "combined" synced: the apply kube sends, or nothing. */
static void
case_row(void **state)
{
	struct ctl_world *w = *state;
	const struct case_row *row = w->row;
	const struct action *a;
	char *got, *want;

	cache_roles(w, row->roles, NELEM(row->roles));
	ctl_sync(w, "combined", NOW);
	assert_int_equal(w->result.failed, row->failed);
	if (row->apply == NULL) {
		assert_int_equal(w->result.nwrites, 0);
		return;
	}
	assert_int_equal(w->result.nwrites, 1);
	a = &w->result.writes[0];
	assert_int_equal(a->type, ACTION_PATCH);
	assert_string_equal(a->field_manager, "clusterrole-aggregation-controller");
	assert_string_equal(a->name, "combined");
	assert_string_equal(a->uid, "uid-combined");
	got = cJSON_PrintUnformatted(a->body);
	want = xasprintf("{\"kind\":\"ClusterRole\",\"apiVersion\":\"rbac.authorization.k8s.io/v1\","
	    "\"metadata\":{\"name\":\"combined\"}%s%s}", *row->apply != '\0' ? ",\"rules\":" : "",
	    row->apply);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* What the view clusterrole_aggregation shows people agrees with the sync: it differs
 * exactly when the sync writes, and wants the rules the sync applies; a role that is not
 * aggregated has no row. */
static void
view_agrees(void **state)
{
	struct ctl_world *w = *state;
	const struct case_row *row = w->row;
	sqlite3_stmt *stmt;

	cache_roles(w, row->roles, NELEM(row->roles));
	assert_int_equal(sqlite3_prepare_v2(store_db(w->store),
	    "SELECT wanted, differs FROM clusterrole_aggregation WHERE role = 'combined'", -1,
	    &stmt, NULL), SQLITE_OK);
	/* A role without an aggregationRule has no row. */
	if (sqlite3_step(stmt) == SQLITE_DONE) {
		assert_null(row->apply);
		sqlite3_finalize(stmt);
		return;
	}
	if (row->apply != NULL)
		assert_string_equal((const char *)sqlite3_column_text(stmt, 0),
		    *row->apply != '\0' ? row->apply : "[]");
	assert_int_equal(sqlite3_column_int(stmt, 1), row->apply != NULL);
	sqlite3_finalize(stmt);
}

/* Any change of any ClusterRole queues every aggregated role, and only those; list_keys
 * gives them too. */
static void
handlers_queue_every_aggregated_role(void **state)
{
	static const struct role roles[] = {
		{ "hammer", FOO_BAR, HAMMER, NULL },
		{ "combined", NULL, NULL, BY_FOO_BAR },
		{ "also", NULL, NULL, "" },
	};
	struct ctl_world *w = *state;
	const struct resource *clusterroles = resource_find("clusterroles");
	char *keys;

	cache_roles(w, roles, NELEM(roles));
	ctl_tell(w, INFORMER_UPDATED, clusterroles, role_new(&roles[0]), role_new(&roles[0]));
	keys = ctl_keys(w);
	assert_string_equal(keys, "also,combined");
	free(keys);
	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_DELETED, resource_find("pods"), fixture_parse("{}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "");
	free(keys);
	ctl_list_keys(w);
	keys = ctl_keys(w);
	assert_string_equal(keys, "also,combined");
	free(keys);
}

/* A role gone from the cache is forgotten, with nothing written. */
static void
gone_role(void **state)
{
	struct ctl_world *w = *state;

	ctl_sync(w, "combined", NOW);
	assert_int_equal(w->result.nwrites, 0);
	assert_int_equal(w->result.forget_expectations, 1);
}

int
main(void)
{
	static char view_names[NELEM(rows)][128];
	struct CMUnitTest tests[2 * NELEM(rows) + 2];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(rows); i++)
		tests[n++] = (struct CMUnitTest){ rows[i].name, case_row, world_setup,
		    world_teardown, (void *)&rows[i] };
	for (size_t i = 0; i < NELEM(rows); i++) {
		if (rows[i].failed)
			continue;
		snprintf(view_names[i], sizeof view_names[i], "view: %s", rows[i].name);
		tests[n++] = (struct CMUnitTest){ view_names[i], view_agrees,
		    world_setup, world_teardown, (void *)&rows[i] };
	}
	tests[n++] = (struct CMUnitTest){ "handlers queue every aggregated role",
	    handlers_queue_every_aggregated_role, world_setup, world_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "a role gone is forgotten", gone_role, world_setup,
	    world_teardown, NULL };
	return _cmocka_run_group_tests("clusterroleaggregation", tests, n, NULL, NULL);
}
