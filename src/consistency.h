/*
 * consistency.h - the resourceVersions of a controller's own writes, so that an owner is
 * not synced again before the cache shows them (stale-controller mitigation).
 */
#ifndef SQLKCM_CONSISTENCY_H
#define SQLKCM_CONSISTENCY_H

#include <sqlite3.h>

struct consistency;

/* Creates controller's write log over db (the schema's controller_writes table). */
struct consistency *consistency_new(sqlite3 *db, const char *controller, char **error);
void consistency_free(struct consistency *c);

/* Records that a write for owner key (uid owner_uid) to resource returned resource_version;
 * only the newest is kept. */
int consistency_wrote_at(struct consistency *c, const char *key, const char *owner_uid,
    const char *resource, const char *resource_version, char **error);

/* Sets *ready to 1 when every informer key's owner (uid owner_uid) wrote to has reached the
 * written resourceVersion, 0 otherwise; then *behind (if not NULL) names the first resource
 * that is behind (static). Records of an earlier owner with the same key are ignored. An
 * informer with no resourceVersion yet, or a resourceVersion that is not a decimal number,
 * counts as caught up (they are opaque; only the apiserver's numeric ones are ordered). */
int consistency_ready(struct consistency *c, const char *key, const char *owner_uid,
    int *ready, const char **behind, char **error);

/* Sets *own to 1 when the newest write recorded for key to resource returned
 * resource_version: an informer event of that version is the controller's own write
 * coming back (kube's EndpointSlice tracker's "expected generation"), 0 otherwise. */
int consistency_is_own(struct consistency *c, const char *key, const char *resource,
    const char *resource_version, int *own, char **error);
/* Forgets key's records (the owner is gone). */
int consistency_forget(struct consistency *c, const char *key, char **error);

/* Compares two resourceVersions: -1, 0 or 1 when both are decimal numbers without a leading
 * zero, 2 otherwise (kube's CompareResourceVersion error). */
int consistency_compare_rv(const char *a, const char *b);

#endif
