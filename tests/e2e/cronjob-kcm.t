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
for cm in kcm sqlkcm; do
	E2E_CRONJOB_CM=$cm E2E_CRONJOB_STATES="$work/$cm.states" \
	    bash "$(dirname "$0")/cronjob.t" >"$work/$cm.tap" 2>&1
	check "under $cm, cronjob.t's checks pass" eval '! grep -q "^not ok" "$work/'"$cm"'.tap" &&
	    grep -q "^1\.\." "$work/'"$cm"'.tap" || { cat "$work/'"$cm"'.tap"; false; }'
done
check "every CronJob ends in the same state under both" \
    diff -u "$work/kcm.states" "$work/sqlkcm.states"
if [ "$tap_failed" = 0 ]; then rm -rf "$work"; else echo "# output kept in $work"; fi
tap_done
