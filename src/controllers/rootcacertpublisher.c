/*
 * rootcacertpublisher.c - the root CA certificate publisher: every namespace has a
 * ConfigMap kube-root-ca.crt whose data is {"ca.crt": the cluster's root CA}, so that pods
 * can verify the apiserver they reach through its in-cluster endpoints.
 *
 * It follows kube-controller-manager's rootcacertpublisher.Publisher. The CA is read once,
 * at init: the file --root-ca-file names (which must hold a PEM certificate, as kube's
 * readCA checks), else the CA of the kubeconfig. With neither, the CA is empty and the
 * ConfigMaps hold an empty ca.crt: kube publishes its client config's CAData as it finds
 * it, empty or not.
 *
 * A key is a namespace's name. A sync, from the cache:
 *
 * 1. The namespace is not cached: nothing (kube would send the creation and take the
 *    apiserver's NotFound as the end of it; the cache knows the answer already).
 * 2. The cache has not caught up with this controller's last write in it (consistency.c):
 *    wait, retry with backoff.
 * 3. No kube-root-ca.crt ConfigMap: create it, with the CA and kube's description
 *    annotation, whatever the namespace's phase (kube does not look at it; the apiserver's
 *    refusal in a terminating namespace is not an error, and the executor stops there).
 * 4. Its data is exactly {"ca.crt": CA} and its kubernetes.io/description annotation is
 *    not empty: nothing. Otherwise it is updated (PUT) as cached, with that data and
 *    kube's annotation text: its other annotations, labels and binaryData are kept, and
 *    its cached resourceVersion goes with it, so a cache that lags gets a Conflict (and
 *    the key a retry) rather than overwriting a change it has not seen.
 *
 * The root_ca_configmaps view (schema/008-serviceaccounts.sql) shows each namespace's
 * ConfigMap as the sync judges it; the sync reads it for its namespace, with its CA.
 *
 * The handlers queue, as kube's: a namespace added (whatever its phase) or updated while
 * Active; the namespace of a kube-root-ca.crt ConfigMap updated or deleted (one added is
 * not a change kube reacts to). list_keys gives every cached namespace, as the namespace
 * informer's first list does in kube.
 *
 * The controller records no events: kube's has no event recorder.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "consistency.h"
#include "controllers/rootcacertpublisher.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "rootca.h"
#include "util.h"

/* kube's names and words, which clients and people look for. */
#define CONFIGMAP_NAME "kube-root-ca.crt"
#define CONFIGMAP_KEY "ca.crt"
#define DESCRIPTION_ANNOTATION "kubernetes.io/description"
#define DESCRIPTION "Contains a CA bundle that can be used to verify the kube-apiserver " \
	"when using internal endpoints such as the internal service IP or " \
	"kubernetes.default.svc. No other usage is guaranteed across distributions of " \
	"Kubernetes clusters."

enum {
	STMT_CONFIGMAP,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const publisher_sql[STMT_COUNT] = {
	/* Namespace ?1 if cached, with its ConfigMap as the sync judges it for CA ?2: the
	 * namespace's uid, the ConfigMap's uid (NULL: missing), whether its data is just
	 * the CA, whether it is described, and its cached body. */
	[STMT_CONFIGMAP] =
	    "SELECT v.namespace_uid, v.configmap_uid,"
	    " v.ca_crt IS ?2 AND v.other_data_keys = 0, v.described, c.body"
	    " FROM root_ca_configmaps v LEFT JOIN cache_objects c ON c.uid = v.configmap_uid"
	    " WHERE v.namespace = ?1",
	/* Every cached namespace. */
	[STMT_KEYS] =
	    "SELECT name FROM cache_objects WHERE resource = 'namespaces' AND namespace = ''"
	    " ORDER BY name",
};

struct publisher_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *namespaces;
	const struct resource *configmaps;
	char *ca;		/* the PEM published; "" when none is known */
};

/* --- the CA ---------------------------------------------------------------------------- */

/* Reads the CA file path into *ca (malloc'd), as kube's readCA: -1 with *error naming the
 * file when it cannot be read or holds no certificate. */
