/*
 * shell.h - `sqlkcm shell`: the cache, read-only, in the sqlite3 program.
 */
#ifndef SQLKCM_SHELL_H
#define SQLKCM_SHELL_H

#include <stdio.h>

extern const char shell_usage[];

int shell_command(int argc, char **argv, FILE *out, FILE *err);

#endif
