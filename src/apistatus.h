/*
 * apistatus.h - Kubernetes API errors (Status objects and HTTP codes) as codes callers
 * branch on: not found, conflict, relist, back off, give up.
 */
#ifndef SQLKCM_APISTATUS_H
#define SQLKCM_APISTATUS_H

#include <stddef.h>

#include <cjson/cJSON.h>

enum api_reason {
	API_OK,			/* 2xx */
	API_NOT_FOUND,		/* NotFound, or 404 */
	API_ALREADY_EXISTS,	/* AlreadyExists (a 409 from a create) */
	API_CONFLICT,		/* Conflict, or 409: the resourceVersion was stale */
	API_GONE,		/* Gone or Expired, or 410: relist */
	API_TOO_MANY_REQUESTS,	/* TooManyRequests, or 429 whatever the reason: back off */
	API_INVALID,		/* Invalid, or 422 */
	API_FORBIDDEN,		/* Forbidden, or 403 */
	API_UNAUTHORIZED,	/* Unauthorized, or 401 */
	API_BAD_REQUEST,	/* BadRequest, NotAcceptable, UnsupportedMediaType, or 400/406/415 */
	API_METHOD_NOT_ALLOWED,	/* MethodNotAllowed, or 405 */
	API_TIMEOUT,		/* Timeout, ServerTimeout, or 504: retry */
	API_SERVER_ERROR,	/* InternalError, ServiceUnavailable, StoreReadError, or other 5xx */
	API_REQUEST_ENTITY_TOO_LARGE, /* RequestEntityTooLarge, or 413 whatever the reason */
	API_UNKNOWN,		/* anything else, including no response at all (code 0) */
};

struct api_status {
	int http_code;		/* the Status's code, else the HTTP code; 0 when neither */
	enum api_reason reason;
	char *reason_text;	/* the Status's reason as sent; "" when none (never NULL) */
	char *message;		/* the Status's message, else one made from the code (never NULL) */
	int retry_after_seconds; /* details.retryAfterSeconds or the Retry-After header, -1 none */
	char **cause_types;	/* details.causes[].reason (a cause's type), NULL-terminated;
				 * NULL when none */
};

/* The cause the apiserver's NamespaceLifecycle admission adds when it refuses to create an
 * object in a namespace that is being deleted (a 403 Forbidden). */
#define API_CAUSE_NAMESPACE_TERMINATING "NamespaceTerminating"


/*
 * Fills *out from an HTTP response: its code, its body (len bytes, maybe not JSON, maybe
 * empty) and its Retry-After header value or NULL. Never fails: a body that is not a
 * Status (kind "Status") is classified by the HTTP code alone. A 2xx code is API_OK.
 */
void api_status_from_response(int http_code, const char *body, size_t len,
    const char *retry_after, struct api_status *out);

/* Fills *out from a Status object, such as a watch ERROR event's object. */
void api_status_from_json(const cJSON *status, struct api_status *out);

/* Returns true when the Status's details.causes has one of the given type (apimachinery's
 * HasStatusCause). */
int api_status_has_cause(const struct api_status *st, const char *type);

/* Returns true when the request was refused because its namespace is being terminated:
 * creating there is pointless until the namespace is gone. */
int api_status_is_namespace_terminating(const struct api_status *st);

/* Frees the strings of *st. */
void api_status_clear(struct api_status *st);

/* Returns the reason's name for logs: "NotFound", "Gone", ... */
const char *api_reason_name(enum api_reason r);

/* Returns true when the informer must relist: 410, reason Expired or Gone, or a message
 * saying the resourceVersion is too old. */
int api_status_is_resource_expired(const struct api_status *st);

#endif
