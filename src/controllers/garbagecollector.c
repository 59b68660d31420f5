/*
 * garbagecollector.c - the garbage collector: deletes what lost its owners, and carries out
 * the foreground and orphan deletions kubectl asks for.
 *
 * It follows kube-controller-manager's garbage collector rule for rule, but keeps no graph
 * in memory: the graph is the cache. Every object of every resource is there (the typed
 * tables, and cache_objects for the metadata of everything else discovery finds), and
 * object_owners indexes every owner reference by the owner's uid. An object's owners are
 * its reference rows, each looked up by uid; its dependents are the rows that name its
 * uid. A key is an object's uid.
 *
 * A sync of one object, from the cache (writing nothing):
 *
 * 1. Gone from the cache: nothing (its dependents were queued when it went).
 * 2. Being deleted with the orphan finalizer: every dependent loses its reference to it (a
 *    merge patch of ownerReferences, guarded by the dependent's resourceVersion), then the
 *    finalizer is removed. With the foregroundDeletion finalizer: once no dependent that
 *    blocks its deletion (blockOwnerDeletion) remains, the finalizer is removed; until
 *    then its dependents are being deleted (the handlers queued them). Otherwise a
 *    deletion in progress is left alone.
 * 3. No owner references: nothing. Else each reference is classified, as kube's
 *    classifyReferences does: solid (the owner is cached, in the dependent's namespace or
 *    cluster-scoped), waiting (that owner is being deleted in the foreground) or dangling
 *    (no such object in the cache). Dangling ones are confirmed by a live GET of the owner
 *    before anything is sent (the executor's confirm step): NotFound, or another uid under
 *    that name. An owner kind no resource maps to is an error: the key is retried with
 *    backoff, as kube retries its REST mapping errors until discovery knows the kind.
 * 4. Some solid owner: the dangling and waiting references are patched out, if any.
 *    Waiting owners and dependents of its own: the object is deleted in the foreground
 *    (its blocking references unblocked first if one of its dependents is itself deleting
 *    its dependents, so that two foreground deletions never wait on each other). Else it
 *    is deleted, in the way its own finalizers ask (orphan, foreground, or background).
 *    Deletions carry the object's uid and cached resourceVersion as preconditions: a cache
 *    that lags makes them fail with a Conflict, and the key comes back with backoff.
 *
 * A cluster-scoped object that names a namespaced owner is left alone (kube's
 * namespacedOwnerOfClusterScopedObjectErr); a reference to an owner the cache holds in
 * another namespace gets kube's OwnerRefInvalidNamespace warning on the dependent.
 *
 * The handlers queue, for an object added or updated: itself when one of its owners is
 * absent from the cache or waiting; itself when its deletion starts with the orphan or
 * foregroundDeletion finalizer (and, for foreground, its dependents); the owners a
 * reference stopped blocking. For an object deleted: its dependents, and its owners that
 * wait for it. list_keys (at start) finds the same from the tables: objects with a
 * reference no cached object answers, objects being deleted with either finalizer, and the
 * dependents of those deleting in the foreground.
 *
 * The attempt-to-delete and attempt-to-orphan queues of kube are one queue here: an owner
 * with the orphan finalizer is its own key like any other, with the same rate-limited
 * retries.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "controllers/garbagecollector.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "restops.h"
#include "util.h"

#define FINALIZER_ORPHAN "orphan"
#define FINALIZER_FOREGROUND "foregroundDeletion"

/* The columns every lookup by uid returns. */
#define OBJECT_COLUMNS "namespace, name, resource_version, deletion_timestamp, body"

enum {
	STMT_BY_UID,
	STMT_OWNER,
	STMT_DEPENDENTS,
	STMT_KEYS_REFERENCES,
	STMT_KEYS_DELETING,
	STMT_NOTE_DELETED,
	STMT_WAS_DELETED,
	STMT_FORGET_DELETED,
	STMT_COUNT
};

/*
 * The statements. The objects are in several tables (each typed resource's own, and
 * cache_objects for the rest), so a part written once as a template is repeated for each
 * table and joined by UNION ALL (gc_union): in a template, {table} is a table and
 * {resource} the expression of its rows' resource name. Each part keeps its own index lookups, which a
 * join with a view over all of them would not.
 */
struct gc_statement {
	const char *head;	/* before the union; may be "" */
	const char *part;	/* the template of one table's part */
	const char *tail;	/* after the union; may be "" */
};

