/*
 * controllerref.h - claiming dependents, kube's ControllerRefManager for any owner kind and
 * any dependent resource: which objects an owner keeps, adopts, releases or leaves alone,
 * and the patches and actions that adopt and release them.
 */
#ifndef SQLKCM_CONTROLLERREF_H
#define SQLKCM_CONTROLLERREF_H

#include <cjson/cJSON.h>

#include "action.h"
#include "resource.h"

/* Whose an object is, by its controller reference. */
enum controllerref_owner {
	CONTROLLERREF_ORPHAN,		/* no controller */
	CONTROLLERREF_OURS,		/* the owner's uid */
	CONTROLLERREF_OTHERS,		/* another controller's */
};

/* What the owner does with an object. */
enum controllerref_claim {
	CONTROLLERREF_IGNORE,		/* not ours and not to be taken, or ours and kept out */
	CONTROLLERREF_KEEP,		/* ours, and the selector matches: claimed */
	CONTROLLERREF_ADOPT,		/* an orphan the selector matches: adopt, then claimed */
	CONTROLLERREF_RELEASE,		/* ours, but the selector no longer matches: release */
};

/*
 * Decides as kube's ClaimObject: another controller's object is left alone; ours is kept
 * while the selector matches, else released unless the owner is being deleted; an orphan
 * is adopted when the selector matches, neither it nor the owner is being deleted, and it
 * is not elsewhere (in another namespace than a namespaced owner's).
 */
enum controllerref_claim controllerref_decide(enum controllerref_owner owner, int matches,
    int object_deleting, int owner_deleting, int elsewhere);

/* The controller reference of object (its ownerReference with controller true), or NULL. */
const cJSON *controllerref_of(const cJSON *object);

/* The controller owner reference naming owner (its metadata's name and uid), of
 * owner_resource's apiVersion and kind, with controller and blockOwnerDeletion true. */
cJSON *controllerref_new(const struct resource *owner_resource, const cJSON *owner);

/* The strategic merge patch that makes owner the controller of the object object_uid (the
 * uid in the patch makes it fail if the name now belongs to another object). */
cJSON *controllerref_adopt_patch(const struct resource *owner_resource, const cJSON *owner,
    const char *object_uid);

/* The strategic merge patch that removes the owner reference owner_uid from object_uid. */
cJSON *controllerref_release_patch(const char *owner_uid, const char *object_uid);

/* Adds finalizer to patch, an adopt or release patch of controllerref_*_patch: the
 * adoption adds it, the release removes it (kube's ControllerRefManager given finalizers,
 * as the Job controller gives its tracking finalizer). */
void controllerref_patch_finalizer(cJSON *patch, enum controllerref_claim claim,
    const char *finalizer);

/* Fills a (zeroed) with the adopt or release of resource's object namespace/name (uid),
 * whose patch is body (taken), for the reason given (taken). claim is ADOPT or RELEASE. */
void controllerref_claim_action(struct action *a, enum controllerref_claim claim,
    const struct resource *resource, const char *namespace, const char *name,
    const char *uid, cJSON *body, char *reason);

#endif
