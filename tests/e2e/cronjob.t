#!/usr/bin/env bash
# cronjob.t - the CronJob controller, with the Job controller beside it: a CronJob of
# "*/1 * * * *" gets, at the next minute, the Job kube names <cronjob>-<minutes since the
# epoch>, with the batch.kubernetes.io/cronjob-scheduled-timestamp annotation (RFC 3339,
# UTC) and the CronJob as its controller; lastScheduleTime is that minute; once kwok has
# completed the Job's pod, lastSuccessfulTime is set and active is empty; a minute later
# the second Job comes and, at successfulJobsHistoryLimit 1, the first is deleted. Beside
# it, with pods that never run (a nodeSelector no node has): under Forbid the second
# minute creates nothing (JobAlreadyActive); under Replace the first Job is deleted
# (SuccessfulDelete) and the second is the only one active; a suspended CronJob creates
# nothing. The whole takes two to three minutes: it waits for minute boundaries.
# With E2E_CRONJOB_CM=kcm the same runs against kube-controller-manager 1.36; with
# E2E_CRONJOB_STATES=FILE the CronJobs' end states go to FILE (cronjob-kcm.t).
# e2e: locks cronjob job
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_CRONJOB_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-cronjob.XXXXXX")
ns=cronjob-$cm-$RANDOM
cleanup() {
	kcm_stop cronjob
	kubectl delete cronjobs -n "$ns" --all --wait=false >/dev/null 2>&1
	e2e_cleanup "$ns"
	kubectl get pods -n "$ns" -o name 2>/dev/null | while read -r p; do
		kubectl patch "$p" -n "$ns" --type=json \
		    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
	done
}
trap cleanup EXIT

