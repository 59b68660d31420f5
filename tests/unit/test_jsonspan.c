/*
 * test_jsonspan.c - extents of JSON values, members and elements, and the parse and copy
 * built on them.
 *
 * Every text is handed to the functions in an exact-size copy without a NUL, so that a
 * read past the bytes given shows under ASan or valgrind.
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

#include "json.h"
#include "jsonspan.h"
#include "util.h"

/* A text in a buffer of exactly its length, as the functions get it from a socket. */
struct exact {
	char *bytes;
	struct json_span span;
};

static struct exact
exact_new(const char *text)
{
	size_t len = strlen(text);
	struct exact e;

	e.bytes = malloc(len == 0 ? 1 : len);
	assert_non_null(e.bytes);
	memcpy(e.bytes, text, len);
	e.span.start = e.bytes;
	e.span.end = e.bytes + len;
	return e;
}

static void
exact_free(struct exact *e)
{
	free(e->bytes);
	e->bytes = NULL;
}

/* The text cJSON gives for a tree, to show in a failure. */
static void
assert_json_equal(const cJSON *got, const cJSON *want, const char *text)
{
	if (!cJSON_Compare(got, want, 1)) {
		char *g = cJSON_PrintUnformatted(got), *w = cJSON_PrintUnformatted(want);

		print_error("text %s: got %s, want %s\n", text, g, w);
		free(g);
		free(w);
		fail();
	}
}

/* --- json_span_value_end -------------------------------------------------------------- */

/* A value and what follows it; value NULL: the text (rest alone) starts with no whole
 * value. */
struct value_case {
	const char *value, *rest;
};

static const struct value_case value_cases[] = {
	/* strings: escaped quotes and backslashes do not end them */
	{ "\"\"", "" },
	{ "\"a\"", "," },
	{ "\"a\\\"b\"", "]" },
	{ "\"a\\\\\"", "\"b\"" },
	{ "\"\\\\\\\"\"", "}" },
	{ "\"\\u0022\\u005c\"", " " },
	{ "\"}]{[,:\"", "" },
	{ "\"\xc3\xa9\"", "" },
	/* containers, nested, with brackets in strings */
	{ "{}", "" },
	{ "[]", "]" },
	{ "{\"a\":[1,{\"b\":\"}\"}],\"c\":{\"d\":\"]\"}}", " x" },
	{ "[[[]],[{}],\"[\"]", ",1]" },
	{ "{ \"a\" : [ 1 , 2 ] }", "\n" },
	{ "[\"\\\"]\"]", "]" },
	/* numbers and literals end at , ] } : white space or the end */
	{ "123", "," },
	{ "-1.5e+3", "]" },
	{ "0", "}" },
	{ "true", " " },
	{ "false", "\n" },
	{ "null", "" },
	{ "12", ":" },
	{ "7", "\t" },
	{ "8", "\r" },
	{ "9", "\"x\"" },
	/* brackets that do not pair */
	{ NULL, "[}" },
	{ NULL, "{]" },
	{ NULL, "[[]" },
	{ NULL, "{\"a\":[}]" },
	{ NULL, "[{]}" },
	{ NULL, "]" },
	{ NULL, "}" },
	/* unterminated strings, also inside containers */
	{ NULL, "\"abc" },
	{ NULL, "\"ab\\" },
	{ NULL, "\"\\\"" },
	{ NULL, "[\"]\"" },
	{ NULL, "{\"a\":\"}" },
	/* no value at all */
	{ NULL, "" },
	{ NULL, "," },
	{ NULL, ":" },
	{ NULL, " 1" },
};

static void
value_end_is_the_byte_after_each_value_or_null_when_there_is_none(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof value_cases / sizeof value_cases[0]; i++) {
		const struct value_case *c = &value_cases[i];
		char *text = xasprintf("%s%s", c->value != NULL ? c->value : "", c->rest);
		struct exact e = exact_new(text);
		const char *end = json_span_value_end(e.span.start, e.span.end);

		if (c->value == NULL) {
			if (end != NULL)
				fail_msg("case %zu %s: ends at %td, want NULL", i, text,
				    end - e.span.start);
		} else if (end == NULL || end - e.span.start != (ptrdiff_t)strlen(c->value)) {
			fail_msg("case %zu %s: ends at %td, want %zu", i, text,
			    end == NULL ? (ptrdiff_t)-1 : end - e.span.start, strlen(c->value));
		}
		exact_free(&e);
		free(text);
	}
}

