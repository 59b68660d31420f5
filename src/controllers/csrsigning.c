/*
 * csrsigning.c - the CSR signer (kube's certificatesigningrequest-signing-controller,
 * alias csrsigning).
 *
 * kube runs one signer per signerName (kubelet-serving, kube-apiserver-client-kubelet,
 * kube-apiserver-client, legacy-unknown), each with its CA: the files of
 * --cluster-signing-cert-file and --cluster-signing-key-file for all four, or each one's
 * own pair (--cluster-signing-kubelet-serving-cert-file, ...), never both kinds at once.
 * A signer without files is not started; with none at all the controller does nothing
 * (and says so once). Here one controller holds the CAs of the signers started.
 *
 * A key is a CSR's name. A sync leaves alone a CSR that has a certificate, that is not
 * approved (or is also denied), that has failed, or whose signer is not started: the view
 * csrsigning_queue (schema/017-csrsigning.sql) says which CSRs a signer takes up, and the
 * sync reads its to_sign. It reads
 * the request (base64 PEM in spec.request): one that does not parse is logged and synced
 * again with backoff, as kube's returns an error. The signer's rules (csrsigning_validate)
 * decide between the Failed condition (reason SignerValidationFailure, kube's message) and
 * a certificate: kube's authority signs it (csrsigning_sign), and status.certificate gets
 * its PEM. Both are a PUT of the whole cached object to .../NAME/status (kube's
 * UpdateStatus), resourceVersion included, so a CSR changed meanwhile conflicts and is
 * synced again rather than overwritten.
 *
 * kube reloads the CA files when they change (its dynamic certificate content): here each
 * signature first compares the files' inode, size and mtime with the ones loaded, and
 * loads them again when they differ; a pair that no longer loads leaves the old CA in use
 * and is logged, as kube keeps its last good content. The key is never logged.
 *
 * The handlers queue a CSR when it is added or changes; list_keys gives every cached CSR.
 * kube runs 5 workers for each signer; this runs 5 for the lot (a CSR concerns one signer).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "controllers/csrs.h"
#include "controllers/csrsigning.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "timeutil.h"
#include "util.h"

#define MINUTE 60.0
#define HOUR 3600.0
/* The largest CA file read. */
#define CA_FILE_MAX (1 << 20)
/* The largest spec.request read (the apiserver takes objects of 3 MiB at most). */
#define REQUEST_MAX (4 << 20)

const char *const csrsigning_signer_names[CSRSIGNING_SIGNERS] = {
	[CSRSIGNING_KUBELET_SERVING] = "kubernetes.io/kubelet-serving",
	[CSRSIGNING_KUBELET_CLIENT] = "kubernetes.io/kube-apiserver-client-kubelet",
	[CSRSIGNING_KUBE_APISERVER_CLIENT] = "kubernetes.io/kube-apiserver-client",
	[CSRSIGNING_LEGACY_UNKNOWN] = "kubernetes.io/legacy-unknown",
};

/* Each signer's own flags' names, without the "cluster-signing-" and "-cert-file". */
static const char *const signer_flag_names[CSRSIGNING_SIGNERS] = {
	[CSRSIGNING_KUBELET_SERVING] = "kubelet-serving",
	[CSRSIGNING_KUBELET_CLIENT] = "kubelet-client",
	[CSRSIGNING_KUBE_APISERVER_CLIENT] = "kube-apiserver-client",
	[CSRSIGNING_LEGACY_UNKNOWN] = "legacy-unknown",
};

int
csrsigning_signer_find(const char *name)
{
	for (int i = 0; i < CSRSIGNING_SIGNERS; i++) {
		if (strcmp(csrsigning_signer_names[i], name) == 0)
			return i;
	}
	return -1;
}

/* --- reading a request ----------------------------------------------------------------- */

/* Decodes base64 text (padded; line breaks allowed) into a malloc'd buffer; -1 when it is
 * not base64. */
static int
base64_decode(const char *text, unsigned char **out, size_t *outlen)
{
	size_t len = strlen(text), n = 0, pad = 0;
	char *clean = xmalloc(len + 1);
	unsigned char *data;
	int got;

	for (size_t i = 0; i < len; i++) {
		if (text[i] != '\n' && text[i] != '\r')
			clean[n++] = text[i];
	}
	clean[n] = '\0';
	if (n == 0 || n % 4 != 0) {
		free(clean);
		return -1;
	}
	while (pad < 2 && clean[n - 1 - pad] == '=')
		pad++;
	data = xmalloc(n / 4 * 3 + 1);
	got = EVP_DecodeBlock(data, (const unsigned char *)clean, (int)n);
	free(clean);
	if (got < 0 || (size_t)got < pad) {
		free(data);
		return -1;
	}
	*out = data;
	*outlen = (size_t)got - pad;
	return 0;
}

/* The string types Go reads in a name (others make the request unreadable). */
static int
name_string_type_ok(int type)
{
	return type == V_ASN1_PRINTABLESTRING || type == V_ASN1_UTF8STRING ||
	    type == V_ASN1_IA5STRING || type == V_ASN1_T61STRING || type == V_ASN1_BMPSTRING ||
	    type == V_ASN1_NUMERICSTRING;
}

/* Reads an ASN.1 string of a name as UTF-8 into *t. */
static int
text_from_asn1(const ASN1_STRING *s, struct csrsigning_text *t)
{
	unsigned char *utf8 = NULL;
	int n = ASN1_STRING_to_UTF8(&utf8, s);

	if (n < 0)
		return -1;
	t->s = xmalloc((size_t)n + 1);
	memcpy(t->s, utf8, (size_t)n);
	t->s[n] = '\0';
	t->len = (size_t)n;
	OPENSSL_free(utf8);
	return 0;
}

static void
text_clear(struct csrsigning_text *t)
{
	free(t->s);
	t->s = NULL;
	t->len = 0;
}

/* True when the n bytes at s are all ASCII (Go's IA5String check of a SAN). */
static int
ia5(const unsigned char *s, int n)
{
	for (int i = 0; i < n; i++) {
		if (s[i] >= 0x80)
			return 0;
	}
	return 1;
}

/* Counts the subjectAltNames of the request's extensions as Go reads them (DNS, email, IP,
 * URI; other kinds are dropped); -1 with *error when Go would refuse them. */
