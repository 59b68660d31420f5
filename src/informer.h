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
struct client_response;
struct store;
struct informer_set;

/* How an informer gets its initial state (and the state after a 410 Gone). */
enum informer_watch_list {
	INFORMER_WATCH_LIST_AUTO,	/* WatchList; paginated LIST if the server refuses it */
	INFORMER_WATCH_LIST_ON,		/* WatchList only: a refusal is retried with backoff */
	INFORMER_WATCH_LIST_OFF,	/* paginated LIST only */
};

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
	unsigned long watches;		/* WATCH requests sent (WatchList ones included) */
	unsigned long watch_lists;	/* WATCH requests with sendInitialEvents=true sent */
	unsigned long relists;		/* lists begun after the first (410 Gone, errors) */
	unsigned long syncs_by_list;	/* complete states from a paginated LIST */
	unsigned long syncs_by_watch_list; /* complete states from WatchList initial events */
	unsigned long watch_list_fallbacks; /* WatchList refused by the server: LIST instead */
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

/* Chooses how initial states are fetched (before informer_set_start; default AUTO). */
void informer_set_watch_list(struct informer_set *set, enum informer_watch_list mode);
/* Holds what the watches of the resources held() chooses (NULL: all of them) bring for
 * seconds (0, the default: applies it as it arrives), then applies the events of every
 * informer in one transaction. Syncs see an event once it is applied. A WatchList's
 * initial events are applied as they arrive. */
void informer_set_batch_period(struct informer_set *set, double seconds,
    int (*held)(const struct resource *r));

/* With confirm set (controllers will act on the cache), a warm start does not trust the
 * stored cache as current: each informer syncs again from its stored resourceVersion
 * (WatchList with resourceVersionMatch=NotOlderThan, or a LIST) and is synced only when
 * that is complete, its handlers hearing of every change, deletions included. Without it
 * (mirroring only), a warm start resumes the watch at once. Before informer_set_start. */
void informer_set_confirm_warm_start(struct informer_set *set, int confirm);

/* Parses "auto", "true" or "false" into *mode; -1 for anything else. */
int informer_watch_list_parse(const char *text, enum informer_watch_list *mode);

/* Adds an informer for r (before informer_set_start). */
void informer_set_add(struct informer_set *set, const struct resource *r);

/* Adds an informer for r to a set that may be running: once started, it starts at once
 * (from its stored state, as informer_set_start would). Nothing when r has one already. */
int informer_set_add_started(struct informer_set *set, const struct resource *r,
    char **error);

/* True when the set has an informer for r. */
int informer_set_has(const struct informer_set *set, const struct resource *r);

/* Stops r's informer and removes it from the set (its rows stay in the store). */
void informer_set_remove(struct informer_set *set, const struct resource *r);

/* Adds handlers every informer's events go to (before informer_set_start). */
void informer_set_add_handlers(struct informer_set *set, const struct informer_handlers *h);

/* Starts every informer: from the stored resourceVersion when there is one (a watch, or
 * a sync with informer_set_confirm_warm_start), a sync otherwise. */
int informer_set_start(struct informer_set *set, char **error);

/* Stops every watch and commits what was applied. */
void informer_set_stop(struct informer_set *set);

/* Commits what the informers applied this loop turn and runs the handlers now, so that
 * the caller can write in a transaction of its own. */
void informer_set_commit(struct informer_set *set);

/* Starts r's informer over from what the store holds, as after a failed cache write: the
 * controllers that read r wait until it has synced again. For a write whose answer was
 * lost (the connection broke after the request went out): it may have been carried out,
 * and a controller acting before the cache shows it would do it twice. An informer that
 * is already syncing is left as it is, so that a burst of such failures restarts it once. */
void informer_set_resync(struct informer_set *set, const struct resource *r, const char *why);

/* True once every informer's cache holds a complete list (now or from a previous run). */
int informer_set_synced(const struct informer_set *set);

/* The same for the informers of the resources wanted says it wants: a controller starts
 * when its own informers are synced, whatever others do. */
int informer_set_synced_for(const struct informer_set *set,
    int (*wanted)(const struct resource *r, void *arg), void *arg);

/* Appends the names of the resources whose informers have not synced, comma-separated,
 * to out; returns how many there are. */
int informer_set_describe_unsynced(const struct informer_set *set, struct buf *out);

/* Appends the informers that are down (backing off after a failed or dead watch or list)
 * to out, each with how long it has been down and since its last event or bookmark;
 * returns how many there are. */
int informer_set_describe_down(const struct informer_set *set, struct buf *out);

const struct informer_stats *informer_set_stats(const struct informer_set *set);

/* Publishes the informers' counts in registry as sqlkcm_informer_* metrics, per resource
 * (informers added later included); the set must be freed before the registry. */
void informer_set_register_metrics(struct informer_set *set,
    struct metrics_registry *registry);
/*
 * Without a client (informer_set_new with client NULL) informers send nothing: each
 * remembers the request it would have sent, and tests play the apiserver's part with
 * the three functions below. The flush still needs the loop: run it, or call
 * informer_set_commit.
 */

/* The path (with query) of the request r's informer waits on, or NULL when none (it is
 * backing off, or stopped). */
const char *informer_set_request_path(const struct informer_set *set,
    const struct resource *r);

/* Delivers len bytes of the streamed body of r's pending WATCH. */
void informer_set_receive(struct informer_set *set, const struct resource *r,
    const char *data, size_t len);

/* Ends r's pending request with resp (for a WATCH that streamed: code 200, no body). */
void informer_set_respond(struct informer_set *set, const struct resource *r,
    const struct client_response *resp);

#endif
