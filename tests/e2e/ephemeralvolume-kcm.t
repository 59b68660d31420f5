#!/usr/bin/env bash
# ephemeralvolume-kcm.t - kube-controller-manager 1.36's ephemeral-volume-controller and
# sqlkcm's ephemeral-volume end in the same states: ephemeralvolume.t's scenario (a claim
# made from the template with the pod as controller, kube's FailedBinding for a claim the
# pod does not own, a deleted claim made again, none for a pod being deleted) run once
# under each, its checks passing under each, and the claims (owners, labels, annotation,
# spec) and the pods' events (type, reason, source, message) the same.
# e2e: locks ephemeral-volume
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-ephkcm.XXXXXX")
run_under_each ephemeralvolume.t E2E_EPH_CM E2E_EPH_STATE
check "the claims and the pods' events end the same under both" \
    diff -u "$work/kcm.state" "$work/sqlkcm.state"
if [ "$tap_failed" = 0 ]; then rm -rf "$work"; else echo "# output kept in $work"; fi
tap_done
