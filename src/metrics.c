/*
 * metrics.c - counters, gauges and histograms, rendered in Prometheus text format 0.0.4.
 *
 * The registry keeps its families sorted by name and each family keeps its series sorted
 * by label values, so a render is one walk and its output is stable: the same order
 * client_golang writes, so that sqlkcm's /metrics reads like kube-controller-manager's.
 *
 * Invariants:
 * - A family's name and label names are valid Prometheus names, checked when it is
 *   registered; a histogram does not use the label "le", which its buckets need.
 * - A series has exactly one value per label name of its family, kept in the order the
 *   family declared its labels. As client_golang does, a series is written with its labels
 *   sorted by name, and series are sorted by their values taken in that order (label_order
 *   is that permutation). Label values are any C string; rendering escapes backslash,
 *   double quote and newline, and replaces bytes that are not UTF-8 with U+FFFD, so no
 *   label value can break the exposition.
 * - A histogram's bucket bounds are finite and strictly increasing; its series count each
 *   observation once, in the first bucket whose bound is >= the value (or only in +Inf),
 *   and the cumulative counts are made when rendering.
 * - Numbers are written as Go's strconv.FormatFloat(v, 'g', -1, 64) does: the shortest
 *   digits that read back as the same double, so every value round-trips.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "metrics.h"
#include "util.h"

struct metrics_series {
	struct metrics_family *family;
	char **label_values;
	double value;			/* counter, gauge */
	metrics_gauge_cb callback;
	void *callback_arg;
	uint64_t *bucket_counts;	/* histogram: per bucket, not cumulative */
	uint64_t count;
	double sum;
	TAILQ_ENTRY(metrics_series) link;
};

TAILQ_HEAD(metrics_series_list, metrics_series);

struct metrics_family {
	enum metrics_type type;
	char *name;
	char *help;
	char **label_names;		/* as declared */
	size_t *label_order;		/* indexes of label_names, sorted by name */
	size_t nlabels;
	double *buckets;
	size_t nbuckets;
	struct metrics_series_list series;
	metrics_collect_cb collect;	/* its series made anew at each render, or NULL */
	void *collect_arg;
	TAILQ_ENTRY(metrics_family) link;
};

struct metrics_registry {
	TAILQ_HEAD(, metrics_family) families;
};

static const char *const metrics_type_names[] = {
	[METRICS_COUNTER] = "counter",
	[METRICS_GAUGE] = "gauge",
	[METRICS_HISTOGRAM] = "histogram",
};

/* --- registration ---------------------------------------------------------------------- */

/* Returns a new, empty registry. */
struct metrics_registry *
metrics_registry_new(void)
{
	struct metrics_registry *registry = xcalloc(1, sizeof *registry);

	TAILQ_INIT(&registry->families);
	return registry;
}

/* Frees a series and its values. */
static void
metrics_series_free(struct metrics_series *series)
{
	for (size_t i = 0; i < series->family->nlabels; i++)
		free(series->label_values[i]);
	free(series->label_values);
	free(series->bucket_counts);
	free(series);
}

/* Frees a family and its series. */
static void
metrics_family_free(struct metrics_family *family)
{
	struct metrics_series *series;

	while ((series = TAILQ_FIRST(&family->series)) != NULL) {
		TAILQ_REMOVE(&family->series, series, link);
		metrics_series_free(series);
	}
	for (size_t i = 0; i < family->nlabels; i++)
		free(family->label_names[i]);
	free(family->label_names);
	free(family->label_order);
	free(family->buckets);
	free(family->name);
	free(family->help);
	free(family);
}

/* Frees the registry, its families and their series. */
void
metrics_registry_free(struct metrics_registry *registry)
{
	struct metrics_family *family;

	if (registry == NULL)
		return;
	while ((family = TAILQ_FIRST(&registry->families)) != NULL) {
		TAILQ_REMOVE(&registry->families, family, link);
		metrics_family_free(family);
	}
	free(registry);
}

/* Returns whether s is a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), or with colons
 * excluded, a valid label name. */
static int
metrics_name_valid(const char *s, int colons)
{
	if (s == NULL || *s == '\0' || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s != '\0'; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_' || (colons && *s == ':')))
			return 0;
	}
	return 1;
}

/* Returns the number of names in a NULL-terminated list (NULL: none). */
static size_t
metrics_count_names(const char *const *names)
{
	size_t n = 0;

	while (names != NULL && names[n] != NULL)
		n++;
	return n;
}

