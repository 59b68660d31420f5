/*
 * jsonspan.h - where a JSON value, an object's member or an array's element lies in a text.
 *
 * Not a parser: it finds extents, so that only the parts a caller needs are given to cJSON
 * and the rest is kept, or dropped, as the bytes that came in. Strings and their escapes
 * are respected and brackets counted; nothing else is checked. A text these functions
 * accept may still be invalid JSON, which the cJSON parse of the parts then reports; a
 * text they refuse is not valid JSON. Every function reads only the bytes it is given.
 */
#ifndef SQLKCM_JSONSPAN_H
#define SQLKCM_JSONSPAN_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Bytes [start, end) of a text. */
struct json_span {
	const char *start, *end;
};

/* One member of an object: its key as written between the quotes (escapes not decoded),
 * its value, and where the member starts (its key's opening quote). */
struct json_member {
	struct json_span key, value;
	const char *start;
};

/* Walks the members of an object or the elements of an array, in order. */
struct json_iter {
	const char *p, *end;
	char close;		/* '}' or ']' */
	int count;		/* members or elements read so far */
};

/* Returns where the value that starts at p ends (one past its last byte), NULL when
 * [p, end) does not start with a whole value. p must be on the value's first byte. */
const char *json_span_value_end(const char *p, const char *end);

/* Returns the first byte at or after p that is not JSON white space (end if none). */
const char *json_span_skip_space(const char *p, const char *end);

/* Starts a walk over the object (open '{') or array (open '[') whose text is span, which
 * may have white space around it. 0, or -1 when it does not start with that bracket. */
int json_iter_init(struct json_iter *it, struct json_span span, char open);

/* The next member of an object walk: 1 with *m set, 0 at the closing brace, -1 when the
 * text is not an object's (a key missing, a ':' or ',' missing, the value cut short). */
int json_iter_member(struct json_iter *it, struct json_member *m);

/* The next element of an array walk: 1 with *value set, 0 at the closing bracket, -1 as
 * json_iter_member. */
int json_iter_element(struct json_iter *it, struct json_span *value);

/* 1 when the member's key, as written, is key (a key written with escapes never is). */
int json_member_is(const struct json_member *m, const char *key);

/* Finds the member key of the object text span: 1 with *m set, 0 when it has none, -1
 * when span is not an object's text. */
int json_find_member(struct json_span span, const char *key, struct json_member *m);

/* Parses the object text span with cJSON, except the value of member skip, whose text is
 * put in *skipped instead ({NULL, NULL} when there is no such member). The result is what
 * cJSON_ParseWithLength would give, less that member. NULL when span is not an object's
 * text or a part of it is not valid JSON: the caller parses the whole to say why. */
cJSON *json_parse_object_except(struct json_span span, const char *skip,
    struct json_span *skipped);

/* Copies the object text span without the members named by cut[] (a NULL-ended list)
 * inside its member named in (or at its top when in is NULL): the copy is NUL-terminated,
 * its length in *len. NULL when span is not an object's text. Every byte outside the
 * object that loses members is copied as it was; that object's remaining members are
 * copied with one ',' between them. The copy is valid JSON when the text was. */
char *json_copy_without(struct json_span span, const char *in, const char *const *cut,
    size_t *len);

/* Parses text as cJSON_ParseWithLength does (the value may be followed by anything), but
 * keeps each integer of 10^15 or more (or -10^15 or less) as a raw value holding its
 * text, with its valuedouble set, so that printing the tree gives the number as it was
 * written: cJSON alone prints 10^15 as 1e+15 and rounds integers beyond 2^53. For the
 * bodies sqlkcm sends back (a template copied into a pod, an object updated whole).
 * Readers see such a value as cJSON_IsRaw, not cJSON_IsNumber; json_int reads both. */
cJSON *json_parse_exact(const char *text, size_t len);

#endif
