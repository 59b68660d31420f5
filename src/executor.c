/*
 * executor.c - carries out a sync's result against the apiserver.
 *
 * A sync decides; the executor acts, asynchronously, on the one loop. For one result:
 *
 *   confirm ─▶ recheck ─▶ claims ─▶ writes ─▶ expectations ─▶ creations (slow start) ─▶ status
 *   (GETs)     (GET owner) (patches) (in order) (committed)   or deletions (at once)    (PUT)
 *
 * - Objects the sync takes for gone because the cache does not have them (the garbage
 *   collector's absent owners) are read live first, all at once: NotFound, or an object
 *   of another uid under that name, confirms it; finding it ends the execution with an
 *   error, so the key comes back with backoff, when the cache has caught up. The newest
 *   confirmed uids are remembered (a uid is never reused), as kube's absentOwnerCache.
 * - Before the first adoption, a live GET of the owner must show the same uid and no
 *   deletionTimestamp: the cache may not know yet that the owner is going, and adopting
 *   pods then would keep them from the garbage collector. Claims go out together. Any
 *   failure but NotFound ends the execution with an error (requeue with backoff); an
 *   adoption that finds its pod gone means the sync counted a pod that is not there, so
 *   the key is synced again at once instead of acting on that count.
 * - Writes to other objects (a Deployment's ReplicaSets) go one at a time, in the order the
 *   sync put them, as kube's syncs make them; the first failure ends the execution with
 *   an error, before the status, unless the write reports its failure in the status (it
 *   has an error_prefix): then the status's failure body goes out. A creation refused
 *   because the namespace is being deleted ends the execution without an error.
 * - The expectations for the creations or deletions are written and committed before the
 *   first request is sent: a process killed after sending knows, when it starts again,
 *   what it asked for, and waits for it instead of asking twice.
 * - Creations go in batches of 1, 2, 4, ...; a batch with a failure stops the rest, and
 *   every creation that was not made (failed or never sent) lowers the expectations, so
 *   the next sync is not held back by pods that will never appear. A creation refused
 *   because the namespace is being deleted counts as done. Deletions go out together; a
 *   failure lowers the expectation for that pod, and NotFound is success.
 * - The status goes last: the sync's status if everything worked, else the one with the
 *   ReplicaFailure condition. On a failure it is read again from the apiserver and sent
 *   once more, as kube does.
 * - The resourceVersions returned by creations, adoptions and status updates are recorded
 *   (consistency.c), so the owner is not synced again before the cache shows them.
 *
 * - A bookkeeping write that fails on the store marks the outcome store_failed: the key is
 *   held until the store writes again rather than backed off (manager.c).
 * - Once the executor is stopped (the daemon is shutting down), no further creation batch
 *   goes out: the requests in flight finish, the creations not sent lower the
 *   expectations as failed ones do, and the status follows.
 *
 * Events are recorded for the owner on each creation and deletion, with the reasons and
 * words the action carries (the controller's: kube's SuccessfulCreate, FailedDelete, ...),
 * as kube-controller-manager's pod control records them; the executor names no kind.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "client.h"
#include "consistency.h"
#include "controller.h"
#include "kubeevents.h"
#include "executor.h"
#include "expectations.h"
#include "informer.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "registry.h"
#include "resource.h"
#include "restops.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

/* How often a failed status update is read again and retried (kube's statusUpdateRetries). */
#define STATUS_UPDATE_RETRIES 1

enum phase { PHASE_RECHECK, PHASE_CLAIMS, PHASE_WRITES, PHASE_MANAGE, PHASE_STATUS, PHASE_DONE };

struct execution {
	struct executor *e;
	struct controller *c;
	struct sync_result r;
	executor_done_cb done;
	void *arg;
	enum phase phase;
	int pending;			/* requests of the current step in flight */
	int failed;			/* an error that ends in a backoff */
	int store_failed;		/* a bookkeeping write failed on the store */
	int retry_now;
	char **errors;			/* the creations', deletions' and writes' failures,
					   in order (for the status's body_on_failure) */
	int nerrors;
	int next;			/* the next manage action to send */
	int next_write;			/* the next write to send */
	int writes_stopped;		/* no more writes: one failed, or the namespace is
					   going */
	int writes_failed;		/* a write failed */
	int reviews_denied;		/* reviews that answered no */
	int review_allowed;		/* a review said yes: its write is the last one */
	int review_last;		/* that write's index */
	const struct resource *writes_skipped;	/* a write of it failed: the writes of
					   it next in line are skipped */
	int batch;			/* the size of the last creation batch */
	int batch_failed;
	int created;			/* creations that succeeded (or need not be made) */
	int status_tries;
	int skip_status;		/* the namespace is going: no status to write */
	int recheck_sent;		/* the owner's live read is out or done */
	int events_sent;		/* the sync's own events are recorded */
	struct event *finish_event;
	TAILQ_HEAD(, request) requests;	/* in flight */
	TAILQ_ENTRY(execution) link;
};

/* One request of an execution. */
struct request {
	struct execution *x;
	enum { REQUEST_ACTION, REQUEST_RECHECK, REQUEST_REREAD, REQUEST_CONFIRM,
		REQUEST_READ_FOR_WRITE } kind;
	struct action *action;
	struct restops_request *req;
	TAILQ_ENTRY(request) link;	/* in x->requests */
};

/* How many uids confirmed absent the executor remembers (kube's absentOwnerCache keeps
 * 500 owners). */
