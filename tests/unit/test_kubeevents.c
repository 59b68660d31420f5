/*
 * test_kubeevents.c - Events as kube-controller-manager records them: names, bodies, and
 * the correlator's decisions (count, combine, spam filter), with time passed in.
 *
 * The correlator scenarios are client-go's TestEventCorrelator cases, as data: a series
 * of earlier events at a fixed interval, then one more, and what that one becomes.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "kubeevents.h"
#include "resource.h"
#include "util.h"

#define SECOND INT64_C(1000000000)
/* 2024-05-01T12:00:00Z */
#define T0 (INT64_C(1714564800) * SECOND)

/* --- names, times and bodies ------------------------------------------------------------ */

static void
event_name_is_the_object_name_and_the_time_in_hex(void **state)
{
	int64_t last = 0;
	char *name;

	(void)state;
	name = event_name("web-7d9f", T0 + 123, &last);
	assert_string_equal(name, "web-7d9f.17cb5b99f863807b");
	free(name);
	assert_int_equal(last, T0 + 123);
}

static void
event_names_never_repeat_when_the_clock_stands_still_or_steps_back(void **state)
{
	int64_t last = 0;
	char *a, *b, *c;

	(void)state;
	a = event_name("web", T0, &last);
	b = event_name("web", T0, &last);
	c = event_name("web", T0 - SECOND, &last);
	assert_string_equal(a, "web.17cb5b99f8638000");
	assert_string_equal(b, "web.17cb5b99f8638001");
	assert_string_equal(c, "web.17cb5b99f8638002");
	free(a);
	free(b);
	free(c);
}

static void
event_name_of_a_long_object_name_is_cut_to_a_dns_subdomain(void **state)
{
	char object[254];
	int64_t last = 0;
	char *name;

	(void)state;
	memset(object, 'a', 253);
	object[253] = '\0';
	object[235] = '-';	/* where the cut falls: trailing '-' and '.' go too */
	object[234] = '.';
	name = event_name(object, T0, &last);
	assert_true(strlen(name) <= 253);
	assert_int_equal(strlen(name), 234 + 1 + 16);
	assert_memory_equal(name, object, 234);
	assert_string_equal(name + 234, ".17cb5b99f8638000");
	free(name);
}

static void
times_are_rfc3339_utc_seconds(void **state)
{
	char out[32];

	(void)state;
	event_format_time(0, out, sizeof out);
	assert_string_equal(out, "1970-01-01T00:00:00Z");
	event_format_time(T0 / SECOND, out, sizeof out);
	assert_string_equal(out, "2024-05-01T12:00:00Z");
	event_format_time(T0 / SECOND + 86399, out, sizeof out);
	assert_string_equal(out, "2024-05-02T11:59:59Z");
}

/* A ReplicaSet's SuccessfulCreate, as kube-controller-manager's replicaset-controller. */
static const struct event_info replicaset_event = {
	{ "ReplicaSet", "apps/v1", "shop", "web-7d9f", "0c9a-11", "4711", NULL },
	"Normal", "SuccessfulCreate", "Created pod: web-7d9f-x2x4k", "replicaset-controller", "",
};

static void
create_body_is_a_core_v1_event(void **state)
{
	struct event_correlator *c = event_correlator_new(NULL);
	struct event_decision d;
	char *body;

	(void)state;
	event_correlator_observe(c, &replicaset_event, T0 + 5, &d);
	assert_int_equal(d.action, EVENT_CREATE);
	body = event_create_body(&d, "host-1");
	assert_string_equal(body, "{\"kind\":\"Event\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"name\":\"web-7d9f.17cb5b99f8638005\",\"namespace\":\"shop\"},"
	    "\"involvedObject\":{\"kind\":\"ReplicaSet\",\"namespace\":\"shop\","
	    "\"name\":\"web-7d9f\",\"uid\":\"0c9a-11\",\"apiVersion\":\"apps/v1\","
	    "\"resourceVersion\":\"4711\"},"
	    "\"reason\":\"SuccessfulCreate\",\"message\":\"Created pod: web-7d9f-x2x4k\","
	    "\"source\":{\"component\":\"replicaset-controller\"},"
	    "\"firstTimestamp\":\"2024-05-01T12:00:00Z\",\"lastTimestamp\":\"2024-05-01T12:00:00Z\","
	    "\"count\":1,\"type\":\"Normal\",\"reportingComponent\":\"replicaset-controller\","
	    "\"reportingInstance\":\"host-1\"}");
	free(body);
	event_correlator_free(c);
}

