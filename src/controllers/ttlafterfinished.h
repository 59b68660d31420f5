/*
 * ttlafterfinished.h - the TTL-after-finished controller (kube's
 * ttl-after-finished-controller): a finished Job with spec.ttlSecondsAfterFinished is
 * deleted, in the foreground, once that many seconds have passed since it finished.
 */
#ifndef SQLKCM_CONTROLLERS_TTLAFTERFINISHED_H
#define SQLKCM_CONTROLLERS_TTLAFTERFINISHED_H

#include <cjson/cJSON.h>

#include "controller.h"

extern const struct controller_type ttlafterfinished_controller_type;

/* Whether kube cleans job up at all: it has a ttlSecondsAfterFinished and a Complete or
 * Failed condition that is True. */
int ttlafterfinished_needs_cleanup(const cJSON *job);

/*
 * kube's timeLeft for job at now (Unix seconds): 0 with *left the seconds until it
 * expires (0 or less: expired) and *expire_at when; -1 with *error (malloc'd) saying why
 * when the job is not to be cleaned up or its finish time cannot be read.
 */
int ttlafterfinished_time_left(const cJSON *job, double now, double *left, double *expire_at,
    char **error);

#endif
