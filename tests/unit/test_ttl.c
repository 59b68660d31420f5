/*
 * test_ttl.c - the TTL controller (controllers/ttl.c) against kube-controller-manager's
 * rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/ttl/ttl_controller.go; the cases are those of
 * its ttl_controller_test.go: TestDesiredTTL (the boundaries and their hysteresis, one row
 * each: the count and step before, a node added or deleted, the TTL after),
 * TestUpdateNodeIfNeeded and TestPatchNode (a node's annotation against the desired TTL,
 * and the patch), then rows of sqlkcm's own.
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
#include "controllers/ttl.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

/* --- TestDesiredTTL -------------------------------------------------------------------- */

struct desired_case {
	int add;		/* 1: a node added; 0: one deleted */
	int count, step;	/* before */
	int ttl;		/* after */
};

static const struct desired_case desired_cases[] = {
	{ 1, 0, 0, 0 },
	{ 1, 99, 0, 0 },
	{ 1, 100, 0, 15 },
	{ 0, 101, 1, 15 },
	{ 0, 91, 1, 15 },
	{ 1, 91, 1, 15 },
	{ 0, 90, 1, 0 },
	{ 0, 1800, 4, 60 },
	{ 0, 10000, 4, 300 },
	/* sqlkcm's: every boundary, up and down. */
	{ 1, 500, 1, 30 },
	{ 1, 1000, 2, 60 },
	{ 1, 2000, 3, 300 },
	{ 1, 100000, 4, 300 },
	{ 0, 450, 2, 15 },
	{ 0, 451, 2, 30 },
	{ 0, 900, 3, 30 },
	{ 0, 1, 0, 0 },
};

static void
desired_ttl_follows_the_boundaries(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(desired_cases); i++) {
		const struct desired_case *c = &desired_cases[i];
		struct ttl_size s = { c->count, c->step };

		if (c->add)
			ttl_size_node_added(&s);
		else
			ttl_size_node_deleted(&s);
		if (ttl_size_seconds(&s) != c->ttl)
			fail_msg("row %zu: %s a node at %d nodes, step %d: TTL %d, want %d", i,
			    c->add ? "adding" : "deleting", c->count, c->step,
			    ttl_size_seconds(&s), c->ttl);
	}
}

/* Adding nodes one by one from none, as the informer's first list does: 0 s up to 100
 * nodes, 15 s from 101, 30 s from 501, 60 s from 1001, 300 s from 2001; then deleting
 * them all, the steps come down only below each minimum. */
static void
a_cluster_growing_then_shrinking_crosses_each_boundary_once(void **state)
{
	static const struct {
		int count, ttl;
	} up[] = { { 100, 0 }, { 101, 15 }, { 500, 15 }, { 501, 30 }, { 1000, 30 },
	    { 1001, 60 }, { 2000, 60 }, { 2001, 300 }, { 2500, 300 } },
	  down[] = { { 1800, 300 }, { 1799, 60 }, { 900, 60 }, { 899, 30 }, { 450, 30 },
	    { 449, 15 }, { 90, 15 }, { 89, 0 }, { 0, 0 } };
	struct ttl_size s = { 0, 0 };
	size_t k = 0;

	(void)state;
	while (k < NELEM(up)) {
		ttl_size_node_added(&s);
		if (s.count == up[k].count) {
			if (ttl_size_seconds(&s) != up[k].ttl)
				fail_msg("growing, at %d nodes: TTL %d, want %d", s.count,
				    ttl_size_seconds(&s), up[k].ttl);
			k++;
		}
	}
	for (k = 0; k < NELEM(down);) {
		ttl_size_node_deleted(&s);
		if (s.count == down[k].count) {
			if (ttl_size_seconds(&s) != down[k].ttl)
				fail_msg("shrinking, at %d nodes: TTL %d, want %d", s.count,
				    ttl_size_seconds(&s), down[k].ttl);
			k++;
		}
	}
}

/* --- TestUpdateNodeIfNeeded, TestPatchNode --------------------------------------------- */

struct patch_case {
	const char *name;
	int nodes;		/* the cluster's nodes (node "name" among them) */
	const char *annotations;	/* node "name"'s, JSON; NULL: none */
	const char *patch;	/* what is sent; NULL: nothing */
};

static const struct patch_case patch_cases[] = {
	{ "TestUpdateNodeIfNeeded, no annotation, desired 0", 1, NULL,
	    "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\"}}}" },
	{ "TestUpdateNodeIfNeeded, no annotation, desired 15", 101, NULL,
	    "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"15\"}}}" },
	{ "TestUpdateNodeIfNeeded, no annotation, desired 30", 501, NULL,
	    "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"30\"}}}" },
	{ "TestUpdateNodeIfNeeded, 0, desired 60", 1001,
	    "{\"node.alpha.kubernetes.io/ttl\":\"0\"}",
	    "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"60\"}}}" },
	{ "TestUpdateNodeIfNeeded, 60, desired 60", 1001,
	    "{\"node.alpha.kubernetes.io/ttl\":\"60\"}", NULL },
	{ "TestUpdateNodeIfNeeded, 60, desired 30", 501,
	    "{\"node.alpha.kubernetes.io/ttl\":\"60\"}",
	    "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"30\"}}}" },
	{ "TestPatchNode, empty annotations", 1, "{}",
	    "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\"}}}" },
	{ "TestPatchNode, other annotations are not sent", 1,
	    "{\"node.alpha.kubernetes.io/ttl\":\"15\",\"a\":\"b\"}",
	    "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\"}}}" },
	{ "TestPatchNode, in step with other annotations: nothing", 1,
	    "{\"node.alpha.kubernetes.io/ttl\":\"0\",\"a\":\"b\"}", NULL },
	/* sqlkcm's: the annotation read as Go's strconv.Atoi reads it. */
	{ "a value that is not a number is replaced", 1,
	    "{\"node.alpha.kubernetes.io/ttl\":\"zero\"}",
	    "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\"}}}" },
	{ "a value with a space is not a number", 1,
	    "{\"node.alpha.kubernetes.io/ttl\":\" 0\"}",
	    "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\"}}}" },
	{ "an empty value is not a number", 1, "{\"node.alpha.kubernetes.io/ttl\":\"\"}",
	    "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\"}}}" },
	{ "a number beyond 64 bits is not one", 1,
	    "{\"node.alpha.kubernetes.io/ttl\":\"99999999999999999999\"}",
	    "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\"}}}" },
	{ "a sign and leading zeros still read as the number: in step", 101,
	    "{\"node.alpha.kubernetes.io/ttl\":\"+015\"}", NULL },
	{ "minus zero is zero: in step", 1, "{\"node.alpha.kubernetes.io/ttl\":\"-0\"}", NULL },
};