static void
events_about_cluster_scoped_objects_go_to_the_default_namespace(void **state)
{
	static const struct event_info node_event = {
		{ "Node", "v1", "", "node-1", "n-1", NULL, NULL },
		"Warning", "NodeNotReady", "Node is not ready", "node-controller", "",
	};
	struct event_correlator *c = event_correlator_new(NULL);
	struct event_decision d;
	cJSON *event;
	char *body;

	(void)state;
	event_correlator_observe(c, &node_event, T0, &d);
	assert_string_equal(d.ns, "default");
	body = event_create_body(&d, "");
	event = cJSON_Parse(body);
	assert_non_null(event);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(event, "metadata"),
	    "namespace")->valuestring, "default");
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(event, "involvedObject"),
	    "namespace"));
	assert_null(cJSON_GetObjectItem(event, "reportingInstance"));
	assert_string_equal(cJSON_GetObjectItem(event, "type")->valuestring, "Warning");
	cJSON_Delete(event);
	free(body);
	event_correlator_free(c);
}

static void
patch_body_carries_count_last_timestamp_and_message(void **state)
{
	struct event_correlator *c = event_correlator_new(NULL);
	struct event_decision d;
	char *body;

	(void)state;
	event_correlator_observe(c, &replicaset_event, T0, &d);
	assert_false(event_correlator_done(c, d.key, d.serial, EVENT_SENT, T0, &d));
	event_correlator_observe(c, &replicaset_event, T0 + 90 * SECOND, &d);
	assert_int_equal(d.action, EVENT_PATCH);
	assert_int_equal(d.first_timestamp, T0 / SECOND);
	body = event_patch_body(&d);
	assert_string_equal(body, "{\"count\":2,\"lastTimestamp\":\"2024-05-01T12:01:30Z\","
	    "\"message\":\"Created pod: web-7d9f-x2x4k\"}");
	free(body);
	event_correlator_free(c);
}

static void
object_reference_comes_from_the_object_and_its_resource(void **state)
{
	cJSON *item = cJSON_Parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\","
	    "\"uid\":\"u-1\",\"resourceVersion\":\"12\"},\"spec\":{}}");
	cJSON *typed = cJSON_Parse("{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"name\":\"p\"}}");
	cJSON *nameless = cJSON_Parse("{\"metadata\":{\"namespace\":\"shop\"}}");
	struct event_object_ref ref;

	(void)state;
	assert_int_equal(event_object_ref_from_object(item, resource_find("replicasets"), &ref), 0);
	assert_string_equal(ref.kind, "ReplicaSet");
	assert_string_equal(ref.api_version, "apps/v1");
	assert_string_equal(ref.ns, "shop");
	assert_string_equal(ref.name, "web");
	assert_string_equal(ref.uid, "u-1");
	assert_string_equal(ref.resource_version, "12");
	assert_null(ref.field_path);
	assert_int_equal(event_object_ref_from_object(typed, resource_find("replicasets"), &ref), 0);
	assert_string_equal(ref.kind, "Pod");
	assert_null(ref.ns);
	assert_int_equal(event_object_ref_from_object(item, NULL, &ref), 0);
	assert_null(ref.kind);
	assert_int_equal(event_object_ref_from_object(nameless, NULL, &ref), -1);
	cJSON_Delete(item);
	cJSON_Delete(typed);
	cJSON_Delete(nameless);
}

/* --- client-go's TestEventCorrelator scenarios --------------------------------------------- */

/* An event as makeEvent builds it, with owned strings. */
struct test_event {
	struct event_info info;
	char *reason, *message, *name, *ns, *field_path;
};

static void
test_event_set(struct test_event *e, const char *reason, const char *message,
    const char *name, const char *ns, const char *field_path)
{
	e->reason = xstrdup(reason);
	e->message = xstrdup(message);
	e->name = xstrdup(name);
	e->ns = xstrdup(ns);
	e->field_path = xstrdup(field_path);
	e->info.object.kind = "Pod";
	e->info.object.api_version = "version";
	e->info.object.uid = "C934D34AFB20242";
	e->info.object.resource_version = NULL;
	e->info.object.name = e->name;
	e->info.object.ns = e->ns;
	e->info.object.field_path = e->field_path;
	e->info.type = "Normal";
	e->info.reason = e->reason;
	e->info.message = e->message;
	e->info.component = "kubelet";
	e->info.host = "kublet.node1";
}

