/*
 * daemonset.c - the DaemonSet controller: one pod of the template on every node it fits.
 *
 * It follows kube-controller-manager's DaemonSet controller (pkg/controller/daemon,
 * v1.36.3). A sync of one DaemonSet reads the cache and decides, writing nothing:
 *
 * 1. The DaemonSet is gone: drop its expectations. The cache lags its own last writes:
 *    wait.
 * 2. History: its ControllerRevisions (history.c). The one whose data is the template
 *    now is current; none: one is created, numbered past the others, named
 *    "<name>-<hash>"; a name taken by other data moves status.collisionCount on (and
 *    nothing else happens in that sync). A current one numbered below another (an undo,
 *    `kubectl rollout undo`, copies an old revision's template back) is renumbered past
 *    them. Its controller-revision-hash label is the hash new pods carry, so an undo
 *    rolls back to the old revision's own pods.
 * 3. Placement (kube's NodeShouldRunDaemonPod): the node's name, the template's
 *    nodeSelector and required node affinity, and its tolerations with those kube adds to
 *    every daemon pod against the node's NoSchedule and NoExecute taints. A node that
 *    should run one and has none gets a pod, pinned to it by a required node affinity on
 *    its name and bound by the scheduler; a node that may no longer run one (a NoExecute
 *    taint the pod does not tolerate, a label gone) loses its pods; failed pods are
 *    deleted (FailedDaemonPod) with kube's backoff per node (1 s doubling to 15 min, in
 *    memory as kube's), and of several pods on a node the oldest stays.
 * 4. Update, when nothing was to be placed and expectations are satisfied: RollingUpdate
 *    replaces old pods within maxUnavailable, or surges new pods beside old ones within
 *    maxSurge and deletes each old pod once its new one is available; OnDelete does
 *    nothing. Revisions past revisionHistoryLimit whose hash no pod carries go.
 * 5. Status: desired, current, misscheduled, ready, updated, available and unavailable
 *    counts, observedGeneration, kept collisionCount; written only when changed.
 *
 * Creations and deletions go through expectations like the ReplicaSet controller's (kept
 * in the store, released after a restart by `recovery`).
 *
 * Where this differs from kube, on purpose or for now:
 * - The revision's hash is sqlkcm's (history_template_hash): kube hashes a dump of its Go
 *   structures. Revisions kube made are found by their data and their hash label used, so
 *   either controller can take over from the other; only new names differ.
 * - One sync sends creations or deletions, not both: creations first, the deletions in
 *   the next sync once the creations are observed (kube's syncNodes sends both at once).
 * - Duplicate current revisions are not merged (kube's dedupCurHistories): the highest
 *   numbered one is current. Revisions that the selector no longer matches are not
 *   released.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "controllerref.h"
#include "controllers/daemonset.h"
#include "controllers/replicaset.h"
#include "expectations.h"
#include "history.h"
#include "intstr.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "selector.h"
#include "timeutil.h"
#include "util.h"

/* --- placement ------------------------------------------------------------------------- */

int
daemonset_toleration_tolerates(const cJSON *toleration, const cJSON *taint)
{
	const char *effect = json_string(toleration, "effect");
	const char *key = json_string(toleration, "key");
	const char *op = json_string(toleration, "operator");

	if (effect[0] != '\0' && strcmp(effect, json_string(taint, "effect")) != 0)
		return 0;
	if (key[0] != '\0' && strcmp(key, json_string(taint, "key")) != 0)
		return 0;
	/* An empty key matches every taint's key (the API allows it with Exists only). */
	if (strcmp(op, "Exists") == 0)
		return 1;
	if (op[0] == '\0' || strcmp(op, "Equal") == 0)
		return strcmp(json_string(toleration, "value"), json_string(taint, "value")) == 0;
	return 0;
}

/* 1 when a taint of effect among effects ("NoSchedule", "NoExecute") is tolerated by none
 * of tolerations. */
static int
has_untolerated_taint(const cJSON *taints, const cJSON *tolerations, int no_schedule)
{
	const cJSON *taint, *t;

	cJSON_ArrayForEach(taint, taints) {
		const char *effect = json_string(taint, "effect");
		int tolerated = 0;

		if (strcmp(effect, "NoExecute") != 0 &&
		    !(no_schedule && strcmp(effect, "NoSchedule") == 0))
			continue;
		cJSON_ArrayForEach(t, tolerations) {
			if (daemonset_toleration_tolerates(t, taint)) {
				tolerated = 1;
				break;
			}
		}
		if (!tolerated)
			return 1;
	}
	return 0;
}

/* Parses a whole number as kube's Gt and Lt do (strconv.ParseInt). */
static int
parse_int(const char *s, long long *out)
{
	char *end;

	if (s == NULL || *s == '\0' || *s == ' ' || *s == '+')
		return -1;
	*out = strtoll(s, &end, 10);
	return *end == '\0' ? 0 : -1;
}

/* kube's NodeSelectorRequirement match against value (NULL: absent). */
static int
requirement_matches(const cJSON *req, const char *value)
{
	const char *op = json_string(req, "operator");
	const cJSON *values = cJSON_GetObjectItemCaseSensitive(req, "values"), *v;
	int in = 0;

	cJSON_ArrayForEach(v, values) {
		if (value != NULL && cJSON_IsString(v) && strcmp(v->valuestring, value) == 0)
			in = 1;
	}
	if (strcmp(op, "In") == 0)
		return in;
	if (strcmp(op, "NotIn") == 0)
		return !in;
	if (strcmp(op, "Exists") == 0)
		return value != NULL;
	if (strcmp(op, "DoesNotExist") == 0)
		return value == NULL;
	if (strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) {
		long long have, want;
		const cJSON *first = cJSON_GetArrayItem(values, 0);

		if (value == NULL || cJSON_GetArraySize(values) != 1 || !cJSON_IsString(first) ||
		    parse_int(value, &have) != 0 || parse_int(first->valuestring, &want) != 0)
			return 0;
		return op[0] == 'G' ? have > want : have < want;
	}
	return 0;	/* an operator kube does not know matches nothing */
}

/* One NodeSelectorTerm: its expressions on labels and fields all match; an empty term
 * matches nothing. */
static int
term_matches(const cJSON *term, const cJSON *node)
{
	const cJSON *exprs = cJSON_GetObjectItemCaseSensitive(term, "matchExpressions");
	const cJSON *fields = cJSON_GetObjectItemCaseSensitive(term, "matchFields");
	const cJSON *labels = json_path(node, "metadata.labels"), *r;

	if (cJSON_GetArraySize(exprs) == 0 && cJSON_GetArraySize(fields) == 0)
		return 0;
	cJSON_ArrayForEach(r, exprs) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(labels, json_string(r, "key"));

		if (!requirement_matches(r, cJSON_IsString(l) ? l->valuestring : NULL))
			return 0;
	}
	cJSON_ArrayForEach(r, fields) {
		/* metadata.name is the only field a node selector may name. */
		if (strcmp(json_string(r, "key"), "metadata.name") != 0 ||
		    !requirement_matches(r, json_string(json_path(node, "metadata"), "name")))
			return 0;
	}
	return 1;
}

/* kube's GetRequiredNodeAffinity(pod).Match(node): the nodeSelector's labels, then any of
 * the required terms. */
static int
fits_node_affinity(const cJSON *spec, const cJSON *node)
{
	const cJSON *selector = cJSON_GetObjectItemCaseSensitive(spec, "nodeSelector"), *s, *t;
	const cJSON *labels = json_path(node, "metadata.labels");
	const cJSON *terms = json_path(spec,
	    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");

	cJSON_ArrayForEach(s, selector) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(labels, s->string);

		if (!cJSON_IsString(l) || !cJSON_IsString(s) ||
		    strcmp(l->valuestring, s->valuestring) != 0)
			return 0;
	}
	if (terms == NULL || cJSON_IsNull(terms))
		return 1;
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(terms, "nodeSelectorTerms")) {
		if (term_matches(t, node))
			return 1;
	}
	return 0;
}

/* Adds toleration {key, Exists, effect} to the array tolerations unless one equal to it is
 * there (kube's AddOrUpdateTolerationInPodSpec). */
