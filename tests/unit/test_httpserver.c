/*
 * test_httpserver.c - the daemon's HTTP endpoints, answered without a socket.
 *
 * httpserver_respond is the whole routing: each case is a method and a request target with
 * the status, content type and body expected, over a server whose checks the test sets.
 * The health output follows kube's healthz handlers: "ok" alone when every check passes,
 * "[+]name ok" / "[-]name failed: reason" lines and a closing "<endpoint> check
 * passed|failed" line with ?verbose or on failure. Start-up failures (a port in use, a
 * certificate file missing) are checked on loopback; serving over sockets is the end-to-end
 * test's (tests/e2e/metrics.t).
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "httpserver.h"
#include "metrics.h"
#include "util.h"

/* A check whose outcome the test sets: reason NULL passes. */
struct fake_check {
	const char *reason;
	int calls;
};

static int
fake_check_run(void *arg, char **reason)
{
	struct fake_check *c = arg;

	c->calls++;
	if (c->reason == NULL)
		return 0;
	*reason = xstrdup(c->reason);
	return -1;
}

/* A check that fails without saying why. */
static int
silent_failure(void *arg, char **reason)
{
	(void)arg;
	(void)reason;
	return -1;
}

struct fixture {
	struct event_base *base;
	struct httpserver *server;
	struct metrics_registry *metrics;
	struct fake_check synced;
	struct fake_check stopping;
};

static int
setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof *f);
	struct httpserver_options options = { NULL, 0, 0, NULL, NULL, NULL, NULL };
	char *error = NULL;

	f->base = event_base_new();
	f->metrics = metrics_registry_new();
	options.metrics = f->metrics;
	f->server = httpserver_new(f->base, &options, &error);
	assert_null(error);
	assert_non_null(f->server);
	httpserver_add_check(f->server, HTTPSERVER_READYZ, "informer-sync", fake_check_run,
	    &f->synced);
	httpserver_add_check(f->server, HTTPSERVER_READYZ, "shutdown", fake_check_run,
	    &f->stopping);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	httpserver_free(f->server);
	metrics_registry_free(f->metrics);
	event_base_free(f->base);
	free(f);
	return 0;
}

/* Asserts the response to method target. */
static void
assert_response(struct fixture *f, const char *method, const char *target, int status,
    const char *content_type, const char *body)
{
	struct buf out;
	const char *type = NULL;
	int got = 0;

	buf_init(&out);
	httpserver_respond(f->server, method, target, &got, &type, &out);
	if (got != status || strcmp(type, content_type) != 0 ||
	    strcmp(out.data != NULL ? out.data : "", body) != 0)
		fail_msg("%s %s: got %d (%s) \"%s\", want %d (%s) \"%s\"", method, target, got,
		    type, out.data != NULL ? out.data : "", status, content_type, body);
	buf_free(&out);
}

static const char text[] = "text/plain; charset=utf-8";

static void
every_health_endpoint_says_ok_when_its_checks_pass(void **state)
{
	struct fixture *f = *state;

	assert_response(f, "GET", "/healthz", 200, text, "ok");
	assert_response(f, "GET", "/livez", 200, text, "ok");
	assert_response(f, "GET", "/readyz", 200, text, "ok");
	assert_response(f, "HEAD", "/readyz", 200, text, "ok");
	assert_int_equal(f->synced.calls, 2);
}

static void
verbose_lists_the_checks_of_the_endpoint(void **state)
{
	struct fixture *f = *state;

	assert_response(f, "GET", "/healthz?verbose", 200, text,
	    "[+]ping ok\nhealthz check passed\n");
	assert_response(f, "GET", "/livez?verbose=1", 200, text,
	    "[+]ping ok\nlivez check passed\n");
	assert_response(f, "GET", "/readyz?verbose", 200, text,
	    "[+]ping ok\n[+]informer-sync ok\n[+]shutdown ok\nreadyz check passed\n");
}

static void
a_failing_check_fails_only_its_endpoint_with_its_reason(void **state)
{
	struct fixture *f = *state;

	f->synced.reason = "caches not synced: pods,replicasets";
	assert_response(f, "GET", "/readyz", 500, text,
	    "[+]ping ok\n[-]informer-sync failed: caches not synced: pods,replicasets\n"
	    "[+]shutdown ok\nreadyz check failed\n");
	assert_response(f, "GET", "/healthz", 200, text, "ok");
	assert_response(f, "GET", "/livez", 200, text, "ok");
	/* Once the caches are synced, ready again. */
	f->synced.reason = NULL;
	assert_response(f, "GET", "/readyz", 200, text, "ok");
}

