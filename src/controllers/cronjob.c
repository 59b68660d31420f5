/*
 * cronjob.c - the CronJob controller (kube's cronjob-controller, the v2 one).
 *
 * A key is a CronJob's namespace/name. The sync reads the CronJob and the Jobs it controls
 * from the cache and decides, as kube's sync and syncCronJob do:
 * - the history limits: the oldest finished Jobs beyond successfulJobsHistoryLimit and
 *   failedJobsHistoryLimit (oldest by status.startTime, then name) are deleted in the
 *   background (SuccessfulDelete);
 * - status.active: a finished Job leaves it (SawCompletedJob), a Job gone from the cache
 *   and confirmed gone by a live read
 *   leaves it (MissingJob), an unfinished Job it does not list is reported (UnexpectedJob);
 *   lastSuccessfulTime is the newest completionTime of a Complete Job;
 * - then, unless the CronJob is being deleted, its timeZone is unknown (UnknownTimeZone),
 *   it is suspended or its schedule does not parse (UnparseableSchedule): the most recent
 *   schedule time not yet run (since lastScheduleTime, else creation, else the starting
 *   deadline), with TooManyMissedTimes past 100 missed; MissSchedule when past
 *   startingDeadlineSeconds; JobAlreadyActive under Forbid; under Replace the active Jobs
 *   are deleted first; then the Job <name>-<minutes since the epoch> is created from
 *   jobTemplate with the batch.kubernetes.io/cronjob-scheduled-timestamp annotation
 *   (SuccessfulCreate) and lastScheduleTime set; and the key comes back at the next
 *   schedule time plus 100 ms.
 *
 * Deviations, since a sync does no I/O:
 * - kube puts the Job it created in status.active in the same status update, with the
 *   uid the create returned. sqlkcm's sync cannot know that uid: the update sets
 *   lastScheduleTime only, and the sync that sees the new Job in the cache (its create
 *   brings the key back) lists it in active. That Job is known as ours by its name (the
 *   one lastScheduleTime gives) and its controller reference, and gets no UnexpectedJob;
 *   the same is kube's AlreadyExists branch, where a Job of ours that active lacks is
 *   added to it. A Job named for a schedule time later than the cached lastScheduleTime
 *   is one whose status update the cache has not seen yet (the Job's watch event came
 *   first): it is left alone until that update arrives, where kube's live read of the
 *   CronJob finds it in active.
 * - kube reads the CronJob live before reporting an UnexpectedJob, and reads an active
 *   Job live before dropping it as missing; sqlkcm trusts the cache for both.
 * - A schedule with no TZ= prefix and no timeZone runs in UTC (kube: the process's local
 *   zone, UTC in its images).
 * - a time zone other than UTC is applied with TZ and localtime_r/mktime, TZ restored
 *   after each computation, under a lock; nothing else in sqlkcm reads local time.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "consistency.h"
#include "controllers/cronjob.h"
#include "json.h"
#include "resource.h"
#include "restops.h"
#include "timeutil.h"
#include "util.h"

/* --- the parser (robfig/cron's standard one) ------------------------------------------- */

struct bounds {
	unsigned min, max;
	const char *const *names;	/* lowercase names, index = value - names_base */
	unsigned names_base;
	int nnames;
};

static const char *const month_names[] = { "jan", "feb", "mar", "apr", "may", "jun", "jul",
	"aug", "sep", "oct", "nov", "dec" };
