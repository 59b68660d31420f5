/*
 * selector.c - Kubernetes label selectors, parsed from the string or the API form, matched
 * against a JSON label map, and compiled to SQL over the object_labels table.
 *
 * A selector is a list of requirements (key, operator, values), all of which must hold; it is
 * kept sorted by key, stably, so that its string form is the one kube prints. The special
 * selector "nothing" (kube's labels.Nothing(), what a missing API selector means) matches no
 * object; the empty list matches every object.
 *
 * Invariants:
 * - Every requirement in a selector has been validated as kube's NewRequirement does: the key
 *   is a qualified name, each value a label value, the number of values fits the operator,
 *   and > / < have one integer value. There is no way to build an unvalidated one, so no
 *   invalid input can turn into "matches everything".
 * - selector_to_sql and selector_bind walk the requirements in the same order and agree on
 *   the number of parameters of each (requirement_parameter_count); user text reaches SQL
 *   only through sqlite3_bind_*.
 * - selector_matches and the SQL agree for every label map the store can hold (one string
 *   value per key); tests/unit/test_selector.c and fuzz/fuzz_selector.c cross-check them.
 *
 * The string grammar is kube's (k8s.io/apimachinery/pkg/labels): requirements separated by
 * ',', each "[!]key", "key (=|==|!=|>|<) value" or "key (in|notin) (v1,v2,...)"; spaces, tabs,
 * CR and LF separate tokens; "in" and "notin" are keywords only where an operator may stand.
 * Values of in/notin form a set (duplicates dropped, sorted); an empty value is allowed.
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "selector.h"

enum selector_op {
	SELECTOR_IN,
	SELECTOR_NOT_IN,
	SELECTOR_EQUALS,
	SELECTOR_DOUBLE_EQUALS,
	SELECTOR_NOT_EQUALS,
	SELECTOR_EXISTS,
	SELECTOR_DOES_NOT_EXIST,
	SELECTOR_GREATER_THAN,
	SELECTOR_LESS_THAN,
};

/* How each operator is written in the string form, for messages and selector_to_string. */
static const char *const selector_op_text[] = {
	[SELECTOR_IN] = " in ",
	[SELECTOR_NOT_IN] = " notin ",
	[SELECTOR_EQUALS] = "=",
	[SELECTOR_DOUBLE_EQUALS] = "==",
	[SELECTOR_NOT_EQUALS] = "!=",
	[SELECTOR_EXISTS] = "",
	[SELECTOR_DOES_NOT_EXIST] = "!",
	[SELECTOR_GREATER_THAN] = ">",
	[SELECTOR_LESS_THAN] = "<",
};

/* One requirement: key OP values. */
struct requirement {
	char *key;
	enum selector_op op;
	char **values;
	size_t nvalues;
	long long number;	/* > and <: values[0] as an integer */
	size_t order;		/* position of addition, to sort stably */
};

struct selector {
	int nothing;
	struct requirement *reqs;
	size_t nreqs;
	size_t cap;
};

/* The alias of the object_labels table inside the SQL that selector_to_sql writes. */
#define SELECTOR_LABEL "selector_label"

/* Longest part of a user string that goes into an error message. */
#define QUOTE_MAX 64

/* ---------------------------------------------------------------- messages */

