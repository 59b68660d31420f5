#!/usr/bin/env bash
# tainteviction.t - the taint eviction controller: on a node tainted NoExecute, a pod that
# does not tolerate the taint is marked DisruptionTarget and deleted at once, with kube's
# TaintManagerEviction event; one that tolerates it for 20 s is deleted after them, not
# before; one that tolerates it without a time stays. On a second node, the taint removed
# in time cancels a pod's deletion, with kube's event.
#
# The test's nodes are its own, managed by kwok (its pods run there) and used by no other
# test: they are tainted NoSchedule for it, which only its pods tolerate (another test's
# pod scheduled there would be evicted with the test's: a Job's pod once was). With E2E_TE_CM=kcm the same runs against kube-controller-manager 1.36
# (tainteviction-kcm.t): every state asserted here is shown to be kcm's too.
# e2e: locks tainteviction daemonset nodes
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_TE_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-tainteviction.XXXXXX")
prefix=te-$cm-$RANDOM
ns=$prefix
node1=$prefix-1
node2=$prefix-2
cleanup() {
	kcm_stop te
	kubectl patch pod -n "$ns" intolerant --type=merge -p '{"metadata":{"finalizers":null}}' \
	    >/dev/null 2>&1
	timeout 60 kubectl delete node "$node1" "$node2" --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

for n in "$node1" "$node2"; do
	kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $n
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: $n, type: kwok-te}
spec:
  taints: [{key: sqlkcm-e2e/owner, value: $prefix, effect: NoSchedule}]
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "10"}
  capacity: {cpu: "8", memory: 32Gi, pods: "10"}
EOF
done
kubectl create namespace "$ns" >/dev/null
# pod NAME NODE TOLERATION [FINALIZERS]: a pod bound to NODE by its selector, tolerating
# the nodes' NoSchedule taint and TOLERATION (none when empty).
pod() {
	kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, finalizers: ${4:-[]}}
spec:
  nodeSelector: {kubernetes.io/hostname: $2}
  tolerations: [{key: sqlkcm-e2e/owner, operator: Exists, effect: NoSchedule}${3:+, $3}]
  containers: [{name: c, image: pause}]
EOF
}
EVICT='{key: example.com/evict, operator: Exists, effect: NoExecute'
# The intolerant pod is held by a finalizer, so that its DisruptionTarget can be read.
pod intolerant "$node1" '' '[example.com/hold]'
pod tolerant "$node1" "$EVICT}"
pod timed "$node1" "$EVICT, tolerationSeconds: 20}"
pod rescued "$node2" "$EVICT, tolerationSeconds: 30}"

phase_is() { [ "$(kubectl get pod -n "$ns" "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" = "$2" ]; }
all_running() {
	local p
	for p in intolerant tolerant timed rescued; do phase_is "$p" Running || return 1; done
}
check "the test's pods run on its kwok nodes" cluster_wait_until 120 "the pods to run" all_running

if [ "$cm" = kcm ]; then
	# kube's taint eviction controller reads pods by an index of their node that it does
	# not make: the node lifecycle or the daemonset controller does. Alone, it fails
	# ("Index with name spec.nodeName does not exist"); the daemonset controller, which
	# has nothing to do here, brings the index.
	kcm_start te --controllers=taint-eviction-controller,daemonset-controller
	check "kube-controller-manager started its taint eviction controller" kcm_synced "$work/te.log"
else
	sqlkcm_start te --db "$work/cache.db" --controllers taint-eviction-controller -v 2
	check "sqlkcm's caches synced" \
	    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/te.log"
fi

# going NAME: the pod is being deleted, or gone.
going() {
	[ -n "$(kubectl get pod -n "$ns" "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ] ||
	    ! kubectl get pod -n "$ns" "$1" >/dev/null 2>&1
}
staying() { ! going "$1"; }
event_is() {	# NAME MESSAGE
	kubectl get events -n "$ns" --field-selector "involvedObject.name=$1,reason=TaintManagerEviction" \
	    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' 2>/dev/null | grep -qx "$2"
}

kubectl taint node "$node1" example.com/evict=now:NoExecute >/dev/null
kubectl taint node "$node2" example.com/evict=now:NoExecute >/dev/null
tainted_at=$(date +%s)
check "the pod that does not tolerate the taint is deleted at once" \
	cluster_wait_until 30 "the intolerant pod to go" going intolerant
check "marked DisruptionTarget by the taint manager first" \
	test "$(kubectl get pod -n "$ns" intolerant -o jsonpath='{.status.conditions[?(@.type=="DisruptionTarget")].status}/{.status.conditions[?(@.type=="DisruptionTarget")].reason}')" = True/DeletionByTaintManager
check "with kube's TaintManagerEviction event" \
	cluster_wait_until 30 "the event" event_is intolerant "Marking for deletion Pod $ns/intolerant"
kubectl taint node "$node2" example.com/evict- >/dev/null
check "the pod that tolerates it for 20 s is still there (10 s at most after the taint)" \
	eval '[ $(( $(date +%s) - tainted_at )) -lt 15 ] && staying timed'
check "the taint removed in time cancels the deletion of the pod on the second node, with kube's event" \
	cluster_wait_until 30 "the cancel event" event_is rescued "Cancelling deletion of Pod $ns/rescued"
check "the pod that tolerates it for 20 s goes after them" \
	cluster_wait_until 60 "the timed pod to go" going timed
elapsed=$(( $(date +%s) - tainted_at ))
echo "# the timed pod went ${elapsed} s after the taint (tolerationSeconds 20)"
check "not before its 20 s" test "$elapsed" -ge 19
check "with kube's event" event_is timed "Marking for deletion Pod $ns/timed"
until [ $(( $(date +%s) - tainted_at )) -ge 35 ]; do sleep 1; done
check "the rescued pod is still there past its 30 s" staying rescued
check "the pod that tolerates it without a time stays" staying tolerant
check "and runs" phase_is tolerant Running

if [ "$cm" = kcm ]; then
	kcm_stop te
else
	sqlkcm_stop te
	check "sqlkcm stops with exit status 0" test $? = 0
fi

tap_done
