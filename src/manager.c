/*
 * manager.c - runs the enabled controllers: their workqueues, their handlers on the
 * informers' events, their syncs, and the executor that carries the syncs out.
 *
 * As kube-controller-manager's controllers, each controller has a workqueue of keys and
 * a number of workers. Here a worker is a slot: a key taken from the queue is synced on
 * the loop (sync only reads the cache, quickly), and its result handed to the executor,
 * which may take many loop turns; the key stays "processing" until the executor is done
 * with it, so the same key is never worked on twice at once and at most `workers` keys
 * are in flight per controller. The outcome decides the key's next turn: a failure is
 * re-added with the queue's rate limiting, a success forgets the key's backoff, and a
 * result may ask to be looked at again after some seconds.
 *
 * A sync whose bookkeeping failed on the store (a full disk, an I/O error, a lock not
 * taken) failed for no reason of its key's, and backing it off as an apiserver error
 * would leave it waiting for minutes after the store is well. It is held instead
 * (workqueue_hold), no failure counted: once the store has committed again (the
 * informers' resync does) and the controller's informers are synced, every held key is
 * added at once with its backoff forgotten, at least HOLD_MIN_SECONDS after the first was
 * held; if nothing shows the store writing again, they are tried after HOLD_MAX_SECONDS.
 *
 * Syncs start only when every informer has synced (a controller acting on half a cache
 * would create pods it already has); then every key is queued once, since a restart that
 * resumes watches from the stored resourceVersion sees no ADDED events for what it holds.
 *
 * Before a sync reads the cache, the informers' pending transaction is committed, so the
 * sync sees every event received so far. The handlers' writes (expectations observed)
 * go in one transaction per committed batch of events.
 *
 * Expectations left by an earlier run (the process was killed with requests out) keep
 * their owners from creating or deleting: the cache may not show yet what those requests
 * did. They are released per owner as soon as a live LIST of the owner's dependents, read
 * after the restart, shows the same active ones as the cache (the controller type's
 * recovery says which owners, which dependents and which are active): whatever the earlier run's
 * requests did is then in the cache, and whatever they did not do never will be. Waiting
 * out the five-minute timeout instead would stall every owner a crash interrupted. Only
 * the inherited row is released: once a sync of this run has set expectations of its
 * own (the inherited ones had timed out), the recovery of that owner ends, since a LIST
 * read before this run's requests took effect says nothing about them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "client.h"
#include "controller.h"
#include "executor.h"
#include "expectations.h"
#include "informer.h"
#include "log.h"
#include "manager.h"
#include "registry.h"
#include "resource.h"
#include "restops.h"
#include "selector.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"
#include "workqueue.h"

struct recovery;

/* Keys held back by a store failure wait at least HOLD_MIN_SECONDS (a store that fails
 * again is not hammered), and are tried again after HOLD_MAX_SECONDS even if no commit
 * has shown the store writing again (nothing else may be writing). */
#define HOLD_MIN_SECONDS 1.0
#define HOLD_MAX_SECONDS 10.0

/* One running controller. */
struct running {
	struct manager *m;
	struct controller *controller;
	struct workqueue *queue;
	struct controller_queue adapter;
	int workers;
	int in_flight;
	int started;		/* its informers synced once: its workers run */
	int paused;		/* an informer of its syncs again: no key is taken */
	double held_since;	/* monotonic time its first held key was held */
};

struct manager {
	struct event_base *base;
	struct store *store;
	struct informer_set *informers;
	struct executor *executor;
	struct running *running;
	int nrunning;
	struct event *sync_check;	/* polls for the informers to be synced */
	struct client *client;		/* for the live reads of recovery */
	int recovering;			/* owners whose inherited expectations are checked */
	TAILQ_HEAD(, recovery) recoveries;
	int leading;		/* manager_start ran: controllers may start */
	int stopping;
	int in_transaction;		/* the handlers' batch transaction is open */
};

static void
queue_add(const char *key, void *arg)
{
	struct running *r = arg;

	workqueue_add(r->queue, key);
}

static void
queue_add_after(const char *key, double seconds, void *arg)
{
	struct running *r = arg;

	workqueue_add_after(r->queue, key, seconds);
}

/* --- informer handlers ----------------------------------------------------------------- */

static void
manager_on_event(const struct informer_event *ev, void *arg)
{
	struct manager *m = arg;
	char *error = NULL;
	double now = time_now();

	if (!m->in_transaction) {
		if (store_begin(m->store, &error) != 0) {
			log_error("controllers: %s", error);
			free(error);
		} else {
			m->in_transaction = 1;
		}
	}
	for (int i = 0; i < m->nrunning; i++) {
		struct running *r = &m->running[i];
		if (controller_watches(r->controller->type, ev->resource))
			r->controller->type->handle_event(r->controller, ev, now, &r->adapter);
	}
}

