/*
 * statefulset.c - the StatefulSet controller: pods with a stable name, host name and
 * storage each, made and removed in the order of their ordinals.
 *
 * It follows kube-controller-manager's StatefulSet controller (pkg/controller/statefulset,
 * v1.36.3). A sync of one StatefulSet reads the cache and decides, writing nothing:
 *
 * 1. The set is gone: drop its expectations. The cache lags its own last writes: wait.
 * 2. Claiming: its pods (those named "<set>-<ordinal>") and the namespace's orphans the
 *    selector matches (adopted), and its ControllerRevisions (orphans adopted alike).
 * 3. History: the update revision is the one whose data is the template now (the newest
 *    of them, renumbered past the others when it is not the newest: an undo), or a new
 *    one named "<set>-<hash>" (a name taken by other data moves status.collisionCount
 *    on, and nothing else happens in that sync). The current revision is the one
 *    status.currentRevision names, else the update revision.
 * 4. Replicas: the ordinals from spec.ordinals.start, spec.replicas of them. A missing
 *    pod is created (its claims first, one per volumeClaimTemplate, named
 *    "<template>-<set>-<ordinal>"), of the current revision below the partition and of
 *    the update revision from it; a failed or succeeded pod is deleted (and made again
 *    the next time). OrderedReady does one thing at a time, lowest ordinal first, and
 *    goes on only past pods Running, Ready and available (minReadySeconds); Parallel does
 *    everything at once.
 * 5. Condemned pods (ordinals out of the range): their claims get the owners the
 *    persistentVolumeClaimRetentionPolicy wants (whenScaled Delete: the pod), then they are
 *    deleted, highest ordinal first; OrderedReady one at a time and only when every lower
 *    pod is healthy (the first unhealthy one excepted).
 * 6. Update: RollingUpdate deletes the highest pod at or above the partition that is not
 *    of the update revision, once every pod above it is available; OnDelete does nothing.
 * 7. Status: replicas, ready, available, current and updated counts, the revisions,
 *    collisionCount and observedGeneration, with the rolling update completed when every
 *    pod is updated and ready; written when a count or revision changed. Revisions past
 *    revisionHistoryLimit that no pod uses go.
 *
 * Creations and deletions go through expectations like the ReplicaSet controller's (kube's
 * StatefulSet controller has none: its pods' fixed names make a second creation fail),
 * kept in the store and released after a restart by `recovery`.
 *
 * Where this differs from kube, on purpose or for now:
 * - The revision's hash is sqlkcm's (over the canonical JSON of its data): kube hashes the
 *   bytes of its Go encoding of the whole StatefulSet. Revisions kube made are found by
 *   their data equal to the template's, so names differ only for new revisions.
 * - One sync sends creations or deletions, not both (Parallel: the creations first, the
 *   deletions once they are observed); kube's slow-start batches send both.
 * - Claims are created with the owner references the retention policy wants, where kube
 *   creates them bare and updates them after the pod's creation; the end is the same.
 * - A pod whose volumes drifted from its claims is not repaired (kube's updateStorage:
 *   the API refuses a change of a pod's volumes anyway); its lost identity labels are.
 * - spec.updateStrategy.rollingUpdate.maxUnavailable is used only with
 *   --feature-gates=MaxUnavailableStatefulSet=true (kube 1.36's gate is off by default):
 *   otherwise one pod is updated at a time.
 * - A StatefulSet being deleted is left alone (kube still writes its status).
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "controllerref.h"
#include "controllers/replicaset.h"
#include "controllers/statefulset.h"
#include "expectations.h"
#include "history.h"
#include "featuregate.h"
#include "intstr.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "selector.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

/* What one sync of a Parallel set sends at most (sqlkcm's own cap: kube's slow-start
 * batches have none); the rest follows in the next syncs. */
#define STATEFULSET_BURST 500

/* --- rules ----------------------------------------------------------------------------- */

long long
statefulset_ordinal(const char *pod_name, size_t *parent_len)
{
	size_t len = strlen(pod_name), i = len;
	long long ordinal = 0;

	while (i > 0 && isdigit((unsigned char)pod_name[i - 1]))
		i--;
	/* kube's regexp (.*)-([0-9]+)$ and strconv.ParseInt (int32 range kept). */
	if (i == len || i < 1 || pod_name[i - 1] != '-' || len - i > 10)
		return -1;
	for (size_t k = i; k < len; k++)
		ordinal = ordinal * 10 + (pod_name[k] - '0');
	if (ordinal > 2147483647LL)
		return -1;
	if (parent_len != NULL)
		*parent_len = i - 1;
	return ordinal;
}

/* kube's matchesRef: a reference of kind (apps/v1 StatefulSet or v1 Pod) naming obj. */
static int
ref_matches(const cJSON *ref, const char *api_version, const char *kind, const cJSON *obj)
{
	return strcmp(json_string(ref, "apiVersion"), api_version) == 0 &&
	    strcmp(json_string(ref, "kind"), kind) == 0 &&
	    strcmp(json_string(ref, "name"), json_string(json_path(obj, "metadata"), "name")) == 0;
}

static const char *
uid_of(const cJSON *obj)
{
	return json_string(json_path(obj, "metadata"), "uid");
}

static int
has_owner(const cJSON *claim, const cJSON *owner)
{
	const cJSON *ref;

	if (owner == NULL || uid_of(owner)[0] == '\0')
		return 0;
	cJSON_ArrayForEach(ref, json_path(claim, "metadata.ownerReferences")) {
		if (strcmp(json_string(ref, "uid"), uid_of(owner)) == 0)
			return 1;
	}
	return 0;
}

/* kube's hasStaleOwnerRef: a reference naming obj whose uid is another's. */
static int
has_stale_owner(const cJSON *claim, const cJSON *obj, const char *api_version,
    const char *kind)
{
	const cJSON *ref;

	if (obj == NULL)
		return 0;
	cJSON_ArrayForEach(ref, json_path(claim, "metadata.ownerReferences")) {
		if (ref_matches(ref, api_version, kind, obj))
			return strcmp(json_string(ref, "uid"), uid_of(obj)) != 0;
	}
	return 0;
}

int
statefulset_claim_unexpected_controller(const cJSON *claim, const cJSON *set,
    const cJSON *pod, const struct statefulset_retention *policy)
{
	const cJSON *ref;

	if (!policy->when_deleted_delete && !policy->when_scaled_delete)
		return 0;
	cJSON_ArrayForEach(ref, json_path(claim, "metadata.ownerReferences")) {
		const char *uid = json_string(ref, "uid");

		if (ref_matches(ref, "apps/v1", "StatefulSet", set)) {
			if (strcmp(uid, uid_of(set)) != 0)
				return 1;
			continue;
		}
		if (pod != NULL && ref_matches(ref, "v1", "Pod", pod)) {
			if (strcmp(uid, uid_of(pod)) != 0)
				return 1;
			continue;
		}
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")))
			return 1;
	}
	return 0;
}