static const char *const dow_names[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat" };

static const struct bounds b_minutes = { 0, 59, NULL, 0, 0 };
static const struct bounds b_hours = { 0, 23, NULL, 0, 0 };
static const struct bounds b_dom = { 1, 31, NULL, 0, 0 };
static const struct bounds b_months = { 1, 12, month_names, 1, 12 };
static const struct bounds b_dow = { 0, 6, dow_names, 0, 7 };

static uint64_t
bits_of(unsigned min, unsigned max, unsigned step)
{
	uint64_t bits = 0;

	for (unsigned i = min; i <= max; i += step)
		bits |= UINT64_C(1) << i;
	return bits;
}

static uint64_t
all_of(const struct bounds *r)
{
	return bits_of(r->min, r->max, 1) | CRON_STAR;
}

/* strconv.Atoi then robfig's checks: a number, not negative. */
static int
parse_uint(const char *s, size_t n, const char *expr, unsigned *out, char **error)
{
	char buf[32];
	size_t i = 0;
	long long v = 0;
	int neg = 0;

	if (n >= sizeof buf)
		return error_set(error, "failed to parse int from %.*s: value out of range",
		    (int)n, s);
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (buf[0] == '+' || buf[0] == '-')
		neg = buf[i++] == '-';
	if (buf[i] == '\0')
		return error_set(error, "failed to parse int from %s: strconv.Atoi: parsing "
		    "\"%s\": invalid syntax", buf, buf);
	for (; buf[i] != '\0'; i++) {
		if (!isdigit((unsigned char)buf[i]))
			return error_set(error, "failed to parse int from %s: strconv.Atoi: "
			    "parsing \"%s\": invalid syntax", buf, buf);
		v = v * 10 + (buf[i] - '0');
		if (v > INT_MAX)
			return error_set(error, "failed to parse int from %s: value out of range",
			    buf);
	}
	if (neg && v != 0)
		return error_set(error, "negative number (-%lld) not allowed: %s", v, expr);
	*out = (unsigned)v;
	return 0;
}

static int
parse_int_or_name(const char *s, size_t n, const struct bounds *r, const char *expr,
    unsigned *out, char **error)
{
	for (int i = 0; i < r->nnames; i++) {
		if (strlen(r->names[i]) == n && strncasecmp(s, r->names[i], n) == 0) {
			*out = r->names_base + (unsigned)i;
			return 0;
		}
	}
	return parse_uint(s, n, expr, out, error);
}

/* One comma-separated part of a field: *, ?, a, a-b, each with an optional /step. */
static int
parse_range(const char *expr, const struct bounds *r, uint64_t *bits, char **error)
{
	const char *slash = strchr(expr, '/');
	size_t rlen = slash != NULL ? (size_t)(slash - expr) : strlen(expr);
	const char *hyphen = memchr(expr, '-', rlen);
	unsigned start, end, step = 1;
	uint64_t extra = 0;
	int single = hyphen == NULL;

	if (slash != NULL && strchr(slash + 1, '/') != NULL)
		return error_set(error, "too many slashes: %s", expr);
	if (rlen == 1 && (expr[0] == '*' || expr[0] == '?')) {
		start = r->min;
		end = r->max;
		extra = CRON_STAR;
	} else {
		size_t lo = hyphen != NULL ? (size_t)(hyphen - expr) : rlen;

		if (hyphen != NULL && memchr(hyphen + 1, '-', rlen - lo - 1) != NULL)
			return error_set(error, "too many hyphens: %s", expr);
		if (parse_int_or_name(expr, lo, r, expr, &start, error) != 0)
			return -1;
		end = start;
		if (hyphen != NULL && parse_int_or_name(hyphen + 1, rlen - lo - 1, r, expr, &end,
		    error) != 0)
			return -1;
	}
	if (slash != NULL) {
		if (parse_uint(slash + 1, strlen(slash + 1), expr, &step, error) != 0)
			return -1;
		if (single)
			end = r->max;
		if (step > 1)
			extra = 0;
	}
	if (start < r->min)
		return error_set(error, "beginning of range (%u) below minimum (%u): %s", start,
		    r->min, expr);
	if (end > r->max)
		return error_set(error, "end of range (%u) above maximum (%u): %s", end, r->max,
		    expr);
	if (start > end)
		return error_set(error, "beginning of range (%u) beyond end of range (%u): %s",
		    start, end, expr);
	if (step == 0)
		return error_set(error, "step of range should be a positive number: %s", expr);
	*bits |= bits_of(start, end, step) | extra;
	return 0;
}

static int
parse_field(const char *field, const struct bounds *r, uint64_t *bits, char **error)
{
	char *copy = xstrdup(field), *save = NULL;
	int rc = 0;

	*bits = 0;
	for (char *p = strtok_r(copy, ",", &save); p != NULL && rc == 0;
	    p = strtok_r(NULL, ",", &save))
		rc = parse_range(p, r, bits, error);
	free(copy);
	return rc;
}

static int
parse_descriptor(const char *d, struct cron_schedule *s, char **error)
{
	s->second = 1;
	s->minute = 1;
	s->hour = 1;
	s->dom = all_of(&b_dom);
	s->month = all_of(&b_months);
	s->dow = all_of(&b_dow);
	if (strcmp(d, "@yearly") == 0 || strcmp(d, "@annually") == 0) {
		s->dom = UINT64_C(1) << 1;
		s->month = UINT64_C(1) << 1;
	} else if (strcmp(d, "@monthly") == 0) {
		s->dom = UINT64_C(1) << 1;
	} else if (strcmp(d, "@weekly") == 0) {
		s->dow = 1;
	} else if (strcmp(d, "@daily") == 0 || strcmp(d, "@midnight") == 0) {
		/* the defaults */
	} else if (strcmp(d, "@hourly") == 0) {
		s->hour = all_of(&b_hours);
	} else if (strncmp(d, "@every ", 7) == 0) {
		double seconds;

		if (time_parse_duration(d + 7, &seconds) != 0)
			return error_set(error, "failed to parse duration %s: time: invalid "
			    "duration \"%s\"", d, d + 7);
		/* robfig's Every: at least a second, in whole seconds */
		s->every = seconds < 1 ? 1 : seconds > 1e12 ? (int64_t)1e12 : (int64_t)seconds;
	} else {
		return error_set(error, "unrecognized descriptor: %s", d);
	}
	return 0;
}

int
cron_parse(const char *spec, struct cron_schedule *s, char **error)
{
	char *copy, *fields[6], *save = NULL;
	const char *p = spec;
	int n = 0, rc;

	memset(s, 0, sizeof *s);
	if (*spec == '\0')
		return error_set(error, "empty spec string");
	if (strncmp(spec, "TZ=", 3) == 0 || strncmp(spec, "CRON_TZ=", 8) == 0) {
		const char *eq = strchr(spec, '='), *sp = strchr(spec, ' ');
		char *zerr = NULL;

		if (sp == NULL || (size_t)(sp - eq - 1) >= sizeof s->zone)
			return error_set(error, "provided bad location %s: unknown time zone",
			    eq + 1);
		memcpy(s->zone, eq + 1, (size_t)(sp - eq - 1));
		s->zone[sp - eq - 1] = '\0';
		if (cron_zone_check(s->zone, &zerr) != 0) {
			error_set(error, "provided bad location %s: %s", s->zone, zerr);
			free(zerr);
			return -1;
		}
		for (p = sp; *p == ' ' || *p == '\t'; p++)
			;
	}
	if (*p == '@')
		return parse_descriptor(p, s, error);
	copy = xstrdup(p);
	for (char *f = strtok_r(copy, " \t\n\r\v\f", &save); f != NULL;
	    f = strtok_r(NULL, " \t\n\r\v\f", &save)) {
		if (n < 6)
			fields[n] = f;
		n++;
	}
	if (n != 5) {
		free(copy);
		return error_set(error, "expected exactly 5 fields, found %d: %s", n, p);
	}
	s->second = 1;
	rc = parse_field(fields[0], &b_minutes, &s->minute, error);
	if (rc == 0)
		rc = parse_field(fields[1], &b_hours, &s->hour, error);
	if (rc == 0)
		rc = parse_field(fields[2], &b_dom, &s->dom, error);
	if (rc == 0)
		rc = parse_field(fields[3], &b_months, &s->month, error);
	if (rc == 0)
		rc = parse_field(fields[4], &b_dow, &s->dow, error);
	free(copy);
	return rc;
}

/* --- time zones ------------------------------------------------------------------------ */

static pthread_mutex_t zone_lock = PTHREAD_MUTEX_INITIALIZER;

int
cron_zone_check(const char *zone, char **error)
{
	char path[512];
	char magic[4];
	FILE *f;

	if (zone == NULL || *zone == '\0' || strcmp(zone, "UTC") == 0)
		return 0;
	if (strcmp(zone, "Local") == 0)
		return 0;
	if (zone[0] == '/' || strstr(zone, "..") != NULL || strchr(zone, '\\') != NULL ||
	    strlen(zone) > 100)
		return error_set(error, "time: invalid location name");
	snprintf(path, sizeof path, "/usr/share/zoneinfo/%s", zone);
	f = fopen(path, "rb");
	if (f == NULL)
		return error_set(error, "unknown time zone %s", zone);
	if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "TZif", 4) != 0) {
		fclose(f);
		return error_set(error, "unknown time zone %s", zone);
	}
	fclose(f);
	return 0;
}

