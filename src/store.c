/*
 * store.c - the SQLite cache: opening it, migrating its schema, writing objects.
 *
 * One connection, used from the loop thread only. The file is in WAL mode so that any
 * number of sqlite3 shells can read it while sqlkcm writes; synchronous=NORMAL, which in
 * WAL mode loses no committed transaction when the process dies (only on power loss may
 * the last ones be rolled back, never corrupting the file).
 *
 * Schema: the files in schema/ are embedded at build time (src/schema.h). A database at
 * PRAGMA user_version N gets every file numbered above N applied, each in its own
 * transaction. The application_id marks the file as sqlkcm's, so that --db pointed at some
 * other SQLite file is refused instead of altered.
 *
 * Writes: an object is one row in its resource's table (see resource.c for the typed
 * columns) plus rows in object_labels and object_owners, keyed by the object's id: an
 * integer unique across the tables, handed out in increasing order (last_id) so that a
 * new object's rows are appended rather than scattered by its random uid (schema/003).
 * Those index rows are rewritten only when the labels or ownerReferences changed
 * (index_hash), since most updates are status updates. Deleting a row deletes its index
 * rows by trigger, whoever deletes it. Every statement is prepared once and kept; every
 * value is bound.
 *
 * The file (opened for writing; ":memory:" has none): one sqlkcm writes a cache at a time.
 * It holds an flock() on FILE-lock (beside the database file, symbolic links resolved as
 * SQLite resolves them) for as long as the store is open; a second writer is refused with
 * the holder's pid, which the lock file holds. Readers (sqlite3, `sqlkcm shell`, `plan`)
 * never take it. A separate file rather than the database itself because SQLite's locks
 * are POSIX fcntl locks, which a process loses when it closes any descriptor of the file,
 * and because the lock must outlive the database file when --rebuild-cache moves it
 * aside. The kernel drops an flock with its process, so a lock file left by kill -9
 * blocks nobody; it stays in place (unlinking it would race with a starting writer).
 * Under the lock, the database file is created 0600, or made 0600 with its -wal and -shm
 * files if others could read them; SQLite creates -wal and -shm with the database file's
 * mode. A file that is not an sqlkcm cache (not SQLite, or another program's database) is
 * refused, or with rebuild_cache moved aside to FILE.corrupt-TIME (-wal and -shm with it)
 * and replaced by a new cache.
 *
 * Metrics (store_register_metrics): the object counts and the file sizes are computed when
 * /metrics is rendered, by the loop thread like every other use of the connection; each
 * COMMIT is timed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"
#include "jsonarena.h"
#include "jsonspan.h"
#include "schema.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

/* PRAGMA application_id of an sqlkcm database: "sqkc". */
#define STORE_APPLICATION_ID 0x73716b63

/* The statements kept for one resource's table. */
struct store_table {
	sqlite3_stmt *select_row;	/* resource_version, index_hash, body, id by uid */
	sqlite3_stmt *upsert;
	sqlite3_stmt *touch_epoch;
	sqlite3_stmt *delete_renamed;	/* same namespace/name, another uid */
	sqlite3_stmt *delete_row;
	sqlite3_stmt *delete_unlisted;
	sqlite3_stmt *count;
	sqlite3_stmt *insert;		/* a new row, no upsert: see store_begin_list */
	sqlite3_stmt *any_row;		/* does the table hold any of the resource's rows */
	long long empty_epoch;		/* the list of this epoch began with none of them */
};

struct store {
	sqlite3 *db;
	int lock_fd;			/* FILE-lock, flock()ed while open; -1: none */
	struct store_table *tables;	/* one per resource, by resource->index */
	int ntables;			/* grows as metadata resources appear */
	sqlite3_int64 last_id;		/* the largest object id given out */
	sqlite3_stmt *labels_delete;
	sqlite3_stmt *labels_insert;
	sqlite3_stmt *owners_delete;
	sqlite3_stmt *owners_insert;
	sqlite3_stmt *informer_get;
	sqlite3_stmt *informer_set_rv;
	sqlite3_stmt *informer_begin_list;
	sqlite3_stmt *informer_finish_list;
	int writes_failing;		/* a write failed and no commit has worked since */
	/* Metrics; NULL without. */
	struct store_object_count *object_counts;	/* one per resource */
	struct metrics_series **objects;		/* one per resource */
	struct metrics_series *database_size;
	struct metrics_series *wal_size;
	struct metrics_series *commit_duration;
	struct metrics_series *write_failures;
};

/* What a sqlkcm_store_objects series counts. */
struct store_object_count {
	struct store *store;
	const struct resource *resource;
};

static void store_unregister_metrics(struct store *s);

/* Sets *error to what SQLite said about the last call, prefixed by what was being done. */
static int
store_error(struct store *s, char **error, const char *what)
{
	return error_set(error, "store: %s: %s", what, sqlite3_errmsg(s->db));
}

/* Prepares sql once, for the life of the store. */
static int
store_prepare(struct store *s, const char *sql, sqlite3_stmt **stmt, char **error)
{
	if (*stmt != NULL)
		return 0;
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL) !=
	    SQLITE_OK)
		return error_set(error, "store: preparing \"%.60s...\": %s", sql,
		    sqlite3_errmsg(s->db));
	return 0;
}

/* Runs a statement that returns no rows to its end, and resets it. */
static int
store_step_done(struct store *s, sqlite3_stmt *stmt, char **error, const char *what)
{
	int rc = sqlite3_step(stmt);

	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_error(s, error, what);
	return 0;
}

