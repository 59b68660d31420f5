/*
 * pvprotection.c - the PersistentVolume protection controller (kube's
 * persistentvolume-protection-controller).
 *
 * A key is a PersistentVolume's name. The StorageObjectInUseProtection admission plugin
 * gives every new volume the kubernetes.io/pv-protection finalizer; this controller adds
 * it to the volumes that lack it (those made before the plugin was on) and takes it off a
 * volume being deleted once the volume is no longer in use, which for kube is: its phase
 * is not Bound (the binder sets the phase; a Released volume is not in use). Both writes
 * are updates of the whole volume at its cached resourceVersion, as kube's (its role may
 * update persistentvolumes, not patch them), so a stale cache is refused (409) and synced
 * again. The handlers queue a volume when it is added or changes; kube runs one worker.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "controllers/pvprotection.h"
#include "json.h"
#include "resource.h"
#include "util.h"

struct pvprotection_state {
	sqlite3_stmt *volume, *keys;
	const struct resource *pvs;
};

/* --- the rules ------------------------------------------------------------------------- */

static int
has_finalizer(const cJSON *pv)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, json_path(pv, "metadata.finalizers")) {
		if (cJSON_IsString(f) && strcmp(f->valuestring, PVPROTECTION_FINALIZER) == 0)
			return 1;
	}
	return 0;
}

enum pvprotection_decision
pvprotection_decide(const cJSON *pv)
{
	int deleting = json_is_set(pv, "metadata.deletionTimestamp");
	int finalizer = has_finalizer(pv);

	/* kube's IsDeletionCandidate, then isBeingUsed (the phase Bound). */
	if (deleting && finalizer)
		return strcmp(json_string(pv, "status.phase"), "Bound") == 0 ?
		    PVPROTECTION_KEEP : PVPROTECTION_REMOVE;
	/* kube's NeedToAddFinalizer. */
	if (!deleting && !finalizer)
		return PVPROTECTION_ADD;
	return PVPROTECTION_NOTHING;
}

/* The volume with the finalizer added or removed (every occurrence), as a new object. */
static cJSON *
with_finalizer(const cJSON *pv, int add)
{
	cJSON *copy = cJSON_Duplicate(pv, 1);
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(copy, "metadata");
	cJSON *list = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");

	if (add) {
		if (!cJSON_IsArray(list)) {
			cJSON_DeleteItemFromObjectCaseSensitive(meta, "finalizers");
			list = cJSON_AddArrayToObject(meta, "finalizers");
		}
		cJSON_AddItemToArray(list, cJSON_CreateString(PVPROTECTION_FINALIZER));
		return copy;
	}
	for (int i = cJSON_GetArraySize(list) - 1; i >= 0; i--) {
		const cJSON *f = cJSON_GetArrayItem(list, i);

		if (cJSON_IsString(f) && strcmp(f->valuestring, PVPROTECTION_FINALIZER) == 0)
			cJSON_DeleteItemFromArray(list, i);
	}
	if (cJSON_GetArraySize(list) == 0)
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "finalizers");
	return copy;
}

/* --- sync ------------------------------------------------------------------------------ */

static int
pvprotection_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct pvprotection_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->volume);
	enum pvprotection_decision d;
	struct action *a;
	int rc;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->pvs;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = controller_column_strdup(stmt, 0);
		out->owner = controller_column_json(stmt, 1);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "pv-protection: reading volume %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
	if (out->owner == NULL)
		return 0;		/* gone, or no JSON: nothing to protect */
	d = pvprotection_decide(out->owner);
	if (d != PVPROTECTION_ADD && d != PVPROTECTION_REMOVE) {
		if (d == PVPROTECTION_KEEP)
			out->waiting = xstrdup("kept: the volume is Bound");
		return 0;
	}
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_UPDATE;
	a->verb = d == PVPROTECTION_ADD ? "add-finalizer" : "remove-finalizer";
	a->resource = st->pvs;
	a->namespace = xstrdup("");
	a->name = xstrdup(key);
	a->uid = xstrdup(out->owner_uid);
	a->body = with_finalizer(out->owner, d == PVPROTECTION_ADD);
	a->reason = xstrdup(d == PVPROTECTION_ADD ? "not being deleted, and no "
	    PVPROTECTION_FINALIZER " finalizer" : "being deleted, and not Bound");
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
pvprotection_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	const char *name = json_string(ev->object, "metadata.name");

	(void)c;
	(void)now;
	/* kube's handler queues a volume that needs the finalizer added or removed. */
	if (ev->type == INFORMER_DELETED || *name == '\0')
		return;
	if (pvprotection_decide(ev->object) != PVPROTECTION_NOTHING)
		q->add(name, q->arg);
}

static int
pvprotection_list_keys(struct controller *c, void (*cb)(const char *key, void *arg),
    void *arg, char **error)
{
	struct pvprotection_state *st = c->state;

	return controller_list_keys_of(st->keys, "pv-protection", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
pvprotection_init(struct controller *c, char **error)
{
	struct pvprotection_state *st = xcalloc(1, sizeof *st);
	static const char *const sql[] = {
		"SELECT uid, body FROM cache_objects WHERE resource = 'persistentvolumes'"
		" AND namespace = '' AND name = ?1",
		"SELECT name FROM cache_objects WHERE resource = 'persistentvolumes'"
		" AND namespace = '' ORDER BY name",
	};
	sqlite3_stmt *stmts[2] = { NULL, NULL };

	c->state = st;
	st->pvs = resource_find("persistentvolumes");
	if (st->pvs == NULL)
		return error_set(error, "pv-protection: persistentvolumes is not a known "
		    "resource");
	if (store_prepare_statements(store_db(c->store), sql, 2, stmts, "pv-protection",
	    error) != 0)
		return -1;
	st->volume = stmts[0];
	st->keys = stmts[1];
	return 0;
}

static void
pvprotection_fini(struct controller *c)
{
	struct pvprotection_state *st = c->state;

	if (st == NULL)
		return;
	sqlite3_finalize(st->volume);
	sqlite3_finalize(st->keys);
	free(st);
	c->state = NULL;
}

static const char *const pvprotection_resources[] = { "persistentvolumes", NULL };

const struct controller_type pvprotection_controller_type = {
	.name = "pv-protection",
	.resources = pvprotection_resources,
	.default_workers = 1,		/* kube starts it with one */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "pv-protection-controller",
	.client_name = "pv-protection-controller",
	.recovery = NULL,
	.init = pvprotection_init,
	.fini = pvprotection_fini,
	.handle_event = pvprotection_handle_event,
	.list_keys = pvprotection_list_keys,
	.sync = pvprotection_sync,
};