static int
request_read_sans(struct csrsigning_request *r, char **error)
{
	STACK_OF(X509_EXTENSION) *exts = X509_REQ_get_extensions(r->req);
	int rc = 0;

	for (int i = 0; exts != NULL && i < sk_X509_EXTENSION_num(exts) && rc == 0; i++) {
		X509_EXTENSION *ext = sk_X509_EXTENSION_value(exts, i);
		GENERAL_NAMES *names;

		if (OBJ_obj2nid(X509_EXTENSION_get_object(ext)) != NID_subject_alt_name)
			continue;
		names = X509V3_EXT_d2i(ext);
		if (names == NULL) {
			rc = error_set(error, "x509: cannot parse the subjectAltName extension");
			break;
		}
		for (int j = 0; j < sk_GENERAL_NAME_num(names) && rc == 0; j++) {
			const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, j);
			const ASN1_STRING *s;

			switch (g->type) {
			case GEN_DNS:
				s = g->d.dNSName;
				if (!ia5(ASN1_STRING_get0_data(s), ASN1_STRING_length(s)))
					rc = error_set(error, "x509: SAN dNSName is malformed");
				r->ndns++;
				break;
			case GEN_EMAIL:
				s = g->d.rfc822Name;
				if (!ia5(ASN1_STRING_get0_data(s), ASN1_STRING_length(s)))
					rc = error_set(error, "x509: SAN rfc822Name is malformed");
				r->nemail++;
				break;
			case GEN_URI:
				s = g->d.uniformResourceIdentifier;
				if (!ia5(ASN1_STRING_get0_data(s), ASN1_STRING_length(s)))
					rc = error_set(error,
					    "x509: SAN uniformResourceIdentifier is malformed");
				r->nuri++;
				break;
			case GEN_IPADD:
				s = g->d.iPAddress;
				if (ASN1_STRING_length(s) != 4 && ASN1_STRING_length(s) != 16)
					rc = error_set(error, "x509: cannot parse IP address of "
					    "length %d", ASN1_STRING_length(s));
				r->nip++;
				break;
			default:
				break;
			}
		}
		GENERAL_NAMES_free(names);
	}
	sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
	return rc;
}

/* Reads the request's subject as Go's pkix.Name keeps it: the last CN, every O. */
static int
request_read_subject(struct csrsigning_request *r, char **error)
{
	const X509_NAME *name = X509_REQ_get_subject_name(r->req);

	for (int i = 0; i < X509_NAME_entry_count(name); i++) {
		const X509_NAME_ENTRY *e = X509_NAME_get_entry(name, i);
		const ASN1_STRING *v = X509_NAME_ENTRY_get_data(e);
		int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
		struct csrsigning_text t;

		if (!name_string_type_ok(ASN1_STRING_type(v)))
			return error_set(error, "x509: unsupported string type: %d",
			    ASN1_STRING_type(v));
		if (text_from_asn1(v, &t) != 0)
			return error_set(error, "x509: invalid string in the subject");
		if (nid == NID_commonName) {
			text_clear(&r->common_name);
			r->common_name = t;
		} else if (nid == NID_organizationName) {
			r->organizations = xrealloc(r->organizations,
			    (size_t)(r->norganizations + 1) * sizeof *r->organizations);
			r->organizations[r->norganizations++] = t;
		} else {
			text_clear(&t);
		}
	}
	return 0;
}

/* Whether Go reads the request's public key: RSA, DSA, ECDSA on P-224 to P-521, Ed25519,
 * X25519. */
static int
request_key_ok(const X509_REQ *req)
{
	EVP_PKEY *key = X509_REQ_get0_pubkey((X509_REQ *)req);
	char curve[64];
	size_t n = 0;

	if (key == NULL)
		return 0;
	switch (EVP_PKEY_get_base_id(key)) {
	case EVP_PKEY_RSA:
	case EVP_PKEY_DSA:
	case EVP_PKEY_ED25519:
	case EVP_PKEY_X25519:
		return 1;
	case EVP_PKEY_EC:
		if (EVP_PKEY_get_utf8_string_param(key, "group", curve, sizeof curve, &n) != 1)
			return 0;
		return strcmp(curve, "P-224") == 0 || strcmp(curve, "secp224r1") == 0 ||
		    strcmp(curve, "prime256v1") == 0 || strcmp(curve, "P-256") == 0 ||
		    strcmp(curve, "secp384r1") == 0 || strcmp(curve, "P-384") == 0 ||
		    strcmp(curve, "secp521r1") == 0 || strcmp(curve, "P-521") == 0;
	default:
		return 0;
	}
}

int
csrsigning_request_parse(const char *b64, struct csrsigning_request *out, char **error)
{
	unsigned char *pem = NULL, *der = NULL;
	const unsigned char *p;
	char *type = NULL, *header = NULL;
	size_t pem_len = 0;
	long der_len = 0;
	BIO *bio = NULL;
	int rc = -1;

	memset(out, 0, sizeof *out);
	if (strlen(b64) > REQUEST_MAX || base64_decode(b64, &pem, &pem_len) != 0)
		return error_set(error, "PEM block type must be CERTIFICATE REQUEST");
	bio = BIO_new_mem_buf(pem, (int)pem_len);
	if (bio == NULL || PEM_read_bio(bio, &type, &header, &der, &der_len) != 1 ||
	    strcmp(type, "CERTIFICATE REQUEST") != 0) {
		error_set(error, "PEM block type must be CERTIFICATE REQUEST");
		goto done;
	}
	p = der;
	out->req = d2i_X509_REQ(NULL, &p, der_len);
	if (out->req == NULL) {
		error_set(error, "x509: malformed certificate request");
		goto done;
	}
	if (p != der + der_len) {
		error_set(error, "x509: trailing data after the certificate request");
		goto done;
	}
	if (!request_key_ok(out->req)) {
		error_set(error, "x509: unsupported public key in the certificate request");
		goto done;
	}
	if (request_read_subject(out, error) != 0 || request_read_sans(out, error) != 0)
		goto done;
	rc = 0;
done:
	ERR_clear_error();
	OPENSSL_free(type);
	OPENSSL_free(header);
	OPENSSL_free(der);
	BIO_free(bio);
	free(pem);
	if (rc != 0)
		csrsigning_request_clear(out);
	return rc;
}

void
csrsigning_request_clear(struct csrsigning_request *r)
{
	X509_REQ_free(r->req);
	text_clear(&r->common_name);
	for (int i = 0; i < r->norganizations; i++)
		text_clear(&r->organizations[i]);
	free(r->organizations);
	memset(r, 0, sizeof *r);
}

/* --- the signers' rules ---------------------------------------------------------------- */

