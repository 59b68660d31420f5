/*
 * leaderelection.c - leader election on a coordination.k8s.io/v1 Lease.
 *
 * Several sqlkcm processes may run against one cluster; only the one holding the Lease
 * runs the controllers, the others keep their caches warm and wait. The rules are
 * client-go's, so that sqlkcm and client-go programs read each other's Leases alike:
 *
 * - The Lease's spec is the record: holderIdentity, leaseDurationSeconds, acquireTime,
 *   renewTime, leaseTransitions. Every write is an UPDATE conditional on the
 *   resourceVersion last read, so two candidates never both win a round.
 * - A follower judges expiry by its own clock: the lease has expired when the record has
 *   not changed for leaseDurationSeconds since the follower last saw it change. renewTime
 *   is never compared with the local clock, so clock skew between hosts does not matter.
 * - A holderIdentity of "" means nobody holds the lease: anyone may take it at once.
 * - Taking the lease from someone else (or from nobody) adds one to leaseTransitions;
 *   renewing keeps acquireTime and leaseTransitions.
 * - The leader renews every retry period, optimistically from the Lease it last wrote
 *   (no GET) while its lease is valid; if that fails, it reads and tries again. If no
 *   renewal succeeds within the renew deadline of a round, or the Lease shows another
 *   holder, it has lost: the owner stops the controllers and exits (the supervisor
 *   restarts it as a follower). Since renew deadline < lease duration, the old leader
 *   has stopped before any follower can see the lease expire.
 * - A candidate tries every retry period plus up to 1.2 times that at random, so that
 *   candidates started together do not stay in step.
 * - Released on a clean stop: holderIdentity "", leaseDurationSeconds 1.
 *
 * The decisions are pure functions over struct leader_state (unit-tested with tables);
 * struct leader_elector drives them with restops requests and libevent timers. Its
 * timers and its client's events run at priority 0, the highest, so that a loop turn
 * busy with the controllers' syncs and responses does not delay a renewal.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "kubeevents.h"
#include "leaderelection.h"
#include "log.h"
#include "resource.h"
#include "restops.h"
#include "timeutil.h"
#include "util.h"

/* The event priority of the elector's timers and client (0: the highest). */
#define LEADER_PRIORITY 0

static const struct resource lease_resource = {
	"leases", "Lease", "coordination.k8s.io/v1",
	"/apis/coordination.k8s.io/v1/leases", NULL, NULL, -1, 0, 1, NULL,
};

/* --- configuration and identity -------------------------------------------------------- */

int
leader_config_check(const struct leader_config *c, char **error)
{
	if (c->lease_namespace == NULL || *c->lease_namespace == '\0')
		return error_set(error, "--leader-elect-resource-namespace must not be empty");
	if (c->lease_name == NULL || *c->lease_name == '\0')
		return error_set(error, "--leader-elect-resource-name must not be empty");
	if (c->identity == NULL || *c->identity == '\0')
		return error_set(error, "the leader election identity is empty");
	if (!(c->lease_duration > 0))
		return error_set(error, "--leader-elect-lease-duration must be greater than zero");
	if (!(c->renew_deadline > 0))
		return error_set(error, "--leader-elect-renew-deadline must be greater than zero");
	if (!(c->retry_period > 0))
		return error_set(error, "--leader-elect-retry-period must be greater than zero");
	if (c->lease_duration < 1)
		return error_set(error, "--leader-elect-lease-duration must be at least 1s (a "
		    "Lease holds whole seconds)");
	if (c->lease_duration <= c->renew_deadline)
		return error_set(error, "--leader-elect-lease-duration must be greater than "
		    "--leader-elect-renew-deadline");
	if (c->renew_deadline <= LEADER_JITTER_FACTOR * c->retry_period)
		return error_set(error, "--leader-elect-renew-deadline must be greater than "
		    "--leader-elect-retry-period times %g", LEADER_JITTER_FACTOR);
	return 0;
}

