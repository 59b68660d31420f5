#!/usr/bin/env bash
# exactbodies.t - what sqlkcm sends carries every field it did not compute as the
# apiserver gave it. A template's terminationGracePeriodSeconds of 10^15 (which cJSON
# alone prints as 1e+15, refused by the apiserver for an int64) and a probe's
# terminationGracePeriodSeconds of 2^63-1 (which a double rounds): a ReplicaSet and a
# Deployment with them get their pods, with the same numbers, and their statuses written.
# e2e: locks deployment replicaset
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-exactbodies.XXXXXX")
ns=exact-$RANDOM
cleanup() {
	e2e_cleanup "$ns"
	timeout 60 kubectl delete deployments -n "$ns" --all --wait=false >/dev/null 2>&1
}
trap cleanup EXIT

# template KIND NAME: a KIND (ReplicaSet or Deployment) of 2 replicas with the numbers.
template() {
	cat <<EOF
apiVersion: apps/v1
kind: $1
metadata:
  name: $2
spec:
  replicas: 2
  selector:
    matchLabels: {app: $2}
  template:
    metadata:
      labels: {app: $2}
    spec:
      terminationGracePeriodSeconds: 1000000000000000
      containers:
      - name: c
        image: pause
        livenessProbe:
          exec: {command: ["true"]}
          terminationGracePeriodSeconds: 9223372036854775807
EOF
}

# numbers LABEL: each pod of app=LABEL as "grace/probe-grace", one per line.
numbers() {
	kubectl get pods -n "$ns" -l "app=$1" -o json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    s = p["spec"]
    print("%s/%s" % (s.get("terminationGracePeriodSeconds"),
                     s["containers"][0]["livenessProbe"].get("terminationGracePeriodSeconds")))'
}
want="1000000000000000/9223372036854775807"
exact() { [ "$(numbers "$1" | sort -u)" = "$want" ] && [ "$(numbers "$1" | wc -l)" = 2 ]; }

kubectl create namespace "$ns" >/dev/null
template ReplicaSet rs | kubectl apply -n "$ns" -f - >/dev/null
template Deployment web | kubectl apply -n "$ns" -f - >/dev/null
# has_numbers ARGS...: the JSON of `kubectl get ARGS`, as kubectl prints it, has both numbers.
has_numbers() {
	local json
	json=$(kubectl get -n "$ns" "$@" -o json) &&
	grep -qE '"terminationGracePeriodSeconds": 1000000000000000(,|$)' <<<"$json" &&
	grep -qE '"terminationGracePeriodSeconds": 9223372036854775807(,|$)' <<<"$json"
}
check "the apiserver keeps the numbers as written" has_numbers rs rs

sqlkcm_start exact --db "$work/cache.db" --controllers replicaset,deployment -v 2
check "the ReplicaSet gets its 2 pods, with the template's numbers" \
	cluster_wait_until 90 "rs's pods" exact rs
check "the Deployment gets its 2 pods, with the template's numbers" \
	cluster_wait_until 90 "web's pods" exact web
check "the ReplicaSet's status is written (observedGeneration 1, 2 replicas)" \
	cluster_wait_until 60 "rs's status" bash -c "
	[ \"\$(kubectl get rs -n '$ns' rs -o jsonpath='{.status.observedGeneration}/{.status.replicas}')\" = 1/2 ]"
check "the Deployment's status is written (observedGeneration 1, 2 replicas)" \
	cluster_wait_until 60 "web's status" bash -c "
	[ \"\$(kubectl get deploy -n '$ns' web -o jsonpath='{.status.observedGeneration}/{.status.replicas}')\" = 1/2 ]"
check "its ReplicaSet keeps the numbers in its template" has_numbers rs -l app=web
check "no write of sqlkcm was refused" bash -c "! grep -E 'Invalid|cannot unmarshal|422' '$work/exact.log'"
sqlkcm_stop exact
check "sqlkcm stops with status 0 on SIGTERM" test $? = 0
check "the cache keeps the numbers as the apiserver sent them" bash -c "
	sqlite3 '$work/cache.db' \"SELECT body FROM cache_pods WHERE namespace = '$ns'\" |
	grep -c '\"terminationGracePeriodSeconds\":9223372036854775807' | grep -qx 4"
tap_done