#define ABSENT_MEMORY 1024

struct executor {
	struct event_base *base;
	struct client *client;
	struct store *store;
	struct informer_set *informers;
	struct kubeevents *const *events;	/* per controller type, or NULL */
	struct client **clients;	/* per controller type, or NULL: client */
	TAILQ_HEAD(, execution) executions;
	int count;
	int stopping;			/* send no further creation batch */
	/* uids live reads found absent, the newest ABSENT_MEMORY of them: a uid is never
	 * given to another object, so an absence once confirmed holds for good, and the
	 * thousand dependents of one deleted owner need one read of it, not a thousand. */
	char *absent[ABSENT_MEMORY];
	int absent_next;
};

static void execution_step(struct execution *x);

/* --- bookkeeping writes ---------------------------------------------------------------- */

/* Opens a transaction of the executor's own for x, after the informers' pending one.
 * Every bookkeeping failure is the store's: it marks x store_failed, so that its key
 * waits for the store to recover instead of backing off. */
static int
bookkeeping_begin(struct execution *x)
{
	char *error = NULL;

	informer_set_commit(x->e->informers);
	if (store_begin(x->e->store, &error) != 0) {
		log_error("executor: %s", error);
		free(error);
		x->store_failed = 1;
		return -1;
	}
	return 0;
}

static int
bookkeeping_commit(struct execution *x)
{
	char *error = NULL;

	if (store_commit(x->e->store, &error) != 0) {
		log_error("executor: committing bookkeeping: %s", error);
		free(error);
		store_rollback(x->e->store);
		x->store_failed = 1;
		return -1;
	}
	return 0;
}

/* Logs a bookkeeping write's failure and rolls it back; the five-minute expectations
 * timeout bounds what a lost write can hold back. */
static void
bookkeeping_failed(struct execution *x, const char *what, char *error)
{
	log_error("%s %s: recording %s: %s", x->r.controller, x->r.key, what, error);
	free(error);
	store_rollback(x->e->store);
	x->store_failed = 1;
}

/* Records that a write for x's owner returned object (its resourceVersion). */
static void
record_write(struct execution *x, const struct resource *r, const cJSON *object)
{
	const cJSON *rv = json_path(object, "metadata.resourceVersion");
	char *error = NULL;

	if (!cJSON_IsString(rv) || x->r.owner_uid == NULL)
		return;
	if (bookkeeping_begin(x) != 0)
		return;
	if (consistency_wrote_at(x->c->writes, x->r.key, x->r.owner_uid, r->name,
	    rv->valuestring, &error) != 0) {
		bookkeeping_failed(x, "a write", error);
		return;
	}
	bookkeeping_commit(x);
}

/* Lowers x's expectations for a creation that will not be observed, or for a deletion. */
static void
lower_expectations(struct execution *x, const struct action *a, int count)
{
	char *error = NULL, *object_key;

	if (count <= 0 || bookkeeping_begin(x) != 0)
		return;
	for (int i = 0; i < count && error == NULL; i++) {
		if (a->type == ACTION_CREATE) {
			expectations_creation_observed(x->c->expectations, x->r.key, &error);
		} else {
			object_key = xasprintf("%s/%s", a->namespace, a->name);
			expectations_deletion_observed(x->c->expectations, x->r.key, object_key,
			    &error);
			free(object_key);
		}
	}
	if (error != NULL) {
		bookkeeping_failed(x, "an expectation", error);
		return;
	}
	bookkeeping_commit(x);
}

/* Sets the expectations for x's creations or deletions, committed before any is sent. */
static int
set_expectations(struct execution *x, double now)
{
	char *error = NULL;

	if (bookkeeping_begin(x) != 0)
		return -1;
	if (controller_record_result(x->c, &x->r, now, &error) != 0) {
		bookkeeping_failed(x, "expectations", error);
		return -1;
	}
	return bookkeeping_commit(x);
}

/* --- events ---------------------------------------------------------------------------- */

/* Records an event about object (of resource), from x's controller's recorder. */
static void
object_event(struct execution *x, const struct resource *resource, const cJSON *object,
    const char *type, const char *reason, const char *message)
{
	struct kubeevents *rec = NULL;

	for (int i = 0; x->e->events != NULL && i < controller_type_count; i++) {
		if (controller_types[i] == x->c->type)
			rec = x->e->events[i];
	}
	if (rec == NULL || object == NULL)
		return;
	kubeevents_event_object(rec, resource, object, type, reason, "%s", message);
}

/* Records an event about x's owner. */
static void
owner_event(struct execution *x, const char *type, const char *reason, const char *message)
{
	object_event(x, x->r.owner_resource, x->r.owner, type, reason, message);
}

/* --- requests -------------------------------------------------------------------------- */

static void request_done(struct restops_result *res, void *arg);

/* The client x's controller sends through. */
static struct client *
execution_client(const struct execution *x)
{
	for (int i = 0; x->e->clients != NULL && i < controller_type_count; i++) {
		if (controller_types[i] == x->c->type && x->e->clients[i] != NULL)
			return x->e->clients[i];
	}
	return x->e->client;
}

/* Sends a request of kind for x: action a with body (which may differ from a->body), or
 * a GET of the owner; 0 if sent. */