/* Runs SQL text with no parameters (pragmas, migrations). */
static int
store_exec(struct store *s, const char *sql, char **error, const char *what)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		error_set(error, "store: %s: %s", what, msg != NULL ? msg : "unknown error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* Returns the integer a one-value pragma reports. */
static int
store_pragma_int(struct store *s, const char *pragma, long long *value, char **error)
{
	sqlite3_stmt *stmt;
	int rc;

	if (sqlite3_prepare_v2(s->db, pragma, -1, &stmt, NULL) != SQLITE_OK)
		return store_error(s, error, pragma);
	rc = sqlite3_step(stmt);
	*value = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
	sqlite3_finalize(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_error(s, error, pragma);
	return 0;
}

/* After a migration that rebuilt tables, gives the file back the pages the old ones held
 * when they are a quarter of it or more (VACUUM, once; a new database has nothing to give
 * back). */
static int
store_compact(struct store *s, const char *path, char **error)
{
	long long pages, free_pages;

	if (store_pragma_int(s, "PRAGMA page_count", &pages, error) != 0 ||
	    store_pragma_int(s, "PRAGMA freelist_count", &free_pages, error) != 0)
		return -1;
	if (free_pages * 4 < pages)
		return 0;
	log_info("store: compacting %s: %lld of its %lld pages are free after the migration",
	    path, free_pages, pages);
	if (sqlite3_exec(s->db, "VACUUM", NULL, NULL, NULL) != SQLITE_OK)
		/* A reader holding the file, say: the free pages are reused as it grows. */
		log_warning("store: cannot compact %s: %s (the migration stands; run VACUUM "
		    "later to give the space back)", path, sqlite3_errmsg(s->db));
	return 0;
}

/* Brings the schema to the newest version, refusing a database that is not sqlkcm's or
 * that a newer sqlkcm wrote; STORE_OPEN_NOT_A_CACHE for one that is not sqlkcm's. Only a
 * file found to be ours (or new) is put in WAL mode, which rewrites its header. */
static int
store_migrate(struct store *s, const char *path, int read_only, char **error)
{
	long long version, app_id, tables;
	int newest = schema_migrations[schema_migrations_count - 1].version;

	if (store_pragma_int(s, "PRAGMA user_version", &version, error) != 0 ||
	    store_pragma_int(s, "PRAGMA application_id", &app_id, error) != 0 ||
	    store_pragma_int(s, "SELECT count(*) FROM sqlite_schema", &tables, error) != 0)
		return -1;
	if (app_id != STORE_APPLICATION_ID && (app_id != 0 || tables != 0)) {
		error_set(error, "%s is not an sqlkcm database (application_id %lld, %lld schema "
		    "objects): refusing to change it", path, app_id, tables);
		return STORE_OPEN_NOT_A_CACHE;
	}
	if (app_id == 0 && version != 0) {
		/* No table, but another program numbered its schema. */
		error_set(error, "%s is not an sqlkcm database (user_version %lld, no sqlkcm "
		    "application_id): refusing to change it", path, version);
		return STORE_OPEN_NOT_A_CACHE;
	}
	if (version > newest)
		return error_set(error, "%s has schema version %lld, newer than this sqlkcm "
		    "knows (%d): use a newer sqlkcm or a new database", path, version, newest);
	if (version == 0 && !read_only && strcmp(path, ":memory:") != 0)
		log_info("store: creating a new cache in %s", path);
	if (!read_only && store_exec(s, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
	    error, path) != 0)
		return -1;
	if (read_only) {
		if (version < newest)
			return error_set(error, "%s has schema version %lld, older than %d; "
			    "open it once read-write to migrate it", path, version, newest);
		return 0;
	}
	for (size_t i = 0; i < schema_migrations_count; i++) {
		const struct schema_migration *m = &schema_migrations[i];
		char *pragmas;
		int rc;

		if (m->version <= version)
			continue;
		if (store_exec(s, "BEGIN IMMEDIATE", error, "starting a migration") != 0)
			return -1;
		pragmas = xasprintf("PRAGMA user_version = %d; PRAGMA application_id = %d;",
		    m->version, STORE_APPLICATION_ID);
		rc = store_exec(s, m->sql, error, m->name);
		if (rc == 0)
			rc = store_exec(s, pragmas, error, m->name);
		free(pragmas);
		if (rc == 0)
			rc = store_exec(s, "COMMIT", error, m->name);
		if (rc != 0) {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
		if (version > 0)	/* an existing cache: say so; a new one is no news */
			log_info("store: %s migrated to schema version %d (%s)", path,
			    m->version, m->name);
	}
	return version > 0 && version < newest ? store_compact(s, path, error) : 0;
}

/* --- the file ------------------------------------------------------------------------ */

/* The database file's path as SQLite sees it, symbolic links resolved (SQLite puts -wal and
 * -shm beside the link's target); for a file not created yet, its directory's. Malloc'd;
 * NULL with *error set. */
static char *
store_resolve_path(const char *path, char **error)
{
	char resolved[PATH_MAX], *dir, *slash, *out;
	struct stat st;

	if (realpath(path, resolved) != NULL)
		return xstrdup(resolved);
	if (errno != ENOENT || lstat(path, &st) == 0) {
		error_set(error, "cannot open database %s: %s", path,
		    errno == ENOENT ? "a symbolic link to a missing file" : strerror(errno));
		return NULL;
	}
	slash = strrchr(path, '/');
	dir = slash == NULL ? xstrdup(".") : slash == path ? xstrdup("/") :
	    xasprintf("%.*s", (int)(slash - path), path);
	if (realpath(dir, resolved) == NULL) {
		error_set(error, "cannot open database %s: %s: %s", path, dir, strerror(errno));
		free(dir);
		return NULL;
	}
	free(dir);
	out = xasprintf("%s/%s", strcmp(resolved, "/") == 0 ? "" : resolved,
	    slash == NULL ? path : slash + 1);
	return out;
}

/* Takes the writer's lock on FILE-lock for path (resolved: its resolved path) and writes
 * our pid into it; *fd stays open, holding the lock, until store_close. Fails, naming the
 * holder's pid when the file holds one, when another sqlkcm holds it. */
static int
store_lock(const char *path, const char *resolved, int *fd, char **error)
{
	char *lock_path = xasprintf("%s-lock", resolved), text[32];
	ssize_t n;
	long pid;
	char *end;

	*fd = open(lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (*fd < 0) {
		error_set(error, "cannot lock %s: %s: %s", path, lock_path, strerror(errno));
		free(lock_path);
		return -1;
	}
	free(lock_path);
	if (flock(*fd, LOCK_EX | LOCK_NB) == 0) {
		if (ftruncate(*fd, 0) == 0)
			dprintf(*fd, "%ld\n", (long)getpid());
		return 0;
	}
	if (errno != EWOULDBLOCK) {
		error_set(error, "cannot lock %s: %s", path, strerror(errno));
	} else {
		n = pread(*fd, text, sizeof text - 1, 0);
		text[n > 0 ? n : 0] = '\0';
		pid = strtol(text, &end, 10);
		if (pid > 0 && end != text && (*end == '\n' || *end == '\0'))
			error_set(error, "%s is in use by another sqlkcm (pid %ld); only one daemon "
			    "may write a cache", path, pid);
		else
			error_set(error, "%s is in use by another sqlkcm; only one daemon may write "
			    "a cache", path);
	}
	close(*fd);
	*fd = -1;
	return -1;
}

/* Makes the open file fd (named file) 0600 if group or others may use it, saying so once. */
static int
store_make_private(int fd, const struct stat *st, const char *file, char **error)
{
	if ((st->st_mode & 077) == 0)
		return 0;
	if (fchmod(fd, 0600) != 0)
		return error_set(error, "cannot make %s private (mode 0600): %s", file,
		    strerror(errno));
	log_info("store: %s was mode %04o: made it 0600 (the cache holds the cluster's objects)",
	    file, (unsigned)(st->st_mode & 07777));
	return 0;
}

/* Before SQLite opens it: creates the database file 0600 if it does not exist, refuses a
 * file that is not an SQLite database (STORE_OPEN_NOT_A_CACHE), and makes the file and
 * its -wal and -shm files 0600. Called with the writer's lock held: the descriptors it
 * closes are no SQLite connection's of this process. */
static int
store_prepare_file(const char *path, const char *resolved, char **error)
{
	static const char *const sidecars[] = { "-wal", "-shm" };
	static const char magic[16] = "SQLite format 3";
	char header[sizeof magic];
	struct stat st;
	ssize_t n;
	int fd, rc;

	fd = open(resolved, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return error_set(error, "cannot open database %s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return error_set(error, "cannot open database %s: not a regular file", path);
	}
	n = pread(fd, header, sizeof header, 0);
	if (st.st_size > 0 && (n != (ssize_t)sizeof header ||
	    memcmp(header, magic, sizeof magic) != 0)) {
		close(fd);
		error_set(error, "%s is not an sqlkcm cache: not an SQLite file (its first bytes "
		    "are not SQLite's header)", path);
		return STORE_OPEN_NOT_A_CACHE;
	}
	rc = store_make_private(fd, &st, path, error);
	close(fd);
	for (size_t i = 0; rc == 0 && i < sizeof sidecars / sizeof sidecars[0]; i++) {
		char *file = xasprintf("%s%s", resolved, sidecars[i]);

		/* O_NOFOLLOW: a link planted as -wal never makes us change another file. */
		fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno != ENOENT)
			rc = error_set(error, "cannot open %s: %s", file, strerror(errno));
		else if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)))
			rc = error_set(error, "cannot open %s: not a regular file", file);
		else if (fd >= 0)
			rc = store_make_private(fd, &st, file, error);
		if (fd >= 0)
			close(fd);
		free(file);
	}
	return rc;
}

/* Moves the database file that is not a cache aside, to FILE.corrupt-TIME, its -wal and
 * -shm files first (a -wal left beside a new file would be applied to it). */
static int
store_move_aside(const char *path, const char *resolved, char **error)
{
	static const char *const files[] = { "-wal", "-shm", "" };
	char *aside = NULL;
	struct stat st;

	for (int i = 0; aside == NULL || lstat(aside, &st) == 0; i++) {
		free(aside);
		aside = i == 0 ? xasprintf("%s.corrupt-%lld", resolved, (long long)time(NULL)) :
		    xasprintf("%s.corrupt-%lld.%d", resolved, (long long)time(NULL), i);
	}
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char *from = xasprintf("%s%s", resolved, files[i]);
		char *to = xasprintf("%s%s", aside, files[i]);
		int rc = rename(from, to);

		if (rc != 0 && errno != ENOENT)
			error_set(error, "cannot move %s aside to %s: %s", from, to,
			    strerror(errno));
		free(from);
		free(to);
		if (rc != 0 && errno != ENOENT) {
			free(aside);
			return -1;
		}
	}
	log_warning("store: moved %s aside to %s; a new cache is rebuilt by listing the "
	    "cluster", path, aside);
	free(aside);
	return 0;
}

