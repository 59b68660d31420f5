/*
 * deployment.c - the Deployment controller: roll a Deployment's pods from one ReplicaSet
 * to the next, as kube-controller-manager's Deployment controller does, rule for rule, so
 * that either can take over mid-rollout.
 *
 * A sync of one Deployment reads the cache and decides, writing nothing. In kube's order:
 *
 * 1. Gone: forget its write records. Its cache lags the controller's own last writes
 *    (consistency.c): wait, retry with backoff. An empty selector: a SelectingAll warning
 *    and at most observedGeneration.
 * 2. Claim ReplicaSets (controllerref.c): its own that its selector matches, orphans that
 *    it matches (adopted), its own that it no longer matches (released).
 * 3. The new ReplicaSet is the oldest whose template equals the Deployment's, the hash
 *    label aside; the others are old. An existing new one gets the Deployment's
 *    annotations and the next revision; the Deployment gets its revision.
 * 4. Being deleted: status only. Paused: the paused conditions, proportional scaling, the
 *    history cleanup, status. The deprecated rollback-to annotation: roll the template
 *    back. A scaling event (an active ReplicaSet's desired-replicas differs from
 *    spec.replicas): proportional scaling. Else a Recreate or RollingUpdate step.
 * 5. Status and conditions (Available, Progressing, ReplicaFailure), written when they
 *    or the Deployment's revision annotation change; a requeue at the progress deadline.
 *
 * Each step a kube sync would take is a write here (sync_result.writes): the new
 * ReplicaSet's creation, its annotation update, each ReplicaSet's scaling (a patch that
 * carries the resourceVersion it was computed from, so a stale one is refused as kube's
 * update is), the history's deletions; the executor sends them in order and stops at the
 * first failure, as kube's sync returns at its first error. kube writes the Deployment's
 * revision annotation and its first conditions with separate status updates as it goes;
 * here they go with the status at the end, in one write.
 *
 * What differs on purpose: the new ReplicaSet's pod-template-hash is a hash of the
 * template's JSON (kube's hashes Go's in-memory structures, which C cannot reproduce), and
 * a hash collision is seen in the cache before the creation rather than from the
 * apiserver's AlreadyExists after it.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consistency.h"
#include "controllerref.h"
#include "controllers/deployment.h"
#include "kubeevents.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "selector.h"
#include "timeutil.h"
#include "util.h"

#define DEPLOYMENT_KIND "Deployment"
#define REPLICASET_KIND "ReplicaSet"
#define LAST_APPLIED_ANNOTATION "kubectl.kubernetes.io/last-applied-configuration"

/* kube's condition reasons. */
#define REASON_RS_UPDATED "ReplicaSetUpdated"
#define REASON_RS_CREATE_ERROR "ReplicaSetCreateError"
#define REASON_NEW_RS "NewReplicaSetCreated"
#define REASON_FOUND_NEW_RS "FoundNewReplicaSet"
#define REASON_NEW_RS_AVAILABLE "NewReplicaSetAvailable"
#define REASON_TIMED_OUT "ProgressDeadlineExceeded"
#define REASON_PAUSED "DeploymentPaused"
#define REASON_RESUMED "DeploymentResumed"
#define REASON_MIN_AVAILABLE "MinimumReplicasAvailable"
#define REASON_MIN_UNAVAILABLE "MinimumReplicasUnavailable"

enum {
	STMT_GET,
	STMT_RS_CANDIDATES,
	STMT_RS_BY_NAME,
	STMT_BY_UID,
	STMT_IN_NAMESPACE,
	STMT_KEYS,
	STMT_RS_CONTROLLER,
	STMT_PODS_RUNNING,
	STMT_PODS_OF_DEPLOYMENT,
	STMT_COUNT
};

static const char *const deployment_sql[STMT_COUNT] = {
	[STMT_GET] = "SELECT uid, body FROM cache_deployments WHERE namespace = ?1 AND name = ?2",
	/* The namespace's ReplicaSets that are the Deployment's or nobody's: the others'
	 * are never claimed. Oldest first, as kube sorts them. */
	[STMT_RS_CANDIDATES] = "SELECT r.uid, r.body, c.owner_uid FROM cache_replicasets r"
	    " LEFT JOIN object_owners c ON c.object_id = r.id AND c.controller = 1"
	    " WHERE r.namespace = ?1 AND (c.owner_uid IS NULL OR c.owner_uid = ?2)"
	    " ORDER BY r.creation_timestamp, r.name",
	[STMT_RS_BY_NAME] = "SELECT body FROM cache_replicasets WHERE namespace = ?1 AND name = ?2",
	[STMT_BY_UID] = "SELECT name FROM cache_deployments"
	    " WHERE namespace = ?1 AND name = ?2 AND uid = ?3",
	[STMT_IN_NAMESPACE] = "SELECT name, selector FROM cache_deployments"
	    " WHERE namespace = ?1 ORDER BY name",
	[STMT_KEYS] = "SELECT namespace, name FROM cache_deployments ORDER BY namespace, name",
	/* The Recreate Deployment (by kind, name and uid) controlling the ReplicaSet
	 * namespace/name with uid ?3. */
	[STMT_RS_CONTROLLER] = "SELECT d.name, d.uid FROM cache_replicasets r"
	    " JOIN object_owners c ON c.object_id = r.id AND c.controller = 1"
	    " JOIN cache_deployments d ON d.namespace = r.namespace AND d.name = c.name"
	    "  AND d.uid = c.owner_uid"
	    " WHERE r.namespace = ?1 AND r.name = ?2 AND r.uid = ?3 AND c.kind = 'Deployment'"
	    "   AND json_extract(d.body, '$.spec.strategy.type') = 'Recreate'",
	/* kube's oldPodsRunning, for one ReplicaSet: its pods (kube's FilterPodsByOwner: the
	 * controller reference names it by kind, name and uid) not Succeeded or Failed,
	 * terminating ones included. */
	[STMT_PODS_RUNNING] = "SELECT count(*) FROM cache_pods p WHERE p.namespace = ?1"
	    " AND p.controller_uid = ?2 AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')"
	    " AND EXISTS (SELECT 1 FROM object_owners c WHERE c.object_id = p.id"
	    "              AND c.controller = 1 AND c.kind = 'ReplicaSet' AND c.name = ?3)",
	/* The pods of every ReplicaSet the Deployment ?1 controls. */
	[STMT_PODS_OF_DEPLOYMENT] = "SELECT count(*) FROM object_owners c"
	    " JOIN cache_replicasets r ON r.id = c.object_id"
	    " JOIN cache_pods p ON p.namespace = r.namespace AND p.controller_uid = r.uid"
	    " WHERE c.owner_uid = ?1 AND c.controller = 1",
};

struct deployment_state {
	sqlite3 *db;
	sqlite3_stmt *stmt[STMT_COUNT];
};

static const struct resource *
deployments_resource(void)
{
	return resource_find("deployments");
}

static const struct resource *
replicasets_resource(void)
{
	return resource_find("replicasets");
}

static sqlite3_stmt *
state_stmt(struct deployment_state *st, int i)
{
	return controller_stmt(st->stmt[i]);
}

