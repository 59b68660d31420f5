/*
 * podgc.h - the pod garbage collector (kube's pod-garbage-collector controller): it
 * force-deletes terminated pods beyond a threshold, and pods that no kubelet will finish.
 */
#ifndef SQLKCM_CONTROLLERS_PODGC_H
#define SQLKCM_CONTROLLERS_PODGC_H

#include "controller.h"

extern const struct controller_type podgc_controller_type;

#endif
