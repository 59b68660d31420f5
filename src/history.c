/*
 * history.c - ControllerRevisions as kube's pkg/controller/history keeps them.
 *
 * A revision is a snapshot of a workload's template: its data is a patch that puts the
 * template back ({"spec":{"template":{..., "$patch":"replace"}}}), its name is the
 * workload's name, a dash and a hash, and its number orders the snapshots (the current one
 * has the highest). Two revisions are the same when their data are the same bytes; a name
 * already taken by other data is a collision, which the owner's collisionCount moves on.
 *
 * The data are compared and hashed in one canonical text, the one Go's encoding/json
 * writes for a decoded map: members in byte order of their names. Written that way by
 * this file and by kube alike, the same template gives the same bytes.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "controllerref.h"
#include "history.h"
#include "json.h"
#include "selector.h"
#include "util.h"

#define NAME_PREFIX_LIMIT 223	/* 253 less room for a dash and a hash */

uint32_t
history_fnv1(uint32_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h *= 16777619u;
		h ^= p[i];
	}
	return h;
}

uint32_t
history_fnv1a(uint32_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

char *
history_safe_encode(uint32_t h)
{
	/* No vowels, no digits that read as letters: a name never spells a word. */
	static const char safe[] = "bcdfghjklmnpqrstvwxz2456789";
	char digits[16];

	snprintf(digits, sizeof digits, "%u", (unsigned)h);
	for (char *p = digits; *p != '\0'; p++)
		*p = safe[(unsigned char)*p % (sizeof safe - 1)];
	return xstrdup(digits);
}

char *
history_hash_revision(const char *raw, size_t len, long long probe)
{
	uint32_t h = HISTORY_FNV_OFFSET;

	if (raw != NULL && len > 0)
		h = history_fnv1(h, raw, len);
	if (probe >= 0) {
		char text[24];
		int n = snprintf(text, sizeof text, "%lld", probe);
		h = history_fnv1(h, text, (size_t)n);
	}
	return history_safe_encode(h);
}

char *
history_template_hash(const cJSON *template, long long collision_count)
{
	char *text = history_canonical_json(template);
	uint32_t h = history_fnv1a(HISTORY_FNV_OFFSET, text, strlen(text));

	free(text);
	if (collision_count >= 0) {
		uint32_t c = (uint32_t)collision_count;
		unsigned char bytes[8] = {
			(unsigned char)c, (unsigned char)(c >> 8), (unsigned char)(c >> 16),
			(unsigned char)(c >> 24), 0, 0, 0, 0,
		};
		h = history_fnv1a(h, bytes, sizeof bytes);
	}
	return history_safe_encode(h);
}

char *
history_revision_name(const char *prefix, const char *hash)
{
	size_t n = strlen(prefix);

	if (n > NAME_PREFIX_LIMIT)
		n = NAME_PREFIX_LIMIT;
	return xasprintf("%.*s-%s", (int)n, prefix, hash);
}

/* --- canonical JSON ------------------------------------------------------------------- */

/* Appends s as a Go JSON string. */
static void
print_string(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;

	buf_append_str(out, "\"");
	for (; *p != '\0'; p++) {
		unsigned char c = *p;
		char esc[7];

		switch (c) {
		case '"': buf_append_str(out, "\\\""); continue;
		case '\\': buf_append_str(out, "\\\\"); continue;
		case '\n': buf_append_str(out, "\\n"); continue;
		case '\r': buf_append_str(out, "\\r"); continue;
		case '\t': buf_append_str(out, "\\t"); continue;
		case '\b': buf_append_str(out, "\\b"); continue;
		case '\f': buf_append_str(out, "\\f"); continue;
		default: break;
		}
		if (c < 0x20 || c == '<' || c == '>' || c == '&') {
			snprintf(esc, sizeof esc, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
			buf_append_str(out, esc);
			continue;
		}
		/* U+2028 and U+2029: E2 80 A8 and E2 80 A9. */
		if (c == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
			buf_append_str(out, p[2] == 0xa8 ? "\\u2028" : "\\u2029");
			p += 2;
			continue;
		}
		buf_append(out, p, 1);
	}
	buf_append_str(out, "\"");
}

static int
member_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string, y->string);
}

static void
print_value(struct buf *out, const cJSON *v)
{
	if (cJSON_IsObject(v)) {
		int n = cJSON_GetArraySize(v), i = 0;
		const cJSON **members = xmalloc(((size_t)n + 1) * sizeof *members);
		const cJSON *m;

		cJSON_ArrayForEach(m, v)
			members[i++] = m;
		qsort(members, (size_t)n, sizeof *members, member_cmp);
		buf_append_str(out, "{");
		for (i = 0; i < n; i++) {
			if (i > 0)
				buf_append_str(out, ",");
			print_string(out, members[i]->string);
			buf_append_str(out, ":");
			print_value(out, members[i]);
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
			print_value(out, e);
		}
		buf_append_str(out, "]");
	} else if (cJSON_IsString(v)) {
		print_string(out, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;

		if (!isfinite(d))
			buf_append_str(out, "null");
		else if (d == floor(d) && fabs(d) < 1e21)
			buf_printf(out, "%.0f", d);
		else
			buf_printf(out, "%.17g", d);
	} else if (cJSON_IsTrue(v)) {
		buf_append_str(out, "true");
	} else if (cJSON_IsFalse(v)) {
		buf_append_str(out, "false");
	} else if (cJSON_IsRaw(v) && v->valuestring != NULL) {
		buf_append_str(out, v->valuestring);
	} else {
		buf_append_str(out, "null");
	}
}

char *
history_canonical_json(const cJSON *v)
{
	struct buf out;

	buf_init(&out);
	print_value(&out, v);
	return buf_detach(&out);
}

int
history_data_equal(const cJSON *a, const cJSON *b)
{
	char *x, *y;
	int equal;

	if (a == NULL || b == NULL)
		return a == b;
	x = history_canonical_json(a);
	y = history_canonical_json(b);
	equal = strcmp(x, y) == 0;
	free(x);
	free(y);
	return equal;
}

/* --- order ---------------------------------------------------------------------------- */

static int
revision_cmp(const void *a, const void *b)
{
	const struct history_revision *x = a, *y = b;

	if (x->revision != y->revision)
		return x->revision < y->revision ? -1 : 1;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->name != NULL ? x->name : "", y->name != NULL ? y->name : "");
}