int
statefulset_claim_owner_up_to_date(const cJSON *claim, const cJSON *set, const cJSON *pod,
    int scaled_down, const struct statefulset_retention *policy)
{
	const cJSON *ref;
	int by_set = has_owner(claim, set), by_pod = has_owner(claim, pod);

	if (has_stale_owner(claim, set, "apps/v1", "StatefulSet") ||
	    has_stale_owner(claim, pod, "v1", "Pod"))
		return 1;	/* the garbage collector's, not ours */
	if (statefulset_claim_unexpected_controller(claim, set, pod, policy))
		return !(by_set || by_pod);
	/* kube's hasNonControllerOwner: the set or pod as a plain owner is to be fixed. */
	cJSON_ArrayForEach(ref, json_path(claim, "metadata.ownerReferences")) {
		const char *uid = json_string(ref, "uid");

		if ((strcmp(uid, uid_of(set)) == 0 || (pod != NULL && uid_of(pod)[0] != '\0' &&
		    strcmp(uid, uid_of(pod)) == 0)) &&
		    !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")))
			return 0;
	}
	if (!policy->when_scaled_delete && !policy->when_deleted_delete)
		return !by_set && !by_pod;
	if (!policy->when_scaled_delete)
		return by_set && !by_pod;
	if (!policy->when_deleted_delete)
		return !by_set && scaled_down == by_pod;
	return scaled_down != by_set && scaled_down == by_pod;
}

/* metav1.NewControllerRef for obj of api_version and kind. */
static cJSON *
controller_ref(const cJSON *obj, const char *api_version, const char *kind)
{
	cJSON *ref = cJSON_CreateObject();

	cJSON_AddStringToObject(ref, "apiVersion", api_version);
	cJSON_AddStringToObject(ref, "kind", kind);
	cJSON_AddStringToObject(ref, "name", json_string(json_path(obj, "metadata"), "name"));
	cJSON_AddStringToObject(ref, "uid", uid_of(obj));
	cJSON_AddBoolToObject(ref, "controller", 1);
	cJSON_AddBoolToObject(ref, "blockOwnerDeletion", 1);
	return ref;
}

cJSON *
statefulset_claim_owners(const cJSON *claim, const cJSON *set, const cJSON *pod,
    int scaled_down, const struct statefulset_retention *policy)
{
	cJSON *refs = cJSON_CreateArray();
	const cJSON *ref;
	int unexpected = statefulset_claim_unexpected_controller(claim, set, pod, policy);

	cJSON_ArrayForEach(ref, json_path(claim, "metadata.ownerReferences")) {
		if (ref_matches(ref, "apps/v1", "StatefulSet", set) ||
		    (pod != NULL && ref_matches(ref, "v1", "Pod", pod)))
			continue;
		cJSON_AddItemToArray(refs, cJSON_Duplicate(ref, 1));
	}
	if (unexpected)
		return refs;
	if (policy->when_deleted_delete && (!policy->when_scaled_delete || !scaled_down))
		cJSON_AddItemToArray(refs, controller_ref(set, "apps/v1", "StatefulSet"));
	if (policy->when_scaled_delete && scaled_down && pod != NULL)
		cJSON_AddItemToArray(refs, controller_ref(pod, "v1", "Pod"));
	return refs;
}

/* --- statements ------------------------------------------------------------------------ */

enum {
	STMT_GET_SET,
	STMT_PODS,
	STMT_ORPHANS,
	STMT_REVISIONS,
	STMT_ORPHAN_REVISIONS,
	STMT_REVISION_BY_NAME,
	STMT_CLAIM,
	STMT_SET_BY_UID,
	STMT_SET_KEYS,
	STMT_SETS_OF_CLAIM,
	STMT_COUNT
};

static const char *const statefulset_sql[STMT_COUNT] = {
	[STMT_GET_SET] = "SELECT uid, body FROM cache_objects"
	    " WHERE resource = 'statefulsets' AND namespace = ?1 AND name = ?2",
	/* The pods the set controls (kind, name and uid of the controller reference). */
	[STMT_PODS] = "SELECT p.uid, p.name, coalesce(p.phase, ''), coalesce(p.ready, 0),"
	    " p.ready_since, p.deletion_timestamp IS NOT NULL, p.body"
	    " FROM cache_pods p"
	    " WHERE p.namespace = ?1 AND p.controller_uid = ?2"
	    "   AND EXISTS (SELECT 1 FROM object_owners c WHERE c.object_id = p.id"
	    "                AND c.controller = 1 AND c.kind = 'StatefulSet' AND c.name = ?3)"
	    " ORDER BY p.name",
	/* The namespace's pods without a controller, named as the set's (kube's isMemberOf
	 * filter, then ClaimPods): ?3 is the name with its dash. */
	[STMT_ORPHANS] = "SELECT p.uid, p.name, coalesce(p.phase, ''), coalesce(p.ready, 0),"
	    " p.ready_since, p.deletion_timestamp IS NOT NULL, p.body"
	    " FROM cache_pods p"
	    " WHERE p.namespace = ?1 AND p.controller_uid IS NULL"
	    "   AND substr(p.name, 1, length(?2)) = ?2"
	    " ORDER BY p.name",
	[STMT_REVISIONS] = "SELECT o.name, o.creation_timestamp, o.body"
	    " FROM object_owners w JOIN cache_objects o ON o.id = w.object_id"
	    " WHERE w.owner_uid = ?1 AND w.controller = 1"
	    "   AND o.resource = 'controllerrevisions' AND o.namespace = ?2"
	    " ORDER BY o.name",
	[STMT_ORPHAN_REVISIONS] = "SELECT o.name, o.creation_timestamp, o.body"
	    " FROM cache_objects o"
	    " WHERE o.resource = 'controllerrevisions' AND o.namespace = ?1"
	    "   AND NOT EXISTS (SELECT 1 FROM object_owners w"
	    "                    WHERE w.object_id = o.id AND w.controller = 1)"
	    " ORDER BY o.name",
	[STMT_REVISION_BY_NAME] = "SELECT body FROM cache_objects"
	    " WHERE resource = 'controllerrevisions' AND namespace = ?1 AND name = ?2",
	[STMT_CLAIM] = "SELECT body FROM cache_objects"
	    " WHERE resource = 'persistentvolumeclaims' AND namespace = ?1 AND name = ?2",
	[STMT_SET_BY_UID] = "SELECT name FROM cache_objects"
	    " WHERE resource = 'statefulsets' AND namespace = ?1 AND name = ?2 AND uid = ?3",
	[STMT_SET_KEYS] = "SELECT namespace, name FROM cache_objects"
	    " WHERE resource = 'statefulsets' ORDER BY namespace, name",
	/* The sets of ?1 with claim templates whose pods' claims could be named ?2. */
	[STMT_SETS_OF_CLAIM] = "SELECT name FROM cache_objects"
	    " WHERE resource = 'statefulsets' AND namespace = ?1"
	    "   AND json_array_length(body, '$.spec.volumeClaimTemplates') > 0"
	    "   AND instr(?2, '-' || name || '-') > 0",
};

struct statefulset_state {
	sqlite3 *db;
	sqlite3_stmt *stmt[STMT_COUNT];
	int max_unavailable;	/* the MaxUnavailableStatefulSet gate is on */
};

static int
statefulset_init(struct controller *c, char **error)
{
	struct statefulset_state *st = xcalloc(1, sizeof *st);
	const char *gates = controller_flag_text(c, "feature-gates");
	char *unknown = NULL;

	c->state = st;
	if (featuregate_check(gates, &unknown, error) != 0)
		return -1;
	if (unknown != NULL)
		log_info("statefulset: --feature-gates: %s: gates no rule of sqlkcm depends on",
		    unknown);
	free(unknown);
	st->max_unavailable = featuregate_enabled(gates, "MaxUnavailableStatefulSet");
	st->db = store_db(c->store);
	return store_prepare_statements(st->db, statefulset_sql, STMT_COUNT, st->stmt,
	    "statefulset controller", error);
}

static void
statefulset_fini(struct controller *c)
{
	struct statefulset_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const struct resource *
statefulsets_resource(void)
{
	return resource_find("statefulsets");
}

static int
step_error(struct statefulset_state *st, sqlite3_stmt *stmt, int rc, const char *what,
    char **error)
{
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "statefulset: %s: %s", what, sqlite3_errmsg(st->db));
	return 0;
}

/* --- what the sync reads --------------------------------------------------------------- */

struct sts_pod {
	char *uid, *name, *phase, *revision;
	long long ordinal;
	int ready;		/* Running and Ready */
	int available;		/* and for longer than minReadySeconds */
	int deleting;
	int unclaimed;		/* released or left alone: not the set's */
	cJSON *body;
};

struct sts_view {
	struct sts_pod *pods;
	int npods;
	struct history_cached *revisions;
	int nrevisions;
};

static void
view_clear(struct sts_view *v)
{
	for (int i = 0; i < v->npods; i++) {
		free(v->pods[i].uid);
		free(v->pods[i].name);
		free(v->pods[i].phase);
		free(v->pods[i].revision);
		cJSON_Delete(v->pods[i].body);
	}
	free(v->pods);
	history_cached_free(v->revisions, v->nrevisions);
	memset(v, 0, sizeof *v);
}

/* Reads the pods stmt gives; orphans are adopted when the selector matches and their
 * name's parent is the set (kube's isMemberOf). */
static int
read_pods(struct statefulset_state *st, sqlite3_stmt *stmt, struct sync_result *out,
    const cJSON *set, const struct selector *sel, const char *namespace, const char *name,
    int orphan, long long min_ready, double now, struct sts_view *v, char **error)
{
	const struct resource *pods = resource_find("pods");
	int rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		struct sts_pod *p;
		double ready_since;
		size_t parent_len = 0;
		long long ordinal;
		const char *pname = (const char *)sqlite3_column_text(stmt, 1);
		int member, matches;
		enum controllerref_claim claim;

		if (pname == NULL)
			continue;
		ordinal = statefulset_ordinal(pname, &parent_len);
		member = ordinal >= 0 && parent_len == strlen(name) &&
		    strncmp(pname, name, parent_len) == 0;
		if (orphan && !member)
			continue;
		v->pods = xrealloc(v->pods, (size_t)(v->npods + 1) * sizeof *v->pods);
		p = &v->pods[v->npods++];
		memset(p, 0, sizeof *p);
		p->uid = controller_column_strdup(stmt, 0);
		p->name = controller_column_strdup(stmt, 1);
		p->phase = controller_column_strdup(stmt, 2);
		p->ready = sqlite3_column_int(stmt, 3) && strcmp(p->phase, "Running") == 0;
		ready_since = controller_column_time(stmt, 4);
		p->deleting = sqlite3_column_int(stmt, 5);
		p->body = controller_column_json(stmt, 6);
		p->ordinal = member ? ordinal : -1;
		p->revision = xstrdup(json_string(json_path(p->body, "metadata.labels"),
		    HISTORY_HASH_LABEL));
		/* kube's IsPodAvailable (the phase aside, as kube's isUnavailable has it). */
		p->available = sqlite3_column_int(stmt, 3) && (min_ready <= 0 ||
		    (ready_since != 0 && ready_since + (double)min_ready < now));
		/* kube's ClaimPods filter (isMemberOf) is part of the match: a pod of ours
		 * that is not named as the set's is released as one the selector no longer
		 * matches. */
		matches = member &&
		    selector_matches(sel, json_path(p->body, "metadata.labels"));
		claim = controllerref_decide(orphan ? CONTROLLERREF_ORPHAN : CONTROLLERREF_OURS,
		    matches, p->deleting, 0, 0);
		if (claim == CONTROLLERREF_ADOPT) {
			controllerref_claim_action(action_append(&out->claims, &out->nclaims),
			    claim, pods, namespace, p->name, p->uid,
			    controllerref_adopt_patch(statefulsets_resource(), set, p->uid),
			    xstrdup("an orphan the selector matches"));
			out->recheck_owner = 1;
		} else if (claim == CONTROLLERREF_RELEASE) {
			controllerref_claim_action(action_append(&out->claims, &out->nclaims),
			    claim, pods, namespace, p->name, p->uid,
			    controllerref_release_patch(uid_of(set), p->uid),
			    xstrdup(member ? "the selector no longer matches its labels" :
			    "its name is not one of the set's"));
		}
		p->unclaimed = claim != CONTROLLERREF_KEEP && claim != CONTROLLERREF_ADOPT;
	}
	return step_error(st, stmt, rc, "listing pods", error);
}

