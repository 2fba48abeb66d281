// SPDX-License-Identifier: MIT
/* Readers for pagemap, kpageflags, smaps and meminfo. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "lib-proc.h"

static int pread_all(const char *path, void *buf, size_t len, off_t off)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + done);

		if (n <= 0) {
			int err = n < 0 ? errno : EIO;

			close(fd);
			errno = err;
			return -1;
		}
		done += n;
	}
	close(fd);
	return 0;
}

int pagemap_read(const void *addr, size_t npages, uint64_t *out)
{
	off_t off = (off_t)((uintptr_t)addr / (uintptr_t)sysconf(_SC_PAGESIZE)) * 8;

	return pread_all("/proc/self/pagemap", out, npages * 8, off);
}

static int pread8(int fd, uint64_t *v, uint64_t index)
{
	if (pread(fd, v, 8, (off_t)(index * 8)) == 8)
		return 0;
	if (errno == 0)
		errno = EIO;
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

	errno = 0;
	if (pread8(fd, &kf, p) < 0)
		return -1;
	*huge = kf & (1ULL << KPF_THP);
	if (kf & (1ULL << KPF_COMPOUND_TAIL)) {
		if (prev->valid && prev->pfn + 1 == pfn) {
			kf = prev->head_flags;
		} else {
			for (int i = 0; i < 512 && (kf & (1ULL << KPF_COMPOUND_TAIL)); i++)
				if (pread8(fd, &kf, --p) < 0)
					return -1;
		}
	}
	*prev = (struct kpf_prev){ pfn, kf, true };
	*flags = kf;
	return 0;
}

int page_census(const void *addr, size_t npages, struct page_census *c)
{
	uint64_t *pm = calloc(npages, sizeof(*pm));
	struct kpf_prev prev = { 0, 0, false };
	int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);

	memset(c, 0, sizeof(*c));
	if (!pm || fd < 0 || pagemap_read(addr, npages, pm) < 0)
		goto fail;
	for (size_t i = 0; i < npages; i++) {
		uint64_t kf;
		bool huge;

		if (pm[i] & PM_SWAPPED)
			c->swapped++;
		if (!(pm[i] & PM_PRESENT))
			continue;
		c->present++;
		if (lock_flags(fd, pm[i] & PM_PFN_MASK, &kf, &huge, &prev) < 0)
			goto fail;
		c->huge += huge;
		c->unevictable += (kf >> KPF_UNEVICTABLE) & 1;
		c->mlocked += (kf >> KPF_MLOCKED) & 1;
	}
	free(pm);
	close(fd);
	return 0;
fail:
	free(pm);
	if (fd >= 0)
		close(fd);
	return -1;
}

int smaps_find(int pid, const void *addr, struct smaps_vma *v)
{
	char path[64], line[512];
	bool in = false, found = false;
	uintptr_t a = (uintptr_t)addr;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/smaps");
	f = fopen(path, "re");
	if (!f)
		return -1;
	memset(v, 0, sizeof(*v));
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		/* A mapping header starts "lo-hi perms"; field lines start "Name:". */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (found)
				break;
			in = a >= lo && a < hi;
			found = in;
			continue;
		}
		if (!in)
			continue;
		sscanf(line, "Rss: %ld kB", &v->rss_kb);
		sscanf(line, "Locked: %ld kB", &v->locked_kb);
		sscanf(line, "Swap: %ld kB", &v->swap_kb);
		if (!strncmp(line, "VmFlags:", 8)) {
			size_t n = strcspn(line + 8, "\n");

			if (n > sizeof(v->vmflags) - 2)
				n = sizeof(v->vmflags) - 2;
			memcpy(v->vmflags, line + 8, n);
			strcpy(v->vmflags + n, " ");	/* so every flag is " xx " */
		}
	}
	fclose(f);
	if (!found) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

bool vmflag_has(const struct smaps_vma *v, const char *flag)
{
	char word[8];

	snprintf(word, sizeof(word), " %s ", flag);
	return strstr(v->vmflags, word) != NULL;
}

long meminfo_kb(const char *field)
{
	/* Fold the per-CPU vmstat deltas first, or Mlocked lags by up to a
	 * threshold per CPU (mm/vmstat.c vmstat_refresh). */
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "1", 1) < 0)
			perror("stat_refresh");
		close(fd);
	}

	size_t flen = strlen(field);
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, flen) && line[flen] == ':') {
			kb = strtol(line + flen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

int mlock_pin_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int mlock_drain(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	*(volatile char *)p = 1;
	return munmap(p, 4096);
}
