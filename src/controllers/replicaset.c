/*
 * replicaset.c - the ReplicaSet controller: keep spec.replicas active pods per ReplicaSet.
 *
 * It follows kube-controller-manager's ReplicaSet controller rule for rule, so either can
 * run a cluster. A sync of one ReplicaSet reads the cache and decides, writing nothing:
 *
 * 1. The ReplicaSet is gone: drop its expectations. Its cache has not caught up with the
 *    controller's own last writes (consistency.c): wait, retry with backoff.
 * 2. Claim (kube's ControllerRefManager): of the namespace's active pods (not Succeeded or
 *    Failed, not being deleted), the ones it controls and its selector matches are its;
 *    orphans the selector matches are adopted (a patch adding it as controller owner,
 *    guarded by the pod's uid, after a live check that the ReplicaSet is not being
 *    deleted); pods it controls that no longer match are released. A ReplicaSet being
 *    deleted adopts and releases nothing. Pods controlled by another owner are left alone.
 * 3. Manage, only when its expectations are satisfied and it is not being deleted: the
 *    difference between its pods and spec.replicas, at most 500 per sync, is created from
 *    the template (the executor sends them in slow-start batches) or deleted, in the order
 *    of the view replicaset_pod_rank (kube's eight rules, in SQL: rank_claimed).
 * 4. Status: replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (ready for
 *    minReadySeconds) and observedGeneration from the claimed pods, written only when they
 *    differ from what is stored, with the ReplicaFailure condition set if the creations or
 *    deletions failed and removed when they succeed. A ReplicaSet with all pods ready but
 *    not all available is synced again after minReadySeconds.
 *
 * The reading is SQL: the replicaset_diff view (schema/002-controllers.sql) gives desired
 * and actual for the ReplicaSet; one query lists the namespace's active pods with what
 * the claim and the status need (the selector compiled to SQL by selector.c); the view
 * replicaset_pod_rank orders the pods a scale-down deletes.
 *
 * The informer handlers map pod events to the ReplicaSet that controls the pod (or, for
 * an orphan, to every ReplicaSet in its namespace whose selector matches it) and lower
 * expectations: a new pod with a controller reference is a creation observed, a pod that
 * is deleted or gets a deletionTimestamp is a deletion observed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "controllerref.h"
#include "controllers/replicaset.h"
#include "expectations.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "selector.h"
#include "timeutil.h"
#include "util.h"

#define DELETION_COST_ANNOTATION "controller.kubernetes.io/pod-deletion-cost"

enum {
	STMT_GET_RS,
	STMT_DIFF,
	STMT_RS_BY_UID,
	STMT_RS_IN_NAMESPACE,
	STMT_RS_KEYS,
	STMT_RS_MIN_READY,
	STMT_COUNT
};

/*
 * kube runs ReplicationControllers through its ReplicaSet controller, converting each to a
 * ReplicaSet (its map selector a LabelSelector's matchLabels). So does this file: one
 * controller, two flavours, which differ only in what they name and in two features kube
 * turns off for ReplicationControllers.
 */
struct replicaset_flavor {
	const char *controller;		/* in messages: "replicaset" */
	const char *resource;		/* "replicasets" */
	const char *kind;		/* "ReplicaSet": what a pod's controller reference names */
	const char *table;		/* "cache_replicasets" (the selector column holds a
					   LabelSelector for both: resource.c converts) */
	const char *diff_view;		/* "replicaset_diff" */
	int map_selector;		/* spec.selector is a map of labels */
	int terminating_replicas;	/* status.terminatingReplicas is written */
	int consistency;		/* waits for the cache to show its own last writes */
};

static const struct replicaset_flavor replicaset_flavor = {
	"replicaset", "replicasets", "ReplicaSet", "cache_replicasets", "replicaset_diff",
	0, 1, 1,
};
/* kube's ReplicationController: no terminatingReplicas in its API, no stale-cache wait. */
static const struct replicaset_flavor replicationcontroller_flavor = {
	"replicationcontroller", "replicationcontrollers", "ReplicationController",
	"cache_replicationcontrollers", "replicationcontroller_diff", 1, 0, 0,
};

/* The statements, with the flavour's table as {table} and its diff view as {diff}. */
static const char *const replicaset_sql[STMT_COUNT] = {
	[STMT_GET_RS] = "SELECT uid, body FROM {table} WHERE namespace = ?1 AND name = ?2",
	[STMT_DIFF] = "SELECT desired, actual FROM {diff} WHERE uid = ?1",
	[STMT_RS_BY_UID] = "SELECT name FROM {table}"
	    " WHERE namespace = ?1 AND name = ?2 AND uid = ?3",
	[STMT_RS_IN_NAMESPACE] = "SELECT name, selector FROM {table}"
	    " WHERE namespace = ?1 ORDER BY name",
	[STMT_RS_KEYS] = "SELECT namespace, name FROM {table} ORDER BY namespace, name",
	[STMT_RS_MIN_READY] = "SELECT min_ready_seconds FROM {table}"
	    " WHERE namespace = ?1 AND name = ?2",
};

struct replicaset_state {
	const struct replicaset_flavor *flavor;
	sqlite3 *db;
	sqlite3_stmt *stmt[STMT_COUNT];
	sqlite3_stmt *rank;	/* replicaset_pod_rank, focused (rank_claimed) */
	/* The pod listing's statements by their SQL, which depends on the selector's shape
	 * only (its values are bound): ReplicaSets alike share one, prepared once. */
	struct {
		char *sql;
		sqlite3_stmt *stmt;
	} listing[8];
	int next_listing;	/* the entry to replace next */
	struct buf listing_sql;	/* the listing's SQL being built, kept for reuse */
};

static const struct resource *
pods_resource(void)
{
	return resource_find("pods");
}

static const struct resource *
owners_resource(const struct replicaset_state *st)
{
	return resource_find(st->flavor->resource);
}

/* --- availability --------------------------------------------------------------------- */

double
replicaset_next_availability_check(const struct pod_readiness *pods, int n, long long min_ready,
    double now)
{
	double min = 0;

	for (int i = 0; i < n; i++) {
		double next;

		if (!pods[i].ready || min_ready <= 0 || pods[i].ready_since == 0)
			continue;
		next = pods[i].ready_since + (double)min_ready - now;
		if (next > 0 && (min == 0 || next < min))
			min = next;
	}
	return min;
}

/* --- the pod template and the status --------------------------------------------------- */

