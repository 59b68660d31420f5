/*
 * test_workqueue.c - the rate-limiting workqueue: client-go's semantics on a libevent loop.
 *
 * The cases are client-go's workqueue tests as data (TestLen, TestReinsert, TestCollapse,
 * TestDeduping, TestAddTwoFireEarly, TestCopyShifting, TestRateLimitingQueue, TestMetrics,
 * the rate limiter tables), plus what a single-threaded loop adds: the consumer is told
 * from an event, never from inside an add. Delayed adds run on the real loop with delays
 * of a few tens of milliseconds; everything else uses a clock the test moves by hand.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <event2/event.h>

#include "metrics.h"
#include "util.h"
#include "workqueue.h"

#define MAX_RECORDED 64

/* A queue under test, the clock it reads and what its consumer saw. */
struct fixture {
	struct event_base *base;
	struct workqueue *q;
	double now;			/* the hand-moved clock, in seconds */
	int ready_calls;
	int drain;			/* the consumer gets and finishes every key */
	char *got[MAX_RECORDED];	/* keys the consumer got, in order */
	int ngot;
};

/* The hand-moved clock. */
static double
fake_now(void *arg)
{
	struct fixture *f = arg;

	return f->now;
}

/* The real clock, as the queue reads it by default. */
static double
monotonic_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The consumer: counts its calls and, when draining, gets and finishes every key. */
static void
record_ready(struct workqueue *q, void *arg)
{
	struct fixture *f = arg;
	const char *key;

	f->ready_calls++;
	while (f->drain && workqueue_get(q, &key) == 1) {
		if (f->ngot < MAX_RECORDED)
			f->got[f->ngot++] = xstrdup(key);
		workqueue_done(q, key);
	}
}

/* Makes a fixture whose queue reads the hand-moved clock (or the real one). */
static struct fixture *
fixture_new(int real_clock, const struct workqueue_options *extra)
{
	struct fixture *f = xcalloc(1, sizeof *f);
	struct workqueue_options options = { .priority = -1 };

	if (extra != NULL)
		options = *extra;
	options.ready = record_ready;
	options.arg = f;
	options.now = real_clock ? NULL : fake_now;
	f->base = event_base_new();
	f->q = workqueue_new(f->base, "test", &options);
	return f;
}

static void
fixture_free(struct fixture *f)
{
	workqueue_free(f->q);
	event_base_free(f->base);
	for (int i = 0; i < f->ngot; i++)
		free(f->got[i]);
	free(f);
}

/* Asserts that the consumer got exactly the keys listed (NULL-terminated), in order. */
static void
assert_got(struct fixture *f, const char *const *keys)
{
	int n = 0;

	while (keys[n] != NULL)
		n++;
	if (f->ngot != n)
		fail_msg("got %d keys, want %d", f->ngot, n);
	for (int i = 0; i < n; i++) {
		if (strcmp(f->got[i], keys[i]) != 0)
			fail_msg("key %d: got %s, want %s", i, f->got[i], keys[i]);
	}
}

/* Gets the next key, which must be want, and returns the queue's copy of it. */
static const char *
must_get(struct workqueue *q, const char *want)
{
	const char *key = NULL;

	assert_int_equal(workqueue_get(q, &key), 1);
	assert_string_equal(key, want);
	return key;
}

/* Asserts a == b within a rounding error. */
static void
assert_near(double a, double b, const char *what)
{
	if (!(fabs(a - b) <= 1e-9 * (1 + fabs(b))))
		fail_msg("%s: got %.17g, want %.17g", what, a, b);
}

/* --- the rate limiter ------------------------------------------------------------------ */

static void
backoff_doubles_from_its_base_and_stops_at_its_cap(void **state)
{
	(void)state;
	static const struct {
		double base, max;
		int failures;
		double delay;
	} cases[] = {
		/* DefaultControllerRateLimiter: 5 ms doubling, up to 1000 s. */
		{ 0.005, 1000, 0, 0.005 }, { 0.005, 1000, 1, 0.01 }, { 0.005, 1000, 2, 0.02 },
		{ 0.005, 1000, 3, 0.04 }, { 0.005, 1000, 4, 0.08 }, { 0.005, 1000, 5, 0.16 },
		{ 0.005, 1000, 6, 0.32 }, { 0.005, 1000, 7, 0.64 }, { 0.005, 1000, 8, 1.28 },
		{ 0.005, 1000, 9, 2.56 }, { 0.005, 1000, 10, 5.12 }, { 0.005, 1000, 11, 10.24 },
		{ 0.005, 1000, 12, 20.48 }, { 0.005, 1000, 13, 40.96 },
		{ 0.005, 1000, 14, 81.92 }, { 0.005, 1000, 15, 163.84 },
		{ 0.005, 1000, 16, 327.68 }, { 0.005, 1000, 17, 655.36 },
		{ 0.005, 1000, 18, 1000 }, { 0.005, 1000, 19, 1000 },
		{ 0.005, 1000, 1000, 1000 }, { 0.005, 1000, INT_MAX, 1000 },
		/* TestItemExponentialFailureRateLimiter: 1 ms doubling, up to 1 s. */
		{ 0.001, 1, 0, 0.001 }, { 0.001, 1, 1, 0.002 }, { 0.001, 1, 2, 0.004 },
		{ 0.001, 1, 3, 0.008 }, { 0.001, 1, 4, 0.016 }, { 0.001, 1, 10, 1 },
		/* TestItemExponentialFailureRateLimiterOverFlow. */
		{ 0.001, 1000, 5, 0.032 }, { 0.001, 1000, 1000, 1000 },
		{ 60, 1000 * 3600, 2, 240 }, { 60, 1000 * 3600, 1000, 1000 * 3600 },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double got = workqueue_backoff_delay(cases[i].base, cases[i].max,
		    cases[i].failures);

		if (got != cases[i].delay)
			fail_msg("case %zu: %g after %d failures: got %.17g, want %.17g", i,
			    cases[i].base, cases[i].failures, got, cases[i].delay);
	}
}

