#!/usr/bin/env bash
# attachdetach.t - the attach/detach controller for a CSI volume, on a kwok node of the
# test's own annotated volumes.kubernetes.io/controller-managed-attach-detach: "true". A
# CSIDriver of the test's own name requires attach; a claim and a CSI volume are bound to
# each other by hand (no binder runs). A pod on the node using the claim gets a
# VolumeAttachment of kube's name (csi- and the SHA-256 of handle, driver and node); once
# the test, as an external attacher would, sets its status.attached, the node's
# status.volumesAttached lists the volume and the pod gets kube's SuccessfulAttachVolume
# event; a pod of a second node using the same ReadWriteOnce claim gets nothing attached
# and kube's Multi-Attach error; once the pods are gone the attachment is deleted and the
# node lists no volume.
# With E2E_AD_CM=kcm the same runs against
# kube-controller-manager 1.36 (attachdetach-kcm.t); E2E_AD_STATE names a file for the end
# state that test compares.
# e2e: locks attachdetach nodes
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_AD_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-ad.XXXXXX")
prefix=ad-$cm-$RANDOM
ns=$prefix
node=$prefix-node
node2=$prefix-node2
driver=$prefix.example.com
pv=$prefix-pv
handle=$prefix-handle
va=csi-$(printf '%s%s%s' "$handle" "$driver" "$node" | sha256sum | cut -d' ' -f1)
unique=kubernetes.io/csi/$driver^$handle
cleanup() {
	kcm_stop ad
	timeout 60 kubectl delete volumeattachment "$va" --wait=false >/dev/null 2>&1
	timeout 60 kubectl delete node "$node" "$node2" --wait=false >/dev/null 2>&1
	timeout 60 kubectl delete pv "$pv" --wait=false >/dev/null 2>&1
	kubectl patch pv "$pv" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' \
	    >/dev/null 2>&1
	timeout 60 kubectl delete csidriver "$driver" --wait=false >/dev/null 2>&1
	kubectl patch pvc claim -n "$ns" --type=json \
	    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
	e2e_cleanup "$ns"
	if [ "$tap_failed" = 0 ]; then rm -rf "$work"; else echo "# logs kept in $work"; fi
}
trap cleanup EXIT

for n in "$node" "$node2"; do
	kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $n
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
    volumes.kubernetes.io/controller-managed-attach-detach: "true"
  labels: {kubernetes.io/hostname: $n, sqlkcm-e2e-ad: $prefix}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "10"}
  capacity: {cpu: "8", memory: 32Gi, pods: "10"}
EOF
done
kubectl create namespace "$ns" >/dev/null
kubectl apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: $driver}
spec: {attachRequired: true}
EOF
kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: claim}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $prefix
  volumeName: $pv
  resources: {requests: {storage: 1Gi}}
EOF
uid=$(kubectl get pvc claim -n "$ns" -o jsonpath='{.metadata.uid}')
kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: $pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: $prefix
  claimRef: {namespace: $ns, name: claim, uid: $uid}
  csi: {driver: $driver, volumeHandle: $handle}
EOF
kubectl patch pv "$pv" --subresource=status --type=merge -p '{"status":{"phase":"Bound"}}' \
    >/dev/null
kubectl patch pvc claim -n "$ns" --subresource=status --type=merge \
    -p '{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"}}}' \
    >/dev/null

if [ "$cm" = kcm ]; then
	kcm_start ad --controllers=persistentvolume-attach-detach-controller
else
	sqlkcm_start ad --db "$work/cache.db" --controllers attachdetach -v 2
	check "sqlkcm's caches synced" cluster_wait_until 60 "sqlkcm's caches synced" \
	    grep -q "caches synced" "$work/ad.log"
fi

# pod NAME NODE: a pod on NODE that uses the claim.
pod() {
	kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: $2
  containers: [{name: c, image: pause}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: claim}}]
