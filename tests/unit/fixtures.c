/*
 * fixtures.c - what the controller unit tests share (see fixtures.h): the store and the
 * ReplicaSet controller, kube-style ReplicaSet and pod objects, a world for any
 * controller's tests, and a fake apiserver.
 *
 * The fake apiserver is a client made with client_new_responder: every request the code
 * under test sends through it (restops, the executor, the event recorder, unchanged) is
 * recorded and answered here, on the loop, as an apiserver would answer it, unless one of
 * the test's faults matches it first. It keeps no objects of its own: GETs read the
 * fixture's cache, writes echo what was sent with a fresh resourceVersion.
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

#include "client.h"
#include "controller.h"
#include "controllers/replicaset.h"
#include "fixtures.h"
#include "informer.h"
#include "json.h"
#include "resource.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

/* --- the store and the controller -------------------------------------------------------- */

/* Opens the store at path with a ReplicaSet controller over it. */
struct fixture *
fixture_open(const char *path)
{
	struct fixture *f = xcalloc(1, sizeof *f);
	char *error = NULL;

	if (store_open(path, NULL, &f->store, &error) != 0)
		fail_msg("store_open %s: %s", path, error);
	f->c = controller_new(&replicaset_controller_type, f->store, NULL, &error);
	if (f->c == NULL)
		fail_msg("controller_new: %s", error);
	f->pods = resource_find("pods");
	f->replicasets = resource_find("replicasets");
	return f;
}

/* An in-memory store and a ReplicaSet controller over it. */
struct fixture *
fixture_new(void)
{
	return fixture_open(":memory:");
}

/* Frees f, its controller and its store. */
void
fixture_free(struct fixture *f)
{
	controller_free(f->c);
	store_close(f->store);
	free(f);
}

/* A fresh fixture for each test. */
int
fixture_setup(void **state)
{
	*state = fixture_new();
	return 0;
}

/* Frees the test's fixture. */
int
fixture_teardown(void **state)
{
	fixture_free(*state);
	return 0;
}

/* Adds member name = t as the apiserver writes times. */
void
fixture_add_time(cJSON *o, const char *name, double t)
{
	char stamp[TIME_RFC3339_SIZE];

	time_format_rfc3339((time_t)t, stamp);
	cJSON_AddStringToObject(o, name, stamp);
}

/* Parses JSON the test wrote. */
cJSON *
fixture_parse(const char *text)
{
	cJSON *json = cJSON_Parse(text);

	if (json == NULL)
		fail_msg("bad test JSON: %s", text);
	return json;
}

/* Returns the ReplicaSet object r describes. */
cJSON *
rs_new(const struct rs *r)
{
	const char *name = r->name != NULL ? r->name : "foobar";
	cJSON *rs = cJSON_CreateObject(), *meta, *spec, *sel, *template, *tmeta;
	char *uid = r->uid != NULL ? xstrdup(r->uid) : xasprintf("uid-%s", name);

	cJSON_AddStringToObject(rs, "apiVersion", "apps/v1");
	cJSON_AddStringToObject(rs, "kind", "ReplicaSet");
	meta = cJSON_AddObjectToObject(rs, "metadata");
	cJSON_AddStringToObject(meta, "name", name);
	cJSON_AddStringToObject(meta, "namespace", r->ns != NULL ? r->ns : "default");
	cJSON_AddStringToObject(meta, "uid", uid);
	cJSON_AddStringToObject(meta, "resourceVersion", r->rv != NULL ? r->rv : "18");
	if (r->generation != 0)
		cJSON_AddNumberToObject(meta, "generation", (double)r->generation);
	fixture_add_time(meta, "creationTimestamp", NOW - DAY);
	if (r->deleting != 0)
		fixture_add_time(meta, "deletionTimestamp", r->deleting);
	if (r->controller == NULL || *r->controller != '\0') {
		cJSON *refs = cJSON_AddArrayToObject(meta, "ownerReferences");
		cJSON *ref = cJSON_CreateObject();
		cJSON_AddStringToObject(ref, "apiVersion", "apps/v1");
		cJSON_AddStringToObject(ref, "kind", "Deployment");
		cJSON_AddStringToObject(ref, "name", "deployment");
		cJSON_AddStringToObject(ref, "uid", r->controller != NULL ? r->controller : "123");
		cJSON_AddTrueToObject(ref, "controller");
		cJSON_AddItemToArray(refs, ref);
	}
	spec = cJSON_AddObjectToObject(rs, "spec");
	cJSON_AddNumberToObject(spec, "replicas", r->replicas);
	if (r->min_ready != 0)
		cJSON_AddNumberToObject(spec, "minReadySeconds", r->min_ready);
	if (!r->no_selector) {
		sel = cJSON_AddObjectToObject(spec, "selector");
		cJSON_AddItemToObject(sel, "matchLabels",
		    fixture_parse(r->selector != NULL ? r->selector : "{\"foo\":\"bar\"}"));
	}
	template = cJSON_AddObjectToObject(spec, "template");
	tmeta = cJSON_AddObjectToObject(template, "metadata");
	cJSON_AddItemToObject(tmeta, "labels", fixture_parse(r->template_labels != NULL ?
	    r->template_labels : "{\"name\":\"foo\",\"type\":\"production\"}"));
	cJSON_AddItemToObject(template, "spec", fixture_parse("{\"containers\":[{\"name\":\"c\","
	    "\"image\":\"foo/bar\"}],\"restartPolicy\":\"Always\",\"dnsPolicy\":\"Default\","
	    "\"nodeSelector\":{\"baz\":\"blah\"}}"));
	if (r->status != NULL)
		cJSON_AddItemToObject(rs, "status", fixture_parse(r->status));
	free(uid);
	return rs;
}

