#!/usr/bin/env bash
# faults.t - what the ReplicaSet controller survives on the real control plane, each fault
# ending with the ReplicaSet at its size, never above it (a watch of our own counts the
# pods), the cache equal to a fresh LIST and PRAGMA integrity_check ok:
#   1. kube-apiserver killed (SIGKILL) and started again during a 1000-pod scale-up;
#   2. while sqlkcm is frozen (SIGSTOP), 50 pods deleted, etcd compacted past its
#      resourceVersion and kube-apiserver restarted: the resumed watch gets 410, and the
#      relist's deletions reach the controller, which makes the 50 again;
#   3. the cache file replaced by garbage while sqlkcm is stopped: refused with a message
#      naming the file, the file left as it was; rebuilt by relisting with --rebuild-cache.
# It restarts kube-apiserver, which every test beside it would feel: it runs alone (no
# locks line).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-faults.XXXXXX")
db=$work/cache.db
ns=faults-$RANDOM
pod_watcher=
cleanup() {
	[ -n "$pod_watcher" ] && kill "$pod_watcher" 2>/dev/null
	[ -f "$(sqlkcm_pidfile faults)" ] && kill -CONT "$(cat "$(sqlkcm_pidfile faults)")" 2>/dev/null
	e2e_cleanup "$ns"
}
trap cleanup EXIT

replicas() { kubectl get rs -n "$ns" big -o jsonpath='{.status.replicas}'; }
# converged N: N live pods by our own watch, and the ReplicaSet's status says so.
converged() { [ "$(cat "$work/now" 2>/dev/null)" = "$1" ] && [ "$(replicas)" = "$1" ]; }
integrity() { test "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok; }
etcdctl() { "$(dirname "$(command -v kubectl)")/etcdctl" --endpoints "$(cat "$cluster/etcd-endpoint")" "$@"; }

kubectl create namespace "$ns" >/dev/null
big_replicaset "$ns"
watch_owned_pods "$ns" big "$work"
start() { sqlkcm_start faults --db "$db" --controllers replicaset --kube-api-qps 100 --kube-api-burst 200 -v 2; }
start
cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/faults.log"

# 1. kube-apiserver killed during a scale-up.
kubectl scale rs -n "$ns" big --replicas=1000 >/dev/null
cluster_wait_until 60 "the first 200 pods" eval '[ "$(cat "$work/now" 2>/dev/null || echo 0)" -ge 200 ]'
check "kube-apiserver is killed and started again mid scale-up" \
	"$top/contrib/cluster/restart" --kill "$cluster" kube-apiserver
check "the scale-up ends at exactly 1000 pods" cluster_wait_until 240 "1000 pods" converged 1000
check "the cache equals a fresh LIST" cache_converges -n "$ns" "$db" 60 pods replicasets
check "at no moment were there more than 1000 pods" test "$(cat "$work/max")" -le 1000
check "sqlkcm kept running through it" kill -0 "$(cat "$(sqlkcm_pidfile faults)")"

# 2. A relist while sqlkcm runs: frozen, it misses 50 deletions, which compaction then
# takes out of the apiserver's history.
kubectl scale rs -n "$ns" big --replicas=300 >/dev/null
cluster_wait_until 120 "300 pods" converged 300
pid=$(cat "$(sqlkcm_pidfile faults)")
kill -STOP "$pid"
kubectl get pods -n "$ns" -o name | head -n 50 | xargs kubectl delete -n "$ns" --wait=false >/dev/null
revision=$(etcdctl endpoint status -w json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Status"]["header"]["revision"])')
check "etcd compacts up to its current revision" etcdctl compact "$revision"
check "kube-apiserver restarts (its watch cache now begins after sqlkcm's resourceVersion)" \
	"$top/contrib/cluster/restart" "$cluster" kube-apiserver
kill -CONT "$pid"
check "the resumed watch is told its resourceVersion is gone, and relists" \
	cluster_wait_until 60 "a relist" grep -q "relisting" "$work/faults.log"
check "the relist's deletions reach the controller: 300 pods again within 60 s" \
	cluster_wait_until 60 "300 pods" converged 300
check "the cache equals a fresh LIST after the relist" cache_converges -n "$ns" "$db" 60 pods replicasets
check "at no moment more than 1000 pods" test "$(cat "$work/max")" -le 1000
sqlkcm_stop faults
check "SIGTERM stops it with exit status 0" test $? = 0
check "PRAGMA integrity_check is ok" integrity

# 3. The cache replaced by garbage while stopped.
head -c 65536 /dev/urandom >"$db"
rm -f "$db-wal" "$db-shm"
cp "$db" "$work/garbage"
"$SQLKCM" run --kubeconfig "$cluster/kubeconfig" --db "$db" --controllers replicaset \
	--secure-port 0 --leader-elect=false >"$work/refused.log" 2>&1
status=$?
check "a cache file that is not a cache is refused (exit status 1)" test "$status" = 1
check "the message names the file" grep -qF "$db" "$work/refused.log"
check "and the file is left as it was" cmp -s "$db" "$work/garbage"
sqlkcm_start rebuilt --db "$db" --controllers replicaset --rebuild-cache -v 2
check "--rebuild-cache moves it aside and relists into a new cache" \
	cluster_wait_until 60 "caches synced" grep -q "caches synced" "$work/rebuilt.log"
check "the garbage is kept beside it" eval 'ls "$db".corrupt-* >/dev/null'
check "the rebuilt cache equals a fresh LIST" cache_converges -n "$ns" "$db" 60 pods replicasets
check "the ReplicaSet is still at 300" cluster_wait_until 30 "300 pods" converged 300
sqlkcm_stop rebuilt
check "the rebuilt cache's sqlkcm stops with exit status 0" test $? = 0
check "PRAGMA integrity_check is ok on the rebuilt cache" integrity

tap_done
