/*
 * fuzz_jsonspan.c - the JSON extent scanner, and the parse and copy built on it, under
 * arbitrary text.
 *
 * Input: byte 0 chooses the names used (where json_copy_without cuts, which members, which
 * member json_parse_object_except skips); the rest is the text, copied to a buffer of
 * exactly its size so that ASan stops any read past it. Invariants checked:
 * - Bounds: every extent a function reports lies inside the text, in order.
 * - When cJSON parses the whole text as one value (trailing white space aside), the
 *   scanner's value ends exactly where cJSON's did.
 * - json_parse_object_except: when the text is a JSON object it succeeds; whenever it
 *   succeeds, cJSON parses the whole text, with null put for the skipped value (which is
 *   not read), to an object which, less that member, equals the result; in a JSON object
 *   the skipped text parses to that member's value.
 * - json_copy_without: when the text is a JSON object it succeeds; it succeeds only on one
 *   bracketed object with nothing but white space after it; when it succeeds on a text
 *   cJSON parses, the copy parses to the text's tree less the cut members.
 * - json_parse_exact: it parses what cJSON parses, and what it prints reads back as cJSON's
 *   tree of the text.
 * A "JSON object" here is one cJSON parses with no control byte outside JSON's white space
 * and no byte order mark: cJSON reads those as white space, the scanner (like JSON) not.
 * Keys written with escapes are never cut or skipped (jsonspan.h), and cJSON ends a name
 * at a NUL byte, so equality is checked only when the objects concerned have neither.
 */
#include "config.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonspan.h"
#include "util.h"

/* Aborts unless [s.start, s.end) lies inside text. */
static void
check_inside(struct json_span s, struct json_span text)
{
	if (s.start < text.start || s.end > text.end || s.start > s.end)
		abort();
}

/* cJSON's tree of the whole text, NULL unless only white space follows the value. */
static cJSON *
parse_whole(struct json_span text)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text.start, (size_t)(text.end - text.start),
	    &end, 0);

	if (root != NULL && json_span_skip_space(end, text.end) != text.end) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