/* Returns the pod object p describes. */
cJSON *
pod_new(const struct pod *p)
{
	cJSON *pod = cJSON_CreateObject(), *meta, *spec, *status;
	char *uid = xasprintf("uid-%s", p->name);

	cJSON_AddStringToObject(pod, "apiVersion", "v1");
	cJSON_AddStringToObject(pod, "kind", "Pod");
	meta = cJSON_AddObjectToObject(pod, "metadata");
	cJSON_AddStringToObject(meta, "name", p->name);
	cJSON_AddStringToObject(meta, "namespace", p->ns != NULL ? p->ns : "default");
	cJSON_AddStringToObject(meta, "uid", uid);
	cJSON_AddStringToObject(meta, "resourceVersion", p->rv != NULL ? p->rv : "1");
	if (p->created != 0)
		fixture_add_time(meta, "creationTimestamp", p->created);
	if (p->deleting != 0)
		fixture_add_time(meta, "deletionTimestamp", p->deleting);
	cJSON_AddItemToObject(meta, "labels",
	    fixture_parse(p->labels != NULL ? p->labels : "{\"foo\":\"bar\"}"));
	if (p->cost != NULL) {
		cJSON *annotations = cJSON_AddObjectToObject(meta, "annotations");
		cJSON_AddStringToObject(annotations, "controller.kubernetes.io/pod-deletion-cost",
		    p->cost);
	}
	if (p->owners != NULL) {
		cJSON_AddItemToObject(meta, "ownerReferences", fixture_parse(p->owners));
	} else if (p->owner != NULL) {
		cJSON *refs = cJSON_AddArrayToObject(meta, "ownerReferences");
		cJSON *ref = cJSON_CreateObject();
		char *owner_uid = p->owner_uid != NULL ? xstrdup(p->owner_uid) :
		    xasprintf("uid-%s", p->owner);
		cJSON_AddStringToObject(ref, "apiVersion", "apps/v1");
		cJSON_AddStringToObject(ref, "kind", "ReplicaSet");
		cJSON_AddStringToObject(ref, "name", p->owner);
		cJSON_AddStringToObject(ref, "uid", owner_uid);
		cJSON_AddTrueToObject(ref, "controller");
		cJSON_AddTrueToObject(ref, "blockOwnerDeletion");
		cJSON_AddItemToArray(refs, ref);
		free(owner_uid);
	}
	spec = cJSON_AddObjectToObject(pod, "spec");
	if (p->node != NULL)
		cJSON_AddStringToObject(spec, "nodeName", p->node);
	status = cJSON_AddObjectToObject(pod, "status");
	if (p->phase != NULL)
		cJSON_AddStringToObject(status, "phase", p->phase);
	if (p->ready != NULL) {
		cJSON *conditions = cJSON_AddArrayToObject(status, "conditions");
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", "Ready");
		cJSON_AddStringToObject(c, "status", p->ready);
		if (p->ready_since != 0)
			fixture_add_time(c, "lastTransitionTime", p->ready_since);
		cJSON_AddItemToArray(conditions, c);
	}
	if (p->restarts != 0) {
		cJSON *statuses = cJSON_AddArrayToObject(status, "containerStatuses");
		cJSON *cs = cJSON_CreateObject();
		cJSON_AddStringToObject(cs, "name", "c");
		cJSON_AddNumberToObject(cs, "restartCount", p->restarts);
		cJSON_AddItemToArray(statuses, cs);
	}
	if (p->sidecar_restarts != 0) {
		cJSON *init = cJSON_AddArrayToObject(spec, "initContainers");
		cJSON *statuses = cJSON_AddArrayToObject(status, "initContainerStatuses");
		cJSON *c = cJSON_CreateObject(), *cs = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "name", "sidecar");
		cJSON_AddStringToObject(c, "restartPolicy", "Always");
		cJSON_AddItemToArray(init, c);
		cJSON_AddStringToObject(cs, "name", "sidecar");
		cJSON_AddNumberToObject(cs, "restartCount", p->sidecar_restarts);
		cJSON_AddItemToArray(statuses, cs);
	}
	free(uid);
	return pod;
}

