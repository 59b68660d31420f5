/*
 * metrics.h - counters, gauges and histograms, rendered in Prometheus text format 0.0.4.
 *
 * A registry holds families (a name, help text, type and label names); a family holds
 * series, one per set of label values. Code that counts something asks once for its
 * series and keeps the pointer: updating a series is a store, never a lookup. Series live
 * as long as the registry. Every update function accepts a NULL series and does nothing,
 * so an optional metric costs its caller no test.
 */
#ifndef SQLKCM_METRICS_H
#define SQLKCM_METRICS_H

#include <stddef.h>

#include "util.h"

struct metrics_registry;
struct metrics_family;
struct metrics_series;

enum metrics_type {
	METRICS_COUNTER,
	METRICS_GAUGE,
	METRICS_HISTOGRAM,
};

/* What a family is. label_names is NULL-terminated (NULL: no labels). A histogram's
 * buckets are the upper bounds of its buckets, increasing; the +Inf bucket is implied. */
struct metrics_spec {
	enum metrics_type type;
	const char *name;
	const char *help;
	const char *const *label_names;
	const double *buckets;
	size_t nbuckets;
};

/* Computes a gauge's (or a counter's) value when the registry is rendered. */
typedef double (*metrics_gauge_cb)(void *arg);

struct metrics_registry *metrics_registry_new(void);
void metrics_registry_free(struct metrics_registry *registry);

/* Returns the family spec describes, registering it on first use. Asking again with the
 * same spec returns the same family; a spec that reuses a name with another type, help,
 * label names or buckets, or that has an invalid name or label name, fails. */
struct metrics_family *metrics_family_register(struct metrics_registry *registry,
    const struct metrics_spec *spec, char **error);

/* Returns the family's series for label_values (one value per label name, in order; NULL
 * when the family has no labels), creating it with zero values on first use. */
struct metrics_series *metrics_series_get(struct metrics_family *family,
    const char *const *label_values);

/* Adds v (>= 0; anything else is ignored) to a counter. */
void metrics_counter_add(struct metrics_series *series, double v);
void metrics_gauge_set(struct metrics_series *series, double v);
void metrics_gauge_add(struct metrics_series *series, double v);
/* Makes a gauge's value cb(arg), computed at each render; a NULL cb keeps the value the
 * old callback gives at that moment and makes the gauge settable again. */
void metrics_gauge_set_callback(struct metrics_series *series, metrics_gauge_cb cb,
    void *arg);
/* The same for a counter whose count is kept elsewhere (client_golang's CounterFunc):
 * cb must never decrease. Call with a NULL cb before what arg points to is freed. */
void metrics_counter_set_callback(struct metrics_series *series, metrics_gauge_cb cb,
    void *arg);
void metrics_histogram_observe(struct metrics_series *series, double v);

/* Fills a family at each render (client_golang's custom Collector, whose series are the
 * ones it reports at that moment): the family's series are dropped and cb sets them anew
 * (metrics_series_get, metrics_gauge_set). Its series must not be kept. Call with a NULL
 * cb before what arg points to is freed. */
typedef void (*metrics_collect_cb)(struct metrics_family *family, void *arg);
void metrics_family_set_collector(struct metrics_family *family, metrics_collect_cb cb,
    void *arg);

/* Appends every family that has a series to out, sorted by name, each series with its
 * labels in name order, series sorted by their values in that order (Prometheus text
 * format 0.0.4, as client_golang writes it). */
void metrics_render(struct metrics_registry *registry, struct buf *out);

#endif