static void
add_toleration(cJSON *tolerations, const char *key, const char *effect)
{
	const cJSON *t;
	cJSON *n;

	cJSON_ArrayForEach(t, tolerations) {
		if (strcmp(json_string(t, "key"), key) == 0 &&
		    strcmp(json_string(t, "operator"), "Exists") == 0 &&
		    strcmp(json_string(t, "effect"), effect) == 0 &&
		    json_string(t, "value")[0] == '\0' &&
		    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(t, "tolerationSeconds")))
			return;
	}
	n = cJSON_CreateObject();
	cJSON_AddStringToObject(n, "key", key);
	cJSON_AddStringToObject(n, "operator", "Exists");
	cJSON_AddStringToObject(n, "effect", effect);
	cJSON_AddItemToArray(tolerations, n);
}

/* kube's AddOrUpdateDaemonPodTolerations on a pod spec. */
static void
add_daemon_tolerations(cJSON *spec)
{
	cJSON *tolerations = cJSON_GetObjectItemCaseSensitive(spec, "tolerations");

	if (!cJSON_IsArray(tolerations)) {
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "tolerations");
		tolerations = cJSON_AddArrayToObject(spec, "tolerations");
	}
	add_toleration(tolerations, "node.kubernetes.io/not-ready", "NoExecute");
	add_toleration(tolerations, "node.kubernetes.io/unreachable", "NoExecute");
	add_toleration(tolerations, "node.kubernetes.io/disk-pressure", "NoSchedule");
	add_toleration(tolerations, "node.kubernetes.io/memory-pressure", "NoSchedule");
	add_toleration(tolerations, "node.kubernetes.io/pid-pressure", "NoSchedule");
	add_toleration(tolerations, "node.kubernetes.io/unschedulable", "NoSchedule");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "hostNetwork")))
		add_toleration(tolerations, "node.kubernetes.io/network-unavailable",
		    "NoSchedule");
}

void
daemonset_node_should_run(const cJSON *node, const cJSON *ds, int *should_run,
    int *should_continue)
{
	const cJSON *spec = json_path(ds, "spec.template.spec");
	const char *node_name = json_string(json_path(node, "metadata"), "name");
	const char *pinned = json_string(spec, "nodeName");
	const cJSON *taints = json_path(node, "spec.taints");
	cJSON *pod_spec;
	const cJSON *tolerations;

	*should_run = *should_continue = 0;
	if (pinned[0] != '\0' && strcmp(pinned, node_name) != 0)
		return;
	if (!fits_node_affinity(spec, node))
		return;
	pod_spec = cJSON_IsObject(spec) ? cJSON_Duplicate(spec, 1) : cJSON_CreateObject();
	add_daemon_tolerations(pod_spec);
	tolerations = cJSON_GetObjectItemCaseSensitive(pod_spec, "tolerations");
	if (!has_untolerated_taint(taints, tolerations, 1)) {
		*should_run = *should_continue = 1;
	} else {
		/* Pods already there stay unless a NoExecute taint evicts them. */
		*should_continue = !has_untolerated_taint(taints, tolerations, 0);
	}
	cJSON_Delete(pod_spec);
}

cJSON *
daemonset_pod_template(const cJSON *ds, long long generation, const char *hash)
{
	const cJSON *t = json_path(ds, "spec.template");
	cJSON *template = cJSON_IsObject(t) ? cJSON_Duplicate(t, 1) : cJSON_CreateObject();
	cJSON *meta = json_child_object(template, "metadata");
	cJSON *labels = json_child_object(meta, "labels");
	cJSON *spec = json_child_object(template, "spec");

	add_daemon_tolerations(spec);
	if (generation >= 0) {
		char text[24];

		snprintf(text, sizeof text, "%lld", generation);
		json_set(labels, DAEMONSET_GENERATION_LABEL, cJSON_CreateString(text));
	}
	if (hash != NULL && hash[0] != '\0')
		json_set(labels, HISTORY_HASH_LABEL, cJSON_CreateString(hash));
	return template;
}

void
daemonset_pin_to_node(cJSON *pod_spec, const char *node)
{
	cJSON *affinity = json_child_object(pod_spec, "affinity");
	cJSON *node_affinity = json_child_object(affinity, "nodeAffinity");
	cJSON *required = json_child_object(node_affinity,
	    "requiredDuringSchedulingIgnoredDuringExecution");
	cJSON *terms = cJSON_CreateArray(), *term = cJSON_CreateObject();
	cJSON *fields = cJSON_AddArrayToObject(term, "matchFields");
	cJSON *req = cJSON_CreateObject();
	cJSON *values = cJSON_CreateArray();

	cJSON_AddStringToObject(req, "key", "metadata.name");
	cJSON_AddStringToObject(req, "operator", "In");
	cJSON_AddItemToArray(values, cJSON_CreateString(node));
	cJSON_AddItemToObject(req, "values", values);
	cJSON_AddItemToArray(fields, req);
	cJSON_AddItemToArray(terms, term);
	json_set(required, "nodeSelectorTerms", terms);
}

const char *
daemonset_target_node(const cJSON *pod)
{
	const char *node = json_string(json_path(pod, "spec"), "nodeName");
	const cJSON *terms = json_path(pod, "spec.affinity.nodeAffinity."
	    "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"), *term;

	if (node[0] != '\0')
		return node;
	/* kube's GetTargetNodeName: a term with one field, metadata.name In one node. */
	cJSON_ArrayForEach(term, terms) {
		const cJSON *fields = cJSON_GetObjectItemCaseSensitive(term, "matchFields"), *f;

		cJSON_ArrayForEach(f, fields) {
			const cJSON *values = cJSON_GetObjectItemCaseSensitive(f, "values");
			const cJSON *v = cJSON_GetArrayItem(values, 0);

			if (strcmp(json_string(f, "key"), "metadata.name") == 0 &&
			    strcmp(json_string(f, "operator"), "In") == 0 &&
			    cJSON_GetArraySize(values) == 1 && cJSON_IsString(v))
				return v->valuestring;
		}
	}
	return NULL;
}

/* --- rolling-update arithmetic --------------------------------------------------------- */

int
daemonset_max_counts(const cJSON *ds, long long desired, long long *max_surge,
    long long *max_unavailable, char **error)
{
	const cJSON *strategy = json_path(ds, "spec.updateStrategy");
	const cJSON *rolling = cJSON_GetObjectItemCaseSensitive(strategy, "rollingUpdate");
	const char *type = json_string(strategy, "type");

	*max_surge = *max_unavailable = 0;
	/* The API defaults the type to RollingUpdate. */
	if (type[0] == '\0' || strcmp(type, "RollingUpdate") == 0) {
		if (intstr_scaled_or_zero(cJSON_GetObjectItemCaseSensitive(rolling,
		    "maxUnavailable"), desired, 1, max_unavailable, error) != 0 ||
		    intstr_scaled_or_zero(cJSON_GetObjectItemCaseSensitive(rolling, "maxSurge"),
		    desired, 1, max_surge, error) != 0)
			return -1;
	}
	if (desired > 0 && *max_unavailable == 0 && *max_surge == 0)
		*max_unavailable = 1;
	return 0;
}

