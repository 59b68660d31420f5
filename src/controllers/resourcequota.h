/*
 * resourcequota.h - the resource quota controller (kube's resourcequota-controller): each
 * ResourceQuota's status.hard and status.used, computed from the cache as kube's quota
 * evaluators compute them.
 */
#ifndef SQLKCM_CONTROLLERS_RESOURCEQUOTA_H
#define SQLKCM_CONTROLLERS_RESOURCEQUOTA_H

#include <cjson/cJSON.h>

#include "controller.h"
#include "quantity.h"

extern const struct controller_type resourcequota_controller_type;

/* A ResourceList: resource names and their quantities, in the order they were set. */
struct quota_entry {
	char *name;
	struct quantity q;
};
struct quota_list {
	struct quota_entry *v;
	int n;
};

void quota_list_clear(struct quota_list *l);
/* The quantity of name in l, or NULL. */
const struct quantity *quota_list_get(const struct quota_list *l, const char *name);
/* Reads a ResourceList object ({"cpu": "100m", ...}) into l (appending); -1 with *error
 * set when a value is no quantity. NULL or a non-object reads as empty. */
int quota_list_read(const cJSON *object, struct quota_list *l, char **error);

/* One requirement of a quota's scopes: a spec.scopes entry (operator Exists) or a
 * spec.scopeSelector.matchExpressions one. */
struct quota_scope {
	const char *scope;		/* "BestEffort", "PriorityClass", ... */
	const char *op;			/* "In", "NotIn", "Exists", "DoesNotExist" */
	const cJSON *values;		/* an array of strings, or NULL */
};

/* Does pod match the requirement s, as kube's pod evaluator decides (a scope it does not
 * know never matches)? 1 or 0; -1 with *error set for a requirement kube refuses (In or
 * NotIn without values, Exists or DoesNotExist with some). */
int quota_pod_matches(const cJSON *pod, const struct quota_scope *s, char **error);
/* The same for a PersistentVolumeClaim (only VolumeAttributesClass ever matches). */
int quota_pvc_matches(const cJSON *pvc, const struct quota_scope *s, char **error);

/* What one object uses, as kube's evaluators count it: a pod at now (Unix seconds: when
 * its deletion's grace ends it no longer counts), a Service, a PersistentVolumeClaim.
 * Appends to out; -1 with *error set for a quantity that does not parse. */
int quota_pod_usage(const cJSON *pod, double now, struct quota_list *out, char **error);
int quota_service_usage(const cJSON *service, struct quota_list *out);
int quota_pvc_usage(const cJSON *pvc, struct quota_list *out, char **error);

#endif
