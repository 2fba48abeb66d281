/*
 * proc.c - a process searched through /proc/PID/mem, present pages only.
 * A read of a page that is not present would fault it in: an untouched
 * page of a lock-on-fault buffer would get the shared zero page (the
 * audit would have changed what it audits), a swapped page would come
 * back from swap.  So each mapping's pages are first looked up: with the
 * PAGEMAP_SCAN ioctl (Linux 6.7), which returns ranges, skipping empty
 * page tables; else from /proc/PID/pagemap's entries (PM_PRESENT,
 * PM_SWAPPED).  Present pages are read; swapped ones are counted (--swap
 * reads the swap areas), the shared zero page is skipped (it holds
 * nothing).  A page that cannot be read (memfd_secret memory, EIO) is
 * named in the report, never taken for clean.
 *
 * Between the look-up and the read a page can still be swapped out, and
 * the read would then bring it back: the window is one batch of a
 * mapping; closing it would mean stopping the process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kfacts.h"

#include "../procfs.h"
#include "../scan.h"
#include "key.h"

/* The kernel's ABI (include/uapi/linux/fs.h, 6.7), absent from older headers. */
#ifndef PAGEMAP_SCAN
struct page_region {
	uint64_t start, end, categories;
};

struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define PAGEMAP_SCAN	_IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
#define PAGE_IS_PFNZERO (1 << 5)
#endif

struct pid_scan {
	struct key_target *t;
	struct key_reader *r;
	const struct key_patterns *ps;
	int mem, pagemap;
	int have_ioctl; /* 1: PAGEMAP_SCAN works, 0: not tried, -1: not on this kernel */
	size_t map;	/* the mapping being read */
	int exposed;	/* its class */
	unsigned long page;
};

