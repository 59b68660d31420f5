/*
 * replay.h - `sqlkcm replay`: feed a recorded event log through the controllers, offline.
 */
#ifndef SQLKCM_REPLAY_H
#define SQLKCM_REPLAY_H

#include <stdio.h>

struct controller_config;

struct replay_options {
	const char *db;		/* a new file to keep the cache in; NULL: in memory */
	const int *enabled;	/* by controller_types index */
	/* Their flags, by controller_types index; NULL: every default. */
	const struct controller_config *configs;
	int strict;		/* stop at the first bad record */
};

/* What a replay did. */
struct replay_stats {
	unsigned long events;		/* events applied */
	unsigned long bad;		/* bad records reported */
	unsigned long batches;
	unsigned long syncs;
};

/*
 * Replays the log read from in (named name in messages): applies its events to a fresh
 * cache batch by batch, runs the enabled controllers after each batch and writes their
 * actions to out as JSON lines; bad records are reported on err. Returns 0, or -1 with
 * *error set when the replay could not go on (the cache failed; with strict, a bad record)
 * or had nothing to do (a log with no record at all: empty or blank lines only).
 */
int replay_run(FILE *in, const char *name, const struct replay_options *options, FILE *out,
    FILE *err, struct replay_stats *stats, char **error);

extern const char replay_usage[];

int replay_command(int argc, char **argv, FILE *out, FILE *err);

#endif
