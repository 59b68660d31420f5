#!/usr/bin/env bash
# deployment-kcm.t - sqlkcm's Deployment controller ends where kube-controller-manager 1.36's
# does. One scenario, driven by kubectl as a user would (create; set image with a
# change-cause; rollout undo; pause, set image, scale, resume; a Recreate rollout; three
# rollouts under revisionHistoryLimit 1; a rolling update that cannot progress, scaled in
# the middle), runs once under kube-controller-manager (--controllers=deployment,replicaset)
# in one namespace, then once under sqlkcm (--controllers deployment,replicaset) in another,
# never both at once. Then, per Deployment: its ReplicaSets by revision (spec, replicas,
# the deployment.kubernetes.io annotations and change-cause, with each pod-template-hash
# replaced by the ReplicaSet's revision), its status counts and its conditions' type,
# status and reason must be the same; a difference is printed as a diff. Also: the
# conditions' messages (names normalized the same way), and that sqlkcm, which sees kcm's
# converged namespace too, writes nothing there.
#
# E2E_DEPLOYMENT_CM=kcm runs the second half under kube-controller-manager as well: the
# comparison of kcm with itself, which shows the scenario's end state is deterministic.
# e2e: locks deployment replicaset
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-deployment-kcm.XXXXXX")
db=$work/cache.db
suffix=$RANDOM
ref_ns=dk-kcm-$suffix
ns=dk-sqlkcm-$suffix
second=${E2E_DEPLOYMENT_CM:-sqlkcm}
case $second in
sqlkcm | kcm) ;;
*) echo "E2E_DEPLOYMENT_CM must be sqlkcm or kcm, not $second" >&2; exit 2 ;;
esac
echo "# reference: kube-controller-manager in $ref_ns; under test: $second in $ns"

cleanup() {
	kcm_stop dk-reference
	kcm_stop dk-second
	local n
	for n in "$ref_ns" "$ns"; do
		timeout 60 kubectl delete deployments -n "$n" --all --cascade=background --wait=false \
		    --request-timeout=30s >/dev/null 2>&1
	done
	e2e_cleanup "$ref_ns"
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# norm.py snapshot NS: the namespace's Deployments and ReplicaSets, normalized, as JSON.
# norm.py compare A B NAME PART [FILE]: the unified diff of PART of Deployment NAME in two
# snapshots (its start; the whole of it in FILE); exits 1 when they differ. norm.py rvs NS: every uid and resourceVersion.
cat >"$work/norm.py" <<'PY'
import difflib, json, subprocess, sys

KEEP = ("deployment.kubernetes.io/revision", "deployment.kubernetes.io/desired-replicas",
        "deployment.kubernetes.io/max-replicas", "deployment.kubernetes.io/revision-history",
        "kubernetes.io/change-cause")
COUNTS = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
          "unavailableReplicas", "terminatingReplicas", "collisionCount")

