/*
 * test_kubeconfig.c - connection configuration: kubeconfig parsing and validation, merging,
 * in-cluster configuration, the search order, credentials (token files, exec plugins) and
 * the ExecCredential parser.
 *
 * Fixtures are inline YAML. Tests that need files (relative paths, token files, exec plugins
 * written as small shell scripts) make a temporary directory and remove it at the end.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "execcredential.h"
#include "kubeconfig.h"
#include "timeutil.h"
#include "util.h"

/* base64 of "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n" and friends. */
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
#define CA_PEM "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"
#define CERT_B64 "Q0VSVA=="	/* CERT */
#define KEY_B64 "S0VZ"		/* KEY */

#define CLUSTER_OK \
	"clusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:6443\n"
#define USER_OK \
	"users:\n- name: u\n  user:\n    token: SECRET-token-1\n"
#define CONTEXT_OK \
	"contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\ncurrent-context: c\n"
#define PATH "/k/config"

/* ---------------------------------------------------------------------------------- */
/* Helpers */

/* Makes a temporary directory; returns its malloc'd path. */
static char *
tmpdir_make(void)
{
	char *dir = xstrdup("/tmp/test_kubeconfig.XXXXXX");

	assert_non_null(mkdtemp(dir));
	return dir;
}

/* Removes a temporary directory and frees its path. */
static void
tmpdir_remove(char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(dir);
}

/* Writes text to dir/name (mode 0755 if executable); returns the malloc'd path. */
static char *
file_write(const char *dir, const char *name, const char *text, int executable)
{
	char *path = xasprintf("%s/%s", dir, name);
	char *tmp = xasprintf("%s.tmp", path);
	FILE *f = fopen(tmp, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(tmp, executable ? 0755 : 0644), 0);
	/* A rename gives a new inode, as the kubelet's atomic writer does. */
	assert_int_equal(rename(tmp, path), 0);
	free(tmp);
	return path;
}

/* Parses yaml from memory with path PATH; returns the error message or NULL. */
static char *
parse_error(const char *yaml, const char *context)
{
	struct kube_config *c = NULL;
	char *error = NULL;

	if (kube_config_parse(yaml, strlen(yaml), PATH, context, &c, &error) == 0) {
		kube_config_free(c);
		return NULL;
	}
	assert_null(c);
	assert_non_null(error);
	return error;
}

/* Parses yaml that must be valid. */
static struct kube_config *
parse_ok(const char *yaml, const char *path, const char *context)
{
	struct kube_config *c = NULL;
	char *error = NULL;
	int r = kube_config_parse(yaml, strlen(yaml), path, context, &c, &error);

	if (r != 0)
		fail_msg("unexpected error: %s", error);
	assert_non_null(c);
	return c;
}

/* Counts the lines of a file (the runs of a plugin that appends one per run). */
static int
file_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, ch;

	if (f == NULL)
		return 0;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

/* ---------------------------------------------------------------------------------- */
/* Parsing */

static void
parse_reads_cluster_user_and_context(void **state)
{
	(void)state;
	struct kube_config *c = parse_ok(
	    "apiVersion: v1\nkind: Config\n"
	    "clusters:\n- name: k\n  cluster:\n    server: HTTPS://10.0.0.1:6443/\n"
	    "    certificate-authority-data: " CA_B64 "\n    tls-server-name: kubernetes\n"
	    "users:\n- name: u\n  user:\n    client-certificate-data: " CERT_B64 "\n"
	    "    client-key-data: " KEY_B64 "\n"
	    "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
	    "    namespace: kube-system\n"
	    "current-context: c\n", PATH, NULL);

	assert_string_equal(c->server, "https://10.0.0.1:6443");
	assert_string_equal(c->tls_server_name, "kubernetes");
	assert_int_equal(c->insecure_skip_tls_verify, 0);
	assert_int_equal(c->ca_pem_len, strlen(CA_PEM));
	assert_memory_equal(c->ca_pem, CA_PEM, strlen(CA_PEM));
	assert_null(c->ca_file);
	assert_int_equal(c->cert_pem_len, 4);
	assert_memory_equal(c->cert_pem, "CERT", 4);
	assert_int_equal(c->key_pem_len, 3);
	assert_memory_equal(c->key_pem, "KEY", 3);
	assert_null(c->token);
	assert_null(c->exec);
	assert_string_equal(c->namespace, "kube-system");
	assert_string_equal(c->origin, "kubeconfig /k/config (context c)");
	kube_config_free(c);
}

static void
parse_uses_the_context_argument_over_current_context(void **state)
{
	(void)state;
	struct kube_config *c = parse_ok(
	    "clusters:\n- name: a\n  cluster:\n    server: https://a\n"
	    "- name: b\n  cluster:\n    server: http://b:8080/prefix/\n"
	    "users:\n- name: u\n  user:\n    token: t\n"
	    "contexts:\n- name: ca\n  context: {cluster: a, user: u}\n"
	    "- name: cb\n  context: {cluster: b, user: u}\n"
	    "current-context: ca\n", PATH, "cb");

	assert_string_equal(c->server, "http://b:8080/prefix");
	assert_null(c->namespace);
	assert_string_equal(c->origin, "kubeconfig /k/config (context cb)");
	kube_config_free(c);
}

static void
parse_accepts_json_and_yaml_booleans_and_wrapped_base64(void **state)
{
	(void)state;
	struct kube_config *c = parse_ok(
	    "{\"clusters\": [{\"name\": \"k\", \"cluster\": {\"server\": \"https://h\","
	    " \"insecure-skip-tls-verify\": true}}],"
	    " \"users\": [{\"name\": \"u\", \"user\": {\"client-certificate-data\": \"Q0VS\\nVA==\","
	    " \"client-key-data\": \"S0\\r\\nVZ\"}}],"
	    " \"contexts\": [{\"name\": \"c\", \"context\": {\"cluster\": \"k\", \"user\": \"u\"}}],"
	    " \"current-context\": \"c\"}", PATH, NULL);

	assert_int_equal(c->insecure_skip_tls_verify, 1);
	assert_memory_equal(c->cert_pem, "CERT", 4);
	assert_memory_equal(c->key_pem, "KEY", 3);
	kube_config_free(c);

	c = parse_ok(CLUSTER_OK "    insecure-skip-tls-verify: yes\n" USER_OK CONTEXT_OK, PATH,
	    NULL);
	assert_int_equal(c->insecure_skip_tls_verify, 1);
	kube_config_free(c);
	c = parse_ok(CLUSTER_OK "    insecure-skip-tls-verify: false\n" USER_OK CONTEXT_OK, PATH,
	    NULL);
	assert_int_equal(c->insecure_skip_tls_verify, 0);
	assert_int_equal(c->disable_compression, 0);
	kube_config_free(c);
	/* disable-compression, as client-go reads it: no gzip asked for. */
	c = parse_ok(CLUSTER_OK "    disable-compression: true\n" USER_OK CONTEXT_OK, PATH, NULL);
	assert_int_equal(c->disable_compression, 1);
	kube_config_free(c);
	{
		char *error = parse_error(CLUSTER_OK "    disable-compression: sometimes\n"
		    USER_OK CONTEXT_OK, NULL);

		assert_non_null(error);
		assert_non_null(strstr(error, "disable-compression"));
		free(error);
	}
}

static void
parse_treats_yaml_nulls_as_unset(void **state)
{
	(void)state;
	struct kube_config *c = parse_ok(
	    "preferences: ~\nextensions:\n"
	    "clusters:\n- name: k\n  cluster:\n    server: https://h\n    proxy-url: null\n"
	    "    certificate-authority-data: \"\"\n    insecure-skip-tls-verify: ~\n"
	    "- name: empty\n  cluster: ~\n"
	    "users:\n- name: u\n  user: ~\n"
	    "contexts:\n- name: c\n  context: {cluster: k, user: u, namespace: Null}\n"
	    "current-context: c\n", PATH, NULL);

	assert_string_equal(c->server, "https://h");
	assert_null(c->proxy_url);
	assert_null(c->ca_pem);
	assert_int_equal(c->insecure_skip_tls_verify, 0);
	assert_null(c->namespace);
	assert_null(c->token);
	kube_config_free(c);

	/* A quoted "null" is a string, not null. */
	c = parse_ok(CLUSTER_OK USER_OK
	    "contexts:\n- name: c\n  context: {cluster: k, user: u, namespace: \"null\"}\n"
	    "current-context: c\n", PATH, NULL);
	assert_string_equal(c->namespace, "null");
	kube_config_free(c);
}

