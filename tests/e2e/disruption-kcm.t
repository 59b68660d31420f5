#!/usr/bin/env bash
# disruption-kcm.t - kube-controller-manager 1.36's disruption-controller and sqlkcm's end
# in the same states: disruption.t's scenario (a budget's status over a Deployment, a
# kubectl drain under it, a second eviction refused, a percentage maxUnavailable scaled,
# a stale DisruptionTarget condition reset, a budget whose pod's controller is gone) runs
# under each (with their replicaset and deployment controllers), every check of it passing
# under both, and their end states (each budget's status and condition, the SyncFailed
# message, the pods left Ready, the reset condition) are compared.
# garbagecollector: its pod of a gone ReplicaSet must outlive the test, which a garbage
# collector running beside it (statefulset.t's) would not let it.
# e2e: locks disruption replicaset deployment nodes garbagecollector
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-disruption-kcm.XXXXXX")

# The scenario under each; its TAP lines are ours, renumbered.
run_under_each disruption.t E2E_PDB_CM E2E_PDB_STATE
check "sqlkcm ends in kube-controller-manager's state (budgets' status, pods, conditions)" \
    diff "$work/kcm.state" "$work/sqlkcm.state"
tap_done