/* True when the n usages, as a set, are the set of want (NULL-ended). */
static int
usages_are(const char *const *usages, int n, const char *const *want)
{
	for (int i = 0; i < n; i++) {
		int found = 0;

		for (const char *const *w = want; *w != NULL && !found; w++)
			found = strcmp(usages[i], *w) == 0;
		if (!found)
			return 0;
	}
	for (const char *const *w = want; *w != NULL; w++) {
		int found = 0;

		for (int i = 0; i < n && !found; i++)
			found = strcmp(usages[i], *w) == 0;
		if (!found)
			return 0;
	}
	return 1;
}

/* True when the only O is system:nodes. */
static int
organization_is_nodes(const struct csrsigning_request *r)
{
	return r->norganizations == 1 && r->organizations[0].len == strlen("system:nodes") &&
	    memcmp(r->organizations[0].s, "system:nodes", r->organizations[0].len) == 0;
}

/* True when the CN begins with system:node:. */
static int
common_name_is_node(const struct csrsigning_request *r)
{
	size_t n = strlen("system:node:");

	return r->common_name.len >= n && memcmp(r->common_name.s, "system:node:", n) == 0;
}

static const char *const serving_usages[] = {
	"digital signature", "key encipherment", "server auth", NULL };
static const char *const serving_usages_no_rsa[] = {
	"digital signature", "server auth", NULL };
static const char *const client_usages[] = {
	"digital signature", "key encipherment", "client auth", NULL };
static const char *const client_usages_no_rsa[] = {
	"digital signature", "client auth", NULL };

char *
csrsigning_validate(enum csrsigning_signer signer, const struct csrsigning_request *r,
    const char *const *usages, int n)
{
	int client_auth = 0;

	switch (signer) {
	case CSRSIGNING_KUBELET_SERVING:
		if (!organization_is_nodes(r))
			return xstrdup("subject organization is not system:nodes");
		if (r->ndns == 0 && r->nip == 0)
			return xstrdup("DNS or IP subjectAltName is required");
		if (r->nemail > 0)
			return xstrdup("Email subjectAltNames are not allowed");
		if (r->nuri > 0)
			return xstrdup("URI subjectAltNames are not allowed");
		if (!usages_are(usages, n, serving_usages) &&
		    !usages_are(usages, n, serving_usages_no_rsa))
			return xstrdup("usages did not match "
			    "[digital signature key encipherment server auth]");
		if (!common_name_is_node(r))
			return xstrdup("subject common name does not begin with system:node:");
		return NULL;
	case CSRSIGNING_KUBELET_CLIENT:
		if (!organization_is_nodes(r))
			return xstrdup("subject organization is not system:nodes");
		if (r->ndns > 0)
			return xstrdup("DNS subjectAltNames are not allowed");
		if (r->nemail > 0)
			return xstrdup("Email subjectAltNames are not allowed");
		if (r->nip > 0)
			return xstrdup("IP subjectAltNames are not allowed");
		if (r->nuri > 0)
			return xstrdup("URI subjectAltNames are not allowed");
		if (!common_name_is_node(r))
			return xstrdup("subject common name does not begin with system:node:");
		if (!usages_are(usages, n, client_usages) &&
		    !usages_are(usages, n, client_usages_no_rsa))
			return xstrdup("usages did not match "
			    "[client auth digital signature key encipherment]");
		return NULL;
	case CSRSIGNING_KUBE_APISERVER_CLIENT:
		for (int i = 0; i < n; i++) {
			if (strcmp(usages[i], "client auth") == 0)
				client_auth = 1;
			else if (strcmp(usages[i], "digital signature") != 0 &&
			    strcmp(usages[i], "key encipherment") != 0)
				return xasprintf("invalid usage for client certificate: %s",
				    usages[i]);
		}
		if (!client_auth)
			return xstrdup("missing required usage for client certificate: "
			    "client auth");
		return NULL;
	case CSRSIGNING_LEGACY_UNKNOWN:
	case CSRSIGNING_SIGNERS:
		break;
	}
	return NULL;
}

double
csrsigning_duration(int has_expiration, long long expiration_seconds, double max_seconds)
{
	double asked = (double)expiration_seconds;

	if (!has_expiration)
		return max_seconds;
	if (asked > max_seconds)
		return max_seconds;
	if (asked < 10 * MINUTE)
		return 10 * MINUTE;
	return asked;
}

/* --- usages ---------------------------------------------------------------------------- */

static const struct {
	const char *usage;
	unsigned key_usage;
} key_usage_table[] = {
	{ "signing", CSRSIGNING_KU_DIGITAL_SIGNATURE },
	{ "digital signature", CSRSIGNING_KU_DIGITAL_SIGNATURE },
	{ "content commitment", CSRSIGNING_KU_CONTENT_COMMITMENT },
	{ "key encipherment", CSRSIGNING_KU_KEY_ENCIPHERMENT },
	{ "key agreement", CSRSIGNING_KU_KEY_AGREEMENT },
	{ "data encipherment", CSRSIGNING_KU_DATA_ENCIPHERMENT },
	{ "cert sign", CSRSIGNING_KU_CERT_SIGN },
	{ "crl sign", CSRSIGNING_KU_CRL_SIGN },
	{ "encipher only", CSRSIGNING_KU_ENCIPHER_ONLY },
	{ "decipher only", CSRSIGNING_KU_DECIPHER_ONLY },
};

static const struct {
	const char *usage;
	enum csrsigning_ext_usage ext;
} ext_usage_table[] = {
	{ "any", CSRSIGNING_EKU_ANY },
	{ "server auth", CSRSIGNING_EKU_SERVER_AUTH },
	{ "client auth", CSRSIGNING_EKU_CLIENT_AUTH },
	{ "code signing", CSRSIGNING_EKU_CODE_SIGNING },
	{ "email protection", CSRSIGNING_EKU_EMAIL_PROTECTION },
	{ "s/mime", CSRSIGNING_EKU_EMAIL_PROTECTION },
	{ "ipsec end system", CSRSIGNING_EKU_IPSEC_END_SYSTEM },
	{ "ipsec tunnel", CSRSIGNING_EKU_IPSEC_TUNNEL },
	{ "ipsec user", CSRSIGNING_EKU_IPSEC_USER },
	{ "timestamping", CSRSIGNING_EKU_TIMESTAMPING },
	{ "ocsp signing", CSRSIGNING_EKU_OCSP_SIGNING },
	{ "microsoft sgc", CSRSIGNING_EKU_MICROSOFT_SGC },
	{ "netscape sgc", CSRSIGNING_EKU_NETSCAPE_SGC },
};

