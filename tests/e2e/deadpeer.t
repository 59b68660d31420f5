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
#      connections pass again.
# Each ends with the cache equal to a fresh LIST and never more pods than desired.
# The figures (seconds from the proxy passing again to convergence; attempts) are printed
# as TAP comments; bench/README.md has them beside kube-controller-manager's.
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
# proxy_ctl COMMAND: sends a command to the proxy, prints its answer.
proxy_ctl() {
	local fd reply
	exec {fd}<>"/dev/tcp/127.0.0.1/$(cat "$work/proxy/control")"
	echo "$1" >&"$fd"
	read -r reply <&"$fd"
	exec {fd}>&-
	echo "$reply"
}
accepted() { proxy_ctl stats | sed -n 's/.*accepted=\([0-9]*\).*/\1/p'; }
# seconds_until DEADLINE CMD...: prints how many seconds CMD took to succeed (polling
# every 0.2 s), or fails at DEADLINE seconds.
seconds_until() {
	local limit=$1 start now
	shift
	start=$(date +%s.%N)
	until "$@"; do
		now=$(date +%s.%N)
		if awk -v a="$start" -v b="$now" -v l="$limit" 'BEGIN { exit !(b - a > l) }'; then
			return 1
		fi
		sleep 0.2
	done
	now=$(date +%s.%N)
	awk -v a="$start" -v b="$now" 'BEGIN { printf "%.1f\n", b - a }'
}

upstream=$(sed -n 's|.*server: https://\([^:]*\):\([0-9]*\).*|\1 \2|p' "$cluster/kubeconfig" | head -n1)
mkdir -p "$work/proxy"
# shellcheck disable=SC2086
"$top/tests/e2e/tcpproxy" $upstream "$work/proxy" 2>"$work/proxy.log" &
proxy=$!
cluster_wait_until 10 "the proxy listens" test -s "$work/proxy/control"
http_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

kubectl create namespace "$ns" >/dev/null
big_replicaset "$ns"
kubectl scale rs -n "$ns" big --replicas=10 >/dev/null
watch_owned_pods "$ns" big "$work"
sqlkcm_start deadpeer --db "$db" --controllers replicaset \
	--master "https://127.0.0.1:$(cat "$work/proxy/port")" --port "$http_port" -v 2
check "sqlkcm behind the proxy converges to 10 pods" cluster_wait_until 60 "10 pods" converged 10

# 1. Silent connections.
proxy_ctl silent >/dev/null
kubectl scale rs -n "$ns" big --replicas=20 >/dev/null
sleep 45
proxy_ctl pass >/dev/null
if took=$(seconds_until 60 converged 20); then
	pass "after 45 s of silence, 20 pods $took s after new connections pass"
	echo "# silent connections: converged ${took}s after new connections passed"
else
	fail "after 45 s of silence, 20 pods within 60 s after new connections pass" \
		"$(cat "$work/now" 2>/dev/null) pods"
fi
check "sqlkcm said it closed a dead connection, and why" \
	grep -q "closing a connection to .*no answer to a probe" "$work/deadpeer.log"
check "the cache equals a fresh LIST" cache_converges "$db" 60 pods replicasets
check "at no moment were there more than 20 pods" test "$(cat "$work/max")" -le 20

# 2. Resets and refusals for 20 s.
before=$(accepted)
proxy_ctl reset >/dev/null
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
attempts=$(($(accepted) - before))
proxy_ctl pass >/dev/null
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
check "the cache equals a fresh LIST" cache_converges "$db" 60 pods replicasets
check "at no moment were there more than 20 pods" test "$(cat "$work/max")" -le 20
check "sqlkcm kept running through it" kill -0 "$(cat "$cluster/pids/sqlkcm-deadpeer.pid")"
tap_done
