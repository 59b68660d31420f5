#!/usr/bin/env bash
# namespace.t - the namespace's life around its pods, on a control plane whose apiserver
# admits a pod only once its namespace holds the ServiceAccount "default" (the
# ServiceAccount admission plugin on), driven by kubectl as a user would. The controllers
# under test: serviceaccount (the "default" ServiceAccount in every active namespace, made
# again when deleted), root-ca-cert-publisher (the ConfigMap kube-root-ca.crt, key ca.crt,
# in every namespace, restored after a deletion or an edit; after a restart with
# --root-ca-file, that file instead of the kubeconfig's CA), podgc (with
# --terminated-pod-gc-threshold=5: 20 Succeeded pods leave the 5 newest; a pod bound to a
# node that was deleted goes after kube's 40 s quarantine, marked Failed with the
# DisruptionTarget condition first; an unscheduled pod held by a finalizer is marked
# Failed once deleted) and namespace (a deleted namespace holding a Deployment,
# ConfigMaps, custom resources and a pod, a ConfigMap and a custom resource held by a
# finalizer: its pods go first and nothing else while the held pod remains, as kube 1.36
# does; then the rest, the conditions NamespaceContentRemaining and
# NamespaceFinalizersRemaining naming, with kube's reasons and messages, what the
# finalizers hold; it is gone once they are removed), with the Deployment and ReplicaSet
# controllers. Every expected value is kube-controller-manager 1.36's: E2E_NS_CM=kcm runs
# the same checks against it instead of sqlkcm (namespace-kcm.t).
#
# e2e: cluster-options --service-account-admission --nodes 2
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-ns.XXXXXX")
db=$work/cache.db
ns=ns-$RANDOM
early=$ns-early         # exists before the controller manager starts
late=$ns-late           # created while it runs
doomed=$ns-doomed       # deleted with its content
node=$ns-node           # a kwok node of our own, deleted under a pod
group=$ns.ns.sqlkcm.test
crd=widgets.$group
cm=${E2E_NS_CM:-sqlkcm}
case $cm in
sqlkcm | kcm) ;;
*) echo "E2E_NS_CM must be sqlkcm or kcm, not $cm" >&2; exit 2 ;;
esac
echo "# controller manager: $cm; namespaces $early, $late, $doomed"
controllers=namespace,serviceaccount,root-ca-cert-publisher,podgc,deployment,replicaset
hold=ns.sqlkcm.test/hold
watchers=()

# cm_start NAME / cm_stop NAME: the controller manager under test, logging to
# $work/NAME.log; cm_start returns once its caches are synced.
cm_start() {
	if [ "$cm" = kcm ]; then
		kcm_start "$1" --controllers="$controllers" --terminated-pod-gc-threshold=5 --v=2
	else
		sqlkcm_start "$1" --db "$db" --controllers "$controllers" \
		    --terminated-pod-gc-threshold=5 -v 2
		wait_for 120 grep -q 'controller=namespace: caches synced' "$work/$1.log" >/dev/null
	fi
}
cm_stop() {
	if [ "$cm" = kcm ]; then
		kcm_stop "$1"
	else
		sqlkcm_stop "$1"
	fi
}

# unhold NS KIND NAME: takes the finalizers off an object (bounded, for the cleanup).
unhold() {
	timeout 60 kubectl patch -n "$1" "$2" "$3" --type=merge \
	    -p '{"metadata":{"finalizers":null}}' --request-timeout=30s >/dev/null 2>&1
}
cleanup() {
	local p n
	for p in ${watchers[@]+"${watchers[@]}"}; do
		kill "$p" 2>/dev/null
	done
	unhold "$doomed" pod held
	unhold "$doomed" configmap kept
	unhold "$doomed" "$crd" w2
	unhold "$early" pod limbo
	# The namespaces go while the namespace controller still runs (without it they would
	# stay Terminating); a failed run leaves them to the next test's.
	for n in "$late" "$doomed"; do
		timeout 60 kubectl delete namespace "$n" --wait=false --request-timeout=30s \
		    >/dev/null 2>&1
	done
	timeout 60 kubectl delete pods -n "$early" --all --grace-period=0 --force \
	    --wait=false --request-timeout=30s >/dev/null 2>&1
	timeout 60 kubectl delete namespace "$early" --wait=false --request-timeout=30s \
	    >/dev/null 2>&1
	cluster_wait_until 60 "our namespaces to go" eval \
	    '[ -z "$(kubectl get namespace "$early" "$late" "$doomed" --ignore-not-found -o name)" ]'
	kcm_stop ns
	kcm_stop ns-again
	timeout 60 kubectl delete crd "$crd" --ignore-not-found --wait=false \
	    --request-timeout=30s >/dev/null 2>&1
	timeout 60 kubectl delete node "$node" --ignore-not-found --wait=false \
	    --request-timeout=30s >/dev/null 2>&1
	e2e_cleanup "$early"
}
trap cleanup EXIT

