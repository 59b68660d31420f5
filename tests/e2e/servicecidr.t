#!/usr/bin/env bash
# servicecidr.t - the Service CIDR controller: a ServiceCIDR of the test's own gets the
# networking.k8s.io/service-cidr-finalizer and the condition Ready True, so that a
# Service takes a cluster IP from it; deleted while that Service's IPAddress lies in it
# alone, it stays, Ready False (Terminating); once the Service goes, its finalizer is
# removed (after kube's 10 s grace) and it is gone. The range is the test's own
# (10.200.N.0/24), beside the cluster's service range.
# e2e: locks service-cidr-controller
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-servicecidr.XXXXXX")
n=$((RANDOM % 200 + 20))
ns=servicecidr-$RANDOM
cidr=$ns
cleanup() {
	kubectl delete service -n "$ns" web --wait=false >/dev/null 2>&1
	kubectl delete servicecidr "$cidr" --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
sqlkcm_start servicecidr --db "$work/cache.db" --controllers service-cidr-controller -v 2
check "sqlkcm's caches synced" cluster_wait_until 60 "sqlkcm's caches synced" \
    grep -q "caches synced" "$work/servicecidr.log"

ready() {
	kubectl get servicecidr "$cidr" \
	    -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}'
}
kubectl apply -f - >/dev/null <<YAML
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: $cidr}
spec: {cidrs: [10.200.$n.0/24]}
YAML
check "the ServiceCIDR gets the finalizer" cluster_wait_until 60 "the finalizer" eval \
    '[ "$(kubectl get servicecidr '"$cidr"' -o jsonpath="{.metadata.finalizers[*]}")" = networking.k8s.io/service-cidr-finalizer ]'
check "and the condition Ready True" cluster_wait_until 60 "Ready" eval '[ "$(ready)" = True/ ]'
check "the condition is written by the field manager service-cidr-controller" eval \
    '[ -n "$(kubectl get servicecidr '"$cidr"' --show-managed-fields -o jsonpath="{.metadata.managedFields[?(@.manager==\"service-cidr-controller\")].operation}")" ]'

check "a Service takes a cluster IP from it" cluster_wait_until 60 "the Service" eval \
    'kubectl create service clusterip web -n '"$ns"' --tcp=80 --clusterip=10.200.'"$n"'.10 >/dev/null 2>&1 ||
     kubectl get service web -n '"$ns"' >/dev/null 2>&1'
check "whose IPAddress the allocator holds" cluster_wait_until 30 "the IPAddress" \
    kubectl get ipaddress "10.200.$n.10"

kubectl delete servicecidr "$cidr" --wait=false >/dev/null
check "deleted while the address lies in it alone, it stays Ready False, Terminating" \
    cluster_wait_until 60 "Terminating" eval '[ "$(ready)" = False/Terminating ]'
check "and keeps its finalizer" eval \
    'kubectl get servicecidr '"$cidr"' -o jsonpath="{.metadata.finalizers[*]}" | grep -q service-cidr-finalizer'

kubectl delete service -n "$ns" web >/dev/null
check "once the Service and its IPAddress are gone, the ServiceCIDR goes" \
    cluster_wait_until 90 "the deletion" eval '! kubectl get servicecidr '"$cidr"' >/dev/null 2>&1'

tap_done
