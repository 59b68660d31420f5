/*
 * rootca.c - the root CA file as kube-controller-manager reads it (see rootca.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "rootca.h"
#include "util.h"

int
rootca_check_certificates(const char *pem, size_t n, char **error)
{
	BIO *bio = BIO_new_mem_buf(pem, (int)n);
	int certificates = 0, bad = 0;
	char *name, *header;
	unsigned char *der;
	long len;

	if (bio == NULL)
		return error_set(error, "out of memory");
	while (!bad && PEM_read_bio(bio, &name, &header, &der, &len) == 1) {
		if (strcmp(name, "CERTIFICATE") == 0 && header[0] == '\0') {
			const unsigned char *p = der;
			X509 *x = d2i_X509(NULL, &p, len);

			bad = x == NULL || p != der + len;
			certificates++;
			X509_free(x);
		}
		OPENSSL_free(name);
		OPENSSL_free(header);
		OPENSSL_free(der);
	}
	/* The loop ends at the first thing that is no block: the end of the text. */
	ERR_clear_error();
	BIO_free(bio);
	if (bad)
		return error_set(error, "a CERTIFICATE block is not an X.509 certificate");
	if (certificates == 0)
		return error_set(error, "data does not contain any valid RSA or ECDSA "
		    "certificates");
	return 0;
}

int
rootca_read_file(const char *path, char **ca, char **error)
{
	struct buf b;
	int rc;

	buf_init(&b);
	rc = file_read_all(path, "open", ROOTCA_FILE_MAX, &b, NULL, error);
	/* The CA goes into a JSON string and an SQL text: text, no NUL in it. */
	if (rc == 0 && b.len > 0 && memchr(b.data, '\0', b.len) != NULL)
		rc = error_set(error, "the file holds a NUL byte");
	if (rc == 0)
		rc = rootca_check_certificates(b.len > 0 ? b.data : "", b.len, error);
	if (rc != 0) {
		buf_free(&b);
		return -1;
	}
	*ca = buf_detach(&b);
	return 0;
}
