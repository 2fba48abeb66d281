// SPDX-License-Identifier: MIT
/*
 * memfd_secret(2) for the tests, demo and benchmarks: a mapping of it, and
 * whether this kernel gives one (by a call that uses it and succeeds).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "kfacts.h"

#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447 /* the same on x86_64 and arm64 */
#endif

void *secretmem_map(size_t len)
{
	int fd = syscall(SYS_memfd_secret, O_CLOEXEC), err;
	void *p = MAP_FAILED;

	if (fd < 0)
		return MAP_FAILED;
	if (ftruncate(fd, len) == 0)
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	errno = err;
	return p;
}

bool secretmem_works(void)
{
	size_t page = sysconf(_SC_PAGESIZE);
	unsigned char *p = secretmem_map(page);

	if (p == MAP_FAILED)
		return false;
	p[0] = 1; /* the fault is what removes the page from the direct map */
	munmap(p, page);
	return true;
}

static int count_vma(const struct smaps_vma *v, void *arg)
{
	(void)v;
	++*(int *)arg;
	return 0;
}

int smaps_count(int pid)
{
	int n = 0;

	return smaps_each(pid, count_vma, &n) < 0 ? -1 : n;
}
