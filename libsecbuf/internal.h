/* Internal interfaces of libsecbuf: one section per source file. */
#ifndef SECBUF_INTERNAL_H
#define SECBUF_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "secbuf.h"

#define SB_HIDDEN __attribute__((visibility("hidden")))
#define SB_API __attribute__((visibility("default")))
#define SB_CANARY_SIZE 16	/* also the pointer alignment */

/* A refused lock: the limit, the privilege or memory, not a bad argument. */
static inline int sb_lock_refused(int err)
{
	return err == EPERM || err == EAGAIN || err == ENOMEM;
}

/* probe.c: kernel capabilities and SECBUF_LOCK, probed once per process. */
struct sb_caps {
	int method;		/* process method, or -1 (errno in err) */
	int err;
	int lazy_err;		/* why a lazy buffer cannot be locked under method */
	int map_lockonfault;	/* 0 if proven, else the errno that stopped the proof */
	int mlock2_onfault;	/* likewise */
	size_t page;
};
SB_HIDDEN const struct sb_caps *sb_caps(void);
SB_HIDDEN extern size_t sb_pagesize;	/* caps->page, for hot paths once caps are made */
/* prove.c: 0 when the feature worked on a page, else the errno that stopped it. */
SB_HIDDEN int sb_prove_map_lockonfault(size_t page);
SB_HIDDEN int sb_prove_mlock2_onfault(size_t page);
/* Before anything new is made: 0, or -1 with errno (no method, no key). */
SB_HIDDEN int sb_ready(void);

/* siphash.c: SipHash-2-4, by bytes or by little-endian words. */
struct sb_siphash {
	uint64_t v[4];
	uint64_t len;
};
SB_HIDDEN uint64_t sb_siphash24(const uint64_t key[2], const void *msg, size_t len);
SB_HIDDEN void sb_siphash_init(struct sb_siphash *s, const uint64_t key[2]);
SB_HIDDEN void sb_siphash_word(struct sb_siphash *s, uint64_t m);
SB_HIDDEN uint64_t sb_siphash_final(struct sb_siphash *s);

/*
 * key.c: the per-process key, in a locked page that is not dumped and is
 * zeroed in forked children, which draw their own.  sb_key_epoch() is 0
 * until this process has drawn a key, else a number that differs from the
 * epoch of any key drawn before (by this process or its ancestors).
 */
enum sb_prf_use {		/* domain separation: one PRF, several uses */
	SB_PRF_CANARY = 1,
	SB_PRF_CHECK,
	SB_PRF_SLOT,
	SB_PRF_GUARD,		/* a slab's guard-byte keys */
};
SB_HIDDEN int sb_key_ready(void);
SB_HIDDEN uint64_t sb_key_epoch(void);
SB_HIDDEN uint64_t sb_prf(enum sb_prf_use use, const uint64_t *w, size_t n);
SB_HIDDEN void sb_key_fork_prepare(void);
SB_HIDDEN void sb_key_fork_parent(void);
SB_HIDDEN void sb_key_fork_child(void);

/* fork.c: the library's locks are taken around fork(). */
SB_HIDDEN int sb_fork_init(void);

/* region.c: [guard][data][guard] mappings, after sb_ready(). */
struct sb_region {
	unsigned char *base;	/* leading guard page */
	size_t map_len;		/* guards included */
	unsigned char *data;
	size_t data_len;
	int method;		/* SECBUF_LOCK_* actually in effect */
};
/* The lock method a buffer with these flags gets, or -1 with errno (strict). */
SB_HIDDEN int sb_region_method(unsigned flags);
/*
 * Map data_len bytes (a page multiple) between guard pages, the leading
 * guard at a multiple of align (a power of two, at least a page), locked
 * with method, which a refused lock turns into SECBUF_LOCK_NONE under
 * SECBUF_BEST_EFFORT.  0, or -1 with errno and nothing mapped.
 */
SB_HIDDEN int sb_region_map(struct sb_region *r, size_t data_len, size_t align, int method,
			    unsigned flags);
SB_HIDDEN int sb_region_protect(const struct sb_region *r, int prot);
SB_HIDDEN void sb_region_unmap(const struct sb_region *r, const char *fn);
/* Building blocks, also for the key page: 0 or -1 with errno. */
SB_HIDDEN int sb_name_range(void *start, size_t len, const char *name);
/* Returns 1 where the kernel drops the range from children instead of zeroing it. */
SB_HIDDEN int sb_advise_secret(void *start, size_t len);

/*
 * metamem.c: fixed-size blocks for the library's bookkeeping, outside the
 * malloc heap and core dumps; recycled per kind, never unmapped.
 */
