/*
 * podendpoints.c - the endpoints of a pod (see podendpoints.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "podendpoints.h"
#include "timeutil.h"
#include "util.h"

int
podendpoints_service_selects(const cJSON *service)
{
	const cJSON *selector = json_path(service, "spec.selector");

	if (strcmp(json_string(service, "spec.type"), "ExternalName") == 0)
		return 0;
	return cJSON_IsObject(selector) && selector->child != NULL;
}

int
podendpoints_service_has_cluster_ip(const cJSON *service)
{
	const char *ip = json_string(service, "spec.clusterIP");

	return *ip != '\0' && strcmp(ip, "None") != 0;
}

int
podendpoints_pod_included(const cJSON *pod, int include_terminating)
{
	const char *phase = json_string(pod, "status.phase");
	const cJSON *ips = json_path(pod, "status.podIPs");

	if (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)
		return 0;
	if (*json_string(pod, "status.podIP") == '\0' &&
	    !(cJSON_IsArray(ips) && cJSON_GetArraySize(ips) > 0))
		return 0;
	if (!include_terminating && json_is_set(pod, "metadata.deletionTimestamp"))
		return 0;
	return 1;
}

int
podendpoints_pod_ready(const cJSON *pod)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_path(pod, "status.conditions")) {
		/* The first Ready condition decides, as kube's lookup stops at it. */
		if (strcmp(json_string(c, "type"), "Ready") == 0)
			return strcmp(json_string(c, "status"), "True") == 0;
	}
	return 0;
}

int
podendpoints_sets_hostname(const cJSON *pod, const cJSON *service)
{
	const char *hostname = json_string(pod, "spec.hostname");

	return *hostname != '\0' &&
	    strcmp(json_string(pod, "spec.subdomain"), json_string(service, "metadata.name")) == 0 &&
	    strcmp(json_string(pod, "metadata.namespace"),
	    json_string(service, "metadata.namespace")) == 0;
}

int
podendpoints_is_ipv6(const char *ip)
{
	unsigned char addr[16];

	return ip != NULL && strchr(ip, ':') != NULL && inet_pton(AF_INET6, ip, addr) == 1;
}

/* Looks name (protocol) up among the ports of containers; sidecars_only: only the init
 * containers that restart Always. */
static int
find_named(const cJSON *containers, const char *name, const char *protocol, int sidecars_only,
    int *port)
{
	const cJSON *c, *p;

	cJSON_ArrayForEach(c, containers) {
		if (sidecars_only && strcmp(json_string(c, "restartPolicy"), "Always") != 0)
			continue;
		cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(c, "ports")) {
			const char *pp = json_string(p, "protocol");
			long long n = json_int(p, "containerPort", 0);

			/* The apiserver defaults a port's protocol to TCP. */
			if (*pp == '\0')
				pp = "TCP";
			if (strcmp(json_string(p, "name"), name) == 0 && strcmp(pp, protocol) == 0 &&
			    n > 0 && n <= 65535) {
				*port = (int)n;
				return 0;
			}
		}
	}
	return -1;
}

int
podendpoints_find_port(const cJSON *pod, const cJSON *service_port, int *port)
{
	const cJSON *target = cJSON_GetObjectItemCaseSensitive(service_port, "targetPort");
	const char *protocol = json_string(service_port, "protocol");

	if (*protocol == '\0')
		protocol = "TCP";
	if (target == NULL || cJSON_IsNull(target)) {
		/* Defaulted to the port by the apiserver; kube reads an unset one as 0. */
		*port = 0;
		return 0;
	}
	if (cJSON_IsNumber(target)) {
		double v = target->valuedouble;

		*port = v >= -2147483648.0 && v <= 2147483647.0 ? (int)v : 0;
		return 0;
	}
	if (!cJSON_IsString(target))
		return -1;
	if (find_named(json_path(pod, "spec.containers"), target->valuestring, protocol, 0,
	    port) == 0)
		return 0;
	return find_named(json_path(pod, "spec.initContainers"), target->valuestring, protocol,
	    1, port);
}

