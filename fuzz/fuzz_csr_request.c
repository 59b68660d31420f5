/*
 * fuzz_csr_request.c - the CSR signer (controllers/csrsigning.c) on arbitrary certificate
 * requests, as a CSR's spec.request brings them: the input is the request's DER (wrapped
 * in a CERTIFICATE REQUEST PEM block), or, when it starts with '-', the PEM text itself;
 * either is base64-encoded as the JSON holds it and read with csrsigning_request_parse.
 * A request that parses is checked by every signer's rules and signed by a CA made once
 * (EC P-256), with the usages of a kubelet's client; a certificate that comes out must
 * parse and verify against the CA.
 *
 * It must not crash or leak; a refusal always says why.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "controllers/csrsigning.h"
#include "util.h"

static struct csrsigning_ca *ca;

/* A self-signed CA for the whole run. */
static void
ca_make(void)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *cert = X509_new();
	BIO *c = BIO_new(BIO_s_mem()), *k = BIO_new(BIO_s_mem());
	BUF_MEM *cm, *km;
	char *error = NULL;

	X509_set_version(cert, X509_VERSION_3);
	ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_UTF8,
	    (const unsigned char *)"fuzz-ca", -1, -1, 0);
	X509_set_issuer_name(cert, X509_get_subject_name(cert));
	X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
	X509_gmtime_adj(X509_getm_notAfter(cert), 3600L * 24 * 365 * 5);
	X509_set_pubkey(cert, key);
	X509_sign(cert, key, EVP_sha256());
	PEM_write_bio_X509(c, cert);
	PEM_write_bio_PrivateKey(k, key, NULL, NULL, 0, NULL, NULL);
	BIO_get_mem_ptr(c, &cm);
	BIO_get_mem_ptr(k, &km);
	ca = csrsigning_ca_new(cm->data, cm->length, km->data, km->length, "ca.crt", "ca.key",
	    &error);
	if (ca == NULL)
		abort();
	BIO_free(c);
	BIO_free(k);
	X509_free(cert);
	EVP_PKEY_free(key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const usages[] = { "digital signature", "client auth" };
	struct csrsigning_policy policy = csrsigning_policy_kube(3600);
	struct csrsigning_request req;
	char *b64, *error = NULL, *pem;
	BIO *bio;
	BUF_MEM *mem;

	if (ca == NULL)
		ca_make();
	if (size > 65536)
		return 0;
	bio = BIO_new(BIO_s_mem());
	if (size > 0 && data[0] == '-')
		BIO_write(bio, data, (int)size);
	else
		PEM_write_bio(bio, "CERTIFICATE REQUEST", "", data, (long)size);
	BIO_get_mem_ptr(bio, &mem);
	b64 = xmalloc(mem->length / 3 * 4 + 8);
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)mem->data,
	    (int)mem->length);
	BIO_free(bio);
	if (csrsigning_request_parse(b64, &req, &error) != 0) {
		if (error == NULL || req.req != NULL)
			abort();
		free(error);
		free(b64);
		return 0;
	}
	for (int s = 0; s < CSRSIGNING_SIGNERS; s++)
		free(csrsigning_validate(s, &req, usages, 2));
	pem = csrsigning_sign(ca, &req, usages, 2, &policy, (double)time(NULL), &error);
	if (pem == NULL) {
		if (error == NULL)
			abort();
		free(error);
	} else {
		BIO *in = BIO_new_mem_buf(pem, -1);
		X509 *cert = PEM_read_bio_X509(in, NULL, NULL, NULL);

		if (cert == NULL || X509_verify(cert, X509_get0_pubkey(
		    csrsigning_ca_certificate(ca))) != 1)
			abort();
		X509_free(cert);
		BIO_free(in);
		free(pem);
	}
	csrsigning_request_clear(&req);
	free(b64);
	return 0;
}
