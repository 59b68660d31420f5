/*
 * test_leaderelection.c - leader election's decisions, without a cluster.
 *
 * Each case gives what the elector has observed (the record and how long ago), then the
 * apiserver's answers in order, like client-go's tests' fake clientset reactors; the
 * attempt must send exactly those verbs and end as the case says, with the holder and
 * leaseTransitions it says. The tables are client-go's TestTryAcquireOrRenew,
 * TestReleaseLease, TestFastPathLeaderElection and TestLeaderElectionConfigValidation
 * as data, plus the rules they leave implicit (observed time, takeover counting,
 * renewals keeping acquireTime, conflicts).
 */
#include "config.h"

#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "apistatus.h"
#include "leaderelection.h"
#include "util.h"

#define ME "baz"
#define LEASE_DURATION 10.0
#define NOW 1000.0			/* the monotonic clock at the attempt */
#define FUTURE (NOW + 3600000.0)	/* observed "in the future": never expired */
#define PAST (NOW - 3600000.0)		/* observed long ago: expired */
#define WALL 1795000000.25		/* wall clock written into the Lease */

/* A Lease spec in a case: a record; holder NULL means a Lease with no spec at all. */
struct spec {
	const char *holder;
	long duration;
	long transitions;
	const char *acquire;
	const char *renew;
};

/* One answer of the fake apiserver. */
struct reaction {
	const char *verb;		/* "get", "create" or "update" */
	enum api_reason reason;		/* API_OK, API_NOT_FOUND, API_CONFLICT, ... */
	int echo;			/* answer with the object sent */
	struct spec lease;		/* else this Lease (on API_OK) */
};

/* Returns the Lease JSON for a spec, with a resourceVersion. */
static cJSON *
lease_from_spec(const struct spec *s, const char *rv)
{
	struct leader_record r = {
		(char *)s->holder, s->duration, (char *)s->acquire, (char *)s->renew,
		s->transitions,
	};
	cJSON *lease = leader_lease_build(NULL, "foo", "bar", &r);
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(lease, "metadata");

	cJSON_AddStringToObject(meta, "resourceVersion", rv);
	cJSON_AddStringToObject(meta, "uid", "u-1");
	if (s->holder == NULL)
		cJSON_DeleteItemFromObjectCaseSensitive(lease, "spec");
	return lease;
}

/* Runs one attempt against reactions starting at *next, at now; returns its end and
 * appends the verbs sent to verbs. */
static enum leader_step
attempt(struct leader_state *st, const struct reaction *reactions, size_t n, size_t *next,
    double now, struct buf *verbs)
{
	enum leader_step step;
	char *body = NULL;

	step = leader_state_begin(st, now, WALL, &body);
	while (step == LEADER_STEP_GET || step == LEADER_STEP_CREATE ||
	    step == LEADER_STEP_UPDATE) {
		const char *verb = step == LEADER_STEP_GET ? "get" :
		    step == LEADER_STEP_CREATE ? "create" : "update";
		const struct reaction *r;
		struct api_status status;
		cJSON *object = NULL;
		char *next_body = NULL, rv[16];

		if (*next >= n)
			fail_msg("unexpected %s after %zu reactions", verb, n);
		r = &reactions[(*next)++];
		buf_printf(verbs, "%s%s", verbs->len > 0 ? "," : "", verb);
		if (strcmp(r->verb, verb) != 0)
			fail_msg("reaction %zu: sent %s, the case expects %s", *next - 1, verb,
			    r->verb);
		if (step != LEADER_STEP_GET)
			assert_non_null(body);
		memset(&status, 0, sizeof status);
		status.reason = r->reason;
		snprintf(rv, sizeof rv, "%zu", *next);
		if (r->reason == API_OK) {
			if (r->echo) {
				cJSON *meta;

				object = cJSON_Parse(body);
				meta = cJSON_GetObjectItemCaseSensitive(object, "metadata");
				cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
				cJSON_AddStringToObject(meta, "resourceVersion", rv);
			} else {
				object = lease_from_spec(&r->lease, rv);
			}
		}
		if (step == LEADER_STEP_GET)
			step = leader_state_got(st, &status, object, now, WALL, &next_body);
		else
			step = leader_state_wrote(st, &status, object, now);
		free(body);
		body = next_body;
	}
	assert_null(body);
	return step;
}