static int
env_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(NULL, NULL);

	w->row = *state;
	*state = w;
	return 0;
}

static int
env_teardown(void **state)
{
	ctl_world_free(*state);
	return 0;
}

/* A node named name, with annotations (JSON; NULL: none). */
static cJSON *
node_new(const char *name, const char *annotations)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
	    "\"%s\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\"%s%s}}", name, name,
	    annotations != NULL ? ",\"annotations\":" : "", annotations != NULL ? annotations :
	    "");
	cJSON *node = fixture_parse(text);

	free(text);
	return node;
}

/* The controller starts over a cache of the row's nodes and syncs node "name". */
static void
patch_case(void **state)
{
	struct ctl_world *w = *state;
	const struct patch_case *row = w->row;
	const struct resource *nodes = resource_find("nodes");
	char *got = NULL;

	ctl_cache(w, nodes, node_new("name", row->annotations));
	for (int i = 1; i < row->nodes; i++) {
		char name[32];

		snprintf(name, sizeof name, "other-%d", i);
		ctl_cache(w, nodes, node_new(name, NULL));
	}
	assert_int_equal(ctl_start(w, &ttl_controller_type, NULL), 0);
	ctl_sync(w, "name", 0);
	if (w->result.nwrites > 0) {
		const struct action *a = &w->result.writes[0];

		assert_int_equal(w->result.nwrites, 1);
		assert_int_equal(a->type, ACTION_PATCH);
		assert_false(a->merge_patch);
		assert_string_equal(a->resource->name, "nodes");
		assert_string_equal(a->name, "name");
		got = cJSON_PrintUnformatted(a->body);
	}
	assert_described("patch", got != NULL ? got : "", row->patch);
	free(got);
}

/* Nodes added after the start move the TTL and are queued; a deleted one only moves it;
 * an update queues its node. A node the cache no longer has is forgotten. */
static void
handlers_count_nodes_and_queue_them(void **state)
{
	struct ctl_world *w = *state;
	const struct resource *nodes = resource_find("nodes");
	char name[32], *keys;

	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof name, "n-%03d", i);
		ctl_cache(w, nodes, node_new(name, "{\"node.alpha.kubernetes.io/ttl\":\"0\"}"));
	}
	assert_int_equal(ctl_start(w, &ttl_controller_type, NULL), 0);
	ctl_sync(w, "n-000", 0);
	assert_int_equal(w->result.nwrites, 0);		/* 100 nodes: 0 s */

	ctl_tell(w, INFORMER_ADDED, nodes, node_new("n-100", NULL), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "n-100");
	free(keys);
	ctl_cache(w, nodes, node_new("n-100", NULL));
	ctl_sync(w, "n-000", 0);			/* 101 nodes: 15 s */
	assert_int_equal(w->result.nwrites, 1);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	    json_path(w->result.writes[0].body, "metadata.annotations"),
	    "node.alpha.kubernetes.io/ttl")), "15");

	ctl_keys_clear(w);
	ctl_tell(w, INFORMER_DELETED, nodes, node_new("n-100", NULL), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "");			/* a deletion queues nothing */
	free(keys);
	ctl_sync(w, "n-000", 0);			/* 100 nodes, above 90: still 15 s */
	assert_int_equal(w->result.nwrites, 1);

	ctl_tell(w, INFORMER_UPDATED, nodes, node_new("n-005", NULL), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "n-005");
	free(keys);

	ctl_sync(w, "gone", 0);
	assert_int_equal(w->result.forget_expectations, 1);
	assert_int_equal(w->result.nwrites, 0);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(patch_cases) + 3];
	size_t n = 0;

	tests[n++] = (struct CMUnitTest){ "TestDesiredTTL", desired_ttl_follows_the_boundaries,
	    NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a cluster growing then shrinking crosses each "
	    "boundary once", a_cluster_growing_then_shrinking_crosses_each_boundary_once, NULL,
	    NULL, NULL };
	for (size_t i = 0; i < NELEM(patch_cases); i++)
		tests[n++] = (struct CMUnitTest){ patch_cases[i].name, patch_case, env_setup,
		    env_teardown, (void *)&patch_cases[i] };
	tests[n++] = (struct CMUnitTest){ "handlers count the nodes and queue them",
	    handlers_count_nodes_and_queue_them, env_setup, env_teardown, NULL };
	return _cmocka_run_group_tests("ttl", tests, n, NULL, NULL);
}
