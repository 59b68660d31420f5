#!/usr/bin/env bash
# deployment.t - the Deployment controller (with the ReplicaSet controller) on a real control
# plane, driven by kubectl as a user would: a rollout, `set image` with a change-cause and
# `rollout history`, `rollout undo` reusing the old ReplicaSet, pause / scale / resume,
# revisionHistoryLimit, the Recreate strategy (no new pod while an old one lives, by a watch
# of our own), ProgressDeadlineExceeded, a rolling update's maxSurge/maxUnavailable bounds and
# proportional scaling in the middle of it, adoption of orphan ReplicaSets, two Deployments
# with one selector, and `sqlkcm plan`. Every expected value is kube-controller-manager
# 1.36's: E2E_DEPLOYMENT_CM=kcm runs the same checks against it instead of sqlkcm (the
# plan checks, which are sqlkcm's own, then read a cache sqlkcm mirrors beside it).
# e2e: locks deployment replicaset
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-deployment.XXXXXX")
db=$work/cache.db
ns=deploy-$RANDOM
cm=${E2E_DEPLOYMENT_CM:-sqlkcm}
case $cm in
sqlkcm | kcm) ;;
*) echo "E2E_DEPLOYMENT_CM must be sqlkcm or kcm, not $cm" >&2; exit 2 ;;
esac
echo "# controller manager: $cm; namespace $ns"

# cm_start / cm_stop: the controller manager under test, with the Deployment and
# ReplicaSet controllers, at their default rate limits (20/30).
cm_start() {
	if [ "$cm" = kcm ]; then
		kcm_start deployment --controllers=deployment,replicaset
	else
		sqlkcm_start dep --db "$db" --controllers deployment,replicaset -v 2
		wait_for 60 grep -q 'controller=deployment: caches synced' "$work/dep.log" >/dev/null
	fi
}
cm_stop() {
	if [ "$cm" = kcm ]; then
		kcm_stop deployment
	else
		sqlkcm_stop dep
	fi
}
cleanup() {
	[ -n "${watcher:-}" ] && kill "$watcher" 2>/dev/null
	kcm_stop deployment
	# The Deployments first (background: no garbage collector runs to honour an orphan
	# finalizer), so that no Deployment controller started later in this cluster recreates
	# the ReplicaSets e2e_cleanup deletes.
	timeout 60 kubectl delete deployments -n "$ns" --all --cascade=background --wait=false \
	    --request-timeout=30s >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# kj CODE KUBECTL-GET-ARGS... [-- ARGS...]: runs `kubectl get KUBECTL-GET-ARGS -o json` in
# the namespace and the Python statements CODE on it (as o; items, for a list), with the
# helpers of dep.py and ARGS in sys.argv[1:]; an assert that fails shows what it was given.
cat >"$work/dep.py" <<'PY'
import json, sys
o = json.load(sys.stdin)
items = o.get("items", [])
REV = "deployment.kubernetes.io/revision"
HIST = "deployment.kubernetes.io/revision-history"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX = "deployment.kubernetes.io/max-replicas"
CAUSE = "kubernetes.io/change-cause"
def ann(x, k):
    return (x["metadata"].get("annotations") or {}).get(k)
def rev(x):
    return int(ann(x, REV) or 0)
def name(x):
    return x["metadata"]["name"]
def labels(x):
    return x["metadata"].get("labels") or {}
def spec_replicas(x):
    return x["spec"].get("replicas", 1)
def st(x, field):
    return (x.get("status") or {}).get(field, 0)
def controller(x):
    for r in x["metadata"].get("ownerReferences") or []:
        if r.get("controller"):
            return r
    return None
def owned(objs, deploy):
    """The ReplicaSets whose controller is Deployment deploy, by revision."""
    return sorted((x for x in objs if (controller(x) or {}).get("kind") == "Deployment"
                   and controller(x)["name"] == deploy), key=rev)
def cond(d, t):
    for c in (d.get("status") or {}).get("conditions") or []:
        if c["type"] == t:
            return c
    return {}
def summary(rss):
    return [(name(x), rev(x), spec_replicas(x), st(x, "replicas"), st(x, "readyReplicas"),
             {k.split("/")[-1]: v for k, v in (x["metadata"].get("annotations") or {}).items()
              if k != "kubectl.kubernetes.io/last-applied-configuration"}) for x in rss]
def dstatus(d):
    s = dict(d.get("status") or {})
    s["conditions"] = [(c["type"], c["status"], c["reason"]) for c in s.get("conditions", [])]
    s["generation"] = d["metadata"]["generation"]
    return s
PY
kj() {
	local code=$1 get=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		get+=("$1")
		shift
	done
	shift
	kubectl get -n "$ns" "${get[@]}" -o json | python3 -c "exec(open('$work/dep.py').read())
$code" "$@"
}

# deployment NAME REPLICAS IMAGE [SPEC-JSON]: applies a Deployment whose pods carry app=NAME
# (one container "c"), with SPEC-JSON merged into its spec (a "template_spec" member goes
# into the pod template's spec).
deployment() {
	python3 - "$@" <<'PY' | kubectl apply -n "$ns" -f - >/dev/null
import json, sys
name, replicas, image = sys.argv[1], int(sys.argv[2]), sys.argv[3]
extra = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
pod = {"containers": [{"name": "c", "image": image}]}
pod.update(extra.pop("template_spec", {}))
spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": pod}}
spec.update(extra)
print(json.dumps({"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": name}, "spec": spec}))
PY
}