/* 1 when no byte of the text is one cJSON reads as white space and JSON does not. */
static int
no_cjson_only_space(struct json_span text)
{
	const unsigned char *p = (const unsigned char *)text.start;
	size_t n = (size_t)(text.end - text.start);

	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (p[i] < ' ' && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
			return 0;
	return 1;
}

/* 1 when no member of the object text s has a key written with an escape, or with a NUL
 * byte, where cJSON's name for it ends. */
static int
keys_plain(struct json_span s)
{
	struct json_member m;
	struct json_iter it;

	if (json_iter_init(&it, s, '{') != 0)
		return 1;
	while (json_iter_member(&it, &m) == 1) {
		size_t n = (size_t)(m.key.end - m.key.start);

		if (memchr(m.key.start, '\\', n) != NULL || memchr(m.key.start, '\0', n) != NULL)
			return 0;
	}
	return 1;
}

/* 1 when the trees are equal, members and elements in order. (cJSON_Compare looks each
 * member up by name, so a tree with two members of one name is not equal to itself.) */
static int
same_tree(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y;

	if (a == NULL || b == NULL)
		return a == b;
	if ((a->type & 0xff) != (b->type & 0xff))
		return 0;
	/* cJSON_Compare takes an infinity for unequal to itself; and it allows the last bit
	 * that cJSON's own print of a double may lose. */
	if (cJSON_IsNumber(a) && a->valuedouble == b->valuedouble)
		return 1;
	if (!cJSON_IsObject(a) && !cJSON_IsArray(a))
		return cJSON_Compare(a, b, 1);
	for (x = a->child, y = b->child; x != NULL && y != NULL; x = x->next, y = y->next)
		if ((cJSON_IsObject(a) && strcmp(x->string, y->string) != 0) || !same_tree(x, y))
			return 0;
	return x == NULL && y == NULL;
}

/* The scanner's value end against cJSON's, on the text as one value. */
static void
check_value_end(struct json_span text)
{
	const char *end = json_span_value_end(text.start, text.end), *cjson_end = NULL;
	cJSON *root;

	if (end != NULL && (end <= text.start || end > text.end))
		abort();
	if (text.start == text.end || (unsigned char)*text.start <= ' ' ||
	    (unsigned char)*text.start == 0xef)
		return;		/* cJSON skips these before the value; we start on it */
	root = cJSON_ParseWithLengthOpts(text.start, (size_t)(text.end - text.start),
	    &cjson_end, 0);
	if (root != NULL && json_span_skip_space(cjson_end, text.end) == text.end &&
	    end != cjson_end)
		abort();
	cJSON_Delete(root);
}

/* Walks the text as an object and as an array, checking every extent. */
static void
check_walks(struct json_span text)
{
	struct json_member m;
	struct json_span v;
	struct json_iter it;
	const char *last = text.start;

	if (json_iter_init(&it, text, '{') == 0)
		while (json_iter_member(&it, &m) == 1) {
			check_inside(m.key, text);
			check_inside(m.value, text);
			if (m.start < last || m.key.start != m.start + 1 ||
			    m.value.start <= m.key.end)
				abort();
			last = m.value.end;
		}
	last = text.start;
	if (json_iter_init(&it, text, '[') == 0)
		while (json_iter_element(&it, &v) == 1) {
			check_inside(v, text);
			if (v.start < last || v.start == v.end)
				abort();
			last = v.end;
		}
	if (json_find_member(text, "a", &m) == 1) {
		check_inside(m.value, text);
		if (!json_member_is(&m, "a"))
			abort();
	}
}

/* json_parse_object_except against cJSON's tree of the whole text. */
static void
check_parse_except(struct json_span text, const char *skip, int is_object)
{
	struct json_span skipped, patched;
	cJSON *got = json_parse_object_except(text, skip, &skipped), *whole, *item;
	struct buf b;

	if (got == NULL) {
		if (is_object || skipped.start != NULL || skipped.end != NULL)
			abort();
		return;
	}
	/* The skipped value is not read (its parse is the caller's): null in its place. */
	buf_init(&b);
	if (skipped.start != NULL) {
		check_inside(skipped, text);
		buf_append(&b, text.start, (size_t)(skipped.start - text.start));
		buf_append_str(&b, "null");
		buf_append(&b, skipped.end, (size_t)(text.end - skipped.end));
	} else {
		buf_append(&b, text.start, (size_t)(text.end - text.start));
	}
	patched.start = b.data;
	patched.end = b.data + b.len;
	whole = parse_whole(patched);
	/* cJSON counts depth from the whole text, the scanner from each member's value */
	if (!cJSON_IsObject(whole) && (size_t)(text.end - text.start) < 2 * CJSON_NESTING_LIMIT)
		abort();
	if (whole != NULL && keys_plain(text)) {
		item = cJSON_DetachItemFromObjectCaseSensitive(whole, skip);
		if ((item == NULL) != (skipped.start == NULL) ||
		    (item != NULL && !cJSON_IsNull(item)))
			abort();
		cJSON_Delete(item);
		if (!same_tree(got, whole))
			abort();
	}
	cJSON_Delete(whole);
	buf_free(&b);
	/* In a JSON object, the skipped text is the member's value. */
	if (is_object && skipped.start != NULL && keys_plain(text)) {
		cJSON *part = parse_whole(skipped);

		whole = parse_whole(text);
		if (part == NULL ||
		    !same_tree(part, cJSON_GetObjectItemCaseSensitive(whole, skip)))
			abort();
		cJSON_Delete(part);
		cJSON_Delete(whole);
	}
	cJSON_Delete(got);
}

/* cJSON's tree of the text less the cut members inside in (or at the top). */
static void
cut_tree(cJSON *root, const char *in, const char *const *cut)
{
	cJSON *obj = in == NULL ? root : cJSON_GetObjectItemCaseSensitive(root, in);

	if (!cJSON_IsObject(obj))
		return;
	for (; *cut != NULL; cut++)
		while (cJSON_GetObjectItemCaseSensitive(obj, *cut) != NULL)
			cJSON_DeleteItemFromObjectCaseSensitive(obj, *cut);
}

/* 1 when the text is one bracketed object, as far as the scanner sees, with only white
 * space after it. */
static int
one_object(struct json_span text)
{
	const char *p = json_span_skip_space(text.start, text.end);
	const char *end = json_span_value_end(p, text.end);

	return end != NULL && *p == '{' && json_span_skip_space(end, text.end) == text.end;
}

/* json_copy_without against cJSON's tree of the whole text. */
static void
check_copy_without(struct json_span text, const char *in, const char *const *cut,
    int is_object)
{
	struct json_member m;
	struct json_span inner = text;
	size_t len = 0;
	char *copy = json_copy_without(text, in, cut, &len);
	cJSON *whole, *got;

	if (copy == NULL) {
		if (is_object)
			abort();
		return;
	}
	if (copy[len] != '\0')
		abort();
	/* (the scanner counts depth from each member's value, as in check_parse_except) */
	if (!one_object(text) && (size_t)(text.end - text.start) < 2 * CJSON_NESTING_LIMIT)
		abort();
	whole = parse_whole(text);
	if (in != NULL && json_find_member(text, in, &m) == 1)
		inner = m.value;
	if (whole != NULL && keys_plain(text) && keys_plain(inner)) {
		struct json_span c = { copy, copy + len };

		cut_tree(whole, in, cut);
		got = parse_whole(c);
		if (got == NULL || !same_tree(got, whole))
			abort();
		cJSON_Delete(got);
	}
	cJSON_Delete(whole);
	free(copy);
}

/* The libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1 when a number of the tree is infinite (cJSON prints it as null). */
static int
has_infinity(const cJSON *v)
{
	if (cJSON_IsNumber(v) && (v->valuedouble > DBL_MAX || v->valuedouble < -DBL_MAX))
		return 1;
	for (v = v->child; v != NULL; v = v->next)
		if (has_infinity(v))
			return 1;
	return 0;
}

/* json_parse_exact: it parses what cJSON parses, and its tree printed and read again by
 * cJSON is the tree cJSON read (a large integer kept as text reads as the same double). */
static void
check_parse_exact(struct json_span text)
{
	size_t len = (size_t)(text.end - text.start);
	cJSON *plain = cJSON_ParseWithLength(text.start, len);
	cJSON *exact = json_parse_exact(text.start, len), *again;
	char *printed;

	if ((plain == NULL) != (exact == NULL))
		abort();
	/* An infinity prints as null, unless its text was kept: not compared. */
	if (exact != NULL && !has_infinity(plain) &&
	    (printed = cJSON_PrintUnformatted(exact)) != NULL) {
		again = cJSON_Parse(printed);
		if (again == NULL || !same_tree(again, plain))
			abort();
		cJSON_Delete(again);
		free(printed);
	}
	cJSON_Delete(plain);
	cJSON_Delete(exact);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const cut_names[] = { "managedFields", "a", "b" };
	static const char *const skip_names[] = { "managedFields", "a", "metadata", "b" };
	const char *cut[4];
	const char *in;
	struct json_span text;
	char *bytes;
	cJSON *whole;
	int is_object, n = 0;

	if (size < 1)
		return 0;
	in = data[0] & 1 ? "metadata" : NULL;
	for (int i = 0; i < 3; i++)
		if (data[0] & (2 << i))
			cut[n++] = cut_names[i];
	cut[n] = NULL;
	bytes = malloc(size - 1 == 0 ? 1 : size - 1);
	if (bytes == NULL)
		abort();
	memcpy(bytes, data + 1, size - 1);
	text.start = bytes;
	text.end = bytes + size - 1;

	whole = parse_whole(text);
	is_object = cJSON_IsObject(whole) && no_cjson_only_space(text);
	cJSON_Delete(whole);

	check_value_end(text);
	check_walks(text);
	check_parse_except(text, skip_names[(data[0] >> 4) & 3], is_object);
	check_copy_without(text, in, cut, is_object);
	check_parse_exact(text);
	free(bytes);
	return 0;
}
