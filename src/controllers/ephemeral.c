/*
 * ephemeral.c - the ephemeral volume controller (kube's ephemeral-volume-controller): the
 * claim of each generic ephemeral volume of a pod.
 *
 * A key is a pod's namespace/name. A pod being deleted is left alone. For each volume of
 * the pod with an `ephemeral` source, in the pod's order, the claim is <pod>-<volume>:
 *   - if the cache holds it and the pod is its controller, nothing is done;
 *   - if it holds it and the pod is not, the sync stops there with kube's Warning
 *     FailedBinding on the pod ("ephemeral volume V: PVC NS/N was not created for pod
 *     NS/P (pod is not owner)") and is tried again with backoff;
 *   - otherwise the claim is created from the volume's volumeClaimTemplate (its labels,
 *     annotations and spec), the pod its controller (blockOwnerDeletion, so that a
 *     foreground deletion of the pod waits for it). A failed creation stops the sync with
 *     FailedBinding ("ephemeral volume V: create PVC N: <error>"), as kube's.
 * The handlers queue a pod with an ephemeral volume when it is added (its volumes never
 * change), and, when a claim is deleted, the pods with an ephemeral volume that use it
 * (as an ephemeral volume's claim or by name in a persistentVolumeClaim volume, as kube's
 * pod-pvc index has them). kube's counters
 * ephemeral_volume_controller_create_total and ..._create_failures_total count the
 * creations tried and those that failed. The view ephemeral_volume_claims
 * (schema/034-ephemeral.sql) shows each such volume, its claim and whether the pod owns it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "controllerref.h"
#include "controllers/ephemeral.h"
#include "json.h"
#include "metrics.h"
#include "resource.h"
#include "util.h"

enum {
	STMT_POD,
	STMT_CLAIM,
	STMT_CLAIM_PODS,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const ephemeral_sql[STMT_COUNT] = {
	[STMT_POD] = "SELECT uid, body FROM cache_pods WHERE namespace = ?1 AND name = ?2",
	[STMT_CLAIM] = "SELECT body FROM cache_objects WHERE resource = 'persistentvolumeclaims'"
	    " AND namespace = ?1 AND name = ?2",
	/* The pods of namespace ?1 not being deleted, with an ephemeral volume, that use
	 * claim ?2: as an ephemeral volume's or in a persistentVolumeClaim volume (kube looks
	 * the pods up in its pod-pvc index, which holds both). */
	[STMT_CLAIM_PODS] = "SELECT p.name FROM cache_pods p WHERE p.namespace = ?1"
	    " AND p.deletion_timestamp IS NULL"
	    " AND EXISTS (SELECT 1 FROM json_each(p.body, '$.spec.volumes') v"
	    "   WHERE json_extract(v.value, '$.ephemeral') IS NOT NULL)"
	    " AND EXISTS (SELECT 1 FROM json_each(p.body, '$.spec.volumes') v"
	    "   WHERE (json_extract(v.value, '$.ephemeral') IS NOT NULL"
	    "     AND p.name || '-' || json_extract(v.value, '$.name') = ?2)"
	    "   OR (json_extract(v.value, '$.ephemeral') IS NULL"
	    "     AND json_extract(v.value, '$.persistentVolumeClaim.claimName') = ?2))",
	/* Every pod with an ephemeral volume. */
	[STMT_KEYS] = "SELECT p.namespace, p.name FROM cache_pods p"
	    " WHERE p.deletion_timestamp IS NULL"
	    " AND EXISTS (SELECT 1 FROM json_each(p.body, '$.spec.volumes') v"
	    "   WHERE json_extract(v.value, '$.ephemeral') IS NOT NULL)"
	    " ORDER BY p.namespace, p.name",
};

struct ephemeral_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *pods, *claims;
	struct metrics_series *create_total, *create_failures;
};

/* --- the rules ------------------------------------------------------------------------- */

int
ephemeral_has_volume(const cJSON *pod)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, json_path(pod, "spec.volumes")) {
		if (json_is_set(v, "ephemeral"))
			return 1;
	}
	return 0;
}

char *
ephemeral_claim_name(const cJSON *pod, const cJSON *volume)
{
	return xasprintf("%s-%s", json_string(pod, "metadata.name"),
	    json_string(volume, "name"));
}

int
ephemeral_claim_is_for_pod(const cJSON *claim, const cJSON *pod)
{
	const cJSON *ref = controllerref_of(claim);

	return ref != NULL && strcmp(json_string(claim, "metadata.namespace"),
	    json_string(pod, "metadata.namespace")) == 0 &&
	    strcmp(json_string(ref, "uid"), json_string(pod, "metadata.uid")) == 0;
}

