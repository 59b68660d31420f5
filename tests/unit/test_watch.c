/*
 * test_watch.c - parsing WATCH events, and a watch ERROR event read as an API status.
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

#include "apistatus.h"
#include "jsonstream.h"
#include "util.h"
#include "watch.h"

/* An ADDED event as kube-apiserver writes it on a pod watch: one line, compact. */
static const char added_pod[] =
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{"
    "\"name\":\"web-7c9d8f6b5-x2kqp\",\"generateName\":\"web-7c9d8f6b5-\",\"namespace\":\"default\","
    "\"uid\":\"3f1c2a8e-5b7d-4e0f-9a61-2d4c8b7e1f05\",\"resourceVersion\":\"48213\","
    "\"creationTimestamp\":\"2024-05-14T09:21:37Z\",\"labels\":{\"app\":\"web\","
    "\"pod-template-hash\":\"7c9d8f6b5\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
    "\"kind\":\"ReplicaSet\",\"name\":\"web-7c9d8f6b5\",\"uid\":\"a0e4b6c2-1d3f-4a5b-8c7d-9e0f1a2b3c4d\","
    "\"controller\":true,\"blockOwnerDeletion\":true}],\"managedFields\":[{\"manager\":"
    "\"kube-controller-manager\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":"
    "\"2024-05-14T09:21:37Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{"
    "\"f:generateName\":{},\"f:labels\":{\".\":{},\"f:app\":{},\"f:pod-template-hash\":{}},"
    "\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"a0e4b6c2-1d3f-4a5b-8c7d-9e0f1a2b3c4d\\\"}\":{}}},"
    "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"nginx\\\"}\":{\".\":{},\"f:image\":{},"
    "\"f:imagePullPolicy\":{},\"f:name\":{},\"f:resources\":{},\"f:terminationMessagePath\":{},"
    "\"f:terminationMessagePolicy\":{}}},\"f:dnsPolicy\":{},\"f:enableServiceLinks\":{},"
    "\"f:restartPolicy\":{},\"f:schedulerName\":{},\"f:securityContext\":{},"
    "\"f:terminationGracePeriodSeconds\":{}}}}]},\"spec\":{\"volumes\":[{\"name\":"
    "\"kube-api-access-8kz2j\",\"projected\":{\"sources\":[{\"serviceAccountToken\":{"
    "\"expirationSeconds\":3607,\"path\":\"token\"}}],\"defaultMode\":420}}],\"containers\":[{"
    "\"name\":\"nginx\",\"image\":\"nginx:1.25\",\"resources\":{},\"volumeMounts\":[{\"name\":"
    "\"kube-api-access-8kz2j\",\"readOnly\":true,\"mountPath\":"
    "\"/var/run/secrets/kubernetes.io/serviceaccount\"}],\"terminationMessagePath\":"
    "\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":"
    "\"IfNotPresent\"}],\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,"
    "\"dnsPolicy\":\"ClusterFirst\",\"serviceAccountName\":\"default\",\"serviceAccount\":"
    "\"default\",\"securityContext\":{},\"schedulerName\":\"default-scheduler\",\"tolerations\":[{"
    "\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","
    "\"tolerationSeconds\":300}],\"priority\":0,\"enableServiceLinks\":true,"
    "\"preemptionPolicy\":\"PreemptLowerPriority\"},\"status\":{\"phase\":\"Pending\","
    "\"qosClass\":\"BestEffort\"}}}\n";

static const char bookmark[] =
    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{"
    "\"resourceVersion\":\"48990\",\"creationTimestamp\":null,\"annotations\":{"
    "\"k8s.io/initial-events-end\":\"true\"}},\"spec\":{\"containers\":null},\"status\":{}}}\n";

static const char expired[] =
    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
    "\"status\":\"Failure\",\"message\":\"too old resource version: 48213 (49107)\","
    "\"reason\":\"Expired\",\"code\":410}}\n";

/* Returns a string member at a dotted path of object, or NULL. */
static const char *
json_path_string(const cJSON *object, const char *a, const char *b)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, a);

	if (b != NULL)
		item = cJSON_GetObjectItemCaseSensitive(item, b);
	return cJSON_IsString(item) ? item->valuestring : NULL;
}