void
history_sort(struct history_revision *v, int n)
{
	if (n > 1)
		qsort(v, (size_t)n, sizeof *v, revision_cmp);
}

long long
history_next_revision(const struct history_revision *v, int n)
{
	long long max = 0;

	for (int i = 0; i < n; i++) {
		if (v[i].revision > max)
			max = v[i].revision;
	}
	return max + 1;
}

cJSON *
history_template_patch(const cJSON *owner)
{
	const cJSON *t = json_path(owner, "spec.template");
	cJSON *data = cJSON_CreateObject();
	cJSON *spec = cJSON_AddObjectToObject(data, "spec");
	cJSON *template = cJSON_IsObject(t) ? cJSON_Duplicate(t, 1) : cJSON_CreateObject();

	json_set(template, "$patch", cJSON_CreateString("replace"));
	cJSON_AddItemToObject(spec, "template", template);
	return data;
}

cJSON *
history_revision_new(const struct resource *owner_resource, const cJSON *owner,
    const char *name, const char *hash, const cJSON *data, long long number)
{
	cJSON *r = cJSON_CreateObject(), *meta, *labels, *refs;
	const cJSON *tlabels = json_path(owner, "spec.template.metadata.labels");
	const cJSON *annotations = json_path(owner, "metadata.annotations");
	char *text;

	cJSON_AddStringToObject(r, "apiVersion", "apps/v1");
	cJSON_AddStringToObject(r, "kind", "ControllerRevision");
	meta = cJSON_AddObjectToObject(r, "metadata");
	cJSON_AddStringToObject(meta, "name", name);
	cJSON_AddStringToObject(meta, "namespace",
	    json_string(json_path(owner, "metadata"), "namespace"));
	labels = cJSON_IsObject(tlabels) ? cJSON_Duplicate(tlabels, 1) : cJSON_CreateObject();
	json_set(labels, HISTORY_HASH_LABEL, cJSON_CreateString(hash));
	cJSON_AddItemToObject(meta, "labels", labels);
	if (cJSON_IsObject(annotations))
		cJSON_AddItemToObject(meta, "annotations", cJSON_Duplicate(annotations, 1));
	refs = cJSON_AddArrayToObject(meta, "ownerReferences");
	cJSON_AddItemToArray(refs, controllerref_new(owner_resource, owner));
	/* As kube's json.Marshal of a map writes it (keys sorted, Go's escapes): the
	 * apiserver keeps the bytes, kube compares them byte for byte, and a patch of the
	 * revision, which writes them anew that way, must leave them equal. */
	text = history_canonical_json(data);
	cJSON_AddItemToObject(r, "data", cJSON_CreateRaw(text));
	free(text);
	cJSON_AddNumberToObject(r, "revision", (double)number);
	return r;
}

cJSON *
history_revision_template(const cJSON *revision)
{
	const cJSON *t = json_path(revision, "data.spec.template");
	cJSON *copy;

	if (!cJSON_IsObject(t))
		return NULL;
	copy = cJSON_Duplicate(t, 1);
	cJSON_DeleteItemFromObjectCaseSensitive(copy, "$patch");
	return copy;
}

int
history_read_cached(sqlite3_stmt *stmt, const struct resource *owner_resource,
    const cJSON *owner, const struct selector *sel, const char *namespace,
    struct sync_result *out, struct history_cached **v, int *n)
{
	int rc;

	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		cJSON *body = controller_column_json(stmt, 2);
		const cJSON *meta = json_path(body, "metadata");
		struct history_cached *r;

		if (body == NULL)
			continue;
		if (sel != NULL) {
			const char *uid = json_string(meta, "uid");

			if (!selector_matches(sel, json_path(meta, "labels")) ||
			    json_is_set(meta, "deletionTimestamp")) {
				cJSON_Delete(body);
				continue;
			}
			controllerref_claim_action(action_append(&out->claims, &out->nclaims),
			    CONTROLLERREF_ADOPT, resource_find("controllerrevisions"), namespace,
			    json_string(meta, "name"), uid,
			    controllerref_adopt_patch(owner_resource, owner, uid),
			    xstrdup("an orphan revision the selector matches"));
			out->recheck_owner = 1;
		}
		*v = xrealloc(*v, (size_t)(*n + 1) * sizeof **v);
		r = &(*v)[(*n)++];
		r->name = controller_column_strdup(stmt, 0);
		r->created = controller_column_time(stmt, 1);
		r->body = body;
	}
	return rc;
}

void
history_cached_free(struct history_cached *v, int n)
{
	for (int i = 0; i < n; i++) {
		free(v[i].name);
		cJSON_Delete(v[i].body);
	}
	free(v);
}