/* Checks that spec describes a valid family; returns 0 or -1 with *error set. */
static int
metrics_spec_check(const struct metrics_spec *spec, char **error)
{
	size_t nlabels = metrics_count_names(spec->label_names);

	if ((unsigned)spec->type > METRICS_HISTOGRAM)
		return error_set(error, "metric %s: unknown type %d", spec->name, spec->type);
	if (!metrics_name_valid(spec->name, 1))
		return error_set(error, "invalid metric name \"%s\"",
		    spec->name != NULL ? spec->name : "(null)");
	for (size_t i = 0; i < nlabels; i++) {
		const char *label = spec->label_names[i];

		if (!metrics_name_valid(label, 0) || strncmp(label, "__", 2) == 0)
			return error_set(error, "metric %s: invalid label name \"%s\"",
			    spec->name, label);
		if (spec->type == METRICS_HISTOGRAM && strcmp(label, "le") == 0)
			return error_set(error, "metric %s: a histogram cannot have the label "
			    "\"le\"", spec->name);
		for (size_t j = 0; j < i; j++) {
			if (strcmp(spec->label_names[j], label) == 0)
				return error_set(error, "metric %s: label \"%s\" appears twice",
				    spec->name, label);
		}
	}
	if (spec->type != METRICS_HISTOGRAM)
		return 0;
	for (size_t i = 0; i < spec->nbuckets; i++) {
		if (!isfinite(spec->buckets[i]))
			return error_set(error, "metric %s: bucket %zu is not finite",
			    spec->name, i);
		if (i > 0 && !(spec->buckets[i] > spec->buckets[i - 1]))
			return error_set(error, "metric %s: buckets must increase", spec->name);
	}
	return 0;
}

/* Returns whether family is what spec describes. */
static int
metrics_family_matches(const struct metrics_family *family, const struct metrics_spec *spec)
{
	const char *help = spec->help != NULL ? spec->help : "";

	if (family->type != spec->type || strcmp(family->help, help) != 0 ||
	    family->nlabels != metrics_count_names(spec->label_names))
		return 0;
	for (size_t i = 0; i < family->nlabels; i++) {
		if (strcmp(family->label_names[i], spec->label_names[i]) != 0)
			return 0;
	}
	if (spec->type == METRICS_HISTOGRAM) {
		if (family->nbuckets != spec->nbuckets)
			return 0;
		for (size_t i = 0; i < family->nbuckets; i++) {
			if (family->buckets[i] != spec->buckets[i])
				return 0;
		}
	}
	return 1;
}

/* Returns the family spec describes, registering it on first use. */
struct metrics_family *
metrics_family_register(struct metrics_registry *registry, const struct metrics_spec *spec,
    char **error)
{
	struct metrics_family *family, *next;
	int cmp = 1;

	if (metrics_spec_check(spec, error) != 0)
		return NULL;
	TAILQ_FOREACH(next, &registry->families, link) {
		if ((cmp = strcmp(next->name, spec->name)) >= 0)
			break;
	}
	if (next != NULL && cmp == 0) {
		if (!metrics_family_matches(next, spec)) {
			error_set(error, "metric %s is already registered with another type, "
			    "help, labels or buckets", spec->name);
			return NULL;
		}
		return next;
	}

	family = xcalloc(1, sizeof *family);
	family->type = spec->type;
	family->name = xstrdup(spec->name);
	family->help = xstrdup(spec->help != NULL ? spec->help : "");
	family->nlabels = metrics_count_names(spec->label_names);
	family->label_names = xcalloc(family->nlabels, sizeof *family->label_names);
	family->label_order = xcalloc(family->nlabels, sizeof *family->label_order);
	for (size_t i = 0; i < family->nlabels; i++) {
		size_t j = i;

		family->label_names[i] = xstrdup(spec->label_names[i]);
		/* Insertion sort: a family has a handful of labels. */
		for (; j > 0 && strcmp(family->label_names[family->label_order[j - 1]],
		    family->label_names[i]) > 0; j--)
			family->label_order[j] = family->label_order[j - 1];
		family->label_order[j] = i;
	}
	if (spec->type == METRICS_HISTOGRAM) {
		family->nbuckets = spec->nbuckets;
		family->buckets = xcalloc(spec->nbuckets, sizeof *family->buckets);
		if (spec->nbuckets > 0)
			memcpy(family->buckets, spec->buckets,
			    spec->nbuckets * sizeof *family->buckets);
	}
	TAILQ_INIT(&family->series);
	if (next != NULL)
		TAILQ_INSERT_BEFORE(next, family, link);
	else
		TAILQ_INSERT_TAIL(&registry->families, family, link);
	return family;
}

