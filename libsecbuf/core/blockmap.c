/*
 * Which object an address falls in, for objects mapped at aligned blocks
 * of 2^SB_BLOCK_SHIFT bytes: the address's block number finds it in a
 * two-level table, read without a lock.  packed/ finds its slabs so
 * (secbuf_free() asks about every pointer, packed or not); the OpenSSL
 * drop-in its large buffers.  Entries are set when an object is made and
 * cleared when it goes; the leaves, 256 KiB each (8 GiB of address
 * space), are never freed.  Blocks above 2^48 (only ever mapped on
 * request) are not covered: an object is never made there.
 */
#include <errno.h>
#include <sys/mman.h>
#include "core.h"

static void unmap_leaf(void **leaf, size_t len)
{
	if (munmap(leaf, len) < 0)
		sb_misuse("block map: munmap(%p) failed: %m", (void *)leaf);
}

/* The leaf covering block, made if missing (two threads may race: one wins). */
static void **leaf_of(struct sb_blockmap *m, uintptr_t block)
{
	void ***top = &m->leaf[block >> (SB_BLOCK_SHIFT + SB_BLOCKMAP_LEAF_BITS)];
	void **leaf = __atomic_load_n(top, __ATOMIC_ACQUIRE), **expected = NULL;
	size_t len = sizeof(*leaf) << SB_BLOCKMAP_LEAF_BITS;

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

int sb_blockmap_set(struct sb_blockmap *m, uintptr_t block, void *v)
{
	void **leaf;

	if (block >> SB_BLOCKMAP_BITS) {
		errno = ENOMEM;
		return -1;
	}
	leaf = leaf_of(m, block);
	if (!leaf)
		return -1;
	__atomic_store_n(&leaf[(block >> SB_BLOCK_SHIFT) & (SB_BLOCKMAP_LEAF - 1)], v,
			 __ATOMIC_RELEASE);
	return 0;
}

void sb_blockmap_clear(struct sb_blockmap *m, uintptr_t block)
{
	void **leaf = m->leaf[block >> (SB_BLOCK_SHIFT + SB_BLOCKMAP_LEAF_BITS)];

	__atomic_store_n(&leaf[(block >> SB_BLOCK_SHIFT) & (SB_BLOCKMAP_LEAF - 1)], NULL,
			 __ATOMIC_RELEASE);
}
