/*
 * test_store.c - the SQLite cache: schema, object rows, index rows, informer state.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "resource.h"
#include "restops.h"
#include "schema.h"
#include "store.h"
#include "util.h"

static const struct resource *pods;
static const struct resource *replicasets;

/* A pod object with the given uid, name, resourceVersion and extra metadata/spec/status
 * JSON members (each a fragment like "\"labels\":{...}" or empty). */
static cJSON *
make_pod(const char *uid, const char *name, const char *rv, const char *meta,
    const char *rest)
{
	char *text = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
	    "\"uid\":\"%s\",\"namespace\":\"ns\",\"name\":\"%s\",\"resourceVersion\":\"%s\","
	    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"%s%s}%s%s}",
	    uid, name, rv, *meta ? "," : "", meta, *rest ? "," : "", rest);
	cJSON *obj = cJSON_Parse(text);

	assert_non_null(obj);
	free(text);
	return obj;
}

static struct store *
open_memory(void)
{
	struct store *s = NULL;
	char *error = NULL;

	assert_int_equal(store_open(":memory:", NULL, &s, &error), 0);
	assert_null(error);
	return s;
}

/* Upserts and returns what changed; fails the test on error. */
static enum store_change
upsert(struct store *s, const struct resource *r, cJSON *obj, long long epoch)
{
	enum store_change change;
	char *error = NULL;

	assert_int_equal(store_upsert_object(s, r, obj, epoch, &change, NULL, &error), 0);
	assert_null(error);
	cJSON_Delete(obj);
	return change;
}

/* The first column of the first row of sql (with one optional text parameter), as a
 * malloc'd string; NULL for SQL NULL or no row. */
static char *
query_text(struct store *s, const char *sql, const char *param)
{
	sqlite3_stmt *stmt;
	char *out = NULL;

	assert_int_equal(sqlite3_prepare_v2(store_db(s), sql, -1, &stmt, NULL), SQLITE_OK);
	if (param != NULL)
		sqlite3_bind_text(stmt, 1, param, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_type(stmt, 0) != SQLITE_NULL)
		out = xstrdup((const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	return out;
}

static long long
query_int(struct store *s, const char *sql, const char *param)
{
	char *text = query_text(s, sql, param);
	long long n = text != NULL ? atoll(text) : -1;

	free(text);
	return n;
}

static void
assert_query(struct store *s, const char *sql, const char *param, const char *want)
{
	char *got = query_text(s, sql, param);

	if (want == NULL)
		assert_null(got);
	else
		assert_string_equal(got, want);
	free(got);
}

/* Removes every file of the directory dir (the database, its -wal, -shm and -lock files,
 * what was moved aside) and dir itself; frees path. */
static void
remove_database(const char *dir, char *path)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char *file;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		file = xasprintf("%s/%s", dir, e->d_name);
		unlink(file);
		free(file);
	}
	closedir(d);
	assert_int_equal(rmdir(dir), 0);
	free(path);
}

/* Writes len bytes of data to the file path, created with mode (umask aside). */
static void
write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* The permission bits of path (not following a last symbolic link). */
static unsigned
file_mode(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return (unsigned)(st.st_mode & 07777);
}

static void
new_database_is_migrated_to_the_newest_schema(void **state)
{
	(void)state;
	struct store *s = open_memory();

	assert_int_equal(query_int(s, "PRAGMA user_version", NULL),
	    schema_migrations[schema_migrations_count - 1].version);
	assert_int_equal(query_int(s, "PRAGMA application_id", NULL), 0x73716b63);
	assert_int_equal(query_int(s, "SELECT count(*) FROM sqlite_schema WHERE name IN "
	    "('pods', 'replicasets', 'deployments', 'labels', 'owner_refs', 'informers')", NULL), 6);
	store_close(s);
}

static void
database_file_is_created_0600_in_wal_mode(void **state)
{
	(void)state;
	char dir[] = "/tmp/sqlkcm-test-XXXXXX";
	struct store *s = NULL;
	char *error = NULL, *path, *wal;
	struct stat st;
	mode_t old = umask(022);

	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/cache.db", dir);
	wal = xasprintf("%s-wal", path);
	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_query(s, "PRAGMA journal_mode", NULL, "wal");
	assert_query(s, "PRAGMA page_size", NULL, "16384");
	upsert(s, pods, make_pod("u1", "p1", "1", "", ""), 1);
	assert_int_equal(stat(wal, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	store_close(s);

	/* Reopened: the data and the informer state are still there, nothing re-applied. */
	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	assert_int_equal(store_count(s, pods), 1);
	store_close(s);
	free(wal);
	remove_database(dir, path);
}

static void
foreign_database_is_refused_and_left_alone(void **state)
{
	(void)state;
	char dir[] = "/tmp/sqlkcm-test-XXXXXX";
	sqlite3 *db;
	struct store *s = NULL;
	char *error = NULL, *path;

	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/other.db", dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE notes (x); INSERT INTO notes VALUES (42)",
	    NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	assert_int_equal(store_open(path, NULL, &s, &error), STORE_OPEN_NOT_A_CACHE);
	assert_null(s);
	assert_non_null(strstr(error, "is not an sqlkcm database"));
	assert_non_null(strstr(error, path));
	free(error);

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_stmt *stmt;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema", -1, &stmt,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(stmt, 0), 1);
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	remove_database(dir, path);
}

static void
newer_schema_version_is_refused(void **state)
{
	(void)state;
	char dir[] = "/tmp/sqlkcm-test-XXXXXX";
	struct store *s = NULL;
	char *error = NULL, *path;

	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/cache.db", dir);
	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	assert_int_equal(sqlite3_exec(store_db(s), "PRAGMA user_version = 999", NULL, NULL,
	    NULL), SQLITE_OK);
	store_close(s);
	assert_int_equal(store_open(path, NULL, &s, &error), -1);
	assert_non_null(strstr(error, "schema version 999, newer than"));
	free(error);
	remove_database(dir, path);
}

static void
pod_columns_are_copied_and_managed_fields_dropped(void **state)
{
	(void)state;
	struct store *s = open_memory();
	cJSON *pod = make_pod("u1", "web-1", "7",
	    "\"generation\":3,\"managedFields\":[{\"manager\":\"kubectl\"}],"
	    "\"annotations\":{\"controller.kubernetes.io/pod-deletion-cost\":\"-25\"}",
	    "\"spec\":{\"nodeName\":\"node-a\"},\"status\":{\"phase\":\"Running\","
	    "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"},"
	    "{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"2026-01-01T00:01:00Z\"}],"
	    "\"containerStatuses\":[{\"name\":\"a\",\"restartCount\":2},{\"name\":\"b\",\"restartCount\":5}]}");

	assert_int_equal(upsert(s, pods, pod, 1), STORE_ADDED);
	assert_query(s, "SELECT namespace || '/' || name || ' rv=' || resource_version || ' gen=' || "
	    "generation || ' ' || phase || ' ' || node_name || ' ready=' || ready || ' since=' || "
	    "ready_since || ' restarts=' || restarts || ' cost=' || deletion_cost || ' created=' || "
	    "creation_timestamp FROM cache_pods WHERE uid = ?", "u1",
	    "ns/web-1 rv=7 gen=3 Running node-a ready=1 since=2026-01-01T00:01:00Z restarts=5 "
	    "cost=-25 created=2026-01-01T00:00:00Z");
	assert_query(s, "SELECT json_type(body, '$.metadata.managedFields') FROM cache_pods", NULL,
	    NULL);
	assert_query(s, "SELECT json_extract(body, '$.status.phase') FROM cache_pods", NULL,
	    "Running");
	store_close(s);
}

/* A Secret is cached without its secrets: each data value but ca.crt and namespace
 * replaced, an empty one kept empty, kubectl's last-applied-configuration dropped; read
 * from text (the informers) or from an object (replay) alike. */
static void
secret_data_never_reaches_the_cache(void **state)
{
	(void)state;
	const struct resource *secrets = resource_find("secrets");
	struct store *s = open_memory();
	const char *text = "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":"
	    "{\"name\":\"t\",\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"4\","
	    "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":"
	    "\"{\\\"data\\\":{\\\"token\\\":\\\"c2VjcmV0\\\"}}\",\"a\":\"b\"}},"
	    "\"type\":\"kubernetes.io/service-account-token\",\"data\":{\"token\":\"c2VjcmV0\","
	    "\"ca.crt\":\"Q0E=\",\"namespace\":\"bnM=\",\"empty\":\"\"}}";
	enum store_change change;
	char *body, *error = NULL;
	size_t len;
	cJSON *obj;

	assert_non_null(secrets);
	obj = store_parse_object(secrets, text, strlen(text), &body, &len);
	assert_non_null(obj);
	assert_null(strstr(body, "c2VjcmV0"));
	assert_int_equal(store_upsert_text(s, secrets, obj, body, len, 1, &change, NULL, &error),
	    0);
	assert_query(s, "SELECT json_extract(body, '$.data.token') || ' ' ||"
	    " json_extract(body, '$.data.\"ca.crt\"') || ' ' || json_extract(body, '$.data.namespace')"
	    " || ' [' || json_extract(body, '$.data.empty') || '] ' ||"
	    " json_extract(body, '$.metadata.annotations.a') || ' ' ||"
	    " coalesce(json_extract(body, '$.metadata.annotations.\"kubectl.kubernetes.io/"
	    "last-applied-configuration\"'), 'none') FROM cache_objects", NULL,
	    "cmVkYWN0ZWQgYnkgc3Fsa2Nt Q0E= bnM= [] b none");
	cJSON_Delete(obj);
	free(body);
	/* The same Secret, changed, as an object. */
	obj = cJSON_Parse(text);
	cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
	    "resourceVersion", cJSON_CreateString("5"));
	assert_int_equal(store_upsert_object(s, secrets, obj, 2, &change, NULL, &error), 0);
	assert_int_equal(change, STORE_UPDATED);
	assert_query(s, "SELECT count(*) FROM cache_objects WHERE body LIKE '%c2VjcmV0%'", NULL,
	    "0");
	cJSON_Delete(obj);
	store_close(s);
}

