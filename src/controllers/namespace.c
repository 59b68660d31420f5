/*
 * namespace.c - the namespace controller: empties a namespace being deleted of every
 * namespaced resource, then removes its finalizer kubernetes, by kube-controller-manager's
 * rules (pkg/controller/namespace: the controller and its NamespacedResourcesDeleter).
 *
 * kube lists each resource of the namespace live after deleting its collection. Here the
 * cache holds every resource discovery lists (cache_objects by metadata, the typed tables;
 * the objects view unions them), so what a namespace still holds is a query. A key is a
 * namespace's name. A sync, from the cache:
 *
 * 1. The namespace gone, not being deleted, or finalized (spec.finalizers empty):
 *    nothing (a finalized one still gets phase Terminating if its status lacks it).
 * 2. Pods first (kube's OrderedNamespaceDeletion, GA and locked on in 1.36): they are
 *    deleted, and while some remain nothing else is, and the conditions carry no content
 *    totals (kube returns early).
 * 3. Then every other namespaced resource: a collection delete (propagation Background)
 *    where discovery lists deletecollection for the resource, a delete of each cached
 *    object not yet being deleted where it does not, both where the verbs are not known
 *    (api_resources.verbs NULL). kube deletes every collection in every pass; here a
 *    collection delete goes out when the cache shows an object of it not yet being
 *    deleted, and for every resource in a pass that finds the namespace empty (so the pass
 *    before the finalize deletes, as kube's does, what the cache has not seen yet).
 * 4. What remains once the pass's deletions are done is predicted from the cache, where
 *    kube lists: an object with finalizers stays, a pod bound to a node that has not
 *    finished stays for its grace period (one being deleted too); any other object goes at
 *    once. One being deleted without finalizers, not a pod, is gone on the server already:
 *    the cache lags its removal, and its DELETED event syncs the namespace again. Then
 *    kube's rule per resource: remaining objects wait for the grace estimate (pods: the
 *    longest terminationGracePeriodSeconds of the unfinished pods, or none once that long
 *    has passed since the namespace's deletion), or 15 s when they have finalizers, else
 *    they are the error "unexpected items still remain".
 * 5. The status: phase Terminating and kube's five conditions with its reasons and
 *    messages (PUT /status, only when they change; kube writes the phase first, then the
 *    conditions, here one write carries both). A deletion that fails skips the rest of
 *    its resource's, the other resources' still go, and the NamespaceDeletionContentFailure
 *    condition carries every failure; no finalize follows.
 * 6. Errors: synced again with backoff, as kube's rate limiter does (5 ms doubling up to
 *    60 s); content remaining: after kube's estimate/2 + 1 s; a cache that is behind:
 *    after NAMESPACE_RETRY_SECONDS. Else, once it is safe (below), the finalizer
 *    kubernetes is removed: PUT .../finalize of the cached namespace (its resourceVersion
 *    guards the write), spec.finalizers without it. A pass that writes the status
 *    finalizes in the next one, a second later: the finalize must carry the
 *    resourceVersion the status write made.
 *
 * When it is safe to finalize. kube lists every resource live right before; the cache
 * may lag. The rule here: (a) every informer of a namespaced resource has synced (the
 * manager runs no sync before that; the sync checks again, for plan); (b) the cache holds
 * no object in the namespace, of any resource, deleted or not; (c) the same pass sends the
 * collection delete of every resource that takes one, before the finalize, so that an
 * object created just before the namespace's deletion that the cache has not seen is
 * deleted all the same; (d) the namespace's events are handled 5 s late (kube's
 * namespaceDeletionGracePeriod), time for the watches to deliver such objects; (e) as
 * kube does, live lists of every resource (one object at most) must find the namespace
 * empty before anything of the pass is written: one that finds an object the cache has
 * not seen (one with a finalizer, a pod in its grace period, created just before the
 * deletion) fails the pass, which is tried again with backoff, by when the cache shows it.
 *
 * The handlers: a namespace added or updated with a deletionTimestamp is queued 5 s later
 * (kube's delay). Any object of any resource that changes or goes in a namespace being
 * deleted queues that namespace at once: the cache's news replaces kube's re-listing. A
 * namespace being deleted is synced again every --namespace-sync-period (kube's resync of
 * its namespace informer), whatever happens.
 *
 * For people, the view namespaces_terminating (schema/007-namespaces.sql) shows what holds
 * each namespace being deleted.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consistency.h"
#include "controllers/namespace.h"
#include "discovery.h"
#include "json.h"
#include "resource.h"
#include "restops.h"
#include "timeutil.h"
#include "util.h"

#define FINALIZER_KUBERNETES "kubernetes"
#define PHASE_TERMINATING "Terminating"
/* kube's namespaceDeletionGracePeriod: a namespace's events are handled this late. */
#define DELETION_GRACE_SECONDS 5.0
/* kube's finalizerEstimateSeconds: the wait for objects that finalizers hold. */
#define FINALIZER_ESTIMATE_SECONDS 15
/* How soon a pass that found the cache behind is tried again; the cache's events sync the
 * namespace again as soon as anything in it changes. A pass that fails is retried with
 * backoff instead, capped at NAMESPACE_MAX_BACKOFF_SECONDS (kube's nsControllerRateLimiter:
 * 5 ms doubling up to 60 s); only replay, which models no backoff, looks again after this. */
