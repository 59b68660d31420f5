/*
 * expand.c - the volume expand controller (kube's persistentvolume-expander, client
 * expand-controller): a bound claim whose request outgrows its capacity is handed to
 * whoever resizes its volume.
 *
 * A key is a claim's namespace/name. The handlers queue a Bound claim when it is added or
 * deleted, and when an update raised its storage request or its capacity (kube's
 * handlers). The sync of a claim still cached:
 *   - reads its volume (spec.volumeName) from the cache: a volume not cached, or one whose
 *     claimRef is not this claim (namespace and uid), fails the sync, tried again with
 *     backoff (kube GETs the volume from the apiserver; here the cache is read, so that a
 *     sync does no I/O, and a volume not yet cached is one more retry);
 *   - nothing more when the request is not above the capacity and the volume has no
 *     pre-resize-capacity annotation;
 *   - a volume of an in-tree source kube migrates to CSI (awsElasticBlockStore,
 *     gcePersistentDisk, azureDisk, azureFile, cinder, vsphereVolume, portworxVolume)
 *     gets kube's Normal ExternalExpanding ("CSI migration enabled for <plugin>; waiting
 *     for external resizer to expand the pvc") and the claim the annotation
 *     volume.kubernetes.io/storage-resizer naming the CSI driver, a strategic patch of its
 *     status subresource that requires the cached resourceVersion (kube's SetClaimResizer).
 *     A claim that already names that driver is not patched again (kube sends a patch
 *     that changes nothing). A failed patch fails the sync (kube's Warning about it goes
 *     to a nil claim, so it records nothing);
 *   - any other volume, CSI ones included, gets kube's Normal ExternalExpanding "waiting
 *     for an external controller to expand this PVC": kube 1.36 gives this controller no
 *     expandable plugin, so the external resizer does the rest.
 * Not done: a flexVolume volume, which kube expands itself through a no-op plugin
 * (writing the volume's capacity and the claim's status); here it is left alone, with no
 * event. The view claims_to_expand (schema/035-expand.sql) shows each bound claim, its
 * request and capacity, and the resizer its volume asks for.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "controllers/expand.h"
#include "json.h"
#include "quantity.h"
#include "resource.h"
#include "util.h"

enum {
	STMT_CLAIM,
	STMT_VOLUME,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const expand_sql[STMT_COUNT] = {
	[STMT_CLAIM] = "SELECT uid, body FROM cache_objects"
	    " WHERE resource = 'persistentvolumeclaims' AND namespace = ?1 AND name = ?2",
	[STMT_VOLUME] = "SELECT body FROM cache_objects"
	    " WHERE resource = 'persistentvolumes' AND namespace = '' AND name = ?1",
	/* Every Bound claim. */
	[STMT_KEYS] = "SELECT namespace, name FROM cache_objects"
	    " WHERE resource = 'persistentvolumeclaims'"
	    " AND json_extract(body, '$.status.phase') = 'Bound'"
	    " ORDER BY namespace, name",
};

struct expand_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *claims;
};

/* --- the rules ------------------------------------------------------------------------- */

/* csi-translation-lib's in-tree plugins, every one of which kube 1.36 migrates. */
static const struct expand_migrated migrated[] = {
	{ "awsElasticBlockStore", "kubernetes.io/aws-ebs", "ebs.csi.aws.com" },
	{ "gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io" },
	{ "azureFile", "kubernetes.io/azure-file", "file.csi.azure.com" },
	{ "azureDisk", "kubernetes.io/azure-disk", "disk.csi.azure.com" },
	{ "cinder", "kubernetes.io/cinder", "cinder.csi.openstack.org" },
	{ "vsphereVolume", "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com" },
	{ "portworxVolume", "kubernetes.io/portworx-volume", "pxd.portworx.com" },
};

const struct expand_migrated *
expand_migrated_of(const cJSON *volume)
{
	const cJSON *spec = json_path(volume, "spec");

	for (size_t i = 0; i < sizeof migrated / sizeof migrated[0]; i++) {
		if (json_is_set(spec, migrated[i].field))
			return &migrated[i];
	}
	return NULL;
}

int
expand_claim_bound(const cJSON *claim)
{
	return strcmp(json_string(claim, "status.phase"), "Bound") == 0;
}

/* The quantity at path of o into q (absent: zero); -1 when it is no quantity. */
static int
storage_of(const cJSON *o, const char *path, struct quantity *q)
{
	const cJSON *v = json_path(o, path);

	*q = quantity_zero();
	if (v == NULL)
		return 0;
	if (!cJSON_IsString(v))
		return -1;
	return quantity_parse(v->valuestring, q);
}

int
expand_request_vs_capacity(const cJSON *claim)
{
	struct quantity req, cap;

	if (storage_of(claim, "spec.resources.requests.storage", &req) != 0 ||
	    storage_of(claim, "status.capacity.storage", &cap) != 0)
		return -2;
	return quantity_cmp(&req, &cap);
}

/* --- sync ------------------------------------------------------------------------------ */

/* The cached volume name, or NULL (*failed set when the read failed). */
static cJSON *
volume_read(struct expand_state *st, const char *name, int *failed)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_VOLUME]);
	cJSON *volume = NULL;
	int rc;

	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		volume = controller_column_json(stmt, 0);
	*failed = rc != SQLITE_ROW && rc != SQLITE_DONE;
	sqlite3_reset(stmt);
	return volume;
}

/* Appends kube's SetClaimResizer: claim's resizer annotation set to driver, through its
 * status, at its cached resourceVersion. */
