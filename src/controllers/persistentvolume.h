/*
 * persistentvolume.h - the PersistentVolume binder (kube's persistentvolume-binder-
 * controller): claims bound to volumes, their phases, the hand-over of dynamic
 * provisioning to external provisioners and the reclaim of released volumes.
 */
#ifndef SQLKCM_CONTROLLERS_PERSISTENTVOLUME_H
#define SQLKCM_CONTROLLERS_PERSISTENTVOLUME_H

#include "controller.h"

extern const struct controller_type persistentvolume_controller_type;

/* The activeDeadlineSeconds of a volume's recycler pod (kube's CalculateTimeoutForVolume):
 * increment seconds per whole GiB of its capacity, at least minimum. */
long long persistentvolume_recycler_timeout(long long minimum, long long increment,
    const cJSON *volume);

#endif
