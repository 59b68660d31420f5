/*
 * test_selector.c - label selectors: kube's parse, validation, string and match rules (the
 * case tables of apimachinery's labels/selector_test.go and meta/v1/helpers_test.go, ported
 * as data), and the SQL they compile to, checked against selector_matches on a real labels
 * table, for its plan, and against injection.
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

#include "selector.h"
#include "util.h"

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

/* The store's object_labels table, exactly as the store creates it, and a table of
 * objects with their ids. */
static const char schema[] =
	"CREATE TABLE object_labels (object_id INTEGER NOT NULL, key TEXT NOT NULL,\n"
	"    value TEXT NOT NULL, PRIMARY KEY (object_id, key)) WITHOUT ROWID;\n"
	"CREATE TABLE objects (id INTEGER PRIMARY KEY, uid TEXT UNIQUE, labels TEXT);\n";

/* ---------------------------------------------------------------- helpers */

/* Returns a new in-memory database with the schema. */
static sqlite3 *
db_new(void)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, schema, NULL, NULL, NULL), SQLITE_OK);
	return db;
}

/* Stores an object and its labels (a JSON object; string members become rows). */
static void
db_add_object(sqlite3 *db, const char *uid, const char *labels_json)
{
	sqlite3_stmt *stmt;
	cJSON *labels = cJSON_Parse(labels_json), *item;
	sqlite3_int64 id;

	assert_non_null(labels);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO objects (uid, labels) VALUES (?, ?)",
	    -1, &stmt, NULL), SQLITE_OK);
	sqlite3_bind_text(stmt, 1, uid, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, labels_json, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(stmt), SQLITE_DONE);
	sqlite3_finalize(stmt);
	id = sqlite3_last_insert_rowid(db);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO object_labels VALUES (?, ?, ?)", -1,
	    &stmt, NULL), SQLITE_OK);
	cJSON_ArrayForEach(item, labels) {
		if (!cJSON_IsString(item))
			continue;
		sqlite3_reset(stmt);
		sqlite3_bind_int64(stmt, 1, id);
		sqlite3_bind_text(stmt, 2, item->string, -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 3, item->valuestring, -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(stmt), SQLITE_DONE);
	}
	sqlite3_finalize(stmt);
	cJSON_Delete(labels);
}

/* Returns the SQL of a lister over objects filtered by s (malloc'd). */
static char *
lister_sql(const struct selector *s)
{
	struct buf sql;

	buf_init(&sql);
	buf_append_str(&sql, "SELECT o.uid FROM objects o WHERE ");
	selector_to_sql(s, "o.id", &sql);
	buf_append_str(&sql, " ORDER BY o.uid");
	return buf_detach(&sql);
}

/* Returns the uids that the SQL of s selects, comma-separated in uid order (malloc'd). */
static char *
sql_select(sqlite3 *db, const struct selector *s)
{
	sqlite3_stmt *stmt;
	struct buf out;
	char *sql = lister_sql(s), *error = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
	if (rc != SQLITE_OK)
		fail_msg("prepare %s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_bind_parameter_count(stmt), selector_parameter_count(s));
	assert_int_equal(selector_bind(s, stmt, 1, &error), selector_parameter_count(s));
	assert_null(error);
	buf_init(&out);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (out.len > 0)
			buf_append_str(&out, ",");
		buf_append_str(&out, (const char *)sqlite3_column_text(stmt, 0));
	}
	assert_int_equal(rc, SQLITE_DONE);
	sqlite3_finalize(stmt);
	free(sql);
	return buf_detach(&out);
}

/* Returns the uids whose stored labels selector_matches accepts, as sql_select does. */
static char *
memory_select(sqlite3 *db, const struct selector *s)
{
	sqlite3_stmt *stmt;
	struct buf out;
	cJSON *labels;

	assert_int_equal(sqlite3_prepare_v2(db, "SELECT uid, labels FROM objects ORDER BY uid",
	    -1, &stmt, NULL), SQLITE_OK);
	buf_init(&out);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		labels = cJSON_Parse((const char *)sqlite3_column_text(stmt, 1));
		if (selector_matches(s, labels)) {
			if (out.len > 0)
				buf_append_str(&out, ",");
			buf_append_str(&out, (const char *)sqlite3_column_text(stmt, 0));
		}
		cJSON_Delete(labels);
	}
	sqlite3_finalize(stmt);
	return buf_detach(&out);
}

/* Returns the number of rows of the object_labels table. */
static int
labels_rows(sqlite3 *db)
{
	sqlite3_stmt *stmt;
	int n;

	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM object_labels", -1, &stmt,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	n = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return n;
}

/* Parses text, failing the test with the error if it does not parse. */
static struct selector *
must_parse(const char *text)
{
	char *error = NULL;
	struct selector *s = selector_parse(text, &error);

	if (s == NULL)
		fail_msg("selector_parse(\"%s\"): %s", text, error);
	assert_null(error);
	return s;
}

/* Converts JSON text with selector_from_json, failing the test on error. */
static struct selector *
must_from_json(const char *json_text)
{
	char *error = NULL;
	cJSON *json = cJSON_Parse(json_text);
	struct selector *s;

	assert_non_null(json);
	s = selector_from_json(json, &error);
	if (s == NULL)
		fail_msg("selector_from_json(%s): %s", json_text, error);
	cJSON_Delete(json);
	return s;
}

/* Returns the error of selector_from_json on JSON text, failing if it succeeds (malloc'd). */
static char *
from_json_error(const char *json_text)
{
	char *error = NULL;
	cJSON *json = cJSON_Parse(json_text);
	struct selector *s;

	assert_non_null(json);
	s = selector_from_json(json, &error);
	if (s != NULL)
		fail_msg("selector_from_json(%s) succeeded, expected an error", json_text);
	assert_non_null(error);
	cJSON_Delete(json);
	return error;
}

/* Returns the error of selector_parse on text, failing if it succeeds (malloc'd). */
static char *
parse_error(const char *text)
{
	char *error = NULL, *str;
	struct selector *s = selector_parse(text, &error);

	if (s != NULL) {
		str = selector_to_string(s);
		fail_msg("selector_parse(\"%s\") gave \"%s\", expected an error", text, str);
	}
	assert_non_null(error);
	return error;
}

