/*
 * deploymentrules.c - the Deployment controller's rules (kube's deployment/util), over
 * the apiserver's JSON.
 *
 * Every function here decides from the objects it is given and nothing else: no store, no
 * clock (the caller passes now), no I/O. The sync in deployment.c strings them together;
 * the unit tests hold them to kube-controller-manager's own case tables, so each one
 * follows its kube counterpart rule for rule, corner cases included (the revision-history
 * trimming, the fencepost that turns two zeros into one unavailable pod, the rounding of
 * proportional scaling).
 *
 * The objects are what the apiserver sends, so the API's defaults stand in for what a Go
 * struct would hold: spec.replicas absent is 1, a strategy absent is RollingUpdate, a
 * rollingUpdate that leaves out maxSurge or maxUnavailable has 25%. A number absent from a
 * status is 0. Annotations are strings; the numbers written into them are in decimal.
 *
 * Where kube parses a string with strconv (revisions, annotations, percentages), the
 * parsers below accept exactly what strconv does in base 10: an optional sign where Go
 * allows one, then digits, nothing else, within range.
 *
 * The pod-template-hash is fnv-1a over a canonical JSON text of the template (members in
 * sorted key order, no spaces), so it is stable for a template whatever order its members
 * arrive in. It is not kube's value: kube hashes a dump of its Go struct, which JSON
 * cannot reproduce. Names built on it are therefore sqlkcm's own, in kube's alphabet.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/deployment.h"
#include "intstr.h"
#include "json.h"
#include "timeutil.h"
#include "util.h"

#define INT32_LIMIT 2147483647LL	/* math.MaxInt32: "no limit" for the spec's seconds */
#define NAME_LIMIT 253			/* a DNS-1123 subdomain, as object names are */
#define NAME_SEPARATOR "-"

#define CONDITION_PROGRESSING "Progressing"
#define REASON_NEW_RS_AVAILABLE "NewReplicaSetAvailable"
#define REASON_TIMED_OUT "ProgressDeadlineExceeded"

/* The annotations a Deployment keeps to itself when its own are copied onto its new
 * ReplicaSet: the controller's bookkeeping, and kubectl's record of the last apply. */
static const char *const annotations_not_copied[] = {
	"kubectl.kubernetes.io/last-applied-configuration",
	DEPLOYMENT_REVISION_ANNOTATION,
	DEPLOYMENT_REVISION_HISTORY_ANNOTATION,
	DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION,
	DEPLOYMENT_MAX_REPLICAS_ANNOTATION,
	DEPLOYMENT_ROLLBACK_TO_ANNOTATION,
};

/* --- reading the objects ------------------------------------------------------------- */

/* The annotations of object, made when it has none, as kube makes the map before it
 * writes to it. */
static cJSON *
annotations_of(cJSON *object)
{
	return json_child_object(json_child_object(object, "metadata"), "annotations");
}

/* 1 when annotation item already reads value. */
static int
annotation_is(const cJSON *item, const char *value)
{
	return cJSON_IsString(item) && strcmp(item->valuestring, value) == 0;
}

/* Sets annotation key of rs to the decimal value unless it already reads so; 1 if it
 * changed. */
static int
annotation_set_number(cJSON *rs, const char *key, long long value)
{
	cJSON *annotations = annotations_of(rs);
	char text[32];

	snprintf(text, sizeof text, "%lld", value);
	if (annotation_is(cJSON_GetObjectItemCaseSensitive(annotations, key), text))
		return 0;
	json_set(annotations, key, cJSON_CreateString(text));
	return 1;
}

/* --- strconv in base 10 -------------------------------------------------------------- */

