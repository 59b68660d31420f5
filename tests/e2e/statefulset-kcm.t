#!/usr/bin/env bash
# statefulset-kcm.t - kube-controller-manager 1.36's statefulset-controller and sqlkcm's end
# in the same states: statefulset.t's scenario (ordered creation and scale-down, a rolling
# update with a partition then without, an undo, claims with whenScaled Delete) runs under
# each (with each one's garbage collector), every check of it passing under both, and their
# end states are compared: the statuses, the revisions by number, each pod's revision,
# host name, subdomain and index, each claim's state, owners and labels.
#
# Revision names differ between the two: kube hashes its Go encoding of the StatefulSet,
# which sqlkcm cannot reproduce (see src/history.h); that is why the states name revisions
# by their numbers. Then the hand-over: a StatefulSet started under kube-controller-manager
# is handed to sqlkcm, which finds kube's revision by its data and keeps it: no new
# revision, kube's pod stays, and the pod sqlkcm adds on a scale-up carries kube's hash.
# e2e: locks statefulset garbagecollector
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-statefulset-kcm.XXXXXX")
ns=stsk-$RANDOM
cleanup() {
	kcm_stop stsk
	timeout 60 kubectl delete statefulsets -n "$ns" --all --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT
run_under_each statefulset.t E2E_STS_CM E2E_STS_STATE
check "sqlkcm ends in kube-controller-manager's state (statuses, revisions, pods, claims)" \
    diff "$work/kcm.state" "$work/sqlkcm.state"

# The hand-over: kube's revision kept.
kubectl create namespace "$ns" >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: hand}
spec:
  replicas: 1
  serviceName: hand
  selector: {matchLabels: {app: hand}}
  template:
    metadata: {labels: {app: hand}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: c, image: pause, env: [{name: A, value: "<&>"}]}]
YAML
ready() {
	[ "$(kubectl get sts -n "$ns" hand -o jsonpath='{.status.readyReplicas}')" = "$1" ]
}
kcm_start stsk --controllers=statefulset-controller
check "kube-controller-manager runs the StatefulSet's pod" wait_for 120 ready 1
kcm_stop stsk
revs_before=$(kubectl get controllerrevisions -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name} {.revision}{"\n"}{end}')
pod_before=$(kubectl get pod -n "$ns" hand-0 -o jsonpath='{.metadata.uid}')
kube_hash=$(kubectl get pod -n "$ns" hand-0 -o jsonpath='{.metadata.labels.controller-revision-hash}')
sqlkcm_start stsk --db "$work/cache.db" --controllers statefulset -v 2
kubectl scale sts -n "$ns" hand --replicas=2 >/dev/null
check "sqlkcm adds hand-1 after the hand-over" wait_for 120 ready 2
revs_after=$(kubectl get controllerrevisions -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name} {.revision}{"\n"}{end}')
check "sqlkcm keeps kube's revision, its name and number ($revs_before)" test "$revs_before" = "$revs_after"
check "sqlkcm's new pod carries kube's hash ($kube_hash)" eval \
    '[ "$(kubectl get pod -n "$ns" hand-1 -o jsonpath="{.metadata.labels.controller-revision-hash}")" = "$kube_hash" ]'
check "kube's pod stays" eval \
    '[ "$(kubectl get pod -n "$ns" hand-0 -o jsonpath="{.metadata.uid}")" = "$pod_before" ]'
check "the status names kube's revision current and update" eval \
    '[ "$(kubectl get sts -n "$ns" hand -o jsonpath="{.status.currentRevision} {.status.updateRevision}")" = "$kube_hash $kube_hash" ]'
sqlkcm_stop stsk
tap_done
