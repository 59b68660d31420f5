/*
 * informer.c - informers: LIST and WATCH resources into the store.
 *
 * Each informer mirrors one resource, cluster-wide:
 *
 *   start ──(stored rv)────────────────────────────────────▶ WATCH ◀─┐ timeout, end of
 *     │                                                        │  └──┘ stream or error:
 *     └──(none)──▶ sync: WatchList ──initial-events-end──────▶ │       backoff, same rv
 *                   ▲      │ refused (auto)                    │
 *                   │      ▼                                   │
 *                   │    LIST pages (limit=500, continue) ─────┘
 *                   └──────────────────────────────────────────┘ 410 Gone / too old rv
 *
 * A sync fetches the complete state of the resource and writes every object in it with a
 * new list epoch. By WatchList (the default when the server has it; kube-apiserver's
 * WatchList feature is on by default since 1.34) it is a WATCH with sendInitialEvents=true
 * and resourceVersionMatch=NotOlderThan: the server sends every object as an ADDED event,
 * then a bookmark annotated k8s.io/initial-events-end, and the same stream goes on with
 * the changes after it. By LIST it is paginated LIST requests, then a WATCH from the list's
 * resourceVersion. In auto mode a WatchList the server refuses (an old server, or the
 * feature gate turned off: 400/422 or any error other than a transport failure, 429 or an
 * expired resourceVersion), or a stream that ends before the bookmark, is followed by a
 * LIST; the next sync tries WatchList again. While the initial events stream in, the
 * informer's resourceVersion does not move (the events are a snapshot, not history): a
 * stream that breaks is synced again from the start.
 *
 * (Unlike client-go's reflector, which opens the WatchList again when a stream ends
 * before the bookmark, a stream like that is taken as a refusal: a server that ignores
 * sendInitialEvents would otherwise be asked forever.)
 *
 * When the sync is complete (the bookmark, or the last page), its resourceVersion is
 * recorded, the informer is synced, and rows of older epochs (objects the new state does
 * not have) are deleted, a thousand per loop turn, each thousand in a transaction of its
 * own. A WATCH applies each event as it is decoded from the stream
 * (json_stream finds object boundaries across chunks without rescanning) and remembers
 * the newest resourceVersion, bookmarks included. Only 410 Gone, or an ERROR event that
 * says the resourceVersion is too old, leads to a relist; every other failure waits out an
 * exponential backoff with jitter and watches again from where it was.
 *
 * Transactions: everything the informers write in one loop turn goes in one transaction,
 * opened by the first write and committed by the set's flush event, which runs at the
 * lowest priority, after every other callback of the turn, or as soon as a watch has
 * applied INFORMER_BATCH_MAX events in it (a long stream of initial events keeps the
 * socket readable, and would otherwise make one huge transaction), or INFORMER_PENDING_MAX
 * changes wait for the handlers (each holds its parsed object until the commit: with
 * 1000 of them a cold sync's peak memory grew by 6 MB). The resourceVersions are
 * written in the same transaction as the rows, so after a crash the store and its
 * recorded position always agree. Handlers are called after the commit, never for a
 * change that was rolled back.
 *
 * Counts: every informer keeps its own informer_stats and the set keeps the totals
 * (INFORMER_COUNT bumps both). With a metrics registry they are published as
 * sqlkcm_informer_* counters read at each render; freeing the set freezes them at their
 * final values.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <curl/curl.h>

#include "apistatus.h"
#include "client.h"
#include "informer.h"
#include "json.h"
#include "jsonspan.h"
#include "jsonstream.h"
#include "log.h"
#include "metrics.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"
#include "watch.h"

#define INFORMER_PAGE_SIZE 500
#define INFORMER_BATCH_MAX 1000	/* watch events per transaction at most */
#define INFORMER_PENDING_MAX 128	/* changes held for the handlers at most (each a
					   parsed object): a transaction ends at this many */
#define INFORMER_PRUNE_CHUNK 1000
#define INFORMER_BACKOFF_INITIAL_MS 800
#define INFORMER_BACKOFF_MAX_MS 30000
#define INFORMER_WATCH_TIMEOUT_MIN 300	/* timeoutSeconds is drawn from [min, 2*min) */
#define INFORMER_MAX_EVENT (64 * 1024 * 1024)
/* A watch that has carried no event and no bookmark for this long is presumed dead:
 * kube-apiserver sends a bookmark about every minute to a watch that asks for them, so
 * this is that minute plus a margin. (A dead connection is found sooner by the client,
 * which probes silent connections; this catches a single stream that stalled.) */
#define INFORMER_WATCH_SILENCE_MAX 90
/* While the server does not answer at all, retries back off only up to this: the
 * clients' shared gate already keeps the attempts few, and an informer must be watching
 * again within seconds once the server is back. */
#define INFORMER_UNREACHABLE_BACKOFF_MAX_MS 2000
/* The most watch bytes an informer holds for its batch (informer_watch_data). */
#define INFORMER_HELD_MAX (1024 * 1024)

/* The annotation of the bookmark that ends a WatchList's initial events. */
#define INFORMER_INITIAL_EVENTS_END "k8s.io/initial-events-end"

/* Counts one field of informer_stats for an informer and for its set's totals. */
#define INFORMER_COUNT(inf, field) ((inf)->stats.field++, (inf)->set->stats.field++)

/* The per-resource metrics, in informer_metric_specs order. */
enum {
	INFORMER_METRIC_EVENTS,
	INFORMER_METRIC_LISTS,
	INFORMER_METRIC_WATCHES,
	INFORMER_METRIC_RELISTS,
	INFORMER_METRIC_ERRORS,
	INFORMER_METRIC_SYNCED,
	INFORMER_METRIC_RV_TIME,
	INFORMER_METRIC_DOWN,
	INFORMER_METRIC_COUNT
};

/* Event priorities: the flush runs after everything else of a loop turn. */
#define PRIORITY_COUNT 3
#define PRIORITY_FLUSH 2

struct informer {
	struct informer_set *set;
	const struct resource *resource;
	struct client_request *request;
	char *offline_path;		/* no client: the request it would have sent */
	int streaming;			/* the request in flight is a WATCH */
	unsigned long request_gen;	/* changes whenever a request is sent or dropped */
	struct json_stream *stream;
	struct json_stream *feeding;	/* being fed: replaced, it is freed after the feed */
	struct buf held;		/* watch bytes received, applied at the batch's end */
	char *resource_version;		/* newest applied */
	int rv_dirty;			/* to be written with this turn's transaction */
	int rv_unavailable;		/* expired: the next WatchList starts from "" */
	int initial_events;		/* a WatchList's initial events are streaming */
	int list_fallback;		/* this sync uses LIST: WatchList was refused */
	long long epoch;		/* list epoch rows are written with */
	char *continue_token;
	char *list_rv;
	int synced;
	int need_list;			/* no usable resourceVersion: the next start lists */
	int failures;			/* consecutive, for the backoff */
	unsigned long watch_events;	/* events in the current watch */
	unsigned long sync_objects;	/* objects the sync in progress has seen */
	struct event *retry_timer;
	struct event *watchdog;		/* looks for a watch that went silent */
	double heard_at;		/* monotonic: the watch's last event or bookmark */
	double down_since;		/* monotonic: backing off since; 0 while it is not */
	struct event *prune_event;
	long long prune_epoch;
	struct list_page *page;		/* a LIST page received, its items not all written */
	struct event *page_event;	/* writes them */
	struct informer_stats stats;	/* this informer's part of the set's totals */
	struct metrics_series *metrics[INFORMER_METRIC_COUNT];	/* NULL without metrics */
	TAILQ_ENTRY(informer) link;
};

/* A change waiting for the commit before its handlers run. */
struct pending {
	enum informer_event_type type;
	const struct resource *resource;
	cJSON *object;
	char *old_body;
	TAILQ_ENTRY(pending) link;
};

struct handler {
	struct informer_handlers h;
	TAILQ_ENTRY(handler) link;
};

