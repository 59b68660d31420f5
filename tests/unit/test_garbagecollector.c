/*
 * test_garbagecollector.c - the garbage collector (controllers/garbagecollector.c) against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/garbagecollector: attemptToDeleteItem,
 * isDangling, classifyReferences, processDeletingDependentsItem, orphanDependents and
 * removeFinalizer (garbagecollector.go, operations.go, patch.go) for a sync, and
 * processGraphChanges, addDependentToOwners, processTransitions and
 * addUnblockedOwnersToDeleteQueue (graph_builder.go) for the informer handlers; the cases
 * are those of garbagecollector_test.go (TestAttemptToDeleteItem, TestConflictingData,
 * TestDeleteOwnerRefPatch, TestUnblockOwnerReference) where they map, and one row for each
 * branch of those functions. Every row names the kube case or the line it ports; rows of
 * sqlkcm's own say so.
 *
 * kube's tests step a graph and a fake apiserver; here the cache is the graph. A row writes
 * the objects of one step into an in-memory store and asks one question:
 *
 * - sync: what does a sync of this uid decide? Its live reads that must find an owner
 *   absent (kube's isDangling GETs), one per line as "get RESOURCE NS/NAME uid=UID"; its
 *   writes, as "delete RESOURCE NS/NAME POLICY rv=RV" and "patch RESOURCE NS/NAME rv=RV
 *   ownerReferences=[UID,UID/block,UID/noblock]" (or "=null", or "finalizers=[...]"),
 *   lines joined by "; "; its events as kube's fake recorder prints them ("Warning
 *   Reason message"); whether it waits; or the error it fails with.
 * - handle_event: which keys does an informer event queue (sorted, as a set: a workqueue
 *   holds a key once)?
 * - list_keys: which keys are synced at start?
 *
 * Each row is a test of its own, named after the row.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "action.h"
#include "controller.h"
#include "controllers/garbagecollector.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

#define DELETED_AT "2026-01-01T00:00:00Z"
#define MAX_OBJECTS 6

/* --- objects -------------------------------------------------------------------------- */

/* Owner references, as JSON text. */
#define REF(api_version, kind, name, uid) \
	"{\"apiVersion\":\"" api_version "\",\"kind\":\"" kind "\",\"name\":\"" name \
	"\",\"uid\":\"" uid "\"}"
#define BLOCKING_REF(api_version, kind, name, uid) \
	"{\"apiVersion\":\"" api_version "\",\"kind\":\"" kind "\",\"name\":\"" name \
	"\",\"uid\":\"" uid "\",\"blockOwnerDeletion\":true}"
#define NONBLOCKING_REF(api_version, kind, name, uid) \
	"{\"apiVersion\":\"" api_version "\",\"kind\":\"" kind "\",\"name\":\"" name \
	"\",\"uid\":\"" uid "\",\"blockOwnerDeletion\":false}"
#define SECRET(name, uid) REF("v1", "PodTemplate", name, uid)
#define BLOCKING_SECRET(name, uid) BLOCKING_REF("v1", "PodTemplate", name, uid)
#define NONBLOCKING_SECRET(name, uid) NONBLOCKING_REF("v1", "PodTemplate", name, uid)
#define CONFIGMAP(name, uid) REF("v1", "ConfigMap", name, uid)
#define BLOCKING_CONFIGMAP(name, uid) BLOCKING_REF("v1", "ConfigMap", name, uid)
#define NONBLOCKING_CONFIGMAP(name, uid) NONBLOCKING_REF("v1", "ConfigMap", name, uid)
#define POD(name, uid) REF("v1", "Pod", name, uid)
#define BLOCKING_POD(name, uid) BLOCKING_REF("v1", "Pod", name, uid)

/* Finalizer lists. */
#define ORPHAN "[\"orphan\"]"
#define FOREGROUND "[\"foregroundDeletion\"]"

/* A cached object. */
struct object_spec {
	const char *resource;	/* "pods", "configmaps", "nodes", ...; NULL ends a list */
	const char *ns;		/* NULL: cluster-scoped */
	const char *name;
	const char *uid;
	const char *rv;		/* NULL: "1" */
	const char *owners;	/* metadata.ownerReferences JSON; NULL: none */
	const char *finalizers;	/* metadata.finalizers JSON; NULL: none */
	int deleting;		/* it has a deletionTimestamp */
};

/* An object of resource r in namespace n (NULL: cluster-scoped), then any of .rv, .owners,
 * .finalizers and .deleting. */
#define OBJECT(r, n, object_name, object_uid, ...) \
	{ .resource = r, .ns = n, .name = object_name, .uid = object_uid, __VA_ARGS__ }

/* The object spec describes: a typed resource's object, or the PartialObjectMetadata a
 * metadata LIST sends. */
static cJSON *
object_new(const struct object_spec *spec)
{
	const struct resource *r = resource_find_any(spec->resource);
	struct buf b;
	cJSON *object;

	if (r == NULL)
		fail_msg("no resource %s", spec->resource);
	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\","
	    "\"uid\":\"%s\",\"resourceVersion\":\"%s\"",
	    r->metadata_only ? "meta.k8s.io/v1" : r->api_version,
	    r->metadata_only ? "PartialObjectMetadata" : r->kind, spec->name, spec->uid,
	    spec->rv != NULL ? spec->rv : "1");
	if (spec->ns != NULL)
		buf_printf(&b, ",\"namespace\":\"%s\"", spec->ns);
	if (spec->deleting)
		buf_printf(&b, ",\"deletionTimestamp\":\"%s\"", DELETED_AT);
	if (spec->owners != NULL)
		buf_printf(&b, ",\"ownerReferences\":%s", spec->owners);
	if (spec->finalizers != NULL)
		buf_printf(&b, ",\"finalizers\":%s", spec->finalizers);
	buf_append_str(&b, "}}");
	object = cJSON_Parse(b.data);
	if (object == NULL)
		fail_msg("not JSON: %s", b.data);
	buf_free(&b);
	return object;
}

/* --- the store and the controller ----------------------------------------------------- */

/* The resources discovery would find, cached by their metadata. */
static const struct {
	const char *group, *version, *plural, *kind;
	int namespaced;
} metadata_resources[] = {
	{ "", "v1", "configmaps", "ConfigMap", 1 },
	{ "", "v1", "podtemplates", "PodTemplate", 1 },
	{ "", "v1", "replicationcontrollers", "ReplicationController", 1 },
	{ "", "v1", "nodes", "Node", 0 },
	{ "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", 0 },
	{ "rbac.authorization.k8s.io", "v1", "roles", "Role", 1 },
	{ "example.com", "v1", "widgets", "Widget", 1 },
};

/* An in-memory store with those resources and a garbage collector over it. */
static int
env_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(NULL, NULL);

	w->row = *state;
	*state = w;
	for (size_t i = 0; i < NELEM(metadata_resources); i++) {
		const struct resource *r = resource_metadata(metadata_resources[i].group,
		    metadata_resources[i].version, metadata_resources[i].plural,
		    metadata_resources[i].kind, metadata_resources[i].namespaced);

		if (store_note_api_resource(w->store, r, 1, &w->error) != 0)
			fail_msg("store_note_api_resource %s: %s", r->name, w->error);
	}
	if (ctl_start(w, &garbagecollector_controller_type, NULL) != 0)
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

