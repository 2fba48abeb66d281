/*
 * kfacts.h - the kernel's view of a process's memory, from /proc, and the
 * kernel facts user space needs about lock on fault.  One place for the
 * tests, the demo's audit and the benchmarks: a private helper library
 * (build/lib/libkfacts.a), never installed, never part of libsecbuf.
 *
 * Nothing here uses malloc or stdio, which would add heap and mappings
 * to what the tests count (mlock_drain() maps and unmaps a page, its job).
 */
#ifndef SECBUF_KFACTS_H
#define SECBUF_KFACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../os/abi.h" /* MAP_LOCKONFAULT, MLOCK_*, __NR_munlock2 */

/*
 * Whether the running kernel has the lock-on-fault series: a lock-on-fault
 * mapping was created (the same proof libsecbuf's probe makes; an error
 * code proves nothing either way).
 */
bool lockonfault_series(void);

/* pagemap (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PRESENT	(1ULL << 63)
#define PM_SWAPPED	(1ULL << 62)
#define PM_PFN_MASK	((1ULL << 55) - 1)	/* reads as 0 without CAP_SYS_ADMIN */

#define KPF_COMPOUND_TAIL 16
#define KPF_UNEVICTABLE	18
#define KPF_THP		22
#define KPF_ZERO_PAGE	  24 /* the shared zero page, or the huge zero page */
#define KPF_MLOCKED	33

/* pagemap entries of npages pages from the page-aligned addr; 0 or -1/errno. */
int pagemap_read(const void *addr, size_t npages, uint64_t *out);

/*
 * Per-state counts of npages pages from the page-aligned addr of process
 * pid (0: self).  Lock bits come from kpageflags, of the head page for
 * parts of a transparent huge page (the kernel keeps PG_mlocked there);
 * locked counts pages with either bit.  zero counts pages that map the
 * kernel's shared zero page (or the huge zero page): a read of an untouched
 * private page maps it, it holds nothing and is never locked, so it is
 * neither locked nor evictable.  Without kpageflags (not root) or a
 * PFN (no CAP_SYS_ADMIN), flags_read stays 0 and so do the bit counts.
 * Pages past the end of pagemap (above the user address space) count as
 * not present.  Returns 0, or -1 with errno.
 */
struct page_census {
	size_t present, swapped, unevictable, mlocked, locked, huge, zero;
	size_t flags_read;	/* present pages whose kpageflags were read */
};
int page_census_pid(int pid, uintptr_t addr, size_t npages, struct page_census *c);
/* The same from open pagemap and kpageflags files (kpageflags -1: none). */
int page_census_fds(int pagemap, int kpageflags, uintptr_t addr, size_t npages,
		    struct page_census *c);
/* Whether /proc/kpageflags can be read (root). */
bool kpageflags_readable(void);
/* The same for this process; kpageflags must be readable. */
int page_census(const void *addr, size_t npages, struct page_census *c);

/*
 * One mapping of /proc/PID/smaps.  vmflags is " xx yy ... " with a blank
 * on each side, so that vmflag_has() and strstr(v, " lo ") match whole
 * flags.
 */
struct smaps_vma {
	unsigned long start, end;
	char perms[5];		/* "rw-p" */
	char name[256];
	long rss_kb, locked_kb, swap_kb;
	char vmflags[160];
};
/*
 * Call fn for each mapping of process pid (0: self) until it returns
 * nonzero; returns that, 0 after the last mapping, or -1 with errno.
 */
int smaps_each(int pid, int (*fn)(const struct smaps_vma *v, void *arg), void *arg);
/* The same from an open smaps file, read from where it stands (left open). */
int smaps_each_fd(int fd, int (*fn)(const struct smaps_vma *v, void *arg), void *arg);
/* The mapping containing addr in process pid (0: self); ENOENT if none. */
int smaps_find(int pid, const void *addr, struct smaps_vma *v);
/* Whether VmFlags holds the two-letter mnemonic. */
bool vmflag_has(const struct smaps_vma *v, const char *flag);
/* The number of mappings of process pid (0: self), or -1 with errno. */
int smaps_count(int pid);

/*
 * secretmem.c: len bytes of a new memfd_secret(2) file, mapped shared (the
 * descriptor closed); MAP_FAILED with errno.  secretmem_works(): whether
 * such a mapping can be made and touched here.
 */
void *secretmem_map(size_t len);
bool secretmem_works(void);

/* A "Field: N kB" line of a /proc file (status, smaps_rollup), or -1. */
long proc_field_kb(const char *path, const char *field);
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