static void
parse_reads_the_exec_section(void **state)
{
	(void)state;
	struct kube_config *c = parse_ok(CLUSTER_OK
	    "users:\n- name: u\n  user:\n    exec:\n"
	    "      apiVersion: client.authentication.k8s.io/v1beta1\n"
	    "      command: aws\n      args: [eks, get-token, \"\"]\n"
	    "      env:\n      - name: AWS_PROFILE\n        value: prod\n      - name: EMPTY\n"
	    "      provideClusterInfo: true\n      installHint: install the aws CLI\n"
	    CONTEXT_OK, PATH, NULL);

	assert_non_null(c->exec);
	assert_string_equal(c->exec->api_version, "client.authentication.k8s.io/v1beta1");
	assert_string_equal(c->exec->command, "aws");
	assert_int_equal(c->exec->nargs, 3);
	assert_string_equal(c->exec->args[0], "eks");
	assert_string_equal(c->exec->args[1], "get-token");
	assert_string_equal(c->exec->args[2], "");
	assert_int_equal(c->exec->nenv, 2);
	assert_string_equal(c->exec->env_names[0], "AWS_PROFILE");
	assert_string_equal(c->exec->env_values[0], "prod");
	assert_string_equal(c->exec->env_names[1], "EMPTY");
	assert_string_equal(c->exec->env_values[1], "");
	assert_int_equal(c->exec->provide_cluster_info, 1);
	assert_string_equal(c->exec->install_hint, "install the aws CLI");
	/* client-go's default for v1beta1. */
	assert_string_equal(c->exec->interactive_mode, "IfAvailable");
	assert_int_equal(c->exec->timeout_ms, KUBE_EXEC_TIMEOUT_MS);
	kube_config_free(c);
}

/* client-go's message for a kubeconfig with nothing in it, for PATHS (S: "s" if several). */
#define EMPTY_CONFIG(PATHS, S) "kubeconfig " PATHS ": invalid configuration: no configuration " \
	"has been provided, try giving --master (the file" S " defines no cluster, user, " \
	"context or current-context)"

/* One kubeconfig that must be refused, and the exact message. */
struct parse_error_case {
	const char *name;
	const char *yaml;
	const char *context;
	const char *message;
};

