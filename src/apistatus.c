/*
 * apistatus.c - Kubernetes API errors as codes callers branch on.
 *
 * A failed request to the apiserver answers with an HTTP code and, usually, a Status
 * object ({"kind":"Status","status":"Failure","reason":"NotFound","code":404,...}); a watch
 * reports a failure as an ERROR event whose object is a Status. The rules follow
 * apimachinery's api/errors, so callers make the decisions client-go would:
 *
 * - A known reason decides. An unknown or missing reason (including "Unknown") falls back
 *   to the code: 404 is NotFound, 409 Conflict, 410 Gone, 422 Invalid, 5xx a server error.
 *   A 409 with no reason is a Conflict, not AlreadyExists: without the request's verb the
 *   two cannot be told apart, and AlreadyExists is never inferred from a code.
 * - 429 and 413 win over any reason: client-go checks those codes whatever the reason
 *   says, and throttling must never be mistaken for a reason to give up.
 * - Expired and Gone are one code, API_GONE: both mean the informer must relist.
 * - A delay is suggested by details.retryAfterSeconds when positive, else by the
 *   Retry-After header (delta-seconds only), else by a ServerTimeout reason with details
 *   (delay 0, "retry at once"); otherwise there is none (-1).
 * - A body that is not a Status (an HTML page from a proxy, "404 page not found", nothing)
 *   is classified by the HTTP code alone; its first bytes, made printable, are the message.
 * - The types of details.causes (each cause's "reason") are kept, so a caller can ask whether a refusal has a
 *   cause such as NamespaceTerminating (a create in a namespace being deleted: a 403 with
 *   reason Forbidden whose only telling part is that cause).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "apistatus.h"
#include "jsonspan.h"
#include "util.h"

/* The bytes of a non-Status body quoted in a message. */
#define API_BODY_QUOTE_BYTES 200

/* Every reason apimachinery knows, and what it means to us. */
static const struct {
	const char *text;
	enum api_reason reason;
} api_known_reasons[] = {
	{ "Unauthorized", API_UNAUTHORIZED },
	{ "Forbidden", API_FORBIDDEN },
	{ "NotFound", API_NOT_FOUND },
	{ "AlreadyExists", API_ALREADY_EXISTS },
	{ "Conflict", API_CONFLICT },
	{ "Gone", API_GONE },
	{ "Invalid", API_INVALID },
	{ "ServerTimeout", API_TIMEOUT },
	{ "StoreReadError", API_SERVER_ERROR },
	{ "Timeout", API_TIMEOUT },
	{ "TooManyRequests", API_TOO_MANY_REQUESTS },
	{ "BadRequest", API_BAD_REQUEST },
	{ "MethodNotAllowed", API_METHOD_NOT_ALLOWED },
	{ "NotAcceptable", API_BAD_REQUEST },
	{ "RequestEntityTooLarge", API_REQUEST_ENTITY_TOO_LARGE },
	{ "UnsupportedMediaType", API_BAD_REQUEST },
	{ "InternalError", API_SERVER_ERROR },
	{ "Expired", API_GONE },
	{ "ServiceUnavailable", API_SERVER_ERROR },
};

static const char *const api_reason_names[] = {
	[API_OK] = "OK",
	[API_NOT_FOUND] = "NotFound",
	[API_ALREADY_EXISTS] = "AlreadyExists",
	[API_CONFLICT] = "Conflict",
	[API_GONE] = "Gone",
	[API_TOO_MANY_REQUESTS] = "TooManyRequests",
	[API_INVALID] = "Invalid",
	[API_FORBIDDEN] = "Forbidden",
	[API_UNAUTHORIZED] = "Unauthorized",
	[API_BAD_REQUEST] = "BadRequest",
	[API_METHOD_NOT_ALLOWED] = "MethodNotAllowed",
	[API_TIMEOUT] = "Timeout",
	[API_SERVER_ERROR] = "ServerError",
	[API_REQUEST_ENTITY_TOO_LARGE] = "RequestEntityTooLarge",
	[API_UNKNOWN] = "Unknown",
};

/* Returns the reason's name for logs. */
const char *
api_reason_name(enum api_reason r)
{
	if ((size_t)r >= sizeof api_reason_names / sizeof api_reason_names[0] ||
	    api_reason_names[r] == NULL)
		return "Unknown";
	return api_reason_names[r];
}

