/*
 * client.c - the Kubernetes REST client: libcurl's multi interface on the libevent loop.
 *
 * One curl multi handle carries every request; curl tells us, through the socket and
 * timer callbacks, which sockets to watch and when to call it back, and libevent does the
 * waiting, so hundreds of requests are in flight on one thread. HTTP/2 is used where the
 * server offers it (ALPN over TLS; plain http stays HTTP/1.1), with every stream
 * multiplexed on one connection: a request waits for a connection being set up rather
 * than open its own (CURLOPT_PIPEWAIT). Each new connection is logged at -v 4 with the
 * HTTP version it negotiated, each finished request at -v 5.
 *
 * Before a request goes out it takes a token from a bucket that refills at qps tokens a
 * second up to burst (client-go's default rate limiter, which kube-controller-manager sets
 * with --kube-api-qps and --kube-api-burst); requests that find the bucket empty wait in
 * order for a timer.
 *
 * Metrics (when the options give a registry) carry client-go's names, labels and buckets:
 * rest_client_requests_total{code,method,host} counts every request once its status is
 * known (a stream at the end of its headers; "<error>" when no response came),
 * rest_client_request_duration_seconds{verb,host} times each request that is not a stream
 * from the moment it was queued, the wait for a token included, as client-go does, and
 * rest_client_rate_limiter_duration_seconds{verb,host} the wait for the token alone. host is
 * the server URL's host:port; verb and method are the HTTP method.
 *
 * Credentials come from the kubeconfig for every request (kube_config_credentials is
 * cheap: it re-reads a rotated token file, or re-runs an exec plugin, only when needed);
 * after a 401 the next request asks for fresh ones. curl's verbose mode stays off: it
 * would print the Authorization header. A client given a token source (another identity,
 * clientbuilder.c) presents only the source's token, never the kubeconfig's credentials,
 * and holds its requests back while the source has none.
 *
 * Lifetime: a request belongs to the client until on_done returns or it is cancelled.
 * A request cancelled from inside its own write callback is only marked, and freed when
 * curl gives it back.
 *
 * Dead peers: a peer that vanished, or a middlebox that lost the flow, swallows bytes
 * without closing anything; TCP keepalive does not see it (the middlebox's kernel answers)
 * and a watch on it would wait forever. So every connection curl holds, in use or idle in
 * its pool, keeps the time bytes last arrived on it (struct client_socket, from curl's
 * first use of the socket to its close). One silent for CLIENT_PROBE_AFTER_S makes the
 * client send a probe, GET /version outside the rate limit and the gate: over HTTP/2 it is
 * multiplexed on the connection in use, or takes the idle one, and its answer proves the
 * peer alive as client-go's PING does (libcurl 7.88 cannot ping a connection the multi
 * interface holds: curl_easy_upkeep only reaches curl_easy_perform's connections). When the
 * probe gets no answer within CLIENT_PROBE_TIMEOUT_S, every connection silent since before
 * it was sent is presumed dead; one in use and silent for CLIENT_SILENCE_MAX_S (the
 * apiserver's minute between bookmarks, plus a margin: the rule for HTTP/1.1, where a
 * probe takes a connection of its own) is presumed dead whatever a probe said. A dead
 * connection's socket is shut down: curl reads the end of the stream at once, the
 * transfers on it fail with a transport error that says why, and it is never used again.
 *
 * Outages: the clients of a process may share a gate (struct client_gate). Once a request
 * has ended without an HTTP answer the server is taken as unreachable, and requests leave
 * every sharing client's queue only as the gate's tokens allow (a few a second between
 * them all: each is a connection attempt); the first HTTP answer opens the gate and the
 * queues drain at their own rates again. So many informers retrying together do not
 * hammer an apiserver that is coming back, and the first that gets through lets the others
 * go at once.
 *
 * For unit tests, client_new_responder makes a client without curl or a kubeconfig whose
 * requests a function answers, with no rate limit: a request is queued and started from the
 * loop as any other, the function is called when it starts, and its answer is delivered
 * from a loop callback of its own, so callers see the same order of callbacks as over the
 * network. Only client_start, client_cancel and client_free know the difference.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "client.h"
#include "kubeconfig.h"
#include "log.h"
#include "metrics.h"
#include "timeutil.h"
#include "util.h"
#include "version.h"

/* Requests other than streams give up after this long; streams end by the server's
 * timeoutSeconds and are watched over by their owner. */
#define CLIENT_REQUEST_TIMEOUT_MS 60000L
#define CLIENT_CONNECT_TIMEOUT_MS 10000L
/*
 * curl gives every transfer a receive buffer (16 KiB by default) and, once it sends a
 * body, an upload buffer (64 KiB): at a burst of 30 writes that is 2.4 MB for bodies of
 * about 1 KB. A write's response is one object, so it gets a small receive buffer, and
 * every upload the smallest curl allows; LISTs and watches keep the default.
 */
#define CLIENT_WRITE_RECV_BUFFER 4096L
#define CLIENT_UPLOAD_BUFFER 16384L
/* An error body larger than this is cut (it is only read for its message). */
#define CLIENT_MAX_ERROR_BODY (1024 * 1024)
/* Dead peers (see above): a socket silent this long is probed; the probe's answer is
 * awaited this long (the sockets are looked at every tenth of it); a socket silent this
 * long is dead whatever a probe said. From the last byte to closed: at most 45 s. */
