/*
 * test_deployment.c - the Deployment controller's rules and syncs.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "controllers/deployment.h"

static void
placeholder(void **state)
{
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(placeholder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
