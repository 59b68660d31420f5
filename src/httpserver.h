/*
 * httpserver.h - the daemon's HTTP endpoints: /healthz, /livez, /readyz, /metrics and
 * /configz, over HTTPS and/or plain HTTP on the daemon's libevent loop.
 */
#ifndef SQLKCM_HTTPSERVER_H
#define SQLKCM_HTTPSERVER_H

#include <event2/event.h>

#include "util.h"

struct httpauth;
struct metrics_registry;
struct httpserver;

struct httpserver_options {
	const char *bind_address;	/* an IPv4 or IPv6 address; NULL: 127.0.0.1 */
	int secure_port;		/* HTTPS; 0: none */
	int port;			/* plain HTTP; 0: none */
	const char *tls_cert_file;	/* PEM chain and key for HTTPS; NULL: a self-signed */
	const char *tls_key_file;	/*   certificate made in memory at start */
	struct metrics_registry *metrics;	/* what /metrics renders; NULL: an empty page */
	/* Who may ask over HTTPS (borrowed, freed after the server); NULL: anyone. */
	struct httpauth *auth;
};

/* The endpoints a health check belongs to (or them together). */
#define HTTPSERVER_HEALTHZ 0x1
#define HTTPSERVER_LIVEZ 0x2
#define HTTPSERVER_READYZ 0x4

/* A health check: returns 0 when healthy; otherwise -1, with *reason (malloc'd, or left
 * NULL) saying why. It runs on the loop thread for each request that asks for it, so it
 * must be quick and never block. */
typedef int (*httpserver_check_cb)(void *arg, char **reason);

/* Creates the server on base and listens on the ports options name (none is fine). A port
 * that cannot be bound, or a certificate that cannot be loaded, fails with *error naming
 * it. Every endpoint answers a check "ping" that always passes. */
struct httpserver *httpserver_new(struct event_base *base,
    const struct httpserver_options *options, char **error);
void httpserver_free(struct httpserver *server);

/* Adds a named check to the endpoints (HTTPSERVER_* or'ed); checks run, and are listed by
 * ?verbose, in the order they were added. name is copied, arg borrowed. */
void httpserver_add_check(struct httpserver *server, int endpoints, const char *name,
    httpserver_check_cb check, void *arg);

/* Sets what /configz serves: a JSON object (copied). It must hold no secret. */
void httpserver_set_configz(struct httpserver *server, const char *json);

/* Answers one request, whatever the transport: method ("GET", ...) and target (the path
 * and query as sent) give *status, *content_type (static) and the body appended to body.
 * The listeners call it; tests call it directly. */
void httpserver_respond(struct httpserver *server, const char *method, const char *target,
    int *status, const char **content_type, struct buf *body);

#endif