/* The OpenSSL NID of each extended key usage. */
static const int ext_usage_nids[CSRSIGNING_EKU_COUNT] = {
	[CSRSIGNING_EKU_ANY] = NID_anyExtendedKeyUsage,
	[CSRSIGNING_EKU_SERVER_AUTH] = NID_server_auth,
	[CSRSIGNING_EKU_CLIENT_AUTH] = NID_client_auth,
	[CSRSIGNING_EKU_CODE_SIGNING] = NID_code_sign,
	[CSRSIGNING_EKU_EMAIL_PROTECTION] = NID_email_protect,
	[CSRSIGNING_EKU_IPSEC_END_SYSTEM] = NID_ipsecEndSystem,
	[CSRSIGNING_EKU_IPSEC_TUNNEL] = NID_ipsecTunnel,
	[CSRSIGNING_EKU_IPSEC_USER] = NID_ipsecUser,
	[CSRSIGNING_EKU_TIMESTAMPING] = NID_time_stamp,
	[CSRSIGNING_EKU_OCSP_SIGNING] = NID_OCSP_sign,
	[CSRSIGNING_EKU_MICROSOFT_SGC] = NID_ms_sgc,
	[CSRSIGNING_EKU_NETSCAPE_SGC] = NID_ns_sgc,
};

int
csrsigning_key_usages(const char *const *usages, int n, unsigned *key_usage,
    unsigned *ext_usages, char **error)
{
	struct buf unknown;
	int nunknown = 0;

	*key_usage = 0;
	*ext_usages = 0;
	buf_init(&unknown);
	for (int i = 0; i < n; i++) {
		int found = 0;

		for (size_t k = 0; k < sizeof key_usage_table / sizeof key_usage_table[0] &&
		    !found; k++) {
			if (strcmp(usages[i], key_usage_table[k].usage) == 0) {
				*key_usage |= key_usage_table[k].key_usage;
				found = 1;
			}
		}
		for (size_t k = 0; k < sizeof ext_usage_table / sizeof ext_usage_table[0] &&
		    !found; k++) {
			if (strcmp(usages[i], ext_usage_table[k].usage) == 0) {
				*ext_usages |= 1u << ext_usage_table[k].ext;
				found = 1;
			}
		}
		if (found)
			continue;
		/* As Go's %q writes a list of strings. */
		buf_append_str(&unknown, nunknown++ > 0 ? " \"" : "\"");
		for (const char *c = usages[i]; *c != '\0'; c++) {
			if (*c == '"' || *c == '\\')
				buf_append(&unknown, "\\", 1);
			buf_append(&unknown, c, 1);
		}
		buf_append_str(&unknown, "\"");
	}
	if (nunknown > 0) {
		error_set(error, "unrecognized usage values: [%s]", unknown.data);
		*key_usage = 0;
		*ext_usages = 0;
		buf_free(&unknown);
		return -1;
	}
	buf_free(&unknown);
	return 0;
}

/* --- the authority --------------------------------------------------------------------- */

struct csrsigning_policy
csrsigning_policy_kube(double ttl)
{
	struct csrsigning_policy p = { ttl, 5 * MINUTE, 8 * HOUR };

	return p;
}

/* Writes t as Go's time.Time.String writes a UTC time of whole seconds. */
static void
go_time_string(double t, char out[32])
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(out, 32, "%Y-%m-%d %H:%M:%S +0000 UTC", &tm);
}

int
csrsigning_validity(const struct csrsigning_policy *p, double now, double ca_not_after,
    double *not_before, double *not_after, char **error)
{
	char when[32];

	*not_before = now - p->backdate;
	*not_after = p->ttl < p->short_ttl ? now + p->ttl : now + p->ttl - p->backdate;
	if (!(*not_after < ca_not_after))
		*not_after = ca_not_after;
	go_time_string(ca_not_after, when);
	if (!(*not_before < ca_not_after))
		return error_set(error, "the signer has expired: NotAfter=%s", when);
	if (!(now < ca_not_after))
		return error_set(error, "refusing to sign a certificate that expired in the "
		    "past: NotAfter=%s", when);
	return 0;
}

struct csrsigning_ca {
	X509 *cert;
	EVP_PKEY *key;
	double not_after;
};

/* A passphrase callback that gives none: an encrypted key is refused, not asked for. */
static int
no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/* Reads an ASN.1 time as Unix seconds. */
static int
asn1_time_seconds(const ASN1_TIME *t, double *out)
{
	struct tm tm;

	if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
		return -1;
	*out = (double)timegm(&tm);
	return 0;
}

struct csrsigning_ca *
csrsigning_ca_new(const char *cert, size_t cert_len, const char *key, size_t key_len,
    const char *cert_name, const char *key_name, char **error)
{
	struct csrsigning_ca *ca = xcalloc(1, sizeof *ca);
	BIO *bio = BIO_new_mem_buf(cert, (int)cert_len);
	int ncerts = 0;
	X509 *x;

	while (bio != NULL && (x = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL)) != NULL) {
		if (ncerts++ == 0)
			ca->cert = x;
		else
			X509_free(x);
	}
	BIO_free(bio);
	ERR_clear_error();
	if (ncerts != 1) {
		error_set(error, "error reading CA cert file \"%s\": expected 1 certificate, "
		    "found %d", cert_name, ncerts);
		goto fail;
	}
	if (asn1_time_seconds(X509_get0_notAfter(ca->cert), &ca->not_after) != 0) {
		error_set(error, "error reading CA cert file \"%s\": its notAfter does not parse",
		    cert_name);
		goto fail;
	}
	bio = BIO_new_mem_buf(key, (int)key_len);
	ca->key = bio != NULL ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
	BIO_free(bio);
	ERR_clear_error();
	if (ca->key == NULL) {
		error_set(error, "error reading CA key file \"%s\": no private key in it (PEM, "
		    "not encrypted)", key_name);
		goto fail;
	}
	switch (EVP_PKEY_get_base_id(ca->key)) {
	case EVP_PKEY_RSA:
	case EVP_PKEY_EC:
	case EVP_PKEY_ED25519:
		break;
	default:
		error_set(error, "error reading CA key file \"%s\": key did not implement "
		    "crypto.Signer (RSA, ECDSA or Ed25519)", key_name);
		goto fail;
	}
	if (X509_check_private_key(ca->cert, ca->key) != 1) {
		ERR_clear_error();
		error_set(error, "CA key file \"%s\": private key does not match the public key "
		    "of CA cert file \"%s\"", key_name, cert_name);
		goto fail;
	}
	return ca;
