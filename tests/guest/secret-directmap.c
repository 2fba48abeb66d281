// SPDX-License-Identifier: MIT
/*
 * memfd_secret splits the kernel's direct map, and the split outlives
 * the secret.  Each page of a memfd_secret mapping leaves the direct map
 * at first touch; where the direct map uses huge pages (x86-64), the one
 * around it is split into 4 KiB pages, and freeing the secret does not
 * join them again (Linux 6.1 and 6.12).  /proc/meminfo's DirectMap4k,
 * DirectMap2M and DirectMap1G say how much of the direct map each page
 * size covers; this reads them before and after touching SIZE of secret
 * memory, and after freeing it.  The control: as many pages locked on
 * fault and touched leave the direct map as it was.  Debian's 6.1 and
 * 6.12 charge each secret page to the user's RLIMIT_MEMLOCK at fault
 * (SIGBUS beyond it, see secret-limit.c): the limit is raised for the run.
 *
 * usage: secret-directmap [-m MIB]   (default 16)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "kfacts.h"
#include "tap.h"

struct directmap {
	long k4, m2, g1; /* kB of the direct map mapped by each page size */
};

static bool read_directmap(struct directmap *d)
{
	d->k4 = proc_field_kb("/proc/meminfo", "DirectMap4k");
	d->m2 = proc_field_kb("/proc/meminfo", "DirectMap2M");
	d->g1 = proc_field_kb("/proc/meminfo", "DirectMap1G");
	if (d->g1 < 0)
		d->g1 = 0; /* no line without gbpages */
	return d->k4 >= 0 && d->m2 >= 0;
}

static bool same(const struct directmap *a, const struct directmap *b)
{
	return a->k4 == b->k4 && a->m2 == b->m2 && a->g1 == b->g1;
}

static void touch(char *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t off = 0; off < len; off += page)
		p[off] = 1;
}

int main(int argc, char **argv)
{
	struct directmap before, locked, touched, freed;
	size_t mib = 16, len;
	char *p;
	int opt;

	while ((opt = getopt(argc, argv, "m:")) != -1) {
		if (opt != 'm' || (mib = strtoul(optarg, NULL, 10)) == 0)
			tap_bail("usage: secret-directmap [-m MIB]");
	}
	len = mib << 20;
	if (setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ RLIM_INFINITY, RLIM_INFINITY })) {
		tap_skip("RLIMIT_MEMLOCK cannot be raised here, and secret pages are charged to it",
			 "memfd_secret splits the direct map");
		return tap_done();
	}
	tap_subject("secret-directmap", "secretmem");
	if (!read_directmap(&before)) {
		tap_skip("no DirectMap4k/2M lines in /proc/meminfo (not x86)",
			 "memfd_secret splits the direct map");
		return tap_done();
	}
	if (!secretmem_works()) {
		tap_skip("no memfd_secret here", "memfd_secret splits the direct map");
		return tap_done();
	}

	/* The control first: lock-on-fault memory stays in the direct map. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || syscall(SYS_mlock2, p, len, MLOCK_ONFAULT))
		tap_bail("%zu MiB locked on fault: %s", mib, strerror(errno));
	read_directmap(&before);
	touch(p, len);
	read_directmap(&locked);
	munmap(p, len);
	tap_check(same(&before, &locked),
		  "%zu MiB locked on fault and touched: the direct map unchanged "
		  "(4k %ld -> %ld kB)",
		  mib, before.k4, locked.k4);

	p = secretmem_map(len);
	if (p == MAP_FAILED)
		tap_bail("%zu MiB of memfd_secret: %s", mib, strerror(errno));
	read_directmap(&before);
	touch(p, len);
	read_directmap(&touched);
	munmap(p, len);
	read_directmap(&freed);
	tap_report("memfd_secret, %zu MiB touched: DirectMap4k %+ld kB, 2M %+ld kB, 1G %+ld kB "
		   "(%ld MiB of huge direct map split); after the free 4k is %+ld kB from before",
		   mib, touched.k4 - before.k4, touched.m2 - before.m2, touched.g1 - before.g1,
		   (touched.k4 - before.k4) >> 10, freed.k4 - before.k4);
	tap_check(touched.k4 > before.k4,
		  "%zu MiB of memfd_secret touched: the direct map split (DirectMap4k %+ld kB)",
		  mib, touched.k4 - before.k4);
	tap_check(freed.k4 == touched.k4,
		  "after munmap the split stays: DirectMap4k %ld kB, as while mapped", freed.k4);
	return tap_done();
}
