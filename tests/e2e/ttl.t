#!/usr/bin/env bash
# ttl.t - the TTL controller: a node's node.alpha.kubernetes.io/ttl annotation is set by
# the cluster's size (0 s up to 100 nodes, 15 s above) and put back when someone changes it;
# the cluster shrinking below 90 nodes brings it back to 0 s.
#
# The test's own nodes are objects without a kubelet (no kwok manages them), cordoned and
# tainted NoExecute so that no pod of another test lands on one; they are deleted at the
# end. With E2E_TTL_CM=kcm the same runs against kube-controller-manager 1.36 (ttl-kcm.t).
# e2e: locks ttl nodes
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_TTL_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-ttl.XXXXXX")
prefix=ttl-$cm-$RANDOM
cleanup() {
	kcm_stop ttl
	kubectl delete nodes -l "ttl-test=$prefix" --wait=false >/dev/null 2>&1
	e2e_cleanup "$prefix"
}
trap cleanup EXIT

# nodes FROM TO: the test's nodes FROM..TO, as one YAML stream.
nodes() {
	local i
	for ((i = $1; i <= $2; i++)); do
		cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $prefix-$i
  labels: {ttl-test: $prefix}
spec:
  unschedulable: true
  taints: [{key: example.com/no-kubelet, effect: NoExecute}]
EOF
	done
}
ttl() { kubectl get node "$1" -o jsonpath='{.metadata.annotations.node\.alpha\.kubernetes\.io/ttl}'; }
# ttl_is NODE VALUE: the node's ttl annotation is VALUE (read at each call).
ttl_is() { [ "$(ttl "$1")" = "$2" ]; }
# touch NODE: an update of the node (a label), as a kubelet's status updates bring.
touch_node() { kubectl label node "$1" --overwrite "ttl-touched=$RANDOM" >/dev/null; }
cluster_size() { kubectl get nodes -o name | wc -l; }

if [ "$cm" = kcm ]; then
	kcm_start ttl --controllers=ttl-controller
	check "kube-controller-manager started its TTL controller" kcm_synced "$work/ttl.log"
else
	sqlkcm_start ttl --db "$work/cache.db" --controllers ttl -v 2
	check "sqlkcm's caches synced" \
	    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/ttl.log"
fi
check "the cluster has fewer than 90 nodes to start with" test "$(cluster_size)" -lt 90

nodes 0 0 | kubectl apply -f - >/dev/null
check "a node that joins a small cluster gets ttl 0" \
	cluster_wait_until 30 "the annotation" ttl_is "$prefix-0" 0
kubectl annotate node "$prefix-0" --overwrite node.alpha.kubernetes.io/ttl=42 >/dev/null
check "a ttl changed by hand is put back to 0" \
	cluster_wait_until 30 "the annotation" ttl_is "$prefix-0" 0

# Past 100 nodes: 15 s, for nodes that join or change from then on.
nodes 1 100 | kubectl apply -f - >/dev/null
check "the cluster has more than 100 nodes" test "$(cluster_size)" -gt 100
nodes 101 101 | kubectl apply -f - >/dev/null
check "a node that joins a cluster of more than 100 nodes gets ttl 15" \
	cluster_wait_until 30 "the annotation" ttl_is "$prefix-101" 15
touch_node "$prefix-0"
check "a node already there gets 15 at its next update" \
	cluster_wait_until 30 "the annotation" ttl_is "$prefix-0" 15

# Down to 91 and more: still 15 (the hysteresis); below 90: 0.
kubectl delete nodes $(for i in $(seq 2 101); do echo "$prefix-$i"; done) >/dev/null
check "the cluster is below 90 nodes again" test "$(cluster_size)" -lt 90
touch_node "$prefix-0"
check "below 90 nodes, a node gets ttl 0 at its next update" \
	cluster_wait_until 30 "the annotation" ttl_is "$prefix-0" 0

if [ "$cm" = kcm ]; then
	kcm_stop ttl
else
	sqlkcm_stop ttl
	check "sqlkcm stops with exit status 0" test $? = 0
fi

tap_done
