#!/usr/bin/env bash
# watchlist.t - both ways of fetching an informer's initial state, against the real
# control plane: WatchList streaming (the default, --watch-list=auto, which kube-apiserver
# serves since its WatchList feature is on by default), a paginated LIST
# (--watch-list=false), and the automatic fallback to LIST when kube-apiserver runs with
# --feature-gates=WatchList=false. After each initial sync the cache equals a LIST.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-watchlist.XXXXXX")
ns=wl-$RANDOM
apiserver_cmd=$cluster/cmd/kube-apiserver
cp "$apiserver_cmd" "$work/kube-apiserver.cmd"
restore_apiserver() {
	if ! cmp -s "$work/kube-apiserver.cmd" "$apiserver_cmd"; then
		cp "$work/kube-apiserver.cmd" "$apiserver_cmd"
		"$top/contrib/cluster/restart" "$cluster" kube-apiserver 2>>"$work/restart.log"
	fi
}
cleanup() {
	restore_apiserver
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# pods COUNT PREFIX: a v1 List of COUNT pods in $ns that no scheduler serves.
pods() {
	python3 - "$ns" "$@" <<'PY'
import json, sys
ns, count, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
items = [{"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": f"{prefix}-{i}", "namespace": ns,
                       "labels": {"app": "wl", "group": f"g{i % 3}"}},
          "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "pause"}]}}
         for i in range(count)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
}

# watch_list_requests: how many pod WATCH requests of sqlkcm asked for initial events.
watch_list_requests() {
	cat "$cluster"/logs/audit*.log 2>/dev/null | python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if (e.get("verb") == "watch" and e.get("userAgent", "").startswith("sqlkcm/")
            and e.get("objectRef", {}).get("resource") == "pods"
            and "sendInitialEvents=true" in e.get("requestURI", "")):
        n += 1
print(n)'
}

kubectl create namespace "$ns" >/dev/null
pods 1200 p | kubectl create -f - >/dev/null || fail "creating 1200 pods"

# --- WatchList (the default) ------------------------------------------------------------
lists_before=$(audit_count list pods)
wl_before=$(watch_list_requests)
sqlkcm_start a --db "$work/a.db" --controllers '' --v 2
check "by WatchList, the cache equals a LIST after the initial sync" \
	cache_converges "$work/a.db" 120 pods
check "the pods informer said it synced by WatchList" \
	grep -q "informer resource=pods: synced by WatchList" "$work/a.log"
check "the sync ended at the initial-events-end bookmark" \
	grep -q "informer resource=pods: initial-events-end bookmark after" "$work/a.log"
check "the WatchList sync sent no LIST (audit log)" test "$(audit_count list pods)" = "$lists_before"
# The stream goes on after the bookmark: changes arrive on it.
pods 30 q | kubectl create -f - >/dev/null
kubectl delete pods -n "$ns" -l group=g0 --wait=false >/dev/null
kubectl label pods -n "$ns" -l group=g1 changed=yes >/dev/null
check "changes after the bookmark reach the cache on the same stream" \
	cache_converges "$work/a.db" 120 pods
sqlkcm_stop a
check "sqlkcm (WatchList) stops with status 0" test $? = 0
# stats_say NAME FORMAT: the stopping line of NAME.log has FORMAT, each %d the number of
# informers that synced (one per resource mirrored with --controllers '', several).
stats_say() {
	local n want
	n=$(grep -c "informer resource=.*: synced by" "$work/$1.log")
	[ "$n" -ge 3 ] || { echo "only $n informers synced"; return 1; }
	want=${2//%d/$n}
	grep -F "$want" "$work/$1.log" ||
	    { grep "stopped:" "$work/$1.log"; echo "want: $want"; return 1; }
}
# A watch enters the audit log when it ends (ResponseComplete).
check "the watch asked for sendInitialEvents=true (audit log)" \
	cluster_wait_until 30 "the WatchList in the audit log" \
	eval '[ "$(watch_list_requests)" -gt "$wl_before" ]'
check "its stats count the syncs by WatchList and none by LIST" \
	stats_say a "syncs: %d by WatchList, 0 by LIST, 0 WatchList fallbacks"

# --- paginated LIST (--watch-list=false) -------------------------------------------------
lists_before=$(audit_count list pods)
wl_before=$(watch_list_requests)
sqlkcm_start b --db "$work/b.db" --controllers '' --watch-list=false --v 2
check "by LIST, the cache equals a LIST after the initial sync" \
	cache_converges "$work/b.db" 120 pods
check "the pods informer said it synced by LIST" \
	grep -q "informer resource=pods: synced by LIST" "$work/b.log"
check "the LIST was paginated: 2 pages of at most 500 of the 830 pods (audit log)" \
	test "$(($(audit_count list pods) - lists_before))" -ge 2
sqlkcm_stop b
check "sqlkcm (LIST) stops with status 0" test $? = 0
sleep 2
check "--watch-list=false sent no WatchList request (audit log)" \
	test "$(watch_list_requests)" = "$wl_before"
check "its stats count the syncs by LIST" \
	stats_say b "syncs: 0 by WatchList, %d by LIST, 0 WatchList fallbacks"

# --- kube-apiserver without WatchList: auto falls back to LIST ---------------------------
sed -i 's|$| --feature-gates=WatchList=false|' "$apiserver_cmd"
"$top/contrib/cluster/restart" "$cluster" kube-apiserver 2>>"$work/restart.log"
lists_before=$(audit_count list pods)
sqlkcm_start c --db "$work/c.db" --controllers '' --v 2
check "with WatchList off in kube-apiserver, the cache still equals a LIST" \
	cache_converges "$work/c.db" 120 pods
check "the informer logged the refusal and the fallback" \
	grep -q "informer resource=pods: watch-list failed: HTTP 422 Invalid: .*sendInitialEvents.*falling back to a paginated LIST" \
	"$work/c.log"
check "the fallback synced by LIST (audit log shows LIST requests)" \
	test "$(audit_count list pods)" -gt "$lists_before"
sqlkcm_stop c
check "sqlkcm (fallback) stops with status 0" test $? = 0
# (An informer whose LIST failed once falls back again when it retries: at least one
# fallback per informer.)
fallbacks_counted() {
	local n f
	n=$(grep -c "informer resource=.*: synced by LIST" "$work/c.log")
	f=$(sed -n "s/.*syncs: 0 by WatchList, $n by LIST, \([0-9]*\) WatchList fallbacks.*/\1/p" \
	    "$work/c.log")
	[ "$n" -ge 3 ] && [ -n "$f" ] && [ "$f" -ge "$n" ] ||
	    { grep "stopped:" "$work/c.log"; echo "want 0 by WatchList, $n by LIST, $n+ fallbacks"; false; }
}
check "its stats count the fallbacks" fallbacks_counted
restore_apiserver

# Back on a server with WatchList, a restart on the database the fallback filled sends no
# LIST: it resumes its watch, or (the restarted apiserver's watch cache begins after the
# stored resourceVersion: 410) syncs again by WatchList.
lists_before=$(audit_count list pods)
sqlkcm_start d --db "$work/c.db" --controllers '' --v 2
check "the restart's cache equals a LIST" cache_converges "$work/c.db" 120 pods
check "the restart resumed its watch or synced by WatchList" \
	grep -q "resource=pods: \(resuming the watch\|synced by WatchList\)" "$work/d.log"
sqlkcm_stop d
check "the restart sent no LIST (audit log)" test "$(audit_count list pods)" = "$lists_before"

tap_done
