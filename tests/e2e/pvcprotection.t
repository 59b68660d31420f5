#!/usr/bin/env bash
# pvcprotection.t - the PersistentVolumeClaim protection controller: a claim that lost its
# kubernetes.io/pvc-protection finalizer gets it back; a claim being deleted is kept while
# a scheduled pod uses it, and goes once the pod is gone; one only an unscheduled pod
# names goes at once; one a finished pod (Succeeded, still there) names is kept, as kube
# keeps it; a generic ephemeral volume's claim (<pod>-<volume>, the pod its controller)
# is kept while its pod is scheduled, and goes once the pod is shut down (deleted with a
# grace period of 0, a finalizer of the test's still holding it), while a claim of that name the
# pod does not own goes at once. No binder runs: the claims stay Pending, which changes
# nothing here. The pods are put on a kwok node by name (no scheduler involved).
# With E2E_PVCP_CM=kcm the same runs against kube-controller-manager 1.36
# (pvcprotection-kcm.t).
# e2e: locks pvc-protection
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_PVCP_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-pvcp.XXXXXX")
ns=pvcp-$cm-$RANDOM
node=$(kubectl get nodes -l type=kwok -o jsonpath='{.items[0].metadata.name}')
cleanup() {
	kcm_stop pvcp
	local o
	for o in $(kubectl get pods,pvc -n "$ns" -o name 2>/dev/null); do
		kubectl patch "$o" -n "$ns" --type=json \
		    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
	done
	e2e_cleanup "$ns"
	if [ "$tap_failed" = 0 ]; then rm -rf "$work"; else echo "# logs kept in $work"; fi
}
trap cleanup EXIT

# claim NAME [OWNER-POD-UID]: a claim, controlled by that pod if given.
claim() {
	local owner=""
	[ -n "${2:-}" ] && owner="ownerReferences: [{apiVersion: v1, kind: Pod, name: user, uid: $2, controller: true}]"
	kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: $1
  $owner
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $ns
  resources: {requests: {storage: 1Gi}}
YAML
}
# pod NAME NODE-LINE VOLUME-YAML [FINALIZERS-LINE]: a pod with one volume.
pod() {
	kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  ${4:-}
spec:
  $2
  restartPolicy: Never
  containers: [{name: c, image: pause}]
  volumes: [$3]
YAML
}
finalizers() { kubectl get pvc "$1" -n "$ns" -o jsonpath='{.metadata.finalizers}'; }
deleting() { [ -n "$(kubectl get pvc "$1" -n "$ns" -o jsonpath='{.metadata.deletionTimestamp}')" ]; }
gone() { ! kubectl get pvc "$1" -n "$ns" >/dev/null 2>&1; }
protected='["kubernetes.io/pvc-protection"]'
# kept NAME: being deleted, still with its finalizer, a few seconds after the deletion.
kept() { sleep 3; deleting "$1" && [ "$(finalizers "$1")" = "$protected" ]; }

kubectl create namespace "$ns" >/dev/null
if [ "$cm" = kcm ]; then
	kcm_start pvcp --controllers=persistentvolumeclaim-protection-controller
else
	sqlkcm_start pvcp --db "$work/cache.db" --controllers pvc-protection -v 2
	check "sqlkcm's caches synced" cluster_wait_until 60 "sqlkcm's caches synced" \
	    grep -q "caches synced" "$work/pvcp.log"
fi

claim a
check "a new claim has the finalizer (the admission plugin's)" \
    cluster_wait_until 30 "the finalizer" eval '[ "$(finalizers a)" = "$protected" ]'
kubectl patch pvc a -n "$ns" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' \
    >/dev/null
check "a claim that lost it gets it back" \
    cluster_wait_until 30 "the finalizer back" eval '[ "$(finalizers a)" = "$protected" ]'

# In use by a running pod: kept until the pod is gone.
pod runner "nodeName: $node" "{name: v, persistentVolumeClaim: {claimName: a}}"
check "the pod using it runs" cluster_wait_until 60 "the pod running" \
    eval '[ "$(kubectl get pod runner -n "$ns" -o jsonpath="{.status.phase}")" = Running ]'
