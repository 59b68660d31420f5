/*
 * leaderelection.h - leader election on a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection package does it: acquire, renew within the renew deadline, retry every
 * retry period, release on a clean stop.
 */
#ifndef SQLKCM_LEADERELECTION_H
#define SQLKCM_LEADERELECTION_H

#include <cjson/cJSON.h>
#include <event2/event.h>

#include "apistatus.h"

struct client;
struct kubeevents;
struct leader_elector;

/* client-go's JitterFactor: the renew deadline must exceed the retry period times this,
 * and an attempt to acquire waits retry period * (1 + up to this) before the next. */
#define LEADER_JITTER_FACTOR 1.2

/* How to elect. Strings are borrowed and must outlive the elector. */
struct leader_config {
	const char *lease_namespace;	/* the Lease's namespace: "kube-system" */
	const char *lease_name;		/* the Lease's name */
	const char *identity;		/* ours: hostname_uuid (leader_identity_new) */
	double lease_duration;		/* seconds a follower waits after the last change it
					 * saw before it takes the lease over */
	double renew_deadline;		/* seconds the leader keeps retrying a renewal before
					 * it gives up leading */
	double retry_period;		/* seconds between attempts */
	struct kubeevents *events;	/* records LeaderElection events on the Lease; or NULL */
};

/* Checks the durations as client-go and kube-controller-manager do (lease duration >
 * renew deadline > retry period * LEADER_JITTER_FACTOR, all positive), plus that the
 * lease duration is at least a second (the Lease holds whole seconds), and that the
 * names and identity are not empty. *error names the flag-level setting at fault. */
int leader_config_check(const struct leader_config *config, char **error);

/* Returns a new identity: the host name, '_', a random (version 4) UUID, as
 * kube-controller-manager's; NULL with *error set when no randomness is to be had. */
char *leader_identity_new(char **error);

/* What the elector tells its owner. Both are called from the loop. */
struct leader_callbacks {
	void (*started_leading)(void *arg);	/* we hold the lease: start the controllers */
	void (*stopped_leading)(void *arg);	/* we lost it: stop them at once and exit */
	void *arg;
};

/* Creates an elector that runs on base (its timers and its client's events at the
 * highest priority, so renewals are not queued behind the controllers' work). client
 * should be its own, so its rate limit and connection are not shared with the
 * controllers'. */
struct leader_elector *leader_elector_new(struct event_base *base, struct client *client,
    const struct leader_config *config, const struct leader_callbacks *callbacks);
void leader_elector_free(struct leader_elector *le);

/* Starts trying to acquire the lease. */
void leader_elector_start(struct leader_elector *le);

/* True while we hold the lease. */
int leader_elector_is_leader(const struct leader_elector *le);

/* Stops electing and, if we hold the lease, gives it up (holderIdentity emptied, as
 * client-go's ReleaseOnCancel), so a standby takes over at once rather than after the
 * lease duration. done(arg) is called once, from the loop, when that is over (or failed,
 * or timed out after the renew deadline); stopped_leading is never called after this. */
void leader_elector_release(struct leader_elector *le, void (*done)(void *arg), void *arg);

/* --- the decisions (pure; no I/O, time passed in) ---------------------------------------
 *
 * One attempt (client-go's tryAcquireOrRenew) is a short conversation with the
 * apiserver: leader_state_begin says what to send first, and each response, given to
 * leader_state_got (after a GET) or leader_state_wrote (after a CREATE or UPDATE), says
 * what to send next, until the attempt ends in ACQUIRED, HELD or FAILED. Times are
 * seconds: `now` on a monotonic clock (how long since we saw the record change), `wall`
 * the wall-clock time written into the Lease as acquireTime and renewTime.
 */

/* The record a Lease's spec holds. */
struct leader_record {
	char *holder_identity;		/* "" when nobody holds it (released) */
	long lease_duration_seconds;
	char *acquire_time;		/* MicroTime text as read; NULL when absent */
	char *renew_time;
	long lease_transitions;
};

