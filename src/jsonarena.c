/*
 * jsonarena.c - the chunks json_arena_parse puts cJSON's nodes in (see jsonarena.h).
 *
 * cJSON takes one pair of allocation hooks for the whole process. Ours hand out chunk
 * memory only while json_arena_parse runs, and malloc's otherwise. A chunk is aligned to
 * its size, so the chunk of any pointer is the pointer with its low bits cleared; a free
 * whose chunk is one of ours counts that chunk's allocations down, any other is free().
 * (malloc never returns memory inside a block it gave out, so a pointer from malloc is
 * never inside a live chunk.) A chunk whose count reaches zero is reused when it is the
 * one being filled, kept as the spare, or freed.
 *
 * The process is single-threaded, as everything that touches cJSON here. Under
 * AddressSanitizer every allocation carries its size, and what is freed or not handed
 * out is poisoned, so that the sanitizer sees the arena's misuse as it sees malloc's.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jsonarena.h"
#include "util.h"

#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)	/* clang's way of saying it */
#define ARENA_ASAN 1
#endif
#endif

#if defined(ARENA_ASAN)
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ARENA_ASAN 0
#endif

#define CHUNK_SIZE ((size_t)1 << 18)
#define ALIGN 16
/* Larger allocations (a string of 32 KiB and more) go to malloc. */
#define ARENA_MAX (CHUNK_SIZE / 8)
/* Under ASan, each allocation's size, before it. */
#define HEADER (ARENA_ASAN ? ALIGN : 0)

struct chunk {
	size_t used;		/* bytes handed out, this header included */
	long live;		/* allocations not yet freed */
};

#define CHUNK_START (((sizeof(struct chunk) + ALIGN - 1) / ALIGN) * ALIGN)

static struct {
	int hooked;
	int active;		/* json_arena_parse is running */
	struct chunk *current;	/* being filled */
	struct chunk *spare;	/* empty, kept for the next */
	struct chunk **chunks;	/* every chunk of ours, current and spare included */
	int n, cap;
	long live;
} arena;

static int
chunk_index(const struct chunk *c)
{
	for (int i = 0; i < arena.n; i++) {
		if (arena.chunks[i] == c)
			return i;
	}
	return -1;
}

/* A chunk of the system's, aligned to its size: mapped apart from malloc's heap, so that
 * what is given back leaves the process (a heap holes it, and keeps the pages). */
static struct chunk *
chunk_map(void)
{
	size_t len = 2 * CHUNK_SIZE;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t start, end;

	if (p == MAP_FAILED)
		return NULL;
	start = ((uintptr_t)p + CHUNK_SIZE - 1) & ~(uintptr_t)(CHUNK_SIZE - 1);
	end = start + CHUNK_SIZE;
	if (start > (uintptr_t)p)
		munmap(p, start - (uintptr_t)p);
	if ((uintptr_t)p + len > end)
		munmap((void *)end, (uintptr_t)p + len - end);
	return (struct chunk *)start;
}

static void
chunk_release(struct chunk *c)
{
	int i = chunk_index(c);

	if (arena.spare == NULL) {
		c->used = CHUNK_START;
		ASAN_POISON_MEMORY_REGION((char *)c + CHUNK_START, CHUNK_SIZE - CHUNK_START);
		arena.spare = c;
		return;
	}
	arena.chunks[i] = arena.chunks[--arena.n];
	ASAN_UNPOISON_MEMORY_REGION(c, CHUNK_SIZE);
	munmap(c, CHUNK_SIZE);
}

static struct chunk *
chunk_new(void)
{
	struct chunk *c;

	if (arena.spare != NULL) {
		c = arena.spare;
		arena.spare = NULL;
		return c;
	}
	if ((c = chunk_map()) == NULL)
		return NULL;
	c->used = CHUNK_START;
	c->live = 0;
	ASAN_POISON_MEMORY_REGION((char *)c + CHUNK_START, CHUNK_SIZE - CHUNK_START);
	if (arena.n == arena.cap) {
		arena.cap = arena.cap == 0 ? 8 : arena.cap * 2;
		arena.chunks = xrealloc(arena.chunks, (size_t)arena.cap * sizeof *arena.chunks);
	}
	arena.chunks[arena.n++] = c;
	return c;
}

static void *
arena_malloc(size_t size)
{
	size_t n = ((size + HEADER + ALIGN - 1) / ALIGN) * ALIGN;
	char *p;

	if (!arena.active || size > ARENA_MAX)
		return malloc(size);
	if (arena.current == NULL || arena.current->used + n > CHUNK_SIZE) {
		struct chunk *full = arena.current;

		if (full != NULL && full->live == 0) {
			full->used = CHUNK_START;	/* all freed: fill it again */
			ASAN_POISON_MEMORY_REGION((char *)full + CHUNK_START,
			    CHUNK_SIZE - CHUNK_START);
		} else {
			struct chunk *c = chunk_new();

			if (c == NULL)
				return malloc(size);
			arena.current = c;
		}
	}
	p = (char *)arena.current + arena.current->used;
	arena.current->used += n;
	arena.current->live++;
	arena.live++;
	ASAN_UNPOISON_MEMORY_REGION(p, n);
	if (ARENA_ASAN) {
		memcpy(p, &size, sizeof size);
		ASAN_POISON_MEMORY_REGION(p, HEADER);
	}
	return p + HEADER;
}

static void
arena_free(void *ptr)
{
	struct chunk *c = (struct chunk *)((uintptr_t)ptr & ~(uintptr_t)(CHUNK_SIZE - 1));

	if (ptr == NULL)
		return;
	if (arena.n == 0 || chunk_index(c) < 0 || c == arena.spare) {
		free(ptr);
		return;
	}
	if (ARENA_ASAN) {
		size_t size;
		char *p = (char *)ptr - HEADER;

		ASAN_UNPOISON_MEMORY_REGION(p, HEADER);
		memcpy(&size, p, sizeof size);
		ASAN_POISON_MEMORY_REGION(p, HEADER + size);
	}
	arena.live--;
	if (--c->live > 0)
		return;
	if (c != arena.current) {
		chunk_release(c);
	} else {
		c->used = CHUNK_START;	/* empty: fill it again from the start */
		ASAN_POISON_MEMORY_REGION((char *)c + CHUNK_START, CHUNK_SIZE - CHUNK_START);
	}
}

cJSON *
json_arena_parse(const char *text, size_t len)
{
	cJSON *tree;

	if (!arena.hooked) {
		cJSON_Hooks hooks = { arena_malloc, arena_free };

		cJSON_InitHooks(&hooks);
		arena.hooked = 1;
	}
	arena.active = 1;
	tree = cJSON_ParseWithLength(text, len);
	arena.active = 0;
	return tree;
}

void
json_arena_stats(struct json_arena_stats *out)
{
	out->chunks = arena.n;
	out->live = arena.live;
}
