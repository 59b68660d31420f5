#!/usr/bin/env bash
# pvexpander-kcm.t - kube-controller-manager 1.36's persistentvolume-expander-controller and
# sqlkcm's end in the same states: pvexpander.t's scenario (claims on a CSI and on a
# migrated awsElasticBlockStore volume resized, one Bound and not resized, one Pending)
# runs under each, every check of it passing under both, and the claims (phase, sizes,
# resizer annotation) and their events (type, reason, message) are compared, names without
# the run's prefix.
# e2e: locks persistentvolume-expander persistentvolume-binder
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-pvexpander-kcm.XXXXXX")
cleanup() {
	if [ "$tap_failed" = 0 ]; then
		rm -rf "$work"
	fi
}
trap cleanup EXIT

run_under_each pvexpander.t E2E_EXP_CM E2E_EXP_STATE
check "both wrote their end state" eval '[ -s "$work/kcm.state" ] && [ -s "$work/sqlkcm.state" ]'
check "sqlkcm ends in kube-controller-manager's state (claims and their events)" \
    diff "$work/kcm.state" "$work/sqlkcm.state"

tap_done
