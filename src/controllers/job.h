/*
 * job.h - the Job controller (kube's job-controller): a Job's pods are created until
 * enough of them have succeeded, or the Job has failed; each finished pod is counted
 * once, through the batch.kubernetes.io/job-tracking finalizer and
 * status.uncountedTerminatedPods.
 */
#ifndef SQLKCM_CONTROLLERS_JOB_H
#define SQLKCM_CONTROLLERS_JOB_H

#include "controller.h"

extern const struct controller_type job_controller_type;

/* kube's backoff before a Job creates pods again after failures: 10 s doubled for each
 * failure after the last success but the first, at most 10 min; the seconds left of it at
 * now after the last failure at last_failure (0: none). */
double job_backoff_remaining(int failures_after_last_success, double last_failure,
    double now);

#endif
