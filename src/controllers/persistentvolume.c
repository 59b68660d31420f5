/*
 * persistentvolume.c - the PersistentVolume binder (kube's persistentvolume-binder-
 * controller): it binds PersistentVolumeClaims to PersistentVolumes, keeps the phases of
 * both, hands dynamic provisioning over to external (CSI) provisioners, and reclaims the
 * volumes whose claims are gone.
 *
 * A key is a claim ("namespace/name") or a volume ("name": a volume's name has no slash).
 *
 * A claim's sync (kube's syncClaim):
 *   - without the pv.kubernetes.io/bind-completed annotation it is unbound. Without
 *     spec.volumeName it gets the best volume as schema/032's
 *     persistentvolume_claim_candidates orders them (the fewest access modes first, a
 *     volume pre-bound to it before any other, else the smallest that fits), read
 *     through the indexes of persistentvolume_match: the volumes pre-bound to it and the
 *     Available ones of its class, each checked exactly (quantities, access modes, the
 *     label selector). A volume just chosen for another claim is skipped until the
 *     cache shows it bound (10 s at most): kube's controller writes its bindings into
 *     its own cache. None: a claim without a class gets the
 *     default StorageClass (the newest, then the first by name), retroactively; a class
 *     that waits for its first consumer waits (event WaitForFirstConsumer, or
 *     WaitForPodScheduled naming the unscheduled pods that use it) until the scheduler
 *     sets volume.kubernetes.io/selected-node; a claim with a class is handed to its
 *     provisioner (annotations volume.kubernetes.io/storage-provisioner and the beta
 *     one, event ExternalProvisioning, every sync as kube does); a claim without a class
 *     gets FailedBinding. With spec.volumeName it binds to that volume if it is free and
 *     fits (else VolumeMismatch) or already names the claim (else FailedBinding).
 *   - with the annotation it is bound: its volume gone or unnamed makes it Lost
 *     (ClaimLost), a volume bound to another claim makes it Lost (ClaimMisbound), else
 *     the binding is completed again where a step is missing.
 * Binding is kube's four steps, as writes in order (each stops the rest if it fails):
 * the volume's claimRef (and pv.kubernetes.io/bound-by-controller when the controller
 * chose it), the volume's phase Bound, the claim's volumeName and annotations
 * (bind-completed, and bound-by-controller when it chose), the claim's status (Bound,
 * the volume's access modes and capacity). The first write to each object carries the
 * cached resourceVersion, so that a cache that lags makes a conflict, not a wrong write.
 *
 * A volume's sync (kube's syncVolume): without a claimRef (or with one without a uid) it
 * is Available; with a claim that is gone it is Released, then reclaimed by its policy;
 * with a claim bound to it, Bound; with a claim bound elsewhere it is unbound (Available
 * again), or released when it was provisioned for the claim with policy Delete. A claim
 * absent from the cache (or of another uid) is confirmed absent by a live GET before the
 * volume is released, as kube reads it live. The apiserver sets a volume's
 * status.lastPhaseTransitionTime whenever its phase changes.
 *
 * Reclaim: Retain leaves a Released volume as it is. Delete of a volume provisioned by
 * an external provisioner (pv.kubernetes.io/provisioned-by not a kubernetes.io/ plugin,
 * or a CSI volume) is the provisioner's, as in kube; of a volume of an in-tree plugin
 * kube's controller-manager does not delete, the volume Failed with VolumeFailedDelete
 * and kube's message. Recycle of a volume no in-tree recycler takes: Failed with
 * VolumeFailedRecycle; of a hostPath or NFS volume, kube's recycler pod: the pod of
 * --pv-recycler-pod-template-filepath-{hostpath,nfs} (kube's own by default) named
 * recycler-for-<volume>, in the template's namespace, mounting the volume's path or
 * export, its activeDeadlineSeconds the flags' increment per GiB, at least their
 * minimum; the pods informer brings its changes (the handler queues the volume), and
 * when it has Succeeded it is deleted, the volume gets VolumeRecycled and is Available
 * again (unbound as kube's unbindVolume does); Failed, or deleted before it ended, the
 * volume is Failed (VolumeFailedRecycle, "Recycle failed: ...") and the next sync
 * recycles again, as kube's does. A pod of that name this controller did not create (an
 * earlier run's) is deleted and the recycle fails ("old recycler pod found"), as kube's
 * create meets AlreadyExists. Not done: the pod's own Events forwarded to the volume
 * (kube's RecyclerPod events, read by a watch of Events, which sqlkcm does not cache);
 * a failed create of the pod is retried with backoff, where kube marks the volume
 * Failed. The deleter of hostPath volumes under /tmp (kube deletes the directory on its
 * own host) and the hostPath provisioner (--enable-hostpath-provisioner, off by default
 * in kube) are not done.
 *
 * CSI migration (kube's updateClaimMigrationAnnotations and
 * updateVolumeMigrationAnnotationsAndFinalizers, the first step of each sync): an object
 * whose provisioner (a claim's storage-provisioner annotation, else the beta one; a
 * volume's provisioned-by) is an in-tree plugin kube 1.36 has migrated gets
 * pv.kubernetes.io/migrated-to naming its CSI driver, and loses it when the provisioner
 * is not migrated; a dynamically provisioned volume of a migrated plugin loses the
 * in-tree finalizer kubernetes.io/pv-controller, one of another in-tree plugin gets it
 * with policy Delete and loses it with Retain or Recycle, and loses the external
 * provisioner's finalizer. Such a write ends the sync: the informer's update of the
 * object brings it back, where kube's goes on with the object its update returned. A
 * claim of a migrated in-tree provisioner is handed to the CSI driver's name.
 *
 * Metrics (kube's pkg/controller/volume/persistentvolume/metrics): the pv_collector_*
 * gauges, counted from the cache at each scrape (volumes by plugin and mode, bound and
 * unbound by class; claims bound and unbound by namespace, class and attributes class);
 * retroactive_storageclass_total and _errors_total (the default class given);
 * volume_operation_errors_total and the deprecated volume_operation_total_errors (a
 * failed hand-over to a provisioner). Not done: volume_operation_total_seconds (the time
 * from the hand-over to the binding, and from a Delete reclaim to the volume's deletion).
 *
 * Every claim and volume synced is synced again after --pvclaimbinder-sync-period (15 s),
 * kube's resync. The informer handlers queue a claim and, when it is deleted, the volume
 * it named; a volume and the claim its claimRef names (kube's syncVolume queues that
 * claim; a sync here does no queueing).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "controllers/persistentvolume.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "quantity.h"
#include "resource.h"
#include "selector.h"
#include "util.h"

#define ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"
#define ANN_BOUND_BY_CONTROLLER "pv.kubernetes.io/bound-by-controller"
#define ANN_PROVISIONED_BY "pv.kubernetes.io/provisioned-by"
#define ANN_STORAGE_PROVISIONER "volume.kubernetes.io/storage-provisioner"
#define ANN_BETA_STORAGE_PROVISIONER "volume.beta.kubernetes.io/storage-provisioner"
#define ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"
#define ANN_BETA_CLASS "volume.beta.kubernetes.io/storage-class"
#define ANN_MIGRATED_TO "pv.kubernetes.io/migrated-to"
#define ANN_PRE_RESIZE_CAPACITY "volume.alpha.kubernetes.io/pre-resize-capacity"

/* The finalizers that keep a dynamically provisioned volume of policy Delete until its
 * storage is deleted: the in-tree plugins' (kube's binder) and the external
 * provisioners'. */
#define FINALIZER_IN_TREE "kubernetes.io/pv-controller"
#define FINALIZER_EXTERNAL "external-provisioner.volume.kubernetes.io/finalizer"

/* The in-tree plugins whose volumes kube 1.36 has migrated to CSI drivers, and the
 * drivers (kube's csi-translation-lib). */
static const struct {
	const char *in_tree, *csi;
} pv_migrated[] = {
	{ "kubernetes.io/aws-ebs", "ebs.csi.aws.com" },
	{ "kubernetes.io/gce-pd", "pd.csi.storage.gke.io" },
	{ "kubernetes.io/azure-disk", "disk.csi.azure.com" },
	{ "kubernetes.io/azure-file", "file.csi.azure.com" },
	{ "kubernetes.io/cinder", "cinder.csi.openstack.org" },
	{ "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com" },
	{ "kubernetes.io/portworx-volume", "pxd.portworx.com" },
};

/* The expressions of schema/032's persistentvolume_match that its indexes hold, written
 * as there so that SQLite reads the indexes (a view's columns do not reach them). */
#define PV_CLASS_SQL \
	"coalesce(json_extract(body, " \
	"'$.metadata.annotations.\"volume.beta.kubernetes.io/storage-class\"')," \
	" json_extract(body, '$.spec.storageClassName'), '')"
#define PV_MODES_SQL "json_array_length(json_extract(body, '$.spec.accessModes'))"
#define PV_CAPACITY_SQL \
	"(CASE" \
	" WHEN json_extract(body, '$.spec.capacity.storage') GLOB '*[KMGTPE]i' THEN" \
	" CAST(substr(json_extract(body, '$.spec.capacity.storage'), 1," \
	" length(json_extract(body, '$.spec.capacity.storage')) - 2) AS REAL) *" \
	" CASE substr(json_extract(body, '$.spec.capacity.storage'), -2, 1)" \
	" WHEN 'K' THEN 1024.0 WHEN 'M' THEN 1048576.0" \
	" WHEN 'G' THEN 1073741824.0 WHEN 'T' THEN 1099511627776.0" \
	" WHEN 'P' THEN 1125899906842624.0 ELSE 1152921504606846976.0 END" \
	" WHEN json_extract(body, '$.spec.capacity.storage') GLOB '*[0-9.][kMGTPEmun]' THEN" \
	" CAST(substr(json_extract(body, '$.spec.capacity.storage'), 1," \
	" length(json_extract(body, '$.spec.capacity.storage')) - 1) AS REAL) *" \
	" CASE substr(json_extract(body, '$.spec.capacity.storage'), -1, 1)" \
	" WHEN 'k' THEN 1e3 WHEN 'M' THEN 1e6 WHEN 'G' THEN 1e9" \
	" WHEN 'T' THEN 1e12 WHEN 'P' THEN 1e15 WHEN 'E' THEN 1e18 WHEN 'm' THEN 1e-3" \
	" WHEN 'u' THEN 1e-6 ELSE 1e-9 END" \
	" ELSE CAST(json_extract(body, '$.spec.capacity.storage') AS REAL) END)"

/* How long a volume the controller chose for a claim is kept from the others while the
 * cache does not show it bound, in seconds. */
#define PV_RESERVE_SECONDS 10.0

enum {
	STMT_CLAIM,
	STMT_VOLUME,
	STMT_CLASS,
	STMT_DEFAULT_CLASS,
	STMT_PREBOUND,
	STMT_FREE,
	STMT_CLAIM_PODS,
	STMT_CLAIM_KEYS,
	STMT_VOLUME_KEYS,
	STMT_POD,
	STMT_PV_COUNTS,
	STMT_PVC_COUNTS,
	STMT_COUNT
};

