/*
 * test_csrsigning.c - the CSR signer (controllers/csrsigning.c) against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/certificates/signer (signer.go: which CSRs are
 * signed, duration) and authority (authority.go, policies.go: the certificate), and
 * pkg/apis/certificates/helpers.go (the kubelet signers' checks). The cases are those of
 * signer_test.go (TestSigner, TestHandle, Test_signer_duration), authority_test.go
 * (TestCertificateAuthority) and policies_test.go (TestKeyUsagesFromStrings), plus the
 * kubelet checks' failures one by one. The CAs and requests are made here at run time
 * with OpenSSL; nothing is read from disk but the CA files a test writes itself.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "action.h"
#include "controller.h"
#include "controllers/csrsigning.h"
#include "fixtures.h"
#include "registry.h"
#include "json.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

#define MINUTE 60.0

/* --- keys, CAs and requests made for the tests ------------------------------------------ */

/* A new key: "ec" (P-256), "ec224" (P-224, as kube's authority test), "rsa" (2048) or
 * "ed25519". */
static EVP_PKEY *
key_new(const char *kind)
{
	EVP_PKEY *key = NULL;

	if (strcmp(kind, "ec") == 0)
		key = EVP_EC_gen("P-256");
	else if (strcmp(kind, "ec224") == 0)
		key = EVP_EC_gen("P-224");
	else if (strcmp(kind, "rsa") == 0)
		key = EVP_RSA_gen(2048);
	else if (strcmp(kind, "ed25519") == 0)
		key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	if (key == NULL)
		fail_msg("cannot make a %s key", kind);
	return key;
}

static char *
bio_text(BIO *b)
{
	BUF_MEM *mem;

	BIO_get_mem_ptr(b, &mem);
	return xstrndup(mem->data, mem->length);
}

/* A test CA: its PEM certificate and key, and the certificate. */
struct test_ca {
	char *cert_pem;
	char *key_pem;
	X509 *cert;
	EVP_PKEY *key;
};

/* A self-signed CA of kind's key, valid from now - 24 h to not_after, with a key id. */
static struct test_ca
test_ca_new(const char *kind, double now, double not_after)
{
	struct test_ca ca;
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	BIO *b;

	ca.key = key_new(kind);
	ca.cert = X509_new();
	X509_set_version(ca.cert, X509_VERSION_3);
	ASN1_INTEGER_set(X509_get_serialNumber(ca.cert), 42);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(ca.cert), "CN", MBSTRING_UTF8,
	    (const unsigned char *)"test-ca", -1, -1, 0);
	X509_set_issuer_name(ca.cert, X509_get_subject_name(ca.cert));
	ASN1_TIME_set(X509_getm_notBefore(ca.cert), (time_t)(now - DAY));
	ASN1_TIME_set(X509_getm_notAfter(ca.cert), (time_t)not_after);
	X509_set_pubkey(ca.cert, ca.key);
	X509V3_set_ctx(&ctx, ca.cert, ca.cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints, "critical,CA:TRUE");
	X509_add_ext(ca.cert, ext, -1);
	X509_EXTENSION_free(ext);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_key_identifier, "hash");
	X509_add_ext(ca.cert, ext, -1);
	X509_EXTENSION_free(ext);
	if (X509_sign(ca.cert, ca.key, strcmp(kind, "ed25519") == 0 ? NULL : EVP_sha256()) <= 0)
		fail_msg("cannot sign the test CA");
	b = BIO_new(BIO_s_mem());
	PEM_write_bio_X509(b, ca.cert);
	ca.cert_pem = bio_text(b);
	BIO_free(b);
	b = BIO_new(BIO_s_mem());
	PEM_write_bio_PrivateKey(b, ca.key, NULL, NULL, 0, NULL, NULL);
	ca.key_pem = bio_text(b);
	BIO_free(b);
	return ca;
}

static void
test_ca_free(struct test_ca *ca)
{
	free(ca->cert_pem);
	free(ca->key_pem);
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
}

static struct csrsigning_ca *
ca_of(const struct test_ca *t)
{
	char *error = NULL;
	struct csrsigning_ca *ca = csrsigning_ca_new(t->cert_pem, strlen(t->cert_pem),
	    t->key_pem, strlen(t->key_pem), "ca.crt", "ca.key", &error);

	if (ca == NULL)
		fail_msg("loading the test CA: %s", error);
	return ca;
}

/*
 * A request as spec.request holds it (base64 of the PEM; malloc'd), described by spec:
 * items separated by ';', each CN=, O=, L=, DC=, DNS=, IP=, email=, URI= (in the subject or
 * the subjectAltNames, in the order given) or key= (key_new's kind; default "ec").
 */
static char *
request_b64(const char *spec)
{
	char *copy = xstrdup(spec), *item, *save = NULL, *pem, *b64;
	const char *kind = "ec";
	X509_REQ *req = X509_REQ_new();
	X509_NAME *name = X509_REQ_get_subject_name(req);
	EVP_PKEY *key;
	struct buf sans;
	BIO *b;

	buf_init(&sans);
	for (item = strtok_r(copy, ";", &save); item != NULL; item = strtok_r(NULL, ";", &save)) {
		char *value = strchr(item, '=');

		if (value == NULL)
			fail_msg("bad test request item %s", item);
		*value++ = '\0';
		if (strcmp(item, "key") == 0)
			kind = spec + (value - copy);
		else if (strcmp(item, "CN") == 0 || strcmp(item, "O") == 0 ||
		    strcmp(item, "L") == 0 || strcmp(item, "DC") == 0)
			X509_NAME_add_entry_by_txt(name, item, MBSTRING_UTF8,
			    (const unsigned char *)value, -1, -1, 0);
		else
			buf_printf(&sans, "%s%s:%s", sans.len > 0 ? "," : "", item, value);
	}
	if (sans.len > 0) {
		STACK_OF(X509_EXTENSION) *exts = sk_X509_EXTENSION_new_null();
		X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name,
		    sans.data);

		if (ext == NULL)
			fail_msg("bad test SANs %s", sans.data);
		sk_X509_EXTENSION_push(exts, ext);
		X509_REQ_add_extensions(req, exts);
		sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
	}
	buf_free(&sans);
	{
		char k[16];

		snprintf(k, sizeof k, "%.*s", (int)strcspn(kind, ";"), kind);
		key = key_new(k);
		X509_REQ_set_pubkey(req, key);
		X509_REQ_sign(req, key, strcmp(k, "ed25519") == 0 ? NULL : EVP_sha256());
	}
	b = BIO_new(BIO_s_mem());
	PEM_write_bio_X509_REQ(b, req);
	pem = bio_text(b);
	BIO_free(b);
	b64 = xmalloc(strlen(pem) / 3 * 4 + 8);
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)pem, (int)strlen(pem));
	free(pem);
	free(copy);
	X509_REQ_free(req);
	EVP_PKEY_free(key);
	return b64;
}

static char *
b64_of(const char *text)
{
	char *b64 = xmalloc(strlen(text) / 3 * 4 + 8);

	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)text, (int)strlen(text));
	return b64;
}

/* Parses a certificate's PEM; fails the test when it does not. */
static X509 *
cert_parse(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *cert = PEM_read_bio_X509(b, NULL, NULL, NULL);

	BIO_free(b);
	if (cert == NULL)
		fail_msg("not a certificate: %s", pem);
	return cert;
}

static double
asn1_seconds(const ASN1_TIME *t)
{
	struct tm tm;

	assert_int_equal(ASN1_TIME_to_tm(t, &tm), 1);
	return (double)timegm(&tm);
}

/* The certificate's key usage bits as Go numbers them (bit n: 1 << n). */
static unsigned
cert_key_usage(X509 *cert)
{
	ASN1_BIT_STRING *bits = X509_get_ext_d2i(cert, NID_key_usage, NULL, NULL);
	unsigned ku = 0;

	for (int i = 0; bits != NULL && i < 9; i++) {
		if (ASN1_BIT_STRING_get_bit(bits, i))
			ku |= 1u << i;
	}
	ASN1_BIT_STRING_free(bits);
	return ku;
}