static void
bucket_gives_a_burst_of_100_then_a_token_every_tenth_of_a_second(void **state)
{
	(void)state;
	struct workqueue_bucket bucket;
	char what[64];

	workqueue_bucket_init(&bucket, 10, 100);
	for (int i = 0; i < 100; i++)
		assert_true(workqueue_bucket_reserve(&bucket, 42) == 0);
	/* Reserving more at the same moment queues up at 10 per second. */
	for (int i = 1; i <= 10; i++) {
		snprintf(what, sizeof what, "reservation %d", 100 + i);
		assert_near(workqueue_bucket_reserve(&bucket, 42), 0.1 * i, what);
	}
	/* One second later the ten reserved tokens are paid for; the next waits 0.1 s. */
	assert_near(workqueue_bucket_reserve(&bucket, 43), 0.1, "after the debt");
	/* At one reservation per tenth of a second, nobody waits more than that. */
	for (int i = 1; i <= 20; i++) {
		snprintf(what, sizeof what, "steady %d", i);
		assert_near(workqueue_bucket_reserve(&bucket, 43 + 0.1 * i), 0.1, what);
	}
	/* A long idle time fills the bucket to its burst, not beyond. */
	for (int i = 0; i < 100; i++)
		assert_true(workqueue_bucket_reserve(&bucket, 1000) == 0);
	assert_near(workqueue_bucket_reserve(&bucket, 1000), 0.1, "after the burst");
}

static void
bucket_gains_nothing_from_a_clock_that_steps_back(void **state)
{
	(void)state;
	struct workqueue_bucket bucket;

	workqueue_bucket_init(&bucket, 10, 1);
	assert_true(workqueue_bucket_reserve(&bucket, 10) == 0);
	assert_near(workqueue_bucket_reserve(&bucket, 5), 0.1, "stepped back");
	assert_near(workqueue_bucket_reserve(&bucket, 5), 0.2, "again");
}

/* How long a key has been processed: from the get that gave it to now, and -1 for a key
 * that is not being processed (only queued, done, or never seen). */
static void
processing_seconds_count_from_the_get(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(0, NULL);
	const char *key;

	f->now = 10;
	workqueue_add(f->q, "ns/a");
	assert_true(workqueue_processing_seconds(f->q, "ns/a") == -1);
	assert_true(workqueue_processing_seconds(f->q, "ns/none") == -1);
	f->now = 12;
	assert_int_equal(workqueue_get(f->q, &key), 1);
	assert_string_equal(key, "ns/a");
	f->now = 12.25;
	assert_near(workqueue_processing_seconds(f->q, "ns/a"), 0.25, "while processed");
	workqueue_done(f->q, "ns/a");
	assert_true(workqueue_processing_seconds(f->q, "ns/a") == -1);
	fixture_free(f);
}

static void
when_is_the_longer_of_backoff_and_bucket(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(0, NULL);
	char key[32];

	/* The bucket's burst of 100 lets the per-key backoff decide... */
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof key, "ns/k%d", i);
		assert_true(workqueue_when(f->q, key) == 0.005);
	}
	/* ...until the tokens run out and the bucket's wait is longer. */
	assert_near(workqueue_when(f->q, "ns/k100"), 0.1, "101st");
	assert_near(workqueue_when(f->q, "ns/k0"), 0.2, "102nd");
	/* With a full bucket again, a key that keeps failing backs off exponentially. */
	f->now = 1000;
	for (int i = 0; i < 12; i++) {
		double want = 0.005 * (1 << i);

		assert_true(workqueue_when(f->q, "ns/fails") == want);
	}
	fixture_free(f);
}

