/*
 * test_httpauth.c - who may read the HTTPS endpoints: TokenReview, SubjectAccessReview,
 * the always-allowed paths, system:masters, the caches and cancelling.
 *
 * The apiserver is a responder client. It knows three tokens: "alice" (a user in group
 * "team" whom it allows to get /metrics and nothing else), "root" (in system:masters) and
 * "nobody" (not authenticated); "broken" makes the TokenReview fail with 500. It denies
 * everything to system:anonymous, with a reason, and fails every review while `down`.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <event2/event.h>

#include "client.h"
#include "httpauth.h"
#include "util.h"

struct apiserver {
	int token_reviews;
	int access_reviews;
	int down;			/* every review fails with 500 */
	cJSON *last_access_review;	/* the spec of the last SubjectAccessReview */
	char *last_token;		/* the token of the last TokenReview */
};

struct fixture {
	struct event_base *base;
	struct apiserver api;
	struct client *client;
	struct httpauth *auth;
};

/* The outcome of one check. */
struct outcome {
	int calls;
	enum httpauth_decision decision;
	char *message;
};

/* Answers a TokenReview. */
static void
token_review(struct apiserver *api, const cJSON *review, struct client_reply *reply)
{
	const cJSON *token = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(review, "spec"), "token");
	const char *t = cJSON_IsString(token) ? token->valuestring : "";

	api->token_reviews++;
	free(api->last_token);
	api->last_token = xstrdup(t);
	reply->http_code = 201;
	if (strcmp(t, "broken") == 0 || api->down) {
		reply->http_code = 500;
		reply->body = xstrdup("{\"kind\":\"Status\",\"code\":500}");
	} else if (strcmp(t, "alice") == 0) {
		reply->body = xstrdup("{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":true,"
		    "\"user\":{\"username\":\"alice\",\"uid\":\"u-1\",\"groups\":[\"team\","
		    "\"system:authenticated\"],\"extra\":{\"scope\":[\"a\"]}}}}");
	} else if (strcmp(t, "root") == 0) {
		reply->body = xstrdup("{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":true,"
		    "\"user\":{\"username\":\"root\",\"groups\":[\"system:masters\"]}}}");
	} else {
		reply->body = xstrdup("{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":false,"
		    "\"error\":\"invalid bearer token\"}}");
	}
}

/* Answers a SubjectAccessReview: alice may get /metrics. */
static void
access_review(struct apiserver *api, const cJSON *review, struct client_reply *reply)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(review, "spec");
	const cJSON *user = cJSON_GetObjectItemCaseSensitive(spec, "user");
	const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(spec, "nonResourceAttributes");
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(attrs, "path");
	const cJSON *verb = cJSON_GetObjectItemCaseSensitive(attrs, "verb");
	int allowed = cJSON_IsString(user) && strcmp(user->valuestring, "alice") == 0 &&
	    cJSON_IsString(path) && strcmp(path->valuestring, "/metrics") == 0 &&
	    cJSON_IsString(verb) && strcmp(verb->valuestring, "get") == 0;

	api->access_reviews++;
	cJSON_Delete(api->last_access_review);
	api->last_access_review = cJSON_Duplicate(spec, 1);
	if (api->down) {
		reply->http_code = 503;
		return;
	}
	reply->http_code = 201;
	reply->body = xasprintf("{\"kind\":\"SubjectAccessReview\",\"status\":{\"allowed\":%s%s}}",
	    allowed ? "true" : "false", allowed ? "" : ",\"reason\":\"no RBAC policy matched\"");
}

static void
respond(const char *method, const char *path, const char *content_type, const char *body,
    size_t len, struct client_reply *reply, void *arg)
{
	struct apiserver *api = arg;
	cJSON *review = cJSON_ParseWithLength(body, len);

	assert_string_equal(method, "POST");
	assert_string_equal(content_type, "application/json");
	if (strcmp(path, "/apis/authentication.k8s.io/v1/tokenreviews") == 0)
		token_review(api, review, reply);
	else if (strcmp(path, "/apis/authorization.k8s.io/v1/subjectaccessreviews") == 0)
		access_review(api, review, reply);
	else
		fail_msg("unexpected request %s %s", method, path);
	cJSON_Delete(review);
}

static int
setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof *f);

	f->base = event_base_new();
	f->client = client_new_responder(f->base, respond, &f->api);
	f->auth = httpauth_new(f->client, HTTPAUTH_ALWAYS_ALLOW_PATHS ",/debug/*");
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	httpauth_free(f->auth);
	client_free(f->client);
	event_base_free(f->base);
	cJSON_Delete(f->api.last_access_review);
	free(f->api.last_token);
	free(f);
	return 0;
}

static void
on_done(enum httpauth_decision decision, const char *message, void *arg)
{
	struct outcome *o = arg;

	o->calls++;
	o->decision = decision;
	free(o->message);
	o->message = message != NULL ? xstrdup(message) : NULL;
}

/* Checks a request and runs the loop until it is decided; the decision never comes from
 * within httpauth_check. */
