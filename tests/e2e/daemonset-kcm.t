#!/usr/bin/env bash
# daemonset-kcm.t - kube-controller-manager 1.36's daemonset-controller and sqlkcm's end in
# the same states: daemonset.t's scenario (placement, taints, a node added and removed, a
# maxSurge rolling update, an undo, OnDelete) runs under each, every check of it passing
# under both, and their end states (status, revision numbers, which revision each node's
# pod is of) are compared. Then kube's revision names: a DaemonSet started under
# kube-controller-manager is handed to sqlkcm, which finds kube's revision by its data and
# keeps its name and hash: no new revision, no pod replaced, and the pod it places on a
# node added later carries kube's hash.
#
# Revision names differ between the two for a new template: kube hashes a dump of its Go
# structures (controller.ComputeHash), which sqlkcm cannot reproduce (see src/history.h);
# that is why the scenarios are compared by revision number, and the hand-over shows that
# kube's names are kept.
# e2e: locks daemonset nodes
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-daemonset-kcm.XXXXXX")
prefix=dsk-$RANDOM
ns=$prefix
node=$prefix-1
node2=$prefix-2
cleanup() {
	kcm_stop dsk
	timeout 60 kubectl delete daemonset -n "$ns" --all --wait=false >/dev/null 2>&1
	timeout 60 kubectl delete node "$node" "$node2" --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# The scenario under each; its TAP lines are ours, renumbered.
run_under_each daemonset.t E2E_DS_CM E2E_DS_STATE
check "sqlkcm ends in kube-controller-manager's state (status, revisions, pods by node)" \
    diff "$work/kcm.state" "$work/sqlkcm.state"

# The hand-over: kube's revision kept.
node_new() {
	kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: $1, sqlkcm-e2e-ds: $prefix}
spec:
  taints: [{key: sqlkcm-e2e/owner, value: $prefix, effect: NoSchedule}]
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "10"}
  capacity: {cpu: "8", memory: 32Gi, pods: "10"}
EOF
}
node_new "$node"
kubectl create namespace "$ns" >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
spec:
  selector: {matchLabels: {app: ds}}
  template:
    metadata: {labels: {app: ds}}
    spec:
      nodeSelector: {sqlkcm-e2e-ds: $prefix}
      tolerations: [{key: sqlkcm-e2e/owner, operator: Exists, effect: NoSchedule}]
      containers: [{name: c, image: pause}]
EOF
kcm_start dsk --controllers=daemonset-controller
running() {
	[ "$(kubectl get pods -n "$ns" -l app=ds -o jsonpath='{.items[*].status.phase}')" = Running ]
}
check "kube-controller-manager runs the DaemonSet's pod" wait_for 120 running
kcm_stop dsk
revs_before=$(kubectl get controllerrevisions -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name} {.revision}{"\n"}{end}')
pod_before=$(kubectl get pods -n "$ns" -l app=ds -o jsonpath='{.items[*].metadata.name} {.items[*].metadata.labels.controller-revision-hash}')
sqlkcm_start dsk --db "$work/cache.db" --controllers daemonset -v 2
check "sqlkcm syncs its caches" wait_for 60 grep -q "caches synced" "$work/dsk.log"
# A second node: sqlkcm must place a pod there, of the current revision, kube's.
node_new "$node2"
two_running() {
	[ "$(kubectl get pods -n "$ns" -l app=ds -o jsonpath='{.items[*].status.phase}')" = "Running Running" ]
}
check "sqlkcm places a pod on a node added after the hand-over" wait_for 120 two_running
revs_after=$(kubectl get controllerrevisions -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name} {.revision}{"\n"}{end}')
hashes=$(kubectl get pods -n "$ns" -l app=ds -o jsonpath='{.items[*].metadata.labels.controller-revision-hash}')
kube_hash=$(kubectl get controllerrevisions -n "$ns" -o jsonpath='{.items[0].metadata.labels.controller-revision-hash}')
check "sqlkcm keeps kube's revision, its name and number ($revs_before)" test "$revs_before" = "$revs_after"
check "sqlkcm's new pod carries kube's hash ($kube_hash)" test "$hashes" = "$kube_hash $kube_hash"
check "kube's pod stays" eval 'kubectl get pods -n "$ns" -l app=ds -o name | grep -qx "pod/${pod_before%% *}"'
tap_done