static void
rate_limited_adds_count_requeues_until_forgotten(void **state)
{
	(void)state;
	const struct workqueue_options options = { .priority = -1, .base_delay = 0.001,
	    .max_delay = 1 };
	struct fixture *f = fixture_new(0, &options);

	/* TestRateLimitingQueue. */
	assert_true(workqueue_when(f->q, "one") == 0.001);
	assert_true(workqueue_when(f->q, "one") == 0.002);
	assert_int_equal(workqueue_num_requeues(f->q, "one"), 2);
	assert_true(workqueue_when(f->q, "two") == 0.001);
	assert_true(workqueue_when(f->q, "two") == 0.002);
	workqueue_forget(f->q, "one");
	assert_int_equal(workqueue_num_requeues(f->q, "one"), 0);
	assert_true(workqueue_when(f->q, "one") == 0.001);

	workqueue_add_rate_limited(f->q, "three");
	workqueue_add_rate_limited(f->q, "three");
	assert_int_equal(workqueue_num_requeues(f->q, "three"), 2);
	assert_int_equal(workqueue_len(f->q), 0);
	workqueue_forget(f->q, "three");
	assert_int_equal(workqueue_num_requeues(f->q, "three"), 0);
	assert_int_equal(workqueue_num_requeues(f->q, "never seen"), 0);
	workqueue_forget(f->q, "never seen");
	fixture_free(f);
}

/* --- the queue ------------------------------------------------------------------------- */

static void
a_key_added_twice_is_queued_once(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(0, NULL);

	/* TestLen, TestCollapse. */
	workqueue_add(f->q, "foo");
	assert_int_equal(workqueue_len(f->q), 1);
	workqueue_add(f->q, "bar");
	assert_int_equal(workqueue_len(f->q), 2);
	workqueue_add(f->q, "foo");
	assert_int_equal(workqueue_len(f->q), 2);
	workqueue_done(f->q, must_get(f->q, "foo"));
	workqueue_done(f->q, must_get(f->q, "bar"));
	assert_int_equal(workqueue_len(f->q), 0);
	fixture_free(f);
}

static void
keys_come_out_in_the_order_they_were_added(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(0, NULL);
	const char *key;

	workqueue_add(f->q, "ns/c");
	workqueue_add(f->q, "ns/a");
	workqueue_add(f->q, "ns/b");
	workqueue_add(f->q, "ns/a");
	must_get(f->q, "ns/c");
	must_get(f->q, "ns/a");
	must_get(f->q, "ns/b");
	assert_int_equal(workqueue_get(f->q, &key), 0);
	fixture_free(f);
}

static void
a_key_added_while_processing_is_processed_again_after_done(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(0, NULL);
	const char *key, *foo;

	/* TestReinsert, TestCollapseWhileProcessing. */
	workqueue_add(f->q, "foo");
	foo = must_get(f->q, "foo");
	workqueue_add(f->q, foo);
	workqueue_add(f->q, "foo");
	/* Never handed out twice at once. */
	assert_int_equal(workqueue_len(f->q), 0);
	assert_int_equal(workqueue_get(f->q, &key), 0);
	workqueue_done(f->q, foo);
	assert_int_equal(workqueue_len(f->q), 1);
	workqueue_done(f->q, must_get(f->q, "foo"));
	assert_int_equal(workqueue_len(f->q), 0);
	assert_int_equal(workqueue_get(f->q, &key), 0);
	fixture_free(f);
}

static void
a_key_got_stays_valid_until_done(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(0, NULL);
	const char *foo;
	char key[32];

	workqueue_add(f->q, "ns/foo");
	foo = must_get(f->q, "ns/foo");
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof key, "ns/%d", i);
		workqueue_add(f->q, key);
	}
	assert_string_equal(foo, "ns/foo");
	workqueue_done(f->q, foo);
	assert_int_equal(workqueue_len(f->q), 5000);
	fixture_free(f);
}

static void
done_of_a_key_not_processing_is_ignored(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(0, NULL);
	const char *key;

	workqueue_done(f->q, "never added");
	workqueue_add(f->q, "queued");
	workqueue_done(f->q, "queued");
	assert_int_equal(workqueue_len(f->q), 1);
	workqueue_done(f->q, must_get(f->q, "queued"));
	workqueue_done(f->q, "queued");
	assert_int_equal(workqueue_get(f->q, &key), 0);
	fixture_free(f);
}

static void
ready_callback_runs_from_the_loop_never_inside_add(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(0, NULL);
	const char *foo;

	workqueue_add(f->q, "foo");
	workqueue_add(f->q, "bar");
	assert_int_equal(f->ready_calls, 0);
	event_base_loop(f->base, EVLOOP_NONBLOCK);
	assert_int_equal(f->ready_calls, 1);

	/* A key added while it is processed is not available: no call until done. */
	foo = must_get(f->q, "foo");
	must_get(f->q, "bar");
	workqueue_add(f->q, "foo");
	event_base_loop(f->base, EVLOOP_NONBLOCK);
	assert_int_equal(f->ready_calls, 1);
	workqueue_done(f->q, foo);
	assert_int_equal(f->ready_calls, 1);
	event_base_loop(f->base, EVLOOP_NONBLOCK);
	assert_int_equal(f->ready_calls, 2);
	workqueue_done(f->q, "bar");
	event_base_loop(f->base, EVLOOP_NONBLOCK);
	assert_int_equal(f->ready_calls, 2);

	/* Shutting down wakes the consumer, which then learns it from workqueue_get. */
	workqueue_shut_down(f->q);
	event_base_loop(f->base, EVLOOP_NONBLOCK);
	assert_int_equal(f->ready_calls, 3);
	fixture_free(f);
}