/* Duplicates member name of from into to, if from has it. */
static void
copy_member(cJSON *to, const cJSON *from, const char *name)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(from, name);

	if (m != NULL && !cJSON_IsNull(m))
		cJSON_AddItemToObject(to, name, cJSON_Duplicate(m, 1));
}

cJSON *
replicaset_pod_from_template(const cJSON *rs)
{
	return replicaset_pod_from_template_of(resource_find("replicasets"), rs);
}

cJSON *
replicaset_pod_from_template_of(const struct resource *owner, const cJSON *rs)
{
	const cJSON *template = json_path(rs, "spec.template");
	const cJSON *tmeta = cJSON_GetObjectItemCaseSensitive(template, "metadata");
	const cJSON *name = json_path(rs, "metadata.name");
	cJSON *pod = cJSON_CreateObject(), *meta, *refs, *spec;
	char *prefix;

	cJSON_AddStringToObject(pod, "apiVersion", "v1");
	cJSON_AddStringToObject(pod, "kind", "Pod");
	meta = cJSON_AddObjectToObject(pod, "metadata");
	prefix = xasprintf("%s-", cJSON_IsString(name) ? name->valuestring : "");
	/* kube drops the dash when "<name>-" is not a valid name prefix; for a valid
	 * ReplicaSet name that is only when it has the maximum length, 253. */
	if (strlen(prefix) > 253)
		prefix[strlen(prefix) - 1] = '\0';
	cJSON_AddStringToObject(meta, "generateName", prefix);
	free(prefix);
	copy_member(meta, json_path(rs, "metadata"), "namespace");
	copy_member(meta, tmeta, "labels");
	copy_member(meta, tmeta, "annotations");
	copy_member(meta, tmeta, "finalizers");
	refs = cJSON_AddArrayToObject(meta, "ownerReferences");
	cJSON_AddItemToArray(refs, controllerref_new(owner, rs));
	spec = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(template, "spec"), 1);
	cJSON_AddItemToObject(pod, "spec", spec != NULL ? spec : cJSON_CreateObject());
	return pod;
}

cJSON *
replicaset_status_new(const cJSON *rs, const struct replicaset_counts *counts)
{
	const cJSON *old = cJSON_GetObjectItemCaseSensitive(rs, "status");
	const cJSON *conditions = cJSON_GetObjectItemCaseSensitive(old, "conditions");
	cJSON *status = cJSON_CreateObject();

	cJSON_AddNumberToObject(status, "replicas", counts->replicas);
	cJSON_AddNumberToObject(status, "fullyLabeledReplicas", counts->fully_labeled);
	cJSON_AddNumberToObject(status, "readyReplicas", counts->ready);
	cJSON_AddNumberToObject(status, "availableReplicas", counts->available);
	cJSON_AddNumberToObject(status, "terminatingReplicas", counts->terminating);
	cJSON_AddNumberToObject(status, "observedGeneration",
	    (double)json_int(cJSON_GetObjectItemCaseSensitive(rs, "metadata"), "generation", 0));
	if (cJSON_IsArray(conditions) && cJSON_GetArraySize(conditions) > 0)
		cJSON_AddItemToObject(status, "conditions", cJSON_Duplicate(conditions, 1));
	return status;
}

int
replicaset_status_changed(const cJSON *rs, const cJSON *status)
{
	static const char *const counts[] = { "replicas", "fullyLabeledReplicas",
	    "readyReplicas", "availableReplicas" };
	const cJSON *old = cJSON_GetObjectItemCaseSensitive(rs, "status");
	const cJSON *oc = cJSON_GetObjectItemCaseSensitive(old, "conditions");
	const cJSON *nc = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	long long generation = json_int(cJSON_GetObjectItemCaseSensitive(rs, "metadata"),
	    "generation", 0);

	const cJSON *ot = cJSON_GetObjectItemCaseSensitive(old, "terminatingReplicas");
	const cJSON *nt = cJSON_GetObjectItemCaseSensitive(status, "terminatingReplicas");

	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		if (json_int(old, counts[i], 0) != json_int(status, counts[i], 0))
			return 1;
	}
	/* Absent and 0 differ: kube writes 0 where there was nothing. */
	if (cJSON_IsNumber(ot) != cJSON_IsNumber(nt) ||
	    (cJSON_IsNumber(ot) && ot->valuedouble != nt->valuedouble))
		return 1;
	if (generation != json_int(old, "observedGeneration", 0))
		return 1;
	if (cJSON_GetArraySize(oc) == 0 && cJSON_GetArraySize(nc) == 0)
		return 0;
	return !cJSON_Compare(oc, nc, 1);
}

/* Returns the index of the ReplicaFailure condition in conditions, or -1. */
static int
failure_condition_index(const cJSON *conditions)
{
	const cJSON *c;
	int i = 0;

	cJSON_ArrayForEach(c, conditions) {
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(c, "type");
		if (cJSON_IsString(type) && strcmp(type->valuestring, "ReplicaFailure") == 0)
			return i;
		i++;
	}
	return -1;
}

int
replicaset_status_set_failure(cJSON *status, int creating, const char *message,
    const char *now)
{
	cJSON *conditions = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	cJSON *c;

	if (failure_condition_index(conditions) >= 0)
		return 0;
	if (!cJSON_IsArray(conditions)) {
		cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
		conditions = cJSON_AddArrayToObject(status, "conditions");
	}
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", "ReplicaFailure");
	cJSON_AddStringToObject(c, "status", "True");
	cJSON_AddStringToObject(c, "lastTransitionTime", now);
	cJSON_AddStringToObject(c, "reason", creating ? "FailedCreate" : "FailedDelete");
	cJSON_AddStringToObject(c, "message", message);
	cJSON_AddItemToArray(conditions, c);
	return 1;
}

int
replicaset_status_clear_failure(cJSON *status)
{
	cJSON *conditions = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	int i = failure_condition_index(conditions);

	if (i < 0)
		return 0;
	cJSON_DeleteItemFromArray(conditions, i);
	if (cJSON_GetArraySize(conditions) == 0)
		cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
	return 1;
}

/* The status update to send when the creations or deletions failed: the object with the
 * ReplicaFailure condition of the first failure added (kube's manageReplicas returns its
 * first error), or NULL when that is the cached status already.
 * failure_context: {"object", "creating", "now", "cached"}, cached being true when the
 * object's status, with its conditions as they are, equals the cached one. */