static void
manager_on_batch_end(void *arg)
{
	struct manager *m = arg;
	char *error = NULL;

	if (!m->in_transaction)
		return;
	m->in_transaction = 0;
	if (store_commit(m->store, &error) != 0) {
		log_error("controllers: committing observed expectations: %s", error);
		free(error);
		store_rollback(m->store);
	}
}

/* --- syncs ----------------------------------------------------------------------------- */

static void running_pump(struct running *r);
static void recovery_start(struct running *r);

/* Looks at the controllers again soon (sync_check), unless that is already due. */
static void
manager_check_soon(struct manager *m)
{
	struct timeval now = { 0, 0 };

	if (!evtimer_pending(m->sync_check, NULL))
		evtimer_add(m->sync_check, &now);
}

static void
sync_done(const char *key, const struct executor_outcome *outcome, void *arg)
{
	struct running *r = arg;

	r->in_flight--;
	if (r->controller->type->processed != NULL)
		r->controller->type->processed(r->controller, key,
		    workqueue_processing_seconds(r->queue, key),
		    outcome->failed || outcome->store_failed);
	if (outcome->store_failed) {
		/* The store failed, not the apiserver: the key waits for the store to
		 * recover (sync_check), without a backoff that would outlast it. */
		if (workqueue_held(r->queue) == 0)
			r->held_since = time_monotonic();
		workqueue_hold(r->queue, key);
		log_v(2, "%s %s: held back until the cache database writes again",
		    r->controller->type->name, key);
		manager_check_soon(r->m);
	} else if (outcome->failed) {
		workqueue_add_rate_limited(r->queue, key);
	} else {
		workqueue_forget(r->queue, key);
		if (outcome->retry_now)
			workqueue_add(r->queue, key);
		else if (outcome->requeue_after > 0)
			workqueue_add_after(r->queue, key, outcome->requeue_after);
	}
	workqueue_done(r->queue, key);
	running_pump(r);
}

/* Syncs key and hands the result to the executor. */
static void
running_sync(struct running *r, const char *key)
{
	struct manager *m = r->m;
	struct sync_result result;
	char *error = NULL;

	memset(&result, 0, sizeof result);
	/* See every event received so far. */
	informer_set_commit(m->informers);
	if (r->controller->type->sync(r->controller, key, time_now(), &result, &error) != 0) {
		log_error("%s: syncing %s: %s", r->controller->type->name, key, error);
		free(error);
		sync_result_clear(&result);
		workqueue_add_rate_limited(r->queue, key);
		workqueue_done(r->queue, key);
		return;
	}
	r->in_flight++;
	if (executor_run(m->executor, r->controller, &result, sync_done, r, &error) != 0) {
		log_error("%s: carrying out %s: %s", r->controller->type->name, key, error);
		free(error);
		sync_result_clear(&result);
		r->in_flight--;
		workqueue_add_rate_limited(r->queue, key);
		workqueue_done(r->queue, key);
	}
}

/* True for the resources r's controller watches (for informer_set_synced_for). */
static int
wanted_by(const struct resource *resource, void *arg)
{
	const struct running *r = arg;

	return controller_watches(r->controller->type, resource);
}

/* True when every informer r's controller reads has synced. */
static int
running_synced(const struct running *r)
{
	return informer_set_synced_for(r->m->informers, wanted_by, (void *)r);
}

/* Takes keys while there are free workers, and none while one of the controller's
 * informers is syncing again (its cache is behind: a relist after a failed write, or a
 * resource discovery just found); sync_check takes over then. */
static void
running_pump(struct running *r)
{
	struct manager *m = r->m;
	const char *key;

	if (!m->leading || !r->started || m->stopping)
		return;
	if (!running_synced(r)) {
		if (!r->paused)
			log_info("controller=%s: waiting for its informers to sync again before "
			    "acting", r->controller->type->name);
		r->paused = 1;
		manager_check_soon(m);
		return;
	}
	while (r->in_flight < r->workers && workqueue_get(r->queue, &key) == 1)
		running_sync(r, key);
}

static void
queue_ready(struct workqueue *q, void *arg)
{
	struct running *r = arg;

	(void)q;
	running_pump(r);
}

static void
add_key(const char *key, void *arg)
{
	struct running *r = arg;

	workqueue_add(r->queue, key);
}

