/*
 * ttl.h - the TTL controller (kube's ttl-controller): each node's
 * node.alpha.kubernetes.io/ttl annotation, by the size of the cluster.
 */
#ifndef SQLKCM_CONTROLLERS_TTL_H
#define SQLKCM_CONTROLLERS_TTL_H

#include "controller.h"

extern const struct controller_type ttl_controller_type;

/* The cluster's size as the controller follows it: the nodes counted and the boundary
 * step they put it on (kube's nodeCount and boundaryStep). Zeroed: no node, step 0. */
struct ttl_size {
	int count;
	int step;
};

/* A node was added, or deleted: the count moves, and the step by one at most. */
void ttl_size_node_added(struct ttl_size *s);
void ttl_size_node_deleted(struct ttl_size *s);
/* The TTL, in seconds, the step wants on every node. */
int ttl_size_seconds(const struct ttl_size *s);

#endif
