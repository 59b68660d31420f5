/*
 * featuregate.c - the feature gates sqlkcm's controllers consult (featuregate.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "featuregate.h"
#include "util.h"

/* kube 1.36's defaults of the gates a controller of sqlkcm asks about. */
static const struct {
	const char *name;
	int enabled;
} gates[] = {
	{ "MaxUnavailableStatefulSet", 0 },	/* beta since 1.35, off by default */
};

/* Go's strconv.ParseBool: 1 or 0 into *v, -1 when text is none of its words. */
static int
parse_go_bool(const char *text, size_t n, int *v)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };

	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		if (strlen(yes[i]) == n && strncmp(text, yes[i], n) == 0)
			return *v = 1, 0;
		if (strlen(no[i]) == n && strncmp(text, no[i], n) == 0)
			return *v = 0, 0;
	}
	return -1;
}

/* Calls visit for each entry of spec (name and its length, value); stops at the first
 * malformed entry with -1 and *error. */
static int
each_entry(const char *spec, int (*visit)(const char *, size_t, int, void *), void *arg,
    char **error)
{
	const char *p = spec != NULL ? spec : "";

	while (*p != '\0') {
		const char *end = strchr(p, ','), *eq;
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
		const char *name = p;
		size_t nlen;
		int v;

		/* kube trims spaces around an entry and around its name and value */
		while (len > 0 && (*name == ' ' || *name == '\t'))
			name++, len--;
		while (len > 0 && (name[len - 1] == ' ' || name[len - 1] == '\t'))
			len--;
		if (len > 0) {
			const char *value;
			size_t vlen;

			eq = memchr(name, '=', len);
			if (eq == NULL)
				return error_set(error, "--feature-gates: missing bool value for "
				    "%.*s", (int)len, name);
			nlen = (size_t)(eq - name);
			while (nlen > 0 && (name[nlen - 1] == ' ' || name[nlen - 1] == '\t'))
				nlen--;
			value = eq + 1;
			vlen = len - (size_t)(value - name);
			while (vlen > 0 && (*value == ' ' || *value == '\t'))
				value++, vlen--;
			if (nlen == 0)
				return error_set(error, "--feature-gates: an entry without a name");
			if (parse_go_bool(value, vlen, &v) != 0)
				return error_set(error, "--feature-gates: invalid value of %.*s=%.*s, "
				    "err: strconv.ParseBool: parsing \"%.*s\": invalid syntax",
				    (int)nlen, name, (int)vlen, value, (int)vlen, value);
			if (visit(name, nlen, v, arg) != 0)
				return 0;
		}
		if (end == NULL)
			break;
		p = end + 1;
	}
	return 0;
}

static int
known(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof gates / sizeof gates[0]; i++) {
		if (strlen(gates[i].name) == n && strncmp(gates[i].name, name, n) == 0)
			return (int)i;
	}
	return -1;
}

struct lookup {
	const char *gate;
	int value;
};

static int
lookup_visit(const char *name, size_t n, int v, void *arg)
{
	struct lookup *l = arg;

	if (strlen(l->gate) == n && strncmp(l->gate, name, n) == 0)
		l->value = v;	/* the last entry of a name wins, as in kube */
	return 0;
}

int
featuregate_enabled(const char *spec, const char *gate)
{
	int i = known(gate, strlen(gate));
	struct lookup l = { gate, i >= 0 ? gates[i].enabled : 0 };

	if (i < 0)
		return 0;
	(void)each_entry(spec, lookup_visit, &l, NULL);
	return l.value;
}

static int
unknown_visit(const char *name, size_t n, int v, void *arg)
{
	struct buf *b = arg;

	(void)v;
	if (known(name, n) < 0)
		buf_printf(b, "%s%.*s", b->len > 0 ? ", " : "", (int)n, name);
	return 0;
}

int
featuregate_check(const char *spec, char **unknown, char **error)
{
	struct buf b;

	buf_init(&b);
	if (unknown != NULL)
		*unknown = NULL;
	if (each_entry(spec, unknown_visit, &b, error) != 0) {
		buf_free(&b);
		return -1;
	}
	if (unknown != NULL && b.len > 0)
		*unknown = buf_detach(&b);
	buf_free(&b);
	return 0;
}