/* An object given as text is stored as it came, less managedFields: a number cJSON would
 * print as a double (2^53 + 1) and the members' order and spelling are kept. */
static void
text_is_stored_as_received_less_managed_fields(void **state)
{
	(void)state;
	struct store *s = open_memory();
	const char *text = "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":"
	    "{\"managedFields\":[{\"manager\":\"kubectl\"}],\"name\":\"p\",\"namespace\":\"ns\","
	    "\"uid\":\"u1\",\"resourceVersion\":\"4\",\"labels\":{\"app\":\"web\"}},"
	    "\"spec\":{\"nodeName\":\"n\",\"x\":9007199254740993},"
	    "\"status\":{\"phase\":\"Running\"}}";
	enum store_change change;
	char *body, *error = NULL;
	size_t len;
	cJSON *obj = store_parse_object(pods, text, strlen(text), &body, &len);

	assert_non_null(obj);
	assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj,
	    "metadata"), "managedFields"));
	assert_int_equal(len, strlen(body));
	assert_int_equal(store_upsert_text(s, pods, obj, body, len, 1, &change, NULL, &error), 0);
	assert_int_equal(change, STORE_ADDED);
	assert_query(s, "SELECT body FROM cache_pods", NULL,
	    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\","
	    "\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"4\","
	    "\"labels\":{\"app\":\"web\"}},\"spec\":{\"nodeName\":\"n\",\"x\":9007199254740993},"
	    "\"status\":{\"phase\":\"Running\"}}");
	/* The columns and the index rows come from the parsed copy, as from any object. */
	assert_query(s, "SELECT phase || ' ' || node_name FROM cache_pods", NULL, "Running n");
	assert_query(s, "SELECT key || '=' || value FROM object_labels", NULL, "app=web");
	cJSON_Delete(obj);
	free(body);
	store_close(s);
}

/* Upserts a pod given as text, as the informers do; returns the change. */
static enum store_change
upsert_pod_text(struct store *s, long long epoch, const char *uid, const char *name,
    const char *rv, const char *label)
{
	char *text = xasprintf("{\"metadata\":{\"uid\":\"%s\",\"name\":\"%s\",\"namespace\":"
	    "\"ns\",\"resourceVersion\":\"%s\",\"labels\":{\"l\":\"%s\"}}}", uid, name, rv, label);
	enum store_change change;
	char *body, *error = NULL;
	size_t len;
	cJSON *obj = store_parse_object(pods, text, strlen(text), &body, &len);

	assert_non_null(obj);
	assert_int_equal(store_upsert_text(s, pods, obj, body, len, epoch, &change, NULL,
	    &error), 0);
	assert_null(error);
	cJSON_Delete(obj);
	free(body);
	free(text);
	return change;
}

/* A list into an empty table inserts without reading first; an object listed twice, or a
 * name listed with a second uid, still ends as one row with only its own index rows. */
static void
first_list_inserts_and_a_repeated_object_still_ends_as_one_row(void **state)
{
	(void)state;
	struct store *s = open_memory();
	long long epoch;
	char *error = NULL;

	assert_int_equal(store_begin_list(s, pods, &epoch, &error), 0);
	assert_int_equal(upsert_pod_text(s, epoch, "u1", "a", "1", "one"), STORE_ADDED);
	assert_int_equal(upsert_pod_text(s, epoch, "u2", "b", "2", "two"), STORE_ADDED);
	/* The same uid again: an update of its row, its labels replaced. */
	assert_int_equal(upsert_pod_text(s, epoch, "u1", "a", "3", "three"), STORE_UPDATED);
	/* Another uid under a listed name: the old object is gone, its rows too. */
	assert_int_equal(upsert_pod_text(s, epoch, "u3", "b", "4", "four"), STORE_ADDED);
	assert_int_equal(store_finish_list(s, pods, "4", &error), 0);
	assert_query(s, "SELECT group_concat(uid || ':' || name || ':' || resource_version, ' ') "
	    "FROM (SELECT * FROM cache_pods ORDER BY uid)", NULL, "u1:a:3 u3:b:4");
	assert_query(s, "SELECT group_concat(uid || '=' || value, ' ') FROM (SELECT o.uid, "
	    "l.value FROM object_labels l JOIN cache_pods o ON o.id = l.object_id ORDER BY "
	    "o.uid)", NULL, "u1=three u3=four");
	assert_int_equal(query_int(s, "SELECT count(*) FROM object_labels", NULL), 2);
	/* A later list finds the table full and reads as before. */
	assert_int_equal(store_begin_list(s, pods, &epoch, &error), 0);
	assert_int_equal(upsert_pod_text(s, epoch, "u1", "a", "3", "three"), STORE_UNCHANGED);
	assert_int_equal(upsert_pod_text(s, epoch, "u3", "b", "5", "five"), STORE_UPDATED);
	store_close(s);
}

/* A metadata resource's text loses its annotations too; text that is not an object's
 * valid JSON is refused with nothing to free. */
static void
parse_object_drops_what_the_resource_does_not_keep_and_refuses_bad_text(void **state)
{
	(void)state;
	const struct resource *templates = resource_metadata("", "v1", "podtemplates",
	    "PodTemplate", 1);
	const char *text = "{\"metadata\":{\"name\":\"default\",\"annotations\":{\"a\":\"b\"},"
	    "\"managedFields\":[],\"uid\":\"u\"}}";
	const char *bad[] = { "", "[]", "{\"metadata\":{\"name\":}}", "{\"metadata\":{}",
	    "{\"metadata\":{\"a\":1}} x", "\"text\"" };
	char *body;
	size_t len;
	cJSON *obj;

	assert_non_null(templates);
	obj = store_parse_object(templates, text, strlen(text), &body, &len);
	assert_non_null(obj);
	assert_string_equal(body, "{\"metadata\":{\"name\":\"default\",\"uid\":\"u\"}}");
	cJSON_Delete(obj);
	free(body);
	obj = store_parse_object(pods, text, strlen(text), &body, &len);
	assert_string_equal(body, "{\"metadata\":{\"name\":\"default\",\"annotations\":"
	    "{\"a\":\"b\"},\"uid\":\"u\"}}");
	cJSON_Delete(obj);
	free(body);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		body = (char *)"unset";
		assert_null(store_parse_object(pods, bad[i], strlen(bad[i]), &body, &len));
		assert_null(body);
	}
}