/* The parameter of a cache_objects statement that names the resource, bound at each use
 * (store_bind_resource). A numbered one, so that it never shifts the positional ones. */
#define STORE_RESOURCE_PARAM "?20"

/* Binds r's name to a statement of cache_objects (the other tables have no such
 * parameter). */
static void
store_bind_resource(sqlite3_stmt *stmt, const struct resource *r)
{
	int idx = sqlite3_bind_parameter_index(stmt, STORE_RESOURCE_PARAM);

	if (idx > 0)
		sqlite3_bind_text(stmt, idx, r->name, -1, SQLITE_STATIC);
}

/* Builds and prepares the statements of one resource's table. */
static int
store_prepare_table(struct store *s, const struct resource *r, char **error)
{
	struct store_table *t = &s->tables[r->index];
	/* The rows of cache_objects are told apart by their resource column. */
	const char *mine = resource_in_objects(r) ? " AND resource = " STORE_RESOURCE_PARAM :
	    "";
	struct buf cols, params, updates;
	char *sql;
	int rc = 0, n = 0;

	buf_init(&cols);
	buf_init(&params);
	buf_init(&updates);
	buf_append_str(&cols, "uid, namespace, name, resource_version, generation, "
	    "creation_timestamp, deletion_timestamp, list_epoch, index_hash, body, id");
	buf_append_str(&params, "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?");
	buf_append_str(&updates, "namespace = excluded.namespace, name = excluded.name, "
	    "resource_version = excluded.resource_version, generation = excluded.generation, "
	    "creation_timestamp = excluded.creation_timestamp, "
	    "deletion_timestamp = excluded.deletion_timestamp, list_epoch = excluded.list_epoch, "
	    "index_hash = excluded.index_hash, body = excluded.body");
	/* Column names are constants of resource.c, never data. */
	for (const struct resource_column *c = r->columns; c->name != NULL; c++, n++) {
		buf_printf(&cols, ", %s", c->name);
		buf_append_str(&params, ", ?");
		buf_printf(&updates, ", %s = excluded.%s", c->name, c->name);
	}
	if (resource_in_objects(r)) {
		buf_append_str(&cols, ", resource");
		buf_append_str(&params, ", " STORE_RESOURCE_PARAM);
	}
	sql = xasprintf("INSERT INTO %s (%s) VALUES (%s) ON CONFLICT (uid) DO UPDATE SET %s",
	    r->table, cols.data, params.data, updates.data);
	rc = store_prepare(s, sql, &t->upsert, error);
	free(sql);
	if (rc == 0) {
		sql = xasprintf("INSERT INTO %s (%s) VALUES (%s)", r->table, cols.data,
		    params.data);
		rc = store_prepare(s, sql, &t->insert, error);
		free(sql);
	}
	buf_free(&cols);
	buf_free(&params);
	buf_free(&updates);
	if (rc != 0)
		return -1;

	/* Each format names the table as %1$s and ends its conditions with %2$s. */
#define PREPARE(field, fmt) do {					\
	sql = xasprintf(fmt, r->table, mine);				\
	rc = store_prepare(s, sql, &t->field, error);			\
	free(sql);							\
	if (rc != 0)							\
		return -1;						\
} while (0)
	PREPARE(select_row, "SELECT resource_version, index_hash, body, id FROM %1$s "
	    "WHERE uid = ?%2$s");
	PREPARE(touch_epoch, "UPDATE %1$s SET list_epoch = ? WHERE uid = ?%2$s");
	PREPARE(delete_renamed, "DELETE FROM %1$s WHERE namespace = ? AND name = ? "
	    "AND uid <> ?%2$s");
	PREPARE(delete_row, "DELETE FROM %1$s WHERE uid = ?%2$s RETURNING body");
	PREPARE(delete_unlisted, "DELETE FROM %1$s WHERE uid IN "
	    "(SELECT uid FROM %1$s WHERE list_epoch < ?1%2$s LIMIT ?2) RETURNING uid, body");
	PREPARE(count, "SELECT count(*) FROM %1$s WHERE 1%2$s");
	PREPARE(any_row, "SELECT 1 FROM %1$s WHERE 1%2$s LIMIT 1");
#undef PREPARE
	return 0;
}

/* Returns r's statements, preparing them on first use (a metadata resource registered
 * after the store opened); NULL with *error set when they cannot be prepared. */
static struct store_table *
store_table_of(struct store *s, const struct resource *r, char **error)
{
	if (r->index >= s->ntables) {
		int n = resource_index_count();

		s->tables = xrealloc(s->tables, (size_t)n * sizeof *s->tables);
		memset(s->tables + s->ntables, 0, (size_t)(n - s->ntables) * sizeof *s->tables);
		s->ntables = n;
	}
	if (s->tables[r->index].upsert == NULL && store_prepare_table(s, r, error) != 0)
		return NULL;
	return &s->tables[r->index];
}