static cJSON *
status_on_failure(const struct action *a, const char *const *messages, int n)
{
	const cJSON *ctx = a->failure_context;
	cJSON *object = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ctx, "object"), 1);
	const cJSON *now = cJSON_GetObjectItemCaseSensitive(ctx, "now");

	(void)n;
	if (!replicaset_status_set_failure(cJSON_GetObjectItemCaseSensitive(object, "status"),
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ctx, "creating")), messages[0],
	    cJSON_IsString(now) ? now->valuestring : "") &&
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ctx, "cached"))) {
		/* The condition was there and nothing else moved: as kube, no write. */
		cJSON_Delete(object);
		return NULL;
	}
	return object;
}

/* --- statements ------------------------------------------------------------------------ */

static sqlite3_stmt *
state_stmt(struct replicaset_state *st, int i)
{
	return controller_stmt(st->stmt[i]);
}

/* Creates the state of a controller of flavor f. */
static int
replicaset_init_flavor(struct controller *c, const struct replicaset_flavor *f,
    char **error)
{
	struct replicaset_state *st = xcalloc(1, sizeof *st);
	const char *sql[STMT_COUNT];
	const char *const names[] = { "{table}", f->table, "{diff}", f->diff_view, NULL };
	char *what = xasprintf("%s controller", f->controller);
	int rc;

	c->state = st;
	st->flavor = f;
	st->db = store_db(c->store);
	/* Names of constants, never data. */
	for (int i = 0; i < STMT_COUNT; i++)
		sql[i] = text_expand(replicaset_sql[i], names);
	rc = store_prepare_statements(st->db, sql, STMT_COUNT, st->stmt, what, error);
	for (int i = 0; i < STMT_COUNT; i++)
		free((char *)sql[i]);
	if (rc == 0) {
		char *rank = replicaset_rank_sql(st->db, error);

		rc = rank != NULL ? store_prepare_statements(st->db, (const char *const[]){ rank }, 1,
		    &st->rank, what, error) : -1;
		free(rank);
	}
	free(what);
	return rc;
}

static int
replicaset_init(struct controller *c, char **error)
{
	return replicaset_init_flavor(c, &replicaset_flavor, error);
}

static int
replicationcontroller_init(struct controller *c, char **error)
{
	return replicaset_init_flavor(c, &replicationcontroller_flavor, error);
}

static void
replicaset_fini(struct controller *c)
{
	struct replicaset_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	sqlite3_finalize(st->rank);
	for (size_t i = 0; i < sizeof st->listing / sizeof st->listing[0]; i++) {
		sqlite3_finalize(st->listing[i].stmt);
		free(st->listing[i].sql);
	}
	buf_free(&st->listing_sql);
	free(st);
	c->state = NULL;
}

/* --- sync ------------------------------------------------------------------------------ */

/* One active pod of the namespace, as the sync sees it. */
struct candidate {
	struct pod_readiness readiness;
	char *uid;
	char *name;
	char *phase;
	char *node;		/* spec.nodeName, "" when unscheduled */
	int controlled;		/* its controller owner is this ReplicaSet */
	int matches;		/* the selector matches its labels */
	int fully_labeled;	/* it has every label of the template */
	int terminating;	/* being deleted: counted, never claimed or ranked */
	int available;
};

struct candidates {
	struct candidate *v;
	int n;
};

static void
candidates_clear(struct candidates *cs)
{
	for (int i = 0; i < cs->n; i++) {
		free(cs->v[i].uid);
		free(cs->v[i].name);
		free(cs->v[i].phase);
		free(cs->v[i].node);
	}
	free(cs->v);
	cs->v = NULL;
	cs->n = 0;
}

/* Returns the prepared pod listing for the SQL in sql, from the cache or prepared now;
 * NULL with *error set on failure. */
static sqlite3_stmt *
listing_stmt(struct replicaset_state *st, struct buf *sql, char **error)
{
	const int n = (int)(sizeof st->listing / sizeof st->listing[0]);
	sqlite3_stmt *stmt = NULL;
	int i;

	for (i = 0; i < n; i++) {
		if (st->listing[i].sql != NULL && strcmp(st->listing[i].sql, sql->data) == 0)
			return st->listing[i].stmt;
	}
	if (sqlite3_prepare_v3(st->db, sql->data, -1, SQLITE_PREPARE_PERSISTENT, &stmt,
	    NULL) != SQLITE_OK) {
		error_set(error, "%s: listing pods: %s", st->flavor->controller,
		    sqlite3_errmsg(st->db));
		sqlite3_finalize(stmt);
		return NULL;
	}
	i = st->next_listing;
	st->next_listing = (i + 1) % n;
	sqlite3_finalize(st->listing[i].stmt);
	free(st->listing[i].sql);
	st->listing[i].sql = xstrdup(sql->data);
	st->listing[i].stmt = stmt;
	return stmt;
}

/*
 * Lists the namespace's live pods (not Succeeded or Failed; those being deleted flagged
 * terminating) that the ReplicaSet controls or that have no controller (kube's
 * FilterPodsByOwner with orphans: a pod is the ReplicaSet's when its controller reference
 * names it by kind, name and uid, not by the uid alone), with what claiming, counting and
 * the status need.
 */
static int
candidates_load(struct replicaset_state *st, const char *namespace, const char *rs_name,
    const char *rs_uid, const struct selector *sel, const char *template_labels, int min_ready, double now,
    struct candidates *out, char **error)
{
	struct buf *sql = &st->listing_sql;
	sqlite3_stmt *stmt = NULL;
	int rc, first;

