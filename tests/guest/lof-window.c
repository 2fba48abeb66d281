// SPDX-License-Identifier: MIT
/*
 * The window of two calls: can a page written between mmap() and
 * mlock2(MLOCK_ONFAULT) reach swap, where one mmap(MAP_LOCKONFAULT)
 * leaves no moment unlocked?  Two calls are what OpenSSL's secure heap
 * and libsecbuf on a stock kernel do.
 *
 * Three threads share a range of PAGES pages.  Each round, thread A maps
 * it again over itself (mmap MAP_FIXED, the reuse of a range it held
 * before) and wakes thread B, which writes a marker into every page;
 * then A locks it (mlock2 MLOCK_ONFAULT), or, with one call, has mapped
 * it locked already (MAP_LOCKONFAULT).  Thread C calls
 * madvise(MADV_PAGEOUT) on the range in a loop.  Once the lock holds, A
 * reads pagemap: a page whose entry is a swap entry was reclaimed
 * unlocked (mincore() tells whether the swap cache still holds it too).
 * After each way the swap device itself is read (O_DIRECT, past the page
 * cache) for that way's marker, which proves the secret was written out.
 * madvise's own lru_add_drain() empties only its CPU's
 * batch of new pages, so B and C share CPU 0 and A has CPU 1.
 *
 * Each way runs twice: with nothing added between B's write and the
 * lock (the rate is a measurement, reported, not asserted), and with
 * the window held open until C has finished two passes after the write.
 * The held-open two calls must show pages in swap, or the harness cannot
 * see reclaim; one call must show none, held open or not.
 *
 * usage: lof-window [-t SECONDS] [-p PAGES] [-u]   (seconds per way; default 3, 4)
 *   -u: no CPU pinning, the scheduler places the threads
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "kfacts.h"
#include "tap.h"

#define MAX_PAGES  64
#define MARKER_LEN 32
#define SCAN_CHUNK (1 << 20)

struct way {
	const char *name;
	bool one_call; /* mmap(MAP_LOCKONFAULT) instead of mmap() + mlock2() */
	bool held;     /* the window held open for two pageout passes */
};

struct result {
	unsigned long rounds, hit_rounds, hit_pages, out_of_ram;
	long on_device; /* copies of the way's marker on the swap device; -1 unread */
};

static char *base;
static size_t npages, len;
static unsigned int round_no, written; /* futex words: A's round, B's last write */
static unsigned long passes;	       /* C's finished madvise calls */
static bool stop;
static char marker[MARKER_LEN]; /* this way's, written by B at each page's start */
static char swap_dev[256];