/* Prepares the statements every resource shares. */
static int
store_prepare_shared(struct store *s, char **error)
{
	if (store_prepare(s, "DELETE FROM object_labels WHERE object_id = ?", &s->labels_delete,
		error) != 0 ||
	    store_prepare(s, "INSERT OR REPLACE INTO object_labels (object_id, key, value) "
		"VALUES (?, ?, ?)", &s->labels_insert, error) != 0 ||
	    store_prepare(s, "DELETE FROM object_owners WHERE object_id = ?", &s->owners_delete,
		error) != 0 ||
	    store_prepare(s, "INSERT OR REPLACE INTO object_owners (object_id, owner_uid, "
		"controller, kind, name, api_version, block_owner_deletion) "
		"VALUES (?, ?, ?, ?, ?, ?, ?)",
		&s->owners_insert, error) != 0 ||
	    store_prepare(s, "SELECT resource_version, list_epoch, synced FROM informers "
		"WHERE resource = ?", &s->informer_get, error) != 0 ||
	    store_prepare(s, "INSERT INTO informers (resource, resource_version, updated_at) "
		"VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) ON CONFLICT (resource) DO "
		"UPDATE SET resource_version = ?2, updated_at = excluded.updated_at",
		&s->informer_set_rv, error) != 0 ||
	    store_prepare(s, "INSERT INTO informers (resource, list_epoch) VALUES (?1, 1) "
		"ON CONFLICT (resource) DO UPDATE SET list_epoch = list_epoch + 1 "
		"RETURNING list_epoch", &s->informer_begin_list, error) != 0 ||
	    store_prepare(s, "UPDATE informers SET resource_version = ?2, synced = 1, "
		"updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE resource = ?1",
		&s->informer_finish_list, error) != 0)
		return -1;
	return 0;
}

/* Reads the largest object id the cache tables hold, the last one given out that is
 * still in use; new objects get ids above it. */
static int
store_read_last_id(struct store *s, char **error)
{
	struct buf sql;
	long long last;
	int rc;

	buf_init(&sql);
	buf_append_str(&sql, "SELECT coalesce(max(m), 0) FROM (");
	for (int i = 0; i < resource_count; i++) {
		if (!resource_in_objects(resource_all[i]))
			buf_printf(&sql, "SELECT max(id) AS m FROM %s UNION ALL ",
			    resource_all[i]->table);
	}
	buf_append_str(&sql, "SELECT max(id) FROM cache_objects)");
	rc = store_pragma_int(s, sql.data, &last, error);
	buf_free(&sql);
	s->last_id = last;
	return rc;
}

/* Opens the SQLite connection of a new store on path, migrates it and prepares its
 * statements; resolved (NULL for ":memory:" or read-only) is the file to prepare first. */
static int
store_connect(const char *path, const char *resolved, const struct store_options *options,
    struct store **out, char **error)
{
	struct store *s;
	int flags, rc;
	char *pragmas;

	*out = NULL;
	if (resolved != NULL && (rc = store_prepare_file(path, resolved, error)) != 0)
		return rc;
	flags = options->read_only ? SQLITE_OPEN_READONLY :
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	s = xcalloc(1, sizeof *s);
	s->lock_fd = -1;
	s->ntables = resource_count;
	s->tables = xcalloc((size_t)s->ntables, sizeof *s->tables);
	if (sqlite3_open_v2(path, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		error_set(error, "cannot open database %s: %s", path,
		    s->db != NULL ? sqlite3_errmsg(s->db) : "out of memory");
		store_close(s);
		return -1;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, 5000);
	/* 16 KiB pages hold several ~2 KB object rows each where 4 KiB pages hold one or two
	 * and spill to overflow pages: in bench/store_ingest, 50% faster writes and a 37%
	 * smaller file. It only takes effect on a new database, before WAL mode is set
	 * (store_migrate). */
	pragmas = xasprintf("PRAGMA page_size = 16384; PRAGMA cache_size = -%d; "
	    "PRAGMA temp_store = MEMORY; PRAGMA foreign_keys = OFF;",
	    options->cache_size_kib > 0 ? options->cache_size_kib : 8192);
	rc = store_exec(s, pragmas, error, path);
	free(pragmas);
	if (rc == 0)
		rc = store_migrate(s, path, options->read_only, error);
	if (rc == -1 && ((sqlite3_errcode(s->db) & 0xff) == SQLITE_NOTADB ||
	    (sqlite3_errcode(s->db) & 0xff) == SQLITE_CORRUPT)) {
		/* The first read of the file found no SQLite database in it. */
		free(*error);
		*error = NULL;
		error_set(error, "%s is not an sqlkcm cache: %s", path, sqlite3_errmsg(s->db));
		rc = STORE_OPEN_NOT_A_CACHE;
	}
	if (rc != 0) {
		store_close(s);
		return rc;
	}
	if (!options->read_only) {
		if (store_prepare_shared(s, error) != 0 || store_read_last_id(s, error) != 0) {
			store_close(s);
			return -1;
		}
		for (int i = 0; i < resource_count; i++) {
			if (store_prepare_table(s, resource_all[i], error) != 0) {
				store_close(s);
				return -1;
			}
		}
	}
	*out = s;
	return 0;
}

int
store_open(const char *path, const struct store_options *options, struct store **out,
    char **error)
{
	struct store_options defaults = { 0, 0, 0 };
	char *resolved = NULL;
	int lock_fd = -1, rc;

	*out = NULL;
	if (options == NULL)
		options = &defaults;
	if (strcmp(path, ":memory:") != 0 && !options->read_only) {
		resolved = store_resolve_path(path, error);
		if (resolved == NULL || store_lock(path, resolved, &lock_fd, error) != 0) {
			free(resolved);
			return -1;
		}
	}
	rc = store_connect(path, resolved, options, out, error);
	if (rc == STORE_OPEN_NOT_A_CACHE && options->rebuild_cache) {
		log_warning("store: %s", *error);
		free(*error);
		*error = NULL;
		rc = store_move_aside(path, resolved, error);
		if (rc == 0)
			rc = store_connect(path, resolved, options, out, error);
	}
	free(resolved);
	if (rc != 0) {
		if (lock_fd >= 0)
			close(lock_fd);
		return rc;
	}
	(*out)->lock_fd = lock_fd;
	return 0;
}

int
store_checkpoint(struct store *s, char **error)
{
	int log_frames = -1, checkpointed = -1;
	int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log_frames,
	    &checkpointed);

	if (rc != SQLITE_OK)
		return error_set(error, "store: checkpointing the write-ahead log: %s",
		    sqlite3_errmsg(s->db));
	return 0;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	store_unregister_metrics(s);
	if (s->db != NULL) {
		/* Finalizes every statement, the tables' and the shared ones alike. */
		sqlite3_stmt *stmt;
		while ((stmt = sqlite3_next_stmt(s->db, NULL)) != NULL)
			sqlite3_finalize(stmt);
		sqlite3_close(s->db);
	}
	/* After SQLite let go of the file: the next writer may start. */
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s->tables);
	free(s);
}

int
store_prepare_statements(sqlite3 *db, const char *const *sql, int n, sqlite3_stmt **stmts,
    const char *what, char **error)
{
	for (int i = 0; i < n; i++) {
		if (sqlite3_prepare_v3(db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &stmts[i],
		    NULL) != SQLITE_OK)
			return error_set(error, "%s: %s", what, sqlite3_errmsg(db));
	}
	return 0;
}