static const struct parse_error_case parse_error_cases[] = {
	{ "not a mapping", "- a\n- b\n", NULL,
	  "kubeconfig /k/config: not a kubeconfig: the top level is a list, not a mapping" },
	{ "scalar document", "hello\n", NULL,
	  "kubeconfig /k/config: not a kubeconfig: the top level is a scalar, not a mapping" },
	{ "quoted scalar document", "\"{}\"\n", NULL,
	  "kubeconfig /k/config: not a kubeconfig: the top level is a scalar, not a mapping" },
	{ "empty document", "", NULL, EMPTY_CONFIG("/k/config", "") },
	{ "empty document with a context argument", "", "c", EMPTY_CONFIG("/k/config", "") },
	{ "white space only", " \n\t\n\n", NULL, EMPTY_CONFIG("/k/config", "") },
	{ "comments only", "# a fresh kubeconfig\n   # nothing yet\n", NULL,
	  EMPTY_CONFIG("/k/config", "") },
	{ "document marker only", "---\n", NULL, EMPTY_CONFIG("/k/config", "") },
	{ "document markers and end", "---\n...\n", NULL, EMPTY_CONFIG("/k/config", "") },
	{ "empty mapping", "{}\n", NULL, EMPTY_CONFIG("/k/config", "") },
	{ "null document", "~\n", NULL, EMPTY_CONFIG("/k/config", "") },
	{ "only kind, apiVersion and empty lists",
	  "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n"
	  "current-context: \"\"\npreferences: {}\n", NULL, EMPTY_CONFIG("/k/config", "") },
	{ "clusters but no context", CLUSTER_OK, NULL,
	  "kubeconfig /k/config: current-context is not set and no context was given" },
	{ "no current-context", CLUSTER_OK USER_OK
	  "contexts:\n- name: c\n  context: {cluster: k, user: u}\n", NULL,
	  "kubeconfig /k/config: current-context is not set and no context was given" },
	{ "current-context names nothing", CLUSTER_OK USER_OK "current-context: gone\n", NULL,
	  "kubeconfig /k/config: current-context: context \"gone\" not found" },
	{ "context argument names nothing", CLUSTER_OK USER_OK CONTEXT_OK, "other",
	  "kubeconfig /k/config: context \"other\" not found" },
	{ "context without cluster", CLUSTER_OK USER_OK
	  "contexts:\n- name: c\n  context: {user: u}\ncurrent-context: c\n", NULL,
	  "kubeconfig /k/config: contexts[c].context.cluster: missing" },
	{ "context without user", CLUSTER_OK USER_OK
	  "contexts:\n- name: c\n  context: {cluster: k}\ncurrent-context: c\n", NULL,
	  "kubeconfig /k/config: contexts[c].context.user: missing" },
	{ "context naming a missing cluster", CLUSTER_OK USER_OK
	  "contexts:\n- name: c\n  context: {cluster: gone, user: u}\ncurrent-context: c\n", NULL,
	  "kubeconfig /k/config: contexts[c].context.cluster: cluster \"gone\" not found" },
	{ "context naming a missing user", CLUSTER_OK USER_OK
	  "contexts:\n- name: c\n  context: {cluster: k, user: gone}\ncurrent-context: c\n", NULL,
	  "kubeconfig /k/config: contexts[c].context.user: user \"gone\" not found" },
	{ "invalid namespace", CLUSTER_OK USER_OK
	  "contexts:\n- name: c\n  context: {cluster: k, user: u, namespace: Kube_System}\n"
	  "current-context: c\n", NULL,
	  "kubeconfig /k/config: contexts[c].context.namespace: \"Kube_System\" is not a valid "
	  "namespace name" },
	{ "cluster without server",
	  "clusters:\n- name: k\n  cluster:\n    tls-server-name: x\n" USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.server: missing: the cluster has no server" },
	{ "cluster entry without cluster", "clusters:\n- name: k\n" USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.server: missing: the cluster has no server" },
	{ "server without scheme",
	  "clusters:\n- name: k\n  cluster:\n    server: 127.0.0.1:6443\n" USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.server: not an http:// or https:// URL" },
	{ "server with another scheme",
	  "clusters:\n- name: k\n  cluster:\n    server: ftp://h\n" USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.server: not an http:// or https:// URL" },
	{ "server without host",
	  "clusters:\n- name: k\n  cluster:\n    server: https:///api\n" USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.server: URL has no host" },
	{ "server with user information",
	  "clusters:\n- name: k\n  cluster:\n    server: https://admin:SECRET@h\n" USER_OK
	  CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.server: URL must not contain user "
	  "information" },
	{ "server not a string",
	  "clusters:\n- name: k\n  cluster:\n    server: [https://h]\n" USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.server: must be a string" },
	{ "insecure not a boolean", CLUSTER_OK "    insecure-skip-tls-verify: \"true\"\n" USER_OK
	  CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.insecure-skip-tls-verify: must be true or "
	  "false" },
	{ "insecure with a CA", CLUSTER_OK "    insecure-skip-tls-verify: true\n"
	  "    certificate-authority-data: " CA_B64 "\n" USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.insecure-skip-tls-verify: true together "
	  "with a certificate authority is not allowed" },
	{ "CA file and data", CLUSTER_OK "    certificate-authority: /ca.crt\n"
	  "    certificate-authority-data: " CA_B64 "\n" USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster: certificate-authority and "
	  "certificate-authority-data are both set; set only one" },
	{ "bad CA base64", CLUSTER_OK "    certificate-authority-data: not*base64\n" USER_OK
	  CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.certificate-authority-data: not valid "
	  "base64" },
	{ "unreadable CA file", CLUSTER_OK "    certificate-authority: /nonexistent/ca.crt\n"
	  USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.certificate-authority: cannot read "
	  "/nonexistent/ca.crt: No such file or directory" },
	{ "duplicated cluster name", CLUSTER_OK "- name: k\n  cluster:\n    server: https://x\n"
	  USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k]: duplicated name" },
	{ "duplicated user name", CLUSTER_OK USER_OK "- name: u\n  user: {}\n" CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u]: duplicated name" },
	{ "duplicated context name", CLUSTER_OK USER_OK
	  "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
	  "- name: c\n  context: {cluster: k, user: u}\ncurrent-context: c\n", NULL,
	  "kubeconfig /k/config: contexts[c]: duplicated name" },
	{ "duplicated key", CLUSTER_OK "    server: https://other\n" USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[k].cluster.server: duplicated key" },
	{ "entry without name", "clusters:\n- cluster: {server: https://h}\n" USER_OK CONTEXT_OK,
	  NULL, "kubeconfig /k/config: clusters[0].name: missing" },
	{ "entry not a mapping", "clusters:\n- k\n" USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters[0]: must be a mapping" },
	{ "list not a list", "clusters: {k: 1}\n" USER_OK CONTEXT_OK, NULL,
	  "kubeconfig /k/config: clusters: must be a list" },
	{ "inner not a mapping", "clusters:\n- name: k\n  cluster: https://h\n" USER_OK
	  CONTEXT_OK, NULL, "kubeconfig /k/config: clusters[k].cluster: must be a mapping" },
	{ "bad base64 in an unused user", CLUSTER_OK USER_OK
	  "- name: other\n  user:\n    client-key-data: \"!!\"\n" CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[other].user.client-key-data: not valid base64" },
	{ "basic auth", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    username: admin\n    password: SECRET-pw\n"
	  CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user: basic auth is not supported (username/password); "
	  "use a token, a client certificate or an exec plugin" },
	{ "auth provider", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    auth-provider:\n      name: oidc\n" CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user.auth-provider: auth providers are not supported; "
	  "use an exec plugin" },
	{ "impersonation", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    token: t\n    as: someone\n" CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user: impersonation (as, as-uid, as-groups, "
	  "as-user-extra) is not supported" },
	{ "certificate file and data", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    client-certificate: /c.crt\n"
	  "    client-certificate-data: " CERT_B64 "\n    client-key-data: " KEY_B64 "\n"
	  CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user: client-certificate and client-certificate-data "
	  "are both set; set only one" },
	{ "key file and data", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    client-certificate-data: " CERT_B64 "\n"
	  "    client-key: /c.key\n    client-key-data: " KEY_B64 "\n" CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user: client-key and client-key-data are both set; "
	  "set only one" },
	{ "certificate without key", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    client-certificate-data: " CERT_B64 "\n" CONTEXT_OK,
	  NULL, "kubeconfig /k/config: users[u].user: a client certificate needs client-key or "
	  "client-key-data" },
	{ "key without certificate", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    client-key-data: " KEY_B64 "\n" CONTEXT_OK,
	  NULL, "kubeconfig /k/config: users[u].user: a client key needs client-certificate or "
	  "client-certificate-data" },
	{ "exec without command", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    exec:\n"
	  "      apiVersion: client.authentication.k8s.io/v1beta1\n" CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user.exec.command: missing" },
	{ "exec without apiVersion", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    exec:\n      command: p\n" CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user.exec.apiVersion: missing" },
	{ "exec v1alpha1", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    exec:\n      command: p\n"
	  "      apiVersion: client.authentication.k8s.io/v1alpha1\n" CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user.exec.apiVersion: "
	  "\"client.authentication.k8s.io/v1alpha1\" is not supported (use "
	  "client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1)" },
	{ "exec v1 without interactiveMode", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    exec:\n      command: p\n"
	  "      apiVersion: client.authentication.k8s.io/v1\n" CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user.exec.interactiveMode: missing (required with "
	  "client.authentication.k8s.io/v1)" },
	{ "exec bad interactiveMode", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    exec:\n      command: p\n"
	  "      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Sometimes\n"
	  CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user.exec.interactiveMode: \"Sometimes\" is not Never, "
	  "IfAvailable or Always" },
	{ "exec env without name", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    exec:\n      command: p\n"
	  "      apiVersion: client.authentication.k8s.io/v1beta1\n      env:\n      - value: x\n"
	  CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user.exec.env[0].name: missing" },
	{ "exec args not strings", CLUSTER_OK
	  "users:\n- name: u\n  user:\n    exec:\n      command: p\n"
	  "      apiVersion: client.authentication.k8s.io/v1beta1\n      args: [[a]]\n"
	  CONTEXT_OK, NULL,
	  "kubeconfig /k/config: users[u].user.exec.args[0]: must be a string" },
};

static void
parse_refuses_each_invalid_kubeconfig_with_its_message(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof parse_error_cases / sizeof parse_error_cases[0]; i++) {
		const struct parse_error_case *t = &parse_error_cases[i];
		char *error = parse_error(t->yaml, t->context);

		if (error == NULL)
			fail_msg("case \"%s\": accepted", t->name);
		if (strcmp(error, t->message) != 0)
			fail_msg("case \"%s\":\n got  %s\n want %s", t->name, error, t->message);
		free(error);
	}
}

static void
parse_reports_yaml_syntax_errors_with_their_position(void **state)
{
	(void)state;
	char *error = parse_error("clusters:\n- name: k\n  cluster: [\n", NULL);
	const char *prefix = "kubeconfig /k/config: not YAML: ";

	assert_non_null(error);
	assert_memory_equal(error, prefix, strlen(prefix));
	assert_non_null(strstr(error, " at line 4 column 1"));
	free(error);
	error = parse_error("a: b\n\tc: d\n", NULL);
	assert_memory_equal(error, prefix, strlen(prefix));
	free(error);
}

static void
parse_resolves_relative_paths_against_the_kubeconfig_directory(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char *sub = xasprintf("%s/certs", dir);
	char *kc = xasprintf("%s/config", dir), *want;

	assert_int_equal(mkdir(sub, 0700), 0);
	free(file_write(sub, "ca.crt", CA_PEM, 0));
	free(file_write(sub, "c.crt", "CERT", 0));
	free(file_write(sub, "c.key", "KEY", 0));
	free(file_write(dir, "token", "T\n", 0));

	struct kube_config *c = parse_ok(
	    "clusters:\n- name: k\n  cluster:\n    server: https://h\n"
	    "    certificate-authority: certs/ca.crt\n"
	    "users:\n- name: u\n  user:\n    client-certificate: certs/c.crt\n"
	    "    client-key: certs/c.key\n    tokenFile: token\n"
	    "    exec: {command: ./bin/plugin, apiVersion: client.authentication.k8s.io/v1beta1}\n"
	    CONTEXT_OK, kc, NULL);

	want = xasprintf("%s/certs/ca.crt", dir);
	assert_string_equal(c->ca_file, want);
	free(want);
	want = xasprintf("%s/certs/c.crt", dir);
	assert_string_equal(c->cert_file, want);
	free(want);
	want = xasprintf("%s/certs/c.key", dir);
	assert_string_equal(c->key_file, want);
	free(want);
	want = xasprintf("%s/token", dir);
	assert_string_equal(c->token_file, want);
	free(want);
	/* An exec command is resolved only when it has a path separator. */
	want = xasprintf("%s/./bin/plugin", dir);
	assert_string_equal(c->exec->command, want);
	free(want);
	kube_config_free(c);

	c = parse_ok("clusters:\n- name: k\n  cluster:\n    server: https://h\n"
	    "users:\n- name: v\n  user:\n    exec: {command: plugin, apiVersion: "
	    "client.authentication.k8s.io/v1beta1}\n"
	    "- name: w\n  user:\n    exec: {command: /usr/bin/plugin, apiVersion: "
	    "client.authentication.k8s.io/v1beta1}\n"
	    "contexts:\n- name: cv\n  context: {cluster: k, user: v}\n"
	    "- name: cw\n  context: {cluster: k, user: w}\n", kc, "cv");
	assert_string_equal(c->exec->command, "plugin");
	kube_config_free(c);
	c = parse_ok("clusters:\n- name: k\n  cluster:\n    server: https://h\n"
	    "users:\n- name: w\n  user:\n    exec: {command: /usr/bin/plugin, apiVersion: "
	    "client.authentication.k8s.io/v1beta1}\n"
	    "contexts:\n- name: cw\n  context: {cluster: k, user: w}\n", kc, "cw");
	assert_string_equal(c->exec->command, "/usr/bin/plugin");
	kube_config_free(c);

	free(kc);
	free(sub);
	tmpdir_remove(dir);
}

static void
load_files_merges_with_the_first_file_winning(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char *a = file_write(dir, "a",
	    "clusters:\n- name: k\n  cluster:\n    server: https://from-a\n"
	    "contexts:\n- name: c\n  context: {cluster: k, user: u, namespace: ns-a}\n", 0);
	char *b = file_write(dir, "b",
	    "clusters:\n- name: k\n  cluster:\n    server: https://from-b\n"
	    "users:\n- name: u\n  user:\n    token: tok-b\n"
	    "contexts:\n- name: c\n  context: {cluster: k, user: u, namespace: ns-b}\n"
	    "current-context: c\n", 0);
	char *missing = xasprintf("%s/missing", dir);
	const char *paths[] = { missing, a, b, a };
	struct kube_config *c = NULL;
	char *error = NULL;

	assert_int_equal(kube_config_load_files(paths, 4, NULL, &c, &error), 0);
	assert_string_equal(c->server, "https://from-a");
	assert_string_equal(c->namespace, "ns-a");
	assert_string_equal(c->token, "tok-b");
	kube_config_free(c);

	assert_int_equal(kube_config_load_files((const char *[]){ missing, missing }, 2, NULL, &c,
	    &error), -1);
	char *want = xasprintf("kubeconfig: none of these files exists: %s, %s", missing,
	    missing);
	assert_string_equal(error, want);
	free(want);
	free(error);

	free(a);
	free(b);
	free(missing);
	tmpdir_remove(dir);
}

static void
load_file_refuses_files_over_one_mebibyte(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char *big = xmalloc(KUBE_CONFIG_FILE_MAX + 2);
	struct kube_config *c = NULL;
	char *error = NULL, *path, *want;

	memset(big, '#', KUBE_CONFIG_FILE_MAX + 1);
	big[KUBE_CONFIG_FILE_MAX + 1] = '\0';
	path = file_write(dir, "config", big, 0);
	assert_int_equal(kube_config_load_file(path, NULL, &c, &error), -1);
	want = xasprintf("kubeconfig %s: larger than 1048576 bytes, refused", path);
	assert_string_equal(error, want);
	free(want);
	free(error);
	error = NULL;

	want = xasprintf("%s/none", dir);
	assert_int_equal(kube_config_load_file(want, NULL, &c, &error), -1);
	assert_non_null(strstr(error, "No such file or directory"));
	assert_non_null(strstr(error, want));
	free(error);
	free(want);
	free(path);
	free(big);
	tmpdir_remove(dir);
}

static void
parse_of_no_bytes_at_a_null_pointer_is_the_empty_configuration(void **state)
{
	(void)state;
	struct kube_config *c = NULL;
	char *error = NULL;

	/* What an empty file reads into; libyaml asserts on a NULL string. */
	assert_int_equal(kube_config_parse(NULL, 0, PATH, NULL, &c, &error), -1);
	assert_null(c);
	assert_string_equal(error, EMPTY_CONFIG("/k/config", ""));
	free(error);
}

/* The empty and blank kubeconfig files of the load tests. */
static const char *const empty_files[] = { "", "\n", "  \n\t\n", "# nothing yet\n",
	"---\n", "{}\n" };

static void
an_empty_kubeconfig_file_says_no_configuration_has_been_provided(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *want;
	struct kube_config *c = NULL;
	char *error = NULL;

	for (size_t i = 0; i < sizeof empty_files / sizeof empty_files[0]; i++) {
		char *path = file_write(dir, "config", empty_files[i], 0);

		if (kube_config_load_file(path, NULL, &c, &error) != -1)
			fail_msg("empty file %zu: accepted", i);
		assert_null(c);
		want = xasprintf(EMPTY_CONFIG("%s", ""), path);
		if (strcmp(error, want) != 0)
			fail_msg("empty file %zu:\n got  %s\n want %s", i, error, want);
		free(want);
		free(error);
		error = NULL;
		free(path);
	}
	tmpdir_remove(dir);
}

static void
load_files_that_are_all_empty_name_every_file(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *want;
	char *a = file_write(dir, "a", "", 0), *b = file_write(dir, "b", "# empty\n", 0);
	char *good = file_write(dir, "good", CLUSTER_OK USER_OK CONTEXT_OK, 0);
	struct kube_config *c = NULL;
	char *error = NULL;

	assert_int_equal(kube_config_load_files((const char *[]){ a, b }, 2, NULL, &c, &error),
	    -1);
	want = xasprintf(EMPTY_CONFIG("%s, %s", "s"), a, b);
	assert_string_equal(error, want);
	free(want);
	free(error);

	/* An empty file beside a full one is merged as nothing. */
	assert_int_equal(kube_config_load_files((const char *[]){ a, good }, 2, NULL, &c,
	    &error), 0);
	assert_string_equal(c->server, "https://127.0.0.1:6443");
	kube_config_free(c);
	free(a);
	free(b);
	free(good);
	tmpdir_remove(dir);
}

/* One user or cluster whose file is empty: its YAML around the file's path, and the field
 * the message names. */
struct empty_file_case {
	const char *name;
	const char *before;
	const char *after;
	const char *field;
};

static const struct empty_file_case empty_file_cases[] = {
	{ "CA file", "clusters:\n- name: k\n  cluster:\n    server: https://h\n"
	  "    certificate-authority: ", "\n" USER_OK CONTEXT_OK,
	  "clusters[k].cluster.certificate-authority" },
	{ "client certificate file", CLUSTER_OK "users:\n- name: u\n  user:\n"
	  "    client-certificate: ", "\n    client-key-data: " KEY_B64 "\n" CONTEXT_OK,
	  "users[u].user.client-certificate" },
	{ "client key file", CLUSTER_OK "users:\n- name: u\n  user:\n"
	  "    client-certificate-data: " CERT_B64 "\n    client-key: ", "\n" CONTEXT_OK,
	  "users[u].user.client-key" },
	{ "token file", CLUSTER_OK "users:\n- name: u\n  user:\n    tokenFile: ",
	  "\n" CONTEXT_OK, "users[u].user.tokenFile" },
};

static void
parse_refuses_empty_ca_certificate_key_and_token_files(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof empty_file_cases / sizeof empty_file_cases[0]; i++) {
		const struct empty_file_case *t = &empty_file_cases[i];

		for (int blank = 0; blank < 2; blank++) {
			char *dir = tmpdir_make();
			char *file = file_write(dir, "f", blank ? " \n\n\t" : "", 0);
			char *yaml = xasprintf("%s%s%s", t->before, file, t->after);
			char *error = parse_error(yaml, NULL);
			char *want = xasprintf("kubeconfig /k/config: %s: %s is empty%s", t->field,
			    file, blank ? " (only white space)" : "");

			if (error == NULL)
				fail_msg("case \"%s\" (%s): accepted", t->name,
				    blank ? "white space" : "empty");
			if (strcmp(error, want) != 0)
				fail_msg("case \"%s\":\n got  %s\n want %s", t->name, error, want);
			free(error);
			free(want);
			free(yaml);
			free(file);
			tmpdir_remove(dir);
		}
	}
}

static void
an_empty_token_file_beside_a_static_token_falls_back_to_it(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *file = file_write(dir, "token", "", 0);
	char *yaml = xasprintf(CLUSTER_OK "users:\n- name: u\n  user:\n    token: static\n"
	    "    tokenFile: %s\n" CONTEXT_OK, file);
	struct kube_config *c = parse_ok(yaml, PATH, NULL);
	struct kube_credentials cred;
	char *error = NULL;

	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "static");
	kube_config_free(c);
	free(yaml);
	free(file);
	tmpdir_remove(dir);
}

static void
credentials_refuse_a_certificate_or_token_file_that_became_empty(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *kc = xasprintf("%s/config", dir), *want;
	struct kube_credentials cred;
	struct kube_config *c;
	char *error = NULL;

	free(file_write(dir, "c.crt", "CERT-1", 0));
	free(file_write(dir, "c.key", "KEY-1", 0));
	c = parse_ok(CLUSTER_OK "users:\n- name: u\n  user:\n    client-certificate: c.crt\n"
	    "    client-key: c.key\n" CONTEXT_OK, kc, NULL);
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);

	free(file_write(dir, "c.crt", "\n", 0));
	for (int i = 0; i < 2; i++) {	/* and again, though the file did not change */
		assert_int_equal(kube_config_credentials(c, 0, &cred, &error), -1);
		assert_null(cred.cert_pem);
		want = xasprintf("client certificate %s/c.crt: empty", dir);
		assert_string_equal(error, want);
		free(want);
		free(error);
		error = NULL;
	}
	free(file_write(dir, "c.crt", "CERT-2", 0));
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_memory_equal(cred.cert_pem, "CERT-2", 6);
	kube_config_free(c);

	/* A token file emptied after start: no earlier token, so an error naming it. */
	free(file_write(dir, "token", "tok\n", 0));
	c = parse_ok(CLUSTER_OK "users:\n- name: u\n  user:\n    tokenFile: token\n"
	    CONTEXT_OK, kc, NULL);
	free(file_write(dir, "token", "", 0));
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), -1);
	want = xasprintf("token file %s/token: empty", dir);
	assert_string_equal(error, want);
	free(want);
	free(error);
	kube_config_free(c);
	free(kc);
	tmpdir_remove(dir);
}

/* ---------------------------------------------------------------------------------- */
/* Secrets never appear in messages */

static const char *const secret_leak_cases[] = {
	/* A token of the wrong type. */
	CLUSTER_OK "users:\n- name: u\n  user:\n    token: [SECRET-1]\n" CONTEXT_OK,
	/* Key data that is not base64. */
	CLUSTER_OK "users:\n- name: u\n  user:\n    client-certificate-data: " CERT_B64 "\n"
	"    client-key-data: SECRET-2!!\n" CONTEXT_OK,
	/* A password, refused. */
	CLUSTER_OK "users:\n- name: u\n  user:\n    username: x\n    password: SECRET-3\n"
	CONTEXT_OK,
	/* A password of the wrong type. */
	CLUSTER_OK "users:\n- name: u\n  user:\n    password: {SECRET-4: SECRET-4}\n" CONTEXT_OK,
	/* A duplicated token key. */
	CLUSTER_OK "users:\n- name: u\n  user:\n    token: SECRET-5\n    token: SECRET-5\n"
	CONTEXT_OK,
	/* A server URL with a password in it. */
	"clusters:\n- name: k\n  cluster:\n    server: https://u:SECRET-6@h/\n" USER_OK CONTEXT_OK,
	/* A YAML error in the middle of a token. */
	CLUSTER_OK "users:\n- name: u\n  user:\n    token: \"SECRET-7\n" CONTEXT_OK,
};

static const char *const secret_credential_cases[] = {
	"{\"apiVersion\": \"SECRET-8 token\", \"kind\": \"ExecCredential\"}",
	"{\"apiVersion\": \"client.authentication.k8s.io/v1\", \"kind\": \"ExecCredential\","
	" \"status\": {\"token\": \"SECRET-9\", \"expirationTimestamp\": \"SECRET-9\"}}",
	"{\"apiVersion\": \"client.authentication.k8s.io/v1\", \"kind\": \"ExecCredential\","
	" \"status\": {\"clientKeyData\": \"SECRET-10\"}}",
	"SECRET-11 not json",
	"{\"apiVersion\": \"client.authentication.k8s.io/v1\", \"kind\": \"ExecCredential\","
	" \"status\": {\"token\": [\"SECRET-12\"]}}",
};

static void
malformed_secrets_never_appear_in_messages(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof secret_leak_cases / sizeof secret_leak_cases[0]; i++) {
		char *error = parse_error(secret_leak_cases[i], NULL);

		if (error == NULL)
			fail_msg("secret case %zu: accepted", i);
		if (strstr(error, "SECRET") != NULL)
			fail_msg("secret case %zu leaks: %s", i, error);
		free(error);
	}
	for (size_t i = 0; i < sizeof secret_credential_cases / sizeof secret_credential_cases[0];
	    i++) {
		struct kube_exec_credential *cred = NULL;
		char *error = NULL;
		const char *json = secret_credential_cases[i];

		assert_int_equal(kube_exec_credential_parse(json, strlen(json),
		    "client.authentication.k8s.io/v1", &cred, &error), -1);
		if (strstr(error, "SECRET") != NULL)
			fail_msg("credential case %zu leaks: %s", i, error);
		free(error);
	}
}

/* ---------------------------------------------------------------------------------- */
/* In-cluster */

/* Makes a service-account directory; returns it. */
static char *
service_account_dir(const char *token)
{
	char *dir = tmpdir_make();

	free(file_write(dir, "token", token, 0));
	free(file_write(dir, "ca.crt", CA_PEM, 0));
	free(file_write(dir, "namespace", "team-a\n", 0));
	return dir;
}

static void
in_cluster_reads_the_service_account_and_environment(void **state)
{
	(void)state;
	char *dir = service_account_dir("tok-1\n");
	struct kube_config *c = NULL;
	struct kube_credentials cred;
	char *error = NULL, *want;

	unsetenv("POD_NAMESPACE");
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(kube_config_in_cluster(dir, &c, &error), 0);
	assert_string_equal(c->server, "https://10.96.0.1:443");
	want = xasprintf("%s/ca.crt", dir);
	assert_string_equal(c->ca_file, want);
	free(want);
	want = xasprintf("%s/token", dir);
	assert_string_equal(c->token_file, want);
	free(want);
	assert_string_equal(c->namespace, "team-a");
	assert_string_equal(c->origin, "in-cluster");
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "tok-1");
	kube_config_free(c);

	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("POD_NAMESPACE", "from-env", 1);
	assert_int_equal(kube_config_in_cluster(dir, &c, &error), 0);
	assert_string_equal(c->server, "https://[fd00::1]:443");
	assert_string_equal(c->namespace, "from-env");
	kube_config_free(c);
	unsetenv("POD_NAMESPACE");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	tmpdir_remove(dir);
}

static void
in_cluster_refuses_a_missing_environment_or_token(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	struct kube_config *c = NULL;
	char *error = NULL, *want;

	unsetenv("KUBERNETES_SERVICE_HOST");
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(kube_config_in_cluster(dir, &c, &error), -1);
	assert_string_equal(error, "in-cluster: KUBERNETES_SERVICE_HOST and "
	    "KUBERNETES_SERVICE_PORT must both be set");
	free(error);
	error = NULL;

	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "https", 1);
	assert_int_equal(kube_config_in_cluster(dir, &c, &error), -1);
	assert_string_equal(error, "in-cluster: KUBERNETES_SERVICE_PORT \"https\" is not a port "
	    "number");
	free(error);
	error = NULL;

	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(kube_config_in_cluster(dir, &c, &error), -1);
	want = xasprintf("in-cluster: token file %s/token: No such file or directory", dir);
	assert_string_equal(error, want);
	free(want);
	free(error);
	error = NULL;

	free(file_write(dir, "token", " \n", 0));
	assert_int_equal(kube_config_in_cluster(dir, &c, &error), -1);
	want = xasprintf("in-cluster: token file %s/token: empty", dir);
	assert_string_equal(error, want);
	free(want);
	free(error);
	assert_null(c);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	tmpdir_remove(dir);
}

static void
credentials_follow_a_rotated_token_file(void **state)
{
	(void)state;
	char *dir = service_account_dir("tok-1\n");
	struct kube_config *c = NULL;
	struct kube_credentials cred;
	char *error = NULL, *path = xasprintf("%s/token", dir);
	FILE *f;

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(kube_config_in_cluster(dir, &c, &error), 0);
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "tok-1");

	/* Replaced by rename (a new inode), as the kubelet does. */
	free(file_write(dir, "token", "tok-2\n", 0));
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "tok-2");

	/* Rewritten in place with another length. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("tok-three\n", f);
	fclose(f);
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "tok-three");

	/* A token file that disappears keeps the last good token. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "tok-three");

	kube_config_free(c);
	free(path);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	tmpdir_remove(dir);
}

static void
credentials_prefer_the_token_file_and_read_certificate_files(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	char *kc = xasprintf("%s/config", dir), *big;
	struct kube_config *c;
	struct kube_credentials cred;
	char *error = NULL;

	free(file_write(dir, "token", "from-file\n", 0));
	free(file_write(dir, "c.crt", "CERT-1", 0));
	free(file_write(dir, "c.key", "KEY-1", 0));
	c = parse_ok(CLUSTER_OK "users:\n- name: u\n  user:\n    token: static\n"
	    "    tokenFile: token\n    client-certificate: c.crt\n    client-key: c.key\n"
	    CONTEXT_OK, kc, NULL);
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "from-file");
	assert_int_equal(cred.cert_pem_len, 6);
	assert_memory_equal(cred.cert_pem, "CERT-1", 6);
	assert_int_equal(cred.key_pem_len, 5);
	assert_memory_equal(cred.key_pem, "KEY-1", 5);

	free(file_write(dir, "c.crt", "CERT-22", 0));
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_memory_equal(cred.cert_pem, "CERT-22", 7);

	/* A token file over 1 MiB is refused; the last good token stays. */
	big = xmalloc(KUBE_CONFIG_FILE_MAX + 2);
	memset(big, 'x', KUBE_CONFIG_FILE_MAX + 1);
	big[KUBE_CONFIG_FILE_MAX + 1] = '\0';
	free(file_write(dir, "token", big, 0));
	free(big);
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "from-file");
	kube_config_free(c);

	/* With no earlier token, the size error is reported. */
	c = parse_ok(CLUSTER_OK "users:\n- name: u\n  user:\n    tokenFile: token\n" CONTEXT_OK,
	    kc, NULL);
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), -1);
	char *want = xasprintf("token file %s/token: larger than 1048576 bytes, refused", dir);
	assert_string_equal(error, want);
	free(want);
	free(error);
	kube_config_free(c);

	c = parse_ok(CLUSTER_OK USER_OK CONTEXT_OK, PATH, NULL);
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "SECRET-token-1");
	assert_null(cred.cert_pem);
	kube_config_free(c);
	free(kc);
	tmpdir_remove(dir);
}

