/*
 * test_clientbuilder.c - --use-service-account-credentials: the identity each controller
 * takes (kube's names, from cmd/kube-controller-manager/app of the pinned release, as
 * data), when a token is renewed (kube's dynamic client builder: 80 % of its life, a life
 * under ten minutes pinned to ten), how a TokenRequest's answer is read, and the steps
 * that get a token, over the responder client: the ServiceAccount read, made when
 * missing, its token asked for, a refusal retried, a client's requests held until
 * its token is there, the token renewed before it expires, and renewed at once after a
 * 401 unless it is younger than the least age.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <event2/event.h>

#include "client.h"
#include "clientbuilder.h"
#include "controller.h"
#include "registry.h"
#include "timeutil.h"
#include "util.h"

/* --- the names ----------------------------------------------------------------------- */

/* sqlkcm's controller, and the name kube's asks its client builder for (NewClient,
 * NewClientConfig, ClientOrDie); root: kube builds it with the root builder. */
static const struct {
	const char *controller;
	const char *client_name;
	int root;
} kube_client_names[] = {
	{ "replicaset", "replicaset-controller", 0 },
	{ "replicationcontroller", "replication-controller", 0 },
	{ "deployment", "deployment-controller", 0 },
	{ "garbagecollector", "generic-garbage-collector", 0 },
	{ "namespace", "namespace-controller", 0 },
	{ "serviceaccount", "service-account-controller", 0 },
	{ "root-ca-cert-publisher", "root-ca-cert-publisher", 0 },
	{ "podgc", "pod-garbage-collector", 0 },
	{ "nodelifecycle", "node-controller", 0 },
	{ "ttl", "ttl-controller", 0 },
	{ "ttl-after-finished", "ttl-after-finished-controller", 0 },
	{ "job", "job-controller", 0 },
	{ "taint-eviction-controller", "node-controller", 0 },
	{ "csrcleaner", "certificate-controller", 0 },
	{ "csrsigning", "certificate-controller", 0 },
	{ "csrapproving", "certificate-controller", 0 },
	{ "nodeipam", "node-controller", 0 },
	{ "daemonset", "daemon-set-controller", 0 },
	{ "endpoint", "endpoint-controller", 0 },
	{ "endpointslice", "endpointslice-controller", 0 },
	{ "endpointslicemirroring", "endpointslicemirroring-controller", 0 },
	{ "cronjob", "cronjob-controller", 0 },
	{ "disruption", "disruption-controller", 0 },
	{ "resourcequota", "resourcequota-controller", 0 },
	{ "statefulset", "statefulset-controller", 0 },
	{ "clusterrole-aggregation", "clusterrole-aggregation-controller", 0 },
	{ "serviceaccount-token", "tokens-controller", 1 },
	{ "legacy-service-account-token-cleaner", "legacy-service-account-token-cleaner", 0 },
	{ "service-cidr-controller", "service-cidrs-controller", 0 },
	/* Not in sqlkcm yet; here so that a controller added under its name is checked. */
	{ "persistentvolume-binder", "persistent-volume-binder", 0 },
	{ "attachdetach", "attachdetach-controller", 0 },
	{ "persistentvolume-expander", "expand-controller", 0 },
	{ "pvc-protection", "pvc-protection-controller", 0 },
	{ "pv-protection", "pv-protection-controller", 0 },
	{ "volumeattributesclass-protection", "volumeattributesclass-protection-controller", 0 },
	{ "ephemeral-volume", "ephemeral-volume-controller", 0 },
	{ "horizontalpodautoscaling", "horizontal-pod-autoscaler", 0 },
	{ "bootstrapsigner", "bootstrap-signer", 0 },
	{ "tokencleaner", "token-cleaner", 0 },
};

/* Every controller sqlkcm has takes kube's identity; a new one must be added above. */
static void
test_every_controller_has_kubes_client_name(void **state)
{
	(void)state;
	for (int i = 0; i < controller_type_count; i++) {
		const struct controller_type *t = controller_types[i];
		size_t j;

		for (j = 0; j < sizeof kube_client_names / sizeof kube_client_names[0]; j++) {
			if (strcmp(kube_client_names[j].controller, t->name) == 0)
				break;
		}
		if (j == sizeof kube_client_names / sizeof kube_client_names[0])
			fail_msg("controller %s is not in the table of kube's client names",
			    t->name);
		assert_non_null(t->client_name);
		if (strcmp(t->client_name, kube_client_names[j].client_name) != 0)
			fail_msg("controller %s: client name %s, kube's is %s", t->name,
			    t->client_name, kube_client_names[j].client_name);
		assert_int_equal(t->client_is_root, kube_client_names[j].root);
	}
}