void
store_finalize_statements(sqlite3_stmt **stmts, int n)
{
	for (int i = 0; i < n; i++)
		sqlite3_finalize(stmts[i]);
}

sqlite3 *
store_db(struct store *s)
{
	return s->db;
}

int
store_begin(struct store *s, char **error)
{
	if (store_exec(s, "BEGIN IMMEDIATE", error, "begin") != 0) {
		store_write_failed(s);
		return -1;
	}
	return 0;
}

int
store_commit(struct store *s, char **error)
{
	double started = s->commit_duration != NULL ? time_monotonic() : 0;

	if (store_exec(s, "COMMIT", error, "commit") != 0) {
		/* Counted by the rollback that follows. */
		s->writes_failing = 1;
		return -1;
	}
	s->writes_failing = 0;
	if (s->commit_duration != NULL)
		metrics_histogram_observe(s->commit_duration, time_monotonic() - started);
	return 0;
}

void
store_rollback(struct store *s)
{
	store_write_failed(s);
	store_abandon(s);
}

void
store_abandon(struct store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

void
store_write_failed(struct store *s)
{
	s->writes_failing = 1;
	metrics_counter_add(s->write_failures, 1);
}

int
store_writes_failing(const struct store *s)
{
	return s->writes_failing;
}

/* --- objects ------------------------------------------------------------------------- */

/* FNV-1a, 64 bits, continued from h over len bytes. */
static uint64_t
hash_bytes(uint64_t h, const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Adds a string (or a marker for "absent") and a separator to the hash. */
static uint64_t
hash_string(uint64_t h, const cJSON *v)
{
	if (cJSON_IsString(v) && v->valuestring != NULL)
		h = hash_bytes(h, v->valuestring, strlen(v->valuestring) + 1);
	else
		h = hash_bytes(h, "\x01", 2);
	return h;
}

/* The hash of everything the labels and owner_refs rows are made from. */
static sqlite3_int64
store_index_hash(const cJSON *labels, const cJSON *owners)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const cJSON *item;

	if (!cJSON_IsObject(labels))
		labels = NULL;
	if (!cJSON_IsArray(owners))
		owners = NULL;
	cJSON_ArrayForEach(item, labels) {
		h = hash_bytes(h, item->string, strlen(item->string) + 1);
		h = hash_string(h, item);
	}
	h = hash_bytes(h, "\x02", 1);
	cJSON_ArrayForEach(item, owners) {
		h = hash_string(h, cJSON_GetObjectItemCaseSensitive(item, "uid"));
		h = hash_string(h, cJSON_GetObjectItemCaseSensitive(item, "kind"));
		h = hash_string(h, cJSON_GetObjectItemCaseSensitive(item, "name"));
		h = hash_string(h, cJSON_GetObjectItemCaseSensitive(item, "apiVersion"));
		h = hash_bytes(h, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item,
		    "controller")) ? "c" : "-", 1);
		h = hash_bytes(h, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item,
		    "blockOwnerDeletion")) ? "b" : "-", 1);
	}
	return (sqlite3_int64)h;
}

/* Replaces the object_labels and object_owners rows of the object with id (a new object
 * has none: fresh skips deleting them, the bulk of an initial sync). Labels that are not
 * strings and owner references without a uid cannot be indexed and are left out (the body
 * keeps them). */
static int
store_write_index(struct store *s, sqlite3_int64 id, const cJSON *labels,
    const cJSON *owners, int fresh, char **error)
{
	const cJSON *item;

	if (!fresh) {
		sqlite3_bind_int64(s->labels_delete, 1, id);
		if (store_step_done(s, s->labels_delete, error, "deleting labels") != 0)
			return -1;
		sqlite3_bind_int64(s->owners_delete, 1, id);
		if (store_step_done(s, s->owners_delete, error, "deleting owner references") != 0)
			return -1;
	}
	if (!cJSON_IsObject(labels))
		labels = NULL;
	if (!cJSON_IsArray(owners))
		owners = NULL;
	cJSON_ArrayForEach(item, labels) {
		if (!cJSON_IsString(item) || item->valuestring == NULL)
			continue;
		sqlite3_bind_int64(s->labels_insert, 1, id);
		sqlite3_bind_text(s->labels_insert, 2, item->string, -1, SQLITE_STATIC);
		sqlite3_bind_text(s->labels_insert, 3, item->valuestring, -1, SQLITE_STATIC);
		if (store_step_done(s, s->labels_insert, error, "inserting a label") != 0)
			return -1;
	}
	cJSON_ArrayForEach(item, owners) {
		const cJSON *owner_uid = cJSON_GetObjectItemCaseSensitive(item, "uid");
		const char *fields[] = { "kind", "name", "apiVersion" };

		if (!cJSON_IsString(owner_uid) || owner_uid->valuestring == NULL)
			continue;
		sqlite3_bind_int64(s->owners_insert, 1, id);
		sqlite3_bind_text(s->owners_insert, 2, owner_uid->valuestring, -1, SQLITE_STATIC);
		sqlite3_bind_int(s->owners_insert, 3,
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "controller")));
		for (int i = 0; i < 3; i++) {
			const cJSON *f = cJSON_GetObjectItemCaseSensitive(item, fields[i]);
			sqlite3_bind_text(s->owners_insert, 4 + i,
			    cJSON_IsString(f) ? f->valuestring : "", -1, SQLITE_STATIC);
		}
		sqlite3_bind_int(s->owners_insert, 7,
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "blockOwnerDeletion")));
		if (store_step_done(s, s->owners_insert, error, "inserting an owner reference") != 0)
			return -1;
	}
	return 0;
}

/* Returns metadata's string field, or NULL. */
static const char *
meta_string(const cJSON *metadata, const char *field)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(metadata, field);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The members of metadata that no cached object keeps, and those a metadata resource's
 * objects drop too (nothing reads them, and a Secret applied by kubectl has its data in
 * the last-applied-configuration annotation). */
static const char *const store_dropped[] = { "managedFields", NULL };
static const char *const store_dropped_metadata_only[] = { "managedFields", "annotations",
	NULL };

/* What a cached Secret's data holds instead of each value but ca.crt and namespace (a
 * CA's certificate and a namespace's name): no controller of sqlkcm reads the others, it
 * only asks whether they are there, so a token or a key never reaches the cache file.
 * Base64 of "redacted by sqlkcm". */
#define STORE_REDACTED "cmVkYWN0ZWQgYnkgc3Fsa2Nt"

/* The text of Secret body (len bytes) as the cache keeps it: its data values redacted, and
 * kubectl's last-applied-configuration annotation (a copy of them) dropped; NULL when body
 * is not a JSON object. */
static char *
store_redact_secret(const char *body, size_t len)
{
	cJSON *o = cJSON_ParseWithLength(body, len), *v, *ann;
	char *out;

	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(o, "data")) {
		if (!cJSON_IsString(v) || *v->valuestring == '\0' ||
		    strcmp(v->string, "ca.crt") == 0 || strcmp(v->string, "namespace") == 0)
			continue;
		cJSON_SetValuestring(v, STORE_REDACTED);
	}
	ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"),
	    "annotations");
	cJSON_DeleteItemFromObjectCaseSensitive(ann,
	    "kubectl.kubernetes.io/last-applied-configuration");
	out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return out;
}

