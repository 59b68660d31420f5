#!/usr/bin/env bash
# replicaset-crash.t - kill -9 sqlkcm at 100 random moments while it scales a ReplicaSet
# to 1000, restarting it each time on the same database: at the end exactly 1000 pods, at
# no moment more than 1000 (seen by a watch of our own), and the database intact.
# e2e: locks replicaset
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-crash.XXXXXX")
db=$work/cache.db
ns=crash-$RANDOM
pod_watcher=
cleanup() {
	[ -n "$pod_watcher" ] && kill "$pod_watcher" 2>/dev/null
	e2e_cleanup "$ns"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
big_replicaset "$ns"

watch_owned_pods "$ns" big "$work"

start() {
	sqlkcm_start crash --db "$db" --controllers replicaset -v 2
}
start
kubectl scale rs -n "$ns" big --replicas=1000 >/dev/null
kills=0
for i in $(seq 100); do
	# A random moment: 0.3 to 2.3 seconds of work, then kill -9.
	sleep "$(python3 -c 'import random; print(round(random.uniform(0.3, 2.3), 2))')"
	sqlkcm_stop crash KILL
	kills=$((kills + 1))
	start
done
check "sqlkcm was killed with SIGKILL 100 times while scaling" test "$kills" = 100
check "the ReplicaSet ends with exactly 1000 pods" cluster_wait_until 240 "1000 pods" eval \
    '[ "$(cat "$work/now" 2>/dev/null)" = 1000 ] && \
     [ "$(kubectl get rs -n "$ns" big -o jsonpath="{.status.replicas}")" = 1000 ]'
sleep 3
check "and stays at 1000" test "$(cat "$work/now")" = 1000
check "at no moment did it have more than 1000" test "$(cat "$work/max")" -le 1000
check "the cache equals a fresh LIST" cache_converges -n "$ns" "$db" 60 pods replicasets
sqlkcm_stop crash
check "the last sqlkcm stops with status 0" test $? = 0
check "PRAGMA integrity_check is ok" test "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok

tap_done
