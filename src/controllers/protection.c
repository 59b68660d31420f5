/*
 * protection.c - the finalizer controllers that keep a storage object while something uses
 * it: kube's persistentvolume-protection-controller (sqlkcm's pv-protection),
 * volumeattributesclass-protection-controller (volumeattributesclass-protection) and
 * persistentvolumeclaim-protection-controller (pvc-protection).
 *
 * A key is the object's name (volumes and classes are cluster-scoped), or a claim's
 * namespace/name. An admission plugin gives every new object its finalizer
 * (StorageObjectInUseProtection: kubernetes.io/pv-protection, kubernetes.io/vac-protection,
 * kubernetes.io/pvc-protection); the controller adds it to the objects that lack it
 * (made before the plugin was on) and takes it off an object being deleted once nothing
 * uses it:
 *   - a PersistentVolume is in use while its phase is Bound (the binder sets the phase;
 *     a Released volume is not in use);
 *   - a VolumeAttributesClass is in use while a cached PersistentVolume names it
 *     (spec.volumeAttributesClassName) or a claim does (spec.volumeAttributesClassName,
 *     status.currentVolumeAttributesClassName,
 *     status.modifyVolumeStatus.targetVolumeAttributesClassName), read from the cache as
 *     kube reads its informers' indexes;
 *   - a PersistentVolumeClaim is in use while a pod the kubelet may run uses it
 *     (pvcprotection_pod_uses): asked first of the cache, and when the cache knows no such
 *     pod, of a live LIST of the namespace's pods (a confirm_absent list whose items the
 *     same rule counts), as kube asks its informer then the apiserver, since a pod just
 *     made may not be cached yet. kube lists once for the claims of a namespace taken
 *     together; sqlkcm once for each claim it would free.
 * The writes are updates of the whole object at its cached resourceVersion, as kube's
 * (its roles may update these objects, not patch them), so a stale cache is refused (409)
 * and synced again. The handlers queue an object that needs the finalizer or is a
 * deletion candidate; for the classes also those a claim or volume stopped naming or
 * named when it was deleted; for the claims, as kube's enqueuePVCs, those of a pod that
 * is deleted, finished or unscheduled (a running pod frees no claim). kube runs one
 * worker for each. kube's alpha Unused condition of claims
 * (PersistentVolumeClaimUnusedSinceTime, off by default) is not written.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "controllerref.h"
#include "controllers/protection.h"
#include "json.h"
#include "resource.h"
#include "util.h"

/* What differs between the two. */
struct protection_flavor {
	const char *controller;		/* sqlkcm's name, in messages */
	const char *resource;		/* the protected objects' */
	int namespaced;			/* keys are namespace/name */
	int pods_use;			/* in use when a pod uses it (the claims): in_use_sql
					   gives the bodies of the pods that may */
	const char *finalizer;
	/* The SQL that says whether object ?1 (its name) is in use (a row with 1 or 0), or
	 * NULL: in_use_of decides from the object alone. */
	const char *in_use_sql;
	int (*in_use_of)(const cJSON *object);
	const char *in_use_reason;	/* why it is kept */
};

struct protection_state {
	const struct protection_flavor *flavor;
	sqlite3_stmt *object, *keys, *in_use;
	const struct resource *resource;
};

/* --- the rules ------------------------------------------------------------------------- */

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

int
protection_wanted(const cJSON *object, const char *finalizer)
{
	/* kube's NeedToAddFinalizer or IsDeletionCandidate. */
	return json_is_set(object, "metadata.deletionTimestamp") ==
	    has_finalizer(object, finalizer);
}

enum protection_decision
protection_decide(const cJSON *object, const char *finalizer, int in_use)
{
	int deleting = json_is_set(object, "metadata.deletionTimestamp");
	int present = has_finalizer(object, finalizer);

	if (deleting && present)
		return in_use ? PROTECTION_KEEP : PROTECTION_REMOVE;
	if (!deleting && !present)
		return PROTECTION_ADD;
	return PROTECTION_NOTHING;
}

/* Whether every container status in list is terminated or waiting (kube's notRunning). */
static int
none_running(const cJSON *list)
{
	const cJSON *s;

	cJSON_ArrayForEach(s, list) {
		if (!json_is_set(s, "state.terminated") && !json_is_set(s, "state.waiting"))
			return 0;
	}
	return 1;
}

