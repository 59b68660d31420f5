/*
 * csrs.h - what the controllers of CertificateSigningRequests share (the cleaner, the
 * signer, the approver): a key is a CSR's name; the handler queues a CSR when it is added
 * or changes; list_keys gives every cached one; a sync starts by reading the CSR.
 *
 * A controller's state starts with a struct csrs, so that csrs_handle_event and
 * csrs_list_keys serve as its type's handle_event and list_keys as they are.
 */
#ifndef SQLKCM_CONTROLLERS_CSRS_H
#define SQLKCM_CONTROLLERS_CSRS_H

#include "controller.h"

struct csrs {
	sqlite3_stmt *read;		/* uid, body [, one number] of CSR ?1 */
	sqlite3_stmt *keys;		/* every cached CSR's name */
	const struct resource *resource;
	const char *who;		/* the controller's name, for messages */
};

/*
 * Prepares s for c: read_sql reads CSR ?1 as uid, body and optionally a third column, a
 * number the controller wants beside them (NULL: uid and body of the cache's row).
 */
int csrs_init(struct csrs *s, struct controller *c, const char *read_sql, char **error);
void csrs_fini(struct csrs *s);

/*
 * Starts out (controller, key, owner resource) and reads CSR key: 1 when it is cached
 * (out->owner and out->owner_uid set, *extra the third column's value if read_sql has
 * one and extra is not NULL), 0 when it is gone (out->forget_expectations set), -1 with
 * *error when the cache cannot be read or holds no JSON.
 */
int csrs_read(struct csrs *s, struct controller *c, const char *key,
    struct sync_result *out, int *extra, char **error);

/* The controller type's handle_event and list_keys (c->state starts with a struct csrs). */
void csrs_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q);
int csrs_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error);

#endif