#define SB_META_BLOCK (40 * 1024)
enum sb_meta_kind {
	SB_META_THREAD,
	SB_META_SLAB,
	SB_META_KINDS
};
SB_HIDDEN void *sb_meta_get(enum sb_meta_kind kind);	/* NULL, errno ENOMEM */
SB_HIDDEN void sb_meta_put(enum sb_meta_kind kind, void *block);
SB_HIDDEN void sb_meta_fork_prepare(void);
SB_HIDDEN void sb_meta_fork_parent(void);
SB_HIDDEN void sb_meta_fork_child(void);

/*
 * Packed secrets: size classes of 16 bytes up to SECBUF_PACKED_MAX, kept
 * in slabs that are either locked with the process's method or, for
 * best-effort secrets whose lock was refused, unlocked: never mixed.
 */
#define SB_CLASS_STEP	16
#define SB_CLASSES	(SECBUF_PACKED_MAX / SB_CLASS_STEP)
enum sb_pool_kind {
	SB_LOCKED,
	SB_UNLOCKED,
	SB_KINDS
};

/* thread.c: per-thread state, made on first need, given back at thread exit. */
#define SB_WALK_VEC (16 * 1024)	/* pages per mincore call: 64 MiB of 4 KiB pages */
#define SB_BIN_SLOTS 64		/* free packed slots a thread keeps per class and kind */
struct sb_thread {
	unsigned char walk_vec[SB_WALK_VEC];
	/* Zeroed when the state is made; the arrays below need not be. */
	int walk_ready;		/* walk_vec is resident */
	uint64_t epoch;		/* key epoch of the slabs the bins hold slots of */
	unsigned char nbin[SB_KINDS][SB_CLASSES];
	void *bin[SB_KINDS][SB_CLASSES][SB_BIN_SLOTS];	/* LIFO: free slots */
};
SB_HIDDEN extern __thread struct sb_thread *sb_thread_self
	__attribute__((tls_model("initial-exec")));
SB_HIDDEN struct sb_thread *sb_thread_get(void);	/* NULL and errno on failure */
SB_HIDDEN void sb_thread_fork_child(void);

/*
 * resident.c: walk the resident pages of a range (mincore).  A walk
 * faults nothing in: ranges of more than a few hundred pages use the
 * thread's vector, which sb_resident_prepare(), called when a large
 * buffer is made, has made resident beforehand.
 */
typedef void (*sb_page_fn)(void *page, size_t len);
SB_HIDDEN int sb_resident_walk(unsigned char *start, size_t len, sb_page_fn fn,
			       size_t *count);
SB_HIDDEN void sb_resident_prepare(size_t len);

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
 * metadata is a separate block (metamem.c), never in secret memory.
 */
#define SB_SLAB_SHIFT	18
#define SB_SLAB_BLOCK	((size_t)1 << SB_SLAB_SHIFT)	/* guard pages included */
#define SB_GUARD	16
#define SB_SLAB_MAX_SLOTS (SB_SLAB_BLOCK / (SB_CLASS_STEP + SB_GUARD))
#define SB_SLAB_WORDS	(SB_SLAB_MAX_SLOTS / 64)
#define SB_INFO_SIZE	0x1ffu		/* slot info: the size asked for ... */
#define SB_INFO_FLAGS_SHIFT 9		/* ... and the flags above it */

struct sb_live_word {			/* a cache line each: threads use different words */
	uint64_t bits;
} __attribute__((aligned(64)));

struct sb_slab {
	/* Set when the slab is made; read without a lock. */
	uintptr_t block;		/* 0 once torn down */
	uint64_t epoch;			/* the key epoch it was made under */
	uint64_t guard_key[5];
	uint64_t index_magic;		/* division by stride: see sb_slab_index() */
	unsigned int cls, csize, stride, nslots;
	enum sb_pool_kind kind;
	struct sb_region region;
	/* Under the pool's lock. */
	struct sb_slab *next, *prev;
	int listed;
	unsigned int carved, pooled, scan;
	uint64_t pooled_bits[SB_SLAB_WORDS];	/* carved, free, in no thread's bin */
	/* Atomic: which slots hold a secret now. */
	struct sb_live_word live[SB_SLAB_WORDS];
	/* Each live slot's SB_INFO_*, written by the thread that allocates it. */
	uint16_t info[SB_SLAB_MAX_SLOTS];
};

/* slabmap.c: the slab holding a pointer, found by its aligned block. */
#define SB_SLABMAP_BITS		48
#define SB_SLABMAP_LEAF_BITS	15
#define SB_SLABMAP_LEAF		((size_t)1 << SB_SLABMAP_LEAF_BITS)
#define SB_SLABMAP_TOP		((size_t)1 << (SB_SLABMAP_BITS - SB_SLAB_SHIFT - SB_SLABMAP_LEAF_BITS))
SB_HIDDEN extern struct sb_slab **sb_slabmap[SB_SLABMAP_TOP];
SB_HIDDEN int sb_slabmap_set(uintptr_t block, struct sb_slab *s);	/* 0, or -1 errno */
SB_HIDDEN void sb_slabmap_clear(uintptr_t block);

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
 * behind a lock that threads take once per batch of SB_BIN_SLOTS / 2.
 */
