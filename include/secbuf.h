/*
 * secbuf.h - secure buffers: guard pages, canaries, lock-on-fault,
 * no core dump, no fork leak, wipe on free.
 *
 * A buffer is laid out as   [guard][data pages ...][guard]   with the end of
 * the caller's bytes flush against the trailing guard page: a one-byte
 * overflow faults.  The pointer is 16-byte aligned, so up to 15 padding bytes
 * may follow the data; they are checked like a canary on free.  A canary in
 * front of the pointer catches underflows within the page.  Corruption,
 * double frees and foreign pointers print a message and abort().
 *
 * Small secrets may instead be packed (SECBUF_PACKED): they share locked
 * slab pages, separated by 16 keyed guard bytes that free checks, so an
 * overflow is caught at free rather than by the MMU at once.  See
 * secbuf_alloc(3) for when to choose which.
 *
 * Canaries and metadata check values come from SipHash-2-4 under a
 * per-process key kept in its own locked page, out of core dumps; a forked
 * child draws its own.  Buffers inherited across fork() read as zeros in
 * the child, and using one there aborts.
 *
 * Secrets may also leave the kernel's direct map (SECBUF_SECRET): their
 * pages come from memfd_secret(2), which root cannot read through
 * /proc/PID/mem or process_vm_readv(2), nor the kernel through its own
 * mapping of RAM.  A forked child does not get them at all (the range is
 * unmapped there).  See secbuf_alloc(3) for the costs.
 *
 * Thread-safe; not async-signal-safe (like malloc), except
 * secbuf_lock_method_name().  A call from a signal handler that interrupted
 * another call in the same thread aborts with a message.  Successful calls
 * leave errno alone.
 *
 * Env SECBUF_LOCK=maplockonfault|mlock2|mlock|none forces a lock method
 * (ignored in set-uid programs).  A forced method the kernel lacks is an error.
 * Env SECBUF_DEBUG=1 prints the first failed allocation's explanation
 * (secbuf_last_failure()) to stderr, once per process.
 */
#ifndef SECBUF_H
#define SECBUF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flags for secbuf_alloc_flags(). */
#define SECBUF_POPULATE		0x1u	/* fault in and lock every page now */
#define SECBUF_BEST_EFFORT	0x2u	/* succeed unlocked if locking is refused */
#define SECBUF_PACKED		0x4u	/* may share locked pages with other packed secrets */
#define SECBUF_SECRET		0x8u	/* memfd_secret: out of the kernel's direct map */
#define SECBUF_INHERIT		0x10u	/* forked children keep it, locked again */

/* The largest size SECBUF_PACKED packs; larger ones get a guarded buffer. */
#define SECBUF_PACKED_MAX	256

/* Access modes for secbuf_protect(). */
#define SECBUF_NOACCESS		0
#define SECBUF_READONLY		1
#define SECBUF_READWRITE	2

/* Lock methods, best first. */
#define SECBUF_LOCK_MAP_LOCKONFAULT	0	/* mmap(MAP_LOCKONFAULT), patched kernel */
#define SECBUF_LOCK_MLOCK2_ONFAULT	1	/* mmap + mlock2(MLOCK_ONFAULT), Linux >= 4.4 */
#define SECBUF_LOCK_MLOCK		2	/* mmap + mlock (eager: SECBUF_POPULATE only) */
#define SECBUF_LOCK_NONE		3	/* not locked */
#define SECBUF_LOCK_SECRETMEM		4	/* memfd_secret(2): SECBUF_SECRET buffers only */

struct secbuf_stat {
	size_t   size;            /* bytes asked for */
	size_t   mapped_bytes;    /* data pages mapped (excluding guards) */
	size_t   resident_pages;  /* data pages resident now (mincore) */
	size_t   locked_pages;    /* resident_pages when the region is locked, else 0 */
	int      lock_method;     /* SECBUF_LOCK_* actually used for this buffer */
	unsigned flags;           /* flags passed to secbuf_alloc_flags */
};

