#!/usr/bin/env bash
# nodelifecycle.t - the node lifecycle controller, in a cluster with every default admission
# plugin on (TaintNodesByCondition taints each node not-ready when it joins): the nodes lose
# the taint once Ready, a node that joins later takes pods, a cordoned node gets the
# unschedulable taint and loses it when uncordoned, taints of others stay, and the beta OS
# and arch labels follow the stable ones. Then the node's kubelet goes silent (its Lease is
# taken over, and kwok renews only the leases it holds): after the grace period its
# conditions go Unknown, its pod is marked not Ready, it is tainted unreachable NoSchedule
# and NoExecute, with kube's events; when the kubelet is back, the taints go.
#
# With E2E_NL_CM=kcm the same scenario runs against kube-controller-manager 1.36
# (nodelifecycle-kcm.t): every state asserted here is shown to be kcm's too.
#
# e2e: cluster-options --all-admission --nodes 3
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_NL_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-nodelifecycle.XXXXXX")
ns=nodelifecycle-$RANDOM
node=nl-$cm-$RANDOM
cleanup() {
	kcm_stop nl
	timeout 60 kubectl delete node "$node" --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# taints NODE: the node's taints, "key:effect" sorted, one per line.
taints() {
	kubectl get node "$1" -o jsonpath='{range .spec.taints[*]}{.key}:{.effect}{"\n"}{end}' |
	    sort
}
# untainted_when_ready: every Ready node of the cluster carries no not-ready taint.
untainted_when_ready() {
	local n
	for n in $(kubectl get nodes -l type=kwok -o name); do
		[ "$(kubectl get "$n" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ] ||
		    return 1
		taints "${n#node/}" | grep -q '^node.kubernetes.io/not-ready:' && return 1
	done
	return 0
}
has_taint() { taints "$1" | grep -qx "$2"; }
lacks_taint() { ! taints "$1" | grep -qx "$2"; }
label() { kubectl get node "$1" -o jsonpath="{.metadata.labels.${2//./\\.}}"; }
# label_is NODE KEY VALUE, pod_is WHERE: read at each call, for cluster_wait_until.
label_is() { [ "$(label "$1" "$2")" = "$3" ]; }
pod_is() {
	[ "$(kubectl get pod -n "$ns" late -o jsonpath='{.spec.nodeName}/{.status.phase}' \
	    2>/dev/null)" = "$1" ]
}

# The first node as it joined, whatever an earlier run of this test (under the other
# controller manager) made of it: tainted not-ready, without its beta labels.
kubectl taint node kwok-node-0 node.kubernetes.io/not-ready:NoSchedule --overwrite >/dev/null
kubectl label node kwok-node-0 beta.kubernetes.io/os- beta.kubernetes.io/arch- >/dev/null

if [ "$cm" = kcm ]; then
	kcm_start nl --controllers=node-lifecycle-controller,serviceaccount-controller
	check "kube-controller-manager started its node lifecycle controller" kcm_synced "$work/nl.log"
else
	sqlkcm_start nl --db "$work/cache.db" --controllers nodelifecycle,serviceaccount -v 2
	check "sqlkcm's caches synced" \
	    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/nl.log"
fi

check "every Ready node loses the not-ready taint admission gave it" \
	cluster_wait_until 60 "no not-ready taint on Ready nodes" untainted_when_ready
check "the beta OS and arch labels follow the stable ones" \
	test "$(label kwok-node-0 beta.kubernetes.io/os)/$(label kwok-node-0 beta.kubernetes.io/arch)" = linux/amd64

# A node that joins now: tainted by admission, made Ready by kwok. The object the create
# returns is the node as admitted (the controller may take the taint off at once).
kubectl create -o jsonpath='{range .spec.taints[*]}{.key}:{.effect}{"\n"}{end}' -f - \
    >"$work/admitted" <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $node
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: $node, kubernetes.io/os: linux, kubernetes.io/arch: arm64, type: kwok-late}
  # A taint of someone else's, which must stay whatever the controller does.
spec:
  taints: [{key: example.com/dedicated, value: late, effect: NoSchedule}]
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "10"}
  capacity: {cpu: "8", memory: 32Gi, pods: "10"}
EOF
check "the joining node was tainted not-ready by the admission plugin" \
	grep -qx node.kubernetes.io/not-ready:NoSchedule "$work/admitted"
check "once Ready, the joining node loses the not-ready taint" \
	cluster_wait_until 60 "the new node's taint to go" lacks_taint "$node" node.kubernetes.io/not-ready:NoSchedule
check "the taint of someone else stays" has_taint "$node" example.com/dedicated:NoSchedule
check "its beta arch label follows kubernetes.io/arch" \
	cluster_wait_until 30 "the beta arch label" label_is "$node" beta.kubernetes.io/arch arm64

kubectl create namespace "$ns" >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: late}
spec:
  nodeSelector: {kubernetes.io/hostname: $node}
  tolerations: [{key: example.com/dedicated, operator: Exists, effect: NoSchedule}]
  containers: [{name: c, image: pause}]
EOF
check "a pod for the joined node is admitted, scheduled there, and runs" \
	cluster_wait_until 90 "the pod to run" pod_is "$node/Running"

