/*
 * kubeevents.h - Kubernetes Events (core/v1) about the objects controllers act on, as
 * kube-controller-manager records them: correlated, rate limited, best-effort.
 */
#ifndef SQLKCM_KUBEEVENTS_H
#define SQLKCM_KUBEEVENTS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct client;
struct resource;
struct kubeevents;
struct event_correlator;

/* The two event types Kubernetes knows. */
#define EVENT_TYPE_NORMAL "Normal"
#define EVENT_TYPE_WARNING "Warning"

/* The object an event is about: an ObjectReference. Every string is borrowed; NULL or ""
 * leaves the field out. name is required. */
struct event_object_ref {
	const char *kind;		/* "ReplicaSet" */
	const char *api_version;	/* "apps/v1" */
	const char *ns;			/* "" for a cluster-scoped object */
	const char *name;
	const char *uid;
	const char *resource_version;
	const char *field_path;		/* a part of the object, "spec.containers{web}"; rarely */
};

/* Returns the wall-clock time in nanoseconds since the epoch; arg is the clock's own. */
typedef int64_t (*kubeevents_clock)(void *arg);

/*
 * Creates a recorder whose events name component as their source ("replicaset-controller")
 * and this host as reportingInstance. Events go to the apiserver through client (borrowed;
 * it must outlive the recorder); with client NULL they are only logged (at -v 4), as in
 * plan and replay.
 */
struct kubeevents *kubeevents_new(struct client *client, const char *component);
/* Frees the recorder, abandoning the events still being sent. */
void kubeevents_free(struct kubeevents *rec);

/* Replaces the clock (the real one: CLOCK_REALTIME), for tests. */
void kubeevents_set_clock(struct kubeevents *rec, kubeevents_clock now, void *arg);

/*
 * Records an event of type (EVENT_TYPE_NORMAL or EVENT_TYPE_WARNING) about object, with
 * reason ("SuccessfulCreate") and a printf-formatted message. Never blocks and never
 * fails: the event is sent, folded into an earlier identical one, or dropped (by the spam
 * filter, or when the apiserver refuses it; a drop is logged at -v 2).
 */
void kubeevents_event(struct kubeevents *rec, const struct event_object_ref *object,
    const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Records an event about an object given as JSON (such as a cached body); its kind and
 * apiVersion, which list items lack, default to resource's (resource may be NULL). */
void kubeevents_event_object(struct kubeevents *rec, const struct resource *resource,
    const cJSON *object, const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Fills *out with pointers into object (metadata.name, .namespace, .uid,
 * .resourceVersion, kind, apiVersion), kind and apiVersion defaulting to resource's;
 * returns -1 when object has no metadata.name. */
int event_object_ref_from_object(const cJSON *object, const struct resource *resource,
    struct event_object_ref *out);

/* --- the correlator: which request an event becomes (pure; no I/O, time passed in) ------- */

/* An event as the correlator sees it. Every string is borrowed, none NULL but the
 * object's optional fields. */
struct event_info {
	struct event_object_ref object;
	const char *type;
	const char *reason;
	const char *message;
	const char *component;		/* source.component and reportingComponent */
	const char *host;		/* source.host: "" (kube-controller-manager sets none) */
};

/* Tunables; a zero field takes the default in brackets (client-go's). */
struct event_correlator_options {
	int cache_size;			/* entries in each of the three caches [4096] */
	int spam_burst;			/* events per source and object at once [25] */
	int spam_refill_seconds;	/* then one more event per this many seconds [300] */
	int aggregate_max_events;	/* distinct messages of one reason before they are
					 * combined into one event [10] */
	int window_seconds;		/* how close occurrences must be to be counted or
					 * combined together [600] */
};

enum event_action {
	EVENT_CREATE,		/* POST a new Event */
	EVENT_PATCH,		/* PATCH the existing Event's count, lastTimestamp, message */
	EVENT_FOLDED,		/* counted into an Event whose request is in flight; its
				 * completion sends the new count */
	EVENT_DROPPED,		/* over the spam filter's budget */
};

/* What to send. The pointers are into the correlator and valid until its next call. */
struct event_decision {
	enum event_action action;
	const char *key;		/* to report the request's outcome with, */
	uint64_t serial;		/* with this */
	const struct event_info *event;	/* what to send (the message may be the combined one) */
	const char *name;		/* the Event's metadata.name */
	const char *ns;			/* its metadata.namespace */
	int count;
	int64_t first_timestamp;	/* seconds since the epoch */
	int64_t last_timestamp;
};

/* How a CREATE or PATCH went. */
enum event_outcome {
	EVENT_SENT,		/* 2xx */
	EVENT_GONE,		/* a PATCH found no Event (it expired on the server) */
	EVENT_FAILED,		/* anything else: dropped */
};

/* Creates a correlator; options may be NULL. */
struct event_correlator *event_correlator_new(const struct event_correlator_options *options);
void event_correlator_free(struct event_correlator *c);

/* Decides what an event that happens at now_ns becomes. */
void event_correlator_observe(struct event_correlator *c, const struct event_info *event,
    int64_t now_ns, struct event_decision *out);

/* Reports the outcome of the request a CREATE or PATCH decision (key, serial) sent;
 * returns true and fills *next when another request must follow: a CREATE after
 * EVENT_GONE, or a PATCH with the occurrences folded meanwhile. */
int event_correlator_done(struct event_correlator *c, const char *key, uint64_t serial,
    enum event_outcome outcome, int64_t now_ns, struct event_decision *next);

/* Returns "<object name>.<hex>" (at most 253 bytes): the hex of now_ns, or of
 * *last_suffix + 1 when the clock has not moved past it, so that names never repeat. */
char *event_name(const char *object_name, int64_t now_ns, int64_t *last_suffix);

/* Returns the Event to POST for a decision, as JSON text. */
char *event_create_body(const struct event_decision *d, const char *reporting_instance);

/* Returns the strategic merge patch for a decision: count, lastTimestamp and message. */
char *event_patch_body(const struct event_decision *d);

/* Writes t (seconds since the epoch) as RFC 3339 UTC, "2024-05-01T12:00:00Z". */
void event_format_time(int64_t t, char *out, size_t size);

#endif