/* Records which of two queues called, for the priority test. */
struct priority_case {
	struct workqueue *urgent, *lazy;
	char order[8];
	int n;
};

static void
record_priority(struct workqueue *q, void *arg)
{
	struct priority_case *c = arg;

	if (c->n < 7)
		c->order[c->n++] = q == c->urgent ? 'U' : 'L';
}

static void
ready_event_runs_at_the_queue_priority(void **state)
{
	(void)state;
	struct event_base *base = event_base_new();
	struct priority_case c = { .n = 0 };
	struct workqueue_options options = { .ready = record_priority, .arg = &c };

	event_base_priority_init(base, 3);
	options.priority = 2;
	c.lazy = workqueue_new(base, "lazy", &options);
	options.priority = 0;
	c.urgent = workqueue_new(base, "urgent", &options);
	workqueue_add(c.lazy, "a");
	workqueue_add(c.urgent, "a");
	event_base_dispatch(base);
	assert_string_equal(c.order, "UL");
	workqueue_free(c.lazy);
	workqueue_free(c.urgent);
	event_base_free(base);
}

static void
add_after_adds_the_key_once_its_delay_has_passed(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1, NULL);
	double start = monotonic_now();

	f->drain = 1;
	workqueue_add_after(f->q, "foo", 0.05);
	assert_int_equal(workqueue_len(f->q), 0);
	event_base_loop(f->base, EVLOOP_NONBLOCK);
	assert_int_equal(f->ngot, 0);
	event_base_dispatch(f->base);
	assert_got(f, (const char *const[]){ "foo", NULL });
	assert_true(monotonic_now() - start >= 0.05);
	fixture_free(f);
}

static void
add_after_with_no_delay_adds_at_once(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1, NULL);

	workqueue_add_after(f->q, "zero", 0);
	workqueue_add_after(f->q, "negative", -1);
	workqueue_add_after(f->q, "nan", NAN);
	assert_int_equal(workqueue_len(f->q), 3);
	must_get(f->q, "zero");
	must_get(f->q, "negative");
	must_get(f->q, "nan");
	fixture_free(f);
}

static void
a_waiting_key_keeps_the_earlier_of_its_times(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1, NULL);
	double start;

	/* TestDeduping: the later time is dropped, not added a second time... */
	f->drain = 1;
	start = monotonic_now();
	workqueue_add_after(f->q, "foo", 0.03);
	workqueue_add_after(f->q, "foo", 2);
	event_base_dispatch(f->base);
	assert_got(f, (const char *const[]){ "foo", NULL });
	assert_true(monotonic_now() - start >= 0.03);
	assert_true(monotonic_now() - start < 1.5);

	/* ...and an earlier time replaces a later one. */
	start = monotonic_now();
	workqueue_add_after(f->q, "foo", 2);
	workqueue_add_after(f->q, "foo", 0.03);
	event_base_dispatch(f->base);
	assert_got(f, (const char *const[]){ "foo", "foo", NULL });
	assert_true(monotonic_now() - start >= 0.03);
	assert_true(monotonic_now() - start < 1.5);
	fixture_free(f);
}

static void
delayed_keys_come_out_in_time_order(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1, NULL);

	/* TestCopyShifting. */
	f->drain = 1;
	workqueue_add_after(f->q, "foo", 0.12);
	workqueue_add_after(f->q, "bar", 0.06);
	workqueue_add_after(f->q, "baz", 0.03);
	event_base_dispatch(f->base);
	assert_got(f, (const char *const[]){ "baz", "bar", "foo", NULL });
	fixture_free(f);

	/* TestAddTwoFireEarly. */
	f = fixture_new(1, NULL);
	f->drain = 1;
	workqueue_add_after(f->q, "first", 0.1);
	workqueue_add_after(f->q, "second", 0.02);
	while (f->ngot == 0)
		event_base_loop(f->base, EVLOOP_ONCE);
	assert_got(f, (const char *const[]){ "second", NULL });
	workqueue_add_after(f->q, "third", 0.15);
	event_base_dispatch(f->base);
	assert_got(f, (const char *const[]){ "second", "first", "third", NULL });
	fixture_free(f);
}

