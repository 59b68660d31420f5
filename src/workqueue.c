/*
 * workqueue.c - client-go's rate-limiting workqueue of string keys, on one libevent loop.
 *
 * Every key the queue knows about has one item in a hash table, and an item says what
 * the key is doing:
 *
 *   dirty       the key must be processed (again): it was added and not yet got;
 *   queued      it is in the FIFO, waiting for workqueue_get (dirty and not processing);
 *   processing  a consumer got it and has not called workqueue_done;
 *   waiting     it is in the delay heap, to be added at ready_at;
 *   failures    its rate-limited adds since it was last forgotten;
 *   held        its last processing failed on the local store (the cache database), not
 *               on the apiserver: it waits for workqueue_release_held, its failures not
 *               counting that one.
 *
 * Invariants:
 * - queued == dirty && !processing: a key is in the FIFO at most once and never while it
 *   is processed. A key added while processing is only marked dirty; done queues it.
 * - An item with none of dirty, processing, waiting, failures or held is freed at once, so
 *   the table holds only keys with something to remember (as client-go's maps do).
 * - A held key is in the held list; getting it (it is processed again) or releasing it
 *   ends the hold. Releasing forgets its failures, takes it out of the delay heap and
 *   adds it: a store that recovered makes the key due now, however long its backoff.
 * - The delay heap is ordered by ready_at (then by when the wait began); a key waits at
 *   most once, at the earlier of the times asked. The timer is armed for the heap's root
 *   whenever the heap is not empty; when it fires, every item whose time has come (on the
 *   queue's clock) is added, and the timer is armed again for what remains.
 * - The consumer is told about keys only through ready_event, activated after the change
 *   that made a key available, never by calling it from inside the queue's functions.
 * - After workqueue_shut_down, adds are ignored and the heap is empty; queued keys can
 *   still be got (drained), and a dirty key that is done is queued again, as in client-go.
 *
 * Metrics follow client-go's queue metrics: depth counts dirty keys (queued ones and ones
 * added while processing), adds_total counts adds that made a key dirty, retries_total
 * counts every delayed add (rate-limited ones included) the queue accepted, the two
 * histograms time add-to-get and get-to-done, and the unfinished-work gauges are computed
 * from the keys being processed each time the registry is rendered.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>

#include "log.h"
#include "metrics.h"
#include "timeutil.h"
#include "util.h"
#include "workqueue.h"

#define WORKQUEUE_DEFAULT_BASE_DELAY 0.005
#define WORKQUEUE_DEFAULT_MAX_DELAY 1000.0
#define WORKQUEUE_DEFAULT_QPS 10.0
#define WORKQUEUE_DEFAULT_BURST 100
#define WORKQUEUE_NOT_WAITING SIZE_MAX
/* The longest single timer wait; a later key is looked at again after it. */
#define WORKQUEUE_MAX_TIMER (24.0 * 3600)
#define WORKQUEUE_TABLE_SIZE 64

struct workqueue_item {
	char *key;
	uint32_t hash;
	struct workqueue_item *next;		/* in its hash chain */
	TAILQ_ENTRY(workqueue_item) queue_link;	/* while dirty and not processing */
	LIST_ENTRY(workqueue_item) processing_link; /* while processing */
	int dirty;
	int processing;
	size_t heap_index;			/* WORKQUEUE_NOT_WAITING if not waiting */
	double ready_at;
	uint64_t wait_seq;			/* orders equal ready_at */
	int failures;
	int held;
	TAILQ_ENTRY(workqueue_item) held_link;	/* while held */
	double added_at;			/* when it became dirty */
	double started_at;			/* when it was got */
};

struct workqueue {
	struct event_base *base;
	char *name;
	workqueue_ready_cb ready;
	void *arg;
	double (*now)(void *arg);
	struct event *ready_event;
	struct event *delay_timer;
	int shutting_down;