cJSON *
ephemeral_claim_new(const cJSON *pod, const cJSON *volume)
{
	const cJSON *template = json_path(volume, "ephemeral.volumeClaimTemplate");
	const cJSON *labels = json_path(template, "metadata.labels");
	const cJSON *annotations = json_path(template, "metadata.annotations");
	const cJSON *spec = json_path(template, "spec");
	cJSON *claim = cJSON_CreateObject(), *meta, *ref;
	char *name = ephemeral_claim_name(pod, volume);

	cJSON_AddStringToObject(claim, "apiVersion", "v1");
	cJSON_AddStringToObject(claim, "kind", "PersistentVolumeClaim");
	meta = cJSON_AddObjectToObject(claim, "metadata");
	cJSON_AddStringToObject(meta, "name", name);
	free(name);
	cJSON_AddStringToObject(meta, "namespace", json_string(pod, "metadata.namespace"));
	if (cJSON_IsObject(labels))
		cJSON_AddItemToObject(meta, "labels", cJSON_Duplicate(labels, 1));
	if (cJSON_IsObject(annotations))
		cJSON_AddItemToObject(meta, "annotations", cJSON_Duplicate(annotations, 1));
	ref = cJSON_CreateObject();
	cJSON_AddStringToObject(ref, "apiVersion", "v1");
	cJSON_AddStringToObject(ref, "kind", "Pod");
	cJSON_AddStringToObject(ref, "name", json_string(pod, "metadata.name"));
	cJSON_AddStringToObject(ref, "uid", json_string(pod, "metadata.uid"));
	cJSON_AddTrueToObject(ref, "controller");
	cJSON_AddTrueToObject(ref, "blockOwnerDeletion");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"), ref);
	cJSON_AddItemToObject(claim, "spec", cJSON_IsObject(spec) ?
	    cJSON_Duplicate(spec, 1) : cJSON_CreateObject());
	return claim;
}

/* --- sync ------------------------------------------------------------------------------ */

/* The cached claim name of namespace, or NULL (*failed set when the read failed). */
static cJSON *
claim_read(struct ephemeral_state *st, const char *namespace, const char *name,
    int *failed)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_CLAIM]);
	cJSON *claim = NULL;
	int rc;

	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		claim = controller_column_json(stmt, 0);
	*failed = rc != SQLITE_ROW && rc != SQLITE_DONE;
	sqlite3_reset(stmt);
	return claim;
}

static int
ephemeral_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct ephemeral_state *st = c->state;
	const char *slash = strchr(key, '/');
	char *namespace;
	const cJSON *v;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->pods;
	if (slash == NULL)
		return 0;		/* not a pod's key */
	if (controller_read_owner(st->stmt[STMT_POD], key, "ephemeral-volume", out,
	    error) != 0)
		return -1;
	namespace = xstrndup(key, (size_t)(slash - key));
	/* Gone, or being deleted: nothing to do. */
	if (out->owner == NULL || json_is_set(out->owner, "metadata.deletionTimestamp")) {
		free(namespace);
		return 0;
	}
	cJSON_ArrayForEach(v, json_path(out->owner, "spec.volumes")) {
		char *name;
		cJSON *claim;
		struct action *a;
		int failed;

		if (!json_is_set(v, "ephemeral"))
			continue;
		name = ephemeral_claim_name(out->owner, v);
		claim = claim_read(st, namespace, name, &failed);
		if (failed) {
			error_set(error, "ephemeral-volume: reading claim %s/%s: %s", namespace,
			    name, sqlite3_errmsg(store_db(c->store)));
			free(name);
			free(namespace);
			return -1;
		}
		if (claim != NULL) {
			int ours = ephemeral_claim_is_for_pod(claim, out->owner);

			cJSON_Delete(claim);
			if (!ours) {
				sync_result_add_event(out, "Warning", "FailedBinding",
				    xasprintf("ephemeral volume %s: PVC %s/%s was not created for "
				    "pod %s (pod is not owner)", json_string(v, "name"), namespace,
				    name, key));
				out->failed = 1;
				free(name);
				break;
			}
			free(name);
			continue;
		}
		a = action_append(&out->writes, &out->nwrites);
		a->type = ACTION_CREATE;
		a->verb = "create";
		a->resource = st->claims;
		a->namespace = xstrdup(namespace);
		a->name = name;
		a->body = ephemeral_claim_new(out->owner, v);
		a->reason = xasprintf("ephemeral volume %s", json_string(v, "name"));
		a->failed_reason = "FailedBinding";
		a->failed_message = xasprintf("ephemeral volume %s: create PVC %s: ",
		    json_string(v, "name"), name);
		a->count_done = st->create_total;
		a->count_failed[0] = st->create_total;
		a->count_failed[1] = st->create_failures;
	}
	free(namespace);
	return 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
