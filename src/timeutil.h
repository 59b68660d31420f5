/*
 * timeutil.h - Kubernetes timestamps: RFC 3339 text to and from seconds since the epoch.
 */
#ifndef SQLKCM_TIMEUTIL_H
#define SQLKCM_TIMEUTIL_H

#include <time.h>

/* "2026-11-22T10:00:00Z" and its NUL. */
#define TIME_RFC3339_SIZE 21

/* Parses an RFC 3339 timestamp (as Go's time.RFC3339 accepts it) into seconds since the
 * epoch; fractions of a second are dropped. Returns -1 when s is not one. */
int time_parse_rfc3339(const char *s, time_t *out);

/* Parses a Go duration (time.ParseDuration: "15s", "1m30s", "500ms", "1.5h", "-2s",
 * units ns, us, µs, ms, s, m, h; "0" alone needs none) into seconds. Returns -1 when s
 * is not one. */
int time_parse_duration(const char *s, double *seconds);

/* Returns the wall-clock time in seconds since the epoch, with microseconds. */
double time_now(void);

/* Returns seconds on the monotonic clock (for durations and deadlines, which must not
 * move with the wall clock). */
double time_monotonic(void);

/* Writes t as the apiserver writes a metav1.Time: UTC, whole seconds. */
void time_format_rfc3339(time_t t, char out[TIME_RFC3339_SIZE]);

#endif
