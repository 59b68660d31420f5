/*
 * test_apistatus.c - Kubernetes Status errors and HTTP codes as reasons callers branch on.
 *
 * The case tables are apimachinery's api/errors tests, as data: each Status its
 * constructors build (NewNotFound, NewConflict, ...), written as the JSON the apiserver
 * sends, with the reason and suggested delay its Is* and SuggestsClientDelay report.
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
#include "util.h"

struct status_case {
	const char *name;
	const char *status;	/* a Status object */
	enum api_reason reason;
	int retry_after_seconds;
};

/* Returns the api_status of a Status written as JSON. */
static struct api_status
status_of(const char *json)
{
	cJSON *object = cJSON_Parse(json);
	struct api_status st;

	assert_non_null(object);
	api_status_from_json(object, &st);
	cJSON_Delete(object);
	return st;
}

static void
run_status_cases(const struct status_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct api_status st = status_of(cases[i].status);

		if (st.reason != cases[i].reason || st.retry_after_seconds !=
		    cases[i].retry_after_seconds)
			fail_msg("%s: got %s retry %d, want %s retry %d", cases[i].name,
			    api_reason_name(st.reason), st.retry_after_seconds,
			    api_reason_name(cases[i].reason), cases[i].retry_after_seconds);
		api_status_clear(&st);
	}
}

#define FAILURE "\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","

