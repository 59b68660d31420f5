/*
 * client.h - the Kubernetes REST client: libcurl's multi interface on the libevent loop.
 */
#ifndef SQLKCM_CLIENT_H
#define SQLKCM_CLIENT_H

#include <stddef.h>

#include <event2/event.h>

struct kube_config;
struct metrics_registry;
struct client;
struct client_gate;
struct client_request;

struct client_options {
	double qps;		/* client-side rate limit; <= 0: none */
	int burst;		/* requests allowed at once above the rate */
	/* client-go's rest_client_* metrics; clients may share a registry. NULL: none. */
	struct metrics_registry *metrics;
	/* Shared with the process's other clients: while the server does not answer, they
	 * make at most the gate's attempts a second between them. NULL: none. */
	struct client_gate *gate;
};

/* Creates a gate for clients that talk to one server: while it does not answer (a request
 * ended without an HTTP response) requests leave the queues at attempts_per_second
 * between all of them; the first answer lets them go at their own rates again. The
 * clients borrow it: free it after them. */
struct client_gate *client_gate_new(double attempts_per_second);
void client_gate_free(struct client_gate *g);

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

/* GET path with the Accept header accept (NULL: application/json), e.g. the metadata-only
 * or aggregated discovery forms; with on_data a stream, as client_stream, else as
 * client_send. The request is queued, not started: setting the header here is safe. */
struct client_request *client_get_as(struct client *c, const char *path, const char *accept,
    client_data_cb on_data, client_done_cb on_done, void *arg);

/* Drops the body of a successful (2xx) response of r as it arrives: on_done gets none.
 * For a request whose answer the caller does not read (a collection delete answers with
 * every object it deleted). Call before the loop runs. */
void client_discard_success_body(struct client_request *r);

/* Abandons a request: no callback will be called for it. Safe from inside its on_data. */
void client_cancel(struct client_request *r);

/* What a responder answers: http_code 0 for no response (a transport error); body (a
 * string) and retry_after are malloc'd or NULL, and taken by the client. */
struct client_reply {
	int http_code;
	char *body;
	char *retry_after;
};

/* Answers a request: path is the path and query; body (len bytes, NUL-terminated) and
 * content_type are NULL when the request has none. */
typedef void (*client_responder_cb)(const char *method, const char *path,
    const char *content_type, const char *body, size_t len, struct client_reply *reply,
    void *arg);

/* Creates a client for tests whose requests responder answers, with no network and no
 * rate limit: each request is answered when it starts, and the answer is delivered from
 * the loop as a real response is (streams get the whole body in one piece). */
struct client *client_new_responder(struct event_base *base, client_responder_cb responder,
    void *arg);
/* Runs every event of the client at priority (of those the base was given), so that
 * its requests are not queued behind the other work of a loop turn. Before any request. */
void client_set_priority(struct client *c, int priority);

/* Changes when a silent connection is probed, how long the probe's answer is awaited and
 * when a silent connection is dead whatever probes say (defaults: 30, 13 and 90 seconds).
 * For tests; before any request. */
void client_set_dead_peer_timing(struct client *c, double probe_after, double probe_timeout,
    double silence_max);

/*
 * Another identity than the kubeconfig's: a bearer token a source hands out (kube's
 * controller client builder with --use-service-account-credentials: its config keeps the
 * server and CA but no credentials of the kubeconfig's user, and a token source adds the
 * service account's token to each request). token returns the token to present, or NULL
 * while there is none yet: the client's requests then wait in its queue until
 * client_token_ready. unauthorized, if not NULL, hears of every 401 the server answered.
 * user_agent_suffix, if not NULL, is appended to the User-Agent after a '/', as client-go
 * appends the service account's user name. The source is borrowed: it must outlive the
 * client. Before any request.
 */
struct client_token_source {
	const char *(*token)(void *arg);
	void (*unauthorized)(void *arg);
	void *arg;
	const char *user_agent_suffix;
};
void client_set_token_source(struct client *c, const struct client_token_source *source);

/* The token source of c has a token now: the requests that waited for one go. */
void client_token_ready(struct client *c);

/* The loop the client runs on. */
struct event_base *client_base(const struct client *c);

/* The server URL, for messages. */
const char *client_server(const struct client *c);

#endif
