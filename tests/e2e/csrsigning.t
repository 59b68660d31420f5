#!/usr/bin/env bash
# csrsigning.t - the CSR signer, with the cluster's own CA (contrib/cluster/up's pki/ca.crt
# and ca.key) as --cluster-signing-cert-file and --cluster-signing-key-file:
# - a kubelet's client CSR (CN=system:node:NAME, O=system:nodes, an EC P-256 key, digital
#   signature and client auth, signer kube-apiserver-client-kubelet), approved with
#   kubectl, gets a certificate openssl verifies against the CA, with that subject and
#   those usages, CA:FALSE;
# - a kube-apiserver-client CSR asking for 600 s gets a certificate of 10 minutes, with
#   its start backdated 5 minutes, as kube's;
# - kubelet-serving CSRs that break its rules (a CN not system:node:, client usages) end
#   Failed, reason SignerValidationFailure, with kube's messages;
# - an approved CSR of a signer kube does not run, and a pending one, stay without a
#   certificate.
#
# With E2E_CSR_CM=kcm (csrsigning-kcm.t) the same runs against kube-controller-manager 1.36
# (--controllers=csrsigning and the same files): kube's signer is event-driven, so the
# states are the same. That run then has one request signed by kube's and by sqlkcm's
# signer, and compares the two certificates.
# e2e: locks csr
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_CSR_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-csrsigning.XXXXXX")
prefix=sig-$cm-$RANDOM
ca=$cluster/pki/ca.crt
cleanup() {
	kcm_stop sig
	kubectl delete csr -l "csr-test=$prefix" --wait=false >/dev/null 2>&1
	e2e_cleanup "$prefix"
}
trap cleanup EXIT

# request NAME SUBJECT [SANS]: an EC P-256 key and a request for it, base64 as
# spec.request holds it.
request() {
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	    -keyout "$work/$1.key" -subj "$2" ${3:+-addext "subjectAltName=$3"} \
	    -out "$work/$1.csr" 2>/dev/null
	base64 -w0 <"$work/$1.csr"
}
# csr NAME SIGNER USAGES REQUEST [EXTRA]: creates the CSR $prefix-NAME.
csr() {
	kubectl create -f - >/dev/null <<EOF
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: $prefix-$1, labels: {csr-test: $prefix}}
spec:
  request: $4
  signerName: $2
  usages: $3
${5:-}
EOF
}
# issued NAME: the CSR has a certificate; it is written to $work/NAME.crt.
issued() {
	local b64
	b64=$(kubectl get csr "$prefix-$1" -o jsonpath='{.status.certificate}') &&
	    [ -n "$b64" ] && printf '%s' "$b64" | base64 -d >"$work/$1.crt"
}
# failed NAME: the CSR has the Failed condition.
failed() {
	[ "$(kubectl get csr "$prefix-$1" \
	    -o jsonpath='{.status.conditions[?(@.type=="Failed")].status}')" = True ]
}
failed_field() {	# NAME FIELD
	kubectl get csr "$prefix-$1" -o jsonpath="{.status.conditions[?(@.type==\"Failed\")].$2}"
}
text() { openssl x509 -in "$work/$1.crt" -noout -text; }
seconds() { date -u -d "$(openssl x509 -in "$work/$1.crt" -noout "-$2" | cut -d= -f2)" +%s; }

csr kubelet kubernetes.io/kube-apiserver-client-kubelet '[digital signature, client auth]' \
    "$(request kubelet "/O=system:nodes/CN=system:node:$prefix-node")"
csr client kubernetes.io/kube-apiserver-client '[client auth, digital signature]' \
    "$(request client "/O=team/CN=$prefix-user")" '  expirationSeconds: 600'
csr serving-cn kubernetes.io/kubelet-serving '[digital signature, server auth]' \
    "$(request serving-cn "/O=system:nodes/CN=$prefix-node" "DNS:$prefix-node")"
csr serving-usages kubernetes.io/kubelet-serving '[digital signature, client auth]' \
    "$(request serving-usages "/O=system:nodes/CN=system:node:$prefix-node" \
    "DNS:$prefix-node,IP:10.1.2.3")"
csr other example.com/sqlkcm-test '[client auth]' "$(request other "/CN=$prefix-other")"
csr pending kubernetes.io/kube-apiserver-client '[client auth]' \
    "$(request pending "/CN=$prefix-pending")"

if [ "$cm" = kcm ]; then
	kcm_start sig --controllers=csrsigning --cluster-signing-cert-file="$ca" \
	    --cluster-signing-key-file="$cluster/pki/ca.key"
	check "kube-controller-manager started its CSR signers" kcm_synced "$work/sig.log"
else
	sqlkcm_start sig --db "$work/cache.db" --controllers csrsigning \
	    --cluster-signing-cert-file "$ca" --cluster-signing-key-file "$cluster/pki/ca.key"
	check "sqlkcm's caches synced" \
	    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/sig.log"
	check "sqlkcm started the four signers" grep -q "4 signers started" "$work/sig.log"
fi
check "nothing is signed before it is approved" eval '! issued kubelet && ! issued client'

for n in kubelet client serving-cn serving-usages other; do
	kubectl certificate approve "$prefix-$n" >/dev/null
done
start=$(date +%s)

check "the kubelet's client CSR gets a certificate" \
    cluster_wait_until 30 "its certificate" issued kubelet
check "openssl verifies it against the cluster CA" \
    openssl verify -CAfile "$ca" "$work/kubelet.crt"