/* Writes object (taken) into r's table. */
void
fixture_upsert(struct fixture *f, const struct resource *r, cJSON *object)
{
	char *error = NULL;

	if (store_upsert_object(f->store, r, object, 1, NULL, NULL, &error) != 0)
		fail_msg("upsert: %s", error);
	cJSON_Delete(object);
}

void
fixture_upsert_text(struct fixture *f, const struct resource *r, const char *text)
{
	char *error = NULL, *body = NULL;
	size_t len = 0;
	cJSON *object = store_parse_object(r, text, strlen(text), &body, &len);

	if (object == NULL)
		fail_msg("not an object's JSON: %s", text);
	if (store_upsert_text(f->store, r, object, body, len, 1, NULL, NULL, &error) != 0)
		fail_msg("upsert: %s", error);
	cJSON_Delete(object);
	free(body);
}

/* Writes the ReplicaSet r describes into the cache. */
void
add_rs(struct fixture *f, const struct rs *r)
{
	fixture_upsert(f, f->replicasets, rs_new(r));
}

/* Writes the pod p describes into the cache. */
void
add_pod(struct fixture *f, const struct pod *p)
{
	fixture_upsert(f, f->pods, pod_new(p));
}

/* Syncs key at now into *r; the sync must not fail. */
void
sync_key(struct fixture *f, const char *key, double now, struct sync_result *r)
{
	char *error = NULL;

	memset(r, 0, sizeof *r);
	if (f->c->type->sync(f->c, key, now, r, &error) != 0)
		fail_msg("sync %s: %s", key, error);
}

/* --- a controller's world --------------------------------------------------------------- */

/* An in-memory store, with a controller of type over it unless type is NULL. */
struct ctl_world *
ctl_world_new(const struct controller_type *type, const struct controller_config *config)
{
	struct ctl_world *w = xcalloc(1, sizeof *w);

	if (store_open(":memory:", NULL, &w->store, &w->error) != 0)
		fail_msg("store_open: %s", w->error);
	if (type != NULL && ctl_start(w, type, config) != 0)
		fail_msg("controller_new: %s", w->error);
	return w;
}

/* Frees w and whatever it holds. */
void
ctl_world_free(struct ctl_world *w)
{
	if (w == NULL)
		return;
	sync_result_clear(&w->result);
	free(w->error);
	cJSON_Delete(w->object);
	ctl_keys_clear(w);
	for (int i = 0; i < w->ntexts; i++)
		free(w->texts[i]);
	free(w->texts);
	controller_free(w->c);
	store_close(w->store);
	free(w);
}

/* Creates w's controller. */
int
ctl_start(struct ctl_world *w, const struct controller_type *type,
    const struct controller_config *config)
{
	w->c = controller_new(type, w->store, config, &w->error);
	return w->c != NULL ? 0 : -1;
}