/* 1 for the resource whose objects store_redact_secret rewrites: Secrets cached whole. */
static int
store_redacts(const struct resource *r)
{
	return !r->metadata_only && strcmp(r->name, "secrets") == 0;
}

cJSON *
store_parse_object(const struct resource *r, const char *text, size_t text_len,
    char **body, size_t *len)
{
	struct json_span span = { text, text + text_len };
	cJSON *object;

	*body = json_copy_without(span, "metadata", r->metadata_only ?
	    store_dropped_metadata_only : store_dropped, len);
	if (*body == NULL)
		return NULL;
	if (store_redacts(r)) {
		char *redacted = store_redact_secret(*body, *len);

		free(*body);
		*body = redacted;
		if (redacted == NULL)
			return NULL;
		*len = strlen(redacted);
	}
	object = json_arena_parse(*body, *len);
	if (!cJSON_IsObject(object)) {
		cJSON_Delete(object);
		free(*body);
		*body = NULL;
		return NULL;
	}
	return object;
}

int
store_upsert_object(struct store *s, const struct resource *r, cJSON *object,
    long long epoch, enum store_change *change, char **old_body, char **error)
{
	return store_upsert_text(s, r, object, NULL, 0, epoch, change, old_body, error);
}

/* Binds an object's row to stmt (the upsert or the insert) and runs it: 0 when written,
 * 1 when a uniqueness constraint refused it (nothing written), -1 on an error. */
static int
store_write_row(struct store *s, const struct resource *r, sqlite3_stmt *stmt,
    cJSON *object, const char *text, size_t text_len, long long epoch,
    sqlite3_int64 hash, sqlite3_int64 id, char **error)
{
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(object, "metadata");
	const cJSON *generation = cJSON_GetObjectItemCaseSensitive(metadata, "generation");
	const char *ns = meta_string(metadata, "namespace");
	int idx = 12, rc;

	sqlite3_bind_text(stmt, 1, meta_string(metadata, "uid"), -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, ns != NULL ? ns : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, meta_string(metadata, "name"), -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 4, meta_string(metadata, "resourceVersion"), -1,
	    SQLITE_STATIC);
	if (cJSON_IsNumber(generation))
		sqlite3_bind_int64(stmt, 5, (sqlite3_int64)generation->valuedouble);
	sqlite3_bind_text(stmt, 6, meta_string(metadata, "creationTimestamp"), -1,
	    SQLITE_STATIC);
	sqlite3_bind_text(stmt, 7, meta_string(metadata, "deletionTimestamp"), -1,
	    SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 8, epoch);
	sqlite3_bind_int64(stmt, 9, hash);
	sqlite3_bind_text(stmt, 10, text, (int)text_len, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 11, id);
	store_bind_resource(stmt, r);
	for (const struct resource_column *c = r->columns; c->name != NULL; c++, idx++) {
		if (resource_column_bind(c, stmt, idx, object) != SQLITE_OK) {
			sqlite3_reset(stmt);
			sqlite3_clear_bindings(stmt);
			return store_error(s, error, "binding a column");
		}
	}
	rc = sqlite3_step(stmt);
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	if ((rc & 0xff) == SQLITE_CONSTRAINT)
		return 1;
	if (rc != SQLITE_DONE)
		return store_error(s, error, "writing an object");
	return 0;
}

int
store_upsert_text(struct store *s, const struct resource *r, cJSON *object,
    const char *text, size_t text_len, long long epoch, enum store_change *change,
    char **old_body, char **error)
{
	struct store_table *t = store_table_of(s, r, error);
	cJSON *metadata = cJSON_GetObjectItemCaseSensitive(object, "metadata");
	const char *uid = meta_string(metadata, "uid");
	const char *name = meta_string(metadata, "name");
	const char *rv = meta_string(metadata, "resourceVersion");
	const char *ns = meta_string(metadata, "namespace");
	const cJSON *labels = cJSON_GetObjectItemCaseSensitive(metadata, "labels");
	const cJSON *owners = cJSON_GetObjectItemCaseSensitive(metadata, "ownerReferences");
	sqlite3_int64 hash, old_hash = 0, id = 0;
	int exists, same_rv = 0, rc;
	char *body = NULL;

	if (change != NULL)
		*change = STORE_UNCHANGED;
	if (old_body != NULL)
		*old_body = NULL;
	if (t == NULL)
		return -1;
	if (!cJSON_IsObject(metadata)) {
		error_set(error, "%s object has no metadata", r->kind);
		return STORE_INVALID;
	}
	if (uid == NULL || *uid == '\0' || name == NULL || *name == '\0' || rv == NULL) {
		error_set(error, "%s %s/%s lacks metadata.%s", r->kind, ns != NULL ? ns : "",
		    name != NULL ? name : "?", uid == NULL || *uid == '\0' ? "uid" :
		    name == NULL || *name == '\0' ? "name" : "resourceVersion");
		return STORE_INVALID;
	}
	hash = store_index_hash(labels, owners);

	if (text != NULL && epoch != 0 && epoch == t->empty_epoch) {
		/* A list into a table that held none of r's objects (the initial sync, the
		 * bulk of the work): nothing to read first. A row of its uid or name there
		 * after all (an object listed twice) refuses the insert, and the usual way
		 * below deals with it. */
		rc = store_write_row(s, r, t->insert, object, text, text_len, epoch, hash,
		    s->last_id + 1, error);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			id = ++s->last_id;
			if (store_write_index(s, id, labels, owners, 1, error) != 0)
				return -1;
			if (change != NULL)
				*change = STORE_ADDED;
			return 0;
		}
	}

	sqlite3_bind_text(t->select_row, 1, uid, -1, SQLITE_STATIC);
	store_bind_resource(t->select_row, r);
	rc = sqlite3_step(t->select_row);
	exists = rc == SQLITE_ROW;
	if (exists) {
		const char *stored_rv = (const char *)sqlite3_column_text(t->select_row, 0);
		same_rv = stored_rv != NULL && strcmp(stored_rv, rv) == 0;
		old_hash = sqlite3_column_int64(t->select_row, 1);
		id = sqlite3_column_int64(t->select_row, 3);
		if (old_body != NULL && !same_rv)
			*old_body = xstrdup((const char *)sqlite3_column_text(t->select_row, 2));
	}
	sqlite3_reset(t->select_row);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_error(s, error, "reading a cached object");

	if (same_rv) {
		/* Already cached at this version (a relist, a replayed event): only the list
		 * epoch moves, so the relist does not take it for gone. */
		sqlite3_bind_int64(t->touch_epoch, 1, epoch);
		sqlite3_bind_text(t->touch_epoch, 2, uid, -1, SQLITE_STATIC);
		store_bind_resource(t->touch_epoch, r);
		return store_step_done(s, t->touch_epoch, error, "marking an object listed");
	}
	if (!exists) {
		sqlite3_bind_text(t->delete_renamed, 1, ns != NULL ? ns : "", -1, SQLITE_STATIC);
		sqlite3_bind_text(t->delete_renamed, 2, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(t->delete_renamed, 3, uid, -1, SQLITE_STATIC);
		store_bind_resource(t->delete_renamed, r);
		if (store_step_done(s, t->delete_renamed, error, "replacing a re-created object") != 0)
			return -1;
	}

	if (text == NULL) {
		for (const char *const *d = r->metadata_only ? store_dropped_metadata_only :
		    store_dropped; *d != NULL; d++)
			cJSON_DeleteItemFromObjectCaseSensitive(metadata, *d);
		body = cJSON_PrintUnformatted(object);
		if (body != NULL && store_redacts(r)) {
			char *redacted = store_redact_secret(body, strlen(body));

			free(body);
			body = redacted;
		}
		if (body == NULL)
			return error_set(error, "%s %s/%s: cannot serialise the object", r->kind,
			    ns != NULL ? ns : "", name);
		text = body;
		text_len = strlen(body);
	}
	/* A new object's id; an update keeps the row's (the upsert does not set it). */
	if (!exists)
		id = ++s->last_id;
	rc = store_write_row(s, r, t->upsert, object, text, text_len, epoch, hash, id, error);
	cJSON_free(body);
	if (rc == 1)
		rc = store_error(s, error, "writing an object");
	if (rc != 0)
		return -1;
	if ((!exists || hash != old_hash) &&
	    store_write_index(s, id, labels, owners, !exists, error) != 0)
		return -1;
	if (change != NULL)
		*change = exists ? STORE_UPDATED : STORE_ADDED;
	return 0;
}

