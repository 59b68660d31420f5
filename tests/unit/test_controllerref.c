/*
 * test_controllerref.c - claiming dependents: kube's ClaimPods cases
 * (controller_ref_manager_test.go) as data over controllerref_decide, and the adopt and
 * release patches for an owner of another kind than the ReplicaSet.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controllerref.h"
#include "resource.h"
#include "util.h"

#define NELEM(a) (sizeof (a) / sizeof (a)[0])

/* One candidate of a case: whose it is, whether the selector matches it, whether it is
 * being deleted, whether it is in another namespace than the owner's; and what the owner
 * must decide. */
struct object_case {
	enum controllerref_owner owner;
	int matches, deleting, elsewhere;
	enum controllerref_claim want;
};

#define O CONTROLLERREF_ORPHAN
#define OURS CONTROLLERREF_OURS
#define OTHERS CONTROLLERREF_OTHERS
#define KEEP CONTROLLERREF_KEEP
#define ADOPT CONTROLLERREF_ADOPT
#define RELEASE CONTROLLERREF_RELEASE
#define IGNORE CONTROLLERREF_IGNORE

/* kube's TestClaimPods: the owner being deleted or not, its candidates, and how many it
 * claims and how many patches it sends. (Its last case, a cluster-scoped owner adopting in
 * any namespace, is the not-elsewhere row of the one before.) */
static const struct claim_case {
	const char *name;
	int owner_deleting;
	struct object_case objects[3];
	int nobjects;
	int claimed, patches;
} claim_cases[] = {
	{ "Claim pods with correct label", 0,
	  { { O, 1, 0, 0, ADOPT }, { O, 0, 0, 0, IGNORE } }, 2, 1, 1 },
	{ "Controller marked for deletion can not claim pods", 1,
	  { { O, 1, 0, 0, IGNORE }, { O, 1, 0, 0, IGNORE } }, 2, 0, 0 },
	{ "Controller marked for deletion can not claim new pods", 1,
	  { { OURS, 1, 0, 0, KEEP }, { O, 1, 0, 0, IGNORE } }, 2, 1, 0 },
	{ "Controller can not claim pods owned by another controller", 0,
	  { { OURS, 1, 0, 0, KEEP }, { OTHERS, 1, 0, 0, IGNORE } }, 2, 1, 0 },
	{ "Controller releases claimed pods when selector doesn't match", 0,
	  { { OURS, 1, 0, 0, KEEP }, { OURS, 0, 0, 0, RELEASE } }, 2, 1, 1 },
	{ "Controller does not claim orphaned pods marked for deletion", 0,
	  { { OURS, 1, 1, 0, KEEP }, { O, 1, 1, 0, IGNORE } }, 2, 1, 0 },
	{ "Controller claims or release pods according to selector with finalizers", 0,
	  { { OURS, 1, 0, 0, KEEP }, { OURS, 0, 0, 0, RELEASE }, { O, 1, 0, 0, ADOPT } }, 3,
	  2, 2 },
	{ "Controller does not claim pods of different namespace", 0,
	  { { O, 1, 0, 0, ADOPT }, { O, 1, 0, 1, IGNORE } }, 2, 1, 1 },
	{ "Cluster scoped controller claims pods of specified namespace", 0,
	  { { O, 1, 0, 0, ADOPT }, { O, 1, 0, 0, ADOPT } }, 2, 2, 2 },
	/* And the release of a controller being deleted: kept out, not released. */
	{ "Controller marked for deletion does not release pods it no longer matches", 1,
	  { { OURS, 0, 0, 0, IGNORE } }, 1, 0, 0 },
};

static void
claims_follow_kubes_claim_pods_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(claim_cases); i++) {
		const struct claim_case *c = &claim_cases[i];
		int claimed = 0, patches = 0;

		for (int j = 0; j < c->nobjects; j++) {
			const struct object_case *o = &c->objects[j];
			enum controllerref_claim got = controllerref_decide(o->owner, o->matches,
			    o->deleting, c->owner_deleting, o->elsewhere);

			if (got != o->want)
				fail_msg("%s: object %d: decided %d, want %d", c->name, j + 1, got,
				    o->want);
			claimed += got == KEEP || got == ADOPT;
			patches += got == ADOPT || got == RELEASE;
		}
		if (claimed != c->claimed || patches != c->patches)
			fail_msg("%s: %d claimed and %d patches, want %d and %d", c->name, claimed,
			    patches, c->claimed, c->patches);
	}
}

/* The patches name the owner by its own resource's apiVersion and kind: a Deployment
 * adopting a ReplicaSet. */
static void
patches_name_the_owners_kind(void **state)
{
	const struct resource *deployments = resource_find("deployments");
	cJSON *owner = cJSON_Parse("{\"metadata\":{\"name\":\"web\",\"namespace\":\"ns\","
	    "\"uid\":\"D-UID\"}}");
	cJSON *patch;
	char *text;
	struct action a;

	(void)state;
	assert_non_null(deployments);
	patch = controllerref_adopt_patch(deployments, owner, "RS-UID");
	text = cJSON_PrintUnformatted(patch);
	assert_string_equal(text, "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":"
	    "\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"D-UID\","
	    "\"controller\":true,\"blockOwnerDeletion\":true}],\"uid\":\"RS-UID\"}}");
	free(text);
	memset(&a, 0, sizeof a);
	controllerref_claim_action(&a, ADOPT, resource_find("replicasets"), "ns", "web-1",
	    "RS-UID", patch, xstrdup("an orphan the selector matches"));
	assert_int_equal(a.type, ACTION_PATCH);
	assert_string_equal(a.verb, "adopt");
	assert_string_equal(a.resource->name, "replicasets");
	assert_string_equal(a.uid, "RS-UID");
	action_clear(&a);

	patch = controllerref_release_patch("D-UID", "RS-UID");
	text = cJSON_PrintUnformatted(patch);
	assert_string_equal(text, "{\"metadata\":{\"uid\":\"RS-UID\",\"ownerReferences\":"
	    "[{\"$patch\":\"delete\",\"uid\":\"D-UID\"}]}}");
	free(text);
	cJSON_Delete(patch);
	cJSON_Delete(owner);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(claims_follow_kubes_claim_pods_cases),
		cmocka_unit_test(patches_name_the_owners_kind),
	};

	return cmocka_run_group_tests_name("controllerref", tests, NULL, NULL);
}