	struct workqueue_item **table;		/* hash table of every item */
	size_t table_size;			/* a power of two */
	size_t nitems;
	size_t ndirty;
	TAILQ_HEAD(, workqueue_item) queue;	/* the FIFO */
	size_t queue_len;
	LIST_HEAD(, workqueue_item) processing;
	TAILQ_HEAD(, workqueue_item) held;	/* in the order held */
	size_t nheld;
	struct workqueue_item **heap;		/* delayed adds, earliest first */
	size_t heap_len;
	size_t heap_cap;
	uint64_t next_wait_seq;

	double base_delay;
	double max_delay;
	struct workqueue_bucket bucket;

	/* Metric series, all NULL without metrics. */
	struct metrics_series *depth;
	struct metrics_series *adds;
	struct metrics_series *retries;
	struct metrics_series *queue_duration;
	struct metrics_series *work_duration;
	struct metrics_series *unfinished_work;
	struct metrics_series *longest_running;
	struct metrics_series *held_keys;
};

/* --- the rate limiter's pieces --------------------------------------------------------- */

/* Returns base * 2^failures, capped at max. */
double
workqueue_backoff_delay(double base, double max, int failures)
{
	double delay;

	if (failures < 0)
		failures = 0;
	delay = ldexp(base, failures > 4096 ? 4096 : failures);
	return delay > max ? max : delay;
}

/* Makes a full bucket of burst tokens refilled at qps. */
void
workqueue_bucket_init(struct workqueue_bucket *bucket, double qps, int burst)
{
	bucket->qps = qps;
	bucket->burst = burst;
	bucket->tokens = burst;
	bucket->last = 0;
	bucket->started = 0;
}

/* Takes a token at now and returns how long until it exists. */
double
workqueue_bucket_reserve(struct workqueue_bucket *bucket, double now)
{
	double elapsed = 0;

	if (bucket->started && now > bucket->last)
		elapsed = now - bucket->last;
	bucket->tokens += elapsed * bucket->qps;
	if (bucket->tokens > bucket->burst)
		bucket->tokens = bucket->burst;
	bucket->last = now;
	bucket->started = 1;
	bucket->tokens -= 1;
	if (bucket->tokens >= 0)
		return 0;
	if (bucket->qps <= 0)
		return INFINITY;
	return -bucket->tokens / bucket->qps;
}

/* --- the key table --------------------------------------------------------------------- */

/* Returns the FNV-1a hash of key. */
static uint32_t
workqueue_hash(const char *key)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)key; *p != '\0'; p++) {
		h ^= *p;
		h *= 16777619u;
	}
	return h;
}

/* Returns key's item, or NULL. */
static struct workqueue_item *
workqueue_lookup(struct workqueue *q, const char *key)
{
	uint32_t hash = workqueue_hash(key);
	struct workqueue_item *item;

	for (item = q->table[hash & (q->table_size - 1)]; item != NULL; item = item->next) {
		if (item->hash == hash && strcmp(item->key, key) == 0)
			return item;
	}
	return NULL;
}

/* Doubles the hash table. */
static void
workqueue_grow_table(struct workqueue *q)
{
	size_t size = q->table_size * 2;
	struct workqueue_item **table = xcalloc(size, sizeof *table);

	for (size_t i = 0; i < q->table_size; i++) {
		struct workqueue_item *item, *next;

		for (item = q->table[i]; item != NULL; item = next) {
			next = item->next;
			item->next = table[item->hash & (size - 1)];
			table[item->hash & (size - 1)] = item;
		}
	}
	free(q->table);
	q->table = table;
	q->table_size = size;
}

/* Returns key's item, making an idle one if the queue has none. */
static struct workqueue_item *
workqueue_lookup_or_create(struct workqueue *q, const char *key)
{
	struct workqueue_item *item = workqueue_lookup(q, key);
	size_t slot;

	if (item != NULL)
		return item;
	if (q->nitems >= q->table_size)
		workqueue_grow_table(q);
	item = xcalloc(1, sizeof *item);
	item->key = xstrdup(key);
	item->hash = workqueue_hash(key);
	item->heap_index = WORKQUEUE_NOT_WAITING;
	slot = item->hash & (q->table_size - 1);
	item->next = q->table[slot];
	q->table[slot] = item;
	q->nitems++;
	return item;
}

