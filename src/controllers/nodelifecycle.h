/*
 * nodelifecycle.h - the node lifecycle controller (kube's node-lifecycle-controller): the
 * NoSchedule taints of a node's conditions and spec, and its beta OS and arch labels.
 */
#ifndef SQLKCM_CONTROLLERS_NODELIFECYCLE_H
#define SQLKCM_CONTROLLERS_NODELIFECYCLE_H

#include "controller.h"

extern const struct controller_type nodelifecycle_controller_type;

#endif
