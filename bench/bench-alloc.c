// SPDX-License-Identifier: MIT
/*
 * Race the secure allocators (alloc.h) on two jobs:
 *  large  one buffer of each capacity with 4 KiB of it used: time for
 *         alloc + use + free, peak RSS, locked memory and page faults;
 *  small  32-byte secrets: alloc/free pairs per second on 1 and 2 threads,
 *         and how many can be live at once before the allocator fails
 *         (bounded by a count cap and a time cap), with the mappings and
 *         locked memory they take; then again as uid 65534 under the usual
 *         8 MiB RLIMIT_MEMLOCK.
 * Every measurement runs in a fresh process so RSS, VmLck and faults are
 * its own; an allocator's one-time process set-up (alloc.h) is done there
 * before the clock starts.  Results are "# KEEP: bench ..." records for
 * bench/report.
 */
#define _GNU_SOURCE
#include "alloc.h"
#include "common.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#define USED (4 * KiB)
#define SECRET 32
#define MAX_CAPS 8
#define NOBODY 65534

struct config {
	size_t caps[MAX_CAPS];
	int ncaps;
	int runs;
	double small_ms;	/* duration of one throughput run */
	long live_cap;		/* stop counting live allocations here */
	double live_secs;	/* ... or after this long */
	size_t small_heap;	/* OpenSSL arena for the small-secret jobs */
	size_t nobody_memlock;	/* RLIMIT_MEMLOCK of the uid 65534 run */
	size_t nobody_heap;	/* OpenSSL arena there: it must fit under the limit */
	const char *only;	/* run only this allocator */
};

struct job {
	const struct config *cfg;
	const struct allocator *a;
	size_t size;
	int threads;
	int nobody;		/* live run as uid 65534 under nobody_memlock */
};

/* alloc + use 4 KiB + free of one buffer: out = ms, peak RSS kB over the
 * start, peak VmLck kB and resident locked kB, page faults. */
static int large_once(void *arg, double *out, int nout)
{
	const struct job *job = arg;
	const struct allocator *a = job->a;
	long rss0, faults0;
	double t0, t1;
	char *p;

	if (nout < 5)
		return 0;
	if (a->warmup)
		a->warmup(job->size);
	reset_peak_rss();
	rss0 = status_kb("VmRSS");
	faults0 = faults_now();
	t0 = now_ms();
	if (a->setup(job->size))
		return 0;
	p = a->alloc(job->size);
	if (!p) {
		fprintf(stderr, "bench: %s: alloc of %zu bytes: %s\n", a->name,
			job->size, strerror(errno));
		return 0;
	}
	memset(p, 0xa5, USED);
	out[2] = status_kb("VmLck");
	out[3] = locked_resident_kb();
	a->free(p, job->size);
	/* A heap that outlives the buffer (OpenSSL's arena) may hold more
	 * locked memory after the free, whose wipe touched it all. */
	out[2] = fmax(out[2], status_kb("VmLck"));
	out[3] = fmax(out[3], locked_resident_kb());
	a->teardown();
	t1 = now_ms();
	out[0] = t1 - t0;
	out[1] = status_kb("VmHWM") - rss0;
	out[4] = faults_now() - faults0;
	return 5;
}

/*
 * A cache line each: two workers' counters on one line would bounce it
 * between the CPUs on every round and cap the 2-thread figure of a fast
 * allocator at the cost of the bouncing, not of the allocator.
 */
struct worker {
	const struct allocator *a;
	double ms;
	long ops;
	int failed;
} __attribute__((aligned(64)));

static void *small_worker(void *arg)
{
	struct worker *w = arg;
	const struct allocator *a = w->a;
	double end = now_ms() + w->ms;
	long i, ops = 0;

	do {
		for (i = 0; i < 64; i++) {
			char *p = a->alloc(SECRET);

			if (!p) {
				w->failed = 1;
				return NULL;
			}
			memset(p, 0x5a, SECRET);
			a->free(p, SECRET);
		}
		ops += 64;
	} while (now_ms() < end);
	w->ops = ops;
	return NULL;
}

/*
 * Pairs per second over all threads: out[0].  One other secret stays live
 * throughout, as in any real program; without it OpenSSL's buddy arena
 * splits and merges all the way up on every single-thread pair.
 */