# kj NS CODE KUBECTL-GET-ARGS... [-- ARGS...]: `kubectl get -n NS ARGS -o json`, then the
# Python statements CODE on it (as o; its items, for a list, as items) with ARGS in
# sys.argv[1:]; an assert that fails shows what it was given.
kj() {
	local n=$1 code=$2 get=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		get+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	kubectl get -n "$n" "${get[@]}" -o json | python3 -c "import json, sys
o = json.load(sys.stdin)
items = o.get('items', [])
def names(xs):
    return sorted(x['metadata']['name'] for x in xs)
def cond(o, t):
    cs = (o.get('status') or {}).get('conditions') or []
    return next((c for c in cs if c['type'] == t), None)
$code" "$@"
}

# gone NS KUBECTL-GET-ARGS...: none of the objects named exists (any other error fails).
gone() {
	local n=$1 out
	shift
	out=$(kubectl get -n "$n" "$@" --ignore-not-found -o name) || return 1
	[ -z "$out" ] || { echo "still there: $out"; return 1; }
}

# uid NS KIND NAME: its uid.
uid() {
	kubectl get -n "$1" "$2" "$3" -o jsonpath='{.metadata.uid}'
}

# pod NS NAME [SPEC-YAML]: creates a pod running pause, with SPEC-YAML's extra fields
# (indented as spec's children) and labels app=NAME.
pod() {
	kubectl create -n "$1" -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $2
  labels: {app: $2}
spec:
  containers: [{name: c, image: pause}]
${3:-}
EOF
}

# record FILE NS KUBECTL-GET-ARGS...: records every watch event of the objects in
# $work/FILE until the test ends; returns once the current state is in.
record() {
	local file=$work/$1 n=$2
	shift 2
	kubectl get -n "$n" "$@" --watch --output-watch-events -o json >"$file" 2>"$file.err" &
	watchers+=("$!")
	wait_for 30 grep -q '"ADDED"' "$file" >/dev/null
}

# seen FILE CODE: CODE on the events recorded in $work/FILE (as evs).
seen() {
	python3 -c "
import json, sys
dec, buf, evs = json.JSONDecoder(), open(sys.argv[1]).read(), []
while buf.strip():
    ev, end = dec.raw_decode(buf.lstrip())
    buf = buf.lstrip()[end:]
    evs.append(ev)
summary = [(e['type'], e['object']['status'].get('phase'),
            [(c['type'], c.get('reason')) for c in e['object']['status'].get('conditions') or []])
           for e in evs]
$2" "$work/$1"
}

# --- 1. ServiceAccount admission and the "default" ServiceAccount --------------------------
kubectl create namespace "$early" >/dev/null
check "without a ServiceAccount controller, a pod in a new namespace is refused (no default ServiceAccount)" \
    eval '! kubectl run p0 -n "$early" --image=pause 2>"$work/refused" >/dev/null &&
	grep -F "error looking up service account $early/default: serviceaccount \"default\" not found" \
	    "$work/refused"'
cm_start ns
check "the namespace that existed before it started gets the ServiceAccount default" \
    wait_for 60 kubectl get serviceaccount default -n "$early" -o name
check "a pod in it is then admitted, with serviceAccountName default" eval '
	kubectl run p0 -n "$early" --image=pause >/dev/null &&
	[ "$(kubectl get pod p0 -n "$early" -o jsonpath="{.spec.serviceAccountName}")" = default ]'
