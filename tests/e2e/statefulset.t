#!/usr/bin/env bash
# statefulset.t - the StatefulSet controller on a real control plane (kwok nodes, RBAC on):
# a StatefulSet of 5 (OrderedReady) created in order of its ordinals, each once the one
# before is Ready; scaled down to 2 in reverse, one at a time; a rolling update with a
# partition (only the pods at and above it replaced), then without; `kubectl rollout undo`;
# a Parallel StatefulSet with a volume claim template and persistentVolumeClaimRetentionPolicy
# whenScaled Delete: its claims created (one per pod), and on scale-down the condemned
# pods' claims owned by their pods and deleted by the garbage collector.
#
# No storage provisioner runs on the local cluster: the claims stay Pending, and so do the
# pods that mount them (unbound claims are not scheduled); that part uses Parallel and
# asserts on the claims. The apiserver's StorageObjectInUseProtection puts the
# kubernetes.io/pvc-protection finalizer on every claim, which only kube's pvc-protection
# controller removes: a deleted claim stays Terminating, so "deleted" is checked as a
# deletionTimestamp set.
#
# With E2E_STS_CM=kcm the same runs against kube-controller-manager 1.36 (statefulset-kcm.t),
# and E2E_STS_STATE=FILE writes the end state for the comparison.
# e2e: locks statefulset garbagecollector
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_STS_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-statefulset.XXXXXX")
prefix=sts-$RANDOM
ns=$prefix
cleanup() {
	kcm_stop sts
	[ -n "${watch_pid:-}" ] && kill "$watch_pid" 2>/dev/null
	timeout 60 kubectl delete statefulsets -n "$ns" --all --wait=false >/dev/null 2>&1
	timeout 60 kubectl delete pvc -n "$ns" --all --wait=false >/dev/null 2>&1
	timeout 60 kubectl patch pvc -n "$ns" --type=merge \
	    -p '{"metadata":{"finalizers":null}}' $(kubectl get pvc -n "$ns" -o name 2>/dev/null) \
	    >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
if [ "$cm" = kcm ]; then
	kcm_start sts --controllers=statefulset-controller,garbage-collector-controller
else
	sqlkcm_start sts --db "$work/cache.db" --controllers statefulset,garbagecollector -v 2
fi

# A watch of the namespace's pods: each event's pod name and deletionTimestamp, in order.
kubectl get pods -n "$ns" -l app=web -w \
    -o jsonpath='{.metadata.name} {.metadata.deletionTimestamp}{"\n"}' >"$work/watch" 2>/dev/null &
watch_pid=$!

kubectl apply -n "$ns" -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: 5
  serviceName: web
  selector: {matchLabels: {app: web}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: c, image: pause}]
YAML

# sts_field NAME PATH: the StatefulSet's field (jsonpath), absent reads 0.
sts_field() {
	local v
	v=$(kubectl get sts -n "$ns" "$1" -o jsonpath="{$2}")
	echo "${v:-0}"
}
# ready NAME N: N replicas, all ready, and the status is of the current generation.
ready() {
	[ "$(sts_field "$1" .status.readyReplicas)" = "$2" ] &&
	    [ "$(sts_field "$1" .status.replicas)" = "$2" ] &&
	    [ "$(sts_field "$1" .status.observedGeneration)" = "$(sts_field "$1" .metadata.generation)" ]
}
# pod_names: the web pods that exist, by name.
pod_names() {
	kubectl get pods -n "$ns" -l app=web -o jsonpath='{.items[*].metadata.name}' |
	    tr ' ' '\n' | sort | tr '\n' ' '
}
# first_seen [deleting]: the pods in the order the watch first saw them (being deleted),
# past its first $watch_from lines.
watch_from=0
first_seen() {
	if [ "${1:-}" = deleting ]; then
		tail -n +$((watch_from + 1)) "$work/watch" | awk 'NF == 2 && !seen[$1]++ {printf "%s ", $1}'
	else
		tail -n +$((watch_from + 1)) "$work/watch" | awk '!seen[$1]++ {printf "%s ", $1}'
	fi
}

# --- OrderedReady: in order up, in reverse down --------------------------------------------
check "5 pods, all Running and Ready, and the status says so" wait_for 180 ready web 5
check "the pods are web-0 to web-4" test "$(pod_names)" = "web-0 web-1 web-2 web-3 web-4 "
check "they were created in order of their ordinals" \
    test "$(first_seen)" = "web-0 web-1 web-2 web-3 web-4 "