/* --- trigger times ------------------------------------------------------------------- */

struct pod_time {
	char *pod;
	double t;
};

struct service_state {
	char *key;
	double service_time;
	struct pod_time *pods;
	int npods;
};

struct podendpoints_tracker {
	struct service_state *v;
	int n;
};

struct podendpoints_tracker *
podendpoints_tracker_new(void)
{
	return xcalloc(1, sizeof(struct podendpoints_tracker));
}

static void
state_clear_pods(struct service_state *s)
{
	for (int i = 0; i < s->npods; i++)
		free(s->pods[i].pod);
	free(s->pods);
	s->pods = NULL;
	s->npods = 0;
}

void
podendpoints_tracker_free(struct podendpoints_tracker *t)
{
	if (t == NULL)
		return;
	for (int i = 0; i < t->n; i++) {
		state_clear_pods(&t->v[i]);
		free(t->v[i].key);
	}
	free(t->v);
	free(t);
}

void
podendpoints_tracker_forget(struct podendpoints_tracker *t, const char *key)
{
	for (int i = 0; i < t->n; i++) {
		if (strcmp(t->v[i].key, key) == 0) {
			state_clear_pods(&t->v[i]);
			free(t->v[i].key);
			t->v[i] = t->v[--t->n];
			return;
		}
	}
}

/* The time at path under o (RFC 3339), 0 when absent or unreadable. */
static double
time_at(const cJSON *o, const char *path)
{
	time_t t;

	if (o == NULL || time_parse_rfc3339(json_string(o, path), &t) != 0)
		return 0;
	return (double)t;
}

/* A pod's trigger time: its Ready condition's lastTransitionTime. */
static double
pod_trigger_time(const cJSON *pod)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_path(pod, "status.conditions")) {
		if (strcmp(json_string(c, "type"), "Ready") == 0)
			return time_at(c, "lastTransitionTime");
	}
	return 0;
}

static double
earliest(double current, double t)
{
	return current == 0 || t < current ? t : current;
}

double
podendpoints_trigger_time(struct podendpoints_tracker *t, const char *key,
    const cJSON *service, const cJSON *const *pods, int npods)
{
	struct service_state *s = NULL;
	struct pod_time *now = xcalloc((size_t)npods + 1, sizeof *now);
	double min = 0, created = time_at(service, "metadata.creationTimestamp");
	int n = 0, known;

	for (int i = 0; i < t->n && s == NULL; i++) {
		if (strcmp(t->v[i].key, key) == 0)
			s = &t->v[i];
	}
	known = s != NULL;
	if (s == NULL) {
		t->v = xrealloc(t->v, ((size_t)t->n + 1) * sizeof *t->v);
		s = &t->v[t->n++];
		memset(s, 0, sizeof *s);
		s->key = xstrdup(key);
	}
	for (int i = 0; i < npods; i++) {
		double pt = pod_trigger_time(pods[i]), last = 0;
		const char *name = json_string(pods[i], "metadata.name");

		if (pt == 0)
			continue;
		for (int k = 0; k < s->npods; k++) {
			if (strcmp(s->pods[k].pod, name) == 0) {
				last = s->pods[k].t;
				break;
			}
		}
		if (pt > last)
			min = earliest(min, pt);
		now[n].pod = xstrdup(name);
		now[n++].t = pt;
	}
	if (created > s->service_time)
		min = earliest(min, created);
	state_clear_pods(s);
	s->pods = now;
	s->npods = n;
	s->service_time = created;
	return known ? min : created;
}

void
podendpoints_format_time(double t, char *out, size_t size)
{
	char text[TIME_RFC3339_SIZE];

	time_format_rfc3339((time_t)t, text);
	snprintf(out, size, "%s", text);
}
