#!/usr/bin/env bash
# persistentvolume.t - the PersistentVolume binder: static volumes of the test's own
# StorageClass bound to claims by size (the smallest that fits) and class; a claim that
# names its volume and a volume pre-bound to its claim; a StorageClass whose provisioner
# the test plays (the claim is handed over with the storage-provisioner annotations and
# the ExternalProvisioning event; the test answers by creating the volume with a claimRef,
# which is then bound); a WaitForFirstConsumer claim that waits (WaitForFirstConsumer
# event) until its pod is scheduled onto a kwok node of the test's own (the scheduler sets
# selected-node, the test provisions, the claim is bound, the pod placed); a claim deleted
# leaves its Retain volume Released, and its external Delete volume Released for its
# provisioner; the claims of Recycle volumes deleted, a hostPath volume and an NFS one
# get kube's recycler pod (default/recycler-for-<volume>: kube's image and scrub command,
# the volume's path or export, activeDeadlineSeconds 60 and 300), whose outcome the test
# plays by writing the pod's status: Succeeded, the pod is deleted and the volume is
# Available again with VolumeRecycled; Failed, the pod is deleted and the volume Failed
# with VolumeFailedRecycle and the pod's message. PersistentVolumes and StorageClasses are cluster-scoped: theirs carry the
# test's prefix and classes of its own, so no other test's claim matches them.
#
# No protection controller runs here: the test removes the kubernetes.io/pvc-protection
# finalizer the apiserver adds, so that a claim deleted goes.
#
# With E2E_PV_CM=kcm the same runs against kube-controller-manager 1.36
# (persistentvolume-kcm.t), and E2E_PV_STATE names a file for the end state.
# e2e: locks persistentvolume-binder nodes
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_PV_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-persistentvolume.XXXXXX")
prefix=pv-$cm-$RANDOM
ns=$prefix
node=$prefix-node
driver=e2e.sqlkcm.io-$prefix
cleanup() {
	kcm_stop pv
	for c in $(kubectl get pvc -n "$ns" -o name 2>/dev/null); do
		kubectl patch -n "$ns" "$c" --type merge -p '{"metadata":{"finalizers":null}}' \
		    >/dev/null 2>&1
	done
	for v in $(kubectl get pv -l "sqlkcm-e2e-pv=$prefix" -o name 2>/dev/null); do
		kubectl patch "$v" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
	done
	timeout 60 kubectl delete pv -l "sqlkcm-e2e-pv=$prefix" --wait=false >/dev/null 2>&1
	timeout 60 kubectl delete pod -n default "recycler-for-$prefix-rec" \
	    "recycler-for-$prefix-nfs" --grace-period=0 --force >/dev/null 2>&1
	timeout 60 kubectl delete storageclass -l "sqlkcm-e2e-pv=$prefix" --wait=false \
	    >/dev/null 2>&1
	timeout 60 kubectl delete node "$node" --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $node
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: $node, sqlkcm-e2e-pv: $prefix}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "10"}
  capacity: {cpu: "8", memory: 32Gi, pods: "10"}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $prefix-static, labels: {sqlkcm-e2e-pv: $prefix}}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $prefix-other, labels: {sqlkcm-e2e-pv: $prefix}}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $prefix-rec, labels: {sqlkcm-e2e-pv: $prefix}}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $prefix-ext, labels: {sqlkcm-e2e-pv: $prefix}}
provisioner: $driver
reclaimPolicy: Delete
volumeBindingMode: Immediate
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $prefix-wait, labels: {sqlkcm-e2e-pv: $prefix}}
provisioner: $driver
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
EOF

# volume NAME SIZE CLASS [CLAIMREF-NAME [UID [POLICY [ANNOTATIONS]]]]: a CSI volume of
# the test's driver, labelled as the test's.
volume() {
	local ref="" ann=""
	[ -n "${4:-}" ] && ref="claimRef: {namespace: $ns, name: $4${5:+, uid: $5}}"
	[ -n "${7:-}" ] && ann="annotations: {$7}"
	kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $1
  labels: {sqlkcm-e2e-pv: $prefix}
  $ann
spec:
  capacity: {storage: $2}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: ${6:-Retain}
  storageClassName: $3
  csi: {driver: $driver, volumeHandle: $1}
  $ref
EOF
}
# claim NAME SIZE CLASS [VOLUME]
claim() {
	kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $1}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: $2}}
  storageClassName: $3
  ${4:+volumeName: $4}
