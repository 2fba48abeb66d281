/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for the secbuf benchmarks: clocks, run statistics,
 * /proc/self/status counters and result records.
 *
 * Every result is one line "# KEEP: bench <table> <key=value>..." on stdout,
 * so the same binary feeds bench/report on the host and keep.txt in the
 * guest (see docs in bench/run).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KiB (1024UL)
#define MiB (1024UL * KiB)
#define GiB (1024UL * MiB)

/* The kernel's side (/proc, the lock-on-fault ABI and its probe) is kfacts. */
#include "kfacts.h"

/* Milliseconds from a fine monotonic clock (see clock_init in common.c). */
double now_ms(void);
/* The TSC's rate in kHz against CLOCK_MONOTONIC; 0 where there is none. */
double tsc_khz(void);

/* Median, min and max of n samples (sorts samples in place). */
struct stats {
	double med, min, max;
};
struct stats stats_of(double *samples, int n);

/* Counters from /proc/self/status in kB; -1 when the field is missing. */
long status_kb(const char *field);
/*
 * Resident pages of locked mappings (smaps_rollup "Locked:") in kB, -1 if
 * unavailable.  VmLck instead counts whole locked VMAs, which is what
 * RLIMIT_MEMLOCK is charged, including not-yet-faulted on-fault ranges.
 */
long locked_resident_kb(void);
/* Minor plus major page faults of this process so far. */
long faults_now(void);
/* Reset VmHWM to the current RSS; returns 0 when the kernel supports it. */
int reset_peak_rss(void);

/* RLIMIT_MEMLOCK to infinity; returns 0 on success (needs root). */
int raise_memlock(void);

/* One-line description of the machine and kernel for the tables. */
const char *machine_desc(void);

/* Print "# KEEP: bench <fmt...>" (one record). */
void record(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Abort with a message naming what failed: benchmarks must not go silent. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * Run fn(arg) in a forked child and collect the doubles it writes to out[]
 * (up to nout).  Isolates peak RSS, VmLck and faults per run.  Returns the
 * number of values received; 0 if the child failed.
 */
int run_isolated(int (*fn)(void *arg, double *out, int nout), void *arg,
		 double *out, int nout);

/* Parse a size with optional K/M/G suffix; dies on garbage. */
size_t parse_size(const char *s);

#endif
