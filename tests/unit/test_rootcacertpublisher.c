/*
 * test_rootcacertpublisher.c - the root CA certificate publisher
 * (controllers/rootcacertpublisher.c) against kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/certificates/rootcacertpublisher/publisher.go
 * (syncNamespace and the handlers namespaceAdded, namespaceUpdated, configMapUpdated and
 * configMapDeleted) and, for the CA, cmd/kube-controller-manager/app (readCA,
 * getKubeAPIServerCAFileContents). The cases are those of publisher_test.go,
 * TestConfigMapCreation and TestConfigMapUpdateNoHotLoop, one row each; rows of sqlkcm's
 * own say so.
 *
 * A row writes the cached objects into an in-memory store, the namespace default (kube's
 * existNS) always among them; then the event's object, as the informer writes it before
 * the handlers run (a deleted object is removed), calls handle_event and syncs every key
 * it queued. A row without an event syncs the namespace default, as TestConfigMapUpdate-
 * NoHotLoop calls syncNamespace. It compares the keys queued and the writes, each
 * "create|update configmaps NS/NAME [rv=RV] data=DATA description=kube|none|'TEXT'",
 * where DATA is the body's data as compact JSON and rv the body's resourceVersion.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "action.h"
#include "consistency.h"
#include "controller.h"
#include "controllers/rootcacertpublisher.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "util.h"

#define MAX_OBJECTS 4

/* kube's texts. */
#define NAME "kube-root-ca.crt"
#define DESCRIPTION "Contains a CA bundle that can be used to verify the kube-apiserver " \
	"when using internal endpoints such as the internal service IP or " \
	"kubernetes.default.svc. No other usage is guaranteed across distributions of " \
	"Kubernetes clusters."

/* A CA made for these tests (openssl req -x509, P-256, CN sqlkcm-test-ca). */
static const char test_ca[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBiTCCAS+gAwIBAgIUAzJqQjRxQOFlALqXFMxLl5GI+E4wCgYIKoZIzj0EAwIw\n"
    "GTEXMBUGA1UEAwwOc3Fsa2NtLXRlc3QtY2EwIBcNMjYxMTI2MjAxMjA2WhgPMjEy\n"
    "NjExMDIyMDEyMDZaMBkxFzAVBgNVBAMMDnNxbGtjbS10ZXN0LWNhMFkwEwYHKoZI\n"
    "zj0CAQYIKoZIzj0DAQcDQgAELrGZnQM9dXaHfpczQ1wcjcjlu61kael0Ghg4bS92\n"
    "QqUgGiPiNUi8XY2BCRZDLrlCyAyw5Vxp45NakDrHiL2NTKNTMFEwHQYDVR0OBBYE\n"
    "FGxFYtSkJfib3aoC/ZSTX1ZYO0HuMB8GA1UdIwQYMBaAFGxFYtSkJfib3aoC/ZST\n"
    "X1ZYO0HuMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhAJCaNgcj\n"
    "69SvhygbgAsivMdDhkzZQZF2fYn4PXTy/Y5mAiAvPzcPl+EGr3FkwM1ILIvUxUqI\n"
    "H7e0hk+uTyEjHomdwQ==\n"
    "-----END CERTIFICATE-----\n";

/* --- objects -------------------------------------------------------------------------- */

/* A cached object: a Namespace (ns NULL) or a ConfigMap. */
struct object_spec {
	const char *name;		/* NULL ends a list */
	const char *ns;			/* NULL: a Namespace */
	const char *phase;		/* a Namespace's status.phase; NULL: none */
	const char *rv;			/* NULL: "1" */
	const char *data;		/* a ConfigMap's data, JSON; NULL: none */
	const char *annotations;	/* JSON; NULL: none */
};

#define NAMESPACE(n, p) { .name = n, .phase = p }
#define CONFIGMAP(n, object_name, ...) { .name = object_name, .ns = n, __VA_ARGS__ }

/* kube's test objects. */
#define EXIST_NS NAMESPACE("default", "Active")
#define CA_CONFIGMAP(ca) CONFIGMAP("default", NAME, .data = "{\"ca.crt\":\"" ca "\"}")
#define OTHER_CONFIGMAP CONFIGMAP("default", "other")

static cJSON *
object_new(const struct object_spec *spec)
{
	const char *rv = spec->rv != NULL ? spec->rv : "1";
	struct buf b;
	cJSON *object;

	buf_init(&b);
	if (spec->ns == NULL)
		buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{"
		    "\"name\":\"%s\",\"uid\":\"uid-ns-%s\",\"resourceVersion\":\"%s\"",
		    spec->name, spec->name, rv);
	else
		buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
		    "\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"uid-cm-%s-%s\","
		    "\"resourceVersion\":\"%s\"", spec->name, spec->ns, spec->ns, spec->name, rv);
	if (spec->annotations != NULL)
		buf_printf(&b, ",\"annotations\":%s", spec->annotations);
	buf_append_str(&b, "}");
	if (spec->phase != NULL)
		buf_printf(&b, ",\"status\":{\"phase\":\"%s\"}", spec->phase);
	if (spec->data != NULL)
		buf_printf(&b, ",\"data\":%s", spec->data);
	buf_append_str(&b, "}");
	object = cJSON_Parse(b.data);
	if (object == NULL)
		fail_msg("not JSON: %s", b.data);
	buf_free(&b);
	return object;
}

