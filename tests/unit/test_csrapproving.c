/*
 * test_csrapproving.c - the CSR approver (controllers/csrapproving.c) against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/certificates/approver/sarapprove.go and
 * pkg/apis/certificates/helpers.go (IsKubeletClientCSR); the cases are those of
 * sarapprove_test.go: TestRecognizers (each row with the usages of an RSA key and of
 * another, as kube runs it) and TestHandle (what a sync sends: nothing for a CSR no
 * recognizer takes, else the review and the approval it gates; the gate itself is
 * test_executor's), then the CSRs the approver leaves alone and the reviews' contents.
 * Requests are made here with OpenSSL (P-256 keys), as kube's test makes them.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "action.h"
#include "controller.h"
#include "controllers/csrapproving.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "util.h"

#define NELEM(a) (sizeof (a) / sizeof (a)[0])
#define KUBELET_CLIENT "kubernetes.io/kube-apiserver-client-kubelet"

/* A request: its subject (NULL: none), a DNS name (NULL: none). */
struct request {
	const char *cn;
	const char *orgs[2];
	const char *dns;
};

/* The base64 of the PEM of a request with r's subject and names, signed by a new P-256
 * key (malloc'd). */
static char *
request_b64(const struct request *r)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509_REQ *req = X509_REQ_new();
	X509_NAME *name = X509_NAME_new();
	BIO *bio = BIO_new(BIO_s_mem());
	char *pem, *out;
	long len;

	assert_non_null(key);
	if (r->cn != NULL)
		X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
		    (const unsigned char *)r->cn, -1, -1, 0);
	for (size_t i = 0; i < NELEM(r->orgs) && r->orgs[i] != NULL; i++)
		X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
		    (const unsigned char *)r->orgs[i], -1, -1, 0);
	X509_REQ_set_subject_name(req, name);
	X509_REQ_set_pubkey(req, key);
	if (r->dns != NULL) {
		STACK_OF(X509_EXTENSION) *exts = sk_X509_EXTENSION_new_null();
		char *value = xasprintf("DNS:%s", r->dns);
		X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name,
		    value);

		assert_non_null(ext);
		sk_X509_EXTENSION_push(exts, ext);
		X509_REQ_add_extensions(req, exts);
		sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
		free(value);
	}
	assert_true(X509_REQ_sign(req, key, EVP_sha256()) > 0);
	PEM_write_bio_X509_REQ(bio, req);
	len = BIO_get_mem_data(bio, &pem);
	out = xcalloc((size_t)(len / 3 + 2) * 4 + 1, 1);
	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)pem, (int)len);
	BIO_free(bio);
	X509_NAME_free(name);
	X509_REQ_free(req);
	EVP_PKEY_free(key);
	return out;
}

/* A CSR of signer by requester, with usages (a JSON array) and extra status members
 * (JSON object text, or NULL), its request made from r. */
static cJSON *
csr_new(const char *name, const char *signer, const char *requester, const char *usages,
    const struct request *r, const char *status)
{
	char *b64 = request_b64(r);
	char *text = xasprintf("{\"apiVersion\":\"certificates.k8s.io/v1\","
	    "\"kind\":\"CertificateSigningRequest\",\"metadata\":{\"name\":\"%s\","
	    "\"uid\":\"uid-%s\",\"resourceVersion\":\"7\"},\"spec\":{\"request\":\"%s\","
	    "\"signerName\":\"%s\",\"username\":\"%s\",\"uid\":\"u-1\","
	    "\"groups\":[\"system:bootstrappers\",\"system:authenticated\"],"
	    "\"extra\":{\"scopes\":[\"a\",\"b\"]},\"usages\":%s},\"status\":%s}", name, name,
	    b64, signer, requester, usages, status != NULL ? status : "{}");
	cJSON *csr = fixture_parse(text);

	free(text);
	free(b64);
	return csr;
}

#define USAGES_RSA "[\"key encipherment\",\"digital signature\",\"client auth\"]"
#define USAGES_EC "[\"digital signature\",\"client auth\"]"

/* --- the recognizers (kube's TestRecognizers) ------------------------------------------ */

struct recognizer_row {
	const char *name;
	const char *signer;
	const char *requester;
	struct request req;
	const char *extra_usage;	/* appended to the usages, or NULL */
	int node_client, self_node_client;
};

