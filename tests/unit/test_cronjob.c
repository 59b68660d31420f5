/*
 * test_cronjob.c - the CronJob controller (controllers/cronjob.c) against
 * kube-controller-manager's rules, as data.
 *
 * The rules are kube v1.36.3's pkg/controller/cronjob and robfig/cron v3's standard
 * parser. The tables: robfig's TestNext rows whose seconds field is 0 (as five fields) and
 * its parser's errors; kube's TestMostRecentScheduleTime and TestNextScheduleTimeDuration;
 * kube's TestControllerV2SyncCronJob, less the rows that test a fake client's errors (a
 * create's AlreadyExists or namespace-terminating, a live GET's error) or kube's live reads
 * (a Job missing from the lister that the live GET still finds, a Job the live CronJob
 * lists in active): sqlkcm's sync does no I/O and trusts the cache there. A row's
 * expectations are kube's; where sqlkcm deviates by design (a created Job enters
 * status.active on the next sync, see cronjob.c), the check says so.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "action.h"
#include "consistency.h"
#include "controller.h"
#include "controllers/cronjob.h"
#include "fixtures.h"
#include "json.h"
#include "resource.h"
#include "restops.h"
#include "store.h"
#include "timeutil.h"
#include "util.h"

static double
at(const char *rfc3339)
{
	time_t t;

	if (time_parse_rfc3339(rfc3339, &t) != 0)
		fail_msg("bad time in a table: %s", rfc3339);
	return (double)t;
}

/* --- the parser and Next --------------------------------------------------------------- */

/* robfig's TestNext (seconds field 0 dropped); times as RFC 3339. */
static const struct next_case {
	const char *from, *spec, *want;
} next_cases[] = {
	{ "2012-07-09T14:45:00Z", "0/15 * * * *", "2012-07-09T15:00:00Z" },
	{ "2012-07-09T14:59:00Z", "0/15 * * * *", "2012-07-09T15:00:00Z" },
	{ "2012-07-09T14:59:59Z", "0/15 * * * *", "2012-07-09T15:00:00Z" },
	{ "2012-07-09T15:45:00Z", "20-35/15 * * * *", "2012-07-09T16:20:00Z" },
	{ "2012-07-09T23:46:00Z", "*/15 * * * *", "2012-07-10T00:00:00Z" },
	{ "2012-07-09T23:45:00Z", "20-35/15 * * * *", "2012-07-10T00:20:00Z" },
	{ "2012-07-09T23:35:00Z", "0 0 9 Apr-Oct ?", "2012-08-09T00:00:00Z" },
	{ "2012-07-09T23:35:00Z", "0 0 */5 Apr,Aug,Oct Mon", "2012-08-01T00:00:00Z" },
	{ "2012-07-09T23:35:00Z", "0 0 */5 Oct Mon", "2012-10-01T00:00:00Z" },
	{ "2012-07-09T23:35:00Z", "0 0 * Feb Mon", "2013-02-04T00:00:00Z" },
	{ "2012-07-09T23:35:00Z", "0 0 * Feb Mon/2", "2013-02-01T00:00:00Z" },
	{ "2012-12-31T23:59:45Z", "* * * * *", "2013-01-01T00:00:00Z" },
	{ "2012-07-09T23:35:00Z", "0 0 29 Feb ?", "2016-02-29T00:00:00Z" },
	{ "2012-03-11T00:00:00-05:00", "TZ=America/New_York 30 2 11 Mar ?",
	  "2013-03-11T02:30:00-04:00" },
	{ "2012-03-11T00:00:00-05:00", "TZ=America/New_York 0 * * * ?",
	  "2012-03-11T01:00:00-05:00" },
	{ "2012-03-11T01:00:00-05:00", "TZ=America/New_York 0 * * * ?",
	  "2012-03-11T03:00:00-04:00" },
	{ "2012-03-11T03:00:00-04:00", "CRON_TZ=America/New_York 0 * * * ?",
	  "2012-03-11T04:00:00-04:00" },
	{ "2012-03-11T00:00:00-05:00", "TZ=America/New_York 0 1 * * ?",
	  "2012-03-11T01:00:00-05:00" },
	{ "2012-03-11T01:00:00-05:00", "TZ=America/New_York 0 1 * * ?",
	  "2012-03-12T01:00:00-04:00" },
	{ "2012-03-11T00:00:00-05:00", "TZ=America/New_York 0 2 * * ?",
	  "2012-03-12T02:00:00-04:00" },
	{ "2012-11-04T00:00:00-04:00", "TZ=America/New_York 30 2 04 Nov ?",
	  "2012-11-04T02:30:00-05:00" },
	{ "2012-11-04T00:00:00-04:00", "TZ=America/New_York 0 * * * ?",
	  "2012-11-04T01:00:00-04:00" },
	{ "2012-11-04T01:00:00-05:00", "TZ=America/New_York 0 * * * ?",
	  "2012-11-04T02:00:00-05:00" },
	{ "2012-11-04T00:00:00-04:00", "TZ=America/New_York 0 2 * * ?",
	  "2012-11-04T02:00:00-05:00" },
	/* robfig's unsatisfiable: no time within five years */
	{ "2012-07-09T23:35:00Z", "0 0 30 Feb ?", NULL },
	{ "2012-07-09T23:35:00Z", "0 0 31 Apr ?", NULL },
	/* the descriptors */
	{ "2012-07-09T23:35:00Z", "@yearly", "2013-01-01T00:00:00Z" },
	{ "2012-07-09T23:35:00Z", "@annually", "2013-01-01T00:00:00Z" },
	{ "2012-07-09T23:35:00Z", "@monthly", "2012-08-01T00:00:00Z" },
	{ "2012-07-09T23:35:00Z", "@weekly", "2012-07-15T00:00:00Z" },
	{ "2012-07-09T23:35:00Z", "@daily", "2012-07-10T00:00:00Z" },
	{ "2012-07-09T23:35:00Z", "@midnight", "2012-07-10T00:00:00Z" },
	{ "2012-07-09T23:35:00Z", "@hourly", "2012-07-10T00:00:00Z" },
	{ "2012-07-09T23:35:10Z", "@every 1h", "2012-07-10T00:35:10Z" },
	{ "2012-07-09T23:35:10Z", "@every 500ms", "2012-07-09T23:35:11Z" },
	/* names in any case; day of month or day of week when neither is * */
	{ "2012-07-09T23:35:00Z", "0 12 1 * FRI", "2012-07-13T12:00:00Z" },
	{ "2012-07-09T23:35:00Z", "0 12 * jUl sun", "2012-07-15T12:00:00Z" },
};

static void
next_case(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof next_cases / sizeof next_cases[0]; i++) {
		const struct next_case *tc = &next_cases[i];
		struct cron_schedule s;
		char *error = NULL;
		int64_t got;

		if (cron_parse(tc->spec, &s, &error) != 0)
			fail_msg("%s: %s", tc->spec, error);
		got = cron_next(&s, s.zone, at(tc->from));
		if (tc->want == NULL ? got != 0 : got != (int64_t)at(tc->want))
			fail_msg("Next(%s) of %s: got %lld, want %s", tc->from, tc->spec,
			    (long long)got, tc->want != NULL ? tc->want : "none");
	}
}

