/*
 * selector.h - Kubernetes label selectors: parsed, validated, matched in memory and compiled
 * to SQL over the store's object_labels table with bound parameters.
 *
 * A selector comes from one of the two forms Kubernetes has:
 * - the string form of `kubectl -l` and the labelSelector query parameter
 *   ("a=b,c!=d,e in (x,y),f notin (z),g,!h,n>1"), read by selector_parse;
 * - the API form, a metav1.LabelSelector ({"matchLabels": {...}, "matchExpressions": [...]}),
 *   as in a ReplicaSet's spec.selector, read by selector_from_json.
 * Both validate every key and value as Kubernetes does; an invalid selector is an error, never
 * a selector that matches everything.
 *
 * selector_to_sql writes a boolean expression over the table
 *     labels(uid TEXT, key TEXT, value TEXT, PRIMARY KEY (uid, key))
 * in which every key and value is a "?" parameter; selector_bind binds them, in order. The
 * expression is true exactly for the uids whose labels selector_matches accepts.
 */
#ifndef SQLKCM_SELECTOR_H
#define SQLKCM_SELECTOR_H

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "util.h"

/* A parsed, validated label selector: a list of requirements that must all hold, or the
 * selector that matches nothing. */
struct selector;

/* Parses the string form; on error returns NULL and sets *error (naming the position and the
 * offending token, key or value). "" is the selector that matches everything. */
struct selector *selector_parse(const char *text, char **error);

/* Converts the API form (metav1.LabelSelector as JSON). NULL or JSON null is the selector
 * that matches nothing; {} (or empty matchLabels and matchExpressions) matches everything.
 * Operators are In, NotIn, Exists and DoesNotExist. On error returns NULL and sets *error,
 * naming the field ("matchExpressions[1].values[0]") and the offending value. */
struct selector *selector_from_json(const cJSON *json, char **error);

/* Frees s and everything it owns; NULL is allowed. */
void selector_free(struct selector *s);

/* Returns 1 if s has no requirement and so matches every object (kube's Empty()). */
int selector_matches_everything(const struct selector *s);

/* Returns 1 if s is the selector that matches no object (kube's labels.Nothing()). */
int selector_matches_nothing(const struct selector *s);

/* Returns 1 if s matches the labels (a JSON object of strings, as metadata.labels, or NULL for
 * none), 0 if not. Members whose value is not a string are treated as absent. */
int selector_matches(const struct selector *s, const cJSON *labels);

/*
 * Appends to sql a boolean SQL expression, true exactly for the rows whose object id (the
 * SQL expression id_expr, e.g. "p.id") the selector matches through the object_labels
 * table. Keys and values appear only as "?" parameters; bind them with selector_bind.
 * id_expr is code from the caller, not user data, and must be qualified with its table
 * name or alias: the expression's subqueries read object_labels under the alias
 * "selector_label". A selector that matches everything is "1", one that matches nothing
 * "0". SQLite's limits still apply: a selector with more than 32766 keys and values in
 * all, or of several hundred kilobytes, makes a statement that sqlite3_prepare refuses
 * (with its error).
 */
void selector_to_sql(const struct selector *s, const char *id_expr, struct buf *sql);

/* Binds the parameters of selector_to_sql's expression, in order, starting at parameter
 * index first; returns how many it bound, or -1 (setting *error) if SQLite refuses one. */
int selector_bind(const struct selector *s, sqlite3_stmt *stmt, int first, char **error);

/* Returns the number of parameters selector_to_sql writes (what selector_bind binds). */
int selector_parameter_count(const struct selector *s);

/* Returns the string form (malloc'd), requirements sorted by key and values sorted, as kube's
 * Selector.String(). Selectors matching everything and nothing both give "", as in kube: do
 * not parse the string of a nothing selector back. */
char *selector_to_string(const struct selector *s);

#endif