/* Whether the zone entered is UTC: then gmtime_r and timegm, and TZ is left alone. */
static int zone_utc;

/* Makes zone the local one until zone_leave; *saved keeps what TZ was. */
static void
zone_enter(const char *zone, char **saved)
{
	const char *old;

	pthread_mutex_lock(&zone_lock);
	*saved = NULL;
	zone_utc = zone == NULL || *zone == '\0' || strcmp(zone, "UTC") == 0 ||
	    strcmp(zone, "Local") == 0;
	if (zone_utc)
		return;
	old = getenv("TZ");
	*saved = old != NULL ? xstrdup(old) : NULL;
	setenv("TZ", zone, 1);
	tzset();
}

static void
zone_leave(char *saved)
{
	if (!zone_utc) {
		if (saved != NULL)
			setenv("TZ", saved, 1);
		else
			unsetenv("TZ");
		tzset();
	}
	free(saved);
	pthread_mutex_unlock(&zone_lock);
}

/* t's fields in the zone entered. */
static void
zone_tm(time_t t, struct tm *tm)
{
	if (zone_utc)
		gmtime_r(&t, tm);
	else
		localtime_r(&t, tm);
}

/* Go's time.Date in the zone entered: fields normalised, DST chosen by mktime. */
static time_t
date_of(int year, int mon, int mday, int hour, int min, int sec)
{
	struct tm tm = { 0 };

	tm.tm_year = year;
	tm.tm_mon = mon;
	tm.tm_mday = mday;
	tm.tm_hour = hour;
	tm.tm_min = min;
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	return zone_utc ? timegm(&tm) : mktime(&tm);
}

static int
day_matches(const struct cron_schedule *s, const struct tm *tm)
{
	int dom = (s->dom >> tm->tm_mday) & 1, dow = (s->dow >> tm->tm_wday) & 1;

	if ((s->dom & CRON_STAR) || (s->dow & CRON_STAR))
		return dom && dow;
	return dom || dow;
}

/* robfig's SpecSchedule.Next, in the current zone. */
static int64_t
next_locked(const struct cron_schedule *s, time_t t)
{
	struct tm tm;
	int added = 0, year_limit;

	t += 1;
	zone_tm(t, &tm);
	year_limit = tm.tm_year + 5;
wrap:
	zone_tm(t, &tm);
	if (tm.tm_year > year_limit)
		return 0;
	while (((s->month >> (tm.tm_mon + 1)) & 1) == 0) {
		if (!added) {
			added = 1;
			t = date_of(tm.tm_year, tm.tm_mon, 1, 0, 0, 0);
			zone_tm(t, &tm);
		}
		t = date_of(tm.tm_year, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		    tm.tm_sec);
		zone_tm(t, &tm);
		if (tm.tm_mon == 0)
			goto wrap;
	}
	while (!day_matches(s, &tm)) {
		if (!added) {
			added = 1;
			t = date_of(tm.tm_year, tm.tm_mon, tm.tm_mday, 0, 0, 0);
			zone_tm(t, &tm);
		}
		t = date_of(tm.tm_year, tm.tm_mon, tm.tm_mday + 1, tm.tm_hour, tm.tm_min,
		    tm.tm_sec);
		zone_tm(t, &tm);
		/* a day that starts in a DST change: back to midnight, as robfig does */
		if (tm.tm_hour != 0) {
			if (tm.tm_hour > 12)
				t += (time_t)(24 - tm.tm_hour) * 3600;
			else
				t -= (time_t)tm.tm_hour * 3600;
			zone_tm(t, &tm);
		}
		if (tm.tm_mday == 1)
			goto wrap;
	}
	while (((s->hour >> tm.tm_hour) & 1) == 0) {
		if (!added) {
			added = 1;
			t = date_of(tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, 0, 0);
		}
		t += 3600;
		zone_tm(t, &tm);
		if (tm.tm_hour == 0)
			goto wrap;
	}
	while (((s->minute >> tm.tm_min) & 1) == 0) {
		if (!added) {
			added = 1;
			t -= tm.tm_sec;
		}
		t += 60;
		zone_tm(t, &tm);
		if (tm.tm_min == 0)
			goto wrap;
	}
	while (((s->second >> tm.tm_sec) & 1) == 0) {
		added = 1;
		t += 1;
		zone_tm(t, &tm);
		if (tm.tm_sec == 0)
			goto wrap;
	}
	return (int64_t)t;
}

