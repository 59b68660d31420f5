/*
 * recorder.h - `sqlkcm run --record FILE`: every applied event as one JSON line.
 */
#ifndef SQLKCM_RECORDER_H
#define SQLKCM_RECORDER_H

#include "informer.h"

struct recorder;

/* Opens path for appending (created 0600: it holds whole objects). */
struct recorder *recorder_open(const char *path, char **error);
void recorder_close(struct recorder *rec);

/* Reopens the file by name, for log rotation (SIGHUP). */
int recorder_reopen(struct recorder *rec, char **error);

/* The informer handlers that write the records. */
struct informer_handlers recorder_handlers(struct recorder *rec);

#endif
