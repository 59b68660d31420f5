/*
 * test_restops.c - the requests controllers write with: paths, query strings, DeleteOptions
 * bodies and patch Content-Types, built offline.
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

#include "resource.h"
#include "restops.h"
#include "util.h"

/* A cluster-scoped resource, which sqlkcm does not cache. */
static const struct resource nodes = {
	"nodes", "Node", "v1", "/api/v1/nodes", NULL, NULL, -1, 0, 0, NULL,
};

struct path_case {
	const char *resource;	/* a name in resource_all, or NULL for nodes */
	const char *ns;
	const char *name;
	const char *subresource;
	const char *path;	/* NULL: refused */
};

static void
run_path_cases(const struct path_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct resource *r = cases[i].resource != NULL ?
		    resource_find(cases[i].resource) : &nodes;
		char *error = NULL;
		char *path;

		assert_non_null(r);
		path = restops_path(r, cases[i].ns, cases[i].name, cases[i].subresource, &error);
		if (cases[i].path == NULL) {
			if (path != NULL)
				fail_msg("case %zu (%s): got %s, want an error", i, cases[i].name, path);
			assert_non_null(error);
			free(error);
			continue;
		}
		if (path == NULL)
			fail_msg("case %zu (%s): error %s, want %s", i, cases[i].name, error,
			    cases[i].path);
		if (strcmp(path, cases[i].path) != 0)
			fail_msg("case %zu: got %s, want %s", i, path, cases[i].path);
		free(path);
	}
}

static void
namespaced_objects_live_under_their_namespace(void **state)
{
	static const struct path_case cases[] = {
		{ "pods", "default", "web-1", NULL, "/api/v1/namespaces/default/pods/web-1" },
		{ "pods", "default", NULL, NULL, "/api/v1/namespaces/default/pods" },
		{ "replicasets", "shop", "web-7d9f", NULL,
		    "/apis/apps/v1/namespaces/shop/replicasets/web-7d9f" },
		{ "replicasets", "shop", NULL, NULL, "/apis/apps/v1/namespaces/shop/replicasets" },
		{ "deployments", "kube-system", "coredns", NULL,
		    "/apis/apps/v1/namespaces/kube-system/deployments/coredns" },
	};

	(void)state;
	run_path_cases(cases, sizeof cases / sizeof cases[0]);
}

static void
cluster_scoped_objects_and_all_namespaces_have_no_namespace_segment(void **state)
{
	static const struct path_case cases[] = {
		{ NULL, NULL, "node-1", NULL, "/api/v1/nodes/node-1" },
		{ NULL, "", "node-1", NULL, "/api/v1/nodes/node-1" },
		{ NULL, NULL, NULL, NULL, "/api/v1/nodes" },
		{ "pods", NULL, NULL, NULL, "/api/v1/pods" },
		{ "replicasets", "", NULL, NULL, "/apis/apps/v1/replicasets" },
		{ NULL, NULL, "node-1", "status", "/api/v1/nodes/node-1/status" },
	};

	(void)state;
	run_path_cases(cases, sizeof cases / sizeof cases[0]);
}

static void
status_subresource_follows_the_object_name(void **state)
{
	static const struct path_case cases[] = {
		{ "pods", "default", "web-1", "status", "/api/v1/namespaces/default/pods/web-1/status" },
		{ "replicasets", "shop", "web-7d9f", "status",
		    "/apis/apps/v1/namespaces/shop/replicasets/web-7d9f/status" },
		{ "deployments", "shop", "web", "scale", "/apis/apps/v1/namespaces/shop/deployments/web/scale" },
		{ "pods", "default", NULL, "status", NULL },	/* a collection has none */
		{ "pods", "default", "web-1", "", NULL },
	};

	(void)state;
	run_path_cases(cases, sizeof cases / sizeof cases[0]);
}

/* Everything but RFC 3986's unreserved characters is percent-encoded, so no name escapes
 * its segment or starts a query; what the apiserver would route differently is refused. */