/* TestErrorNew: the constructors' Statuses and the delays they suggest. */
static void
constructed_statuses_have_the_reason_and_delay_apimachinery_reports(void **state)
{
	(void)state;
	static const struct status_case cases[] = {
		{ "NewAlreadyExists", "{" FAILURE "\"code\":409,\"reason\":\"AlreadyExists\","
		    "\"details\":{\"kind\":\"tests\",\"name\":\"1\"},\"message\":\"tests \\\"1\\\" already exists\"}",
		    API_ALREADY_EXISTS, -1 },
		{ "NewConflict", "{" FAILURE "\"code\":409,\"reason\":\"Conflict\","
		    "\"details\":{\"kind\":\"tests\",\"name\":\"2\"}}", API_CONFLICT, -1 },
		{ "NewNotFound", "{" FAILURE "\"code\":404,\"reason\":\"NotFound\","
		    "\"details\":{\"kind\":\"tests\",\"name\":\"3\"}}", API_NOT_FOUND, -1 },
		{ "NewInvalid", "{" FAILURE "\"code\":422,\"reason\":\"Invalid\","
		    "\"details\":{\"kind\":\"Test\",\"name\":\"2\",\"causes\":[]}}", API_INVALID, -1 },
		{ "NewBadRequest", "{" FAILURE "\"code\":400,\"reason\":\"BadRequest\","
		    "\"message\":\"reason\"}", API_BAD_REQUEST, -1 },
		{ "NewForbidden", "{" FAILURE "\"code\":403,\"reason\":\"Forbidden\","
		    "\"details\":{\"kind\":\"tests\",\"name\":\"2\"}}", API_FORBIDDEN, -1 },
		{ "NewUnauthorized", "{" FAILURE "\"code\":401,\"reason\":\"Unauthorized\","
		    "\"message\":\"reason\"}", API_UNAUTHORIZED, -1 },
		{ "NewServerTimeout 0", "{" FAILURE "\"code\":500,\"reason\":\"ServerTimeout\","
		    "\"details\":{\"kind\":\"tests\",\"name\":\"reason\"}}", API_TIMEOUT, 0 },
		{ "NewMethodNotSupported", "{" FAILURE "\"code\":405,\"reason\":\"MethodNotAllowed\","
		    "\"details\":{\"kind\":\"foos\"}}", API_METHOD_NOT_ALLOWED, -1 },
		{ "NewGenerateNameConflict", "{" FAILURE "\"code\":409,\"reason\":\"AlreadyExists\","
		    "\"details\":{\"kind\":\"tests\",\"name\":\"3\",\"retryAfterSeconds\":1}}",
		    API_ALREADY_EXISTS, 1 },
		{ "NewServerTimeout 10", "{" FAILURE "\"code\":500,\"reason\":\"ServerTimeout\","
		    "\"details\":{\"kind\":\"tests\",\"name\":\"doing something\",\"retryAfterSeconds\":10}}",
		    API_TIMEOUT, 10 },
		{ "NewTimeoutError 10", "{" FAILURE "\"code\":504,\"reason\":\"Timeout\","
		    "\"details\":{\"retryAfterSeconds\":10}}", API_TIMEOUT, 10 },
		{ "NewTooManyRequests 10", "{" FAILURE "\"code\":429,\"reason\":\"TooManyRequests\","
		    "\"details\":{\"retryAfterSeconds\":10}}", API_TOO_MANY_REQUESTS, 10 },
		{ "NewTooManyRequests 1", "{" FAILURE "\"code\":429,\"reason\":\"TooManyRequests\","
		    "\"details\":{\"retryAfterSeconds\":1}}", API_TOO_MANY_REQUESTS, 1 },
		{ "NewGenericServerResponse 429 10", "{" FAILURE "\"code\":429,\"reason\":"
		    "\"TooManyRequests\",\"details\":{\"kind\":\"tests\",\"name\":\"test\","
		    "\"causes\":[{\"reason\":\"UnexpectedServerResponse\",\"message\":\"doing something\"}],"
		    "\"retryAfterSeconds\":10}}", API_TOO_MANY_REQUESTS, 10 },
		{ "NewGenericServerResponse 500 10", "{" FAILURE "\"code\":500,\"reason\":"
		    "\"InternalError\",\"details\":{\"kind\":\"tests\",\"name\":\"test\","
		    "\"retryAfterSeconds\":10}}", API_SERVER_ERROR, 10 },
		{ "NewGenericServerResponse 429 0", "{" FAILURE "\"code\":429,\"reason\":"
		    "\"TooManyRequests\",\"details\":{\"kind\":\"tests\",\"name\":\"test\"}}",
		    API_TOO_MANY_REQUESTS, -1 },
		{ "NewResourceExpired", "{" FAILURE "\"code\":410,\"reason\":\"Expired\"}", API_GONE, -1 },
		{ "NewGone", "{" FAILURE "\"code\":410,\"reason\":\"Gone\"}", API_GONE, -1 },
		{ "NewServiceUnavailable", "{" FAILURE "\"code\":503,\"reason\":\"ServiceUnavailable\"}",
		    API_SERVER_ERROR, -1 },
		{ "NewRequestEntityTooLargeError", "{" FAILURE "\"code\":413,\"reason\":"
		    "\"RequestEntityTooLarge\"}", API_REQUEST_ENTITY_TOO_LARGE, -1 },
		{ "Success", "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Success\"}",
		    API_OK, -1 },
		{ "no reason, no code (ReasonForError of nil)", "{}", API_UNKNOWN, -1 },
	};

	run_status_cases(cases, sizeof cases / sizeof cases[0]);
}

/* TestIsErrorTypesByReasonAndCode, TestIsTooManyRequestsSupportsWrappedErrors and
 * TestIsRequestEntityTooLargeErrorSupportsWrappedErrors: a known reason decides; an
 * unknown one leaves it to the code; 429 and 413 decide whatever the reason. */