struct informer_set {
	struct event_base *base;
	struct client *client;
	struct store *store;
	TAILQ_HEAD(informer_queue, informer) informers;
	TAILQ_HEAD(, handler) handlers;
	TAILQ_HEAD(, pending) pending;
	struct event *flush_event;
	double batch_period;		/* seconds watch bytes are held; 0: none */
	int (*held)(const struct resource *r);	/* whose; NULL: every resource's */
	struct event *drain_event;	/* applies what the informers hold */
	int in_transaction;
	int write_failed;		/* a write of this turn failed: the turn is lost */
	unsigned long batch_events;	/* watch events in the open transaction */
	int npending;			/* changes in pending */
	int stopping;
	int started;			/* informer_set_start ran: added informers start */
	enum informer_watch_list watch_list;
	int confirm_warm_start;		/* a stored cache is synced again before it counts */
	struct informer_stats stats;
	struct metrics_registry *metrics;	/* NULL: none */
	struct metrics_series *batches;
	struct metrics_series *batch_failures;
};

static void informer_list(struct informer *inf);
static struct informer *informer_find(const struct informer_set *set,
    const struct resource *r);
static void informer_sync(struct informer *inf);
static void informer_watch_list(struct informer *inf);
static void informer_watch(struct informer *inf);
static void informer_retry(struct informer *inf, const char *why);
static void informer_retry_within(struct informer *inf, const char *why, long max_ms);
static void informer_restart(struct informer *inf, const char *why);
static void informer_list_done(const struct client_response *resp, void *arg);
struct list_page;
static void list_page_free(struct list_page *page);
static void informer_list_apply(evutil_socket_t fd, short what, void *arg);
static void informer_watch_data(const char *data, size_t len, void *arg);
static void informer_watch_done(const struct client_response *resp, void *arg);

/* --- requests ------------------------------------------------------------------------- */

/* Sends GET path: a LIST page, or a WATCH (streaming) whose bytes go to the stream. */
static void
informer_send(struct informer *inf, const char *path, int streaming)
{
	struct informer_set *set = inf->set;

	inf->request_gen++;
	inf->streaming = streaming;
	log_v(3, "informer resource=%s: GET %s", inf->resource->name, path);
	if (set->client == NULL) {
		free(inf->offline_path);
		inf->offline_path = xstrdup(path);
		return;
	}
	if (inf->resource->metadata_only)
		inf->request = client_get_as(set->client, path, streaming ?
		    RESOURCE_ACCEPT_METADATA : RESOURCE_ACCEPT_METADATA_LIST,
		    streaming ? informer_watch_data : NULL,
		    streaming ? informer_watch_done : informer_list_done, inf);
	else if (streaming)
		inf->request = client_stream(set->client, path, informer_watch_data,
		    informer_watch_done, inf);
	else
		inf->request = client_send(set->client, "GET", path, NULL, NULL, 0,
		    informer_list_done, inf);
}

/* Drops the request in flight, if any: its callbacks will not be called. */
static void
informer_cancel(struct informer *inf)
{
	inf->request_gen++;
	if (inf->request != NULL)
		client_cancel(inf->request);
	inf->request = NULL;
	free(inf->offline_path);
	inf->offline_path = NULL;
	/* A page not yet written belongs to the requests dropped, and so do the watch bytes
	 * held. */
	list_page_free(inf->page);
	inf->page = NULL;
	event_del(inf->page_event);
	buf_free(&inf->held);
}

/* --- the loop turn's transaction ------------------------------------------------------ */

static void informer_set_flush(evutil_socket_t fd, short what, void *arg);

/* A write of this turn failed (error says how, taken): nothing of the turn can be kept,
 * since SQLite may already have rolled the transaction back and would run whatever comes
 * next outside of it. The turn ends now, every informer starting over from the store. */
static void
informer_set_write_failed(struct informer_set *set, char *error)
{
	log_error("informers: the cache write failed, restarting from the stored state: %s",
	    error);
	free(error);
	set->write_failed = 1;
	informer_set_flush(-1, 0, set);
}

/* Opens this turn's transaction if it is not open yet; -1 when it cannot be (the turn is
 * then over: see informer_set_write_failed). */
static int
informer_set_begin(struct informer_set *set)
{
	char *error = NULL;

	if (set->in_transaction)
		return 0;
	if (store_begin(set->store, &error) != 0) {
		informer_set_write_failed(set, error);
		return -1;
	}
	set->in_transaction = 1;
	event_active(set->flush_event, EV_TIMEOUT, 0);
	return 0;
}

static void
pending_free(struct pending *p)
{
	cJSON_Delete(p->object);
	free(p->old_body);
	free(p);
}

/* Commits this turn's writes, then tells the handlers. */
static void
informer_set_flush(evutil_socket_t fd, short what, void *arg)
{
	struct informer_set *set = arg;
	struct informer *inf;
	struct pending *p;
	struct handler *h;
	char *error = NULL;
	int failed = 0;

	(void)fd;
	(void)what;
	if (!set->in_transaction && !set->write_failed)
		return;
	event_del(set->flush_event);	/* when called directly, mid-turn */
	failed = set->write_failed;
	TAILQ_FOREACH(inf, &set->informers, link) {
		if (inf->rv_dirty && !failed && store_set_resource_version(set->store,
		    inf->resource, inf->resource_version, &error) != 0)
			failed = 1;
		inf->rv_dirty = 0;
	}
	if (!failed && store_commit(set->store, &error) != 0)
		failed = 1;
	set->in_transaction = 0;
	set->batch_events = 0;
	set->npending = 0;
	if (failed) {
		/* Nothing of this turn is stored, and what the informers hold in memory (their
		 * resourceVersions, continue tokens, list epochs) went past it: each starts over
		 * from what the store holds, so that the lost events are fetched again. */
		if (!set->write_failed)
			log_error("informers: the cache write failed, restarting from the stored "
			    "state: %s", error);
		free(error);
		store_rollback(set->store);
		set->write_failed = 0;
		while ((p = TAILQ_FIRST(&set->pending)) != NULL) {
			TAILQ_REMOVE(&set->pending, p, link);
			pending_free(p);
		}
		set->stats.errors++;
		set->stats.batch_failures++;
		TAILQ_FOREACH(inf, &set->informers, link)
			informer_restart(inf, "the cache write failed");
		return;
	}
	set->stats.batches++;
	while ((p = TAILQ_FIRST(&set->pending)) != NULL) {
		struct informer_event ev = { p->type, p->resource, p->object, p->old_body };
		TAILQ_REMOVE(&set->pending, p, link);
		TAILQ_FOREACH(h, &set->handlers, link)
			h->h.on_event(&ev, h->h.arg);
		pending_free(p);
	}
	TAILQ_FOREACH(h, &set->handlers, link) {
		if (h->h.on_batch_end != NULL)
			h->h.on_batch_end(h->h.arg);
	}
}

/* Queues a change for the handlers; takes object and old_body. */
static void
informer_notify(struct informer *inf, enum informer_event_type type, cJSON *object,
    char *old_body)
{
	struct informer_set *set = inf->set;
	struct pending *p;

	if (TAILQ_EMPTY(&set->handlers)) {
		cJSON_Delete(object);
		free(old_body);
		return;
	}
	p = xcalloc(1, sizeof *p);
	p->type = type;
	p->resource = inf->resource;
	p->object = object;
	p->old_body = old_body;
	TAILQ_INSERT_TAIL(&set->pending, p, link);
	set->npending++;
}

/* --- applying objects ----------------------------------------------------------------- */

static void
informer_set_rv(struct informer *inf, const char *rv)
{
	if (rv == NULL || *rv == '\0')
		return;
	free(inf->resource_version);
	inf->resource_version = xstrdup(rv);
	inf->rv_dirty = 1;
	metrics_gauge_set(inf->metrics[INFORMER_METRIC_RV_TIME], time_now());
}

