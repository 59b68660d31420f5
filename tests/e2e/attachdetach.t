#!/usr/bin/env bash
# attachdetach.t - the attach/detach controller for a CSI volume, on a kwok node of the
# test's own annotated volumes.kubernetes.io/controller-managed-attach-detach: "true". A
# CSIDriver of the test's own name requires attach; a claim and a CSI volume are bound to
# each other by hand (no binder runs). A pod on the node using the claim gets a
# VolumeAttachment of kube's name (csi- and the SHA-256 of handle, driver and node); once
# the test, as an external attacher would, sets its status.attached, the node's
# status.volumesAttached lists the volume and the pod gets kube's SuccessfulAttachVolume
# event; a pod of a second node using the same ReadWriteOnce claim gets nothing attached
# and kube's Multi-Attach error. Before that, the test plays an attacher that fails
# (status.attachError): the pod gets kube's FailedAttachVolume with its message. Once the
# pods are gone, while the node still reports the volume in status.volumesInUse, the
# attachment stays; the node's out-of-service taint has it detached at once (kube's
# non-graceful node shutdown) and the node lists no volume. Under sqlkcm only (kube waits
# six minutes, fixed): a second volume in use on the second node, made not Ready, is
# force detached once --attach-detach-reconcile-max-wait-unmount-duration (10 s here)
# passed; both forced detaches are counted by reason in kube's metric.
# The nodes are tainted NoSchedule for the test, so that no other test's pod lands there
# (its own pods name their node).
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
pv2=$prefix-pv2
handle2=$prefix-handle2
va2=csi-$(printf '%s%s%s' "$handle2" "$driver" "$node2" | sha256sum | cut -d' ' -f1)
unique2=kubernetes.io/csi/$driver^$handle2
cleanup() {
	kcm_stop ad
	timeout 60 kubectl delete volumeattachment "$va" "$va2" --wait=false >/dev/null 2>&1
	timeout 60 kubectl delete node "$node" "$node2" --wait=false >/dev/null 2>&1
	for v in "$pv" "$pv2"; do
		timeout 60 kubectl delete pv "$v" --wait=false >/dev/null 2>&1
		kubectl patch pv "$v" --type=json \
		    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
	done
	timeout 60 kubectl delete csidriver "$driver" --wait=false >/dev/null 2>&1
	for c in claim claim2; do
		kubectl patch pvc "$c" -n "$ns" --type=json \
		    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
	done
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
spec:
  taints: [{key: sqlkcm-e2e/owner, value: $prefix, effect: NoSchedule}]
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
# claim NAME PV HANDLE: a ReadWriteOnce claim and a CSI volume of the driver, bound to
# each other by hand.
claim() {
	kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $1}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $prefix
  volumeName: $2
  resources: {requests: {storage: 1Gi}}
EOF
	local uid
	uid=$(kubectl get pvc "$1" -n "$ns" -o jsonpath='{.metadata.uid}')
	kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: $2}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: $prefix
  claimRef: {namespace: $ns, name: $1, uid: $uid}
  csi: {driver: $driver, volumeHandle: $3}
EOF
	kubectl patch pv "$2" --subresource=status --type=merge \
	    -p '{"status":{"phase":"Bound"}}' >/dev/null
	kubectl patch pvc "$1" -n "$ns" --subresource=status --type=merge \
	    -p '{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"}}}' \
	    >/dev/null
}
claim claim "$pv" "$handle"
claim claim2 "$pv2" "$handle2"

if [ "$cm" = kcm ]; then
	kcm_start ad --controllers=persistentvolume-attach-detach-controller
else
	metrics_port=$(cluster_free_port)
	sqlkcm_start ad --db "$work/cache.db" --controllers attachdetach -v 2 \
	    --port "$metrics_port" --attach-detach-reconcile-max-wait-unmount-duration 10s
	check "sqlkcm's caches synced" cluster_wait_until 60 "sqlkcm's caches synced" \
	    grep -q "caches synced" "$work/ad.log"
fi

# pod NAME NODE [CLAIM]: a pod on NODE that uses CLAIM (claim by default).
pod() {
	kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeName: $2
  containers: [{name: c, image: pause}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: ${3:-claim}}}]
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

# pod_events POD REASON: the events of REASON about POD, as "TYPE REASON: MESSAGE|" each.
pod_events() {
	kubectl get events -n "$ns" --field-selector \
	    "reason=$2,involvedObject.kind=Pod,involvedObject.name=$1" \
	    -o jsonpath='{range .items[*]}{.type} {.reason}: {.message}|{end}'
}

# The external attacher fails first: kube's FailedAttachVolume with its message.
kubectl patch volumeattachment "$va" --subresource=status --type=merge \
    -p '{"status":{"attached":false,"attachError":{"message":"rpc error: disk busy","time":"2026-01-01T00:00:00Z"}}}' \
    >/dev/null
check "an attacher's error gives the pod kube's FailedAttachVolume with its message" \
    cluster_wait_until 60 "the pod's FailedAttachVolume" \
    eval '[ "$(pod_events user FailedAttachVolume)" = "Warning FailedAttachVolume: AttachVolume.Attach failed for volume \"$pv\" : rpc error: disk busy|" ]'