/* n brackets open, then n close. */
static char *
nested_arrays(int n)
{
	char *text = malloc((size_t)n * 2 + 1);

	assert_non_null(text);
	memset(text, '[', (size_t)n);
	memset(text + n, ']', (size_t)n);
	text[n * 2] = '\0';
	return text;
}

static void
value_end_refuses_nesting_deeper_than_cjson_does(void **state)
{
	char *deepest = nested_arrays(CJSON_NESTING_LIMIT);
	char *too_deep = nested_arrays(CJSON_NESTING_LIMIT + 1);
	struct exact e = exact_new(deepest), f = exact_new(too_deep);
	cJSON *parsed;

	(void)state;
	assert_ptr_equal(json_span_value_end(e.span.start, e.span.end), e.span.end);
	assert_null(json_span_value_end(f.span.start, f.span.end));
	/* the limit is cJSON's own */
	parsed = cJSON_Parse(deepest);
	assert_non_null(parsed);
	cJSON_Delete(parsed);
	assert_null(cJSON_Parse(too_deep));
	exact_free(&e);
	exact_free(&f);
	free(deepest);
	free(too_deep);
}

static void
skip_space_skips_only_json_white_space(void **state)
{
	struct exact e = exact_new(" \t\r\n x"), f = exact_new(" \f"), g = exact_new("  ");

	(void)state;
	assert_ptr_equal(json_span_skip_space(e.span.start, e.span.end), e.span.end - 1);
	assert_ptr_equal(json_span_skip_space(f.span.start, f.span.end), f.span.start + 1);
	assert_ptr_equal(json_span_skip_space(g.span.start, g.span.end), g.span.end);
	assert_ptr_equal(json_span_skip_space(g.span.end, g.span.end), g.span.end);
	exact_free(&e);
	exact_free(&f);
	exact_free(&g);
}

/* --- member and element walks --------------------------------------------------------- */

/* A walk over text: "key=value|" per member (or "value|" per element), then the walk's
 * last status. */
struct walk_case {
	const char *text, *seen;
	int status;
};

static const struct walk_case member_cases[] = {
	{ "{}", "", 0 },
	{ " \n{ \t}\r\n", "", 0 },
	{ "{\"a\":1}", "a=1|", 0 },
	{ "\n{\n\t\"a\" :\r 1 ,\"b\":[ 2 ] ,\n \"c\"\n:\n{\"d\":\"}\"}\n}\n",
	    "a=1|b=[ 2 ]|c={\"d\":\"}\"}|", 0 },
	{ "{\"a\\\"b\":\"x\",\"\\u0063\":null}", "a\\\"b=\"x\"|\\u0063=null|", 0 },
	{ "{\"a\":1,}", "a=1|", -1 },
	{ "{\"a\":1 , }", "a=1|", -1 },
	{ "{,}", "", -1 },
	{ "{,\"a\":1}", "", -1 },
	{ "{\"a\" 1}", "", -1 },
	{ "{\"a\"}", "", -1 },
	{ "{\"a\":1 \"b\":2}", "a=1|", -1 },
	{ "{\"a\":1,,\"b\":2}", "a=1|", -1 },
	{ "{\"a\":}", "", -1 },
	{ "{\"a\":1", "a=1|", -1 },
	{ "{\"a\":[1}", "", -1 },
	{ "{1:2}", "", -1 },
	{ "{\"a", "", -1 },
	{ "{", "", -1 },
};

static const struct walk_case element_cases[] = {
	{ "[]", "", 0 },
	{ " [ \n ] ", "", 0 },
	{ " [ 1 , \"x\" ,{\"a\":[]},[ ] ,true\n]", "1|\"x\"|{\"a\":[]}|[ ]|true|", 0 },
	{ "[\"]\",\"\\\\\"]", "\"]\"|\"\\\\\"|", 0 },
	{ "[1,]", "1|", -1 },
	{ "[1 2]", "1|", -1 },
	{ "[,1]", "", -1 },
	{ "[1,,2]", "1|", -1 },
	{ "[1", "1|", -1 },
	{ "[", "", -1 },
	{ "[{]", "", -1 },
};

