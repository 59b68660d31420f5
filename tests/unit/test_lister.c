/*
 * test_lister.c - listers over the cache: get, list by namespace and selector, by owner.
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

#include "lister.h"
#include "util.h"

struct fixture {
	struct store *store;
	struct lister *lister;
	const struct resource *pods;
};

/* Adds a pod namespace/name (uid = "namespace-name") with labels JSON and an optional
 * controller owner uid. */
static void
add_pod(struct fixture *f, const char *ns, const char *name, const char *labels,
    const char *owner)
{
	char *owners = owner != NULL ? xasprintf(",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
	    "\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"%s\",\"controller\":true}]", owner) :
	    xstrdup("");
	char *text = xasprintf("{\"metadata\":{\"uid\":\"%s-%s\",\"namespace\":\"%s\",\"name\":\"%s\","
	    "\"resourceVersion\":\"1\",\"labels\":%s%s}}", ns, name, ns, name, labels, owners);
	cJSON *obj = cJSON_Parse(text);
	char *error = NULL;

	assert_non_null(obj);
	assert_int_equal(store_upsert_object(f->store, f->pods, obj, 1, NULL, NULL, &error), 0);
	cJSON_Delete(obj);
	free(text);
	free(owners);
}

static int
setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof *f);
	char *error = NULL;

	if (store_open(":memory:", NULL, &f->store, &error) != 0)
		return 1;
	f->lister = lister_new(f->store);
	f->pods = resource_find("pods");
	add_pod(f, "a", "web-1", "{\"app\":\"web\",\"tier\":\"front\"}", "rs-1");
	add_pod(f, "a", "web-2", "{\"app\":\"web\"}", "rs-1");
	add_pod(f, "a", "db-1", "{\"app\":\"db\"}", "rs-2");
	add_pod(f, "b", "web-1", "{\"app\":\"web\",\"tier\":\"back\"}", "rs-3");
	add_pod(f, "b", "orphan", "{\"app\":\"web\"}", NULL);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	lister_free(f->lister);
	store_close(f->store);
	free(f);
	return 0;
}

/* Collects "uid," for each object listed. */
static int
collect(const char *uid, const char *body, void *arg)
{
	assert_non_null(strstr(body, uid));
	buf_printf(arg, "%s,", uid);
	return 0;
}

/* Lists with the string selector text (NULL: no selector) and returns the uids. */
static char *
list(struct fixture *f, const char *ns, const char *text)
{
	struct selector *sel = NULL;
	struct buf out;
	char *error = NULL;

	buf_init(&out);
	if (text != NULL) {
		sel = selector_parse(text, &error);
		assert_non_null(sel);
	}
	assert_int_equal(lister_list(f->lister, f->pods, ns, sel, collect, &out, &error), 0);
	selector_free(sel);
	return buf_detach(&out);
}

static void
get_finds_by_namespace_and_name(void **state)
{
	struct fixture *f = *state;
	char *body = NULL, *error = NULL;

	assert_int_equal(lister_get(f->lister, f->pods, "b", "web-1", &body, &error), 0);
	assert_non_null(body);
	assert_non_null(strstr(body, "\"uid\":\"b-web-1\""));
	free(body);
	assert_int_equal(lister_get(f->lister, f->pods, "c", "web-1", &body, &error), 0);
	assert_null(body);
}

static void
list_filters_by_namespace_and_selector_in_name_order(void **state)
{
	static const struct {
		const char *ns, *selector, *want;
	} cases[] = {
		{ NULL, NULL, "a-db-1,a-web-1,a-web-2,b-orphan,b-web-1," },
		{ "a", NULL, "a-db-1,a-web-1,a-web-2," },
		{ "a", "app=web", "a-web-1,a-web-2," },
		{ NULL, "app=web,tier", "a-web-1,b-web-1," },
		{ NULL, "tier notin (front)", "a-db-1,a-web-2,b-orphan,b-web-1," },
		{ NULL, "!tier", "a-db-1,a-web-2,b-orphan," },
		{ "b", "app in (db)", "" },
		{ "nope", NULL, "" },
		{ NULL, "", "a-db-1,a-web-1,a-web-2,b-orphan,b-web-1," },
	};
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = list(f, cases[i].ns, cases[i].selector);
		assert_string_equal(got, cases[i].want);
		free(got);
	}
}

static void
api_selector_that_matches_nothing_lists_nothing(void **state)
{
	struct fixture *f = *state;
	struct selector *sel;
	struct buf out;
	char *error = NULL;

	buf_init(&out);
	sel = selector_from_json(NULL, &error);
	assert_non_null(sel);
	assert_int_equal(lister_list(f->lister, f->pods, NULL, sel, collect, &out, &error), 0);
	assert_int_equal(out.len, 0);
	selector_free(sel);
	buf_free(&out);
}

static void
controlled_by_lists_the_owners_pods_only(void **state)
{
	struct fixture *f = *state;
	struct buf out;
	char *error = NULL;

	buf_init(&out);
	assert_int_equal(lister_list_controlled_by(f->lister, f->pods, "rs-1", collect, &out,
	    &error), 0);
	assert_string_equal(out.data, "a-web-1,a-web-2,");
	buf_reset(&out);
	assert_int_equal(lister_list_controlled_by(f->lister, f->pods, "rs-9", collect, &out,
	    &error), 0);
	assert_int_equal(out.len, 0);
	buf_free(&out);
}

static int
stop_after_one(const char *uid, const char *body, void *arg)
{
	(void)uid;
	(void)body;
	(*(int *)arg)++;
	return 1;
}

static void
callback_can_stop_the_listing(void **state)
{
	struct fixture *f = *state;
	char *error = NULL;
	int calls = 0;

	assert_int_equal(lister_list(f->lister, f->pods, NULL, NULL, stop_after_one, &calls,
	    &error), 0);
	assert_int_equal(calls, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(get_finds_by_namespace_and_name, setup, teardown),
		cmocka_unit_test_setup_teardown(list_filters_by_namespace_and_selector_in_name_order,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(api_selector_that_matches_nothing_lists_nothing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(controlled_by_lists_the_owners_pods_only, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(callback_can_stop_the_listing, setup, teardown),
	};
	return cmocka_run_group_tests_name("lister", tests, NULL, NULL);
}