/* Frees item if the queue has nothing left to remember about its key. */
static void
workqueue_release(struct workqueue *q, struct workqueue_item *item)
{
	struct workqueue_item **p;

	if (item->dirty || item->processing || item->heap_index != WORKQUEUE_NOT_WAITING ||
	    item->failures > 0 || item->held)
		return;
	for (p = &q->table[item->hash & (q->table_size - 1)]; *p != item; p = &(*p)->next)
		;
	*p = item->next;
	q->nitems--;
	free(item->key);
	free(item);
}

/* --- the delay heap -------------------------------------------------------------------- */

/* Returns whether a is due before b. */
static int
workqueue_heap_before(const struct workqueue_item *a, const struct workqueue_item *b)
{
	if (a->ready_at != b->ready_at)
		return a->ready_at < b->ready_at;
	return a->wait_seq < b->wait_seq;
}

/* Puts item at heap index i. */
static void
workqueue_heap_place(struct workqueue *q, size_t i, struct workqueue_item *item)
{
	q->heap[i] = item;
	item->heap_index = i;
}

/* Moves the item at i towards the root while it is due before its parent. */
static void
workqueue_heap_up(struct workqueue *q, size_t i)
{
	struct workqueue_item *item = q->heap[i];

	while (i > 0 && workqueue_heap_before(item, q->heap[(i - 1) / 2])) {
		workqueue_heap_place(q, i, q->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	workqueue_heap_place(q, i, item);
}

/* Moves the item at i away from the root while a child is due before it. */
static void
workqueue_heap_down(struct workqueue *q, size_t i)
{
	struct workqueue_item *item = q->heap[i];

	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= q->heap_len)
			break;
		if (child + 1 < q->heap_len &&
		    workqueue_heap_before(q->heap[child + 1], q->heap[child]))
			child++;
		if (!workqueue_heap_before(q->heap[child], item))
			break;
		workqueue_heap_place(q, i, q->heap[child]);
		i = child;
	}
	workqueue_heap_place(q, i, item);
}

/* Makes item wait in the heap until ready_at. */
static void
workqueue_heap_push(struct workqueue *q, struct workqueue_item *item, double ready_at)
{
	if (q->heap_len == q->heap_cap) {
		q->heap_cap = q->heap_cap == 0 ? 16 : q->heap_cap * 2;
		q->heap = xrealloc(q->heap, q->heap_cap * sizeof *q->heap);
	}
	item->ready_at = ready_at;
	item->wait_seq = q->next_wait_seq++;
	workqueue_heap_place(q, q->heap_len++, item);
	workqueue_heap_up(q, item->heap_index);
}

/* Removes and returns the heap's root. */
static struct workqueue_item *
workqueue_heap_pop(struct workqueue *q)
{
	struct workqueue_item *root = q->heap[0];

	q->heap_len--;
	if (q->heap_len > 0) {
		workqueue_heap_place(q, 0, q->heap[q->heap_len]);
		workqueue_heap_down(q, 0);
	}
	root->heap_index = WORKQUEUE_NOT_WAITING;
	return root;
}

/* Takes item out of the heap, wherever it is. */
static void
workqueue_heap_remove(struct workqueue *q, struct workqueue_item *item)
{
	size_t i = item->heap_index;

	q->heap_len--;
	if (i < q->heap_len) {
		struct workqueue_item *moved = q->heap[q->heap_len];

		workqueue_heap_place(q, i, moved);
		workqueue_heap_up(q, i);
		workqueue_heap_down(q, moved->heap_index);
	}
	item->heap_index = WORKQUEUE_NOT_WAITING;
}

/* --- the queue ------------------------------------------------------------------------- */

/* Ends item's hold, if it is held. */
static void
workqueue_unhold(struct workqueue *q, struct workqueue_item *item)
{
	if (!item->held)
		return;
	item->held = 0;
	TAILQ_REMOVE(&q->held, item, held_link);
	q->nheld--;
	metrics_gauge_add(q->held_keys, -1);
}