/* Keeps text for teardown. */
const char *
ctl_keep(struct ctl_world *w, char *text)
{
	w->texts = xrealloc(w->texts, (size_t)(w->ntexts + 1) * sizeof *w->texts);
	w->texts[w->ntexts++] = text;
	return text;
}

/* Writes object (taken) into r's table. */
void
ctl_cache(struct ctl_world *w, const struct resource *r, cJSON *object)
{
	int rc = store_upsert_object(w->store, r, object, 1, NULL, NULL, &w->error);

	cJSON_Delete(object);
	if (rc != 0)
		fail_msg("store_upsert_object %s: %s", r->name,
		    w->error != NULL ? w->error : "refused");
}

/* Removes the object with uid from r's table. */
void
ctl_uncache(struct ctl_world *w, const struct resource *r, const char *uid)
{
	if (store_delete_object(w->store, r, uid, NULL, NULL, &w->error) != 0)
		fail_msg("store_delete_object %s %s: %s", r->name, uid, w->error);
}

/* Marks r's informer synced: a list applied whole. */
void
ctl_listed(struct ctl_world *w, const struct resource *r)
{
	long long epoch;

	if (store_begin_list(w->store, r, &epoch, &w->error) != 0 ||
	    store_finish_list(w->store, r, "1", &w->error) != 0)
		fail_msg("marking %s synced: %s", r->name, w->error);
}

/* Records key, added after seconds (-1: at once); once unless w->every_add. */
static void
ctl_record(struct ctl_world *w, const char *key, double seconds)
{
	for (int i = 0; !w->every_add && i < w->nkeys; i++) {
		if (strcmp(w->keys[i].key, key) == 0)
			return;
	}
	w->keys = xrealloc(w->keys, (size_t)(w->nkeys + 1) * sizeof *w->keys);
	w->keys[w->nkeys].key = xstrdup(key);
	w->keys[w->nkeys++].after = seconds;
}

static void
ctl_record_now(const char *key, void *arg)
{
	ctl_record(arg, key, -1);
}

static void
ctl_record_after(const char *key, double seconds, void *arg)
{
	ctl_record(arg, key, seconds);
}

/* A queue that records keys in w. */
struct controller_queue
ctl_queue(struct ctl_world *w)
{
	struct controller_queue q = { ctl_record_now, ctl_record_after, w };

	return q;
}

/* The keys recorded, comma-separated. */
char *
ctl_keys(const struct ctl_world *w)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < w->nkeys; i++) {
		buf_printf(&b, "%s%s", i > 0 ? "," : "", w->keys[i].key);
		if (w->keys[i].after >= 0)
			buf_printf(&b, " (after %gs)", w->keys[i].after);
	}
	return buf_detach(&b);
}

/* Forgets the keys recorded. */
void
ctl_keys_clear(struct ctl_world *w)
{
	for (int i = 0; i < w->nkeys; i++)
		free(w->keys[i].key);
	free(w->keys);
	w->keys = NULL;
	w->nkeys = 0;
}

/* Fails unless the keys recorded are want; then forgets them. */
void
ctl_keys_expect(struct ctl_world *w, const char *want)
{
	char *got = ctl_keys(w);

	assert_string_equal(got, want);
	free(got);
	ctl_keys_clear(w);
}

/* Records the keys list_keys gives. */
void
ctl_list_keys(struct ctl_world *w)
{
	if (w->c->type->list_keys(w->c, ctl_record_now, w, &w->error) != 0)
		fail_msg("list_keys: %s", w->error);
}

/* Tells the handler of an event at NOW. */
void
ctl_tell(struct ctl_world *w, enum informer_event_type type, const struct resource *r,
    cJSON *object, cJSON *old)
{
	ctl_tell_at(w, type, r, object, old, NOW);
}

void
ctl_tell_at(struct ctl_world *w, enum informer_event_type type, const struct resource *r,
    cJSON *object, cJSON *old, double now)
{
	const struct controller_queue q = ctl_queue(w);
	char *old_body = old != NULL ? cJSON_PrintUnformatted(old) : NULL;
	struct informer_event ev = { type, r, object, old_body };

	cJSON_Delete(old);
	if (w->object != object)
		cJSON_Delete(w->object);
	w->object = object;
	w->c->type->handle_event(w->c, &ev, now, &q);
	free(old_body);
}