static const char *const pv_sql[STMT_COUNT] = {
	/* Claim ?2 of namespace ?1: uid, resourceVersion, body. */
	[STMT_CLAIM] =
	    "SELECT uid, resource_version, body FROM cache_objects"
	    " WHERE resource = 'persistentvolumeclaims' AND namespace = ?1 AND name = ?2",
	/* Volume ?1: uid, resourceVersion, body. */
	[STMT_VOLUME] =
	    "SELECT uid, resource_version, body FROM cache_objects"
	    " WHERE resource = 'persistentvolumes' AND namespace = '' AND name = ?1",
	/* StorageClass ?1: its body. */
	[STMT_CLASS] =
	    "SELECT body FROM cache_objects"
	    " WHERE resource = 'storageclasses' AND namespace = '' AND name = ?1",
	/* The default StorageClass: of those annotated default (the GA or the beta
	 * annotation "true"), the newest, then the first by name (kube's GetDefaultClass). */
	[STMT_DEFAULT_CLASS] =
	    "SELECT name FROM cache_objects WHERE resource = 'storageclasses'"
	    " AND namespace = '' AND (json_extract(body, '$.metadata.annotations."
	    "\"storageclass.kubernetes.io/is-default-class\"') = 'true'"
	    " OR json_extract(body, '$.metadata.annotations."
	    "\"storageclass.beta.kubernetes.io/is-default-class\"') = 'true')"
	    " ORDER BY creation_timestamp DESC, name LIMIT 1",
	/* The volumes whose claimRef names claim ?2 of namespace ?1, by schema/032's index
	 * persistentvolume_claim_ref: name, access modes counted, body. */
	[STMT_PREBOUND] =
	    "SELECT name, " PV_MODES_SQL ", body FROM cache_objects"
	    " INDEXED BY persistentvolume_claim_ref"
	    " WHERE resource = 'persistentvolumes' AND namespace = ''"
	    " AND json_extract(body, '$.spec.claimRef.name') = ?2"
	    " AND json_extract(body, '$.spec.claimRef.namespace') = ?1"
	    " ORDER BY 2, name",
	/* The Available volumes of class ?1 in the order the binder takes them (the fewest
	 * access modes, then the smallest): name, access modes counted, body. Found by
	 * schema/032's index persistentvolume_free (named: without statistics SQLite would
	 * rather read every volume), then sorted. */
	[STMT_FREE] =
	    "SELECT name, " PV_MODES_SQL ", body FROM cache_objects"
	    " INDEXED BY persistentvolume_free"
	    " WHERE resource = 'persistentvolumes' AND namespace = ''"
	    " AND json_extract(body, '$.status.phase') = 'Available'"
	    " AND " PV_CLASS_SQL " = ?1"
	    " ORDER BY 2, " PV_CAPACITY_SQL ", name",
	/* The pods of namespace ?1 that use claim ?2 (by a persistentVolumeClaim volume, or
	 * a generic ephemeral one, whose claim is <pod>-<volume>): name, nodeName, phase. */
	[STMT_CLAIM_PODS] =
	    "SELECT p.name, coalesce(p.node_name, ''), coalesce(p.phase, '') FROM cache_pods p"
	    " WHERE p.namespace = ?1 AND EXISTS (SELECT 1 FROM json_each(p.body, '$.spec.volumes') v"
	    " WHERE json_extract(v.value, '$.persistentVolumeClaim.claimName') = ?2"
	    " OR (json_extract(v.value, '$.ephemeral') IS NOT NULL"
	    " AND p.name || '-' || json_extract(v.value, '$.name') = ?2))"
	    " ORDER BY p.name",
	[STMT_CLAIM_KEYS] =
	    "SELECT namespace, name FROM cache_objects WHERE resource = 'persistentvolumeclaims'"
	    " ORDER BY namespace, name",
	[STMT_VOLUME_KEYS] =
	    "SELECT name FROM cache_objects WHERE resource = 'persistentvolumes'"
	    " AND namespace = '' ORDER BY name",
	/* Pod ?2 of namespace ?1 (a recycler pod): uid, resourceVersion, body. */
	[STMT_POD] =
	    "SELECT uid, resource_version, body FROM cache_pods WHERE namespace = ?1 AND name = ?2",
	/* The volumes counted for kube's pv_collector gauges: each volume plugin kube's
	 * controller-manager has (hostPath, NFS, FC, iSCSI, CSI and its driver) that the
	 * volume's source names, the volume mode, the class (spec.storageClassName), whether
	 * Bound; how many. */
	[STMT_PV_COUNTS] =
	    "SELECT CASE WHEN (json_type(body, '$.spec.hostPath') IS 'object')"
	    " + (json_type(body, '$.spec.nfs') IS 'object')"
	    " + (json_type(body, '$.spec.fc') IS 'object')"
	    " + (json_type(body, '$.spec.iscsi') IS 'object')"
	    " + (json_type(body, '$.spec.csi') IS 'object') <> 1 THEN 'N/A'"
	    " WHEN json_type(body, '$.spec.hostPath') = 'object' THEN 'kubernetes.io/host-path'"
	    " WHEN json_type(body, '$.spec.nfs') = 'object' THEN 'kubernetes.io/nfs'"
	    " WHEN json_type(body, '$.spec.fc') = 'object' THEN 'kubernetes.io/fc'"
	    " WHEN json_type(body, '$.spec.iscsi') = 'object' THEN 'kubernetes.io/iscsi'"
	    " ELSE 'kubernetes.io/csi:' || coalesce(json_extract(body, '$.spec.csi.driver'), '')"
	    " END AS plugin,"
	    " coalesce(json_extract(body, '$.spec.volumeMode'), 'Filesystem') AS mode,"
	    " coalesce(json_extract(body, '$.spec.storageClassName'), '') AS class,"
	    " coalesce(json_extract(body, '$.status.phase'), '') = 'Bound' AS bound, count(*)"
	    " FROM cache_objects WHERE resource = 'persistentvolumes' AND namespace = ''"
	    " GROUP BY plugin, mode, class, bound",
	/* The claims counted for kube's pv_collector gauges: namespace, class (the beta
	 * annotation, else spec.storageClassName), volume attributes class, whether Bound;
	 * how many. */
	[STMT_PVC_COUNTS] =
	    "SELECT namespace, coalesce(json_extract(body, '$.metadata.annotations."
	    "\"volume.beta.kubernetes.io/storage-class\"'),"
	    " json_extract(body, '$.spec.storageClassName'), '') AS class,"
	    " coalesce(json_extract(body, '$.spec.volumeAttributesClassName'), '') AS vac,"
	    " coalesce(json_extract(body, '$.status.phase'), '') = 'Bound' AS bound, count(*)"
	    " FROM cache_objects WHERE resource = 'persistentvolumeclaims'"
	    " GROUP BY namespace, class, vac, bound",
};

/* A volume the controller chose for a claim (kube's controller writes its bindings into
 * its cache at once; sqlkcm's cache shows them once the informer does): until the cache
 * shows it bound, or PV_RESERVE_SECONDS have passed, no other claim is matched to it. */
struct pv_reservation {
	char *volume;
	char *claim;		/* namespace/name */
	double at;
};

/* A volume being recycled: the recycler pod this controller created for it (its uid once
 * the cache has shown it). kube's recycler watches the pod it created until it ends; a
 * pod of the name that this controller did not create is an old recycler's. */
struct pv_recycling {
	char *volume;
	char *pod_uid;		/* NULL until seen */
};

/* A recycler plugin's configuration (kube's VolumeConfig of the hostPath and NFS
 * plugins): the pod template and the timeout's minimum and increment per GiB. */
struct pv_recycler {
	cJSON *template;
	long long minimum_timeout, timeout_increment;
};

struct pv_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *claims, *volumes, *pods;
	double period;
	int dynamic_provisioning;
	struct pv_reservation *reserved;
	int nreserved;
	struct pv_recycler hostpath, nfs;
	struct pv_recycling *recycling;
	int nrecycling;
	/* kube's metrics of the binder (NULL without a registry: plan, replay). */
	struct metrics_family *total_pv, *bound_pv, *unbound_pv, *bound_pvc, *unbound_pvc;
	struct metrics_family *operation_errors, *operation_errors_deprecated;
	struct metrics_series *retroactive, *retroactive_errors;
	struct metrics_family *operation_seconds;
	/* kube's operationTimestamps: when each provisioning (by claim key) or deletion (by
	 * volume name) handed to a provisioner began, for volume_operation_total_seconds. */
	struct pv_operation {
		char *key, *plugin;
		const char *operation;	/* "provision" or "delete" */
		double start;
	} *operations;
	int noperations;
};

/* kube's OperationStartTimeCache.AddIfNotExist (daemon only: the metric is its). */
static void
operation_begin(struct pv_state *st, const char *key, const char *plugin,
    const char *operation, double now)
{
	if (st->operation_seconds == NULL)
		return;
	for (int i = 0; i < st->noperations; i++) {
		if (strcmp(st->operations[i].key, key) == 0)
			return;
	}
	st->operations = xrealloc(st->operations, (size_t)(st->noperations + 1) *
	    sizeof *st->operations);
	st->operations[st->noperations++] = (struct pv_operation){ xstrdup(key),
	    xstrdup(plugin), operation, now };
}

/* kube's RecordMetric on success (observe, if key's operation began, how long it took)
 * or its Delete (observe nothing). */
static void
operation_end(struct pv_state *st, const char *key, double now, int observe)
{
	for (int i = 0; i < st->noperations; i++) {
		struct pv_operation *o = &st->operations[i];

		if (strcmp(o->key, key) != 0)
			continue;
		if (observe) {
			const char *labels[] = { o->plugin, o->operation, NULL };

			metrics_histogram_observe(metrics_series_get(st->operation_seconds,
			    labels), now >= o->start ? now - o->start : 0);
		}
		free(o->key);
		free(o->plugin);
		st->operations[i] = st->operations[--st->noperations];
		return;
	}
}

/* Forgets the reservations older than PV_RESERVE_SECONDS at now. */
static void
reservations_expire(struct pv_state *st, double now)
{
	int j = 0;

	for (int i = 0; i < st->nreserved; i++) {
		if (now - st->reserved[i].at < PV_RESERVE_SECONDS && now >= st->reserved[i].at) {
			st->reserved[j++] = st->reserved[i];
			continue;
		}
		free(st->reserved[i].volume);
		free(st->reserved[i].claim);
	}
	st->nreserved = j;
}

/* Whether volume is reserved for another claim than claim at now. */
static int
reserved_for_other(struct pv_state *st, const char *volume, const char *claim, double now)
{
	reservations_expire(st, now);
	for (int i = 0; i < st->nreserved; i++) {
		if (strcmp(st->reserved[i].volume, volume) == 0)
			return strcmp(st->reserved[i].claim, claim) != 0;
	}
	return 0;
}

/* Reserves volume for claim at now. */
static void
reserve(struct pv_state *st, const char *volume, const char *claim, double now)
{
	struct pv_reservation *r;

	for (int i = 0; i < st->nreserved; i++) {
		if (strcmp(st->reserved[i].volume, volume) == 0) {
			free(st->reserved[i].claim);
			st->reserved[i].claim = xstrdup(claim);
			st->reserved[i].at = now;
			return;
		}
	}
	st->reserved = xrealloc(st->reserved, ((size_t)st->nreserved + 1) *
	    sizeof *st->reserved);
	r = &st->reserved[st->nreserved++];
	r->volume = xstrdup(volume);
	r->claim = xstrdup(claim);
	r->at = now;
}

/* The recycling of volume, or NULL. */
static struct pv_recycling *
recycling_find(struct pv_state *st, const char *volume)
{
	for (int i = 0; i < st->nrecycling; i++) {
		if (strcmp(st->recycling[i].volume, volume) == 0)
			return &st->recycling[i];
	}
	return NULL;
}

/* Records that volume's recycler pod is being created. */
static struct pv_recycling *
recycling_start(struct pv_state *st, const char *volume)
{
	struct pv_recycling *r = recycling_find(st, volume);

	if (r != NULL)
		return r;
	st->recycling = xrealloc(st->recycling, ((size_t)st->nrecycling + 1) *
	    sizeof *st->recycling);
	r = &st->recycling[st->nrecycling++];
	r->volume = xstrdup(volume);
	r->pod_uid = NULL;
	return r;
}

/* Forgets volume's recycling. */
static void
recycling_forget(struct pv_state *st, const char *volume)
{
	struct pv_recycling *r = recycling_find(st, volume);

	if (r == NULL)
		return;
	free(r->volume);
	free(r->pod_uid);
	*r = st->recycling[--st->nrecycling];
}

/* One cached object: uid, resourceVersion and body (NULL: not cached). */
struct pv_object {
	char *uid;
	char *rv;
	cJSON *body;
};

static void
pv_object_clear(struct pv_object *o)
{
	free(o->uid);
	free(o->rv);
	cJSON_Delete(o->body);
	memset(o, 0, sizeof *o);
}

/* Reads the object stmt (bound) finds into *o; 0 (o->body NULL when absent), or -1. */
static int
pv_read(struct controller *c, sqlite3_stmt *stmt, struct pv_object *o, const char *what,
    char **error)
{
	int rc = sqlite3_step(stmt);

	memset(o, 0, sizeof *o);
	if (rc == SQLITE_ROW) {
		o->uid = controller_column_strdup(stmt, 0);
		o->rv = controller_column_strdup(stmt, 1);
		o->body = controller_column_json(stmt, 2);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "persistentvolume-binder: reading %s: %s", what,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_ROW && o->body == NULL) {
		pv_object_clear(o);
		return error_set(error, "persistentvolume-binder: %s: cached body is not JSON",
		    what);
	}
	return 0;
}