	buf_reset(sql);
	buf_append_str(sql,
	    "WITH live AS ("
	    "  SELECT p.id, p.uid, p.name, p.phase, p.node_name, p.ready, p.ready_since,"
	    "         p.deletion_timestamp IS NOT NULL AS terminating,"
	    "         p.controller_uid"
	    "    FROM cache_pods p"
	    "   WHERE p.namespace = ?1 AND p.controller_uid = ?2"
	    "     AND EXISTS (SELECT 1 FROM object_owners c WHERE c.object_id = p.id"
	    "                  AND c.controller = 1 AND c.kind = ?5 AND c.name = ?4)"
	    "     AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')"
	    "  UNION ALL"
	    "  SELECT p.id, p.uid, p.name, p.phase, p.node_name, p.ready, p.ready_since,"
	    "         p.deletion_timestamp IS NOT NULL AS terminating,"
	    "         p.controller_uid"
	    "    FROM cache_pods p"
	    "   WHERE p.namespace = ?1 AND p.controller_uid IS NULL"
	    "     AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed'))"
	    " SELECT a.uid, a.name, a.phase,"
	    "        coalesce(a.ready, 0), a.ready_since,"
	    "        a.controller_uid IS NOT NULL AND a.controller_uid = ?2,"
	    "        coalesce(a.node_name, ''),"
	    "        NOT EXISTS (SELECT 1 FROM json_each(?3) t WHERE NOT EXISTS ("
	    "            SELECT 1 FROM object_labels l WHERE l.object_id = a.id AND l.key = t.key"
	    "               AND l.value = t.value)),"
	    "        a.terminating, "
	    "        ");
	selector_to_sql(sel, "a.id", sql);
	buf_append_str(sql,
	    "   FROM live a"
	    /* Unary + keeps the planner from reading the namespace's pods in name order
	     * to skip the sort: then it uses (namespace, controller_uid) and sorts the few. */
	    "  ORDER BY +a.name");
	if ((stmt = listing_stmt(st, sql, error)) == NULL)
		return -1;
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, rs_uid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 3, template_labels, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 4, rs_name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 5, st->flavor->kind, -1, SQLITE_STATIC);
	/* The selector's parameters come after ?5, the highest numbered one before them. */
	first = 6;
	if (selector_bind(sel, stmt, first, error) < 0) {
		sqlite3_clear_bindings(stmt);
		return -1;
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		struct candidate *c;

		out->v = xrealloc(out->v, (size_t)(out->n + 1) * sizeof *out->v);
		c = &out->v[out->n++];
		memset(c, 0, sizeof *c);
		c->uid = controller_column_strdup(stmt, 0);
		c->name = controller_column_strdup(stmt, 1);
		c->phase = controller_column_strdup(stmt, 2);
		c->readiness.ready = sqlite3_column_int(stmt, 3);
		c->readiness.ready_since = controller_column_time(stmt, 4);
		c->controlled = sqlite3_column_int(stmt, 5);
		c->node = controller_column_strdup(stmt, 6);
		c->fully_labeled = sqlite3_column_int(stmt, 7);
		c->terminating = sqlite3_column_int(stmt, 8);
		c->matches = sqlite3_column_int(stmt, 9);
		/* Available: ready, and for at least minReadySeconds when there is one
		 * (kube's IsPodAvailable: lastTransitionTime + minReadySeconds <= now). */
		c->available = c->readiness.ready && (min_ready == 0 ||
		    (c->readiness.ready_since != 0 && c->readiness.ready_since + min_ready <= now));
	}
	if (rc != SQLITE_DONE)
		error_set(error, "%s: listing pods: %s", st->flavor->controller,
		    sqlite3_errmsg(st->db));
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Fills an action on a pod of namespace. */
static void
pod_action(struct action *a, enum action_type type, const char *verb, const char *namespace,
    const struct candidate *c, cJSON *body, char *reason)
{
	a->type = type;
	a->verb = verb;
	a->resource = pods_resource();
	a->namespace = xstrdup(namespace);
	a->name = c != NULL ? xstrdup(c->name) : NULL;
	a->uid = c != NULL ? xstrdup(c->uid) : NULL;
	a->body = body;
	a->reason = reason;
	/* kube's pod control: its event reasons and messages, and the manage error. */
	if (type == ACTION_CREATE) {
		a->done_reason = "SuccessfulCreate";
		a->done_prefix = "Created pod: ";
		a->failed_reason = "FailedCreate";
		a->failed_prefix = "Error creating: ";
	} else if (type == ACTION_DELETE) {
		a->done_reason = "SuccessfulDelete";
		a->done_prefix = "Deleted pod: ";
		a->failed_reason = "FailedDelete";
		a->failed_prefix = "Error deleting: ";
		a->error_prefix = "unable to delete pods: ";
	}
}

/* Reads desired and actual for the ReplicaSet from the replicaset_diff view. */
static int
diff_read(struct replicaset_state *st, const char *uid, long long *desired,
    long long *actual, char **error)
{
	sqlite3_stmt *stmt = state_stmt(st, STMT_DIFF);
	int rc;

	sqlite3_bind_text(stmt, 1, uid, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*desired = sqlite3_column_int64(stmt, 0);
		*actual = sqlite3_column_int64(stmt, 1);
		rc = SQLITE_DONE;
	} else if (rc == SQLITE_DONE) {
		*desired = *actual = 0;
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "%s: diff: %s", st->flavor->controller,
		    sqlite3_errmsg(st->db));
	return 0;
}

/*
 * The scale-down order is SQL: the view replicaset_pod_rank (schema/011-replicaset-rank.sql)
 * ranks an owner's pods by kube's rules, and `sqlite3` users query the same view. The sync
 * runs the view's own text, read back from sqlite_schema, with two lines replaced: the
 * clock (the view reads SQLite's 'now'; the sync binds its own, which is the recorded
 * time in a replay) and the focus (every owner in the view; the one being synced here).
 * The head is checked word for word, so that an edited view fails at startup, not later.
 */
#define RANK_VIEW_HEAD \
	"CREATE VIEW replicaset_pod_rank AS\n" \
	"WITH\n" \
	"clock(now) AS (SELECT (julianday('now') - 2440587.5) * 86400.0),\n" \
	"focus(owner_uid) AS (SELECT uid FROM cache_replicasets UNION ALL" \
	" SELECT uid FROM cache_replicationcontrollers),\n"
#define RANK_SYNC_HEAD \
	"WITH\n" \
	"clock(now) AS (SELECT ?1),\n" \
	"focus(owner_uid) AS (SELECT ?2),\n"
/* The view's columns the sync reads. */
#define RANK_COLUMN_POD_UID 5
#define RANK_COLUMN_RANK 6

char *
replicaset_rank_sql(sqlite3 *db, char **error)
{
	sqlite3_stmt *stmt = NULL;
	const char *text;
	char *sql = NULL;
	size_t head = strlen(RANK_VIEW_HEAD);

	if (sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_schema"
	    " WHERE type = 'view' AND name = 'replicaset_pod_rank'", -1, &stmt, NULL) != SQLITE_OK) {
		error_set(error, "reading the view replicaset_pod_rank: %s", sqlite3_errmsg(db));
		sqlite3_finalize(stmt);
		return NULL;
	}
	if (sqlite3_step(stmt) != SQLITE_ROW ||
	    (text = (const char *)sqlite3_column_text(stmt, 0)) == NULL)
		error_set(error, "the cache has no view replicaset_pod_rank");
	else if (strncmp(text, RANK_VIEW_HEAD, head) != 0)
		error_set(error, "the view replicaset_pod_rank does not begin as this sqlkcm "
		    "wrote it (its clock and focus lines were changed)");
	else
		sql = xasprintf("%s%s", RANK_SYNC_HEAD, text + head);
	sqlite3_finalize(stmt);
	return sql;
}

