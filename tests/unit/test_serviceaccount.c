/*
 * test_serviceaccount.c - the serviceaccount controller (controllers/serviceaccount.c)
 * against kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/serviceaccount/serviceaccounts_controller.go
 * (syncNamespace, and the handlers namespaceAdded, namespaceUpdated and
 * serviceAccountDeleted); the cases are those of TestServiceAccountCreation
 * (serviceaccounts_controller_test.go), one row each. kube's test makes the controller
 * ensure two ServiceAccounts, default and managed; kube-controller-manager runs it with
 * DefaultServiceAccountsControllerOptions, default alone, and so does sqlkcm: the rows keep
 * kube's objects and events and expect the creations of default only (a row whose kube
 * expectation differs for that reason says so). Rows of sqlkcm's own say so.
 *
 * A row writes the cached objects into an in-memory store (kube's informer stores), then
 * the event's object, as the informer would before the handlers run, calls handle_event,
 * and syncs every key it queued, as kube's test waits for the sync of its one key. It
 * compares the keys queued and the creations ("create serviceaccounts NS/NAME", "; "
 * between them).
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
#include "consistency.h"
#include "controller.h"
#include "controllers/serviceaccount.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

#define MAX_OBJECTS 4

/* --- objects -------------------------------------------------------------------------- */

/* A cached object: a Namespace (ns NULL) or a ServiceAccount (by its metadata). */
struct object_spec {
	const char *name;	/* NULL ends a list */
	const char *ns;		/* NULL: a Namespace */
	const char *phase;	/* a Namespace's status.phase; NULL: none */
};

#define NAMESPACE(n, p) { .name = n, .phase = p }
#define SERVICEACCOUNT(n, object_name) { .name = object_name, .ns = n }

/* kube's test objects (metav1.NamespaceDefault is "default"). */
#define ACTIVE_NS NAMESPACE("default", "Active")
#define TERMINATING_NS NAMESPACE("default", "Terminating")
#define DEFAULT_SA SERVICEACCOUNT("default", "default")
#define MANAGED_SA SERVICEACCOUNT("default", "managed")
#define UNMANAGED_SA SERVICEACCOUNT("default", "other-unmanaged")

/* The object spec describes, as the informers cache it. */
static cJSON *
object_new(const struct object_spec *spec)
{
	struct buf b;
	cJSON *object;

	buf_init(&b);
	if (spec->ns == NULL) {
		buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{"
		    "\"name\":\"%s\",\"uid\":\"uid-ns-%s\",\"resourceVersion\":\"1\"}",
		    spec->name, spec->name);
		if (spec->phase != NULL)
			buf_printf(&b, ",\"status\":{\"phase\":\"%s\"}", spec->phase);
		buf_append_str(&b, "}");
	} else {
		buf_printf(&b, "{\"apiVersion\":\"meta.k8s.io/v1\",\"kind\":"
		    "\"PartialObjectMetadata\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
		    "\"uid\":\"uid-sa-%s-%s\",\"resourceVersion\":\"1\"}}", spec->name, spec->ns,
		    spec->ns, spec->name);
	}
	object = cJSON_Parse(b.data);
	if (object == NULL)
		fail_msg("not JSON: %s", b.data);
	buf_free(&b);
	return object;
}

static const struct resource *
spec_resource(const struct object_spec *spec)
{
	return resource_find(spec->ns == NULL ? "namespaces" : "serviceaccounts");
}

/* --- the store and the controller ----------------------------------------------------- */

/* A serviceaccount controller over an in-memory store, for each test. */
static int
env_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(&serviceaccount_controller_type, NULL);

	w->row = *state;
	*state = w;
	return 0;
}

static int
env_teardown(void **state)
{
	ctl_world_free(*state);
	return 0;
}

/* Writes the object spec describes into the cache. */
static void
cache_object(struct ctl_world *w, const struct object_spec *spec)
{
	ctl_cache(w, spec_resource(spec), object_new(spec));
}

static void
cache_objects(struct ctl_world *w, const struct object_spec *specs)
{
	for (int i = 0; i < MAX_OBJECTS && specs[i].name != NULL; i++)
		cache_object(w, &specs[i]);
}

