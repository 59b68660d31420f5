/*
 * lister.h - listers: the cache's objects by key, by selector, by controller owner.
 */
#ifndef SQLKCM_LISTER_H
#define SQLKCM_LISTER_H

#include "resource.h"
#include "selector.h"
#include "store.h"

struct lister;

/* Called for each object found, in namespace/name order, with its uid and JSON body
 * (valid during the call). A non-zero return stops the listing. */
typedef int (*lister_cb)(const char *uid, const char *body, void *arg);

struct lister *lister_new(struct store *s);
void lister_free(struct lister *l);

/* Finds r's object namespace/name: *body is its JSON (malloc'd), or NULL when absent. */
int lister_get(struct lister *l, const struct resource *r, const char *namespace,
    const char *name, char **body, char **error);

/* Lists r's objects in namespace (NULL: every namespace) that sel matches (NULL: all). */
int lister_list(struct lister *l, const struct resource *r, const char *namespace,
    const struct selector *sel, lister_cb cb, void *arg, char **error);

/* Lists r's objects whose controller owner reference names owner_uid. */
int lister_list_controlled_by(struct lister *l, const struct resource *r,
    const char *owner_uid, lister_cb cb, void *arg, char **error);

#endif