static void
added_pod_from_kube_apiserver_parses_with_its_managed_fields(void **state)
{
	(void)state;
	struct watch_event ev;
	char *error = NULL;
	const cJSON *metadata;

	assert_int_equal(watch_event_parse(added_pod, strlen(added_pod), &ev, &error), 0);
	assert_null(error);
	assert_int_equal(ev.type, WATCH_ADDED);
	assert_string_equal(json_path_string(ev.object, "kind", NULL), "Pod");
	assert_string_equal(json_path_string(ev.object, "metadata", "name"), "web-7c9d8f6b5-x2kqp");
	assert_string_equal(json_path_string(ev.object, "metadata", "resourceVersion"), "48213");
	metadata = cJSON_GetObjectItemCaseSensitive(ev.object, "metadata");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(metadata,
	    "managedFields")), 1);
	watch_event_clear(&ev);
	assert_null(ev.object);
}

/* The callback for a stream of events: parses each and counts types. */
struct event_counts {
	int by_type[WATCH_ERROR + 1];
	int errors;
};

static int
count_event(const char *text, size_t len, unsigned long line, void *arg)
{
	struct event_counts *c = arg;
	struct watch_event ev;
	char *error = NULL;

	(void)line;
	if (watch_event_parse(text, len, &ev, &error) == -1) {
		c->errors++;
		free(error);
		return 0;
	}
	c->by_type[ev.type]++;
	watch_event_clear(&ev);
	return 0;
}

static void
watch_body_split_at_every_byte_yields_each_event(void **state)
{
	(void)state;
	char *body = xasprintf("%s%s%s", added_pod, bookmark, expired);
	size_t len = strlen(body);

	for (size_t split = 0; split <= len; split++) {
		struct json_stream *js = json_stream_new(1 << 20);
		struct event_counts c = { { 0 }, 0 };
		char *error = NULL;

		assert_int_equal(json_stream_feed(js, body, split, count_event, &c, &error), 0);
		assert_int_equal(json_stream_feed(js, body + split, len - split, count_event, &c,
		    &error), 0);
		assert_int_equal(json_stream_finish(js, &error), 0);
		assert_int_equal(c.errors, 0);
		assert_int_equal(c.by_type[WATCH_ADDED], 1);
		assert_int_equal(c.by_type[WATCH_BOOKMARK], 1);
		assert_int_equal(c.by_type[WATCH_ERROR], 1);
		json_stream_free(js);
	}
	free(body);
}

static void
bookmark_event_carries_the_resource_version(void **state)
{
	(void)state;
	struct watch_event ev;
	char *error = NULL;

	assert_int_equal(watch_event_parse(bookmark, strlen(bookmark), &ev, &error), 0);
	assert_int_equal(ev.type, WATCH_BOOKMARK);
	assert_string_equal(json_path_string(ev.object, "metadata", "resourceVersion"), "48990");
	watch_event_clear(&ev);
}

static void
error_event_with_410_expired_status_means_relist(void **state)
{
	(void)state;
	struct watch_event ev;
	struct api_status st;
	char *error = NULL;

	assert_int_equal(watch_event_parse(expired, strlen(expired), &ev, &error), 0);
	assert_int_equal(ev.type, WATCH_ERROR);
	api_status_from_json(ev.object, &st);
	assert_int_equal(st.http_code, 410);
	assert_int_equal(st.reason, API_GONE);
	assert_string_equal(st.reason_text, "Expired");
	assert_string_equal(st.message, "too old resource version: 48213 (49107)");
	assert_true(api_status_is_resource_expired(&st));
	api_status_clear(&st);
	watch_event_clear(&ev);
}