int64_t
cron_next(const struct cron_schedule *s, const char *zone, double t)
{
	char *saved;
	int64_t r;

	if (!isfinite(t) || t > 1e15 || t < -1e15)
		return 0;
	if (s->every > 0)
		return (int64_t)floor(t) + s->every;
	zone_enter(zone, &saved);
	r = next_locked(s, (time_t)floor(t));
	zone_leave(saved);
	return r;
}

void
cron_format_in_zone(int64_t t, const char *zone, char out[40])
{
	char *saved;
	struct tm tm;
	time_t tt = (time_t)t;
	long off;

	zone_enter(zone, &saved);
	zone_tm(tt, &tm);
	zone_leave(saved);
	off = tm.tm_gmtoff;
	if (off == 0) {
		strftime(out, 40, "%Y-%m-%dT%H:%M:%SZ", &tm);
		return;
	}
	strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + strlen(out), 40 - strlen(out), "%c%02ld:%02ld", off < 0 ? '-' : '+',
	    labs(off) / 3600, (labs(off) % 3600) / 60);
}

/* --- the rules ------------------------------------------------------------------------- */

static double
time_of(const cJSON *o, const char *path, double def)
{
	time_t t;
	const char *s = json_string(o, path);

	if (*s == '\0' || time_parse_rfc3339(s, &t) != 0)
		return def;
	return (double)t;
}

int
cronjob_most_recent(const cJSON *cj, const struct cron_schedule *s, const char *zone,
    double now, int with_deadline, double *earliest, int64_t *recent, int *missed)
{
	const cJSON *deadline = json_path(cj, "spec.startingDeadlineSeconds");
	int64_t t1, t2, between, elapsed, n, t, most = 0;

	*earliest = time_of(cj, "status.lastScheduleTime",
	    time_of(cj, "metadata.creationTimestamp", 0));
	*recent = 0;
	*missed = 0;
	if (with_deadline && cJSON_IsNumber(deadline) && now - deadline->valuedouble > *earliest)
		*earliest = now - deadline->valuedouble;
	t1 = cron_next(s, zone, *earliest);
	t2 = cron_next(s, zone, (double)t1);
	/* 0 is robfig's zero time (no such time within five years), before any now */
	if (t1 != 0 && now < (double)t1)
		return 0;
	if (t2 != 0 && now < (double)t2) {
		*recent = t1;
		return 0;
	}
	between = t2 - t1;
	if (t1 == 0 || t2 == 0 || between < 1)
		return -1;
	elapsed = (int64_t)(now - (double)t1);
	n = elapsed / between + 1;
	for (t = cron_next(s, zone, (double)(t1 + (n - 2) * between)); t != 0 && (double)t <= now;
	    t = cron_next(s, zone, (double)t))
		most = t;
	*missed = n > 100 ? 2 : n > 0 ? 1 : 0;
	*recent = most;
	return 0;
}

double
cronjob_next_duration(const cJSON *cj, const struct cron_schedule *s, const char *zone,
    double now)
{
	double earliest, from;
	int64_t recent, next;
	int missed;

	if (cronjob_most_recent(cj, s, zone, now, 0, &earliest, &recent, &missed) != 0)
		from = now;
	else if (recent == 0)
		from = missed == 0 ? earliest : now;
	else
		from = (double)recent;
	next = cron_next(s, zone, from);
	return (double)next + 0.1 - now;
}

/* --- sync ------------------------------------------------------------------------------ */

enum {
	STMT_CRONJOB,
	STMT_JOBS,
	STMT_KEYS,
	STMT_COUNT
};

static const char *const cronjob_sql[STMT_COUNT] = {
	/* CronJob ?2 in namespace ?1: uid, whether it is being deleted, body. */
	[STMT_CRONJOB] =
	    "SELECT uid, deletion_timestamp IS NOT NULL, body FROM cache_objects"
	    " WHERE resource = 'cronjobs' AND namespace = ?1 AND name = ?2",
	/* The Jobs in namespace ?2 whose controller is the CronJob of uid ?1, and whether
	 * each is past its history limit (schema/024-cronjob.sql), by name. */
	[STMT_JOBS] =
	    "SELECT job_uid, job, resource_version, body, beyond_limit, history_rank"
	    " FROM cronjob_jobs WHERE cronjob_uid = ?1 AND namespace = ?2 ORDER BY job",
	[STMT_KEYS] =
	    "SELECT namespace, name FROM cache_objects WHERE resource = 'cronjobs'"
	    " ORDER BY namespace, name",
};

struct cronjob_state {
	sqlite3_stmt *stmt[STMT_COUNT];
	const struct resource *cronjobs, *jobs;
};

struct job {
	char *uid, *name, *rv;
	cJSON *body;
	const char *finished;		/* "Complete", "Failed" or NULL */
	int deleted;			/* deleted by this sync (history) */
	int beyond;			/* past its history limit (cronjob_jobs) */
	long long rank;			/* its history_rank, 1 the newest */
};

static const char *
finished_type(const cJSON *job)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_path(job, "status.conditions")) {
		const char *type = json_string(c, "type");

		if ((strcmp(type, "Complete") == 0 || strcmp(type, "Failed") == 0) &&
		    strcmp(json_string(c, "status"), "True") == 0)
			return strcmp(type, "Complete") == 0 ? "Complete" : "Failed";
	}
	return NULL;
}