static const struct recognizer_row recognizer_rows[] = {
	/* the good case */
	{ "a kubelet's own client request", KUBELET_CLIENT, "system:node:foo",
	    { "system:node:foo", { "system:nodes", NULL }, NULL }, NULL, 1, 1 },
	/* the bad cases: neither takes them */
	{ "CN not system:node:", KUBELET_CLIENT, "system:node:foo",
	    { "mike", { "system:nodes", NULL }, NULL }, NULL, 0, 0 },
	{ "no organization", KUBELET_CLIENT, "system:node:foo",
	    { "system:node:foo", { NULL }, NULL }, NULL, 0, 0 },
	{ "organization system:master", KUBELET_CLIENT, "system:node:foo",
	    { "system:node:foo", { "system:master", NULL }, NULL }, NULL, 0, 0 },
	{ "server auth among the usages", KUBELET_CLIENT, "system:node:foo",
	    { "system:node:foo", { "system:nodes", NULL }, NULL }, "server auth", 0, 0 },
	{ "another signer", "example.com/not-correct", "system:node:foo",
	    { "system:node:foo", { "system:nodes", NULL }, NULL }, NULL, 0, 0 },
	{ "the kubelet-serving signer", "kubernetes.io/kubelet-serving", "system:node:foo",
	    { "system:node:foo", { "system:nodes", NULL }, NULL }, NULL, 0, 0 },
	/* CN other than the requester: a node client, not its own */
	{ "requested by another user", KUBELET_CLIENT, "joe",
	    { "system:node:foo", { "system:nodes", NULL }, NULL }, NULL, 1, 0 },
	{ "another node's name", KUBELET_CLIENT, "system:node:foo",
	    { "system:node:bar", { "system:nodes", NULL }, NULL }, NULL, 1, 0 },
	/* sqlkcm's own rows, from IsKubeletClientCSR */
	{ "two organizations", KUBELET_CLIENT, "system:node:foo",
	    { "system:node:foo", { "system:nodes", "extra" }, NULL }, NULL, 0, 0 },
	{ "a DNS name", KUBELET_CLIENT, "system:node:foo",
	    { "system:node:foo", { "system:nodes", NULL }, "foo.example.com" }, NULL, 0, 0 },
};

static void
recognizers_take_kubelet_client_requests(void **state)
{
	static const char *const usage_sets[] = { USAGES_RSA, USAGES_EC };
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < NELEM(recognizer_rows); i++) {
		const struct recognizer_row *row = &recognizer_rows[i];

		for (size_t u = 0; u < NELEM(usage_sets); u++) {
			cJSON *usages = fixture_parse(usage_sets[u]);
			char *usage_text, *error = NULL;
			cJSON *csr;
			int got, want = (row->node_client << CSRAPPROVING_NODE_CLIENT) |
			    (row->self_node_client << CSRAPPROVING_SELF_NODE_CLIENT);

			if (row->extra_usage != NULL)
				cJSON_AddItemToArray(usages, cJSON_CreateString(row->extra_usage));
			usage_text = cJSON_PrintUnformatted(usages);
			csr = csr_new("c", row->signer, row->requester, usage_text, &row->req,
			    NULL);
			got = csrapproving_recognize(csr, &error);
			if (got != want) {
				print_error("%s (usages %s): got %d (%s), want %d\n", row->name,
				    usage_text, got, error != NULL ? error : "", want);
				bad++;
			}
			free(error);
			free(usage_text);
			cJSON_Delete(usages);
			cJSON_Delete(csr);
		}
	}
	if (bad > 0)
		fail_msg("%d rows disagree", bad);
}

/* --- the CSRs it leaves alone, and bad requests ---------------------------------------- */

static void
issued_approved_or_denied_csrs_are_left_alone(void **state)
{
	static const struct request node = { "system:node:foo", { "system:nodes", NULL },
	    NULL };
	static const char *const statuses[] = {
		"{\"certificate\":\"Zm9v\"}",
		"{\"conditions\":[{\"type\":\"Approved\",\"status\":\"True\"}]}",
		"{\"conditions\":[{\"type\":\"Approved\",\"status\":\"False\"}]}",
		"{\"conditions\":[{\"type\":\"Denied\",\"status\":\"True\"}]}",
	};

	(void)state;
	for (size_t i = 0; i < NELEM(statuses); i++) {
		cJSON *csr = csr_new("c", KUBELET_CLIENT, "system:node:foo", USAGES_EC, &node,
		    statuses[i]);
		char *error = NULL;

		assert_int_equal(csrapproving_recognize(csr, &error), 0);
		assert_null(error);
		cJSON_Delete(csr);
	}
}

