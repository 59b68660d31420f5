/*
 * quantity.h - Kubernetes resource quantities ("100m", "1Gi", "1.5", "2e3"): read, added,
 * compared and printed in the canonical form the apiserver gives them.
 *
 * A value is held exactly as a count of nano-units in 128 bits: kube rounds every
 * quantity up to 10^-9 when it parses one, and 128 bits hold up to 1.7 x 10^29 units, far
 * beyond what kube keeps in its 64-bit fast path (9.2 x 10^18). Larger values (kube's
 * arbitrary-precision ones) are refused with an error.
 */
#ifndef SQLKCM_QUANTITY_H
#define SQLKCM_QUANTITY_H

#include <stddef.h>

/* How a quantity was written, which decides how it prints (kube's Format). */
enum quantity_format {
	QUANTITY_DECIMAL_SI,		/* "1500m", "2k", "5" */
	QUANTITY_BINARY_SI,		/* "1Ki", "3Gi" */
	QUANTITY_DECIMAL_EXPONENT,	/* "1e3" */
};

struct quantity {
	__int128 nanos;			/* the value in units of 10^-9 */
	enum quantity_format format;
};

/* Room for any quantity printed, with its NUL. */
#define QUANTITY_TEXT_MAX 64

/* Reads text as kube's ParseQuantity does (a signed decimal number, then a binary suffix
 * Ki..Ei, a decimal one n u m k M G T P E, or an exponent e/E and a signed integer),
 * rounding up to 10^-9. 0 on success; -1 for text that is no quantity or a value out of
 * range. */
int quantity_parse(const char *text, struct quantity *q);

/* The zero quantity kube starts a sum with (format DecimalSI). */
struct quantity quantity_zero(void);
/* A whole number of units, DecimalSI. */
struct quantity quantity_int(long long n);

/* acc += y, as kube's Quantity.Add: a zero acc takes y's format. 0, or -1 when the sum
 * leaves the range (acc unchanged). */
int quantity_add(struct quantity *acc, const struct quantity *y);

/* -1, 0, 1 as a is less than, equal to or more than b. */
int quantity_cmp(const struct quantity *a, const struct quantity *b);

/* Writes q in kube's canonical form (what the apiserver prints: "0", "100m", "1500m",
 * "1Gi", "1536", "1e3") into out, of size QUANTITY_TEXT_MAX at least; returns out. */
char *quantity_format(const struct quantity *q, char *out, size_t size);

#endif
