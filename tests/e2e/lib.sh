# lib.sh - TAP helpers for the end-to-end tests (sourced by tests/e2e/*.t).
#
# A test script calls `ok CONDITION-COMMAND... -- NAME`-style helpers below, one line of
# TAP per assertion, and `tap_done` at the end, which prints the plan and sets the exit
# status. The runner (tests/run-all) counts the lines.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$top/contrib/cluster/lib.sh"

tap_n=0
tap_failed=0

# pass NAME / fail NAME [WHY]: one TAP result line.
pass() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1"
}
fail() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $1${2:+: $2}"
}

# check NAME COMMAND...: passes when COMMAND succeeds; on failure its output is shown
# as TAP diagnostics.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name"
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /'
	fi
}

# tap_done: the plan line; the exit status says whether every assertion passed.
tap_done() {
	echo "1..$tap_n"
	[ "$tap_failed" = 0 ]
}

# --- the shared cluster and sqlkcm --------------------------------------------------------

# use_shared_cluster: points kubectl at the run's shared cluster (tests/run-all starts it;
# run by hand: contrib/cluster/up DIR, then SQLKCM_TEST_CLUSTER=DIR SQLKCM=... bash TEST).
use_shared_cluster() {
	: "${SQLKCM_TEST_CLUSTER:?run by tests/run-all, or set SQLKCM_TEST_CLUSTER to a cluster dir}"
	: "${SQLKCM:?SQLKCM must name the sqlkcm program}"
	cluster=$SQLKCM_TEST_CLUSTER
	. "$cluster/env"
}

# The test's name (deadpeer for deadpeer.t). tests/run-all runs tests side by side on one
# cluster, so the pid files a test leaves in the cluster's pids/ carry it: a test signals
# and cleans up its own processes, never another test's.
test_name=$(basename "$0" .t)

# sqlkcm_pidfile NAME: the pid file of the sqlkcm this test started as NAME.
sqlkcm_pidfile() {
	echo "$cluster/pids/sqlkcm-$test_name-$1.pid"
}

# sqlkcm_start NAME ARGS...: runs `sqlkcm run ARGS` in the background against the shared
# cluster, logging to $work/NAME.log; its pid goes in the cluster's pids/ so that
# `contrib/cluster/down` stops it even if the test dies. Every test starts sqlkcm here, so
# a flag all of them need goes here, once:
# - its HTTPS endpoints are off (--secure-port 0), so that tests running side by side do
#   not fight over port 10257;
# - leader election is off (a test of one instance has nothing to elect, and with it on
#   each test would wait out the Lease the last test's killed instance left, 15s).
# ARGS come later and win: a test may turn either on again.
sqlkcm_start() {
	local name=$1
	shift
	"$SQLKCM" run --kubeconfig "$cluster/kubeconfig" --secure-port 0 --leader-elect=false \
	    "$@" </dev/null >>"$work/$name.log" 2>&1 &
	echo $! >"$(sqlkcm_pidfile "$name")"
}

# sqlkcm_stop NAME [SIGNAL]: signals it (TERM by default), waits, and returns its exit status.
sqlkcm_stop() {
	local pid
	pid=$(cat "$(sqlkcm_pidfile "$1")")
	kill -"${2:-TERM}" "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	local status=$?
	rm -f "$(sqlkcm_pidfile "$1")"
	return $status
}

# cache_converges [-n NAMESPACE] DB SECONDS [RESOURCE...]: waits until the cache equals
# the apiserver, in NAMESPACE only when given (tests that run beside others: theirs change
# meanwhile), else in every namespace.
cache_converges() {
	local scope=()
	if [ "$1" = -n ]; then
		scope=(--namespace "$2")
		shift 2
	fi
	local db=$1 seconds=$2
	shift 2
	local deadline=$(($(date +%s) + seconds))
	until "$top/tests/e2e/cache-diff" "${scope[@]}" "$db" "$@" >"$work/diff.out" 2>&1; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			cat "$work/diff.out"
			return 1
		fi
		sleep 1
	done
}