/* A case of client-go's TestTryAcquireOrRenew. */
struct acquire_case {
	const char *name;
	struct spec observed;		/* holder NULL: nothing observed */
	double observed_time;
	double retry_after;		/* a second attempt this much later, if the first
					 * does not end as expected */
	struct reaction reactions[4];
	size_t nreactions;
	enum leader_step expect;
	long transitions;		/* leaseTransitions of the observed record after */
	const char *holder;
};

static void
run_acquire_cases(const struct acquire_case *cases, size_t ncases)
{
	for (size_t i = 0; i < ncases; i++) {
		const struct acquire_case *c = &cases[i];
		struct leader_state st;
		struct buf verbs;
		size_t next = 0;
		enum leader_step got;

		leader_state_init(&st, "foo", "bar", ME, LEASE_DURATION);
		if (c->observed.holder != NULL) {
			struct leader_record r = {
				(char *)c->observed.holder, c->observed.duration,
				(char *)c->observed.acquire, (char *)c->observed.renew,
				c->observed.transitions,
			};
			leader_state_observe(&st, &r, c->observed_time);
		}
		buf_init(&verbs);
		got = attempt(&st, c->reactions, c->nreactions, &next, NOW, &verbs);
		if (got != c->expect && c->retry_after > 0)
			got = attempt(&st, c->reactions, c->nreactions, &next,
			    NOW + c->retry_after, &verbs);
		if (got != c->expect)
			fail_msg("%s: ended in step %d, want %d (verbs %s)", c->name, got, c->expect,
			    verbs.data);
		if (next != c->nreactions)
			fail_msg("%s: %zu of %zu reactions used (verbs %s)", c->name, next,
			    c->nreactions, verbs.data);
		if (strcmp(st.observed.holder_identity, c->holder) != 0)
			fail_msg("%s: holder %s, want %s", c->name, st.observed.holder_identity,
			    c->holder);
		if (st.observed.lease_transitions != c->transitions)
			fail_msg("%s: leaseTransitions %ld, want %ld", c->name,
			    st.observed.lease_transitions, c->transitions);
		buf_free(&verbs);
		leader_state_clear(&st);
	}
}

#define NONE { NULL, 0, 0, NULL, NULL }