int
store_delete_object(struct store *s, const struct resource *r, const char *uid,
    enum store_change *change, char **old_body, char **error)
{
	struct store_table *t = store_table_of(s, r, error);
	int rc;

	if (change != NULL)
		*change = STORE_UNCHANGED;
	if (old_body != NULL)
		*old_body = NULL;
	if (t == NULL)
		return -1;
	sqlite3_bind_text(t->delete_row, 1, uid, -1, SQLITE_STATIC);
	store_bind_resource(t->delete_row, r);
	rc = sqlite3_step(t->delete_row);
	if (rc == SQLITE_ROW) {
		if (old_body != NULL)
			*old_body = xstrdup((const char *)sqlite3_column_text(t->delete_row, 0));
		if (change != NULL)
			*change = STORE_DELETED;
		rc = sqlite3_step(t->delete_row);
	}
	sqlite3_reset(t->delete_row);
	if (rc != SQLITE_DONE)
		return store_error(s, error, "deleting an object");
	return 0;
}

/* --- informer state ------------------------------------------------------------------- */

int
store_get_informer(struct store *s, const struct resource *r,
    struct store_informer_state *out, char **error)
{
	int rc;

	memset(out, 0, sizeof *out);
	sqlite3_bind_text(s->informer_get, 1, r->name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s->informer_get);
	if (rc == SQLITE_ROW) {
		const char *rv = (const char *)sqlite3_column_text(s->informer_get, 0);
		out->resource_version = rv != NULL ? xstrdup(rv) : NULL;
		out->list_epoch = sqlite3_column_int64(s->informer_get, 1);
		out->synced = sqlite3_column_int(s->informer_get, 2);
	}
	sqlite3_reset(s->informer_get);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_error(s, error, "reading informer state");
	return 0;
}

void
store_informer_state_clear(struct store_informer_state *st)
{
	free(st->resource_version);
	memset(st, 0, sizeof *st);
}

int
store_set_resource_version(struct store *s, const struct resource *r, const char *rv,
    char **error)
{
	sqlite3_bind_text(s->informer_set_rv, 1, r->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s->informer_set_rv, 2, rv, -1, SQLITE_STATIC);
	return store_step_done(s, s->informer_set_rv, error, "recording a resourceVersion");
}

int
store_begin_list(struct store *s, const struct resource *r, long long *epoch, char **error)
{
	struct store_table *t = store_table_of(s, r, error);
	int rc;

	if (t == NULL)
		return -1;
	sqlite3_bind_text(s->informer_begin_list, 1, r->name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s->informer_begin_list);
	if (rc == SQLITE_ROW)
		*epoch = sqlite3_column_int64(s->informer_begin_list, 0);
	sqlite3_reset(s->informer_begin_list);
	if (rc != SQLITE_ROW)
		return store_error(s, error, "starting a list");
	/* An empty table (a first sync): this list's objects are all new, and
	 * store_upsert_text inserts them without reading first, until the list ends. */
	store_bind_resource(t->any_row, r);
	rc = sqlite3_step(t->any_row);
	sqlite3_reset(t->any_row);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_error(s, error, "starting a list");
	t->empty_epoch = rc == SQLITE_DONE ? *epoch : 0;
	return 0;
}

int
store_finish_list(struct store *s, const struct resource *r, const char *rv, char **error)
{
	if (r->index < s->ntables)
		s->tables[r->index].empty_epoch = 0;
	sqlite3_bind_text(s->informer_finish_list, 1, r->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s->informer_finish_list, 2, rv, -1, SQLITE_STATIC);
	return store_step_done(s, s->informer_finish_list, error, "finishing a list");
}

int
store_delete_unlisted(struct store *s, const struct resource *r, long long epoch, int limit,
    store_removed_cb removed, void *arg, int *deleted, char **error)
{
	struct store_table *t = store_table_of(s, r, error);
	int rc;

	*deleted = 0;
	if (t == NULL)
		return -1;
	sqlite3_bind_int64(t->delete_unlisted, 1, epoch);
	sqlite3_bind_int(t->delete_unlisted, 2, limit);
	store_bind_resource(t->delete_unlisted, r);
	while ((rc = sqlite3_step(t->delete_unlisted)) == SQLITE_ROW) {
		(*deleted)++;
		if (removed != NULL)
			removed((const char *)sqlite3_column_text(t->delete_unlisted, 0),
			    (const char *)sqlite3_column_text(t->delete_unlisted, 1), arg);
	}
	sqlite3_reset(t->delete_unlisted);
	if (rc != SQLITE_DONE)
		return store_error(s, error, "deleting objects the list no longer has");
	return 0;
}

int
store_note_api_resource(struct store *s, const struct resource *r, int served, char **error)
{
	static const char sql[] = "INSERT INTO api_resources (resource, api_version, kind, "
	    "namespaced, served, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, "
	    "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) ON CONFLICT (resource) DO UPDATE SET "
	    "api_version = ?2, kind = ?3, namespaced = ?4, served = ?5, "
	    "updated_at = excluded.updated_at";
	sqlite3_stmt *stmt;

	if (sqlite3_prepare_v2(s->db, sql, -1, &stmt, NULL) != SQLITE_OK)
		return store_error(s, error, "preparing to record a resource");
	sqlite3_bind_text(stmt, 1, r->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, r->api_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, r->kind, -1, SQLITE_STATIC);
	sqlite3_bind_int(stmt, 4, r->namespaced);
	sqlite3_bind_int(stmt, 5, served);
	if (sqlite3_step(stmt) != SQLITE_DONE) {
		sqlite3_finalize(stmt);
		return store_error(s, error, "recording a resource");
	}
	sqlite3_finalize(stmt);
	return 0;
}