struct claimed_uid {
	const char *uid;
	int index;		/* into the candidates */
	long long rank;		/* the view's; 0: not in it */
};

static int
claimed_uid_cmp(const void *a, const void *b)
{
	return strcmp(((const struct claimed_uid *)a)->uid, ((const struct claimed_uid *)b)->uid);
}

/* By rank, the pods the view does not rank (0) last, in the order they came. */
static int
claimed_rank_cmp(const void *a, const void *b)
{
	const struct claimed_uid *x = a, *y = b;

	if ((x->rank == 0) != (y->rank == 0))
		return x->rank == 0 ? 1 : -1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->index - y->index;
}

/*
 * Puts in order[] the n claimed candidates (indices into cs) in the order
 * replicaset_pod_rank gives at now. The view claims as the cache shows it and the sync's
 * claim is the same rule, so both name the same pods; should one ever be missing from the
 * view, it goes last and the log says so, rather than not at all.
 */
static int
rank_claimed(struct replicaset_state *st, const char *rs_uid, const struct candidates *cs,
    const int *claimed, int n, double now, int *order, char **error)
{
	struct claimed_uid *byuid = xmalloc((size_t)n * sizeof *byuid);
	sqlite3_stmt *stmt = controller_stmt(st->rank);
	int rc;

	for (int i = 0; i < n; i++) {
		byuid[i].uid = cs->v[claimed[i]].uid;
		byuid[i].index = claimed[i];
		byuid[i].rank = 0;
	}
	qsort(byuid, (size_t)n, sizeof *byuid, claimed_uid_cmp);
	sqlite3_bind_double(stmt, 1, now);
	sqlite3_bind_text(stmt, 2, rs_uid, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		struct claimed_uid key, *c;

		key.uid = (const char *)sqlite3_column_text(stmt, RANK_COLUMN_POD_UID);
		if (key.uid == NULL)
			continue;
		c = bsearch(&key, byuid, (size_t)n, sizeof *byuid, claimed_uid_cmp);
		if (c != NULL)
			c->rank = sqlite3_column_int64(stmt, RANK_COLUMN_RANK);
	}
	if (rc != SQLITE_DONE)
		error_set(error, "%s: ranking pods: %s", st->flavor->controller,
		    sqlite3_errmsg(st->db));
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	qsort(byuid, (size_t)n, sizeof *byuid, claimed_rank_cmp);
	for (int i = 0; i < n; i++) {
		if (byuid[i].rank == 0 && rc == SQLITE_DONE)
			log_warning("%s: pod %s is claimed but not in replicaset_pod_rank; it goes "
			    "last", st->flavor->controller, cs->v[byuid[i].index].name);
		order[i] = byuid[i].index;
	}
	free(byuid);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Adds the creations or deletions that bring the claimed pods to spec.replicas; -1 when
 * the pods to delete cannot be ranked. */
static int
manage(struct replicaset_state *st, struct sync_result *out, const cJSON *rs,
    const char *namespace, const char *rs_uid,
    struct candidates *cs, const int *claimed, int nclaimed, long long replicas, double now,
    char **error)
{
	long long diff = nclaimed - replicas;
	int *order;
	cJSON *pod;
	int n;

	if (diff < 0) {
		n = (int)(-diff < REPLICASET_BURST_REPLICAS ? -diff : REPLICASET_BURST_REPLICAS);
		out->creating = 1;
		/* Every pod is made from the same template: the first creation owns the
		 * body and the others borrow it (up to 500 copies otherwise). */
		pod = replicaset_pod_from_template_of(owners_resource(st), rs);
		for (int i = 0; i < n; i++) {
			struct action *a = action_append(&out->manage, &out->nmanage);
			pod_action(a, ACTION_CREATE, "create", namespace, NULL, pod,
			    xasprintf("%lld of %lld replicas", (long long)nclaimed + i + 1,
			    replicas));
			a->body_borrowed = i > 0;
		}
		return 0;
	}
	if (diff == 0)
		return 0;
	n = (int)(diff < REPLICASET_BURST_REPLICAS ? diff : REPLICASET_BURST_REPLICAS);
	order = xmalloc((size_t)nclaimed * sizeof *order);
	if (n < nclaimed) {
		if (rank_claimed(st, rs_uid, cs, claimed, nclaimed, now, order, error) != 0) {
			free(order);
			return -1;
		}
	} else {
		/* All of them go: no ranking needed (kube keeps their order then). */
		memcpy(order, claimed, (size_t)nclaimed * sizeof *order);
	}
	for (int i = 0; i < n; i++) {
		const struct candidate *c = &cs->v[order[i]];
		struct action *a = action_append(&out->manage, &out->nmanage);
		pod_action(a, ACTION_DELETE, "delete", namespace, c, NULL,
		    xasprintf("ranked %d of %d to delete; %d replicas over %lld", i + 1,
		    nclaimed, (int)diff, replicas));
	}
	free(order);
	return 0;
}


/* Adds the status update, if the status changes, or for the case the creations or
 * deletions fail (the ReplicaFailure condition). */
static void
status_action(const struct replicaset_state *st, struct sync_result *out, const cJSON *rs,
    const char *namespace, const char *name, const struct replicaset_counts *counts,
    double now)
{
	cJSON *status = replicaset_status_new(rs, counts);
	cJSON *object = NULL, *ctx = NULL, *failed_status = NULL;
	int changed;
	struct action *a;
	char stamp[TIME_RFC3339_SIZE];

	if (!st->flavor->terminating_replicas)
		cJSON_DeleteItemFromObjectCaseSensitive(status, "terminatingReplicas");
	/* Should the creations or deletions fail, a ReplicaFailure condition already
	 * there stays as it is (kube refreshes neither its reason nor its message): that
	 * status starts from the cached conditions. */
	if (out->nmanage > 0)
		failed_status = cJSON_Duplicate(status, 1);
	/* Manage succeeds unless told otherwise: no failure condition then. */
	replicaset_status_clear_failure(status);
	changed = replicaset_status_changed(rs, status);
	if (changed) {
		object = cJSON_Duplicate(rs, 1);
		json_set(object, "status", cJSON_Duplicate(status, 1));
	}
	if (failed_status != NULL) {
		/* What to send if the creations or deletions fail. */
		ctx = cJSON_CreateObject();
		cJSON *failed = cJSON_Duplicate(rs, 1);
		json_set(failed, "status", failed_status);
		cJSON_AddItemToObject(ctx, "object", failed);
		cJSON_AddBoolToObject(ctx, "creating", out->creating);
		cJSON_AddBoolToObject(ctx, "cached", !replicaset_status_changed(rs, failed_status));
		time_format_rfc3339((time_t)now, stamp);
		cJSON_AddStringToObject(ctx, "now", stamp);
	}
	cJSON_Delete(status);
	if (object == NULL && ctx == NULL)
		return;
	a = xcalloc(1, sizeof *a);
	a->type = ACTION_UPDATE_STATUS;
	a->verb = "update-status";
	a->resource = owners_resource(st);
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(name);
	a->uid = out->owner_uid != NULL ? xstrdup(out->owner_uid) : NULL;
	a->body = object;
	if (ctx != NULL) {
		a->failure_context = ctx;
		a->body_on_failure = status_on_failure;
	}
	a->reason = xasprintf("replicas=%d fullyLabeled=%d ready=%d available=%d",
	    counts->replicas, counts->fully_labeled, counts->ready, counts->available);
	out->status = a;
}

/* Reads the ReplicaSet namespace/name: its uid and parsed body, both NULL when absent. */
static int
replicaset_read(struct replicaset_state *st, const char *namespace, const char *name,
    char **uid, cJSON **rs, char **error)
{
	sqlite3_stmt *stmt = state_stmt(st, STMT_GET_RS);
	int rc;

	*uid = NULL;
	*rs = NULL;
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*uid = controller_column_strdup(stmt, 0);
		*rs = controller_column_json(stmt, 1);
		rc = SQLITE_DONE;
		if (*rs == NULL) {
			free(*uid);
			*uid = NULL;
			sqlite3_reset(stmt);
			return error_set(error, "%s %s/%s: the cached body is not JSON",
			    st->flavor->controller, namespace, name);
		}
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "%s: %s", st->flavor->controller,
		    sqlite3_errmsg(st->db));
	return 0;
}