/* Reads s as decimal digits only (at least one), no larger than max. */
static int
digits_parse(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (*s < '0' || *s > '9' || v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* Reads s as strconv.ParseInt(s, 10, 64) (and so Atoi) does: a sign, then digits, within
 * int64. */
static int
int64_parse(const char *s, long long *out)
{
	unsigned long long v;
	int negative = *s == '-';

	if (*s == '+' || *s == '-')
		s++;
	if (digits_parse(s, negative ? (unsigned long long)INT64_MAX + 1 : INT64_MAX, &v) == -1)
		return -1;
	*out = negative ? (long long)(0 - v) : (long long)v;
	return 0;
}

/* --- int-or-percent and the fenceposts ----------------------------------------------- */

/* a/100 rounded towards minus infinity, or towards plus infinity when up. */
int
deployment_resolve_fenceposts(const cJSON *max_surge, const cJSON *max_unavailable,
    long long desired, long long *surge, long long *unavailable, char **error)
{
	long long s, u;

	*surge = *unavailable = 0;
	if (intstr_scaled_or_zero(max_surge, desired, 1, &s, error) == -1 ||
	    intstr_scaled_or_zero(max_unavailable, desired, 0, &u, error) == -1)
		return -1;
	/* Validation refuses 0 and 0, but rounding unavailable down can still reach it;
	 * a rollout that may neither surge nor lose a pod could never move, and surging
	 * may be what a quota forbids, so one pod may go unavailable. */
	if (s == 0 && u == 0)
		u = 1;
	*surge = s;
	*unavailable = u;
	return 0;
}

long long
deployment_spec_replicas(const cJSON *object)
{
	return json_int(object, "spec.replicas", 1);
}

int
deployment_is_rolling(const cJSON *d)
{
	const cJSON *type = json_path(d, "spec.strategy.type");

	if (type == NULL || cJSON_IsNull(type))
		return 1;
	return cJSON_IsString(type) && strcmp(type->valuestring, "RollingUpdate") == 0;
}

/*
 * maxSurge or maxUnavailable of d's rolling update: 25%, the API's default, when the
 * rollingUpdate leaves it out; NULL (which counts as 0) when there is no rollingUpdate at
 * all, as kube's ResolveFenceposts reads a nil one.
 */
static const cJSON *
rolling_parameter(const cJSON *d, const char *name)
{
	static char api_default_text[] = "25%";
	static const cJSON api_default = {
		.type = cJSON_String,
		.valuestring = api_default_text,
	};
	const cJSON *rolling = json_path(d, "spec.strategy.rollingUpdate");
	const cJSON *v;

	if (!cJSON_IsObject(rolling))
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(rolling, name);
	if (v == NULL || cJSON_IsNull(v))
		return &api_default;
	return v;
}

/* The resolved fenceposts of a rolling Deployment; 0 and 0 when they do not resolve
 * (validation keeps such values out; kube ignores the error the same way). */
static void
fenceposts_of(const cJSON *d, long long *surge, long long *unavailable)
{
	deployment_resolve_fenceposts(rolling_parameter(d, "maxSurge"),
	    rolling_parameter(d, "maxUnavailable"), deployment_spec_replicas(d), surge,
	    unavailable, NULL);
}

long long
deployment_max_surge(const cJSON *d)
{
	long long surge, unavailable;

	if (!deployment_is_rolling(d))
		return 0;
	fenceposts_of(d, &surge, &unavailable);
	return surge;
}

long long
deployment_max_unavailable(const cJSON *d)
{
	long long replicas = deployment_spec_replicas(d), surge, unavailable;

	if (!deployment_is_rolling(d) || replicas == 0)
		return 0;
	fenceposts_of(d, &surge, &unavailable);
	return unavailable > replicas ? replicas : unavailable;
}

/* --- revisions and annotations ------------------------------------------------------- */

long long
deployment_revision(const cJSON *object)
{
	const cJSON *v = json_annotation(object, DEPLOYMENT_REVISION_ANNOTATION);
	long long revision;

	if (v == NULL)
		return 0;
	if (!cJSON_IsString(v) || int64_parse(v->valuestring, &revision) == -1)
		return -1;
	return revision;
}

/* A negative revision, parsed or not, can never be the largest nor the second largest
 * (both start at 0), so skipping every negative one is the same as kube skipping the
 * unparseable ones. */

long long
deployment_max_revision(const cJSON *const *rs, int n)
{
	long long max = 0;

	for (int i = 0; i < n; i++) {
		long long v = deployment_revision(rs[i]);

		if (v > max)
			max = v;
	}
	return max;
}

long long
deployment_last_revision(const cJSON *const *rs, int n)
{
	long long max = 0, second = 0;

	for (int i = 0; i < n; i++) {
		long long v = deployment_revision(rs[i]);

		if (v < 0)
			continue;
		if (v >= max) {
			second = max;
			max = v;
		} else if (v > second) {
			second = v;
		}
	}
	return second;
}

/* 1 when a Deployment's annotation key stays off its ReplicaSets. */
static int
annotation_not_copied(const char *key)
{
	for (size_t i = 0; i < sizeof annotations_not_copied / sizeof *annotations_not_copied;
	    i++)
		if (strcmp(key, annotations_not_copied[i]) == 0)
			return 1;
	return 0;
}

/* Copies d's annotations that a ReplicaSet carries onto rs (kube's
 * copyDeploymentAnnotationsToReplicaSet); 1 if any changed. Annotations rs has and d
 * does not are left alone. */
static int
annotations_copy(const cJSON *d, cJSON *rs)
{
	const cJSON *from = json_path(d, "metadata.annotations");
	cJSON *to = annotations_of(rs);
	const cJSON *a;
	int changed = 0;

	if (!cJSON_IsObject(from))
		return 0;
	cJSON_ArrayForEach(a, from) {
		const cJSON *have;

		if (a->string == NULL || annotation_not_copied(a->string))
			continue;
		have = cJSON_GetObjectItemCaseSensitive(to, a->string);
		if (have != NULL && cJSON_Compare(have, a, 1))
			continue;
		json_set(to, a->string, cJSON_Duplicate(a, 1));
		changed = 1;
	}
	return changed;
}

/*
 * The revision history after old is pushed onto history (comma-separated, oldest first),
 * kept within limit characters by dropping the oldest entries; NULL when even old alone
 * does not fit, and the history stays as it is. A history whose first entry is empty is
 * replaced by old.
 */
static char *
history_push(const char *history, const char *old, int limit)
{
	long long total;
	const char *rest = history;

	if (history[0] == '\0' || history[0] == ',')
		return xstrdup(old);
	total = (long long)strlen(history) + (long long)strlen(old) + 1;
	while (total > limit && rest != NULL) {
		size_t len = strcspn(rest, ",");

		total -= (long long)len + 1;
		rest = rest[len] == ',' ? rest + len + 1 : NULL;
	}
	if (total > limit)
		return NULL;
	if (rest == NULL)
		return xstrdup(old);
	return xasprintf("%s,%s", rest, old);
}

int
deployment_set_new_rs_annotations(const cJSON *d, cJSON *rs, long long new_revision,
    int exists, int limit_chars)
{
	const cJSON *item;
	cJSON *annotations;
	char *old = NULL, text[32];
	long long old_revision = 0;
	int changed, had_revision;

	changed = annotations_copy(d, rs);
	annotations = annotations_of(rs);

	/* The new ReplicaSet's revision only goes up: an older revision than it has means
	 * old ReplicaSets were deleted since it was raised, not that it went back. One that
	 * is not a number is left for a person to mend, and nothing is reported changed,
	 * not even the annotations just copied, as kube reports it. */
	item = cJSON_GetObjectItemCaseSensitive(annotations, DEPLOYMENT_REVISION_ANNOTATION);
	had_revision = item != NULL;
	if (had_revision) {
		if (!cJSON_IsString(item))
			return 0;
		old = xstrdup(item->valuestring);
		if (old[0] != '\0' && int64_parse(old, &old_revision) == -1) {
			free(old);
			return 0;
		}
	}
	if (old_revision < new_revision) {
		snprintf(text, sizeof text, "%lld", new_revision);
		json_set(annotations, DEPLOYMENT_REVISION_ANNOTATION, cJSON_CreateString(text));
		changed = 1;

		/* A ReplicaSet that had a revision and gets a newer one is being rolled
		 * back to: the revisions it served before are kept in its history. */
		if (had_revision) {
			const cJSON *h = cJSON_GetObjectItemCaseSensitive(annotations,
			    DEPLOYMENT_REVISION_HISTORY_ANNOTATION);
			char *history = history_push(cJSON_IsString(h) ? h->valuestring : "",
			    old, limit_chars);

			if (history != NULL)
				json_set(annotations, DEPLOYMENT_REVISION_HISTORY_ANNOTATION,
				    cJSON_CreateString(history));
			free(history);
		}
	}
	free(old);

	/* A ReplicaSet about to be created records the size it is made for. */
	if (!exists && deployment_set_replicas_annotations(rs, deployment_spec_replicas(d),
	    deployment_spec_replicas(d) + deployment_max_surge(d)))
		changed = 1;
	return changed;
}

int
deployment_set_replicas_annotations(cJSON *rs, long long desired, long long max)
{
	int changed = 0;

	changed |= annotation_set_number(rs, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION, desired);
	changed |= annotation_set_number(rs, DEPLOYMENT_MAX_REPLICAS_ANNOTATION, max);
	return changed;
}

int
deployment_replicas_annotations_need_update(const cJSON *rs, long long desired,
    long long max)
{
	char text[32];

	if (!cJSON_IsObject(json_path(rs, "metadata.annotations")))
		return 1;
	snprintf(text, sizeof text, "%lld", desired);
	if (!annotation_is(json_annotation(rs, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION), text))
		return 1;
	snprintf(text, sizeof text, "%lld", max);
	return !annotation_is(json_annotation(rs, DEPLOYMENT_MAX_REPLICAS_ANNOTATION), text);
}

int
deployment_int32_annotation(const cJSON *rs, const char *key, long long *out)
{
	const cJSON *v = json_annotation(rs, key);
	unsigned long long n;

	*out = 0;
	/* strconv.ParseUint: digits only, no sign; then within int32. */
	if (!cJSON_IsString(v) || digits_parse(v->valuestring, INT32_LIMIT, &n) == -1)
		return 0;
	*out = (long long)n;
	return 1;
}

/* --- scaling ------------------------------------------------------------------------- */

/*
 * The replicas rs gains (negative: loses) when d's size changed since rs's max-replicas
 * annotation was written: rs keeps its share of the whole (kube's getReplicaSetFraction).
 */
static long long
rs_fraction(const cJSON *rs, const cJSON *d)
{
	long long replicas = deployment_spec_replicas(d);
	long long rs_replicas = deployment_spec_replicas(rs);
	long long max_now, max_before;

	/* Scaling to nothing takes all of it. */
	if (replicas == 0)
		return -rs_replicas;
	max_now = replicas + deployment_max_surge(d);
	/* Without the annotation (removed, garbled, 0), the Deployment's current size is
	 * the best guess of the size before; the callers' clamping keeps the result within
	 * bounds even when the guess is off. With neither, do not move. */
	if (!deployment_int32_annotation(rs, DEPLOYMENT_MAX_REPLICAS_ANNOTATION, &max_before) ||
	    max_before == 0) {
		max_before = json_int(d, "status.replicas", 0);
		if (max_before == 0)
			return 0;
	}
	/* Rounded half away from zero, as math.Round. The product is taken in 64 bits
	 * (kube's is int32 and would wrap past 2^31). */
	return (long long)round((double)(rs_replicas * max_now) / (double)max_before) -
	    rs_replicas;
}

long long
deployment_rs_proportion(const cJSON *rs, const cJSON *d, long long to_add, long long added)
{
	long long fraction, allowed;

	if (rs == NULL || deployment_spec_replicas(rs) == 0 || to_add == 0 || to_add == added)
		return 0;
	fraction = rs_fraction(rs, d);
	allowed = to_add - added;
	/* Never give out more than is left to give, in either direction. */
	if (to_add > 0)
		return fraction < allowed ? fraction : allowed;
	return fraction > allowed ? fraction : allowed;
}

long long
deployment_new_rs_new_replicas(const cJSON *d, const cJSON *const *all, int n,
    const cJSON *new_rs)
{
	long long replicas = deployment_spec_replicas(d);
	long long new_replicas = deployment_spec_replicas(new_rs);
	long long surge, current = 0, room, wanted;

	if (!deployment_is_rolling(d))
		return replicas;
	/* maxSurge alone, rounded up, without the fencepost rule; an invalid one counts
	 * as 0 (validation keeps it out). */
	if (intstr_scaled_or_zero(rolling_parameter(d, "maxSurge"), replicas, 1, &surge,
	    NULL) == -1)
		surge = 0;
	for (int i = 0; i < n; i++)
		if (all[i] != NULL)
			current += deployment_spec_replicas(all[i]);
	/* At the most pods allowed: the new ReplicaSet waits for old ones to go. */
	if (current >= replicas + surge)
		return new_replicas;
	room = replicas + surge - current;
	wanted = replicas - new_replicas;
	return new_replicas + (room < wanted ? room : wanted);
}

int
deployment_is_saturated(const cJSON *d, const cJSON *rs)
{
	const cJSON *desired_text;
	long long replicas = deployment_spec_replicas(d), desired;

	if (rs == NULL)
		return 0;
	desired_text = json_annotation(rs, DEPLOYMENT_DESIRED_REPLICAS_ANNOTATION);
	if (!cJSON_IsString(desired_text) || int64_parse(desired_text->valuestring,
	    &desired) == -1)
		return 0;
	return deployment_spec_replicas(rs) == replicas && desired == replicas &&
	    json_int(rs, "status.availableReplicas", 0) == replicas;
}

/* --- templates ----------------------------------------------------------------------- */

/* 1 when v is what Go's semantic equality takes for nothing: absent, null, an empty
 * array (a nil slice is equal to an empty one), or an object with nothing in it (a nil
 * map equals an empty one, and a struct of zero fields is the field left out). */
static int
json_is_nothing(const cJSON *v)
{
	const cJSON *m;

	if (v == NULL || cJSON_IsNull(v))
		return 1;
	if (cJSON_IsArray(v))
		return v->child == NULL;
	if (!cJSON_IsObject(v))
		return 0;
	cJSON_ArrayForEach(m, v)
		if (!json_is_nothing(m))
			return 0;
	return 1;
}

/* Deep equality of two JSON values: members in any order, numbers by value, nothing
 * equal to nothing. */
static int
json_equal(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y;

	if (json_is_nothing(a) || json_is_nothing(b))
		return json_is_nothing(a) && json_is_nothing(b);
	if ((a->type & 0xff) != (b->type & 0xff))
		return 0;
	if (cJSON_IsNumber(a))
		return a->valuedouble == b->valuedouble;
	if (cJSON_IsString(a) || cJSON_IsRaw(a))
		return strcmp(a->valuestring, b->valuestring) == 0;
	if (cJSON_IsArray(a)) {
		for (x = a->child, y = b->child; x != NULL && y != NULL; x = x->next, y = y->next)
			if (!json_equal(x, y))
				return 0;
		return x == NULL && y == NULL;
	}
	if (cJSON_IsObject(a)) {
		/* Each member of either must match the other's (or be nothing where the
		 * other has none). */
		cJSON_ArrayForEach(x, a)
			if (!json_equal(x, cJSON_GetObjectItemCaseSensitive(b, x->string)))
				return 0;
		cJSON_ArrayForEach(y, b)
			if (cJSON_GetObjectItemCaseSensitive(a, y->string) == NULL &&
			    !json_is_nothing(y))
				return 0;
		return 1;
	}
	return 1;	/* true, false: the type said it all */
}

/* Removes the pod-template-hash label from template (a copy the caller owns). */
static void
hash_label_remove(cJSON *template)
{
	cJSON *metadata = cJSON_GetObjectItemCaseSensitive(template, "metadata");
	cJSON *labels = cJSON_GetObjectItemCaseSensitive(metadata, "labels");

	if (cJSON_IsObject(labels))
		cJSON_DeleteItemFromObjectCaseSensitive(labels, DEPLOYMENT_HASH_LABEL);
}

int
deployment_templates_equal(const cJSON *a, const cJSON *b)
{
	cJSON *ca = cJSON_Duplicate(a, 1), *cb = cJSON_Duplicate(b, 1);
	int equal;

	/* The hash label is left out: a ReplicaSet's template carries it, the Deployment's
	 * does not, and its value changes with the hashing, not with the pods. */
	hash_label_remove(ca);
	hash_label_remove(cb);
	equal = json_equal(ca, cb);
	cJSON_Delete(ca);
	cJSON_Delete(cb);
	return equal;
}

/* Orders object members by key, bytewise. */
static int
member_key_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string != NULL ? x->string : "", y->string != NULL ? y->string : "");
}

