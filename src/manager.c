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
 * Syncs start only when every informer has synced (a controller acting on half a cache
 * would create pods it already has); then every key is queued once, since a restart that
 * resumes watches from the stored resourceVersion sees no ADDED events for what it holds.
 *
 * Before a sync reads the cache, the informers' pending transaction is committed, so the
 * sync sees every event received so far. The handlers' writes (expectations observed)
 * go in one transaction per committed batch of events.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "controller.h"
#include "executor.h"
#include "informer.h"
#include "log.h"
#include "manager.h"
#include "resource.h"
#include "store.h"
#include "util.h"
#include "workqueue.h"

/* One running controller. */
struct running {
	struct manager *m;
	struct controller *controller;
	struct workqueue *queue;
	struct controller_queue adapter;
	int workers;
	int in_flight;
};

struct manager {
	struct event_base *base;
	struct store *store;
	struct informer_set *informers;
	struct executor *executor;
	struct running *running;
	int nrunning;
	struct event *sync_check;	/* polls for the informers' first sync */
	int started;
	int stopping;
	int in_transaction;		/* the handlers' batch transaction is open */
};

static double
wall_now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

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

/* Returns 1 if controller type t watches resource. */
static int
watches(const struct controller_type *t, const struct resource *resource)
{
	for (const char *const *name = t->resources; *name != NULL; name++) {
		if (strcmp(*name, resource->name) == 0)
			return 1;
	}
	return 0;
}

/* --- informer handlers ----------------------------------------------------------------- */

static void
manager_on_event(const struct informer_event *ev, void *arg)
{
	struct manager *m = arg;
	char *error = NULL;
	double now = wall_now();

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
		if (watches(r->controller->type, ev->resource))
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

static void
sync_done(const char *key, const struct executor_outcome *outcome, void *arg)
{
	struct running *r = arg;

	r->in_flight--;
	if (outcome->failed) {
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
	if (r->controller->type->sync(r->controller, key, wall_now(), &result, &error) != 0) {
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

/* Takes keys while there are free workers. */
static void
running_pump(struct running *r)
{
	const char *key;

	if (!r->m->started || r->m->stopping)
		return;
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

/* Starts the controllers once the informers are synced; until then, looks again soon. */
static void
sync_check(evutil_socket_t fd, short what, void *arg)
{
	struct manager *m = arg;
	struct timeval tv = { 0, 100 * 1000 };
	char *error = NULL;

	(void)fd;
	(void)what;
	if (m->stopping)
		return;
	if (!informer_set_synced(m->informers)) {
		evtimer_add(m->sync_check, &tv);
		return;
	}
	informer_set_commit(m->informers);
	m->started = 1;
	for (int i = 0; i < m->nrunning; i++) {
		struct running *r = &m->running[i];
		log_info("controller=%s: caches synced, starting workers=%d",
		    r->controller->type->name, r->workers);
		if (r->controller->type->list_keys(r->controller, add_key, r, &error) != 0) {
			log_error("%s: listing keys: %s", r->controller->type->name, error);
			free(error);
			error = NULL;
		}
		running_pump(r);
	}
}

/* --- the manager ----------------------------------------------------------------------- */

void
manager_add_informers(const int *enabled, struct informer_set *informers)
{
	for (int i = 0; i < resource_count; i++) {
		const struct resource *res = resource_all[i];
		int needed = 0;

		for (int t = 0; t < controller_type_count; t++)
			needed |= enabled[t] && watches(controller_types[t], res);
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
		r->controller = controller_new(t, store, error);
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
	for (int i = 0; i < m->nrunning; i++) {
		workqueue_free(m->running[i].queue);
		controller_free(m->running[i].controller);
	}
	if (m->sync_check != NULL)
		event_free(m->sync_check);
	free(m->running);
	free(m);
}
