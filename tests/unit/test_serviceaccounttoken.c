/*
 * test_serviceaccounttoken.c - the service account token controller
 * (controllers/serviceaccounttoken.c) against kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/serviceaccount/tokens_controller.go; the
 * rows are those of its TestTokenCreation (the ServiceAccount default/default of uid
 * 12345, the Secret token-secret-1 of uid 23456, the root CA "CA Data"), each an event,
 * the cache it finds and the requests kube sends; kube's live GET of the Secret before
 * its update is sqlkcm's resourceVersion in the patch, and its GET of a ServiceAccount
 * missing from the cache sqlkcm's confirmation. Its two rows of a deleted Secret whose
 * ServiceAccount still lists it are not ported: sqlkcm leaves the list alone (see the
 * controller's header). Then the signer: key ids and an RS256 token computed by Go's
 * crypto as kube's JWTTokenGenerator does, ES256 and ES384 signatures checked with the
 * public key, keys refused.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "action.h"
#include "controller.h"
#include "controllers/serviceaccounttoken.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "util.h"

/* Keys made for these tests (openssl genrsa 1024, openssl ecparam -genkey), and what Go's
 * crypto computes of them as kube's keyIDFromPublicKey and JWTTokenGenerator do (a
 * small program of Go's standard library: x509.MarshalPKIXPublicKey, sha256,
 * rsa.SignPKCS1v15 over the base64url of encoding/json's header and claims). RS256 is
 * deterministic, so the whole token is known. */
static const char rsa_pem[] =
	"-----BEGIN PRIVATE KEY-----\n"
	"MIICdgIBADANBgkqhkiG9w0BAQEFAASCAmAwggJcAgEAAoGBAMkbHb3tCkNfs9UR\n"
	"48p3FDB9dq1tfjii0HNOyIz2hsjWpm4Lkkeoo4cdX3zXvAmEIv+fkzNSvyWA+L4G\n"
	"Gp3JXHvwITPpzvOfKVxuMOHyG9HRhbr4PngiGIl7xt6dRR12DW7Dt+HJ2ctET2qk\n"
	"oD2mC7pzPwqLDwLoWUsaWeCY+fGnAgMBAAECgYA4Zo500aHrO0/oFdhY1ASphMZf\n"
	"5TFdGOx1Kkc8oXczpF+QxVYFGtqh7i71iFuIH7LhFhPmdPJ+xij8wiF81xhEetD9\n"
	"z294TVlBGrC+tm7wZkuQk0GRNzwulTbt4lOl2UI9GhEfjR4p7QxN1zpNoc79zYwo\n"
	"6Iac0FPWF6taZ+fPwQJBAOVQNL/amvehWBo6ZovQ9V1zH75s+uoMYIw3/IS9TuSt\n"
	"N8Dg/Di+mJ9QK7VpjnjGBdidkunOsPMenYiQsRSX9dkCQQDggotjCs1cdu9E80lv\n"
	"y9o1LGrFruKMmZbWaR9cwdtsxXe+ujzkpsWDplgC/VgKYy7Ui20zuginnMEhq/aW\n"
	"yvN/AkBDFvI351dLd9L06X0zDtGao6H37p6Cd1iP7ZldpJ0+XkdfkPN6DplMkwIW\n"
	"s2lRgG4ZcBCZgzVWC/D/EYYdhlARAkAPkd4ay0f8rp7fWEPyhd+nKmJpPTym5Yvp\n"
	"aLbtFuChxXwNdRr9/HbcL3ARHQK7Da/Uu6qiGLe68AsQy705Le//AkEAmqH1VZ1a\n"
	"qTKomzNP0ErhZg0TMS4HTlr0qkDymXssTppyLMUGkvl5NNaBuhwLMLN/ItguXgte\n"
	"Xu32FYV2stwL6Q==\n"
	"-----END PRIVATE KEY-----\n";
