#!/usr/bin/env bash
# leader.t - two sqlkcm with leader election (lease 4s, renew deadline 3s, retry 1s), each
# with its own database, on one ReplicaSet: only the holder of the Lease acts, the other
# keeps a warm cache and creates nothing; kill -9 the leader and the other takes over
# within the lease duration; SIGTERM the leader and it releases the Lease, so the other
# takes over within a retry period or two; a Lease taken from under the leader makes it
# stop and exit 1.
# e2e: locks replicaset
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-leader.XXXXXX")
ns=leader-$RANDOM
cleanup() {
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# The Lease lives in the test's namespace, so no other test's sqlkcm competes for it.
elect=(--leader-elect --leader-elect-lease-duration 4s --leader-elect-renew-deadline 3s
	--leader-elect-retry-period 1s --leader-elect-resource-namespace "$ns"
	--leader-elect-resource-name sqlkcm)

# start NAME DB: a candidate.
start() {
	sqlkcm_start "$1" --db "$work/$2.db" --controllers replicaset -v 5 "${elect[@]}"
}

# identity NAME: the identity NAME elects with, from its log.
identity() {
	sed -n 's/.*attempting to acquire the lease .* as \(.*\)$/\1/p' "$work/$1.log" | head -n1
}

# holder: the Lease's holderIdentity now.
holder() {
	kubectl get lease -n "$ns" sqlkcm -o jsonpath='{.spec.holderIdentity}' 2>/dev/null
}

# pods: how many active pods the ReplicaSet controls.
pods() {
	kubectl get pods -n "$ns" -l app=web -o json | python3 -c '
import json, sys
print(sum(1 for p in json.load(sys.stdin)["items"]
          if not p["metadata"].get("deletionTimestamp")
          and any(r.get("controller") and r["name"] == "web"
                  for r in p["metadata"].get("ownerReferences", []))))'
}

# created NAME: NAME's log shows a pod created in the namespace (client lines at -v 5).
created() {
	grep -q "POST .*/api/v1/namespaces/$ns/pods code=201" "$work/$1.log"
}

# started NAME: NAME has started its controllers.
started() {
	grep -q "controller=replicaset: caches synced, starting workers" "$work/$1.log"
}

# now_ms: the time in milliseconds.
now_ms() {
	date +%s%3N
}

kubectl create namespace "$ns" >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
spec:
  replicas: 0
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: c, image: pause}]
EOF

# --- one leader, one standby ---------------------------------------------------------------
start a a
check "the first instance acquires the Lease" cluster_wait_until 20 "a holds the lease" \
    eval '[ -n "$(identity a)" ] && [ "$(holder)" = "$(identity a)" ]'
start b b
check "the second instance tries and waits as a standby" cluster_wait_until 20 \
    "b is a candidate" eval 'grep -q "not acquired (held by another)" "$work/b.log"'
check "the standby's cache is warm: its informers listed" cluster_wait_until 20 \
    "b synced" eval '[ "$(sqlite3 "$work/b.db" "SELECT count(*) FROM informers WHERE
        resource_version IS NOT NULL" 2>/dev/null)" -ge 2 ]'
kubectl scale rs -n "$ns" web --replicas=5 >/dev/null
check "the leader creates the 5 pods" cluster_wait_until 30 "5 pods" eval '[ "$(pods)" = 5 ]'
check "the Lease names the leader" test "$(holder)" = "$(identity a)"
check "the leader's log shows it created them" created a
check "the standby never started its controllers" eval '! started b'
check "the standby created nothing" eval '! created b'
sleep 3
check "and, a few renewals later, nothing still" eval '! started b && ! created b &&
    [ "$(pods)" = 5 ]'

# --- kill -9 the leader: the standby takes over once the lease has expired ----------------
killed=$(now_ms)
sqlkcm_stop a KILL
kubectl scale rs -n "$ns" web --replicas=8 >/dev/null
check "after kill -9 of the leader the standby takes the Lease" cluster_wait_until 15 \
    "b holds the lease" eval '[ "$(holder)" = "$(identity b)" ]'
took=$(($(now_ms) - killed))
# It waits the lease duration (4s) from the last renewal it saw, plus up to 2.2 retry
# periods (1s each) of jittered polling.
check "within the lease duration plus its polling (${took}ms <= 7500ms)" test "$took" -le 7500
check "and only after the lease expired (${took}ms >= 2500ms)" test "$took" -ge 2500
check "the new leader creates the 3 more pods" cluster_wait_until 20 "8 pods" \
    eval '[ "$(pods)" = 8 ]'
check "leaseTransitions counts the takeover" test \
    "$(kubectl get lease -n "$ns" sqlkcm -o jsonpath='{.spec.leaseTransitions}')" = 1

# --- SIGTERM the leader: it releases the Lease and the standby takes over at once ---------
start a2 a
check "the restarted instance waits as a standby" cluster_wait_until 20 "a2 is a candidate" \
    eval 'grep -q "not acquired (held by another)" "$work/a2.log"'
stopping=$(now_ms)
sqlkcm_stop b TERM
check "the leader stops on SIGTERM with status 0" test $? = 0
check "it released the Lease" grep -q "released the lease $ns/sqlkcm" "$work/b.log"
check "the standby takes the released Lease" cluster_wait_until 10 "a2 holds the lease" \
    eval '[ "$(holder)" = "$(identity a2)" ]'
took=$(($(now_ms) - stopping))
# Released, it is free at once: the standby's next attempt (within 2.2 retry periods)
# takes it, well before the 4s a lease takes to expire.
check "within a few seconds, before the lease could expire (${took}ms < 3500ms)" \
    test "$took" -lt 3500
kubectl scale rs -n "$ns" web --replicas=10 >/dev/null
check "the new leader acts" cluster_wait_until 20 "10 pods" eval '[ "$(pods)" = 10 ]'

# --- a Lease taken from under the leader: it stops leading and exits 1 --------------------
# steal: replaces the Lease's holder (a conditional update; retried on a conflict with a
# renewal).
steal() {
	kubectl get lease -n "$ns" sqlkcm -o json | python3 -c '
import json, sys
l = json.load(sys.stdin)
l["spec"]["holderIdentity"] = "intruder"
l["spec"]["leaseDurationSeconds"] = 30
json.dump(l, sys.stdout)' | kubectl replace -f -
}
check "the Lease is taken by hand" cluster_wait_until 10 "the Lease replaced" steal
pid=$(cat "$(sqlkcm_pidfile a2)")
check "the leader whose Lease was taken exits" cluster_wait_until 10 "a2 exits" \
    eval '! kill -0 "$pid" 2>/dev/null'
sqlkcm_stop a2 TERM
check "with status 1" test $? = 1
check "saying it lost the lease" grep -q "leader election lost" "$work/a2.log"
check "and did not touch the intruder's Lease" test "$(holder)" = intruder

# --- with no controller there is nothing to elect ------------------------------------------
sqlkcm_start mirror --db "$work/mirror.db" --controllers '' "${elect[@]}"
check "a mirror (--controllers '') takes no lease" cluster_wait_until 20 "mirror runs" \
    eval 'grep -q "leader election is not needed" "$work/mirror.log"'
sqlkcm_stop mirror TERM
check "and stops with status 0" test $? = 0

tap_done