int
store_register_api_resources(struct store *s, char **error)
{
	static const char sql[] = "SELECT api_version, resource, kind, namespaced "
	    "FROM api_resources WHERE served ORDER BY resource";
	sqlite3_stmt *stmt;
	int rc;

	if (sqlite3_prepare_v2(s->db, sql, -1, &stmt, NULL) != SQLITE_OK)
		return store_error(s, error, "reading the known resources");
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *api_version = (const char *)sqlite3_column_text(stmt, 0);
		const char *name = (const char *)sqlite3_column_text(stmt, 1);
		const char *kind = (const char *)sqlite3_column_text(stmt, 2);

		/* The row of a resource sqlkcm caches whole (leases of
		 * coordination.k8s.io, named as the others by their plural alone). */
		if (resource_find(name) != NULL)
			continue;
		if (resource_metadata_named(name, api_version, kind,
		    sqlite3_column_int(stmt, 3)) == NULL)
			log_warning("store: api_resources row %s (%s) names no resource: "
			    "skipped", name, api_version);
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE)
		return store_error(s, error, "reading the known resources");
	return 0;
}

int
store_forget_resource(struct store *s, const struct resource *r, char **error)
{
	static const char *const sql[] = {
		"DELETE FROM cache_objects WHERE resource = ?1",
		"DELETE FROM informers WHERE resource = ?1",
		"UPDATE api_resources SET served = 0 WHERE resource = ?1",
	};
	sqlite3_stmt *stmt;

	if (!r->metadata_only)
		return error_set(error, "store: %s is not cached by its metadata", r->name);
	for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++) {
		if (sqlite3_prepare_v2(s->db, sql[i], -1, &stmt, NULL) != SQLITE_OK)
			return store_error(s, error, "preparing to forget a resource");
		sqlite3_bind_text(stmt, 1, r->name, -1, SQLITE_STATIC);
		if (sqlite3_step(stmt) != SQLITE_DONE) {
			sqlite3_finalize(stmt);
			return store_error(s, error, "forgetting a resource");
		}
		sqlite3_finalize(stmt);
	}
	return 0;
}

long long
store_count(struct store *s, const struct resource *r)
{
	struct store_table *t;
	long long n = -1;
	char *error = NULL;

	if ((t = store_table_of(s, r, &error)) == NULL) {
		free(error);
		return -1;
	}
	if (t->count == NULL)
		return -1;
	store_bind_resource(t->count, r);
	if (sqlite3_step(t->count) == SQLITE_ROW)
		n = sqlite3_column_int64(t->count, 0);
	sqlite3_reset(t->count);
	return n;
}

/* --- metrics ------------------------------------------------------------------------- */

/* Counts one resource's rows for sqlkcm_store_objects. */
static double
store_read_objects(void *arg)
{
	const struct store_object_count *c = arg;

	return (double)store_count(c->store, c->resource);
}

/* The database's size in bytes: its pages times the page size (pages still only in the
 * WAL included). */
static double
store_read_database_size(void *arg)
{
	struct store *s = arg;
	long long pages = 0, page_size = 0;

	if (store_pragma_int(s, "PRAGMA page_count", &pages, NULL) != 0 ||
	    store_pragma_int(s, "PRAGMA page_size", &page_size, NULL) != 0)
		return 0;
	return (double)pages * (double)page_size;
}

/* The WAL file's size in bytes (0 when there is none). */
static double
store_read_wal_size(void *arg)
{
	struct store *s = arg;
	const char *path = sqlite3_db_filename(s->db, "main");
	struct stat st;
	char *wal;
	double size = 0;

	if (path == NULL || *path == '\0')
		return 0;
	wal = xasprintf("%s-wal", path);
	if (stat(wal, &st) == 0)
		size = (double)st.st_size;
	free(wal);
	return size;
}

/* Returns the family spec describes in registry, or NULL (logged). */
static struct metrics_family *
store_metric_family(struct metrics_registry *registry, const struct metrics_spec *spec)
{
	struct metrics_family *family;
	char *error = NULL;

	family = metrics_family_register(registry, spec, &error);
	if (family == NULL) {
		log_error("store: no metric %s: %s", spec->name, error);
		free(error);
	}
	return family;
}

/* Publishes the cache's object counts, sizes and commit latency in registry. */
void
store_register_metrics(struct store *s, struct metrics_registry *registry)
{
	static const char *const resource_label[] = { "resource", NULL };
	static const double commit_buckets[] = {
		0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
		0.5, 1, 2.5, 5,
	};
	static const struct metrics_spec objects = { METRICS_GAUGE, "sqlkcm_store_objects",
	    "Objects the cache holds, by resource.", resource_label, NULL, 0 };
	static const struct metrics_spec database_size = { METRICS_GAUGE,
	    "sqlkcm_store_database_size_bytes",
	    "Size of the cache database: its pages times the page size.", NULL, NULL, 0 };
	static const struct metrics_spec wal_size = { METRICS_GAUGE,
	    "sqlkcm_store_wal_size_bytes",
	    "Size of the cache database's write-ahead log file.", NULL, NULL, 0 };
	static const struct metrics_spec commit_duration = { METRICS_HISTOGRAM,
	    "sqlkcm_store_transaction_commit_duration_seconds",
	    "Seconds a COMMIT of the cache took.", NULL, commit_buckets,
	    sizeof commit_buckets / sizeof commit_buckets[0] };
	static const struct metrics_spec write_failures = { METRICS_COUNTER,
	    "sqlkcm_store_write_failures_total",
	    "Writes of the cache that failed and were rolled back (a full disk, an I/O error, "
	    "a lock not taken).", NULL, NULL, 0 };
	struct metrics_family *family;

	if (s->objects != NULL)
		return;		/* already registered */
	s->object_counts = xcalloc((size_t)resource_count, sizeof *s->object_counts);
	s->objects = xcalloc((size_t)resource_count, sizeof *s->objects);
	if ((family = store_metric_family(registry, &objects)) != NULL) {
		for (int i = 0; i < resource_count; i++) {
			const char *values[] = { resource_all[i]->name, NULL };

			s->object_counts[i].store = s;
			s->object_counts[i].resource = resource_all[i];
			s->objects[i] = metrics_series_get(family, values);
			metrics_gauge_set_callback(s->objects[i], store_read_objects,
			    &s->object_counts[i]);
		}
	}
	if ((family = store_metric_family(registry, &database_size)) != NULL) {
		s->database_size = metrics_series_get(family, NULL);
		metrics_gauge_set_callback(s->database_size, store_read_database_size, s);
	}
	if ((family = store_metric_family(registry, &wal_size)) != NULL) {
		s->wal_size = metrics_series_get(family, NULL);
		metrics_gauge_set_callback(s->wal_size, store_read_wal_size, s);
	}
	if ((family = store_metric_family(registry, &commit_duration)) != NULL)
		s->commit_duration = metrics_series_get(family, NULL);
	if ((family = store_metric_family(registry, &write_failures)) != NULL)
		s->write_failures = metrics_series_get(family, NULL);
}

/* Detaches the metrics from the store, keeping their last values. */
static void
store_unregister_metrics(struct store *s)
{
	if (s->objects == NULL)
		return;
	for (int i = 0; i < resource_count; i++)
		metrics_gauge_set_callback(s->objects[i], NULL, NULL);
	metrics_gauge_set_callback(s->database_size, NULL, NULL);
	metrics_gauge_set_callback(s->wal_size, NULL, NULL);
	free(s->objects);
	free(s->object_counts);
	s->objects = NULL;
	s->object_counts = NULL;
}