static void
known_reason_decides_unless_the_code_is_429_or_413(void **state)
{
	(void)state;
	static const struct status_case cases[] = {
		{ "NotFound by reason", "{\"reason\":\"NotFound\"}", API_NOT_FOUND, -1 },
		{ "NotFound by code, unknown reason", "{\"reason\":\"Unknown\",\"code\":404}", API_NOT_FOUND, -1 },
		{ "404 with reason Forbidden", "{\"reason\":\"Forbidden\",\"code\":404}", API_FORBIDDEN, -1 },
		{ "Forbidden by reason", "{\"reason\":\"Forbidden\"}", API_FORBIDDEN, -1 },
		{ "Forbidden by code, unknown reason", "{\"reason\":\"Unknown\",\"code\":403}", API_FORBIDDEN, -1 },
		{ "403 with reason NotFound", "{\"reason\":\"NotFound\",\"code\":403}", API_NOT_FOUND, -1 },
		{ "TooManyRequests by reason", "{\"reason\":\"TooManyRequests\"}", API_TOO_MANY_REQUESTS, -1 },
		{ "TooManyRequests by code", "{\"code\":429}", API_TOO_MANY_REQUESTS, -1 },
		{ "429 with reason Forbidden", "{\"reason\":\"Forbidden\",\"code\":429}", API_TOO_MANY_REQUESTS, -1 },
		{ "no reason, no code", "{}", API_UNKNOWN, -1 },
		{ "404 is not TooManyRequests", "{\"code\":404}", API_NOT_FOUND, -1 },
		{ "RequestEntityTooLarge by reason", "{\"reason\":\"RequestEntityTooLarge\"}", API_REQUEST_ENTITY_TOO_LARGE, -1 },
		{ "RequestEntityTooLarge by code", "{\"code\":413}", API_REQUEST_ENTITY_TOO_LARGE, -1 },
		{ "413 with reason Forbidden", "{\"reason\":\"Forbidden\",\"code\":413}", API_REQUEST_ENTITY_TOO_LARGE, -1 },
		{ "Conflict by code", "{\"code\":409}", API_CONFLICT, -1 },
		{ "409 with reason AlreadyExists", "{\"reason\":\"AlreadyExists\",\"code\":409}", API_ALREADY_EXISTS, -1 },
		{ "Gone by code", "{\"reason\":\"SomethingNew\",\"code\":410}", API_GONE, -1 },
		{ "Invalid by code", "{\"code\":422}", API_INVALID, -1 },
		{ "MethodNotAllowed by code", "{\"code\":405}", API_METHOD_NOT_ALLOWED, -1 },
		{ "BadRequest by code", "{\"code\":400}", API_BAD_REQUEST, -1 },
		{ "NotAcceptable by reason", "{\"reason\":\"NotAcceptable\",\"code\":406}", API_BAD_REQUEST, -1 },
		{ "UnsupportedMediaType by code", "{\"code\":415}", API_BAD_REQUEST, -1 },
		{ "Unauthorized by code", "{\"code\":401}", API_UNAUTHORIZED, -1 },
		{ "Timeout by code", "{\"code\":504}", API_TIMEOUT, -1 },
		{ "InternalError by code", "{\"code\":500}", API_SERVER_ERROR, -1 },
		{ "ServiceUnavailable by code", "{\"code\":503}", API_SERVER_ERROR, -1 },
		{ "StoreReadError by reason", "{\"reason\":\"StoreReadError\",\"code\":500}", API_SERVER_ERROR, -1 },
		{ "other 5xx", "{\"code\":502}", API_SERVER_ERROR, -1 },
		{ "unknown 4xx", "{\"code\":418}", API_UNKNOWN, -1 },
		{ "reason is case-sensitive", "{\"reason\":\"notfound\",\"code\":500}", API_SERVER_ERROR, -1 },
		{ "code that is not a whole number", "{\"code\":404.5}", API_UNKNOWN, -1 },
		{ "code out of range", "{\"code\":1e300}", API_UNKNOWN, -1 },
	};

	run_status_cases(cases, sizeof cases / sizeof cases[0]);
}

/* TestSuggestsClientDelaySupportsWrapping: ServerTimeout with details asks for a delay of 0;
 * without details, or with a delay of 0 and another reason, there is none. */
static void
server_timeout_with_details_suggests_an_immediate_retry(void **state)
{
	(void)state;
	static const struct status_case cases[] = {
		{ "ServerTimeout, empty details", "{\"reason\":\"ServerTimeout\",\"details\":{}}", API_TIMEOUT, 0 },
		{ "ServerTimeout, no details", "{\"reason\":\"ServerTimeout\"}", API_TIMEOUT, -1 },
		{ "Timeout, empty details", "{\"reason\":\"Timeout\",\"details\":{}}", API_TIMEOUT, -1 },
		{ "negative delay", "{\"code\":429,\"details\":{\"retryAfterSeconds\":-3}}", API_TOO_MANY_REQUESTS, -1 },
		{ "delay that is not a number", "{\"code\":429,\"details\":{\"retryAfterSeconds\":\"5\"}}", API_TOO_MANY_REQUESTS, -1 },
		{ "details that are not an object", "{\"code\":429,\"details\":[5]}", API_TOO_MANY_REQUESTS, -1 },
	};

	run_status_cases(cases, sizeof cases / sizeof cases[0]);
}

