/* host.c - every process of /proc through the one-process scan, counted. */
#define _GNU_SOURCE
#include "host.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kfacts.h"
#include "procfs.h"

static enum host_outcome outcome_of(int err)
{
	if (err == ENOENT || err == ESRCH)
		return HOST_VANISHED;
	if (err == EACCES || err == EPERM)
		return HOST_DENIED;
	return HOST_UNREADABLE;
}

static enum host_kind kind_of(unsigned by)
{
	if (by & AUDIT_BY_SECRETMEM)
		return KIND_SECRETMEM;
	if (by & AUDIT_BY_DONTDUMP)
		return KIND_DONTDUMP;
	return KIND_SECBUF;
}

static unsigned lock_of(const struct audit_map *m, int lf_shown)
{
	if (!audit_held(m))
		return LOCK_NONE;
	if (m->lf)
		return LOCK_ONFAULT;
	return lf_shown ? LOCK_EAGER : LOCK_LOCKED;
}

/* Add mapping m to h. */
static void count_map(struct holding *h, const struct audit_map *m, unsigned long page,
		      int lf_shown)
{
	unsigned long long kept = (unsigned long long)(m->resident + m->swapped) * page;
	const struct {
		int in;
		unsigned long long bytes;
	} st[HOST_STATES] = {
		[STATE_LOCKED] = { audit_held(m), (unsigned long long)m->locked * page },
		[STATE_UNLOCKED] = { !audit_held(m), (unsigned long long)m->evictable * page },
		[STATE_SWAPPED] = { m->swapped > 0, (unsigned long long)m->swapped * page },
		[STATE_DUMPABLE] = { !m->dd, m->dd ? 0 : kept },
		[STATE_INHERITABLE] = { !m->wf, m->wf ? 0 : kept },
	};

	h->mappings++;
	h->size += m->end - m->start;
	h->lock |= lock_of(m, lf_shown);
	h->method |= m->method;
	for (int s = 0; s < HOST_STATES; s++) {
		h->state_mappings[s] += st[s].in;
		h->state_bytes[s] += st[s].bytes;
	}
}

/* Room for the holdings of one more process (HOST_KINDS of them at most). */
static int reserve(struct host_scan *hs)
{
	if (hs->cap - hs->n < HOST_KINDS) {
		size_t ncap = hs->cap ? hs->cap * 2 : 64;
		struct holding *p = realloc(hs->holdings, ncap * sizeof(*p));

		if (!p)
			return -1;
		hs->holdings = p;
		hs->cap = ncap;
	}
	return 0;
}

/*
 * One process: its name and start time, its mappings, and its start time
 * again.  A process that exited or whose pid was reused in between is
 * counted as vanished and its mappings are dropped: what was read may be
 * part of one process, or of two.
 */
static int scan_process(pid_t pid, const struct audit_select *sel, struct host_scan *hs,
			unsigned long page)
{
	struct holding by_kind[HOST_KINDS];
	struct proc_id before, after;
	struct audit_map *maps;
	size_t n;
	int kpf;

	if (proc_id_of(pid, &before) < 0) {
		hs->processes[outcome_of(errno)]++;
		return 0;
	}
	if (before.state == 'Z' || before.state == 'X') { /* exited, not yet reaped */
		hs->processes[HOST_VANISHED]++;
		return 0;
	}
	if (audit_scan(pid, sel, &maps, &n, &kpf) < 0) {
		if (errno == ENOMEM)
			return -1;
		hs->processes[outcome_of(errno)]++;
		return 0;
	}
	if (proc_id_of(pid, &after) < 0 || after.starttime != before.starttime ||
	    after.state == 'Z' || after.state == 'X') {
		free(maps);
		hs->processes[HOST_VANISHED]++;
		return 0;
	}
	hs->processes[HOST_SCANNED]++;
	memset(by_kind, 0, sizeof(by_kind));
	for (size_t i = 0; i < n; i++) {
		count_map(&by_kind[kind_of(maps[i].by)], &maps[i], page, hs->lf_shown);
		/* Readable is not enough: without CAP_SYS_ADMIN pagemap has no PFN. */
		if (!kpf || maps[i].flags_read < maps[i].resident)
			hs->kpageflags = 0;
	}
	free(maps);
	if (reserve(hs) < 0)
		return -1;
	for (int k = 0; k < HOST_KINDS; k++) {
		struct holding *h = &by_kind[k];

		if (!h->mappings)
			continue;
		h->pid = pid;
		h->kind = k;
		memcpy(h->comm, after.comm, sizeof(h->comm));
		hs->holdings[hs->n++] = *h;
	}
	return 0;
}

/*
 * Whether this kernel shows VmFlags lf (VM_LOCKONFAULT): the series adds
 * it, and so do some newer kernels without the rest of the series.  Asked
 * of a page of our own, locked on fault for the moment it takes; without
 * a lock (no mlock2, no budget), the answer is no, and a locked mapping
 * without lf says "locked" rather than guess "mlock".
 */
static int kernel_shows_lf(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct smaps_vma v;
	int shown = 0;
	void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 0;
	/* The raw call: sanitizers make the libc wrappers of mlock no-ops. */
	if (syscall(SYS_mlock2, p, page, MLOCK_ONFAULT) == 0 && smaps_find(0, p, &v) == 0)
		shown = vmflag_has(&v, "lf");
	munmap(p, page);
	return shown;
}

static pid_t pid_of(const char *name)
{
	char *end;
	long pid;

	if (!isdigit((unsigned char)name[0]))
		return 0;
	pid = strtol(name, &end, 10);
	return *end || pid <= 0 || pid > 0x7fffffff ? 0 : (pid_t)pid;
}

int host_scan(const struct audit_select *sel, struct host_scan *hs)
{
	unsigned long page = sysconf(_SC_PAGESIZE);
	struct timespec t0, t1;
	struct dirent *de;
	int ret = 0, err = 0;
	DIR *proc;

	memset(hs, 0, sizeof(*hs));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	hs->kpageflags = kpageflags_readable();
	hs->lf_shown = kernel_shows_lf();
	proc = opendir("/proc");
	if (!proc)
		return -1;
	for (;;) {
		pid_t pid;

		errno = 0;
		de = readdir(proc);
		if (!de) {
			err = errno;
			ret = err ? -1 : 0;
			break;
		}
		pid = pid_of(de->d_name);
		if (pid && scan_process(pid, sel, hs, page) < 0) {
			err = errno;
			ret = -1;
			break;
		}
	}
	closedir(proc);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	hs->seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	errno = err;
	return ret;
}

void host_scan_free(struct host_scan *hs)
{
	free(hs->holdings);
	hs->holdings = NULL;
	hs->n = hs->cap = 0;
}

int holding_leaks(const struct holding *h)
{
	return h->state_bytes[STATE_UNLOCKED] || h->state_bytes[STATE_SWAPPED];
}

const char *host_outcome_name(enum host_outcome o)
{
	static const char *const names[] = { "scanned", "vanished", "denied", "unreadable" };

	return names[o];
}

const char *host_kind_name(enum host_kind k)
{
	static const char *const names[] = { "secbuf", "secretmem", "dontdump" };

	return names[k];
}

const char *host_state_name(enum host_state s)
{
	static const char *const names[] = { "locked", "unlocked", "swapped", "dumpable",
					     "inheritable" };

	return names[s];
}

const char *host_lock_name(unsigned lock, char *buf, size_t size)
{
	static const char *const names[] = { "onfault", "mlock", "locked", "none" };

	return audit_bits_name(names, sizeof(names) / sizeof(names[0]), lock, buf, size);
}