/* ---------------------------------------------------------------------------------- */
/* Exec plugins */

/* Parses a kubeconfig whose user runs the plugin at dir/name with extra exec YAML. */
static struct kube_config *
exec_config(const char *dir, const char *name, const char *extra)
{
	char *kc = xasprintf("%s/config", dir);
	char *yaml = xasprintf(CLUSTER_OK "    tls-server-name: api.local\n"
	    "users:\n- name: u\n  user:\n    exec:\n      command: ./%s\n"
	    "      apiVersion: client.authentication.k8s.io/v1\n"
	    "      interactiveMode: Never\n%s" CONTEXT_OK, name, extra);
	struct kube_config *c = parse_ok(yaml, kc, NULL);

	free(yaml);
	free(kc);
	return c;
}

#define PLUGIN_HEAD "#!/bin/sh\necho run >> \"$(dirname \"$0\")/runs\"\n"
#define CRED_HEAD "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","

static void
exec_plugin_runs_again_when_its_token_expired(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *runs = xasprintf("%s/runs", dir);
	struct kube_credentials cred;
	struct kube_config *c;
	char *error = NULL;

	free(file_write(dir, "plugin", PLUGIN_HEAD
	    "n=$(wc -l < \"$(dirname \"$0\")/runs\")\n"
	    "echo '" CRED_HEAD "\"status\":{\"token\":\"tok-'$n'\","
	    "\"expirationTimestamp\":\"2000-01-01T00:00:00Z\"}}'\n", 1));
	c = exec_config(dir, "plugin", "");
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "tok-1");
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "tok-2");
	assert_int_equal(file_lines(runs), 2);
	kube_config_free(c);
	free(runs);
	tmpdir_remove(dir);
}

