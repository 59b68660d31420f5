/*
 * fuzz_httpserver.c - the HTTP endpoints' answer to arbitrary requests.
 *
 * The input is a method, a space, and a request target (path and query, as a client may
 * send anything there), given to httpserver_respond with a check that passes, one that
 * fails with a reason, a metrics registry with one series and a /configz document. Every
 * answer must be one of the statuses the endpoints give (200, 404, 405, 500) with a
 * content type, and a body that is text: never empty, no NUL. A path that is not one of
 * the endpoints (or a check under one) must be 404; a method other than GET and HEAD on a
 * known path must be 405. Any broken invariant aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "httpserver.h"
#include "metrics.h"
#include "util.h"

static struct event_base *base;
static struct httpserver *server;
static struct metrics_registry *registry;

/* Aborts with a message: an invariant does not hold. */
static void
broken(const char *what, const char *method, const char *target, int status)
{
	fprintf(stderr, "fuzz_httpserver: %s: method=\"%s\" target=\"%s\" status=%d\n", what,
	    method, target, status);
	abort();
}

static int
passes(void *arg, char **reason)
{
	(void)arg;
	(void)reason;
	return 0;
}

static int
fails(void *arg, char **reason)
{
	(void)arg;
	*reason = xstrdup("the fuzzer says no");
	return -1;
}

/* Sets up the server once: no listener, only the answering code. */
static void
setup(void)
{
	static const char *const labels[] = { "name", NULL };
	static const struct metrics_spec spec = { METRICS_COUNTER, "fuzz_total",
	    "Counted by the fuzzer.", labels, NULL, 0 };
	struct httpserver_options options;
	const char *values[] = { "a\"b\\c\nd", NULL };
	char *error = NULL;

	memset(&options, 0, sizeof options);
	base = event_base_new();
	registry = metrics_registry_new();
	metrics_counter_add(metrics_series_get(metrics_family_register(registry, &spec,
	    &error), values), 1);
	options.metrics = registry;
	server = httpserver_new(base, &options, &error);
	if (server == NULL) {
		fprintf(stderr, "fuzz_httpserver: %s\n", error);
		abort();
	}
	httpserver_add_check(server, HTTPSERVER_READYZ, "good", passes, NULL);
	httpserver_add_check(server, HTTPSERVER_READYZ | HTTPSERVER_HEALTHZ, "bad", fails, NULL);
	httpserver_set_configz(server, "{\"flags\":{}}");
}

/* The path part of target, as the server reads it (up to '?' or '#'). */
static int
known_path(const char *target)
{
	static const char *const exact[] = { "/metrics", "/configz", "/healthz", "/livez",
	    "/readyz" };
	size_t len = strcspn(target, "?#");

	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
		size_t n = strlen(exact[i]);

		if (len == n && strncmp(target, exact[i], n) == 0)
			return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *input, *method, *target, *space;
	const char *content_type = NULL;
	struct buf body;
	int status = 0;

	if (server == NULL)
		setup();
	input = xmalloc(size + 1);
	memcpy(input, data, size);
	input[size] = '\0';
	if (strlen(input) != size || (space = strchr(input, ' ')) == NULL) {
		free(input);
		return 0;
	}
	*space = '\0';
	method = input;
	target = space + 1;
	buf_init(&body);
	httpserver_respond(server, method, target, &status, &content_type, &body);
	if (status != 200 && status != 404 && status != 405 && status != 500)
		broken("a status the endpoints never give", method, target, status);
	if (content_type == NULL || *content_type == '\0')
		broken("no content type", method, target, status);
	if (body.len == 0 || strlen(body.data) != body.len)
		broken("an empty body, or one with a NUL", method, target, status);
	if (known_path(target) && strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0 &&
	    status != 405)
		broken("a known path with another method is not 405", method, target, status);
	if (known_path(target) && (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) &&
	    status == 404)
		broken("a known path is 404", method, target, status);
	buf_free(&body);
	free(input);
	return 0;
}