/* The Ready column: the condition's status, not its presence. */
static void
ready_column_follows_the_ready_condition(void **state)
{
	(void)state;
	static const struct {
		const char *status;
		const char *want;
	} cases[] = {
		{ "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}", "1" },
		{ "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}", "0" },
		{ "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"Unknown\"}]}", "0" },
		{ "\"status\":{\"conditions\":[{\"type\":\"ContainersReady\",\"status\":\"True\"}]}", NULL },
		{ "\"status\":{\"phase\":\"Pending\"}", NULL },
		{ "", NULL },
	};
	struct store *s = open_memory();

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char uid[16];
		snprintf(uid, sizeof uid, "u%zu", i);
		upsert(s, pods, make_pod(uid, uid, "1", "", cases[i].status), 1);
		assert_query(s, "SELECT ready FROM cache_pods WHERE uid = ?", uid, cases[i].want);
	}
	store_close(s);
}

/* The deletion-cost annotation is a base-10 int32 as kube parses it, or nothing (kube's
 * ranking then counts cost 0): no '+', no leading zero but "0" itself. */
static void
deletion_cost_accepts_only_int32(void **state)
{
	(void)state;
	static const struct {
		const char *value;
		const char *want;
	} cases[] = {
		{ "100", "100" }, { "-5", "-5" }, { "-100", "-100" }, { "+7", NULL },
		{ "+10", NULL }, { "0", "0" }, { "008", NULL }, { "00", NULL },
		{ "2147483647", "2147483647" }, { "-2147483648", "-2147483648" },
		{ "2147483648", NULL }, { "-2147483649", NULL }, { "abc", NULL }, { "", NULL },
		{ " 5", NULL }, { "5 ", NULL }, { "1.5", NULL }, { "0x10", NULL }, { "+", NULL },
		{ "99999999999999999999999", NULL },
	};
	struct store *s = open_memory();

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char uid[16];
		char *meta = xasprintf("\"annotations\":{\"controller.kubernetes.io/pod-deletion-cost\":"
		    "\"%s\"}", cases[i].value);
		snprintf(uid, sizeof uid, "u%zu", i);
		upsert(s, pods, make_pod(uid, uid, "1", meta, ""), 1);
		free(meta);
		assert_query(s, "SELECT deletion_cost FROM cache_pods WHERE uid = ?", uid,
		    cases[i].want);
	}
	store_close(s);
}

static void
replicas_default_to_one_when_unset(void **state)
{
	(void)state;
	struct store *s = open_memory();
	cJSON *rs = cJSON_Parse("{\"metadata\":{\"uid\":\"r1\",\"namespace\":\"ns\",\"name\":\"a\","
	    "\"resourceVersion\":\"1\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"a\"}}}}");
	cJSON *zero = cJSON_Parse("{\"metadata\":{\"uid\":\"r2\",\"namespace\":\"ns\",\"name\":\"b\","
	    "\"resourceVersion\":\"1\"},\"spec\":{\"replicas\":0,\"minReadySeconds\":10},"
	    "\"status\":{\"replicas\":3,\"readyReplicas\":2,\"availableReplicas\":1,"
	    "\"observedGeneration\":4}}");

	upsert(s, replicasets, rs, 1);
	upsert(s, replicasets, zero, 1);
	assert_query(s, "SELECT replicas || ' ' || selector FROM cache_replicasets WHERE uid = ?",
	    "r1", "1 {\"matchLabels\":{\"app\":\"a\"}}");
	assert_query(s, "SELECT desired || ' ' || current || ' ' || ready || ' ' || available || ' ' "
	    "|| min_ready_seconds || ' ' || observed_generation FROM replicasets WHERE uid = ?", "r2",
	    "0 3 2 1 10 4");
	store_close(s);
}

static void
labels_and_owner_references_are_indexed(void **state)
{
	(void)state;
	struct store *s = open_memory();

	upsert(s, pods, make_pod("u1", "p1", "1",
	    "\"labels\":{\"app\":\"web\",\"tier\":\"front\"},\"ownerReferences\":["
	    "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-abc\",\"uid\":\"rs1\","
	    "\"controller\":true,\"blockOwnerDeletion\":true},"
	    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"cm\",\"uid\":\"cm1\"}]", ""), 1);
	assert_query(s, "SELECT group_concat(key || '=' || value, ',') FROM "
	    "(SELECT * FROM labels WHERE uid = ? ORDER BY key)", "u1", "app=web,tier=front");
	assert_query(s, "SELECT group_concat(owner_uid || ':' || controller || ':' || kind || ':' || "
	    "name || ':' || api_version || ':' || block_owner_deletion, ',') FROM "
	    "(SELECT * FROM owner_refs WHERE uid = ? ORDER BY owner_uid)", "u1",
	    "cm1:0:ConfigMap:cm:v1:0,rs1:1:ReplicaSet:web-abc:apps/v1:1");
	assert_query(s, "SELECT owner_kind || '/' || owner_name FROM pods WHERE uid = ?", "u1",
	    "ReplicaSet/web-abc");
	store_close(s);
}

static void
changed_labels_and_owners_replace_the_index_rows(void **state)
{
	(void)state;
	struct store *s = open_memory();

	upsert(s, pods, make_pod("u1", "p1", "1", "\"labels\":{\"app\":\"web\",\"old\":\"x\"},"
	    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"a\","
	    "\"uid\":\"rs1\",\"controller\":true}]", ""), 1);
	assert_int_equal(upsert(s, pods, make_pod("u1", "p1", "2",
	    "\"labels\":{\"app\":\"db\",\"new\":\"\"}", ""), 1), STORE_UPDATED);
	assert_query(s, "SELECT group_concat(key || '=' || value, ',') FROM "
	    "(SELECT * FROM labels WHERE uid = ? ORDER BY key)", "u1", "app=db,new=");
	assert_int_equal(query_int(s, "SELECT count(*) FROM owner_refs WHERE uid = ?", "u1"), 0);

	/* A status-only update keeps the index rows as they are. */
	assert_int_equal(upsert(s, pods, make_pod("u1", "p1", "3",
	    "\"labels\":{\"app\":\"db\",\"new\":\"\"}", "\"status\":{\"phase\":\"Running\"}"), 1),
	    STORE_UPDATED);
	assert_query(s, "SELECT group_concat(key || '=' || value, ',') FROM "
	    "(SELECT * FROM labels WHERE uid = ? ORDER BY key)", "u1", "app=db,new=");
	assert_query(s, "SELECT phase FROM cache_pods WHERE uid = ?", "u1", "Running");
	store_close(s);
}

static void
hostile_label_keys_and_values_are_stored_verbatim(void **state)
{
	(void)state;
	struct store *s = open_memory();

	upsert(s, pods, make_pod("u1", "p1", "1", "\"labels\":{\"a'b\\\"c\":\"x'); DROP TABLE labels; --\","
	    "\"\\u00e9t\\u00e9\":\"\\u2603\"}", ""), 1);
	assert_query(s, "SELECT value FROM labels WHERE key = ?", "a'b\"c",
	    "x'); DROP TABLE labels; --");
	assert_query(s, "SELECT value FROM labels WHERE key = ?", "\xc3\xa9t\xc3\xa9", "\xe2\x98\x83");
	assert_int_equal(query_int(s, "SELECT count(*) FROM labels", NULL), 2);
	store_close(s);
}

static void
same_resource_version_is_unchanged_but_marked_listed(void **state)
{
	(void)state;
	struct store *s = open_memory();

	assert_int_equal(upsert(s, pods, make_pod("u1", "p1", "5", "", ""), 1), STORE_ADDED);
	assert_int_equal(upsert(s, pods, make_pod("u1", "p1", "5", "", ""), 2), STORE_UNCHANGED);
	assert_int_equal(query_int(s, "SELECT list_epoch FROM cache_pods WHERE uid = ?", "u1"), 2);
	store_close(s);
}

