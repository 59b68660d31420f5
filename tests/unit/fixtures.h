/*
 * fixtures.h - what the controller unit tests share: an in-memory store with a ReplicaSet
 * controller over it, ReplicaSet and pod objects as kube-controller-manager's test
 * fixtures make them, a world for any controller's tests (its store, its controller and
 * the keys its handlers queue), and a fake apiserver (a client whose requests a function
 * answers) that records every request it sees.
 *
 * Use from cmocka tests only: the helpers fail the running test on any error.
 */
#ifndef SQLKCM_TESTS_FIXTURES_H
#define SQLKCM_TESTS_FIXTURES_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include <event2/event.h>

#include "action.h"
#include "controller.h"
#include "informer.h"

struct client;
struct controller;
struct resource;
struct store;

#define NOW 1767225600.0	/* 2026-01-01T00:00:00Z */
#define HOUR 3600.0
#define DAY (24 * HOUR)
#define KEY "default/foobar"
#define NELEM(a) (sizeof (a) / sizeof (a)[0])

/* --- the store and the controller -------------------------------------------------------- */

struct fixture {
	struct store *store;
	struct controller *c;
	const struct resource *pods;
	const struct resource *replicasets;
};

/* An in-memory store and a ReplicaSet controller over it. */
struct fixture *fixture_new(void);
/* The same over the database file path (created), for tests that open it twice. */
struct fixture *fixture_open(const char *path);
/* Frees f, its controller and its store. */
void fixture_free(struct fixture *f);

/* cmocka setup and teardown: a fresh fixture in *state for each test. */
int fixture_setup(void **state);
int fixture_teardown(void **state);

/* Parses JSON the test wrote; fails the test if it is not JSON. */
cJSON *fixture_parse(const char *text);

/* Adds member name = t (Unix seconds) as the apiserver writes times. */
void fixture_add_time(cJSON *o, const char *name, double t);

/*
 * A ReplicaSet as kube's newReplicaSet fixture makes it: name foobar in default, uid
 * "uid-<name>", resourceVersion 18, controlled by owner uid 123, selector matchLabels
 * {foo: bar}, template labels {name: foo, type: production}.
 */
struct rs {
	const char *name;	/* NULL: foobar */
	int replicas;
	const char *selector;	/* matchLabels JSON; NULL: {"foo":"bar"} */
	int no_selector;	/* no spec.selector at all */
	const char *controller;	/* the controller owner's uid; NULL: "123"; "": none */
	int min_ready;
	double deleting;	/* deletionTimestamp; 0: none */
	const char *status;	/* status JSON; NULL: none */
	long long generation;	/* 0: none */
	const char *uid;	/* NULL: "uid-<name>" */
	const char *ns;		/* NULL: default */
	const char *template_labels;	/* NULL: {"name":"foo","type":"production"} */
	const char *rv;		/* NULL: "18" */
};

/* Returns the ReplicaSet object r describes. */
cJSON *rs_new(const struct rs *r);

/* A pod. Its controller owner (if any) is the ReplicaSet owner with uid "uid-<owner>". */
struct pod {
	const char *name;
	const char *owner;	/* the controlling ReplicaSet's name; NULL: none */
	const char *labels;	/* JSON; NULL: {"foo":"bar"} */
	const char *phase;	/* NULL: none */
	const char *node;	/* spec.nodeName; NULL: unscheduled */
	const char *ready;	/* the Ready condition's status; NULL: no condition */
	double ready_since;	/* its lastTransitionTime; 0: none */
	double created;		/* 0: none */
	double deleting;	/* deletionTimestamp; 0: none */
	const char *cost;	/* the pod-deletion-cost annotation; NULL: none */
	int restarts;
	int sidecar_restarts;	/* the restartCount of a sidecar (an init container that
				   restarts Always); 0: no sidecar */
	const char *ns;		/* NULL: default */
	const char *owners;	/* ownerReferences JSON, instead of owner's */
	const char *owner_uid;	/* the controller reference's uid; NULL: "uid-<owner>" */
	const char *rv;		/* NULL: "1" */
};