/* The creations of r, "create RESOURCE NS/NAME"; anything else is marked. */
static void
describe_writes(const struct sync_result *r, struct buf *b)
{
	for (int i = 0; i < r->nwrites; i++) {
		const struct action *a = &r->writes[i];

		buf_printf(b, "%s%s %s %s/%s", b->len > 0 ? "; " : "",
		    a->type == ACTION_CREATE ? "create" : "(not a create)", a->resource->name,
		    a->namespace, a->name);
		if (strcmp(json_string(a->body, "metadata.name"), a->name) != 0)
			buf_append_str(b, " (the body names another)");
	}
}

/* --- TestServiceAccountCreation ------------------------------------------------------- */

enum case_event { ADDED_NAMESPACE, UPDATED_NAMESPACE, DELETED_SERVICEACCOUNT };

struct creation_case {
	const char *name;
	struct object_spec existing[MAX_OBJECTS];	/* the namespace and accounts cached */
	enum case_event event;
	struct object_spec object;			/* the event's */
	const char *queued;
	const char *created;				/* NULL: nothing */
};

static const struct creation_case creation_cases[] = {
	{
		.name = "TestServiceAccountCreation, new active namespace missing serviceaccounts "
		    "(kube's test also expects managed)",
		.event = ADDED_NAMESPACE, .object = ACTIVE_NS,
		.queued = "default",
		.created = "create serviceaccounts default/default",
	},
	{
		.name = "TestServiceAccountCreation, new active namespace missing serviceaccount",
		.existing = { MANAGED_SA },
		.event = ADDED_NAMESPACE, .object = ACTIVE_NS,
		.queued = "default",
		.created = "create serviceaccounts default/default",
	},
	{
		.name = "TestServiceAccountCreation, new active namespace with serviceaccounts",
		.existing = { DEFAULT_SA, MANAGED_SA },
		.event = ADDED_NAMESPACE, .object = ACTIVE_NS,
		.queued = "default",
	},
	{
		.name = "TestServiceAccountCreation, new terminating namespace",
		.event = ADDED_NAMESPACE, .object = TERMINATING_NS,
		.queued = "default",
	},
	{
		.name = "TestServiceAccountCreation, updated active namespace missing "
		    "serviceaccounts (kube's test also expects managed)",
		.event = UPDATED_NAMESPACE, .object = ACTIVE_NS,
		.queued = "default",
		.created = "create serviceaccounts default/default",
	},
	{
		.name = "TestServiceAccountCreation, updated active namespace missing "
		    "serviceaccount (kube's test expects managed, which it alone ensures)",
		.existing = { DEFAULT_SA },
		.event = UPDATED_NAMESPACE, .object = ACTIVE_NS,
		.queued = "default",
	},
	{
		.name = "TestServiceAccountCreation, updated active namespace with serviceaccounts",
		.existing = { DEFAULT_SA, MANAGED_SA },
		.event = UPDATED_NAMESPACE, .object = ACTIVE_NS,
		.queued = "default",
	},
	{
		.name = "TestServiceAccountCreation, updated terminating namespace",
		.event = UPDATED_NAMESPACE, .object = TERMINATING_NS,
		.queued = "default",
	},
	{
		.name = "TestServiceAccountCreation, deleted serviceaccount without namespace",
		.event = DELETED_SERVICEACCOUNT, .object = DEFAULT_SA,
		.queued = "default",
	},
	{
		.name = "TestServiceAccountCreation, deleted serviceaccount with active namespace",
		.existing = { MANAGED_SA, ACTIVE_NS },
		.event = DELETED_SERVICEACCOUNT, .object = DEFAULT_SA,
		.queued = "default",
		.created = "create serviceaccounts default/default",
	},
	{
		.name = "TestServiceAccountCreation, deleted serviceaccount with terminating "
		    "namespace",
		.existing = { TERMINATING_NS },
		.event = DELETED_SERVICEACCOUNT, .object = DEFAULT_SA,
		.queued = "default",
	},
	{
		.name = "TestServiceAccountCreation, deleted unmanaged serviceaccount with active "
		    "namespace",
		.existing = { DEFAULT_SA, MANAGED_SA, ACTIVE_NS },
		.event = DELETED_SERVICEACCOUNT, .object = UNMANAGED_SA,
		.queued = "default",
	},
	{
		.name = "TestServiceAccountCreation, deleted unmanaged serviceaccount with "
		    "terminating namespace",
		.existing = { TERMINATING_NS },
		.event = DELETED_SERVICEACCOUNT, .object = UNMANAGED_SA,
		.queued = "default",
	},

	/* --- sqlkcm's: the same rules at their edges --- */
	{
		.name = "syncNamespace: a namespace without a phase is not active: nothing",
		.event = ADDED_NAMESPACE, .object = NAMESPACE("default", NULL),
		.queued = "default",
	},
	{
		.name = "syncNamespace: a default ServiceAccount of another namespace does not "
		    "count",
		.existing = { SERVICEACCOUNT("other", "default") },
		.event = ADDED_NAMESPACE, .object = NAMESPACE("ns1", "Active"),
		.queued = "ns1",
		.created = "create serviceaccounts ns1/default",
	},
};