static void
update_returns_the_previous_body(void **state)
{
	(void)state;
	struct store *s = open_memory();
	enum store_change change;
	char *old = NULL, *error = NULL;
	cJSON *pod;

	upsert(s, pods, make_pod("u1", "p1", "1", "", "\"status\":{\"phase\":\"Pending\"}"), 1);
	pod = make_pod("u1", "p1", "2", "", "\"status\":{\"phase\":\"Running\"}");
	assert_int_equal(store_upsert_object(s, pods, pod, 1, &change, &old, &error), 0);
	assert_int_equal(change, STORE_UPDATED);
	assert_non_null(old);
	assert_non_null(strstr(old, "\"Pending\""));
	free(old);
	cJSON_Delete(pod);
	store_close(s);
}

static void
delete_removes_the_row_and_its_index_rows(void **state)
{
	(void)state;
	struct store *s = open_memory();
	enum store_change change;
	char *old = NULL, *error = NULL;

	upsert(s, pods, make_pod("u1", "p1", "1", "\"labels\":{\"a\":\"b\"},\"ownerReferences\":"
	    "[{\"apiVersion\":\"v1\",\"kind\":\"X\",\"name\":\"x\",\"uid\":\"o1\"}]", ""), 1);
	assert_int_equal(store_delete_object(s, pods, "u1", &change, &old, &error), 0);
	assert_int_equal(change, STORE_DELETED);
	assert_non_null(strstr(old, "\"p1\""));
	free(old);
	assert_int_equal(store_count(s, pods), 0);
	assert_int_equal(query_int(s, "SELECT count(*) FROM labels", NULL), 0);
	assert_int_equal(query_int(s, "SELECT count(*) FROM owner_refs", NULL), 0);

	assert_int_equal(store_delete_object(s, pods, "u1", &change, NULL, &error), 0);
	assert_int_equal(change, STORE_UNCHANGED);
	store_close(s);
}

static void
recreated_object_replaces_the_old_uid(void **state)
{
	(void)state;
	struct store *s = open_memory();

	upsert(s, pods, make_pod("old", "p1", "1", "\"labels\":{\"gen\":\"1\"}", ""), 1);
	/* The delete of "old" was missed; the same name now has a new uid. */
	assert_int_equal(upsert(s, pods, make_pod("new", "p1", "9", "\"labels\":{\"gen\":\"2\"}", ""),
	    1), STORE_ADDED);
	assert_int_equal(store_count(s, pods), 1);
	assert_query(s, "SELECT uid FROM cache_pods WHERE name = ?", "p1", "new");
	assert_int_equal(query_int(s, "SELECT count(*) FROM labels WHERE uid = ?", "old"), 0);
	store_close(s);
}

static void
object_without_uid_is_refused_and_nothing_is_lost(void **state)
{
	(void)state;
	struct store *s = open_memory();
	static const char *bad[] = {
		"{\"metadata\":{\"namespace\":\"ns\",\"name\":\"x\",\"resourceVersion\":\"1\"}}",
		"{\"metadata\":{\"uid\":\"u9\",\"namespace\":\"ns\",\"resourceVersion\":\"1\"}}",
		"{\"metadata\":{\"uid\":\"u9\",\"namespace\":\"ns\",\"name\":\"x\"}}",
		"{\"metadata\":\"not an object\"}",
		"{\"kind\":\"Pod\"}",
		"{\"metadata\":{\"uid\":7,\"name\":\"x\",\"resourceVersion\":\"1\"}}",
	};
	static const char *field[] = { "metadata.uid", "metadata.name",
		"metadata.resourceVersion", "no metadata", "no metadata", "metadata.uid" };

	upsert(s, pods, make_pod("u1", "keep", "1", "\"labels\":{\"a\":\"b\"}", ""), 1);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cJSON *obj = cJSON_Parse(bad[i]);
		char *error = NULL;
		assert_non_null(obj);
		assert_int_equal(store_upsert_object(s, pods, obj, 1, NULL, NULL, &error),
		    STORE_INVALID);
		assert_non_null(error);
		assert_non_null(strstr(error, field[i]));
		free(error);
		cJSON_Delete(obj);
	}
	assert_int_equal(store_count(s, pods), 1);
	assert_int_equal(query_int(s, "SELECT count(*) FROM labels", NULL), 1);
	store_close(s);
}

static void
removed_uid(const char *uid, const char *body, void *arg)
{
	struct buf *b = arg;

	assert_non_null(strstr(body, uid));
	buf_printf(b, "%s,", uid);
}

static void
relist_removes_unlisted_rows_in_bounded_chunks(void **state)
{
	(void)state;
	struct store *s = open_memory();
	struct store_informer_state st;
	struct buf removed;
	long long epoch;
	char *error = NULL;
	int deleted, total = 0;

	buf_init(&removed);
	assert_int_equal(store_begin_list(s, pods, &epoch, &error), 0);
	assert_int_equal(epoch, 1);
	for (int i = 0; i < 7; i++) {
		char uid[8];
		snprintf(uid, sizeof uid, "u%d", i);
		upsert(s, pods, make_pod(uid, uid, "1", "\"labels\":{\"a\":\"b\"}", ""), epoch);
	}
	assert_int_equal(store_finish_list(s, pods, "100", &error), 0);

	/* The relist sees u1, u3 and u5 only (u3 at a new version). */
	assert_int_equal(store_begin_list(s, pods, &epoch, &error), 0);
	assert_int_equal(epoch, 2);
	upsert(s, pods, make_pod("u1", "u1", "1", "", ""), epoch);
	upsert(s, pods, make_pod("u3", "u3", "2", "", ""), epoch);
	upsert(s, pods, make_pod("u5", "u5", "1", "", ""), epoch);
	do {
		assert_int_equal(store_delete_unlisted(s, pods, epoch, 3, removed_uid, &removed,
		    &deleted, &error), 0);
		assert_true(deleted <= 3);
		total += deleted;
	} while (deleted == 3);
	assert_int_equal(total, 4);
	assert_int_equal(store_count(s, pods), 3);
	assert_int_equal(strlen(removed.data), strlen("u0,u2,u4,u6,"));
	/* u1 and u5 came back unchanged and keep their label; u3 came back without one. */
	assert_int_equal(query_int(s, "SELECT count(*) FROM labels", NULL), 2);
	assert_int_equal(query_int(s, "SELECT count(*) FROM labels WHERE uid = ?", "u3"), 0);
	assert_int_equal(store_finish_list(s, pods, "200", &error), 0);
	assert_int_equal(store_get_informer(s, pods, &st, &error), 0);
	assert_string_equal(st.resource_version, "200");
	assert_int_equal(st.list_epoch, 2);
	assert_int_equal(st.synced, 1);
	store_informer_state_clear(&st);
	buf_free(&removed);
	store_close(s);
}

static void
resource_version_is_kept_per_informer(void **state)
{
	(void)state;
	struct store *s = open_memory();
	struct store_informer_state st;
	char *error = NULL;

	assert_int_equal(store_get_informer(s, pods, &st, &error), 0);
	assert_null(st.resource_version);
	assert_int_equal(st.synced, 0);
	store_informer_state_clear(&st);
	assert_int_equal(store_set_resource_version(s, pods, "42", &error), 0);
	assert_int_equal(store_set_resource_version(s, replicasets, "7", &error), 0);
	assert_int_equal(store_set_resource_version(s, pods, "43", &error), 0);
	assert_int_equal(store_get_informer(s, pods, &st, &error), 0);
	assert_string_equal(st.resource_version, "43");
	store_informer_state_clear(&st);
	assert_int_equal(store_get_informer(s, replicasets, &st, &error), 0);
	assert_string_equal(st.resource_version, "7");
	store_informer_state_clear(&st);
	store_close(s);
}

static void
rolled_back_transaction_leaves_no_trace(void **state)
{
	(void)state;
	struct store *s = open_memory();
	char *error = NULL;

	assert_int_equal(store_begin(s, &error), 0);
	upsert(s, pods, make_pod("u1", "p1", "1", "\"labels\":{\"a\":\"b\"}", ""), 1);
	assert_int_equal(store_set_resource_version(s, pods, "9", &error), 0);
	store_rollback(s);
	assert_int_equal(store_count(s, pods), 0);
	assert_int_equal(query_int(s, "SELECT count(*) FROM labels", NULL), 0);
	assert_int_equal(query_int(s, "SELECT count(*) FROM informers WHERE resource_version = ?",
	    "9"), 0);
	store_close(s);
}

/* Object ids: unique across the cache tables, in the order objects first appear, kept by
 * updates; after a reopen new objects get ids above every stored one. */