/* Adds r's held keys back (their backoff forgotten) once the store writes again; only
 * called while r's informers are synced. Returns whether keys are still held. */
static int
running_release_held(struct running *r)
{
	double held = time_monotonic() - r->held_since;
	int failing = store_writes_failing(r->m->store);
	size_t n;

	if (workqueue_held(r->queue) == 0)
		return 0;
	if (held < HOLD_MIN_SECONDS || (failing && held < HOLD_MAX_SECONDS))
		return 1;
	n = workqueue_release_held(r->queue);
	if (failing)
		log_warning("controller=%s: %zu keys held back by a failure of the cache "
		    "database for %.0f s are synced again; it has not written since",
		    r->controller->type->name, n, held);
	else
		log_info("controller=%s: the cache database writes again; %zu keys held back "
		    "by its failure are synced now", r->controller->type->name, n);
	return 0;
}

/* Starts each controller once its informers are synced (one that cannot sync, say a
 * resource it may not list, holds back no other), resumes the paused ones; until every
 * one runs, looks again soon. */
static void
sync_check(evutil_socket_t fd, short what, void *arg)
{
	struct manager *m = arg;
	struct timeval tv = { 0, 100 * 1000 };
	char *error = NULL;
	int waiting = 0;

	(void)fd;
	(void)what;
	if (m->stopping)
		return;
	m->leading = 1;
	informer_set_commit(m->informers);
	for (int i = 0; i < m->nrunning; i++) {
		struct running *r = &m->running[i];

		if (!running_synced(r)) {
			waiting = 1;
			continue;
		}
		if (r->started) {
			if (r->paused) {
				/* Synced again: the keys queued meanwhile are waiting. */
				log_info("controller=%s: caches synced again, resuming",
				    r->controller->type->name);
				r->paused = 0;
			}
			if (running_release_held(r))
				waiting = 1;
			running_pump(r);
			continue;
		}
		r->started = 1;
		log_info("controller=%s: caches synced, starting workers=%d",
		    r->controller->type->name, r->workers);
		recovery_start(r);
		if (r->controller->type->list_keys(r->controller, add_key, r, &error) != 0) {
			log_error("%s: listing keys: %s", r->controller->type->name, error);
			free(error);
			error = NULL;
		}
		running_pump(r);
	}
	if (waiting)
		evtimer_add(m->sync_check, &tv);
}

/* --- expectations inherited from an earlier run ---------------------------------------- */

/* One owner whose inherited expectations wait for the cache to agree with a live read. */
struct recovery {
	struct running *r;
	struct client_request *request;	/* the live read in flight, or NULL */
	TAILQ_ENTRY(recovery) link;
	char *key;
	char *owner_uid;
	double set_at;		/* when the inherited expectations were set */
	char *path;		/* the live LIST of its dependents */
	struct event *retry;
};

static void recovery_send(struct recovery *rc);

static void
recovery_free(struct recovery *rc)
{
	struct manager *m = rc->r->m;

	if (rc->request != NULL)
		client_cancel(rc->request);
	TAILQ_REMOVE(&m->recoveries, rc, link);
	m->recovering--;
	if (rc->retry != NULL)
		event_free(rc->retry);
	free(rc->key);
	free(rc->owner_uid);
	free(rc->path);
	free(rc);
}

/* Returns the uids of the active dependents the cache shows controlled by owner_uid,
 * sorted, one per line (malloc'd), by the controller's recovery query. */
static char *
cached_dependents(struct manager *m, const struct controller_recovery *rec,
    const char *owner_uid)
{
	sqlite3_stmt *stmt;
	struct buf b;

	buf_init(&b);
	if (sqlite3_prepare_v2(store_db(m->store), rec->cached_sql, -1, &stmt, NULL) != SQLITE_OK)
		return buf_detach(&b);
	sqlite3_bind_text(stmt, 1, owner_uid, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&b, "%s\n", sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	return buf_detach(&b);
}

static int
uid_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Returns the uids of the active objects in a live list controlled by owner_uid, as
 * cached_dependents does. */
static char *
live_dependents(const struct controller_recovery *rec, const cJSON *list,
    const char *owner_uid)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items"), *obj, *ref;
	const char **uids = xcalloc((size_t)cJSON_GetArraySize(items) + 1, sizeof *uids);
	struct buf b;
	int n = 0;

	buf_init(&b);
	cJSON_ArrayForEach(obj, items) {
		const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
		const cJSON *uid = cJSON_GetObjectItemCaseSensitive(meta, "uid");

		if (!cJSON_IsString(uid) || !rec->active(obj))
			continue;
		cJSON_ArrayForEach(ref, cJSON_GetObjectItemCaseSensitive(meta,
		    "ownerReferences")) {
			const cJSON *ruid = cJSON_GetObjectItemCaseSensitive(ref, "uid");
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")) &&
			    cJSON_IsString(ruid) && strcmp(ruid->valuestring, owner_uid) == 0)
				uids[n++] = uid->valuestring;
		}
	}
	qsort(uids, (size_t)n, sizeof *uids, uid_cmp);
	for (int i = 0; i < n; i++)
		buf_printf(&b, "%s\n", uids[i]);
	free(uids);
	return buf_detach(&b);
}

