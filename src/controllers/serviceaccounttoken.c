/*
 * serviceaccounttoken.c - the service account token controller (kube's
 * serviceaccount-token-controller, alias serviceaccount-token).
 *
 * A key is a Secret's namespace/name. A sync reads the view serviceaccount_token_secrets
 * (schema/029-access.sql) for it and leaves alone a Secret that is not of type
 * kubernetes.io/service-account-token or whose annotations name no ServiceAccount. Then,
 * as kube's syncSecret:
 *
 *   - the ServiceAccount the annotations name (and, when the uid annotation is set, of
 *     that uid) is not cached: the Secret is deleted, with its uid as precondition, once a
 *     live read confirms there is no such ServiceAccount (kube reads it live on a cache
 *     miss too);
 *   - it is: what the Secret's data lacks is written, in one update of the Secret read
 *     live (the cache holds Secrets without their data; kube's role may update Secrets,
 *     not patch them), conditional on the cached resourceVersion: a token when there is none (a JWT of kube's legacy
 *     claims, signed with --service-account-private-key-file), namespace when it is
 *     empty, ca.crt when it is not the root CA (--root-ca-file's, else the kubeconfig's
 *     CA; none: left as it is); with the annotations naming the ServiceAccount and its
 *     uid, as kube's update writes them.
 *
 * kube reads the Secret live and skips it when its resourceVersion moved on; here the
 * update carries the cached resourceVersion, which makes the apiserver refuse it then (a Conflict, retried with
 * backoff, where kube drops the key: the change that moved it queues the Secret again).
 * kube also drops a deleted Secret from its ServiceAccount's legacy secrets list; sqlkcm
 * does not (a key is a name, and the deleted Secret's annotations are gone with it).
 *
 * Without --service-account-private-key-file kube does not start the controller; sqlkcm
 * watches and does nothing (logged once). The token never goes to a log: plan and replay
 * print the written data as "(hidden)".
 *
 * Handlers: a service-account-token Secret added, changed or deleted queues itself; a
 * ServiceAccount added, changed or deleted queues the token Secrets that name it (kube
 * queues the ServiceAccount and deletes its tokens when it is gone: the same deletions,
 * each Secret on its own key). list_keys gives every token Secret.
 * --concurrent-serviceaccount-token-syncs (5) sets the workers.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "controllers/serviceaccounttoken.h"
#include "json.h"
#include "log.h"
#include "resource.h"
#include "rootca.h"
#include "util.h"

#define TOKEN_TYPE "kubernetes.io/service-account-token"
#define NAME_ANNOTATION "kubernetes.io/service-account.name"
#define UID_ANNOTATION "kubernetes.io/service-account.uid"
#define LEGACY_ISSUER "kubernetes/serviceaccount"
/* The largest key file read. */
#define KEY_FILE_MAX (1 << 20)

/* --- the signer ------------------------------------------------------------------------ */

struct serviceaccounttoken_signer {
	EVP_PKEY *key;
	const char *alg;
	int ec_size;		/* ECDSA: the bytes of r and of s in a signature; 0: RSA */
	char kid[48];
};

/* OpenSSL's passphrase callback: none, so an encrypted key fails instead of prompting on
 * the terminal. */
static int
no_passphrase(char *buf, int size, int rwflag, void *arg)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)arg;
	return -1;
}

/* Appends the unpadded base64url of n bytes at data to b. */
static void
base64url_append(struct buf *b, const unsigned char *data, size_t n)
{
	static const char digits[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned)data[i] << 16 | (unsigned)data[i + 1] << 8 | data[i + 2];

		buf_printf(b, "%c%c%c%c", digits[v >> 18], digits[v >> 12 & 63],
		    digits[v >> 6 & 63], digits[v & 63]);
	}
	if (n - i == 1) {
		unsigned v = (unsigned)data[i] << 16;

		buf_printf(b, "%c%c", digits[v >> 18], digits[v >> 12 & 63]);
	} else if (n - i == 2) {
		unsigned v = (unsigned)data[i] << 16 | (unsigned)data[i + 1] << 8;

		buf_printf(b, "%c%c%c", digits[v >> 18], digits[v >> 12 & 63],
		    digits[v >> 6 & 63]);
	}
}