#define CLIENT_PROBE_AFTER_S 30.0
#define CLIENT_PROBE_TIMEOUT_S 13.0
#define CLIENT_SILENCE_MAX_S 90.0
#define CLIENT_PROBE_PATH "/version"

struct client_gate {
	double rate;		/* attempts a second between all clients while closed */
	double tokens;
	double refilled_at;	/* monotonic seconds */
	int closed;		/* the last request ended without an HTTP answer */
};

/* A connection's socket, from the first time curl asks us to watch it until curl closes
 * it: idle in curl's pool between requests, it keeps its record, so that a connection
 * that died while idle is probed as one that died in use. */
struct client_socket {
	struct client *client;
	curl_socket_t fd;
	struct event *ev;
	int watched;		/* curl wants its events now */
	ino_t inode;		/* the socket's: a record whose fd now names another is stale */
	double last_read;	/* monotonic: bytes last arrived (or it was first watched) */
	LIST_ENTRY(client_socket) link;
};

struct client_request {
	struct client *client;
	CURL *easy;
	int discard_success;	/* a 2xx body is read and dropped */
	struct curl_slist *headers;
	char *method;
	char *url;
	char *body;
	size_t body_len;
	char *content_type;
	char *accept;		/* the Accept header's value; NULL: application/json */
	struct buf response;
	char *retry_after;
	client_data_cb on_data;
	client_done_cb on_done;
	void *arg;
	int streaming;
	int started;		/* handed to curl */
	int in_write;		/* inside its write callback */
	int cancelled;
	int status_seen;	/* a status line arrived: the connection is known */
	int counted;		/* in rest_client_requests_total already */
	double queued_at;	/* monotonic seconds */
	long timeout_ms;	/* the whole request's; 0: none (streams) */
	int probe;		/* never waits on a connection not yet known to multiplex */
	int reply_code;		/* a responder's answer (0: none, errbuf says why) */
	char errbuf[CURL_ERROR_SIZE];
	TAILQ_ENTRY(client_request) link;	/* in client->waiting, then client->active */
};

TAILQ_HEAD(client_request_queue, client_request);

struct client {
	struct event_base *base;
	struct kube_config *config;
	CURLM *multi;
	struct event *curl_timer;	/* curl's timeout */
	struct event *throttle_timer;	/* the next token */
	struct event *kick;		/* starts waiting requests from a callback of its own */
	struct client_request_queue waiting;	/* for the rate limit */
	struct client_request_queue active;	/* handed to curl */
	double qps;
	int burst;
	double tokens;
	double refilled_at;		/* monotonic seconds */
	int unauthorized_seen;		/* a 401 came back: ask for fresh credentials */
	char *host;			/* the server's host:port, the metrics' host label */
	struct metrics_family *requests_total;	/* NULL without metrics */
	struct metrics_family *request_duration;
	struct metrics_family *rate_limiter_duration;
	client_responder_cb responder;	/* tests: answers instead of curl (and config) */
	void *responder_arg;
	struct event *deliver;		/* hands the responder's answers back */
	int priority;			/* of every event of this client; -1: the default */
	struct client_gate *gate;	/* shared with the process's other clients, or NULL */
	LIST_HEAD(, client_socket) sockets;	/* curl's open connections */
	struct event *health;		/* looks for silent sockets while there are any */
	struct client_request *probe;	/* in flight, or NULL */
	double probe_sent_at;		/* monotonic */
	double probe_failed_at;		/* the send time of a probe that got no answer; 0 */
	const char *closing_reason;	/* while a dead socket's transfers end */
	double probe_after;		/* CLIENT_PROBE_AFTER_S, ... unless a test set them */
	double probe_timeout;
	double silence_max;
	const struct client_token_source *token_source;	/* NULL: the kubeconfig's user */
	char *user_agent;		/* with the token source's suffix, or NULL */
};

static void client_start_waiting(struct client *c);
static void client_finish(struct client *c, struct client_request *r, CURLcode result);
static void client_respond(struct client *c, struct client_request *r);
static void client_health(evutil_socket_t fd, short what, void *arg);

/* --- metrics -------------------------------------------------------------------------- */

/* client-go's latency buckets for its REST client histograms, in seconds. */
static const double client_latency_buckets[] = {
	0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60,
};

/* Registers the client's families in registry (logging a conflict, then going without). */
static void
client_register_metrics(struct client *c, struct metrics_registry *registry)
{
	static const char *const result_labels[] = { "code", "method", "host", NULL };
	static const char *const latency_labels[] = { "verb", "host", NULL };
	static const struct metrics_spec requests_total = { METRICS_COUNTER,
	    "rest_client_requests_total",
	    "[ALPHA] HTTP requests sent to the apiserver, by response status code (\"<error>\" "
	    "when none came), method and host.",
	    result_labels, NULL, 0 };
	static const struct metrics_spec request_duration = { METRICS_HISTOGRAM,
	    "rest_client_request_duration_seconds",
	    "[ALPHA] Seconds from queueing a request to its whole response, by verb and host.",
	    latency_labels, client_latency_buckets,
	    sizeof client_latency_buckets / sizeof client_latency_buckets[0] };
	static const struct metrics_spec rate_limiter_duration = { METRICS_HISTOGRAM,
	    "rest_client_rate_limiter_duration_seconds",
	    "[ALPHA] Seconds a request waited for the client-side rate limiter, by verb and "
	    "host.",
	    latency_labels, client_latency_buckets,
	    sizeof client_latency_buckets / sizeof client_latency_buckets[0] };
	char *error = NULL;

	if ((c->requests_total = metrics_family_register(registry, &requests_total,
	    &error)) == NULL ||
	    (c->request_duration = metrics_family_register(registry, &request_duration,
	    &error)) == NULL ||
	    (c->rate_limiter_duration = metrics_family_register(registry,
	    &rate_limiter_duration, &error)) == NULL) {
		log_error("client: no metrics: %s", error);
		free(error);
		c->requests_total = c->request_duration = c->rate_limiter_duration = NULL;
	}
}

