/*
 * controller.h - what every controller is to the rest of sqlkcm: a name, the resources it
 * needs, a handler that turns informer events into keys, and sync(key), which reads the
 * cache and returns a sync_result. The registry lists them all.
 */
#ifndef SQLKCM_CONTROLLER_H
#define SQLKCM_CONTROLLER_H

#include <stdio.h>

#include "action.h"
#include "informer.h"
#include "store.h"

struct workqueue_options;

struct expectations;
struct metrics_registry;
struct consistency;

/* Where a controller's handlers put keys. */
struct controller_queue {
	void (*add)(const char *key, void *arg);
	void (*add_after)(const char *key, double seconds, void *arg);
	void *arg;
};

/* A queue that adds each key to another one after a delay (none: at once), as kube's
 * queues with a batch period do: controller_queue_delayed fills d and returns its queue,
 * valid while d and q are. */
struct controller_delayed_queue {
	const struct controller_queue *q;
	double seconds;
	struct controller_queue queue;
};
const struct controller_queue *controller_queue_delayed(struct controller_delayed_queue *d,
    const struct controller_queue *q, double seconds);

/* One controller instance over a store. */
struct controller {
	const struct controller_type *type;
	struct store *store;
	struct expectations *expectations;
	struct consistency *writes;
	const struct controller_config *config;	/* never NULL; kept by the creator */
	void *state;		/* the type's own */
};

/*
 * How a restarted sqlkcm releases the expectations an earlier run left (manager.c): an
 * owner's are released once a live LIST of its dependents (by the owner's selector, in
 * its namespace) shows the same active ones as the cache.
 */
struct controller_recovery {
	/* The owners with expectations of controller ?1 (its name): rows of key, owner uid,
	 * selector (JSON, a LabelSelector), namespace and the expectations' set_at. */
	const char *owners_sql;
	const char *dependents;			/* the dependents' resource ("pods") */
	/* The uids of the active dependents the cache shows controlled by owner uid ?1,
	 * sorted. */
	const char *cached_sql;
	/* The same rule for one object of a live LIST: is it active? */
	int (*active)(const cJSON *object);
};

/* A flag a controller declares beside its workers flag (kube-controller-manager's
 * --terminated-pod-gc-threshold, --root-ca-file, ...): run parses and checks it, lists it in
 * --help and /configz, and the controller reads its value with controller_flag_*. */
struct controller_flag {
	const char *name;			/* without the dashes */
	enum controller_flag_type {
		CONTROLLER_FLAG_INT,		/* a whole number in [min, max] */
		CONTROLLER_FLAG_DURATION,	/* a Go duration: "5m0s", "30s" */
		CONTROLLER_FLAG_STRING,		/* any text (a file name: the controller reads it) */
		CONTROLLER_FLAG_NUMBER,		/* a decimal number in [min, max]: a rate, a
						   fraction ("0.1", "0.55") */
		CONTROLLER_FLAG_BOOL,		/* a Go bool ("true", "false", "1", ...);
						   given alone (--flag) it is true */
	} type;
	const char *default_value;		/* as a command line would give it */
	long long min, max;			/* CONTROLLER_FLAG_INT and _NUMBER */
	const char *help;			/* for --help */
};

/* What the command line gives one controller. Any member may be NULL. */
struct controller_config {
	/* The values of the type's flags, by their index in its flags; a NULL entry (or
	 * array) is the flag's default. run has checked each with controller_flag_check. */
	const char *const *flags;
	/* The PEM of the CA the kubeconfig trusts for the apiserver: what kube-controller-
	 * manager publishes as the root CA when --root-ca-file is not given. */
	const char *cluster_ca;
	/* The daemon's registry, where a controller registers its own metrics (kube's
	 * pod_gc_collector_force_delete_pods_total, ...); NULL in plan and replay. */
	struct metrics_registry *metrics;
};

