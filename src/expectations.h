/*
 * expectations.h - what a controller has asked the apiserver for and not yet seen in its
 * cache, kept in the store so that it survives a restart.
 */
#ifndef SQLKCM_EXPECTATIONS_H
#define SQLKCM_EXPECTATIONS_H

#include <sqlite3.h>

/* How long expectations hold a sync back at most (kube's ExpectationsTimeout). */
#define EXPECTATIONS_TIMEOUT 300.0

struct expectations;

/* Creates the expectations of controller (e.g. "replicaset") over db, which must hold the
 * schema's expectations tables and outlive the result. */
struct expectations *expectations_new(sqlite3 *db, const char *controller, char **error);
void expectations_free(struct expectations *e);

/* Sets *satisfied to 1 when key may create and delete again at now (Unix seconds): it has
 * no expectations, they are fulfilled (adds <= 0 and deletes <= 0), or they are older than
 * EXPECTATIONS_TIMEOUT; 0 otherwise. */
int expectations_satisfied(struct expectations *e, const char *key, double now,
    int *satisfied, char **error);

/* Replaces key's expectations with adds creations and the deletions of the n pods in
 * pod_keys ("namespace/name"; a key given twice counts once), set at now. */
int expectations_expect(struct expectations *e, const char *key, int adds,
    const char *const *pod_keys, int n, double now, char **error);

/* A pod created for key was seen (or a creation will never happen): lowers adds by one. */
int expectations_creation_observed(struct expectations *e, const char *key, char **error);

/* The pod pod_key was seen deleted (or its deletion failed): lowers deletes by one if key
 * was waiting for that pod. */
int expectations_deletion_observed(struct expectations *e, const char *key,
    const char *pod_key, char **error);

/* Forgets key's expectations (the owner is gone). */
int expectations_delete(struct expectations *e, const char *key, char **error);

/* Reads key's counters, for tests and messages; *found is 0 when there is no row. */
int expectations_get(struct expectations *e, const char *key, int *found, long long *adds,
    long long *deletes, double *set_at, char **error);

#endif
