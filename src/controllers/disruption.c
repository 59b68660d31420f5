/*
 * disruption.c - the disruption controller (kube's disruption-controller): it keeps each
 * PodDisruptionBudget's status, which the eviction API reads before it lets a pod go, and
 * resets DisruptionTarget pod conditions that an eviction left behind.
 *
 * A budget's key is "namespace/name". Its sync reads the pods its selector matches in its
 * namespace (a missing selector matches none, an empty one every pod) and computes:
 *   expectedPods    how many pods there should be: with an integer minAvailable, the pods
 *                   selected; with a percentage minAvailable or any maxUnavailable, the sum
 *                   of the scales (spec.replicas) of the pods' controllers, each counted
 *                   once: a ReplicationController, a Deployment (through the ReplicaSet it
 *                   controls), a ReplicaSet of no Deployment, a StatefulSet
 *   desiredHealthy  minAvailable, resolved against expectedPods when a percentage (rounded
 *                   up); or expectedPods minus maxUnavailable (rounded up), not below 0
 *   currentHealthy  the selected pods that are Ready, not being deleted, and not listed in
 *                   disruptedPods (an eviction was allowed less than two minutes ago)
 *   disruptionsAllowed  currentHealthy - desiredHealthy, 0 when negative or when
 *                   expectedPods is 0
 * and the DisruptionAllowed condition (True SufficientPods when a disruption is allowed,
 * else False InsufficientPods), observedGeneration, and disruptedPods without the pods
 * gone, being deleted, or listed more than two minutes ago. The status is written (PUT of
 * /status) only when one of those changed; a sync with an entry that will expire looks
 * again then. A sync that cannot compute the numbers (a selector it cannot read, a pod
 * whose controller it cannot find) sets disruptionsAllowed to 0 and the condition False
 * SyncFailed with the error, as kube's failSafe.
 *
 * kube reads the scale of any other controller kind with a live GET of its /scale
 * subresource. A sync here does no I/O: the scale of a kind other than the four above is
 * an error ("... cannot be read from the cache"), reported as kube reports a scale it
 * cannot find (the CalculateExpectedPodCountFailed event, the SyncFailed condition).
 * Budgets with an integer minAvailable never need a scale and work over any controller.
 *
 * A pod's key is "pod:namespace/name": a pod whose DisruptionTarget condition is True
 * while it is not being deleted, not finished and not so marked by the kubelet
 * (TerminationByKubelet) is stale two minutes after the condition's lastTransitionTime;
 * its sync then sets the condition to False (a PUT of the pod's status, the condition
 * without reason and message, as kube's), or looks again when it will be.
 *
 * Deviations from kube: a pod event queues every budget that selects the pod (kube queues
 * the first, and records MultiplePodDisruptionBudgets on the pod); the NotDeleted warning
 * kube records on a pod that outlived its disruptedPods entry is not recorded; a failed
 * sync writes the SyncFailed status only when it changed (kube writes it every time).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/disruption.h"
#include "intstr.h"
#include "json.h"
#include "resource.h"
#include "selector.h"
#include "timeutil.h"
#include "util.h"

#define PDB_RESOURCE "poddisruptionbudgets"

enum {
	STMT_PDB,
	STMT_PDBS_OF_NAMESPACE,
	STMT_POD,
	STMT_RC,
	STMT_RS,
	STMT_DEPLOYMENT,
	STMT_STATEFULSET,
	STMT_KEYS,
	STMT_STALE_KEYS,
	STMT_COUNT
};

static const char *const disruption_sql[STMT_COUNT] = {
	/* Budget ?2 in namespace ?1: its uid and body. */
	[STMT_PDB] =
	    "SELECT uid, body FROM cache_objects"
	    " WHERE resource = '" PDB_RESOURCE "' AND namespace = ?1 AND name = ?2",
	/* The budgets of namespace ?1: name and selector (JSON; NULL: none). */
	[STMT_PDBS_OF_NAMESPACE] =
	    "SELECT name, json_extract(body, '$.spec.selector') FROM cache_objects"
	    " WHERE resource = '" PDB_RESOURCE "' AND namespace = ?1 ORDER BY name",
	/* Pod ?2 in namespace ?1: uid and body. */
	[STMT_POD] =
	    "SELECT uid, body FROM cache_pods WHERE namespace = ?1 AND name = ?2",
	/* The controllers a pod's reference may name, in namespace ?1 by name ?2: uid and
	 * spec.replicas (and a ReplicaSet's own controller reference). */
	[STMT_RC] =
	    "SELECT uid, replicas FROM cache_replicationcontrollers"
	    " WHERE namespace = ?1 AND name = ?2",
	[STMT_RS] =
	    "SELECT r.uid, r.replicas, o.api_version, o.kind, o.name, o.owner_uid"
	    "  FROM cache_replicasets r"
	    "  LEFT JOIN object_owners o ON o.object_id = r.id AND o.owner_uid ="
	    "       (SELECT x.owner_uid FROM object_owners x"
	    "         WHERE x.object_id = r.id AND x.controller = 1 LIMIT 1)"
	    " WHERE r.namespace = ?1 AND r.name = ?2",
	[STMT_DEPLOYMENT] =
	    "SELECT uid, replicas FROM cache_deployments WHERE namespace = ?1 AND name = ?2",
	[STMT_STATEFULSET] =
	    "SELECT uid, coalesce(json_extract(body, '$.spec.replicas'), 1) FROM cache_objects"
	    " WHERE resource = 'statefulsets' AND namespace = ?1 AND name = ?2",
	/* Every budget. */
	[STMT_KEYS] =
	    "SELECT namespace, name FROM cache_objects WHERE resource = '" PDB_RESOURCE "'"
	    " ORDER BY namespace, name",
	/* Every pod with a DisruptionTarget condition True, not being deleted, as pod keys. */
	[STMT_STALE_KEYS] =
	    "SELECT '" DISRUPTION_POD_KEY_PREFIX "' || p.namespace || '/' || p.name"
	    "  FROM cache_pods p"
	    " WHERE p.deletion_timestamp IS NULL AND EXISTS ("
	    "       SELECT 1 FROM json_each(p.body, '$.status.conditions') c"
	    "        WHERE c.value ->> 'type' = 'DisruptionTarget'"
	    "          AND c.value ->> 'status' = 'True')"
	    " ORDER BY p.namespace, p.name",
};

