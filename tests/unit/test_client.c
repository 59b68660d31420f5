/*
 * test_client.c - the responder client, the seam unit tests send requests through: it
 * must deliver answers as the network client does (later, from the loop, in order), so
 * that code tested over it behaves as it does over curl. And the network client's own
 * rules against a real socket on loopback: a silent connection is found dead, and the
 * gate holds requests back while the server does not answer.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <event2/event.h>

#include "client.h"
#include "kubeconfig.h"
#include "util.h"

/* What the responder saw and what the callbacks got. */
struct exchange {
	struct buf seen;	/* "METHOD path content-type body;" per request */
	struct buf got;		/* "code body [retry-after];" per answer, "data:..." */
	int calls;
	struct event_base *stop;	/* on_done_keep_error ends its loop, when set */
};

/* The text in b ("" when empty). */
static const char *
text_of(const struct buf *b)
{
	return b->data != NULL ? b->data : "";
}

/* Answers /missing with 404, /busy with 429 and Retry-After, /lost with nothing, anything
 * else with 200 and "ok <path>". */
static void
respond(const char *method, const char *path, const char *content_type, const char *body,
    size_t len, struct client_reply *reply, void *arg)
{
	struct exchange *x = arg;

	buf_printf(&x->seen, "%s %s %s %.*s;", method, path,
	    content_type != NULL ? content_type : "-", (int)len, body != NULL ? body : "");
	if (strcmp(path, "/missing") == 0) {
		reply->http_code = 404;
		reply->body = xstrdup("{\"kind\":\"Status\",\"code\":404}");
	} else if (strcmp(path, "/busy") == 0) {
		reply->http_code = 429;
		reply->retry_after = xstrdup("3");
	} else if (strcmp(path, "/lost") == 0) {
		reply->http_code = 0;
	} else {
		reply->http_code = 200;
		reply->body = xasprintf("ok %s", path);
	}
}

/* Notes an answer as "code body [retry-after] [transport-error];". */
static void
on_done(const struct client_response *resp, void *arg)
{
	struct exchange *x = arg;

	x->calls++;
	buf_printf(&x->got, "%d %.*s%s%s%s;", resp->http_code, (int)resp->len, resp->body,
	    resp->retry_after != NULL ? " retry-after=" : "",
	    resp->retry_after != NULL ? resp->retry_after : "",
	    resp->transport_error != NULL ? " transport-error" : "");
}

/* Notes a stream's data as "data:...;". */
static void
on_data(const char *data, size_t len, void *arg)
{
	struct exchange *x = arg;

	buf_printf(&x->got, "data:%.*s;", (int)len, data);
}

/* Answers come from the loop, never from inside client_send, in the order sent, with the
 * status code, body, Retry-After and transport errors as given. */
static void
answers_come_later_from_the_loop_in_order(void **state)
{
	struct event_base *base = event_base_new();
	struct exchange x;
	struct client *c;

	(void)state;
	memset(&x, 0, sizeof x);
	buf_init(&x.seen);
	buf_init(&x.got);
	c = client_new_responder(base, respond, &x);
	client_send(c, "POST", "/a", "application/json", "{}", 2, on_done, &x);
	client_send(c, "GET", "/missing", NULL, NULL, 0, on_done, &x);
	client_send(c, "GET", "/busy", NULL, NULL, 0, on_done, &x);
	client_send(c, "GET", "/lost", NULL, NULL, 0, on_done, &x);
	assert_int_equal(x.calls, 0);
	assert_int_equal(x.seen.len, 0);	/* not even started yet */
	event_base_dispatch(base);

	assert_int_equal(x.calls, 4);
	assert_string_equal(text_of(&x.seen), "POST /a application/json {};GET /missing - ;"
	    "GET /busy - ;GET /lost - ;");
	assert_string_equal(text_of(&x.got), "200 ok /a;404 {\"kind\":\"Status\",\"code\":404};"
	    "429  retry-after=3;0  transport-error;");
	assert_string_equal(client_server(c), "responder");
	client_free(c);
	buf_free(&x.seen);
	buf_free(&x.got);
	event_base_free(base);
}

/* A cancelled request is never answered; a stream gets its body as data, then an empty
 * done; requests still out when the client is freed are dropped. */