/* The annotation key of object o, or "". */
static const char *
annotation(const cJSON *o, const char *key)
{
	const cJSON *v = json_annotation(o, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static int
has_annotation(const cJSON *o, const char *key)
{
	return cJSON_IsString(json_annotation(o, key));
}

/* --- one sync's view of the ReplicaSets ---------------------------------------------------- */

/* A ReplicaSet of the Deployment, as this sync plans it. */
struct drs {
	cJSON *obj;		/* a copy, changed as the sync plans writes to it */
	double created;		/* creationTimestamp; a planned creation is the newest */
	long long cached_replicas;	/* spec.replicas as cached (the history cleanup's) */
	int planned;		/* created by this sync: not yet on the apiserver */
	int written;		/* this sync already writes it: its next patch goes without
				   the cached resourceVersion */
};

/* Everything one sync works with. */
struct dsync {
	struct controller *c;
	struct deployment_state *st;
	struct sync_result *out;
	const cJSON *d;		/* the Deployment as cached */
	cJSON *work;		/* the Deployment as it will be written (annotations, status) */
	char *namespace;
	const char *name;
	char *uid;
	double now;
	char stamp[TIME_RFC3339_SIZE];
	struct drs **rs;	/* the claimed ReplicaSets, oldest first */
	int nrs;
	struct drs *new_rs;	/* among rs, or a planned creation (appended), or NULL */
	int collision;		/* the new ReplicaSet's name is taken: status only */
	cJSON *create_failure;	/* the failure context of the new ReplicaSet's creation,
				   for the status (status_on_create_failure), or NULL */
};

static long long
rs_replicas(const struct drs *r)
{
	return deployment_spec_replicas(r->obj);
}

static long long
rs_status(const struct drs *r, const char *field)
{
	return json_int(cJSON_GetObjectItemCaseSensitive(r->obj, "status"), field, 0);
}

static const char *
rs_name(const struct drs *r)
{
	return json_string(r->obj, "metadata.name");
}

static double
object_created(const cJSON *o)
{
	time_t t;

	if (time_parse_rfc3339(json_string(o, "metadata.creationTimestamp"), &t) != 0)
		return 0;
	return (double)t;
}

static void
drs_free(struct drs *r)
{
	if (r == NULL)
		return;
	cJSON_Delete(r->obj);
	free(r);
}

static struct drs *
drs_new(cJSON *obj, double created)
{
	struct drs *r = xcalloc(1, sizeof *r);

	r->obj = obj;
	r->created = created;
	r->cached_replicas = deployment_spec_replicas(obj);
	return r;
}

/* kube's ReplicaSetsByCreationTimestamp: older first, then by name. */
static int
by_created(const struct drs *a, const struct drs *b)
{
	if (a->created != b->created)
		return a->created < b->created ? -1 : 1;
	return strcmp(rs_name(a), rs_name(b));
}

static int
by_created_qsort(const void *a, const void *b)
{
	return by_created(*(struct drs *const *)a, *(struct drs *const *)b);
}

/* kube's ReplicaSetsBySizeOlder: larger first, then older first. */
static int
by_size_older(const void *pa, const void *pb)
{
	const struct drs *a = *(struct drs *const *)pa, *b = *(struct drs *const *)pb;

	if (rs_replicas(a) != rs_replicas(b))
		return rs_replicas(a) > rs_replicas(b) ? -1 : 1;
	return by_created(a, b);
}

/* kube's ReplicaSetsBySizeNewer: larger first, then newer first. */
static int
by_size_newer(const void *pa, const void *pb)
{
	const struct drs *a = *(struct drs *const *)pa, *b = *(struct drs *const *)pb;

	if (rs_replicas(a) != rs_replicas(b))
		return rs_replicas(a) > rs_replicas(b) ? -1 : 1;
	return by_created(b, a);
}

/* kube's ReplicaSetsByRevision: lower revision first; equal or unreadable ones by age. */
static int
by_revision(const void *pa, const void *pb)
{
	const struct drs *a = *(struct drs *const *)pa, *b = *(struct drs *const *)pb;
	long long ra = deployment_revision(a->obj), rb = deployment_revision(b->obj);

	if (ra < 0 || rb < 0 || ra == rb)
		return by_created(a, b);
	return ra < rb ? -1 : 1;
}

/* The old ReplicaSets (every claimed one but the new one) into *out; returns how many.
 * active: only those with spec.replicas > 0. */
static int
old_rs(const struct dsync *s, struct drs ***out, int active)
{
	int n = 0;

	*out = xcalloc((size_t)s->nrs + 1, sizeof **out);
	for (int i = 0; i < s->nrs; i++) {
		if (s->rs[i] == s->new_rs || (active && rs_replicas(s->rs[i]) <= 0))
			continue;
		(*out)[n++] = s->rs[i];
	}
	return n;
}

/* Every ReplicaSet, the new one (even a planned one) included, into *out. */
static int
all_rs(const struct dsync *s, struct drs ***out)
{
	int n = old_rs(s, out, 0);

	*out = xrealloc(*out, ((size_t)n + 2) * sizeof **out);
	if (s->new_rs != NULL)
		(*out)[n++] = s->new_rs;
	return n;
}

static long long
sum_replicas(struct drs *const *v, int n)
{
	long long total = 0;

	for (int i = 0; i < n; i++)
		total += rs_replicas(v[i]);
	return total;
}

static long long
sum_status(struct drs *const *v, int n, const char *field)
{
	long long total = 0;

	for (int i = 0; i < n; i++)
		total += rs_status(v[i], field);
	return total;
}

/* --- writes -------------------------------------------------------------------------- */

static long long
d_replicas(const struct dsync *s)
{
	return deployment_spec_replicas(s->d);
}

/* Adds a write to s's result. */
static struct action *
write_new(struct dsync *s, enum action_type type, const char *verb, const char *name,
    const char *uid, cJSON *body, char *reason)
{
	struct action *a = action_append(&s->out->writes, &s->out->nwrites);

	a->type = type;
	a->verb = verb;
	a->resource = replicasets_resource();
	a->namespace = xstrdup(s->namespace);
	a->name = name != NULL ? xstrdup(name) : NULL;
	a->uid = uid != NULL ? xstrdup(uid) : NULL;
	a->body = body;
	a->reason = reason;
	return a;
}

/* A patch of r's metadata (the resourceVersion it was computed from, unless this sync
 * already writes r) for r's next write. */
static cJSON *
rs_patch_new(struct drs *r)
{
	cJSON *patch = cJSON_CreateObject();
	cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");

	if (!r->written)
		cJSON_AddStringToObject(meta, "resourceVersion",
		    json_string(r->obj, "metadata.resourceVersion"));
	r->written = 1;
	return patch;
}

/*
 * kube's scaleReplicaSet: sets r to scale replicas (unless it has them and !force), with
 * the Deployment's desired- and max-replicas annotations; a write when the size or the
 * annotations change, with a ScalingReplicaSet event when the size does. Returns 1 when
 * the size changes.
 */
static int
scale_rs(struct dsync *s, struct drs *r, long long scale, int force, const char *why)
{
	long long old = rs_replicas(r), desired = d_replicas(s);
	long long max = desired + deployment_max_surge(s->d);
	int size_changes = old != scale, annotations_change;
	cJSON *patch, *annotations;
	struct action *a;

	if (!force && !size_changes)
		return 0;
	annotations_change = deployment_replicas_annotations_need_update(r->obj, desired, max);
	if (!size_changes && !annotations_change)
		return 0;
	json_set(json_child_object(r->obj, "spec"), "replicas", cJSON_CreateNumber((double)scale));
	deployment_set_replicas_annotations(r->obj, desired, max);
	if (r->planned) {
		/* Not on the apiserver yet: its creation carries the change (kube never scales a
		 * ReplicaSet in the sync that creates it, but the rule is cheap). */
		for (int i = 0; i < s->out->nwrites; i++) {
			struct action *w = &s->out->writes[i];
			if (w->type == ACTION_CREATE && strcmp(w->name, rs_name(r)) == 0) {
				cJSON_Delete(w->body);
				w->body = cJSON_Duplicate(r->obj, 1);
			}
		}
		return size_changes;
	}
	patch = rs_patch_new(r);
	annotations = cJSON_AddObjectToObject(cJSON_GetObjectItemCaseSensitive(patch, "metadata"),
	    "annotations");
	cJSON_AddStringToObject(annotations, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION,
	    annotation(r->obj, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION));
	cJSON_AddStringToObject(annotations, DEPLOYMENT_MAX_REPLICAS_ANNOTATION,
	    annotation(r->obj, DEPLOYMENT_MAX_REPLICAS_ANNOTATION));
	cJSON_AddObjectToObject(patch, "spec");
	cJSON_AddNumberToObject(cJSON_GetObjectItemCaseSensitive(patch, "spec"), "replicas",
	    (double)scale);
	a = write_new(s, ACTION_PATCH, "scale", rs_name(r), json_string(r->obj, "metadata.uid"),
	    patch, xasprintf("%s: %lld to %lld", why, old, scale));
	if (size_changes) {
		a->done_reason = "ScalingReplicaSet";
		a->done_message = xasprintf("Scaled %s replica set %s from %lld to %lld",
		    old < scale ? "up" : "down", rs_name(r), old, scale);
	}
	return size_changes;
}

/* --- conditions and status ------------------------------------------------------------- */

static cJSON *status_on_create_failure(const struct action *a, const char *const *messages,
    int n);

static cJSON *
work_status(struct dsync *s)
{
	return json_child_object(s->work, "status");
}

static void
set_condition(cJSON *status, const char *type, const char *cstatus, const char *reason,
    char *message, const char *stamp)
{
	deployment_condition_set(status, deployment_condition_new(type, cstatus, reason,
	    message, stamp));
	free(message);
}

/* kube's SetDeploymentRevision, on the Deployment to be written. */
static void
set_deployment_revision(struct dsync *s, const char *revision)
{
	cJSON *annotations = json_child_object(json_child_object(s->work, "metadata"),
	    "annotations");

	json_set(annotations, DEPLOYMENT_REVISION_ANNOTATION, cJSON_CreateString(revision));
}

/* Adds member name = v to o when v is not 0 (Go's omitempty). */
static void
add_count(cJSON *o, const char *name, long long v)
{
	if (v != 0)
		cJSON_AddNumberToObject(o, name, (double)v);
}

/*
 * kube's calculateStatus: the counts summed over the ReplicaSets, the conditions as they
 * are in the status to be written, and Available set from minimum availability. Fields
 * kube leaves out when zero are left out, so that it compares with the cached status.
 */
static cJSON *
status_calculate(struct dsync *s)
{
	struct drs **all;
	int n = all_rs(s, &all);
	long long available = sum_status(all, n, "availableReplicas");
	long long unavailable = sum_replicas(all, n) - available;
	long long terminating = 0;
	int terminating_known = 1;
	const cJSON *collisions = json_path(s->work, "status.collisionCount");
	const cJSON *conditions = json_path(s->work, "status.conditions");
	cJSON *status = cJSON_CreateObject();

	if (unavailable < 0)
		unavailable = 0;
	/* terminatingReplicas: unknown (absent) when a ReplicaSet that has been synced
	 * does not report it. */
	for (int i = 0; i < n; i++) {
		const cJSON *t = json_path(all[i]->obj, "status.terminatingReplicas");
		if (cJSON_IsNumber(t))
			terminating += (long long)t->valuedouble;
		else if (rs_status(all[i], "observedGeneration") != 0)
			terminating_known = 0;
	}
	add_count(status, "observedGeneration", json_int(s->d, "metadata.generation", 0));
	add_count(status, "replicas", sum_status(all, n, "replicas"));
	add_count(status, "updatedReplicas", s->new_rs != NULL ?
	    rs_status(s->new_rs, "replicas") : 0);
	add_count(status, "readyReplicas", sum_status(all, n, "readyReplicas"));
	add_count(status, "availableReplicas", available);
	add_count(status, "unavailableReplicas", unavailable);
	if (terminating_known)
		cJSON_AddNumberToObject(status, "terminatingReplicas", (double)terminating);
	if (cJSON_IsArray(conditions) && cJSON_GetArraySize(conditions) > 0)
		cJSON_AddItemToObject(status, "conditions", cJSON_Duplicate(conditions, 1));
	if (cJSON_IsNumber(collisions))
		cJSON_AddNumberToObject(status, "collisionCount", collisions->valuedouble);
	if (available >= d_replicas(s) - deployment_max_unavailable(s->d))
		set_condition(status, "Available", "True", REASON_MIN_AVAILABLE,
		    xstrdup("Deployment has minimum availability."), s->stamp);
	else
		set_condition(status, "Available", "False", REASON_MIN_UNAVAILABLE,
		    xstrdup("Deployment does not have minimum availability."), s->stamp);
	free(all);
	return status;
}

/* A ReplicaSet condition as a Deployment's (kube's ReplicaSetToDeploymentCondition). */
static cJSON *
condition_from_rs(const cJSON *c)
{
	const char *t = json_string(c, "lastTransitionTime");

	return deployment_condition_new(json_string(c, "type"), json_string(c, "status"),
	    json_string(c, "reason"), json_string(c, "message"), t);
}

/* kube's getReplicaFailures: the new ReplicaSet's ReplicaFailure condition, else the first
 * of any ReplicaSet's; NULL for none. */
static cJSON *
replica_failure(struct dsync *s)
{
	struct drs **all;
	int n = all_rs(s, &all);
	const cJSON *c;
	cJSON *found = NULL;

	if (s->new_rs != NULL) {
		cJSON_ArrayForEach(c, json_path(s->new_rs->obj, "status.conditions")) {
			if (strcmp(json_string(c, "type"), "ReplicaFailure") == 0) {
				found = condition_from_rs(c);
				break;
			}
		}
	}
	for (int i = 0; found == NULL && i < n; i++) {
		cJSON_ArrayForEach(c, json_path(all[i]->obj, "status.conditions")) {
			if (strcmp(json_string(c, "type"), "ReplicaFailure") == 0) {
				found = condition_from_rs(c);
				break;
			}
		}
	}
	free(all);
	return found;
}

/*
 * Adds the status write when status (taken) differs from the cached status or the
 * Deployment's annotations changed. With no write and rollout set, kube's
 * requeueStuckDeployment: look again at the progress deadline.
 */
static void
status_write(struct dsync *s, cJSON *status, int rollout)
{
	const cJSON *cached = cJSON_GetObjectItemCaseSensitive(s->d, "status");
	cJSON *empty = cJSON_CreateObject();
	const cJSON *had = json_path(s->d, "metadata.annotations");
	const cJSON *has = json_path(s->work, "metadata.annotations");
	int changed = !cJSON_Compare(cached != NULL ? cached : empty, status, 1) ||
	    !cJSON_Compare(had != NULL ? had : empty, has != NULL ? has : empty, 1);
	const cJSON *cond;
	struct action *a;
	double after;
	time_t t;

	cJSON_Delete(empty);
	if (!changed && s->create_failure != NULL) {
		/* Nothing to write, unless the creation fails. */
		a = xcalloc(1, sizeof *a);
		a->type = ACTION_UPDATE_STATUS;
		a->verb = "update-status";
		a->resource = deployments_resource();
		a->namespace = xstrdup(s->namespace);
		a->name = xstrdup(s->name);
		a->uid = xstrdup(s->uid);
		a->reason = xstrdup("the new replica set could not be created");
		a->body_on_failure = status_on_create_failure;
		a->failure_context = s->create_failure;
		s->create_failure = NULL;
		s->out->status = a;
	}
	if (!changed) {
		cJSON_Delete(status);
		cond = deployment_condition_get(cached, "Progressing");
		if (!rollout || cond == NULL || !deployment_has_progress_deadline(s->d) ||
		    deployment_complete(s->d, cached) ||
		    strcmp(json_string(cond, "reason"), REASON_TIMED_OUT) == 0)
			return;
		if (time_parse_rfc3339(json_string(cond, "lastUpdateTime"), &t) != 0)
			return;
		after = (double)t + (double)json_int(s->d, "spec.progressDeadlineSeconds", 0) -
		    s->now;
		s->out->requeue_after = after < 1 ? 1 : after + 1;
		return;
	}
	json_set(s->work, "status", status);
	a = xcalloc(1, sizeof *a);
	a->type = ACTION_UPDATE_STATUS;
	a->verb = "update-status";
	a->resource = deployments_resource();
	a->namespace = xstrdup(s->namespace);
	a->name = xstrdup(s->name);
	a->uid = xstrdup(s->uid);
	a->body = cJSON_Duplicate(s->work, 1);
	a->reason = xstrdup("the status changed");
	if (s->create_failure != NULL) {
		a->body_on_failure = status_on_create_failure;
		a->failure_context = s->create_failure;
		s->create_failure = NULL;
	}
	s->out->status = a;
}

/* kube's syncDeploymentStatus: the counts and Available, nothing about progress. */
static void
sync_status(struct dsync *s)
{
	status_write(s, status_calculate(s), 0);
}

/* kube's syncRolloutStatus: the counts, the Progressing and ReplicaFailure conditions. */
static void
sync_rollout_status(struct dsync *s)
{
	cJSON *status = status_calculate(s), *failure, *cond;
	const cJSON *current = deployment_condition_get(json_path(s->work, "status"),
	    "Progressing");
	const char *who_kind = s->new_rs != NULL ? "ReplicaSet" : "Deployment";
	const char *who = s->new_rs != NULL ? rs_name(s->new_rs) : s->name;
	int complete_already;

	if (!deployment_has_progress_deadline(s->d))
		deployment_condition_remove(status, "Progressing");
	complete_already = json_int(status, "replicas", 0) ==
	    json_int(status, "updatedReplicas", 0) && current != NULL &&
	    strcmp(json_string(current, "reason"), REASON_NEW_RS_AVAILABLE) == 0;
	if (deployment_has_progress_deadline(s->d) && !complete_already) {
		if (deployment_complete(s->d, status)) {
			set_condition(status, "Progressing", "True", REASON_NEW_RS_AVAILABLE,
			    xasprintf("%s \"%s\" has successfully progressed.", who_kind, who),
			    s->stamp);
		} else if (deployment_progressing(s->d, status)) {
			char *msg = xasprintf("%s \"%s\" is progressing.", who_kind, who);
			cond = deployment_condition_new("Progressing", "True", REASON_RS_UPDATED,
			    msg, s->stamp);
			free(msg);
			if (current != NULL) {
				if (strcmp(json_string(current, "status"), "True") == 0)
					json_set(cond, "lastTransitionTime", cJSON_CreateString(
					    json_string(current, "lastTransitionTime")));
				deployment_condition_remove(status, "Progressing");
			}
			deployment_condition_set(status, cond);
		} else if (deployment_timed_out(s->d, status, s->now)) {
			set_condition(status, "Progressing", "False", REASON_TIMED_OUT,
			    xasprintf("%s \"%s\" has timed out progressing.", who_kind, who),
			    s->stamp);
		}
	}
	if ((failure = replica_failure(s)) != NULL)
		deployment_condition_set(status, failure);
	else
		deployment_condition_remove(status, "ReplicaFailure");
	status_write(s, status, 1);
}

/* --- the new ReplicaSet ------------------------------------------------------------------ */

/*
 * kube's getNewReplicaSet for an existing new ReplicaSet: it gets the Deployment's
 * annotations, the next revision and minReadySeconds (one write); if it has them, the
 * Deployment gets its revision, and the FoundNewReplicaSet condition if it has none.
 */
static void
sync_existing_new(struct dsync *s, long long new_revision)
{
	struct drs *r = s->new_rs;
	int annotations, min_ready;
	cJSON *patch, *meta;
	const cJSON *cond;

	annotations = deployment_set_new_rs_annotations(s->d, r->obj, new_revision, 1,
	    DEPLOYMENT_MAX_REVISION_HISTORY_CHARS);
	min_ready = json_int(r->obj, "spec.minReadySeconds", 0) !=
	    json_int(s->d, "spec.minReadySeconds", 0);
	if (annotations || min_ready) {
		json_set(json_child_object(r->obj, "spec"), "minReadySeconds",
		    cJSON_CreateNumber((double)json_int(s->d, "spec.minReadySeconds", 0)));
		patch = rs_patch_new(r);
		meta = cJSON_GetObjectItemCaseSensitive(patch, "metadata");
		cJSON_AddItemToObject(meta, "annotations",
		    cJSON_Duplicate(json_path(r->obj, "metadata.annotations"), 1));
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(patch, "spec"), "minReadySeconds",
		    (double)json_int(s->d, "spec.minReadySeconds", 0));
		write_new(s, ACTION_PATCH, "annotate", rs_name(r),
		    json_string(r->obj, "metadata.uid"), patch,
		    xasprintf("the new replica set takes revision %s and the deployment's "
		    "annotations", annotation(r->obj,
		    DEPLOYMENT_REVISION_ANNOTATION)));
		return;
	}
	set_deployment_revision(s, annotation(r->obj,
	    DEPLOYMENT_REVISION_ANNOTATION));
	cond = deployment_condition_get(json_path(s->work, "status"), "Progressing");
	if (deployment_has_progress_deadline(s->d) && cond == NULL)
		set_condition(work_status(s), "Progressing", "True", REASON_FOUND_NEW_RS,
		    xasprintf("Found new replica set \"%s\"", rs_name(r)), s->stamp);
}

/* The status to write when the new ReplicaSet's creation fails (the one failure: the
 * writes stop at it): the Progressing condition ReplicaSetCreateError (kube writes it only
 * with a progress deadline). failure_context: {"object", "name", "now"}. */
static cJSON *
status_on_create_failure(const struct action *a, const char *const *messages, int n)
{
	const cJSON *ctx = a->failure_context;
	cJSON *object = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ctx, "object"), 1);
	char *msg = xasprintf("Failed to create new replica set \"%s\": %s",
	    json_string(ctx, "name"), messages[0]);

	(void)n;
	set_condition(json_child_object(object, "status"), "Progressing", "False",
	    REASON_RS_CREATE_ERROR, msg, json_string(ctx, "now"));
	return object;
}

