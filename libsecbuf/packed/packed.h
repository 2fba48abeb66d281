/*
 * packed/: small secrets (SECBUF_PACKED) that share locked slab pages.
 * This header is what the rest of the library sees: the calls behind the
 * public API, the pointer-to-slab lookup that tells a packed secret from
 * a guarded buffer, and the hooks init.c wires in.  slab.h is the inside.
 *
 * May use: guarded/ (its regions only), process/, core/, os/.
 */
#ifndef SECBUF_PACKED_H
#define SECBUF_PACKED_H

#include "guarded/guarded.h"
#include "pool.h"
#include "slabmap.h"

/* packed.c: the calls, after sb_enter() and, to allocate, init.c's sb_ready(). */
SB_HIDDEN void *sb_packed_alloc(size_t size, unsigned flags);
SB_HIDDEN void sb_packed_free(struct sb_slab *s, void *ptr, const char *fn);
SB_HIDDEN size_t sb_packed_size(struct sb_slab *s, const void *ptr, const char *fn);
SB_HIDDEN int sb_packed_stat(struct sb_slab *s, const void *ptr, struct secbuf_stat *st,
			     const char *fn);
SB_HIDDEN void sb_packed_check_live(struct sb_slab *s, const void *ptr, const char *fn);
/* The lock method of a slab's pages: SECBUF_LOCK_*. */
SB_HIDDEN int sb_packed_method(const struct sb_slab *s);
/* Whether p lies in a live secret of slab s (start or inside): 1 or 0, never aborts. */
SB_HIDDEN int sb_packed_is_live(const struct sb_slab *s, const void *p);
/* A thread's bins: back to the pools at its exit; dropped in a forked child. */
SB_HIDDEN void sb_packed_thread_exit(void);
/* Purge hook (process/purge.c): async-signal-safe, waits for no lock. */
SB_HIDDEN void sb_packed_purge(void);
/* Every live packed secret's guard bytes checked; aborts, naming fn, on the first bad one. */
SB_HIDDEN void sb_packed_check_all(const char *fn);
SB_HIDDEN void sb_packed_fork_child(void);

#endif