static const struct gc_statement gc_sql[STMT_COUNT] = {
	/* The object with uid ?1, whichever table holds it: its resource's name first. */
	[STMT_BY_UID] = { "",
	    "SELECT {resource}, " OBJECT_COLUMNS " FROM {table} WHERE uid = ?1", "" },
	/* What a reference needs of the object with uid ?1, without reading its body:
	 * its resource, namespace, and whether it is deleting in the foreground. */
	[STMT_OWNER] = {
	    "SELECT resource, namespace, name, deletion_timestamp IS NOT NULL AND EXISTS ("
	    "SELECT 1 FROM json_each(body, '$.metadata.finalizers')"
	    " WHERE value = 'foregroundDeletion') FROM (",
	    "SELECT {resource} AS resource, namespace, name, deletion_timestamp, body FROM {table}"
	    " WHERE uid = ?1", ")" },
	/* The dependents of owner uid ?1: uid, blockOwnerDeletion of their reference. */
	[STMT_DEPENDENTS] = { "",
	    "SELECT o.uid, r.block_owner_deletion FROM object_owners r"
	    " JOIN {table} o ON o.id = r.object_id WHERE r.owner_uid = ?1", "" },
	/* Every owner reference: the dependent's uid and namespace, the reference's uid,
	 * apiVersion, kind and name. */
	[STMT_KEYS_REFERENCES] = { "",
	    "SELECT o.uid, o.namespace, r.owner_uid, r.api_version, r.kind, r.name"
	    " FROM object_owners r JOIN {table} o ON o.id = r.object_id", "" },
	/* Objects being deleted with the orphan or foregroundDeletion finalizer: uid, and
	 * whether it is the latter. */
	[STMT_KEYS_DELETING] = {
	    "SELECT uid, EXISTS (SELECT 1 FROM json_each(body, '$.metadata.finalizers')"
	    " WHERE value = 'foregroundDeletion') FROM (",
	    "SELECT uid, body FROM {table} WHERE deletion_timestamp IS NOT NULL",
	    ") WHERE EXISTS (SELECT 1 FROM json_each(body, '$.metadata.finalizers')"
	    " WHERE value IN ('orphan', 'foregroundDeletion'))" },
	[STMT_NOTE_DELETED] = { "INSERT OR REPLACE INTO deleted_uids (uid, deleted_at)"
	    " VALUES (?1, ?2)", NULL, "" },
	[STMT_WAS_DELETED] = { "SELECT 1 FROM deleted_uids WHERE uid = ?1", NULL, "" },
	[STMT_FORGET_DELETED] = { "DELETE FROM deleted_uids WHERE deleted_at < ?1", NULL, "" },
};

/* Appends template with its table and resource name filled in. */
static void
gc_union_part(struct buf *sql, const char *template, const char *table,
    const char *resource)
{
	const char *const pairs[] = { "{table}", table, "{resource}", resource, NULL };
	char *part = text_expand(template, pairs);

	buf_append_str(sql, part);
	free(part);
}

/* Returns the SQL of statement g (malloc'd): its part once per table that holds objects.
 * Table and resource names are resource.c's constants, never data. */
static char *
gc_union(const struct gc_statement *g)
{
	struct buf sql;

	buf_init(&sql);
	buf_append_str(&sql, g->head);
	for (int i = 0; g->part != NULL && i < resource_count; i++) {
		const struct resource *r = resource_all[i];
		char *name;

		if (resource_in_objects(r))
			continue;
		name = xasprintf("'%s'", r->name);
		gc_union_part(&sql, g->part, r->table, name);
		buf_append_str(&sql, " UNION ALL ");
		free(name);
	}
	if (g->part != NULL)
		gc_union_part(&sql, g->part, "cache_objects", "resource");
	buf_append_str(&sql, g->tail);
	return buf_detach(&sql);
}

/* How long the uids of deleted objects are kept (deleted_uids), in seconds. */
#define DELETED_UIDS_KEPT 3600.0
/* Old ones are forgotten once every this many deletions. */
#define DELETED_UIDS_PRUNE_EVERY 1000

struct gc_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	unsigned long deletions;	/* noted in deleted_uids, for the pruning */
};

/* A cached object, as a sync reads it. */
struct gc_object {
	const struct resource *resource;	/* NULL: a resource discovery has not named */
	char *resource_name;
	char *uid;
	char *namespace;	/* "" when cluster-scoped */
	char *name;
	char *resource_version;
	int deleting;
	int namespaced;
	cJSON *body;
};

static void
gc_object_clear(struct gc_object *o)
{
	free(o->resource_name);
	free(o->uid);
	free(o->namespace);
	free(o->name);
	free(o->resource_version);
	cJSON_Delete(o->body);
	memset(o, 0, sizeof *o);
}

/* Duplicates a text column (NULL stays NULL). */
static char *
column_dup(sqlite3_stmt *stmt, int i)
{
	const unsigned char *text = sqlite3_column_text(stmt, i);

	return text != NULL ? xstrdup((const char *)text) : NULL;
}

