/*
 * pvprotection.h - the PersistentVolume protection controller (kube's
 * persistentvolume-protection-controller): the kubernetes.io/pv-protection finalizer.
 */
#ifndef SQLKCM_CONTROLLERS_PVPROTECTION_H
#define SQLKCM_CONTROLLERS_PVPROTECTION_H

#include <cjson/cJSON.h>

#include "controller.h"

#define PVPROTECTION_FINALIZER "kubernetes.io/pv-protection"

extern const struct controller_type pvprotection_controller_type;

/* What the controller does with a PersistentVolume, as kube's processPV decides. */
enum pvprotection_decision {
	PVPROTECTION_NOTHING,
	PVPROTECTION_ADD,		/* not being deleted, no finalizer: add it */
	PVPROTECTION_REMOVE,		/* being deleted, not Bound: take it off */
	PVPROTECTION_KEEP,		/* being deleted but Bound: kept until unbound */
};

enum pvprotection_decision pvprotection_decide(const cJSON *pv);

#endif
