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

/* status.c: a field of /proc/self/status in base (VmLck 10, CapEff 16), or -1. */
SB_HIDDEN long long sb_status_field(const char *field, int base);

/*
 * refusal.c: the lock this thread was refused in the allocation under
 * way, one per tier (the locks, the secret tier), as the kernel call saw
 * it: the bytes it was asked for (a 248 kB slab for a 32-byte secret)
 * and its errno.  The calls that lock note it (lock.c, secret.c); init.c
 * clears it as each allocation starts.
 */
enum sb_call {
	SB_CALL_NONE, /* nothing was refused */
	SB_CALL_MLOCK2,
	SB_CALL_MLOCK,
	SB_CALL_MAP_LOCKONFAULT,
	SB_CALL_MEMFD_SECRET, /* the secret tier: the file itself */
	SB_CALL_SECRET_MMAP,  /* ... and its mapping, charged to RLIMIT_MEMLOCK */
};
struct sb_refusal {
	int call; /* SB_CALL_* */
	int err;
	size_t len; /* bytes the call was to lock or map */
};
SB_HIDDEN void sb_refusal_note(int call, int err, size_t len);
SB_HIDDEN void sb_refusal_clear(void);
/* The secret tier's (secret) or the locks' refusal into *f: 1, or 0 if none. */
SB_HIDDEN int sb_refusal_get(int secret, struct sb_refusal *f);
/*
 * The refusal that made an allocation with flags fail with err, into *f:
 * 1, or 0 (f->call SB_CALL_NONE) if it did not fail for a refused lock.
 */
SB_HIDDEN int sb_refusal_of(unsigned flags, int err, struct sb_refusal *f);

/*
 * explain.c: why the method is what it is, and why a lock was refused,
 * with the fix.  Text is appended at *at in buf (len bytes, always
 * terminated); the return is a SECBUF_REASON_*.
 */
struct sb_lockroom {
	long long limit_kb;  /* RLIMIT_MEMLOCK, -1 unlimited */
	long long locked_kb; /* VmLck, -1 unknown */
	int unlimited;	     /* CAP_IPC_LOCK: the limit does not apply */
	int seccomp;	     /* Seccomp: of /proc/self/status (2: a filter) */
};
SB_HIDDEN void sb_lockroom(struct sb_lockroom *r);
/*
 * The one diagnosis of a refusal, for secbuf_last_failure(),
 * secbuf_lock_reason() and the drop-ins' messages alike: the cause from
 * what the call answered and what it asked for (f), held against the
 * room of r, and its fix.  f->call SB_CALL_NONE with f->err 0: no call of
 * this thread was refused (memory another thread found unlockable), and
 * f->len is the most that was asked for.
 */
SB_HIDDEN int sb_diagnose(const struct sb_refusal *f, const struct sb_lockroom *r, char *buf,
			  size_t len, size_t *at);
SB_HIDDEN int sb_explain_method(char *buf, size_t len);
/*
 * What the environment holds, made fit for one line of a message:
 * printable ASCII, at most cap - 4 bytes and "..." if cut.  Returns dst.
 */
SB_HIDDEN char *sb_shown(char *dst, size_t cap, const char *value);

/*
 * locked.c: the bytes of this process's mappings with secbuf's signature
 * (dd and wf) and of memfd_secret memory, and of those the bytes locked,
 * from /proc/self/smaps.  0, or -1 with errno.
 */
SB_HIDDEN int sb_smaps_totals(size_t *mapped_bytes, size_t *locked_bytes);

/*
 * lock.c: map a range over start locked on fault (MAP_FIXED,
 * MAP_LOCKONFAULT: the maplockonfault method's lock), or lock a range
 * with a method after it is mapped (nothing for maplockonfault), and undo
 * a lock that failed part-way.  0, or -1 with errno; a refusal is noted
 * (refusal.c).
 */
SB_HIDDEN int sb_map_lockonfault(void *start, size_t len);
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
 * secret memory in this kernel, or not enabled at boot; EAGAIN: over
 * RLIMIT_MEMLOCK), the failure noted (refusal.c).
 */
SB_HIDDEN int sb_secret_map(void *start, size_t len);
/* A secret mapping of len bytes gone (unmapped): its room back; and a fork child's count. */
SB_HIDDEN void sb_secret_unmapped(size_t len);
SB_HIDDEN void sb_secret_fork_child(void);

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