/* robfig's parser errors (TestErrors and getRange's), in its words. */
static const struct parse_error_case {
	const char *spec, *want;
} parse_errors[] = {
	{ "", "empty spec string" },
	{ "* * * *", "expected exactly 5 fields, found 4" },
	{ "* * * * * *", "expected exactly 5 fields, found 6" },
	{ "xyz", "expected exactly 5 fields, found 1" },
	{ "60 0 * * *", "end of range (60) above maximum (59): 60" },
	{ "0 24 * * *", "end of range (24) above maximum (23): 24" },
	{ "0 0 0 * *", "beginning of range (0) below minimum (1): 0" },
	{ "0 0 * 13 *", "end of range (13) above maximum (12): 13" },
	{ "0 0 * * 7", "end of range (7) above maximum (6): 7" },
	{ "5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1" },
	{ "1-2-3 * * * *", "too many hyphens: 1-2-3" },
	{ "*/2/3 * * * *", "too many slashes: */2/3" },
	{ "*/0 * * * *", "step of range should be a positive number: */0" },
	{ "a * * * *", "failed to parse int from a" },
	{ "-1 * * * *", "failed to parse int from " },
	{ "@fortnightly", "unrecognized descriptor: @fortnightly" },
	{ "@every x", "failed to parse duration @every x" },
	{ "TZ=Nowhere/Atlantis * * * * *", "provided bad location Nowhere/Atlantis" },
	{ "TZ=../../etc/passwd * * * * *", "provided bad location ../../etc/passwd" },
	{ "obvious error schedule", "expected exactly 5 fields, found 3" },
};

static void
parse_error_case(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof parse_errors / sizeof parse_errors[0]; i++) {
		struct cron_schedule s;
		char *error = NULL;

		if (cron_parse(parse_errors[i].spec, &s, &error) == 0)
			fail_msg("\"%s\" parsed", parse_errors[i].spec);
		if (strstr(error, parse_errors[i].want) == NULL)
			fail_msg("\"%s\": got \"%s\", want \"%s\"", parse_errors[i].spec, error,
			    parse_errors[i].want);
		free(error);
	}
}

/* The RFC 3339 text of the scheduled-timestamp annotation, in a zone. */
static void
format_in_zone(void **state)
{
	char out[40];
	double t = at("2016-05-19T10:00:00Z");

	(void)state;
	cron_format_in_zone((int64_t)t, NULL, out);
	assert_string_equal(out, "2016-05-19T10:00:00Z");
	cron_format_in_zone((int64_t)t, "America/New_York", out);
	assert_string_equal(out, "2016-05-19T06:00:00-04:00");
	cron_format_in_zone((int64_t)t, "Asia/Kolkata", out);
	assert_string_equal(out, "2016-05-19T15:30:00+05:30");
}

/* --- kube's utils_test.go -------------------------------------------------------------- */

#define TOP "2016-05-19T10:00:00Z"
#define H 3600.0
#define M 60.0
#define NO (-12345.0)

static cJSON *
cj_new(const char *schedule, double created, double last, double deadline)
{
	char a[TIME_RFC3339_SIZE], b[TIME_RFC3339_SIZE];
	cJSON *cj;
	struct buf t;

	buf_init(&t);
	time_format_rfc3339((time_t)created, a);
	buf_printf(&t, "{\"metadata\":{\"name\":\"mycronjob\",\"namespace\":\"snazzycats\","
	    "\"uid\":\"1a2b3c\",\"resourceVersion\":\"7\",\"creationTimestamp\":\"%s\"},"
	    "\"spec\":{\"schedule\":\"%s\"", a, schedule);
	if (deadline != NO)
		buf_printf(&t, ",\"startingDeadlineSeconds\":%.0f", deadline);
	buf_append_str(&t, "},\"status\":{");
	if (last != NO) {
		time_format_rfc3339((time_t)last, b);
		buf_printf(&t, "\"lastScheduleTime\":\"%s\"", b);
	}
	buf_append_str(&t, "}}");
	cj = fixture_parse(t.data);
	buf_free(&t);
	return cj;
}

/* kube's TestMostRecentScheduleTime: times as seconds after the top of the hour. */
static const struct recent_case {
	const char *name, *schedule;
	double created, last, deadline;
	int with_deadline;
	double now, want_earliest, want_recent;	/* want_recent NO: none */
	int want_missed, want_err;
} recent_cases[] = {
	{ "now before next schedule", "0 * * * *", 0, NO, NO, 0, 30, 0, NO, 0, 0 },
	{ "now just after next schedule", "0 * * * *", 0, NO, NO, 0, 61 * M, 0, 60 * M, 0, 0 },
	{ "missed 5 schedules", "0 * * * *", 10, NO, NO, 0, 301 * M, 10, 300 * M, 1, 0 },
	{ "complex schedule", "30 6-16/4 * * 1-5", 0, 30 * M, NO, 0, 24 * H + 31 * M, 30 * M,
	  24 * H + 30 * M, 1, 0 },
	{ "another complex schedule", "30 10,11,12 * * 1-5", 0, 30 * M, NO, 0, 30 * H + 30 * M,
	  30 * M, NO, 1, 0 },
	{ "complex schedule with longer diff between executions", "30 6-16/4 * * 1-5", 0,
	  30 * M, NO, 0, 96 * H + 31 * M, 30 * M, 96 * H + 30 * M, 1, 0 },
	{ "complex schedule with shorter diff between executions", "30 6-16/4 * * 1-5", 0, NO,
	  NO, 0, 24 * H + 31 * M, 0, 24 * H + 30 * M, 1, 0 },
	{ "@every schedule", "@every 1h", -59 * M, 1 * M, 10, 0, 7 * 24 * H, 1 * M,
	  6 * 24 * H + 23 * H + 1 * M, 2, 0 },
	{ "rogue cronjob", "59 23 31 2 *", 10, NO, NO, 0, 1 * H, 0, NO, 0, 1 },
	{ "earliestTime being CreationTimestamp and LastScheduleTime", "0 * * * *", 0, 0, NO,
	  0, 30, 0, NO, 0, 0 },
	{ "earliestTime being LastScheduleTime", "*/5 * * * *", 0, 30 * M, NO, 0, 31 * M,
	  30 * M, NO, 0, 0 },
	{ "earliestTime being LastScheduleTime (within StartingDeadlineSeconds)",
	  "*/5 * * * *", 0, 30 * M, 60, 0, 31 * M, 30 * M, NO, 0, 0 },
	{ "earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)",
	  "*/5 * * * *", 0, 30 * M, 60, 1, 32 * M, 31 * M, NO, 0, 0 },
};

static void
recent_case(void **state)
{
	double top = at(TOP);

	(void)state;
	for (size_t i = 0; i < sizeof recent_cases / sizeof recent_cases[0]; i++) {
		const struct recent_case *tc = &recent_cases[i];
		cJSON *cj = cj_new(tc->schedule, top + tc->created,
		    tc->last != NO ? top + tc->last : NO, tc->deadline);
		struct cron_schedule s;
		char *error = NULL;
		double earliest;
		int64_t recent;
		int missed, rc;

		if (cron_parse(tc->schedule, &s, &error) != 0)
			fail_msg("%s: %s", tc->name, error);
		rc = cronjob_most_recent(cj, &s, NULL, top + tc->now, tc->with_deadline,
		    &earliest, &recent, &missed);
		cJSON_Delete(cj);
		if (tc->want_err) {
			if (rc == 0)
				fail_msg("%s: no error", tc->name);
			continue;
		}
		if (rc != 0)
			fail_msg("%s: an error", tc->name);
		if (earliest != top + tc->want_earliest)
			fail_msg("%s: earliest %.0f, want %.0f", tc->name, earliest - top,
			    tc->want_earliest);
		if (tc->want_recent == NO ? recent != 0 : recent != (int64_t)(top + tc->want_recent))
			fail_msg("%s: recent %lld, want %.0f", tc->name,
			    (long long)(recent - (int64_t)top), tc->want_recent);
		if (missed != tc->want_missed)
			fail_msg("%s: missed %d, want %d", tc->name, missed, tc->want_missed);
	}
}

