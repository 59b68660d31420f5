/*
 * fuzz_selector.c - label selectors from arbitrary bytes, in both forms.
 *
 * The input is parsed as the string form and, when it is JSON, given to selector_from_json.
 * For every selector accepted:
 * - its string form parses back to a selector with the same string form (string input) or
 *   that selects the same objects (JSON input, whose duplicate values the string form drops);
 * - its SQL prepares against the object_labels table, takes exactly the parameters
 *   selector_bind binds, steps without error, and selects exactly the objects that
 *   selector_matches accepts among a fixed set of label maps.
 * A rejected input must come with an error message. Any broken invariant aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selector.h"
#include "util.h"

/* Label maps of the objects every selector is matched against. */
static const char *const objects[] = {
	"{}",
	"{\"a\":\"b\"}",
	"{\"a\":\"\",\"x\":\"1\"}",
	"{\"app\":\"web\",\"tier\":\"frontend\",\"env\":\"prod\"}",
	"{\"app\":\"db\",\"x\":\"007\",\"example.com/k\":\"v\"}",
	"{\"x\":\"-3\",\"y\":\"9223372036854775807\",\"in\":\"notin\"}",
	"{\"x\":\"+5\",\"y\":\"9223372036854775808\",\"z\":\"1e3\"}",
	"{\"x\":\"12abc\",\"y\":\"-9223372036854775808\",\"a\":\"a\"}",
	"{\"k\":\"v\",\"a'b\":\"c;--\",\"x\":\"\"}",
};
#define N_OBJECTS (sizeof objects / sizeof objects[0])

static sqlite3 *db;
static cJSON *label_maps[N_OBJECTS];

/* Aborts with a message: an invariant does not hold. */
static void __attribute__((noreturn))
broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_selector: %s: %s\n", what, detail != NULL ? detail : "");
	abort();
}

/* Creates the object_labels table, as the store has it, and the objects, once. */
static void
setup(void)
{
	sqlite3_stmt *stmt;
	const cJSON *item;

	if (db != NULL)
		return;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    sqlite3_exec(db,
	    "CREATE TABLE object_labels (object_id INTEGER NOT NULL, key TEXT NOT NULL,"
	    " value TEXT NOT NULL, PRIMARY KEY (object_id, key)) WITHOUT ROWID;"
	    "CREATE INDEX object_labels_key_value ON object_labels (key, value);"
	    "CREATE TABLE objects (id INTEGER PRIMARY KEY);", NULL, NULL, NULL) != SQLITE_OK)
		broken("setup", sqlite3_errmsg(db));
	for (size_t i = 0; i < N_OBJECTS; i++) {
		label_maps[i] = cJSON_Parse(objects[i]);
		if (sqlite3_prepare_v2(db, "INSERT INTO objects VALUES (?)", -1, &stmt, NULL) !=
		    SQLITE_OK)
			broken("setup", sqlite3_errmsg(db));
		sqlite3_bind_int64(stmt, 1, (sqlite3_int64)i);
		sqlite3_step(stmt);
		sqlite3_finalize(stmt);
		cJSON_ArrayForEach(item, label_maps[i]) {
			if (sqlite3_prepare_v2(db, "INSERT INTO object_labels VALUES (?, ?, ?)", -1,
			    &stmt, NULL) != SQLITE_OK)
				broken("setup", sqlite3_errmsg(db));
			sqlite3_bind_int64(stmt, 1, (sqlite3_int64)i);
			sqlite3_bind_text(stmt, 2, item->string, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(stmt, 3, item->valuestring, -1, SQLITE_TRANSIENT);
			if (sqlite3_step(stmt) != SQLITE_DONE)
				broken("setup", sqlite3_errmsg(db));
			sqlite3_finalize(stmt);
		}
	}
}

/* Returns the set of objects s selects in memory, as a bit mask. */
static unsigned
memory_selection(const struct selector *s)
{
	unsigned mask = 0;

	for (size_t i = 0; i < N_OBJECTS; i++) {
		if (selector_matches(s, label_maps[i]))
			mask |= 1u << i;
	}
	return mask;
}