static void
exec_plugin_result_is_cached_until_expiry_or_401(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *runs = xasprintf("%s/runs", dir);
	struct kube_credentials cred;
	struct kube_config *c;
	char *error = NULL;

	free(file_write(dir, "plugin", PLUGIN_HEAD
	    "echo '" CRED_HEAD "\"status\":{\"token\":\"tok\","
	    "\"expirationTimestamp\":\"2999-01-01T00:00:00+02:00\"}}'\n", 1));
	c = exec_config(dir, "plugin", "");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
		assert_string_equal(cred.token, "tok");
	}
	assert_int_equal(file_lines(runs), 1);
	assert_int_equal(kube_config_credentials(c, 1, &cred, &error), 0);
	assert_int_equal(file_lines(runs), 2);
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_int_equal(file_lines(runs), 2);
	kube_config_free(c);
	free(runs);
	tmpdir_remove(dir);
}

static void
exec_plugin_gets_args_env_and_exec_info(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *info_path = xasprintf("%s/info", dir);
	struct kube_credentials cred;
	struct kube_config *c;
	char *error = NULL, info[4096];
	FILE *f;
	size_t n;

	setenv("SQLKCM_TEST_OVERRIDDEN", "parent", 1);
	free(file_write(dir, "plugin", "#!/bin/sh\n"
	    "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$(dirname \"$0\")/info\"\n"
	    "read -r line && exit 3\n"	/* stdin must be /dev/null */
	    "echo '" CRED_HEAD "\"status\":{\"token\":\"'\"$1-$2-$SQLKCM_TEST_OVERRIDDEN\"'\","
	    "\"clientCertificateData\":\"CERT\",\"clientKeyData\":\"KEY\"}}'\n", 1));
	c = exec_config(dir, "plugin", "      args: [a, b c]\n      provideClusterInfo: true\n"
	    "      env: [{name: SQLKCM_TEST_OVERRIDDEN, value: child}]\n");
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), 0);
	assert_string_equal(cred.token, "a-b c-child");
	assert_int_equal(cred.cert_pem_len, 4);
	assert_memory_equal(cred.cert_pem, "CERT", 4);
	assert_memory_equal(cred.key_pem, "KEY", 3);

	f = fopen(info_path, "r");
	assert_non_null(f);
	n = fread(info, 1, sizeof info - 1, f);
	fclose(f);
	info[n] = '\0';
	assert_string_equal(info, "{\"kind\":\"ExecCredential\",\"apiVersion\":"
	    "\"client.authentication.k8s.io/v1\",\"spec\":{\"interactive\":false,\"cluster\":"
	    "{\"server\":\"https://127.0.0.1:6443\",\"tls-server-name\":\"api.local\"}}}");
	unsetenv("SQLKCM_TEST_OVERRIDDEN");
	kube_config_free(c);
	free(info_path);
	tmpdir_remove(dir);
}