/* Writes the object spec describes into the cache. */
static void
cache_object(struct ctl_world *w, const struct object_spec *spec)
{
	ctl_cache(w, resource_find_any(spec->resource), object_new(spec));
}

/* Writes every object of a list into the cache. */
static void
cache_objects(struct ctl_world *w, const struct object_spec *specs)
{
	for (int i = 0; i < MAX_OBJECTS && specs[i].resource != NULL; i++)
		cache_object(w, &specs[i]);
}

/* --- describing a sync's result ------------------------------------------------------- */

/* Appends "ns/name", or "name" when cluster-scoped. */
static void
put_target(struct buf *b, const char *ns, const char *name)
{
	if (ns != NULL && *ns != '\0')
		buf_printf(b, "%s/%s", ns, name);
	else
		buf_append_str(b, name);
}

/* Appends a patch's ownerReferences: uids, each with /block or /noblock when the field is
 * set; "(partial)" after a reference that lost its apiVersion, kind or name. */
static void
put_references(struct buf *b, const cJSON *refs)
{
	const cJSON *ref;
	int first = 1;

	if (cJSON_IsNull(refs)) {
		buf_append_str(b, "null");
		return;
	}
	buf_append_str(b, "[");
	cJSON_ArrayForEach(ref, refs) {
		const cJSON *block = cJSON_GetObjectItemCaseSensitive(ref, "blockOwnerDeletion");
		const char *uid = json_string(ref, "uid");

		buf_printf(b, "%s%s%s", first ? "" : ",", uid != NULL ? uid : "?",
		    cJSON_IsTrue(block) ? "/block" : cJSON_IsFalse(block) ? "/noblock" : "");
		if (json_string(ref, "apiVersion") == NULL || json_string(ref, "kind") == NULL ||
		    json_string(ref, "name") == NULL)
			buf_append_str(b, "(partial)");
		first = 0;
	}
	buf_append_str(b, "]");
}

/* Appends a string list (finalizers), or null. */
static void
put_strings(struct buf *b, const cJSON *list)
{
	const cJSON *s;
	int first = 1;

	if (cJSON_IsNull(list)) {
		buf_append_str(b, "null");
		return;
	}
	buf_append_str(b, "[");
	cJSON_ArrayForEach(s, list) {
		buf_printf(b, "%s%s", first ? "" : ",", cJSON_IsString(s) ? s->valuestring : "?");
		first = 0;
	}
	buf_append_str(b, "]");
}

/* The uid of the object named by resource, namespace and name among specs, or NULL. */
static const char *
spec_uid(const struct object_spec *specs, const char *resource, const char *ns,
    const char *name)
{
	for (int i = 0; i < MAX_OBJECTS && specs[i].resource != NULL; i++) {
		if (strcmp(specs[i].resource, resource) == 0 &&
		    strcmp(specs[i].ns != NULL ? specs[i].ns : "", ns != NULL ? ns : "") == 0 &&
		    strcmp(specs[i].name, name) == 0)
			return specs[i].uid;
	}
	return NULL;
}

/* One write, as the file's header describes; a uid precondition that is not the cached
 * object's, or a patch that is not a merge patch of metadata alone, is marked. */
static char *
describe_write(const struct action *a, const struct object_spec *specs)
{
	const char *resource = a->resource != NULL ? a->resource->name : "?";
	const char *uid = spec_uid(specs, resource, a->namespace, a->name);
	struct buf b;

	buf_init(&b);
	if (a->type == ACTION_DELETE) {
		buf_printf(&b, "delete %s ", resource);
		put_target(&b, a->namespace, a->name);
		buf_printf(&b, " %s rv=%s", a->propagation != NULL ? a->propagation : "default",
		    a->precondition_rv != NULL ? a->precondition_rv : "none");
	} else if (a->type == ACTION_PATCH) {
		const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(a->body, "metadata");
		const cJSON *member;

		buf_printf(&b, "patch %s ", resource);
		put_target(&b, a->namespace, a->name);
		if (!a->merge_patch)
			buf_append_str(&b, " (not a merge patch)");
		if (cJSON_GetArraySize(a->body) != 1 || !cJSON_IsObject(metadata))
			buf_append_str(&b, " (not a patch of metadata alone)");
		cJSON_ArrayForEach(member, metadata) {
			if (strcmp(member->string, "resourceVersion") == 0) {
				buf_printf(&b, " rv=%s", cJSON_IsString(member) ?
				    member->valuestring : "?");
			} else if (strcmp(member->string, "ownerReferences") == 0) {
				buf_append_str(&b, " ownerReferences=");
				put_references(&b, member);
			} else if (strcmp(member->string, "finalizers") == 0) {
				buf_append_str(&b, " finalizers=");
				put_strings(&b, member);
			} else {
				buf_printf(&b, " (also %s)", member->string);
			}
		}
	} else {
		buf_printf(&b, "action %d on %s ", (int)a->type, resource);
		put_target(&b, a->namespace, a->name);
	}
	if (uid == NULL || a->uid == NULL || strcmp(uid, a->uid) != 0)
		buf_printf(&b, " (uid precondition %s)", a->uid != NULL ? a->uid : "none");
	return buf_detach(&b);
}

static int
compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The writes of r; with unordered, all but the last are sorted (sent at once, as
 * orphanDependents' goroutines send them). */
static char *
describe_writes(const struct sync_result *r, const struct object_spec *specs, int unordered)
{
	char **lines = xcalloc((size_t)r->nwrites + 1, sizeof *lines);
	struct buf b;

	for (int i = 0; i < r->nwrites; i++)
		lines[i] = describe_write(&r->writes[i], specs);
	if (unordered && r->nwrites > 2)
		qsort(lines, (size_t)r->nwrites - 1, sizeof *lines, compare_strings);
	buf_init(&b);
	for (int i = 0; i < r->nwrites; i++) {
		buf_printf(&b, "%s%s", i > 0 ? "; " : "", lines[i]);
		free(lines[i]);
	}
	free(lines);
	return buf_detach(&b);
}

/* The confirmations of r: "get RESOURCE NS/NAME uid=UID". */
static char *
describe_confirms(const struct sync_result *r)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < r->nconfirm_absent; i++) {
		const struct action *a = &r->confirm_absent[i];

		buf_printf(&b, "%s%s %s ", i > 0 ? "; " : "", a->type == ACTION_GET ? "get" :
		    "not-a-get", a->resource != NULL ? a->resource->name : "?");
		put_target(&b, a->namespace, a->name);
		buf_printf(&b, " uid=%s", a->uid != NULL ? a->uid : "none");
	}
	return buf_detach(&b);
}

/* The events of r, as kube's fake recorder prints them. */
static char *
describe_events(const struct sync_result *r)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < r->nevents; i++)
		buf_printf(&b, "%s%s %s %s", i > 0 ? "; " : "", r->events[i].type,
		    r->events[i].reason, r->events[i].message);
	return buf_detach(&b);
}

/* --- sync ----------------------------------------------------------------------------- */

struct sync_case {
	const char *name;
	struct object_spec objects[MAX_OBJECTS];
	const char *key;		/* the uid synced */
	const char *confirms;		/* NULL: none */
	const char *writes;		/* NULL: none */
	const char *events;		/* NULL: none */
	int waiting;			/* it waits for dependents that block */
	const char *error[2];		/* the sync fails with an error naming both */
	int writes_unordered;		/* writes but the last come at once, listed sorted */
};

