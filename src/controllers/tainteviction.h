/*
 * tainteviction.h - the taint eviction controller (kube's taint-eviction-controller): pods
 * on a node with NoExecute taints they do not tolerate are deleted, at once or when their
 * tolerationSeconds run out.
 */
#ifndef SQLKCM_CONTROLLERS_TAINTEVICTION_H
#define SQLKCM_CONTROLLERS_TAINTEVICTION_H

#include <cjson/cJSON.h>

#include "controller.h"

extern const struct controller_type tainteviction_controller_type;

/*
 * kube's GetMatchingTolerations and getMinTolerationTime over taints (an array of the
 * node's NoExecute taints) and tolerations (the pod's spec.tolerations; NULL: none): 0
 * when a taint is tolerated by none; else 1 with *seconds how long the pod may stay: the
 * least tolerationSeconds of the tolerations that matched first (0 at most for one of 0
 * or less), or -1 when none of them has one (forever). No taint: 1 and 0.
 */
int tainteviction_tolerated(const cJSON *taints, const cJSON *tolerations, double *seconds);

#endif
