/*
 * httpauth.h - who may read the daemon's HTTPS endpoints: kube-controller-manager's
 * delegated authentication (TokenReview) and authorization (SubjectAccessReview), asked
 * of the apiserver and cached for a few seconds.
 */
#ifndef SQLKCM_HTTPAUTH_H
#define SQLKCM_HTTPAUTH_H

struct client;
struct httpauth;
struct httpauth_check;

/* What a request may do. */
enum httpauth_decision {
	HTTPAUTH_ALLOWED,
	HTTPAUTH_UNAUTHORIZED,	/* 401: a token the apiserver does not accept */
	HTTPAUTH_FORBIDDEN,	/* 403: the user may not do it */
	HTTPAUTH_ERROR,		/* 500: the apiserver could not be asked */
};

/* The paths kube-controller-manager serves to anyone (--authorization-always-allow-paths). */
#define HTTPAUTH_ALWAYS_ALLOW_PATHS "/healthz,/readyz,/livez"

/* Called once with the decision and, unless allowed, a message for the response body. */
typedef void (*httpauth_done_cb)(enum httpauth_decision decision, const char *message,
    void *arg);

/* Creates the authorizer: reviews go through client (borrowed). always_allow_paths is
 * comma-separated; a path ending in '*' is a prefix. Members of system:masters may do
 * anything, as kube-controller-manager's --authorization-always-allow-groups. */
struct httpauth *httpauth_new(struct client *client, const char *always_allow_paths);
/* Frees the authorizer; checks still out are abandoned (no callback). */
void httpauth_free(struct httpauth *a);

/* Returns 1 when path is served to anyone, without a check. */
int httpauth_always_allowed(const struct httpauth *a, const char *path);

/* Decides whether a request with the Authorization header authorization (NULL: none, an
 * anonymous request) may use method on path. done is always called later, from the loop,
 * never from within this call. The handle is valid until done is called or the check is
 * cancelled. */
struct httpauth_check *httpauth_check(struct httpauth *a, const char *authorization,
    const char *method, const char *path, httpauth_done_cb done, void *arg);

/* Abandons a check: done will not be called. */
void httpauth_cancel(struct httpauth_check *check);

#endif