#define RSA_KID "zbwkK_XKtjrD4I5G01jJoQAVReqczCr0nsurS1cUaSo"
static const char rsa_token[] =
	"eyJhbGciOiJSUzI1NiIsImtpZCI6Inpid2tLX1hLdGpyRDRJNUcwMWpKb1FBVlJlcWN6Q3IwbnN1clMx"
	"Y1VhU28ifQ.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50Iiwia3ViZXJuZXRlcy5pby9zZ"
	"XJ2aWNlYWNjb3VudC9uYW1lc3BhY2UiOiJkZWZhdWx0Iiwia3ViZXJuZXRlcy5pby9zZXJ2aWNlYWNjb"
	"3VudC9zZWNyZXQubmFtZSI6InRva2VuLXNlY3JldC0xIiwia3ViZXJuZXRlcy5pby9zZXJ2aWNlYWNjb"
	"3VudC9zZXJ2aWNlLWFjY291bnQubmFtZSI6ImRlZmF1bHQiLCJrdWJlcm5ldGVzLmlvL3NlcnZpY2VhY"
	"2NvdW50L3NlcnZpY2UtYWNjb3VudC51aWQiOiIxMjM0NSIsInN1YiI6InN5c3RlbTpzZXJ2aWNlYWNjb"
	"3VudDpkZWZhdWx0OmRlZmF1bHQifQ.tKadO86_f501zzvxmQpY59TBZWi76--7svss5VNAJIA5fEuN1x"
	"Omng76EB6n2cMjqDoZUhUsCj9jOBdr0qgPVBC8lc_yTcwGslWJZyjQgekcwvlMYOcFlmhOFcfetrWZyP"
	"yTnQsVEhLmfFiJGwH5k_Kln644-etuQmH_z_H5QgY";
static const char ec256_pem[] =
	"-----BEGIN EC PRIVATE KEY-----\n"
	"MHcCAQEEIAbhLv2ouqr22XBClVFnkXIXeMOwE6pm7hxUgG70p0PGoAoGCCqGSM49\n"
	"AwEHoUQDQgAEwV0jndwKGtaR1KxIAEMpM8pOjr491OvQvot5ZmxiL0PwZZGoEG20\n"
	"G5aot9s18fjsNqa8zV8/HZzSp8pI8VF5jA==\n"
	"-----END EC PRIVATE KEY-----\n";
#define EC256_KID "5I2D3En1lsvaPQmhRiWiC7RJ0haJbGwHjHAd_OGHxzo"
static const char ec384_pem[] =
	"-----BEGIN EC PRIVATE KEY-----\n"
	"MIGkAgEBBDB/QIqff+AHqxxi8efGG9ivhQV+WBktTORaylVq9oGgCW1egi3Gf9lx\n"
	"xzUD0d641OagBwYFK4EEACKhZANiAAQAJYLKEUG7vLU8aawultYN9V7zzvSHIh2p\n"
	"9VD+C8q0HID1Cgf64Mq3tr2zpUjWE3coHvGirmtxJUlUZWnLP5wrx/9w6L4cC/Jm\n"
	"83f1/Z+0XIzIv6eZkWx577sN6otNIj8=\n"
	"-----END EC PRIVATE KEY-----\n";
#define EC384_KID "Ckekz9eXZsp4uOJQyWIJZ92oen6u4naYoD1Nr2SDNUw"

#define CA "CA Data"
#define CA_B64 "Q0EgRGF0YQ=="		/* "CA Data" */
#define DEFAULT_B64 "ZGVmYXVsdA=="	/* "default" */

/* The Secret as kube's fixtures make it (serviceAccountTokenSecret and its variants). */
enum secret_kind {
	NO_SECRET,
	FULL,			/* token, ca.crt, namespace */
	NO_TOKEN,
	NO_CA,
	OTHER_CA,		/* ca.crt "mismatched" */
	NO_NAMESPACE,
	CUSTOM_NAMESPACE,	/* namespace "custom" */
	OPAQUE,			/* regular-secret-1, type Opaque */
};

enum case_event {
	SECRET_ADDED,
	SECRET_UPDATED,
	ACCOUNT_ADDED,
	ACCOUNT_UPDATED,
	ACCOUNT_DELETED,
};