/* Returns the object's metadata.resourceVersion, or NULL. */
static const char *
object_rv(const cJSON *object)
{
	const cJSON *v = json_path(object, "metadata.resourceVersion");

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Describes an object for a log line: "ns/name" or what is known. */
static char *
object_key(const cJSON *object)
{
	const cJSON *ns = json_path(object, "metadata.namespace");
	const cJSON *name = json_path(object, "metadata.name");

	return xasprintf("%s%s%s", cJSON_IsString(ns) ? ns->valuestring : "",
	    cJSON_IsString(ns) ? "/" : "", cJSON_IsString(name) ? name->valuestring : "?");
}

/* Checks that an object is of the informer's kind (an absent kind is accepted: list
 * items carry none). Logs and returns -1 otherwise. */
static int
informer_check_kind(struct informer *inf, const cJSON *object)
{
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(object, "kind");

	if (!cJSON_IsObject(object)) {
		log_error("informer resource=%s: skipping an item that is not an object",
		    inf->resource->name);
		return -1;
	}
	/* Metadata-only objects are all of kind PartialObjectMetadata. */
	if (kind != NULL && (!cJSON_IsString(kind) ||
	    strcmp(kind->valuestring, inf->resource->metadata_only ? "PartialObjectMetadata" :
	    inf->resource->kind) != 0)) {
		char *key = object_key(object);
		log_error("informer resource=%s: skipping %s of unexpected kind %s",
		    inf->resource->name, key, cJSON_IsString(kind) ? kind->valuestring : "(not a string)");
		free(key);
		return -1;
	}
	return 0;
}

static int
informer_apply_upsert_text(struct informer *inf, cJSON *object, const char *body,
    size_t body_len)
{
	struct informer_set *set = inf->set;
	enum store_change change;
	char *old_body = NULL, *error = NULL;
	int rc;

	if (informer_check_kind(inf, object) != 0) {
		INFORMER_COUNT(inf, errors);
		cJSON_Delete(object);
		return 0;
	}
	if (informer_set_begin(set) != 0) {
		cJSON_Delete(object);
		return -1;
	}
	rc = store_upsert_text(set->store, inf->resource, object, body, body_len, inf->epoch,
	    &change, TAILQ_EMPTY(&set->handlers) ? NULL : &old_body, &error);
	if (rc == STORE_INVALID) {
		char *key = object_key(object);
		log_error("informer resource=%s object=%s: not stored: %s", inf->resource->name,
		    key, error);
		free(key);
		free(error);
		INFORMER_COUNT(inf, errors);
		cJSON_Delete(object);
		return 0;
	}
	if (rc != 0) {
		INFORMER_COUNT(inf, errors);
		cJSON_Delete(object);
		informer_set_write_failed(set, error);
		return -1;
	}
	INFORMER_COUNT(inf, events);
	if (inf->need_list)
		inf->sync_objects++;
	if (change == STORE_UNCHANGED) {
		cJSON_Delete(object);
		return 0;
	}
	informer_notify(inf, change == STORE_ADDED ? INFORMER_ADDED : INFORMER_UPDATED,
	    object, old_body);
	return 0;
}

/* Upserts one object (taking it) whose text, when not NULL, is body (store_parse_object's,
 * also taken); 0 when stored or skipped as bad, -1 when the store failed (the turn is then
 * over and every informer restarting: the caller stops). */
static int
informer_apply_upsert(struct informer *inf, cJSON *object, char *body, size_t body_len)
{
	int rc = informer_apply_upsert_text(inf, object, body, body_len);

	free(body);
	return rc;
}

/* Deletes one object (taking it). */
static void
informer_apply_delete(struct informer *inf, cJSON *object)
{
	struct informer_set *set = inf->set;
	const cJSON *uid = json_path(object, "metadata.uid");
	enum store_change change;
	char *old_body = NULL, *error = NULL;

	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(object,
	    "metadata"), "managedFields");
	if (informer_check_kind(inf, object) != 0) {
		INFORMER_COUNT(inf, errors);
		cJSON_Delete(object);
		return;
	}
	if (informer_set_begin(set) != 0) {
		cJSON_Delete(object);
		return;
	}
	if (!cJSON_IsString(uid)) {
		char *key = object_key(object);
		log_error("informer resource=%s object=%s: skipping a delete without "
		    "metadata.uid", inf->resource->name, key);
		free(key);
		INFORMER_COUNT(inf, errors);
		cJSON_Delete(object);
		return;
	}
	if (store_delete_object(set->store, inf->resource, uid->valuestring, &change,
	    TAILQ_EMPTY(&set->handlers) ? NULL : &old_body, &error) != 0) {
		INFORMER_COUNT(inf, errors);
		cJSON_Delete(object);
		informer_set_write_failed(set, error);
		return;
	}
	INFORMER_COUNT(inf, events);
	if (change == STORE_DELETED)
		informer_notify(inf, INFORMER_DELETED, object, old_body);
	else
		cJSON_Delete(object);
}

/* --- backoff -------------------------------------------------------------------------- */

static void
informer_retry_expired(evutil_socket_t fd, short what, void *arg)
{
	struct informer *inf = arg;

	(void)fd;
	(void)what;
	if (inf->need_list && inf->continue_token != NULL)
		informer_list(inf);
	else if (inf->need_list)
		informer_sync(inf);
	else
		informer_watch(inf);
}

/* Stops what the informer is doing and tries again after a backoff of at most max_ms
 * (before jitter): the list it was doing (from its continue token, if any), or a watch
 * from its resourceVersion. */
static void
informer_retry_within(struct informer *inf, const char *why, long max_ms)
{
	long ms = INFORMER_BACKOFF_INITIAL_MS;
	struct timeval tv;

	informer_cancel(inf);
	evtimer_del(inf->watchdog);
	if (inf->set->stopping)
		return;
	if (inf->down_since == 0)
		inf->down_since = time_monotonic();
	for (int i = 0; i < inf->failures && ms < max_ms; i++)
		ms *= 2;
	if (ms > max_ms)
		ms = max_ms;
	ms += random() % (ms + 1);	/* jitter: up to the same again */
	inf->failures++;
	log_warning("informer resource=%s: %s; retrying in %ldms", inf->resource->name, why, ms);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(inf->retry_timer, &tv);
}

/* informer_retry_within with client-go's backoff: 0.8 s doubling up to 30 s. */
static void
informer_retry(struct informer *inf, const char *why)
{
	informer_retry_within(inf, why, INFORMER_BACKOFF_MAX_MS);
}

/* Takes the informer's position from the store: where its cache stands, whatever it held
 * in memory. A store that cannot be read leaves no resourceVersion, so the next sync asks
 * for the newest state. */
static void
informer_load(struct informer *inf)
{
	struct store_informer_state st;
	char *error = NULL;

	free(inf->resource_version);
	inf->resource_version = NULL;
	if (store_get_informer(inf->set->store, inf->resource, &st, &error) != 0) {
		log_error("informer resource=%s: %s", inf->resource->name, error);
		free(error);
		return;
	}
	inf->epoch = st.list_epoch;
	if (st.synced && st.resource_version != NULL) {
		inf->resource_version = st.resource_version;
		st.resource_version = NULL;
	}
	store_informer_state_clear(&st);
}

/* Starts the informer over from what the store holds, after the backoff: a sync from the
 * stored resourceVersion (WatchList with resourceVersionMatch=NotOlderThan, or a LIST),
 * so that whatever a lost transaction held is fetched again and whatever changed since
 * reaches the handlers. Until that sync is complete the informer is not synced: its cache
 * is behind, and the controllers wait. */
static void
informer_restart(struct informer *inf, const char *why)
{
	informer_cancel(inf);
	/* A prune belongs to the sync it follows, which may be what was lost. */
	event_del(inf->prune_event);
	informer_load(inf);
	free(inf->continue_token);
	inf->continue_token = NULL;
	inf->initial_events = 0;
	inf->rv_dirty = 0;
	inf->need_list = 1;
	inf->synced = 0;
	informer_retry(inf, why);
}

/* Forgets the resourceVersion and syncs again (410 Gone). */
static void
informer_relist(struct informer *inf, const char *why)
{
	log_info("informer resource=%s: %s; relisting", inf->resource->name, why);
	informer_cancel(inf);
	evtimer_del(inf->watchdog);
	INFORMER_COUNT(inf, relists);
	free(inf->continue_token);
	inf->continue_token = NULL;
	inf->need_list = 1;
	inf->rv_unavailable = 1;
	informer_sync(inf);
}