/* The pods of namespace ?1 a selector matches: name, being deleted, Ready, and their
 * controller reference (api version, kind, name, uid; NULL: none). The selector's
 * expression (selector_to_sql over object_labels) ends it, its parameters after ?1. */
#define SELECTED_PODS_SQL \
	"SELECT p.name, p.deletion_timestamp IS NOT NULL, coalesce(p.ready, 0)," \
	"       o.api_version, o.kind, o.name, o.owner_uid" \
	"  FROM cache_pods p" \
	"  LEFT JOIN object_owners o ON o.object_id = p.id AND o.owner_uid =" \
	"       (SELECT x.owner_uid FROM object_owners x" \
	"         WHERE x.object_id = p.id AND x.controller = 1 LIMIT 1)" \
	" WHERE p.namespace = ?1 AND "

struct disruption_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *pdbs;
	const struct resource *pods;
	/* The last pod listing prepared and its SQL: budgets whose selectors have one shape
	 * (matchLabels of one key) share it. */
	sqlite3_stmt *selected;
	struct buf selected_sql, next_sql;
	/* The budgets' selectors by namespace, for pod events. */
	struct selector_cache *selectors;
};

/* --- rules ----------------------------------------------------------------------------- */

/* Parses an apiVersion as kube's ParseGroupVersion and returns its group (malloc'd), or
 * NULL with *error set. */
static char *
api_group(const char *api_version, char **error)
{
	const char *slash;

	if (api_version == NULL || *api_version == '\0' || strcmp(api_version, "/") == 0)
		return xstrdup("");
	slash = strchr(api_version, '/');
	if (slash == NULL)
		return xstrdup("");
	if (strchr(slash + 1, '/') != NULL) {
		error_set(error, "unexpected GroupVersion string: %s", api_version);
		return NULL;
	}
	return xstrndup(api_version, (size_t)(slash - api_version));
}

/* A controller reference: what a pod's (or a ReplicaSet's) says. */
struct controller_ref {
	const char *api_version, *kind, *name, *uid;
};

/* One controller counted in expectedPods. */
struct scale_entry {
	char *uid;
	long long replicas;
};

struct scales {
	struct scale_entry *v;
	int n;
};

static int
scales_has(const struct scales *s, const char *uid)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->v[i].uid, uid) == 0)
			return 1;
	return 0;
}

static void
scales_add(struct scales *s, const char *uid, long long replicas)
{
	if (scales_has(s, uid))
		return;
	s->v = xrealloc(s->v, (size_t)(s->n + 1) * sizeof *s->v);
	s->v[s->n].uid = xstrdup(uid);
	s->v[s->n].replicas = replicas;
	s->n++;
}

static void
scales_free(struct scales *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i].uid);
	free(s->v);
}

/* Looks a controller of one kind up by name in namespace: 1 with its uid (malloc'd) and
 * replicas when cached, 0 when not, -1 on a database error. */
static int
lookup_scale(sqlite3_stmt *stmt0, const char *namespace, const char *name, char **uid,
    long long *replicas, char **error)
{
	sqlite3_stmt *stmt = controller_stmt(stmt0);
	int rc, found = 0;

	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		*replicas = sqlite3_column_int64(stmt, 1);
		found = 1;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "disruption: reading a controller: %s",
		    sqlite3_errstr(rc));
	return found;
}

/*
 * Finds the scale of the controller ref names in namespace, as kube's finders in their
 * order (ReplicationController, Deployment through its ReplicaSet, ReplicaSet without a
 * Deployment, StatefulSet, then the scale subresource): 1 with the controller's uid and
 * replicas added to scales, 0 when none is found, -1 with *error set.
 */
static int
find_scale(struct disruption_state *st, const char *namespace, const struct controller_ref *ref,
    struct scales *scales, char **error)
{
	char *group = api_group(ref->api_version, error), *uid = NULL;
	long long replicas = 0;
	int rs_kind, found = 0;

