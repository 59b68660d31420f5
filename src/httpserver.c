/*
 * httpserver.c - the daemon's HTTP endpoints on libevent's evhttp.
 *
 * Two listeners at most, both on the daemon's loop and both answering the same endpoints:
 * HTTPS on --secure-port (each connection's bufferevent wraps an OpenSSL session, made by
 * the evhttp bufferevent callback) and plain HTTP on --port. Without --tls-cert-file and
 * --tls-private-key-file, a self-signed certificate for localhost, 127.0.0.1, ::1 and the
 * bind address is made in memory at start (an EC P-256 key, valid a year), as
 * kube-controller-manager does when it has no certificate files; nothing is written to
 * disk.
 *
 * Endpoints (GET and HEAD only: other methods get 405; unknown paths 404):
 *   /healthz, /livez, /readyz  run their checks in order: 200 "ok" when all pass, 500
 *                              listing them ("[+]name ok", "[-]name failed: reason") when
 *                              one fails; ?verbose lists them on success too, ?exclude=NAME
 *                              skips one; /readyz/NAME (and the others' /NAME) runs one.
 *   /metrics                   the registry in Prometheus text format 0.0.4.
 *   /configz                   the JSON object the daemon set.
 *
 * Routing is httpserver_respond, a function of the method and the request target only, so
 * that it is tested without sockets; the evhttp callback is only transport.
 *
 * Who may ask (HTTPS only, when the daemon gives an authorizer, httpauth.c): as
 * kube-controller-manager, the health endpoints are served to anyone and every other
 * request is authenticated and authorized by the apiserver first (401 or 403 when not).
 * Such a request waits, without holding the loop, in the pending list until httpauth
 * answers; if its connection closes meanwhile, the check is cancelled. Plain HTTP
 * (--port, off by default, loopback by default) is not checked, as the insecure port
 * kube-controller-manager once had.
 *
 * Invariants: checks and handlers run on the loop thread, like everything else that reads
 * the store; a request never blocks the loop, so a slow scraper cannot hold it.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/http.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "httpauth.h"
#include "httpserver.h"
#include "log.h"
#include "metrics.h"
#include "util.h"

/* A connection idle this long (reading a request or writing a response) is closed. */
#define HTTPSERVER_TIMEOUT_SECONDS 30
/* Requests carry no body; headers are small. */
#define HTTPSERVER_MAX_HEADERS 16384
#define HTTPSERVER_MAX_BODY 4096
/* The self-signed certificate's lifetime. */
#define HTTPSERVER_CERT_DAYS 365

struct httpserver_check {
	char *name;
	int endpoints;
	httpserver_check_cb check;
	void *arg;
	TAILQ_ENTRY(httpserver_check) link;
};

/* An HTTPS request waiting for httpauth's decision. */
struct httpserver_pending {
	struct httpserver *server;
	struct evhttp_request *req;
	struct evhttp_connection *conn;
	struct httpauth_check *check;
	TAILQ_ENTRY(httpserver_pending) link;
};

struct httpserver {
	struct event_base *base;
	struct evhttp *https;		/* NULL: no HTTPS */
	struct evhttp *http;		/* NULL: no plain HTTP */
	SSL_CTX *ssl;
	struct metrics_registry *metrics;
	struct httpauth *auth;		/* NULL: HTTPS requests are not checked */
	char *configz;
	TAILQ_HEAD(, httpserver_check) checks;
	TAILQ_HEAD(, httpserver_pending) pending;
};

/* The health endpoints, their paths and the word their messages use. */
static const struct {
	int endpoint;
	const char *path;	/* with the leading slash */
	const char *word;	/* "healthz check passed" */
} httpserver_health_paths[] = {
	{ HTTPSERVER_HEALTHZ, "/healthz", "healthz" },
	{ HTTPSERVER_LIVEZ, "/livez", "livez" },
	{ HTTPSERVER_READYZ, "/readyz", "readyz" },
};

static const char httpserver_text[] = "text/plain; charset=utf-8";

/* --- health checks ------------------------------------------------------------------- */

/* The "ping" check: the loop answers, so it passes. */
static int
httpserver_ping(void *arg, char **reason)
{
	(void)arg;
	(void)reason;
	return 0;
}

