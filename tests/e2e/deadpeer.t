#!/usr/bin/env bash
# deadpeer.t - sqlkcm behind a TCP proxy of the test's own (tests/e2e/tcpproxy) that
# misbehaves as networks do, with the ReplicaSet controller on; pods counted by a watch of
# our own that does not go through the proxy:
#   1. the open connections go silent for good (bytes swallowed, nothing closed) and new
#      ones are swallowed too for 45 s, while the ReplicaSet is scaled 10 -> 20: sqlkcm
#      finds the dead connection itself (a probe that gets no answer), says so, watches
#      again on a new connection once they pass, and the ReplicaSet converges;
#   2. every connection reset and every new one refused for 20 s while it is scaled
#      20 -> 5: /readyz says which informers are not watching, sqlkcm makes at most about
#      two connection attempts a second, and it converges within seconds once the
#      connections pass again;
#   3. two sqlkcm with leader election, the leader behind the proxy, which goes silent
#      while the ReplicaSet is scaled 5 -> 15: the leader stops acting (it exits 1) before
#      the other can take the Lease, and the other converges it.
# Each ends with the cache equal to a fresh LIST and never more pods than desired.
# The figures (seconds from the proxy passing again to convergence; attempts) are printed
# as TAP comments; bench/README.md has them beside kube-controller-manager's.
# e2e: locks replicaset
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-deadpeer.XXXXXX")
db=$work/cache.db
ns=deadpeer-$RANDOM
pod_watcher=
proxy=
cleanup() {
	[ -n "$pod_watcher" ] && kill "$pod_watcher" 2>/dev/null
	[ -n "$proxy" ] && kill "$proxy" 2>/dev/null
	e2e_cleanup "$ns"
}
trap cleanup EXIT

replicas() { kubectl get rs -n "$ns" big -o jsonpath='{.status.replicas}'; }
converged() { [ "$(cat "$work/now" 2>/dev/null)" = "$1" ] && [ "$(replicas)" = "$1" ]; }

proxy_start "$work/proxy"
http_port=$(cluster_free_port)

kubectl create namespace "$ns" >/dev/null
big_replicaset "$ns"
kubectl scale rs -n "$ns" big --replicas=10 >/dev/null
watch_owned_pods "$ns" big "$work"
sqlkcm_start deadpeer --db "$db" --controllers replicaset \
	--master "https://127.0.0.1:$(cat "$work/proxy/port")" --port "$http_port" -v 2
check "sqlkcm behind the proxy converges to 10 pods" cluster_wait_until 60 "10 pods" converged 10

# 1. Silent connections.
proxy_ctl "$work/proxy" silent >/dev/null
kubectl scale rs -n "$ns" big --replicas=20 >/dev/null
sleep 45
proxy_ctl "$work/proxy" pass >/dev/null
if took=$(seconds_until 60 converged 20); then
	pass "after 45 s of silence, 20 pods $took s after new connections pass"
	echo "# silent connections: converged ${took}s after new connections passed"
else
	fail "after 45 s of silence, 20 pods within 60 s after new connections pass" \
		"$(cat "$work/now" 2>/dev/null) pods"
fi
check "sqlkcm said it closed a dead connection, and why" \
	grep -q "closing a connection to .*no answer to a probe" "$work/deadpeer.log"
check "the cache equals a fresh LIST" cache_converges -n "$ns" "$db" 60 pods replicasets
check "at no moment were there more than 20 pods" test "$(cat "$work/max")" -le 20

# 2. Resets and refusals for 20 s.
before=$(proxy_accepted "$work/proxy")
proxy_ctl "$work/proxy" reset >/dev/null
kubectl scale rs -n "$ns" big --replicas=5 >/dev/null
sleep 10
curl -s "http://127.0.0.1:$http_port/readyz?verbose" >"$work/readyz.out"
check "/readyz names the informers that are not watching" \
	grep -q '^\[-\]informer-watch failed: not watching: .*pods down for' "$work/readyz.out"