/* Reads the object with uid: 1 and *o filled, 0 when the cache has none, -1 on error. */
static int
gc_lookup(struct controller *c, const char *uid, struct gc_object *o, char **error)
{
	struct gc_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_BY_UID]);
	int rc;

	memset(o, 0, sizeof *o);
	sqlite3_bind_text(stmt, 1, uid, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		o->resource_name = column_dup(stmt, 0);
		o->uid = xstrdup(uid);
		o->namespace = column_dup(stmt, 1);
		o->name = column_dup(stmt, 2);
		o->resource_version = column_dup(stmt, 3);
		o->deleting = sqlite3_column_type(stmt, 4) != SQLITE_NULL;
		o->body = controller_column_json(stmt, 5);
		o->resource = resource_find_any(o->resource_name);
		o->namespaced = o->resource != NULL ? o->resource->namespaced :
		    o->namespace[0] != '\0';
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "garbagecollector: reading object %s: %s", uid,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_ROW && o->body == NULL) {
		gc_object_clear(o);
		return error_set(error, "garbagecollector: object %s: the cached body is not "
		    "JSON", uid);
	}
	return rc == SQLITE_ROW;
}

/* What the cache says of a reference's owner. */
enum owner_state {
	OWNER_SOLID,		/* cached, where the dependent may refer to it */
	OWNER_WAITING,		/* the same, and deleting in the foreground */
	OWNER_ELSEWHERE,	/* the uid is a namespaced object of another namespace */
	OWNER_ABSENT,		/* no cached object answers the reference */
};

/* Looks up the owner ref names for a dependent in namespace: *state; -1 on error. The
 * cached object with the uid answers only when its kind, group and name are the
 * reference's too (kube's graph compares a reference's coordinates with the observed
 * owner's; the version may differ: the owner is cached at the served version). */
static int
gc_owner_state(struct controller *c, const cJSON *ref, const char *namespace,
    enum owner_state *state, char **error)
{
	struct gc_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_OWNER]);
	const char *uid = json_string(ref, "uid");
	const char *api_version = json_string(ref, "apiVersion");
	const char *kind = json_string(ref, "kind");
	const char *name = json_string(ref, "name");
	int rc;

	*state = OWNER_ABSENT;
	if (uid == NULL || api_version == NULL || kind == NULL || name == NULL)
		return 0;
	sqlite3_bind_text(stmt, 1, uid, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		const struct resource *r = resource_find_any(
		    (const char *)sqlite3_column_text(stmt, 0));
		const char *ns = (const char *)sqlite3_column_text(stmt, 1);
		const char *cached_name = (const char *)sqlite3_column_text(stmt, 2);
		int namespaced = r != NULL ? r->namespaced : ns != NULL && *ns != '\0';
		size_t n = resource_group_length(api_version);

		if (namespaced && (ns == NULL || strcmp(ns, namespace) != 0))
			*state = OWNER_ELSEWHERE;
		else if (r == NULL || strcmp(r->kind, kind) != 0 || cached_name == NULL ||
		    strcmp(cached_name, name) != 0 || resource_group_length(r->api_version) != n ||
		    strncmp(r->api_version, api_version, n) != 0)
			*state = OWNER_ABSENT;
		else
			*state = sqlite3_column_int(stmt, 3) ? OWNER_WAITING : OWNER_SOLID;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "garbagecollector: reading owner %s: %s", uid,
		    sqlite3_errmsg(store_db(c->store)));
	return 0;
}

/* True when object's metadata.finalizers holds finalizer. */
static int
has_finalizer(const cJSON *object, const char *finalizer)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, json_path(object, "metadata.finalizers")) {
		if (cJSON_IsString(f) && strcmp(f->valuestring, finalizer) == 0)
			return 1;
	}
	return 0;
}

/* True when object is being deleted with finalizer. */
static int
deleting_with(const cJSON *object, const char *finalizer)
{
	return json_is_set(object, "metadata.deletionTimestamp") &&
	    has_finalizer(object, finalizer);
}

/* Calls cb for each dependent of owner uid: its uid and whether its reference blocks the
 * owner's deletion. */
static int
gc_each_dependent(struct controller *c, const char *uid,
    void (*cb)(const char *dependent, int blocking, void *arg), void *arg, char **error)
{
	struct gc_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_DEPENDENTS]);
	int rc;

	sqlite3_bind_text(stmt, 1, uid, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		cb((const char *)sqlite3_column_text(stmt, 0), sqlite3_column_int(stmt, 1), arg);
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "garbagecollector: reading the dependents of %s: %s",
		    uid, sqlite3_errmsg(store_db(c->store)));
	return 0;
}

