#!/usr/bin/env bash
# job-kcm.t - kube-controller-manager 1.36's job-controller and sqlkcm's job end in the
# same states: job.t's scenario (a created Job, 10 completions at parallelism 3, an
# Indexed Job, pods held Pending, a failing Job past its backoffLimit, one past its
# activeDeadlineSeconds, a successPolicy, a podFailurePolicy, backoffLimitPerIndex,
# suspend and resume, kill -9 mid-Job, a Job managed elsewhere) run once under each, its
# checks passing under each, and each Job's end status (active, succeeded, failed, ready,
# terminating, completedIndexes, failedIndexes, the conditions' types, statuses and
# reasons) the same.
# e2e: locks job
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-jobkcm.XXXXXX")
run_under_each job.t E2E_JOB_CM E2E_JOB_STATES
check "every Job ends in the same state under both" \
    diff -u "$work/kcm.state" "$work/sqlkcm.state"
if [ "$tap_failed" = 0 ]; then rm -rf "$work"; else echo "# output kept in $work"; fi
tap_done