kubectl delete pvc a -n "$ns" --wait=false >/dev/null
check "a claim a running pod uses, being deleted, is kept" kept a
kubectl delete pod runner -n "$ns" --grace-period=0 --force >/dev/null 2>&1
check "once the pod is gone, the claim goes" cluster_wait_until 30 "the deletion" gone a

# Named only by a pod no scheduler placed: not in use.
claim b
pod waiting "nodeSelector: {example.com/no-such-node: \"true\"}" \
    "{name: v, persistentVolumeClaim: {claimName: b}}"
check "the claim has its finalizer" \
    cluster_wait_until 30 "the finalizer" eval '[ "$(finalizers b)" = "$protected" ]'
kubectl delete pvc b -n "$ns" --wait=false >/dev/null
check "a claim only an unscheduled pod names goes at once" \
    cluster_wait_until 30 "the deletion" gone b

# Named by a finished pod still there: kept (kube counts every scheduled pod).
claim c
pod finished "nodeName: $node" "{name: v, persistentVolumeClaim: {claimName: c}}"
cluster_wait_until 60 "the pod running" \
    eval '[ "$(kubectl get pod finished -n "$ns" -o jsonpath="{.status.phase}")" = Running ]'
kubectl patch pod finished -n "$ns" --subresource=status --type=merge \
    -p '{"status":{"phase":"Succeeded"}}' >/dev/null
check "the pod has finished" eval \
    '[ "$(kubectl get pod finished -n "$ns" -o jsonpath="{.status.phase}")" = Succeeded ]'
kubectl delete pvc c -n "$ns" --wait=false >/dev/null
check "a claim a finished pod names, being deleted, is kept" kept c

# A generic ephemeral volume's claim, made by hand as the ephemeral-volume controller
# would: <pod>-<volume>, controlled by the pod. The pod is bound to a node no kwok runs
# (only its being scheduled counts) and holds a finalizer of the test's, so that deleting
# it with a grace period of 0 leaves it there, shut down. A change to the claim then
# makes the controller look again (nothing in the pod's update does, for kube either).
pod eph "nodeName: $ns-no-such-node" \
    "{name: data, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], storageClassName: $ns, resources: {requests: {storage: 1Gi}}}}}}" \
    "finalizers: [example.com/sqlkcm-e2e]"
uid=$(kubectl get pod eph -n "$ns" -o jsonpath='{.metadata.uid}')
claim eph-data "$uid"
cluster_wait_until 30 "the finalizer" eval '[ "$(finalizers eph-data)" = "$protected" ]'
kubectl delete pvc eph-data -n "$ns" --wait=false >/dev/null
check "an ephemeral volume's claim, its pod scheduled, is kept" kept eph-data
kubectl delete pod eph -n "$ns" --grace-period=0 --force --wait=false >/dev/null 2>&1
check "the pod is shut down (deleted, grace period 0), still there" eval \
    '[ "$(kubectl get pod eph -n "$ns" -o jsonpath="{.metadata.deletionGracePeriodSeconds}")" = 0 ]'
kubectl annotate pvc eph-data -n "$ns" example.com/touched=1 >/dev/null 2>&1
check "once its pod is shut down, the claim goes" \
    cluster_wait_until 30 "the deletion" gone eph-data

# The same name, not owned by the pod: not the pod's claim.
pod other "nodeName: $node" \
    "{name: data, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], storageClassName: $ns, resources: {requests: {storage: 1Gi}}}}}}"
claim other-data
cluster_wait_until 30 "the finalizer" eval '[ "$(finalizers other-data)" = "$protected" ]'
kubectl delete pvc other-data -n "$ns" --wait=false >/dev/null
check "a claim of that name the pod does not own goes at once" \
    cluster_wait_until 30 "the deletion" gone other-data
if [ "$cm" = sqlkcm ]; then
	check "no sync failed" eval '! grep -E "level=error|^E" "$work/pvcp.log"'
fi
tap_done