/* Compares a series' label values with values, label by label in name order. */
static int
metrics_series_compare(const struct metrics_series *series, const char *const *values)
{
	for (size_t i = 0; i < series->family->nlabels; i++) {
		size_t label = series->family->label_order[i];
		int cmp = strcmp(series->label_values[label], values[label]);

		if (cmp != 0)
			return cmp;
	}
	return 0;
}

/* Returns the family's series for label_values, creating it on first use. */
struct metrics_series *
metrics_series_get(struct metrics_family *family, const char *const *label_values)
{
	struct metrics_series *series, *next;
	int cmp = 1;

	TAILQ_FOREACH(next, &family->series, link) {
		if ((cmp = metrics_series_compare(next, label_values)) >= 0)
			break;
	}
	if (next != NULL && cmp == 0)
		return next;

	series = xcalloc(1, sizeof *series);
	series->family = family;
	series->label_values = xcalloc(family->nlabels, sizeof *series->label_values);
	for (size_t i = 0; i < family->nlabels; i++)
		series->label_values[i] = xstrdup(label_values[i]);
	if (family->type == METRICS_HISTOGRAM)
		series->bucket_counts = xcalloc(family->nbuckets, sizeof *series->bucket_counts);
	if (next != NULL)
		TAILQ_INSERT_BEFORE(next, series, link);
	else
		TAILQ_INSERT_TAIL(&family->series, series, link);
	return series;
}

/* --- updates --------------------------------------------------------------------------- */

/* Adds v to a counter; a negative or NaN v is ignored. */
void
metrics_counter_add(struct metrics_series *series, double v)
{
	if (series != NULL && v >= 0)
		series->value += v;
}

/* Sets a gauge. */
void
metrics_gauge_set(struct metrics_series *series, double v)
{
	if (series != NULL)
		series->value = v;
}

/* Adds v (possibly negative) to a gauge. */
void
metrics_gauge_add(struct metrics_series *series, double v)
{
	if (series != NULL)
		series->value += v;
}

/* Makes a gauge's value computed by cb at each render; NULL: no longer, keeping the value
 * the old callback gives now. */
void
metrics_gauge_set_callback(struct metrics_series *series, metrics_gauge_cb cb, void *arg)
{
	if (series == NULL)
		return;
	if (cb == NULL && series->callback != NULL)
		series->value = series->callback(series->callback_arg);
	series->callback = cb;
	series->callback_arg = arg;
}

/* Makes a counter's value computed by cb at each render (NULL: no longer). */
void
metrics_counter_set_callback(struct metrics_series *series, metrics_gauge_cb cb, void *arg)
{
	metrics_gauge_set_callback(series, cb, arg);
}

/* Counts one observation of v in a histogram. */
void
metrics_histogram_observe(struct metrics_series *series, double v)
{
	const struct metrics_family *family;

	if (series == NULL || series->bucket_counts == NULL)
		return;
	family = series->family;
	for (size_t i = 0; i < family->nbuckets; i++) {
		if (v <= family->buckets[i]) {
			series->bucket_counts[i]++;
			break;
		}
	}
	series->count++;
	series->sum += v;
}

/* --- rendering ------------------------------------------------------------------------- */

/* Writes v into out (at least 32 bytes) as Go's FormatFloat(v, 'g', -1, 64) does: the
 * fewest significant digits that read back as v, in exponent form when the decimal
 * exponent is below -4 or at least 6 ("1e-05", "123456", "1.234567e+06"). */