/* The certificate's extended key usages as short names, comma-separated, in order. */
static char *
cert_ext_usages(X509 *cert)
{
	EXTENDED_KEY_USAGE *eku = X509_get_ext_d2i(cert, NID_ext_key_usage, NULL, NULL);
	struct buf b;

	buf_init(&b);
	buf_append_str(&b, "");
	for (int i = 0; eku != NULL && i < sk_ASN1_OBJECT_num(eku); i++)
		buf_printf(&b, "%s%s", i > 0 ? "," : "",
		    OBJ_nid2sn(OBJ_obj2nid(sk_ASN1_OBJECT_value(eku, i))));
	EXTENDED_KEY_USAGE_free(eku);
	return buf_detach(&b);
}

/* The certificate's subject, one line. */
static char *
cert_subject(X509 *cert)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s;

	X509_NAME_print_ex(b, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
	s = bio_text(b);
	BIO_free(b);
	return s;
}

/* Verifies cert against ca as a relying party would (a chain to it). */
static int
cert_verifies(X509 *cert, X509 *ca, double at)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int ok;

	X509_STORE_add_cert(store, ca);
	X509_STORE_CTX_init(ctx, store, cert, NULL);
	X509_STORE_CTX_set_time(ctx, 0, (time_t)at);
	ok = X509_verify_cert(ctx) == 1;
	if (!ok)
		print_message("# verify: %s\n",
		    X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return ok;
}

/* --- validation per signer -------------------------------------------------------------- */

struct validate_row {
	const char *name;
	enum csrsigning_signer signer;
	const char *req;
	const char *usages[5];
	const char *want;		/* NULL: passes */
};

static const struct validate_row validate_rows[] = {
	/* TestHandle's cases */
	{ "kube-apiserver-client: client auth, digital signature, key encipherment",
	    CSRSIGNING_KUBE_APISERVER_CLIENT, "CN=hello-world;O=some-org",
	    { "client auth", "digital signature", "key encipherment" }, NULL },
	{ "kube-apiserver-client: without key encipherment", CSRSIGNING_KUBE_APISERVER_CLIENT,
	    "CN=hello-world;O=some-org", { "client auth", "digital signature" }, NULL },
	{ "kube-apiserver-client: an unexpected usage", CSRSIGNING_KUBE_APISERVER_CLIENT,
	    "CN=hello-world;O=some-org",
	    { "server auth", "client auth", "digital signature", "key encipherment" },
	    "invalid usage for client certificate: server auth" },
	{ "kube-apiserver-client: no client auth", CSRSIGNING_KUBE_APISERVER_CLIENT,
	    "CN=hello-world", { "digital signature" },
	    "missing required usage for client certificate: client auth" },
	{ "kube-apiserver-client-kubelet: signed", CSRSIGNING_KUBELET_CLIENT,
	    "CN=system:node:hello-world;O=system:nodes",
	    { "client auth", "digital signature", "key encipherment" }, NULL },
	{ "kube-apiserver-client-kubelet: without key encipherment", CSRSIGNING_KUBELET_CLIENT,
	    "CN=system:node:hello-world;O=system:nodes", { "client auth", "digital signature" }, NULL },
	{ "legacy-unknown: anything", CSRSIGNING_LEGACY_UNKNOWN, "", { NULL }, NULL },
	{ "kubelet-serving: signed", CSRSIGNING_KUBELET_SERVING,
	    "CN=system:node:testnode;O=system:nodes;DNS=example.com",
	    { "server auth", "digital signature", "key encipherment" }, NULL },
	{ "kubelet-serving: without key encipherment", CSRSIGNING_KUBELET_SERVING,
	    "CN=system:node:testnode;O=system:nodes;DNS=example.com",
	    { "server auth", "digital signature" }, NULL },
	/* ValidateKubeletServingCSR's failures, in its order */
	{ "kubelet-serving: organization not system:nodes", CSRSIGNING_KUBELET_SERVING,
	    "CN=system:node:n;O=other;DNS=example.com",
	    { "server auth", "digital signature" }, "subject organization is not system:nodes" },
	{ "kubelet-serving: two organizations", CSRSIGNING_KUBELET_SERVING,
	    "CN=system:node:n;O=system:nodes;O=x;DNS=example.com",
	    { "server auth", "digital signature" }, "subject organization is not system:nodes" },
	{ "kubelet-serving: no DNS nor IP", CSRSIGNING_KUBELET_SERVING,
	    "CN=system:node:n;O=system:nodes", { "server auth", "digital signature" },
	    "DNS or IP subjectAltName is required" },
	{ "kubelet-serving: an IP alone is enough", CSRSIGNING_KUBELET_SERVING,
	    "CN=system:node:n;O=system:nodes;IP=10.0.0.1",
	    { "server auth", "digital signature" }, NULL },
	{ "kubelet-serving: an email", CSRSIGNING_KUBELET_SERVING,
	    "CN=system:node:n;O=system:nodes;DNS=n;email=a@b.c",
	    { "server auth", "digital signature" }, "Email subjectAltNames are not allowed" },
	{ "kubelet-serving: a URI", CSRSIGNING_KUBELET_SERVING,
	    "CN=system:node:n;O=system:nodes;DNS=n;URI=spiffe://x/y",
	    { "server auth", "digital signature" }, "URI subjectAltNames are not allowed" },
	{ "kubelet-serving: client usages", CSRSIGNING_KUBELET_SERVING,
	    "CN=system:node:n;O=system:nodes;DNS=n", { "client auth", "digital signature" },
	    "usages did not match [digital signature key encipherment server auth]" },
	{ "kubelet-serving: an extra usage", CSRSIGNING_KUBELET_SERVING,
	    "CN=system:node:n;O=system:nodes;DNS=n",
	    { "server auth", "digital signature", "client auth" },
	    "usages did not match [digital signature key encipherment server auth]" },
	{ "kubelet-serving: usages repeated are a set", CSRSIGNING_KUBELET_SERVING,
	    "CN=system:node:n;O=system:nodes;DNS=n",
	    { "server auth", "digital signature", "server auth" }, NULL },
	{ "kubelet-serving: CN not system:node:", CSRSIGNING_KUBELET_SERVING,
	    "CN=node-1;O=system:nodes;DNS=n", { "server auth", "digital signature" },
	    "subject common name does not begin with system:node:" },
	/* ValidateKubeletClientCSR's failures, in its order */
	{ "kubelet-client: organization not system:nodes", CSRSIGNING_KUBELET_CLIENT,
	    "CN=system:node:n", { "client auth", "digital signature" },
	    "subject organization is not system:nodes" },
	{ "kubelet-client: a DNS name", CSRSIGNING_KUBELET_CLIENT,
	    "CN=system:node:n;O=system:nodes;DNS=n", { "client auth", "digital signature" },
	    "DNS subjectAltNames are not allowed" },
	{ "kubelet-client: an email", CSRSIGNING_KUBELET_CLIENT,
	    "CN=system:node:n;O=system:nodes;email=a@b.c",
	    { "client auth", "digital signature" }, "Email subjectAltNames are not allowed" },
	{ "kubelet-client: an IP", CSRSIGNING_KUBELET_CLIENT,
	    "CN=system:node:n;O=system:nodes;IP=::1",
	    { "client auth", "digital signature" }, "IP subjectAltNames are not allowed" },
	{ "kubelet-client: a URI", CSRSIGNING_KUBELET_CLIENT,
	    "CN=system:node:n;O=system:nodes;URI=spiffe://x/y",
	    { "client auth", "digital signature" }, "URI subjectAltNames are not allowed" },
	{ "kubelet-client: CN not system:node: (before the usages)", CSRSIGNING_KUBELET_CLIENT,
	    "CN=system:nodes;O=system:nodes", { "server auth" },
	    "subject common name does not begin with system:node:" },
	{ "kubelet-client: serving usages", CSRSIGNING_KUBELET_CLIENT,
	    "CN=system:node:n;O=system:nodes", { "server auth", "digital signature" },
	    "usages did not match [client auth digital signature key encipherment]" },
};