/* Syncs key at now into w->result. */
void
ctl_sync(struct ctl_world *w, const char *key, double now)
{
	sync_result_clear(&w->result);
	if (w->c->type->sync(w->c, key, now, &w->result, &w->error) != 0)
		fail_msg("sync %s: %s", key, w->error);
}

/* Compares a description with what a test wants. */
void
assert_described(const char *what, const char *got, const char *want)
{
	if (want == NULL)
		want = "";
	if (strcmp(got, want) != 0)
		fail_msg("%s:\n  got:  %s\n  want: %s", what, got, want);
}

/* --- the fake apiserver ----------------------------------------------------------------- */

/* Returns the part of path after "/namespaces/<ns>/" (or after the last "/v1/"), without
 * the query, and sets *ns to the namespace (malloc'd; "" when none). */
static char *
short_path_of(const char *path, char **ns)
{
	const char *p = strstr(path, "/namespaces/"), *slash, *v1, *query;
	size_t len;

	*ns = xstrdup("");
	if (p != NULL) {
		p += strlen("/namespaces/");
		slash = strchr(p, '/');
		if (slash != NULL) {
			free(*ns);
			*ns = xstrndup(p, (size_t)(slash - p));
			p = slash + 1;
		}
	} else if ((v1 = strstr(path, "/v1/")) != NULL) {
		p = v1 + strlen("/v1/");
	} else {
		p = path;
	}
	query = strchr(p, '?');
	len = query != NULL ? (size_t)(query - p) : strlen(p);
	return xstrndup(p, len);
}

/* The string value of item, or "" when it is not a string. */
static const char *
string_of(const cJSON *item)
{
	return cJSON_IsString(item) ? item->valuestring : "";
}

/* A Status body. */
static char *
status_body(int code, const char *reason, const char *message, const char *cause)
{
	cJSON *st = cJSON_CreateObject(), *details, *causes, *c;
	char *text;

	cJSON_AddStringToObject(st, "kind", "Status");
	cJSON_AddStringToObject(st, "apiVersion", "v1");
	cJSON_AddObjectToObject(st, "metadata");
	cJSON_AddStringToObject(st, "status", "Failure");
	cJSON_AddStringToObject(st, "message", message != NULL ? message : "fake error");
	cJSON_AddStringToObject(st, "reason", reason != NULL ? reason : "InternalError");
	cJSON_AddNumberToObject(st, "code", code);
	if (cause != NULL) {
		details = cJSON_AddObjectToObject(st, "details");
		causes = cJSON_AddArrayToObject(details, "causes");
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "reason", cause);
		cJSON_AddStringToObject(c, "message", message != NULL ? message : "fake error");
		cJSON_AddItemToArray(causes, c);
	}
	text = cJSON_PrintUnformatted(st);
	cJSON_Delete(st);
	return text;
}

/* Sets metadata.member of o to a string, replacing it or adding it. */
static void
set_meta(cJSON *o, const char *member, const char *value)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");

	if (meta == NULL)
		meta = cJSON_AddObjectToObject(o, "metadata");
	cJSON_DeleteItemFromObjectCaseSensitive(meta, member);
	cJSON_AddStringToObject(meta, member, value);
}

/* Gives o the next resourceVersion and answers it with code. */
static void
answer_written(struct fake_apiserver *fake, cJSON *o, int code, struct client_reply *reply)
{
	char rv[32];

	snprintf(rv, sizeof rv, "%lld", fake->next_rv++);
	set_meta(o, "resourceVersion", rv);
	reply->http_code = code;
	reply->body = cJSON_PrintUnformatted(o);
}