static void
set_resizer(struct expand_state *st, struct sync_result *out, const char *driver)
{
	const cJSON *claim = out->owner;
	struct action *a = action_append(&out->writes, &out->nwrites);
	cJSON *meta;

	a->type = ACTION_PATCH;
	a->verb = "set-resizer";
	a->resource = st->claims;
	a->namespace = xstrdup(json_string(claim, "metadata.namespace"));
	a->name = xstrdup(json_string(claim, "metadata.name"));
	a->uid = xstrdup(json_string(claim, "metadata.uid"));
	a->subresource = "status";
	a->body = cJSON_CreateObject();
	meta = cJSON_AddObjectToObject(a->body, "metadata");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "annotations"),
	    EXPAND_RESIZER_ANNOTATION, driver);
	cJSON_AddStringToObject(meta, "resourceVersion",
	    json_string(claim, "metadata.resourceVersion"));
	a->reason = xasprintf("%s=%s", EXPAND_RESIZER_ANNOTATION, driver);
}

static int
expand_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct expand_state *st = c->state;
	const char *slash = strchr(key, '/');
	const struct expand_migrated *m;
	const cJSON *resizer;
	cJSON *volume;
	int failed, cmp;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->claims;
	if (slash == NULL)
		return 0;		/* not a claim's key */
	if (controller_read_owner(st->stmt[STMT_CLAIM], key, "persistentvolume-expander", out,
	    error) != 0)
		return -1;
	if (out->owner == NULL)
		return 0;		/* gone */

	volume = volume_read(st, json_string(out->owner, "spec.volumeName"), &failed);
	if (failed)
		return error_set(error, "persistentvolume-expander: reading volume of %s: %s",
		    key, sqlite3_errmsg(store_db(c->store)));
	if (volume == NULL) {
		out->failed = 1;	/* kube: failed to get PV */
		return 0;
	}
	if (!json_is_set(volume, "spec.claimRef") ||
	    strcmp(json_string(volume, "spec.claimRef.namespace"),
	    json_string(out->owner, "metadata.namespace")) != 0 ||
	    strcmp(json_string(volume, "spec.claimRef.uid"),
	    json_string(out->owner, "metadata.uid")) != 0) {
		out->failed = 1;	/* kube: not bound to the claim being updated */
		goto done;
	}
	cmp = expand_request_vs_capacity(out->owner);
	if (cmp == -2) {
		/* The apiserver validates both: a claim with a broken size is left alone. */
		out->failed = 1;
		goto done;
	}
	if (cmp <= 0 && json_annotation(volume, EXPAND_PRE_RESIZE_ANNOTATION) == NULL)
		goto done;

	m = expand_migrated_of(volume);
	if (m != NULL) {
		sync_result_add_event(out, "Normal", "ExternalExpanding",
		    xasprintf("CSI migration enabled for %s; waiting for external resizer to "
		    "expand the pvc", m->plugin));
		resizer = json_annotation(out->owner, EXPAND_RESIZER_ANNOTATION);
		if (!cJSON_IsString(resizer) || strcmp(resizer->valuestring, m->driver) != 0)
			set_resizer(st, out, m->driver);
		goto done;
	}
	if (json_is_set(volume, "spec.flexVolume"))
		goto done;		/* kube expands it itself: not done here */
	sync_result_add_event(out, "Normal", "ExternalExpanding",
	    xstrdup("waiting for an external controller to expand this PVC"));
done:
	cJSON_Delete(volume);
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
queue_claim(const cJSON *claim, const struct controller_queue *q)
{
	char *key;

	if (!expand_claim_bound(claim))
		return;
	key = xasprintf("%s/%s", json_string(claim, "metadata.namespace"),
	    json_string(claim, "metadata.name"));
	q->add(key, q->arg);
	free(key);
}

/* Whether the storage at path grew from old to new (a size that is no quantity: no). */
static int
grew(const cJSON *old, const cJSON *new, const char *path)
{
	struct quantity a, b;

	return storage_of(old, path, &a) == 0 && storage_of(new, path, &b) == 0 &&
	    quantity_cmp(&b, &a) > 0;
}

static void
expand_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct expand_state *st = c->state;
	cJSON *old;
	int raised;

	(void)now;
	if (ev->resource != st->claims)
		return;
	if (ev->type != INFORMER_UPDATED || ev->old_body == NULL) {
		queue_claim(ev->object, q);
		return;
	}
	old = cJSON_Parse(ev->old_body);
	raised = old == NULL ||
	    grew(old, ev->object, "spec.resources.requests.storage") ||
	    grew(old, ev->object, "status.capacity.storage");
	cJSON_Delete(old);
	if (raised)
		queue_claim(ev->object, q);
}

static int
expand_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct expand_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "persistentvolume-expander", cb,
	    arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
expand_init(struct controller *c, char **error)
{
	struct expand_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->claims = resource_find("persistentvolumeclaims");
	if (st->claims == NULL || resource_find("persistentvolumes") == NULL)
		return error_set(error, "persistentvolume-expander: claims or volumes are not "
		    "known resources");
	return store_prepare_statements(store_db(c->store), expand_sql, STMT_COUNT,
	    st->stmt, "persistentvolume-expander", error);
}

static void
expand_fini(struct controller *c)
{
	struct expand_state *st = c->state;

	if (st == NULL)
		return;
	for (int i = 0; i < STMT_COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	free(st);
	c->state = NULL;
}

static const char *const expand_resources[] = {
	"persistentvolumeclaims", "persistentvolumes", NULL
};

const struct controller_type expand_controller_type = {
	.name = "persistentvolume-expander",
	.resources = expand_resources,
	.default_workers = 10,		/* kube's fixed worker count: no flag */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "volume_expand",
	.client_name = "expand-controller",
	.recovery = NULL,
	.init = expand_init,
	.fini = expand_fini,
	.handle_event = expand_handle_event,
	.list_keys = expand_list_keys,
	.sync = expand_sync,
};