rollout() {
	kubectl rollout status -n "$ns" "deploy/$1" --timeout="${2:-60}s"
}

kubectl create namespace "$ns" >/dev/null
cm_start

# --- create -------------------------------------------------------------------------------
kubectl create deployment web -n "$ns" --image=pause --replicas=3 >/dev/null
check "create deployment web --replicas=3: rollout status succeeds" rollout web
check "one ReplicaSet web-<pod-template-hash>: revision 1, desired-replicas 3, max-replicas 4" \
    wait_for 20 kj '
rs = owned(items, "web")
assert len(rs) == 1, summary(items)
r = rs[0]
h = labels(r).get("pod-template-hash")
assert h and name(r) == "web-" + h, summary(rs)
assert (ann(r, REV), ann(r, DESIRED), ann(r, MAX)) == ("1", "3", "4"), summary(rs)
assert spec_replicas(r) == 3, summary(rs)' rs
check "pod-template-hash is in the ReplicaSet's selector, template and labels" kj '
rs = owned(items, "web")
r = rs[0]
h = labels(r)["pod-template-hash"]
assert r["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": h}, r["spec"]["selector"]
assert r["spec"]["template"]["metadata"]["labels"] == {"app": "web", "pod-template-hash": h}, r["spec"]["template"]["metadata"]
assert labels(r) == {"app": "web", "pod-template-hash": h}, labels(r)
assert controller(r)["kind"] == "Deployment" and controller(r).get("blockOwnerDeletion"), controller(r)' rs
check "status: replicas, updated, ready and available 3; observedGeneration = generation" \
    wait_for 20 kj '
