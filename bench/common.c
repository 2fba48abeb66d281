// SPDX-License-Identifier: MIT
/* Helpers shared by the benchmarks; see common.h. */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>

static double tsc_per_ms;	/* 0 while CLOCK_MONOTONIC is fine */
static const char *tsc_ref = "";

/* Wait for the coarse clock to tick and return the TSC at the edge. */
static uint64_t tsc_at_tick(double *when)
{
	double t0 = mono_ms(), t;

	while ((t = mono_ms()) == t0)
		;
	*when = t;
	return __rdtsc();
}

/*
 * A guest kernel without a usable clocksource falls back to jiffies:
 * CLOCK_MONOTONIC then moves in 4 ms steps and lags whenever QEMU delays
 * timer ticks.  Under TCG the guest's TSC runs at the host's TSC rate, so
 * time with the TSC at the rate the host measured (BENCH_TSC_KHZ, from
 * build/guest/bin/bench-host-tsc-khz; BENCH_TSC_REF names any other
 * source of the rate, such as the guest's own calibration under icount).
 * Without it, calibrate against ~100 jiffies, which under TCG was seen up
 * to 70% off: say so.
 */
static void clock_init(void)
{
	static int done;
	struct timespec res;
	const char *khz = getenv("BENCH_TSC_KHZ");
	double t0, t1;
	uint64_t c0, c1;

	if (done)
		return;
	done = 1;
	if (clock_getres(CLOCK_MONOTONIC, &res) || (res.tv_sec == 0 && res.tv_nsec <= 1000))
		return;
	if (khz && atof(khz) > 0) {
		const char *ref = getenv("BENCH_TSC_REF");

		tsc_per_ms = atof(khz);
		tsc_ref = ref && *ref ? ref : "the host's measured TSC rate";
		return;
	}
	c0 = tsc_at_tick(&t0);
	while (mono_ms() < t0 + 400)
		;
	c1 = tsc_at_tick(&t1);
	tsc_per_ms = (c1 - c0) / (t1 - t0);
	tsc_ref = "400 ms of jiffies (UNRELIABLE: set BENCH_TSC_KHZ)";
}

/* TSC ticks per millisecond, measured against CLOCK_MONOTONIC (host). */
double tsc_khz(void)
{
	double t0 = mono_ms(), t1;
	uint64_t c0 = __rdtsc(), c1;

	while ((t1 = mono_ms()) < t0 + 500)
		;
	c1 = __rdtsc();
	return (c1 - c0) / (t1 - t0);
}

double now_ms(void)
{
	clock_init();
	return tsc_per_ms > 0 ? __rdtsc() / tsc_per_ms : mono_ms();
}

static const char *clock_desc(void)
{
	static char buf[96];

	clock_init();
	if (tsc_per_ms <= 0)
		return "CLOCK_MONOTONIC";
	snprintf(buf, sizeof(buf), "TSC at %.0f MHz by %s (CLOCK_MONOTONIC is coarse)",
		 tsc_per_ms / 1e3, tsc_ref);
	return buf;
}
#else
double now_ms(void)
{
	return mono_ms();
}

double tsc_khz(void)
{
	return 0;
}

static const char *clock_desc(void)
{
	return "CLOCK_MONOTONIC";
}
#endif

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct stats stats_of(double *samples, int n)
{
	struct stats s;

	qsort(samples, n, sizeof(*samples), cmp_double);
	s.min = samples[0];
	s.max = samples[n - 1];
	s.med = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	return s;
}

static long proc_kb(const char *path, const char *field)
{
	char line[256];
	size_t len = strlen(field);
	long val = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, len) && line[len] == ':') {
			val = strtol(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

long status_kb(const char *field)
{
	return proc_kb("/proc/self/status", field);
}

long locked_resident_kb(void)
{
	return proc_kb("/proc/self/smaps_rollup", "Locked");
}

long faults_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

int reset_peak_rss(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs("5", f) < 0;
	return fclose(f) || ret ? -1 : 0;
}

int sys_mlock2(const void *addr, size_t len, unsigned int flags)
{
	return syscall(BENCH_NR_MLOCK2, addr, len, flags);
}

int have_lockonfault_series(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ok;

	if (p == MAP_FAILED)
		die("mmap probe page: %s", strerror(errno));
	/* Stock kernels reject MLOCK_LOCKED in mlock2 with EINVAL. */
	ok = sys_mlock2(p, 0, BENCH_MLOCK_LOCKED) == 0;
	munmap(p, page);
	return ok;
}

int raise_memlock(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	return setrlimit(RLIMIT_MEMLOCK, &rl);
}

/* The bracketed mode of /sys/kernel/mm/transparent_hugepage/enabled. */
static const char *thp_mode(void)
{
	static char mode[32] = "n/a";
	char line[128], *open_br, *close_br;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f && fgets(line, sizeof(line), f) && (open_br = strchr(line, '[')) &&
	    (close_br = strchr(open_br, ']'))) {
		*close_br = 0;
		snprintf(mode, sizeof(mode), "%s", open_br + 1);
	}
	if (f)
		fclose(f);
	return mode;
}

const char *machine_desc(void)
{
	static char buf[512];
	char line[256], model[160] = "unknown cpu";
	struct utsname u;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			snprintf(model, sizeof(model), "%s", c + 2);
			model[strcspn(model, "\n")] = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	uname(&u);
	snprintf(buf, sizeof(buf), "%s, %ld CPUs, %lld MiB RAM, Linux %s %s%s, THP %s, timer %s",
		 model, sysconf(_SC_NPROCESSORS_ONLN),
		 (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / (long long)MiB,
		 u.release, u.machine,
		 have_lockonfault_series() ? " (lock-on-fault series)" : "",
		 thp_mode(), clock_desc());
	return buf;
}

void record(const char *fmt, ...)
{
	va_list ap;

	fputs("# KEEP: bench ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

int run_isolated(int (*fn)(void *arg, double *out, int nout), void *arg,
		 double *out, int nout)
{
	int fds[2], status, got = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		double vals[32];
		int k;

		close(fds[0]);
		k = fn(arg, vals, nout < 32 ? nout : 32);
		if (k > 0 && write(fds[1], vals, k * sizeof(double)) < 0)
			_exit(3);
		fflush(stdout);
		_exit(k > 0 ? 0 : 1);
	}
	close(fds[1]);
	while (got < nout * (int)sizeof(double)) {
		n = read(fds[0], (char *)out + got, nout * sizeof(double) - got);
		if (n <= 0)
			break;
		got += n;
	}
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 0;
	return got / sizeof(double);
}

size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K': v *= KiB; end++; break;
	case 'm': case 'M': v *= MiB; end++; break;
	case 'g': case 'G': v *= GiB; end++; break;
	}
	if (end == s || *end)
		die("bad size '%s' (use e.g. 4096, 64K, 256M, 1G)", s);
	return v;
}