static const struct sync_case sync_cases[] = {
	/* --- attemptToDeleteItem: no solid owner (garbagecollector.go:634-659) --- */
	{
		.name = "TestAttemptToDeleteItem: a pod whose only owner is absent is deleted in "
		    "the background once the owner is confirmed absent",
		.objects = {
			OBJECT("pods", "ns1", "ToBeDeletedPod", "uid-pod", .rv = "42",
			    .owners = "[" REF("v1", "ReplicationController", "owner1", "123") "]"),
		},
		.key = "uid-pod",
		.confirms = "get replicationcontrollers ns1/owner1 uid=123",
		.writes = "delete pods ns1/ToBeDeletedPod Background rv=42",
	},
	{
		.name = "TestConflictingData, resourceVersion conflict between Get/Delete "
		    "(issue 114603): the deletion carries the cached resourceVersion and uid as "
		    "preconditions (operations.go:55-63)",
		.objects = {
			OBJECT("pods", "ns1", "podname2", "poduid2", .rv = "42",
			    .owners = "[" POD("podname1", "poduid1") "]"),
		},
		.key = "poduid2",
		.confirms = "get pods ns1/podname1 uid=poduid1",
		.writes = "delete pods ns1/podname2 Background rv=42",
	},
	{
		.name = "isDangling: an owner re-created under its name with another uid is "
		    "absent (garbagecollector.go:447-453)",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-new"),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" SECRET("owner", "uid-old") "]"),
		},
		.key = "uid-child",
		.confirms = "get podtemplates ns1/owner uid=uid-old",
		.writes = "delete configmaps ns1/child Background rv=42",
	},
	{
		.name = "isDangling: an absent custom resource owner is confirmed absent through "
		    "its own resource",
		.objects = {
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" REF("example.com/v1", "Widget", "w1", "uid-w1") "]"),
		},
		.key = "uid-child",
		.confirms = "get widgets.example.com ns1/w1 uid=uid-w1",
		.writes = "delete configmaps ns1/child Background rv=42",
	},
	{
		.name = "attemptToDeleteItem: all owners absent and the orphan finalizer set: "
		    "deleted with the Orphan policy (garbagecollector.go:640-642)",
		.objects = {
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" SECRET("s2", "uid-s2") "]", .finalizers = ORPHAN),
		},
		.key = "uid-child",
		.confirms = "get podtemplates ns1/s2 uid=uid-s2",
		.writes = "delete configmaps ns1/child Orphan rv=42",
	},
	{
		.name = "attemptToDeleteItem: all owners absent and the foregroundDeletion "
		    "finalizer set: deleted in the foreground (garbagecollector.go:643-645)",
		.objects = {
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" SECRET("s2", "uid-s2") "]", .finalizers = FOREGROUND),
		},
		.key = "uid-child",
		.confirms = "get podtemplates ns1/s2 uid=uid-s2",
		.writes = "delete configmaps ns1/child Foreground rv=42",
	},

	/* --- namespaces (TestConflictingData; isDangling, garbagecollector.go:413-434) --- */
	{
		.name = "TestConflictingData, bad child in ns1 -> owner in ns2: "
		    "OwnerRefInvalidNamespace, the owner confirmed absent in the child's namespace, "
		    "the child deleted",
		.objects = {
			OBJECT("pods", "ns1", "podname1", "poduid1", .rv = "42",
			    .owners = "[" POD("podname2", "poduid2") "]"),
			OBJECT("pods", "ns2", "podname2", "poduid2"),
		},
		.key = "poduid1",
		.events = "Warning OwnerRefInvalidNamespace ownerRef [v1/Pod, namespace: ns1, "
		    "name: podname2, uid: poduid2] does not exist in namespace \"ns1\"",
		.confirms = "get pods ns1/podname2 uid=poduid2",
		.writes = "delete pods ns1/podname1 Background rv=42",
	},
	{
		.name = "TestConflictingData, bad cluster-scoped child -> owner in ns1 (owner "
		    "observed): OwnerRefInvalidNamespace, and the child is left alone",
		.objects = {
			OBJECT("nodes", NULL, "nodename", "nodeuid1",
			    .owners = "[" POD("podname1", "poduid1") "]"),
			OBJECT("pods", "ns1", "podname1", "poduid1"),
		},
		.key = "nodeuid1",
		.events = "Warning OwnerRefInvalidNamespace ownerRef [v1/Pod, namespace: , "
		    "name: podname1, uid: poduid1] does not exist in namespace \"\"",
	},
	{
		.name = "TestConflictingData, cluster-scoped bad child, missing parent: a "
		    "cluster-scoped object naming an absent namespaced owner is left alone, nothing "
		    "confirmed",
		.objects = {
			OBJECT("nodes", NULL, "nodename", "nodeuid1",
			    .owners = "[" POD("podname1", "poduid1") "]"),
		},
		.key = "nodeuid1",
	},
	{
		.name = "classifyReferences: a cluster-scoped object with a solid owner and a "
		    "namespaced one is left alone (namespacedOwnerOfClusterScopedObjectErr, "
		    "garbagecollector.go:351-353)",
		.objects = {
			OBJECT("priorityclasses.scheduling.k8s.io", NULL, "admin", "uid-admin"),
			OBJECT("nodes", NULL, "nodename", "nodeuid1",
			    .owners = "[" REF("scheduling.k8s.io/v1", "PriorityClass", "admin",
			    "uid-admin") "," POD("podname1", "poduid1") "]"),
		},
		.key = "nodeuid1",
	},
	{
		.name = "TestConflictingData, good child in ns1 -> cluster-scoped owner: the "
		    "cached Node is a solid owner",
		.objects = {
			OBJECT("nodes", NULL, "nodename", "nodeuid1"),
			OBJECT("pods", "ns1", "podname1", "poduid1",
			    .owners = "[" REF("v1", "Node", "nodename", "nodeuid1") "]"),
		},
		.key = "poduid1",
	},
	{
		.name = "isDangling: an absent cluster-scoped owner of a namespaced object is "
		    "confirmed absent cluster-wide (resourceDefaultNamespace)",
		.objects = {
			OBJECT("pods", "ns1", "podname1", "poduid1", .rv = "42",
			    .owners = "[" REF("v1", "Node", "nodename", "nodeuid1") "]"),
		},
		.key = "poduid1",
		.confirms = "get nodes nodename uid=nodeuid1",
		.writes = "delete pods ns1/podname1 Background rv=42",
	},

	/* --- API versions and kinds (TestConflictingData) --- */
	{
		.name = "TestConflictingData, good child -> existing owner with non-preferred "
		    "accessible API version: a Role named as v1beta1 and cached as v1 is solid",
		.objects = {
			OBJECT("roles.rbac.authorization.k8s.io", "ns1", "role1", "roleuid1"),
			OBJECT("pods", "ns1", "podname1", "poduid1",
			    .owners = "[" REF("rbac.authorization.k8s.io/v1beta1", "Role", "role1",
			    "roleuid1") "]"),
		},
		.key = "poduid1",
	},
	{
		.name = "TestConflictingData, child -> existing owner with inaccessible API "
		    "version: a REST mapping error, retried, although the owner's uid is cached "
		    "(garbagecollector.go:413-416)",
		.objects = {
			OBJECT("deployments", "ns1", "deployment1", "deploymentuid1"),
			OBJECT("pods", "ns1", "podname1", "poduid1",
			    .owners = "[" REF("extensions/v1beta1", "Deployment", "deployment1",
			    "deploymentuid1") "]"),
		},
		.key = "poduid1",
		.error = { "extensions/v1beta1", "Deployment" },
	},
	{
		.name = "TestConflictingData, child -> non-existent owner with inaccessible API "
		    "version: a REST mapping error, retried, nothing deleted",
		.objects = {
			OBJECT("pods", "ns1", "podname1", "poduid1",
			    .owners = "[" REF("extensions/v1beta1", "Deployment", "deployment1",
			    "deploymentuid1") "]"),
		},
		.key = "poduid1",
		.error = { "extensions/v1beta1", "Deployment" },
	},
	{
		.name = "apiResource: an owner kind no resource maps to is an error naming its "
		    "apiVersion and kind, retried",
		.objects = {
			OBJECT("configmaps", "ns1", "child", "uid-child",
			    .owners = "[" REF("example.com/v1", "Gadget", "g1", "uid-g1") "]"),
		},
		.key = "uid-child",
		.error = { "example.com/v1", "Gadget" },
	},
	{
		.name = "TestConflictingData, bad child -> existing owner with incorrect API "
		    "version: a Secret reference carrying a cached Deployment's uid is dangling, "
		    "the Secret confirmed absent, the child deleted (garbagecollector.go:434-442)",
		.objects = {
			OBJECT("deployments", "ns1", "deployment1", "deploymentuid1"),
			OBJECT("pods", "ns1", "badpod", "badpoduid", .rv = "42",
			    .owners = "[" SECRET("secretname", "deploymentuid1") "]"),
		},
		.key = "badpoduid",
		.confirms = "get podtemplates ns1/secretname uid=deploymentuid1",
		.writes = "delete pods ns1/badpod Background rv=42",
	},
	{
		.name = "isDangling: a reference with a cached Deployment's uid but another name is "
		    "dangling, the Deployment of that name confirmed absent, the child deleted "
		    "(garbagecollector.go:434-442)",
		.objects = {
			OBJECT("deployments", "ns1", "deployment1", "deploymentuid1"),
			OBJECT("pods", "ns1", "badpod", "badpoduid", .rv = "42",
			    .owners = "[" REF("apps/v1", "Deployment", "other", "deploymentuid1")
			    "]"),
		},
		.key = "badpoduid",
		.confirms = "get deployments ns1/other uid=deploymentuid1",
		.writes = "delete pods ns1/badpod Background rv=42",
	},
	{
		.name = "TestConflictingData, good child -> existing owner with correct API "
		    "version: the cached Deployment is solid",
		.objects = {
			OBJECT("deployments", "ns1", "deployment1", "deploymentuid1"),
			OBJECT("pods", "ns1", "goodpod", "goodpoduid",
			    .owners = "[" REF("apps/v1", "Deployment", "deployment1",
			    "deploymentuid1") "]"),
		},
		.key = "goodpoduid",
	},

	/* --- attemptToDeleteItem: some solid owner (garbagecollector.go:571-595) --- */
	{
		.name = "attemptToDeleteItem, solid and absent owners: the absent one is confirmed "
		    "and patched out (TestDeleteOwnerRefPatch)",
		.objects = {
			OBJECT("podtemplates", "ns1", "s1", "uid-s1"),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" SECRET("s1", "uid-s1") "," SECRET("s2", "uid-s2") "]"),
		},
		.key = "uid-child",
		.confirms = "get podtemplates ns1/s2 uid=uid-s2",
		.writes = "patch configmaps ns1/child rv=42 ownerReferences=[uid-s1]",
	},
	{
		.name = "attemptToDeleteItem, solid and waiting owners: the reference to the "
		    "owner deleting in the foreground is patched out, nothing confirmed",
		.objects = {
			OBJECT("podtemplates", "ns1", "s1", "uid-s1"),
			OBJECT("podtemplates", "ns1", "w1", "uid-w1", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" SECRET("s1", "uid-s1") "," BLOCKING_SECRET("w1", "uid-w1")
			    "]"),
		},
		.key = "uid-child",
		.writes = "patch configmaps ns1/child rv=42 ownerReferences=[uid-s1]",
	},
	{
		.name = "attemptToDeleteItem, solid, absent and waiting owners: both others "
		    "patched out in one patch, the absent one confirmed",
		.objects = {
			OBJECT("podtemplates", "ns1", "s1", "uid-s1"),
			OBJECT("podtemplates", "ns1", "w1", "uid-w1", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" SECRET("s2", "uid-s2") "," SECRET("s1", "uid-s1") ","
			    BLOCKING_SECRET("w1", "uid-w1") "]"),
		},
		.key = "uid-child",
		.confirms = "get podtemplates ns1/s2 uid=uid-s2",
		.writes = "patch configmaps ns1/child rv=42 ownerReferences=[uid-s1]",
	},
	{
		.name = "attemptToDeleteItem, only solid owners: nothing to do "
		    "(garbagecollector.go:576-578)",
		.objects = {
			OBJECT("podtemplates", "ns1", "s1", "uid-s1"),
			OBJECT("podtemplates", "ns1", "s3", "uid-s3"),
			OBJECT("configmaps", "ns1", "child", "uid-child",
			    .owners = "[" SECRET("s1", "uid-s1") "," SECRET("s3", "uid-s3") "]"),
		},
		.key = "uid-child",
	},
	{
		.name = "attemptToDeleteItem, a solid owner and one cached in another namespace: "
		    "OwnerRefInvalidNamespace, the latter confirmed absent and patched out",
		.objects = {
			OBJECT("podtemplates", "ns1", "s1", "uid-s1"),
			OBJECT("podtemplates", "ns2", "s2", "uid-s2"),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" SECRET("s1", "uid-s1") "," SECRET("s2", "uid-s2") "]"),
		},
		.key = "uid-child",
		.events = "Warning OwnerRefInvalidNamespace ownerRef [v1/PodTemplate, namespace: ns1, "
		    "name: s2, uid: uid-s2] does not exist in namespace \"ns1\"",
		.confirms = "get podtemplates ns1/s2 uid=uid-s2",
		.writes = "patch configmaps ns1/child rv=42 ownerReferences=[uid-s1]",
	},

	/* --- attemptToDeleteItem: owners waiting for their dependents
	 * (garbagecollector.go:596-659) --- */
	{
		.name = "attemptToDeleteItem: an owner deletes in the foreground and the object "
		    "has dependents: deleted in the foreground",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
			OBJECT("configmaps", "ns1", "grandchild", "uid-grandchild",
			    .owners = "[" BLOCKING_CONFIGMAP("child", "uid-child") "]"),
		},
		.key = "uid-child",
		.writes = "delete configmaps ns1/child Foreground rv=42",
	},
	{
		.name = "attemptToDeleteItem: an owner deletes in the foreground and a dependent "
		    "deletes its own dependents: the object's references are unblocked, then it is "
		    "deleted in the foreground",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
			OBJECT("configmaps", "ns1", "grandchild", "uid-grandchild", .deleting = 1,
			    .finalizers = FOREGROUND,
			    .owners = "[" BLOCKING_CONFIGMAP("child", "uid-child") "]"),
		},
		.key = "uid-child",
		.writes = "patch configmaps ns1/child rv=42 ownerReferences=[uid-owner/noblock]; "
		    "delete configmaps ns1/child Foreground rv=42",
	},
	{
		.name = "attemptToDeleteItem: a dependent deleted with the orphan finalizer does "
		    "not delete its dependents, so no unblocking",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
			OBJECT("configmaps", "ns1", "grandchild", "uid-grandchild", .deleting = 1,
			    .finalizers = ORPHAN,
			    .owners = "[" BLOCKING_CONFIGMAP("child", "uid-child") "]"),
		},
		.key = "uid-child",
		.writes = "delete configmaps ns1/child Foreground rv=42",
	},
	{
		.name = "attemptToDeleteItem: an owner deletes in the foreground, the object has "
		    "no dependents: deleted in the background",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
		},
		.key = "uid-child",
		.writes = "delete configmaps ns1/child Background rv=42",
	},
	{
		.name = "attemptToDeleteItem: an owner deletes in the foreground, the object has "
		    "no dependents and the orphan finalizer: deleted with the Orphan policy",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]",
			    .finalizers = ORPHAN),
		},
		.key = "uid-child",
		.writes = "delete configmaps ns1/child Orphan rv=42",
	},
	{
		.name = "attemptToDeleteItem: an owner deletes in the foreground, the object has "
		    "no dependents and the foregroundDeletion finalizer: deleted in the foreground",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]",
			    .finalizers = FOREGROUND),
		},
		.key = "uid-child",
		.writes = "delete configmaps ns1/child Foreground rv=42",
	},
	{
		.name = "attemptToDeleteItem: one owner absent, one deleting in the foreground, "
		    "and dependents: the absent one confirmed, the object deleted in the foreground",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "42",
			    .owners = "[" SECRET("s2", "uid-s2") "," BLOCKING_SECRET("owner",
			    "uid-owner") "]"),
			OBJECT("configmaps", "ns1", "grandchild", "uid-grandchild",
			    .owners = "[" CONFIGMAP("child", "uid-child") "]"),
		},
		.key = "uid-child",
		.confirms = "get podtemplates ns1/s2 uid=uid-s2",
		.writes = "delete configmaps ns1/child Foreground rv=42",
	},

	/* --- processDeletingDependentsItem (garbagecollector.go:664-680) and removeFinalizer
	 * (operations.go:104-149) --- */
	{
		.name = "processDeletingDependentsItem: an owner deleting in the foreground waits "
		    "while a dependent blocks its deletion",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "42", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child", "uid-child",
			    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
			OBJECT("configmaps", "ns1", "child2", "uid-child2",
			    .owners = "[" SECRET("owner", "uid-owner") "]"),
		},
		.key = "uid-owner",
		.waiting = 1,
	},
	{
		.name = "processDeletingDependentsItem: no dependent blocks (blockOwnerDeletion "
		    "false or unset): the foregroundDeletion finalizer is removed",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "42", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child", "uid-child",
			    .owners = "[" NONBLOCKING_SECRET("owner", "uid-owner") "]"),
			OBJECT("configmaps", "ns1", "child2", "uid-child2",
			    .owners = "[" SECRET("owner", "uid-owner") "]"),
		},
		.key = "uid-owner",
		.writes = "patch podtemplates ns1/owner rv=42 finalizers=null",
	},
	{
		.name = "removeFinalizer: the owner's other finalizers stay",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "42", .deleting = 1,
			    .finalizers = "[\"foregroundDeletion\",\"example.com/keep\"]"),
		},
		.key = "uid-owner",
		.writes = "patch podtemplates ns1/owner rv=42 finalizers=[example.com/keep]",
	},
	{
		.name = "attemptToDeleteItem: an object deleting its dependents is not collected "
		    "itself, its own absent owners not even confirmed (garbagecollector.go:546-548)",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "42", .deleting = 1,
			    .finalizers = FOREGROUND, .owners = "[" SECRET("gone", "uid-gone") "]"),
		},
		.key = "uid-owner",
		.writes = "patch podtemplates ns1/owner rv=42 finalizers=null",
	},

	/* --- orphanDependents and attemptToOrphanWorker (garbagecollector.go:683-775) --- */
	{
		.name = "orphanDependents: each dependent loses its reference to the owner, then "
		    "the orphan finalizer is removed",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "42", .deleting = 1,
			    .finalizers = ORPHAN),
			OBJECT("podtemplates", "ns1", "other", "uid-other"),
			OBJECT("configmaps", "ns1", "dep1", "uid-dep1", .rv = "5",
			    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
			OBJECT("pods", "ns1", "dep2", "uid-dep2", .rv = "6",
			    .owners = "[" SECRET("owner", "uid-owner") "," SECRET("other",
			    "uid-other") "]"),
		},
		.key = "uid-owner",
		.writes = "patch configmaps ns1/dep1 rv=5 ownerReferences=null; "
		    "patch pods ns1/dep2 rv=6 ownerReferences=[uid-other]; "
		    "patch podtemplates ns1/owner rv=42 finalizers=null",
		.writes_unordered = 1,
	},
	{
		.name = "attemptToOrphanWorker: an owner without dependents only loses its orphan "
		    "finalizer, the others stay",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "42", .deleting = 1,
			    .finalizers = "[\"orphan\",\"example.com/keep\"]"),
		},
		.key = "uid-owner",
		.writes = "patch podtemplates ns1/owner rv=42 finalizers=[example.com/keep]",
	},

	/* --- nothing to do --- */
	{
		.name = "attemptToDeleteItem: an object gone from the cache is nothing to do "
		    "(kube's virtual delete event, garbagecollector.go:523-531)",
		.objects = {
			OBJECT("podtemplates", "ns1", "s1", "uid-s1"),
		},
		.key = "uid-gone",
	},
	{
		.name = "attemptToDeleteItem: an object being deleted without the orphan or "
		    "foregroundDeletion finalizer is left to its deletion, its absent owner not even "
		    "confirmed (garbagecollector.go:512-517)",
		.objects = {
			OBJECT("configmaps", "ns1", "child", "uid-child", .deleting = 1,
			    .finalizers = "[\"example.com/keep\"]",
			    .owners = "[" SECRET("s2", "uid-s2") "]"),
		},
		.key = "uid-child",
	},
	{
		.name = "attemptToDeleteItem: an object without owner references is nothing to do "
		    "(garbagecollector.go:551-557)",
		.objects = {
			OBJECT("configmaps", "ns1", "child", "uid-child"),
		},
		.key = "uid-child",
	},
};