static void
test_event_clear(struct test_event *e)
{
	free(e->reason);
	free(e->message);
	free(e->name);
	free(e->ns);
	free(e->field_path);
}

enum template {
	FIRST, DUPLICATE, UNIQUE, SIMILAR, SIMILAR_OTHER_CONTAINER,
};

/* Builds the i-th event of a series from a template, as the Go test's helpers do. */
static void
make_event(struct test_event *e, enum template t, int series, int i)
{
	char reason[32], message[64], name[32], ns[32];

	switch (t) {
	case FIRST:
		test_event_set(e, "first", "i am first", "my-pod", "my-ns",
		    "spec.containers{mycontainer}");
		break;
	case DUPLICATE:
		test_event_set(e, "duplicate", "me again", "my-pod", "my-ns",
		    "spec.containers{mycontainer}");
		break;
	case UNIQUE:
		if (!series) {
			test_event_set(e, "unique", "snowflake", "my-pod", "my-ns",
			    "spec.containers{mycontainer}");
			break;
		}
		snprintf(reason, sizeof reason, "reason-%d", i);
		snprintf(message, sizeof message, "message-%d", i);
		snprintf(name, sizeof name, "pod-%d", i);
		snprintf(ns, sizeof ns, "ns-%d", i);
		test_event_set(e, reason, message, name, ns, "spec.containers{mycontainer}");
		break;
	case SIMILAR:
	case SIMILAR_OTHER_CONTAINER:
		if (series && t == SIMILAR)
			snprintf(message, sizeof message, "similar message-%d-similar message", i);
		else
			snprintf(message, sizeof message, "similar message");
		test_event_set(e, "similar", message, "my-pod", "my-ns", t == SIMILAR ?
		    "spec.containers{container1}" : "spec.containers{container2}");
		break;
	}
}

struct correlator_case {
	const char *name;
	enum template previous;
	int previous_count;
	enum template next;
	int interval_seconds;
	enum event_action action;
	int count;
	int combined;		/* the message is the combined one */
};

static void
events_are_counted_combined_and_filtered_as_client_go_does(void **state)
{
	static const struct correlator_case cases[] = {
		{ "create-a-single-event", FIRST, 0, FIRST, 5, EVENT_CREATE, 1, 0 },
		{ "the-same-event-should-just-count", DUPLICATE, 1, DUPLICATE, 5, EVENT_PATCH, 2, 0 },
		{ "the-same-event-should-just-count-even-if-more-than-aggregate", DUPLICATE, 10,
		    DUPLICATE, 30, EVENT_PATCH, 11, 0 },
		{ "the-same-event-is-spam-if-happens-too-frequently", DUPLICATE, 26, DUPLICATE, 1,
		    EVENT_DROPPED, 0, 0 },
		{ "create-many-unique-events", UNIQUE, 30, UNIQUE, 5, EVENT_CREATE, 1, 0 },
		{ "similar-events-should-aggregate-event", SIMILAR, 9, SIMILAR, 5, EVENT_CREATE, 1,
		    1 },
		{ "similar-events-many-times-should-count-the-aggregate", SIMILAR, 10, SIMILAR, 5,
		    EVENT_PATCH, 2, 1 },
		{ "events-from-different-containers-do-not-aggregate", SIMILAR_OTHER_CONTAINER, 1,
		    SIMILAR, 5, EVENT_CREATE, 1, 0 },
		{ "similar-events-whose-interval-is-greater-than-aggregate-interval-do-not-aggregate",
		    SIMILAR, 9, SIMILAR, 600, EVENT_CREATE, 1, 0 },
	};

	(void)state;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const struct correlator_case *tc = &cases[k];
		struct event_correlator *c = event_correlator_new(NULL);
		struct event_decision d;
		struct test_event e;
		int64_t now = T0;

		for (int i = 0; i < tc->previous_count; i++) {
			make_event(&e, tc->previous, 1, i);
			now += tc->interval_seconds * SECOND;
			event_correlator_observe(c, &e.info, now, &d);
			if (d.action == EVENT_CREATE || d.action == EVENT_PATCH)
				event_correlator_done(c, d.key, d.serial, EVENT_SENT, now, &d);
			test_event_clear(&e);
		}
		make_event(&e, tc->next, 0, 0);
		now += tc->interval_seconds * SECOND;
		event_correlator_observe(c, &e.info, now, &d);
		if (d.action != tc->action)
			fail_msg("%s: action %d, want %d", tc->name, d.action, tc->action);
		if (tc->action != EVENT_DROPPED) {
			char *combined = xasprintf("(combined from similar events): %s",
			    e.info.message);

			if (d.count != tc->count)
				fail_msg("%s: count %d, want %d", tc->name, d.count, tc->count);
			if (strcmp(d.event->message, tc->combined ? combined : e.info.message) != 0)
				fail_msg("%s: message \"%s\"", tc->name, d.event->message);
			if (strncmp(d.name, "my-pod.", 7) != 0)
				fail_msg("%s: name %s", tc->name, d.name);
			assert_string_equal(d.event->reason, e.info.reason);
			assert_string_equal(d.event->object.field_path, e.info.object.field_path);
			assert_int_equal(d.last_timestamp, now / SECOND);
			if (tc->count == 1)
				assert_int_equal(d.first_timestamp, d.last_timestamp);
			else
				assert_true(d.first_timestamp < d.last_timestamp);
			free(combined);
		}
		test_event_clear(&e);
		event_correlator_free(c);
	}
}

