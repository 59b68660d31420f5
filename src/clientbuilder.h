/*
 * clientbuilder.h - each controller's own identity (--use-service-account-credentials):
 * kube's dynamic controller client builder, which makes a client act as the ServiceAccount
 * kube-system/NAME with tokens from the TokenRequest API, renewed before they expire.
 */
#ifndef SQLKCM_CLIENTBUILDER_H
#define SQLKCM_CLIENTBUILDER_H

#include <stddef.h>

struct client;
struct clientbuilder;

/* The namespace of the controllers' ServiceAccounts, as kube's (metav1.NamespaceSystem). */
#define CLIENTBUILDER_NAMESPACE "kube-system"
/* The lifetime each TokenRequest asks for, in seconds (kube's defaultExpirationSeconds). */
#define CLIENTBUILDER_EXPIRATION_SECONDS 3600
/* The part of a token's lifetime left when it is renewed, in percent (kube's
 * defaultLeewayPercent): a token is renewed at 80 % of its life. */
#define CLIENTBUILDER_LEEWAY_PERCENT 20
/* A lifetime shorter than this (a clock skewed from the apiserver's) is taken as this
 * long, in seconds, as kube's token source pins it. */
#define CLIENTBUILDER_MIN_LIFETIME 600.0
/* A failed step is retried after this many seconds, doubling up to the cap. */
#define CLIENTBUILDER_RETRY_FIRST 0.5
#define CLIENTBUILDER_RETRY_MAX 30.0

/*
 * Creates a builder whose ServiceAccounts live in namespace (NULL: kube-system). root is
 * the client of the kubeconfig's own identity (borrowed; it must outlive the builder): it
 * reads and creates the ServiceAccounts and asks for their tokens, as kube's builder does
 * through the root client.
 */
struct clientbuilder *clientbuilder_new(struct client *root, const char *namespace);
/* Frees the builder and every identity's token; its clients must be freed first or go on
 * without a token source no more (free them before, as run does). */
void clientbuilder_free(struct clientbuilder *b);

/*
 * Makes c (borrowed: it must outlive the builder) act as the ServiceAccount name of the
 * builder's namespace: it presents that account's token and nothing of the kubeconfig's
 * credentials, and its requests wait until the first token is had. The first client of a
 * name starts getting it: the ServiceAccount is read, created when missing, and a token
 * requested for it; a step that fails is logged (never the token) and retried with backoff.
 */
void clientbuilder_attach(struct clientbuilder *b, const char *name, struct client *c);

/* Changes the least lifetime a token counts for (CLIENTBUILDER_MIN_LIFETIME) and how old
 * a token must be for a 401 to renew it (CLIENTBUILDER_RETRY_MAX). For tests; before any
 * attach. */
void clientbuilder_set_timing(struct clientbuilder *b, double min_lifetime,
    double unauthorized_min_age);

/* How many seconds after a token with lifetime seconds left was issued it is renewed:
 * 80 % of the lifetime, which counts as CLIENTBUILDER_MIN_LIFETIME when shorter. */
double clientbuilder_renew_after(double lifetime);

/*
 * Reads a TokenRequest the apiserver answered (len bytes of body, maybe hostile): sets
 * *token (malloc'd; the caller clears and frees it) and *lifetime, the seconds from now
 * (Unix seconds) to status.expirationTimestamp. -1 with a message that never holds the
 * body's text when it is not one with a token and a timestamp.
 */
int clientbuilder_parse_token(const char *body, size_t len, double now, char **token,
    double *lifetime, char **error);

#endif
