/*
 * rootcacertpublisher.h - the root CA certificate publisher (kube's
 * root-ca-certificate-publisher-controller): a kube-root-ca.crt ConfigMap in every
 * namespace.
 */
#ifndef SQLKCM_CONTROLLERS_ROOTCACERTPUBLISHER_H
#define SQLKCM_CONTROLLERS_ROOTCACERTPUBLISHER_H

#include "controller.h"

extern const struct controller_type rootcacertpublisher_controller_type;

#endif