fail:
	csrsigning_ca_free(ca);
	return NULL;
}

struct csrsigning_ca *
csrsigning_ca_load(const char *cert_file, const char *key_file, char **error)
{
	struct buf cert, key;
	struct csrsigning_ca *ca = NULL;

	buf_init(&cert);
	buf_init(&key);
	if (file_read_all(cert_file, "CA cert file", CA_FILE_MAX, &cert, NULL, error) == 0 &&
	    file_read_all(key_file, "CA key file", CA_FILE_MAX, &key, NULL, error) == 0)
		ca = csrsigning_ca_new(cert.data, cert.len, key.data, key.len, cert_file,
		    key_file, error);
	/* The key's bytes are not left in freed memory. */
	if (key.data != NULL)
		OPENSSL_cleanse(key.data, key.len);
	buf_free(&cert);
	buf_free(&key);
	return ca;
}

void
csrsigning_ca_free(struct csrsigning_ca *ca)
{
	if (ca == NULL)
		return;
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	free(ca);
}

X509 *
csrsigning_ca_certificate(const struct csrsigning_ca *ca)
{
	return ca->cert;
}

/* Go's PrintableString alphabet. */
static int
printable(const struct csrsigning_text *t)
{
	for (size_t i = 0; i < t->len; i++) {
		unsigned char c = (unsigned char)t->s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr(" '()+,-./:=?", c) != NULL) || c == '\0')
			return 0;
	}
	return 1;
}

/* Adds the values of one attribute as one RDN, as Go writes a pkix.Name. */
static int
name_add_rdn(X509_NAME *name, int nid, const struct csrsigning_text *values, int n)
{
	for (int i = 0; i < n; i++) {
		int type = printable(&values[i]) ? V_ASN1_PRINTABLESTRING : V_ASN1_UTF8STRING;

		if (values[i].len > 65535 || !X509_NAME_add_entry_by_NID(name, nid, type,
		    (const unsigned char *)values[i].s, (int)values[i].len, -1, i == 0 ? 0 : -1))
			return -1;
	}
	return 0;
}

/* The subject Go writes for a request's: its C, ST, L, street, postalCode, O, OU, CN and
 * serialNumber, in that order, each attribute's values in one RDN; others are dropped. */
static X509_NAME *
subject_from_request(const X509_REQ *req)
{
	static const int order[] = { NID_countryName, NID_stateOrProvinceName, NID_localityName,
	    NID_streetAddress, NID_postalCode, NID_organizationName,
	    NID_organizationalUnitName, NID_commonName, NID_serialNumber };
	const X509_NAME *from = X509_REQ_get_subject_name(req);
	X509_NAME *name = X509_NAME_new();
	int ok = name != NULL;

	for (size_t k = 0; k < sizeof order / sizeof order[0] && ok; k++) {
		struct csrsigning_text *values = NULL;
		int n = 0, single = order[k] == NID_commonName || order[k] == NID_serialNumber;

		for (int i = 0; i < X509_NAME_entry_count(from) && ok; i++) {
			const X509_NAME_ENTRY *e = X509_NAME_get_entry(from, i);
			struct csrsigning_text t;

			if (OBJ_obj2nid(X509_NAME_ENTRY_get_object(e)) != order[k])
				continue;
			if (text_from_asn1(X509_NAME_ENTRY_get_data(e), &t) != 0) {
				ok = 0;
				break;
			}
			/* Go keeps the last CN and serialNumber only. */
			if (single && n == 1) {
				text_clear(&values[0]);
				n = 0;
			}
			values = xrealloc(values, (size_t)(n + 1) * sizeof *values);
			values[n++] = t;
		}
		/* An empty CN or serialNumber is left out. */
		if (ok && n > 0 && !(single && values[0].len == 0))
			ok = name_add_rdn(name, order[k], values, n) == 0;
		for (int i = 0; i < n; i++)
			text_clear(&values[i]);
		free(values);
	}
	if (!ok) {
		X509_NAME_free(name);
		return NULL;
	}
	return name;
}

/* Adds ext (taken) to cert. */
static int
add_extension(X509 *cert, int nid, int critical, void *value)
{
	X509_EXTENSION *ext = X509V3_EXT_i2d(nid, critical, value);
	int ok = ext != NULL && X509_add_ext(cert, ext, -1) == 1;

	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

/* The request's DNS, email, IP and URI names, in Go's order (DNS, email, IP, URI). */
static GENERAL_NAMES *
sans_from_request(const X509_REQ *req)
{
	static const int kinds[] = { GEN_DNS, GEN_EMAIL, GEN_IPADD, GEN_URI };
	STACK_OF(X509_EXTENSION) *exts = X509_REQ_get_extensions((X509_REQ *)req);
	GENERAL_NAMES *out = sk_GENERAL_NAME_new_null();

	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		for (int i = 0; exts != NULL && i < sk_X509_EXTENSION_num(exts); i++) {
			X509_EXTENSION *ext = sk_X509_EXTENSION_value(exts, i);
			GENERAL_NAMES *names;

			if (OBJ_obj2nid(X509_EXTENSION_get_object(ext)) != NID_subject_alt_name)
				continue;
			names = X509V3_EXT_d2i(ext);
			for (int j = 0; names != NULL && j < sk_GENERAL_NAME_num(names); j++) {
				GENERAL_NAME *g = sk_GENERAL_NAME_value(names, j);

				if (g->type == kinds[k])
					sk_GENERAL_NAME_push(out, GENERAL_NAME_dup(g));
			}
			GENERAL_NAMES_free(names);
		}
	}
	sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
	return out;
}

/* The digest Go signs with for key (NULL for Ed25519). */
static const EVP_MD *
signing_digest(EVP_PKEY *key)
{
	if (EVP_PKEY_get_base_id(key) == EVP_PKEY_ED25519)
		return NULL;
	if (EVP_PKEY_get_base_id(key) == EVP_PKEY_EC) {
		int bits = EVP_PKEY_get_bits(key);

		if (bits > 384)
			return EVP_sha512();
		if (bits > 256)
			return EVP_sha384();
	}
	return EVP_sha256();
}