def get(ns):
    out = subprocess.run(["kubectl", "get", "deployments,replicasets", "-n", ns, "-o", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["items"]

def snapshot(ns):
    items = get(ns)
    deps = {i["metadata"]["uid"]: i for i in items if i["kind"] == "Deployment"}
    rss = [i for i in items if i["kind"] == "ReplicaSet"]
    # Each ReplicaSet's pod-template-hash becomes "<hash rN>", N its revision.
    tags = {}
    for r in rss:
        h = (r["metadata"].get("labels") or {}).get("pod-template-hash")
        ann = r["metadata"].get("annotations") or {}
        if h:
            tags[h] = "<hash r%s>" % ann.get("deployment.kubernetes.io/revision", "?")
    def norm(x):
        s = json.dumps(x, sort_keys=True)
        for h, t in tags.items():
            s = s.replace(h, t)
        return json.loads(s)
    out = {"deployments": {}, "unowned replicasets": [], "hashes": sorted(tags.items())}
    for d in deps.values():
        st = d.get("status") or {}
        out["deployments"][d["metadata"]["name"]] = {
            "annotations": {k: v for k, v in (d["metadata"].get("annotations") or {}).items()
                            if k.startswith("deployment.kubernetes.io/")},
            "generation": d["metadata"]["generation"],
            "status": dict({k: st.get(k, 0) for k in COUNTS},
                           observedGeneration=st.get("observedGeneration", 0)),
            "conditions": sorted([c["type"], c["status"], c["reason"]]
                                 for c in st.get("conditions") or []),
            "messages": norm(sorted([c["type"], c["message"]] for c in st.get("conditions") or [])),
            "replicasets": [],
        }
    for r in rss:
        m = r["metadata"]
        ann = m.get("annotations") or {}
        ref = [o for o in m.get("ownerReferences") or [] if o.get("controller")]
        entry = norm({
            "name": m["name"],
            "labels": m.get("labels") or {},
            "annotations": {k: v for k, v in ann.items() if k in KEEP},
            "spec": r["spec"],
            "status": {k: (r.get("status") or {}).get(k, 0)
                       for k in ("replicas", "readyReplicas", "availableReplicas",
                                 "fullyLabeledReplicas", "terminatingReplicas")},
        })
        if ref and ref[0]["kind"] == "Deployment" and ref[0]["uid"] in deps:
            owner = out["deployments"][deps[ref[0]["uid"]]["metadata"]["name"]]
            entry["revision"] = int(ann.get("deployment.kubernetes.io/revision", 0))
            owner["replicasets"].append(entry)
        else:
            out["unowned replicasets"].append(entry)
    for d in out["deployments"].values():
        d["replicasets"].sort(key=lambda e: (e["revision"], e["name"]))
    return out

def part(snap, name, what):
    d = snap["deployments"].get(name)
    if d is None:
        return "(no Deployment %s)" % name
    if what == "replicasets":
        v = d["replicasets"]
    elif what == "status":
        v = {k: d[k] for k in ("annotations", "generation", "status", "conditions")}
    else:
        v = d[what]
    return json.dumps(v, indent=1, sort_keys=True)

cmd = sys.argv[1]
if cmd == "snapshot":
    print(json.dumps(snapshot(sys.argv[2]), sort_keys=True))
elif cmd == "rvs":
    for i in get(sys.argv[2]):
        print(i["kind"], i["metadata"]["name"], i["metadata"]["resourceVersion"])
elif cmd == "compare":
    a, b = (json.load(open(f)) for f in sys.argv[2:4])
    name, what = sys.argv[4], sys.argv[5]
    pa, pb = part(a, name, what), part(b, name, what)
    if pa != pb:
        diff = list(difflib.unified_diff(pa.splitlines(True), pb.splitlines(True),
                                         "kube-controller-manager", "under test", n=2))
        if len(sys.argv) > 6:
            open(sys.argv[6], "w").writelines(diff)
            diff = diff[:14] + ["(the whole diff: %s)\n" % sys.argv[6]]
        sys.stdout.writelines(diff)
        sys.exit(1)
PY
norm() {
	python3 "$work/norm.py" "$@"
}

# --- the scenario ---------------------------------------------------------------------------

# deployment NS NAME REPLICAS IMAGE [SPEC-JSON]: applies a Deployment whose pods carry
# app=NAME (one container "c"), with SPEC-JSON merged into its spec.
deployment() {
	python3 - "${@:2}" <<'PY' | kubectl apply -n "$1" -f - >/dev/null
import json, sys
name, replicas, image = sys.argv[1], int(sys.argv[2]), sys.argv[3]
spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
                     "spec": {"containers": [{"name": "c", "image": image}]}}}
spec.update(json.loads(sys.argv[4]) if len(sys.argv) > 4 else {})
print(json.dumps({"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": name}, "spec": spec}))
PY
}

