#!/usr/bin/env bash
# endpointslicemirroring-kcm.t - kube-controller-manager 1.36's mirroring controller ends
# in the states sqlkcm's endpointslicemirroring does: the scenario of
# endpointslicemirroring.t runs once under each, with the same checks, and the mirrored
# slices of the dual-stack-shaped Endpoints (before the Service gets a selector) are
# compared as sets of endpoints (address type, address, ready, ports), not by name.
# e2e: locks endpointslicemirroring endpoint
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-esm-kcm.XXXXXX")
trap 'if [ "$tap_failed" = 0 ]; then rm -rf "$work"; else echo "# kept $work"; fi' EXIT

# run CM: endpointslicemirroring.t under CM, its failures as diagnostics.
run() {
	E2E_ESM_CM=$1 E2E_ESM_SUMMARY=$work/$1.txt \
	    bash "$(dirname "$0")/endpointslicemirroring.t" >"$work/$1.tap" 2>&1
	local status=$?
	sed 's/^/# '"$1"': /' "$work/$1.tap" | grep -v '^# [a-z]*: ok ' || true
	return $status
}

check "endpointslicemirroring.t's checks pass under sqlkcm" run sqlkcm
check "endpointslicemirroring.t's checks pass under kube-controller-manager" run kcm
check "the mirrored slices are the same" \
	eval '[ -s "$work/kcm.txt" ] && diff "$work/kcm.txt" "$work/sqlkcm.txt"'
tap_done