static void
recovery_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	recovery_send(arg);
}

/* Returns 1 if rc's owner still has the expectations it inherited: not replaced by a
 * sync of this run, nor deleted. */
static int
recovery_inherited(struct recovery *rc)
{
	long long adds, deletes;
	double set_at;
	char *error = NULL;
	int found;

	if (expectations_get(rc->r->controller->expectations, rc->key, &found, &adds, &deletes,
	    &set_at, &error) != 0) {
		log_error("%s %s: reading expectations: %s", rc->r->controller->type->name,
		    rc->key, error);
		free(error);
		return 1;	/* ask again later */
	}
	return found && set_at == rc->set_at;
}

/* The live list is in: release the expectations if the cache agrees, else read again. */
static void
recovery_done(const struct client_response *resp, void *arg)
{
	struct recovery *rc = arg;
	struct manager *m = rc->r->m;
	struct timeval again = { 1, 0 };
	cJSON *list = NULL;
	char *live = NULL, *cached = NULL, *error = NULL;
	int agree = 0;

	rc->request = NULL;
	if (!recovery_inherited(rc)) {
		log_v(2, "%s %s: this run has set expectations of its own; the earlier run's "
		    "are gone", rc->r->controller->type->name, rc->key);
		recovery_free(rc);
		return;
	}
	if (resp->http_code / 100 == 2 && (list = cJSON_ParseWithLength(resp->body,
	    resp->len)) != NULL) {
		/* What arrived before this response was applied is in the cache now. */
		informer_set_commit(m->informers);
		live = live_dependents(rc->r->controller->type->recovery, list, rc->owner_uid);
		cached = cached_dependents(m, rc->r->controller->type->recovery, rc->owner_uid);
		agree = strcmp(live, cached) == 0;
	}
	if (!agree || m->stopping) {
		free(live);
		free(cached);
		cJSON_Delete(list);
		if (m->stopping) {
			recovery_free(rc);
			return;
		}
		log_v(2, "%s %s: the cache does not show the earlier run's requests yet",
		    rc->r->controller->type->name, rc->key);
		evtimer_add(rc->retry, &again);
		return;
	}
	if (store_begin(m->store, &error) != 0 ||
	    expectations_delete(rc->r->controller->expectations, rc->key, &error) != 0 ||
	    store_commit(m->store, &error) != 0) {
		log_error("%s %s: releasing the earlier run's expectations: %s",
		    rc->r->controller->type->name, rc->key, error);
		free(error);
		store_rollback(m->store);
	} else {
		log_info("controller=%s key=%s: the cache shows every one of its %s the apiserver "
		    "has; released the expectations of the earlier run",
		    rc->r->controller->type->name, rc->key,
		    rc->r->controller->type->recovery->dependents);
		workqueue_add(rc->r->queue, rc->key);
	}
	free(live);
	free(cached);
	cJSON_Delete(list);
	recovery_free(rc);
}

static void
recovery_send(struct recovery *rc)
{
	struct timeval again = { 1, 0 };

	rc->request = client_send(rc->r->m->client, "GET", rc->path, NULL, NULL, 0,
	    recovery_done, rc);
	if (rc->request == NULL)
		evtimer_add(rc->retry, &again);
}