# settled NS [NAME]: the Deployments of NS (or NAME only) have observed their generation
# and their normalized state (with their ReplicaSets') is the same twice, a second apart.
settled() {
	local a b
	a=$(norm snapshot "$1") || return 1
	sleep 1
	b=$(norm snapshot "$1") || return 1
	python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
name = sys.argv[3] if len(sys.argv) > 3 else None
for n, d in b["deployments"].items():
    if name in (None, n):
        assert d == a["deployments"].get(n), (n, "still changing")
        assert d["status"]["observedGeneration"] == d["generation"], (n, d["status"])
if name is None:
    assert a == b, "still changing"
' "$a" "$b" "${@:2}"
}

# Each sequence stops at its first failure; its output goes to $work/NS-NAME.log.
seq_web() {
	local n=$1
	kubectl create deployment web -n "$n" --image=pause --replicas=3 &&
	kubectl rollout status -n "$n" deploy/web --timeout=60s &&
	kubectl set image -n "$n" deploy/web pause=pause:2 &&
	kubectl annotate -n "$n" deploy/web kubernetes.io/change-cause="set image pause:2" &&
	kubectl rollout status -n "$n" deploy/web --timeout=60s &&
	wait_for 30 settled "$n" web &&
	kubectl rollout undo -n "$n" deploy/web &&
	kubectl rollout status -n "$n" deploy/web --timeout=60s &&
	wait_for 30 settled "$n" web &&
	kubectl rollout pause -n "$n" deploy/web &&
	kubectl set image -n "$n" deploy/web pause=pause:3 &&
	wait_for 30 settled "$n" web &&
	kubectl scale -n "$n" deploy/web --replicas=6 &&
	wait_for 30 settled "$n" web &&
	kubectl rollout resume -n "$n" deploy/web &&
	kubectl rollout status -n "$n" deploy/web --timeout=60s
}
seq_recreate() {
	local n=$1
	deployment "$n" recreate 4 pause '{"strategy": {"type": "Recreate"}}' &&
	kubectl rollout status -n "$n" deploy/recreate --timeout=60s &&
	kubectl set image -n "$n" deploy/recreate c=pause:2 &&
	kubectl rollout status -n "$n" deploy/recreate --timeout=60s
}
seq_hist() {
	local n=$1 i
	deployment "$n" hist 2 pause '{"revisionHistoryLimit": 1}' &&
	kubectl rollout status -n "$n" deploy/hist --timeout=60s || return 1
	for i in 2 3 4; do
		kubectl set image -n "$n" deploy/hist "c=pause:$i" &&
		kubectl rollout status -n "$n" deploy/hist --timeout=60s || return 1
	done
}
# A rolling update whose new pods never become ready (no node matches them), scaled from
# 10 to 20 once it is stuck: what maxSurge and maxUnavailable allow, then proportions.
seq_prop() {
	local n=$1
	deployment "$n" prop 10 pause \
	    '{"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}}' &&
	kubectl rollout status -n "$n" deploy/prop --timeout=60s &&
	kubectl patch -n "$n" deploy/prop -p \
	    '{"spec":{"template":{"spec":{"nodeSelector":{"sqlkcm.test/nowhere":"true"}}}}}' &&
	sleep 2 && wait_for 30 settled "$n" prop &&
	kubectl scale -n "$n" deploy/prop --replicas=20
}

# scenario NS: the four sequences side by side, then waits for the namespace to settle.
scenario() {
	local n=$1 s pids=() failed=0
	for s in web recreate hist prop; do
		"seq_$s" "$n" >"$work/$n-$s.log" 2>&1 &
		pids+=($!)
	done
	for s in "${pids[@]}"; do
		wait "$s" || failed=1
	done
	[ "$failed" = 0 ] || { tail -n 5 "$work/$n"-*.log; return 1; }
	sleep 2
	wait_for 60 settled "$n"
}

kubectl create namespace "$ref_ns" >/dev/null
kubectl create namespace "$ns" >/dev/null

