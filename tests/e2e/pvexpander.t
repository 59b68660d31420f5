#!/usr/bin/env bash
# pvexpander.t - the volume expand controller (persistentvolume-expander): a StorageClass
# that allows expansion, volumes pre-bound to claims in the test's namespace (the test
# binds both itself, phases and capacity written through the status subresource: no binder
# runs). Once a Bound claim's request is raised above its capacity:
#   - on a CSI volume it gets Normal ExternalExpanding "waiting for an external controller
#     to expand this PVC" and no resizer annotation (kube 1.36 has no expandable plugin:
#     the CSI external-resizer does the rest);
#   - on an awsElasticBlockStore volume, which kube migrates to CSI, it gets the annotation
#     volume.kubernetes.io/storage-resizer: ebs.csi.aws.com and Normal ExternalExpanding
#     "CSI migration enabled for kubernetes.io/aws-ebs; waiting for external resizer to
#     expand the pvc".
# A Bound claim not resized, and a claim whose status says Pending although it asks for
# more than its capacity, get neither. The volumes and class carry the test's prefix.
# With E2E_EXP_CM=kcm the same runs against kube-controller-manager 1.36
# (pvexpander-kcm.t), and E2E_EXP_STATE names a file for the end state.
# e2e: locks persistentvolume-expander persistentvolume-binder
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_EXP_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-pvexpander.XXXXXX")
prefix=exp-$cm-$RANDOM
ns=$prefix
driver=e2e.sqlkcm.io-$prefix
cleanup() {
	kcm_stop exp
	for c in $(kubectl get pvc -n "$ns" -o name 2>/dev/null); do
		kubectl patch -n "$ns" "$c" --type merge -p '{"metadata":{"finalizers":null}}' \
		    >/dev/null 2>&1
	done
	for v in $(kubectl get pv -l "sqlkcm-e2e-exp=$prefix" -o name 2>/dev/null); do
		kubectl patch "$v" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
	done
	timeout 60 kubectl delete pv -l "sqlkcm-e2e-exp=$prefix" --wait=false >/dev/null 2>&1
	timeout 60 kubectl delete storageclass "$prefix" --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
kubectl apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $prefix}
provisioner: $driver
allowVolumeExpansion: true
volumeBindingMode: Immediate
EOF

# bound CLAIM SOURCE-YAML [PHASE]: claim CLAIM asking 1Gi and volume PREFIX-CLAIM of 1Gi with
# SOURCE, pre-bound to each other; then both Bound (the claim: PHASE, capacity 1Gi).
bound() {
	local uid
	kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $1}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $prefix
  volumeName: $prefix-$1
  resources: {requests: {storage: 1Gi}}
EOF
	uid=$(kubectl get pvc -n "$ns" "$1" -o jsonpath='{.metadata.uid}')
	kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: $prefix-$1, labels: {sqlkcm-e2e-exp: $prefix}}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: $prefix
  persistentVolumeReclaimPolicy: Retain
  claimRef: {namespace: $ns, name: $1, uid: $uid}
  $2
EOF
	kubectl patch pv "$prefix-$1" --subresource=status --type=merge \
	    -p '{"status":{"phase":"Bound"}}' >/dev/null
	kubectl patch pvc -n "$ns" "$1" --subresource=status --type=merge \
	    -p "{\"status\":{\"phase\":\"${3:-Bound}\",\"accessModes\":[\"ReadWriteOnce\"],\"capacity\":{\"storage\":\"1Gi\"}}}" >/dev/null
}
resize() {
	kubectl patch pvc -n "$ns" "$1" --type=merge \
	    -p "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"$2\"}}}}" >/dev/null
}
resizer() {
	kubectl get pvc -n "$ns" "$1" \
	    -o jsonpath='{.metadata.annotations.volume\.kubernetes\.io/storage-resizer}'
}
# events CLAIM: the claim's events, "type reason message" a line, sorted and unique.
events() {
	kubectl get events -n "$ns" --field-selector "involvedObject.name=$1" \
	    -o jsonpath='{range .items[*]}{.type} {.reason} {.message}{"\n"}{end}' | sort -u
}

if [ "$cm" = kcm ]; then
	kcm_start exp --controllers=persistentvolume-expander-controller
else
	sqlkcm_start exp --db "$work/cache.db" --controllers persistentvolume-expander -v 2
	check "sqlkcm's caches synced" cluster_wait_until 60 "sqlkcm's caches synced" \
	    grep -q "caches synced" "$work/exp.log"
fi

ebs='awsElasticBlockStore: {volumeID: vol-e2e, fsType: ext4}'
bound pending "$ebs" Pending
bound same "$ebs"
bound csi "csi: {driver: $driver, volumeHandle: h1}"
bound ebs "$ebs"
check "a Bound claim's request may be raised (class allows expansion)" resize csi 2Gi
resize ebs 2Gi
# Pending: the apiserver takes no larger request; its status capacity falls instead.
kubectl patch pvc -n "$ns" pending --subresource=status --type=merge \
    -p '{"status":{"capacity":{"storage":"512Mi"}}}' >/dev/null
kubectl patch pvc -n "$ns" pending --subresource=status --type=merge \
    -p '{"status":{"capacity":{"storage":"768Mi"}}}' >/dev/null

check "a migrated in-tree volume's claim names the CSI driver as its resizer" \
    cluster_wait_until 30 "the resizer annotation" \
    eval '[ "$(resizer ebs)" = ebs.csi.aws.com ]'
check "and gets ExternalExpanding (CSI migration)" cluster_wait_until 30 "the event" \
    eval 'events ebs | grep -qx "Normal ExternalExpanding CSI migration enabled for kubernetes.io/aws-ebs; waiting for external resizer to expand the pvc"'
check "a CSI volume's claim gets ExternalExpanding (an external controller)" \
    cluster_wait_until 30 "the event" \
    eval 'events csi | grep -qx "Normal ExternalExpanding waiting for an external controller to expand this PVC"'
sleep 3
check "a CSI volume's claim gets no resizer annotation" eval '[ -z "$(resizer csi)" ]'
check "a Bound claim not resized gets nothing" \
    eval '[ -z "$(resizer same)" ] && [ -z "$(events same)" ]'
check "a claim not Bound gets nothing" \
    eval '[ -z "$(resizer pending)" ] && [ -z "$(events pending)" ]'

if [ -n "${E2E_EXP_STATE:-}" ]; then
	{
		kubectl get pvc -n "$ns" -o jsonpath='{range .items[*]}pvc {.metadata.name} {.status.phase} {.spec.resources.requests.storage} {.status.capacity.storage} resizer={.metadata.annotations.volume\.kubernetes\.io/storage-resizer}{"\n"}{end}'
		for c in pending same csi ebs; do events "$c" | sed "s/^/event $c /"; done
	} | sed "s/$prefix/PREFIX/g" | sort >"$E2E_EXP_STATE"
fi
if [ "$cm" = sqlkcm ]; then
	check "no sync of the test's claims failed" \
	    eval '! grep -E "level=error|^E" "$work/exp.log" | grep -q "$ns/"'
fi
tap_done
