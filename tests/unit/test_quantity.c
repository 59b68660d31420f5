/*
 * test_quantity.c - resource quantities (quantity.c) against kube's rules, as data.
 *
 * The cases are apimachinery v0.36.3's pkg/api/resource/quantity_test.go: TestQuantityParse
 * (text, then the value and format kube reads; here the canonical text kube prints),
 * TestQuantityParseEmit, TestQuantityAddZeroPreservesSuffix, and text kube refuses; then
 * sums as kube's quota code makes them.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "quantity.h"

#define NELEM(a) (sizeof (a) / sizeof (a)[0])

struct parse_case {
	const char *in;
	const char *canonical;		/* what kube prints */
	enum quantity_format format;
};

static const struct parse_case parse_cases[] = {
	{ "0", "0", QUANTITY_DECIMAL_SI },
	{ "0n", "0", QUANTITY_DECIMAL_SI },
	{ "0m", "0", QUANTITY_DECIMAL_SI },
	{ "0Ki", "0", QUANTITY_BINARY_SI },
	{ "0Mi", "0", QUANTITY_BINARY_SI },
	{ "0T", "0", QUANTITY_DECIMAL_SI },
	{ "1", "1", QUANTITY_DECIMAL_SI },
	{ "1Ki", "1Ki", QUANTITY_BINARY_SI },
	{ "8Ki", "8Ki", QUANTITY_BINARY_SI },
	{ "7Mi", "7Mi", QUANTITY_BINARY_SI },
	{ "6Gi", "6Gi", QUANTITY_BINARY_SI },
	{ "5Ti", "5Ti", QUANTITY_BINARY_SI },
	{ "4Pi", "4Pi", QUANTITY_BINARY_SI },
	{ "3Ei", "3Ei", QUANTITY_BINARY_SI },
	{ "10Ti", "10Ti", QUANTITY_BINARY_SI },
	{ "100Ti", "100Ti", QUANTITY_BINARY_SI },
	{ "5n", "5n", QUANTITY_DECIMAL_SI },
	{ "4u", "4u", QUANTITY_DECIMAL_SI },
	{ "3m", "3m", QUANTITY_DECIMAL_SI },
	{ "9", "9", QUANTITY_DECIMAL_SI },
	{ "8k", "8k", QUANTITY_DECIMAL_SI },
	{ "50k", "50k", QUANTITY_DECIMAL_SI },
	{ "7M", "7M", QUANTITY_DECIMAL_SI },
	{ "6G", "6G", QUANTITY_DECIMAL_SI },
	{ "5T", "5T", QUANTITY_DECIMAL_SI },
	{ "40T", "40T", QUANTITY_DECIMAL_SI },
	{ "300T", "300T", QUANTITY_DECIMAL_SI },
	{ "2P", "2P", QUANTITY_DECIMAL_SI },
	{ "1E", "1E", QUANTITY_DECIMAL_SI },
	{ "1E-3", "1e-3", QUANTITY_DECIMAL_EXPONENT },
	{ "1e3", "1e3", QUANTITY_DECIMAL_EXPONENT },
	{ "1E6", "1e6", QUANTITY_DECIMAL_EXPONENT },
	{ "1e9", "1e9", QUANTITY_DECIMAL_EXPONENT },
	{ "1E12", "1e12", QUANTITY_DECIMAL_EXPONENT },
	{ "1e15", "1e15", QUANTITY_DECIMAL_EXPONENT },
	{ "1E18", "1e18", QUANTITY_DECIMAL_EXPONENT },
	{ "1e14", "100e12", QUANTITY_DECIMAL_EXPONENT },
	{ "1e13", "10e12", QUANTITY_DECIMAL_EXPONENT },
	{ "100.035k", "100035", QUANTITY_DECIMAL_SI },
	{ "0.001", "1m", QUANTITY_DECIMAL_SI },
	{ "0.0005k", "500m", QUANTITY_DECIMAL_SI },
	{ "0.005", "5m", QUANTITY_DECIMAL_SI },
	{ "0.05", "50m", QUANTITY_DECIMAL_SI },
	{ "0.5", "500m", QUANTITY_DECIMAL_SI },
	{ "0.00050k", "500m", QUANTITY_DECIMAL_SI },
	{ "0.5e0", "500e-3", QUANTITY_DECIMAL_EXPONENT },
	{ "0.5e-1", "50e-3", QUANTITY_DECIMAL_EXPONENT },
	{ "0.5e-2", "5e-3", QUANTITY_DECIMAL_EXPONENT },
	{ "10.035M", "10035k", QUANTITY_DECIMAL_SI },
	{ "1.2e3", "1200", QUANTITY_DECIMAL_EXPONENT },
	{ "1.3E+6", "1300e3", QUANTITY_DECIMAL_EXPONENT },
	{ "1.40e9", "1400e6", QUANTITY_DECIMAL_EXPONENT },
	{ "1.53E12", "1530e9", QUANTITY_DECIMAL_EXPONENT },
	{ "1.6e15", "1600e12", QUANTITY_DECIMAL_EXPONENT },
	{ "1.7E18", "1700e15", QUANTITY_DECIMAL_EXPONENT },
	{ "9.01", "9010m", QUANTITY_DECIMAL_SI },
	{ "8.1k", "8100", QUANTITY_DECIMAL_SI },
	{ "7.123456M", "7123456", QUANTITY_DECIMAL_SI },
	{ "6.987654321G", "6987654321", QUANTITY_DECIMAL_SI },
	{ "5.444T", "5444G", QUANTITY_DECIMAL_SI },
	{ "40.1T", "40100G", QUANTITY_DECIMAL_SI },
	{ "300.2T", "300200G", QUANTITY_DECIMAL_SI },
	{ "2.5P", "2500T", QUANTITY_DECIMAL_SI },
	{ "1.01E", "1010P", QUANTITY_DECIMAL_SI },
	{ "3.001n", "4n", QUANTITY_DECIMAL_SI },
	{ "1.1E-9", "2e-9", QUANTITY_DECIMAL_EXPONENT },
	{ "0.0000000001", "1n", QUANTITY_DECIMAL_SI },
	{ "0.0000000005", "1n", QUANTITY_DECIMAL_SI },
	{ "0.5e-9", "1e-9", QUANTITY_DECIMAL_EXPONENT },
	{ "0.9n", "1n", QUANTITY_DECIMAL_SI },
	{ "0.00000012345", "124n", QUANTITY_DECIMAL_SI },
	{ "0.00000012354", "124n", QUANTITY_DECIMAL_SI },
	{ "9Ei", "9223372036854775807", QUANTITY_BINARY_SI },
	{ "9223372036854775807Ki", "9223372036854775807", QUANTITY_BINARY_SI },
	{ "12E", "12E", QUANTITY_DECIMAL_SI },
	{ "100.035Ki", "102435840m", QUANTITY_BINARY_SI },
	{ "0.5Mi", "512Ki", QUANTITY_BINARY_SI },
	{ "0.05Gi", "53687091200m", QUANTITY_BINARY_SI },
	{ "0.025Ti", "27487790694400m", QUANTITY_BINARY_SI },
	{ "0.000000000001Ki", "2n", QUANTITY_DECIMAL_SI },
	{ ".001", "1m", QUANTITY_DECIMAL_SI },
	{ ".0001k", "100m", QUANTITY_DECIMAL_SI },
	{ "1.", "1", QUANTITY_DECIMAL_SI },
	{ "1.G", "1G", QUANTITY_DECIMAL_SI },
	/* TestQuantityParseEmit */
	{ "1024Mi", "1Gi", QUANTITY_BINARY_SI },
	{ "1000M", "1G", QUANTITY_DECIMAL_SI },
	{ ".001Ki", "1024m", QUANTITY_BINARY_SI },
	{ ".000001Ki", "1024u", QUANTITY_DECIMAL_SI },
	{ ".000000001Ki", "1024n", QUANTITY_DECIMAL_SI },
	{ "-1Ki", "-1Ki", QUANTITY_BINARY_SI },
	{ "-1024Mi", "-1Gi", QUANTITY_BINARY_SI },
	/* what the apiserver stores for quota and pod values */
	{ "100m", "100m", QUANTITY_DECIMAL_SI },
	{ "1000m", "1", QUANTITY_DECIMAL_SI },
	{ "1500m", "1500m", QUANTITY_DECIMAL_SI },
	{ "1.5", "1500m", QUANTITY_DECIMAL_SI },
	{ "1536Mi", "1536Mi", QUANTITY_BINARY_SI },
	{ "1.5Gi", "1536Mi", QUANTITY_BINARY_SI },
	{ "1536", "1536", QUANTITY_DECIMAL_SI },
	{ "1024", "1024", QUANTITY_DECIMAL_SI },
	{ "+5", "5", QUANTITY_DECIMAL_SI },
};