static void
validate_row(void **state)
{
	const struct validate_row *row = *state;
	struct csrsigning_request req;
	char *b64 = request_b64(row->req), *error = NULL, *got;
	int n = 0;

	while (n < 5 && row->usages[n] != NULL)
		n++;
	if (csrsigning_request_parse(b64, &req, &error) != 0)
		fail_msg("parse: %s", error);
	got = csrsigning_validate(row->signer, &req, row->usages, n);
	if (row->want == NULL && got != NULL)
		fail_msg("refused: %s", got);
	if (row->want != NULL)
		assert_string_equal(got != NULL ? got : "(passes)", row->want);
	free(got);
	csrsigning_request_clear(&req);
	free(b64);
}

/* --- duration, usages, validity --------------------------------------------------------- */

/* Test_signer_duration, with a TTL of an hour. */
static void
duration_bounds(void **state)
{
	static const struct {
		const char *name;
		int has;
		long long asked;
		double want;
	} cases[] = {
		{ "can request shorter duration than TTL", 1, 30 * 60, 30 * MINUTE },
		{ "cannot request longer duration than TTL", 1, 3 * 3600, HOUR },
		{ "cannot request negative duration", 1, -60, 10 * MINUTE },
		{ "cannot request duration less than 10 mins", 1, 10 * 60 - 1, 10 * MINUTE },
		{ "can request duration of exactly 10 mins", 1, 10 * 60, 10 * MINUTE },
		{ "can request duration equal to the default", 1, 3600, HOUR },
		{ "can choose not to request a duration to get the default", 0, 0, HOUR },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		double got = csrsigning_duration(cases[i].has, cases[i].asked, HOUR);

		if (got != cases[i].want)
			fail_msg("%s: %g s, want %g s", cases[i].name, got, cases[i].want);
	}
	/* The default --cluster-signing-duration, 8760h, caps a year and more. */
	assert_true(csrsigning_duration(1, 2147483647, 8760 * HOUR) == 8760 * HOUR);
}

/* TestKeyUsagesFromStrings. */
static void
key_usages(void **state)
{
	static const struct {
		const char *usages[5];
		unsigned ku, eku;
		const char *error;
	} cases[] = {
		{ { "signing" }, CSRSIGNING_KU_DIGITAL_SIGNATURE, 0, NULL },
		{ { "client auth" }, 0, 1u << CSRSIGNING_EKU_CLIENT_AUTH, NULL },
		{ { "client auth", "client auth" }, 0, 1u << CSRSIGNING_EKU_CLIENT_AUTH, NULL },
		{ { "cert sign", "encipher only" },
		    CSRSIGNING_KU_CERT_SIGN | CSRSIGNING_KU_ENCIPHER_ONLY, 0, NULL },
		{ { "ocsp signing", "crl sign", "s/mime", "content commitment" },
		    CSRSIGNING_KU_CRL_SIGN | CSRSIGNING_KU_CONTENT_COMMITMENT,
		    1u << CSRSIGNING_EKU_EMAIL_PROTECTION | 1u << CSRSIGNING_EKU_OCSP_SIGNING,
		    NULL },
		{ { "unsupported string" }, 0, 0,
		    "unrecognized usage values: [\"unsupported string\"]" },
		{ { "client auth", "x", "y\"z" }, 0, 0,
		    "unrecognized usage values: [\"x\" \"y\\\"z\"]" },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		unsigned ku = 99, eku = 99;
		char *error = NULL;
		int n = 0, rc;

		while (n < 5 && cases[i].usages[n] != NULL)
			n++;
		rc = csrsigning_key_usages(cases[i].usages, n, &ku, &eku, &error);
		if (cases[i].error != NULL) {
			assert_int_equal(rc, -1);
			assert_string_equal(error, cases[i].error);
			free(error);
			continue;
		}
		assert_int_equal(rc, 0);
		if (ku != cases[i].ku || eku != cases[i].eku)
			fail_msg("case %zu: ku %#x eku %#x, want %#x %#x", i, ku, eku, cases[i].ku,
			    cases[i].eku);
	}
}

/* TestCertificateAuthority's times: the backdate, short certificates, the CA's end. */
static void
validity(void **state)
{
	static const struct {
		const char *name;
		struct csrsigning_policy p;
		double ca_end;		/* after NOW */
		double before, after;	/* after NOW */
		const char *error;
	} cases[] = {
		{ "ca info", { HOUR, 0, 0 }, DAY, 0, HOUR, NULL },
		{ "backdate without short", { HOUR, 5 * MINUTE, 0 }, DAY, -5 * MINUTE,
		    55 * MINUTE, NULL },
		{ "backdate without short and super small ttl", { MINUTE, 5 * MINUTE, 0 }, DAY,
		    -5 * MINUTE, -4 * MINUTE, NULL },
		{ "backdate with short", { HOUR, 5 * MINUTE, 8 * HOUR }, DAY, -5 * MINUTE, HOUR,
		    NULL },
		{ "backdate with short and super small ttl", { MINUTE, 5 * MINUTE, 8 * HOUR }, DAY,
		    -5 * MINUTE, MINUTE, NULL },
		{ "backdate with short but longer ttl", { DAY, 5 * MINUTE, 8 * HOUR }, DAY,
		    -5 * MINUTE, DAY - 5 * MINUTE, NULL },
		{ "exactly short is backdated", { 8 * HOUR, 5 * MINUTE, 8 * HOUR }, DAY,
		    -5 * MINUTE, 8 * HOUR - 5 * MINUTE, NULL },
		{ "truncate expiration", { 2 * DAY, 0, 0 }, DAY, 0, DAY, NULL },
		{ "expired ca", { HOUR, 0, 0 }, 0, 0, 0,
		    "the signer has expired: NotAfter=2026-01-01 00:00:00 +0000 UTC" },
		{ "expired ca with backdate", { HOUR, 5 * MINUTE, 0 }, 0, 0, 0,
		    "refusing to sign a certificate that expired in the past: "
		    "NotAfter=2026-01-01 00:00:00 +0000 UTC" },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		double nb = 0, na = 0;
		char *error = NULL;
		int rc = csrsigning_validity(&cases[i].p, NOW, NOW + cases[i].ca_end, &nb, &na,
		    &error);

		if (cases[i].error != NULL) {
			if (rc == 0 || strcmp(error, cases[i].error) != 0)
				fail_msg("%s: %s", cases[i].name, error != NULL ? error : "no error");
			free(error);
			continue;
		}
		if (rc != 0 || nb != NOW + cases[i].before || na != NOW + cases[i].after)
			fail_msg("%s: [%g, %g] after now, want [%g, %g] (%s)", cases[i].name,
			    nb - NOW, na - NOW, cases[i].before, cases[i].after,
			    error != NULL ? error : "");
	}
	/* kube's policy: 5 min back, short below 8 h. */
	assert_true(csrsigning_policy_kube(HOUR).backdate == 5 * MINUTE);
	assert_true(csrsigning_policy_kube(HOUR).short_ttl == 8 * HOUR);
}

/* --- signing ---------------------------------------------------------------------------- */

/* Signs spec's request with a fresh CA of ca_kind for usages under kube's policy for ttl
 * at the real time; checks what every certificate must be; returns it. */
