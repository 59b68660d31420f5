#!/usr/bin/env bash
# informer.t - informers mirror the cluster into SQLite: the initial sync (WatchList), updates of
# labels and owners, deletes, a warm restart that resumes the watch without listing, an
# apiserver restart, a relist after etcd compaction, odd annotations, and the --record log.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-informer.XXXXXX")
db=$work/cache.db
# Namespaces get a suffix of their own: with no kube-controller-manager in the test
# cluster, a deleted namespace stays Terminating, and its name cannot be used again.
run=$RANDOM
namespaces=""
for n in a b c d e f; do
	namespaces="$namespaces inf-$n-$run"
	declare "ns_$n=inf-$n-$run"
done
cleanup() {
	for f in "$cluster"/pids/sqlkcm-"$test_name"-*.pid; do
		[ -e "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null && rm -f "$f"
	done
	kubectl delete namespace $namespaces --wait=false >/dev/null 2>&1
	if [ "$tap_failed" = 0 ]; then
		rm -rf "$work"
	else
		echo "# logs, database and record kept in $work"
	fi
}
trap cleanup EXIT

# pods NAMESPACE COUNT [PREFIX]: a v1 List of COUNT pods, each labelled app=web and
# group=gN (N = index mod 5), with a scheduler nobody runs so nothing else touches them.
pods() {
	python3 - "$@" <<'PY'
import json, sys
ns, count = sys.argv[1], int(sys.argv[2])
prefix = sys.argv[3] if len(sys.argv) > 3 else "p"
items = [{"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": f"{prefix}-{i}", "namespace": ns,
                       "labels": {"app": "web", "group": f"g{i % 5}"}},
          "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "pause"}]}}
         for i in range(count)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
}
for ns in $namespaces; do kubectl create namespace "$ns" >/dev/null; done
for ns in ${ns_a} ${ns_b} ${ns_c} ${ns_d}; do
	pods "$ns" 250 | kubectl create -f - >/dev/null || fail "creating 250 pods in $ns"
done

sqlkcm_start a --db "$db" --controllers '' --record "$work/events.jsonl" --v 1
check "the initial list brings 1000 pods into the cache" cache_converges "$db" 120 pods
check "the database file is created 0600" test "$(stat -c %a "$db")" = 600
check "the initial sync was by WatchList (kube-apiserver has it on by default)" \
	grep -q "informer resource=pods: synced by WatchList" "$work/a.log"

# Updates: labels changed and removed, owners added; deletes.
kubectl label pods -n ${ns_a} --all version=v2 >/dev/null
kubectl label pods -n ${ns_b} -l 'group in (g0,g1)' app- >/dev/null
kubectl get pods -n ${ns_c} -l 'group in (g0,g1,g2)' -o name >"$work/owned"
kubectl patch -n ${ns_c} $(cat "$work/owned") --type merge -p '{"metadata":{"ownerReferences":[
	{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"fake-rs","uid":"6b1c4b7e-0000-4000-8000-000000000001",
	 "controller":true}]}}' >/dev/null
kubectl delete pods -n ${ns_d} --all --wait=false >/dev/null
kubectl delete pods -n ${ns_c} -l group=g4 --wait=false >/dev/null
check "label, owner and delete changes reach the cache (every uid, resourceVersion, label, owner)" \
	cache_converges "$db" 120 pods
check "150 pods are owned by the ReplicaSet in owner_refs" test "$(sqlite3 "$db" \
	"SELECT count(*) FROM owner_refs o JOIN cache_pods p ON p.uid = o.uid
	 WHERE p.namespace = '$ns_c' AND o.controller = 1
	   AND o.owner_uid = '6b1c4b7e-0000-4000-8000-000000000001'")" = 150
check "no label or owner row outlives its object" test "$(sqlite3 "$db" \
	"SELECT (SELECT count(*) FROM object_labels WHERE object_id NOT IN (SELECT id FROM objects)) +
	 (SELECT count(*) FROM object_owners WHERE object_id NOT IN (SELECT id FROM objects))")" = 0

