/*
 * execcredential.c - exec credential plugins: running one, and reading its ExecCredential.
 *
 * A user of a kubeconfig may name a program (users[].user.exec) that prints the
 * credentials to present, client-go's exec credential plugin protocol: it gets an
 * ExecCredential request in KUBERNETES_EXEC_INFO (with the cluster when provideClusterInfo
 * says so) and the environment the kubeconfig adds, and prints an ExecCredential whose
 * status has a token or a client certificate and key, and may say when it expires.
 *
 * The plugin is run with posix_spawn, no shell, stdin from /dev/null, its stdout read up to
 * 1 MiB within a deadline after which it is killed, its stderr left to sqlkcm's own. What
 * it prints is wiped from memory once read; its values never appear in a message, only
 * what is wrong with them. kubeconfig.c decides when to run it (kube_config_credentials).
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "execcredential.h"
#include "timeutil.h"
#include "util.h"

/* A CA file given to a plugin in its cluster information is read up to this size. */
#define EXEC_CA_FILE_MAX (1024 * 1024)

/* Appends the standard base64 encoding of data to b. */
static void
base64_encode(struct buf *b, const unsigned char *data, size_t len)
{
	static const char digits[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char q[4];

	for (size_t i = 0; i < len; i += 3) {
		unsigned int v = (unsigned int)data[i] << 16;
		if (i + 1 < len)
			v |= (unsigned int)data[i + 1] << 8;
		if (i + 2 < len)
			v |= data[i + 2];
		q[0] = digits[(v >> 18) & 63];
		q[1] = digits[(v >> 12) & 63];
		q[2] = i + 1 < len ? digits[(v >> 6) & 63] : '=';
		q[3] = i + 2 < len ? digits[v & 63] : '=';
		buf_append(b, q, 4);
	}
}

/* --- running the plugin --------------------------------------------------------------- */

/* Returns the ExecCredential request passed to a plugin in KUBERNETES_EXEC_INFO. */
static int
exec_info_json(const struct exec_credential_request *c, char **out, char **error)
{
	cJSON *root = cJSON_CreateObject(), *spec, *cluster;
	struct buf ca, encoded;
	int r = 0;

	buf_init(&ca);
	buf_init(&encoded);
	cJSON_AddStringToObject(root, "kind", "ExecCredential");
	cJSON_AddStringToObject(root, "apiVersion", c->exec->api_version);
	spec = cJSON_AddObjectToObject(root, "spec");
	cJSON_AddBoolToObject(spec, "interactive", 0);
	if (c->exec->provide_cluster_info) {
		cluster = cJSON_AddObjectToObject(spec, "cluster");
		cJSON_AddStringToObject(cluster, "server", c->server != NULL ? c->server : "");
		if (c->tls_server_name != NULL)
			cJSON_AddStringToObject(cluster, "tls-server-name", c->tls_server_name);
		if (c->insecure_skip_tls_verify)
			cJSON_AddBoolToObject(cluster, "insecure-skip-tls-verify", 1);
		if (c->ca_pem != NULL)
			base64_encode(&encoded, (const unsigned char *)c->ca_pem, c->ca_pem_len);
		else if (c->ca_file != NULL) {
			r = file_read_all(c->ca_file, "certificate authority", EXEC_CA_FILE_MAX,
			    &ca, NULL, error);
			if (r == 0)
				base64_encode(&encoded, (const unsigned char *)ca.data, ca.len);
		}
		if (encoded.len > 0)
			cJSON_AddStringToObject(cluster, "certificate-authority-data", encoded.data);
		if (c->proxy_url != NULL)
			cJSON_AddStringToObject(cluster, "proxy-url", c->proxy_url);
	}
	if (r == 0) {
		*out = cJSON_PrintUnformatted(root);
		if (*out == NULL)
			abort();
	}
	cJSON_Delete(root);
	buf_free(&ca);
	buf_free(&encoded);
	return r;
}

/* Returns the plugin's environment: sqlkcm's, less the names the plugin sets, plus the
 * configured variables and KUBERNETES_EXEC_INFO. */
static char **
exec_environment(const struct kube_exec_config *e, const char *info)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ != NULL && environ[n] != NULL)
		n++;
	env = xcalloc(n + e->nenv + 2, sizeof *env);
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq != NULL ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		int overridden = len == strlen("KUBERNETES_EXEC_INFO") &&
		    memcmp(environ[i], "KUBERNETES_EXEC_INFO", len) == 0;

		for (size_t j = 0; j < e->nenv && !overridden; j++)
			overridden = strlen(e->env_names[j]) == len &&
			    memcmp(environ[i], e->env_names[j], len) == 0;
		if (!overridden)
			env[k++] = xstrdup(environ[i]);
	}
	for (size_t j = 0; j < e->nenv; j++)
		env[k++] = xasprintf("%s=%s", e->env_names[j], e->env_values[j]);
	env[k++] = xasprintf("KUBERNETES_EXEC_INFO=%s", info);
	env[k] = NULL;
	return env;
}

