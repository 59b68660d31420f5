#!/usr/bin/env bash
# ephemeralvolume.t - the ephemeral volume controller: a pod with a generic ephemeral
# volume gets its claim, <pod>-<volume>, made from the volume's template (its labels,
# annotations and spec) with the pod as controller (blockOwnerDeletion); a claim of that
# name the pod does not own is left alone and the pod gets kube's Warning FailedBinding
# ("... (pod is not owner)", from ephemeral_volume); a claim deleted while its pod lives
# is made again; a pod being deleted gets none. The pods are never scheduled (a
# nodeSelector no node has): the controller does not care, and kwok leaves them alone.
# No pvc-protection runs: the test takes the claims' finalizer off itself.
# With E2E_EPH_CM=kcm the same runs against kube-controller-manager 1.36; with
# E2E_EPH_STATE=FILE the end state goes to FILE (ephemeralvolume-kcm.t compares them).
# e2e: locks ephemeral-volume
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_EPH_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-eph.XXXXXX")
ns=eph-$cm-$RANDOM
cleanup() {
	kcm_stop eph
	local o
	for o in $(kubectl get pods,pvc -n "$ns" -o name 2>/dev/null); do
		kubectl patch "$o" -n "$ns" --type=json \
		    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
	done
	e2e_cleanup "$ns"
	if [ "$tap_failed" = 0 ]; then rm -rf "$work"; else echo "# logs kept in $work"; fi
}
trap cleanup EXIT

# pod NAME [FINALIZERS-LINE]: a pod with one generic ephemeral volume, data.
pod() {
	kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  ${2:-}
spec:
  nodeSelector: {example.com/no-such-node: "true"}
  containers: [{name: c, image: pause}]
  volumes:
  - name: data
    ephemeral:
      volumeClaimTemplate:
        metadata:
          labels: {app: eph}
          annotations: {example.com/from: template}
        spec:
          accessModes: [ReadWriteOnce]
          storageClassName: $ns
          resources: {requests: {storage: 1Gi}}
YAML
}
pvc() { kubectl get pvc "$1" -n "$ns" -o jsonpath="$2" 2>/dev/null; }
has_claim() { [ -n "$(pvc "$1" '{.metadata.uid}')" ]; }

kubectl create namespace "$ns" >/dev/null
if [ "$cm" = kcm ]; then
	kcm_start eph --controllers=ephemeral-volume-controller
else
	sqlkcm_start eph --db "$work/cache.db" --controllers ephemeral-volume -v 2
	check "sqlkcm's caches synced" cluster_wait_until 60 "sqlkcm's caches synced" \
	    grep -q "caches synced" "$work/eph.log"
fi

pod p1
uid=$(kubectl get pod p1 -n "$ns" -o jsonpath='{.metadata.uid}')
check "a pod with an ephemeral volume gets its claim, p1-data" \
    cluster_wait_until 60 "the claim" has_claim p1-data
check "the pod is its controller, blocking its owner's deletion" eval \
    '[ "$(pvc p1-data "{range .metadata.ownerReferences[*]}{.kind}/{.name}/{.uid}/{.controller}/{.blockOwnerDeletion}{end}")" = "Pod/p1/$uid/true/true" ]'
check "it is the template's: labels, annotations, class, size" eval \
    '[ "$(pvc p1-data "{.metadata.labels.app} {.metadata.annotations.example\.com/from} {.spec.storageClassName} {.spec.resources.requests.storage}")" = "eph template $ns 1Gi" ]'

# A claim of that name made before the pod: not the pod's.
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: p2-data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: $ns
  resources: {requests: {storage: 2Gi}}
YAML
pod p2
failed_binding() {
	kubectl get events -n "$ns" --field-selector involvedObject.name=p2,reason=FailedBinding \
	    -o jsonpath='{range .items[*]}{.type} {.source.component}: {.message}{"\n"}{end}' |
	    head -1
}
check "a foreign claim of that name gives the pod kube's FailedBinding" \
    cluster_wait_until 60 "the event" eval \
    '[ "$(failed_binding)" = "Warning ephemeral_volume: ephemeral volume data: PVC $ns/p2-data was not created for pod $ns/p2 (pod is not owner)" ]'
check "and the claim is left as it was" eval \
    '[ -z "$(pvc p2-data "{.metadata.ownerReferences}")" ] && [ "$(pvc p2-data "{.spec.resources.requests.storage}")" = 2Gi ]'

# A claim deleted while its pod lives is made again.
old=$(pvc p1-data '{.metadata.uid}')
kubectl delete pvc p1-data -n "$ns" --wait=false >/dev/null
kubectl patch pvc p1-data -n "$ns" --type=json \
    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
check "a claim deleted while its pod lives is made again" \
    cluster_wait_until 60 "a new claim" eval \
    '[ -n "$(pvc p1-data "{.metadata.uid}")" ] && [ "$(pvc p1-data "{.metadata.uid}")" != "$old" ] &&
     [ -z "$(pvc p1-data "{.metadata.deletionTimestamp}")" ]'

# A pod being deleted (a finalizer of the test's holds it) whose claim goes gets no new
# one.
pod p3 "finalizers: [example.com/sqlkcm-e2e]"
cluster_wait_until 60 "the claim" has_claim p3-data
kubectl delete pod p3 -n "$ns" --wait=false >/dev/null
kubectl delete pvc p3-data -n "$ns" --wait=false >/dev/null
kubectl patch pvc p3-data -n "$ns" --type=json \
    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
cluster_wait_until 30 "the claim gone" eval '! has_claim p3-data'
sleep 3
check "a pod being deleted whose claim goes gets no new one" eval '! has_claim p3-data'
# The end state, the namespace written NS (ephemeralvolume-kcm.t compares kcm's and
# sqlkcm's): each claim's owners, labels, annotation, class, size and whether it is being
# deleted; the reasons, types, sources and messages of the pods' events (but the
# scheduler's, whose words depend on when it tried).
if [ -n "${E2E_EPH_STATE:-}" ]; then
	claim_fields='{range .items[*]}{.metadata.name} owners={range .metadata.ownerReferences[*]}'
	claim_fields+='{.apiVersion}/{.kind}/{.name}/{.controller}/{.blockOwnerDeletion} {end}'
	claim_fields+='labels={.metadata.labels} from={.metadata.annotations.example\.com/from}'
	claim_fields+=' class={.spec.storageClassName} modes={.spec.accessModes}'
	claim_fields+=' size={.spec.resources.requests.storage}'
	claim_fields+=' deleting={.metadata.deletionTimestamp}{"\n"}{end}'
	event_fields='{range .items[*]}{.involvedObject.name} {.type} {.reason}'
	event_fields+=' {.source.component}: {.message}{"\n"}{end}'
	{
		kubectl get pvc -n "$ns" -o jsonpath="$claim_fields" |
		    sed 's/deleting=.\+/deleting=yes/' | sort
		kubectl get events -n "$ns" --field-selector \
		    involvedObject.kind=Pod,reason!=FailedScheduling -o jsonpath="$event_fields" |
		    sort -u
	} | sed "s/$ns/NS/g" >"$E2E_EPH_STATE"
fi
if [ "$cm" = sqlkcm ]; then
	check "no sync failed but p2's" eval \
	    '! grep -E "level=error|^E" "$work/eph.log" | grep -v "/p2"'
fi
tap_done