static const struct resource *
spec_resource(const struct object_spec *spec)
{
	return resource_find(spec->ns == NULL ? "namespaces" : "configmaps");
}

/* --- the store and the controller ----------------------------------------------------- */

/* One test's world, with the publisher's flag and CA file; the publisher is created by
 * the test (env_start). */
struct env {
	struct ctl_world *w;
	struct controller_config config;
	const char *flags[1];		/* root-ca-file */
	char path[64];			/* a CA file made by the test, or "" */
};

static int
env_setup(void **state)
{
	struct env *env = xcalloc(1, sizeof *env);

	env->w = ctl_world_new(NULL, NULL);
	env->w->row = *state;
	*state = env;
	env->config.flags = env->flags;
	return 0;
}

static int
env_teardown(void **state)
{
	struct env *env = *state;

	if (env->path[0] != '\0')
		unlink(env->path);
	ctl_world_free(env->w);
	free(env);
	return 0;
}

/* Creates the publisher with --root-ca-file file (NULL: not given) over a kubeconfig
 * whose CA is cluster_ca (NULL: none); 0, or -1 with env->w->error set. */
static int
env_start(struct env *env, const char *file, const char *cluster_ca)
{
	env->flags[0] = file;
	env->config.cluster_ca = cluster_ca;
	return ctl_start(env->w, &rootcacertpublisher_controller_type, &env->config);
}

/* The same, which must succeed. */
static void
env_start_ok(struct env *env, const char *file, const char *cluster_ca)
{
	if (env_start(env, file, cluster_ca) != 0)
		fail_msg("controller_new: %s", env->w->error);
}

/* Writes text into a new file (env->path) and returns its name. */
static const char *
write_file(struct env *env, const char *text)
{
	int fd;

	strcpy(env->path, "/tmp/test-rootca-XXXXXX");
	fd = mkstemp(env->path);
	if (fd == -1)
		fail_msg("mkstemp failed");
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		fail_msg("write failed");
	close(fd);
	return env->path;
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

/* Removes the object spec describes from the cache. */
static void
uncache_object(struct ctl_world *w, const struct object_spec *spec)
{
	ctl_uncache(w, spec_resource(spec), ctl_keep(w, xasprintf("uid-cm-%s-%s", spec->ns,
	    spec->name)));
}

/* The writes of r, as the file's header describes them, appended to b. */
static void
describe_writes(const struct sync_result *r, struct buf *b)
{
	for (int i = 0; i < r->nwrites; i++) {
		const struct action *a = &r->writes[i];
		const cJSON *d = json_annotation(a->body, "kubernetes.io/description");
		char *data = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(a->body,
		    "data"));

		buf_printf(b, "%s%s %s %s/%s", b->len > 0 ? "; " : "",
		    a->type == ACTION_CREATE ? "create" : a->type == ACTION_UPDATE ? "update" :
		    "(other)", a->resource->name, a->namespace, a->name);
		if (json_is_set(a->body, "metadata.resourceVersion"))
			buf_printf(b, " rv=%s", json_string(a->body, "metadata.resourceVersion"));
		buf_printf(b, " data=%s description=", data != NULL ? data : "none");
		if (!cJSON_IsString(d))
			buf_append_str(b, "none");
		else if (strcmp(d->valuestring, DESCRIPTION) == 0)
			buf_append_str(b, "kube");
		else
			buf_printf(b, "'%s'", d->valuestring);
		free(data);
	}
}

