/*
 * client.h - the Kubernetes REST client: libcurl's multi interface on the libevent loop.
 */
#ifndef SQLKCM_CLIENT_H
#define SQLKCM_CLIENT_H

#include <stddef.h>

#include <event2/event.h>

struct kube_config;
struct client;
struct client_request;

struct client_options {
	double qps;		/* client-side rate limit; <= 0: none */
	int burst;		/* requests allowed at once above the rate */
};

/* What came back for a request. */
struct client_response {
	int http_code;			/* 0 when no response arrived (transport error) */
	const char *body;		/* the body (empty for streams that got data) */
	size_t len;
	const char *retry_after;	/* the Retry-After header, or NULL */
	const char *transport_error;	/* what failed below HTTP, or NULL */
};

/* Called once when a request ends, whatever the outcome (unless it was cancelled). */
typedef void (*client_done_cb)(const struct client_response *response, void *arg);
/* For streams (watches): called with each piece of a successful response body. */
typedef void (*client_data_cb)(const char *data, size_t len, void *arg);

/* Creates a client for config (borrowed: it must outlive the client). */
struct client *client_new(struct event_base *base, struct kube_config *config,
    const struct client_options *options, char **error);
void client_free(struct client *c);

/* Sends method path (path and query, starting with "/") with an optional body of
 * content_type; on_done gets the whole response. The request waits its turn under the
 * rate limit. The returned handle is valid until on_done returns or client_cancel. */
struct client_request *client_send(struct client *c, const char *method, const char *path,
    const char *content_type, const char *body, size_t len, client_done_cb on_done,
    void *arg);

/* Sends GET path and streams a successful (2xx) body to on_data as it arrives, then calls
 * on_done; an error response is delivered whole to on_done instead. */
struct client_request *client_stream(struct client *c, const char *path,
    client_data_cb on_data, client_done_cb on_done, void *arg);

/* Abandons a request: no callback will be called for it. Safe from inside its on_data. */
void client_cancel(struct client_request *r);

/* Runs every event of the client at priority (of those the base was given), so that
 * its requests are not queued behind the other work of a loop turn. Before any request. */
void client_set_priority(struct client *c, int priority);

/* The loop the client runs on. */
struct event_base *client_base(const struct client *c);

/* The server URL, for messages. */
const char *client_server(const struct client *c);

#endif