queue_pod(const cJSON *pod, const struct controller_queue *q)
{
	char *key;

	if (json_is_set(pod, "metadata.deletionTimestamp") || !ephemeral_has_volume(pod))
		return;
	key = xasprintf("%s/%s", json_string(pod, "metadata.namespace"),
	    json_string(pod, "metadata.name"));
	q->add(key, q->arg);
	free(key);
}

static void
ephemeral_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct ephemeral_state *st = c->state;
	const char *ns = json_string(ev->object, "metadata.namespace");
	sqlite3_stmt *stmt;

	(void)now;
	if (ev->resource == st->pods) {
		if (ev->type == INFORMER_ADDED)
			queue_pod(ev->object, q);
		return;
	}
	if (ev->resource != st->claims || ev->type != INFORMER_DELETED)
		return;
	/* A claim gone: the pods that use it look at their ephemeral volumes again. */
	stmt = controller_stmt(st->stmt[STMT_CLAIM_PODS]);
	sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, json_string(ev->object, "metadata.name"), -1,
	    SQLITE_TRANSIENT);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		char *key = xasprintf("%s/%s", ns, sqlite3_column_text(stmt, 0));

		q->add(key, q->arg);
		free(key);
	}
	sqlite3_reset(stmt);
}

static int
ephemeral_list_keys(struct controller *c, void (*cb)(const char *key, void *arg),
    void *arg, char **error)
{
	struct ephemeral_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "ephemeral-volume", cb, arg,
	    error);
}

/* --- the type -------------------------------------------------------------------------- */

/* Registers kube's two counters of the claims it creates. */
static int
ephemeral_register_metrics(struct ephemeral_state *st, struct metrics_registry *registry,
    char **error)
{
	static const struct metrics_spec total = { METRICS_COUNTER,
	    "ephemeral_volume_controller_create_total",
	    "Number of PersistentVolumeClaim creation requests", NULL, NULL, 0 };
	static const struct metrics_spec failures = { METRICS_COUNTER,
	    "ephemeral_volume_controller_create_failures_total",
	    "Number of PersistentVolumeClaim creation requests", NULL, NULL, 0 };
	struct metrics_family *t = metrics_family_register(registry, &total, error);
	struct metrics_family *f = t != NULL ?
	    metrics_family_register(registry, &failures, error) : NULL;

	if (f == NULL)
		return -1;
	st->create_total = metrics_series_get(t, NULL);
	st->create_failures = metrics_series_get(f, NULL);
	return 0;
}

static int
ephemeral_init(struct controller *c, char **error)
{
	struct ephemeral_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->pods = resource_find("pods");
	st->claims = resource_find("persistentvolumeclaims");
	if (st->pods == NULL || st->claims == NULL)
		return error_set(error, "ephemeral-volume: pods or claims are not known resources");
	if (c->config->metrics != NULL &&
	    ephemeral_register_metrics(st, c->config->metrics, error) != 0)
		return -1;
	return store_prepare_statements(store_db(c->store), ephemeral_sql, STMT_COUNT,
	    st->stmt, "ephemeral-volume", error);
}

static void
ephemeral_fini(struct controller *c)
{
	struct ephemeral_state *st = c->state;

	if (st == NULL)
		return;
	for (int i = 0; i < STMT_COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	free(st);
	c->state = NULL;
}

static const char *const ephemeral_resources[] = { "pods", "persistentvolumeclaims", NULL };

const struct controller_type ephemeral_controller_type = {
	.name = "ephemeral-volume",
	.resources = ephemeral_resources,
	.default_workers = 5,
	.workers_flag = "concurrent-ephemeralvolume-syncs",
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "ephemeral_volume",
	.client_name = "ephemeral-volume-controller",
	.recovery = NULL,
	.init = ephemeral_init,
	.fini = ephemeral_fini,
	.handle_event = ephemeral_handle_event,
	.list_keys = ephemeral_list_keys,
	.sync = ephemeral_sync,
};