static void
shut_down_drains_queued_keys_and_ignores_new_adds(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1, NULL);
	const char *key, *a;
	double start;

	workqueue_add(f->q, "a");
	workqueue_add(f->q, "b");
	workqueue_add_after(f->q, "waiting", 0.3);
	a = must_get(f->q, "a");
	assert_int_equal(workqueue_shutting_down(f->q), 0);
	workqueue_shut_down(f->q);
	assert_int_equal(workqueue_shutting_down(f->q), 1);
	workqueue_add(f->q, "c");
	workqueue_add_after(f->q, "d", 0);
	workqueue_add_after(f->q, "e", 0.01);
	workqueue_add_rate_limited(f->q, "f");
	assert_int_equal(workqueue_len(f->q), 1);
	workqueue_done(f->q, must_get(f->q, "b"));
	/* Drained: nothing queued, though "a" is still being processed. */
	assert_int_equal(workqueue_get(f->q, &key), -1);
	workqueue_done(f->q, a);
	assert_int_equal(workqueue_get(f->q, &key), -1);
	/* The delayed adds were dropped: the loop has no timer left to wait for. */
	start = monotonic_now();
	event_base_dispatch(f->base);
	assert_true(monotonic_now() - start < 0.25);
	assert_int_equal(workqueue_get(f->q, &key), -1);
	workqueue_shut_down(f->q);
	fixture_free(f);
}

static void
a_key_added_while_processing_is_processed_after_shut_down(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(0, NULL);
	const char *key, *a;

	/* TestQueueDrainageUsingShutDownWithDrainWithDirtyItem. */
	workqueue_add(f->q, "a");
	a = must_get(f->q, "a");
	workqueue_add(f->q, "a");
	workqueue_shut_down(f->q);
	assert_int_equal(workqueue_get(f->q, &key), -1);
	workqueue_done(f->q, a);
	workqueue_done(f->q, must_get(f->q, "a"));
	assert_int_equal(workqueue_get(f->q, &key), -1);
	fixture_free(f);
}

/* A queue's state as client-go describes it, kept naively, for the random walk. */
struct model {
	int dirty[8], processing[8];
	int fifo[64];
	int nfifo;
};

static void
random_operations_agree_with_a_naive_model(void **state)
{
	(void)state;
	static const char *const keys[8] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	struct fixture *f = fixture_new(0, NULL);
	struct model m = { .nfifo = 0 };
	unsigned seed = 12345;

	for (int step = 0; step < 20000; step++) {
		int k, op;
		const char *key;

		seed = seed * 1103515245u + 12345u;
		op = (seed >> 16) % 3;
		k = (seed >> 8) % 8;
		if (op == 0) {
			workqueue_add(f->q, keys[k]);
			if (!m.dirty[k]) {
				m.dirty[k] = 1;
				if (!m.processing[k])
					m.fifo[m.nfifo++] = k;
			}
		} else if (op == 1) {
			int r = workqueue_get(f->q, &key);

			if (m.nfifo == 0) {
				assert_int_equal(r, 0);
				continue;
			}
			assert_int_equal(r, 1);
			assert_string_equal(key, keys[m.fifo[0]]);
			m.processing[m.fifo[0]] = 1;
			m.dirty[m.fifo[0]] = 0;
			memmove(m.fifo, m.fifo + 1, --m.nfifo * sizeof m.fifo[0]);
		} else {
			workqueue_done(f->q, keys[k]);
			if (m.processing[k]) {
				m.processing[k] = 0;
				if (m.dirty[k])
					m.fifo[m.nfifo++] = k;
			}
		}
		assert_int_equal(workqueue_len(f->q), m.nfifo);
	}
	fixture_free(f);
}

/* --- metrics --------------------------------------------------------------------------- */

/* Returns the value of the sample named series (with its labels) in the rendering. */
static double
sample(struct metrics_registry *registry, const char *series)
{
	struct buf out;
	char *needle = xasprintf("\n%s ", series), *at;
	double v;

	buf_init(&out);
	buf_append_str(&out, "\n");
	metrics_render(registry, &out);
	at = strstr(out.data, needle);
	if (at == NULL)
		fail_msg("no sample %s in\n%s", series, out.data);
	v = strtod(at + strlen(needle), NULL);
	free(needle);
	buf_free(&out);
	return v;
}

static void
fresh_queue_renders_client_go_metric_names_and_buckets(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	const struct workqueue_options options = { .priority = -1, .metrics = registry };
	struct fixture *f = fixture_new(0, &options);
	struct buf out;
	static const char *const le[] = { "1e-08", "1e-07", "1e-06", "9.999999999999999e-06",
	    "9.999999999999999e-05", "0.001", "0.01", "0.1", "1", "10", "+Inf" };
	static const char *const lines[] = {
		"# TYPE workqueue_adds_total counter\nworkqueue_adds_total{name=\"test\"} 0\n",
		"# TYPE workqueue_depth gauge\nworkqueue_depth{name=\"test\"} 0\n",
		"# TYPE workqueue_longest_running_processor_seconds gauge\n"
		    "workqueue_longest_running_processor_seconds{name=\"test\"} 0\n",
		"# TYPE workqueue_queue_duration_seconds histogram\n"
		    "workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"1e-08\"} 0\n",
		"workqueue_queue_duration_seconds_sum{name=\"test\"} 0\n"
		    "workqueue_queue_duration_seconds_count{name=\"test\"} 0\n",
		"# TYPE workqueue_retries_total counter\nworkqueue_retries_total{name=\"test\"} 0\n",
		"# TYPE workqueue_unfinished_work_seconds gauge\n"
		    "workqueue_unfinished_work_seconds{name=\"test\"} 0\n",
		"# TYPE workqueue_work_duration_seconds histogram\n"
		    "workqueue_work_duration_seconds_bucket{name=\"test\",le=\"1e-08\"} 0\n",
	};
	const char *previous;

	buf_init(&out);
	metrics_render(registry, &out);
	/* Families in name order, each once. */
	previous = out.data;
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		const char *at = strstr(out.data, lines[i]);

		if (at == NULL || at < previous)
			fail_msg("missing or out of order: %s\nin\n%s", lines[i], out.data);
		previous = at;
	}
	/* The buckets of client_golang's ExponentialBuckets(10e-9, 10, 10). */
	for (size_t i = 0; i < sizeof le / sizeof le[0]; i++) {
		char *line = xasprintf("workqueue_work_duration_seconds_bucket{name=\"test\","
		    "le=\"%s\"} 0\n", le[i]);

		if (strstr(out.data, line) == NULL)
			fail_msg("missing %s", line);
		free(line);
	}
	buf_free(&out);
	fixture_free(f);
	metrics_registry_free(registry);
}