d = o
s = dstatus(d)
assert [st(d, f) for f in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")] == [3, 3, 3, 3, 0], s
assert st(d, "observedGeneration") == d["metadata"]["generation"], s
assert ann(d, REV) == "1", d["metadata"].get("annotations")' deploy/web
check "conditions: Available True MinimumReplicasAvailable, Progressing True NewReplicaSetAvailable" \
    wait_for 20 kj '
a, p = cond(o, "Available"), cond(o, "Progressing")
assert (a.get("status"), a.get("reason")) == ("True", "MinimumReplicasAvailable"), dstatus(o)
assert (p.get("status"), p.get("reason")) == ("True", "NewReplicaSetAvailable"), dstatus(o)
import re
assert re.fullmatch(r"ReplicaSet \"web-[0-9a-z]+\" has successfully progressed\.", p["message"]), p' deploy/web
rs1=$(kj 'print(name(owned(items, "web")[0]))' rs)

# --- set image, with a change-cause -------------------------------------------------------
kubectl set image -n "$ns" deploy/web pause=pause:2 >/dev/null
kubectl annotate -n "$ns" deploy/web kubernetes.io/change-cause="kubectl set image pause=pause:2" \
    >/dev/null
check "set image pause=pause:2: rollout status succeeds" rollout web
check "two ReplicaSets: revision 2 with 3 replicas and the change-cause, revision 1 at 0" \
    wait_for 30 kj '
rs = owned(items, "web")
assert len(rs) == 2, summary(rs)
old, new = rs
assert name(old) == sys.argv[1], summary(rs)
assert (rev(old), spec_replicas(old), st(old, "replicas")) == (1, 0, 0), summary(rs)
assert (rev(new), spec_replicas(new), st(new, "readyReplicas")) == (2, 3, 3), summary(rs)
assert (ann(new, DESIRED), ann(new, MAX)) == ("3", "4"), summary(rs)
assert ann(new, CAUSE) == "kubectl set image pause=pause:2", summary(rs)
assert ann(old, CAUSE) is None, summary(rs)' rs -- "$rs1"
# history_is LINE...: `kubectl rollout history deploy/web` lists exactly these revisions,
# each line "REVISION CHANGE-CAUSE" with the spaces squeezed.
history_is() {
	local got want
	got=$(kubectl rollout history -n "$ns" deploy/web | sed -n '/^[0-9]/{s/  */ /g;s/ *$//;p}')
	want=$(printf '%s\n' "$@")
	[ "$got" = "$want" ] || { printf 'got:\n%s\nwant:\n%s\n' "$got" "$want"; return 1; }
}
check "rollout history lists revisions 1 and 2, 2 with the change-cause" \
    wait_for 20 history_is "1 <none>" "2 kubectl set image pause=pause:2"
rs2=$(kj 'print(name(owned(items, "web")[1]))' rs)

# --- rollout undo -------------------------------------------------------------------------
kubectl rollout undo -n "$ns" deploy/web >/dev/null
check "rollout undo: rollout status succeeds" rollout web
check "undo reuses revision 1's ReplicaSet as revision 3, revision-history 1; no third one" \
    wait_for 30 kj '
rs = owned(items, "web")
assert len(rs) == 2, summary(rs)
old, new = rs
assert (name(new), rev(new), ann(new, HIST)) == (sys.argv[1], 3, "1"), summary(rs)
assert (spec_replicas(new), st(new, "readyReplicas")) == (3, 3), summary(rs)
assert (name(old), rev(old), spec_replicas(old), st(old, "replicas")) == (sys.argv[2], 2, 0, 0), summary(rs)
assert ann(old, CAUSE) == "kubectl set image pause=pause:2", summary(rs)' rs -- "$rs1" "$rs2"
check "the Deployment is at revision 3, 3 updated and available" wait_for 20 kj '
assert ann(o, REV) == "3", o["metadata"].get("annotations")
assert [st(o, f) for f in ("replicas", "updatedReplicas", "availableReplicas")] == [3, 3, 3], dstatus(o)
assert cond(o, "Progressing").get("reason") == "NewReplicaSetAvailable", dstatus(o)' deploy/web

# --- pause, change, scale, resume ----------------------------------------------------------
kubectl rollout pause -n "$ns" deploy/web >/dev/null
kubectl set image -n "$ns" deploy/web pause=pause:3 >/dev/null
check "paused: the controller observes the new template (observedGeneration = generation)" \
    wait_for 30 kj 'assert st(o, "observedGeneration") == o["metadata"]["generation"], dstatus(o)' \
    deploy/web
check "paused: Progressing is Unknown with reason DeploymentPaused" wait_for 20 kj '
p = cond(o, "Progressing")
assert (p.get("status"), p.get("reason")) == ("Unknown", "DeploymentPaused"), dstatus(o)' deploy/web
sleep 3
check "paused: set image makes no new ReplicaSet (3 s after it was observed)" kj '
rs = owned(items, "web")
assert [(name(r), spec_replicas(r)) for r in rs] == [(sys.argv[2], 0), (sys.argv[1], 3)], summary(rs)' \
    rs -- "$rs1" "$rs2"
kubectl scale -n "$ns" deploy/web --replicas=6 >/dev/null
check "scale to 6 while paused: the active ReplicaSet (revision 3) has 6, desired 6 and max 8" \
    wait_for 30 kj '
rs = owned(items, "web")
assert len(rs) == 2, summary(rs)
old, active = rs
assert (name(active), spec_replicas(active), st(active, "readyReplicas")) == (sys.argv[1], 6, 6), summary(rs)
assert (ann(active, DESIRED), ann(active, MAX), ann(active, REV)) == ("6", "8", "3"), summary(rs)
assert (spec_replicas(old), ann(old, DESIRED), ann(old, MAX)) == (0, "3", "4"), summary(rs)' rs -- "$rs1"
check "paused and scaled: 6 available, none updated, still DeploymentPaused" wait_for 20 kj '
assert [st(o, f) for f in ("replicas", "updatedReplicas", "availableReplicas")] == [6, 0, 6], dstatus(o)
assert st(o, "observedGeneration") == o["metadata"]["generation"], dstatus(o)
assert cond(o, "Progressing").get("reason") == "DeploymentPaused", dstatus(o)
assert cond(o, "Available").get("status") == "True", dstatus(o)' deploy/web
kubectl rollout resume -n "$ns" deploy/web >/dev/null
check "resumed: rollout status succeeds" rollout web
check "resumed: a new ReplicaSet, revision 4, has the 6 replicas; the two old ones 0" \
    wait_for 30 kj '
rs = owned(items, "web")
assert [(rev(r), spec_replicas(r), st(r, "replicas")) for r in rs] == [(2, 0, 0), (3, 0, 0), (4, 6, 6)], summary(rs)
assert name(rs[0]) == sys.argv[2] and name(rs[1]) == sys.argv[1], summary(rs)
assert (ann(rs[2], DESIRED), ann(rs[2], MAX)) == ("6", "8"), summary(rs)' rs -- "$rs1" "$rs2"
check "resumed: Progressing True NewReplicaSetAvailable, 6 updated and available" \
    wait_for 20 kj '
p = cond(o, "Progressing")
assert (p.get("status"), p.get("reason")) == ("True", "NewReplicaSetAvailable"), dstatus(o)
assert [st(o, f) for f in ("replicas", "updatedReplicas", "availableReplicas")] == [6, 6, 6], dstatus(o)
assert ann(o, REV) == "4", o["metadata"].get("annotations")' deploy/web

# --- revisionHistoryLimit -------------------------------------------------------------------
deployment hist 2 pause '{"revisionHistoryLimit": 1}'
rollout hist >/dev/null
for i in 2 3 4; do
	kubectl set image -n "$ns" deploy/hist c="pause:$i" >/dev/null
	rollout hist >/dev/null
done
check "revisionHistoryLimit 1, rolled 3 times: exactly 2 ReplicaSets, revisions 3 (at 0) and 4" \
    wait_for 30 kj '
rs = owned(items, "hist")
assert [(rev(r), spec_replicas(r)) for r in rs] == [(3, 0), (4, 2)], summary(rs)
assert len([r for r in items if labels(r).get("app") == "hist"]) == 2, summary(items)' rs

# --- Recreate -------------------------------------------------------------------------------
deployment recreate 4 pause '{"strategy": {"type": "Recreate"}}'
check "Recreate: the first rollout succeeds" rollout recreate
old_hash=$(kj 'print(labels(owned(items, "recreate")[0])["pod-template-hash"])' rs)
kubectl get pods -n "$ns" -l app=recreate --watch --output-watch-events -o json \
    >"$work/recreate.watch" 2>"$work/recreate.watch.err" &
watcher=$!
wait_for 20 eval '[ "$(grep -c "\"type\": \"ADDED\"" "$work/recreate.watch")" -ge 4 ]' >/dev/null
kubectl set image -n "$ns" deploy/recreate c=pause:2 >/dev/null
check "Recreate: the rollout of the new image succeeds" rollout recreate
check "Recreate: 4 pods of the new ReplicaSet, the old one at 0" wait_for 30 kj '
rs = owned(items, "recreate")
assert [(rev(r), spec_replicas(r), st(r, "replicas"), st(r, "readyReplicas")) for r in rs] == [(1, 0, 0, 0), (2, 4, 4, 4)], summary(rs)
assert (ann(rs[1], DESIRED), ann(rs[1], MAX)) == ("4", "4"), summary(rs)' rs
sleep 1
kill -0 "$watcher" 2>/dev/null
watch_alive=$?
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
watcher=
python3 - "$work/recreate.watch" "$old_hash" >"$work/recreate.json" <<'PY'
import json, sys
buf, old_hash = open(sys.argv[1]).read(), sys.argv[2]
dec, i, events = json.JSONDecoder(), 0, []
while True:
    while i < len(buf) and buf[i].isspace():
        i += 1
    if i >= len(buf):
        break
    ev, i = dec.raw_decode(buf, i)
    events.append(ev)
exists, running = set(), set()  # old pods that exist; old pods not being deleted
old_seen, new_seen, early_strong, early_weak = set(), set(), [], []
for ev in events:
    if ev.get("type") not in ("ADDED", "MODIFIED", "DELETED"):
        continue
    p = ev["object"]
    m = p["metadata"]
    uid = m["uid"]
    if m.get("labels", {}).get("pod-template-hash") == old_hash:
        old_seen.add(uid)
        if ev["type"] == "DELETED":
            exists.discard(uid)
            running.discard(uid)
        else:
            exists.add(uid)
            (running.discard if m.get("deletionTimestamp") else running.add)(uid)
    elif ev["type"] != "DELETED" and uid not in new_seen:
        new_seen.add(uid)
        if running:
            early_weak.append((m["name"], len(running)))
        if exists:
            early_strong.append((m["name"], len(exists)))
print(json.dumps({"events": len(events), "old": len(old_seen), "new": len(new_seen),
                  "new_while_old_running": early_weak, "new_while_old_exists": early_strong}))
PY
check "Recreate: our watch saw the 4 old pods and at least 4 new ones, and never ended" \
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert sys.argv[2] == "0", "the watch ended early: " + open(sys.argv[3]).read()
assert r["old"] == 4 and r["new"] >= 4, r' "$work/recreate.json" "$watch_alive" \
    "$work/recreate.watch.err"
check "Recreate: no new pod while an old pod was still running (not terminating)" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["new_while_old_running"] == [], r' "$work/recreate.json"
check "Recreate: no new pod before every old pod was gone" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["new_while_old_exists"] == [], r' "$work/recreate.json"

# --- ProgressDeadlineExceeded ---------------------------------------------------------------
deployment stuck 1 pause '{"progressDeadlineSeconds": 10,
    "template_spec": {"nodeSelector": {"sqlkcm.test/nowhere": "true"}}}'