/* Syncs the row's key over its objects and compares the result. */
static void
sync_case_holds(void **state)
{
	struct ctl_world *w = *state;
	const struct sync_case *row = w->row;
	int rc;

	cache_objects(w, row->objects);
	rc = w->c->type->sync(w->c, row->key, NOW, &w->result, &w->error);
	if (row->error[0] != NULL) {
		if (rc != -1)
			fail_msg("the sync returned %d, want -1 with an error naming %s and %s", rc,
			    row->error[0], row->error[1]);
		assert_non_null(w->error);
		for (size_t i = 0; i < NELEM(row->error) && row->error[i] != NULL; i++) {
			if (strstr(w->error, row->error[i]) == NULL)
				fail_msg("the error does not name %s: %s", row->error[i],
				    w->error);
		}
	} else if (rc != 0) {
		fail_msg("the sync returned %d: %s", rc,
		    w->error != NULL ? w->error : "(no error)");
	}
	assert_described("events", ctl_keep(w, describe_events(&w->result)), row->events);
	assert_described("confirmations", ctl_keep(w, describe_confirms(&w->result)),
	    row->confirms);
	assert_described("writes", ctl_keep(w, describe_writes(&w->result, row->objects,
	    row->writes_unordered)), row->writes);
	if ((w->result.waiting != NULL) != row->waiting)
		fail_msg("waiting: %s, want %s", w->result.waiting != NULL ?
		    w->result.waiting : "no", row->waiting ? "yes" : "no");
}