/* Returns the host:port of a server URL ("https://127.0.0.1:6443/x" gives
 * "127.0.0.1:6443"), malloc'd. */
static char *
client_url_host(const char *server)
{
	const char *p = strstr(server, "://");

	p = p != NULL ? p + 3 : server;
	return xstrndup(p, strcspn(p, "/?#"));
}

/* Counts r in rest_client_requests_total, once: code is its HTTP status, 0 for none. */
static void
client_count_request(struct client_request *r, long code)
{
	struct client *c = r->client;
	char text[24];
	const char *values[] = { text, r->method, c->host, NULL };

	if (r->counted || c->requests_total == NULL)
		return;
	r->counted = 1;
	if (code > 0)
		snprintf(text, sizeof text, "%ld", code);
	else
		snprintf(text, sizeof text, "<error>");
	metrics_counter_add(metrics_series_get(c->requests_total, values), 1);
}

/* Observes seconds in one of the client's latency histograms (NULL: none). */
static void
client_observe(struct client_request *r, struct metrics_family *family, double seconds)
{
	const char *values[] = { r->method, r->client->host, NULL };

	if (family != NULL)
		metrics_histogram_observe(metrics_series_get(family, values), seconds);
}

/* --- the gate ------------------------------------------------------------------------ */

struct client_gate *
client_gate_new(double attempts_per_second)
{
	struct client_gate *g = xcalloc(1, sizeof *g);

	g->rate = attempts_per_second;
	g->tokens = 1;
	g->refilled_at = time_monotonic();
	return g;
}

void
client_gate_free(struct client_gate *g)
{
	free(g);
}

/* Seconds until the gate lets one more request go (0: now). */
static double
client_gate_wait(struct client_gate *g)
{
	double now = time_monotonic();

	if (g == NULL || !g->closed)
		return 0;
	g->tokens = fmin(1.0, g->tokens + (now - g->refilled_at) * g->rate);
	g->refilled_at = now;
	return g->tokens >= 1.0 ? 0 : (1.0 - g->tokens) / g->rate;
}

/* A request goes out through the gate. */
static void
client_gate_take(struct client_gate *g)
{
	if (g != NULL && g->closed)
		g->tokens -= 1.0;
}

/* A request ended: with an HTTP answer (the server is reachable) or without one. */
static void
client_gate_note(struct client_gate *g, int answered)
{
	if (g == NULL || g->closed == !answered)
		return;
	g->closed = !answered;
	if (g->closed) {
		g->tokens = 0;
		g->refilled_at = time_monotonic();
		log_v(2, "client: the server did not answer; at most %g connection attempts a "
		    "second until it does", g->rate);
	} else {
		log_v(2, "client: the server answers again");
	}
}

/* --- curl on libevent ----------------------------------------------------------------- */

/* Hands every finished transfer to its owner. */
static void
client_check_done(struct client *c)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(c->multi, &left)) != NULL) {
		struct client_request *r;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		client_finish(c, r, msg->data.result);
	}
}

/* libevent says a socket curl watches is ready. */
static void
client_socket_ready(evutil_socket_t fd, short what, void *arg)
{
	struct client_socket *s = arg;
	struct client *c = s->client;
	int flags = 0, running;

	if (what & EV_READ) {
		flags |= CURL_CSELECT_IN;
		s->last_read = time_monotonic();
	}
	if (what & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	curl_multi_socket_action(c->multi, fd, flags, &running);
	client_check_done(c);
}

/* curl's timer expired. */
static void
client_curl_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;
	int running;

	(void)fd;
	(void)what;
	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	client_check_done(c);
}

/* Forgets s (curl closes its socket). */
static void
client_socket_free(struct client_socket *s)
{
	struct client *c = s->client;

	LIST_REMOVE(s, link);
	event_free(s->ev);
	free(s);
	if (LIST_EMPTY(&c->sockets))
		evtimer_del(c->health);
}

/* The record of fd, or NULL. */
static struct client_socket *
client_socket_find(struct client *c, curl_socket_t fd)
{
	struct client_socket *s;

	LIST_FOREACH(s, &c->sockets, link) {
		if (s->fd == fd)
			return s;
	}
	return NULL;
}

/* curl closes a socket: its record goes with it (a later socket may get the same fd). */
static int
client_socket_close(void *arg, curl_socket_t fd)
{
	struct client_socket *s = client_socket_find(arg, fd);

	if (s != NULL)
		client_socket_free(s);
	return close(fd);
}

