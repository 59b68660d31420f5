/*
 * execcredential.h - exec credential plugins: running one, and reading its ExecCredential.
 */
#ifndef SQLKCM_EXECCREDENTIAL_H
#define SQLKCM_EXECCREDENTIAL_H

#include <stddef.h>
#include <time.h>

struct kube_config;

/* The status of an ExecCredential written by an exec plugin. */
struct kube_exec_credential {
	char *token;			/* or NULL */
	char *cert_pem;			/* clientCertificateData and clientKeyData, or NULL */
	size_t cert_pem_len;
	char *key_pem;
	size_t key_pem_len;
	time_t expiration;		/* 0 when the plugin gave no expirationTimestamp */
};

/*
 * Parses an exec plugin's output: an ExecCredential whose apiVersion is api_version, with
 * status.token and/or status.clientCertificateData with status.clientKeyData (PEM), and an
 * optional RFC 3339 status.expirationTimestamp.
 */
int kube_exec_credential_parse(const char *json, size_t len, const char *api_version,
    struct kube_exec_credential **out, char **error);

void kube_exec_credential_free(struct kube_exec_credential *cred);

/* Runs c's exec plugin (c->exec) and reads its answer into *out (free it with
 * kube_exec_credential_free). -1 with *error set, naming the user and the plugin. */
int exec_credential_get(const struct kube_config *c, struct kube_exec_credential **out,
    char **error);

#endif
