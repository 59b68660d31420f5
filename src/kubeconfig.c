/*
 * kubeconfig.c - connection configuration: kubeconfig files, in-cluster configuration and
 * per-request credentials, with client-go's rules.
 *
 * A kubeconfig is loaded with libyaml's document API into a node tree, then read in two
 * passes. The decode pass walks every cluster, user and context of every file and fails on
 * what client-go's decoder fails on: a value of the wrong type, bad base64 in a *-data field,
 * a duplicated name or key. The select pass picks the context (the one asked for, or
 * current-context), its cluster and its user, and validates only those, as client-go's
 * ConfirmUsable does: a server that is an http(s) URL, no CA together with
 * insecure-skip-tls-verify, not both a file and inline data for the same thing, a key with a
 * certificate, a well-formed exec section, and no auth method sqlkcm does not implement
 * (basic auth, auth-provider, impersonation) silently ignored.
 *
 * Every error message starts with "kubeconfig PATH: " and names the field by its path, e.g.
 * users[admin].user.client-key-data. Values of secret fields (token, keys, passwords, *-data,
 * exec output) never appear in a message: only their field path and what is wrong.
 *
 * Credentials are the one part that changes while sqlkcm runs. kube_config_credentials is
 * called before each request and keeps its caches in struct kube_config_state: watched files
 * (token file, certificate and key files) are re-read only when stat() says they changed,
 * and an exec plugin's result is kept until it expires or the apiserver rejects it (the
 * plugin itself is run by execcredential.c).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "kubeconfig.h"
#include "timeutil.h"
#include "util.h"


#define EXEC_API_V1 "client.authentication.k8s.io/v1"
#define EXEC_API_V1BETA1 "client.authentication.k8s.io/v1beta1"

/* A file whose contents are cached until stat() says it changed. */
struct watched_file {
	char *path;
	int loaded;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	char *data;
	size_t len;
};

struct kube_config_state {
	struct watched_file token_file;
	char *file_token;		/* the trimmed contents of token_file */
	struct watched_file cert_file;
	struct watched_file key_file;
	struct kube_exec_credential *exec_cred;
};

/* -------------------------------------------------------------------------------------- */
/* Files */

/* Re-reads a watched file if it changed since the last read; *changed says whether it did. */
static int
watched_file_refresh(struct watched_file *wf, const char *what, int *changed, char **error)
{
	struct stat st;
	struct buf b;

	*changed = 0;
	if (wf->loaded && stat(wf->path, &st) == 0 && st.st_dev == wf->dev &&
	    st.st_ino == wf->ino && st.st_size == wf->size &&
	    st.st_mtim.tv_sec == wf->mtime.tv_sec && st.st_mtim.tv_nsec == wf->mtime.tv_nsec)
		return 0;
	buf_init(&b);
	if (file_read_all(wf->path, what, KUBE_CONFIG_FILE_MAX, &b, &st, error) == -1) {
		buf_free(&b);
		return -1;
	}
	free(wf->data);
	wf->len = b.len;
	wf->data = buf_detach(&b);
	wf->dev = st.st_dev;
	wf->ino = st.st_ino;
	wf->size = st.st_size;
	wf->mtime = st.st_mtim;
	wf->loaded = 1;
	*changed = 1;
	return 0;
}

/* Frees what a watched file holds. */
static void
watched_file_clear(struct watched_file *wf)
{
	free(wf->path);
	if (wf->data != NULL)
		explicit_bzero(wf->data, wf->len);
	free(wf->data);
	memset(wf, 0, sizeof *wf);
}

/* Returns a malloc'd copy of s[0..len) without leading and trailing white space. */
static char *
string_trim(const char *s, size_t len)
{
	while (len > 0 && isspace((unsigned char)s[0])) {
		s++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	return xstrndup(s, len);
}

/* Returns path made absolute against dir (which may be NULL: path is returned as is). */
static char *
path_resolve(const char *dir, const char *path)
{
	if (dir == NULL || path[0] == '/')
		return xstrdup(path);
	return xasprintf("%s/%s", dir, path);
}

/* Returns the absolute directory of a file path, or NULL if it cannot be found. */
static char *
path_dir_absolute(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir, *cwd;

	if (slash == NULL)
		dir = xstrdup(".");
	else if (slash == path)
		dir = xstrdup("/");
	else
		dir = xstrndup(path, (size_t)(slash - path));
	if (dir[0] == '/')
		return dir;
	cwd = getcwd(NULL, 0);
	if (cwd == NULL) {
		free(dir);
		return NULL;
	}
	char *abs = strcmp(dir, ".") == 0 ? xstrdup(cwd) : xasprintf("%s/%s", cwd, dir);
	free(cwd);
	free(dir);
	return abs;
}

/* -------------------------------------------------------------------------------------- */
/* Base64, as Go's base64.StdEncoding decodes []byte fields: padding required, CR and LF
 * ignored. */

/* Returns the value of a base64 digit, or -1. */
static int
base64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Decodes standard padded base64 into a malloc'd, NUL-terminated buffer. */
static int
base64_decode(const char *in, size_t len, char **out, size_t *outlen)
{
	char *res = xmalloc(len / 4 * 3 + 4);
	size_t n = 0, quad = 0, pad = 0;
	unsigned int acc = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		int v;

		if (c == '\r' || c == '\n')
			continue;
		if (c == '=') {
			if (quad < 2)
				goto bad;
			pad++;
			quad++;
			acc <<= 6;
			if (quad == 4) {
				res[n++] = (char)(acc >> 16);
				if (pad == 1)
					res[n++] = (char)(acc >> 8);
				/* Only line breaks may follow the padding. */
				for (i++; i < len; i++)
					if (in[i] != '\r' && in[i] != '\n')
						goto bad;
				goto done;
			}
			continue;
		}
		if (pad > 0 || (v = base64_value(c)) < 0)
			goto bad;
		acc = (acc << 6) | (unsigned int)v;
		if (++quad == 4) {
			res[n++] = (char)(acc >> 16);
			res[n++] = (char)(acc >> 8);
			res[n++] = (char)acc;
			quad = 0;
			acc = 0;
		}
	}
	if (quad != 0)
		goto bad;
done:
	res[n] = '\0';
	*out = res;
	*outlen = n;
	return 0;
bad:
	free(res);
	return -1;
}

/* -------------------------------------------------------------------------------------- */
/* YAML documents */

/* One loaded kubeconfig file. */
struct kc_doc {
	char *path;		/* for messages */
	char *dir;		/* absolute base of relative paths, or NULL */
	yaml_document_t doc;
	int loaded;
	yaml_node_t *root;	/* the top mapping, or NULL for an empty document */
};

/* Sets *error to "kubeconfig PATH: MESSAGE"; returns -1. */
static int __attribute__((format(printf, 3, 4)))
kc_error(const struct kc_doc *d, char **error, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	error_set(error, "kubeconfig %s: %s", d->path, msg);
	free(msg);
	return -1;
}