static int
active_index(const cJSON *active, const char *uid)
{
	int i = 0;
	const cJSON *ref;

	cJSON_ArrayForEach(ref, active) {
		if (strcmp(json_string(ref, "uid"), uid) == 0)
			return i;
		i++;
	}
	return -1;
}

static void
add_delete(struct cronjob_state *st, struct sync_result *out, const char *ns,
    const char *name, const char *uid, const char *why)
{
	struct action *a = action_append(&out->writes, &out->nwrites);

	a->type = ACTION_DELETE;
	a->verb = "delete";
	a->resource = st->jobs;
	a->namespace = xstrdup(ns);
	a->name = xstrdup(name);
	a->uid = uid != NULL && *uid != '\0' ? xstrdup(uid) : NULL;
	a->propagation = RESTOPS_PROPAGATE_BACKGROUND;
	a->reason = xstrdup(why);
	a->done_reason = "SuccessfulDelete";
	a->done_message = xasprintf("Deleted job %s", name);
	a->failed_reason = "FailedDelete";
	a->failed_prefix = "Deleted job: ";
}

/* kube's removeOldestJobs over the finished Jobs of one kind: those cronjob_jobs puts
 * beyond the limit, oldest (highest history_rank) first. */
static int
remove_oldest(struct cronjob_state *st, struct sync_result *out, const char *ns,
    struct job *jobs, int n, const char *kind)
{
	int removed = 0;

	for (;;) {
		struct job *oldest = NULL;

		for (int i = 0; i < n; i++) {
			struct job *j = &jobs[i];

			if (j->beyond && !j->deleted && j->finished != NULL &&
			    strcmp(j->finished, kind) == 0 &&
			    (oldest == NULL || j->rank > oldest->rank))
				oldest = j;
		}
		if (oldest == NULL)
			return removed;
		add_delete(st, out, ns, oldest->name, oldest->uid,
		    strcmp(kind, "Complete") == 0 ? "beyond successfulJobsHistoryLimit" :
		    "beyond failedJobsHistoryLimit");
		oldest->deleted = 1;
		removed++;
	}
}

static char *
job_name(const char *cj, int64_t scheduled)
{
	/* kube's getTimeHashInMinutes: Go's division truncates towards zero */
	return xasprintf("%s-%lld", cj, (long long)(scheduled / 60));
}

/* 1 when job is named as this controller names the Job of a schedule time later than
 * last (0: no lastScheduleTime), i.e. "<cronjob>-<minutes>" with minutes * 60 > last. */
static int
named_after(const char *cj, const char *job, int64_t last)
{
	size_t n = strlen(cj);
	const char *p = job + n + 1;
	char *end;
	long long minutes;

	if (strncmp(job, cj, n) != 0 || job[n] != '-' || !isdigit((unsigned char)*p))
		return 0;
	errno = 0;
	minutes = strtoll(p, &end, 10);
	if (*end != '\0' || errno != 0 || minutes > INT64_MAX / 60)
		return 0;
	return last == 0 || minutes * 60 > last;
}

static cJSON *
active_ref(const char *ns, const char *name, const char *uid, const char *rv)
{
	cJSON *ref = cJSON_CreateObject();

	cJSON_AddStringToObject(ref, "kind", "Job");
	cJSON_AddStringToObject(ref, "namespace", ns);
	cJSON_AddStringToObject(ref, "name", name);
	cJSON_AddStringToObject(ref, "uid", uid);
	cJSON_AddStringToObject(ref, "apiVersion", "batch/v1");
	cJSON_AddStringToObject(ref, "resourceVersion", rv);
	return ref;
}

/* kube's getJobFromTemplate2. */
static cJSON *
job_from_template(const cJSON *cj, const char *ns, const char *name, const char *uid,
    const char *zone, int64_t scheduled)
{
	cJSON *job = cJSON_CreateObject(), *meta, *ann, *ref, *refs;
	const cJSON *labels = json_path(cj, "spec.jobTemplate.metadata.labels");
	const cJSON *annotations = json_path(cj, "spec.jobTemplate.metadata.annotations");
	const cJSON *spec = json_path(cj, "spec.jobTemplate.spec");
	char *jname = job_name(name, scheduled), stamp[40];

	cJSON_AddStringToObject(job, "apiVersion", "batch/v1");
	cJSON_AddStringToObject(job, "kind", "Job");
	meta = cJSON_AddObjectToObject(job, "metadata");
	cJSON_AddStringToObject(meta, "name", jname);
	cJSON_AddStringToObject(meta, "namespace", ns);
	if (cJSON_IsObject(labels))
		cJSON_AddItemToObject(meta, "labels", cJSON_Duplicate(labels, 1));
	ann = cJSON_IsObject(annotations) ? cJSON_Duplicate(annotations, 1) : cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(ann,
	    "batch.kubernetes.io/cronjob-scheduled-timestamp");
	cron_format_in_zone(scheduled, zone, stamp);
	cJSON_AddStringToObject(ann, "batch.kubernetes.io/cronjob-scheduled-timestamp", stamp);
	cJSON_AddItemToObject(meta, "annotations", ann);
	refs = cJSON_AddArrayToObject(meta, "ownerReferences");
	ref = cJSON_CreateObject();
	cJSON_AddStringToObject(ref, "apiVersion", "batch/v1");
	cJSON_AddStringToObject(ref, "kind", "CronJob");
	cJSON_AddStringToObject(ref, "name", name);
	cJSON_AddStringToObject(ref, "uid", uid);
	cJSON_AddBoolToObject(ref, "controller", 1);
	cJSON_AddBoolToObject(ref, "blockOwnerDeletion", 1);
	cJSON_AddItemToArray(refs, ref);
	cJSON_AddItemToObject(job, "spec", cJSON_IsObject(spec) ? cJSON_Duplicate(spec, 1) :
	    cJSON_CreateObject());
	free(jname);
	return job;
}

