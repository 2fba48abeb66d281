/* Shared helpers of the host/guest libsecbuf tests (check based). */
#ifndef SECBUF_TEST_HARNESS_H
#define SECBUF_TEST_HARNESS_H

#include <check.h>
#include <stddef.h>

struct sbt_test {
	const char *name;
	const TTest *const *fn;	/* START_TEST's pointer is not a constant */
	int slow;		/* a stress test that does not depend on the method */
};
/* clang-format off */
#define SBT(fn) { #fn, &fn, 0 }
/* Skipped when SBT_QUICK=1: the guest runs it once per kernel, not per method. */
#define SBT_SLOW(fn) { #fn, &fn, 1 }
#define SBT_END { NULL, NULL, 0 }
/* clang-format on */

/* A mode the test binary runs instead of its tests: "PROG --flag". */
struct sbt_mode {
	const char *flag;
	int (*main)(void);
};

/*
 * The test binary's main: run a mode if argv names one, else every test of
 * the groups (each a SBT_END-terminated array, the list NULL-terminated);
 * print TAP and "N passed, N failed, N skipped".  Returns the exit code.
 */
int sbt_main(int argc, char **argv, const char *suite,
	     const struct sbt_test *const *groups, const struct sbt_mode *modes);

/*
 * Skip the running test with the reason.  A test checks what it needs
 * first; each helper skips with its own reason when that is missing.
 */
__attribute__((noreturn)) void sbt_skip(const char *why);
void sbt_need_method(void);		/* the forced SECBUF_LOCK method works here */
void sbt_need_missing_method(void);	/* ... does not */
void sbt_need_root(void);
void sbt_need_anon_vma_name(void);
void sbt_need_no_valgrind(const char *why);
void sbt_need_secretmem(void); /* memfd_secret(2) works (SECBUF_SECRET) */
/*
 * Read n (at most 64) bytes at p through /proc/self/mem, as root or a
 * debugger would: 0 if it read what is there, the errno that stopped it,
 * or -1 if it read something else.
 */
int sbt_mem_read_err(const void *p, size_t n);

/* The process's method, checked once by main; flags that make a plain
 * allocation succeed under every method (BEST_EFFORT where none locks). */
int sbt_method(void);
unsigned sbt_flags(unsigned flags);
int sbt_locks(unsigned flags);	/* whether sbt_flags(flags) buffers get locked */

/* Valgrind's own page faults and mappings blur two measurements. */
int sbt_under_valgrind(void);
/* ASan's quarantine holds freed heap memory, so its heap keeps growing. */
int sbt_under_asan(void);

size_t sbt_page(void);
/* Whether any of the n bytes at p is not fill. */
int sbt_differs(const unsigned char *p, size_t n, unsigned char fill);
size_t sbt_round16(size_t n);
/* First data byte of a buffer, computed from the public layout rules. */
unsigned char *sbt_data_start(void *p);

/* Mappings of this process (read without malloc, by kfacts). */
int sbt_maps_lines(void);
/* VmLck of /proc/self/status in kB (what RLIMIT_MEMLOCK is charged), or -1. */
long sbt_vmlck_kb(void);
/* Rss and Locked (kB) and VmFlags (" xx yy ") of the mapping holding addr; 0 or -1. */
int sbt_smaps(const void *addr, long *rss_kb, long *locked_kb, char *vmflags, size_t len);
/* "start-end perms name" of the mapping holding addr; 0 or -1. */
int sbt_maps_line(const void *addr, char *line, size_t len);

/*
 * Make this thread's syscall nr fail with errno err (err 0: kill the
 * process; SBT_TRAP: raise SIGSYS instead of running it; SBT_FAKE: return
 * 0 without running it, as a sandbox that pretends may) when
 * (args[arg] & mask) == val, or always when arg < 0.  Threads created
 * later inherit it.  For good: call it in a child.  Returns 0, or -1 with
 * errno.
 */
#define SBT_TRAP (-1)
#define SBT_FAKE (-2)
struct sbt_deny {
	long nr;
	int arg;
	unsigned val, mask;
	int err;
};
int sbt_deny_syscalls(const struct sbt_deny *d, size_t n);

/* Append a formatted line to buf (a test's list of failed cases). */
__attribute__((format(printf, 3, 4)))
void sbt_note(char *buf, size_t len, const char *fmt, ...);

/* Wait status tests. */
int sbt_signalled(int status, int sig);
int sbt_exited_ok(int status);

/*
 * Run fn(arg) in a forked child with stderr captured.  Returns the wait
 * status; the child's stderr is copied to msg.
 */
int sbt_child(void (*fn)(void *), void *arg, char *msg, size_t len);
/* Whether smaps names VM_LOCKONFAULT "lf" (stock 6.1 prints "??"); -1: unknown. */
int sbt_kernel_names_lf(void);
/* Read (write = 0) or write one byte at in a child: its wait status. */
int sbt_poke(void *at, int write);

/*
 * Run this test binary again as "PROG mode" in a fresh process (a fresh
 * probe), with SECBUF_LOCK set to secbuf_lock unless NULL, env added,
 * before_exec run, under the given seccomp rules.  Returns the wait
 * status; stderr goes to msg.
 */
struct sbt_self {
	const char *mode;
	const char *secbuf_lock;
	const struct sbt_deny *deny;
	size_t ndeny;
	const char *env;		/* "NAME=value" to add, or NULL */
	void (*before_exec)(void);	/* or NULL; exits on failure */
};
int sbt_run_self(const struct sbt_self *se, char *msg, size_t len);

#endif