/* --- the cases ------------------------------------------------------------------------ */

enum case_event {
	NO_EVENT,		/* sync default */
	ADDED_NAMESPACE,
	UPDATED_NAMESPACE,
	DELETED_NAMESPACE,
	ADDED_CONFIGMAP,
	UPDATED_CONFIGMAP,
	DELETED_CONFIGMAP,
};

struct publisher_case {
	const char *name;
	const char *ca;				/* the CA (the kubeconfig's) */
	struct object_spec existing[MAX_OBJECTS];	/* besides EXIST_NS */
	enum case_event event;
	struct object_spec object;		/* the event's */
	const char *queued;			/* NULL: nothing */
	const char *writes;			/* NULL: nothing */
};

static const struct publisher_case publisher_cases[] = {
	/* --- TestConfigMapCreation (fakeRootCA "fake-root-ca") --- */
	{
		.name = "TestConfigMapCreation, create new namespace",
		.ca = "fake-root-ca",
		.event = ADDED_NAMESPACE, .object = NAMESPACE("new", "Active"),
		.queued = "new",
		.writes = "create configmaps new/" NAME " data={\"ca.crt\":\"fake-root-ca\"} "
		    "description=kube",
	},
	{
		.name = "TestConfigMapCreation, delete other configmap",
		.ca = "fake-root-ca",
		.existing = { OTHER_CONFIGMAP, CA_CONFIGMAP("fake-root-ca") },
		.event = DELETED_CONFIGMAP, .object = OTHER_CONFIGMAP,
	},
	{
		.name = "TestConfigMapCreation, delete ca configmap",
		.ca = "fake-root-ca",
		.existing = { OTHER_CONFIGMAP, CA_CONFIGMAP("fake-root-ca") },
		.event = DELETED_CONFIGMAP, .object = CA_CONFIGMAP("fake-root-ca"),
		.queued = "default",
		.writes = "create configmaps default/" NAME " data={\"ca.crt\":\"fake-root-ca\"} "
		    "description=kube",
	},
	{
		.name = "TestConfigMapCreation, update ca configmap with adding field",
		.ca = "fake-root-ca",
		.existing = { CA_CONFIGMAP("fake-root-ca") },
		.event = UPDATED_CONFIGMAP, .object = CONFIGMAP("default", NAME, .rv = "2",
		    .data = "{\"ca.crt\":\"fake-root-ca\",\"test\":\"test\"}"),
		.queued = "default",
		.writes = "update configmaps default/" NAME " rv=2 "
		    "data={\"ca.crt\":\"fake-root-ca\"} description=kube",
	},
	{
		.name = "TestConfigMapCreation, update ca configmap with modifying field",
		.ca = "fake-root-ca",
		.existing = { CA_CONFIGMAP("fake-root-ca") },
		.event = UPDATED_CONFIGMAP, .object = CONFIGMAP("default", NAME, .rv = "2",
		    .data = "{\"ca.crt\":\"abc\"}"),
		.queued = "default",
		.writes = "update configmaps default/" NAME " rv=2 "
		    "data={\"ca.crt\":\"fake-root-ca\"} description=kube",
	},
	{
		.name = "TestConfigMapCreation, update with other configmap",
		.ca = "fake-root-ca",
		.existing = { CA_CONFIGMAP("fake-root-ca"), OTHER_CONFIGMAP },
		.event = UPDATED_CONFIGMAP, .object = CONFIGMAP("default", "other", .rv = "2",
		    .data = "{\"aa\":\"bb\"}"),
	},
	{
		.name = "TestConfigMapCreation, update namespace with terminating state",
		.ca = "fake-root-ca",
		.event = UPDATED_NAMESPACE, .object = NAMESPACE("default", "Terminating"),
	},

	/* --- TestConfigMapUpdateNoHotLoop (rootCA "fake"): syncNamespace("default") --- */
	{
		.name = "TestConfigMapUpdateNoHotLoop, update-configmap-annotation",
		.ca = "fake",
		.existing = { CA_CONFIGMAP("fake") },
		.writes = "update configmaps default/" NAME " rv=1 data={\"ca.crt\":\"fake\"} "
		    "description=kube",
	},
	{
		.name = "TestConfigMapUpdateNoHotLoop, "
		    "no-update-configmap-if-annotation-present-and-equal",
		.ca = "fake",
		.existing = { CONFIGMAP("default", NAME, .data = "{\"ca.crt\":\"fake\"}",
		    .annotations = "{\"kubernetes.io/description\":\"" DESCRIPTION "\"}") },
	},
	{
		.name = "TestConfigMapUpdateNoHotLoop, "
		    "no-update-configmap-if-annotation-present-and-different",
		.ca = "fake",
		.existing = { CONFIGMAP("default", NAME, .data = "{\"ca.crt\":\"fake\"}",
		    .annotations = "{\"kubernetes.io/description\":\"different\"}") },
	},

	/* --- the same rules at their edges (sqlkcm's rows) --- */
	{
		.name = "namespaceAdded: a namespace added while terminating is queued, and the "
		    "sync creates the ConfigMap (syncNamespace does not look at the phase)",
		.ca = "fake",
		.event = ADDED_NAMESPACE, .object = NAMESPACE("going", "Terminating"),
		.queued = "going",
		.writes = "create configmaps going/" NAME " data={\"ca.crt\":\"fake\"} "
		    "description=kube",
	},
	{
		.name = "namespaceUpdated: an active namespace updated is queued; its described "
		    "ConfigMap holding the CA is left alone",
		.ca = "fake",
		.existing = { CONFIGMAP("default", NAME, .data = "{\"ca.crt\":\"fake\"}",
		    .annotations = "{\"kubernetes.io/description\":\"x\"}") },
		.event = UPDATED_NAMESPACE, .object = EXIST_NS,
		.queued = "default",
	},
	{
		.name = "handlers: a namespace's deletion queues nothing",
		.ca = "fake",
		.event = DELETED_NAMESPACE, .object = NAMESPACE("old", "Terminating"),
	},
	{
		.name = "handlers: a kube-root-ca.crt ConfigMap added queues nothing (kube has no "
		    "AddFunc for ConfigMaps)",
		.ca = "fake",
		.event = ADDED_CONFIGMAP, .object = CONFIGMAP("default", NAME,
		    .data = "{\"ca.crt\":\"wrong\"}"),
	},
	{
		.name = "syncNamespace: a ConfigMap without data is rewritten although described",
		.ca = "fake",
		.existing = { CONFIGMAP("default", NAME, .rv = "7",
		    .annotations = "{\"kubernetes.io/description\":\"" DESCRIPTION "\"}") },
		.writes = "update configmaps default/" NAME " rv=7 data={\"ca.crt\":\"fake\"} "
		    "description=kube",
	},
	{
		.name = "syncNamespace: a described ConfigMap with another key beside the CA is "
		    "rewritten (the data compared whole, reflect.DeepEqual)",
		.ca = "fake",
		.existing = { CONFIGMAP("default", NAME,
		    .data = "{\"ca.crt\":\"fake\",\"test\":\"test\"}",
		    .annotations = "{\"kubernetes.io/description\":\"" DESCRIPTION "\"}") },
		.writes = "update configmaps default/" NAME " rv=1 data={\"ca.crt\":\"fake\"} "
		    "description=kube",
	},
	{
		.name = "syncNamespace: an empty description annotation is rewritten "
		    "(len(annotation) > 0)",
		.ca = "fake",
		.existing = { CONFIGMAP("default", NAME, .data = "{\"ca.crt\":\"fake\"}",
		    .annotations = "{\"kubernetes.io/description\":\"\"}") },
		.writes = "update configmaps default/" NAME " rv=1 data={\"ca.crt\":\"fake\"} "
		    "description=kube",
	},
	{
		.name = "syncNamespace: with an empty CA (no --root-ca-file, no CA in the "
		    "kubeconfig) a described ConfigMap with an empty ca.crt is current",
		.ca = NULL,
		.existing = { CONFIGMAP("default", NAME, .data = "{\"ca.crt\":\"\"}",
		    .annotations = "{\"kubernetes.io/description\":\"x\"}") },
	},
	{
		.name = "syncNamespace: with an empty CA a missing ConfigMap is created with an "
		    "empty ca.crt, as kube does with empty CAData",
		.ca = NULL,
		.event = ADDED_NAMESPACE, .object = NAMESPACE("new", "Active"),
		.queued = "new",
		.writes = "create configmaps new/" NAME " data={\"ca.crt\":\"\"} description=kube",
	},
};

