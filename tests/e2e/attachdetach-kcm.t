#!/usr/bin/env bash
# attachdetach-kcm.t - kube-controller-manager 1.36's persistentvolume-attach-detach-
# controller and sqlkcm's end in the same states: attachdetach.t's scenario (a CSI volume
# of a pod on a managed kwok node attached under kube's name, reported in the node's
# volumesAttached once the test marks it attached, the attacher's error reported on the
# pod, the volume still in use kept attached after the pod is gone until the node's
# out-of-service taint has it detached and unreported) runs under each, every check of it
# passing under both, and the attachments, the node's volumesAttached (while attached and
# at the end) and the pods' FailedAttachVolume (the attacher's error, Multi-Attach) and
# SuccessfulAttachVolume events are compared, names without the run's prefix. (The
# timeout force detach is sqlkcm's alone: kube's wait is six minutes, fixed.)
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