/* Returns the set of objects s's SQL selects, as a bit mask; aborts on any SQL error. */
static unsigned
sql_selection(const struct selector *s)
{
	sqlite3_stmt *stmt;
	struct buf sql;
	char *error = NULL;
	unsigned mask = 0;
	int rc, bound;

	buf_init(&sql);
	buf_append_str(&sql, "SELECT o.id FROM objects o WHERE ");
	selector_to_sql(s, "o.id", &sql);
	if (sqlite3_prepare_v2(db, sql.data, -1, &stmt, NULL) != SQLITE_OK)
		broken("prepare", sqlite3_errmsg(db));
	if (sqlite3_bind_parameter_count(stmt) != selector_parameter_count(s))
		broken("parameter count", sql.data);
	bound = selector_bind(s, stmt, 1, &error);
	if (bound != selector_parameter_count(s) || error != NULL)
		broken("bind", error);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		mask |= 1u << sqlite3_column_int(stmt, 0);
	if (rc != SQLITE_DONE)
		broken("step", sqlite3_errmsg(db));
	sqlite3_finalize(stmt);
	buf_free(&sql);
	return mask;
}

/* Checks that s's SQL selects what selector_matches does; returns that selection. */
static unsigned
check_sql(const struct selector *s)
{
	unsigned memory = memory_selection(s);

	if (sql_selection(s) != memory) {
		char *text = selector_to_string(s);
		broken("SQL and selector_matches disagree", text);
	}
	if (selector_matches_nothing(s) && memory != 0)
		broken("nothing matched something", NULL);
	if (selector_matches_everything(s) && memory != (1u << N_OBJECTS) - 1)
		broken("everything missed something", NULL);
	return memory;
}

/* Parses the string form of s back; aborts if it does not parse. */
static struct selector *
reparse(const struct selector *s, char **text)
{
	char *error = NULL;
	struct selector *again;

	*text = selector_to_string(s);
	again = selector_parse(*text, &error);
	if (again == NULL)
		broken("the string form does not parse back", error);
	return again;
}

/* The string form: round trip and SQL. */
static void
fuzz_string_form(const char *text)
{
	char *error = NULL, *first, *second;
	struct selector *s = selector_parse(text, &error), *again, *third;

	if (s == NULL) {
		if (error == NULL)
			broken("rejected without a message", text);
		free(error);
		return;
	}
	if (error != NULL)
		broken("accepted with a message", error);
	again = reparse(s, &first);
	third = reparse(again, &second);
	if (strcmp(first, second) != 0)
		broken("the string form is not stable", first);
	if (check_sql(s) != check_sql(again))
		broken("the string form selects other objects", first);
	free(first);
	free(second);
	selector_free(third);
	selector_free(again);
	selector_free(s);
}

/* The API form: SQL, and a string form that selects the same objects. */
static void
fuzz_json_form(const uint8_t *data, size_t size)
{
	cJSON *json = cJSON_ParseWithLength((const char *)data, size);
	char *error = NULL, *text;
	struct selector *s, *again;

	if (json == NULL)
		return;
	s = selector_from_json(json, &error);
	cJSON_Delete(json);
	if (s == NULL) {
		if (error == NULL)
			broken("JSON rejected without a message", NULL);
		free(error);
		return;
	}
	if (error != NULL)
		broken("JSON accepted with a message", error);
	if (!selector_matches_nothing(s)) {
		again = reparse(s, &text);
		if (check_sql(s) != check_sql(again))
			broken("the JSON selector's string form selects other objects", text);
		free(text);
		selector_free(again);
	} else {
		check_sql(s);
	}
	selector_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Checks one input in both forms. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	/* Bigger selectors than this could pass SQLite's statement limits (see selector.h). */
	if (size > 16384)
		return 0;
	setup();
	text = xstrndup((const char *)data, size);
	fuzz_string_form(text);
	free(text);
	fuzz_json_form(data, size);
	return 0;
}