/* kube's TestNextScheduleTimeDuration (its durations plus the 100 ms). */
static const struct duration_case {
	const char *name, *schedule;
	double last, now, want;
} duration_cases[] = {
	{ "complex schedule skipping weekend", "30 6-16/4 * * 1-5", 30 * M, 24 * H + 31 * M,
	  3 * H + 59 * M },
	{ "another complex schedule skipping weekend", "30 10,11,12 * * 1-5", 30 * M,
	  30 * H + 30 * M, 66 * H },
	{ "once a week cronjob, missed two runs", "0 12 * * 4", 2 * H,
	  19 * 24 * H + 1 * H + 30 * M, 48 * H + 30 * M },
	{ "no previous run of a cronjob", "0 12 * * 5", NO, 6 * H, 20 * H },
};

static void
duration_case(void **state)
{
	double top = at(TOP);

	(void)state;
	for (size_t i = 0; i < sizeof duration_cases / sizeof duration_cases[0]; i++) {
		const struct duration_case *tc = &duration_cases[i];
		cJSON *cj = cj_new(tc->schedule, top, tc->last != NO ? top + tc->last : NO, NO);
		struct cron_schedule s;
		char *error = NULL;
		double got;

		if (cron_parse(tc->schedule, &s, &error) != 0)
			fail_msg("%s: %s", tc->name, error);
		got = cronjob_next_duration(cj, &s, NULL, top + tc->now);
		cJSON_Delete(cj);
		if (got < tc->want + 0.1 - 1e-6 || got > tc->want + 0.1 + 1e-6)
			fail_msg("%s: %f, want %f", tc->name, got, tc->want + 0.1);
	}
}

/* --- kube's TestControllerV2SyncCronJob ------------------------------------------------ */

#define BEFORE_PRIOR "2016-05-19T08:59:00Z"	/* justBeforeThePriorHour */
#define AFTER_PRIOR "2016-05-19T09:01:00Z"	/* justAfterThePriorHour */
#define BEFORE "2016-05-19T09:59:00Z"		/* justBeforeTheHour */
#define AFTER "2016-05-19T10:01:00Z"		/* justAfterTheHour */
#define BEFORE_NEXT "2016-05-19T10:59:00Z"	/* justBeforeTheNextHour */
#define WEEK "2016-05-26T10:00:00Z"		/* weekAfterTheHour */
#define ON_THE_HOUR "0 * * * ?"
#define EVERY_HOUR "@every 1h"
#define SHORT 10.0
#define MEDIUM 7200.0
#define LONG 1000000.0