/* One plugin that must fail, and what its message must say. */
struct exec_failure_case {
	const char *name;
	const char *script;
	const char *extra;
	const char *message;	/* after "exec plugin DIR/./plugin (ORIGIN): " */
};

static const struct exec_failure_case exec_failure_cases[] = {
	{ "non-zero exit", "#!/bin/sh\necho oops >&2\nexit 3\n",
	  "      installHint: see https://example.com/plugin\n",
	  "exited with status 3; see https://example.com/plugin" },
	{ "garbage output", "#!/bin/sh\necho 'SECRET garbage {'\n", "",
	  "ExecCredential: output is not valid JSON" },
	{ "wrong apiVersion", "#!/bin/sh\necho '{\"apiVersion\":"
	  "\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\","
	  "\"status\":{\"token\":\"t\"}}'\n", "",
	  "ExecCredential: the plugin is configured for client.authentication.k8s.io/v1 but "
	  "returned apiVersion \"client.authentication.k8s.io/v1beta1\"" },
	{ "no status", "#!/bin/sh\necho '" CRED_HEAD "\"spec\":{}}'\n", "",
	  "ExecCredential: status missing" },
	{ "killed after the timeout", "#!/bin/sh\nexec sleep 5\n", "",
	  "no answer within 300 ms; killed it" },
	{ "too much output", "#!/bin/sh\nexec yes\n", "",
	  "wrote more than 1048576 bytes; killed it" },
	{ "empty output", "#!/bin/sh\nexit 0\n", "", "ExecCredential: output is empty" },
	{ "white space output", "#!/bin/sh\nprintf ' \\n\\n\\t'\n", "",
	  "ExecCredential: output is empty" },
	{ "interactive only", "#!/bin/sh\nexit 0\n", "",
	  "interactiveMode is Always, but sqlkcm runs plugins without a terminal" },
};