kubectl create namespace "$late" >/dev/null
check "a namespace created while it runs gets the ServiceAccount default (within 30 s)" \
    wait_for 30 kubectl get serviceaccount default -n "$late" -o name
check "and a pod in that namespace is admitted" kubectl run p1 -n "$late" --image=pause
sa_uid=$(uid "$late" serviceaccount default)
kubectl delete serviceaccount default -n "$late" >/dev/null
check "kubectl delete serviceaccount default: it is made again (a new uid)" wait_for 30 eval '
	u=$(uid "$late" serviceaccount default) && [ -n "$u" ] && [ "$u" != "$sa_uid" ]'
every_namespace_has() {
	local n
	local active='{range .items[?(@.status.phase=="Active")]}{.metadata.name}{" "}{end}'
	for n in $(kubectl get namespaces -o jsonpath="$active"); do
		kubectl get -n "$n" "$@" -o name >/dev/null || return 1
	done
}
check "every active namespace has the ServiceAccount default (kube-system, default, ...)" \
    wait_for 30 every_namespace_has serviceaccount default

# --- 2. kube-root-ca.crt ---------------------------------------------------------------------
# ca_published NS: the ConfigMap holds exactly the cluster's CA (the kubeconfig's) under
# ca.crt, with kube's description annotation.
ca_published() {
	kj "$1" '
ca = open(sys.argv[1]).read()
want = ({"ca.crt": ca}, "Contains a CA bundle that can be used to verify the kube-apiserver "
        "when using internal endpoints such as the internal service IP or "
        "kubernetes.default.svc. No other usage is guaranteed across distributions of "
        "Kubernetes clusters.")
got = (o.get("data"), o["metadata"].get("annotations", {}).get("kubernetes.io/description"))
assert got == want, got' configmap kube-root-ca.crt -- "$cluster/pki/ca.crt"
}
check "kube-root-ca.crt appears in the namespaces, ca.crt = the cluster's CA, with kube's description" \
    wait_for 30 eval 'ca_published "$early" && ca_published "$late"'
check "every active namespace has kube-root-ca.crt" \
    wait_for 30 every_namespace_has configmap kube-root-ca.crt
ca_uid=$(uid "$late" configmap kube-root-ca.crt)
kubectl delete configmap kube-root-ca.crt -n "$late" >/dev/null
check "kubectl delete configmap kube-root-ca.crt: it is made again (a new uid), as it was" \
    wait_for 30 eval 'u=$(uid "$late" configmap kube-root-ca.crt) && [ "$u" != "$ca_uid" ] &&
	ca_published "$late"'
kubectl patch configmap kube-root-ca.crt -n "$late" --type=merge \
    -p '{"data":{"ca.crt":"not a certificate"}}' >/dev/null
check "an edit of ca.crt is undone" wait_for 30 ca_published "$late"
kubectl patch configmap kube-root-ca.crt -n "$late" --type=merge \
    -p '{"data":{"extra":"1"}}' >/dev/null
check "a key added to it is removed" wait_for 30 ca_published "$late"
kubectl annotate configmap kube-root-ca.crt -n "$late" kubernetes.io/description- >/dev/null
check "its description annotation, removed, is put back" wait_for 30 ca_published "$late"

# --- 3. podgc: terminated pods beyond --terminated-pod-gc-threshold=5 ------------------------
# 20 pods no scheduler takes (so that no kubelet-like kwok moves them), created in name
# order in one request, then Succeeded through the status subresource. podgc deletes the
# oldest first (by creationTimestamp, then name): t15 to t19 remain.
for i in $(seq -w 0 19); do
	cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: t$i
  labels: {app: terminated}
spec:
  schedulerName: ns.sqlkcm.test/nobody
  containers: [{name: c, image: pause}]
EOF
done | kubectl create -n "$early" -f - >/dev/null
for i in $(seq -w 0 19); do
	kubectl patch pod "t$i" -n "$early" --subresource=status --type=merge \
	    -p '{"status":{"phase":"Succeeded"}}' >/dev/null
done
check "20 Succeeded pods: the 15 oldest are deleted, t15 to t19 remain (within 90 s)" \
    wait_for 90 kj "$early" 'assert names(items) == ["t15", "t16", "t17", "t18", "t19"], names(items)' \
    pods -l app=terminated