/* Returns the pod object p describes. */
cJSON *pod_new(const struct pod *p);

/* Writes object (taken) into r's table. */
void fixture_upsert(struct fixture *f, const struct resource *r, cJSON *object);

/* Writes the object text into r's table as an informer would: its body kept as written. */
void fixture_upsert_text(struct fixture *f, const struct resource *r, const char *text);

/* Writes the ReplicaSet r (the pod p) describes into the cache. */
void add_rs(struct fixture *f, const struct rs *r);
void add_pod(struct fixture *f, const struct pod *p);

/* Syncs key at now into *r; the sync must not fail. */
void sync_key(struct fixture *f, const char *key, double now, struct sync_result *r);

/* --- a controller's world --------------------------------------------------------------- */

/* A key the controller queued (or listed). */
struct ctl_key {
	char *key;
	double after;		/* add_after's delay in seconds; -1: added at once */
};

/* One test's world for a controller of any type; freeing it frees whatever a failed
 * assertion left. */
struct ctl_world {
	const void *row;		/* the test's row: its cmocka state at setup */
	struct store *store;		/* in memory */
	struct controller *c;		/* NULL until started */
	struct sync_result result;	/* the last sync's */
	char *error;
	cJSON *object;			/* the last event's object, or one the test made */
	struct ctl_key *keys;		/* recorded by ctl_queue, in order */
	int nkeys;
	int every_add;			/* record each add, not each key once */
	char **texts;			/* kept until the world is freed */
	int ntexts;
};

/* An in-memory store with a controller of type over it, made with config (NULL: the
 * defaults); type NULL: no controller until ctl_start. */
struct ctl_world *ctl_world_new(const struct controller_type *type,
    const struct controller_config *config);
/* Frees w, its controller, its store and what it keeps. */
void ctl_world_free(struct ctl_world *w);

/* Creates w's controller of type with config (borrowed: it must outlive the controller;
 * NULL: the defaults); 0, or -1 with w->error set. */
int ctl_start(struct ctl_world *w, const struct controller_type *type,
    const struct controller_config *config);

/* Keeps text (malloc'd) until w is freed and returns it. */
const char *ctl_keep(struct ctl_world *w, char *text);

/* Writes object (taken) into r's table. */
void ctl_cache(struct ctl_world *w, const struct resource *r, cJSON *object);
/* Removes the object with uid from r's table, as a watch's DELETED does. */
void ctl_uncache(struct ctl_world *w, const struct resource *r, const char *uid);
/* Marks r's informer synced, as its first list does: the cache holds every object. */
void ctl_listed(struct ctl_world *w, const struct resource *r);

/* A queue that records the keys added in w->keys: each key once, as a workqueue holds it
 * (each add when w->every_add is set). */
struct controller_queue ctl_queue(struct ctl_world *w);
/* The keys recorded, comma-separated, a delayed one as "key (after 5s)" (malloc'd). */
char *ctl_keys(const struct ctl_world *w);
/* Forgets the keys recorded. */
void ctl_keys_clear(struct ctl_world *w);
/* Fails unless the keys recorded are want, as ctl_keys spells them; then forgets them. */
void ctl_keys_expect(struct ctl_world *w, const char *want);

/* Records the keys list_keys gives, as ctl_queue does; list_keys must not fail. */
void ctl_list_keys(struct ctl_world *w);

/* Tells the handler of an event of type on r for object (taken: kept in w->object), at NOW,
 * with ctl_queue's queue; old (taken; NULL: none) is the object before, as its body. */
void ctl_tell(struct ctl_world *w, enum informer_event_type type, const struct resource *r,
    cJSON *object, cJSON *old);
/* The same at now. */
void ctl_tell_at(struct ctl_world *w, enum informer_event_type type,
    const struct resource *r, cJSON *object, cJSON *old, double now);

/* Syncs key at now into w->result; the sync must not fail. */
void ctl_sync(struct ctl_world *w, const char *key, double now);

/* Fails the test unless the description got is want (NULL: ""), showing both. */
void assert_described(const char *what, const char *got, const char *want);

/* --- the fake apiserver ----------------------------------------------------------------- */

