/*
 * run.h - `sqlkcm run`: the daemon.
 */
#ifndef SQLKCM_RUN_H
#define SQLKCM_RUN_H

#include <stdio.h>

extern const char run_usage[];
/* The rest of run's --help: every controller, with its flags and their defaults. */
void run_usage_controllers(FILE *out);

/* Runs the daemon with argv ("run", flags...) until SIGTERM or SIGINT. */
int run_command(int argc, char **argv, FILE *out, FILE *err);

#endif