static void
metrics_follow_adds_gets_and_dones(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	const struct workqueue_options options = { .priority = -1, .metrics = registry };
	struct fixture *f = fixture_new(0, &options);
	const char *foo;

	/* TestMetrics, with the clock in seconds. */
	workqueue_add(f->q, "foo");
	assert_near(sample(registry, "workqueue_adds_total{name=\"test\"}"), 1, "adds");
	assert_near(sample(registry, "workqueue_depth{name=\"test\"}"), 1, "depth");
	f->now += 50e-6;
	foo = must_get(f->q, "foo");
	assert_near(sample(registry, "workqueue_queue_duration_seconds_sum{name=\"test\"}"),
	    5e-05, "latency");
	assert_near(sample(registry, "workqueue_queue_duration_seconds_count{name=\"test\"}"),
	    1, "latency count");
	assert_near(sample(registry, "workqueue_queue_duration_seconds_bucket{name=\"test\","
	    "le=\"9.999999999999999e-06\"}"), 0, "latency bucket below");
	assert_near(sample(registry, "workqueue_queue_duration_seconds_bucket{name=\"test\","
	    "le=\"9.999999999999999e-05\"}"), 1, "latency bucket");
	assert_near(sample(registry, "workqueue_depth{name=\"test\"}"), 0, "depth");

	/* Adds while processing are de-duplicated. */
	for (int i = 0; i < 5; i++)
		workqueue_add(f->q, foo);
	assert_near(sample(registry, "workqueue_adds_total{name=\"test\"}"), 2, "adds");
	assert_near(sample(registry, "workqueue_depth{name=\"test\"}"), 1, "depth");
	f->now += 25e-6;
	workqueue_done(f->q, foo);
	assert_near(sample(registry, "workqueue_work_duration_seconds_sum{name=\"test\"}"),
	    2.5e-05, "duration");
	assert_near(sample(registry, "workqueue_work_duration_seconds_count{name=\"test\"}"),
	    1, "duration count");
	assert_near(sample(registry, "workqueue_depth{name=\"test\"}"), 1, "depth");

	foo = must_get(f->q, "foo");
	assert_near(sample(registry, "workqueue_queue_duration_seconds_sum{name=\"test\"}"),
	    5e-05 + 2.5e-05, "latency");
	assert_near(sample(registry, "workqueue_queue_duration_seconds_count{name=\"test\"}"),
	    2, "latency count");
	f->now += 0.001;
	assert_near(sample(registry, "workqueue_unfinished_work_seconds{name=\"test\"}"),
	    0.001, "unfinished");
	assert_near(sample(registry,
	    "workqueue_longest_running_processor_seconds{name=\"test\"}"), 0.001, "longest");
	workqueue_done(f->q, foo);
	assert_near(sample(registry, "workqueue_work_duration_seconds_sum{name=\"test\"}"),
	    2.5e-05 + 0.001, "duration");
	assert_near(sample(registry, "workqueue_work_duration_seconds_count{name=\"test\"}"),
	    2, "duration count");
	assert_near(sample(registry, "workqueue_unfinished_work_seconds{name=\"test\"}"),
	    0, "unfinished");
	fixture_free(f);
	metrics_registry_free(registry);
}

