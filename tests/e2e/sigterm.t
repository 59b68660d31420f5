#!/usr/bin/env bash
# sigterm.t - SIGTERM in the middle of a scale-up to 300 pods: sqlkcm lets its syncs in
# flight finish (bounded), releases its Lease, commits, checkpoints the write-ahead log
# and exits 0; restarted on the same database it converges to exactly 300 pods without
# ever having more (seen by a watch of our own, as replicaset-crash.t).
# e2e: locks replicaset
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-sigterm.XXXXXX")
db=$work/cache.db
ns=sigterm-$RANDOM
pod_watcher=
cleanup() {
	[ -n "$pod_watcher" ] && kill "$pod_watcher" 2>/dev/null
	e2e_cleanup "$ns"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
big_replicaset "$ns"

watch_owned_pods "$ns" big "$work"

# Leader election on, in the test's namespace: the stop releases the Lease, so the
# restart acquires it at once. The lease is short (a renewal must succeed within 3s), so
# renewals starved by the scale-up's work would show: the leader would exit 1.
start() {
	sqlkcm_start "$1" --db "$db" --controllers replicaset -v 2 --leader-elect \
	    --leader-elect-resource-namespace "$ns" --leader-elect-lease-duration 4s \
	    --leader-elect-renew-deadline 3s --leader-elect-retry-period 1s
}
now() {
	cat "$work/now" 2>/dev/null || echo 0
}

start first
kubectl scale rs -n "$ns" big --replicas=300 >/dev/null
# At the default 20 requests a second, 300 creations take some 15s: stop after 40.
check "the scale-up is under way" cluster_wait_until 60 "40 pods" eval '[ "$(now)" -ge 40 ]'
sqlkcm_stop first TERM
status=$?
sleep 2	# our watch may lag the last creations by a moment
at_stop=$(now)
check "SIGTERM in the middle of the scale-up: exit status 0" test "$status" = 0
check "it stopped in the middle ($at_stop of 300 pods)" test "$at_stop" -lt 300
check "it kept its lease through the scale-up" eval '! grep -q "leader election lost" \
    "$work/first.log"'
check "it logged the signal and its stop" eval 'grep -q "received signal 15: stopping" \
    "$work/first.log" && grep -q "^I.* stopped: " "$work/first.log"'
check "it released its Lease" grep -q "released the lease $ns/sqlkcm" "$work/first.log"
check "the write-ahead log was checkpointed into the database" \
    eval '[ ! -s "$db-wal" ]'
check "PRAGMA integrity_check is ok after the stop" \
    test "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok

sleep 3
check "nothing creates pods while it is down" test "$(now)" = "$at_stop"
start second
check "restarted, it takes the released Lease at once" cluster_wait_until 5 "the lease" \
    eval 'grep -q "acquired the lease" "$work/second.log"'
check "and converges to exactly 300 pods" cluster_wait_until 180 "300 pods" eval \
    '[ "$(now)" = 300 ] && \
     [ "$(kubectl get rs -n "$ns" big -o jsonpath="{.status.replicas}")" = 300 ]'
sleep 3
check "and stays at 300" test "$(now)" = 300
check "at no moment were there more than 300 (max $(cat "$work/max"))" \
    test "$(cat "$work/max")" -le 300
sqlkcm_stop second TERM
check "the second stops with status 0" test $? = 0
check "having kept its lease throughout" eval '! grep -q "leader election lost" \
    "$work/second.log"'
check "PRAGMA integrity_check is ok at the end" \
    test "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok

tap_done
