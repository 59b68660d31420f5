/*
 * manager.h - runs the enabled controllers: their workqueues, their handlers on the
 * informers' events, their syncs, and the executor that carries the syncs out.
 */
#ifndef SQLKCM_MANAGER_H
#define SQLKCM_MANAGER_H

#include <event2/event.h>

struct client;
struct kubeevents;
struct executor;
struct informer_set;
struct metrics_registry;
struct store;
struct manager;
struct controller_config;

struct manager_options {
	const int *enabled;		/* by controller_types index */
	const int *workers;		/* syncs in flight per controller type; 0: its default */
	/* What the command line gives each controller type; NULL: every default. */
	const struct controller_config *configs;
	struct metrics_registry *metrics;	/* NULL: none */
	struct client *client;		/* for live reads; NULL: expectations left by an
					   earlier run wait out their timeout */
};

/* Creates the enabled controllers over store, their handlers on informers (before
 * informer_set_start) and their queues on base; their syncs go to executor. */
struct manager *manager_new(struct event_base *base, struct store *store,
    struct informer_set *informers, struct executor *executor,
    const struct manager_options *options, char **error);
void manager_free(struct manager *m);

/* Adds every resource some enabled controller needs to informers. */
void manager_add_informers(const int *enabled, struct informer_set *informers);

/* Starts syncing once the informers have synced: every key once, then what events bring. */
void manager_start(struct manager *m);

/* Stops taking keys; syncs being carried out finish. Returns how many are in flight. */
int manager_stop(struct manager *m);

#endif