struct serviceaccounttoken_signer *
serviceaccounttoken_signer_new(const char *pem, size_t n, const char *name, char **error)
{
	struct serviceaccounttoken_signer *s = xcalloc(1, sizeof *s);
	unsigned char *der = NULL, digest[32];
	char group[64];
	size_t group_len = 0;
	struct buf kid;
	BIO *bio;
	int len;

	bio = BIO_new_mem_buf(pem, (int)n);
	s->key = bio != NULL ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
	BIO_free(bio);
	ERR_clear_error();
	if (s->key == NULL) {
		error_set(error, "error reading key for service account token controller: "
		    "%s holds no private key (PEM, not encrypted)", name);
		goto fail;
	}
	switch (EVP_PKEY_get_base_id(s->key)) {
	case EVP_PKEY_RSA:
		s->alg = "RS256";
		break;
	case EVP_PKEY_EC:
		if (EVP_PKEY_get_utf8_string_param(s->key, OSSL_PKEY_PARAM_GROUP_NAME, group,
		    sizeof group, &group_len) != 1)
			group[0] = '\0';
		if (strcmp(group, "prime256v1") == 0) {
			s->alg = "ES256";
			s->ec_size = 32;
		} else if (strcmp(group, "secp384r1") == 0) {
			s->alg = "ES384";
			s->ec_size = 48;
		} else if (strcmp(group, "secp521r1") == 0) {
			s->alg = "ES512";
			s->ec_size = 66;
		} else {
			error_set(error, "failed to build token generator: could not generate "
			    "signer for ECDSA keypair: unknown private key curve, must be 256, "
			    "384, or 521");
			goto fail;
		}
		break;
	default:
		error_set(error, "failed to build token generator: unknown private key type in "
		    "%s, must be RSA or ECDSA", name);
		goto fail;
	}
	len = i2d_PUBKEY(s->key, &der);
	if (len <= 0 || EVP_Digest(der, (size_t)len, digest, NULL, EVP_sha256(), NULL) != 1) {
		OPENSSL_free(der);
		ERR_clear_error();
		error_set(error, "failed to build token generator: cannot derive the key id");
		goto fail;
	}
	OPENSSL_free(der);
	buf_init(&kid);
	base64url_append(&kid, digest, sizeof digest);
	snprintf(s->kid, sizeof s->kid, "%s", kid.data);
	buf_free(&kid);
	return s;
fail:
	serviceaccounttoken_signer_free(s);
	return NULL;
}

void
serviceaccounttoken_signer_free(struct serviceaccounttoken_signer *s)
{
	if (s == NULL)
		return;
	EVP_PKEY_free(s->key);
	free(s);
}

const char *
serviceaccounttoken_signer_alg(const struct serviceaccounttoken_signer *s)
{
	return s->alg;
}

const char *
serviceaccounttoken_signer_kid(const struct serviceaccounttoken_signer *s)
{
	return s->kid;
}

/* Appends the base64url of the compact JSON of o to b. */
static void
append_json_part(struct buf *b, const cJSON *o)
{
	char *text = cJSON_PrintUnformatted(o);

	base64url_append(b, (const unsigned char *)text, strlen(text));
	cJSON_free(text);
}

