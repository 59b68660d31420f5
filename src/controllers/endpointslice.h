/*
 * endpointslice.h - the EndpointSlice controller (kube's endpointslice-controller): the
 * EndpointSlices of every Service with a selector. Its reconciler's parts are here for
 * the unit tests.
 */
#ifndef SQLKCM_CONTROLLERS_ENDPOINTSLICE_H
#define SQLKCM_CONTROLLERS_ENDPOINTSLICE_H

#include <cjson/cJSON.h>

#include "controller.h"

extern const struct controller_type endpointslice_controller_type;

/* What one sync's reconciler decided for a Service's slices. */
struct endpointslice_plan {
	cJSON **create;			/* new slices (generateName) */
	int ncreate;
	cJSON **update;			/* whole slices to PUT */
	int nupdate;
	cJSON **remove;			/* existing slices to delete (borrowed) */
	int nremove;
	char **skipped;			/* why pods were left out (their node is not cached) */
	int nskipped;
	int added, removed;		/* endpoints new to the slices, and gone from them */
};

/* kube's reconcileByAddressType: the Service's pods (npods; zones[i] the zone of
 * pods[i]'s node or NULL, node_known[i] whether that node is cached) against its existing
 * slices of address_type (borrowed by out->remove), at most max endpoints a slice;
 * appends to out. */
void endpointslice_reconcile(const cJSON *service, const cJSON *const *pods,
    const char *const *zones, const int *node_known, int npods, cJSON **existing,
    int nexisting, const char *address_type, int max, struct endpointslice_plan *out);
void endpointslice_plan_clear(struct endpointslice_plan *p);

/* The address types ("IPv4", "IPv6") of service's IP families: how many, in types. */
int endpointslice_address_types(const cJSON *service, const char *types[2]);

/* The parts: an endpoint of a pod, its ports, a slice's labels, the port key, and
 * kube's comparison of two endpoints of the same identity. */
cJSON *endpointslice_pod_endpoint(const cJSON *service, const cJSON *pod,
    const char *address_type, const char *zone);
cJSON *endpointslice_pod_ports(const cJSON *service, const cJSON *pod);
cJSON *endpointslice_labels(const cJSON *service, const cJSON *slice_labels, int *changed);
char *endpointslice_port_key(const cJSON *ports);
char *endpointslice_endpoint_identity(const cJSON *ep);
int endpointslice_endpoints_equal(const cJSON *a, const cJSON *b);

#endif