kubectl cordon "$node" >/dev/null
check "a cordoned node gets the unschedulable taint" \
	cluster_wait_until 30 "the unschedulable taint" has_taint "$node" node.kubernetes.io/unschedulable:NoSchedule
check "the taint carries the time it was added" \
	test -n "$(kubectl get node "$node" -o jsonpath='{.spec.taints[?(@.key=="node.kubernetes.io/unschedulable")].timeAdded}')"
kubectl uncordon "$node" >/dev/null
check "uncordoned, it loses the unschedulable taint" \
	cluster_wait_until 30 "the unschedulable taint to go" lacks_taint "$node" node.kubernetes.io/unschedulable:NoSchedule
check "and the taint of someone else is still there" has_taint "$node" example.com/dedicated:NoSchedule

# A kubelet reporting memory pressure, then none (status written as a kubelet would).
status_patch() {
	kubectl patch node "$node" --subresource=status --type=strategic -p "{\"status\":{\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"$1\",\"reason\":\"Test\",\"message\":\"test\",\"lastHeartbeatTime\":\"$(date -u +%FT%TZ)\",\"lastTransitionTime\":\"$(date -u +%FT%TZ)\"}]}}" >/dev/null
}
status_patch True
check "memory pressure brings the memory-pressure taint" \
	cluster_wait_until 30 "the memory-pressure taint" has_taint "$node" node.kubernetes.io/memory-pressure:NoSchedule
status_patch False
check "and its end takes it off" \
	cluster_wait_until 30 "the memory-pressure taint to go" lacks_taint "$node" node.kubernetes.io/memory-pressure:NoSchedule

# The kubelet goes silent: someone else holds the node's Lease, for an hour, so kwok neither
# renews it nor posts the node's status (kwok leaves alone the nodes whose Lease it does not
# hold). Taking the Lease over renews nothing: its renewTime stays kwok's last.
ready_is() {	# STATUS/REASON, a pattern
	[[ "$(kubectl get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}')" == $1 ]]
}
pod_ready_is() {
	[ "$(kubectl get pod -n "$ns" late -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = "$1" ]
}
event_on() {	# NAMESPACE NAME REASON: an event of REASON about NAME
	[ -n "$(kubectl get events -n "$1" --field-selector "involvedObject.name=$2,reason=$3" \
	    -o name 2>/dev/null)" ]
}
lease() {
	kubectl patch lease -n kube-node-lease "$node" --type=merge -p "{\"spec\":$1}" >/dev/null
}
lease '{"holderIdentity":"e2e-silencer","leaseDurationSeconds":3600}'
silent_at=$(date +%s)
check "a silent kubelet's node goes Unknown after the grace period (NodeStatusUnknown)" \
	cluster_wait_until 150 "the node to go Unknown" ready_is Unknown/NodeStatusUnknown
echo "# Unknown $(( $(date +%s) - silent_at )) s after the Lease was taken (grace 50 s)"
check "its pressure conditions go Unknown with it" \
	test "$(kubectl get node "$node" -o jsonpath='{.status.conditions[?(@.type=="MemoryPressure")].status}')" = Unknown
check "the NodeNotReady event is recorded on the node" \
	cluster_wait_until 30 "the node's event" event_on default "$node" NodeNotReady
check "its pod is marked not Ready" cluster_wait_until 30 "the pod's Ready" pod_ready_is False
check "with a NodeNotReady event on the pod" \
	cluster_wait_until 30 "the pod's event" event_on "$ns" late NodeNotReady
check "the node is tainted unreachable NoSchedule" \
	cluster_wait_until 30 "the NoSchedule taint" has_taint "$node" node.kubernetes.io/unreachable:NoSchedule
check "and unreachable NoExecute (its zone is healthy: the first of its zone goes at once)" \
	cluster_wait_until 30 "the NoExecute taint" has_taint "$node" node.kubernetes.io/unreachable:NoExecute
check "the other nodes stay Ready and untainted" untainted_when_ready
check "the taint of someone else is still there" has_taint "$node" example.com/dedicated:NoSchedule

# The kubelet is back: the Lease, expired, is kwok's to take again, and kwok manages the node.
lease '{"renewTime":"2000-01-01T00:00:00.000000Z"}'
check "its kubelet back, the node is Ready again" \
	cluster_wait_until 90 "the node to be Ready" ready_is 'True/*'
check "and loses the unreachable NoExecute taint" \
	cluster_wait_until 30 "the NoExecute taint to go" lacks_taint "$node" node.kubernetes.io/unreachable:NoExecute
check "and the unreachable NoSchedule one" \
	cluster_wait_until 30 "the NoSchedule taint to go" lacks_taint "$node" node.kubernetes.io/unreachable:NoSchedule

# The node leaves the cluster: announced gone, as it was announced when it came.
check "the RegisteredNode event was recorded on the node" event_on default "$node" RegisteredNode
kubectl delete pod -n "$ns" late --grace-period=0 --force >/dev/null 2>&1
timeout 60 kubectl delete node "$node" >/dev/null 2>&1
check "a node deleted gets the RemovingNode event" \
	cluster_wait_until 30 "the RemovingNode event" event_on default "$node" RemovingNode

if [ "$cm" = kcm ]; then
	kcm_stop nl
else
	sqlkcm_stop nl
	check "sqlkcm stops with exit status 0" test $? = 0
fi

tap_done
