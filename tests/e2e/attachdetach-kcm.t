#!/usr/bin/env bash
# attachdetach-kcm.t - kube-controller-manager 1.36's persistentvolume-attach-detach-
# controller and sqlkcm's end in the same states: attachdetach.t's scenario (a CSI volume
# of a pod on a managed kwok node attached under kube's name, reported in the node's
# volumesAttached once the test marks it attached, detached and unreported once the pod is
# gone) runs under each, every check of it passing under both, and the attachments, the
# node's volumesAttached (while attached and at the end) and the pods'
# SuccessfulAttachVolume and Multi-Attach events are compared, names without the run's
# prefix.
# e2e: locks attachdetach nodes
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-attachdetach-kcm.XXXXXX")
cleanup() {
	if [ "$tap_failed" = 0 ]; then
		rm -rf "$work"
	fi
}
trap cleanup EXIT

run_under_each attachdetach.t E2E_AD_CM E2E_AD_STATE
check "both wrote their end state" eval '[ -s "$work/kcm.state" ] && [ -s "$work/sqlkcm.state" ]'
check "sqlkcm ends in kube-controller-manager's state (attachments, volumesAttached, the pods' events)" \
    diff "$work/kcm.state" "$work/sqlkcm.state"
tap_done