static void
object_ids_are_unique_across_tables_and_kept_by_updates(void **state)
{
	(void)state;
	char dir[] = "/tmp/sqlkcm-test-XXXXXX";
	struct store *s = NULL;
	char *error = NULL, *path;
	cJSON *rs;

	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/cache.db", dir);
	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	upsert(s, pods, make_pod("u1", "p1", "1", "\"labels\":{\"a\":\"1\"}", ""), 1);
	rs = cJSON_Parse("{\"kind\":\"ReplicaSet\",\"metadata\":{\"uid\":\"r1\","
	    "\"namespace\":\"ns\",\"name\":\"r\",\"resourceVersion\":\"2\","
	    "\"labels\":{\"a\":\"2\"}}}");
	upsert(s, replicasets, rs, 1);
	upsert(s, pods, make_pod("u2", "p2", "3", "\"labels\":{\"a\":\"3\"}", ""), 1);
	assert_query(s, "SELECT group_concat(uid, ',') FROM (SELECT uid, id FROM cache_pods "
	    "UNION ALL SELECT uid, id FROM cache_replicasets ORDER BY id)", NULL, "u1,r1,u2");
	assert_int_equal(query_int(s, "SELECT count(DISTINCT id) FROM (SELECT id FROM cache_pods "
	    "UNION ALL SELECT id FROM cache_replicasets)", NULL), 3);
	upsert(s, pods, make_pod("u1", "p1", "4", "\"labels\":{\"a\":\"4\"}", ""), 1);
	assert_int_equal(query_int(s, "SELECT id FROM cache_pods WHERE uid = ?", "u1"), 1);
	assert_query(s, "SELECT value FROM labels WHERE uid = ?", "u1", "4");

	/* The newest object is deleted: its id may be given again, its rows are gone. */
	assert_int_equal(store_delete_object(s, pods, "u2", NULL, NULL, &error), 0);
	store_close(s);
	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	upsert(s, pods, make_pod("u3", "p3", "5", "\"labels\":{\"b\":\"5\"}", ""), 1);
	assert_true(query_int(s, "SELECT id FROM cache_pods WHERE uid = ?", "u3") >
	    query_int(s, "SELECT max(id) FROM cache_replicasets", NULL));
	assert_query(s, "SELECT group_concat(key || '=' || value, ',') FROM labels WHERE uid = ?",
	    "u3", "b=5");
	assert_query(s, "SELECT group_concat(uid || ':' || key || '=' || value, ',') FROM "
	    "(SELECT * FROM labels ORDER BY uid)", NULL, "r1:a=2,u1:a=4,u3:b=5");
	store_close(s);
	remove_database(dir, path);
}

/* Creates a cache of schema version 2 (labels and owner_refs keyed by uid) in the new
 * directory dir, as an sqlkcm of that version left it, with the rows rows_sql inserts;
 * returns its path (malloc'd). */
static char *
version_2_cache(char *dir, const char *rows_sql)
{
	char *path;
	sqlite3 *db;

	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/cache.db", dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	for (size_t i = 0; i < schema_migrations_count && schema_migrations[i].version <= 2; i++)
		assert_int_equal(sqlite3_exec(db, schema_migrations[i].sql, NULL, NULL, NULL),
		    SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 2; "
	    "PRAGMA application_id = 1936812899;", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, rows_sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	return path;
}

/* A cache written by an sqlkcm of schema version 2 (labels and owner_refs keyed by uid)
 * keeps every label and owner reference through the migration to object ids. */
static void
version_2_cache_keeps_its_labels_and_owners(void **state)
{
	(void)state;
	struct store *s = NULL;
	char dir[] = "/tmp/sqlkcm-test-XXXXXX", *path, *error = NULL;

	path = version_2_cache(dir,
	    "INSERT INTO cache_pods (uid, namespace, name, resource_version, list_epoch,"
	    "    index_hash, body, controller_uid) VALUES"
	    "  ('p1', 'ns', 'a', '1', 1, 0, '{}', 'r1'), ('p2', 'ns', 'b', '2', 1, 0, '{}', NULL);"
	    "INSERT INTO cache_replicasets (uid, namespace, name, resource_version, replicas,"
	    "    list_epoch, index_hash, body) VALUES ('r1', 'ns', 'r', '3', 2, 1, 0, '{}');"
	    "INSERT INTO labels VALUES ('p1', 'app', 'web'), ('p2', 'app', 'db'),"
	    "  ('r1', 'tier', 'x');"
	    "INSERT INTO owner_refs VALUES ('p1', 'r1', 1, 'ReplicaSet', 'r', 'apps/v1', 1);");

	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	assert_null(error);
	assert_int_equal(query_int(s, "PRAGMA user_version", NULL),
	    schema_migrations[schema_migrations_count - 1].version);
	assert_query(s, "SELECT group_concat(uid || ':' || key || '=' || value, ',') FROM "
	    "(SELECT * FROM labels ORDER BY uid)", NULL, "p1:app=web,p2:app=db,r1:tier=x");
	assert_query(s, "SELECT owner_kind || '/' || owner_name FROM pods WHERE uid = ?", "p1",
	    "ReplicaSet/r");
	assert_query(s, "SELECT pod FROM replicaset_pods WHERE replicaset_uid = ?", "r1", "a");
	assert_int_equal(query_int(s, "SELECT count(DISTINCT id) FROM (SELECT id FROM cache_pods "
	    "UNION ALL SELECT id FROM cache_replicasets)", NULL), 3);
	/* New objects get new ids; deleting a migrated one takes its rows with it. */
	upsert(s, pods, make_pod("p3", "c", "4", "\"labels\":{\"app\":\"new\"}", ""), 1);
	assert_int_equal(query_int(s, "SELECT id FROM cache_pods WHERE uid = ?", "p3"), 4);
	assert_int_equal(store_delete_object(s, pods, "p1", NULL, NULL, &error), 0);
	assert_query(s, "SELECT group_concat(uid || ':' || key || '=' || value, ',') FROM "
	    "(SELECT * FROM labels ORDER BY uid)", NULL, "p2:app=db,p3:app=new,r1:tier=x");
	assert_int_equal(query_int(s, "SELECT count(*) FROM owner_refs", NULL), 0);
	assert_query(s, "PRAGMA integrity_check", NULL, "ok");
	store_close(s);
	remove_database(dir, path);
}

/* Migrating a cache of some size rebuilds its tables; the pages the old ones held are
 * given back to the file system (VACUUM), and every row is still there. */
static void
migration_gives_back_the_old_tables_pages(void **state)
{
	(void)state;
	struct store *s = NULL;
	char dir[] = "/tmp/sqlkcm-test-XXXXXX", *path, *error = NULL;

	path = version_2_cache(dir,
	    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)"
	    " INSERT INTO cache_pods (uid, namespace, name, resource_version, list_epoch,"
	    "    index_hash, body) SELECT 'uid-' || i, 'ns', 'p-' || i, '1', 1, 0,"
	    "    printf('{\"pad\":\"%.*c\"}', 2000, 'x') FROM n;"
	    "INSERT INTO labels SELECT uid, 'app', 'web' FROM cache_pods;");

	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	assert_int_equal(query_int(s, "PRAGMA freelist_count", NULL), 0);
	assert_int_equal(store_count(s, pods), 500);
	assert_int_equal(query_int(s, "SELECT count(*) FROM labels WHERE key = 'app'", NULL), 500);
	assert_query(s, "PRAGMA integrity_check", NULL, "ok");
	store_close(s);
	remove_database(dir, path);
}

/* --- the file: its mode, its lock, a file that is not a cache -------------------------- */

/* A cache left 0644 by an older sqlkcm (or a copy), with its -wal and -shm, is made 0600
 * when opened for writing: it holds every object of the cluster. */