static int
load_pods(struct statefulset_state *st, struct sync_result *out, const cJSON *set,
    const struct selector *sel, const char *namespace, const char *name, const char *uid,
    long long min_ready, double now, struct sts_view *v, char **error)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_PODS]);
	char *prefix;
	int rc;

	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, uid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 3, name, -1, SQLITE_TRANSIENT);
	if (read_pods(st, stmt, out, set, sel, namespace, name, 0, min_ready, now, v,
	    error) != 0)
		return -1;
	stmt = controller_stmt(st->stmt[STMT_ORPHANS]);
	prefix = xasprintf("%s-", name);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, prefix, -1, SQLITE_TRANSIENT);
	rc = read_pods(st, stmt, out, set, sel, namespace, name, 1, min_ready, now, v, error);
	free(prefix);
	return rc;
}

static int
load_revisions(struct statefulset_state *st, struct sync_result *out, const cJSON *set,
    const struct selector *sel, const char *namespace, const char *uid, struct sts_view *v,
    char **error)
{
	const struct resource *r = statefulsets_resource();
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_REVISIONS]);

	sqlite3_bind_text(stmt, 1, uid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, namespace, -1, SQLITE_TRANSIENT);
	if (step_error(st, stmt, history_read_cached(stmt, r, set, NULL, namespace, out,
	    &v->revisions, &v->nrevisions), "listing revisions", error) != 0)
		return -1;
	/* the orphans the selector matches, adopted */
	stmt = controller_stmt(st->stmt[STMT_ORPHAN_REVISIONS]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	return step_error(st, stmt, history_read_cached(stmt, r, set, sel, namespace, out,
	    &v->revisions, &v->nrevisions), "listing orphan revisions", error);
}

static cJSON *
cached_by_name(struct statefulset_state *st, int which, const char *namespace,
    const char *name)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[which]);
	cJSON *body = NULL;

	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		body = controller_column_json(stmt, 0);
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return body;
}

/* --- history --------------------------------------------------------------------------- */

static struct action *
write_action(struct sync_result *out, const char *resource, enum action_type type,
    const char *verb, const char *namespace, const char *name, cJSON *body, char *reason)
{
	struct action *a = action_append(&out->writes, &out->nwrites);

	a->type = type;
	a->verb = verb;
	a->resource = resource_find(resource);
	a->namespace = xstrdup(namespace);
	a->name = name != NULL ? xstrdup(name) : NULL;
	a->body = body;
	a->reason = reason;
	return a;
}

/* What the history decided. */
struct sts_history {
	char *update_name;		/* the update revision's name (its pods' label) */
	char *current_name;		/* the current revision's */
	cJSON *update_template;		/* the templates their pods are made of */
	cJSON *current_template;
	long long collision_count;
};

static void
history_clear(struct sts_history *h)
{
	free(h->update_name);
	free(h->current_name);
	cJSON_Delete(h->update_template);
	cJSON_Delete(h->current_template);
	memset(h, 0, sizeof *h);
}

/* kube's ApplyRevision on the template (history.c); the set's own template when the
 * revision has none. */
static cJSON *
revision_template(const cJSON *revision, const cJSON *set)
{
	cJSON *t = history_revision_template(revision);
	const cJSON *own = json_path(set, "spec.template");

	if (t != NULL)
		return t;
	return cJSON_IsObject(own) ? cJSON_Duplicate(own, 1) : cJSON_CreateObject();
}

/*
 * kube's getStatefulSetRevisions: the update revision (found, renumbered or created) and
 * the current one. Returns 1 when a collision ends the sync.
 */
static int
history_sync(struct statefulset_state *st, struct sync_result *out, const cJSON *set,
    const char *namespace, const char *name, struct sts_view *v, struct sts_history *h)
{
	cJSON *data = history_template_patch(set);
	struct history_revision *sorted = xcalloc((size_t)v->nrevisions + 1, sizeof *sorted);
	const cJSON *cc = json_path(set, "status.collisionCount");
	const char *status_current = json_string(json_path(set, "status"), "currentRevision");
	long long next;
	int equal = -1, latest = -1, update = -1;

	h->collision_count = cJSON_IsNumber(cc) ? (long long)cc->valuedouble : 0;
	for (int i = 0; i < v->nrevisions; i++) {
		sorted[i].name = v->revisions[i].name;
		sorted[i].revision = json_int(v->revisions[i].body, "revision", 0);
		sorted[i].created = v->revisions[i].created;
		sorted[i].index = i;
	}
	history_sort(sorted, v->nrevisions);
	next = history_next_revision(sorted, v->nrevisions);
	/* kube's nextRevision is the last's number plus one. */
	if (v->nrevisions > 0) {
		latest = sorted[v->nrevisions - 1].index;
		next = sorted[v->nrevisions - 1].revision < LLONG_MAX ?
		    sorted[v->nrevisions - 1].revision + 1 : LLONG_MAX;
	}
	for (int i = 0; i < v->nrevisions; i++) {
		const cJSON *rd = cJSON_GetObjectItemCaseSensitive(
		    v->revisions[sorted[i].index].body, "data");

		if (history_data_equal(rd, data))
			equal = sorted[i].index;	/* the newest equal one */
	}
	if (equal >= 0 && equal == latest) {
		update = latest;
	} else if (equal >= 0) {
		/* An undo: the old revision becomes the newest. */
		cJSON *copy = cJSON_Duplicate(v->revisions[equal].body, 1);

		json_set(copy, "revision", cJSON_CreateNumber((double)next));
		write_action(out, "controllerrevisions", ACTION_UPDATE, "update", namespace,
		    v->revisions[equal].name, copy,
		    xasprintf("the template is this revision's again: numbered %lld", next));
		json_set(v->revisions[equal].body, "revision", cJSON_CreateNumber((double)next));
		update = equal;
	}
	if (update >= 0) {
		h->update_name = xstrdup(v->revisions[update].name);
		h->update_template = revision_template(v->revisions[update].body, set);
	} else {
		char *raw = history_canonical_json(data);
		char *hash = history_hash_revision(raw, strlen(raw), h->collision_count);
		char *rname = history_revision_name(name, hash);
		cJSON *taken = cached_by_name(st, STMT_REVISION_BY_NAME, namespace, rname);

		if (taken != NULL && !history_data_equal(cJSON_GetObjectItemCaseSensitive(taken,
		    "data"), data)) {
			/* kube's CreateControllerRevision moves the count on and tries again;
			 * here the status carries the new count and the next sync tries. */
			cJSON *object = cJSON_Duplicate(set, 1);
			struct action *a = xcalloc(1, sizeof *a);

			json_set(json_child_object(object, "status"), "collisionCount",
			    cJSON_CreateNumber((double)(h->collision_count + 1)));
			a->type = ACTION_UPDATE_STATUS;
			a->verb = "update-status";
			a->resource = statefulsets_resource();
			a->namespace = xstrdup(namespace);
			a->name = xstrdup(name);
			a->uid = xstrdup(out->owner_uid);
			a->body = object;
			a->reason = xasprintf("collisionCount=%lld: a revision of another template "
			    "has the name %s", h->collision_count + 1, rname);
			out->status = a;
			out->failed = 1;
			cJSON_Delete(taken);
			free(rname);
			free(hash);
			free(raw);
			free(sorted);
			cJSON_Delete(data);
			return 1;
		}
		if (taken == NULL)
			write_action(out, "controllerrevisions", ACTION_CREATE, "create", namespace,
			    rname, history_revision_new(statefulsets_resource(), set, rname, hash,
			    data, next),
			    xasprintf("the template's revision %lld", next));
		cJSON_Delete(taken);
		h->update_name = rname;
		h->update_template = revision_template(NULL, set);
		free(hash);
		free(raw);
	}
	for (int i = 0; i < v->nrevisions; i++) {
		if (status_current[0] != '\0' && strcmp(v->revisions[i].name, status_current) == 0) {
			h->current_name = xstrdup(v->revisions[i].name);
			h->current_template = revision_template(v->revisions[i].body, set);
			break;
		}
	}
	if (h->current_name == NULL) {
		h->current_name = xstrdup(h->update_name);
		h->current_template = cJSON_Duplicate(h->update_template, 1);
	}
	free(sorted);
	cJSON_Delete(data);
	return 0;
}

