/*
 * intstr.c - IntOrString values resolved as kube resolves them (intstr.h).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "intstr.h"
#include "util.h"

/* Reads text as Go's strconv.Atoi does on 64-bit Go: an optional sign, then decimal digits,
 * within an int32 here (an IntOrString's int is one). */
static int
atoi_go(const char *text, int *out)
{
	const char *p = text;
	long long v = 0;
	int negative = 0;

	if (*p == '+' || *p == '-')
		negative = *p++ == '-';
	if (*p == '\0')
		return -1;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
		if (v > 2147483648LL)
			return -1;
	}
	if (negative)
		v = -v;
	if (v > 2147483647LL || v < -2147483648LL)
		return -1;
	*out = (int)v;
	return 0;
}

int
intstr_scaled_value(const cJSON *value, long long total, int round_up, long long *out,
    char **error)
{
	const char *s;
	char *digits;
	double scaled;
	size_t n;
	int v;

	*out = 0;
	if (value == NULL || cJSON_IsNull(value))
		return error_set(error, "nil value for IntOrString");
	if (cJSON_IsNumber(value)) {
		if (value->valuedouble != floor(value->valuedouble) ||
		    fabs(value->valuedouble) > 2147483647.0)
			return error_set(error, "invalid value for IntOrString: invalid type:"
			    " neither int nor percentage");
		*out = (long long)value->valuedouble;
		return 0;
	}
	if (!cJSON_IsString(value))
		return error_set(error, "invalid value for IntOrString: invalid type: neither"
		    " int nor percentage");
	s = value->valuestring;
	n = strlen(s);
	if (n == 0 || s[n - 1] != '%')
		return error_set(error, "invalid value for IntOrString: invalid type: string is"
		    " not a percentage");
	digits = xstrndup(s, n - 1);
	if (atoi_go(digits, &v) != 0) {
		error_set(error, "invalid value for IntOrString: invalid value \"%s\":"
		    " strconv.Atoi: parsing \"%s\": invalid syntax", s, digits);
		free(digits);
		return -1;
	}
	free(digits);
	/* In float64, as kube: |v| < 2^31 and |total| <= 2^40 keep the result far inside
	 * what a long long holds. */
	if (total > (1LL << 40) || total < -(1LL << 40))
		return error_set(error, "invalid value for IntOrString: a scale of %lld", total);
	scaled = (double)v * (double)total / 100.0;
	*out = (long long)(round_up ? ceil(scaled) : floor(scaled));
	return 0;
}

int
intstr_scaled_or_zero(const cJSON *value, long long total, int round_up, long long *out,
    char **error)
{
	*out = 0;
	if (value == NULL || cJSON_IsNull(value))
		return 0;
	return intstr_scaled_value(value, total, round_up, out, error);
}