static void
member_walk_yields_each_member_then_closing_brace_or_error(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof member_cases / sizeof member_cases[0]; i++) {
		const struct walk_case *c = &member_cases[i];
		struct exact e = exact_new(c->text);
		struct json_member m;
		struct json_iter it;
		struct buf seen;
		int rc, n = 0;

		buf_init(&seen);
		assert_int_equal(json_iter_init(&it, e.span, '{'), 0);
		while ((rc = json_iter_member(&it, &m)) == 1) {
			assert_ptr_equal(m.start, m.key.start - 1);
			buf_append(&seen, m.key.start, (size_t)(m.key.end - m.key.start));
			buf_append_str(&seen, "=");
			buf_append(&seen, m.value.start, (size_t)(m.value.end - m.value.start));
			buf_append_str(&seen, "|");
			n++;
		}
		buf_append(&seen, "", 1);
		if (rc != c->status || strcmp(seen.data, c->seen) != 0)
			fail_msg("case %zu %s: saw %s status %d, want %s status %d", i, c->text,
			    seen.data, rc, c->seen, c->status);
		assert_int_equal(it.count, n);
		if (rc == 0)
			assert_int_equal(*(it.p - 1), '}');
		buf_free(&seen);
		exact_free(&e);
	}
}

static void
element_walk_yields_each_element_then_closing_bracket_or_error(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof element_cases / sizeof element_cases[0]; i++) {
		const struct walk_case *c = &element_cases[i];
		struct exact e = exact_new(c->text);
		struct json_span v;
		struct json_iter it;
		struct buf seen;
		int rc;

		buf_init(&seen);
		assert_int_equal(json_iter_init(&it, e.span, '['), 0);
		while ((rc = json_iter_element(&it, &v)) == 1) {
			buf_append(&seen, v.start, (size_t)(v.end - v.start));
			buf_append_str(&seen, "|");
		}
		buf_append(&seen, "", 1);
		if (rc != c->status || strcmp(seen.data, c->seen) != 0)
			fail_msg("case %zu %s: saw %s status %d, want %s status %d", i, c->text,
			    seen.data, rc, c->seen, c->status);
		if (rc == 0)
			assert_int_equal(*(it.p - 1), ']');
		buf_free(&seen);
		exact_free(&e);
	}
}

static void
walk_does_not_start_without_its_opening_bracket(void **state)
{
	static const struct {
		const char *text;
		char open;
	} cases[] = {
		{ "[]", '{' }, { "{}", '[' }, { "", '{' }, { "  \n", '[' }, { "\"{\"", '{' },
		{ "x{}", '{' },
	};
	struct json_iter it;

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct exact e = exact_new(cases[i].text);

		if (json_iter_init(&it, e.span, cases[i].open) != -1)
			fail_msg("case %zu %s: walk started", i, cases[i].text);
		exact_free(&e);
	}
}

/* --- json_find_member ----------------------------------------------------------------- */

