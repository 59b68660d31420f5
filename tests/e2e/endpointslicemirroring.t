#!/usr/bin/env bash
# endpointslicemirroring.t - the EndpointSlice mirroring controller on a real control
# plane: a Service without a selector and its hand-written Endpoints (ready and not-ready
# addresses) mirrored into a slice of the Endpoints' labels, owned by it; an IPv6 address
# added, a second slice of its family; the skip-mirror label takes the slices away and
# taking it off brings them back; a selector on the Service, and the Endpoints deleted,
# each take them away. With E2E_ESM_CM=kcm the same runs against kube-controller-manager
# 1.36 (endpointslicemirroring-kcm.t, which compares the end states).
# e2e: locks endpointslicemirroring endpoint
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_ESM_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-esm.XXXXXX")
ns=esm-$cm-$RANDOM
cleanup() {
	kcm_stop esm
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# mirrored NAME: the slices mirrored for NAME, sorted: "type addr ready ports" per
# endpoint, then "slices N".
mirrored() {
	kubectl get endpointslices -n "$ns" -l "kubernetes.io/service-name=$1" -o json | python3 -c '
import json, sys
items = [s for s in json.load(sys.stdin)["items"]
         if s["metadata"]["labels"].get("endpointslice.kubernetes.io/managed-by")
            == "endpointslicemirroring-controller.k8s.io"]
lines = []
for s in items:
    ports = ",".join(sorted("%s/%s" % (p.get("name"), p.get("port")) for p in s.get("ports") or []))
    for e in s.get("endpoints") or []:
        lines.append("%s %s %s %s" % (s["addressType"], ",".join(e["addresses"]),
                     e.get("conditions", {}).get("ready"), ports))
for l in sorted(lines):
    print(l)
print("slices %d" % len(items))'
}
mirrored_is() { [ "$(mirrored "$1")" = "$2" ]; }

# endpoints MORE: the Endpoints "ext": two ready addresses (and MORE), one not ready.
endpoints() {
	kubectl apply -n "$ns" -f - >/dev/null 2>&1 <<EOF
apiVersion: v1
kind: Endpoints
metadata: {name: ext, labels: {team: blue}}
subsets:
- ports: [{name: http, port: 8080}]
  addresses: [{ip: 10.1.0.1}, {ip: 10.1.0.2}$1]
  notReadyAddresses: [{ip: 10.1.0.3}]
EOF
}

kubectl create namespace "$ns" >/dev/null
if [ "$cm" = kcm ]; then
	kcm_start esm --controllers=endpointslice-mirroring-controller
	check "kube-controller-manager started its mirroring controller" kcm_synced "$work/esm.log"
else
	sqlkcm_start esm --db "$work/cache.db" --controllers endpointslicemirroring -v 2
	check "sqlkcm's caches synced" \
	    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/esm.log"
fi

kubectl apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: ext}
spec:
  ports: [{name: http, port: 80, targetPort: 8080}]
EOF
endpoints ""
v4="IPv4 10.1.0.1 True http/8080
IPv4 10.1.0.2 True http/8080
IPv4 10.1.0.3 False http/8080"
check "the Endpoints is mirrored: one IPv4 slice, two ready endpoints and one not" \
	wait_for 60 mirrored_is ext "$v4
slices 1"
check "the slice carries the Endpoints' labels and is owned by it" eval '
	kubectl get endpointslices -n "$ns" -l kubernetes.io/service-name=ext -o json | python3 -c "
import json, sys
s = json.load(sys.stdin)[\"items\"][0][\"metadata\"]
assert s[\"labels\"] == {\"team\": \"blue\", \"kubernetes.io/service-name\": \"ext\",
    \"endpointslice.kubernetes.io/managed-by\": \"endpointslicemirroring-controller.k8s.io\"}, s[\"labels\"]
o = s[\"ownerReferences\"]
assert len(o) == 1 and o[0][\"kind\"] == \"Endpoints\" and o[0][\"name\"] == \"ext\" and o[0][\"controller\"], o
assert s[\"generateName\"] == \"ext-\", s
"'

endpoints ", {ip: 'fd00::5'}"
check "an IPv6 address: a second slice, of its family" \
	wait_for 60 mirrored_is ext "$v4
IPv6 fd00::5 True http/8080
slices 2"

kubectl label endpoints -n "$ns" ext endpointslice.kubernetes.io/skip-mirror=true >/dev/null 2>&1
check "the skip-mirror label takes the mirrored slices away" \
	wait_for 60 mirrored_is ext "slices 0"
kubectl label endpoints -n "$ns" ext endpointslice.kubernetes.io/skip-mirror- >/dev/null 2>&1
check "taking it off brings them back" \
	wait_for 60 mirrored_is ext "$v4
IPv6 fd00::5 True http/8080
slices 2"

if [ -n "${E2E_ESM_SUMMARY:-}" ]; then
	mirrored ext >"$E2E_ESM_SUMMARY"
fi

kubectl patch service -n "$ns" ext --type=merge -p '{"spec":{"selector":{"app":"none"}}}' \
	>/dev/null
check "a selector on the Service takes the mirrored slices away" \
	wait_for 60 mirrored_is ext "slices 0"

kubectl apply -n "$ns" -f - >/dev/null 2>&1 <<EOF
apiVersion: v1
kind: Service
metadata: {name: ext2}
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: ext2}
subsets: [{addresses: [{ip: 10.2.0.1}], ports: [{port: 80}]}]
EOF
check "a second selector-less Service's Endpoints is mirrored" \
	wait_for 60 mirrored_is ext2 "IPv4 10.2.0.1 True /80
slices 1"
kubectl delete endpoints -n "$ns" ext2 >/dev/null 2>&1
check "its Endpoints deleted, its mirrored slice goes" \
	wait_for 60 mirrored_is ext2 "slices 0"

tap_done