static int small_once(void *arg, double *out, int nout)
{
	const struct job *job = arg;
	struct worker w[2] = { { job->a, job->cfg->small_ms, 0, 0 },
			       { job->a, job->cfg->small_ms, 0, 0 } };
	pthread_t tid[2];
	double t0, t1;
	void *live;
	int i;

	if (nout < 1 || job->threads > 2)
		return 0;
	if (job->a->warmup)
		job->a->warmup(job->cfg->small_heap);
	if (job->a->setup(job->cfg->small_heap))
		return 0;
	live = job->a->alloc(SECRET);
	if (!live)
		return 0;
	t0 = now_ms();
	for (i = 0; i < job->threads; i++)
		if (pthread_create(&tid[i], NULL, small_worker, &w[i]))
			return 0;
	for (i = 0; i < job->threads; i++)
		pthread_join(tid[i], NULL);
	t1 = now_ms();
	job->a->free(live, SECRET);
	job->a->teardown();
	out[0] = 0;
	for (i = 0; i < job->threads; i++) {
		if (w[i].failed)
			return 0;
		out[0] += w[i].ops;
	}
	out[0] /= (t1 - t0) / 1e3;
	return 1;
}

static int become_nobody(size_t memlock)
{
	struct rlimit rl = { memlock, memlock };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0) {
		fprintf(stderr, "bench: uid %d with RLIMIT_MEMLOCK %zu: %s\n", NOBODY, memlock,
			strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Live 32-byte allocations until failure or a cap: out = count, stop
 * reason (0 failed, 1 count cap, 2 time cap), errno, seconds, VmLck kB,
 * mappings added, locked resident kB added (smaps Locked).
 */
static int live_once(void *arg, double *out, int nout)
{
	const struct job *job = arg;
	const struct config *cfg = job->cfg;
	size_t heap = job->nobody ? cfg->nobody_heap : cfg->small_heap;
	void **ptrs = malloc(cfg->live_cap * sizeof(*ptrs));
	double t0, end;
	long n = 0, maps0, locked0;

	if (!ptrs || nout < 7 || (job->nobody && become_nobody(cfg->nobody_memlock) < 0))
		return 0;
	if (job->a->warmup)
		job->a->warmup(heap);
	if (job->a->setup(heap))
		return 0;
	maps0 = smaps_count(0);
	locked0 = locked_resident_kb();
	t0 = now_ms();
	end = t0 + cfg->live_secs * 1e3;
	out[1] = 1;
	out[2] = 0;
	while (n < cfg->live_cap) {
		errno = 0;	/* OpenSSL's arena fails without setting it */
		ptrs[n] = job->a->alloc(SECRET);
		if (!ptrs[n]) {
			out[1] = 0;
			out[2] = errno;
			break;
		}
		memset(ptrs[n++], 0x5a, SECRET);
		if (!(n & 255) && now_ms() > end) {
			out[1] = 2;
			break;
		}
	}
	out[0] = n;
	out[3] = (now_ms() - t0) / 1e3;
	out[4] = status_kb("VmLck");
	out[5] = smaps_count(0) - maps0;
	out[6] = locked_resident_kb() - locked0;
	while (n > 0)
		job->a->free(ptrs[--n], SECRET);
	job->a->teardown();
	free(ptrs);
	return 7;
}

static void parse_caps(struct config *cfg, char *list)
{
	char *tok, *save = NULL;

	cfg->ncaps = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (cfg->ncaps == MAX_CAPS)
			die("at most %d capacities", MAX_CAPS);
		cfg->caps[cfg->ncaps++] = parse_size(tok);
		if (cfg->caps[cfg->ncaps - 1] < USED)
			die("capacity %s is below the %lu bytes used", tok, USED);
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench-alloc [-c CAPS] [-r RUNS] [-d SMALL_MS] [-l LIVE_CAP]\n"
		"                   [-L LIVE_SECS] [-H SMALL_HEAP] [-a ALLOCATOR]\n"
		"  defaults: -c 1M,16M,256M,1G -r 5 -d 200 -l 1000000 -L 10 -H 16M\n"
		"  the live count is also run as uid 65534 under an 8 MiB RLIMIT_MEMLOCK\n"
		"  (OpenSSL's arena 4 MiB there), if run as root\n");
	exit(2);
}

static int test, failed;

static void verdict(int ok, const char *fmt, const char *name, double arg)
{
	printf("%sok %d ", ok ? "" : "not ", ++test);
	printf(fmt, name, arg);
	putchar('\n');
	failed += !ok;
}

int main(int argc, char **argv)
{
	struct config cfg = { .runs = 5, .small_ms = 200, .live_cap = 1000000,
			      .live_secs = 10, .small_heap = 16 * MiB,
			      .nobody_memlock = 8 * MiB, .nobody_heap = 4 * MiB };
	char defcaps[] = "1M,16M,256M,1G";
	int opt, i, c, r, t, root = geteuid() == 0;
	double v[7];

	parse_caps(&cfg, defcaps);
	while ((opt = getopt(argc, argv, "c:r:d:l:L:H:a:")) != -1) {
		switch (opt) {
		case 'c': parse_caps(&cfg, optarg); break;
		case 'r': cfg.runs = atoi(optarg); break;
		case 'd': cfg.small_ms = atof(optarg); break;
		case 'l': cfg.live_cap = atol(optarg); break;
		case 'L': cfg.live_secs = atof(optarg); break;
		case 'H': cfg.small_heap = parse_size(optarg); break;
		case 'a': cfg.only = optarg; break;
		default: usage();
		}
	}
	if (cfg.runs < 1 || cfg.runs > 32 || cfg.small_ms <= 0 ||
	    cfg.live_cap < 1 || cfg.live_secs <= 0)
		usage();
	if (raise_memlock())
		printf("# RLIMIT_MEMLOCK not raised (%s): large locks need CAP_IPC_LOCK\n",
		       strerror(errno));

	/* secbuf and libsodium draw canaries from getrandom(): wait for the
	 * CRNG here, not inside the first timed run of a fresh guest. */
	if (getrandom(v, sizeof(v), 0) < 0)
		die("getrandom: %s", strerror(errno));
	record("machine %s", machine_desc());
	for (i = 0; i < nallocators; i++) {
		const struct allocator *a = &allocators[i];
		struct job job = { &cfg, a, 0, 1, 0 };

		if (cfg.only && strcmp(cfg.only, a->name))
			continue;
		for (c = 0; c < cfg.ncaps && !a->max_size; c++) {
			double tm[32], rss[32], lck[32], res[32], flt[32];
			struct stats st;

			job.size = cfg.caps[c];
			for (r = 0; r < cfg.runs; r++) {
				if (run_isolated(large_once, &job, v, 5) != 5)
					break;
				tm[r] = v[0], rss[r] = v[1], lck[r] = v[2];
				res[r] = v[3], flt[r] = v[4];
			}
			verdict(r == cfg.runs, "alloc-large %s %.0f kB", a->name,
				job.size / KiB);
			if (r < cfg.runs)
				continue;
			st = stats_of(tm, r);
			record("alloc-large allocator=%s method=%s capacity_kb=%zu used_kb=%lu "
			       "runs=%d time_med=%.3f time_min=%.3f time_max=%.3f "
			       "rss_kb=%.0f vmlck_kb=%.0f locked_kb=%.0f faults=%.0f",
			       a->name, a->method(), job.size / KiB, USED / KiB, r,
			       st.med, st.min, st.max, stats_of(rss, r).med,
			       stats_of(lck, r).med, stats_of(res, r).med,
			       stats_of(flt, r).med);
		}
		if (a->large_only)
			continue;
		for (t = 1; t <= 2; t++) {
			double ops[32];
			struct stats st;

			job.threads = t;
			for (r = 0; r < cfg.runs; r++)
				if (run_isolated(small_once, &job, &ops[r], 1) != 1)
					break;
			verdict(r == cfg.runs, "alloc-small %s %.0f threads", a->name, t);
			if (r < cfg.runs)
				continue;
			st = stats_of(ops, r);
			record("alloc-small allocator=%s threads=%d size=%d runs=%d "
			       "ops_med=%.0f ops_min=%.0f ops_max=%.0f",
			       a->name, t, SECRET, r, st.med, st.min, st.max);
		}
		for (job.nobody = 0; job.nobody <= root; job.nobody++) {
			r = run_isolated(live_once, &job, v, 7) == 7;
			verdict(r, job.nobody ? "alloc-live %s as uid 65534 (cap %.0f)" :
				"alloc-live %s (cap %.0f)", a->name, cfg.live_cap);
			if (!r)
				continue;
			record("alloc-live allocator=%s size=%d uid=%d memlock_kb=%ld count=%.0f "
			       "stop=%s errno=%s secs=%.2f vmlck_kb=%.0f maps=%.0f locked_kb=%.0f "
			       "cap=%ld cap_secs=%.0f heap_kb=%zu",
			       a->name, SECRET, job.nobody ? NOBODY : (int)geteuid(),
			       job.nobody ? (long)(cfg.nobody_memlock / KiB) : -1L, v[0],
			       v[1] == 0 ? "alloc-failed" : v[1] == 1 ? "count-cap" : "time-cap",
			       v[1] == 0 && v[2] ? strerrorname_np((int)v[2]) ?: "?" : "-",
			       v[3], v[4], v[5], v[6], cfg.live_cap, cfg.live_secs,
			       (job.nobody ? cfg.nobody_heap : cfg.small_heap) / KiB);
		}
	}
	printf("1..%d\n", test);
	return failed ? 1 : 0;
}
