/*
 * jsonspan.c - where a JSON value, an object's member or an array's element lies in a text.
 *
 * The informers and replay receive objects as text and keep them as text; what they need
 * parsed is small beside what they keep. This finds the extents that let them hand cJSON
 * only what it must read, and store the rest as it came in, instead of parsing every byte
 * and printing it all again. Brackets are matched with a bit stack as deep as cJSON's own
 * nesting limit, so a text whose brackets do not pair is refused here.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonspan.h"
#include "util.h"

/* Deeper values are refused, as cJSON refuses them. */
#define JSON_SPAN_MAX_DEPTH CJSON_NESTING_LIMIT

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

const char *
json_span_skip_space(const char *p, const char *end)
{
	while (p < end && is_space(*p))
		p++;
	return p;
}

/* Returns one past the closing quote of the string whose opening quote is at p. */
static const char *
string_end(const char *p, const char *end)
{
	const char *start = ++p;

	/* memchr finds the next quote fast; it ends the string unless an odd number of
	 * backslashes stands right before it. */
	while ((p = memchr(p, '"', (size_t)(end - p))) != NULL) {
		const char *b = p;

		while (b > start && b[-1] == '\\')
			b--;
		if ((p - b) % 2 == 0)
			return p + 1;
		p++;
	}
	return NULL;
}

/* Returns one past the bracket that closes the one at p. */
static const char *
container_end(const char *p, const char *end)
{
	/* Bit d of the stack: 1 when the bracket open at depth d is '{'. */
	uint64_t stack[(JSON_SPAN_MAX_DEPTH + 63) / 64] = { 0 };
	int depth = 0;

	while (p < end) {
		char c = *p;

		if (c == '"') {
			if ((p = string_end(p, end)) == NULL)
				return NULL;
			continue;
		}
		if (c == '{' || c == '[') {
			if (depth == JSON_SPAN_MAX_DEPTH)
				return NULL;
			if (c == '{')
				stack[depth / 64] |= UINT64_C(1) << (depth % 64);
			else
				stack[depth / 64] &= ~(UINT64_C(1) << (depth % 64));
			depth++;
		} else if (c == '}' || c == ']') {
			int brace;

			if (depth == 0)
				return NULL;
			depth--;
			brace = (stack[depth / 64] >> (depth % 64)) & 1;
			if (brace != (c == '}'))
				return NULL;
			if (depth == 0)
				return p + 1;
		}
		p++;
	}
	return NULL;
}

const char *
json_span_value_end(const char *p, const char *end)
{
	const char *q;

	if (p >= end)
		return NULL;
	switch (*p) {
	case '"':
		return string_end(p, end);
	case '{':
	case '[':
		return container_end(p, end);
	default:
		/* A number or a literal: up to the byte that ends it. Only a byte that can
		 * start one is taken: cJSON would skip a UTF-8 BOM before the value. */
		if (memchr("-0123456789tfn", *p, 14) == NULL)
			return NULL;
		for (q = p; q < end && !is_space(*q) && strchr(",:]}[{\"", *q) == NULL; q++)
			;
		return q == p ? NULL : q;
	}
}

int
json_iter_init(struct json_iter *it, struct json_span span, char open)
{
	const char *p = json_span_skip_space(span.start, span.end);

	if (p == span.end || *p != open)
		return -1;
	it->p = p + 1;
	it->end = span.end;
	it->close = open == '{' ? '}' : ']';
	it->count = 0;
	return 0;
}

/* Moves the walk to the start of the next member or element: 1 there, 0 past the closing
 * bracket, -1 on a text that cannot be the container's. */
static int
iter_advance(struct json_iter *it)
{
	const char *p = json_span_skip_space(it->p, it->end);

	if (p == it->end)
		return -1;
	if (*p == it->close) {
		it->p = p + 1;
		return 0;
	}
	if (it->count > 0) {
		if (*p != ',')
			return -1;
		p = json_span_skip_space(p + 1, it->end);
		if (p == it->end || *p == it->close)
			return -1;	/* a comma with nothing after it */
	}
	it->p = p;
	return 1;
}