static void
exec_plugin_failures_name_the_command(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof exec_failure_cases / sizeof exec_failure_cases[0]; i++) {
		const struct exec_failure_case *t = &exec_failure_cases[i];
		char *dir = tmpdir_make(), *want;
		struct kube_credentials cred;
		struct kube_config *c;
		char *error = NULL;

		free(file_write(dir, "plugin", t->script, 1));
		c = exec_config(dir, "plugin", t->extra);
		c->exec->timeout_ms = 300;
		if (strcmp(t->name, "interactive only") == 0) {
			free(c->exec->interactive_mode);
			c->exec->interactive_mode = xstrdup("Always");
		}
		assert_int_equal(kube_config_credentials(c, 0, &cred, &error), -1);
		assert_null(cred.token);
		want = xasprintf("exec plugin %s/./plugin (kubeconfig %s/config (context c)): %s",
		    dir, dir, t->message);
		if (strcmp(error, want) != 0)
			fail_msg("case \"%s\":\n got  %s\n want %s", t->name, error, want);
		free(want);
		free(error);
		kube_config_free(c);
		tmpdir_remove(dir);
	}
}

static void
exec_plugin_that_does_not_exist_shows_the_install_hint(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *want;
	struct kube_credentials cred;
	struct kube_config *c;
	char *error = NULL;

	c = exec_config(dir, "missing", "      installHint: install it\n");
	assert_int_equal(kube_config_credentials(c, 0, &cred, &error), -1);
	want = xasprintf("exec plugin %s/./missing (kubeconfig %s/config (context c)): cannot "
	    "run it: No such file or directory; install it", dir, dir);
	assert_string_equal(error, want);
	free(want);
	free(error);
	kube_config_free(c);
	tmpdir_remove(dir);
}

static void
exec_plugin_without_a_slash_is_found_in_path(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *kc = xasprintf("%s/config", dir);
	char *old_path = xstrdup(getenv("PATH") != NULL ? getenv("PATH") : "/usr/bin:/bin");
	char *path = xasprintf("/nonexistent:%s:%s", dir, old_path);
	struct kube_credentials cred;
	struct kube_config *c;
	char *error = NULL;

	free(file_write(dir, "sqlkcm-test-plugin", "#!/bin/sh\necho '" CRED_HEAD
	    "\"status\":{\"token\":\"from-path\"}}'\n", 1));
	c = parse_ok(CLUSTER_OK "users:\n- name: u\n  user:\n    exec:\n"
	    "      command: sqlkcm-test-plugin\n"
	    "      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Never\n"
	    CONTEXT_OK, kc, NULL);
	assert_string_equal(c->exec->command, "sqlkcm-test-plugin");
	setenv("PATH", path, 1);
	int r = kube_config_credentials(c, 0, &cred, &error);
	setenv("PATH", old_path, 1);
	if (r != 0)
		fail_msg("unexpected error: %s", error);
	assert_string_equal(cred.token, "from-path");
	kube_config_free(c);
	free(path);
	free(old_path);
	free(kc);
	tmpdir_remove(dir);
}

/* ---------------------------------------------------------------------------------- */
/* ExecCredential and time parsing */

static void
exec_credential_parse_reads_token_certificate_and_expiry(void **state)
{
	(void)state;
	const char *json = CRED_HEAD "\"status\":{\"token\":\"t\",\"clientCertificateData\":"
	    "\"-----BEGIN CERTIFICATE-----\\n\",\"clientKeyData\":\"K\","
	    "\"expirationTimestamp\":\"2018-03-05T17:30:20-08:00\"}}";
	struct kube_exec_credential *cred = NULL;
	char *error = NULL;

	assert_int_equal(kube_exec_credential_parse(json, strlen(json),
	    "client.authentication.k8s.io/v1", &cred, &error), 0);
	assert_string_equal(cred->token, "t");
	assert_string_equal(cred->cert_pem, "-----BEGIN CERTIFICATE-----\n");
	assert_int_equal(cred->cert_pem_len, 28);
	assert_string_equal(cred->key_pem, "K");
	assert_int_equal(cred->expiration, 1520299820);
	kube_exec_credential_free(cred);

	json = CRED_HEAD "\"status\":{\"token\":\"t\"}}";
	assert_int_equal(kube_exec_credential_parse(json, strlen(json),
	    "client.authentication.k8s.io/v1", &cred, &error), 0);
	assert_int_equal(cred->expiration, 0);
	assert_null(cred->cert_pem);
	kube_exec_credential_free(cred);
}

/* An ExecCredential that must be refused, and the message. */
struct credential_error_case {
	const char *json;
	const char *message;
};

static const struct credential_error_case credential_error_cases[] = {
	{ "[1]", "ExecCredential: output is not a JSON object" },
	{ "", "ExecCredential: output is empty" },
	{ " \n\t\n", "ExecCredential: output is empty" },
	{ "\n{", "ExecCredential: output is not valid JSON" },
	{ "{\"kind\":\"ExecCredential\"}", "ExecCredential: apiVersion missing" },
	{ "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"Secret\","
	  "\"status\":{\"token\":\"t\"}}", "ExecCredential: kind must be ExecCredential" },
	{ CRED_HEAD "\"status\":{}}", "ExecCredential: status has neither a token nor "
	  "clientCertificateData and clientKeyData" },
	{ CRED_HEAD "\"status\":{\"token\":\"\"}}", "ExecCredential: status has neither a token "
	  "nor clientCertificateData and clientKeyData" },
	{ CRED_HEAD "\"status\":{\"clientCertificateData\":\"C\"}}",
	  "ExecCredential: status.clientCertificateData and status.clientKeyData must be given "
	  "together" },
	{ CRED_HEAD "\"status\":{\"token\":5}}", "ExecCredential: status.token must be a string" },
	{ CRED_HEAD "\"status\":{\"token\":\"t\",\"expirationTimestamp\":\"2018-03-05\"}}",
	  "ExecCredential: status.expirationTimestamp is not an RFC 3339 time" },
	{ CRED_HEAD "\"status\":\"t\"}", "ExecCredential: status missing" },
};

static void
exec_credential_parse_refuses_bad_credentials(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof credential_error_cases / sizeof credential_error_cases[0];
	    i++) {
		const struct credential_error_case *t = &credential_error_cases[i];
		struct kube_exec_credential *cred = NULL;
		char *error = NULL;

		if (kube_exec_credential_parse(t->json, strlen(t->json),
		    "client.authentication.k8s.io/v1", &cred, &error) == 0)
			fail_msg("case %zu: accepted", i);
		assert_null(cred);
		if (strcmp(error, t->message) != 0)
			fail_msg("case %zu:\n got  %s\n want %s", i, error, t->message);
		free(error);
	}
}

/* One timestamp and its value, or -1 when it must be refused. */
struct time_case {
	const char *text;
	long long seconds;
};

static const struct time_case time_cases[] = {
	{ "1970-01-01T00:00:00Z", 0 },
	{ "2000-01-01T00:00:00Z", 946684800 },
	{ "2000-01-01T01:00:00+01:00", 946684800 },
	{ "1999-12-31T23:00:00-01:00", 946684800 },
	{ "2000-01-01T00:00:00.999999999Z", 946684800 },
	{ "2024-02-29T12:00:00Z", 1709208000 },
	{ "2023-02-29T12:00:00Z", -1 },
	{ "2000-01-01 00:00:00Z", -1 },
	{ "2000-01-01T00:00:00", -1 },
	{ "2000-01-01T00:00:00z", -1 },
	{ "2000-13-01T00:00:00Z", -1 },
	{ "2000-01-01T24:00:00Z", -1 },
	{ "2000-01-01T00:00:60Z", -1 },
	{ "2000-01-01T00:00:00.Z", -1 },
	{ "2000-01-01T00:00:00+0100", -1 },
	{ "2000-01-01T00:00:00Zjunk", -1 },
	{ "", -1 },
};

static void
rfc3339_times_parse_as_go_parses_them(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof time_cases / sizeof time_cases[0]; i++) {
		time_t t = 0;
		int r = time_parse_rfc3339(time_cases[i].text, &t);

		if (time_cases[i].seconds == -1) {
			if (r != -1)
				fail_msg("\"%s\": accepted", time_cases[i].text);
		} else if (r != 0 || (long long)t != time_cases[i].seconds) {
			fail_msg("\"%s\": got %d, %lld", time_cases[i].text, r, (long long)t);
		}
	}
}

/* ---------------------------------------------------------------------------------- */
/* The search order */