/* True when the informers saw the object with uid deleted (within the last hour). */
static int
seen_deleted(struct controller *c, const char *uid)
{
	struct gc_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_WAS_DELETED]);
	int found;

	sqlite3_bind_text(stmt, 1, uid, -1, SQLITE_STATIC);
	found = sqlite3_step(stmt) == SQLITE_ROW;
	sqlite3_reset(stmt);
	return found;
}

/* Notes that uid was deleted at now (in the handlers' transaction), and now and then
 * forgets the old ones. */
static void
note_deleted(struct controller *c, const char *uid, double now)
{
	struct gc_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_NOTE_DELETED]);

	sqlite3_bind_text(stmt, 1, uid, -1, SQLITE_STATIC);
	sqlite3_bind_double(stmt, 2, now);
	if (sqlite3_step(stmt) != SQLITE_DONE)
		log_warning("garbagecollector: noting the deletion of %s: %s", uid,
		    sqlite3_errmsg(store_db(c->store)));
	sqlite3_reset(stmt);
	if (++st->deletions % DELETED_UIDS_PRUNE_EVERY != 0)
		return;
	stmt = controller_stmt(st->stmt[STMT_FORGET_DELETED]);
	sqlite3_bind_double(stmt, 1, now - DELETED_UIDS_KEPT);
	if (sqlite3_step(stmt) != SQLITE_DONE)
		log_warning("garbagecollector: forgetting old deletions: %s",
		    sqlite3_errmsg(store_db(c->store)));
	sqlite3_reset(stmt);
}

/* --- the writes ------------------------------------------------------------------------ */

/* The object as events name it: the cached body with its real kind and apiVersion
 * (metadata-only bodies say PartialObjectMetadata). */
static cJSON *
event_object(const struct gc_object *o)
{
	cJSON *copy = cJSON_Duplicate(o->body, 1);

	if (o->resource != NULL) {
		json_set(copy, "kind", cJSON_CreateString(o->resource->kind));
		json_set(copy, "apiVersion", cJSON_CreateString(o->resource->api_version));
	}
	return copy;
}

/* Appends a write to r aimed at o. */
static struct action *
write_to(struct sync_result *r, const struct gc_object *o, enum action_type type,
    const char *verb)
{
	struct action *a = action_append(&r->writes, &r->nwrites);

	a->type = type;
	a->verb = verb;
	a->resource = o->resource;
	a->namespace = xstrdup(o->namespace);
	a->name = xstrdup(o->name);
	a->uid = xstrdup(o->uid);
	return a;
}

/* A merge patch of o's metadata member (taken), guarded by o's resourceVersion, as kube's
 * JSON merge patches are. */
static void
patch_metadata(struct sync_result *r, const struct gc_object *o, const char *verb,
    const char *member, cJSON *value, char *reason)
{
	struct action *a = write_to(r, o, ACTION_PATCH, verb);
	cJSON *metadata;

	a->merge_patch = 1;
	a->body = cJSON_CreateObject();
	metadata = cJSON_AddObjectToObject(a->body, "metadata");
	cJSON_AddStringToObject(metadata, "resourceVersion", o->resource_version);
	cJSON_AddItemToObject(metadata, member, value);
	a->reason = reason;
}

/* Patches o's references to the owners in uids (n of them) out. */
static void
remove_references(struct sync_result *r, const struct gc_object *o, char **uids, int n,
    const char *verb, char *reason)
{
	cJSON *keep = cJSON_CreateArray();
	const cJSON *ref;

	cJSON_ArrayForEach(ref, json_path(o->body, "metadata.ownerReferences")) {
		const char *uid = json_string(ref, "uid");
		int drop = 0;

		for (int i = 0; i < n && !drop; i++)
			drop = uid != NULL && strcmp(uid, uids[i]) == 0;
		if (!drop)
			cJSON_AddItemToArray(keep, cJSON_Duplicate(ref, 1));
	}
	if (cJSON_GetArraySize(keep) == 0) {
		/* As kube's patch: no list at all rather than an empty one. */
		cJSON_Delete(keep);
		keep = cJSON_CreateNull();
	}
	patch_metadata(r, o, verb, "ownerReferences", keep, reason);
}

/* Removes finalizer from o. */
static void
remove_finalizer(struct sync_result *r, const struct gc_object *o, const char *finalizer)
{
	cJSON *keep = cJSON_CreateArray();
	const cJSON *f;

	cJSON_ArrayForEach(f, json_path(o->body, "metadata.finalizers")) {
		if (!cJSON_IsString(f) || strcmp(f->valuestring, finalizer) != 0)
			cJSON_AddItemToArray(keep, cJSON_Duplicate(f, 1));
	}
	if (cJSON_GetArraySize(keep) == 0) {
		cJSON_Delete(keep);
		keep = cJSON_CreateNull();
	}
	patch_metadata(r, o, "remove-finalizer", "finalizers", keep,
	    xasprintf("finalizer %s done", finalizer));
}