static X509 *
sign_checked(struct test_ca *ca, const char *spec, const char *const *usages,
    int n, double ttl, double now)
{
	struct csrsigning_ca *signer = ca_of(ca);
	struct csrsigning_policy p = csrsigning_policy_kube(ttl);
	struct csrsigning_request req;
	char *b64 = request_b64(spec), *error = NULL, *pem;
	BASIC_CONSTRAINTS *bc;
	AUTHORITY_KEYID *akid;
	X509 *cert;

	if (csrsigning_request_parse(b64, &req, &error) != 0)
		fail_msg("parse: %s", error);
	pem = csrsigning_sign(signer, &req, usages, n, &p, now, &error);
	if (pem == NULL)
		fail_msg("sign: %s", error);
	cert = cert_parse(pem);
	assert_int_equal(X509_get_version(cert), X509_VERSION_3);
	assert_true(cert_verifies(cert, ca->cert, now));
	assert_int_equal(X509_NAME_cmp(X509_get_issuer_name(cert),
	    X509_get_subject_name(ca->cert)), 0);
	bc = X509_get_ext_d2i(cert, NID_basic_constraints, NULL, NULL);
	assert_non_null(bc);
	assert_false(bc->ca);
	BASIC_CONSTRAINTS_free(bc);
	akid = X509_get_ext_d2i(cert, NID_authority_key_identifier, NULL, NULL);
	assert_non_null(akid);
	assert_int_equal(ASN1_OCTET_STRING_cmp(akid->keyid, X509_get0_subject_key_id(ca->cert)),
	    0);
	AUTHORITY_KEYID_free(akid);
	/* A serial of 128 random bits at most, never the same twice. */
	assert_true(ASN1_STRING_length(X509_get0_serialNumber(cert)) <= 17);
	free(pem);
	free(b64);
	csrsigning_request_clear(&req);
	csrsigning_ca_free(signer);
	return cert;
}

/* TestSigner: legacy-unknown, a TTL of an hour, 3 h asked for. */
static void
sign_kubes_test_signer(void **state)
{
	static const char *const usages[] = { "signing", "key encipherment", "server auth",
	    "client auth" };
	const char *spec = "CN=system:node:k-a-node-s36b;O=system:nodes";
	double now = (double)time(NULL);
	struct test_ca ca = test_ca_new("rsa", now, now + 10 * DAY);
	X509 *cert = sign_checked(&ca, spec, usages, 4, csrsigning_duration(1, 3 * 3600, HOUR),
	    now);
	char *subject = cert_subject(cert), *eku = cert_ext_usages(cert);

	(void)state;
	assert_string_equal(subject, "CN=system:node:k-a-node-s36b,O=system:nodes");
	assert_int_equal(cert_key_usage(cert),
	    CSRSIGNING_KU_DIGITAL_SIGNATURE | CSRSIGNING_KU_KEY_ENCIPHERMENT);
	assert_string_equal(eku, "serverAuth,clientAuth");
	assert_true(asn1_seconds(X509_get0_notBefore(cert)) == now - 5 * MINUTE);
	assert_true(asn1_seconds(X509_get0_notAfter(cert)) == now + HOUR);
	assert_int_equal(X509_get_signature_nid(cert), NID_sha256WithRSAEncryption);
	assert_int_equal(EVP_PKEY_get_base_id(X509_get0_pubkey(cert)), EVP_PKEY_EC);
	free(subject);
	free(eku);
	X509_free(cert);
	test_ca_free(&ca);
}

/* The subject as Go writes it: C, ST, L, O, OU, CN in that order, the Os in one RDN, the
 * request's own order and the attributes Go does not know (DC) not kept; every SAN kind
 * carried. */
static void
sign_subject_and_names(void **state)
{
	static const char *const usages[] = { "digital signature", "server auth" };
	const char *spec = "L=somewhere;DC=dropped;CN=system:node:n;O=b-org;O=a-org;DNS=n.example.com;"
	    "DNS=n;IP=10.0.0.7;IP=::1;email=x@example.com;"
	    "URI=help://me@what:8080/where/when?why=true;key=ec224";
	double now = (double)time(NULL);
	struct test_ca ca = test_ca_new("ec", now, now + 10 * DAY);
	X509 *cert = sign_checked(&ca, spec, usages, 2, HOUR, now);
	char *subject = cert_subject(cert);
	GENERAL_NAMES *sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	const X509_NAME *name = X509_get_subject_name(cert);

	(void)state;
	/* RFC 2253 prints the last RDN first; the two Os share one ("+"); the DC is gone. */
	assert_string_equal(subject, "CN=system:node:n,O=b-org+O=a-org,L=somewhere");
	assert_int_equal(X509_NAME_entry_count(name), 4);
	assert_int_equal(X509_NAME_ENTRY_set(X509_NAME_get_entry(name, 1)),
	    X509_NAME_ENTRY_set(X509_NAME_get_entry(name, 2)));
	assert_int_equal(ASN1_STRING_type(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name,
	    3))), V_ASN1_PRINTABLESTRING);
	assert_non_null(sans);
	assert_int_equal(sk_GENERAL_NAME_num(sans), 6);
	assert_int_equal(sk_GENERAL_NAME_value(sans, 0)->type, GEN_DNS);
	assert_int_equal(sk_GENERAL_NAME_value(sans, 2)->type, GEN_EMAIL);
	assert_int_equal(sk_GENERAL_NAME_value(sans, 3)->type, GEN_IPADD);
	assert_int_equal(sk_GENERAL_NAME_value(sans, 5)->type, GEN_URI);
	assert_int_equal(X509_get_signature_nid(cert), NID_ecdsa_with_SHA256);
	/* Short (1 h < 8 h): not backdated at its end. */
	assert_true(asn1_seconds(X509_get0_notAfter(cert)) == now + HOUR);
	GENERAL_NAMES_free(sans);
	free(subject);
	X509_free(cert);
	test_ca_free(&ca);
}

/* A certificate never outlives its CA; a year is backdated at its end too. */
static void
sign_capped_by_the_ca(void **state)
{
	static const char *const usages[] = { "client auth" };
	const char *spec = "CN=me;key=rsa";
	double now = (double)time(NULL);
	struct test_ca ca = test_ca_new("ed25519", now, now + 2 * DAY);
	struct test_ca long_ca = test_ca_new("ec", now, now + 800 * DAY);
	X509 *cert = sign_checked(&ca, spec, usages, 1, 8760 * HOUR, now);
	X509 *year = sign_checked(&long_ca, spec, usages, 1, 8760 * HOUR, now);

	(void)state;
	assert_true(asn1_seconds(X509_get0_notAfter(cert)) == now + 2 * DAY);
	assert_true(asn1_seconds(X509_get0_notAfter(year)) == now + 8760 * HOUR - 5 * MINUTE);
	assert_int_equal(cert_key_usage(cert), 0);
	X509_free(cert);
	X509_free(year);
	test_ca_free(&ca);
	test_ca_free(&long_ca);
}

/* kube's authority refuses what it cannot sign: a bad signature, unknown usages, a CA that
 * has expired. */
static void
sign_refusals(void **state)
{
	static const char *const good[] = { "client auth" };
	static const char *const bad[] = { "client auth", "teleportation" };
	const char *spec = "CN=me";
	double now = (double)time(NULL);
	struct test_ca ca = test_ca_new("ec", now, now + DAY);
	struct csrsigning_ca *signer = ca_of(&ca);
	struct csrsigning_policy p = csrsigning_policy_kube(HOUR);
	struct csrsigning_request req;
	char *b64 = request_b64(spec), *error = NULL;
	const unsigned char *sig;

	(void)state;
	assert_int_equal(csrsigning_request_parse(b64, &req, &error), 0);
	assert_null(csrsigning_sign(signer, &req, bad, 2, &p, now, &error));
	assert_string_equal(error, "unrecognized usage values: [\"teleportation\"]");
	free(error);
	error = NULL;
	assert_null(csrsigning_sign(signer, &req, good, 1, &p, now + 2 * DAY, &error));
	assert_non_null(strstr(error, "the signer has expired"));
	free(error);
	error = NULL;
	/* One bit of the signature flipped. */
	{
		const ASN1_BIT_STRING *s;
		const X509_ALGOR *alg;

		X509_REQ_get0_signature(req.req, &s, &alg);
		sig = ASN1_STRING_get0_data(s);
		((unsigned char *)sig)[ASN1_STRING_length(s) / 2] ^= 0x10;
	}
	assert_null(csrsigning_sign(signer, &req, good, 1, &p, now, &error));
	assert_string_equal(error, "unable to verify certificate request signature");
	free(error);
	csrsigning_request_clear(&req);
	csrsigning_ca_free(signer);
	free(b64);
	test_ca_free(&ca);
}