static void
set_time(cJSON *status, const char *field, int64_t t)
{
	char buf[TIME_RFC3339_SIZE];

	time_format_rfc3339((time_t)t, buf);
	cJSON_DeleteItemFromObjectCaseSensitive(status, field);
	cJSON_AddStringToObject(status, field, buf);
}

static void
event(struct sync_result *out, const char *type, const char *reason, char *message)
{
	sync_result_add_event(out, type, reason, message);
}

/* kube's syncCronJob after the Jobs are reconciled: whether to create, and when to come
 * back. Returns with *status changed and *update set as kube's updateStatus. */
static void
schedule(struct cronjob_state *st, struct sync_result *out, const char *ns, const char *name,
    const cJSON *cj, cJSON *status, double now, int *update)
{
	const cJSON *tzv = json_path(cj, "spec.timeZone");
	const char *tz = cJSON_IsString(tzv) ? tzv->valuestring : NULL;
	const char *spec = json_string(cj, "spec.schedule");
	const char *policy = json_string(cj, "spec.concurrencyPolicy");
	const cJSON *deadline = json_path(cj, "spec.startingDeadlineSeconds");
	const cJSON *active = json_path(status, "active");
	struct cron_schedule s;
	const char *zone;
	char *err = NULL, *jname;
	double earliest;
	int64_t recent;
	int missed;
	struct action *a;
	char when[64];
	struct tm tm;
	time_t tt;

	if (tz != NULL && cron_zone_check(tz, &err) != 0) {
		event(out, "Warning", "UnknownTimeZone", xasprintf("invalid timeZone: %s: %s",
		    tz, err));
		free(err);
		return;
	}
	if (cJSON_IsTrue(json_path(cj, "spec.suspend")))
		return;
	if (strstr(spec, "TZ") != NULL)
		event(out, "Warning", "UnsupportedSchedule", xasprintf("CRON_TZ or TZ used in "
		    "schedule \"%s\" is not officially supported, see "
		    "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for "
		    "more details", spec));
	if (cron_parse(spec, &s, &err) != 0) {
		event(out, "Warning", "UnparseableSchedule", xasprintf("unparseable schedule: "
		    "\"%s\" : %s", spec, err));
		free(err);
		return;
	}
	zone = s.zone[0] != '\0' ? s.zone : tz;
	if (cronjob_most_recent(cj, &s, zone, now, 1, &earliest, &recent, &missed) != 0) {
		event(out, "Warning", "InvalidSchedule", xasprintf("invalid schedule: %s : "
		    "time difference between two schedules is less than 1 second", spec));
		return;
	}
	if (recent == 0 || (double)recent > now) {
		out->requeue_after = cronjob_next_duration(cj, &s, zone, now);
		return;
	}
	if (missed == 2)
		event(out, "Warning", "TooManyMissedTimes", xstrdup("too many missed start "
		    "times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"));
	if (cJSON_IsNumber(deadline) && (double)recent + deadline->valuedouble < now) {
		tt = (time_t)recent;
		gmtime_r(&tt, &tm);
		strftime(when, sizeof when, "%a, %d %b %Y %H:%M:%S +0000", &tm);
		event(out, "Warning", "MissSchedule",
		    xasprintf("Missed scheduled time to start a job: %s", when));
		out->requeue_after = cronjob_next_duration(cj, &s, zone, now);
		return;
	}
	jname = job_name(name, recent);
	{
		const cJSON *ref;
		int processed = strcmp(json_string(status, "lastScheduleTime"), "") != 0 &&
		    time_of(status, "lastScheduleTime", -1) == (double)recent;

		cJSON_ArrayForEach(ref, active) {
			if (strcmp(json_string(ref, "name"), jname) == 0 &&
			    strcmp(json_string(ref, "namespace"), ns) == 0)
				processed = 1;
		}
		if (processed) {
			free(jname);
			out->requeue_after = cronjob_next_duration(cj, &s, zone, now);
			return;
		}
	}
	if (strcmp(policy, "Forbid") == 0 && cJSON_GetArraySize(active) > 0) {
		event(out, "Normal", "JobAlreadyActive", xstrdup("Not starting job because "
		    "prior execution is running and concurrency policy is Forbid"));
		free(jname);
		out->requeue_after = cronjob_next_duration(cj, &s, zone, now);
		return;
	}
	if (strcmp(policy, "Replace") == 0) {
		const cJSON *ref;

		cJSON_ArrayForEach(ref, active)
			add_delete(st, out, json_string(ref, "namespace"), json_string(ref, "name"),
			    json_string(ref, "uid"), "still running at the next scheduled time");
		if (cJSON_GetArraySize(active) > 0) {
			cJSON_ReplaceItemInObjectCaseSensitive(status, "active",
			    cJSON_CreateArray());
			*update = 1;
		}
	}
	a = action_append(&out->writes, &out->nwrites);
	a->type = ACTION_CREATE;
	a->verb = "create";
	a->resource = st->jobs;
	a->namespace = xstrdup(ns);
	a->name = xstrdup(jname);
	a->body = job_from_template(cj, ns, name, out->owner_uid, tz, recent);
	a->reason = xstrdup("scheduled");
	a->done_reason = "SuccessfulCreate";
	a->done_message = xasprintf("Created job %s", jname);
	a->failed_reason = "FailedCreate";
	a->failed_prefix = "Error creating job: ";
	a->exists_ok = 1;
	free(jname);
	set_time(status, "lastScheduleTime", recent);
	*update = 1;
	{
		/* the next schedule is counted from the one just taken */
		cJSON *copy = cJSON_Duplicate(cj, 1);

		json_set(copy, "status", cJSON_Duplicate(status, 1));
		out->requeue_after = cronjob_next_duration(copy, &s, zone, now);
		cJSON_Delete(copy);
	}
}

