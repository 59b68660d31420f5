/*
 * clusterroleaggregation.h - the ClusterRole aggregation controller (kube's
 * clusterrole-aggregation-controller): a ClusterRole with an aggregationRule holds the
 * rules of the ClusterRoles its selectors pick.
 */
#ifndef SQLKCM_CONTROLLERS_CLUSTERROLEAGGREGATION_H
#define SQLKCM_CONTROLLERS_CLUSTERROLEAGGREGATION_H

#include "controller.h"

/* The field manager of the controller's server-side applies, as kube's. */
#define CLUSTERROLEAGGREGATION_FIELD_MANAGER "clusterrole-aggregation-controller"

extern const struct controller_type clusterroleaggregation_controller_type;

#endif