/* Requests that do not parse say why, and no more. */
static void
request_parse_refusals(void **state)
{
	static const char *const texts[] = {
		"",
		"not base64!",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
		"-----BEGIN CERTIFICATE REQUEST-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE REQUEST-----\n",
		"just text",
	};
	struct csrsigning_request req;

	(void)state;
	for (size_t i = 0; i < NELEM(texts); i++) {
		char *b64 = i < 2 ? xstrdup(texts[i]) : b64_of(texts[i]), *error = NULL;

		if (csrsigning_request_parse(b64, &req, &error) == 0)
			fail_msg("text %zu parsed", i);
		assert_non_null(error);
		assert_null(req.req);
		free(error);
		free(b64);
	}
}

/* A request whose subject holds the n entries given (nid, ASN.1 string type, bytes,
 * length), signed with a fresh P-256 key: base64 of its PEM (malloc'd). */
struct name_entry {
	int nid;
	int type;
	const char *bytes;
	int len;
};

static char *
request_with_name(const struct name_entry *entries, int n)
{
	EVP_PKEY *key = key_new("ec");
	X509_REQ *req = X509_REQ_new();
	X509_NAME *name = X509_REQ_get_subject_name(req);
	char *pem, *b64;
	BIO *b;

	for (int i = 0; i < n; i++) {
		X509_NAME_ENTRY *e = X509_NAME_ENTRY_create_by_NID(NULL, entries[i].nid,
		    entries[i].type, (const unsigned char *)entries[i].bytes, entries[i].len);

		if (e == NULL || !X509_NAME_add_entry(name, e, -1, 0))
			fail_msg("cannot make name entry %d (nid %d, type %d)", i, entries[i].nid,
			    entries[i].type);
		X509_NAME_ENTRY_free(e);
	}
	X509_REQ_set_pubkey(req, key);
	X509_REQ_sign(req, key, EVP_sha256());
	b = BIO_new(BIO_s_mem());
	PEM_write_bio_X509_REQ(b, req);
	pem = bio_text(b);
	BIO_free(b);
	b64 = b64_of(pem);
	free(pem);
	X509_REQ_free(req);
	EVP_PKEY_free(key);
	return b64;
}

/* Hostile names: a NUL inside the CN or the O counts as Go counts it (a byte of the
 * string), a BMPString reads as its text, a UniversalString (which Go does not read) is
 * refused. */
static void
hostile_names(void **state)
{
	static const char *const usages[] = { "digital signature", "client auth" };
	static const unsigned char bmp[] = { 0, 's', 0, 'y', 0, 's', 0, 't', 0, 'e', 0, 'm',
	    0, ':', 0, 'n', 0, 'o', 0, 'd', 0, 'e', 0, ':', 0, 'b' };
	const struct {
		const char *name;
		struct name_entry entries[2];
		int parses;
		const char *want;	/* the kubelet client rules' answer; NULL: passes */
	} cases[] = {
		{ "a NUL after the CN's prefix", { { NID_organizationName, V_ASN1_UTF8STRING,
		    "system:nodes", 12 }, { NID_commonName, V_ASN1_UTF8STRING,
		    "system:node:a\0b", 15 } }, 1, NULL },
		{ "a NUL inside the CN's prefix", { { NID_organizationName, V_ASN1_UTF8STRING,
		    "system:nodes", 12 }, { NID_commonName, V_ASN1_UTF8STRING,
		    "system\0node:a", 13 } }, 1,
		    "subject common name does not begin with system:node:" },
		{ "an O of system:nodes and a NUL", { { NID_organizationName, V_ASN1_UTF8STRING,
		    "system:nodes\0", 13 }, { NID_commonName, V_ASN1_UTF8STRING,
		    "system:node:a", 13 } }, 1, "subject organization is not system:nodes" },
		{ "a BMPString CN", { { NID_organizationName, V_ASN1_PRINTABLESTRING,
		    "system:nodes", 12 }, { NID_commonName, V_ASN1_BMPSTRING, (const char *)bmp,
		    (int)sizeof bmp } }, 1, NULL },
		{ "a CN of a string type Go does not read", { { NID_organizationName, V_ASN1_UTF8STRING,
		    "system:nodes", 12 }, { NID_commonName, V_ASN1_UNIVERSALSTRING, "\0\0\0x",
		    4 } }, 0, NULL },
	};

	(void)state;
	for (size_t i = 0; i < NELEM(cases); i++) {
		char *b64 = request_with_name(cases[i].entries, 2), *error = NULL, *got;
		struct csrsigning_request req;
		int rc = csrsigning_request_parse(b64, &req, &error);

		if (rc != (cases[i].parses ? 0 : -1))
			fail_msg("%s: parse %d (%s)", cases[i].name, rc, error ? error : "");
		if (rc != 0) {
			assert_non_null(strstr(error, "unsupported string type"));
			free(error);
			free(b64);
			continue;
		}
		got = csrsigning_validate(CSRSIGNING_KUBELET_CLIENT, &req, usages, 2);
		if ((got == NULL) != (cases[i].want == NULL) ||
		    (got != NULL && strcmp(got, cases[i].want) != 0))
			fail_msg("%s: %s", cases[i].name, got != NULL ? got : "passes");
		free(got);
		csrsigning_request_clear(&req);
		free(b64);
	}
}

/* The key forms kube reads: PKCS #8, PKCS #1 and SEC 1, SEC 1 after an EC PARAMETERS
 * block (openssl ecparam -genkey); an encrypted key is refused, never asked a passphrase
 * for. */
static void
ca_key_forms(void **state)
{
	double now = (double)time(NULL);
	struct test_ca ec = test_ca_new("ec", now, now + DAY), rsa = test_ca_new("rsa", now,
	    now + DAY);
	const struct test_ca *cas[] = { &ec, &rsa };
	char *error = NULL;

	(void)state;
	for (size_t i = 0; i < NELEM(cas); i++) {
		BIO *b = BIO_new(BIO_s_mem());
		struct csrsigning_ca *ca;
		char *pem, *with_params;

		/* PKCS #1 or SEC 1: "RSA PRIVATE KEY", "EC PRIVATE KEY". */
		PEM_write_bio_PrivateKey_traditional(b, cas[i]->key, NULL, NULL, 0, NULL, NULL);
		pem = bio_text(b);
		BIO_free(b);
		assert_non_null(strstr(pem, i == 0 ? "EC PRIVATE KEY" : "RSA PRIVATE KEY"));
		ca = csrsigning_ca_new(cas[i]->cert_pem, strlen(cas[i]->cert_pem), pem,
		    strlen(pem), "ca.crt", "ca.key", &error);
		if (ca == NULL)
			fail_msg("traditional key %zu: %s", i, error);
		csrsigning_ca_free(ca);
		with_params = xasprintf("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n"
		    "-----END EC PARAMETERS-----\n%s", pem);
		ca = csrsigning_ca_new(cas[i]->cert_pem, strlen(cas[i]->cert_pem), with_params,
		    strlen(with_params), "ca.crt", "ca.key", &error);
		if (ca == NULL)
			fail_msg("key %zu after EC PARAMETERS: %s", i, error);
		csrsigning_ca_free(ca);
		free(with_params);
		free(pem);
		/* Encrypted. */
		b = BIO_new(BIO_s_mem());
		PEM_write_bio_PrivateKey(b, cas[i]->key, EVP_aes_128_cbc(), NULL, 0, NULL,
		    (void *)"secret");
		pem = bio_text(b);
		BIO_free(b);
		assert_null(csrsigning_ca_new(cas[i]->cert_pem, strlen(cas[i]->cert_pem), pem,
		    strlen(pem), "ca.crt", "enc.key", &error));
		assert_non_null(strstr(error, "\"enc.key\""));
		assert_null(strstr(error, "ENCRYPTED"));
		free(error);
		error = NULL;
		free(pem);
	}
	test_ca_free(&ec);
	test_ca_free(&rsa);
}