/* curl asks to watch (or stop watching: idle, or closing) a socket. */
static int
client_socket_callback(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct client *c = userp;
	struct client_socket *s = socketp;
	short events = EV_PERSIST;

	(void)easy;
	if (s == NULL && (s = client_socket_find(c, fd)) != NULL) {
		struct stat st;

		/* An idle connection curl uses again, or a socket curl closed without telling
		 * (its resolver's) whose number a new one got: then it is new. */
		if (fstat(fd, &st) == 0 && st.st_ino != s->inode) {
			s->inode = st.st_ino;
			s->last_read = time_monotonic();
		}
	}
	if (what == CURL_POLL_REMOVE) {
		if (s != NULL) {
			event_del(s->ev);
			s->watched = 0;
		}
		curl_multi_assign(c->multi, fd, NULL);
		return 0;
	}
	if (what & CURL_POLL_IN)
		events |= EV_READ;
	if (what & CURL_POLL_OUT)
		events |= EV_WRITE;
	if (s != NULL) {
		event_del(s->ev);
		event_assign(s->ev, c->base, fd, events, client_socket_ready, s);
	} else {
		struct stat st;

		s = xcalloc(1, sizeof *s);
		s->client = c;
		s->fd = fd;
		s->last_read = time_monotonic();
		if (fstat(fd, &st) == 0)
			s->inode = st.st_ino;
		s->ev = event_new(c->base, fd, events, client_socket_ready, s);
		if (LIST_EMPTY(&c->sockets)) {
			/* A tenth of the probe's wait: closed within 45 s of the last byte. */
			double t = c->probe_timeout / 10;
			struct timeval tick = { (time_t)t, (suseconds_t)((t - (time_t)t) * 1e6) };

			evtimer_add(c->health, &tick);
		}
		LIST_INSERT_HEAD(&c->sockets, s, link);
	}
	curl_multi_assign(c->multi, fd, s);
	s->watched = 1;
	if (c->priority >= 0)
		event_priority_set(s->ev, c->priority);
	event_add(s->ev, NULL);
	return 0;
}

/* curl asks to be called back after timeout_ms (-1: never). */
static int
client_timer_callback(CURLM *multi, long timeout_ms, void *userp)
{
	struct client *c = userp;
	struct timeval tv;

	(void)multi;
	if (timeout_ms < 0) {
		evtimer_del(c->curl_timer);
		return 0;
	}
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	evtimer_add(c->curl_timer, &tv);
	return 0;
}

/* --- requests ------------------------------------------------------------------------- */

/* Body bytes arrive: streamed to on_data for a successful stream, kept otherwise. */
static size_t
client_write(char *data, size_t size, size_t n, void *arg)
{
	struct client_request *r = arg;
	size_t len = size * n;
	long code = 0;

	if (r->cancelled)
		return 0;
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
	if (r->streaming && code >= 200 && code < 300) {
		r->in_write = 1;
		r->on_data(data, len, r->arg);
		r->in_write = 0;
		return r->cancelled ? 0 : len;
	}
	if (r->discard_success && code >= 200 && code < 300)
		return len;
	if (r->streaming || code >= 300) {
		if (r->response.len + len > CLIENT_MAX_ERROR_BODY)
			return len;	/* keep the start; the message is there */
	}
	buf_append(&r->response, data, len);
	return len;
}

/* Names the HTTP version curl reports, for logs. */
static const char *
client_http_version_name(long version)
{
	switch (version) {
	case CURL_HTTP_VERSION_1_0:
		return "1.0";
	case CURL_HTTP_VERSION_1_1:
		return "1.1";
	case CURL_HTTP_VERSION_2_0:
		return "2";
#ifdef CURL_HTTP_VERSION_3
	case CURL_HTTP_VERSION_3:
		return "3";
#endif
	}
	return "unknown";
}

/* The first status line of a response: logs the connection if this request opened it. */
static void
client_log_connection(struct client_request *r)
{
	long connects = 0, version = 0, port = 0;
	char *ip = NULL;

	if (log_verbosity < 4)
		return;
	curl_easy_getinfo(r->easy, CURLINFO_NUM_CONNECTS, &connects);
	if (connects <= 0)
		return;
	curl_easy_getinfo(r->easy, CURLINFO_HTTP_VERSION, &version);
	curl_easy_getinfo(r->easy, CURLINFO_PRIMARY_IP, &ip);
	curl_easy_getinfo(r->easy, CURLINFO_LOCAL_PORT, &port);
	log_v(4, "client: new connection server=%s ip=%s local_port=%ld http_version=%s",
	    r->client->config->server, ip != NULL ? ip : "", port,
	    client_http_version_name(version));
}

/* Keeps the Retry-After header (429 and 503 responses carry it); notes new connections. */
static size_t
client_header(char *data, size_t size, size_t n, void *arg)
{
	struct client_request *r = arg;
	size_t len = size * n;
	static const char name[] = "retry-after:";

	if (!r->status_seen && len > 5 && strncmp(data, "HTTP/", 5) == 0) {
		r->status_seen = 1;
		client_log_connection(r);
		/* The server answers: a watch that streams on for minutes opens the gate now. */
		client_gate_note(r->client->gate, 1);
	}
	if (r->streaming && (len == 2 || len == 1) && (data[0] == '\r' || data[0] == '\n')) {
		long code = 0;

		/* The end of a stream's headers: its status is known, its body may last. */
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200)
			client_count_request(r, code);
	}
	if (len > sizeof name - 1 && strncasecmp(data, name, sizeof name - 1) == 0) {
		const char *v = data + sizeof name - 1;
		size_t vlen = len - (sizeof name - 1);
		while (vlen > 0 && (*v == ' ' || *v == '\t'))
			v++, vlen--;
		while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
			vlen--;
		free(r->retry_after);
		r->retry_after = xstrndup(v, vlen);
	}
	return len;
}

