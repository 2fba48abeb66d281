// SPDX-License-Identifier: MIT
/*
 * remap_file_pages() must keep the lock mode of the VMA it rearranges.
 * Since VM_LOCKONFAULT (4.4) it has rebuilt a locked VMA with MAP_LOCKED,
 * which turns one locked on fault into one locked and populated: "lf"
 * gone from smaps, every page faulted in.  The series' first patch on
 * 6.12 fixes that alone, with no new uAPI; kernel/fix-alone.sh boots a
 * kernel with only that patch, and stock, and runs this on both.
 *
 * Uses only mainline calls: mlock2(MLOCK_ONFAULT) on a shared memfd
 * mapping, then remap_file_pages() of the whole range.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "kfacts.h"
#include "tap.h"

#define NPAGES 8

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = NPAGES * page;
	unsigned char present[NPAGES];
	struct smaps_vma v = { 0 };
	int fd = memfd_create("remap-onfault", MFD_CLOEXEC), n = 0, i;
	char *p;

	if (fd < 0 || ftruncate(fd, len) < 0) {
		perror("memfd");
		return 1;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || syscall(SYS_mlock2, p, len, MLOCK_ONFAULT)) {
		perror("mmap/mlock2");
		return 1;
	}
	p[0] = 1; /* one page present, the rest not */
	i = remap_file_pages(p, len, 0, 0, 0);
	tap_check(i == 0, "remap_file_pages() of the whole range (%s)",
		  i ? strerror(errno) : "done");
	tap_check(smaps_find(getpid(), p, &v) == 0 && vmflag_has(&v, "lo") && vmflag_has(&v, "lf"),
		  "the VMA is still locked on fault (VmFlags%s)", v.vmflags);
	if (mincore(p, len, present) == 0)
		for (i = 0; i < NPAGES; i++)
			n += present[i] & 1;
	tap_check(n == 1, "nothing was faulted in: %d of %d pages present (1 touched)", n, NPAGES);
	return tap_done();
}
