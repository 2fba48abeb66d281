/*
 * slabmap.c's lookup: the slab holding a pointer, found by its aligned
 * block without a lock (core/blockmap.c).  packed.h passes it on to the
 * rest of the library (secbuf_free() asks it about every pointer); pool.c
 * and packed.c use it here, below packed.c.
 */
#ifndef SECBUF_PACKED_SLABMAP_H
#define SECBUF_PACKED_SLABMAP_H

#include <stdint.h>
#include "core/core.h"

struct sb_slab;

/* Slabs are aligned blocks of 2^SB_SLAB_SHIFT bytes, guard pages included. */
#define SB_SLAB_SHIFT SB_BLOCK_SHIFT

SB_HIDDEN extern struct sb_blockmap sb_slabmap;

/* Inline: secbuf_free() asks it about every pointer, packed or not. */
static inline struct sb_slab *sb_slab_of(const void *p)
{
	return sb_blockmap_get(&sb_slabmap, p);
}

SB_HIDDEN int sb_slabmap_set(uintptr_t block, struct sb_slab *s); /* 0, or -1 errno */
SB_HIDDEN void sb_slabmap_clear(uintptr_t block);

#endif