static int
read_root_ca(const char *path, char **ca, char **error)
{
	char *why = NULL;

	if (rootca_read_file(path, ca, &why) != 0) {
		error_set(error, "root-ca-cert-publisher: error parsing root-ca-file at %s: %s",
		    path, why);
		free(why);
		return -1;
	}
	return 0;
}

/* --- sync ------------------------------------------------------------------------------ */

/* The ConfigMap's data: the one key, the CA. */
static cJSON *
configmap_data(const struct publisher_state *st)
{
	cJSON *data = cJSON_CreateObject();

	cJSON_AddStringToObject(data, CONFIGMAP_KEY, st->ca);
	return data;
}

/* Appends the creation of namespace's ConfigMap to r: kube's object, which names no
 * namespace (the request's path does). */
static void
create_configmap(struct sync_result *r, const struct publisher_state *st,
    const char *namespace)
{
	struct action *a = action_append(&r->writes, &r->nwrites);
	cJSON *metadata, *annotations;

	a->type = ACTION_CREATE;
	a->verb = "create";
	a->resource = st->configmaps;
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(CONFIGMAP_NAME);
	a->body = cJSON_CreateObject();
	cJSON_AddStringToObject(a->body, "apiVersion", st->configmaps->api_version);
	cJSON_AddStringToObject(a->body, "kind", st->configmaps->kind);
	metadata = cJSON_AddObjectToObject(a->body, "metadata");
	cJSON_AddStringToObject(metadata, "name", CONFIGMAP_NAME);
	annotations = cJSON_AddObjectToObject(metadata, "annotations");
	cJSON_AddStringToObject(annotations, DESCRIPTION_ANNOTATION, DESCRIPTION);
	cJSON_AddItemToObject(a->body, "data", configmap_data(st));
	a->reason = xstrdup("the namespace has no " CONFIGMAP_NAME " ConfigMap");
}

/* Appends the update of the cached ConfigMap (taken) in namespace to r: its data made the
 * CA's, its description annotation kube's. */
static void
update_configmap(struct sync_result *r, const struct publisher_state *st,
    const char *namespace, const char *uid, cJSON *configmap, int data_current)
{
	struct action *a = action_append(&r->writes, &r->nwrites);
	cJSON *metadata = json_child_object(configmap, "metadata");
	cJSON *annotations = json_child_object(metadata, "annotations");

	json_set(configmap, "apiVersion", cJSON_CreateString(st->configmaps->api_version));
	json_set(configmap, "kind", cJSON_CreateString(st->configmaps->kind));
	json_set(configmap, "data", configmap_data(st));
	json_set(annotations, DESCRIPTION_ANNOTATION, cJSON_CreateString(DESCRIPTION));
	a->type = ACTION_UPDATE;
	a->verb = "update";
	a->resource = st->configmaps;
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(CONFIGMAP_NAME);
	a->uid = xstrdup(uid);
	a->body = configmap;
	a->reason = xstrdup(data_current ? "its " DESCRIPTION_ANNOTATION " annotation is "
	    "missing or empty" : "its data is not {\"" CONFIGMAP_KEY "\": the root CA}");
}