static const struct sync_case {
	const char *name, *policy;
	int suspend;
	const char *schedule, *zone;
	double deadline;		/* NO: none */
	int history;			/* successfulJobsHistoryLimit; -1: none */
	int ran, still_active;
	const char *cj_created, *job_created, *last;	/* NULL: kube's defaults */
	const char *now;
	double now_plus;		/* seconds added to now */
	int present;			/* jobPresentInCJActiveStatus */
	/* kube's expectations */
	int create, delete, completed, active, warnings;
	double requeue;			/* NO: not checked */
	int update;
	/* sqlkcm's sync also does kube's cleanupFinishedJobs: its deletions */
	int cleanup_deletes;
} sync_cases[] = {
	{ "never ran, not valid schedule, A", "Allow", 0, "obvious error schedule", NULL, NO, -1,
	  0, 0, NULL, AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 0, 1, NO, 0, 0 },
	{ "never ran, not valid schedule, F", "Forbid", 0, "obvious error schedule", NULL, NO,
	  -1, 0, 0, NULL, AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 0, 1, NO, 0, 0 },
	{ "never ran, not valid time zone", "Allow", 0, ON_THE_HOUR, "bad timezone", NO, -1, 0,
	  0, NULL, AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 0, 1, NO, 0, 0 },
	{ "never ran, not time, A", "Allow", 0, ON_THE_HOUR, NULL, NO, -1, 0, 0, NULL,
	  AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 0, 0, 1 * M, 0, 0 },
	{ "never ran, not time, F", "Forbid", 0, ON_THE_HOUR, NULL, NO, -1, 0, 0, NULL,
	  AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 0, 0, 1 * M, 0, 0 },
	{ "never ran, not time, R", "Replace", 0, ON_THE_HOUR, NULL, NO, -1, 0, 0, NULL,
	  AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 0, 0, 1 * M, 0, 0 },
	{ "never ran, not time in zone", "Allow", 0, ON_THE_HOUR, "America/New_York", NO, -1,
	  0, 0, NULL, AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 0, 0, 1 * M, 0, 0 },
	{ "never ran, is time, A", "Allow", 0, ON_THE_HOUR, NULL, NO, -1, 0, 0, NULL,
	  AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 0, 0, 1, 0, 1 * H - 1 * M, 1, 0 },
	{ "never ran, is time, F", "Forbid", 0, ON_THE_HOUR, NULL, NO, -1, 0, 0, NULL,
	  AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 0, 0, 1, 0, 1 * H - 1 * M, 1, 0 },
	{ "never ran, is time, R", "Replace", 0, ON_THE_HOUR, NULL, NO, -1, 0, 0, NULL,
	  AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 0, 0, 1, 0, 1 * H - 1 * M, 1, 0 },
	{ "never ran, is time in zone", "Allow", 0, ON_THE_HOUR, "America/New_York", NO, -1, 0,
	  0, NULL, AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 0, 0, 1, 0, 1 * H - 1 * M, 1, 0 },
	{ "never ran, is time in zone, but TZ is also set in schedule", "Allow", 0,
	  "TZ=UTC " ON_THE_HOUR, "America/New_York", NO, -1, 0, 0, NULL, AFTER_PRIOR, NULL,
	  AFTER, 0, 1, 1, 0, 0, 1, 1, 1 * H - 1 * M, 1, 0 },
	{ "never ran, is time, suspended", "Allow", 1, ON_THE_HOUR, NULL, NO, -1, 0, 0, NULL,
	  AFTER_PRIOR, NULL, AFTER, 0, 1, 0, 0, 0, 0, 0, NO, 0, 0 },
	{ "never ran, is time, past deadline", "Allow", 0, ON_THE_HOUR, NULL, SHORT, -1, 0, 0,
	  NULL, AFTER_PRIOR, NULL, AFTER, (SHORT + 1) * M, 1, 0, 0, 0, 0, 0,
	  1 * H - 1 * M - (SHORT + 1) * M, 0, 0 },
	{ "never ran, is time, not past deadline", "Allow", 0, ON_THE_HOUR, NULL, LONG, -1, 0,
	  0, NULL, AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 0, 0, 1, 0, 1 * H - 1 * M, 1, 0 },
	{ "prev ran but done, not time, A", "Allow", 0, ON_THE_HOUR, NULL, NO, -1, 1, 0, NULL,
	  AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 1, 0, 0, 1 * M, 1, 0 },
	{ "prev ran but done, not time, F", "Forbid", 0, ON_THE_HOUR, NULL, NO, -1, 1, 0, NULL,
	  AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 1, 0, 0, 1 * M, 1, 0 },
	{ "prev ran but done, not time, R", "Replace", 0, ON_THE_HOUR, NULL, NO, -1, 1, 0, NULL,
	  AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 1, 0, 0, 1 * M, 1, 0 },
	{ "prev ran but done, is time, A", "Allow", 0, ON_THE_HOUR, NULL, NO, -1, 1, 0, NULL,
	  AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 0, 1, 1, 0, 1 * H - 1 * M, 1, 0 },
	{ "prev ran but done, is time, F", "Forbid", 0, ON_THE_HOUR, NULL, NO, -1, 1, 0, NULL,
	  AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 0, 1, 1, 0, 1 * H - 1 * M, 1, 0 },
	{ "prev ran but done, is time, R", "Replace", 0, ON_THE_HOUR, NULL, NO, -1, 1, 0, NULL,
	  AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 0, 1, 1, 0, 1 * H - 1 * M, 1, 0 },
	{ "prev ran but done, is time, suspended", "Allow", 1, ON_THE_HOUR, NULL, NO, -1, 1, 0,
	  NULL, AFTER_PRIOR, NULL, AFTER, 0, 1, 0, 0, 1, 0, 0, NO, 1, 0 },
	{ "prev ran but done, is time, past deadline", "Allow", 0, ON_THE_HOUR, NULL, SHORT,
	  -1, 1, 0, NULL, AFTER_PRIOR, NULL, AFTER, 0, 1, 0, 0, 1, 0, 0, 1 * H - 1 * M, 1, 0 },
	{ "prev ran but done, is time, not past deadline", "Allow", 0, ON_THE_HOUR, NULL, LONG,
	  -1, 1, 0, NULL, AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 0, 1, 1, 0, 1 * H - 1 * M, 1, 0 },
	{ "still active, not time, A", "Allow", 0, ON_THE_HOUR, NULL, NO, -1, 1, 1, NULL,
	  AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 1, 0, 1 * M, 0, 0 },
	{ "still active, not time, F", "Forbid", 0, ON_THE_HOUR, NULL, NO, -1, 1, 1, NULL,
	  AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 1, 0, 1 * M, 0, 0 },
	{ "still active, not time, R", "Replace", 0, ON_THE_HOUR, NULL, NO, -1, 1, 1, NULL,
	  AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 1, 0, 1 * M, 0, 0 },
	{ "still active, is time, A", "Allow", 0, ON_THE_HOUR, NULL, NO, -1, 1, 1, NULL,
	  AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 0, 0, 2, 0, 1 * H - 1 * M, 1, 0 },
	{ "still active, is time, F", "Forbid", 0, ON_THE_HOUR, NULL, NO, -1, 1, 1, NULL,
	  AFTER_PRIOR, NULL, AFTER, 0, 1, 0, 0, 0, 1, 0, 1 * H - 1 * M, 0, 0 },
	{ "still active, is time, R", "Replace", 0, ON_THE_HOUR, NULL, NO, -1, 1, 1, NULL,
	  AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 1, 0, 1, 0, 1 * H - 1 * M, 1, 0 },
	{ "still active, is time, suspended", "Allow", 1, ON_THE_HOUR, NULL, NO, -1, 1, 1, NULL,
	  AFTER_PRIOR, NULL, AFTER, 0, 1, 0, 0, 0, 1, 0, NO, 0, 0 },
	{ "still active, is time, past deadline", "Allow", 0, ON_THE_HOUR, NULL, SHORT, -1, 1,
	  1, NULL, AFTER_PRIOR, NULL, AFTER, 0, 1, 0, 0, 0, 1, 0, 1 * H - 1 * M, 0, 0 },
	{ "still active, is time, not past deadline", "Allow", 0, ON_THE_HOUR, NULL, LONG, -1,
	  1, 1, NULL, AFTER_PRIOR, NULL, AFTER, 0, 1, 1, 0, 0, 2, 0, 1 * H - 1 * M, 1, 0 },
	{ "prev ran but done, long overdue, not past deadline, A", "Allow", 0, ON_THE_HOUR,
	  NULL, LONG, -1, 1, 0, NULL, AFTER_PRIOR, NULL, WEEK, 0, 1, 1, 0, 1, 1, 1, 1 * H, 1,
	  0 },
	{ "prev ran but done, long overdue, not past deadline, R", "Replace", 0, ON_THE_HOUR,
	  NULL, LONG, -1, 1, 0, NULL, AFTER_PRIOR, NULL, WEEK, 0, 1, 1, 0, 1, 1, 1, 1 * H, 1,
	  0 },
	{ "prev ran but done, long overdue, not past deadline, F", "Forbid", 0, ON_THE_HOUR,
	  NULL, LONG, -1, 1, 0, NULL, AFTER_PRIOR, NULL, WEEK, 0, 1, 1, 0, 1, 1, 1, 1 * H, 1,
	  0 },
	{ "prev ran but done, long overdue, no deadline, A", "Allow", 0, ON_THE_HOUR, NULL, NO,
	  -1, 1, 0, NULL, AFTER_PRIOR, NULL, WEEK, 0, 1, 1, 0, 1, 1, 1, 1 * H, 1, 0 },
	{ "prev ran but done, long overdue, no deadline, R", "Replace", 0, ON_THE_HOUR, NULL,
	  NO, -1, 1, 0, NULL, AFTER_PRIOR, NULL, WEEK, 0, 1, 1, 0, 1, 1, 1, 1 * H, 1, 0 },
	{ "prev ran but done, long overdue, no deadline, F", "Forbid", 0, ON_THE_HOUR, NULL,
	  NO, -1, 1, 0, NULL, AFTER_PRIOR, NULL, WEEK, 0, 1, 1, 0, 1, 1, 1, 1 * H, 1, 0 },
	{ "prev ran but done, long overdue, past medium deadline, A", "Allow", 0, ON_THE_HOUR,
	  NULL, MEDIUM, -1, 1, 0, NULL, AFTER_PRIOR, NULL, WEEK, 0, 1, 1, 0, 1, 1, 0, 1 * H, 1,
	  0 },
	{ "prev ran but done, long overdue, past short deadline, A", "Allow", 0, ON_THE_HOUR,
	  NULL, SHORT, -1, 1, 0, NULL, AFTER_PRIOR, NULL, WEEK, 0, 1, 1, 0, 1, 1, 0, 1 * H, 1,
	  0 },
	{ "prev ran but done, long overdue, past medium deadline, R", "Replace", 0,
	  ON_THE_HOUR, NULL, MEDIUM, -1, 1, 0, NULL, AFTER_PRIOR, NULL, WEEK, 0, 1, 1, 0, 1, 1,
	  0, 1 * H, 1, 0 },
	{ "prev ran but done, long overdue, past short deadline, F", "Forbid", 0, ON_THE_HOUR,
	  NULL, SHORT, -1, 1, 0, NULL, AFTER_PRIOR, NULL, WEEK, 0, 1, 1, 0, 1, 1, 0, 1 * H, 1,
	  0 },
	{ "this ran but done, time drifted back, F", "Forbid", 0, ON_THE_HOUR, NULL, NO, -1, 1,
	  0, NULL, AFTER, NULL, BEFORE, 0, 0, 0, 0, 0, 0, 0, 1 * M, 1, 0 },
	{ "with @every schedule, never ran, not time", "Allow", 0, EVERY_HOUR, NULL, NO, -1, 0,
	  0, BEFORE, BEFORE, NULL, TOP, 0, 1, 0, 0, 0, 0, 0, 1 * H - 1 * M, 0, 0 },
	{ "with @every schedule, never ran, is time", "Allow", 0, EVERY_HOUR, NULL, NO, -1, 0,
	  0, BEFORE_PRIOR, BEFORE_PRIOR, NULL, BEFORE, 0, 1, 1, 0, 0, 1, 0, 1 * H, 1, 0 },
	{ "with @every schedule, never ran, is time, past deadline", "Allow", 0, EVERY_HOUR,
	  NULL, SHORT, -1, 0, 0, BEFORE_PRIOR, BEFORE_PRIOR, NULL, BEFORE, SHORT + 1, 1, 0, 0,
	  0, 0, 0, 1 * H - (SHORT + 1), 0, 0 },
	{ "with @every schedule, never ran, is time, not past deadline", "Allow", 0,
	  EVERY_HOUR, NULL, LONG, -1, 0, 0, BEFORE_PRIOR, BEFORE_PRIOR, NULL, BEFORE,
	  SHORT - 1, 1, 1, 0, 0, 1, 0, 1 * H - (SHORT - 1), 1, 0 },
	{ "with @every schedule, prev ran but done, not time", "Allow", 0, EVERY_HOUR, NULL, NO,
	  -1, 1, 0, BEFORE_PRIOR, BEFORE_PRIOR, BEFORE, TOP, 0, 1, 0, 0, 1, 0, 0, 1 * H - 1 * M,
	  1, 0 },
	{ "with @every schedule, prev ran but done, is time", "Allow", 0, EVERY_HOUR, NULL, NO,
	  -1, 1, 0, BEFORE_PRIOR, BEFORE_PRIOR, BEFORE, TOP, 1 * H, 1, 1, 0, 1, 1, 0,
	  1 * H - 1 * M, 1, 0 },
	{ "with @every schedule, prev ran but done, is time, past deadline", "Allow", 0,
	  EVERY_HOUR, NULL, SHORT, -1, 1, 0, BEFORE_PRIOR, BEFORE_PRIOR, BEFORE, BEFORE_NEXT,
	  SHORT + 1, 1, 0, 0, 1, 0, 0, 1 * H - (SHORT + 1), 1, 0 },
	{ "with @every schedule, still active, not time", "Allow", 0, EVERY_HOUR, NULL, NO, -1,
	  1, 1, BEFORE_PRIOR, BEFORE, BEFORE, TOP, 0, 1, 0, 0, 0, 1, 0, 1 * H - 1 * M, 0, 0 },
	{ "with @every schedule, still active, is time", "Allow", 0, EVERY_HOUR, NULL, NO, -1,
	  1, 1, BEFORE_PRIOR, BEFORE_PRIOR, BEFORE_PRIOR, AFTER, 0, 1, 1, 0, 0, 2, 0,
	  1 * H - 2 * M, 1, 0 },
	{ "with @every schedule, still active, is time, past deadline", "Allow", 0, EVERY_HOUR,
	  NULL, SHORT, -1, 1, 1, BEFORE_PRIOR, BEFORE, BEFORE, BEFORE_NEXT, SHORT + 1, 1, 0, 0,
	  0, 1, 0, 1 * H - (SHORT + 1), 0, 0 },
	{ "with @every schedule, still active, is time, not past deadline", "Allow", 0,
	  EVERY_HOUR, NULL, LONG, -1, 1, 1, BEFORE_PRIOR, BEFORE, BEFORE, BEFORE_NEXT,
	  SHORT - 1, 1, 1, 0, 0, 2, 0, 1 * H - (SHORT - 1), 1, 0 },
	{ "with @every schedule, prev ran but done, long overdue, no deadline", "Allow", 0,
	  EVERY_HOUR, NULL, NO, -1, 1, 0, AFTER_PRIOR, AFTER_PRIOR, AFTER, WEEK, 0, 1, 1, 0, 1,
	  1, 1, 1 * M, 1, 0 },
	{ "with @every schedule, prev ran but done, long overdue, past deadline", "Allow", 0,
	  EVERY_HOUR, NULL, SHORT, -1, 1, 0, AFTER_PRIOR, AFTER_PRIOR, AFTER, WEEK,
	  1 * M + SHORT + 1, 1, 0, 0, 1, 0, 0, 1 * H - (SHORT + 1), 1, 0 },
	/* (kube's row says 1 active, a value its test never reaches: syncCronJob records no
	 * status update there; its completed Job leaves active as in the rows above) */
	/* kube's rows with an empty policy and a deadline of 0; their Job and now are Go's
	 * zero time (year 1), which sqlkcm's RFC 3339 reader does not take (it reads 1970
	 * on): the prior hour's Job and the hour's end stand for them. sqlkcm's sync also
	 * removes what is beyond the history limit (0: the one Job). */
	{ "set lastsuccessfultime if successfulJobHistoryLimit is zero", "", 0, ON_THE_HOUR,
	  NULL, 0, 0, 1, 0, NULL, AFTER_PRIOR, NULL, BEFORE, 0, 1,
	  0, 0, 1, 0, 0, NO, 1, 1 },
	{ "set lastsuccessfultime if successfulJobHistoryLimit is ten", "", 0, ON_THE_HOUR,
	  NULL, 0, 10, 1, 0, NULL, AFTER_PRIOR, NULL, BEFORE, 0, 1,
	  0, 0, 1, 0, 0, NO, 1, 0 },
	{ "set lastsuccessfultime if successfulJobHistoryLimit is nil", "", 0, ON_THE_HOUR,
	  NULL, 0, -1, 1, 0, NULL, AFTER_PRIOR, NULL, BEFORE, 0, 1,
	  0, 0, 1, 0, 0, NO, 1, 0 },
};

