/*
 * restops.c - the REST verbs controllers write with, on top of client_send.
 *
 * client.c moves bytes (curl, TLS, credentials, the rate limit); this file knows the
 * Kubernetes REST conventions: where an object lives, which verb and Content-Type each
 * write takes, what a DeleteOptions body looks like, and how a response becomes an
 * outcome a controller branches on (struct api_status, plus the object on success).
 *
 * Paths. A resource's collection path is "/api/v1/pods" or "/apis/apps/v1/replicasets";
 * the namespaced form puts "namespaces/NS" between the group-version and the plural, and
 * an object and its subresource follow: "/api/v1/namespaces/NS/pods/NAME/status". Every
 * segment is percent-encoded (all but RFC 3986's unreserved characters), so a '?', '#',
 * '%' or a non-ASCII byte in a name stays inside its segment. A '/' cannot be made safe
 * that way (the apiserver decodes %2F before it routes, so "a%2Fstatus" would reach the
 * status subresource of "a"), and "." or ".." would be folded away by the URL parser
 * before the apiserver sees them; such segments are refused with an error. None of them
 * can be the name of a Kubernetes object anyway.
 *
 * Outcomes. The callback gets a struct restops_result: the api_status of the response
 * (API_OK for a 2xx), the body parsed as JSON on a 2xx, and the raw body. A request that
 * got no response has code 0, reason API_UNKNOWN and the transport error as message.
 *
 * Lifetime: a request handle is valid until its on_done returns or restops_cancel; both
 * free it. Nothing here retries: whether to retry is the caller's decision.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "apistatus.h"
#include "client.h"
#include "jsonspan.h"
#include "resource.h"
#include "restops.h"
#include "util.h"

struct restops_request {
	struct client_request *request;
	restops_done_cb on_done;
	void *arg;
};

/* --- building requests ---------------------------------------------------------------- */

/* Returns true for the characters RFC 3986 calls unreserved, the only ones not encoded. */
static int
restops_is_unreserved(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	    ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

/* Appends s percent-encoded. */
static void
restops_escape(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		if (restops_is_unreserved(*p)) {
			buf_append(b, p, 1);
		} else {
			char enc[3] = { '%', hex[*p >> 4], hex[*p & 0xf] };
			buf_append(b, enc, 3);
		}
	}
}

/* Checks that s can be one path segment; what names it in a message. */
static int
restops_check_segment(const char *what, const char *s, char **error)
{
	if (*s == '\0')
		return error_set(error, "the %s is empty", what);
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return error_set(error, "the %s \"%s\" cannot be a path segment", what, s);
	if (strchr(s, '/') != NULL)
		return error_set(error, "the %s may not contain '/'", what);
	return 0;
}

char *
restops_path(const struct resource *r, const char *ns, const char *name,
    const char *subresource, char **error)
{
	/* A metadata resource is named "plural.group": its path ends in the plural alone. */
	const char *last = r->plural != NULL ? r->plural : r->name;
	size_t plural = strlen(last), len = strlen(r->path);
	struct buf b;

	if ((ns != NULL && *ns != '\0' && restops_check_segment("namespace", ns, error) != 0) ||
	    (name != NULL && restops_check_segment("name", name, error) != 0) ||
	    (subresource != NULL && restops_check_segment("subresource", subresource, error) != 0))
		return NULL;
	if (subresource != NULL && name == NULL) {
		error_set(error, "a subresource needs an object name");
		return NULL;
	}
	/* The collection path ends in "/" and the plural; the namespace goes before them. */
	if (len <= plural || r->path[len - plural - 1] != '/' ||
	    strcmp(r->path + len - plural, last) != 0) {
		error_set(error, "the path %s of resource %s does not end in its name", r->path,
		    r->name);
		return NULL;
	}
	buf_init(&b);
	if (ns != NULL && *ns != '\0') {
		buf_append(&b, r->path, len - plural);
		buf_append_str(&b, "namespaces/");
		restops_escape(&b, ns);
		buf_append_str(&b, "/");
		buf_append_str(&b, last);
	} else {
		buf_append_str(&b, r->path);
	}
	if (name != NULL) {
		buf_append_str(&b, "/");
		restops_escape(&b, name);
	}
	if (subresource != NULL) {
		buf_append_str(&b, "/");
		restops_escape(&b, subresource);
	}
	return buf_detach(&b);
}