/* --- the patch bodies ----------------------------------------------------------------- */

/* Applies a JSON merge patch (RFC 7386) to target, as the apiserver does. */
static void
merge_patch_apply(cJSON *target, const cJSON *patch)
{
	const cJSON *member;

	cJSON_ArrayForEach(member, patch) {
		cJSON *old = cJSON_GetObjectItemCaseSensitive(target, member->string);

		if (cJSON_IsNull(member))
			cJSON_DeleteItemFromObjectCaseSensitive(target, member->string);
		else if (cJSON_IsObject(member) && cJSON_IsObject(old))
			merge_patch_apply(old, member);
		else
			json_set(target, member->string, cJSON_Duplicate(member, 1));
	}
}

/* Asserts that the ownerReferences of w->object are the JSON want. */
static void
assert_references(struct ctl_world *w, const char *want)
{
	cJSON *expected = cJSON_Parse(want);
	const cJSON *got = json_path(w->object, "metadata.ownerReferences");
	int same = cJSON_Compare(got, expected, 1);

	cJSON_Delete(expected);
	if (!same)
		fail_msg("ownerReferences:\n  got:  %s\n  want: %s",
		    ctl_keep(w, cJSON_PrintUnformatted(got)), want);
}

/* TestDeleteOwnerRefPatch (garbagecollector_test.go:717): the references to owners 2 and 3
 * are patched out of a pod that also has owner 1; applied, the patch leaves owner 1's
 * reference whole, and the pod's uid and resourceVersion as they were. Here 1 is cached and
 * 2 and 3 are absent; the patch is kube's JSON merge patch (deleteOwnerRefJSONMergePatch,
 * patch.go:99-113). */
