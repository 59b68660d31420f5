#!/usr/bin/env bash
# resourcequota.t - the resource quota controller: a quota's status.used is computed, so
# that the apiserver's ResourceQuota admission refuses what exceeds it, and freed when
# objects go.
#
# A quota on pods, requests.cpu and count/configmaps: its usage appears; a third pod past
# pods=2 is refused; a pod deleted frees its place and its cpu (the controller's
# replenishment, which admission does not do); a pod asking more cpu than is left is
# refused, one asking what is left is admitted; ConfigMaps are refused past
# count/configmaps and admitted again once one is deleted. In a namespace of its own, a
# quota with the BestEffort scope counts only the pods without requests: a second
# best-effort pod is refused, a pod with requests is admitted beside it. Pods stay Pending
# (they select no node). With E2E_RQ_CM=kcm the same runs against kube-controller-manager
# 1.36 (resourcequota-kcm.t); E2E_RQ_STATE names a file for each quota's final status.used.
# e2e: locks resourcequota
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_RQ_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-rq.XXXXXX")
ns=rq-$cm-$RANDOM
ns2=$ns-be
cleanup() {
	kcm_stop rq
	timeout 60 kubectl delete namespace "$ns2" --wait=false --request-timeout=30s \
	    >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
kubectl create namespace "$ns2" >/dev/null
if [ "$cm" = kcm ]; then
	kcm_start rq --controllers=resourcequota-controller
	check "kube-controller-manager started its resource quota controller" \
	    kcm_synced "$work/rq.log"
else
	sqlkcm_start rq --db "$work/cache.db" --controllers resourcequota -v 2
	check "sqlkcm's caches synced" \
	    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/rq.log"
fi

# used NS QUOTA RESOURCE: the quota's status.used of RESOURCE ("" when none).
used() {
	kubectl get resourcequota "$2" -n "$1" \
	    -o go-template="{{with .status.used}}{{index . \"$3\"}}{{end}}" 2>/dev/null
}
used_is() { [ "$(used "$1" "$2" "$3")" = "$4" ]; }
hard_is() {
	[ "$(kubectl get resourcequota "$2" -n "$1" \
	    -o go-template="{{with .status.hard}}{{index . \"$3\"}}{{end}}" 2>/dev/null)" = "$4" ]
}
# pod NS NAME [CPU]: creates a Pending pod (on no node), requesting CPU when given; prints
# what kubectl said.
pod() {
	local resources="{}"
	[ -n "${3:-}" ] && resources="{requests: {cpu: $3}}"
	printf '%s\n' "apiVersion: v1" "kind: Pod" "metadata: {name: $2}" "spec:" \
	    "  nodeSelector: {example.com/no-such-node: \"true\"}" \
	    "  containers: [{name: c, image: busybox, resources: $resources}]" |
	    kubectl create -n "$1" -f - 2>&1
}
# refused OUTPUT / admitted OUTPUT: what kubectl create said.
refused() { grep -q "exceeded quota" <<<"$1"; }
admitted() { grep -q "created" <<<"$1"; }
configmaps() { kubectl get configmaps -n "$ns" --no-headers 2>/dev/null | wc -l; }
configmaps_counted() { used_is "$ns" compute count/configmaps "$(configmaps)"; }

printf '%s\n' "apiVersion: v1" "kind: ResourceQuota" "metadata: {name: compute}" "spec:" \
    '  hard: {pods: "2", requests.cpu: "1", count/configmaps: "3"}' |
    kubectl create -n "$ns" -f - >/dev/null
check "status.hard is spec.hard" \
    cluster_wait_until 30 "status.hard" hard_is "$ns" compute requests.cpu 1
check "status.used counts no pod" \
    cluster_wait_until 30 "status.used" used_is "$ns" compute pods 0
check "status.used says 0 cpu" used_is "$ns" compute requests.cpu 0
check "status.used counts the namespace's ConfigMaps" \
    cluster_wait_until 30 "count/configmaps" configmaps_counted

out=$(pod "$ns" p1 400m)
check "a first pod is admitted" admitted "$out"
out=$(pod "$ns" p2 400m)
check "a second pod is admitted" admitted "$out"
check "status.used: 800m cpu" \
    cluster_wait_until 30 "status.used" used_is "$ns" compute requests.cpu 800m
check "status.used: 2 pods" used_is "$ns" compute pods 2
out=$(pod "$ns" p3 100m)
check "a third pod is refused (pods=2)" refused "$out"

kubectl delete pod p2 -n "$ns" --grace-period=0 --force >/dev/null 2>&1
check "a pod deleted frees its place" \
    cluster_wait_until 30 "status.used" used_is "$ns" compute pods 1
check "and its cpu: status.used 400m" used_is "$ns" compute requests.cpu 400m
out=$(pod "$ns" p4 700m)
check "a pod asking more cpu than is left is refused" refused "$out"
out=$(pod "$ns" p5 600m)
check "a pod asking what is left is admitted" admitted "$out"
check "status.used: 1 cpu" \
    cluster_wait_until 30 "status.used" used_is "$ns" compute requests.cpu 1

# ConfigMaps up to the count (what other controllers put in the namespace counts too).
n=0 out=""
while [ "$n" -lt 10 ]; do
	out=$(kubectl create configmap "cm-$n" -n "$ns" 2>&1)
	admitted "$out" || break
	n=$((n + 1))
done
check "ConfigMaps are refused past count/configmaps" refused "$out"
check "the namespace holds 3 ConfigMaps then" test "$(configmaps)" = 3
check "status.used says 3 ConfigMaps" used_is "$ns" compute count/configmaps 3
kubectl delete configmap cm-0 -n "$ns" >/dev/null
check "a ConfigMap deleted frees its place" \
    cluster_wait_until 30 "status.used" used_is "$ns" compute count/configmaps 2
out=$(kubectl create configmap again -n "$ns" 2>&1)
check "a ConfigMap is admitted again" admitted "$out"

# BestEffort: only pods without requests count.
printf '%s\n' "apiVersion: v1" "kind: ResourceQuota" "metadata: {name: besteffort}" \
    "spec:" '  hard: {pods: "1"}' "  scopes: [BestEffort]" |
    kubectl create -n "$ns2" -f - >/dev/null
check "the BestEffort quota's usage appears" \
    cluster_wait_until 30 "status.used" used_is "$ns2" besteffort pods 0
out=$(pod "$ns2" b1)
check "a best-effort pod is admitted" admitted "$out"
out=$(pod "$ns2" b2)
check "a second best-effort pod is refused" refused "$out"
out=$(pod "$ns2" burstable 100m)
check "a pod with requests is admitted beside it" admitted "$out"
check "status.used counts the best-effort pod alone" \
    cluster_wait_until 30 "status.used" used_is "$ns2" besteffort pods 1
kubectl delete pod b1 -n "$ns2" --grace-period=0 --force >/dev/null 2>&1
check "the best-effort pod deleted frees its place" \
    cluster_wait_until 30 "status.used" used_is "$ns2" besteffort pods 0
out=$(pod "$ns2" b3)
check "another best-effort pod is admitted" admitted "$out"

# The end state, for resourcequota-kcm.t: each quota's status.used.
for q in "$ns/compute" "$ns2/besteffort"; do
	kubectl get resourcequota "${q#*/}" -n "${q%/*}" \
	    -o go-template='{{range $k, $v := .status.used}}{{$k}}={{$v}} {{end}}'
	echo
done >"${E2E_RQ_STATE:-/dev/null}"

tap_done