/* Says whether a node is YAML null (absent values are handled by the callers). */
static int
node_is_null(const yaml_node_t *n)
{
	const char *v;
	size_t len;

	if (n->type != YAML_SCALAR_NODE)
		return 0;
	/* libyaml does not resolve tags: an untagged plain scalar carries the default str tag. */
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && (n->tag == NULL ||
	    strcmp((const char *)n->tag, YAML_NULL_TAG) == 0 ||
	    strcmp((const char *)n->tag, YAML_STR_TAG) == 0)) {
		v = (const char *)n->data.scalar.value;
		len = n->data.scalar.length;
		return len == 0 || (len == 1 && v[0] == '~') ||
		    (len == 4 && (memcmp(v, "null", 4) == 0 || memcmp(v, "Null", 4) == 0 ||
		    memcmp(v, "NULL", 4) == 0));
	}
	return 0;
}

/* Says whether a scalar node's value is s. */
static int
scalar_equals(const yaml_node_t *n, const char *s)
{
	size_t len = strlen(s);

	return n != NULL && n->type == YAML_SCALAR_NODE && n->data.scalar.length == len &&
	    memcmp(n->data.scalar.value, s, len) == 0;
}

/* Finds key in a mapping node; *out is NULL if it is absent or null. A key given twice is
 * an error, as it is for client-go's YAML decoder. */
static int
map_get(struct kc_doc *d, yaml_node_t *map, const char *where, const char *key,
    yaml_node_t **out, char **error)
{
	yaml_node_t *found = NULL;
	int seen = 0;

	*out = NULL;
	if (map == NULL)
		return 0;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	    p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, p->key);
		if (!scalar_equals(k, key))
			continue;
		if (seen++)
			return kc_error(d, error, "%s%s%s: duplicated key", where,
			    where[0] ? "." : "", key);
		found = yaml_document_get_node(&d->doc, p->value);
	}
	if (found != NULL && !node_is_null(found))
		*out = found;
	return 0;
}

/* Reads an optional string field; empty means unset (NULL), as client-go's len() == 0. */
static int
map_get_string(struct kc_doc *d, yaml_node_t *map, const char *where, const char *key,
    char **out, char **error)
{
	yaml_node_t *n;

	*out = NULL;
	if (map_get(d, map, where, key, &n, error) == -1)
		return -1;
	if (n == NULL)
		return 0;
	if (n->type != YAML_SCALAR_NODE)
		return kc_error(d, error, "%s.%s: must be a string", where, key);
	if (memchr(n->data.scalar.value, '\0', n->data.scalar.length) != NULL)
		return kc_error(d, error, "%s.%s: contains a NUL byte", where, key);
	if (n->data.scalar.length > 0)
		*out = xstrndup((const char *)n->data.scalar.value, n->data.scalar.length);
	return 0;
}

/* Reads an optional boolean field (YAML 1.1 spellings, as client-go's decoder takes them). */
static int
map_get_bool(struct kc_doc *d, yaml_node_t *map, const char *where, const char *key,
    int *out, char **error)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES",
		"on", "On", "ON", "y", "Y" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO",
		"off", "Off", "OFF", "n", "N" };
	yaml_node_t *n;

	*out = 0;
	if (map_get(d, map, where, key, &n, error) == -1)
		return -1;
	if (n == NULL)
		return 0;
	if (n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
			if (scalar_equals(n, yes[i])) {
				*out = 1;
				return 0;
			}
			if (scalar_equals(n, no[i]))
				return 0;
		}
	}
	return kc_error(d, error, "%s.%s: must be true or false", where, key);
}

/* Reads an optional base64 field into decoded data; the value never appears in messages. */
static int
map_get_data(struct kc_doc *d, yaml_node_t *map, const char *where, const char *key,
    char **out, size_t *outlen, char **error)
{
	yaml_node_t *n;

	*out = NULL;
	*outlen = 0;
	if (map_get(d, map, where, key, &n, error) == -1)
		return -1;
	if (n == NULL)
		return 0;
	if (n->type != YAML_SCALAR_NODE)
		return kc_error(d, error, "%s.%s: must be a base64 string", where, key);
	if (n->data.scalar.length == 0)
		return 0;
	if (base64_decode((const char *)n->data.scalar.value, n->data.scalar.length, out,
	    outlen) == -1)
		return kc_error(d, error, "%s.%s: not valid base64", where, key);
	if (*outlen == 0) {
		free(*out);
		*out = NULL;
	}
	return 0;
}

/* Reads an optional mapping field. */
static int
map_get_mapping(struct kc_doc *d, yaml_node_t *map, const char *where, const char *key,
    yaml_node_t **out, char **error)
{
	if (map_get(d, map, where, key, out, error) == -1)
		return -1;
	if (*out != NULL && (*out)->type != YAML_MAPPING_NODE)
		return kc_error(d, error, "%s%s%s: must be a mapping", where, where[0] ? "." : "",
		    key);
	return 0;
}

/* Reads an optional sequence field. */
static int
map_get_sequence(struct kc_doc *d, yaml_node_t *map, const char *where, const char *key,
    yaml_node_t **out, char **error)
{
	if (map_get(d, map, where, key, out, error) == -1)
		return -1;
	if (*out != NULL && (*out)->type != YAML_SEQUENCE_NODE)
		return kc_error(d, error, "%s%s%s: must be a list", where, where[0] ? "." : "",
		    key);
	return 0;
}

/* Loads the first YAML document of text (NULL or blank: none) into d; d->path must be set. */
static int
kc_doc_load(struct kc_doc *d, const char *text, size_t len, char **error)
{
	yaml_parser_t parser;
	yaml_node_t *root;

	/* Nothing to parse: an empty file reads into a NULL string, on which libyaml asserts,
	 * and tabs alone are a YAML syntax error though the file says nothing. */
	if (text == NULL || text_is_blank(text, len))
		return 0;
	if (!yaml_parser_initialize(&parser))
		return kc_error(d, error, "cannot initialize the YAML parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &d->doc)) {
		int r = kc_error(d, error, "not YAML: %s%s%s at line %lu column %lu",
		    parser.problem != NULL ? parser.problem : "parse error",
		    parser.context != NULL ? " " : "",
		    parser.context != NULL ? parser.context : "",
		    (unsigned long)parser.problem_mark.line + 1,
		    (unsigned long)parser.problem_mark.column + 1);
		yaml_parser_delete(&parser);
		return r;
	}
	yaml_parser_delete(&parser);
	d->loaded = 1;
	root = yaml_document_get_root_node(&d->doc);
	if (root == NULL || node_is_null(root))
		return 0;
	if (root->type != YAML_MAPPING_NODE)
		return kc_error(d, error, "not a kubeconfig: the top level is a %s, not a mapping",
		    root->type == YAML_SEQUENCE_NODE ? "list" : "scalar");
	d->root = root;
	return 0;
}

/* Frees what a kc_doc holds. */
static void
kc_doc_clear(struct kc_doc *d)
{
	if (d->loaded)
		yaml_document_delete(&d->doc);
	free(d->path);
	free(d->dir);
	memset(d, 0, sizeof *d);
}

/* -------------------------------------------------------------------------------------- */
/* Decoding clusters, users and contexts */