static int
pv_read_claim(struct controller *c, const char *namespace, const char *name,
    struct pv_object *o, char **error)
{
	struct pv_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_CLAIM]);

	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	return pv_read(c, stmt, o, "claim", error);
}

static int
pv_read_volume(struct controller *c, const char *name, struct pv_object *o, char **error)
{
	struct pv_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_VOLUME]);

	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_TRANSIENT);
	return pv_read(c, stmt, o, "volume", error);
}

/* --- kube's storage helpers ----------------------------------------------------------- */

static int
has_annotation(const cJSON *o, const char *key)
{
	return json_annotation(o, key) != NULL;
}

static const char *
annotation_text(const cJSON *o, const char *key)
{
	const cJSON *a = json_annotation(o, key);

	return cJSON_IsString(a) ? a->valuestring : "";
}

/* The claim's class: the beta annotation, else spec.storageClassName, else "". */
static const char *
claim_class(const cJSON *claim)
{
	const cJSON *a = json_annotation(claim, ANN_BETA_CLASS);

	if (a != NULL)
		return cJSON_IsString(a) ? a->valuestring : "";
	return json_string(claim, "spec.storageClassName");
}

/* Whether the claim names a class at all (kube's PersistentVolumeClaimHasClass). */
static int
claim_has_class(const cJSON *claim)
{
	const cJSON *c = json_path(claim, "spec.storageClassName");

	return has_annotation(claim, ANN_BETA_CLASS) || (c != NULL && !cJSON_IsNull(c));
}

static const char *
volume_class(const cJSON *volume)
{
	const cJSON *a = json_annotation(volume, ANN_BETA_CLASS);

	if (a != NULL)
		return cJSON_IsString(a) ? a->valuestring : "";
	return json_string(volume, "spec.storageClassName");
}

static const char *
volume_mode(const cJSON *o)
{
	const char *m = json_string(o, "spec.volumeMode");

	return *m != '\0' ? m : "Filesystem";
}

/* Whether the volume's claimRef names the claim (and its uid, if it has one): kube's
 * IsVolumeBoundToClaim. */
static int
volume_bound_to_claim(const cJSON *volume, const cJSON *claim)
{
	const cJSON *ref = json_path(volume, "spec.claimRef");
	const char *uid;

	if (!cJSON_IsObject(ref))
		return 0;
	if (strcmp(json_string(ref, "name"), json_string(claim, "metadata.name")) != 0 ||
	    strcmp(json_string(ref, "namespace"), json_string(claim, "metadata.namespace")) != 0)
		return 0;
	uid = json_string(ref, "uid");
	return *uid == '\0' || strcmp(uid, json_string(claim, "metadata.uid")) == 0;
}

/* Reads the quantity at path of o into *q; 0 for none (as zero), -1 when malformed. */
static int
read_quantity(const cJSON *o, const char *path, struct quantity *q)
{
	const cJSON *v = json_path(o, path);

	*q = quantity_zero();
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return -1;
	return quantity_parse(v->valuestring, q);
}

/* Whether every access mode of the claim is one of the volume's. */
static int
access_modes_fit(const cJSON *claim, const cJSON *volume)
{
	const cJSON *want = json_path(claim, "spec.accessModes"), *m, *h;
	const cJSON *have = json_path(volume, "spec.accessModes");

	cJSON_ArrayForEach(m, want) {
		int found = 0;

		cJSON_ArrayForEach(h, have) {
			if (cJSON_IsString(m) && cJSON_IsString(h) &&
			    strcmp(m->valuestring, h->valuestring) == 0)
				found = 1;
		}
		if (!found)
			return 0;
	}
	return 1;
}

/* Why the volume cannot satisfy the claim (kube's checkVolumeSatisfyClaim), or NULL. */
static const char *
volume_unfit(const cJSON *volume, const cJSON *claim)
{
	struct quantity want, have;

	if (read_quantity(claim, "spec.resources.requests.storage", &want) != 0)
		want = quantity_zero();
	if (json_is_set(volume, "metadata.deletionTimestamp"))
		return "the volume is marked for deletion";
	if (read_quantity(volume, "spec.capacity.storage", &have) != 0 ||
	    quantity_cmp(&have, &want) < 0)
		return "requested PV is too small";
	if (strcmp(volume_class(volume), claim_class(claim)) != 0)
		return "storageClassName does not match";
	if (strcmp(json_string(claim, "spec.volumeAttributesClassName"),
	    json_string(volume, "spec.volumeAttributesClassName")) != 0)
		return "volumeAttributesClassName does not match";
	if (strcmp(volume_mode(claim), volume_mode(volume)) != 0)
		return "incompatible volumeMode";
	if (!access_modes_fit(claim, volume))
		return "incompatible accessMode";
	return NULL;
}

/* The CSI driver an in-tree plugin has migrated to, or NULL. */
static const char *
migrated_driver(const char *plugin)
{
	for (size_t i = 0; i < sizeof pv_migrated / sizeof pv_migrated[0]; i++) {
		if (strcmp(pv_migrated[i].in_tree, plugin) == 0)
			return pv_migrated[i].csi;
	}
	return NULL;
}

/*
 * The migrated-to annotation an object should have (kube's updateMigrationAnnotations):
 * the CSI driver of its provisioner when that in-tree plugin has migrated, none when the
 * provisioner has not (a rollback). The provisioner is a claim's storage-provisioner
 * annotation (else the beta one), a volume's provisioned-by; an object without it is left
 * as it is. Returns 1 and sets *patch (a merge patch of the object's annotations) when
 * the annotation must change.
 */
static int
migration_annotation_patch(const cJSON *o, int is_claim, cJSON **patch)
{
	const cJSON *prov, *to;
	const char *csi;

	*patch = NULL;
	if (!cJSON_IsObject(json_path(o, "metadata.annotations")))
		return 0;
	prov = json_annotation(o, is_claim ? ANN_STORAGE_PROVISIONER : ANN_PROVISIONED_BY);
	if (prov == NULL && is_claim)
		prov = json_annotation(o, ANN_BETA_STORAGE_PROVISIONER);
	if (prov == NULL)
		return 0;
	to = json_annotation(o, ANN_MIGRATED_TO);
	csi = cJSON_IsString(prov) ? migrated_driver(prov->valuestring) : NULL;
	if (csi != NULL) {
		if (cJSON_IsString(to) && strcmp(to->valuestring, csi) == 0)
			return 0;
		*patch = cJSON_CreateObject();
		cJSON_AddStringToObject(*patch, ANN_MIGRATED_TO, csi);
		return 1;
	}
	if (to == NULL || (cJSON_IsString(to) && *to->valuestring == '\0'))
		return 0;
	*patch = cJSON_CreateObject();
	cJSON_AddNullToObject(*patch, ANN_MIGRATED_TO);
	return 1;
}

/* Whether the string array a holds s. */
static int
array_has_string(const cJSON *a, const char *s)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, a) {
		if (cJSON_IsString(e) && strcmp(e->valuestring, s) == 0)
			return 1;
	}
	return 0;
}

/* Removes every s from array a; returns whether there was one. */
static int
array_remove_string(cJSON *a, const char *s)
{
	cJSON *e = a != NULL ? a->child : NULL;
	int removed = 0;

	while (e != NULL) {
		cJSON *next = e->next;

		if (cJSON_IsString(e) && strcmp(e->valuestring, s) == 0) {
			cJSON_Delete(cJSON_DetachItemViaPointer(a, e));
			removed = 1;
		}
		e = next;
	}
	return removed;
}

/*
 * The finalizers a dynamically provisioned volume should have (kube's
 * modifyDeletionFinalizers): a volume of an in-tree plugin migrated to CSI loses the
 * in-tree finalizer (its CSI provisioner's is the external one); a volume of another
 * in-tree plugin gets the in-tree finalizer with policy Delete, loses it with Retain or
 * Recycle, and loses the external one (a migration rolled back); a volume of an external
 * provisioner, or not provisioned, is left as it is. Returns 1 and sets *finalizers (the
 * new list, NULL for none) when they must change.
 */
static int
deletion_finalizers(const cJSON *volume, cJSON **finalizers)
{
	const cJSON *prov = json_annotation(volume, ANN_PROVISIONED_BY);
	const char *name = cJSON_IsString(prov) ? prov->valuestring : "";
	const char *policy = json_string(volume, "spec.persistentVolumeReclaimPolicy");
	const cJSON *have = json_path(volume, "metadata.finalizers");
	cJSON *want;
	int changed = 0;

	*finalizers = NULL;
	if (prov == NULL)
		return 0;
	want = cJSON_IsArray(have) ? cJSON_Duplicate(have, 1) : cJSON_CreateArray();
	if (migrated_driver(name) != NULL) {
		changed = array_remove_string(want, FINALIZER_IN_TREE);
	} else if (strncmp(name, "kubernetes.io/", 14) == 0) {
		if (strcmp(policy, "Delete") == 0 && !array_has_string(want, FINALIZER_IN_TREE)) {
			cJSON_AddItemToArray(want, cJSON_CreateString(FINALIZER_IN_TREE));
			changed = 1;
		} else if (strcmp(policy, "Retain") == 0 || strcmp(policy, "Recycle") == 0) {
			changed = array_remove_string(want, FINALIZER_IN_TREE);
		}
		changed |= array_remove_string(want, FINALIZER_EXTERNAL);
	}
	if (!changed) {
		cJSON_Delete(want);
		return 0;
	}
	if (cJSON_GetArraySize(want) == 0) {
		cJSON_Delete(want);
		want = NULL;
	}
	*finalizers = want;
	return 1;
}

/* --- writes --------------------------------------------------------------------------- */

/* Applies the JSON merge patch (RFC 7386) patch to target. */
static void
merge_patch(cJSON *target, const cJSON *patch)
{
	const cJSON *p;

	cJSON_ArrayForEach(p, patch) {
		cJSON *t = cJSON_GetObjectItemCaseSensitive(target, p->string);

		if (cJSON_IsNull(p)) {
			cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
		} else if (cJSON_IsObject(p)) {
			if (!cJSON_IsObject(t)) {
				t = cJSON_CreateObject();
				json_set(target, p->string, t);
			}
			merge_patch(t, p);
		} else {
			json_set(target, p->string, cJSON_Duplicate(p, 1));
		}
	}
}

/*
 * Appends to out an update of object o (of resource r; to its subresource when not NULL)
 * changed by patch (a merge patch, taken): o becomes what the write makes of it, and the
 * write sends the whole of it, as kube's Update and UpdateStatus do (its role grants
 * update, not patch). With rv, the write requires that resourceVersion (the cached one,
 * for the first write to an object); without, the write follows an earlier one of the
 * same sync to the object, whose resourceVersion only the apiserver knows: it is then a
 * status update, which writes the status alone. Returns the action.
 */
static struct action *
pv_update(struct sync_result *out, const struct resource *r, cJSON *o, const char *rv,
    const char *subresource, const char *verb, cJSON *patch, char *reason)
{
	struct action *a = action_append(&out->writes, &out->nwrites);
	cJSON *meta;

	merge_patch(o, patch);
	cJSON_Delete(patch);
	a->body = cJSON_Duplicate(o, 1);
	meta = json_child_object(a->body, "metadata");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
	if (rv != NULL)
		cJSON_AddStringToObject(meta, "resourceVersion", rv);
	a->type = ACTION_UPDATE;
	a->verb = verb;
	a->resource = r;
	a->namespace = xstrdup(json_string(o, "metadata.namespace"));
	a->name = xstrdup(json_string(o, "metadata.name"));
	a->uid = xstrdup(json_string(o, "metadata.uid"));
	a->subresource = subresource;
	a->reason = reason;
	return a;
}

/* Makes the write a carries an event on its object once done: type, reason, message
 * (taken). */
static void
pv_event_when_done(struct action *a, const char *type, const char *reason, char *message)
{
	a->event_on_target = 1;
	a->done_type = type;
	a->done_reason = reason;
	a->done_message = message;
}

/* The state of one sync: what the writes before have made of the claim and the volume
 * (kube's syncs go on with the objects each update returns). */
struct pv_plan {
	struct controller *c;
	struct sync_result *out;
	const char *claim_rv;	/* the cached resourceVersion until the claim is written */
	const char *volume_rv;
	double now;
};

