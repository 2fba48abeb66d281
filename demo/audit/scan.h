/*
 * scan.h - what secbuf-audit learns about one process's mappings from
 * /proc/PID/smaps, /proc/PID/pagemap and (as root) /proc/kpageflags.
 */
#ifndef SECBUF_AUDIT_SCAN_H
#define SECBUF_AUDIT_SCAN_H

#include <stddef.h>
#include <sys/types.h>

#define SECBUF_VMA_NAME "[anon:secbuf]"
/* Its data, named after the lock method: [anon:secbuf:mlock2]. */
#define SECBUF_VMA_PREFIX "[anon:secbuf:"

/*
 * The lock method libsecbuf chose for a buffer, as it names the data: the
 * library's word, which the audit prints beside the kernel's VmFlags.  The
 * kernel shows both lock-on-fault methods as "lo lf": only the name tells
 * MAP_LOCKONFAULT from mlock2(MLOCK_ONFAULT).  A set of these.
 */
enum audit_method {
	METHOD_MAPLOCKONFAULT = 1,
	METHOD_MLOCK2 = 2,
	METHOD_MLOCK = 4,
	METHOD_NONE = 8,
	METHOD_SECRETMEM = 16, /* memfd_secret memory: SECBUF_SECRET's tier, or anyone's */
	METHOD_OTHER = 32,     /* a name this audit does not know */
};

/*
 * Why a mapping was selected.  libsecbuf names its mappings [anon:secbuf]
 * where the kernel can (CONFIG_ANON_VMA_NAME), and always marks their data
 * MADV_DONTDUMP and MADV_WIPEONFORK: VmFlags "dd" and "wf", a pair few
 * other mappings carry.  Selecting on the pair rather than on "lo dd wf"
 * keeps a secbuf buffer that failed to lock in the audit, where it counts
 * as a leak instead of vanishing from it.
 */
enum audit_by {
	AUDIT_BY_NAME = 1,	 /* named [anon:secbuf] or [anon:secbuf:METHOD] */
	AUDIT_BY_VMFLAGS = 2,	 /* VmFlags dd and wf: secbuf's signature */
	AUDIT_BY_LOCKED = 4,	 /* VmFlags lo, with --all */
	AUDIT_BY_RANGE = 8,	 /* overlaps --range */
	AUDIT_BY_SECRETMEM = 16, /* memfd_secret memory, always */
	AUDIT_BY_DONTDUMP = 32,	 /* other anonymous memory, locked and DONTDUMP, with likely */
	AUDIT_BY_DROPIN = 64,	 /* VmFlags dd and nh where a drop-in (libsecbuf-*.so) is loaded */
};

/*
 * memfd_secret(2) memory as /proc names it.  The kernel itself locks it,
 * leaves it out of core dumps and removes it from its direct map: whoever
 * holds it, it is a secret.
 */
#define SECRETMEM_NAME "/secretmem (deleted)"

struct audit_map {
	unsigned long start, end; /* the part audited (clipped to --range) */
	char perms[5];
	char name[256];
	char vmflags[160];  /* the smaps VmFlags line as printed */
	int lo, lf, dd, wf; /* VM_LOCKED, VM_LOCKONFAULT, VM_DONTDUMP, VM_WIPEONFORK */
	unsigned by;	    /* enum audit_by: the first reason it was selected */
	unsigned method;    /* enum audit_method its name gives, or 0 */
	unsigned long pages;
	unsigned long resident;	   /* pagemap PM_PRESENT */
	unsigned long swapped;	   /* pagemap PM_SWAPPED */
	unsigned long locked;	   /* resident and mlocked (see audit_scan()) */
	unsigned long unevictable; /* KPF_UNEVICTABLE; only with kpageflags */
	unsigned long flags_read;  /* resident pages whose kpageflags were read */
	unsigned long zero;	   /* the shared zero page (kpageflags): holds nothing */
	unsigned long evictable; /* resident, not locked, not the zero page: reclaim may swap it */
};

/*
 * Whether the kernel keeps m's pages in RAM: VM_LOCKED, or memfd_secret
 * memory, whose pages are unevictable whatever VmFlags say (Debian's 6.1
 * and 6.12 do not show "lo" for it, 6.18 does).
 */
static inline int audit_held(const struct audit_map *m)
{
	return m->lo || m->method == METHOD_SECRETMEM;
}

struct audit_select {
	int all; /* every VM_LOCKED mapping too */
	/*
	 * Likely secrets that are not secbuf's too: memfd_secret memory, and
	 * anonymous mappings that are locked and left out of core dumps
	 * (VmFlags lo and dd, not a device's io or pf), as sodium_malloc()
	 * and OpenSSL's secure heap make them.
	 */
	int likely;
	/* Test hooks: SIGSTOP ourselves after the first selected mapping of */
	pid_t stop_in;	  /* this pid (its smaps half read), */
	pid_t stop_after; /* or after all of this pid's smaps and pagemap */
	int have_range;
	unsigned long range_start, range_end;
};

/* The names[i] of each bit i set in bits, joined by '+', in buf. */
const char *audit_bits_name(const char *const *names, size_t n, unsigned bits, char *buf,
			    size_t size);
/* The name of one audit_by bit, or of a set of them joined by '+' (buf). */
const char *audit_by_name(unsigned by, char *buf, size_t size);
/* The same for audit_method bits; "unnamed" for none. */
const char *audit_method_name(unsigned method, char *buf, size_t size);
/* Whether the kernel agrees with m's method: locked (lo) unless "none". */
int audit_method_agrees(const struct audit_map *m);

/*
 * Collect the selected mappings of pid: those named [anon:secbuf] or with
 * VmFlags dd and wf, plus every locked one with sel->all and the likely
 * secrets with sel->likely; or, with a range,
 * those overlapping it (clipped to it).  *kpageflags
 * says whether page flags could be read (root): then a page counts as locked
 * when KPF_MLOCKED or KPF_UNEVICTABLE is set (of the head page, for a
 * transparent huge page).  Checking MLOCKED matters on 6.1: mlock sets PG_mlocked at once but moves the page
 * to the unevictable LRU through a per-CPU batch, so bit 18 can lag.
 * Without kpageflags a resident page in a VM_LOCKED mapping counts as
 * locked.  Pages beyond the end of pagemap (the [vsyscall] page, above the
 * user address space) count as not present.  Returns 0, or -1 with errno.
 */
int audit_scan(pid_t pid, const struct audit_select *sel, struct audit_map **maps, size_t *n,
	       int *kpageflags);
/*
 * The same from open smaps, pagemap and kpageflags files (kpageflags -1:
 * none), as a fuzzing harness feeds them; the stop hooks never fire.
 */
int audit_scan_files(int smaps, int pagemap, int kpageflags, const struct audit_select *sel,
		     struct audit_map **maps, size_t *n);

#endif