static void
client_request_free(struct client_request *r)
{
	if (r->easy != NULL)
		curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->headers);
	free(r->method);
	free(r->url);
	free(r->body);
	free(r->content_type);
	free(r->accept);
	free(r->retry_after);
	buf_free(&r->response);
	free(r);
}

/* Calls on_done with a failure that happened before any transfer. */
static void
client_fail_early(struct client_request *r, const char *why)
{
	struct client_response resp = { 0, "", 0, NULL, why };

	if (r->on_done != NULL)
		r->on_done(&resp, r->arg);
}

/* Sets up the curl handle: TLS from the kubeconfig, credentials, headers. */
static int
client_prepare(struct client *c, struct client_request *r, char **error)
{
	struct kube_config *kc = c->config;
	struct kube_credentials creds = { NULL, NULL, 0, NULL, 0 };
	CURL *e;

	if (c->token_source != NULL)
		creds.token = c->token_source->token(c->token_source->arg);
	else if (kube_config_credentials(kc, c->unauthorized_seen, &creds, error) != 0)
		return -1;
	c->unauthorized_seen = 0;
	e = r->easy = curl_easy_init();
	if (e == NULL)
		return error_set(error, "cannot create a curl handle");
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_URL, r->url);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, c->user_agent != NULL ? c->user_agent :
	    SQLKCM_USER_AGENT);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_PIPEWAIT, r->probe ? 0L : 1L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, CLIENT_CONNECT_TIMEOUT_MS);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	/* gzip, unless the kubeconfig's cluster says disable-compression, as client-go. */
	if (c->config == NULL || !c->config->disable_compression)
		curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	if (r->timeout_ms > 0)
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, r->timeout_ms);
	if (strcmp(r->method, "GET") != 0)
		curl_easy_setopt(e, CURLOPT_BUFFERSIZE, CLIENT_WRITE_RECV_BUFFER);
	curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, CLIENT_UPLOAD_BUFFER);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, client_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, client_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, client_socket_close);
	curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, c);

	/* TLS: verification stays on unless the kubeconfig turned it off. */
	if (kc->insecure_skip_tls_verify) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (kc->ca_pem != NULL) {
		struct curl_blob blob = { kc->ca_pem, kc->ca_pem_len, CURL_BLOB_COPY };
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
	} else if (kc->ca_file != NULL) {
		curl_easy_setopt(e, CURLOPT_CAINFO, kc->ca_file);
	}
	if (creds.cert_pem != NULL && creds.key_pem != NULL) {
		struct curl_blob cert = { (void *)creds.cert_pem, creds.cert_pem_len, CURL_BLOB_COPY };
		struct curl_blob key = { (void *)creds.key_pem, creds.key_pem_len, CURL_BLOB_COPY };
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cert);
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &key);
	} else if (kc->cert_file != NULL && kc->key_file != NULL && c->token_source == NULL) {
		curl_easy_setopt(e, CURLOPT_SSLCERT, kc->cert_file);
		curl_easy_setopt(e, CURLOPT_SSLKEY, kc->key_file);
	}
	curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
	curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	if (kc->proxy_url != NULL)
		curl_easy_setopt(e, CURLOPT_PROXY, kc->proxy_url);

	if (r->accept != NULL) {
		char *accept = xasprintf("Accept: %s", r->accept);
		r->headers = curl_slist_append(r->headers, accept);
		free(accept);
	} else {
		r->headers = curl_slist_append(r->headers, "Accept: application/json");
	}
	if (creds.token != NULL) {
		char *auth = xasprintf("Authorization: Bearer %s", creds.token);
		r->headers = curl_slist_append(r->headers, auth);
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	if (r->content_type != NULL) {
		char *ct = xasprintf("Content-Type: %s", r->content_type);
		r->headers = curl_slist_append(r->headers, ct);
		free(ct);
	}
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
	if (strcmp(r->method, "GET") != 0)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
	if (r->body != NULL) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
	}
	return 0;
}

/* Starts r now; on a setup failure its on_done is told and it is freed. */
static void
client_start(struct client *c, struct client_request *r)
{
	char *error = NULL;

	if (c->responder != NULL) {
		client_respond(c, r);
		return;
	}
	if (client_prepare(c, r, &error) != 0 ||
	    curl_multi_add_handle(c->multi, r->easy) != CURLM_OK) {
		log_error("request failed before sending method=%s url=%s err=\"%s\"", r->method,
		    r->url, error != NULL ? error : "curl_multi_add_handle failed");
		client_count_request(r, 0);
		client_fail_early(r, error != NULL ? error : "cannot start the request");
		free(error);
		client_request_free(r);
		return;
	}
	r->started = 1;
	TAILQ_INSERT_TAIL(&c->active, r, link);
	client_observe(r, c->rate_limiter_duration, time_monotonic() - r->queued_at);
}

/* Refills the bucket for the time passed. */
static void
client_refill(struct client *c)
{
	double now = time_monotonic();

	c->tokens = fmin((double)c->burst, c->tokens + (now - c->refilled_at) * c->qps);
	c->refilled_at = now;
}

/* The throttle timer: a token is due. */
static void
client_throttle_expired(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	client_start_waiting(arg);
}

