/*
 * protection.h - the finalizer controllers that keep a storage object while something
 * uses it: kube's persistentvolume-protection-controller (kubernetes.io/pv-protection on
 * PersistentVolumes) and volumeattributesclass-protection-controller
 * (kubernetes.io/vac-protection on VolumeAttributesClasses).
 */
#ifndef SQLKCM_CONTROLLERS_PROTECTION_H
#define SQLKCM_CONTROLLERS_PROTECTION_H

#include <cjson/cJSON.h>

#include "controller.h"

#define PVPROTECTION_FINALIZER "kubernetes.io/pv-protection"
#define VACPROTECTION_FINALIZER "kubernetes.io/vac-protection"

extern const struct controller_type pvprotection_controller_type;
extern const struct controller_type vacprotection_controller_type;

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

#endif