check "its subject is the request's" eval \
    "openssl x509 -in '$work/kubelet.crt' -noout -subject -nameopt RFC2253 |
     grep -qx 'subject=CN=system:node:$prefix-node,O=system:nodes'"
check "its usages are the CSR's: digital signature, client auth" eval \
    "text kubelet | grep -A1 'X509v3 Key Usage: critical' | grep -qx ' *Digital Signature' &&
     text kubelet | grep -A1 'X509v3 Extended Key Usage' | grep -qx ' *TLS Web Client Authentication'"
check "it is no CA, and names the CA's key" eval \
    "text kubelet | grep -q 'CA:FALSE' && text kubelet | grep -q 'Authority Key Identifier'"
check "its key is the request's" eval \
    "[ \"\$(openssl x509 -in '$work/kubelet.crt' -noout -pubkey)\" = \
       \"\$(openssl pkey -in '$work/kubelet.key' -pubout)\" ]"
check "it is valid for a year from 5 minutes ago (the default duration)" eval \
    "[ \$((\$(seconds kubelet enddate) - \$(seconds kubelet startdate))) = \$((8760 * 3600)) ] &&
     [ \$((start - \$(seconds kubelet startdate))) -ge 240 ] &&
     [ \$((start - \$(seconds kubelet startdate))) -le 420 ]"

check "the client CSR asking for 600 s gets a certificate" \
    cluster_wait_until 30 "its certificate" issued client
check "openssl verifies it too" openssl verify -CAfile "$ca" "$work/client.crt"
check "it lasts 10 minutes from now, its start backdated 5 minutes" eval \
    "[ \$((\$(seconds client enddate) - \$(seconds client startdate))) = 900 ] &&
     [ \$((\$(seconds client enddate) - start)) -ge 540 ] &&
     [ \$((\$(seconds client enddate) - start)) -le 660 ]"

check "a kubelet-serving CSR whose CN is not system:node: fails" \
    cluster_wait_until 30 "the Failed condition" failed serving-cn
check "with reason SignerValidationFailure and kube's message" eval \
    "[ \"\$(failed_field serving-cn reason)\" = SignerValidationFailure ] &&
     [ \"\$(failed_field serving-cn message)\" = 'subject common name does not begin with system:node:' ]"
check "a kubelet-serving CSR with client usages fails" \
    cluster_wait_until 30 "the Failed condition" failed serving-usages
check "with kube's message" eval \
    "[ \"\$(failed_field serving-usages message)\" = 'usages did not match [digital signature key encipherment server auth]' ]"
check "the failed ones have no certificate" eval '! issued serving-cn && ! issued serving-usages'

sleep 3
check "an approved CSR of a signer kube does not run stays without certificate" \
    eval '! issued other && ! failed other'
check "a pending CSR stays without certificate" eval '! issued pending && ! failed pending'

if [ "$cm" = kcm ]; then
	# One request (a subject of many attributes, every kind of name) signed by each: the
	# certificates differ only in their serial, dates and signature; their structure, string
	# types and extensions are the same, byte for byte.
	twin=$(request twin "/C=DE/L=Town/O=system:nodes/O=b&c/OU=u*/CN=system:node:$prefix/DC=x" \
	    "DNS:$prefix-twin,IP:10.0.0.9,IP:::1,email:a@b.c,URI:spiffe://x/y")
	for n in twin-kcm twin-sqlkcm; do
		csr $n kubernetes.io/kube-apiserver-client \
		    '[key encipherment, client auth, digital signature]' "$twin" \
		    '  expirationSeconds: 3600'
	done
	kubectl certificate approve "$prefix-twin-kcm" >/dev/null
	check "kube-controller-manager signs the twin request" \
	    cluster_wait_until 30 "its certificate" issued twin-kcm
	kcm_stop sig
	sqlkcm_start twin --db "$work/twin.db" --controllers csrsigning \
	    --cluster-signing-cert-file "$ca" --cluster-signing-key-file "$cluster/pki/ca.key"
	kubectl certificate approve "$prefix-twin-sqlkcm" >/dev/null
	check "sqlkcm signs the same request" \
	    cluster_wait_until 60 "its certificate" issued twin-sqlkcm
	# shape NAME: the certificate's DER as openssl parses it, without offsets and lengths,
	# serial, dates and signature.
	shape() {
		openssl asn1parse -in "$work/$1.crt" |
		    sed -E 's/^ *[0-9]+:d= *([0-9]+) +hl= *[0-9]+ +l= *[0-9]+/d=\1/;
		        s/(INTEGER|UTCTIME|GENERALIZEDTIME) *:.*/\1/'
	}
	check "kube's and sqlkcm's certificates differ only in serial, dates and signature" \
	    eval 'diff <(shape twin-kcm) <(shape twin-sqlkcm) &&
	     shape twin-kcm | grep -q "OBJECT *:X509v3 Subject Alternative Name"' 
	# plain NAME: the certificate's text without those.
	plain() {
		text "$1" | sed -e '/Signature Value/,$d' -e '/Serial Number/{N;d}' \
		    -e '/Not Before/{N;d}'
	}
	check "and their text is the same but for those" diff <(plain twin-kcm) <(plain twin-sqlkcm)
	sqlkcm_stop twin
else
	check "the CA key is never in the log" eval "! grep -q 'PRIVATE KEY' '$work/sig.log'"
	sqlkcm_stop sig
	check "sqlkcm stops with exit status 0" test $? = 0
fi

tap_done