/* kube's truncateHistory: revisions neither current, update nor any pod's, oldest first,
 * past revisionHistoryLimit. */
static void
history_truncate(struct sync_result *out, const cJSON *set, const char *namespace,
    const struct sts_view *v, const struct sts_history *h)
{
	long long limit = json_int(json_path(set, "spec"), "revisionHistoryLimit", 10);
	struct history_revision *old = xcalloc((size_t)v->nrevisions + 1, sizeof *old);
	long long kill;
	int n = 0;

	for (int i = 0; i < v->nrevisions; i++) {
		const char *rname = v->revisions[i].name;
		int live = strcmp(rname, h->update_name) == 0 ||
		    strcmp(rname, h->current_name) == 0;

		for (int j = 0; j < v->npods && !live; j++)
			live = !v->pods[j].unclaimed && strcmp(v->pods[j].revision, rname) == 0;
		if (live)
			continue;
		old[n].name = rname;
		old[n].revision = json_int(v->revisions[i].body, "revision", 0);
		old[n].created = v->revisions[i].created;
		old[n].index = i;
		n++;
	}
	kill = limit < 0 ? 0 : n - limit;
	history_sort(old, n);
	for (int i = 0; i < n && i < kill; i++) {
		struct action *a = write_action(out, "controllerrevisions", ACTION_DELETE, "delete",
		    namespace, old[i].name, NULL, xasprintf("revision %lld, past "
		    "revisionHistoryLimit %lld", old[i].revision, limit));

		a->uid = xstrdup(json_string(json_path(v->revisions[old[i].index].body,
		    "metadata"), "uid"));
	}
	free(old);
}

/* --- pods and claims ------------------------------------------------------------------- */

static struct statefulset_retention
retention_of(const cJSON *set)
{
	const cJSON *p = json_path(set, "spec.persistentVolumeClaimRetentionPolicy");
	struct statefulset_retention r;

	r.when_deleted_delete = strcmp(json_string(p, "whenDeleted"), "Delete") == 0;
	r.when_scaled_delete = strcmp(json_string(p, "whenScaled"), "Delete") == 0;
	return r;
}

static char *
claim_name(const cJSON *template, const char *set_name, long long ordinal)
{
	return xasprintf("%s-%s-%lld", json_string(json_path(template, "metadata"), "name"),
	    set_name, ordinal);
}

/* kube's getPersistentVolumeClaims for one template and ordinal. */
static cJSON *
claim_new(const cJSON *set, const cJSON *template, const char *namespace, long long ordinal,
    const struct statefulset_retention *policy, int in_range)
{
	cJSON *claim = cJSON_Duplicate(template, 1), *meta, *labels;
	const cJSON *match = json_path(set, "spec.selector.matchLabels"), *l;
	char *cname = claim_name(template, json_string(json_path(set, "metadata"), "name"),
	    ordinal);

	if (!cJSON_IsObject(claim)) {
		cJSON_Delete(claim);
		claim = cJSON_CreateObject();
	}
	cJSON_DeleteItemFromObjectCaseSensitive(claim, "status");
	json_set(claim, "apiVersion", cJSON_CreateString("v1"));
	json_set(claim, "kind", cJSON_CreateString("PersistentVolumeClaim"));
	meta = json_child_object(claim, "metadata");
	json_set(meta, "name", cJSON_CreateString(cname));
	json_set(meta, "namespace", cJSON_CreateString(namespace));
	labels = json_child_object(meta, "labels");
	cJSON_ArrayForEach(l, match) {
		if (cJSON_IsString(l))
			json_set(labels, l->string, cJSON_CreateString(l->valuestring));
	}
	/* The owners the policy wants of a claim created for a live pod (see the header). */
	if (policy->when_deleted_delete && in_range) {
		cJSON *refs = cJSON_CreateArray();

		cJSON_AddItemToArray(refs, controller_ref(set, "apps/v1", "StatefulSet"));
		json_set(meta, "ownerReferences", refs);
	}
	free(cname);
	return claim;
}

/* kube's newStatefulSetPod: template's pod named for ordinal, with its identity, its
 * claims' volumes and the revision's label. */
static cJSON *
pod_new(const cJSON *set, const cJSON *template, const char *revision, long long ordinal)
{
	cJSON *owner = cJSON_Duplicate(set, 1), *pod, *meta, *labels, *spec, *volumes;
	const char *name = json_string(json_path(set, "metadata"), "name");
	const cJSON *templates = json_path(set, "spec.volumeClaimTemplates"), *t, *vol;
	char *pname = xasprintf("%s-%lld", name, ordinal), index[24];

	json_set(json_child_object(owner, "spec"), "template", cJSON_Duplicate(template, 1));
	pod = replicaset_pod_from_template_of(statefulsets_resource(), owner);
	cJSON_Delete(owner);
	meta = json_child_object(pod, "metadata");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, "generateName");
	json_set(meta, "name", cJSON_CreateString(pname));
	labels = json_child_object(meta, "labels");
	snprintf(index, sizeof index, "%lld", ordinal);
	json_set(labels, STATEFULSET_POD_NAME_LABEL, cJSON_CreateString(pname));
	json_set(labels, STATEFULSET_POD_INDEX_LABEL, cJSON_CreateString(index));
	json_set(labels, HISTORY_HASH_LABEL, cJSON_CreateString(revision));
	spec = json_child_object(pod, "spec");
	json_set(spec, "hostname", cJSON_CreateString(pname));
	if (json_string(json_path(set, "spec"), "serviceName")[0] != '\0')
		json_set(spec, "subdomain", cJSON_CreateString(json_string(json_path(set, "spec"),
		    "serviceName")));
	/* kube's updateStorage: the claims' volumes first, then the template's others. */
	volumes = cJSON_CreateArray();
	cJSON_ArrayForEach(t, templates) {
		const char *tname = json_string(json_path(t, "metadata"), "name");
		cJSON *v = cJSON_CreateObject(), *src;
		char *cname = claim_name(t, name, ordinal);

		cJSON_AddStringToObject(v, "name", tname);
		src = cJSON_AddObjectToObject(v, "persistentVolumeClaim");
		cJSON_AddStringToObject(src, "claimName", cname);
		cJSON_AddItemToArray(volumes, v);
		free(cname);
	}
	cJSON_ArrayForEach(vol, cJSON_GetObjectItemCaseSensitive(spec, "volumes")) {
		int claimed = 0;

		cJSON_ArrayForEach(t, templates)
			claimed |= strcmp(json_string(json_path(t, "metadata"), "name"),
			    json_string(vol, "name")) == 0;
		if (!claimed)
			cJSON_AddItemToArray(volumes, cJSON_Duplicate(vol, 1));
	}
	if (cJSON_GetArraySize(volumes) > 0)
		json_set(spec, "volumes", volumes);
	else
		cJSON_Delete(volumes);
	free(pname);
	return pod;
}