static void
try_acquire_or_renew_follows_client_go(void **state)
{
	static const struct acquire_case cases[] = {
		{ "acquire from no object", NONE, 0, 0,
		    { { "get", API_NOT_FOUND, 0, NONE }, { "create", API_OK, 1, NONE } }, 2,
		    LEADER_STEP_ACQUIRED, 0, ME },
		{ "acquire from object without a spec", NONE, 0, 0,
		    { { "get", API_OK, 0, NONE }, { "update", API_OK, 1, NONE } }, 2,
		    LEADER_STEP_ACQUIRED, 1, ME },
		/* First seen now, valid for 3s: held; 3s later, unchanged: expired. */
		{ "acquire from led object with the lease duration seconds", NONE, 0, 3,
		    { { "get", API_OK, 0, { "bing", 3, 0, NULL, NULL } },
		      { "get", API_OK, 0, { "bing", 3, 0, NULL, NULL } },
		      { "update", API_OK, 1, NONE } }, 3,
		    LEADER_STEP_ACQUIRED, 1, ME },
		{ "acquire from unled object", NONE, 0, 0,
		    { { "get", API_OK, 0, { "", 0, 0, NULL, NULL } },
		      { "update", API_OK, 1, NONE } }, 2,
		    LEADER_STEP_ACQUIRED, 1, ME },
		{ "acquire from led, unacked object", { "bing", 0, 0, NULL, NULL }, PAST, 0,
		    { { "get", API_OK, 0, { "bing", 0, 0, NULL, NULL } },
		      { "update", API_OK, 1, NONE } }, 2,
		    LEADER_STEP_ACQUIRED, 1, ME },
		{ "acquire from empty led, acked object", NONE, FUTURE, 0,
		    { { "get", API_OK, 0, { "", 0, 0, NULL, NULL } },
		      { "update", API_OK, 1, NONE } }, 2,
		    LEADER_STEP_ACQUIRED, 1, ME },
		/* client-go's record has no lease duration and relies on its clock moving
		 * between two reads of it; ours says 10s. */
		{ "don't acquire from led, acked object", NONE, FUTURE, 0,
		    { { "get", API_OK, 0, { "bing", 10, 0, NULL, NULL } } }, 1,
		    LEADER_STEP_HELD, 0, "bing" },
		{ "renew already acquired object", { ME, 0, 0, NULL, NULL }, FUTURE, 0,
		    { { "get", API_OK, 0, { ME, 0, 0, NULL, NULL } },
		      { "update", API_OK, 1, NONE } }, 2,
		    LEADER_STEP_ACQUIRED, 0, ME },
		/* What the tables above leave implicit. */
		{ "taking over counts one more transition", NONE, 0, 0,
		    { { "get", API_OK, 0, { "bing", 0, 7, "2026-01-01T00:00:00.000000Z",
		        "2026-01-01T00:00:01.000000Z" } },
		      { "update", API_OK, 1, NONE } }, 2,
		    LEADER_STEP_ACQUIRED, 8, ME },
		{ "a conflict on the update loses the round", { "bing", 0, 0, NULL, NULL }, PAST, 0,
		    { { "get", API_OK, 0, { "bing", 0, 0, NULL, NULL } },
		      { "update", API_CONFLICT, 0, NONE } }, 2,
		    LEADER_STEP_FAILED, 0, "bing" },
		{ "another created it first", NONE, 0, 0,
		    { { "get", API_NOT_FOUND, 0, NONE }, { "create", API_ALREADY_EXISTS, 0, NONE } },
		    2, LEADER_STEP_FAILED, 0, "" },
		{ "an error reading it is a failed round", NONE, 0, 0,
		    { { "get", API_SERVER_ERROR, 0, NONE } }, 1, LEADER_STEP_FAILED, 0, "" },
		{ "forbidden reading it is a failed round", NONE, 0, 0,
		    { { "get", API_FORBIDDEN, 0, NONE } }, 1, LEADER_STEP_FAILED, 0, "" },
		/* Our own identity on a record we did not write: it is ours to renew. */
		{ "a record naming us after a restart of the logic is renewed", NONE, 0, 0,
		    { { "get", API_OK, 0, { ME, 10, 3, "2026-01-01T00:00:00.000000Z", NULL } },
		      { "update", API_OK, 1, NONE } }, 2,
		    LEADER_STEP_ACQUIRED, 3, ME },
	};

	(void)state;
	run_acquire_cases(cases, sizeof cases / sizeof cases[0]);
}

/* A follower's clock runs from when it saw the record change, never from renewTime. */
static void
expiry_is_judged_by_the_observers_clock(void **state)
{
	static const struct reaction r[] = {
		/* renewTime is an hour old by any wall clock: still held when first seen. */
		{ "get", API_OK, 0, { "bing", 10, 0, "2026-01-01T00:00:00.000000Z",
		    "2026-01-01T00:00:00.000000Z" } },
		/* Renewed (renewTime changed) 8s later: the 10s run again from here. */
		{ "get", API_OK, 0, { "bing", 10, 0, "2026-01-01T00:00:00.000000Z",
		    "2026-01-01T00:00:08.000000Z" } },
		/* 12s after the first look, 4s after the change: held. */
		{ "get", API_OK, 0, { "bing", 10, 0, "2026-01-01T00:00:00.000000Z",
		    "2026-01-01T00:00:08.000000Z" } },
		/* 18.5s: unchanged for 10.5s: expired; taken with one more transition. */
		{ "get", API_OK, 0, { "bing", 10, 0, "2026-01-01T00:00:00.000000Z",
		    "2026-01-01T00:00:08.000000Z" } },
		{ "update", API_OK, 1, NONE },
	};
	struct leader_state st;
	struct buf verbs;
	size_t next = 0;

	(void)state;
	buf_init(&verbs);
	leader_state_init(&st, "foo", "bar", ME, LEASE_DURATION);
	assert_int_equal(attempt(&st, r, 5, &next, NOW, &verbs), LEADER_STEP_HELD);
	assert_int_equal(attempt(&st, r, 5, &next, NOW + 8, &verbs), LEADER_STEP_HELD);
	assert_int_equal(attempt(&st, r, 5, &next, NOW + 12, &verbs), LEADER_STEP_HELD);
	assert_true(leader_state_lease_valid(&st, NOW + 17.9));
	assert_false(leader_state_lease_valid(&st, NOW + 18));
	assert_int_equal(attempt(&st, r, 5, &next, NOW + 18.5, &verbs), LEADER_STEP_ACQUIRED);
	assert_string_equal(verbs.data, "get,get,get,get,update");
	assert_string_equal(st.observed.holder_identity, ME);
	assert_int_equal(st.observed.lease_transitions, 1);
	buf_free(&verbs);
	leader_state_clear(&st);
}

