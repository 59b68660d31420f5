#!/usr/bin/env bash
# daemonset.t - the DaemonSet controller on kwok nodes of the test's own: a pod on each node
# its nodeSelector picks, placed by a required node affinity on the node's name and bound
# by the scheduler, labelled with its ControllerRevision's hash; a node tainted NoSchedule
# keeps its pod but gets no new one; one tainted NoExecute loses its pod; a node added gets
# a pod, one removed leaves the count; a rolling update with maxSurge 1 replaces every pod
# with a pod of a second revision; `kubectl rollout undo` rolls back to the first revision's
# hash, renumbered 3; with OnDelete a template change replaces only the pods deleted by hand.
# Its nodes are tainted NoSchedule for it (sqlkcm-e2e/owner), which only its pods tolerate:
# another test's pod there would go with the NoExecute taint or the nodes removed.
#
# With E2E_DS_CM=kcm the same runs against kube-controller-manager 1.36 (daemonset-kcm.t):
# every state asserted here is shown to be kcm's too.
# e2e: locks daemonset nodes
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_DS_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-daemonset.XXXXXX")
prefix=ds-$cm-$RANDOM
ns=$prefix
nodes=()
for i in 1 2 3 4 5; do nodes+=("$prefix-$i"); done
extra=$prefix-6
cleanup() {
	kcm_stop ds
	timeout 60 kubectl delete daemonset -n "$ns" --all --wait=false >/dev/null 2>&1
	timeout 60 kubectl delete node "${nodes[@]}" "$extra" --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# node NAME: a kwok node carrying the test's label.
node() {
	kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: $1, sqlkcm-e2e-ds: $prefix}
spec:
  taints: [{key: sqlkcm-e2e/owner, value: $prefix, effect: NoSchedule}]
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "10"}
  capacity: {cpu: "8", memory: 32Gi, pods: "10"}