/* Signs the n bytes at data into a JWS signature appended to b (base64url); 0 or -1. */
static int
sign_append(const struct serviceaccounttoken_signer *s, const char *data, size_t n,
    struct buf *b)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	const EVP_MD *md = s->ec_size == 48 ? EVP_sha384() : s->ec_size == 66 ?
	    EVP_sha512() : EVP_sha256();
	unsigned char *sig = NULL, raw[2 * 66];
	const unsigned char *p;
	size_t len = 0;
	ECDSA_SIG *ecdsa;
	const BIGNUM *r, *sv;
	int rc = -1;

	if (ctx == NULL || EVP_DigestSignInit(ctx, NULL, md, NULL, s->key) != 1 ||
	    EVP_DigestSign(ctx, NULL, &len, (const unsigned char *)data, n) != 1)
		goto out;
	sig = xmalloc(len);
	if (EVP_DigestSign(ctx, sig, &len, (const unsigned char *)data, n) != 1)
		goto out;
	if (s->ec_size == 0) {
		base64url_append(b, sig, len);
		rc = 0;
		goto out;
	}
	/* JWS wants r and s each of the curve's size, not OpenSSL's DER. */
	p = sig;
	ecdsa = d2i_ECDSA_SIG(NULL, &p, (long)len);
	if (ecdsa == NULL)
		goto out;
	ECDSA_SIG_get0(ecdsa, &r, &sv);
	if (BN_bn2binpad(r, raw, s->ec_size) == s->ec_size &&
	    BN_bn2binpad(sv, raw + s->ec_size, s->ec_size) == s->ec_size) {
		base64url_append(b, raw, 2 * (size_t)s->ec_size);
		rc = 0;
	}
	ECDSA_SIG_free(ecdsa);
out:
	free(sig);
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return rc;
}

char *
serviceaccounttoken_legacy_token(const struct serviceaccounttoken_signer *s,
    const char *ns, const char *name, const char *uid, const char *secret, char **error)
{
	cJSON *header = cJSON_CreateObject(), *claims = cJSON_CreateObject();
	char *sub = xasprintf("system:serviceaccount:%s:%s", ns, name), *input;
	struct buf b;
	int rc;

	/* The members in the order Go's encoding/json writes a map: by name. */
	cJSON_AddStringToObject(header, "alg", s->alg);
	cJSON_AddStringToObject(header, "kid", s->kid);
	cJSON_AddStringToObject(claims, "iss", LEGACY_ISSUER);
	cJSON_AddStringToObject(claims, "kubernetes.io/serviceaccount/namespace", ns);
	cJSON_AddStringToObject(claims, "kubernetes.io/serviceaccount/secret.name", secret);
	cJSON_AddStringToObject(claims, "kubernetes.io/serviceaccount/service-account.name",
	    name);
	cJSON_AddStringToObject(claims, "kubernetes.io/serviceaccount/service-account.uid",
	    uid);
	cJSON_AddStringToObject(claims, "sub", sub);
	free(sub);
	buf_init(&b);
	append_json_part(&b, header);
	buf_append_str(&b, ".");
	append_json_part(&b, claims);
	cJSON_Delete(header);
	cJSON_Delete(claims);
	input = xstrndup(b.data, b.len);
	buf_append_str(&b, ".");
	rc = sign_append(s, input, strlen(input), &b);
	free(input);
	if (rc != 0) {
		buf_free(&b);
		error_set(error, "signing the token failed");
		return NULL;
	}
	return buf_detach(&b);
}

/* --- the controller -------------------------------------------------------------------- */

enum {
	STMT_SECRET,
	STMT_OF_ACCOUNT,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const serviceaccounttoken_sql[STMT_COUNT] = {
	/* Token Secret ?1/?2 as the view judges it. */
	[STMT_SECRET] =
	    "SELECT uid, resource_version, serviceaccount_name, serviceaccount_uid,"
	    " account_uid, needs_token, needs_namespace, ca_crt"
	    " FROM serviceaccount_token_secrets WHERE namespace = ?1 AND name = ?2",
	/* The token Secrets in namespace ?1 that name ServiceAccount ?2. */
	[STMT_OF_ACCOUNT] =
	    "SELECT namespace || '/' || name FROM serviceaccount_token_secrets"
	    " WHERE namespace = ?1 AND serviceaccount_name = ?2 ORDER BY name",
	/* Every token Secret. */
	[STMT_KEYS] =
	    "SELECT namespace || '/' || name FROM serviceaccount_token_secrets"
	    " ORDER BY namespace, name",
};

struct serviceaccounttoken_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *secrets;
	const struct resource *serviceaccounts;
	struct serviceaccounttoken_signer *signer;	/* NULL: no key, nothing done */
	char *ca_base64;	/* the root CA as data holds it; "" when none is known */
};