/* Handles a failed response: relist on 410, back off otherwise. */
static void
informer_failed(struct informer *inf, const char *what, const struct client_response *resp)
{
	struct api_status st;
	char *why;

	INFORMER_COUNT(inf, errors);
	if (resp->transport_error != NULL) {
		why = xasprintf("%s failed: %s", what, resp->transport_error);
		informer_retry_within(inf, why, INFORMER_UNREACHABLE_BACKOFF_MAX_MS);
		free(why);
		return;
	}
	api_status_from_response(resp->http_code, resp->body, resp->len, resp->retry_after, &st);
	why = xasprintf("%s failed: HTTP %d %s: %s", what, resp->http_code,
	    api_reason_name(st.reason), st.message != NULL ? st.message : "");
	if (api_status_is_resource_expired(&st))
		informer_relist(inf, why);
	else
		informer_retry(inf, why);
	free(why);
	api_status_clear(&st);
}

/* --- LIST ------------------------------------------------------------------------------ */

/* A row the sync did not see was removed: the handlers hear of it as a deletion, as
 * client-go's Replace tells them of what a relist no longer has. */
static void
informer_pruned(const char *uid, const char *body, void *arg)
{
	struct informer *inf = arg;
	cJSON *object;

	if (TAILQ_EMPTY(&inf->set->handlers))
		return;
	if ((object = cJSON_Parse(body)) == NULL) {
		log_error("informer resource=%s: the cached body of %s is not JSON; its "
		    "deletion reaches no handler", inf->resource->name, uid);
		return;
	}
	informer_notify(inf, INFORMER_DELETED, object, xstrdup(body));
}

/* Deletes a chunk of rows the last sync did not have; again next turn if there are more. */
static void
informer_prune(evutil_socket_t fd, short what, void *arg)
{
	struct informer *inf = arg;
	struct informer_set *set = inf->set;
	char *error = NULL;
	int deleted = 0;

	(void)fd;
	(void)what;
	if (informer_set_begin(set) != 0)
		return;
	if (store_delete_unlisted(set->store, inf->resource, inf->prune_epoch,
	    INFORMER_PRUNE_CHUNK, informer_pruned, inf, &deleted, &error) != 0) {
		informer_set_write_failed(set, error);
		return;
	}
	if (deleted > 0)
		log_info("informer resource=%s: removed %d objects the apiserver no longer has",
		    inf->resource->name, deleted);
	if (deleted == INFORMER_PRUNE_CHUNK) {
		/* Each chunk in a transaction of its own, and the loop's other work between
		 * chunks: a timer runs after the next poll, where event_active would run the
		 * next chunk in this same turn. */
		struct timeval now = { 0, 0 };

		informer_set_flush(-1, 0, set);
		if (inf->synced)	/* else the commit failed: the informer starts over */
			evtimer_add(inf->prune_event, &now);
	}
}

/* A sync is complete at resourceVersion rv (written with this turn's transaction, which
 * the caller has opened): the informer is synced, and the objects it did not see go.
 * -1 when the store failed (every informer is then starting over). */
static int
informer_synced(struct informer *inf, const char *rv, const char *how)
{
	struct informer_set *set = inf->set;
	char *error = NULL;

	if (store_finish_list(set->store, inf->resource, rv, &error) != 0) {
		informer_set_write_failed(set, error);
		return -1;
	}
	informer_set_rv(inf, rv);
	inf->rv_dirty = 0;	/* store_finish_list wrote it */
	log_info("informer resource=%s: synced by %s resourceVersion=%s objects=%lu",
	    inf->resource->name, how, rv, inf->sync_objects);
	inf->synced = 1;
	inf->need_list = 0;
	inf->rv_unavailable = 0;
	inf->failures = 0;
	inf->prune_epoch = inf->epoch;
	event_active(inf->prune_event, EV_TIMEOUT, 0);
	return 0;
}

/* A LIST page, its items each parsed from its own text as the store keeps it. */
struct list_page {
	cJSON *list;		/* the page without its items: metadata, kind, apiVersion */
	struct list_item {
		cJSON *object;
		char *body;	/* store_parse_object's text; NULL for an item that is not
				 * an object (parsed as it is, for the store to refuse) */
		size_t len;
	} *items;
	int n;
	int next;		/* the items before it were handed to the store */
};

static void
list_page_free(struct list_page *page)
{
	if (page == NULL)
		return;
	for (int i = page->next; i < page->n; i++) {
		cJSON_Delete(page->items[i].object);
		free(page->items[i].body);
	}
	free(page->items);
	cJSON_Delete(page->list);
	free(page);
}

/* Reads a LIST response body, every item parsed before any is applied, as one parse of the
 * whole would be: NULL when the body is not a list's valid JSON. */
static struct list_page *
list_page_parse(const struct resource *r, const char *text, size_t len)
{
	struct list_page *page = xcalloc(1, sizeof *page);
	struct json_span items, item;
	struct json_iter it;
	int rc, cap = 0;

	page->list = json_parse_object_except((struct json_span){ text, text + len }, "items",
	    &items);
	if (page->list == NULL || items.start == NULL)
		goto fail;
	/* An empty PartialObjectMetadataList has "items": null. */
	if (items.end - items.start == 4 && memcmp(items.start, "null", 4) == 0)
		return page;
	if (json_iter_init(&it, items, '[') != 0)
		goto fail;
	while ((rc = json_iter_element(&it, &item)) == 1) {
		struct list_item *li;

		if (page->n == cap) {
			cap = cap == 0 ? 512 : cap * 2;
			page->items = xrealloc(page->items, (size_t)cap * sizeof *page->items);
		}
		li = &page->items[page->n];
		li->object = store_parse_object(r, item.start, (size_t)(item.end - item.start),
		    &li->body, &li->len);
		if (li->object == NULL)
			li->object = cJSON_ParseWithLength(item.start,
			    (size_t)(item.end - item.start));
		if (li->object == NULL)
			goto fail;
		page->n++;
	}
	if (rc == 0)
		return page;
fail:
	list_page_free(page);
	return NULL;
}

/* One LIST page came back. Its items are written from a loop callback of their own
 * (informer_list_apply), of the lowest priority, after the request for the next page went
 * out: the apiserver makes that page while the store takes this one. */
static void
informer_list_done(const struct client_response *resp, void *arg)
{
	struct informer *inf = arg;
	struct list_page *page;
	const cJSON *cont, *rv;
	unsigned long gen;

	inf->request = NULL;
	gen = ++inf->request_gen;
	/* The page before, if its callback has not run yet, goes first. */
	if (inf->page != NULL) {
		informer_list_apply(-1, 0, inf);
		if (inf->request_gen != gen)
			return;		/* its write failed: the sync starts over */
	}
	if (resp->http_code != 200) {
		informer_failed(inf, "list", resp);
		return;
	}
	inf->down_since = 0;
	page = list_page_parse(inf->resource, resp->body, resp->len);
	if (page == NULL ||
	    !cJSON_IsString(rv = json_path(page->list, "metadata.resourceVersion"))) {
		list_page_free(page);
		INFORMER_COUNT(inf, errors);
		informer_retry(inf, "list: the response is not a list with items and a resourceVersion");
		return;
	}
	log_v(4, "informer resource=%s: list page of %d items", inf->resource->name, page->n);
	free(inf->list_rv);
	inf->list_rv = xstrdup(rv->valuestring);
	cont = json_path(page->list, "metadata.continue");
	free(inf->continue_token);
	inf->continue_token = NULL;
	inf->page = page;
	if (cJSON_IsString(cont) && *cont->valuestring != '\0') {
		inf->continue_token = xstrdup(cont->valuestring);
		informer_list(inf);
	}
	event_active(inf->page_event, EV_TIMEOUT, 0);
}

/* Hands the items of the page received to the store (and the handlers), one by one; after
 * the last page, the list is whole. */
