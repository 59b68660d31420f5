/*
 * history.h - ControllerRevisions: the snapshots of a workload's template that a
 * DaemonSet or a StatefulSet keeps to roll and to roll back, with kube's rules for
 * their names, hashes, numbers, equality and order (kube's pkg/controller/history).
 */
#ifndef SQLKCM_HISTORY_H
#define SQLKCM_HISTORY_H

#include <stdint.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

/* kube's ControllerRevisionHashLabel: the hash of a revision, on it and on its pods. */
#define HISTORY_HASH_LABEL "controller-revision-hash"

/* Sums len bytes at data into a 32-bit FNV-1 hash h (start with HISTORY_FNV_OFFSET). */
#define HISTORY_FNV_OFFSET 2166136261u
uint32_t history_fnv1(uint32_t h, const void *data, size_t len);
/* The same for FNV-1a. */
uint32_t history_fnv1a(uint32_t h, const void *data, size_t len);

/* Renders a 32-bit hash as kube's names do: its decimal digits mapped into the alphabet
 * "bcdfghjklmnpqrstvwxz2456789" (kube's rand.SafeEncodeString). Malloc'd. */
char *history_safe_encode(uint32_t h);

/* kube's HashControllerRevision: FNV-1 (32 bits) over a revision's raw data, then the
 * decimal text of probe when probe >= 0 (the collision count), safe-encoded. Malloc'd. */
char *history_hash_revision(const char *raw, size_t len, long long probe);

/* A template's hash, the name of its revision and its pods' label: FNV-1a over the
 * canonical JSON of template (history_canonical_json), then, when collision_count >= 0,
 * the count as eight bytes (uint32 little-endian, four zeros) as kube adds it. kube hashes
 * a dump of its Go structures instead (controller.ComputeHash), which C cannot reproduce:
 * this value is sqlkcm's own, in kube's alphabet. Malloc'd. */
char *history_template_hash(const cJSON *template, long long collision_count);

/* kube's ControllerRevisionName: prefix (cut to 223 bytes) "-" hash. Malloc'd. */
char *history_revision_name(const char *prefix, const char *hash);

/* v as Go's encoding/json writes a map[string]interface{}: members in byte order of
 * their names, no spaces, strings escaped as Go does (<, > and & as \u003c, \u003e,
 * \u0026; U+2028 and U+2029 escaped), whole numbers without exponent. Malloc'd. */
char *history_canonical_json(const cJSON *v);

/* kube's EqualRevision on data: the same raw bytes once both are canonical. NULL data is
 * equal only to NULL. */
int history_data_equal(const cJSON *a, const cJSON *b);

struct resource;

/* kube's getPatch: the data of a revision of owner (a DaemonSet or a StatefulSet) now, the
 * patch that puts its template back whole: {"spec":{"template":{..., "$patch":"replace"}}}.
 * Malloc'd. */
cJSON *history_template_patch(const cJSON *owner);

/* kube's NewControllerRevision (with the owner's annotations, as the DaemonSet and
 * StatefulSet controllers add them): the revision name of owner (of owner_resource), in
 * its namespace, labelled with the template's labels and hash, controlled by owner, with
 * data (written canonically, as kube compares the bytes) and number. Malloc'd. */
cJSON *history_revision_new(const struct resource *owner_resource, const cJSON *owner,
    const char *name, const char *hash, const cJSON *data, long long number);

/* kube's ApplyRevision on the template: revision's data.spec.template without its
 * "$patch" (a copy), or NULL when it has none. */
cJSON *history_revision_template(const cJSON *revision);

/* One revision as the history reads it. */
struct history_revision {
	const char *name;
	long long revision;
	double created;		/* creationTimestamp, Unix seconds */
	int index;		/* the caller's */
};

/* kube's SortControllerRevisions: by revision, then creation, then name. */
void history_sort(struct history_revision *v, int n);

/* kube's NextRevision: the highest revision of v plus one (1 when n is 0). */
long long history_next_revision(const struct history_revision *v, int n);

/* A ControllerRevision as the cache holds it. */
struct history_cached {
	char *name;
	double created;		/* creationTimestamp, Unix seconds */
	cJSON *body;
};

struct selector;
struct sync_result;

/* kube's controlledHistories over one query: appends the revisions stmt yields (rows of
 * name, creation time and body) to *v (*n of them). With sel, the rows are orphans: only
 * those sel matches that are not being deleted are taken, each adopted by owner (of
 * owner_resource, in namespace) through a claim in out, which then rechecks its owner.
 * Returns stmt's last step (SQLITE_DONE unless it failed); does not reset it. */
int history_read_cached(sqlite3_stmt *stmt, const struct resource *owner_resource,
    const cJSON *owner, const struct selector *sel, const char *namespace,
    struct sync_result *out, struct history_cached **v, int *n);
/* Frees the n revisions of v and v. */
void history_cached_free(struct history_cached *v, int n);

#endif