static void
hostile_names_are_encoded_or_refused(void **state)
{
	static const struct path_case cases[] = {
		{ "pods", "ns", "a?watch=true", NULL, "/api/v1/namespaces/ns/pods/a%3Fwatch%3Dtrue" },
		{ "pods", "ns", "100%", NULL, "/api/v1/namespaces/ns/pods/100%25" },
		{ "pods", "ns", "%2F", NULL, "/api/v1/namespaces/ns/pods/%252F" },
		{ "pods", "ns", "a#frag", NULL, "/api/v1/namespaces/ns/pods/a%23frag" },
		{ "pods", "ns", "a b+c&d", NULL, "/api/v1/namespaces/ns/pods/a%20b%2Bc%26d" },
		{ "pods", "ns", "caf\xc3\xa9", NULL, "/api/v1/namespaces/ns/pods/caf%C3%A9" },
		{ "pods", "ns", "\xe6\x97\xa5\xe6\x9c\xac", NULL,
		    "/api/v1/namespaces/ns/pods/%E6%97%A5%E6%9C%AC" },
		{ "pods", "ns", "line\r\nX-Header: 1", NULL,
		    "/api/v1/namespaces/ns/pods/line%0D%0AX-Header%3A%201" },
		{ "pods", "ns", "system:node:a.b_c~d", NULL,
		    "/api/v1/namespaces/ns/pods/system%3Anode%3Aa.b_c~d" },
		{ "pods", "ns", "...", NULL, "/api/v1/namespaces/ns/pods/..." },
		{ "pods", "n?s", "a", NULL, "/api/v1/namespaces/n%3Fs/pods/a" },
		{ "pods", "ns", "a/b", NULL, NULL },
		{ "pods", "ns", "a/status", NULL, NULL },
		{ "pods", "ns", "/", NULL, NULL },
		{ "pods", "ns", "..", NULL, NULL },
		{ "pods", "ns", ".", NULL, NULL },
		{ "pods", "ns", "", NULL, NULL },
		{ "pods", "..", "a", NULL, NULL },
		{ "pods", "a/b", "c", NULL, NULL },
		{ "pods", "ns", "a", "status/x", NULL },
	};

	(void)state;
	run_path_cases(cases, sizeof cases / sizeof cases[0]);
}

static void
resource_whose_path_does_not_end_in_its_name_is_refused(void **state)
{
	static const struct resource odd = { "pods", "Pod", "v1", "/api/v1/podz", NULL, NULL, -1, 0, 1, NULL };
	static const struct resource bare = { "pods", "Pod", "v1", "pods", NULL, NULL, -1, 0, 1, NULL };
	char *error = NULL;

	(void)state;
	assert_null(restops_path(&odd, "ns", "a", NULL, &error));
	assert_non_null(error);
	free(error);
	error = NULL;
	assert_null(restops_path(&bare, "ns", "a", NULL, &error));
	assert_non_null(error);
	free(error);
}

static void
query_values_are_percent_encoded(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b);
	buf_append_str(&b, "/api/v1/namespaces/ns/pods/a");
	restops_append_query(&b, "fieldManager", "sqlkcm ctl/1&x=y");
	assert_string_equal(b.data, "/api/v1/namespaces/ns/pods/a?fieldManager=sqlkcm%20ctl%2F1%26x%3Dy");
	restops_append_query(&b, "force", "true");
	assert_string_equal(b.data,
	    "/api/v1/namespaces/ns/pods/a?fieldManager=sqlkcm%20ctl%2F1%26x%3Dy&force=true");
	buf_reset(&b);
	restops_append_query(&b, "k", "caf\xc3\xa9#");
	assert_string_equal(b.data, "?k=caf%C3%A9%23");
	buf_free(&b);
}

struct delete_case {
	const char *uid;
	const char *rv;
	const char *propagation;
	const char *body;	/* NULL: refused */
};

