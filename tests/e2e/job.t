#!/usr/bin/env bash
# job.t - the Job controller: `kubectl create job` runs to Complete; a Job of 10
# completions at parallelism 3 creates exactly 10 pods and counts 10; an Indexed Job
# makes one pod per index, with its annotation, label, hostname and JOB_COMPLETION_INDEX,
# and completes with completedIndexes 0-2; a Job of parallelism 2 whose pods do not run
# holds 2; a failing Job reaches its backoffLimit and Fails (FailureTarget, then Failed,
# BackoffLimitExceeded), its failed pod replaced no sooner than kube's backoff; a
# Job past its activeDeadlineSeconds fails (DeadlineExceeded) and loses its pods; an
# Indexed Job's successPolicy met by index 0 completes it (SuccessPolicy); a
# podFailurePolicy ignores exit code 42 and fails the Job on exit code 5; an Indexed Job
# with backoffLimitPerIndex 1 replaces a failed pod after kube's backoff, with the
# failure count annotation, fails the index at its second failure and the Job once every
# index has finished (FailedIndexes); a
# suspended Job creates nothing until resumed, and loses its pods when suspended again;
# sqlkcm killed -9 while a Job's pods finish counts none twice and loses none; a Job
# managed by another controller is left alone; an orphan pod a Job's selector matches is
# adopted (controller reference and tracking finalizer), counted, and its success completes
# the Job; every finished pod loses its tracking finalizer.
#
# kwok's pod-complete stage makes a running Job pod Succeeded at once. The pods the test
# finishes itself are kept off every node (a nodeSelector no node has), so kwok never
# touches them, and the test writes their phase (kubectl patch --subresource=status).
# With E2E_JOB_CM=kcm the same runs against kube-controller-manager 1.36 (job-kcm.t).
# e2e: locks job
set -uo pipefail
. "$(dirname "$0")/lib.sh"
use_shared_cluster

cm=${E2E_JOB_CM:-sqlkcm}
work=$(mktemp -d "${TMPDIR:-/tmp}/sqlkcm-job.XXXXXX")
ns=job-$cm-$RANDOM
cleanup() {
	kcm_stop job
	e2e_cleanup "$ns"
	# The tracking finalizers of the pods left (held, or of a failed check): no Job
	# controller runs now to take them off, and they would keep the pods for good.
	kubectl get pods -n "$ns" -o name 2>/dev/null | while read -r p; do
		kubectl patch "$p" -n "$ns" --type=json \
		    -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
	done
}
trap cleanup EXIT

start_cm() {
	if [ "$cm" = kcm ]; then
		kcm_start job --controllers=job-controller
	else
		sqlkcm_start job --db "$work/cache.db" --controllers job -v 2
		cluster_wait_until 60 "sqlkcm's caches synced" \
		    grep -q "caches synced" "$work/job.log"
	fi
}
stop_cm() {
	if [ "$cm" = kcm ]; then kcm_stop job; else sqlkcm_stop job "${1:-TERM}"; fi
}

# held_job NAME COMPLETIONS PARALLELISM BACKOFF [SPEC-LINE [SPEC-LINE]]: a Job whose pods stay
# Pending, on no node (the test finishes them).
held_job() {
	kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1}
spec:
  completions: $2
  parallelism: $3
  backoffLimit: $4
  ${5:-}
  ${6:-}
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {example.com/no-such-node: "true"}
      containers: [{name: c, image: busybox}]