static void
test_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(parse_cases); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct quantity q, again;
		char text[QUANTITY_TEXT_MAX];

		if (quantity_parse(c->in, &q) != 0)
			fail_msg("%s: refused", c->in);
		quantity_format(&q, text, sizeof text);
		if (strcmp(text, c->canonical) != 0)
			fail_msg("%s: printed %s, kube prints %s", c->in, text, c->canonical);
		if (q.format != c->format)
			fail_msg("%s: format %d, kube's %d", c->in, q.format, c->format);
		/* the canonical text reads back as the same value */
		if (quantity_parse(text, &again) != 0 || quantity_cmp(&q, &again) != 0)
			fail_msg("%s: %s does not read back", c->in, text);
	}
}

static void
test_refused(void **state)
{
	static const char *const bad[] = {
		"", " 1", "1 ", "-", "+", ".", "1.2.3", "1Kb", "1ki", "1e", "1e+", "1e1.5",
		"1x", "Ki", "e3", "1..0", "--1", "1e99999999", "1E1000",
		"999999999999999999999999999999999999999999",
	};

	(void)state;
	for (size_t i = 0; i < NELEM(bad); i++) {
		struct quantity q;

		if (quantity_parse(bad[i], &q) == 0)
			fail_msg("\"%s\" was read", bad[i]);
	}
}