/* Asserts that the string form of s is expected. */
static void
assert_selector_string(const struct selector *s, const char *expected)
{
	char *str = selector_to_string(s);

	assert_string_equal(str, expected);
	free(str);
}

/* Asserts that s matches labels (JSON) as expected both in memory and in SQL. */
static void
assert_match_both_ways(const struct selector *s, const char *labels_json, int expected,
    const char *what)
{
	cJSON *labels = cJSON_Parse(labels_json);
	sqlite3 *db = db_new();
	char *sql_uids;

	assert_non_null(labels);
	if (selector_matches(s, labels) != expected)
		fail_msg("%s on %s: selector_matches gave %d, want %d", what, labels_json,
		    !expected, expected);
	db_add_object(db, "u", labels_json);
	sql_uids = sql_select(db, s);
	if (strcmp(sql_uids, expected ? "u" : "") != 0)
		fail_msg("%s on %s: SQL selected \"%s\", want %s", what, labels_json, sql_uids,
		    expected ? "u" : "nothing");
	free(sql_uids);
	sqlite3_close(db);
	cJSON_Delete(labels);
}

/* ---------------------------------------------------------------- the string form */

/* TestSelectorParse: good strings print back as themselves without spaces. */
static void
parse_accepts_good_strings_and_prints_them_without_spaces(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "x=a,y=b,z=c", "x=a,y=b,z=c" },
		{ "", "" },
		{ "x!=a,y=b", "x!=a,y=b" },
		{ "x=", "x=" },
		{ "x= ", "x=" },
		{ "x=,z= ", "x=,z=" },
		{ "x= ,z= ", "x=,z=" },
		{ "!x", "!x" },
		{ "x>1", "x>1" },
		{ "x>1,z<5", "x>1,z<5" },
	};

	for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
		struct selector *s = must_parse(cases[i].in);
		assert_selector_string(s, cases[i].out);
		selector_free(s);
	}
}

/* TestSelectorParse: bad strings are errors. */
static void
parse_rejects_bad_strings(void **state)
{
	(void)state;
	static const char *const cases[] = { "x=a||y=b", "x==a==b", "!x=a", "x<a" };

	for (size_t i = 0; i < N_ELEMENTS(cases); i++)
		free(parse_error(cases[i]));
}

/* TestDeterministicParse: the order of requirements does not change the result. */
static void
parse_sorts_requirements_by_key(void **state)
{
	(void)state;
	struct selector *a = must_parse("x=a,a=x"), *b = must_parse("a=x,x=a");

	assert_selector_string(a, "a=x,x=a");
	assert_selector_string(b, "a=x,x=a");
	selector_free(a);
	selector_free(b);
}

/* TestSetSelectorParser: validity and the requirements parsed (as their string form). */
static void
parse_set_based_table(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int valid;
		const char *out;
	} cases[] = {
		{ "", 1, "" },
		{ "\rx", 1, "x" },
		{ "this-is-a-dns.domain.com/key-with-dash", 1,
		  "this-is-a-dns.domain.com/key-with-dash" },
		{ "this-is-another-dns.domain.com/key-with-dash in (so,what)", 1,
		  "this-is-another-dns.domain.com/key-with-dash in (so,what)" },
		{ "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)", 1,
		  "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)" },
		{ "foo  in\t (abc)", 1, "foo in (abc)" },
		{ "x notin\n (abc)", 1, "x notin (abc)" },
		{ "x  notin\t\t\t(abc,def)", 1, "x notin (abc,def)" },
		{ "x in (abc,def)", 1, "x in (abc,def)" },
		{ "x in (abc,)", 1, "x in (,abc)" },
		{ "x in ()", 1, "x in ()" },
		{ "x notin (abc,,def),bar,z in (),w", 1, "bar,w,x notin (,abc,def),z in ()" },
		{ "x,y in (a)", 1, "x,y in (a)" },
		{ "x=a", 1, "x=a" },
		{ "x>1", 1, "x>1" },
		{ "x<7", 1, "x<7" },
		{ "x=a,y!=b", 1, "x=a,y!=b" },
		{ "x=a,y!=b,z in (h,i,j)", 1, "x=a,y!=b,z in (h,i,j)" },
		{ "x=a||y=b", 0, NULL },
		{ "x,,y", 0, NULL },
		{ ",x,y", 0, NULL },
		{ "x nott in (y)", 0, NULL },
		{ "x notin ( )", 1, "x notin ()" },
		{ "x notin (, a)", 1, "x notin (,a)" },
		{ "a in (xyz),", 0, NULL },
		{ "a in (xyz)b notin ()", 0, NULL },
		{ "a ", 1, "a" },
		{ "a in (x,y,notin, z,in)", 1, "a in (in,notin,x,y,z)" },
		{ "a in (xyz abc)", 0, NULL },
		{ "a notin(", 0, NULL },
		{ "a (", 0, NULL },
		{ "(", 0, NULL },
	};

	for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
		if (cases[i].valid) {
			struct selector *s = must_parse(cases[i].in);
			assert_selector_string(s, cases[i].out);
			selector_free(s);
		} else {
			free(parse_error(cases[i].in));
		}
	}
}

/* TestLexer, TestLexerSequence, TestParserLookahead: their inputs, through the parser. Every
 * token kind is recognised: longest operators first, "in"/"notin" as keywords only where an
 * operator stands, other characters ("~", "||") as part of identifiers. */
static void
lexer_inputs_through_the_parser(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		const char *out;	/* NULL: an error containing error */
		const char *error;
	} cases[] = {
		{ "key in ( value )", "key in (value)", NULL },
		{ "key notin ( value )", "key notin (value)", NULL },
		{ "key in ( value1, value2 )", "key in (value1,value2)", NULL },
		{ "key", "key", NULL },
		{ "!key", "!key", NULL },
		{ "()", NULL, "position 1: found \"(\"" },
		{ "", "", NULL },
		{ "x in (),y", "x in (),y", NULL },
		{ "== != (), = notin", NULL, "position 1: found \"==\"" },
		{ "key>2", "key>2", NULL },
		{ "key<1", "key<1", NULL },
		{ ",", NULL, "position 1: found \",\"" },
		{ "notin", "notin", NULL },
		{ "in", "in", NULL },
		{ "notin=in", "notin=in", NULL },
		{ "in in (in)", "in in (in)", NULL },
		{ "x!==a", NULL, "position 4: found \"=\", expected: identifier" },
		{ "x===a", NULL, "position 4: found \"=\"" },
		{ "x=~", NULL, "invalid label value \"~\"" },
		{ "x=a||y", NULL, "invalid label value \"a||y\"" },
		{ "x>=1", NULL, "position 3: found \"=\", expected: identifier" },
		{ "x <", NULL, "needs an integer value, not \"\"" },
	};

	for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
		if (cases[i].out != NULL) {
			struct selector *s = must_parse(cases[i].in);
			assert_selector_string(s, cases[i].out);
			selector_free(s);
		} else {
			char *error = parse_error(cases[i].in);
			if (strstr(error, cases[i].error) == NULL)
				fail_msg("\"%s\": error \"%s\" lacks \"%s\"", cases[i].in, error,
				    cases[i].error);
			free(error);
		}
	}
}