static void
delete_owner_ref_patch_keeps_the_other_references_whole(void **state)
{
	struct ctl_world *w = *state;
	const struct object_spec objects[MAX_OBJECTS] = {
		OBJECT("configmaps", "ns1", "c1", "1"),
		OBJECT("pods", "ns1", "pod", "100", .rv = "42",
		    .owners = "[" CONFIGMAP("c1", "1") "," CONFIGMAP("c2", "2") ","
		    CONFIGMAP("c3", "3") "]"),
	};

	cache_objects(w, objects);
	ctl_sync(w, "100", NOW);
	assert_described("confirmations", ctl_keep(w, describe_confirms(&w->result)),
	    "get configmaps ns1/c2 uid=2; get configmaps ns1/c3 uid=3");
	assert_int_equal(w->result.nwrites, 1);
	assert_int_equal(w->result.writes[0].type, ACTION_PATCH);
	assert_true(w->result.writes[0].merge_patch);
	w->object = object_new(&objects[1]);
	merge_patch_apply(w->object, w->result.writes[0].body);
	assert_references(w, "[" CONFIGMAP("c1", "1") "]");
	assert_string_equal(json_string(w->object, "metadata.uid"), "100");
	assert_string_equal(json_string(w->object, "metadata.resourceVersion"), "42");
}

/* TestUnblockOwnerReference (garbagecollector_test.go:754): references 1 (blocking), 2
 * (blockOwnerDeletion false) and 3 (unset) come out blocking nothing. kube's strategic
 * merge patch leaves 3 unset; its JSON merge patch, the form sqlkcm sends, sets every
 * reference's blockOwnerDeletion to false (unblockOwnerReferencesJSONMergePatch,
 * patch.go:140-160). Reached through a sync: every owner deletes in the foreground and
 * the pod's one dependent deletes its own dependents. */
static void
unblock_owner_reference_patch_unblocks_every_reference(void **state)
{
	struct ctl_world *w = *state;
	const struct object_spec objects[MAX_OBJECTS] = {
		OBJECT("configmaps", "ns1", "c1", "1", .deleting = 1, .finalizers = FOREGROUND),
		OBJECT("configmaps", "ns1", "c2", "2", .deleting = 1, .finalizers = FOREGROUND),
		OBJECT("configmaps", "ns1", "c3", "3", .deleting = 1, .finalizers = FOREGROUND),
		OBJECT("pods", "ns1", "pod", "100", .rv = "42",
		    .owners = "[" BLOCKING_CONFIGMAP("c1", "1") "," NONBLOCKING_CONFIGMAP("c2",
		    "2") "," CONFIGMAP("c3", "3") "]"),
		OBJECT("configmaps", "ns1", "dep", "dep-uid", .deleting = 1,
		    .finalizers = FOREGROUND, .owners = "[" BLOCKING_POD("pod", "100") "]"),
	};

	cache_objects(w, objects);
	ctl_sync(w, "100", NOW);
	assert_described("writes", ctl_keep(w, describe_writes(&w->result, objects, 0)),
	    "patch pods ns1/pod rv=42 ownerReferences=[1/noblock,2/noblock,3/noblock]; "
	    "delete pods ns1/pod Foreground rv=42");
	w->object = object_new(&objects[3]);
	merge_patch_apply(w->object, w->result.writes[0].body);
	assert_references(w, "[" NONBLOCKING_CONFIGMAP("c1", "1") ","
	    NONBLOCKING_CONFIGMAP("c2", "2") "," NONBLOCKING_CONFIGMAP("c3", "3") "]");
}

/* --- handle_event --------------------------------------------------------------------- */

struct event_case {
	const char *name;
	struct object_spec cache[MAX_OBJECTS];	/* besides the event's object */
	enum informer_event_type type;
	struct object_spec object;	/* added or updated: cached too; deleted: no longer */
	struct object_spec old;		/* an update's previous version; resource NULL: none */
	const char *queued;		/* sorted, comma-separated */
};