curl -s "http://127.0.0.1:$http_port/metrics" >"$work/metrics.out"
check "sqlkcm_informer_down_seconds counts the seconds without a watch" \
	awk '/^sqlkcm_informer_down_seconds\{resource="pods"\}/ { found = $2 > 0 } END { exit !found }' \
	"$work/metrics.out"
sleep 10
attempts=$(($(proxy_accepted "$work/proxy") - before))
proxy_ctl "$work/proxy" pass >/dev/null
echo "# resets: $attempts connection attempts in 20 s"
check "at most about two connection attempts a second during the outage ($attempts in 20 s)" \
	test "$attempts" -le 44
if took=$(seconds_until 30 converged 5); then
	pass "5 pods $took s after the connections pass again"
	echo "# resets: converged ${took}s after connections passed"
	check "converged within 10 s of the connections passing ($took s)" \
		awk -v t="$took" 'BEGIN { exit !(t <= 10) }'
else
	fail "5 pods within 30 s after the connections pass again" "$(cat "$work/now" 2>/dev/null) pods"
fi
check "/readyz is ok again" cluster_wait_until 15 "readyz ok" \
	curl -sf "http://127.0.0.1:$http_port/readyz"
check "the cache equals a fresh LIST" cache_converges -n "$ns" "$db" 60 pods replicasets
check "at no moment were there more than 20 pods" test "$(cat "$work/max")" -le 20
check "sqlkcm kept running through it" kill -0 "$(cat "$(sqlkcm_pidfile deadpeer)")"
sqlkcm_stop deadpeer

# 3. A leader that cannot reach the apiserver. A new count of our own, from 5 pods.
kill "$pod_watcher" 2>/dev/null
mkdir -p "$work/leader"
watch_owned_pods "$ns" big "$work/leader"
lease=deadpeer-$RANDOM
proxy_ctl "$work/proxy" pass >/dev/null
elect=(--controllers replicaset --leader-elect=true
	--leader-elect-resource-name "$lease" --leader-elect-resource-namespace "$ns" -v 2)
sqlkcm_start leader --db "$work/leader.db" "${elect[@]}" \
	--master "https://127.0.0.1:$(cat "$work/proxy/port")"
check "the sqlkcm behind the proxy leads" \
	cluster_wait_until 60 "a leader" grep -q "acquired the lease" "$work/leader.log"
sqlkcm_start standby --db "$work/standby.db" "${elect[@]}"
cluster_wait_until 60 "the standby's caches" grep -q "attempting to acquire" "$work/standby.log"
sleep 2
proxy_ctl "$work/proxy" silent >/dev/null
kubectl scale rs -n "$ns" big --replicas=15 >/dev/null
converged15() { [ "$(cat "$work/leader/now" 2>/dev/null)" = 15 ] && [ "$(replicas)" = 15 ]; }
check "the standby takes over and converges to 15 pods" cluster_wait_until 90 "15 pods" converged15
leader_pid=$(cat "$(sqlkcm_pidfile leader)")
check "the leader that lost the apiserver has exited" \
	cluster_wait_until 30 "the old leader to exit" eval '! kill -0 "$leader_pid"'
sqlkcm_stop leader
check "it exited with status 1 (the lease lost)" test $? = 1
lost=$(awk '/leader election lost/ { print $2; exit }' "$work/leader.log")
taken=$(awk '/acquired the lease/ { print $2; exit }' "$work/standby.log")
echo "# the leader stopped at $lost; the standby took the lease at $taken"
check "the leader stopped before the standby took the lease" \
	test -n "$lost" -a -n "$taken" -a "$lost" \< "$taken"
check "at no moment were there more than 15 pods" test "$(cat "$work/leader/max")" -le 15
check "the standby's cache equals a fresh LIST" cache_converges -n "$ns" "$work/standby.db" 60 pods replicasets
tap_done
