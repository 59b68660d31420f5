/*
 * command.h - the sqlkcm command line: subcommands, their help, and dispatch.
 */
#ifndef SQLKCM_COMMAND_H
#define SQLKCM_COMMAND_H

#include <stdio.h>

#include "exitstatus.h"

struct command {
	const char *name;
	const char *summary;	/* one line, for the command list */
	const char *usage;	/* the fixed --help text */
	/* Runs the subcommand; NULL when it is not built yet. */
	int (*run)(int argc, char **argv, FILE *out, FILE *err);
	/* Prints the part of the --help text made at run time (the controllers' flags), after
	 * usage; NULL when there is none. */
	void (*usage_more)(FILE *out);
};

/* Returns the subcommand called name, or NULL. */
const struct command *command_find(const char *name);

/* Runs the command line argv (argv[0] is the program) and returns the exit status. */
int command_main(int argc, char **argv, FILE *out, FILE *err);

#endif
