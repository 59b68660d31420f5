#!/usr/bin/env bash
# csrcleaner.t - the CSR cleaner: CertificateSigningRequests denied or failed more than an
# hour ago, issued and approved more than an hour ago, or whose certificate has expired, are
# deleted; one issued recently, one approved but not issued for less than 24 hours, and one
# pending for less than 24 hours stay.
#
# The conditions are written with their lastUpdateTime two hours back, as the approval and
# status subresources take them, and the certificates are self-signed ones of the test's
# (one that expired in 2020, one that expires in 2099).
#
# With E2E_CSR_CM=kcm the same runs against kube-controller-manager 1.36, by hand, not in
# tests/run-all: kube's cleaner looks at every CSR once as it starts, without waiting for
# its cache to sync, then an hour later. On an idle machine its first pass sees the CSRs
# and the run ends as sqlkcm's; under load (as in run-all) the pass comes before the cache
# and deletes nothing for an hour, at every start tried.
# e2e: locks csr
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_CSR_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-csrcleaner.XXXXXX")
prefix=csr-$cm-$RANDOM
cleanup() {
	kcm_stop csr
	kubectl delete csr -l "csr-test=$prefix" --wait=false >/dev/null 2>&1
	e2e_cleanup "$prefix"
}
trap cleanup EXIT

# The PEM of a certificate that expired on 2020-01-01, and of one that expires in 2099,
# base64 as status.certificate holds them.
EXPIRED=LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJPekNCNHFBREFnRUNBaFFRWkNFb2hzanFjamxoY3d2MnZYcDVxWXpoQ3pBS0JnZ3Foa2pPUFFRREFqQWUKTVJ3d0dnWURWUVFEREJOemNXeHJZMjB0ZEdWemRDMWxlSEJwY21Wa01CNFhEVEU1TURFd01UQXdNREF3TUZvWApEVEl3TURFd01UQXdNREF3TUZvd0hqRWNNQm9HQTFVRUF3d1RjM0ZzYTJOdExYUmxjM1F0Wlhod2FYSmxaREJaCk1CTUdCeXFHU000OUFnRUdDQ3FHU000OUF3RUhBMElBQkEwT3djMlBDanFtNDEwR0hWSWxxTGZGdmJhcUxUNTcKRUdDN09NYzBYWkZpcmFQT0x2MkFaRmtuSW1XVWxmVlgzNldTUVBtNFZITzkxSGlRRmw3MTJGd3dDZ1lJS29aSQp6ajBFQXdJRFNBQXdSUUloQUpJVFlkTithU3RkVzAzSDhlMTlHVGNteXRTOUJJM1dGMDJRYXBpaVIvTGJBaUJJCko5YjFvcmk0TXVNaUZwcWxuUitNdld5S2hRMkQvd01IQytlKzRBUUh4dz09Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K
UNEXPIRED=LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJRRENCNktBREFnRUNBaFE0bzRaR2M4NHROZkN0Um9tWk5ES1hXQXR6U2pBS0JnZ3Foa2pPUFFRREFqQWcKTVI0d0hBWURWUVFEREJWemNXeHJZMjB0ZEdWemRDMTFibVY0Y0dseVpXUXdJQmNOTWpBd01UQXhNREF3TURBdwpXaGdQTWpBNU9UQXhNREV3TURBd01EQmFNQ0F4SGpBY0JnTlZCQU1NRlhOeGJHdGpiUzEwWlhOMExYVnVaWGh3CmFYSmxaREJaTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSEEwSUFCSy9CMGUwOTh3MmxBVkZHVU5CbFFucW4KNWpJdjBQWXdJSG5Xck5BTE12dkkyUVZIU1NUZlg3UE95eFM2Mm5QOWxmdFNwZHB3OUVrRC9YODhVblJFYXk4dwpDZ1lJS29aSXpqMEVBd0lEUndBd1JBSWdWR2tCR05jUkhuZk9yOXE4UXVFeTRjTEdkZTZYTDVaV1B3RkNPalBFCnRUVUNJRUYrb2xoTEVIMXFZdlNhVEtPamE5T2Z0SEQ0NnRMTm11ZDdpWjduczlFUgotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==

openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$work/key.pem" -subj "/CN=$prefix" -out "$work/req.pem" 2>/dev/null
request=$(base64 -w0 <"$work/req.pem")
old=$(date -u -d '2 hours ago' +%FT%TZ)
now=$(date -u +%FT%TZ)

# csr NAME: a pending CSR of the test.
csr() {
	kubectl create -f - >/dev/null <<EOF
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: $prefix-$1, labels: {csr-test: $prefix}}
spec:
  request: $request
  signerName: example.com/sqlkcm-test
  usages: [client auth]
EOF
}
# put NAME SUBRESOURCE STATUS: writes STATUS (JSON) through the subresource.
put() {
	kubectl get csr "$prefix-$1" -o json |
	    python3 -c 'import json, sys; o = json.load(sys.stdin); o["status"] = json.loads(sys.argv[1]); print(json.dumps(o))' "$3" |
	    kubectl replace --raw "/apis/certificates.k8s.io/v1/certificatesigningrequests/$prefix-$1/$2" -f - >/dev/null
}
cond() {	# TYPE TIME
	printf '{"type":"%s","status":"True","reason":"Test","message":"by the test","lastUpdateTime":"%s"}' "$1" "$2"
}

for n in denied failed issued-old expired issued-new approved-unissued pending; do csr $n; done
put denied approval "{\"conditions\":[$(cond Denied "$old")]}"
put failed approval "{\"conditions\":[$(cond Approved "$old")]}"
put failed status "{\"conditions\":[$(cond Approved "$old"),$(cond Failed "$old")]}"
put issued-old approval "{\"conditions\":[$(cond Approved "$old")]}"
put issued-old status "{\"conditions\":[$(cond Approved "$old")],\"certificate\":\"$UNEXPIRED\"}"
put expired approval "{\"conditions\":[$(cond Approved "$now")]}"
put expired status "{\"conditions\":[$(cond Approved "$now")],\"certificate\":\"$EXPIRED\"}"
put issued-new approval "{\"conditions\":[$(cond Approved "$now")]}"
put issued-new status "{\"conditions\":[$(cond Approved "$now")],\"certificate\":\"$UNEXPIRED\"}"
put approved-unissued approval "{\"conditions\":[$(cond Approved "$old")]}"
check "the apiserver kept the conditions' times as written" \
	test "$(kubectl get csr "$prefix-denied" -o jsonpath='{.status.conditions[0].lastUpdateTime}')" = "$old"

gone() { ! kubectl get csr "$prefix-$1" >/dev/null 2>&1; }
if [ "$cm" = kcm ]; then
	# kube's cleaner reads its cache once as it starts, without waiting for the cache to
	# sync, then once an hour: a start whose cache was still empty deletes nothing for an
	# hour. It is started again (5 times at most) until its first pass has seen the CSRs.
	for try in 1 2 3 4 5; do
		kcm_start csr --controllers=csrcleaner
		cluster_wait_until 20 "kcm's first pass" gone denied 2>/dev/null && break
		echo "# kube-controller-manager's first pass saw no CSR (start $try): again"
		kcm_stop csr
	done
	check "kube-controller-manager started its CSR cleaner" kcm_synced "$work/csr.log"
else
	sqlkcm_start csr --db "$work/cache.db" --controllers csrcleaner -v 2
	check "sqlkcm's caches synced" \
	    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/csr.log"
fi

check "a CSR denied two hours ago is deleted" cluster_wait_until 60 "it to go" gone denied
check "a CSR failed two hours ago is deleted" cluster_wait_until 30 "it to go" gone failed
check "a CSR issued and approved two hours ago is deleted" \
	cluster_wait_until 30 "it to go" gone issued-old
check "a CSR whose certificate has expired is deleted" \
	cluster_wait_until 30 "it to go" gone expired
check "a CSR issued just now stays" eval '! gone issued-new'
check "a CSR approved two hours ago but not issued stays (24 h)" eval '! gone approved-unissued'
check "a pending CSR stays (24 h)" eval '! gone pending'

if [ "$cm" = kcm ]; then
	kcm_stop csr
else
	sqlkcm_stop csr
	check "sqlkcm stops with exit status 0" test $? = 0
fi

tap_done