check "progressDeadlineSeconds 10, unschedulable: Progressing True (ReplicaSet created) at first" \
    wait_for 8 kj '
p = cond(o, "Progressing")
assert (p.get("status"), p.get("reason")) in [("True", "NewReplicaSetCreated"), ("True", "ReplicaSetUpdated")], dstatus(o)' \
    deploy/stuck
check "within 40 s: Progressing False, reason ProgressDeadlineExceeded" wait_for 40 kj '
p = cond(o, "Progressing")
assert (p.get("status"), p.get("reason")) == ("False", "ProgressDeadlineExceeded"), dstatus(o)
import re
assert re.fullmatch(r"ReplicaSet \"stuck-[0-9a-z]+\" has timed out progressing\.", p["message"]), p' deploy/stuck
check "not before the deadline: 10 s or more after the Deployment was created" kj '
from datetime import datetime
t = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
p = cond(o, "Progressing")
waited = (t(p["lastTransitionTime"]) - t(o["metadata"]["creationTimestamp"])).total_seconds()
assert waited >= 10, (waited, p)' deploy/stuck
check "Available False MinimumReplicasUnavailable; 1 updated, 1 unavailable" kj '
a = cond(o, "Available")
assert (a.get("status"), a.get("reason")) == ("False", "MinimumReplicasUnavailable"), dstatus(o)
assert [st(o, f) for f in ("replicas", "updatedReplicas", "availableReplicas", "unavailableReplicas")] == [1, 1, 0, 1], dstatus(o)' \
    deploy/stuck