/* The cached ReplicaSet ns/name, or NULL. */
static cJSON *
cached_rs(struct fake_apiserver *fake, const char *ns, const char *name)
{
	sqlite3_stmt *stmt;
	cJSON *rs = NULL;

	if (sqlite3_prepare_v2(store_db(fake->f->store), "SELECT body FROM cache_replicasets"
	    " WHERE namespace = ?1 AND name = ?2", -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("fake: %s", sqlite3_errmsg(store_db(fake->f->store)));
	sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		rs = cJSON_Parse((const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	return rs;
}

/* The cached pods of ns as a PodList (the label selector is not applied). */
static cJSON *
cached_pod_list(struct fake_apiserver *fake, const char *ns)
{
	sqlite3_stmt *stmt;
	cJSON *list = cJSON_CreateObject(), *items;

	cJSON_AddStringToObject(list, "apiVersion", "v1");
	cJSON_AddStringToObject(list, "kind", "PodList");
	cJSON_AddObjectToObject(list, "metadata");
	items = cJSON_AddArrayToObject(list, "items");
	if (sqlite3_prepare_v2(store_db(fake->f->store), "SELECT body FROM cache_pods"
	    " WHERE namespace = ?1 ORDER BY name", -1, &stmt, NULL) != SQLITE_OK)
		fail_msg("fake: %s", sqlite3_errmsg(store_db(fake->f->store)));
	sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		cJSON_AddItemToArray(items,
		    cJSON_Parse((const char *)sqlite3_column_text(stmt, 0)));
	sqlite3_finalize(stmt);
	return list;
}

/* Answers a request no fault matched, as an apiserver would. */
static void
answer(struct fake_apiserver *fake, const struct recorded_request *rq, const char *ns,
    struct client_reply *reply)
{
	const char *sp = rq->short_path, *name;
	cJSON *o;
	char *generated;

	if (strncmp(sp, "events", 6) == 0) {
		reply->http_code = strcmp(rq->method, "POST") == 0 ? 201 : 200;
		reply->body = xstrdup(rq->body != NULL ? rq->body : "{}");
		return;
	}
	if (strcmp(sp, "pods") == 0 && strcmp(rq->method, "POST") == 0 && rq->json != NULL) {
		o = cJSON_Duplicate(rq->json, 1);
		name = cJSON_IsString(json_path(o, "metadata.generateName")) ?
		    json_path(o, "metadata.generateName")->valuestring : NULL;
		generated = xasprintf("%s%d", name != NULL ? name : "pod-", fake->next_name++);
		set_meta(o, "name", generated);
		set_meta(o, "namespace", ns);
		free(generated);
		generated = xasprintf("uid-%s", string_of(json_path(o, "metadata.name")));
		set_meta(o, "uid", generated);
		free(generated);
		answer_written(fake, o, 201, reply);
		cJSON_Delete(o);
		return;
	}
	if (strchr(sp, '/') == NULL && strcmp(rq->method, "POST") == 0 && rq->json != NULL) {
		/* Another collection: the object under its own name (or a generated one). */
		o = cJSON_Duplicate(rq->json, 1);
		if (!cJSON_IsString(json_path(o, "metadata.name"))) {
			name = cJSON_IsString(json_path(o, "metadata.generateName")) ?
			    json_path(o, "metadata.generateName")->valuestring : "object-";
			generated = xasprintf("%s%d", name, fake->next_name++);
			set_meta(o, "name", generated);
			free(generated);
		}
		set_meta(o, "namespace", ns);
		generated = xasprintf("uid-%s", string_of(json_path(o, "metadata.name")));
		set_meta(o, "uid", generated);
		free(generated);
		answer_written(fake, o, 201, reply);
		cJSON_Delete(o);
		return;
	}
	if (strcmp(sp, "pods") == 0 && strcmp(rq->method, "GET") == 0) {
		o = cached_pod_list(fake, ns);
		reply->http_code = 200;
		reply->body = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
		return;
	}
	if (strchr(sp, '/') == NULL && strcmp(rq->method, "GET") == 0) {
		/* Another collection: empty. */
		reply->http_code = 200;
		reply->body = xstrdup("{\"kind\":\"List\",\"apiVersion\":\"v1\","
		    "\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}");
		return;
	}
	if (strncmp(sp, "pods/", 5) == 0 && strcmp(rq->method, "PATCH") == 0) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "apiVersion", "v1");
		cJSON_AddStringToObject(o, "kind", "Pod");
		set_meta(o, "name", sp + 5);
		set_meta(o, "namespace", ns);
		answer_written(fake, o, 200, reply);
		cJSON_Delete(o);
		return;
	}
	if (strchr(sp, '/') != NULL && strchr(strchr(sp, '/') + 1, '/') == NULL &&
	    strcmp(rq->method, "PATCH") == 0) {
		/* Another object: just its name and the next resourceVersion. */
		o = cJSON_CreateObject();
		set_meta(o, "name", strchr(sp, '/') + 1);
		set_meta(o, "namespace", ns);
		answer_written(fake, o, 200, reply);
		cJSON_Delete(o);
		return;
	}
	if (strchr(sp, '/') != NULL && strcmp(rq->method, "DELETE") == 0) {
		reply->http_code = 200;
		reply->body = xstrdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		    "\"metadata\":{},\"status\":\"Success\"}");
		return;
	}
	if (strncmp(sp, "replicasets/", 12) == 0 && strcmp(rq->method, "GET") == 0) {
		o = fake->live_rs != NULL ? cJSON_Duplicate(fake->live_rs, 1) :
		    cached_rs(fake, ns, sp + 12);
		if (o == NULL) {
			reply->http_code = 404;
			reply->body = status_body(404, "NotFound", "replicasets not found", NULL);
			return;
		}
		reply->http_code = 200;
		reply->body = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
		return;
	}
	if (strchr(sp, '/') != NULL && strcmp(rq->method, "PUT") == 0 && rq->json != NULL) {
		o = cJSON_Duplicate(rq->json, 1);
		answer_written(fake, o, 200, reply);
		cJSON_Delete(o);
		return;
	}
	reply->http_code = 404;
	reply->body = status_body(404, "NotFound", "the fake apiserver has no such thing", NULL);
}

/* The client's responder: records the request, then answers it with the first fault that
 * matches or as an apiserver would. */
static void
fake_respond(const char *method, const char *path, const char *content_type,
    const char *body, size_t len, struct client_reply *reply, void *arg)
{
	struct fake_apiserver *fake = arg;
	struct recorded_request *rq;
	char *ns;

	(void)len;
	fake->requests = xrealloc(fake->requests,
	    (size_t)(fake->nrequests + 1) * sizeof *fake->requests);
	rq = &fake->requests[fake->nrequests++];
	memset(rq, 0, sizeof *rq);
	rq->method = xstrdup(method);
	rq->path = xstrdup(path);
	rq->short_path = short_path_of(path, &ns);
	rq->content_type = content_type != NULL ? xstrdup(content_type) : NULL;
	rq->body = body != NULL ? xstrdup(body) : NULL;
	rq->json = body != NULL ? cJSON_Parse(body) : NULL;
	if (!event_pending(fake->turn_end, EV_TIMEOUT, NULL)) {
		/* The first request since the loop last turned. */
		fake->turn++;
		event_active(fake->turn_end, EV_TIMEOUT, 0);
	}
	rq->turn = fake->turn;
	if (fake->on_request != NULL)
		fake->on_request(fake, rq, fake->on_request_arg);
	for (int i = 0; i < fake->nfaults; i++) {
		const struct fake_fault *ft = &fake->faults[i];
		int seen;

		if (strcmp(ft->method, method) != 0 ||
		    strncmp(rq->short_path, ft->path, strlen(ft->path)) != 0)
			continue;
		seen = ++fake->fault_seen[i];
		if (seen < ft->first || (ft->last != 0 && seen > ft->last))
			continue;
		reply->http_code = ft->code;
		if (ft->code == 200)
			reply->body = xstrdup(ft->message);	/* a canned answer */
		else if (ft->code != 0)
			reply->body = status_body(ft->code, ft->reason, ft->message, ft->cause);
		goto out;
	}
	answer(fake, rq, ns, reply);
out:
	rq->code = reply->http_code;
	free(ns);
}

/* The loop turned: requests from now on go out in a new turn. */
static void
turn_ended(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/* Creates a loop and a client answered by the fake, over f's cache. */
struct fake_apiserver *
fake_apiserver_new(struct fixture *f)
{
	struct fake_apiserver *fake = xcalloc(1, sizeof *fake);

	fake->f = f;
	fake->base = event_base_new();
	assert_non_null(fake->base);
	fake->client = client_new_responder(fake->base, fake_respond, fake);
	fake->turn_end = event_new(fake->base, -1, 0, turn_ended, fake);
	fake->next_rv = 100;
	return fake;
}

/* Forgets the requests seen so far. */
void
fake_apiserver_clear(struct fake_apiserver *fake)
{
	for (int i = 0; i < fake->nrequests; i++) {
		struct recorded_request *rq = &fake->requests[i];
		free(rq->method);
		free(rq->path);
		free(rq->short_path);
		free(rq->content_type);
		free(rq->body);
		cJSON_Delete(rq->json);
	}
	free(fake->requests);
	fake->requests = NULL;
	fake->nrequests = 0;
}

/* Frees the fake, its client and its loop. */
void
fake_apiserver_free(struct fake_apiserver *fake)
{
	if (fake == NULL)
		return;
	fake_apiserver_clear(fake);
	client_free(fake->client);
	event_free(fake->turn_end);
	event_base_free(fake->base);
	cJSON_Delete(fake->live_rs);
	free(fake->fault_seen);
	free(fake);
}

/* Sets the faults answered before anything else. */
void
fake_apiserver_set_faults(struct fake_apiserver *fake, const struct fake_fault *faults,
    int n)
{
	fake->faults = faults;
	fake->nfaults = n;
	free(fake->fault_seen);
	fake->fault_seen = xcalloc((size_t)n + 1, sizeof *fake->fault_seen);
}

/* Runs the loop until nothing is left to do. */
void
fake_apiserver_run(struct fake_apiserver *fake)
{
	if (event_base_dispatch(fake->base) < 0)
		fail_msg("event_base_dispatch failed");
}

/* The requests seen, events left out, as "METHOD short/path;...". */
char *
fake_apiserver_requests(const struct fake_apiserver *fake)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < fake->nrequests; i++) {
		const struct recorded_request *rq = &fake->requests[i];
		if (strncmp(rq->short_path, "events", 6) == 0)
			continue;
		buf_printf(&b, "%s%s %s", b.len > 0 ? ";" : "", rq->method, rq->short_path);
	}
	return buf_detach(&b);
}