static struct outcome
decide(struct fixture *f, const char *authorization, const char *method, const char *path)
{
	struct outcome o = { 0, HTTPAUTH_ERROR, NULL };

	assert_non_null(httpauth_check(f->auth, authorization, method, path, on_done, &o));
	assert_int_equal(o.calls, 0);
	for (int i = 0; i < 100 && o.calls == 0; i++)
		event_base_loop(f->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	assert_int_equal(o.calls, 1);
	return o;
}

/* The string at a path of the last SubjectAccessReview's spec. */
static const char *
review_string(const struct fixture *f, const char *member, const char *inner)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->api.last_access_review, member);

	if (inner != NULL)
		v = cJSON_GetObjectItemCaseSensitive(v, inner);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The health checks are served to anyone, exactly those paths (or a '*' prefix). */
static void
always_allowed_paths_are_exact_or_prefixes(void **state)
{
	struct fixture *f = *state;

	assert_true(httpauth_always_allowed(f->auth, "/healthz"));
	assert_true(httpauth_always_allowed(f->auth, "/readyz"));
	assert_true(httpauth_always_allowed(f->auth, "/livez"));
	assert_true(httpauth_always_allowed(f->auth, "/debug/pprof"));
	assert_false(httpauth_always_allowed(f->auth, "/metrics"));
	assert_false(httpauth_always_allowed(f->auth, "/configz"));
	assert_false(httpauth_always_allowed(f->auth, "/healthz/ping"));
	assert_false(httpauth_always_allowed(f->auth, "/readyzz"));
	assert_false(httpauth_always_allowed(f->auth, "/debug"));
}

/* No token: system:anonymous of system:unauthenticated, which the apiserver denies. */
static void
anonymous_request_is_forbidden(void **state)
{
	struct fixture *f = *state;
	struct outcome o = decide(f, NULL, "GET", "/metrics");
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(f->api.last_access_review,
	    "groups");

	assert_int_equal(o.decision, HTTPAUTH_FORBIDDEN);
	assert_string_equal(o.message, "forbidden: User \"system:anonymous\" cannot get path "
	    "\"/metrics\": no RBAC policy matched");
	assert_int_equal(f->api.token_reviews, 0);
	assert_int_equal(f->api.access_reviews, 1);
	assert_string_equal(review_string(f, "user", NULL), "system:anonymous");
	assert_int_equal(cJSON_GetArraySize(groups), 1);
	assert_string_equal(cJSON_GetArrayItem(groups, 0)->valuestring, "system:unauthenticated");
	free(o.message);
	/* A header that is not a bearer token is no credential either. */
	o = decide(f, "Basic YWxpY2U6c2VjcmV0", "GET", "/metrics");
	assert_int_equal(o.decision, HTTPAUTH_FORBIDDEN);
	assert_int_equal(f->api.token_reviews, 0);
	free(o.message);
}

/* A token the apiserver accepts, of a user it allows: the TokenReview carries the token,
 * the SubjectAccessReview the user, its uid, groups and extra, the path and "get". */
static void
accepted_token_of_an_allowed_user_is_allowed(void **state)
{
	struct fixture *f = *state;
	struct outcome o = decide(f, "Bearer alice", "GET", "/metrics");
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(f->api.last_access_review,
	    "groups");
	const cJSON *extra = cJSON_GetObjectItemCaseSensitive(f->api.last_access_review,
	    "extra");

	assert_int_equal(o.decision, HTTPAUTH_ALLOWED);
	assert_null(o.message);
	assert_int_equal(f->api.token_reviews, 1);
	assert_string_equal(f->api.last_token, "alice");
	assert_int_equal(f->api.access_reviews, 1);
	assert_string_equal(review_string(f, "user", NULL), "alice");
	assert_string_equal(review_string(f, "uid", NULL), "u-1");
	assert_string_equal(review_string(f, "nonResourceAttributes", "path"), "/metrics");
	assert_string_equal(review_string(f, "nonResourceAttributes", "verb"), "get");
	assert_int_equal(cJSON_GetArraySize(groups), 2);
	assert_non_null(cJSON_GetObjectItemCaseSensitive(extra, "scope"));
	/* HEAD reads like GET; the scheme's case does not matter. */
	o = decide(f, "bearer  alice", "HEAD", "/metrics");
	assert_int_equal(o.decision, HTTPAUTH_ALLOWED);
}

/* A token the apiserver does not accept: 401, and nothing is authorized. */
static void
rejected_token_is_unauthorized(void **state)
{
	struct fixture *f = *state;
	struct outcome o = decide(f, "Bearer nobody", "GET", "/metrics");

	assert_int_equal(o.decision, HTTPAUTH_UNAUTHORIZED);
	assert_string_equal(o.message, "Unauthorized");
	assert_int_equal(f->api.token_reviews, 1);
	assert_int_equal(f->api.access_reviews, 0);
	free(o.message);
}

