/*
 * csrsigning.h - the CSR signer (kube's certificatesigningrequest-signing-controller, alias
 * csrsigning): approved CertificateSigningRequests of kube's four signers get a certificate
 * signed by the cluster's CA, or the Failed condition when the request breaks its signer's
 * rules.
 *
 * The functions below are the signer's rules without the cache: reading a request, kube's
 * checks per signer, the lifetime a certificate gets, the usages it carries, and the
 * signature itself, given a CA and the time.
 */
#ifndef SQLKCM_CONTROLLERS_CSRSIGNING_H
#define SQLKCM_CONTROLLERS_CSRSIGNING_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include <openssl/x509.h>

#include "controller.h"

extern const struct controller_type csrsigning_controller_type;

/* kube's signers, each with its own CA files and rules. */
enum csrsigning_signer {
	CSRSIGNING_KUBELET_SERVING,		/* kubernetes.io/kubelet-serving */
	CSRSIGNING_KUBELET_CLIENT,		/* kubernetes.io/kube-apiserver-client-kubelet */
	CSRSIGNING_KUBE_APISERVER_CLIENT,	/* kubernetes.io/kube-apiserver-client */
	CSRSIGNING_LEGACY_UNKNOWN,		/* kubernetes.io/legacy-unknown */
	CSRSIGNING_SIGNERS
};

/* The signerName of each signer. */
extern const char *const csrsigning_signer_names[CSRSIGNING_SIGNERS];

/* The signer called name, or -1 when kube runs none of that name. */
int csrsigning_signer_find(const char *name);

/* A text of the request, with its length (it may hold NUL bytes). */
struct csrsigning_text {
	char *s;			/* NUL-terminated too */
	size_t len;
};

/* A certificate request as the signer reads it (Go's x509.CertificateRequest). */
struct csrsigning_request {
	X509_REQ *req;
	struct csrsigning_text common_name;	/* the last CN; empty when none */
	struct csrsigning_text *organizations;	/* every O, in order */
	int norganizations;
	int ndns, nip, nemail, nuri;		/* the subjectAltNames of each kind */
};

/*
 * Reads spec.request: b64 is its JSON value (base64 of PEM). The first PEM block must be a
 * CERTIFICATE REQUEST that parses, with a public key Go reads and names and SANs Go
 * accepts. The signature is not checked here (csrsigning_sign does, as kube's authority).
 * -1 with *error saying what is wrong (the words a person needs, never the request).
 */
int csrsigning_request_parse(const char *b64, struct csrsigning_request *out, char **error);
void csrsigning_request_clear(struct csrsigning_request *r);

/*
 * kube's checks of signer for a request and its spec.usages (n strings): NULL when they
 * pass, else the message of the Failed condition (malloc'd): kube's
 * ValidateKubeletServingCSR, ValidateKubeletClientCSR, the client usages of
 * kube-apiserver-client; legacy-unknown has none.
 */
char *csrsigning_validate(enum csrsigning_signer signer, const struct csrsigning_request *r,
    const char *const *usages, int n);

/* The strings of csr's spec.usages (borrowed from csr; a non-string is ""): *n of them,
 * in a malloc'd array. */
const char **csrsigning_usages_of(const cJSON *csr, int *n);

/* kube's duration(): the lifetime asked for (has_expiration: spec.expirationSeconds is
 * set, to expiration_seconds), at least 10 minutes and at most max_seconds (the
 * --cluster-signing-duration); max_seconds when none is asked for. */
double csrsigning_duration(int has_expiration, long long expiration_seconds,
    double max_seconds);

/* The extended key usages, in the order of Go's x509.ExtKeyUsage constants (the order
 * kube's certificates list them). */
enum csrsigning_ext_usage {
	CSRSIGNING_EKU_ANY, CSRSIGNING_EKU_SERVER_AUTH, CSRSIGNING_EKU_CLIENT_AUTH,
	CSRSIGNING_EKU_CODE_SIGNING, CSRSIGNING_EKU_EMAIL_PROTECTION,
	CSRSIGNING_EKU_IPSEC_END_SYSTEM, CSRSIGNING_EKU_IPSEC_TUNNEL, CSRSIGNING_EKU_IPSEC_USER,
	CSRSIGNING_EKU_TIMESTAMPING, CSRSIGNING_EKU_OCSP_SIGNING, CSRSIGNING_EKU_MICROSOFT_SGC,
	CSRSIGNING_EKU_NETSCAPE_SGC, CSRSIGNING_EKU_COUNT
};

