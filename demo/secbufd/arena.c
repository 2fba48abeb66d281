/* arena.c - first-fit chunks inside one secbuf working buffer. */
#include "arena.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secbuf.h"

#define ARENA_ALIGN 64

int arena_init(struct arena *a, size_t cap, unsigned flags)
{
	memset(a, 0, sizeof(*a));
	a->base = secbuf_alloc_flags(cap, flags);
	if (!a->base)
		return -1;
	a->cap = cap;
	return 0;
}

void *arena_get(struct arena *a, size_t len)
{
	size_t need = (len + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	size_t start = 0;
	unsigned i;

	if (need == 0)
		need = ARENA_ALIGN;
	if (a->n == ARENA_MAX_CHUNKS || need < len)
		goto full;
	/* The first gap large enough, scanning chunks in offset order. */
	for (i = 0; i <= a->n; i++) {
		size_t end = i < a->n ? a->chunk[i].off : a->cap;

		if (end >= start && end - start >= need)
			break;
		if (i < a->n)
			start = a->chunk[i].off + a->chunk[i].len;
	}
	if (i > a->n)
		goto full;
	memmove(&a->chunk[i + 1], &a->chunk[i], (a->n - i) * sizeof(a->chunk[0]));
	a->chunk[i].off = start;
	a->chunk[i].len = need;
	a->n++;
	return a->base + start;
full:
	errno = ENOSPC;
	return NULL;
}

void arena_put(struct arena *a, void *p)
{
	size_t off = (unsigned char *)p - a->base;

	for (unsigned i = 0; i < a->n; i++) {
		if (a->chunk[i].off != off)
			continue;
		sodium_memzero(a->base + off, a->chunk[i].len);
		memmove(&a->chunk[i], &a->chunk[i + 1], (a->n - i - 1) * sizeof(a->chunk[0]));
		a->n--;
		return;
	}
	/* A pointer we never handed out means the daemon's state is corrupt. */
	fprintf(stderr, "secbufd: arena_put: %p is not a chunk of the working buffer\n", p);
	abort();
}

void arena_wipe(struct arena *a)
{
	for (unsigned i = 0; i < a->n; i++)
		sodium_memzero(a->base + a->chunk[i].off, a->chunk[i].len);
	a->n = 0;
}

void arena_free(struct arena *a)
{
	arena_wipe(a);
	secbuf_free(a->base);
	a->base = NULL;
}
