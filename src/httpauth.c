/*
 * httpauth.c - who may read the daemon's HTTPS endpoints, decided by the apiserver.
 *
 * kube-controller-manager serves /metrics and /configz only to those the cluster allows:
 * a bearer token is authenticated with a TokenReview, and the user it names (or
 * system:anonymous, for a request without a token) is authorized with a
 * SubjectAccessReview of the non-resource path and the verb ("get" for GET and HEAD).
 * Some paths are served to anyone (--authorization-always-allow-paths: the health
 * checks), and members of system:masters may do anything without a review. This file
 * does the same, with the same answers: 401 for a token the apiserver does not accept,
 * 403 with "forbidden: User "NAME" cannot get path "/metrics"" for a user without the
 * right, 500 when the apiserver could not be asked.
 *
 * Both reviews are cached for ten seconds (kube-controller-manager's default TTLs), so a
 * scraper costs the apiserver two requests every ten seconds at most. Tokens are never
 * kept: the authentication cache is keyed by the token's SHA-256, and no token reaches a
 * log line. Errors are not cached.
 *
 * A check always completes from a zero-delay timer of its own, never from within
 * httpauth_check or a client callback, so that the caller can finish setting up before
 * its callback runs, whether the caches or the apiserver answered.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <event2/event.h>
#include <openssl/evp.h>

#include "client.h"
#include "httpauth.h"
#include "log.h"
#include "timeutil.h"
#include "util.h"

/* How long a review's answer is kept, in seconds. */
#define HTTPAUTH_TTL 10.0
/* The most answers of each kind kept; the oldest go first. */
#define HTTPAUTH_CACHE_MAX 1024

/* A user, as a TokenReview names it. */
struct httpauth_user {
	char *name;
	char *uid;
	cJSON *groups;		/* array of strings */
	cJSON *extra;		/* object of string arrays, or NULL */
};

/* A cached answer: the user a token names (authentication) or whether a user may use a
 * verb on a path (authorization). */
struct httpauth_entry {
	char *key;
	double expires;
	int yes;			/* authenticated, or allowed */
	struct httpauth_user user;	/* authentication: the user */
	char *reason;			/* authorization: the reviewer's reason, or NULL */
	TAILQ_ENTRY(httpauth_entry) link;
};
TAILQ_HEAD(httpauth_cache, httpauth_entry);

struct httpauth {
	struct client *client;
	struct event_base *base;
	char **paths;
	size_t npaths;
	struct httpauth_cache authn, authz;
	size_t nauthn, nauthz;
	TAILQ_HEAD(, httpauth_check) checks;
};

struct httpauth_check {
	struct httpauth *auth;
	char *token_key;		/* the token's SHA-256, or NULL: anonymous */
	char *verb;
	char *path;
	struct httpauth_user user;
	struct client_request *request;
	struct event *later;		/* completes a check the caches answered */
	enum httpauth_decision decision;
	char *message;
	httpauth_done_cb done;
	void *arg;
	TAILQ_ENTRY(httpauth_check) link;
};

static void httpauth_authorize(struct httpauth_check *c);

/* --- users and caches ---------------------------------------------------------------- */

static void
httpauth_user_clear(struct httpauth_user *u)
{
	free(u->name);
	free(u->uid);
	cJSON_Delete(u->groups);
	cJSON_Delete(u->extra);
	memset(u, 0, sizeof *u);
}

static void
httpauth_user_copy(struct httpauth_user *dst, const struct httpauth_user *src)
{
	dst->name = xstrdup(src->name);
	dst->uid = src->uid != NULL ? xstrdup(src->uid) : NULL;
	dst->groups = cJSON_Duplicate(src->groups, 1);
	dst->extra = src->extra != NULL ? cJSON_Duplicate(src->extra, 1) : NULL;
}

/* Returns whether the user is in group. */
static int
httpauth_user_in(const struct httpauth_user *u, const char *group)
{
	const cJSON *g;

	cJSON_ArrayForEach(g, u->groups) {
		if (cJSON_IsString(g) && strcmp(g->valuestring, group) == 0)
			return 1;
	}
	return 0;
}

