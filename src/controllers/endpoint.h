/*
 * endpoint.h - the Endpoints controller (kube's endpoints-controller): the Endpoints of
 * every Service with a selector. Its parts are here for the unit tests.
 */
#ifndef SQLKCM_CONTROLLERS_ENDPOINT_H
#define SQLKCM_CONTROLLERS_ENDPOINT_H

#include <cjson/cJSON.h>

#include "controller.h"

extern const struct controller_type endpoint_controller_type;

/* The subsets of service's Endpoints for its pods (npods, as cached), repacked. */
cJSON *endpoint_subsets(const cJSON *service, const cJSON *const *pods, int npods);

/* kube's RepackSubsets of subsets (a JSON array; not changed): a new array, in a fixed
 * order and with addresses and ports in their normal form, so that two sets of subsets
 * of the same content repack to equal JSON. */
cJSON *endpoint_repack(const cJSON *subsets);

/* kube's truncateEndpoints at 1000 addresses; 1 when subsets were truncated. */
int endpoint_truncate(cJSON *subsets);

#endif