int
pvcprotection_pod_terminated(const cJSON *pod)
{
	const char *phase = json_string(pod, "status.phase");

	/* kube's volume util IsPodTerminated. */
	if (strcmp(phase, "Failed") == 0 || strcmp(phase, "Succeeded") == 0)
		return 1;
	return json_is_set(pod, "metadata.deletionTimestamp") &&
	    none_running(json_path(pod, "status.initContainerStatuses")) &&
	    none_running(json_path(pod, "status.containerStatuses")) &&
	    none_running(json_path(pod, "status.ephemeralContainerStatuses"));
}

/* kube's podIsShutDown: deleted with a grace period of 0 (the kubelet is done with it, or
 * it was forced), only waiting to go. */
static int
pod_shut_down(const cJSON *pod)
{
	const cJSON *grace = json_path(pod, "metadata.deletionGracePeriodSeconds");

	return json_is_set(pod, "metadata.deletionTimestamp") && cJSON_IsNumber(grace) &&
	    grace->valuedouble == 0;
}

int
pvcprotection_pod_uses(const cJSON *pod, const cJSON *claim)
{
	const char *claim_name = json_string(claim, "name");
	const char *claim_owner = json_string(claim, "controllerUID");
	const char *pod_name = json_string(pod, "metadata.name");
	size_t pod_len = strlen(pod_name);
	const cJSON *v;

	/* Only a scheduled pod: the kubelet starts no pod whose claim is being deleted. */
	if (*json_string(pod, "spec.nodeName") == '\0' || *claim_name == '\0')
		return 0;
	cJSON_ArrayForEach(v, json_path(pod, "spec.volumes")) {
		if (strcmp(json_string(v, "persistentVolumeClaim.claimName"), claim_name) == 0)
			return 1;
		/* A generic ephemeral volume's claim is <pod>-<volume>, and counts only when it
		 * was made for this pod (the pod its controller) and the pod is not shut down. */
		if (json_is_set(v, "ephemeral") && !pod_shut_down(pod) &&
		    strncmp(claim_name, pod_name, pod_len) == 0 && claim_name[pod_len] == '-' &&
		    strcmp(claim_name + pod_len + 1, json_string(v, "name")) == 0 &&
		    *claim_owner != '\0' &&
		    strcmp(claim_owner, json_string(pod, "metadata.uid")) == 0)
			return 1;
	}
	return 0;
}

cJSON *
pvcprotection_claim_context(const cJSON *claim)
{
	cJSON *c = cJSON_CreateObject();
	const cJSON *ref = controllerref_of(claim);

	cJSON_AddStringToObject(c, "name", json_string(claim, "metadata.name"));
	if (ref != NULL)
		cJSON_AddStringToObject(c, "controllerUID", json_string(ref, "uid"));
	return c;
}

/* kube's pv-protection isBeingUsed: the phase Bound. */
static int
volume_bound(const cJSON *pv)
{
	return strcmp(json_string(pv, "status.phase"), "Bound") == 0;
}

/* The object with the finalizer added, or removed (every occurrence), as a new object. */
static cJSON *
with_finalizer(const cJSON *object, const char *finalizer, int add)
{
	cJSON *copy = cJSON_Duplicate(object, 1);
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(copy, "metadata");
	cJSON *list = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");

	if (add) {
		if (!cJSON_IsArray(list)) {
			cJSON_DeleteItemFromObjectCaseSensitive(meta, "finalizers");
			list = cJSON_AddArrayToObject(meta, "finalizers");
		}
		cJSON_AddItemToArray(list, cJSON_CreateString(finalizer));
		return copy;
	}
	for (int i = cJSON_GetArraySize(list) - 1; i >= 0; i--) {
		const cJSON *f = cJSON_GetArrayItem(list, i);

		if (cJSON_IsString(f) && strcmp(f->valuestring, finalizer) == 0)
			cJSON_DeleteItemFromArray(list, i);
	}
	if (cJSON_GetArraySize(list) == 0)
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "finalizers");
	return copy;
}

/* --- sync ------------------------------------------------------------------------------ */