void
restops_append_query(struct buf *b, const char *key, const char *value)
{
	buf_append_str(b, b->len > 0 && memchr(b->data, '?', b->len) != NULL ? "&" : "?");
	restops_escape(b, key);
	buf_append_str(b, "=");
	restops_escape(b, value);
}

char *
restops_delete_options(const char *precondition_uid, const char *precondition_rv,
    const char *propagation, char **error)
{
	return restops_delete_options_graced(precondition_uid, precondition_rv, propagation,
	    -1, error);
}

char *
restops_delete_options_graced(const char *precondition_uid, const char *precondition_rv,
    const char *propagation, long grace_period_seconds, char **error)
{
	static const char *const policies[] = {
		RESTOPS_PROPAGATE_BACKGROUND, RESTOPS_PROPAGATE_FOREGROUND, RESTOPS_PROPAGATE_ORPHAN,
	};
	cJSON *options, *preconditions;
	char *text, *body;
	size_t i;

	if (propagation != NULL) {
		for (i = 0; i < sizeof policies / sizeof policies[0]; i++) {
			if (strcmp(propagation, policies[i]) == 0)
				break;
		}
		if (i == sizeof policies / sizeof policies[0]) {
			error_set(error, "unknown propagation policy \"%s\" (Background, Foreground "
			    "or Orphan)", propagation);
			return NULL;
		}
	}
	options = cJSON_CreateObject();
	cJSON_AddStringToObject(options, "kind", "DeleteOptions");
	cJSON_AddStringToObject(options, "apiVersion", "v1");
	if (precondition_uid != NULL || precondition_rv != NULL) {
		preconditions = cJSON_AddObjectToObject(options, "preconditions");
		if (precondition_uid != NULL)
			cJSON_AddStringToObject(preconditions, "uid", precondition_uid);
		if (precondition_rv != NULL)
			cJSON_AddStringToObject(preconditions, "resourceVersion", precondition_rv);
	}
	if (propagation != NULL)
		cJSON_AddStringToObject(options, "propagationPolicy", propagation);
	if (grace_period_seconds >= 0)
		cJSON_AddNumberToObject(options, "gracePeriodSeconds",
		    (double)grace_period_seconds);
	text = cJSON_PrintUnformatted(options);
	cJSON_Delete(options);
	if (text == NULL) {
		error_set(error, "cannot build DeleteOptions");
		return NULL;
	}
	body = xstrdup(text);
	cJSON_free(text);
	return body;
}

const char *
restops_patch_content_type(enum restops_patch_type type)
{
	switch (type) {
	case RESTOPS_PATCH_MERGE:
		return "application/merge-patch+json";
	case RESTOPS_PATCH_STRATEGIC:
		return "application/strategic-merge-patch+json";
	case RESTOPS_PATCH_JSON:
		return "application/json-patch+json";
	}
	return "application/merge-patch+json";
}

/* --- sending -------------------------------------------------------------------------- */

/* A response arrived (or none could): parse it, tell the caller, free everything. */
static void
restops_done(const struct client_response *resp, void *arg)
{
	struct restops_request *req = arg;
	struct restops_result res;

	memset(&res, 0, sizeof res);
	res.body = resp->body;
	res.len = resp->len;
	res.transport_error = resp->transport_error;
	api_status_from_response(resp->http_code, resp->body, resp->len, resp->retry_after,
	    &res.status);
	if (resp->transport_error != NULL && resp->http_code == 0) {
		free(res.status.message);
		res.status.message = xstrdup(resp->transport_error);
	}
	if (res.status.reason == API_OK && resp->len > 0)
		res.object = json_parse_exact(resp->body, resp->len);
	req->on_done(&res, req->arg);
	cJSON_Delete(res.object);
	api_status_clear(&res.status);
	free(req);
}

/* Sends method to path with an optional body; takes path. */
static struct restops_request *
restops_send(struct client *c, const char *method, char *path, const char *content_type,
    const char *body, restops_done_cb on_done, void *arg)
{
	struct restops_request *req = xcalloc(1, sizeof *req);

	req->on_done = on_done;
	req->arg = arg;
	req->request = client_send(c, method, path, body != NULL ? content_type : NULL, body,
	    body != NULL ? strlen(body) : 0, restops_done, req);
	free(path);
	return req;
}