static void
find_member_finds_the_first_member_written_with_that_key(void **state)
{
	static const struct {
		const char *text, *key;
		int status;
		const char *value;
	} cases[] = {
		{ "{\"a\":1,\"b\":[2],\"c\":3}", "b", 1, "[2]" },
		{ "{\"a\":1,\"a\":2}", "a", 1, "1" },
		{ " { \"a\" : \"x\" } ", "a", 1, "\"x\"" },
		{ "{\"a\":{\"b\":1}}", "b", 0, NULL },
		{ "{\"ab\":1,\"a\\\"\":2}", "a", 0, NULL },
		{ "{\"\\u0061\":1}", "a", 0, NULL },
		{ "{\"\":1}", "", 1, "1" },
		{ "{}", "a", 0, NULL },
		{ "[\"a\"]", "a", -1, NULL },
		{ "{\"x\":1,}", "a", -1, NULL },
		{ "{\"x\":1 \"a\":2}", "a", -1, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct exact e = exact_new(cases[i].text);
		struct json_member m;
		int rc = json_find_member(e.span, cases[i].key, &m);

		if (rc != cases[i].status)
			fail_msg("case %zu %s: status %d, want %d", i, cases[i].text, rc,
			    cases[i].status);
		if (rc == 1) {
			assert_true(json_member_is(&m, cases[i].key));
			assert_int_equal(m.value.end - m.value.start, strlen(cases[i].value));
			assert_memory_equal(m.value.start, cases[i].value,
			    strlen(cases[i].value));
		}
		exact_free(&e);
	}
}

/* --- json_parse_object_except --------------------------------------------------------- */

static void
parse_except_equals_cjson_less_the_member_and_gives_its_text(void **state)
{
	static const struct {
		const char *text, *skip, *skipped;
	} cases[] = {
		{ "{\"a\":1,\"managedFields\":[{\"x\":\"}\\\"\"}],\"b\":{\"c\":[true,null]}}",
		    "managedFields", "[{\"x\":\"}\\\"\"}]" },
		{ "{\"managedFields\":{},\"a\":\"x\"}", "managedFields", "{}" },
		{ "{\"a\":-1.5e3,\"managedFields\":\"m\"}", "managedFields", "\"m\"" },
		{ "{\"managedFields\":null}", "managedFields", "null" },
		{ " \n{ \"a\" :\t1 , \"m\"\n:\r[ 1 , 2 ] , \"b\" : { } }\n ", "m", "[ 1 , 2 ]" },
		{ "{\"m\":1,\"m\":2}", "m", "1" },
		{ "{\"a\":1,\"b\":[2]}", "m", NULL },
		{ "{}", "m", NULL },
		/* escaped keys are decoded, as cJSON decodes them */
		{ "{\"a\\u0062\":1,\"\\\"q\\\"\":2,\"\\u00e9\\n\":3,\"m\":4}", "m", "4" },
		/* a key written with escapes is never the member skipped */
		{ "{\"\\u006d\":1}", "m", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct exact e = exact_new(cases[i].text);
		struct json_span skipped;
		cJSON *got = json_parse_object_except(e.span, cases[i].skip, &skipped);
		cJSON *want = cJSON_Parse(cases[i].text);

		assert_non_null(want);
		if (got == NULL)
			fail_msg("case %zu %s: not parsed", i, cases[i].text);
		if (cases[i].skipped == NULL) {
			assert_null(skipped.start);
			assert_null(skipped.end);
		} else {
			cJSON_DeleteItemFromObjectCaseSensitive(want, cases[i].skip);
			assert_int_equal(skipped.end - skipped.start, strlen(cases[i].skipped));
			assert_memory_equal(skipped.start, cases[i].skipped,
			    strlen(cases[i].skipped));
		}
		assert_json_equal(got, want, cases[i].text);
		cJSON_Delete(got);
		cJSON_Delete(want);
		exact_free(&e);
	}
}

static void
parse_object_except_refuses_what_is_not_a_json_object(void **state)
{
	static const char *const cases[] = {
		"{\"a\":1} x",
		"{\"a\":1}}",
		"{\"a\":1}{}",
		"{\"a\":1,}",
		"{\"a\" 1}",
		"{\"m\":1 \"a\":2}",
		"[1]",
		"",
		"  ",
		"\"x\"",
		/* parts cJSON refuses, also when a prefix of them is a value */
		"{\"a\":tru}",
		"{\"a\":truex}",
		"{\"a\":nulll}",
		"{\"a\":1e}",
		"{\"a\":1.5.3}",
		"{\"a\":-}",
		"{\"a\":\"\\q\"}",
		"{\"a\":[1,]}",
		"{\"a\":{\"b\"}}",
		"{\"\\q\":1}",
		"{\"a\":\xef\xbb\xbf" "1}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct exact e = exact_new(cases[i]);
		struct json_span skipped = { e.span.start, e.span.end };
		cJSON *got = json_parse_object_except(e.span, "m", &skipped), *whole;

		if (got != NULL)
			fail_msg("case %zu %s: parsed", i, cases[i]);
		/* and cJSON, reading the whole text, agrees it is no object */
		whole = cJSON_ParseWithOpts(cases[i], NULL, 1);
		assert_false(cJSON_IsObject(whole));
		cJSON_Delete(whole);
		assert_null(skipped.start);
		assert_null(skipped.end);
		exact_free(&e);
	}
}

/* --- json_copy_without ---------------------------------------------------------------- */

struct copy_case {
	const char *text, *in;
	const char *cut[3];
	const char *copy;	/* NULL: refused */
};

static const struct copy_case copy_cases[] = {
	/* managedFields first, in the middle, last, alone */
	{ "{\"metadata\":{\"managedFields\":[{\"f\":\"}\"}],\"name\":\"x\",\"uid\":\"u\"},"
	    "\"spec\":{}}", "metadata", { "managedFields" },
	    "{\"metadata\":{\"name\":\"x\",\"uid\":\"u\"},\"spec\":{}}" },
	{ "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\",\"managedFields\":[{\"a\":\"]\"}],"
	    "\"uid\":\"u\"}}", "metadata", { "managedFields" },
	    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\",\"uid\":\"u\"}}" },
	{ "{\"metadata\":{\"name\":\"x\",\"managedFields\":[]},\"status\":{\"a\":1}}", "metadata",
	    { "managedFields" }, "{\"metadata\":{\"name\":\"x\"},\"status\":{\"a\":1}}" },
	{ "{\"metadata\":{\"managedFields\":[]}}", "metadata", { "managedFields" },
	    "{\"metadata\":{}}" },
	/* white space inside kept members and around the object is kept */
	{ " {\n \"metadata\" : { \"name\" : \"x\" , \"managedFields\" : [ ] } ,\n \"a\" : 1\n} \n",
	    "metadata", { "managedFields" },
	    " {\n \"metadata\" : {\"name\" : \"x\"} ,\n \"a\" : 1\n} \n" },
	/* several names, each as often as written */
	{ "{\"metadata\":{\"annotations\":{\"a\":\"b\"},\"name\":\"x\",\"managedFields\":1,"
	    "\"managedFields\":2}}", "metadata", { "managedFields", "annotations" },
	    "{\"metadata\":{\"name\":\"x\"}}" },
	/* only inside metadata, only at its top */
	{ "{\"managedFields\":1,\"metadata\":{\"labels\":{\"managedFields\":\"x\"},"
	    "\"managedFields\":2}}", "metadata", { "managedFields" },
	    "{\"managedFields\":1,\"metadata\":{\"labels\":{\"managedFields\":\"x\"}}}" },
	/* at the top when in is NULL */
	{ "{\"a\":1,\"b\":{\"c\":2},\"d\":3}", NULL, { "b" }, "{\"a\":1,\"d\":3}" },
	{ "{\"b\":1}", NULL, { "b" }, "{}" },
	/* nothing to cut: the text unchanged, white space and all */
	{ "{ \"metadata\" : { \"name\" : \"x\" } }", "metadata", { "managedFields" },
	    "{ \"metadata\" : { \"name\" : \"x\" } }" },
	{ "{\"kind\":\"Pod\" }\n", "metadata", { "managedFields" }, "{\"kind\":\"Pod\" }\n" },
	{ "{\"metadata\":[{\"managedFields\":1}]}", "metadata", { "managedFields" },
	    "{\"metadata\":[{\"managedFields\":1}]}" },
	{ "{\"metadata\":\"managedFields\"}", "metadata", { "managedFields" },
	    "{\"metadata\":\"managedFields\"}" },
	{ "{\"metadata\":null}", "metadata", { "managedFields" }, "{\"metadata\":null}" },
	{ "{\"metadata\":{\"managedFields\":1}}", "metadata", { NULL },
	    "{\"metadata\":{\"managedFields\":1}}" },
	/* not an object's text */
	{ "[1]", "metadata", { "managedFields" }, NULL },
	{ "", "metadata", { "managedFields" }, NULL },
	{ "{\"a\":1,}", "metadata", { "managedFields" }, NULL },
	{ "{\"metadata\":{\"a\" 1,\"managedFields\":2}}", "metadata", { "managedFields" }, NULL },
	{ "{\"metadata\":{\"managedFields\":2,}}", "metadata", { "managedFields" }, NULL },
	{ "{\"a\":1", NULL, { "a" }, NULL },
	/* ... also past the member cut in, or past the object, where a cJSON_ParseWithLength
	 * of the copy would not look */
	{ "{\"metadata\":{\"managedFields\":1},}", "metadata", { "managedFields" }, NULL },
	{ "{\"metadata\":{\"managedFields\":1},\"a\" 2}", "metadata", { "managedFields" },
	    NULL },
	{ "{\"metadata\":{\"managedFields\":1}} x", "metadata", { "managedFields" }, NULL },
	{ "{\"metadata\":{\"name\":\"x\"}}}", "metadata", { "managedFields" }, NULL },
	{ "{\"kind\":\"Pod\"}{}", "metadata", { "managedFields" }, NULL },
	{ "{\"a\":1,\"b\":2} x", NULL, { "a" }, NULL },
	{ "{\"a\":1}]", NULL, { "b" }, NULL },
};

/* The cJSON tree of text less the cut members inside in (or at the top). */
static cJSON *
tree_without(const char *text, const char *in, const char *const *cut)
{
	cJSON *root = cJSON_Parse(text), *obj;

	assert_non_null(root);
	obj = in == NULL ? root : cJSON_GetObjectItemCaseSensitive(root, in);
	if (cJSON_IsObject(obj))
		for (; *cut != NULL; cut++)
			while (cJSON_GetObjectItemCaseSensitive(obj, *cut) != NULL)
				cJSON_DeleteItemFromObjectCaseSensitive(obj, *cut);
	return root;
}

static void
copy_without_drops_the_cut_members_and_keeps_every_other_byte(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof copy_cases / sizeof copy_cases[0]; i++) {
		const struct copy_case *c = &copy_cases[i];
		struct exact e = exact_new(c->text);
		size_t len = 0;
		char *copy = json_copy_without(e.span, c->in, c->cut, &len);

		if (c->copy == NULL) {
			if (copy != NULL)
				fail_msg("case %zu %s: copied as %s", i, c->text, copy);
		} else if (copy == NULL || strcmp(copy, c->copy) != 0) {
			fail_msg("case %zu %s: copied as %s, want %s", i, c->text,
			    copy != NULL ? copy : "NULL", c->copy);
		} else {
			cJSON *got = cJSON_Parse(copy);
			cJSON *want = tree_without(c->text, c->in, c->cut);

			assert_int_equal(len, strlen(copy));
			assert_non_null(got);
			assert_json_equal(got, want, c->text);
			cJSON_Delete(got);
			cJSON_Delete(want);
		}
		free(copy);
		exact_free(&e);
	}
}

/* --- agreement with cJSON -------------------------------------------------------------- */

/* Every whole-value text cJSON accepts ends, for us, where it ended for cJSON. */
static int
check_value_end_agrees_with_cjson(const char *text, size_t len)
{
	struct exact e;
	const char *cjson_end = NULL, *end;
	cJSON *parsed;
	int checked = 0;

	e.bytes = malloc(len == 0 ? 1 : len);
	assert_non_null(e.bytes);
	memcpy(e.bytes, text, len);
	e.span.start = e.bytes;
	e.span.end = e.bytes + len;
	parsed = cJSON_ParseWithLengthOpts(e.bytes, len, &cjson_end, 0);
	end = json_span_value_end(e.span.start, e.span.end);
	/* cJSON skips leading white space; the scanner starts on the value's first byte */
	if (parsed != NULL && len > 0 && (unsigned char)text[0] > ' ' &&
	    json_span_skip_space(cjson_end, e.span.end) == e.span.end) {
		if (end != cjson_end)
			fail_msg("%.*s: ends at %td, cJSON at %td", (int)len, text,
			    end == NULL ? (ptrdiff_t)-1 : end - e.span.start,
			    cjson_end - e.span.start);
		checked = 1;
	}
	cJSON_Delete(parsed);
	exact_free(&e);
	return checked;
}

static void
value_end_is_where_cjson_ends_for_every_text_it_accepts_whole(void **state)
{
	static const char *const texts[] = {
		"0", "-0", "12.5e-3", "1E5", "01", "true", "false", "null", "\"\"",
		"\"a\\\"b\\\\\"", "\"\\u00e9\\ud83d\\ude00\"", "{}", "[]", "[ ]", "{ }",
		"{\"a\":[1,{\"b\":\"}\"}],\"c\":{\"d\":\"]\"}}", "[1,[2,[3,[4]]],\"[\",{}]",
		" {\"a\" : 1 } ", "[true,false,null,-1,\"x\"]\n",
		"{\"metadata\":{\"name\":\"x\",\"managedFields\":[{\"a\":\"]\"}]}}",
		"1 ", "\"x\"\t", "[1] ", "truex", "1x", "1.5.3", "[1]]", "{\"a\":1}}",
		"\"\\q\"", "[1,]", "nul", "-", "1e", "[\"\\\"]\"]", "{\"a\":\"\\\\\"}",
	};
	int checked = 0;

	(void)state;
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		size_t len = strlen(texts[i]);

		/* the whole text and every prefix of it */
		for (size_t n = 0; n <= len; n++)
			checked += check_value_end_agrees_with_cjson(texts[i], n);
	}
	/* so that this test cannot pass by checking nothing */
	assert_true(checked >= 40);
	for (size_t i = 0; i < sizeof value_cases / sizeof value_cases[0]; i++) {
		char *text = xasprintf("%s%s", value_cases[i].value != NULL ?
		    value_cases[i].value : "", value_cases[i].rest);

		check_value_end_agrees_with_cjson(text, strlen(text));
		free(text);
	}
	for (size_t i = 0; i < sizeof copy_cases / sizeof copy_cases[0]; i++)
		check_value_end_agrees_with_cjson(copy_cases[i].text, strlen(copy_cases[i].text));
}

