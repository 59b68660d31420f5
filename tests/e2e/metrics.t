#!/usr/bin/env bash
# metrics.t - the daemon's HTTP endpoints on a real control plane: /healthz, /livez and
# /readyz (with ?verbose), /configz as JSON without secrets, 404 and 405, HTTPS with the
# self-signed certificate and plain HTTP, a port in use refused at start, and /metrics
# parsed by a real Prometheus text parser (prometheus_client) with values that move as a
# ReplicaSet is scaled. Over HTTPS, who may ask is the apiserver's to say, as for
# kube-controller-manager: anyone for the health checks, and for /metrics and /configz a
# user its TokenReview and SubjectAccessReview allow (401, 403 otherwise).
# e2e: locks replicaset
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-metrics.XXXXXX")
ns=metrics-$RANDOM
cleanup() {
	kubectl delete clusterrolebinding,clusterrole "sqlkcm-test:$ns" --wait=false \
	    >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# The Prometheus text parser: Debian's python3-prometheus-client (contrib/install-deps
# --test) installs it for the system python3, which may not be the first on PATH.
py=python3
$py -c 'import prometheus_client' 2>/dev/null || py=/usr/bin/python3

wait_for() {
	local seconds=$1
	shift
	cluster_wait_until "$seconds" "$*" "$@"
}

# The cluster admin's bearer token (system:masters), for the HTTPS endpoints.
admin_token=$(cat "$cluster/token")

# get URL [CURL-ARGS...]: the body, asked with the admin's token; the status code goes to
# $work/status.
get() {
	local url=$1
	shift
	curl -sk --max-time 10 -o "$work/body" -w '%{http_code}' \
	    -H "Authorization: Bearer $admin_token" "$@" "$url" >"$work/status"
	cat "$work/body"
}

# status_as TOKEN URL: the status of GET URL with TOKEN as bearer token ("": none); the
# body goes to $work/body.
status_as() {
	if [ -n "$1" ]; then
		curl -sk --max-time 10 -o "$work/body" -w '%{http_code}' \
		    -H "Authorization: Bearer $1" "$2"
	else
		curl -sk --max-time 10 -o "$work/body" -w '%{http_code}' "$2"
	fi
}

# answers URL STATUS [BODY-PATTERN]: URL answers with STATUS (and a body matching).
answers() {
	local body
	body=$(get "$1")
	[ "$(cat "$work/status")" = "$2" ] || { echo "status $(cat "$work/status"): $body"; return 1; }
	[ -z "${3:-}" ] || printf '%s\n' "$body" | grep -qE -- "$3" || { echo "body: $body"; return 1; }
}

# scrape URL FILE: /metrics parsed by prometheus_client into FILE as JSON: every sample
# under its name and sorted labels, and every family's type.
scrape() {
	curl -sfk --max-time 10 -H "Authorization: Bearer $admin_token" "$1" \
	    >"$work/metrics.txt" || return 1
	$py - "$work/metrics.txt" >"$2" <<'PY'
import json, sys
from prometheus_client.parser import text_string_to_metric_families
samples, types = {}, {}
for family in text_string_to_metric_families(open(sys.argv[1]).read()):
    types[family.name] = family.type
    for s in family.samples:
        key = s.name + "{" + ",".join('%s="%s"' % kv for kv in sorted(s.labels.items())) + "}"
        samples[key] = s.value
json.dump({"samples": samples, "types": types}, sys.stdout)
PY
}

# value FILE SAMPLE: a sample's value from a scrape (0 when absent).
value() {
	$py -c 'import json, sys; print(json.load(open(sys.argv[1]))["samples"].get(sys.argv[2], 0))' "$1" "$2"
}

# grew BEFORE AFTER SAMPLE [AT-LEAST]: the sample rose by at least AT-LEAST (default 1).
grew() {
	$py -c 'import json, sys
a = json.load(open(sys.argv[1]))["samples"].get(sys.argv[3], 0)
b = json.load(open(sys.argv[2]))["samples"].get(sys.argv[3], 0)
need = float(sys.argv[4])
if b - a < need:
    sys.exit("%s: %s -> %s, want a rise of %s" % (sys.argv[3], a, b, need))' "$1" "$2" "$3" "${4:-1}"
}

kubectl create namespace "$ns" >/dev/null
secure=$(cluster_free_port)
plain=$(cluster_free_port)
while [ "$plain" = "$secure" ]; do plain=$(cluster_free_port); done
https=https://127.0.0.1:$secure
http=http://127.0.0.1:$plain
sqlkcm_start a --db "$work/a.db" --controllers replicaset --secure-port "$secure" \
    --port "$plain" --kube-api-qps 100 --kube-api-burst 200 -v 2

# --- health --------------------------------------------------------------------------------
check "HTTPS answers /healthz with ok" wait_for 30 answers "$https/healthz" 200 '^ok$'
check "plain HTTP answers /healthz with ok" answers "$http/healthz" 200 '^ok$'
check "/livez is ok" answers "$https/livez" 200 '^ok$'
check "/readyz is 200 once the caches are synced" wait_for 30 answers "$https/readyz" 200 '^ok$'
check "/readyz?verbose lists its checks" eval 'get "$https/readyz?verbose" >"$work/verbose" &&
    grep -qx "\[+\]ping ok" "$work/verbose" && grep -qx "\[+\]informer-sync ok" "$work/verbose" &&
    grep -qx "readyz check passed" "$work/verbose"'
check "/healthz?verbose lists ping" answers "$http/healthz?verbose" 200 'healthz check passed'
check "/readyz/informer-sync runs one check" answers "$https/readyz/informer-sync" 200 '^ok$'

# --- TLS ------------------------------------------------------------------------------------
check "the HTTPS certificate is self-signed: refused without -k" \
    eval '! curl -s --max-time 5 -o /dev/null "$https/healthz"'
check "the certificate names 127.0.0.1" eval 'openssl s_client -connect "127.0.0.1:$secure" \
    </dev/null 2>/dev/null | openssl x509 -noout -ext subjectAltName | grep -q "IP Address:127.0.0.1"'
check "the HTTPS port does not speak plain HTTP" \
    eval '[ "$(curl -s --max-time 5 -o /dev/null -w "%{http_code}" "http://127.0.0.1:$secure/healthz")" != 200 ]'

# --- configz, 404, 405 ----------------------------------------------------------------------
get "$https/configz" >"$work/configz.json"
check "/configz is 200" test "$(cat "$work/status")" = 200
check "/configz is JSON with every flag's effective value" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
f = c["flags"]
assert f["secure-port"] == int(sys.argv[2]) and f["port"] == int(sys.argv[3]), f
assert f["bind-address"] == "127.0.0.1" and f["controllers"] == "replicaset", f
assert f["kube-api-qps"] == 100 and f["kube-api-burst"] == 200, f
assert f["concurrent-replicaset-syncs"] == 5 and f["db-cache-mib"] == 2, f   # defaults
assert f["tls-cert-file"] is None and f["record"] is None, f
' "$work/configz.json" "$secure" "$plain"
check "/configz holds no secret from the kubeconfig" python3 -c '
import sys
text = open(sys.argv[1]).read()
kc = open(sys.argv[2]).read()
for line in kc.splitlines():
    k, _, v = line.strip().partition(": ")
    if k in ("token", "client-key-data", "client-certificate-data", "password") and v:
        assert v not in text, k
assert "PRIVATE KEY" not in text and "BEGIN" not in text
' "$work/configz.json" "$cluster/kubeconfig"
check "an unknown path is 404" answers "$https/nope" 404
check "/metrics/x is 404" answers "$https/metrics/x" 404
check "POST /metrics is 405" eval '[ "$(get "$https/metrics" -X POST >/dev/null; cat "$work/status")" = 405 ]'
check "405 says which methods are allowed" eval 'curl -sk -X DELETE -D - -o /dev/null "$http/healthz" | grep -qi "^Allow: GET, HEAD"'
check "HEAD /metrics is 200" eval '[ "$(get "$https/metrics" -I >/dev/null; cat "$work/status")" = 200 ]'

# --- who may ask ----------------------------------------------------------------------------
# A ServiceAccount allowed to get /metrics (as a Prometheus would be), nothing more.
kubectl create serviceaccount scraper -n "$ns" >/dev/null
kubectl create clusterrole "sqlkcm-test:$ns" --verb=get --non-resource-url=/metrics >/dev/null
kubectl create clusterrolebinding "sqlkcm-test:$ns" --clusterrole="sqlkcm-test:$ns" \
    --serviceaccount="$ns:scraper" >/dev/null
scraper=$(kubectl create token scraper -n "$ns" --duration=1h)
check "the health checks are served to anyone: /healthz, /livez, /readyz without a token" \
    eval '[ "$(status_as "" "$https/healthz")" = 200 ] &&
    [ "$(status_as "" "$https/livez")" = 200 ] && [ "$(status_as "" "$https/readyz")" = 200 ]'
check "/metrics without a token is 403 for system:anonymous" eval \
    '[ "$(status_as "" "$https/metrics")" = 403 ] && grep -qF "forbidden: User \"system:anonymous\" cannot get path \"/metrics\"" "$work/body"'
check "/configz without a token is 403" test "$(status_as "" "$https/configz")" = 403
check "a token the apiserver does not know is 401" \
    test "$(status_as not-a-token "$https/metrics")" = 401
check "a ServiceAccount allowed to get /metrics gets it" \
    test "$(status_as "$scraper" "$https/metrics")" = 200
check "and parses it" eval 'grep -q "^workqueue_adds_total" "$work/body"'
check "but not /configz: 403 naming it" eval \
    '[ "$(status_as "$scraper" "$https/configz")" = 403 ] && grep -qF "User \"system:serviceaccount:$ns:scraper\" cannot get path \"/configz\"" "$work/body"'
check "plain HTTP is not checked (loopback, off by default)" \
    test "$(status_as "" "$http/metrics")" = 200
check "no token reached the log" eval '! grep -qF "$scraper" "$work/a.log" &&
    ! grep -qF "$admin_token" "$work/a.log"'

# --- metrics --------------------------------------------------------------------------------
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: pause}]}
YAML
wait_for 30 eval '[ "$(kubectl get rs -n "$ns" web -o jsonpath="{.status.observedGeneration}")" = 1 ]'
check "/metrics parses as Prometheus text" scrape "$https/metrics" "$work/before.json"
check "every family has the type client-go and client_golang give it" $py -c '
import json, sys
t = json.load(open(sys.argv[1]))["types"]
want = {
    "workqueue_adds": "counter", "workqueue_depth": "gauge",
    "workqueue_queue_duration_seconds": "histogram", "workqueue_work_duration_seconds": "histogram",
    "workqueue_retries": "counter", "workqueue_unfinished_work_seconds": "gauge",
    "workqueue_longest_running_processor_seconds": "gauge",
    "rest_client_requests": "counter", "rest_client_request_duration_seconds": "histogram",
    "rest_client_rate_limiter_duration_seconds": "histogram",
    "process_cpu_seconds": "counter", "process_resident_memory_bytes": "gauge",
    "process_start_time_seconds": "gauge", "process_open_fds": "gauge",
    "sqlkcm_informer_events": "counter", "sqlkcm_informer_lists": "counter",
    "sqlkcm_informer_watches": "counter", "sqlkcm_informer_relists": "counter",
    "sqlkcm_informer_errors": "counter", "sqlkcm_informer_batches": "counter",
    "sqlkcm_informer_synced": "gauge",
    "sqlkcm_store_objects": "gauge", "sqlkcm_store_database_size_bytes": "gauge",
    "sqlkcm_store_transaction_commit_duration_seconds": "histogram",
}
bad = {k: (t.get(k), v) for k, v in want.items() if t.get(k) != v}
assert not bad, bad
' "$work/before.json"
check "the informers are synced and the process metrics are plausible" $py -c '
import json, sys, time
s = json.load(open(sys.argv[1]))["samples"]
assert s["sqlkcm_informer_synced{resource=\"pods\"}"] == 1
assert s["sqlkcm_informer_synced{resource=\"replicasets\"}"] == 1
assert s["process_resident_memory_bytes{}"] > 1e6
assert time.time() - 3600 < s["process_start_time_seconds{}"] <= time.time()
assert s["process_open_fds{}"] > 3
assert s["sqlkcm_store_database_size_bytes{}"] > 0
' "$work/before.json"