deadline_said() {
	local out
	out=$(rollout stuck 5 2>&1) && { echo "rollout status succeeded: $out"; return 1; }
	[[ $out == *'deployment "stuck" exceeded its progress deadline'* ]] || { echo "$out"; return 1; }
}
check "kubectl rollout status fails: the deadline was exceeded" deadline_said

# --- a rolling update's bounds, and proportional scaling in the middle of it ----------------
deployment prop 10 pause '{"strategy": {"type": "RollingUpdate",
    "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}}'
check "prop: 10 replicas, maxSurge 3, maxUnavailable 2: rolled out" rollout prop
# The new version never becomes ready: its pods cannot be scheduled.
kubectl patch -n "$ns" deploy/prop -p \
    '{"spec":{"template":{"spec":{"nodeSelector":{"sqlkcm.test/nowhere":"true"}}}}}' >/dev/null
prop_at() {
	kj '
want = [(1, int(sys.argv[1])), (2, int(sys.argv[2]))]
rs = owned(items, "prop")
assert [(rev(r), spec_replicas(r)) for r in rs] == want, summary(rs)
assert sum(spec_replicas(r) for r in rs) <= int(sys.argv[3]), summary(rs)
assert all((ann(r, DESIRED), ann(r, MAX)) == (sys.argv[4], sys.argv[3]) for r in rs), summary(rs)
assert st(rs[0], "readyReplicas") == int(sys.argv[1]), summary(rs)' rs -- "$@"
}
check "new template never ready: the new ReplicaSet stops at 5, the old at 8 (13 = 10 + 3 in all)" \
    wait_for 30 prop_at 8 5 13 10
