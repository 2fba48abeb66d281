/* Shared helpers of the host/guest libsecbuf tests (check based). */
#ifndef SECBUF_TEST_HARNESS_H
#define SECBUF_TEST_HARNESS_H

#include <check.h>
#include <stddef.h>

struct sbt_test {
	const char *name;
	const TTest *fn;
	const char *(*skip)(void);	/* reason to skip, or NULL to run */
};
#define SBT(fn, skip) { #fn, fn, skip }

/* Run the tests; print TAP and "N passed, N failed, N skipped"; exit code. */
int sbt_run(const char *suite, const struct sbt_test *t, size_t n);

/* The process's method, checked once by main; flags that make a plain
 * allocation succeed under every method (BEST_EFFORT where none locks). */
int sbt_method(void);
unsigned sbt_flags(unsigned flags);
int sbt_locks(unsigned flags);	/* whether sbt_flags(flags) buffers get locked */

/* Valgrind's own page faults and mappings blur two measurements. */
int sbt_under_valgrind(void);

size_t sbt_page(void);
size_t sbt_round16(size_t n);
/* First data byte of a buffer, computed from the public layout rules. */
unsigned char *sbt_data_start(void *p);

/* Lines in /proc/self/maps (read without malloc). */
int sbt_maps_lines(void);
/* Rss and Locked (kB) and VmFlags of the smaps entry holding addr; 0 or -1. */
int sbt_smaps(const void *addr, long *rss_kb, long *locked_kb, char *vmflags, size_t len);
/* The /proc/self/maps line holding addr. */
int sbt_maps_line(const void *addr, char *line, size_t len);

/*
 * Make this process's syscall nr fail with errno err (err 0: kill the
 * process) when (args[arg] & mask) == val, or always when arg < 0.  For
 * good: call it in a child.  Returns 0, or -1 with errno.
 */
struct sbt_deny {
	long nr;
	int arg;
	unsigned val, mask;
	int err;
};
int sbt_deny_syscalls(const struct sbt_deny *d, size_t n);

/*
 * Run fn(arg) in a forked child with stderr captured.  Returns the wait
 * status; the child's stderr is copied to msg.
 */
int sbt_child(void (*fn)(void *), void *arg, char *msg, size_t len);

#endif