/* Deletes o with propagation policy, guarded by its uid and resourceVersion. */
static void
delete_object(struct sync_result *r, const struct gc_object *o, const char *propagation,
    char *reason)
{
	struct action *a = write_to(r, o, ACTION_DELETE, "delete");

	a->precondition_rv = xstrdup(o->resource_version);
	a->propagation = propagation;
	a->reason = reason;
}

/* --- sync ------------------------------------------------------------------------------- */

/* What the dependents of an owner come to, for the orphan and foreground steps. */
struct dependents {
	struct controller *c;
	struct sync_result *r;
	const struct gc_object *owner;
	int count;
	int blocking;
	int deleting_dependents;	/* one is itself deleting its dependents */
	char *error;
};

/* Orphaning: the dependent loses its reference to the owner. */
static void
orphan_dependent(const char *uid, int blocking, void *arg)
{
	struct dependents *d = arg;
	struct gc_object dep;
	char *owner_uid = d->owner->uid;

	(void)blocking;
	if (d->error != NULL || gc_lookup(d->c, uid, &dep, &d->error) != 1)
		return;
	if (dep.resource != NULL)
		remove_references(d->r, &dep, &owner_uid, 1, "orphan",
		    xasprintf("owner %s %s is deleted with the orphan policy",
		    d->owner->resource != NULL ? d->owner->resource->kind : "?", d->owner->name));
	gc_object_clear(&dep);
}

/* Counts dependents, blocking ones, and those deleting their own dependents. */
static void
count_dependent(const char *uid, int blocking, void *arg)
{
	struct dependents *d = arg;
	struct gc_object dep;

	d->count++;
	d->blocking += blocking;
	if (d->error != NULL || gc_lookup(d->c, uid, &dep, &d->error) != 1)
		return;
	if (deleting_with(dep.body, FINALIZER_FOREGROUND))
		d->deleting_dependents = 1;
	gc_object_clear(&dep);
}

/* Formats an owner reference as kube's objectReference prints it. */
static char *
reference_string(const cJSON *ref, const char *namespace)
{
	return xasprintf("[%s/%s, namespace: %s, name: %s, uid: %s]",
	    json_string(ref, "apiVersion") != NULL ? json_string(ref, "apiVersion") : "",
	    json_string(ref, "kind") != NULL ? json_string(ref, "kind") : "", namespace,
	    json_string(ref, "name") != NULL ? json_string(ref, "name") : "",
	    json_string(ref, "uid") != NULL ? json_string(ref, "uid") : "");
}

/* Classifies one reference of o (kube's isDangling, on the cache): *state is solid,
 * waiting or absent; for an absent owner the live read that must confirm it is appended to
 * r. -1 when the reference cannot be judged (its kind maps to no known resource: retried
 * later), 1 when o must be left alone (a cluster-scoped object with a namespaced owner). */
static int
classify(struct controller *c, const struct gc_object *o, const cJSON *ref,
    struct sync_result *r, enum owner_state *state, char **error)
{
	const char *uid = json_string(ref, "uid");
	const char *api_version = json_string(ref, "apiVersion");
	const char *kind = json_string(ref, "kind");
	const char *name = json_string(ref, "name");
	const struct resource *owner_resource;
	struct action *a;

	if (uid == NULL || api_version == NULL || kind == NULL || name == NULL)
		return error_set(error, "garbagecollector: %s %s: an owner reference lacks "
		    "uid, apiVersion, kind or name", o->resource_name, o->name);
	/* As kube's isDangling: the reference must map to a resource first, whatever the
	 * cache holds under its uid. */
	owner_resource = resource_find_kind(api_version, kind);
	if (owner_resource == NULL)
		return error_set(error, "garbagecollector: %s %s%s%s: no resource is known for "
		    "owner apiVersion %s kind %s (retrying until discovery knows it)",
		    o->resource_name, o->namespace, *o->namespace != '\0' ? "/" : "", o->name,
		    api_version, kind);
	if (gc_owner_state(c, ref, o->namespace, state, error) != 0)
		return -1;
	if (*state == OWNER_SOLID || *state == OWNER_WAITING)
		return 0;
	if (*state == OWNER_ELSEWHERE) {
		/* The uid is a namespaced object of another namespace: no owner here. */
		char *text = reference_string(ref, o->namespace);

		sync_result_add_event(r, "Warning", "OwnerRefInvalidNamespace",
		    xasprintf("ownerRef %s does not exist in namespace \"%s\"", text,
		    o->namespace));
		free(text);
	}
	if (!o->namespaced && owner_resource->namespaced)
		return 1;
	*state = OWNER_ABSENT;
	/* Seen deleted by a watch: gone for good (a uid is never reused), no read needed. */
	if (seen_deleted(c, uid))
		return 0;
	a = action_append(&r->confirm_absent, &r->nconfirm_absent);
	a->type = ACTION_GET;
	a->verb = "confirm-absent";
	a->resource = owner_resource;
	a->namespace = xstrdup(owner_resource->namespaced ? o->namespace : "");
	a->name = xstrdup(name);
	a->uid = xstrdup(uid);
	a->reason = xstrdup("the owner is not in the cache");
	return 0;
}