static int
publisher_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct publisher_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_CONFIGMAP]);
	char *configmap_uid = NULL;
	cJSON *configmap = NULL;
	int rc, caught_up, data_current = 0, described = 0;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->namespaces;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, st->ca, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		const char *uid = (const char *)sqlite3_column_text(stmt, 1);

		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		configmap_uid = uid != NULL ? xstrdup(uid) : NULL;
		data_current = sqlite3_column_int(stmt, 2);
		described = sqlite3_column_int(stmt, 3);
		configmap = controller_column_json(stmt, 4);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error_set(error, "root-ca-cert-publisher: reading namespace %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
	if (rc == SQLITE_DONE) {
		/* Gone: nothing to publish, nothing to wait for any more. */
		out->forget_expectations = 1;
		return 0;
	}
	rc = 0;
	if (configmap_uid != NULL && !cJSON_IsObject(configmap)) {
		rc = error_set(error, "root-ca-cert-publisher: %s/%s: the cached body is not a "
		    "JSON object", key, CONFIGMAP_NAME);
	} else if ((caught_up = controller_caught_up(c, key, out->owner_uid, out,
	    error)) <= 0) {
		rc = caught_up;
	} else if (configmap_uid == NULL) {
		create_configmap(out, st, key);
	} else if (!data_current || !described) {
		update_configmap(out, st, key, configmap_uid, configmap, data_current);
		configmap = NULL;
	}
	cJSON_Delete(configmap);
	free(configmap_uid);
	return rc;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
publisher_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	struct publisher_state *st = c->state;
	const char *key = NULL, *name, *phase;

	(void)now;
	if (strcmp(ev->resource->name, st->namespaces->name) == 0) {
		phase = json_string(ev->object, "status.phase");
		if (ev->type == INFORMER_ADDED || (ev->type == INFORMER_UPDATED &&
		    strcmp(phase, "Active") == 0))
			key = json_string(ev->object, "metadata.name");
	} else if (strcmp(ev->resource->name, st->configmaps->name) == 0 &&
	    ev->type != INFORMER_ADDED) {
		name = json_string(ev->object, "metadata.name");
		if (strcmp(name, CONFIGMAP_NAME) == 0)
			key = json_string(ev->object, "metadata.namespace");
	}
	if (key != NULL && *key != '\0')
		q->add(key, q->arg);
}

static int
publisher_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct publisher_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "root-ca-cert-publisher", cb, arg, error);
}

/* --- the type -------------------------------------------------------------------------- */

static int
publisher_init(struct controller *c, char **error)
{
	struct publisher_state *st = xcalloc(1, sizeof *st);
	const char *file = controller_flag_text(c, "root-ca-file");

	c->state = st;
	st->namespaces = resource_find("namespaces");
	st->configmaps = resource_find("configmaps");
	if (st->namespaces == NULL || st->configmaps == NULL)
		return error_set(error, "root-ca-cert-publisher: namespaces and configmaps are "
		    "not known resources");
	if (file[0] != '\0') {
		if (read_root_ca(file, &st->ca, error) != 0)
			return -1;
	} else if (c->config->cluster_ca != NULL) {
		st->ca = xstrdup(c->config->cluster_ca);
	} else {
		log_v(1, "root-ca-cert-publisher: no --root-ca-file and no CA in the kubeconfig: "
		    "publishing an empty %s", CONFIGMAP_KEY);
		st->ca = xstrdup("");
	}
	return store_prepare_statements(store_db(c->store), publisher_sql, STMT_COUNT,
	    st->stmt, "root-ca-cert-publisher", error);
}

static void
publisher_fini(struct controller *c)
{
	struct publisher_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st->ca);
	free(st);
	c->state = NULL;
}

static const char *const publisher_resources[] = { "namespaces", "configmaps", NULL };

static const struct controller_flag publisher_flags[] = {
	/* kube's help speaks of the token controller, its other user, which sqlkcm has not:
	 * said here for the publisher, in kube's words where they fit. */
	{ "root-ca-file", CONTROLLER_FLAG_STRING, "", 0, 0,
	    "If set, this root certificate authority will be published in every namespace's "
	    "kube-root-ca.crt ConfigMap instead of the kubeconfig's CA. This must be a valid "
	    "PEM-encoded CA bundle." },
	{ NULL, CONTROLLER_FLAG_STRING, NULL, 0, 0, NULL },
};

const struct controller_type rootcacertpublisher_controller_type = {
	.name = "root-ca-cert-publisher",
	.resources = publisher_resources,
	.default_workers = 1,
	.workers_flag = NULL,		/* kube runs it with one worker, no flag */
	.enable_flag = NULL,
	.flags = publisher_flags,
	/* kube's has no recorder; this is the name its client goes by. */
	.event_component = "root-ca-cert-publisher",
	.client_name = "root-ca-cert-publisher",
	.recovery = NULL,
	.init = publisher_init,
	.fini = publisher_fini,
	.handle_event = publisher_handle_event,
	.list_keys = publisher_list_keys,
	.sync = publisher_sync,
};