/* Checks that a write has a body. */
static int
restops_check_body(const char *body, char **error)
{
	if (body == NULL)
		return error_set(error, "the request body is missing");
	return 0;
}

struct restops_request *
restops_get(struct client *c, const struct resource *r, const char *ns, const char *name,
    restops_done_cb on_done, void *arg, char **error)
{
	char *path;

	if (name == NULL) {
		error_set(error, "the name is missing");
		return NULL;
	}
	if ((path = restops_path(r, ns, name, NULL, error)) == NULL)
		return NULL;
	return restops_send(c, "GET", path, NULL, NULL, on_done, arg);
}

struct restops_request *
restops_list(struct client *c, const struct resource *r, const char *ns, int limit,
    restops_done_cb on_done, void *arg, char **error)
{
	char *path, number[16];
	struct buf b;

	if (limit < 0) {
		error_set(error, "the limit of a list must not be negative");
		return NULL;
	}
	if ((path = restops_path(r, ns, NULL, NULL, error)) == NULL)
		return NULL;
	buf_init(&b);
	buf_append_str(&b, path);
	free(path);
	if (limit > 0) {
		snprintf(number, sizeof number, "%d", limit);
		restops_append_query(&b, "limit", number);
	}
	return restops_send(c, "GET", buf_detach(&b), NULL, NULL, on_done, arg);
}

struct restops_request *
restops_create(struct client *c, const struct resource *r, const char *ns, const char *body,
    restops_done_cb on_done, void *arg, char **error)
{
	char *path;

	if (restops_check_body(body, error) != 0 ||
	    (path = restops_path(r, ns, NULL, NULL, error)) == NULL)
		return NULL;
	return restops_send(c, "POST", path, "application/json", body, on_done, arg);
}

/* Returns the path of the object name (or its subresource) that body is to be sent to,
 * after checking both; NULL with *error set when either is wrong. */
static char *
restops_object_path(const struct resource *r, const char *ns, const char *name,
    const char *subresource, const char *body, char **error)
{
	if (name == NULL) {
		error_set(error, "the name is missing");
		return NULL;
	}
	if (restops_check_body(body, error) != 0)
		return NULL;
	return restops_path(r, ns, name, subresource, error);
}

/* PUT body to the object or its subresource. */
static struct restops_request *
restops_put(struct client *c, const struct resource *r, const char *ns, const char *name,
    const char *subresource, const char *body, restops_done_cb on_done, void *arg,
    char **error)
{
	char *path = restops_object_path(r, ns, name, subresource, body, error);

	if (path == NULL)
		return NULL;
	return restops_send(c, "PUT", path, "application/json", body, on_done, arg);
}

struct restops_request *
restops_update(struct client *c, const struct resource *r, const char *ns, const char *name,
    const char *body, restops_done_cb on_done, void *arg, char **error)
{
	return restops_put(c, r, ns, name, NULL, body, on_done, arg, error);
}

struct restops_request *
restops_update_status(struct client *c, const struct resource *r, const char *ns,
    const char *name, const char *body, restops_done_cb on_done, void *arg, char **error)
{
	return restops_put(c, r, ns, name, "status", body, on_done, arg, error);
}

/* PATCH the object or its subresource. */
static struct restops_request *
restops_patch_at(struct client *c, const struct resource *r, const char *ns,
    const char *name, const char *subresource, enum restops_patch_type type,
    const char *body, restops_done_cb on_done, void *arg, char **error)
{
	char *path = restops_object_path(r, ns, name, subresource, body, error);

	if (path == NULL)
		return NULL;
	return restops_send(c, "PATCH", path, restops_patch_content_type(type), body, on_done,
	    arg);
}

struct restops_request *
restops_patch(struct client *c, const struct resource *r, const char *ns, const char *name,
    enum restops_patch_type type, const char *body, restops_done_cb on_done, void *arg,
    char **error)
{
	return restops_patch_at(c, r, ns, name, NULL, type, body, on_done, arg, error);
}

struct restops_request *
restops_patch_status(struct client *c, const struct resource *r, const char *ns,
    const char *name, enum restops_patch_type type, const char *body,
    restops_done_cb on_done, void *arg, char **error)
{
	return restops_patch_at(c, r, ns, name, "status", type, body, on_done, arg, error);
}