#define NAMESPACE_RETRY_SECONDS 5.0
#define NAMESPACE_MAX_BACKOFF_SECONDS 60.0
/* How soon the finalize follows a status write: the cache shows the write by then. */
#define FINALIZE_AFTER_STATUS_SECONDS 1.0

enum {
	STMT_NAMESPACE,
	STMT_TERMINATING,
	STMT_KEYS,
	STMT_RESOURCES,
	STMT_SYNCED,
	STMT_OBJECTS,
	STMT_POD_GRACE,
	STMT_DISCOVERY_FAILURES,
	STMT_COUNT
};

static const char *const ns_sql[STMT_COUNT] = {
	[STMT_NAMESPACE] =
	    "SELECT uid, deletion_timestamp, body FROM cache_objects"
	    " WHERE resource = 'namespaces' AND namespace = '' AND name = ?1",
	[STMT_TERMINATING] =
	    "SELECT 1 FROM cache_objects WHERE resource = 'namespaces' AND namespace = ''"
	    " AND name = ?1 AND deletion_timestamp IS NOT NULL",
	[STMT_KEYS] =
	    "SELECT name FROM cache_objects WHERE resource = 'namespaces'"
	    " AND deletion_timestamp IS NOT NULL ORDER BY name",
	/* The namespaced resources cached in cache_objects: their verbs (NULL: not known)
	 * and whether their informer has synced. */
	[STMT_RESOURCES] =
	    "SELECT a.resource, a.verbs, coalesce(i.synced, 0) FROM api_resources a"
	    " LEFT JOIN informers i ON i.resource = a.resource"
	    " WHERE a.namespaced AND a.served ORDER BY a.resource",
	[STMT_SYNCED] = "SELECT synced FROM informers WHERE resource = ?1",
	/* Every cached object of namespace ?1: resource, name, whether it is being deleted,
	 * its finalizers (JSON), and for a pod whether it is bound to a node, whether it has
	 * finished, and its grace period. */
	[STMT_OBJECTS] =
	    "SELECT o.resource, o.name, o.deleting_since IS NOT NULL, o.finalizers,"
	    " p.node_name IS NOT NULL, coalesce(p.phase, '') IN ('Succeeded', 'Failed'),"
	    " coalesce(json_extract(p.body, '$.spec.terminationGracePeriodSeconds'), 30)"
	    " FROM objects o LEFT JOIN cache_pods p ON o.resource = 'pods' AND p.uid = o.uid"
	    " WHERE o.namespace = ?1 AND o.namespaced ORDER BY o.resource, o.name",
	/* kube's estimateGracefulTerminationForPods: the longest grace period of the
	 * namespace's pods that have not finished. */
	[STMT_POD_GRACE] =
	    "SELECT coalesce(max(json_extract(body, '$.spec.terminationGracePeriodSeconds')),"
	    " 0) FROM cache_pods WHERE namespace = ?1"
	    " AND coalesce(phase, '') NOT IN ('Succeeded', 'Failed')",
	[STMT_DISCOVERY_FAILURES] =
	    "SELECT group_version FROM discovery_failures ORDER BY group_version",
};

struct ns_state {
	sqlite3_stmt *stmt[STMT_COUNT];
};

/* --- strings and counts -------------------------------------------------------------- */

/* A list of strings (malloc'd). */
struct strings {
	char **items;
	int n;
};

static void
strings_add(struct strings *s, char *item)
{
	s->items = xrealloc(s->items, (size_t)(s->n + 1) * sizeof *s->items);
	s->items[s->n++] = item;
}

static void
strings_clear(struct strings *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->items[i]);
	free(s->items);
	memset(s, 0, sizeof *s);
}

static int
compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The items sorted (as Go's sort.Strings: bytewise) and joined by ", " (malloc'd). */
static char *
strings_join_sorted(struct strings *s)
{
	struct buf b;

	if (s->n > 1)
		qsort(s->items, (size_t)s->n, sizeof *s->items, compare_strings);
	buf_init(&b);
	for (int i = 0; i < s->n; i++)
		buf_printf(&b, "%s%s", i > 0 ? ", " : "", s->items[i]);
	return buf_detach(&b);
}

/* How many objects each finalizer holds. */
struct tally {
	struct strings names;
	int *counts;
};

static void
tally_add(struct tally *t, const char *name, int count)
{
	for (int i = 0; i < t->names.n; i++) {
		if (strcmp(t->names.items[i], name) == 0) {
			t->counts[i] += count;
			return;
		}
	}
	t->counts = xrealloc(t->counts, (size_t)(t->names.n + 1) * sizeof *t->counts);
	t->counts[t->names.n] = count;
	strings_add(&t->names, xstrdup(name));
}

static void
tally_clear(struct tally *t)
{
	strings_clear(&t->names);
	free(t->counts);
	t->counts = NULL;
}

/* --- conditions ------------------------------------------------------------------------ */

/* The conditions kube's namespace deleter keeps, in its order (conditionTypes). */
enum {
	COND_DISCOVERY,
	COND_GV_PARSING,
	COND_CONTENT_FAILURE,
	COND_CONTENT_REMAINING,
	COND_FINALIZERS_REMAINING,
	COND_COUNT
};