static void
existing_0644_database_wal_and_shm_are_made_0600(void **state)
{
	(void)state;
	char dir[] = "/tmp/sqlkcm-test-XXXXXX";
	struct store *s = NULL;
	char *error = NULL, *path, *wal, *shm;

	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/cache.db", dir);
	wal = xasprintf("%s-wal", path);
	shm = xasprintf("%s-shm", path);
	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	upsert(s, pods, make_pod("u1", "p1", "1", "", ""), 1);
	store_close(s);
	assert_int_equal(chmod(path, 0644), 0);
	write_file(wal, "", 0, 0644);	/* empty: a log with nothing to apply */
	write_file(shm, "", 0, 0644);

	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	assert_int_equal(file_mode(path), 0600);
	assert_int_equal(file_mode(wal), 0600);
	assert_int_equal(file_mode(shm), 0600);
	assert_int_equal(store_count(s, pods), 1);
	store_close(s);
	free(wal);
	free(shm);
	remove_database(dir, path);
}

/* A -wal that is a symbolic link is refused: the mode of the file it names is not
 * touched. */
static void
wal_that_is_a_symbolic_link_is_refused_and_its_target_left_alone(void **state)
{
	(void)state;
	char dir[] = "/tmp/sqlkcm-test-XXXXXX";
	struct store *s = NULL;
	char *error = NULL, *path, *wal, *target;

	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/cache.db", dir);
	wal = xasprintf("%s-wal", path);
	target = xasprintf("%s/someone-elses-file", dir);
	write_file(target, "x", 1, 0644);
	assert_int_equal(symlink(target, wal), 0);

	assert_int_equal(store_open(path, NULL, &s, &error), -1);
	assert_null(s);
	assert_non_null(strstr(error, wal));
	assert_int_equal(file_mode(target), 0644);
	free(error);
	free(wal);
	free(target);
	remove_database(dir, path);
}

/* One writer per file: a second store opened for writing is refused, naming the file and
 * the holder's pid, until the first is closed. */
static void
second_writer_of_a_database_is_refused_with_the_holders_pid(void **state)
{
	(void)state;
	char dir[] = "/tmp/sqlkcm-test-XXXXXX";
	struct store *s = NULL, *second = NULL;
	char *error = NULL, *path, *want;

	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/cache.db", dir);
	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	upsert(s, pods, make_pod("u1", "p1", "1", "", ""), 1);

	assert_int_equal(store_open(path, NULL, &second, &error), -1);
	assert_null(second);
	want = xasprintf("%s is in use by another sqlkcm (pid %ld); only one daemon may write "
	    "a cache", path, (long)getpid());
	assert_string_equal(error, want);
	free(want);
	free(error);
	error = NULL;
	/* The refused open changed nothing the first writer holds. */
	upsert(s, pods, make_pod("u2", "p2", "2", "", ""), 1);
	assert_int_equal(store_count(s, pods), 2);

	store_close(s);
	assert_int_equal(store_open(path, NULL, &second, &error), 0);
	assert_int_equal(store_count(second, pods), 2);
	store_close(second);
	remove_database(dir, path);
}

/* Readers take no lock and are not blocked by the writer's: sqlkcm plan's read-only
 * store and a plain SQLite connection both read while the writer has the file. */
static void
readers_are_not_blocked_by_the_writer(void **state)
{
	(void)state;
	struct store_options read_only = { .read_only = 1 };
	char dir[] = "/tmp/sqlkcm-test-XXXXXX";
	struct store *s = NULL, *reader = NULL;
	char *error = NULL, *path;
	sqlite3 *db;
	sqlite3_stmt *stmt;

	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/cache.db", dir);
	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	upsert(s, pods, make_pod("u1", "p1", "1", "", ""), 1);

	assert_int_equal(store_open(path, &read_only, &reader, &error), 0);
	assert_null(error);
	assert_int_equal(query_int(reader, "SELECT count(*) FROM cache_pods", NULL), 1);
	store_close(reader);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM cache_pods", -1, &stmt,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(stmt, 0), 1);
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	/* And the writer still writes. */
	upsert(s, pods, make_pod("u2", "p2", "2", "", ""), 1);
	store_close(s);
	remove_database(dir, path);
}

/* A lock file left by a writer killed with SIGKILL (its pid in it, no lock held) does not
 * stop the next start. */
static void
lock_file_left_by_a_killed_writer_does_not_block(void **state)
{
	(void)state;
	char dir[] = "/tmp/sqlkcm-test-XXXXXX";
	struct store *s = NULL;
	char *error = NULL, *path, *lock;

	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/cache.db", dir);
	lock = xasprintf("%s-lock", path);
	write_file(lock, "999999\n", 7, 0600);
	assert_int_equal(store_open(path, NULL, &s, &error), 0);
	assert_null(error);
	store_close(s);
	free(lock);
	remove_database(dir, path);
}

/* Files at --db that are not sqlkcm caches, as data: each is refused with
 * STORE_OPEN_NOT_A_CACHE and a message naming it and what is wrong, and left as it was. */
static const struct {
	const char *name;
	const char *content;	/* written as the file; NULL: made with sql */
	size_t len;
	const char *sql;
	const char *message;
} not_a_cache[] = {
	{ "text", "this is not a database, just a line of text\n", 45, NULL,
	    "is not an sqlkcm cache: not an SQLite file" },
	{ "five bytes", "junk\n", 5, NULL, "is not an sqlkcm cache: not an SQLite file" },
	{ "SQLite's magic and garbage",
	    "SQLite format 3\0\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
	    32, NULL, "is not an sqlkcm cache: file is not a database" },
	{ "another program's tables", NULL, 0, "CREATE TABLE notes (x)",
	    "is not an sqlkcm database (application_id 0, 1 schema objects)" },
	{ "another program's application_id", NULL, 0, "PRAGMA application_id = 1179603537",
	    "is not an sqlkcm database (application_id 1179603537" },
	{ "another program's user_version, no table", NULL, 0, "PRAGMA user_version = 7",
	    "is not an sqlkcm database (user_version 7, no sqlkcm application_id)" },
};