/* A context, as read from contexts[].context. */
struct kc_context {
	char *cluster;
	char *user;
	char *namespace;
};

/* The parts of a user that sqlkcm refuses, noted during decoding, checked on selection. */
struct kc_user_refused {
	int basic_auth;
	int auth_provider;
	int impersonation;
};

/* Frees an exec configuration. */
static void
exec_config_free(struct kube_exec_config *e)
{
	if (e == NULL)
		return;
	free(e->api_version);
	free(e->command);
	for (size_t i = 0; i < e->nargs; i++)
		free(e->args[i]);
	free(e->args);
	for (size_t i = 0; i < e->nenv; i++) {
		free(e->env_names[i]);
		free(e->env_values[i]);
	}
	free(e->env_names);
	free(e->env_values);
	free(e->install_hint);
	free(e->interactive_mode);
	free(e);
}

static void config_clear(struct kube_config *c);

/* Decodes clusters[NAME].cluster into c. */
static int
cluster_decode(struct kc_doc *d, yaml_node_t *map, const char *where, struct kube_config *c,
    char **error)
{
	char *ca_file = NULL;

	if (map_get_string(d, map, where, "server", &c->server, error) == -1 ||
	    map_get_string(d, map, where, "tls-server-name", &c->tls_server_name, error) == -1 ||
	    map_get_bool(d, map, where, "insecure-skip-tls-verify",
	    &c->insecure_skip_tls_verify, error) == -1 ||
	    map_get_string(d, map, where, "proxy-url", &c->proxy_url, error) == -1 ||
	    map_get_bool(d, map, where, "disable-compression", &c->disable_compression,
	    error) == -1 ||
	    map_get_string(d, map, where, "certificate-authority", &ca_file, error) == -1 ||
	    map_get_data(d, map, where, "certificate-authority-data", &c->ca_pem,
	    &c->ca_pem_len, error) == -1) {
		free(ca_file);
		return -1;
	}
	if (ca_file != NULL) {
		c->ca_file = path_resolve(d->dir, ca_file);
		free(ca_file);
	}
	return 0;
}

/* Decodes users[NAME].user.exec. */
static int
exec_decode(struct kc_doc *d, yaml_node_t *map, const char *where,
    struct kube_exec_config **out, char **error)
{
	struct kube_exec_config *e = xcalloc(1, sizeof *e);
	yaml_node_t *args, *env;
	char *command = NULL;
	int r = -1;

	e->timeout_ms = KUBE_EXEC_TIMEOUT_MS;
	if (map_get_string(d, map, where, "apiVersion", &e->api_version, error) == -1 ||
	    map_get_string(d, map, where, "command", &command, error) == -1 ||
	    map_get_string(d, map, where, "installHint", &e->install_hint, error) == -1 ||
	    map_get_string(d, map, where, "interactiveMode", &e->interactive_mode, error) == -1 ||
	    map_get_bool(d, map, where, "provideClusterInfo", &e->provide_cluster_info,
	    error) == -1 ||
	    map_get_sequence(d, map, where, "args", &args, error) == -1 ||
	    map_get_sequence(d, map, where, "env", &env, error) == -1)
		goto out;
	if (command != NULL)
		e->command = strchr(command, '/') != NULL ? path_resolve(d->dir, command) :
		    xstrdup(command);
	if (args != NULL) {
		size_t n = (size_t)(args->data.sequence.items.top - args->data.sequence.items.start);
		e->args = xcalloc(n + 1, sizeof *e->args);
		for (size_t i = 0; i < n; i++) {
			yaml_node_t *a = yaml_document_get_node(&d->doc,
			    args->data.sequence.items.start[i]);
			if (a->type != YAML_SCALAR_NODE ||
			    memchr(a->data.scalar.value, '\0', a->data.scalar.length) != NULL) {
				kc_error(d, error, "%s.args[%zu]: must be a string", where, i);
				goto out;
			}
			e->args[e->nargs++] = node_is_null(a) ? xstrdup("") :
			    xstrndup((const char *)a->data.scalar.value, a->data.scalar.length);
		}
	}
	if (env != NULL) {
		size_t n = (size_t)(env->data.sequence.items.top - env->data.sequence.items.start);
		e->env_names = xcalloc(n + 1, sizeof *e->env_names);
		e->env_values = xcalloc(n + 1, sizeof *e->env_values);
		for (size_t i = 0; i < n; i++) {
			yaml_node_t *v = yaml_document_get_node(&d->doc,
			    env->data.sequence.items.start[i]);
			char *ew = xasprintf("%s.env[%zu]", where, i), *name = NULL, *value = NULL;

			if (v->type != YAML_MAPPING_NODE) {
				kc_error(d, error, "%s: must be a mapping", ew);
				free(ew);
				goto out;
			}
			if (map_get_string(d, v, ew, "name", &name, error) == -1 ||
			    map_get_string(d, v, ew, "value", &value, error) == -1) {
				free(name);
				free(ew);
				goto out;
			}
			if (name == NULL || strchr(name, '=') != NULL) {
				kc_error(d, error, "%s.name: %s", ew, name == NULL ? "missing" :
				    "must not contain '='");
				free(name);
				free(value);
				free(ew);
				goto out;
			}
			free(ew);
			e->env_names[e->nenv] = name;
			e->env_values[e->nenv++] = value != NULL ? value : xstrdup("");
		}
	}
	r = 0;
out:
	free(command);
	if (r == 0)
		*out = e;
	else
		exec_config_free(e);
	return r;
}

/* Decodes users[NAME].user into c, noting what sqlkcm refuses in *refused. */
static int
user_decode(struct kc_doc *d, yaml_node_t *map, const char *where, struct kube_config *c,
    struct kc_user_refused *refused, char **error)
{
	char *cert_file = NULL, *key_file = NULL, *token_file = NULL;
	char *username = NULL, *password = NULL, *as = NULL, *as_uid = NULL;
	yaml_node_t *exec, *provider, *as_groups, *as_extra;
	char *exec_where = xasprintf("%s.exec", where);
	int r = -1;

	memset(refused, 0, sizeof *refused);
	if (map_get_string(d, map, where, "client-certificate", &cert_file, error) == -1 ||
	    map_get_data(d, map, where, "client-certificate-data", &c->cert_pem,
	    &c->cert_pem_len, error) == -1 ||
	    map_get_string(d, map, where, "client-key", &key_file, error) == -1 ||
	    map_get_data(d, map, where, "client-key-data", &c->key_pem, &c->key_pem_len,
	    error) == -1 ||
	    map_get_string(d, map, where, "token", &c->token, error) == -1 ||
	    map_get_string(d, map, where, "tokenFile", &token_file, error) == -1 ||
	    map_get_string(d, map, where, "username", &username, error) == -1 ||
	    map_get_string(d, map, where, "password", &password, error) == -1 ||
	    map_get_string(d, map, where, "as", &as, error) == -1 ||
	    map_get_string(d, map, where, "as-uid", &as_uid, error) == -1 ||
	    map_get_sequence(d, map, where, "as-groups", &as_groups, error) == -1 ||
	    map_get_mapping(d, map, where, "as-user-extra", &as_extra, error) == -1 ||
	    map_get_mapping(d, map, where, "auth-provider", &provider, error) == -1 ||
	    map_get_mapping(d, map, where, "exec", &exec, error) == -1)
		goto out;
	if (exec != NULL && exec_decode(d, exec, exec_where, &c->exec, error) == -1)
		goto out;
	if (cert_file != NULL)
		c->cert_file = path_resolve(d->dir, cert_file);
	if (key_file != NULL)
		c->key_file = path_resolve(d->dir, key_file);
	if (token_file != NULL)
		c->token_file = path_resolve(d->dir, token_file);
	refused->basic_auth = username != NULL || password != NULL;
	refused->auth_provider = provider != NULL;
	refused->impersonation = as != NULL || as_uid != NULL || as_groups != NULL ||
	    as_extra != NULL;
	r = 0;
out:
	free(cert_file);
	free(key_file);
	free(token_file);
	free(username);
	if (password != NULL) {
		explicit_bzero(password, strlen(password));
		free(password);
	}
	free(as);
	free(as_uid);
	free(exec_where);
	return r;
}