	if (group == NULL)
		return -1;
	rs_kind = strcmp(ref->kind, "ReplicaSet") == 0 &&
	    (strcmp(group, "apps") == 0 || strcmp(group, "extensions") == 0);
	if (strcmp(ref->kind, "ReplicationController") == 0 && *group == '\0') {
		found = lookup_scale(st->stmt[STMT_RC], namespace, ref->name, &uid, &replicas,
		    error);
	} else if (rs_kind) {
		/* The Deployment and ReplicaSet finders read the same ReplicaSet. */
		sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_RS]);
		char *rs_uid = NULL, *owner_group = NULL, *owner_kind = NULL, *owner_name = NULL,
		    *owner_uid = NULL;
		long long rs_replicas = 0;
		int rc;

		sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 2, ref->name, -1, SQLITE_STATIC);
		rc = sqlite3_step(stmt);
		if (rc == SQLITE_ROW) {
			rs_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
			rs_replicas = sqlite3_column_int64(stmt, 1);
			if (sqlite3_column_type(stmt, 5) != SQLITE_NULL) {
				owner_group = api_group((const char *)sqlite3_column_text(stmt, 2),
				    error);
				owner_kind = xstrdup((const char *)sqlite3_column_text(stmt, 3));
				owner_name = xstrdup((const char *)sqlite3_column_text(stmt, 4));
				owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 5));
				if (owner_group == NULL)
					found = -1;
			}
		}
		sqlite3_reset(stmt);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			found = error_set(error, "disruption: reading a ReplicaSet: %s",
			    sqlite3_errstr(rc));
		if (found == 0 && rs_uid != NULL && strcmp(rs_uid, ref->uid) == 0) {
			if (owner_kind != NULL && strcmp(owner_kind, "Deployment") == 0) {
				/* Controlled by a Deployment: its scale, when it is cached with
				 * that uid; else (kube's scale subresource of the ReplicaSet)
				 * the ReplicaSet's own. */
				char *d_uid = NULL;
				long long d_replicas = 0;

				if (strcmp(owner_group, "apps") == 0 ||
				    strcmp(owner_group, "extensions") == 0)
					found = lookup_scale(st->stmt[STMT_DEPLOYMENT], namespace,
					    owner_name, &d_uid, &d_replicas, error);
				if (found == 1 && strcmp(d_uid, owner_uid) == 0) {
					uid = d_uid;
					replicas = d_replicas;
				} else if (found >= 0) {
					free(d_uid);
					found = strcmp(group, "apps") == 0;
					uid = found ? xstrdup(rs_uid) : NULL;
					replicas = rs_replicas;
				}
			} else {
				found = 1;
				uid = xstrdup(rs_uid);
				replicas = rs_replicas;
			}
		}
		free(rs_uid);
		free(owner_group);
		free(owner_kind);
		free(owner_name);
		free(owner_uid);
	} else if (strcmp(ref->kind, "StatefulSet") == 0 && strcmp(group, "apps") == 0) {
		found = lookup_scale(st->stmt[STMT_STATEFULSET], namespace, ref->name, &uid,
		    &replicas, error);
	} else if (strcmp(ref->kind, "Deployment") == 0 && strcmp(group, "apps") == 0) {
		/* Only kube's scale subresource finder takes a pod a Deployment controls
		 * itself: the Deployment's scale. */
		found = lookup_scale(st->stmt[STMT_DEPLOYMENT], namespace, ref->name, &uid,
		    &replicas, error);
	} else {
		/* Deviation: kube GETs the /scale subresource of any other kind. */
		found = error_set(error, "the scale of %s %s (%s) cannot be read from the cache:"
		    " only ReplicationControllers, ReplicaSets, Deployments and StatefulSets"
		    " are supported", ref->kind, ref->name,
		    ref->api_version != NULL ? ref->api_version : "");
	}
	free(group);
	if (found == 1 && !rs_kind && strcmp(uid, ref->uid) != 0)
		found = 0;	/* one of that name, but not the pod's: kube's uid check */
	if (found == 1)
		scales_add(scales, uid, replicas);
	free(uid);
	return found;
}

/* One selected pod, as the sync reads it. */
struct pdb_pod {
	char *name;
	int deleting;
	int ready;
	char *ref_api_version, *ref_kind, *ref_name, *ref_uid;	/* NULL: no controller */
};

static void
pdb_pods_free(struct pdb_pod *pods, int n)
{
	for (int i = 0; i < n; i++) {
		free(pods[i].name);
		free(pods[i].ref_api_version);
		free(pods[i].ref_kind);
		free(pods[i].ref_name);
		free(pods[i].ref_uid);
	}
	free(pods);
}

static char *
column_dup(sqlite3_stmt *stmt, int col)
{
	if (sqlite3_column_type(stmt, col) == SQLITE_NULL)
		return NULL;
	return xstrdup((const char *)sqlite3_column_text(stmt, col));
}

/* The pod listing of sel's shape (kept until another shape needs another), or NULL with
 * *error set. */