/* Adds a named check to some of the health endpoints. */
void
httpserver_add_check(struct httpserver *server, int endpoints, const char *name,
    httpserver_check_cb check, void *arg)
{
	struct httpserver_check *c = xcalloc(1, sizeof *c);

	c->name = xstrdup(name);
	c->endpoints = endpoints;
	c->check = check;
	c->arg = arg;
	TAILQ_INSERT_TAIL(&server->checks, c, link);
}

/* Returns whether the query string (NULL: none) has key, with value if that is not NULL.
 * Parts are separated by '&' and decoded ('+' is a space); a part without '=' is a key with
 * an empty value, as in "?verbose". */
static int
httpserver_query_has(const char *query, const char *key, const char *value)
{
	const char *part = query;

	while (part != NULL && *part != '\0') {
		size_t len = strcspn(part, "&");
		char *text = xstrndup(part, len), *eq = strchr(text, '='), *k, *v;
		int found;

		if (eq != NULL)
			*eq = '\0';
		k = evhttp_uridecode(text, 1, NULL);
		v = evhttp_uridecode(eq != NULL ? eq + 1 : "", 1, NULL);
		found = k != NULL && v != NULL && strcmp(k, key) == 0 &&
		    (value == NULL || strcmp(v, value) == 0);
		free(k);
		free(v);
		free(text);
		if (found)
			return 1;
		part += len;
		if (*part == '&')
			part++;
	}
	return 0;
}

/* Runs one check; returns 0 or -1 with *reason (malloc'd) set. */
static int
httpserver_run_check(const struct httpserver_check *c, char **reason)
{
	*reason = NULL;
	if (c->check(c->arg, reason) == 0) {
		free(*reason);
		*reason = NULL;
		return 0;
	}
	if (*reason == NULL)
		*reason = xstrdup("check failed");
	return -1;
}

/* Answers /healthz, /livez or /readyz (which: the index in httpserver_health_paths);
 * name, if not NULL, selects one check. */
static void
httpserver_health(struct httpserver *server, int which, const char *name,
    const char *query, int *status, struct buf *body)
{
	int endpoint = httpserver_health_paths[which].endpoint;
	const char *word = httpserver_health_paths[which].word;
	int verbose = httpserver_query_has(query, "verbose", NULL);
	struct httpserver_check *c;
	struct buf list;
	int failed = 0;
	char *reason;

	if (name != NULL) {
		TAILQ_FOREACH(c, &server->checks, link) {
			if ((c->endpoints & endpoint) && strcmp(c->name, name) == 0)
				break;
		}
		if (c == NULL) {
			*status = 404;
			buf_printf(body, "no check \"%s\" in %s\n", name, word);
			return;
		}
		if (httpserver_run_check(c, &reason) == 0) {
			*status = 200;
			buf_append_str(body, "ok");
		} else {
			*status = 500;
			buf_printf(body, "internal server error: %s\n", reason);
		}
		free(reason);
		return;
	}

	buf_init(&list);
	TAILQ_FOREACH(c, &server->checks, link) {
		if (!(c->endpoints & endpoint))
			continue;
		if (httpserver_query_has(query, "exclude", c->name)) {
			buf_printf(&list, "[+]%s excluded: ok\n", c->name);
			continue;
		}
		if (httpserver_run_check(c, &reason) == 0) {
			buf_printf(&list, "[+]%s ok\n", c->name);
		} else {
			buf_printf(&list, "[-]%s failed: %s\n", c->name, reason);
			log_v(2, "http: %s check %s failed: %s", word, c->name, reason);
			failed = 1;
		}
		free(reason);
	}
	if (failed) {
		*status = 500;
		buf_printf(body, "%s%s check failed\n", list.data, word);
	} else if (verbose) {
		*status = 200;
		buf_printf(body, "%s%s check passed\n", list.data, word);
	} else {
		*status = 200;
		buf_append_str(body, "ok");
	}
	buf_free(&list);
}

/* --- routing ------------------------------------------------------------------------- */