sleep 5
check "5 s later the 5 newest are still there" \
    kj "$early" 'assert names(items) == ["t15", "t16", "t17", "t18", "t19"], names(items)' \
    pods -l app=terminated
kubectl delete pods -n "$early" -l app=terminated --wait=false >/dev/null

# --- 4. podgc: a pod bound to a node that no longer exists -----------------------------------
kubectl create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $node
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: $node}
status:
  allocatable: {cpu: "4", memory: 16Gi, pods: "10"}
  capacity: {cpu: "4", memory: 16Gi, pods: "10"}
EOF
pod "$early" orphan "  nodeName: $node"
check "a pod bound to our node $node runs (kwok)" wait_for 60 eval \
    '[ "$(kubectl get pod orphan -n "$early" -o jsonpath="{.status.phase}")" = Running ]'
record orphan.watch "$early" pod orphan
# The clock starts before the deletion: the quarantine cannot start earlier.
start=$(date +%s.%N)
kubectl delete node "$node" >/dev/null
if wait_for 150 gone "$early" pod orphan >/dev/null; then
	took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }')
	pass "the node deleted, its pod is deleted (after $took s)"
	check "not before kube's 40 s quarantine, nor much after (40 to 100 s: $took s)" \
	    awk -v t="$took" 'BEGIN { exit !(t >= 40 && t <= 100) }'
else
	fail "the node deleted, its pod is deleted" "still there after 150 s"
	skip "not before kube's 40 s quarantine, nor much after" "it was not deleted"
fi
check "it was marked Failed with DisruptionTarget (DeletionByPodGC, \"PodGC: node no longer exists\"), then deleted" \
    wait_for 10 seen orphan.watch '
assert evs[-1]["type"] == "DELETED", summary
st = evs[-1]["object"]["status"]
c = [c for c in st.get("conditions") or [] if c["type"] == "DisruptionTarget"]
got = (st.get("phase"), [(x["status"], x["reason"], x["message"]) for x in c])
assert got == ("Failed", [("True", "DeletionByPodGC", "PodGC: node no longer exists")]), (got, summary)'

# --- 5. podgc: an unscheduled pod being deleted ----------------------------------------------
pod "$early" limbo "  schedulerName: ns.sqlkcm.test/nobody"
kubectl patch pod limbo -n "$early" --type=merge \
    -p "{\"metadata\":{\"finalizers\":[\"$hold\"]}}" >/dev/null
kubectl delete pod limbo -n "$early" --wait=false >/dev/null
check "an unscheduled pod deleted while a finalizer holds it is marked Failed (within 60 s)" \
    wait_for 60 kj "$early" '
assert o["metadata"].get("deletionTimestamp") and o["status"].get("phase") == "Failed", o["status"]' \
    pod limbo
check "with no DisruptionTarget condition (that is for pods of deleted nodes)" kj "$early" '
assert cond(o, "DisruptionTarget") is None, o["status"]' pod limbo
unhold "$early" pod limbo
check "its finalizer removed, it is gone" wait_for 30 gone "$early" pod limbo

# --- 6. a namespace deleted with its content -------------------------------------------------
# Three objects held by a finalizer of ours: a pod, a ConfigMap and a Widget. kube 1.36
# deletes a namespace's pods first and nothing else while one remains (the
# OrderedNamespaceDeletion feature, on by default); then the rest, and the conditions name
# what the finalizers keep.
kubectl create namespace "$doomed" >/dev/null
check "$doomed gets its ServiceAccount default" \
    wait_for 30 kubectl get serviceaccount default -n "$doomed" -o name
kubectl create deployment web -n "$doomed" --image=pause --replicas=2 >/dev/null
for c in c1 c2 kept; do
	kubectl create configmap "$c" -n "$doomed" --from-literal=k=v >/dev/null