/* The whole process's secrets (secbuf_totals()). */
struct secbuf_totals {
	size_t secrets;	     /* live buffers and packed secrets, the drop-in's included */
	size_t bytes;	     /* bytes asked for, summed over them */
	size_t mapped_bytes; /* data pages mapped for them: buffers, slabs, the key page */
	size_t locked_pages; /* of those, pages locked now (the kernel's Locked: count) */
};

/*
 * Allocate size bytes, locked on first touch; NULL and errno if it can't be
 * locked.  Errors: EINVAL (size 0, bad SECBUF_LOCK), ENOMEM/EAGAIN (too
 * large, RLIMIT_MEMLOCK, vm.max_map_count), EPERM (may not lock memory:
 * RLIMIT_MEMLOCK 0, a seccomp filter), EOPNOTSUPP (no lazy lock), ENOSYS
 * (forced method missing), or that of mmap/mlock2/madvise/prctl.  Nothing
 * stays mapped.
 */
void *secbuf_alloc(size_t size);

/*
 * secbuf_alloc() with flags SECBUF_POPULATE, SECBUF_BEST_EFFORT and/or
 * SECBUF_PACKED.  Errors as secbuf_alloc(), plus EINVAL for unknown flags.
 * With SECBUF_BEST_EFFORT a refused lock yields an unlocked buffer instead.
 * With SECBUF_PACKED and size <= SECBUF_PACKED_MAX, a packed secret: in a
 * shared locked slab, no guard page of its own, not protectable.
 * With SECBUF_SECRET, memfd_secret pages (packed or not): ENOSYS when the
 * kernel has no secret memory or it is not enabled at boot
 * (secretmem.enable=1 before Linux 6.5), EAGAIN over RLIMIT_MEMLOCK on
 * kernels that charge secret memory at mmap, never a silent fallback.
 * Debian's 6.1 and 6.12 charge it per user at each page's first touch,
 * even for root, and a touch past RLIMIT_MEMLOCK is SIGBUS (see
 * secbuf_alloc_flags(3)).  SECBUF_SECRET | SECBUF_BEST_EFFORT falls
 * back to the process's lock method; secbuf_stat() tells which one it got.
 * With SECBUF_INHERIT, a child made by fork() keeps the buffer (instead of
 * zeros) and may use and free it; the library's atfork child handler locks
 * it again, on fault, under the parent's method (the kernel drops locks at
 * fork).  Not with SECBUF_SECRET (EINVAL).  Once a process has made an
 * inherited buffer, its children keep the library's key too.  A child
 * made by raw clone() without the atfork handlers keeps the memory but
 * unlocked.
 */
void *secbuf_alloc_flags(size_t size, unsigned flags);

/*
 * Check the canary and padding, wipe the resident data pages, unmap; NULL is
 * a no-op, errno is kept.  A packed secret: check its guard bytes and
 * padding, zero its slot.  Corruption, a double free, a foreign pointer
 * (even one inside a buffer) or a buffer inherited across fork() aborts.
 * Waits for a secbuf_protect()/secbuf_stat() of the buffer in another
 * thread.  See secbuf_free(3) for stale pointers.
 */
void secbuf_free(void *ptr);

/*
 * Set the access of the buffer's data pages to SECBUF_NOACCESS, _READONLY or
 * _READWRITE.  Returns 0, or -1 with errno EINVAL (bad mode, NULL, or a
 * packed secret, whose pages are shared) or the error of mprotect(2).  A
 * foreign pointer aborts.
 */
int secbuf_protect(void *ptr, int access);

/* The size asked for; 0 for NULL.  A foreign pointer aborts. */
size_t secbuf_size(const void *ptr);

/*
 * Fill *st.  Returns 0, or -1 with errno EINVAL (NULL argument) or the error
 * of mincore(2).  A foreign pointer aborts.  For a packed secret the pages
 * are those of its slot, which it shares with its slab's other secrets;
 * secbuf_totals() gives the whole process's.
 */
int secbuf_stat(const void *ptr, struct secbuf_stat *st);

/*
 * Fill *t with the whole process's live secrets, their bytes, the data
 * pages mapped for them and how many of those are locked, as the kernel
 * counts them (/proc/self/smaps: the mappings with secbuf's VmFlags dd
 * and wf, and memfd_secret memory).  Returns 0, or -1 with errno EINVAL
 * (NULL) or that of reading /proc/self/smaps (then *t is untouched).
 * A forked child starts at 0 secrets: those it inherits are not its own.
 */
