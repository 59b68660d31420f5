/*
 * test_namespace.c - the namespace controller (controllers/namespace.c) against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/namespace: the NamespacedResourcesDeleter
 * (deletion/namespaced_resources_deleter.go) and its conditions
 * (deletion/status_condition_utils.go) for a sync, the controller's enqueueNamespace
 * (namespace_controller.go) for the handlers. The cases are those of
 * namespaced_resources_deleter_test.go (TestFinalized, TestFinalizeNamespaceFunc,
 * testSyncNamespaceThatIsTerminating's scenarios, TestSyncNamespaceThatIsActive,
 * TestDeleteEncounters404) and status_condition_utils_test.go (TestUpdateConditions,
 * TestProcessContentTotals) where they map, and one row for each branch of
 * deleteAllContent and deleteAllContentForGroupVersionResource. Every row names the kube
 * case or the rule it ports; rows of sqlkcm's own say so.
 *
 * kube's tests count the requests a fake apiserver sees; here a row writes a namespace and
 * its content into an in-memory store (every informer synced) and compares what a sync
 * decides:
 *
 * - writes, in order, joined by "; ": "delete-collection RESOURCE", "delete RESOURCE/NAME",
 *   "finalize [FINALIZERS]"; the collection deletes of a pass that deletes every collection
 *   (pods first, then each other namespaced resource) read "delete-collection pods;
 *   delete-collection (every other resource)";
 * - status: the status written, as "PHASE; TYPE STATUS REASON[: MESSAGE]; ..." in the
 *   conditions' order, messages only for the conditions that are True ("" when none);
 * - requeue: the seconds after which the namespace is synced again;
 * - failed: the pass ends in kube's error (a discovery failure, content nothing removes),
 *   so the key is synced again with backoff, not after requeue.
 *
 * A row with two passes caches the first pass's status (as its watch event would) and
 * describes the second.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <event2/event.h>

#include "action.h"
#include "controller.h"
#include "controllers/namespace.h"
#include "discovery.h"
#include "executor.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "metadatacache.h"
#include "resource.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

#define MAX_OBJECTS 8
#define NS "ns1"

/* The verbs of a resource that takes everything, and of one without deletecollection. */
#define ALL_VERBS (DISCOVERY_LIST | DISCOVERY_WATCH | DISCOVERY_DELETE | DISCOVERY_GET | \
	DISCOVERY_PATCH | DISCOVERY_DELETECOLLECTION)
#define NO_COLLECTION (DISCOVERY_LIST | DISCOVERY_WATCH | DISCOVERY_DELETE)
/* The requeue of a pass that waits for nothing in particular: --namespace-sync-period. */
#define SYNC_PERIOD 300.0

#define HOLD "[\"example.com/hold\"]"
#define KUBEDB "[\"kubedb\"]"
#define CATALOG "[\"service-catalog\"]"
#define OK_CONDITIONS \
	"NamespaceDeletionDiscoveryFailure False ResourcesDiscovered; " \
	"NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; " \
	"NamespaceDeletionContentFailure False ContentDeleted; " \
	"NamespaceContentRemaining False ContentRemoved; " \
	"NamespaceFinalizersRemaining False ContentHasNoFinalizers"
#define EVERY_COLLECTION "delete-collection pods; delete-collection (every other resource)"

/* The resources discovery would list (besides the typed ones and 006-core.sql's rows),
 * cached by their metadata, with their verbs. */
static const struct {
	const char *group, *version, *plural, *kind;
	int namespaced;
	int verbs;			/* -1: not known (NULL) */
} metadata_resources[] = {
	{ "", "v1", "secrets", "Secret", 1, ALL_VERBS },
	{ "", "v1", "limitranges", "LimitRange", 1, ALL_VERBS },
	{ "networking.k8s.io", "v1", "ingresses", "Ingress", 1, ALL_VERBS },
	{ "example.com", "v1", "widgets", "Widget", 1, ALL_VERBS },
	{ "example.com", "v1", "flakes", "Flake", 1, ALL_VERBS },
	{ "example.com", "v1", "gadgets", "Gadget", 1, NO_COLLECTION },
	{ "example.com", "v1", "gizmos", "Gizmo", 1, -1 },
	{ "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", 0, ALL_VERBS },
};

/* --- objects -------------------------------------------------------------------------- */

/* A cached object of the namespace (or of another one). */
struct object_spec {
	const char *resource;	/* NULL ends a list */
	const char *name;
	const char *ns;		/* NULL: NS; "" for a cluster-scoped one */
	const char *finalizers;	/* JSON list; NULL: none */
	int deleting;		/* it has a deletionTimestamp */
	const char *node;	/* a pod's spec.nodeName; NULL: unscheduled */
	const char *phase;	/* a pod's status.phase; NULL: Running */
	int grace;		/* a pod's terminationGracePeriodSeconds; 0: 30; -1: 0 */
};

/* An object of resource r named n, then any of the members above. */
#define OBJECT(r, n, ...) { .resource = r, .name = n, __VA_ARGS__ }

/* The namespace of a row. */
struct ns_spec {
	int active;			/* no deletionTimestamp */
	double deleted_ago;		/* seconds before NOW it was deleted */
	const char *finalizers;		/* spec.finalizers JSON; NULL: ["kubernetes"] */
	const char *phase;		/* NULL: Terminating */
	const char *conditions;		/* status.conditions JSON; NULL: none */
};

/* The object spec describes, as the apiserver would send it. */
static cJSON *
object_new(const struct object_spec *spec)
{
	const struct resource *r = resource_find_any(spec->resource);
	const char *ns = spec->ns != NULL ? spec->ns : NS;
	struct buf b;
	cJSON *object;

	if (r == NULL)
		fail_msg("no resource %s", spec->resource);
	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\","
	    "\"uid\":\"uid-%s-%s-%s\",\"resourceVersion\":\"7\"",
	    r->metadata_only ? "meta.k8s.io/v1" : r->api_version,
	    r->metadata_only ? "PartialObjectMetadata" : r->kind, spec->name, r->name, ns,
	    spec->name);
	if (*ns != '\0')
		buf_printf(&b, ",\"namespace\":\"%s\"", ns);
	if (spec->deleting)
		buf_append_str(&b, ",\"deletionTimestamp\":\"2025-12-31T23:59:00Z\"");
	if (spec->finalizers != NULL)
		buf_printf(&b, ",\"finalizers\":%s", spec->finalizers);
	buf_append_str(&b, "}");
	if (strcmp(r->name, "pods") == 0) {
		buf_printf(&b, ",\"spec\":{\"terminationGracePeriodSeconds\":%d",
		    spec->grace == 0 ? 30 : spec->grace < 0 ? 0 : spec->grace);
		if (spec->node != NULL)
			buf_printf(&b, ",\"nodeName\":\"%s\"", spec->node);
		buf_printf(&b, "},\"status\":{\"phase\":\"%s\"}",
		    spec->phase != NULL ? spec->phase : "Running");
	}
	buf_append_str(&b, "}");
	object = cJSON_Parse(b.data);
	if (object == NULL)
		fail_msg("not JSON: %s", b.data);
	buf_free(&b);
	return object;
}

/* The namespace NS as spec describes it, at resourceVersion rv. */
static cJSON *
namespace_new(const struct ns_spec *spec, const char *rv)
{
	char when[TIME_RFC3339_SIZE];
	struct buf b;
	cJSON *object;

	time_format_rfc3339((time_t)(NOW - spec->deleted_ago), when);
	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
	    "\"" NS "\",\"uid\":\"uid-ns1\",\"resourceVersion\":\"%s\"", rv);
	if (!spec->active)
		buf_printf(&b, ",\"deletionTimestamp\":\"%s\"", when);
	buf_printf(&b, "},\"spec\":{\"finalizers\":%s},\"status\":{\"phase\":\"%s\"",
	    spec->finalizers != NULL ? spec->finalizers : "[\"kubernetes\"]",
	    spec->phase != NULL ? spec->phase : "Terminating");
	if (spec->conditions != NULL)
		buf_printf(&b, ",\"conditions\":%s", spec->conditions);
	buf_append_str(&b, "}}");
	object = cJSON_Parse(b.data);
	if (object == NULL)
		fail_msg("not JSON: %s", b.data);
	buf_free(&b);
	return object;
}

/* --- the store and the controller ----------------------------------------------------- */