/* Caches the row's objects, sends its event, syncs what it queued. */
static void
creation_case_holds(void **state)
{
	struct ctl_world *w = *state;
	const struct creation_case *row = w->row;
	const struct resource *r = spec_resource(&row->object);
	struct buf created;

	cache_objects(w, row->existing);
	if (row->event != DELETED_SERVICEACCOUNT)
		cache_object(w, &row->object);
	ctl_tell(w, row->event == ADDED_NAMESPACE ? INFORMER_ADDED :
	    row->event == UPDATED_NAMESPACE ? INFORMER_UPDATED : INFORMER_DELETED, r,
	    object_new(&row->object), NULL);
	assert_described("queued", ctl_keep(w, ctl_keys(w)), row->queued);
	buf_init(&created);
	for (int i = 0; i < w->nkeys; i++) {
		ctl_sync(w, w->keys[i].key, NOW);
		describe_writes(&w->result, &created);
	}
	assert_described("created", ctl_keep(w, buf_detach(&created)), row->created);
}

/* --- handlers ------------------------------------------------------------------------- */

struct event_case {
	const char *name;
	enum informer_event_type type;
	struct object_spec object;
	const char *queued;		/* NULL: nothing */
};

static const struct event_case event_cases[] = {
	{
		.name = "handlers: a namespace's deletion queues nothing (kube has no DeleteFunc "
		    "for namespaces)",
		.type = INFORMER_DELETED, .object = ACTIVE_NS,
	},
	{
		.name = "handlers: a ServiceAccount added queues nothing",
		.type = INFORMER_ADDED, .object = DEFAULT_SA,
	},
	{
		.name = "handlers: a ServiceAccount updated queues nothing",
		.type = INFORMER_UPDATED, .object = DEFAULT_SA,
	},
	{
		.name = "handlers: any ServiceAccount deleted queues its namespace",
		.type = INFORMER_DELETED, .object = SERVICEACCOUNT("ns1", "builder"),
		.queued = "ns1",
	},
};

static void
event_case_holds(void **state)
{
	struct ctl_world *w = *state;
	const struct event_case *row = w->row;

	ctl_tell(w, row->type, spec_resource(&row->object), object_new(&row->object), NULL);
	assert_described("queued", ctl_keep(w, ctl_keys(w)), row->queued);
}

/* --- sqlkcm's: the sync's other answers ----------------------------------------------- */

/* The creation is kube's object: a bare ServiceAccount named default in the namespace. */
static void
creation_body_is_kubes(void **state)
{
	struct ctl_world *w = *state;
	const struct object_spec ns = NAMESPACE("ns1", "Active");
	char *body;

	cache_object(w, &ns);
	ctl_sync(w, "ns1", NOW);
	assert_int_equal(w->result.nwrites, 1);
	body = cJSON_PrintUnformatted(w->result.writes[0].body);
	ctl_keep(w, body);
	assert_string_equal(body, "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\","
	    "\"metadata\":{\"name\":\"default\",\"namespace\":\"ns1\"}}");
	assert_string_equal(w->result.writes[0].namespace, "ns1");
	assert_null(w->result.writes[0].uid);
	assert_string_equal(w->result.owner_uid, "uid-ns-ns1");
	assert_ptr_equal(w->result.owner_resource, resource_find("namespaces"));
	assert_int_equal(w->result.nevents, 0);
}