/* Frees a NULL-terminated string vector. */
static void
strv_free(char **v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* Returns milliseconds on the monotonic clock. */
static int64_t
monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Kills a child and reaps it. */
static void
child_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
}

/* Sets *error to "exec plugin CMD (ORIGIN): MESSAGE[; HINT]"; returns -1. */
static int __attribute__((format(printf, 3, 4)))
exec_error(const struct exec_credential_request *c, char **error, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	error_set(error, "exec plugin %s (%s): %s%s%s", c->exec->command,
	    c->origin != NULL ? c->origin : "kubeconfig", msg,
	    c->exec->install_hint != NULL ? "; " : "",
	    c->exec->install_hint != NULL ? c->exec->install_hint : "");
	free(msg);
	return -1;
}

/* Finds the program to run for command: itself when it has a '/', else the first executable
 * file of that name in $PATH. Done before spawning so that "not found" is reported the same
 * way whatever posix_spawn does (some implementations, and valgrind, report a failed exec
 * only as exit status 127). Returns 0 or an errno value. */
static int
exec_command_find(const char *command, char **path)
{
	const char *search = getenv("PATH");
	struct stat st;
	int found_errno = ENOENT;

	*path = NULL;
	if (strchr(command, '/') != NULL) {
		if (stat(command, &st) == -1)
			return errno;
		if (!S_ISREG(st.st_mode) || access(command, X_OK) == -1)
			return EACCES;
		*path = xstrdup(command);
		return 0;
	}
	if (search == NULL)
		search = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = search;; p++) {
		size_t len = strcspn(p, ":");
		char *candidate = len == 0 ? xasprintf("./%s", command) :
		    xasprintf("%.*s/%s", (int)len, p, command);

		if (stat(candidate, &st) == 0) {
			if (S_ISREG(st.st_mode) && access(candidate, X_OK) == 0) {
				*path = candidate;
				return 0;
			}
			found_errno = EACCES;
		}
		free(candidate);
		p += len;
		if (*p == '\0')
			break;
	}
	return found_errno;
}