static const struct event_case event_cases[] = {
	/* --- addDependentToOwners (graph_builder.go:442-503) --- */
	{
		.name = "addDependentToOwners: an object added with an owner absent from the "
		    "cache is queued (kube queues the virtual owner, whose absence queues it)",
		.type = INFORMER_ADDED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child",
		    .owners = "[" SECRET("owner", "uid-owner") "]"),
		.queued = "uid-child",
	},
	{
		.name = "addDependentToOwners: an object added with its owner cached is not queued",
		.cache = { OBJECT("podtemplates", "ns1", "owner", "uid-owner") },
		.type = INFORMER_ADDED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child",
		    .owners = "[" SECRET("owner", "uid-owner") "]"),
	},
	{
		.name = "addDependentToOwners: an object added with its cluster-scoped owner cached "
		    "is not queued",
		.cache = { OBJECT("nodes", NULL, "nodename", "nodeuid1") },
		.type = INFORMER_ADDED,
		.object = OBJECT("pods", "ns1", "podname1", "poduid1",
		    .owners = "[" REF("v1", "Node", "nodename", "nodeuid1") "]"),
	},
	{
		.name = "addDependentToOwners: an object added whose owner's uid is cached in "
		    "another namespace is queued (graph_builder.go:471-480)",
		.cache = { OBJECT("podtemplates", "ns2", "owner", "uid-owner") },
		.type = INFORMER_ADDED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child",
		    .owners = "[" SECRET("owner", "uid-owner") "]"),
		.queued = "uid-child",
	},
	{
		.name = "addDependentToOwners: an object added whose reference disagrees with the "
		    "cached owner's kind is queued (TestConflictingData, bad child -> existing owner "
		    "with incorrect API version; graph_builder.go:481-487)",
		.cache = { OBJECT("deployments", "ns1", "deployment1", "deploymentuid1") },
		.type = INFORMER_ADDED,
		.object = OBJECT("pods", "ns1", "badpod", "badpoduid",
		    .owners = "[" SECRET("secretname", "deploymentuid1") "]"),
		.queued = "badpoduid",
	},
	{
		.name = "addDependentToOwners: an update that adds a reference to an owner absent "
		    "from the cache queues the object (graph_builder.go:777-785)",
		.cache = { OBJECT("podtemplates", "ns1", "s1", "uid-s1") },
		.type = INFORMER_UPDATED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "2",
		    .owners = "[" SECRET("s1", "uid-s1") "," SECRET("s2", "uid-s2") "]"),
		.old = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "1",
		    .owners = "[" SECRET("s1", "uid-s1") "]"),
		.queued = "uid-child",
	},
	{
		.name = "sqlkcm's: an object added whose owner deletes in the foreground is queued "
		    "(a sync cannot queue, as processDeletingDependentsItem queues blocking "
		    "dependents in kube)",
		.cache = { OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
		    .finalizers = FOREGROUND) },
		.type = INFORMER_ADDED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child",
		    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
		.queued = "uid-child",
	},

	/* --- processTransitions (graph_builder.go:593-682) --- */
	{
		.name = "processTransitions: deletion starting with the orphan finalizer queues "
		    "the owner, not its dependents",
		.cache = { OBJECT("configmaps", "ns1", "child", "uid-child",
		    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]") },
		.type = INFORMER_UPDATED,
		.object = OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "2", .deleting = 1,
		    .finalizers = ORPHAN),
		.old = OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "1"),
		.queued = "uid-owner",
	},
	{
		.name = "processTransitions: deletion starting with foregroundDeletion queues the "
		    "owner and all its dependents",
		.cache = {
			OBJECT("configmaps", "ns1", "child1", "uid-child1",
			    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
			OBJECT("configmaps", "ns1", "child2", "uid-child2",
			    .owners = "[" SECRET("owner", "uid-owner") "]"),
		},
		.type = INFORMER_UPDATED,
		.object = OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "2", .deleting = 1,
		    .finalizers = FOREGROUND),
		.old = OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "1"),
		.queued = "uid-child1,uid-child2,uid-owner",
	},
	{
		.name = "processTransitions: an object first seen already being deleted with the "
		    "orphan finalizer is queued (graph_builder.go:772-774)",
		.type = INFORMER_ADDED,
		.object = OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
		    .finalizers = ORPHAN),
		.queued = "uid-owner",
	},
	{
		.name = "deletionStartsWithFinalizer: an update of an object whose deletion with "
		    "foregroundDeletion had already started queues nothing",
		.cache = { OBJECT("configmaps", "ns1", "child", "uid-child",
		    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]") },
		.type = INFORMER_UPDATED,
		.object = OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "3", .deleting = 1,
		    .finalizers = FOREGROUND),
		.old = OBJECT("podtemplates", "ns1", "owner", "uid-owner", .rv = "2", .deleting = 1,
		    .finalizers = FOREGROUND),
	},

	/* --- processGraphChanges, delete (graph_builder.go:859-879) --- */
	{
		.name = "processGraphChanges: the dependents of a deleted object are queued",
		.cache = {
			OBJECT("configmaps", "ns1", "child1", "uid-child1",
			    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
			OBJECT("configmaps", "ns1", "child2", "uid-child2",
			    .owners = "[" SECRET("owner", "uid-owner") "]"),
		},
		.type = INFORMER_DELETED,
		.object = OBJECT("podtemplates", "ns1", "owner", "uid-owner"),
		.queued = "uid-child1,uid-child2",
	},
	{
		.name = "processGraphChanges: the owner deleting its dependents is queued when one "
		    "of them is deleted",
		.cache = { OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
		    .finalizers = FOREGROUND) },
		.type = INFORMER_DELETED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child",
		    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
		.queued = "uid-owner",
	},
	{
		.name = "processGraphChanges: an owner that is not deleting its dependents is not "
		    "queued when one of them is deleted (graph_builder.go:870-874)",
		.cache = { OBJECT("podtemplates", "ns1", "owner", "uid-owner") },
		.type = INFORMER_DELETED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child",
		    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
	},

	/* --- addUnblockedOwnersToDeleteQueue (graph_builder.go:642-665) --- */
	{
		.name = "addUnblockedOwnersToDeleteQueue: removing a blocking reference queues its "
		    "owner",
		.cache = { OBJECT("podtemplates", "ns1", "owner", "uid-owner") },
		.type = INFORMER_UPDATED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "2"),
		.old = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "1",
		    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
		.queued = "uid-owner",
	},
	{
		.name = "addUnblockedOwnersToDeleteQueue: blockOwnerDeletion turned from true to "
		    "false queues the owner",
		.cache = { OBJECT("podtemplates", "ns1", "owner", "uid-owner") },
		.type = INFORMER_UPDATED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "2",
		    .owners = "[" NONBLOCKING_SECRET("owner", "uid-owner") "]"),
		.old = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "1",
		    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
		.queued = "uid-owner",
	},
	{
		.name = "addUnblockedOwnersToDeleteQueue: blockOwnerDeletion turned from true to "
		    "unset queues the owner",
		.cache = { OBJECT("podtemplates", "ns1", "owner", "uid-owner") },
		.type = INFORMER_UPDATED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "2",
		    .owners = "[" SECRET("owner", "uid-owner") "]"),
		.old = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "1",
		    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
		.queued = "uid-owner",
	},
	{
		.name = "addUnblockedOwnersToDeleteQueue: removing a reference that did not block "
		    "queues nothing",
		.cache = { OBJECT("podtemplates", "ns1", "owner", "uid-owner") },
		.type = INFORMER_UPDATED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "2"),
		.old = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "1",
		    .owners = "[" NONBLOCKING_SECRET("owner", "uid-owner") "]"),
	},
	{
		.name = "addUnblockedOwnersToDeleteQueue: blockOwnerDeletion turned from false to "
		    "true queues nothing",
		.cache = { OBJECT("podtemplates", "ns1", "owner", "uid-owner") },
		.type = INFORMER_UPDATED,
		.object = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "2",
		    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
		.old = OBJECT("configmaps", "ns1", "child", "uid-child", .rv = "1",
		    .owners = "[" NONBLOCKING_SECRET("owner", "uid-owner") "]"),
	},
};

static int
compare_keys(const void *a, const void *b)
{
	return strcmp(((const struct ctl_key *)a)->key, ((const struct ctl_key *)b)->key);
}

