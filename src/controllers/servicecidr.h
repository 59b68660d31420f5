/*
 * servicecidr.h - the Service CIDR controller (kube's service-cidr-controller): each
 * ServiceCIDR's Ready condition, and the networking.k8s.io/service-cidr-finalizer kept
 * while IPAddresses only it holds exist.
 */
#ifndef SQLKCM_CONTROLLERS_SERVICECIDR_H
#define SQLKCM_CONTROLLERS_SERVICECIDR_H

#include "controller.h"

extern const struct controller_type servicecidr_controller_type;

#endif