void
daemonset_rolling_update(const struct daemonset_node_pods *nodes, int n, long long desired,
    long long max_surge, long long max_unavailable, int *delete_old, int *create_new)
{
	int *candidates = xmalloc(((size_t)n + 1) * sizeof *candidates);
	int *should_not_run = xmalloc(((size_t)n + 1) * sizeof *should_not_run);
	long long ncandidates = 0, nshould_not_run = 0, room, count = 0, available = 0;

	for (int i = 0; i < n; i++)
		delete_old[i] = create_new[i] = 0;
	if (max_surge == 0) {
		/* count: the nodes unavailable. */
		for (int i = 0; i < n; i++) {
			const struct daemonset_node_pods *p = &nodes[i];

			if (!p->ok || p->has_new == p->has_old) {
				count++;	/* placement takes care of it */
			} else if (p->has_new) {
				count += !p->new_available;
			} else if (!p->old_available) {
				delete_old[i] = 1;	/* already unavailable: replace it */
				count++;
			} else if (count < max_unavailable) {
				candidates[ncandidates++] = i;
			}
		}
		room = max_unavailable - count;
	} else {
		/* count: the nodes surged. */
		for (int i = 0; i < n; i++) {
			const struct daemonset_node_pods *p = &nodes[i];

			if (!p->ok) {
				count++;
				continue;
			}
			if (p->has_old ? p->old_available : p->has_new && p->new_available)
				available++;
			if (!p->has_old)
				continue;
			if (!p->has_new) {
				if (!p->old_available) {
					if (!p->should_run)
						delete_old[i] = 1;
					else
						create_new[i] = 1;
				} else if (!p->should_run) {
					should_not_run[nshould_not_run++] = i;
				} else if (count < max_surge) {
					candidates[ncandidates++] = i;
				}
			} else if (!p->new_available) {
				count++;
			} else {
				delete_old[i] = 1;
			}
		}
		/* Old pods on nodes that no longer want one go while there are more available
		 * pods than desired. */
		if (available - desired > 0) {
			long long k = available - desired;

			if (k > nshould_not_run)
				k = nshould_not_run;
			for (long long j = 0; j < k; j++)
				delete_old[should_not_run[j]] = 1;
		}
		room = max_surge - count;
	}
	if (room < 0)
		room = 0;
	if (room > ncandidates)
		room = ncandidates;
	for (long long k = 0; k < room; k++) {
		if (max_surge == 0)
			delete_old[candidates[k]] = 1;
		else
			create_new[candidates[k]] = 1;
	}
	free(candidates);
	free(should_not_run);
}

/* --- statements ------------------------------------------------------------------------ */

enum {
	STMT_GET_DS,
	STMT_NODES,
	STMT_PODS,
	STMT_REVISIONS,
	STMT_REVISION_BY_NAME,
	STMT_DS_BY_UID,
	STMT_DS_KEYS,
	STMT_DS_ALL,
	STMT_DS_PODS_ON_NODE,
	STMT_ORPHANS,
	STMT_ORPHAN_REVISIONS,
	STMT_COUNT
};

static const char *const daemonset_sql[STMT_COUNT] = {
	[STMT_GET_DS] = "SELECT uid, body FROM cache_objects"
	    " WHERE resource = 'daemonsets' AND namespace = ?1 AND name = ?2",
	[STMT_NODES] = "SELECT name, body FROM cache_objects"
	    " WHERE resource = 'nodes' AND namespace = '' ORDER BY name",
	/* The pods the DaemonSet controls (kind, name and uid of the controller
	 * reference), but not those finished and being deleted (kube's
	 * getNodesToDaemonPods leaves them out). */
	[STMT_PODS] = "SELECT p.uid, p.name, coalesce(p.phase, ''), coalesce(p.ready, 0),"
	    " p.ready_since, p.deletion_timestamp IS NOT NULL, p.creation_timestamp, p.body"
	    " FROM cache_pods p"
	    " WHERE p.namespace = ?1 AND p.controller_uid = ?2"
	    "   AND EXISTS (SELECT 1 FROM object_owners c WHERE c.object_id = p.id"
	    "                AND c.controller = 1 AND c.kind = 'DaemonSet' AND c.name = ?3)"
	    "   AND NOT (p.deletion_timestamp IS NOT NULL"
	    "            AND coalesce(p.phase, '') IN ('Succeeded', 'Failed'))"
	    " ORDER BY p.name",
	[STMT_REVISIONS] = "SELECT o.name, o.creation_timestamp, o.body"
	    " FROM object_owners w JOIN cache_objects o ON o.id = w.object_id"
	    " WHERE w.owner_uid = ?1 AND w.controller = 1"
	    "   AND o.resource = 'controllerrevisions' AND o.namespace = ?2"
	    " ORDER BY o.name",
	[STMT_REVISION_BY_NAME] = "SELECT body FROM cache_objects"
	    " WHERE resource = 'controllerrevisions' AND namespace = ?1 AND name = ?2",
	[STMT_DS_BY_UID] = "SELECT name FROM cache_objects"
	    " WHERE resource = 'daemonsets' AND namespace = ?1 AND name = ?2 AND uid = ?3",
	[STMT_DS_KEYS] = "SELECT namespace, name FROM cache_objects"
	    " WHERE resource = 'daemonsets' ORDER BY namespace, name",
	[STMT_DS_ALL] = "SELECT namespace, name, body FROM cache_objects"
	    " WHERE resource = 'daemonsets' ORDER BY namespace, name",
	/* Whether the DaemonSet ?1 (uid) has a pod bound to node ?2. */
	[STMT_DS_PODS_ON_NODE] = "SELECT EXISTS (SELECT 1 FROM cache_pods"
	    " WHERE controller_uid = ?1 AND node_name = ?2)",
	/* The namespace's active pods without a controller: orphans to adopt if the
	 * selector matches (kube's ClaimPods). The columns are STMT_PODS'. */
	[STMT_ORPHANS] = "SELECT p.uid, p.name, coalesce(p.phase, ''), coalesce(p.ready, 0),"
	    " p.ready_since, p.deletion_timestamp IS NOT NULL, p.creation_timestamp, p.body"
	    " FROM cache_pods p"
	    " WHERE p.namespace = ?1 AND p.controller_uid IS NULL"
	    "   AND p.deletion_timestamp IS NULL"
	    "   AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed')"
	    " ORDER BY p.name",
	/* The namespace's ControllerRevisions without a controller (STMT_REVISIONS'
	 * columns). */
	[STMT_ORPHAN_REVISIONS] = "SELECT o.name, o.creation_timestamp, o.body"
	    " FROM cache_objects o"
	    " WHERE o.resource = 'controllerrevisions' AND o.namespace = ?1"
	    "   AND NOT EXISTS (SELECT 1 FROM object_owners w"
	    "                    WHERE w.object_id = o.id AND w.controller = 1)"
	    " ORDER BY o.name",
};

/* kube's failedPodsBackoff (flowcontrol.NewBackOff(1s, 15m)): per DaemonSet uid,
 * observed generation and node, how long a failed pod waits before its deletion. Kept in
 * memory as kube keeps it; the sync's own clock drives it, so a replay sees the same. */
#define FAILED_BACKOFF_INITIAL 1.0
#define FAILED_BACKOFF_MAX 900.0

struct failed_backoff {
	char *key;
	double last_update;
	double backoff;
};

struct daemonset_state {
	sqlite3 *db;
	sqlite3_stmt *stmt[STMT_COUNT];
	struct failed_backoff *backoffs;
	int nbackoffs;
};

static int
daemonset_init(struct controller *c, char **error)
{
	struct daemonset_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->db = store_db(c->store);
	return store_prepare_statements(st->db, daemonset_sql, STMT_COUNT, st->stmt,
	    "daemonset controller", error);
}

static void
daemonset_fini(struct controller *c)
{
	struct daemonset_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	for (int i = 0; i < st->nbackoffs; i++)
		free(st->backoffs[i].key);
	free(st->backoffs);
	free(st);
	c->state = NULL;
}

static const struct resource *
daemonsets_resource(void)
{
	return resource_find("daemonsets");
}

/* --- what the sync reads --------------------------------------------------------------- */

struct ds_pod {
	char *uid, *name, *phase, *hash, *generation;
	char *node;		/* target node; NULL: none */
	int scheduled;		/* spec.nodeName set */
	int ready, available, deleting, updated;
	int orphan;		/* no controller: adopted if the selector matches */
	int unclaimed;		/* released or left alone: not the DaemonSet's */
	double created;
	cJSON *labels;		/* its metadata.labels (the rest of the body is not kept) */
};

struct ds_node {
	char *name;
	int should_run, should_continue;
	int *pods;		/* indices into the pods, oldest first */
	int npods;
};

struct ds_view {
	struct ds_pod *pods;
	int npods;
	struct ds_node *nodes;
	int nnodes;
	struct history_cached *revisions;
	int nrevisions;
};

static void
view_clear(struct ds_view *v)
{
	for (int i = 0; i < v->npods; i++) {
		free(v->pods[i].uid);
		free(v->pods[i].name);
		free(v->pods[i].phase);
		free(v->pods[i].hash);
		free(v->pods[i].generation);
		cJSON_Delete(v->pods[i].labels);
		free(v->pods[i].node);
	}
	for (int i = 0; i < v->nnodes; i++) {
		free(v->nodes[i].name);
		free(v->nodes[i].pods);
	}
	free(v->pods);
	free(v->nodes);
	history_cached_free(v->revisions, v->nrevisions);
	memset(v, 0, sizeof *v);
}