YAML
}
jstatus() { kubectl get job "$1" -n "$ns" -o jsonpath="{.status.$2}"; }
cond() {
	kubectl get job "$1" -n "$ns" \
	    -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status}{.status.conditions[?(@.type==\"$2\")].reason}"
}
pods_of() { kubectl get pods -n "$ns" -l "batch.kubernetes.io/job-name=$1" --no-headers \
    -o custom-columns=N:.metadata.name,P:.status.phase "${@:2}"; }
# finish_pods JOB PHASE N: N of the Job's Pending pods get PHASE.
finish_pods() {
	local p
	for p in $(pods_of "$1" | awk '$2 == "Pending" {print $1}' | head -n "$3"); do
		kubectl patch pod "$p" -n "$ns" --subresource=status --type=merge \
		    -p "{\"status\":{\"phase\":\"$2\"}}" >/dev/null
	done
}
no_tracking_finalizers() {
	! kubectl get pods -n "$ns" -o jsonpath='{range .items[*]}{.metadata.finalizers}{"\n"}{end}' |
	    grep -q job-tracking
}

kubectl create namespace "$ns" >/dev/null
start_cm

kubectl create job -n "$ns" once --image=busybox -- true >/dev/null
check "kubectl create job: the Job completes" \
    cluster_wait_until 60 "Complete" eval '[ "$(cond once Complete)" = TrueCompletionsReached ]'
check "with succeeded 1 and a completion time" \
    eval '[ "$(jstatus once succeeded)" = 1 ] && [ -n "$(jstatus once completionTime)" ]'
check "and SuccessCriteriaMet before it" eval '[ "$(cond once SuccessCriteriaMet)" = TrueCompletionsReached ]'

kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: ten}
spec:
  completions: 10
  parallelism: 3
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
YAML
check "10 completions at parallelism 3: the Job completes" \
    cluster_wait_until 90 "Complete" eval '[ "$(cond ten Complete)" = TrueCompletionsReached ]'
check "succeeded 10, failed none" \
    eval '[ "$(jstatus ten succeeded)" = 10 ] && [ -z "$(jstatus ten failed)" ]'
check "exactly 10 pods made, all Succeeded" \
    eval '[ "$(pods_of ten | grep -c Succeeded)" = 10 ] && [ "$(pods_of ten | wc -l)" = 10 ]'

kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: indexed}
spec:
  completions: 3
  parallelism: 2
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
YAML
check "an Indexed Job of 3 completes with completedIndexes 0-2 and succeeded 3" \
    cluster_wait_until 90 "Complete" eval '[ "$(cond indexed Complete)" = TrueCompletionsReached ] &&
     [ "$(jstatus indexed completedIndexes)" = 0-2 ] && [ "$(jstatus indexed succeeded)" = 3 ]'
check "one pod per index, each with its index, hostname and JOB_COMPLETION_INDEX" eval '
    kubectl get pods -n '"$ns"' -l batch.kubernetes.io/job-name=indexed -o json | python3 -c "