/* Adds the pod-template-hash label with hash to the labels object at path under o. */
static void
add_hash_label(cJSON *o, const char *hash)
{
	json_set(o, DEPLOYMENT_HASH_LABEL, cJSON_CreateString(hash));
}

/*
 * kube's getNewReplicaSet when there is none: the ReplicaSet <name>-<hash> with the
 * template, its hash label in the template and the selector, the annotations and the
 * replicas the strategy allows now. A name the cache shows taken is the new ReplicaSet
 * if the Deployment controls it and it has the template; by any other it is a hash
 * collision (kube's AlreadyExists branch): collisionCount goes up, in the status only.
 * Returns 0 when the new ReplicaSet is planned (s->new_rs set).
 */
static int
create_new(struct dsync *s, long long new_revision, char **error)
{
	const cJSON *template = json_path(s->d, "spec.template");
	long long collisions = json_int(s->d, "status.collisionCount", 0);
	char *hash = deployment_template_hash(template, collisions);
	char *name = deployment_rs_name(s->name, hash);
	cJSON *rs, *meta, *spec, *tmpl, *sel, *existing = NULL, *ctx;
	sqlite3_stmt *stmt = state_stmt(s->st, STMT_RS_BY_NAME);
	struct drs **all;
	const cJSON **objs;
	struct action *a;
	char revision[32];
	long long replicas;
	int n, rc;

	sqlite3_bind_text(stmt, 1, s->namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		existing = controller_column_json(stmt, 0);
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		error_set(error, "deployment: reading replica set %s: %s", name,
		    sqlite3_errmsg(s->st->db));
		free(hash);
		free(name);
		return -1;
	}
	if (existing != NULL) {
		const cJSON *ref = controllerref_of(existing);

		if (ref == NULL || strcmp(json_string(ref, "uid"), s->uid) != 0 ||
		    !deployment_templates_equal(json_path(existing, "spec.template"), template)) {
			/* Another template, or another's (or nobody's) ReplicaSet, has the name:
			 * a new hash next time. */
			log_v(2, "deployment %s/%s: hash collision on replica set %s; collisionCount "
			    "%lld -> %lld", s->namespace, s->name, name, collisions, collisions + 1);
			json_set(work_status(s), "collisionCount",
			    cJSON_CreateNumber((double)(collisions + 1)));
			s->collision = 1;
		} else {
			/* Its own with the template, not claimed (released as its labels no
			 * longer match): kube takes it as the new one it could not create. */
			s->new_rs = drs_new(existing, object_created(existing));
			existing = NULL;
			snprintf(revision, sizeof revision, "%lld", new_revision);
			set_deployment_revision(s, revision);
			s->rs = xrealloc(s->rs, ((size_t)s->nrs + 1) * sizeof *s->rs);
			s->rs[s->nrs++] = s->new_rs;
		}
		cJSON_Delete(existing);
		free(hash);
		free(name);
		return s->collision ? 1 : 0;
	}

	rs = cJSON_CreateObject();
	cJSON_AddStringToObject(rs, "apiVersion", "apps/v1");
	cJSON_AddStringToObject(rs, "kind", REPLICASET_KIND);
	meta = cJSON_AddObjectToObject(rs, "metadata");
	cJSON_AddStringToObject(meta, "name", name);
	cJSON_AddStringToObject(meta, "namespace", s->namespace);
	tmpl = cJSON_Duplicate(template, 1);
	add_hash_label(json_child_object(json_child_object(tmpl, "metadata"), "labels"), hash);
	cJSON_AddItemToObject(meta, "labels",
	    cJSON_Duplicate(json_path(tmpl, "metadata.labels"), 1));
	cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"),
	    controllerref_new(deployments_resource(), s->d));
	spec = cJSON_AddObjectToObject(rs, "spec");
	cJSON_AddNumberToObject(spec, "replicas", 0);
	cJSON_AddNumberToObject(spec, "minReadySeconds",
	    (double)json_int(s->d, "spec.minReadySeconds", 0));
	sel = cJSON_Duplicate(json_path(s->d, "spec.selector"), 1);
	if (sel == NULL)
		sel = cJSON_CreateObject();
	add_hash_label(json_child_object(sel, "matchLabels"), hash);
	cJSON_AddItemToObject(spec, "selector", sel);
	cJSON_AddItemToObject(spec, "template", tmpl);

	s->new_rs = drs_new(rs, s->now + 1);
	s->new_rs->planned = 1;
	n = all_rs(s, &all);
	objs = xcalloc((size_t)n + 1, sizeof *objs);
	for (int i = 0; i < n; i++)
		objs[i] = all[i]->obj;
	replicas = deployment_new_rs_new_replicas(s->d, objs, n, rs);
	free(objs);
	free(all);
	json_set(spec, "replicas", cJSON_CreateNumber((double)replicas));
	deployment_set_new_rs_annotations(s->d, rs, new_revision, 0,
	    DEPLOYMENT_MAX_REVISION_HISTORY_CHARS);
	s->rs = xrealloc(s->rs, ((size_t)s->nrs + 1) * sizeof *s->rs);
	s->rs[s->nrs++] = s->new_rs;

	a = write_new(s, ACTION_CREATE, "create", name, NULL, cJSON_Duplicate(rs, 1),
	    xasprintf("no replica set has the deployment's template; revision %lld, "
	    "%lld replicas", new_revision, replicas));
	if (replicas > 0) {
		a->done_reason = "ScalingReplicaSet";
		a->done_message = xasprintf("Scaled up replica set %s from 0 to %lld", name,
		    replicas);
	}
	a->failed_reason = REASON_RS_CREATE_ERROR;
	a->failed_message = xasprintf("Failed to create new replica set \"%s\": ", name);
	if (deployment_has_progress_deadline(s->d)) {
		/* The failure goes into the status. */
		a->error_prefix = "";
		ctx = cJSON_CreateObject();
		cJSON_AddItemToObject(ctx, "object", cJSON_Duplicate(s->d, 1));
		cJSON_AddStringToObject(ctx, "name", name);
		cJSON_AddStringToObject(ctx, "now", s->stamp);
		s->create_failure = ctx;
	}
	snprintf(revision, sizeof revision, "%lld", new_revision);
	set_deployment_revision(s, revision);
	if (deployment_has_progress_deadline(s->d))
		set_condition(work_status(s), "Progressing", "True", REASON_NEW_RS,
		    xasprintf("Created new replica set \"%s\"", name), s->stamp);
	free(hash);
	free(name);
	return 0;
}