/* --- the spam filter ------------------------------------------------------------------- */

/* Sends ev at now and completes its request; returns the decision's action. */
static enum event_action
record_at(struct event_correlator *c, const struct event_info *ev, int64_t now,
    struct event_decision *d)
{
	enum event_action action;

	event_correlator_observe(c, ev, now, d);
	action = d->action;
	if (action == EVENT_CREATE || action == EVENT_PATCH)
		assert_false(event_correlator_done(c, d->key, d->serial, EVENT_SENT, now, d));
	return action;
}

static void
spam_filter_allows_a_burst_of_25_then_one_every_5_minutes(void **state)
{
	struct event_correlator *c = event_correlator_new(NULL);
	struct event_decision d;
	struct test_event e;
	int64_t now = T0;
	int i;

	(void)state;
	for (i = 0; i < 25; i++) {
		make_event(&e, UNIQUE, 1, i);
		e.info.object = replicaset_event.object;	/* one object, many reasons */
		assert_int_not_equal(record_at(c, &e.info, now, &d), EVENT_DROPPED);
		test_event_clear(&e);
	}
	make_event(&e, UNIQUE, 1, 25);
	e.info.object = replicaset_event.object;
	assert_int_equal(record_at(c, &e.info, now, &d), EVENT_DROPPED);
	assert_int_equal(record_at(c, &e.info, now + 299 * SECOND, &d), EVENT_DROPPED);
	/* 300 s after the burst one token is back, and the count kept the drops. */
	assert_int_equal(record_at(c, &e.info, now + 300 * SECOND, &d), EVENT_CREATE);
	assert_int_equal(d.count, 3);
	assert_int_equal(record_at(c, &e.info, now + 301 * SECOND, &d), EVENT_DROPPED);
	test_event_clear(&e);
	/* Another object has its own budget. */
	make_event(&e, UNIQUE, 1, 26);
	assert_int_equal(record_at(c, &e.info, now + 301 * SECOND, &d), EVENT_CREATE);
	test_event_clear(&e);
	event_correlator_free(c);
}

/* client-go's TestEventSpamFilter, default key: the budget is per source and object,
 * whatever the reason. */
static void
spam_filter_ignores_the_reason(void **state)
{
	struct event_correlator_options options = { .spam_burst = 1 };
	struct event_correlator *c = event_correlator_new(&options);
	struct event_decision d;
	struct test_event original, different_reason;

	(void)state;
	test_event_set(&original, "original", "i am first", "my-pod", "my-ns",
	    "spec.containers{mycontainer}");
	test_event_set(&different_reason, "duplicate", "me again", "my-pod", "my-ns",
	    "spec.containers{mycontainer}");
	assert_int_equal(record_at(c, &original.info, T0, &d), EVENT_CREATE);
	assert_int_equal(record_at(c, &different_reason.info, T0 + SECOND, &d), EVENT_DROPPED);
	test_event_clear(&original);
	test_event_clear(&different_reason);
	event_correlator_free(c);
}

