/*
 * restops.h - the REST verbs controllers write with (get, create, update, patch, apply,
 * delete), on top of client_send: paths built from a resource, outcomes parsed.
 */
#ifndef SQLKCM_RESTOPS_H
#define SQLKCM_RESTOPS_H

#include <cjson/cJSON.h>

#include "apistatus.h"
#include "util.h"

struct client;
struct resource;
struct restops_request;

/* How a PATCH body is to be read: each is its own Content-Type. */
enum restops_patch_type {
	RESTOPS_PATCH_MERGE,		/* application/merge-patch+json (RFC 7386) */
	RESTOPS_PATCH_STRATEGIC,	/* application/strategic-merge-patch+json */
	RESTOPS_PATCH_JSON,		/* application/json-patch+json (RFC 6902) */
};

/* The propagationPolicy values of DeleteOptions. */
#define RESTOPS_PROPAGATE_BACKGROUND "Background"
#define RESTOPS_PROPAGATE_FOREGROUND "Foreground"
#define RESTOPS_PROPAGATE_ORPHAN "Orphan"

/* What a request came to. Branch on status.reason (API_OK, API_NOT_FOUND, API_CONFLICT,
 * API_ALREADY_EXISTS, ...); api_status_is_namespace_terminating(&status) tells a create
 * refused because its namespace is being deleted. */
struct restops_result {
	struct api_status status;	/* reason API_OK for a 2xx; API_UNKNOWN with code 0
					 * when no response arrived */
	cJSON *object;			/* a 2xx body parsed as JSON, or NULL; freed after the
					 * callback unless taken with restops_take_object */
	const char *body;		/* the raw body, valid during the callback */
	size_t len;
	const char *transport_error;	/* what failed below HTTP, or NULL */
};

/* Called once when the request ends, whatever the outcome (never after restops_cancel).
 * The result and its request handle are freed when it returns. */
typedef void (*restops_done_cb)(struct restops_result *result, void *arg);

/*
 * Each verb sends one request and returns its handle, or NULL with *error set when the
 * request cannot be built (a name or namespace that is no path segment, a bad
 * propagation policy); on_done is not called then. ns NULL or "" addresses a
 * cluster-scoped object (or, for create, the cluster-scoped collection). Bodies are JSON
 * text, copied.
 */

/* GET the object. */
struct restops_request *restops_get(struct client *c, const struct resource *r,
    const char *ns, const char *name, restops_done_cb on_done, void *arg, char **error);
/* GET the collection in ns, at most limit objects (limit > 0), or all of it in one answer
 * (limit 0). */
struct restops_request *restops_list(struct client *c, const struct resource *r,
    const char *ns, int limit, restops_done_cb on_done, void *arg, char **error);
/* POST body to the collection. */
struct restops_request *restops_create(struct client *c, const struct resource *r,
    const char *ns, const char *body, restops_done_cb on_done, void *arg, char **error);
/* PUT body over the object (metadata.resourceVersion in body makes it conditional). */
struct restops_request *restops_update(struct client *c, const struct resource *r,
    const char *ns, const char *name, const char *body, restops_done_cb on_done, void *arg,
    char **error);
/* PUT body over the object's status subresource. */
struct restops_request *restops_update_status(struct client *c, const struct resource *r,
    const char *ns, const char *name, const char *body, restops_done_cb on_done, void *arg,
    char **error);
/* PATCH the object with body, read as type says. */
struct restops_request *restops_patch(struct client *c, const struct resource *r,
    const char *ns, const char *name, enum restops_patch_type type, const char *body,
    restops_done_cb on_done, void *arg, char **error);
/* PATCH the object's status subresource. */
struct restops_request *restops_patch_status(struct client *c, const struct resource *r,
    const char *ns, const char *name, enum restops_patch_type type, const char *body,
    restops_done_cb on_done, void *arg, char **error);