/* The extensions of the certificate, in the order Go writes them. */
static int
add_extensions(X509 *cert, const struct csrsigning_ca *ca, const X509_REQ *req,
    unsigned key_usage, unsigned ext_usages, const X509_NAME *subject)
{
	int rc = 0;

	if (key_usage != 0) {
		ASN1_BIT_STRING *bits = ASN1_BIT_STRING_new();

		for (int i = 0; i < 9 && bits != NULL; i++) {
			if ((key_usage & (1u << i)) && !ASN1_BIT_STRING_set_bit(bits, i, 1))
				rc = -1;
		}
		if (bits == NULL || add_extension(cert, NID_key_usage, 1, bits) != 0)
			rc = -1;
		ASN1_BIT_STRING_free(bits);
	}
	if (ext_usages != 0) {
		EXTENDED_KEY_USAGE *eku = sk_ASN1_OBJECT_new_null();

		for (int i = 0; i < CSRSIGNING_EKU_COUNT && eku != NULL; i++) {
			if (ext_usages & (1u << i))
				sk_ASN1_OBJECT_push(eku, OBJ_nid2obj(ext_usage_nids[i]));
		}
		if (eku == NULL || add_extension(cert, NID_ext_key_usage, 0, eku) != 0)
			rc = -1;
		sk_ASN1_OBJECT_free(eku);	/* the objects are OpenSSL's own */
	}
	{
		BASIC_CONSTRAINTS *bc = BASIC_CONSTRAINTS_new();

		if (bc == NULL || add_extension(cert, NID_basic_constraints, 1, bc) != 0)
			rc = -1;
		BASIC_CONSTRAINTS_free(bc);
	}
	{
		/* Go names the CA's key unless the subject is the CA's own. */
		const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(ca->cert);

		if (skid != NULL && X509_NAME_cmp(subject, X509_get_subject_name(ca->cert)) != 0) {
			AUTHORITY_KEYID *akid = AUTHORITY_KEYID_new();

			if (akid == NULL || (akid->keyid = ASN1_OCTET_STRING_dup(skid)) == NULL ||
			    add_extension(cert, NID_authority_key_identifier, 0, akid) != 0)
				rc = -1;
			AUTHORITY_KEYID_free(akid);
		}
	}
	{
		GENERAL_NAMES *sans = sans_from_request(req);

		/* Critical when the subject is empty (RFC 5280, as Go). */
		if (sans == NULL || (sk_GENERAL_NAME_num(sans) > 0 &&
		    add_extension(cert, NID_subject_alt_name, X509_NAME_entry_count(subject) == 0,
		    sans) != 0))
			rc = -1;
		GENERAL_NAMES_free(sans);
	}
	return rc;
}

char *
csrsigning_sign(const struct csrsigning_ca *ca, const struct csrsigning_request *r,
    const char *const *usages, int n, const struct csrsigning_policy *p, double now,
    char **error)
{
	EVP_PKEY *pub = X509_REQ_get0_pubkey(r->req);
	unsigned key_usage, ext_usages;
	unsigned char serial_bytes[16];
	double not_before, not_after;
	X509_NAME *subject = NULL;
	BIGNUM *serial = NULL;
	X509 *cert = NULL;
	BIO *out = NULL;
	char *pem = NULL;
	BUF_MEM *mem;
	int key_type;

	if (pub == NULL || X509_REQ_verify(r->req, pub) != 1) {
		ERR_clear_error();
		return (void)error_set(error, "unable to verify certificate request signature"),
		    NULL;
	}
	if (csrsigning_key_usages(usages, n, &key_usage, &ext_usages, error) != 0 ||
	    csrsigning_validity(p, now, ca->not_after, &not_before, &not_after, error) != 0)
		return NULL;
	key_type = EVP_PKEY_get_base_id(pub);
	if (key_type != EVP_PKEY_RSA && key_type != EVP_PKEY_EC && key_type != EVP_PKEY_ED25519 &&
	    key_type != EVP_PKEY_X25519)
		return (void)error_set(error, "failed to sign certificate: x509: unsupported "
		    "public key type"), NULL;
	if (RAND_bytes(serial_bytes, sizeof serial_bytes) != 1)
		return (void)error_set(error, "unable to generate a serial number"), NULL;
	subject = subject_from_request(r->req);
	cert = X509_new();
	serial = BN_bin2bn(serial_bytes, sizeof serial_bytes, NULL);
	if (subject == NULL || cert == NULL || serial == NULL ||
	    !X509_set_version(cert, X509_VERSION_3) ||
	    BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert)) == NULL ||
	    !X509_set_issuer_name(cert, X509_get_subject_name(ca->cert)) ||
	    !X509_set_subject_name(cert, subject) ||
	    ASN1_TIME_set(X509_getm_notBefore(cert), (time_t)not_before) == NULL ||
	    ASN1_TIME_set(X509_getm_notAfter(cert), (time_t)not_after) == NULL ||
	    !X509_set_pubkey(cert, pub) ||
	    add_extensions(cert, ca, r->req, key_usage, ext_usages, subject) != 0 ||
	    X509_sign(cert, ca->key, signing_digest(ca->key)) <= 0 ||
	    (out = BIO_new(BIO_s_mem())) == NULL || !PEM_write_bio_X509(out, cert)) {
		error_set(error, "failed to sign certificate");
		goto done;
	}
	BIO_get_mem_ptr(out, &mem);
	pem = xstrndup(mem->data, mem->length);
done:
	ERR_clear_error();
	BIO_free(out);
	BN_free(serial);
	X509_free(cert);
	X509_NAME_free(subject);
	return pem;
}

/* --- the controller -------------------------------------------------------------------- */

/* The CSR, and whether a signer takes it up (schema/017-csrsigning.sql). */
static const char csrsigning_read_sql[] =
    "SELECT uid, body, (SELECT to_sign FROM csrsigning_queue q WHERE q.name = ?1)"
    " FROM cache_objects"
    " WHERE resource = 'certificatesigningrequests' AND namespace = '' AND name = ?1";

/* A started signer: its files, as last loaded, and its CA. */
struct signer {
	char *cert_file;
	char *key_file;
	struct stat cert_stat, key_stat;
	struct csrsigning_ca *ca;
};

struct csrsigning_state {
	struct csrs csrs;		/* first: csrs_handle_event and _list_keys */
	struct signer signers[CSRSIGNING_SIGNERS];	/* ca NULL: not started */
	double max_duration;				/* --cluster-signing-duration */
};

/* True when a file's identity changed since st (or it cannot be looked at now). */
static int
file_changed(const char *path, const struct stat *st)
{
	struct stat now;

	if (stat(path, &now) != 0)
		return 0;	/* gone for now: keep what was loaded, as kube does */
	return now.st_ino != st->st_ino || now.st_dev != st->st_dev ||
	    now.st_size != st->st_size || now.st_mtim.tv_sec != st->st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != st->st_mtim.tv_nsec;
}