/* What one sync plans for pods and claims. */
struct sts_plan {
	struct sync_result creations;	/* pods to create, in order */
	struct sync_result deletions;	/* pods to delete, in order */
	int claim_waits;		/* a claim is being deleted: the pod waits */
	int rolling_deletion;		/* deletions hold this many of the rolling
					 * update's, counted out of currentReplicas */
};

static void
pod_action(struct sync_result *r, enum action_type type, const char *namespace,
    const char *set_name, const char *pod_name, const char *pod_uid, cJSON *body,
    char *reason)
{
	struct action *a = action_append(&r->manage, &r->nmanage);
	const char *verb = type == ACTION_CREATE ? "create" : "delete";
	/* kube's words: the verb title-cased ("Create Pod web-0 in StatefulSet web ..."). */
	const char *title = type == ACTION_CREATE ? "Create" : "Delete";

	a->type = type;
	a->verb = verb;
	a->resource = resource_find("pods");
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(pod_name);
	a->uid = pod_uid != NULL ? xstrdup(pod_uid) : NULL;
	a->body = body;
	a->reason = reason;
	/* kube's recordPodEvent. */
	a->done_reason = type == ACTION_CREATE ? "SuccessfulCreate" : "SuccessfulDelete";
	a->failed_reason = type == ACTION_CREATE ? "FailedCreate" : "FailedDelete";
	a->done_message = xasprintf("%s Pod %s in StatefulSet %s successful", title, pod_name,
	    set_name);
	a->failed_message = xasprintf("%s Pod %s in StatefulSet %s failed error: ", title,
	    pod_name, set_name);
}

/*
 * kube's createPersistentVolumeClaims for the pod of ordinal: a write per missing claim
 * (its event as kube's recordClaimEvent). Returns NULL, or when claims are being deleted
 * (the pod waits for them to go) kube's error for it, "pvc NAME is being deleted" (an
 * aggregate in brackets for several), malloc'd.
 */
static char *
plan_claims(struct statefulset_state *st, struct sync_result *out, const cJSON *set,
    const char *namespace, const char *set_name, long long ordinal, int in_range,
    const struct statefulset_retention *policy)
{
	const cJSON *t;
	char *pod_name = xasprintf("%s-%lld", set_name, ordinal);
	struct buf deleting;
	int ndeleting = 0;
	char *err;

	buf_init(&deleting);

	cJSON_ArrayForEach(t, json_path(set, "spec.volumeClaimTemplates")) {
		char *cname = claim_name(t, set_name, ordinal);
		cJSON *cached = cached_by_name(st, STMT_CLAIM, namespace, cname);

		if (cached == NULL) {
			struct action *a = write_action(out, "persistentvolumeclaims",
			    ACTION_CREATE, "create", namespace, cname,
			    claim_new(set, t, namespace, ordinal, policy, in_range),
			    xasprintf("the claim of pod %s", pod_name));

			a->exists_ok = 1;
			a->done_reason = "SuccessfulCreate";
			a->failed_reason = "FailedCreate";
			a->done_message = xasprintf("Create Claim %s Pod %s in StatefulSet %s "
			    "success", cname, pod_name, set_name);
			a->failed_message = xasprintf("Create Claim %s for Pod %s in StatefulSet %s "
			    "failed error: ", cname, pod_name, set_name);
		} else if (json_is_set(cached, "metadata.deletionTimestamp")) {
			buf_printf(&deleting, "%spvc %s is being deleted", ndeleting++ > 0 ? ", " :
			    "", cname);
		}
		cJSON_Delete(cached);
		free(cname);
	}
	free(pod_name);
	if (ndeleting == 0) {
		buf_free(&deleting);
		return NULL;
	}
	err = buf_detach(&deleting);
	if (ndeleting > 1) {
		char *list = err;

		err = xasprintf("[%s]", list);
		free(list);
	}
	return err;
}

/* kube's UpdatePodClaimForRetentionPolicy for the pod p: a claim whose owners the policy
 * wants otherwise is updated (a ConflictingController warning when another controls it).
 * Returns the number of claims updated. */
static int
plan_claim_owners(struct statefulset_state *st, struct sync_result *out, const cJSON *set,
    const char *namespace, const char *set_name, const struct sts_pod *p, int scaled_down,
    const struct statefulset_retention *policy)
{
	const cJSON *t;
	int updated = 0, all_up_to_date = 1;

	/* kube's ClaimsMatchRetentionPolicy first: only a pod with a claim whose owners are
	 * not up to date goes through UpdatePodClaimForRetentionPolicy, which alone records
	 * ConflictingController. */
	cJSON_ArrayForEach(t, json_path(set, "spec.volumeClaimTemplates")) {
		char *cname = claim_name(t, set_name, p->ordinal);
		cJSON *cached = cached_by_name(st, STMT_CLAIM, namespace, cname);

		if (cached != NULL && !statefulset_claim_owner_up_to_date(cached, set, p->body,
		    scaled_down, policy))
			all_up_to_date = 0;
		cJSON_Delete(cached);
		free(cname);
	}
	if (all_up_to_date)
		return 0;
	cJSON_ArrayForEach(t, json_path(set, "spec.volumeClaimTemplates")) {
		char *cname = claim_name(t, set_name, p->ordinal);
		cJSON *cached = cached_by_name(st, STMT_CLAIM, namespace, cname);

		if (cached != NULL) {
			if (statefulset_claim_unexpected_controller(cached, set, p->body, policy))
				sync_result_add_event(out, "Warning", "ConflictingController",
				    xasprintf("PersistentVolumeClaim %s has a conflicting "
				    "OwnerReference that acts as a manging controller, the retention "
				    "policy is ignored for this claim", cname));
			if (!statefulset_claim_owner_up_to_date(cached, set, p->body, scaled_down,
			    policy)) {
				cJSON *update = cJSON_Duplicate(cached, 1);

				json_set(json_child_object(update, "metadata"), "ownerReferences",
				    statefulset_claim_owners(cached, set, p->body, scaled_down,
				    policy));
				updated++;
				write_action(out, "persistentvolumeclaims", ACTION_UPDATE, "update",
				    namespace, cname, update, xasprintf("the owners the retention "
				    "policy wants (pod %s %s)", p->name, scaled_down ? "condemned" :
				    "in range"));
			}
		}
		cJSON_Delete(cached);
		free(cname);
	}
	return updated;
}

/* kube's UpdateStatefulPod for a pod of the set in range: a pod whose identity label
 * (statefulset.kubernetes.io/pod-name) is not its name gets it again, with its index label;
 * when its claims' owners were just updated (claims_updated), kube updates the pod all
 * the same, which records its event. Storage is not repaired: a pod's volumes cannot be
 * changed. */
static void
plan_pod_update(struct sync_result *out, const char *namespace, const char *set_name,
    const struct sts_pod *p, int claims_updated)
{
	const cJSON *labels = json_path(p->body, "metadata.labels");
	const cJSON *label = cJSON_GetObjectItemCaseSensitive(labels, STATEFULSET_POD_NAME_LABEL);
	int identity = cJSON_IsString(label) && strcmp(label->valuestring, p->name) == 0;
	cJSON *update, *ulabels;
	struct action *a;
	char index[24];

	if (identity && !claims_updated)
		return;
	update = cJSON_Duplicate(p->body, 1);
	ulabels = json_child_object(json_child_object(update, "metadata"), "labels");
	snprintf(index, sizeof index, "%lld", p->ordinal);
	json_set(ulabels, STATEFULSET_POD_NAME_LABEL, cJSON_CreateString(p->name));
	json_set(ulabels, STATEFULSET_POD_INDEX_LABEL, cJSON_CreateString(index));
	a = write_action(out, "pods", ACTION_UPDATE, "update", namespace, p->name, update,
	    xstrdup(identity ? "its claims' owners changed" : "its identity labels"));
	a->uid = xstrdup(p->uid);
	a->done_reason = "SuccessfulUpdate";
	a->failed_reason = "FailedUpdate";
	a->done_message = xasprintf("Update Pod %s in StatefulSet %s successful", p->name,
	    set_name);
	a->failed_message = xasprintf("Update Pod %s in StatefulSet %s failed error: ",
	    p->name, set_name);
}

/* kube's PodClaimIsStale: with whenScaled Delete, a claim of the new pod still owned by
 * an older pod of its name waits for the garbage collector. */