/* TestToString: requirements print sorted by key, values sorted, each operator as written. */
static void
to_string_table(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "z,y notin (jkl),x in (def,abc)", "x in (abc,def),y notin (jkl),z" },
		{ "x notin (abc,def),y!=jkl,!z", "x notin (abc,def),y!=jkl,!z" },
		{ "x notin (abc),y in (jkl,mno),z notin ()", "x notin (abc),y in (jkl,mno),z notin ()" },
		{ "x=abc,y==jkl,z!=a,z", "x=abc,y==jkl,z!=a,z" },
		{ "x>2,y<8,z", "x>2,y<8,z" },
	};

	for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
		struct selector *s = must_parse(cases[i].in);
		assert_selector_string(s, cases[i].out);
		selector_free(s);
	}
}

/* Errors say where (position) and what (token, key, value, operator). */
static void
errors_name_the_position_and_the_offending_text(void **state)
{
	(void)state;
	static const struct {
		const char *in, *error;
	} cases[] = {
		{ "x=a,y=b c", "position 9: found \"c\", expected: ',' or end of string" },
		{ "x in (a b)", "position 9: found \"b\", expected: ',' or ')'" },
		{ "a,b=c,BAD_/x", "position 7: invalid label key \"BAD_/x\": prefix part" },
		{ "x=" "0123456789012345678901234567890123456789012345678901234567890123",
		  "invalid label value \"01234567890123456789012345678901234567890123456789012345"
		  "67890123\" for key \"x\": must be no more than 63 characters" },
		{ "x in (a,-b)", "position 1: invalid label value \"-b\" for key \"x\"" },
		{ "x>99999999999999999999", "key \"x\": operator '>' needs an integer value, not "
		  "\"99999999999999999999\"" },
		{ "x in y", "position 6: found \"y\", expected: '('" },
		{ "x in (a", "position 8: found end of string, expected: ',' or ')'" },
		{ "k'; DROP TABLE labels; --", "position 1: invalid label key \"k';\"" },
		{ "x_ in (a b)", "position 1: invalid label key \"x_\"" },
		{ "a=\"b\x01\"", "invalid label value \"\\\"b\\x01\\\"\"" },
	};

	for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
		char *error = parse_error(cases[i].in);
		if (strstr(error, cases[i].error) == NULL)
			fail_msg("\"%s\": error \"%s\" lacks \"%s\"", cases[i].in, error,
			    cases[i].error);
		free(error);
	}
}

/* ---------------------------------------------------------------- validation */

/* TestRequirementConstructor, and kube's rules for keys and values, case by case. */
static void
requirement_validation_table(void **state)
{
	(void)state;
	static const struct {
		int json;		/* in: selector_from_json, else selector_parse */
		const char *in;
		int valid;
	} cases[] = {
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\"}]}", 0 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"NotIn\",\"values\":[]}]}", 0 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\",\"values\":[\"foo\"]}]}", 1 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"NotIn\",\"values\":[\"foo\"]}]}", 1 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"Exists\"}]}", 1 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"DoesNotExist\"}]}", 1 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"1foo\",\"operator\":\"In\",\"values\":[\"bar\"]}]}", 1 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"1234\",\"operator\":\"In\",\"values\":[\"bar\"]}]}", 1 },
		{ 0, "y>1", 1 },
		{ 0, "z<6", 1 },
		{ 0, "foo>bar", 0 },
		{ 0, "barz<blah", 0 },
		/* Exists and DoesNotExist take no values; = exactly one. */
		{ 1, "{\"matchExpressions\":[{\"key\":\"baz\",\"operator\":\"Exists\",\"values\":[\"qux\",\"norf\"]}]}", 0 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"baz\",\"operator\":\"DoesNotExist\",\"values\":[\"\"]}]}", 0 },
		/* Keys: lowercase DNS subdomain prefix, name part of 63 at most (see
		 * key_length_limits for the prefix's). */
		{ 0, "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcd", 0 },
		{ 0, "Example.com/x", 0 },
		{ 0, "example.com/X_y.Z-1", 1 },
		{ 0, "example..com/x", 0 },
		{ 0, "-example.com/x", 0 },
		{ 0, "example-.com/x", 0 },
		{ 0, "a/b/c", 0 },
		{ 0, "/x", 0 },
		{ 0, "example.com/", 0 },
		{ 0, "x_", 0 },
		{ 0, "_x", 0 },
		{ 0, "x.y_z-0", 1 },
		{ 0, "k\xc3\xa9y", 0 },
		/* Values: 63 at most, may be empty, same characters as names. */
		{ 0, "x=abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabc", 1 },
		{ 0, "x=abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcd", 0 },
		{ 0, "x=a.b_c-d", 1 },
		{ 0, "x=a/b", 0 },
		{ 0, "x=a.", 0 },
		{ 0, "x=\xe2\x9c\x93", 0 },
		{ 0, "x in (ok,-bad)", 0 },
		/* > and < take a 64-bit integer; signs are not label values. */
		{ 0, "x>9223372036854775807", 1 },
		{ 0, "x>9223372036854775808", 0 },
		{ 0, "x<-1", 0 },
		{ 0, "x<+1", 0 },
		{ 0, "x>007", 1 },
		{ 0, "x>", 0 },
		/* The API form knows In, NotIn, Exists and DoesNotExist only, case-sensitively. */
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"in\",\"values\":[\"a\"]}]}", 0 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}", 0 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"Equals\",\"values\":[\"a\"]}]}", 0 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"\"}]}", 0 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\"}]}", 0 },
		{ 1, "{\"matchExpressions\":[{\"operator\":\"Exists\"}]}", 0 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\",\"values\":[\"a\",1]}]}", 0 },
		{ 1, "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\",\"values\":\"a\"}]}", 0 },
		{ 1, "{\"matchExpressions\":[{\"key\":7,\"operator\":\"Exists\"}]}", 0 },
		{ 1, "{\"matchExpressions\":[\"x\"]}", 0 },
		{ 1, "{\"matchExpressions\":{}}", 0 },
		{ 1, "{\"matchLabels\":[]}", 0 },
		{ 1, "{\"matchLabels\":{\"a\":1}}", 0 },
		{ 1, "{\"matchLabels\":{\"a\":null}}", 1 },
		{ 1, "{\"matchLabels\":{},\"matchLabels\":{\"a\":\"b\"}}", 0 },
		{ 1, "{\"matchLabels\":{\"a\":\"\"}}", 1 },
		{ 1, "{\"matchLabels\":{\"a b\":\"c\"}}", 0 },
		{ 1, "[]", 0 },
		{ 1, "\"app=web\"", 0 },
	};

	for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
		char *error = NULL;
		struct selector *s;

		if (cases[i].json) {
			cJSON *json = cJSON_Parse(cases[i].in);
			assert_non_null(json);
			s = selector_from_json(json, &error);
			cJSON_Delete(json);
		} else {
			s = selector_parse(cases[i].in, &error);
		}
		if (cases[i].valid && s == NULL)
			fail_msg("case %zu (%s): unexpected error: %s", i, cases[i].in, error);
		if (!cases[i].valid && s != NULL)
			fail_msg("case %zu (%s): accepted, expected an error", i, cases[i].in);
		assert_true(s == NULL ? error != NULL : error == NULL);
		selector_free(s);
		free(error);
	}
}