static void
cancelled_requests_are_not_answered_and_streams_get_data(void **state)
{
	struct event_base *base = event_base_new();
	struct client_request *r;
	struct exchange x;
	struct client *c;

	(void)state;
	memset(&x, 0, sizeof x);
	buf_init(&x.seen);
	buf_init(&x.got);
	c = client_new_responder(base, respond, &x);
	r = client_send(c, "GET", "/cancelled", NULL, NULL, 0, on_done, &x);
	client_stream(c, "/watch", on_data, on_done, &x);
	client_cancel(r);
	event_base_dispatch(base);

	assert_string_equal(text_of(&x.seen), "GET /watch - ;");
	assert_string_equal(text_of(&x.got), "data:ok /watch;200 ;");
	client_send(c, "GET", "/never", NULL, NULL, 0, on_done, &x);
	client_free(c);
	buf_free(&x.seen);
	buf_free(&x.got);
	event_base_free(base);
}

/* A socket bound on loopback, listening when listening is set; its port goes in *port.
 * A listener that never accepts is a black hole: the kernel completes connections and
 * takes what is sent, and nothing ever answers, as with a peer behind a middlebox that
 * lost the flow. */
static int
loopback_socket(int listening, int *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	if (listening)
		assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* A kubeconfig for http://127.0.0.1:port with nothing else (the file is empty). */
static struct kube_config *
loopback_config(int port)
{
	char path[] = "/tmp/test_client.XXXXXX", master[64];
	struct kube_config *kc = NULL;
	char *error = NULL;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	snprintf(master, sizeof master, "http://127.0.0.1:%d", port);
	if (kube_config_resolve(path, NULL, master, &kc, &error) != 0)
		fail_msg("kube_config_resolve: %s", error);
	unlink(path);
	return kc;
}

/* Keeps the transport error of an answer in x->seen. */
static void
on_done_keep_error(const struct client_response *resp, void *arg)
{
	struct exchange *x = arg;

	x->calls++;
	buf_printf(&x->seen, "%d %s;", resp->http_code,
	    resp->transport_error != NULL ? resp->transport_error : "-");
	if (x->stop != NULL)
		event_base_loopbreak(x->stop);
}

/* A watch whose connection goes silent, with a probe that gets no answer either, ends
 * with a transport error that says so (the connection is shut down, not left to wait). */
static void
a_stream_on_a_silent_connection_ends_when_a_probe_gets_no_answer(void **state)
{
	struct event_base *base = event_base_new();
	struct timeval guard = { 20, 0 };
	struct kube_config *kc;
	struct exchange x;
	struct client *c;
	char *error = NULL;
	int port, hole = loopback_socket(1, &port);

	(void)state;
	memset(&x, 0, sizeof x);
	buf_init(&x.seen);
	buf_init(&x.got);
	kc = loopback_config(port);
	c = client_new(base, kc, NULL, &error);
	assert_non_null(c);
	client_set_dead_peer_timing(c, 0.2, 0.3, 60);
	x.stop = base;
	client_stream(c, "/api/v1/pods?watch=1", on_data, on_done_keep_error, &x);
	event_base_loopexit(base, &guard);
	event_base_dispatch(base);

	assert_int_equal(x.calls, 1);
	assert_non_null(strstr(text_of(&x.seen), "0 no byte from the server for "));
	assert_non_null(strstr(text_of(&x.seen), "and no answer to a probe in "));
	assert_int_equal(x.got.len, 0);
	client_free(c);
	kube_config_free(kc);
	close(hole);
	buf_free(&x.seen);
	buf_free(&x.got);
	event_base_free(base);
}

/* Once a request got no answer (connection refused), the gate lets the next requests of
 * every client sharing it go only at its rate: here one in 1000 s, so none in the next
 * half second. */
static void
after_a_request_gets_no_answer_the_gate_holds_every_client_back(void **state)
{
	struct event_base *base = event_base_new();
	struct timeval half = { 0, 500000 };
	struct client_gate *gate = client_gate_new(0.001);
	struct client_options options = { 0, 0, NULL, gate };
	struct kube_config *kc;
	struct exchange x;
	struct client *c, *other;
	char *error = NULL;
	int port, fd = loopback_socket(0, &port);

	(void)state;
	close(fd);		/* nothing listens there now: connections are refused */
	memset(&x, 0, sizeof x);
	buf_init(&x.seen);
	buf_init(&x.got);
	kc = loopback_config(port);
	c = client_new(base, kc, &options, &error);
	other = client_new(base, kc, &options, &error);
	assert_non_null(c);
	assert_non_null(other);
	client_send(c, "GET", "/first", NULL, NULL, 0, on_done_keep_error, &x);
	event_base_loopexit(base, &half);
	event_base_dispatch(base);
	assert_int_equal(x.calls, 1);
	assert_false(strncmp(text_of(&x.seen), "0 -;", 4) == 0);	/* a transport error */

	client_send(c, "GET", "/second", NULL, NULL, 0, on_done_keep_error, &x);
	client_send(other, "GET", "/third", NULL, NULL, 0, on_done_keep_error, &x);
	event_base_loopexit(base, &half);
	event_base_dispatch(base);
	assert_int_equal(x.calls, 1);

	client_free(c);
	client_free(other);
	client_gate_free(gate);
	kube_config_free(kc);
	buf_free(&x.seen);
	buf_free(&x.got);
	event_base_free(base);
}

/* A child process that answers each of n connections on the listening socket fd with
 * one HTTP/1.1 200 response whose JSON body is len bytes long, then exits. */
static pid_t
serve_big_answers(int fd, int n, size_t len)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid > 0)
		return pid;
	for (int i = 0; i < n; i++) {
		char head[256], req[4096];
		char *body = malloc(len);
		int c = accept(fd, NULL, NULL);
		size_t off = 0;

		if (c < 0 || body == NULL)
			_exit(1);
		(void)read(c, req, sizeof req);		/* the request: not looked at */
		memset(body, ' ', len);
		memcpy(body, "{\"kind\":\"PodList\",\"items\":[]}", 30);
		snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		    "Content-Length: %zu\r\nConnection: close\r\n\r\n", len);
		if (write(c, head, strlen(head)) < 0)
			_exit(1);
		while (off < len) {
			ssize_t w = write(c, body + off, len - off);

			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		close(c);
		free(body);
	}
	_exit(0);
}

