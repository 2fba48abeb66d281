/*
 * Which slab a pointer falls in.  Slabs are aligned to their size, so
 * the address's block number finds its slab in a two-level table, read
 * without a lock: secbuf_free() asks it about every pointer, packed or
 * not.  Entries are set when a slab is made and cleared when it is torn
 * down; the leaves, 256 KiB each (8 GiB of address space), are never
 * freed.  Blocks above 2^48 (only ever mapped on request) are not
 * covered: a slab is never made there.
 */
#include <errno.h>
#include <sys/mman.h>
#include "slab.h"

struct sb_slab **sb_slabmap[SB_SLABMAP_TOP];

static void unmap_leaf(struct sb_slab **leaf, size_t len)
{
	if (munmap(leaf, len) < 0)
		sb_misuse("slab map: munmap(%p) failed: %m", (void *)leaf);
}

/* The leaf covering block, made if missing (two threads may race: one wins). */
static struct sb_slab **leaf_of(uintptr_t block)
{
	struct sb_slab ***top = &sb_slabmap[block >> (SB_SLAB_SHIFT + SB_SLABMAP_LEAF_BITS)];
	struct sb_slab **leaf = __atomic_load_n(top, __ATOMIC_ACQUIRE), **expected = NULL;
	size_t len = sizeof(*leaf) << SB_SLABMAP_LEAF_BITS;

	if (leaf)
		return leaf;
	leaf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		    -1, 0);
	if (leaf == MAP_FAILED)
		return NULL;
	if (sb_name_range(leaf, len, "secbuf-meta") < 0) {
		int err = errno;

		unmap_leaf(leaf, len);
		errno = err;
		return NULL;
	}
	if (!__atomic_compare_exchange_n(top, &expected, leaf, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		unmap_leaf(leaf, len);
		leaf = expected;
	}
	return leaf;
}

int sb_slabmap_set(uintptr_t block, struct sb_slab *s)
{
	struct sb_slab **leaf;

	if (block >> SB_SLABMAP_BITS) {
		errno = ENOMEM;
		return -1;
	}
	leaf = leaf_of(block);
	if (!leaf)
		return -1;
	__atomic_store_n(&leaf[(block >> SB_SLAB_SHIFT) & (SB_SLABMAP_LEAF - 1)], s,
			 __ATOMIC_RELEASE);
	return 0;
}

void sb_slabmap_clear(uintptr_t block)
{
	struct sb_slab **leaf = sb_slabmap[block >> (SB_SLAB_SHIFT + SB_SLABMAP_LEAF_BITS)];

	__atomic_store_n(&leaf[(block >> SB_SLAB_SHIFT) & (SB_SLABMAP_LEAF - 1)], NULL,
			 __ATOMIC_RELEASE);
}
