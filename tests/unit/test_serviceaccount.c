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
#include "informer.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

#define NELEM(a) (sizeof (a) / sizeof (a)[0])
#define NOW 1767225600.0	/* 2026-01-01T00:00:00Z */
#define MAX_OBJECTS 4
#define MAX_KEYS 8

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

struct keys {
	char *keys[MAX_KEYS];
	int n;
};

/* One test's world; teardown frees whatever a failed assertion left. */
struct env {
	const void *row;
	struct store *store;
	struct controller *c;
	struct sync_result result;
	char *error;
	cJSON *object;
	struct keys keys;
	char *texts[4];
	int ntexts;
};

static int
env_setup(void **state)
{
	struct env *env = xcalloc(1, sizeof *env);

	env->row = *state;
	*state = env;
	if (store_open(":memory:", NULL, &env->store, &env->error) != 0)
		fail_msg("store_open: %s", env->error);
	env->c = controller_new(&serviceaccount_controller_type, env->store, NULL, &env->error);
	if (env->c == NULL)
		fail_msg("controller_new: %s", env->error);
	return 0;
}

static int
env_teardown(void **state)
{
	struct env *env = *state;

	sync_result_clear(&env->result);
	free(env->error);
	cJSON_Delete(env->object);
	for (int i = 0; i < env->keys.n; i++)
		free(env->keys.keys[i]);
	for (int i = 0; i < env->ntexts; i++)
		free(env->texts[i]);
	controller_free(env->c);
	store_close(env->store);
	free(env);
	return 0;
}

/* Keeps text (malloc'd) for teardown and returns it. */
static const char *
keep(struct env *env, char *text)
{
	assert_true(env->ntexts < (int)NELEM(env->texts));
	env->texts[env->ntexts++] = text;
	return text;
}

/* Writes the object spec describes into the cache. */
static void
cache_object(struct env *env, const struct object_spec *spec)
{
	cJSON *object = object_new(spec);
	int rc = store_upsert_object(env->store, spec_resource(spec), object, 1, NULL, NULL,
	    &env->error);

	cJSON_Delete(object);
	if (rc != 0)
		fail_msg("store_upsert_object %s: %s", spec->name,
		    env->error != NULL ? env->error : "refused");
}

static void
cache_objects(struct env *env, const struct object_spec *specs)
{
	for (int i = 0; i < MAX_OBJECTS && specs[i].name != NULL; i++)
		cache_object(env, &specs[i]);
}

/* A queue that records keys, once each, as a workqueue holds them. */
static void
record_key(const char *key, void *arg)
{
	struct keys *k = arg;

	for (int i = 0; i < k->n; i++) {
		if (strcmp(k->keys[i], key) == 0)
			return;
	}
	assert_true(k->n < MAX_KEYS);
	k->keys[k->n++] = xstrdup(key);
}

static void
record_key_after(const char *key, double seconds, void *arg)
{
	(void)seconds;
	record_key(key, arg);
}

/* Calls handle_event with an event of type on resource for object. */
static void
send_event(struct env *env, enum informer_event_type type, const struct resource *r,
    const cJSON *object)
{
	const struct controller_queue queue = { record_key, record_key_after, &env->keys };
	struct informer_event ev;

	memset(&ev, 0, sizeof ev);
	ev.type = type;
	ev.resource = r;
	ev.object = object;
	env->c->type->handle_event(env->c, &ev, NOW, &queue);
}

/* The keys recorded, comma-separated. */
static char *
describe_keys(const struct keys *k)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < k->n; i++)
		buf_printf(&b, "%s%s", i > 0 ? "," : "", k->keys[i]);
	return buf_detach(&b);
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

static void
assert_described(const char *what, const char *got, const char *want)
{
	if (want == NULL)
		want = "";
	if (strcmp(got, want) != 0)
		fail_msg("%s:\n  got:  %s\n  want: %s", what, got, want);
}

/* Syncs key into env->result; the sync must not fail. */
static void
sync_key(struct env *env, const char *key)
{
	sync_result_clear(&env->result);
	if (env->c->type->sync(env->c, key, NOW, &env->result, &env->error) != 0)
		fail_msg("sync %s: %s", key, env->error);
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
	struct env *env = *state;
	const struct creation_case *row = env->row;
	const struct resource *r = spec_resource(&row->object);
	struct buf created;

	cache_objects(env, row->existing);
	if (row->event != DELETED_SERVICEACCOUNT)
		cache_object(env, &row->object);
	env->object = object_new(&row->object);
	send_event(env, row->event == ADDED_NAMESPACE ? INFORMER_ADDED :
	    row->event == UPDATED_NAMESPACE ? INFORMER_UPDATED : INFORMER_DELETED, r,
	    env->object);
	assert_described("queued", keep(env, describe_keys(&env->keys)), row->queued);
	buf_init(&created);
	for (int i = 0; i < env->keys.n; i++) {
		sync_key(env, env->keys.keys[i]);
		describe_writes(&env->result, &created);
	}
	assert_described("created", keep(env, buf_detach(&created)), row->created);
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
	struct env *env = *state;
	const struct event_case *row = env->row;

	env->object = object_new(&row->object);
	send_event(env, row->type, spec_resource(&row->object), env->object);
	assert_described("queued", keep(env, describe_keys(&env->keys)), row->queued);
}