static char *
column_strdup(sqlite3_stmt *stmt, int i)
{
	const char *text = (const char *)sqlite3_column_text(stmt, i);

	return xstrdup(text != NULL ? text : "");
}

static int
step_error(struct daemonset_state *st, sqlite3_stmt *stmt, int rc, const char *what,
    char **error)
{
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "daemonset: %s: %s", what, sqlite3_errmsg(st->db));
	return 0;
}

static int
load_nodes(struct daemonset_state *st, const cJSON *ds, struct ds_view *v, char **error)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_NODES]);
	int rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		struct ds_node *n;
		cJSON *body = controller_column_json(stmt, 1);

		if (body == NULL)
			continue;
		v->nodes = xrealloc(v->nodes, (size_t)(v->nnodes + 1) * sizeof *v->nodes);
		n = &v->nodes[v->nnodes++];
		memset(n, 0, sizeof *n);
		n->name = column_strdup(stmt, 0);
		daemonset_node_should_run(body, ds, &n->should_run, &n->should_continue);
		/* Nothing else reads the node: one body at a time, not every node's. */
		cJSON_Delete(body);
	}
	return step_error(st, stmt, rc, "listing nodes", error);
}

/* A pod and its index, for sorting a node's pods. */
struct pod_ref {
	const struct ds_pod *pod;
	int index;
};

/* kube's podByCreationTimestampAndPhase: scheduled first, then oldest, then by name. */
static int
pod_order_cmp(const void *a, const void *b)
{
	const struct ds_pod *x = ((const struct pod_ref *)a)->pod;
	const struct ds_pod *y = ((const struct pod_ref *)b)->pod;

	if (x->scheduled != y->scheduled)
		return x->scheduled ? -1 : 1;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Puts a node's pods in kube's order. */
static void
sort_node_pods(const struct ds_view *v, struct ds_node *n)
{
	struct pod_ref *refs;

	if (n->npods < 2)
		return;
	refs = xmalloc((size_t)n->npods * sizeof *refs);
	for (int k = 0; k < n->npods; k++) {
		refs[k].pod = &v->pods[n->pods[k]];
		refs[k].index = n->pods[k];
	}
	qsort(refs, (size_t)n->npods, sizeof *refs, pod_order_cmp);
	for (int k = 0; k < n->npods; k++)
		n->pods[k] = refs[k].index;
	free(refs);
}

static struct ds_node *
find_node(struct ds_view *v, const char *name)
{
	for (int i = 0; i < v->nnodes; i++) {
		if (strcmp(v->nodes[i].name, name) == 0)
			return &v->nodes[i];
	}
	return NULL;
}

/* Reads the pods stmt gives (STMT_PODS' columns) into v, flagged orphan. */
static int
read_pods(struct daemonset_state *st, sqlite3_stmt *stmt, int orphan, long long min_ready,
    long long generation, const char *hash, double now, struct ds_view *v, char **error)
{
	char gen_text[24];
	int rc;

	snprintf(gen_text, sizeof gen_text, "%lld", generation);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		struct ds_pod *p;
		double ready_since;
		const cJSON *labels;
		const char *node;
		cJSON *body;

		v->pods = xrealloc(v->pods, (size_t)(v->npods + 1) * sizeof *v->pods);
		p = &v->pods[v->npods++];
		memset(p, 0, sizeof *p);
		p->orphan = orphan;
		p->uid = column_strdup(stmt, 0);
		p->name = column_strdup(stmt, 1);
		p->phase = column_strdup(stmt, 2);
		p->ready = sqlite3_column_int(stmt, 3);
		ready_since = controller_column_time(stmt, 4);
		p->deleting = sqlite3_column_int(stmt, 5);
		p->created = controller_column_time(stmt, 6);
		body = controller_column_json(stmt, 7);
		node = daemonset_target_node(body);
		p->node = node != NULL ? xstrdup(node) : NULL;
		p->scheduled = json_string(json_path(body, "spec"), "nodeName")[0] != '\0';
		labels = json_path(body, "metadata.labels");
		p->hash = xstrdup(json_string(labels, HISTORY_HASH_LABEL));
		p->generation = xstrdup(json_string(labels, DAEMONSET_GENERATION_LABEL));
		p->labels = labels != NULL ? cJSON_Duplicate(labels, 1) : NULL;
		/* One pod's body at a time: what the sync reads of it is kept above. */
		cJSON_Delete(body);
		/* kube's IsPodAvailable: ready for longer than minReadySeconds. */
		p->available = p->ready && (min_ready <= 0 ||
		    (ready_since != 0 && ready_since + (double)min_ready < now));
		/* kube's IsPodUpdated: the revision's hash, or the template generation. */
		p->updated = (hash[0] != '\0' && strcmp(p->hash, hash) == 0) ||
		    (generation >= 0 && strcmp(p->generation, gen_text) == 0);
	}
	return step_error(st, stmt, rc, "listing pods", error);
}

/*
 * Loads the DaemonSet's pods and the namespace's orphans, claims them (kube's ClaimPods:
 * an orphan the selector matches is adopted, a pod of ours it no longer matches is
 * released; adoptions wait for a live check of the DaemonSet) and groups the claimed ones
 * by node, in kube's order.
 */
static int
load_pods(struct daemonset_state *st, struct sync_result *out, const cJSON *ds,
    const struct selector *sel, const char *namespace, const char *name, const char *uid,
    long long min_ready, long long generation, const char *hash, double now,
    struct ds_view *v, char **error)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_PODS]);
	const struct resource *pods = resource_find("pods");

	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, uid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 3, name, -1, SQLITE_TRANSIENT);
	if (read_pods(st, stmt, 0, min_ready, generation, hash, now, v, error) != 0)
		return -1;
	stmt = controller_stmt(st->stmt[STMT_ORPHANS]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	if (read_pods(st, stmt, 1, min_ready, generation, hash, now, v, error) != 0)
		return -1;
	for (int i = 0; i < v->npods; i++) {
		struct ds_pod *p = &v->pods[i];
		int matches = selector_matches(sel, p->labels);
		enum controllerref_claim claim = controllerref_decide(p->orphan ?
		    CONTROLLERREF_ORPHAN : CONTROLLERREF_OURS, matches, p->deleting, 0, 0);

		if (claim == CONTROLLERREF_ADOPT) {
			controllerref_claim_action(action_append(&out->claims, &out->nclaims),
			    claim, pods, namespace, p->name, p->uid,
			    controllerref_adopt_patch(daemonsets_resource(), ds, p->uid),
			    xstrdup("an orphan the selector matches"));
			out->recheck_owner = 1;
		} else if (claim == CONTROLLERREF_RELEASE) {
			controllerref_claim_action(action_append(&out->claims, &out->nclaims),
			    claim, pods, namespace, p->name, p->uid,
			    controllerref_release_patch(uid, p->uid),
			    xstrdup("the selector no longer matches its labels"));
		}
		p->unclaimed = claim != CONTROLLERREF_KEEP && claim != CONTROLLERREF_ADOPT;
	}
	for (int i = 0; i < v->npods; i++) {
		struct ds_node *n = v->pods[i].node != NULL && !v->pods[i].unclaimed ?
		    find_node(v, v->pods[i].node) : NULL;

		if (n == NULL)
			continue;
		n->pods = xrealloc(n->pods, (size_t)(n->npods + 1) * sizeof *n->pods);
		n->pods[n->npods++] = i;
	}
	for (int i = 0; i < v->nnodes; i++)
		sort_node_pods(v, &v->nodes[i]);
	return 0;
}

/* The DaemonSet's revisions and the orphans it adopts. */
static int
load_revisions(struct daemonset_state *st, struct sync_result *out, const cJSON *ds,
    const struct selector *sel, const char *namespace, const char *uid, struct ds_view *v,
    char **error)
{
	const struct resource *r = daemonsets_resource();
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_REVISIONS]);

	sqlite3_bind_text(stmt, 1, uid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, namespace, -1, SQLITE_TRANSIENT);
	if (step_error(st, stmt, history_read_cached(stmt, r, ds, NULL, namespace, out,
	    &v->revisions, &v->nrevisions), "listing revisions", error) != 0)
		return -1;
	/* the orphans the selector matches, adopted */
	stmt = controller_stmt(st->stmt[STMT_ORPHAN_REVISIONS]);
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	return step_error(st, stmt, history_read_cached(stmt, r, ds, sel, namespace, out,
	    &v->revisions, &v->nrevisions), "listing orphan revisions", error);
}

