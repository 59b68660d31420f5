/*
 * cronjob.h - the CronJob controller (kube's cronjob-controller, its v2): Jobs made from a
 * CronJob's jobTemplate at the times its cron schedule names, and its status kept.
 */
#ifndef SQLKCM_CONTROLLERS_CRONJOB_H
#define SQLKCM_CONTROLLERS_CRONJOB_H

#include <stdint.h>

#include "controller.h"

extern const struct controller_type cronjob_controller_type;

/* A parsed schedule, as robfig/cron's standard parser makes it: a bit per allowed value
 * of each field, bit 63 (CRON_STAR) when the field was * or ?; or every > 0 for
 * "@every DURATION" (whole seconds). zone: the TZ= or CRON_TZ= prefix's zone, or "". */
#define CRON_STAR (UINT64_C(1) << 63)
struct cron_schedule {
	uint64_t second, minute, hour, dom, month, dow;
	int64_t every;
	char zone[128];
};

/* Parses spec; 0, or -1 with *error (malloc'd) in robfig's words. */
int cron_parse(const char *spec, struct cron_schedule *s, char **error);

/* Checks a time zone name as Go's time.LoadLocation takes it ("" and "UTC": UTC; else a
 * file of the system's tz database); 0, or -1 with *error. */
int cron_zone_check(const char *zone, char **error);

/* robfig's Next: the first time after t (Unix seconds) that s names, in zone (NULL or "":
 * UTC); 0 when there is none within five years. */
int64_t cron_next(const struct cron_schedule *s, const char *zone, double t);

/* Formats t in zone as RFC 3339 (Go's time.RFC3339: "Z" for UTC, else the offset). */
void cron_format_in_zone(int64_t t, const char *zone, char out[40]);

/* kube's mostRecentScheduleTime over the CronJob cj at now: *earliest, *recent (0: none),
 * *missed (0 none, 1 few, 2 more than 100); -1 when two schedules are less than a second
 * apart. */
int cronjob_most_recent(const cJSON *cj, const struct cron_schedule *s, const char *zone,
    double now, int with_deadline, double *earliest, int64_t *recent, int *missed);

/* kube's nextScheduleTimeDuration: seconds from now to the next schedule, plus 100 ms. */
double cronjob_next_duration(const cJSON *cj, const struct cron_schedule *s, const char *zone,
    double now);

#endif
