/*
 * job.h - the Job controller (kube's job-controller): a Job's pods are created until
 * enough of them have succeeded, or the Job has failed; each finished pod is counted
 * once, through the batch.kubernetes.io/job-tracking finalizer and
 * status.uncountedTerminatedPods.
 */
#ifndef SQLKCM_CONTROLLERS_JOB_H
#define SQLKCM_CONTROLLERS_JOB_H

#include <cjson/cJSON.h>

#include "controller.h"

extern const struct controller_type job_controller_type;

/* kube's backoff before a Job creates pods again after failures: 10 s doubled for each
 * failure after the last success but the first, at most 10 min; the seconds left of it at
 * now after the last failure at last_failure (0: none). */
double job_backoff_remaining(int failures_after_last_success, double last_failure,
    double now);

/* kube's getCompletionIndex on the completion-index annotation's text: the index, or -1
 * when it is no whole number or negative. */
int job_completion_index(const char *text);

/* kube's parseInt32 of the job-index-failure-count and job-index-ignored-failure-count
 * annotations: a whole number in [0, 2^31-1], else 0. */
long long job_index_failure_count(const char *text);

/* kube's interval strings of indexes (status.completedIndexes, "1,3-5"): parse marks
 * done[i] for each index i < completions of text (what does not parse skipped); format
 * writes those of done (malloc'd; "" when none), two in a row as "1,2". */
void job_indexes_parse(const char *text, int completions, char *done);
char *job_indexes_format(const char *done, int completions);

/* What a failed pod's first matching rule of a podFailurePolicy says (kube's
 * matchPodFailurePolicy): nothing matched (counted), Ignore (not counted), Count,
 * FailIndex, or FailJob with *message (malloc'd) kube's words for it. */
enum job_failure_action {
	JOB_FAILURE_NONE,
	JOB_FAILURE_IGNORE,
	JOB_FAILURE_COUNT,
	JOB_FAILURE_FAIL_INDEX,
	JOB_FAILURE_FAIL_JOB,
};
enum job_failure_action job_match_pod_failure_policy(const cJSON *policy, const cJSON *pod,
    char **message);

/* kube's matchSuccessPolicy for an Indexed Job of completions whose done[i] indexes have
 * succeeded: 1 with *message (malloc'd, "Matched rules at index N") when a rule of policy
 * (a successPolicy; NULL: none) is met, else 0. */
int job_match_success_policy(const cJSON *policy, int completions, const char *done,
    char **message);

#endif
