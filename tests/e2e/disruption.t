#!/usr/bin/env bash
# disruption.t - the disruption controller on kwok nodes of the test's own: a budget with
# minAvailable over a Deployment gets kube's status (expectedPods, desiredHealthy,
# currentHealthy, disruptionsAllowed, observedGeneration, the DisruptionAllowed condition);
# `kubectl drain` of the node holding its pods goes one eviction at a time, each waiting
# for the replacement to be Ready elsewhere, and the ready pods never fall below
# minAvailable; a budget with a percentage maxUnavailable over another Deployment follows
# its scale; a pod's DisruptionTarget condition left True for over two minutes is reset to
# False; a budget whose pods' controller cannot be found says SyncFailed.
# Its nodes are tainted NoSchedule for it (sqlkcm-e2e/owner), which only its pods tolerate:
# `kubectl drain` would evict another test's pod there too.
#
# With E2E_PDB_CM=kcm the same runs against kube-controller-manager 1.36
# (disruption-kcm.t), which writes the end state to E2E_PDB_STATE for comparison.
# garbagecollector: its pod of a gone ReplicaSet must outlive the test, which a garbage
# collector running beside it (statefulset.t's) would not let it.
# e2e: locks disruption replicaset deployment nodes garbagecollector
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_PDB_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-disruption.XXXXXX")
prefix=pdb-$cm-$RANDOM
ns=$prefix
node_a=$prefix-a
node_b=$prefix-b
cleanup() {
	[ -n "${watcher:-}" ] && kill "$watcher" 2>/dev/null
	kcm_stop pdb
	timeout 60 kubectl delete deployment -n "$ns" --all --wait=false >/dev/null 2>&1
	timeout 60 kubectl delete node "$node_a" "$node_b" --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# node NAME: a kwok node carrying the test's label.
node() {
	kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: $1, sqlkcm-e2e-pdb: $prefix}
spec:
  taints: [{key: sqlkcm-e2e/owner, value: $prefix, effect: NoSchedule}]
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "20"}
  capacity: {cpu: "8", memory: 32Gi, pods: "20"}
EOF
}
# deployment NAME REPLICAS: pods of app NAME on the test's nodes.
deployment() {
	kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: $2
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      nodeSelector: {sqlkcm-e2e-pdb: $prefix}
      tolerations: [{key: sqlkcm-e2e/owner, operator: Exists, effect: NoSchedule}]
      terminationGracePeriodSeconds: 0
      containers: [{name: c, image: pause}]
EOF
}
# status NAME: the budget's status as "expected desired current allowed reason observed".
status() {
	kubectl get pdb "$1" -n "$ns" -o jsonpath='{.status.expectedPods} {.status.desiredHealthy} {.status.currentHealthy} {.status.disruptionsAllowed} {.status.conditions[?(@.type=="DisruptionAllowed")].reason} {.status.observedGeneration}'
}
status_is() {
	[ "$(status "$1")" = "$2" ]
}
# ready_pods APP [NODE]: the pods of APP Ready and not being deleted (on NODE).
ready_pods() {
	kubectl get pods -n "$ns" -l "app=$1" -o json | python3 -c '
import json, sys
node = sys.argv[1] if len(sys.argv) > 1 else None
n = 0
for p in json.load(sys.stdin)["items"]:
    if p["metadata"].get("deletionTimestamp"):
        continue
    if node and p["spec"].get("nodeName") != node:
        continue
    if any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])):
        n += 1
print(n)' "${@:2}"
}

node "$node_a"
kubectl create namespace "$ns" >/dev/null
if [ "$cm" = kcm ]; then
	kcm_start pdb --controllers=disruption-controller,replicaset-controller,deployment-controller
else
	sqlkcm_start pdb --db "$work/cache.db" --controllers disruption,replicaset,deployment -v 2
fi

# --- a budget with minAvailable over a Deployment ---------------------------------------
deployment web 3
kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
EOF
check "the Deployment's 3 pods are Ready on the first node" \
    cluster_wait_until 120 "3 ready pods" eval '[ "$(ready_pods web '"$node_a"')" = 3 ]'
check "minAvailable 2 of 3 healthy pods: one disruption allowed (SufficientPods)" \
    cluster_wait_until 60 "the status" status_is web "3 2 3 1 SufficientPods 1"

# --- kubectl drain under the budget ------------------------------------------------------
node "$node_b"
cluster_wait_until 60 "the second node Ready" eval '[ "$(kubectl get node '"$node_b"' \
    -o jsonpath="{.status.conditions[?(@.type==\"Ready\")].status}")" = True ]'
# The ready pods of the budget, sampled while the drain runs: the lowest seen.
(
	low=3
	while :; do
		n=$(ready_pods web 2>/dev/null)
		[ -n "$n" ] && [ "$n" -lt "$low" ] && low=$n && echo "$low" >"$work/low"
		sleep 0.3
	done
) &
watcher=$!
echo 3 >"$work/low"
check "kubectl drain of the node evicts every pod of the budget" \
    timeout 240 kubectl drain "$node_a" --ignore-daemonsets --delete-emptydir-data \
    --timeout=200s
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
watcher=
check "the replacements run on the other node, Ready" \
    cluster_wait_until 60 "3 ready pods on the second node" \
    eval '[ "$(ready_pods web '"$node_b"')" = 3 ]'