int secbuf_totals(struct secbuf_totals *t);

/*
 * The process's lock method: SECBUF_LOCK_* as probed (or as forced by
 * SECBUF_LOCK).  A method counts only when a call using it succeeded; a
 * probe refused because the lock budget was spent at that moment is made
 * again at the next allocation.
 * Returns -1 with errno EINVAL (SECBUF_LOCK names no method), ENOSYS (the
 * forced method is not supported by this kernel) or EPERM/EAGAIN/ENOMEM
 * (its probe was refused).
 */
int secbuf_lock_method(void);

/* Why the lock method is what it is, or why a lock was refused. */
#define SECBUF_REASON_PROVEN	0 /* its call worked here: the best this kernel has */
#define SECBUF_REASON_FORCED	1 /* SECBUF_LOCK chose it (or named no method) */
#define SECBUF_REASON_NO_KERNEL 2 /* no lock-on-fault call worked: the kernel has none */
#define SECBUF_REASON_LIMIT	3 /* RLIMIT_MEMLOCK is 0, or too little is left of it */
#define SECBUF_REASON_SANDBOX	4 /* refused with room in the limit: seccomp, an LSM */
#define SECBUF_REASON_MEMORY	5 /* not the limit: out of memory, vm.max_map_count */

/*
 * Why secbuf_lock_method() answers what it does: a SECBUF_REASON_* and, in
 * buf (len bytes, always terminated when len > 0; NULL/0 for the code
 * alone), one line that names the method, the cause and the fix ("mlock
 * (...): lock-on-fault was refused: RLIMIT_MEMLOCK is 0 ...; raise it:
 * ulimit -l, or LimitMEMLOCK= in a systemd unit").  Never fails.
 */
int secbuf_lock_reason(char *buf, size_t len);

/*
 * Explain this thread's last failed secbuf_alloc()/secbuf_alloc_flags():
 * one line in buf with the call, its size, the errno name and the cause
 * with its fix: for a lock refused, RLIMIT_MEMLOCK, what is locked
 * already and what was needed ("secbuf_alloc(16777216): ENOMEM: ...
 * RLIMIT_MEMLOCK is 8192 kB, 0 kB are locked already, 16388 kB more were
 * needed (mlock2: ENOMEM); raise it: ulimit -l, or LimitMEMLOCK= ...").
 * The need is what the refused call asked for: a packed secret's whole
 * slab, a buffer's pages with its canary's.  Returns that
 * failure's errno, or 0 (and "no failure") if this thread had none.
 * The limit and what was locked are those of the moment it failed.
 */
int secbuf_last_failure(char *buf, size_t len);

/*
 * "maplockonfault", "mlock2", "mlock", "none", "secretmem" (a tier of
 * SECBUF_SECRET buffers, never a process's method); NULL for an unknown one.
 * Async-signal-safe.
 */
const char *secbuf_lock_method_name(int method);

/*
 * Zero the bytes of every live buffer and packed secret of this process
 * (their pages stay mapped; guarded buffers are left readable and
 * writable), so that nothing of a secret is left in the pages the process
 * gives back to the kernel.  Buffers may still be freed afterwards.
 * Async-signal-safe, and never waits for a lock: it wipes what it can
 * reach without one.
 */
void secbuf_purge(void);

#define SECBUF_PURGE_AT_EXIT 0x1u /* secbuf_purge_on_crash(): also at exit() */

/*
 * On SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT: purge, name the buffer
 * whose guard page was hit (if one was), then restore the signal's earlier
 * disposition and let it take its course, so that core dumps and exit
 * statuses stay as they were.  With SECBUF_PURGE_AT_EXIT, purge at exit()
 * too.  Returns 0, or -1 with errno EINVAL (unknown flag) or that of
 * sigaction(2).  The libsodium drop-in calls it when SECBUF_PURGE_ON_CRASH
 * is set (see libsecbuf-sodium(7)).
 */
int secbuf_purge_on_crash(unsigned flags);

#ifdef __cplusplus
}
#endif

#endif /* SECBUF_H */
