#!/usr/bin/env bash
# replicaset.t - the ReplicaSet controller on a real control plane (kwok nodes, RBAC on):
# scaling 0 -> 100 -> 10 -> 0, pods deleted by hand replaced, an orphan adopted, a pod
# whose labels change released, two ReplicaSets with overlapping selectors that do not
# fight, readyReplicas and availableReplicas with minReadySeconds, and `sqlkcm plan`.
# e2e: locks replicaset
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-replicaset.XXXXXX")
db=$work/cache.db
ns=rs-$RANDOM
cleanup() {
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# replicaset NAME REPLICAS SELECTOR-LABELS-JSON [MIN-READY]: a ReplicaSet whose template
# carries the selector's labels plus tier=web.
replicaset() {
	python3 - "$@" <<'PY'
import json, sys
name, replicas, sel = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
min_ready = int(sys.argv[4]) if len(sys.argv) > 4 else 0
labels = dict(sel, tier="web")
print(json.dumps({"apiVersion": "apps/v1", "kind": "ReplicaSet",
    "metadata": {"name": name},
    "spec": {"replicas": replicas, "minReadySeconds": min_ready,
             "selector": {"matchLabels": sel},
             "template": {"metadata": {"labels": labels},
                          "spec": {"containers": [{"name": "c", "image": "pause"}]}}}}))
PY
}

# owned RS: the uids of the active pods whose controller is ReplicaSet RS, one per line.
owned() {
	kubectl get pods -n "$ns" -o json | python3 -c '
import json, sys
rs = sys.argv[1]
for p in json.load(sys.stdin)["items"]:
    m = p["metadata"]
    if m.get("deletionTimestamp") or p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
        continue
    for r in m.get("ownerReferences", []):
        if r.get("controller") and r["kind"] == "ReplicaSet" and r["name"] == rs:
            print(m["uid"])' "$1"
}

# has_pods RS N: RS controls exactly N active pods.
has_pods() {
	[ "$(owned "$1" | wc -l)" = "$2" ]
}

# status_is RS FIELD VALUE: status.FIELD of RS is VALUE (absent reads 0).
status_is() {
	local v
	v=$(kubectl get rs -n "$ns" "$1" -o jsonpath="{.status.$2}")
	[ "${v:-0}" = "$3" ]
}

# converged RS N: N pods, and the status says so (replicas and readyReplicas).
converged() {
	has_pods "$1" "$2" && status_is "$1" replicas "$2" && status_is "$1" readyReplicas "$2"
}

wait_for() {
	local seconds=$1
	shift
	cluster_wait_until "$seconds" "$*" "$@"
}

kubectl create namespace "$ns" >/dev/null
sqlkcm_start a --db "$db" --controllers replicaset --kube-api-qps 100 --kube-api-burst 200 -v 2

# --- scaling ----------------------------------------------------------------------------
replicaset web 0 '{"app":"web"}' | kubectl apply -n "$ns" -f - >/dev/null
check "a ReplicaSet of 0 gets observedGeneration and no pods" \
    wait_for 30 eval 'status_is web observedGeneration 1 && has_pods web 0'
kubectl scale rs -n "$ns" web --replicas=100 >/dev/null
check "scaled to 100: 100 pods, all ready" wait_for 90 converged web 100
check "the status counts 100 available and fully labeled" \
    eval 'status_is web availableReplicas 100 && status_is web fullyLabeledReplicas 100'
check "the SuccessfulCreate events are recorded" eval \
    '[ "$(kubectl get events -n "$ns" --field-selector reason=SuccessfulCreate -o name | wc -l)" -ge 1 ]'
kubectl scale rs -n "$ns" web --replicas=10 >/dev/null
check "scaled to 10: 10 pods" wait_for 90 converged web 10
kubectl scale rs -n "$ns" web --replicas=0 >/dev/null
check "scaled to 0: no pods" wait_for 90 converged web 0

# --- replacing and claiming ---------------------------------------------------------------
kubectl scale rs -n "$ns" web --replicas=5 >/dev/null
wait_for 60 converged web 5
victims=$(owned web | head -n 2)
kubectl get pods -n "$ns" -o json | python3 -c '
import json, sys
victims = set(sys.argv[1].split())
for p in json.load(sys.stdin)["items"]:
    if p["metadata"]["uid"] in victims:
        print(p["metadata"]["name"])' "$victims" >"$work/victims"
kubectl delete pods -n "$ns" $(cat "$work/victims") --wait=false >/dev/null
check "pods deleted by hand are replaced" wait_for 60 eval \
    'converged web 5 && ! owned web | grep -qxF -f <(printf "%s\n" $victims)'

# The orphan is ready and costs more to delete than the ReplicaSet's own pods before it
# matches, so that the scale-down the adoption causes takes another pod, not the orphan.
kubectl run orphan -n "$ns" --image=pause --labels=app=pre,tier=web \
    --annotations=controller.kubernetes.io/pod-deletion-cost=1000 >/dev/null
wait_for 60 eval '[ "$(kubectl get pod -n "$ns" orphan -o jsonpath="{.status.phase}")" = Running ]'
kubectl label pod -n "$ns" orphan app=web --overwrite >/dev/null
check "an orphan pod the selector matches is adopted" wait_for 60 eval \
    '[ "$(kubectl get pod -n "$ns" orphan -o jsonpath="{.metadata.ownerReferences[0].name}")" = web ]'
check "after the adoption the ReplicaSet still has 5 pods" wait_for 60 converged web 5

released=$(kubectl get pods -n "$ns" -l app=web -o jsonpath='{.items[0].metadata.name}')
kubectl label pod -n "$ns" "$released" app=gone --overwrite >/dev/null
check "a pod whose labels no longer match is released" wait_for 60 eval \
    '[ -z "$(kubectl get pod -n "$ns" "$released" -o jsonpath="{.metadata.ownerReferences}")" ]'
check "and replaced: the ReplicaSet is back to 5 pods" wait_for 60 converged web 5

# --- overlapping selectors ----------------------------------------------------------------
replicaset left 3 '{"app":"overlap"}' | kubectl apply -n "$ns" -f - >/dev/null
replicaset right 4 '{"app":"overlap"}' | kubectl apply -n "$ns" -f - >/dev/null
check "two ReplicaSets with the same selector each reach their count" wait_for 60 eval \
    'converged left 3 && converged right 4'
before=$( (owned left; owned right) | sort)
sleep 5
after=$( (owned left; owned right) | sort)
check "and do not fight: the same 7 pods five seconds later" test "$before" = "$after"

# --- minReadySeconds ----------------------------------------------------------------------
replicaset slow 2 '{"app":"slow"}' 8 | kubectl apply -n "$ns" -f - >/dev/null
check "with minReadySeconds 8: ready 2 while available is still 0" wait_for 30 eval \
    'status_is slow readyReplicas 2 && status_is slow availableReplicas 0'
check "and 2 available once they have been ready 8 seconds" wait_for 30 \
    status_is slow availableReplicas 2

# --- plan ---------------------------------------------------------------------------------
kubectl scale rs -n "$ns" web --replicas=7 >/dev/null
wait_for 60 converged web 7
sqlkcm_stop a
check "sqlkcm stops with status 0 on SIGTERM" test $? = 0
# Scaled while no controller ran: the cache must show it before plan can.
kubectl scale rs -n "$ns" web --replicas=9 >/dev/null
"$SQLKCM" run --kubeconfig "$cluster/kubeconfig" --db "$db" --controllers '' --secure-port 0 \
    >"$work/mirror.log" 2>&1 &
mirror=$!
wait_for 30 eval '[ "$(sqlite3 "$db" "SELECT desired FROM replicaset_diff WHERE namespace = '"'$ns'"' AND name = '"'web'"'")" = 9 ]'
kill -TERM $mirror
wait $mirror
"$SQLKCM" plan --db "$db" >"$work/plan.out" 2>"$work/plan.err"
check "plan exits 0" test $? = 0
check "plan shows the creations the scale to 9 needs, as JSON lines" python3 -c '
import json, sys
ns = sys.argv[1]
lines = [json.loads(l) for l in open(sys.argv[2])]
creates = [l for l in lines if l["key"] == ns + "/web" and l["action"] == "create"]
assert len(creates) == 2, lines
assert all(c["body"]["metadata"]["generateName"] == "web-" for c in creates)
' "$ns" "$work/plan.out"
check "plan writes nothing to the apiserver" has_pods web 7

tap_done