/* Answers a request from its method and target alone. */
void
httpserver_respond(struct httpserver *server, const char *method, const char *target,
    int *status, const char **content_type, struct buf *body)
{
	struct evhttp_uri *uri = evhttp_uri_parse_with_flags(target, EVHTTP_URI_NONCONFORMANT);
	const char *path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	const char *query = uri != NULL ? evhttp_uri_get_query(uri) : NULL;
	int health = -1;
	const char *check_name = NULL;
	int known;

	*content_type = httpserver_text;
	if (path == NULL || *path == '\0')
		path = "/";
	for (size_t i = 0; i < sizeof httpserver_health_paths / sizeof httpserver_health_paths[0];
	    i++) {
		size_t len = strlen(httpserver_health_paths[i].path);

		if (strncmp(path, httpserver_health_paths[i].path, len) != 0)
			continue;
		if (path[len] == '\0') {
			health = (int)i;
		} else if (path[len] == '/' && path[len + 1] != '\0' &&
		    strchr(path + len + 1, '/') == NULL) {
			health = (int)i;
			check_name = path + len + 1;
		}
	}
	known = health >= 0 || strcmp(path, "/metrics") == 0 || strcmp(path, "/configz") == 0;
	if (!known) {
		*status = 404;
		buf_append_str(body, "404 page not found\n");
		goto out;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		*status = 405;
		buf_printf(body, "method %s not allowed: use GET or HEAD\n", method);
		goto out;
	}
	if (health >= 0) {
		httpserver_health(server, health, check_name, query, status, body);
	} else if (strcmp(path, "/metrics") == 0) {
		*status = 200;
		*content_type = "text/plain; version=0.0.4; charset=utf-8";
		if (server->metrics != NULL)
			metrics_render(server->metrics, body);
	} else {
		*status = 200;
		*content_type = "application/json";
		buf_append_str(body, server->configz != NULL ? server->configz : "{}");
		buf_append_str(body, "\n");
	}
out:
	if (uri != NULL)
		evhttp_uri_free(uri);
}

/* --- transport ----------------------------------------------------------------------- */

/* Names an evhttp method. */
static const char *
httpserver_method_name(enum evhttp_cmd_type cmd)
{
	switch (cmd) {
	case EVHTTP_REQ_GET: return "GET";
	case EVHTTP_REQ_POST: return "POST";
	case EVHTTP_REQ_HEAD: return "HEAD";
	case EVHTTP_REQ_PUT: return "PUT";
	case EVHTTP_REQ_DELETE: return "DELETE";
	case EVHTTP_REQ_OPTIONS: return "OPTIONS";
	case EVHTTP_REQ_TRACE: return "TRACE";
	case EVHTTP_REQ_CONNECT: return "CONNECT";
	case EVHTTP_REQ_PATCH: return "PATCH";
	}
	return "UNKNOWN";
}

/* The reason phrase of the statuses httpserver_respond gives. */
static const char *
httpserver_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	}
	return "Internal Server Error";
}

/* Sends a response: status, content type and body (none for HEAD, which gets the
 * length the GET would have). */
static void
httpserver_send(struct evhttp_request *req, int status, const char *content_type,
    const struct buf *body)
{
	struct evkeyvalq *headers = evhttp_request_get_output_headers(req);
	struct evbuffer *out;
	char length[32];

	evhttp_add_header(headers, "Content-Type", content_type);
	evhttp_add_header(headers, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(headers, "Cache-Control", "no-store");
	if (status == 405)
		evhttp_add_header(headers, "Allow", "GET, HEAD");
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
		snprintf(length, sizeof length, "%zu", body->len);
		evhttp_add_header(headers, "Content-Length", length);
		evhttp_send_reply(req, status, httpserver_reason(status), NULL);
	} else {
		out = evbuffer_new();
		evbuffer_add(out, body->data != NULL ? body->data : "", body->len);
		evhttp_send_reply(req, status, httpserver_reason(status), out);
		evbuffer_free(out);
	}
}

/* Answers a request that may be served. */
static void
httpserver_answer(struct httpserver *server, struct evhttp_request *req)
{
	const char *method = httpserver_method_name(evhttp_request_get_command(req));
	const char *content_type;
	struct buf body;
	int status;

	buf_init(&body);
	httpserver_respond(server, method, evhttp_request_get_uri(req), &status, &content_type,
	    &body);
	log_v(5, "http: %s %s status=%d bytes=%zu", method, evhttp_request_get_uri(req), status,
	    body.len);
	httpserver_send(req, status, content_type, &body);
	buf_free(&body);
}

/* Forgets a pending request: its connection no longer tells us it closed. */
static void
httpserver_pending_free(struct httpserver_pending *p)
{
	evhttp_connection_set_closecb(p->conn, NULL, NULL);
	TAILQ_REMOVE(&p->server->pending, p, link);
	free(p);
}