/* Sets the verbs api_resources holds for resource name (-1: NULL, not known). */
static void
set_verbs(struct ctl_world *w, const char *name, int verbs)
{
	sqlite3_stmt *stmt;

	if (sqlite3_prepare_v2(store_db(w->store), "UPDATE api_resources SET verbs = ?2 "
	    "WHERE resource = ?1", -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("prepare: %s", sqlite3_errmsg(store_db(w->store)));
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	if (verbs >= 0)
		sqlite3_bind_int(stmt, 2, verbs);
	else
		sqlite3_bind_null(stmt, 2);
	if (sqlite3_step(stmt) != SQLITE_DONE)
		fail_msg("set verbs: %s", sqlite3_errmsg(store_db(w->store)));
	sqlite3_finalize(stmt);
}

/* An in-memory store with those resources, every informer synced, every verb known, and a
 * namespace controller over it; each key queued is recorded, a repeated one too. */
static int
env_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(NULL, NULL);

	w->row = *state;
	*state = w;
	w->every_add = 1;
	for (int i = 0; i < resource_count; i++)
		ctl_listed(w, resource_all[i]);
	set_verbs(w, "configmaps", ALL_VERBS);
	set_verbs(w, "serviceaccounts", ALL_VERBS);
	for (size_t i = 0; i < NELEM(metadata_resources); i++) {
		const struct resource *r = resource_metadata(metadata_resources[i].group,
		    metadata_resources[i].version, metadata_resources[i].plural,
		    metadata_resources[i].kind, metadata_resources[i].namespaced);

		if (store_note_api_resource(w->store, r, 1, &w->error) != 0)
			fail_msg("store_note_api_resource %s: %s", r->name, w->error);
		set_verbs(w, r->name, metadata_resources[i].verbs);
		ctl_listed(w, r);
	}
	if (ctl_start(w, &namespace_controller_type, NULL) != 0)
		fail_msg("controller_new: %s", w->error);
	return 0;
}

static int
env_teardown(void **state)
{
	ctl_world_free(*state);
	resource_metadata_free_all();
	return 0;
}

static void
cache_objects(struct ctl_world *w, const struct object_spec *specs)
{
	for (int i = 0; i < MAX_OBJECTS && specs[i].resource != NULL; i++)
		ctl_cache(w, resource_find_any(specs[i].resource), object_new(&specs[i]));
}

/* Records groups-versions discovery could not read. */
static void
discovery_failed(struct ctl_world *w, const char *group_version)
{
	sqlite3_stmt *stmt;

	if (sqlite3_prepare_v2(store_db(w->store), "INSERT INTO discovery_failures "
	    "(group_version) VALUES (?1)", -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("prepare: %s", sqlite3_errmsg(store_db(w->store)));
	sqlite3_bind_text(stmt, 1, group_version, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) != SQLITE_DONE)
		fail_msg("insert: %s", sqlite3_errmsg(store_db(w->store)));
	sqlite3_finalize(stmt);
}

/* --- describing a sync's result ------------------------------------------------------- */

/* How many namespaced resources take a collection delete: the typed ones of their own
 * tables, and the namespaced served rows of api_resources with deletecollection among
 * their verbs, or none known. */
static int
collection_resources(struct ctl_world *w)
{
	sqlite3_stmt *stmt;
	int n = 0;

	for (int i = 0; i < resource_count; i++)
		n += resource_all[i]->namespaced && !resource_in_objects(resource_all[i]);
	if (sqlite3_prepare_v2(store_db(w->store), "SELECT count(*) FROM api_resources "
	    "WHERE namespaced AND served AND (verbs IS NULL OR verbs & ?1)", -1, &stmt,
	    NULL) != SQLITE_OK || sqlite3_bind_int(stmt, 1, DISCOVERY_DELETECOLLECTION) !=
	    SQLITE_OK ||
	    sqlite3_step(stmt) != SQLITE_ROW)
		fail_msg("counting resources: %s", sqlite3_errmsg(store_db(w->store)));
	n += sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	return n;
}

/* One write; anything but what the controller should send is marked. */
static void
describe_write(struct buf *b, const struct action *a)
{
	const char *resource = a->resource != NULL ? a->resource->name : "?";
	const cJSON *f;
	int first = 1;

	switch (a->type) {
	case ACTION_DELETE_COLLECTION:
		buf_printf(b, "delete-collection %s", resource);
		if (a->namespace == NULL || strcmp(a->namespace, NS) != 0)
			buf_append_str(b, " (not in " NS ")");
		break;
	case ACTION_DELETE:
		buf_printf(b, "delete %s/%s", resource, a->name);
		if (a->uid != NULL)
			buf_append_str(b, " (uid precondition)");
		break;
	case ACTION_UPDATE:
		buf_append_str(b, "finalize [");
		cJSON_ArrayForEach(f, json_path(a->body, "spec.finalizers")) {
			buf_printf(b, "%s%s", first ? "" : ",", f->valuestring);
			first = 0;
		}
		buf_append_str(b, "]");
		if (a->subresource == NULL || strcmp(a->subresource, "finalize") != 0 ||
		    strcmp(resource, "namespaces") != 0 || strcmp(a->name, NS) != 0)
			buf_append_str(b, " (not to namespaces/" NS "/finalize)");
		if (strcmp(json_string(a->body, "metadata.resourceVersion"), "") == 0)
			buf_append_str(b, " (no resourceVersion)");
		return;
	default:
		buf_printf(b, "action %d", (int)a->type);
		return;
	}
	if (a->propagation == NULL || strcmp(a->propagation, "Background") != 0)
		buf_append_str(b, " (not Background)");
	if (a->error_prefix == NULL)
		buf_append_str(b, " (failure not reported)");
}

/* The writes of r, as the file's header says. */
static char *
describe_writes(struct ctl_world *w, const struct sync_result *r)
{
	int collections = 0, every;
	struct buf b;

	for (int i = 0; i < r->nwrites; i++)
		collections += r->writes[i].type == ACTION_DELETE_COLLECTION;
	every = collections == collection_resources(w) && r->nwrites > 0 &&
	    r->writes[0].type == ACTION_DELETE_COLLECTION &&
	    strcmp(r->writes[0].resource->name, "pods") == 0;
	buf_init(&b);
	for (int i = 0; i < r->nwrites; i++) {
		if (every && i > 0 && r->writes[i].type == ACTION_DELETE_COLLECTION)
			continue;
		if (b.len > 0)
			buf_append_str(&b, "; ");
		describe_write(&b, &r->writes[i]);
		if (every && i == 0)
			buf_append_str(&b, "; delete-collection (every other resource)");
	}
	return buf_detach(&b);
}

/* A status body: phase, then each condition in order. */
static char *
describe_status_body(const cJSON *body)
{
	const cJSON *c;
	struct buf b;

	buf_init(&b);
	if (body == NULL)
		return buf_detach(&b);
	buf_append_str(&b, json_string(body, "status.phase"));
	cJSON_ArrayForEach(c, json_path(body, "status.conditions")) {
		buf_printf(&b, "; %s %s", json_string(c, "type"), json_string(c, "status"));
		if (*json_string(c, "reason") != '\0')
			buf_printf(&b, " %s", json_string(c, "reason"));
		if (strcmp(json_string(c, "status"), "True") == 0 &&
		    *json_string(c, "message") != '\0')
			buf_printf(&b, ": %s", json_string(c, "message"));
	}
	return buf_detach(&b);
}

static char *
describe_status(const struct sync_result *r)
{
	return describe_status_body(r->status != NULL ? r->status->body : NULL);
}

/* --- sync ----------------------------------------------------------------------------- */

struct sync_case {
	const char *name;
	struct ns_spec ns;
	int absent;			/* no namespace at all */
	struct object_spec objects[MAX_OBJECTS];
	const char *discovery_failed;	/* a group-version discovery could not read */
	const char *unsynced;		/* a resource whose informer has not synced */
	int passes;			/* 2: describe the second pass */
	const char *writes;
	const char *status;
	double requeue;
	int failed;
};

static const struct sync_case sync_cases[] = {
	/* --- Delete: nothing to do (namespaced_resources_deleter.go:100-140) --- */
	{
		.name = "TestSyncNamespaceThatIsActive: a namespace that is not being deleted is "
		    "left alone",
		.ns = { .active = 1, .phase = "Active" },
		.objects = { OBJECT("configmaps", "c1") },
	},
	{
		.name = "testSyncNamespaceThatIsTerminating, complete-finalize (TestFinalized): a "
		    "namespace whose spec.finalizers is empty is done",
		.ns = { .finalizers = "[]" },
		.objects = { OBJECT("configmaps", "c1") },
	},
	{
		.name = "testSyncNamespaceThatIsTerminating, groupVersionResourceErr: a finalized "
		    "namespace is done, whatever discovery says",
		.ns = { .finalizers = "[]" },
		.discovery_failed = "metrics.k8s.io/v1beta1",
	},
	{
		.name = "updateNamespaceStatusFunc: a finalized namespace still gets phase "
		    "Terminating (namespaced_resources_deleter.go:264-271)",
		.ns = { .finalizers = "[]", .phase = "Active" },
		.status = "Terminating",
	},
	{
		.name = "syncNamespaceFromKey: a namespace gone from the cache: nothing",
		.absent = 1,
	},

	/* --- an empty namespace: deleteAllContent, then finalizeNamespace --- */
	{
		.name = "testSyncNamespaceThatIsTerminating, pending-finalize: every collection is "
		    "deleted and the conditions written; the finalize follows in the next pass "
		    "(sqlkcm's: it needs the resourceVersion of the status write)",
		.writes = EVERY_COLLECTION,
		.status = "Terminating; " OK_CONDITIONS,
		.requeue = 1,
	},
	{
		.name = "testSyncNamespaceThatIsTerminating, pending-finalize, second pass: every "
		    "collection is deleted, then the finalizer kubernetes removed",
		.passes = 2,
		.writes = EVERY_COLLECTION "; finalize []",
		.requeue = SYNC_PERIOD,
	},
	{
		.name = "TestFinalizeNamespaceFunc: the finalize keeps the other finalizers",
		.ns = { .finalizers = "[\"kubernetes\",\"other\"]" },
		.passes = 2,
		.writes = EVERY_COLLECTION "; finalize [other]",
		.requeue = SYNC_PERIOD,
	},
	{
		.name = "finalizeNamespace: the finalizers kept are sorted, each once",
		.ns = { .finalizers = "[\"z.io/b\",\"kubernetes\",\"a.io/a\",\"z.io/b\"]" },
		.passes = 2,
		.writes = EVERY_COLLECTION "; finalize [a.io/a,z.io/b]",
		.requeue = SYNC_PERIOD,
	},
	{
		.name = "updateNamespaceStatusFunc: phase Active becomes Terminating, with the "
		    "conditions in the same write",
		.ns = { .phase = "Active" },
		.writes = EVERY_COLLECTION,
		.status = "Terminating; " OK_CONDITIONS,
		.requeue = 1,
	},

	/* --- discovery (deleteAllContent, namespaced_resources_deleter.go:513-527) --- */
	{
		.name = "testSyncNamespaceThatIsTerminating, groupVersionResourceErr-finalize: the "
		    "content is deleted, NamespaceDeletionDiscoveryFailure set, no finalize",
		.discovery_failed = "metrics.k8s.io/v1beta1",
		.writes = EVERY_COLLECTION,
		.status = "Terminating; NamespaceDeletionDiscoveryFailure True DiscoveryFailed: "
		    "Discovery failed for some groups, 1 failing: unable to retrieve the complete "
		    "list of server APIs: metrics.k8s.io/v1beta1: stale GroupVersion discovery: "
		    "metrics.k8s.io/v1beta1; "
		    "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; "
		    "NamespaceDeletionContentFailure False ContentDeleted; "
		    "NamespaceContentRemaining False ContentRemoved; "
		    "NamespaceFinalizersRemaining False ContentHasNoFinalizers",
		.requeue = 5,
		.failed = 1,
	},

	/* --- deleteCollection / deleteEachItem (namespaced_resources_deleter.go:309-398) --- */
	{
		.name = "deleteCollection: a resource with objects not being deleted gets a "
		    "collection delete, in Background (a resource without any gets none while "
		    "other content remains)",
		.objects = {
			OBJECT("configmaps", "c1"),
			OBJECT("widgets.example.com", "w1", .finalizers = HOLD, .deleting = 1),
		},
		.writes = "delete-collection configmaps",
		.status = "Terminating; "
		    "NamespaceDeletionDiscoveryFailure False ResourcesDiscovered; "
		    "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; "
		    "NamespaceDeletionContentFailure False ContentDeleted; "
		    "NamespaceContentRemaining True SomeResourcesRemain: Some resources are "
		    "remaining: widgets.example.com has 1 resource instances; "
		    "NamespaceFinalizersRemaining True SomeFinalizersRemain: Some content in the "
		    "namespace has finalizers remaining: example.com/hold in 1 resource instances",
		.requeue = 8,
	},
	{
		.name = "deleteEachItem: a resource discovery lists without deletecollection has "
		    "each object deleted",
		.objects = {
			OBJECT("gadgets.example.com", "g1"),
			OBJECT("gadgets.example.com", "g2"),
			OBJECT("gadgets.example.com", "g3", .deleting = 1),
		},
		.writes = "delete gadgets.example.com/g1; delete gadgets.example.com/g2",
		.status = "Terminating; " OK_CONDITIONS,
		.requeue = 5,
	},
	{
		.name = "deleteCollection then deleteEachItem: a resource whose verbs are not "
		    "known gets the collection delete and each object's (sqlkcm's: kube falls back "
		    "to deleteEachItem on a 405 in the same pass)",
		.objects = { OBJECT("gizmos.example.com", "z1") },
		.writes = "delete-collection gizmos.example.com; delete gizmos.example.com/z1",
		.status = "Terminating; " OK_CONDITIONS,
		.requeue = 5,
	},
	{
		.name = "TestDeleteEncounters404: a custom resource is deleted by its collection",
		.objects = { OBJECT("flakes.example.com", "f1") },
		.writes = "delete-collection flakes.example.com",
		.status = "Terminating; " OK_CONDITIONS,
		.requeue = 5,
	},

	/* --- OrderedNamespaceDeletion: pods first (namespaced_resources_deleter.go:538-571) --- */
	{
		.name = "OrderedNamespaceDeletion: the pods are deleted first, nothing else while "
		    "they remain; requeued after kube's estimate/2+1 (grace 30 s)",
		.objects = {
			OBJECT("pods", "p1", .node = "n1"),
			OBJECT("configmaps", "c1"),
			OBJECT("deployments", "d1"),
		},
		.writes = "delete-collection pods",
		.status = "Terminating; " OK_CONDITIONS,
		.requeue = 16,
	},
	{
		.name = "OrderedNamespaceDeletion: while a pod held by a finalizer remains, the "
		    "conditions report no content totals (kube returns before "
		    "ProcessContentTotals)",
		.ns = { .deleted_ago = 60 },
		.objects = {
			OBJECT("pods", "held", .node = "n1", .deleting = 1, .finalizers = HOLD),
			OBJECT("configmaps", "c1"),
		},
		.status = "Terminating; " OK_CONDITIONS,
		.requeue = 8,
	},
	{
		.name = "OrderedNamespaceDeletion: unscheduled and finished pods go at once: the "
		    "rest of the content is deleted in the same pass",
		.objects = {
			OBJECT("pods", "pending"),
			OBJECT("pods", "done", .node = "n1", .phase = "Succeeded"),
			OBJECT("configmaps", "c1"),
		},
		.writes = "delete-collection pods; delete-collection configmaps",
		.status = "Terminating; " OK_CONDITIONS,
		.requeue = 5,
	},
	{
		.name = "OrderedNamespaceDeletion: a pod with terminationGracePeriodSeconds 0 goes "
		    "at once",
		.objects = {
			OBJECT("pods", "p1", .node = "n1", .grace = -1),
			OBJECT("configmaps", "c1"),
		},
		.writes = "delete-collection pods; delete-collection configmaps",
		.status = "Terminating; " OK_CONDITIONS,
		.requeue = 5,
	},

	/* --- deleteAllContentForGroupVersionResource: what remains (:400-505) --- */
	{
		.name = "estimateGracefulTermination: pods terminating within their grace period "
		    "are waited for, without a request",
		.ns = { .deleted_ago = 10 },
		.objects = { OBJECT("pods", "p1", .node = "n1", .deleting = 1, .grace = 60) },
		.status = "Terminating; " OK_CONDITIONS,
		.requeue = 31,
	},
	{
		.name = "estimateGracefulTermination: past the grace period, a pod left without "
		    "finalizers is kube's error \"unexpected items still remain\"",
		.ns = { .deleted_ago = 60 },
		.objects = { OBJECT("pods", "p1", .node = "n1", .deleting = 1) },
		.status = "Terminating; "
		    "NamespaceDeletionDiscoveryFailure False ResourcesDiscovered; "
		    "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; "
		    "NamespaceDeletionContentFailure True ContentDeletionFailed: Failed to delete "
		    "all resource types, 1 remaining: unexpected items still remain in namespace: "
		    NS " for gvr: /v1, Resource=pods; "
		    "NamespaceContentRemaining False ContentRemoved; "
		    "NamespaceFinalizersRemaining False ContentHasNoFinalizers",
		.requeue = 5,
		.failed = 1,
	},
	{
		.name = "finalizerEstimateSeconds: objects with finalizers are waited for 15 s "
		    "(requeue 15/2+1), counted by resource and by finalizer",
		.objects = {
			OBJECT("deployments", "d1", .deleting = 1, .finalizers = HOLD),
			OBJECT("configmaps", "c1", .deleting = 1,
			    .finalizers = "[\"example.com/hold\",\"example.com/other\"]"),
			OBJECT("configmaps", "c2", .deleting = 1, .finalizers = HOLD),
		},
		.status = "Terminating; "
		    "NamespaceDeletionDiscoveryFailure False ResourcesDiscovered; "
		    "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; "
		    "NamespaceDeletionContentFailure False ContentDeleted; "
		    "NamespaceContentRemaining True SomeResourcesRemain: Some resources are "
		    "remaining: configmaps. has 2 resource instances, deployments.apps has 1 "
		    "resource instances; "
		    "NamespaceFinalizersRemaining True SomeFinalizersRemain: Some content in the "
		    "namespace has finalizers remaining: example.com/hold in 3 resource instances, "
		    "example.com/other in 1 resource instances",
		.requeue = 8,
	},
	{
		.name = "TestProcessContentTotals, both: remaining resources and finalizers, each "
		    "list sorted",
		.objects = {
			OBJECT("ingresses.networking.k8s.io", "ds1", .deleting = 1,
			    .finalizers = KUBEDB),
			OBJECT("ingresses.networking.k8s.io", "ds2", .deleting = 1,
			    .finalizers = KUBEDB),
			OBJECT("secrets", "s1", .deleting = 1, .finalizers = CATALOG),
			OBJECT("secrets", "s2", .deleting = 1, .finalizers = CATALOG),
			OBJECT("secrets", "s3", .deleting = 1, .finalizers = CATALOG),
		},
		.status = "Terminating; "
		    "NamespaceDeletionDiscoveryFailure False ResourcesDiscovered; "
		    "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; "
		    "NamespaceDeletionContentFailure False ContentDeleted; "
		    "NamespaceContentRemaining True SomeResourcesRemain: Some resources are "
		    "remaining: ingresses.networking.k8s.io has 2 resource instances, secrets. "
		    "has 3 resource instances; "
		    "NamespaceFinalizersRemaining True SomeFinalizersRemain: Some content in the "
		    "namespace has finalizers remaining: kubedb in 2 resource instances, "
		    "service-catalog in 3 resource instances",
		.requeue = 8,
	},
	{
		.name = "an object not being deleted yet, with finalizers, is deleted and counted "
		    "as remaining",
		.objects = { OBJECT("secrets", "s1", .finalizers = HOLD) },
		.writes = "delete-collection secrets",
		.status = "Terminating; "
		    "NamespaceDeletionDiscoveryFailure False ResourcesDiscovered; "
		    "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; "
		    "NamespaceDeletionContentFailure False ContentDeleted; "
		    "NamespaceContentRemaining True SomeResourcesRemain: Some resources are "
		    "remaining: secrets. has 1 resource instances; "
		    "NamespaceFinalizersRemaining True SomeFinalizersRemain: Some content in the "
		    "namespace has finalizers remaining: example.com/hold in 1 resource instances",
		.requeue = 8,
	},

	/* --- when to finalize (sqlkcm's: the cache stands for kube's live lists) --- */
	{
		.name = "sqlkcm's: an object being deleted without finalizers is gone on the "
		    "server; the cache lags: no error, no finalize until its DELETED event",
		.passes = 2,
		.objects = { OBJECT("configmaps", "c1", .deleting = 1) },
		.requeue = 5,
	},
	{
		.name = "sqlkcm's: an informer of a namespaced resource not synced: no finalize",
		.passes = 2,
		.unsynced = "limitranges",
		.writes = EVERY_COLLECTION,
		.requeue = 5,
	},
	{
		.name = "sqlkcm's: objects of other namespaces and cluster-scoped ones do not hold "
		    "it",
		.passes = 2,
		.objects = {
			OBJECT("configmaps", "c1", .ns = "ns2"),
			OBJECT("priorityclasses.scheduling.k8s.io", "r1", .ns = ""),
		},
		.writes = EVERY_COLLECTION "; finalize []",
		.requeue = SYNC_PERIOD,
	},

	/* --- TestUpdateConditions (status_condition_utils_test.go), through a sync --- */
	{
		.name = "TestUpdateConditions, leave unknown: a condition of another type stays, "
		    "first",
		.ns = { .conditions = "[{\"type\":\"unknown\",\"status\":\"True\"}]" },
		.objects = { OBJECT("configmaps", "c1", .deleting = 1) },
		.status = "Terminating; unknown True; " OK_CONDITIONS,
		.requeue = 5,
	},
	{
		.name = "TestUpdateConditions, replace with success: a failure that is over turns "
		    "False in place",
		.ns = { .conditions = "[{\"type\":\"NamespaceDeletionDiscoveryFailure\","
		    "\"status\":\"True\"}]" },
		.objects = { OBJECT("configmaps", "c1", .deleting = 1) },
		.status = "Terminating; " OK_CONDITIONS,
		.requeue = 5,
	},
	{
		.name = "TestUpdateConditions, leave different order: conditions keep their places",
		.ns = { .conditions = "[{\"type\":\"NamespaceDeletionGroupVersionParsingFailure\","
		    "\"status\":\"True\"},{\"type\":\"NamespaceDeletionDiscoveryFailure\","
		    "\"status\":\"True\"}]" },
		.objects = { OBJECT("configmaps", "c1", .deleting = 1) },
		.status = "Terminating; "
		    "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; "
		    "NamespaceDeletionDiscoveryFailure False ResourcesDiscovered; "
		    "NamespaceDeletionContentFailure False ContentDeleted; "
		    "NamespaceContentRemaining False ContentRemoved; "
		    "NamespaceFinalizersRemaining False ContentHasNoFinalizers",
		.requeue = 5,
	},
	{
		.name = "TestUpdateConditions, overwrite with failure (with discovery's failure): "
		    "a False condition turns True in place",
		.ns = { .conditions = "[{\"type\":\"NamespaceDeletionGroupVersionParsingFailure\","
		    "\"status\":\"True\"},{\"type\":\"NamespaceDeletionDiscoveryFailure\","
		    "\"status\":\"False\"}]" },
		.discovery_failed = "a.io/v1",
		.objects = { OBJECT("configmaps", "c1", .deleting = 1) },
		.status = "Terminating; "
		    "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; "
		    "NamespaceDeletionDiscoveryFailure True DiscoveryFailed: Discovery failed for "
		    "some groups, 1 failing: unable to retrieve the complete list of server APIs: "
		    "a.io/v1: stale GroupVersion discovery: a.io/v1; "
		    "NamespaceDeletionContentFailure False ContentDeleted; "
		    "NamespaceContentRemaining False ContentRemoved; "
		    "NamespaceFinalizersRemaining False ContentHasNoFinalizers",
		.requeue = 5,
		.failed = 1,
	},
	{
		.name = "TestUpdateConditions, write new failure: a failing condition the list "
		    "lacks is appended in kube's order; the groups are sorted",
		.ns = { .conditions = "[{\"type\":\"NamespaceDeletionGroupVersionParsingFailure\","
		    "\"status\":\"True\"}]" },
		.discovery_failed = "z.io/v1",
		.objects = { OBJECT("configmaps", "c1", .deleting = 1) },
		.status = "Terminating; "
		    "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; "
		    "NamespaceDeletionDiscoveryFailure True DiscoveryFailed: Discovery failed for "
		    "some groups, 1 failing: unable to retrieve the complete list of server APIs: "
		    "z.io/v1: stale GroupVersion discovery: z.io/v1; "
		    "NamespaceDeletionContentFailure False ContentDeleted; "
		    "NamespaceContentRemaining False ContentRemoved; "
		    "NamespaceFinalizersRemaining False ContentHasNoFinalizers",
		.requeue = 5,
		.failed = 1,
	},
	{
		.name = "deleteAllContent: the conditions are written only when they change",
		.passes = 2,
		.objects = { OBJECT("secrets", "s1", .deleting = 1, .finalizers = HOLD) },
		.requeue = 8,
	},
};

/* Writes the row's world into the store. */
static void
sync_case_world(struct ctl_world *w, const struct sync_case *row)
{
	if (!row->absent)
		ctl_cache(w, resource_find("namespaces"), namespace_new(&row->ns, "10"));
	cache_objects(w, row->objects);
	if (row->discovery_failed != NULL)
		discovery_failed(w, row->discovery_failed);
	if (row->unsynced != NULL) {
		sqlite3_stmt *stmt;

		if (sqlite3_prepare_v2(store_db(w->store), "UPDATE informers SET synced = 0 "
		    "WHERE resource = ?1", -1, &stmt, NULL) != SQLITE_OK)
			fail_msg("prepare: %s", sqlite3_errmsg(store_db(w->store)));
		sqlite3_bind_text(stmt, 1, row->unsynced, -1, SQLITE_STATIC);
		if (sqlite3_step(stmt) != SQLITE_DONE || sqlite3_changes(store_db(w->store)) != 1)
			fail_msg("unsync %s: %s", row->unsynced,
			    sqlite3_errmsg(store_db(w->store)));
		sqlite3_finalize(stmt);
	}
}

static void
sync_case_holds(void **state)
{
	struct ctl_world *w = *state;
	const struct sync_case *row = w->row;

	sync_case_world(w, row);
	ctl_sync(w, NS, NOW);
	if (row->passes == 2) {
		/* The status written, as its watch event brings it back. */
		if (w->result.status != NULL && w->result.status->body != NULL) {
			cJSON *ns = cJSON_Duplicate(w->result.status->body, 1);

			json_set(json_child_object(ns, "metadata"), "resourceVersion",
			    cJSON_CreateString("11"));
			ctl_cache(w, resource_find("namespaces"), ns);
		}
		ctl_sync(w, NS, NOW);
	}
	assert_described("writes", ctl_keep(w, describe_writes(w, &w->result)), row->writes);
	assert_described("status", ctl_keep(w, describe_status(&w->result)), row->status);
	if (w->result.requeue_after != row->requeue)
		fail_msg("requeue: got %g, want %g", w->result.requeue_after, row->requeue);
	if (w->result.failed != row->failed)
		fail_msg("failed: got %d, want %d", w->result.failed, row->failed);
	assert_int_equal(w->result.forget_expectations, row->absent);
}

/* --- sqlkcm's: the writes' details ----------------------------------------------------- */

/* The finalize carries the cached namespace: its uid, resourceVersion and metadata. */
static void
finalize_carries_the_cached_namespace(void **state)
{
	struct ctl_world *w = *state;
	const struct ns_spec spec = { .conditions = NULL };
	const struct action *a;

	ctl_cache(w, resource_find("namespaces"), namespace_new(&spec, "10"));
	ctl_sync(w, NS, NOW);
	w->object = cJSON_Duplicate(w->result.status->body, 1);
	json_set(json_child_object(w->object, "metadata"), "resourceVersion",
	    cJSON_CreateString("12"));
	ctl_cache(w, resource_find("namespaces"), w->object);
	w->object = NULL;
	ctl_sync(w, NS, NOW);
	assert_true(w->result.nwrites > 0);
	a = &w->result.writes[w->result.nwrites - 1];
	assert_int_equal(a->type, ACTION_UPDATE);
	assert_string_equal(a->subresource, "finalize");
	assert_string_equal(json_string(a->body, "metadata.resourceVersion"), "12");
	assert_string_equal(json_string(a->body, "metadata.uid"), "uid-ns1");
	assert_string_equal(json_string(a->body, "kind"), "Namespace");
	assert_true(json_is_set(a->body, "metadata.deletionTimestamp"));
	assert_null(json_path(a->body, "status"));
}

/* A deletion that fails sends the ContentFailure condition with its error, aggregated with
 * the pass's own (kube's makeDeleteContentCondition), even when nothing else changed. */
static void
deletion_failure_is_reported_in_the_status(void **state)
{
	struct ctl_world *w = *state;
	const struct ns_spec spec = { .conditions = NULL };
	const struct object_spec objects[MAX_OBJECTS] = { OBJECT("configmaps", "c1") };
	cJSON *body;

	ctl_cache(w, resource_find("namespaces"), namespace_new(&spec, "10"));
	cache_objects(w, objects);
	ctl_sync(w, NS, NOW);
	/* The conditions are written: the next pass has none to change. */
	w->object = cJSON_Duplicate(w->result.status->body, 1);
	json_set(json_child_object(w->object, "metadata"), "resourceVersion",
	    cJSON_CreateString("11"));
	ctl_cache(w, resource_find("namespaces"), w->object);
	w->object = NULL;
	ctl_sync(w, NS, NOW);
	assert_non_null(w->result.status);
	assert_null(w->result.status->body);
	assert_non_null(w->result.status->body_on_failure);
	assert_int_equal(w->result.status->type, ACTION_UPDATE_STATUS);
	body = w->result.status->body_on_failure(w->result.status,
	    (const char *const[]){ "the server is on fire", "and so is the disk" }, 2);
	assert_described("status on failure", ctl_keep(w, describe_status_body(body)),
	    "Terminating; NamespaceDeletionDiscoveryFailure False ResourcesDiscovered; "
	    "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; "
	    "NamespaceDeletionContentFailure True ContentDeletionFailed: Failed to delete all "
	    "resource types, 2 remaining: and so is the disk, the server is on fire; "
	    "NamespaceContentRemaining False ContentRemoved; "
	    "NamespaceFinalizersRemaining False ContentHasNoFinalizers");
	cJSON_Delete(body);
}

/* The success conditions carry kube's messages (okMessages). */
static void
success_conditions_carry_kube_messages(void **state)
{
	static const char *const want[][2] = {
		{ "NamespaceDeletionDiscoveryFailure", "All resources successfully discovered" },
		{ "NamespaceDeletionGroupVersionParsingFailure",
		    "All legacy kube types successfully parsed" },
		{ "NamespaceDeletionContentFailure",
		    "All content successfully deleted, may be waiting on finalization" },
		{ "NamespaceContentRemaining", "All content successfully removed" },
		{ "NamespaceFinalizersRemaining", "All content-preserving finalizers finished" },
	};
	struct ctl_world *w = *state;
	const struct ns_spec spec = { .conditions = NULL };
	const cJSON *list, *c;
	size_t i = 0;

	ctl_cache(w, resource_find("namespaces"), namespace_new(&spec, "10"));
	ctl_sync(w, NS, NOW);
	list = json_path(w->result.status->body, "status.conditions");
	assert_int_equal(cJSON_GetArraySize(list), NELEM(want));
	cJSON_ArrayForEach(c, list) {
		assert_string_equal(json_string(c, "type"), want[i][0]);
		assert_string_equal(json_string(c, "message"), want[i][1]);
		assert_string_equal(json_string(c, "lastTransitionTime"), "2026-01-01T00:00:00Z");
		i++;
	}
}

/* --- handle_event --------------------------------------------------------------------- */

struct event_case {
	const char *name;
	struct ns_spec ns;		/* NS, cached */
	int namespace_event;		/* the event is NS's own */
	struct object_spec object;	/* else the object's */
	enum informer_event_type type;
	const char *queued;		/* NULL: nothing */
};

static const struct event_case event_cases[] = {
	{
		.name = "enqueueNamespace: a namespace updated with a deletionTimestamp is queued "
		    "after namespaceDeletionGracePeriod (5 s)",
		.namespace_event = 1,
		.type = INFORMER_UPDATED,
		.queued = NS " (after 5s)",
	},
	{
		.name = "enqueueNamespace: a namespace added with a deletionTimestamp is queued "
		    "after 5 s",
		.namespace_event = 1,
		.type = INFORMER_ADDED,
		.queued = NS " (after 5s)",
	},
	{
		.name = "enqueueNamespace: a namespace without a deletionTimestamp is not queued",
		.ns = { .active = 1, .phase = "Active" },
		.namespace_event = 1,
		.type = INFORMER_UPDATED,
	},
	{
		.name = "NewNamespaceController: a namespace's deletion queues nothing (no "
		    "DeleteFunc)",
		.namespace_event = 1,
		.type = INFORMER_DELETED,
	},
	{
		.name = "sqlkcm's: a pod that changes in a namespace being deleted queues it at "
		    "once",
		.object = OBJECT("pods", "p1", .node = "n1", .deleting = 1),
		.type = INFORMER_UPDATED,
		.queued = NS,
	},
	{
		.name = "sqlkcm's: an object deleted in a namespace being deleted queues it",
		.object = OBJECT("widgets.example.com", "w1"),
		.type = INFORMER_DELETED,
		.queued = NS,
	},
	{
		.name = "sqlkcm's: an object added in a namespace being deleted queues it",
		.object = OBJECT("configmaps", "c1"),
		.type = INFORMER_ADDED,
		.queued = NS,
	},
	{
		.name = "sqlkcm's: an object of an active namespace queues nothing",
		.ns = { .active = 1, .phase = "Active" },
		.object = OBJECT("configmaps", "c1"),
		.type = INFORMER_UPDATED,
	},
	{
		.name = "sqlkcm's: an object of a namespace the cache does not hold queues nothing",
		.object = OBJECT("configmaps", "c1", .ns = "ns2"),
		.type = INFORMER_UPDATED,
	},
	{
		.name = "sqlkcm's: a cluster-scoped object queues nothing",
		.object = OBJECT("priorityclasses.scheduling.k8s.io", "r1", .ns = ""),
		.type = INFORMER_UPDATED,
	},
};

static void
event_case_holds(void **state)
{
	struct ctl_world *w = *state;
	const struct event_case *row = w->row;
	const struct resource *r;

	ctl_cache(w, resource_find("namespaces"), namespace_new(&row->ns, "10"));
	if (row->namespace_event) {
		ctl_tell(w, row->type, resource_find("namespaces"),
		    namespace_new(&row->ns, "10"), NULL);
	} else {
		r = resource_find_any(row->object.resource);
		if (row->type != INFORMER_DELETED)
			ctl_cache(w, r, object_new(&row->object));
		ctl_tell(w, row->type, r, object_new(&row->object), NULL);
	}
	assert_described("queued", ctl_keep(w, ctl_keys(w)), row->queued);
}

/* --- list_keys, the flags and the view ------------------------------------------------- */

/* The namespaces being deleted are synced at start; the others are not. */
static void
list_keys_lists_the_namespaces_being_deleted(void **state)
{
	struct ctl_world *w = *state;
	const struct ns_spec deleting = { .phase = NULL }, active = { .active = 1 };
	cJSON *other = namespace_new(&active, "3");

	ctl_cache(w, resource_find("namespaces"), namespace_new(&deleting, "10"));
	json_set(json_child_object(other, "metadata"), "name", cJSON_CreateString("live"));
	json_set(json_child_object(other, "metadata"), "uid", cJSON_CreateString("uid-live"));
	ctl_cache(w, resource_find("namespaces"), other);
	ctl_list_keys(w);
	assert_described("listed", ctl_keep(w, ctl_keys(w)), NS);
}

/* kube's flags: --concurrent-namespace-syncs 10, --namespace-sync-period 5m0s; the period
 * is the requeue of a namespace that waits for nothing else (kube's informer resync). */
static void
flags_are_kubes(void **state)
{
	struct ctl_world *w = *state;
	const struct controller_type *t = &namespace_controller_type;
	const char *const values[] = { "90s" };
	const struct controller_config config = { .flags = values };
	const struct ns_spec spec = { .finalizers = "[\"other\"]" };
	struct controller *c;
	cJSON *ns;

	assert_string_equal(t->name, "namespace");
	assert_string_equal(t->workers_flag, "concurrent-namespace-syncs");
	assert_int_equal(t->default_workers, 10);
	assert_true(t->watches_metadata);
	assert_string_equal(t->flags[0].name, "namespace-sync-period");
	assert_int_equal(t->flags[0].type, CONTROLLER_FLAG_DURATION);
	assert_string_equal(t->flags[0].default_value, "5m0s");
	assert_null(t->flags[1].name);
	assert_true(controller_flag_seconds(w->c, "namespace-sync-period") == 300);

	c = controller_new(t, w->store, &config, &w->error);
	if (c == NULL)
		fail_msg("controller_new: %s", w->error);
	ctl_cache(w, resource_find("namespaces"), namespace_new(&spec, "10"));
	for (int pass = 0; pass < 2; pass++) {
		sync_result_clear(&w->result);
		if (c->type->sync(c, NS, NOW, &w->result, &w->error) != 0)
			fail_msg("sync: %s", w->error);
		if (w->result.status == NULL || w->result.status->body == NULL)
			continue;
		ns = cJSON_Duplicate(w->result.status->body, 1);
		json_set(json_child_object(ns, "metadata"), "resourceVersion",
		    cJSON_CreateString("11"));
		ctl_cache(w, resource_find("namespaces"), ns);
	}
	controller_free(c);
	assert_string_equal(w->result.writes[w->result.nwrites - 1].verb, "finalize");
	assert_true(w->result.requeue_after == 90);
}

/* namespaces_terminating shows what holds each namespace being deleted. */
static void
view_shows_what_holds_a_namespace(void **state)
{
	struct ctl_world *w = *state;
	const struct ns_spec spec = { .phase = NULL };
	const struct object_spec objects[MAX_OBJECTS] = {
		OBJECT("pods", "p1", .node = "n1", .deleting = 1, .finalizers = HOLD),
		OBJECT("configmaps", "c1", .finalizers = "[\"b.io/x\",\"a.io/y\"]"),
		OBJECT("configmaps", "c2", .deleting = 1, .finalizers = "[\"a.io/y\"]"),
		OBJECT("secrets", "s1", .ns = "ns2"),
	};
	sqlite3_stmt *stmt;
	struct buf b;

	ctl_cache(w, resource_find("namespaces"), namespace_new(&spec, "10"));
	cache_objects(w, objects);
	if (sqlite3_prepare_v2(store_db(w->store), "SELECT namespace, phase, spec_finalizers, "
	    "resource, objects, deleting, finalizers FROM namespaces_terminating "
	    "ORDER BY namespace, resource", -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("prepare: %s", sqlite3_errmsg(store_db(w->store)));
	buf_init(&b);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		for (int i = 0; i < 7; i++)
			buf_printf(&b, "%s%s", i > 0 ? "|" : "", sqlite3_column_type(stmt, i) ==
			    SQLITE_NULL ? "NULL" : (const char *)sqlite3_column_text(stmt, i));
		buf_append_str(&b, "\n");
	}
	sqlite3_finalize(stmt);
	assert_described("namespaces_terminating", ctl_keep(w, buf_detach(&b)),
	    NS "|Terminating|[\"kubernetes\"]|configmaps|2|1|a.io/y in 2 resource instances, "
	    "b.io/x in 1 resource instances\n"
	    NS "|Terminating|[\"kubernetes\"]|pods|1|1|example.com/hold in 1 resource "
	    "instances\n");
}

/* A namespace that holds nothing shows once, without a resource. */
static void
view_shows_an_empty_namespace_once(void **state)
{
	struct ctl_world *w = *state;
	const struct ns_spec spec = { .finalizers = "[\"kubernetes\",\"other\"]" };
	sqlite3_stmt *stmt;

	ctl_cache(w, resource_find("namespaces"), namespace_new(&spec, "10"));
	if (sqlite3_prepare_v2(store_db(w->store), "SELECT namespace, resource, objects "
	    "FROM namespaces_terminating", -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("prepare: %s", sqlite3_errmsg(store_db(w->store)));
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(stmt, 0), NS);
	assert_int_equal(sqlite3_column_type(stmt, 1), SQLITE_NULL);
	assert_int_equal(sqlite3_column_type(stmt, 2), SQLITE_NULL);
	assert_int_equal(sqlite3_step(stmt), SQLITE_DONE);
	sqlite3_finalize(stmt);
}

/* --- the executor's part --------------------------------------------------------------- */

/* The executor's done callback: keeps the outcome. */
static void
on_done(const char *key, const struct executor_outcome *outcome, void *arg)
{
	assert_string_equal(key, NS);
	*(struct executor_outcome *)arg = *outcome;
}

/* The path of the first GET carry_out saw, or NULL. */
static char *first_get_path;

/* What carry_out's namespace holds. */
enum content { GIZMO, GIZMO_AND_WIDGET, NOTHING };

/* Syncs NS over a namespace holding content (gizmo z1 is of a resource whose verbs are not
 * known), its conditions already written, and carries the result out against a fake
 * apiserver answering with fault; returns the requests seen and sets *outcome and *status
 * (the last PUT's body: the status, or the finalize; NULL if none). */
static char *
carry_out(struct ctl_world *w, const struct fake_fault *fault, enum content content,
    struct executor_outcome *outcome, cJSON **status)
{
	const struct ns_spec spec = { .conditions = NULL };
	const struct object_spec objects[MAX_OBJECTS] = {
		OBJECT(content != NOTHING ? "gizmos.example.com" : NULL, "z1"),
		OBJECT(content == GIZMO_AND_WIDGET ? "widgets.example.com" : NULL, "w1"),
	};
	struct fixture fx = { w->store, w->c, resource_find("pods"),
	    resource_find("replicasets") };
	struct fake_apiserver *fake = fake_apiserver_new(&fx);
	struct executor *e = executor_new(fake->client, w->store, NULL, NULL);
	/* The fake keeps no namespaces: a finalize gets a canned answer. */
	const struct fake_fault faults[] = { *fault, { "PUT", "finalize", 1, 0, 200, NULL,
	    "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" NS
	    "\",\"resourceVersion\":\"12\"}}", NULL } };
	char *requests;

	fake_apiserver_set_faults(fake, faults, NELEM(faults));
	ctl_cache(w, resource_find("namespaces"), namespace_new(&spec, "10"));
	cache_objects(w, objects);
	ctl_sync(w, NS, NOW);
	/* The conditions written by an earlier pass: this one has no status to send but
	 * on a failure (the fake takes no PUT of a cluster-scoped object). */
	w->object = cJSON_Duplicate(w->result.status->body, 1);
	json_set(json_child_object(w->object, "metadata"), "resourceVersion",
	    cJSON_CreateString("11"));
	ctl_cache(w, resource_find("namespaces"), w->object);
	w->object = NULL;
	ctl_sync(w, NS, NOW);
	memset(outcome, 0, sizeof *outcome);
	if (executor_run(e, w->c, &w->result, on_done, outcome, &w->error) != 0)
		fail_msg("executor_run: %s", w->error);
	fake_apiserver_run(fake);
	requests = fake_apiserver_requests(fake);
	free(first_get_path);
	first_get_path = NULL;
	for (int i = 0; i < fake->nrequests && first_get_path == NULL; i++) {
		if (strcmp(fake->requests[i].method, "GET") == 0)
			first_get_path = xstrdup(fake->requests[i].path);
	}
	*status = NULL;
	for (int i = 0; i < fake->nrequests; i++) {
		if (strcmp(fake->requests[i].method, "PUT") == 0) {
			cJSON_Delete(*status);
			*status = cJSON_Duplicate(fake->requests[i].json, 1);
		}
	}
	executor_free(e);
	fake_apiserver_free(fake);
	return requests;
}

/* A delete answered 405 MethodNotAllowed, and what the pass sends: it is no failure, no
 * status reports it, and the pass does not fail. */
struct refused_case {
	const char *name;
	struct fake_fault fault;
	enum content content;
	const char *requests;
};

#define REFUSED(path) { "DELETE", path, 1, 1, 405, "MethodNotAllowed", \
	"the server does not allow this method on the requested resource", NULL }

static const struct refused_case refused_cases[] = {
	/* kube's deleteCollection gives way to deleteEachItem. */
	{ "executor: a collection delete refused with 405 gives way to the deletes of each "
	    "object", REFUSED("gizmos"), GIZMO, "DELETE gizmos;DELETE gizmos/z1" },
	/* kube's deleteEachItem goes on past MethodNotAllowed. */
	{ "executor: an object's delete refused with 405 is passed over (deleteEachItem)",
	    REFUSED("gizmos/z1"), GIZMO_AND_WIDGET,
	    "DELETE gizmos;DELETE gizmos/z1;DELETE widgets" },
};

#undef REFUSED

static void
executor_lets_a_refused_delete_pass(void **state)
{
	struct ctl_world *w = *state;
	const struct refused_case *row = w->row;
	struct executor_outcome outcome;
	cJSON *status;

	assert_described("requests", ctl_keep(w, carry_out(w, &row->fault, row->content,
	    &outcome, &status)), row->requests);
	assert_int_equal(outcome.failed, 0);
	assert_null(status);
}

/* The answers to the lists before a finalize (a fault on one resource's), and whether
 * the pass fails. */
struct list_case {
	const char *name;
	struct fake_fault fault;
	int failed;
};

static const struct list_case list_cases[] = {
	{ "executor: the finalize follows live lists that find the namespace empty",
	    { "GET", "nothing", 1, 1, 500, "InternalError", "not asked", NULL }, 0 },
	{ "executor: a list answered 404 (the resource is gone) finds it empty",
	    { "GET", "gadgets", 1, 1, 404, "NotFound", "the server could not find the "
	    "requested resource", NULL }, 0 },
	{ "executor: a list answered 405 (the resource takes none) finds it empty",
	    { "GET", "gadgets", 1, 1, 405, "MethodNotAllowed", "the server does not allow "
	    "this method on the requested resource", NULL }, 0 },
	{ "executor: a list that finds an object the cache lacks holds the finalize back",
	    { "GET", "widgets", 1, 1, 200, NULL, "{\"kind\":\"List\",\"metadata\":{},"
	    "\"items\":[{\"metadata\":{\"name\":\"w9\",\"namespace\":\"" NS "\"}}]}",
	    NULL }, 1 },
	{ "executor: a list that fails holds the finalize back",
	    { "GET", "widgets", 1, 1, 500, "InternalError", "etcd is on fire", NULL }, 1 },
	{ "executor: a list answered without items holds the finalize back",
	    { "GET", "widgets", 1, 1, 200, NULL, "{\"kind\":\"Status\"}", NULL }, 1 },
};

/* The pass that finalizes first lists every resource live (kube lists right before it
 * finalizes), one object at most, before any write. Lists that find nothing, or a
 * resource gone (404) or that takes no list (405), let the collection deletes and the
 * finalize go. A list that finds an object (the cache has not seen it yet), or that fails,
 * fails the pass: nothing is written, and the namespace is synced again with backoff. */
static void
executor_finalizes_only_after_lists_find_the_namespace_empty(void **state)
{
#define LISTS "GET pods;GET replicasets;GET deployments;GET replicationcontrollers;" \
	"GET configmaps;GET controllerrevisions;GET cronjobs;GET daemonsets;GET endpoints;" \
	"GET endpointslices;GET flakes;GET gadgets;GET gizmos;GET ingresses;GET jobs;" \
	"GET leases;GET limitranges;GET persistentvolumeclaims;GET poddisruptionbudgets;" \
	"GET resourcequotas;GET secrets;GET serviceaccounts;GET services;GET statefulsets;" \
	"GET widgets"
	struct ctl_world *w = *state;
	const struct list_case *row = w->row;
	struct executor_outcome outcome;
	cJSON *status;

	assert_described("requests", ctl_keep(w, carry_out(w, &row->fault, NOTHING, &outcome,
	    &status)), row->failed ? LISTS : LISTS ";DELETE pods;DELETE replicasets;"
	    "DELETE deployments;DELETE replicationcontrollers;DELETE configmaps;"
	    "DELETE controllerrevisions;DELETE cronjobs;DELETE daemonsets;DELETE endpoints;"
	    "DELETE endpointslices;DELETE flakes;DELETE gizmos;DELETE ingresses;DELETE jobs;"
	    "DELETE leases;DELETE limitranges;DELETE persistentvolumeclaims;"
	    "DELETE poddisruptionbudgets;DELETE resourcequotas;DELETE secrets;"
	    "DELETE serviceaccounts;DELETE services;DELETE statefulsets;DELETE widgets;"
	    "PUT finalize");
	assert_string_equal(first_get_path, "/api/v1/namespaces/" NS "/pods?limit=1");
	assert_int_equal(outcome.failed, row->failed);
	/* The last PUT, the finalize's: the namespace without its finalizer. */
	if (row->failed) {
		assert_null(status);
	} else {
		assert_non_null(status);
		assert_string_equal(cJSON_GetStringValue(json_path(status, "kind")),
		    "Namespace");
		assert_null(json_path(status, "spec.finalizers"));
		cJSON_Delete(status);
	}
#undef LISTS
}

/* A collection delete that fails otherwise skips the deletes of each of its objects (kube's
 * deleteCollection returns the error before deleteEachItem), the other resources' deletes
 * still go (kube's deleteAllContent goes on), and the status reports it in
 * NamespaceDeletionContentFailure; the namespace is synced again with backoff. */
static void
executor_reports_a_failed_collection_delete(void **state)
{
	static const struct fake_fault fault = { "DELETE", "gizmos", 1, 1, 500,
	    "InternalError", "etcd is on fire", NULL };
	struct ctl_world *w = *state;
	struct executor_outcome outcome;
	cJSON *status;

	/* widgets come after gizmos, and still go. */
	assert_described("requests", ctl_keep(w, carry_out(w, &fault, GIZMO_AND_WIDGET,
	    &outcome, &status)), "DELETE gizmos;DELETE widgets;PUT status");
	assert_int_equal(outcome.failed, 1);
	assert_described("status", ctl_keep(w, describe_status_body(status)),
	    "Terminating; NamespaceDeletionDiscoveryFailure False ResourcesDiscovered; "
	    "NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions; "
	    "NamespaceDeletionContentFailure True ContentDeletionFailed: Failed to delete all "
	    "resource types, 1 remaining: etcd is on fire; "
	    "NamespaceContentRemaining False ContentRemoved; "
	    "NamespaceFinalizersRemaining False ContentHasNoFinalizers");
	cJSON_Delete(status);
}

/* --- what discovery tells the controller (metadatacache.c) ----------------------------- */

/* Appends a discovered resource to d. */
static void
discovered(struct discovery *d, const char *group, const char *plural, const char *kind,
    unsigned verbs)
{
	struct api_resource *a;

	d->items = xrealloc(d->items, (d->count + 1) * sizeof *d->items);
	a = &d->items[d->count++];
	memset(a, 0, sizeof *a);
	a->group = xstrdup(group);
	a->version = xstrdup("v1");
	a->resource = xstrdup(plural);
	a->kind = xstrdup(kind);
	a->namespaced = 1;
	a->verbs = verbs;
}

/* The verbs of resource name as api_resources holds them, as text ("NULL" when not
 * known, "absent" without a row). */
static char *
verbs_of(struct ctl_world *w, const char *name)
{
	sqlite3_stmt *stmt;
	char *text;

	if (sqlite3_prepare_v2(store_db(w->store), "SELECT verbs FROM api_resources "
	    "WHERE resource = ?1", -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("prepare: %s", sqlite3_errmsg(store_db(w->store)));
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) != SQLITE_ROW)
		text = xstrdup("absent");
	else if (sqlite3_column_type(stmt, 0) == SQLITE_NULL)
		text = xstrdup("NULL");
	else
		text = xasprintf("%d", sqlite3_column_int(stmt, 0));
	sqlite3_finalize(stmt);
	return text;
}

/* The group-versions discovery_failures holds, comma-separated. */
static char *
failures(struct ctl_world *w)
{
	sqlite3_stmt *stmt;
	struct buf b;

	if (sqlite3_prepare_v2(store_db(w->store), "SELECT group_version FROM "
	    "discovery_failures ORDER BY group_version", -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("prepare: %s", sqlite3_errmsg(store_db(w->store)));
	buf_init(&b);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&b, "%s%s", b.len > 0 ? "," : "",
		    (const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	return buf_detach(&b);
}

/* Each read of discovery records the verbs of every resource it lists (a new one's and a
 * typed one's alike) and replaces the group-versions it could not read. */
static void
discovery_reads_record_verbs_and_failures(void **state)
{
	struct ctl_world *w = *state;
	struct event_base *base = event_base_new();
	struct informer_set *informers = informer_set_new(base, NULL, w->store);
	struct metadatacache *mc;
	struct discovery d;

	informer_set_add(informers, resource_find("pods"));
	if (informer_set_start(informers, &w->error) != 0)
		fail_msg("informer_set_start: %s", w->error);
	mc = metadatacache_new(base, NULL, w->store, informers);
	memset(&d, 0, sizeof d);
	discovered(&d, "", "configmaps", "ConfigMap", NO_COLLECTION);
	discovered(&d, "example.org", "sprockets", "Sprocket", ALL_VERBS);
	d.failed = xstrdup("metrics.k8s.io/v1beta1, b.io/v2");
	metadatacache_apply(mc, &d);
	discovery_clear(&d);
	assert_described("configmaps", ctl_keep(w, verbs_of(w, "configmaps")), "7");
	assert_described("sprockets", ctl_keep(w, verbs_of(w, "sprockets.example.org")), "63");
	assert_described("failures", ctl_keep(w, failures(w)),
	    "b.io/v2,metrics.k8s.io/v1beta1");

	memset(&d, 0, sizeof d);
	discovered(&d, "", "configmaps", "ConfigMap", ALL_VERBS);
	metadatacache_apply(mc, &d);
	discovery_clear(&d);
	assert_described("configmaps again", ctl_keep(w, verbs_of(w, "configmaps")), "63");
	assert_described("failures again", ctl_keep(w, failures(w)), "");

	informer_set_stop(informers);
	informer_set_free(informers);
	metadatacache_free(mc);
	event_base_free(base);
}

/* --- main ----------------------------------------------------------------------------- */

static struct CMUnitTest
row_test(const char *name, CMUnitTestFunction f, const void *row)
{
	struct CMUnitTest t = { name, f, env_setup, env_teardown, (void *)(uintptr_t)row };

	return t;
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(sync_cases) + NELEM(event_cases) + NELEM(list_cases) +
	    16];
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < NELEM(sync_cases); i++)
		tests[n++] = row_test(sync_cases[i].name, sync_case_holds, &sync_cases[i]);
	tests[n++] = row_test("sqlkcm's: the finalize carries the cached namespace",
	    finalize_carries_the_cached_namespace, NULL);
	tests[n++] = row_test("makeDeleteContentCondition: a failed deletion is reported in "
	    "the status", deletion_failure_is_reported_in_the_status, NULL);
	tests[n++] = row_test("newSuccessfulCondition: kube's messages",
	    success_conditions_carry_kube_messages, NULL);
	for (size_t i = 0; i < NELEM(event_cases); i++)
		tests[n++] = row_test(event_cases[i].name, event_case_holds, &event_cases[i]);
	tests[n++] = row_test("sqlkcm's: list_keys lists the namespaces being deleted",
	    list_keys_lists_the_namespaces_being_deleted, NULL);
	tests[n++] = row_test("NamespaceControllerConfiguration: kube's flags and defaults",
	    flags_are_kubes, NULL);
	tests[n++] = row_test("namespaces_terminating: what holds each namespace",
	    view_shows_what_holds_a_namespace, NULL);
	tests[n++] = row_test("namespaces_terminating: an empty namespace shows once",
	    view_shows_an_empty_namespace_once, NULL);
	for (size_t i = 0; i < NELEM(refused_cases); i++)
		tests[n++] = row_test(refused_cases[i].name, executor_lets_a_refused_delete_pass,
		    &refused_cases[i]);
	for (size_t i = 0; i < NELEM(list_cases); i++)
		tests[n++] = row_test(list_cases[i].name,
		    executor_finalizes_only_after_lists_find_the_namespace_empty, &list_cases[i]);
	tests[n++] = row_test("executor: a failed collection delete is reported in "
	    "NamespaceDeletionContentFailure", executor_reports_a_failed_collection_delete, NULL);
	tests[n++] = row_test("metadatacache: discovery's verbs and failures are recorded",
	    discovery_reads_record_verbs_and_failures, NULL);
	rc = _cmocka_run_group_tests("namespace", tests, n, NULL, NULL);
	free(first_get_path);
	return rc;
}
