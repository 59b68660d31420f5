#!/usr/bin/env bash
# replicaset-crash.t - kill -9 sqlkcm at 20 random moments while it scales a ReplicaSet
# to 500, restarting it each time on the same database: at the end exactly 500 pods, at
# no moment more than 500 (seen by a watch of our own), and the database intact.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-crash.XXXXXX")
db=$work/cache.db
ns=crash-$RANDOM
watcher=
cleanup() {
	[ -n "$watcher" ] && kill "$watcher" 2>/dev/null
	e2e_cleanup "$ns"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: big
spec:
  replicas: 0
  selector:
    matchLabels: {app: big}
  template:
    metadata:
      labels: {app: big}
    spec:
      containers: [{name: c, image: pause}]
EOF

# The watch: every pod event of the namespace, as kubectl prints them (concatenated JSON
# objects); the script keeps the set of live pods the ReplicaSet controls and writes the
# largest size it ever had to $work/max, and the current size to $work/now.
kubectl get pods -n "$ns" --watch --output-watch-events -o json 2>/dev/null | python3 -c '
import json, sys
work = sys.argv[1]
dec = json.JSONDecoder()
buf, live, top = "", set(), 0
def owned(p):
    m = p["metadata"]
    if m.get("deletionTimestamp") or p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
        return False
    return any(r.get("controller") and r["name"] == "big" for r in m.get("ownerReferences", []))
for chunk in iter(lambda: sys.stdin.readline(), ""):
    buf += chunk
    while True:
        buf = buf.lstrip()
        try:
            ev, end = dec.raw_decode(buf)
        except ValueError:
            break
        buf = buf[end:]
        pod = ev["object"]
        uid = pod["metadata"]["uid"]
        if ev["type"] != "DELETED" and owned(pod):
            live.add(uid)
        else:
            live.discard(uid)
        top = max(top, len(live))
        open(work + "/max", "w").write(str(top))
        open(work + "/now", "w").write(str(len(live)))
' "$work" &
watcher=$!
sleep 1

start() {
	sqlkcm_start crash --db "$db" --controllers replicaset -v 2
}
start
kubectl scale rs -n "$ns" big --replicas=500 >/dev/null
kills=0
for i in $(seq 20); do
	# A random moment: 0.3 to 2.3 seconds of work, then kill -9.
	sleep "$(python3 -c 'import random; print(round(random.uniform(0.3, 2.3), 2))')"
	sqlkcm_stop crash KILL
	kills=$((kills + 1))
	start
done
check "sqlkcm was killed with SIGKILL 20 times while scaling" test "$kills" = 20
check "the ReplicaSet ends with exactly 500 pods" cluster_wait_until 240 "500 pods" eval \
    '[ "$(cat "$work/now" 2>/dev/null)" = 500 ] && \
     [ "$(kubectl get rs -n "$ns" big -o jsonpath="{.status.replicas}")" = 500 ]'
sleep 3
check "and stays at 500" test "$(cat "$work/now")" = 500
check "at no moment did it have more than 500" test "$(cat "$work/max")" -le 500
sqlkcm_stop crash
check "the last sqlkcm stops with status 0" test $? = 0
check "PRAGMA integrity_check is ok" test "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok

tap_done