/* --- scaling --------------------------------------------------------------------------- */

/* kube's FindActiveOrLatest: the only active ReplicaSet; with none active, the new one or
 * else the newest old one; NULL when several are active. */
static struct drs *
active_or_latest(struct dsync *s)
{
	struct drs **old, *found = NULL;
	int nold = old_rs(s, &old, 0), active = 0;

	if (s->new_rs == NULL && nold == 0) {
		free(old);
		return NULL;
	}
	for (int i = 0; i < nold; i++) {
		if (rs_replicas(old[i]) > 0) {
			active++;
			found = old[i];
		}
	}
	if (s->new_rs != NULL && rs_replicas(s->new_rs) > 0) {
		active++;
		found = s->new_rs;
	}
	if (active == 0) {
		if (s->new_rs != NULL) {
			found = s->new_rs;
		} else {
			qsort(old, (size_t)nold, sizeof *old, by_created_qsort);
			found = old[nold - 1];
		}
	} else if (active > 1) {
		found = NULL;
	}
	free(old);
	return found;
}

/*
 * kube's scale: a Deployment's size changed (or it is paused). One active ReplicaSet takes
 * the whole size; a saturated new one leaves the old ones none; else, in a rolling update,
 * the replicas to add or remove are shared in proportion to the ReplicaSets' sizes, larger
 * first, the leftover to the first.
 */