EOF
}
pvc_field() { kubectl get pvc -n "$ns" "$1" -o jsonpath="$2"; }
pv_field() { kubectl get pv "$1" -o jsonpath="$2"; }
# bound CLAIM VOLUME: the claim is Bound to the volume, and the volume to the claim.
bound() {
	[ "$(pvc_field "$1" '{.status.phase}/{.spec.volumeName}')" = "Bound/$2" ] &&
	    [ "$(pv_field "$2" '{.status.phase}/{.spec.claimRef.name}/{.spec.claimRef.uid}')" = \
	    "Bound/$1/$(pvc_field "$1" '{.metadata.uid}')" ]
}
phase_is() { [ "$(pv_field "$1" '{.status.phase}')" = "$2" ]; }
event_seen() {
	kubectl get events -n "$ns" --field-selector "involvedObject.name=$1,reason=$2" \
	    -o jsonpath='{.items[*].message}' | grep -q .
}
ann() { pvc_field "$1" "{.metadata.annotations.${2//./\\.}}"; }
# delete_claim NAME: deleted, its protection finalizer removed (no protection controller).
delete_claim() {
	kubectl delete pvc -n "$ns" "$1" --wait=false >/dev/null
	kubectl patch pvc -n "$ns" "$1" --type merge -p '{"metadata":{"finalizers":null}}' \
	    >/dev/null 2>&1
	wait_for 30 eval '! kubectl get pvc -n '"$ns"' '"$1"' >/dev/null 2>&1'
}

volume "$prefix-small" 1Gi "$prefix-static"
volume "$prefix-medium" 2Gi "$prefix-static"
volume "$prefix-big" 10Gi "$prefix-static"
volume "$prefix-gold" 1Gi "$prefix-other"
volume "$prefix-pre" 3Gi "$prefix-static" c-pre
# recycle_volume NAME SIZE SOURCE: a Recycle volume of class $prefix-rec.
recycle_volume() {
	kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $1
  labels: {sqlkcm-e2e-pv: $prefix}
spec:
  capacity: {storage: $2}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Recycle
  storageClassName: $prefix-rec
  $3
EOF
}
recycle_volume "$prefix-rec" 1Gi "hostPath: {path: /tmp/$prefix-rec}"
recycle_volume "$prefix-nfs" 10Gi "nfs: {server: nfs.example, path: /export/$prefix}"

if [ "$cm" = kcm ]; then
	kcm_start pv --controllers=persistentvolume-binder-controller -v=2
else
	sqlkcm_start pv --db "$work/cache.db" --controllers persistentvolume-binder -v 2
	check "sqlkcm's caches synced" cluster_wait_until 60 "sqlkcm's caches synced" \
	    grep -q "caches synced" "$work/pv.log"
fi
check "unclaimed volumes become Available" wait_for 60 eval \
    'phase_is '"$prefix-small"' Available && phase_is '"$prefix-gold"' Available'
check "a volume pre-bound to a claim not yet there is Available" wait_for 30 \
    phase_is "$prefix-pre" Available

claim c-1gi 1Gi "$prefix-static"
claim c-3gi 3Gi "$prefix-static"
claim c-gold 1Gi "$prefix-other"
claim c-named 1Gi "$prefix-static" "$prefix-medium"
claim c-pre 1Gi "$prefix-static"
check "a 1Gi claim is bound to the smallest volume that fits" wait_for 60 \
    bound c-1gi "$prefix-small"
check "a 3Gi claim is bound to the 10Gi volume (the others are too small)" wait_for 60 \
    bound c-3gi "$prefix-big"
check "a claim of another class is bound to that class's volume" wait_for 60 \
    bound c-gold "$prefix-gold"
check "a claim naming its volume is bound to it" wait_for 60 bound c-named "$prefix-medium"
check "a volume pre-bound to a claim is bound to it" wait_for 60 bound c-pre "$prefix-pre"
check "claims the controller bound carry bind-completed and bound-by-controller" eval \
    '[ "$(ann c-1gi pv.kubernetes.io/bind-completed)/$(ann c-1gi pv.kubernetes.io/bound-by-controller)" = yes/yes ]'
check "a claim that named its volume is not marked bound-by-controller" eval \
    '[ "$(ann c-named pv.kubernetes.io/bind-completed)/$(ann c-named pv.kubernetes.io/bound-by-controller)" = yes/ ]'
check "the volume the controller chose is marked bound-by-controller" eval \
    '[ "$(pv_field '"$prefix-small"' "{.metadata.annotations.pv\.kubernetes\.io/bound-by-controller}")" = yes ]'
check "a pre-bound volume is not" eval \
    '[ -z "$(pv_field '"$prefix-pre"' "{.metadata.annotations.pv\.kubernetes\.io/bound-by-controller}")" ]'