static int
cronjob_sync(struct controller *c, const char *key, double now, struct sync_result *out,
    char **error)
{
	struct cronjob_state *st = c->state;
	sqlite3_stmt *stmt = controller_stmt(st->stmt[STMT_CRONJOB]);
	struct job *jobs = NULL;
	int njobs = 0, rc, caught_up, deleting = 0, update = 0;
	char *ns;
	const char *name;
	cJSON *status, *active;
	double last_success;
	int have_success;
	int64_t last_scheduled = 0;
	char *ours = NULL;

	out->controller = c->type->name;
	out->key = xstrdup(key);
	out->owner_resource = st->cronjobs;
	if (controller_key_split(key, &ns, &name) != 0)
		return error_set(error, "cronjob: %s is not a namespace/name key", key);
	sqlite3_bind_text(stmt, 1, ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		out->owner_uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		deleting = sqlite3_column_int(stmt, 1);
		out->owner = controller_column_json(stmt, 2);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_ROW) {
		free(ns);
		if (rc == SQLITE_DONE) {
			out->forget_expectations = 1;
			return 0;
		}
		return error_set(error, "cronjob: reading %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
	}
	if (out->owner == NULL) {
		free(ns);
		return error_set(error, "cronjob: %s: the cached body is not JSON", key);
	}
	/* A sync that reads this CronJob before its own last status update comes back
	 * would take the Jobs it has just replaced or removed for active ones gone missing
	 * (MissingJob); it waits for the cache instead. */
	if ((caught_up = controller_caught_up(c, key, out->owner_uid, out, error)) <= 0) {
		free(ns);
		return caught_up;
	}

	stmt = controller_stmt(st->stmt[STMT_JOBS]);
	sqlite3_bind_text(stmt, 1, out->owner_uid, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, ns, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		struct job *j;

		if (njobs % 16 == 0)
			jobs = xrealloc(jobs, (size_t)(njobs + 16) * sizeof *jobs);
		j = &jobs[njobs++];
		memset(j, 0, sizeof *j);
		j->uid = xstrdup((const char *)sqlite3_column_text(stmt, 0));
		j->name = xstrdup((const char *)sqlite3_column_text(stmt, 1));
		j->rv = xstrdup((const char *)sqlite3_column_text(stmt, 2));
		j->body = controller_column_json(stmt, 3);
		if (j->body == NULL)
			j->body = cJSON_CreateObject();
		j->finished = finished_type(j->body);
		j->beyond = sqlite3_column_int(stmt, 4);
		j->rank = sqlite3_column_int64(stmt, 5);
	}
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE) {
		error_set(error, "cronjob: reading the jobs of %s: %s", key,
		    sqlite3_errmsg(store_db(c->store)));
		goto fail;
	}

	status = cJSON_Duplicate(json_path(out->owner, "status"), 1);
	if (!cJSON_IsObject(status)) {
		cJSON_Delete(status);
		status = cJSON_CreateObject();
	}
	active = cJSON_GetObjectItemCaseSensitive(status, "active");
	if (!cJSON_IsArray(active)) {
		cJSON_DeleteItemFromObjectCaseSensitive(status, "active");
		active = cJSON_AddArrayToObject(status, "active");
	}

	/* kube's cleanupFinishedJobs, before the sync (and not for a CronJob going away) */
	if (!deleting)
		update |= remove_oldest(st, out, ns, jobs, njobs, "Complete") +
		    remove_oldest(st, out, ns, jobs, njobs, "Failed") > 0;

	if (strcmp(json_string(status, "lastScheduleTime"), "") != 0) {
		last_scheduled = (int64_t)time_of(status, "lastScheduleTime", 0);
		ours = job_name(name, last_scheduled);
	}
	have_success = cJSON_IsString(json_path(status, "lastSuccessfulTime"));
	last_success = time_of(status, "lastSuccessfulTime", 0);
	for (int i = 0; i < njobs; i++) {
		struct job *j = &jobs[i];
		int at = active_index(active, j->uid);

		if (at < 0 && j->finished == NULL) {
			if (ours != NULL && strcmp(j->name, ours) == 0) {
				/* the Job this controller created last (see the top) */
				cJSON_AddItemToArray(active, active_ref(ns, j->name, j->uid, j->rv));
				update = 1;
				continue;
			}
			if (named_after(name, j->name, last_scheduled))
				/* created by this controller for a later schedule time: the
				 * cache has the Job but not yet the status update that set
				 * lastScheduleTime, which brings the key back */
				continue;
			event(out, "Warning", "UnexpectedJob", xasprintf("Saw a job that the "
			    "controller did not create or forgot: %s", j->name));
		} else if (j->finished != NULL) {
			if (at >= 0) {
				cJSON_DeleteItemFromArray(active, at);
				event(out, "Normal", "SawCompletedJob", xasprintf("Saw completed "
				    "job: %s, condition: %s", j->name, j->finished));
				update = 1;
			}
			if (strcmp(j->finished, "Complete") == 0) {
				double done = time_of(j->body, "status.completionTime", 0);

				if (cJSON_IsString(json_path(j->body, "status.completionTime")) &&
				    (!have_success || done > last_success)) {
					have_success = 1;
					last_success = done;
					set_time(status, "lastSuccessfulTime", (int64_t)done);
					update = 1;
				}
			}
		}
	}
	free(ours);
	/* active Jobs gone from the cache */
	for (int i = cJSON_GetArraySize(active) - 1; i >= 0; i--) {
		const cJSON *ref = cJSON_GetArrayItem(active, i);
		const char *uid = json_string(ref, "uid");
		int found = 0;

		for (int k = 0; k < njobs && !found; k++)
			found = strcmp(jobs[k].uid, uid) == 0;
		if (found)
			continue;
		/* Gone from the cache; a live read must not find it either (kube's GetJob), or
		 * nothing of this sync is sent, its event neither. */
		{
			struct action *g = action_append(&out->confirm_absent,
			    &out->nconfirm_absent);

			g->type = ACTION_GET;
			g->verb = "confirm-missing";
			g->resource = st->jobs;
			g->namespace = xstrdup(ns);
			g->name = xstrdup(json_string(ref, "name"));
			g->uid = xstrdup(uid);
			g->reason = xstrdup("an active Job the cache does not hold");
		}
		event(out, "Normal", "MissingJob", xasprintf("Active job went missing: %s",
		    json_string(ref, "name")));
		cJSON_DeleteItemFromArray(active, i);
		update = 1;
	}

	if (!deleting)
		schedule(st, out, ns, name, out->owner, status, now, &update);

	if (update) {
		struct action *a = xcalloc(1, sizeof *a);

		a->type = ACTION_UPDATE_STATUS;
		a->verb = "update-status";
		a->resource = st->cronjobs;
		a->namespace = xstrdup(ns);
		a->name = xstrdup(name);
		a->uid = xstrdup(out->owner_uid);
		a->body = cJSON_Duplicate(out->owner, 1);
		if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(status, "active")) == 0)
			cJSON_DeleteItemFromObjectCaseSensitive(status, "active");
		json_set(a->body, "status", status);
		a->reason = xstrdup("status");
		out->status = a;
	} else {
		cJSON_Delete(status);
	}
	for (int i = 0; i < njobs; i++) {
		free(jobs[i].uid);
		free(jobs[i].name);
		free(jobs[i].rv);
		cJSON_Delete(jobs[i].body);
	}
	free(jobs);
	free(ns);
	return 0;