static long futex(unsigned int *word, int op, unsigned int val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

static bool unpinned;

static void pin(int cpu)
{
	cpu_set_t set;

	if (unpinned)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		tap_bail("sched_setaffinity(CPU %d): %s", cpu, strerror(errno));
}

/* B: wait for a new round, write the marker into every page, say so. */
static void *writer(void *arg)
{
	unsigned int seen = 0;

	(void)arg;
	pin(0);
	for (;;) {
		unsigned int r = __atomic_load_n(&round_no, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
			return NULL;
		if (r == seen) {
			futex(&round_no, FUTEX_WAIT_PRIVATE, r);
			continue;
		}
		for (size_t i = 0; i < npages; i++)
			memcpy(base + i * (len / npages), marker, MARKER_LEN);
		seen = r;
		__atomic_store_n(&written, r, __ATOMIC_RELEASE);
	}
}

/* C: page the range out, as fast as the kernel lets it. */
static void *pager(void *arg)
{
	(void)arg;
	pin(0);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		/* EINVAL while the range is locked: MADV_PAGEOUT skips VM_LOCKED */
		madvise(base, len, MADV_PAGEOUT);
		__atomic_add_fetch(&passes, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin_until(unsigned long *word, unsigned long want)
{
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < want)
		;
}

/* A: one round of the way, then count the pages that went to swap. */
static int one_round(const struct way *w, struct result *res)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | (w->one_call ? MAP_LOCKONFAULT : 0);
	uint64_t pm[MAX_PAGES];
	unsigned char in_ram[MAX_PAGES];
	unsigned int r;
	size_t hits = 0;

	if (mmap(base, len, PROT_READ | PROT_WRITE, flags, -1, 0) != base)
		return -1;
	r = __atomic_add_fetch(&round_no, 1, __ATOMIC_RELEASE);
	futex(&round_no, FUTEX_WAKE_PRIVATE, 1);
	while (__atomic_load_n(&written, __ATOMIC_ACQUIRE) != r)
		;
	if (w->held)
		spin_until(&passes, __atomic_load_n(&passes, __ATOMIC_ACQUIRE) + 2);
	if (!w->one_call && syscall(SYS_mlock2, base, len, MLOCK_ONFAULT))
		return -1;
	if (pagemap_read(base, npages, pm) || mincore(base, len, in_ram))
		return -1;
	for (size_t i = 0; i < npages; i++) {
		hits += !!(pm[i] & PM_SWAPPED);
		res->out_of_ram += (pm[i] & PM_SWAPPED) && !(in_ram[i] & 1);
	}
	res->rounds++;
	res->hit_rounds += hits > 0;
	res->hit_pages += hits;
	return 0;
}

/* The first swap device of /proc/swaps, or false. */
static bool find_swap_device(void)
{
	FILE *f = fopen("/proc/swaps", "r");
	bool found;

	if (!f)
		return false;
	found = fscanf(f, "%*[^\n]\n%255s", swap_dev) == 1;
	fclose(f);
	return found;
}

/*
 * Copies of the marker at a page's start on the swap device (a swap slot
 * is a page), read with O_DIRECT so that what counts is what was
 * written, not the page cache; -1 if it cannot be read.
 */
static long scan_device(void)
{
	long page = sysconf(_SC_PAGESIZE), hits = 0;
	int fd = open(swap_dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	char *buf;
	ssize_t got;

	if (fd < 0)
		return -1;
	if (posix_memalign((void **)&buf, page, SCAN_CHUNK)) {
		close(fd);
		return -1;
	}
	while ((got = read(fd, buf, SCAN_CHUNK)) > 0)
		for (ssize_t off = 0; off + MARKER_LEN <= got; off += page)
			hits += !memcmp(buf + off, marker, MARKER_LEN);
	free(buf);
	close(fd);
	return got < 0 ? -1 : hits;
}

static int run_way(int n, const struct way *w, double seconds, struct result *res)
{
	double end = now() + seconds;
	unsigned long nonce;

	memset(res, 0, sizeof(*res));
	if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
		return -1;
	snprintf(marker, sizeof(marker), "lof-window %d %016lx", n, nonce);
	while (now() < end)
		if (one_round(w, res))
			return -1;
	/* Writeback is asynchronous: let the last writes land. */
	usleep(200000);
	res->on_device = scan_device();
	return 0;
}

static void report(const struct way *w, const struct result *res)
{
	tap_report("window %s: %lu of %lu rounds had a written page in swap once locked "
		   "(%.2f%%), %lu pages (%lu out of RAM); the marker %ld times on %s",
		   w->name, res->hit_rounds, res->rounds,
		   res->rounds ? 100.0 * res->hit_rounds / res->rounds : 0.0, res->hit_pages,
		   res->out_of_ram, res->on_device, swap_dev);
}

int main(int argc, char **argv)
{
	static const struct way ways[] = {
		{ "mmap()+mlock2(ONFAULT), nothing added", false, false },
		{ "mmap()+mlock2(ONFAULT), held open 2 passes", false, true },
		{ "mmap(MAP_LOCKONFAULT), nothing added", true, false },
		{ "mmap(MAP_LOCKONFAULT), held open 2 passes", true, true },
	};
	double seconds = 3;
	pthread_t b, c;
	struct result res;
	bool series;
	int opt;

	npages = 4;
	while ((opt = getopt(argc, argv, "t:p:u")) != -1) {
		if (opt == 't')
			seconds = atof(optarg);
		else if (opt == 'p')
			npages = strtoul(optarg, NULL, 10);
		else if (opt == 'u')
			unpinned = true;
		else
			tap_bail("usage: lof-window [-t SECONDS] [-p PAGES] [-u]");
	}
	if (seconds <= 0 || npages < 1 || npages > MAX_PAGES)
		tap_bail("-t must be positive and -p 1..%d", MAX_PAGES);
	tap_subject("window", "mmap+mlock2 vs MAP_LOCKONFAULT");
	if (meminfo_kb("SwapTotal") <= 0 || !find_swap_device()) {
		tap_skip("no swap here (run with --swap)",
			 "the window between mmap() and mlock2()");
		return tap_done();
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		tap_skip("one CPU: the writer and the locker cannot overlap",
			 "the window between mmap() and mlock2()");
		return tap_done();
	}
	series = lockonfault_series();
	len = npages * sysconf(_SC_PAGESIZE);
	base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		tap_bail("mmap of %zu bytes: %s", len, strerror(errno));
	if (madvise(base, len, MADV_NOHUGEPAGE) && errno != EINVAL)
		tap_bail("madvise(MADV_NOHUGEPAGE): %s", strerror(errno)); /* EINVAL: no THP */
	pin(1);
	if (pthread_create(&b, NULL, writer, NULL) || pthread_create(&c, NULL, pager, NULL))
		tap_bail("pthread_create failed");
	tap_diag("%zu pages, %.1f s per way; %s", npages, seconds,
		 unpinned ? "threads unpinned" : "writer and pager on CPU 0, locker on CPU 1");

	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		const struct way *w = &ways[i];

		if (w->one_call && !series) {
			tap_skip("no MAP_LOCKONFAULT on this kernel", "%s: no page in swap",
				 w->name);
			continue;
		}
		if (run_way(i, w, seconds, &res))
			tap_bail("%s: round %lu: %s", w->name, res.rounds + 1, strerror(errno));
		report(w, &res);
		if (w->one_call) {
			tap_check(res.rounds > 0 && res.hit_pages == 0,
				  "%s: no page in swap in %lu rounds (%lu found)", w->name,
				  res.rounds, res.hit_pages);
			if (res.on_device < 0)
				tap_skip("the swap device cannot be read (not root?)",
					 "%s: the marker is not on the swap device", w->name);
			else
				tap_check(res.on_device == 0,
					  "%s: the marker is not on %s (%ld copies)", w->name,
					  swap_dev, res.on_device);
		} else if (w->held) {
			tap_check(
				res.hit_rounds > 0,
				"%s: the harness sees reclaim: pages in swap in %lu of %lu rounds",
				w->name, res.hit_rounds, res.rounds);
			if (res.on_device < 0)
				tap_skip("the swap device cannot be read (not root?)",
					 "%s: the marker is on the swap device", w->name);
			else
				tap_check(res.on_device > 0,
					  "%s: the harness sees the device: the marker %ld "
					  "times on %s",
					  w->name, res.on_device, swap_dev);
		}
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	__atomic_add_fetch(&round_no, 1, __ATOMIC_RELEASE);
	futex(&round_no, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	return tap_done();
}