static int
request_send(struct execution *x, int kind, struct action *a, const cJSON *body)
{
	struct request *rq = xcalloc(1, sizeof *rq);
	struct client *client = execution_client(x);
	struct restops_request *req = NULL;
	char *text = body != NULL ? cJSON_PrintUnformatted(body) : NULL;
	char *error = NULL, *namespace = NULL;
	const char *name = NULL, *slash;

	rq->x = x;
	rq->kind = kind;
	rq->action = a;
	if (kind == REQUEST_CONFIRM && a->name == NULL) {
		req = restops_list(client, a->resource, a->namespace,
		    a->confirm_counts != NULL ? 0 : 1, request_done, rq,
		    &error);
	} else if (kind == REQUEST_CONFIRM || kind == REQUEST_READ_FOR_WRITE) {
		req = restops_get(client, a->resource, a->namespace, a->name, request_done, rq,
		    &error);
	} else if (kind != REQUEST_ACTION) {
		/* The owner: the object the status action names (a key need not be its
		 * namespace/name), else by its key. */
		if (kind == REQUEST_REREAD && x->r.status != NULL && x->r.status->name != NULL) {
			namespace = x->r.status->namespace != NULL &&
			    *x->r.status->namespace != '\0' ? xstrdup(x->r.status->namespace) : NULL;
			name = x->r.status->name;
		} else {
			slash = strchr(x->r.key, '/');
			namespace = slash != NULL ?
			    xstrndup(x->r.key, (size_t)(slash - x->r.key)) : NULL;
			name = slash != NULL ? slash + 1 : x->r.key;
		}
		req = restops_get(client, x->r.owner_resource, namespace, name, request_done, rq,
		    &error);
	} else {
		switch (a->type) {
		case ACTION_CREATE:
			req = restops_create(client, a->resource, a->namespace, text, request_done,
			    rq, &error);
			break;
		case ACTION_DELETE:
			req = restops_delete_graced(client, a->resource, a->namespace, a->name,
			    a->uid, a->precondition_rv, a->propagation, a->delete_now ? 0 : -1,
			    request_done, rq, &error);
			break;
		case ACTION_DELETE_COLLECTION:
			req = restops_delete_collection(client, a->resource, a->namespace,
			    a->propagation, request_done, rq, &error);
			break;
		case ACTION_PATCH:
			if (a->field_manager != NULL) {
				req = restops_apply_subresource(client, a->resource,
				    a->namespace, a->name, a->subresource, a->field_manager, 1,
				    text, request_done, rq, &error);
				break;
			}
			req = a->subresource != NULL ? restops_patch_subresource(client,
			    a->resource, a->namespace, a->name, a->subresource, a->merge_patch ?
			    RESTOPS_PATCH_MERGE : RESTOPS_PATCH_STRATEGIC, text, request_done, rq,
			    &error) : restops_patch(client, a->resource, a->namespace, a->name,
			    a->merge_patch ? RESTOPS_PATCH_MERGE : RESTOPS_PATCH_STRATEGIC, text,
			    request_done, rq, &error);
			break;
		case ACTION_GET:
			req = restops_get(client, a->resource, a->namespace, a->name, request_done,
			    rq, &error);
			break;
		case ACTION_UPDATE_STATUS:
			req = restops_update_status(client, a->resource, a->namespace, a->name,
			    text, request_done, rq, &error);
			break;
		case ACTION_UPDATE:
			req = a->subresource != NULL ? restops_update_subresource(client,
			    a->resource, a->namespace, a->name, a->subresource, text, request_done,
			    rq, &error) : restops_update(client, a->resource, a->namespace, a->name,
			    text, request_done, rq, &error);
			break;
		}
	}
	free(text);
	free(namespace);
	if (req == NULL) {
		log_error("%s %s: cannot send %s: %s", x->r.controller, x->r.key,
		    a != NULL ? a->verb : "a read of the owner", error);
		free(error);
		free(rq);
		return -1;
	}
	rq->req = req;
	TAILQ_INSERT_TAIL(&x->requests, rq, link);
	x->pending++;
	return 0;
}

/* True when uid was confirmed absent before. */
static int
absent_known(const struct executor *e, const char *uid)
{
	for (int i = 0; uid != NULL && i < ABSENT_MEMORY && e->absent[i] != NULL; i++) {
		if (strcmp(e->absent[i], uid) == 0)
			return 1;
	}
	return 0;
}

/* Remembers that uid is absent, forgetting the oldest. */
static void
absent_note(struct executor *e, const char *uid)
{
	if (uid == NULL || absent_known(e, uid))
		return;
	free(e->absent[e->absent_next]);
	e->absent[e->absent_next] = xstrdup(uid);
	e->absent_next = (e->absent_next + 1) % ABSENT_MEMORY;
}

/* A live list that must find the namespace holding none of its resource. A resource that
 * is gone (404) or takes no list (405) holds nothing. */
static void
confirm_empty_done(struct execution *x, const struct action *a, struct restops_result *res)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(res->object, "items"), *item;
	int held = 0;

	if (res->status.reason == API_NOT_FOUND || res->status.reason == API_METHOD_NOT_ALLOWED)
		return;
	if (res->status.reason != API_OK || !cJSON_IsArray(items)) {
		log_warning("%s %s: cannot confirm that %s holds no %s: %s", x->r.controller,
		    x->r.key, a->namespace, a->resource->name, res->status.reason != API_OK ?
		    res->status.message : "the answer has no items");
		x->failed = 1;
		return;
	}
	cJSON_ArrayForEach(item, items) {
		if (a->confirm_counts == NULL || a->confirm_counts(item, a->body) != 0) {
			held = 1;
			break;
		}
	}
	if (held) {
		log_v(2, "%s %s: %s still holds %s%s: the cache lags; not acting on it",
		    x->r.controller, x->r.key, a->namespace, a->confirm_counts != NULL ?
		    "one of its " : "", a->resource->name);
		x->failed = 1;
	}
}