static const struct {
	const char *type;
	const char *failed_reason;	/* status True */
	const char *ok_reason;		/* status False */
	const char *ok_message;
} conditions[COND_COUNT] = {
	[COND_DISCOVERY] = { "NamespaceDeletionDiscoveryFailure", "DiscoveryFailed",
	    "ResourcesDiscovered", "All resources successfully discovered" },
	[COND_GV_PARSING] = { "NamespaceDeletionGroupVersionParsingFailure",
	    "GroupVersionParsingFailed", "ParsedGroupVersions",
	    "All legacy kube types successfully parsed" },
	[COND_CONTENT_FAILURE] = { "NamespaceDeletionContentFailure", "ContentDeletionFailed",
	    "ContentDeleted", "All content successfully deleted, may be waiting on finalization" },
	[COND_CONTENT_REMAINING] = { "NamespaceContentRemaining", "SomeResourcesRemain",
	    "ContentRemoved", "All content successfully removed" },
	[COND_FINALIZERS_REMAINING] = { "NamespaceFinalizersRemaining", "SomeFinalizersRemain",
	    "ContentHasNoFinalizers", "All content-preserving finalizers finished" },
};

/* Returns the member called type of the conditions array, or NULL. */
static cJSON *
condition_find(cJSON *list, const char *type)
{
	cJSON *c;

	cJSON_ArrayForEach(c, list) {
		if (strcmp(json_string(c, "type"), type) == 0)
			return c;
	}
	return NULL;
}

/*
 * kube's updateConditions: each of the five conditions is failing[i] (status True, the
 * failure's reason) or else the success one (status False). A condition the list lacks is
 * appended; one whose status, reason or message differs is rewritten in place, its
 * lastTransitionTime moved to now only when its status changed. Other conditions stay.
 * Returns 1 when the list changed.
 */
static int
conditions_update(cJSON *list, char *const failing[COND_COUNT], const char *now)
{
	int changed = 0;

	for (int i = 0; i < COND_COUNT; i++) {
		const char *status = failing[i] != NULL ? "True" : "False";
		const char *reason = failing[i] != NULL ? conditions[i].failed_reason :
		    conditions[i].ok_reason;
		const char *message = failing[i] != NULL ? failing[i] : conditions[i].ok_message;
		cJSON *c = condition_find(list, conditions[i].type);

		if (c == NULL) {
			c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "type", conditions[i].type);
			cJSON_AddStringToObject(c, "status", status);
			cJSON_AddStringToObject(c, "lastTransitionTime", now);
			cJSON_AddStringToObject(c, "reason", reason);
			cJSON_AddStringToObject(c, "message", message);
			cJSON_AddItemToArray(list, c);
			changed = 1;
			continue;
		}
		if (strcmp(json_string(c, "status"), status) == 0 &&
		    strcmp(json_string(c, "reason"), reason) == 0 &&
		    strcmp(json_string(c, "message"), message) == 0)
			continue;
		if (strcmp(json_string(c, "status"), status) != 0)
			json_set(c, "lastTransitionTime", cJSON_CreateString(now));
		json_set(c, "status", cJSON_CreateString(status));
		json_set(c, "reason", cJSON_CreateString(reason));
		json_set(c, "message", cJSON_CreateString(message));
		changed = 1;
	}
	return changed;
}

/* kube's makeDeleteContentCondition message, from the errors (sorted here), or NULL. */
static char *
content_failure_message(struct strings *errors)
{
	char *joined, *message;

	if (errors->n == 0)
		return NULL;
	joined = strings_join_sorted(errors);
	message = xasprintf("Failed to delete all resource types, %d remaining: %s", errors->n,
	    joined);
	free(joined);
	return message;
}

/*
 * The namespace ns with phase Terminating and the conditions failing describes (with the
 * content errors, if any, as the content failure), or NULL when that changes nothing.
 */
static cJSON *
status_object(const cJSON *ns, char *failing[COND_COUNT], struct strings *errors, double now)
{
	cJSON *copy = cJSON_Duplicate(ns, 1);
	cJSON *status = json_child_object(copy, "status");
	cJSON *list = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	char when[TIME_RFC3339_SIZE];
	int changed = 0;

	if (strcmp(json_string(status, "phase"), PHASE_TERMINATING) != 0) {
		json_set(status, "phase", cJSON_CreateString(PHASE_TERMINATING));
		changed = 1;
	}
	if (failing != NULL) {
		if (!cJSON_IsArray(list)) {
			list = cJSON_CreateArray();
			json_set(status, "conditions", list);
		}
		time_format_rfc3339((time_t)now, when);
		free(failing[COND_CONTENT_FAILURE]);
		failing[COND_CONTENT_FAILURE] = content_failure_message(errors);
		changed |= conditions_update(list, failing, when);
	}
	if (!changed) {
		cJSON_Delete(copy);
		return NULL;
	}
	return copy;
}

/* --- a pass over one namespace ---------------------------------------------------------- */