static int
protection_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct protection_state *st = c->state;
	const struct protection_flavor *f = st->flavor;
	sqlite3_stmt *stmt;
	enum protection_decision d;
	struct action *a;
	const char *slash = strchr(key, '/');
	char *namespace = f->namespaced && slash != NULL ?
	    xstrndup(key, (size_t)(slash - key)) : xstrdup("");
	const char *name = f->namespaced && slash != NULL ? slash + 1 : key;
	cJSON *context = NULL;
	int rc, in_use = 0;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->resource;
	if (controller_read_owner(st->object, key, f->controller, out, error) != 0) {
		free(namespace);
		return -1;
	}
	if (out->owner == NULL) {
		free(namespace);
		return 0;		/* gone, or no JSON: nothing to protect */
	}
	if (json_is_set(out->owner, "metadata.deletionTimestamp")) {
		if (f->in_use_of != NULL) {
			in_use = f->in_use_of(out->owner);
		} else if (f->pods_use) {
			context = pvcprotection_claim_context(out->owner);
			stmt = controller_stmt(st->in_use);
			sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
			while (!in_use && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
				cJSON *pod = controller_column_json(stmt, 0);

				in_use = pod != NULL && pvcprotection_pod_uses(pod, context);
				cJSON_Delete(pod);
			}
			sqlite3_reset(stmt);
			if (!in_use && rc != SQLITE_DONE) {
				cJSON_Delete(context);
				free(namespace);
				return error_set(error, "%s: which pods use %s: %s", f->controller,
				    key, sqlite3_errmsg(store_db(c->store)));
			}
		} else {
			stmt = controller_stmt(st->in_use);
			sqlite3_bind_text(stmt, 1, key, -1, SQLITE_TRANSIENT);
			rc = sqlite3_step(stmt);
			in_use = rc == SQLITE_ROW && sqlite3_column_int(stmt, 0) != 0;
			sqlite3_reset(stmt);
			if (rc != SQLITE_ROW) {
				free(namespace);
				return error_set(error, "%s: is %s in use: %s", f->controller,
				    key, sqlite3_errmsg(store_db(c->store)));
			}
		}
	}
	d = protection_decide(out->owner, f->finalizer, in_use);
	if (d == PROTECTION_KEEP)
		out->waiting = xstrdup(f->in_use_reason);
	if (d != PROTECTION_ADD && d != PROTECTION_REMOVE) {
		cJSON_Delete(context);
		free(namespace);
		return 0;
	}
	if (d == PROTECTION_REMOVE && f->pods_use) {
		/* The cache knows no pod that uses it; a live list of the namespace's pods must
		 * not either. */
		a = action_append(&out->confirm_absent, &out->nconfirm_absent);
		a->type = ACTION_GET;
		a->verb = "confirm-unused";
		a->resource = resource_find("pods");
		a->namespace = xstrdup(namespace);
		a->body = context;
		context = NULL;
		a->confirm_counts = pvcprotection_pod_uses;
		a->reason = xasprintf("no cached pod uses claim %s", name);
	}
	cJSON_Delete(context);
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_UPDATE;
	a->verb = d == PROTECTION_ADD ? "add-finalizer" : "remove-finalizer";
	a->resource = st->resource;
	a->namespace = namespace;
	a->name = xstrdup(name);
	a->uid = xstrdup(out->owner_uid);
	a->body = with_finalizer(out->owner, f->finalizer, d == PROTECTION_ADD);
	a->reason = d == PROTECTION_ADD ?
	    xasprintf("not being deleted, and no %s finalizer", f->finalizer) :
	    xstrdup("being deleted, and not in use");
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
protection_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct protection_state *st = c->state;
	const char *name = json_string(ev->object, "metadata.name");
	char *key;

	(void)now;
	if (ev->resource != st->resource || ev->type == INFORMER_DELETED || *name == '\0' ||
	    !protection_wanted(ev->object, st->flavor->finalizer))
		return;
	if (!st->flavor->namespaced) {
		q->add(name, q->arg);
		return;
	}
	key = xasprintf("%s/%s", json_string(ev->object, "metadata.namespace"), name);
	q->add(key, q->arg);
	free(key);
}

/* Adds to q the claims of every volume of pod (kube's enqueuePVCs). */
static void
queue_pod_claims(const cJSON *pod, const struct controller_queue *q)
{
	const char *ns = json_string(pod, "metadata.namespace");
	const char *name = json_string(pod, "metadata.name");
	const cJSON *v;
	char *key;

	cJSON_ArrayForEach(v, json_path(pod, "spec.volumes")) {
		const char *claim = json_string(v, "persistentVolumeClaim.claimName");

		if (*claim != '\0')
			key = xasprintf("%s/%s", ns, claim);
		else if (json_is_set(v, "ephemeral"))
			key = xasprintf("%s/%s-%s", ns, name, json_string(v, "name"));
		else
			continue;
		q->add(key, q->arg);
		free(key);
	}
}

/* The claims: also those of a pod that may have stopped using them (deleted, finished,
 * or not scheduled), and those of a pod an update replaced with another of its name. */