/* The owner's selector: a ReplicationController's map of labels reads as a LabelSelector
 * of those matchLabels, as kube converts it. */
static struct selector *
replicaset_selector(const struct replicaset_state *st, const cJSON *spec, char **error)
{
	const cJSON *selector = cJSON_GetObjectItemCaseSensitive(spec, "selector");
	cJSON *wrapped;
	struct selector *sel;

	if (!st->flavor->map_selector)
		return selector_from_json(selector, error);
	wrapped = cJSON_CreateObject();
	if (cJSON_IsObject(selector))
		cJSON_AddItemToObject(wrapped, "matchLabels", cJSON_Duplicate(selector, 1));
	sel = selector_from_json(wrapped, error);
	cJSON_Delete(wrapped);
	return sel;
}

static int
replicaset_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct replicaset_state *st = c->state;
	struct candidates cs = { NULL, 0 };
	struct replicaset_counts counts;
	struct selector *sel = NULL;
	char *namespace = NULL, *uid = NULL, *labels_text = NULL, *sel_error = NULL;
	const char *name;
	cJSON *rs = NULL;
	const cJSON *spec, *labels;
	int *claimed = NULL, nclaimed = 0, satisfied, caught_up, deleting, rc = -1;
	long long replicas, desired = 0, actual = 0, min_ready;

	memset(&counts, 0, sizeof counts);
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = owners_resource(st);
	if (controller_key_split(key, &namespace, &name) != 0)
		return error_set(error, "%s: %s is not a namespace/name key",
		    st->flavor->controller, key);
	if (replicaset_read(st, namespace, name, &uid, &rs, error) != 0)
		goto out;
	if (rs == NULL) {
		/* Deleted: nothing to wait for any more. */
		out->forget_expectations = 1;
		rc = 0;
		goto out;
	}
	out->owner_uid = xstrdup(uid);
	out->owner = cJSON_Duplicate(rs, 1);
	/* kube's ReplicationController does not wait for its own writes (a no-op store). */
	if (st->flavor->consistency &&
	    (caught_up = controller_caught_up(c, key, uid, out, error)) <= 0) {
		rc = caught_up;
		goto out;
	}
	spec = cJSON_GetObjectItemCaseSensitive(rs, "spec");
	replicas = json_int(spec, "replicas", 1);
	min_ready = json_int(spec, "minReadySeconds", 0);
	deleting = json_path(rs, "metadata.deletionTimestamp") != NULL &&
	    !cJSON_IsNull(json_path(rs, "metadata.deletionTimestamp"));
	sel = replicaset_selector(st, spec, &sel_error);
	if (sel == NULL) {
		/* A selector the apiserver let through but we cannot read: nothing to do
		 * until the ReplicaSet changes (kube gives up on it the same way). */
		log_error("%s %s: invalid selector: %s", st->flavor->controller, key,
		    sel_error);
		free(sel_error);
		rc = 0;
		goto out;
	}
	if (expectations_satisfied(c->expectations, key, now, &satisfied, error) != 0)
		goto out;
	labels = json_path(rs, "spec.template.metadata.labels");
	labels_text = cJSON_IsObject(labels) ? cJSON_PrintUnformatted(labels) : xstrdup("{}");
	if (candidates_load(st, namespace, name, uid, sel, labels_text, (int)min_ready, now, &cs,
	    error) != 0)
		goto out;
	if (diff_read(st, uid, &desired, &actual, error) != 0)
		goto out;

	/* Claim (controllerref.c: kube's ControllerRefManager) the active pods; the
	 * terminating ones are never adopted or released, as kube claims only active pods,
	 * and counted if they are ours. */
	claimed = xmalloc(((size_t)cs.n + 1) * sizeof *claimed);
	for (int i = 0; i < cs.n; i++) {
		struct candidate *p = &cs.v[i];
		enum controllerref_claim claim;

		if (p->terminating) {
			counts.terminating += p->controlled && p->matches;
			continue;
		}
		claim = controllerref_decide(p->controlled ? CONTROLLERREF_OURS :
		    CONTROLLERREF_ORPHAN, p->matches, 0, deleting, 0);
		if (claim == CONTROLLERREF_RELEASE)
			controllerref_claim_action(action_append(&out->claims, &out->nclaims),
			    claim, pods_resource(), namespace, p->name, p->uid,
			    controllerref_release_patch(uid, p->uid),
			    xstrdup("the selector no longer matches its labels"));
		if (claim == CONTROLLERREF_ADOPT) {
			controllerref_claim_action(action_append(&out->claims, &out->nclaims),
			    claim, pods_resource(), namespace, p->name, p->uid,
			    controllerref_adopt_patch(owners_resource(st), rs, p->uid),
			    xstrdup("an orphan the selector matches"));
			out->recheck_owner = 1;
		}
		if (claim == CONTROLLERREF_KEEP || claim == CONTROLLERREF_ADOPT)
			claimed[nclaimed++] = i;
	}
	log_v(4, "%s sync key=%s desired=%lld controlled=%lld claimed=%d "
	    "expectations_satisfied=%d deleting=%d", st->flavor->controller, key, desired,
	    actual, nclaimed, satisfied, deleting);

	/* Manage. */
	if (satisfied && !deleting) {
		if (manage(st, out, rs, namespace, uid, &cs, claimed, nclaimed, replicas, now,
		    error) != 0)
			goto out;
	} else if (!satisfied && nclaimed != replicas) {
		long long adds = 0, dels = 0;
		int found;
		expectations_get(c->expectations, key, &found, &adds, &dels, NULL, NULL);
		out->waiting = xasprintf("expecting %lld creations and %lld deletions to be "
		    "observed", adds, dels);
	}

	/* Status, from the claimed pods. */
	for (int i = 0; i < nclaimed; i++) {
		const struct candidate *p = &cs.v[claimed[i]];
		counts.replicas++;
		counts.fully_labeled += p->fully_labeled;
		counts.ready += p->readiness.ready;
		counts.available += p->available;
	}
	status_action(st, out, rs, namespace, name, &counts, now);
	/* Ready but not yet available pods: look again when the first one should be. */
	if (min_ready > 0 && counts.ready != counts.available) {
		struct pod_readiness *pods = xmalloc(((size_t)nclaimed + 1) * sizeof *pods);
		for (int i = 0; i < nclaimed; i++)
			pods[i] = cs.v[claimed[i]].readiness;
		out->requeue_after = replicaset_next_availability_check(pods, nclaimed,
		    min_ready, now);
		if (out->requeue_after <= 0)
			out->requeue_after = (double)min_ready;
		free(pods);
	}
	rc = 0;
