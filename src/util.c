/*
 * util.c - allocation, error messages and a growable byte buffer.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* Out of memory: nothing sensible can follow, so say so and stop. */
static void __attribute__((noreturn))
out_of_memory(size_t size)
{
	fprintf(stderr, "sqlkcm: out of memory (allocating %zu bytes)\n", size);
	abort();
}

void *
xmalloc(size_t size)
{
	void *p = malloc(size == 0 ? 1 : size);

	if (p == NULL)
		out_of_memory(size);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);

	if (p == NULL)
		out_of_memory(n * size);
	return p;
}

void *
xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size == 0 ? 1 : size);

	if (q == NULL)
		out_of_memory(size);
	return q;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		out_of_memory(strlen(fmt));
	return s;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

int
error_set(char **error, const char *fmt, ...)
{
	va_list ap;

	if (error == NULL || *error != NULL)
		return -1;
	va_start(ap, fmt);
	*error = xvasprintf(fmt, ap);
	va_end(ap);
	return -1;
}

void
buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

/* Makes room for n more bytes and the terminating NUL. */
static void
buf_reserve(struct buf *b, size_t n)
{
	if (n >= SIZE_MAX / 2 - b->len)
		out_of_memory(n);
	if (b->len + n + 1 <= b->cap)
		return;
	size_t cap = b->cap == 0 ? 64 : b->cap;
	while (cap < b->len + n + 1)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void
buf_append(struct buf *b, const void *data, size_t len)
{
	buf_reserve(b, len);
	if (len > 0)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void
buf_append_str(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	buf_append_str(b, s);
	free(s);
}

void
buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

char *
buf_detach(struct buf *b)
{
	char *s = b->data != NULL ? b->data : xstrdup("");

	buf_init(b);
	return s;
}

/* --- files and text ---------------------------------------------------------------------- */

int
file_read_all(const char *path, const char *what, size_t max, struct buf *out, struct stat *st,
    char **error)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char chunk[65536];
	struct stat sb;

	if (fd == -1)
		return error_set(error, "%s %s: %s", what, path, strerror(errno));
	if (fstat(fd, &sb) == -1) {
		int saved = errno;
		close(fd);
		return error_set(error, "%s %s: %s", what, path, strerror(saved));
	}
	if (S_ISDIR(sb.st_mode)) {
		close(fd);
		return error_set(error, "%s %s: is a directory", what, path);
	}
	buf_reset(out);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			int saved = errno;
			close(fd);
			return error_set(error, "%s %s: %s", what, path, strerror(saved));
		}
		if (n == 0)
			break;
		if (out->len + (size_t)n > max) {
			close(fd);
			return error_set(error, "%s %s: larger than %zu bytes, refused", what, path,
			    max);
		}
		buf_append(out, chunk, (size_t)n);
	}
	close(fd);
	if (st != NULL)
		*st = sb;
	return 0;
}

int
text_is_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			return 0;
	return 1;
}

char *
text_expand(const char *template, const char *const *pairs)
{
	struct buf out;
	const char *p = template;

	buf_init(&out);
	while (*p != '\0') {
		const char *const *pair;

		for (pair = pairs; *pair != NULL; pair += 2) {
			size_t n = strlen(pair[0]);

			if (strncmp(p, pair[0], n) == 0) {
				buf_append_str(&out, pair[1]);
				p += n;
				break;
			}
		}
		if (*pair == NULL)
			buf_append(&out, p++, 1);
	}
	return buf_detach(&out);
}

int
text_parse_bool(const char *text, int *out)
{
	static const char *const yes[] = { "1", "t", "T", "true", "TRUE", "True" };
	static const char *const no[] = { "0", "f", "F", "false", "FALSE", "False" };

	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		if (strcmp(text, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcmp(text, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}
