/*
 * statefulset.h - the StatefulSet controller (kube's statefulset-controller): pods named by
 * ordinal, created and deleted in order, each with its own claims, rolled by
 * ControllerRevisions. The rules below are exposed for the unit tests.
 */
#ifndef SQLKCM_CONTROLLERS_STATEFULSET_H
#define SQLKCM_CONTROLLERS_STATEFULSET_H

#include <cjson/cJSON.h>

#include "controller.h"

/* The labels kube's StatefulSet pods carry. */
#define STATEFULSET_POD_NAME_LABEL "statefulset.kubernetes.io/pod-name"
#define STATEFULSET_POD_INDEX_LABEL "apps.kubernetes.io/pod-index"

extern const struct controller_type statefulset_controller_type;

/* kube's getParentNameAndOrdinal: a pod name "<parent>-<digits>" gives the ordinal (and
 * the parent's length in *parent_len); -1 for any other name. */
long long statefulset_ordinal(const char *pod_name, size_t *parent_len);

/* The claim retention policy's two answers (kube's Retain and Delete). */
struct statefulset_retention {
	int when_deleted_delete;
	int when_scaled_delete;
};

/* kube's hasUnexpectedController: the claim has a controller other than the set and the
 * pod (set and pod: objects with metadata name and uid; pod's uid may be absent). */
int statefulset_claim_unexpected_controller(const cJSON *claim, const cJSON *set,
    const cJSON *pod, const struct statefulset_retention *policy);

/* kube's isClaimOwnerUpToDate for claim, of the set and the pod, the pod's ordinal being
 * out of the set's range (scaled_down) or not. 1 when the claim's owners are what the
 * policy wants (or are not the set's to change). */
int statefulset_claim_owner_up_to_date(const cJSON *claim, const cJSON *set,
    const cJSON *pod, int scaled_down, const struct statefulset_retention *policy);

/* kube's updateClaimOwnerRefForSetAndPod: the ownerReferences claim's should become (new
 * array): the set's and the pod's removed, then the set (set, of the statefulsets
 * resource) or the pod (pod) added as controller as the policy says. */
cJSON *statefulset_claim_owners(const cJSON *claim, const cJSON *set, const cJSON *pod,
    int scaled_down, const struct statefulset_retention *policy);

#endif
