#!/usr/bin/env bash
# pvprotection.t - the PersistentVolume and VolumeAttributesClass protection controllers:
# a volume that lost its kubernetes.io/pv-protection finalizer gets it back; a Bound volume
# being deleted is kept until it is no longer Bound (the test sets the phases through the
# status subresource, no binder runs), then goes; an Available one being deleted goes at
# once. A VolumeAttributesClass a claim names, being deleted, is kept until the claim is
# gone. The volumes are the test's own (a name prefix and a StorageClass no claim names),
# so no other test's binder takes them. With E2E_PVP_CM=kcm the same runs against
# kube-controller-manager 1.36 (pvprotection-kcm.t).
# e2e: locks pv-protection volumeattributesclass-protection persistentvolume-binder
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_PVP_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-pvp.XXXXXX")
prefix=pvp-$cm-$RANDOM
cleanup() {
	kcm_stop pvp
	local pv
	for pv in "$prefix-a" "$prefix-b" "$prefix-c"; do
		kubectl patch pv "$pv" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' \
		    >/dev/null 2>&1
		kubectl delete pv "$pv" --wait=false >/dev/null 2>&1
	done
	kubectl patch pvc claim -n "$prefix" --type=json \
	    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
	kubectl patch volumeattributesclass "$prefix" --type=json \
	    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
	kubectl delete volumeattributesclass "$prefix" --wait=false >/dev/null 2>&1
	kubectl delete namespace "$prefix" --wait=false >/dev/null 2>&1
	for f in "$cluster"/pids/sqlkcm-"$test_name"-*.pid; do
		[ -e "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null && rm -f "$f"
	done
	if [ "$tap_failed" = 0 ]; then rm -rf "$work"; else echo "# logs kept in $work"; fi
}
trap cleanup EXIT

volume() {
	kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: $prefix
  csi: {driver: pvp.example.com, volumeHandle: $1}
YAML
}
finalizers() { kubectl get pv "$1" -o jsonpath='{.metadata.finalizers}'; }
phase() {
	kubectl patch pv "$1" --subresource=status --type=merge \
	    -p "{\"status\":{\"phase\":\"$2\"}}" >/dev/null
}
gone() { ! kubectl get pv "$1" >/dev/null 2>&1; }

if [ "$cm" = kcm ]; then
	kcm_start pvp --controllers=persistentvolume-protection-controller,volumeattributesclass-protection-controller
else
	sqlkcm_start pvp --db "$work/cache.db" \
	    --controllers pv-protection,volumeattributesclass-protection -v 2
	check "sqlkcm's caches synced" cluster_wait_until 60 "sqlkcm's caches synced" \
	    grep -q "caches synced" "$work/pvp.log"
fi

volume "$prefix-a"
check "a new volume has the finalizer (the admission plugin's)" \
    cluster_wait_until 30 "the finalizer" eval '[ "$(finalizers '"$prefix-a"')" = "[\"kubernetes.io/pv-protection\"]" ]'
kubectl patch pv "$prefix-a" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' \
    >/dev/null
check "a volume that lost it gets it back" \
    cluster_wait_until 30 "the finalizer back" eval '[ "$(finalizers '"$prefix-a"')" = "[\"kubernetes.io/pv-protection\"]" ]'

volume "$prefix-b"
phase "$prefix-b" Bound
kubectl delete pv "$prefix-b" --wait=false >/dev/null
sleep 3
check "a Bound volume being deleted is kept, with its finalizer" eval \
    '[ -n "$(kubectl get pv '"$prefix-b"' -o jsonpath="{.metadata.deletionTimestamp}")" ] &&
     [ "$(finalizers '"$prefix-b"')" = "[\"kubernetes.io/pv-protection\"]" ]'
phase "$prefix-b" Released
check "once Released, it goes" cluster_wait_until 30 "the deletion" gone "$prefix-b"

volume "$prefix-c"
kubectl delete pv "$prefix-c" --wait=false >/dev/null
check "an Available volume being deleted goes" \
    cluster_wait_until 30 "the deletion" gone "$prefix-c"
# A class a claim names: kept while the claim is there.
kubectl create namespace "$prefix" >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata: {name: $prefix}
driverName: pvp.example.com
parameters: {iops: "100"}
YAML
kubectl apply -n "$prefix" -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: claim}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $prefix
  volumeAttributesClassName: $prefix
  resources: {requests: {storage: 1Gi}}
YAML
vacfinalizers() { kubectl get volumeattributesclass "$prefix" -o jsonpath='{.metadata.finalizers}'; }
check "a VolumeAttributesClass has the finalizer" cluster_wait_until 30 "the finalizer" \
    eval '[ "$(vacfinalizers)" = "[\"kubernetes.io/vac-protection\"]" ]'
kubectl delete volumeattributesclass "$prefix" --wait=false >/dev/null
sleep 3
check "one a claim names, being deleted, is kept" eval \
    '[ "$(vacfinalizers)" = "[\"kubernetes.io/vac-protection\"]" ]'
# No claim protection controller runs: the claim's own finalizer goes by hand.
kubectl delete pvc claim -n "$prefix" --wait=false >/dev/null
kubectl patch pvc claim -n "$prefix" --type=json \
    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
check "once the claim is gone, the class goes" cluster_wait_until 30 "the deletion" \
    eval '! kubectl get volumeattributesclass "$prefix" >/dev/null 2>&1'

if [ "$cm" = sqlkcm ]; then
	check "no sync failed" eval '! grep -E "level=error|^E" "$work/pvp.log"'
fi
tap_done