static void
request_that_does_not_parse_is_an_error_naming_the_csr(void **state)
{
	static const struct request node = { "system:node:foo", { "system:nodes", NULL },
	    NULL };
	cJSON *csr = csr_new("bad-one", KUBELET_CLIENT, "system:node:foo", USAGES_EC, &node,
	    NULL);
	char *error = NULL;

	(void)state;
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(csr, "spec"), "request",
	    cJSON_CreateString("bm90IGEgcmVxdWVzdA=="));
	assert_int_equal(csrapproving_recognize(csr, &error), -1);
	assert_non_null(error);
	assert_non_null(strstr(error, "unable to parse csr \"bad-one\""));
	free(error);
	cJSON_Delete(csr);
}

/* --- the sync (kube's TestHandle) ------------------------------------------------------ */

static int
world_setup(void **state)
{
	*state = ctl_world_new(&csrapproving_controller_type, NULL);
	return 0;
}

static int
world_teardown(void **state)
{
	ctl_world_free(*state);
	return 0;
}

/* A CSR both recognizers take: the self-node-client review and its approval, then the
 * node-client ones; the reviews ask kube's question of the requester, the approvals PUT
 * the cached CSR (its resourceVersion kept) with Approved added to the approval
 * subresource. */
static void
recognized_csr_is_reviewed_then_approved(void **state)
{
	struct ctl_world *w = *state;
	static const struct request node = { "system:node:foo", { "system:nodes", NULL },
	    NULL };
	static const char *const subresources[] = { "selfnodeclient", "nodeclient" };
	static const char *const messages[] = {
		"Auto approving self kubelet client certificate after SubjectAccessReview.",
		"Auto approving kubelet client certificate after SubjectAccessReview.",
	};
	const struct sync_result *r = &w->result;

	ctl_cache(w, resource_find("certificatesigningrequests"),
	    csr_new("node-csr", KUBELET_CLIENT, "system:node:foo", USAGES_EC, &node,
	    "{\"conditions\":[]}"));
	ctl_sync(w, "node-csr", 0);
	assert_int_equal(r->failed, 0);
	assert_int_equal(r->nwrites, 4);
	for (int k = 0; k < 2; k++) {
		const struct action *review = &r->writes[2 * k], *approve = &r->writes[2 * k + 1];
		const cJSON *spec = json_path(review->body, "spec"), *conditions, *c;

		assert_int_equal(review->type, ACTION_CREATE);
		assert_int_equal(review->review, 1);
		assert_string_equal(review->resource->name, "subjectaccessreviews");
		assert_string_equal(review->resource->path,
		    "/apis/authorization.k8s.io/v1/subjectaccessreviews");
		assert_string_equal(json_string(review->body, "kind"), "SubjectAccessReview");
		assert_string_equal(json_string(spec, "user"), "system:node:foo");
		assert_string_equal(json_string(spec, "uid"), "u-1");
		assert_int_equal(cJSON_GetArraySize(json_path(spec, "groups")), 2);
		assert_int_equal(cJSON_GetArraySize(json_path(spec, "extra.scopes")), 2);
		assert_string_equal(json_string(spec, "resourceAttributes.verb"), "create");
		assert_string_equal(json_string(spec, "resourceAttributes.group"),
		    "certificates.k8s.io");
		assert_string_equal(json_string(spec, "resourceAttributes.version"), "*");
		assert_string_equal(json_string(spec, "resourceAttributes.resource"),
		    "certificatesigningrequests");
		assert_string_equal(json_string(spec, "resourceAttributes.subresource"),
		    subresources[k]);

		assert_int_equal(approve->type, ACTION_UPDATE);
		assert_int_equal(approve->review, 0);
		assert_string_equal(approve->subresource, "approval");
		assert_string_equal(approve->name, "node-csr");
		assert_string_equal(approve->uid, "uid-node-csr");
		assert_string_equal(json_string(approve->body, "metadata.resourceVersion"), "7");
		conditions = json_path(approve->body, "status.conditions");
		assert_int_equal(cJSON_GetArraySize(conditions), 1);
		c = cJSON_GetArrayItem(conditions, 0);
		assert_string_equal(json_string(c, "type"), "Approved");
		assert_string_equal(json_string(c, "status"), "True");
		assert_string_equal(json_string(c, "reason"), "AutoApproved");
		assert_string_equal(json_string(c, "message"), messages[k]);
	}
}

