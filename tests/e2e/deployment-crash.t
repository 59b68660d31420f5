#!/usr/bin/env bash
# deployment-crash.t - kill -9 sqlkcm at 20 random moments while it rolls a Deployment of
# 100 replicas to a new image, restarting it each time on the same database: the rollout
# completes (100 pods of the new ReplicaSet, the old one at 0), a watch of our own never
# sees the ReplicaSets' replicas add up to more than replicas + maxSurge (125), and the
# database is intact.
#
# kube's rule bounds the ReplicaSets' spec.replicas, not the live pods: an old
# ReplicaSet scaled down still has its pods until its controller deletes them, while the
# new one may already grow. The live pods' maximum is printed, not asserted.
# e2e: locks deployment replicaset
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-dcrash.XXXXXX")
db=$work/cache.db
ns=dcrash-$RANDOM
pod_watcher=
rs_watcher=
cleanup() {
	[ -n "$pod_watcher" ] && kill "$pod_watcher" 2>/dev/null
	[ -n "$rs_watcher" ] && kill "$rs_watcher" 2>/dev/null
	e2e_cleanup "$ns"
}
trap cleanup EXIT

start() {
	sqlkcm_start dcrash --db "$db" --controllers deployment,replicaset -v 2
}

# complete IMAGE: the Deployment runs IMAGE and is complete, with 100 live pods.
complete() {
	kubectl get deploy -n "$ns" web -o json | python3 -c '
import json, sys
d, image = json.load(sys.stdin), sys.argv[1]
s = d.get("status", {})
ok = (d["spec"]["template"]["spec"]["containers"][0]["image"] == image and
      s.get("observedGeneration", 0) >= d["metadata"]["generation"] and
      s.get("updatedReplicas") == 100 and s.get("replicas") == 100 and
      s.get("availableReplicas") == 100)
sys.exit(0 if ok else 1)' "$1" && [ "$(cat "$work/now" 2>/dev/null)" = 100 ]
}

# watch_replicas: the largest sum of the namespace's ReplicaSets' spec.replicas, in
# $work/rs-max, from a watch of our own (restarted when kubectl's ends).
watch_replicas() {
	while :; do
		kubectl get rs -n "$ns" --watch --output-watch-events -o json 2>/dev/null
		echo "RESTART"
		sleep 0.2
	done | python3 -c '
import json, os, sys
work = sys.argv[1]
dec = json.JSONDecoder()
buf, sizes, top = "", {}, 0
for chunk in iter(lambda: sys.stdin.readline(), ""):
    if chunk == "RESTART\n":
        buf = ""
        continue
    buf += chunk
    while True:
        buf = buf.lstrip()
        try:
            ev, end = dec.raw_decode(buf)
        except ValueError:
            break
        buf = buf[end:]
        if ev.get("type") not in ("ADDED", "MODIFIED", "DELETED"):
            continue
        rs = ev["object"]
        if ev["type"] == "DELETED":
            sizes.pop(rs["metadata"]["uid"], None)
        else:
            sizes[rs["metadata"]["uid"]] = rs["spec"].get("replicas", 1)
        top = max(top, sum(sizes.values()))
        # Replaced whole, so that a reader never sees it empty.
        with open(work + "/.rs-max", "w") as f:
            f.write(str(top))
        os.replace(work + "/.rs-max", work + "/rs-max")
' "$work" &
	rs_watcher=$!
}

# rs_sizes: IMAGE=REPLICAS of each ReplicaSet, sorted, on one line.
rs_sizes() {
	kubectl get rs -n "$ns" -o json | python3 -c '
import json, sys
print(" ".join(sorted("%s=%d" % (r["spec"]["template"]["spec"]["containers"][0]["image"],
                                 r["spec"]["replicas"]) for r in json.load(sys.stdin)["items"])))'
}

kubectl create namespace "$ns" >/dev/null
watch_replicas
kubectl create deployment web -n "$ns" --image=pause --replicas=100 >/dev/null
watch_owned_pods "$ns" 'web-*' "$work"
start
check "the Deployment first rolls out its 100 replicas" \
    cluster_wait_until 120 "100 pods" complete pause
kubectl set image -n "$ns" deploy/web pause=pause:2 >/dev/null
kills=0
for i in $(seq 20); do
	sleep "$(python3 -c 'import random; print(round(random.uniform(0.3, 2.3), 2))')"
	sqlkcm_stop dcrash KILL
	kills=$((kills + 1))
	start
done
check "sqlkcm was killed with SIGKILL 20 times during the rollout" test "$kills" = 20
check "the rollout completes: 100 pods of the new image" \
    cluster_wait_until 240 "the rollout" complete pause:2
check "the old ReplicaSet is at 0 and the new one at 100" \
    test "$(rs_sizes)" = "pause:2=100 pause=0"
check "at no moment did the ReplicaSets' replicas add up to more than 125" \
    test "$(cat "$work/rs-max")" -le 125
echo "# the most live pods seen at once: $(cat "$work/max") (replicas + maxSurge: 125)"
check "exactly two ReplicaSets: no revision was created twice" \
    test "$(kubectl get rs -n "$ns" -o name | wc -l)" = 2
check "the cache equals a fresh LIST" cache_converges -n "$ns" "$db" 60 pods replicasets deployments
sqlkcm_stop dcrash
check "the last sqlkcm stops with status 0" test $? = 0
check "PRAGMA integrity_check is ok" test "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok

tap_done