/* One namespaced resource, as the cache shows it in the namespace. */
struct ns_resource {
	const struct resource *resource;
	int verbs;			/* DISCOVERY_* bits; -1: not known */
	int cached;			/* its objects in the namespace */
	int remaining;			/* those left once the pass's deletions are done */
	int deleting_without_finalizers;	/* of those, being deleted with none */
	struct strings pending;		/* the names of those not being deleted yet */
	struct tally finalizers;	/* the finalizers of the remaining ones */
};

struct ns_pass {
	struct controller *c;
	const char *name;		/* the namespace */
	double now;
	double deleted_at;		/* its deletionTimestamp, Unix seconds */
	struct ns_resource *res;
	int nres;
	int cached;			/* objects the cache holds in the namespace */
	int unsynced;			/* resources whose informer has not synced */
	long long estimate;		/* kube's estimate: seconds until the content goes */
	struct strings errors;		/* kube's content deletion errors */
	char *failing[COND_COUNT];	/* the conditions that fail: their messages */
	struct tally remaining;		/* "pods." → objects left */
	struct tally finalizers;	/* finalizer → objects it holds */
};

static void
ns_pass_clear(struct ns_pass *p)
{
	for (int i = 0; i < p->nres; i++) {
		strings_clear(&p->res[i].pending);
		tally_clear(&p->res[i].finalizers);
	}
	free(p->res);
	strings_clear(&p->errors);
	for (int i = 0; i < COND_COUNT; i++)
		free(p->failing[i]);
	tally_clear(&p->remaining);
	tally_clear(&p->finalizers);
}

/* Appends resource r, with verbs, to p; counts it unsynced when its informer is not. */
static void
ns_pass_add_resource(struct ns_pass *p, const struct resource *r, int verbs, int synced)
{
	struct ns_resource *nr;

	p->res = xrealloc(p->res, (size_t)(p->nres + 1) * sizeof *p->res);
	nr = &p->res[p->nres++];
	memset(nr, 0, sizeof *nr);
	nr->resource = r;
	nr->verbs = verbs;
	if (!synced)
		p->unsynced++;
}

static struct ns_resource *
ns_pass_resource(struct ns_pass *p, const char *name)
{
	for (int i = 0; i < p->nres; i++) {
		if (strcmp(p->res[i].resource->name, name) == 0)
			return &p->res[i];
	}
	return NULL;
}

/* True when the informer of resource name has synced. */
static int
informer_synced(struct controller *c, const char *name)
{
	struct ns_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_SYNCED]);
	int synced;

	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	synced = sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_int(stmt, 0);
	sqlite3_reset(stmt);
	return synced;
}

/*
 * The namespaced resources (kube's ServerPreferredNamespacedResources with the delete
 * verb): pods first, then the other typed ones of their own tables, then those of
 * cache_objects as discovery lists them, each once.
 */
static int
ns_pass_resources(struct ns_pass *p, char **error)
{
	struct ns_state *st = p->c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_RESOURCES]);
	/* The typed ones are built in: served with deletecollection by every cluster. */
	const int builtin = DISCOVERY_LIST | DISCOVERY_WATCH | DISCOVERY_DELETE |
	    DISCOVERY_DELETECOLLECTION;
	int rc;

	ns_pass_add_resource(p, resource_find("pods"), builtin, informer_synced(p->c, "pods"));
	for (int i = 0; i < resource_count; i++) {
		const struct resource *r = resource_all[i];

		if (r->namespaced && !resource_in_objects(r) && strcmp(r->name, "pods") != 0)
			ns_pass_add_resource(p, r, builtin, informer_synced(p->c, r->name));
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(stmt, 0);
		const struct resource *r = resource_find_any(name);

		if (r == NULL) {
			/* Rows of a resource this run has not registered yet: the cache
			 * cannot speak for it. */
			p->unsynced++;
			continue;
		}
		if (ns_pass_resource(p, r->name) != NULL)
			continue;
		ns_pass_add_resource(p, r, sqlite3_column_type(stmt, 1) == SQLITE_NULL ? -1 :
		    sqlite3_column_int(stmt, 1), sqlite3_column_int(stmt, 2));
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "namespace: reading the namespaced resources: %s",
		    sqlite3_errmsg(store_db(p->c->store)));
	return 0;
}

/*
 * True when an object stays once deleted: it has finalizers, or it is a pod bound to a
 * node that has not finished (and has a grace period, unless its deletion has begun),
 * which the kubelet must stop first.
 */
static int
object_stays(const char *resource, int deleting, int finalizers, int bound, int finished,
    long long grace)
{
	if (finalizers)
		return 1;
	if (strcmp(resource, "pods") != 0)
		return 0;
	return bound && (deleting || (!finished && grace > 0));
}