static void
httpauth_entry_free(struct httpauth_entry *e)
{
	free(e->key);
	free(e->reason);
	httpauth_user_clear(&e->user);
	free(e);
}

/* Returns the live entry for key, dropping expired ones on the way. */
static struct httpauth_entry *
httpauth_cache_get(struct httpauth_cache *cache, size_t *n, const char *key)
{
	struct httpauth_entry *e, *next;
	double now = time_monotonic();

	for (e = TAILQ_FIRST(cache); e != NULL; e = next) {
		next = TAILQ_NEXT(e, link);
		if (e->expires <= now) {
			TAILQ_REMOVE(cache, e, link);
			httpauth_entry_free(e);
			(*n)--;
		} else if (strcmp(e->key, key) == 0) {
			return e;
		}
	}
	return NULL;
}

/* Adds an entry (taking it), making room by dropping the oldest. */
static void
httpauth_cache_put(struct httpauth_cache *cache, size_t *n, struct httpauth_entry *e)
{
	struct httpauth_entry *old;

	while (*n >= HTTPAUTH_CACHE_MAX && (old = TAILQ_FIRST(cache)) != NULL) {
		TAILQ_REMOVE(cache, old, link);
		httpauth_entry_free(old);
		(*n)--;
	}
	e->expires = time_monotonic() + HTTPAUTH_TTL;
	TAILQ_INSERT_TAIL(cache, e, link);
	(*n)++;
}

static void
httpauth_cache_clear(struct httpauth_cache *cache, size_t *n)
{
	struct httpauth_entry *e;

	while ((e = TAILQ_FIRST(cache)) != NULL) {
		TAILQ_REMOVE(cache, e, link);
		httpauth_entry_free(e);
	}
	*n = 0;
}

/* Returns the token's SHA-256 in hex (malloc'd). */
static char *
httpauth_token_key(const char *token)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	char *hex;

	EVP_Digest(token, strlen(token), md, &len, EVP_sha256(), NULL);
	hex = xmalloc(2 * (size_t)len + 1);
	for (unsigned int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[2 * len] = '\0';
	return hex;
}

/* The authorization cache's key: the user, its groups, the verb and the path. */
static char *
httpauth_authz_key(const struct httpauth_check *c)
{
	char *groups = cJSON_PrintUnformatted(c->user.groups);
	char *extra = c->user.extra != NULL ? cJSON_PrintUnformatted(c->user.extra) : NULL;
	char *key = xasprintf("%s\n%s\n%s\n%s\n%s\n%s", c->user.name,
	    c->user.uid != NULL ? c->user.uid : "", groups != NULL ? groups : "[]",
	    extra != NULL ? extra : "", c->verb, c->path);

	cJSON_free(groups);
	cJSON_free(extra);
	return key;
}

/* --- completing a check -------------------------------------------------------------- */

static void
httpauth_check_free(struct httpauth_check *c)
{
	if (c->request != NULL)
		client_cancel(c->request);
	if (c->later != NULL)
		event_free(c->later);
	TAILQ_REMOVE(&c->auth->checks, c, link);
	free(c->token_key);
	free(c->verb);
	free(c->path);
	free(c->message);
	httpauth_user_clear(&c->user);
	free(c);
}

/* The check's timer: tells the caller and frees the check. */
static void
httpauth_finish(evutil_socket_t fd, short what, void *arg)
{
	struct httpauth_check *c = arg;
	httpauth_done_cb done = c->done;
	void *done_arg = c->arg;
	enum httpauth_decision decision = c->decision;
	char *message = c->message;

	(void)fd;
	(void)what;
	c->message = NULL;
	httpauth_check_free(c);
	done(decision, message, done_arg);
	free(message);
}

/* Decides the check; the caller is told from the loop. */
static void
httpauth_conclude(struct httpauth_check *c, enum httpauth_decision decision,
    const char *message)
{
	c->decision = decision;
	c->message = message != NULL ? xstrdup(message) : NULL;
	c->later = evtimer_new(c->auth->base, httpauth_finish, c);
	event_active(c->later, EV_TIMEOUT, 0);
}