/* Sets the volume's phase (and message) when it is another (kube's updateVolumePhase);
 * with a reason, an event of type on the volume once written. */
static void
plan_volume_phase(struct pv_plan *p, cJSON *volume, const char *phase, const char *type,
    const char *reason, const char *message)
{
	struct pv_state *st = p->c->state;
	cJSON *body, *status;
	struct action *a;

	if (strcmp(json_string(volume, "status.phase"), phase) == 0)
		return;
	body = cJSON_CreateObject();
	status = cJSON_AddObjectToObject(body, "status");
	cJSON_AddStringToObject(status, "phase", phase);
	if (message != NULL && *message != '\0')
		cJSON_AddStringToObject(status, "message", message);
	else
		cJSON_AddNullToObject(status, "message");
	a = pv_update(p->out, st->volumes, volume, p->volume_rv, "status", "update-status", body,
	    xasprintf("volume phase %s -> %s", *json_string(volume, "status.phase") != '\0' ?
	    json_string(volume, "status.phase") : "(none)", phase));
	if (reason != NULL)
		pv_event_when_done(a, type, reason, xstrdup(message));
	p->volume_rv = NULL;
}

/* Sets the claim's status for phase, with the volume bound (NULL: none), as kube's
 * updateClaimStatus does; with a reason, an event on the claim once written. */
static void
plan_claim_status(struct pv_plan *p, cJSON *claim, const char *phase, const cJSON *volume,
    const char *type, const char *reason, const char *message)
{
	struct pv_state *st = p->c->state;
	const cJSON *cur = json_path(claim, "status");
	cJSON *body = cJSON_CreateObject(), *status = cJSON_AddObjectToObject(body, "status");
	const char *was = json_string(claim, "status.phase");
	int dirty = 0;
	struct action *a;

	if (strcmp(was, phase) != 0) {
		cJSON_AddStringToObject(status, "phase", phase);
		dirty = 1;
	}
	if (volume == NULL) {
		const char *fields[] = { "accessModes", "capacity",
			"currentVolumeAttributesClassName" };

		for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
			const cJSON *f = cJSON_GetObjectItemCaseSensitive(cur, fields[i]);

			if (f != NULL && !cJSON_IsNull(f)) {
				cJSON_AddNullToObject(status, fields[i]);
				dirty = 1;
			}
		}
	} else {
		const cJSON *modes = json_path(volume, "spec.accessModes");
		const cJSON *have = cJSON_GetObjectItemCaseSensitive(cur, "accessModes");
		const cJSON *vac = json_path(volume, "spec.volumeAttributesClassName");

		if (!(modes == NULL && have == NULL) &&
		    (modes == NULL || have == NULL || !cJSON_Compare(modes, have, 1))) {
			cJSON_AddItemToObject(status, "accessModes", modes != NULL ?
			    cJSON_Duplicate(modes, 1) : cJSON_CreateNull());
			dirty = 1;
		}
		if (strcmp(was, phase) != 0) {
			const cJSON *cap = json_path(volume, "spec.capacity.storage");
			const cJSON *pre = json_annotation(volume, ANN_PRE_RESIZE_CAPACITY);
			struct quantity vq, cq;

			if (pre != NULL) {
				struct quantity q;
				char text[QUANTITY_TEXT_MAX];
				cJSON *capacity = cJSON_AddObjectToObject(status, "capacity");

				if (cJSON_IsString(pre) && quantity_parse(pre->valuestring, &q) == 0)
					cJSON_AddStringToObject(capacity, "storage",
					    quantity_format(&q, text, sizeof text));
				else if (cJSON_IsString(cap))
					cJSON_AddStringToObject(capacity, "storage",
					    cap->valuestring);
				dirty = 1;
			} else if (cJSON_IsString(cap) &&
			    (read_quantity(claim, "status.capacity.storage", &cq) != 0 ||
			    !json_is_set(claim, "status.capacity.storage") ||
			    read_quantity(volume, "spec.capacity.storage", &vq) != 0 ||
			    quantity_cmp(&vq, &cq) != 0)) {
				cJSON_AddItemToObject(status, "capacity",
				    cJSON_Duplicate(json_path(volume, "spec.capacity"), 1));
				dirty = 1;
			}
		}
		if (strcmp(was, "Pending") == 0 && strcmp(phase, "Bound") == 0 &&
		    vac != NULL && !cJSON_IsNull(vac) &&
		    !cJSON_Compare(vac, cJSON_GetObjectItemCaseSensitive(cur,
		    "currentVolumeAttributesClassName"), 1)) {
			cJSON_AddItemToObject(status, "currentVolumeAttributesClassName",
			    cJSON_Duplicate(vac, 1));
			dirty = 1;
		}
	}
	if (!dirty) {
		cJSON_Delete(body);
		return;
	}
	a = pv_update(p->out, st->claims, claim, p->claim_rv, "status", "update-status", body,
	    xasprintf("claim phase %s -> %s", *was != '\0' ? was : "(none)", phase));
	if (reason != NULL)
		pv_event_when_done(a, type, reason, xstrdup(message));
	p->claim_rv = NULL;
}

/* kube's updateClaimStatusWithEvent: only when the phase changes. */
static void
plan_claim_phase_event(struct pv_plan *p, cJSON *claim, const char *phase, const char *reason,
    const char *message)
{
	if (strcmp(json_string(claim, "status.phase"), phase) == 0)
		return;
	plan_claim_status(p, claim, phase, NULL, "Warning", reason, message);
}

/* kube's bind: the volume's claimRef, its phase Bound, the claim's volumeName and
 * annotations, the claim's status Bound. */
static void
plan_bind(struct pv_plan *p, cJSON *volume, cJSON *claim)
{
	struct pv_state *st = p->c->state;
	const cJSON *ref = json_path(volume, "spec.claimRef");
	const char *cname = json_string(claim, "metadata.name");
	const char *cns = json_string(claim, "metadata.namespace");
	const char *cuid = json_string(claim, "metadata.uid");
	int set_by_controller = !volume_bound_to_claim(volume, claim), dirty = 0;
	cJSON *body = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(body, "metadata");
	cJSON *anns = NULL;

	/* The volume's claimRef. */
	if (!cJSON_IsObject(ref) || strcmp(json_string(ref, "name"), cname) != 0 ||
	    strcmp(json_string(ref, "namespace"), cns) != 0 ||
	    strcmp(json_string(ref, "uid"), cuid) != 0) {
		cJSON *spec = cJSON_AddObjectToObject(body, "spec");
		cJSON *nref = cJSON_AddObjectToObject(spec, "claimRef");

		cJSON_AddStringToObject(nref, "kind", "PersistentVolumeClaim");
		cJSON_AddStringToObject(nref, "namespace", cns);
		cJSON_AddStringToObject(nref, "name", cname);
		cJSON_AddStringToObject(nref, "uid", cuid);
		cJSON_AddStringToObject(nref, "apiVersion", "v1");
		cJSON_AddStringToObject(nref, "resourceVersion",
		    json_string(claim, "metadata.resourceVersion"));
		cJSON_AddNullToObject(nref, "fieldPath");
		dirty = 1;
	}
	if (set_by_controller && !has_annotation(volume, ANN_BOUND_BY_CONTROLLER)) {
		anns = cJSON_AddObjectToObject(meta, "annotations");
		cJSON_AddStringToObject(anns, ANN_BOUND_BY_CONTROLLER, "yes");
		dirty = 1;
	}
	if (dirty) {
		pv_update(p->out, st->volumes, volume, p->volume_rv, NULL, "bind", body,
		    xasprintf("volume %s bound to claim %s/%s", json_string(volume,
		    "metadata.name"), cns, cname));
		p->volume_rv = NULL;
	} else {
		cJSON_Delete(body);
	}
	plan_volume_phase(p, volume, "Bound", NULL, NULL, NULL);

	/* The claim's volumeName and annotations. */
	body = cJSON_CreateObject();
	meta = cJSON_AddObjectToObject(body, "metadata");
	anns = NULL;
	dirty = 0;
	if (strcmp(json_string(volume, "metadata.name"), json_string(claim, "spec.volumeName"))
	    != 0) {
		cJSON_AddStringToObject(cJSON_AddObjectToObject(body, "spec"), "volumeName",
		    json_string(volume, "metadata.name"));
		if (!has_annotation(claim, ANN_BOUND_BY_CONTROLLER)) {
			anns = cJSON_AddObjectToObject(meta, "annotations");
			cJSON_AddStringToObject(anns, ANN_BOUND_BY_CONTROLLER, "yes");
		}
		dirty = 1;
	}
	if (!has_annotation(claim, ANN_BIND_COMPLETED)) {
		if (anns == NULL)
			anns = cJSON_AddObjectToObject(meta, "annotations");
		cJSON_AddStringToObject(anns, ANN_BIND_COMPLETED, "yes");
		dirty = 1;
	}
	if (dirty) {
		pv_update(p->out, st->claims, claim, p->claim_rv, NULL, "bind", body,
		    xasprintf("claim bound to volume %s", json_string(volume, "metadata.name")));
		p->claim_rv = NULL;
	} else {
		cJSON_Delete(body);
	}
	plan_claim_status(p, claim, "Bound", volume, NULL, NULL, NULL);
}

/* Writes the object's migrated-to annotation and, for a volume, its deletion finalizers
 * when they are not what kube's binder keeps (kube's updateClaimMigrationAnnotations and
 * updateVolumeMigrationAnnotationsAndFinalizers, which come first in its syncs). Returns
 * 1 when it wrote: the sync ends there, and the informer's update of the object brings it
 * back with its new resourceVersion. */
static int
plan_migration(struct pv_plan *p, cJSON *o, int is_claim)
{
	struct pv_state *st = p->c->state;
	cJSON *anns, *finalizers = NULL, *body, *meta;
	int fin_changed = 0;
	struct buf why = { 0 };

	migration_annotation_patch(o, is_claim, &anns);
	if (!is_claim)
		fin_changed = deletion_finalizers(o, &finalizers);
	if (anns == NULL && !fin_changed)
		return 0;
	body = cJSON_CreateObject();
	meta = cJSON_AddObjectToObject(body, "metadata");
	if (anns != NULL) {
		cJSON_AddItemToObject(meta, "annotations", anns);
		buf_printf(&why, "%s %s", ANN_MIGRATED_TO, cJSON_IsNull(anns->child) ?
		    "removed" : anns->child->valuestring);
	}
	if (fin_changed) {
		char *text = finalizers != NULL ? cJSON_PrintUnformatted(finalizers) : NULL;

		buf_printf(&why, "%sfinalizers %s", why.len > 0 ? ", " : "",
		    text != NULL ? text : "none");
		free(text);
		cJSON_AddItemToObject(meta, "finalizers", finalizers != NULL ? finalizers :
		    cJSON_CreateNull());
	}
	pv_update(p->out, is_claim ? st->claims : st->volumes, o,
	    is_claim ? p->claim_rv : p->volume_rv, NULL, "update", body, buf_detach(&why));
	if (is_claim)
		p->claim_rv = NULL;
	else
		p->volume_rv = NULL;
	return 1;
}

/* --- claims --------------------------------------------------------------------------- */

/* Whether the volume passes kube's checks of every candidate for the claim: not being
 * deleted, the same volume mode and attributes class, the claim's access modes, a
 * capacity of the claim's request at least. */
static int
volume_fits(const cJSON *volume, const cJSON *claim, const struct quantity *want)
{
	struct quantity have;

	return !json_is_set(volume, "metadata.deletionTimestamp") &&
	    strcmp(volume_mode(claim), volume_mode(volume)) == 0 &&
	    strcmp(json_string(claim, "spec.volumeAttributesClassName"),
	    json_string(volume, "spec.volumeAttributesClassName")) == 0 &&
	    access_modes_fit(claim, volume) &&
	    read_quantity(volume, "spec.capacity.storage", &have) == 0 &&
	    quantity_cmp(&have, want) >= 0;
}

/* The first volume of stmt's rows (name, access modes counted, body) that passes the
 * checks (pre-bound to the claim, or free and selected), with its access modes counted in
 * *modes; NULL when none does. */