check "the ready pods never fell below minAvailable during the drain" \
    eval '[ "$(cat "$work/low")" -ge 2 ]'
check "and the budget is back to one disruption allowed" \
    cluster_wait_until 60 "the status" status_is web "3 2 3 1 SufficientPods 1"

# --- one eviction at a time: the eviction API refuses a second one ------------------------
pods=($(kubectl get pods -n "$ns" -l app=web -o jsonpath='{.items[*].metadata.name}'))
evict() {
	kubectl create --raw "/api/v1/namespaces/$ns/pods/$1/eviction" -f - <<EOF 2>&1
{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"$1","namespace":"$ns"}}
EOF
}
# The node cordoned: the replacement of an evicted pod stays Pending, not Ready.
kubectl cordon "$node_b" >/dev/null
check "a first eviction is allowed" eval 'evict '"${pods[0]}"' >/dev/null'
check "its replacement Pending, the budget allows no more (3 pods, 2 healthy)" \
    cluster_wait_until 60 "the status" status_is web "3 2 2 0 InsufficientPods 1"
refused=$(evict "${pods[1]}")
check "a second eviction is refused by the budget" \
    eval 'grep -q "would violate the pod.s disruption budget" <<<"$refused" || ! echo "$refused"'
kubectl uncordon "$node_b" >/dev/null
check "the replacement Ready, the budget allows one again" \
    cluster_wait_until 90 "the status" status_is web "3 2 3 1 SufficientPods 1"

# --- a percentage maxUnavailable over another Deployment ----------------------------------
deployment api 4
kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: api}
spec:
  maxUnavailable: 30%
  selector: {matchLabels: {app: api}}
EOF
check "maxUnavailable 30% of 4: 2 unavailable allowed (rounded up), 2 desired" \
    cluster_wait_until 120 "the status" status_is api "4 2 4 2 SufficientPods 1"
kubectl scale deployment api -n "$ns" --replicas=6 >/dev/null
check "scaled to 6: 30% of 6 rounds up to 2, 4 desired, 2 allowed" \
    cluster_wait_until 120 "the status" status_is api "6 4 6 2 SufficientPods 1"
kubectl patch pdb api -n "$ns" --type=merge -p '{"spec":{"maxUnavailable":"0%"}}' >/dev/null
check "maxUnavailable 0%: none allowed (InsufficientPods), generation 2 observed" \
    cluster_wait_until 60 "the status" status_is api "6 6 6 0 InsufficientPods 2"

# --- a stale DisruptionTarget condition ---------------------------------------------------
victim=$(kubectl get pods -n "$ns" -l app=api -o jsonpath='{.items[0].metadata.name}')
old=$(date -u -d '-5 min' +%Y-%m-%dT%H:%M:%SZ)
kubectl patch pod "$victim" -n "$ns" --subresource=status --type=strategic -p \
    '{"status":{"conditions":[{"type":"DisruptionTarget","status":"True","reason":"EvictionByEvictionAPI","message":"test","lastTransitionTime":"'"$old"'"}]}}' \
    >/dev/null
target() {
	kubectl get pod "$victim" -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="DisruptionTarget")].status}/{.status.conditions[?(@.type=="DisruptionTarget")].reason}'
}
check "a DisruptionTarget condition True for five minutes on a pod not deleted is reset to False" \
    cluster_wait_until 60 "the condition" eval '[ "$(target)" = False/ ]'

# --- a pod whose controller is not found -------------------------------------------------
kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: lost}
spec:
  minAvailable: 50%
  selector: {matchLabels: {app: lost}}
EOF
# The budget's first status before its pod: both controllers then keep its
# observedGeneration in the SyncFailed status (which one sees the pod first is a race).
check "a budget with no pod yet: nothing expected, nothing allowed (NoPods)" \
    cluster_wait_until 60 "the status" status_is lost "0 0 0 0 InsufficientPods 1"
kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: lost
  labels: {app: lost}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: gone, uid: 00000000-0000-0000-0000-000000000001, controller: true}
spec:
  nodeSelector: {sqlkcm-e2e-pdb: $prefix}
  tolerations: [{key: sqlkcm-e2e/owner, operator: Exists, effect: NoSchedule}]
  containers: [{name: c, image: pause}]
EOF
lost() {
	kubectl get pdb lost -n "$ns" -o jsonpath='{.status.disruptionsAllowed} {.status.conditions[?(@.type=="DisruptionAllowed")].reason}: {.status.conditions[?(@.type=="DisruptionAllowed")].message}'
}
check "a budget whose pod's controller is not found: SyncFailed, no disruption" \
    cluster_wait_until 60 "the status" eval '[ "$(lost)" = "0 SyncFailed: found no controllers for pod \"lost\"" ]'
check "with a CalculateExpectedPodCountFailed event" \
    cluster_wait_until 60 "the event" eval '[ -n "$(kubectl get events -n '"$ns"' \
     --field-selector reason=CalculateExpectedPodCountFailed,involvedObject.name=lost -o name)" ]'

if [ -n "${E2E_PDB_STATE:-}" ]; then
	{
		for p in web api lost; do echo "$p: $(status "$p")"; done
		echo "web on the second node: $(ready_pods web "$node_b")"
		echo "lost: $(lost)"
		echo "target: $(target)"
	} >"$E2E_PDB_STATE"
fi
tap_done