/* A CA pair that does not load says which file and why, never the key. */
static void
ca_refusals(void **state)
{
	double now = (double)time(NULL);
	struct test_ca a = test_ca_new("ec", now, now + DAY), b = test_ca_new("rsa", now,
	    now + DAY);
	char *two = xasprintf("%s%s", a.cert_pem, b.cert_pem), *error = NULL;

	(void)state;
	assert_null(csrsigning_ca_new(a.cert_pem, strlen(a.cert_pem), b.key_pem,
	    strlen(b.key_pem), "a.crt", "b.key", &error));
	assert_string_equal(error, "CA key file \"b.key\": private key does not match the "
	    "public key of CA cert file \"a.crt\"");
	free(error);
	error = NULL;
	assert_null(csrsigning_ca_new(two, strlen(two), a.key_pem, strlen(a.key_pem), "two.crt",
	    "a.key", &error));
	assert_string_equal(error, "error reading CA cert file \"two.crt\": expected 1 "
	    "certificate, found 2");
	free(error);
	error = NULL;
	assert_null(csrsigning_ca_new(a.cert_pem, strlen(a.cert_pem), "garbage", 7, "a.crt",
	    "a.key", &error));
	assert_non_null(strstr(error, "\"a.key\""));
	free(error);
	error = NULL;
	assert_null(csrsigning_ca_load("/nonexistent/ca.crt", "/nonexistent/ca.key", &error));
	assert_non_null(strstr(error, "/nonexistent/ca.crt"));
	free(error);
	free(two);
	test_ca_free(&a);
	test_ca_free(&b);
}

/* --- the controller over a cache -------------------------------------------------------- */

/* CA files written for a controller's flags. */
struct ca_files {
	char dir[64];
	char cert[96], key[96];
	struct test_ca ca;
};