/* --- actions --------------------------------------------------------------------------- */

static struct action *
pod_action(struct sync_result *out, enum action_type type, const char *namespace,
    const struct ds_pod *p, cJSON *body, char *reason)
{
	struct action *a = action_append(&out->manage, &out->nmanage);

	a->type = type;
	a->verb = type == ACTION_CREATE ? "create" : "delete";
	a->resource = resource_find("pods");
	a->namespace = xstrdup(namespace);
	a->name = p != NULL ? xstrdup(p->name) : NULL;
	a->uid = p != NULL ? xstrdup(p->uid) : NULL;
	a->body = body;
	a->reason = reason;
	/* kube's pod control: its event reasons and messages. */
	if (type == ACTION_CREATE) {
		a->done_reason = "SuccessfulCreate";
		a->done_prefix = "Created pod: ";
		a->failed_reason = "FailedCreate";
		a->failed_prefix = "Error creating: ";
	} else {
		a->done_reason = "SuccessfulDelete";
		a->done_prefix = "Deleted pod: ";
		a->failed_reason = "FailedDelete";
		a->failed_prefix = "Error deleting: ";
	}
	return a;
}

static struct action *
revision_write(struct sync_result *out, enum action_type type, const char *verb,
    const char *namespace, const char *name, cJSON *body, char *reason)
{
	struct action *a = action_append(&out->writes, &out->nwrites);

	a->type = type;
	a->verb = verb;
	a->resource = resource_find("controllerrevisions");
	a->namespace = xstrdup(namespace);
	a->name = name != NULL ? xstrdup(name) : NULL;
	a->body = body;
	a->reason = reason;
	return a;
}

/* The revision's data for ds now (kube's getPatch, history.c). */
static cJSON *
revision_data(const cJSON *ds)
{
	return history_template_patch(ds);
}

/* A new ControllerRevision of ds (kube's snapshot). */
static cJSON *
revision_new(const cJSON *ds, const char *name, const char *hash, const cJSON *data,
    long long number)
{
	return history_revision_new(daemonsets_resource(), ds, name, hash, data, number);
}

/* Reads the cached revision namespace/name's body, NULL when absent. */
static cJSON *
revision_by_name(struct daemonset_state *st, const char *namespace, const char *name)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_REVISION_BY_NAME]);
	cJSON *body = NULL;

	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		body = controller_column_json(stmt, 0);
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return body;
}

/* The status update that moves collisionCount on (kube's answer to a name taken). */
static void
collision_status(struct sync_result *out, const cJSON *ds, const char *namespace,
    const char *name, long long count)
{
	struct action *a = xcalloc(1, sizeof *a);
	cJSON *object = cJSON_Duplicate(ds, 1);

	json_set(json_child_object(object, "status"), "collisionCount",
	    cJSON_CreateNumber((double)(count + 1)));
	a->type = ACTION_UPDATE_STATUS;
	a->verb = "update-status";
	a->resource = daemonsets_resource();
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(name);
	a->uid = xstrdup(out->owner_uid);
	a->body = object;
	a->reason = xasprintf("collisionCount=%lld: a revision of another template has the name",
	    count + 1);
	out->status = a;
}

/*
 * The history (kube's constructHistory): finds the current revision or plans its
 * creation, renumbers it past the others, and sets *hash to the hash new pods carry and
 * *current to the current revision's index (-1: being created). Returns 1 when a
 * collision ends the sync.
 */
static int
history_sync(struct daemonset_state *st, struct sync_result *out, const cJSON *ds,
    const char *namespace, const char *name, struct ds_view *v, char **hash, int *current)
{
	cJSON *data = revision_data(ds);
	long long next = 1, collisions = -1;
	int cur = -1;
	const cJSON *cc = json_path(ds, "status.collisionCount");

	if (cJSON_IsNumber(cc))
		collisions = (long long)cc->valuedouble;
	for (int i = 0; i < v->nrevisions; i++) {
		long long number = json_int(v->revisions[i].body, "revision", 0);

		if (history_data_equal(cJSON_GetObjectItemCaseSensitive(v->revisions[i].body,
		    "data"), data)) {
			if (cur < 0 || number > json_int(v->revisions[cur].body, "revision", 0))
				cur = i;
		}
	}
	for (int i = 0; i < v->nrevisions; i++) {
		long long number = json_int(v->revisions[i].body, "revision", 0);

		if (i != cur && number >= next)
			next = number + 1;
	}
	*current = cur;
	if (cur >= 0) {
		const cJSON *body = v->revisions[cur].body;
		const char *label = json_string(json_path(body, "metadata.labels"),
		    HISTORY_HASH_LABEL);

		/* A revision without the label is named by its name (kube relabels it). */
		*hash = xstrdup(label[0] != '\0' ? label : v->revisions[cur].name);
		if (label[0] == '\0' || json_int(body, "revision", 0) < next) {
			cJSON *update = cJSON_Duplicate(body, 1);

			json_set(json_child_object(json_child_object(update, "metadata"), "labels"),
			    HISTORY_HASH_LABEL, cJSON_CreateString(*hash));
			if (json_int(body, "revision", 0) < next)
				json_set(update, "revision", cJSON_CreateNumber((double)next));
			revision_write(out, ACTION_UPDATE, "update", namespace, v->revisions[cur].name,
			    update, xasprintf("the current revision, numbered %lld", next));
		}
	} else {
		char *h = history_template_hash(json_path(ds, "spec.template"), collisions);
		char *rname = xasprintf("%s-%s", name, h);
		cJSON *taken = revision_by_name(st, namespace, rname);

		if (taken != NULL && !history_data_equal(cJSON_GetObjectItemCaseSensitive(taken,
		    "data"), data)) {
			collision_status(out, ds, namespace, name, collisions < 0 ? 0 : collisions);
			out->failed = 1;
			cJSON_Delete(taken);
			cJSON_Delete(data);
			free(rname);
			free(h);
			*hash = NULL;
			return 1;
		}
		if (taken == NULL)
			revision_write(out, ACTION_CREATE, "create", namespace, rname,
			    revision_new(ds, rname, h, data, next),
			    xasprintf("the template's revision %lld", next));
		cJSON_Delete(taken);
		free(rname);
		*hash = h;
	}
	cJSON_Delete(data);
	return 0;
}

/* kube's cleanupHistory: the old revisions past revisionHistoryLimit, oldest first, whose
 * hash no pod carries. */
static void
history_cleanup(struct sync_result *out, const cJSON *ds, const char *namespace,
    const struct ds_view *v, int current)
{
	long long limit = json_int(json_path(ds, "spec"), "revisionHistoryLimit", 10);
	struct history_revision *old = xmalloc(((size_t)v->nrevisions + 1) * sizeof *old);
	long long kill;
	int n = 0;

	for (int i = 0; i < v->nrevisions; i++) {
		if (i == current)
			continue;
		old[n].name = v->revisions[i].name;
		old[n].revision = json_int(v->revisions[i].body, "revision", 0);
		/* kube sorts by revision alone: equal ones stay in name order here. */
		old[n].created = 0;
		old[n].index = i;
		n++;
	}
	kill = n - limit;
	history_sort(old, n);
	for (int i = 0; i < n && kill > 0; i++) {
		const char *hash = json_string(json_path(v->revisions[old[i].index].body,
		    "metadata.labels"), HISTORY_HASH_LABEL);
		int live = 0;
		struct action *a;

		for (int j = 0; j < v->npods && hash[0] != '\0'; j++)
			live |= !v->pods[j].unclaimed && v->pods[j].node != NULL &&
			    strcmp(v->pods[j].hash, hash) == 0;
		if (live)
			continue;
		a = revision_write(out, ACTION_DELETE, "delete", namespace, old[i].name, NULL,
		    xasprintf("revision %lld, past revisionHistoryLimit %lld", old[i].revision,
		    limit));
		a->uid = xstrdup(json_string(json_path(v->revisions[old[i].index].body,
		    "metadata"), "uid"));
		kill--;
	}
	free(old);
}