static sqlite3_stmt *
selected_stmt(struct disruption_state *st, sqlite3 *db, const struct selector *sel,
    char **error)
{
	sqlite3_stmt *stmt = NULL;

	buf_reset(&st->next_sql);
	buf_append_str(&st->next_sql, SELECTED_PODS_SQL);
	selector_to_sql(sel, "p.id", &st->next_sql);
	buf_append_str(&st->next_sql, " ORDER BY p.name");
	if (st->selected != NULL && st->selected_sql.len == st->next_sql.len &&
	    memcmp(st->selected_sql.data, st->next_sql.data, st->next_sql.len) == 0)
		return st->selected;
	if (sqlite3_prepare_v3(db, st->next_sql.data, -1, SQLITE_PREPARE_PERSISTENT, &stmt,
	    NULL) != SQLITE_OK) {
		error_set(error, "disruption: listing pods: %s", sqlite3_errmsg(db));
		sqlite3_finalize(stmt);
		return NULL;
	}
	sqlite3_finalize(st->selected);
	st->selected = stmt;
	buf_reset(&st->selected_sql);
	buf_append_str(&st->selected_sql, st->next_sql.data);
	return stmt;
}

/* The pods of namespace that sel matches, by name (the match is the SQL's, through the
 * label index); -1 on a database error. */