/* --- counting --------------------------------------------------------------------------- */

static void
identical_event_within_10_minutes_patches_and_later_creates_anew(void **state)
{
	struct event_correlator *c = event_correlator_new(NULL);
	struct event_decision d;
	char *first_name;

	(void)state;
	assert_int_equal(record_at(c, &replicaset_event, T0, &d), EVENT_CREATE);
	first_name = xstrdup(d.name);
	assert_int_equal(record_at(c, &replicaset_event, T0 + 599 * SECOND, &d), EVENT_PATCH);
	assert_string_equal(d.name, first_name);
	assert_int_equal(d.count, 2);
	/* Ten minutes after the last occurrence: a new Event. */
	assert_int_equal(record_at(c, &replicaset_event, T0 + 1199 * SECOND, &d), EVENT_CREATE);
	assert_string_not_equal(d.name, first_name);
	assert_int_equal(d.count, 1);
	assert_int_equal(d.first_timestamp, T0 / SECOND + 1199);
	free(first_name);
	event_correlator_free(c);
}

static void
occurrences_while_a_request_is_in_flight_are_folded_into_one_patch(void **state)
{
	struct event_correlator *c = event_correlator_new(NULL);
	struct event_decision d, next;
	char *key;
	uint64_t serial;

	(void)state;
	event_correlator_observe(c, &replicaset_event, T0, &d);
	assert_int_equal(d.action, EVENT_CREATE);
	key = xstrdup(d.key);
	serial = d.serial;
	event_correlator_observe(c, &replicaset_event, T0 + SECOND, &d);
	assert_int_equal(d.action, EVENT_FOLDED);
	event_correlator_observe(c, &replicaset_event, T0 + 2 * SECOND, &d);
	assert_int_equal(d.action, EVENT_FOLDED);
	assert_true(event_correlator_done(c, key, serial, EVENT_SENT, T0 + 3 * SECOND, &next));
	assert_int_equal(next.action, EVENT_PATCH);
	assert_int_equal(next.count, 3);
	assert_int_equal(next.last_timestamp, T0 / SECOND + 2);
	assert_false(event_correlator_done(c, next.key, next.serial, EVENT_SENT, T0 + 4 * SECOND,
	    &next));
	/* A stale report (an old serial) changes nothing. */
	assert_false(event_correlator_done(c, key, serial + 100, EVENT_SENT, T0, &next));
	free(key);
	event_correlator_free(c);
}

static void
patch_of_an_expired_event_creates_it_again_once(void **state)
{
	struct event_correlator *c = event_correlator_new(NULL);
	struct event_decision d, next;
	char *name;

	(void)state;
	assert_int_equal(record_at(c, &replicaset_event, T0, &d), EVENT_CREATE);
	event_correlator_observe(c, &replicaset_event, T0 + 60 * SECOND, &d);
	assert_int_equal(d.action, EVENT_PATCH);
	name = xstrdup(d.name);
	assert_true(event_correlator_done(c, d.key, d.serial, EVENT_GONE, T0 + 61 * SECOND,
	    &next));
	assert_int_equal(next.action, EVENT_CREATE);
	assert_string_equal(next.name, name);
	assert_int_equal(next.count, 2);
	assert_int_equal(next.first_timestamp, T0 / SECOND);
	/* The CREATE fails too: dropped, nothing follows. */
	assert_false(event_correlator_done(c, next.key, next.serial, EVENT_FAILED,
	    T0 + 62 * SECOND, &next));
	/* The next occurrence creates it, with the count so far. */
	assert_int_equal(record_at(c, &replicaset_event, T0 + 70 * SECOND, &d), EVENT_CREATE);
	assert_int_equal(d.count, 3);
	free(name);
	event_correlator_free(c);
}

static void
failed_create_is_not_retried_until_the_event_recurs(void **state)
{
	struct event_correlator *c = event_correlator_new(NULL);
	struct event_decision d, next;

	(void)state;
	event_correlator_observe(c, &replicaset_event, T0, &d);
	assert_int_equal(d.action, EVENT_CREATE);
	event_correlator_observe(c, &replicaset_event, T0 + SECOND, &d);
	assert_int_equal(d.action, EVENT_FOLDED);
	assert_false(event_correlator_done(c, d.key, d.serial, EVENT_FAILED, T0 + 2 * SECOND,
	    &next));
	assert_int_equal(record_at(c, &replicaset_event, T0 + 3 * SECOND, &d), EVENT_CREATE);
	assert_int_equal(d.count, 3);
	event_correlator_free(c);
}

