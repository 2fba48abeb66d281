// SPDX-License-Identifier: MIT
/* pagemap and kpageflags: the state of each page of a range. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "kfacts.h"

#define BATCH 512	/* pagemap entries per read (4 KiB of stack) */

/* n 8-byte words at word index from fd; the number read (0 at the end), or -1. */
static ssize_t pread_words(int fd, uint64_t *out, size_t n, uint64_t index)
{
	size_t done = 0;

	while (done < n * 8) {
		ssize_t got = pread(fd, (char *)out + done, n * 8 - done, (off_t)(index * 8 + done));

		if (got < 0)
			return -1;
		if (got == 0)
			break;
		done += got;
	}
	return done / 8;
}

static int open_proc(int pid, const char *file)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	else
		snprintf(path, sizeof(path), "/proc/self/%s", file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int pagemap_read(const void *addr, size_t npages, uint64_t *out)
{
	int fd = open_proc(0, "pagemap"), err;
	ssize_t got;

	if (fd < 0)
		return -1;
	got = pread_words(fd, out, npages, (uintptr_t)addr / (uintptr_t)sysconf(_SC_PAGESIZE));
	err = got < 0 ? errno : EIO;
	close(fd);
	if (got == (ssize_t)npages)
		return 0;
	errno = err;
	return -1;
}

/*
 * PG_mlocked and PG_unevictable live on the head page of a compound page;
 * kpageflags copies them from the page itself, so use the head's word.
 * Consecutive virtual pages of a THP are consecutive frames: the previous
 * page's head is remembered in *prev so that each THP is walked once.
 */
struct kpf_prev {
	uint64_t pfn, head_flags;
	bool valid;
};

static int lock_flags(int fd, uint64_t pfn, uint64_t *flags, bool *huge, struct kpf_prev *prev)
{
	uint64_t kf, p = pfn;

	if (pread_words(fd, &kf, 1, p) != 1)
		return -1;
	*huge = kf & (1ULL << KPF_THP);
	if (kf & (1ULL << KPF_COMPOUND_TAIL)) {
		if (prev->valid && prev->pfn + 1 == pfn) {
			kf = prev->head_flags;
		} else {
			for (int i = 0; i < 512 && (kf & (1ULL << KPF_COMPOUND_TAIL)); i++)
				if (pread_words(fd, &kf, 1, --p) != 1)
					return -1;
		}
	}
	*prev = (struct kpf_prev){ pfn, kf, true };
	*flags = kf;
	return 0;
}

static int count(const uint64_t *pm, size_t n, int kpf, struct page_census *c,
		 struct kpf_prev *prev)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t kf, pfn = pm[i] & PM_PFN_MASK;
		bool huge;

		if (pm[i] & PM_SWAPPED)
			c->swapped++;
		if (!(pm[i] & PM_PRESENT))
			continue;
		c->present++;
		if (kpf < 0 || !pfn)
			continue;
		if (lock_flags(kpf, pfn, &kf, &huge, prev) < 0)
			return -1;
		c->flags_read++;
		c->huge += huge;
		/* Never locked and holds nothing: counted apart, and not as locked. */
		if (kf & (1ULL << KPF_ZERO_PAGE)) {
			c->zero++;
			continue;
		}
		c->unevictable += (kf >> KPF_UNEVICTABLE) & 1;
		c->mlocked += (kf >> KPF_MLOCKED) & 1;
		c->locked += !!(kf & (1ULL << KPF_UNEVICTABLE | 1ULL << KPF_MLOCKED));
	}
	return 0;
}

int page_census_fds(int pagemap, int kpageflags, uintptr_t addr, size_t npages,
		    struct page_census *c)
{
	uint64_t first = addr / (uintptr_t)sysconf(_SC_PAGESIZE), pm[BATCH];
	struct kpf_prev prev = { 0, 0, false };

	memset(c, 0, sizeof(*c));
	for (size_t done = 0; done < npages;) {
		size_t want = npages - done < BATCH ? npages - done : BATCH;
		ssize_t got = pread_words(pagemap, pm, want, first + done);

		if (got < 0 || count(pm, got, kpageflags, c, &prev) < 0)
			return -1;
		if (got == 0)	/* beyond the user address space: nothing there */
			break;
		done += got;
	}
	return 0;
}

int page_census_pid(int pid, uintptr_t addr, size_t npages, struct page_census *c)
{
	int fd = open_proc(pid, "pagemap"), rc = -1, err;
	/* Root only; without it the caller decides from VmFlags. */
	int kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);

	memset(c, 0, sizeof(*c));
	if (fd >= 0)
		rc = page_census_fds(fd, kpf, addr, npages, c);
	err = errno;
	if (fd >= 0)
		close(fd);
	if (kpf >= 0)
		close(kpf);
	errno = err;
	return rc;
}

bool kpageflags_readable(void)
{
	int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int page_census(const void *addr, size_t npages, struct page_census *c)
{
	if (page_census_pid(0, (uintptr_t)addr, npages, c) < 0)
		return -1;
	if (c->flags_read < c->present) {
		errno = EACCES;	/* the caller wants lock bits it cannot have */
		return -1;
	}
	return 0;
}