static void
scale(struct dsync *s)
{
	struct drs *target = active_or_latest(s), **active;
	long long replicas = d_replicas(s), allowed = 0, to_add, added = 0, *sizes;
	int n = 0;

	if (target != NULL) {
		if (rs_replicas(target) != replicas)
			scale_rs(s, target, replicas, 0, "the only active replica set takes the "
			    "deployment's size");
		return;
	}
	if (s->new_rs != NULL && deployment_is_saturated(s->d, s->new_rs->obj)) {
		struct drs **old;
		int nold = old_rs(s, &old, 1);
		for (int i = 0; i < nold; i++)
			scale_rs(s, old[i], 0, 0, "the new replica set is saturated");
		free(old);
		return;
	}
	if (!deployment_is_rolling(s->d))
		return;
	active = xcalloc((size_t)s->nrs + 1, sizeof *active);
	for (int i = 0; i < s->nrs; i++) {
		if (rs_replicas(s->rs[i]) > 0)
			active[n++] = s->rs[i];
	}
	if (replicas > 0)
		allowed = replicas + deployment_max_surge(s->d);
	to_add = allowed - sum_replicas(active, n);
	if (to_add > 0)
		qsort(active, (size_t)n, sizeof *active, by_size_newer);
	else if (to_add < 0)
		qsort(active, (size_t)n, sizeof *active, by_size_older);
	sizes = xcalloc((size_t)n + 1, sizeof *sizes);
	for (int i = 0; i < n; i++) {
		long long p = 0;
		if (to_add != 0) {
			p = deployment_rs_proportion(active[i]->obj, s->d, to_add, added);
			added += p;
		}
		sizes[i] = rs_replicas(active[i]) + p;
	}
	for (int i = 0; i < n; i++) {
		if (i == 0 && to_add != 0) {
			sizes[i] += to_add - added;
			if (sizes[i] < 0)
				sizes[i] = 0;
		}
		scale_rs(s, active[i], sizes[i], 1, "proportional scaling");
	}
	free(sizes);
	free(active);
}

/* kube's cleanupDeployment: beyond revisionHistoryLimit, the old ReplicaSets with no
 * replicas (and synced), lowest revision first, are deleted. */
static void
cleanup(struct dsync *s)
{
	struct drs **old;
	int nold = old_rs(s, &old, 0), n = 0;
	long long diff;

	if (!deployment_has_history_limit(s->d)) {
		free(old);
		return;
	}
	for (int i = 0; i < nold; i++) {
		if (!json_is_set(old[i]->obj, "metadata.deletionTimestamp"))
			old[n++] = old[i];
	}
	diff = n - json_int(s->d, "spec.revisionHistoryLimit", 0);
	if (diff > 0)
		qsort(old, (size_t)n, sizeof *old, by_revision);
	for (long long i = 0; i < diff; i++) {
		struct drs *r = old[i];

		/* Only one with no replicas, wanted or reported, and synced. */
		if (rs_status(r, "replicas") != 0 || r->cached_replicas != 0 ||
		    json_int(r->obj, "metadata.generation", 0) > rs_status(r, "observedGeneration"))
			continue;
		write_new(s, ACTION_DELETE, "delete", rs_name(r),
		    json_string(r->obj, "metadata.uid"), NULL,
		    xasprintf("revision %lld is beyond the history limit of %lld",
		    deployment_revision(r->obj), json_int(s->d, "spec.revisionHistoryLimit", 0)));
	}
	free(old);
}

/* --- rolling update -------------------------------------------------------------------- */

/* kube's reconcileNewReplicaSet; 1 when it scales. */
static int
reconcile_new(struct dsync *s)
{
	struct drs **all;
	const cJSON **objs;
	long long replicas = d_replicas(s), want;
	int n;

	if (rs_replicas(s->new_rs) == replicas)
		return 0;
	if (rs_replicas(s->new_rs) > replicas)
		return scale_rs(s, s->new_rs, replicas, 0, "the new replica set is over the "
		    "deployment's size");
	n = all_rs(s, &all);
	objs = xcalloc((size_t)n + 1, sizeof *objs);
	for (int i = 0; i < n; i++)
		objs[i] = all[i]->obj;
	want = deployment_new_rs_new_replicas(s->d, objs, n, s->new_rs->obj);
	free(objs);
	free(all);
	return scale_rs(s, s->new_rs, want, 0, "rolling update: the new replica set grows "
	    "within maxSurge");
}

/* kube's cleanupUnhealthyReplicas: old replica sets lose their unavailable replicas first,
 * oldest first, at most max in all. Returns how many. */
static long long
cleanup_unhealthy(struct dsync *s, struct drs **old, int nold, long long max)
{
	long long total = 0;

	qsort(old, (size_t)nold, sizeof *old, by_created_qsort);
	for (int i = 0; i < nold && total < max; i++) {
		long long replicas = rs_replicas(old[i]);
		long long available = rs_status(old[i], "availableReplicas"), down;
		if (replicas == 0 || replicas == available)
			continue;
		down = max - total < replicas - available ? max - total : replicas - available;
		if (replicas - down > replicas)
			return total;
		scale_rs(s, old[i], replicas - down, 0, "rolling update: unhealthy replicas of "
		    "an old replica set go first");
		total += down;
	}
	return total;
}