static void
caches_forget_the_least_recently_used_beyond_their_size(void **state)
{
	struct event_correlator_options options = { .cache_size = 4 };
	struct event_correlator *c = event_correlator_new(&options);
	struct event_decision d;
	struct test_event e[5];
	char *key;
	uint64_t serial;

	(void)state;
	for (int i = 0; i < 5; i++)
		make_event(&e[i], UNIQUE, 1, i);
	event_correlator_observe(c, &e[0].info, T0, &d);	/* in flight when forgotten */
	key = xstrdup(d.key);
	serial = d.serial;
	for (int i = 1; i < 5; i++)
		assert_int_equal(record_at(c, &e[i].info, T0, &d), EVENT_CREATE);
	assert_false(event_correlator_done(c, key, serial, EVENT_SENT, T0, &d));
	assert_int_equal(record_at(c, &e[0].info, T0 + SECOND, &d), EVENT_CREATE);
	assert_int_equal(d.count, 1);
	/* e[4] was used last before e[0]: still remembered. */
	assert_int_equal(record_at(c, &e[4].info, T0 + SECOND, &d), EVENT_PATCH);
	for (int i = 0; i < 5; i++)
		test_event_clear(&e[i]);
	free(key);
	event_correlator_free(c);
}

/* --- the recorder without a client -------------------------------------------------------- */

static int64_t
fixed_clock(void *arg)
{
	return *(int64_t *)arg;
}

static void
recorder_without_a_client_takes_events_and_drops_bad_ones(void **state)
{
	struct kubeevents *rec = kubeevents_new(NULL, "replicaset-controller");
	cJSON *rs = cJSON_Parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"}}");
	struct event_object_ref nameless = { "ReplicaSet", "apps/v1", "shop", NULL, NULL, NULL,
	    NULL };
	int64_t now = T0;

	(void)state;
	kubeevents_set_clock(rec, fixed_clock, &now);
	for (int i = 0; i < 30; i++)
		kubeevents_event(rec, &replicaset_event.object, EVENT_TYPE_NORMAL,
		    "SuccessfulCreate", "Created pod: web-%d", i);
	kubeevents_event_object(rec, resource_find("replicasets"), rs, EVENT_TYPE_WARNING,
	    "FailedCreate", "Error creating: %s", "quota");
	kubeevents_event(rec, &replicaset_event.object, "Bad", "Reason", "unknown type");
	kubeevents_event(rec, &nameless, EVENT_TYPE_NORMAL, "Reason", "no name");
	cJSON_Delete(rs);
	kubeevents_free(rec);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(event_name_is_the_object_name_and_the_time_in_hex),
		cmocka_unit_test(event_names_never_repeat_when_the_clock_stands_still_or_steps_back),
		cmocka_unit_test(event_name_of_a_long_object_name_is_cut_to_a_dns_subdomain),
		cmocka_unit_test(times_are_rfc3339_utc_seconds),
		cmocka_unit_test(create_body_is_a_core_v1_event),
		cmocka_unit_test(events_about_cluster_scoped_objects_go_to_the_default_namespace),
		cmocka_unit_test(patch_body_carries_count_last_timestamp_and_message),
		cmocka_unit_test(object_reference_comes_from_the_object_and_its_resource),
		cmocka_unit_test(events_are_counted_combined_and_filtered_as_client_go_does),
		cmocka_unit_test(spam_filter_allows_a_burst_of_25_then_one_every_5_minutes),
		cmocka_unit_test(spam_filter_ignores_the_reason),
		cmocka_unit_test(identical_event_within_10_minutes_patches_and_later_creates_anew),
		cmocka_unit_test(occurrences_while_a_request_is_in_flight_are_folded_into_one_patch),
		cmocka_unit_test(patch_of_an_expired_event_creates_it_again_once),
		cmocka_unit_test(failed_create_is_not_retried_until_the_event_recurs),
		cmocka_unit_test(caches_forget_the_least_recently_used_beyond_their_size),
		cmocka_unit_test(recorder_without_a_client_takes_events_and_drops_bad_ones),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