state "attach error events" "$(pod_events user FailedAttachVolume)"
check "and the node lists no volume attached" eval '[ -z "$(attached)" ]'

# Then it succeeds.
kubectl patch volumeattachment "$va" --subresource=status --type=json \
    -p '[{"op":"remove","path":"/status/attachError"},{"op":"replace","path":"/status/attached","value":true}]' \
    >/dev/null
check "once attached, the node's volumesAttached lists it" \
    cluster_wait_until 60 "volumesAttached" eval '[ "$(attached)" = "$unique=;" ]'
state "attached" "$(attached)"
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

# The kubelet's part: the node uses the volume.
kubectl patch node "$node" --subresource=status --type=merge \
    -p "{\"status\":{\"volumesInUse\":[\"$unique\"]}}" >/dev/null
sleep 2		# the node's update reaches the controller before the pod's deletion
kubectl delete pod user -n "$ns" --wait=false >/dev/null
cluster_wait_until 60 "the pod gone" eval '! kubectl get pod user -n "$ns" >/dev/null 2>&1'
sleep 5
check "with the pod gone but the volume in use on the Ready node, the attachment stays" \
    eval 'kubectl get volumeattachment "$va" >/dev/null 2>&1 && [ "$(attached)" = "$unique=;" ]'
kubectl taint node "$node" node.kubernetes.io/out-of-service=nodeshutdown:NoExecute \
    >/dev/null
check "the node's out-of-service taint has the VolumeAttachment deleted" \
    cluster_wait_until 90 "the detach" \
    eval '! kubectl get volumeattachment "$va" >/dev/null 2>&1'
check "and the node lists no volume attached" \
    cluster_wait_until 60 "volumesAttached emptied" eval '[ -z "$(attached)" ]'

state "attachments at the end" "$(kubectl get volumeattachments -o jsonpath="{range .items[?(@.spec.nodeName==\"$node\")]}{.metadata.name};{end}")"
state "attached at the end" "$(attached)"
if [ "$cm" = sqlkcm ]; then
	# metric REASON: the forced detach counter's line of REASON.
	metric() {
		curl -s --max-time 10 "http://127.0.0.1:$metrics_port/metrics" |
		    grep "^attach_detach_controller_attachdetach_controller_forced_detaches{reason=\"$1\"}"
	}
	check "counted as a forced detach, reason out-of-service" \
	    eval '[ "$(metric out-of-service)" = "attach_detach_controller_attachdetach_controller_forced_detaches{reason=\"out-of-service\"} 1" ]'

	# A second volume on the second node, in use there; the node goes not Ready and the
	# pod away: after the wait (10 s here), the volume is force detached.
	pod second "$node2" claim2
	check "a second pod's volume gets its VolumeAttachment" \
	    cluster_wait_until 60 "the VolumeAttachment $va2" \
	    eval 'kubectl get volumeattachment "$va2" >/dev/null 2>&1'
	kubectl patch volumeattachment "$va2" --subresource=status --type=merge \
	    -p '{"status":{"attached":true}}' >/dev/null
	cluster_wait_until 60 "the second volume listed" \
	    eval '[ "$(kubectl get node "$node2" -o jsonpath="{.status.volumesAttached[*].name}")" = "$unique2" ]'
	# kwok lets go of the node (else it sets it Ready again at once).
	kubectl annotate node "$node2" kwok.x-k8s.io/node- >/dev/null
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	kubectl patch node "$node2" --subresource=status --type=json -p "[
	    {\"op\":\"add\",\"path\":\"/status/volumesInUse\",\"value\":[\"$unique2\"]},
	    {\"op\":\"replace\",\"path\":\"/status/conditions\",\"value\":[{\"type\":\"Ready\",
	    \"status\":\"False\",\"reason\":\"KubeletNotReady\",\"lastHeartbeatTime\":\"$now\",
	    \"lastTransitionTime\":\"$now\"}]}]" >/dev/null
	sleep 2
	kubectl delete pod second -n "$ns" --grace-period=0 --force >/dev/null 2>&1
	gone_at=$(date +%s)
	sleep 5
	check "on the node not Ready, the volume in use is not detached before the wait" \
	    eval 'kubectl get volumeattachment "$va2" >/dev/null 2>&1'
	check "after the wait it is force detached" \
	    cluster_wait_until 60 "the forced detach" \
	    eval '! kubectl get volumeattachment "$va2" >/dev/null 2>&1'
	echo "# force detached $(( $(date +%s) - gone_at )) s after the pod's deletion (wait 10 s)"
	check "the second node lists no volume attached" \
	    cluster_wait_until 60 "volumesAttached emptied" \
	    eval '[ -z "$(kubectl get node "$node2" -o jsonpath="{.status.volumesAttached}")" ]'
	check "counted as a forced detach, reason timeout" \
	    eval '[ "$(metric timeout)" = "attach_detach_controller_attachdetach_controller_forced_detaches{reason=\"timeout\"} 1" ]'
	check "no sync failed" eval '! grep -E "level=error|^E" "$work/ad.log"'
fi
tap_done