int
json_iter_member(struct json_iter *it, struct json_member *m)
{
	const char *p, *q;
	int rc;

	if ((rc = iter_advance(it)) <= 0)
		return rc;
	p = it->p;
	if (*p != '"' || (q = string_end(p, it->end)) == NULL)
		return -1;
	m->start = p;
	m->key.start = p + 1;
	m->key.end = q - 1;
	p = json_span_skip_space(q, it->end);
	if (p == it->end || *p != ':')
		return -1;
	p = json_span_skip_space(p + 1, it->end);
	if ((q = json_span_value_end(p, it->end)) == NULL)
		return -1;
	m->value.start = p;
	m->value.end = q;
	it->p = q;
	it->count++;
	return 1;
}

int
json_iter_element(struct json_iter *it, struct json_span *value)
{
	const char *q;
	int rc;

	if ((rc = iter_advance(it)) <= 0)
		return rc;
	if ((q = json_span_value_end(it->p, it->end)) == NULL)
		return -1;
	value->start = it->p;
	value->end = q;
	it->p = q;
	it->count++;
	return 1;
}

int
json_member_is(const struct json_member *m, const char *key)
{
	size_t n = strlen(key);

	return (size_t)(m->key.end - m->key.start) == n && memcmp(m->key.start, key, n) == 0;
}

int
json_find_member(struct json_span span, const char *key, struct json_member *m)
{
	struct json_iter it;
	int rc;

	if (json_iter_init(&it, span, '{') != 0)
		return -1;
	while ((rc = json_iter_member(&it, m)) == 1)
		if (json_member_is(m, key))
			return 1;
	return rc;
}

/* 0 when only white space follows the walk's closing bracket. */
static int
iter_at_end(const struct json_iter *it)
{
	return json_span_skip_space(it->p, it->end) == it->end ? 0 : -1;
}

/* Parses a member's key, decoding its escapes when it has any. */
static char *
member_key(const struct json_member *m)
{
	cJSON *s;
	char *key;

	if (memchr(m->key.start, '\\', (size_t)(m->key.end - m->key.start)) == NULL)
		return xstrndup(m->key.start, (size_t)(m->key.end - m->key.start));
	s = cJSON_ParseWithLength(m->start, (size_t)(m->key.end + 1 - m->start));
	key = cJSON_IsString(s) ? xstrdup(s->valuestring) : NULL;
	cJSON_Delete(s);
	return key;
}

/* Parses a value found by the scanner, which cJSON must read to its end: alone it stops
 * after the longest prefix that is a value, and "truex" or "1e" would be taken. */
static cJSON *
parse_value(struct json_span v)
{
	const char *end = NULL;
	cJSON *value = cJSON_ParseWithLengthOpts(v.start, (size_t)(v.end - v.start), &end, 0);

	if (value != NULL && end != v.end) {
		cJSON_Delete(value);
		return NULL;
	}
	return value;
}

cJSON *
json_parse_object_except(struct json_span span, const char *skip, struct json_span *skipped)
{
	cJSON *root = cJSON_CreateObject();
	struct json_member m;
	struct json_iter it;
	int rc;

	skipped->start = skipped->end = NULL;
	if (root == NULL || json_iter_init(&it, span, '{') != 0)
		goto fail;
	while ((rc = json_iter_member(&it, &m)) == 1) {
		cJSON *value;
		char *key;

		if (skipped->start == NULL && json_member_is(&m, skip)) {
			*skipped = m.value;
			continue;
		}
		if ((value = parse_value(m.value)) == NULL)
			goto fail;
		if ((key = member_key(&m)) == NULL) {
			cJSON_Delete(value);
			goto fail;
		}
		cJSON_AddItemToObject(root, key, value);
		free(key);
	}
	if (rc == 0 && iter_at_end(&it) == 0)
		return root;
fail:
	cJSON_Delete(root);
	skipped->start = skipped->end = NULL;
	return NULL;
}

/* 1 when the member is one of cut[]. */
static int
member_in(const struct json_member *m, const char *const *cut)
{
	for (; *cut != NULL; cut++)
		if (json_member_is(m, *cut))
			return 1;
	return 0;
}