/* Loads a signer's CA from its files, remembering which files it read. */
static struct csrsigning_ca *
signer_load(struct signer *s, char **error)
{
	struct stat cert_stat, key_stat;
	struct csrsigning_ca *ca;

	if (stat(s->cert_file, &cert_stat) != 0)
		return (void)error_set(error, "error reading CA cert file \"%s\": %s",
		    s->cert_file, strerror(errno)), NULL;
	if (stat(s->key_file, &key_stat) != 0)
		return (void)error_set(error, "error reading CA key file \"%s\": %s",
		    s->key_file, strerror(errno)), NULL;
	ca = csrsigning_ca_load(s->cert_file, s->key_file, error);
	if (ca != NULL) {
		s->cert_stat = cert_stat;
		s->key_stat = key_stat;
	}
	return ca;
}

/* The signer's CA, loaded again first if its files changed. */
static const struct csrsigning_ca *
signer_ca(struct signer *s, const char *signer_name)
{
	struct csrsigning_ca *ca;
	char *error = NULL;

	if (!file_changed(s->cert_file, &s->cert_stat) &&
	    !file_changed(s->key_file, &s->key_stat))
		return s->ca;
	ca = signer_load(s, &error);
	if (ca == NULL) {
		log_warning("csrsigning: %s: the CA files changed but do not load (%s): "
		    "signing with the CA loaded before", signer_name, error);
		free(error);
		/* Not again until they change again. */
		stat(s->cert_file, &s->cert_stat);
		stat(s->key_file, &s->key_stat);
		return s->ca;
	}
	log_info("csrsigning: %s: loaded the CA files again (%s, %s)", signer_name,
	    s->cert_file, s->key_file);
	csrsigning_ca_free(s->ca);
	s->ca = ca;
	return s->ca;
}

/* The value of --cluster-signing-<signer>-<what>-file. */
static const char *
signer_flag(const struct controller *c, int signer, const char *what)
{
	char name[80];

	snprintf(name, sizeof name, "cluster-signing-%s-%s-file", signer_flag_names[signer],
	    what);
	return controller_flag_text(c, name);
}

/* Logs what the controller starts with: in the daemon (which has a metrics registry), as
 * information; plan and replay, which make every controller, stay quiet unless -v 2. */
#define say(c, ...) do {						\
	if ((c)->config->metrics != NULL)				\
		log_info(__VA_ARGS__);					\
	else								\
		log_v(2, __VA_ARGS__);					\
} while (0)

/* Which files each signer gets, as kube-controller-manager decides it; starts those with
 * files. Nothing to start is no error (it is logged once). */
static int
signers_start(struct controller *c, struct csrsigning_state *st, char **error)
{
	const char *cert = controller_flag_text(c, "cluster-signing-cert-file");
	const char *key = controller_flag_text(c, "cluster-signing-key-file");
	int any_specific = 0, started = 0;

	for (int i = 0; i < CSRSIGNING_SIGNERS; i++)
		any_specific |= *signer_flag(c, i, "cert") != '\0' ||
		    *signer_flag(c, i, "key") != '\0';
	if ((*cert == '\0' || *key == '\0') && !any_specific) {
		say(c, "csrsigning: no --cluster-signing-cert-file and "
		    "--cluster-signing-key-file (nor a signer's own pair) given: no CSR is "
		    "signed");
		return 0;
	}
	if (*cert != '\0' && *key != '\0' && any_specific)
		return error_set(error, "csrsigning: cannot give --cluster-signing-cert-file "
		    "and --cluster-signing-key-file and a signer's own files at once");
	for (int i = 0; i < CSRSIGNING_SIGNERS; i++) {
		struct signer *s = &st->signers[i];
		const char *sc = any_specific ? signer_flag(c, i, "cert") : cert;
		const char *sk = any_specific ? signer_flag(c, i, "key") : key;
		char *why = NULL;

		if (*sc == '\0' && *sk == '\0') {
			say(c, "csrsigning: %s is not started: other signers have files of "
			    "their own and it has none", csrsigning_signer_names[i]);
			continue;
		}
		if (*sc == '\0' || *sk == '\0')
			return error_set(error, "csrsigning: failed to init %s: "
			    "--cluster-signing-%s-%s-file is missing", csrsigning_signer_names[i],
			    signer_flag_names[i], *sc == '\0' ? "cert" : "key");
		s->cert_file = xstrdup(sc);
		s->key_file = xstrdup(sk);
		s->ca = signer_load(s, &why);
		if (s->ca == NULL) {
			error_set(error, "csrsigning: failed to init %s: %s",
			    csrsigning_signer_names[i], why);
			free(why);
			return -1;
		}
		started++;
	}
	say(c, "csrsigning: %d signer%s started, certificates of at most %.0f s",
	    started, started == 1 ? "" : "s", st->max_duration);
	return 0;
}

/* --- sync ------------------------------------------------------------------------------ */

/* The update of csr's status (csr taken as the body). */
static void
status_write(struct csrsigning_state *st, struct sync_result *out, const char *key,
    cJSON *csr, const char *verb, char *reason)
{
	struct action *a = action_append(&out->writes, &out->nwrites);

	a->type = ACTION_UPDATE_STATUS;
	a->verb = verb;
	a->resource = st->csrs.resource;
	a->namespace = xstrdup("");
	a->name = xstrdup(key);
	a->uid = xstrdup(out->owner_uid);
	a->body = csr;
	a->reason = reason;
}

/* Adds kube's Failed condition, for message, at now. */
static void
add_failed_condition(cJSON *csr, const char *message, double now)
{
	char stamp[TIME_RFC3339_SIZE];
	cJSON *status = json_child_object(csr, "status"), *conditions, *c;

	conditions = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	if (!cJSON_IsArray(conditions)) {
		conditions = cJSON_CreateArray();
		json_set(status, "conditions", conditions);
	}
	time_format_rfc3339((time_t)now, stamp);
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", "Failed");
	cJSON_AddStringToObject(c, "status", "True");
	cJSON_AddStringToObject(c, "reason", "SignerValidationFailure");
	cJSON_AddStringToObject(c, "message", message);
	cJSON_AddStringToObject(c, "lastUpdateTime", stamp);
	cJSON_AddItemToArray(conditions, c);
}

/* The base64 of n bytes (malloc'd). */
static char *
base64_encode(const char *data, size_t n)
{
	char *out = xmalloc((n + 2) / 3 * 4 + 1);

	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)data, (int)n);
	return out;
}