struct case_row {
	const char *name;
	int account_cached;	/* the ServiceAccount is in the cache */
	enum secret_kind cached;	/* the Secret in the cache */
	enum case_event event;
	const char *requests;	/* what is sent, "; "-separated */
};

#define DELETED "get serviceaccounts default/default uid=12345 (absent); " \
	"delete secrets default/token-secret-1 uid=23456"
#define POPULATED "update secrets default/token-secret-1 rv=1 data="

static const struct case_row rows[] = {
	{ "new serviceaccount with no secrets", 1, NO_SECRET, ACCOUNT_ADDED, "" },
	{ "new serviceaccount with missing secrets", 1, NO_SECRET, ACCOUNT_ADDED, "" },
	{ "new serviceaccount with non-token secrets", 1, OPAQUE, ACCOUNT_ADDED, "" },
	{ "new serviceaccount with token secrets", 1, NO_SECRET, ACCOUNT_ADDED, "" },
	{ "updated serviceaccount with no secrets", 1, NO_SECRET, ACCOUNT_UPDATED, "" },
	{ "updated serviceaccount with missing secrets", 1, NO_SECRET, ACCOUNT_UPDATED, "" },
	{ "updated serviceaccount with non-token secrets", 1, OPAQUE, ACCOUNT_UPDATED, "" },
	{ "updated serviceaccount with token secrets", 1, NO_SECRET, ACCOUNT_UPDATED, "" },
	{ "deleted serviceaccount with no secrets", 0, NO_SECRET, ACCOUNT_DELETED, "" },
	{ "deleted serviceaccount with missing secrets", 0, NO_SECRET, ACCOUNT_DELETED, "" },
	{ "deleted serviceaccount with non-token secrets", 0, OPAQUE, ACCOUNT_DELETED, "" },
	{ "deleted serviceaccount with token secrets", 0, FULL, ACCOUNT_DELETED, DELETED },
	{ "added secret without serviceaccount", 0, FULL, SECRET_ADDED, DELETED },
	{ "added secret with serviceaccount", 1, FULL, SECRET_ADDED, "" },
	{ "added token secret without token data", 1, NO_TOKEN, SECRET_ADDED,
	    POPULATED "token" },
	{ "added token secret without ca data", 1, NO_CA, SECRET_ADDED, POPULATED "ca.crt" },
	{ "added token secret with mismatched ca data", 1, OTHER_CA, SECRET_ADDED,
	    POPULATED "ca.crt" },
	{ "added token secret without namespace data", 1, NO_NAMESPACE, SECRET_ADDED,
	    POPULATED "namespace" },
	{ "added token secret with custom namespace data", 1, CUSTOM_NAMESPACE, SECRET_ADDED,
	    "" },
	{ "updated secret without serviceaccount", 0, FULL, SECRET_UPDATED, DELETED },
	{ "updated secret with serviceaccount", 1, FULL, SECRET_UPDATED, "" },
	{ "updated token secret without token data", 1, NO_TOKEN, SECRET_UPDATED,
	    POPULATED "token" },
	{ "updated token secret without ca data", 1, NO_CA, SECRET_UPDATED,
	    POPULATED "ca.crt" },
	{ "updated token secret with mismatched ca data", 1, OTHER_CA, SECRET_UPDATED,
	    POPULATED "ca.crt" },
	{ "updated token secret without namespace data", 1, NO_NAMESPACE, SECRET_UPDATED,
	    POPULATED "namespace" },
	{ "updated token secret with custom namespace data", 1, CUSTOM_NAMESPACE,
	    SECRET_UPDATED, "" },
};

static cJSON *
account_new(const char *uid)
{
	struct buf b;
	cJSON *o;

	buf_init(&b);
	buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":"
	    "{\"name\":\"default\",\"namespace\":\"default\",\"uid\":\"%s\","
	    "\"resourceVersion\":\"1\"}}", uid);
	o = fixture_parse(b.data);
	buf_free(&b);
	return o;
}

