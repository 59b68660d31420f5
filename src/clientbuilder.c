/*
 * clientbuilder.c - each controller's own identity, as kube-controller-manager's dynamic
 * controller client builder gives it with --use-service-account-credentials.
 *
 * An identity is a ServiceAccount of kube-system named as kube's controller asks its
 * client builder for it (replicaset-controller, generic-garbage-collector, ...): the
 * apiserver's bootstrap policy binds each such account to its system:controller:NAME
 * ClusterRole, so each controller may do what kube's may and the audit log names it.
 * Getting a token takes three requests through the root client (the kubeconfig's own
 * user): GET the ServiceAccount; POST it when it is missing (AlreadyExists is fine: a
 * racing manager made it); POST its token subresource, a TokenRequest for
 * CLIENTBUILDER_EXPIRATION_SECONDS. kube's token source checks the ServiceAccount before
 * every token it asks for, and so does this. The answer's expirationTimestamp says the
 * lifetime; the token is renewed at 80 % of it (kube's leeway is 20 %), through the same
 * three steps. A step that fails is logged with the apiserver's message and retried after
 * a backoff (0.5 s, doubling to 30 s), for ever: a controller without its token waits, it
 * never runs under another identity.
 *
 * Clients of an identity (a controller's writes, its events) present its token and none
 * of the kubeconfig's credentials (kube's AnonymousClientConfig); until the first token
 * they hold their requests (client_token_ready lets them go). While a renewal is under
 * way they go on with the current token. A 401 with the token (the account deleted and
 * made again, a key rotated) renews it at once, at most every CLIENTBUILDER_RETRY_MAX.
 *
 * Tokens are secrets: no log line, at any verbosity, holds one, and their memory is
 * cleared before it is freed. Where kube differs: its builder makes the namespace when
 * it is missing; sqlkcm expects kube-system, which the apiserver makes at start.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <event2/event.h>

#include "apistatus.h"
#include "client.h"
#include "clientbuilder.h"
#include "log.h"
#include "timeutil.h"
#include "util.h"

/* Where an identity's getting of a token is. */
enum identity_step {
	STEP_IDLE,		/* nothing in flight: a token is had, or a retry is due */
	STEP_GET_ACCOUNT,
	STEP_CREATE_ACCOUNT,
	STEP_REQUEST_TOKEN,
};

struct identity {
	struct clientbuilder *builder;
	char *name;			/* the ServiceAccount's */
	char *username;			/* system:serviceaccount:NS:NAME, the User-Agent's tail */
	struct client_token_source source;
	char *token;			/* NULL until the first one */
	double issued_at;		/* monotonic seconds the token arrived */
	struct client **clients;
	size_t nclients;
	enum identity_step step;
	struct client_request *request;	/* in flight, or NULL */
	struct event *timer;		/* the renewal, or the retry after a failure */
	double backoff;			/* seconds before the next retry */
	LIST_ENTRY(identity) link;
};

struct clientbuilder {
	struct client *root;
	char *namespace;
	double min_lifetime;		/* CLIENTBUILDER_MIN_LIFETIME unless a test set it */
	double unauthorized_min_age;	/* CLIENTBUILDER_RETRY_MAX unless a test set it */
	LIST_HEAD(, identity) identities;
};

static void identity_step(struct identity *id, enum identity_step step);

/* --- tokens ----------------------------------------------------------------------------- */

/* 80 % of lifetime, which counts as min_lifetime when shorter. */
static double
renew_after(double lifetime, double min_lifetime)
{
	if (!(lifetime >= min_lifetime))
		lifetime = min_lifetime;
	return lifetime - lifetime * CLIENTBUILDER_LEEWAY_PERCENT / 100.0;
}

double
clientbuilder_renew_after(double lifetime)
{
	return renew_after(lifetime, CLIENTBUILDER_MIN_LIFETIME);
}

int
clientbuilder_parse_token(const char *body, size_t len, double now, char **token,
    double *lifetime, char **error)
{
	cJSON *root = cJSON_ParseWithLength(body, len);
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(root, "status");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(status, "token");
	const cJSON *exp = cJSON_GetObjectItemCaseSensitive(status, "expirationTimestamp");
	time_t expires;
	int rc = -1;

	*token = NULL;
	if (root == NULL || !cJSON_IsObject(root))
		error_set(error, "the TokenRequest's answer is not a JSON object");
	else if (!cJSON_IsString(t) || t->valuestring[0] == '\0')
		error_set(error, "the TokenRequest's answer has no status.token");
	else if (strcspn(t->valuestring, "\r\n") != strlen(t->valuestring))
		error_set(error, "the TokenRequest's answer has a token with a line break");
	else if (!cJSON_IsString(exp) || time_parse_rfc3339(exp->valuestring, &expires) != 0)
		error_set(error, "the TokenRequest's answer has no valid "
		    "status.expirationTimestamp");
	else {
		*token = xstrdup(t->valuestring);
		*lifetime = (double)expires - now;
		rc = 0;
	}
	if (t != NULL && cJSON_IsString(t))
		explicit_bzero(t->valuestring, strlen(t->valuestring));
	cJSON_Delete(root);
	return rc;
}