static void
unfinished_work_sums_and_maxes_the_keys_being_processed(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	const struct workqueue_options options = { .priority = -1, .metrics = registry };
	struct fixture *f = fixture_new(0, &options);
	const char *a;

	workqueue_add(f->q, "a");
	workqueue_add(f->q, "b");
	workqueue_add(f->q, "c");
	a = must_get(f->q, "a");
	f->now = 1;
	must_get(f->q, "b");
	f->now = 3;
	assert_near(sample(registry, "workqueue_unfinished_work_seconds{name=\"test\"}"), 5,
	    "unfinished");
	assert_near(sample(registry,
	    "workqueue_longest_running_processor_seconds{name=\"test\"}"), 3, "longest");
	workqueue_done(f->q, a);
	assert_near(sample(registry, "workqueue_unfinished_work_seconds{name=\"test\"}"), 2,
	    "unfinished");
	assert_near(sample(registry,
	    "workqueue_longest_running_processor_seconds{name=\"test\"}"), 2, "longest");

	/* A freed queue leaves its series behind, no longer counting anything. */
	fixture_free(f);
	assert_near(sample(registry, "workqueue_unfinished_work_seconds{name=\"test\"}"), 0,
	    "unfinished");
	assert_near(sample(registry,
	    "workqueue_longest_running_processor_seconds{name=\"test\"}"), 0, "longest");
	assert_near(sample(registry, "workqueue_depth{name=\"test\"}"), 0, "depth");
	metrics_registry_free(registry);
}

static void
retries_count_every_delayed_add(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	const struct workqueue_options options = { .priority = -1, .metrics = registry };
	struct fixture *f = fixture_new(0, &options);

	workqueue_add(f->q, "plain");
	workqueue_add_after(f->q, "now", 0);
	workqueue_add_rate_limited(f->q, "limited");
	workqueue_add_after(f->q, "later", 10);
	assert_near(sample(registry, "workqueue_retries_total{name=\"test\"}"), 3, "retries");
	/* Only keys added so far count: the delayed ones are still waiting. */
	assert_near(sample(registry, "workqueue_adds_total{name=\"test\"}"), 2, "adds");
	assert_near(sample(registry, "workqueue_depth{name=\"test\"}"), 2, "depth");
	workqueue_shut_down(f->q);
	workqueue_add_after(f->q, "ignored", 1);
	assert_near(sample(registry, "workqueue_retries_total{name=\"test\"}"), 3, "retries");
	fixture_free(f);
	metrics_registry_free(registry);
}

static void
queue_without_a_name_has_no_metrics(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	const struct workqueue_options options = { .priority = -1, .metrics = registry };
	struct event_base *base = event_base_new();
	struct workqueue *q = workqueue_new(base, "", &options);
	struct workqueue *defaults = workqueue_new(base, "defaults", NULL);
	struct buf out;

	workqueue_add(q, "a");
	workqueue_add(defaults, "a");
	buf_init(&out);
	metrics_render(registry, &out);
	assert_int_equal(out.len, 0);
	buf_free(&out);
	workqueue_free(q);
	workqueue_free(defaults);
	event_base_free(base);
	metrics_registry_free(registry);
}

/* --- keys held on a failure of the local store ----------------------------------------- */

/* A key whose sync failed on the store is held, not backed off: its failures stay as
 * they were, it comes out only when released, and the release forgets its backoff and
 * drops the delayed add it had, while a key that failed on the apiserver the same number
 * of times keeps its backoff. */
static void
held_key_is_added_at_once_on_release_and_forgets_its_backoff(void **state)
{
	(void)state;
	const struct workqueue_options options = { .priority = -1, .base_delay = 0.005 };
	struct fixture *f = fixture_new(1, &options);
	const char *key;

	for (int i = 0; i < 4; i++) {
		workqueue_add_rate_limited(f->q, "store");
		workqueue_add_rate_limited(f->q, "apiserver");
	}
	/* Both wait the first backoff, 5 ms, then 10, 20 and 40 ms: the earliest is kept. */
	assert_int_equal(workqueue_num_requeues(f->q, "store"), 4);
	workqueue_hold(f->q, "store");
	workqueue_hold(f->q, "store");		/* twice is once */
	assert_int_equal(workqueue_held(f->q), 1);
	assert_int_equal(workqueue_num_requeues(f->q, "store"), 4);	/* no failure */
	assert_int_equal(workqueue_len(f->q), 0);

	assert_int_equal(workqueue_release_held(f->q), 1);
	assert_int_equal(workqueue_held(f->q), 0);
	assert_int_equal(workqueue_num_requeues(f->q, "store"), 0);
	assert_int_equal(workqueue_num_requeues(f->q, "apiserver"), 4);
	assert_int_equal(workqueue_len(f->q), 1);
	key = must_get(f->q, "store");
	workqueue_done(f->q, key);
	assert_int_equal(workqueue_get(f->q, &key), 0);
	assert_int_equal(workqueue_release_held(f->q), 0);	/* nothing twice */
	/* The released key no longer waits in the heap: only the apiserver's comes out
	 * once its backoff is over. */
	f->drain = 1;
	event_base_dispatch(f->base);
	assert_got(f, (const char *const[]){ "apiserver", NULL });
	fixture_free(f);
}

/* Getting a held key (an event added it, and it is synced again) ends its hold. */
static void
held_key_got_is_no_longer_held(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(0, NULL);
	const char *key;

	workqueue_hold(f->q, "a");
	workqueue_hold(f->q, "b");
	workqueue_add(f->q, "a");
	key = must_get(f->q, "a");
	assert_int_equal(workqueue_held(f->q), 1);
	workqueue_done(f->q, key);
	assert_int_equal(workqueue_release_held(f->q), 1);
	must_get(f->q, "b");
	fixture_free(f);
}