/* Runs the exec plugin and collects its standard output. */
static int
exec_run(const struct exec_credential_request *c, struct buf *output, char **error)
{
	const struct kube_exec_config *e = c->exec;
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attr;
	sigset_t mask, defaults;
	char **argv, **envp, *info = NULL, *program;
	int pipefd[2], status, rc, r = -1;
	int64_t deadline = monotonic_ms() + e->timeout_ms;
	pid_t pid;

	if (strcmp(e->interactive_mode, "Always") == 0)
		return exec_error(c, error, "interactiveMode is Always, but sqlkcm runs plugins "
		    "without a terminal");
	if ((rc = exec_command_find(e->command, &program)) != 0)
		return exec_error(c, error, "cannot run it: %s", strerror(rc));
	if (exec_info_json(c, &info, error) == -1) {
		free(program);
		return -1;
	}
	if (pipe2(pipefd, O_CLOEXEC) == -1) {
		free(program);
		free(info);
		return exec_error(c, error, "pipe: %s", strerror(errno));
	}
	argv = xcalloc(e->nargs + 2, sizeof *argv);
	argv[0] = e->command;
	for (size_t i = 0; i < e->nargs; i++)
		argv[i + 1] = e->args[i];
	envp = exec_environment(e, info);

	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&actions, pipefd[1], STDOUT_FILENO);
	posix_spawnattr_init(&attr);
	sigemptyset(&mask);
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGPIPE);
	sigaddset(&defaults, SIGINT);
	sigaddset(&defaults, SIGTERM);
	sigaddset(&defaults, SIGHUP);
	sigaddset(&defaults, SIGCHLD);
	posix_spawnattr_setsigmask(&attr, &mask);
	posix_spawnattr_setsigdefault(&attr, &defaults);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&pid, program, &actions, &attr, argv, envp);
	free(program);
	posix_spawn_file_actions_destroy(&actions);
	posix_spawnattr_destroy(&attr);
	close(pipefd[1]);
	free(argv);
	strv_free(envp);
	free(info);
	if (rc != 0) {
		close(pipefd[0]);
		return exec_error(c, error, "cannot run it: %s", strerror(rc));
	}

	buf_reset(output);
	for (;;) {
		struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
		int64_t left = deadline - monotonic_ms();
		char chunk[16384];
		ssize_t n;

		if (left <= 0) {
			child_kill(pid);
			exec_error(c, error, "no answer within %d ms; killed it", e->timeout_ms);
			goto out;
		}
		rc = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (rc == -1 && errno == EINTR)
			continue;
		if (rc == -1) {
			child_kill(pid);
			exec_error(c, error, "poll: %s", strerror(errno));
			goto out;
		}
		if (rc == 0)
			continue;
		n = read(pipefd[0], chunk, sizeof chunk);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == -1) {
			child_kill(pid);
			exec_error(c, error, "reading its output: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if (output->len + (size_t)n > KUBE_EXEC_OUTPUT_MAX) {
			child_kill(pid);
			exec_error(c, error, "wrote more than %d bytes; killed it",
			    KUBE_EXEC_OUTPUT_MAX);
			goto out;
		}
		buf_append(output, chunk, (size_t)n);
	}
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (w == -1 && errno != EINTR) {
			exec_error(c, error, "waitpid: %s", strerror(errno));
			goto out;
		}
		if (monotonic_ms() >= deadline) {
			child_kill(pid);
			exec_error(c, error, "did not exit within %d ms; killed it", e->timeout_ms);
			goto out;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
	}
	if (WIFSIGNALED(status)) {
		exec_error(c, error, "killed by signal %d", WTERMSIG(status));
		goto out;
	}
	if (WEXITSTATUS(status) != 0) {
		exec_error(c, error, "exited with status %d", WEXITSTATUS(status));
		goto out;
	}
	r = 0;
out:
	close(pipefd[0]);
	return r;
}

int
exec_credential_get(const struct exec_credential_request *c, struct kube_exec_credential **out,
    char **error)
{
	struct buf output;
	char *problem = NULL;
	int r;

	buf_init(&output);
	r = exec_run(c, &output, error);
	if (r == 0 && kube_exec_credential_parse(output.data != NULL ? output.data : "",
	    output.len, c->exec->api_version, out, &problem) == -1) {
		r = exec_error(c, error, "%s", problem);
		free(problem);
	}
	if (output.data != NULL)
		explicit_bzero(output.data, output.len);
	buf_free(&output);
	return r;
}

/* --- its answer: an ExecCredential ------------------------------------------------------ */


/* Says whether a plugin-written value may be quoted in a message (short, plain). */
static int
value_printable(const char *s)
{
	size_t len = strlen(s);

	if (len > 64)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && strchr("./-_:+", s[i]) == NULL)
			return 0;
	return 1;
}