static int
world_setup(void **state)
{
	struct ctl_world *w = ctl_world_new(&cronjob_controller_type, NULL);

	w->row = *state;
	*state = w;
	return 0;
}

static int
world_teardown(void **state)
{
	ctl_world_free(*state);
	return 0;
}

/* kube's cronJob(), then the row's spec and status. */
static cJSON *
row_cronjob(const struct sync_case *tc, const char *job_name)
{
	const char *created = tc->cj_created != NULL ? tc->cj_created :
	    tc->ran ? BEFORE_PRIOR : BEFORE;
	cJSON *cj;
	struct buf t;

	buf_init(&t);
	buf_printf(&t, "{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"metadata\":{"
	    "\"name\":\"mycronjob\",\"namespace\":\"snazzycats\",\"uid\":\"1a2b3c\","
	    "\"resourceVersion\":\"7\",\"creationTimestamp\":\"%s\"},\"spec\":{"
	    "\"schedule\":\"%s\",\"concurrencyPolicy\":\"%s\",\"suspend\":%s", created,
	    tc->schedule, tc->policy, tc->suspend ? "true" : "false");
	if (tc->zone != NULL)
		buf_printf(&t, ",\"timeZone\":\"%s\"", tc->zone);
	if (tc->deadline != NO)
		buf_printf(&t, ",\"startingDeadlineSeconds\":%.0f", tc->deadline);
	if (tc->history >= 0)
		buf_printf(&t, ",\"successfulJobsHistoryLimit\":%d", tc->history);
	buf_append_str(&t, ",\"jobTemplate\":{\"metadata\":{\"labels\":{\"a\":\"b\"},"
	    "\"annotations\":{\"x\":\"y\"}},\"spec\":{\"parallelism\":1,\"completions\":1,"
	    "\"template\":{\"metadata\":{\"labels\":{\"foo\":\"bar\"}},\"spec\":{"
	    "\"containers\":[{\"image\":\"foo/bar\"}]}}}}},\"status\":{");
	if (tc->ran)
		buf_printf(&t, "\"lastScheduleTime\":\"%s\"", tc->last != NULL ? tc->last :
		    AFTER_PRIOR);
	if (tc->ran && tc->present)
		buf_printf(&t, ",\"active\":[{\"kind\":\"Job\",\"namespace\":\"snazzycats\","
		    "\"name\":\"%s\",\"uid\":\"1234\",\"apiVersion\":\"batch/v1\"}]", job_name);
	buf_append_str(&t, "}}");
	cj = fixture_parse(t.data);
	buf_free(&t);
	return cj;
}