/* httpauth decided on a pending request: answer it, or refuse it. */
static void
httpserver_authorized(enum httpauth_decision decision, const char *message, void *arg)
{
	struct httpserver_pending *p = arg;
	struct httpserver *server = p->server;
	struct evhttp_request *req = p->req;
	struct buf body;
	int status;

	httpserver_pending_free(p);
	if (decision == HTTPAUTH_ALLOWED) {
		httpserver_answer(server, req);
		return;
	}
	status = decision == HTTPAUTH_UNAUTHORIZED ? 401 : decision == HTTPAUTH_FORBIDDEN ?
	    403 : 500;
	buf_init(&body);
	buf_printf(&body, "%s\n", message != NULL ? message : httpserver_reason(status));
	log_v(4, "http: %s %s status=%d", httpserver_method_name(evhttp_request_get_command(req)),
	    evhttp_request_get_uri(req), status);
	httpserver_send(req, status, httpserver_text, &body);
	buf_free(&body);
}

/* A pending request's connection closed before httpauth decided: drop the check. */
static void
httpserver_pending_closed(struct evhttp_connection *conn, void *arg)
{
	struct httpserver_pending *p = arg;

	(void)conn;
	httpauth_cancel(p->check);
	httpserver_pending_free(p);
}

/* evhttp hands over a plain HTTP request: answer it at once. */
static void
httpserver_request(struct evhttp_request *req, void *arg)
{
	httpserver_answer(arg, req);
}

/* evhttp hands over an HTTPS request: answer it, once httpauth allows it if the path is
 * not served to anyone. */
static void
httpserver_request_tls(struct evhttp_request *req, void *arg)
{
	struct httpserver *server = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	struct httpserver_pending *p;

	if (path == NULL || *path == '\0')
		path = "/";
	if (server->auth == NULL || httpauth_always_allowed(server->auth, path)) {
		httpserver_answer(server, req);
		return;
	}
	p = xcalloc(1, sizeof *p);
	p->server = server;
	p->req = req;
	p->conn = evhttp_request_get_connection(req);
	TAILQ_INSERT_TAIL(&server->pending, p, link);
	evhttp_connection_set_closecb(p->conn, httpserver_pending_closed, p);
	p->check = httpauth_check(server->auth,
	    evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization"),
	    httpserver_method_name(evhttp_request_get_command(req)), path,
	    httpserver_authorized, p);
}

/* Makes each HTTPS connection's bufferevent: the socket under a new TLS session. */
static struct bufferevent *
httpserver_tls_bufferevent(struct event_base *base, void *arg)
{
	struct httpserver *server = arg;
	SSL *ssl = SSL_new(server->ssl);
	struct bufferevent *bev;

	if (ssl == NULL)
		return NULL;
	bev = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING,
	    BEV_OPT_CLOSE_ON_FREE);
	if (bev != NULL)
		bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	else
		SSL_free(ssl);
	return bev;
}

/* Opens a listening socket on address:port; -1 with *error naming them. */
static int
httpserver_listen(const char *address, int port, const char *what, char **error)
{
	struct addrinfo hints, *ai = NULL;
	char service[16];
	int fd = -1, one = 1, rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
	snprintf(service, sizeof service, "%d", port);
	rc = getaddrinfo(address, service, &hints, &ai);
	if (rc != 0)
		return error_set(error, "cannot listen for %s on %s port %d: %s", what, address,
		    port, gai_strerror(rc));
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    ai->ai_protocol);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
	    listen(fd, 128) != 0) {
		int saved = errno;

		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return error_set(error, "cannot listen for %s on %s port %d: %s", what, address,
		    port, strerror(saved));
	}
	freeaddrinfo(ai);
	return fd;
}