/* Reads an optional string member of a JSON object; empty means unset. */
static int
json_get_string(const cJSON *obj, const char *key, const char **out, char **error)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	*out = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return error_set(error, "ExecCredential: status.%s must be a string", key);
	if (v->valuestring[0] != '\0')
		*out = v->valuestring;
	return 0;
}

int
kube_exec_credential_parse(const char *json, size_t len, const char *api_version,
    struct kube_exec_credential **out, char **error)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *version, *kind, *status;
	const char *token, *cert, *key, *expiration;
	struct kube_exec_credential *cred;
	time_t exp = 0;
	int r = -1;

	*out = NULL;
	if (root == NULL && text_is_blank(json, len))
		return error_set(error, "ExecCredential: output is empty");
	if (root == NULL)
		return error_set(error, "ExecCredential: output is not valid JSON");
	if (!cJSON_IsObject(root)) {
		error_set(error, "ExecCredential: output is not a JSON object");
		goto out;
	}
	version = cJSON_GetObjectItemCaseSensitive(root, "apiVersion");
	kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
	if (!cJSON_IsString(version)) {
		error_set(error, "ExecCredential: apiVersion missing");
		goto out;
	}
	if (strcmp(version->valuestring, api_version) != 0) {
		error_set(error, "ExecCredential: the plugin is configured for %s but returned "
		    "apiVersion %s%s%s", api_version,
		    value_printable(version->valuestring) ? "\"" : "",
		    value_printable(version->valuestring) ? version->valuestring : "(unprintable)",
		    value_printable(version->valuestring) ? "\"" : "");
		goto out;
	}
	if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "ExecCredential") != 0) {
		error_set(error, "ExecCredential: kind must be ExecCredential");
		goto out;
	}
	status = cJSON_GetObjectItemCaseSensitive(root, "status");
	if (!cJSON_IsObject(status)) {
		error_set(error, "ExecCredential: status missing");
		goto out;
	}
	if (json_get_string(status, "token", &token, error) == -1 ||
	    json_get_string(status, "clientCertificateData", &cert, error) == -1 ||
	    json_get_string(status, "clientKeyData", &key, error) == -1 ||
	    json_get_string(status, "expirationTimestamp", &expiration, error) == -1)
		goto out;
	if (token == NULL && cert == NULL && key == NULL) {
		error_set(error, "ExecCredential: status has neither a token nor "
		    "clientCertificateData and clientKeyData");
		goto out;
	}
	if ((cert == NULL) != (key == NULL)) {
		error_set(error, "ExecCredential: status.clientCertificateData and "
		    "status.clientKeyData must be given together");
		goto out;
	}
	if (expiration != NULL && time_parse_rfc3339(expiration, &exp) == -1) {
		error_set(error, "ExecCredential: status.expirationTimestamp is not an RFC 3339 "
		    "time");
		goto out;
	}
	if (expiration != NULL && exp <= 0)
		exp = 1;	/* long past, and distinct from "no expiration" */
	cred = xcalloc(1, sizeof *cred);
	if (token != NULL)
		cred->token = xstrdup(token);
	if (cert != NULL) {
		cred->cert_pem = xstrdup(cert);
		cred->cert_pem_len = strlen(cert);
		cred->key_pem = xstrdup(key);
		cred->key_pem_len = strlen(key);
	}
	cred->expiration = exp;
	*out = cred;
	r = 0;
out:
	cJSON_Delete(root);
	return r;
}

void
kube_exec_credential_free(struct kube_exec_credential *cred)
{
	if (cred == NULL)
		return;
	if (cred->token != NULL) {
		explicit_bzero(cred->token, strlen(cred->token));
		free(cred->token);
	}
	free(cred->cert_pem);
	if (cred->key_pem != NULL) {
		explicit_bzero(cred->key_pem, cred->key_pem_len);
		free(cred->key_pem);
	}
	free(cred);
}