/* Decodes contexts[NAME].context. */
static int
context_decode(struct kc_doc *d, yaml_node_t *map, const char *where, struct kc_context *ctx,
    char **error)
{
	memset(ctx, 0, sizeof *ctx);
	if (map_get_string(d, map, where, "cluster", &ctx->cluster, error) == -1 ||
	    map_get_string(d, map, where, "user", &ctx->user, error) == -1 ||
	    map_get_string(d, map, where, "namespace", &ctx->namespace, error) == -1)
		return -1;
	return 0;
}

/* Frees a decoded context's strings. */
static void
context_clear(struct kc_context *ctx)
{
	free(ctx->cluster);
	free(ctx->user);
	free(ctx->namespace);
	memset(ctx, 0, sizeof *ctx);
}

/* One of the three named lists of a kubeconfig. */
struct kc_list {
	const char *name;	/* "clusters" */
	const char *item;	/* "cluster" */
};

static const struct kc_list kc_clusters = { "clusters", "cluster" };
static const struct kc_list kc_users = { "users", "user" };
static const struct kc_list kc_contexts = { "contexts", "context" };

/* Orders strings for the duplicate check. */
static int
string_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads entry i of a list: its name and its inner mapping (NULL when empty). */
static int
list_entry(struct kc_doc *d, const struct kc_list *list, yaml_node_t *seq, size_t i,
    char **name, yaml_node_t **inner, char **error)
{
	yaml_node_t *e = yaml_document_get_node(&d->doc, seq->data.sequence.items.start[i]);
	char *where = xasprintf("%s[%zu]", list->name, i);
	int r = -1;

	*name = NULL;
	if (e->type != YAML_MAPPING_NODE) {
		kc_error(d, error, "%s: must be a mapping", where);
		goto out;
	}
	if (map_get_string(d, e, where, "name", name, error) == -1)
		goto out;
	if (*name == NULL) {
		kc_error(d, error, "%s.name: missing", where);
		goto out;
	}
	free(where);
	where = xasprintf("%s[%s]", list->name, *name);
	if (map_get_mapping(d, e, where, list->item, inner, error) == -1)
		goto out;
	r = 0;
out:
	if (r == -1) {
		free(*name);
		*name = NULL;
	}
	free(where);
	return r;
}

/* Decodes every entry of one list of a file (types, base64, duplicate names). */
static int
list_decode_all(struct kc_doc *d, const struct kc_list *list, char **error)
{
	yaml_node_t *seq, *inner;
	char **names;
	size_t n;
	int r = -1;

	if (map_get_sequence(d, d->root, "", list->name, &seq, error) == -1)
		return -1;
	if (seq == NULL)
		return 0;
	n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
	names = xcalloc(n + 1, sizeof *names);
	for (size_t i = 0; i < n; i++) {
		struct kube_config c = { 0 };
		struct kc_user_refused refused;
		struct kc_context ctx;
		char *where;
		int ok;

		if (list_entry(d, list, seq, i, &names[i], &inner, error) == -1)
			goto out;
		where = xasprintf("%s[%s].%s", list->name, names[i], list->item);
		if (list == &kc_clusters)
			ok = cluster_decode(d, inner, where, &c, error);
		else if (list == &kc_users)
			ok = user_decode(d, inner, where, &c, &refused, error);
		else {
			ok = context_decode(d, inner, where, &ctx, error);
			context_clear(&ctx);
		}
		free(where);
		config_clear(&c);
		if (ok == -1)
			goto out;
	}
	qsort(names, n, sizeof *names, string_compare);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(names[i - 1], names[i]) == 0) {
			kc_error(d, error, "%s[%s]: duplicated name", list->name, names[i]);
			goto out;
		}
	}
	r = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

/* -------------------------------------------------------------------------------------- */
/* Selecting and validating the context, cluster and user in use */

/* Finds the entry called name in a list, in the first file that has it. */
static int
docs_find(struct kc_doc *docs, size_t ndocs, const struct kc_list *list, const char *name,
    struct kc_doc **doc, yaml_node_t **inner, char **error)
{
	*doc = NULL;
	*inner = NULL;
	for (size_t k = 0; k < ndocs; k++) {
		struct kc_doc *d = &docs[k];
		yaml_node_t *seq, *in;
		size_t n;

		if (d->root == NULL)
			continue;
		if (map_get_sequence(d, d->root, "", list->name, &seq, error) == -1)
			return -1;
		if (seq == NULL)
			continue;
		n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
		for (size_t i = 0; i < n; i++) {
			char *entry_name;

			if (list_entry(d, list, seq, i, &entry_name, &in, error) == -1)
				return -1;
			int match = strcmp(entry_name, name) == 0;
			free(entry_name);
			if (match) {
				*doc = d;
				*inner = in;
				return 0;
			}
		}
	}
	return 0;
}

/* Checks that server is an http(s) URL and normalizes it in place (lower-case scheme, no
 * trailing slash); returns NULL or what is wrong. The value itself is never part of the
 * answer: a URL may carry user information. */