/* Clears and frees the identity's token. */
static void
identity_forget_token(struct identity *id)
{
	if (id->token != NULL) {
		explicit_bzero(id->token, strlen(id->token));
		free(id->token);
		id->token = NULL;
	}
}

/* --- the steps -------------------------------------------------------------------------- */

/* The token the identity's clients present now, or NULL. */
static const char *
identity_token(void *arg)
{
	struct identity *id = arg;

	return id->token;
}

/* Arms the identity's timer for seconds from now. */
static void
identity_schedule(struct identity *id, double seconds)
{
	struct timeval tv;

	if (seconds < 0)
		seconds = 0;
	tv.tv_sec = (time_t)seconds;
	tv.tv_usec = (suseconds_t)((seconds - floor(seconds)) * 1e6);
	evtimer_add(id->timer, &tv);
}

/* A step failed: says why, once, and retries later from the start. */
static void
identity_failed(struct identity *id, const char *what, const struct client_response *resp)
{
	struct api_status st;

	api_status_from_response(resp->http_code, resp->body, resp->len, resp->retry_after,
	    &st);
	log_error("service account %s/%s: cannot %s: %s%s%s%s; retrying in %gs",
	    id->builder->namespace, id->name, what,
	    resp->http_code == 0 && resp->transport_error != NULL ? resp->transport_error :
	    st.message, resp->http_code != 0 ? " (" : "",
	    resp->http_code != 0 ? api_reason_name(st.reason) : "",
	    resp->http_code != 0 ? ")" : "", id->backoff);
	api_status_clear(&st);
	id->step = STEP_IDLE;
	identity_schedule(id, id->backoff);
	id->backoff = fmin(id->backoff * 2, CLIENTBUILDER_RETRY_MAX);
}

/* A token arrived: its clients may go, and its renewal is set. */
static void
identity_got_token(struct identity *id, const struct client_response *resp)
{
	char *token = NULL, *error = NULL;
	double lifetime = 0, renew;

	if (clientbuilder_parse_token(resp->body, resp->len, time_now(), &token, &lifetime,
	    &error) != 0) {
		struct client_response why = { 0, "", 0, NULL, error };

		identity_failed(id, "read its token", &why);
		free(error);
		return;
	}
	identity_forget_token(id);
	id->token = token;
	id->issued_at = time_monotonic();
	id->step = STEP_IDLE;
	id->backoff = CLIENTBUILDER_RETRY_FIRST;
	renew = renew_after(lifetime, id->builder->min_lifetime);
	log_v(2, "service account %s/%s: got a token for %.0fs; renewing it in %.0fs",
	    id->builder->namespace, id->name, lifetime, renew);
	identity_schedule(id, renew);
	for (size_t i = 0; i < id->nclients; i++)
		client_token_ready(id->clients[i]);
}

/* The answer to the identity's step in flight. */
static void
identity_done(const struct client_response *resp, void *arg)
{
	struct identity *id = arg;
	struct api_status st;

	id->request = NULL;
	api_status_from_response(resp->http_code, resp->body, resp->len, resp->retry_after,
	    &st);
	switch (id->step) {
	case STEP_GET_ACCOUNT:
		if (st.reason == API_OK)
			identity_step(id, STEP_REQUEST_TOKEN);
		else if (st.reason == API_NOT_FOUND)
			identity_step(id, STEP_CREATE_ACCOUNT);
		else
			identity_failed(id, "read it", resp);
		break;
	case STEP_CREATE_ACCOUNT:
		if (st.reason == API_OK || st.reason == API_ALREADY_EXISTS) {
			if (st.reason == API_OK)
				log_info("service account %s/%s: created",
				    id->builder->namespace, id->name);
			identity_step(id, STEP_REQUEST_TOKEN);
		} else {
			identity_failed(id, "create it", resp);
		}
		break;
	case STEP_REQUEST_TOKEN:
		if (st.reason == API_OK)
			identity_got_token(id, resp);
		else
			identity_failed(id, "request a token", resp);
		break;
	case STEP_IDLE:
		break;
	}
	api_status_clear(&st);
}