/* The standard base64 of n bytes (malloc'd). */
static char *
base64_of(const char *data, size_t n)
{
	char *out = xmalloc((n + 2) / 3 * 4 + 1);

	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)data, (int)n);
	return out;
}

/* Returns column col of stmt as text (malloc'd), or NULL. */
static char *
column_dup(sqlite3_stmt *stmt, int col)
{
	const char *text = (const char *)sqlite3_column_text(stmt, col);

	return text != NULL ? xstrdup(text) : NULL;
}

static int
serviceaccounttoken_sync(struct controller *c, const char *key, double now,
    struct sync_result *out, char **error)
{
	struct serviceaccounttoken_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_SECRET]);
	const char *slash = strchr(key, '/');
	char *ns, *rv = NULL, *sa_name = NULL, *sa_uid = NULL, *account_uid = NULL;
	char *ca = NULL, *token, *encoded;
	int rc, needs_token = 0, needs_namespace = 0, needs_ca;
	cJSON *patch, *metadata, *annotations, *data;
	struct action *a;

	(void)now;
	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->secrets;
	if (slash == NULL)
		return 0;			/* no Secret's key */
	ns = xstrndup(key, (size_t)(slash - key));
	sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, slash + 1, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = column_dup(stmt, 0);
		rv = column_dup(stmt, 1);
		sa_name = column_dup(stmt, 2);
		sa_uid = column_dup(stmt, 3);
		account_uid = column_dup(stmt, 4);
		needs_token = sqlite3_column_int(stmt, 5);
		needs_namespace = sqlite3_column_int(stmt, 6);
		ca = column_dup(stmt, 7);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		free(ns);
		return error_set(error, "serviceaccount-token: reading secret %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
	}
	if (rc == SQLITE_DONE || st->signer == NULL || sa_name == NULL || *sa_name == '\0')
		goto done;	/* gone, not a token, no key, or naming no account */
	if (account_uid == NULL) {
		/* kube's "Service account does not exist, deleting token". */
		a = action_append(&out->confirm_absent, &out->nconfirm_absent);
		a->type = ACTION_GET;
		a->verb = "confirm-absent";
		a->resource = st->serviceaccounts;
		a->namespace = xstrdup(ns);
		a->name = xstrdup(sa_name);
		a->uid = sa_uid != NULL && *sa_uid != '\0' ? xstrdup(sa_uid) : NULL;
		a->reason = xstrdup("the service account is not in the cache");
		a = action_append(&out->writes, &out->nwrites);
		a->type = ACTION_DELETE;
		a->verb = "delete";
		a->resource = st->secrets;
		a->namespace = xstrdup(ns);
		a->name = xstrdup(slash + 1);
		a->uid = xstrdup(out->owner_uid);
		a->reason = a->uid != NULL && sa_uid != NULL && *sa_uid != '\0' ?
		    xasprintf("service account %s (uid %s) does not exist", sa_name, sa_uid) :
		    xasprintf("service account %s does not exist", sa_name);
		goto done;
	}
	needs_ca = *st->ca_base64 != '\0' && (ca == NULL || strcmp(ca, st->ca_base64) != 0);
	if (!needs_token && !needs_namespace && !needs_ca)
		goto done;
	patch = cJSON_CreateObject();
	metadata = cJSON_AddObjectToObject(patch, "metadata");
	if (rv != NULL)
		cJSON_AddStringToObject(metadata, "resourceVersion", rv);
	annotations = cJSON_AddObjectToObject(metadata, "annotations");
	cJSON_AddStringToObject(annotations, NAME_ANNOTATION, sa_name);
	cJSON_AddStringToObject(annotations, UID_ANNOTATION, account_uid);
	data = cJSON_AddObjectToObject(patch, "data");
	if (needs_ca)
		cJSON_AddStringToObject(data, "ca.crt", st->ca_base64);
	if (needs_namespace) {
		encoded = base64_of(ns, strlen(ns));
		cJSON_AddStringToObject(data, "namespace", encoded);
		free(encoded);
	}
	if (needs_token) {
		token = serviceaccounttoken_legacy_token(st->signer, ns, sa_name, account_uid,
		    slash + 1, error);
		if (token == NULL) {
			cJSON_Delete(patch);
			rc = -1;
			goto done;
		}
		encoded = base64_of(token, strlen(token));
		OPENSSL_cleanse(token, strlen(token));
		free(token);
		cJSON_AddStringToObject(data, "token", encoded);
		OPENSSL_cleanse(encoded, strlen(encoded));
		free(encoded);
	}
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_UPDATE;
	a->read_modify_write = 1;
	a->body_hidden = 1;
	a->verb = "populate";
	a->resource = st->secrets;
	a->namespace = xstrdup(ns);
	a->name = xstrdup(slash + 1);
	a->uid = xstrdup(out->owner_uid);
	a->body = patch;
	a->reason = xasprintf("missing:%s%s%s", needs_token ? " token" : "",
	    needs_namespace ? " namespace" : "", needs_ca ? " ca.crt" : "");
