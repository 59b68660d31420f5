/*
 * metadatacache.h - an informer for the metadata of every resource the apiserver serves
 * with list, watch and delete, kept in step with discovery.
 */
#ifndef SQLKCM_METADATACACHE_H
#define SQLKCM_METADATACACHE_H

#include <event2/event.h>

struct client;
struct discovery;
struct informer_set;
struct metrics_registry;
struct store;

/* Discovery is read again this often (kube's garbage collector: 30 s). */
#define METADATACACHE_PERIOD 30.0

struct metadatacache;

/* Creates the cache's keeper over informers (whose set it adds to and removes from) and
 * store; discovery goes through client. */
struct metadatacache *metadatacache_new(struct event_base *base, struct client *client,
    struct store *store, struct informer_set *informers);
void metadatacache_free(struct metadatacache *mc);

/* Reads discovery once and waits for it (running the loop, at most timeout seconds), so
 * that the informers start with every resource known; then again every period seconds,
 * and soon after any change to a CustomResourceDefinition. A failed first read is
 * logged and retried: it is not an error. */
void metadatacache_start(struct metadatacache *mc, double timeout, double period);

/* Applies a discovery result: an informer for each deletable resource that has none, and
 * for the resources no longer listed (and not in d->failed), their informers stopped and
 * their rows forgotten. Exposed for tests. */
void metadatacache_apply(struct metadatacache *mc, struct discovery *d);

/* Publishes kube's garbagecollector_controller_resources_sync_error_total (failed reads
 * of discovery) and how many resources are cached by their metadata. */
void metadatacache_register_metrics(struct metadatacache *mc,
    struct metrics_registry *registry);

/* How many resources are cached by their metadata now. */
int metadatacache_count(const struct metadatacache *mc);

#endif
