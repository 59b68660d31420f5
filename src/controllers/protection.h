/*
 * protection.h - the finalizer controllers that keep a storage object while something
 * uses it: kube's persistentvolume-protection-controller (kubernetes.io/pv-protection on
 * PersistentVolumes), volumeattributesclass-protection-controller
 * (kubernetes.io/vac-protection on VolumeAttributesClasses) and
 * persistentvolumeclaim-protection-controller (kubernetes.io/pvc-protection on claims).
 */
#ifndef SQLKCM_CONTROLLERS_PROTECTION_H
#define SQLKCM_CONTROLLERS_PROTECTION_H

#include <cjson/cJSON.h>

#include "controller.h"

#define PVPROTECTION_FINALIZER "kubernetes.io/pv-protection"
#define VACPROTECTION_FINALIZER "kubernetes.io/vac-protection"
#define PVCPROTECTION_FINALIZER "kubernetes.io/pvc-protection"

extern const struct controller_type pvprotection_controller_type;
extern const struct controller_type vacprotection_controller_type;
extern const struct controller_type pvcprotection_controller_type;

/* What the controller does with an object, as kube's processPV and processVAC decide. */
enum protection_decision {
	PROTECTION_NOTHING,
	PROTECTION_ADD,		/* not being deleted, no finalizer: add it */
	PROTECTION_REMOVE,	/* being deleted, not in use: take it off */
	PROTECTION_KEEP,	/* being deleted but in use: kept */
};

/* Whether object is a deletion candidate (being deleted, with finalizer) or needs the
 * finalizer added: what kube's handlers queue. */
int protection_wanted(const cJSON *object, const char *finalizer);
/* The decision for object, in_use saying whether something uses it (read only for a
 * deletion candidate). */
enum protection_decision protection_decide(const cJSON *object, const char *finalizer,
    int in_use);

/* The claim's part of kube's pvc-protection rule: its name and its controller's uid, as
 * pvcprotection_pod_uses reads them (a new object). */
cJSON *pvcprotection_claim_context(const cJSON *claim);
/* Whether pod keeps the claim of context (pvcprotection_claim_context) from going, as
 * kube's podUsesPVCForDeletion: the pod is scheduled, and a volume names the claim, or is
 * a generic ephemeral volume whose claim it is (<pod>-<volume>, the pod its controller)
 * while the pod is not shut down (deleted with a grace period of 0). */
int pvcprotection_pod_uses(const cJSON *pod, const cJSON *context);
/* kube's IsPodTerminated: Failed or Succeeded, or deleted with no container running. */
int pvcprotection_pod_terminated(const cJSON *pod);

#endif