/* --- failed pods' backoff -------------------------------------------------------------- */

/* kube's hasExpired: an entry untouched for twice the maximum starts again. */
static int
backoff_expired(const struct failed_backoff *b, double now)
{
	return now - b->last_update > 2 * FAILED_BACKOFF_MAX;
}

/* Drops the expired entries (kube's Backoff.GC) and returns key's, or NULL. */
static struct failed_backoff *
backoff_find(struct daemonset_state *st, const char *key, double now)
{
	struct failed_backoff *found = NULL;
	int n = 0;

	for (int i = 0; i < st->nbackoffs; i++) {
		if (backoff_expired(&st->backoffs[i], now)) {
			free(st->backoffs[i].key);
			continue;
		}
		st->backoffs[n++] = st->backoffs[i];
	}
	st->nbackoffs = n;
	for (int i = 0; i < n; i++) {
		if (strcmp(st->backoffs[i].key, key) == 0)
			found = &st->backoffs[i];
	}
	return found;
}

/*
 * kube's IsInBackOffSinceUpdate, then Next: returns 0 when a failed pod under key may be
 * deleted now (and doubles its backoff, from 1 s up to 15 min); else the backoff to wait
 * before looking again.
 */
static double
backoff_wait(struct daemonset_state *st, const char *key, double now)
{
	struct failed_backoff *b = backoff_find(st, key, now);

	if (b != NULL && now - b->last_update < b->backoff)
		return b->backoff;
	if (b == NULL) {
		st->backoffs = xrealloc(st->backoffs,
		    (size_t)(st->nbackoffs + 1) * sizeof *st->backoffs);
		b = &st->backoffs[st->nbackoffs++];
		b->key = xstrdup(key);
		b->backoff = FAILED_BACKOFF_INITIAL;
	} else {
		b->backoff = b->backoff * 2 < FAILED_BACKOFF_MAX ? b->backoff * 2 :
		    FAILED_BACKOFF_MAX;
	}
	b->last_update = now;
	return 0;
}

/* --- manage and update ----------------------------------------------------------------- */

/* Plans a pod for node (kube's syncNodes creation). */
static void
create_on_node(struct sync_result *out, const cJSON *ds, const cJSON *template,
    const char *namespace, const char *node, const char *why)
{
	cJSON *owner = cJSON_Duplicate(ds, 1), *t = cJSON_Duplicate(template, 1), *pod;

	daemonset_pin_to_node(json_child_object(t, "spec"), node);
	json_set(json_child_object(owner, "spec"), "template", t);
	pod = replicaset_pod_from_template_of(daemonsets_resource(), owner);
	cJSON_Delete(owner);
	pod_action(out, ACTION_CREATE, namespace, NULL, pod, xasprintf("node %s: %s", node, why));
}

/* Marks pod i for deletion once. */
static void
delete_pod(struct sync_result *out, const char *namespace, const struct ds_pod *p,
    char *why, int *marked)
{
	if (*marked) {
		free(why);
		return;
	}
	*marked = 1;
	pod_action(out, ACTION_DELETE, namespace, p, NULL, why);
}

/*
 * kube's manage and rollingUpdate: fills out->manage with the creations (when any) or the
 * deletions, at most DAEMONSET_BURST_REPLICAS.
 */
static int
manage(struct daemonset_state *st, struct sync_result *out, const cJSON *ds,
    const char *namespace, const char *hash, long long generation, struct ds_view *v,
    double now, char **error)
{
	int surge_allowed, *marked = xcalloc((size_t)v->npods + 1, sizeof *marked);
	char **create_nodes = xcalloc((size_t)v->nnodes + 1, sizeof *create_nodes);
	const char **create_why = xcalloc((size_t)v->nnodes + 1, sizeof *create_why);
	struct sync_result deletions = { 0 };
	long long max_surge = 0, max_unavailable = 0, desired = 0;
	int ncreate = 0, rc = 0;
	const char *type = json_string(json_path(ds, "spec.updateStrategy"), "type");
	int rolling = type[0] == '\0' || strcmp(type, "RollingUpdate") == 0;

	for (int i = 0; i < v->nnodes; i++)
		desired += v->nodes[i].should_run;
	if (daemonset_max_counts(ds, desired, &max_surge, &max_unavailable, error) != 0) {
		rc = -1;
		goto out;
	}
	/* kube's AllowsSurge: a rolling update with a maxSurge above 0. */
	surge_allowed = rolling && max_surge > 0;
	for (int i = 0; i < v->nnodes; i++) {
		struct ds_node *n = &v->nodes[i];
		int running[2] = { -1, -1 }, nrunning = 0;

		if (n->should_run && n->npods == 0) {
			create_nodes[ncreate] = n->name;
			create_why[ncreate++] = "the node should run a daemon pod and has none";
			continue;
		}
		if (!n->should_continue) {
			for (int k = 0; k < n->npods; k++) {
				struct ds_pod *p = &v->pods[n->pods[k]];

				if (!p->deleting)
					delete_pod(&deletions, namespace, p, xasprintf("node %s should "
					    "not run a daemon pod", n->name), &marked[n->pods[k]]);
			}
			continue;
		}
		for (int k = 0; k < n->npods; k++) {
			struct ds_pod *p = &v->pods[n->pods[k]];

			if (p->deleting)
				continue;
			if (strcmp(p->phase, "Failed") == 0) {
				char *bkey = xasprintf("%s/%lld/%s", json_string(json_path(ds,
				    "metadata"), "uid"), json_int(json_path(ds, "status"),
				    "observedGeneration", 0), n->name);
				double wait = backoff_wait(st, bkey, now);

				free(bkey);
				if (wait > 0) {
					/* Look again when the backoff is over (kube's
					 * enqueueDaemonSetAfter with the whole delay). */
					if (out->requeue_after == 0 || wait < out->requeue_after)
						out->requeue_after = wait;
					continue;
				}
				sync_result_add_event(out, "Warning", "FailedDaemonPod",
				    xasprintf("Found failed daemon pod %s/%s on node %s, will try to "
				    "kill it", namespace, p->name, n->name));
				delete_pod(&deletions, namespace, p, xasprintf("failed on node %s",
				    n->name), &marked[n->pods[k]]);
			} else if (strcmp(p->phase, "Succeeded") == 0) {
				sync_result_add_event(out, "Normal", "SucceededDaemonPod",
				    xasprintf("Found succeeded daemon pod %s/%s on node %s, will try to "
				    "delete it", namespace, p->name, n->name));
				delete_pod(&deletions, namespace, p, xasprintf("succeeded on node %s",
				    n->name), &marked[n->pods[k]]);
			} else if (!surge_allowed) {
				/* The oldest stays (they are in kube's order). */
				if (nrunning++ > 0)
					delete_pod(&deletions, namespace, p, xasprintf("node %s has an "
					    "older daemon pod", n->name), &marked[n->pods[k]]);
			} else {
				/* Surging: the oldest new pod and the oldest old pod stay. */
				int slot = p->updated ? 0 : 1;

				if (running[slot] < 0)
					running[slot] = n->pods[k];
				else
					delete_pod(&deletions, namespace, p, xasprintf("node %s has an "
					    "older daemon pod of its revision", n->name),
					    &marked[n->pods[k]]);
				nrunning++;
			}
		}
		if (!surge_allowed)
			continue;
		if (running[0] < 0 && running[1] < 0) {
			if (n->should_run) {
				create_nodes[ncreate] = n->name;
				create_why[ncreate++] = "its daemon pods are all gone";
			}
		} else if (running[0] >= 0 && running[1] >= 0) {
			struct ds_pod *newp = &v->pods[running[0]], *oldp = &v->pods[running[1]];

			if (!oldp->ready || newp->available)
				delete_pod(&deletions, namespace, oldp, xasprintf("node %s: its new "
				    "pod %s replaces it", n->name, newp->name), &marked[running[1]]);
		}
	}
	/* Pods not yet scheduled, for nodes that are gone. */
	for (int i = 0; i < v->npods; i++) {
		struct ds_pod *p = &v->pods[i];

		if (!p->unclaimed && !p->scheduled && p->node != NULL &&
		    find_node(v, p->node) == NULL)
			delete_pod(&deletions, namespace, p, xasprintf("not scheduled, and its node "
			    "%s is gone", p->node), &marked[i]);
	}

	/* The rolling update, when placement has nothing to do. */
	if (ncreate == 0 && deletions.nmanage == 0 && rolling) {
		struct daemonset_node_pods *np = xcalloc((size_t)v->nnodes + 1, sizeof *np);
		int *del = xcalloc((size_t)v->nnodes + 1, sizeof *del);
		int *cre = xcalloc((size_t)v->nnodes + 1, sizeof *cre);
		int *nodeof = xcalloc((size_t)v->nnodes + 1, sizeof *nodeof), m = 0;

		for (int i = 0; i < v->nnodes; i++) {
			struct ds_node *n = &v->nodes[i];
			struct daemonset_node_pods *q = &np[m];

			if (!n->should_run && n->npods == 0)
				continue;
			q->node = n->name;
			q->ok = 1;
			q->should_run = n->should_run;
			for (int k = 0; k < n->npods; k++) {
				struct ds_pod *p = &v->pods[n->pods[k]];

				if (p->deleting)
					continue;
				if (p->updated ? q->has_new : q->has_old)
					q->ok = 0;
				if (p->updated) {
					q->has_new = 1;
					q->new_available = p->available;
				} else {
					q->has_old = 1;
					q->old_available = p->available;
					q->old_pod = n->pods[k];
				}
			}
			if (!q->ok)
				q->has_new = q->has_old = 0;
			nodeof[m++] = i;
		}
		daemonset_rolling_update(np, m, desired, max_surge, max_unavailable, del, cre);
		for (int i = 0; i < m; i++) {
			if (cre[i]) {
				create_nodes[ncreate] = v->nodes[nodeof[i]].name;
				create_why[ncreate++] = "rolling update: a new pod beside the old one";
			}
			if (del[i])
				delete_pod(&deletions, namespace, &v->pods[np[i].old_pod],
				    xasprintf("rolling update: node %s's pod is of an old revision",
				    np[i].node), &marked[np[i].old_pod]);
		}
		free(np);
		free(del);
		free(cre);
		free(nodeof);
	}

	if (ncreate > 0) {
		cJSON *template = daemonset_pod_template(ds, generation, hash);

		out->creating = 1;
		for (int i = 0; i < ncreate && i < DAEMONSET_BURST_REPLICAS; i++)
			create_on_node(out, ds, template, namespace, create_nodes[i], create_why[i]);
		cJSON_Delete(template);
	} else {
		/* Deletions wait while creations are planned (see the header). */
		for (int i = 0; i < deletions.nmanage && i < DAEMONSET_BURST_REPLICAS; i++) {
			*action_append(&out->manage, &out->nmanage) = deletions.manage[i];
			memset(&deletions.manage[i], 0, sizeof deletions.manage[i]);
		}
	}
out:
	sync_result_clear(&deletions);
	free(marked);
	free(create_nodes);
	free(create_why);
	return rc;
}

