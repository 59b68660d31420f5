/*
 * controllerref.c - claiming dependents, as kube's ControllerRefManager does, for any owner
 * kind and any dependent resource.
 *
 * A controller works on the objects it controls: those whose controller owner reference
 * names it. Each sync it claims them again from the candidates (its namespace's objects it
 * controls and its orphans; the caller's query finds them on the owner index): it keeps
 * its own that its selector still matches, releases those it no longer matches, adopts
 * the orphans it matches, and leaves the others' alone. An owner being deleted adopts and
 * releases nothing. Adoption and release are patches of the dependent's ownerReferences
 * with the dependent's uid as precondition; before the first adoption of a sync the
 * executor reads the owner live and gives up if it is gone or being deleted
 * (sync_result.recheck_owner), kube's "recheck deletion timestamp" before adopting.
 *
 * The decision is a pure function, so kube's case tables test it as data; the patches are
 * kube's bytes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "controllerref.h"
#include "json.h"
#include "util.h"

enum controllerref_claim
controllerref_decide(enum controllerref_owner owner, int matches, int object_deleting,
    int owner_deleting, int elsewhere)
{
	switch (owner) {
	case CONTROLLERREF_OTHERS:
		return CONTROLLERREF_IGNORE;
	case CONTROLLERREF_OURS:
		if (matches)
			return CONTROLLERREF_KEEP;
		return owner_deleting ? CONTROLLERREF_IGNORE : CONTROLLERREF_RELEASE;
	case CONTROLLERREF_ORPHAN:
		break;
	}
	if (owner_deleting || !matches || object_deleting || elsewhere)
		return CONTROLLERREF_IGNORE;
	return CONTROLLERREF_ADOPT;
}

/* Copies member name of from (if any) into to. */
static void
copy_member(cJSON *to, const cJSON *from, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, name);

	if (v != NULL)
		cJSON_AddItemToObject(to, name, cJSON_Duplicate(v, 1));
}

const cJSON *
controllerref_of(const cJSON *object)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, json_path(object, "metadata.ownerReferences")) {
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")))
			return ref;
	}
	return NULL;
}

cJSON *
controllerref_new(const struct resource *owner_resource, const cJSON *owner)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(owner, "metadata");
	cJSON *ref = cJSON_CreateObject();

	cJSON_AddStringToObject(ref, "apiVersion", owner_resource->api_version);
	cJSON_AddStringToObject(ref, "kind", owner_resource->kind);
	copy_member(ref, meta, "name");
	copy_member(ref, meta, "uid");
	cJSON_AddTrueToObject(ref, "controller");
	cJSON_AddTrueToObject(ref, "blockOwnerDeletion");
	return ref;
}

cJSON *
controllerref_adopt_patch(const struct resource *owner_resource, const cJSON *owner,
    const char *object_uid)
{
	cJSON *patch = cJSON_CreateObject();
	cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
	cJSON *refs = cJSON_AddArrayToObject(meta, "ownerReferences");

	cJSON_AddItemToArray(refs, controllerref_new(owner_resource, owner));
	cJSON_AddStringToObject(meta, "uid", object_uid);
	return patch;
}

cJSON *
controllerref_release_patch(const char *owner_uid, const char *object_uid)
{
	cJSON *patch = cJSON_CreateObject();
	cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
	cJSON *refs, *ref = cJSON_CreateObject();

	cJSON_AddStringToObject(meta, "uid", object_uid);
	refs = cJSON_AddArrayToObject(meta, "ownerReferences");
	cJSON_AddStringToObject(ref, "$patch", "delete");
	cJSON_AddStringToObject(ref, "uid", owner_uid);
	cJSON_AddItemToArray(refs, ref);
	return patch;
}

void
controllerref_patch_finalizer(cJSON *patch, enum controllerref_claim claim,
    const char *finalizer)
{
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(patch, "metadata");
	cJSON *list = cJSON_AddArrayToObject(meta, claim == CONTROLLERREF_ADOPT ? "finalizers" :
	    "$deleteFromPrimitiveList/finalizers");

	cJSON_AddItemToArray(list, cJSON_CreateString(finalizer));
}

void
controllerref_claim_action(struct action *a, enum controllerref_claim claim,
    const struct resource *resource, const char *namespace, const char *name,
    const char *uid, cJSON *body, char *reason)
{
	a->type = ACTION_PATCH;
	a->verb = claim == CONTROLLERREF_ADOPT ? "adopt" : "release";
	a->resource = resource;
	a->namespace = xstrdup(namespace);
	a->name = xstrdup(name);
	a->uid = xstrdup(uid);
	a->body = body;
	a->reason = reason;
}
