/*
 * Which slab a pointer falls in: slabs are aligned to their size, one
 * block of the block map (core/blockmap.c) each.
 */
#include "slab.h"

struct sb_blockmap sb_slabmap;

int sb_slabmap_set(uintptr_t block, struct sb_slab *s)
{
	return sb_blockmap_set(&sb_slabmap, block, s);
}

void sb_slabmap_clear(uintptr_t block)
{
	sb_blockmap_clear(&sb_slabmap, block);
}