/* A key's prefix may have 253 characters and its name 63, not one more (TestRequirement-
 * Constructor's key of 254 characters fails). */
static void
key_length_limits(void **state)
{
	(void)state;
	static const struct {
		size_t prefix, name;
		int valid;
	} cases[] = {
		{ 253, 63, 1 }, { 254, 1, 0 }, { 0, 64, 0 }, { 0, 254, 0 }, { 1, 63, 1 },
	};

	for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
		struct buf key;
		char *error = NULL, *json;
		cJSON *parsed;
		struct selector *s;

		buf_init(&key);
		/* A prefix of labels "a...a." with a last label of at least one letter. */
		for (size_t j = 0; j < cases[i].prefix; j++)
			buf_append_str(&key, j % 10 == 9 && j + 1 < cases[i].prefix ? "." : "a");
		if (cases[i].prefix > 0)
			buf_append_str(&key, "/");
		for (size_t j = 0; j < cases[i].name; j++)
			buf_append_str(&key, "b");
		s = selector_parse(key.data, &error);
		assert_int_equal(s != NULL, cases[i].valid);
		assert_int_equal(error == NULL, cases[i].valid);
		selector_free(s);
		free(error);
		error = NULL;
		json = xasprintf("{\"matchExpressions\":[{\"key\":\"%s\",\"operator\":\"Exists\"}]}",
		    key.data);
		parsed = cJSON_Parse(json);
		s = selector_from_json(parsed, &error);
		assert_int_equal(s != NULL, cases[i].valid);
		selector_free(s);
		free(error);
		cJSON_Delete(parsed);
		free(json);
		buf_free(&key);
	}
}

/* ---------------------------------------------------------------- the API form */

/* helpers_test.go TestLabelSelectorAsSelector: nil is nothing, {} is everything. */
static void
label_selector_as_selector_table(void **state)
{
	(void)state;
	static const struct {
		const char *in;		/* JSON */
		const char *out;	/* string form, NULL for an error */
	} cases[] = {
		{ "{}", "" },
		{ "{\"matchLabels\":{\"foo\":\"bar\"}}", "foo=bar" },
		{ "{\"matchExpressions\":[{\"key\":\"baz\",\"operator\":\"In\",\"values\":[\"qux\",\"norf\"]}]}",
		  "baz in (norf,qux)" },
		{ "{\"matchLabels\":{\"foo\":\"bar\"},\"matchExpressions\":[{\"key\":\"baz\",\"operator\":\"In\",\"values\":[\"qux\",\"norf\"]}]}",
		  "baz in (norf,qux),foo=bar" },
		{ "{\"matchExpressions\":[{\"key\":\"baz\",\"operator\":\"Exists\",\"values\":[\"qux\",\"norf\"]}]}",
		  NULL },
		/* Beyond kube's table: nulls and empties, unknown members, repeated members. */
		{ "{\"matchLabels\":null,\"matchExpressions\":null}", "" },
		{ "{\"matchLabels\":{},\"matchExpressions\":[]}", "" },
		{ "{\"matchLabels\":{\"a\":\"1\"},\"other\":true}", "a=1" },
		{ "{\"matchLabels\":{\"a\":\"1\",\"a\":\"2\"}}", "a=2" },
		{ "{\"matchLabels\":{\"a\":null}}", "a=" },
		{ "{\"matchExpressions\":[{\"key\":\"b\",\"operator\":\"DoesNotExist\",\"values\":null},"
		  "{\"key\":\"a\",\"operator\":\"NotIn\",\"values\":[\"y\",\"x\",\"\"]}]}",
		  "a notin (,x,y),!b" },
		/* Repeated values print once (fuzz_selector found "(,,)", which does not parse
		 * back; kube's String prints the repeats). */
		{ "{\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"NotIn\","
		  "\"values\":[\"\",\"\",\"\"]}]}", "tier notin ()" },
		{ "{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"In\","
		  "\"values\":[\"b\",\"a\",\"b\",\"\",\"\"]}]}", "t in (,a,b)" },
	};

	for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
		if (cases[i].out != NULL) {
			struct selector *s = must_from_json(cases[i].in);
			assert_false(selector_matches_nothing(s));
			assert_int_equal(selector_matches_everything(s), cases[i].out[0] == '\0');
			assert_selector_string(s, cases[i].out);
			selector_free(s);
		} else {
			free(from_json_error(cases[i].in));
		}
	}
}