/* What one elector knows of the lock. */
struct leader_state {
	char *lease_namespace;
	char *lease_name;
	char *identity;
	long lease_duration_seconds;	/* ours, written into the records we write */
	struct leader_record observed;	/* the record we last saw or wrote */
	char *observed_raw;		/* the spec we last saw, as text, to tell a change */
	double observed_time;		/* when the observed record last changed (monotonic) */
	cJSON *lease;			/* the Lease object last read or written, for the
					 * resourceVersion of the next update; NULL if none */
	int fast_path;			/* the attempt's first step was an optimistic update */
	struct leader_record proposed;	/* the record being written */
};

enum leader_step {
	LEADER_STEP_GET,	/* GET the Lease */
	LEADER_STEP_CREATE,	/* POST *body: there is no Lease yet */
	LEADER_STEP_UPDATE,	/* PUT *body over the Lease (conditional on its resourceVersion) */
	LEADER_STEP_ACQUIRED,	/* the attempt is over: we hold the lease (acquired or renewed) */
	LEADER_STEP_HELD,	/* over: another holds it and it has not expired */
	LEADER_STEP_FAILED,	/* over: an error; try again after the retry period */
};

/* Initializes *st for the Lease lease_namespace/lease_name, as identity, writing records
 * of lease_duration seconds (strings copied). */
void leader_state_init(struct leader_state *st, const char *lease_namespace,
    const char *lease_name, const char *identity, double lease_duration);
void leader_state_clear(struct leader_state *st);

/* Sets the record we have observed and when, as if we had just read it (for tests and
 * for a restart of the pure logic). raw is made from the record. */
void leader_state_observe(struct leader_state *st, const struct leader_record *record,
    double now);

/* True when the observed record names us. */
int leader_state_is_leader(const struct leader_state *st);

/* True when the observed record has not expired at now: we saw it change less than its
 * leaseDurationSeconds ago (by our clock; its renewTime is never compared with it). */
int leader_state_lease_valid(const struct leader_state *st, double now);

/* Begins an attempt: the leader whose lease is still valid updates optimistically from
 * what it last saw (UPDATE); everyone else reads first (GET). *body (malloc'd) is set for
 * UPDATE. */
enum leader_step leader_state_begin(struct leader_state *st, double now, double wall,
    char **body);

/* The GET's answer: status (API_OK with the Lease in lease, taken; API_NOT_FOUND; or an
 * error). Returns CREATE, UPDATE (with *body), HELD or FAILED. */
enum leader_step leader_state_got(struct leader_state *st, const struct api_status *status,
    cJSON *lease, double now, double wall, char **body);

/* A CREATE's or UPDATE's answer (the Lease as written, taken, on API_OK). Returns
 * ACQUIRED, FAILED, or GET when an optimistic update failed (the slow path follows). */
enum leader_step leader_state_wrote(struct leader_state *st, const struct api_status *status,
    cJSON *lease, double now);

/* Releasing: given the Lease just read (borrowed), returns the body of the UPDATE that
 * gives it up (holderIdentity "", leaseDurationSeconds 1, leaseTransitions kept), or
 * NULL when it is not ours to give up. */
char *leader_state_release_body(struct leader_state *st, const cJSON *lease, double wall);

/* Builds the Lease object for the record: namespace and name for a new one, or the
 * metadata of base (borrowed; NULL for a new Lease) with the spec replaced. */
cJSON *leader_lease_build(const cJSON *base, const char *lease_namespace,
    const char *lease_name, const struct leader_record *record);

/* Reads a Lease's spec into *record (freed with leader_record_clear). */
void leader_record_from_lease(const cJSON *lease, struct leader_record *record);
void leader_record_clear(struct leader_record *record);

/* Writes wall (seconds since the epoch) as a metav1.MicroTime: UTC, microseconds. */
void leader_format_micro_time(double wall, char out[32]);

#endif