/* The sizes of the turns' groups of requests of method on path, as "1,2,4". */
char *
fake_apiserver_batches(const struct fake_apiserver *fake, const char *method,
    const char *path)
{
	struct buf b;
	int turn = -1, n = 0;

	buf_init(&b);
	for (int i = 0; i <= fake->nrequests; i++) {
		const struct recorded_request *rq = i < fake->nrequests ? &fake->requests[i] :
		    NULL;
		if (rq != NULL && (strcmp(rq->method, method) != 0 ||
		    strncmp(rq->short_path, path, strlen(path)) != 0))
			continue;
		if (n > 0 && (rq == NULL || rq->turn != turn)) {
			buf_printf(&b, "%s%d", b.len > 0 ? "," : "", n);
			n = 0;
		}
		if (rq != NULL) {
			turn = rq->turn;
			n++;
		}
	}
	return buf_detach(&b);
}

/* Counts the requests of method whose short path starts with path. */
int
fake_apiserver_count(const struct fake_apiserver *fake, const char *method,
    const char *path)
{
	int n = 0;

	for (int i = 0; i < fake->nrequests; i++) {
		const struct recorded_request *rq = &fake->requests[i];
		n += strcmp(rq->method, method) == 0 &&
		    strncmp(rq->short_path, path, strlen(path)) == 0;
	}
	return n;
}

/* The events POSTed, as "type reason: message;...". */
char *
fake_apiserver_events(const struct fake_apiserver *fake)
{
	struct buf b;

	buf_init(&b);
	for (int i = 0; i < fake->nrequests; i++) {
		const struct recorded_request *rq = &fake->requests[i];
		if (strcmp(rq->method, "POST") != 0 || strcmp(rq->short_path, "events") != 0)
			continue;
		buf_printf(&b, "%s%s %s: %s", b.len > 0 ? ";" : "",
		    string_of(json_path(rq->json, "type")),
		    string_of(json_path(rq->json, "reason")),
		    string_of(json_path(rq->json, "message")));
	}
	return buf_detach(&b);
}