EOF
}
pod user "$node"
va_spec() {
	kubectl get volumeattachment "$va" \
	    -o jsonpath='{.spec.attacher} {.spec.nodeName} {.spec.source.persistentVolumeName}' \
	    2>/dev/null
}
# state WHAT TEXT: one line of the state attachdetach-kcm.t compares, the run's prefix as P.
state() {
	[ -n "${E2E_AD_STATE:-}" ] || return 0
	printf '%s: %s\n' "$1" "$2" | sed "s/$prefix/P/g" >>"$E2E_AD_STATE"
}
attached() {
	kubectl get node "$node" \
	    -o jsonpath='{range .status.volumesAttached[*]}{.name}={.devicePath};{end}'
}
check "the pod's volume gets a VolumeAttachment of kube's name" \
    cluster_wait_until 60 "the VolumeAttachment $va" \
    eval '[ "$(va_spec)" = "$driver $node $pv" ]'
state "attachment" "$(kubectl get volumeattachments -o jsonpath="{range .items[?(@.spec.nodeName==\"$node\")]}{.metadata.name}={.spec.attacher},{.spec.source.persistentVolumeName};{end}" | sed "s/$va/kube's name/")"
sleep 2
check "the node lists no volume attached before the attacher says so" \
    eval '[ -z "$(attached)" ]'

# The external attacher's part.
kubectl patch volumeattachment "$va" --subresource=status --type=merge \
    -p '{"status":{"attached":true}}' >/dev/null
check "once attached, the node's volumesAttached lists it" \
    cluster_wait_until 60 "volumesAttached" eval '[ "$(attached)" = "$unique=;" ]'
state "attached" "$(attached)"
# pod_events POD REASON: the events of REASON about POD, as "TYPE REASON: MESSAGE|" each.
pod_events() {
	kubectl get events -n "$ns" --field-selector \
	    "reason=$2,involvedObject.kind=Pod,involvedObject.name=$1" \
	    -o jsonpath='{range .items[*]}{.type} {.reason}: {.message}|{end}'
}
check "and the pod gets kube's SuccessfulAttachVolume event" \
    cluster_wait_until 60 "the pod's event" \
    eval '[ "$(pod_events user SuccessfulAttachVolume)" = "Normal SuccessfulAttachVolume: AttachVolume.Attach succeeded for volume \"$pv\" |" ]'
state "pod events" "$(pod_events user SuccessfulAttachVolume)"

# The volume is ReadWriteOnce: a pod on the second node that uses the claim too waits,
# with kube's Multi-Attach error, and nothing is attached to that node.
pod other "$node2"
check "a pod of another node that uses the ReadWriteOnce volume gets the Multi-Attach error" \
    cluster_wait_until 60 "the Multi-Attach error" \
    eval '[ "$(pod_events other FailedAttachVolume)" = "Warning FailedAttachVolume: Multi-Attach error for volume \"$pv\" Volume is already used by pod(s) user|" ]'
state "multi-attach events" "$(pod_events other FailedAttachVolume)"
check "and nothing is attached to its node" \
    eval '[ -z "$(kubectl get volumeattachments -o jsonpath="{range .items[?(@.spec.nodeName==\"$node2\")]}{.metadata.name};{end}")" ]'
kubectl delete pod other -n "$ns" --wait=false >/dev/null
cluster_wait_until 60 "the pod on the second node gone" \
    eval '! kubectl get pod other -n "$ns" >/dev/null 2>&1'
# kwok's node stages (kwok-stages.yaml) write conditions, addresses and the like, never
# volumesAttached, and their heartbeat comes every 10 to 20 minutes: this only shows the
# list stays put a while (nothing rewrites it within seconds).
sleep 5
check "and still lists it a few seconds later" \
    eval '[ "$(attached)" = "$unique=;" ]'

kubectl delete pod user -n "$ns" --wait=false >/dev/null
check "once the pod is gone, the VolumeAttachment is deleted" \
    cluster_wait_until 90 "the detach" \
    eval '! kubectl get volumeattachment "$va" >/dev/null 2>&1'
check "and the node lists no volume attached" \
    cluster_wait_until 60 "volumesAttached emptied" eval '[ -z "$(attached)" ]'

state "attachments at the end" "$(kubectl get volumeattachments -o jsonpath="{range .items[?(@.spec.nodeName==\"$node\")]}{.metadata.name};{end}")"
state "attached at the end" "$(attached)"
if [ "$cm" = sqlkcm ]; then
	check "no sync failed" eval '! grep -E "level=error|^E" "$work/ad.log"'
fi
tap_done