/* The keys recorded (each once, as a workqueue holds them), sorted, comma-separated. */
static char *
sorted_keys(struct ctl_world *w)
{
	if (w->nkeys > 1)
		qsort(w->keys, (size_t)w->nkeys, sizeof *w->keys, compare_keys);
	return ctl_keys(w);
}

/* Delivers the row's event over its cache and compares the keys queued. */
static void
event_case_holds(void **state)
{
	struct ctl_world *w = *state;
	const struct event_case *row = w->row;
	const struct resource *r = resource_find_any(row->object.resource);

	cache_objects(w, row->cache);
	cache_object(w, &row->object);
	if (row->type == INFORMER_DELETED)
		ctl_uncache(w, r, row->object.uid);
	ctl_tell(w, row->type, r, object_new(&row->object),
	    row->old.resource != NULL ? object_new(&row->old) : NULL);
	assert_described("queued", ctl_keep(w, sorted_keys(w)), row->queued);
}

/* --- list_keys ------------------------------------------------------------------------ */

struct list_case {
	const char *name;
	struct object_spec objects[MAX_OBJECTS];
	const char *listed;		/* sorted, comma-separated */
};

static const struct list_case list_cases[] = {
	{
		.name = "list_keys: an object with an owner absent from the cache is listed",
		.objects = {
			OBJECT("podtemplates", "ns1", "s1", "uid-s1"),
			OBJECT("configmaps", "ns1", "child", "uid-child",
			    .owners = "[" SECRET("s1", "uid-s1") "," SECRET("s2", "uid-s2") "]"),
		},
		.listed = "uid-child",
	},
	{
		.name = "list_keys: an object being deleted with the orphan finalizer is listed",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
			    .finalizers = ORPHAN),
			OBJECT("configmaps", "ns1", "child", "uid-child",
			    .owners = "[" SECRET("owner", "uid-owner") "]"),
		},
		.listed = "uid-owner",
	},
	{
		.name = "list_keys: an object being deleted with foregroundDeletion is listed, "
		    "with every dependent of it",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
			    .finalizers = FOREGROUND),
			OBJECT("configmaps", "ns1", "child1", "uid-child1",
			    .owners = "[" BLOCKING_SECRET("owner", "uid-owner") "]"),
			OBJECT("pods", "ns1", "child2", "uid-child2",
			    .owners = "[" SECRET("owner", "uid-owner") "]"),
		},
		.listed = "uid-child1,uid-child2,uid-owner",
	},
	{
		.name = "list_keys: settled objects are not listed",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner"),
			OBJECT("nodes", NULL, "nodename", "nodeuid1"),
			OBJECT("configmaps", "ns1", "child", "uid-child",
			    .owners = "[" SECRET("owner", "uid-owner") "," REF("v1", "Node",
			    "nodename", "nodeuid1") "]"),
		},
	},
	{
		.name = "list_keys: an object being deleted with other finalizers only is not "
		    "listed",
		.objects = {
			OBJECT("podtemplates", "ns1", "owner", "uid-owner", .deleting = 1,
			    .finalizers = "[\"example.com/keep\"]"),
			OBJECT("configmaps", "ns1", "child", "uid-child",
			    .owners = "[" SECRET("owner", "uid-owner") "]"),
		},
	},
	{
		.name = "list_keys: an object whose owner's uid is cached in another namespace is "
		    "listed (the informers' first adds go through addDependentToOwners, "
		    "graph_builder.go:471-480)",
		.objects = {
			OBJECT("podtemplates", "ns2", "owner", "uid-owner"),
			OBJECT("configmaps", "ns1", "child", "uid-child",
			    .owners = "[" SECRET("owner", "uid-owner") "]"),
		},
		.listed = "uid-child",
	},
	{
		.name = "list_keys: an object whose reference disagrees with the cached owner's "
		    "kind is listed (graph_builder.go:481-487)",
		.objects = {
			OBJECT("deployments", "ns1", "deployment1", "deploymentuid1"),
			OBJECT("pods", "ns1", "badpod", "badpoduid",
			    .owners = "[" SECRET("secretname", "deploymentuid1") "]"),
		},
		.listed = "badpoduid",
	},
};

/* Lists the keys over the row's objects and compares them. */
static void
list_case_holds(void **state)
{
	struct ctl_world *w = *state;
	const struct list_case *row = w->row;

	cache_objects(w, row->objects);
	ctl_list_keys(w);
	assert_described("listed", ctl_keep(w, sorted_keys(w)), row->listed);
}

/* --- main ----------------------------------------------------------------------------- */

/* A test of row, named after it. */
/* sqlkcm's: an owner the informers saw deleted is gone for good (a uid is never reused),
 * so its dependents' syncs need no live read of it; one the cache merely lacks still does.
 * kube reads it once and keeps it in its absentOwnerCache. */
static void
owner_seen_deleted_needs_no_live_read(void **state)
{
	struct ctl_world *w = *state;
	const struct object_spec objects[MAX_OBJECTS] = {
		OBJECT("podtemplates", "ns1", "s1", "uid-s1"),
		OBJECT("configmaps", "ns1", "c1", "uid-c1", .owners = "[" SECRET("s1", "uid-s1")
		    "]"),
		OBJECT("configmaps", "ns1", "c2", "uid-c2", .owners = "[" SECRET("s2", "uid-s2")
		    "]"),
	};
	struct sync_result other;

	cache_objects(w, objects);
	ctl_uncache(w, resource_find_any("podtemplates"), "uid-s1");
	ctl_tell(w, INFORMER_DELETED, resource_find_any("podtemplates"), object_new(&objects[0]),
	    NULL);
	assert_described("queued", ctl_keep(w, sorted_keys(w)), "uid-c1");

	ctl_sync(w, "uid-c1", NOW);
	assert_int_equal(w->result.nconfirm_absent, 0);
	assert_int_equal(w->result.nwrites, 1);
	assert_int_equal(w->result.writes[0].type, ACTION_DELETE);
	assert_string_equal(w->result.writes[0].name, "c1");
	memset(&other, 0, sizeof other);
	if (w->c->type->sync(w->c, "uid-c2", NOW, &other, &w->error) != 0)
		fail_msg("sync: %s", w->error);
	assert_described("confirmations", ctl_keep(w, describe_confirms(&other)),
	    "get podtemplates ns1/s2 uid=uid-s2");
	sync_result_clear(&other);
}

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
	    3];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(sync_cases); i++)
		tests[n++] = row_test(sync_cases[i].name, sync_case_holds, &sync_cases[i]);
	tests[n++] = row_test("TestDeleteOwnerRefPatch: the patch keeps the other references "
	    "whole", delete_owner_ref_patch_keeps_the_other_references_whole, NULL);
	tests[n++] = row_test("TestUnblockOwnerReference: the patch leaves no reference "
	    "blocking", unblock_owner_reference_patch_unblocks_every_reference, NULL);
	for (size_t i = 0; i < NELEM(event_cases); i++)
		tests[n++] = row_test(event_cases[i].name, event_case_holds, &event_cases[i]);
	tests[n++] = row_test("sqlkcm's: an owner seen deleted needs no live read",
	    owner_seen_deleted_needs_no_live_read, NULL);
	for (size_t i = 0; i < NELEM(list_cases); i++)
		tests[n++] = row_test(list_cases[i].name, list_case_holds, &list_cases[i]);
	return _cmocka_run_group_tests("garbagecollector", tests, n, NULL, NULL);
}
