#!/usr/bin/env bash
# killsync.t - kill -9 at random moments of initial syncs of 2000 pods, by LIST and by
# WatchList, and of the restarts that follow while pods come and go: after every kill the
# cache passes PRAGMA integrity_check, a pods informer stored as synced by the cold sync
# holds every pod, and a last start on the same database converges to exactly what the
# apiserver has. The write path's speed (LIST pages written while the next is fetched, a
# first list inserted without reading, bodies kept as received) gives up none of the
# crash safety: the resourceVersion is committed with the rows it covers.
# e2e: locks
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-killsync.XXXXXX")
db=$work/cache.db
ns=killsync-$RANDOM
trap 'e2e_cleanup "$ns"' EXIT
n=2000

kubectl create namespace "$ns" >/dev/null
# make_pods PREFIX FROM TO: pods PREFIX-FROM..PREFIX-(TO-1) that no scheduler serves.
make_pods() {
	python3 - "$ns" "$1" "$2" "$3" <<'PY' >"$work/pods.json"
import json, sys
ns, prefix, lo, hi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": f"{prefix}-{i}", "namespace": ns,
                  "labels": {"app": "killsync", "shard": f"s{i % 8}"},
                  "annotations": {"note": "x" * 200}},
     "spec": {"schedulerName": "nobody",
              "containers": [{"name": "app", "image": "registry.example/app:1.0"}]}}
    for i in range(lo, hi)]}))
PY
	kubectl create -f "$work/pods.json" >/dev/null
}
for ((i = 0; i < n; i += 500)); do
	make_pods p "$i" $((i + 500))
done
check "$n pods to sync" test "$(kubectl get pods -n "$ns" --no-headers | wc -l)" = "$n"

# cached: the pods of the namespace in the cache.
cached() {
	sqlite3 "$db" "SELECT count(*) FROM cache_pods WHERE namespace = '$ns'"
}
pods_synced() {
	sqlite3 "$db" "SELECT coalesce(max(synced), 0) FROM informers WHERE resource = 'pods'"
}

round=0
kill_at() {	# kill_at MODE SECONDS: starts sqlkcm on $db, kills it -9 after SECONDS
	round=$((round + 1))
	sqlkcm_start "r$round" --db "$db" --controllers '' --watch-list="$1" \
	    --kube-api-qps 1000 --kube-api-burst 1000
	sleep "$2"
	sqlkcm_stop "r$round" KILL
	check "round $round ($1, killed after $2 s): PRAGMA integrity_check is ok" \
	    test "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok
}
random() {	# random LOW HIGH: seconds
	python3 -c "import random; print(round(random.uniform($1, $2), 2))"
}

# Cold syncs into new caches, killed at random moments, alternately by LIST and by
# WatchList: a stored synced state always comes with all 2000 pods, and a start on the
# cache the kill left syncs to all of them.
for mode in false auto false auto false auto; do
	db=$work/cold-$round.db
	kill_at "$mode" "$(random 0.05 0.4)"
	if [ "$(pods_synced)" = 1 ]; then
		check "round $round: stored as synced, with every pod" test "$(cached)" = "$n"
	else
		check "round $round: not yet synced ($(cached) pods so far), and stored so" \
		    test "$(cached)" -lt "$n"
	fi
	sqlkcm_start "r$round-after" --db "$db" --controllers '' --watch-list="$mode"
	check "round $round: the next start on that cache syncs all $n pods" \
	    cluster_wait_until 60 "all pods" eval '[ "$(pods_synced)" = 1 ] && [ "$(cached)" = "$n" ]'
	sqlkcm_stop "r$round-after"
done

# Restarts while pods come and go: 200 deleted and 200 made between rounds.
for mode in auto false auto; do
	kubectl delete pods -n "$ns" --grace-period=0 --force --wait=false \
	    $(kubectl get pods -n "$ns" -o name | shuf -n 200 | sed 's|^pod/||') \
	    >/dev/null 2>&1
	make_pods "r$round" 0 200
	kill_at "$mode" "$(random 0.1 1.0)"
done

sqlkcm_start last --db "$db" --controllers ''
check "the last start converges to exactly the apiserver's pods" cache_converges -n "$ns" "$db" 60 pods
sqlkcm_stop last
check "the last stop leaves an intact cache" \
    test "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok
tap_done
