#!/usr/bin/env bash
# cronjob-kcm.t - kube-controller-manager 1.36's cronjob-controller and sqlkcm's cronjob
# (each with its Job controller) end in the same states: cronjob.t's scenario (a */1
# CronJob's Jobs and history limit, Forbid, Replace, suspend) run once under each, its
# checks passing under each, and each CronJob's end (its Jobs, status.active,
# lastScheduleTime, whether lastSuccessfulTime is set, the reasons of its events), minutes
# counted from the first Job's, the same.
# e2e: locks cronjob job
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-cronjobkcm.XXXXXX")
run_under_each cronjob.t E2E_CRONJOB_CM E2E_CRONJOB_STATES
check "every CronJob ends in the same state under both" \
    diff -u "$work/kcm.state" "$work/sqlkcm.state"
if [ "$tap_failed" = 0 ]; then rm -rf "$work"; else echo "# output kept in $work"; fi
tap_done