static void
pvcprotection_handle_event(struct controller *c, const struct informer_event *ev,
    double now, const struct controller_queue *q)
{
	cJSON *old;

	if (strcmp(ev->resource->name, "pods") != 0) {
		protection_handle_event(c, ev, now, q);
		return;
	}
	if (ev->type == INFORMER_DELETED || pvcprotection_pod_terminated(ev->object) ||
	    *json_string(ev->object, "spec.nodeName") == '\0')
		queue_pod_claims(ev->object, q);
	if (ev->type != INFORMER_UPDATED || ev->old_body == NULL)
		return;
	old = cJSON_Parse(ev->old_body);
	if (old != NULL && strcmp(json_string(old, "metadata.uid"),
	    json_string(ev->object, "metadata.uid")) != 0)
		queue_pod_claims(old, q);
	cJSON_Delete(old);
}

/* Adds to q each class object names at one of paths that other (NULL: none) does not. */
static void
queue_names_dropped(const cJSON *object, const cJSON *other, const char *const *paths,
    const struct controller_queue *q)
{
	for (int i = 0; paths[i] != NULL; i++) {
		const char *name = json_string(object, paths[i]);
		int kept = 0;

		if (*name == '\0')
			continue;
		for (int j = 0; other != NULL && paths[j] != NULL && !kept; j++)
			kept = strcmp(json_string(other, paths[j]), name) == 0;
		if (!kept)
			q->add(name, q->arg);
	}
}

/* The classes: also those a claim or volume stopped naming, or named as it went (kube's
 * pvcUpdated, pvcDeleted, pvUpdated, pvDeleted). */
static void
vacprotection_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	static const char *const claim_paths[] = { "spec.volumeAttributesClassName",
		"status.currentVolumeAttributesClassName",
		"status.modifyVolumeStatus.targetVolumeAttributesClassName", NULL };
	static const char *const volume_paths[] = { "spec.volumeAttributesClassName", NULL };
	const char *const *paths;
	cJSON *old;

	if (strcmp(ev->resource->name, "volumeattributesclasses") == 0) {
		protection_handle_event(c, ev, now, q);
		return;
	}
	if (strcmp(ev->resource->name, "persistentvolumeclaims") == 0)
		paths = claim_paths;
	else if (strcmp(ev->resource->name, "persistentvolumes") == 0)
		paths = volume_paths;
	else
		return;
	if (ev->type == INFORMER_DELETED) {
		queue_names_dropped(ev->object, NULL, paths, q);
		return;
	}
	if (ev->type != INFORMER_UPDATED || ev->old_body == NULL)
		return;
	old = cJSON_Parse(ev->old_body);
	if (old != NULL)
		queue_names_dropped(old, ev->object, paths, q);
	cJSON_Delete(old);
}

static int
protection_list_keys(struct controller *c, void (*cb)(const char *key, void *arg),
    void *arg, char **error)
{
	struct protection_state *st = c->state;

	return controller_list_keys_of(st->keys, st->flavor->controller, cb, arg, error);
}

/* --- the types ------------------------------------------------------------------------- */

static const struct protection_flavor pv_flavor = {
	.controller = "pv-protection",
	.resource = "persistentvolumes",
	.finalizer = PVPROTECTION_FINALIZER,
	.in_use_of = volume_bound,
	.in_use_reason = "kept: the volume is Bound",
};

static const struct protection_flavor vac_flavor = {
	.controller = "volumeattributesclass-protection",
	.resource = "volumeattributesclasses",
	.finalizer = VACPROTECTION_FINALIZER,
	.in_use_sql = "SELECT EXISTS (SELECT 1 FROM cache_objects WHERE resource = 'persistentvolumes'"
	"   AND json_extract(body, '$.spec.volumeAttributesClassName') = ?1)"
	" OR EXISTS (SELECT 1 FROM cache_objects WHERE resource = 'persistentvolumeclaims'"
	"   AND (json_extract(body, '$.spec.volumeAttributesClassName') = ?1"
	"     OR json_extract(body, '$.status.currentVolumeAttributesClassName') = ?1"
	"     OR json_extract(body,"
	"          '$.status.modifyVolumeStatus.targetVolumeAttributesClassName') = ?1))",
	.in_use_reason = "kept: a claim or volume names the class",
};

