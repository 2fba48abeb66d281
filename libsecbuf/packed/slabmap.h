/*
 * slabmap.c's lookup: the slab holding a pointer, found by its aligned
 * block without a lock.  packed.h passes it on to the rest of the library
 * (secbuf_free() asks it about every pointer); pool.c and packed.c use it
 * here, below packed.c.
 */
#ifndef SECBUF_PACKED_SLABMAP_H
#define SECBUF_PACKED_SLABMAP_H

#include <stdint.h>
#include "visibility.h"

struct sb_slab;

/* Slabs are aligned blocks of 2^SB_SLAB_SHIFT bytes, guard pages included. */
#define SB_SLAB_SHIFT 18

#define SB_SLABMAP_BITS	     48
#define SB_SLABMAP_LEAF_BITS 15
#define SB_SLABMAP_LEAF	     ((size_t)1 << SB_SLABMAP_LEAF_BITS)
#define SB_SLABMAP_TOP	     ((size_t)1 << (SB_SLABMAP_BITS - SB_SLAB_SHIFT - SB_SLABMAP_LEAF_BITS))
SB_HIDDEN extern struct sb_slab **sb_slabmap[SB_SLABMAP_TOP];

/* Inline: secbuf_free() asks it about every pointer, packed or not. */
static inline struct sb_slab *sb_slab_of(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	struct sb_slab **leaf;

	if (a >> SB_SLABMAP_BITS)
		return NULL;
	leaf = __atomic_load_n(&sb_slabmap[a >> (SB_SLAB_SHIFT + SB_SLABMAP_LEAF_BITS)],
			       __ATOMIC_ACQUIRE);
	if (!leaf)
		return NULL;
	return __atomic_load_n(&leaf[(a >> SB_SLAB_SHIFT) & (SB_SLABMAP_LEAF - 1)],
			       __ATOMIC_ACQUIRE);
}

SB_HIDDEN int sb_slabmap_set(uintptr_t block, struct sb_slab *s); /* 0, or -1 errno */
SB_HIDDEN void sb_slabmap_clear(uintptr_t block);

#endif
