/*
 * lister.c - listers: the cache's objects by key, by selector, by controller owner.
 *
 * A lister is a query. Get and list-by-owner are fixed statements per resource, prepared
 * once; a selector listing is built from the selector's SQL (selector.c), in which every
 * key and value is a bound parameter, and prepared per call. Results come in namespace/
 * name order, so that callers and tests see the same order every time.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lister.h"
#include "util.h"

struct lister_statements {
	sqlite3_stmt *get;
	sqlite3_stmt *controlled_by;
};

struct lister {
	struct store *store;
	struct lister_statements *by_resource;	/* by resource->index */
};

struct lister *
lister_new(struct store *s)
{
	struct lister *l = xcalloc(1, sizeof *l);

	l->store = s;
	l->by_resource = xcalloc((size_t)resource_count, sizeof *l->by_resource);
	return l;
}

void
lister_free(struct lister *l)
{
	if (l == NULL)
		return;
	for (int i = 0; i < resource_count; i++) {
		sqlite3_finalize(l->by_resource[i].get);
		sqlite3_finalize(l->by_resource[i].controlled_by);
	}
	free(l->by_resource);
	free(l);
}

/* Prepares the SQL before + r's table + after into *stmt unless it is prepared already. */
static int
lister_prepare(struct lister *l, const struct resource *r, const char *before,
    const char *after, sqlite3_stmt **stmt, char **error)
{
	sqlite3 *db = store_db(l->store);
	char *sql;
	int rc;

	if (*stmt != NULL)
		return 0;
	sql = xasprintf("%s%s%s", before, r->table, after);
	rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return error_set(error, "lister: %s: %s", r->name, sqlite3_errmsg(db));
	return 0;
}

/* Steps stmt to its end, calling cb for each (uid, body) row, then resets it. */
static int
lister_run(struct lister *l, sqlite3_stmt *stmt, lister_cb cb, void *arg, char **error)
{
	int rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (cb((const char *)sqlite3_column_text(stmt, 0),
		    (const char *)sqlite3_column_text(stmt, 1), arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "lister: %s", sqlite3_errmsg(store_db(l->store)));
	return 0;
}

int
lister_get(struct lister *l, const struct resource *r, const char *namespace,
    const char *name, char **body, char **error)
{
	sqlite3_stmt **stmt = &l->by_resource[r->index].get;
	int rc;

	*body = NULL;
	if (lister_prepare(l, r, "SELECT body FROM ", " WHERE namespace = ? AND name = ?", stmt,
	    error) != 0)
		return -1;
	sqlite3_bind_text(*stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(*stmt, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(*stmt);
	if (rc == SQLITE_ROW)
		*body = xstrdup((const char *)sqlite3_column_text(*stmt, 0));
	sqlite3_reset(*stmt);
	sqlite3_clear_bindings(*stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "lister: %s", sqlite3_errmsg(store_db(l->store)));
	return 0;
}

int
lister_list(struct lister *l, const struct resource *r, const char *namespace,
    const struct selector *sel, lister_cb cb, void *arg, char **error)
{
	sqlite3 *db = store_db(l->store);
	sqlite3_stmt *stmt = NULL;
	struct buf sql;
	int rc, next = 1;

	buf_init(&sql);
	/* The table name is a constant of resource.c; the selector writes only "?"s. */
	buf_printf(&sql, "SELECT o.uid, o.body FROM %s o WHERE ", r->table);
	if (namespace != NULL)
		buf_append_str(&sql, "o.namespace = ? AND ");
	if (sel != NULL)
		selector_to_sql(sel, "o.id", &sql);
	else
		buf_append_str(&sql, "1");
	buf_append_str(&sql, " ORDER BY o.namespace, o.name");
	rc = sqlite3_prepare_v2(db, sql.data, (int)sql.len, &stmt, NULL);
	buf_free(&sql);
	if (rc != SQLITE_OK)
		return error_set(error, "lister: %s: %s", r->name, sqlite3_errmsg(db));
	if (namespace != NULL)
		sqlite3_bind_text(stmt, next++, namespace, -1, SQLITE_STATIC);
	if (sel != NULL && selector_bind(sel, stmt, next, error) < 0) {
		sqlite3_finalize(stmt);
		return -1;
	}
	rc = lister_run(l, stmt, cb, arg, error);
	sqlite3_finalize(stmt);
	return rc;
}

int
lister_list_controlled_by(struct lister *l, const struct resource *r,
    const char *owner_uid, lister_cb cb, void *arg, char **error)
{
	sqlite3_stmt **stmt = &l->by_resource[r->index].controlled_by;

	if (lister_prepare(l, r, "SELECT o.uid, o.body FROM object_owners x JOIN ",
	    " o ON o.id = x.object_id WHERE x.owner_uid = ? AND x.controller = 1 "
	    "ORDER BY o.namespace, o.name", stmt, error) != 0)
		return -1;
	sqlite3_bind_text(*stmt, 1, owner_uid, -1, SQLITE_STATIC);
	return lister_run(l, *stmt, cb, arg, error);
}