# Hostile but valid input: quotes, backslashes and unicode in a 200 KB annotation.
python3 - "${ns_e}" <<'PY' | kubectl create -f - >/dev/null
import json, sys
value = ("\"quoted\" \\back\\slash é ☃ 🚀 ' ; DROP TABLE pods; --" * 4000)[:200000]
print(json.dumps({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "odd", "namespace": sys.argv[1], "annotations": {"note": value}},
                  "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "pause"}]}}))
PY
# annotation_cached: the cached annotation is the apiserver's, byte for byte.
annotation_cached() {
	local want got
	want=$(kubectl get pod -n "$ns_e" odd -o jsonpath='{.metadata.annotations.note}')
	got=$(sqlite3 "$db" "SELECT json_extract(body, '$.metadata.annotations.note') FROM cache_pods
		WHERE namespace = '$ns_e' AND name = 'odd'")
	[ "$(printf %s "$want" | wc -c)" -ge 200000 ] && [ "$got" = "$want" ]
}
check "a 200 KB annotation of quotes and unicode is cached byte for byte" \
	cluster_wait_until 60 "the annotation in the cache" annotation_cached

# A warm restart: the stored resourceVersion is valid, so no LIST, only a WATCH.
lists_before=$(audit_count list pods)
watches_before=$(audit_count watch pods)
sqlkcm_stop a
check "SIGTERM stops sqlkcm with exit status 0" test $? = 0
pods ${ns_e} 50 q | kubectl create -f - >/dev/null
kubectl delete pods -n ${ns_c} -l group=g3 --wait=false >/dev/null
kubectl label pods -n ${ns_b} -l group=g2 restarted=yes >/dev/null
sqlkcm_start b --db "$db" --controllers '' --v 1
check "after a restart the cache catches up with changes made while it was down" \
	cache_converges "$db" 120 pods
check "the audit log shows sqlkcm's watches (the counter works)" \
	test "$(audit_count watch pods)" -gt "$watches_before"
check "a restart with a valid resourceVersion issues no LIST (audit log)" \
	test "$(audit_count list pods)" = "$lists_before"
check "the restarted informer said it resumed the watch" grep -q "resuming the watch" "$work/b.log"

# kube-apiserver killed and started again: the watches reconnect, nothing is lost.
"$top/contrib/cluster/restart" --kill "$cluster" kube-apiserver 2>>"$work/restart.log"
pods ${ns_f} 40 | kubectl create -f - >/dev/null
kubectl delete pods -n ${ns_a} -l group=g0 --wait=false >/dev/null
check "after kube-apiserver is killed and restarted, the cache converges" \
	cache_converges "$db" 120 pods
check "sqlkcm kept running through the apiserver restart" kill -0 "$(cat "$(sqlkcm_pidfile b)")"

# Compaction past the stored resourceVersion: sqlkcm must relist, and drop what went away.
sqlkcm_stop b
check "SIGTERM stops sqlkcm again with exit status 0" test $? = 0
kubectl delete pods -n ${ns_a} -l group=g1 --wait=false >/dev/null
kubectl delete pods -n ${ns_f} --all --wait=false >/dev/null
revision=$("$(dirname "$(command -v kubectl)")/etcdctl" \
	--endpoints "$(cat "$cluster/etcd-endpoint")" endpoint status -w json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Status"]["header"]["revision"])')
check "etcd compacts up to its current revision" \
	"$(dirname "$(command -v kubectl)")/etcdctl" \
	--endpoints "$(cat "$cluster/etcd-endpoint")" compact "$revision"
# A restarted apiserver's watch cache begins after the stored resourceVersion.
"$top/contrib/cluster/restart" --kill "$cluster" kube-apiserver 2>>"$work/restart.log"
sqlkcm_start c --db "$db" --controllers '' --v 1
check "after compaction the cache converges, the deleted pods gone" cache_converges "$db" 120 pods
check "sqlkcm relisted because its resourceVersion was too old" grep -q "relisting" "$work/c.log"
check "the relist was by WatchList, and removed what went away" \
	grep -q "informer resource=pods: synced by WatchList" "$work/c.log"
check "PRAGMA integrity_check is ok" test "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok
check "contrib/queries.sql runs on the live cache, read-only" \
	sqlite3 -bail -readonly "$db" ".read $top/contrib/queries.sql"
sqlkcm_stop c
check "SIGTERM stops sqlkcm a third time with exit status 0" test $? = 0

# The record log: one JSON line per applied event.
check "--record wrote an ADDED line for each of the 1000 listed pods and MODIFIED/DELETED after" \
	python3 - "$work/events.jsonl" <<'PY'
import json, sys
counts = {}
for n, line in enumerate(open(sys.argv[1]), 1):
    e = json.loads(line)
    # A resource cached by its metadata (ServiceAccounts, once a test has made some) is
    # named by "metadataOf" instead.
    assert set(e) in ({"time", "resource", "type", "object"},
                      {"time", "metadataOf", "type", "object"}), f"line {n}: keys {sorted(e)}"
    assert "managedFields" not in e["object"]["metadata"], f"line {n}: managedFields kept"
    counts[e["type"]] = counts.get(e["type"], 0) + 1
assert counts.get("ADDED", 0) >= 1000, counts
assert counts.get("MODIFIED", 0) >= 250 + 100 + 150, counts
assert counts.get("DELETED", 0) >= 300, counts
PY

tap_done