/* The informer's part of an event: the cache written before the handlers run. */
static void
apply_event(struct ctl_world *w, const struct publisher_case *row)
{
	static const enum informer_event_type types[] = {
		[ADDED_NAMESPACE] = INFORMER_ADDED, [UPDATED_NAMESPACE] = INFORMER_UPDATED,
		[DELETED_NAMESPACE] = INFORMER_DELETED, [ADDED_CONFIGMAP] = INFORMER_ADDED,
		[UPDATED_CONFIGMAP] = INFORMER_UPDATED, [DELETED_CONFIGMAP] = INFORMER_DELETED,
	};

	if (types[row->event] == INFORMER_DELETED && row->object.ns != NULL)
		uncache_object(w, &row->object);
	else if (types[row->event] != INFORMER_DELETED)
		cache_object(w, &row->object);
	ctl_tell(w, types[row->event], spec_resource(&row->object), object_new(&row->object),
	    NULL);
}

static void
publisher_case_holds(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct publisher_case *row = w->row;
	const struct object_spec exist_ns = EXIST_NS;
	struct buf writes;

	env_start_ok(env, NULL, row->ca);
	cache_object(w, &exist_ns);
	cache_objects(w, row->existing);
	buf_init(&writes);
	if (row->event == NO_EVENT) {
		ctl_sync(w, "default", NOW);
		describe_writes(&w->result, &writes);
	} else {
		apply_event(w, row);
		assert_described("queued", ctl_keep(w, ctl_keys(w)), row->queued);
		for (int i = 0; i < w->nkeys; i++) {
			ctl_sync(w, w->keys[i].key, NOW);
			describe_writes(&w->result, &writes);
		}
	}
	assert_described("writes", ctl_keep(w, buf_detach(&writes)), row->writes);
}

