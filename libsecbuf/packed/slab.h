/*
 * The inside of packed/: size classes, the slab layout, the slab map's
 * writers and the pools.  Only the files of packed/ include it.
 */
#ifndef SECBUF_PACKED_SLAB_H
#define SECBUF_PACKED_SLAB_H

#include "packed.h"

/*
 * Packed secrets: size classes of 16 bytes up to SECBUF_PACKED_MAX, kept
 * in slabs that are locked with the process's method, or secret memory
 * (SECBUF_SECRET), or, for best-effort secrets whose lock was refused,
 * unlocked: never mixed.  Inherited secrets (SECBUF_INHERIT) have slabs
 * of their own, locked or not, which forked children keep.
 */
#define SB_CLASS_STEP 16
#define SB_CLASSES    (SECBUF_PACKED_MAX / SB_CLASS_STEP)
enum sb_pool_kind { SB_LOCKED, SB_UNLOCKED, SB_SECRET, SB_INHERIT_LOCKED, SB_INHERIT_UNLOCKED,
		    SB_KINDS };
/* The kinds a forked child keeps when it keeps the key. */
static inline int sb_kind_inherited(enum sb_pool_kind kind)
{
	return kind == SB_INHERIT_LOCKED || kind == SB_INHERIT_UNLOCKED;
}

/*
 * slab.c: a slab holds the packed secrets of one size class in an aligned
 * block of SB_SLAB_BLOCK bytes:
 *
 *   [guard page][g0][slot 0][g1][slot 1] ... [slot n-1][gn][spare][guard page]
 *
 * gN are 16 keyed guard bytes, shared by the slots on either side; a slot
 * holds one secret and then padding up to the class size.  Guard bytes are
 * written once, when a slot is first handed out ("carved"), so that only
 * pages holding carved slots are ever faulted in (and locked).  The
 * metadata is a separate block (core/metamem.c), never in secret memory.
 */
#define SB_SLAB_BLOCK	    ((size_t)1 << SB_SLAB_SHIFT) /* guard pages included */
#define SB_GUARD	    16
#define SB_SLAB_MAX_SLOTS   (SB_SLAB_BLOCK / (SB_CLASS_STEP + SB_GUARD))
#define SB_SLAB_WORDS	    (SB_SLAB_MAX_SLOTS / 64)
#define SB_INFO_SIZE	    0x1ffu /* slot info: the size asked for ... */
#define SB_INFO_FLAGS_SHIFT 9	   /* ... and the flags above it: */
#define SB_INFO_FLAGS	    (SECBUF_POPULATE | SECBUF_BEST_EFFORT | SECBUF_SECRET)

struct sb_live_word { /* a cache line each: threads use different words */
	uint64_t bits;
} __attribute__((aligned(64)));

struct sb_slab {
	/* Set when the slab is made; read without a lock. */
	uintptr_t block; /* 0 once torn down */
	uint64_t epoch;	 /* the key epoch it was made under */
	uint64_t guard_key[5];
	uint64_t index_magic; /* division by stride: see sb_slab_index() */
	uint64_t check;	      /* keyed, over what a forged record would change */
	unsigned int cls, csize, stride, nslots;
	enum sb_pool_kind kind;
	struct sb_region region;
	/* Under the pool's lock. */
	struct sb_slab *next, *prev;
	int listed;
	unsigned int carved, pooled, scan;
	uint64_t pooled_bits[SB_SLAB_WORDS]; /* carved, free, in no thread's bin */
	/* Atomic: which slots hold a secret now. */
	struct sb_live_word live[SB_SLAB_WORDS];
	/* Each live slot's SB_INFO_*, written by the thread that allocates it. */
	uint16_t info[SB_SLAB_MAX_SLOTS];
};

SB_HIDDEN int sb_slabmap_set(uintptr_t block, struct sb_slab *s); /* 0, or -1 errno */
SB_HIDDEN void sb_slabmap_clear(uintptr_t block);