static int
claim_is_stale(struct statefulset_state *st, const cJSON *set, const char *namespace,
    const char *set_name, long long ordinal, const struct statefulset_retention *policy)
{
	const cJSON *t;
	int stale = 0;

	if (!policy->when_scaled_delete)
		return 0;
	cJSON_ArrayForEach(t, json_path(set, "spec.volumeClaimTemplates")) {
		char *cname = claim_name(t, set_name, ordinal);
		cJSON *cached = cached_by_name(st, STMT_CLAIM, namespace, cname);
		char *pod_name = xasprintf("%s-%lld", set_name, ordinal);
		const cJSON *ref;

		cJSON_ArrayForEach(ref, json_path(cached, "metadata.ownerReferences")) {
			/* Any pod of the name is stale: the new one does not exist yet. */
			if (strcmp(json_string(ref, "kind"), "Pod") == 0 &&
			    strcmp(json_string(ref, "apiVersion"), "v1") == 0 &&
			    strcmp(json_string(ref, "name"), pod_name) == 0)
				stale = 1;
		}
		cJSON_Delete(cached);
		free(cname);
		free(pod_name);
	}
	return stale;
}

/* --- the update ------------------------------------------------------------------------ */

struct sts_counts {
	long long replicas, ready, available, current, updated;
};

static void
count_pod(const struct sts_pod *p, const struct sts_history *h, struct sts_counts *c)
{
	c->replicas += p->phase[0] != '\0';
	if (p->ready) {
		c->ready++;
		c->available += p->available;
	}
	if (p->phase[0] != '\0' && !p->deleting) {
		c->current += strcmp(p->revision, h->current_name) == 0;
		c->updated += strcmp(p->revision, h->update_name) == 0;
	}
}

static int
pod_unavailable(const struct sts_pod *p)
{
	return p == NULL || !p->available || p->deleting;
}

static int
ordinal_cmp_desc(const void *a, const void *b)
{
	const struct sts_pod *x = *(const struct sts_pod *const *)a;
	const struct sts_pod *y = *(const struct sts_pod *const *)b;

	return x->ordinal < y->ordinal ? 1 : x->ordinal > y->ordinal ? -1 : 0;
}

/*
 * kube's updateStatefulSet: plans the creations and deletions, counts the status into c
 * and sets *rolled when the rolling update deleted a current pod. Returns -1 on bad input
 * (*error set).
 */
static int
plan_update(struct statefulset_state *st, struct sync_result *out, struct sts_plan *plan,
    const cJSON *set, const char *namespace, const char *name, struct sts_view *v,
    const struct sts_history *h, long long min_ready, struct sts_counts *c, char **error)
{
	const cJSON *spec = json_path(set, "spec");
	long long replicas = json_int(spec, "replicas", 1);
	long long start = json_int(json_path(set, "spec.ordinals"), "start", 0);
	const cJSON *strategy = json_path(set, "spec.updateStrategy");
	const char *type = json_string(strategy, "type");
	const cJSON *rolling = cJSON_GetObjectItemCaseSensitive(strategy, "rollingUpdate");
	const cJSON *partition_item = cJSON_GetObjectItemCaseSensitive(rolling, "partition");
	long long partition = cJSON_IsNumber(partition_item) ?
	    (long long)partition_item->valuedouble : 0;
	int monotonic = strcmp(json_string(spec, "podManagementPolicy"), "Parallel") != 0;
	struct statefulset_retention policy = retention_of(set);
	struct sts_pod **slots, **condemned, *first_unavailable = NULL;
	long long current_replicas = json_int(json_path(set, "status"), "currentReplicas", 0);
	int ncondemned = 0, stop = 0;

	(void)min_ready;
	memset(c, 0, sizeof *c);
	if (replicas < 0 || replicas > 1000000 || start < 0 || start > 2147483647LL)
		return error_set(error, "spec.replicas %lld or spec.ordinals.start %lld out of "
		    "range", replicas, start);
	slots = xcalloc((size_t)replicas + 1, sizeof *slots);
	condemned = xcalloc((size_t)v->npods + 1, sizeof *condemned);
	for (int i = 0; i < v->npods; i++) {
		struct sts_pod *p = &v->pods[i];

		if (p->unclaimed || p->ordinal < 0)
			continue;
		count_pod(p, h, c);
		if (p->ordinal >= start && p->ordinal < start + replicas)
			slots[p->ordinal - start] = p;
		else
			condemned[ncondemned++] = p;
	}
	qsort(condemned, (size_t)ncondemned, sizeof *condemned, ordinal_cmp_desc);
	for (long long i = 0; i < replicas && first_unavailable == NULL; i++) {
		if (slots[i] != NULL && pod_unavailable(slots[i]))
			first_unavailable = slots[i];
	}
	for (int i = ncondemned - 1; i >= 0 && first_unavailable == NULL; i--) {
		if (pod_unavailable(condemned[i]))
			first_unavailable = condemned[i];
	}

	/* The replicas, lowest ordinal first. */
	for (long long i = 0; i < replicas && !stop; i++) {
		struct sts_pod *p = slots[i];
		long long ordinal = start + i;

		if (p != NULL && (strcmp(p->phase, "Failed") == 0 ||
		    strcmp(p->phase, "Succeeded") == 0)) {
			if (!p->deleting)
				pod_action(&plan->deletions, ACTION_DELETE, namespace, name, p->name,
				    p->uid, NULL, xasprintf("ordinal %lld: %s", ordinal,
				    p->phase[0] == 'F' ? "failed" : "succeeded"));
			stop = monotonic;
			continue;
		}
		if (p == NULL || p->phase[0] == '\0') {
			if (p == NULL) {
				/* kube's newVersionedStatefulSetPod (its precedence kept). */
				int old = (rolling != NULL && cJSON_IsObject(rolling)) ?
				    ordinal < start + partition :
				    (strcmp(type, "RollingUpdate") == 0 || type[0] == '\0') &&
				    ordinal < start + current_replicas;
				char *waits, *pname;

				if (claim_is_stale(st, set, namespace, name, ordinal, &policy)) {
					stop = 1;
					break;
				}
				waits = plan_claims(st, out, set, namespace, name, ordinal, 1,
				    &policy);
				pname = xasprintf("%s-%lld", name, ordinal);
				if (waits != NULL) {
					/* kube's recordPodEvent of the failed creation */
					sync_result_add_event(out, "Warning", "FailedCreate",
					    xasprintf("Create Pod %s in StatefulSet %s failed "
					    "error: %s", pname, name, waits));
					free(waits);
					free(pname);
					plan->claim_waits = 1;
					stop = 1;
					break;
				}
				pod_action(&plan->creations, ACTION_CREATE, namespace, name, pname,
				    NULL, pod_new(set, old ? h->current_template : h->update_template,
				    old ? h->current_name : h->update_name, ordinal),
				    xasprintf("ordinal %lld is missing (%s revision)", ordinal,
				    old ? "current" : "update"));
				free(pname);
			}
			if (monotonic) {
				stop = 1;
				break;
			}
			continue;
		}
		if (strcmp(p->phase, "Pending") == 0)
			free(plan_claims(st, out, set, namespace, name, ordinal, 1, &policy));
		if (monotonic && (p->deleting || !p->ready || !p->available)) {
			stop = 1;
			break;
		}
		plan_pod_update(out, namespace, name, p,
		    plan_claim_owners(st, out, set, namespace, name, p, 0, &policy) > 0);
	}

	/* Condemned pods: their claims' owners, then their deletion, highest first. */
	for (int i = 0; i < ncondemned && !stop; i++)
		plan_claim_owners(st, out, set, namespace, name, condemned[i], 1, &policy);
	for (int i = 0; i < ncondemned && !stop; i++) {
		struct sts_pod *p = condemned[i];

		if (p->deleting) {
			stop = monotonic;
			continue;
		}
		if (monotonic && p != first_unavailable && (!p->ready || !p->available)) {
			stop = 1;
			break;
		}
		pod_action(&plan->deletions, ACTION_DELETE, namespace, name, p->name, p->uid, NULL,
		    xasprintf("ordinal %lld is out of range [%lld, %lld)", p->ordinal, start,
		    start + replicas));
		stop = monotonic;
	}

	/* The rolling update, from the highest ordinal: with MaxUnavailableStatefulSet as
	 * many old pods at once as maxUnavailable leaves room for, counting every unavailable
	 * replica (kube's updateStatefulSetAfterInvariantEstablished); without it one at a
	 * time, each once the pods above it are available. */
	if (!stop && strcmp(type, "OnDelete") != 0 && st->max_unavailable) {
		const cJSON *mu = cJSON_GetObjectItemCaseSensitive(rolling, "maxUnavailable");
		long long max_unavailable = 1, unavailable = 0;

		/* absent: kube's default of 1; a percentage rounds down, to at least 1 */
		if (mu != NULL && !cJSON_IsNull(mu) &&
		    intstr_scaled_value(mu, replicas, 0, &max_unavailable, NULL) != 0)
			max_unavailable = 1;
		if (max_unavailable < 1)
			max_unavailable = 1;
		for (long long t = 0; t < replicas; t++)
			unavailable += pod_unavailable(slots[t]);
		for (long long t = replicas - 1; t >= partition && t >= 0 &&
		    unavailable < max_unavailable; t--) {
			struct sts_pod *p = slots[t];

			if (p != NULL && strcmp(p->revision, h->update_name) != 0 && !p->deleting) {
				pod_action(&plan->deletions, ACTION_DELETE, namespace, name, p->name,
				    p->uid, NULL, xasprintf("rolling update: revision %s, not %s "
				    "(maxUnavailable %lld)", p->revision, h->update_name,
				    max_unavailable));
				c->current--;
				plan->rolling_deletion++;
				unavailable++;
			}
		}
	} else if (!stop && strcmp(type, "OnDelete") != 0) {
		for (long long t = replicas - 1; t >= partition && t >= 0; t--) {
			struct sts_pod *p = slots[t];

			if (p != NULL && strcmp(p->revision, h->update_name) != 0 && !p->deleting) {
				pod_action(&plan->deletions, ACTION_DELETE, namespace, name, p->name,
				    p->uid, NULL, xasprintf("rolling update: revision %s, not %s",
				    p->revision, h->update_name));
				c->current--;
				plan->rolling_deletion = 1;
				break;
			}
			if (pod_unavailable(p))
				break;
		}
	}
	free(slots);
	free(condemned);
	return 0;
}