/* Sends the request of step. */
static void
identity_step(struct identity *id, enum identity_step step)
{
	struct clientbuilder *b = id->builder;
	char *path, *body = NULL;
	cJSON *o;

	id->step = step;
	switch (step) {
	case STEP_GET_ACCOUNT:
		path = xasprintf("/api/v1/namespaces/%s/serviceaccounts/%s", b->namespace,
		    id->name);
		id->request = client_send(b->root, "GET", path, NULL, NULL, 0, identity_done, id);
		break;
	case STEP_CREATE_ACCOUNT:
		path = xasprintf("/api/v1/namespaces/%s/serviceaccounts", b->namespace);
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "apiVersion", "v1");
		cJSON_AddStringToObject(o, "kind", "ServiceAccount");
		cJSON *meta = cJSON_AddObjectToObject(o, "metadata");
		cJSON_AddStringToObject(meta, "name", id->name);
		cJSON_AddStringToObject(meta, "namespace", b->namespace);
		body = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
		id->request = client_send(b->root, "POST", path, "application/json", body,
		    strlen(body), identity_done, id);
		break;
	case STEP_REQUEST_TOKEN:
		path = xasprintf("/api/v1/namespaces/%s/serviceaccounts/%s/token", b->namespace,
		    id->name);
		body = xasprintf("{\"apiVersion\":\"authentication.k8s.io/v1\","
		    "\"kind\":\"TokenRequest\",\"spec\":{\"expirationSeconds\":%d}}",
		    CLIENTBUILDER_EXPIRATION_SECONDS);
		id->request = client_send(b->root, "POST", path, "application/json", body,
		    strlen(body), identity_done, id);
		break;
	case STEP_IDLE:
	default:
		return;
	}
	free(body);
	free(path);
}

/* The timer: a renewal or a retry is due. */
static void
identity_timer(evutil_socket_t fd, short what, void *arg)
{
	struct identity *id = arg;

	(void)fd;
	(void)what;
	if (id->step == STEP_IDLE)
		identity_step(id, STEP_GET_ACCOUNT);
}

/* A client of the identity got a 401: the token may be dead; renew it now, unless a
 * renewal is under way or the token is younger than the retry cap. */
static void
identity_unauthorized(void *arg)
{
	struct identity *id = arg;

	if (id->step != STEP_IDLE || id->token == NULL ||
	    time_monotonic() - id->issued_at < id->builder->unauthorized_min_age)
		return;
	log_warning("service account %s/%s: the apiserver refused its token (401); "
	    "requesting another", id->builder->namespace, id->name);
	evtimer_del(id->timer);
	identity_step(id, STEP_GET_ACCOUNT);
}

/* --- the builder ------------------------------------------------------------------------ */

struct clientbuilder *
clientbuilder_new(struct client *root, const char *namespace)
{
	struct clientbuilder *b = xcalloc(1, sizeof *b);

	b->root = root;
	b->namespace = xstrdup(namespace != NULL ? namespace : CLIENTBUILDER_NAMESPACE);
	b->min_lifetime = CLIENTBUILDER_MIN_LIFETIME;
	b->unauthorized_min_age = CLIENTBUILDER_RETRY_MAX;
	LIST_INIT(&b->identities);
	return b;
}

void
clientbuilder_set_timing(struct clientbuilder *b, double min_lifetime,
    double unauthorized_min_age)
{
	b->min_lifetime = min_lifetime;
	b->unauthorized_min_age = unauthorized_min_age;
}

void
clientbuilder_free(struct clientbuilder *b)
{
	struct identity *id;

	if (b == NULL)
		return;
	while ((id = LIST_FIRST(&b->identities)) != NULL) {
		LIST_REMOVE(id, link);
		if (id->request != NULL)
			client_cancel(id->request);
		event_free(id->timer);
		identity_forget_token(id);
		free(id->clients);
		free(id->username);
		free(id->name);
		free(id);
	}
	free(b->namespace);
	free(b);
}

void
clientbuilder_attach(struct clientbuilder *b, const char *name, struct client *c)
{
	struct identity *id;

	LIST_FOREACH(id, &b->identities, link) {
		if (strcmp(id->name, name) == 0)
			break;
	}
	if (id == NULL) {
		id = xcalloc(1, sizeof *id);
		id->builder = b;
		id->name = xstrdup(name);
		id->username = xasprintf("system:serviceaccount:%s:%s", b->namespace, name);
		id->source.token = identity_token;
		id->source.unauthorized = identity_unauthorized;
		id->source.arg = id;
		id->source.user_agent_suffix = id->username;
		id->backoff = CLIENTBUILDER_RETRY_FIRST;
		id->timer = evtimer_new(client_base(b->root), identity_timer, id);
		LIST_INSERT_HEAD(&b->identities, id, link);
		identity_step(id, STEP_GET_ACCOUNT);
	}
	id->clients = xrealloc(id->clients, (id->nclients + 1) * sizeof *id->clients);
	id->clients[id->nclients++] = c;
	client_set_token_source(c, &id->source);
}