# Each pod was created no earlier than the one before it became Ready (to the second).
in_order() {
	kubectl get pods -n "$ns" -l app=web -o json | python3 -c '
import json, sys
pods = {p["metadata"]["name"]: p for p in json.load(sys.stdin)["items"]}
def ready_at(p):
    for c in p["status"].get("conditions", []):
        if c["type"] == "Ready" and c["status"] == "True":
            return c["lastTransitionTime"]
    return "9999"
for i in range(1, 5):
    a, b = pods["web-%d" % (i - 1)], pods["web-%d" % i]
    if b["metadata"]["creationTimestamp"] < ready_at(a):
        sys.exit("web-%d created at %s, before web-%d was Ready (%s)" % (i,
            b["metadata"]["creationTimestamp"], i - 1, ready_at(a)))
'
}
check "each pod was created once the one before was Ready" in_order
check "the pods have the identity labels, host name and subdomain" eval '
    [ "$(kubectl get pod -n "$ns" web-3 -o jsonpath="{.metadata.labels.statefulset\.kubernetes\.io/pod-name} {.metadata.labels.apps\.kubernetes\.io/pod-index} {.spec.hostname} {.spec.subdomain}")" = "web-3 3 web-3 web" ]'
check "the pods carry the update revision's hash" eval '
    [ "$(kubectl get pods -n "$ns" -l app=web -o jsonpath="{.items[*].metadata.labels.controller-revision-hash}" | tr " " "\n" | sort -u)" = "$(sts_field web .status.updateRevision)" ]'
check "kube's events: Create Pod web-0 in StatefulSet web successful" eval '
    kubectl get events -n "$ns" --field-selector reason=SuccessfulCreate -o jsonpath="{.items[*].message}" |
    grep -q "Create Pod web-0 in StatefulSet web successful"'

watch_from=$(wc -l <"$work/watch")
kubectl scale sts -n "$ns" web --replicas=2 >/dev/null
check "scaled down to 2: web-0 and web-1 remain" \
    wait_for 120 eval 'ready web 2 && [ "$(pod_names)" = "web-0 web-1 " ]'
check "the pods were deleted in reverse order" \
    test "$(first_seen deleting)" = "web-4 web-3 web-2 "

# --- RollingUpdate with a partition, then without; an undo --------------------------------
rev0=$(sts_field web .status.currentRevision)
kubectl patch sts -n "$ns" web --type=merge -p '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}},"template":{"spec":{"containers":[{"name":"c","image":"pause:2"}]}}}}' >/dev/null
hash_of() {
	kubectl get pod -n "$ns" "$1" -o jsonpath='{.metadata.labels.controller-revision-hash}'
}
partitioned() {
	local upd
	upd=$(sts_field web .status.updateRevision)
	[ "$upd" != "$rev0" ] && [ "$(hash_of web-1)" = "$upd" ] && ready web 2 &&
	    [ "$(sts_field web .status.updatedReplicas)" = 1 ]
}
check "with partition 1, web-1 is replaced by the update revision" wait_for 120 partitioned
check "and web-0, below the partition, stays of the current revision" \
    eval '[ "$(hash_of web-0)" = "$rev0" ] && [ "$(sts_field web .status.currentRevision)" = "$rev0" ]'
check "web-1 runs the new image" eval \
    '[ "$(kubectl get pod -n "$ns" web-1 -o jsonpath="{.spec.containers[0].image}")" = pause:2 ]'
kubectl patch sts -n "$ns" web --type=merge -p '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}' >/dev/null
check "without the partition the rollout completes (kubectl rollout status)" \
    kubectl rollout status sts -n "$ns" web --timeout=120s
rev1=$(sts_field web .status.updateRevision)
check "the update revision is now current, every pod of it" eval \
    '[ "$(sts_field web .status.currentRevision)" = "$rev1" ] && [ "$(hash_of web-0)" = "$rev1" ] &&
     [ "$(sts_field web .status.currentReplicas)" = 2 ]'
kubectl rollout undo sts -n "$ns" web >/dev/null 2>&1
undone() {
	[ "$(sts_field web .status.updateRevision)" = "$rev0" ] &&
	    [ "$(sts_field web .status.currentRevision)" = "$rev0" ] &&
	    [ "$(hash_of web-0)" = "$rev0" ] && [ "$(hash_of web-1)" = "$rev0" ] && ready web 2
}
check "kubectl rollout undo rolls back to the first revision" wait_for 120 undone
check "the first revision is renumbered 3" eval \
    '[ "$(kubectl get controllerrevision -n "$ns" "$rev0" -o jsonpath={.revision})" = 3 ]'