/* The Job kube's getJobFromTemplate2 makes at the row's job creation time, uid 1234;
 * finished (Complete, 10 s after) unless still active. */
static cJSON *
row_job(const struct sync_case *tc, const char *job_name)
{
	char done[TIME_RFC3339_SIZE];
	cJSON *job;
	struct buf t;

	time_format_rfc3339((time_t)at(tc->job_created) + 10, done);
	buf_init(&t);
	buf_printf(&t, "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"
	    "\"name\":\"%s\",\"namespace\":\"snazzycats\",\"uid\":\"1234\","
	    "\"resourceVersion\":\"9\",\"creationTimestamp\":\"%s\",\"labels\":{\"a\":\"b\"},"
	    "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\","
	    "\"name\":\"mycronjob\",\"uid\":\"1a2b3c\",\"controller\":true,"
	    "\"blockOwnerDeletion\":true}]},\"spec\":{},\"status\":{", job_name,
	    tc->job_created);
	if (!tc->still_active)
		buf_printf(&t, "\"completionTime\":\"%s\",\"conditions\":[{\"type\":\"Complete\","
		    "\"status\":\"True\"}]", done);
	buf_append_str(&t, "}}");
	job = fixture_parse(t.data);
	buf_free(&t);
	return job;
}

static void
sync_case(void **state)
{
	struct ctl_world *w = *state;
	const struct sync_case *tc = w->row;
	long long minutes = (long long)at(tc->job_created) / 60;
	char job_name[64];
	int creates = 0, deletes = 0, warnings = 0, normal = 0;
	const cJSON *status;
	double now = at(tc->now) + tc->now_plus;

	snprintf(job_name, sizeof job_name, "mycronjob-%lld", minutes);
	ctl_cache(w, resource_find("cronjobs"), row_cronjob(tc, job_name));
	if (tc->ran)
		ctl_cache(w, resource_find("jobs"), row_job(tc, job_name));
	ctl_sync(w, "snazzycats/mycronjob", now);

	for (int i = 0; i < w->result.nwrites; i++) {
		const struct action *a = &w->result.writes[i];

		if (a->type == ACTION_CREATE)
			creates++;
		else if (a->type == ACTION_DELETE)
			deletes++;
	}
	for (int i = 0; i < w->result.nevents; i++) {
		if (strcmp(w->result.events[i].type, "Warning") == 0)
			warnings++;
		else
			normal++;
	}
	if (creates != tc->create)
		fail_msg("%s: %d creates, want %d", tc->name, creates, tc->create);
	if (deletes != tc->delete + tc->cleanup_deletes)
		fail_msg("%s: %d deletes, want %d", tc->name, deletes,
		    tc->delete + tc->cleanup_deletes);
	if (warnings != tc->warnings)
		fail_msg("%s: %d warnings, want %d", tc->name, warnings, tc->warnings);
	/* SawCompletedJob, and JobAlreadyActive in kube's one Forbid row */
	if (normal != tc->completed + (strcmp(tc->name, "still active, is time, F") == 0))
		fail_msg("%s: %d normal events, want %d", tc->name, normal, tc->completed);
	if ((w->result.status != NULL) != tc->update)
		fail_msg("%s: status update %d, want %d", tc->name, w->result.status != NULL,
		    tc->update);
	if (tc->requeue != NO && (w->result.requeue_after < tc->requeue + 0.1 - 1e-6 ||
	    w->result.requeue_after > tc->requeue + 0.1 + 1e-6))
		fail_msg("%s: requeue after %f, want %f", tc->name, w->result.requeue_after,
		    tc->requeue + 0.1);
	status = w->result.status != NULL ? json_path(w->result.status->body, "status") :
	    json_path(w->result.owner, "status");
	/* kube lists the Job it creates at once; sqlkcm on the next sync (see cronjob.c) */
	if (cJSON_GetArraySize(json_path(status, "active")) != tc->active - tc->create)
		fail_msg("%s: %d active, want %d (kube's %d less the new Job)", tc->name,
		    cJSON_GetArraySize(json_path(status, "active")), tc->active - tc->create,
		    tc->active);
	if (tc->ran && !tc->still_active) {
		char want[TIME_RFC3339_SIZE];

		time_format_rfc3339((time_t)at(tc->job_created) + 10, want);
		if (strcmp(json_string(status, "lastSuccessfulTime"), want) != 0)
			fail_msg("%s: lastSuccessfulTime %s, want %s", tc->name,
			    json_string(status, "lastSuccessfulTime"), want);
	}
}

/* The Job a create sends: kube's getJobFromTemplate2 (name, labels, annotations with the
 * scheduled timestamp in the CronJob's zone, controller reference, spec). */
static void
job_from_template(void **state)
{
	struct ctl_world *w = *state;
	static const struct sync_case tc = { "in zone", "Allow", 0, ON_THE_HOUR,
		"America/New_York", NO, -1, 0, 0, NULL, AFTER_PRIOR, NULL, AFTER, 0, 0, 1, 0, 0,
		1, 0, NO, 1, 0 };
	const struct action *a;
	const cJSON *ref;

	ctl_cache(w, resource_find("cronjobs"), row_cronjob(&tc, ""));
	ctl_sync(w, "snazzycats/mycronjob", at(AFTER));
	assert_int_equal(w->result.nwrites, 1);
	a = &w->result.writes[0];
	assert_int_equal(a->type, ACTION_CREATE);
	assert_string_equal(a->name, "mycronjob-24394200");
	assert_string_equal(json_string(a->body, "metadata.name"), "mycronjob-24394200");
	assert_string_equal(json_string(a->body, "metadata.labels.a"), "b");
	assert_string_equal(json_string(a->body, "metadata.annotations.x"), "y");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(json_path(a->body,
	    "metadata.annotations"), "batch.kubernetes.io/cronjob-scheduled-timestamp")
	    ->valuestring, "2016-05-19T06:00:00-04:00");
	ref = cJSON_GetArrayItem(json_path(a->body, "metadata.ownerReferences"), 0);
	assert_string_equal(json_string(ref, "kind"), "CronJob");
	assert_string_equal(json_string(ref, "apiVersion"), "batch/v1");
	assert_string_equal(json_string(ref, "uid"), "1a2b3c");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")));
	assert_int_equal(json_int(a->body, "spec.parallelism", 0), 1);
	assert_string_equal(json_string(cJSON_GetArrayItem(json_path(a->body,
	    "spec.template.spec.containers"), 0), "image"), "foo/bar");
	assert_string_equal(a->done_reason, "SuccessfulCreate");
	assert_string_equal(a->done_message, "Created job mycronjob-24394200");
	assert_string_equal(json_string(w->result.status->body, "status.lastScheduleTime"),
	    "2016-05-19T10:00:00Z");
}

