/*
 * store.h - the SQLite cache: opening it, migrating its schema, writing objects.
 */
#ifndef SQLKCM_STORE_H
#define SQLKCM_STORE_H

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "resource.h"

struct metrics_registry;
struct store;

struct store_options {
	int cache_size_kib;	/* SQLite page cache bound in KiB; 0: the default (8 MiB) */
	int read_only;		/* open an existing database without writing to it */
	int rebuild_cache;	/* move a file that is not an sqlkcm cache aside and start a
				 * new cache in its place */
};

/* What store_open returns besides 0 and -1: the file is not an sqlkcm cache (not SQLite,
 * another program's database, or damaged past opening); it was left as it is. */
#define STORE_OPEN_NOT_A_CACHE -2

/* What a write did to the cache. */
enum store_change {
	STORE_UNCHANGED,	/* the row already had this resourceVersion (or was absent, on delete) */
	STORE_ADDED,
	STORE_UPDATED,
	STORE_DELETED,
};

/* store_upsert_object's answer for an object it refuses (the store itself is fine). */
#define STORE_INVALID 1

/* An informer's stored position. */
struct store_informer_state {
	char *resource_version;	/* NULL when never listed */
	long long list_epoch;
	int synced;
};

/* Opens the database at path, or an in-memory one for ":memory:", in WAL mode, and
 * migrates it to the newest schema. Opened for writing, the file is created 0600 or made
 * 0600 (with its -wal and -shm files), and locked: a second writer of the same file fails
 * (readers are not affected). Returns 0, -1 or STORE_OPEN_NOT_A_CACHE with *error set. */
int store_open(const char *path, const struct store_options *options, struct store **out,
    char **error);
void store_close(struct store *s);

/* Copies the write-ahead log into the database file and truncates it (PRAGMA
 * wal_checkpoint(TRUNCATE)), as a clean stop does, so the file alone is the whole cache;
 * -1 with *error set when a reader kept it from completing. */
int store_checkpoint(struct store *s, char **error);

/* The connection, for listers and tests. Use it from the loop thread only. */
sqlite3 *store_db(struct store *s);

/* Prepares the n statements of sql (kept for reuse) on db into stmts; on an error returns
 * -1 with *error starting with what, leaving the statements prepared so far in stmts for
 * store_finalize_statements. */
int store_prepare_statements(sqlite3 *db, const char *const *sql, int n,
    sqlite3_stmt **stmts, const char *what, char **error);

/* Finalizes n statements (NULL ones are fine). */
void store_finalize_statements(sqlite3_stmt **stmts, int n);

/* Transactions: all writes of one loop turn go in one. A begin or commit that fails
 * marks the store's writes as failing (store_writes_failing), a commit that works
 * clears the mark. */
int store_begin(struct store *s, char **error);
int store_commit(struct store *s, char **error);
/* Rolls back the open transaction (if any) after a write of it failed, counting the
 * failure (store_write_failed). */
void store_rollback(struct store *s);
/* Rolls back the open transaction (if any) with nothing having failed: a shutdown. */
void store_abandon(struct store *s);
/* Notes a write that failed (full disk, I/O error, lock not taken): counted in
 * sqlkcm_store_write_failures_total, and the store's writes are failing until the next
 * commit that works. */
void store_write_failed(struct store *s);
/* True while the last write failed and no commit has worked since: who holds work back
 * on a store failure waits for this to clear. */
int store_writes_failing(const struct store *s);

/* Writes object (a full API object; its metadata.managedFields is removed in place) into
 * r's table with list epoch `epoch`, replacing its label and owner reference rows when they
 * changed. *change (if not NULL) says what happened; *old_body (if not NULL) receives the
 * previous body on an update (malloc'd), NULL otherwise. A row with the same namespace and
 * name but another uid is an object that was deleted and re-created: it is replaced.
 * Returns 0 when written, STORE_INVALID (with *error) for an object that cannot be cached
 * (no metadata, no uid, name or resourceVersion: nothing was written), and -1 when the
 * database failed: the transaction is then to be rolled back, whatever it held. */
int store_upsert_object(struct store *s, const struct resource *r, cJSON *object,
    long long epoch, enum store_change *change, char **old_body, char **error);

/* Parses the text of one r object as received (a LIST item, a watch event's or a log
 * record's object) into what the store keeps of it: *body is a malloc'd copy of the text
 * without the members the cache drops (metadata.managedFields, and for a metadata resource
 * metadata.annotations), *len its length, and the object returned is that copy parsed.
 * Give both to store_upsert_text: the dropped members are never parsed and the body is
 * not printed again. NULL (and *body NULL) when the text is not an object's valid JSON. */
cJSON *store_parse_object(const struct resource *r, const char *text, size_t text_len,
    char **body, size_t *len);

/* store_upsert_object for an object and its text from store_parse_object: the text is
 * stored as it is. */
int store_upsert_text(struct store *s, const struct resource *r, cJSON *object,
    const char *text, size_t text_len, long long epoch, enum store_change *change,
    char **old_body, char **error);

/* Deletes the object with uid from r's table. *change is STORE_DELETED or, when there was
 * no such row, STORE_UNCHANGED; *old_body (if not NULL) receives the deleted body. */
int store_delete_object(struct store *s, const struct resource *r, const char *uid,
    enum store_change *change, char **old_body, char **error);

/* Reads r's informer state; free it with store_informer_state_clear. */
int store_get_informer(struct store *s, const struct resource *r,
    struct store_informer_state *out, char **error);
void store_informer_state_clear(struct store_informer_state *st);

/* Records the resourceVersion the informer has applied up to. */
int store_set_resource_version(struct store *s, const struct resource *r, const char *rv,
    char **error);

/* A (re)list begins: returns the new list epoch every listed object is written with. */
int store_begin_list(struct store *s, const struct resource *r, long long *epoch,
    char **error);

/* A list has been applied whole: records its resourceVersion and marks r synced. */
int store_finish_list(struct store *s, const struct resource *r, const char *rv,
    char **error);

/* Called for each row a relist removes, with its uid and body. */
typedef void (*store_removed_cb)(const char *uid, const char *body, void *arg);

/* Deletes at most limit rows of r older than epoch (not seen by the list of that epoch),
 * calling removed for each; *deleted gets how many. Call until it deletes fewer than
 * limit, one transaction at a time, so a relist never deletes everything at once. */
int store_delete_unlisted(struct store *s, const struct resource *r, long long epoch,
    int limit, store_removed_cb removed, void *arg, int *deleted, char **error);

/* Records metadata resource r in api_resources (served: discovery lists it), so that the
 * objects view knows its kind; in the caller's transaction or its own. */
int store_note_api_resource(struct store *s, const struct resource *r, int served,
    char **error);

/* Registers (resource_metadata) every resource api_resources holds as served, so that
 * the rows of cache_objects have their resources before discovery is read again (a
 * restart, or `plan`, which reads no discovery). */
int store_register_api_resources(struct store *s, char **error);

/* Deletes every row of metadata resource r and its informer state (discovery no longer
 * lists it: a CustomResourceDefinition was deleted), and marks it not served. */
int store_forget_resource(struct store *s, const struct resource *r, char **error);

/* Counts r's rows (for tests, metrics and messages). */
long long store_count(struct store *s, const struct resource *r);

/* Publishes the cache in registry as sqlkcm_store_* metrics: objects per resource and the
 * database's size (both computed at each render) and how long commits take. The store
 * must be closed before the registry is freed. */
void store_register_metrics(struct store *s, struct metrics_registry *registry);

#endif