struct response_case {
	const char *name;
	int http_code;
	const char *body;
	const char *retry_after;
	enum api_reason reason;
	int retry_after_seconds;
	const char *message;
};

static void
run_response_cases(const struct response_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct api_status st;

		api_status_from_response(cases[i].http_code, cases[i].body, strlen(cases[i].body),
		    cases[i].retry_after, &st);
		if (st.reason != cases[i].reason || st.retry_after_seconds !=
		    cases[i].retry_after_seconds || strcmp(st.message, cases[i].message) != 0)
			fail_msg("%s: got %s retry %d \"%s\", want %s retry %d \"%s\"", cases[i].name,
			    api_reason_name(st.reason), st.retry_after_seconds, st.message,
			    api_reason_name(cases[i].reason), cases[i].retry_after_seconds,
			    cases[i].message);
		assert_non_null(st.reason_text);
		api_status_clear(&st);
	}
}

static void
body_that_is_not_a_status_falls_back_to_the_http_code(void **state)
{
	(void)state;
	static const struct response_case cases[] = {
		{ "plain text 404", 404, "404 page not found\n", NULL, API_NOT_FOUND, -1,
		    "HTTP 404: 404 page not found" },
		{ "HTML from a proxy", 503, "<html>\r\n<body>busy</body></html>", NULL,
		    API_SERVER_ERROR, -1, "HTTP 503: <html>  <body>busy</body></html>" },
		{ "empty 500", 500, "", NULL, API_SERVER_ERROR, -1, "HTTP 500" },
		{ "empty 409 is a conflict", 409, "", NULL, API_CONFLICT, -1, "HTTP 409" },
		{ "JSON that is not a Status", 403, "{\"kind\":\"Pod\"}", NULL, API_FORBIDDEN, -1,
		    "HTTP 403: {\"kind\":\"Pod\"}" },
		{ "object returned by a GET", 200, "{\"kind\":\"Pod\",\"metadata\":{}}", NULL,
		    API_OK, -1, "HTTP 200" },
		{ "created", 201, "{\"kind\":\"Pod\"}", NULL, API_OK, -1, "HTTP 201" },
		{ "no response", 0, "", NULL, API_UNKNOWN, -1, "no HTTP response" },
		{ "teapot", 418, "short and stout", NULL, API_UNKNOWN, -1, "HTTP 418: short and stout" },
		{ "non-ASCII body", 500, "\xc3\xa9t\xc3\xa9\x01", NULL, API_SERVER_ERROR, -1,
		    "HTTP 500: ??t??" },
		{ "Status body", 404, "{" FAILURE "\"message\":\"pods \\\"x\\\" not found\","
		    "\"reason\":\"NotFound\",\"details\":{\"name\":\"x\",\"kind\":\"pods\"},\"code\":404}\n",
		    NULL, API_NOT_FOUND, -1, "pods \"x\" not found" },
		{ "Status without a code takes the HTTP code", 410, "{\"kind\":\"Status\","
		    "\"reason\":\"Unknown\"}", NULL, API_GONE, -1, "Unknown (HTTP 410)" },
		{ "Success Status of a DELETE", 200, "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		    "\"status\":\"Success\",\"details\":{\"name\":\"x\",\"kind\":\"pods\"}}", NULL,
		    API_OK, -1, "OK (HTTP 200)" },
	};

	run_response_cases(cases, sizeof cases / sizeof cases[0]);
}

static void
long_body_is_cut_in_the_message(void **state)
{
	(void)state;
	char body[1000];
	struct api_status st;

	memset(body, 'x', sizeof body);
	api_status_from_response(502, body, sizeof body, NULL, &st);
	assert_int_equal(st.reason, API_SERVER_ERROR);
	assert_int_equal(strlen(st.message), strlen("HTTP 502: ") + 200 + 3);
	assert_string_equal(st.message + strlen(st.message) - 3, "...");
	api_status_clear(&st);
}