# nodes_hold_blocks: the cluster's nodes that hold no pod CIDRs get theirs by hand, from
# 10.244.128.0/24 and fd00:10:244:80::/64 on (those that hold some keep them), so that a
# node allocator started with --cluster-cidr 10.244.0.0/16 (nodeipam.t, rbac.t) hands out
# the first blocks to the test's own nodes, whichever test ran first.
nodes_hold_blocks() {
	local j=0 n v4 v6
	for n in $(kubectl get nodes -o name); do
		n=${n#node/}
		[ -z "$(kubectl get node "$n" -o jsonpath='{.spec.podCIDRs[*]}')" ] || continue
		v4=10.244.$((128 + j)).0/24 v6=fd00:10:244:$(printf %x $((128 + j)))::/64
		kubectl patch node "$n" --type merge \
		    -p "{\"spec\":{\"podCIDR\":\"$v4\",\"podCIDRs\":[\"$v4\",\"$v6\"]}}" \
		    >/dev/null || echo "# could not give $n its blocks"
		j=$((j + 1))
	done
}

# audit_count VERB RESOURCE: how many VERB requests for RESOURCE sqlkcm has made so far,
# according to the apiserver's audit log.
audit_count() {
	cat "$cluster"/logs/audit*.log 2>/dev/null | python3 -c '
import json, sys
verb, resource = sys.argv[1], sys.argv[2]
n = 0
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if (e.get("verb") == verb and e.get("userAgent", "").startswith("sqlkcm/")
            and e.get("objectRef", {}).get("resource") == resource):
        n += 1
print(n)' "$1" "$2"
}

# e2e_cleanup NAMESPACE: kills every sqlkcm the test started, removes NAMESPACE's
# ReplicaSets and pods (no namespace controller runs in the test cluster, so deleting the
# namespace alone would leave them filling the nodes for the tests after this one), asks
# for the namespace's deletion, and removes $work unless a check failed.
e2e_cleanup() {
	local f
	for f in "$cluster"/pids/sqlkcm-"$test_name"-*.pid; do
		[ -e "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null && rm -f "$f"
	done
	# Bounded, and not waiting for the deletions to be seen: a kubectl whose watch missed
	# them (an apiserver restarted just before) would wait for good and hold up the run.
	timeout 60 kubectl delete rs -n "$1" --all --cascade=background --wait=false \
	    --request-timeout=30s >/dev/null 2>&1
	timeout 60 kubectl delete pods -n "$1" --all --grace-period=0 --force --wait=false \
	    --request-timeout=30s >/dev/null 2>&1
	timeout 60 kubectl delete namespace "$1" --wait=false --request-timeout=30s \
	    >/dev/null 2>&1
	if [ "$tap_failed" = 0 ]; then
		rm -rf "$work"
	else
		echo "# logs and database kept in $work"
	fi
}

# big_replicaset NS: creates the ReplicaSet "big" in NS (selector app=big), at 0 replicas.
big_replicaset() {
	kubectl apply -n "$1" -f - >/dev/null <<'EOF'
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
}

# watch_owned_pods NS NAME DIR: starts a watch of our own on the pods of NS, apart from
# sqlkcm's: every pod event, as kubectl prints them (concatenated JSON objects), keeps the
# set of live pods (not finished, not being deleted) whose controller is NAME (or, for
# NAME ending in *, whose controller's name starts with the rest: a Deployment's pods are
# its ReplicaSets' "web-*"), and writes
# the largest size the set ever had to DIR/max and its current size to DIR/now. kubectl's
# watch can end (the apiserver closes a watch that falls behind a burst of events, or at
# its timeout): it is started again, and the set is rebuilt from the new watch's initial
# events. Its pid is left in $pod_watcher, for the test's cleanup to kill.
watch_owned_pods() {
	while :; do
		kubectl get pods -n "$1" --watch --output-watch-events -o json 2>/dev/null
		echo "RESTART"
		sleep 0.2
	done | python3 -c '
import json, os, sys
name, work = sys.argv[1], sys.argv[2]
dec = json.JSONDecoder()
buf, live, top = "", set(), 0
def owned(p):
    m = p["metadata"]
    if m.get("deletionTimestamp") or p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
        return False
    return any(r.get("controller") and (r["name"] == name or
               (name.endswith("*") and r["name"].startswith(name[:-1])))
               for r in m.get("ownerReferences", []))
# The tests read these files at any moment: each is replaced whole, never seen empty.
def put(what, n):
    with open(work + "/." + what, "w") as f:
        f.write(str(n))
    os.replace(work + "/." + what, work + "/" + what)
for chunk in iter(lambda: sys.stdin.readline(), ""):
    # A kubectl that died mid-object leaves no newline: the marker ends that line.
    if chunk.endswith("RESTART\n"):
        buf, live = "", set()
        continue
    buf += chunk
    while True:
        buf = buf.lstrip()
        try:
            ev, end = dec.raw_decode(buf)
        except ValueError:
            break
        buf = buf[end:]
        # An ERROR event (the watch expired, the apiserver went away) carries a Status,
        # not a pod: kubectl ends, and the next watch rebuilds the set.
        if ev.get("type") not in ("ADDED", "MODIFIED", "DELETED"):
            continue
        obj = ev.get("object") or {}
        # kubectl 1.36 prints the state it starts from as ADDED events of a PodList (500
        # pods each); later changes come one pod at a time.
        for pod in obj.get("items") or [obj]:
            uid = (pod.get("metadata") or {}).get("uid")
            if not uid:
                continue    # not a pod (a Status kubectl passed on): nothing to count
            if ev["type"] != "DELETED" and owned(pod):
                live.add(uid)
            else:
                live.discard(uid)
        top = max(top, len(live))
        put("max", top)
        put("now", len(live))
' "$2" "$3" &
	pod_watcher=$!
	sleep 1
}

# --- a misbehaving network: tests/e2e/tcpproxy ---------------------------------------------

# proxy_start DIR: starts tests/e2e/tcpproxy in front of the cluster's apiserver, with its
# files in DIR (DIR/port: where to connect); its pid is left in $proxy.
proxy_start() {
	local upstream
	upstream=$(sed -n 's|.*server: https://\([^:]*\):\([0-9]*\).*|\1 \2|p' "$cluster/kubeconfig" | head -n1)
	mkdir -p "$1"
	# shellcheck disable=SC2086 # host and port
	"$top/tests/e2e/tcpproxy" $upstream "$1" 2>"$1/log" &
	proxy=$!
	cluster_wait_until 10 "the proxy to listen" test -s "$1/control"
}

# proxy_ctl DIR COMMAND: sends COMMAND (pass, silent, reset, stats) to the proxy in DIR and
# prints its answer ("ok MODE accepted=N").
proxy_ctl() {
	local fd reply
	exec {fd}<>"/dev/tcp/127.0.0.1/$(cat "$1/control")"
	echo "$2" >&"$fd"
	read -r reply <&"$fd"
	exec {fd}>&-
	echo "$reply"
}

# proxy_accepted DIR: the connections the proxy in DIR has accepted so far.
proxy_accepted() {
	proxy_ctl "$1" stats | sed -n 's/.*accepted=\([0-9]*\).*/\1/p'
}

# seconds_until LIMIT CMD...: polls CMD every 0.2 s and prints how many seconds it took to
# succeed (one decimal), or fails after LIMIT seconds.
seconds_until() {
	local limit=$1 start now
	shift
	start=$(date +%s.%N)
	until "$@" >/dev/null 2>&1; do
		now=$(date +%s.%N)
		if awk -v a="$start" -v b="$now" -v l="$limit" 'BEGIN { exit !(b - a > l) }'; then
			return 1
		fi
		sleep 0.2
	done
	now=$(date +%s.%N)
	awk -v a="$start" -v b="$now" 'BEGIN { printf "%.1f\n", b - a }'
}

# --- helpers for the Deployment tests (and any other) ---------------------------------------

# wait_for SECONDS CMD...: runs CMD every half second until it succeeds; after SECONDS it
# fails, printing CMD's last output and what it waited for (which `check` shows).
wait_for() {
	local seconds=$1 deadline out
	shift
	deadline=$(($(date +%s) + seconds))
	until out=$("$@" 2>&1); do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			printf '%s\n' "$out"
			echo "timed out after ${seconds}s waiting for: $*"
			return 1
		fi
		sleep 0.5
	done
}

# skip NAME WHY: a TAP result line that counts as skipped (tests/run-all counts "# SKIP").
skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP $2"
}

# widget_crd_create GROUP: a namespaced custom resource, Widget (widgets.GROUP, v1, any
# fields), for the tests of what sqlkcm learns by discovery.
widget_crd_create() {
	kubectl create -f - >/dev/null <<EOF
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.$1
spec:
  group: $1
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
EOF
}

# kcm_start NAME ARGS...: runs the control plane's own kube-controller-manager (the binary
# beside kubectl) in the background with the admin kubeconfig, logging to $work/NAME.log,
# its pid in the cluster's pids/ as kcm-TEST-NAME (so that contrib/cluster/down stops it
# if the test dies); then waits until each controller it started has synced its caches. Its own
# identity (system:kube-controller-manager) may not touch ReplicaSets or pods without
# --use-service-account-credentials, which needs the ServiceAccount machinery this cluster
# does not run: it gets the admin kubeconfig, as sqlkcm does (bench/replicaset-scale does
# the same). Leader election and the HTTPS endpoints are off, as sqlkcm_start has them.
# ARGS come later and win (--controllers=deployment,replicaset).
kcm_start() {
	local name=$1 dir
	shift
	dir=$(cd "$cluster" && pwd)
	"$(dirname "$(command -v kubectl)")/kube-controller-manager" \
	    --kubeconfig="$dir/kubeconfig" --leader-elect=false --secure-port=0 "$@" \
	    </dev/null >>"$work/$name.log" 2>&1 &
	echo $! >"$cluster/pids/kcm-$test_name-$name.pid"
	cluster_wait_until 60 "kube-controller-manager to sync" kcm_synced "$work/$name.log"
}

# kcm_synced LOG: kcm's log shows a controller started ("Starting controller", or "Starting
# node controller", "Starting TTL controller" as some say it) and every cache sync it waited for
# done.
kcm_synced() {
	awk '/"Starting [A-Za-z ]*controller"/ {started++} /"Waiting for caches to sync"/ {waiting++}
	     /"Caches are synced"/ {synced++}
	     END {exit !(started > 0 && synced >= waiting)}' "$1"
}

# kcm_stop NAME: SIGTERM to the kube-controller-manager kcm_start NAME started, and waits
# for it to exit. Nothing when it is not running.
kcm_stop() {
	local f=$cluster/pids/kcm-$test_name-$1.pid pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$f"
}

# run_under_each SCRIPT CM_VAR STATE_VAR: runs tests/e2e/SCRIPT twice, under
# kube-controller-manager and then sqlkcm (CM_VAR set to kcm, then sqlkcm; STATE_VAR to
# $work/kcm.state, then $work/sqlkcm.state, where SCRIPT writes its end state), and makes
# its TAP lines this test's, renumbered and named by the manager: the first half of a
# -kcm.t comparison, whose second half diffs the two states.
run_under_each() {
	local script=$1 cm_var=$2 state_var=$3 cm out line
	for cm in kcm sqlkcm; do
		out=$(env "$cm_var=$cm" "$state_var=$work/$cm.state" \
		    bash "$(dirname "${BASH_SOURCE[0]}")/$script" 2>&1)
		while IFS= read -r line; do
			case $line in
			"ok "*) pass "$cm: ${line#ok * - }" ;;
			"not ok "*) fail "$cm: ${line#not ok * - }" ;;
			"#"*) echo "$line" ;;
			esac
		done <<<"$out"
		check "$cm: $script ran to its end" grep -q "^1\\.\\." <<<"$out"
	done
}
