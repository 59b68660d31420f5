/*
 * fuzz_statefulset_names.c - the StatefulSet controller's readers of outside text: a pod
 * name's parent and ordinal (kube's getParentNameAndOrdinal), and a claim's owner
 * references against the retention policy, from arbitrary bytes.
 *
 * The input is a pod name (up to its first NUL); then, when it parses as JSON, it is also
 * a claim whose owners are judged under every policy for a set "web" and that pod. The
 * invariants: an ordinal is -1 or 0..2^31-1; one found is the decimal value of the digits
 * after the dash at the parent's length, which end the name; the owners the policy wants,
 * once set on a claim no other controller holds and whose other references carry neither
 * the set's nor the pod's uid, are up to date. Any broken one aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "controllers/statefulset.h"
#include "json.h"
#include "util.h"

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_statefulset_names: %s\n", what);
	abort();
}

/* 1 when a reference carries the set's or the pod's uid (kube's rules judge such a claim
 * by its uids, whatever the reference names: a case this invariant leaves out). */
static int
foreign_uid(const cJSON *claim)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, json_path(claim, "metadata.ownerReferences")) {
		const char *uid = json_string(ref, "uid");

		if (strcmp(uid, "set-uid") == 0 || strcmp(uid, "pod-uid") == 0)
			return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size), *end;
	size_t parent_len = (size_t)-1;
	long long ordinal = statefulset_ordinal(text, &parent_len);
	cJSON *claim, *set, *pod;

	if (ordinal < -1 || ordinal > 2147483647LL)
		fail("an ordinal out of range");
	if (ordinal >= 0) {
		if (parent_len >= strlen(text) || text[parent_len] != '-')
			fail("no dash at the parent's length");
		if (strtoll(text + parent_len + 1, &end, 10) != ordinal || *end != '\0' ||
		    text[parent_len + 1] < '0' || text[parent_len + 1] > '9')
			fail("the ordinal is not the name's last digits");
	}
	claim = cJSON_Parse(text);
	set = cJSON_Parse("{\"metadata\":{\"name\":\"web\",\"uid\":\"set-uid\"}}");
	pod = cJSON_Parse("{\"metadata\":{\"name\":\"web-1\",\"uid\":\"pod-uid\"}}");
	for (int p = 0; claim != NULL && p < 8; p++) {
		struct statefulset_retention policy = { p & 1, (p >> 1) & 1 };
		int scaled_down = (p >> 2) & 1;
		cJSON *refs = statefulset_claim_owners(claim, set, pod, scaled_down, &policy);
		cJSON *fixed = cJSON_Duplicate(claim, 1);

		(void)statefulset_claim_owner_up_to_date(claim, set, pod, scaled_down, &policy);
		if (cJSON_IsObject(fixed) && !foreign_uid(claim) &&
		    !statefulset_claim_unexpected_controller(claim, set, pod, &policy)) {
			json_set(json_child_object(fixed, "metadata"), "ownerReferences", refs);
			refs = NULL;
			if (!statefulset_claim_owner_up_to_date(fixed, set, pod, scaled_down, &policy))
				fail("the owners the policy wants are not up to date");
		}
		cJSON_Delete(refs);
		cJSON_Delete(fixed);
	}
	cJSON_Delete(claim);
	cJSON_Delete(set);
	cJSON_Delete(pod);
	free(text);
	return 0;
}
