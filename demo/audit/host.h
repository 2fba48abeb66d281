/*
 * host.h - the audit of every process of the host: which processes hold
 * secret memory, of which kind, in which state, and the processes that
 * could not be read, counted rather than failing the scan.
 */
#ifndef SECBUF_AUDIT_HOST_H
#define SECBUF_AUDIT_HOST_H

#include <stddef.h>
#include <sys/types.h>

#include "procfs.h"
#include "scan.h"

/* Why a process was not scanned, or that it was. */
enum host_outcome {
	HOST_SCANNED,
	HOST_VANISHED,	 /* it exited, or its pid was reused, before or while it was read */
	HOST_DENIED,	 /* EACCES or EPERM: another user's process, without CAP_SYS_PTRACE */
	HOST_UNREADABLE, /* any other error reading its smaps or pagemap */
	HOST_OUTCOMES
};

/* What found the memory. */
enum host_kind {
	KIND_SECBUF,	/* named [anon:secbuf] or VmFlags dd+wf */
	KIND_SECRETMEM, /* memfd_secret memory */
	KIND_DONTDUMP,	/* other anonymous memory, locked and DONTDUMP */
	HOST_KINDS
};

/*
 * The states, each a flag of a mapping and a count of its pages; they
 * overlap, but for locked and unlocked, which split its resident pages.
 */
enum host_state {
	STATE_LOCKED,	   /* VmFlags lo; bytes: resident pages locked */
	STATE_UNLOCKED,	   /* no lo; bytes: resident pages not locked (evictable) */
	STATE_SWAPPED,	   /* a page swapped out; bytes: the pages swapped out */
	STATE_DUMPABLE,	   /* no dd; bytes: its pages in memory or swap, in a core dump */
	STATE_INHERITABLE, /* no wf; bytes: its pages in memory or swap, copied by fork() */
	HOST_STATES
};

/* How a process's mappings of one kind are locked: a set of these. */
enum host_lock {
	LOCK_ONFAULT = 1, /* lo lf: lock on fault (mmap MAP_LOCKONFAULT or mlock2) */
	LOCK_EAGER = 2,	  /* lo, no lf, on a kernel that shows lf: mlock */
	LOCK_LOCKED = 4,  /* lo, on a kernel that does not show lf: either of them */
	LOCK_NONE = 8,	  /* no lo */
};

#define HOST_COMM_LEN PROC_COMM_LEN

/* One process's memory of one kind. */
struct holding {
	pid_t pid;
	char comm[HOST_COMM_LEN]; /* as the kernel keeps it: any bytes but NUL */
	enum host_kind kind;
	unsigned lock;	 /* enum host_lock bits: the kernel's view */
	unsigned method; /* enum audit_method bits: libsecbuf's names */
	unsigned long mappings, size;
	unsigned long state_mappings[HOST_STATES];
	unsigned long long state_bytes[HOST_STATES];
};

struct host_scan {
	struct holding *holdings; /* by pid, then kind */
	size_t n, cap;
	unsigned long processes[HOST_OUTCOMES];
	int kpageflags; /* every resident page's lock state came from /proc/kpageflags */
	int lf_shown;	/* this kernel shows VmFlags lf */
	double seconds; /* how long the scan took */
};

/*
 * Scan every process in /proc with the selection sel (likely secrets
 * too, if sel->likely).  A process that vanishes, or cannot be read, is
 * counted in hs->processes and skipped.  Returns 0, or -1 with errno when
 * /proc itself cannot be listed or memory runs out; hs holds what was
 * found either way (free it with host_scan_free()).
 */
int host_scan(const struct audit_select *sel, struct host_scan *hs);
void host_scan_free(struct host_scan *hs);

/* Whether h leaks: a page unlocked in memory or swapped out. */
int holding_leaks(const struct holding *h);

const char *host_outcome_name(enum host_outcome o);
const char *host_kind_name(enum host_kind k);
const char *host_state_name(enum host_state s);
/* The lock bits in words, '+' between them ("onfault+mlock"), in buf. */
const char *host_lock_name(unsigned lock, char *buf, size_t size);

#endif