host=$($py -c 'import json, sys
for k in json.load(open(sys.argv[1]))["samples"]:
    if k.startswith("rest_client_requests_total{"):
        print(k.split("host=\"")[1].split("\"")[0]); break' "$work/before.json")
kubectl scale rs -n "$ns" web --replicas=5 >/dev/null
wait_for 60 eval '[ "$(kubectl get rs -n "$ns" web -o jsonpath="{.status.readyReplicas}")" = 5 ]'
check "/metrics parses after the scale-up" scrape "$https/metrics" "$work/after.json"
check "rest_client_request_duration_seconds has client-go's buckets" $py -c '
import json, sys
s = json.load(open(sys.argv[1]))["samples"]
les = sorted(float(k.split("le=\"")[1].split("\"")[0]) for k in s
             if k.startswith("rest_client_request_duration_seconds_bucket{") and "verb=\"POST\"" in k)
assert les == [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, float("inf")], les
' "$work/after.json"
check "workqueue_adds_total{name=replicaset} grew" \
    grew "$work/before.json" "$work/after.json" 'workqueue_adds_total{name="replicaset"}'
check "rest_client_requests_total{code=201,method=POST} grew by the 5 pods" \
    grew "$work/before.json" "$work/after.json" \
    "rest_client_requests_total{code=\"201\",host=\"$host\",method=\"POST\"}" 5
check "rest_client_request_duration_seconds counted the POSTs" \
    grew "$work/before.json" "$work/after.json" \
    "rest_client_request_duration_seconds_count{host=\"$host\",verb=\"POST\"}" 5
check "the watches count in rest_client_requests_total once their headers arrive" $py -c '
import json, sys
s = json.load(open(sys.argv[1]))["samples"]
w = s["sqlkcm_informer_watches_total{resource=\"pods\"}"] + s["sqlkcm_informer_watches_total{resource=\"replicasets\"}"]
gets = s["rest_client_requests_total{code=\"200\",host=\"%s\",method=\"GET\"}" % sys.argv[2]]
assert gets >= w, (gets, w)   # the initial state came by WatchList: no LIST needed
' "$work/after.json" "$host"
check "sqlkcm_informer_events_total{resource=pods} grew" \
    grew "$work/before.json" "$work/after.json" 'sqlkcm_informer_events_total{resource="pods"}' 5
# Other tests' pods share the cluster: at least ours.
check "sqlkcm_store_objects{resource=pods} counts the 5 pods" $py -c '
import sys; assert float(sys.argv[1]) >= 5, sys.argv[1]' \
    "$(value "$work/after.json" 'sqlkcm_store_objects{resource="pods"}')"
check "store commits were timed" \
    grew "$work/before.json" "$work/after.json" 'sqlkcm_store_transaction_commit_duration_seconds_count{}'

# --- plain HTTP only; a port in use ---------------------------------------------------------
only=$(cluster_free_port)
while [ "$only" = "$secure" ] || [ "$only" = "$plain" ]; do only=$(cluster_free_port); done
sqlkcm_start b --db "$work/b.db" --controllers '' --secure-port 0 --port "$only"
check "with --secure-port 0 --port N only plain HTTP serves" wait_for 30 answers "http://127.0.0.1:$only/readyz" 200 '^ok$'
check "and /metrics parses there" scrape "http://127.0.0.1:$only/metrics" "$work/b.json"
"$SQLKCM" run --kubeconfig "$cluster/kubeconfig" --db "$work/c.db" --controllers '' \
    --secure-port 0 --port "$only" </dev/null >"$work/c.log" 2>&1 &
wait $!
check "a port in use stops the start with status 1" test $? = 1
check "naming the address and the port" grep -q "cannot listen for HTTP on 127.0.0.1 port $only" "$work/c.log"
"$SQLKCM" run --bind-address localhost >"$work/bad.log" 2>&1
check "a bad --bind-address is refused with status 2" test $? = 2
check "naming the flag" grep -q 'invalid value "localhost" for --bind-address' "$work/bad.log"
sqlkcm_stop b
check "b stops with status 0" test $? = 0

# --- a certificate of one's own -----------------------------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -subj /CN=sqlkcm-test -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1
own=$(cluster_free_port)
while [ "$own" = "$secure" ] || [ "$own" = "$plain" ]; do own=$(cluster_free_port); done
sqlkcm_start d --db "$work/d.db" --controllers '' --secure-port "$own" \
    --tls-cert-file "$work/cert.pem" --tls-private-key-file "$work/key.pem"
check "with --tls-cert-file, HTTPS verifies against that certificate" wait_for 30 \
    curl -sf --max-time 5 --cacert "$work/cert.pem" "https://127.0.0.1:$own/readyz"
check "/configz names the key file but holds no key" eval 'get "https://127.0.0.1:$own/configz" |
    grep -qF "\"tls-private-key-file\":\"$work/key.pem\"" &&
    ! get "https://127.0.0.1:$own/configz" | grep -q "PRIVATE"'
sqlkcm_stop d
check "d stops with status 0" test $? = 0

sqlkcm_stop a
check "a stops with status 0 on SIGTERM" test $? = 0
check "and no longer listens" eval '! curl -sk --max-time 3 -o /dev/null "$https/healthz"'

tap_done