/* The first slot of the slab whose block holds p (a pointer's own block). */
static inline uintptr_t sb_slab_first(const void *p)
{
	return ((uintptr_t)p & ~(SB_SLAB_BLOCK - 1)) + sb_pagesize + SB_GUARD;
}

/*
 * Slot number of offset u from the first slot: u / stride as a multiply
 * and a shift.  index_magic = ceil(2^40 / stride); with u < 2^18 and
 * stride <= 272 the error stays below 2^-22, less than the 1/stride
 * that would carry it to the next slot.
 */
static inline unsigned int sb_slab_index(const struct sb_slab *s, uintptr_t u)
{
	return (unsigned int)((u * s->index_magic) >> 40);
}

/*
 * Guard bytes gN: a keyed mix of N under keys drawn for this slab from
 * the PRF.  Cheap (two multiplies), because free checks two of them and
 * cannot afford SipHash; not a PRF within the slab: a reader of some of a
 * slab's guard bytes may be able to forge the others, but learns nothing
 * about other slabs, canaries or the key (see secbuf_alloc(3)).
 */
static inline void sb_slab_guard(const struct sb_slab *s, uint64_t n, uint64_t g[2])
{
	const uint64_t *k = s->guard_key;
	uint64_t x = (n ^ k[0]) * k[1];

	x ^= x >> 32;
	x *= k[2];
	x ^= x >> 29;
	g[0] = x ^ k[3];
	g[1] = (x << 32 | x >> 32) + k[4];
}

/*
 * A slab record's check: its own address, its block and key epoch, and
 * the geometry and lock method it hands out slots with, under the
 * process's keys.  A copy elsewhere, or a record pointed at other memory
 * or made to claim a lock it does not have, no longer matches.
 */
static inline uint64_t sb_slab_check(const struct sb_slab *s)
{
	return sb_key_mix((uintptr_t)s, s->block ^ s->epoch,
			  s->cls | (uint64_t)s->kind << 8 |
				  (uint64_t)(s->region.method & 0xff) << 16 |
				  (uint64_t)s->stride << 24 | (uint64_t)s->nslots << 40);
}

SB_HIDDEN __attribute__((noreturn)) void sb_slab_forged(const void *p, const char *fn);

/* Whether s is a record the library made (or abort, naming fn and p). */
static inline void sb_slab_verify(const struct sb_slab *s, const void *p, const char *fn)
{
	if (__builtin_expect(s->check != sb_slab_check(s), 0))
		sb_slab_forged(p, fn);
}

SB_HIDDEN struct sb_slab *sb_slab_make(unsigned int cls, enum sb_pool_kind kind);
SB_HIDDEN void sb_slab_unmake(struct sb_slab *s);
/* Under the pool's lock: hand out up to max free slots (ascending) into out. */
SB_HIDDEN unsigned int sb_slab_take(struct sb_slab *s, void **out, unsigned int max);
/* Under the pool's lock: slot i is free again.  Returns 1 if the slab is now empty. */
SB_HIDDEN int sb_slab_give(struct sb_slab *s, unsigned int i);
/* Whether the slab has nothing left to hand out. */
static inline int sb_slab_exhausted(const struct sb_slab *s)
{
	return !s->pooled && s->carved == s->nslots;
}

/*
 * pool.c: per size class and kind, the slabs with slots to hand out,
 * behind a lock that threads take once per batch of SB_BIN_SLOTS / 2
 * (packed.c).  Its fork hooks are in packed.h.
 */
SB_HIDDEN int sb_pool_take(enum sb_pool_kind kind, unsigned int cls, void **out, unsigned int max);
SB_HIDDEN void sb_pool_give(enum sb_pool_kind kind, unsigned int cls, void *const *slots,
			    unsigned int n);
SB_HIDDEN void sb_pool_lock(const struct sb_slab *s);
SB_HIDDEN int sb_pool_trylock(const struct sb_slab *s);
SB_HIDDEN void sb_pool_unlock(const struct sb_slab *s);

#endif
