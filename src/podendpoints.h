/*
 * podendpoints.h - the endpoints of a pod: whether a pod stands behind a Service, whether
 * it is ready, which addresses of it belong to an IP family, and which port number a
 * Service's port resolves to on it (a named targetPort looked up among its containers'
 * ports). What the Endpoints and EndpointSlice controllers share; they read Services and
 * pods as JSON, as cached.
 */
#ifndef SQLKCM_PODENDPOINTS_H
#define SQLKCM_PODENDPOINTS_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* 1 when service (a v1 Service) wants endpoints from a controller: not of type
 * ExternalName and with a selector of at least one label (the apiserver drops an empty
 * one, so an absent or empty selector is "none", whose endpoints people write). */
int podendpoints_service_selects(const cJSON *service);

/* 1 when service has a cluster IP (not "None", not empty): else it is headless. */
int podendpoints_service_has_cluster_ip(const cJSON *service);

/* 1 when pod should be an endpoint: not terminal (phase Succeeded or Failed), with a pod
 * IP, and not being deleted unless include_terminating. */
int podendpoints_pod_included(const cJSON *pod, int include_terminating);

/* 1 when pod's Ready condition is True. */
int podendpoints_pod_ready(const cJSON *pod);

/* 1 when the endpoint of pod for service carries a hostname: the pod has one and its
 * subdomain is the Service's name, in the Service's namespace. */
int podendpoints_sets_hostname(const cJSON *pod, const cJSON *service);

/* 1 when ip is an IPv6 address (else IPv4 or not an address). */
int podendpoints_is_ipv6(const char *ip);

/* The port that service_port (one of a Service's spec.ports) reaches on pod: its
 * targetPort when a number; when a name, the containerPort of that name and the service
 * port's protocol among the pod's containers, then its sidecars (init containers that
 * restart Always). 0 with *port set when found, -1 when the pod has no such port. */
int podendpoints_find_port(const cJSON *pod, const cJSON *service_port, int *port);

/*
 * The last change trigger time of a Service's endpoints (kube's TriggerTimeTracker, for
 * the endpoints.kubernetes.io/last-change-trigger-time annotation): the tracker remembers,
 * per Service key, the Service's creation time and each pod's Ready condition
 * lastTransitionTime as its last sync saw them. A sync's trigger time is the earliest of
 * those that moved since (the Service's creation time the first time the Service is
 * seen); 0 when none did. Times are whole seconds, as the apiserver writes them.
 */
struct podendpoints_tracker;

struct podendpoints_tracker *podendpoints_tracker_new(void);
void podendpoints_tracker_free(struct podendpoints_tracker *t);

/* The trigger time (Unix seconds; 0: none) of the Service service at key for its pods
 * (every pod its selector matches), remembering what it saw. */
double podendpoints_trigger_time(struct podendpoints_tracker *t, const char *key,
    const cJSON *service, const cJSON *const *pods, int npods);

/* Forgets key's Service (it is gone). */
void podendpoints_tracker_forget(struct podendpoints_tracker *t, const char *key);

/* The annotation's value for a trigger time: RFC 3339 in UTC, as Go's RFC3339Nano writes a
 * whole second. out holds at least 32 bytes. */
void podendpoints_format_time(double t, char *out, size_t size);

/* SQL: the bodies of the pods Service ?2 of namespace ?1 selects, by name: the pods of the
 * view service_pods (schema/022-endpoints.sql) for that Service, found from its selector's
 * first label through the index of object_labels by key and value (schema/030), where the
 * view reads every pod of the namespace. */
#define PODENDPOINTS_SELECTED_PODS_SQL \
	"WITH svc AS (SELECT body FROM cache_objects" \
	"             WHERE resource = 'services' AND namespace = ?1 AND name = ?2" \
	"               AND coalesce(json_extract(body, '$.spec.type'), '') != 'ExternalName'" \
	"               AND json_type(body, '$.spec.selector') = 'object')," \
	"     first AS (SELECT w.key AS key, w.value AS value" \
	"                 FROM svc, json_each(svc.body, '$.spec.selector') w" \
	"                ORDER BY w.key LIMIT 1)" \
	"SELECT p.body FROM first" \
	"  JOIN object_labels l ON l.key = first.key AND l.value = first.value" \
	"  JOIN cache_pods p ON p.id = l.object_id" \
	" WHERE p.namespace = ?1" \
	"   AND NOT EXISTS (SELECT 1 FROM svc, json_each(svc.body, '$.spec.selector') want" \
	"                    WHERE NOT EXISTS (SELECT 1 FROM object_labels m" \
	"                                       WHERE m.object_id = p.id AND m.key = want.key" \
	"                                         AND m.value = want.value))" \
	" ORDER BY p.name"

#endif
