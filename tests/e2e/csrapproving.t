#!/usr/bin/env bash
# csrapproving.t - the CSR approver, with the CSR signer beside it (the cluster's CA as
# --cluster-signing-cert-file and --cluster-signing-key-file), as kubelets' TLS bootstrap
# meets them:
# - a kubelet's client CSR (CN=system:node:NAME, O=system:nodes, an EC P-256 key, digital
#   signature and client auth) sent under a bootstrap identity (system:bootstrap:<id>, in
#   system:bootstrappers, whose group kubeadm binds to the nodeclient role) is approved,
#   AutoApproved with kube's message, then signed: openssl verifies the certificate
#   against the cluster CA, with the requested usages;
# - a node renewing its own (sent by system:node:NAME, in system:nodes, bound to the
#   selfnodeclient role) is approved with the self message;
# - the same request from a user with neither right stays pending (the reviews say no);
# - a request the recognizers do not take (server auth among the usages, or a CN that is
#   not system:node:) stays pending, whoever sends it.
# The requests are sent with the admin's impersonation of each identity, so that the
# apiserver writes spec.username and spec.groups as it would for them.
#
# With E2E_APPROVE_CM=kcm the same runs against kube-controller-manager 1.36
# (csrapproving-kcm.t, --controllers=csrapproving,csrsigning), which ends in the same states.
# e2e: locks csr
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_APPROVE_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-csrapproving.XXXXXX")
prefix=apr-$cm-$RANDOM
ca=$cluster/pki/ca.crt
cleanup() {
	kcm_stop apr
	kubectl delete csr -l "csr-test=$prefix" --wait=false >/dev/null 2>&1
	kubectl delete clusterrolebinding "$prefix-nodeclient" "$prefix-selfnodeclient" \
	    "$prefix-bootstrapper" "$prefix-nodes" "$prefix-nobodies" --wait=false >/dev/null 2>&1
	e2e_cleanup "$prefix"
}
trap cleanup EXIT

# What kubeadm binds: bootstrappers may create CSRs and have them approved as node
# clients, nodes may renew their own; and a group of the test's that may only create them.
kubectl create clusterrolebinding "$prefix-bootstrapper" \
    --clusterrole=system:node-bootstrapper --group=system:bootstrappers >/dev/null
kubectl create clusterrolebinding "$prefix-nodeclient" \
    --clusterrole=system:certificates.k8s.io:certificatesigningrequests:nodeclient \
    --group=system:bootstrappers >/dev/null
kubectl create clusterrolebinding "$prefix-nodes" \
    --clusterrole=system:node-bootstrapper --group="$prefix-nodes" >/dev/null
kubectl create clusterrolebinding "$prefix-nobodies" \
    --clusterrole=system:node-bootstrapper --group="$prefix-nobodies" >/dev/null
kubectl create clusterrolebinding "$prefix-selfnodeclient" \
    --clusterrole=system:certificates.k8s.io:certificatesigningrequests:selfnodeclient \
    --group="$prefix-nodes" >/dev/null

# request NAME SUBJECT: an EC P-256 key and a request for it, base64 as spec.request.
request() {
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	    -keyout "$work/$1.key" -subj "$2" -out "$work/$1.csr" 2>/dev/null
	base64 -w0 <"$work/$1.csr"
}
# csr NAME USAGES REQUEST AS GROUP...: the kubelet client CSR $prefix-NAME, sent as user
# AS in the GROUPs.
csr() {
	local name=$1 usages=$2 req=$3 as=$4 g groups=()
	shift 4
	for g in "$@"; do groups+=(--as-group="$g"); done
	kubectl create --as="$as" "${groups[@]}" -f - >/dev/null <<EOF
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: $prefix-$name, labels: {csr-test: $prefix}}
spec:
  request: $req
  signerName: kubernetes.io/kube-apiserver-client-kubelet
  usages: $usages