/* A missing selector (NULL or JSON null) is kube's labels.Nothing(). */
static void
missing_api_selector_matches_nothing(void **state)
{
	(void)state;
	cJSON *null = cJSON_CreateNull();
	struct selector *from_null = selector_from_json(NULL, NULL);
	struct selector *from_json_null = selector_from_json(null, NULL);
	struct buf sql;

	assert_non_null(from_null);
	assert_non_null(from_json_null);
	assert_true(selector_matches_nothing(from_null));
	assert_true(selector_matches_nothing(from_json_null));
	assert_false(selector_matches_everything(from_null));
	assert_false(selector_matches(from_null, NULL));
	assert_match_both_ways(from_null, "{}", 0, "nothing");
	assert_match_both_ways(from_json_null, "{\"any\":\"label\"}", 0, "nothing");
	buf_init(&sql);
	selector_to_sql(from_null, "o.id", &sql);
	assert_string_equal(sql.data, "0");
	buf_free(&sql);
	assert_int_equal(selector_parameter_count(from_null), 0);
	assert_selector_string(from_null, "");
	selector_free(from_null);
	selector_free(from_json_null);
	cJSON_Delete(null);
}

/* An empty selector matches everything and compiles to "1". */
static void
empty_selector_matches_everything(void **state)
{
	(void)state;
	struct selector *s = must_parse(""), *j = must_from_json("{}");
	struct buf sql;

	assert_true(selector_matches_everything(s));
	assert_true(selector_matches_everything(j));
	assert_false(selector_matches_nothing(s));
	assert_true(selector_matches(s, NULL));
	assert_match_both_ways(j, "{\"any\":\"label\"}", 1, "everything");
	assert_match_both_ways(s, "{}", 1, "everything");
	buf_init(&sql);
	selector_to_sql(s, "o.id", &sql);
	assert_string_equal(sql.data, "1");
	buf_free(&sql);
	selector_free(s);
	selector_free(j);
}

/* ---------------------------------------------------------------- matching */

/* TestSelectorMatches and TestRequirementSelectorMatching, checked in memory and in SQL. */
static void
matches_table_in_memory_and_in_sql(void **state)
{
	(void)state;
	static const struct {
		const char *selector, *labels;
		int match;
	} cases[] = {
		{ "", "{\"x\":\"y\"}", 1 },
		{ "x=y", "{\"x\":\"y\"}", 1 },
		{ "x=y,z=w", "{\"x\":\"y\",\"z\":\"w\"}", 1 },
		{ "x!=y,z!=w", "{\"x\":\"z\",\"z\":\"a\"}", 1 },
		{ "notin=in", "{\"notin\":\"in\"}", 1 },
		{ "x", "{\"x\":\"z\"}", 1 },
		{ "!x", "{\"y\":\"z\"}", 1 },
		{ "x>1", "{\"x\":\"2\"}", 1 },
		{ "x<1", "{\"x\":\"0\"}", 1 },
		{ "x=z", "{}", 0 },
		{ "x=y", "{\"x\":\"z\"}", 0 },
		{ "x=y,z=w", "{\"x\":\"w\",\"z\":\"w\"}", 0 },
		{ "x!=y,z!=w", "{\"x\":\"z\",\"z\":\"w\"}", 0 },
		{ "x", "{\"y\":\"z\"}", 0 },
		{ "!x", "{\"x\":\"z\"}", 0 },
		{ "x>1", "{\"x\":\"0\"}", 0 },
		{ "x<1", "{\"x\":\"2\"}", 0 },
		{ "foo=bar", "{\"foo\":\"bar\",\"baz\":\"blah\"}", 1 },
		{ "baz=blah", "{\"foo\":\"bar\",\"baz\":\"blah\"}", 1 },
		{ "foo=bar,baz=blah", "{\"foo\":\"bar\",\"baz\":\"blah\"}", 1 },
		{ "foo=blah", "{\"foo\":\"bar\",\"baz\":\"blah\"}", 0 },
		{ "baz=bar", "{\"foo\":\"bar\",\"baz\":\"blah\"}", 0 },
		{ "foo=bar,foobar=bar,baz=blah", "{\"foo\":\"bar\",\"baz\":\"blah\"}", 0 },
		/* TestRequirementSelectorMatching */
		{ "x in (foo),y notin (alpha)", "{\"x\":\"foo\",\"y\":\"baz\"}", 1 },
		{ "x in (foo),y in (alpha)", "{\"x\":\"foo\",\"y\":\"baz\"}", 0 },
		{ "x notin (),y", "{\"y\":\"\"}", 1 },
		{ "!x,y", "{\"y\":\"\"}", 1 },
		{ "x notin (),!y", "{\"y\":\"\"}", 0 },
		{ "x in ()", "{\"y\":\"baz\"}", 0 },
		{ "z>1", "{\"z\":\"2\"}", 1 },
		{ "z>1", "{\"z\":\"v2\"}", 0 },
		/* TestSetMatches (SelectorFromSet) */
		{ "foo=bar", "{\"foo\":\"bar\",\"baz\":\"blah\"}", 1 },
		{ "baz=blah,foo=bar", "{\"foo\":\"bar\",\"baz\":\"blah\"}", 1 },
	};

	for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
		struct selector *s = must_parse(cases[i].selector);
		assert_match_both_ways(s, cases[i].labels, cases[i].match, cases[i].selector);
		selector_free(s);
	}
}

/* "x notin (a)" and "x!=a" hold for objects that have no x at all. */
static void
notin_and_not_equals_match_objects_without_the_key(void **state)
{
	(void)state;
	struct selector *notin = must_parse("x notin (a)"), *ne = must_parse("x!=a");

	assert_match_both_ways(notin, "{\"y\":\"a\"}", 1, "notin");
	assert_match_both_ways(ne, "{}", 1, "!=");
	assert_match_both_ways(notin, "{\"x\":\"a\"}", 0, "notin");
	assert_match_both_ways(ne, "{\"x\":\"a\"}", 0, "!=");
	selector_free(notin);
	selector_free(ne);
	assert_true(selector_matches(ne = must_parse("x!=a"), NULL));
	selector_free(ne);
}