/* kube's scaleDownOldReplicaSetsForRollingUpdate; returns how many replicas go. */
static long long
scale_down_old(struct dsync *s, struct drs **old, int nold)
{
	struct drs **all;
	int n = all_rs(s, &all);
	long long min_available = d_replicas(s) - deployment_max_unavailable(s->d);
	long long available = sum_status(all, n, "availableReplicas"), total = 0, want;

	free(all);
	if (available <= min_available)
		return 0;
	want = available - min_available;
	qsort(old, (size_t)nold, sizeof *old, by_created_qsort);
	for (int i = 0; i < nold && total < want; i++) {
		long long replicas = rs_replicas(old[i]), down;
		if (replicas == 0)
			continue;
		down = replicas < want - total ? replicas : want - total;
		scale_rs(s, old[i], replicas - down, 0, "rolling update: old replica sets shrink "
		    "within maxUnavailable");
		total += down;
	}
	return total;
}

/* kube's reconcileOldReplicaSets; 1 when it scales down. */
static int
reconcile_old(struct dsync *s)
{
	struct drs **old, **all;
	int nold = old_rs(s, &old, 1), n = all_rs(s, &all);
	long long all_pods = sum_replicas(all, n), max_down, cleaned, down;
	long long min_available = d_replicas(s) - deployment_max_unavailable(s->d);

	free(all);
	if (sum_replicas(old, nold) == 0) {
		free(old);
		return 0;
	}
	max_down = all_pods - min_available - (rs_replicas(s->new_rs) -
	    rs_status(s->new_rs, "availableReplicas"));
	if (max_down <= 0) {
		free(old);
		return 0;
	}
	cleaned = cleanup_unhealthy(s, old, nold, max_down);
	down = scale_down_old(s, old, nold);
	free(old);
	return cleaned + down > 0;
}

static void
rollout_rolling(struct dsync *s, long long new_revision, char **error, int *rc)
{
	if (s->new_rs == NULL && (*rc = create_new(s, new_revision, error)) != 0) {
		/* A collision (status only), or an error. */
		if (*rc > 0) {
			*rc = 0;
			sync_status(s);
		}
		return;
	}
	if (reconcile_new(s) || reconcile_old(s)) {
		sync_rollout_status(s);
		return;
	}
	if (deployment_complete(s->d, cJSON_GetObjectItemCaseSensitive(s->d, "status")))
		cleanup(s);
	sync_rollout_status(s);
}

/* --- recreate -------------------------------------------------------------------------- */

/* kube's oldPodsRunning: an old ReplicaSet reports pods, or has a pod not finished. */
static int
old_pods_running(struct dsync *s, int *running, char **error)
{
	struct drs **old;
	int nold = old_rs(s, &old, 0), rc = SQLITE_DONE;

	*running = sum_status(old, nold, "replicas") > 0;
	for (int i = 0; i < nold && !*running; i++) {
		sqlite3_stmt *stmt = state_stmt(s->st, STMT_PODS_RUNNING);
		sqlite3_bind_text(stmt, 1, s->namespace, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(stmt, 2, json_string(old[i]->obj, "metadata.uid"), -1,
		    SQLITE_TRANSIENT);
		sqlite3_bind_text(stmt, 3, rs_name(old[i]), -1, SQLITE_TRANSIENT);
		if ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
			*running = sqlite3_column_int(stmt, 0) > 0;
			rc = SQLITE_DONE;
		}
		sqlite3_reset(stmt);
		if (rc != SQLITE_DONE)
			break;
	}
	free(old);
	if (rc != SQLITE_DONE)
		return error_set(error, "deployment: counting old pods: %s",
		    sqlite3_errmsg(s->st->db));
	return 0;
}

static void
rollout_recreate(struct dsync *s, long long new_revision, char **error, int *rc)
{
	struct drs **old;
	int nold = old_rs(s, &old, 1), scaled = 0, running;

	for (int i = 0; i < nold; i++)
		scaled |= scale_rs(s, old[i], 0, 0, "recreate: old replica sets go first");
	free(old);
	if (scaled) {
		sync_rollout_status(s);
		return;
	}
	if ((*rc = old_pods_running(s, &running, error)) != 0)
		return;
	if (running) {
		sync_rollout_status(s);
		return;
	}
	if (s->new_rs == NULL && (*rc = create_new(s, new_revision, error)) != 0) {
		if (*rc > 0) {
			*rc = 0;
			sync_status(s);
		}
		return;
	}
	scale_rs(s, s->new_rs, d_replicas(s), 0, "recreate: every old pod is gone");
	if (deployment_complete(s->d, cJSON_GetObjectItemCaseSensitive(s->d, "status")))
		cleanup(s);
	sync_rollout_status(s);
}

/* --- rollback (the deprecated rollback-to annotation) ------------------------------------ */

/* s as Go's strconv.ParseInt(s, 10, 64) reads it: an optional sign, then decimal digits
 * only, within int64. 0 and *out when it is one, -1 otherwise. */
