/*
 * fuzz_exec_credential.c - kube_exec_credential_parse on arbitrary plugin output. It must not
 * crash or leak; on success there is a token or a certificate with its key, and on failure
 * the message starts with "ExecCredential: ".
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "execcredential.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kube_exec_credential *cred = NULL;
	char *error = NULL;

	if (kube_exec_credential_parse((const char *)data, size,
	    "client.authentication.k8s.io/v1", &cred, &error) == 0) {
		if (cred == NULL || error != NULL)
			abort();
		if (cred->token == NULL && cred->cert_pem == NULL)
			abort();
		if ((cred->cert_pem == NULL) != (cred->key_pem == NULL))
			abort();
		if (cred->cert_pem != NULL && cred->cert_pem_len != strlen(cred->cert_pem))
			abort();
		if (cred->expiration < 0)
			abort();
		kube_exec_credential_free(cred);
	} else {
		if (cred != NULL || error == NULL || strncmp(error, "ExecCredential: ", 16) != 0)
			abort();
		free(error);
	}
	return 0;
}