static void
a_check_that_gives_no_reason_still_fails(void **state)
{
	struct fixture *f = *state;

	httpserver_add_check(f->server, HTTPSERVER_HEALTHZ | HTTPSERVER_LIVEZ, "loop",
	    silent_failure, NULL);
	assert_response(f, "GET", "/livez", 500, text,
	    "[+]ping ok\n[-]loop failed: check failed\nlivez check failed\n");
	assert_response(f, "GET", "/readyz", 200, text, "ok");
}

static void
exclude_skips_a_check(void **state)
{
	struct fixture *f = *state;

	f->stopping.reason = "the daemon is stopping";
	assert_response(f, "GET", "/readyz?exclude=shutdown", 200, text, "ok");
	assert_response(f, "GET", "/readyz?verbose&exclude=shutdown", 200, text,
	    "[+]ping ok\n[+]informer-sync ok\n[+]shutdown excluded: ok\n"
	    "readyz check passed\n");
	assert_int_equal(f->stopping.calls, 0);
	assert_response(f, "GET", "/readyz?exclude=informer-sync", 500, text,
	    "[+]ping ok\n[+]informer-sync excluded: ok\n[-]shutdown failed: the daemon is "
	    "stopping\nreadyz check failed\n");
}

static void
one_check_can_be_asked_for_by_path(void **state)
{
	struct fixture *f = *state;

	assert_response(f, "GET", "/readyz/informer-sync", 200, text, "ok");
	f->synced.reason = "caches not synced: pods";
	assert_response(f, "GET", "/readyz/informer-sync", 500, text,
	    "internal server error: caches not synced: pods\n");
	assert_response(f, "GET", "/readyz/ping", 200, text, "ok");
	assert_response(f, "GET", "/healthz/ping", 200, text, "ok");
	/* Checks belong to their endpoints. */
	assert_response(f, "GET", "/healthz/informer-sync", 404, text,
	    "no check \"informer-sync\" in healthz\n");
	assert_response(f, "GET", "/readyz/nope", 404, text, "no check \"nope\" in readyz\n");
}

/* The readiness the leader election hook gives, as a table: a synced leader and a standby
 * are ready; a process that lost its lease is not, whatever its caches. */
struct leader_state {
	int leading;
	int lost;
};

static int
leader_check(void *arg, char **reason)
{
	const struct leader_state *st = arg;

	if (st->lost) {
		*reason = xstrdup("the lease was lost");
		return -1;
	}
	return 0;
}

static void
a_leader_election_check_is_one_line(void **state)
{
	struct fixture *f = *state;
	static const struct {
		int leading, lost, synced;
		int status;
	} cases[] = {
		{ 1, 0, 1, 200 },	/* a synced leader */
		{ 0, 0, 1, 200 },	/* a standby (its sync check passes while it waits) */
		{ 1, 0, 0, 500 },	/* a leader still syncing */
		{ 0, 1, 1, 500 },	/* lease lost */
	};
	struct leader_state st = { 0, 0 };

	httpserver_add_check(f->server, HTTPSERVER_HEALTHZ | HTTPSERVER_READYZ,
	    "leader-election", leader_check, &st);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct buf out;
		const char *type;
		int status;

		st.leading = cases[i].leading;
		st.lost = cases[i].lost;
		f->synced.reason = cases[i].synced ? NULL : "caches not synced: pods";
		buf_init(&out);
		httpserver_respond(f->server, "GET", "/readyz", &status, &type, &out);
		if (status != cases[i].status)
			fail_msg("case %zu: status %d, want %d: %s", i, status, cases[i].status,
			    out.data);
		buf_free(&out);
	}
	assert_response(f, "GET", "/healthz?verbose", 500, text,
	    "[+]ping ok\n[-]leader-election failed: the lease was lost\n"
	    "healthz check failed\n");
}

static void
metrics_renders_the_registry(void **state)
{
	struct fixture *f = *state;
	static const struct metrics_spec spec = { METRICS_COUNTER, "things_total", "Things.",
	    NULL, NULL, 0 };
	struct metrics_family *family = metrics_family_register(f->metrics, &spec, NULL);
	static const char prometheus[] = "text/plain; version=0.0.4; charset=utf-8";

	assert_response(f, "GET", "/metrics", 200, prometheus, "");
	metrics_counter_add(metrics_series_get(family, NULL), 3);
	assert_response(f, "GET", "/metrics", 200, prometheus,
	    "# HELP things_total Things.\n# TYPE things_total counter\nthings_total 3\n");
	assert_response(f, "GET", "/metrics?name[]=x", 200, prometheus,
	    "# HELP things_total Things.\n# TYPE things_total counter\nthings_total 3\n");
}

static void
configz_serves_the_configuration_it_was_given(void **state)
{
	struct fixture *f = *state;

	assert_response(f, "GET", "/configz", 200, "application/json", "{}\n");
	httpserver_set_configz(f->server, "{\"flags\":{\"secure-port\":10257}}");
	assert_response(f, "GET", "/configz", 200, "application/json",
	    "{\"flags\":{\"secure-port\":10257}}\n");
}