/* Makes case i's file at path. */
static void
make_not_a_cache(size_t i, const char *path)
{
	sqlite3 *db;

	if (not_a_cache[i].content != NULL) {
		write_file(path, not_a_cache[i].content, not_a_cache[i].len, 0600);
		return;
	}
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, not_a_cache[i].sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* The bytes of the file path (malloc'd), and their number in *len. */
static char *
read_whole_file(const char *path, size_t *len)
{
	struct stat st;
	char *data;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	data = xcalloc(1, (size_t)st.st_size + 1);
	assert_int_equal(read(fd, data, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return data;
}

static void
file_that_is_not_a_cache_is_refused_and_left_as_it_was(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof not_a_cache / sizeof not_a_cache[0]; i++) {
		char dir[] = "/tmp/sqlkcm-test-XXXXXX";
		struct store *s = NULL;
		char *error = NULL, *path, *before, *after;
		size_t before_len, after_len;

		assert_non_null(mkdtemp(dir));
		path = xasprintf("%s/cache.db", dir);
		make_not_a_cache(i, path);
		before = read_whole_file(path, &before_len);

		if (store_open(path, NULL, &s, &error) != STORE_OPEN_NOT_A_CACHE)
			fail_msg("%s: not refused as not a cache: %s", not_a_cache[i].name,
			    error != NULL ? error : "opened");
		assert_null(s);
		if (strstr(error, path) == NULL || strstr(error, not_a_cache[i].message) == NULL)
			fail_msg("%s: the message \"%s\" lacks the file or \"%s\"",
			    not_a_cache[i].name, error, not_a_cache[i].message);
		after = read_whole_file(path, &after_len);
		assert_int_equal(after_len, before_len);
		assert_memory_equal(after, before, before_len);
		free(error);
		free(before);
		free(after);
		remove_database(dir, path);
	}
}

/* With rebuild_cache, a file that is not a cache is moved aside to FILE.corrupt-TIME with
 * its -wal, and a new, empty cache takes its place. */
static void
rebuild_cache_moves_the_file_aside_and_starts_a_new_cache(void **state)
{
	(void)state;
	struct store_options rebuild = { .rebuild_cache = 1 };
	for (size_t i = 0; i < sizeof not_a_cache / sizeof not_a_cache[0]; i++) {
		char dir[] = "/tmp/sqlkcm-test-XXXXXX";
		struct store *s = NULL;
		char *error = NULL, *path, *wal, *aside = NULL, *aside_wal, *before, *moved;
		size_t before_len, moved_len;
		DIR *d;
		struct dirent *e;

		assert_non_null(mkdtemp(dir));
		path = xasprintf("%s/cache.db", dir);
		wal = xasprintf("%s-wal", path);
		make_not_a_cache(i, path);
		write_file(wal, "", 0, 0600);
		before = read_whole_file(path, &before_len);

		if (store_open(path, &rebuild, &s, &error) != 0)
			fail_msg("%s: not rebuilt: %s", not_a_cache[i].name, error);
		assert_int_equal(query_int(s, "PRAGMA application_id", NULL), 0x73716b63);
		assert_int_equal(store_count(s, pods), 0);
		upsert(s, pods, make_pod("u1", "p1", "1", "", ""), 1);
		store_close(s);

		assert_non_null(d = opendir(dir));
		while ((e = readdir(d)) != NULL) {
			if (strncmp(e->d_name, "cache.db.corrupt-", 17) == 0 &&
			    strchr(e->d_name + 17, '-') == NULL) {
				assert_null(aside);
				aside = xasprintf("%s/%s", dir, e->d_name);
			}
		}
		closedir(d);
		assert_non_null(aside);
		moved = read_whole_file(aside, &moved_len);
		assert_int_equal(moved_len, before_len);
		assert_memory_equal(moved, before, before_len);
		aside_wal = xasprintf("%s-wal", aside);
		assert_int_equal(access(aside_wal, F_OK), 0);
		free(before);
		free(moved);
		free(aside);
		free(aside_wal);
		free(wal);
		remove_database(dir, path);
	}
}

static int
setup(void **state)
{
	(void)state;
	pods = resource_find("pods");
	replicasets = resource_find("replicasets");
	return pods == NULL || replicasets == NULL;
}

/* A PartialObjectMetadata of a metadata resource, as a metadata LIST or WATCH sends it. */
static cJSON *
make_meta(const char *uid, const char *ns, const char *name, const char *rv,
    const char *meta)
{
	char *text = xasprintf("{\"apiVersion\":\"meta.k8s.io/v1\",\"kind\":"
	    "\"PartialObjectMetadata\",\"metadata\":{\"uid\":\"%s\",%s%s%s\"name\":\"%s\","
	    "\"resourceVersion\":\"%s\"%s%s}}", uid, *ns ? "\"namespace\":\"" : "", ns,
	    *ns ? "\"," : "", name, rv, *meta ? "," : "", meta);
	cJSON *obj = cJSON_Parse(text);

	assert_non_null(obj);
	free(text);
	return obj;
}

/* namespaces, configmaps, serviceaccounts and nodes are kept whole in cache_objects;
 * each keeps its own rows there, and the objects view and the owner graph
 * see them with their fixed api_resources rows (schema 006). */
/* Every resource of resource_all kept in cache_objects has its fixed api_resources row, as
 * its apiVersion, kind and scope say, so that the objects view (and the garbage
 * collector's graph) sees its objects whatever discovery says. */
static void
every_typed_resource_in_cache_objects_is_in_the_objects_view(void **state)
{
	struct store *s = open_memory();
	char *sql;

	(void)state;
	for (int i = 0; i < resource_count; i++) {
		const struct resource *r = resource_all[i];

		if (!resource_in_objects(r))
			continue;
		sql = xasprintf("SELECT count(*) FROM api_resources WHERE resource = ?1 AND "
		    "api_version = '%s' AND kind = '%s' AND namespaced = %d AND served",
		    r->api_version, r->kind, r->namespaced);
		if (query_int(s, sql, r->name) != 1)
			fail_msg("%s has no api_resources row as %s %s", r->name, r->api_version,
			    r->kind);
		free(sql);
	}
	store_close(s);
}

static void
core_resources_live_in_cache_objects_whole_or_by_metadata(void **state)
{
	struct store *s = open_memory();
	const struct resource *nss = resource_find("namespaces");
	const struct resource *cms = resource_find("configmaps");
	const struct resource *sas = resource_find("serviceaccounts");
	const struct resource *nodes = resource_find("nodes");
	cJSON *ns = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
	    "\"metadata\":{\"name\":\"team\",\"uid\":\"u-ns\",\"resourceVersion\":\"1\","
	    "\"annotations\":{\"owner\":\"ops\"}},\"spec\":{\"finalizers\":[\"kubernetes\"]},"
	    "\"status\":{\"phase\":\"Active\"}}");
	cJSON *cm = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	    "\"metadata\":{\"name\":\"kube-root-ca.crt\",\"namespace\":\"team\","
	    "\"uid\":\"u-cm\",\"resourceVersion\":\"2\"},\"data\":{\"ca.crt\":\"PEM\"}}");
	enum store_change change;
	char *error = NULL;

	(void)state;
	assert_non_null(nss);
	assert_non_null(nodes);
	assert_false(nss->metadata_only);
	assert_false(nss->namespaced);
	assert_false(cms->metadata_only);
	assert_false(sas->metadata_only);	/* the legacy token cleaner reads secrets */
	assert_false(nodes->metadata_only);
	assert_true(resource_in_objects(nss) && resource_in_objects(nodes));
	assert_false(resource_in_objects(pods));
	/* Discovery's resource of the same group and plural is the typed one. */
	assert_ptr_equal(resource_metadata("", "v1", "configmaps", "ConfigMap", 1), cms);
	assert_ptr_equal(resource_metadata("", "v1", "nodes", "Node", 0), nodes);

	assert_int_equal(upsert(s, nss, ns, 1), STORE_ADDED);
	assert_int_equal(upsert(s, cms, cm, 1), STORE_ADDED);
	assert_int_equal(upsert(s, sas, make_meta("u-sa", "team", "default", "3",
	    "\"annotations\":{\"a\":\"b\"}"), 1), STORE_ADDED);
	assert_int_equal(upsert(s, nodes, make_meta("u-node", "", "kwok-0", "4", ""), 1),
	    STORE_ADDED);
	/* Whole bodies keep spec, status, data and annotations. */
	assert_int_equal(query_int(s, "SELECT count(*) FROM cache_objects WHERE resource = "
	    "'namespaces' AND json_extract(body, '$.spec.finalizers[0]') = 'kubernetes' AND "
	    "json_extract(body, '$.status.phase') = 'Active' AND "
	    "json_extract(body, '$.metadata.annotations.owner') = 'ops'", NULL), 1);
	assert_int_equal(query_int(s, "SELECT count(*) FROM cache_objects WHERE resource = "
	    "'configmaps' AND json_extract(body, '$.data.\"ca.crt\"') = 'PEM'", NULL), 1);
	assert_int_equal(query_int(s, "SELECT count(*) FROM cache_objects WHERE resource = "
	    "'serviceaccounts' AND json_extract(body, '$.metadata.annotations.a') = 'b'",
	    NULL), 1);
	for (const struct resource *const *r = (const struct resource *const[]){ nss, cms,
	    sas, nodes, NULL }; *r != NULL; r++)
		assert_int_equal(store_count(s, *r), 1);
	assert_int_equal(query_int(s, "SELECT count(*) FROM objects WHERE (kind, name, "
	    "namespaced) IN (VALUES ('Namespace', 'team', 0), ('ConfigMap', 'kube-root-ca.crt', "
	    "1), ('ServiceAccount', 'default', 1), ('Node', 'kwok-0', 0))", NULL), 4);
	/* Gone, each from its own rows only. */
	assert_int_equal(store_delete_object(s, nodes, "u-node", &change, NULL, &error), 0);
	assert_int_equal(change, STORE_DELETED);
	assert_int_equal(store_count(s, nodes), 0);
	assert_int_equal(store_count(s, nss), 1);
	store_close(s);
}

static void
metadata_resources_share_one_table_and_each_keeps_its_rows(void **state)
{
	struct store *s = open_memory();
	const struct resource *cms = resource_metadata("", "v1", "limitranges", "LimitRange", 1);
	const struct resource *templates = resource_metadata("", "v1", "podtemplates",
	    "PodTemplate", 1);
	const struct resource *crs = resource_metadata("scheduling.k8s.io", "v1",
	    "priorityclasses", "PriorityClass", 0);
	long long epoch;
	int deleted;
	char *error = NULL, *path;

	(void)state;
	assert_true(cms->metadata_only);
	assert_string_equal(crs->name, "priorityclasses.scheduling.k8s.io");
	assert_string_equal(crs->path, "/apis/scheduling.k8s.io/v1/priorityclasses");
	assert_ptr_equal(resource_metadata("", "v1", "limitranges", "LimitRange", 1), cms);
	/* A typed resource is not registered twice. */
	assert_ptr_equal(resource_metadata("apps", "v1", "replicasets", "ReplicaSet", 1),
	    replicasets);
	assert_ptr_equal(resource_find_kind("v1", "PodTemplate"), templates);
	/* Requests address the plural, not the "plural.group" name. */
	path = restops_path(crs, NULL, "admin", NULL, &error);
	assert_string_equal(path, "/apis/scheduling.k8s.io/v1/priorityclasses/admin");
	free(path);
	path = restops_path(resource_metadata("example.com", "v1", "widgets", "Widget", 1), "ns",
	    "w", NULL, &error);
	assert_string_equal(path, "/apis/example.com/v1/namespaces/ns/widgets/w");
	free(path);
	assert_ptr_equal(resource_find_kind("apps/v1beta2", "ReplicaSet"), replicasets);
	assert_null(resource_find_kind("example.com/v1", "PodTemplate"));
	assert_int_equal(store_note_api_resource(s, cms, 1, &error), 0);
	assert_int_equal(store_note_api_resource(s, templates, 1, &error), 0);
	assert_int_equal(store_note_api_resource(s, crs, 1, &error), 0);

	/* The same namespace and name in two resources are two objects. */
	assert_int_equal(upsert(s, cms, make_meta("u-cm", "ns", "same", "1",
	    "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"PodTemplate\","
	    "\"name\":\"same\",\"uid\":\"u-secret\",\"blockOwnerDeletion\":true}]"), 1),
	    STORE_ADDED);
	assert_int_equal(upsert(s, templates, make_meta("u-secret", "ns", "same", "2",
	    "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":"
	    "\"{\\\"data\\\":{\\\"password\\\":\\\"c2VjcmV0\\\"}}\"}"), 1), STORE_ADDED);
	/* A metadata object's annotations (kubectl's copy of a Secret's data) are not kept. */
	assert_int_equal(query_int(s, "SELECT count(*) FROM cache_objects WHERE uid = "
	    "'u-secret' AND instr(body, 'c2VjcmV0') = 0 AND instr(body, 'annotations') = 0",
	    NULL), 1);
	assert_int_equal(upsert(s, crs, make_meta("u-cr", "", "admin", "3",
	    "\"labels\":{\"a\":\"b\"}"), 1), STORE_ADDED);
	assert_int_equal(store_count(s, cms), 1);
	assert_int_equal(store_count(s, templates), 1);
	assert_int_equal(store_count(s, crs), 1);
	assert_int_equal(query_int(s, "SELECT count(*) FROM objects WHERE kind = 'LimitRange' "
	    "AND api_version = 'v1' AND name = 'same'", NULL), 1);
	assert_int_equal(query_int(s, "SELECT count(*) FROM objects WHERE kind = 'PriorityClass' "
	    "AND namespace = '' AND NOT namespaced", NULL), 1);
	/* The owner graph spans resources: the LimitRange's owner is the cached PodTemplate. */
	assert_int_equal(query_int(s, "SELECT count(*) FROM dependents WHERE owner_uid = "
	    "'u-secret' AND dependent_uid = 'u-cm' AND block_owner_deletion", NULL), 1);
	assert_int_equal(query_int(s, "SELECT count(*) FROM dangling_owner_refs", NULL), 0);
	assert_int_equal(query_int(s, "SELECT count(*) FROM labels WHERE key = 'a'", NULL), 0);
	assert_int_equal(query_int(s, "SELECT count(*) FROM object_labels WHERE key = 'a'", NULL), 1);

	/* A relist of the PodTemplates (the first list had epoch 1) removes only them. */
	assert_int_equal(store_begin_list(s, templates, &epoch, &error), 0);
	assert_int_equal(store_begin_list(s, templates, &epoch, &error), 0);
	assert_int_equal(epoch, 2);
	assert_int_equal(store_delete_unlisted(s, templates, epoch, 100, NULL, NULL, &deleted,
	    &error), 0);
	assert_int_equal(deleted, 1);
	assert_int_equal(store_count(s, templates), 0);
	assert_int_equal(store_count(s, cms), 1);
	/* Its owner gone, the LimitRange's reference dangles. */
	assert_int_equal(query_int(s, "SELECT count(*) FROM dangling_owner_refs WHERE "
	    "dependent_uid = 'u-cm' AND owner_kind = 'PodTemplate'", NULL), 1);

	/* A resource discovery no longer serves is forgotten whole. */
	assert_int_equal(store_forget_resource(s, crs, &error), 0);
	assert_int_equal(store_count(s, crs), 0);
	assert_int_equal(query_int(s, "SELECT count(*) FROM object_labels", NULL), 0);
	assert_int_equal(query_int(s, "SELECT served FROM api_resources WHERE resource = "
	    "'priorityclasses.scheduling.k8s.io'", NULL), 0);
	assert_int_equal(store_count(s, cms), 1);
	assert_int_not_equal(store_forget_resource(s, pods, &error), 0);
	assert_non_null(strstr(error, "not cached by its metadata"));
	free(error);
	store_close(s);
	resource_metadata_free_all();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(new_database_is_migrated_to_the_newest_schema),
		cmocka_unit_test(database_file_is_created_0600_in_wal_mode),
		cmocka_unit_test(foreign_database_is_refused_and_left_alone),
		cmocka_unit_test(newer_schema_version_is_refused),
		cmocka_unit_test(existing_0644_database_wal_and_shm_are_made_0600),
		cmocka_unit_test(wal_that_is_a_symbolic_link_is_refused_and_its_target_left_alone),
		cmocka_unit_test(second_writer_of_a_database_is_refused_with_the_holders_pid),
		cmocka_unit_test(readers_are_not_blocked_by_the_writer),
		cmocka_unit_test(lock_file_left_by_a_killed_writer_does_not_block),
		cmocka_unit_test(file_that_is_not_a_cache_is_refused_and_left_as_it_was),
		cmocka_unit_test(rebuild_cache_moves_the_file_aside_and_starts_a_new_cache),
		cmocka_unit_test(pod_columns_are_copied_and_managed_fields_dropped),
		cmocka_unit_test(ready_column_follows_the_ready_condition),
		cmocka_unit_test(deletion_cost_accepts_only_int32),
		cmocka_unit_test(replicas_default_to_one_when_unset),
		cmocka_unit_test(labels_and_owner_references_are_indexed),
		cmocka_unit_test(changed_labels_and_owners_replace_the_index_rows),
		cmocka_unit_test(hostile_label_keys_and_values_are_stored_verbatim),
		cmocka_unit_test(same_resource_version_is_unchanged_but_marked_listed),
		cmocka_unit_test(update_returns_the_previous_body),
		cmocka_unit_test(delete_removes_the_row_and_its_index_rows),
		cmocka_unit_test(recreated_object_replaces_the_old_uid),
		cmocka_unit_test(object_without_uid_is_refused_and_nothing_is_lost),
		cmocka_unit_test(relist_removes_unlisted_rows_in_bounded_chunks),
		cmocka_unit_test(resource_version_is_kept_per_informer),
		cmocka_unit_test(rolled_back_transaction_leaves_no_trace),
		cmocka_unit_test(object_ids_are_unique_across_tables_and_kept_by_updates),
		cmocka_unit_test(version_2_cache_keeps_its_labels_and_owners),
		cmocka_unit_test(migration_gives_back_the_old_tables_pages),
		cmocka_unit_test(text_is_stored_as_received_less_managed_fields),
		cmocka_unit_test(first_list_inserts_and_a_repeated_object_still_ends_as_one_row),
		cmocka_unit_test(parse_object_drops_what_the_resource_does_not_keep_and_refuses_bad_text),
		cmocka_unit_test(secret_data_never_reaches_the_cache),
		cmocka_unit_test(metadata_resources_share_one_table_and_each_keeps_its_rows),
		cmocka_unit_test(core_resources_live_in_cache_objects_whole_or_by_metadata),
		cmocka_unit_test(every_typed_resource_in_cache_objects_is_in_the_objects_view),
	};
	return cmocka_run_group_tests_name("store", tests, setup, NULL);
}
