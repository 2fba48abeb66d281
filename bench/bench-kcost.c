// SPDX-License-Identifier: MIT
/*
 * What the lock-on-fault patches cost work that never asks for them:
 * anonymous page-fault throughput, an mmap/munmap loop and an
 * mlock/munlock loop.  The same binary runs on the stock and the patched
 * kernel; bench/report sets the medians side by side with their spread.
 * One warm-up round is discarded, as in the 2015 cover letter.
 *
 * Two more loops show what MAP_LOCKONFAULT saves over the way stock
 * kernels lock a new buffer on fault: map, lock on fault, write one page,
 * unmap, once with mmap + mlock2(MLOCK_ONFAULT) (both kernels) and once
 * with mmap(MAP_LOCKONFAULT) (patched kernel only).
 */
#define _GNU_SOURCE
#include "common.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long page_size;

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap %zu bytes: %s", len, strerror(errno));
	return p;
}

/* Write-faults per second on a fresh anonymous mapping of len bytes. */
static double faults_per_sec(size_t len)
{
	char *p = map_anon(len);
	double t0, t1;
	size_t off;

	/* 4 KiB faults, not one huge page per 512 of them. */
	madvise(p, len, MADV_NOHUGEPAGE);
	t0 = now_ms();
	for (off = 0; off < len; off += page_size)
		p[off] = 1;
	t1 = now_ms();
	munmap(p, len);
	return (len / page_size) / ((t1 - t0) / 1e3);
}

/* mmap + munmap pairs of 16 pages per second. */
static double mmap_per_sec(long iters)
{
	double t0 = now_ms();
	long i;

	for (i = 0; i < iters; i++)
		munmap(map_anon(16 * page_size), 16 * page_size);
	return iters / ((now_ms() - t0) / 1e3);
}

/* mlock + munlock pairs of 16 resident pages per second. */
static double mlock_per_sec(long iters)
{
	size_t len = 16 * page_size;
	char *p = map_anon(len);
	double t0;
	long i;

	memset(p, 1, len);
	t0 = now_ms();
	for (i = 0; i < iters; i++)
		if (mlock(p, len) || munlock(p, len))
			die("mlock/munlock: %s (RLIMIT_MEMLOCK?)", strerror(errno));
	t0 = iters / ((now_ms() - t0) / 1e3);
	munmap(p, len);
	return t0;
}

/* Map 16 pages locked on fault, write one, unmap: cycles per second. */
static double lockonfault_per_sec(long iters, int map_flag)
{
	size_t len = 16 * page_size;
	double t0 = now_ms();
	long i;

	for (i = 0; i < iters; i++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS |
			       (map_flag ? MAP_LOCKONFAULT : 0), -1, 0);

		if (p == MAP_FAILED)
			die("mmap: %s", strerror(errno));
		if (!map_flag && syscall(SYS_mlock2, p, len, MLOCK_ONFAULT))
			die("mlock2: %s (RLIMIT_MEMLOCK?)", strerror(errno));
		p[0] = 1;
		munmap(p, len);
	}
	return iters / ((now_ms() - t0) / 1e3);
}

int main(int argc, char **argv)
{
	size_t fault_len = 64 * MiB;
	long iters = 20000;
	int runs = 7, opt, r, k;
	const char *names[5] = { "anon-fault", "mmap-munmap", "mlock-munlock",
				 "map-mlock2-onfault", "map-lockonfault" };
	const char *units[5] = { "faults/s", "pairs/s", "pairs/s",
				 "cycles/s", "cycles/s" };
	int patched;

	while ((opt = getopt(argc, argv, "s:n:r:")) != -1) {
		switch (opt) {
		case 's': fault_len = parse_size(optarg); break;
		case 'n': iters = atol(optarg); break;
		case 'r': runs = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: bench-kcost [-s FAULT_SIZE] [-n ITERS] [-r RUNS]\n"
				"  defaults: -s 64M -n 20000 -r 7\n");
			return 2;
		}
	}
	if (runs < 1 || runs > 64 || iters < 1)
		die("runs must be 1..64 and iterations positive");
	page_size = sysconf(_SC_PAGESIZE);
	patched = lockonfault_series();
	record("machine %s", machine_desc());
	for (k = 0; k < 5; k++) {
		double v[65];
		char samples[65 * 16];
		struct stats st;
		int len = 0;

		if (k == 4 && !patched) {
			tap_skip("no MAP_LOCKONFAULT in this kernel", "kcost %s", names[k]);
			continue;
		}
		for (r = 0; r <= runs; r++) {
			v[r] = k == 0 ? faults_per_sec(fault_len) :
			       k == 1 ? mmap_per_sec(iters) :
			       k == 2 ? mlock_per_sec(iters) :
			       lockonfault_per_sec(iters, k == 4);
		}
		/* Raw samples too, so runs of several boots can be pooled. */
		for (r = 1; r <= runs; r++)
			len += snprintf(samples + len, sizeof(samples) - len,
					"%s%.0f", r > 1 ? "," : "", v[r]);
		st = stats_of(v + 1, runs);	/* v[0] was the warm-up */
		record("kcost test=%s unit=%s runs=%d med=%.0f min=%.0f max=%.0f samples=%s",
		       names[k], units[k], runs, st.med, st.min, st.max, samples);
		tap_check(true, "kcost %s %.0f %s (min %.0f, max %.0f)", names[k], st.med, units[k],
			  st.min, st.max);
	}
	return tap_done();
}