/* Drops the confirmations of r (nothing will be deleted on the strength of them). */
static void
drop_confirmations(struct sync_result *r)
{
	for (int i = 0; i < r->nconfirm_absent; i++)
		action_clear(&r->confirm_absent[i]);
	free(r->confirm_absent);
	r->confirm_absent = NULL;
	r->nconfirm_absent = 0;
}

/* An object being deleted: the orphan and foreground steps. */
static int
sync_deleting(struct controller *c, const struct gc_object *o, struct sync_result *r,
    char **error)
{
	struct dependents d = { c, r, o, 0, 0, 0, NULL };

	if (has_finalizer(o->body, FINALIZER_ORPHAN)) {
		if (gc_each_dependent(c, o->uid, orphan_dependent, &d, error) != 0)
			return -1;
		if (d.error != NULL) {
			*error = d.error;
			return -1;
		}
		remove_finalizer(r, o, FINALIZER_ORPHAN);
		return 0;
	}
	if (has_finalizer(o->body, FINALIZER_FOREGROUND)) {
		if (gc_each_dependent(c, o->uid, count_dependent, &d, error) != 0)
			return -1;
		if (d.error != NULL) {
			*error = d.error;
			return -1;
		}
		if (d.blocking == 0)
			remove_finalizer(r, o, FINALIZER_FOREGROUND);
		else
			r->waiting = xasprintf("%d dependents block its deletion", d.blocking);
	}
	return 0;
}

/* Unblocks every blocking reference of o (all references, blockOwnerDeletion false). */
static void
unblock_references(struct sync_result *r, const struct gc_object *o)
{
	cJSON *refs = cJSON_Duplicate(json_path(o->body, "metadata.ownerReferences"), 1);
	cJSON *ref;

	cJSON_ArrayForEach(ref, refs)
		json_set(ref, "blockOwnerDeletion", cJSON_CreateFalse());
	patch_metadata(r, o, "unblock-owners", "ownerReferences", refs,
	    xstrdup("a dependent deletes its own dependents in the foreground: no cycle"));
}

static int
gc_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct gc_object o;
	const cJSON *ref, *refs;
	char **drop = NULL;
	int ndrop = 0, solid = 0, waiting = 0, dangling = 0, rc, found;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	found = gc_lookup(c, key, &o, error);
	if (found <= 0)
		return found;
	out->owner_resource = o.resource;
	out->owner = event_object(&o);
	if (o.resource == NULL) {
		/* Rows of a resource this run has not discovered (yet): nothing to act with. */
		error_set(error, "garbagecollector: %s: resource %s is not known yet (retrying "
		    "after discovery)", key, o.resource_name);
		gc_object_clear(&o);
		return -1;
	}
	if (o.deleting) {
		rc = sync_deleting(c, &o, out, error);
		gc_object_clear(&o);
		return rc;
	}
	refs = json_path(o.body, "metadata.ownerReferences");
	if (cJSON_GetArraySize(refs) == 0) {
		gc_object_clear(&o);
		return 0;
	}
	cJSON_ArrayForEach(ref, refs) {
		enum owner_state state = OWNER_SOLID;

		rc = classify(c, &o, ref, out, &state, error);
		if (rc != 0) {
			free(drop);
			gc_object_clear(&o);
			if (rc > 0) {
				/* Left alone, as kube does: no retry will change it. */
				drop_confirmations(out);
				return 0;
			}
			return -1;
		}
		if (state == OWNER_SOLID) {
			solid++;
			continue;
		}
		if (state == OWNER_WAITING)
			waiting++;
		else
			dangling++;	/* absent */
		drop = xrealloc(drop, (size_t)(ndrop + 1) * sizeof *drop);
		drop[ndrop++] = (char *)json_string(ref, "uid");
	}

	if (solid > 0) {
		/* Only the dangling confirmations matter to the patch; waiting owners exist. */
		if (ndrop > 0)
			remove_references(out, &o, drop, ndrop, "remove-owner-references",
			    xasprintf("%d owners gone, %d deleting in the foreground; %d remain",
			    dangling, waiting, solid));
	} else if (waiting > 0) {
		struct dependents d = { c, out, &o, 0, 0, 0, NULL };

		if (gc_each_dependent(c, o.uid, count_dependent, &d, error) != 0 ||
		    (d.error != NULL && (*error = d.error) != NULL)) {
			free(drop);
			gc_object_clear(&o);
			return -1;
		}
		if (d.count > 0) {
			if (d.deleting_dependents)
				unblock_references(out, &o);
			delete_object(out, &o, RESTOPS_PROPAGATE_FOREGROUND, xasprintf("an owner "
			    "is deleted in the foreground and it has %d dependents", d.count));
		} else {
			delete_object(out, &o, has_finalizer(o.body, FINALIZER_ORPHAN) ?
			    RESTOPS_PROPAGATE_ORPHAN : has_finalizer(o.body, FINALIZER_FOREGROUND) ?
			    RESTOPS_PROPAGATE_FOREGROUND : RESTOPS_PROPAGATE_BACKGROUND,
			    xasprintf("owners: %d gone, %d deleting in the foreground", dangling,
			    waiting));
		}
	} else {
		delete_object(out, &o, has_finalizer(o.body, FINALIZER_ORPHAN) ?
		    RESTOPS_PROPAGATE_ORPHAN : has_finalizer(o.body, FINALIZER_FOREGROUND) ?
		    RESTOPS_PROPAGATE_FOREGROUND : RESTOPS_PROPAGATE_BACKGROUND,
		    xasprintf("all %d owners are gone", dangling));
	}
	free(drop);
	gc_object_clear(&o);
	return 0;
}