/* Returns s as a double-quoted, escaped, possibly shortened string for a message (malloc'd). */
static char *
quote(const char *s)
{
	struct buf b;
	size_t i;

	buf_init(&b);
	buf_append_str(&b, "\"");
	for (i = 0; s[i] != '\0' && i < QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			buf_printf(&b, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			buf_printf(&b, "\\x%02x", c);
		else
			buf_append(&b, &s[i], 1);
	}
	buf_append_str(&b, "\"");
	if (s[i] != '\0')
		buf_printf(&b, "... (%zu bytes)", strlen(s));
	return buf_detach(&b);
}

/* ---------------------------------------------------------------- validation */

/* Returns 1 if c is an ASCII letter or digit. */
static int
is_alphanumeric(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Returns 1 if s[0..n) starts and ends alphanumeric with only [-_.a-zA-Z0-9] inside; n > 0. */
static int
is_label_token(const char *s, size_t n)
{
	size_t i;

	if (!is_alphanumeric((unsigned char)s[0]) || !is_alphanumeric((unsigned char)s[n - 1]))
		return 0;
	for (i = 1; i + 1 < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!is_alphanumeric(c) && c != '-' && c != '_' && c != '.')
			return 0;
	}
	return 1;
}

/* Returns 1 if s[0..n) is a lowercase RFC 1123 subdomain (without the length limit). */
static int
is_dns_subdomain(const char *s, size_t n)
{
	size_t i, label = 0;

	for (i = 0; i <= n; i++) {
		unsigned char c = i < n ? (unsigned char)s[i] : '.';
		if (c == '.') {
			/* A label: [a-z0-9]([-a-z0-9]*[a-z0-9])? */
			if (label == 0 || s[i - label] == '-' || s[i - 1] == '-')
				return 0;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') {
			label++;
		} else {
			return 0;
		}
	}
	return 1;
}

/* Returns NULL if key is a valid label key (a qualified name), else why it is not. */
static const char *
label_key_problem(const char *key)
{
	const char *slash = strchr(key, '/'), *name = key;
	size_t n;

	if (slash != NULL) {
		if (strchr(slash + 1, '/') != NULL)
			return "a qualified name must consist of alphanumeric characters, '-', '_' "
			    "or '.', and must start and end with an alphanumeric character, with an "
			    "optional DNS subdomain prefix and '/'";
		n = (size_t)(slash - key);
		if (n == 0)
			return "prefix part must be non-empty";
		if (n > 253)
			return "prefix part must be no more than 253 characters";
		if (!is_dns_subdomain(key, n))
			return "prefix part must be a lowercase RFC 1123 subdomain: lower case "
			    "alphanumeric characters, '-' or '.', starting and ending with an "
			    "alphanumeric character";
		name = slash + 1;
	}
	n = strlen(name);
	if (n == 0)
		return "name part must be non-empty";
	if (n > 63)
		return "name part must be no more than 63 characters";
	if (!is_label_token(name, n))
		return "name part must consist of alphanumeric characters, '-', '_' or '.', and "
		    "must start and end with an alphanumeric character";
	return NULL;
}

/* Returns NULL if value is a valid label value, else why it is not. */
static const char *
label_value_problem(const char *value)
{
	size_t n = strlen(value);

	if (n > 63)
		return "must be no more than 63 characters";
	if (n > 0 && !is_label_token(value, n))
		return "a label value must be empty or consist of alphanumeric characters, '-', "
		    "'_' or '.', and must start and end with an alphanumeric character";
	return NULL;
}

/* Parses s as Go's strconv.ParseInt(s, 10, 64) does: optional sign, then decimal digits,
 * in range. Returns 0 and sets *out, or -1. */
static int
parse_int64(const char *s, long long *out)
{
	unsigned long long acc = 0, limit = (unsigned long long)LLONG_MAX;
	int negative = 0;

	if (*s == '+' || *s == '-') {
		negative = *s == '-';
		s++;
	}
	if (negative)
		limit++;
	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		unsigned digit;
		if (*s < '0' || *s > '9')
			return -1;
		digit = (unsigned)(*s - '0');
		if (acc > (limit - digit) / 10)
			return -1;
		acc = acc * 10 + digit;
	}
	if (negative)
		*out = acc == limit ? LLONG_MIN : -(long long)acc;
	else
		*out = (long long)acc;
	return 0;
}