/* Returns the code for an HTTP status when the reason does not say. */
static enum api_reason
api_reason_for_code(int code)
{
	switch (code) {
	case 400: case 406: case 415:
		return API_BAD_REQUEST;
	case 401:
		return API_UNAUTHORIZED;
	case 403:
		return API_FORBIDDEN;
	case 404:
		return API_NOT_FOUND;
	case 405:
		return API_METHOD_NOT_ALLOWED;
	case 409:
		return API_CONFLICT;
	case 410:
		return API_GONE;
	case 413:
		return API_REQUEST_ENTITY_TOO_LARGE;
	case 422:
		return API_INVALID;
	case 429:
		return API_TOO_MANY_REQUESTS;
	case 504:
		return API_TIMEOUT;
	}
	if (code >= 200 && code < 300)
		return API_OK;
	if (code >= 500 && code < 600)
		return API_SERVER_ERROR;
	return API_UNKNOWN;
}

/* Classifies a reason string and a code by the rules at the top of this file. */
static enum api_reason
api_classify(const char *reason_text, int code)
{
	if (code == 429)
		return API_TOO_MANY_REQUESTS;
	if (code == 413)
		return API_REQUEST_ENTITY_TOO_LARGE;
	for (size_t i = 0; i < sizeof api_known_reasons / sizeof api_known_reasons[0]; i++) {
		if (strcmp(reason_text, api_known_reasons[i].text) == 0)
			return api_known_reasons[i].reason;
	}
	return api_reason_for_code(code);
}

/* Parses a Retry-After header in delta-seconds; returns -1 for anything else (an HTTP
 * date, a negative or absurdly large number, garbage). */
static int
api_parse_retry_after(const char *value)
{
	const char *p = value;
	long seconds = 0;
	int digits = 0;

	if (value == NULL)
		return -1;
	while (*p == ' ' || *p == '\t')
		p++;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (++digits > 9)
			return -1;
		seconds = seconds * 10 + (*p - '0');
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (digits == 0 || *p != '\0')
		return -1;
	return (int)seconds;
}

/* Returns a Status member as a string, or "" when it is missing or not a string. */
static const char *
api_json_string(const cJSON *object, const char *name)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);

	return cJSON_IsString(item) && item->valuestring != NULL ? item->valuestring : "";
}

/* Returns a Status member as an int when it is a whole number in [lo, hi], else fallback. */
static int
api_json_int(const cJSON *object, const char *name, int lo, int hi, int fallback)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
	double d;

	if (!cJSON_IsNumber(item))
		return fallback;
	d = item->valuedouble;
	if (!isfinite(d) || d < lo || d > hi || (double)(int)d != d)
		return fallback;
	return (int)d;
}

/* The bound on details.causes kept; a Status with more is not one to branch on. */
#define API_MAX_CAUSES 64

/* Returns the types of details.causes as a NULL-terminated array, or NULL when none. A
 * StatusCause's type is sent under the name "reason". */
static char **
api_cause_types(const cJSON *details)
{
	const cJSON *causes = cJSON_GetObjectItemCaseSensitive(details, "causes");
	const cJSON *cause;
	char **types = NULL;
	size_t n = 0;

	if (!cJSON_IsArray(causes))
		return NULL;
	cJSON_ArrayForEach(cause, causes) {
		const char *type = api_json_string(cause, "reason");

		if (*type == '\0' || n == API_MAX_CAUSES)
			continue;
		types = xrealloc(types, (n + 2) * sizeof *types);
		types[n++] = xstrdup(type);
		types[n] = NULL;
	}
	return types;
}

/* Fills *out from a Status object, taking http_code when the Status has no code. */
static void
api_status_fill(const cJSON *status, int http_code, struct api_status *out)
{
	const cJSON *details;
	const char *message;

	out->http_code = api_json_int(status, "code", 100, 999, http_code);
	out->reason_text = xstrdup(api_json_string(status, "reason"));
	out->reason = api_classify(out->reason_text, out->http_code);
	if (out->reason == API_UNKNOWN && out->http_code == 0 &&
	    strcmp(api_json_string(status, "status"), "Success") == 0)
		out->reason = API_OK;
	message = api_json_string(status, "message");
	if (*message != '\0')
		out->message = xstrdup(message);
	else if (out->http_code != 0)
		out->message = xasprintf("%s (HTTP %d)", *out->reason_text != '\0' ?
		    out->reason_text : api_reason_name(out->reason), out->http_code);
	else
		out->message = xstrdup(*out->reason_text != '\0' ? out->reason_text :
		    api_reason_name(out->reason));

	out->retry_after_seconds = -1;
	out->cause_types = NULL;
	details = cJSON_GetObjectItemCaseSensitive(status, "details");
	if (cJSON_IsObject(details)) {
		int seconds = api_json_int(details, "retryAfterSeconds", INT_MIN, INT_MAX, 0);

		if (seconds > 0)
			out->retry_after_seconds = seconds;
		else if (strcmp(out->reason_text, "ServerTimeout") == 0)
			out->retry_after_seconds = 0;
		out->cause_types = api_cause_types(details);
	}
}