static int
parse_int64(const char *s, long long *out)
{
	const char *digits = s + (*s == '+' || *s == '-');
	char *end;
	long long v;

	if (*digits < '0' || *digits > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno == ERANGE || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

/* kube's getRollbackTo: 1 and *to when the Deployment's rollback-to annotation is a
 * revision; 0 when it is absent, empty or invalid (ignored). */
static int
rollback_to_of(const cJSON *d, long long *to)
{
	return has_annotation(d, DEPLOYMENT_ROLLBACK_TO_ANNOTATION) &&
	    parse_int64(annotation(d, DEPLOYMENT_ROLLBACK_TO_ANNOTATION), to) == 0;
}

/* 1 for the annotations a Deployment and its ReplicaSets do not share. */
static int
annotation_skipped(const char *key)
{
	return strcmp(key, LAST_APPLIED_ANNOTATION) == 0 ||
	    strcmp(key, DEPLOYMENT_REVISION_ANNOTATION) == 0 ||
	    strcmp(key, DEPLOYMENT_REVISION_HISTORY_ANNOTATION) == 0 ||
	    strcmp(key, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION) == 0 ||
	    strcmp(key, DEPLOYMENT_MAX_REPLICAS_ANNOTATION) == 0 ||
	    strcmp(key, DEPLOYMENT_ROLLBACK_TO_ANNOTATION) == 0;
}

/* The update of the Deployment (its whole object) that clears the rollback annotation,
 * after object's other changes. */
static struct action *
rollback_write(struct dsync *s, cJSON *object, char *reason)
{
	struct action *a;

	cJSON_DeleteItemFromObjectCaseSensitive(json_child_object(json_child_object(object,
	    "metadata"), "annotations"), DEPLOYMENT_ROLLBACK_TO_ANNOTATION);
	a = write_new(s, ACTION_UPDATE, "rollback", s->name, s->uid, object, reason);
	a->resource = deployments_resource();
	return a;
}

/*
 * kube's rollback: the revision asked for (0: the one before the newest) found among the
 * ReplicaSets gives the Deployment its template (less the hash label) and annotations;
 * the annotation is cleared in any case, with a warning when there is nothing to do.
 */
static void
rollback(struct dsync *s, long long to)
{
	struct drs **all;
	const cJSON **objs;
	int n = all_rs(s, &all);
	struct drs *target = NULL;
	cJSON *object = cJSON_Duplicate(s->d, 1), *tmpl, *annotations, *kept;
	const cJSON *m;
	struct action *a;

	objs = xcalloc((size_t)n + 1, sizeof *objs);
	for (int i = 0; i < n; i++)
		objs[i] = all[i]->obj;
	if (to == 0 && (to = deployment_last_revision(objs, n)) == 0) {
		free(objs);
		free(all);
		sync_result_add_event(s->out, EVENT_TYPE_WARNING,
		    "DeploymentRollbackRevisionNotFound", xstrdup("Unable to find last revision."));
		rollback_write(s, object, xstrdup("no revision to roll back to"));
		return;
	}
	free(objs);
	for (int i = 0; i < n && target == NULL; i++) {
		/* kube's Revision: absent is 0, an unparseable one is skipped. */
		long long v = 0;

		if (has_annotation(all[i]->obj, DEPLOYMENT_REVISION_ANNOTATION) &&
		    parse_int64(annotation(all[i]->obj, DEPLOYMENT_REVISION_ANNOTATION), &v) != 0)
			continue;
		if (v == to)
			target = all[i];
	}
	free(all);
	if (target == NULL) {
		sync_result_add_event(s->out, EVENT_TYPE_WARNING,
		    "DeploymentRollbackRevisionNotFound",
		    xstrdup("Unable to find the revision to rollback to."));
		rollback_write(s, object, xasprintf("revision %lld not found", to));
		return;
	}
	if (deployment_templates_equal(json_path(s->d, "spec.template"),
	    json_path(target->obj, "spec.template"))) {
		sync_result_add_event(s->out, EVENT_TYPE_WARNING,
		    "DeploymentRollbackTemplateUnchanged", xasprintf("The rollback revision "
		    "contains the same template as current deployment \"%s\"", s->name));
		rollback_write(s, object, xasprintf("revision %lld has the same template", to));
		return;
	}
	tmpl = cJSON_Duplicate(json_path(target->obj, "spec.template"), 1);
	cJSON_DeleteItemFromObjectCaseSensitive(json_child_object(json_child_object(tmpl,
	    "metadata"), "labels"), DEPLOYMENT_HASH_LABEL);
	json_set(json_child_object(object, "spec"), "template", tmpl);
	/* The Deployment keeps its own skipped annotations and takes the others of the
	 * ReplicaSet. */
	annotations = json_child_object(json_child_object(object, "metadata"), "annotations");
	kept = cJSON_CreateObject();
	cJSON_ArrayForEach(m, annotations) {
		if (annotation_skipped(m->string))
			cJSON_AddItemToObject(kept, m->string, cJSON_Duplicate(m, 1));
	}
	cJSON_ArrayForEach(m, json_path(target->obj, "metadata.annotations")) {
		if (!annotation_skipped(m->string))
			json_set(kept, m->string, cJSON_Duplicate(m, 1));
	}
	json_set(json_child_object(object, "metadata"), "annotations", kept);
	a = rollback_write(s, object, xasprintf("roll back to revision %lld", to));
	a->done_reason = "DeploymentRollback";
	a->done_message = xasprintf("Rolled back deployment \"%s\" to revision %lld", s->name, to);
}

/* --- the sync -------------------------------------------------------------------------- */

/* kube's checkPausedConditions: Progressing Unknown DeploymentPaused or DeploymentResumed
 * when pausing or resuming, unless it timed out already. */
static void
paused_conditions(struct dsync *s)
{
	const cJSON *cond = deployment_condition_get(json_path(s->d, "status"), "Progressing");
	int paused = cJSON_IsTrue(json_path(s->d, "spec.paused"));
	int paused_cond = cond != NULL &&
	    strcmp(json_string(cond, "reason"), REASON_PAUSED) == 0;

	if (!deployment_has_progress_deadline(s->d) ||
	    (cond != NULL && strcmp(json_string(cond, "reason"), REASON_TIMED_OUT) == 0))
		return;
	if (paused && !paused_cond)
		set_condition(work_status(s), "Progressing", "Unknown", REASON_PAUSED,
		    xstrdup("Deployment is paused"), s->stamp);
	else if (!paused && paused_cond)
		set_condition(work_status(s), "Progressing", "Unknown", REASON_RESUMED,
		    xstrdup("Deployment is resumed"), s->stamp);
}

/* kube's isScalingEvent: an active ReplicaSet's desired-replicas is not spec.replicas. */
static int
scaling_event(struct dsync *s)
{
	long long desired;

	for (int i = 0; i < s->nrs; i++) {
		if (rs_replicas(s->rs[i]) <= 0)
			continue;
		if (deployment_int32_annotation(s->rs[i]->obj,
		    DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION, &desired) && desired != d_replicas(s))
			return 1;
	}
	return 0;
}

/* Reads the Deployment namespace/name: *uid and *d (NULL when not cached). */
static int
deployment_read(struct deployment_state *st, const char *namespace, const char *name,
    char **uid, cJSON **d, char **error)
{
	sqlite3_stmt *stmt = state_stmt(st, STMT_GET);
	int rc;

	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		*d = controller_column_json(stmt, 1);
		rc = *d != NULL ? SQLITE_DONE : SQLITE_CORRUPT;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "deployment: reading %s/%s: %s", namespace, name,
		    rc == SQLITE_CORRUPT ? "its cached body is not JSON" : sqlite3_errmsg(st->db));
	return 0;
}

/*
 * Claims (kube's ClaimReplicaSets) the namespace's ReplicaSets that are the Deployment's
 * or nobody's, into s->rs, oldest first; adoptions and releases go into the result.
 */
static int
claim(struct dsync *s, const struct selector *sel, char **error)
{
	sqlite3_stmt *stmt = state_stmt(s->st, STMT_RS_CANDIDATES);
	int deleting = json_is_set(s->d, "metadata.deletionTimestamp"), rc;

	sqlite3_bind_text(stmt, 1, s->namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, s->uid, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *uid = (const char *)sqlite3_column_text(stmt, 0);
		cJSON *rs = controller_column_json(stmt, 1);
		int ours = sqlite3_column_type(stmt, 2) != SQLITE_NULL;
		enum controllerref_claim c;

		if (rs == NULL)
			continue;
		c = controllerref_decide(ours ? CONTROLLERREF_OURS : CONTROLLERREF_ORPHAN,
		    selector_matches(sel, json_path(rs, "metadata.labels")),
		    json_is_set(rs, "metadata.deletionTimestamp"), deleting, 0);
		if (c == CONTROLLERREF_RELEASE)
			controllerref_claim_action(action_append(&s->out->claims,
			    &s->out->nclaims), c, replicasets_resource(), s->namespace,
			    json_string(rs, "metadata.name"), uid,
			    controllerref_release_patch(s->uid, uid),
			    xstrdup("the selector no longer matches its labels"));
		if (c == CONTROLLERREF_ADOPT) {
			controllerref_claim_action(action_append(&s->out->claims,
			    &s->out->nclaims), c, replicasets_resource(), s->namespace,
			    json_string(rs, "metadata.name"), uid,
			    controllerref_adopt_patch(deployments_resource(), s->d, uid),
			    xstrdup("an orphan the selector matches"));
			s->out->recheck_owner = 1;
		}
		if (c != CONTROLLERREF_KEEP && c != CONTROLLERREF_ADOPT) {
			cJSON_Delete(rs);
			continue;
		}
		s->rs = xrealloc(s->rs, ((size_t)s->nrs + 1) * sizeof *s->rs);
		s->rs[s->nrs++] = drs_new(rs, object_created(rs));
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "deployment: listing replica sets: %s",
		    sqlite3_errmsg(s->st->db));
	/* The query's order is the text of the timestamps; kube's is the time. */
	if (s->nrs > 1)
		qsort(s->rs, (size_t)s->nrs, sizeof *s->rs, by_created_qsort);
	return 0;
}

/* kube's FindNewReplicaSet: the oldest whose template is the Deployment's. */
static struct drs *
find_new(struct dsync *s)
{
	for (int i = 0; i < s->nrs; i++) {
		if (deployment_templates_equal(json_path(s->rs[i]->obj, "spec.template"),
		    json_path(s->d, "spec.template")))
			return s->rs[i];
	}
	return NULL;
}

static int
deployment_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct deployment_state *st = c->state;
	struct dsync s;
	struct selector *sel = NULL;
	struct drs **old;
	const cJSON **objs;
	char *sel_error = NULL;
	cJSON *d = NULL;
	long long new_revision, rollback_to;
	int caught_up, rc = -1, nold;

	memset(&s, 0, sizeof s);
	s.c = c;
	s.st = st;
	s.out = out;
	s.now = now;
	time_format_rfc3339((time_t)now, s.stamp);
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = deployments_resource();
	if (controller_key_split(key, &s.namespace, &s.name) != 0)
		return error_set(error, "deployment: %s is not a namespace/name key", key);
	if (deployment_read(st, s.namespace, s.name, &s.uid, &d, error) != 0)
		goto out;
	if (d == NULL) {
		out->forget_expectations = 1;
		rc = 0;
		goto out;
	}
	s.d = d;
	s.work = cJSON_Duplicate(d, 1);
	out->owner_uid = xstrdup(s.uid);
	out->owner = cJSON_Duplicate(d, 1);
	if ((caught_up = controller_caught_up(c, key, s.uid, out, error)) <= 0) {
		rc = caught_up;
		goto out;
	}
	sel = selector_from_json(json_path(d, "spec.selector"), &sel_error);
	if (sel == NULL) {
		log_error("deployment %s: invalid selector: %s", key, sel_error);
		free(sel_error);
		rc = 0;
		goto out;
	}
	if (selector_matches_everything(sel)) {
		sync_result_add_event(out, EVENT_TYPE_WARNING, "SelectingAll",
		    xstrdup("This deployment is selecting all pods. A non-empty selector is "
		    "required."));
		if (json_int(d, "status.observedGeneration", 0) <
		    json_int(d, "metadata.generation", 0)) {
			json_set(work_status(&s), "observedGeneration", cJSON_CreateNumber(
			    (double)json_int(d, "metadata.generation", 0)));
			status_write(&s, cJSON_Duplicate(work_status(&s), 1), 0);
		}
		rc = 0;
		goto out;
	}
	if (claim(&s, sel, error) != 0)
		goto out;
	s.new_rs = find_new(&s);
	nold = old_rs(&s, &old, 0);
	objs = xcalloc((size_t)nold + 1, sizeof *objs);
	for (int i = 0; i < nold; i++)
		objs[i] = old[i]->obj;
	new_revision = deployment_max_revision(objs, nold) + 1;
	free(objs);
	free(old);
	log_v(4, "deployment sync key=%s replica_sets=%d new=%s revision=%lld", key, s.nrs,
	    s.new_rs != NULL ? rs_name(s.new_rs) : "none", new_revision);

	if (json_is_set(d, "metadata.deletionTimestamp")) {
		if (s.new_rs != NULL)
			sync_existing_new(&s, new_revision);
		sync_status(&s);
		rc = 0;
		goto out;
	}
	paused_conditions(&s);
	if (s.new_rs != NULL)
		sync_existing_new(&s, new_revision);
	if (cJSON_IsTrue(json_path(d, "spec.paused"))) {
		scale(&s);
		if (!rollback_to_of(d, &rollback_to))
			cleanup(&s);
		sync_status(&s);
		rc = 0;
		goto out;
	}
	if (rollback_to_of(d, &rollback_to)) {
		if (s.new_rs == NULL && (rc = create_new(&s, new_revision, error)) != 0) {
			if (rc > 0) {
				rc = 0;
				sync_status(&s);
			}
			goto out;
		}
		rollback(&s, rollback_to);
		rc = 0;
		goto out;
	}
	if (scaling_event(&s)) {
		scale(&s);
		sync_status(&s);
		rc = 0;
		goto out;
	}
	rc = 0;
	if (strcmp(json_string(d, "spec.strategy.type"), "Recreate") == 0)
		rollout_recreate(&s, new_revision, error, &rc);
	else
		rollout_rolling(&s, new_revision, error, &rc);
out:
	for (int i = 0; i < s.nrs; i++)
		drs_free(s.rs[i]);
	free(s.rs);
	cJSON_Delete(s.create_failure);
	cJSON_Delete(s.work);
	cJSON_Delete(d);
	selector_free(sel);
	free(s.uid);
	free(s.namespace);
	return rc;
}