check "web-0 runs the first image again" eval \
    '[ "$(kubectl get pod -n "$ns" web-0 -o jsonpath="{.spec.containers[0].image}")" = pause ]'

# --- claims and their retention policy ----------------------------------------------------
kubectl apply -n "$ns" -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: db}}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Delete}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: c, image: pause}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}
YAML
claims() {
	kubectl get pvc -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name}{.metadata.deletionTimestamp}{" "}{end}'
}
live_claims() {
	kubectl get pvc -n "$ns" -o json | python3 -c '
import json, sys
print(" ".join(sorted(c["metadata"]["name"] for c in json.load(sys.stdin)["items"]
                      if not c["metadata"].get("deletionTimestamp"))))'
}
check "a claim per pod: data-db-0, data-db-1, data-db-2" \
    wait_for 60 eval '[ "$(live_claims)" = "data-db-0 data-db-1 data-db-2" ] &&
     [ "$(kubectl get pods -n "$ns" -l app=db -o name | wc -l)" = 3 ]'
check "each pod mounts its claim" eval \
    '[ "$(kubectl get pod -n "$ns" db-1 -o jsonpath="{.spec.volumes[?(@.name==\"data\")].persistentVolumeClaim.claimName}")" = data-db-1 ]'
check "the claims carry the selector's labels and no owner (whenDeleted Retain)" eval \
    '[ "$(kubectl get pvc -n "$ns" data-db-0 -o jsonpath="{.metadata.labels.app}:{.metadata.ownerReferences}")" = db: ]'
check "kube's claim event: Create Claim data-db-0 Pod db-0 in StatefulSet db success" eval '
    kubectl get events -n "$ns" --field-selector reason=SuccessfulCreate -o jsonpath="{.items[*].message}" |
    grep -q "Create Claim data-db-0 Pod db-0 in StatefulSet db success"'
kubectl scale sts -n "$ns" db --replicas=1 >/dev/null
check "scaled to 1 (whenScaled Delete): the condemned pods' claims are deleted, data-db-0 stays" \
    wait_for 120 eval '[ "$(live_claims)" = data-db-0 ] &&
     [ "$(kubectl get pods -n "$ns" -l app=db -o name)" = pod/db-0 ]'
check "data-db-0 has no owner (its pod is in range, whenDeleted Retain)" eval \
    '[ -z "$(kubectl get pvc -n "$ns" data-db-0 -o jsonpath="{.metadata.ownerReferences}")" ]'

# --- the end state, for statefulset-kcm.t -------------------------------------------------
if [ -n "${E2E_STS_STATE:-}" ]; then
	{
		# Revisions by number; the status with revision names as their numbers.
		kubectl get controllerrevisions -n "$ns" -o json | python3 -c '
import json, sys
revs = {r["metadata"]["name"]: r["revision"] for r in json.load(sys.stdin)["items"]}
print("revisions", sorted(revs.values()))
json.dump(revs, open(sys.argv[1], "w"))' "$work/revs.json"
		for s in web db; do
			kubectl get sts -n "$ns" "$s" -o json | python3 -c '
import json, sys
revs = json.load(open(sys.argv[1]))
st = json.load(sys.stdin)["status"]
for k in ("currentRevision", "updateRevision"):
    st[k] = revs.get(st.get(k), st.get(k))
print(sys.argv[2], json.dumps(st, sort_keys=True))' "$work/revs.json" "$s"
		done
		kubectl get pods -n "$ns" -o json | python3 -c '
import json, sys
revs = json.load(open(sys.argv[1]))
for p in sorted(json.load(sys.stdin)["items"], key=lambda p: p["metadata"]["name"]):
    m = p["metadata"]
    print("pod", m["name"], revs.get(m["labels"].get("controller-revision-hash")),
          p["spec"].get("hostname"), p["spec"].get("subdomain"),
          m["labels"].get("apps.kubernetes.io/pod-index"))' "$work/revs.json"
		kubectl get pvc -n "$ns" -o json | python3 -c '
import json, sys
for c in sorted(json.load(sys.stdin)["items"], key=lambda c: c["metadata"]["name"]):
    m = c["metadata"]
    print("claim", m["name"], "deleting" if m.get("deletionTimestamp") else "live",
          sorted(r["kind"] for r in m.get("ownerReferences", [])), m.get("labels"))'
	} >"$E2E_STS_STATE"
fi
tap_done