static cJSON *
secret_new(enum secret_kind kind)
{
	cJSON *o, *data;

	if (kind == OPAQUE)
		return fixture_parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
		    "{\"name\":\"regular-secret-1\",\"namespace\":\"default\",\"uid\":\"23456\","
		    "\"resourceVersion\":\"1\"},\"type\":\"Opaque\","
		    "\"data\":{\"mykey\":\"bXlkYXRh\"}}");
	o = fixture_parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
	    "{\"name\":\"token-secret-1\",\"namespace\":\"default\",\"uid\":\"23456\","
	    "\"resourceVersion\":\"1\",\"annotations\":{"
	    "\"kubernetes.io/service-account.name\":\"default\","
	    "\"kubernetes.io/service-account.uid\":\"12345\"}},"
	    "\"type\":\"kubernetes.io/service-account-token\","
	    "\"data\":{\"token\":\"QUJD\",\"ca.crt\":\"" CA_B64 "\",\"namespace\":\""
	    DEFAULT_B64 "\"}}");
	data = cJSON_GetObjectItemCaseSensitive(o, "data");
	switch (kind) {
	case NO_TOKEN:
		cJSON_DeleteItemFromObjectCaseSensitive(data, "token");
		break;
	case NO_CA:
		cJSON_DeleteItemFromObjectCaseSensitive(data, "ca.crt");
		break;
	case OTHER_CA:
		json_set(data, "ca.crt", cJSON_CreateString("bWlzbWF0Y2hlZA=="));
		break;
	case NO_NAMESPACE:
		cJSON_DeleteItemFromObjectCaseSensitive(data, "namespace");
		break;
	case CUSTOM_NAMESPACE:
		json_set(data, "namespace", cJSON_CreateString("Y3VzdG9t"));
		break;
	default:
		break;
	}
	return o;
}

/* --- the world ------------------------------------------------------------------------- */

struct env {
	struct ctl_world *w;
	struct controller_config config;
	const char *flags[2];		/* the key file, root-ca-file */
	char key_path[64];
	const void *row;
};