static void
ca_files_write(struct ca_files *f, const char *kind)
{
	double now = (double)time(NULL);
	FILE *out;

	snprintf(f->dir, sizeof f->dir, "/tmp/test_csrsigning.XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		fail_msg("mkdtemp");
	snprintf(f->cert, sizeof f->cert, "%s/ca.crt", f->dir);
	snprintf(f->key, sizeof f->key, "%s/ca.key", f->dir);
	f->ca = test_ca_new(kind, now, now + 30 * DAY);
	out = fopen(f->cert, "w");
	fputs(f->ca.cert_pem, out);
	fclose(out);
	out = fopen(f->key, "w");
	fputs(f->ca.key_pem, out);
	fclose(out);
}

static void
ca_files_remove(struct ca_files *f)
{
	unlink(f->cert);
	unlink(f->key);
	rmdir(f->dir);
	test_ca_free(&f->ca);
}

/* The index of the flag called name in csrsigning's flags. */
static int
flag_index(const char *name)
{
	const struct controller_flag *flags = csrsigning_controller_type.flags;

	for (int i = 0; flags[i].name != NULL; i++) {
		if (strcmp(flags[i].name, name) == 0)
			return i;
	}
	fail_msg("no flag %s", name);
	return -1;
}

/* A CSR for the sync cases. */
struct csr_row {
	const char *name;
	const char *signer;
	const char *req;
	const char *usages;		/* JSON array */
	const char *conditions;		/* JSON array */
	int issued;
	int want;			/* 0: nothing; 1: a certificate; 2: Failed */
	const char *message;		/* Failed's message */
};

static const struct csr_row csr_rows[] = {
	{ "approved and valid: a certificate that verifies", "kubernetes.io/kubelet-serving",
	    "CN=system:node:n;O=system:nodes;DNS=n", "[\"server auth\",\"digital signature\"]",
	    "[{\"type\":\"Approved\",\"status\":\"True\"}]", 0, 1, NULL },
	{ "approved and invalid: Failed, SignerValidationFailure",
	    "kubernetes.io/kubelet-serving", "CN=node-1;O=system:nodes;DNS=n",
	    "[\"server auth\",\"digital signature\"]",
	    "[{\"type\":\"Approved\",\"status\":\"True\"}]", 0, 2,
	    "subject common name does not begin with system:node:" },
	{ "pending: nothing", "kubernetes.io/kube-apiserver-client", "CN=me",
	    "[\"client auth\"]", "[]", 0, 0, NULL },
	{ "denied: nothing", "kubernetes.io/kube-apiserver-client", "CN=me",
	    "[\"client auth\"]", "[{\"type\":\"Denied\",\"status\":\"True\"}]", 0, 0, NULL },
	{ "approved and denied: nothing", "kubernetes.io/kube-apiserver-client", "CN=me",
	    "[\"client auth\"]", "[{\"type\":\"Approved\",\"status\":\"True\"},"
	    "{\"type\":\"Denied\",\"status\":\"True\"}]", 0, 0, NULL },
	{ "another signer: nothing", "example.com/mine", "CN=me", "[\"client auth\"]",
	    "[{\"type\":\"Approved\",\"status\":\"True\"}]", 0, 0, NULL },
	{ "a kubernetes.io signer kube has not: nothing", "kubernetes.io/not-a-real-signer",
	    "CN=me", "[\"client auth\"]", "[{\"type\":\"Approved\",\"status\":\"True\"}]", 0, 0,
	    NULL },
	{ "already issued: nothing", "kubernetes.io/kube-apiserver-client", "CN=me",
	    "[\"client auth\"]", "[{\"type\":\"Approved\",\"status\":\"True\"}]", 1, 0, NULL },
	{ "failed: nothing", "kubernetes.io/kubelet-serving", "CN=system:node:n;O=system:nodes;DNS=n",
	    "[\"server auth\",\"digital signature\"]",
	    "[{\"type\":\"Approved\",\"status\":\"True\"},{\"type\":\"Failed\",\"status\":\"True\"}]",
	    0, 0, NULL },
	{ "failed without a status: nothing", "kubernetes.io/legacy-unknown", "CN=me",
	    "[\"client auth\"]",
	    "[{\"type\":\"Approved\",\"status\":\"True\"},{\"type\":\"Failed\"}]", 0, 0, NULL },
	{ "failed False: signed", "kubernetes.io/legacy-unknown", "CN=me",
	    "[\"client auth\"]",
	    "[{\"type\":\"Approved\",\"status\":\"True\"},{\"type\":\"Failed\",\"status\":\"False\"}]",
	    0, 1, NULL },
	{ "kubelet client, EC, as a kubelet asks", "kubernetes.io/kube-apiserver-client-kubelet",
	    "CN=system:node:n;O=system:nodes", "[\"digital signature\",\"client auth\"]",
	    "[{\"type\":\"Approved\",\"status\":\"True\"}]", 0, 1, NULL },
};

static cJSON *
csr_new(const struct csr_row *row, const char *expiration)
{
	char *request = request_b64(row->req);
	char *text = xasprintf("{\"apiVersion\":\"certificates.k8s.io/v1\","
	    "\"kind\":\"CertificateSigningRequest\",\"metadata\":{\"name\":\"csr\","
	    "\"uid\":\"uid-csr\",\"resourceVersion\":\"7\"},"
	    "\"spec\":{\"request\":\"%s\",\"signerName\":\"%s\",\"usages\":%s,"
	    "\"username\":\"u\",\"groups\":[\"g\"]%s%s},"
	    "\"status\":{\"conditions\":%s%s}}", request, row->signer, row->usages,
	    expiration != NULL ? ",\"expirationSeconds\":" : "",
	    expiration != NULL ? expiration : "", row->conditions,
	    row->issued ? ",\"certificate\":\"Y2VydA==\"" : "");
	cJSON *csr = fixture_parse(text);

	free(text);
	free(request);
	return csr;
}

/* The PEM of the certificate an update-status body carries. */
static char *
issued_pem(const cJSON *body)
{
	const char *b64 = json_string(body, "status.certificate");
	unsigned char *pem = xmalloc(strlen(b64) + 1);
	int n = EVP_DecodeBlock(pem, (const unsigned char *)b64, (int)strlen(b64));

	assert_true(n > 0);
	pem[n] = '\0';
	return (char *)pem;
}

static void
csr_row(void **state)
{
	const struct csr_row *row = *state;
	struct ca_files f;
	const char *flags[CONTROLLER_FLAGS_PER_TYPE] = { NULL };
	struct controller_config config = { .flags = flags };
	struct ctl_world *w;
	const struct action *a;

	ca_files_write(&f, "ec");
	flags[flag_index("cluster-signing-cert-file")] = f.cert;
	flags[flag_index("cluster-signing-key-file")] = f.key;
	flags[flag_index("cluster-signing-duration")] = "1h";
	w = ctl_world_new(&csrsigning_controller_type, &config);
	ctl_cache(w, resource_find("certificatesigningrequests"), csr_new(row, NULL));
	ctl_sync(w, "csr", (double)time(NULL));
	assert_false(w->result.failed);
	assert_int_equal(w->result.nwrites, row->want == 0 ? 0 : 1);
	if (row->want != 0) {
		a = &w->result.writes[0];
		assert_int_equal(a->type, ACTION_UPDATE_STATUS);
		assert_string_equal(a->name, "csr");
		assert_string_equal(a->uid, "uid-csr");
		/* The whole object, its resourceVersion with it, as kube's UpdateStatus. */
		assert_string_equal(json_string(a->body, "metadata.resourceVersion"), "7");
		assert_string_equal(json_string(a->body, "spec.username"), "u");
	}
	if (row->want == 1) {
		char *pem = issued_pem(w->result.writes[0].body);
		X509 *cert = cert_parse(pem);
		cJSON *before = fixture_parse(row->conditions);

		assert_true(cert_verifies(cert, f.ca.cert, (double)time(NULL)));
		/* The conditions as they were: a certificate adds none. */
		assert_int_equal(cJSON_GetArraySize(json_path(w->result.writes[0].body,
		    "status.conditions")), cJSON_GetArraySize(before));
		cJSON_Delete(before);
		X509_free(cert);
		free(pem);
	}
	if (row->want == 2) {
		const cJSON *conds = json_path(w->result.writes[0].body, "status.conditions");
		const cJSON *last = cJSON_GetArrayItem(conds, cJSON_GetArraySize(conds) - 1);
		time_t t;

		assert_int_equal(cJSON_GetArraySize(conds), 2);
		assert_string_equal(json_string(last, "type"), "Failed");
		assert_string_equal(json_string(last, "status"), "True");
		assert_string_equal(json_string(last, "reason"), "SignerValidationFailure");
		assert_string_equal(json_string(last, "message"), row->message);
		assert_int_equal(time_parse_rfc3339(json_string(last, "lastUpdateTime"), &t), 0);
		assert_false(json_is_set(w->result.writes[0].body, "status.certificate"));
	}
	ctl_world_free(w);
	ca_files_remove(&f);
}

/* A CSR's expirationSeconds, bounded: 600 gives 10 minutes (+5 backdated at the start). */
static void
sync_expiration_seconds(void **state)
{
	struct ca_files f;
	const char *flags[CONTROLLER_FLAGS_PER_TYPE] = { NULL };
	struct controller_config config = { .flags = flags };
	double now = (double)time(NULL);
	struct ctl_world *w;
	char *pem;
	X509 *cert;

	(void)state;
	ca_files_write(&f, "rsa");
	flags[flag_index("cluster-signing-kube-apiserver-client-cert-file")] = f.cert;
	flags[flag_index("cluster-signing-kube-apiserver-client-key-file")] = f.key;
	w = ctl_world_new(&csrsigning_controller_type, &config);
	ctl_cache(w, resource_find("certificatesigningrequests"), csr_new(&(struct csr_row){
	    "c", "kubernetes.io/kube-apiserver-client", "CN=me", "[\"client auth\"]",
	    "[{\"type\":\"Approved\",\"status\":\"True\"}]", 0, 1, NULL }, "300"));
	ctl_sync(w, "csr", now);
	assert_int_equal(w->result.nwrites, 1);
	pem = issued_pem(w->result.writes[0].body);
	cert = cert_parse(pem);
	assert_true(asn1_seconds(X509_get0_notBefore(cert)) == now - 5 * MINUTE);
	assert_true(asn1_seconds(X509_get0_notAfter(cert)) == now + 10 * MINUTE);
	X509_free(cert);
	free(pem);
	/* The other signers have no files of their own: not started. */
	sync_result_clear(&w->result);
	ctl_uncache(w, resource_find("certificatesigningrequests"), "uid-csr");
	ctl_cache(w, resource_find("certificatesigningrequests"), csr_new(&(struct csr_row){
	    "c", "kubernetes.io/legacy-unknown", "CN=me", "[\"client auth\"]",
	    "[{\"type\":\"Approved\",\"status\":\"True\"}]", 0, 1, NULL }, NULL));
	ctl_sync(w, "csr", now);
	assert_int_equal(w->result.nwrites, 0);
	ctl_world_free(w);
	ca_files_remove(&f);
}

/* A request that does not parse: nothing written, the sync failed (backoff), as kube's. */
static void
sync_bad_request(void **state)
{
	struct ca_files f;
	const char *flags[CONTROLLER_FLAGS_PER_TYPE] = { NULL };
	struct controller_config config = { .flags = flags };
	struct ctl_world *w;
	cJSON *csr;

	(void)state;
	ca_files_write(&f, "ec");
	flags[flag_index("cluster-signing-cert-file")] = f.cert;
	flags[flag_index("cluster-signing-key-file")] = f.key;
	w = ctl_world_new(&csrsigning_controller_type, &config);
	csr = csr_new(&csr_rows[0], NULL);
	json_set(json_child_object(csr, "spec"), "request",
	    cJSON_CreateString("bm90IGEgUEVN"));
	ctl_cache(w, resource_find("certificatesigningrequests"), csr);
	ctl_sync(w, "csr", NOW);
	assert_int_equal(w->result.nwrites, 0);
	assert_true(w->result.failed);
	/* A CSR gone: nothing. */
	sync_result_clear(&w->result);
	ctl_sync(w, "gone", NOW);
	assert_int_equal(w->result.nwrites, 0);
	assert_false(w->result.failed);
	ctl_world_free(w);
	ca_files_remove(&f);
}

/* Without files, no signer starts: an approved valid CSR stays as it is. */
static void
sync_without_files(void **state)
{
	struct ctl_world *w = ctl_world_new(&csrsigning_controller_type, NULL);

	(void)state;
	ctl_cache(w, resource_find("certificatesigningrequests"), csr_new(&csr_rows[0], NULL));
	ctl_sync(w, "csr", NOW);
	assert_int_equal(w->result.nwrites, 0);
	assert_false(w->result.failed);
	ctl_world_free(w);
}

/* kube's rules for the flags: the global pair and a signer's own pair together are an
 * error, so is half a signer's pair, and a CA that does not load names its file. */
static void
flags_refused(void **state)
{
	struct ca_files f, g;
	const char *flags[CONTROLLER_FLAGS_PER_TYPE] = { NULL };
	struct controller_config config = { .flags = flags };
	struct ctl_world *w = ctl_world_new(NULL, NULL);

	(void)state;
	ca_files_write(&f, "ec");
	ca_files_write(&g, "ec");
	flags[flag_index("cluster-signing-cert-file")] = f.cert;
	flags[flag_index("cluster-signing-key-file")] = f.key;
	flags[flag_index("cluster-signing-kubelet-serving-cert-file")] = f.cert;
	assert_int_equal(ctl_start(w, &csrsigning_controller_type, &config), -1);
	assert_non_null(strstr(w->error, "at once"));
	free(w->error);
	w->error = NULL;
	/* Only the global cert: kube starts no signer. Half a signer's pair: an error. */
	flags[flag_index("cluster-signing-key-file")] = NULL;
	assert_int_equal(ctl_start(w, &csrsigning_controller_type, &config), -1);
	assert_non_null(strstr(w->error, "--cluster-signing-kubelet-serving-key-file"));
	free(w->error);
	w->error = NULL;
	/* A key of another CA. */
	flags[flag_index("cluster-signing-kubelet-serving-key-file")] = g.key;
	assert_int_equal(ctl_start(w, &csrsigning_controller_type, &config), -1);
	assert_non_null(strstr(w->error, g.key));
	assert_null(strstr(w->error, "PRIVATE KEY"));
	free(w->error);
	w->error = NULL;
	ctl_world_free(w);
	ca_files_remove(&f);
	ca_files_remove(&g);
}

/* New CA files are used from the next signature on (kube's dynamic reload). */
static void
ca_files_reloaded(void **state)
{
	struct ca_files f, g;
	const char *flags[CONTROLLER_FLAGS_PER_TYPE] = { NULL };
	struct controller_config config = { .flags = flags };
	struct ctl_world *w;
	char *pem;
	X509 *cert;
	FILE *out;

	(void)state;
	ca_files_write(&f, "ec");
	ca_files_write(&g, "rsa");
	flags[flag_index("cluster-signing-cert-file")] = f.cert;
	flags[flag_index("cluster-signing-key-file")] = f.key;
	w = ctl_world_new(&csrsigning_controller_type, &config);
	/* Another CA's pair written over the files. */
	out = fopen(f.cert, "w");
	fputs(g.ca.cert_pem, out);
	fclose(out);
	out = fopen(f.key, "w");
	fputs(g.ca.key_pem, out);
	fclose(out);
	ctl_cache(w, resource_find("certificatesigningrequests"), csr_new(&csr_rows[0], NULL));
	ctl_sync(w, "csr", (double)time(NULL));
	assert_int_equal(w->result.nwrites, 1);
	pem = issued_pem(w->result.writes[0].body);
	cert = cert_parse(pem);
	assert_true(cert_verifies(cert, g.ca.cert, (double)time(NULL)));
	X509_free(cert);
	free(pem);
	ctl_world_free(w);
	ca_files_remove(&f);
	ca_files_remove(&g);
}

/* The view people query, and the signer runs: which CSRs a signer takes up. */
static void
queue_view(void **state)
{
	static const struct {
		const char *name;
		const char *signer;
		const char *status;
	} rows[] = {
		{ "approved", "kubernetes.io/kubelet-serving",
		    "{\"conditions\":[{\"type\":\"Approved\",\"status\":\"True\"}]}" },
		{ "pending", "kubernetes.io/kubelet-serving", "{}" },
		{ "denied-too", "kubernetes.io/legacy-unknown",
		    "{\"conditions\":[{\"type\":\"Approved\"},{\"type\":\"Denied\"}]}" },
		{ "failed", "kubernetes.io/legacy-unknown",
		    "{\"conditions\":[{\"type\":\"Approved\"},{\"type\":\"Failed\"}]}" },
		{ "failed-false", "kubernetes.io/legacy-unknown", "{\"conditions\":["
		    "{\"type\":\"Approved\"},{\"type\":\"Failed\",\"status\":\"False\"}]}" },
		{ "issued", "kubernetes.io/kube-apiserver-client",
		    "{\"conditions\":[{\"type\":\"Approved\"}],\"certificate\":\"eA==\"}" },
		{ "other", "example.com/x", "{\"conditions\":[{\"type\":\"Approved\"}]}" },
	};
	struct ctl_world *w = ctl_world_new(&csrsigning_controller_type, NULL);
	const struct resource *csrs = resource_find("certificatesigningrequests");
	struct buf got;
	sqlite3_stmt *stmt;

	(void)state;
	buf_init(&got);
	for (size_t i = 0; i < NELEM(rows); i++) {
		char *text = xasprintf("{\"metadata\":{\"name\":\"%s\",\"uid\":\"u-%s\","
		    "\"resourceVersion\":\"1\"},\"spec\":{\"signerName\":\"%s\"},"
		    "\"status\":%s}", rows[i].name, rows[i].name, rows[i].signer, rows[i].status);

		ctl_cache(w, csrs, fixture_parse(text));
		free(text);
	}
	assert_int_equal(sqlite3_prepare_v2(store_db(w->store), "SELECT name, to_sign FROM "
	    "csrsigning_queue ORDER BY name", -1, &stmt, NULL), SQLITE_OK);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		buf_printf(&got, "%s=%d;", sqlite3_column_text(stmt, 0),
		    sqlite3_column_int(stmt, 1));
	sqlite3_finalize(stmt);
	assert_string_equal(got.data, "approved=1;denied-too=0;failed=0;failed-false=1;issued=0;"
	    "other=0;pending=0;");
	buf_free(&got);
	ctl_world_free(w);
}

/* Added and updated CSRs are queued by name; deleted ones are not; list_keys gives all. */
static void
handlers(void **state)
{
	struct ctl_world *w = ctl_world_new(&csrsigning_controller_type, NULL);
	const struct resource *csrs = resource_find("certificatesigningrequests");
	char *keys;

	(void)state;
	ctl_tell(w, INFORMER_ADDED, csrs, csr_new(&csr_rows[0], NULL), NULL);
	ctl_tell(w, INFORMER_DELETED, csrs, fixture_parse("{\"metadata\":{\"name\":\"b\"}}"),
	    NULL);
	ctl_tell(w, INFORMER_UPDATED, csrs, fixture_parse("{\"metadata\":{\"name\":\"c\"}}"),
	    NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "csr,c");
	free(keys);
	ctl_keys_clear(w);
	ctl_cache(w, csrs, csr_new(&csr_rows[0], NULL));
	ctl_list_keys(w);
	keys = ctl_keys(w);
	assert_string_equal(keys, "csr");
	free(keys);
	assert_int_equal(csrsigning_controller_type.default_workers, 5);
	ctl_world_free(w);
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(validate_rows) + NELEM(csr_rows) + 20];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(validate_rows); i++)
		tests[n++] = (struct CMUnitTest){ validate_rows[i].name, validate_row, NULL, NULL,
		    (void *)&validate_rows[i] };
	for (size_t i = 0; i < NELEM(csr_rows); i++)
		tests[n++] = (struct CMUnitTest){ csr_rows[i].name, csr_row, NULL, NULL,
		    (void *)&csr_rows[i] };