done:
	free(ns);
	free(rv);
	free(sa_name);
	free(sa_uid);
	free(account_uid);
	free(ca);
	return rc == -1 ? -1 : 0;
}

/* --- handlers -------------------------------------------------------------------------- */

static void
serviceaccounttoken_handle_event(struct controller *c, const struct informer_event *ev,
    double now, const struct controller_queue *q)
{
	struct serviceaccounttoken_state *st = c->state;
	const char *ns = json_string(ev->object, "metadata.namespace");
	const char *name = json_string(ev->object, "metadata.name");
	sqlite3_stmt *stmt;
	char *key;

	(void)now;
	if (strcmp(ev->resource->name, "secrets") == 0) {
		if (strcmp(json_string(ev->object, "type"), TOKEN_TYPE) != 0 || *name == '\0')
			return;
		key = xasprintf("%s/%s", ns, name);
		q->add(key, q->arg);
		free(key);
		return;
	}
	if (strcmp(ev->resource->name, "serviceaccounts") != 0)
		return;
	stmt = controller_stmt(st->stmt[STMT_OF_ACCOUNT]);
	sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	while (sqlite3_step(stmt) == SQLITE_ROW)
		q->add((const char *)sqlite3_column_text(stmt, 0), q->arg);
	sqlite3_reset(stmt);
}

static int
serviceaccounttoken_list_keys(struct controller *c,
    void (*cb)(const char *key, void *arg), void *arg, char **error)
{
	struct serviceaccounttoken_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "serviceaccount-token", cb, arg,
	    error);
}

/* --- the type -------------------------------------------------------------------------- */

/* Logs what the controller starts with: in the daemon (which has a metrics registry), as
 * information; plan and replay, which make every controller, stay quiet unless -v 2. */
#define say(c, ...) do {						\
	if ((c)->config->metrics != NULL)				\
		log_info(__VA_ARGS__);					\
	else								\
		log_v(2, __VA_ARGS__);					\
} while (0)

