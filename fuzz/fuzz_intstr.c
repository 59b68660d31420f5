/*
 * fuzz_intstr.c - the kit's IntOrString reader (intstr.c: a budget's minAvailable, a
 * rolling update's maxSurge and maxUnavailable: a number, or "N%" resolved against a
 * scale) from arbitrary bytes.
 *
 * The first two bytes of the input set the scale (0..65535), the rest is the value: read
 * as JSON when it parses, else taken as a string. Invariants, rounding up and down: a
 * result comes with no error and an error with no result; both roundings agree on whether
 * it is an error, and down is never above up; a percentage from 0% to 100% of the scale
 * is within 0..scale. Any broken one aborts.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "intstr.h"
#include "util.h"

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_intstr: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	long long total, out = -12345, down = -12345;
	char *text, *error = NULL, *down_error = NULL, *end;
	cJSON *value;
	long percent;
	int rc;

	if (size < 2)
		return 0;
	total = (long long)data[0] << 8 | data[1];
	text = xstrndup((const char *)data + 2, size - 2);
	value = cJSON_Parse(text);
	if (value == NULL)
		value = cJSON_CreateString(text);
	rc = intstr_scaled_value(value, total, 1, &out, &error);
	if (rc == 0 && error != NULL)
		fail("a result with an error");
	if (rc != 0 && (error == NULL || out != 0))
		fail("an error without its message, or with a result");
	if ((intstr_scaled_value(value, total, 0, &down, &down_error) != 0) != (rc != 0))
		fail("rounding down and up disagree on an error");
	if (rc == 0 && down > out)
		fail("rounded down above rounded up");
	free(down_error);
	if (rc == 0 && cJSON_IsString(value) && value->valuestring[0] >= '0' &&
	    value->valuestring[0] <= '9') {
		percent = strtol(value->valuestring, &end, 10);
		if (strcmp(end, "%") == 0 && percent >= 0 && percent <= 100 &&
		    (out < 0 || out > total))
			fail("a percentage of 0..100 outside 0..scale");
	}
	free(error);
	cJSON_Delete(value);
	free(text);
	return 0;
}