/* --- handlers ---------------------------------------------------------------------------- */

static void
enqueue_dependent(const char *uid, int blocking, void *arg)
{
	const struct controller_queue *q = arg;

	(void)blocking;
	q->add(uid, q->arg);
}

/* True when the cache answers ref of an object in namespace with an owner that is not
 * being deleted in the foreground: nothing for the collector to do about it. */
static int
reference_settled(struct controller *c, const cJSON *ref, const char *namespace)
{
	enum owner_state state;
	char *error = NULL;

	if (json_string(ref, "uid") == NULL)
		return 1;
	if (gc_owner_state(c, ref, namespace, &state, &error) != 0) {
		log_warning("%s", error);
		free(error);
		return 0;
	}
	return state == OWNER_SOLID;
}

/* True when deletion with finalizer starts between old (NULL: none) and object. */
static int
deletion_starts(const cJSON *old, const cJSON *object, const char *finalizer)
{
	return deleting_with(object, finalizer) && (old == NULL || !deleting_with(old, finalizer));
}

/* Returns object's reference to uid, or NULL. */
static const cJSON *
reference_to(const cJSON *object, const char *uid)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, json_path(object, "metadata.ownerReferences")) {
		const char *u = json_string(ref, "uid");
		if (u != NULL && strcmp(u, uid) == 0)
			return ref;
	}
	return NULL;
}

static void
gc_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	const char *uid = json_string(ev->object, "metadata.uid");
	const char *namespace = json_string(ev->object, "metadata.namespace");
	/* The previous state matters to a deletion that starts, and to references that
	 * blocked an owner; most updates (a pod's status) have neither: no parse then. */
	int need_old = ev->type != INFORMER_DELETED && ev->old_body != NULL &&
	    (json_is_set(ev->object, "metadata.deletionTimestamp") ||
	    strstr(ev->old_body, "\"blockOwnerDeletion\":true") != NULL);
	cJSON *old = need_old ? cJSON_Parse(ev->old_body) : NULL;
	const cJSON *ref;
	char *error = NULL;

	if (uid == NULL)
		goto out;
	if (namespace == NULL)
		namespace = "";
	if (ev->type == INFORMER_DELETED) {
		note_deleted(c, uid, now);
		/* Its dependents may have lost their last owner; owners deleting in the
		 * foreground may wait for it no more. */
		if (gc_each_dependent(c, uid, enqueue_dependent, (void *)q, &error) != 0) {
			log_warning("%s", error);
			free(error);
		}
		cJSON_ArrayForEach(ref, json_path(ev->object, "metadata.ownerReferences")) {
			const char *owner = json_string(ref, "uid");
			enum owner_state state;

			if (owner == NULL ||
			    gc_owner_state(c, ref, namespace, &state, &error) != 0) {
				free(error);
				error = NULL;
				continue;
			}
			if (state == OWNER_WAITING)
				q->add(owner, q->arg);
		}
		goto out;
	}
	if (deletion_starts(old, ev->object, FINALIZER_ORPHAN)) {
		q->add(uid, q->arg);
	} else if (deletion_starts(old, ev->object, FINALIZER_FOREGROUND)) {
		q->add(uid, q->arg);
		if (gc_each_dependent(c, uid, enqueue_dependent, (void *)q, &error) != 0) {
			log_warning("%s", error);
			free(error);
		}
	}
	cJSON_ArrayForEach(ref, json_path(ev->object, "metadata.ownerReferences")) {
		if (!reference_settled(c, ref, namespace)) {
			q->add(uid, q->arg);
			break;
		}
	}
	/* References that blocked an owner's deletion and no longer do. */
	cJSON_ArrayForEach(ref, json_path(old, "metadata.ownerReferences")) {
		const char *owner = json_string(ref, "uid");
		const cJSON *now_ref;

		if (owner == NULL || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref,
		    "blockOwnerDeletion")))
			continue;
		now_ref = reference_to(ev->object, owner);
		if (now_ref == NULL || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(now_ref,
		    "blockOwnerDeletion")))
			q->add(owner, q->arg);
	}