sleep 3
check "and stays there 3 s later" prop_at 8 5 13 10
check "prop status: replicas 13, updated 5, available 8, unavailable 5; Available True; ReplicaSetUpdated" \
    wait_for 20 kj '
assert [st(o, f) for f in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")] == [13, 5, 8, 8, 5], dstatus(o)
assert (cond(o, "Available").get("status"), cond(o, "Available").get("reason")) == ("True", "MinimumReplicasAvailable"), dstatus(o)
assert (cond(o, "Progressing").get("status"), cond(o, "Progressing").get("reason")) == ("True", "ReplicaSetUpdated"), dstatus(o)' \
    deploy/prop
kubectl scale -n "$ns" deploy/prop --replicas=20 >/dev/null
check "scaled to 20 mid-rollout: proportionally, old 8 -> 14 and new 5 -> 9 (23 = 20 + 3)" \
    wait_for 30 prop_at 14 9 23 20
check "prop status: replicas 23, updated 9, available 14; Available False MinimumReplicasUnavailable" \
    wait_for 20 kj '
assert [st(o, f) for f in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")] == [23, 9, 14, 14, 9], dstatus(o)
assert (cond(o, "Available").get("status"), cond(o, "Available").get("reason")) == ("False", "MinimumReplicasUnavailable"), dstatus(o)
assert st(o, "observedGeneration") == o["metadata"]["generation"], dstatus(o)' deploy/prop

# --- adoption ------------------------------------------------------------------------------
# A ReplicaSet made by hand, with the Deployment's selector and template (and no
# pod-template-hash), running its pods before the Deployment exists.
kubectl apply -n "$ns" -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: adopt-by-hand, labels: {app: adopt}}
spec:
  replicas: 2
  selector: {matchLabels: {app: adopt}}
  template:
    metadata: {labels: {app: adopt}}
    spec:
      containers: [{name: c, image: pause}]
EOF
wait_for 30 kj 'assert st(o, "readyReplicas") == 2' rs/adopt-by-hand >/dev/null
adopt_pods=$(kubectl get pods -n "$ns" -l app=adopt -o jsonpath='{.items[*].metadata.uid}' |
    tr ' ' '\n' | sort)
deployment adopt 2 pause
check "a Deployment adopts the orphan ReplicaSet matching its selector and template" \
    wait_for 30 kj '
rs = owned(items, "adopt")
assert [name(r) for r in rs] == ["adopt-by-hand"], summary(items)
ref = controller(rs[0])
assert ref["apiVersion"] == "apps/v1" and ref.get("blockOwnerDeletion") is True, ref' rs
check "adopted as the new ReplicaSet: revision 1, 2 replicas, no other ReplicaSet made" kj '
rs = owned(items, "adopt")
assert len([r for r in items if labels(r).get("app") == "adopt"]) == 1, summary(items)
assert ann(rs[0], REV) == "1", summary(rs)
assert spec_replicas(rs[0]) == 2, summary(rs)' rs
check "the adopted ReplicaSet keeps its selector and labels (no pod-template-hash added)" kj '
r = o
assert r["spec"]["selector"] == {"matchLabels": {"app": "adopt"}}, r["spec"]["selector"]
assert labels(r) == {"app": "adopt"}, labels(r)
assert r["spec"]["template"]["metadata"]["labels"] == {"app": "adopt"}, r["spec"]["template"]
# kube sets desired- and max-replicas only when it scales or creates a ReplicaSet.
assert ann(r, DESIRED) is None and ann(r, MAX) is None, r["metadata"]["annotations"]' \
    rs/adopt-by-hand
adopt_complete() {
	kj '
p = cond(o, "Progressing")
assert (p.get("status"), p.get("reason")) == ("True", "NewReplicaSetAvailable"), dstatus(o)
assert p["message"] == "ReplicaSet \"adopt-by-hand\" has successfully progressed.", p
assert [st(o, f) for f in ("replicas", "updatedReplicas", "availableReplicas")] == [2, 2, 2], dstatus(o)' \
	    deploy/adopt || return 1
	local now
	now=$(kubectl get pods -n "$ns" -l app=adopt -o jsonpath='{.items[*].metadata.uid}' | tr ' ' '\n' | sort)
	[ "$now" = "$adopt_pods" ] || { echo "pods before: $adopt_pods; now: $now"; return 1; }
}
check "the adopting Deployment is complete with the same 2 pods" wait_for 20 adopt_complete
# An orphan with the selector's labels but another template: adopted as an old
# ReplicaSet and scaled down to 0.
kubectl apply -n "$ns" -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: stray, labels: {app: adopt}}
spec:
  replicas: 1
  selector: {matchLabels: {app: adopt, stray: "yes"}}
  template:
    metadata: {labels: {app: adopt, stray: "yes"}}
    spec:
      containers: [{name: c, image: "pause:old"}]