fail:
	for (int i = 0; i < njobs; i++) {
		free(jobs[i].uid);
		free(jobs[i].name);
		free(jobs[i].rv);
		cJSON_Delete(jobs[i].body);
	}
	free(jobs);
	free(ns);
	return -1;
}

/* --- handlers -------------------------------------------------------------------------- */

/* A CronJob's own events queue it; a Job's queue its controlling CronJob. */
static void
cronjob_handle_event(struct controller *c, const struct informer_event *ev, double now,
    const struct controller_queue *q)
{
	const char *ns = json_string(ev->object, "metadata.namespace");
	char *key = NULL;

	(void)c;
	(void)now;
	if (strcmp(ev->resource->name, "cronjobs") == 0) {
		const char *name = json_string(ev->object, "metadata.name");

		if (*name != '\0')
			key = xasprintf("%s/%s", ns, name);
	} else if (strcmp(ev->resource->name, "jobs") == 0) {
		const cJSON *ref;

		cJSON_ArrayForEach(ref, json_path(ev->object, "metadata.ownerReferences")) {
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")) &&
			    strcmp(json_string(ref, "kind"), "CronJob") == 0 &&
			    strncmp(json_string(ref, "apiVersion"), "batch/", 6) == 0 &&
			    *json_string(ref, "name") != '\0') {
				key = xasprintf("%s/%s", ns, json_string(ref, "name"));
				break;
			}
		}
	}
	if (key != NULL)
		q->add(key, q->arg);
	free(key);
}

static int
cronjob_list_keys(struct controller *c, void (*cb)(const char *key, void *arg), void *arg,
    char **error)
{
	struct cronjob_state *st = c->state;

	return controller_list_keys_of(st->stmt[STMT_KEYS], "cronjob", cb, arg, error);
}

static int
cronjob_init(struct controller *c, char **error)
{
	struct cronjob_state *st = xcalloc(1, sizeof *st);

	c->state = st;
	st->cronjobs = resource_find("cronjobs");
	st->jobs = resource_find("jobs");
	if (st->cronjobs == NULL || st->jobs == NULL)
		return error_set(error, "cronjob: cronjobs and jobs must be known resources");
	return store_prepare_statements(store_db(c->store), cronjob_sql, STMT_COUNT, st->stmt,
	    "cronjob", error);
}

static void
cronjob_fini(struct controller *c)
{
	struct cronjob_state *st = c->state;

	if (st == NULL)
		return;
	store_finalize_statements(st->stmt, STMT_COUNT);
	free(st);
	c->state = NULL;
}

static const char *const cronjob_resources[] = { "cronjobs", "jobs", NULL };

const struct controller_type cronjob_controller_type = {
	.name = "cronjob",
	.resources = cronjob_resources,
	.default_workers = 5,
	.workers_flag = "concurrent-cron-job-syncs",
	.workers_help = "CronJobs synced at once",
	.event_component = "cronjob-controller",
	.client_name = "cronjob-controller",
	.init = cronjob_init,
	.fini = cronjob_fini,
	.handle_event = cronjob_handle_event,
	.list_keys = cronjob_list_keys,
	.sync = cronjob_sync,
};