out:
	free(claimed);
	candidates_clear(&cs);
	selector_free(sel);
	free(labels_text);
	cJSON_Delete(rs);
	free(uid);
	free(namespace);
	return rc;
}

/* --- event handlers -------------------------------------------------------------------- */

/* Returns the key of the ReplicaSet ref names in namespace if the cache has it with ref's
 * uid (malloc'd), or NULL. */
static char *
resolve_controller_ref(struct replicaset_state *st, const char *namespace, const cJSON *ref)
{
	sqlite3_stmt *stmt;
	char *key = NULL;

	/* The kind decides, not the apiVersion (kube compares only the kind, the name and
	 * the uid). */
	if (strcmp(json_string(ref, "kind"), st->flavor->kind) != 0)
		return NULL;
	stmt = state_stmt(st, STMT_RS_BY_UID);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, json_string(ref, "name"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 3, json_string(ref, "uid"), -1, SQLITE_TRANSIENT);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		key = xasprintf("%s/%s", namespace, sqlite3_column_text(stmt, 0));
	sqlite3_reset(stmt);
	return key;
}

/* Adds every ReplicaSet of namespace whose selector matches labels. */
static void
enqueue_matching(struct replicaset_state *st, const char *namespace, const cJSON *labels,
    const struct controller_queue *q)
{
	controller_enqueue_matching(st->stmt[STMT_RS_IN_NAMESPACE], namespace, labels, q);
}

/* Returns the minReadySeconds of the ReplicaSet key, 0 when unknown. */
static long long
min_ready_seconds(struct replicaset_state *st, const char *key)
{
	char *namespace;
	const char *name;
	long long v = 0;
	sqlite3_stmt *stmt;

	if (controller_key_split(key, &namespace, &name) != 0)
		return 0;
	stmt = state_stmt(st, STMT_RS_MIN_READY);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		v = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	free(namespace);
	return v;
}

/* Logs a failed expectations write: the sync will wait out the timeout at worst. */
static void
observe_failed(const struct controller *c, const char *what, const char *key, char *error)
{
	log_error("%s: recording %s for %s: %s", c->type->name, what, key, error);
	free(error);
}

/* A pod is gone, or being deleted: a deletion observed for its controller. */
static void
pod_deleted(struct controller *c, const cJSON *pod, const struct controller_queue *q)
{
	struct replicaset_state *st = c->state;
	const char *namespace = json_string(json_path(pod, "metadata"), "namespace");
	const char *name = json_string(json_path(pod, "metadata"), "name");
	const cJSON *ref = controllerref_of(pod);
	char *key, *pod_key, *error = NULL;

	if (ref == NULL)
		return;	/* an orphan's deletion changes no ReplicaSet */
	key = resolve_controller_ref(st, namespace, ref);
	if (key == NULL)
		return;
	pod_key = xasprintf("%s/%s", namespace, name);
	if (expectations_deletion_observed(c->expectations, key, pod_key, &error) != 0)
		observe_failed(c, "a deletion", key, error);
	q->add(key, q->arg);
	free(pod_key);
	free(key);
}

/* Returns 1 if the pod's Ready condition is True. */
static int
pod_ready(const cJSON *pod)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_path(pod, "status.conditions")) {
		if (strcmp(json_string(c, "type"), "Ready") == 0)
			return strcmp(json_string(c, "status"), "True") == 0;
	}
	return 0;
}


/* Returns 1 if two controller references are the same in every field. */
static int
same_ref(const cJSON *a, const cJSON *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return cJSON_Compare(a, b, 1);
}

static void
pod_added(struct controller *c, const cJSON *pod, const struct controller_queue *q)
{
	struct replicaset_state *st = c->state;
	const char *namespace = json_string(json_path(pod, "metadata"), "namespace");
	const cJSON *ref = controllerref_of(pod);
	char *key, *error = NULL;

	if (json_is_set(pod, "metadata.deletionTimestamp")) {
		/* Seen for the first time already going: count it as deleted. */
		pod_deleted(c, pod, q);
		return;
	}
	if (ref != NULL) {
		key = resolve_controller_ref(st, namespace, ref);
		if (key == NULL)
			return;
		if (expectations_creation_observed(c->expectations, key, &error) != 0)
			observe_failed(c, "a creation", key, error);
		q->add(key, q->arg);
		free(key);
		return;
	}
	/* An orphan: every ReplicaSet that could adopt it looks at it. */
	enqueue_matching(st, namespace, json_path(pod, "metadata.labels"), q);
}