done
widget_crd_create "$group"
kubectl wait --for=condition=Established "crd/$crd" --timeout=60s >/dev/null
# (kubectl's own discovery may lag a moment behind the CRD.)
check "two Widgets (a custom resource) are created in it" wait_for 60 eval '
	for w in w1 w2; do
		kubectl get -n "$doomed" "$crd" "$w" -o name >/dev/null 2>&1 ||
		printf "apiVersion: %s/v1\nkind: Widget\nmetadata: {name: %s}\n" "$group" "$w" |
		    kubectl create -n "$doomed" -f - >/dev/null || exit 1
	done'
pod "$doomed" held
for o in pod/held configmap/kept "$crd/w2"; do
	kubectl patch -n "$doomed" "$o" --type=merge \
	    -p "{\"metadata\":{\"finalizers\":[\"$hold\"]}}" >/dev/null
done
check "its Deployment web rolls out (2 pods), the pod held runs" eval '
	kubectl rollout status -n "$doomed" deploy/web --timeout=120s >/dev/null &&
	wait_for 60 eval "[ \"\$(kubectl get pod held -n $doomed -o jsonpath={.status.phase})\" = \
	    Running ]"'
check "kube-root-ca.crt is in it" wait_for 30 ca_published "$doomed"
record doomed.watch "" namespace "$doomed"
kubectl delete namespace "$doomed" --wait=false >/dev/null
check "kubectl delete namespace: it is Terminating" \
    kj "" 'assert o["status"]["phase"] == "Terminating", o["status"]' namespace "$doomed"

# conditions FILE: the namespace's conditions are those of $work/FILE (type status reason
# message, by type).
conditions() {
	kubectl get namespace "$doomed" -o json | python3 -c '
import json, sys
o = json.load(sys.stdin)
for c in sorted(o["status"].get("conditions") or [], key=lambda c: c["type"]):
    print(c["type"], c["status"], c.get("reason"), c.get("message"))' | diff "$work/$1" -
}
cat >"$work/conditions-ok" <<EOF
NamespaceContentRemaining False ContentRemoved All content successfully removed
NamespaceDeletionContentFailure False ContentDeleted All content successfully deleted, may be waiting on finalization
NamespaceDeletionDiscoveryFailure False ResourcesDiscovered All resources successfully discovered
NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions All legacy kube types successfully parsed
NamespaceFinalizersRemaining False ContentHasNoFinalizers All content-preserving finalizers finished
EOF
cat >"$work/conditions-held" <<EOF
NamespaceContentRemaining True SomeResourcesRemain Some resources are remaining: configmaps. has 1 resource instances, widgets.$group has 1 resource instances
NamespaceDeletionContentFailure False ContentDeleted All content successfully deleted, may be waiting on finalization
NamespaceDeletionDiscoveryFailure False ResourcesDiscovered All resources successfully discovered
NamespaceDeletionGroupVersionParsingFailure False ParsedGroupVersions All legacy kube types successfully parsed
NamespaceFinalizersRemaining True SomeFinalizersRemain Some content in the namespace has finalizers remaining: $hold in 2 resource instances
EOF
# left: what is left in the namespace, by kind and name (deleted or not).
left() {
	kubectl get -n "$doomed" deployments,replicasets,pods,configmaps,serviceaccounts,"$crd" \
	    -o name | sort | tr '\n' ' '
}
web_rs=$(kubectl get rs -n "$doomed" -l app=web -o name)
everything_but_held="configmap/c1 configmap/c2 configmap/kept configmap/kube-root-ca.crt"
everything_but_held+=" deployment.apps/web pod/held $web_rs serviceaccount/default"
everything_but_held+=" widget.$group/w1 widget.$group/w2 "
check "its pods are deleted first: web's go, held stays (a deletionTimestamp, its finalizer)" \
    wait_for 60 eval '[ "$(left)" = "$everything_but_held" ] &&
	kj "$doomed" "assert o[\"metadata\"].get(\"deletionTimestamp\"), o[\"metadata\"]" pod held'
check "while the pod remains its conditions say all is well (kube's OK reasons and messages)" \
    wait_for 60 conditions conditions-ok
sleep 10
check "10 s later nothing else was deleted (kube deletes the rest once no pod remains)" eval '
	[ "$(left)" = "$everything_but_held" ] &&
	kj "$doomed" "assert not any(x[\"metadata\"].get(\"deletionTimestamp\") for x in items), \
	    names(items)" deployments,replicasets,configmaps,serviceaccounts,"$crd"'