/* --- event handlers -------------------------------------------------------------------- */

/* The key of the Deployment ref names in namespace, if the cache has it with ref's uid
 * (malloc'd), or NULL. */
static char *
resolve_controller_ref(struct deployment_state *st, const char *namespace, const cJSON *ref)
{
	sqlite3_stmt *stmt;
	char *key = NULL;

	if (ref == NULL || strcmp(json_string(ref, "kind"), DEPLOYMENT_KIND) != 0)
		return NULL;
	stmt = state_stmt(st, STMT_BY_UID);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, json_string(ref, "name"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 3, json_string(ref, "uid"), -1, SQLITE_TRANSIENT);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		key = xasprintf("%s/%s", namespace, sqlite3_column_text(stmt, 0));
	sqlite3_reset(stmt);
	return key;
}

static void
enqueue_ref(struct deployment_state *st, const char *namespace, const cJSON *ref,
    const struct controller_queue *q)
{
	char *key = resolve_controller_ref(st, namespace, ref);

	if (key != NULL)
		q->add(key, q->arg);
	free(key);
}

/* An orphan ReplicaSet: every Deployment of its namespace whose selector (not empty)
 * matches its labels (kube's GetDeploymentsForReplicaSet). */
static void
enqueue_matching(struct deployment_state *st, const char *namespace, const cJSON *labels,
    const struct controller_queue *q)
{
	controller_enqueue_matching(st->stmt[STMT_IN_NAMESPACE], namespace, labels, q);
}

static void
rs_event(struct deployment_state *st, const struct informer_event *ev,
    const struct controller_queue *q)
{
	const char *namespace = json_string(ev->object, "metadata.namespace");
	const cJSON *ref = controllerref_of(ev->object), *old_ref;
	cJSON *old;
	int ref_changed;

	if (ev->type == INFORMER_DELETED || json_is_set(ev->object, "metadata.deletionTimestamp")) {
		enqueue_ref(st, namespace, ref, q);
		return;
	}
	old = ev->type == INFORMER_UPDATED && ev->old_body != NULL ?
	    cJSON_Parse(ev->old_body) : NULL;
	if (old == NULL) {
		/* Added (or an update whose old body is unknown). */
		if (ref != NULL)
			enqueue_ref(st, namespace, ref, q);
		else
			enqueue_matching(st, namespace, json_path(ev->object, "metadata.labels"), q);
		return;
	}
	if (strcmp(json_string(old, "metadata.resourceVersion"),
	    json_string(ev->object, "metadata.resourceVersion")) == 0) {
		cJSON_Delete(old);
		return;
	}
	old_ref = controllerref_of(old);
	ref_changed = old_ref == NULL || ref == NULL ? old_ref != ref :
	    !cJSON_Compare(old_ref, ref, 1);
	if (ref_changed && old_ref != NULL)
		enqueue_ref(st, namespace, old_ref, q);
	if (ref != NULL)
		enqueue_ref(st, namespace, ref, q);
	else if (ref_changed || !cJSON_Compare(json_path(old, "metadata.labels"),
	    json_path(ev->object, "metadata.labels"), 1))
		enqueue_matching(st, namespace, json_path(ev->object, "metadata.labels"), q);
	cJSON_Delete(old);
}

/* A pod deleted: its Deployment, if it is a Recreate one whose pods are all gone now
 * (it waits for that to scale up the new ReplicaSet). */
static void
pod_deleted(struct deployment_state *st, const cJSON *pod, const struct controller_queue *q)
{
	const char *namespace = json_string(pod, "metadata.namespace");
	const cJSON *ref = controllerref_of(pod);
	sqlite3_stmt *stmt;
	char *key = NULL, *uid = NULL;
	int pods = -1;

	if (ref == NULL || strcmp(json_string(ref, "kind"), REPLICASET_KIND) != 0)
		return;
	stmt = state_stmt(st, STMT_RS_CONTROLLER);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, json_string(ref, "name"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 3, json_string(ref, "uid"), -1, SQLITE_TRANSIENT);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		key = xasprintf("%s/%s", namespace, sqlite3_column_text(stmt, 0));
		uid = xstrdup((const char *)sqlite3_column_text(stmt, 1));
	}
	sqlite3_reset(stmt);
	if (key == NULL)
		return;
	stmt = state_stmt(st, STMT_PODS_OF_DEPLOYMENT);
	sqlite3_bind_text(stmt, 1, uid, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		pods = sqlite3_column_int(stmt, 0);
	sqlite3_reset(stmt);
	if (pods == 0)
		q->add(key, q->arg);
	free(uid);
	free(key);
}

static void
deployment_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct deployment_state *st = c->state;
	char *key, *error = NULL;

	(void)now;
	if (strcmp(ev->resource->name, "deployments") == 0) {
		key = xasprintf("%s/%s", json_string(ev->object, "metadata.namespace"),
		    json_string(ev->object, "metadata.name"));
		if (ev->type == INFORMER_DELETED &&
		    consistency_forget(c->writes, key, &error) != 0) {
			log_error("deployment: forgetting the writes of %s: %s", key, error);
			free(error);
		}
		q->add(key, q->arg);
		free(key);
	} else if (strcmp(ev->resource->name, "replicasets") == 0) {
		rs_event(st, ev, q);
	} else if (strcmp(ev->resource->name, "pods") == 0 && ev->type == INFORMER_DELETED) {
		pod_deleted(st, ev->object, q);
	}
}

static int
deployment_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct deployment_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "deployment", cb, arg, error);
}

static int
deployment_init(struct controller *c, char **error)
{
	struct deployment_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->db = store_db(c->store);
	return store_prepare_statements(st->db, deployment_sql, STMT_COUNT, st->stmt,
	    "deployment controller", error);
}

static void
deployment_fini(struct controller *c)
{
	struct deployment_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const char *const deployment_resources[] = { "pods", "replicasets", "deployments",
	NULL };

const struct controller_type deployment_controller_type = {
	.name = "deployment",
	.resources = deployment_resources,
	.default_workers = 5,
	.workers_flag = "concurrent-deployment-syncs",
	.workers_help = "Deployments synced at once",
	.event_component = "deployment-controller",
	.client_name = "deployment-controller",
	.recovery = NULL,
	.init = deployment_init,
	.fini = deployment_fini,
	.handle_event = deployment_handle_event,
	.list_keys = deployment_list_keys,
	.sync = deployment_sync,
};
