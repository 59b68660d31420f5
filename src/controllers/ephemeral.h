/*
 * ephemeral.h - the ephemeral volume controller (kube's ephemeral-volume-controller): a
 * claim for each generic ephemeral volume of a pod, named <pod>-<volume>, the pod its
 * controller.
 */
#ifndef SQLKCM_CONTROLLERS_EPHEMERAL_H
#define SQLKCM_CONTROLLERS_EPHEMERAL_H

#include <cjson/cJSON.h>

#include "controller.h"

extern const struct controller_type ephemeral_controller_type;

/* Whether pod has a generic ephemeral volume. */
int ephemeral_has_volume(const cJSON *pod);
/* The claim of pod's ephemeral volume: <pod>-<volume> (malloc'd). */
char *ephemeral_claim_name(const cJSON *pod, const cJSON *volume);
/* kube's VolumeIsForPod: claim is in pod's namespace and pod is its controller. */
int ephemeral_claim_is_for_pod(const cJSON *claim, const cJSON *pod);
/* The claim kube makes for pod's ephemeral volume (a new object): the template's labels,
 * annotations and spec, the pod its controller with blockOwnerDeletion. */
cJSON *ephemeral_claim_new(const cJSON *pod, const cJSON *volume);

#endif