/* "x in (a)", "x=a" and "x" need the key; "x in ()" needs it with the empty value. */
static void
in_equals_and_exists_need_the_key(void **state)
{
	(void)state;
	struct selector *in = must_parse("x in (a,)"), *eq = must_parse("x="),
	    *exists = must_parse("x");

	assert_match_both_ways(in, "{}", 0, "in");
	assert_match_both_ways(eq, "{\"y\":\"\"}", 0, "=");
	assert_match_both_ways(exists, "{\"y\":\"x\"}", 0, "exists");
	assert_match_both_ways(in, "{\"x\":\"\"}", 1, "in");
	assert_match_both_ways(eq, "{\"x\":\"\"}", 1, "=");
	assert_match_both_ways(exists, "{\"x\":\"\"}", 1, "exists");
	selector_free(in);
	selector_free(eq);
	selector_free(exists);
}

/* Labels that are not strings, and label maps that are not objects, count as absent. */
static void
non_string_labels_are_absent(void **state)
{
	(void)state;
	struct selector *exists = must_parse("x"), *dne = must_parse("!x");
	cJSON *labels = cJSON_Parse("{\"x\":1}"), *array = cJSON_Parse("[\"x\"]");

	assert_false(selector_matches(exists, labels));
	assert_true(selector_matches(dne, labels));
	assert_false(selector_matches(exists, array));
	assert_match_both_ways(exists, "{\"x\":true}", 0, "exists");
	selector_free(exists);
	selector_free(dne);
	cJSON_Delete(labels);
	cJSON_Delete(array);
}

/* The label sets and selectors of the cross-check: SQL selects what selector_matches does. */
static const char *const cross_check_labels[] = {
	"{}",
	"{\"app\":\"web\"}",
	"{\"app\":\"web\",\"tier\":\"frontend\",\"env\":\"prod\"}",
	"{\"app\":\"db\",\"tier\":\"backend\",\"env\":\"prod\",\"pod-template-hash\":\"5d8f\"}",
	"{\"app\":\"web\",\"env\":\"\"}",
	"{\"app\":\"\",\"example.com/role\":\"x\"}",
	"{\"n\":\"2\"}",
	"{\"n\":\"007\"}",
	"{\"n\":\"-3\"}",
	"{\"n\":\"+5\"}",
	"{\"n\":\"9223372036854775807\"}",
	"{\"n\":\"-9223372036854775808\"}",
	"{\"n\":\"9223372036854775808\"}",
	"{\"n\":\"00000000000000000000000000009223372036854775807\"}",
	"{\"n\":\"1e3\"}",
	"{\"n\":\"0x10\"}",
	"{\"n\":\" 5\"}",
	"{\"n\":\"5 \"}",
	"{\"n\":\"\"}",
	"{\"n\":\"-\"}",
	"{\"n\":\"12abc\"}",
	"{\"n\":\"x\",\"app\":\"web\"}",
	"{\"in\":\"notin\",\"a'b\":\"c\\\"d\",\"k\":\"v; DROP TABLE labels; --\"}",
};

static const char *const cross_check_selectors[] = {
	"",
	"app=web",
	"app==web",
	"app!=web",
	"app in (web,db)",
	"app notin (web,db)",
	"app in (,web)",
	"app notin ()",
	"app",
	"!app",
	"env",
	"!env",
	"env=",
	"env!=",
	"app=web,env=prod",
	"app=web,!tier",
	"app notin (db),tier notin (backend),env",
	"example.com/role",
	"example.com/role in (x,y),app=",
	"n>1",
	"n<1",
	"n>6",
	"n<7",
	"n>0",
	"n<0",
	"n>9223372036854775806",
	"n<9223372036854775807",
	"n>4,n<6",
	"n>1,app=web",
	"in=notin",
	"in in (in,notin)",
	"k",
	"k!=v",
	"app,tier,env,pod-template-hash",
	"app,app=web,app!=db,app in (web),app notin (x)",
	"!app,!n,!in",
	"pod-template-hash notin (5d8f),app in (db)",
};

static const char *const cross_check_json_selectors[] = {
	"{\"matchLabels\":{\"app\":\"web\"}}",
	"{\"matchLabels\":{\"app\":\"web\",\"env\":\"prod\"}}",
	"{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\",\"values\":[\"web\",\"web\",\"db\"]}]}",
	"{\"matchExpressions\":[{\"key\":\"env\",\"operator\":\"NotIn\",\"values\":[\"prod\"]},"
	"{\"key\":\"app\",\"operator\":\"Exists\"}]}",
	"{\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"DoesNotExist\"}]}",
	"{\"matchExpressions\":[{\"key\":\"n\",\"operator\":\"Exists\"},{\"key\":\"n\",\"operator\":\"NotIn\",\"values\":[\"2\",\"\"]}]}",
};

/* Runs the cross-check for one selector: the SQL's uids equal selector_matches's. */
static void
cross_check_one(sqlite3 *db, const struct selector *s, const char *what, int *matched,
    int *unmatched)
{
	char *sql_uids = sql_select(db, s), *memory_uids = memory_select(db, s);

	if (strcmp(sql_uids, memory_uids) != 0)
		fail_msg("%s: SQL selected \"%s\", selector_matches \"%s\"", what, sql_uids,
		    memory_uids);
	if (memory_uids[0] != '\0')
		(*matched)++;
	/* uids are "oNN": all of them is 4 bytes each, less the last comma. */
	if (strlen(memory_uids) + 1 < 4 * N_ELEMENTS(cross_check_labels))
		(*unmatched)++;
	free(sql_uids);
	free(memory_uids);
}

/* Every selector of the table selects, in SQL, exactly what selector_matches accepts. */
static void
sql_selects_exactly_what_selector_matches_accepts(void **state)
{
	(void)state;
	sqlite3 *db = db_new();
	int matched = 0, unmatched = 0;
	char uid[16];

	for (size_t i = 0; i < N_ELEMENTS(cross_check_labels); i++) {
		snprintf(uid, sizeof uid, "o%02zu", i);
		db_add_object(db, uid, cross_check_labels[i]);
	}
	for (size_t i = 0; i < N_ELEMENTS(cross_check_selectors); i++) {
		struct selector *s = must_parse(cross_check_selectors[i]);
		cross_check_one(db, s, cross_check_selectors[i], &matched, &unmatched);
		selector_free(s);
	}
	for (size_t i = 0; i < N_ELEMENTS(cross_check_json_selectors); i++) {
		struct selector *s = must_from_json(cross_check_json_selectors[i]);
		cross_check_one(db, s, cross_check_json_selectors[i], &matched, &unmatched);
		selector_free(s);
	}
	/* The table is not trivial: selectors select some objects and leave others. */
	assert_true(matched >= 30);
	assert_true(unmatched >= 30);
	sqlite3_close(db);
}

