/*
 * action.h - what a controller's sync decides: the actions for one key, and the
 * bookkeeping around them. The sync computes a sync_result from the cache alone; an
 * executor carries it out (live: through the REST client; plan and replay: printed).
 */
#ifndef SQLKCM_ACTION_H
#define SQLKCM_ACTION_H

#include <cjson/cJSON.h>

#include "util.h"

/* How many of a controller's counters one write may add to when it succeeds. */
#define ACTION_ADD_DONE 8

struct metrics_series;
struct resource;

enum action_type {
	ACTION_CREATE,		/* POST body to the resource's collection in namespace */
	ACTION_DELETE,		/* DELETE namespace/name, with uid as precondition */
	ACTION_PATCH,		/* PATCH namespace/name with body (strategic merge) */
	ACTION_UPDATE_STATUS,	/* PUT body to namespace/name/status */
	ACTION_UPDATE,		/* PUT body (the whole object) to namespace/name */
	ACTION_GET,		/* GET namespace/name (a confirmation: see sync_result) */
	ACTION_DELETE_COLLECTION, /* DELETE the resource's collection in namespace (every
				   object in it), with propagation if set */
};

/* One request a sync wants sent. */
struct action {
	enum action_type type;
	const char *verb;		/* for people: "create", "delete", "adopt", "release",
					   "update-status" */
	const struct resource *resource;
	char *namespace;
	char *name;			/* NULL for a create with generateName */
	char *uid;			/* the target's uid (precondition); NULL for a create */
	cJSON *body;			/* the object, patch or status object to send */
	int body_borrowed;		/* body is an earlier action's of the same result (the
					   creations of a sync share one pod) */
	char *reason;			/* why, for people: "diff=-3", "rank 2 of 10", ... */
	int merge_patch;		/* ACTION_PATCH: body is a JSON merge patch (RFC 7386),
					   which every resource takes, custom ones included */
	const char *field_manager;	/* ACTION_PATCH: a server-side apply of body (the
					   configuration this manager owns), forced, as this
					   field manager, to subresource if set; NULL: a merge or
					   strategic patch */
	int body_hidden;		/* the body carries a credential (a token): plan and
					   replay print each member of its data as "(hidden)" */
	char *precondition_rv;		/* ACTION_DELETE: also require this resourceVersion */
	const char *propagation;	/* ACTION_DELETE(_COLLECTION): a RESTOPS_PROPAGATE_*
					   policy, or NULL */
	int delete_now;			/* ACTION_DELETE: gracePeriodSeconds 0 (kube's forced
					   delete of a pod) */
	const char *subresource;	/* ACTION_PATCH, ACTION_UPDATE: send to this
					   subresource ("status", "finalize"), not the object */
	/* A controller's own counters (NULL: none) the executor adds 1 to when the write
	 * succeeds, and when it fails (kube's podgc counts every pod it tries, and the
	 * failures apart). */
	struct metrics_series *count_done;
	struct metrics_series *count_failed[2];
	/* More of them the executor adds add_by[i] to when the write succeeds (NULL: none):
	 * what a status update records, counted once it is written (kube's Job counts the
	 * pods and indexes a status update finishes). */
	struct metrics_series *add_done[ACTION_ADD_DONE];
	double add_by[ACTION_ADD_DONE];
	/* A write whose failure does not stop the writes of other resources after it: only
	 * those of its own resource that follow it are skipped, and the ones without this
	 * flag (the namespace's finalize). The namespace's deletions: kube's deleteAllContent
	 * goes on with every resource and reports the failures together. */
	int failure_goes_on;
	/* A write whose failure stops and skips nothing (with failure_goes_on: the next
	 * writes go on whatever failed before): one of many independent updates, each tried
	 * (kube's MarkPodsNotReady goes through every pod and reports the failures at the
	 * end). */
	int failure_stops_nothing;
	/* A status update not sent again over the owner read back after a conflict: the
	 * sync fails and runs again from the cache (kube's disruption controller, whose
	 * budget status an eviction may have just changed, never retries its write). */
	int status_no_retry;
	/* The done and failed events below are about the object written (body), not the
	 * sync's owner, and the done one is of done_type (NULL: Normal): kube's Warning
	 * NodeNotReady on each pod it marks not ready. */
	int event_on_target;
	const char *done_type;
	/* ACTION_DELETE: a 405 MethodNotAllowed (the resource takes no delete of one object)
	 * is no failure, and nothing more is done about the object (kube's deleteEachItem
	 * goes on to the next). */
	int not_allowed_ok;
	/* ACTION_CREATE of a review (a SubjectAccessReview, whose answer is its
	 * status.allowed): the answer decides the write right after it, sent only when
	 * allowed, and then the last write of the sync; when not allowed, that write is
	 * skipped and the next review goes on. Reviews that all say no fail the sync (synced
	 * again with backoff), as kube's CSR approver returns an error then. */
	int review;
	/* A confirm_absent list (no name): only the items this says count (nonzero) must be
	 * absent, with the action's body as its context, and the whole collection is read
	 * (kube's pvc-protection lists every pod of the namespace and looks for one that uses
	 * the claim). NULL: any item found counts, and one is enough to read. */
	int (*confirm_counts)(const cJSON *item, const cJSON *context);
	/* ACTION_UPDATE: body is a JSON merge patch of the live object, not the object: the
	 * executor reads the object, applies body to it and PUTs the result (a role that may
	 * update but not patch, over a cache that holds less than the object: kube's tokens
	 * controller reads a Secret live before its update). A resourceVersion in body makes
	 * the PUT conditional on the cached one. */
	int read_modify_write;
	int exists_ok;			/* ACTION_CREATE: AlreadyExists is success (the
					   object wanted is there), as kube's serviceaccount
					   controller takes it */
	/* ACTION_UPDATE_STATUS: the object to send instead when the sync's creations,
	 * deletions or writes failed, with the n messages of their failures in the order they
	 * came (n >= 1; malloc'd result), or NULL to send body anyway. */
	cJSON *(*body_on_failure)(const struct action *a, const char *const *messages, int n);
	cJSON *failure_context;		/* for body_on_failure */
	/* The creations' and deletions' events, in the controller's words (kube's, e.g.
	 * "SuccessfulCreate", "Created pod: "): on success the owner gets an event of
	 * done_reason whose message is done_prefix then the object's name; on failure one of
	 * failed_reason, failed_prefix then the error; and the failure the status reports
	 * (the ReplicaFailure condition's message) is error_prefix then the error. Static
	 * strings; a NULL reason records no event. */
	const char *done_reason;
	const char *done_prefix;
	const char *failed_reason;
	const char *failed_prefix;
	const char *error_prefix;
	/* The same in words made for this action (malloc'd; NULL: the static ones above):
	 * done_message is the whole message of its done event, failed_message what comes
	 * before the error in its failed event ("Failed to create new replica set \"x\": "). */
	char *done_message;
	char *failed_message;
};

