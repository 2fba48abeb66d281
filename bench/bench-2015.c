// SPDX-License-Identifier: MIT
/*
 * The experiment of the cover letter of Eric Munson's 2015 lock-on-fault
 * series: map a file of random data, make random one-byte reads, and keep
 * every touched page locked, with seven strategies:
 *   a  mlock() of the whole range at setup
 *   b  mlock() of the page before each access
 *   c  PROT_NONE + SIGSEGV handler doing mprotect+mlock, batch 1 page
 *   d  the same, batch 8     e  the same, batch 16
 *   f  mlock2(MLOCK_ONFAULT) of the whole range at setup
 *   g  mmap(MAP_LOCKONFAULT)           (only with the lock-on-fault series)
 * A dense variant reads anywhere; the sparse one only reads ~5% of pages.
 * Each strategy runs in a fresh process, several times; records report
 * median/min/max setup and processing time and VmLck at the end (its peak,
 * as nothing is unlocked before then).
 */
#define _GNU_SOURCE
#include "common.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct config {
	size_t size;
	long accesses;
	int runs;
	int sparse_pct;
	const char *path;
	const char *strategies;
};

struct job {
	const struct config *cfg;
	const uint64_t *offsets;
	char strategy;
};

static long page_size;

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void make_file(const struct config *cfg)
{
	static uint64_t chunk[MiB / sizeof(uint64_t)];
	uint64_t seed = 2015;
	size_t done, i;
	int fd = open(cfg->path, O_CREAT | O_TRUNC | O_WRONLY, 0600);

	if (fd < 0)
		die("create %s: %s", cfg->path, strerror(errno));
	for (done = 0; done < cfg->size; done += sizeof(chunk)) {
		size_t len = cfg->size - done < sizeof(chunk) ?
			     cfg->size - done : sizeof(chunk);

		for (i = 0; i < sizeof(chunk) / sizeof(chunk[0]); i++)
			chunk[i] = splitmix64(&seed);
		if (write(fd, chunk, len) != (ssize_t)len)
			die("write %s: %s (is the filesystem big enough?)",
			    cfg->path, strerror(errno));
	}
	close(fd);
}

/*
 * Offsets of the reads, fixed before any strategy runs so every strategy
 * sees the same sequence.  Sparse: pages are "hot" with probability pct%.
 * Returns the number of distinct pages the sequence touches.
 */
static long make_offsets(const struct config *cfg, uint64_t *off, int pct)
{
	long npages = cfg->size / page_size, nhot = 0, touched = 0, i;
	long *hot = malloc(npages * sizeof(*hot));
	unsigned char *seen = calloc(npages, 1);
	uint64_t seed = 7 + pct;

	if (!hot || !seen)
		die("out of memory for %ld pages", npages);
	for (i = 0; i < npages; i++)
		if (splitmix64(&seed) % 100 < (uint64_t)pct)
			hot[nhot++] = i;
	if (!nhot)
		hot[nhot++] = 0;
	for (i = 0; i < cfg->accesses; i++) {
		uint64_t r = splitmix64(&seed);
		long pg = hot[(r >> 16) % nhot];

		off[i] = (uint64_t)pg * page_size + (r & (page_size - 1));
		touched += !seen[pg];
		seen[pg] = 1;
	}
	free(hot);
	free(seen);
	return touched;
}

/* State for the SIGSEGV handler of strategies c-e. */
static char *seg_base;
static size_t seg_len, seg_batch;

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
	char *addr = (char *)((uintptr_t)si->si_addr & ~(uintptr_t)(page_size - 1));
	size_t len = seg_batch * page_size;

	(void)uc;
	if (addr < seg_base || addr >= seg_base + seg_len) {
		signal(sig, SIG_DFL);
		return;
	}
	/* Clamp to the one mapping we know, instead of the cover letter's
	 * speculative second step past the faulting page. */
	if (len > (size_t)(seg_base + seg_len - addr))
		len = seg_base + seg_len - addr;
	if (mprotect(addr, len, PROT_READ) || mlock(addr, len)) {
		static const char msg[] = "bench-2015: mprotect/mlock in SIGSEGV "
			"handler failed (vm.max_map_count too low?)\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(5);
		_exit(4);
	}
}

/* One run of one strategy in a fresh process: out = setup ms, processing
 * ms, VmLck kB and resident locked kB after processing. */
static int run_strategy(void *arg, double *out, int nout)
{
	const struct job *job = arg;
	const struct config *cfg = job->cfg;
	const uint64_t *off = job->offsets;
	int prot = PROT_READ, flags = MAP_SHARED, batch = 0;
	volatile unsigned char sink = 0;
	unsigned char sum = 0;
	double t0, t1, t2;
	char *p;
	long i;
	int fd;

	if (nout < 4)
		return 0;
	switch (job->strategy) {
	case 'c': batch = 1; break;
	case 'd': batch = 8; break;
	case 'e': batch = 16; break;
	case 'g': flags |= MAP_LOCKONFAULT; break;
	}
	if (batch) {
		struct sigaction sa = { .sa_sigaction = segv_handler,
					.sa_flags = SA_SIGINFO };

		prot = PROT_NONE;
		seg_batch = batch;
		sigaction(SIGSEGV, &sa, NULL);
	}
	fd = open(cfg->path, O_RDONLY);
	if (fd < 0)
		die("open %s: %s", cfg->path, strerror(errno));

	t0 = now_ms();
	p = mmap(NULL, cfg->size, prot, flags, fd, 0);
	if (p == MAP_FAILED)
		die("mmap %zu bytes: %s", cfg->size, strerror(errno));
	if (job->strategy == 'a' && mlock(p, cfg->size))
		die("mlock whole range: %s", strerror(errno));
	if (job->strategy == 'f' &&
	    syscall(SYS_mlock2, p, cfg->size, MLOCK_ONFAULT))
		die("mlock2(MLOCK_ONFAULT): %s", strerror(errno));
	t1 = now_ms();
	seg_base = p;
	seg_len = cfg->size;

	if (job->strategy == 'b') {
		for (i = 0; i < cfg->accesses; i++) {
			char *pg = p + (off[i] & ~(uint64_t)(page_size - 1));

			if (mlock(pg, page_size))
				die("mlock page: %s", strerror(errno));
			sum += p[off[i]];
		}
	} else {
		for (i = 0; i < cfg->accesses; i++)
			sum += p[off[i]];
	}
	t2 = now_ms();
	sink = sum;
	(void)sink;

	out[0] = t1 - t0;
	out[1] = t2 - t1;
	out[2] = status_kb("VmLck");
	out[3] = locked_resident_kb();
	munmap(p, cfg->size);
	close(fd);
	return 4;
}