check "a bound claim's status has the volume's capacity and access modes" eval \
    '[ "$(pvc_field c-3gi "{.status.capacity.storage}/{.status.accessModes[*]}")" = 10Gi/ReadWriteOnce ]'

# Dynamic provisioning handed to the class's provisioner, which the test plays.
claim c-dyn 1Gi "$prefix-ext"
check "a claim of a provisioned class is handed to its provisioner (both annotations)" \
    wait_for 60 eval '[ "$(ann c-dyn volume.kubernetes.io/storage-provisioner)/$(ann c-dyn volume.beta.kubernetes.io/storage-provisioner)" = '"$driver/$driver"' ]'
check "with the event ExternalProvisioning" wait_for 30 event_seen c-dyn ExternalProvisioning
check "and it stays Pending" eval '[ "$(pvc_field c-dyn "{.status.phase}")" = Pending ]'
volume "$prefix-dyn" 1Gi "$prefix-ext" c-dyn "$(pvc_field c-dyn '{.metadata.uid}')" Delete \
    "pv.kubernetes.io/provisioned-by: $driver"
check "the volume the provisioner made is bound to the claim" wait_for 60 \
    bound c-dyn "$prefix-dyn"

# WaitForFirstConsumer: the claim waits until its pod is scheduled.
claim c-wait 1Gi "$prefix-wait"
check "a WaitForFirstConsumer claim waits for its first consumer" wait_for 60 \
    event_seen c-wait WaitForFirstConsumer
check "it is not handed to the provisioner yet" eval \
    '[ -z "$(ann c-wait volume.kubernetes.io/storage-provisioner)" ]'
kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: consumer}
spec:
  nodeSelector: {sqlkcm-e2e-pv: $prefix}
  tolerations: [{operator: Exists}]
  containers: [{name: c, image: busybox}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: c-wait}}]
EOF
# The scheduler's work, which a loaded machine may delay past its first attempt: a longer
# wait than the controller's steps get.
check "the scheduler selects the test's node for the claim" wait_for 180 eval \
    '[ "$(ann c-wait volume.kubernetes.io/selected-node)" = '"$node"' ]'
check "then the claim is handed to the provisioner" wait_for 60 eval \
    '[ "$(ann c-wait volume.kubernetes.io/storage-provisioner)" = '"$driver"' ]'
volume "$prefix-wait" 1Gi "$prefix-wait" c-wait "$(pvc_field c-wait '{.metadata.uid}')" Delete \
    "pv.kubernetes.io/provisioned-by: $driver"
check "the volume made for it is bound to it" wait_for 60 bound c-wait "$prefix-wait"
check "and the pod is scheduled onto the node" wait_for 120 eval \
    '[ "$(kubectl get pod -n '"$ns"' consumer -o jsonpath="{.spec.nodeName}")" = '"$node"' ]'

# Reclaim.
check "the claim of a Retain volume deleted" delete_claim c-1gi
check "leaves the volume Released, its claimRef kept" wait_for 60 eval \
    'phase_is '"$prefix-small"' Released && [ "$(pv_field '"$prefix-small"' "{.spec.claimRef.name}")" = c-1gi ]'
check "the claim of an externally provisioned Delete volume deleted" delete_claim c-dyn
check "leaves the volume Released for its provisioner to delete" wait_for 60 \
    phase_is "$prefix-dyn" Released
check "which is not Failed later (no in-tree deleter is tried)" eval \
    'sleep 3; phase_is '"$prefix-dyn"' Released'

# Recycle: kube's recycler pod, whose outcome the test plays.
pv_event() {
	kubectl get events -n default --field-selector "involvedObject.name=$1,reason=$2" \
	    -o jsonpath='{.items[*].message}'
}
pod_shape() {
	kubectl get pod -n default "recycler-for-$1" -o jsonpath='{.spec.containers[0].image} {.spec.containers[0].command} {.spec.containers[0].args} {.spec.containers[0].volumeMounts[0].mountPath} {.spec.volumes[0].name} {.spec.volumes[0].hostPath.path}{.spec.volumes[0].nfs.server}:{.spec.volumes[0].nfs.path} {.spec.activeDeadlineSeconds} {.spec.restartPolicy}' 2>/dev/null
}
pod_exists() { kubectl get pod -n default "recycler-for-$1" >/dev/null 2>&1; }
# pod_ends VOLUME PHASE [MESSAGE]: the recycler pod's status written as a kubelet would.
pod_ends() {
	local status="{\"phase\":\"$2\"${3:+,\"message\":\"$3\"}}"
	kubectl patch pod -n default "recycler-for-$1" --subresource=status --type=merge \
	    -p "{\"status\":$status}" >/dev/null
}
claim c-rec 1Gi "$prefix-rec" "$prefix-rec"
claim c-nfs 1Gi "$prefix-rec" "$prefix-nfs"
check "claims of Recycle volumes are bound" wait_for 60 eval \
    'bound c-rec '"$prefix-rec"' && bound c-nfs '"$prefix-nfs"