static int
select_pods(struct disruption_state *st, sqlite3 *db, const char *namespace,
    const struct selector *sel, struct pdb_pod **out, int *nout, char **error)
{
	sqlite3_stmt *stmt = selected_stmt(st, db, sel, error);
	struct pdb_pod *pods = NULL;
	int n = 0, rc;

	if (stmt == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	if (selector_bind(sel, stmt, 2, error) < 0) {
		sqlite3_reset(stmt);
		sqlite3_clear_bindings(stmt);
		return -1;
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		pods = xrealloc(pods, (size_t)(n + 1) * sizeof *pods);
		pods[n].name = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		pods[n].deleting = sqlite3_column_int(stmt, 1);
		pods[n].ready = sqlite3_column_int(stmt, 2) == 1;
		pods[n].ref_api_version = column_dup(stmt, 3);
		pods[n].ref_kind = column_dup(stmt, 4);
		pods[n].ref_name = column_dup(stmt, 5);
		pods[n].ref_uid = column_dup(stmt, 6);
		n++;
	}
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	if (rc != SQLITE_DONE) {
		pdb_pods_free(pods, n);
		return error_set(error, "disruption: reading the pods of %s: %s", namespace,
		    sqlite3_errstr(rc));
	}
	*out = pods;
	*nout = n;
	return 0;
}

/* kube's getExpectedScale: the sum of the scales of the pods' controllers; the names of
 * the pods without one in *unmanaged (a count). 0, or -1 with *error set. */
static int
expected_scale(struct disruption_state *st, const char *namespace, const struct pdb_pod *pods,
    int npods, long long *expected, int *unmanaged, char **error)
{
	struct scales scales = { NULL, 0 };

	*unmanaged = 0;
	*expected = 0;
	for (int i = 0; i < npods; i++) {
		struct controller_ref ref = { pods[i].ref_api_version, pods[i].ref_kind,
		    pods[i].ref_name, pods[i].ref_uid };
		int found;

		if (ref.uid == NULL) {
			(*unmanaged)++;
			continue;
		}
		if (scales_has(&scales, ref.uid))
			continue;
		found = find_scale(st, namespace, &ref, &scales, error);
		if (found < 0) {
			scales_free(&scales);
			return -1;
		}
		if (found == 0) {
			scales_free(&scales);
			return error_set(error, "found no controllers for pod \"%s\"",
			    pods[i].name);
		}
	}
	for (int i = 0; i < scales.n; i++)
		*expected += scales.v[i].replicas;
	scales_free(&scales);
	return 0;
}

/* kube's getExpectedPodCount. */
static int
expected_pod_count(struct disruption_state *st, const cJSON *pdb, const struct pdb_pod *pods,
    int npods, long long *expected, long long *desired, int *unmanaged, char **error)
{
	const char *namespace = json_string(pdb, "metadata.namespace");
	const cJSON *max_unavailable = json_path(pdb, "spec.maxUnavailable");
	const cJSON *min_available = json_path(pdb, "spec.minAvailable");
	long long value;

	*expected = 0;
	*desired = 0;
	*unmanaged = 0;
	if (max_unavailable != NULL && !cJSON_IsNull(max_unavailable)) {
		if (expected_scale(st, namespace, pods, npods, expected, unmanaged, error) != 0)
			return -1;
		if (intstr_scaled_value(max_unavailable, *expected, 1, &value, error) != 0)
			return -1;
		*desired = *expected - value;
		if (*desired < 0)
			*desired = 0;
	} else if (min_available != NULL && cJSON_IsNumber(min_available)) {
		*desired = (long long)min_available->valuedouble;
		*expected = npods;
	} else if (min_available != NULL && cJSON_IsString(min_available)) {
		if (expected_scale(st, namespace, pods, npods, expected, unmanaged, error) != 0)
			return -1;
		if (intstr_scaled_value(min_available, *expected, 1, &value, error) != 0)
			return -1;
		*desired = value;
	}
	return 0;
}

/* --- status ---------------------------------------------------------------------------- */

/* The DisruptionAllowed condition of status, or NULL. */
static cJSON *
find_condition(const cJSON *conditions, const char *type)
{
	cJSON *c;

	cJSON_ArrayForEach(c, conditions) {
		if (strcmp(json_string(c, "type"), type) == 0)
			return c;
	}
	return NULL;
}

/* kube's SetStatusCondition over conditions (an array, changed in place). */
static void
set_condition(cJSON *conditions, const char *type, const char *status, const char *reason,
    const char *message, long long observed_generation, double now)
{
	cJSON *c = find_condition(conditions, type);
	char at[TIME_RFC3339_SIZE];

	time_format_rfc3339((time_t)now, at);
	if (c == NULL) {
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", type);
		cJSON_AddStringToObject(c, "status", status);
		if (observed_generation != 0)
			cJSON_AddNumberToObject(c, "observedGeneration",
			    (double)observed_generation);
		cJSON_AddStringToObject(c, "lastTransitionTime", at);
		cJSON_AddStringToObject(c, "reason", reason);
		cJSON_AddStringToObject(c, "message", message);
		cJSON_AddItemToArray(conditions, c);
		return;
	}
	if (strcmp(json_string(c, "status"), status) != 0) {
		json_set(c, "status", cJSON_CreateString(status));
		json_set(c, "lastTransitionTime", cJSON_CreateString(at));
	}
	json_set(c, "reason", cJSON_CreateString(reason));
	json_set(c, "message", cJSON_CreateString(message));
	if (observed_generation != 0)
		json_set(c, "observedGeneration", cJSON_CreateNumber((double)observed_generation));
	else
		cJSON_DeleteItemFromObjectCaseSensitive(c, "observedGeneration");
}

/* The conditions of status, copied (an empty array when none). */
static cJSON *
conditions_copy(const cJSON *status)
{
	const cJSON *c = json_path(status, "conditions");

	return cJSON_IsArray(c) ? cJSON_Duplicate(c, 1) : cJSON_CreateArray();
}

/* Makes the update-status action of pdb with status (taken). */
static void
status_action(struct disruption_state *st, struct sync_result *out, const cJSON *pdb,
    cJSON *status, char *reason)
{
	struct action *a = xcalloc(1, sizeof *a);

	a->type = ACTION_UPDATE_STATUS;
	a->verb = "update-status";
	a->resource = st->pdbs;
	a->namespace = xstrdup(json_string(pdb, "metadata.namespace"));
	a->name = xstrdup(json_string(pdb, "metadata.name"));
	a->uid = xstrdup(out->owner_uid);
	a->body = cJSON_Duplicate(pdb, 1);
	json_set(a->body, "status", status);
	a->reason = reason;
	a->status_no_retry = 1;
	out->status = a;
}

/* kube's failSafe: disruptionsAllowed 0 and the condition False SyncFailed with message;
 * written when that changes the status. */
static void
fail_safe(struct disruption_state *st, struct sync_result *out, const cJSON *pdb,
    const char *message, double now)
{
	const cJSON *old = json_path(pdb, "status");
	cJSON *status = old != NULL ? cJSON_Duplicate(old, 1) : cJSON_CreateObject();
	cJSON *conditions = conditions_copy(old);

	if (!cJSON_IsObject(status)) {
		cJSON_Delete(status);
		status = cJSON_CreateObject();
	}
	json_set(status, "disruptionsAllowed", cJSON_CreateNumber(0));
	set_condition(conditions, "DisruptionAllowed", "False", "SyncFailed", message,
	    json_int(old, "observedGeneration", 0), now);
	json_set(status, "conditions", conditions);
	if (old != NULL && cJSON_Compare(old, status, 1)) {
		cJSON_Delete(status);
		return;
	}
	status_action(st, out, pdb, status, xasprintf("sync failed: %s", message));
}

/* Go's String() of a LabelSelector (its matchLabels sorted), for the UnmanagedPods
 * event. */
static char *
selector_go_string(const cJSON *selector)
{
	const cJSON *labels = json_path(selector, "matchLabels");
	const cJSON *exprs = json_path(selector, "matchExpressions");
	const cJSON **keys = NULL, *e;
	struct buf b;
	int n = 0;

	buf_init(&b);
	if (selector == NULL || cJSON_IsNull(selector))
		return xstrdup("nil");
	buf_append_str(&b, "&LabelSelector{MatchLabels:map[string]string{");
	cJSON_ArrayForEach(e, labels) {
		int i = n++;

		keys = xrealloc(keys, (size_t)n * sizeof *keys);
		while (i > 0 && strcmp(keys[i - 1]->string, e->string) > 0) {
			keys[i] = keys[i - 1];
			i--;
		}
		keys[i] = e;
	}
	for (int i = 0; i < n; i++)
		buf_printf(&b, "%s: %s,", keys[i]->string,
		    cJSON_IsString(keys[i]) ? keys[i]->valuestring : "");
	free(keys);
	buf_append_str(&b, "},MatchExpressions:[]LabelSelectorRequirement{");
	cJSON_ArrayForEach(e, exprs) {
		const cJSON *v;
		int first = 1;

		buf_printf(&b, "LabelSelectorRequirement{Key:%s,Operator:%s,Values:[",
		    json_string(e, "key"), json_string(e, "operator"));
		cJSON_ArrayForEach(v, json_path(e, "values")) {
			buf_printf(&b, "%s%s", first ? "" : " ",
			    cJSON_IsString(v) ? v->valuestring : "");
			first = 0;
		}
		buf_append_str(&b, "],},");
	}
	buf_append_str(&b, "},}");
	return buf_detach(&b);
}

/* --- sync of a budget ------------------------------------------------------------------ */

static int
sync_pdb(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct disruption_state *st = c->state;
	sqlite3_stmt *stmt;
	const char *name;
	char *namespace = NULL, *selector_error = NULL, *count_error = NULL;
	cJSON *pdb = NULL, *status, *disrupted, *conditions;
	const cJSON *old, *old_disrupted, *entry, *cond;
	struct selector *sel = NULL;
	struct pdb_pod *pods = NULL;
	int npods = 0, rc, unmanaged = 0, up_to_date;
	long long expected, desired, healthy = 0, allowed, generation;
	double recheck = 0;

	out->owner_resource = st->pdbs;
	if (controller_key_split(key, &namespace, &name) != 0)
		return error_set(error, "disruption: %s is not a namespace/name key", key);
	stmt = controller_stmt(st->stmt[STMT_PDB]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		pdb = controller_column_json(stmt, 1);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		free(namespace);
		return error_set(error, "disruption: reading %s: %s", key, sqlite3_errstr(rc));
	}
	if (rc == SQLITE_DONE || pdb == NULL) {
		free(namespace);
		if (rc == SQLITE_ROW)
			return error_set(error, "disruption: %s: its cached body is not JSON",
			    key);
		out->forget_expectations = 1;
		return 0;
	}
	out->owner = cJSON_Duplicate(pdb, 1);

	/* The pods. */
	sel = selector_from_json(json_path(pdb, "spec.selector"), &selector_error);
	if (sel == NULL) {
		sync_result_add_event(out, "Warning", "NoPods",
		    xasprintf("Failed to get pods: %s", selector_error));
		fail_safe(st, out, pdb, selector_error, now);
		goto done;
	}
	if (select_pods(st, store_db(c->store), namespace, sel, &pods, &npods,
	    error) != 0) {
		rc = -1;
		goto fail;
	}
	if (npods == 0)
		sync_result_add_event(out, "Normal", "NoPods", xstrdup("No matching pods found"));

	/* What they should be. */
	if (expected_pod_count(st, pdb, pods, npods, &expected, &desired, &unmanaged,
	    &count_error) != 0) {
		sync_result_add_event(out, "Warning", "CalculateExpectedPodCountFailed",
		    xasprintf("Failed to calculate the number of expected pods: %s",
		    count_error));
		fail_safe(st, out, pdb, count_error, now);
		goto done;
	}
	if (unmanaged > 0) {
		char *s = selector_go_string(json_path(pdb, "spec.selector"));

		sync_result_add_event(out, "Warning", "UnmanagedPods", xasprintf(
		    "Pods selected by this PodDisruptionBudget (selector: %s) were found to be"
		    " unmanaged. As a result, the status of the PDB cannot be calculated"
		    " correctly, which may result in undefined behavior. To account for these"
		    " pods please set \".spec.minAvailable\" field of the PDB to an integer"
		    " value.", s));
		free(s);
	}

	/* disruptedPods: the entries of pods still here, not being deleted, not expired. */
	old = json_path(pdb, "status");
	old_disrupted = json_path(old, "disruptedPods");
	disrupted = cJSON_CreateObject();
	for (int i = 0; i < npods && cJSON_IsObject(old_disrupted); i++) {
		time_t at;

		if (pods[i].deleting)
			continue;
		entry = cJSON_GetObjectItemCaseSensitive(old_disrupted, pods[i].name);
		if (!cJSON_IsString(entry) || time_parse_rfc3339(entry->valuestring, &at) != 0)
			continue;
		if ((double)at + DISRUPTION_DELETION_TIMEOUT < now)
			continue;	/* expected deleted, and was not (kube's NotDeleted) */
		cJSON_AddItemToObject(disrupted, pods[i].name, cJSON_Duplicate(entry, 1));
		if (recheck == 0 || (double)at + DISRUPTION_DELETION_TIMEOUT < recheck)
			recheck = (double)at + DISRUPTION_DELETION_TIMEOUT;
	}
	/* currentHealthy. */
	for (int i = 0; i < npods; i++) {
		time_t at;

		if (pods[i].deleting || !pods[i].ready)
			continue;
		entry = cJSON_GetObjectItemCaseSensitive(disrupted, pods[i].name);
		if (entry != NULL && time_parse_rfc3339(entry->valuestring, &at) == 0 &&
		    (double)at + DISRUPTION_DELETION_TIMEOUT > now)
			continue;
		healthy++;
	}
	allowed = healthy - desired;
	if (expected <= 0 || allowed <= 0)
		allowed = 0;
	generation = json_int(pdb, "metadata.generation", 0);

	/* Unchanged? kube's comparison, the condition's included. */
	cond = find_condition(json_path(old, "conditions"), "DisruptionAllowed");
	up_to_date = cond != NULL && json_int(old, "observedGeneration", 0) == generation &&
	    (json_int(old, "disruptionsAllowed", 0) > 0 ?
	    strcmp(json_string(cond, "status"), "True") == 0 &&
	    strcmp(json_string(cond, "reason"), "SufficientPods") == 0 :
	    strcmp(json_string(cond, "status"), "False") == 0 &&
	    strcmp(json_string(cond, "reason"), "InsufficientPods") == 0);
	if (up_to_date && json_int(old, "currentHealthy", 0) == healthy &&
	    json_int(old, "desiredHealthy", 0) == desired &&
	    json_int(old, "expectedPods", 0) == expected &&
	    json_int(old, "disruptionsAllowed", 0) == allowed &&
	    cJSON_Compare(cJSON_IsObject(old_disrupted) ? old_disrupted : disrupted,
	    disrupted, 1)) {
		cJSON_Delete(disrupted);
		goto done;
	}
	status = cJSON_CreateObject();
	if (generation != 0)
		cJSON_AddNumberToObject(status, "observedGeneration", (double)generation);
	if (cJSON_GetArraySize(disrupted) > 0)
		cJSON_AddItemToObject(status, "disruptedPods", disrupted);
	else
		cJSON_Delete(disrupted);
	cJSON_AddNumberToObject(status, "disruptionsAllowed", (double)allowed);
	cJSON_AddNumberToObject(status, "currentHealthy", (double)healthy);
	cJSON_AddNumberToObject(status, "desiredHealthy", (double)desired);
	cJSON_AddNumberToObject(status, "expectedPods", (double)expected);
	conditions = conditions_copy(old);
	if (allowed > 0)
		set_condition(conditions, "DisruptionAllowed", "True", "SufficientPods", "",
		    generation, now);
	else
		set_condition(conditions, "DisruptionAllowed", "False", "InsufficientPods", "",
		    generation, now);
	cJSON_AddItemToObject(status, "conditions", conditions);
	status_action(st, out, pdb, status, xasprintf("currentHealthy=%lld desiredHealthy=%lld"
	    " expectedPods=%lld disruptionsAllowed=%lld", healthy, desired, expected, allowed));
done:
	if (recheck > 0)
		out->requeue_after = recheck - now > 0 ? recheck - now : 0.001;
	rc = 0;
fail:
	pdb_pods_free(pods, npods);
	selector_free(sel);
	free(selector_error);
	free(count_error);
	cJSON_Delete(pdb);
	free(namespace);
	return rc;
}

/* --- sync of a pod's stale DisruptionTarget condition ---------------------------------- */

/* kube's nonTerminatingPodHasStaleDisruptionCondition: 1 when pod has a DisruptionTarget
 * condition that will be stale, with the seconds until it is in *wait (0: it is). */
static int
pod_has_stale_condition(const cJSON *pod, double now, double *wait)
{
	const cJSON *cond;
	const char *phase = json_string(pod, "status.phase");
	time_t at = 0;

	*wait = 0;
	if (json_path(pod, "metadata.deletionTimestamp") != NULL)
		return 0;
	cond = find_condition(json_path(pod, "status.conditions"), "DisruptionTarget");
	if (cond == NULL || strcmp(json_string(cond, "status"), "True") != 0 ||
	    strcmp(json_string(cond, "reason"), "TerminationByKubelet") == 0 ||
	    strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)
		return 0;
	/* A condition without a time it can read is as old as the epoch: stale. */
	if (time_parse_rfc3339(json_string(cond, "lastTransitionTime"), &at) != 0)
		at = 0;
	*wait = DISRUPTION_STALE_TIMEOUT - (now - (double)at);
	if (*wait < 0)
		*wait = 0;
	return 1;
}

static int
sync_pod(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct disruption_state *st = c->state;
	sqlite3_stmt *stmt;
	const char *name;
	char *namespace = NULL, at[TIME_RFC3339_SIZE];
	cJSON *pod = NULL, *cond, *conditions;
	struct action *a;
	double wait;
	long long generation;
	int rc;

	out->owner_resource = st->pods;
	if (controller_key_split(key + strlen(DISRUPTION_POD_KEY_PREFIX), &namespace,
	    &name) != 0)
		return error_set(error, "disruption: %s is not a pod key", key);
	stmt = controller_stmt(st->stmt[STMT_POD]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		pod = controller_column_json(stmt, 1);
	}
	sqlite3_reset(stmt);
	free(namespace);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "disruption: reading pod %s: %s", key,
		    sqlite3_errstr(rc));
	if (pod == NULL) {
		if (rc == SQLITE_ROW)
			return error_set(error, "disruption: %s: its cached body is not JSON",
			    key);
		out->forget_expectations = 1;
		return 0;
	}
	if (!pod_has_stale_condition(pod, now, &wait)) {
		cJSON_Delete(pod);
		return 0;
	}
	if (wait > 0) {
		out->requeue_after = wait;
		cJSON_Delete(pod);
		return 0;
	}
	/* The condition replaced, as kube's UpdatePodCondition: status False, a new
	 * lastTransitionTime, no reason nor message, and the pod's generation observed. */
	conditions = cJSON_GetObjectItemCaseSensitive(json_child_object(pod, "status"),
	    "conditions");
	cond = find_condition(conditions, "DisruptionTarget");
	generation = json_int(pod, "metadata.generation", 0);
	time_format_rfc3339((time_t)now, at);
	cJSON_DeleteItemFromObjectCaseSensitive(cond, "reason");
	cJSON_DeleteItemFromObjectCaseSensitive(cond, "message");
	cJSON_DeleteItemFromObjectCaseSensitive(cond, "lastProbeTime");
	json_set(cond, "status", cJSON_CreateString("False"));
	json_set(cond, "lastTransitionTime", cJSON_CreateString(at));
	if (generation != 0)
		json_set(cond, "observedGeneration", cJSON_CreateNumber((double)generation));
	else
		cJSON_DeleteItemFromObjectCaseSensitive(cond, "observedGeneration");
	a = xcalloc(1, sizeof *a);
	a->type = ACTION_UPDATE_STATUS;
	a->verb = "update-status";
	a->resource = st->pods;
	a->namespace = xstrdup(json_string(pod, "metadata.namespace"));
	a->name = xstrdup(json_string(pod, "metadata.name"));
	a->uid = xstrdup(out->owner_uid);
	a->body = pod;
	a->reason = xstrdup("stale DisruptionTarget condition reset to False");
	/* not over a pod read back: the kubelet's newer status would be lost */
	a->status_no_retry = 1;
	out->status = a;
	return 0;
}