static int
serviceaccounttoken_init(struct controller *c, char **error)
{
	struct serviceaccounttoken_state *st = xcalloc(1, sizeof *st);
	const char *key_file = controller_flag_text(c, "service-account-private-key-file");
	const char *ca_file = controller_flag_text(c, "root-ca-file");
	char *ca = NULL, *why = NULL;
	struct buf key;

	c->state = st;
	st->secrets = resource_find("secrets");
	st->serviceaccounts = resource_find("serviceaccounts");
	st->ca_base64 = xstrdup("");
	if (st->secrets == NULL || st->serviceaccounts == NULL)
		return error_set(error, "serviceaccount-token: secrets and serviceaccounts are "
		    "not known resources");
	if (store_prepare_statements(store_db(c->store), serviceaccounttoken_sql, STMT_COUNT,
	    st->stmt, "serviceaccount-token", error) != 0)
		return -1;
	if (*key_file == '\0') {
		say(c, "serviceaccount-token: no --service-account-private-key-file: the "
		    "controller is disabled, as kube's");
		return 0;
	}
	buf_init(&key);
	if (file_read_all(key_file, "service account private key file", KEY_FILE_MAX, &key,
	    NULL, error) != 0)
		return -1;
	st->signer = serviceaccounttoken_signer_new(key.data != NULL ? key.data : "", key.len,
	    key_file, error);
	/* The key's bytes are not left in freed memory. */
	if (key.data != NULL)
		OPENSSL_cleanse(key.data, key.len);
	buf_free(&key);
	if (st->signer == NULL)
		return -1;
	if (*ca_file != '\0') {
		if (rootca_read_file(ca_file, &ca, &why) != 0) {
			error_set(error, "serviceaccount-token: error parsing root-ca-file at %s: "
			    "%s", ca_file, why);
			free(why);
			return -1;
		}
	} else if (c->config->cluster_ca != NULL) {
		ca = xstrdup(c->config->cluster_ca);
	}
	if (ca != NULL) {
		free(st->ca_base64);
		st->ca_base64 = base64_of(ca, strlen(ca));
		free(ca);
	}
	say(c, "serviceaccount-token: signing legacy tokens with %s (%s, key id %s)%s",
	    key_file, st->signer->alg, st->signer->kid,
	    *st->ca_base64 == '\0' ? "; no root CA known: ca.crt is left as it is" : "");
	return 0;
}

static void
serviceaccounttoken_fini(struct controller *c)
{
	struct serviceaccounttoken_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	serviceaccounttoken_signer_free(st->signer);
	free(st->ca_base64);
	free(st);
	c->state = NULL;
}

static const struct controller_flag serviceaccounttoken_flags[] = {
	{ "service-account-private-key-file", CONTROLLER_FLAG_STRING, "", 0, 0,
	    "the PEM private key (RSA, or ECDSA on P-256, P-384 or P-521) that signs the "
	    "legacy tokens of service account token Secrets (none: the controller is off)" },
	{ "root-ca-file", CONTROLLER_FLAG_STRING, "", 0, 0,
	    "the PEM CA certificates put in each kube-root-ca.crt ConfigMap and each service "
	    "account token Secret's ca.crt (default: the kubeconfig's CA)" },
	{ NULL, CONTROLLER_FLAG_STRING, NULL, 0, 0, NULL },
};

static const char *const serviceaccounttoken_resources[] = { "secrets", "serviceaccounts",
	NULL };

const struct controller_type serviceaccounttoken_controller_type = {
	.name = "serviceaccount-token",
	.resources = serviceaccounttoken_resources,
	.default_workers = 5,
	.workers_flag = "concurrent-serviceaccount-token-syncs",
	.workers_help = "service account token Secrets synced at once",
	.enable_flag = NULL,
	.flags = serviceaccounttoken_flags,
	.event_component = "serviceaccount-token-controller",
	/* kube starts its tokens controller with the root client builder: it keeps
	 * the kubeconfig's identity whatever --use-service-account-credentials says. */
	.client_name = "tokens-controller",
	.client_is_root = 1,
	.recovery = NULL,
	.init = serviceaccounttoken_init,
	.fini = serviceaccounttoken_fini,
	.handle_event = serviceaccounttoken_handle_event,
	.list_keys = serviceaccounttoken_list_keys,
	.sync = serviceaccounttoken_sync,
};