/* A kind of controller, as kube-controller-manager's controller descriptors. */
struct controller_type {
	const char *name;			/* "replicaset": the --controllers name */
	const char *const *resources;		/* the resources it watches, NULL-ended */
	/* It also watches every resource discovery finds, cached by its metadata
	 * (metadatacache.c): the garbage collector. */
	int watches_metadata;
	int default_workers;			/* syncs in flight at most */
	/* The flag that sets the workers, as kube-controller-manager spells it
	 * ("concurrent-replicaset-syncs"), and what it counts, for --help; NULL when kube's
	 * controller has none (it runs default_workers). */
	const char *workers_flag;
	const char *workers_help;
	/* A flag that turns it off whatever --controllers says, as kube-controller-manager
	 * has one for its garbage collector ("enable-garbage-collector"), or NULL. */
	const char *enable_flag;
	/* kube-controller-manager gives some controllers' clients a multiple of
	 * --kube-api-qps and --kube-api-burst (its namespace controller 20 and 100 times,
	 * "very chatty"; its garbage collector twice the rate); 0 means 1. */
	int qps_scale;
	int burst_scale;
	/* The cap of a key's backoff after failed syncs, in seconds (kube's namespace
	 * controller: 60, to recycle namespaces faster); 0: client-go's default, 1000. */
	double max_backoff;
	/* The first of those backoffs, doubling per failure, in seconds (kube's certificate
	 * controllers: 0.2); 0: client-go's default, 0.005. */
	double base_backoff;
	/* Its other flags, ended by a NULL name; NULL: none. */
	const struct controller_flag *flags;
	/* The source component of the events it records ("replicaset-controller"). */
	const char *event_component;
	/* The name kube-controller-manager's controller asks its client builder for
	 * ("replicaset-controller", "generic-garbage-collector"; not always the event
	 * component): with --use-service-account-credentials it writes, and records its
	 * events, as the ServiceAccount kube-system/NAME (clientbuilder.c). */
	const char *client_name;
	/* kube builds its client with the root builder whatever that flag says (its tokens
	 * controller): it keeps the kubeconfig's identity. */
	int client_is_root;
	/* Its restart recovery, or NULL for none. */
	const struct controller_recovery *recovery;
	/* Creates the type's state for c (prepared statements, ...). */
	int (*init)(struct controller *c, char **error);
	void (*fini)(struct controller *c);
	/* Turns a committed informer event into keys to sync (and expectation
	 * observations, written to the store). now: Unix seconds. */
	void (*handle_event)(struct controller *c, const struct informer_event *ev, double now,
	    const struct controller_queue *q);
	/* Calls cb with the key of every object the controller syncs (for plan, resync). */
	int (*list_keys)(struct controller *c, void (*cb)(const char *key, void *arg),
	    void *arg, char **error);
	/* Reads the cache for key at now (Unix seconds) and fills *out (zeroed by the
	 * caller). Writes nothing. */
	int (*sync)(struct controller *c, const char *key, double now, struct sync_result *out,
	    char **error);
	/* In the daemon, once key's sync and the carrying out of its result have ended:
	 * seconds is how long the two took (for a controller's own duration metrics), failed
	 * whether the key backs off. NULL: nothing to do. */
	void (*processed)(struct controller *c, const char *key, double seconds, int failed);
};

/* True when controllers of type t hear of resource's events (and need its informer). */
int controller_watches(const struct controller_type *t, const struct resource *resource);

/* Sets the rate limiting of type t's workqueue in *qo (its max_delay; the rest of *qo is
 * left as it is). */
void controller_queue_options(const struct controller_type *t, struct workqueue_options *qo);

/*
 * Writes the bookkeeping of a sync's result r, in the caller's transaction, before any of
 * its requests is sent: for an owner that is gone, forgets its expectations and write
 * records; otherwise the expectations of its creations or deletions (deletions by
 * namespace/name), set at now. The daemon's executor and replay both record through here,
 * so that replay keeps the books the daemon keeps. Nothing to write is success.
 */
int controller_record_result(struct controller *c, const struct sync_result *r, double now,
    char **error);

/* --- what controllers share ---------------------------------------------------------- */

/* Splits a namespace/name key: *namespace (malloc'd) and *name (into key); -1 when key is
 * not one. */
int controller_key_split(const char *key, char **namespace, const char **name);

/* Resets a prepared statement and its bindings for a new use; returns it. */
sqlite3_stmt *controller_stmt(sqlite3_stmt *stmt);

/* The cached body in column col of stmt's current row, parsed with its large integers
 * kept as written (json_parse_exact), for a body that may be sent back; NULL when the
 * column is NULL or not JSON. */