static int collect(const struct smaps_vma *v, void *arg)
{
	struct key_target *t = arg;
	struct key_map *m, *grown;

	grown = realloc(t->maps, (t->nmaps + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	t->maps = grown;
	m = &t->maps[t->nmaps++];
	memset(m, 0, sizeof(*m));
	m->start = v->start;
	m->end = v->end;
	memcpy(m->perms, v->perms, sizeof(m->perms));
	snprintf(m->name, sizeof(m->name), "%s", v->name);
	snprintf(m->vmflags, sizeof(m->vmflags), "%s", v->vmflags + strspn(v->vmflags, " "));
	m->lo = vmflag_has(v, "lo");
	m->dd = vmflag_has(v, "dd");
	m->wf = vmflag_has(v, "wf");
	m->io = vmflag_has(v, "io") || vmflag_has(v, "pf");
	m->rss_kb = v->rss_kb;
	m->swap_kb = v->swap_kb;
	return 0;
}

/* Locked and left out of core dumps, or memfd_secret memory: what secbuf makes. */
static int protected(const struct key_map *m)
{
	return (m->lo && m->dd) || !strcmp(m->name, SECRETMEM_NAME);
}

static void hit(void *ctx, const struct key_hit *h)
{
	struct pid_scan *s = ctx;
	struct key_hit mine = *h;

	mine.map = s->map;
	mine.exposed = s->exposed;
	key_target_hit(s->t, s->ps, &mine);
}

/* Read and search [a, b), all present: 0, 1 when the process is gone, -1 ENOMEM. */
static int read_run(struct pid_scan *s, uint64_t a, uint64_t b)
{
	const struct key_map *m = &s->t->maps[s->map];
	int secret = !strcmp(m->name, SECRETMEM_NAME), rc = 0;
	uint64_t stop;
	char why[120];

	while (a < b && rc == 0) {
		rc = key_stream(s->r, s->ps, s->mem, a, b, &stop, hit, s);
		s->t->read += stop - a;
		if (rc == 0)
			break;
		if (rc > 0 || errno == ESRCH) {
			s->t->vanished = 1; /* its memory is gone: it exited mid-scan */
			rc = 1;
			break;
		}
		stop &= ~(uint64_t)(s->page - 1);
		if (secret)
			snprintf(why, sizeof(why),
				 "memfd_secret memory: the kernel refuses to read "
				 "it (%s), to root too",
				 strerror(errno));
		else
			snprintf(why, sizeof(why), "read: %s", strerror(errno));
		/* Secret memory refuses every page alike: the rest of the run with it. */
		a = secret ? b : stop + s->page;
		rc = key_target_unread(s->t, stop, a, s->map, why);
	}
	key_reader_wipe(s->r); /* no byte of the target stays in the buffer */
	return rc;
}

/* Present runs with PAGEMAP_SCAN: 0, 1 gone, -1 with errno (ENOTTY: no such ioctl). */
static int walk_ioctl(struct pid_scan *s, const struct key_map *m)
{
	struct page_region vec[256];
	struct pm_scan_arg arg;
	uint64_t from = m->start;
	long n;
	int rc;

	while (from < m->end) {
		memset(&arg, 0, sizeof(arg));
		arg.size = sizeof(arg);
		arg.start = from;
		arg.end = m->end;
		arg.vec = (uintptr_t)vec;
		arg.vec_len = sizeof(vec) / sizeof(vec[0]);
		arg.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED;
		arg.return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED | PAGE_IS_PFNZERO;
		n = ioctl(s->pagemap, PAGEMAP_SCAN, &arg);
		if (n < 0)
			return -1;
		s->have_ioctl = 1;
		for (long i = 0; i < n; i++) {
			unsigned long pages =
				(unsigned long)((vec[i].end - vec[i].start) / s->page);

			if (vec[i].categories & PAGE_IS_SWAPPED)
				s->t->swapped += pages;
			else if (vec[i].categories & PAGE_IS_PFNZERO)
				s->t->zero += pages;
			else if ((rc = read_run(s, vec[i].start, vec[i].end)) != 0)
				return rc;
		}
		if (arg.walk_end <= from)
			break; /* no progress: never spin */
		from = arg.walk_end;
	}
	return 0;
}

/* The same from pagemap's entries, for kernels before 6.7. */
static int walk_pagemap(struct pid_scan *s, const struct key_map *m)
{
	uint64_t e[4096], run = 0, addr = m->start;
	int rc;

	while (addr < m->end) {
		size_t want = (size_t)((m->end - addr) / s->page), got;
		ssize_t n;

		if (want > sizeof(e) / sizeof(e[0]))
			want = sizeof(e) / sizeof(e[0]);
		n = pread(s->pagemap, e, want * sizeof(e[0]),
			  (off_t)(addr / s->page * sizeof(e[0])));
		if (n < 0)
			return -1;
		got = (size_t)n / sizeof(e[0]);
		if (!got)
			break; /* past the end of pagemap: nothing present there */
		for (size_t i = 0; i < got; i++, addr += s->page) {
			if (e[i] & PM_PRESENT) {
				run = run ? run : addr;
				continue;
			}
			s->t->swapped += (e[i] & PM_SWAPPED) != 0;
			if (run && (rc = read_run(s, run, addr)) != 0)
				return rc;
			run = 0;
		}
	}
	return run ? read_run(s, run, addr) : 0;
}

/* The kernel's own pages, in every process: not the process's data. */
static int kernel_mapping(const struct key_map *m)
{
	return !strncmp(m->name, "[vvar", 5) || !strcmp(m->name, "[vsyscall]");
}

static pid_t stop_in(void)
{
	const char *v = getenv("SECBUF_AUDIT_TEST_STOP_IN");

	return v ? (pid_t)atoi(v) : 0;
}

static int scan_maps(struct pid_scan *s)
{
	struct key_target *t = s->t;
	int rc = 0, stopped = 0;
	char why[120];

	for (size_t i = 0; i < t->nmaps && rc == 0; i++) {
		const struct key_map *m = &t->maps[i];

		if (kernel_mapping(m)) {
			t->kernel++;
			continue;
		}
		if (m->io) {
			/* A read could reach a device's registers. */
			rc = key_target_unread(t, m->start, m->end, i,
					       "device memory (VmFlags io or pf): not read");
			continue;
		}
		if (!m->rss_kb && !m->swap_kb) {
			t->untouched++;
			t->noaccess += !strcmp(m->perms, "---p") || !strcmp(m->perms, "---s");
			continue;
		}
		s->map = i;
		s->exposed = !protected(m);
		rc = -1;
		if (s->have_ioctl >= 0) {
			rc = walk_ioctl(s, m);
			if (rc < 0 && !s->have_ioctl && (errno == ENOTTY || errno == EINVAL))
				s->have_ioctl = -1;
		}
		if (s->have_ioctl < 0)
			rc = walk_pagemap(s, m);
		if (rc < 0 && errno == ESRCH)
			rc = t->vanished = 1;
		if (rc < 0) {
			snprintf(why, sizeof(why), "pagemap: %s", strerror(errno));
			rc = key_target_unread(t, m->start, m->end, i, why);
		}
		/* The test of a process that exits mid-scan: one mapping read, then wait. */
		if (!stopped++ && t->pid == stop_in())
			raise(SIGSTOP);
	}
	return rc < 0 ? -1 : 0;
}

int key_scan_pid(struct key_target *t, struct key_reader *r, const struct key_patterns *ps)
{
	struct pid_scan s = {
		.t = t, .r = r, .ps = ps, .page = (unsigned long)sysconf(_SC_PAGESIZE)
	};
	char path[64];
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)t->pid);
	s.mem = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)t->pid);
	s.pagemap = s.mem < 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (s.mem < 0 || s.pagemap < 0 || smaps_each(t->pid, collect, t) < 0) {
		snprintf(t->error, sizeof(t->error), "%s",
			 errno == ENOENT || errno == ESRCH ?
				 "no such process" :
			 errno == EACCES || errno == EPERM ?
				 "permission denied: search your own processes, or run as root" :
				 strerror(errno));
		goto out;
	}
	proc_comm_of(t->pid, t->comm, sizeof(t->comm));
	rc = scan_maps(&s);
	if (rc < 0)
		snprintf(t->error, sizeof(t->error), "out of memory");
out:
	if (s.mem >= 0)
		close(s.mem);
	if (s.pagemap >= 0)
		close(s.pagemap);
	return rc;
}