/* --- status ---------------------------------------------------------------------------- */

/* kube's updateStatefulSetStatus: completeRollingUpdate, then the write when a field
 * differs (inconsistentStatus, and collisionCount). */
static void
status_action(struct sync_result *out, const cJSON *set, const char *namespace,
    const char *name, struct sts_counts *c, const struct sts_history *h)
{
	const cJSON *old = cJSON_GetObjectItemCaseSensitive(set, "status");
	long long generation = json_int(json_path(set, "metadata"), "generation", 0);
	long long replicas = json_int(json_path(set, "spec"), "replicas", 1);
	const char *type = json_string(json_path(set, "spec.updateStrategy"), "type");
	const char *current = h->current_name;
	const cJSON *cc = cJSON_GetObjectItemCaseSensitive(old, "collisionCount");
	cJSON *object, *status;
	struct action *a;
	int changed;

	if ((type[0] == '\0' || strcmp(type, "RollingUpdate") == 0) &&
	    c->updated == replicas && c->ready == replicas && c->replicas == replicas) {
		c->current = c->updated;
		current = h->update_name;
	}
	changed = generation > json_int(old, "observedGeneration", 0) ||
	    c->replicas != json_int(old, "replicas", 0) ||
	    c->current != json_int(old, "currentReplicas", 0) ||
	    c->ready != json_int(old, "readyReplicas", 0) ||
	    c->updated != json_int(old, "updatedReplicas", 0) ||
	    c->available != json_int(old, "availableReplicas", 0) ||
	    strcmp(current, json_string(old, "currentRevision")) != 0 ||
	    strcmp(h->update_name, json_string(old, "updateRevision")) != 0 ||
	    !cJSON_IsNumber(cc) || (long long)cc->valuedouble != h->collision_count;
	if (!changed)
		return;
	object = cJSON_Duplicate(set, 1);
	cJSON_DeleteItemFromObjectCaseSensitive(object, "status");
	status = json_child_object(object, "status");
	cJSON_AddNumberToObject(status, "observedGeneration", (double)generation);
	cJSON_AddNumberToObject(status, "replicas", (double)c->replicas);
	cJSON_AddNumberToObject(status, "readyReplicas", (double)c->ready);
	cJSON_AddNumberToObject(status, "currentReplicas", (double)c->current);
	cJSON_AddNumberToObject(status, "updatedReplicas", (double)c->updated);
	cJSON_AddStringToObject(status, "currentRevision", current);
	cJSON_AddStringToObject(status, "updateRevision", h->update_name);
	cJSON_AddNumberToObject(status, "collisionCount", (double)h->collision_count);
	cJSON_AddNumberToObject(status, "availableReplicas", (double)c->available);
	if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(old, "conditions")))
		cJSON_AddItemToObject(status, "conditions", cJSON_Duplicate(
		    cJSON_GetObjectItemCaseSensitive(old, "conditions"), 1));
	a = xcalloc(1, sizeof *a);
	a->type = ACTION_UPDATE_STATUS;
	a->verb = "update-status";
	a->resource = statefulsets_resource();
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(name);
	a->uid = xstrdup(out->owner_uid);
	a->body = object;
	a->reason = xasprintf("replicas=%lld ready=%lld current=%lld updated=%lld "
	    "available=%lld", c->replicas, c->ready, c->current, c->updated, c->available);
	out->status = a;
}

/* --- sync ------------------------------------------------------------------------------ */

static int
statefulset_read(struct statefulset_state *st, const char *namespace, const char *name,
    char **uid, cJSON **set, char **error)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_GET_SET]);
	int rc;

	*uid = NULL;
	*set = NULL;
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*uid = controller_column_strdup(stmt, 0);
		*set = controller_column_json(stmt, 1);
		rc = *set != NULL ? SQLITE_DONE : SQLITE_ERROR;
	}
	return step_error(st, stmt, rc, "reading the StatefulSet", error);
}

/* Moves the actions of from into out->manage. */
static void
take_manage(struct sync_result *out, struct sync_result *from)
{
	for (int i = 0; i < from->nmanage && i < STATEFULSET_BURST; i++) {
		*action_append(&out->manage, &out->nmanage) = from->manage[i];
		memset(&from->manage[i], 0, sizeof from->manage[i]);
	}
}

static int
statefulset_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct statefulset_state *st = c->state;
	struct sts_view v = { 0 };
	struct sts_history h = { 0 };
	struct sts_plan plan = { 0 };
	struct sts_counts counts;
	char *namespace = NULL, *uid = NULL, *sel_error = NULL;
	const char *name;
	cJSON *set = NULL;
	struct selector *sel = NULL;
	long long min_ready;
	int rc = -1, caught_up, satisfied = 0;

	out->controller = "statefulset";
	out->key = xstrdup(key);
	out->owner_resource = statefulsets_resource();
	if (controller_key_split(key, &namespace, &name) != 0)
		return error_set(error, "statefulset: bad key %s", key);
	if (statefulset_read(st, namespace, name, &uid, &set, error) != 0)
		goto out;
	if (set == NULL) {
		out->forget_expectations = 1;
		rc = 0;
		goto out;
	}
	out->owner_uid = xstrdup(uid);
	out->owner = cJSON_Duplicate(set, 1);
	if ((caught_up = controller_caught_up(c, key, uid, out, error)) <= 0) {
		rc = caught_up;
		goto out;
	}
	if (json_is_set(set, "metadata.deletionTimestamp")) {
		rc = 0;
		goto out;
	}
	sel = selector_from_json(json_path(set, "spec.selector"), &sel_error);
	if (sel == NULL) {
		log_error("statefulset %s: invalid selector: %s", key, sel_error);
		free(sel_error);
		rc = 0;
		goto out;
	}
	min_ready = json_int(json_path(set, "spec"), "minReadySeconds", 0);
	if (load_revisions(st, out, set, sel, namespace, uid, &v, error) != 0 ||
	    load_pods(st, out, set, sel, namespace, name, uid, min_ready, now, &v, error) != 0)
		goto out;
	if (history_sync(st, out, set, namespace, name, &v, &h)) {
		rc = 0;
		goto out;
	}
	if (plan_update(st, out, &plan, set, namespace, name, &v, &h, min_ready, &counts,
	    error) != 0) {
		/* Values the API would refuse: nothing to do until the set changes. */
		log_error("statefulset %s: %s", key, *error);
		free(*error);
		*error = NULL;
		rc = 0;
		goto out;
	}
	if (expectations_satisfied(c->expectations, key, now, &satisfied, error) != 0)
		goto out;
	/* The rolling update's deletion counts out of currentReplicas only when it is sent
	 * (kube sends it in the sync that counts it). */
	if (plan.rolling_deletion && (!satisfied || plan.creations.nmanage > 0))
		counts.current += plan.rolling_deletion;
	if (satisfied) {
		if (plan.creations.nmanage > 0) {
			out->creating = 1;
			take_manage(out, &plan.creations);
		} else {
			take_manage(out, &plan.deletions);
		}
	} else {
		long long adds = 0, dels = 0;
		int found;

		expectations_get(c->expectations, key, &found, &adds, &dels, NULL, NULL);
		out->waiting = xasprintf("expecting %lld creations and %lld deletions to be "
		    "observed", adds, dels);
	}
	history_truncate(out, set, namespace, &v, &h);
	status_action(out, set, namespace, name, &counts, &h);
	/* kube requeues after minReadySeconds while fewer than spec.replicas are available. */
	if (min_ready > 0 && counts.available != json_int(json_path(set, "spec"), "replicas", 1))
		out->requeue_after = (double)min_ready;
	rc = 0;
