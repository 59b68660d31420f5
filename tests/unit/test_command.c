/*
 * test_command.c - the command line: lookup, help, and subcommands not built yet.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "command.h"

/* The output of one command_main call. */
struct run {
	int status;
	char *out;
	char *err;
};

static struct run
run_argv(int argc, char **argv)
{
	struct run r;
	size_t outlen, errlen;
	FILE *out = open_memstream(&r.out, &outlen);
	FILE *err = open_memstream(&r.err, &errlen);

	assert_non_null(out);
	assert_non_null(err);
	r.status = command_main(argc, argv, out, err);
	fclose(out);
	fclose(err);
	return r;
}

#define RUN(...) run_argv((int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)), \
	(char *[]){__VA_ARGS__})

static void
run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static void
every_planned_subcommand_is_known(void **state)
{
	(void)state;
	const char *names[] = { "run", "plan", "replay", "shell", "version" };

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const struct command *cmd = command_find(names[i]);
		assert_non_null(cmd);
		assert_string_equal(cmd->name, names[i]);
		assert_non_null(cmd->usage);
	}
}

static void
lookup_is_exact_not_by_prefix(void **state)
{
	(void)state;
	assert_null(command_find("ru"));
	assert_null(command_find("runs"));
	assert_null(command_find("RUN"));
	assert_null(command_find(""));
}

static void
no_arguments_prints_usage_to_stderr_and_exits_2(void **state)
{
	(void)state;
	struct run r = RUN("sqlkcm");

	assert_int_equal(r.status, EXIT_USAGE);
	assert_string_equal(r.out, "");
	assert_non_null(strstr(r.err, "usage: sqlkcm COMMAND"));
	run_free(&r);
}

static void
unknown_command_is_named_and_exits_2(void **state)
{
	(void)state;
	struct run r = RUN("sqlkcm", "frobnicate");

	assert_int_equal(r.status, EXIT_USAGE);
	assert_non_null(strstr(r.err, "no such command: frobnicate"));
	run_free(&r);
}

static void
unbuilt_subcommand_says_so_and_exits_2(void **state)
{
	(void)state;
	const char *names[] = { "run", "plan", "replay", "shell" };

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (command_find(names[i])->run != NULL)
			continue;	/* built since: its own tests cover it */
		struct run r = RUN("sqlkcm", (char *)names[i]);
		assert_int_equal(r.status, EXIT_USAGE);
		assert_string_equal(r.out, "");
		assert_non_null(strstr(r.err, "not built yet"));
		assert_non_null(strstr(r.err, names[i]));
		run_free(&r);
	}
}

static void
help_flag_after_subcommand_prints_its_usage(void **state)
{
	(void)state;
	struct run r = RUN("sqlkcm", "replay", "log.jsonl", "--help");

	assert_int_equal(r.status, EXIT_OK);
	assert_non_null(strstr(r.out, "usage: sqlkcm replay"));
	assert_string_equal(r.err, "");
	run_free(&r);
}

static void
help_command_prints_the_named_usage(void **state)
{
	(void)state;
	struct run r = RUN("sqlkcm", "help", "plan");

	assert_int_equal(r.status, EXIT_OK);
	assert_non_null(strstr(r.out, "usage: sqlkcm plan"));
	run_free(&r);

	r = RUN("sqlkcm", "help", "nope");
	assert_int_equal(r.status, EXIT_USAGE);
	assert_non_null(strstr(r.err, "no such command: nope"));
	run_free(&r);
}

static void
top_level_help_lists_every_command_on_stdout(void **state)
{
	(void)state;
	struct run r = RUN("sqlkcm", "--help");

	assert_int_equal(r.status, EXIT_OK);
	assert_non_null(strstr(r.out, "  run "));
	assert_non_null(strstr(r.out, "  replay "));
	assert_non_null(strstr(r.out, "  version "));
	run_free(&r);
}

static void
help_after_double_dash_is_an_argument(void **state)
{
	(void)state;
	/* "--help" after "--" is an operand (a file named --help), not a request for help. */
	struct run r = RUN("sqlkcm", "version", "--", "--help");

	assert_int_equal(r.status, EXIT_USAGE);
	assert_string_equal(r.out, "");
	run_free(&r);
}

static void
version_prints_program_and_library_versions(void **state)
{
	(void)state;
	struct run r = RUN("sqlkcm", "version");

	assert_int_equal(r.status, EXIT_OK);
	assert_true(strncmp(r.out, "sqlkcm " PACKAGE_VERSION "\n", strlen("sqlkcm " PACKAGE_VERSION "\n")) == 0);
	assert_non_null(strstr(r.out, "\nsqlite 3."));
	assert_non_null(strstr(r.out, "\nlibcurl "));
	assert_non_null(strstr(r.out, "\nlibevent 2."));
	assert_non_null(strstr(r.out, "\ncjson 1."));
	assert_non_null(strstr(r.out, "\nlibyaml 0."));
	run_free(&r);

	r = RUN("sqlkcm", "--version");
	assert_int_equal(r.status, EXIT_OK);
	assert_true(strncmp(r.out, "sqlkcm ", 7) == 0);
	run_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_planned_subcommand_is_known),
		cmocka_unit_test(lookup_is_exact_not_by_prefix),
		cmocka_unit_test(no_arguments_prints_usage_to_stderr_and_exits_2),
		cmocka_unit_test(unknown_command_is_named_and_exits_2),
		cmocka_unit_test(unbuilt_subcommand_says_so_and_exits_2),
		cmocka_unit_test(help_flag_after_subcommand_prints_its_usage),
		cmocka_unit_test(help_command_prints_the_named_usage),
		cmocka_unit_test(top_level_help_lists_every_command_on_stdout),
		cmocka_unit_test(help_after_double_dash_is_an_argument),
		cmocka_unit_test(version_prints_program_and_library_versions),
	};
	return cmocka_run_group_tests_name("command", tests, NULL, NULL);
}