/* --- the bodies ----------------------------------------------------------------------- */

/* The creation is kube's object: name, description annotation and data, no namespace
 * (the request's path names it). */
static void
creation_body_is_kubes(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct object_spec ns = NAMESPACE("ns1", "Active");
	const char *body;

	env_start_ok(env, NULL, "CA");
	cache_object(w, &ns);
	ctl_sync(w, "ns1", NOW);
	assert_int_equal(w->result.nwrites, 1);
	body = ctl_keep(w, cJSON_PrintUnformatted(w->result.writes[0].body));
	assert_string_equal(body, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
	    "\"name\":\"kube-root-ca.crt\",\"annotations\":{\"kubernetes.io/description\":\""
	    DESCRIPTION "\"}},\"data\":{\"ca.crt\":\"CA\"}}");
	assert_int_equal(w->result.writes[0].type, ACTION_CREATE);
	assert_string_equal(w->result.writes[0].namespace, "ns1");
	assert_string_equal(w->result.owner_uid, "uid-ns-ns1");
	assert_int_equal(w->result.nevents, 0);
}

/* The update is the cached object (kube's DeepCopy) with the data replaced and the
 * annotation set: the rest kept, its resourceVersion and uid sent. */
static void
update_body_keeps_the_rest(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct object_spec cm = CONFIGMAP("default", NAME, .rv = "42",
	    .data = "{\"ca.crt\":\"old\",\"extra\":\"x\"}",
	    .annotations = "{\"team\":\"a\",\"kubernetes.io/description\":\"mine\"}");
	const struct object_spec exist_ns = EXIST_NS;
	const struct action *a;
	cJSON *object;

	env_start_ok(env, NULL, "CA");
	cache_object(w, &exist_ns);
	object = object_new(&cm);
	json_set(json_child_object(json_child_object(object, "metadata"), "labels"), "app",
	    cJSON_CreateString("x"));
	json_set(object, "binaryData", cJSON_CreateObject());
	json_set(cJSON_GetObjectItemCaseSensitive(object, "binaryData"), "blob",
	    cJSON_CreateString("AAEC"));
	ctl_cache(w, resource_find("configmaps"), object);

	ctl_sync(w, "default", NOW);
	assert_int_equal(w->result.nwrites, 1);
	a = &w->result.writes[0];
	assert_int_equal(a->type, ACTION_UPDATE);
	assert_null(a->subresource);
	assert_string_equal(a->namespace, "default");
	assert_string_equal(a->name, NAME);
	assert_string_equal(a->uid, "uid-cm-default-" NAME);
	assert_string_equal(json_string(a->body, "metadata.resourceVersion"), "42");
	assert_string_equal(json_string(a->body, "metadata.uid"), "uid-cm-default-" NAME);
	assert_string_equal(json_string(a->body, "metadata.labels.app"), "x");
	assert_string_equal(json_string(a->body, "binaryData.blob"), "AAEC");
	assert_string_equal(json_annotation(a->body, "team")->valuestring, "a");
	assert_string_equal(json_annotation(a->body, "kubernetes.io/description")->valuestring,
	    DESCRIPTION);
	assert_string_equal(ctl_keep(w, cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(
	    a->body, "data"))), "{\"ca.crt\":\"CA\"}");
	assert_string_equal(json_string(a->body, "kind"), "ConfigMap");
	assert_string_equal(json_string(a->body, "apiVersion"), "v1");
}