/* The default clock: CLOCK_MONOTONIC in seconds. */
static double
workqueue_monotonic(void *arg)
{
	(void)arg;
	return time_monotonic();
}

/* Returns the queue's time. */
static double
workqueue_now(struct workqueue *q)
{
	return q->now(q->arg);
}

/* Tells the consumer, from the loop, that keys may be available. */
static void
workqueue_notify(struct workqueue *q)
{
	if (q->ready != NULL)
		event_active(q->ready_event, EV_TIMEOUT, 0);
}

/* The ready event: calls the consumer. */
static void
workqueue_ready_fire(evutil_socket_t fd, short what, void *arg)
{
	struct workqueue *q = arg;

	(void)fd;
	(void)what;
	q->ready(q, q->arg);
}

/* Puts item at the tail of the FIFO. */
static void
workqueue_enqueue(struct workqueue *q, struct workqueue_item *item)
{
	TAILQ_INSERT_TAIL(&q->queue, item, queue_link);
	q->queue_len++;
	workqueue_notify(q);
}

/* Marks item dirty and queues it unless it is being processed. */
static void
workqueue_add_item(struct workqueue *q, struct workqueue_item *item)
{
	if (item->dirty)
		return;
	item->dirty = 1;
	item->added_at = workqueue_now(q);
	q->ndirty++;
	metrics_counter_add(q->adds, 1);
	metrics_gauge_add(q->depth, 1);
	if (!item->processing)
		workqueue_enqueue(q, item);
}

/* Arms the timer for the earliest delayed add, or stops it if none is left. */
static void
workqueue_arm_timer(struct workqueue *q)
{
	struct timeval tv;
	double delay;

	if (q->heap_len == 0) {
		evtimer_del(q->delay_timer);
		return;
	}
	delay = q->heap[0]->ready_at - workqueue_now(q);
	if (!(delay > 0))
		delay = 0;
	if (delay > WORKQUEUE_MAX_TIMER)
		delay = WORKQUEUE_MAX_TIMER;
	tv.tv_sec = (time_t)delay;
	tv.tv_usec = (suseconds_t)ceil((delay - (double)tv.tv_sec) * 1e6);
	if (tv.tv_usec >= 1000000) {
		tv.tv_sec++;
		tv.tv_usec -= 1000000;
	}
	evtimer_add(q->delay_timer, &tv);
}

/* The delay timer: adds every key whose time has come and waits for the next. */
static void
workqueue_delay_expired(evutil_socket_t fd, short what, void *arg)
{
	struct workqueue *q = arg;
	double now = workqueue_now(q);

	(void)fd;
	(void)what;
	while (q->heap_len > 0 && q->heap[0]->ready_at <= now) {
		struct workqueue_item *item = workqueue_heap_pop(q);

		workqueue_add_item(q, item);
	}
	workqueue_arm_timer(q);
}

/* The unfinished-work gauge: seconds spent so far on the keys being processed. */
static double
workqueue_unfinished_work_seconds(void *arg)
{
	struct workqueue *q = arg;
	struct workqueue_item *item;
	double now = workqueue_now(q), total = 0;

	LIST_FOREACH(item, &q->processing, processing_link)
		total += now - item->started_at;
	return total;
}

/* The longest-running gauge: seconds the oldest key being processed has taken so far. */
static double
workqueue_longest_running_seconds(void *arg)
{
	struct workqueue *q = arg;
	struct workqueue_item *item;
	double now = workqueue_now(q), longest = 0;

	LIST_FOREACH(item, &q->processing, processing_link) {
		if (now - item->started_at > longest)
			longest = now - item->started_at;
	}
	return longest;
}

/* Returns the series named name of the queue's family described by spec, or NULL. */
static struct metrics_series *
workqueue_metric(struct workqueue *q, struct metrics_registry *registry,
    const struct metrics_spec *spec)
{
	const char *const values[] = { q->name, NULL };
	struct metrics_family *family;
	char *error = NULL;

	family = metrics_family_register(registry, spec, &error);
	if (family == NULL) {
		log_error("workqueue %s: %s", q->name, error);
		free(error);
		return NULL;
	}
	return metrics_series_get(family, values);
}