static void
delete_options_carry_preconditions_and_propagation(void **state)
{
	static const struct delete_case cases[] = {
		{ NULL, NULL, NULL, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"}" },
		{ "6b2a-01", NULL, NULL, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
		    "\"preconditions\":{\"uid\":\"6b2a-01\"}}" },
		{ NULL, "4711", NULL, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
		    "\"preconditions\":{\"resourceVersion\":\"4711\"}}" },
		{ "6b2a-01", "4711", "Background", "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
		    "\"preconditions\":{\"uid\":\"6b2a-01\",\"resourceVersion\":\"4711\"},"
		    "\"propagationPolicy\":\"Background\"}" },
		{ NULL, NULL, "Foreground", "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
		    "\"propagationPolicy\":\"Foreground\"}" },
		{ "u", NULL, "Orphan", "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
		    "\"preconditions\":{\"uid\":\"u\"},\"propagationPolicy\":\"Orphan\"}" },
		{ "a\"b\\c", NULL, NULL, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
		    "\"preconditions\":{\"uid\":\"a\\\"b\\\\c\"}}" },
		{ NULL, NULL, "background", NULL },
		{ NULL, NULL, "", NULL },
		{ NULL, NULL, "Cascade", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *error = NULL;
		char *body = restops_delete_options(cases[i].uid, cases[i].rv,
		    cases[i].propagation, &error);

		if (cases[i].body == NULL) {
			if (body != NULL)
				fail_msg("case %zu: got %s, want an error", i, body);
			assert_non_null(error);
			free(error);
			continue;
		}
		if (body == NULL || strcmp(body, cases[i].body) != 0)
			fail_msg("case %zu: got %s, want %s", i, body != NULL ? body : error,
			    cases[i].body);
		free(body);
	}
}

/* A grace period goes in only when one is asked for: 0 is kube's forced delete. */
static void
delete_options_carry_a_grace_period_when_given(void **state)
{
	char *error = NULL;
	char *now = restops_delete_options_graced("u", NULL, NULL, 0, &error);
	char *later = restops_delete_options_graced(NULL, NULL, "Background", 30, &error);
	char *own = restops_delete_options_graced(NULL, NULL, NULL, -1, &error);

	(void)state;
	assert_string_equal(now, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	    "\"preconditions\":{\"uid\":\"u\"},\"gracePeriodSeconds\":0}");
	assert_string_equal(later, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	    "\"propagationPolicy\":\"Background\",\"gracePeriodSeconds\":30}");
	assert_string_equal(own, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"}");
	assert_null(restops_delete_options_graced(NULL, NULL, "Cascade", 0, &error));
	assert_non_null(strstr(error, "Cascade"));
	free(error);
	free(now);
	free(later);
	free(own);
}

static void
each_patch_type_has_its_content_type(void **state)
{
	(void)state;
	assert_string_equal(restops_patch_content_type(RESTOPS_PATCH_MERGE),
	    "application/merge-patch+json");
	assert_string_equal(restops_patch_content_type(RESTOPS_PATCH_STRATEGIC),
	    "application/strategic-merge-patch+json");
	assert_string_equal(restops_patch_content_type(RESTOPS_PATCH_JSON),
	    "application/json-patch+json");
}

/* Never called: every request below is refused before it is sent. */
static void
unexpected_done(struct restops_result *result, void *arg)
{
	(void)result;
	(void)arg;
	fail_msg("a refused request completed");
}

/* The verbs refuse what cannot be sent before they touch the client (NULL here). */
static void
verbs_refuse_bad_requests_before_sending(void **state)
{
	const struct resource *pods = resource_find("pods");
	char *error = NULL;

	(void)state;
#define REFUSED(call) do {						\
	assert_null(call);						\
	assert_non_null(error);						\
	free(error);							\
	error = NULL;							\
} while (0)
	REFUSED(restops_get(NULL, pods, "ns", "a/b", unexpected_done, NULL, &error));
	REFUSED(restops_get(NULL, pods, "ns", NULL, unexpected_done, NULL, &error));
	REFUSED(restops_list(NULL, pods, "ns", -1, unexpected_done, NULL, &error));
	REFUSED(restops_list(NULL, pods, "a/b", 1, unexpected_done, NULL, &error));
	REFUSED(restops_create(NULL, pods, "ns", NULL, unexpected_done, NULL, &error));
	REFUSED(restops_create(NULL, pods, "..", "{}", unexpected_done, NULL, &error));
	REFUSED(restops_update(NULL, pods, "ns", "..", "{}", unexpected_done, NULL, &error));
	REFUSED(restops_update_status(NULL, pods, "ns", NULL, "{}", unexpected_done, NULL,
	    &error));
	REFUSED(restops_patch(NULL, pods, "ns", "a", RESTOPS_PATCH_MERGE, NULL, unexpected_done,
	    NULL, &error));
	REFUSED(restops_patch_status(NULL, pods, "ns", "", RESTOPS_PATCH_JSON, "[]",
	    unexpected_done, NULL, &error));
	REFUSED(restops_apply(NULL, pods, "ns", "a", NULL, 0, "{}", unexpected_done, NULL,
	    &error));
	REFUSED(restops_delete(NULL, pods, "ns", "a", NULL, NULL, "Later", unexpected_done, NULL,
	    &error));
	REFUSED(restops_delete(NULL, pods, "ns", "x/y", "uid", NULL, NULL, unexpected_done, NULL,
	    &error));
	REFUSED(restops_delete_graced(NULL, pods, "ns", NULL, "uid", NULL, NULL, 0,
	    unexpected_done, NULL, &error));
	/* A collection delete without a namespace would empty the whole cluster. */
	REFUSED(restops_delete_collection(NULL, pods, NULL, NULL, unexpected_done, NULL,
	    &error));
	REFUSED(restops_delete_collection(NULL, pods, "", NULL, unexpected_done, NULL,
	    &error));
	REFUSED(restops_delete_collection(NULL, pods, "a/b", NULL, unexpected_done, NULL,
	    &error));
	REFUSED(restops_update_subresource(NULL, resource_find("namespaces"), NULL, "ns",
	    "fin/alize", "{}", unexpected_done, NULL, &error));
	REFUSED(restops_patch_subresource(NULL, pods, "ns", "a", "", RESTOPS_PATCH_MERGE, "{}",
	    unexpected_done, NULL, &error));
#undef REFUSED
	restops_cancel(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(namespaced_objects_live_under_their_namespace),
		cmocka_unit_test(cluster_scoped_objects_and_all_namespaces_have_no_namespace_segment),
		cmocka_unit_test(status_subresource_follows_the_object_name),
		cmocka_unit_test(hostile_names_are_encoded_or_refused),
		cmocka_unit_test(resource_whose_path_does_not_end_in_its_name_is_refused),
		cmocka_unit_test(query_values_are_percent_encoded),
		cmocka_unit_test(delete_options_carry_preconditions_and_propagation),
		cmocka_unit_test(delete_options_carry_a_grace_period_when_given),
		cmocka_unit_test(each_patch_type_has_its_content_type),
		cmocka_unit_test(verbs_refuse_bad_requests_before_sending),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