EOF
check "an orphan with another template is adopted as an old ReplicaSet and scaled to 0" \
    wait_for 30 kj '
rs = owned(items, "adopt")
assert sorted((name(r), spec_replicas(r), st(r, "replicas")) for r in rs) == [("adopt-by-hand", 2, 2), ("stray", 0, 0)], summary(items)
s = [r for r in rs if name(r) == "stray"][0]
assert ann(s, REV) is None and (ann(s, DESIRED), ann(s, MAX)) == ("2", "3"), summary(rs)' rs
check "and the Deployment still has its 2 available pods" wait_for 20 kj '
assert [st(o, f) for f in ("replicas", "updatedReplicas", "availableReplicas")] == [2, 2, 2], dstatus(o)' \
    deploy/adopt

# --- overlapping selectors ------------------------------------------------------------------
# Two Deployments with one selector and the same template: their ReplicaSets have the same
# pod-template-hash, selector and template, and still each keeps its own.
deployment ov-a 3 pause '{"selector": {"matchLabels": {"app": "ov"}},
    "template": {"metadata": {"labels": {"app": "ov"}},
                 "spec": {"containers": [{"name": "c", "image": "pause"}]}}}'
deployment ov-b 2 pause '{"selector": {"matchLabels": {"app": "ov"}},
    "template": {"metadata": {"labels": {"app": "ov"}},
                 "spec": {"containers": [{"name": "c", "image": "pause"}]}}}'