/* Key usage bits: 1 << n for bit n of the X.509 KeyUsage (digitalSignature is bit 0), as
 * Go's x509.KeyUsage. */
#define CSRSIGNING_KU_DIGITAL_SIGNATURE		(1u << 0)
#define CSRSIGNING_KU_CONTENT_COMMITMENT	(1u << 1)
#define CSRSIGNING_KU_KEY_ENCIPHERMENT		(1u << 2)
#define CSRSIGNING_KU_DATA_ENCIPHERMENT		(1u << 3)
#define CSRSIGNING_KU_KEY_AGREEMENT		(1u << 4)
#define CSRSIGNING_KU_CERT_SIGN			(1u << 5)
#define CSRSIGNING_KU_CRL_SIGN			(1u << 6)
#define CSRSIGNING_KU_ENCIPHER_ONLY		(1u << 7)
#define CSRSIGNING_KU_DECIPHER_ONLY		(1u << 8)

/*
 * kube's keyUsagesFromStrings: the n usages of a CSR as key usage bits (*key_usage) and the
 * set of extended ones (*ext_usages: bit 1 << enum csrsigning_ext_usage). -1 with *error
 * ("unrecognized usage values: [\"x\"]") when one is not a usage kube knows.
 */
int csrsigning_key_usages(const char *const *usages, int n, unsigned *key_usage,
    unsigned *ext_usages, char **error);

/* How kube's authority dates a certificate (its PermissiveSigningPolicy). */
struct csrsigning_policy {
	double ttl;		/* seconds (csrsigning_duration) */
	double backdate;	/* NotBefore is this long before now (kube: 5 min) */
	double short_ttl;	/* a ttl below this is not backdated at its end (kube: 8 h) */
};

/* kube's signing policy for csrsigning_duration's ttl: backdate 5 min, short 8 h. */
struct csrsigning_policy csrsigning_policy_kube(double ttl);

/*
 * The validity of a certificate signed at now under p by a CA that expires at
 * ca_not_after: NotBefore is now - backdate; NotAfter now + ttl (short ones) or now + ttl
 * - backdate, cut at ca_not_after. -1 with *error as kube words it when the CA has
 * expired (at NotBefore, or at now).
 */
int csrsigning_validity(const struct csrsigning_policy *p, double now, double ca_not_after,
    double *not_before, double *not_after, char **error);

/* A CA: its certificate and private key (RSA, ECDSA or Ed25519), never printed. */
struct csrsigning_ca;

/*
 * Loads a CA from PEM texts: cert must hold exactly one certificate, key a private key
 * (PKCS #1, SEC 1 or PKCS #8, not encrypted) that matches it. cert_name and key_name name them
 * in errors (the files). NULL with *error set on failure.
 */
struct csrsigning_ca *csrsigning_ca_new(const char *cert, size_t cert_len, const char *key,
    size_t key_len, const char *cert_name, const char *key_name, char **error);
/* The same from files. */
struct csrsigning_ca *csrsigning_ca_load(const char *cert_file, const char *key_file,
    char **error);
void csrsigning_ca_free(struct csrsigning_ca *ca);
/* The CA's certificate (borrowed). */
X509 *csrsigning_ca_certificate(const struct csrsigning_ca *ca);

/*
 * kube's authority: checks r's signature, then signs a certificate for it with ca under p
 * at now, carrying the n usages: a random 128-bit serial, the request's subject and DNS,
 * email, IP and URI names, the key usages, CA:FALSE, the CA's key id. Returns the
 * certificate as PEM (malloc'd), or NULL with *error set.
 */
char *csrsigning_sign(const struct csrsigning_ca *ca, const struct csrsigning_request *r,
    const char *const *usages, int n, const struct csrsigning_policy *p, double now,
    char **error);

#endif