/* client-go's TestFastPathLeaderElection: the leader renews from what it wrote last,
 * and reads again only when that fails. */
static void
leader_renews_optimistically_and_falls_back_to_reading(void **state)
{
	static const struct reaction fast[] = {
		{ "get", API_NOT_FOUND, 0, NONE }, { "create", API_OK, 1, NONE },
		{ "update", API_OK, 1, NONE }, { "update", API_OK, 1, NONE },
	};
	static const struct reaction fallback[] = {
		{ "get", API_NOT_FOUND, 0, NONE }, { "create", API_OK, 1, NONE },
		{ "update", API_OK, 1, NONE }, { "update", API_CONFLICT, 0, NONE },
		{ "get", API_OK, 0, { ME, 10, 0, "2026-01-01T00:00:00.000000Z", NULL } },
		{ "update", API_OK, 1, NONE }, { "update", API_OK, 1, NONE },
	};
	struct leader_state st;
	struct buf verbs;
	size_t next = 0;

	(void)state;
	buf_init(&verbs);
	leader_state_init(&st, "foo", "bar", ME, LEASE_DURATION);
	for (int i = 0; i < 3; i++)
		assert_int_equal(attempt(&st, fast, 4, &next, NOW + 2 * i, &verbs),
		    LEADER_STEP_ACQUIRED);
	assert_string_equal(verbs.data, "get,create,update,update");
	leader_state_clear(&st);

	buf_reset(&verbs);
	next = 0;
	leader_state_init(&st, "foo", "bar", ME, LEASE_DURATION);
	for (int i = 0; i < 4; i++)
		assert_int_equal(attempt(&st, fallback, 7, &next, NOW + 2 * i, &verbs),
		    LEADER_STEP_ACQUIRED);
	assert_string_equal(verbs.data, "get,create,update,update,get,update,update");
	assert_int_equal(st.observed.lease_transitions, 0);
	leader_state_clear(&st);
	buf_free(&verbs);
}

/* A renewal keeps acquireTime and leaseTransitions, moves renewTime, and is conditional
 * on the resourceVersion last seen. */
static void
renewal_keeps_acquire_time_and_sends_the_resource_version(void **state)
{
	struct leader_state st;
	struct leader_record r = { ME, 10, "2026-01-01T00:00:00.000000Z",
	    "2026-01-01T00:00:05.000000Z", 4 };
	struct spec s = { ME, 10, 4, "2026-01-01T00:00:00.000000Z",
	    "2026-01-01T00:00:05.000000Z" };
	struct api_status ok;
	cJSON *sent;
	char *body;

	(void)state;
	memset(&ok, 0, sizeof ok);
	ok.reason = API_OK;
	leader_state_init(&st, "foo", "bar", ME, LEASE_DURATION);
	leader_state_observe(&st, &r, NOW);
	st.lease = lease_from_spec(&s, "42");
	assert_int_equal(leader_state_begin(&st, NOW + 2, WALL, &body), LEADER_STEP_UPDATE);
	sent = cJSON_Parse(body);
	free(body);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(sent, "metadata"),
	    "resourceVersion")->valuestring, "42");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(sent, "spec"),
	    "acquireTime")->valuestring, "2026-01-01T00:00:00.000000Z");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(sent, "spec"),
	    "renewTime")->valuestring, "2026-11-18T11:06:40.250000Z");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(sent, "spec"),
	    "leaseTransitions")->valueint, 4);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(sent, "spec"),
	    "leaseDurationSeconds")->valueint, 10);
	assert_string_equal(cJSON_GetObjectItem(sent, "kind")->valuestring, "Lease");
	assert_int_equal(leader_state_wrote(&st, &ok, sent, NOW + 2), LEADER_STEP_ACQUIRED);
	assert_true(leader_state_is_leader(&st));
	leader_state_clear(&st);
}