/* Registers the queue's metrics, named as client-go names them. */
static void
workqueue_register_metrics(struct workqueue *q, struct metrics_registry *registry)
{
	static const char *const labels[] = { "name", NULL };
	double buckets[10];
	double bound = 1e-8;

	/* Ten buckets from 10 ns, each ten times the last, multiplied out as
	 * client_golang's ExponentialBuckets does, so the le labels are the same. */
	for (size_t i = 0; i < 10; i++) {
		buckets[i] = bound;
		bound *= 10;
	}
	const struct metrics_spec depth = { METRICS_GAUGE, "workqueue_depth",
	    "[BETA] Number of keys the workqueue holds to be processed.", labels, NULL, 0 };
	const struct metrics_spec adds = { METRICS_COUNTER, "workqueue_adds_total",
	    "[BETA] Number of adds that gave the workqueue a key to process.", labels,
	    NULL, 0 };
	const struct metrics_spec retries = { METRICS_COUNTER, "workqueue_retries_total",
	    "[BETA] Number of delayed and rate-limited adds the workqueue accepted.",
	    labels, NULL, 0 };
	const struct metrics_spec queue_duration = { METRICS_HISTOGRAM,
	    "workqueue_queue_duration_seconds",
	    "[BETA] Seconds a key waited in the workqueue before a worker got it.",
	    labels, buckets, 10 };
	const struct metrics_spec work_duration = { METRICS_HISTOGRAM,
	    "workqueue_work_duration_seconds",
	    "[BETA] Seconds a worker spent processing a key from the workqueue.",
	    labels, buckets, 10 };
	const struct metrics_spec unfinished_work = { METRICS_GAUGE,
	    "workqueue_unfinished_work_seconds",
	    "[BETA] Seconds spent so far on keys still being processed, summed; a steady "
	    "rise means stuck workers.", labels, NULL, 0 };
	const struct metrics_spec longest_running = { METRICS_GAUGE,
	    "workqueue_longest_running_processor_seconds",
	    "[BETA] Seconds the longest-running key still being processed has taken so far.",
	    labels, NULL, 0 };
	const struct metrics_spec held_keys = { METRICS_GAUGE, "sqlkcm_workqueue_held_keys",
	    "Keys whose last sync failed on the local cache database (a full disk, an I/O "
	    "error, a lock not taken), held back until it writes again and the controller's "
	    "informers have synced.", labels, NULL, 0 };

	q->depth = workqueue_metric(q, registry, &depth);
	q->adds = workqueue_metric(q, registry, &adds);
	q->retries = workqueue_metric(q, registry, &retries);
	q->queue_duration = workqueue_metric(q, registry, &queue_duration);
	q->work_duration = workqueue_metric(q, registry, &work_duration);
	q->unfinished_work = workqueue_metric(q, registry, &unfinished_work);
	q->longest_running = workqueue_metric(q, registry, &longest_running);
	q->held_keys = workqueue_metric(q, registry, &held_keys);
	metrics_gauge_set_callback(q->unfinished_work, workqueue_unfinished_work_seconds, q);
	metrics_gauge_set_callback(q->longest_running, workqueue_longest_running_seconds, q);
}

