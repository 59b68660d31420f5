#!/usr/bin/env bash
# garbagecollector.t - the garbage collector (with the Deployment and ReplicaSet controllers)
# on a real control plane, driven by kubectl as a user would: a Deployment deleted in the
# background, with --cascade=orphan and with --cascade=foreground; a ReplicaSet deleted in
# the foreground while one of its pods holds on (a finalizer of ours); a chain of owners
# across kinds (Secret -> ConfigMap -> Service); owner references that never pointed at
# anything (no such name, or a name whose uid is not theirs); an object with two owners
# losing one; a custom resource whose CRD is created while the collector runs; a restart
# of the controller manager with a deletion made while it was down (sqlkcm's warm start);
# and a cluster-scoped object that names a namespaced owner (an OwnerRefInvalidNamespace
# warning Event, and the object is left alone). Every expected value is
# kube-controller-manager 1.36's: E2E_GC_CM=kcm runs the same checks against it instead of
# sqlkcm (the restart checks, which are about sqlkcm's stored cache, are then skipped).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-gc.XXXXXX")
db=$work/cache.db
ns=gc-$RANDOM
cm=${E2E_GC_CM:-sqlkcm}
case $cm in
sqlkcm | kcm) ;;
*) echo "E2E_GC_CM must be sqlkcm or kcm, not $cm" >&2; exit 2 ;;
esac
echo "# controller manager: $cm; namespace $ns"

# Cluster-scoped objects of this run, which the namespace's deletion does not take along,
# named after it (so that one left behind by a run that died cannot trip the next).
group=$ns.gc.sqlkcm.test
crd=widgets.$group
export GC_WIDGET_GROUP=$group
role=$ns-owned-by-a-configmap
watchers=()
held=

