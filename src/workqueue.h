/*
 * workqueue.h - client-go's rate-limiting workqueue of string keys, on one libevent loop.
 *
 * A key ("namespace/name") is queued at most once; a key being processed is never handed
 * out again until workqueue_done, and a key added meanwhile is queued again then. Keys
 * come out in the order they were queued. Delayed adds wait on a libevent timer; rate-
 * limited adds wait as long as client-go's DefaultControllerRateLimiter says: the longer
 * of a per-key exponential backoff and an overall token bucket.
 *
 * The queue never calls its consumer from inside one of its functions: when keys may have
 * become available (an add, a done that queues a key again, a shutdown), it activates an
 * event whose callback is options->ready. The consumer then calls workqueue_get until it
 * returns 0 or it has no capacity left; a consumer that stops early calls workqueue_get
 * again when it has room, since nothing new will wake it while no key is added.
 */
#ifndef SQLKCM_WORKQUEUE_H
#define SQLKCM_WORKQUEUE_H

#include <stddef.h>

struct event_base;
struct metrics_registry;
struct workqueue;

/* Keys may be available to workqueue_get (or the queue is shutting down). */
typedef void (*workqueue_ready_cb)(struct workqueue *q, void *arg);

struct workqueue_options {
	workqueue_ready_cb ready;	/* optional */
	void *arg;			/* passed to ready and now */
	int priority;			/* libevent priority of the queue's events; -1: default */
	double (*now)(void *arg);	/* monotonic seconds; NULL: CLOCK_MONOTONIC (tests) */
	/* The queue's client-go workqueue_* metrics, labelled name="<queue name>". Queue
	 * names must be unique within a registry. NULL: no metrics. */
	struct metrics_registry *metrics;
	/* Rate limiting; 0 means client-go's default (in brackets). */
	double base_delay;		/* first per-key backoff, doubling per failure [0.005 s] */
	double max_delay;		/* cap of the per-key backoff [1000 s] */
	double qps;			/* overall token bucket: refill rate [10 per second] */
	int burst;			/* and size [100] */
};

/* Returns a new queue; options may be NULL for all defaults (no callback, no metrics). */
struct workqueue *workqueue_new(struct event_base *base, const char *name,
    const struct workqueue_options *options);
/* Frees the queue and its keys; the queue's metric series stay in the registry, its
 * gauges no longer counting its keys. */
void workqueue_free(struct workqueue *q);

/* Queues key (copied) unless it is already queued; a key being processed is marked to be
 * queued again when it is done. Ignored once the queue is shutting down. */
void workqueue_add(struct workqueue *q, const char *key);
/* Sets *key to the next key, now being processed, and returns 1; returns 0 if no key is
 * queued, -1 if none is and the queue is shutting down. *key stays valid until
 * workqueue_done for it. */
int workqueue_get(struct workqueue *q, const char **key);
/* Ends the processing of key, queueing it again if it was added meanwhile. */
void workqueue_done(struct workqueue *q, const char *key);
/* How long key has been processed so far (since workqueue_get gave it), in seconds; -1
 * when it is not being processed. */
double workqueue_processing_seconds(struct workqueue *q, const char *key);
/* Adds key once seconds have passed (at once if seconds <= 0). A key already waiting keeps
 * the earlier of its two times. Ignored once the queue is shutting down. */
void workqueue_add_after(struct workqueue *q, const char *key, double seconds);
/* Adds key after the delay workqueue_when gives it. */
void workqueue_add_rate_limited(struct workqueue *q, const char *key);
/* Returns the delay before key's next rate-limited add: the longer of its exponential
 * backoff, which counts one more failure, and the wait for a token of the overall
 * bucket, which it reserves (client-go's RateLimiter.When). */
double workqueue_when(struct workqueue *q, const char *key);
/* Stops counting key's failures: its next backoff is base_delay again. */
void workqueue_forget(struct workqueue *q, const char *key);
/* Holds key back after its sync failed on the local store (the cache database: a full
 * disk, an I/O error, a lock not taken) rather than on the apiserver: no failure is
 * counted, and the key waits for workqueue_release_held, however long the store takes
 * to recover. client-go has no such state, its failures all being the apiserver's; a
 * store failure says nothing about the key, and backing off would leave it waiting long
 * after the store is well. Getting the key (an event added it) ends its hold. Ignored
 * once the queue is shutting down. */
void workqueue_hold(struct workqueue *q, const char *key);
/* Adds every held key at once, its failures forgotten and any delayed add of it
 * dropped; returns how many keys were held. */
size_t workqueue_release_held(struct workqueue *q);
/* Returns how many keys are held. */
size_t workqueue_held(const struct workqueue *q);
/* Returns how many failures key has had since it was last forgotten. */
int workqueue_num_requeues(struct workqueue *q, const char *key);
/* Returns how many keys are queued (not counting keys being processed). */
size_t workqueue_len(struct workqueue *q);
/* Stops accepting adds and drops the delayed ones; queued keys can still be got. */
void workqueue_shut_down(struct workqueue *q);
int workqueue_shutting_down(struct workqueue *q);

/* --- the rate limiter's pieces, pure functions of time --------------------------------- */

/* Returns base * 2^failures, or max if that is more (client-go's
 * ItemExponentialFailureRateLimiter, failures being the count before this one). */
double workqueue_backoff_delay(double base, double max, int failures);

/* A token bucket that starts full (golang.org/x/time/rate's Limiter). */
struct workqueue_bucket {
	double qps;
	double burst;
	double tokens;
	double last;		/* when tokens was computed */
	int started;		/* last is set */
};

void workqueue_bucket_init(struct workqueue_bucket *bucket, double qps, int burst);
/* Takes a token at time now, going into debt if there is none, and returns how long
 * after now the token will exist (rate.Limiter's Reserve().Delay()). */
double workqueue_bucket_reserve(struct workqueue_bucket *bucket, double now);

#endif