static void
unknown_paths_are_404_and_other_methods_405(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *method, *target;
		int status;
	} cases[] = {
		{ "GET", "/", 404 },
		{ "GET", "/healthzz", 404 },
		{ "GET", "/metrics/", 404 },
		{ "GET", "/configz/x", 404 },
		{ "GET", "/readyz/a/b", 404 },
		{ "GET", "/debug/pprof", 404 },
		{ "POST", "/nope", 404 },
		{ "POST", "/healthz", 405 },
		{ "PUT", "/metrics", 405 },
		{ "DELETE", "/configz", 405 },
		{ "OPTIONS", "/readyz", 405 },
		{ "PATCH", "/livez", 405 },
		{ "HEAD", "/metrics", 200 },
		{ "HEAD", "/configz", 200 },
		{ "GET", "/metrics?a=%zz&b", 200 },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct buf out;
		const char *type;
		int status;

		buf_init(&out);
		httpserver_respond(f->server, cases[i].method, cases[i].target, &status, &type,
		    &out);
		if (status != cases[i].status)
			fail_msg("%s %s: status %d, want %d", cases[i].method, cases[i].target,
			    status, cases[i].status);
		buf_free(&out);
	}
	assert_response(f, "POST", "/healthz", 405, text,
	    "method POST not allowed: use GET or HEAD\n");
	assert_response(f, "GET", "/nope", 404, text, "404 page not found\n");
}

/* Returns a loopback port a socket of the test holds, listening; *fd gets the socket. */
static int
hold_a_port(int *fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(*fd >= 0);
	assert_int_equal(bind(*fd, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(listen(*fd, 1), 0);
	assert_int_equal(getsockname(*fd, (struct sockaddr *)&sin, &len), 0);
	return ntohs(sin.sin_port);
}

static void
a_port_in_use_fails_naming_address_and_port(void **state)
{
	struct fixture *f = *state;
	struct httpserver_options options = { "127.0.0.1", 0, 0, NULL, NULL, NULL, NULL };
	char *error = NULL, *want;
	int fd, port = hold_a_port(&fd);

	for (int tls = 0; tls <= 1; tls++) {
		options.secure_port = tls ? port : 0;
		options.port = tls ? 0 : port;
		assert_null(httpserver_new(f->base, &options, &error));
		want = xasprintf("cannot listen for %s on 127.0.0.1 port %d: Address already in "
		    "use", tls ? "HTTPS" : "HTTP", port);
		assert_string_equal(error, want);
		free(want);
		free(error);
		error = NULL;
	}
	close(fd);
}

static void
certificate_files_that_cannot_be_loaded_fail(void **state)
{
	struct fixture *f = *state;
	struct httpserver_options options = { "127.0.0.1", 1, 0, "/nonexistent/cert.pem",
	    "/nonexistent/key.pem", NULL, NULL };
	char *error = NULL;

	assert_null(httpserver_new(f->base, &options, &error));
	assert_non_null(strstr(error, "cannot load --tls-cert-file /nonexistent/cert.pem"));
	free(error);
	error = NULL;
	options.tls_key_file = NULL;
	assert_null(httpserver_new(f->base, &options, &error));
	assert_string_equal(error, "--tls-cert-file and --tls-private-key-file go together");
	free(error);
}

static void
a_self_signed_certificate_is_made_for_https(void **state)
{
	struct fixture *f = *state;
	struct httpserver_options options = { "127.0.0.1", 0, 0, NULL, NULL, NULL, NULL };
	struct httpserver *server;
	char *error = NULL;
	int fd, port = hold_a_port(&fd);

	/* Free the port for the server; another process taking it meanwhile is unlikely. */
	close(fd);
	options.secure_port = port;
	server = httpserver_new(f->base, &options, &error);
	if (server == NULL)
		fail_msg("%s", error);
	httpserver_free(server);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(every_health_endpoint_says_ok_when_its_checks_pass,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(verbose_lists_the_checks_of_the_endpoint, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    a_failing_check_fails_only_its_endpoint_with_its_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(a_check_that_gives_no_reason_still_fails, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(exclude_skips_a_check, setup, teardown),
		cmocka_unit_test_setup_teardown(one_check_can_be_asked_for_by_path, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(a_leader_election_check_is_one_line, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(metrics_renders_the_registry, setup, teardown),
		cmocka_unit_test_setup_teardown(configz_serves_the_configuration_it_was_given,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_paths_are_404_and_other_methods_405,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(a_port_in_use_fails_naming_address_and_port,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(certificate_files_that_cannot_be_loaded_fail,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(a_self_signed_certificate_is_made_for_https,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
