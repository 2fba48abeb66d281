/*
 * process/: the life of threads and of the process around fork().  Per-
 * thread state with exit hooks, the atfork handlers, and walks of resident
 * pages with the thread's vector.  It knows no part above it by name: the
 * parts' hooks are handed to it (init.c), as the kernel's mm core takes
 * callbacks from its users.
 *
 * May use: core/, os/.
 */
#ifndef SECBUF_PROCESS_H
#define SECBUF_PROCESS_H

#include "core/core.h"

/* thread.c: per-thread state, made on first need, given back at thread exit. */
#define SB_WALK_VEC (16 * 1024) /* pages per mincore call: 64 MiB of 4 KiB pages, 1 GiB of 64 KiB */
struct sb_thread {
	unsigned char walk_vec[SB_WALK_VEC];
	int walk_ready; /* walk_vec is resident */
};
SB_HIDDEN struct sb_thread *sb_thread_get(void); /* NULL and errno on failure */
/*
 * Run fn in each thread that exits after sb_thread_get() made its state,
 * before that state is given back.  Called once per hook, from init.c.
 */
SB_HIDDEN int sb_thread_on_exit(void (*fn)(void));

/*
 * fork.c: every part's lock is taken before fork() and released on both
 * sides.  Hooks run in the order given before fork(), and in the reverse
 * order after it; a hook may be NULL.
 */
struct sb_fork_hooks {
	void (*prepare)(void);
	void (*parent)(void);
	void (*child)(void);
};
SB_HIDDEN int sb_fork_init(const struct sb_fork_hooks *hooks, size_t n); /* 0, or -1 errno */

/*
 * walk.c: walk the resident pages of a range (os/resident.c) with the
 * thread's vector for long ranges, so a walk faults nothing in.
 * sb_walk_prepare(), called when a large buffer is made, makes the vector
 * resident beforehand.  Pages never touched are not resident and hold
 * nothing: sb_wipe_resident() wipes the others.
 */
SB_HIDDEN int sb_walk(unsigned char *start, size_t len, sb_page_fn fn, size_t *count);
SB_HIDDEN void sb_walk_prepare(size_t len);
SB_HIDDEN int sb_wipe_resident(unsigned char *start, size_t len);

/*
 * purge.c: wiping every secret of the process, from anywhere, signal
 * handlers included.  A part that holds secrets registers (from init.c)
 * a purge that takes no lock and calls only async-signal-safe functions,
 * and if it has guard pages, a way to name the buffer an address is in.
 */
/* What a fault at an address hit, as far as the part that made it can tell. */
enum sb_fault_kind {
	SB_FAULT_OVERFLOW,  /* the guard page after a buffer */
	SB_FAULT_UNDERFLOW, /* the guard page before it */
	SB_FAULT_PROTECTED, /* its data, made read-only or no-access (secbuf_protect) */
	SB_FAULT_FREED,	    /* a buffer freed since: a use after free */
};
struct sb_fault {
	const void *user; /* the buffer */
	size_t size;
	enum sb_fault_kind kind;
};
struct sb_purge_hooks {
	void (*purge)(void);
	int (*name_fault)(const void *addr, struct sb_fault *f); /* 1 if found; may be NULL */
};
SB_HIDDEN int sb_purge_register(const struct sb_purge_hooks *h); /* 0, or -1 errno */
SB_HIDDEN void sb_purge(void);
/* Crash handlers for the fatal signals, and with at_exit an atexit purge too. */
SB_HIDDEN int sb_purge_on_crash(int at_exit);

#endif