/* A namespace gone from the cache: nothing, and its bookkeeping dropped. */
static void
namespace_gone_forgets(void **state)
{
	struct ctl_world *w = *state;

	ctl_sync(w, "gone", NOW);
	assert_int_equal(w->result.nwrites, 0);
	assert_true(w->result.forget_expectations);
	assert_null(w->result.owner_uid);
}

/* The cache has not caught up with the controller's own creation: wait, then act. */
static void
stale_cache_waits(void **state)
{
	struct ctl_world *w = *state;
	const struct object_spec ns = NAMESPACE("ns1", "Active");
	const struct resource *sa = resource_find("serviceaccounts");

	cache_object(w, &ns);
	if (store_set_resource_version(w->store, sa, "5", &w->error) != 0 ||
	    consistency_wrote_at(w->c->writes, "ns1", "uid-ns-ns1", "serviceaccounts", "10",
	    &w->error) != 0)
		fail_msg("%s", w->error);
	ctl_sync(w, "ns1", NOW);
	assert_true(w->result.stale);
	assert_string_equal(w->result.stale_resource, "serviceaccounts");
	assert_int_equal(w->result.nwrites, 0);

	if (store_set_resource_version(w->store, sa, "10", &w->error) != 0)
		fail_msg("%s", w->error);
	ctl_sync(w, "ns1", NOW);
	assert_false(w->result.stale);
	assert_int_equal(w->result.nwrites, 1);
}

/* list_keys: every cached namespace, whatever its phase, and nothing else. */
static void
list_keys_gives_every_namespace(void **state)
{
	struct ctl_world *w = *state;
	const struct object_spec objects[MAX_OBJECTS] = {
		NAMESPACE("b", "Terminating"), NAMESPACE("a", "Active"), DEFAULT_SA,
	};

	cache_objects(w, objects);
	ctl_list_keys(w);
	assert_described("listed", ctl_keep(w, ctl_keys(w)), "a,b");
}

/* The serviceaccount_missing view lists what the syncs would create. */
static void
view_lists_missing_accounts(void **state)
{
	struct ctl_world *w = *state;
	const struct object_spec objects[MAX_OBJECTS] = {
		NAMESPACE("a", "Active"), NAMESPACE("b", "Active"), NAMESPACE("c", "Terminating"),
		SERVICEACCOUNT("b", "default"),
	};
	sqlite3_stmt *stmt;
	struct buf b;

	cache_objects(w, objects);
	if (sqlite3_prepare_v2(store_db(w->store), "SELECT namespace, namespace_uid, "
	    "serviceaccount FROM serviceaccount_missing ORDER BY namespace", -1, &stmt,
	    NULL) != SQLITE_OK)
		fail_msg("%s", sqlite3_errmsg(store_db(w->store)));
	buf_init(&b);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&b, "%s%s %s %s", b.len > 0 ? "; " : "", sqlite3_column_text(stmt, 0),
		    sqlite3_column_text(stmt, 1), sqlite3_column_text(stmt, 2));
	sqlite3_finalize(stmt);
	assert_described("serviceaccount_missing", ctl_keep(w, buf_detach(&b)),
	    "a uid-ns-a default");
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
	struct CMUnitTest tests[NELEM(creation_cases) + NELEM(event_cases) + 5];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(creation_cases); i++)
		tests[n++] = row_test(creation_cases[i].name, creation_case_holds,
		    &creation_cases[i]);
	for (size_t i = 0; i < NELEM(event_cases); i++)
		tests[n++] = row_test(event_cases[i].name, event_case_holds, &event_cases[i]);
	tests[n++] = row_test("sqlkcm's: the creation is kube's bare ServiceAccount",
	    creation_body_is_kubes, NULL);
	tests[n++] = row_test("sqlkcm's: a namespace gone from the cache is forgotten",
	    namespace_gone_forgets, NULL);
	tests[n++] = row_test("sqlkcm's: a cache behind the controller's own creation waits",
	    stale_cache_waits, NULL);
	tests[n++] = row_test("sqlkcm's: list_keys gives every cached namespace",
	    list_keys_gives_every_namespace, NULL);
	tests[n++] = row_test("sqlkcm's: the serviceaccount_missing view lists what syncs create",
	    view_lists_missing_accounts, NULL);
	return _cmocka_run_group_tests("serviceaccount", tests, n, NULL, NULL);
}
