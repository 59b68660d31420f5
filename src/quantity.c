/*
 * quantity.c - Kubernetes resource quantities: kube's grammar read into nano-units, sums
 * with kube's rule for the format, and kube's canonical printing (the largest suffix whose
 * mantissa is whole; a binary one only for whole values of 1024 and more).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "quantity.h"

typedef unsigned __int128 u128;

#define U128_MAX (~(u128)0)
#define NANOS_MAX ((u128)(U128_MAX >> 1))	/* the largest |nanos| held */

/* a * b into *out unless it passes limit. */
static int
mul_checked(u128 a, u128 b, u128 limit, u128 *out)
{
	if (a != 0 && b > limit / a)
		return -1;
	*out = a * b;
	return 0;
}

static u128
pow10_u128(int n)
{
	u128 p = 1;

	while (n-- > 0)
		p *= 10;
	return p;
}

/* The exponents of the suffixes: decimal ones (base 10) and binary ones (base 1024). */
static int
suffix_read(const char *s, int *e10, int *k1024, enum quantity_format *format)
{
	static const struct {
		const char *text;
		int e10;
	} decimal[] = {
		{ "n", -9 }, { "u", -6 }, { "m", -3 }, { "", 0 }, { "k", 3 }, { "M", 6 },
		{ "G", 9 }, { "T", 12 }, { "P", 15 }, { "E", 18 },
	};
	static const char *const binary[] = { "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };

	*e10 = 0;
	*k1024 = 0;
	for (size_t i = 0; i < sizeof decimal / sizeof decimal[0]; i++) {
		if (strcmp(s, decimal[i].text) == 0) {
			*e10 = decimal[i].e10;
			*format = QUANTITY_DECIMAL_SI;
			return 0;
		}
	}
	for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
		if (strcmp(s, binary[i]) == 0) {
			*k1024 = (int)i + 1;
			*format = QUANTITY_BINARY_SI;
			return 0;
		}
	}
	if (*s == 'e' || *s == 'E') {
		const char *p = s + 1;
		int negative = 0, n = 0, digits = 0;

		if (*p == '+' || *p == '-')
			negative = *p++ == '-';
		for (; *p >= '0' && *p <= '9'; p++) {
			if (n > 1000)
				return -1;	/* far out of range either way */
			n = n * 10 + (*p - '0');
			digits++;
		}
		if (digits == 0 || *p != '\0')
			return -1;
		*e10 = negative ? -n : n;
		*format = QUANTITY_DECIMAL_EXPONENT;
		return 0;
	}
	return -1;
}

int
quantity_parse(const char *text, struct quantity *q)
{
	const char *p = text;
	int negative = 0, digits = 0, fraction = 0, e10, k1024, scale;
	u128 m = 0, v;
	enum quantity_format format;

	if (text == NULL)
		return -1;
	if (*p == '+' || *p == '-')
		negative = *p++ == '-';
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (mul_checked(m, 10, NANOS_MAX, &m) != 0 || m > NANOS_MAX - (u128)(*p - '0'))
			return -1;
		m += (u128)(*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++, fraction++) {
			if (mul_checked(m, 10, NANOS_MAX, &m) != 0 ||
			    m > NANOS_MAX - (u128)(*p - '0'))
				return -1;
			m += (u128)(*p - '0');
		}
	}
	if (digits == 0 || suffix_read(p, &e10, &k1024, &format) != 0)
		return -1;
	for (int i = 0; i < k1024; i++) {
		if (mul_checked(m, 1024, NANOS_MAX, &m) != 0)
			return -1;
	}
	/* the value is m * 10^(e10 - fraction) units: m * 10^scale nanos */
	scale = 9 + e10 - fraction;
	if (m == 0) {
		v = 0;
	} else if (scale >= 0) {
		if (scale > 38 || mul_checked(m, pow10_u128(scale), NANOS_MAX, &v) != 0)
			return -1;
	} else if (-scale > 38) {
		v = 1;			/* below a nano: rounded up to one */
	} else {
		u128 d = pow10_u128(-scale);

		v = m / d + (m % d != 0);
	}
	if (format == QUANTITY_BINARY_SI) {
		/* kube caps a binary quantity at 2^63-1 units, and writes one between 0 and 1
		 * in decimal */
		u128 max = (u128)INT64_MAX * 1000000000u;

		if (v > max)
			v = max;
		if (v > 0 && v < 1000000000u)
			format = QUANTITY_DECIMAL_SI;
	}
	q->nanos = negative ? -(__int128)v : (__int128)v;
	q->format = format;
	return 0;
}

struct quantity
quantity_zero(void)
{
	struct quantity q = { 0, QUANTITY_DECIMAL_SI };

	return q;
}

struct quantity
quantity_int(long long n)
{
	struct quantity q = { (__int128)n * 1000000000, QUANTITY_DECIMAL_SI };

	return q;
}

int
quantity_add(struct quantity *acc, const struct quantity *y)
{
	__int128 max = (__int128)NANOS_MAX;

	if ((y->nanos > 0 && acc->nanos > max - y->nanos) ||
	    (y->nanos < 0 && acc->nanos < -max - y->nanos))
		return -1;
	if (acc->nanos == 0)
		acc->format = y->format;
	acc->nanos += y->nanos;
	return 0;
}

int
quantity_cmp(const struct quantity *a, const struct quantity *b)
{
	return a->nanos < b->nanos ? -1 : a->nanos > b->nanos;
}

/* Prints v in decimal at the end of buf (of size n); returns where it starts. */
static char *
u128_text(u128 v, char *buf, size_t n)
{
	char *p = buf + n - 1;

	*p = '\0';
	do {
		*--p = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v != 0);
	return p;
}

char *
quantity_format(const struct quantity *q, char *out, size_t size)
{
	static const char *const decimal[] = { "n", "u", "m", "", "k", "M", "G", "T", "P", "E" };
	static const char *const binary[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	const u128 unit = 1000000000;
	u128 v = q->nanos < 0 ? (u128)0 - (u128)q->nanos : (u128)q->nanos;
	const char *sign = q->nanos < 0 ? "-" : "";
	char digits[48], suffix[16];
	int e = -9, m;

	if (v == 0) {
		snprintf(out, size, "0");
		return out;
	}
	if (q->format == QUANTITY_BINARY_SI && v >= 1024 * unit && v % unit == 0) {
		int k = 0;

		v /= unit;
		while (k < 6 && v % 1024 == 0) {
			v /= 1024;
			k++;
		}
		snprintf(out, size, "%s%s%s", sign, u128_text(v, digits, sizeof digits),
		    binary[k]);
		return out;
	}
	/* the smallest exponent, a multiple of 3, that keeps the mantissa whole */
	while (v % 10 == 0) {
		v /= 10;
		e++;
	}
	m = ((e % 3) + 3) % 3;
	if (m == 1) {
		v *= 10;
		e -= 1;
	} else if (m == 2) {
		v *= 100;
		e -= 2;
	}
	if (q->format == QUANTITY_DECIMAL_EXPONENT || e > 18) {
		if (e == 0)
			suffix[0] = '\0';
		else
			snprintf(suffix, sizeof suffix, "e%d", e);
	} else {
		snprintf(suffix, sizeof suffix, "%s", decimal[(e + 9) / 3]);
	}
	snprintf(out, size, "%s%s%s", sign, u128_text(v, digits, sizeof digits), suffix);
	return out;
}