const char **
csrsigning_usages_of(const cJSON *csr, int *n)
{
	const cJSON *usages = json_path(csr, "spec.usages"), *u;
	const char **out = xcalloc((size_t)cJSON_GetArraySize(usages) + 1, sizeof *out);

	*n = 0;
	cJSON_ArrayForEach(u, usages)
		out[(*n)++] = cJSON_IsString(u) ? u->valuestring : "";
	return out;
}

/* Decides for an approved CSR of a started signer: the Failed condition or a certificate,
 * as a status write; an error of kube's (a request that does not parse, a signature that
 * fails) marks the result failed. */
static void
sign_or_fail(struct csrsigning_state *st, int signer, const char *key, cJSON *csr,
    double now, struct sync_result *out)
{
	const cJSON *expiration = json_path(csr, "spec.expirationSeconds");
	struct csrsigning_request req;
	struct csrsigning_policy policy;
	const struct csrsigning_ca *ca;
	char *error = NULL, *message, *pem;
	const char **usages;
	int n;

	if (csrsigning_request_parse(json_string(csr, "spec.request"), &req, &error) != 0) {
		log_warning("csrsigning: unable to parse csr \"%s\": %s", key, error);
		free(error);
		out->failed = 1;
		return;
	}
	usages = csrsigning_usages_of(csr, &n);
	message = csrsigning_validate(signer, &req, usages, n);
	if (message != NULL) {
		cJSON *body = cJSON_Duplicate(csr, 1);

		add_failed_condition(body, message, now);
		status_write(st, out, key, body, "fail", xasprintf("%s: %s",
		    csrsigning_signer_names[signer], message));
		free(message);
		goto done;
	}
	ca = signer_ca(&st->signers[signer], csrsigning_signer_names[signer]);
	policy = csrsigning_policy_kube(csrsigning_duration(cJSON_IsNumber(expiration),
	    cJSON_IsNumber(expiration) ? (long long)expiration->valuedouble : 0,
	    st->max_duration));
	pem = csrsigning_sign(ca, &req, usages, n, &policy, now, &error);
	if (pem == NULL) {
		log_warning("csrsigning: error auto signing csr \"%s\": %s", key, error);
		free(error);
		out->failed = 1;
	} else {
		cJSON *body = cJSON_Duplicate(csr, 1);
		char *b64 = base64_encode(pem, strlen(pem));

		json_set(json_child_object(body, "status"), "certificate",
		    cJSON_CreateString(b64));
		status_write(st, out, key, body, "sign", xasprintf("%s, for %.0f s",
		    csrsigning_signer_names[signer], policy.ttl));
		free(b64);
		free(pem);
	}
done:
	free(usages);
	csrsigning_request_clear(&req);
}

static int
csrsigning_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct csrsigning_state *st = c->state;
	cJSON *csr;
	int signer, to_sign = 0, rc = csrs_read(&st->csrs, c, key, out, &to_sign, error);

	if (rc <= 0)
		return rc;
	csr = out->owner;
	if (!to_sign)
		return 0;
	signer = csrsigning_signer_find(json_string(csr, "spec.signerName"));
	if (signer < 0 || st->signers[signer].ca == NULL)
		return 0;
	sign_or_fail(st, signer, key, csr, now, out);
	return 0;
}

/* --- the type -------------------------------------------------------------------------- */

static int
csrsigning_init(struct controller *c, char **error)
{
	struct csrsigning_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->max_duration = controller_flag_seconds(c, "cluster-signing-duration");
	if (csrs_init(&st->csrs, c, csrsigning_read_sql, error) != 0)
		return -1;
	return signers_start(c, st, error);
}

static void
csrsigning_fini(struct controller *c)
{
	struct csrsigning_state *st = c->state;

	if (st == NULL)
		return;
	csrs_fini(&st->csrs);
	for (int i = 0; i < CSRSIGNING_SIGNERS; i++) {
		csrsigning_ca_free(st->signers[i].ca);
		free(st->signers[i].cert_file);
		free(st->signers[i].key_file);
	}
	free(st);
	c->state = NULL;
}

#define SIGNER_FLAGS(name, signer)						\
	{ "cluster-signing-" name "-cert-file", CONTROLLER_FLAG_STRING, "", 0, 0,	\
	    "the PEM CA certificate that signs " signer " CSRs (with its key file; "	\
	    "instead of --cluster-signing-cert-file)" },				\
	{ "cluster-signing-" name "-key-file", CONTROLLER_FLAG_STRING, "", 0, 0,	\
	    "the PEM private key of that CA" }

static const struct controller_flag csrsigning_flags[] = {
	{ "cluster-signing-cert-file", CONTROLLER_FLAG_STRING, "", 0, 0,
	    "the PEM CA certificate that signs the CSRs of kube's four kubernetes.io "
	    "signers (with --cluster-signing-key-file; none: no CSR is signed)" },
	{ "cluster-signing-key-file", CONTROLLER_FLAG_STRING, "", 0, 0,
	    "the PEM private key (RSA, ECDSA or Ed25519) of that CA" },
	{ "cluster-signing-duration", CONTROLLER_FLAG_DURATION, "8760h0m0s", 0, 0,
	    "the longest lifetime of a signed certificate (a CSR's "
	    "spec.expirationSeconds may ask for less, 10m at the least)" },
	SIGNER_FLAGS("kubelet-serving", "kubernetes.io/kubelet-serving"),
	SIGNER_FLAGS("kubelet-client", "kubernetes.io/kube-apiserver-client-kubelet"),
	SIGNER_FLAGS("kube-apiserver-client", "kubernetes.io/kube-apiserver-client"),
	SIGNER_FLAGS("legacy-unknown", "kubernetes.io/legacy-unknown"),
	{ NULL, CONTROLLER_FLAG_STRING, NULL, 0, 0, NULL },
};

static const char *const csrsigning_resources[] = { "certificatesigningrequests", NULL };

const struct controller_type csrsigning_controller_type = {
	.name = "csrsigning",
	.resources = csrsigning_resources,
	.default_workers = 5,		/* kube runs each signer with 5; no flag */
	.base_backoff = 0.2,		/* kube's certificate queue: 200 ms to 1000 s */
	.workers_flag = NULL,
	.enable_flag = NULL,
	.flags = csrsigning_flags,
	/* kube's signer records no event; its queue's name is "certificate". */
	.event_component = "csrsigning",
	.client_name = "certificate-controller",
	.recovery = NULL,
	.init = csrsigning_init,
	.fini = csrsigning_fini,
	.handle_event = csrs_handle_event,
	.list_keys = csrs_list_keys,
	.sync = csrsigning_sync,
};