/* > and < read label values as Go's ParseInt does: sign, digits, 64 bits, nothing else. */
static void
greater_and_less_compare_64_bit_integers(void **state)
{
	(void)state;
	static const struct {
		const char *selector, *labels;
		int match;
	} cases[] = {
		{ "n>6", "{\"n\":\"007\"}", 1 },
		{ "n<0", "{\"n\":\"-3\"}", 1 },
		{ "n>4", "{\"n\":\"+5\"}", 1 },
		{ "n>9223372036854775806", "{\"n\":\"9223372036854775807\"}", 1 },
		{ "n>0", "{\"n\":\"9223372036854775808\"}", 0 },
		{ "n<0", "{\"n\":\"-9223372036854775808\"}", 1 },
		{ "n<0", "{\"n\":\"-9223372036854775809\"}", 0 },
		{ "n>1", "{\"n\":\"1e3\"}", 0 },
		{ "n>1", "{\"n\":\"12abc\"}", 0 },
		{ "n>1", "{\"n\":\" 5\"}", 0 },
		{ "n<1", "{\"n\":\"\"}", 0 },
		{ "n<1", "{\"n\":\"-\"}", 0 },
		{ "n<1", "{}", 0 },
	};

	for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
		struct selector *s = must_parse(cases[i].selector);
		assert_match_both_ways(s, cases[i].labels, cases[i].match, cases[i].selector);
		selector_free(s);
	}
}

/* ---------------------------------------------------------------- SQL shape */

/* The SQL holds no key or value, only "?"s, as many as selector_bind binds. */
static void
sql_has_placeholders_not_keys_or_values(void **state)
{
	(void)state;
	struct selector *s = must_parse("zzkey in (zzv1,zzv2),yykey!=yyv,!xxkey,wwkey,vvkey>41");
	struct buf sql;

	buf_init(&sql);
	selector_to_sql(s, "p.id", &sql);
	assert_null(strstr(sql.data, "zz"));
	assert_null(strstr(sql.data, "yy"));
	assert_null(strstr(sql.data, "xx"));
	assert_null(strstr(sql.data, "ww"));
	assert_null(strstr(sql.data, "vv"));
	assert_null(strstr(sql.data, "41"));
	assert_non_null(strstr(sql.data, "EXISTS (SELECT 1 FROM object_labels"));
	assert_non_null(strstr(sql.data, "NOT EXISTS"));
	assert_non_null(strstr(sql.data, "value IN (?, ?)"));
	assert_int_equal(selector_parameter_count(s), 3 + 2 + 1 + 1 + 2);
	buf_free(&sql);
	selector_free(s);
}

/* EXPLAIN QUERY PLAN: every subquery looks labels up by key, never scans it. */
static void
sql_searches_labels_by_key_never_scans(void **state)
{
	(void)state;
	static const char *const selectors[] = {
		"app=web", "app!=web", "app in (a,b,c)", "app notin (a,b)", "app", "!app", "n>3",
		"app=web,tier notin (x),!env,n<4",
	};
	sqlite3 *db = db_new();

	db_add_object(db, "a", "{\"app\":\"web\"}");
	for (size_t i = 0; i < N_ELEMENTS(selectors); i++) {
		struct selector *s = must_parse(selectors[i]);
		char *sql = lister_sql(s), *explain = xasprintf("EXPLAIN QUERY PLAN %s", sql);
		sqlite3_stmt *stmt;
		int searches = 0;

		assert_int_equal(sqlite3_prepare_v2(db, explain, -1, &stmt, NULL), SQLITE_OK);
		assert_int_equal(selector_bind(s, stmt, 1, NULL), selector_parameter_count(s));
		while (sqlite3_step(stmt) == SQLITE_ROW) {
			const char *detail = (const char *)sqlite3_column_text(stmt, 3);
			if (strstr(detail, "selector_label") == NULL)
				continue;
			if (strncmp(detail, "SCAN", 4) == 0)
				fail_msg("%s: plan scans labels: %s", selectors[i], detail);
			if (strncmp(detail, "SEARCH", 6) == 0 &&
			    strstr(detail, "PRIMARY KEY (object_id=? AND key=?)") != NULL)
				searches++;
		}
		sqlite3_finalize(stmt);
		if (searches == 0)
			fail_msg("%s: no indexed search of labels in the plan", selectors[i]);
		free(explain);
		free(sql);
		selector_free(s);
	}
	sqlite3_close(db);
}

/* Thousands of requirements still prepare: the ANDs nest as a balanced tree. */
static void
many_requirements_stay_within_sqlite_limits(void **state)
{
	(void)state;
	struct buf text;
	struct selector *s;
	sqlite3 *db = db_new();
	char *uids;

	buf_init(&text);
	for (int i = 0; i < 3000; i++)
		buf_printf(&text, "%sk%d notin (a,b)", i == 0 ? "" : ",", i);
	s = must_parse(text.data);
	db_add_object(db, "a", "{\"k1\":\"a\"}");
	db_add_object(db, "b", "{\"k1\":\"c\"}");
	uids = sql_select(db, s);
	assert_string_equal(uids, "b");
	free(uids);
	selector_free(s);
	buf_free(&text);
	sqlite3_close(db);
}

/* selector_bind reports SQLite's refusal (here: more parameters than the statement has). */
static void
bind_reports_sqlite_errors(void **state)
{
	(void)state;
	struct selector *s = must_parse("app=web");
	sqlite3 *db = db_new();
	sqlite3_stmt *stmt;
	char *error = NULL;

	assert_int_equal(sqlite3_prepare_v2(db, "SELECT ?", -1, &stmt, NULL), SQLITE_OK);
	assert_int_equal(selector_bind(s, stmt, 1, &error), -1);
	assert_non_null(error);
	assert_non_null(strstr(error, "parameter 2"));
	free(error);
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	selector_free(s);
}

/* ---------------------------------------------------------------- injection */

/* Keys and values with quotes, semicolons, comments, unicode or control bytes are rejected
 * by validation, in the API form as in the string form, and the table stays intact. */