/* A live read that must find its object absent. */
static void
confirm_done(struct execution *x, const struct action *a, struct restops_result *res)
{
	const cJSON *uid = json_path(res->object, "metadata.uid");

	if (a->name == NULL) {
		confirm_empty_done(x, a, res);
		return;
	}
	if (res->status.reason == API_NOT_FOUND) {
		absent_note(x->e, a->uid);
		return;
	}
	if (res->status.reason != API_OK) {
		log_warning("%s %s: cannot confirm that %s %s%s%s is gone: %s", x->r.controller,
		    x->r.key, a->resource->kind, a->namespace != NULL ? a->namespace : "",
		    a->namespace != NULL && *a->namespace != '\0' ? "/" : "", a->name,
		    res->status.message);
		x->failed = 1;
	} else if (a->uid == NULL || (cJSON_IsString(uid) && strcmp(uid->valuestring,
	    a->uid) == 0)) {
		/* The same object, or (a read without a uid: a node the cache never had)
		 * any object of that name. */
		log_v(2, "%s %s: %s %s%s%s exists: the cache lags; not acting on its absence",
		    x->r.controller, x->r.key, a->resource->kind,
		    a->namespace != NULL ? a->namespace : "",
		    a->namespace != NULL && *a->namespace != '\0' ? "/" : "", a->name);
		x->failed = 1;
	} else {
		/* Another uid under that name: the object referred to is gone all the same. */
		absent_note(x->e, a->uid);
	}
}

/* The live owner read before adopting: it must be the same owner, not being deleted. */
static void
recheck_done(struct execution *x, struct restops_result *res)
{
	const cJSON *uid = json_path(res->object, "metadata.uid");
	const cJSON *deleting = json_path(res->object, "metadata.deletionTimestamp");

	if (res->status.reason != API_OK) {
		log_warning("%s %s: cannot adopt: reading the owner: %s", x->r.controller,
		    x->r.key, res->status.message);
		x->failed = 1;
	} else if (!cJSON_IsString(uid) || x->r.owner_uid == NULL ||
	    strcmp(uid->valuestring, x->r.owner_uid) != 0) {
		log_warning("%s %s: cannot adopt: the owner was replaced (uid %s, wanted %s)",
		    x->r.controller, x->r.key, cJSON_IsString(uid) ? uid->valuestring : "none",
		    x->r.owner_uid != NULL ? x->r.owner_uid : "none");
		x->failed = 1;
	} else if (deleting != NULL && !cJSON_IsNull(deleting)) {
		log_warning("%s %s: cannot adopt: the owner is being deleted", x->r.controller,
		    x->r.key);
		x->failed = 1;
	}
}

static void
claim_done(struct execution *x, struct action *a, struct restops_result *res)
{
	enum api_reason reason = res->status.reason;

	if (reason == API_OK) {
		log_v(2, "%s %s: %s %s %s/%s", x->r.controller, x->r.key,
		    strcmp(a->verb, "adopt") == 0 ? "adopted" : "released", a->resource->name,
		    a->namespace, a->name);
		/* An adopted object must be in the cache before the next sync; a released
		 * one is no longer the owner's concern. */
		if (strcmp(a->verb, "adopt") == 0)
			record_write(x, a->resource, res->object);
		return;
	}
	if (strcmp(a->verb, "adopt") == 0 && reason == API_NOT_FOUND) {
		/* The object the sync counted is gone: count again. */
		x->retry_now = 1;
		return;
	}
	if (strcmp(a->verb, "release") == 0 &&
	    (reason == API_NOT_FOUND || reason == API_INVALID))
		return;	/* gone, or no longer ours: nothing to release */
	log_warning("%s %s: cannot %s %s %s/%s: %s", x->r.controller, x->r.key, a->verb,
	    a->resource->name, a->namespace, a->name, res->status.message);
	x->failed = 1;
}

/* Records a failure for the status to report. */
static void
manage_error_set(struct execution *x, const char *message)
{
	x->errors = xrealloc(x->errors, ((size_t)x->nerrors + 1) * sizeof *x->errors);
	x->errors[x->nerrors++] = xstrdup(message);
}

/* Records the event of a's outcome for the owner: done (text: the object's name) or
 * failed (text: the error), in the action's words. */
static void
action_event(struct execution *x, const struct action *a, int done, const char *text)
{
	const char *reason = done ? a->done_reason : a->failed_reason;
	char *message;

	if (reason == NULL)
		return;
	if (a->event_on_target) {
		message = done && a->done_message != NULL ? xstrdup(a->done_message) :
		    !done && a->failed_message != NULL ?
		    xasprintf("%s%s", a->failed_message, text) :
		    xasprintf("%s%s", (done ? a->done_prefix : a->failed_prefix) != NULL ?
		    (done ? a->done_prefix : a->failed_prefix) : "", text);
		object_event(x, a->resource, a->body, !done ? EVENT_TYPE_WARNING :
		    a->done_type != NULL ? a->done_type : EVENT_TYPE_NORMAL, reason, message);
		free(message);
		return;
	}
	if (done && a->done_message != NULL) {
		owner_event(x, EVENT_TYPE_NORMAL, reason, a->done_message);
		return;
	}
	if (!done && a->failed_message != NULL) {
		message = xasprintf("%s%s", a->failed_message, text);
		owner_event(x, EVENT_TYPE_WARNING, reason, message);
		free(message);
		return;
	}
	message = xasprintf("%s%s", (done ? a->done_prefix : a->failed_prefix) != NULL ?
	    (done ? a->done_prefix : a->failed_prefix) : "", text);
	owner_event(x, done ? EVENT_TYPE_NORMAL : EVENT_TYPE_WARNING, reason, message);
	free(message);
}