/* --- sqlkcm's: the sync's other answers ----------------------------------------------- */

/* The creation is kube's object: a bare ServiceAccount named default in the namespace. */
static void
creation_body_is_kubes(void **state)
{
	struct env *env = *state;
	const struct object_spec ns = NAMESPACE("ns1", "Active");
	char *body;

	cache_object(env, &ns);
	sync_key(env, "ns1");
	assert_int_equal(env->result.nwrites, 1);
	body = cJSON_PrintUnformatted(env->result.writes[0].body);
	keep(env, body);
	assert_string_equal(body, "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\","
	    "\"metadata\":{\"name\":\"default\",\"namespace\":\"ns1\"}}");
	assert_string_equal(env->result.writes[0].namespace, "ns1");
	assert_null(env->result.writes[0].uid);
	assert_string_equal(env->result.owner_uid, "uid-ns-ns1");
	assert_ptr_equal(env->result.owner_resource, resource_find("namespaces"));
	assert_int_equal(env->result.nevents, 0);
}

/* A namespace gone from the cache: nothing, and its bookkeeping dropped. */
static void
namespace_gone_forgets(void **state)
{
	struct env *env = *state;

	sync_key(env, "gone");
	assert_int_equal(env->result.nwrites, 0);
	assert_true(env->result.forget_expectations);
	assert_null(env->result.owner_uid);
}

/* The cache has not caught up with the controller's own creation: wait, then act. */
static void
stale_cache_waits(void **state)
{
	struct env *env = *state;
	const struct object_spec ns = NAMESPACE("ns1", "Active");
	const struct resource *sa = resource_find("serviceaccounts");

	cache_object(env, &ns);
	if (store_set_resource_version(env->store, sa, "5", &env->error) != 0 ||
	    consistency_wrote_at(env->c->writes, "ns1", "uid-ns-ns1", "serviceaccounts", "10",
	    &env->error) != 0)
		fail_msg("%s", env->error);
	sync_key(env, "ns1");
	assert_true(env->result.stale);
	assert_string_equal(env->result.stale_resource, "serviceaccounts");
	assert_int_equal(env->result.nwrites, 0);

	if (store_set_resource_version(env->store, sa, "10", &env->error) != 0)
		fail_msg("%s", env->error);
	sync_key(env, "ns1");
	assert_false(env->result.stale);
	assert_int_equal(env->result.nwrites, 1);
}

/* list_keys: every cached namespace, whatever its phase, and nothing else. */
static void
list_keys_gives_every_namespace(void **state)
{
	struct env *env = *state;
	const struct object_spec objects[MAX_OBJECTS] = {
		NAMESPACE("b", "Terminating"), NAMESPACE("a", "Active"), DEFAULT_SA,
	};

	cache_objects(env, objects);
	if (env->c->type->list_keys(env->c, record_key, &env->keys, &env->error) != 0)
		fail_msg("list_keys: %s", env->error);
	assert_described("listed", keep(env, describe_keys(&env->keys)), "a,b");
}

/* The serviceaccount_missing view lists what the syncs would create. */
static void
view_lists_missing_accounts(void **state)
{
	struct env *env = *state;
	const struct object_spec objects[MAX_OBJECTS] = {
		NAMESPACE("a", "Active"), NAMESPACE("b", "Active"), NAMESPACE("c", "Terminating"),
		SERVICEACCOUNT("b", "default"),
	};
	sqlite3_stmt *stmt;
	struct buf b;

	cache_objects(env, objects);
	if (sqlite3_prepare_v2(store_db(env->store), "SELECT namespace, namespace_uid, "
	    "serviceaccount FROM serviceaccount_missing ORDER BY namespace", -1, &stmt,
	    NULL) != SQLITE_OK)
		fail_msg("%s", sqlite3_errmsg(store_db(env->store)));
	buf_init(&b);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&b, "%s%s %s %s", b.len > 0 ? "; " : "", sqlite3_column_text(stmt, 0),
		    sqlite3_column_text(stmt, 1), sqlite3_column_text(stmt, 2));
	sqlite3_finalize(stmt);
	assert_described("serviceaccount_missing", keep(env, buf_detach(&b)),
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