ov_state() {
	kubectl get rs,pods -n "$ns" -l app=ov -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
out = []
for x in items:
    m = x["metadata"]
    ref = [r["name"] for r in m.get("ownerReferences", []) if r.get("controller")]
    if m.get("deletionTimestamp"):
        continue
    out.append((x["kind"], m["name"], m["uid"], ref, x.get("spec", {}).get("replicas"),
                m.get("annotations", {}).get("deployment.kubernetes.io/revision")))
for line in sorted(map(str, out)):
    print(line)'
}
ov_settled() {
	rollout ov-a 1 && rollout ov-b 1 || return 1
	kj '
a, b = owned(items, "ov-a"), owned(items, "ov-b")
assert [(rev(r), spec_replicas(r), st(r, "readyReplicas")) for r in a] == [(1, 3, 3)], summary(items)
assert [(rev(r), spec_replicas(r), st(r, "readyReplicas")) for r in b] == [(1, 2, 2)], summary(items)
assert len(items) == 2, summary(items)' rs -l app=ov || return 1
	local n
	n=$(kubectl get pods -n "$ns" -l app=ov -o name | wc -l)
	[ "$n" = 5 ] || { echo "$n pods with app=ov"; return 1; }
}
check "two Deployments with the same selector settle: 3 and 2 pods, one ReplicaSet each" \
    wait_for 40 ov_settled
ov_before=$(ov_state)
sleep 5
check "and do not fight: the same ReplicaSets and pods, unchanged, 5 s later" \
    test "$ov_before" = "$(ov_state)"
ov_counts() {
	kj 'assert [st(o, f) for f in ("replicas", "availableReplicas")] == [3, 3], dstatus(o)' deploy/ov-a &&
	    kj 'assert [st(o, f) for f in ("replicas", "availableReplicas")] == [2, 2], dstatus(o)' deploy/ov-b
}
check "each counts only its own: ov-a 3 available, ov-b 2" ov_counts

# --- plan -----------------------------------------------------------------------------------
cm_stop
status=$?
if [ "$cm" = sqlkcm ]; then
	check "sqlkcm stops with status 0 on SIGTERM" test "$status" = 0
else
	skip "sqlkcm stops with status 0 on SIGTERM" "kube-controller-manager ran"
fi
# mirror: the cache of $db brought up to date by an sqlkcm running no controller.
mirror() {
	"$SQLKCM" run --kubeconfig "$cluster/kubeconfig" --db "$db" --controllers '' --secure-port 0 \
	    >>"$work/mirror.log" 2>&1 &
	local pid=$!
	cache_converges -n "$ns" "$db" 60 >/dev/null
	local ok=$?
	kill -TERM $pid
	wait $pid
	return $ok
}
check "the cache equals the apiserver (mirrored with no controller)" mirror
"$SQLKCM" plan --db "$db" --controllers deployment,replicaset >"$work/plan.out" 2>"$work/plan.err"
check "plan exits 0" test $? = 0
check "after convergence, plan has nothing to do in the namespace" python3 -c '
import json, sys
ns = sys.argv[1]
lines = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
mine = [l for l in lines if l.get("key", "").startswith(ns + "/") or l.get("namespace") == ns]
assert mine == [], mine' "$ns" "$work/plan.out"
# Scaled while no controller runs: plan (from the cache alone) says what sqlkcm would do.
kubectl scale -n "$ns" deploy/web --replicas=4 >/dev/null
check "the cache shows web scaled to 4" mirror
"$SQLKCM" plan --db "$db" --controllers deployment >"$work/plan2.out" 2>"$work/plan2.err"
if [ "$cm" = sqlkcm ]; then
	check "plan shows the Deployment scaling its ReplicaSet to 4, writing nothing" python3 -c '
import json, sys
ns, rs = sys.argv[1], sys.argv[3]
lines = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
mine = [l for l in lines if l.get("key") == ns + "/web"]
scale = [l for l in mine if l.get("controller") == "deployment" and l.get("name") == rs
         and l.get("resource") == "replicasets"
         and ((l.get("body") or {}).get("spec") or {}).get("replicas") == 4]
assert scale, lines' "$ns" "$work/plan2.out" \
	    "$(kj 'print(name(owned(items, "web")[-1]))' rs)"
	check "plan wrote nothing: web's ReplicaSet still has 6" kj '
assert spec_replicas(owned(items, "web")[-1]) == 6, summary(items)' rs
else
	skip "plan shows the Deployment scaling its ReplicaSet to 4, writing nothing" "plan is sqlkcm's"
	skip "plan wrote nothing: web's ReplicaSet still has 6" "plan is sqlkcm's"
fi

tap_done
