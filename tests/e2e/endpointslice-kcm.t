#!/usr/bin/env bash
# endpointslice-kcm.t - kube-controller-manager 1.36's endpointslice-controller and
# endpoints-controller end in the states sqlkcm's endpointslice and endpoint do: the
# scenario of endpointslice.t (pods scaled up and down, one made not ready,
# publishNotReadyAddresses, a headless Service, 250 pods) runs once under each, with the
# same checks, and the end states of its four Services are compared: each slice's
# endpoints as a set (pod, ready, serving, terminating, port), the slices' sizes (but the
# 250 pods', whose spread depends on how many each sync saw), and each Endpoints' ready
# and not-ready addresses and ports. Slices are compared by content, not by their
# generated names.
# e2e: locks endpointslice endpoint
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-eps-kcm.XXXXXX")
trap 'if [ "$tap_failed" = 0 ]; then rm -rf "$work"; else echo "# kept $work"; fi' EXIT

# run CM: endpointslice.t under CM, its TAP lines as diagnostics; passes when it did.
run() {
	E2E_EPS_CM=$1 E2E_EPS_SUMMARY=$work/$1.txt bash "$(dirname "$0")/endpointslice.t" \
	    >"$work/$1.tap" 2>&1
	local status=$?
	sed 's/^/# '"$1"': /' "$work/$1.tap" | grep -v '^# [a-z]*: ok ' || true
	return $status
}

check "endpointslice.t's checks pass under sqlkcm" run sqlkcm
check "endpointslice.t's checks pass under kube-controller-manager" run kcm
check "the end states are the same (slices as sets of endpoints, Endpoints' subsets)" \
	eval '[ -s "$work/kcm.txt" ] && diff "$work/kcm.txt" "$work/sqlkcm.txt"'
tap_done
