/*
 * os/: what the kernel can do for this process and how to ask it.  The
 * feature proofs, the lock method the process uses (SECBUF_LOCK), the lock
 * calls themselves, advice and names for mappings, and walks of resident
 * pages.
 *
 * May use: libc and the kernel, nothing else of libsecbuf.  It decides
 * capabilities and nothing else: no key, no fork handling, no buffers.
 */
#ifndef SECBUF_OS_H
#define SECBUF_OS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "secbuf.h"
#include "visibility.h"

/* A refused lock: the limit, the privilege or memory, not a bad argument. */
static inline int sb_lock_refused(int err)
{
	return err == EPERM || err == EAGAIN || err == ENOMEM;
}

/* A lock that cannot be had: refused, or no lock call here at all (ENOSYS). */
static inline int sb_lock_unavailable(int err)
{
	return sb_lock_refused(err) || err == ENOSYS;
}

/* prove.c: 0 when the feature worked on a page, else the errno that stopped it. */
SB_HIDDEN int sb_prove_map_lockonfault(size_t page);
SB_HIDDEN int sb_prove_mlock2_onfault(size_t page);

/*
 * probe.c: kernel capabilities and SECBUF_LOCK, probed at the first call
 * and again, by sb_caps_refresh(), while a proof is refused.
 */
struct sb_caps {
	int method; /* process method, or -1 (errno in err) */
	int err;
	int lazy_err;	     /* why a lazy buffer cannot be locked under method */
	int map_lockonfault; /* 0 if proven, else the errno that stopped the proof */
	int mlock2_onfault;  /* likewise */
	size_t page;
};
SB_HIDDEN const struct sb_caps *sb_caps(void);
SB_HIDDEN const struct sb_caps *sb_caps_refresh(void); /* once per allocation */
SB_HIDDEN int sb_caps_pending(void);		       /* whether the answer may still change */
SB_HIDDEN extern size_t sb_pagesize; /* caps->page, for hot paths once caps are made */

/*
 * lock.c: lock a range with a method, after it is mapped (MAP_LOCKONFAULT
 * ranges were locked by mmap itself), and undo a lock that failed part-way.
 * 0, or -1 with errno.
 */
SB_HIDDEN int sb_lock_range(void *start, size_t len, int method);
SB_HIDDEN int sb_unlock_range(void *start, size_t len);
/*
 * In a forked child, which the kernel gave the range unlocked: lock it
 * again under method, on fault where the method locks on fault (one call,
 * async-signal-safe).  0, or -1 with errno.
 */
SB_HIDDEN int sb_relock_range(void *start, size_t len, int method);

/*
 * secret.c: map len bytes of a new memfd_secret file over start (MAP_FIXED,
 * MAP_SHARED): the secret-memory tier.  0, or -1 with errno (ENOSYS: no
 * secret memory in this kernel, or not enabled at boot).
 */
SB_HIDDEN int sb_secret_map(void *start, size_t len);

/* vma.c: advice and names for a mapping.  0 or -1 with errno. */
SB_HIDDEN int sb_name_range(void *start, size_t len, const char *name);
/*
 * Out of core dumps, no huge pages, and zeroed in forked children unless
 * inherit.  Returns 1 where the kernel drops the range from children
 * instead of zeroing it.
 */
SB_HIDDEN int sb_advise_secret(void *start, size_t len, int inherit);
/* Undo the fork advice: children keep the range (dropped: as sb_advise_secret() said). */
SB_HIDDEN int sb_advise_keep(void *start, size_t len, int dropped);

/*
 * resident.c: call fn for each resident page of a page-aligned range
 * (mincore), faulting nothing in; async-signal-safe.  vec holds cap bytes of mincore vector
 * and must be resident; NULL uses SB_WALK_STACK bytes on the stack.
 */
#define SB_WALK_STACK 256
typedef void (*sb_page_fn)(void *page, size_t len, void *arg);
SB_HIDDEN int sb_resident_walk(unsigned char *start, size_t len, unsigned char *vec, size_t cap,
			       sb_page_fn fn, void *arg, size_t *count);

#endif
