/*
 * log.h - klog-style logging: a level, one line per event, key=value fields, to stderr.
 */
#ifndef SQLKCM_LOG_H
#define SQLKCM_LOG_H

/* The verbosity set by -v: messages at a level above it are not written. */
extern int log_verbosity;

/* Writes "LEVEL TIME file: message" where message is printf-formatted; fields go in the
 * message as key=value (quote values with spaces: log_quote). Never pass a secret. */
void log_write(char severity, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_write('E', __VA_ARGS__)
#define log_warning(...) log_write('W', __VA_ARGS__)
#define log_info(...) log_write('I', __VA_ARGS__)
/* Informational at verbosity v (klog's V(v).Info). */
#define log_v(v, ...) do {						\
	if (log_verbosity >= (v))					\
		log_write('I', __VA_ARGS__);				\
} while (0)

#endif