static int
disruption_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	out->controller = c->type->name;
	out->key = xstrdup(key);
	if (strncmp(key, DISRUPTION_POD_KEY_PREFIX, strlen(DISRUPTION_POD_KEY_PREFIX)) == 0)
		return sync_pod(c, key, now, out, error);
	return sync_pdb(c, key, now, out, error);
}

/* --- handlers -------------------------------------------------------------------------- */

/* Queues every budget of the pod's namespace whose selector matches its labels (an empty
 * one matches every pod, as policy/v1 has it), through the selectors kept parsed. */
static void
enqueue_pdbs_of_pod(struct disruption_state *st, const cJSON *pod,
    const struct controller_queue *q)
{
	controller_enqueue_matching_cached(st->selectors, st->stmt[STMT_PDBS_OF_NAMESPACE],
	    json_string(pod, "metadata.namespace"), json_path(pod, "metadata.labels"), q);
}

static void
disruption_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct disruption_state *st = c->state;
	const char *namespace = json_string(ev->object, "metadata.namespace");
	const char *name = json_string(ev->object, "metadata.name");
	double wait;
	char *key;

	if (*name == '\0')
		return;
	if (ev->resource == st->pdbs) {
		selector_cache_forget(st->selectors, namespace);
		key = xasprintf("%s/%s", namespace, name);
		q->add(key, q->arg);
		free(key);
		return;
	}
	if (ev->resource != st->pods)
		return;		/* controllers: read for their scale, as kube's listers */
	enqueue_pdbs_of_pod(st, ev->object, q);
	if (ev->type != INFORMER_DELETED && pod_has_stale_condition(ev->object, now, &wait)) {
		key = xasprintf(DISRUPTION_POD_KEY_PREFIX "%s/%s", namespace, name);
		q->add_after(key, wait, q->arg);
		free(key);
	}
}

