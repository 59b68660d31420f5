/*
 * test_jsonarena.c - trees parsed into the arena are ordinary cJSON trees, freed in any
 * order, and the arena gives its chunks back.
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
#include <cjson/cJSON.h>

#include "jsonarena.h"
#include "util.h"

#define POD "{\"metadata\":{\"name\":\"web-%d\",\"labels\":{\"app\":\"web\",\"n\":\"%d\"}}," \
	"\"spec\":{\"nodeName\":\"node-%d\",\"containers\":[{\"name\":\"c\",\"image\":\"pause\"}]}," \
	"\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"

static cJSON *
parse_pod(int i)
{
	char *text = xasprintf(POD, i, i, i % 7);
	cJSON *tree = json_arena_parse(text, strlen(text));

	free(text);
	assert_non_null(tree);
	return tree;
}

/* A parse gives the tree cJSON's own parse gives. */
static void
arena_parse_is_cjsons_parse(void **state)
{
	(void)state;
	char *text = xasprintf(POD, 7, 7, 7);
	cJSON *a = json_arena_parse(text, strlen(text)), *b = cJSON_Parse(text);

	assert_true(cJSON_Compare(a, b, 1));
	assert_null(json_arena_parse("{\"a\":", 5));
	assert_null(json_arena_parse("", 0));
	cJSON_Delete(a);
	cJSON_Delete(b);
	free(text);
}

/* Thousands of trees (many chunks' worth) freed in a scrambled order: nothing is left
 * allocated, and at most the chunk being filled and the spare stay. */
static void
trees_freed_in_any_order_give_the_chunks_back(void **state)
{
	(void)state;
	enum { N = 20000 };
	cJSON **trees = xcalloc(N, sizeof *trees);
	struct json_arena_stats before, during, after;

	json_arena_stats(&before);
	for (int i = 0; i < N; i++)
		trees[i] = parse_pod(i);
	json_arena_stats(&during);
	assert_true(during.chunks >= 3);
	assert_true(during.live > before.live + N);
	/* Every third, then the rest backwards: chunks empty out of their order. */
	for (int i = 0; i < N; i += 3) {
		cJSON_Delete(trees[i]);
		trees[i] = NULL;
	}
	for (int i = N - 1; i >= 0; i--)
		cJSON_Delete(trees[i]);
	json_arena_stats(&after);
	assert_int_equal(after.live, before.live);
	assert_true(after.chunks <= 2);
	free(trees);
}

/* A tree is changed as any other: what is added comes from malloc, what is replaced goes
 * back to its chunk, and what cJSON prints is freed with free(). */
static void
arena_trees_change_and_print_as_any(void **state)
{
	(void)state;
	struct json_arena_stats before, after;
	cJSON *tree, *labels;
	char *printed, *big;

	json_arena_stats(&before);
	tree = parse_pod(1);
	labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tree,
	    "metadata"), "labels");
	cJSON_AddStringToObject(labels, "added", "yes");
	cJSON_ReplaceItemInObjectCaseSensitive(labels, "app", cJSON_CreateString("api"));
	cJSON_DeleteItemFromObjectCaseSensitive(tree, "status");
	assert_non_null(cJSON_SetValuestring(cJSON_GetObjectItemCaseSensitive(labels, "n"),
	    "a longer value than the one parsed"));
	printed = cJSON_PrintUnformatted(tree);
	assert_non_null(strstr(printed, "\"app\":\"api\""));
	assert_non_null(strstr(printed, "\"added\":\"yes\""));
	assert_null(strstr(printed, "status"));
	free(printed);
	cJSON_Delete(tree);
	/* A string larger than the arena takes goes to malloc, and comes back. */
	big = xmalloc(300000);
	memset(big, 'x', 300000);
	big[0] = '"';
	big[299998] = '"';
	big[299999] = '\0';
	tree = json_arena_parse(big, strlen(big));
	assert_true(cJSON_IsString(tree));
	assert_int_equal(strlen(tree->valuestring), 299997);
	cJSON_Delete(tree);
	free(big);
	json_arena_stats(&after);
	assert_int_equal(after.live, before.live);
}

/* Trees from malloc (cJSON_Parse, cJSON_Create*) are freed by the same hooks unharmed,
 * also when they hold nodes of the arena. */
static void
malloc_trees_and_mixed_trees_free_cleanly(void **state)
{
	(void)state;
	struct json_arena_stats before, after;
	cJSON *root;

	json_arena_stats(&before);
	root = cJSON_CreateObject();
	cJSON_AddItemToObject(root, "pod", parse_pod(2));
	cJSON_AddItemToObject(root, "plain", cJSON_Parse("{\"x\":[1,2,3]}"));
	cJSON_AddItemToObject(root, "copy", cJSON_Duplicate(
	    cJSON_GetObjectItemCaseSensitive(root, "pod"), 1));
	assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(root, "pod"),
	    cJSON_GetObjectItemCaseSensitive(root, "copy"), 1));
	cJSON_Delete(root);
	json_arena_stats(&after);
	assert_int_equal(after.live, before.live);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(arena_parse_is_cjsons_parse),
		cmocka_unit_test(trees_freed_in_any_order_give_the_chunks_back),
		cmocka_unit_test(arena_trees_change_and_print_as_any),
		cmocka_unit_test(malloc_trees_and_mixed_trees_free_cleanly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