struct restops_request *
restops_apply(struct client *c, const struct resource *r, const char *ns, const char *name,
    const char *field_manager, int force, const char *body, restops_done_cb on_done,
    void *arg, char **error)
{
	return restops_apply_subresource(c, r, ns, name, NULL, field_manager, force, body,
	    on_done, arg, error);
}

struct restops_request *
restops_apply_subresource(struct client *c, const struct resource *r, const char *ns,
    const char *name, const char *subresource, const char *field_manager, int force,
    const char *body, restops_done_cb on_done, void *arg, char **error)
{
	struct buf b;
	char *path;

	if (name == NULL || field_manager == NULL || *field_manager == '\0') {
		error_set(error, "server-side apply needs a name and a field manager");
		return NULL;
	}
	if (restops_check_body(body, error) != 0 ||
	    (path = restops_path(r, ns, name, subresource, error)) == NULL)
		return NULL;
	buf_init(&b);
	buf_append_str(&b, path);
	free(path);
	restops_append_query(&b, "fieldManager", field_manager);
	if (force)
		restops_append_query(&b, "force", "true");
	return restops_send(c, "PATCH", buf_detach(&b), "application/apply-patch+yaml", body,
	    on_done, arg);
}

struct restops_request *
restops_delete(struct client *c, const struct resource *r, const char *ns, const char *name,
    const char *precondition_uid, const char *precondition_rv, const char *propagation,
    restops_done_cb on_done, void *arg, char **error)
{
	return restops_delete_graced(c, r, ns, name, precondition_uid, precondition_rv,
	    propagation, -1, on_done, arg, error);
}

struct restops_request *
restops_delete_graced(struct client *c, const struct resource *r, const char *ns,
    const char *name, const char *precondition_uid, const char *precondition_rv,
    const char *propagation, long grace_period_seconds, restops_done_cb on_done, void *arg,
    char **error)
{
	struct restops_request *req;
	char *path, *body;

	if (name == NULL) {
		error_set(error, "the name is missing");
		return NULL;
	}
	if ((body = restops_delete_options_graced(precondition_uid, precondition_rv,
	    propagation, grace_period_seconds, error)) == NULL)
		return NULL;
	if ((path = restops_path(r, ns, name, NULL, error)) == NULL) {
		free(body);
		return NULL;
	}
	req = restops_send(c, "DELETE", path, "application/json", body, on_done, arg);
	free(body);
	return req;
}

struct restops_request *
restops_delete_collection(struct client *c, const struct resource *r, const char *ns,
    const char *propagation, restops_done_cb on_done, void *arg, char **error)
{
	struct restops_request *req;
	char *path, *body;

	if (ns == NULL || *ns == '\0') {
		error_set(error, "a collection delete needs a namespace");
		return NULL;
	}
	if ((body = restops_delete_options(NULL, NULL, propagation, error)) == NULL)
		return NULL;
	if ((path = restops_path(r, ns, NULL, NULL, error)) == NULL) {
		free(body);
		return NULL;
	}
	req = restops_send(c, "DELETE", path, "application/json", body, on_done, arg);
	free(body);
	/* The answer is the list of every object deleted, which nothing reads: megabytes
	 * for a namespace of thousands. */
	client_discard_success_body(req->request);
	return req;
}

struct restops_request *
restops_update_subresource(struct client *c, const struct resource *r, const char *ns,
    const char *name, const char *subresource, const char *body, restops_done_cb on_done,
    void *arg, char **error)
{
	return restops_put(c, r, ns, name, subresource, body, on_done, arg, error);
}

struct restops_request *
restops_patch_subresource(struct client *c, const struct resource *r, const char *ns,
    const char *name, const char *subresource, enum restops_patch_type type,
    const char *body, restops_done_cb on_done, void *arg, char **error)
{
	return restops_patch_at(c, r, ns, name, subresource, type, body, on_done, arg, error);
}

void
restops_cancel(struct restops_request *req)
{
	if (req == NULL)
		return;
	client_cancel(req->request);
	free(req);
}

cJSON *
restops_take_object(struct restops_result *result)
{
	cJSON *object = result->object;

	result->object = NULL;
	return object;
}