/* Creates an evhttp on base serving the endpoints on a socket bound to address:port. */
static struct evhttp *
httpserver_start_listener(struct httpserver *server, const char *address, int port,
    int tls, char **error)
{
	struct evhttp *http;
	int fd;

	fd = httpserver_listen(address, port, tls ? "HTTPS" : "HTTP", error);
	if (fd < 0)
		return NULL;
	http = evhttp_new(server->base);
	if (http == NULL || evhttp_accept_socket(http, fd) != 0) {
		close(fd);
		if (http != NULL)
			evhttp_free(http);
		error_set(error, "cannot serve %s on %s port %d", tls ? "HTTPS" : "HTTP",
		    address, port);
		return NULL;
	}
	evhttp_set_timeout(http, HTTPSERVER_TIMEOUT_SECONDS);
	evhttp_set_max_headers_size(http, HTTPSERVER_MAX_HEADERS);
	evhttp_set_max_body_size(http, HTTPSERVER_MAX_BODY);
	/* Every method reaches httpserver_respond, which answers 405 itself. */
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
	    EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(http, tls ? httpserver_request_tls : httpserver_request, server);
	if (tls)
		evhttp_set_bevcb(http, httpserver_tls_bufferevent, server);
	log_info("serving %s address=%s port=%d endpoints=/healthz,/livez,/readyz,/metrics,"
	    "/configz", tls ? "HTTPS" : "HTTP", address, port);
	return http;
}

/* --- TLS ----------------------------------------------------------------------------- */

/* Appends OpenSSL's queued errors to what, for a message; clears the queue. */
static int
httpserver_tls_error(char **error, const char *what)
{
	unsigned long e = ERR_get_error();
	char text[256];

	if (e == 0)
		return error_set(error, "%s", what);
	ERR_error_string_n(e, text, sizeof text);
	ERR_clear_error();
	return error_set(error, "%s: %s", what, text);
}

/* Returns whether address is one of every interface ("0.0.0.0", "::"). */
static int
httpserver_address_is_any(const char *address)
{
	return strcmp(address, "0.0.0.0") == 0 || strcmp(address, "::") == 0;
}

/* Makes a self-signed certificate and its key for the HTTPS listener, in memory. */
static int
httpserver_self_signed(SSL_CTX *ctx, const char *address, char **error)
{
	EVP_PKEY *key = NULL;
	X509 *cert = NULL;
	X509_NAME *name;
	X509_EXTENSION *ext;
	X509V3_CTX v3;
	unsigned char serial_bytes[16];
	BIGNUM *serial = NULL;
	char *cn = NULL, *san = NULL;
	int rc = -1;

	key = EVP_EC_gen("P-256");
	cert = X509_new();
	if (key == NULL || cert == NULL ||
	    RAND_bytes(serial_bytes, sizeof serial_bytes) != 1) {
		httpserver_tls_error(error, "cannot make a key for the self-signed certificate");
		goto out;
	}
	serial_bytes[0] &= 0x7f;	/* a positive serial number */
	serial = BN_bin2bn(serial_bytes, sizeof serial_bytes, NULL);
	cn = xasprintf("localhost@%lld", (long long)time(NULL));
	if (httpserver_address_is_any(address) || strcmp(address, "127.0.0.1") == 0 ||
	    strcmp(address, "::1") == 0)
		san = xstrdup("DNS:localhost,IP:127.0.0.1,IP:::1");
	else
		san = xasprintf("DNS:localhost,IP:127.0.0.1,IP:::1,IP:%s", address);
	X509V3_set_ctx(&v3, cert, cert, NULL, NULL, 0);
	if (serial == NULL || X509_set_version(cert, 2) != 1 ||
	    BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert)) == NULL ||
	    X509_gmtime_adj(X509_getm_notBefore(cert), -3600) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(cert),
	    (long)HTTPSERVER_CERT_DAYS * 24 * 3600) == NULL ||
	    X509_set_pubkey(cert, key) != 1 ||
	    (name = X509_get_subject_name(cert)) == NULL ||
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1,
	    -1, 0) != 1 ||
	    X509_set_issuer_name(cert, name) != 1) {
		httpserver_tls_error(error, "cannot make the self-signed certificate");
		goto out;
	}
	{
		static const struct {
			int nid;
			const char *value;
		} extensions[] = {
			{ NID_basic_constraints, "critical,CA:FALSE" },
			{ NID_key_usage, "critical,digitalSignature" },
			{ NID_ext_key_usage, "serverAuth" },
			{ NID_subject_alt_name, NULL },
		};

		for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++) {
			ext = X509V3_EXT_nconf_nid(NULL, &v3, extensions[i].nid,
			    extensions[i].value != NULL ? extensions[i].value : san);
			if (ext == NULL || X509_add_ext(cert, ext, -1) != 1) {
				X509_EXTENSION_free(ext);
				httpserver_tls_error(error, "cannot make the self-signed certificate");
				goto out;
			}
			X509_EXTENSION_free(ext);
		}
	}
	if (X509_sign(cert, key, EVP_sha256()) == 0 ||
	    SSL_CTX_use_certificate(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, key) != 1) {
		httpserver_tls_error(error, "cannot sign or use the self-signed certificate");
		goto out;
	}
	log_info("HTTPS uses a self-signed certificate made at start subject=CN=%s san=%s "
	    "(give --tls-cert-file and --tls-private-key-file to use your own)", cn, san);
	rc = 0;