static void
injection_through_json_is_rejected(void **state)
{
	(void)state;
	static const struct {
		const char *json, *error;
	} cases[] = {
		{ "{\"matchLabels\":{\"app'; DROP TABLE labels; --\":\"x\"}}",
		  "matchLabels: invalid label key \"app'; DROP TABLE labels; --\"" },
		{ "{\"matchLabels\":{\"app\":\"x' OR '1'='1\"}}",
		  "invalid label value \"x' OR '1'='1\" for key \"app\"" },
		{ "{\"matchLabels\":{\"app\":\"web\\\" OR 1=1 --\"}}",
		  "invalid label value \"web\\\" OR 1=1 --\"" },
		{ "{\"matchExpressions\":[{\"key\":\"app) OR (1=1\",\"operator\":\"Exists\"}]}",
		  "matchExpressions[0]: invalid label key \"app) OR (1=1\"" },
		{ "{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\",\"values\":[\"web\",\"x); DELETE FROM labels; --\"]}]}",
		  "matchExpressions[0]: invalid label value \"x); DELETE FROM labels; --\"" },
		{ "{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In); DROP TABLE labels; --\",\"values\":[\"web\"]}]}",
		  "matchExpressions[0].operator: \"In); DROP TABLE labels; --\" is not a valid" },
		{ "{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"NotIn\",\"values\":[\"\\u043a\\u043b\\u044e\\u0447\"]}]}",
		  "invalid label value \"\\xd0\\xba\\xd0\\xbb\\xd1\\x8e\\xd1\\x87\"" },
		{ "{\"matchLabels\":{\"app\":\"a\\u0001\\u007f\\t;--\"}}",
		  "invalid label value \"a\\x01\\x7f\\x09;--\"" },
		{ "{\"matchExpressions\":[{\"key\":\"a/b/c'--\",\"operator\":\"DoesNotExist\"}]}",
		  "invalid label key \"a/b/c'--\"" },
		{ "{\"matchLabels\":{\"ok\":\"yes\",\"*\":\"%\"}}", "invalid label key \"*\"" },
	};
	sqlite3 *db = db_new();
	char *uids;

	db_add_object(db, "a", "{\"app\":\"web\"}");
	db_add_object(db, "b", "{\"app\":\"db\"}");
	for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
		char *error = from_json_error(cases[i].json);
		if (strstr(error, cases[i].error) == NULL)
			fail_msg("%s: error \"%s\" lacks \"%s\"", cases[i].json, error, cases[i].error);
		free(error);
	}
	assert_int_equal(labels_rows(db), 2);
	/* A valid selector still selects one object: nothing was dropped or widened. */
	{
		struct selector *s = must_from_json("{\"matchLabels\":{\"app\":\"web\"}}");
		uids = sql_select(db, s);
		assert_string_equal(uids, "a");
		free(uids);
		selector_free(s);
	}
	sqlite3_close(db);
}

/* Valid keys and values that look like SQL are bound as data: they select only the object
 * that has them, and the labels table is untouched. */
static void
sql_looking_valid_labels_are_bound_as_data(void **state)
{
	(void)state;
	static const char *const selectors[] = {
		"{\"matchLabels\":{\"select\":\"1--1\"}}",
		"{\"matchLabels\":{\"labels\":\"DROP.TABLE.labels\"}}",
		"{\"matchExpressions\":[{\"key\":\"or\",\"operator\":\"In\",\"values\":[\"1--1\",\"OR_1\"]}]}",
	};
	static const char *const expected[] = { "x", "x", "x" };
	sqlite3 *db = db_new();

	db_add_object(db, "x", "{\"select\":\"1--1\",\"labels\":\"DROP.TABLE.labels\",\"or\":\"OR_1\"}");
	db_add_object(db, "y", "{\"select\":\"1\",\"labels\":\"DROP\",\"or\":\"1\"}");
	db_add_object(db, "z", "{}");
	for (size_t i = 0; i < N_ELEMENTS(selectors); i++) {
		struct selector *s = must_from_json(selectors[i]);
		char *uids = sql_select(db, s), *memory = memory_select(db, s);
		assert_string_equal(uids, expected[i]);
		assert_string_equal(memory, expected[i]);
		free(uids);
		free(memory);
		selector_free(s);
	}
	assert_int_equal(labels_rows(db), 6);
	sqlite3_close(db);
}

/* Injection through the string form meets the same validation. */
static void
injection_through_the_string_form_is_rejected(void **state)
{
	(void)state;
	static const char *const cases[] = {
		"app=web'); DROP TABLE labels; --",
		"app in (web' OR '1'='1)",
		"app=web,x'--",
		"app=web;DELETE FROM labels",
		"app notin (\xe2\x80\x94)",
		"\"app\"=web",
	};

	for (size_t i = 0; i < N_ELEMENTS(cases); i++)
		free(parse_error(cases[i]));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_accepts_good_strings_and_prints_them_without_spaces),
		cmocka_unit_test(parse_rejects_bad_strings),
		cmocka_unit_test(parse_sorts_requirements_by_key),
		cmocka_unit_test(parse_set_based_table),
		cmocka_unit_test(lexer_inputs_through_the_parser),
		cmocka_unit_test(to_string_table),
		cmocka_unit_test(errors_name_the_position_and_the_offending_text),
		cmocka_unit_test(requirement_validation_table),
		cmocka_unit_test(key_length_limits),
		cmocka_unit_test(label_selector_as_selector_table),
		cmocka_unit_test(missing_api_selector_matches_nothing),
		cmocka_unit_test(empty_selector_matches_everything),
		cmocka_unit_test(matches_table_in_memory_and_in_sql),
		cmocka_unit_test(notin_and_not_equals_match_objects_without_the_key),
		cmocka_unit_test(in_equals_and_exists_need_the_key),
		cmocka_unit_test(non_string_labels_are_absent),
		cmocka_unit_test(sql_selects_exactly_what_selector_matches_accepts),
		cmocka_unit_test(greater_and_less_compare_64_bit_integers),
		cmocka_unit_test(sql_has_placeholders_not_keys_or_values),
		cmocka_unit_test(sql_searches_labels_by_key_never_scans),
		cmocka_unit_test(many_requirements_stay_within_sqlite_limits),
		cmocka_unit_test(bind_reports_sqlite_errors),
		cmocka_unit_test(injection_through_json_is_rejected),
		cmocka_unit_test(sql_looking_valid_labels_are_bound_as_data),
		cmocka_unit_test(injection_through_the_string_form_is_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
