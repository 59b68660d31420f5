/*
 * command.c - the sqlkcm command line: subcommands, their help, and dispatch.
 *
 * `sqlkcm COMMAND [ARGS]` looks COMMAND up in one table. Every entry has a summary and a
 * full usage text, so `sqlkcm --help`, `sqlkcm help COMMAND` and `sqlkcm COMMAND --help`
 * all read from the same place. An entry whose run function is NULL is a subcommand that
 * is planned but not built: calling it says so on stderr and exits with EXIT_USAGE, never
 * with a success it did not earn.
 *
 * Output goes to the FILE pointers passed in (stdout and stderr from main), so the
 * dispatch can be tested without a process.
 */
#include "config.h"

#include <string.h>

#include "command.h"
#include "controller.h"
#include "plan.h"
#include "registry.h"
#include "replay.h"
#include "run.h"
#include "shell.h"
#include "version.h"

static int version_run(int, char **, FILE *, FILE *);

static const struct command commands[] = {
	{
		"run",
		"mirror a cluster into the cache and run the controllers (daemon mode)",
		run_usage,
		run_command,
		run_usage_controllers,
	},
	{
		"plan",
		"print the actions the controllers would take now, from the cache alone",
		plan_usage,
		plan_command,
		controller_flags_usage,
	},
	{
		"replay",
		"feed a recorded event log through the controllers, offline",
		replay_usage,
		replay_command,
		controller_flags_usage,
	},
	{
		"shell",
		"open the cache read-only in sqlite3",
		shell_usage,
		shell_command,
		NULL,
	},
	{
		"version",
		"print the version of sqlkcm and of the libraries it runs on",
		"usage: sqlkcm version\n"
		"\n"
		"Prints the sqlkcm version, then one line per library it is linked with.\n",
		version_run,
		NULL,
	},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* Prints the program's usage: the subcommands and how to get help on each. */
static void
command_print_list(FILE *f)
{
	fprintf(f, "usage: sqlkcm COMMAND [ARGS]\n\n"
	    "A Kubernetes controller manager whose informer cache is an SQLite database.\n\n"
	    "Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++) {
		fprintf(f, "  %-8s %s%s\n", commands[i].name, commands[i].summary,
		    commands[i].run == NULL ? " (not built yet)" : "");
	}
	fprintf(f, "\nRun `sqlkcm COMMAND --help` for a command's options.\n");
}

/* Prints one subcommand's usage. */
static void
command_print_usage(const struct command *cmd, FILE *f)
{
	fputs(cmd->usage, f);
	if (cmd->usage_more != NULL)
		cmd->usage_more(f);
	if (cmd->run == NULL)
		fprintf(f, "\nThis command is not built yet in sqlkcm %s.\n", PACKAGE_VERSION);
}

static int
is_help_flag(const char *arg)
{
	return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

const struct command *
command_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	}
	return NULL;
}

int
command_main(int argc, char **argv, FILE *out, FILE *err)
{
	if (argc < 2) {
		command_print_list(err);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (is_help_flag(name)) {
		command_print_list(out);
		return EXIT_OK;
	}
	if (strcmp(name, "--version") == 0)
		name = "version";
	if (strcmp(name, "help") == 0) {
		if (argc < 3) {
			command_print_list(out);
			return EXIT_OK;
		}
		const struct command *cmd = command_find(argv[2]);
		if (cmd == NULL) {
			fprintf(err, "sqlkcm: no such command: %s\n", argv[2]);
			return EXIT_USAGE;
		}
		command_print_usage(cmd, out);
		return EXIT_OK;
	}

	const struct command *cmd = command_find(name);
	if (cmd == NULL) {
		fprintf(err, "sqlkcm: no such command: %s (see sqlkcm --help)\n", name);
		return EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (is_help_flag(argv[i])) {
			command_print_usage(cmd, out);
			return EXIT_OK;
		}
	}
	if (cmd->run == NULL) {
		fprintf(err, "sqlkcm: %s: not built yet in sqlkcm %s\n", cmd->name,
		    PACKAGE_VERSION);
		return EXIT_USAGE;
	}
	return cmd->run(argc - 1, argv + 1, out, err);
}

/* `sqlkcm version`: the program's version and the libraries it is linked with. */
static int
version_run(int argc, char **argv, FILE *out, FILE *err)
{
	(void)argv;
	if (argc > 1) {
		fprintf(err, "sqlkcm: version: takes no arguments\n");
		return EXIT_USAGE;
	}
	version_print(out);
	return EXIT_OK;
}