/* The 403 message for the check's user, verb and path, with the reviewer's reason. */
static char *
httpauth_forbidden_message(const struct httpauth_check *c, const char *reason)
{
	return xasprintf("forbidden: User \"%s\" cannot %s path \"%s\"%s%s", c->user.name,
	    c->verb, c->path, reason != NULL && *reason != '\0' ? ": " : "",
	    reason != NULL ? reason : "");
}

/* Decides from an authorization answer. */
static void
httpauth_decide(struct httpauth_check *c, int allowed, const char *reason)
{
	char *message;

	if (allowed) {
		httpauth_conclude(c, HTTPAUTH_ALLOWED, NULL);
		return;
	}
	message = httpauth_forbidden_message(c, reason);
	log_v(4, "http: %s %s: %s", c->verb, c->path, message);
	httpauth_conclude(c, HTTPAUTH_FORBIDDEN, message);
	free(message);
}

/* Returns the review's status object from a response, or NULL with *why set. */
static cJSON *
httpauth_review_status(const struct client_response *resp, const char *kind, cJSON **root,
    char **why)
{
	cJSON *status;

	*root = NULL;
	if (resp->http_code != 201 && resp->http_code != 200) {
		if (resp->http_code == 0)
			*why = xasprintf("%s: %s", kind, resp->transport_error != NULL ?
			    resp->transport_error : "no response");
		else
			*why = xasprintf("%s: the apiserver answered %d", kind, resp->http_code);
		return NULL;
	}
	*root = cJSON_ParseWithLength(resp->body, resp->len);
	status = cJSON_GetObjectItemCaseSensitive(*root, "status");
	if (!cJSON_IsObject(status)) {
		*why = xasprintf("%s: the answer has no status", kind);
		return NULL;
	}
	return status;
}

/* --- authorization ------------------------------------------------------------------- */

/* The SubjectAccessReview answered. */
static void
httpauth_authz_done(const struct client_response *resp, void *arg)
{
	struct httpauth_check *c = arg;
	struct httpauth *a = c->auth;
	cJSON *root, *status, *allowed, *reason;
	struct httpauth_entry *e;
	char *why = NULL, *message;

	c->request = NULL;
	status = httpauth_review_status(resp, "SubjectAccessReview", &root, &why);
	if (status == NULL) {
		log_warning("http: cannot authorize %s %s for %s: %s", c->verb, c->path,
		    c->user.name, why);
		message = xasprintf("internal error: cannot authorize the request: %s", why);
		httpauth_conclude(c, HTTPAUTH_ERROR, message);
		free(message);
		free(why);
		cJSON_Delete(root);
		return;
	}
	allowed = cJSON_GetObjectItemCaseSensitive(status, "allowed");
	reason = cJSON_GetObjectItemCaseSensitive(status, "reason");
	e = xcalloc(1, sizeof *e);
	e->key = httpauth_authz_key(c);
	e->yes = cJSON_IsTrue(allowed);
	e->reason = cJSON_IsString(reason) ? xstrdup(reason->valuestring) : NULL;
	httpauth_cache_put(&a->authz, &a->nauthz, e);
	cJSON_Delete(root);
	httpauth_decide(c, e->yes, e->reason);
}