EOF
}
field() {	# NAME TYPE FIELD: a field of the CSR's condition of TYPE
	kubectl get csr "$prefix-$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}"
}
approved() { [ "$(field "$1" Approved status)" = True ]; }
issued() {
	local b64
	b64=$(kubectl get csr "$prefix-$1" -o jsonpath='{.status.certificate}') &&
	    [ -n "$b64" ] && printf '%s' "$b64" | base64 -d >"$work/$1.crt"
}
# pending NAME: the CSR is there, without any condition.
pending() {
	local c
	c=$(kubectl get csr "$prefix-$1" -o jsonpath='{.status.conditions}') && [ -z "$c" ]
}

node=$prefix-node
csr boot '[digital signature, client auth]' \
    "$(request boot "/O=system:nodes/CN=system:node:$node")" \
    system:bootstrap:abcdef system:bootstrappers
csr self '[digital signature, client auth]' \
    "$(request self "/O=system:nodes/CN=system:node:$node")" \
    "system:node:$node" "$prefix-nodes"
csr nobody '[digital signature, client auth]' \
    "$(request nobody "/O=system:nodes/CN=system:node:$node")" \
    "$prefix-nobody" "$prefix-nobodies"
csr serving '[digital signature, client auth, server auth]' \
    "$(request serving "/O=system:nodes/CN=system:node:$node")" \
    system:bootstrap:abcdef system:bootstrappers
csr notnode '[digital signature, client auth]' \
    "$(request notnode "/O=system:nodes/CN=$node")" \
    system:bootstrap:abcdef system:bootstrappers
check "the apiserver wrote the requester into the CSR" \
    test "$(kubectl get csr "$prefix-boot" -o jsonpath='{.spec.username}')" = \
    system:bootstrap:abcdef

if [ "$cm" = kcm ]; then
	kcm_start apr --controllers=csrapproving,csrsigning --cluster-signing-cert-file="$ca" \
	    --cluster-signing-key-file="$cluster/pki/ca.key"
	check "kube-controller-manager started its CSR approver" kcm_synced "$work/apr.log"
else
	sqlkcm_start apr --db "$work/cache.db" --controllers csrapproving,csrsigning -v 2 \
	    --cluster-signing-cert-file "$ca" --cluster-signing-key-file "$cluster/pki/ca.key"
	check "sqlkcm's caches synced" \
	    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/apr.log"
fi

check "the bootstrap identity's kubelet client CSR is approved" \
    cluster_wait_until 30 "its approval" approved boot
check "AutoApproved, with kube's message" eval \
    "[ \"\$(field boot Approved reason)\" = AutoApproved ] &&
     [ \"\$(field boot Approved message)\" = 'Auto approving kubelet client certificate after SubjectAccessReview.' ]"
check "then signed" cluster_wait_until 30 "its certificate" issued boot
check "openssl verifies it against the cluster CA" openssl verify -CAfile "$ca" "$work/boot.crt"
check "with the requested usages: digital signature, client auth" eval \
    "openssl x509 -in '$work/boot.crt' -noout -text | grep -A1 'X509v3 Key Usage' |
     grep -qx ' *Digital Signature' &&
     openssl x509 -in '$work/boot.crt' -noout -text | grep -A1 'Extended Key Usage' |
     grep -qx ' *TLS Web Client Authentication'"
check "a node's own renewal is approved" cluster_wait_until 30 "its approval" approved self
check "with kube's self message" test "$(field self Approved message)" = \
    'Auto approving self kubelet client certificate after SubjectAccessReview.'
check "and signed" cluster_wait_until 30 "its certificate" issued self

# The ones left: given time (the first two were done in it), nothing comes.
sleep 3
check "a requester with neither right gets nothing: the CSR stays pending" pending nobody
check "a request with server auth is not a kubelet's client one: pending" pending serving
check "nor one whose CN is not system:node:" pending notnode

if [ "$cm" = sqlkcm ]; then
	check "the reviews that said no are logged" \
	    grep -q "review-nodeclient: not allowed" "$work/apr.log"
	sqlkcm_stop apr
	check "sqlkcm stops with exit status 0" test $? = 0
fi
tap_done
