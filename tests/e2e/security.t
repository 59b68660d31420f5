#!/usr/bin/env bash
# security.t - the security defaults on the real control plane:
#   - TLS verification is on by default: an apiserver whose certificate the kubeconfig does
#     not vouch for is refused, and the log says why; insecure-skip-tls-verify is honoured
#     only when the kubeconfig says so;
#   - a bearer token is never printed, even at --v=10, nor stored in the cache or the
#     recorded event log;
#   - the cache and its -wal and -shm files are 0600, even under a permissive umask.
# (The HTTP endpoints' refusals of unauthenticated /metrics and /configz are in metrics.t.)
# e2e: locks
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

umask 022
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-security.XXXXXX")
ns=security-$RANDOM
trap 'e2e_cleanup "$ns"' EXIT
kubectl create namespace "$ns" >/dev/null
kubectl run -n "$ns" marker --image=pause >/dev/null

# kubeconfig FILE [EXTRA-CLUSTER-FIELD]: the cluster's server with the static token as user
# and no CA, plus one more field of the cluster entry when given.
token=$(cat "$cluster/token")
server=$(sed -n 's|.*server: \(https://[^ ]*\).*|\1|p' "$cluster/kubeconfig" | head -n1)
kubeconfig() {
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: $server
${2:+    $2}
users:
- name: u
  user:
    token: $token
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
EOF
	chmod 600 "$1"
}

# 1. No CA for the apiserver's certificate (its CA is not in the system's store): refused.
kubeconfig "$work/no-ca.kubeconfig"
sqlkcm_start noca --kubeconfig "$work/no-ca.kubeconfig" --db "$work/noca.db" --controllers ''
check "without the cluster's CA, the connection is refused and the log says why" \
	cluster_wait_until 30 "a TLS refusal" grep -q "failed: SSL certificate problem: unable to get local issuer certificate" "$work/noca.log"
check "and nothing is cached" test "$(sqlite3 "$work/noca.db" 'SELECT count(*) FROM pods')" = 0
sqlkcm_stop noca

# 2. The kubeconfig asks for no verification: honoured.
kubeconfig "$work/insecure.kubeconfig" "insecure-skip-tls-verify: true"
sqlkcm_start insecure --kubeconfig "$work/insecure.kubeconfig" --db "$work/insecure.db" \
	--controllers '' --record "$work/events.log" --v=10
check "with insecure-skip-tls-verify: true, the caches sync" \
	cluster_wait_until 60 "a sync" grep -q "synced by" "$work/insecure.log"

# 3. The token, at --v=10, in the log, the cache and the record; the files' modes.
for f in "$work/insecure.db" "$work/insecure.db-wal" "$work/insecure.db-shm"; do
	check "${f##*/} is 0600 while sqlkcm runs" test "$(stat -c %a "$f")" = 600
done
sqlkcm_stop insecure
check "the log at --v=10 has requests in it" grep -q "GET" "$work/insecure.log"
check "the token is not in the log at --v=10" eval '! grep -qF "$token" "$work/insecure.log"'
check "the token is not in the cache" eval '! grep -qaF "$token" "$work"/insecure.db*'
check "the token is not in the recorded event log" eval '! grep -qF "$token" "$work/events.log"'
check "the recorded log holds what was watched" grep -q '"name":"marker"' "$work/events.log"
tap_done