cJSON *controller_column_json(sqlite3_stmt *stmt, int col);
/* Column col of stmt's current row: an RFC 3339 time as Unix seconds (0 when NULL or not
 * a time); a copy of its text (malloc'd; NULL when NULL). */
double controller_column_time(sqlite3_stmt *stmt, int col);
char *controller_column_strdup(sqlite3_stmt *stmt, int col);
/* Reads the cached object of key ("namespace/name", or a cluster-scoped name: namespace
 * '') into out->owner_uid and out->owner, with stmt, whose ?1 is the namespace and ?2 the
 * name and whose row is (uid, body). 0 when read (out->owner stays NULL when the cache
 * does not hold it); -1 with *error, what naming the controller. */
int controller_read_owner(sqlite3_stmt *stmt, const char *key, const char *what,
    struct sync_result *out, char **error);
/* Whether the cache already holds every write the controller made for key (owner_uid, the
 * object the sync reads): 1 when it does and the sync may go on; 0 when one of them has
 * not come back yet, out then marked stale with the resource behind, so that the sync
 * ends without acting on what it would read and is retried when the write arrives; -1
 * with *error. A sync that acted on the older state could undo or repeat its own last
 * step (kube's controllers avoid that with expectations or a live read). */
int controller_caught_up(struct controller *c, const char *key, const char *owner_uid,
    struct sync_result *out, char **error);

/* Adds to q every owner of namespace that stmt lists (rows of name and selector JSON, for
 * namespace bound as ?1) whose selector is not empty and matches labels: kube's lookup of
 * the owners that could adopt an orphan. An orphan without labels has none. */
void controller_enqueue_matching(sqlite3_stmt *stmt, const char *namespace,
    const cJSON *labels, const struct controller_queue *q);

/* The selectors controller_enqueue_matching reads, kept parsed by namespace for a
 * controller whose every pod event looks through the owners of its namespace (kube's
 * Service selector cache of the EndpointSlice controller): built from the statement at
 * the first lookup in a namespace, forgotten when an owner of it changes. */
struct selector_cache;
struct selector_cache *selector_cache_new(void);
void selector_cache_free(struct selector_cache *cache);
/* Keeps the empty selectors too, matching every object, labelled or not (policy/v1's
 * PodDisruptionBudget, where kube's owner lookups skip them). */
void selector_cache_match_empty(struct selector_cache *cache);
/* An owner of namespace was added, changed or deleted. */
void selector_cache_forget(struct selector_cache *cache, const char *namespace);
/* controller_enqueue_matching through cache. */
void controller_enqueue_matching_cached(struct selector_cache *cache, sqlite3_stmt *stmt,
    const char *namespace, const cJSON *labels, const struct controller_queue *q);

/* Calls cb with "namespace/name" for each row (namespace, name) of stmt, or with the
 * name for each row of one column (a cluster-scoped key: a namespace), for list_keys;
 * what names the controller in an error. */
int controller_list_keys_of(sqlite3_stmt *stmt, const char *what,
    void (*cb)(const char *key, void *arg), void *arg, char **error);

/* Creates a controller of type over store, configured by config (NULL: every default;
 * else kept by the caller until controller_free); NULL with *error set on failure. */
struct controller *controller_new(const struct controller_type *type, struct store *store,
    const struct controller_config *config, char **error);

/* Checks text as a value of flag f; -1 with *error naming the flag and what it wants. */
int controller_flag_check(const struct controller_flag *f, const char *text, char **error);

/* How --help shows the value flag f takes: " N", " DURATION", "[=BOOL]", ... */
const char *controller_flag_metavar(const struct controller_flag *f);

/* The value of c's flag called name (declared by its type: anything else aborts), as
 * given or its default: as text, as a whole number, as a number, a duration in seconds,
 * or a bool (1 or 0). */
const char *controller_flag_text(const struct controller *c, const char *name);
long long controller_flag_int(const struct controller *c, const char *name);
double controller_flag_number(const struct controller *c, const char *name);
double controller_flag_seconds(const struct controller *c, const char *name);
int controller_flag_bool(const struct controller *c, const char *name);
void controller_free(struct controller *c);

#endif
