/*
 * namespace.h - the namespace controller (kube's namespace controller): empties a deleted
 * namespace of its content, then removes its finalizer kubernetes.
 */
#ifndef SQLKCM_CONTROLLERS_NAMESPACE_H
#define SQLKCM_CONTROLLERS_NAMESPACE_H

#include "controller.h"

extern const struct controller_type namespace_controller_type;

#endif