static void
informer_list_apply(evutil_socket_t fd, short what, void *arg)
{
	struct informer *inf = arg;
	struct informer_set *set = inf->set;
	struct list_page *page = inf->page;

	(void)fd;
	(void)what;
	if (page == NULL)
		return;
	while (page->next < page->n) {
		struct list_item *li = &page->items[page->next++];

		/* A failed write restarts every informer, which drops the page. */
		if (informer_apply_upsert(inf, li->object, li->body, li->len) != 0)
			return;
	}
	inf->page = NULL;
	list_page_free(page);
	if (inf->continue_token != NULL)
		return;		/* the next page is on its way */

	/* The last page: the list is whole. */
	if (informer_set_begin(set) != 0 || informer_synced(inf, inf->list_rv, "LIST") != 0)
		return;		/* the cache write failed: starting over */
	set->stats.syncs_by_list++;
	inf->list_fallback = 0;		/* the next sync tries WatchList again */
	informer_watch(inf);
}
/* Sends the next LIST page (the first one begins a new list epoch). */
static void
informer_list(struct informer *inf)
{
	struct informer_set *set = inf->set;
	char *path, *error = NULL;

	if (inf->continue_token == NULL) {
		if (informer_set_begin(set) != 0)
			return;
		if (store_begin_list(set->store, inf->resource, &inf->epoch, &error) != 0) {
			informer_set_write_failed(set, error);
			return;
		}
		inf->sync_objects = 0;
		path = xasprintf("%s?limit=%d", inf->resource->path, INFORMER_PAGE_SIZE);
	} else {
		char *token = curl_easy_escape(NULL, inf->continue_token, 0);
		path = xasprintf("%s?limit=%d&continue=%s", inf->resource->path, INFORMER_PAGE_SIZE,
		    token);
		curl_free(token);
	}
	INFORMER_COUNT(inf, lists);
	informer_send(inf, path, 0);
	free(path);
}

/* Starts a sync: by WatchList unless it is off or was refused in this sync, else LIST. */
static void
informer_sync(struct informer *inf)
{
	free(inf->continue_token);
	inf->continue_token = NULL;
	inf->need_list = 1;
	if (inf->set->watch_list == INFORMER_WATCH_LIST_OFF || inf->list_fallback)
		informer_list(inf);
	else
		informer_watch_list(inf);
}

/* --- WATCH ----------------------------------------------------------------------------- */

/* Returns true when a bookmark's object carries the initial-events-end annotation. */
static int
bookmark_ends_initial_events(const cJSON *object)
{
	const cJSON *annotations = json_path(object, "metadata.annotations");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(annotations,
	    INFORMER_INITIAL_EVENTS_END);

	return cJSON_IsString(v) && strcmp(v->valuestring, "true") == 0;
}

/* The bookmark that ends a WatchList's initial events: the state is complete. */
static void
informer_initial_events_end(struct informer *inf, const cJSON *bookmark)
{
	const char *rv = object_rv(bookmark);

	if (rv == NULL || *rv == '\0') {
		INFORMER_COUNT(inf, errors);
		informer_retry(inf, "watch-list: the initial-events-end bookmark has no "
		    "resourceVersion");
		return;
	}
	if (informer_set_begin(inf->set) != 0)
		return;
	log_v(2, "informer resource=%s: initial-events-end bookmark after %lu events",
	    inf->resource->name, inf->watch_events);
	inf->initial_events = 0;
	if (informer_synced(inf, rv, "WatchList") != 0)
		return;
	inf->set->stats.syncs_by_watch_list++;
}

/* WatchList did not work in this sync; why says how. In auto mode a LIST follows; with
 * WatchList forced on, the WatchList is retried after the backoff. */
static void
informer_watch_list_refused(struct informer *inf, const char *why)
{
	informer_cancel(inf);
	evtimer_del(inf->watchdog);
	inf->initial_events = 0;
	if (inf->set->watch_list == INFORMER_WATCH_LIST_ON) {
		informer_retry(inf, why);
		return;
	}
	log_info("informer resource=%s: %s; falling back to a paginated LIST",
	    inf->resource->name, why);
	inf->set->stats.watch_list_fallbacks++;
	inf->list_fallback = 1;
	informer_list(inf);
}

/* A WatchList failed with st (a response or an ERROR event): back off on what may pass
 * (429), start again from "" when the resourceVersion asked for is gone or ahead of the
 * server, and take it as a refusal otherwise. */
static void
informer_watch_list_failed(struct informer *inf, const struct api_status *st,
    const char *why)
{
	INFORMER_COUNT(inf, errors);
	if (st->reason == API_TOO_MANY_REQUESTS) {
		informer_retry(inf, why);
	} else if ((api_status_is_resource_expired(st) ||
	    api_status_has_cause(st, "ResourceVersionTooLarge")) && !inf->rv_unavailable &&
	    inf->resource_version != NULL) {
		log_info("informer resource=%s: %s; WatchList again from the newest state",
		    inf->resource->name, why);
		informer_cancel(inf);
		evtimer_del(inf->watchdog);
		inf->rv_unavailable = 1;
		informer_sync(inf);
	} else {
		informer_watch_list_refused(inf, why);
	}
}

/* One complete value from the watch stream. */
static int
informer_watch_value(const char *text, size_t len, unsigned long line, void *arg)
{
	struct informer *inf = arg;
	struct informer_set *set = inf->set;
	unsigned long gen = inf->request_gen;
	struct watch_event ev;
	struct json_span object_text;
	struct api_status st;
	char *error = NULL, *body = NULL;
	size_t body_len = 0;

	(void)line;
	if (watch_event_split(text, len, &ev, &object_text, &error) == 0 &&
	    object_text.start != NULL) {
		ev.object = store_parse_object(inf->resource, object_text.start,
		    (size_t)(object_text.end - object_text.start), &body, &body_len);
		if (ev.object == NULL && watch_event_parse(text, len, &ev, &error) == 0) {
			watch_event_clear(&ev);
			error = xstrdup("watch event \"object\" cannot be read");
		}
	}
	if (error != NULL) {
		/* A stream we cannot read cannot be trusted past this point: watch again from
		 * the last event applied (or sync again, during initial events). */
		char *why = xasprintf("watch: bad event: %s", error);
		free(error);
		INFORMER_COUNT(inf, errors);
		informer_retry(inf, why);
		free(why);
		return 1;
	}
	inf->watch_events++;
	inf->heard_at = time_monotonic();
	switch (ev.type) {
	case WATCH_ADDED:
	case WATCH_MODIFIED:
		/* Initial events are a snapshot in no order: they move no resourceVersion. */
		if (!inf->initial_events)
			informer_set_rv(inf, object_rv(ev.object));
		informer_apply_upsert(inf, ev.object, body, body_len);
		ev.object = NULL;
		body = NULL;
		break;
	case WATCH_DELETED:
		if (!inf->initial_events)
			informer_set_rv(inf, object_rv(ev.object));
		informer_apply_delete(inf, ev.object);
		ev.object = NULL;
		free(body);
		body = NULL;
		break;
	case WATCH_BOOKMARK:
		if (inf->initial_events) {
			if (bookmark_ends_initial_events(ev.object))
				informer_initial_events_end(inf, ev.object);
		} else if (informer_set_begin(set) == 0)
			informer_set_rv(inf, object_rv(ev.object));
		break;
	case WATCH_ERROR:
		api_status_from_json(ev.object, &st);
		watch_event_clear(&ev);
		if (inf->initial_events) {
			char *why = xasprintf("watch-list: error event: %s %s",
			    api_reason_name(st.reason), st.message != NULL ? st.message : "");
			informer_watch_list_failed(inf, &st, why);
			free(why);
			api_status_clear(&st);
		} else if (api_status_is_resource_expired(&st)) {
			char *why = xasprintf("watch: %s", st.message != NULL ? st.message : "expired");
			api_status_clear(&st);
			informer_relist(inf, why);
			free(why);
		} else {
			char *why = xasprintf("watch: error event: %s %s", api_reason_name(st.reason),
			    st.message != NULL ? st.message : "");
			api_status_clear(&st);
			INFORMER_COUNT(inf, errors);
			informer_retry(inf, why);
			free(why);
		}
		return 1;
	}
	watch_event_clear(&ev);
	if (inf->request_gen != gen)
		return 1;	/* the watch was dropped: the rest of its bytes mean nothing */
	if (set->in_transaction && (++set->batch_events >= INFORMER_BATCH_MAX ||
	    set->npending >= INFORMER_PENDING_MAX)) {
		informer_set_flush(-1, 0, set);
		if (inf->request_gen != gen)
			return 1;	/* the commit failed: every informer starts over */
	}
	return 0;
}

