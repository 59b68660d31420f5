/*
 * kubeconfig.h - how sqlkcm finds the apiserver and authenticates to it: kubeconfig files,
 * in-cluster service-account configuration, and the credentials for each request
 * (static token, rotating token file, client certificates, exec plugins).
 *
 * The rules are client-go's (clientcmd loader and validation, rest.InClusterConfig, the exec
 * credential plugin protocol); where sqlkcm differs it is said below.
 */
#ifndef SQLKCM_KUBECONFIG_H
#define SQLKCM_KUBECONFIG_H

#include <stddef.h>
#include <time.h>

#include "execcredential.h"

/* The default service-account directory of a pod. */
#define KUBE_SERVICE_ACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* Files (kubeconfig, token, certificates, CA) larger than this are refused. */
#define KUBE_CONFIG_FILE_MAX (1024 * 1024)

struct kube_config_state;

/*
 * A connection configuration. Strings are NULL when unset. CA, client certificate and key are
 * given either as a file (absolute, or relative to the working directory when the kubeconfig
 * had no path) or as decoded PEM data, never both. The credentials to send are not read from
 * here directly: call kube_config_credentials before each request.
 */
struct kube_config {
	char *server;			/* e.g. https://127.0.0.1:6443, no trailing slash */
	char *tls_server_name;
	int insecure_skip_tls_verify;	/* only when the kubeconfig sets it true */
	char *proxy_url;		/* clusters[].cluster.proxy-url, or NULL */
	int disable_compression;	/* clusters[].cluster.disable-compression: no gzip */
	char *ca_file;
	char *ca_pem;
	size_t ca_pem_len;
	char *cert_file;
	char *cert_pem;
	size_t cert_pem_len;
	char *key_file;
	char *key_pem;
	size_t key_pem_len;
	char *token;
	char *token_file;		/* re-read when it changes; wins over token, as in client-go */
	struct kube_exec_config *exec;
	char *namespace;		/* the context's namespace, or NULL */
	char *origin;			/* "kubeconfig PATH (context NAME)" or "in-cluster", for messages */

	struct kube_config_state *state;	/* credential caches; private to kubeconfig.c */
};

/*
 * Parses kubeconfig YAML from memory. path (may be NULL) names the file in messages and is the
 * base for relative file paths, which are resolved against its directory as client-go does.
 * context NULL means current-context. Only the chosen context, its cluster and its user are
 * validated semantically (as client-go's ConfirmUsable does), but every entry must decode:
 * wrong types, bad base64 and duplicated names are errors wherever they are. The CA,
 * certificate, key and token files that the chosen context uses must be readable and, if
 * regular files, not empty (a token file may be, beside a static token). yaml may be NULL
 * when len is 0.
 */
int kube_config_parse(const char *yaml, size_t len, const char *path, const char *context,
    struct kube_config **out, char **error);

/* Reads and parses one kubeconfig file. */
int kube_config_load_file(const char *path, const char *context, struct kube_config **out,
    char **error);

/*
 * Reads and merges several kubeconfig files, as client-go merges a $KUBECONFIG list: the first
 * file that sets current-context wins, and a context, cluster or user is taken from the first
 * file that defines that name (relative paths stay relative to their own file). Files that do
 * not exist are skipped; at least one must exist.
 */
int kube_config_load_files(const char *const *paths, size_t npaths, const char *context,
    struct kube_config **out, char **error);

/*
 * The configuration of a pod: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (an
 * IPv6 host is bracketed), the token file sa_dir/token (re-read as the kubelet rotates it),
 * sa_dir/ca.crt if it exists, and the namespace in sa_dir/namespace. sa_dir NULL means
 * KUBE_SERVICE_ACCOUNT_DIR.
 */
int kube_config_in_cluster(const char *sa_dir, struct kube_config **out, char **error);

/*
 * Finds the configuration the way sqlkcm run does: the --kubeconfig flag (the file must
 * exist); else $KUBECONFIG, a colon-separated list merged as kube_config_load_files does
 * (missing files skipped); else in-cluster when KUBERNETES_SERVICE_HOST is set; else
 * ~/.kube/config. Then master, when set, replaces the server (with no configuration at all,
 * master alone is enough for an unauthenticated connection). context as for
 * kube_config_parse (ignored in-cluster).
 *
 * Kubeconfig files with nothing in them (empty, white space, comments, "{}": no cluster,
 * user, context or current-context) are client-go's "no configuration has been provided":
 * an error without --master, but in a pod or with --master they count as no file at all.
 */
int kube_config_resolve(const char *kubeconfig_flag, const char *context, const char *master,
    struct kube_config **out, char **error);

void kube_config_free(struct kube_config *c);

/* What to present on the next request. Pointers are owned by the kube_config and stay valid
 * until the next kube_config_credentials call or kube_config_free. */
struct kube_credentials {
	const char *token;		/* bearer token, or NULL */
	const char *cert_pem;		/* client certificate and key, or NULL */
	size_t cert_pem_len;
	const char *key_pem;
	size_t key_pem_len;
};

/*
 * Returns the credentials for the next request; cheap enough to call before each one.
 * - token_file: re-read only when its inode, size or mtime changed (a failed re-read keeps the
 *   last good token, as client-go's cached file token source does);
 * - else a static token;
 * - else the exec plugin's result, cached until its expirationTimestamp, re-run when expired
 *   or when unauthorized_seen says the apiserver answered 401 with the cached credentials.
 * Client certificate files are re-read when they change, like the token file. A certificate
 * returned by an exec plugin replaces the configured one.
 */
int kube_config_credentials(struct kube_config *c, int unauthorized_seen,
    struct kube_credentials *out, char **error);

#endif
