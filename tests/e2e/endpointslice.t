#!/usr/bin/env bash
# endpointslice.t - the EndpointSlice and Endpoints controllers on a real control plane
# (kwok nodes, RBAC on): bare pods behind a Service with a named target port, scaled up and
# down; a pod made not ready (its status patched) is a not-ready endpoint; a pod held
# terminating by a finalizer is a terminating endpoint and no address; a change that
# does not touch the endpoints rewrites nothing; publishNotReadyAddresses; a headless
# Service; 250 pods across three slices of 100, 100 and 50; an Endpoints left without a
# Service is deleted as the controller starts. With E2E_EPS_CM=kcm the same runs against kube-controller-manager 1.36
# (endpointslice-kcm.t), which then also writes a summary of the end state to compare.
# e2e: locks endpointslice endpoint
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_EPS_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-eps.XXXXXX")
ns=eps-$cm-$RANDOM
cleanup() {
	kcm_stop eps
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# pods NAME-PREFIX APP FROM TO: bare pods PREFIX-FROM..PREFIX-TO labelled app=APP, with a
# container port named http (8080).
pods() {
	python3 - "$@" <<'PY' | kubectl apply -n "$ns" -f - >/dev/null
import json, sys
prefix, app, lo, hi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
items = [{"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": "%s-%d" % (prefix, i), "labels": {"app": app}},
          "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                   "ports": [{"name": "http", "containerPort": 8080}]}]}}
         for i in range(lo, hi + 1)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
}

# service NAME APP [publishNotReadyAddresses] [clusterIP]: port 80 to the named port http.
service() {
	kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: $1, labels: {team: blue}}
spec:
  selector: {app: $2}
  publishNotReadyAddresses: ${3:-false}
  ${4:+clusterIP: $4}
  ports: [{name: web, port: 80, targetPort: http}]
EOF
}

# slices SERVICE: one line per endpoint of its slices managed by the controller, sorted:
# "pod ready serving terminating port", then a line "slices N sizes A,B,..".
slices() {
	kubectl get endpointslices -n "$ns" -l "kubernetes.io/service-name=$1" -o json | python3 -c '
import json, sys
items = [s for s in json.load(sys.stdin)["items"]
         if s["metadata"]["labels"].get("endpointslice.kubernetes.io/managed-by")
            == "endpointslice-controller.k8s.io"]
lines = []
for s in items:
    ports = ",".join(str(p.get("port")) for p in s.get("ports") or [])
    for e in s.get("endpoints") or []:
        c = e.get("conditions", {})
        lines.append("%s %s %s %s %s" % (e["targetRef"]["name"], c.get("ready"),
                     c.get("serving"), c.get("terminating"), ports))
for l in sorted(lines):
    print(l)
print("slices %d sizes %s" % (len(items),
      ",".join(str(n) for n in sorted((len(s.get("endpoints") or []) for s in items),
                                      reverse=True))))'
}

# endpoints SERVICE: "ready: a,b not-ready: c ports: 8080" of its Endpoints' subsets.
endpoints() {
	kubectl get endpoints -n "$ns" "$1" -o json 2>/dev/null | python3 -c '
import json, sys
e = json.load(sys.stdin)
ready, unready, ports = [], [], set()
for s in e.get("subsets") or []:
    ready += [a["targetRef"]["name"] for a in s.get("addresses") or []]
    unready += [a["targetRef"]["name"] for a in s.get("notReadyAddresses") or []]
    ports |= {str(p["port"]) for p in s.get("ports") or []}
print("ready: %s not-ready: %s ports: %s" % (",".join(sorted(ready)),
      ",".join(sorted(unready)), ",".join(sorted(ports))))'
}

# spread SERVICE: "ENDPOINTS SLICES LARGEST" of its slices.
spread() {
	slices "$1" | tail -n 1 |
	    awk '{n = split($4, s, ","); t = 0; for (i = 1; i <= n; i++) t += s[i]; print t, $2, s[1]}'
}
spread_is_250_by_100() {
	local n m largest
	read -r n m largest <<<"$(spread "$1")"
	[ "$n" = 250 ] && [ "$m" -ge 3 ] && [ "$largest" -le 100 ]
}
slices_are() { [ "$(slices "$1")" = "$2" ]; }
slices_summary_is() { [ "$(slices "$1" | tail -n 1)" = "$2" ]; }
endpoints_are() { [ "$(endpoints "$1")" = "$2" ]; }
ready_line() { printf '%s True True False 8080\n' "$@"; }

kubectl create namespace "$ns" >/dev/null
# An Endpoints whose Service is gone (the apiserver deletes a Service's Endpoints with it;
# this one never had one) is deleted when the controller starts (kube's
# checkLeftoverEndpoints).
kubectl apply -n "$ns" -f - >/dev/null 2>&1 <<EOF
apiVersion: v1
kind: Endpoints
metadata: {name: leftover}
subsets: [{addresses: [{ip: 10.3.0.1}], ports: [{port: 80}]}]
EOF
if [ "$cm" = kcm ]; then
	kcm_start eps --controllers=endpointslice-controller,endpoints-controller
	check "kube-controller-manager started its endpoint controllers" kcm_synced "$work/eps.log"
else
	sqlkcm_start eps --db "$work/cache.db" --controllers endpointslice,endpoint -v 2
	check "sqlkcm's caches synced" \
	    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/eps.log"
fi

check "an Endpoints left without its Service is deleted" \
	wait_for 60 eval "! kubectl get endpoints -n $ns leftover >/dev/null 2>&1"

pods web web 1 3
service web web
check "three ready pods: one slice of three ready endpoints on the named port's 8080" \
	wait_for 60 slices_are web "$(ready_line web-1 web-2 web-3; echo "slices 1 sizes 3")"
check "the Endpoints: three ready addresses on 8080" \
	wait_for 60 endpoints_are web "ready: web-1,web-2,web-3 not-ready:  ports: 8080"
check "the slice is labelled and owned as kube does" eval '
	kubectl get endpointslices -n "$ns" -l kubernetes.io/service-name=web -o json | python3 -c "
import json, sys
s = json.load(sys.stdin)[\"items\"][0]
m = s[\"metadata\"]
assert m[\"labels\"] == {\"team\": \"blue\", \"kubernetes.io/service-name\": \"web\",
    \"endpointslice.kubernetes.io/managed-by\": \"endpointslice-controller.k8s.io\"}, m[\"labels\"]
assert m[\"generateName\"] == \"web-\", m
o = m[\"ownerReferences\"]
assert len(o) == 1 and o[0][\"kind\"] == \"Service\" and o[0][\"name\"] == \"web\" and o[0][\"controller\"], o
assert s[\"addressType\"] == \"IPv4\" and s[\"ports\"][0][\"name\"] == \"web\", s
"'
check "the Endpoints is labelled as kube does" eval '
	[ "$(kubectl get endpoints -n "$ns" web -o jsonpath="{.metadata.labels}")" = "{\"endpoints.kubernetes.io/managed-by\":\"endpoint-controller\",\"team\":\"blue\"}" ]'

pods web web 4 5
check "scaled up to five: five endpoints in the one slice" \
	wait_for 60 slices_are web "$(ready_line web-1 web-2 web-3 web-4 web-5; echo "slices 1 sizes 5")"
kubectl delete pod -n "$ns" web-4 web-5 --grace-period=0 --force >/dev/null 2>&1
check "scaled down to three: the deleted pods' endpoints are gone" \
	wait_for 60 slices_are web "$(ready_line web-1 web-2 web-3; echo "slices 1 sizes 3")"
check "and from the Endpoints" \
	wait_for 60 endpoints_are web "ready: web-1,web-2,web-3 not-ready:  ports: 8080"

kubectl patch pod -n "$ns" web-2 --subresource=status --type=merge \
	-p '{"status":{"conditions":[{"type":"Ready","status":"False"}]}}' >/dev/null
check "a pod made not ready: its endpoint is neither ready nor serving" \
	wait_for 60 slices_are web "$(ready_line web-1; echo "web-2 False False False 8080";
	    ready_line web-3; echo "slices 1 sizes 3")"
check "and a not-ready address of the Endpoints" \
	wait_for 60 endpoints_are web "ready: web-1,web-3 not-ready: web-2 ports: 8080"
check "kwok left the pod not ready (the check above saw what we set)" eval '
	[ "$(kubectl get pod -n "$ns" web-2 -o jsonpath="{.status.conditions[?(@.type==\"Ready\")].status}")" = False ]'

# A pod held by a finalizer while it is deleted: a terminating endpoint, serving still,
# not ready; the Endpoints leaves it out.
pods web web 7 7
check "a seventh pod joins" wait_for 60 slices_summary_is web "slices 1 sizes 4"
kubectl patch pod -n "$ns" web-7 --type=merge \
	-p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
kubectl delete pod -n "$ns" web-7 --wait=false >/dev/null
check "a terminating pod: its endpoint is terminating, serving, not ready" \
	wait_for 60 slices_are web "$(ready_line web-1; echo "web-2 False False False 8080";
	    ready_line web-3; echo "web-7 False True True 8080"; echo "slices 1 sizes 4")"
check "and the Endpoints leaves it out" \
	wait_for 60 endpoints_are web "ready: web-1,web-3 not-ready: web-2 ports: 8080"
kubectl patch pod -n "$ns" web-7 --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
check "the pod gone, so is its endpoint" wait_for 60 slices_summary_is web "slices 1 sizes 3"

service all web true
check "publishNotReadyAddresses: the not-ready pod is a ready endpoint, not serving" \
	wait_for 60 slices_are all "$(ready_line web-1; echo "web-2 True False False 8080";
	    ready_line web-3; echo "slices 1 sizes 3")"
check "publishNotReadyAddresses: every address of the Endpoints is ready" \
	wait_for 60 endpoints_are all "ready: web-1,web-2,web-3 not-ready:  ports: 8080"

# A change that leaves the endpoints as they are rewrites neither object.
rv_slice=$(kubectl get endpointslices -n "$ns" -l kubernetes.io/service-name=web \
	-o jsonpath='{.items[0].metadata.resourceVersion}')
rv_ep=$(kubectl get endpoints -n "$ns" web -o jsonpath='{.metadata.resourceVersion}' 2>/dev/null)
kubectl label pod -n "$ns" web-1 unrelated=yes >/dev/null
# Nothing to wait for when nothing should happen: the controllers get 3 s to (not) act.
sleep 3
check "a pod's label change that leaves its endpoints alone rewrites no slice" eval '
	[ "$(kubectl get endpointslices -n "$ns" -l kubernetes.io/service-name=web \
	    -o jsonpath="{.items[0].metadata.resourceVersion}")" = "$rv_slice" ]'
check "nor the Endpoints" eval '
	[ "$(kubectl get endpoints -n "$ns" web -o jsonpath="{.metadata.resourceVersion}" 2>/dev/null)" = "$rv_ep" ]'

service headless web false None
check "a headless Service's slice carries service.kubernetes.io/headless" eval '
	wait_for 60 eval "kubectl get endpointslices -n $ns -l kubernetes.io/service-name=headless,service.kubernetes.io/headless -o name | grep -q ."'
check "and so does its Endpoints" \
	wait_for 60 eval "kubectl get endpoints -n $ns headless -o jsonpath='{.metadata.labels}' | grep -q service.kubernetes.io/headless"

pods big big 1 250
service big big
# How the 250 are spread depends on how many of the pods each sync saw (kube's reconciler
# fills new slices with what comes, then the rest): 100, 100, 50 when the first saw them
# all, 100, 98, 52 when it saw 198, under either controller manager.
check "250 pods: 250 endpoints, in at least three slices of at most 100" \
	wait_for 120 spread_is_250_by_100 big
check "and 250 ready addresses in the Endpoints" \
	wait_for 120 eval '[ "$(endpoints big | sed "s/ not-ready.*//" | tr , "\n" | wc -l)" -eq 250 ]'

if [ -n "${E2E_EPS_SUMMARY:-}" ]; then
	for s in web all headless; do
		echo "== slices $s"; slices "$s"
		echo "== endpoints $s"; endpoints "$s"
	done >"$E2E_EPS_SUMMARY"
	# big's endpoints, not their spread over slices (see above)
	{ echo "== slices big"; slices big | sed '$d'
	  echo "== endpoints big"; endpoints big; } >>"$E2E_EPS_SUMMARY"
fi

tap_done