/* A leader whose lease expired by its own clock (the loop stalled) reads before it
 * writes, and finds whether someone took over. */
static void
leader_past_its_lease_reads_first_and_sees_the_new_holder(void **state)
{
	static const struct reaction r[] = {
		{ "get", API_OK, 0, { "bing", 10, 1, NULL, NULL } },
	};
	struct leader_record mine = { ME, 10, NULL, NULL, 0 };
	struct spec s = { ME, 10, 0, NULL, NULL };
	struct leader_state st;
	struct buf verbs;
	size_t next = 0;

	(void)state;
	buf_init(&verbs);
	leader_state_init(&st, "foo", "bar", ME, LEASE_DURATION);
	leader_state_observe(&st, &mine, NOW - 11);
	st.lease = lease_from_spec(&s, "7");
	assert_int_equal(attempt(&st, r, 1, &next, NOW, &verbs), LEADER_STEP_HELD);
	assert_string_equal(verbs.data, "get");
	assert_false(leader_state_is_leader(&st));
	buf_free(&verbs);
	leader_state_clear(&st);
}

/* client-go's TestReleaseLease: giving the lease up empties the holder, keeps the
 * transitions, and sets a lease duration of one second; someone else's is not touched. */
static void
release_empties_the_holder_only_of_our_lease(void **state)
{
	struct spec ours = { ME, 10, 3, "2026-01-01T00:00:00.000000Z", NULL };
	struct spec theirs = { "bing", 10, 4, NULL, NULL };
	struct leader_state st;
	cJSON *lease, *sent, *spec;
	char *body;

	(void)state;
	leader_state_init(&st, "foo", "bar", ME, LEASE_DURATION);
	lease = lease_from_spec(&ours, "9");
	body = leader_state_release_body(&st, lease, WALL);
	assert_non_null(body);
	sent = cJSON_Parse(body);
	spec = cJSON_GetObjectItem(sent, "spec");
	assert_string_equal(cJSON_GetObjectItem(spec, "holderIdentity")->valuestring, "");
	assert_int_equal(cJSON_GetObjectItem(spec, "leaseDurationSeconds")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(spec, "leaseTransitions")->valueint, 3);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(sent, "metadata"),
	    "resourceVersion")->valuestring, "9");
	cJSON_Delete(sent);
	cJSON_Delete(lease);
	free(body);

	lease = lease_from_spec(&theirs, "10");
	assert_null(leader_state_release_body(&st, lease, WALL));
	cJSON_Delete(lease);
	leader_state_clear(&st);
}

/* A released lease (holder "") is taken at once, whatever its duration says. */
static void
released_lease_is_taken_at_once(void **state)
{
	static const struct reaction r[] = {
		{ "get", API_OK, 0, { "", 1, 5, NULL, NULL } }, { "update", API_OK, 1, NONE },
	};
	struct leader_state st;
	struct buf verbs;
	size_t next = 0;

	(void)state;
	buf_init(&verbs);
	leader_state_init(&st, "foo", "bar", ME, LEASE_DURATION);
	assert_int_equal(attempt(&st, r, 2, &next, NOW, &verbs), LEADER_STEP_ACQUIRED);
	assert_int_equal(st.observed.lease_transitions, 6);
	assert_int_equal(st.observed.lease_duration_seconds, 10);
	buf_free(&verbs);
	leader_state_clear(&st);
}

