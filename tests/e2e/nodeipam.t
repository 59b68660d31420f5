#!/usr/bin/env bash
# nodeipam.t - node IPAM (the range allocator) in a dual-stack cluster CIDR: each new node
# gets one IPv4 /24 and one IPv6 /64 in spec.podCIDRs, past the blocks the Service ranges
# hold; the blocks go round (a deleted node's block is not handed out again at once); a
# restarted controller manager honours every block nodes hold and starts its search again
# at the first free one (the deleted node's); a node that comes with its own blocks keeps
# them; no two nodes share a block.
#
# Every node of the cluster that has no blocks yet (the shared cluster's kwok nodes) is
# given some first, far up the range, so that the allocator hands out only to the test's
# nodes and the blocks it hands out are the same whichever controller manager runs first.
# The test's nodes are objects without a kubelet (no kwok manages them), cordoned and
# tainted NoExecute so that no pod of another test lands on one; they are deleted at the end.
# With E2E_IPAM_CM=kcm the same runs against kube-controller-manager 1.36 (nodeipam-kcm.t).
# e2e: locks nodeipam nodes
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_IPAM_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-nodeipam.XXXXXX")
prefix=ipam-$cm-$RANDOM
cleanup() {
	kcm_stop ipam
	kubectl delete nodes -l "ipam-test=$prefix" --wait=false >/dev/null 2>&1
	e2e_cleanup "$prefix"
}
trap cleanup EXIT

cluster_cidrs=10.244.0.0/16,fd00:10:244::/56
service_cidrs=10.244.0.0/23,fd00:10:244::/108
start_cm() {
	if [ "$cm" = kcm ]; then
		kcm_start ipam --controllers=node-ipam-controller --allocate-node-cidrs=true \
		    --cluster-cidr="$cluster_cidrs" --service-cluster-ip-range="$service_cidrs"
	else
		sqlkcm_start ipam --db "$work/cache.db" --controllers nodeipam -v 2 \
		    --allocate-node-cidrs --cluster-cidr="$cluster_cidrs" \
		    --service-cluster-ip-range="$service_cidrs"
		cluster_wait_until 60 "sqlkcm's caches synced" \
		    grep -q "controller=nodeipam: caches synced" "$work/ipam.log"
	fi
}
stop_cm() {
	if [ "$cm" = kcm ]; then
		kcm_stop ipam
	else
		sqlkcm_stop ipam
	fi
}
# node NAME [CIDRS]: a node of the test, with spec.podCIDRs CIDRS (a JSON list) if given.
node() {
	kubectl create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $prefix-$1
  labels: {ipam-test: $prefix}
spec:
  unschedulable: true
  taints: [{key: example.com/no-kubelet, effect: NoExecute}]
  ${2:+podCIDR: $(echo "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0])')}
  ${2:+podCIDRs: $2}
EOF
}
cidrs() { kubectl get node "$1" -o jsonpath='{.spec.podCIDRs[*]}'; }
cidrs_are() { [ "$(cidrs "$1")" = "$2" ]; }
# allocated NAME WANT: the test's node NAME gets the blocks WANT ("v4 v6").
allocated() {
	cluster_wait_until 30 "the blocks of $1" cidrs_are "$prefix-$1" "$2"
}

nodes_hold_blocks
none_without() { [ -z "$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.spec.podCIDR}{"\n"}{end}' | grep '=$')" ]; }
check "every node of the cluster holds blocks before the allocator starts" none_without

start_cm
node a
check "a new node gets the first IPv4 and IPv6 blocks the Service ranges leave free" \
	allocated a "10.244.2.0/24 fd00:10:244:1::/64"
node b
check "the next node gets the next blocks" allocated b "10.244.3.0/24 fd00:10:244:2::/64"
node c
check "and the next" allocated c "10.244.4.0/24 fd00:10:244:3::/64"
check "spec.podCIDR is the first of spec.podCIDRs" \
	test "$(kubectl get node "$prefix-c" -o jsonpath='{.spec.podCIDR}')" = 10.244.4.0/24

kubectl delete node "$prefix-b" >/dev/null
node d
check "a node after one was deleted gets the blocks after the last handed out, not the freed ones" \
	allocated d "10.244.5.0/24 fd00:10:244:4::/64"

stop_cm
start_cm
node e
check "after a restart, the first free blocks (the deleted node's) are handed out" \
	allocated e "10.244.3.0/24 fd00:10:244:2::/64"
node f '["10.244.9.0/24","fd00:10:244:9::/64"]'
node g
check "a node that comes with blocks keeps them" \
	cidrs_are "$prefix-f" "10.244.9.0/24 fd00:10:244:9::/64"
check "the search goes on past the blocks nodes hold" \
	allocated g "10.244.6.0/24 fd00:10:244:5::/64"
check "no two nodes hold the same block" test -z "$(kubectl get nodes \
	-o jsonpath='{range .items[*]}{range .spec.podCIDRs[*]}{@}{"\n"}{end}{end}' | sort | uniq -d)"

if [ "$cm" = sqlkcm ]; then
	check "the view node_pod_cidrs shows a node's blocks" test "$(sqlite3 "$work/cache.db" \
	    "SELECT pod_cidrs FROM node_pod_cidrs WHERE name = '$prefix-a'")" = \
	    '["10.244.2.0/24","fd00:10:244:1::/64"]'
	check "the allocation is logged" grep -q "allocate-cidr" "$work/ipam.log"
fi
if [ "$cm" = sqlkcm ]; then
	sqlkcm_stop ipam
	check "sqlkcm stops with exit status 0" test $? = 0
fi
tap_done