/* Sets the failure the status reports, in the action's words. */
static void
action_error_set(struct execution *x, const struct action *a, const char *error)
{
	char *message = xasprintf("%s%s", a->error_prefix != NULL ? a->error_prefix : "", error);

	manage_error_set(x, message);
	free(message);
}

/*
 * A creation or deletion that got no answer (the connection broke after the request went
 * out) may have been carried out. Its expectation is dropped as kube drops it, so the
 * controller must not act again before its cache can show the outcome: the informer of
 * that resource syncs again from the stored state, and the controllers that read it wait
 * (pods created by requests whose answers were lost arrive with that sync).
 */
static void
answer_lost(struct execution *x, const struct action *a, const struct restops_result *res)
{
	char *why;

	if (res->transport_error == NULL || x->e->informers == NULL)
		return;
	why = xasprintf("a %s of %s got no answer (%s)",
	    a->type == ACTION_CREATE ? "creation" : "deletion", a->resource->name,
	    res->transport_error);
	informer_set_resync(x->e->informers, a->resource, why);
	free(why);
}

static void
create_done(struct execution *x, struct action *a, struct restops_result *res)
{
	const cJSON *name = json_path(res->object, "metadata.name");

	if (res->status.reason == API_OK) {
		x->created++;
		action_event(x, a, 1, cJSON_IsString(name) ? name->valuestring : "?");
		record_write(x, a->resource, res->object);
		return;
	}
	if (api_status_is_namespace_terminating(&res->status)) {
		/* The namespace is going: so will the owner. Not a failure, no event. */
		x->created++;
		return;
	}
	action_event(x, a, 0, res->status.message);
	log_warning("%s %s: creating %s in %s: %s", x->r.controller, x->r.key,
	    a->resource->name, a->namespace, res->status.message);
	action_error_set(x, a, res->status.message);
	x->batch_failed = 1;
	answer_lost(x, a, res);
}

static void
delete_done(struct execution *x, struct action *a, struct restops_result *res)
{
	if (res->status.reason == API_OK) {
		/* Not recorded as a write: the deletion expectations cover it. */
		action_event(x, a, 1, a->name);
		return;
	}
	/* The deletion will not be observed as asked for: stop waiting for it. */
	lower_expectations(x, a, 1);
	answer_lost(x, a, res);
	if (res->status.reason == API_NOT_FOUND)
		return;	/* already gone: what we wanted */
	action_event(x, a, 0, res->status.message);
	log_warning("%s %s: deleting %s %s/%s: %s", x->r.controller, x->r.key,
	    a->resource->name, a->namespace, a->name, res->status.message);
	action_error_set(x, a, res->status.message);
}

/* One write is back: record it, or stop the writes. */
static void
write_done(struct execution *x, struct action *a, struct restops_result *res)
{
	const cJSON *name = json_path(res->object, "metadata.name");

	int deletes = a->type == ACTION_DELETE || a->type == ACTION_DELETE_COLLECTION;

	/* A collection delete the resource does not take (405) is not a failure: a sync
	 * that was not sure of it follows it with the deletes of each object (the namespace
	 * controller, as kube's deleteCollection gives way to deleteEachItem). */
	if (a->type == ACTION_DELETE_COLLECTION &&
	    res->status.reason == API_METHOD_NOT_ALLOWED) {
		log_v(2, "%s %s: %s takes no collection delete", x->r.controller, x->r.key,
		    a->resource->name);
		return;
	}
	if (a->type == ACTION_DELETE && a->not_allowed_ok &&
	    res->status.reason == API_METHOD_NOT_ALLOWED) {
		log_v(2, "%s %s: %s %s/%s takes no delete", x->r.controller, x->r.key,
		    a->resource->name, a->namespace, a->name);
		return;
	}
	if (a->review && res->status.reason == API_OK) {
		if (cJSON_IsTrue(json_path(res->object, "status.allowed"))) {
			log_v(2, "%s %s: %s: allowed", x->r.controller, x->r.key, a->verb);
			x->review_allowed = 1;
			x->review_last = x->next_write;
		} else {
			log_v(2, "%s %s: %s: not allowed%s%s", x->r.controller, x->r.key, a->verb,
			    *json_string(res->object, "status.reason") != '\0' ? ": " : "",
			    json_string(res->object, "status.reason"));
			x->reviews_denied++;
			x->next_write++;	/* the write it would have allowed */
		}
		return;
	}
	if (res->status.reason == API_OK || (deletes && res->status.reason == API_NOT_FOUND) ||
	    (a->exists_ok && res->status.reason == API_ALREADY_EXISTS)) {
		log_v(2, "%s %s: %s %s %s/%s", x->r.controller, x->r.key, a->verb,
		    a->resource->name, a->namespace, a->name != NULL ? a->name : "?");
		action_event(x, a, 1, cJSON_IsString(name) ? name->valuestring :
		    a->name != NULL ? a->name : "?");
		if (!deletes)
			record_write(x, a->resource, res->object);
		metrics_counter_add(a->count_done, 1);
		for (int i = 0; i < ACTION_ADD_DONE; i++)
			metrics_counter_add(a->add_done[i], a->add_by[i]);
		return;
	}
	metrics_counter_add(a->count_failed[0], 1);
	metrics_counter_add(a->count_failed[1], 1);
	x->writes_failed = 1;
	if (a->failure_stops_nothing)
		;
	else if (a->failure_goes_on)
		x->writes_skipped = a->resource;
	else
		x->writes_stopped = 1;
	if (a->type == ACTION_CREATE && api_status_is_namespace_terminating(&res->status)) {
		/* The namespace is going, and the owner with it: stop, without an error, and
		 * without looking again later. */
		x->writes_stopped = 1;
		x->skip_status = 1;
		x->r.requeue_after = 0;
		return;
	}
	log_warning("%s %s: cannot %s %s %s/%s: %s", x->r.controller, x->r.key, a->verb,
	    a->resource->name, a->namespace, a->name != NULL ? a->name : "?",
	    res->status.message);
	/* An object that exists already is the cache lagging, not a failure to report
	 * (kube records no event for it either). */
	if (res->status.reason != API_ALREADY_EXISTS)
		action_event(x, a, 0, res->status.message);
	if (a->error_prefix != NULL && res->status.reason != API_ALREADY_EXISTS &&
	    res->status.reason != API_CONFLICT)
		action_error_set(x, a, res->status.message);
	else
		x->failed = 1;
}

