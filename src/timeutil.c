/*
 * timeutil.c - Kubernetes timestamps: RFC 3339 text to and from seconds since the epoch.
 *
 * The apiserver writes metav1.Time as RFC 3339 in UTC with whole seconds
 * ("2026-11-22T10:00:00Z"); it accepts any offset and a fraction, which are read here too.
 *
 * Durations are written as Go writes them (kube-controller-manager's flags take
 * time.Duration): a sequence of decimal numbers, each with an optional fraction and a
 * unit, as in "1h15m30.5s".
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "timeutil.h"

/* Returns the number of days from 1970-01-01 to a civil date (proleptic Gregorian). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Reads n decimal digits at s. */
static int
digits_read(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int
time_parse_rfc3339(const char *s, time_t *out)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int year, month, day, hour, minute, second, oh = 0, om = 0, sign = 0;
	const char *p;
	int64_t t;

	if (strlen(s) < 20 || digits_read(s, 4, &year) == -1 || s[4] != '-' ||
	    digits_read(s + 5, 2, &month) == -1 || s[7] != '-' ||
	    digits_read(s + 8, 2, &day) == -1 || s[10] != 'T' ||
	    digits_read(s + 11, 2, &hour) == -1 || s[13] != ':' ||
	    digits_read(s + 14, 2, &minute) == -1 || s[16] != ':' ||
	    digits_read(s + 17, 2, &second) == -1)
		return -1;
	p = s + 19;
	if (*p == '.') {
		if (!isdigit((unsigned char)p[1]))
			return -1;
		for (p++; isdigit((unsigned char)*p); p++)
			;
	}
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		if (digits_read(p + 1, 2, &oh) == -1 || p[3] != ':' ||
		    digits_read(p + 4, 2, &om) == -1 || oh > 23 || om > 59)
			return -1;
		p += 6;
	} else {
		return -1;
	}
	if (*p != '\0' || month < 1 || month > 12 || day < 1 || day > mdays[month - 1] ||
	    hour > 23 || minute > 59 || second > 59)
		return -1;
	if (month == 2 && day == 29 && !(year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)))
		return -1;
	t = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second -
	    sign * (oh * 3600 + om * 60);
	*out = (time_t)t;
	return 0;
}

void
time_format_rfc3339(time_t t, char out[TIME_RFC3339_SIZE])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, TIME_RFC3339_SIZE, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double
time_now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

double
time_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The units of a Go duration and their length in seconds; longer names first where one
 * is a prefix of another ("ms" before "m"). */
static const struct {
	const char *name;
	double seconds;
} duration_units[] = {
	{ "ns", 1e-9 }, { "us", 1e-6 }, { "\xc2\xb5s", 1e-6 }, { "\xce\xbcs", 1e-6 },
	{ "ms", 1e-3 }, { "s", 1 }, { "m", 60 }, { "h", 3600 },
};

int
time_parse_duration(const char *s, double *seconds)
{
	double total = 0, sign = 1;
	const char *p = s;

	if (*p == '-' || *p == '+') {
		sign = *p == '-' ? -1 : 1;
		p++;
	}
	if (strcmp(p, "0") == 0) {
		*seconds = 0;
		return 0;
	}
	if (*p == '\0')
		return -1;
	while (*p != '\0') {
		double value = 0, scale = 1;
		int digits = 0;
		size_t i, n = sizeof duration_units / sizeof duration_units[0];

		for (; isdigit((unsigned char)*p); p++, digits++)
			value = value * 10 + (*p - '0');
		if (*p == '.') {
			for (p++; isdigit((unsigned char)*p); p++, digits++) {
				scale /= 10;
				value += (*p - '0') * scale;
			}
		}
		if (digits == 0)
			return -1;
		for (i = 0; i < n; i++) {
			size_t len = strlen(duration_units[i].name);
			if (strncmp(p, duration_units[i].name, len) == 0) {
				total += value * duration_units[i].seconds;
				p += len;
				break;
			}
		}
		if (i == n)
			return -1;
	}
	/* Go's limit: 2^63 - 1 nanoseconds, about 292 years. */
	if (total > 9223372036.854775807)
		return -1;
	*seconds = sign * total;
	return 0;
}