static int
first_fit(struct controller *c, sqlite3_stmt *stmt, const cJSON *claim,
    const struct quantity *want, int prebound, const struct selector *sel, double now,
    cJSON **found, int *modes, char **error)
{
	struct pv_state *st = c->state;
	char *claim_key = xasprintf("%s/%s", json_string(claim, "metadata.namespace"),
	    json_string(claim, "metadata.name"));
	int rc;

	*found = NULL;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cJSON *volume = controller_column_json(stmt, 2);

		if (volume == NULL)
			continue;
		if (!prebound && reserved_for_other(st, json_string(volume, "metadata.name"),
		    claim_key, now)) {
			cJSON_Delete(volume);
			continue;
		}
		if (volume_fits(volume, claim, want) && (prebound ?
		    volume_bound_to_claim(volume, claim) :
		    (!cJSON_IsObject(json_path(volume, "spec.claimRef")) &&
		    (sel == NULL || selector_matches(sel, json_path(volume, "metadata.labels")))))) {
			*found = volume;
			*modes = sqlite3_column_int(stmt, 1);
			break;
		}
		cJSON_Delete(volume);
	}
	sqlite3_reset(stmt);
	free(claim_key);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "persistentvolume-binder: matching volumes: %s",
		    sqlite3_errmsg(store_db(c->store)));
	return 0;
}

/* The best volume for the claim (kube's findBestMatchForClaim), or NULL; -1 on an error
 * (the claim's selector malformed: *error says so). kube looks through the volumes
 * grouped by their access modes, the groups of fewer modes first, and takes in the first
 * group with a candidate the one pre-bound to the claim, else the smallest: here the
 * first pre-bound volume and the first free one in that order, the pre-bound one when its
 * group comes no later. A claim whose class waits for its first consumer (delay) gets
 * only a pre-bound volume. */
static int
find_best_match(struct controller *c, const cJSON *claim, int delay, double now,
    cJSON **found, char **error)
{
	struct pv_state *st = c->state;
	sqlite3_stmt *stmt;
	const cJSON *sel_json = json_path(claim, "spec.selector");
	struct selector *sel = NULL;
	struct quantity want;
	cJSON *prebound = NULL, *free_volume = NULL;
	int prebound_modes = 0, free_modes = 0, rc;

	*found = NULL;
	if (sel_json != NULL && !cJSON_IsNull(sel_json)) {
		char *err = NULL;

		sel = selector_from_json(sel_json, &err);
		if (sel == NULL) {
			error_set(error, "error creating internal label selector for claim: %s/%s: %s",
			    json_string(claim, "metadata.namespace"),
			    json_string(claim, "metadata.name"), err);
			free(err);
			return -1;
		}
	}
	if (read_quantity(claim, "spec.resources.requests.storage", &want) != 0)
		want = quantity_zero();
	stmt = controller_stmt(st->stmt[STMT_PREBOUND]);
	sqlite3_bind_text(stmt, 1, json_string(claim, "metadata.namespace"), -1,
	    SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, json_string(claim, "metadata.name"), -1, SQLITE_TRANSIENT);
	rc = first_fit(c, stmt, claim, &want, 1, NULL, now, &prebound, &prebound_modes,
	    error);
	if (rc == 0 && !delay) {
		stmt = controller_stmt(st->stmt[STMT_FREE]);
		sqlite3_bind_text(stmt, 1, claim_class(claim), -1, SQLITE_TRANSIENT);
		rc = first_fit(c, stmt, claim, &want, 0, sel, now, &free_volume, &free_modes,
		    error);
	}
	selector_free(sel);
	if (rc != 0) {
		cJSON_Delete(prebound);
		return -1;
	}
	if (prebound != NULL && (free_volume == NULL || prebound_modes <= free_modes)) {
		*found = prebound;
		cJSON_Delete(free_volume);
	} else {
		*found = free_volume;
		cJSON_Delete(prebound);
	}
	return 0;
}

/* The event of a claim whose class waits for its first consumer (kube's
 * emitEventForUnboundDelayBindingClaim). */
static int
claim_wait_event(struct controller *c, const cJSON *claim, struct sync_result *out,
    char **error)
{
	struct pv_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_CLAIM_PODS]);
	struct buf names = { 0 };
	int n = 0, rc;

	sqlite3_bind_text(stmt, 1, json_string(claim, "metadata.namespace"), -1,
	    SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, json_string(claim, "metadata.name"), -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *phase = (const char *)sqlite3_column_text(stmt, 2);

		if (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)
			continue;
		if (*(const char *)sqlite3_column_text(stmt, 1) != '\0')
			continue;
		buf_printf(&names, "%s%s", n > 0 ? "," : "",
		    (const char *)sqlite3_column_text(stmt, 0));
		n++;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		buf_free(&names);
		return error_set(error, "persistentvolume-binder: reading pods: %s",
		    sqlite3_errmsg(store_db(c->store)));
	}
	if (n == 0)
		sync_result_add_event(out, "Normal", "WaitForFirstConsumer",
		    xstrdup("waiting for first consumer to be created before binding"));
	else
		sync_result_add_event(out, "Normal", "WaitForPodScheduled",
		    xasprintf("waiting for pod%s %s to be scheduled", n > 1 ? "s" : "",
		    names.data));
	buf_free(&names);
	return 0;
}

/* Reads StorageClass name into *class (NULL: not cached). */
static int
read_class(struct controller *c, const char *name, cJSON **class, char **error)
{
	struct pv_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_CLASS]);
	int rc;

	*class = NULL;
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		*class = controller_column_json(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "persistentvolume-binder: reading class %s: %s", name,
		    sqlite3_errmsg(store_db(c->store)));
	return 0;
}

/* Hands the claim to its class's provisioner (kube's provisionClaim, for provisioners
 * that are not in-tree plugins: kube 1.36 provisions nothing itself by default). */
static int
plan_provision(struct pv_plan *p, cJSON *claim, char **error)
{
	struct pv_state *st = p->c->state;
	const char *class_name = claim_class(claim), *provisioner, *csi;
	cJSON *class, *body, *anns;
	struct action *a;
	char *message;

	if (!st->dynamic_provisioning)
		return 0;	/* kube's provisionClaim does nothing then */
	if (read_class(p->c, class_name, &class, error) != 0)
		return -1;
	if (class == NULL) {
		sync_result_add_event(p->out, "Warning", "ProvisioningFailed",
		    xasprintf("storageclass.storage.k8s.io \"%s\" not found", class_name));
		return 0;
	}
	provisioner = json_string(class, "provisioner");
	csi = migrated_driver(provisioner);
	if (csi != NULL) {
		provisioner = csi;
	} else if (strncmp(provisioner, "kubernetes.io/", 14) == 0) {
		/* An in-tree plugin kube's controller-manager has (nfs provisions nothing;
		 * host-path only with --enable-hostpath-provisioner, which sqlkcm does not
		 * have) or does not know. */
		sync_result_add_event(p->out, "Warning", "ProvisioningFailed",
		    strcmp(provisioner, "kubernetes.io/nfs") == 0 ||
		    strcmp(provisioner, "kubernetes.io/host-path") == 0 ?
		    xstrdup("no provisionable volume plugin matched") :
		    xasprintf("no volume plugin matched name: %s", provisioner));
		cJSON_Delete(class);
		return 0;
	}
	message = xasprintf("Waiting for a volume to be created either by the external "
	    "provisioner '%s' or manually by the system administrator. If volume creation is "
	    "delayed, please verify that the provisioner is running and correctly registered.",
	    provisioner);
	{
		char *claim_key = xasprintf("%s/%s", json_string(claim, "metadata.namespace"),
		    json_string(claim, "metadata.name"));

		operation_begin(st, claim_key, provisioner, "provision", p->now);
		free(claim_key);
	}
	if (strcmp(annotation_text(claim, ANN_STORAGE_PROVISIONER), provisioner) == 0 &&
	    has_annotation(claim, ANN_STORAGE_PROVISIONER)) {
		sync_result_add_event(p->out, "Normal", "ExternalProvisioning", message);
		cJSON_Delete(class);
		return 0;
	}
	body = cJSON_CreateObject();
	anns = cJSON_AddObjectToObject(cJSON_AddObjectToObject(body, "metadata"), "annotations");
	cJSON_AddStringToObject(anns, ANN_BETA_STORAGE_PROVISIONER, provisioner);
	cJSON_AddStringToObject(anns, ANN_STORAGE_PROVISIONER, provisioner);
	if (csi != NULL)
		cJSON_AddStringToObject(anns, ANN_MIGRATED_TO, csi);
	a = pv_update(p->out, st->claims, claim, p->claim_rv, NULL, "annotate", body,
	    xasprintf("class %s: provisioner %s", class_name, provisioner));
	pv_event_when_done(a, "Normal", "ExternalProvisioning", message);
	if (st->operation_errors != NULL) {
		/* kube's RecordVolumeOperationErrorMetric: a failed hand-over. */
		const char *labels[] = { provisioner, "provision", NULL };

		a->count_failed[0] = metrics_series_get(st->operation_errors, labels);
		a->count_failed[1] = metrics_series_get(st->operation_errors_deprecated, labels);
	}
	a->failed_reason = "ProvisioningFailed";
	a->failed_message = xstrdup("Error saving claim: ");
	p->claim_rv = NULL;
	cJSON_Delete(class);
	return 0;
}

/* kube's syncUnboundClaim. */
static int
sync_unbound_claim(struct pv_plan *p, cJSON *claim, char **error)
{
	struct controller *c = p->c;
	struct pv_state *st = c->state;
	const char *volume_name = json_string(claim, "spec.volumeName");
	struct pv_object vo;
	cJSON *volume;
	int rc = 0;

	if (*volume_name == '\0') {
		int delay = 0;
		const char *class_name = claim_class(claim);

		if (*class_name != '\0') {
			cJSON *class;

			if (read_class(c, class_name, &class, error) != 0)
				return -1;
			if (class != NULL) {
				const cJSON *mode = json_path(class, "volumeBindingMode");

				if (!cJSON_IsString(mode)) {
					/* kube's sync fails: synced again with backoff (the
					 * apiserver defaults the mode, so only a malformed
					 * cache gets here). */
					cJSON_Delete(class);
					p->out->failed = 1;
					return 0;
				}
				delay = strcmp(mode->valuestring, "WaitForFirstConsumer") == 0;
				cJSON_Delete(class);
			}
		}
		if (find_best_match(c, claim, delay, p->now, &volume, error) != 0)
			return -1;
		if (volume == NULL) {
			/* The default class, given to a claim without one. */
			if (!claim_has_class(claim)) {
				sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_DEFAULT_CLASS]);
				char *def = NULL;

				if (sqlite3_step(stmt) == SQLITE_ROW)
					def = controller_column_strdup(stmt, 0);
				sqlite3_reset(stmt);
				if (def != NULL) {
					cJSON *body = cJSON_CreateObject();

					cJSON_AddStringToObject(cJSON_AddObjectToObject(body, "spec"),
					    "storageClassName", def);
					struct action *a;

					a = pv_update(p->out, st->claims, claim, p->claim_rv, NULL,
					    "update", body, xasprintf("the default StorageClass %s",
					    def));
					/* kube's retroactive_storageclass_total counts every
					 * assignment, _errors_total the failed ones. */
					a->count_done = st->retroactive;
					a->count_failed[0] = st->retroactive;
					a->count_failed[1] = st->retroactive_errors;
					free(def);
					return 0;
				}
			}
			if (delay && !has_annotation(claim, ANN_SELECTED_NODE)) {
				if (claim_wait_event(c, claim, p->out, error) != 0)
					return -1;
			} else if (*class_name != '\0') {
				return plan_provision(p, claim, error);
			} else {
				sync_result_add_event(p->out, "Normal", "FailedBinding",
				    xstrdup("no persistent volumes available for this claim and no "
				    "storage class is set"));
			}
			plan_claim_status(p, claim, "Pending", NULL, NULL, NULL, NULL);
			return 0;
		}
		/* Kept from the other claims until the cache shows it bound. */
		{
			char *claim_key = xasprintf("%s/%s", json_string(claim,
			    "metadata.namespace"), json_string(claim, "metadata.name"));

			if (!cJSON_IsObject(json_path(volume, "spec.claimRef")))
				reserve(st, json_string(volume, "metadata.name"), claim_key,
				    p->now);
			/* the end of a provisioning and binding (kube's RecordMetric) */
			operation_end(st, claim_key, p->now, 1);
			free(claim_key);
		}
		/* Its cached resourceVersion, which no write of the plan changes. */
		p->volume_rv = json_string(volume, "metadata.resourceVersion");
		plan_bind(p, volume, claim);
		p->volume_rv = NULL;
		cJSON_Delete(volume);
		return 0;
	}
	/* A claim that names its volume. */
	if (pv_read_volume(c, volume_name, &vo, error) != 0)
		return -1;
	if (vo.body == NULL) {
		plan_claim_status(p, claim, "Pending", NULL, NULL, NULL, NULL);
		return 0;
	}
	p->volume_rv = vo.rv;
	volume = vo.body;
	if (!cJSON_IsObject(json_path(volume, "spec.claimRef"))) {
		const char *why = volume_unfit(volume, claim);

		if (why != NULL) {
			sync_result_add_event(p->out, "Warning", "VolumeMismatch",
			    xasprintf("Cannot bind to requested volume \"%s\": %s", volume_name,
			    strcmp(why, "the volume is marked for deletion") == 0 ?
			    "the volume is marked for deletion" : why));
			plan_claim_status(p, claim, "Pending", NULL, NULL, NULL, NULL);
		} else {
			plan_bind(p, volume, claim);
		}
	} else if (volume_bound_to_claim(volume, claim)) {
		plan_bind(p, volume, claim);
	} else {
		sync_result_add_event(p->out, "Warning", "FailedBinding",
		    xasprintf("volume \"%s\" already bound to a different claim.", volume_name));
		if (!has_annotation(claim, ANN_BOUND_BY_CONTROLLER)) {
			plan_claim_status(p, claim, "Pending", NULL, NULL, NULL, NULL);
		} else {
			/* kube returns an error: the claim is synced again with backoff. */
			p->out->failed = 1;
		}
	}
	/* p->volume_rv points into vo: the writes have copied it. */
	p->volume_rv = NULL;
	pv_object_clear(&vo);
	return rc;
}