EOF
}
for n in "${nodes[@]}"; do node "$n"; done
kubectl create namespace "$ns" >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
spec:
  selector: {matchLabels: {app: ds}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata: {labels: {app: ds}}
    spec:
      nodeSelector: {sqlkcm-e2e-ds: $prefix}
      tolerations: [{key: sqlkcm-e2e/owner, operator: Exists, effect: NoSchedule}]
      containers: [{name: c, image: pause, env: [{name: V, value: "1"}]}]
EOF

if [ "$cm" = kcm ]; then
	kcm_start ds --controllers=daemonset-controller
else
	sqlkcm_start ds --db "$work/cache.db" --controllers daemonset -v 2
fi

# pods_by_node: "node hash phase" for each live pod of the DaemonSet, sorted.
pods_by_node() {
	kubectl get pods -n "$ns" -l app=ds -o json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    if p["metadata"].get("deletionTimestamp"):
        continue
    print(p["spec"].get("nodeName", "-"), p["metadata"]["labels"].get("controller-revision-hash", "-"),
          p["status"].get("phase", "-"))' | sort
}
# status_line [observedGeneration]: the counts of the DaemonSet's status (a 0 the apiserver
# leaves out as 0), and its observedGeneration when asked.
status_line() {
	kubectl get daemonset -n "$ns" ds -o json | python3 -c '
import json, sys
s = json.load(sys.stdin).get("status", {})
f = ["desiredNumberScheduled", "currentNumberScheduled", "numberMisscheduled", "numberReady",
     "updatedNumberScheduled", "numberAvailable"] + sys.argv[1:]
print(" ".join(str(s.get(k, 0)) for k in f))' "$@"
}
# status_is "desired current misscheduled ready updated available"
status_is() {
	local got
	got=$(status_line)
	[ "$got" = "$1" ] || { echo "status: got '$got', want '$1'"; return 1; }
}
# revisions: "name revision hash" of the DaemonSet's revisions, by revision.
revisions() {
	kubectl get controllerrevisions -n "$ns" -o json | python3 -c '
import json, sys
items = sorted(json.load(sys.stdin)["items"], key=lambda r: r["revision"])
for r in items:
    print(r["metadata"]["name"], r["revision"], r["metadata"]["labels"].get("controller-revision-hash", "-"))'
}
# one_running_pod_per NODE...: exactly one Running pod on each NODE, none elsewhere, all of
# hash $want_hash (any when empty).
one_running_pod_per() {
	local want got
	got=$(pods_by_node)
	want=$(for n in "$@"; do echo "$n"; done | sort)
	[ "$(echo "$got" | awk '$3 == "Running" {print $1}')" = "$want" ] &&
	    [ "$(echo "$got" | wc -l)" = "$#" ] || { echo "pods: $got"; return 1; }
	if [ -n "${want_hash:-}" ]; then
		[ -z "$(echo "$got" | awk -v h="$want_hash" '$2 != h')" ] || { echo "pods: $got"; return 1; }
	fi
}

want_hash=
check "a Running pod on each of the 5 selected nodes" \
    wait_for 120 one_running_pod_per "${nodes[@]}"
check "the status counts 5 desired, current, ready, updated and available" \
    wait_for 60 status_is "5 5 0 5 5 5"
rev1=$(revisions | awk 'NR == 1 {print $1}')
hash1=$(revisions | awk 'NR == 1 {print $3}')
check "one ControllerRevision, revision 1, named ds-<hash>" \
    test "$(revisions)" = "ds-$hash1 1 $hash1"
want_hash=$hash1
check "every pod carries the revision's hash" one_running_pod_per "${nodes[@]}"
pinned=$(kubectl get pods -n "$ns" -l app=ds -o jsonpath='{range .items[*]}{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0]}={.spec.nodeName} {end}')
pinned_ok() { for p in $pinned; do [ "${p%%=*}" = "${p#*=}" ] || return 1; done; [ -n "$pinned" ]; }
check "each pod is pinned to its node by a required node affinity on metadata.name" pinned_ok
check "each pod tolerates the not-ready and unreachable taints kube adds" test \
    "$(kubectl get pods -n "$ns" -l app=ds -o jsonpath='{.items[0].spec.tolerations[*].key}')" = \
    "sqlkcm-e2e/owner node.kubernetes.io/not-ready node.kubernetes.io/unreachable node.kubernetes.io/disk-pressure node.kubernetes.io/memory-pressure node.kubernetes.io/pid-pressure node.kubernetes.io/unschedulable"

# NoSchedule: the pod stays, and once deleted is not replaced. (kube's controller looks at
# a node's change only when it wants a pod created or deleted there: the taint alone
# changes no status until the next sync, which the pod's deletion brings.)
kubectl taint node "${nodes[0]}" sqlkcm-e2e=ns:NoSchedule >/dev/null
check "a node tainted NoSchedule keeps its pod" one_running_pod_per "${nodes[@]}"
kubectl delete pod -n "$ns" --wait=false \
    "$(kubectl get pods -n "$ns" -l app=ds --field-selector spec.nodeName="${nodes[0]}" -o name | sed 's|pod/||')" >/dev/null
check "its pod deleted, the NoSchedule node gets no new one" \
    wait_for 60 one_running_pod_per "${nodes[@]:1}"
check "the status no longer counts it" wait_for 60 status_is "4 4 0 4 4 4"

# NoExecute: the pod leaves.
kubectl taint node "${nodes[1]}" sqlkcm-e2e=ne:NoExecute >/dev/null
check "a node tainted NoExecute loses its pod" \
    wait_for 60 one_running_pod_per "${nodes[@]:2}"
check "the status counts 3" wait_for 60 status_is "3 3 0 3 3 3"

# A node added gets a pod; removed, it is no longer desired.
node "$extra"
check "a node added gets a pod" wait_for 120 one_running_pod_per "${nodes[@]:2}" "$extra"
check "the status counts 4" wait_for 60 status_is "4 4 0 4 4 4"
kubectl delete node "$extra" >/dev/null
# Its pod is the pod garbage collector's, which does not run here: deleted by hand, which
# syncs the DaemonSet (kube's has no handler for a node's deletion). Not before the
# controller's cache has lost the node: a sync that still sees it makes its pod again
# (sqlkcm holds node events for --watch-batch-period; kcm's informer has it by now).
node_cached() {
	[ "$(sqlite3 "$work/cache.db" "SELECT count(*) FROM cache_objects
	    WHERE resource = 'nodes' AND name = '$1'")" != 0 ]
}
[ "$cm" = sqlkcm ] && wait_for 30 eval '! node_cached "$extra"' >/dev/null
kubectl delete -n "$ns" --grace-period=0 --force \
    $(kubectl get pods -n "$ns" -l app=ds --field-selector spec.nodeName="$extra" -o name) >/dev/null 2>&1
check "a node removed is no longer desired" wait_for 60 status_is "3 3 0 3 3 3"

# Rolling update with maxSurge 1: a second revision, every pod replaced.
kubectl set env -n "$ns" daemonset/ds V=2 >/dev/null
revision_count() { [ "$(revisions | wc -l)" = "$1" ]; }
check "a template change makes a second revision" wait_for 60 revision_count 2
hash2=$(revisions | awk '$2 == 2 {print $3}')
check "the second revision has another hash" test -n "$hash2" -a "$hash2" != "$hash1"
want_hash=$hash2
check "the rolling update replaces every pod with one of the second revision" \
    wait_for 180 one_running_pod_per "${nodes[@]:2}"
check "the status counts 3 updated" wait_for 60 status_is "3 3 0 3 3 3"
surged() {
	kubectl get events -n "$ns" --field-selector involvedObject.kind=DaemonSet,reason=SuccessfulCreate \
	    -o jsonpath='{range .items[*]}{.count}{"\n"}{end}' | awk '{n += $1} END {exit !(n >= 6)}'
}
check "each replacement was a creation (SuccessfulCreate events)" wait_for 30 surged

# Undo: back to the first revision's template and hash, the revision renumbered 3.
kubectl rollout undo -n "$ns" daemonset/ds >/dev/null 2>&1
check "rollout undo renumbers the first revision 3" \
    wait_for 60 sh -c "kubectl get controllerrevision -n '$ns' '$rev1' -o jsonpath='{.revision}' | grep -qx 3"
want_hash=$hash1
check "the undo rolls every pod back to the first revision's hash" \
    wait_for 180 one_running_pod_per "${nodes[@]:2}"
check "no third revision was made" revision_count 2

# OnDelete: a template change replaces nothing by itself; a pod deleted comes back new.
kubectl patch -n "$ns" daemonset/ds --type=merge \
    -p '{"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":null}}}' >/dev/null
kubectl set env -n "$ns" daemonset/ds V=3 >/dev/null
check "OnDelete: a template change makes a third revision" wait_for 60 revision_count 3
hash3=$(revisions | awk '$2 == 4 {print $3}')
check "the status shows 0 updated pods" wait_for 60 status_is "3 3 0 3 0 3"
want_hash=$hash1
check "OnDelete: the pods stay as they were" one_running_pod_per "${nodes[@]:2}"
kubectl delete pod -n "$ns" --wait=false \
    "$(kubectl get pods -n "$ns" -l app=ds --field-selector spec.nodeName="${nodes[2]}" -o name | sed 's|pod/||')" >/dev/null
new_on_node() { pods_by_node | grep -q "^${nodes[2]} $hash3 Running\$"; }
check "OnDelete: the pod deleted is replaced by one of the new revision" wait_for 120 new_on_node
check "the status shows 1 updated pod" wait_for 60 status_is "3 3 0 3 1 3"

# For the kcm comparison: the end state, as daemonset-kcm.t reads it.
if [ -n "${E2E_DS_STATE:-}" ]; then
	{
		echo "status $(status_line observedGeneration)"
		revisions | awk '{print "revision", $2}'
		pods_by_node | sed "s/$prefix/P/" | awk -v h1="$hash1" -v h3="$hash3" \
		    '{print "pod", $1, ($2 == h1 ? "rev1" : $2 == h3 ? "rev3" : "other"), $3}'
	} >"$E2E_DS_STATE"
fi
tap_done