static const char *
server_normalize(char *s)
{
	size_t scheme, len, host;

	if (strncasecmp(s, "https://", 8) == 0)
		scheme = 8;
	else if (strncasecmp(s, "http://", 7) == 0)
		scheme = 7;
	else
		return "not an http:// or https:// URL";
	for (const char *p = s; *p != '\0'; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return "URL contains white space or control characters";
	host = strcspn(s + scheme, "/?#");
	if (host == 0)
		return "URL has no host";
	if (memchr(s + scheme, '@', host) != NULL)
		return "URL must not contain user information";
	if (strpbrk(s + scheme, "?#") != NULL)
		return "URL must not have a query or fragment";
	for (size_t i = 0; i < scheme; i++)
		s[i] = (char)tolower((unsigned char)s[i]);
	len = strlen(s);
	while (len > scheme + host && s[len - 1] == '/')
		s[--len] = '\0';
	return NULL;
}

/* Checks that a file named by a field can be read and, when need_data and it is a regular
 * file, that it holds more than white space: an empty CA, certificate, key or token file is
 * a mistake that would otherwise surface only as a TLS or 401 error on every request. Other
 * kinds of file (a pipe, a device) are not read here, so that loading never blocks. */
static int
file_check_readable(struct kc_doc *d, const char *where, const char *path, int need_data,
    char **error)
{
	struct buf b;
	struct stat st;
	char *why = NULL;
	int blank;

	if (access(path, R_OK) == -1)
		return kc_error(d, error, "%s: cannot read %s: %s", where, path, strerror(errno));
	if (!need_data || stat(path, &st) == -1 || !S_ISREG(st.st_mode))
		return 0;
	buf_init(&b);
	/* A CA bundle may be large; nothing this size is a mistake to catch here. */
	if (file_read_all(path, "file", 16 << 20, &b, NULL, &why) == -1) {
		kc_error(d, error, "%s: cannot read: %s", where, why);
		free(why);
		buf_free(&b);
		return -1;
	}
	blank = text_is_blank(b.data != NULL ? b.data : "", b.len);
	if (blank)
		kc_error(d, error, "%s: %s is empty%s", where, path, b.len > 0 ?
		    " (only white space)" : "");
	buf_free(&b);
	return blank ? -1 : 0;
}

/* Validates the cluster in use. */
static int
cluster_validate(struct kc_doc *d, const char *where, struct kube_config *c, char **error)
{
	const char *problem;
	char *field;
	int r = 0;

	if (c->server == NULL)
		return kc_error(d, error, "%s.server: missing: the cluster has no server", where);
	if ((problem = server_normalize(c->server)) != NULL)
		return kc_error(d, error, "%s.server: %s", where, problem);
	if (c->ca_file != NULL && c->ca_pem != NULL)
		return kc_error(d, error, "%s: certificate-authority and certificate-authority-data "
		    "are both set; set only one", where);
	if (c->insecure_skip_tls_verify && (c->ca_file != NULL || c->ca_pem != NULL))
		return kc_error(d, error, "%s.insecure-skip-tls-verify: true together with a "
		    "certificate authority is not allowed", where);
	if (c->proxy_url != NULL && strncasecmp(c->proxy_url, "http://", 7) != 0 &&
	    strncasecmp(c->proxy_url, "https://", 8) != 0 &&
	    strncasecmp(c->proxy_url, "socks5://", 9) != 0)
		return kc_error(d, error, "%s.proxy-url: not an http://, https:// or socks5:// URL",
		    where);
	if (c->ca_file != NULL) {
		field = xasprintf("%s.certificate-authority", where);
		r = file_check_readable(d, field, c->ca_file, 1, error);
		free(field);
	}
	return r;
}

/* Validates an exec section and applies client-go's interactiveMode default. */
static int
exec_validate(struct kc_doc *d, const char *where, struct kube_exec_config *e, char **error)
{
	if (e->command == NULL)
		return kc_error(d, error, "%s.command: missing", where);
	if (e->api_version == NULL)
		return kc_error(d, error, "%s.apiVersion: missing", where);
	if (strcmp(e->api_version, EXEC_API_V1) != 0 &&
	    strcmp(e->api_version, EXEC_API_V1BETA1) != 0)
		return kc_error(d, error, "%s.apiVersion: \"%s\" is not supported (use %s or %s)",
		    where, e->api_version, EXEC_API_V1, EXEC_API_V1BETA1);
	if (e->interactive_mode == NULL) {
		if (strcmp(e->api_version, EXEC_API_V1) == 0)
			return kc_error(d, error, "%s.interactiveMode: missing (required with %s)",
			    where, EXEC_API_V1);
		e->interactive_mode = xstrdup("IfAvailable");
	}
	if (strcmp(e->interactive_mode, "Never") != 0 &&
	    strcmp(e->interactive_mode, "IfAvailable") != 0 &&
	    strcmp(e->interactive_mode, "Always") != 0)
		return kc_error(d, error, "%s.interactiveMode: \"%s\" is not Never, IfAvailable "
		    "or Always", where, e->interactive_mode);
	return 0;
}

/* Validates the user in use. */
static int
user_validate(struct kc_doc *d, const char *where, struct kube_config *c,
    const struct kc_user_refused *refused, char **error)
{
	char *field;
	int r = 0;

	if (refused->basic_auth)
		return kc_error(d, error, "%s: basic auth is not supported (username/password); "
		    "use a token, a client certificate or an exec plugin", where);
	if (refused->auth_provider)
		return kc_error(d, error, "%s.auth-provider: auth providers are not supported; "
		    "use an exec plugin", where);
	if (refused->impersonation)
		return kc_error(d, error, "%s: impersonation (as, as-uid, as-groups, as-user-extra) "
		    "is not supported", where);
	if (c->cert_file != NULL && c->cert_pem != NULL)
		return kc_error(d, error, "%s: client-certificate and client-certificate-data are "
		    "both set; set only one", where);
	if (c->key_file != NULL && c->key_pem != NULL)
		return kc_error(d, error, "%s: client-key and client-key-data are both set; set "
		    "only one", where);
	if ((c->cert_file != NULL || c->cert_pem != NULL) &&
	    c->key_file == NULL && c->key_pem == NULL)
		return kc_error(d, error, "%s: a client certificate needs client-key or "
		    "client-key-data", where);
	if ((c->key_file != NULL || c->key_pem != NULL) &&
	    c->cert_file == NULL && c->cert_pem == NULL)
		return kc_error(d, error, "%s: a client key needs client-certificate or "
		    "client-certificate-data", where);
	if (c->exec != NULL) {
		field = xasprintf("%s.exec", where);
		r = exec_validate(d, field, c->exec, error);
		free(field);
		if (r == -1)
			return -1;
	}
	const char *files[][2] = { { "client-certificate", c->cert_file },
		{ "client-key", c->key_file }, { "tokenFile", c->token_file } };
	for (size_t i = 0; i < 3 && r == 0; i++) {
		if (files[i][1] == NULL)
			continue;
		field = xasprintf("%s.%s", where, files[i][0]);
		/* With a static token too, an empty token file falls back to it (as in
		 * client-go): only then may the token file be empty. */
		r = file_check_readable(d, field, files[i][1], i != 2 || c->token == NULL, error);
		free(field);
	}
	return r;
}

/* Says whether s is a DNS-1123 label, as a namespace name must be. */
static int
dns_label_valid(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
			return 0;
	return 1;
}

/* Moves the fields of a decoded cluster or user from src into dst. */
static void
config_take(struct kube_config *dst, struct kube_config *src)
{
#define TAKE(f) do { if (src->f != NULL) { dst->f = src->f; src->f = NULL; } } while (0)
	TAKE(server);
	TAKE(tls_server_name);
	TAKE(proxy_url);
	TAKE(ca_file);
	TAKE(ca_pem);
	TAKE(cert_file);
	TAKE(cert_pem);
	TAKE(key_file);
	TAKE(key_pem);
	TAKE(token);
	TAKE(token_file);
	TAKE(exec);
#undef TAKE
	if (src->insecure_skip_tls_verify)
		dst->insecure_skip_tls_verify = 1;
	if (src->disable_compression)
		dst->disable_compression = 1;
	if (src->ca_pem_len)
		dst->ca_pem_len = src->ca_pem_len;
	if (src->cert_pem_len)
		dst->cert_pem_len = src->cert_pem_len;
	if (src->key_pem_len)
		dst->key_pem_len = src->key_pem_len;
}

/* Says whether a loaded file holds no configuration, as client-go's IsConfigEmpty: no
 * document at all (empty, white space, comments, "---"), or a mapping with no clusters,
 * users or contexts and no current-context. */
static int
doc_is_empty(struct kc_doc *d)
{
	static const char *const keys[] = { "clusters", "users", "contexts", "current-context" };
	yaml_document_t *doc = &d->doc;

	if (d->root == NULL)
		return 1;
	for (yaml_node_pair_t *p = d->root->data.mapping.pairs.start;
	    p < d->root->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);

		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
			if (!scalar_equals(k, keys[i]) || v == NULL || node_is_null(v))
				continue;
			if (v->type == YAML_SEQUENCE_NODE &&
			    v->data.sequence.items.top == v->data.sequence.items.start)
				continue;
			if (v->type == YAML_SCALAR_NODE && v->data.scalar.length == 0)
				continue;
			return 0;
		}
	}
	return 1;
}