/* kube's syncBoundClaim. */
static int
sync_bound_claim(struct pv_plan *p, cJSON *claim, char **error)
{
	const char *volume_name = json_string(claim, "spec.volumeName");
	const char *ref_uid;
	struct pv_object vo;

	if (*volume_name == '\0') {
		plan_claim_phase_event(p, claim, "Lost", "ClaimLost",
		    "Bound claim has lost reference to PersistentVolume. Data on the volume is "
		    "lost!");
		return 0;
	}
	if (pv_read_volume(p->c, volume_name, &vo, error) != 0)
		return -1;
	if (vo.body == NULL) {
		plan_claim_phase_event(p, claim, "Lost", "ClaimLost",
		    "Bound claim has lost its PersistentVolume. Data on the volume is lost!");
		return 0;
	}
	p->volume_rv = vo.rv;
	ref_uid = json_string(vo.body, "spec.claimRef.uid");
	if (!cJSON_IsObject(json_path(vo.body, "spec.claimRef")) ||
	    strcmp(ref_uid, json_string(claim, "metadata.uid")) == 0)
		plan_bind(p, vo.body, claim);
	else
		plan_claim_phase_event(p, claim, "Lost", "ClaimMisbound",
		    "Two claims are bound to the same volume, this one is bound incorrectly");
	p->volume_rv = NULL;
	pv_object_clear(&vo);
	return 0;
}

static int
sync_claim(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct pv_state *st = c->state;
	struct pv_object co;
	struct pv_plan p = { c, out, NULL, NULL, now };
	char *namespace;
	const char *name;
	int rc, caught_up;

	out->owner_resource = st->claims;
	if (controller_key_split(key, &namespace, &name) != 0)
		return error_set(error, "persistentvolume-binder: bad key %s", key);
	rc = pv_read_claim(c, namespace, name, &co, error);
	free(namespace);
	if (rc != 0)
		return -1;
	if (co.body == NULL)
		return 0;		/* gone: its volume was queued */
	out->owner_uid = xstrdup(co.uid);
	out->owner = cJSON_Duplicate(co.body, 1);
	out->requeue_after = st->period;
	if ((caught_up = controller_caught_up(c, key, co.uid, out, error)) <= 0) {
		pv_object_clear(&co);
		return caught_up;
	}
	p.claim_rv = co.rv;
	if (plan_migration(&p, co.body, 1))
		rc = 0;
	else if (!has_annotation(co.body, ANN_BIND_COMPLETED))
		rc = sync_unbound_claim(&p, co.body, error);
	else
		rc = sync_bound_claim(&p, co.body, error);
	pv_object_clear(&co);
	return rc;
}

/* --- volumes -------------------------------------------------------------------------- */

/* The pods (namespace/name, comma-separated) not terminated that use claim namespace/
 * name, or NULL for none (kube's isVolumeUsed). */
static int
claim_users(struct controller *c, const char *namespace, const char *name, char **users,
    char **error)
{
	struct pv_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_CLAIM_PODS]);
	struct buf b = { 0 };
	int rc, n = 0;

	*users = NULL;
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *phase = (const char *)sqlite3_column_text(stmt, 2);

		if (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)
			continue;
		buf_printf(&b, "%s%s/%s", n++ > 0 ? "," : "", namespace,
		    (const char *)sqlite3_column_text(stmt, 0));
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		buf_free(&b);
		return error_set(error, "persistentvolume-binder: reading pods: %s",
		    sqlite3_errmsg(store_db(c->store)));
	}
	if (n > 0)
		*users = xstrdup(b.data);
	buf_free(&b);
	return 0;
}

/* kube's unbindVolume: the claimRef dropped (bound by the controller) or its uid. */
static void
plan_unbind(struct pv_plan *p, cJSON *volume, char *reason)
{
	struct pv_state *st = p->c->state;
	cJSON *body = cJSON_CreateObject(), *spec = cJSON_AddObjectToObject(body, "spec");

	if (has_annotation(volume, ANN_BOUND_BY_CONTROLLER)) {
		cJSON_AddNullToObject(spec, "claimRef");
		cJSON_AddNullToObject(cJSON_AddObjectToObject(json_child_object(body, "metadata"),
		    "annotations"), ANN_BOUND_BY_CONTROLLER);
	} else {
		cJSON_AddNullToObject(cJSON_AddObjectToObject(spec, "claimRef"), "uid");
	}
	pv_update(p->out, st->volumes, volume, p->volume_rv, NULL, "unbind", body, reason);
	p->volume_rv = NULL;
	plan_volume_phase(p, volume, "Available", NULL, NULL, NULL);
}

/* --- the recycler -------------------------------------------------------------------- */

/* kube's recycler pod template (NewPersistentVolumeRecyclerPodTemplate): a pod of the
 * default namespace that empties the volume mounted at /scrub. */
static const char recycler_template_json[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"pv-recycler-\","
    "\"namespace\":\"default\"},\"spec\":{\"activeDeadlineSeconds\":60,"
    "\"restartPolicy\":\"Never\",\"volumes\":[{\"name\":\"vol\"}],\"containers\":[{"
    "\"name\":\"pv-recycler\",\"image\":\"registry.k8s.io/build-image/debian-base:"
    "bookworm-v1.0.6\",\"command\":[\"/bin/sh\"],\"args\":[\"-c\",\"test -e /scrub && "
    "find /scrub -mindepth 1 -delete && test -z \\\"$(ls -A /scrub)\\\" || exit 1\"],"
    "\"volumeMounts\":[{\"name\":\"vol\",\"mountPath\":\"/scrub\"}]}]}}";

/* The longest recycler pod template file read. */
#define RECYCLER_TEMPLATE_MAX (1 << 20)

/* Loads a recycler's pod template from path (a Pod in JSON; "": kube's template), as
 * kube's AttemptToLoadRecycler: the pod must have a volume, whose source the recycler
 * replaces with the volume's. */
static int
recycler_load(struct pv_recycler *r, const char *path, char **error)
{
	struct buf text = { 0 };
	const cJSON *volumes;

	if (path == NULL || *path == '\0') {
		r->template = cJSON_Parse(recycler_template_json);
		return 0;
	}
	if (file_read_all(path, "recycler pod template", RECYCLER_TEMPLATE_MAX, &text, NULL,
	    error) != 0)
		return -1;
	r->template = text.data != NULL ? cJSON_Parse(text.data) : NULL;
	buf_free(&text);
	if (!cJSON_IsObject(r->template) || strcmp(json_string(r->template, "kind"), "Pod") != 0) {
		cJSON_Delete(r->template);
		r->template = NULL;
		return error_set(error, "failed decoding file %s: not a Pod in JSON", path);
	}
	volumes = json_path(r->template, "spec.volumes");
	if (!cJSON_IsArray(volumes) || !cJSON_IsObject(cJSON_GetArrayItem(volumes, 0))) {
		cJSON_Delete(r->template);
		r->template = NULL;
		return error_set(error, "pod specification (%s): does not contain any volume(s)",
		    path);
	}
	if (*json_string(r->template, "metadata.namespace") == '\0')
		json_set(json_child_object(r->template, "metadata"), "namespace",
		    cJSON_CreateString("default"));
	return 0;
}

/* The recycler of the volume's plugin (kube's FindRecyclablePluginBySpec: hostPath or
 * NFS, exactly one of them), or NULL. */
static const struct pv_recycler *
volume_recycler(const struct pv_state *st, const cJSON *volume)
{
	int host = cJSON_IsObject(json_path(volume, "spec.hostPath"));
	int nfs = cJSON_IsObject(json_path(volume, "spec.nfs"));

	if (host == nfs)
		return NULL;
	return host ? &st->hostpath : &st->nfs;
}

/* kube's CalculateTimeoutForVolume: the increment per whole GiB of the volume's capacity,
 * at least the minimum. */
long long
persistentvolume_recycler_timeout(long long minimum, long long increment,
    const cJSON *volume)
{
	const cJSON *cap = json_path(volume, "spec.capacity.storage");
	struct quantity q;
	__int128 bytes = 0, timeout;

	if (cJSON_IsString(cap) && quantity_parse(cap->valuestring, &q) == 0) {
		bytes = q.nanos / 1000000000;
		if (q.nanos % 1000000000 > 0)
			bytes++;	/* kube's Value() rounds up */
	}
	timeout = (bytes / ((__int128)1 << 30)) * increment;
	if (timeout < minimum)
		return minimum;
	if (timeout > (__int128)0x7fffffffffffffffLL)
		return 0x7fffffffffffffffLL;
	return (long long)timeout;
}

/* The recycler pod of the volume: the template, named recycler-for-<volume>, its first
 * volume's source the volume's (a hostPath's path; an NFS server and path), its deadline
 * the volume's timeout. */
static cJSON *
recycler_pod(const struct pv_recycler *r, const cJSON *volume)
{
	cJSON *pod = cJSON_Duplicate(r->template, 1);
	cJSON *meta = json_child_object(pod, "metadata"), *spec = json_child_object(pod, "spec");
	cJSON *vol = cJSON_GetArrayItem(json_path(pod, "spec.volumes"), 0);
	cJSON *name = cJSON_DetachItemFromObjectCaseSensitive(vol, "name"), *src;
	char *pod_name = xasprintf("recycler-for-%s", json_string(volume, "metadata.name"));

	json_set(meta, "name", cJSON_CreateString(pod_name));
	free(pod_name);
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "generateName");
	json_set(spec, "activeDeadlineSeconds", cJSON_CreateNumber((double)
	    persistentvolume_recycler_timeout(r->minimum_timeout, r->timeout_increment,
	    volume)));
	/* The volume's source replaces the template's (only the name stays). */
	while (vol->child != NULL)
		cJSON_Delete(cJSON_DetachItemViaPointer(vol, vol->child));
	if (name != NULL)
		cJSON_AddItemToObject(vol, "name", name);
	if (cJSON_IsObject(json_path(volume, "spec.hostPath"))) {
		src = cJSON_AddObjectToObject(vol, "hostPath");
		cJSON_AddStringToObject(src, "path", json_string(volume, "spec.hostPath.path"));
	} else {
		src = cJSON_AddObjectToObject(vol, "nfs");
		cJSON_AddStringToObject(src, "server", json_string(volume, "spec.nfs.server"));
		cJSON_AddStringToObject(src, "path", json_string(volume, "spec.nfs.path"));
	}
	return pod;
}

/* Appends a delete of the cached pod (namespace/name, uid) to the writes. */
static struct action *
plan_delete_pod(struct pv_plan *p, const char *namespace, const char *name, const char *uid,
    char *reason)
{
	struct pv_state *st = p->c->state;
	struct action *a = action_append(&p->out->writes, &p->out->nwrites);

	a->type = ACTION_DELETE;
	a->verb = "delete";
	a->resource = st->pods;
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(name);
	a->uid = xstrdup(uid);
	a->reason = reason;
	return a;
}