/* Authorizes the check's user: system:masters, the cache, or a SubjectAccessReview. */
static void
httpauth_authorize(struct httpauth_check *c)
{
	struct httpauth *a = c->auth;
	struct httpauth_entry *e;
	cJSON *review, *spec, *attrs;
	char *key, *body;

	if (httpauth_user_in(&c->user, "system:masters")) {
		httpauth_conclude(c, HTTPAUTH_ALLOWED, NULL);
		return;
	}
	key = httpauth_authz_key(c);
	e = httpauth_cache_get(&a->authz, &a->nauthz, key);
	free(key);
	if (e != NULL) {
		httpauth_decide(c, e->yes, e->reason);
		return;
	}
	review = cJSON_CreateObject();
	cJSON_AddStringToObject(review, "apiVersion", "authorization.k8s.io/v1");
	cJSON_AddStringToObject(review, "kind", "SubjectAccessReview");
	spec = cJSON_AddObjectToObject(review, "spec");
	cJSON_AddStringToObject(spec, "user", c->user.name);
	if (c->user.uid != NULL)
		cJSON_AddStringToObject(spec, "uid", c->user.uid);
	cJSON_AddItemToObject(spec, "groups", cJSON_Duplicate(c->user.groups, 1));
	if (c->user.extra != NULL)
		cJSON_AddItemToObject(spec, "extra", cJSON_Duplicate(c->user.extra, 1));
	attrs = cJSON_AddObjectToObject(spec, "nonResourceAttributes");
	cJSON_AddStringToObject(attrs, "path", c->path);
	cJSON_AddStringToObject(attrs, "verb", c->verb);
	body = cJSON_PrintUnformatted(review);
	cJSON_Delete(review);
	c->request = client_send(a->client, "POST",
	    "/apis/authorization.k8s.io/v1/subjectaccessreviews", "application/json", body,
	    strlen(body), httpauth_authz_done, c);
	cJSON_free(body);
}

/* --- authentication ------------------------------------------------------------------ */

/* Reads a TokenReview's user into u; -1 when it names none. */
static int
httpauth_user_from_review(const cJSON *status, struct httpauth_user *u)
{
	const cJSON *user = cJSON_GetObjectItemCaseSensitive(status, "user");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(user, "username");
	const cJSON *uid = cJSON_GetObjectItemCaseSensitive(user, "uid");
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(user, "groups");
	const cJSON *extra = cJSON_GetObjectItemCaseSensitive(user, "extra");

	if (!cJSON_IsString(name) || *name->valuestring == '\0')
		return -1;
	u->name = xstrdup(name->valuestring);
	u->uid = cJSON_IsString(uid) && *uid->valuestring != '\0' ? xstrdup(uid->valuestring) :
	    NULL;
	u->groups = cJSON_CreateArray();
	cJSON_ArrayForEach(name, groups) {
		if (cJSON_IsString(name))
			cJSON_AddItemToArray(u->groups, cJSON_CreateString(name->valuestring));
	}
	u->extra = cJSON_IsObject(extra) && extra->child != NULL ? cJSON_Duplicate(extra, 1) :
	    NULL;
	return 0;
}

/* Goes on from an authentication answer: authorize the user, or refuse the token. */
static void
httpauth_authenticated(struct httpauth_check *c, const struct httpauth_entry *e)
{
	if (!e->yes) {
		httpauth_conclude(c, HTTPAUTH_UNAUTHORIZED, "Unauthorized");
		return;
	}
	httpauth_user_copy(&c->user, &e->user);
	httpauth_authorize(c);
}

/* The TokenReview answered. */
static void
httpauth_authn_done(const struct client_response *resp, void *arg)
{
	struct httpauth_check *c = arg;
	struct httpauth *a = c->auth;
	cJSON *root, *status;
	struct httpauth_entry *e;
	char *why = NULL;

	c->request = NULL;
	status = httpauth_review_status(resp, "TokenReview", &root, &why);
	if (status == NULL) {
		/* As kube: a token that cannot be checked is not accepted. */
		log_warning("http: cannot authenticate a request to %s: %s", c->path, why);
		free(why);
		cJSON_Delete(root);
		httpauth_conclude(c, HTTPAUTH_UNAUTHORIZED, "Unauthorized");
		return;
	}
	e = xcalloc(1, sizeof *e);
	e->key = xstrdup(c->token_key);
	e->yes = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "authenticated")) &&
	    httpauth_user_from_review(status, &e->user) == 0;
	if (!e->yes)
		log_v(4, "http: a token for %s was not accepted by the apiserver", c->path);
	cJSON_Delete(root);
	httpauth_cache_put(&a->authn, &a->nauthn, e);
	httpauth_authenticated(c, e);
}

/* Returns the token of an "Authorization: Bearer TOKEN" header (malloc'd), or NULL. */
static char *
httpauth_bearer(const char *authorization)
{
	const char *p;
	size_t len;

	if (authorization == NULL)
		return NULL;
	p = authorization + strspn(authorization, " \t");
	if (strncasecmp(p, "bearer", 6) != 0 || (p[6] != ' ' && p[6] != '\t'))
		return NULL;
	p += 6;
	p += strspn(p, " \t");
	len = strcspn(p, " \t\r\n");
	return len > 0 ? xstrndup(p, len) : NULL;
}