/* Applies bytes of the watch stream. */
static void
informer_watch_feed(struct informer *inf, const char *data, size_t len)
{
	struct json_stream *stream = inf->stream;
	char *error = NULL;
	int rc;

	/* An event may start a new watch (a relist after 410 Gone) with a new stream: this
	 * one lives until its feed returns. */
	inf->feeding = stream;
	rc = json_stream_feed(stream, data, len, informer_watch_value, inf, &error);
	inf->feeding = NULL;
	if (inf->stream != stream) {
		json_stream_free(stream);
		free(error);
		return;
	}
	if (rc != 0) {
		char *why = xasprintf("watch: %s", error);
		free(error);
		INFORMER_COUNT(inf, errors);
		informer_retry(inf, why);
		free(why);
	}
}

/* Applies the watch bytes inf holds, if any. They are taken first: applying them may drop
 * the request they came with (a relist), which drops what it holds. */
static void
informer_drain(struct informer *inf)
{
	struct buf held = inf->held;

	if (held.len == 0)
		return;
	buf_init(&inf->held);
	informer_watch_feed(inf, held.data, held.len);
	buf_free(&held);
}

/* The batch period has passed: every informer applies what it holds, in one transaction
 * (committed at the end of this loop turn). */
static void
informer_set_drain(evutil_socket_t fd, short what, void *arg)
{
	struct informer_set *set = arg;
	struct informer *inf;

	(void)fd;
	(void)what;
	TAILQ_FOREACH(inf, &set->informers, link)
		informer_drain(inf);
}

/* Bytes of the watch stream arrived. With a batch period, those of the resources it holds
 * wait until the period ends and are then applied with every other informer's, in one
 * transaction: a thousand kubelets renewing their Leases every 10 s would otherwise cost
 * a commit (WAL writes, file locks) each. A WatchList's initial events are applied at
 * once (the sync waits for them), and so is what would hold more than INFORMER_HELD_MAX. */
static void
informer_watch_data(const char *data, size_t len, void *arg)
{
	struct informer *inf = arg;
	struct informer_set *set = inf->set;
	unsigned long gen;

	inf->down_since = 0;
	if (set->batch_period > 0 && !inf->initial_events &&
	    (set->held == NULL || set->held(inf->resource)) &&
	    inf->held.len + len <= INFORMER_HELD_MAX) {
		buf_append(&inf->held, data, len);
		if (!evtimer_pending(set->drain_event, NULL)) {
			struct timeval tv = {
				(time_t)set->batch_period,
				(suseconds_t)((set->batch_period - (time_t)set->batch_period) * 1e6),
			};
			evtimer_add(set->drain_event, &tv);
		}
		return;
	}
	gen = inf->request_gen;
	informer_drain(inf);
	if (inf->request_gen == gen)	/* else the bytes are the dropped watch's */
		informer_watch_feed(inf, data, len);
}

/* The watch ended: normally by its timeout (watch again at once), or with an error. */
static void
informer_watch_done(const struct client_response *resp, void *arg)
{
	struct informer *inf = arg;
	unsigned long gen = inf->request_gen;
	char *error = NULL;

	inf->request = NULL;
	/* What it holds came before the end. Applied, it may have dropped the watch (a
	 * relist): then this end is no longer the informer's. */
	informer_drain(inf);
	if (inf->request_gen != gen)
		return;
	inf->request_gen++;
	evtimer_del(inf->watchdog);
	if (resp->http_code == 200 && resp->transport_error == NULL) {
		if (json_stream_finish(inf->stream, &error) != 0) {
			char *why = xasprintf("watch: %s", error);
			free(error);
			INFORMER_COUNT(inf, errors);
			informer_retry(inf, why);
			free(why);
			return;
		}
		if (inf->initial_events) {
			char *why = xasprintf("watch-list: the stream ended after %lu events without "
			    "the %s bookmark", inf->watch_events, INFORMER_INITIAL_EVENTS_END);
			INFORMER_COUNT(inf, errors);
			informer_watch_list_refused(inf, why);
			free(why);
			return;
		}
		log_v(4, "informer resource=%s: watch ended after %lu events", inf->resource->name,
		    inf->watch_events);
		if (inf->watch_events > 0)
			inf->failures = 0;
		informer_watch(inf);
		return;
	}
	if (inf->initial_events && resp->transport_error == NULL) {
		struct api_status st;
		char *why;

		api_status_from_response(resp->http_code, resp->body, resp->len,
		    resp->retry_after, &st);
		why = xasprintf("watch-list failed: HTTP %d %s: %s", resp->http_code,
		    api_reason_name(st.reason), st.message != NULL ? st.message : "");
		informer_watch_list_failed(inf, &st, why);
		free(why);
		api_status_clear(&st);
		return;
	}
	informer_failed(inf, inf->initial_events ? "watch-list" : "watch", resp);
}

/* Sends a WATCH from resource_version (NULL: "") with query, which starts with '&'. */
static void
informer_watch_from(struct informer *inf, const char *resource_version, const char *query)
{
	char *rv, *path;
	int timeout = INFORMER_WATCH_TIMEOUT_MIN + (int)(random() % INFORMER_WATCH_TIMEOUT_MIN);

	if (inf->stream != inf->feeding)
		json_stream_free(inf->stream);
	inf->stream = json_stream_new(INFORMER_MAX_EVENT);
	inf->watch_events = 0;
	rv = curl_easy_escape(NULL, resource_version != NULL ? resource_version : "", 0);
	path = xasprintf("%s?watch=1&allowWatchBookmarks=true%s&resourceVersion=%s"
	    "&timeoutSeconds=%d", inf->resource->path, query, rv, timeout);
	curl_free(rv);
	INFORMER_COUNT(inf, watches);
	informer_send(inf, path, 1);
	free(path);
	inf->heard_at = time_monotonic();
	{
		struct timeval tv = { INFORMER_WATCH_SILENCE_MAX, 0 };
		evtimer_add(inf->watchdog, &tv);
	}
}

/* Watches from the informer's resourceVersion. */
static void
informer_watch(struct informer *inf)
{
	informer_watch_from(inf, inf->resource_version, "");
}

/* Syncs by WatchList: a new list epoch, then a WATCH that sends the initial events, from
 * the last resourceVersion unless it is known to be gone (then "": the newest state). */
static void
informer_watch_list(struct informer *inf)
{
	struct informer_set *set = inf->set;
	char *error = NULL;

	if (informer_set_begin(set) != 0)
		return;
	if (store_begin_list(set->store, inf->resource, &inf->epoch, &error) != 0) {
		informer_set_write_failed(set, error);
		return;
	}
	inf->sync_objects = 0;
	inf->initial_events = 1;
	set->stats.watch_lists++;
	informer_watch_from(inf, inf->rv_unavailable ? NULL : inf->resource_version,
	    "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan");
}

/* Looks at the watch INFORMER_WATCH_SILENCE_MAX after its last event or bookmark (or
 * its start): one that heard nothing since is presumed dead and started again. */
static void
informer_watchdog_expired(evutil_socket_t fd, short what, void *arg)
{
	struct informer *inf = arg;
	double silent = time_monotonic() - inf->heard_at;
	char *why;

	(void)fd;
	(void)what;
	if (silent < INFORMER_WATCH_SILENCE_MAX) {
		double left = INFORMER_WATCH_SILENCE_MAX - silent;
		struct timeval tv = { (time_t)left, (suseconds_t)((left - (time_t)left) * 1e6) };

		evtimer_add(inf->watchdog, &tv);
		return;
	}
	INFORMER_COUNT(inf, errors);
	why = xasprintf("watch: no event and no bookmark for %.0fs (the server sends a "
	    "bookmark each minute); the watch is presumed dead", silent);
	informer_retry_within(inf, why, INFORMER_UNREACHABLE_BACKOFF_MAX_MS);
	free(why);
}

/* --- metrics ------------------------------------------------------------------------- */

static const char *const informer_resource_label[] = { "resource", NULL };