static int
disruption_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct disruption_state *st = c->state;

	if (controller_list_keys_of(st->stmt[STMT_KEYS], "disruption", cb, arg, error) != 0)
		return -1;
	return controller_list_keys_of(st->stmt[STMT_STALE_KEYS], "disruption", cb, arg,
	    error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
disruption_init(struct controller *c, char **error)
{
	struct disruption_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->pdbs = resource_find(PDB_RESOURCE);
	st->pods = resource_find("pods");
	if (st->pdbs == NULL || st->pods == NULL)
		return error_set(error, "disruption: its resources are not known");
	st->selectors = selector_cache_new();
	selector_cache_match_empty(st->selectors);
	return store_prepare_statements(store_db(c->store), disruption_sql, STMT_COUNT,
	    st->stmt, "disruption", error);
}

static void
disruption_fini(struct controller *c)
{
	struct disruption_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	sqlite3_finalize(st->selected);
	buf_free(&st->selected_sql);
	buf_free(&st->next_sql);
	selector_cache_free(st->selectors);
	free(st);
	c->state = NULL;
}

static const char *const disruption_resources[] = {
	PDB_RESOURCE, "pods", "replicationcontrollers", "replicasets", "deployments",
	"statefulsets", NULL
};

const struct controller_type disruption_controller_type = {
	.name = "disruption",
	.resources = disruption_resources,
	.default_workers = 1,		/* kube runs one worker; no flag */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = NULL,
	.event_component = "controllermanager",
	.client_name = "disruption-controller",
	.recovery = NULL,
	.init = disruption_init,
	.fini = disruption_fini,
	.handle_event = disruption_handle_event,
	.list_keys = disruption_list_keys,
	.sync = disruption_sync,
};