static const char *strategy_desc(char s)
{
	switch (s) {
	case 'a': return "mlock-whole-range";
	case 'b': return "mlock-per-access";
	case 'c': return "sigsegv-batch-1";
	case 'd': return "sigsegv-batch-8";
	case 'e': return "sigsegv-batch-16";
	case 'f': return "mlock2-onfault";
	case 'g': return "map-lockonfault";
	}
	return "?";
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench-2015 [-s SIZE] [-n ACCESSES] [-r RUNS] [-p SPARSE_PCT]\n"
		"                  [-f FILE] [-t STRATEGIES]\n"
		"  defaults: -s 256M -n 1000000 -r 5 -p 5 -f /tmp/bench-2015.dat -t abcdefg\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct config cfg = { 256 * MiB, 1000000, 5, 5, "/tmp/bench-2015.dat",
			      "abcdefg" };
	int opt, series, v;
	uint64_t *off;

	while ((opt = getopt(argc, argv, "s:n:r:p:f:t:")) != -1) {
		switch (opt) {
		case 's': cfg.size = parse_size(optarg); break;
		case 'n': cfg.accesses = atol(optarg); break;
		case 'r': cfg.runs = atoi(optarg); break;
		case 'p': cfg.sparse_pct = atoi(optarg); break;
		case 'f': cfg.path = optarg; break;
		case 't': cfg.strategies = optarg; break;
		default: usage();
		}
	}
	page_size = sysconf(_SC_PAGESIZE);
	if (cfg.size < (size_t)page_size || cfg.accesses < 1 || cfg.runs < 1 ||
	    cfg.runs > 64 || cfg.sparse_pct < 1 || cfg.sparse_pct > 100)
		usage();
	cfg.size -= cfg.size % page_size;
	if (raise_memlock() && errno != EPERM)
		die("setrlimit(RLIMIT_MEMLOCK): %s", strerror(errno));
	series = lockonfault_series();

	record("machine %s", machine_desc());
	off = malloc(cfg.accesses * sizeof(*off));
	if (!off)
		die("out of memory for %ld offsets", cfg.accesses);
	make_file(&cfg);

	for (v = 0; v < 2; v++) {
		int pct = v ? cfg.sparse_pct : 100;
		const char *variant = v ? "sparse" : "dense";
		long touched = make_offsets(&cfg, off, pct);
		const char *s;

		for (s = cfg.strategies; *s; s++) {
			struct job job = { &cfg, off, *s };
			double setup[64], proc[64], lck[64], res[64], vals[4];
			struct stats st, sp, sl, sr;
			int r;

			if (!strchr("abcdefg", *s))
				die("unknown strategy '%c'", *s);
			if (*s == 'g' && !series) {
				tap_skip("no lock-on-fault series in this kernel", "2015 %s %c %s",
					 variant, *s, strategy_desc(*s));
				record("2015 variant=%s strategy=%c skipped=no-series",
				       variant, *s);
				continue;
			}
			for (r = 0; r < cfg.runs; r++) {
				if (run_isolated(run_strategy, &job, vals, 4) != 4)
					break;
				setup[r] = vals[0];
				proc[r] = vals[1];
				lck[r] = vals[2];
				res[r] = vals[3];
			}
			/* Every strategy locks what it touches: none is a bug. */
			if (r < cfg.runs || stats_of(lck, r).min <= 0 ||
			    stats_of(res, r).min == 0) {
				tap_check(false, "2015 %s %c %s (%s)", variant, *s,
					  strategy_desc(*s),
					  r < cfg.runs ? "a run failed" : "nothing got locked");
				continue;
			}
			st = stats_of(setup, r);
			sp = stats_of(proc, r);
			sl = stats_of(lck, r);
			sr = stats_of(res, r);
			record("2015 variant=%s strategy=%c desc=%s size_kb=%zu accesses=%ld "
			       "touched_pages=%ld total_pages=%ld runs=%d "
			       "setup_med=%.3f setup_min=%.3f setup_max=%.3f "
			       "proc_med=%.3f proc_min=%.3f proc_max=%.3f vmlck_kb=%.0f "
			       "locked_kb=%.0f",
			       variant, *s, strategy_desc(*s), cfg.size / KiB,
			       cfg.accesses, touched, (long)(cfg.size / page_size),
			       r, st.med, st.min, st.max, sp.med, sp.min, sp.max,
			       sl.med, sr.med);
			tap_check(true,
				  "2015 %s %c %s setup %.3f ms, processing %.1f ms, "
				  "locked %.0f kB resident (VmLck %.0f kB)",
				  variant, *s, strategy_desc(*s), st.med, sp.med, sr.med, sl.med);
		}
	}
	unlink(cfg.path);
	free(off);
	return tap_done();
}
