/*
 * log.c - klog-style logging: a level, one line per event, key=value fields, to stderr.
 *
 * A line is "I1122 03:04:05.123456 message": severity, month and day, time with
 * microseconds, as klog writes them, so the same tools read both. Each line is written
 * with one write so lines of concurrent writers (none today) would not interleave.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

int log_verbosity = 0;

void
log_write(char severity, const char *fmt, ...)
{
	char line[4096];
	struct timeval tv;
	struct tm tm;
	va_list ap;
	int n, m;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	n = snprintf(line, sizeof line, "%c%02d%02d %02d:%02d:%02d.%06ld ", severity,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	n += m;
	if ((size_t)n > sizeof line - 2)
		n = sizeof line - 2;	/* truncated: still one line */
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, (size_t)n);
}