# cm_start NAME / cm_stop NAME: the controller manager under test, with the garbage
# collector and the Deployment and ReplicaSet controllers, logging to $work/NAME.log; it
# returns once the collector has synced its caches.
cm_start() {
	if [ "$cm" = kcm ]; then
		kcm_start "$1" --controllers=garbagecollector,deployment,replicaset --v=2
		wait_for 120 grep -q '"Proceeding to collect garbage"' "$work/$1.log" >/dev/null
	else
		sqlkcm_start "$1" --db "$db" --controllers garbagecollector,deployment,replicaset -v 2
		wait_for 120 grep -q 'controller=garbagecollector: caches synced' "$work/$1.log" \
		    >/dev/null
	fi
}
cm_stop() {
	if [ "$cm" = kcm ]; then
		kcm_stop "$1"
	else
		sqlkcm_stop "$1"
	fi
}
# unstick_widgets: takes the finalizers off the Widgets left in the namespace (a collector
# that failed to honour foregroundDeletion leaves them), so that the CRD's deletion, which
# deletes them, can end.
unstick_widgets() {
	local w
	for w in $(kubectl get "$crd" -n "$ns" -o name --request-timeout=30s 2>/dev/null); do
		timeout 60 kubectl patch -n "$ns" "$w" --type=merge \
		    -p '{"metadata":{"finalizers":null}}' --request-timeout=30s >/dev/null 2>&1
	done
}
cleanup() {
	local p
	for p in ${watchers[@]+"${watchers[@]}"}; do
		kill "$p" 2>/dev/null
	done
	kcm_stop gc
	[ -n "$held" ] && timeout 60 kubectl patch -n "$ns" pod "$held" --type=merge \
	    -p '{"metadata":{"finalizers":null}}' --request-timeout=30s >/dev/null 2>&1
	unstick_widgets
	timeout 60 kubectl delete crd "$crd" --ignore-not-found --wait=false \
	    --request-timeout=30s >/dev/null 2>&1
	timeout 60 kubectl delete clusterrole "$role" --ignore-not-found --wait=false \
	    --request-timeout=30s >/dev/null 2>&1
	# The Deployments first (background: no collector runs any more to honour a finalizer),
	# so that no Deployment controller started later in this cluster recreates the
	# ReplicaSets e2e_cleanup deletes.
	timeout 60 kubectl delete deployments,configmaps,secrets,services -n "$ns" --all \
	    --cascade=background --wait=false --request-timeout=30s >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# kj CODE KUBECTL-GET-ARGS... [-- ARGS...]: runs `kubectl get KUBECTL-GET-ARGS -o json` in
# the namespace (ignored for cluster-scoped kinds) and the Python statements CODE on it (as
# o; items, for a list), with the helpers of gc.py and ARGS in sys.argv[1:]; an assert that
# fails shows what it was given.
cat >"$work/gc.py" <<'PY'
import json, sys
o = json.load(sys.stdin)
items = o.get("items", [])
def meta(x):
    return x["metadata"]
def name(x):
    return x["metadata"]["name"]
def names(xs):
    return sorted(name(x) for x in xs)
def refs(x):
    return x["metadata"].get("ownerReferences") or []
def fins(x):
    return x["metadata"].get("finalizers") or []
def deleting(x):
    return bool(x["metadata"].get("deletionTimestamp"))
def brief(x):
    m = x["metadata"]
    return {"name": m["name"], "deletionTimestamp": m.get("deletionTimestamp"),
            "finalizers": m.get("finalizers"),
            "owners": [(r["kind"], r["name"], r["uid"]) for r in refs(x)]}
PY
kj() {
	local code=$1 get=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		get+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	kubectl get -n "$ns" "${get[@]}" -o json | python3 -c "exec(open('$work/gc.py').read())
$code" "$@"
}

# gone KUBECTL-GET-ARGS...: none of the objects named exists any more (a GET that fails for
# another reason than NotFound does not count).
gone() {
	local out
	out=$(kubectl get -n "$ns" "$@" --ignore-not-found -o name) || return 1
	[ -z "$out" ] || { echo "still there: $out"; return 1; }
}

# present KIND NAME: the object exists and is not being deleted.
present() {
	kj 'assert not deleting(o), brief(o)' "$1" "$2"
}

# ref KIND NAME: the object as an owner: "APIVERSION,KIND,NAME,UID", for make.
ref() {
	kubectl get -n "$ns" "$1" "$2" -o jsonpath='{.apiVersion},{.kind},{.metadata.name},{.metadata.uid}'
}

# uid KIND NAME: its uid.
uid() {
	kubectl get -n "$ns" "$1" "$2" -o jsonpath='{.metadata.uid}'
}

# make KIND NAME [OWNER...]: creates a ConfigMap, Secret, Service (ClusterIP, one port),
# ClusterRole or Widget (of $crd) NAME with an ownerReference to each OWNER (as ref prints
# it).
cat >"$work/make.py" <<'PY'
import json, os, sys
kind, name = sys.argv[1], sys.argv[2]
owners = [dict(zip(("apiVersion", "kind", "name", "uid"), s.split(","))) for s in sys.argv[3:]]
body = {
    "ConfigMap": {"apiVersion": "v1", "data": {"k": "v"}},
    "Secret": {"apiVersion": "v1", "type": "Opaque", "stringData": {"k": "v"}},
    "Service": {"apiVersion": "v1",
                "spec": {"type": "ClusterIP", "ports": [{"name": "http", "port": 80}]}},
    "ClusterRole": {"apiVersion": "rbac.authorization.k8s.io/v1", "rules": []},
    "Widget": {"apiVersion": os.environ.get("GC_WIDGET_GROUP", "") + "/v1", "spec": {"size": 1}},
}[kind]
body["kind"] = kind
body["metadata"] = {"name": name}
if owners:
    body["metadata"]["ownerReferences"] = owners
print(json.dumps(body))
PY
make() {
	python3 "$work/make.py" "$@" | kubectl create -n "$ns" -f - >/dev/null
}

# record FILE KUBECTL-GET-ARGS...: records every watch event of the objects in $work/FILE
# (kubectl's concatenated JSON), in the background until the test ends; returns once the
# watch has printed the objects' current state (so that nothing done after is missed).
record() {
	local file=$work/$1
	shift
	kubectl get -n "$ns" "$@" --watch --output-watch-events -o json >"$file" 2>"$file.err" &
	watchers+=("$!")
	wait_for 30 grep -q '"ADDED"' "$file" >/dev/null
}

# seen FILE CODE: the Python statements CODE on the events recorded in $work/FILE (as evs,
# each {"type": ..., "object": ...}), with the helpers of gc.py.
seen() {
	python3 -c "
import json, sys
exec(open('$work/gc.py').read().replace('o = json.load(sys.stdin)', 'o = {}'))
dec, buf, evs = json.JSONDecoder(), open(sys.argv[1]).read(), []
while buf.strip():
    ev, end = dec.raw_decode(buf.lstrip())
    buf = buf.lstrip()[end:]
    evs.append(ev)
summary = [(e['type'], brief(e['object'])) for e in evs]
$2" "$work/$1"
}

# count KIND SELECTOR N: N objects of KIND carry the labels SELECTOR, none being deleted.
count() {
	kj 'assert len(items) == int(sys.argv[1]) and not any(deleting(x) for x in items), [brief(x) for x in items]' \
	    "$1" -l "$2" -- "$3"
}

rollout() {
	kubectl rollout status -n "$ns" "deploy/$1" --timeout="${2:-120}s"
}

kubectl create namespace "$ns" >/dev/null
cm_start gc
current=gc

# --- 1. a Deployment deleted in the background (kubectl's default) ------------------------
kubectl create deployment web -n "$ns" --image=pause --replicas=2 >/dev/null
rollout web >/dev/null
kubectl set image -n "$ns" deploy/web pause=pause:2 >/dev/null
check "deployment web, rolled out twice: two ReplicaSets, two pods" \
    wait_for 120 sh -c "kubectl rollout status -n $ns deploy/web --timeout=110s >/dev/null &&
	kubectl get rs -n $ns -l app=web -o name | wc -l | grep -qx 2"
check "web's two pods exist" wait_for 60 count pods app=web 2
kubectl delete deployment web -n "$ns" --timeout=60s >/dev/null
check "kubectl delete deployment web: the Deployment is gone" gone deployment web
check "web's ReplicaSets are deleted" wait_for 120 kj 'assert not items, [brief(x) for x in items]' rs -l app=web
check "web's pods are deleted" wait_for 120 kj 'assert not items, [brief(x) for x in items]' pods -l app=web

# --- 2. --cascade=orphan -------------------------------------------------------------------
kubectl create deployment keep -n "$ns" --image=pause --replicas=2 >/dev/null
rollout keep >/dev/null
check "deployment keep: one ReplicaSet, two pods" wait_for 60 sh -c "
	kubectl get rs -n $ns -l app=keep -o name | wc -l | grep -qx 1 &&
	kubectl get pods -n $ns -l app=keep -o name | wc -l | grep -qx 2"
keep_rs=$(kubectl get rs -n "$ns" -l app=keep -o jsonpath='{.items[0].metadata.name}')
keep_rs_uid=$(uid rs "$keep_rs")
record keep.watch deployment keep
kubectl delete deployment keep -n "$ns" --cascade=orphan --wait=false >/dev/null
check "delete deployment keep --cascade=orphan: the Deployment goes" \
    wait_for 90 gone deployment keep
check "on its way it had a deletionTimestamp and the orphan finalizer, then was deleted" \
    wait_for 10 seen keep.watch '
assert evs[-1]["type"] == "DELETED", summary
assert any(e["type"] == "MODIFIED" and deleting(e["object"]) and "orphan" in fins(e["object"])
           for e in evs), summary'
sleep 5
check "its ReplicaSet stays (5 s later), with no ownerReference left" kj '
assert not deleting(o) and refs(o) == [], brief(o)' rs "$keep_rs"
check "the ReplicaSet's two pods stay, still controlled by it" kj '
assert len(items) == 2 and not any(deleting(x) for x in items), [brief(x) for x in items]
assert all([(r["kind"], r["uid"]) for r in refs(x)] == [("ReplicaSet", sys.argv[1])] for x in items), \
    [brief(x) for x in items]' pods -l app=keep -- "$keep_rs_uid"

# --- 3. --cascade=foreground -----------------------------------------------------------------
# A ReplicaSet whose deletion waits for its pods, one of which holds on to a finalizer of ours.
kubectl apply -n "$ns" -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: fg
spec:
  replicas: 2
  selector:
    matchLabels: {app: fg}
  template:
    metadata:
      labels: {app: fg}
    spec:
      containers: [{name: c, image: pause}]
EOF
check "ReplicaSet fg has two pods" wait_for 90 count pods app=fg 2
held=$(kubectl get pods -n "$ns" -l app=fg -o jsonpath='{.items[0].metadata.name}')
other=$(kubectl get pods -n "$ns" -l app=fg -o jsonpath='{.items[1].metadata.name}')
kubectl patch -n "$ns" pod "$held" --type=merge \
    -p '{"metadata":{"finalizers":["gc.sqlkcm.test/hold"]}}' >/dev/null
record fg.watch rs fg
kubectl delete rs fg -n "$ns" --cascade=foreground --wait=false >/dev/null
check "delete rs fg --cascade=foreground: fg waits with a deletionTimestamp and the foregroundDeletion finalizer" \
    wait_for 30 kj 'assert deleting(o) and fins(o) == ["foregroundDeletion"], brief(o)' rs fg
check "fg's pod without a finalizer is deleted" wait_for 120 gone pod "$other"
check "fg's held pod is being deleted (deletionTimestamp), its finalizer keeps it" \
    wait_for 60 kj 'assert deleting(o) and fins(o) == ["gc.sqlkcm.test/hold"], brief(o)' pod "$held"
sleep 5
check "5 s later fg still waits for the held pod, foregroundDeletion in place" \
    kj 'assert deleting(o) and fins(o) == ["foregroundDeletion"], brief(o)' rs fg
kubectl patch -n "$ns" pod "$held" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
check "once the held pod is gone, fg is deleted" wait_for 120 gone rs fg
held=
check "fg's pods are all gone" kj 'assert not items, [brief(x) for x in items]' pods -l app=fg
check "fg's watch: deletionTimestamp + foregroundDeletion, then DELETED" wait_for 10 seen fg.watch '
assert evs[-1]["type"] == "DELETED", summary
assert any(deleting(e["object"]) and fins(e["object"]) == ["foregroundDeletion"] for e in evs), summary'

# A Deployment deleted in the foreground: its ReplicaSet, which has dependents of its own,
# is deleted in the foreground too.
kubectl create deployment deep -n "$ns" --image=pause --replicas=2 >/dev/null
rollout deep >/dev/null
check "deployment deep: one ReplicaSet, two pods" wait_for 60 sh -c "
	kubectl get rs -n $ns -l app=deep -o name | wc -l | grep -qx 1 &&
	kubectl get pods -n $ns -l app=deep -o name | wc -l | grep -qx 2"
record deep.watch deployment deep
record deep-rs.watch rs -l app=deep
kubectl delete deployment deep -n "$ns" --cascade=foreground --wait=false >/dev/null
deep_gone() {
	gone deployment deep && kj 'assert not items, [brief(x) for x in items]' rs,pods -l app=deep
}
check "delete deployment deep --cascade=foreground: deep, its ReplicaSet and pods all go" \
    wait_for 120 deep_gone
check "deep had a deletionTimestamp and the foregroundDeletion finalizer, then was deleted" \
    wait_for 10 seen deep.watch '
assert evs[-1]["type"] == "DELETED", summary
assert any(deleting(e["object"]) and "foregroundDeletion" in fins(e["object"]) for e in evs), summary'
check "deep's ReplicaSet was deleted in the foreground too (foregroundDeletion), then deleted" \
    wait_for 10 seen deep-rs.watch '
assert evs[-1]["type"] == "DELETED", summary
assert any(deleting(e["object"]) and "foregroundDeletion" in fins(e["object"]) for e in evs), summary'

# --- 4. a chain of owners across kinds: Secret s1 <- ConfigMap c1 <- Service svc1 -----------
make Secret s1
make ConfigMap c1 "$(ref secret s1)"
make Service svc1 "$(ref configmap c1)"
check "the chain exists: s1, c1 owned by s1, svc1 owned by c1" sh -c "
	kubectl get -n $ns secret/s1 configmap/c1 service/svc1 -o name | wc -l | grep -qx 3"
kubectl delete secret s1 -n "$ns" >/dev/null
check "delete secret s1: ConfigMap c1, which it owned, is deleted" wait_for 90 gone configmap c1
check "then Service svc1, which c1 owned, is deleted" wait_for 90 gone service svc1

# --- 5. owner references to nothing ---------------------------------------------------------
make ConfigMap real5
nobody=$(cat /proc/sys/kernel/random/uuid)
other_uid=$(cat /proc/sys/kernel/random/uuid)
make ConfigMap c5 "v1,ConfigMap,never-existed,$nobody"
make ConfigMap c5b "v1,ConfigMap,real5,$other_uid"
check "a ConfigMap owned by a ConfigMap that never existed (made-up name and uid) is deleted" \
    wait_for 90 gone configmap c5
check "a ConfigMap owned by real5's name with a uid not real5's is deleted" \
    wait_for 90 gone configmap c5b
sleep 5
check "real5 itself stays (5 s later)" present configmap real5

# --- 6. two owners, one deleted -------------------------------------------------------------
make Secret a6
make Secret b6
make ConfigMap c6 "$(ref secret a6)" "$(ref secret b6)"
b6_uid=$(uid secret b6)
check "c6 has two owners, a6 and b6" kj '
assert [r["name"] for r in refs(o)] == ["a6", "b6"], brief(o)' configmap c6
kubectl delete secret a6 -n "$ns" >/dev/null
check "delete secret a6: c6's ownerReferences now name only b6" wait_for 90 kj '
assert not deleting(o) and [(r["kind"], r["name"], r["uid"]) for r in refs(o)] == [("Secret", "b6", sys.argv[1])], brief(o)' \
    configmap c6 -- "$b6_uid"
sleep 5
check "c6 stays (5 s later), owned by b6" kj '
assert not deleting(o) and [r["name"] for r in refs(o)] == ["b6"], brief(o)' configmap c6

# --- 7. a custom resource whose CRD appears while the collector runs ------------------------
widget_crd_create "$group"
check "the Widget CRD is Established" \
    kubectl wait --for=condition=Established "crd/$crd" --timeout=60s
# kubectl's own discovery may lag a moment behind.
check "Widget w1 is created, and ConfigMap c7 owned by it" wait_for 60 sh -c "
	kubectl get -n $ns $crd w1 -o name >/dev/null 2>&1 ||
	python3 $work/make.py Widget w1 | kubectl create -n $ns -f - >/dev/null"
make ConfigMap c7 "$(ref "$crd" w1)"
# The collector knows Widgets once it watches them: then, and only then, can a Widget deleted
# in the foreground lose its foregroundDeletion finalizer (kcm re-reads discovery every 30 s).
make Widget w0
kubectl delete "$crd" w0 -n "$ns" --cascade=foreground --wait=false >/dev/null
check "the collector discovers Widgets: w0, deleted in the foreground, goes (within 120 s)" \
    wait_for 120 gone "$crd" w0
sleep 5
check "c7 stays while its Widget w1 lives (5 s later)" present configmap c7
kubectl delete "$crd" w1 -n "$ns" --wait=false >/dev/null
check "delete widget w1: ConfigMap c7, which it owned, is deleted" wait_for 90 gone configmap c7
unstick_widgets # (w0, if the collector never removed its finalizer: not this check's business)
kubectl delete crd "$crd" --wait=false >/dev/null
check "the Widget CRD is deleted" wait_for 60 gone crd "$crd"

# --- 8. a restart, with a deletion made while the controller manager was down ---------------
if [ "$cm" = sqlkcm ]; then
	cm_stop "$current"
	check "sqlkcm stops with status 0 on SIGTERM" test $? = 0
	make Secret s8
	make ConfigMap c8 "$(ref secret s8)"
	kubectl delete secret s8 -n "$ns" >/dev/null
	cm_start gc-again
	current=gc-again
	check "after the restart, c8, whose owner s8 was deleted while sqlkcm was down, is deleted" \
	    wait_for 90 gone configmap c8
	check "the restarted informers went on from the stored resourceVersion (configmaps)" \
	    grep -Eq 'informer resource=[^ :]*configmaps: (resuming the watch at resourceVersion=|the cache holds [0-9]+ objects at resourceVersion=[0-9]+; syncing from there)' \
	    "$work/gc-again.log"
else
	skip "sqlkcm stops with status 0 on SIGTERM" "kube-controller-manager ran"
	skip "after the restart, c8, whose owner s8 was deleted while sqlkcm was down, is deleted" \
	    "the restart is about sqlkcm's stored cache"
	skip "the restarted informers went on from the stored resourceVersion (configmaps)" \
	    "the restart is about sqlkcm's stored cache"
fi

# --- 9. a cluster-scoped dependent naming a namespaced owner --------------------------------
make ConfigMap c9
make ConfigMap c9b "$(ref configmap c9)"
c9_uid=$(uid configmap c9)
make ClusterRole "$role" "$(ref configmap c9)"
role_uid=$(uid clusterrole "$role")
# role_event: the OwnerRefInvalidNamespace Event about the ClusterRole is as kcm writes it:
# one, in namespace default (the ClusterRole has none), from garbage-collector-controller,
# the message naming the owner reference with the dependent's (empty) namespace.
role_event() {
	kubectl get events -A -o json \
	    --field-selector "reason=OwnerRefInvalidNamespace,involvedObject.name=$role" |
	python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
role_uid, c9_uid = sys.argv[1:]
assert items, "no event yet"
e = items[0]
i = e["involvedObject"]
got = (len(items), e.get("count"), e["metadata"]["namespace"], e["type"],
       (e.get("source") or {}).get("component"), i.get("kind"), i.get("apiVersion"), i.get("uid"),
       i.get("namespace", ""), e["message"])
want = (1, 1, "default", "Warning", "garbage-collector-controller", "ClusterRole",
        "rbac.authorization.k8s.io/v1", role_uid, "",
        "ownerRef [v1/ConfigMap, namespace: , name: c9, uid: %s] does not exist in namespace \"\"" % c9_uid)
assert got == want, (got, want, e)
' "$role_uid" "$c9_uid"
}
check "the ClusterRole gets one Warning Event OwnerRefInvalidNamespace (in namespace default)" \
    wait_for 90 role_event
sleep 5
check "the ClusterRole is not deleted (5 s after the event)" present clusterrole "$role"
kubectl delete configmap c9 -n "$ns" >/dev/null
check "delete configmap c9: its namespaced dependent c9b is deleted" wait_for 90 gone configmap c9b
sleep 5
check "the ClusterRole is still not deleted (5 s after c9b), its ownerReference intact" kj '
assert not deleting(o) and [r["uid"] for r in refs(o)] == [sys.argv[1]], brief(o)' \
    clusterrole "$role" -- "$c9_uid"
check "still one OwnerRefInvalidNamespace Event about it, count 1 (none for the owner's deletion)" \
    role_event

cm_stop "$current"
status=$?
if [ "$cm" = sqlkcm ]; then
	check "sqlkcm stops with status 0 on SIGTERM at the end" test "$status" = 0
else
	skip "sqlkcm stops with status 0 on SIGTERM at the end" "kube-controller-manager ran"
fi

tap_done