/* --- renewal -------------------------------------------------------------------------- */

static void
test_token_renewed_at_80_percent_of_its_life(void **state)
{
	static const struct {
		double lifetime, renew_after;
	} cases[] = {
		{ 3600, 2880 },		/* kube's default request */
		{ 86400, 69120 },	/* an apiserver that gives longer */
		{ 600, 480 },		/* the least lifetime taken as it is */
		{ 599, 480 },		/* shorter: a skewed clock, pinned to ten minutes */
		{ 60, 480 },
		{ 0, 480 },
		{ -3600, 480 },		/* expired already by our clock */
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_true(fabs(clientbuilder_renew_after(cases[i].lifetime) -
		    cases[i].renew_after) < 1e-9);
	assert_true(fabs(clientbuilder_renew_after(NAN) - 480) < 1e-9);
}

/* --- reading an answer ---------------------------------------------------------------- */

static void
test_token_request_answers(void **state)
{
	static const struct {
		const char *body;
		const char *token;	/* NULL: refused */
		double lifetime;
	} cases[] = {
		{ "{\"kind\":\"TokenRequest\",\"status\":{\"token\":\"abc.def.ghi\","
		  "\"expirationTimestamp\":\"2026-01-01T01:00:00Z\"}}", "abc.def.ghi", 3600 },
		{ "{\"status\":{\"token\":\"t\",\"expirationTimestamp\":"
		  "\"2026-01-01T00:10:00Z\"}}", "t", 600 },
		{ "{\"status\":{\"expirationTimestamp\":\"2026-01-01T01:00:00Z\"}}", NULL, 0 },
		{ "{\"status\":{\"token\":\"\",\"expirationTimestamp\":"
		  "\"2026-01-01T01:00:00Z\"}}", NULL, 0 },
		{ "{\"status\":{\"token\":7,\"expirationTimestamp\":"
		  "\"2026-01-01T01:00:00Z\"}}", NULL, 0 },
		{ "{\"status\":{\"token\":\"secret-a\\r\\nX-Evil: 1\",\"expirationTimestamp\":"
		  "\"2026-01-01T01:00:00Z\"}}", NULL, 0 },
		{ "{\"status\":{\"token\":\"secret-b\"}}", NULL, 0 },
		{ "{\"status\":{\"token\":\"secret-c\",\"expirationTimestamp\":\"soon\"}}",
		  NULL, 0 },
		{ "{\"status\":\"secret-d\"}", NULL, 0 },
		{ "[\"secret-e\"]", NULL, 0 },
		{ "secret-f", NULL, 0 },
		{ "", NULL, 0 },
	};
	time_t epoch;

	(void)state;
	assert_int_equal(time_parse_rfc3339("2026-01-01T00:00:00Z", &epoch), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *token = NULL, *error = NULL;
		double lifetime = -1;
		int rc = clientbuilder_parse_token(cases[i].body, strlen(cases[i].body),
		    (double)epoch, &token, &lifetime, &error);

		if (cases[i].token != NULL) {
			assert_int_equal(rc, 0);
			assert_string_equal(token, cases[i].token);
			assert_true(fabs(lifetime - cases[i].lifetime) < 1e-9);
		} else {
			assert_int_equal(rc, -1);
			assert_null(token);
			assert_non_null(error);
			/* The message never repeats what the answer held. */
			assert_null(strstr(error, "secret"));
		}
		free(token);
		free(error);
	}
}

/* --- the steps, over the responder ----------------------------------------------------- */

struct apiserver {
	struct buf seen;		/* "METHOD path;" per request of the root client */
	int account_exists;
	int token_refusals;		/* refuse this many TokenRequests first */
	int tokens;			/* issued */
	int lifetime;			/* of each token, in seconds; 0: 3600 */
	int want_tokens;		/* the loop ends once this many are issued; 0: none */
	int refusals_401;		/* the controller's requests answered 401 first */
	int answer_code;		/* the controller's request's answer */
	int limit;			/* seconds the loop runs at most; 0: 10 */
	struct event_base *base;
	int answered;			/* the controller's request got its answer */
};

static void
root_respond(const char *method, const char *path, const char *content_type,
    const char *body, size_t len, struct client_reply *reply, void *arg)
{
	struct apiserver *a = arg;
	char when[TIME_RFC3339_SIZE];

	(void)content_type;
	buf_printf(&a->seen, "%s %s;", method, path);
	if (strcmp(method, "GET") == 0 &&
	    strcmp(path, "/api/v1/namespaces/kube-system/serviceaccounts/x-controller") == 0) {
		reply->http_code = a->account_exists ? 200 : 404;
		reply->body = xstrdup(a->account_exists ? "{\"kind\":\"ServiceAccount\"}" :
		    "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"code\":404}");
	} else if (strcmp(method, "POST") == 0 &&
	    strcmp(path, "/api/v1/namespaces/kube-system/serviceaccounts") == 0) {
		assert_non_null(strstr(body, "\"name\":\"x-controller\""));
		a->account_exists = 1;
		reply->http_code = 201;
		reply->body = xstrndup(body, len);
	} else if (strcmp(method, "POST") == 0 && strcmp(path,
	    "/api/v1/namespaces/kube-system/serviceaccounts/x-controller/token") == 0) {
		assert_non_null(strstr(body, "\"expirationSeconds\":3600"));
		if (a->token_refusals > 0) {
			a->token_refusals--;
			reply->http_code = 403;
			reply->body = xstrdup("{\"kind\":\"Status\",\"reason\":\"Forbidden\","
			    "\"message\":\"no\",\"code\":403}");
			return;
		}
		time_format_rfc3339((time_t)time_now() + (a->lifetime > 0 ? a->lifetime : 3600),
		    when);
		reply->http_code = 201;
		reply->body = xasprintf("{\"status\":{\"token\":\"tok-%d\","
		    "\"expirationTimestamp\":\"%s\"}}", ++a->tokens, when);
		if (a->want_tokens > 0 && a->tokens >= a->want_tokens)
			event_base_loopbreak(a->base);
	} else {
		reply->http_code = 500;
	}
}

/* The controller's own request: answered only once its token is there. */
static void
controller_respond(const char *method, const char *path, const char *content_type,
    const char *body, size_t len, struct client_reply *reply, void *arg)
{
	struct apiserver *a = arg;

	(void)content_type;
	(void)body;
	(void)len;
	buf_printf(&a->seen, "controller %s %s;", method, path);
	if (a->refusals_401 > 0) {
		a->refusals_401--;
		reply->http_code = 401;
		reply->body = xstrdup("{\"kind\":\"Status\",\"reason\":\"Unauthorized\","
		    "\"code\":401}");
		return;
	}
	reply->http_code = 201;
	reply->body = xstrdup("{}");
}

static void
controller_done(const struct client_response *resp, void *arg)
{
	struct apiserver *a = arg;

	a->answer_code = resp->http_code;
	a->answered = 1;
	if (a->want_tokens == 0)
		event_base_loopbreak(a->base);
}

/* Runs the loop until the controller's request is answered (or, with want_tokens, that
 * many tokens are issued), or a->limit seconds (10). */
static void
run_until_answered(struct apiserver *a)
{
	struct timeval limit = { a->limit > 0 ? a->limit : 10, 0 };

	event_base_loopexit(a->base, &limit);
	event_base_dispatch(a->base);
}

static void
run_steps(struct apiserver *a, const char *want)
{
	struct client *root, *own;
	struct clientbuilder *b;

	a->base = event_base_new();
	root = client_new_responder(a->base, root_respond, a);
	own = client_new_responder(a->base, controller_respond, a);
	b = clientbuilder_new(root, NULL);
	/* Sent before the token exists: it waits. */
	client_send(own, "POST", "/api/v1/namespaces/ns/pods", "application/json", "{}", 2,
	    controller_done, a);
	clientbuilder_attach(b, "x-controller", own);
	run_until_answered(a);
	assert_int_equal(a->answered, 1);
	assert_int_equal(a->answer_code, 201);
	assert_string_equal(a->seen.data, want);
	client_free(own);
	clientbuilder_free(b);
	client_free(root);
	event_base_free(a->base);
	buf_free(&a->seen);
}

static void
test_missing_account_created_then_token_then_request(void **state)
{
	struct apiserver a = { .account_exists = 0 };

	(void)state;
	buf_init(&a.seen);
	run_steps(&a,
	    "GET /api/v1/namespaces/kube-system/serviceaccounts/x-controller;"
	    "POST /api/v1/namespaces/kube-system/serviceaccounts;"
	    "POST /api/v1/namespaces/kube-system/serviceaccounts/x-controller/token;"
	    "controller POST /api/v1/namespaces/ns/pods;");
}

static void
test_existing_account_not_created_again(void **state)
{
	struct apiserver a = { .account_exists = 1 };

	(void)state;
	buf_init(&a.seen);
	run_steps(&a,
	    "GET /api/v1/namespaces/kube-system/serviceaccounts/x-controller;"
	    "POST /api/v1/namespaces/kube-system/serviceaccounts/x-controller/token;"
	    "controller POST /api/v1/namespaces/ns/pods;");
}

/* A refused TokenRequest is retried from the start after the backoff; the controller's
 * request waits meanwhile and never goes without a token. */
static void
test_refused_token_request_retried(void **state)
{
	struct apiserver a = { .account_exists = 1, .token_refusals = 1 };

	(void)state;
	buf_init(&a.seen);
	run_steps(&a,
	    "GET /api/v1/namespaces/kube-system/serviceaccounts/x-controller;"
	    "POST /api/v1/namespaces/kube-system/serviceaccounts/x-controller/token;"
	    "GET /api/v1/namespaces/kube-system/serviceaccounts/x-controller;"
	    "POST /api/v1/namespaces/kube-system/serviceaccounts/x-controller/token;"
	    "controller POST /api/v1/namespaces/ns/pods;");
	assert_int_equal(a.tokens, 1);
}

/* Runs a client of x-controller under b's timing until the apiserver has issued
 * a->want_tokens tokens (or 10 s), its one request sent before the first. */
static void
run_tokens(struct apiserver *a, double min_lifetime, double unauthorized_min_age)
{
	struct client *root, *own;
	struct clientbuilder *b;

	a->base = event_base_new();
	root = client_new_responder(a->base, root_respond, a);
	own = client_new_responder(a->base, controller_respond, a);
	b = clientbuilder_new(root, NULL);
	clientbuilder_set_timing(b, min_lifetime, unauthorized_min_age);
	client_send(own, "POST", "/api/v1/namespaces/ns/pods", "application/json", "{}", 2,
	    controller_done, a);
	clientbuilder_attach(b, "x-controller", own);
	run_until_answered(a);
	client_free(own);
	clientbuilder_free(b);
	client_free(root);
	event_base_free(a->base);
}

/* A token is renewed before it expires: at 80 % of a 2 s life (the ten-minute floor
 * lowered for the test), through the same steps. */
static void
test_token_renewed_before_it_expires(void **state)
{
	struct apiserver a = { .account_exists = 1, .lifetime = 2, .want_tokens = 2 };
	double started = time_monotonic();

	(void)state;
	buf_init(&a.seen);
	run_tokens(&a, 0, CLIENTBUILDER_RETRY_MAX);
	assert_int_equal(a.tokens, 2);
	assert_int_equal(a.answer_code, 201);
	/* Not at once: after most of the first token's life. */
	assert_true(time_monotonic() - started >= 0.5);
	assert_string_equal(a.seen.data,
	    "GET /api/v1/namespaces/kube-system/serviceaccounts/x-controller;"
	    "POST /api/v1/namespaces/kube-system/serviceaccounts/x-controller/token;"
	    "controller POST /api/v1/namespaces/ns/pods;"
	    "GET /api/v1/namespaces/kube-system/serviceaccounts/x-controller;"
	    "POST /api/v1/namespaces/kube-system/serviceaccounts/x-controller/token;");
	buf_free(&a.seen);
}

/* A 401 to a request with the token gets another at once (kube's resettable token
 * source), though the first had most of its hour left. */
static void
test_unauthorized_renews_the_token(void **state)
{
	struct apiserver a = { .account_exists = 1, .want_tokens = 2, .refusals_401 = 1 };

	(void)state;
	buf_init(&a.seen);
	run_tokens(&a, CLIENTBUILDER_MIN_LIFETIME, 0);
	assert_int_equal(a.tokens, 2);
	assert_int_equal(a.answer_code, 401);
	buf_free(&a.seen);
}

/* A 401 to a token younger than the least age renews nothing: a burst of refusals of
 * one token asks for one more at most. */
static void
test_unauthorized_young_token_kept(void **state)
{
	/* Never reaches two tokens: the loop runs its whole second. */
	struct apiserver a = { .account_exists = 1, .want_tokens = 2, .refusals_401 = 1,
	    .limit = 1 };

	(void)state;
	buf_init(&a.seen);
	run_tokens(&a, CLIENTBUILDER_MIN_LIFETIME, CLIENTBUILDER_RETRY_MAX);
	assert_int_equal(a.answer_code, 401);
	assert_int_equal(a.tokens, 1);
	buf_free(&a.seen);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_controller_has_kubes_client_name),
		cmocka_unit_test(test_token_renewed_at_80_percent_of_its_life),
		cmocka_unit_test(test_token_request_answers),
		cmocka_unit_test(test_missing_account_created_then_token_then_request),
		cmocka_unit_test(test_existing_account_not_created_again),
		cmocka_unit_test(test_refused_token_request_retried),
		cmocka_unit_test(test_token_renewed_before_it_expires),
		cmocka_unit_test(test_unauthorized_renews_the_token),
		cmocka_unit_test(test_unauthorized_young_token_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