/* Fills *out from a Status object; anything else is API_UNKNOWN. */
void
api_status_from_json(const cJSON *status, struct api_status *out)
{
	if (!cJSON_IsObject(status)) {
		out->http_code = 0;
		out->reason = API_UNKNOWN;
		out->reason_text = xstrdup("");
		out->message = xstrdup("the error is not a Status object");
		out->retry_after_seconds = -1;
		out->cause_types = NULL;
		return;
	}
	api_status_fill(status, 0, out);
}

/* Returns the first bytes of a body as a one-line printable message. */
static char *
api_quote_body(int http_code, const char *body, size_t len)
{
	struct buf b;
	size_t n = len > API_BODY_QUOTE_BYTES ? API_BODY_QUOTE_BYTES : len;
	size_t start = 0;

	buf_init(&b);
	if (http_code == 0)
		buf_append_str(&b, "no HTTP response");
	else
		buf_printf(&b, "HTTP %d", http_code);
	while (start < n && strchr(" \t\r\n", body[start]) != NULL && body[start] != '\0')
		start++;
	if (start < n) {
		buf_append_str(&b, ": ");
		for (size_t i = start; i < n; i++) {
			unsigned char c = (unsigned char)body[i];
			char out = c >= 0x20 && c < 0x7f ? (char)c : c >= 0x80 ? '?' : ' ';
			buf_append(&b, &out, 1);
		}
		while (b.len > 0 && b.data[b.len - 1] == ' ')
			b.data[--b.len] = '\0';
		if (n < len)
			buf_append_str(&b, "...");
	}
	return buf_detach(&b);
}

/* 1 when the JSON object text has "kind": "Status" at its top level. */
static int
is_status(const char *body, size_t len)
{
	static const char want[] = "\"Status\"";
	struct json_member m;

	if (json_find_member((struct json_span){ body, body + len }, "kind", &m) != 1)
		return 0;
	return (size_t)(m.value.end - m.value.start) == sizeof want - 1 &&
	    memcmp(m.value.start, want, sizeof want - 1) == 0;
}

/* Fills *out from an HTTP response, falling back to its code. */
void
api_status_from_response(int http_code, const char *body, size_t len,
    const char *retry_after, struct api_status *out)
{
	int header = api_parse_retry_after(retry_after);
	cJSON *root = NULL;

	/* A success is an object, read by the caller if it wants it; only a Status (what a
	 * delete may answer) is read here. The top level's kind is found without parsing the
	 * rest: a collection delete answers with every object it deleted. */
	if (len > 0 && (http_code < 200 || http_code >= 300 || is_status(body, len)))
		root = cJSON_ParseWithLength(body, len);

	if (cJSON_IsObject(root) && strcmp(api_json_string(root, "kind"), "Status") == 0) {
		api_status_fill(root, http_code, out);
	} else {
		out->http_code = http_code;
		out->reason = api_reason_for_code(http_code);
		out->reason_text = xstrdup("");
		out->message = http_code >= 200 && http_code < 300 ?
		    xasprintf("HTTP %d", http_code) : api_quote_body(http_code, body, len);
		out->retry_after_seconds = -1;
		out->cause_types = NULL;
	}
	cJSON_Delete(root);
	if (http_code >= 200 && http_code < 300)
		out->reason = API_OK;
	if (out->retry_after_seconds <= 0 && header >= 0)
		out->retry_after_seconds = header;
}

/* Frees the strings of a status. */
void
api_status_clear(struct api_status *st)
{
	free(st->reason_text);
	free(st->message);
	if (st->cause_types != NULL) {
		for (char **t = st->cause_types; *t != NULL; t++)
			free(*t);
		free(st->cause_types);
	}
	st->reason_text = NULL;
	st->message = NULL;
	st->cause_types = NULL;
}

/* Returns true when the Status has a cause of the given type. */
int
api_status_has_cause(const struct api_status *st, const char *type)
{
	if (st->cause_types == NULL)
		return 0;
	for (char **t = st->cause_types; *t != NULL; t++) {
		if (strcmp(*t, type) == 0)
			return 1;
	}
	return 0;
}

/* Returns true when a create was refused because the namespace is being terminated. */
int
api_status_is_namespace_terminating(const struct api_status *st)
{
	return api_status_has_cause(st, API_CAUSE_NAMESPACE_TERMINATING);
}

/* Returns true when the status means the informer must relist. */
int
api_status_is_resource_expired(const struct api_status *st)
{
	return st->reason == API_GONE || st->http_code == 410 ||
	    (st->message != NULL && strstr(st->message, "too old resource version") != NULL);
}
