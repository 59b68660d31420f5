/*
 * garbagecollector.h - the garbage collector (kube's garbagecollector controller) over the
 * cache's owner index.
 */
#ifndef SQLKCM_CONTROLLERS_GARBAGECOLLECTOR_H
#define SQLKCM_CONTROLLERS_GARBAGECOLLECTOR_H

#include "controller.h"

extern const struct controller_type garbagecollector_controller_type;

#endif