static void
metrics_format_float(char *out, size_t size, double v)
{
	int digits, exponent;
	char *e;

	if (isnan(v)) {
		snprintf(out, size, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(out, size, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == 0) {
		snprintf(out, size, "0");
		return;
	}
	for (digits = 1; digits < 17; digits++) {
		snprintf(out, size, "%.*e", digits - 1, v);
		if (strtod(out, NULL) == v)
			break;
	}
	snprintf(out, size, "%.*e", digits - 1, v);
	e = strchr(out, 'e');
	exponent = e != NULL ? atoi(e + 1) : 0;
	if (exponent < -4 || exponent >= 6)
		return;
	snprintf(out, size, "%.*f", digits - 1 - exponent > 0 ? digits - 1 - exponent : 0, v);
}

/* Appends a number. */
static void
metrics_append_float(struct buf *out, double v)
{
	char number[40];

	metrics_format_float(number, sizeof number, v);
	buf_append_str(out, number);
}

/* Returns the length of the valid UTF-8 sequence at s (at most n bytes), or 0 if the
 * bytes there are not one. */
static size_t
metrics_utf8_length(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Appends s escaped for the exposition: backslash and newline always, double quote too in
 * a label value (quoted), and every byte that is not part of valid UTF-8 as U+FFFD. */
static void
metrics_append_escaped(struct buf *out, const char *s, int quoted)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	while (n > 0) {
		size_t len = metrics_utf8_length(p, n);

		if (len == 0) {
			buf_append_str(out, "\xef\xbf\xbd");
			len = 1;
		} else if (*p == '\\')
			buf_append_str(out, "\\\\");
		else if (*p == '\n')
			buf_append_str(out, "\\n");
		else if (*p == '"' && quoted)
			buf_append_str(out, "\\\"");
		else
			buf_append(out, p, len);
		p += len;
		n -= len;
	}
}

/* Appends name+suffix, then the series' labels and an optional le label, in braces. */
static void
metrics_append_sample_name(struct buf *out, const struct metrics_series *series,
    const char *suffix, const char *le)
{
	const struct metrics_family *family = series->family;

	buf_append_str(out, family->name);
	buf_append_str(out, suffix);
	if (family->nlabels == 0 && le == NULL)
		return;
	buf_append_str(out, "{");
	for (size_t i = 0; i < family->nlabels; i++) {
		size_t label = family->label_order[i];

		buf_printf(out, "%s%s=\"", i > 0 ? "," : "", family->label_names[label]);
		metrics_append_escaped(out, series->label_values[label], 1);
		buf_append_str(out, "\"");
	}
	if (le != NULL)
		buf_printf(out, "%sle=\"%s\"", family->nlabels > 0 ? "," : "", le);
	buf_append_str(out, "}");
}

/* Appends one sample line. */
static void
metrics_append_sample(struct buf *out, const struct metrics_series *series,
    const char *suffix, const char *le, double v)
{
	metrics_append_sample_name(out, series, suffix, le);
	buf_append_str(out, " ");
	metrics_append_float(out, v);
	buf_append_str(out, "\n");
}

/* Appends a histogram series: cumulative buckets, +Inf, sum and count. */
static void
metrics_append_histogram(struct buf *out, const struct metrics_series *series)
{
	const struct metrics_family *family = series->family;
	uint64_t cumulative = 0;
	char le[40];

	for (size_t i = 0; i < family->nbuckets; i++) {
		cumulative += series->bucket_counts[i];
		metrics_format_float(le, sizeof le, family->buckets[i]);
		metrics_append_sample(out, series, "_bucket", le, (double)cumulative);
	}
	metrics_append_sample(out, series, "_bucket", "+Inf", (double)series->count);
	metrics_append_sample(out, series, "_sum", NULL, series->sum);
	metrics_append_sample(out, series, "_count", NULL, (double)series->count);
}

/* Drops every series of the family. */
static void
metrics_family_clear(struct metrics_family *family)
{
	struct metrics_series *series;

	while ((series = TAILQ_FIRST(&family->series)) != NULL) {
		TAILQ_REMOVE(&family->series, series, link);
		metrics_series_free(series);
	}
}

/* Makes the family's series cb's at each render (kube's custom collectors). */
void
metrics_family_set_collector(struct metrics_family *family, metrics_collect_cb cb, void *arg)
{
	if (family == NULL)
		return;
	family->collect = cb;
	family->collect_arg = arg;
}

/* Appends the exposition of every family that has a series to out. */
void
metrics_render(struct metrics_registry *registry, struct buf *out)
{
	struct metrics_family *family;
	struct metrics_series *series;

	TAILQ_FOREACH(family, &registry->families, link) {
		if (family->collect != NULL) {
			metrics_family_clear(family);
			family->collect(family, family->collect_arg);
		}
		if (TAILQ_EMPTY(&family->series))
			continue;
		buf_printf(out, "# HELP %s ", family->name);
		metrics_append_escaped(out, family->help, 0);
		buf_printf(out, "\n# TYPE %s %s\n", family->name,
		    metrics_type_names[family->type]);
		TAILQ_FOREACH(series, &family->series, link) {
			if (family->type == METRICS_HISTOGRAM) {
				metrics_append_histogram(out, series);
				continue;
			}
			if (series->callback != NULL)
				series->value = series->callback(series->callback_arg);
			metrics_append_sample(out, series, "", NULL, series->value);
		}
	}
}