/* json_parse_exact: a tree that prints back each large integer as written (10^15 and up,
 * 2^63-1, negative ones, in arrays, under repeated keys), leaves the other numbers numbers,
 * and reads like cJSON's otherwise; json_int reads the kept ones exactly. */
static void
parse_exact_keeps_the_text_of_large_integers(void **state)
{
	(void)state;
	static const struct {
		const char *text, *printed;
	} cases[] = {
		{ "{\"a\":1000000000000000}", NULL },
		{ "{\"a\":9223372036854775807,\"b\":[-1000000000000000,12,1.5]}", NULL },
		{ "[{\"x\":{\"y\":123456789012345678}},999999999999999]", NULL },
		{ "{\"a\":1,\"a\":90071992547409931}", NULL },
		{ " {\"a\" : 1e15 , \"b\":\"1e15\"} ", "{\"a\":1e15,\"b\":\"1e15\"}" },
		{ "{\"small\":[0,-3,2147483648,99999999999999]}", NULL },
		{ "1000000000000000", NULL },
		{ "{\"a\":1000000000000000} trailing", "{\"a\":1000000000000000}" },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct exact e = exact_new(cases[i].text);
		cJSON *tree = json_parse_exact(e.bytes, (size_t)(e.span.end - e.span.start));
		char *got;

		assert_non_null(tree);
		got = cJSON_PrintUnformatted(tree);
		assert_string_equal(got, cases[i].printed != NULL ? cases[i].printed :
		    cases[i].text);
		free(got);
		cJSON_Delete(tree);
		exact_free(&e);
	}

	struct exact e = exact_new("{\"big\":9223372036854775807,\"n\":7,\"neg\":"
	    "-9223372036854775808,\"huge\":1e300}");
	cJSON *tree = json_parse_exact(e.bytes, (size_t)(e.span.end - e.span.start));
	assert_true(cJSON_IsRaw(cJSON_GetObjectItem(tree, "big")));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(tree, "n")));
	assert_true(json_int(tree, "big", 0) == 9223372036854775807LL);
	assert_true(json_int(tree, "neg", 0) == -9223372036854775807LL - 1);
	assert_true(json_int(tree, "n", 0) == 7);
	/* Beyond long long: held at its end, not an undefined cast. */
	assert_true(json_int(tree, "huge", 0) == 9223372036854775807LL);
	cJSON_Delete(tree);
	exact_free(&e);

	/* What cJSON refuses, this refuses. */
	e = exact_new("{\"a\":1000000000000000,");
	assert_null(json_parse_exact(e.bytes, (size_t)(e.span.end - e.span.start)));
	exact_free(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(value_end_is_the_byte_after_each_value_or_null_when_there_is_none),
		cmocka_unit_test(value_end_refuses_nesting_deeper_than_cjson_does),
		cmocka_unit_test(skip_space_skips_only_json_white_space),
		cmocka_unit_test(member_walk_yields_each_member_then_closing_brace_or_error),
		cmocka_unit_test(element_walk_yields_each_element_then_closing_bracket_or_error),
		cmocka_unit_test(walk_does_not_start_without_its_opening_bracket),
		cmocka_unit_test(find_member_finds_the_first_member_written_with_that_key),
		cmocka_unit_test(parse_except_equals_cjson_less_the_member_and_gives_its_text),
		cmocka_unit_test(parse_object_except_refuses_what_is_not_a_json_object),
		cmocka_unit_test(copy_without_drops_the_cut_members_and_keeps_every_other_byte),
		cmocka_unit_test(value_end_is_where_cjson_ends_for_every_text_it_accepts_whole),
		cmocka_unit_test(parse_exact_keeps_the_text_of_large_integers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
