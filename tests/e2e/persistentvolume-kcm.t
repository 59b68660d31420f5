#!/usr/bin/env bash
# persistentvolume-kcm.t - kube-controller-manager 1.36's persistentvolume-binder-
# controller and sqlkcm's end in the same states: persistentvolume.t's scenario (static
# volumes bound by size and class, a claim naming its volume, a pre-bound volume, a class
# whose provisioner the test plays, a WaitForFirstConsumer claim bound once its pod is
# scheduled, claims deleted leaving Retain and Delete volumes Released, Recycle volumes
# recycled by kube's recycler pod, the test playing its outcome) runs under each, every
# check of it passing under both, and the end states of the claims (phase, volume,
# annotations, capacity) and volumes (phase, claimRef, bound-by-controller, policy,
# message, finalizers), the recycler pod's shape (image, command, volume, deadline) and
# the volumes' VolumeRecycled and VolumeFailedRecycle events are compared, names without
# the run's prefix.
# e2e: locks persistentvolume-binder nodes
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-persistentvolume-kcm.XXXXXX")
cleanup() {
	if [ "$tap_failed" = 0 ]; then
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# The scenario under each; its TAP lines are ours, renumbered.
run_under_each persistentvolume.t E2E_PV_CM E2E_PV_STATE
check "both wrote their end state" eval '[ -s "$work/kcm.state" ] && [ -s "$work/sqlkcm.state" ]'
check "sqlkcm ends in kube-controller-manager's state (claims and volumes)" \
    diff "$work/kcm.state" "$work/sqlkcm.state"

tap_done