/* Server-side apply: PATCH with application/apply-patch+yaml (JSON is YAML) as
 * field_manager, taking over conflicting fields when force is true. */
struct restops_request *restops_apply(struct client *c, const struct resource *r,
    const char *ns, const char *name, const char *field_manager, int force,
    const char *body, restops_done_cb on_done, void *arg, char **error);
/* The same to the object's subresource ("status": kube's ApplyStatus); NULL: the object. */
struct restops_request *restops_apply_subresource(struct client *c,
    const struct resource *r, const char *ns, const char *name, const char *subresource,
    const char *field_manager, int force, const char *body, restops_done_cb on_done,
    void *arg, char **error);
/* DELETE the object. precondition_uid and precondition_rv (each NULL for none) make the
 * delete fail with a Conflict when the object has another uid or resourceVersion;
 * propagation is NULL (the resource's default) or a RESTOPS_PROPAGATE_* value. */
struct restops_request *restops_delete(struct client *c, const struct resource *r,
    const char *ns, const char *name, const char *precondition_uid,
    const char *precondition_rv, const char *propagation, restops_done_cb on_done,
    void *arg, char **error);

/* The same with gracePeriodSeconds (-1: the object's own; 0: at once, as the pod garbage
 * collector deletes). */
struct restops_request *restops_delete_graced(struct client *c, const struct resource *r,
    const char *ns, const char *name, const char *precondition_uid,
    const char *precondition_rv, const char *propagation, long grace_period_seconds,
    restops_done_cb on_done, void *arg, char **error);
/* DELETE the collection of r in namespace ns (every object in it: a deletecollection).
 * A success comes with no body and no object: the list of the objects deleted, which the
 * apiserver sends back, is dropped as it arrives. */
struct restops_request *restops_delete_collection(struct client *c, const struct resource *r,
    const char *ns, const char *propagation, restops_done_cb on_done, void *arg,
    char **error);
/* PUT body over a subresource of the object ("finalize" of a namespace). */
struct restops_request *restops_update_subresource(struct client *c,
    const struct resource *r, const char *ns, const char *name, const char *subresource,
    const char *body, restops_done_cb on_done, void *arg, char **error);
/* PATCH a subresource of the object ("status"). */
struct restops_request *restops_patch_subresource(struct client *c,
    const struct resource *r, const char *ns, const char *name, const char *subresource,
    enum restops_patch_type type, const char *body, restops_done_cb on_done, void *arg,
    char **error);

/* Abandons a request: its on_done is not called. Not from inside its own on_done. */
void restops_cancel(struct restops_request *req);

/* Takes the parsed body out of a result, for the callback to keep; the caller frees it. */
cJSON *restops_take_object(struct restops_result *result);

/* --- building requests (pure; no I/O) ---------------------------------------------------- */

/* Returns the path of r's object name in ns (name NULL: the collection), with an optional
 * subresource ("status"), every segment percent-encoded; NULL with *error set when ns,
 * name or subresource is empty, "." or "..", or holds a '/' (the apiserver decodes %2F
 * before it routes, so no encoding makes such a name safe). */
char *restops_path(const struct resource *r, const char *ns, const char *name,
    const char *subresource, char **error);

/* Appends "?key=value" (or "&key=value" when b already has a query), percent-encoded. */
void restops_append_query(struct buf *b, const char *key, const char *value);

/* Returns a DeleteOptions body (apiVersion v1) with the preconditions and propagation
 * policy given; NULL with *error set for a propagation policy Kubernetes does not know. */
char *restops_delete_options(const char *precondition_uid, const char *precondition_rv,
    const char *propagation, char **error);
/* The same with gracePeriodSeconds when grace_period_seconds >= 0. */
char *restops_delete_options_graced(const char *precondition_uid,
    const char *precondition_rv, const char *propagation, long grace_period_seconds,
    char **error);

/* Returns the Content-Type of a patch type. */
const char *restops_patch_content_type(enum restops_patch_type type);

#endif