/* --- the CA --------------------------------------------------------------------------- */

/* --root-ca-file: the file's text, as read, is published; the kubeconfig's CA is not. */
static void
root_ca_file_is_published(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct object_spec ns = NAMESPACE("ns1", "Active");
	const char *file = write_file(env, test_ca);

	env_start_ok(env, file, "the kubeconfig's CA");
	cache_object(w, &ns);
	ctl_sync(w, "ns1", NOW);
	assert_int_equal(w->result.nwrites, 1);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    w->result.writes[0].body, "data"), "ca.crt")->valuestring, test_ca);
}

/* No --root-ca-file: the kubeconfig's CA. */
static void
kubeconfig_ca_is_published(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct object_spec ns = NAMESPACE("ns1", "Active");

	env_start_ok(env, "", test_ca);
	cache_object(w, &ns);
	ctl_sync(w, "ns1", NOW);
	assert_int_equal(w->result.nwrites, 1);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    w->result.writes[0].body, "data"), "ca.crt")->valuestring, test_ca);
}

struct ca_file_case {
	const char *name;
	const char *text;	/* the file's; NULL: no such file */
	const char *error;	/* after the file's name */
};

static const struct ca_file_case ca_file_cases[] = {
	{
		.name = "readCA: a --root-ca-file that cannot be read is an init error naming it",
		.text = NULL,
		.error = ": open /tmp/no-such-dir-sqlkcm/ca.crt: No such file or directory",
	},
	{
		.name = "readCA: a --root-ca-file without a PEM certificate is an init error "
		    "naming it (ParseCertsPEM)",
		.text = "not a certificate\n",
		.error = ": data does not contain any valid RSA or ECDSA certificates",
	},
	{
		.name = "readCA: a --root-ca-file with only other PEM blocks is an init error",
		.text = "-----BEGIN PUBLIC KEY-----\nAAEC\n-----END PUBLIC KEY-----\n",
		.error = ": data does not contain any valid RSA or ECDSA certificates",
	},
	{
		.name = "readCA: a CERTIFICATE block that is no certificate is an init error",
		.text = "-----BEGIN CERTIFICATE-----\nAAECAwQF\n-----END CERTIFICATE-----\n",
		.error = ": a CERTIFICATE block is not an X.509 certificate",
	},
};

static void
ca_file_case_holds(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct ca_file_case *row = w->row;
	const char *file = row->text != NULL ? write_file(env, row->text) :
	    "/tmp/no-such-dir-sqlkcm/ca.crt";
	char *want = xasprintf("root-ca-cert-publisher: error parsing root-ca-file at %s%s",
	    file, row->error);

	ctl_keep(w, want);
	assert_int_equal(env_start(env, file, "the kubeconfig's CA"), -1);
	assert_described("init error", w->error, want);
}

/* --- the sync's other answers --------------------------------------------------------- */

/* A namespace gone from the cache: nothing sent (kube's creation would get NotFound),
 * its bookkeeping dropped. */
static void
namespace_gone_forgets(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;

	env_start_ok(env, NULL, "CA");
	ctl_sync(w, "gone", NOW);
	assert_int_equal(w->result.nwrites, 0);
	assert_true(w->result.forget_expectations);
}