/* A read_modify_write update's object is back: PUT it with the action's changes, or fail
 * the write as the read failed. */
static void
read_for_write_done(struct execution *x, struct action *a, struct restops_result *res)
{
	cJSON *object;

	if (res->status.reason != API_OK || !cJSON_IsObject(res->object)) {
		write_done(x, a, res);
		return;
	}
	object = json_merge_patch(restops_take_object(res), a->body);
	if (request_send(x, REQUEST_ACTION, a, object) != 0) {
		x->writes_stopped = 1;
		x->failed = 1;
	}
	cJSON_Delete(object);
}

/* Records the sync's own events, about its owner or other objects, once. */
static void
execution_events(struct execution *x)
{
	if (x->events_sent)
		return;
	x->events_sent = 1;
	for (int i = 0; i < x->r.nevents; i++) {
		const struct sync_event *ev = &x->r.events[i];

		if (ev->object != NULL)
			object_event(x, ev->resource, ev->object, ev->type, ev->reason,
			    ev->message);
		else
			owner_event(x, ev->type, ev->reason, ev->message);
	}
}

/* Sends the next write; 0 if one was sent. */
static int
write_send(struct execution *x)
{
	struct action *a;

	for (;;) {
		if (x->writes_stopped || x->next_write >= x->r.nwrites ||
		    (x->review_allowed && x->next_write > x->review_last))
			return -1;
		a = &x->r.writes[x->next_write];
		if (x->writes_failed && !a->failure_goes_on) {
			x->writes_stopped = 1;
			return -1;
		}
		x->next_write++;
		if (a->resource != x->writes_skipped)
			break;
		log_v(2, "%s %s: skipping %s %s after its failure", x->r.controller, x->r.key,
		    a->verb, a->resource->name);
	}
	x->writes_skipped = NULL;
	if (request_send(x, a->read_modify_write && a->type == ACTION_UPDATE ?
	    REQUEST_READ_FOR_WRITE : REQUEST_ACTION, a, a->body) == 0)
		return 0;
	x->writes_stopped = 1;
	x->failed = 1;
	return -1;
}

/* The status to send: the sync's, or the failure one. NULL: nothing to send. */
static cJSON *
status_body(struct execution *x)
{
	struct action *a = x->r.status;

	if (x->nerrors > 0 && a->body_on_failure != NULL)
		return a->body_on_failure(a, (const char *const *)x->errors, x->nerrors);
	return a->body != NULL ? cJSON_Duplicate(a->body, 1) : NULL;
}

/* The owner, read again after a failed status update: send the status over it once more. */
static void
status_reread_done(struct execution *x, struct restops_result *res)
{
	cJSON *fresh, *body, *status;

	if (res->status.reason != API_OK || res->object == NULL ||
	    (body = status_body(x)) == NULL) {
		log_warning("%s %s: updating the status: reading the owner again: %s",
		    x->r.controller, x->r.key, res->status.message);
		x->failed = 1;
		return;
	}
	fresh = restops_take_object(res);
	status = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(body, "status"), 1);
	/* An owner read back without a status (none was ever written) gets one. */
	if (status != NULL && !cJSON_ReplaceItemInObjectCaseSensitive(fresh, "status", status))
		cJSON_AddItemToObject(fresh, "status", status);
	x->status_tries++;
	if (request_send(x, REQUEST_ACTION, x->r.status, fresh) != 0)
		x->failed = 1;
	cJSON_Delete(fresh);
	cJSON_Delete(body);
}

static void
status_done(struct execution *x, struct action *a, struct restops_result *res)
{
	if (res->status.reason == API_OK) {
		record_write(x, a->resource, res->object);
		return;
	}
	if (res->status.reason != API_NOT_FOUND && !a->status_no_retry &&
	    x->status_tries <= STATUS_UPDATE_RETRIES) {
		log_v(2, "%s %s: the status update failed (%s); reading the owner again",
		    x->r.controller, x->r.key, res->status.message);
		if (request_send(x, REQUEST_REREAD, NULL, NULL) != 0)
			x->failed = 1;
		return;
	}
	/* NotFound: the owner is gone, and its deletion event syncs the key again. */
	log_warning("%s %s: updating the status: %s", x->r.controller, x->r.key,
	    res->status.message);
	x->failed = 1;
}