/* A request the fake apiserver answered. */
struct recorded_request {
	char *method;
	char *path;		/* path and query */
	char *short_path;	/* the path after /namespaces/<ns>/: "pods/web-1" */
	char *content_type;	/* NULL: none */
	char *body;		/* NULL: none */
	cJSON *json;		/* the body parsed, or NULL */
	int code;		/* what it answered */
	int turn;		/* requests started in the same loop turn share it: 1, 2, ... */
};

/*
 * A failure to answer with: requests whose method is method and whose short path starts
 * with path, counted from 1 in the order they arrive, fail from the first-th to the last-th
 * (0: every one after first) with code, reason and message in a Status body (with cause
 * as its details' only cause, if not NULL). Code 0 answers nothing (a transport error);
 * code 200 answers message itself, as the body (a canned answer).
 */
struct fake_fault {
	const char *method;
	const char *path;
	int first;
	int last;
	int code;
	const char *reason;	/* "InternalError", "NotFound", ... */
	const char *message;
	const char *cause;	/* "NamespaceTerminating", or NULL */
};

struct fake_apiserver;

/* Called as each request arrives, before it is answered (for looking at the store then). */
typedef void (*fake_request_cb)(struct fake_apiserver *fake,
    const struct recorded_request *rq, void *arg);

struct fake_apiserver {
	struct event_base *base;
	struct client *client;		/* answered by the fake */
	struct fixture *f;		/* GETs of ReplicaSets read its cache */
	struct recorded_request *requests;
	int nrequests;
	const struct fake_fault *faults;	/* up to nfaults, checked in order */
	int nfaults;
	cJSON *live_rs;			/* the GET of a ReplicaSet answers this; NULL: the
					   cached one */
	fake_request_cb on_request;
	void *on_request_arg;
	long long next_rv;		/* resourceVersions of written objects: 100, 101, ... */
	int next_name;			/* generated pod names: <generateName>0, 1, ... */
	int *fault_seen;		/* requests each fault matched so far */
	int turn;			/* the current turn */
	struct event *turn_end;		/* pending while a turn's requests arrive */
};

/*
 * Creates a loop and a client on it whose requests the fake answers as an apiserver
 * would, over f's cache: a pod POST returns the pod with a generated name, a uid and the
 * next resourceVersion (201); a POST to another collection returns the object under its
 * own name (or a generated one) with a uid and the next resourceVersion (201); a PATCH
 * returns the object patched by name with the next resourceVersion; a DELETE returns a
 * Success Status; a PUT (of an object or its status) returns its body with the next
 * resourceVersion; a GET of a ReplicaSet returns live_rs or the cached one (404 when there
 * is none), a LIST of pods the namespace's cached pods (whatever the selector); events are
 * accepted (201, or 200 for a PATCH). faults come first.
 */
struct fake_apiserver *fake_apiserver_new(struct fixture *f);
void fake_apiserver_free(struct fake_apiserver *fake);

/* Sets the faults (borrowed: they must outlive the fake's use). */
void fake_apiserver_set_faults(struct fake_apiserver *fake, const struct fake_fault *faults,
    int n);

/* Runs the loop until nothing is left to do. */
void fake_apiserver_run(struct fake_apiserver *fake);

/* The requests seen, without events, as "POST pods;DELETE pods/a;..." (malloc'd). */
char *fake_apiserver_requests(const struct fake_apiserver *fake);

/* The number of requests of method whose short path starts with path in each turn that
 * had some, as "1,2,4,3": the requests that went out together (malloc'd). */
char *fake_apiserver_batches(const struct fake_apiserver *fake, const char *method,
    const char *path);

/* How many requests of method whose short path starts with path were seen. */
int fake_apiserver_count(const struct fake_apiserver *fake, const char *method,
    const char *path);

/* The events POSTed, as "Normal SuccessfulCreate: Created pod: foobar-0;..." (malloc'd),
 * in the order they were sent. */
char *fake_apiserver_events(const struct fake_apiserver *fake);

/* Forgets the requests seen so far. */
void fake_apiserver_clear(struct fake_apiserver *fake);

#endif