/* Sums as kube's Quantity.Add makes them: a zero sum takes the format of what is added
 * (TestQuantityAddZeroPreservesSuffix), else keeps its own. */
struct add_case {
	const char *a, *b, *sum;
};

static const struct add_case add_cases[] = {
	{ "0", "1Mi", "1Mi" },
	{ "0", "100m", "100m" },
	{ "1Mi", "0", "1Mi" },
	{ "100m", "200m", "300m" },
	{ "500m", "500m", "1" },
	{ "1Gi", "512Mi", "1536Mi" },
	{ "1Gi", "1G", "2073741824" },
	{ "1G", "1Gi", "2073741824" },
	{ "1", "1Ki", "1025" },
	{ "1Ki", "1", "1025" },
	{ "1e3", "1e3", "2e3" },
	{ "-1", "1", "0" },
};

static void
test_add(void **state)
{
	(void)state;
	for (size_t i = 0; i < NELEM(add_cases); i++) {
		struct quantity a, b;
		char text[QUANTITY_TEXT_MAX];

		assert_int_equal(quantity_parse(add_cases[i].a, &a), 0);
		assert_int_equal(quantity_parse(add_cases[i].b, &b), 0);
		assert_int_equal(quantity_add(&a, &b), 0);
		quantity_format(&a, text, sizeof text);
		if (strcmp(text, add_cases[i].sum) != 0)
			fail_msg("%s + %s: %s, kube's %s", add_cases[i].a, add_cases[i].b, text,
			    add_cases[i].sum);
	}
}

static void
test_cmp_and_range(void **state)
{
	struct quantity a, b, big;

	(void)state;
	assert_int_equal(quantity_parse("1", &a), 0);
	assert_int_equal(quantity_parse("1000m", &b), 0);
	assert_int_equal(quantity_cmp(&a, &b), 0);
	assert_int_equal(quantity_parse("1001m", &b), 0);
	assert_int_equal(quantity_cmp(&a, &b), -1);
	assert_int_equal(quantity_cmp(&b, &a), 1);
	/* a sum that leaves the range is refused, the sum unchanged */
	assert_int_equal(quantity_parse("100000000000000000000000000000", &big), 0);
	b = big;
	for (int i = 0; i < 8 && quantity_add(&b, &big) == 0; i++)
		;
	assert_int_equal(quantity_add(&b, &big), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_cmp_and_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