/* Returns a new queue on base. */
struct workqueue *
workqueue_new(struct event_base *base, const char *name,
    const struct workqueue_options *options)
{
	static const struct workqueue_options defaults = { .priority = -1 };
	struct workqueue *q = xcalloc(1, sizeof *q);

	if (options == NULL)
		options = &defaults;
	q->base = base;
	q->name = xstrdup(name != NULL ? name : "");
	q->ready = options->ready;
	q->arg = options->arg;
	q->now = options->now != NULL ? options->now : workqueue_monotonic;
	q->ready_event = event_new(base, -1, 0, workqueue_ready_fire, q);
	q->delay_timer = evtimer_new(base, workqueue_delay_expired, q);
	if (options->priority >= 0 &&
	    (event_priority_set(q->ready_event, options->priority) != 0 ||
	    event_priority_set(q->delay_timer, options->priority) != 0))
		log_warning("workqueue %s: no event priority %d; using the default",
		    q->name, options->priority);

	q->table_size = WORKQUEUE_TABLE_SIZE;
	q->table = xcalloc(q->table_size, sizeof *q->table);
	TAILQ_INIT(&q->queue);
	LIST_INIT(&q->processing);
	TAILQ_INIT(&q->held);

	q->base_delay = options->base_delay > 0 ? options->base_delay :
	    WORKQUEUE_DEFAULT_BASE_DELAY;
	q->max_delay = options->max_delay > 0 ? options->max_delay :
	    WORKQUEUE_DEFAULT_MAX_DELAY;
	workqueue_bucket_init(&q->bucket,
	    options->qps > 0 ? options->qps : WORKQUEUE_DEFAULT_QPS,
	    options->burst > 0 ? options->burst : WORKQUEUE_DEFAULT_BURST);

	if (options->metrics != NULL && *q->name != '\0')
		workqueue_register_metrics(q, options->metrics);
	return q;
}

/* Frees the queue, its keys and its events. */
void
workqueue_free(struct workqueue *q)
{
	if (q == NULL)
		return;
	metrics_gauge_set_callback(q->unfinished_work, NULL, NULL);
	metrics_gauge_set_callback(q->longest_running, NULL, NULL);
	metrics_gauge_set(q->unfinished_work, 0);
	metrics_gauge_set(q->longest_running, 0);
	metrics_gauge_add(q->depth, -(double)q->ndirty);
	metrics_gauge_add(q->held_keys, -(double)q->nheld);
	for (size_t i = 0; i < q->table_size; i++) {
		struct workqueue_item *item, *next;

		for (item = q->table[i]; item != NULL; item = next) {
			next = item->next;
			free(item->key);
			free(item);
		}
	}
	event_free(q->ready_event);
	event_free(q->delay_timer);
	free(q->table);
	free(q->heap);
	free(q->name);
	free(q);
}

/* Marks key as needing processing, queueing it unless it is processing. */
void
workqueue_add(struct workqueue *q, const char *key)
{
	if (q->shutting_down)
		return;
	workqueue_add_item(q, workqueue_lookup_or_create(q, key));
}

/* Hands out the next queued key for processing. */
int
workqueue_get(struct workqueue *q, const char **key)
{
	struct workqueue_item *item = TAILQ_FIRST(&q->queue);
	double now;

	if (item == NULL)
		return q->shutting_down ? -1 : 0;
	TAILQ_REMOVE(&q->queue, item, queue_link);
	q->queue_len--;
	workqueue_unhold(q, item);
	item->dirty = 0;
	q->ndirty--;
	item->processing = 1;
	LIST_INSERT_HEAD(&q->processing, item, processing_link);

	now = workqueue_now(q);
	metrics_gauge_add(q->depth, -1);
	metrics_histogram_observe(q->queue_duration, now - item->added_at);
	item->started_at = now;
	*key = item->key;
	return 1;
}

/* Ends key's processing, queueing it again if it was added meanwhile. */
void
workqueue_done(struct workqueue *q, const char *key)
{
	struct workqueue_item *item = workqueue_lookup(q, key);

	if (item == NULL || !item->processing)
		return;
	metrics_histogram_observe(q->work_duration, workqueue_now(q) - item->started_at);
	item->processing = 0;
	LIST_REMOVE(item, processing_link);
	if (item->dirty)
		workqueue_enqueue(q, item);
	else
		workqueue_release(q, item);
}

double
workqueue_processing_seconds(struct workqueue *q, const char *key)
{
	struct workqueue_item *item = workqueue_lookup(q, key);

	if (item == NULL || !item->processing)
		return -1;
	return workqueue_now(q) - item->started_at;
}