/* Sets *error to client-go's message for a configuration with nothing in it, naming the
 * files; returns -1. sqlkcm does not read KUBERNETES_MASTER, which client-go's message
 * suggests: --master is what sqlkcm takes instead. */
static int
docs_empty_error(const struct kc_doc *docs, size_t ndocs, char **error)
{
	struct buf paths;

	buf_init(&paths);
	for (size_t k = 0; k < ndocs; k++)
		buf_printf(&paths, "%s%s", k ? ", " : "", docs[k].path);
	error_set(error, "kubeconfig %s: invalid configuration: no configuration has been "
	    "provided, try giving --master (the file%s defines no cluster, user, context or "
	    "current-context)", paths.data, ndocs > 1 ? "s" : "");
	buf_free(&paths);
	return -1;
}

/* Builds the configuration of a context from loaded files (decoded and checked already).
 * *empty (if not NULL) says whether it failed because the files hold no configuration at
 * all, which kube_config_resolve treats as no file (as client-go's deferred loading does). */
static int
docs_select(struct kc_doc *docs, size_t ndocs, const char *context_arg,
    struct kube_config **out, int *empty, char **error)
{
	struct kube_config *c = xcalloc(1, sizeof *c);
	struct kube_config part = { 0 };
	struct kc_context ctx = { 0 };
	struct kc_user_refused refused;
	struct kc_doc *d = &docs[0], *cd, *found;
	yaml_node_t *inner;
	char *context = NULL, *where = NULL;
	int all_empty = 1;

	for (size_t k = 0; k < ndocs; k++)
		all_empty &= doc_is_empty(&docs[k]);
	if (empty != NULL)
		*empty = all_empty;
	if (all_empty) {
		docs_empty_error(docs, ndocs, error);
		goto fail;
	}
	if (context_arg != NULL && context_arg[0] != '\0')
		context = xstrdup(context_arg);
	for (size_t k = 0; k < ndocs && context == NULL; k++) {
		if (map_get_string(&docs[k], docs[k].root, "", "current-context", &context,
		    error) == -1)
			goto fail;
		if (context != NULL)
			d = &docs[k];
	}
	if (context == NULL) {
		kc_error(d, error, "current-context is not set and no context was given");
		goto fail;
	}
	if (docs_find(docs, ndocs, &kc_contexts, context, &cd, &inner, error) == -1)
		goto fail;
	if (cd == NULL) {
		if (context_arg != NULL && context_arg[0] != '\0')
			kc_error(d, error, "context \"%s\" not found", context);
		else
			kc_error(d, error, "current-context: context \"%s\" not found", context);
		goto fail;
	}
	where = xasprintf("contexts[%s].context", context);
	if (context_decode(cd, inner, where, &ctx, error) == -1)
		goto fail;
	if (ctx.cluster == NULL) {
		kc_error(cd, error, "%s.cluster: missing", where);
		goto fail;
	}
	if (ctx.user == NULL) {
		kc_error(cd, error, "%s.user: missing", where);
		goto fail;
	}
	if (ctx.namespace != NULL && !dns_label_valid(ctx.namespace)) {
		kc_error(cd, error, "%s.namespace: \"%s\" is not a valid namespace name", where,
		    ctx.namespace);
		goto fail;
	}

	if (docs_find(docs, ndocs, &kc_clusters, ctx.cluster, &found, &inner, error) == -1)
		goto fail;
	if (found == NULL) {
		kc_error(cd, error, "%s.cluster: cluster \"%s\" not found", where, ctx.cluster);
		goto fail;
	}
	free(where);
	where = xasprintf("clusters[%s].cluster", ctx.cluster);
	if (cluster_decode(found, inner, where, &part, error) == -1 ||
	    cluster_validate(found, where, &part, error) == -1)
		goto fail;
	config_take(c, &part);
	config_clear(&part);

	free(where);
	where = xasprintf("contexts[%s].context", context);
	if (docs_find(docs, ndocs, &kc_users, ctx.user, &found, &inner, error) == -1)
		goto fail;
	if (found == NULL) {
		kc_error(cd, error, "%s.user: user \"%s\" not found", where, ctx.user);
		goto fail;
	}
	free(where);
	where = xasprintf("users[%s].user", ctx.user);
	if (user_decode(found, inner, where, &part, &refused, error) == -1 ||
	    user_validate(found, where, &part, &refused, error) == -1)
		goto fail;
	config_take(c, &part);
	config_clear(&part);

	c->namespace = ctx.namespace;
	ctx.namespace = NULL;
	c->origin = xasprintf("kubeconfig %s (context %s)", cd->path, context);
	c->state = xcalloc(1, sizeof *c->state);
	context_clear(&ctx);
	free(context);
	free(where);
	*out = c;
	return 0;
fail:
	config_clear(&part);
	context_clear(&ctx);
	free(context);
	free(where);
	kube_config_free(c);
	return -1;
}

/* Decodes every list of a loaded file. */
static int
doc_decode_all(struct kc_doc *d, char **error)
{
	char *current = NULL;

	if (d->root == NULL)
		return 0;
	if (list_decode_all(d, &kc_clusters, error) == -1 ||
	    list_decode_all(d, &kc_users, error) == -1 ||
	    list_decode_all(d, &kc_contexts, error) == -1 ||
	    map_get_string(d, d->root, "", "current-context", &current, error) == -1)
		return -1;
	free(current);
	return 0;
}

/* Loads and decodes one file's text into d. */
static int
doc_open(struct kc_doc *d, const char *text, size_t len, const char *path, char **error)
{
	memset(d, 0, sizeof *d);
	d->path = xstrdup(path != NULL ? path : "(from memory)");
	if (path != NULL && (d->dir = path_dir_absolute(path)) == NULL)
		return kc_error(d, error, "cannot find the current directory: %s", strerror(errno));
	if (kc_doc_load(d, text, len, error) == -1 || doc_decode_all(d, error) == -1)
		return -1;
	return 0;
}

