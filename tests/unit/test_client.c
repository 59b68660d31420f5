/*
 * test_client.c - the responder client, the seam unit tests send requests through: it
 * must deliver answers as the network client does (later, from the loop, in order), so
 * that code tested over it behaves as it does over curl.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "client.h"
#include "util.h"

/* What the responder saw and what the callbacks got. */
struct exchange {
	struct buf seen;	/* "METHOD path content-type body;" per request */
	struct buf got;		/* "code body [retry-after];" per answer, "data:..." */
	int calls;
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(answers_come_later_from_the_loop_in_order),
		cmocka_unit_test(cancelled_requests_are_not_answered_and_streams_get_data),
	};

	return cmocka_run_group_tests_name("client", tests, NULL, NULL);
}