/* An event a sync records about its owner as its execution starts (kube's warnings that
 * come with no request, e.g. SelectingAll). */
struct sync_event {
	const char *type;		/* "Normal" or "Warning" */
	const char *reason;
	char *message;
	const struct resource *resource;	/* what the event is about: NULL, the */
	cJSON *object;			/* owner; else an object of resource (its
					   metadata: name, namespace, uid) */
};

/* Everything one sync of a key decided. */
struct sync_result {
	const char *controller;		/* "replicaset" */
	char *key;			/* namespace/name of the owner */
	const struct resource *owner_resource;	/* the owner's resource ("replicasets") */
	char *owner_uid;		/* NULL when the owner is gone */
	cJSON *owner;			/* the owner as cached (for events); NULL when gone */

	int stale;			/* the cache lags the controller's own writes: do
					   nothing now, retry with backoff */
	char *stale_resource;		/* which informer lags */
	/* The sync found an error it does not write through (kube's sync returns one: a
	 * namespace's discovery failure, content that nothing will remove): the result is
	 * carried out all the same, then the key is synced again with backoff (kube's
	 * AddRateLimited) and requeue_after is not used. Where no backoff is modelled (replay),
	 * requeue_after still says when to look again. */
	int failed;
	int forget_expectations;	/* the owner is gone: drop its bookkeeping */
	char *waiting;			/* why creations and deletions wait (expectations not
					   yet satisfied), or NULL */

	/* Claims, sent first and all at once. If recheck_owner is set, a live GET of the
	 * owner must show the same uid and no deletionTimestamp before any adoption. */
	int recheck_owner;
	struct action *claims;
	int nclaims;

	/* Live reads that must find their object absent (NotFound, or another uid than the
	 * action's; an action without a uid must find no object of its name at all) before
	 * anything else is sent: the cache says it is gone, and it may lag.
	 * An action without a name (nor uid) lists its resource in its namespace instead,
	 * which must hold none of it (a resource gone, 404, or that takes no list, 405, holds
	 * none).
	 * One that finds it ends the execution with an error (the key is synced again with
	 * backoff, by when the cache has caught up). Sent all at once, before the claims. */
	struct action *confirm_absent;
	int nconfirm_absent;

	/* Events recorded as the execution starts. */
	struct sync_event *events;
	int nevents;

	/* Writes to other objects than managed dependents (a Deployment's ReplicaSets:
	 * create, scale, delete), sent one at a time in this order after the claims; the
	 * first that fails stops the rest and the status (but see failure_goes_on), and the
	 * key is synced again with backoff, as kube's syncs return at their first error. A
	 * failed write with an error_prefix sends the status's body_on_failure instead. */
	struct action *writes;
	int nwrites;

	/* Creations (in slow-start batches) or deletions (all at once), after the claims
	 * succeed; expectations are set to them before any is sent. */
	struct action *manage;
	int nmanage;
	int creating;			/* manage holds creations (else deletions) */

	/* The status update, after the creations or deletions; NULL when unchanged and
	 * nothing failed. */
	struct action *status;

	/* After the status is written (and nothing failed): sync again after this many
	 * seconds; 0 for no requeue. */
	double requeue_after;
};

/* Appends a zeroed action to an array of n actions and returns it. */
struct action *action_append(struct action **actions, int *n);

/* Appends an event of type and reason with message (taken) to r. */
void sync_result_add_event(struct sync_result *r, const char *type, const char *reason,
    char *message);
/* The same about another object than the owner: object (taken; at least its metadata's
 * name, namespace and uid) of resource, such as a pod of a node's sync. */
void sync_result_add_object_event(struct sync_result *r, const struct resource *resource,
    cJSON *object, const char *type, const char *reason, char *message);

/* Frees what an action owns (not the action itself). */
void action_clear(struct action *a);

/* Frees what r owns and zeroes it. */
void sync_result_clear(struct sync_result *r);

/*
 * Writes the actions of r as JSON lines to out, each one object:
 *   {"controller","key","action","resource","namespace","name","uid","reason","body"}
 * where an update-status has "status" (the new status) instead of "body";
 * plus the prefix members of extra (an object, or NULL) first, for replay's event position.
 * A stale result, or one waiting on expectations, also prints a line with action "wait"; an
 * event the sync records prints {"controller","key","action":"event","type","reason",
 * "message"}. Lines go in the order of execution: events, claims, writes, wait, manage,
 * status. Keys are written in a fixed order, so the same result always prints the same
 * bytes.
 */
void sync_result_print(const struct sync_result *r, const cJSON *extra, struct buf *out);

#endif