/* -------------------------------------------------------------------------------------- */
/* Loading */

int
kube_config_parse(const char *yaml, size_t len, const char *path, const char *context,
    struct kube_config **out, char **error)
{
	struct kc_doc d;
	int r;

	*out = NULL;
	r = doc_open(&d, yaml, len, path, error);
	if (r == 0)
		r = docs_select(&d, 1, context, out, NULL, error);
	kc_doc_clear(&d);
	return r;
}

/* Reads, merges and selects from kubeconfig files; *empty says whether it failed because
 * the files that exist hold no configuration at all. */
static int
files_load(const char *const *paths, size_t npaths, const char *context,
    struct kube_config **out, int *empty, char **error)
{
	struct kc_doc *docs = xcalloc(npaths + 1, sizeof *docs);
	struct buf text;
	size_t ndocs = 0;
	int r = -1;

	*out = NULL;
	*empty = 0;
	buf_init(&text);
	for (size_t i = 0; i < npaths; i++) {
		int seen = 0;

		for (size_t j = 0; j < i; j++)
			seen |= strcmp(paths[i], paths[j]) == 0;
		if (seen)
			continue;
		if (npaths > 1 && access(paths[i], F_OK) == -1 && errno == ENOENT)
			continue;
		if (file_read_all(paths[i], "kubeconfig", KUBE_CONFIG_FILE_MAX, &text, NULL,
		    error) == -1)
			goto out;
		if (doc_open(&docs[ndocs++], text.data, text.len, paths[i], error) == -1)
			goto out;
	}
	if (ndocs == 0) {
		struct buf list;
		buf_init(&list);
		for (size_t i = 0; i < npaths; i++)
			buf_printf(&list, "%s%s", i ? ", " : "", paths[i]);
		error_set(error, "kubeconfig: none of these files exists: %s",
		    list.data != NULL ? list.data : "(no files given)");
		buf_free(&list);
		goto out;
	}
	r = docs_select(docs, ndocs, context, out, empty, error);
out:
	for (size_t i = 0; i < ndocs; i++)
		kc_doc_clear(&docs[i]);
	free(docs);
	buf_free(&text);
	return r;
}

int
kube_config_load_file(const char *path, const char *context, struct kube_config **out,
    char **error)
{
	int empty;

	return files_load(&path, 1, context, out, &empty, error);
}

int
kube_config_load_files(const char *const *paths, size_t npaths, const char *context,
    struct kube_config **out, char **error)
{
	int empty;

	return files_load(paths, npaths, context, out, &empty, error);
}

/* Frees the fields of a configuration, leaving it zeroed. */
static void
config_clear(struct kube_config *c)
{
	free(c->server);
	free(c->tls_server_name);
	free(c->proxy_url);
	free(c->ca_file);
	free(c->ca_pem);
	free(c->cert_file);
	if (c->cert_pem != NULL)
		free(c->cert_pem);
	free(c->key_file);
	if (c->key_pem != NULL) {
		explicit_bzero(c->key_pem, c->key_pem_len);
		free(c->key_pem);
	}
	if (c->token != NULL) {
		explicit_bzero(c->token, strlen(c->token));
		free(c->token);
	}
	free(c->token_file);
	exec_config_free(c->exec);
	free(c->namespace);
	free(c->origin);
	if (c->state != NULL) {
		watched_file_clear(&c->state->token_file);
		watched_file_clear(&c->state->cert_file);
		watched_file_clear(&c->state->key_file);
		free(c->state->file_token);
		kube_exec_credential_free(c->state->exec_cred);
		free(c->state);
	}
	memset(c, 0, sizeof *c);
}

void
kube_config_free(struct kube_config *c)
{
	if (c == NULL)
		return;
	config_clear(c);
	free(c);
}

/* -------------------------------------------------------------------------------------- */
/* In-cluster configuration and the search order */

/* Reads a token file into the state's cache if it changed; an empty token is an error. */
static int
token_file_refresh(struct kube_config_state *st, char **error)
{
	int changed;
	char *token;

	if (watched_file_refresh(&st->token_file, "token file", &changed, error) == -1)
		return -1;
	if (!changed && st->file_token != NULL)
		return 0;
	token = string_trim(st->token_file.data, st->token_file.len);
	if (token[0] == '\0' || strchr(token, '\n') != NULL || strchr(token, '\r') != NULL) {
		int empty = token[0] == '\0';
		explicit_bzero(token, strlen(token));
		free(token);
		st->token_file.loaded = 0;
		return error_set(error, "token file %s: %s", st->token_file.path,
		    empty ? "empty" : "holds more than one line");
	}
	if (st->file_token != NULL) {
		explicit_bzero(st->file_token, strlen(st->file_token));
		free(st->file_token);
	}
	st->file_token = token;
	return 0;
}

int
kube_config_in_cluster(const char *sa_dir, struct kube_config **out, char **error)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	const char *pod_namespace = getenv("POD_NAMESPACE");
	struct kube_config *c;
	struct buf ns;
	char *ca, *problem = NULL;
	long port_number;

	*out = NULL;
	if (sa_dir == NULL)
		sa_dir = KUBE_SERVICE_ACCOUNT_DIR;
	if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0')
		return error_set(error, "in-cluster: KUBERNETES_SERVICE_HOST and "
		    "KUBERNETES_SERVICE_PORT must both be set");
	if (strspn(port, "0123456789") != strlen(port) || strlen(port) > 5 ||
	    (port_number = strtol(port, NULL, 10)) < 1 || port_number > 65535)
		return error_set(error, "in-cluster: KUBERNETES_SERVICE_PORT \"%s\" is not a port "
		    "number", port);
	if (strpbrk(host, "/@?# \t\r\n[]") != NULL)
		return error_set(error, "in-cluster: KUBERNETES_SERVICE_HOST \"%s\" is not a host",
		    host);

	c = xcalloc(1, sizeof *c);
	c->state = xcalloc(1, sizeof *c->state);
	c->server = strchr(host, ':') != NULL ? xasprintf("https://[%s]:%s", host, port) :
	    xasprintf("https://%s:%s", host, port);
	c->token_file = xasprintf("%s/token", sa_dir);
	c->state->token_file.path = xstrdup(c->token_file);
	if (token_file_refresh(c->state, &problem) == -1) {
		error_set(error, "in-cluster: %s", problem);
		free(problem);
		kube_config_free(c);
		return -1;
	}
	ca = xasprintf("%s/ca.crt", sa_dir);
	if (access(ca, R_OK) == 0)
		c->ca_file = ca;
	else
		free(ca);
	if (pod_namespace != NULL && pod_namespace[0] != '\0') {
		c->namespace = xstrdup(pod_namespace);
	} else {
		char *path = xasprintf("%s/namespace", sa_dir);
		buf_init(&ns);
		if (file_read_all(path, "namespace file", KUBE_CONFIG_FILE_MAX, &ns, NULL,
		    NULL) == 0) {
			c->namespace = string_trim(ns.data != NULL ? ns.data : "", ns.len);
			if (c->namespace[0] == '\0') {
				free(c->namespace);
				c->namespace = NULL;
			}
		}
		buf_free(&ns);
		free(path);
	}
	c->origin = xstrdup("in-cluster");
	*out = c;
	return 0;
}

