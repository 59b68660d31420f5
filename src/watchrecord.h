/*
 * watchrecord.h - `sqlkcm run --record FILE`: every applied event as one JSON line.
 */
#ifndef SQLKCM_WATCHRECORD_H
#define SQLKCM_WATCHRECORD_H

#include "informer.h"

struct watchrecord;

/* Opens path for appending (created 0600: it holds whole objects). */
struct watchrecord *watchrecord_open(const char *path, char **error);
void watchrecord_close(struct watchrecord *rec);

/* Reopens the file by name, for log rotation (SIGHUP). */
int watchrecord_reopen(struct watchrecord *rec, char **error);

/* The informer handlers that write the records. */
struct informer_handlers watchrecord_handlers(struct watchrecord *rec);

#endif