static void
request_done(struct restops_result *res, void *arg)
{
	struct request *rq = arg;
	struct execution *x = rq->x;

	TAILQ_REMOVE(&x->requests, rq, link);
	x->pending--;
	if (rq->kind == REQUEST_RECHECK) {
		recheck_done(x, res);
		goto next;
	}
	if (rq->kind == REQUEST_REREAD) {
		status_reread_done(x, res);
		goto next;
	}
	if (rq->kind == REQUEST_CONFIRM) {
		confirm_done(x, rq->action, res);
		goto next;
	}
	if (rq->kind == REQUEST_READ_FOR_WRITE) {
		read_for_write_done(x, rq->action, res);
		goto next;
	}
	switch (x->phase) {
	case PHASE_RECHECK:
		break;
	case PHASE_CLAIMS:
		claim_done(x, rq->action, res);
		break;
	case PHASE_WRITES:
		write_done(x, rq->action, res);
		break;
	case PHASE_MANAGE:
		if (rq->action->type == ACTION_CREATE)
			create_done(x, rq->action, res);
		else
			delete_done(x, rq->action, res);
		break;
	case PHASE_STATUS:
		status_done(x, rq->action, res);
		break;
	case PHASE_DONE:
		break;
	}
next:
	free(rq);
	if (x->pending == 0)
		execution_step(x);
}

/* --- the steps ------------------------------------------------------------------------- */

int
executor_batch_size(int n, int sent, int previous)
{
	int size = previous == 0 ? 1 : previous * 2;

	return size < n - sent ? size : n - sent;
}

/* Frees x, abandoning its requests still out. */
static void
execution_free(struct execution *x)
{
	struct request *rq;

	/* Requests still out (the executor is freed early): nobody is told of them. */
	while ((rq = TAILQ_FIRST(&x->requests)) != NULL) {
		TAILQ_REMOVE(&x->requests, rq, link);
		restops_cancel(rq->req);
		free(rq);
	}
	sync_result_clear(&x->r);
	for (int i = 0; i < x->nerrors; i++)
		free(x->errors[i]);
	free(x->errors);
	if (x->finish_event != NULL)
		event_free(x->finish_event);
	free(x);
}

/* Reports the outcome, from a callback of its own. */
static void
execution_finish_cb(evutil_socket_t fd, short what, void *arg)
{
	struct execution *x = arg;
	struct executor *e = x->e;
	struct executor_outcome out = { 0, 0, 0, 0 };

	(void)fd;
	(void)what;
	if (x->r.failed)
		log_warning("%s %s: %s; synced again with backoff", x->r.controller, x->r.key,
		    x->r.waiting != NULL ? x->r.waiting : "the sync failed");
	out.failed = x->failed || x->nerrors > 0 || x->r.stale || x->r.failed;
	out.store_failed = x->store_failed;
	out.retry_now = x->retry_now && !out.failed && !out.store_failed;
	if (!out.failed && !out.retry_now && !out.store_failed)
		out.requeue_after = x->r.requeue_after;
	TAILQ_REMOVE(&e->executions, x, link);
	e->count--;
	x->done(x->r.key, &out, x->arg);
	execution_free(x);
}

static void
execution_finish(struct execution *x)
{
	x->phase = PHASE_DONE;
	event_active(x->finish_event, EV_TIMEOUT, 0);
}

/* Sends the next creation batch, or all deletions; 0 if anything was sent. */
static int
manage_send(struct execution *x)
{
	int n;

	if (x->next >= x->r.nmanage)
		return -1;
	if (x->r.creating) {
		if (x->batch_failed || x->e->stopping)
			return -1;
		n = executor_batch_size(x->r.nmanage, x->next, x->batch);
		x->batch = n;
	} else {
		n = x->r.nmanage - x->next;
	}
	for (int i = 0; i < n; i++) {
		struct action *a = &x->r.manage[x->next++];
		if (request_send(x, REQUEST_ACTION, a, a->body) == 0)
			continue;
		if (a->type == ACTION_CREATE) {
			manage_error_set(x, "the request could not be built");
			x->batch_failed = 1;
			x->next--;	/* counted as skipped below */
			break;
		}
		lower_expectations(x, a, 1);
		manage_error_set(x, "the request could not be built");
	}
	return x->pending > 0 ? 0 : -1;
}

