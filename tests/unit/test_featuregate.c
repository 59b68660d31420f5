/*
 * test_featuregate.c - --feature-gates read as kube reads it: NAME=BOOL entries with Go's
 * bools, spaces trimmed, the last entry of a name winning, kube 1.36's defaults for the
 * gates sqlkcm knows, other gates accepted and named, malformed entries refused.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "featuregate.h"

static const struct gate_case {
	const char *spec;
	int enabled;		/* MaxUnavailableStatefulSet */
	const char *unknown;	/* NULL: none */
	const char *error;	/* a part of the message; NULL: accepted */
} gate_cases[] = {
	{ NULL, 0, NULL, NULL },			/* kube 1.36's default */
	{ "", 0, NULL, NULL },
	{ "MaxUnavailableStatefulSet=true", 1, NULL, NULL },
	{ "MaxUnavailableStatefulSet=True", 1, NULL, NULL },
	{ "MaxUnavailableStatefulSet=1", 1, NULL, NULL },
	{ "MaxUnavailableStatefulSet=t", 1, NULL, NULL },
	{ "MaxUnavailableStatefulSet=false", 0, NULL, NULL },
	{ " MaxUnavailableStatefulSet = true , ", 1, NULL, NULL },
	{ "MaxUnavailableStatefulSet=true,MaxUnavailableStatefulSet=false", 0, NULL, NULL },
	{ "RotateKubeletServerCertificate=true,MaxUnavailableStatefulSet=true", 1,
	    "RotateKubeletServerCertificate", NULL },
	{ "A=false,B=true", 0, "A, B", NULL },
	{ "MaxUnavailableStatefulSet", 0, NULL, "missing bool value for "
	    "MaxUnavailableStatefulSet" },
	{ "MaxUnavailableStatefulSet=yes", 0, NULL, "strconv.ParseBool: parsing \"yes\"" },
	{ "=true", 0, NULL, "without a name" },
	{ "MaxUnavailableStatefulSet=", 0, NULL, "invalid value" },
};

static void
gate_case(void **state)
{
	const struct gate_case *tc = *state;
	char *unknown = NULL, *error = NULL;
	int rc = featuregate_check(tc->spec, &unknown, &error);

	if (tc->error != NULL) {
		assert_int_equal(rc, -1);
		assert_non_null(error);
		if (strstr(error, tc->error) == NULL)
			fail_msg("%s: \"%s\" lacks \"%s\"", tc->spec, error, tc->error);
		free(error);
		assert_null(unknown);
		return;
	}
	assert_int_equal(rc, 0);
	if (tc->unknown == NULL)
		assert_null(unknown);
	else
		assert_string_equal(unknown, tc->unknown);
	free(unknown);
	assert_int_equal(featuregate_enabled(tc->spec, "MaxUnavailableStatefulSet"),
	    tc->enabled);
	/* a gate sqlkcm does not know is off, whatever the value says */
	assert_int_equal(featuregate_enabled(tc->spec, "RotateKubeletServerCertificate"), 0);
}

int
main(void)
{
	struct CMUnitTest tests[sizeof gate_cases / sizeof gate_cases[0]];
	size_t n = 0;

	for (size_t i = 0; i < sizeof gate_cases / sizeof gate_cases[0]; i++)
		tests[n++] = (struct CMUnitTest){ gate_cases[i].spec != NULL ?
		    gate_cases[i].spec : "(none)", gate_case, NULL, NULL,
		    (void *)&gate_cases[i] };
	return _cmocka_run_group_tests("featuregate", tests, n, NULL, NULL);
}
