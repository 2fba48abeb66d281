/* Read the kernel's view of a process's memory from outside its own
 * bookkeeping: /proc/self/pagemap, /proc/kpageflags, smaps and meminfo. */
#ifndef PROOF_LIB_PROC_H
#define PROOF_LIB_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAPPED	(1ULL << 62)
#define PM_PFN_MASK	((1ULL << 55) - 1)	/* reads as 0 without CAP_SYS_ADMIN */

#define KPF_COMPOUND_TAIL 16
#define KPF_UNEVICTABLE	18
#define KPF_THP		22
#define KPF_MLOCKED	33

/* pagemap entries of npages pages from the page-aligned addr; 0 or -1/errno. */
int pagemap_read(const void *addr, size_t npages, uint64_t *out);
/* Per-state counts over a range, with lock bits read from kpageflags (of
 * the head page for parts of a transparent huge page). */
struct page_census {
	size_t present, swapped, unevictable, mlocked, huge;
};
int page_census(const void *addr, size_t npages, struct page_census *c);

/* The smaps entry of the mapping containing addr in process pid (0: self). */
struct smaps_vma {
	long rss_kb, locked_kb, swap_kb;
	char vmflags[128];	/* " lo lf dd wf ..." with a leading blank */
};
int smaps_find(int pid, const void *addr, struct smaps_vma *v);
/* Whether VmFlags holds the two-letter mnemonic. */
bool vmflag_has(const struct smaps_vma *v, const char *flag);

/* A /proc/meminfo field in kB, exact (vmstat folded first), or -1. */
long meminfo_kb(const char *field);

/*
 * 6.1 sets PG_mlocked at once but moves pages to the unevictable LRU from a
 * per-CPU batch (mlock_pvec).  mlock_pin_cpu() keeps the caller on one CPU
 * so that all its faults use that CPU's batch; mlock_drain() then empties it
 * by munmap() of a scratch page: unmap_region() calls lru_add_drain(), which
 * runs mlock_page_drain_local() on this CPU.
 */
int mlock_pin_cpu(void);
int mlock_drain(void);
#define MLOCK_DRAIN_HOW "pinned to one CPU, munmap() of a scratch page -> lru_add_drain() -> mlock_page_drain_local()"

#endif