/* Keeps the code and the body's length of an answer in x->got, and ends the loop. */
static void
on_done_keep_length(const struct client_response *resp, void *arg)
{
	struct exchange *x = arg;

	buf_printf(&x->got, "%d %zu;", resp->http_code, resp->len);
	x->calls++;
	event_base_loopbreak(x->stop);
}

/* A request told to drop its successful body gets none (a collection delete's answer is
 * every object it deleted: megabytes nobody reads); another gets its body whole. */
static void
a_successful_body_can_be_dropped_as_it_arrives(void **state)
{
	struct event_base *base = event_base_new();
	struct timeval guard = { 20, 0 };
	struct kube_config *kc;
	struct exchange x;
	struct client *c;
	char *error = NULL;
	int port, fd = loopback_socket(1, &port), status;
	pid_t server = serve_big_answers(fd, 2, 3 << 20);

	(void)state;
	memset(&x, 0, sizeof x);
	buf_init(&x.seen);
	buf_init(&x.got);
	kc = loopback_config(port);
	c = client_new(base, kc, NULL, &error);
	assert_non_null(c);
	x.stop = base;
	client_discard_success_body(client_send(c, "DELETE", "/api/v1/namespaces/a/pods",
	    NULL, NULL, 0, on_done_keep_length, &x));
	/* One at a time: the server answers connections in the order it accepts them. */
	event_base_loopexit(base, &guard);
	event_base_dispatch(base);
	assert_int_equal(x.calls, 1);
	client_send(c, "DELETE", "/api/v1/namespaces/b/pods", NULL, NULL, 0, on_done_keep_length,
	    &x);
	event_base_loopexit(base, &guard);
	event_base_dispatch(base);
	assert_string_equal(text_of(&x.got), "200 0;200 3145728;");
	waitpid(server, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	client_free(c);
	kube_config_free(kc);
	close(fd);
	buf_free(&x.seen);
	buf_free(&x.got);
	event_base_free(base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(answers_come_later_from_the_loop_in_order),
		cmocka_unit_test(cancelled_requests_are_not_answered_and_streams_get_data),
		cmocka_unit_test(a_stream_on_a_silent_connection_ends_when_a_probe_gets_no_answer),
		cmocka_unit_test(after_a_request_gets_no_answer_the_gate_holds_every_client_back),
		cmocka_unit_test(a_successful_body_can_be_dropped_as_it_arrives),
	};

	return cmocka_run_group_tests_name("client", tests, NULL, NULL);
}