/* Keys held while they wait in the heap, then released, come out at once, in the order
 * they were held; the heap stays in time order for the keys around them. */
static void
release_takes_held_keys_out_of_the_middle_of_the_heap(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(1, NULL);
	static const char *const keys[] = { "k1", "k2", "k3", "k4", "k5", "k6", "k7" };

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		workqueue_add_after(f->q, keys[i], 0.01 * (double)(i + 1));
	workqueue_hold(f->q, "k3");
	workqueue_hold(f->q, "k6");
	workqueue_hold(f->q, "k1");
	assert_int_equal(workqueue_release_held(f->q), 3);
	f->drain = 1;
	event_base_dispatch(f->base);
	assert_got(f, (const char *const[]){ "k3", "k6", "k1", "k2", "k4", "k5", "k7",
	    NULL });
	fixture_free(f);
}

/* Shutting down drops the held keys. */
static void
shut_down_drops_held_keys(void **state)
{
	(void)state;
	struct fixture *f = fixture_new(0, NULL);
	const char *key;

	workqueue_hold(f->q, "a");
	workqueue_shut_down(f->q);
	assert_int_equal(workqueue_held(f->q), 0);
	workqueue_hold(f->q, "b");
	assert_int_equal(workqueue_held(f->q), 0);
	assert_int_equal(workqueue_release_held(f->q), 0);
	assert_int_equal(workqueue_get(f->q, &key), -1);
	fixture_free(f);
}

/* sqlkcm_workqueue_held_keys counts the held keys. */
static void
held_keys_gauge_counts_held_keys(void **state)
{
	(void)state;
	struct metrics_registry *registry = metrics_registry_new();
	const struct workqueue_options options = { .priority = -1, .metrics = registry };
	struct fixture *f = fixture_new(0, &options);
	static const char *const series = "sqlkcm_workqueue_held_keys{name=\"test\"}";
	const char *key;

	assert_near(sample(registry, series), 0, "held");
	workqueue_hold(f->q, "a");
	workqueue_hold(f->q, "b");
	workqueue_hold(f->q, "b");
	assert_near(sample(registry, series), 2, "held");
	workqueue_add(f->q, "b");
	key = must_get(f->q, "b");
	assert_near(sample(registry, series), 1, "held after a get");
	workqueue_done(f->q, key);
	workqueue_release_held(f->q);
	assert_near(sample(registry, series), 0, "held after the release");
	workqueue_hold(f->q, "c");
	fixture_free(f);
	assert_near(sample(registry, series), 0, "held after free");
	metrics_registry_free(registry);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(backoff_doubles_from_its_base_and_stops_at_its_cap),
		cmocka_unit_test(bucket_gives_a_burst_of_100_then_a_token_every_tenth_of_a_second),
		cmocka_unit_test(bucket_gains_nothing_from_a_clock_that_steps_back),
		cmocka_unit_test(processing_seconds_count_from_the_get),
		cmocka_unit_test(when_is_the_longer_of_backoff_and_bucket),
		cmocka_unit_test(rate_limited_adds_count_requeues_until_forgotten),
		cmocka_unit_test(a_key_added_twice_is_queued_once),
		cmocka_unit_test(keys_come_out_in_the_order_they_were_added),
		cmocka_unit_test(a_key_added_while_processing_is_processed_again_after_done),
		cmocka_unit_test(a_key_got_stays_valid_until_done),
		cmocka_unit_test(done_of_a_key_not_processing_is_ignored),
		cmocka_unit_test(ready_callback_runs_from_the_loop_never_inside_add),
		cmocka_unit_test(ready_event_runs_at_the_queue_priority),
		cmocka_unit_test(add_after_adds_the_key_once_its_delay_has_passed),
		cmocka_unit_test(add_after_with_no_delay_adds_at_once),
		cmocka_unit_test(a_waiting_key_keeps_the_earlier_of_its_times),
		cmocka_unit_test(delayed_keys_come_out_in_time_order),
		cmocka_unit_test(shut_down_drains_queued_keys_and_ignores_new_adds),
		cmocka_unit_test(a_key_added_while_processing_is_processed_after_shut_down),
		cmocka_unit_test(random_operations_agree_with_a_naive_model),
		cmocka_unit_test(fresh_queue_renders_client_go_metric_names_and_buckets),
		cmocka_unit_test(metrics_follow_adds_gets_and_dones),
		cmocka_unit_test(unfinished_work_sums_and_maxes_the_keys_being_processed),
		cmocka_unit_test(retries_count_every_delayed_add),
		cmocka_unit_test(queue_without_a_name_has_no_metrics),
		cmocka_unit_test(held_key_is_added_at_once_on_release_and_forgets_its_backoff),
		cmocka_unit_test(held_key_got_is_no_longer_held),
		cmocka_unit_test(release_takes_held_keys_out_of_the_middle_of_the_heap),
		cmocka_unit_test(shut_down_drops_held_keys),
		cmocka_unit_test(held_keys_gauge_counts_held_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