/* The Job created by the sync before (the one lastScheduleTime names) enters
 * status.active when the cache has it, with no UnexpectedJob; another unfinished Job of
 * the CronJob's that active lacks is an UnexpectedJob and stays out, unless it is named
 * for a later schedule time (the cache lags the status update of its creation). */
static void
created_job_enters_active(void **state)
{
	struct ctl_world *w = *state;
	static const struct sync_case tc = { "ours", "Allow", 0, ON_THE_HOUR, NULL, NO, -1, 1,
		1, NULL, TOP, TOP, AFTER, 0, 0, 0, 0, 0, 0, 0, NO, 1, 0 };
	static const struct sync_case other = { "other", "Allow", 0, ON_THE_HOUR, NULL, NO, -1,
		1, 1, NULL, AFTER_PRIOR, TOP, AFTER, 0, 0, 0, 0, 0, 0, 0, NO, 0, 0 };
	const cJSON *active;

	ctl_cache(w, resource_find("cronjobs"), row_cronjob(&tc, ""));
	ctl_cache(w, resource_find("jobs"), row_job(&tc, "mycronjob-24394200"));
	ctl_sync(w, "snazzycats/mycronjob", at(AFTER));
	assert_int_equal(w->result.nevents, 0);
	assert_int_equal(w->result.nwrites, 0);
	assert_non_null(w->result.status);
	active = json_path(w->result.status->body, "status.active");
	assert_int_equal(cJSON_GetArraySize(active), 1);
	assert_string_equal(json_string(cJSON_GetArrayItem(active, 0), "uid"), "1234");
	assert_string_equal(json_string(cJSON_GetArrayItem(active, 0), "name"),
	    "mycronjob-24394200");

	ctl_uncache(w, resource_find("jobs"), "1234");
	ctl_cache(w, resource_find("jobs"), row_job(&other, "mycronjob-24394141"));
	ctl_sync(w, "snazzycats/mycronjob", at(AFTER));
	assert_int_equal(w->result.nevents, 1);
	assert_string_equal(w->result.events[0].reason, "UnexpectedJob");
	assert_string_equal(w->result.events[0].message, "Saw a job that the controller did "
	    "not create or forgot: mycronjob-24394141");
	assert_null(w->result.status);

	/* named for a schedule time after lastScheduleTime: created by this controller, its
	 * status update not yet in the cache; left alone, no event */
	ctl_uncache(w, resource_find("jobs"), "1234");
	ctl_cache(w, resource_find("jobs"), row_job(&other, "mycronjob-24394201"));
	ctl_sync(w, "snazzycats/mycronjob", at(AFTER));
	assert_int_equal(w->result.nevents, 0);
	assert_null(w->result.status);
}

/* An active Job gone from the cache: MissingJob, and out of status.active. */
static void
missing_job(void **state)
{
	struct ctl_world *w = *state;
	static const struct sync_case tc = { "missing", "Allow", 0, ON_THE_HOUR, NULL, NO, -1,
		1, 1, NULL, AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 0, 0, NO, 1, 0 };

	ctl_cache(w, resource_find("cronjobs"), row_cronjob(&tc, "mycronjob-24394141"));
	ctl_sync(w, "snazzycats/mycronjob", at(BEFORE));
	assert_int_equal(w->result.nevents, 1);
	assert_string_equal(w->result.events[0].reason, "MissingJob");
	assert_string_equal(w->result.events[0].message,
	    "Active job went missing: mycronjob-24394141");
	assert_non_null(w->result.status);
	assert_null(json_path(w->result.status->body, "status.active"));
}

/* sqlkcm's: the Job deletion a Replace made can reach the cache before the status update
 * that took that Job out of status.active; a sync in between must wait for the update, not
 * report the Job missing. */
static void
waits_for_its_own_status(void **state)
{
	struct ctl_world *w = *state;
	static const struct sync_case tc = { "missing", "Allow", 0, ON_THE_HOUR, NULL, NO, -1,
		1, 1, NULL, AFTER_PRIOR, NULL, BEFORE, 0, 1, 0, 0, 0, 0, 0, NO, 1, 0 };

	ctl_cache(w, resource_find("cronjobs"), row_cronjob(&tc, "mycronjob-24394141"));
	assert_int_equal(consistency_wrote_at(w->c->writes, "snazzycats/mycronjob", "1a2b3c",
	    "cronjobs", "10", &w->error), 0);
	assert_int_equal(store_set_resource_version(w->store, resource_find("cronjobs"), "9",
	    &w->error), 0);
	ctl_sync(w, "snazzycats/mycronjob", at(BEFORE));
	assert_true(w->result.stale);
	assert_string_equal(w->result.stale_resource, "cronjobs");
	assert_int_equal(w->result.nevents, 0);
	assert_null(w->result.status);
	assert_int_equal(store_set_resource_version(w->store, resource_find("cronjobs"), "10",
	    &w->error), 0);
	ctl_sync(w, "snazzycats/mycronjob", at(BEFORE));
	assert_false(w->result.stale);
	assert_int_equal(w->result.nevents, 1);
	assert_string_equal(w->result.events[0].reason, "MissingJob");
}

/* kube's cleanupFinishedJobs: the oldest finished Jobs (by startTime, then name) beyond
 * each limit are deleted in the background; unfinished ones are kept. */
