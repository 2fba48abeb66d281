/*
 * arena.h - the daemon's working buffer: one large secbuf region, locked on
 * fault, from which every request and reply body is carved.  Only pages that
 * messages have touched get locked; capacity costs nothing until used.
 */
#ifndef SECBUFD_ARENA_H
#define SECBUFD_ARENA_H

#include <stddef.h>

#define ARENA_MAX_CHUNKS 1024

struct arena_chunk {
	size_t off, len;
};

struct arena {
	unsigned char *base;
	size_t cap;
	unsigned n;			/* chunks in use, sorted by offset */
	struct arena_chunk chunk[ARENA_MAX_CHUNKS];
};

/* Map cap bytes with secbuf_alloc_flags(cap, flags); -1 with errno on failure. */
int arena_init(struct arena *a, size_t cap, unsigned flags);

/* A zeroed chunk of len bytes (len 0 allowed), or NULL with errno ENOSPC. */
void *arena_get(struct arena *a, size_t len);

/* Wipe a chunk from arena_get() and make it free again. */
void arena_put(struct arena *a, void *p);

/* Wipe every chunk in use (for shutdown); arena_free() then unmaps. */
void arena_wipe(struct arena *a);
void arena_free(struct arena *a);

#endif
