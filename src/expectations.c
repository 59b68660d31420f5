/*
 * expectations.c - what a controller has asked the apiserver for and not yet seen in its
 * cache, kept in the store so that it survives a restart.
 *
 * A controller that sends N pod creations for an owner cannot trust its cache for that
 * owner until the informer has shown it the N new pods: a sync in between would count too
 * few pods and create them again. So before sending, it records "N adds expected" for the
 * owner's key; the pod informer's handler lowers the count as each pod appears; and the
 * owner's sync only creates or deletes once the counts are down to zero, or once they are
 * five minutes old (a watch event can be lost; kube gives up waiting after that too).
 * Deletions are tracked by pod key: only the deletion of a pod the controller itself asked
 * to delete lowers the count, as in kube's UID-tracking expectations.
 *
 * kube-controller-manager keeps these counters in memory. sqlkcm writes them to the
 * expectations and expected_deletions tables (schema/002-controllers.sql), and the caller
 * commits them before the requests go out: after a crash, the restarted process still
 * waits for what it had asked for instead of asking again.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "expectations.h"
#include "store.h"
#include "util.h"

enum {
	STMT_GET,
	STMT_SET,
	STMT_CLEAR_DELETIONS,
	STMT_ADD_DELETION,
	STMT_LOWER_ADDS,
	STMT_TAKE_DELETION,
	STMT_LOWER_DELETES,
	STMT_DELETE,
	STMT_COUNT
};

static const char *const expectations_sql[STMT_COUNT] = {
	[STMT_GET] = "SELECT adds, deletes, set_at FROM expectations"
	    " WHERE controller = ?1 AND key = ?2",
	[STMT_SET] = "INSERT OR REPLACE INTO expectations (controller, key, adds, deletes,"
	    " set_at) VALUES (?1, ?2, ?3, ?4, ?5)",
	[STMT_CLEAR_DELETIONS] = "DELETE FROM expected_deletions"
	    " WHERE controller = ?1 AND key = ?2",
	[STMT_ADD_DELETION] = "INSERT OR IGNORE INTO expected_deletions (controller, key,"
	    " pod_key) VALUES (?1, ?2, ?3)",
	[STMT_LOWER_ADDS] = "UPDATE expectations SET adds = adds - 1"
	    " WHERE controller = ?1 AND key = ?2",
	[STMT_TAKE_DELETION] = "DELETE FROM expected_deletions"
	    " WHERE controller = ?1 AND key = ?2 AND pod_key = ?3",
	[STMT_LOWER_DELETES] = "UPDATE expectations SET deletes = deletes - 1"
	    " WHERE controller = ?1 AND key = ?2",
	[STMT_DELETE] = "DELETE FROM expectations WHERE controller = ?1 AND key = ?2",
};

struct expectations {
	sqlite3 *db;
	char *controller;
	sqlite3_stmt *stmt[STMT_COUNT];
};

struct expectations *
expectations_new(sqlite3 *db, const char *controller, char **error)
{
	struct expectations *e = xcalloc(1, sizeof *e);

	e->db = db;
	e->controller = xstrdup(controller);
	if (store_prepare_statements(db, expectations_sql, STMT_COUNT, e->stmt, "expectations",
	    error) != 0) {
		expectations_free(e);
		return NULL;
	}
	return e;
}

void
expectations_free(struct expectations *e)
{
	if (e == NULL)
		return;
	store_finalize_statements(e->stmt, STMT_COUNT);
	free(e->controller);
	free(e);
}

/* Resets statement i and binds the controller and key, its first two parameters. */
static sqlite3_stmt *
expectations_stmt(struct expectations *e, int i, const char *key)
{
	sqlite3_stmt *stmt = e->stmt[i];

	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	sqlite3_bind_text(stmt, 1, e->controller, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, key, -1, SQLITE_TRANSIENT);
	return stmt;
}

/* Runs a statement that returns no row. */
static int
expectations_step(struct expectations *e, sqlite3_stmt *stmt, char **error)
{
	int rc = sqlite3_step(stmt);

	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "expectations: %s", sqlite3_errmsg(e->db));
	return 0;
}

int
expectations_get(struct expectations *e, const char *key, int *found, long long *adds,
    long long *deletes, double *set_at, char **error)
{
	sqlite3_stmt *stmt = expectations_stmt(e, STMT_GET, key);
	int rc = sqlite3_step(stmt);

	*found = 0;
	if (rc == SQLITE_ROW) {
		*found = 1;
		if (adds != NULL)
			*adds = sqlite3_column_int64(stmt, 0);
		if (deletes != NULL)
			*deletes = sqlite3_column_int64(stmt, 1);
		if (set_at != NULL)
			*set_at = sqlite3_column_double(stmt, 2);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "expectations: %s", sqlite3_errmsg(e->db));
	return 0;
}

int
expectations_satisfied(struct expectations *e, const char *key, double now, int *satisfied,
    char **error)
{
	long long adds, deletes;
	double set_at;
	int found;

	if (expectations_get(e, key, &found, &adds, &deletes, &set_at, error) != 0)
		return -1;
	/* No row: a new owner, or one whose expectations were dropped; fulfilled: the cache
	 * shows everything asked for; expired: an event was lost, stop waiting for it. */
	*satisfied = !found || (adds <= 0 && deletes <= 0) ||
	    now - set_at > EXPECTATIONS_TIMEOUT;
	return 0;
}

int
expectations_expect(struct expectations *e, const char *key, int adds,
    const char *const *pod_keys, int n, double now, char **error)
{
	sqlite3_stmt *stmt;
	int deletes = 0;

	if (expectations_step(e, expectations_stmt(e, STMT_CLEAR_DELETIONS, key), error) != 0)
		return -1;
	for (int i = 0; i < n; i++) {
		stmt = expectations_stmt(e, STMT_ADD_DELETION, key);
		sqlite3_bind_text(stmt, 3, pod_keys[i], -1, SQLITE_TRANSIENT);
		if (expectations_step(e, stmt, error) != 0)
			return -1;
		/* A pod key given twice is one deletion to wait for (kube counts the set):
		 * the second insert is ignored and must not be counted. */
		deletes += sqlite3_changes(e->db);
	}
	stmt = expectations_stmt(e, STMT_SET, key);
	sqlite3_bind_int(stmt, 3, adds);
	sqlite3_bind_int(stmt, 4, deletes);
	sqlite3_bind_double(stmt, 5, now);
	return expectations_step(e, stmt, error);
}

int
expectations_creation_observed(struct expectations *e, const char *key, char **error)
{
	return expectations_step(e, expectations_stmt(e, STMT_LOWER_ADDS, key), error);
}

int
expectations_deletion_observed(struct expectations *e, const char *key, const char *pod_key,
    char **error)
{
	sqlite3_stmt *stmt = expectations_stmt(e, STMT_TAKE_DELETION, key);

	sqlite3_bind_text(stmt, 3, pod_key, -1, SQLITE_TRANSIENT);
	if (expectations_step(e, stmt, error) != 0)
		return -1;
	if (sqlite3_changes(e->db) == 0)
		return 0;	/* not a deletion key was waiting for */
	return expectations_step(e, expectations_stmt(e, STMT_LOWER_DELETES, key), error);
}

int
expectations_delete(struct expectations *e, const char *key, char **error)
{
	if (expectations_step(e, expectations_stmt(e, STMT_CLEAR_DELETIONS, key), error) != 0)
		return -1;
	return expectations_step(e, expectations_stmt(e, STMT_DELETE, key), error);
}