/* Starts waiting requests while tokens last; arms the timer for the next token. */
static void
client_start_waiting(struct client *c)
{
	struct client_request *r;

	while ((r = TAILQ_FIRST(&c->waiting)) != NULL) {
		double wait = 0;

		/* No token yet: client_token_ready starts them. */
		if (c->token_source != NULL &&
		    c->token_source->token(c->token_source->arg) == NULL)
			return;
		if (c->qps > 0) {
			client_refill(c);
			if (c->tokens < 1.0)
				wait = (1.0 - c->tokens) / c->qps;
		}
		if (wait == 0)
			wait = client_gate_wait(c->gate);
		if (wait > 0) {
			struct timeval tv = { (time_t)wait,
			    (suseconds_t)((wait - floor(wait)) * 1e6) + 1 };
			evtimer_add(c->throttle_timer, &tv);
			return;
		}
		if (c->qps > 0)
			c->tokens -= 1.0;
		client_gate_take(c->gate);
		TAILQ_REMOVE(&c->waiting, r, link);
		client_start(c, r);
	}
}

/* Starts waiting requests from a loop callback of its own: never from inside a curl
 * callback (curl refuses to add handles there) nor from inside client_send (whose caller
 * must hold the handle before any callback about it runs). */
static void
client_kick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	client_start_waiting(arg);
}

/* Queues a new request behind the rate limit. */
static struct client_request *
client_enqueue(struct client *c, const char *method, const char *path,
    const char *content_type, const char *body, size_t len, int streaming,
    client_data_cb on_data, client_done_cb on_done, void *arg)
{
	struct client_request *r = xcalloc(1, sizeof *r);

	r->client = c;
	r->method = xstrdup(method);
	r->url = xasprintf("%s%s", c->config != NULL ? c->config->server : "", path);
	if (body != NULL) {
		r->body = xmalloc(len + 1);
		memcpy(r->body, body, len);
		r->body[len] = '\0';
		r->body_len = len;
	}
	r->content_type = content_type != NULL ? xstrdup(content_type) : NULL;
	r->streaming = streaming;
	r->timeout_ms = streaming ? 0 : CLIENT_REQUEST_TIMEOUT_MS;
	r->on_data = on_data;
	r->on_done = on_done;
	r->arg = arg;
	r->queued_at = time_monotonic();
	buf_init(&r->response);
	TAILQ_INSERT_TAIL(&c->waiting, r, link);
	event_active(c->kick, EV_TIMEOUT, 0);
	return r;
}

struct client_request *
client_send(struct client *c, const char *method, const char *path,
    const char *content_type, const char *body, size_t len, client_done_cb on_done, void *arg)
{
	return client_enqueue(c, method, path, content_type, body, len, 0, NULL, on_done, arg);
}

struct client_request *
client_stream(struct client *c, const char *path, client_data_cb on_data,
    client_done_cb on_done, void *arg)
{
	return client_enqueue(c, "GET", path, NULL, NULL, 0, 1, on_data, on_done, arg);
}

struct client_request *
client_get_as(struct client *c, const char *path, const char *accept, client_data_cb on_data,
    client_done_cb on_done, void *arg)
{
	struct client_request *r = client_enqueue(c, "GET", path, NULL, NULL, 0,
	    on_data != NULL, on_data, on_done, arg);

	r->accept = accept != NULL ? xstrdup(accept) : NULL;
	return r;
}

/* A transfer ended: tell the owner (unless cancelled) and free it. */
static void
client_finish(struct client *c, struct client_request *r, CURLcode result)
{
	struct client_response resp;
	long code = 0;

	curl_multi_remove_handle(c->multi, r->easy);
	TAILQ_REMOVE(&c->active, r, link);
	client_gate_note(c->gate, result == CURLE_OK);
	if (!r->cancelled) {
		if (result == CURLE_OK)
			curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
		client_count_request(r, result == CURLE_OK ? code : 0);
		if (!r->streaming)
			client_observe(r, c->request_duration, time_monotonic() - r->queued_at);
		code = 0;
	}
	if (log_verbosity >= 5) {
		long version = 0;
		curl_off_t micros = 0;

		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
		curl_easy_getinfo(r->easy, CURLINFO_HTTP_VERSION, &version);
		curl_easy_getinfo(r->easy, CURLINFO_TOTAL_TIME_T, &micros);
		log_v(5, "client: %s %s code=%ld http_version=%s seconds=%.3f%s%s", r->method,
		    r->url, code, client_http_version_name(version), (double)micros / 1e6,
		    result != CURLE_OK ? " err=" : "", result != CURLE_OK ?
		    curl_easy_strerror(result) : "");
	}
	if (!r->cancelled && r->on_done != NULL) {
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
		if (code == 401)
			c->unauthorized_seen = 1;
		if (code == 401 && c->token_source != NULL &&
		    c->token_source->unauthorized != NULL)
			c->token_source->unauthorized(c->token_source->arg);
		resp.http_code = result == CURLE_OK ? (int)code : 0;
		resp.body = r->response.data != NULL ? r->response.data : "";
		resp.len = r->response.len;
		resp.retry_after = r->retry_after;
		resp.transport_error = NULL;
		if (result != CURLE_OK && c->closing_reason != NULL)
			resp.transport_error = c->closing_reason;
		else if (result != CURLE_OK)
			resp.transport_error = r->errbuf[0] != '\0' ? r->errbuf :
			    curl_easy_strerror(result);
		r->on_done(&resp, r->arg);
	}
	client_request_free(r);
}

void
client_discard_success_body(struct client_request *r)
{
	if (r != NULL)
		r->discard_success = 1;
}

