#!/usr/bin/env bash
# ttlafterfinished.t - the TTL-after-finished controller: a finished Job (Complete or
# Failed) with ttlSecondsAfterFinished is deleted, in the foreground, once that many
# seconds have passed since it finished, and not before; a finished Job with a TTL still to
# run, one without a TTL and one still running are left alone.
#
# No Job controller runs: the Jobs say spec.managedBy another controller, and the test
# writes their finished status itself (kubectl patch --subresource=status). The garbage
# collector runs beside it, so that the foreground deletion completes (the Job goes once
# its foregroundDeletion finalizer is taken off).
# e2e: locks ttl-after-finished garbagecollector
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-ttlaf.XXXXXX")
ns=ttlaf-$RANDOM
cleanup() {
	sqlkcm_stop ttlaf 2>/dev/null
	kubectl patch configmap failed-dependent -n "$ns" --type=merge \
	    -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
	e2e_cleanup "$ns"
}
trap cleanup EXIT

# job NAME TTL: a Job managed elsewhere, with ttlSecondsAfterFinished TTL ("" for none).
job() {
	kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
  managedBy: example.com/elsewhere
  ${2:+ttlSecondsAfterFinished: $2}
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
YAML
}
# finish NAME Complete|Failed: writes the Job's finished status, now.
finish() {
	local now
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	if [ "$2" = Complete ]; then
		kubectl patch job "$1" -n "$ns" --subresource=status --type=merge -p '{"status":{
		    "startTime":"'"$now"'","completionTime":"'"$now"'","succeeded":1,"conditions":[
		    {"type":"SuccessCriteriaMet","status":"True","lastTransitionTime":"'"$now"'"},
		    {"type":"Complete","status":"True","lastTransitionTime":"'"$now"'"}]}}' >/dev/null
	else
		kubectl patch job "$1" -n "$ns" --subresource=status --type=merge -p '{"status":{
		    "startTime":"'"$now"'","failed":1,"conditions":[
		    {"type":"FailureTarget","status":"True","lastTransitionTime":"'"$now"'"},
		    {"type":"Failed","status":"True","lastTransitionTime":"'"$now"'"}]}}' >/dev/null
	fi
}
exists() { kubectl get job "$1" -n "$ns" >/dev/null 2>&1; }
gone() { ! exists "$1"; }
# going NAME: the Job is gone or being deleted.
going() {
	gone "$1" || [ -n "$(kubectl get job "$1" -n "$ns" \
	    -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ]
}

kubectl create namespace "$ns" >/dev/null
sqlkcm_start ttlaf --db "$work/cache.db" --controllers ttl-after-finished,garbagecollector -v 2
check "sqlkcm's caches synced" \
    cluster_wait_until 60 "sqlkcm's caches synced" grep -q "caches synced" "$work/ttlaf.log"

job later 3600
job no-ttl ""
job running 0
job complete 8
job failed 0
# A dependent of "failed" that blocks its owner's foreground deletion, held by a finalizer
# of the test's own until the test lets it go.
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: failed-dependent
  finalizers: [example.com/hold]
  ownerReferences:
  - {apiVersion: batch/v1, kind: Job, name: failed, blockOwnerDeletion: true,
     uid: $(kubectl get job failed -n "$ns" -o jsonpath='{.metadata.uid}')}
YAML
finish later Complete
finish no-ttl Complete
finished_at=$(date +%s)
finish complete Complete
finish failed Failed

check "a Job failed with a TTL of 0 is deleted at once" \
    cluster_wait_until 30 "the deletion" going failed
check "in the foreground: it waits, with the foregroundDeletion finalizer, for its dependent" \
    eval '[ "$(kubectl get job failed -n "$ns" -o jsonpath="{.metadata.finalizers}")" = \
     "[\"foregroundDeletion\"]" ]'
kubectl patch configmap failed-dependent -n "$ns" --type=merge \
    -p '{"metadata":{"finalizers":null}}' >/dev/null
check "and goes once the dependent has" cluster_wait_until 30 "the Job gone" gone failed
check "a Job complete with a TTL of 8 s is there 4 s after it finished" \
    eval 'sleep $((finished_at + 4 - $(date +%s))) 2>/dev/null; ! going complete'
check "and goes once its TTL has passed" cluster_wait_until 40 "the Job gone" gone complete
elapsed=$(($(date +%s) - finished_at))
check "not before its 8 s (gone after ${elapsed} s)" test "$elapsed" -ge 7
check "a finished Job whose TTL has not passed stays" exists later
check "a finished Job without a TTL stays" exists no-ttl
check "a Job not finished stays, whatever its TTL" exists running
check "no request failed" eval '! grep -E "level=error|ERROR" "$work/ttlaf.log"'
tap_done
