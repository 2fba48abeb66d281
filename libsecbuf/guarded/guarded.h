/*
 * guarded/: buffers of their own between guard pages.  Regions (the
 * [guard][data][guard] mappings, which the packed heap's slabs are made
 * of too), canaries, the registry of live buffers, and the calls on one
 * buffer behind the public API.
 *
 * May use: process/, core/, os/.
 */
#ifndef SECBUF_GUARDED_H
#define SECBUF_GUARDED_H

#include "process/process.h"

#define SB_CANARY_SIZE 16 /* also the pointer alignment */

/* region.c: [guard][data][guard] mappings, after sb_ready(). */
struct sb_region {
	unsigned char *base; /* leading guard page */
	size_t map_len;	     /* guards included */
	unsigned char *data;
	size_t data_len;
	int method;  /* SECBUF_LOCK_* actually in effect */
	int dropped; /* MADV_DONTFORK: a child does not get the data at all */
	int inherit; /* SECBUF_INHERIT: a forked child keeps the data */
};
/*
 * The lock method a buffer with these flags gets, or -1 with errno
 * (strict): SECBUF_LOCK_SECRETMEM for SECBUF_SECRET, whose fallback under
 * SECBUF_BEST_EFFORT is the method for the flags without it.
 */
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
/*
 * In a forked child (an atfork hook): a parent's region whose data the
 * child did not get (dropped: secret memory, which is a shared mapping
 * WIPEONFORK does not apply to, or any before Linux 4.14) keeps its range
 * reserved, PROT_NONE, so that no mapping of the child lands there and is
 * taken for the parent's buffer or slab.  Async-signal-safe.
 */
SB_HIDDEN void sb_region_hold_dropped(const struct sb_region *r);
/*
 * In a forked child (an atfork hook): an inherited region is locked again
 * under its method, one call, on fault where the method locks on fault.
 * Async-signal-safe; a refused lock leaves it unlocked, counted in
 * sb_region_relock_failures.
 */
SB_HIDDEN void sb_region_relock(const struct sb_region *r);
SB_HIDDEN extern unsigned long sb_region_relock_failures;
/* Unmap a mapped region, and give a secret one's room back (os/secret.c). */
SB_HIDDEN void sb_region_unmap(const struct sb_region *r, const char *fn);

/* A buffer's metadata, kept in the registry. */
struct sb_meta {
	unsigned char *user;
	size_t size;
	unsigned flags;
	struct sb_region region;
	uint64_t serial; /* allocation number: canaries differ per allocation */
	uint64_t check;	 /* keyed over all fields above */
};

/* canary.c: the bytes in front of the pointer and the padding after it. */
SB_HIDDEN void sb_canary_fill(const struct sb_meta *m);
SB_HIDDEN void sb_canary_check(const struct sb_meta *m, const char *fn);

/*
 * registry.c: live buffers by user pointer.  Lookups abort on a pointer
 * that is not a live buffer, naming what it is instead.  A pinned entry
 * keeps its mapping: sb_registry_take() waits until every pin is gone.
 * The table grows at half full and shrinks at an eighth.
 */
SB_HIDDEN int sb_registry_add(struct sb_meta *m);
SB_HIDDEN void sb_registry_get(const void *user, struct sb_meta *out, const char *fn);
SB_HIDDEN void sb_registry_pin(const void *user, struct sb_meta *out, const char *fn);
SB_HIDDEN void sb_registry_unpin(const void *user, const char *fn);
SB_HIDDEN void sb_registry_take(const void *user, struct sb_meta *out, const char *fn);
/*
 * Whether p lies in a mapping of a buffer of this library (live, being
 * freed, or inherited across fork()): 1 or 0.  Never aborts, so that a
 * caller can hand a pointer that is not ours to its real owner.
 */
SB_HIDDEN int sb_registry_holds(const void *p);
/*
 * Whether user is the start of a live buffer of this process: 1 (its
 * metadata in *out, unless out is NULL) or 0, in constant time (one probe
 * sequence).  Never aborts.
 */
SB_HIDDEN int sb_registry_live(const void *user, struct sb_meta *out);
/* Purge hooks (process/purge.c): async-signal-safe, lock-free. */
SB_HIDDEN void sb_registry_purge(void);
/* Every live buffer's canaries checked (SECBUF_CHECK_ON_EXIT); aborts, naming fn, on the first bad one. */
SB_HIDDEN void sb_registry_check_all(const char *fn);
SB_HIDDEN int sb_registry_name_fault(const void *addr, struct sb_fault *f);
SB_HIDDEN void sb_registry_fork_prepare(void);
SB_HIDDEN void sb_registry_fork_parent(void);
SB_HIDDEN void sb_registry_fork_child(void);

/*
 * buffer.c: the calls on one guarded buffer, behind the public API, which
 * has checked the arguments, holds sb_enter() and, before an allocation,
 * has made the library ready (init.c).
 *
 * sb_alloc_guarded(): size bytes (0 allowed) whose end lies flush against
 * the trailing guard, rounded down to align (a power of two, at most
 * SB_CANARY_SIZE; 1 for exactly flush), the leading guard at a multiple
 * of region_align (a power of two; 0 for a page).  Flags as for
 * secbuf_alloc_flags() but SECBUF_PACKED; *method, unless NULL, gets the
 * lock method in effect.  Errors as secbuf_alloc_flags().  Drop-ins that
 * must reproduce another allocator's layout call it directly.
 */
SB_HIDDEN void *sb_alloc_guarded(size_t size, unsigned flags, size_t align, size_t region_align,
				 int *method);
SB_HIDDEN void sb_guarded_free(void *ptr, const char *fn);
SB_HIDDEN int sb_guarded_protect(void *ptr, int prot, const char *fn);
SB_HIDDEN size_t sb_guarded_size(const void *ptr, const char *fn);
SB_HIDDEN int sb_guarded_stat(const void *ptr, struct secbuf_stat *st, const char *fn);

#endif