static void
retry_after_comes_from_details_else_the_header(void **state)
{
	(void)state;
	static const struct response_case cases[] = {
		{ "header only", 429, "", "7", API_TOO_MANY_REQUESTS, 7, "HTTP 429" },
		{ "header with spaces", 503, "", " 12\t", API_SERVER_ERROR, 12, "HTTP 503" },
		{ "header zero", 429, "", "0", API_TOO_MANY_REQUESTS, 0, "HTTP 429" },
		{ "header as an HTTP date", 503, "", "Wed, 21 Oct 2015 07:28:00 GMT",
		    API_SERVER_ERROR, -1, "HTTP 503" },
		{ "negative header", 429, "", "-1", API_TOO_MANY_REQUESTS, -1, "HTTP 429" },
		{ "header too large", 429, "", "99999999999", API_TOO_MANY_REQUESTS, -1, "HTTP 429" },
		{ "empty header", 429, "", "", API_TOO_MANY_REQUESTS, -1, "HTTP 429" },
		{ "details win over the header", 429, "{\"kind\":\"Status\",\"code\":429,"
		    "\"reason\":\"TooManyRequests\",\"message\":\"slow down\",\"details\":"
		    "{\"retryAfterSeconds\":3}}", "9", API_TOO_MANY_REQUESTS, 3, "slow down" },
		{ "header wins over a ServerTimeout's zero", 500, "{\"kind\":\"Status\",\"code\":500,"
		    "\"reason\":\"ServerTimeout\",\"message\":\"try again\",\"details\":{}}", "4",
		    API_TIMEOUT, 4, "try again" },
		{ "details without a delay use the header", 429, "{\"kind\":\"Status\",\"code\":429,"
		    "\"reason\":\"TooManyRequests\",\"message\":\"m\",\"details\":{}}", "2",
		    API_TOO_MANY_REQUESTS, 2, "m" },
	};

	run_response_cases(cases, sizeof cases / sizeof cases[0]);
}

static void
relist_is_needed_for_410_expired_gone_or_a_too_old_resource_version(void **state)
{
	(void)state;
	static const struct {
		const char *status;
		int expired;
	} cases[] = {
		{ "{\"reason\":\"Expired\",\"code\":410,\"message\":\"too old resource version: 1 (2)\"}", 1 },
		{ "{\"reason\":\"Expired\"}", 1 },
		{ "{\"reason\":\"Gone\"}", 1 },
		{ "{\"code\":410}", 1 },
		{ "{\"reason\":\"InternalError\",\"code\":410}", 1 },
		{ "{\"reason\":\"InternalError\",\"code\":500,\"message\":\"too old resource version: 5 (9)\"}", 1 },
		{ "{\"reason\":\"NotFound\",\"code\":404}", 0 },
		{ "{\"reason\":\"Conflict\",\"code\":409,\"message\":\"the object has been modified\"}", 0 },
		{ "{\"reason\":\"TooManyRequests\",\"code\":429}", 0 },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct api_status st = status_of(cases[i].status);

		if (api_status_is_resource_expired(&st) != cases[i].expired)
			fail_msg("%s: want expired=%d", cases[i].status, cases[i].expired);
		api_status_clear(&st);
	}
}

static void
status_that_is_not_an_object_is_unknown(void **state)
{
	(void)state;
	cJSON *array = cJSON_Parse("[1]");
	struct api_status st;

	api_status_from_json(array, &st);
	assert_int_equal(st.reason, API_UNKNOWN);
	assert_int_equal(st.http_code, 0);
	assert_string_equal(st.reason_text, "");
	assert_string_equal(st.message, "the error is not a Status object");
	assert_int_equal(st.retry_after_seconds, -1);
	api_status_clear(&st);
	api_status_from_json(NULL, &st);
	assert_int_equal(st.reason, API_UNKNOWN);
	api_status_clear(&st);
	cJSON_Delete(array);
}

/* The Status NamespaceLifecycle admission answers a create in a namespace being deleted
 * with, as kube-apiserver sends it. */