static const struct protection_flavor pvc_flavor = {
	.controller = "pvc-protection",
	.resource = "persistentvolumeclaims",
	.finalizer = PVCPROTECTION_FINALIZER,
	.namespaced = 1,
	.pods_use = 1,
	/* The scheduled pods of namespace ?1 with a volume that may be claim ?2 (by its
	 * claimName, or a generic ephemeral volume, whose claim is <pod>-<volume>): bodies,
	 * which pvcprotection_pod_uses judges. */
	.in_use_sql = "SELECT p.body FROM cache_pods p WHERE p.namespace = ?1"
	    " AND coalesce(p.node_name, '') != ''"
	    " AND EXISTS (SELECT 1 FROM json_each(p.body, '$.spec.volumes') v"
	    "   WHERE json_extract(v.value, '$.persistentVolumeClaim.claimName') = ?2"
	    "   OR (json_extract(v.value, '$.ephemeral') IS NOT NULL"
	    "     AND p.name || '-' || json_extract(v.value, '$.name') = ?2))",
	.in_use_reason = "kept: a pod uses the claim",
};

static int
protection_init_flavor(struct controller *c, const struct protection_flavor *f,
    char **error)
{
	struct protection_state *st = xcalloc(1, sizeof *st);
	char *sql[3];
	sqlite3_stmt *stmts[3] = { NULL, NULL, NULL };
	int n = f->in_use_sql != NULL ? 3 : 2, rc;

	c->state = st;
	st->flavor = f;
	st->resource = resource_find(f->resource);
	if (st->resource == NULL)
		return error_set(error, "%s: %s is not a known resource", f->controller,
		    f->resource);
	/* The resource's name is this file's constant, not user data. A cluster-scoped
	 * object's namespace is ''. */
	sql[0] = xasprintf("SELECT uid, body FROM cache_objects WHERE resource = '%s'"
	    " AND namespace = ?1 AND name = ?2", f->resource);
	sql[1] = f->namespaced ?
	    xasprintf("SELECT namespace, name FROM cache_objects WHERE resource = '%s'"
	    " ORDER BY namespace, name", f->resource) :
	    xasprintf("SELECT name FROM cache_objects WHERE resource = '%s'"
	    " AND namespace = '' ORDER BY name", f->resource);
	sql[2] = f->in_use_sql != NULL ? xstrdup(f->in_use_sql) : NULL;
	rc = store_prepare_statements(store_db(c->store), (const char *const *)sql, n, stmts,
	    f->controller, error);
	for (int i = 0; i < 3; i++)
		free(sql[i]);
	if (rc != 0)
		return -1;
	st->object = stmts[0];
	st->keys = stmts[1];
	st->in_use = stmts[2];
	return 0;
}

static int
pvprotection_init(struct controller *c, char **error)
{
	return protection_init_flavor(c, &pv_flavor, error);
}

static int
vacprotection_init(struct controller *c, char **error)
{
	return protection_init_flavor(c, &vac_flavor, error);
}

static int
pvcprotection_init(struct controller *c, char **error)
{
	return protection_init_flavor(c, &pvc_flavor, error);
}

static void
protection_fini(struct controller *c)
{
	struct protection_state *st = c->state;

	if (st == NULL)
		return;
	sqlite3_finalize(st->object);
	sqlite3_finalize(st->keys);
	sqlite3_finalize(st->in_use);
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
	.fini = protection_fini,
	.handle_event = protection_handle_event,
	.list_keys = protection_list_keys,
	.sync = protection_sync,
};

static const char *const vacprotection_resources[] = {
	"volumeattributesclasses", "persistentvolumeclaims", "persistentvolumes", NULL
};

const struct controller_type vacprotection_controller_type = {
	.name = "volumeattributesclass-protection",
	.resources = vacprotection_resources,
	.default_workers = 1,		/* kube starts it with one */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "volumeattributesclass-protection-controller",
	.client_name = "volumeattributesclass-protection-controller",
	.recovery = NULL,
	.init = vacprotection_init,
	.fini = protection_fini,
	.handle_event = vacprotection_handle_event,
	.list_keys = protection_list_keys,
	.sync = protection_sync,
};

static const char *const pvcprotection_resources[] = {
	"persistentvolumeclaims", "pods", NULL
};

const struct controller_type pvcprotection_controller_type = {
	.name = "pvc-protection",
	.resources = pvcprotection_resources,
	.default_workers = 1,		/* kube starts it with one */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "pvc-protection-controller",
	.client_name = "pvc-protection-controller",
	.recovery = NULL,
	.init = pvcprotection_init,
	.fini = protection_fini,
	.handle_event = pvcprotection_handle_event,
	.list_keys = protection_list_keys,
	.sync = protection_sync,
};