static void
history_limits(void **state)
{
	struct ctl_world *w = *state;
	static const char *const jobs[][3] = {
		/* name, startTime, condition */
		{ "a", "2016-05-19T01:00:00Z", "Complete" },
		{ "b", "2016-05-19T02:00:00Z", "Complete" },
		{ "c", "2016-05-19T00:30:00Z", "Complete" },
		{ "d", NULL, "Complete" },
		{ "e", "2016-05-19T03:00:00Z", "Failed" },
		{ "f", "2016-05-19T04:00:00Z", "Failed" },
		{ "g", "2016-05-19T00:00:00Z", NULL },
	};
	static const char *const want[] = { "c", "a", "e" };

	ctl_cache(w, resource_find("cronjobs"), fixture_parse("{\"metadata\":{\"name\":\"cj\","
	    "\"namespace\":\"n\",\"uid\":\"cj-uid\",\"resourceVersion\":\"1\","
	    "\"creationTimestamp\":\"2016-05-19T00:00:00Z\"},\"spec\":{\"schedule\":"
	    "\"0 0 1 1 *\",\"suspend\":true,\"successfulJobsHistoryLimit\":2,"
	    "\"failedJobsHistoryLimit\":1,\"jobTemplate\":{\"spec\":{}}},\"status\":{}}"));
	for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
		struct buf t;

		buf_init(&t);
		buf_printf(&t, "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"n\",\"uid\":"
		    "\"u-%s\",\"resourceVersion\":\"1\",\"ownerReferences\":[{\"apiVersion\":"
		    "\"batch/v1\",\"kind\":\"CronJob\",\"name\":\"cj\",\"uid\":\"cj-uid\","
		    "\"controller\":true}]},\"status\":{", jobs[i][0], jobs[i][0]);
		if (jobs[i][1] != NULL)
			buf_printf(&t, "\"startTime\":\"%s\",", jobs[i][1]);
		if (jobs[i][2] != NULL)
			buf_printf(&t, "\"conditions\":[{\"type\":\"%s\",\"status\":\"True\"}]",
			    jobs[i][2]);
		else
			buf_append_str(&t, "\"active\":1");
		buf_append_str(&t, "}}");
		ctl_cache(w, resource_find("jobs"), fixture_parse(t.data));
		buf_free(&t);
	}
	ctl_sync(w, "n/cj", at("2016-05-19T12:00:00Z"));
	assert_int_equal(w->result.nwrites, 3);
	for (int i = 0; i < 3; i++) {
		const struct action *a = &w->result.writes[i];

		assert_int_equal(a->type, ACTION_DELETE);
		assert_string_equal(a->name, want[i]);
		assert_string_equal(a->propagation, RESTOPS_PROPAGATE_BACKGROUND);
		assert_string_equal(a->done_reason, "SuccessfulDelete");
	}
	/* g is unfinished and not in active: an UnexpectedJob */
	assert_int_equal(w->result.nevents, 1);
	assert_string_equal(w->result.events[0].reason, "UnexpectedJob");
}

/* A CronJob being deleted: its Jobs reconciled, nothing created or cleaned up. */
static void
deleting_creates_nothing(void **state)
{
	struct ctl_world *w = *state;

	ctl_cache(w, resource_find("cronjobs"), fixture_parse("{\"metadata\":{\"name\":\"cj\","
	    "\"namespace\":\"n\",\"uid\":\"cj-uid\",\"resourceVersion\":\"1\","
	    "\"deletionTimestamp\":\"2016-05-19T00:00:00Z\","
	    "\"creationTimestamp\":\"2016-05-19T00:00:00Z\"},\"spec\":{\"schedule\":"
	    "\"* * * * *\",\"successfulJobsHistoryLimit\":0,\"jobTemplate\":{\"spec\":{}}},"
	    "\"status\":{}}"));
	ctl_sync(w, "n/cj", at("2016-05-19T12:00:00Z"));
	assert_int_equal(w->result.nwrites, 0);
	assert_null(w->result.status);
	assert_true(w->result.requeue_after == 0);
}

/* Bad input: a schedule too often for a second, a hostile zone, a body without a spec. */
static void
bad_input(void **state)
{
	struct ctl_world *w = *state;

	ctl_cache(w, resource_find("cronjobs"), fixture_parse("{\"metadata\":{\"name\":\"cj\","
	    "\"namespace\":\"n\",\"uid\":\"u1\",\"resourceVersion\":\"1\","
	    "\"creationTimestamp\":\"2016-05-19T00:00:00Z\"},\"spec\":{\"schedule\":"
	    "\"* * * * *\",\"timeZone\":\"../../../etc/passwd\"}}"));
	ctl_sync(w, "n/cj", at("2016-05-19T12:00:00Z"));
	assert_int_equal(w->result.nevents, 1);
	assert_string_equal(w->result.events[0].reason, "UnknownTimeZone");
	assert_int_equal(w->result.nwrites, 0);

	ctl_cache(w, resource_find("cronjobs"), fixture_parse("{\"metadata\":{\"name\":\"x\","
	    "\"namespace\":\"n\",\"uid\":\"u2\",\"resourceVersion\":\"1\"},\"spec\":7}"));
	ctl_sync(w, "n/x", at("2016-05-19T12:00:00Z"));
	assert_int_equal(w->result.nevents, 1);
	assert_string_equal(w->result.events[0].reason, "UnparseableSchedule");
	assert_int_equal(w->result.nwrites, 0);
}

/* A CronJob's events queue it, a Job's queue its controlling CronJob; list_keys gives
 * every CronJob. */
static void
events_queue(void **state)
{
	struct ctl_world *w = *state;
	char *keys;

	ctl_tell(w, INFORMER_ADDED, resource_find("jobs"), fixture_parse("{\"metadata\":{"
	    "\"name\":\"j\",\"namespace\":\"n\",\"ownerReferences\":[{\"apiVersion\":"
	    "\"batch/v1\",\"kind\":\"CronJob\",\"name\":\"other\",\"uid\":\"x\"},"
	    "{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"name\":\"cj\",\"uid\":\"y\","
	    "\"controller\":true}]}}"), NULL);
	ctl_tell(w, INFORMER_ADDED, resource_find("jobs"), fixture_parse("{\"metadata\":{"
	    "\"name\":\"k\",\"namespace\":\"n\"}}"), NULL);
	ctl_tell(w, INFORMER_UPDATED, resource_find("cronjobs"), fixture_parse("{\"metadata\":{"
	    "\"name\":\"c2\",\"namespace\":\"m\"}}"), NULL);
	keys = ctl_keys(w);
	assert_string_equal(keys, "n/cj,m/c2");
	free(keys);
}

#define NELEM(a) (sizeof (a) / sizeof (a)[0])

int
main(void)
{
	static const struct {
		const char *name;
		void (*fn)(void **);
		int world;
	} more[] = {
		{ "robfig's Next", next_case, 0 },
		{ "robfig's parser errors", parse_error_case, 0 },
		{ "RFC 3339 in a zone", format_in_zone, 0 },
		{ "kube's mostRecentScheduleTime", recent_case, 0 },
		{ "kube's nextScheduleTimeDuration", duration_case, 0 },
		{ "kube's getJobFromTemplate2", job_from_template, 1 },
		{ "the created Job enters active on the next sync", created_job_enters_active, 1 },
		{ "an active Job gone: MissingJob", missing_job, 1 },
		{ "a sync waits for its own status update", waits_for_its_own_status, 1 },
		{ "the history limits", history_limits, 1 },
		{ "a CronJob being deleted", deleting_creates_nothing, 1 },
		{ "bad input", bad_input, 1 },
		{ "the events that queue a CronJob", events_queue, 1 },
	};
	struct CMUnitTest tests[NELEM(sync_cases) + NELEM(more)];
	size_t n = 0;

	for (size_t i = 0; i < NELEM(more); i++)
		tests[n++] = (struct CMUnitTest){ more[i].name, more[i].fn,
		    more[i].world ? world_setup : NULL, more[i].world ? world_teardown : NULL,
		    NULL };
	for (size_t i = 0; i < NELEM(sync_cases); i++)
		tests[n++] = (struct CMUnitTest){ sync_cases[i].name, sync_case, world_setup,
		    world_teardown, (void *)&sync_cases[i] };
	return _cmocka_run_group_tests("cronjob", tests, n, NULL, NULL);
}
