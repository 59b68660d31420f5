/*
 * csrs.c - the CertificateSigningRequest controllers' shared reads and handlers.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "controllers/csrs.h"
#include "json.h"
#include "resource.h"
#include "util.h"

#define CSR_WHERE \
	" FROM cache_objects" \
	" WHERE resource = 'certificatesigningrequests' AND namespace = ''"

int
csrs_init(struct csrs *s, struct controller *c, const char *read_sql, char **error)
{
	const char *sql[2] = {
		read_sql != NULL ? read_sql : "SELECT uid, body" CSR_WHERE " AND name = ?1",
		"SELECT name" CSR_WHERE " ORDER BY name",
	};
	sqlite3_stmt *stmt[2] = { NULL, NULL };

	s->who = c->type->name;
	s->resource = resource_find("certificatesigningrequests");
	if (s->resource == NULL)
		return error_set(error, "%s: certificatesigningrequests is not a known resource",
		    s->who);
	if (store_prepare_statements(store_db(c->store), sql, 2, stmt, s->who, error) != 0)
		return -1;
	s->read = stmt[0];
	s->keys = stmt[1];
	return 0;
}

void
csrs_fini(struct csrs *s)
{
	sqlite3_stmt *stmt[2] = { s->read, s->keys };

	store_finalize_statements(stmt, 2);
	s->read = s->keys = NULL;
}

int
csrs_read(struct csrs *s, struct controller *c, const char *key,
    struct sync_result *out, int *extra, char **error)
{
	sqlite3_stmt *stmt = controller_stmt(s->read);
	cJSON *csr = NULL;
	int rc;

	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = s->resource;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		csr = controller_column_json(stmt, 1);
		if (extra != NULL && sqlite3_column_count(stmt) > 2)
			*extra = sqlite3_column_int(stmt, 2);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "%s: reading CSR %s: %s", s->who, key,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_DONE) {
		out->forget_expectations = 1;
		return 0;
	}
	if (csr == NULL)
		return error_set(error, "%s: CSR %s: the cached body is not JSON", s->who, key);
	out->owner = csr;
	return 1;
}

void
csrs_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	const char *name = json_string(ev->object, "metadata.name");

	(void)c;
	(void)now;
	if (ev->type != INFORMER_DELETED && *name != '\0')
		q->add(name, q->arg);
}

int
csrs_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct csrs *s = c->state;

	return controller_list_keys_of(s->keys, s->who, cb, arg, error);
}