void
client_cancel(struct client_request *r)
{
	struct client *c = r->client;

	r->cancelled = 1;
	r->on_data = NULL;
	r->on_done = NULL;
	if (!r->started) {
		TAILQ_REMOVE(&c->waiting, r, link);
		client_request_free(r);
		return;
	}
	if (r->in_write)
		return;		/* curl gets 0 from the write callback and gives it back */
	if (r->easy != NULL)
		curl_multi_remove_handle(c->multi, r->easy);
	TAILQ_REMOVE(&c->active, r, link);
	client_request_free(r);
}

/* --- dead peers ---------------------------------------------------------------------- */

/* Shuts s down: curl reads the end of its stream now, and each transfer on it ends with
 * why as its transport error (an idle one is found dead when curl would reuse it). s may
 * be freed by curl's callbacks on the way. */
static void
client_close_dead(struct client *c, struct client_socket *s, const char *why)
{
	curl_socket_t fd = s->fd;
	int running;

	s->last_read = time_monotonic();	/* not chosen again if curl keeps it a moment */
	log_warning("client: closing a connection to %s: %s", c->host, why);
	shutdown(fd, SHUT_RDWR);
	c->closing_reason = why;
	curl_multi_socket_action(c->multi, fd, CURL_CSELECT_IN | CURL_CSELECT_ERR, &running);
	client_check_done(c);
	c->closing_reason = NULL;
}

/* The probe's answer: any HTTP status proves the connection it rode alive; none leaves
 * the sockets silent since it was sent to be closed by client_health. */
static void
client_probe_done(const struct client_response *resp, void *arg)
{
	struct client *c = arg;

	c->probe = NULL;
	if (resp->http_code == 0) {
		c->probe_failed_at = c->probe_sent_at;
		if (!LIST_EMPTY(&c->sockets))
			event_active(c->health, EV_TIMEOUT, 0);
	}
}

/* Sends a probe now, past the rate limit and the gate: it must ride the connection in
 * doubt, not wait behind the requests stuck on it. */
static void
client_probe(struct client *c)
{
	struct client_request *r = xcalloc(1, sizeof *r);

	r->client = c;
	r->method = xstrdup("GET");
	r->url = xasprintf("%s%s", c->config->server, CLIENT_PROBE_PATH);
	r->on_done = client_probe_done;
	r->arg = c;
	r->timeout_ms = (long)(c->probe_timeout * 1000);
	r->probe = 1;
	r->queued_at = c->probe_sent_at = time_monotonic();
	buf_init(&r->response);
	c->probe = r;
	log_v(4, "client: a connection to %s has been silent for %.0fs; probing it", c->host,
	    c->probe_after);
	client_start(c, r);
}

/* Every tenth of the probe's wait while curl holds connections: closes the dead ones,
 * probes when one has gone quiet, in use or idle in curl's pool (the probe then takes the
 * idle one), as client-go pings every HTTP/2 connection 30 s without a frame. */
static void
client_health(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;
	struct client_socket *s;
	int quiet;

	(void)fd;
	(void)what;
	for (;;) {
		double now = time_monotonic();
		char *why = NULL;

		quiet = 0;
		LIST_FOREACH(s, &c->sockets, link) {
			double silent = now - s->last_read;

			if (c->probe_failed_at > 0 && s->last_read < c->probe_failed_at)
				why = xasprintf("no byte from the server for %.0fs and no answer to "
				    "a probe in %gs; the connection is presumed dead", silent,
				    c->probe_timeout);
			else if (s->watched && silent >= c->silence_max)
				why = xasprintf("no byte from the server for %.0fs; the connection "
				    "is presumed dead", silent);
			if (why != NULL)
				break;
			if (silent >= c->probe_after && s->last_read >= c->probe_sent_at)
				quiet = 1;
		}
		if (why == NULL)
			break;
		client_close_dead(c, s, why);
		free(why);
	}
	c->probe_failed_at = 0;
	if (quiet && c->probe == NULL)
		client_probe(c);
}

/* --- the client ----------------------------------------------------------------------- */

struct client *
client_new(struct event_base *base, struct kube_config *config,
    const struct client_options *options, char **error)
{
	static int curl_ready;
	struct client *c;

	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			error_set(error, "cannot initialise libcurl");
			return NULL;
		}
		curl_ready = 1;
	}
	c = xcalloc(1, sizeof *c);
	c->base = base;
	c->config = config;
	c->priority = -1;
	c->qps = options != NULL ? options->qps : 0;
	c->burst = options != NULL && options->burst > 0 ? options->burst : 1;
	c->tokens = c->burst;
	c->refilled_at = time_monotonic();
	c->host = client_url_host(config->server);
	if (options != NULL && options->metrics != NULL)
		client_register_metrics(c, options->metrics);
	TAILQ_INIT(&c->waiting);
	TAILQ_INIT(&c->active);
	c->multi = curl_multi_init();
	c->curl_timer = evtimer_new(base, client_curl_timeout, c);
	c->throttle_timer = evtimer_new(base, client_throttle_expired, c);
	c->kick = event_new(base, -1, 0, client_kick, c);
	c->health = event_new(base, -1, EV_PERSIST, client_health, c);
	c->gate = options != NULL ? options->gate : NULL;
	c->probe_after = CLIENT_PROBE_AFTER_S;
	c->probe_timeout = CLIENT_PROBE_TIMEOUT_S;
	c->silence_max = CLIENT_SILENCE_MAX_S;
	LIST_INIT(&c->sockets);
	if (c->multi == NULL || c->curl_timer == NULL || c->throttle_timer == NULL ||
	    c->kick == NULL || c->health == NULL) {
		error_set(error, "cannot create the HTTP client");
		client_free(c);
		return NULL;
	}
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, client_socket_callback);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, client_timer_callback);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	return c;
}

