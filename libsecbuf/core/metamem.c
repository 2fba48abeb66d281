/*
 * Memory for the library's own bookkeeping: blocks of one fixed size,
 * carved from mappings of their own rather than the malloc heap, so that
 * an overflow of an application's heap buffer cannot reach them.  They
 * are left out of core dumps (slab metadata holds guard keys), and they
 * are never returned to the kernel, only recycled per kind: a stale
 * pointer to a block of one kind always points at mapped memory of that
 * kind, which is what lets a racing misuse still end in a clean abort.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include "core.h"

#define CHUNK_BLOCKS 32

struct free_block {
	struct free_block *next;
};

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
static struct free_block *recycled[SB_META_KINDS];
static unsigned char *chunk; /* blocks not handed out yet: [chunk, chunk_end) */
static unsigned char *chunk_end;

static int new_chunk(void)
{
	size_t len = CHUNK_BLOCKS * SB_META_BLOCK;
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	/* Not dumped; not wiped on fork, so a child can still name the
	 * parent's slabs when it misuses one of their secrets. */
	if (madvise(p, len, MADV_DONTDUMP) < 0 || sb_name_range(p, len, "secbuf-meta") < 0) {
		int err = errno;

		if (munmap(p, len) < 0)
			sb_misuse("metadata: munmap(%p) failed: %m", (void *)p);
		errno = err;
		return -1;
	}
	chunk = p;
	chunk_end = p + len;
	return 0;
}

void *sb_meta_get(enum sb_meta_kind kind)
{
	void *b = NULL;

	pthread_mutex_lock(&meta_lock);
	if (recycled[kind]) {
		b = recycled[kind];
		recycled[kind] = recycled[kind]->next;
	} else if (chunk != chunk_end || new_chunk() == 0) {
		b = chunk;
		chunk += SB_META_BLOCK;
	}
	pthread_mutex_unlock(&meta_lock);
	if (!b)
		errno = ENOMEM;
	return b;
}

void sb_meta_put(enum sb_meta_kind kind, void *block)
{
	struct free_block *f = block;

	pthread_mutex_lock(&meta_lock);
	f->next = recycled[kind];
	recycled[kind] = f;
	pthread_mutex_unlock(&meta_lock);
}

void sb_meta_fork_prepare(void)
{
	pthread_mutex_lock(&meta_lock);
}

void sb_meta_fork_parent(void)
{
	pthread_mutex_unlock(&meta_lock);
}

void sb_meta_fork_child(void)
{
	pthread_mutex_unlock(&meta_lock);
}