/* A node client request by someone else (a bootstrap token): one review, nodeclient. */
static void
bootstrap_request_is_reviewed_as_nodeclient_only(void **state)
{
	struct ctl_world *w = *state;
	static const struct request node = { "system:node:foo", { "system:nodes", NULL },
	    NULL };

	ctl_cache(w, resource_find("certificatesigningrequests"),
	    csr_new("boot", KUBELET_CLIENT, "system:bootstrap:abcdef", USAGES_RSA, &node,
	    NULL));
	ctl_sync(w, "boot", 0);
	assert_int_equal(w->result.nwrites, 2);
	assert_string_equal(json_string(w->result.writes[0].body,
	    "spec.resourceAttributes.subresource"), "nodeclient");
	assert_string_equal(json_string(cJSON_GetArrayItem(json_path(w->result.writes[1].body,
	    "status.conditions"), 0), "message"),
	    "Auto approving kubelet client certificate after SubjectAccessReview.");
}

/* Not recognized, gone, or a request that does not parse: nothing sent; the last fails
 * the sync (backoff), as kube's handle returns an error. */
static void
unrecognized_gone_or_unparsable_csrs_send_nothing(void **state)
{
	struct ctl_world *w = *state;
	static const struct request user = { "jane", { "example", NULL }, NULL };
	cJSON *bad;

	ctl_cache(w, resource_find("certificatesigningrequests"),
	    csr_new("client", "kubernetes.io/kube-apiserver-client", "jane", USAGES_EC, &user,
	    NULL));
	ctl_sync(w, "client", 0);
	assert_int_equal(w->result.nwrites, 0);
	assert_int_equal(w->result.failed, 0);

	ctl_sync(w, "gone", 0);
	assert_int_equal(w->result.nwrites, 0);
	assert_int_equal(w->result.forget_expectations, 1);

	bad = csr_new("garbled", KUBELET_CLIENT, "system:node:foo", USAGES_EC, &user, NULL);
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(bad, "spec"), "request",
	    cJSON_CreateString("%%%"));
	ctl_cache(w, resource_find("certificatesigningrequests"), bad);
	ctl_sync(w, "garbled", 0);
	assert_int_equal(w->result.nwrites, 0);
	assert_int_equal(w->result.failed, 1);
}

/* The handlers queue what is added or changes; list_keys every cached CSR. */
static void
handlers_queue_csrs(void **state)
{
	struct ctl_world *w = *state;
	static const struct request node = { "system:node:foo", { "system:nodes", NULL },
	    NULL };
	char *keys;

	ctl_tell(w, INFORMER_ADDED, resource_find("certificatesigningrequests"),
	    csr_new("a", KUBELET_CLIENT, "x", USAGES_EC, &node, NULL), NULL);
	ctl_tell(w, INFORMER_UPDATED, resource_find("certificatesigningrequests"),
	    csr_new("b", KUBELET_CLIENT, "x", USAGES_EC, &node, NULL), NULL);
	ctl_tell(w, INFORMER_DELETED, resource_find("certificatesigningrequests"),
	    csr_new("c", KUBELET_CLIENT, "x", USAGES_EC, &node, NULL), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "a,b");
	free(keys);
	ctl_keys_clear(w);
	ctl_cache(w, resource_find("certificatesigningrequests"),
	    csr_new("z", KUBELET_CLIENT, "x", USAGES_EC, &node, NULL));
	ctl_cache(w, resource_find("certificatesigningrequests"),
	    csr_new("m", KUBELET_CLIENT, "x", USAGES_EC, &node, NULL));
	ctl_list_keys(w);
	keys = ctl_keys(w);
	assert_string_equal(keys, "m,z");
	free(keys);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, world_setup, world_teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recognizers_take_kubelet_client_requests),
		cmocka_unit_test(issued_approved_or_denied_csrs_are_left_alone),
		cmocka_unit_test(request_that_does_not_parse_is_an_error_naming_the_csr),
		T(recognized_csr_is_reviewed_then_approved),
		T(bootstrap_request_is_reviewed_as_nodeclient_only),
		T(unrecognized_gone_or_unparsable_csrs_send_nothing),
		T(handlers_queue_csrs),
	};
#undef T
	return cmocka_run_group_tests_name("csrapproving", tests, NULL, NULL);
}