/* Reads every cached object of the namespace into the pass's resources. */
static int
ns_pass_objects(struct ns_pass *p, char **error)
{
	struct ns_state *st = p->c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_OBJECTS]);
	int rc;

	sqlite3_bind_text(stmt, 1, p->name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *resource = (const char *)sqlite3_column_text(stmt, 0);
		const char *name = (const char *)sqlite3_column_text(stmt, 1);
		int deleting = sqlite3_column_int(stmt, 2);
		const char *text = (const char *)sqlite3_column_text(stmt, 3);
		cJSON *finalizers = text != NULL ? cJSON_Parse(text) : NULL;
		struct ns_resource *nr = ns_pass_resource(p, resource);
		const cJSON *f;

		p->cached++;
		if (nr == NULL) {
			/* A resource that takes no delete, or is not served any more. */
			cJSON_Delete(finalizers);
			continue;
		}
		nr->cached++;
		if (!deleting)
			strings_add(&nr->pending, xstrdup(name));
		if (object_stays(resource, deleting, cJSON_GetArraySize(finalizers) > 0,
		    sqlite3_column_int(stmt, 4), sqlite3_column_int(stmt, 5),
		    sqlite3_column_int64(stmt, 6))) {
			nr->remaining++;
			cJSON_ArrayForEach(f, finalizers) {
				if (cJSON_IsString(f))
					tally_add(&nr->finalizers, f->valuestring, 1);
			}
		}
		cJSON_Delete(finalizers);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return error_set(error, "namespace %s: reading its objects: %s", p->name,
		    sqlite3_errmsg(store_db(p->c->store)));
	return 0;
}

/* kube's estimateGracefulTermination: for pods, the longest grace period of those not
 * finished, unless that long has passed since the namespace's deletion; else 0. */
static long long
grace_estimate(struct ns_pass *p, const struct ns_resource *nr)
{
	struct ns_state *st = p->c->state;
	sqlite3_stmt *stmt;
	long long estimate = 0;

	if (strcmp(nr->resource->name, "pods") != 0)
		return 0;
	stmt = controller_stmt(st->stmt[STMT_POD_GRACE]);
	sqlite3_bind_text(stmt, 1, p->name, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		estimate = sqlite3_column_int64(stmt, 0);
	sqlite3_reset(stmt);
	if (p->now - p->deleted_at >= (double)estimate)
		return 0;
	return estimate;
}

/* kube's GroupVersionResource.String() of r: "apps/v1, Resource=deployments",
 * "/v1, Resource=pods" (malloc'd). */
static char *
gvr_string(const struct resource *r)
{
	const char *plural = r->plural != NULL ? r->plural : r->name;

	return xasprintf("%s%s, Resource=%s", resource_group_length(r->api_version) > 0 ?
	    "" : "/", r->api_version, plural);
}

/* "pods.", "deployments.apps", "widgets.example.com": kube's resource.group. */
static char *
resource_dot_group(const struct resource *r)
{
	const char *plural = r->plural != NULL ? r->plural : r->name;
	size_t n = resource_group_length(r->api_version);

	return xasprintf("%s.%.*s", plural, (int)n, r->api_version);
}

/* Appends a deletion write aimed at the namespace's content. */
static struct action *
deletion_write(struct sync_result *out, const struct ns_pass *p, const struct resource *r,
    enum action_type type, const char *verb)
{
	struct action *a = action_append(&out->writes, &out->nwrites);

	a->type = type;
	a->verb = verb;
	a->resource = r;
	a->namespace = xstrdup(p->name);
	/* As kube: the garbage collector gets no orphan finalizer to add. */
	a->propagation = RESTOPS_PROPAGATE_BACKGROUND;
	/* A failure is reported in the NamespaceDeletionContentFailure condition, and the
	 * other resources' deletions still go (kube's deleteAllContent); the resource's own
	 * next deletions do not (kube's deleteEachItem returns at its first error). */
	a->error_prefix = "";
	a->failure_goes_on = 1;
	return a;
}

/*
 * kube's deleteAllContentForGroupVersionResource for one resource: its deletions, then
 * what remains decides the estimate, or an error. final: the namespace holds nothing in
 * the cache (every collection is deleted).
 */
static void
ns_pass_sweep(struct ns_pass *p, struct ns_resource *nr, int final, struct sync_result *out)
{
	long long estimate = grace_estimate(p, nr);
	int collection = nr->verbs < 0 || (nr->verbs & DISCOVERY_DELETECOLLECTION);
	int each = nr->verbs < 0 || !(nr->verbs & DISCOVERY_DELETECOLLECTION);
	struct action *a;
	char *group;

	if (collection && (nr->pending.n > 0 || final)) {
		a = deletion_write(out, p, nr->resource, ACTION_DELETE_COLLECTION,
		    "delete-collection");
		a->reason = xasprintf("%d not being deleted yet", nr->pending.n);
	}
	for (int i = 0; each && i < nr->pending.n; i++) {
		a = deletion_write(out, p, nr->resource, ACTION_DELETE, "delete");
		a->name = xstrdup(nr->pending.items[i]);
		a->not_allowed_ok = 1;	/* kube's deleteEachItem skips it */
		a->reason = xstrdup(nr->verbs < 0 ? "the resource's verbs are not known" :
		    "the resource takes no collection delete");
	}
	if (nr->remaining == 0)
		return;
	if (estimate == 0 && nr->finalizers.names.n > 0)
		estimate = FINALIZER_ESTIMATE_SECONDS;
	if (estimate == 0) {
		/* Nothing will take them away: kube's error. */
		char *gvr = gvr_string(nr->resource);

		strings_add(&p->errors, xasprintf("unexpected items still remain in namespace: "
		    "%s for gvr: %s", p->name, gvr));
		free(gvr);
	}
	if (estimate > p->estimate)
		p->estimate = estimate;
	group = resource_dot_group(nr->resource);
	tally_add(&p->remaining, group, nr->remaining);
	free(group);
	for (int i = 0; i < nr->finalizers.names.n; i++)
		tally_add(&p->finalizers, nr->finalizers.names.items[i], nr->finalizers.counts[i]);
}

/* kube's ProcessDiscoverResourcesErr: sets the pass's discovery failure when the last
 * read of discovery missed group-versions (worded as client-go words stale ones). */
static int
discovery_failure_message(struct ns_pass *p, char **error)
{
	struct ns_state *st = p->c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_DISCOVERY_FAILURES]);
	struct strings groups = { NULL, 0 };
	char *joined;
	int rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *gv = (const char *)sqlite3_column_text(stmt, 0);

		strings_add(&groups, xasprintf("%s: stale GroupVersion discovery: %s", gv, gv));
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		strings_clear(&groups);
		return error_set(error, "namespace: reading the failures of discovery: %s",
		    sqlite3_errmsg(store_db(p->c->store)));
	}
	if (groups.n > 0) {
		joined = strings_join_sorted(&groups);
		p->failing[COND_DISCOVERY] = xasprintf("Discovery failed for some groups, %d "
		    "failing: unable to retrieve the complete list of server APIs: %s", groups.n,
		    joined);
		free(joined);
	}
	strings_clear(&groups);
	return 0;
}

