/*
 * fuzz_kubeconfig.c - kube_config_parse on arbitrary input, with current-context and with a
 * fixed context name. It must not crash or leak; on success the server is an http(s) URL
 * without a trailing slash, and an error is always a "kubeconfig ..." message.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kubeconfig.h"

/* Checks what kube_config_parse promises for one context choice. */
static void
check(const uint8_t *data, size_t size, const char *context)
{
	struct kube_config *c = NULL;
	char *error = NULL;

	if (kube_config_parse((const char *)data, size, "/fuzz/config", context, &c,
	    &error) == 0) {
		size_t len;

		if (c == NULL || error != NULL || c->server == NULL)
			abort();
		if (strncmp(c->server, "http://", 7) != 0 && strncmp(c->server, "https://", 8) != 0)
			abort();
		len = strlen(c->server);
		if (c->server[len - 1] == '/')
			abort();
		if (c->origin == NULL || strncmp(c->origin, "kubeconfig /fuzz/config", 23) != 0)
			abort();
		if ((c->cert_pem != NULL) + (c->cert_file != NULL) > 1 ||
		    (c->key_pem != NULL) + (c->key_file != NULL) > 1)
			abort();
		if (c->insecure_skip_tls_verify && (c->ca_pem != NULL || c->ca_file != NULL))
			abort();
		kube_config_free(c);
	} else {
		if (c != NULL || error == NULL || strncmp(error, "kubeconfig /fuzz/config: ", 25) != 0)
			abort();
		free(error);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check(data, size, NULL);
	check(data, size, "c");
	return 0;
}