/* Moves x on to its next step once the current one's requests are all back. */
static void
execution_step(struct execution *x)
{
	cJSON *body;

	switch (x->phase) {
	case PHASE_RECHECK:
		if (x->failed)
			break;
		execution_events(x);
		if (x->r.nclaims > 0 && x->r.recheck_owner && !x->recheck_sent) {
			/* The owner, read live: same uid, not being deleted? */
			x->recheck_sent = 1;
			if (request_send(x, REQUEST_RECHECK, NULL, NULL) != 0) {
				x->failed = 1;
				break;
			}
			return;
		}
		x->phase = PHASE_CLAIMS;
		for (int i = 0; i < x->r.nclaims; i++) {
			if (request_send(x, REQUEST_ACTION, &x->r.claims[i],
			    x->r.claims[i].body) != 0)
				x->failed = 1;
		}
		if (x->pending > 0)
			return;
		/* FALLTHROUGH */
	case PHASE_CLAIMS:
		if (x->failed || x->retry_now)
			break;
		x->phase = PHASE_WRITES;
		if (write_send(x) == 0)
			return;
		/* FALLTHROUGH */
	case PHASE_WRITES:
		if (write_send(x) == 0)
			return;
		if (x->reviews_denied > 0 && !x->review_allowed && !x->failed) {
			log_v(2, "%s %s: no review allowed it: synced again with backoff",
			    x->r.controller, x->r.key);
			x->failed = 1;
		}
		if (x->failed || x->skip_status)
			break;
		if (x->nerrors > 0)
			goto status;	/* a write failed: nothing is managed after it */
		x->phase = PHASE_MANAGE;
		if (x->r.nmanage > 0 && set_expectations(x, time_now()) != 0) {
			x->failed = 1;
			break;
		}
		if (manage_send(x) == 0)
			return;
		/* FALLTHROUGH */
	case PHASE_MANAGE:
		if (x->r.creating && manage_send(x) == 0)
			return;
		if (x->r.creating && x->r.nmanage > x->created) {
			/* Creations that will never be observed: failed or never sent. */
			log_v(2, "%s %s: %d of %d creations not made", x->r.controller, x->r.key,
			    x->r.nmanage - x->created, x->r.nmanage);
			lower_expectations(x, &x->r.manage[0], x->r.nmanage - x->created);
		}
	status:
		x->phase = PHASE_STATUS;
		if (x->r.status == NULL || (body = status_body(x)) == NULL)
			break;
		x->status_tries = 1;
		if (request_send(x, REQUEST_ACTION, x->r.status, body) != 0)
			x->failed = 1;
		cJSON_Delete(body);
		if (x->pending > 0)
			return;
		break;
	case PHASE_STATUS:
	case PHASE_DONE:
		break;
	}
	execution_finish(x);
}

struct executor *
executor_new(struct client *client, struct store *store, struct informer_set *informers,
    struct kubeevents *const *events)
{
	struct executor *e = xcalloc(1, sizeof *e);

	e->base = client_base(client);
	e->client = client;
	e->store = store;
	e->informers = informers;
	e->events = events;
	TAILQ_INIT(&e->executions);
	return e;
}

void
executor_use_client(struct executor *e, const struct controller_type *type,
    struct client *client)
{
	if (e->clients == NULL)
		e->clients = xcalloc((size_t)controller_type_count, sizeof *e->clients);
	for (int i = 0; i < controller_type_count; i++) {
		if (controller_types[i] == type)
			e->clients[i] = client;
	}
}

void
executor_free(struct executor *e)
{
	struct execution *x;

	if (e == NULL)
		return;
	while ((x = TAILQ_FIRST(&e->executions)) != NULL) {
		TAILQ_REMOVE(&e->executions, x, link);
		execution_free(x);
	}
	for (int i = 0; i < ABSENT_MEMORY; i++)
		free(e->absent[i]);
	free(e->clients);
	free(e);
}

void
executor_stop(struct executor *e)
{
	e->stopping = 1;
}

int
executor_in_flight(const struct executor *e)
{
	return e->count;
}

int
executor_run(struct executor *e, struct controller *c, struct sync_result *r,
    executor_done_cb done, void *arg, char **error)
{
	struct execution *x = xcalloc(1, sizeof *x);
	char *err = NULL;

	x->e = e;
	x->c = c;
	x->r = *r;
	memset(r, 0, sizeof *r);
	x->done = done;
	x->arg = arg;
	TAILQ_INIT(&x->requests);
	x->finish_event = event_new(e->base, -1, 0, execution_finish_cb, x);
	if (x->finish_event == NULL) {
		execution_free(x);
		return error_set(error, "executor: cannot create an event");
	}
	TAILQ_INSERT_TAIL(&e->executions, x, link);
	e->count++;

	if (x->r.stale) {
		log_v(2, "%s %s: waiting: the cache lags the controller's own writes to %s",
		    x->r.controller, x->r.key, x->r.stale_resource);
		execution_finish(x);
		return 0;
	}
	/* The sync's own events first, whatever comes next (a gone owner may have one too:
	 * the node lifecycle controller's RemovingNode); but after the live reads that must
	 * confirm what the cache says, when there are any: an event about a cache that lags
	 * is not sent (kube's CronJob reads a Job live before its MissingJob), and the sync
	 * that runs again sends it if it still holds. */
	if (x->r.nconfirm_absent == 0 || x->r.forget_expectations)
		execution_events(x);
	if (x->r.forget_expectations) {
		if (bookkeeping_begin(x) == 0) {
			if (controller_record_result(c, &x->r, time_now(), &err) != 0)
				bookkeeping_failed(x, "the owner's deletion", err);
			else
				bookkeeping_commit(x);
		}
		execution_finish(x);
		return 0;
	}
	x->phase = PHASE_RECHECK;
	for (int i = 0; i < x->r.nconfirm_absent; i++) {
		if (absent_known(e, x->r.confirm_absent[i].uid))
			continue;	/* read before: gone for good */
		if (request_send(x, REQUEST_CONFIRM, &x->r.confirm_absent[i], NULL) != 0)
			x->failed = 1;
	}
	if (x->pending == 0)
		execution_step(x);
	return 0;
}
