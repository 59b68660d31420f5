/*
 * serviceaccount.h - the serviceaccount controller (kube's serviceaccount-controller): a
 * default ServiceAccount in every active namespace.
 */
#ifndef SQLKCM_CONTROLLERS_SERVICEACCOUNT_H
#define SQLKCM_CONTROLLERS_SERVICEACCOUNT_H

#include "controller.h"

extern const struct controller_type serviceaccount_controller_type;

#endif