unhold "$doomed" pod held
check "the pod released, everything goes but the ConfigMap and the Widget a finalizer holds" \
    wait_for 90 eval '[ "$(left)" = "configmap/kept widget.$group/w2 " ]'
check "its conditions: a ConfigMap and a Widget remain, held by $hold (kube's reasons and messages)" \
    wait_for 60 conditions conditions-held
sleep 10
check "10 s later it is still Terminating with the same conditions" eval '
	conditions conditions-held &&
	kj "" "assert o[\"status\"][\"phase\"] == \"Terminating\", o[\"status\"]" namespace "$doomed"'
check "nothing was made again in it meanwhile (no ServiceAccount, no kube-root-ca.crt)" eval '
	[ "$(left)" = "configmap/kept widget.$group/w2 " ]'
unhold "$doomed" configmap kept
unhold "$doomed" "$crd" w2
if took=$(seconds_until 120 gone "" namespace "$doomed"); then
	pass "their finalizers removed, the namespace is gone (after $took s)"
else
	fail "their finalizers removed, the namespace is gone" "still there after 120 s"
fi
check "its watch: Terminating, then DELETED" wait_for 10 python3 -c '
import json, sys
dec, buf, evs = json.JSONDecoder(), open(sys.argv[1]).read(), []
while buf.strip():
    ev, end = dec.raw_decode(buf.lstrip())
    buf = buf.lstrip()[end:]
    evs.append(ev)
seen = [(e["type"], e["object"]["status"].get("phase")) for e in evs]
assert seen[-1][0] == "DELETED" and ("MODIFIED", "Terminating") in seen, seen' \
    "$work/doomed.watch"

# --- 7. --root-ca-file, after a restart ------------------------------------------------------
cm_stop ns
status=$?
if [ "$cm" = sqlkcm ]; then
	check "sqlkcm stops with status 0 on SIGTERM" test "$status" = 0
else
	skip "sqlkcm stops with status 0 on SIGTERM" "kube-controller-manager ran"
fi
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=ns.sqlkcm.test -keyout "$work/other-ca.key" -out "$work/other-ca.crt" 2>/dev/null
if [ "$cm" = kcm ]; then
	kcm_start ns-again --controllers="$controllers" --terminated-pod-gc-threshold=5 \
	    --root-ca-file="$work/other-ca.crt" --v=2
else
	sqlkcm_start ns-again --db "$db" --controllers "$controllers" \
	    --terminated-pod-gc-threshold=5 --root-ca-file="$work/other-ca.crt" -v 2
	wait_for 120 grep -q 'controller=namespace: caches synced' "$work/ns-again.log" >/dev/null
fi
# other_ca NS: kube-root-ca.crt holds exactly the file given to --root-ca-file.
other_ca() {
	kj "$1" 'assert o["data"] == {"ca.crt": open(sys.argv[1]).read()}, o["data"]' \
	    configmap kube-root-ca.crt -- "$work/other-ca.crt"
}
check "restarted with --root-ca-file, it publishes that file in kube-root-ca.crt instead" \
    wait_for 30 eval 'other_ca "$early" && other_ca "$late" && other_ca kube-system'

# --- 8. the other namespaces, deleted with their pods --------------------------------------
kubectl delete namespace "$early" "$late" --wait=false >/dev/null
check "the namespaces $early and $late, deleted with their running pods, are gone (within 90 s)" \
    wait_for 90 gone "" namespace "$early" "$late"

cm_stop ns-again
status=$?
if [ "$cm" = sqlkcm ]; then
	check "sqlkcm stops with status 0 on SIGTERM at the end" test "$status" = 0
	check "no request of sqlkcm was forbidden (403), but writes into a namespace being deleted" \
	    eval '! grep -i -E "forbidden|code=403|HTTP 403" "$work/ns.log" "$work/ns-again.log" |
		grep -v "being terminated"'
else
	skip "sqlkcm stops with status 0 on SIGTERM at the end" "kube-controller-manager ran"
	skip "no request of sqlkcm was forbidden (403), but writes into a namespace being deleted" \
	    "kube-controller-manager ran"
fi

tap_done
