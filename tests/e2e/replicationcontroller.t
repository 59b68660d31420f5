#!/usr/bin/env bash
# replicationcontroller.t - ReplicationControllers on a real control plane, by kubectl as a
# user would: one created with 3 replicas, scaled up to 5 and down to 2, its status
# counted, an orphan its selector matches adopted (and the surplus deleted), a pod whose
# labels no longer match released and replaced, and its events recorded by kube's
# component name. Every expected value is kube-controller-manager 1.36's:
# E2E_RC_CM=kcm runs the same checks against it instead of sqlkcm
# (replicationcontroller-kcm.t).
# e2e: locks replicationcontroller
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-rc.XXXXXX")
ns=rc-$RANDOM
cm=${E2E_RC_CM:-sqlkcm}
case $cm in
sqlkcm | kcm) ;;
*) echo "E2E_RC_CM must be sqlkcm or kcm, not $cm" >&2; exit 2 ;;
esac
echo "# controller manager: $cm; namespace $ns"

cleanup() {
	kcm_stop rc
	timeout 60 kubectl delete rc -n "$ns" --all --cascade=orphan --wait=false \
	    --request-timeout=30s >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# owned: the names of the active pods whose controller is the ReplicationController web.
owned() {
	kubectl get pods -n "$ns" -o json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    m = p["metadata"]
    if m.get("deletionTimestamp") or p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
        continue
    for r in m.get("ownerReferences", []):
        if r.get("controller") and r["kind"] == "ReplicationController" and r["name"] == "web" \
                and r["apiVersion"] == "v1" and r.get("blockOwnerDeletion"):
            print(m["name"])'
}
has_pods() {
	local n
	n=$(owned | wc -l)
	[ "$n" = "$1" ] || { echo "the ReplicationController controls $n pods, not $1"; return 1; }
}
# status_is FIELD VALUE: status.FIELD of web is VALUE (absent reads 0).
status_is() {
	local v
	v=$(kubectl get rc -n "$ns" web -o jsonpath="{.status.$1}")
	[ "${v:-0}" = "$2" ] || { echo "status.$1 is ${v:-absent}, not $2"; return 1; }
}
no_terminating_replicas() {
	local v
	v=$(kubectl get rc -n "$ns" web -o jsonpath='{.status.terminatingReplicas}')
	[ -z "$v" ] || { echo "status.terminatingReplicas is $v"; return 1; }
}
# only_owned_web_pods N: N active pods labelled app=web, and all of them web's.
only_owned_web_pods() {
	local n
	n=$(kubectl get pods -n "$ns" -l app=web -o name | wc -l)
	[ "$n" = "$1" ] || { echo "$n pods labelled app=web, not $1"; return 1; }
	has_pods "$1"
}
# released POD: POD has no owner reference and keeps its labels.
released() {
	local refs
	refs=$(kubectl get pod -n "$ns" "$1" -o jsonpath='{.metadata.ownerReferences}')
	[ -z "$refs" ] || { echo "$1 still has owners: $refs"; return 1; }
}
# event_from REASON: an Event of REASON about web, from kube's component name.
event_from() {
	kubectl get events -n "$ns" -o json | python3 -c '
import json, sys
reason = sys.argv[1]
for e in json.load(sys.stdin)["items"]:
    o = e["involvedObject"]
    if e["reason"] == reason and o["kind"] == "ReplicationController" and o["name"] == "web":
        src = e.get("source", {}).get("component") or e.get("reportingComponent")
        if src == "replication-controller":
            sys.exit(0)
        sys.exit("a %s event from %r" % (reason, src))
sys.exit("no %s event about web" % reason)' "$1"
}

kubectl create namespace "$ns" >/dev/null
if [ "$cm" = kcm ]; then
	kcm_start rc --controllers=replicationcontroller --v=2
else
	sqlkcm_start rc --db "$work/cache.db" --controllers replicationcontroller -v 2
	wait_for 60 grep -q 'controller=replicationcontroller: caches synced' "$work/rc.log" \
	    >/dev/null
fi

kubectl apply -n "$ns" -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ReplicationController
metadata:
  name: web
spec:
  replicas: 3
  selector:
    app: web
  template:
    metadata:
      labels:
        app: web
        tier: front
    spec:
      containers:
      - name: c
        image: pause
YAML
check "a new ReplicationController gets its 3 pods" wait_for 60 has_pods 3
counted() {
	status_is replicas 3 && status_is readyReplicas 3 && status_is availableReplicas 3 &&
	    status_is fullyLabeledReplicas 3 && status_is observedGeneration 1
}
check "its status counts 3 replicas, 3 ready, 3 available" wait_for 60 counted
check "its status has no terminatingReplicas (the ReplicationController API has none)" \
    no_terminating_replicas
check "the creations are recorded as SuccessfulCreate by replication-controller" \
    wait_for 30 event_from SuccessfulCreate

kubectl scale rc -n "$ns" web --replicas=5 >/dev/null
check "scaled up to 5" wait_for 60 has_pods 5
kubectl scale rc -n "$ns" web --replicas=2 >/dev/null
check "scaled down to 2" wait_for 60 has_pods 2
check "the deletions are recorded as SuccessfulDelete by replication-controller" \
    wait_for 30 event_from SuccessfulDelete
check "its status follows: 2 replicas" wait_for 60 status_is replicas 2

# An orphan the selector matches is adopted; the ReplicationController then has one too
# many, and deletes one.
kubectl run -n "$ns" stray --image=pause --labels=app=web,tier=front >/dev/null
check "an orphan the selector matches is adopted, and the surplus deleted" \
    wait_for 60 only_owned_web_pods 2

# A pod whose labels stop matching is released, and replaced.
victim=$(owned | head -n 1)
kubectl label pod -n "$ns" "$victim" app=other --overwrite >/dev/null
check "a pod whose labels no longer match is released" wait_for 60 released "$victim"
check "and replaced: the ReplicationController controls 2 pods again" wait_for 60 has_pods 2
check "the released pod stays (nothing deletes it)" \
    kubectl get pod -n "$ns" "$victim" -o name

tap_done
