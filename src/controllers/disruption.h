/*
 * disruption.h - the disruption controller (kube's disruption-controller): each
 * PodDisruptionBudget's status, and the clean-up of stale DisruptionTarget pod conditions.
 */
#ifndef SQLKCM_CONTROLLERS_DISRUPTION_H
#define SQLKCM_CONTROLLERS_DISRUPTION_H

#include "controller.h"

extern const struct controller_type disruption_controller_type;

/* The prefix of a key that names a pod whose DisruptionTarget condition may be stale
 * ("pod:namespace/name"); the other keys name PodDisruptionBudgets ("namespace/name"). */
#define DISRUPTION_POD_KEY_PREFIX "pod:"

/* kube's DeletionTimeout: how long a pod stays in a budget's disruptedPods after its
 * eviction was allowed, waiting for its deletion; and stalePodDisruptionTimeout: how long
 * a DisruptionTarget condition may stay True on a pod that is not being deleted. */
#define DISRUPTION_DELETION_TIMEOUT 120.0
#define DISRUPTION_STALE_TIMEOUT 120.0

#endif
