/*
 * execcredential.h - exec credential plugins: running one, and reading its ExecCredential.
 */
#ifndef SQLKCM_EXECCREDENTIAL_H
#define SQLKCM_EXECCREDENTIAL_H

#include <stddef.h>
#include <time.h>

/* Exec plugin limits: its stdout is read up to KUBE_EXEC_OUTPUT_MAX bytes, and it is killed
 * after timeout_ms (KUBE_EXEC_TIMEOUT_MS unless a caller changes it). */
#define KUBE_EXEC_OUTPUT_MAX (1024 * 1024)
#define KUBE_EXEC_TIMEOUT_MS 30000

/* users[].user.exec: a credential plugin. */
struct kube_exec_config {
	char *api_version;		/* client.authentication.k8s.io/v1 or v1beta1 */
	char *command;			/* resolved against the kubeconfig's directory if it has a '/' */
	char **args;
	size_t nargs;
	char **env_names;		/* added to (and overriding) sqlkcm's environment */
	char **env_values;
	size_t nenv;
	int provide_cluster_info;	/* pass spec.cluster in KUBERNETES_EXEC_INFO */
	char *install_hint;		/* or NULL */
	char *interactive_mode;		/* Never, IfAvailable or Always; sqlkcm is never interactive */
	int timeout_ms;			/* KUBE_EXEC_TIMEOUT_MS; tests shorten it */
};

/* What a plugin is run for: its section of the kubeconfig, and the cluster it may be told
 * of (exec.provideClusterInfo). Borrowed strings; NULL when unset. */
struct exec_credential_request {
	const struct kube_exec_config *exec;
	const char *origin;		/* where the kubeconfig came from, for messages */
	const char *server;
	const char *tls_server_name;
	const char *proxy_url;
	int insecure_skip_tls_verify;
	const char *ca_pem;		/* the CA as data, or */
	size_t ca_pem_len;
	const char *ca_file;		/* as a file */
};

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

/* Runs the plugin of c and reads its answer into *out (free it with
 * kube_exec_credential_free). -1 with *error set, naming the plugin and what is wrong. */
int exec_credential_get(const struct exec_credential_request *c,
    struct kube_exec_credential **out, char **error);

#endif