struct config_case {
	double lease, renew, retry;
	const char *ns, *name, *identity;
	const char *error;	/* a part of the message, or NULL for valid */
};

/* client-go's NewLeaderElector checks and kube-controller-manager's flag validation. */
static void
config_is_checked_as_kube_controller_manager_does(void **state)
{
	static const struct config_case cases[] = {
		{ 15, 10, 2, "kube-system", "sqlkcm", "id", NULL },
		{ 15, 2, 1, "foo", "bar", "baz", NULL },
		{ 4, 3, 1, "foo", "bar", "baz", NULL },
		{ 10, 10, 2, "foo", "bar", "baz", "greater than --leader-elect-renew-deadline" },
		{ 5, 10, 2, "foo", "bar", "baz", "greater than --leader-elect-renew-deadline" },
		{ 15, 2.4, 2, "foo", "bar", "baz", "times 1.2" },
		{ 15, 2.41, 2, "foo", "bar", "baz", NULL },
		{ 0, 10, 2, "foo", "bar", "baz", "lease-duration must be greater than zero" },
		{ 15, 0, 2, "foo", "bar", "baz", "renew-deadline must be greater than zero" },
		{ 15, 10, 0, "foo", "bar", "baz", "retry-period must be greater than zero" },
		{ 15, 10, -1, "foo", "bar", "baz", "retry-period must be greater than zero" },
		{ 0.9, 0.5, 0.1, "foo", "bar", "baz", "at least 1s" },
		{ 15, 10, 2, "", "bar", "baz", "namespace must not be empty" },
		{ 15, 10, 2, "foo", "", "baz", "name must not be empty" },
		{ 15, 10, 2, "foo", "bar", "", "identity is empty" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct config_case *c = &cases[i];
		struct leader_config lc = { c->ns, c->name, c->identity, c->lease, c->renew,
		    c->retry, NULL };
		char *error = NULL;
		int rc = leader_config_check(&lc, &error);

		if (c->error == NULL) {
			if (rc != 0)
				fail_msg("case %zu: %s", i, error);
			continue;
		}
		if (rc == 0)
			fail_msg("case %zu: accepted, want an error with \"%s\"", i, c->error);
		if (strstr(error, c->error) == NULL)
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, error, c->error);
		free(error);
	}
}

/* hostname_uuid, a fresh UUID each time. */
static void
identity_is_the_host_name_and_a_random_uuid(void **state)
{
	char *a = leader_identity_new(NULL), *b = leader_identity_new(NULL);
	regex_t re;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(regcomp(&re, "^.+_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
	    "[0-9a-f]{12}$", REG_EXTENDED | REG_NOSUB), 0);
	assert_int_equal(regexec(&re, a, 0, NULL, 0), 0);
	assert_string_not_equal(a, b);
	regfree(&re);
	free(a);
	free(b);
}

/* MicroTime: UTC with six decimals, as the apiserver writes it. */
static void
micro_time_has_six_decimals(void **state)
{
	char t[32];

	(void)state;
	leader_format_micro_time(0, t);
	assert_string_equal(t, "1970-01-01T00:00:00.000000Z");
	leader_format_micro_time(WALL, t);
	assert_string_equal(t, "2026-11-18T11:06:40.250000Z");
	leader_format_micro_time(1795000000.999999, t);
	assert_string_equal(t, "2026-11-18T11:06:40.999999Z");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(try_acquire_or_renew_follows_client_go),
		cmocka_unit_test(expiry_is_judged_by_the_observers_clock),
		cmocka_unit_test(leader_renews_optimistically_and_falls_back_to_reading),
		cmocka_unit_test(renewal_keeps_acquire_time_and_sends_the_resource_version),
		cmocka_unit_test(leader_past_its_lease_reads_first_and_sees_the_new_holder),
		cmocka_unit_test(release_empties_the_holder_only_of_our_lease),
		cmocka_unit_test(released_lease_is_taken_at_once),
		cmocka_unit_test(config_is_checked_as_kube_controller_manager_does),
		cmocka_unit_test(identity_is_the_host_name_and_a_random_uuid),
		cmocka_unit_test(micro_time_has_six_decimals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