/* The cache has not caught up with the controller's own write: wait. */
static void
stale_cache_waits(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct object_spec exist_ns = EXIST_NS;
	const struct resource *cms = resource_find("configmaps");

	env_start_ok(env, NULL, "CA");
	cache_object(w, &exist_ns);
	if (store_set_resource_version(w->store, cms, "5", &w->error) != 0 ||
	    consistency_wrote_at(w->c->writes, "default", "uid-ns-default", "configmaps",
	    "10", &w->error) != 0)
		fail_msg("%s", w->error);
	ctl_sync(w, "default", NOW);
	assert_true(w->result.stale);
	assert_string_equal(w->result.stale_resource, "configmaps");
	assert_int_equal(w->result.nwrites, 0);
}

static void
list_keys_gives_every_namespace(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct object_spec objects[MAX_OBJECTS] = {
		NAMESPACE("b", "Terminating"), NAMESPACE("a", "Active"), OTHER_CONFIGMAP,
	};

	env_start_ok(env, NULL, "CA");
	cache_objects(w, objects);
	ctl_list_keys(w);
	assert_described("listed", ctl_keep(w, ctl_keys(w)), "a,b");
}

/* The root_ca_configmaps view: one row per namespace, with what the sync compares. */
static void
view_shows_each_namespace(void **state)
{
	struct env *env = *state;
	struct ctl_world *w = env->w;
	const struct object_spec objects[MAX_OBJECTS] = {
		NAMESPACE("a", "Active"), NAMESPACE("b", "Terminating"),
		CONFIGMAP("a", NAME, .rv = "3", .data = "{\"ca.crt\":\"X\",\"more\":\"y\"}",
		    .annotations = "{\"kubernetes.io/description\":\"d\"}"),
		CONFIGMAP("b", "other"),
	};
	sqlite3_stmt *stmt;
	struct buf b;

	env_start_ok(env, NULL, "CA");
	cache_objects(w, objects);
	if (sqlite3_prepare_v2(store_db(w->store), "SELECT namespace, namespace_uid, phase,"
	    " coalesce(configmap_uid, '-'), coalesce(resource_version, '-'),"
	    " coalesce(ca_crt, '-'), other_data_keys, described FROM root_ca_configmaps"
	    " ORDER BY namespace", -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("%s", sqlite3_errmsg(store_db(w->store)));
	buf_init(&b);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		buf_append_str(&b, b.len > 0 ? "; " : "");
		for (int i = 0; i < 8; i++)
			buf_printf(&b, "%s%s", i > 0 ? " " : "", sqlite3_column_text(stmt, i));
	}
	sqlite3_finalize(stmt);
	assert_described("root_ca_configmaps", ctl_keep(w, buf_detach(&b)),
	    "a uid-ns-a Active uid-cm-a-kube-root-ca.crt 3 X 1 1; "
	    "b uid-ns-b Terminating - - - 0 0");
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
	struct CMUnitTest tests[NELEM(publisher_cases) + NELEM(ca_file_cases) + 8];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(publisher_cases); i++)
		tests[n++] = row_test(publisher_cases[i].name, publisher_case_holds,
		    &publisher_cases[i]);
	tests[n++] = row_test("sqlkcm's: the creation is kube's ConfigMap",
	    creation_body_is_kubes, NULL);
	tests[n++] = row_test("sqlkcm's: the update is the cached ConfigMap with kube's data "
	    "and annotation, its resourceVersion sent", update_body_keeps_the_rest, NULL);
	tests[n++] = row_test("getKubeAPIServerCAFileContents: --root-ca-file is published",
	    root_ca_file_is_published, NULL);
	tests[n++] = row_test("getKubeAPIServerCAFileContents: without --root-ca-file, the "
	    "kubeconfig's CA is published", kubeconfig_ca_is_published, NULL);
	for (size_t i = 0; i < NELEM(ca_file_cases); i++)
		tests[n++] = row_test(ca_file_cases[i].name, ca_file_case_holds,
		    &ca_file_cases[i]);
	tests[n++] = row_test("sqlkcm's: a namespace gone from the cache is forgotten",
	    namespace_gone_forgets, NULL);
	tests[n++] = row_test("sqlkcm's: a cache behind the controller's own write waits",
	    stale_cache_waits, NULL);
	tests[n++] = row_test("sqlkcm's: list_keys gives every cached namespace",
	    list_keys_gives_every_namespace, NULL);
	tests[n++] = row_test("sqlkcm's: the root_ca_configmaps view shows each namespace",
	    view_shows_each_namespace, NULL);
	return _cmocka_run_group_tests("rootcacertpublisher", tests, n, NULL, NULL);
}
