/*
 * executor.h - carries out a sync's result against the apiserver: claims, then creations
 * in slow-start batches or deletions, then the status, with the bookkeeping around them.
 */
#ifndef SQLKCM_EXECUTOR_H
#define SQLKCM_EXECUTOR_H

#include "action.h"

struct client;
struct controller;
struct kubeevents;
struct informer_set;
struct store;

struct executor;

/* How a result's execution went, for the workqueue. */
struct executor_outcome {
	int failed;		/* something failed: requeue with backoff */
	int store_failed;	/* a bookkeeping write failed on the local store: hold the
				   key until the store recovers (workqueue_hold), whatever
				   else happened; no backoff is counted */
	int retry_now;		/* the cache proved out of date: requeue at once */
	double requeue_after;	/* > 0: sync again after this many seconds */
};

typedef void (*executor_done_cb)(const char *key, const struct executor_outcome *outcome,
    void *arg);

/* Creates an executor sending through client. Before it writes bookkeeping it commits
 * what the informers have pending (informers may be NULL). events holds the event
 * recorder of each controller type, in controller_types' order (borrowed; the array, or
 * any entry, may be NULL: no events). */
struct executor *executor_new(struct client *client, struct store *store,
    struct informer_set *informers, struct kubeevents *const *events);
void executor_free(struct executor *e);

/* Sends the requests of controller type's syncs through client (borrowed) instead of the
 * executor's: each controller has its own client, with its own rate limit, as in
 * kube-controller-manager. */
void executor_use_client(struct executor *e, const struct controller_type *type,
    struct client *client);

/* Carries out r (taken: the executor frees it) for controller c; calls done once, never
 * from inside this call. Returns -1 with *error set if r could not be started (done is
 * not called then). */
int executor_run(struct executor *e, struct controller *c, struct sync_result *r,
    executor_done_cb done, void *arg, char **error);

/* Stops sending creation batches (a stop of the daemon): the requests in flight finish
 * and each result ends as if its remaining creations had failed. */
void executor_stop(struct executor *e);

/* Results being carried out. */
int executor_in_flight(const struct executor *e);

/* Slow start: the size of batch i (0, 1, ...) of n creations, given sent so far. */
int executor_batch_size(int n, int sent, int previous);

#endif