check "the claim of a Recycle hostPath volume deleted" delete_claim c-rec
check "makes its recycler pod default/recycler-for-<volume>" wait_for 60 pod_exists \
    "$prefix-rec"
rec_shape=$(pod_shape "$prefix-rec")
want_shape='registry.k8s.io/build-image/debian-base:bookworm-v1.0.6 ["/bin/sh"] ["-c","test -e /scrub \u0026\u0026 find /scrub -mindepth 1 -delete \u0026\u0026 test -z \"$(ls -A /scrub)\" || exit 1"] /scrub vol /tmp/'"$prefix"'-rec: 60 Never'
check "kube's image, scrub command, the volume's path, a 60 s deadline" eval \
    '[ "$rec_shape" = "$want_shape" ] || { echo "# got  $rec_shape"; echo "# want $want_shape"; false; }'
check "the volume is Released while the pod runs" eval \
    'sleep 2; phase_is '"$prefix-rec"' Released'
pod_ends "$prefix-rec" Succeeded
check "the pod Succeeded: it is deleted" wait_for 60 eval '! pod_exists '"$prefix-rec"
check "and the volume is Available again, its claimRef cleared" wait_for 60 eval \
    'phase_is '"$prefix-rec"' Available && [ -z "$(pv_field '"$prefix-rec"' "{.spec.claimRef}")" ]'
check "with the event VolumeRecycled" wait_for 30 eval \
    '[ "$(pv_event '"$prefix-rec"' VolumeRecycled)" = "Volume recycled" ]'

check "the claim of a Recycle NFS volume deleted" delete_claim c-nfs
check "makes its recycler pod, mounting the export, 30 s per GiB past 300 s" wait_for 60 \
    eval 'pod_exists '"$prefix-nfs"' && [ "$(pod_shape '"$prefix-nfs"' | awk "{print \$(NF-3), \$(NF-2), \$(NF-1), \$NF}")" = "vol nfs.example:/export/'"$prefix"' 300 Never" ]'
pod_ends "$prefix-nfs" Failed "scrub failed"
check "the pod Failed: the volume is Failed with the pod's message" wait_for 60 eval \
    'phase_is '"$prefix-nfs"' Failed && [ "$(pv_field '"$prefix-nfs"' "{.status.message}")" = "Recycle failed: failed to recycle volume: scrub failed" ]'
check "with the event VolumeFailedRecycle" wait_for 30 eval \
    '[ "$(pv_event '"$prefix-nfs"' VolumeFailedRecycle)" = "Recycle failed: failed to recycle volume: scrub failed" ]'

# The end state, for persistentvolume-kcm.t: names without the prefix.
if [ -n "${E2E_PV_STATE:-}" ]; then
	{
		kubectl get pvc -n "$ns" -o jsonpath='{range .items[*]}pvc {.metadata.name} {.status.phase} {.spec.volumeName} {.metadata.annotations.pv\.kubernetes\.io/bind-completed} {.metadata.annotations.pv\.kubernetes\.io/bound-by-controller} {.metadata.annotations.volume\.kubernetes\.io/storage-provisioner} {.status.capacity.storage}{"\n"}{end}'
		kubectl get pv -l "sqlkcm-e2e-pv=$prefix" -o jsonpath='{range .items[*]}pv {.metadata.name} {.status.phase} {.spec.claimRef.name} {.metadata.annotations.pv\.kubernetes\.io/bound-by-controller} {.spec.persistentVolumeReclaimPolicy} {.status.message} {.metadata.finalizers}{"\n"}{end}'
		echo "recycler-pod $rec_shape"
		for v in "$prefix-rec" "$prefix-nfs"; do
			echo "events $v $(kubectl get events -n default --field-selector "involvedObject.name=$v" -o jsonpath='{range .items[*]}{.type}/{.reason}/{.message};{end}' | tr ';' '\n' | grep -E '/(VolumeRecycled|VolumeFailedRecycle)/' | sort -u | tr '\n' ';')"
		done
	} | sed "s/$prefix/PREFIX/g; s/$driver/DRIVER/g; s/e2e.sqlkcm.io-PREFIX/DRIVER/g" | sort >"$E2E_PV_STATE"
fi

tap_done