out:
	cJSON_Delete(old);
}

/* --- keys at start ---------------------------------------------------------------------- */

struct key_list {
	void (*cb)(const char *key, void *arg);
	void *arg;
};

static void
list_dependent(const char *uid, int blocking, void *arg)
{
	struct key_list *k = arg;

	(void)blocking;
	k->cb(uid, k->arg);
}

static int
gc_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct gc_state *st = c->state;
	struct key_list k = { cb, arg };
	sqlite3_stmt *stmt;
	char **foreground = NULL;
	int n = 0, rc;

	/* Every object with a reference the cache does not settle, as the handlers would
	 * have queued it when the informers first listed it. */
	stmt = controller_stmt(st->stmt[STMT_KEYS_REFERENCES]);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *uid = (const char *)sqlite3_column_text(stmt, 0);
		const char *namespace = (const char *)sqlite3_column_text(stmt, 1);
		cJSON *ref;

		if (uid == NULL || namespace == NULL)
			continue;
		ref = cJSON_CreateObject();
		for (int i = 0; i < 4; i++) {
			static const char *const members[] = { "uid", "apiVersion", "kind", "name" };
			const char *v = (const char *)sqlite3_column_text(stmt, 2 + i);

			cJSON_AddStringToObject(ref, members[i], v != NULL ? v : "");
		}
		if (!reference_settled(c, ref, namespace))
			cb(uid, arg);
		cJSON_Delete(ref);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "garbagecollector: listing owner references: %s",
		    sqlite3_errmsg(store_db(c->store)));
	stmt = controller_stmt(st->stmt[STMT_KEYS_DELETING]);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *uid = (const char *)sqlite3_column_text(stmt, 0);

		cb(uid, arg);
		if (sqlite3_column_int(stmt, 1)) {
			foreground = xrealloc(foreground, (size_t)(n + 1) * sizeof *foreground);
			foreground[n++] = xstrdup(uid);
		}
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		error_set(error, "garbagecollector: listing deletions in progress: %s",
		    sqlite3_errmsg(store_db(c->store)));
	/* The statement is reused below: the dependents are listed after it is done. */
	for (int i = 0; i < n; i++) {
		if (rc == SQLITE_DONE && gc_each_dependent(c, foreground[i], list_dependent, &k,
		    error) != 0)
			rc = SQLITE_ERROR;
		free(foreground[i]);
	}
	free(foreground);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* --- the type --------------------------------------------------------------------------- */

static int
gc_init(struct controller *c, char **error)
{
	struct gc_state *st = xcalloc(1, sizeof *st);
	const char *sql[STMT_COUNT];
	int rc;

	c->state = st;
	for (int i = 0; i < STMT_COUNT; i++)
		sql[i] = gc_union(&gc_sql[i]);
	rc = store_prepare_statements(store_db(c->store), sql, STMT_COUNT, st->stmt,
	    "garbagecollector", error);
	for (int i = 0; i < STMT_COUNT; i++)
		free((char *)sql[i]);
	return rc;
}

static void
gc_fini(struct controller *c)
{
	struct gc_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

/* None named: it hears of every resource, typed or found by discovery (metadatacache.c). */
static const char *const gc_resources[] = { NULL };

const struct controller_type garbagecollector_controller_type = {
	.name = "garbagecollector",
	.resources = gc_resources,
	.watches_metadata = 1,
	.default_workers = 20,
	.qps_scale = 2,		/* kube's: each deletion takes two requests */
	.workers_flag = "concurrent-gc-syncs",
	.workers_help = "objects the garbage collector works on at once",
	.enable_flag = "enable-garbage-collector",
	.event_component = "garbage-collector-controller",
	.client_name = "generic-garbage-collector",
	.recovery = NULL,
	.init = gc_init,
	.fini = gc_fini,
	.handle_event = gc_handle_event,
	.list_keys = gc_list_keys,
	.sync = gc_sync,
};