/* Writes text to a new temporary file whose name goes in path. */
static void
write_temp(char *path, size_t size, const char *text)
{
	int fd;

	snprintf(path, size, "/tmp/sqlkcm-test-sa-key.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int
env_setup(void **state)
{
	struct env *e = xcalloc(1, sizeof *e);

	e->row = *state;
	write_temp(e->key_path, sizeof e->key_path, rsa_pem);
	e->flags[0] = e->key_path;
	e->config.flags = e->flags;
	e->config.cluster_ca = CA;
	e->w = ctl_world_new(&serviceaccounttoken_controller_type, &e->config);
	*state = e;
	return 0;
}

static int
env_teardown(void **state)
{
	struct env *e = *state;

	ctl_world_free(e->w);
	unlink(e->key_path);
	free(e);
	return 0;
}

/* The string member name of o, whatever dots it holds; "" when none. */
static const char *
member(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* The requests of the last sync, in words; a populate's data checked against kube's. */
static void
describe(const struct sync_result *r, struct buf *b)
{
	for (int i = 0; i < r->nconfirm_absent; i++) {
		const struct action *a = &r->confirm_absent[i];

		buf_printf(b, "%sget %s %s/%s uid=%s (absent)", b->len > 0 ? "; " : "",
		    a->resource->name, a->namespace, a->name, a->uid != NULL ? a->uid : "");
	}
	for (int i = 0; i < r->nwrites; i++) {
		const struct action *a = &r->writes[i];
		const cJSON *data = json_path(a->body, "data"), *item;
		int n = 0;

		if (a->type == ACTION_DELETE) {
			buf_printf(b, "%sdelete %s %s/%s uid=%s", b->len > 0 ? "; " : "",
			    a->resource->name, a->namespace, a->name, a->uid);
			continue;
		}
		/* An update of the Secret read live, with these changes. */
		assert_int_equal(a->type, ACTION_UPDATE);
		assert_true(a->read_modify_write);
		assert_true(a->body_hidden);
		buf_printf(b, "%supdate %s %s/%s rv=%s data=", b->len > 0 ? "; " : "",
		    a->resource->name, a->namespace, a->name,
		    json_string(a->body, "metadata.resourceVersion"));
		cJSON_ArrayForEach(item, data)
			buf_printf(b, "%s%s", n++ > 0 ? "," : "", item->string);
		/* kube's update names the ServiceAccount in the annotations. */
		assert_string_equal(member(json_path(a->body, "metadata.annotations"),
		    "kubernetes.io/service-account.name"), "default");
		assert_string_equal(member(json_path(a->body, "metadata.annotations"),
		    "kubernetes.io/service-account.uid"), "12345");
	}
}

/* The row: the cache, the event, then every key it queued synced. */
static void
case_row(void **state)
{
	struct env *e = *state;
	const struct case_row *row = e->row;
	const struct resource *secrets = resource_find("secrets");
	const struct resource *accounts = resource_find("serviceaccounts");
	struct buf b;

	if (row->account_cached)
		ctl_cache(e->w, accounts, account_new("12345"));
	if (row->cached != NO_SECRET)
		ctl_cache(e->w, secrets, secret_new(row->cached));
	switch (row->event) {
	case SECRET_ADDED:
		ctl_tell(e->w, INFORMER_ADDED, secrets, secret_new(row->cached), NULL);
		break;
	case SECRET_UPDATED:
		ctl_tell(e->w, INFORMER_UPDATED, secrets, secret_new(row->cached),
		    secret_new(row->cached));
		break;
	case ACCOUNT_ADDED:
		ctl_tell(e->w, INFORMER_ADDED, accounts, account_new("12345"), NULL);
		break;
	case ACCOUNT_UPDATED:
		ctl_tell(e->w, INFORMER_UPDATED, accounts, account_new("12345"),
		    account_new("12345"));
		break;
	case ACCOUNT_DELETED:
		ctl_tell(e->w, INFORMER_DELETED, accounts, account_new("12345"), NULL);
		break;
	}
	buf_init(&b);
	for (int i = 0; i < e->w->nkeys; i++) {
		ctl_sync(e->w, e->w->keys[i].key, NOW);
		describe(&e->w->result, &b);
	}
	assert_described(row->name, b.data != NULL ? b.data : "", row->requests);
	buf_free(&b);
}

/* --- sqlkcm's own ------------------------------------------------------------------------ */

/* The token written is kube's, to the byte: the same claims, header and RS256 signature
 * Go's crypto makes; ca.crt is the root CA and namespace the Secret's. */
static void
populated_data_is_kubes(void **state)
{
	struct env *e = *state;
	cJSON *secret = secret_new(NO_TOKEN);
	const cJSON *data;
	unsigned char decoded[2048];
	int n;

	cJSON_DeleteItemFromObjectCaseSensitive(json_child_object(secret, "data"), "ca.crt");
	cJSON_DeleteItemFromObjectCaseSensitive(json_child_object(secret, "data"),
	    "namespace");
	ctl_cache(e->w, resource_find("serviceaccounts"), account_new("12345"));
	ctl_cache(e->w, resource_find("secrets"), secret);
	ctl_sync(e->w, "default/token-secret-1", NOW);
	assert_int_equal(e->w->result.nwrites, 1);
	data = json_path(e->w->result.writes[0].body, "data");
	assert_string_equal(member(data, "ca.crt"), CA_B64);
	assert_string_equal(json_string(data, "namespace"), DEFAULT_B64);
	n = EVP_DecodeBlock(decoded, (const unsigned char *)json_string(data, "token"),
	    (int)strlen(json_string(data, "token")));
	assert_true(n > 0);
	while (n > 0 && decoded[n - 1] == '\0')
		n--;		/* EVP_DecodeBlock counts the padding's zero bytes */
	decoded[n] = '\0';
	assert_string_equal((const char *)decoded, rsa_token);
}

/* plan and replay never print the token: the data's members say "(hidden)". */
static void
printed_data_is_hidden(void **state)
{
	struct env *e = *state;
	struct buf out;

	ctl_cache(e->w, resource_find("serviceaccounts"), account_new("12345"));
	ctl_cache(e->w, resource_find("secrets"), secret_new(NO_TOKEN));
	ctl_sync(e->w, "default/token-secret-1", NOW);
	buf_init(&out);
	sync_result_print(&e->w->result, NULL, &out);
	assert_non_null(strstr(out.data, "\"token\":\"(hidden)\""));
	assert_null(strstr(out.data, "eyJ"));	/* no JWT header, whatever its encoding */
	assert_null(strstr(out.data, "ZXlK"));
	buf_free(&out);
}

/* A ServiceAccount of that name but another uid is not the Secret's: the Secret goes,
 * once a live read finds none of the annotated uid. */
static void
account_of_another_uid(void **state)
{
	struct env *e = *state;
	struct buf b;

	ctl_cache(e->w, resource_find("serviceaccounts"), account_new("99999"));
	ctl_cache(e->w, resource_find("secrets"), secret_new(FULL));
	ctl_sync(e->w, "default/token-secret-1", NOW);
	buf_init(&b);
	describe(&e->w->result, &b);
	assert_described("another uid", b.data, DELETED);
	buf_free(&b);
}

/* A token Secret whose annotations name no ServiceAccount is left alone (kube's lookup
 * of the empty name fails and is retried, never deleting). */
static void
secret_naming_no_account(void **state)
{
	struct env *e = *state;
	cJSON *secret = secret_new(NO_TOKEN);

	cJSON_DeleteItemFromObjectCaseSensitive(json_child_object(json_child_object(secret,
	    "metadata"), "annotations"),
	    "kubernetes.io/service-account.name");
	ctl_cache(e->w, resource_find("secrets"), secret);
	ctl_sync(e->w, "default/token-secret-1", NOW);
	assert_int_equal(e->w->result.nwrites, 0);
	assert_int_equal(e->w->result.nconfirm_absent, 0);
}

/* Without --service-account-private-key-file nothing is done, as kube does not start the
 * controller then. */
static void
no_key_no_writes(void **state)
{
	struct ctl_world *w = ctl_world_new(&serviceaccounttoken_controller_type, NULL);

	(void)state;
	ctl_cache(w, resource_find("secrets"), secret_new(NO_TOKEN));
	ctl_sync(w, "default/token-secret-1", NOW);
	assert_int_equal(w->result.nwrites, 0);
	ctl_cache(w, resource_find("secrets"), secret_new(FULL));
	ctl_sync(w, "default/token-secret-1", NOW);
	assert_int_equal(w->result.nwrites, 0);
	assert_int_equal(w->result.nconfirm_absent, 0);
	ctl_world_free(w);
}

/* list_keys gives every token Secret, not the others. */
static void
list_keys_gives_token_secrets(void **state)
{
	struct env *e = *state;
	char *keys;

	ctl_cache(e->w, resource_find("secrets"), secret_new(FULL));
	ctl_cache(e->w, resource_find("secrets"), secret_new(OPAQUE));
	ctl_list_keys(e->w);
	keys = ctl_keys(e->w);
	assert_string_equal(keys, "default/token-secret-1");
	free(keys);
}

/* --- the signer ------------------------------------------------------------------------ */

/* Checks the JWS token's signature with the public key of pem, as the apiserver does. */
static void
assert_verifies(const char *token, const char *pem, const EVP_MD *md, int ec_size)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	const char *dot = strrchr(token, '.');
	struct buf sig64;
	unsigned char raw[256], *der = NULL;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	ECDSA_SIG *sig = ECDSA_SIG_new();
	int n, der_len;

	assert_non_null(key);
	assert_non_null(dot);
	/* base64url to base64, padded */
	buf_init(&sig64);
	for (const char *p = dot + 1; *p != '\0'; p++)
		buf_printf(&sig64, "%c", *p == '-' ? '+' : *p == '_' ? '/' : *p);
	while (sig64.len % 4 != 0)
		buf_append_str(&sig64, "=");
	/* The decoded length counts the padding's zero bytes: at least r and s. */
	n = EVP_DecodeBlock(raw, (const unsigned char *)sig64.data, (int)sig64.len);
	assert_true(n >= 2 * ec_size && n <= 2 * ec_size + 2);
	assert_int_equal(ECDSA_SIG_set0(sig, BN_bin2bn(raw, ec_size, NULL),
	    BN_bin2bn(raw + ec_size, ec_size, NULL)), 1);
	der_len = i2d_ECDSA_SIG(sig, &der);
	assert_true(der_len > 0);
	assert_int_equal(EVP_DigestVerifyInit(ctx, NULL, md, NULL, key), 1);
	assert_int_equal(EVP_DigestVerify(ctx, der, (size_t)der_len,
	    (const unsigned char *)token, (size_t)(dot - token)), 1);
	OPENSSL_free(der);
	ECDSA_SIG_free(sig);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(key);
	BIO_free(bio);
	buf_free(&sig64);
}

static void
signer_keys_and_algorithms(void **state)
{
	static const struct {
		const char *pem, *alg, *kid;
		const EVP_MD *(*md)(void);
		int ec_size;
	} keys[] = {
		{ rsa_pem, "RS256", RSA_KID, NULL, 0 },
		{ ec256_pem, "ES256", EC256_KID, EVP_sha256, 32 },
		{ ec384_pem, "ES384", EC384_KID, EVP_sha384, 48 },
	};
	(void)state;
	for (size_t i = 0; i < NELEM(keys); i++) {
		char *error = NULL, *token;
		struct serviceaccounttoken_signer *s = serviceaccounttoken_signer_new(
		    keys[i].pem, strlen(keys[i].pem), "key", &error);

		assert_non_null(s);
		assert_string_equal(serviceaccounttoken_signer_alg(s), keys[i].alg);
		assert_string_equal(serviceaccounttoken_signer_kid(s), keys[i].kid);
		token = serviceaccounttoken_legacy_token(s, "default", "default", "12345",
		    "token-secret-1", &error);
		assert_non_null(token);
		if (keys[i].md == NULL)
			assert_string_equal(token, rsa_token);
		else
			assert_verifies(token, keys[i].pem, keys[i].md(), keys[i].ec_size);
		free(token);
		serviceaccounttoken_signer_free(s);
	}
}

/* What is no RSA or ECDSA private key of kube's curves is refused, with a message. */
static void
signer_refuses_other_keys(void **state)
{
	static const char *const bad[] = {
		"",
		"not a key",
		"-----BEGIN PRIVATE KEY-----\nZ2FyYmFnZQ==\n-----END PRIVATE KEY-----\n",
		/* Ed25519 (RFC 8410's example) */
		"-----BEGIN PRIVATE KEY-----\n"
		"MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n"
		"-----END PRIVATE KEY-----\n",
	};
	(void)state;
	for (size_t i = 0; i < NELEM(bad); i++) {
		char *error = NULL;

		assert_null(serviceaccounttoken_signer_new(bad[i], strlen(bad[i]), "key.pem",
		    &error));
		assert_non_null(error);
		assert_non_null(strstr(error, "key"));
		free(error);
	}
}

int
main(void)
{
	struct CMUnitTest tests[NELEM(rows) + 8];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(rows); i++)
		tests[n++] = (struct CMUnitTest){ rows[i].name, case_row, env_setup,
		    env_teardown, (void *)&rows[i] };
	tests[n++] = (struct CMUnitTest){ "the data written is kube's, token to the byte",
	    populated_data_is_kubes, env_setup, env_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "plan and replay print the data hidden",
	    printed_data_is_hidden, env_setup, env_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "a ServiceAccount of another uid: the Secret goes",
	    account_of_another_uid, env_setup, env_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "a Secret naming no ServiceAccount is left alone",
	    secret_naming_no_account, env_setup, env_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "no key: nothing is done", no_key_no_writes, NULL,
	    NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "list_keys gives the token Secrets",
	    list_keys_gives_token_secrets, env_setup, env_teardown, NULL };
	tests[n++] = (struct CMUnitTest){ "the signer: algorithms, key ids, signatures",
	    signer_keys_and_algorithms, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "the signer refuses what is no RSA or ECDSA key",
	    signer_refuses_other_keys, NULL, NULL, NULL };
	return _cmocka_run_group_tests("serviceaccounttoken", tests, n, NULL, NULL);
}
