/*
 * expand.h - the volume expand controller (kube's persistentvolume-expander, client
 * expand-controller): a bound claim asking for more than it has is handed to the resizer
 * of its volume's driver.
 */
#ifndef SQLKCM_CONTROLLERS_EXPAND_H
#define SQLKCM_CONTROLLERS_EXPAND_H

#include <cjson/cJSON.h>

#include "controller.h"

extern const struct controller_type expand_controller_type;

/* The claim annotation naming who resizes it, and the volume annotation kept while a
 * resize that began in kube is not finished. */
#define EXPAND_RESIZER_ANNOTATION "volume.kubernetes.io/storage-resizer"
#define EXPAND_PRE_RESIZE_ANNOTATION "volume.alpha.kubernetes.io/pre-resize-capacity"

/* An in-tree volume source kube migrates to CSI: the volume's spec member, kube's in-tree
 * plugin name and the CSI driver that takes its place. */
struct expand_migrated {
	const char *field;
	const char *plugin;
	const char *driver;
};

/* The migrated source volume (a PersistentVolume) uses, or NULL. */
const struct expand_migrated *expand_migrated_of(const cJSON *volume);

/* Whether claim (a PersistentVolumeClaim) is Bound. */
int expand_claim_bound(const cJSON *claim);

/* Compares claim's spec.resources.requests.storage to its status.capacity.storage (an
 * absent one is zero): <0, 0, >0; -2 when either is no quantity. */
int expand_request_vs_capacity(const cJSON *claim);

#endif
