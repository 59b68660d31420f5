/*
 * serviceaccounttoken.h - the service account token controller (kube's
 * serviceaccount-token-controller): each Secret of type kubernetes.io/service-account-token
 * gets a legacy token signed with --service-account-private-key-file, ca.crt and
 * namespace; one whose ServiceAccount is gone is deleted.
 */
#ifndef SQLKCM_CONTROLLERS_SERVICEACCOUNTTOKEN_H
#define SQLKCM_CONTROLLERS_SERVICEACCOUNTTOKEN_H

#include <stddef.h>

#include "controller.h"

extern const struct controller_type serviceaccounttoken_controller_type;

/* A private key that signs tokens as kube's JWTTokenGenerator: RS256 for an RSA key,
 * ES256, ES384 or ES512 for an ECDSA key on P-256, P-384 or P-521. */
struct serviceaccounttoken_signer;

/* Reads the PEM private key (RSA or EC, PKCS#1, SEC 1 or PKCS#8, not encrypted) in the n
 * bytes at pem; name says where it came from in messages. NULL with *error set. */
struct serviceaccounttoken_signer *serviceaccounttoken_signer_new(const char *pem, size_t n,
    const char *name, char **error);
void serviceaccounttoken_signer_free(struct serviceaccounttoken_signer *s);

/* The JWS algorithm ("RS256", "ES256", ...) and the key id (kube's keyIDFromPublicKey:
 * the unpadded base64url of the SHA-256 of the public key's DER). */
const char *serviceaccounttoken_signer_alg(const struct serviceaccounttoken_signer *s);
const char *serviceaccounttoken_signer_kid(const struct serviceaccounttoken_signer *s);

/* The legacy token of ServiceAccount ns/name (uid) for Secret secret (malloc'd): a compact
 * JWS of kube's legacy claims, issuer kubernetes/serviceaccount. NULL with *error set. */
char *serviceaccounttoken_legacy_token(const struct serviceaccounttoken_signer *s,
    const char *ns, const char *name, const char *uid, const char *secret, char **error);

#endif