# cronjob NAME POLICY SUSPEND HELD: a CronJob every minute; HELD=1: its pods run nowhere.
cronjob() {
	local sel=""
	[ "$4" = 1 ] && sel='nodeSelector: {example.com/no-such-node: "true"}'
	kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: CronJob
metadata: {name: $1}
spec:
  schedule: "*/1 * * * *"
  concurrencyPolicy: $2
  suspend: $3
  successfulJobsHistoryLimit: 1
  jobTemplate:
    metadata: {labels: {cron: $1}}
    spec:
      template:
        spec:
          restartPolicy: Never
          $sel
          containers: [{name: c, image: busybox}]
YAML
}
jobs_of() { kubectl get jobs -n "$ns" -l "cron=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort; }
cjstatus() { kubectl get cronjob "$1" -n "$ns" -o jsonpath="{.status.$2}"; }
event_seen() {
	kubectl get events -n "$ns" --field-selector "involvedObject.name=$1,reason=$2" \
	    -o name | grep -q .
}

kubectl create namespace "$ns" >/dev/null
if [ "$cm" = kcm ]; then
	kcm_start cronjob --controllers=cronjob-controller,job-controller
else
	sqlkcm_start cronjob --db "$work/cache.db" --controllers cronjob,job -v 2
	cluster_wait_until 60 "sqlkcm's caches synced" \
	    grep -q "caches synced" "$work/cronjob.log"
fi

# Just after a minute boundary: every CronJob sees the same next two, and the checks end
# well before the third (the end states below are taken before it).
while [ "$(date -u +%S)" -lt 2 ] || [ "$(date -u +%S)" -gt 10 ]; do sleep 1; done
cronjob every Allow false 0
cronjob forbid Forbid false 1
cronjob replace Replace false 1
cronjob suspended Allow true 0

check "a CronJob of */1 gets its first Job within 70 s" \
    cluster_wait_until 70 "the Job" eval '[ -n "$(jobs_of every)" ]'
first=$(jobs_of every | head -n 1)
minutes=${first#every-}
check "named kube's way: <cronjob>-<minutes since the epoch>, a minute not in the future" \
    eval '[[ "$minutes" =~ ^[0-9]+$ ]] && [ $((minutes * 60)) -le "$(date +%s)" ]'
want=$(date -u -d "@$((minutes * 60))" +%Y-%m-%dT%H:%M:%SZ)
check "its cronjob-scheduled-timestamp annotation is that minute ($want)" \
    eval '[ "$(kubectl get job '"$first"' -n '"$ns"' -o jsonpath="{.metadata.annotations.batch\.kubernetes\.io/cronjob-scheduled-timestamp}")" = "$want" ]'
check "its controller is the CronJob" \
    eval '[ "$(kubectl get job '"$first"' -n '"$ns"' -o jsonpath="{.metadata.ownerReferences[?(@.controller==true)].uid}")" = "$(kubectl get cronjob every -n '"$ns"' -o jsonpath="{.metadata.uid}")" ]'
check "lastScheduleTime is that minute" \
    cluster_wait_until 20 "lastScheduleTime" eval '[ "$(cjstatus every lastScheduleTime)" = "$want" ]'
check "once its Job completes: lastSuccessfulTime set, nothing active, SawCompletedJob" \
    cluster_wait_until 60 "lastSuccessfulTime" eval '[ -n "$(cjstatus every lastSuccessfulTime)" ] &&
     [ -z "$(cjstatus every active)" ] && event_seen every SawCompletedJob'
check "Forbid and Replace got their first Job too, listed active" \
    cluster_wait_until 20 "active" eval '[ "$(jobs_of forbid | wc -l)" = 1 ] &&
     [ "$(jobs_of replace | wc -l)" = 1 ] &&
     [ "$(cjstatus forbid active[0].name)" = "$(jobs_of forbid)" ] &&
     [ "$(cjstatus replace active[0].name)" = "$(jobs_of replace)" ]'
rfirst=$(jobs_of replace)

second=every-$((minutes + 1))
check "the next minute brings $second" \
    cluster_wait_until 75 "the second Job" eval '[ -n "$(kubectl get job '"$second"' -n '"$ns"' -o name 2>/dev/null)" ]'
check "and, at successfulJobsHistoryLimit 1, the first Job is deleted once the second completes" \
    cluster_wait_until 60 "one Job" eval '[ "$(jobs_of every)" = "$second" ]'
check "Replace: the first Job deleted (SuccessfulDelete), the new one the only active" \
    cluster_wait_until 30 "replaced" eval '[ "$(jobs_of replace)" = replace-$((minutes + 1)) ] &&
     [ "$(cjstatus replace active[*].name)" = replace-$((minutes + 1)) ] &&
     event_seen replace SuccessfulDelete'
check "Forbid: no second Job while the first runs (JobAlreadyActive)" \
    cluster_wait_until 30 "JobAlreadyActive" eval 'event_seen forbid JobAlreadyActive &&
     [ "$(jobs_of forbid)" = forbid-$minutes ]'
check "a suspended CronJob created no Job" eval '[ -z "$(jobs_of suspended)" ] &&
     [ -z "$(cjstatus suspended lastScheduleTime)" ]'
# The end states, minutes made relative to the first Job's (cronjob-kcm.t compares them).
if [ -n "${E2E_CRONJOB_STATES:-}" ]; then
	norm() { sed -e "s/-$((minutes + 1))\b/-M+1/g" -e "s/-$minutes\b/-M/g"; }
	for c in every forbid replace suspended; do
		last=$(cjstatus "$c" lastScheduleTime)
		[ -n "$last" ] && last=M+$(( $(date -u -d "$last" +%s) / 60 - minutes ))
		echo "$c jobs=$(jobs_of "$c" | norm | tr '\n' ' ')" \
		    "active=$(cjstatus "$c" 'active[*].name' | norm)" "lastScheduleTime=$last" \
		    "lastSuccessfulTime=$([ -n "$(cjstatus "$c" lastSuccessfulTime)" ] && echo set)" \
		    "events=$(kubectl get events -n "$ns" --field-selector "involvedObject.name=$c" \
		        -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}' | sort -u | tr '\n' ' ')"
	done >"$E2E_CRONJOB_STATES"
fi
if [ "$cm" != kcm ]; then
	# (a status update refused for a conflict is logged as information and retried)
	# (other tests' CronJobs may run beside: only this namespace's lines count)
	check "no error in sqlkcm's log" eval '! grep -E "^[EF][0-9]{4} " "$work/cronjob.log" | grep -q " $ns/"'
fi

tap_done