SB_HIDDEN int sb_pool_take(enum sb_pool_kind kind, unsigned int cls, void **out,
			   unsigned int max);
SB_HIDDEN void sb_pool_give(enum sb_pool_kind kind, unsigned int cls, void *const *slots,
			    unsigned int n);
SB_HIDDEN void sb_pool_lock(const struct sb_slab *s);
SB_HIDDEN void sb_pool_unlock(const struct sb_slab *s);
SB_HIDDEN void sb_pool_fork_prepare(void);
SB_HIDDEN void sb_pool_fork_parent(void);
SB_HIDDEN void sb_pool_fork_child(void);

/* packed.c: SECBUF_PACKED secrets, behind the public calls. */
SB_HIDDEN void *sb_packed_alloc(size_t size, unsigned flags);
SB_HIDDEN void sb_packed_free(struct sb_slab *s, void *ptr, const char *fn);
SB_HIDDEN size_t sb_packed_size(struct sb_slab *s, const void *ptr, const char *fn);
SB_HIDDEN int sb_packed_stat(struct sb_slab *s, const void *ptr, struct secbuf_stat *st,
			     const char *fn);
SB_HIDDEN void sb_packed_check_live(struct sb_slab *s, const void *ptr, const char *fn);
/* A thread's bins: back to the pools at its exit; dropped in a forked child. */
SB_HIDDEN void sb_packed_thread_exit(struct sb_thread *t);
SB_HIDDEN void sb_packed_thread_forget(struct sb_thread *t);

/* wipe.c */
SB_HIDDEN void sb_wipe(void *p, size_t len);
SB_HIDDEN int sb_wipe_resident(unsigned char *start, size_t len);

/* A buffer's metadata, kept in the registry. */
struct sb_meta {
	unsigned char *user;
	size_t size;
	unsigned flags;
	struct sb_region region;
	uint64_t serial;	/* allocation number: canaries differ per allocation */
	uint64_t check;		/* keyed over all fields above */
};

/* canary.c: the bytes in front of the pointer and the padding after it. */
SB_HIDDEN void sb_canary_fill(const struct sb_meta *m);
SB_HIDDEN void sb_canary_check(const struct sb_meta *m, const char *fn);

/*
 * registry.c: live buffers by user pointer.  Lookups abort on a pointer
 * that is not a live buffer, naming what it is instead.  A pinned entry
 * keeps its mapping: sb_registry_take() waits until every pin is gone.
 */
SB_HIDDEN int sb_registry_add(struct sb_meta *m);
SB_HIDDEN void sb_registry_get(const void *user, struct sb_meta *out, const char *fn);
SB_HIDDEN void sb_registry_pin(const void *user, struct sb_meta *out, const char *fn);
SB_HIDDEN void sb_registry_unpin(const void *user);
SB_HIDDEN void sb_registry_take(const void *user, struct sb_meta *out, const char *fn);
/*
 * Whether p lies in a mapping of a buffer of this library (live, being
 * freed, or inherited across fork()): 1 or 0.  Never aborts, so that a
 * caller can hand a pointer that is not ours to its real owner.
 */
SB_HIDDEN int sb_registry_holds(const void *p);
SB_HIDDEN void sb_registry_fork_prepare(void);
SB_HIDDEN void sb_registry_fork_parent(void);
SB_HIDDEN void sb_registry_fork_child(void);

/*
 * entry.c: every public call but secbuf_lock_method_name() brackets its
 * work with sb_enter()/sb_leave(), so that a call from a signal handler
 * that interrupted one in the same thread aborts instead of deadlocking.
 */
SB_HIDDEN extern __thread const char *sb_running_call
	__attribute__((tls_model("initial-exec")));
SB_HIDDEN __attribute__((noreturn)) void sb_reentered(const char *fn);

static inline void sb_enter(const char *fn)
{
	if (sb_running_call)
		sb_reentered(fn);
	sb_running_call = fn;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void sb_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sb_running_call = NULL;
}

/*
 * secbuf.c: a guarded buffer of size bytes (0 allowed) whose end lies
 * flush against the trailing guard, rounded down to align (a power of
 * two, at most SB_CANARY_SIZE; 1 for exactly flush).  Flags as for
 * secbuf_alloc_flags() but SECBUF_PACKED; *method, unless NULL, gets the
 * lock method in effect.  Errors as secbuf_alloc_flags().  For drop-ins
 * that must reproduce another allocator's layout.
 */
SB_HIDDEN void *sb_alloc_guarded(size_t size, unsigned flags, size_t align, int *method);

/* misuse.c: the single abort path. */
SB_HIDDEN __attribute__((noreturn, format(printf, 1, 2)))
void sb_misuse(const char *fmt, ...);

#endif