#define ADD(name, fn) tests[n++] = (struct CMUnitTest){ name, fn, NULL, NULL, NULL }
	ADD("duration: kube's bounds", duration_bounds);
	ADD("usages: kube's key usages and extended ones", key_usages);
	ADD("validity: backdate, short, the CA's end", validity);
	ADD("sign: kube's TestSigner", sign_kubes_test_signer);
	ADD("sign: the subject and names as Go writes them", sign_subject_and_names);
	ADD("sign: never past the CA; a year is backdated", sign_capped_by_the_ca);
	ADD("sign: refusals", sign_refusals);
	ADD("parse: requests that do not parse", request_parse_refusals);
	ADD("CA: pairs that do not load", ca_refusals);
	ADD("CA: the key forms kube reads; an encrypted one is refused", ca_key_forms);
	ADD("parse: hostile names", hostile_names);
	ADD("sync: expirationSeconds, a signer's own files", sync_expiration_seconds);
	ADD("sync: a request that does not parse", sync_bad_request);
	ADD("sync: no files, no signer", sync_without_files);
	ADD("flags: kube's refusals", flags_refused);
	ADD("CA files changed are loaded again", ca_files_reloaded);
	ADD("handlers and list_keys", handlers);
	ADD("the view csrsigning_queue", queue_view);
#undef ADD
	return _cmocka_run_group_tests("csrsigning", tests, n, NULL, NULL);
}
