/*
 * util.h - allocation, error messages and a growable byte buffer, shared by every file.
 *
 * Conventions (see also ../shared/STYLE.md):
 * - Allocation failure is not recoverable: x* functions abort with a message, as tmux's do.
 * - A function that can fail returns 0 on success or -1, and, when its caller passed a
 *   non-NULL `char **error`, sets *error to a malloc'd message the caller frees. The
 *   message names what is wrong (file, field, value) and never contains a secret.
 */
#ifndef SQLKCM_UTIL_H
#define SQLKCM_UTIL_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Sets *error (if error is not NULL and *error is NULL) to a formatted message; returns -1
 * so that `return error_set(error, ...)` reads as a failure. */
int error_set(char **error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A growable byte buffer; always NUL-terminated after its len bytes. */
struct buf {
	char *data;
	size_t len;
	size_t cap;
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
void buf_append(struct buf *b, const void *data, size_t len);
void buf_append_str(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Removes the first n bytes. */
void buf_consume(struct buf *b, size_t n);
/* Returns the contents as a malloc'd string and leaves the buffer empty. */
char *buf_detach(struct buf *b);

struct stat;

/* Reads the whole file path (at most max bytes) into out; what names it in messages
 * ("kubeconfig /x: ..."). On success *st (if not NULL) describes the file that was read. */
int file_read_all(const char *path, const char *what, size_t max, struct buf *out,
    struct stat *st, char **error);

/* Returns template (malloc'd) with each occurrence of a name of pairs replaced by its
 * value: pairs is { name, value, name, value, ..., NULL }. For SQL built from a template
 * and constant names (tables, views); never for data, which is bound. */
char *text_expand(const char *template, const char *const *pairs);

/* Says whether s[0..len) is empty or only white space. */
int text_is_blank(const char *s, size_t len);

/* Reads text as Go's strconv.ParseBool does ("1", "t", "true", "TRUE", "True", and the
 * same for false) into *out; -1 when it is none of them. */
int text_parse_bool(const char *text, int *out);

#endif