char *
leader_identity_new(char **error)
{
	unsigned char u[16];
	char host[256];

	if (getentropy(u, sizeof u) != 0) {
		error_set(error, "cannot get random bytes for the leader election identity: %s",
		    strerror(errno));
		return NULL;
	}
	if (gethostname(host, sizeof host) != 0 || host[0] == '\0')
		strcpy(host, "localhost");
	host[sizeof host - 1] = '\0';
	u[6] = (u[6] & 0x0f) | 0x40;	/* version 4 */
	u[8] = (u[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
	return xasprintf("%s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", host, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
	    u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* --- records and Leases ------------------------------------------------------------------ */

void
leader_format_micro_time(double wall, char out[32])
{
	time_t secs = (time_t)floor(wall);
	long micros = (long)((wall - (double)secs) * 1e6);
	struct tm tm;
	char date[24];

	if (micros < 0)
		micros = 0;
	if (micros > 999999)
		micros = 999999;
	gmtime_r(&secs, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%s.%06ldZ", date, micros);
}

void
leader_record_clear(struct leader_record *r)
{
	free(r->holder_identity);
	free(r->acquire_time);
	free(r->renew_time);
	memset(r, 0, sizeof *r);
}

/* Returns a copy of s, or NULL for NULL. */
static char *
copy_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

/* Copies src into *dst (cleared first). */
static void
record_copy(struct leader_record *dst, const struct leader_record *src)
{
	leader_record_clear(dst);
	dst->holder_identity = xstrdup(src->holder_identity != NULL ? src->holder_identity : "");
	dst->lease_duration_seconds = src->lease_duration_seconds;
	dst->acquire_time = copy_or_null(src->acquire_time);
	dst->renew_time = copy_or_null(src->renew_time);
	dst->lease_transitions = src->lease_transitions;
}

/* Returns the string at key of object, or NULL. */
static const char *
string_at(const cJSON *object, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(object, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Returns the number at key of object, or 0. */
static long
long_at(const cJSON *object, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(object, key);

	return cJSON_IsNumber(v) ? (long)v->valuedouble : 0;
}

void
leader_record_from_lease(const cJSON *lease, struct leader_record *r)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
	const char *holder = string_at(spec, "holderIdentity");

	memset(r, 0, sizeof *r);
	r->holder_identity = xstrdup(holder != NULL ? holder : "");
	r->lease_duration_seconds = long_at(spec, "leaseDurationSeconds");
	r->acquire_time = copy_or_null(string_at(spec, "acquireTime"));
	r->renew_time = copy_or_null(string_at(spec, "renewTime"));
	r->lease_transitions = long_at(spec, "leaseTransitions");
}

/* Returns the record as one string, to tell whether it changed (malloc'd). */
static char *
record_raw(const struct leader_record *r)
{
	return xasprintf("%s\037%ld\037%s\037%s\037%ld",
	    r->holder_identity != NULL ? r->holder_identity : "", r->lease_duration_seconds,
	    r->acquire_time != NULL ? r->acquire_time : "",
	    r->renew_time != NULL ? r->renew_time : "", r->lease_transitions);
}

cJSON *
leader_lease_build(const cJSON *base, const char *lease_namespace, const char *lease_name,
    const struct leader_record *r)
{
	cJSON *lease, *meta, *spec;

	if (base != NULL) {
		lease = cJSON_Duplicate(base, 1);
		cJSON_DeleteItemFromObjectCaseSensitive(lease, "spec");
	} else {
		lease = cJSON_CreateObject();
		cJSON_AddStringToObject(lease, "apiVersion", lease_resource.api_version);
		cJSON_AddStringToObject(lease, "kind", lease_resource.kind);
		meta = cJSON_AddObjectToObject(lease, "metadata");
		cJSON_AddStringToObject(meta, "name", lease_name);
		cJSON_AddStringToObject(meta, "namespace", lease_namespace);
	}
	spec = cJSON_AddObjectToObject(lease, "spec");
	cJSON_AddStringToObject(spec, "holderIdentity",
	    r->holder_identity != NULL ? r->holder_identity : "");
	cJSON_AddNumberToObject(spec, "leaseDurationSeconds", (double)r->lease_duration_seconds);
	if (r->acquire_time != NULL)
		cJSON_AddStringToObject(spec, "acquireTime", r->acquire_time);
	if (r->renew_time != NULL)
		cJSON_AddStringToObject(spec, "renewTime", r->renew_time);
	cJSON_AddNumberToObject(spec, "leaseTransitions", (double)r->lease_transitions);
	return lease;
}

/* Returns the Lease for the record as JSON text (malloc'd). */
static char *
lease_body(const cJSON *base, const struct leader_state *st, const struct leader_record *r)
{
	cJSON *lease = leader_lease_build(base, st->lease_namespace, st->lease_name, r);
	char *text = cJSON_PrintUnformatted(lease);
	char *body = xstrdup(text != NULL ? text : "{}");

	cJSON_free(text);
	cJSON_Delete(lease);
	return body;
}

/* --- the decisions --------------------------------------------------------------------------- */

void
leader_state_init(struct leader_state *st, const char *lease_namespace,
    const char *lease_name, const char *identity, double lease_duration)
{
	memset(st, 0, sizeof *st);
	st->lease_namespace = xstrdup(lease_namespace);
	st->lease_name = xstrdup(lease_name);
	st->identity = xstrdup(identity);
	st->lease_duration_seconds = (long)lease_duration;
	st->observed.holder_identity = xstrdup("");
	st->observed_raw = xstrdup("");
}

void
leader_state_clear(struct leader_state *st)
{
	free(st->lease_namespace);
	free(st->lease_name);
	free(st->identity);
	leader_record_clear(&st->observed);
	leader_record_clear(&st->proposed);
	free(st->observed_raw);
	cJSON_Delete(st->lease);
	memset(st, 0, sizeof *st);
}

void
leader_state_observe(struct leader_state *st, const struct leader_record *record, double now)
{
	record_copy(&st->observed, record);
	free(st->observed_raw);
	st->observed_raw = record_raw(&st->observed);
	st->observed_time = now;
}

int
leader_state_is_leader(const struct leader_state *st)
{
	return st->observed.holder_identity != NULL &&
	    strcmp(st->observed.holder_identity, st->identity) == 0;
}

int
leader_state_lease_valid(const struct leader_state *st, double now)
{
	return st->observed_time + (double)st->observed.lease_duration_seconds > now;
}

/* Replaces the Lease kept for the next update (takes lease; NULL keeps the old one). */
static void
state_keep_lease(struct leader_state *st, cJSON *lease)
{
	if (lease == NULL)
		return;
	cJSON_Delete(st->lease);
	st->lease = lease;
}

/* Sets the proposed record to ours, acquired and renewed at wall. */
static void
state_propose(struct leader_state *st, double wall)
{
	char t[32];

	leader_format_micro_time(wall, t);
	leader_record_clear(&st->proposed);
	st->proposed.holder_identity = xstrdup(st->identity);
	st->proposed.lease_duration_seconds = st->lease_duration_seconds;
	st->proposed.acquire_time = xstrdup(t);
	st->proposed.renew_time = xstrdup(t);
	st->proposed.lease_transitions = 0;
}

/* Keeps what a renewal keeps of record: when it was acquired, how often it changed hands. */
static void
state_propose_renewal(struct leader_state *st, const struct leader_record *record)
{
	free(st->proposed.acquire_time);
	st->proposed.acquire_time = copy_or_null(record->acquire_time);
	st->proposed.lease_transitions = record->lease_transitions;
}

enum leader_step
leader_state_begin(struct leader_state *st, double now, double wall, char **body)
{
	st->fast_path = 0;
	*body = NULL;
	state_propose(st, wall);
	if (leader_state_is_leader(st) && leader_state_lease_valid(st, now) && st->lease != NULL) {
		state_propose_renewal(st, &st->observed);
		st->fast_path = 1;
		*body = lease_body(st->lease, st, &st->proposed);
		return LEADER_STEP_UPDATE;
	}
	return LEADER_STEP_GET;
}

enum leader_step
leader_state_got(struct leader_state *st, const struct api_status *status, cJSON *lease,
    double now, double wall, char **body)
{
	struct leader_record current;
	char *raw;

	st->fast_path = 0;
	*body = NULL;
	state_propose(st, wall);
	if (status->reason == API_NOT_FOUND) {
		cJSON_Delete(lease);
		*body = lease_body(NULL, st, &st->proposed);
		return LEADER_STEP_CREATE;
	}
	if (status->reason != API_OK || lease == NULL) {
		cJSON_Delete(lease);
		return LEADER_STEP_FAILED;
	}
	state_keep_lease(st, lease);
	leader_record_from_lease(st->lease, &current);
	raw = record_raw(&current);
	if (strcmp(raw, st->observed_raw) != 0)
		leader_state_observe(st, &current, now);
	free(raw);
	if (current.holder_identity[0] != '\0' && leader_state_lease_valid(st, now) &&
	    !leader_state_is_leader(st)) {
		leader_record_clear(&current);
		return LEADER_STEP_HELD;
	}
	if (leader_state_is_leader(st))
		state_propose_renewal(st, &current);
	else
		st->proposed.lease_transitions = current.lease_transitions + 1;
	leader_record_clear(&current);
	*body = lease_body(st->lease, st, &st->proposed);
	return LEADER_STEP_UPDATE;
}

enum leader_step
leader_state_wrote(struct leader_state *st, const struct api_status *status, cJSON *lease,
    double now)
{
	struct leader_record written;

	if (status->reason != API_OK) {
		cJSON_Delete(lease);
		if (st->fast_path) {
			st->fast_path = 0;
			return LEADER_STEP_GET;
		}
		return LEADER_STEP_FAILED;
	}
	st->fast_path = 0;
	if (lease != NULL) {
		state_keep_lease(st, lease);
		leader_record_from_lease(st->lease, &written);
		leader_state_observe(st, &written, now);
		leader_record_clear(&written);
	} else {
		leader_state_observe(st, &st->proposed, now);
	}
	return LEADER_STEP_ACQUIRED;
}

char *
leader_state_release_body(struct leader_state *st, const cJSON *lease, double wall)
{
	struct leader_record current, released;
	char t[32];
	char *body;

	leader_record_from_lease(lease, &current);
	if (strcmp(current.holder_identity, st->identity) != 0) {
		leader_record_clear(&current);
		return NULL;
	}
	leader_format_micro_time(wall, t);
	memset(&released, 0, sizeof released);
	released.holder_identity = xstrdup("");
	released.lease_duration_seconds = 1;
	released.acquire_time = xstrdup(t);
	released.renew_time = xstrdup(t);
	released.lease_transitions = current.lease_transitions;
	body = lease_body(lease, st, &released);
	leader_record_clear(&st->proposed);
	st->proposed = released;
	leader_record_clear(&current);
	return body;
}

/* --- the elector on the loop ---------------------------------------------------------------- */

enum leader_phase {
	PHASE_IDLE,		/* not started */
	PHASE_ACQUIRING,	/* a candidate */
	PHASE_LEADING,
	PHASE_RELEASING,	/* giving the lease up */
	PHASE_DONE,		/* lost, released or stopped: nothing more happens */
};

struct leader_elector {
	struct event_base *base;
	struct client *client;
	struct leader_config config;
	struct leader_callbacks callbacks;
	struct leader_state st;
	enum leader_phase phase;
	struct restops_request *request;	/* in flight, or NULL */
	struct event *retry_timer;	/* the next attempt */
	struct event *deadline_timer;	/* a renewal round's deadline; the release's */
	struct event *done_event;	/* calls the release's done */
	int in_round;			/* leading: a renewal round is under way */
	int release_requested;		/* release once the request in flight is answered */
	void (*done)(void *arg);
	void *done_arg;
	unsigned long long rng;
	char *last_holder;		/* for the log: who we last saw holding it */
};

static void elector_attempt(struct leader_elector *le);
static void elector_release_begin(struct leader_elector *le);

/* Returns a random number in [0, 1) (xorshift64*; not for secrets). */
static double
elector_random(struct leader_elector *le)
{
	le->rng ^= le->rng >> 12;
	le->rng ^= le->rng << 25;
	le->rng ^= le->rng >> 27;
	return (double)((le->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/* Arms ev to fire after seconds. */
static void
timer_after(struct event *ev, double seconds)
{
	struct timeval tv;

	if (seconds < 0)
		seconds = 0;
	tv.tv_sec = (time_t)seconds;
	tv.tv_usec = (suseconds_t)((seconds - (double)tv.tv_sec) * 1e6);
	evtimer_add(ev, &tv);
}

/* Records a LeaderElection event on the Lease, as client-go's lock does. */
static void
elector_record_event(struct leader_elector *le, const char *what)
{
	struct event_object_ref ref;
	const cJSON *meta;

	if (le->config.events == NULL)
		return;
	memset(&ref, 0, sizeof ref);
	meta = cJSON_GetObjectItemCaseSensitive(le->st.lease, "metadata");
	ref.kind = lease_resource.kind;
	ref.api_version = lease_resource.api_version;
	ref.ns = le->config.lease_namespace;
	ref.name = le->config.lease_name;
	ref.uid = string_at(meta, "uid");
	ref.resource_version = string_at(meta, "resourceVersion");
	kubeevents_event(le->config.events, &ref, EVENT_TYPE_NORMAL, "LeaderElection",
	    "%s %s", le->config.identity, what);
}

/* Logs who holds the lease when that changed since we last said. */
static void
elector_note_holder(struct leader_elector *le)
{
	const char *holder = le->st.observed.holder_identity;

	if (le->st.observed_raw[0] == '\0')
		return;		/* no Lease seen yet */
	if (le->last_holder != NULL && strcmp(le->last_holder, holder) == 0)
		return;
	free(le->last_holder);
	le->last_holder = xstrdup(holder);
	log_info("lease=%s/%s holder=\"%s\"%s", le->config.lease_namespace,
	    le->config.lease_name, holder, *holder == '\0' ? " (released)" : "");
}

/* We lost the lease: nothing more is sent; the owner is told. */
static void
elector_lost(struct leader_elector *le, const char *why)
{
	le->phase = PHASE_DONE;
	if (le->request != NULL) {
		restops_cancel(le->request);
		le->request = NULL;
	}
	evtimer_del(le->retry_timer);
	evtimer_del(le->deadline_timer);
	log_error("leader election lost: lease=%s/%s identity=%s: %s",
	    le->config.lease_namespace, le->config.lease_name, le->config.identity, why);
	elector_record_event(le, "stopped leading");
	le->callbacks.stopped_leading(le->callbacks.arg);
}

/* An attempt ended in step. */
static void
elector_attempt_over(struct leader_elector *le, enum leader_step step)
{
	elector_note_holder(le);
	if (le->release_requested) {
		elector_release_begin(le);
		return;
	}
	switch (le->phase) {
	case PHASE_ACQUIRING:
		if (step == LEADER_STEP_ACQUIRED) {
			le->phase = PHASE_LEADING;
			log_info("acquired the lease %s/%s: leading as %s",
			    le->config.lease_namespace, le->config.lease_name, le->config.identity);
			elector_record_event(le, "became leader");
			timer_after(le->retry_timer, le->config.retry_period);
			le->callbacks.started_leading(le->callbacks.arg);
			return;
		}
		log_v(4, "lease=%s/%s: not acquired (%s)", le->config.lease_namespace,
		    le->config.lease_name, step == LEADER_STEP_HELD ? "held by another" :
		    "failed");
		timer_after(le->retry_timer, le->config.retry_period *
		    (1 + LEADER_JITTER_FACTOR * elector_random(le)));
		return;
	case PHASE_LEADING:
		if (step == LEADER_STEP_ACQUIRED) {
			log_v(5, "lease=%s/%s: renewed", le->config.lease_namespace,
			    le->config.lease_name);
			le->in_round = 0;
			evtimer_del(le->deadline_timer);
			timer_after(le->retry_timer, le->config.retry_period);
		} else if (step == LEADER_STEP_HELD) {
			char *why = xasprintf("the lease is held by %s",
			    le->st.observed.holder_identity);
			elector_lost(le, why);
			free(why);
		} else {
			log_warning("lease=%s/%s: renewal failed; retrying until the renew "
			    "deadline", le->config.lease_namespace, le->config.lease_name);
			timer_after(le->retry_timer, le->config.retry_period);
		}
		return;
	default:
		return;
	}
}

/* Sends what step asks for, or ends the attempt. Takes body. */
static void elector_send(struct leader_elector *le, enum leader_step step, char *body);

/* The GET of an attempt is answered. */
static void
elector_got(struct restops_result *res, void *arg)
{
	struct leader_elector *le = arg;
	enum leader_step step;
	char *body;

	le->request = NULL;
	if (res->status.reason != API_OK && res->status.reason != API_NOT_FOUND)
		log_warning("lease=%s/%s: reading it: %s", le->config.lease_namespace,
		    le->config.lease_name, res->status.message);
	step = leader_state_got(&le->st, &res->status, restops_take_object(res),
	    time_monotonic(), time_now(), &body);
	elector_send(le, step, body);
}

/* The CREATE or UPDATE of an attempt is answered. */
static void
elector_wrote(struct restops_result *res, void *arg)
{
	struct leader_elector *le = arg;
	enum leader_step step;

	le->request = NULL;
	/* Losing a race to another candidate is normal; anything else an operator must see
	 * (a missing namespace, no right to write Leases). */
	if (res->status.reason == API_CONFLICT || res->status.reason == API_ALREADY_EXISTS)
		log_v(2, "lease=%s/%s: writing it: %s", le->config.lease_namespace,
		    le->config.lease_name, res->status.message);
	else if (res->status.reason != API_OK)
		log_warning("lease=%s/%s: writing it: %s", le->config.lease_namespace,
		    le->config.lease_name, res->status.message);
	step = leader_state_wrote(&le->st, &res->status, restops_take_object(res),
	    time_monotonic());
	elector_send(le, step, NULL);
}

static void
elector_send(struct leader_elector *le, enum leader_step step, char *body)
{
	const char *ns = le->config.lease_namespace, *name = le->config.lease_name;
	char *error = NULL;

	switch (step) {
	case LEADER_STEP_GET:
		le->request = restops_get(le->client, &lease_resource, ns, name, elector_got, le,
		    &error);
		break;
	case LEADER_STEP_CREATE:
		le->request = restops_create(le->client, &lease_resource, ns, body, elector_wrote,
		    le, &error);
		break;
	case LEADER_STEP_UPDATE:
		le->request = restops_update(le->client, &lease_resource, ns, name, body,
		    elector_wrote, le, &error);
		break;
	default:
		free(body);
		elector_attempt_over(le, step);
		return;
	}
	free(body);
	if (le->request == NULL) {
		log_error("lease=%s/%s: %s", ns, name, error);
		free(error);
		elector_attempt_over(le, LEADER_STEP_FAILED);
	}
}

static void
elector_attempt(struct leader_elector *le)
{
	enum leader_step step;
	char *body;

	step = leader_state_begin(&le->st, time_monotonic(), time_now(), &body);
	elector_send(le, step, body);
}

/* The retry timer: the next attempt; for the leader, maybe the start of a round. */
static void
elector_retry_expired(evutil_socket_t fd, short what, void *arg)
{
	struct leader_elector *le = arg;

	(void)fd;
	(void)what;
	if (le->phase == PHASE_LEADING && !le->in_round) {
		le->in_round = 1;
		timer_after(le->deadline_timer, le->config.renew_deadline);
	}
	elector_attempt(le);
}

/* Tells the release's owner it is over, from a callback of its own. */
static void
elector_release_finish(struct leader_elector *le)
{
	le->phase = PHASE_DONE;
	le->release_requested = 0;
	evtimer_del(le->deadline_timer);
	evtimer_del(le->retry_timer);
	if (le->request != NULL) {
		restops_cancel(le->request);
		le->request = NULL;
	}
	event_active(le->done_event, EV_TIMEOUT, 0);
}

/* The deadline timer: a renewal round took too long, or the release did. */
static void
elector_deadline_expired(evutil_socket_t fd, short what, void *arg)
{
	struct leader_elector *le = arg;

	(void)fd;
	(void)what;
	if (le->phase == PHASE_LEADING && !le->release_requested) {
		elector_lost(le, "no renewal succeeded within the renew deadline");
		return;
	}
	log_warning("lease=%s/%s: could not release it in time; it expires by itself",
	    le->config.lease_namespace, le->config.lease_name);
	elector_release_finish(le);
}

/* The release's UPDATE is answered. */
static void
elector_release_wrote(struct restops_result *res, void *arg)
{
	struct leader_elector *le = arg;

	le->request = NULL;
	if (res->status.reason == API_OK) {
		leader_state_observe(&le->st, &le->st.proposed, time_monotonic());
		log_info("released the lease %s/%s", le->config.lease_namespace,
		    le->config.lease_name);
		elector_record_event(le, "stopped leading");
	} else {
		log_warning("lease=%s/%s: releasing it: %s", le->config.lease_namespace,
		    le->config.lease_name, res->status.message);
	}
	elector_release_finish(le);
}

/* The release's GET is answered: give the lease up if it is still ours. */
static void
elector_release_got(struct restops_result *res, void *arg)
{
	struct leader_elector *le = arg;
	char *body, *error = NULL;

	le->request = NULL;
	if (res->status.reason != API_OK || res->object == NULL) {
		log_warning("lease=%s/%s: reading it to release it: %s",
		    le->config.lease_namespace, le->config.lease_name, res->status.message);
		elector_release_finish(le);
		return;
	}
	body = leader_state_release_body(&le->st, res->object, time_now());
	if (body == NULL) {
		elector_release_finish(le);	/* not ours any more */
		return;
	}
	state_keep_lease(&le->st, restops_take_object(res));
	le->request = restops_update(le->client, &lease_resource, le->config.lease_namespace,
	    le->config.lease_name, body, elector_release_wrote, le, &error);
	free(body);
	if (le->request == NULL) {
		log_error("lease=%s/%s: %s", le->config.lease_namespace, le->config.lease_name,
		    error);
		free(error);
		elector_release_finish(le);
	}
}

/* Releases the lease if we hold it (nothing is in flight now). */
static void
elector_release_begin(struct leader_elector *le)
{
	char *error = NULL;

	le->release_requested = 0;
	le->phase = PHASE_RELEASING;
	evtimer_del(le->retry_timer);
	if (!leader_state_is_leader(&le->st)) {
		elector_release_finish(le);
		return;
	}
	le->request = restops_get(le->client, &lease_resource, le->config.lease_namespace,
	    le->config.lease_name, elector_release_got, le, &error);
	if (le->request == NULL) {
		log_error("lease=%s/%s: %s", le->config.lease_namespace, le->config.lease_name,
		    error);
		free(error);
		elector_release_finish(le);
	}
}

/* Calls the release's done. */
static void
elector_done(evutil_socket_t fd, short what, void *arg)
{
	struct leader_elector *le = arg;
	void (*done)(void *) = le->done;

	(void)fd;
	(void)what;
	le->done = NULL;
	if (done != NULL)
		done(le->done_arg);
}

struct leader_elector *
leader_elector_new(struct event_base *base, struct client *client,
    const struct leader_config *config, const struct leader_callbacks *callbacks)
{
	struct leader_elector *le = xcalloc(1, sizeof *le);
	struct timespec ts;

	le->base = base;
	le->client = client;
	le->config = *config;
	le->callbacks = *callbacks;
	leader_state_init(&le->st, config->lease_namespace, config->lease_name,
	    config->identity, config->lease_duration);
	le->retry_timer = evtimer_new(base, elector_retry_expired, le);
	le->deadline_timer = evtimer_new(base, elector_deadline_expired, le);
	le->done_event = event_new(base, -1, 0, elector_done, le);
	event_priority_set(le->retry_timer, LEADER_PRIORITY);
	event_priority_set(le->deadline_timer, LEADER_PRIORITY);
	client_set_priority(client, LEADER_PRIORITY);
	clock_gettime(CLOCK_REALTIME, &ts);
	le->rng = ((unsigned long long)ts.tv_nsec << 20) ^ (unsigned long long)ts.tv_sec ^
	    ((unsigned long long)getpid() << 40) ^ 0x9e3779b97f4a7c15ULL;
	return le;
}

void
leader_elector_start(struct leader_elector *le)
{
	if (le->phase != PHASE_IDLE)
		return;
	le->phase = PHASE_ACQUIRING;
	log_info("attempting to acquire the lease %s/%s as %s", le->config.lease_namespace,
	    le->config.lease_name, le->config.identity);
	elector_attempt(le);
}

int
leader_elector_is_leader(const struct leader_elector *le)
{
	return le != NULL && le->phase == PHASE_LEADING;
}

void
leader_elector_release(struct leader_elector *le, void (*done)(void *arg), void *arg)
{
	le->done = done;
	le->done_arg = arg;
	if (le->phase == PHASE_IDLE || le->phase == PHASE_DONE || le->phase == PHASE_RELEASING) {
		if (le->phase != PHASE_RELEASING)
			elector_release_finish(le);
		return;
	}
	evtimer_del(le->retry_timer);
	le->in_round = 0;
	timer_after(le->deadline_timer, le->config.renew_deadline);
	if (le->request != NULL)
		le->release_requested = 1;	/* the answer decides whether we hold it */
	else
		elector_release_begin(le);
}

void
leader_elector_free(struct leader_elector *le)
{
	if (le == NULL)
		return;
	if (le->request != NULL)
		restops_cancel(le->request);
	event_free(le->retry_timer);
	event_free(le->deadline_timer);
	event_free(le->done_event);
	leader_state_clear(&le->st);
	free(le->last_holder);
	free(le);
}
