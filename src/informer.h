/*
 * informer.h - informers: LIST and WATCH resources into the store.
 */
#ifndef SQLKCM_INFORMER_H
#define SQLKCM_INFORMER_H

#include <cjson/cJSON.h>
#include <event2/event.h>

#include "resource.h"
#include "util.h"

struct client;
struct metrics_registry;
struct store;
struct informer_set;

enum informer_event_type { INFORMER_ADDED, INFORMER_UPDATED, INFORMER_DELETED };

/* What the handlers are told after the transaction holding a change commits. */
struct informer_event {
	enum informer_event_type type;
	const struct resource *resource;
	const cJSON *object;	/* the object as stored (deleted: its last state) */
	const char *old_body;	/* updates and deletes: the previous stored body, or NULL */
};

struct informer_handlers {
	void (*on_event)(const struct informer_event *ev, void *arg);
	/* After the handlers of one committed batch have all run (flush files here). */
	void (*on_batch_end)(void *arg);
	void *arg;
};

struct informer_stats {
	unsigned long lists;		/* LIST requests (pages) sent */
	unsigned long watches;		/* WATCH requests sent */
	unsigned long relists;		/* lists begun after the first (410 Gone, errors) */
	unsigned long events;		/* watch events and list items applied */
	unsigned long errors;		/* bad events, failed requests */
	unsigned long batches;		/* transactions committed */
	unsigned long batch_failures;	/* transactions that failed to commit */
};

/* Creates the informers' common part: one transaction per loop turn over store.
 * Call before event_base_dispatch (it sets the base's priorities). */
struct informer_set *informer_set_new(struct event_base *base, struct client *client,
    struct store *store);
void informer_set_free(struct informer_set *set);

/* Adds an informer for r (before informer_set_start). */
void informer_set_add(struct informer_set *set, const struct resource *r);

/* Adds handlers every informer's events go to (before informer_set_start). */
void informer_set_add_handlers(struct informer_set *set, const struct informer_handlers *h);

/* Starts every informer: a watch from the stored resourceVersion when there is one,
 * a list otherwise. */
int informer_set_start(struct informer_set *set, char **error);

/* Stops every watch and commits what was applied. */
void informer_set_stop(struct informer_set *set);

/* Commits what the informers applied this loop turn and runs the handlers now, so that
 * the caller can write in a transaction of its own. */
void informer_set_commit(struct informer_set *set);

/* True once every informer's cache holds a complete list (now or from a previous run). */
int informer_set_synced(const struct informer_set *set);

/* Appends the names of the resources whose informers have not synced, comma-separated,
 * to out; returns how many there are. */
int informer_set_describe_unsynced(const struct informer_set *set, struct buf *out);

const struct informer_stats *informer_set_stats(const struct informer_set *set);

/* Publishes the informers' counts in registry as sqlkcm_informer_* metrics, per resource
 * (informers added later included); the set must be freed before the registry. */
void informer_set_register_metrics(struct informer_set *set,
    struct metrics_registry *registry);

#endif