static void
every_event_type_is_recognised_by_its_wire_name(void **state)
{
	(void)state;
	const struct {
		const char *name;
		enum watch_event_type type;
	} cases[] = {
		{ "ADDED", WATCH_ADDED },
		{ "MODIFIED", WATCH_MODIFIED },
		{ "DELETED", WATCH_DELETED },
		{ "BOOKMARK", WATCH_BOOKMARK },
		{ "ERROR", WATCH_ERROR },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *text = xasprintf("{\"object\":{\"kind\":\"Pod\"},\"type\":\"%s\"}", cases[i].name);
		struct watch_event ev;
		char *error = NULL;

		assert_int_equal(watch_event_parse(text, strlen(text), &ev, &error), 0);
		assert_int_equal(ev.type, cases[i].type);
		assert_string_equal(watch_event_type_name(ev.type), cases[i].name);
		watch_event_clear(&ev);
		free(text);
	}
}

static void
malformed_events_fail_naming_what_is_wrong(void **state)
{
	(void)state;
	const struct {
		const char *text;
		const char *message;
	} cases[] = {
		{ "", "watch event is not valid JSON (at byte 0 of 0)" },
		{ "{\"type\":\"ADDED\",", "watch event is not valid JSON" },
		{ "{\"type\":\"ADDED\",\"object\":{}} x", "watch event has bytes after its JSON value (at byte 29 of 30)" },
		{ "[1,2]", "watch event is an array, not an object" },
		{ "\"ADDED\"", "watch event is a string, not an object" },
		{ "{\"object\":{}}", "watch event has no \"type\"" },
		{ "{\"type\":3,\"object\":{}}", "watch event \"type\" is a number, not a string" },
		{ "{\"type\":\"added\",\"object\":{}}", "watch event type \"added\" is unknown (want ADDED, MODIFIED, DELETED, BOOKMARK or ERROR)" },
		{ "{\"type\":\"X\\n\\u0001\",\"object\":{}}", "watch event type \"X??\" is unknown" },
		{ "{\"type\":\"ADDED\"}", "ADDED watch event has no \"object\"" },
		{ "{\"type\":\"DELETED\",\"object\":\"pod\"}", "DELETED watch event \"object\" is a string, not an object" },
		{ "{\"type\":\"ERROR\",\"object\":null}", "ERROR watch event \"object\" is null, not an object" },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct watch_event ev;
		char *error = NULL;

		assert_int_equal(watch_event_parse(cases[i].text, strlen(cases[i].text), &ev, &error), -1);
		assert_null(ev.object);
		if (error == NULL || strstr(error, cases[i].message) == NULL)
			fail_msg("case %zu: \"%s\" does not contain \"%s\"", i,
			    error ? error : "(null)", cases[i].message);
		free(error);
	}
}

static void
event_text_need_not_be_nul_terminated(void **state)
{
	(void)state;
	const char text[] = "{\"type\":\"DELETED\",\"object\":{\"kind\":\"Pod\"}}{\"garbage";
	struct watch_event ev;
	char *error = NULL;

	assert_int_equal(watch_event_parse(text, 42, &ev, &error), 0);
	assert_int_equal(ev.type, WATCH_DELETED);
	watch_event_clear(&ev);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(added_pod_from_kube_apiserver_parses_with_its_managed_fields),
		cmocka_unit_test(watch_body_split_at_every_byte_yields_each_event),
		cmocka_unit_test(bookmark_event_carries_the_resource_version),
		cmocka_unit_test(error_event_with_410_expired_status_means_relist),
		cmocka_unit_test(every_event_type_is_recognised_by_its_wire_name),
		cmocka_unit_test(malformed_events_fail_naming_what_is_wrong),
		cmocka_unit_test(event_text_need_not_be_nul_terminated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
