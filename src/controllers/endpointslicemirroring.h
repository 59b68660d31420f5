/*
 * endpointslicemirroring.h - the EndpointSlice mirroring controller (kube's
 * endpointslice-mirroring-controller): the Endpoints of selector-less Services mirrored
 * into EndpointSlices. Its reconciler is here for the unit tests.
 */
#ifndef SQLKCM_CONTROLLERS_ENDPOINTSLICEMIRRORING_H
#define SQLKCM_CONTROLLERS_ENDPOINTSLICEMIRRORING_H

#include <cjson/cJSON.h>

#include "controller.h"
#include "controllers/endpointslice.h"

extern const struct controller_type endpointslicemirroring_controller_type;

/* 1 when endpoints is mirrored: no skip-mirror label of "true", no leader-election
 * record. */
int endpointslicemirroring_should_mirror(const cJSON *endpoints);

/* kube's mirroring reconcile of endpoints against its existing mirrored slices (borrowed
 * by p->remove), at most max_per_subset addresses a subset; *invalid counts the addresses
 * that are no IP, *skipped those left out (invalid ones included). */
void endpointslicemirroring_reconcile(const cJSON *endpoints, cJSON **existing,
    int nexisting, int max_per_subset, struct endpointslice_plan *p, int *invalid,
    int *skipped);

#endif