/*
 * kube's recycleVolumeOperation once a recycler is found, as steps over the cache (kube
 * runs it in a goroutine that watches the pod): no recycler pod yet, create it; a pod of
 * the name this controller did not create, delete it and fail ("old recycler pod found");
 * its pod Succeeded, delete it, record VolumeRecycled and make the volume Available (its
 * claimRef cleared as kube's unbindVolume does); Failed, delete it and mark the volume
 * Failed with the pod's message; gone before it ended, mark it Failed; else wait for the
 * pod's next change, which queues the volume.
 */
static int
plan_recycle(struct pv_plan *p, cJSON *volume, const struct pv_recycler *r, char **error)
{
	struct pv_state *st = p->c->state;
	const char *vname = json_string(volume, "metadata.name");
	const char *namespace = json_string(r->template, "metadata.namespace");
	char *pod_name = xasprintf("recycler-for-%s", vname);
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_POD]);
	struct pv_recycling *rec = recycling_find(st, vname);
	struct pv_object po;
	char *message;

	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, pod_name, -1, SQLITE_TRANSIENT);
	if (pv_read(p->c, stmt, &po, "recycler pod", error) != 0) {
		free(pod_name);
		return -1;
	}
	if (po.body == NULL) {
		if (rec != NULL && rec->pod_uid != NULL) {
			recycling_forget(st, vname);
			plan_volume_phase(p, volume, "Failed", "Warning", "VolumeFailedRecycle",
			    "Recycle failed: failed to recycle volume: recycler pod was deleted");
		} else {
			struct action *a = action_append(&p->out->writes, &p->out->nwrites);

			recycling_start(st, vname);
			a->type = ACTION_CREATE;
			a->verb = "create";
			a->resource = st->pods;
			a->namespace = xstrdup(namespace);
			a->name = xstrdup(pod_name);
			a->body = recycler_pod(r, volume);
			a->reason = xasprintf("recycle volume %s (policy Recycle)", vname);
		}
		free(pod_name);
		return 0;
	}
	if (rec == NULL || (rec->pod_uid != NULL && strcmp(rec->pod_uid, po.uid) != 0)) {
		/* Not the pod this controller created: kube's create fails with AlreadyExists,
		 * it deletes the pod and tries again at the next sync. */
		recycling_forget(st, vname);
		plan_delete_pod(p, namespace, pod_name, po.uid,
		    xstrdup("an old recycler pod of the volume"));
		plan_volume_phase(p, volume, "Failed", "Warning", "VolumeFailedRecycle",
		    "Recycle failed: old recycler pod found, will retry later");
	} else if (strcmp(json_string(po.body, "status.phase"), "Succeeded") == 0) {
		struct action *a;

		recycling_forget(st, vname);
		a = plan_delete_pod(p, namespace, pod_name, po.uid,
		    xstrdup("the recycler pod succeeded"));
		a->done_reason = "VolumeRecycled";
		a->done_message = xstrdup("Volume recycled");
		plan_unbind(p, volume, xasprintf("volume %s recycled", vname));
	} else if (strcmp(json_string(po.body, "status.phase"), "Failed") == 0) {
		const char *why = json_string(po.body, "status.message");

		recycling_forget(st, vname);
		plan_delete_pod(p, namespace, pod_name, po.uid,
		    xstrdup("the recycler pod failed"));
		message = xasprintf("Recycle failed: failed to recycle volume: %s", *why != '\0' ?
		    why : "pod failed, pod.Status.Message unknown");
		plan_volume_phase(p, volume, "Failed", "Warning", "VolumeFailedRecycle", message);
		free(message);
	} else if (rec->pod_uid == NULL) {
		rec->pod_uid = xstrdup(po.uid);
	}
	free(pod_name);
	pv_object_clear(&po);
	return 0;
}

/* kube's reclaimVolume, for a volume whose claim is gone. */
static int
plan_reclaim(struct pv_plan *p, cJSON *volume, int claim_cached, char **error)
{
	const char *policy = json_string(volume, "spec.persistentVolumeReclaimPolicy");

	if (*annotation_text(volume, ANN_MIGRATED_TO) != '\0')
		return 0;	/* the CSI driver's */
	if (strcmp(policy, "Retain") == 0)
		return 0;
	if (strcmp(policy, "Recycle") == 0) {
		const cJSON *ref = json_path(volume, "spec.claimRef");
		char *users;

		if (claim_users(p->c, json_string(ref, "namespace"), json_string(ref, "name"),
		    &users, error) != 0)
			return -1;
		if (users != NULL && !claim_cached) {
			sync_result_add_event(p->out, "Normal", "VolumeFailedRecycle",
			    xasprintf("Volume is used by pods: %s", users));
			free(users);
			return 0;
		}
		free(users);
		if (volume_recycler(p->c->state, volume) != NULL)
			return plan_recycle(p, volume, volume_recycler(p->c->state, volume), error);
		plan_volume_phase(p, volume, "Failed", "Warning", "VolumeFailedRecycle",
		    "No recycler plugin found for the volume!");
		return 0;
	}
	if (strcmp(policy, "Delete") == 0) {
		const char *by = annotation_text(volume, ANN_PROVISIONED_BY);
		char *message = NULL;

		if (*by != '\0') {
			if (strncmp(by, "kubernetes.io/", 14) != 0 || migrated_driver(by) != NULL) {
				/* the external provisioner's (kube's timestamp of a deletion) */
				operation_begin(p->c->state, json_string(volume, "metadata.name"),
				    migrated_driver(by) != NULL ? migrated_driver(by) : by, "delete",
				    p->now);
				return 0;
			}
			if (strcmp(by, "kubernetes.io/host-path") == 0)
				return 0;	/* host-path: not done */
			message = strcmp(by, "kubernetes.io/nfs") == 0 ?
			    xstrdup("no deletable volume plugin matched") :
			    xasprintf("no volume plugin matched name: %s", by);
		} else if (json_path(volume, "spec.csi") != NULL ||
		    json_path(volume, "spec.hostPath") != NULL) {
			return 0;	/* CSI: its provisioner's; hostPath: not done */
		} else {
			message = xasprintf("error getting deleter volume plugin for volume \"%s\": "
			    "%s", json_string(volume, "metadata.name"),
			    json_path(volume, "spec.nfs") != NULL ?
			    "no deletable volume plugin matched" : "no volume plugin matched");
		}
		plan_volume_phase(p, volume, "Failed", "Warning", "VolumeFailedDelete", message);
		free(message);
		return 0;
	}
	plan_volume_phase(p, volume, "Failed", "Warning", "VolumeUnknownReclaimPolicy",
	    "Volume has unrecognized PersistentVolumeReclaimPolicy");
	return 0;
}

static int
sync_volume(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct pv_state *st = c->state;
	struct pv_object vo, co = { 0 };
	struct pv_plan p = { c, out, NULL, NULL, now };
	const cJSON *ref;
	const char *ref_uid, *phase;
	cJSON *volume, *claim = NULL;
	int rc = 0, caught_up;

	out->owner_resource = st->volumes;
	if (pv_read_volume(c, key, &vo, error) != 0)
		return -1;
	if (vo.body == NULL)
		return 0;		/* gone: its claim was queued */
	out->owner_uid = xstrdup(vo.uid);
	out->owner = cJSON_Duplicate(vo.body, 1);
	out->requeue_after = st->period;
	if ((caught_up = controller_caught_up(c, key, vo.uid, out, error)) <= 0) {
		pv_object_clear(&vo);
		return caught_up;
	}
	p.volume_rv = vo.rv;
	volume = vo.body;
	if (plan_migration(&p, volume, 0))
		goto done;
	ref = json_path(volume, "spec.claimRef");
	ref_uid = json_string(ref, "uid");
	phase = json_string(volume, "status.phase");
	if (!cJSON_IsObject(ref) || *ref_uid == '\0') {
		plan_volume_phase(&p, volume, "Available", NULL, NULL, NULL);
		goto done;
	}
	if (pv_read_claim(c, json_string(ref, "namespace"), json_string(ref, "name"), &co,
	    error) != 0) {
		rc = -1;
		goto done;
	}
	if (co.body != NULL && strcmp(co.uid, ref_uid) == 0) {
		claim = co.body;
	} else if (co.body != NULL ||
	    (strcmp(phase, "Released") != 0 && strcmp(phase, "Failed") != 0)) {
		/* kube reads the claim live before it takes it for gone. */
		struct action *a = action_append(&out->confirm_absent, &out->nconfirm_absent);

		a->type = ACTION_GET;
		a->verb = "confirm-absent";
		a->resource = st->claims;
		a->namespace = xstrdup(json_string(ref, "namespace"));
		a->name = xstrdup(json_string(ref, "name"));
		a->uid = xstrdup(ref_uid);
		a->reason = xstrdup("the claim of the volume's claimRef is not cached");
	}
	if (claim == NULL) {
		if (strcmp(phase, "Released") != 0 && strcmp(phase, "Failed") != 0)
			plan_volume_phase(&p, volume, "Released", NULL, NULL, NULL);
		rc = plan_reclaim(&p, volume, co.body != NULL, error);
	} else if (*json_string(claim, "spec.volumeName") == '\0') {
		if (strcmp(volume_mode(claim), volume_mode(volume)) != 0)
			sync_result_add_event(out, "Warning", "VolumeMismatch",
			    xasprintf("Cannot bind PersistentVolume to requested "
			    "PersistentVolumeClaim \"%s\" due to incompatible volumeMode.",
			    json_string(claim, "metadata.name")));
		/* else: the claim's sync binds it (the handlers queued it). */
	} else if (strcmp(json_string(claim, "spec.volumeName"),
	    json_string(volume, "metadata.name")) == 0) {
		plan_volume_phase(&p, volume, "Bound", NULL, NULL, NULL);
	} else if (has_annotation(volume, ANN_PROVISIONED_BY) &&
	    strcmp(json_string(volume, "spec.persistentVolumeReclaimPolicy"), "Delete") == 0) {
		if (strcmp(phase, "Released") != 0 && strcmp(phase, "Failed") != 0)
			plan_volume_phase(&p, volume, "Released", NULL, NULL, NULL);
		rc = plan_reclaim(&p, volume, 1, error);
	} else {
		plan_unbind(&p, volume, xasprintf("claim %s/%s is bound to another volume",
		    json_string(volume, "spec.claimRef.namespace"),
		    json_string(volume, "spec.claimRef.name")));
	}
done:
	pv_object_clear(&co);
	pv_object_clear(&vo);
	return rc;
}

/* --- the type ------------------------------------------------------------------------- */

static int
pv_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	out->controller = c->type->name;
	out->key = xstrdup(key);
	if (strchr(key, '/') != NULL)
		return sync_claim(c, key, now, out, error);
	return sync_volume(c, key, now, out, error);
}

static void
pv_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	const char *res = ev->resource->name;
	char *key;

	if (ev->object == NULL)
		return;
	if (strcmp(res, "persistentvolumeclaims") == 0) {
		const char *volume = json_string(ev->object, "spec.volumeName");

		key = xasprintf("%s/%s", json_string(ev->object, "metadata.namespace"),
		    json_string(ev->object, "metadata.name"));
		q->add(key, q->arg);
		if (ev->type == INFORMER_DELETED)	/* an unfinished provisioning */
			operation_end(c->state, key, now, 0);
		free(key);
		if (ev->type == INFORMER_DELETED && *volume != '\0')
			q->add(volume, q->arg);
	} else if (strcmp(res, "persistentvolumes") == 0) {
		const cJSON *ref = json_path(ev->object, "spec.claimRef");

		if (ev->type == INFORMER_DELETED) {
			recycling_forget(c->state, json_string(ev->object, "metadata.name"));
			/* the end of a deletion (kube's deleteVolume) */
			operation_end(c->state, json_string(ev->object, "metadata.name"), now, 1);
		}
		q->add(json_string(ev->object, "metadata.name"), q->arg);
		if (cJSON_IsObject(ref) && *json_string(ref, "name") != '\0') {
			key = xasprintf("%s/%s", json_string(ref, "namespace"),
			    json_string(ref, "name"));
			q->add(key, q->arg);
			free(key);
		}
	} else if (strcmp(res, "pods") == 0) {
		/* A recycler pod's changes: its volume's recycling goes on. */
		const struct pv_state *st = c->state;
		const char *ns = json_string(ev->object, "metadata.namespace");
		const char *name = json_string(ev->object, "metadata.name");

		if (strncmp(name, "recycler-for-", 13) == 0 && name[13] != '\0' &&
		    (strcmp(ns, json_string(st->hostpath.template, "metadata.namespace")) == 0 ||
		    strcmp(ns, json_string(st->nfs.template, "metadata.namespace")) == 0))
			q->add(name + 13, q->arg);
	}
}