struct httpauth_check *
httpauth_check(struct httpauth *a, const char *authorization, const char *method,
    const char *path, httpauth_done_cb done, void *arg)
{
	struct httpauth_check *c = xcalloc(1, sizeof *c);
	struct httpauth_entry *e;
	cJSON *review;
	char *body, *verb, *token;

	c->auth = a;
	c->done = done;
	c->arg = arg;
	c->path = xstrdup(path);
	/* As kube's request info: HEAD reads like GET; other methods by their name. */
	verb = xstrdup(strcmp(method, "HEAD") == 0 ? "get" : method);
	for (char *p = verb; *p != '\0'; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	c->verb = verb;
	TAILQ_INSERT_TAIL(&a->checks, c, link);

	token = httpauth_bearer(authorization);
	if (token == NULL) {
		c->user.name = xstrdup("system:anonymous");
		c->user.groups = cJSON_CreateArray();
		cJSON_AddItemToArray(c->user.groups, cJSON_CreateString("system:unauthenticated"));
		httpauth_authorize(c);
		return c;
	}
	/* The token itself is not kept: only its hash, and the review's body while sent. */
	c->token_key = httpauth_token_key(token);
	e = httpauth_cache_get(&a->authn, &a->nauthn, c->token_key);
	if (e != NULL) {
		explicit_bzero(token, strlen(token));
		free(token);
		httpauth_authenticated(c, e);
		return c;
	}
	review = cJSON_CreateObject();
	cJSON_AddStringToObject(review, "apiVersion", "authentication.k8s.io/v1");
	cJSON_AddStringToObject(review, "kind", "TokenReview");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(review, "spec"), "token", token);
	explicit_bzero(token, strlen(token));
	free(token);
	body = cJSON_PrintUnformatted(review);
	cJSON_Delete(review);
	c->request = client_send(a->client, "POST",
	    "/apis/authentication.k8s.io/v1/tokenreviews", "application/json", body,
	    strlen(body), httpauth_authn_done, c);
	explicit_bzero(body, strlen(body));
	cJSON_free(body);
	return c;
}

void
httpauth_cancel(struct httpauth_check *check)
{
	if (check != NULL)
		httpauth_check_free(check);
}

/* --- the authorizer ------------------------------------------------------------------ */

int
httpauth_always_allowed(const struct httpauth *a, const char *path)
{
	for (size_t i = 0; i < a->npaths; i++) {
		const char *p = a->paths[i];
		size_t len = strlen(p);

		if (len > 0 && p[len - 1] == '*' ? strncmp(path, p, len - 1) == 0 :
		    strcmp(path, p) == 0)
			return 1;
	}
	return 0;
}

struct httpauth *
httpauth_new(struct client *client, const char *always_allow_paths)
{
	struct httpauth *a = xcalloc(1, sizeof *a);
	const char *p = always_allow_paths != NULL ? always_allow_paths : "";

	a->client = client;
	a->base = client_base(client);
	TAILQ_INIT(&a->authn);
	TAILQ_INIT(&a->authz);
	TAILQ_INIT(&a->checks);
	while (*p != '\0') {
		size_t len = strcspn(p, ",");

		if (len > 0) {
			a->paths = xrealloc(a->paths, (a->npaths + 1) * sizeof *a->paths);
			a->paths[a->npaths++] = xstrndup(p, len);
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return a;
}

void
httpauth_free(struct httpauth *a)
{
	struct httpauth_check *c;

	if (a == NULL)
		return;
	while ((c = TAILQ_FIRST(&a->checks)) != NULL)
		httpauth_check_free(c);
	httpauth_cache_clear(&a->authn, &a->nauthn);
	httpauth_cache_clear(&a->authz, &a->nauthz);
	for (size_t i = 0; i < a->npaths; i++)
		free(a->paths[i]);
	free(a->paths);
	free(a);
}