# --- under kube-controller-manager ------------------------------------------------------------
kcm_start dk-reference --controllers=deployment,replicaset
check "kube-controller-manager: the scenario runs to the end (every rollout succeeds)" \
    scenario "$ref_ns"
norm snapshot "$ref_ns" >"$work/reference.json"
kcm_stop dk-reference
norm rvs "$ref_ns" >"$work/reference.rvs"

# --- under test -------------------------------------------------------------------------------
if [ "$second" = kcm ]; then
	kcm_start dk-second --controllers=deployment,replicaset
else
	sqlkcm_start dk --db "$db" --controllers deployment,replicaset -v 2
	wait_for 60 grep -q 'controller=deployment: caches synced' "$work/dk.log" >/dev/null
fi
check "$second: the scenario runs to the end (every rollout succeeds)" scenario "$ns"
norm snapshot "$ns" >"$work/test.json"
# Everything of the reference namespace is in the second one's informers' cache by now.
check "$second writes nothing to kube-controller-manager's converged namespace" \
    eval 'norm rvs "$ref_ns" | diff "$work/reference.rvs" -'
if [ "$second" = kcm ]; then
	kcm_stop dk-second
else
	sqlkcm_stop dk
	check "sqlkcm stops with status 0 on SIGTERM" test $? = 0
fi

# --- the comparison ---------------------------------------------------------------------------
check "the reference has the 4 Deployments, each with its ReplicaSets" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
got = {n: len(d["replicasets"]) for n, d in s["deployments"].items()}
assert got == {"web": 3, "recreate": 2, "hist": 2, "prop": 2}, got' "$work/reference.json"
for d in web recreate hist prop; do
	check "$d: ReplicaSets by revision (replicas, spec, annotations) as kube-controller-manager's" \
	    norm compare "$work/reference.json" "$work/test.json" "$d" replicasets \
	    "$work/diff-$d-replicasets"
	check "$d: status counts and conditions (type, status, reason) as kube-controller-manager's" \
	    norm compare "$work/reference.json" "$work/test.json" "$d" status "$work/diff-$d-status"
done
messages_match() {
	local d status=0
	for d in web recreate hist prop; do
		norm compare "$work/reference.json" "$work/test.json" "$d" messages \
		    "$work/diff-$d-messages" || status=1
	done
	return $status
}
check "the conditions' messages as kube-controller-manager's (hashes normalized)" messages_match
check "no ReplicaSet left without a Deployment" python3 -c '
import json, sys
for f in sys.argv[1:]:
    s = json.load(open(f))
    assert s["unowned replicasets"] == [], (f, s["unowned replicasets"])' \
    "$work/reference.json" "$work/test.json"
# What each side ended with, in short, as TAP comments.
python3 -c '
import json, sys
for label, f in (("kcm", sys.argv[1]), ("test", sys.argv[2])):
    s = json.load(open(f))
    for n, d in sorted(s["deployments"].items()):
        rs = " ".join("r%d=%d" % (r["revision"], r["spec"]["replicas"]) for r in d["replicasets"])
        st = d["status"]
        print("# %-4s %-8s %s; replicas %d updated %d available %d; %s" % (label, n, rs,
            st["replicas"], st["updatedReplicas"], st["availableReplicas"],
            ", ".join("%s=%s/%s" % tuple(c) for c in d["conditions"])))' \
    "$work/reference.json" "$work/test.json"
# Not required (the hash is not in the comparison), but worth knowing: kube's
# pod-template-hash is an FNV-32a of the template as Go prints it.
python3 -c '
import json, sys
a, b = (dict(json.load(open(f))["hashes"]) for f in sys.argv[1:3])
same = len(set(a) & set(b))
print("# pod-template-hash: %d of %d equal to kube-controller-manager'"'"'s" % (same, len(a)))' \
    "$work/reference.json" "$work/test.json"

tap_done