static int
pv_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct pv_state *st = c->state;

	if (controller_list_keys_of(st->stmt[STMT_CLAIM_KEYS], "persistentvolume-binder", cb,
	    arg, error) != 0)
		return -1;
	return controller_list_keys_of(st->stmt[STMT_VOLUME_KEYS], "persistentvolume-binder",
	    cb, arg, error);
}

/* --- metrics ------------------------------------------------------------------------- */

/* kube's pv_collector gauges of the volumes, counted from the cache at each scrape. */
static void
collect_volumes(struct metrics_family *family, void *arg)
{
	struct pv_state *st = arg;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_PV_COUNTS]);

	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *plugin = (const char *)sqlite3_column_text(stmt, 0);
		const char *mode = (const char *)sqlite3_column_text(stmt, 1);
		const char *class = (const char *)sqlite3_column_text(stmt, 2);
		int bound = sqlite3_column_int(stmt, 3);
		double n = sqlite3_column_double(stmt, 4);
		const char *total_labels[] = { plugin, mode, NULL };
		const char *class_labels[] = { class, NULL };

		if (family == st->total_pv)
			metrics_gauge_add(metrics_series_get(family, total_labels), n);
		else if ((family == st->bound_pv) == (bound != 0))
			metrics_gauge_add(metrics_series_get(family, class_labels), n);
	}
	sqlite3_reset(stmt);
}

/* kube's pv_collector gauges of the claims. */
static void
collect_claims(struct metrics_family *family, void *arg)
{
	struct pv_state *st = arg;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_PVC_COUNTS]);

	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *labels[] = { (const char *)sqlite3_column_text(stmt, 0),
			(const char *)sqlite3_column_text(stmt, 1),
			(const char *)sqlite3_column_text(stmt, 2), NULL };

		if ((family == st->bound_pvc) == (sqlite3_column_int(stmt, 3) != 0))
			metrics_gauge_add(metrics_series_get(family, labels),
			    sqlite3_column_double(stmt, 4));
	}
	sqlite3_reset(stmt);
}

/* Registers kube's metrics of the binder (pkg/controller/volume/persistentvolume/metrics). */
static int
register_metrics(struct pv_state *st, struct metrics_registry *registry, char **error)
{
	static const char *const total_labels[] = { "plugin_name", "volume_mode", NULL };
	static const char *const class_labels[] = { "storage_class", NULL };
	static const char *const claim_labels[] = { "namespace", "storage_class",
		"volume_attributes_class", NULL };
	static const char *const op_labels[] = { "plugin_name", "operation_name", NULL };
	static const struct metrics_spec specs[] = {
		{ METRICS_GAUGE, "pv_collector_total_pv_count",
		    "[ALPHA] Gauge measuring total number of persistent volumes", total_labels,
		    NULL, 0 },
		{ METRICS_GAUGE, "pv_collector_bound_pv_count",
		    "[ALPHA] Gauge measuring number of persistent volume currently bound",
		    class_labels, NULL, 0 },
		{ METRICS_GAUGE, "pv_collector_unbound_pv_count",
		    "[ALPHA] Gauge measuring number of persistent volume currently unbound",
		    class_labels, NULL, 0 },
		{ METRICS_GAUGE, "pv_collector_bound_pvc_count",
		    "[ALPHA] Gauge measuring number of persistent volume claim currently bound",
		    claim_labels, NULL, 0 },
		{ METRICS_GAUGE, "pv_collector_unbound_pvc_count",
		    "[ALPHA] Gauge measuring number of persistent volume claim currently unbound",
		    claim_labels, NULL, 0 },
		{ METRICS_COUNTER, "volume_operation_errors_total",
		    "[ALPHA] Total volume operation errors", op_labels, NULL, 0 },
		{ METRICS_COUNTER, "volume_operation_total_errors",
		    "[ALPHA] (Deprecated since 1.36.0) Total volume operation errors", op_labels,
		    NULL, 0 },
	};
	static const struct metrics_spec retro = { METRICS_COUNTER,
	    "retroactive_storageclass_total", "[ALPHA] Total number of retroactive "
	    "StorageClass assignments to persistent volume claim", NULL, NULL, 0 };
	static const double buckets[] = { .1, .25, .5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300,
		600 };
	static const struct metrics_spec seconds = { METRICS_HISTOGRAM,
	    "volume_operation_total_seconds", "[ALPHA] Storage operation end to end duration "
	    "in seconds", op_labels, buckets, sizeof buckets / sizeof buckets[0] };
	static const struct metrics_spec retro_errors = { METRICS_COUNTER,
	    "retroactive_storageclass_errors_total", "[ALPHA] Total number of failed "
	    "retroactive StorageClass assignments to persistent volume claim", NULL, NULL, 0 };
	struct metrics_family **families[] = { &st->total_pv, &st->bound_pv, &st->unbound_pv,
	    &st->bound_pvc, &st->unbound_pvc, &st->operation_errors,
	    &st->operation_errors_deprecated };
	struct metrics_family *f;

	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		if ((*families[i] = metrics_family_register(registry, &specs[i], error)) == NULL)
			return -1;
	}
	for (size_t i = 0; i < 3; i++)
		metrics_family_set_collector(*families[i], collect_volumes, st);
	for (size_t i = 3; i < 5; i++)
		metrics_family_set_collector(*families[i], collect_claims, st);
	if ((f = metrics_family_register(registry, &retro, error)) == NULL)
		return -1;
	st->retroactive = metrics_series_get(f, NULL);
	if ((f = metrics_family_register(registry, &retro_errors, error)) == NULL)
		return -1;
	st->retroactive_errors = metrics_series_get(f, NULL);
	if ((st->operation_seconds = metrics_family_register(registry, &seconds, error)) == NULL)
		return -1;
	return 0;
}

static int
pv_init(struct controller *c, char **error)
{
	struct pv_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->claims = resource_find("persistentvolumeclaims");
	st->volumes = resource_find("persistentvolumes");
	if (st->claims == NULL || st->volumes == NULL)
		return error_set(error, "persistentvolume-binder: unknown resources");
	st->pods = resource_find("pods");
	if (st->pods == NULL)
		return error_set(error, "persistentvolume-binder: unknown resources");
	st->period = controller_flag_seconds(c, "pvclaimbinder-sync-period");
	st->dynamic_provisioning = controller_flag_bool(c, "enable-dynamic-provisioning");
	if (controller_flag_bool(c, "enable-hostpath-provisioner"))
		log_warning("persistentvolume-binder: --enable-hostpath-provisioner: sqlkcm does not "
		    "provision hostPath volumes; claims of class provisioner "
		    "kubernetes.io/host-path get ProvisioningFailed");
	if (recycler_load(&st->hostpath, controller_flag_text(c,
	    "pv-recycler-pod-template-filepath-hostpath"), error) != 0 ||
	    recycler_load(&st->nfs, controller_flag_text(c,
	    "pv-recycler-pod-template-filepath-nfs"), error) != 0)
		return -1;
	st->hostpath.minimum_timeout = controller_flag_int(c,
	    "pv-recycler-minimum-timeout-hostpath");
	st->hostpath.timeout_increment = controller_flag_int(c,
	    "pv-recycler-timeout-increment-hostpath");
	st->nfs.minimum_timeout = controller_flag_int(c, "pv-recycler-minimum-timeout-nfs");
	st->nfs.timeout_increment = controller_flag_int(c, "pv-recycler-increment-timeout-nfs");
	if (store_prepare_statements(store_db(c->store), pv_sql, STMT_COUNT, st->stmt,
	    "persistentvolume-binder", error) != 0)
		return -1;
	if (c->config != NULL && c->config->metrics != NULL &&
	    register_metrics(st, c->config->metrics, error) != 0)
		return -1;
	return 0;
}

static void
pv_fini(struct controller *c)
{
	struct pv_state *st = c->state;

	if (st == NULL)
		return;
	{
		struct metrics_family *collected[] = { st->total_pv, st->bound_pv,
		    st->unbound_pv, st->bound_pvc, st->unbound_pvc };

		for (size_t i = 0; i < sizeof collected / sizeof collected[0]; i++)
			metrics_family_set_collector(collected[i], NULL, NULL);
	}
	store_finalize_statements(st->stmt, STMT_COUNT);
	for (int i = 0; i < st->noperations; i++) {
		free(st->operations[i].key);
		free(st->operations[i].plugin);
	}
	free(st->operations);
	for (int i = 0; i < st->nreserved; i++) {
		free(st->reserved[i].volume);
		free(st->reserved[i].claim);
	}
	free(st->reserved);
	for (int i = 0; i < st->nrecycling; i++) {
		free(st->recycling[i].volume);
		free(st->recycling[i].pod_uid);
	}
	free(st->recycling);
	cJSON_Delete(st->hostpath.template);
	cJSON_Delete(st->nfs.template);
	free(st);
	c->state = NULL;
}

static const char *const pv_resources[] = {
	"persistentvolumeclaims", "persistentvolumes", "storageclasses", "pods", NULL
};

static const struct controller_flag pv_flags[] = {
	{ "pvclaimbinder-sync-period", CONTROLLER_FLAG_DURATION, "15s", 0, 0,
	    "The period for syncing persistent volumes and persistent volume claims" },
	{ "pv-recycler-pod-template-filepath-nfs", CONTROLLER_FLAG_STRING, "", 0, 0,
	    "The file path to a pod definition used as a template for NFS persistent volume "
	    "recycling (JSON)" },
	{ "pv-recycler-minimum-timeout-nfs", CONTROLLER_FLAG_INT, "300", 0, 2147483647,
	    "The minimum ActiveDeadlineSeconds to use for an NFS Recycler pod" },
	{ "pv-recycler-increment-timeout-nfs", CONTROLLER_FLAG_INT, "30", 0, 2147483647,
	    "the increment of time added per Gi to ActiveDeadlineSeconds for an NFS scrubber "
	    "pod" },
	{ "pv-recycler-pod-template-filepath-hostpath", CONTROLLER_FLAG_STRING, "", 0, 0,
	    "The file path to a pod definition used as a template for HostPath persistent "
	    "volume recycling (JSON). This is for development and testing only and will not "
	    "work in a multi-node cluster." },
	{ "pv-recycler-minimum-timeout-hostpath", CONTROLLER_FLAG_INT, "60", 0, 2147483647,
	    "The minimum ActiveDeadlineSeconds to use for a HostPath Recycler pod. This is for "
	    "development and testing only and will not work in a multi-node cluster." },
	{ "pv-recycler-timeout-increment-hostpath", CONTROLLER_FLAG_INT, "30", 0, 2147483647,
	    "the increment of time added per Gi to ActiveDeadlineSeconds for a HostPath "
	    "scrubber pod. This is for development and testing only and will not work in a "
	    "multi-node cluster." },
	{ "enable-dynamic-provisioning", CONTROLLER_FLAG_BOOL, "true", 0, 0,
	    "Enable dynamic provisioning for environments that support it." },
	{ "enable-hostpath-provisioner", CONTROLLER_FLAG_BOOL, "false", 0, 0,
	    "Enable HostPath PV provisioning when running without a cloud provider (sqlkcm "
	    "does not provision hostPath volumes: accepted for kube's command lines)." },
	{ NULL, 0, NULL, 0, 0, NULL },
};

const struct controller_type persistentvolume_controller_type = {
	.name = "persistentvolume-binder",
	.resources = pv_resources,
	.default_workers = 1,		/* kube runs one claim and one volume worker */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = pv_flags,
	.event_component = "persistentvolume-controller",
	.client_name = "persistent-volume-binder",
	.recovery = NULL,
	.init = pv_init,
	.fini = pv_fini,
	.handle_event = pv_handle_event,
	.list_keys = pv_list_keys,
	.sync = pv_sync,
};