static void
resolve_follows_flag_then_env_then_home_then_master(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *home = xasprintf("%s/home", dir), *kube, *env, *want;
	struct kube_config *c = NULL;
	char *error = NULL;
	char *flag = file_write(dir, "flag", CLUSTER_OK USER_OK CONTEXT_OK, 0);
	char *fromenv = file_write(dir, "env",
	    "clusters:\n- name: k\n  cluster:\n    server: https://env\n" USER_OK CONTEXT_OK, 0);

	kube = xasprintf("%s/.kube", home);
	assert_int_equal(mkdir(home, 0700), 0);
	assert_int_equal(mkdir(kube, 0700), 0);
	free(file_write(kube, "config",
	    "clusters:\n- name: k\n  cluster:\n    server: https://home\n" USER_OK CONTEXT_OK, 0));
	unsetenv("KUBERNETES_SERVICE_HOST");
	setenv("HOME", home, 1);
	env = xasprintf("%s/missing:%s", dir, fromenv);
	setenv("KUBECONFIG", env, 1);

	assert_int_equal(kube_config_resolve(flag, NULL, NULL, &c, &error), 0);
	assert_string_equal(c->server, "https://127.0.0.1:6443");
	kube_config_free(c);

	assert_int_equal(kube_config_resolve(NULL, NULL, NULL, &c, &error), 0);
	assert_string_equal(c->server, "https://env");
	kube_config_free(c);

	unsetenv("KUBECONFIG");
	assert_int_equal(kube_config_resolve(NULL, NULL, "http://MASTER:8080/", &c, &error), 0);
	assert_string_equal(c->server, "http://MASTER:8080");
	assert_string_equal(c->token, "SECRET-token-1");
	want = xasprintf("kubeconfig %s/.kube/config (context c)", home);
	assert_string_equal(c->origin, want);
	free(want);
	kube_config_free(c);

	/* Nothing at all. */
	setenv("HOME", dir, 1);
	assert_int_equal(kube_config_resolve(NULL, NULL, NULL, &c, &error), -1);
	assert_string_equal(error, "no configuration found: give --kubeconfig or --master, set "
	    "$KUBECONFIG, run in a pod, or create ~/.kube/config");
	free(error);
	error = NULL;

	/* --master alone. */
	assert_int_equal(kube_config_resolve(NULL, NULL, "http://127.0.0.1:8080", &c, &error), 0);
	assert_string_equal(c->server, "http://127.0.0.1:8080");
	assert_null(c->token);
	assert_string_equal(c->origin, "--master");
	kube_config_free(c);

	assert_int_equal(kube_config_resolve(flag, NULL, "127.0.0.1:8080", &c, &error), -1);
	assert_string_equal(error, "--master: not an http:// or https:// URL");
	free(error);
	error = NULL;

	/* $KUBECONFIG naming no existing file is an error, not a fall back to ~/.kube. */
	want = xasprintf("%s/none", dir);
	setenv("KUBECONFIG", want, 1);
	setenv("HOME", home, 1);
	assert_int_equal(kube_config_resolve(NULL, NULL, NULL, &c, &error), -1);
	free(want);
	want = xasprintf("no configuration found: no file of $KUBECONFIG (%s/none) exists", dir);
	assert_string_equal(error, want);
	free(want);
	free(error);
	error = NULL;

	/* A --kubeconfig file must exist. */
	want = xasprintf("%s/none", dir);
	assert_int_equal(kube_config_resolve(want, NULL, NULL, &c, &error), -1);
	assert_non_null(strstr(error, "No such file or directory"));
	free(want);
	free(error);

	unsetenv("KUBECONFIG");
	free(env);
	free(kube);
	free(home);
	free(flag);
	free(fromenv);
	tmpdir_remove(dir);
}

static void
resolve_treats_an_empty_kubeconfig_as_none(void **state)
{
	(void)state;
	char *dir = tmpdir_make(), *home = xasprintf("%s/home", dir), *kube, *want;
	char *empty = file_write(dir, "empty", "", 0);
	struct kube_config *c = NULL;
	char *error = NULL;

	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBECONFIG");

	/* --kubeconfig EMPTY: client-go's message, naming the file. */
	assert_int_equal(kube_config_resolve(empty, NULL, NULL, &c, &error), -1);
	assert_null(c);
	want = xasprintf(EMPTY_CONFIG("%s", ""), empty);
	assert_string_equal(error, want);
	free(want);
	free(error);
	error = NULL;

	/* With --master, nothing else is needed, as with no file at all. */
	assert_int_equal(kube_config_resolve(empty, NULL, "http://127.0.0.1:8080", &c, &error),
	    0);
	assert_null(error);
	assert_string_equal(c->server, "http://127.0.0.1:8080");
	assert_string_equal(c->origin, "--master");
	assert_null(c->token);
	kube_config_free(c);

	/* A fresh, empty ~/.kube/config. */
	kube = xasprintf("%s/.kube", home);
	assert_int_equal(mkdir(home, 0700), 0);
	assert_int_equal(mkdir(kube, 0700), 0);
	free(file_write(kube, "config", "", 0));
	setenv("HOME", home, 1);
	assert_int_equal(kube_config_resolve(NULL, NULL, NULL, &c, &error), -1);
	want = xasprintf(EMPTY_CONFIG("%s/config", ""), kube);
	assert_string_equal(error, want);
	free(want);
	free(error);
	error = NULL;

	/* $KUBECONFIG naming an empty file. */
	setenv("KUBECONFIG", empty, 1);
	assert_int_equal(kube_config_resolve(NULL, NULL, NULL, &c, &error), -1);
	want = xasprintf(EMPTY_CONFIG("%s", ""), empty);
	assert_string_equal(error, want);
	free(want);
	free(error);
	error = NULL;
	unsetenv("KUBECONFIG");

	/* In a pod, an empty kubeconfig gives way to the in-cluster configuration (here
	 * without a service account, so its error shows that it was tried). */
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(kube_config_resolve(empty, NULL, NULL, &c, &error), -1);
	assert_non_null(strstr(error, "in-cluster: "));
	free(error);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");

	free(kube);
	free(home);
	free(empty);
	tmpdir_remove(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_reads_cluster_user_and_context),
		cmocka_unit_test(parse_uses_the_context_argument_over_current_context),
		cmocka_unit_test(parse_accepts_json_and_yaml_booleans_and_wrapped_base64),
		cmocka_unit_test(parse_treats_yaml_nulls_as_unset),
		cmocka_unit_test(parse_reads_the_exec_section),
		cmocka_unit_test(parse_refuses_each_invalid_kubeconfig_with_its_message),
		cmocka_unit_test(parse_reports_yaml_syntax_errors_with_their_position),
		cmocka_unit_test(parse_resolves_relative_paths_against_the_kubeconfig_directory),
		cmocka_unit_test(load_files_merges_with_the_first_file_winning),
		cmocka_unit_test(load_file_refuses_files_over_one_mebibyte),
		cmocka_unit_test(parse_of_no_bytes_at_a_null_pointer_is_the_empty_configuration),
		cmocka_unit_test(an_empty_kubeconfig_file_says_no_configuration_has_been_provided),
		cmocka_unit_test(load_files_that_are_all_empty_name_every_file),
		cmocka_unit_test(parse_refuses_empty_ca_certificate_key_and_token_files),
		cmocka_unit_test(an_empty_token_file_beside_a_static_token_falls_back_to_it),
		cmocka_unit_test(credentials_refuse_a_certificate_or_token_file_that_became_empty),
		cmocka_unit_test(malformed_secrets_never_appear_in_messages),
		cmocka_unit_test(in_cluster_reads_the_service_account_and_environment),
		cmocka_unit_test(in_cluster_refuses_a_missing_environment_or_token),
		cmocka_unit_test(credentials_follow_a_rotated_token_file),
		cmocka_unit_test(credentials_prefer_the_token_file_and_read_certificate_files),
		cmocka_unit_test(exec_plugin_runs_again_when_its_token_expired),
		cmocka_unit_test(exec_plugin_result_is_cached_until_expiry_or_401),
		cmocka_unit_test(exec_plugin_gets_args_env_and_exec_info),
		cmocka_unit_test(exec_plugin_failures_name_the_command),
		cmocka_unit_test(exec_plugin_that_does_not_exist_shows_the_install_hint),
		cmocka_unit_test(exec_plugin_without_a_slash_is_found_in_path),
		cmocka_unit_test(exec_credential_parse_reads_token_certificate_and_expiry),
		cmocka_unit_test(exec_credential_parse_refuses_bad_credentials),
		cmocka_unit_test(rfc3339_times_parse_as_go_parses_them),
		cmocka_unit_test(resolve_follows_flag_then_env_then_home_then_master),
		cmocka_unit_test(resolve_treats_an_empty_kubeconfig_as_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