static const struct metrics_spec informer_metric_specs[INFORMER_METRIC_COUNT] = {
	[INFORMER_METRIC_EVENTS] = { METRICS_COUNTER, "sqlkcm_informer_events_total",
	    "Watch events and list items the informer applied to the cache.",
	    informer_resource_label, NULL, 0 },
	[INFORMER_METRIC_LISTS] = { METRICS_COUNTER, "sqlkcm_informer_lists_total",
	    "LIST requests (one per page) the informer sent.",
	    informer_resource_label, NULL, 0 },
	[INFORMER_METRIC_WATCHES] = { METRICS_COUNTER, "sqlkcm_informer_watches_total",
	    "WATCH requests the informer sent.", informer_resource_label, NULL, 0 },
	[INFORMER_METRIC_RELISTS] = { METRICS_COUNTER, "sqlkcm_informer_relists_total",
	    "Lists begun again because the resourceVersion expired (410 Gone).",
	    informer_resource_label, NULL, 0 },
	[INFORMER_METRIC_ERRORS] = { METRICS_COUNTER, "sqlkcm_informer_errors_total",
	    "Failed requests, bad events and objects the cache did not take.",
	    informer_resource_label, NULL, 0 },
	[INFORMER_METRIC_SYNCED] = { METRICS_GAUGE, "sqlkcm_informer_synced",
	    "1 once the informer's cache holds a complete list, 0 before.",
	    informer_resource_label, NULL, 0 },
	[INFORMER_METRIC_RV_TIME] = { METRICS_GAUGE,
	    "sqlkcm_informer_last_resource_version_timestamp_seconds",
	    "Unix time the informer last advanced its resourceVersion (an event, a bookmark "
	    "or a list); 0 before the first.", informer_resource_label, NULL, 0 },
	[INFORMER_METRIC_DOWN] = { METRICS_GAUGE, "sqlkcm_informer_down_seconds",
	    "Seconds the informer has been failing to watch or list (backing off after an "
	    "error, a dead connection or a silent watch); 0 while it is not.",
	    informer_resource_label, NULL, 0 },
};

/* Reads an unsigned long count for a metric. */
static double
informer_read_count(void *arg)
{
	return (double)*(const unsigned long *)arg;
}

/* Reads an int flag for a metric. */
static double
informer_read_flag(void *arg)
{
	return *(const int *)arg != 0;
}

/* Seconds an informer has been down, for its metric. */
static double
informer_read_down(void *arg)
{
	const struct informer *inf = arg;

	return inf->down_since > 0 ? time_monotonic() - inf->down_since : 0;
}

/* Returns the family spec describes in registry, or NULL (logged). */
static struct metrics_family *
informer_metric_family(struct metrics_registry *registry, const struct metrics_spec *spec)
{
	struct metrics_family *family;
	char *error = NULL;

	family = metrics_family_register(registry, spec, &error);
	if (family == NULL) {
		log_error("informers: no metric %s: %s", spec->name, error);
		free(error);
	}
	return family;
}

/* Creates inf's series in the set's registry, reading its counts. */
static void
informer_register_metrics(struct informer *inf)
{
	const char *values[] = { inf->resource->name, NULL };
	unsigned long *counts[] = {
		[INFORMER_METRIC_EVENTS] = &inf->stats.events,
		[INFORMER_METRIC_LISTS] = &inf->stats.lists,
		[INFORMER_METRIC_WATCHES] = &inf->stats.watches,
		[INFORMER_METRIC_RELISTS] = &inf->stats.relists,
		[INFORMER_METRIC_ERRORS] = &inf->stats.errors,
	};

	for (int i = 0; i < INFORMER_METRIC_COUNT; i++) {
		struct metrics_family *family;

		family = informer_metric_family(inf->set->metrics, &informer_metric_specs[i]);
		if (family == NULL)
			continue;
		inf->metrics[i] = metrics_series_get(family, values);
		if (i <= INFORMER_METRIC_ERRORS)
			metrics_counter_set_callback(inf->metrics[i], informer_read_count,
			    counts[i]);
	}
	metrics_gauge_set_callback(inf->metrics[INFORMER_METRIC_SYNCED], informer_read_flag,
	    &inf->synced);
	metrics_gauge_set_callback(inf->metrics[INFORMER_METRIC_DOWN], informer_read_down, inf);
}

/* Detaches inf's series from its counts, which are about to be freed. */
static void
informer_unregister_metrics(struct informer *inf)
{
	for (int i = 0; i <= INFORMER_METRIC_ERRORS; i++)
		metrics_counter_set_callback(inf->metrics[i], NULL, NULL);
	metrics_gauge_set_callback(inf->metrics[INFORMER_METRIC_SYNCED], NULL, NULL);
	metrics_gauge_set_callback(inf->metrics[INFORMER_METRIC_DOWN], NULL, NULL);
}

/* Publishes the set's and its informers' counts in registry. */
void
informer_set_register_metrics(struct informer_set *set, struct metrics_registry *registry)
{
	static const struct metrics_spec batches = { METRICS_COUNTER,
	    "sqlkcm_informer_batches_total",
	    "Transactions the informers committed to the cache (one per loop turn that "
	    "applied something).", NULL, NULL, 0 };
	static const struct metrics_spec batch_failures = { METRICS_COUNTER,
	    "sqlkcm_informer_batch_failures_total",
	    "Transactions of the informers that failed to commit; the informers then "
	    "restart from the stored state.", NULL, NULL, 0 };
	struct metrics_family *family;
	struct informer *inf;

	set->metrics = registry;
	if ((family = informer_metric_family(registry, &batches)) != NULL) {
		set->batches = metrics_series_get(family, NULL);
		metrics_counter_set_callback(set->batches, informer_read_count,
		    &set->stats.batches);
	}
	if ((family = informer_metric_family(registry, &batch_failures)) != NULL) {
		set->batch_failures = metrics_series_get(family, NULL);
		metrics_counter_set_callback(set->batch_failures, informer_read_count,
		    &set->stats.batch_failures);
	}
	TAILQ_FOREACH(inf, &set->informers, link)
		informer_register_metrics(inf);
}

/* --- the set --------------------------------------------------------------------------- */

struct informer_set *
informer_set_new(struct event_base *base, struct client *client, struct store *store)
{
	struct informer_set *set = xcalloc(1, sizeof *set);

	if (event_base_get_npriorities(base) < PRIORITY_COUNT)
		event_base_priority_init(base, PRIORITY_COUNT);
	set->base = base;
	set->client = client;
	set->store = store;
	TAILQ_INIT(&set->informers);
	TAILQ_INIT(&set->handlers);
	TAILQ_INIT(&set->pending);
	set->flush_event = event_new(base, -1, 0, informer_set_flush, set);
	event_priority_set(set->flush_event, PRIORITY_FLUSH);
	set->drain_event = evtimer_new(base, informer_set_drain, set);
	return set;
}

void
informer_set_batch_period(struct informer_set *set, double seconds,
    int (*held)(const struct resource *r))
{
	set->batch_period = seconds > 0 ? seconds : 0;
	set->held = held;
}

void
informer_set_watch_list(struct informer_set *set, enum informer_watch_list mode)
{
	set->watch_list = mode;
}

void
informer_set_confirm_warm_start(struct informer_set *set, int confirm)
{
	set->confirm_warm_start = confirm;
}

int
informer_watch_list_parse(const char *text, enum informer_watch_list *mode)
{
	if (strcmp(text, "auto") == 0)
		*mode = INFORMER_WATCH_LIST_AUTO;
	else if (strcmp(text, "true") == 0)
		*mode = INFORMER_WATCH_LIST_ON;
	else if (strcmp(text, "false") == 0)
		*mode = INFORMER_WATCH_LIST_OFF;
	else
		return -1;
	return 0;
}

void
informer_set_add(struct informer_set *set, const struct resource *r)
{
	struct informer *inf = xcalloc(1, sizeof *inf);

	inf->set = set;
	inf->resource = r;
	inf->retry_timer = evtimer_new(set->base, informer_retry_expired, inf);
	inf->watchdog = evtimer_new(set->base, informer_watchdog_expired, inf);
	inf->prune_event = event_new(set->base, -1, 0, informer_prune, inf);
	inf->page_event = event_new(set->base, -1, 0, informer_list_apply, inf);
	/* Last in a loop turn, as the flush: the request for the next page goes out first
	 * (curl sends it from its timer, a turn after the request is queued). */
	event_priority_set(inf->page_event, PRIORITY_FLUSH);
	TAILQ_INSERT_TAIL(&set->informers, inf, link);
	if (set->metrics != NULL)
		informer_register_metrics(inf);
}