import json, sys
pods = json.load(sys.stdin)[\"items\"]
ix = sorted(int(p[\"metadata\"][\"annotations\"][\"batch.kubernetes.io/job-completion-index\"]) for p in pods)
assert ix == [0, 1, 2], ix
for p in pods:
    i = p[\"metadata\"][\"annotations\"][\"batch.kubernetes.io/job-completion-index\"]
    assert p[\"metadata\"][\"labels\"][\"batch.kubernetes.io/job-completion-index\"] == i
    assert p[\"spec\"][\"hostname\"] == \"indexed-\" + i, p[\"spec\"]
    assert p[\"metadata\"][\"name\"].startswith(\"indexed-\" + i + \"-\")
    assert any(e[\"name\"] == \"JOB_COMPLETION_INDEX\" for e in p[\"spec\"][\"containers\"][0][\"env\"])"'

# Parallelism held: pods that never run.
held_job held 5 2 6
check "a Job of parallelism 2 whose pods do not run has 2 active" \
    cluster_wait_until 60 "2 active" eval '[ "$(jstatus held active)" = 2 ] &&
     [ "$(pods_of held | wc -l)" = 2 ]'
check "its pods carry kube's labels and the tracking finalizer" eval '
    p=$(pods_of held | awk "{print \$1; exit}");
    kubectl get pod "$p" -n '"$ns"' -o json | python3 -c "
import json, sys
p = json.load(sys.stdin); m = p[\"metadata\"]; l = m[\"labels\"]
assert l[\"batch.kubernetes.io/job-name\"] == \"held\" and l[\"job-name\"] == \"held\", l
assert l[\"batch.kubernetes.io/controller-uid\"] == l[\"controller-uid\"], l
assert \"batch.kubernetes.io/job-tracking\" in m[\"finalizers\"], m
assert m[\"ownerReferences\"][0][\"kind\"] == \"Job\" and m[\"ownerReferences\"][0][\"controller\"]"'

# A failing Job: backoffLimit 1, each failure replaced after kube's backoff (10 s, 20 s).
held_job failing 3 1 1
check "a failing Job's first pod" cluster_wait_until 60 "a pod" \
    eval '[ "$(pods_of failing | wc -l)" = 1 ]'
finish_pods failing Failed 1
check "a failed pod is counted and replaced" \
    cluster_wait_until 60 "the replacement" eval '[ "$(jstatus failing failed)" = 1 ] &&
     [ "$(pods_of failing | grep -c Pending)" = 1 ]'
# kube measures its backoff from the failed pod's finish time, which for a pod that never
# ran is its creation: the replacement comes no sooner than 10 s after it.
check "not before kube's 10 s backoff after the failure" eval '
    kubectl get pods -n '"$ns"' -l batch.kubernetes.io/job-name=failing -o json | python3 -c "
import json, sys
from datetime import datetime
t = sorted(datetime.strptime(p[\"metadata\"][\"creationTimestamp\"], \"%Y-%m-%dT%H:%M:%SZ\")
           for p in json.load(sys.stdin)[\"items\"])
assert len(t) == 2 and (t[1] - t[0]).total_seconds() >= 10, t"'
finish_pods failing Failed 1
check "past backoffLimit 1 the Job fails: Failed, BackoffLimitExceeded" \
    cluster_wait_until 60 "Failed" eval '[ "$(cond failing Failed)" = TrueBackoffLimitExceeded ]'
check "after FailureTarget, with failed 2 and no completion time" \
    eval '[ "$(cond failing FailureTarget)" = TrueBackoffLimitExceeded ] &&
     [ "$(jstatus failing failed)" = 2 ] && [ -z "$(jstatus failing completionTime)" ]'

# activeDeadlineSeconds: a Job whose pods do not run fails after 5 s.
held_job deadline 2 2 6 "activeDeadlineSeconds: 5"
check "a Job past its activeDeadlineSeconds fails: Failed, DeadlineExceeded" \
    cluster_wait_until 60 "Failed" eval '[ "$(cond deadline Failed)" = TrueDeadlineExceeded ]'
check "its active pods deleted, none left active" \
    cluster_wait_until 30 "no pods" eval '[ "$(pods_of deadline | wc -l)" = 0 ] &&
     [ -z "$(jstatus deadline active)" ]'

# An Indexed Job's successPolicy: index 0 alone is enough.
held_job policysuccess 3 3 6 "completionMode: Indexed" \
    "successPolicy: {rules: [{succeededIndexes: '0'}]}"
check "an Indexed Job with a successPolicy has its 3 pods" cluster_wait_until 60 "3 pods" \
    eval '[ "$(pods_of policysuccess | grep -c Pending)" = 3 ]'
kubectl patch -n "$ns" --subresource=status --type=merge \
    -p '{"status":{"phase":"Succeeded"}}' "$(kubectl get pods -n "$ns" -o name \
    -l batch.kubernetes.io/job-name=policysuccess,batch.kubernetes.io/job-completion-index=0)" \
    >/dev/null
check "index 0 succeeding meets it: SuccessCriteriaMet (SuccessPolicy), then Complete" \
    cluster_wait_until 60 "Complete" eval '[ "$(cond policysuccess Complete)" = TrueSuccessPolicy ] &&
     [ "$(cond policysuccess SuccessCriteriaMet)" = TrueSuccessPolicy ]'
check "its other pods deleted, completedIndexes 0" \
    cluster_wait_until 30 "no pods left" eval '[ "$(pods_of policysuccess | grep -c Pending)" = 0 ] &&
     [ "$(jstatus policysuccess completedIndexes)" = 0 ]'

# A podFailurePolicy: exit code 42 ignored, 5 fails the Job.
held_job policy 2 1 6 "podFailurePolicy: {rules: [{action: Ignore, onExitCodes: {operator: In, values: [42]}}, {action: FailJob, onExitCodes: {containerName: c, operator: In, values: [5]}}]}"
# exit_pod JOB CODE: the Job's Pending pod fails with exit code CODE.
exit_pod() {
	local p now
	p=$(pods_of "$1" | awk '$2 == "Pending" {print $1; exit}')
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	kubectl patch pod "$p" -n "$ns" --subresource=status --type=merge -p '{"status":{
	    "phase":"Failed","containerStatuses":[{"name":"c","image":"busybox","imageID":"",
	    "ready":false,"restartCount":0,"state":{"terminated":{"exitCode":'"$2"',
	    "startedAt":"'"$now"'","finishedAt":"'"$now"'"}}}]}}' >/dev/null
	echo "$p"
}
check "the policy Job's first pod" cluster_wait_until 60 "a pod" \
    eval '[ "$(pods_of policy | grep -c Pending)" = 1 ]'
exit_pod policy 42 >/dev/null
check "a failure of exit code 42 (Ignore) is not counted, and the pod replaced" \
    cluster_wait_until 60 "the replacement" eval '[ "$(pods_of policy | grep -c Pending)" = 1 ] &&
     [ -z "$(jstatus policy failed)" ]'
failed_pod=$(exit_pod policy 5)
check "a failure of exit code 5 (FailJob) fails the Job: Failed, PodFailurePolicy" \
    cluster_wait_until 60 "Failed" eval '[ "$(cond policy Failed)" = TruePodFailurePolicy ]'
check "with kube's message, and that failure counted" eval '[ "$(kubectl get job policy -n '"$ns"' \
     -o jsonpath="{.status.conditions[?(@.type==\"Failed\")].message}")" = \
     "Container c for pod '"$ns/$failed_pod"' failed with exit code 5 matching FailJob rule at index 1" ] &&
     [ "$(jstatus policy failed)" = 1 ]'

# backoffLimitPerIndex 1: an index fails at its second failure, the others go on, and the
# Job fails once every index has finished (FailedIndexes).
held_job perindex 3 3 6 "completionMode: Indexed" "backoffLimitPerIndex: 1"
# index_pod JOB IX: the name of the Job's Pending pod of index IX.
index_pod() {
	kubectl get pods -n "$ns" -o jsonpath='{.items[?(@.status.phase=="Pending")].metadata.name}' \
	    -l "batch.kubernetes.io/job-name=$1,batch.kubernetes.io/job-completion-index=$2"
}
# fail_index JOB IX: the Job's Pending pod of index IX fails (exit code 1); prints when.
fail_index() {
	local p now
	p=$(index_pod "$1" "$2")
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	kubectl patch pod "$p" -n "$ns" --subresource=status --type=merge -p '{"status":{
	    "phase":"Failed","containerStatuses":[{"name":"c","image":"busybox","imageID":"",
	    "ready":false,"restartCount":0,"state":{"terminated":{"exitCode":1,
	    "startedAt":"'"$now"'","finishedAt":"'"$now"'"}}}]}}' >/dev/null
	date -u +%s
}
failure_count() {
	kubectl get pod "$1" -n "$ns" \
	    -o jsonpath='{.metadata.annotations.batch\.kubernetes\.io/job-index-failure-count}'
}
check "a Job with backoffLimitPerIndex has a pod per index, each with failure count 0" \
    cluster_wait_until 60 "3 pods" eval '[ "$(pods_of perindex | grep -c Pending)" = 3 ] &&
     for i in 0 1 2; do [ "$(failure_count "$(index_pod perindex $i)")" = 0 ] || exit 1; done'
failed_at=$(fail_index perindex 1)
check "index 1's failed pod is replaced, with failure count 1" \
    cluster_wait_until 60 "a new pod of index 1" eval '[ -n "$(index_pod perindex 1)" ] &&
     [ "$(failure_count "$(index_pod perindex 1)")" = 1 ]'
check "not before kube's 10 s backoff after the failure" eval '[ $(( $(date -u -d \
     "$(kubectl get pod "$(index_pod perindex 1)" -n '"$ns"' -o jsonpath={.metadata.creationTimestamp})" \
     +%s) - failed_at )) -ge 9 ]'
check "the failure is counted once replaced (failed 1), no index failed yet" \
    cluster_wait_until 30 "failed 1" eval '[ "$(jstatus perindex failed)" = 1 ] &&
     [ -z "$(jstatus perindex failedIndexes)" ]'
fail_index perindex 1 >/dev/null
check "a second failure fails index 1: failedIndexes 1, failed 2" \
    cluster_wait_until 30 "failedIndexes 1" eval '[ "$(jstatus perindex failedIndexes)" = 1 ] &&
     [ "$(jstatus perindex failed)" = 2 ]'
sleep 2
check "index 1 gets no new pod; the others still run" \
    eval '[ -z "$(index_pod perindex 1)" ] && [ "$(pods_of perindex | grep -c Pending)" = 2 ]'
finish_pods perindex Succeeded 2
check "every index finished, one failed: Failed (FailedIndexes), completedIndexes 0,2" \
    cluster_wait_until 60 "Failed" eval '[ "$(cond perindex Failed)" = TrueFailedIndexes ] &&
     [ "$(jstatus perindex completedIndexes)" = 0,2 ] &&
     [ "$(cond perindex FailureTarget)" = TrueFailedIndexes ]'

# Suspend and resume.
held_job paused 2 2 6 "suspend: true"
check "a suspended Job is Suspended (JobSuspended) and creates no pod" \
    cluster_wait_until 60 "Suspended" eval '[ "$(cond paused Suspended)" = TrueJobSuspended ] &&
     [ "$(pods_of paused | wc -l)" = 0 ]'
kubectl patch job paused -n "$ns" --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
check "resumed: Suspended False (JobResumed), its pods created, a start time" \
    cluster_wait_until 60 "resumed" eval '[ "$(cond paused Suspended)" = FalseJobResumed ] &&
     [ "$(pods_of paused | wc -l)" = 2 ] && [ -n "$(jstatus paused startTime)" ]'
kubectl patch job paused -n "$ns" --type=merge -p '{"spec":{"suspend":true}}' >/dev/null
check "suspended again: its active pods deleted" \
    cluster_wait_until 60 "no active pods" eval '[ "$(cond paused Suspended)" = TrueJobSuspended ] &&
     [ -z "$(jstatus paused active)" ] && [ "$(pods_of paused | wc -l)" = 0 ]'

# Killed while pods finish: 6 completions, 3 at a time.
held_job crash 6 3 6
check "the crash Job has 3 pods" cluster_wait_until 60 "3 pods" \
    eval '[ "$(pods_of crash | wc -l)" = 3 ]'
finish_pods crash Succeeded 3
sleep 0.3
stop_cm KILL
start_cm
check "after a kill -9 the next pods come" cluster_wait_until 60 "3 more pods" \
    eval '[ "$(pods_of crash | grep -c Pending)" = 3 ]'
finish_pods crash Succeeded 2
stop_cm KILL
start_cm
finish_pods crash Succeeded 1
check "the crash Job completes" \
    cluster_wait_until 90 "Complete" eval '[ "$(cond crash Complete)" = TrueCompletionsReached ]'
check "with succeeded 6: no pod counted twice or lost" \
    eval '[ "$(jstatus crash succeeded)" = 6 ] && [ "$(pods_of crash | grep -c Succeeded)" = 6 ]'

# An orphan pod the selector of a Job matches is adopted (kube's getPodsForJob): the Job
# becomes its controller, adds the tracking finalizer, counts it and creates no other.
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: stray, labels: {example.com/adopt: me}}
spec:
  restartPolicy: Never
  nodeSelector: {example.com/no-such-node: "true"}
  containers: [{name: c, image: busybox}]
YAML
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: adopter}
spec:
  manualSelector: true
  selector: {matchLabels: {example.com/adopt: me}}
  template:
    metadata: {labels: {example.com/adopt: me}}
    spec:
      restartPolicy: Never
      nodeSelector: {example.com/no-such-node: "true"}
      containers: [{name: c, image: busybox}]
YAML
check "an orphan pod its selector matches is adopted by the Job, with the tracking finalizer" \
    cluster_wait_until 60 "the adoption" eval '[ "$(kubectl get pod stray -n '"$ns"' -o \
     jsonpath="{.metadata.ownerReferences[?(@.controller==true)].name} {.metadata.finalizers}")" \
     = "adopter [\"batch.kubernetes.io/job-tracking\"]" ]'
check "and counted: active 1, no other pod created" \
    cluster_wait_until 30 "active 1" eval '[ "$(jstatus adopter active)" = 1 ] &&
     [ "$(kubectl get pods -n '"$ns"' -l example.com/adopt=me --no-headers | wc -l)" = 1 ]'
kubectl patch pod stray -n "$ns" --subresource=status --type=merge \
    -p '{"status":{"phase":"Succeeded"}}' >/dev/null
check "the adopted pod's success completes the Job" \
    cluster_wait_until 60 "Complete" eval '[ "$(cond adopter Complete)" = TrueCompletionsReached ] &&
     [ "$(jstatus adopter succeeded)" = 1 ]'

# Someone else's Job.
kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: elsewhere}
spec:
  managedBy: example.com/elsewhere
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
YAML
sleep 3
check "a Job managed by another controller gets no pod and no status" \
    eval '[ "$(pods_of elsewhere | wc -l)" = 0 ] && [ -z "$(jstatus elsewhere startTime)" ]'

check "no pod of a finished Job keeps the tracking finalizer" \
    cluster_wait_until 30 "finalizers removed" eval '! kubectl get pods -n '"$ns"' -o \
     jsonpath="{range .items[?(@.status.phase==\"Succeeded\")]}{.metadata.finalizers}{end}{range .items[?(@.status.phase==\"Failed\")]}{.metadata.finalizers}{end}" |
     grep -q job-tracking'
if [ "$cm" = sqlkcm ]; then
	check "no sync failed" eval '! grep -E "level=error|^E" "$work/job.log"'
fi
# For job-kcm.t: the end states.
if [ -n "${E2E_JOB_STATES:-}" ]; then
	for j in once ten indexed held failing deadline policysuccess policy perindex paused \
	    crash adopter elsewhere; do
		kubectl get job "$j" -n "$ns" -o json | python3 -c '
import json, sys
j = json.load(sys.stdin); s = j.get("status", {})
conds = sorted((c["type"], c["status"], c.get("reason", "")) for c in s.get("conditions", []))
print(j["metadata"]["name"], s.get("active", 0), s.get("succeeded", 0), s.get("failed", 0),
      s.get("ready"), s.get("terminating"), s.get("completedIndexes"),
      s.get("failedIndexes"), conds)'
	done >"$E2E_JOB_STATES"
fi
tap_done
