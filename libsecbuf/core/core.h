/*
 * core/: what every buffer relies on.  The abort path, the guard against
 * re-entry from signal handlers, wiping, SipHash, the per-process key and
 * the blocks the library keeps its bookkeeping in.
 *
 * May use: os/.  Each part that holds a lock across fork() exports its
 * three fork hooks; init.c hands them to process/fork.c.
 */
#ifndef SECBUF_CORE_H
#define SECBUF_CORE_H

#include "os/os.h"

/* misuse.c: the single abort path. */
SB_HIDDEN __attribute__((noreturn, format(printf, 1, 2))) void sb_misuse(const char *fmt, ...);

/*
 * entry.c: every public call but secbuf_lock_method_name() brackets its
 * work with sb_enter()/sb_leave(), so that a call from a signal handler
 * that interrupted one in the same thread aborts instead of deadlocking.
 */
SB_HIDDEN extern __thread const char *sb_running_call __attribute__((tls_model("initial-exec")));
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
 * report.c: a failed allocation of size bytes (0: refused before its size
 * mattered, at the key's page) with flags, handed with its errno to the
 * one listener, if one was set (the drop-ins').  errno is kept.
 */
typedef void (*sb_failure_fn)(size_t size, unsigned flags, int err);
SB_HIDDEN void sb_report_to(sb_failure_fn fn);
SB_HIDDEN void sb_report_failure(size_t size, unsigned flags);

/* count.c: live secrets and their bytes, process-wide; zero in a forked child. */
SB_HIDDEN void sb_count_add(size_t bytes);
SB_HIDDEN void sb_count_sub(size_t bytes);
SB_HIDDEN void sb_count_get(size_t *secrets, size_t *bytes);
SB_HIDDEN void sb_count_fork_prepare(void);
SB_HIDDEN void sb_count_fork_parent(void);
SB_HIDDEN void sb_count_fork_child(void);

/* wipe.c: a zeroing the compiler cannot drop; a page is left alone if it reads as zeros. */
SB_HIDDEN void sb_wipe(void *p, size_t len);
SB_HIDDEN void sb_wipe_page(void *page, size_t len, void *arg); /* an sb_page_fn */
SB_HIDDEN int sb_is_zero(const void *p, size_t len);

/* siphash.c: SipHash-2-4, by bytes or by little-endian words. */
struct sb_siphash {
	uint64_t v[4];
	uint64_t len;
};
/*
 * blockmap.c: the object an address falls in, for objects at aligned
 * blocks of 2^SB_BLOCK_SHIFT bytes (guard pages included), lock-free.
 */
#define SB_BLOCK_SHIFT	      18
#define SB_BLOCKMAP_BITS      48
#define SB_BLOCKMAP_LEAF_BITS 15
#define SB_BLOCKMAP_LEAF      ((size_t)1 << SB_BLOCKMAP_LEAF_BITS)
#define SB_BLOCKMAP_TOP	      ((size_t)1 << (SB_BLOCKMAP_BITS - SB_BLOCK_SHIFT - SB_BLOCKMAP_LEAF_BITS))
struct sb_blockmap {
	void **leaf[SB_BLOCKMAP_TOP];
};

static inline void *sb_blockmap_get(struct sb_blockmap *m, const void *p)
{
	uintptr_t a = (uintptr_t)p;
	void **leaf;

	if (a >> SB_BLOCKMAP_BITS)
		return NULL;
	leaf = __atomic_load_n(&m->leaf[a >> (SB_BLOCK_SHIFT + SB_BLOCKMAP_LEAF_BITS)],
			       __ATOMIC_ACQUIRE);
	if (!leaf)
		return NULL;
	return __atomic_load_n(&leaf[(a >> SB_BLOCK_SHIFT) & (SB_BLOCKMAP_LEAF - 1)],
			       __ATOMIC_ACQUIRE);
}
/* Map block (an aligned address) to v: 0, or -1 with errno (ENOMEM above 2^48). */
SB_HIDDEN int sb_blockmap_set(struct sb_blockmap *m, uintptr_t block, void *v);
SB_HIDDEN void sb_blockmap_clear(struct sb_blockmap *m, uintptr_t block);

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
/* Domain separation: one PRF, several uses. */
enum sb_prf_use {
	SB_PRF_CANARY = 1,
	SB_PRF_CHECK,
	SB_PRF_SLOT,
	SB_PRF_GUARD, /* a slab's guard-byte keys */
	SB_PRF_MIX,   /* sb_key_mix()'s keys */
};
SB_HIDDEN int sb_key_ready(void);
/* Lock the key's page if it is not yet: 0, or -1 with errno. */
SB_HIDDEN int sb_key_lock(void);
SB_HIDDEN uint64_t sb_key_epoch(void);
/*
 * From now on forked children keep the key (SECBUF_INHERIT buffers are
 * checked with it there): 0, or -1 with errno.  sb_key_kept(): whether
 * they do; in a forked child, whether the parent's buffers are its own.
 */
SB_HIDDEN int sb_key_inherit(void);
SB_HIDDEN int sb_key_kept(void);
SB_HIDDEN uint64_t sb_prf(enum sb_prf_use use, const uint64_t *w, size_t n);
/*
 * Three words to 64 bits under keys of this process, drawn with the key:
 * a few multiplies, for checks on every free where SipHash would cost too
 * much.  Not a PRF: it keeps a forger who cannot read the key page from
 * matching a check, nothing more (secbuf(7): an attacker who can read it).
 */
SB_HIDDEN extern const uint64_t *sb_mix_keys;

static inline uint64_t sb_key_mix(uint64_t a, uint64_t b, uint64_t c)
{
	const uint64_t *k = __atomic_load_n(&sb_mix_keys, __ATOMIC_RELAXED);
	uint64_t x = (a ^ k[0]) * k[1];

	x ^= x >> 31;
	x = (x ^ b ^ k[2]) * k[3];
	x ^= x >> 29;
	x = (x ^ c) * k[1];
	return x ^ x >> 32;
}
SB_HIDDEN void sb_key_fork_prepare(void);
SB_HIDDEN void sb_key_fork_parent(void);
SB_HIDDEN void sb_key_fork_child(void);

/*
 * metamem.c: fixed-size blocks for the library's bookkeeping, outside the
 * malloc heap and core dumps; recycled per kind, never unmapped.
 */
#define SB_META_BLOCK (48 * 1024)
enum sb_meta_kind {
	SB_META_THREAD, /* process/thread.c */
	SB_META_BINS,	/* packed/packed.c: a thread's free slots */
	SB_META_SLAB,	/* packed/slab.c */
	SB_META_KINDS
};
SB_HIDDEN void *sb_meta_get(enum sb_meta_kind kind); /* NULL, errno ENOMEM */
SB_HIDDEN void sb_meta_put(enum sb_meta_kind kind, void *block);
SB_HIDDEN void sb_meta_fork_prepare(void);
SB_HIDDEN void sb_meta_fork_parent(void);
SB_HIDDEN void sb_meta_fork_child(void);

#endif