out:
	sync_result_clear(&plan.creations);
	sync_result_clear(&plan.deletions);
	history_clear(&h);
	view_clear(&v);
	selector_free(sel);
	cJSON_Delete(set);
	free(uid);
	free(namespace);
	return rc;
}

/* --- event handlers -------------------------------------------------------------------- */

static char *
resolve_controller_ref(struct statefulset_state *st, const char *namespace, const cJSON *ref)
{
	sqlite3_stmt *stmt;
	char *key = NULL;

	if (ref == NULL || strcmp(json_string(ref, "kind"), "StatefulSet") != 0)
		return NULL;
	stmt = controller_stmt(st->stmt[STMT_SET_BY_UID]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, json_string(ref, "name"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 3, json_string(ref, "uid"), -1, SQLITE_TRANSIENT);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		key = xasprintf("%s/%s", namespace, sqlite3_column_text(stmt, 0));
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return key;
}

static void
observe_failed(const char *what, const char *key, char *error)
{
	log_error("statefulset: recording %s for %s: %s", what, key, error);
	free(error);
}

/* An orphan pod: the set its name names looks again (kube's getPodStatefulSets by
 * selector; the name is what ClaimPods filters on). */
static void
orphan_event(struct statefulset_state *st, const cJSON *pod, const struct controller_queue *q)
{
	const char *namespace = json_string(json_path(pod, "metadata"), "namespace");
	const char *pname = json_string(json_path(pod, "metadata"), "name");
	size_t parent_len = 0;
	char *parent, *key;
	sqlite3_stmt *stmt;

	if (statefulset_ordinal(pname, &parent_len) < 0)
		return;
	parent = xstrndup(pname, parent_len);
	stmt = controller_stmt(st->stmt[STMT_GET_SET]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, parent, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		key = xasprintf("%s/%s", namespace, parent);
		q->add(key, q->arg);
		free(key);
	}
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	free(parent);
}

static void
pod_event(struct controller *c, const cJSON *pod, int added, int gone,
    const struct controller_queue *q)
{
	const char *namespace = json_string(json_path(pod, "metadata"), "namespace");
	const cJSON *ref = controllerref_of(pod);
	char *key, *error = NULL, *pod_key;

	if (ref == NULL) {
		if (!gone)
			orphan_event(c->state, pod, q);
		return;
	}
	key = resolve_controller_ref(c->state, namespace, ref);
	if (key == NULL)
		return;
	if (gone) {
		pod_key = xasprintf("%s/%s", namespace,
		    json_string(json_path(pod, "metadata"), "name"));
		if (expectations_deletion_observed(c->expectations, key, pod_key, &error) != 0)
			observe_failed("a deletion", key, error);
		free(pod_key);
	} else if (added) {
		if (expectations_creation_observed(c->expectations, key, &error) != 0)
			observe_failed("a creation", key, error);
	}
	q->add(key, q->arg);
	free(key);
}

static int
same_json(const cJSON *a, const cJSON *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return cJSON_Compare(a, b, 1);
}

/* A claim changed: the sets whose claims it may be look again (a claim being deleted
 * holds back its pod's creation). */
static void
claim_event(struct statefulset_state *st, const cJSON *claim, const struct controller_queue *q)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_SETS_OF_CLAIM]);
	const char *namespace = json_string(json_path(claim, "metadata"), "namespace");

	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, json_string(json_path(claim, "metadata"), "name"), -1,
	    SQLITE_TRANSIENT);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		char *key = xasprintf("%s/%s", namespace, sqlite3_column_text(stmt, 0));

		q->add(key, q->arg);
		free(key);
	}
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
}

static void
statefulset_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct statefulset_state *st = c->state;
	const cJSON *meta = json_path(ev->object, "metadata");
	const char *rname = ev->resource->name;
	cJSON *old = NULL;
	char *key, *error = NULL;

	(void)now;
	if (strcmp(rname, "statefulsets") == 0) {
		key = xasprintf("%s/%s", json_string(meta, "namespace"), json_string(meta, "name"));
		if (ev->type == INFORMER_DELETED) {
			if (expectations_delete(c->expectations, key, &error) != 0)
				observe_failed("the deletion of expectations", key, error);
			error = NULL;
			if (consistency_forget(c->writes, key, &error) != 0)
				observe_failed("the deletion of writes", key, error);
		}
		q->add(key, q->arg);
		free(key);
	} else if (strcmp(rname, "pods") == 0) {
		int deleting = json_is_set(ev->object, "metadata.deletionTimestamp");

		if (ev->type == INFORMER_UPDATED && ev->old_body != NULL)
			old = cJSON_Parse(ev->old_body);
		if (ev->type == INFORMER_DELETED) {
			pod_event(c, ev->object, 0, 1, q);
		} else if (ev->type == INFORMER_ADDED || old == NULL) {
			pod_event(c, ev->object, !deleting, deleting, q);
		} else {
			int was_deleting = json_is_set(old, "metadata.deletionTimestamp");

			pod_event(c, ev->object, 0, deleting && !was_deleting, q);
			if (!same_json(controllerref_of(old), controllerref_of(ev->object)))
				pod_event(c, old, 0, 0, q);
		}
	} else if (strcmp(rname, "controllerrevisions") == 0) {
		key = resolve_controller_ref(st, json_string(meta, "namespace"),
		    controllerref_of(ev->object));
		if (key != NULL)
			q->add(key, q->arg);
		free(key);
	} else if (strcmp(rname, "persistentvolumeclaims") == 0) {
		claim_event(st, ev->object, q);
	}
	cJSON_Delete(old);
}

static int
statefulset_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct statefulset_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_SET_KEYS], "statefulset", cb, arg, error);
}

static int
statefulset_pod_active(const cJSON *pod)
{
	const char *phase = json_string(json_path(pod, "status"), "phase");

	if (json_is_set(pod, "metadata.deletionTimestamp"))
		return 0;
	return strcmp(phase, "Succeeded") != 0 && strcmp(phase, "Failed") != 0;
}

/* After a restart: a set's inherited expectations go once the cache shows the same active
 * pods as a live LIST by its selector. */
static const struct controller_recovery statefulset_recovery = {
	.owners_sql = "SELECT e.key, s.uid, json_extract(s.body, '$.spec.selector'),"
	    " s.namespace, e.set_at"
	    " FROM expectations e"
	    " JOIN cache_objects s ON s.resource = 'statefulsets'"
	    "  AND s.namespace || '/' || s.name = e.key"
	    " WHERE e.controller = ?1 AND (e.adds > 0 OR e.deletes > 0)",
	.dependents = "pods",
	.cached_sql = "SELECT p.uid FROM object_owners o"
	    " JOIN cache_pods p ON p.id = o.object_id WHERE o.owner_uid = ?1"
	    " AND o.controller = 1 AND p.deletion_timestamp IS NULL"
	    " AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed') ORDER BY p.uid",
	.active = statefulset_pod_active,
};

static const char *const statefulset_resources[] = {
	"statefulsets", "pods", "controllerrevisions", "persistentvolumeclaims", NULL,
};

static const struct controller_flag statefulset_flags[] = {
	{ "feature-gates", CONTROLLER_FLAG_STRING, "", 0, 0,
	  "A set of key=value pairs that describe feature gates for alpha/experimental "
	  "features; of kube's, sqlkcm follows MaxUnavailableStatefulSet=true|false (default "
	  "false) and accepts the others" },
	{ NULL, 0, NULL, 0, 0, NULL },
};

const struct controller_type statefulset_controller_type = {
	.name = "statefulset",
	.flags = statefulset_flags,
	.resources = statefulset_resources,
	.default_workers = 5,
	.workers_flag = "concurrent-statefulset-syncs",
	.workers_help = "StatefulSets synced at once",
	.event_component = "statefulset-controller",
	.client_name = "statefulset-controller",
	.recovery = &statefulset_recovery,
	.init = statefulset_init,
	.fini = statefulset_fini,
	.handle_event = statefulset_handle_event,
	.list_keys = statefulset_list_keys,
	.sync = statefulset_sync,
};
