#!/usr/bin/env bash
# serviceaccountcredentials-all.t - every controller of sqlkcm (`*`) with
# --use-service-account-credentials, as kubeadm runs kube-controller-manager: the
# kubeconfig is kube-controller-manager's own (the user system:kube-controller-manager,
# which may list and watch everything and ask for tokens, little more), so each
# controller works under its system:controller:* ClusterRole alone. In the test's
# namespace a Deployment, a Job, a Service, a ResourceQuota and a PodDisruptionBudget get
# their work done, the apiserver refuses sqlkcm nothing (no "forbidden" in its log), and
# the audit log shows the creates under kube's identities. Then the namespace is deleted
# by the namespace controller's identity. No locks line: `*` runs every controller, so
# the test runs alone.
# serviceaccount-token keeps the kubeconfig's identity, as kube's tokens controller its
# root client, whose bootstrap role (system:kube-controller-manager) may update Secrets:
# a token Secret made in the namespace gets its token so.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-sacreds-all.XXXXXX")
ns=sacreds-all-$RANDOM
cleanup() {
	e2e_cleanup "$ns"
}
trap cleanup EXIT
kubectl create namespace "$ns" >/dev/null

range=$(grep -o -- '--service-cluster-ip-range=[^ ]*' "$cluster/cmd/kube-apiserver" | cut -d= -f2)
sqlkcm_start all --kubeconfig "$cluster/controller-manager.kubeconfig" --db "$work/cache.db" \
    --root-ca-file "$cluster/pki/ca.crt" \
    --service-account-private-key-file "$cluster/pki/sa.key" \
    --cluster-signing-cert-file "$cluster/pki/ca.crt" \
    --cluster-signing-key-file "$cluster/pki/ca.key" \
    --service-cluster-ip-range "$range" \
    --use-service-account-credentials '--controllers=*'

kubectl apply -n "$ns" -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: pause}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec: {restartPolicy: Never, containers: [{name: c, image: pause}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec: {hard: {pods: "10"}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
EOF

jsonpath() {
	kubectl get -n "$ns" "$1" -o jsonpath="$2" 2>/dev/null
}
equals() {
	[ "$(jsonpath "$1" "$2")" = "$3" ]
}
check "the Deployment's two pods are ready" \
    cluster_wait_until 90 "the Deployment" equals deployment/web '{.status.readyReplicas}' 2
check "the Job completes" \
    cluster_wait_until 60 "the Job" equals job/once '{.status.succeeded}' 1
slice_ready() {
	[ "$(kubectl get endpointslices -n "$ns" -l kubernetes.io/service-name=web \
	    -o jsonpath='{range .items[*].endpoints[*]}x{end}')" = xx ]
}
check "the Service's EndpointSlice holds the two pods" \
    cluster_wait_until 60 "the EndpointSlice" slice_ready
quota_counted() {
	[ -n "$(jsonpath resourcequota/q '{.status.used.pods}')" ] &&
	    [ "$(jsonpath resourcequota/q '{.status.used.pods}')" = \
	    "$(kubectl get pods -n "$ns" --field-selector=status.phase!=Succeeded,status.phase!=Failed -o name | wc -l)" ]
}
check "the ResourceQuota counts the pods" cluster_wait_until 60 "the quota" quota_counted
kubectl create serviceaccount -n "$ns" robot >/dev/null
kubectl apply -n "$ns" -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Secret
metadata:
  name: robot-token
  annotations: {kubernetes.io/service-account.name: robot}
type: kubernetes.io/service-account-token
EOF
check "the token Secret gets its token (an update, which the role allows)" \
    cluster_wait_until 60 "the token" eval '[ -n "$(jsonpath secret/robot-token "{.data.token}")" ]'
check "the PodDisruptionBudget allows one disruption" \
    cluster_wait_until 60 "the budget" equals pdb/web '{.status.disruptionsAllowed}' 1

# creators RESOURCE: the users the audit log shows creating RESOURCE in the namespace.
creators() {
	cat "$cluster"/logs/audit*.log 2>/dev/null | python3 -c '
import json, sys
resource, ns = sys.argv[1], sys.argv[2]
users = set()
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        continue
    ref = e.get("objectRef", {})
    if (e.get("verb") == "create" and ref.get("resource") == resource
            and ref.get("namespace") == ns
            and e.get("responseStatus", {}).get("code") == 201):
        users.add(e.get("user", {}).get("username", ""))
print(" ".join(sorted(users)))' "$1" "$ns"
}
sa=system:serviceaccount:kube-system
check "the ReplicaSet is created by deployment-controller" \
    test "$(creators replicasets)" = "$sa:deployment-controller"
check "the pods by replicaset-controller and job-controller" \
    test "$(creators pods)" = "$sa:job-controller $sa:replicaset-controller"
check "the EndpointSlice by endpointslice-controller" \
    test "$(creators endpointslices)" = "$sa:endpointslice-controller"

kubectl delete namespace "$ns" --wait=false >/dev/null
namespace_gone() {
	! kubectl get namespace "$ns" >/dev/null 2>&1
}
check "the namespace controller empties and removes the namespace" \
    cluster_wait_until 120 "the namespace's deletion" namespace_gone
check "the apiserver refused sqlkcm nothing" sh -c "! grep -i forbidden '$work/all.log'"
check "sqlkcm is still running" kill -0 "$(cat "$(sqlkcm_pidfile all)")"
sqlkcm_stop all

tap_done