static void
create_in_a_terminating_namespace_is_forbidden_with_the_namespace_terminating_cause(void **state)
{
	static const char body[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
	    "\"status\":\"Failure\",\"message\":\"pods \\\"web-1\\\" is forbidden: unable to "
	    "create new content in namespace shop because it is being terminated\","
	    "\"reason\":\"Forbidden\",\"details\":{\"name\":\"web-1\",\"kind\":\"pods\","
	    "\"causes\":[{\"reason\":\"NamespaceTerminating\",\"message\":\"namespace shop is "
	    "being terminated\",\"field\":\"metadata.namespace\"}]},\"code\":403}";
	struct api_status st;

	(void)state;
	api_status_from_response(403, body, strlen(body), NULL, &st);
	assert_int_equal(st.reason, API_FORBIDDEN);
	assert_true(api_status_is_namespace_terminating(&st));
	assert_true(api_status_has_cause(&st, API_CAUSE_NAMESPACE_TERMINATING));
	assert_false(api_status_has_cause(&st, "FieldValueInvalid"));
	api_status_clear(&st);
	assert_null(st.cause_types);
}

/* A Forbidden from RBAC has no causes; neither has a body that is no Status. */
static void
other_refusals_have_no_namespace_terminating_cause(void **state)
{
	static const char rbac[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
	    "\"Failure\",\"reason\":\"Forbidden\",\"details\":{\"kind\":\"pods\"},\"code\":403}";
	static const char invalid[] = "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":"
	    "\"Invalid\",\"details\":{\"causes\":[{\"reason\":\"FieldValueInvalid\",\"field\":"
	    "\"metadata.name\"},{\"message\":\"no reason\"},{\"reason\":7},"
	    "{\"reason\":\"FieldValueRequired\"}]},\"code\":422}";
	struct api_status st;

	(void)state;
	api_status_from_response(403, rbac, strlen(rbac), NULL, &st);
	assert_int_equal(st.reason, API_FORBIDDEN);
	assert_false(api_status_is_namespace_terminating(&st));
	api_status_clear(&st);

	api_status_from_response(403, "forbidden", 9, NULL, &st);
	assert_false(api_status_is_namespace_terminating(&st));
	api_status_clear(&st);

	api_status_from_response(422, invalid, strlen(invalid), NULL, &st);
	assert_true(api_status_has_cause(&st, "FieldValueInvalid"));
	assert_true(api_status_has_cause(&st, "FieldValueRequired"));
	assert_false(api_status_is_namespace_terminating(&st));
	assert_non_null(st.cause_types);
	assert_null(st.cause_types[2]);
	api_status_clear(&st);
}

static void
every_reason_has_a_name_for_logs(void **state)
{
	(void)state;
	assert_string_equal(api_reason_name(API_OK), "OK");
	assert_string_equal(api_reason_name(API_NOT_FOUND), "NotFound");
	assert_string_equal(api_reason_name(API_GONE), "Gone");
	assert_string_equal(api_reason_name(API_SERVER_ERROR), "ServerError");
	for (int r = API_OK; r <= API_UNKNOWN; r++)
		assert_true(strlen(api_reason_name((enum api_reason)r)) > 0);
	assert_string_equal(api_reason_name((enum api_reason)999), "Unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(constructed_statuses_have_the_reason_and_delay_apimachinery_reports),
		cmocka_unit_test(known_reason_decides_unless_the_code_is_429_or_413),
		cmocka_unit_test(server_timeout_with_details_suggests_an_immediate_retry),
		cmocka_unit_test(body_that_is_not_a_status_falls_back_to_the_http_code),
		cmocka_unit_test(long_body_is_cut_in_the_message),
		cmocka_unit_test(retry_after_comes_from_details_else_the_header),
		cmocka_unit_test(relist_is_needed_for_410_expired_gone_or_a_too_old_resource_version),
		cmocka_unit_test(status_that_is_not_an_object_is_unknown),
		cmocka_unit_test(create_in_a_terminating_namespace_is_forbidden_with_the_namespace_terminating_cause),
		cmocka_unit_test(other_refusals_have_no_namespace_terminating_cause),
		cmocka_unit_test(every_reason_has_a_name_for_logs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