/* Starts recovery for every owner of r with expectations left by an earlier run. */
static void
recovery_start(struct running *r)
{
	struct manager *m = r->m;
	const struct controller_recovery *rec = r->controller->type->recovery;
	const struct resource *dependents;
	sqlite3_stmt *stmt;

	if (m->client == NULL || rec == NULL ||
	    (dependents = resource_find(rec->dependents)) == NULL ||
	    sqlite3_prepare_v2(store_db(m->store), rec->owners_sql, -1, &stmt, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(stmt, 1, r->controller->type->name, -1, SQLITE_STATIC);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(stmt, 2);
		cJSON *json = text != NULL ? cJSON_Parse(text) : NULL;
		struct selector *sel = selector_from_json(json, NULL);
		char *sel_text = sel != NULL ? selector_to_string(sel) : NULL;
		struct recovery *rc;
		struct buf path;

		cJSON_Delete(json);
		selector_free(sel);
		if (sel_text == NULL)
			continue;	/* no usable selector: the sync will say so */
		rc = xcalloc(1, sizeof *rc);
		rc->r = r;
		TAILQ_INSERT_TAIL(&m->recoveries, rc, link);
		m->recovering++;
		rc->key = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		rc->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 1));
		rc->set_at = sqlite3_column_double(stmt, 4);
		buf_init(&path);
		char *base = restops_path(dependents,
		    (const char *)sqlite3_column_text(stmt, 3), NULL, NULL, NULL);
		if (base == NULL) {
			free(sel_text);
			buf_free(&path);
			recovery_free(rc);
			continue;
		}
		buf_append_str(&path, base);
		free(base);
		restops_append_query(&path, "labelSelector", sel_text);
		free(sel_text);
		rc->path = buf_detach(&path);
		rc->retry = evtimer_new(m->base, recovery_retry, rc);
		log_info("controller=%s key=%s: expectations left by an earlier run; checking "
		    "the cache against the apiserver", r->controller->type->name, rc->key);
		recovery_send(rc);
	}
	sqlite3_finalize(stmt);
}

/* --- the manager ----------------------------------------------------------------------- */

void
manager_add_informers(const int *enabled, struct informer_set *informers)
{
	for (int i = 0; i < resource_count; i++) {
		const struct resource *res = resource_all[i];
		int needed = 0;

		for (int t = 0; t < controller_type_count; t++)
			needed |= enabled[t] && controller_watches(controller_types[t], res);
		if (needed)
			informer_set_add(informers, res);
	}
}

struct manager *
manager_new(struct event_base *base, struct store *store, struct informer_set *informers,
    struct executor *executor, const struct manager_options *options, char **error)
{
	struct manager *m = xcalloc(1, sizeof *m);
	struct informer_handlers h = { manager_on_event, manager_on_batch_end, m };

	m->client = options->client;
	TAILQ_INIT(&m->recoveries);
	m->base = base;
	m->store = store;
	m->informers = informers;
	m->executor = executor;
	m->running = xcalloc((size_t)controller_type_count, sizeof *m->running);
	for (int i = 0; i < controller_type_count; i++) {
		const struct controller_type *t = controller_types[i];
		struct running *r;
		struct workqueue_options qo;

		if (!options->enabled[i])
			continue;
		r = &m->running[m->nrunning];
		r->m = m;
		r->controller = controller_new(t, store,
		    options->configs != NULL ? &options->configs[i] : NULL, error);
		if (r->controller == NULL) {
			manager_free(m);
			return NULL;
		}
		m->nrunning++;
		r->workers = options->workers != NULL && options->workers[i] > 0 ?
		    options->workers[i] : t->default_workers;
		memset(&qo, 0, sizeof qo);
		qo.ready = queue_ready;
		qo.arg = r;
		qo.priority = -1;
		qo.metrics = options->metrics;
		controller_queue_options(t, &qo);
		r->queue = workqueue_new(base, t->name, &qo);
		r->adapter.add = queue_add;
		r->adapter.add_after = queue_add_after;
		r->adapter.arg = r;
	}
	if (m->nrunning > 0)
		informer_set_add_handlers(informers, &h);
	m->sync_check = evtimer_new(base, sync_check, m);
	return m;
}

void
manager_start(struct manager *m)
{
	if (m->nrunning > 0)
		event_active(m->sync_check, EV_TIMEOUT, 0);
}

int
manager_stop(struct manager *m)
{
	int in_flight = 0;

	m->stopping = 1;
	evtimer_del(m->sync_check);
	for (int i = 0; i < m->nrunning; i++) {
		workqueue_shut_down(m->running[i].queue);
		in_flight += m->running[i].in_flight;
	}
	return in_flight;
}

void
manager_free(struct manager *m)
{
	if (m == NULL)
		return;
	while (!TAILQ_EMPTY(&m->recoveries))
		recovery_free(TAILQ_FIRST(&m->recoveries));
	for (int i = 0; i < m->nrunning; i++) {
		workqueue_free(m->running[i].queue);
		controller_free(m->running[i].controller);
	}
	if (m->sync_check != NULL)
		event_free(m->sync_check);
	free(m->running);
	free(m);
}