/* kube's ProcessContentTotals: the resources and the finalizers that remain. */
static void
content_totals(struct ns_pass *p)
{
	struct strings lines = { NULL, 0 };
	char *joined;

	for (int i = 0; i < p->remaining.names.n; i++)
		strings_add(&lines, xasprintf("%s has %d resource instances",
		    p->remaining.names.items[i], p->remaining.counts[i]));
	if (lines.n > 0) {
		joined = strings_join_sorted(&lines);
		p->failing[COND_CONTENT_REMAINING] = xasprintf("Some resources are remaining: %s",
		    joined);
		free(joined);
	}
	strings_clear(&lines);
	for (int i = 0; i < p->finalizers.names.n; i++)
		strings_add(&lines, xasprintf("%s in %d resource instances",
		    p->finalizers.names.items[i], p->finalizers.counts[i]));
	if (lines.n > 0) {
		joined = strings_join_sorted(&lines);
		p->failing[COND_FINALIZERS_REMAINING] = xasprintf("Some content in the namespace "
		    "has finalizers remaining: %s", joined);
		free(joined);
	}
	strings_clear(&lines);
}

/* --- the writes to the namespace -------------------------------------------------------- */

/* The status to send when deletions failed with messages: the pass's conditions, its
 * content errors and those (kube aggregates them all into the ContentFailure condition).
 * context: {"namespace", "failing" (five messages or nulls), "errors", "now"}. */
static cJSON *
status_on_failure(const struct action *a, const char *const *messages, int n)
{
	const cJSON *ctx = a->failure_context;
	const cJSON *item;
	char *failing[COND_COUNT] = { NULL };
	struct strings errors = { NULL, 0 };
	cJSON *body;
	int i = 0;

	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(ctx, "failing")) {
		if (i < COND_COUNT && cJSON_IsString(item))
			failing[i] = xstrdup(item->valuestring);
		i++;
	}
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(ctx, "errors")) {
		if (cJSON_IsString(item))
			strings_add(&errors, xstrdup(item->valuestring));
	}
	for (i = 0; i < n; i++)
		strings_add(&errors, xstrdup(messages[i]));
	body = status_object(cJSON_GetObjectItemCaseSensitive(ctx, "namespace"), failing,
	    &errors, (double)json_int(ctx, "now", 0));
	for (i = 0; i < COND_COUNT; i++)
		free(failing[i]);
	strings_clear(&errors);
	return body;
}

/* Sets out's status: phase Terminating and the pass's conditions (none when
 * with_conditions is 0) when they change, and the ContentFailure condition when a
 * deletion fails. */
static void
ns_pass_status(struct ns_pass *p, const cJSON *ns, int with_conditions,
    struct sync_result *out)
{
	cJSON *body = status_object(ns, with_conditions ? p->failing : NULL, &p->errors,
	    p->now);
	cJSON *ctx, *list;
	struct action *a;

	if (body == NULL && out->nwrites == 0)
		return;
	a = out->status = xcalloc(1, sizeof *out->status);
	a->type = ACTION_UPDATE_STATUS;
	a->verb = "update-status";
	a->resource = out->owner_resource;
	a->namespace = xstrdup("");
	a->name = xstrdup(p->name);
	a->uid = xstrdup(out->owner_uid);
	a->body = body;
	if (out->nwrites == 0)
		return;
	a->body_on_failure = status_on_failure;
	ctx = a->failure_context = cJSON_CreateObject();
	cJSON_AddItemToObject(ctx, "namespace", cJSON_Duplicate(ns, 1));
	list = cJSON_AddArrayToObject(ctx, "failing");
	for (int i = 0; i < COND_COUNT; i++)
		cJSON_AddItemToArray(list, i == COND_CONTENT_FAILURE || p->failing[i] == NULL ?
		    cJSON_CreateNull() : cJSON_CreateString(p->failing[i]));
	list = cJSON_AddArrayToObject(ctx, "errors");
	for (int i = 0; i < p->errors.n; i++)
		cJSON_AddItemToArray(list, cJSON_CreateString(p->errors.items[i]));
	cJSON_AddNumberToObject(ctx, "now", p->now);
}