out:
	BN_free(serial);
	X509_free(cert);
	EVP_PKEY_free(key);
	free(cn);
	free(san);
	return rc;
}

/* Creates the TLS context: the files' certificate and key, or a self-signed one. */
static SSL_CTX *
httpserver_tls_context(const struct httpserver_options *options, const char *address,
    char **error)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (ctx == NULL) {
		httpserver_tls_error(error, "cannot create a TLS context");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	if (options->tls_cert_file != NULL) {
		if (SSL_CTX_use_certificate_chain_file(ctx, options->tls_cert_file) != 1) {
			char *what = xasprintf("cannot load --tls-cert-file %s",
			    options->tls_cert_file);
			httpserver_tls_error(error, what);
			free(what);
			goto fail;
		}
		if (SSL_CTX_use_PrivateKey_file(ctx, options->tls_key_file, SSL_FILETYPE_PEM) != 1) {
			char *what = xasprintf("cannot load --tls-private-key-file %s",
			    options->tls_key_file);
			httpserver_tls_error(error, what);
			free(what);
			goto fail;
		}
		if (SSL_CTX_check_private_key(ctx) != 1) {
			httpserver_tls_error(error, "--tls-private-key-file does not match "
			    "--tls-cert-file");
			goto fail;
		}
		log_info("HTTPS uses the certificate in %s", options->tls_cert_file);
	} else if (httpserver_self_signed(ctx, address, error) != 0) {
		goto fail;
	}
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

/* --- the server ---------------------------------------------------------------------- */

/* Creates the server and starts its listeners. */
struct httpserver *
httpserver_new(struct event_base *base, const struct httpserver_options *options,
    char **error)
{
	struct httpserver *server = xcalloc(1, sizeof *server);
	const char *address = options->bind_address != NULL ? options->bind_address :
	    "127.0.0.1";

	server->base = base;
	server->metrics = options->metrics;
	server->auth = options->auth;
	TAILQ_INIT(&server->checks);
	TAILQ_INIT(&server->pending);
	httpserver_add_check(server, HTTPSERVER_HEALTHZ | HTTPSERVER_LIVEZ | HTTPSERVER_READYZ,
	    "ping", httpserver_ping, NULL);
	if ((options->tls_cert_file == NULL) != (options->tls_key_file == NULL)) {
		error_set(error, "--tls-cert-file and --tls-private-key-file go together");
		goto fail;
	}
	if (options->secure_port > 0) {
		server->ssl = httpserver_tls_context(options, address, error);
		if (server->ssl == NULL)
			goto fail;
		server->https = httpserver_start_listener(server, address, options->secure_port,
		    1, error);
		if (server->https == NULL)
			goto fail;
	}
	if (options->port > 0) {
		server->http = httpserver_start_listener(server, address, options->port, 0,
		    error);
		if (server->http == NULL)
			goto fail;
	}
	return server;
fail:
	httpserver_free(server);
	return NULL;
}

/* Closes the listeners and their connections, and frees the server. */
void
httpserver_free(struct httpserver *server)
{
	struct httpserver_check *c;
	struct httpserver_pending *p;

	if (server == NULL)
		return;
	/* Requests still waiting for httpauth go unanswered with their connections. */
	while ((p = TAILQ_FIRST(&server->pending)) != NULL) {
		httpauth_cancel(p->check);
		httpserver_pending_free(p);
	}
	if (server->https != NULL)
		evhttp_free(server->https);
	if (server->http != NULL)
		evhttp_free(server->http);
	if (server->ssl != NULL)
		SSL_CTX_free(server->ssl);
	while ((c = TAILQ_FIRST(&server->checks)) != NULL) {
		TAILQ_REMOVE(&server->checks, c, link);
		free(c->name);
		free(c);
	}
	free(server->configz);
	free(server);
}

/* Replaces what /configz serves. */
void
httpserver_set_configz(struct httpserver *server, const char *json)
{
	free(server->configz);
	server->configz = json != NULL ? xstrdup(json) : NULL;
}