/* Says whether path names something that exists. */
static int
path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Loads the files of a $KUBECONFIG list; *none is set when no file of it exists, *empty
 * when those that exist hold no configuration. */
static int
resolve_kubeconfig_env(const char *list, const char *context, struct kube_config **out,
    int *none, int *empty, char **error)
{
	char *copy = xstrdup(list), *save = NULL;
	const char **paths = xcalloc(strlen(list) / 2 + 2, sizeof *paths);
	size_t n = 0;
	int exists = 0, r = 0;

	for (char *p = strtok_r(copy, ":", &save); p != NULL; p = strtok_r(NULL, ":", &save)) {
		paths[n++] = p;
		exists |= path_exists(p);
	}
	*none = !exists;
	*empty = 0;
	if (exists)
		r = files_load(paths, n, context, out, empty, error);
	free(paths);
	free(copy);
	return r;
}

int
kube_config_resolve(const char *kubeconfig_flag, const char *context, const char *master,
    struct kube_config **out, char **error)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	const char *service_host = getenv("KUBERNETES_SERVICE_HOST");
	int in_cluster = service_host != NULL && service_host[0] != '\0';
	int have_master = master != NULL && master[0] != '\0';
	struct kube_config *c = NULL;
	char *home_config = NULL;
	int r = 0, none, empty = 0;

	*out = NULL;
	if (kubeconfig_flag != NULL && kubeconfig_flag[0] != '\0') {
		r = files_load(&kubeconfig_flag, 1, context, &c, &empty, error);
	} else if (env != NULL && env[0] != '\0' &&
	    (r = resolve_kubeconfig_env(env, context, &c, &none, &empty, error)) == 0 &&
	    !none) {
		/* loaded from $KUBECONFIG */
	} else if (r == -1) {
		/* a $KUBECONFIG file is wrong: that error stands */
	} else if (in_cluster) {
		r = kube_config_in_cluster(NULL, &c, error);
	} else if (env != NULL && env[0] != '\0' && !have_master) {
		r = error_set(error, "no configuration found: no file of $KUBECONFIG (%s) exists",
		    env);
	} else if ((env == NULL || env[0] == '\0') && home != NULL && home[0] != '\0' &&
	    path_exists(home_config = xasprintf("%s/.kube/config", home))) {
		r = files_load((const char *const *)&home_config, 1, context, &c, &empty, error);
	} else if (!have_master) {
		r = error_set(error, "no configuration found: give --kubeconfig or --master, set "
		    "$KUBECONFIG, run in a pod, or create ~/.kube/config");
	}
	free(home_config);
	if (r == -1 && empty && (in_cluster || have_master)) {
		/* Files with nothing in them count as none, as for client-go's deferred
		 * loading: in a pod the in-cluster configuration, else --master alone. */
		if (error != NULL) {
			free(*error);
			*error = NULL;
		}
		r = in_cluster ? kube_config_in_cluster(NULL, &c, error) : 0;
	}
	if (r == -1)
		return -1;
	if (have_master) {
		char *server = xstrdup(master);
		const char *problem = server_normalize(server);

		if (problem != NULL) {
			free(server);
			kube_config_free(c);
			return error_set(error, "--master: %s", problem);
		}
		if (c == NULL) {
			c = xcalloc(1, sizeof *c);
			c->state = xcalloc(1, sizeof *c->state);
			c->origin = xstrdup("--master");
		}
		free(c->server);
		c->server = server;
	}
	*out = c;
	return 0;
}

/* Runs the plugin and replaces the cached credential with its answer. */
static int
exec_refresh(struct kube_config *c, char **error)
{
	struct exec_credential_request req = {
		c->exec, c->origin, c->server, c->tls_server_name, c->proxy_url,
		c->insecure_skip_tls_verify, c->ca_pem, c->ca_pem_len, c->ca_file,
	};
	struct kube_exec_credential *cred;

	if (exec_credential_get(&req, &cred, error) != 0)
		return -1;
	kube_exec_credential_free(c->state->exec_cred);
	c->state->exec_cred = cred;
	return 0;
}

/* -------------------------------------------------------------------------------------- */
/* Credentials */

/* Points *pem at a certificate or key: configured data, or a watched file re-read when it
 * changes. */
static int
credentials_pem(const char *data, size_t data_len, const char *file, struct watched_file *wf,
    const char *what, const char **pem, size_t *pem_len, char **error)
{
	int changed;

	if (data != NULL) {
		*pem = data;
		*pem_len = data_len;
		return 0;
	}
	if (file == NULL)
		return 0;
	if (wf->path == NULL)
		wf->path = xstrdup(file);
	if (watched_file_refresh(wf, what, &changed, error) == -1)
		return -1;
	if (text_is_blank(wf->data, wf->len)) {
		wf->loaded = 0;		/* read it again next time */
		return error_set(error, "%s %s: empty", what, wf->path);
	}
	*pem = wf->data;
	*pem_len = wf->len;
	return 0;
}

int
kube_config_credentials(struct kube_config *c, int unauthorized_seen,
    struct kube_credentials *out, char **error)
{
	struct kube_config_state *st;

	memset(out, 0, sizeof *out);
	if (c->state == NULL)
		c->state = xcalloc(1, sizeof *c->state);
	st = c->state;
	if (c->token_file != NULL) {
		char *problem = NULL;

		if (st->token_file.path == NULL)
			st->token_file.path = xstrdup(c->token_file);
		if (token_file_refresh(st, &problem) == -1) {
			/* Keep using the last good token, as client-go does. */
			if (st->file_token == NULL && c->token == NULL) {
				error_set(error, "%s", problem);
				free(problem);
				return -1;
			}
			free(problem);
		}
		out->token = st->file_token != NULL ? st->file_token : c->token;
	} else if (c->token != NULL) {
		out->token = c->token;
	}
	if (credentials_pem(c->cert_pem, c->cert_pem_len, c->cert_file, &st->cert_file,
	    "client certificate", &out->cert_pem, &out->cert_pem_len, error) == -1 ||
	    credentials_pem(c->key_pem, c->key_pem_len, c->key_file, &st->key_file,
	    "client key", &out->key_pem, &out->key_pem_len, error) == -1) {
		memset(out, 0, sizeof *out);
		return -1;
	}
	if (c->exec != NULL && out->token == NULL) {
		struct kube_exec_credential *cred = st->exec_cred;

		if (cred == NULL || unauthorized_seen ||
		    (cred->expiration != 0 && time(NULL) >= cred->expiration)) {
			if (exec_refresh(c, error) == -1) {
				memset(out, 0, sizeof *out);
				return -1;
			}
			cred = st->exec_cred;
		}
		out->token = cred->token;
		if (cred->cert_pem != NULL) {
			out->cert_pem = cred->cert_pem;
			out->cert_pem_len = cred->cert_pem_len;
			out->key_pem = cred->key_pem;
			out->key_pem_len = cred->key_pem_len;
		}
	}
	return 0;
}