/* Live lists, before the finalize, that must find the namespace holding nothing of any
 * resource the cache follows: kube lists every resource right before it finalizes, and
 * the cache may not have seen an object yet. One that finds an object fails the pass,
 * which is synced again with backoff, by when the cache shows the object. */
static void
confirm_empty(const struct ns_pass *p, struct sync_result *out)
{
	for (int i = 0; i < p->nres; i++) {
		struct action *a = action_append(&out->confirm_absent, &out->nconfirm_absent);

		a->type = ACTION_GET;
		a->verb = "confirm-empty";
		a->resource = p->res[i].resource;
		a->namespace = xstrdup(p->name);
		a->reason = xstrdup("the cache shows the namespace empty");
	}
}

/* kube's finalizeNamespace: the namespace's metadata (its resourceVersion guards the
 * write) and spec, its finalizers without kubernetes, sorted and each once. */
static void
finalize_write(struct sync_result *out, const cJSON *ns, const char *name)
{
	struct action *a = action_append(&out->writes, &out->nwrites);
	struct strings keep = { NULL, 0 };
	cJSON *spec, *list;
	const cJSON *f;

	cJSON_ArrayForEach(f, json_path(ns, "spec.finalizers")) {
		int seen = 0;

		if (!cJSON_IsString(f) || strcmp(f->valuestring, FINALIZER_KUBERNETES) == 0)
			continue;
		for (int i = 0; i < keep.n && !seen; i++)
			seen = strcmp(keep.items[i], f->valuestring) == 0;
		if (!seen)
			strings_add(&keep, xstrdup(f->valuestring));
	}
	if (keep.n > 1)
		qsort(keep.items, (size_t)keep.n, sizeof *keep.items, compare_strings);
	a->type = ACTION_UPDATE;
	a->verb = "finalize";
	a->subresource = "finalize";
	a->resource = out->owner_resource;
	a->namespace = xstrdup("");
	a->name = xstrdup(name);
	a->uid = xstrdup(out->owner_uid);
	a->reason = xstrdup("no content left");
	a->body = cJSON_CreateObject();
	cJSON_AddStringToObject(a->body, "apiVersion", "v1");
	cJSON_AddStringToObject(a->body, "kind", "Namespace");
	cJSON_AddItemToObject(a->body, "metadata",
	    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ns, "metadata"), 1));
	spec = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ns, "spec"), 1);
	if (!cJSON_IsObject(spec)) {
		cJSON_Delete(spec);
		spec = cJSON_CreateObject();
	}
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "finalizers");
	if (keep.n > 0) {
		list = cJSON_AddArrayToObject(spec, "finalizers");
		for (int i = 0; i < keep.n; i++)
			cJSON_AddItemToArray(list, cJSON_CreateString(keep.items[i]));
	}
	cJSON_AddItemToObject(a->body, "spec", spec);
	strings_clear(&keep);
}

/* --- sync -------------------------------------------------------------------------------- */

/* Reads namespace name: 1 with *uid, *deleting and *ns set, 0 when not cached, -1. */
static int
ns_read(struct controller *c, const char *name, char **uid, char **deleting, cJSON **ns,
    char **error)
{
	struct ns_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_NAMESPACE]);
	int rc;

	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(stmt, 1);

		*uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		*deleting = d != NULL ? xstrdup(d) : NULL;
		*ns = controller_column_json(stmt, 2);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "namespace %s: reading it: %s", name,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_ROW && *ns == NULL) {
		free(*uid);
		free(*deleting);
		return error_set(error, "namespace %s: the cached body is not JSON", name);
	}
	return rc == SQLITE_ROW;
}

/* Deletes the content of the namespace ns and decides what comes next: kube's
 * deleteAllContent, then its finalize. */
static int
ns_delete_content(struct ns_pass *p, const cJSON *ns, struct sync_result *out, char **error)
{
	double period = controller_flag_seconds(p->c, "namespace-sync-period");
	int final, pods_left, failed;

	if (discovery_failure_message(p, error) != 0 || ns_pass_resources(p, error) != 0 ||
	    ns_pass_objects(p, error) != 0)
		return -1;
	final = p->cached == 0;
	ns_pass_sweep(p, &p->res[0], final, out);
	pods_left = p->res[0].remaining > 0;
	if (!pods_left) {
		for (int i = 1; i < p->nres; i++)
			ns_pass_sweep(p, &p->res[i], final, out);
		content_totals(p);
	}
	ns_pass_status(p, ns, 1, out);
	failed = p->failing[COND_DISCOVERY] != NULL || p->errors.n > 0;
	if (failed) {
		out->waiting = xasprintf("%s", p->errors.n > 0 ? p->errors.items[0] :
		    p->failing[COND_DISCOVERY]);
		out->failed = 1;
		out->requeue_after = NAMESPACE_RETRY_SECONDS;
	} else if (p->estimate > 0) {
		out->waiting = xasprintf("content remains, estimate %lld seconds before it is "
		    "removed", p->estimate);
		out->requeue_after = (double)(p->estimate / 2 + 1);
	} else if (pods_left || p->cached > 0 || p->unsynced > 0) {
		out->waiting = p->unsynced > 0 ? xasprintf("%d resources not synced in the cache",
		    p->unsynced) : xasprintf("the cache still holds %d objects in it", p->cached);
		out->requeue_after = NAMESPACE_RETRY_SECONDS;
	} else if (out->status != NULL && out->status->body != NULL) {
		out->waiting = xstrdup("the finalize follows the status write");
		out->requeue_after = FINALIZE_AFTER_STATUS_SECONDS;
	} else {
		confirm_empty(p, out);
		finalize_write(out, ns, p->name);
		out->requeue_after = period;
	}
	if (period > 0 && (out->requeue_after <= 0 || out->requeue_after > period))
		out->requeue_after = period;
	return 0;
}