/* A user the apiserver knows but does not allow: 403 naming the user, verb and path. */
static void
user_without_the_right_is_forbidden(void **state)
{
	struct fixture *f = *state;
	struct outcome o = decide(f, "Bearer alice", "GET", "/configz");

	assert_int_equal(o.decision, HTTPAUTH_FORBIDDEN);
	assert_string_equal(o.message, "forbidden: User \"alice\" cannot get path \"/configz\": "
	    "no RBAC policy matched");
	free(o.message);
	o = decide(f, "Bearer alice", "POST", "/metrics");
	assert_int_equal(o.decision, HTTPAUTH_FORBIDDEN);
	assert_string_equal(review_string(f, "nonResourceAttributes", "verb"), "post");
	free(o.message);
}

/* system:masters may do anything: no SubjectAccessReview. */
static void
system_masters_need_no_access_review(void **state)
{
	struct fixture *f = *state;
	struct outcome o = decide(f, "Bearer root", "GET", "/configz");

	assert_int_equal(o.decision, HTTPAUTH_ALLOWED);
	assert_int_equal(f->api.token_reviews, 1);
	assert_int_equal(f->api.access_reviews, 0);
}

/* Both answers are kept: the same token and request again ask the apiserver nothing, and
 * are still decided from the loop. */
static void
answers_are_cached(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	o = decide(f, "Bearer alice", "GET", "/metrics");
	assert_int_equal(o.decision, HTTPAUTH_ALLOWED);
	o = decide(f, "Bearer alice", "GET", "/metrics");
	assert_int_equal(o.decision, HTTPAUTH_ALLOWED);
	o = decide(f, "Bearer nobody", "GET", "/metrics");
	free(o.message);
	o = decide(f, "Bearer nobody", "GET", "/metrics");
	assert_int_equal(o.decision, HTTPAUTH_UNAUTHORIZED);
	free(o.message);
	o = decide(f, NULL, "GET", "/metrics");
	free(o.message);
	o = decide(f, NULL, "GET", "/metrics");
	assert_int_equal(o.decision, HTTPAUTH_FORBIDDEN);
	free(o.message);
	assert_int_equal(f->api.token_reviews, 2);
	assert_int_equal(f->api.access_reviews, 2);
	/* Another path is another question. */
	o = decide(f, "Bearer alice", "GET", "/configz");
	free(o.message);
	assert_int_equal(f->api.token_reviews, 2);
	assert_int_equal(f->api.access_reviews, 3);
}

/* An apiserver that cannot answer: a token is not accepted (401), an access review that
 * fails is a 500; neither is cached. */
static void
failed_reviews_are_refusals_and_not_cached(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	o = decide(f, "Bearer broken", "GET", "/metrics");
	assert_int_equal(o.decision, HTTPAUTH_UNAUTHORIZED);
	free(o.message);
	o = decide(f, "Bearer broken", "GET", "/metrics");
	assert_int_equal(o.decision, HTTPAUTH_UNAUTHORIZED);
	free(o.message);
	assert_int_equal(f->api.token_reviews, 2);

	f->api.down = 1;
	o = decide(f, NULL, "GET", "/metrics");
	assert_int_equal(o.decision, HTTPAUTH_ERROR);
	assert_non_null(strstr(o.message, "503"));
	free(o.message);
	f->api.down = 0;
	o = decide(f, NULL, "GET", "/metrics");
	assert_int_equal(o.decision, HTTPAUTH_FORBIDDEN);
	free(o.message);
	assert_int_equal(f->api.access_reviews, 2);
}

/* A cancelled check is never decided, whether it waits for the apiserver or the loop;
 * freeing the authorizer abandons the checks still out. */
static void
cancelled_checks_are_not_decided(void **state)
{
	struct fixture *f = *state;
	struct outcome waiting = { 0, HTTPAUTH_ERROR, NULL }, cached = { 0, HTTPAUTH_ERROR, NULL };
	struct outcome left = { 0, HTTPAUTH_ERROR, NULL };
	struct outcome o = decide(f, "Bearer alice", "GET", "/metrics");

	(void)o;
	httpauth_cancel(httpauth_check(f->auth, "Bearer nobody", "GET", "/metrics", on_done,
	    &waiting));
	httpauth_cancel(httpauth_check(f->auth, "Bearer alice", "GET", "/metrics", on_done,
	    &cached));
	assert_non_null(httpauth_check(f->auth, NULL, "GET", "/metrics", on_done, &left));
	httpauth_free(f->auth);
	f->auth = NULL;
	for (int i = 0; i < 20; i++)
		event_base_loop(f->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	assert_int_equal(waiting.calls, 0);
	assert_int_equal(cached.calls, 0);
	assert_int_equal(left.calls, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(always_allowed_paths_are_exact_or_prefixes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(anonymous_request_is_forbidden, setup, teardown),
		cmocka_unit_test_setup_teardown(accepted_token_of_an_allowed_user_is_allowed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(rejected_token_is_unauthorized, setup, teardown),
		cmocka_unit_test_setup_teardown(user_without_the_right_is_forbidden, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(system_masters_need_no_access_review, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(answers_are_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_reviews_are_refusals_and_not_cached, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(cancelled_checks_are_not_decided, setup, teardown),
	};
	return cmocka_run_group_tests_name("httpauth", tests, NULL, NULL);
}