static void
pod_updated(struct controller *c, const cJSON *old, const cJSON *pod,
    const struct controller_queue *q)
{
	struct replicaset_state *st = c->state;
	const char *namespace = json_string(json_path(pod, "metadata"), "namespace");
	const cJSON *ref = controllerref_of(pod), *old_ref = controllerref_of(old);
	int labels_changed = !cJSON_Compare(json_path(old, "metadata.labels"),
	    json_path(pod, "metadata.labels"), 1);
	int ref_changed = !same_ref(ref, old_ref);
	char *key;

	/* The same resourceVersion: a resync, nothing changed. */
	if (strcmp(json_string(json_path(old, "metadata"), "resourceVersion"),
	    json_string(json_path(pod, "metadata"), "resourceVersion")) == 0)
		return;
	if (json_is_set(pod, "metadata.deletionTimestamp")) {
		/* Graceful deletion started: the pod no longer counts. Its old labels may
		 * have mattered to another ReplicaSet too. */
		pod_deleted(c, pod, q);
		if (labels_changed)
			pod_deleted(c, old, q);
		return;
	}
	if (ref_changed && old_ref != NULL) {
		/* The old controller lost a pod. */
		key = resolve_controller_ref(st, namespace, old_ref);
		if (key != NULL)
			q->add(key, q->arg);
		free(key);
	}
	if (ref != NULL) {
		key = resolve_controller_ref(st, namespace, ref);
		if (key == NULL)
			return;
		q->add(key, q->arg);
		/* Newly ready: it becomes available after minReadySeconds; look then. */
		if (!pod_ready(old) && pod_ready(pod)) {
			long long min_ready = min_ready_seconds(st, key);
			if (min_ready > 0)
				q->add_after(key, (double)min_ready, q->arg);
		}
		free(key);
		return;
	}
	if (labels_changed || ref_changed)
		enqueue_matching(st, namespace, json_path(pod, "metadata.labels"), q);
}

static void
replicaset_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	const struct replicaset_state *st = c->state;
	const cJSON *meta = json_path(ev->object, "metadata");
	cJSON *old = NULL;
	char *key, *error = NULL;

	(void)now;
	if (strcmp(ev->resource->name, st->flavor->resource) == 0) {
		key = xasprintf("%s/%s", json_string(meta, "namespace"),
		    json_string(meta, "name"));
		if (ev->type == INFORMER_DELETED) {
			if (expectations_delete(c->expectations, key, &error) != 0)
				observe_failed(c, "the deletion of expectations", key,
			    error);
			error = NULL;
			if (consistency_forget(c->writes, key, &error) != 0)
				observe_failed(c, "the deletion of writes", key, error);
		}
		q->add(key, q->arg);
		free(key);
		return;
	}
	if (strcmp(ev->resource->name, "pods") != 0)
		return;
	switch (ev->type) {
	case INFORMER_ADDED:
		pod_added(c, ev->object, q);
		break;
	case INFORMER_UPDATED:
		old = ev->old_body != NULL ? cJSON_Parse(ev->old_body) : NULL;
		if (old == NULL)
			pod_added(c, ev->object, q);
		else
			pod_updated(c, old, ev->object, q);
		cJSON_Delete(old);
		break;
	case INFORMER_DELETED:
		pod_deleted(c, ev->object, q);
		break;
	}
}

static int
replicaset_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct replicaset_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_RS_KEYS], st->flavor->controller, cb,
	    arg, error);
}

static const char *const replicaset_resources[] = { "pods", "replicasets", NULL };

/* A pod of a live LIST is active as kube's controller.IsPodActive says: not being deleted,
 * not Succeeded or Failed (the rule of the recovery's cached query too). */
static int
replicaset_pod_active(const cJSON *pod)
{
	const cJSON *deleting = json_path(pod, "metadata.deletionTimestamp");
	const cJSON *phase = json_path(pod, "status.phase");

	if (deleting != NULL && !cJSON_IsNull(deleting))
		return 0;
	return !(cJSON_IsString(phase) && (strcmp(phase->valuestring, "Succeeded") == 0 ||
	    strcmp(phase->valuestring, "Failed") == 0));
}

/* After a restart: an owner's inherited expectations go once the cache shows the same
 * active pods as a live LIST by its selector. */
#define RECOVERY_OWNERS_SQL(table)						\
	"SELECT e.key, rs.uid, rs.selector, rs.namespace, e.set_at"		\
	" FROM expectations e"							\
	" JOIN " table " rs ON rs.namespace || '/' || rs.name = e.key"		\
	" WHERE e.controller = ?1 AND (e.adds > 0 OR e.deletes > 0)"
#define RECOVERY_CACHED_SQL							\
	"SELECT p.uid FROM object_owners o"					\
	" JOIN cache_pods p ON p.id = o.object_id WHERE o.owner_uid = ?1"	\
	" AND o.controller = 1 AND p.deletion_timestamp IS NULL"		\
	" AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed') ORDER BY p.uid"
static const struct controller_recovery replicaset_recovery = {
	.owners_sql = RECOVERY_OWNERS_SQL("cache_replicasets"),
	.dependents = "pods",
	.cached_sql = RECOVERY_CACHED_SQL,
	.active = replicaset_pod_active,
};
static const struct controller_recovery replicationcontroller_recovery = {
	.owners_sql = RECOVERY_OWNERS_SQL("cache_replicationcontrollers"),
	.dependents = "pods",
	.cached_sql = RECOVERY_CACHED_SQL,
	.active = replicaset_pod_active,
};

const struct controller_type replicaset_controller_type = {
	.name = "replicaset",
	.resources = replicaset_resources,
	.default_workers = 5,
	.workers_flag = "concurrent-replicaset-syncs",
	.workers_help = "ReplicaSets synced at once",
	.event_component = "replicaset-controller",
	.client_name = "replicaset-controller",
	.recovery = &replicaset_recovery,
	.init = replicaset_init,
	.fini = replicaset_fini,
	.handle_event = replicaset_handle_event,
	.list_keys = replicaset_list_keys,
	.sync = replicaset_sync,
};

static const char *const replicationcontroller_resources[] = {
	"pods", "replicationcontrollers", NULL,
};

const struct controller_type replicationcontroller_controller_type = {
	.name = "replicationcontroller",
	.resources = replicationcontroller_resources,
	.default_workers = 5,
	.workers_flag = "concurrent-rc-syncs",
	.workers_help = "ReplicationControllers synced at once",
	.event_component = "replication-controller",
	.client_name = "replication-controller",
	.recovery = &replicationcontroller_recovery,
	.init = replicationcontroller_init,
	.fini = replicaset_fini,
	.handle_event = replicaset_handle_event,
	.list_keys = replicaset_list_keys,
	.sync = replicaset_sync,
};