void
client_free(struct client *c)
{
	struct client_request *r;

	if (c == NULL)
		return;
	while ((r = TAILQ_FIRST(&c->waiting)) != NULL) {
		TAILQ_REMOVE(&c->waiting, r, link);
		client_request_free(r);
	}
	while ((r = TAILQ_FIRST(&c->active)) != NULL) {
		TAILQ_REMOVE(&c->active, r, link);
		if (r->easy != NULL)
			curl_multi_remove_handle(c->multi, r->easy);
		client_request_free(r);
	}
	if (c->multi != NULL)
		curl_multi_cleanup(c->multi);
	while (!LIST_EMPTY(&c->sockets))
		client_socket_free(LIST_FIRST(&c->sockets));
	if (c->health != NULL)
		event_free(c->health);
	if (c->curl_timer != NULL)
		event_free(c->curl_timer);
	if (c->throttle_timer != NULL)
		event_free(c->throttle_timer);
	if (c->kick != NULL)
		event_free(c->kick);
	free(c->host);
	free(c->user_agent);
	if (c->deliver != NULL)
		event_free(c->deliver);
	free(c);
}

void
client_set_dead_peer_timing(struct client *c, double probe_after, double probe_timeout,
    double silence_max)
{
	c->probe_after = probe_after;
	c->probe_timeout = probe_timeout;
	c->silence_max = silence_max;
}

const char *
client_server(const struct client *c)
{
	return c->config != NULL ? c->config->server : "responder";
}

void
client_set_priority(struct client *c, int priority)
{
	c->priority = priority;
	event_priority_set(c->curl_timer, priority);
	event_priority_set(c->throttle_timer, priority);
	event_priority_set(c->kick, priority);
	if (c->health != NULL)
		event_priority_set(c->health, priority);
}

void
client_set_token_source(struct client *c, const struct client_token_source *source)
{
	c->token_source = source;
	free(c->user_agent);
	c->user_agent = source != NULL && source->user_agent_suffix != NULL ?
	    xasprintf("%s/%s", SQLKCM_USER_AGENT, source->user_agent_suffix) : NULL;
}

void
client_token_ready(struct client *c)
{
	if (!TAILQ_EMPTY(&c->waiting))
		event_active(c->kick, EV_TIMEOUT, 0);
}

struct event_base *
client_base(const struct client *c)
{
	return c->base;
}

/* --- answering from a function (tests) ----------------------------------------------- */

/* Hands every answered request to its owner, in the order they started. */
static void
client_deliver(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;
	struct client_request *r;
	struct client_response resp;

	(void)fd;
	(void)what;
	while ((r = TAILQ_FIRST(&c->active)) != NULL) {
		TAILQ_REMOVE(&c->active, r, link);
		resp.http_code = r->reply_code;
		resp.body = r->response.data != NULL ? r->response.data : "";
		resp.len = r->response.len;
		resp.retry_after = r->retry_after;
		resp.transport_error = r->reply_code == 0 ? r->errbuf : NULL;
		if (r->reply_code == 401 && !r->cancelled && c->token_source != NULL &&
		    c->token_source->unauthorized != NULL)
			c->token_source->unauthorized(c->token_source->arg);
		if (r->streaming && r->reply_code / 100 == 2 && resp.len > 0) {
			r->in_write = 1;
			r->on_data(resp.body, resp.len, r->arg);
			r->in_write = 0;
			resp.body = "";
			resp.len = 0;
		}
		if (!r->cancelled && r->on_done != NULL)
			r->on_done(&resp, r->arg);
		client_request_free(r);
	}
}

/* Starts r by asking the responder; the answer goes back from client_deliver. */
static void
client_respond(struct client *c, struct client_request *r)
{
	struct client_reply reply = { 0, NULL, NULL };

	c->responder(r->method, r->url, r->content_type, r->body, r->body_len, &reply,
	    c->responder_arg);
	r->reply_code = reply.http_code;
	if (reply.body != NULL)
		buf_append_str(&r->response, reply.body);
	free(reply.body);
	r->retry_after = reply.retry_after;
	if (reply.http_code == 0)
		snprintf(r->errbuf, sizeof r->errbuf, "the responder sent no response");
	r->started = 1;
	TAILQ_INSERT_TAIL(&c->active, r, link);
	event_active(c->deliver, EV_TIMEOUT, 0);
}

struct client *
client_new_responder(struct event_base *base, client_responder_cb responder, void *arg)
{
	struct client *c = xcalloc(1, sizeof *c);

	c->base = base;
	c->responder = responder;
	c->responder_arg = arg;
	c->burst = 1;
	c->tokens = c->burst;
	c->refilled_at = time_monotonic();
	TAILQ_INIT(&c->waiting);
	TAILQ_INIT(&c->active);
	c->throttle_timer = evtimer_new(base, client_throttle_expired, c);
	c->kick = event_new(base, -1, 0, client_kick, c);
	c->deliver = event_new(base, -1, 0, client_deliver, c);
	return c;
}