/* Checks a requirement as kube's NewRequirement does; where says where it came from. */
static int
requirement_validate(const char *where, const char *key, enum selector_op op,
    char *const *values, size_t nvalues, long long *number, char **error)
{
	const char *problem, *name;
	char *q, *qv;
	size_t i;

	if ((problem = label_key_problem(key)) != NULL) {
		q = quote(key);
		error_set(error, "%s: invalid label key %s: %s", where, q, problem);
		free(q);
		return -1;
	}
	name = op == SELECTOR_IN ? "in" : op == SELECTOR_NOT_IN ? "notin" : selector_op_text[op];
	switch (op) {
	case SELECTOR_IN:
	case SELECTOR_NOT_IN:
		if (nvalues == 0) {
			q = quote(key);
			error_set(error, "%s: key %s: operator '%s' needs at least one value", where,
			    q, name);
			free(q);
			return -1;
		}
		break;
	case SELECTOR_EQUALS:
	case SELECTOR_DOUBLE_EQUALS:
	case SELECTOR_NOT_EQUALS:
	case SELECTOR_GREATER_THAN:
	case SELECTOR_LESS_THAN:
		if (nvalues != 1) {
			q = quote(key);
			error_set(error, "%s: key %s: operator '%s' takes exactly one value, not %zu",
			    where, q, name, nvalues);
			free(q);
			return -1;
		}
		break;
	case SELECTOR_EXISTS:
	case SELECTOR_DOES_NOT_EXIST:
		if (nvalues != 0) {
			q = quote(key);
			error_set(error, "%s: key %s: operator '%s' takes no values, not %zu", where,
			    q, op == SELECTOR_EXISTS ? "exists" : "!", nvalues);
			free(q);
			return -1;
		}
		break;
	}
	for (i = 0; i < nvalues; i++) {
		if ((problem = label_value_problem(values[i])) != NULL) {
			q = quote(key);
			qv = quote(values[i]);
			error_set(error, "%s: invalid label value %s for key %s: %s", where, qv, q,
			    problem);
			free(qv);
			free(q);
			return -1;
		}
	}
	if (op == SELECTOR_GREATER_THAN || op == SELECTOR_LESS_THAN) {
		if (parse_int64(values[0], number) != 0) {
			q = quote(key);
			qv = quote(values[0]);
			error_set(error, "%s: key %s: operator '%s' needs an integer value, not %s",
			    where, q, name, qv);
			free(qv);
			free(q);
			return -1;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- the selector */

/* Returns a new selector with no requirement (matching everything). */
static struct selector *
selector_new(void)
{
	return xcalloc(1, sizeof(struct selector));
}

/* Frees the selector and its requirements. */
void
selector_free(struct selector *s)
{
	size_t i, j;

	if (s == NULL)
		return;
	for (i = 0; i < s->nreqs; i++) {
		free(s->reqs[i].key);
		for (j = 0; j < s->reqs[i].nvalues; j++)
			free(s->reqs[i].values[j]);
		free(s->reqs[i].values);
	}
	free(s->reqs);
	free(s);
}

/* Appends a validated requirement; takes ownership of key and values. */
static void
selector_add(struct selector *s, char *key, enum selector_op op, char **values,
    size_t nvalues, long long number)
{
	struct requirement *r;

	if (s->nreqs == s->cap) {
		s->cap = s->cap == 0 ? 4 : s->cap * 2;
		s->reqs = xrealloc(s->reqs, s->cap * sizeof *s->reqs);
	}
	r = &s->reqs[s->nreqs];
	r->key = key;
	r->op = op;
	r->values = values;
	r->nvalues = nvalues;
	r->number = number;
	r->order = s->nreqs;
	s->nreqs++;
}

/* Orders requirements by key, then by the order they were added in. */
static int
requirement_compare(const void *a, const void *b)
{
	const struct requirement *ra = a, *rb = b;
	int c = strcmp(ra->key, rb->key);

	if (c != 0)
		return c;
	return ra->order < rb->order ? -1 : ra->order > rb->order;
}

/* Sorts the requirements by key, stably, as kube's selectors are. */
static void
selector_sort(struct selector *s)
{
	if (s->nreqs > 1)
		qsort(s->reqs, s->nreqs, sizeof *s->reqs, requirement_compare);
}

/* Returns 1 if s matches everything. */
int
selector_matches_everything(const struct selector *s)
{
	return !s->nothing && s->nreqs == 0;
}

/* Returns 1 if s matches nothing. */
int
selector_matches_nothing(const struct selector *s)
{
	return s->nothing;
}

/* ---------------------------------------------------------------- string form: lexer */

enum token_type {
	TOKEN_END,
	TOKEN_CLOSE_PAREN,
	TOKEN_COMMA,
	TOKEN_NOT,
	TOKEN_DOUBLE_EQUALS,
	TOKEN_EQUALS,
	TOKEN_GREATER,
	TOKEN_IDENTIFIER,
	TOKEN_IN,
	TOKEN_LESS,
	TOKEN_NOT_EQUALS,
	TOKEN_NOT_IN,
	TOKEN_OPEN_PAREN,
};

struct token {
	enum token_type type;
	size_t start;		/* byte offset in the text */
	size_t len;
};

/* Returns 1 if c separates tokens. */
static int
lex_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Returns 1 if c starts an operator or punctuation token. */
static int
lex_is_special(char c)
{
	return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

/* Reads the token at *pos in text and advances *pos past it. */
static struct token
lex_next(const char *text, size_t *pos)
{
	struct token t;
	size_t i = *pos;

	while (lex_is_space(text[i]))
		i++;
	t.start = i;
	t.len = 0;
	if (text[i] == '\0') {
		t.type = TOKEN_END;
	} else if (lex_is_special(text[i])) {
		/* The longest operator wins: "==" and "!=" over "=" and "!". */
		t.len = 1;
		switch (text[i]) {
		case '=':
			t.type = TOKEN_EQUALS;
			if (text[i + 1] == '=') {
				t.type = TOKEN_DOUBLE_EQUALS;
				t.len = 2;
			}
			break;
		case '!':
			t.type = TOKEN_NOT;
			if (text[i + 1] == '=') {
				t.type = TOKEN_NOT_EQUALS;
				t.len = 2;
			}
			break;
		case '(': t.type = TOKEN_OPEN_PAREN; break;
		case ')': t.type = TOKEN_CLOSE_PAREN; break;
		case ',': t.type = TOKEN_COMMA; break;
		case '>': t.type = TOKEN_GREATER; break;
		default: t.type = TOKEN_LESS; break;
		}
	} else {
		while (text[i + t.len] != '\0' && !lex_is_special(text[i + t.len]) &&
		    !lex_is_space(text[i + t.len]))
			t.len++;
		t.type = TOKEN_IDENTIFIER;
		if (t.len == 2 && memcmp(text + i, "in", 2) == 0)
			t.type = TOKEN_IN;
		else if (t.len == 5 && memcmp(text + i, "notin", 5) == 0)
			t.type = TOKEN_NOT_IN;
	}
	*pos = i + t.len;
	return t;
}

/* ---------------------------------------------------------------- string form: parser */

/* Where in the grammar a token is read: "in" and "notin" are operators only where an
 * operator may stand, and identifiers (keys, values) everywhere else. */
enum parse_context {
	CONTEXT_OPERATOR,
	CONTEXT_VALUES,
};

struct parser {
	const char *text;
	struct token *tokens;	/* ends with TOKEN_END */
	size_t ntokens;
	size_t next;
	char **values;		/* values of the requirement being read */
	size_t nvalues;
	size_t values_cap;
};

/* Returns the type of the next token, as seen in context. */
static enum token_type
parser_peek(const struct parser *p, enum parse_context context)
{
	enum token_type type = p->tokens[p->next].type;

	if (context == CONTEXT_VALUES && (type == TOKEN_IN || type == TOKEN_NOT_IN))
		type = TOKEN_IDENTIFIER;
	return type;
}

/* Returns the next token, as seen in context, and moves past it (never past the end). */
static struct token
parser_take(struct parser *p, enum parse_context context)
{
	struct token t = p->tokens[p->next];

	if (p->next + 1 < p->ntokens)
		p->next++;
	if (context == CONTEXT_VALUES && (t.type == TOKEN_IN || t.type == TOKEN_NOT_IN))
		t.type = TOKEN_IDENTIFIER;
	return t;
}

/* Returns the text of a token (malloc'd). */
static char *
parser_text(const struct parser *p, struct token t)
{
	return xstrndup(p->text + t.start, t.len);
}

/* Sets *error to "position N: found TOKEN, expected: WHAT"; returns -1. */
static int
parser_unexpected(const struct parser *p, struct token t, const char *expected, char **error)
{
	char *text, *q;

	if (t.type == TOKEN_END) {
		error_set(error, "label selector: position %zu: found end of string, expected: %s",
		    t.start + 1, expected);
		return -1;
	}
	text = parser_text(p, t);
	q = quote(text);
	error_set(error, "label selector: position %zu: found %s, expected: %s", t.start + 1, q,
	    expected);
	free(q);
	free(text);
	return -1;
}

/* Adds a value to the requirement being read (malloc'd, owned by the parser). */
static void
parser_add_value(struct parser *p, char *value)
{
	if (p->nvalues == p->values_cap) {
		p->values_cap = p->values_cap == 0 ? 4 : p->values_cap * 2;
		p->values = xrealloc(p->values, p->values_cap * sizeof *p->values);
	}
	p->values[p->nvalues++] = value;
}

/* Frees the values of the requirement being read. */
static void
parser_clear_values(struct parser *p)
{
	size_t i;

	for (i = 0; i < p->nvalues; i++)
		free(p->values[i]);
	p->nvalues = 0;
}

/* Orders strings bytewise, as Go compares strings. */
static int
string_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the values read and drops duplicates: in/notin values are a set. */
static void
parser_sort_values(struct parser *p)
{
	size_t i, n = 0;

	if (p->nvalues == 0)
		return;
	qsort(p->values, p->nvalues, sizeof *p->values, string_compare);
	for (i = 1; i < p->nvalues; i++) {
		if (strcmp(p->values[i], p->values[n]) == 0)
			free(p->values[i]);
		else
			p->values[++n] = p->values[i];
	}
	p->nvalues = n + 1;
}

/* Reads "v1,v2,...": a comma-separated list of possibly empty values, up to ")". */
static int
parser_read_value_list(struct parser *p, char **error)
{
	struct token t;

	for (;;) {
		t = parser_take(p, CONTEXT_VALUES);
		if (t.type == TOKEN_IDENTIFIER) {
			parser_add_value(p, parser_text(p, t));
			switch (parser_peek(p, CONTEXT_VALUES)) {
			case TOKEN_COMMA:
				continue;
			case TOKEN_CLOSE_PAREN:
				return 0;
			default:
				return parser_unexpected(p, p->tokens[p->next], "',' or ')'", error);
			}
		} else if (t.type == TOKEN_COMMA) {
			/* "(,", ",,", ",)": an empty value where a comma has no neighbour. */
			if (p->nvalues == 0)
				parser_add_value(p, xstrdup(""));
			switch (parser_peek(p, CONTEXT_VALUES)) {
			case TOKEN_CLOSE_PAREN:
				parser_add_value(p, xstrdup(""));
				return 0;
			case TOKEN_COMMA:
				parser_take(p, CONTEXT_VALUES);
				parser_add_value(p, xstrdup(""));
				break;
			default:
				break;
			}
		} else {
			return parser_unexpected(p, t, "',' or identifier", error);
		}
	}
}

/* Reads "(v1,v2,...)" after in/notin; "()" is the set holding only "". */
static int
parser_read_value_set(struct parser *p, char **error)
{
	struct token t = parser_take(p, CONTEXT_VALUES);

	if (t.type != TOKEN_OPEN_PAREN)
		return parser_unexpected(p, t, "'('", error);
	switch (parser_peek(p, CONTEXT_VALUES)) {
	case TOKEN_IDENTIFIER:
	case TOKEN_COMMA:
		if (parser_read_value_list(p, error) != 0)
			return -1;
		t = parser_take(p, CONTEXT_VALUES);
		if (t.type != TOKEN_CLOSE_PAREN)
			return parser_unexpected(p, t, "')'", error);
		break;
	case TOKEN_CLOSE_PAREN:
		parser_take(p, CONTEXT_VALUES);
		parser_add_value(p, xstrdup(""));
		break;
	default:
		return parser_unexpected(p, p->tokens[p->next], "',', ')' or identifier", error);
	}
	parser_sort_values(p);
	return 0;
}

/* Reads the one value after =, ==, !=, > or <; none at all is the empty value. */
static int
parser_read_exact_value(struct parser *p, char **error)
{
	struct token t;
	enum token_type next = parser_peek(p, CONTEXT_VALUES);

	if (next == TOKEN_END || next == TOKEN_COMMA) {
		parser_add_value(p, xstrdup(""));
		return 0;
	}
	t = parser_take(p, CONTEXT_VALUES);
	if (t.type != TOKEN_IDENTIFIER)
		return parser_unexpected(p, t, "identifier", error);
	parser_add_value(p, parser_text(p, t));
	return 0;
}

/* Reads one requirement and adds it to s. */
static int
parser_read_requirement(struct parser *p, struct selector *s, char **error)
{
	struct token t, first = p->tokens[p->next];
	enum selector_op op = SELECTOR_EXISTS;
	int has_op = 0;
	enum token_type next;
	char *key = NULL, where[64];
	long long number = 0;

	t = parser_take(p, CONTEXT_VALUES);
	if (t.type == TOKEN_NOT) {
		op = SELECTOR_DOES_NOT_EXIST;
		has_op = 1;
		t = parser_take(p, CONTEXT_VALUES);
	}
	if (t.type != TOKEN_IDENTIFIER)
		return parser_unexpected(p, t, "identifier", error);
	snprintf(where, sizeof where, "label selector: position %zu", first.start + 1);
	key = parser_text(p, t);
	/* The key is checked before the operator, as kube does. */
	if (requirement_validate(where, key, SELECTOR_EXISTS, NULL, 0, &number, error) != 0) {
		free(key);
		return -1;
	}
	next = parser_peek(p, CONTEXT_VALUES);
	if (!has_op && (next == TOKEN_END || next == TOKEN_COMMA)) {
		op = SELECTOR_EXISTS;
		has_op = 1;
	}
	if (!has_op) {
		t = parser_take(p, CONTEXT_OPERATOR);
		switch (t.type) {
		case TOKEN_IN: op = SELECTOR_IN; break;
		case TOKEN_NOT_IN: op = SELECTOR_NOT_IN; break;
		case TOKEN_EQUALS: op = SELECTOR_EQUALS; break;
		case TOKEN_DOUBLE_EQUALS: op = SELECTOR_DOUBLE_EQUALS; break;
		case TOKEN_NOT_EQUALS: op = SELECTOR_NOT_EQUALS; break;
		case TOKEN_GREATER: op = SELECTOR_GREATER_THAN; break;
		case TOKEN_LESS: op = SELECTOR_LESS_THAN; break;
		default:
			parser_unexpected(p, t, "an operator (in, notin, =, ==, !=, >, <)", error);
			free(key);
			return -1;
		}
		if (op == SELECTOR_IN || op == SELECTOR_NOT_IN) {
			if (parser_read_value_set(p, error) != 0)
				goto fail;
		} else if (parser_read_exact_value(p, error) != 0) {
			goto fail;
		}
	}
	if (requirement_validate(where, key, op, p->values, p->nvalues, &number, error) != 0)
		goto fail;
	selector_add(s, key, op, p->nvalues == 0 ? NULL : xmalloc(p->nvalues * sizeof(char *)),
	    p->nvalues, number);
	if (p->nvalues != 0)
		memcpy(s->reqs[s->nreqs - 1].values, p->values, p->nvalues * sizeof(char *));
	p->nvalues = 0;
	return 0;

fail:
	free(key);
	parser_clear_values(p);
	return -1;
}

/* Reads the whole selector: requirements separated by commas. */
static int
parser_read_selector(struct parser *p, struct selector *s, char **error)
{
	struct token t;
	enum token_type next;

	for (;;) {
		next = parser_peek(p, CONTEXT_VALUES);
		if (next == TOKEN_END)
			return 0;
		if (next != TOKEN_IDENTIFIER && next != TOKEN_NOT)
			return parser_unexpected(p, p->tokens[p->next],
			    "'!', identifier or end of string", error);
		if (parser_read_requirement(p, s, error) != 0)
			return -1;
		t = parser_take(p, CONTEXT_VALUES);
		if (t.type == TOKEN_END)
			return 0;
		if (t.type != TOKEN_COMMA)
			return parser_unexpected(p, t, "',' or end of string", error);
		next = parser_peek(p, CONTEXT_VALUES);
		if (next != TOKEN_IDENTIFIER && next != TOKEN_NOT)
			return parser_unexpected(p, p->tokens[p->next],
			    "'!' or identifier after ','", error);
	}
}

/* Parses the string form of a label selector. */
struct selector *
selector_parse(const char *text, char **error)
{
	struct parser p;
	struct selector *s;
	size_t pos = 0, cap = 8;
	int rc;

	memset(&p, 0, sizeof p);
	p.text = text;
	p.tokens = xmalloc(cap * sizeof *p.tokens);
	for (;;) {
		if (p.ntokens == cap) {
			cap *= 2;
			p.tokens = xrealloc(p.tokens, cap * sizeof *p.tokens);
		}
		p.tokens[p.ntokens] = lex_next(text, &pos);
		if (p.tokens[p.ntokens++].type == TOKEN_END)
			break;
	}
	s = selector_new();
	rc = parser_read_selector(&p, s, error);
	parser_clear_values(&p);
	free(p.values);
	free(p.tokens);
	if (rc != 0) {
		selector_free(s);
		return NULL;
	}
	selector_sort(s);
	return s;
}

/* ---------------------------------------------------------------- API form */

/* Returns the last member of object called name (Go's decoder keeps the last), or NULL;
 * *count is set to how many members have that name. */
static const cJSON *
json_member_counted(const cJSON *object, const char *name, int *count)
{
	const cJSON *item, *found = NULL;

	*count = 0;
	cJSON_ArrayForEach(item, object) {
		if (item->string != NULL && strcmp(item->string, name) == 0) {
			found = item;
			(*count)++;
		}
	}
	return found;
}

/* Returns the last member of object called name, or NULL. */
static const cJSON *
json_member(const cJSON *object, const char *name)
{
	int count;

	return json_member_counted(object, name, &count);
}

/* Returns 1 if a later member of the same object has item's name. */
static int
json_member_repeated_later(const cJSON *item)
{
	const cJSON *later;

	for (later = item->next; later != NULL; later = later->next) {
		if (later->string != NULL && strcmp(later->string, item->string) == 0)
			return 1;
	}
	return 0;
}

/* Sets *out to the string item holds ("" for null, as Go decodes it); -1 if not a string. */
static int
string_value(const cJSON *item, const char **out)
{
	*out = "";
	if (item == NULL || cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsString(item) || item->valuestring == NULL)
		return -1;
	*out = item->valuestring;
	return 0;
}

/* Adds matchLabels: each member is key=value. */
static int
selector_add_match_labels(struct selector *s, const cJSON *labels, char **error)
{
	const cJSON *item;
	const char *value;
	char **values;
	long long number = 0;

	cJSON_ArrayForEach(item, labels) {
		if (json_member_repeated_later(item))
			continue;
		if (string_value(item, &value) != 0) {
			char *q = quote(item->string);
			error_set(error, "label selector: matchLabels[%s]: expected a string, not %s",
			    q, json_kind_name(item));
			free(q);
			return -1;
		}
		if (requirement_validate("label selector: matchLabels", item->string,
		    SELECTOR_EQUALS, (char *const *)&value, 1, &number, error) != 0)
			return -1;
		values = xmalloc(sizeof *values);
		values[0] = xstrdup(value);
		selector_add(s, xstrdup(item->string), SELECTOR_EQUALS, values, 1, 0);
	}
	return 0;
}

/* Sets *out to the string member name of expression, "" if absent or null; -1 if it is
 * not a string. */
static int
json_string_member(const cJSON *expression, const char *name, const char **out)
{
	return string_value(json_member(expression, name), out);
}

/* Adds one matchExpressions element ({key, operator, values}); index is its position. */
static int
selector_add_match_expression(struct selector *s, const cJSON *expression, int index,
    char **error)
{
	static const struct {
		const char *name;
		enum selector_op op;
	} operators[] = {
		{ "In", SELECTOR_IN },
		{ "NotIn", SELECTOR_NOT_IN },
		{ "Exists", SELECTOR_EXISTS },
		{ "DoesNotExist", SELECTOR_DOES_NOT_EXIST },
	};
	const cJSON *values, *item;
	const char *key, *operator;
	char where[96], **copy;
	long long number = 0;
	size_t i, n = 0;
	int found = -1;

	if (!cJSON_IsObject(expression))
		return error_set(error, "label selector: matchExpressions[%d]: expected an object, "
		    "not %s", index, json_kind_name(expression));
	if (json_string_member(expression, "key", &key) != 0)
		return error_set(error, "label selector: matchExpressions[%d].key: expected a "
		    "string", index);
	if (json_string_member(expression, "operator", &operator) != 0)
		return error_set(error, "label selector: matchExpressions[%d].operator: expected "
		    "a string", index);
	for (i = 0; i < sizeof operators / sizeof operators[0]; i++) {
		if (strcmp(operator, operators[i].name) == 0)
			found = (int)i;
	}
	if (found < 0) {
		char *q = quote(operator);
		error_set(error, "label selector: matchExpressions[%d].operator: %s is not a valid "
		    "label selector operator (In, NotIn, Exists, DoesNotExist)", index, q);
		free(q);
		return -1;
	}
	values = json_member(expression, "values");
	if (values != NULL && !cJSON_IsNull(values)) {
		if (!cJSON_IsArray(values))
			return error_set(error, "label selector: matchExpressions[%d].values: "
			    "expected an array, not %s", index, json_kind_name(values));
		n = (size_t)cJSON_GetArraySize(values);
	}
	copy = n == 0 ? NULL : xcalloc(n, sizeof(char *));
	i = 0;
	if (n != 0) {
		cJSON_ArrayForEach(item, values) {
			const char *value;
			if (string_value(item, &value) != 0) {
				error_set(error, "label selector: matchExpressions[%d].values[%zu]: "
				    "expected a string, not %s", index, i, json_kind_name(item));
				goto fail;
			}
			copy[i++] = xstrdup(value);
		}
	}
	snprintf(where, sizeof where, "label selector: matchExpressions[%d]", index);
	if (requirement_validate(where, key, operators[found].op, copy, n, &number, error) != 0)
		goto fail;
	selector_add(s, xstrdup(key), operators[found].op, copy, n, number);
	return 0;

fail:
	while (i > 0)
		free(copy[--i]);
	free(copy);
	return -1;
}

/* Converts a metav1.LabelSelector in JSON to a selector. */
struct selector *
selector_from_json(const cJSON *json, char **error)
{
	const cJSON *labels, *expressions, *item;
	struct selector *s;
	int index = 0, count, count2;

	s = selector_new();
	if (json == NULL || cJSON_IsNull(json)) {
		s->nothing = 1;
		return s;
	}
	if (!cJSON_IsObject(json)) {
		error_set(error, "label selector: expected an object, not %s", json_kind_name(json));
		goto fail;
	}
	/* Go would merge repeated members; such JSON never comes from the API server. */
	labels = json_member_counted(json, "matchLabels", &count);
	expressions = json_member_counted(json, "matchExpressions", &count2);
	if (count > 1 || count2 > 1) {
		error_set(error, "label selector: %s appears more than once",
		    count > 1 ? "matchLabels" : "matchExpressions");
		goto fail;
	}
	if (labels != NULL && !cJSON_IsNull(labels)) {
		if (!cJSON_IsObject(labels)) {
			error_set(error, "label selector: matchLabels: expected an object, not %s",
			    json_kind_name(labels));
			goto fail;
		}
		if (selector_add_match_labels(s, labels, error) != 0)
			goto fail;
	}
	if (expressions != NULL && !cJSON_IsNull(expressions)) {
		if (!cJSON_IsArray(expressions)) {
			error_set(error, "label selector: matchExpressions: expected an array, "
			    "not %s", json_kind_name(expressions));
			goto fail;
		}
		cJSON_ArrayForEach(item, expressions) {
			if (selector_add_match_expression(s, item, index++, error) != 0)
				goto fail;
		}
	}
	selector_sort(s);
	return s;

fail:
	selector_free(s);
	return NULL;
}

/* ---------------------------------------------------------------- matching */

/* Returns the string value of key in labels, or NULL if it has none. */
static const char *
labels_get(const cJSON *labels, const char *key)
{
	const cJSON *item;

	if (!cJSON_IsObject(labels))
		return NULL;
	item = cJSON_GetObjectItemCaseSensitive(labels, key);
	if (!cJSON_IsString(item))
		return NULL;
	return item->valuestring;
}

/* Returns 1 if value is one of r's values. */
static int
requirement_has_value(const struct requirement *r, const char *value)
{
	size_t i;

	for (i = 0; i < r->nvalues; i++) {
		if (strcmp(r->values[i], value) == 0)
			return 1;
	}
	return 0;
}

/* Returns 1 if r holds for labels. */
static int
requirement_matches(const struct requirement *r, const cJSON *labels)
{
	const char *value = labels_get(labels, r->key);
	long long number;

	switch (r->op) {
	case SELECTOR_IN:
	case SELECTOR_EQUALS:
	case SELECTOR_DOUBLE_EQUALS:
		return value != NULL && requirement_has_value(r, value);
	case SELECTOR_NOT_IN:
	case SELECTOR_NOT_EQUALS:
		return value == NULL || !requirement_has_value(r, value);
	case SELECTOR_EXISTS:
		return value != NULL;
	case SELECTOR_DOES_NOT_EXIST:
		return value == NULL;
	case SELECTOR_GREATER_THAN:
	case SELECTOR_LESS_THAN:
		if (value == NULL || parse_int64(value, &number) != 0)
			return 0;
		return r->op == SELECTOR_GREATER_THAN ? number > r->number : number < r->number;
	}
	return 0;
}

/* Returns 1 if every requirement of s holds for labels. */
int
selector_matches(const struct selector *s, const cJSON *labels)
{
	size_t i;

	if (s->nothing)
		return 0;
	for (i = 0; i < s->nreqs; i++) {
		if (!requirement_matches(&s->reqs[i], labels))
			return 0;
	}
	return 1;
}

/* ---------------------------------------------------------------- SQL */

/*
 * The value of a label, read as Go's strconv.ParseInt reads it, in SQL: a digit or a sign
 * then a digit, then only digits, and within 64 bits (the magnitude without leading zeros,
 * compared as text). Only then is CAST, which would accept "12abc" or saturate, trusted.
 */
#define SQL_VALUE SELECTOR_LABEL ".value"
#define SQL_MAGNITUDE "ltrim(ltrim(" SQL_VALUE ", '+-'), '0')"
#define SQL_IS_INT64 \
	"(" SQL_VALUE " GLOB '[0-9]*' OR " SQL_VALUE " GLOB '[+-][0-9]*') AND substr(" \
	SQL_VALUE ", 2) NOT GLOB '*[^0-9]*' AND (length(" SQL_MAGNITUDE ") < 19 OR (length(" \
	SQL_MAGNITUDE ") = 19 AND " SQL_MAGNITUDE " <= '9223372036854775807') OR (" SQL_VALUE \
	" GLOB '-*' AND " SQL_MAGNITUDE " = '9223372036854775808'))"

/* Returns how many parameters r's SQL has: the key, then its values. */
static int
requirement_parameter_count(const struct requirement *r)
{
	switch (r->op) {
	case SELECTOR_EXISTS:
	case SELECTOR_DOES_NOT_EXIST:
		return 1;
	case SELECTOR_GREATER_THAN:
	case SELECTOR_LESS_THAN:
		return 2;
	default:
		return 1 + (int)r->nvalues;
	}
}

/* Appends r as an EXISTS or NOT EXISTS subquery on the labels of id_expr. */
static void
requirement_to_sql(const struct requirement *r, const char *id_expr, struct buf *sql)
{
	size_t i;
	int negated = r->op == SELECTOR_NOT_IN || r->op == SELECTOR_NOT_EQUALS ||
	    r->op == SELECTOR_DOES_NOT_EXIST;

	buf_printf(sql, "%sEXISTS (SELECT 1 FROM object_labels AS " SELECTOR_LABEL " WHERE "
	    SELECTOR_LABEL ".object_id = %s AND " SELECTOR_LABEL ".key = ?",
	    negated ? "NOT " : "", id_expr);
	switch (r->op) {
	case SELECTOR_EXISTS:
	case SELECTOR_DOES_NOT_EXIST:
		break;
	case SELECTOR_GREATER_THAN:
	case SELECTOR_LESS_THAN:
		buf_printf(sql, " AND " SQL_IS_INT64 " AND CAST(" SELECTOR_LABEL ".value AS "
		    "INTEGER) %s ?", r->op == SELECTOR_GREATER_THAN ? ">" : "<");
		break;
	default:
		if (r->nvalues == 1) {
			buf_append_str(sql, " AND " SELECTOR_LABEL ".value = ?");
			break;
		}
		buf_append_str(sql, " AND " SELECTOR_LABEL ".value IN (?");
		for (i = 1; i < r->nvalues; i++)
			buf_append_str(sql, ", ?");
		buf_append_str(sql, ")");
		break;
	}
	buf_append_str(sql, ")");
}

/* Appends the conjunction of requirements [lo, hi) as a balanced tree of ANDs, so that
 * many requirements stay within SQLite's expression depth limit. */
static void
selector_range_to_sql(const struct selector *s, size_t lo, size_t hi, const char *id_expr,
    struct buf *sql)
{
	size_t mid;

	if (hi - lo == 1) {
		requirement_to_sql(&s->reqs[lo], id_expr, sql);
		return;
	}
	mid = lo + (hi - lo) / 2;
	buf_append_str(sql, "(");
	selector_range_to_sql(s, lo, mid, id_expr, sql);
	buf_append_str(sql, " AND ");
	selector_range_to_sql(s, mid, hi, id_expr, sql);
	buf_append_str(sql, ")");
}

/* Appends the selector as a boolean SQL expression on id_expr. */
void
selector_to_sql(const struct selector *s, const char *id_expr, struct buf *sql)
{
	if (s->nothing)
		buf_append_str(sql, "0");
	else if (s->nreqs == 0)
		buf_append_str(sql, "1");
	else
		selector_range_to_sql(s, 0, s->nreqs, id_expr, sql);
}

/* Returns the number of parameters of the selector's SQL. */
int
selector_parameter_count(const struct selector *s)
{
	size_t i;
	int n = 0;

	if (s->nothing)
		return 0;
	for (i = 0; i < s->nreqs; i++)
		n += requirement_parameter_count(&s->reqs[i]);
	return n;
}

/* Binds the selector's parameters from index first on. */
int
selector_bind(const struct selector *s, sqlite3_stmt *stmt, int first, char **error)
{
	const struct requirement *r;
	size_t i, j;
	int index = first, rc;

	if (s->nothing)
		return 0;
	for (i = 0; i < s->nreqs; i++) {
		r = &s->reqs[i];
		rc = sqlite3_bind_text(stmt, index++, r->key, -1, SQLITE_TRANSIENT);
		if (rc != SQLITE_OK)
			goto fail;
		if (r->op == SELECTOR_EXISTS || r->op == SELECTOR_DOES_NOT_EXIST)
			continue;
		if (r->op == SELECTOR_GREATER_THAN || r->op == SELECTOR_LESS_THAN) {
			rc = sqlite3_bind_int64(stmt, index++, r->number);
			if (rc != SQLITE_OK)
				goto fail;
			continue;
		}
		for (j = 0; j < r->nvalues; j++) {
			rc = sqlite3_bind_text(stmt, index++, r->values[j], -1, SQLITE_TRANSIENT);
			if (rc != SQLITE_OK)
				goto fail;
		}
	}
	return index - first;

fail:
	return error_set(error, "label selector: binding SQL parameter %d: %s", index - 1,
	    sqlite3_errstr(rc));
}

/* ---------------------------------------------------------------- string form out */

/* Appends r in the string form, values sorted. */
static void
requirement_to_string(const struct requirement *r, struct buf *b)
{
	char **sorted;
	size_t i;
	int set = r->op == SELECTOR_IN || r->op == SELECTOR_NOT_IN;

	if (r->op == SELECTOR_DOES_NOT_EXIST)
		buf_append_str(b, "!");
	buf_append_str(b, r->key);
	if (r->op == SELECTOR_EXISTS || r->op == SELECTOR_DOES_NOT_EXIST)
		return;
	buf_append_str(b, selector_op_text[r->op]);
	if (set)
		buf_append_str(b, "(");
	sorted = xmalloc(r->nvalues * sizeof *sorted);
	memcpy(sorted, r->values, r->nvalues * sizeof *sorted);
	qsort(sorted, r->nvalues, sizeof *sorted, string_compare);
	/* Each value once: in/notin values are a set, and a repeated empty value would print
	 * "(,,)", which no parser, kube's included, reads back. */
	for (i = 0; i < r->nvalues; i++) {
		if (i > 0 && strcmp(sorted[i], sorted[i - 1]) == 0)
			continue;
		buf_printf(b, "%s%s", i == 0 ? "" : ",", sorted[i]);
	}
	free(sorted);
	if (set)
		buf_append_str(b, ")");
}

/* Returns the selector's string form. */
char *
selector_to_string(const struct selector *s)
{
	struct buf b;
	size_t i;

	buf_init(&b);
	if (!s->nothing) {
		for (i = 0; i < s->nreqs; i++) {
			if (i > 0)
				buf_append_str(&b, ",");
			requirement_to_string(&s->reqs[i], &b);
		}
	}
	return buf_detach(&b);
}