void
informer_set_add_handlers(struct informer_set *set, const struct informer_handlers *h)
{
	struct handler *entry = xcalloc(1, sizeof *entry);

	entry->h = *h;
	TAILQ_INSERT_TAIL(&set->handlers, entry, link);
}

/* Starts one informer: from its stored state when it has one. */
static int
informer_start(struct informer *inf, char **error)
{
	struct informer_set *set = inf->set;

	{
		struct store_informer_state st;

		if (store_get_informer(set->store, inf->resource, &st, error) != 0)
			return -1;
		inf->epoch = st.list_epoch;
		if (st.synced && st.resource_version != NULL) {
			/* A warm start: the cache is whole up to this resourceVersion. */
			inf->resource_version = st.resource_version;
			st.resource_version = NULL;
			if (set->confirm_warm_start) {
				log_info("informer resource=%s: the cache holds %lld objects at "
				    "resourceVersion=%s; syncing from there before controllers act",
				    inf->resource->name, store_count(set->store, inf->resource),
				    inf->resource_version);
				informer_sync(inf);
			} else {
				inf->synced = 1;
				log_info("informer resource=%s: resuming the watch at "
				    "resourceVersion=%s objects=%lld", inf->resource->name,
				    inf->resource_version, store_count(set->store, inf->resource));
				informer_watch(inf);
				/* Rows an interrupted prune left behind go now. */
				inf->prune_epoch = inf->epoch;
				event_active(inf->prune_event, EV_TIMEOUT, 0);
			}
		} else {
			informer_sync(inf);
		}
		store_informer_state_clear(&st);
	}
	return 0;
}

int
informer_set_start(struct informer_set *set, char **error)
{
	struct informer *inf;

	if (set->stopping)
		return 0;	/* stopped before it started (a signal during discovery) */
	TAILQ_FOREACH(inf, &set->informers, link) {
		if (informer_start(inf, error) != 0)
			return -1;
	}
	set->started = 1;
	return 0;
}

int
informer_set_add_started(struct informer_set *set, const struct resource *r, char **error)
{
	struct informer *inf;

	if (informer_find(set, r) != NULL)
		return 0;
	informer_set_add(set, r);
	inf = TAILQ_LAST(&set->informers, informer_queue);
	if (!set->started || set->stopping)
		return 0;
	return informer_start(inf, error);
}

int
informer_set_has(const struct informer_set *set, const struct resource *r)
{
	return informer_find(set, r) != NULL;
}

/* Frees an informer taken off its set's list. */
static void
informer_free(struct informer *inf)
{
	informer_unregister_metrics(inf);
	informer_cancel(inf);
	event_free(inf->retry_timer);
	event_free(inf->watchdog);
	event_free(inf->prune_event);
	event_free(inf->page_event);
	json_stream_free(inf->stream);
	buf_free(&inf->held);
	free(inf->resource_version);
	free(inf->continue_token);
	free(inf->list_rv);
	free(inf);
}

void
informer_set_remove(struct informer_set *set, const struct resource *r)
{
	struct informer *inf = informer_find(set, r);

	if (inf == NULL)
		return;
	/* What it applied this turn is committed first; its handlers hear of it. */
	informer_set_commit(set);
	TAILQ_REMOVE(&set->informers, inf, link);
	informer_free(inf);
}

void
informer_set_stop(struct informer_set *set)
{
	struct informer *inf;

	/* What the watches brought is applied and committed below, not dropped. */
	evtimer_del(set->drain_event);
	informer_set_drain(-1, 0, set);
	set->stopping = 1;
	TAILQ_FOREACH(inf, &set->informers, link) {
		informer_cancel(inf);
		evtimer_del(inf->retry_timer);
		evtimer_del(inf->watchdog);
		event_del(inf->prune_event);
	}
	informer_set_flush(-1, 0, set);
	event_del(set->flush_event);
}

void
informer_set_commit(struct informer_set *set)
{
	if (set != NULL && set->in_transaction)
		informer_set_flush(-1, 0, set);
}

int
informer_set_synced(const struct informer_set *set)
{
	const struct informer *inf;

	TAILQ_FOREACH(inf, &set->informers, link) {
		if (!inf->synced)
			return 0;
	}
	return 1;
}

void
informer_set_resync(struct informer_set *set, const struct resource *r, const char *why)
{
	struct informer *inf;

	TAILQ_FOREACH(inf, &set->informers, link) {
		if (inf->resource != r || !inf->synced || set->stopping)
			continue;
		log_info("informer resource=%s: %s; syncing again from the stored state before "
		    "the controllers act", r->name, why);
		informer_restart(inf, why);
	}
}

int
informer_set_synced_for(const struct informer_set *set,
    int (*wanted)(const struct resource *r, void *arg), void *arg)
{
	const struct informer *inf;

	TAILQ_FOREACH(inf, &set->informers, link) {
		if (!inf->synced && wanted(inf->resource, arg))
			return 0;
	}
	return 1;
}

/* Lists the resources whose informers have not synced yet. */
int
informer_set_describe_unsynced(const struct informer_set *set, struct buf *out)
{
	const struct informer *inf;
	int n = 0;

	TAILQ_FOREACH(inf, &set->informers, link) {
		if (inf->synced)
			continue;
		buf_printf(out, "%s%s", n > 0 ? "," : "", inf->resource->name);
		n++;
	}
	return n;
}

/* Lists the informers that are down, with how long and how long since their last event. */
int
informer_set_describe_down(const struct informer_set *set, struct buf *out)
{
	const struct informer *inf;
	double now = time_monotonic();
	int n = 0;

	TAILQ_FOREACH(inf, &set->informers, link) {
		if (inf->down_since == 0)
			continue;
		buf_printf(out, "%s%s down for %.0fs", n > 0 ? ", " : "", inf->resource->name,
		    now - inf->down_since);
		if (inf->heard_at > 0)
			buf_printf(out, " (last event or bookmark %.0fs ago)", now - inf->heard_at);
		n++;
	}
	return n;
}

const struct informer_stats *
informer_set_stats(const struct informer_set *set)
{
	return &set->stats;
}

void
informer_set_free(struct informer_set *set)
{
	struct informer *inf;
	struct handler *h;
	struct pending *p;

	if (set == NULL)
		return;
	if (set->in_transaction)
		store_abandon(set->store);
	while ((inf = TAILQ_FIRST(&set->informers)) != NULL) {
		TAILQ_REMOVE(&set->informers, inf, link);
		informer_free(inf);
	}
	while ((h = TAILQ_FIRST(&set->handlers)) != NULL) {
		TAILQ_REMOVE(&set->handlers, h, link);
		free(h);
	}
	while ((p = TAILQ_FIRST(&set->pending)) != NULL) {
		TAILQ_REMOVE(&set->pending, p, link);
		pending_free(p);
	}
	metrics_counter_set_callback(set->batches, NULL, NULL);
	metrics_counter_set_callback(set->batch_failures, NULL, NULL);
	event_free(set->flush_event);
	event_free(set->drain_event);
	free(set);
}

/* --- without a client: tests play the apiserver -------------------------------------- */

/* Returns r's informer, or NULL. */
static struct informer *
informer_find(const struct informer_set *set, const struct resource *r)
{
	struct informer *inf;

	TAILQ_FOREACH(inf, &set->informers, link) {
		if (inf->resource == r)
			return inf;
	}
	return NULL;
}

const char *
informer_set_request_path(const struct informer_set *set, const struct resource *r)
{
	const struct informer *inf = informer_find(set, r);

	return inf != NULL ? inf->offline_path : NULL;
}

void
informer_set_receive(struct informer_set *set, const struct resource *r, const char *data,
    size_t len)
{
	struct informer *inf = informer_find(set, r);

	if (inf != NULL && inf->offline_path != NULL && inf->streaming)
		informer_watch_data(data, len, inf);
}

void
informer_set_respond(struct informer_set *set, const struct resource *r,
    const struct client_response *resp)
{
	struct informer *inf = informer_find(set, r);

	if (inf == NULL || inf->offline_path == NULL)
		return;
	free(inf->offline_path);
	inf->offline_path = NULL;
	if (inf->streaming)
		informer_watch_done(resp, inf);
	else
		informer_list_done(resp, inf);
}
