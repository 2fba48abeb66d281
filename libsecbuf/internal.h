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
SB_HIDDEN int sb_region_map(struct sb_region *r, size_t data_len, unsigned flags);
SB_HIDDEN int sb_region_protect(const struct sb_region *r, int prot);
SB_HIDDEN void sb_region_unmap(const struct sb_region *r, const char *fn);
/* Building blocks, also for the key page: 0 or -1 with errno. */
SB_HIDDEN int sb_name_range(void *start, size_t len, const char *name);
/* Returns 1 where the kernel drops the range from children instead of zeroing it. */
SB_HIDDEN int sb_advise_secret(void *start, size_t len);

/* resident.c: walk the resident pages of a range (mincore). */
typedef void (*sb_page_fn)(void *page, size_t len);
SB_HIDDEN int sb_resident_walk(unsigned char *start, size_t len, sb_page_fn fn,
			       size_t *count);

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

/* misuse.c: the single abort path. */
SB_HIDDEN __attribute__((noreturn, format(printf, 1, 2)))
void sb_misuse(const char *fmt, ...);

#endif