/* Adds key once seconds have passed. */
void
workqueue_add_after(struct workqueue *q, const char *key, double seconds)
{
	struct workqueue_item *item;
	double ready_at;

	if (q->shutting_down)
		return;
	metrics_counter_add(q->retries, 1);
	if (!(seconds > 0)) {
		workqueue_add(q, key);
		return;
	}
	item = workqueue_lookup_or_create(q, key);
	ready_at = workqueue_now(q) + seconds;
	if (item->heap_index == WORKQUEUE_NOT_WAITING)
		workqueue_heap_push(q, item, ready_at);
	else if (ready_at < item->ready_at) {
		item->ready_at = ready_at;
		workqueue_heap_up(q, item->heap_index);
	} else
		return;
	if (q->heap[0] == item)
		workqueue_arm_timer(q);
}

/* Returns key's rate-limited delay, counting a failure and reserving a token. */
double
workqueue_when(struct workqueue *q, const char *key)
{
	struct workqueue_item *item = workqueue_lookup_or_create(q, key);
	double backoff, wait;

	backoff = workqueue_backoff_delay(q->base_delay, q->max_delay, item->failures);
	if (item->failures < INT_MAX)
		item->failures++;
	wait = workqueue_bucket_reserve(&q->bucket, workqueue_now(q));
	return wait > backoff ? wait : backoff;
}

/* Adds key after its rate-limited delay. */
void
workqueue_add_rate_limited(struct workqueue *q, const char *key)
{
	workqueue_add_after(q, key, workqueue_when(q, key));
}

/* Resets key's failure count. */
void
workqueue_forget(struct workqueue *q, const char *key)
{
	struct workqueue_item *item = workqueue_lookup(q, key);

	if (item == NULL)
		return;
	item->failures = 0;
	workqueue_release(q, item);
}

/* Holds key until the store recovers, without counting a failure. */
void
workqueue_hold(struct workqueue *q, const char *key)
{
	struct workqueue_item *item;

	if (q->shutting_down)
		return;
	item = workqueue_lookup_or_create(q, key);
	if (item->held)
		return;
	item->held = 1;
	TAILQ_INSERT_TAIL(&q->held, item, held_link);
	q->nheld++;
	metrics_gauge_add(q->held_keys, 1);
}

/* Adds every held key now, in the order they were held, its backoff forgotten; returns
 * how many there were. */
size_t
workqueue_release_held(struct workqueue *q)
{
	struct workqueue_item *item;
	size_t n = 0;

	while ((item = TAILQ_FIRST(&q->held)) != NULL) {
		workqueue_unhold(q, item);
		item->failures = 0;
		if (item->heap_index != WORKQUEUE_NOT_WAITING) {
			int root = item->heap_index == 0;

			workqueue_heap_remove(q, item);
			if (root)
				workqueue_arm_timer(q);
		}
		workqueue_add_item(q, item);
		n++;
	}
	return n;
}

/* Returns how many keys are held. */
size_t
workqueue_held(const struct workqueue *q)
{
	return q->nheld;
}

/* Returns key's failures since it was last forgotten. */
int
workqueue_num_requeues(struct workqueue *q, const char *key)
{
	struct workqueue_item *item = workqueue_lookup(q, key);

	return item != NULL ? item->failures : 0;
}

/* Returns how many keys are queued. */
size_t
workqueue_len(struct workqueue *q)
{
	return q->queue_len;
}

/* Stops accepting adds and drops the delayed ones. */
void
workqueue_shut_down(struct workqueue *q)
{
	struct workqueue_item *held;

	if (q->shutting_down)
		return;
	q->shutting_down = 1;
	while ((held = TAILQ_FIRST(&q->held)) != NULL) {
		workqueue_unhold(q, held);
		workqueue_release(q, held);
	}
	while (q->heap_len > 0) {
		struct workqueue_item *item = q->heap[--q->heap_len];

		item->heap_index = WORKQUEUE_NOT_WAITING;
		workqueue_release(q, item);
	}
	evtimer_del(q->delay_timer);
	workqueue_notify(q);
}

/* Returns whether the queue has been shut down. */
int
workqueue_shutting_down(struct workqueue *q)
{
	return q->shutting_down;
}