/* --- status ---------------------------------------------------------------------------- */

struct ds_counts {
	long long desired, current, misscheduled, ready, updated, available;
};

static void
count_status(const struct ds_view *v, struct ds_counts *c)
{
	memset(c, 0, sizeof *c);
	for (int i = 0; i < v->nnodes; i++) {
		const struct ds_node *n = &v->nodes[i];

		if (n->should_run) {
			c->desired++;
			if (n->npods > 0) {
				const struct ds_pod *p = &v->pods[n->pods[0]];

				c->current++;
				c->ready += p->ready;
				c->available += p->available;
				c->updated += p->updated;
			}
		} else if (n->npods > 0) {
			c->misscheduled++;
		}
	}
}

/* kube's storeDaemonSetStatus: the status, when a count differs or the generation is not
 * yet observed. */
static void
status_action(struct sync_result *out, const cJSON *ds, const char *namespace,
    const char *name, const struct ds_counts *c)
{
	static const char *const fields[] = { "desiredNumberScheduled",
	    "currentNumberScheduled", "numberMisscheduled", "numberReady",
	    "updatedNumberScheduled", "numberAvailable", "numberUnavailable" };
	long long values[7] = { c->desired, c->current, c->misscheduled, c->ready, c->updated,
	    c->available, c->desired - c->available };
	const cJSON *old = cJSON_GetObjectItemCaseSensitive(ds, "status");
	long long generation = json_int(json_path(ds, "metadata"), "generation", 0);
	int changed = json_int(old, "observedGeneration", 0) < generation;
	cJSON *object, *status;
	struct action *a;

	for (int i = 0; i < 7; i++)
		changed |= json_int(old, fields[i], 0) != values[i];
	if (!changed)
		return;
	object = cJSON_Duplicate(ds, 1);
	status = json_child_object(object, "status");
	for (int i = 0; i < 7; i++)
		json_set(status, fields[i], cJSON_CreateNumber((double)values[i]));
	json_set(status, "observedGeneration", cJSON_CreateNumber((double)generation));
	a = xcalloc(1, sizeof *a);
	a->type = ACTION_UPDATE_STATUS;
	a->verb = "update-status";
	a->resource = daemonsets_resource();
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(name);
	a->uid = xstrdup(out->owner_uid);
	a->body = object;
	a->reason = xasprintf("desired=%lld current=%lld misscheduled=%lld ready=%lld "
	    "updated=%lld available=%lld", c->desired, c->current, c->misscheduled, c->ready,
	    c->updated, c->available);
	out->status = a;
}

/* --- sync ------------------------------------------------------------------------------ */

static int
daemonset_read(struct daemonset_state *st, const char *namespace, const char *name,
    char **uid, cJSON **ds, char **error)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_GET_DS]);
	int rc;

	*uid = NULL;
	*ds = NULL;
	sqlite3_bind_text(stmt, 1, namespace, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*uid = column_strdup(stmt, 0);
		*ds = controller_column_json(stmt, 1);
		rc = *ds != NULL ? SQLITE_DONE : SQLITE_ERROR;
	}
	return step_error(st, stmt, rc, "reading the DaemonSet", error);
}

/* The template generation the apiserver keeps in an annotation; -1 when absent or not a
 * number (kube's GetTemplateGeneration then has none). */
static long long
template_generation(const cJSON *ds)
{
	const cJSON *a = json_annotation(ds, DAEMONSET_GENERATION_ANNOTATION);
	long long g;

	if (!cJSON_IsString(a) || parse_int(a->valuestring, &g) != 0 || g < 0)
		return -1;
	return g;
}

static int
daemonset_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct daemonset_state *st = c->state;
	struct ds_view v = { 0 };
	struct ds_counts counts;
	char *namespace = NULL, *uid = NULL, *hash = NULL;
	const char *name;
	cJSON *ds = NULL;
	const cJSON *selector;
	struct selector *sel = NULL;
	char *sel_error = NULL;
	long long generation, min_ready;
	int rc = -1, caught_up, satisfied = 0, current = -1;

	out->controller = "daemonset";
	out->key = xstrdup(key);
	out->owner_resource = daemonsets_resource();
	if (controller_key_split(key, &namespace, &name) != 0)
		return error_set(error, "daemonset: bad key %s", key);
	if (daemonset_read(st, namespace, name, &uid, &ds, error) != 0)
		goto out;
	if (ds == NULL) {
		out->forget_expectations = 1;
		rc = 0;
		goto out;
	}
	out->owner_uid = xstrdup(uid);
	out->owner = cJSON_Duplicate(ds, 1);
	if ((caught_up = controller_caught_up(c, key, uid, out, error)) <= 0) {
		rc = caught_up;
		goto out;
	}
	/* Being deleted: nothing more (kube leaves it to the garbage collector). */
	if (json_is_set(ds, "metadata.deletionTimestamp")) {
		rc = 0;
		goto out;
	}
	selector = json_path(ds, "spec.selector");
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(selector, "matchLabels")) == 0 &&
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(selector,
	    "matchExpressions")) == 0) {
		sync_result_add_event(out, "Warning", "SelectingAll", xstrdup("This daemon set is "
		    "selecting all pods. A non-empty selector is required."));
		rc = 0;
		goto out;
	}
	sel = selector_from_json(selector, &sel_error);
	if (sel == NULL) {
		/* A selector the apiserver let through but that cannot be read: nothing to do
		 * until the DaemonSet changes (kube gives up on it the same way). */
		log_error("daemonset %s: invalid selector: %s", key, sel_error);
		free(sel_error);
		rc = 0;
		goto out;
	}
	generation = template_generation(ds);
	min_ready = json_int(json_path(ds, "spec"), "minReadySeconds", 0);
	if (load_nodes(st, ds, &v, error) != 0 ||
	    load_revisions(st, out, ds, sel, namespace, uid, &v, error) != 0)
		goto out;
	if (history_sync(st, out, ds, namespace, name, &v, &hash, &current)) {
		rc = 0;
		goto out;
	}
	if (load_pods(st, out, ds, sel, namespace, name, uid, min_ready, generation, hash, now,
	    &v, error) != 0)
		goto out;
	if (expectations_satisfied(c->expectations, key, now, &satisfied, error) != 0)
		goto out;
	if (satisfied) {
		if (manage(st, out, ds, namespace, hash, generation, &v, now, error) != 0) {
			/* A maxSurge or maxUnavailable the API let through but that is no
			 * number nor percentage: as kube, an error, and the status as it is. */
			log_error("daemonset %s: %s", key, *error);
			free(*error);
			*error = NULL;
			out->failed = 1;
		}
		history_cleanup(out, ds, namespace, &v, current);
	} else {
		long long adds = 0, dels = 0;
		int found;

		expectations_get(c->expectations, key, &found, &adds, &dels, NULL, NULL);
		out->waiting = xasprintf("expecting %lld creations and %lld deletions to be "
		    "observed", adds, dels);
	}
	count_status(&v, &counts);
	status_action(out, ds, namespace, name, &counts);
	if (min_ready > 0 && counts.ready != counts.available &&
	    (out->requeue_after == 0 || min_ready < out->requeue_after))
		out->requeue_after = (double)min_ready;
	rc = 0;