/* Appends s as a JSON string. */
static void
canonical_string(struct buf *out, const char *s)
{
	buf_append_str(out, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			buf_append_str(out, "\\\"");
			break;
		case '\\':
			buf_append_str(out, "\\\\");
			break;
		case '\b':
			buf_append_str(out, "\\b");
			break;
		case '\f':
			buf_append_str(out, "\\f");
			break;
		case '\n':
			buf_append_str(out, "\\n");
			break;
		case '\r':
			buf_append_str(out, "\\r");
			break;
		case '\t':
			buf_append_str(out, "\\t");
			break;
		default:
			if (*p < 0x20)
				buf_printf(out, "\\u%04x", *p);
			else
				buf_append(out, p, 1);
		}
	}
	buf_append_str(out, "\"");
}

/*
 * Appends v as canonical JSON: no spaces, object members sorted by key, integers without
 * a fraction or exponent. Two values that differ only in member order print the same,
 * which is what makes the hash of a template stable.
 */
static void
canonical_print(struct buf *out, const cJSON *v)
{
	if (cJSON_IsObject(v)) {
		const cJSON *m, **members;
		int n = 0, i = 0;

		cJSON_ArrayForEach(m, v)
			n++;
		members = xcalloc(n > 0 ? (size_t)n : 1, sizeof *members);
		cJSON_ArrayForEach(m, v)
			members[i++] = m;
		qsort(members, (size_t)n, sizeof *members, member_key_cmp);
		buf_append_str(out, "{");
		for (i = 0; i < n; i++) {
			if (i > 0)
				buf_append_str(out, ",");
			canonical_string(out, members[i]->string != NULL ? members[i]->string : "");
			buf_append_str(out, ":");
			canonical_print(out, members[i]);
		}
		buf_append_str(out, "}");
		free(members);
	} else if (cJSON_IsArray(v)) {
		const cJSON *e;
		int first = 1;

		buf_append_str(out, "[");
		cJSON_ArrayForEach(e, v) {
			if (!first)
				buf_append_str(out, ",");
			first = 0;
			canonical_print(out, e);
		}
		buf_append_str(out, "]");
	} else if (cJSON_IsString(v)) {
		canonical_string(out, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;

		if (d == floor(d) && fabs(d) < 1e18)
			buf_printf(out, "%lld", (long long)d);
		else
			buf_printf(out, "%.17g", d);
	} else if (cJSON_IsTrue(v)) {
		buf_append_str(out, "true");
	} else if (cJSON_IsFalse(v)) {
		buf_append_str(out, "false");
	} else if (cJSON_IsRaw(v)) {
		buf_append_str(out, v->valuestring);
	} else {
		buf_append_str(out, "null");
	}
}

/* Feeds len bytes into a 32-bit fnv-1a hash. */
static uint32_t
fnv1a(uint32_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

char *
deployment_template_hash(const cJSON *template, long long collision_count)
{
	/* kube's alphabet for names made from hashes: no vowels, no digits that read as
	 * letters, so a name never spells a word. */
	static const char safe[] = "bcdfghjklmnpqrstvwxz2456789";
	struct buf text;
	uint32_t h = 2166136261u;
	char digits[16], *p;

	buf_init(&text);
	canonical_print(&text, template);
	h = fnv1a(h, text.data, text.len);
	buf_free(&text);
	/* The count goes in after the template, so that a collision moves the name; as
	 * kube writes it, eight bytes: the uint32 little-endian, then four zeros. */
	if (collision_count > 0) {
		uint32_t c = (uint32_t)collision_count;
		unsigned char bytes[8] = {
			(unsigned char)c, (unsigned char)(c >> 8), (unsigned char)(c >> 16),
			(unsigned char)(c >> 24), 0, 0, 0, 0,
		};

		h = fnv1a(h, bytes, sizeof bytes);
	}
	snprintf(digits, sizeof digits, "%u", (unsigned)h);
	for (p = digits; *p != '\0'; p++)
		*p = safe[(unsigned char)*p % (sizeof safe - 1)];
	return xstrdup(digits);
}

char *
deployment_rs_name(const char *name, const char *hash)
{
	long long room = NAME_LIMIT - (long long)strlen(NAME_SEPARATOR) -
	    (long long)strlen(hash);

	/* The Deployment's name gives way to the hash, which tells the ReplicaSets apart;
	 * a hash too long to leave any room is not cut, and the apiserver refuses. */
	if ((long long)strlen(name) > room && room > 0)
		return xasprintf("%.*s" NAME_SEPARATOR "%s", (int)room, name, hash);
	return xasprintf("%s" NAME_SEPARATOR "%s", name, hash);
}

/* --- status -------------------------------------------------------------------------- */

int
deployment_complete(const cJSON *d, const cJSON *status)
{
	long long replicas = deployment_spec_replicas(d);

	return json_int(status, "updatedReplicas", 0) == replicas &&
	    json_int(status, "replicas", 0) == replicas &&
	    json_int(status, "availableReplicas", 0) == replicas &&
	    json_int(status, "observedGeneration", 0) >= json_int(d, "metadata.generation", 0);
}

int
deployment_progressing(const cJSON *d, const cJSON *status)
{
	const cJSON *old = json_path(d, "status");
	long long old_old_pods = json_int(old, "replicas", 0) -
	    json_int(old, "updatedReplicas", 0);
	long long new_old_pods = json_int(status, "replicas", 0) -
	    json_int(status, "updatedReplicas", 0);

	/* Any step forward counts: more updated pods, fewer old ones, more ready or
	 * available. */
	return json_int(status, "updatedReplicas", 0) > json_int(old, "updatedReplicas", 0) ||
	    new_old_pods < old_old_pods ||
	    json_int(status, "readyReplicas", 0) > json_int(old, "readyReplicas", 0) ||
	    json_int(status, "availableReplicas", 0) > json_int(old, "availableReplicas", 0);
}

int
deployment_timed_out(const cJSON *d, const cJSON *status, double now)
{
	const cJSON *cond, *stamp;
	const char *reason;
	time_t from;

	if (!deployment_has_progress_deadline(d))
		return 0;
	/* Without a Progressing condition there is nothing to measure from. */
	if ((cond = deployment_condition_get(status, CONDITION_PROGRESSING)) == NULL)
		return 0;
	reason = json_string(cond, "reason");
	/* A rollout that completed is not timed out by an old stamp (the cache may not have
	 * the condition of a rollout just started yet); one that timed out stays so. */
	if (strcmp(reason, REASON_NEW_RS_AVAILABLE) == 0)
		return 0;
	if (strcmp(reason, REASON_TIMED_OUT) == 0)
		return 1;
	/* An unreadable or missing stamp is Go's zero time, long past. */
	stamp = cJSON_GetObjectItemCaseSensitive(cond, "lastUpdateTime");
	if (!cJSON_IsString(stamp) || time_parse_rfc3339(stamp->valuestring, &from) == -1)
		return 1;
	return (double)from + (double)json_int(d, "spec.progressDeadlineSeconds", 0) < now;
}

/* 1 when the spec's field at path is set and not MaxInt32, which means "no limit". */
static int
spec_limit_set(const cJSON *d, const char *path)
{
	const cJSON *v = json_path(d, path);

	return cJSON_IsNumber(v) && v->valuedouble != (double)INT32_LIMIT;
}

int
deployment_has_progress_deadline(const cJSON *d)
{
	return spec_limit_set(d, "spec.progressDeadlineSeconds");
}

int
deployment_has_history_limit(const cJSON *d)
{
	return spec_limit_set(d, "spec.revisionHistoryLimit");
}

/* --- conditions ---------------------------------------------------------------------- */

const cJSON *
deployment_condition_get(const cJSON *status, const char *type)
{
	const cJSON *conditions = json_path(status, "conditions"), *c;

	if (!cJSON_IsArray(conditions))
		return NULL;
	cJSON_ArrayForEach(c, conditions)
		if (strcmp(json_string(c, "type"), type) == 0)
			return c;
	return NULL;
}

/*
 * The members in the order kube's JSON has them; reason and message are left out when
 * empty, as kube's omitempty leaves them out, so a condition made here prints as the
 * stored one does.
 */
cJSON *
deployment_condition_new(const char *type, const char *status, const char *reason,
    const char *message, const char *stamp)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddStringToObject(c, "status", status);
	if (stamp != NULL) {
		cJSON_AddStringToObject(c, "lastUpdateTime", stamp);
		cJSON_AddStringToObject(c, "lastTransitionTime", stamp);
	} else {
		cJSON_AddNullToObject(c, "lastUpdateTime");
		cJSON_AddNullToObject(c, "lastTransitionTime");
	}
	if (reason != NULL && reason[0] != '\0')
		cJSON_AddStringToObject(c, "reason", reason);
	if (message != NULL && message[0] != '\0')
		cJSON_AddStringToObject(c, "message", message);
	return c;
}

/* Removes every condition of type from the array conditions. */
static void
conditions_filter(cJSON *conditions, const char *type)
{
	cJSON *c = conditions->child, *next;

	for (; c != NULL; c = next) {
		next = c->next;
		if (strcmp(json_string(c, "type"), type) == 0)
			cJSON_Delete(cJSON_DetachItemViaPointer(conditions, c));
	}
}

void
deployment_condition_set(cJSON *status, cJSON *cond)
{
	const char *type = json_string(cond, "type");
	const cJSON *current;
	cJSON *conditions;

	if (status == NULL) {
		cJSON_Delete(cond);
		return;
	}
	current = deployment_condition_get(status, type);
	if (current != NULL && strcmp(json_string(current, "status"),
	    json_string(cond, "status")) == 0) {
		const cJSON *since;

		/* Nothing new to say: the stamps stay as they are. */
		if (strcmp(json_string(current, "reason"), json_string(cond, "reason")) == 0) {
			cJSON_Delete(cond);
			return;
		}
		/* A new reason for the same status: it has been so since it became so. */
		since = cJSON_GetObjectItemCaseSensitive(current, "lastTransitionTime");
		json_set(cond, "lastTransitionTime",
		    since != NULL ? cJSON_Duplicate(since, 1) : cJSON_CreateNull());
	}
	conditions = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	if (!cJSON_IsArray(conditions)) {
		conditions = cJSON_CreateArray();
		json_set(status, "conditions", conditions);
	}
	conditions_filter(conditions, type);
	cJSON_AddItemToArray(conditions, cond);
}

/* An empty list goes, as kube's leaves a nil slice that its JSON omits. */
void
deployment_condition_remove(cJSON *status, const char *type)
{
	cJSON *conditions = cJSON_GetObjectItemCaseSensitive(status, "conditions");

	if (!cJSON_IsArray(conditions))
		return;
	conditions_filter(conditions, type);
	if (conditions->child == NULL)
		cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
}
