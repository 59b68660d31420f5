/*
 * daemonset.h - the DaemonSet controller (kube's daemonset-controller): one pod on every
 * node its template fits, rolled by ControllerRevisions. The rules below are exposed for
 * the unit tests.
 */
#ifndef SQLKCM_CONTROLLERS_DAEMONSET_H
#define SQLKCM_CONTROLLERS_DAEMONSET_H

#include <cjson/cJSON.h>

#include "controller.h"

/* kube's BurstReplicas: pods created or deleted in one sync at most. */
#define DAEMONSET_BURST_REPLICAS 250
/* The labels and annotation kube's DaemonSets carry. */
#define DAEMONSET_GENERATION_LABEL "pod-template-generation"
#define DAEMONSET_GENERATION_ANNOTATION "deprecated.daemonset.template.generation"

extern const struct controller_type daemonset_controller_type;

/* kube's ToleratesTaint: 1 when toleration (an object) tolerates taint. */
int daemonset_toleration_tolerates(const cJSON *toleration, const cJSON *taint);

/* kube's NodeShouldRunDaemonPod for the DaemonSet ds on node: *should_run when a new
 * daemon pod belongs there, *should_continue when one already there may stay (it
 * tolerates the node's NoExecute taints). */
void daemonset_node_should_run(const cJSON *node, const cJSON *ds, int *should_run,
    int *should_continue);

/* The pod template ds's pods are made of (kube's CreatePodTemplate): ds's template with
 * the daemon tolerations added and the labels pod-template-generation (when generation
 * >= 0) and controller-revision-hash (when hash is not empty). Malloc'd. */
cJSON *daemonset_pod_template(const cJSON *ds, long long generation, const char *hash);

/* kube's ReplaceDaemonSetPodNodeNameNodeAffinity on a pod spec: the required node
 * affinity becomes the one term matching the field metadata.name to node. */
void daemonset_pin_to_node(cJSON *pod_spec, const char *node);

/* kube's GetTargetNodeName: spec.nodeName, or the node of the pod's required affinity
 * pinned by daemonset_pin_to_node; NULL when neither. */
const char *daemonset_target_node(const cJSON *pod);

/* kube's SurgeCount and UnavailableCount for ds with desired nodes, with the fallback
 * of updatedDesiredNodeCounts (both 0 and desired > 0: one unavailable). */
int daemonset_max_counts(const cJSON *ds, long long desired, long long *max_surge,
    long long *max_unavailable, char **error);

/* One node's daemon pods as the rolling update sees them. */
struct daemonset_node_pods {
	const char *node;
	int ok;			/* at most one new and one old pod not being deleted */
	int should_run;		/* a new daemon pod belongs on the node */
	int has_new, has_old;
	int new_available, old_available;
	int old_pod;		/* the caller's index of the old pod */
};

/* kube's rollingUpdate decisions over the n nodes that have daemon pods or should (in
 * order; desired of them should run one): marks in delete_old[i] the nodes whose old pod
 * goes, and in create_new[i] those that get a new pod (surge only). */
void daemonset_rolling_update(const struct daemonset_node_pods *nodes, int n, long long desired,
    long long max_surge, long long max_unavailable, int *delete_old, int *create_new);

#endif
