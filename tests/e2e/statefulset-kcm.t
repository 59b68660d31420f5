#!/usr/bin/env bash
# statefulset-kcm.t - kube-controller-manager 1.36's statefulset-controller and sqlkcm's end
# in the same states: statefulset.t's scenario (ordered creation and scale-down, a rolling
# update with a partition then without, an undo, claims with whenScaled Delete) runs under
# each (with each one's garbage collector), every check of it passing under both, and their
# end states are compared: the statuses, the revisions by number, each pod's revision,
# host name, subdomain and index, each claim's state, owners and labels.
#
# Revision names differ between the two: kube hashes its Go encoding of the StatefulSet,
# which sqlkcm cannot reproduce (see src/history.h); that is why the states name revisions
# by their numbers.
# e2e: locks statefulset garbagecollector
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-statefulset-kcm.XXXXXX")
for cm in kcm sqlkcm; do
	out=$(E2E_STS_CM=$cm E2E_STS_STATE="$work/$cm.state" bash "$(dirname "$0")/statefulset.t" 2>&1)
	while IFS= read -r line; do
		case $line in
		"ok "*) pass "$cm: ${line#ok * - }" ;;
		"not ok "*) fail "$cm: ${line#not ok * - }" ;;
		"#"*) echo "$line" ;;
		esac
	done <<<"$out"
done
check "sqlkcm ends in kube-controller-manager's state (statuses, revisions, pods, claims)" \
    diff "$work/kcm.state" "$work/sqlkcm.state"
tap_done
