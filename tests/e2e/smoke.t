#!/usr/bin/env bash
# smoke.t - the local control plane is real and complete: two clusters come up side by
# side, kube-scheduler binds a pod, kwok runs it to Ready, RBAC is enforced, and `down`
# leaves no process behind. Brings up its own clusters (it tests up and down).
# e2e: own-cluster
set -uo pipefail
. "$(dirname "$0")/lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-smoke.XXXXXX")
a=$work/a
b=$work/b
cleanup() {
	"$top/contrib/cluster/down" "$a" >/dev/null 2>&1
	"$top/contrib/cluster/down" "$b" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# Both clusters start at the same time: ports must be chosen, not fixed.
"$top/contrib/cluster/up" "$a" >"$work/a.out" 2>"$work/a.err" &
pid_a=$!
"$top/contrib/cluster/up" --nodes 3 "$b" >"$work/b.out" 2>"$work/b.err" &
pid_b=$!
wait "$pid_a"; status_a=$?
wait "$pid_b"; status_b=$?
if [ "$status_a" = 0 ] && [ "$status_b" = 0 ]; then
	pass "two clusters come up at once in two directories"
else
	fail "two clusters come up at once in two directories" "status $status_a and $status_b"
	sed 's/^/# a: /' "$work/a.err" | tail -n 30
	sed 's/^/# b: /' "$work/b.err" | tail -n 30
	tap_done
	exit 1
fi

check "up prints the kubeconfig path as its last line" \
	test "$(tail -n 1 "$work/a.out")" = "$a/kubeconfig"
server_a=$(grep -m1 'server:' "$a/kubeconfig" | awk '{print $2}')
server_b=$(grep -m1 'server:' "$b/kubeconfig" | awk '{print $2}')
check "each cluster has its own apiserver on 127.0.0.1" \
	bash -c "[[ '$server_a' == https://127.0.0.1:* && '$server_b' == https://127.0.0.1:* && '$server_a' != '$server_b' ]]"
check "the kubeconfig is readable by its owner only" test "$(stat -c %a "$a/kubeconfig")" = 600

# DIR/env puts a kubectl on PATH and points it at the cluster.
kubectl_in() { (. "$1/env" && kubectl "${@:2}"); }
check "env gives a kubectl that reaches the cluster" kubectl_in "$a" get --raw /readyz
check "the requested number of nodes is Ready (10 and 3)" bash -c "
	[ \$(. '$a/env' && kubectl get nodes --no-headers | grep -cw Ready) = 10 ] &&
	[ \$(. '$b/env' && kubectl get nodes --no-headers | grep -cw Ready) = 3 ]"
check "the static token authenticates too" bash -c "
	. '$a/env' && kubectl --token=\"\$(cat '$a/token')\" --server='$server_a' \
		--certificate-authority='$a/pki/ca.crt' --kubeconfig=/dev/null get ns default -o name"

# RBAC is on: the scheduler's identity may bind pods but not create namespaces.
if kubectl_in "$a" --kubeconfig="$a/scheduler.kubeconfig" create namespace forbidden-ns >"$work/rbac" 2>&1; then
	fail "RBAC forbids what a role does not grant"
else
	check "RBAC forbids what a role does not grant" grep -q Forbidden "$work/rbac"
fi

pod_manifest() {
	cat <<POD
apiVersion: v1
kind: Pod
metadata: {name: smoke, namespace: smoke}
spec:
  containers:
  - {name: app, image: registry.k8s.io/pause:3.10}
POD
}
for d in "$a" "$b"; do
	name=${d##*/}
	kubectl_in "$d" create namespace smoke >/dev/null
	check "[$name] a pod is accepted without a default ServiceAccount" \
		bash -c "$(declare -f pod_manifest kubectl_in); pod_manifest | kubectl_in '$d' apply -f -"
	check "[$name] kube-scheduler binds the pod to a kwok node" \
		cluster_wait_until 60 "pod smoke/smoke to be bound" bash -c \
		"(. '$d/env' && kubectl -n smoke get pod smoke -o jsonpath='{.spec.nodeName}') | grep -q '^kwok-node-'"
	check "[$name] kwok moves the pod to Running and Ready" \
		kubectl_in "$d" -n smoke wait pod/smoke --for=condition=Ready --timeout=60s
	check "[$name] the pod's phase is Running" \
		test "$(kubectl_in "$d" -n smoke get pod smoke -o jsonpath='{.status.phase}')" = Running
done

for d in "$a" "$b"; do
	name=${d##*/}
	check "[$name] down exits 0" "$top/contrib/cluster/down" "$d"
	left=$(cluster_processes "$d")
	check "[$name] no process of the cluster is left" test -z "$left"
done
check "down on a stopped cluster is a no-op" "$top/contrib/cluster/down" "$a"

tap_done