static int
ns_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct ns_pass p;
	char *uid = NULL, *deleting = NULL, *error_text = NULL;
	cJSON *ns = NULL;
	time_t deleted_at;
	int found, caught_up, rc = -1;

	out->controller = c->type->name;
	out->key = xstrdup(key);
	found = ns_read(c, key, &uid, &deleting, &ns, error);
	if (found <= 0) {
		/* Gone: nothing to wait for any more. */
		out->forget_expectations = found == 0;
		return found;
	}
	memset(&p, 0, sizeof p);
	if (deleting == NULL) {
		rc = 0;
		goto out;
	}
	out->owner_resource = resource_find("namespaces");
	out->owner_uid = xstrdup(uid);
	out->owner = cJSON_Duplicate(ns, 1);
	if ((caught_up = controller_caught_up(c, key, uid, out, error)) <= 0) {
		rc = caught_up;
		goto out;
	}
	p.c = c;
	p.name = key;
	p.now = now;
	if (time_parse_rfc3339(deleting, &deleted_at) != 0) {
		error_set(error, "namespace %s: deletionTimestamp %s is not a time", key,
		    deleting);
		goto out;
	}
	p.deleted_at = (double)deleted_at;
	if (cJSON_GetArraySize(json_path(ns, "spec.finalizers")) == 0) {
		/* Finalized: only the phase, as kube's updateNamespaceStatusFunc. */
		ns_pass_status(&p, ns, 0, out);
		rc = 0;
		goto out;
	}
	rc = ns_delete_content(&p, ns, out, &error_text);
	if (rc != 0)
		*error = error_text;
out:
	ns_pass_clear(&p);
	free(uid);
	free(deleting);
	cJSON_Delete(ns);
	return rc;
}

/* --- handlers and keys ---------------------------------------------------------------- */

/* True when namespace name is cached with a deletionTimestamp. */
static int
ns_terminating(struct controller *c, const char *name)
{
	struct ns_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_TERMINATING]);
	int terminating;

	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	terminating = sqlite3_step(stmt) == SQLITE_ROW;
	sqlite3_reset(stmt);
	return terminating;
}

static void
ns_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	const char *namespace;

	(void)now;
	if (strcmp(ev->resource->name, "namespaces") == 0) {
		/* kube's enqueueNamespace: only deleted ones, a grace period late. */
		if (ev->type != INFORMER_DELETED &&
		    json_is_set(ev->object, "metadata.deletionTimestamp"))
			q->add_after(json_string(ev->object, "metadata.name"),
			    DELETION_GRACE_SECONDS, q->arg);
		return;
	}
	namespace = json_string(ev->object, "metadata.namespace");
	if (*namespace != '\0' && ns_terminating(c, namespace))
		q->add(namespace, q->arg);
}

static int
ns_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct ns_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "namespace", cb, arg, error);
}

/* --- the type --------------------------------------------------------------------------- */

static int
ns_init(struct controller *c, char **error)
{
	struct ns_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	return store_prepare_statements(store_db(c->store), ns_sql, STMT_COUNT, st->stmt,
	    "namespace", error);
}

static void
ns_fini(struct controller *c)
{
	struct ns_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const struct controller_flag ns_flags[] = {
	{ "namespace-sync-period", CONTROLLER_FLAG_DURATION, "5m0s", 0, 0,
	    "how often a namespace being deleted is synced again" },
	{ NULL, 0, NULL, 0, 0, NULL },
};

/* The namespaces, and the pods whose grace periods it waits for; watches_metadata brings
 * every other resource (metadatacache.c). */
static const char *const ns_resources[] = { "namespaces", "pods", NULL };

const struct controller_type namespace_controller_type = {
	.name = "namespace",
	.resources = ns_resources,
	.watches_metadata = 1,
	.default_workers = 10,
	.qps_scale = 20,	/* kube's: it is "very chatty" */
	.burst_scale = 100,
	.max_backoff = NAMESPACE_MAX_BACKOFF_SECONDS,
	.workers_flag = "concurrent-namespace-syncs",
	.workers_help = "namespaces synced at once",
	.enable_flag = NULL,
	.flags = ns_flags,
	.event_component = "namespace-controller",
	.client_name = "namespace-controller",
	.recovery = NULL,
	.init = ns_init,
	.fini = ns_fini,
	.handle_event = ns_handle_event,
	.list_keys = ns_list_keys,
	.sync = ns_sync,
};
