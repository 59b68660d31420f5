/*
 * consistency.c - the resourceVersions of a controller's own writes, so that an owner is
 * not synced again before the cache shows them (stale-controller mitigation, KEP-5647).
 *
 * Expectations count creations and deletions; they do not cover a status update, or a pod
 * the controller deleted whose deletion the watch has not delivered yet when the
 * expectations expire. Since Kubernetes 1.36 the ReplicaSet controller also remembers the
 * resourceVersion the apiserver returned for each of its writes, per owner and resource,
 * and does not sync the owner until the informer of that resource has reached it. sqlkcm
 * keeps these records in the controller_writes table, and an informer's position is the
 * resourceVersion in the informers table, written in the same transaction as the rows.
 *
 * resourceVersions are opaque strings to clients; the apiserver's are etcd revisions in
 * decimal. Two decimal ones are compared as numbers (by length, then digit by digit, so
 * no size limit); anything else, and an informer with no position yet, counts as caught
 * up, so an unusual server can never stall a controller forever. Which writes are
 * recorded: pod creations and adoptions, and status updates (as kube; deletions and
 * releases are covered by expectations or need no wait).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "store.h"
#include "util.h"

enum {
	STMT_GET_ONE,
	STMT_PUT,
	STMT_LIST,
	STMT_DELETE_ONE,
	STMT_FORGET,
	STMT_COUNT
};

static const char *const consistency_sql[STMT_COUNT] = {
	[STMT_GET_ONE] = "SELECT owner_uid, resource_version FROM controller_writes"
	    " WHERE controller = ?1 AND key = ?2 AND resource = ?3",
	[STMT_PUT] = "INSERT OR REPLACE INTO controller_writes (controller, key, owner_uid,"
	    " resource, resource_version) VALUES (?1, ?2, ?3, ?4, ?5)",
	[STMT_LIST] = "SELECT w.resource, w.owner_uid, w.resource_version, i.resource_version"
	    " FROM controller_writes w LEFT JOIN informers i ON i.resource = w.resource"
	    " WHERE w.controller = ?1 AND w.key = ?2 ORDER BY w.resource",
	[STMT_DELETE_ONE] = "DELETE FROM controller_writes"
	    " WHERE controller = ?1 AND key = ?2 AND resource = ?3",
	[STMT_FORGET] = "DELETE FROM controller_writes WHERE controller = ?1 AND key = ?2",
};

struct consistency {
	sqlite3 *db;
	char *controller;
	sqlite3_stmt *stmt[STMT_COUNT];
};

struct consistency *
consistency_new(sqlite3 *db, const char *controller, char **error)
{
	struct consistency *c = xcalloc(1, sizeof *c);

	c->db = db;
	c->controller = xstrdup(controller);
	if (store_prepare_statements(db, consistency_sql, STMT_COUNT, c->stmt, "controller writes",
	    error) != 0) {
		consistency_free(c);
		return NULL;
	}
	return c;
}

void
consistency_free(struct consistency *c)
{
	if (c == NULL)
		return;
	store_finalize_statements(c->stmt, STMT_COUNT);
	free(c->controller);
	free(c);
}

/* Resets statement i and binds the controller and key. */
static sqlite3_stmt *
consistency_stmt(struct consistency *c, int i, const char *key)
{
	sqlite3_stmt *stmt = c->stmt[i];

	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	sqlite3_bind_text(stmt, 1, c->controller, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, key, -1, SQLITE_TRANSIENT);
	return stmt;
}

static int
consistency_step(struct consistency *c, sqlite3_stmt *stmt, char **error)
{
	int rc = sqlite3_step(stmt);

	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "controller writes: %s", sqlite3_errmsg(c->db));
	return 0;
}

/* Returns 1 if s is a resourceVersion kube can order: decimal digits, no leading zero
 * (so not "0" either). */
static int
is_decimal(const char *s)
{
	if (s == NULL || *s < '1' || *s > '9')
		return 0;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return 0;
	}
	return 1;
}

int
consistency_compare_rv(const char *a, const char *b)
{
	size_t la, lb;
	int cmp;

	if (!is_decimal(a) || !is_decimal(b))
		return 2;
	la = strlen(a);
	lb = strlen(b);
	if (la != lb)
		return la < lb ? -1 : 1;
	cmp = strcmp(a, b);
	return cmp < 0 ? -1 : cmp > 0;
}

int
consistency_wrote_at(struct consistency *c, const char *key, const char *owner_uid,
    const char *resource, const char *resource_version, char **error)
{
	sqlite3_stmt *stmt = consistency_stmt(c, STMT_GET_ONE, key);
	int keep = 0, rc;

	if (resource_version == NULL || *resource_version == '\0')
		return 0;
	sqlite3_bind_text(stmt, 3, resource, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		const char *uid = (const char *)sqlite3_column_text(stmt, 0);
		const char *rv = (const char *)sqlite3_column_text(stmt, 1);
		/* Keep the stored one if it is the same owner's and newer. */
		keep = uid != NULL && strcmp(uid, owner_uid) == 0 &&
		    consistency_compare_rv(rv, resource_version) == 1;
		rc = SQLITE_DONE;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "controller writes: %s", sqlite3_errmsg(c->db));
	if (keep)
		return 0;
	stmt = consistency_stmt(c, STMT_PUT, key);
	sqlite3_bind_text(stmt, 3, owner_uid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 4, resource, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 5, resource_version, -1, SQLITE_TRANSIENT);
	return consistency_step(c, stmt, error);
}

int
consistency_ready(struct consistency *c, const char *key, const char *owner_uid, int *ready,
    const char **behind, char **error)
{
	static char behind_name[64];
	sqlite3_stmt *stmt = consistency_stmt(c, STMT_LIST, key);
	int rc;

	*ready = 1;
	while (*ready && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *resource = (const char *)sqlite3_column_text(stmt, 0);
		const char *uid = (const char *)sqlite3_column_text(stmt, 1);
		const char *written = (const char *)sqlite3_column_text(stmt, 2);
		const char *cached = (const char *)sqlite3_column_text(stmt, 3);

		/* A record of an earlier owner with this key holds nothing back. */
		if (uid == NULL || strcmp(uid, owner_uid) != 0)
			continue;
		/* No position yet, or one that cannot be ordered: fail open. */
		if (cached != NULL && consistency_compare_rv(cached, written) == -1) {
			*ready = 0;
			if (behind != NULL) {
				snprintf(behind_name, sizeof behind_name, "%s", resource);
				*behind = behind_name;
			}
		}
	}
	if (!*ready)
		rc = SQLITE_DONE;
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "controller writes: %s", sqlite3_errmsg(c->db));
	return 0;
}

int
consistency_is_own(struct consistency *c, const char *key, const char *resource,
    const char *resource_version, int *own, char **error)
{
	sqlite3_stmt *stmt = consistency_stmt(c, STMT_GET_ONE, key);
	int rc;

	*own = 0;
	sqlite3_bind_text(stmt, 3, resource, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		const char *rv = (const char *)sqlite3_column_text(stmt, 1);

		*own = rv != NULL && resource_version != NULL && *resource_version != '\0' &&
		    strcmp(rv, resource_version) == 0;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "controller writes: %s", sqlite3_errmsg(c->db));
	return 0;
}

int
consistency_forget(struct consistency *c, const char *key, char **error)
{
	return consistency_step(c, consistency_stmt(c, STMT_FORGET, key), error);
}