out:
	view_clear(&v);
	selector_free(sel);
	cJSON_Delete(ds);
	free(hash);
	free(uid);
	free(namespace);
	return rc;
}

/* --- event handlers -------------------------------------------------------------------- */

/* Returns the key of the DaemonSet ref names in namespace if the cache has it with ref's
 * uid (malloc'd), or NULL. */
static char *
resolve_controller_ref(struct daemonset_state *st, const char *namespace, const cJSON *ref)
{
	sqlite3_stmt *stmt;
	char *key = NULL;

	if (ref == NULL || strcmp(json_string(ref, "kind"), "DaemonSet") != 0)
		return NULL;
	stmt = controller_stmt(st->stmt[STMT_DS_BY_UID]);
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
	log_error("daemonset: recording %s for %s: %s", what, key, error);
	free(error);
}

/* A pod event: its DaemonSet looks again; a new pod is a creation observed, a pod gone or
 * being deleted a deletion observed. */
static void
pod_event(struct controller *c, const cJSON *pod, int added, int gone,
    const struct controller_queue *q)
{
	const char *namespace = json_string(json_path(pod, "metadata"), "namespace");
	char *key = resolve_controller_ref(c->state, namespace, controllerref_of(pod));
	char *error = NULL, *pod_key;

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

/* 1 when the DaemonSet uid has a pod bound to node. */
static int
has_pod_on_node(struct daemonset_state *st, const char *uid, const char *node)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_DS_PODS_ON_NODE]);
	int found = 0;

	sqlite3_bind_text(stmt, 1, uid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, node, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		found = sqlite3_column_int(stmt, 0);
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return found;
}

/*
 * A node added, or its labels or taints changed (kube's shouldIgnoreNodeUpdate ignores
 * the rest: heartbeats): as kube's syncNodeUpdate, the DaemonSets queued are those for
 * which the node now wants a pod it has not, has a pod it may no longer keep, or has a
 * pod while their status counts misscheduled pods.
 */
static void
node_changed(struct daemonset_state *st, const cJSON *node, const struct controller_queue *q)
{
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_DS_ALL]);
	const char *node_name = json_string(json_path(node, "metadata"), "name");

	while (sqlite3_step(stmt) == SQLITE_ROW) {
		cJSON *ds = cJSON_Parse((const char *)sqlite3_column_text(stmt, 2));
		int run, cont, scheduled;

		if (ds == NULL)
			continue;
		daemonset_node_should_run(node, ds, &run, &cont);
		scheduled = has_pod_on_node(st, json_string(json_path(ds, "metadata"), "uid"),
		    node_name);
		if ((run && !scheduled) || (!cont && scheduled) ||
		    (scheduled && json_int(json_path(ds, "status"), "numberMisscheduled", 0) > 0)) {
			char *key = xasprintf("%s/%s", sqlite3_column_text(stmt, 0),
			    sqlite3_column_text(stmt, 1));

			q->add(key, q->arg);
			free(key);
		}
		cJSON_Delete(ds);
	}
	sqlite3_reset(stmt);
}

/* 1 when a and b are equal JSON, both absent included. */
static int
same_json(const cJSON *a, const cJSON *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return cJSON_Compare(a, b, 1);
}

/* 1 when a node update can change where daemon pods belong. */
static int
node_placement_changed(const cJSON *old, const cJSON *node)
{
	return !same_json(json_path(old, "metadata.labels"), json_path(node, "metadata.labels")) ||
	    !same_json(json_path(old, "spec.taints"), json_path(node, "spec.taints"));
}

static void
daemonset_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct daemonset_state *st = c->state;
	const cJSON *meta = json_path(ev->object, "metadata");
	const char *rname = ev->resource->name;
	cJSON *old = NULL;
	char *key, *error = NULL;

	(void)now;
	if (strcmp(rname, "daemonsets") == 0) {
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
	} else if (strcmp(rname, "nodes") == 0) {
		if (ev->type == INFORMER_UPDATED && ev->old_body != NULL)
			old = cJSON_Parse(ev->old_body);
		/* kube has no handler for a node's deletion: the pods there are the pod
		 * garbage collector's, and the status follows at the next sync. */
		if (ev->type != INFORMER_DELETED && (old == NULL ||
		    node_placement_changed(old, ev->object)))
			node_changed(st, ev->object, q);
	}
	cJSON_Delete(old);
}

static int
daemonset_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct daemonset_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_DS_KEYS], "daemonset", cb, arg, error);
}

/* A pod of a live LIST is active as kube's controller.IsPodActive says. */
static int
daemonset_pod_active(const cJSON *pod)
{
	const char *phase = json_string(json_path(pod, "status"), "phase");

	if (json_is_set(pod, "metadata.deletionTimestamp"))
		return 0;
	return strcmp(phase, "Succeeded") != 0 && strcmp(phase, "Failed") != 0;
}

/* After a restart: a DaemonSet's inherited expectations go once the cache shows the same
 * active pods as a live LIST by its selector. */
static const struct controller_recovery daemonset_recovery = {
	.owners_sql = "SELECT e.key, ds.uid, json_extract(ds.body, '$.spec.selector'),"
	    " ds.namespace, e.set_at"
	    " FROM expectations e"
	    " JOIN cache_objects ds ON ds.resource = 'daemonsets'"
	    "  AND ds.namespace || '/' || ds.name = e.key"
	    " WHERE e.controller = ?1 AND (e.adds > 0 OR e.deletes > 0)",
	.dependents = "pods",
	.cached_sql = "SELECT p.uid FROM object_owners o"
	    " JOIN cache_pods p ON p.id = o.object_id WHERE o.owner_uid = ?1"
	    " AND o.controller = 1 AND p.deletion_timestamp IS NULL"
	    " AND coalesce(p.phase, '') NOT IN ('Succeeded', 'Failed') ORDER BY p.uid",
	.active = daemonset_pod_active,
};

static const char *const daemonset_resources[] = {
	"daemonsets", "pods", "nodes", "controllerrevisions", NULL,
};

const struct controller_type daemonset_controller_type = {
	.name = "daemonset",
	.resources = daemonset_resources,
	.default_workers = 2,
	.workers_flag = "concurrent-daemonset-syncs",
	.workers_help = "DaemonSets synced at once",
	.event_component = "daemonset-controller",
	.client_name = "daemon-set-controller",
	.recovery = &daemonset_recovery,
	.init = daemonset_init,
	.fini = daemonset_fini,
	.handle_event = daemonset_handle_event,
	.list_keys = daemonset_list_keys,
	.sync = daemonset_sync,
};
