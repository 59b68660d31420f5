/*
 * test_controller.c - what the kit gives every controller: the flags a controller type
 * declares, checked as run checks them and read back as given or by their default.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller.h"
#include "util.h"

static const struct controller_flag test_flags[] = {
	{ "terminated-widget-threshold", CONTROLLER_FLAG_INT, "12500", 0, 1000000,
	    "widgets kept" },
	{ "widget-sync-period", CONTROLLER_FLAG_DURATION, "5m0s", 0, 0, "how often" },
	{ "widget-file", CONTROLLER_FLAG_STRING, "", 0, 0, "a file" },
	{ NULL, 0, NULL, 0, 0, NULL },
};

static int
test_init(struct controller *c, char **error)
{
	(void)c;
	(void)error;
	return 0;
}

static const char *const no_resources[] = { NULL };

static const struct controller_type test_type = {
	.name = "widget",
	.resources = no_resources,
	.default_workers = 1,
	.flags = test_flags,
	.init = test_init,
};

struct flag_case {
	int flag;		/* index in test_flags */
	const char *value;
	const char *error;	/* a part of the message; NULL: accepted */
};

static void
flag_values_are_checked_by_their_type(void **state)
{
	static const struct flag_case cases[] = {
		{ 0, "0", NULL },
		{ 0, "1000000", NULL },
		{ 0, "1000001", "for --terminated-widget-threshold: want a whole number from 0 "
		    "to 1000000" },
		{ 0, "-1", "want a whole number" },
		{ 0, "12k", "invalid value \"12k\"" },
		{ 0, "", "invalid value \"\"" },
		{ 0, "99999999999999999999999", "want a whole number" },
		{ 1, "30s", NULL },
		{ 1, "1h2m3.5s", NULL },
		{ 1, "0s", NULL },
		{ 1, "300", "for --widget-sync-period: want a duration" },
		{ 1, "-5m", "want a duration" },
		{ 1, "", "want a duration" },
		{ 2, "", NULL },
		{ 2, "/etc/ca.crt", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *error = NULL;
		int rc = controller_flag_check(&test_flags[cases[i].flag], cases[i].value,
		    &error);

		if (cases[i].error == NULL) {
			if (rc != 0)
				fail_msg("case %zu: %s refused: %s", i, cases[i].value, error);
			continue;
		}
		if (rc == 0 || error == NULL || strstr(error, cases[i].error) == NULL)
			fail_msg("case %zu: %s: got %s, want an error with \"%s\"", i,
			    cases[i].value, error != NULL ? error : "no error", cases[i].error);
		free(error);
	}
}

static void
flags_read_back_as_given_or_by_default(void **state)
{
	const char *given[] = { "5", NULL, "/tmp/ca.pem" };
	struct controller_config config = { given, "PEM", NULL };
	struct controller defaults = { .type = &test_type };
	struct controller configured = { .type = &test_type, .config = &config };
	static const struct controller_config none;

	(void)state;
	defaults.config = &none;
	assert_int_equal(controller_flag_int(&defaults, "terminated-widget-threshold"), 12500);
	assert_true(controller_flag_seconds(&defaults, "widget-sync-period") == 300.0);
	assert_string_equal(controller_flag_text(&defaults, "widget-file"), "");
	assert_int_equal(controller_flag_int(&configured, "terminated-widget-threshold"), 5);
	assert_true(controller_flag_seconds(&configured, "widget-sync-period") == 300.0);
	assert_string_equal(controller_flag_text(&configured, "widget-file"), "/tmp/ca.pem");
	assert_string_equal(configured.config->cluster_ca, "PEM");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flag_values_are_checked_by_their_type),
		cmocka_unit_test(flags_read_back_as_given_or_by_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