char *
json_copy_without(struct json_span span, const char *in, const char *const *cut,
    size_t *len)
{
	struct json_span obj = span;
	struct json_member m, found = { { NULL, NULL }, { NULL, NULL }, NULL };
	struct json_iter it;
	size_t size = (size_t)(span.end - span.start), n;
	char *out, *p;
	int rc, kept = 0, dropped = 0;

	if (in != NULL) {
		/* Walked to its end, not only to in: a caller's cJSON_ParseWithLength of the
		 * copy would not see what goes wrong after the object's closing brace. */
		if (json_iter_init(&it, span, '{') != 0)
			return NULL;
		while ((rc = json_iter_member(&it, &m)) == 1)
			if (found.start == NULL && json_member_is(&m, in))
				found = m;
		if (rc != 0 || iter_at_end(&it) != 0)
			return NULL;
		if (found.start == NULL || *found.value.start != '{') {
			/* Nothing to cut: the text as it is. */
			*len = size;
			return xstrndup(span.start, size);
		}
		obj = found.value;
	}
	if (json_iter_init(&it, obj, '{') != 0)
		return NULL;
	/* One allocation: the copy is never longer than the text (the members kept, with at
	 * most the commas that were between them). */
	p = out = xmalloc(size + 1);
	n = (size_t)(json_span_skip_space(obj.start, obj.end) - span.start);
	memcpy(p, span.start, n);
	p += n;
	*p++ = '{';
	while ((rc = json_iter_member(&it, &m)) == 1) {
		if (member_in(&m, cut)) {
			dropped++;
			continue;
		}
		if (kept++ > 0)
			*p++ = ',';
		memcpy(p, m.start, (size_t)(m.value.end - m.start));
		p += m.value.end - m.start;
	}
	if (rc != 0 || (in == NULL && iter_at_end(&it) != 0)) {
		free(out);
		return NULL;
	}
	if (dropped == 0) {
		/* Kept whole, white space and all. */
		memcpy(out, span.start, size);
		out[size] = '\0';
		*len = size;
		return out;
	}
	*p++ = '}';
	memcpy(p, it.p, (size_t)(span.end - it.p));
	p += span.end - it.p;
	*p = '\0';
	*len = (size_t)(p - out);
	return out;
}

/* --- numbers as they were written ------------------------------------------------------ */

/*
 * cJSON keeps a number as a double and prints an integer of 10^15 or more in exponent
 * form (10^15 becomes 1e+15), which the apiserver refuses for an integer field, and an
 * integer beyond 2^53 rounded. Below 10^15 an integer prints with all its digits, and a
 * fraction prints as the double it was read as, so only the large ones need their text.
 */
#define JSON_EXACT_LIMIT 1e15

static int
number_needs_text(const cJSON *v)
{
	return cJSON_IsNumber(v) && !(v->valuedouble > -JSON_EXACT_LIMIT &&
	    v->valuedouble < JSON_EXACT_LIMIT);
}

static int
has_large_number(const cJSON *v)
{
	const cJSON *c;

	if (number_needs_text(v))
		return 1;
	for (c = v->child; c != NULL; c = c->next)
		if (has_large_number(c))
			return 1;
	return 0;
}

/*
 * Walks the tree v and its text s side by side (cJSON keeps members and elements in the
 * text's order, repeated keys included) and turns each large number into a raw value
 * holding its text; its valuedouble stays. -1 when tree and text do not match.
 */
static int
keep_number_text(cJSON *v, struct json_span s)
{
	struct json_iter it;
	struct json_member m;
	struct json_span e;
	cJSON *c;

	if (number_needs_text(v)) {
		char *lexeme = xstrndup(s.start, (size_t)(s.end - s.start)), *rest;

		/* The text must be this number's, should the walk have gone astray. */
		if (strtod(lexeme, &rest) != v->valuedouble || *rest != '\0') {
			free(lexeme);
			return -1;
		}
		v->valuestring = lexeme;
		v->type = cJSON_Raw | (v->type & ~0xff);
		return 0;
	}
	if (cJSON_IsObject(v)) {
		if (json_iter_init(&it, s, '{') != 0)
			return -1;
		for (c = v->child; c != NULL; c = c->next) {
			if (json_iter_member(&it, &m) != 1 || keep_number_text(c, m.value) != 0)
				return -1;
		}
		return 0;
	}
	if (cJSON_IsArray(v)) {
		if (json_iter_init(&it, s, '[') != 0)
			return -1;
		for (c = v->child; c != NULL; c = c->next) {
			if (json_iter_element(&it, &e) != 1 || keep_number_text(c, e) != 0)
				return -1;
		}
	}
	return 0;
}

cJSON *
json_parse_exact(const char *text, size_t len)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	struct json_span s;

	if (root == NULL || !has_large_number(root))
		return root;
	s.start = json_span_skip_space(text, text + len);
	s.end = end;
	/* Should the scanner not follow a text cJSON read (a byte cJSON takes for white
	 * space), the numbers not reached stay doubles. */
	(void)keep_number_text(root, s);
	return root;
}
