/*
 * libsecbuf tests.  Run once per lock method (SECBUF_LOCK); every test
 * derives what it expects from the method in effect.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "harness.h"

/* munlock2() and munlockall2() of the kernel series (kernel/patches) */
#ifndef __NR_munlock2
#define __NR_munlock2		900
#define __NR_munlockall2	901
#endif

#define MiB (1024UL * 1024)
#define KB(pages) ((long)((pages) * sbt_page() / 1024))

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

static int is_signal(int status, int sig)
{
	return status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

static int exited_ok(int status)
{
	return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ---- method ---- */

/* Independent of the library: what the kernel says the default must be. */
static int kernel_default_method(void)
{
	void *p = mmap(NULL, sbt_page(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int m = SECBUF_LOCK_MLOCK;

	if (p == MAP_FAILED)
		return -1;
	if (syscall(SYS_mlock2, p, 0, 0x02) == 0)
		m = SECBUF_LOCK_MAP_LOCKONFAULT;
	else if (syscall(SYS_mlock2, p, 0, 0x01) == 0)
		m = SECBUF_LOCK_MLOCK2_ONFAULT;
	munmap(p, sbt_page());
	return m;
}

START_TEST(lock_method_expected)
{
	const char *forced = getenv("SECBUF_LOCK");
	const char *expect = getenv("SECBUF_EXPECT_METHOD");
	int m = secbuf_lock_method();

	ck_assert_int_ge(m, SECBUF_LOCK_MAP_LOCKONFAULT);
	if (forced && *forced)
		ck_assert_str_eq(secbuf_lock_method_name(m), forced);
	else
		ck_assert_int_eq(m, kernel_default_method());
	if (expect && *expect && !(forced && *forced))
		ck_assert_str_eq(secbuf_lock_method_name(m), expect);
	printf("# REPORT: libsecbuf lock method %s%s\n", secbuf_lock_method_name(m),
	       forced && *forced ? " (forced)" : "");
}
END_TEST

START_TEST(method_names)
{
	ck_assert_str_eq(secbuf_lock_method_name(SECBUF_LOCK_MAP_LOCKONFAULT), "maplockonfault");
	ck_assert_str_eq(secbuf_lock_method_name(SECBUF_LOCK_MLOCK2_ONFAULT), "mlock2");
	ck_assert_str_eq(secbuf_lock_method_name(SECBUF_LOCK_MLOCK), "mlock");
	ck_assert_str_eq(secbuf_lock_method_name(SECBUF_LOCK_NONE), "none");
	ck_assert_ptr_null(secbuf_lock_method_name(-1));
	ck_assert_ptr_null(secbuf_lock_method_name(SECBUF_LOCK_NONE + 1));
}
END_TEST

/* ---- sizes and errors ---- */

static void expect_fail(size_t size, unsigned flags, int err1, int err2)
{
	int lines = sbt_maps_lines();

	errno = 0;
	ck_assert_ptr_null(secbuf_alloc_flags(size, flags));
	ck_assert_msg(errno == err1 || errno == err2, "size %zu flags %#x: errno %d (%s)",
		      size, flags, errno, strerror(errno));
	ck_assert_int_eq(sbt_maps_lines(), lines);
}

START_TEST(alloc_zero_einval)
{
	int lines = sbt_maps_lines();

	errno = 0;
	ck_assert_ptr_null(secbuf_alloc(0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(sbt_maps_lines(), lines);
	expect_fail(0, sbt_flags(0), EINVAL, EINVAL);
}
END_TEST

START_TEST(alloc_bad_flags_einval)
{
	expect_fail(64, 0x80, EINVAL, EINVAL);
}
END_TEST

START_TEST(alloc_huge_enomem)
{
	unsigned f = sbt_flags(0);

	expect_fail(SIZE_MAX, f, ENOMEM, ENOMEM);
	expect_fail(SIZE_MAX - sbt_page(), f, ENOMEM, ENOMEM);
	expect_fail(SIZE_MAX / 2, f, ENOMEM, ENOMEM);
	expect_fail((size_t)1 << 50, f, ENOMEM, ENOMEM);	/* beyond the address space */
}
END_TEST

START_TEST(free_null_noop)
{
	int lines = sbt_maps_lines();

	errno = 1234;
	secbuf_free(NULL);
	ck_assert_int_eq(errno, 1234);
	ck_assert_int_eq(sbt_maps_lines(), lines);
	ck_assert_uint_eq(secbuf_size(NULL), 0);
}
END_TEST

START_TEST(no_lock_strict_fails)
{
	/* Under mlock and none, a lazy strict buffer has no lock to get. */
	expect_fail(4096, 0, EOPNOTSUPP, EOPNOTSUPP);
	if (sbt_method() == SECBUF_LOCK_NONE)
		expect_fail(4096, SECBUF_POPULATE, EOPNOTSUPP, EOPNOTSUPP);
}
END_TEST

static const char *needs_no_lazy_lock(void)
{
	return sbt_locks(0) ? "this method locks lazy buffers" : NULL;
}

START_TEST(size_align_and_stat)
{
	static const size_t sizes[] = { 1, 15, 16, 17, 31, 4080, 4081, 4095, 4096, 4097,
					100000, 3 * MiB + 5 };
	size_t i, page = sbt_page();

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		unsigned char *p = secbuf_alloc_flags(n, sbt_flags(0));
		struct secbuf_stat st;

		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		ck_assert_uint_eq(secbuf_size(p), n);
		/* Flush: the 16-aligned end is the page end. */
		ck_assert_uint_eq((uintptr_t)(p + sbt_round16(n)) % page, 0);
		memset(p, 0x5a, n);
		ck_assert_int_eq(secbuf_stat(p, &st), 0);
		ck_assert_uint_eq(st.size, n);
		ck_assert_uint_eq(st.mapped_bytes % page, 0);
		ck_assert_uint_ge(st.mapped_bytes, sbt_round16(n) + 16);
		ck_assert_uint_lt(st.mapped_bytes, sbt_round16(n) + 16 + page);
		ck_assert_uint_ge(st.resident_pages, (n + page - 1) / page);
		ck_assert_uint_le(st.resident_pages, st.mapped_bytes / page);
		ck_assert_uint_eq(st.locked_pages, sbt_locks(0) ? st.resident_pages : 0);
		ck_assert_int_eq(st.lock_method, sbt_locks(0) ? sbt_method() : SECBUF_LOCK_NONE);
		ck_assert_uint_eq(st.flags, sbt_flags(0));
		secbuf_free(p);
	}
	errno = 0;
	ck_assert_int_eq(secbuf_stat(NULL, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* ---- guards and corruption ---- */

struct poke {
	volatile unsigned char *at;
	int write;
};

static void do_poke(void *arg)
{
	struct poke *pk = arg;

	if (pk->write)
		*pk->at = 1;
	else
		(void)*pk->at;
}

static int poke_status(void *at, int write)
{
	struct poke pk = { at, write };
	char msg[512];

	return sbt_child(do_poke, &pk, msg, sizeof(msg));
}

START_TEST(overflow_faults)
{
	static const size_t sizes[] = { 16, 17, 4096, 100, 65536 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = secbuf_alloc_flags(sizes[i], sbt_flags(0));

		ck_assert_ptr_nonnull(p);
		/* Last aligned byte is fine, the next one is in the guard. */
		ck_assert(exited_ok(poke_status(p + sbt_round16(sizes[i]) - 1, 1)));
		ck_assert_msg(is_signal(poke_status(p + sbt_round16(sizes[i]), 1), SIGSEGV),
			      "one byte past size %zu did not fault", sizes[i]);
		secbuf_free(p);
	}
}
END_TEST

START_TEST(underflow_guard_faults)
{
	unsigned char *p = secbuf_alloc_flags(5000, sbt_flags(0));
	unsigned char *start;

	ck_assert_ptr_nonnull(p);
	start = sbt_data_start(p);
	ck_assert_ptr_nonnull(start);
	ck_assert(exited_ok(poke_status(start, 1)));
	ck_assert(is_signal(poke_status(start - 1, 0), SIGSEGV));
	ck_assert(is_signal(poke_status(start - 1, 1), SIGSEGV));
	secbuf_free(p);
}
END_TEST

struct misuse {
	int kind;
	size_t size;
};

/* Free p, let an ordinary mapping take its address, free p again. */
static void reuse_then_free(unsigned char *p)
{
	void *page = (void *)((uintptr_t)p & ~(uintptr_t)(sbt_page() - 1));

	secbuf_free(p);
	if (mmap(page, sbt_page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_FIXED_NOREPLACE, -1, 0) != page)
		_exit(4);
	secbuf_free(p);
}

static void do_misuse(void *arg)
{
	struct misuse *mu = arg;
	unsigned char *p = secbuf_alloc_flags(mu->size, sbt_flags(0));
	char local[32];

	if (!p)
		_exit(3);
	switch (mu->kind) {
	case 0: p[-1] ^= 1; secbuf_free(p); break;		/* underflow into canary */
	case 1: p[mu->size] ^= 1; secbuf_free(p); break;	/* overflow into padding */
	case 2: secbuf_free(p); secbuf_free(p); break;		/* double free */
	case 3: secbuf_free(malloc(64)); break;			/* heap pointer */
	case 4: secbuf_free(local); break;			/* stack pointer */
	case 5: secbuf_free(p + 16); break;			/* inside a buffer */
	case 6: (void)secbuf_size(p + 1); break;
	case 7: secbuf_protect(local, SECBUF_READONLY); break;
	case 8: { struct secbuf_stat st; secbuf_stat(p - 16, &st); break; }
	case 9: p[-16] ^= 0x80; secbuf_free(p); break;	/* first canary byte */
	case 10: reuse_then_free(p); break;
	case 11: secbuf_free(p + mu->size / 2 + 3); break;	/* deep inside, unaligned */
	}
	_exit(0);
}

START_TEST(corruption_aborts)
{
	static const struct { struct misuse mu; const char *says; } cases[] = {
		{ { 0, 64 }, "underflow" },
		{ { 9, 4096 }, "underflow" },
		{ { 1, 17 }, "overflow" },
		{ { 1, 4095 }, "overflow" },
		{ { 2, 64 }, "double free" },
		{ { 3, 64 }, "foreign pointer" },
		{ { 4, 64 }, "foreign pointer" },
		{ { 5, 64 }, "inside the live buffer" },
		{ { 11, 3 * 4096 }, "inside the live buffer" },
		{ { 10, 64 }, "double free" },
		{ { 6, 64 }, "secbuf_size" },
		{ { 7, 64 }, "secbuf_protect" },
		{ { 8, 64 }, "secbuf_stat" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct misuse mu = cases[i].mu;
		char msg[512];
		int st = sbt_child(do_misuse, &mu, msg, sizeof(msg));

		ck_assert_msg(is_signal(st, SIGABRT), "case %zu: status %#x, stderr: %s", i, st, msg);
		ck_assert_msg(strstr(msg, cases[i].says), "case %zu: message '%s' lacks '%s'",
			      i, msg, cases[i].says);
	}
}
END_TEST

/* ---- limits ---- */

/* Child as nobody under a 64 KiB RLIMIT_MEMLOCK; exit code = failed step. */
static void limited_child(void *arg)
{
	struct rlimit rl = { 64 * 1024, 64 * 1024 };
	struct secbuf_stat st;
	/* mlock locks only eager buffers. */
	unsigned flags = sbt_method() == SECBUF_LOCK_MLOCK ? SECBUF_POPULATE : 0;
	int lines;
	void *p;

	(void)arg;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(10);
	/* Warm up the registry: its heap may add a mapping once. */
	p = secbuf_alloc_flags(16, SECBUF_BEST_EFFORT);
	if (!p)
		_exit(9);
	secbuf_free(p);
	lines = sbt_maps_lines();
	errno = 0;
	if (secbuf_alloc_flags(MiB, flags))
		_exit(11);
	if (sbt_method() == SECBUF_LOCK_NONE ? errno != EOPNOTSUPP :
	    errno != EAGAIN && errno != ENOMEM) {
		fprintf(stderr, "errno %d (%s)\n", errno, strerror(errno));
		_exit(12);
	}
	if (sbt_maps_lines() != lines)
		_exit(13);
	/* The same request, best effort: unlocked but usable. */
	p = secbuf_alloc_flags(MiB, flags | SECBUF_BEST_EFFORT);
	if (!p || secbuf_stat(p, &st) < 0)
		_exit(14);
	memset(p, 1, MiB);
	if (secbuf_stat(p, &st) < 0 || st.lock_method != SECBUF_LOCK_NONE || st.locked_pages)
		_exit(15);
	secbuf_free(p);
	/* A small buffer fits under the limit and is locked. */
	if (sbt_method() != SECBUF_LOCK_NONE) {
		p = secbuf_alloc_flags(4096, flags);
		if (!p || secbuf_stat(p, &st) < 0 || st.lock_method == SECBUF_LOCK_NONE)
			_exit(16);
		secbuf_free(p);
	}
	if (sbt_maps_lines() != lines)
		_exit(17);
	_exit(0);
}

START_TEST(memlock_limit_as_nobody)
{
	char msg[512];
	int st = sbt_child(limited_child, NULL, msg, sizeof(msg));

	ck_assert_msg(exited_ok(st), "child status %#x (exit %d = failed step), stderr: %s",
		      st, WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

static const char *needs_root(void)
{
	return geteuid() == 0 ? NULL : "needs root to setuid(65534)";
}

/* ---- lock on fault ---- */

START_TEST(lock_on_fault_256m)
{
	size_t size = 256 * MiB, page = sbt_page();
	unsigned char *p = secbuf_alloc_flags(size, sbt_flags(0));
	long rss0 = -1, locked0 = -1, rss = -1, locked = -1;
	struct secbuf_stat st;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sbt_smaps(p, &rss0, &locked0, NULL, 0), 0);
	/* Only the canary's page is in before the caller touches anything. */
	ck_assert_int_eq(rss0, KB(1));
	p[0] = 1;
	p[size / 2] = 2;
	p[size - 1] = 3;
	ck_assert_int_eq(sbt_smaps(p, &rss, &locked, NULL, 0), 0);
	ck_assert_int_eq(rss, rss0 + KB(3));
	ck_assert_int_eq(locked, sbt_locks(0) ? rss : 0);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	ck_assert_int_eq((long)st.resident_pages, rss / (long)(page / 1024));
	printf("# REPORT: 256 MiB buffer, 3 pages touched: Rss %ld kB, Locked %ld kB (%s)\n",
	       rss, locked, secbuf_lock_method_name(st.lock_method));
	secbuf_free(p);
}
END_TEST

START_TEST(populate_locks_all)
{
	size_t size = 4 * MiB;
	unsigned f = sbt_flags(SECBUF_POPULATE);
	unsigned char *p = secbuf_alloc_flags(size, f);
	long rss = -1, locked = -1;
	struct secbuf_stat st;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	ck_assert_int_eq(sbt_smaps(p, &rss, &locked, NULL, 0), 0);
	ck_assert_int_eq(rss, (long)(st.mapped_bytes / 1024));
	ck_assert_int_eq(locked, sbt_locks(SECBUF_POPULATE) ? rss : 0);
	ck_assert_uint_eq(st.resident_pages, st.mapped_bytes / sbt_page());
	ck_assert_uint_eq(st.flags, f);
	secbuf_free(p);
}
END_TEST

/* ---- hygiene and protection ---- */

START_TEST(vmflags_dontdump_wipeonfork)
{
	unsigned char *p = secbuf_alloc_flags(8192, sbt_flags(0));
	char flags[256] = "";
	long rss, locked;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sbt_smaps(p, &rss, &locked, flags, sizeof(flags)), 0);
	ck_assert_msg(strstr(flags, " dd"), "VmFlags:%s", flags);
	ck_assert_msg(strstr(flags, " wf"), "VmFlags:%s", flags);
	/* The guards are neither locked nor part of the data VMA. */
	ck_assert_int_eq(sbt_smaps(sbt_data_start(p) - 1, &rss, &locked, flags, sizeof(flags)), 0);
	ck_assert_int_eq(locked, 0);
	ck_assert_msg(!strstr(flags, " lo"), "guard VmFlags:%s", flags);
	secbuf_free(p);
}
END_TEST

static void child_reads_zeros(void *arg)
{
	const unsigned char *p = arg;
	size_t i;

	for (i = 0; i < 3 * 4096; i++)
		if (p[i])
			_exit(1);
	_exit(0);
}

START_TEST(fork_child_sees_zeros)
{
	unsigned char *p = secbuf_alloc_flags(3 * 4096, sbt_flags(0));
	char msg[256];
	size_t i;

	ck_assert_ptr_nonnull(p);
	memset(p, 0xa5, 3 * 4096);
	ck_assert(exited_ok(sbt_child(child_reads_zeros, p, msg, sizeof(msg))));
	for (i = 0; i < 3 * 4096; i++)
		ck_assert_uint_eq(p[i], 0xa5);
	secbuf_free(p);
}
END_TEST

static const char *needs_anon_vma_name(void)
{
	static const char *why;
	static int done;
	void *p;

	if (done)
		return why;
	done = 1;
	p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED && prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, 4096, "t") < 0)
		why = "kernel lacks CONFIG_ANON_VMA_NAME";
	if (p != MAP_FAILED)
		munmap(p, 4096);
	return why;
}

START_TEST(maps_name_anon_secbuf)
{
	unsigned char *p = secbuf_alloc_flags(100, sbt_flags(0));
	char line[512];

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sbt_maps_line(p, line, sizeof(line)), 0);
	ck_assert_msg(strstr(line, "[anon:secbuf]"), "maps: %s", line);
	ck_assert_int_eq(sbt_maps_line(sbt_data_start(p) - 1, line, sizeof(line)), 0);
	ck_assert_msg(strstr(line, "[anon:secbuf]"), "guard: %s", line);
	secbuf_free(p);
}
END_TEST

START_TEST(protect_modes_enforced)
{
	unsigned char *p = secbuf_alloc_flags(5000, sbt_flags(0));

	ck_assert_ptr_nonnull(p);
	p[0] = 7;
	ck_assert_int_eq(secbuf_protect(p, SECBUF_NOACCESS), 0);
	ck_assert(is_signal(poke_status(p, 0), SIGSEGV));
	ck_assert(is_signal(poke_status(p + 4999, 1), SIGSEGV));
	ck_assert_int_eq(secbuf_protect(p, SECBUF_READONLY), 0);
	ck_assert(exited_ok(poke_status(p + 4999, 0)));
	ck_assert(is_signal(poke_status(p, 1), SIGSEGV));
	ck_assert_uint_eq(p[0], 7);
	ck_assert_int_eq(secbuf_protect(p, SECBUF_READWRITE), 0);
	ck_assert(exited_ok(poke_status(p, 1)));
	p[4999] = 1;
	errno = 0;
	ck_assert_int_eq(secbuf_protect(p, 3), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(secbuf_protect(NULL, SECBUF_READONLY), -1);
	/* Free accepts a protected buffer: it unprotects before the wipe. */
	ck_assert_int_eq(secbuf_protect(p, SECBUF_NOACCESS), 0);
	secbuf_free(p);
}
END_TEST

/* ---- wipe cost ---- */

START_TEST(free_1g_costs_resident_only)
{
	size_t size = 1024 * MiB;
	unsigned char *p = secbuf_alloc_flags(size, sbt_flags(0));
	struct secbuf_stat st;
	struct rusage before, after;
	long faults;

	ck_assert_ptr_nonnull(p);
	memset(p + 12345, 0x77, 100);	/* one used page */
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &before), 0);
	secbuf_free(p);
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &after), 0);
	faults = after.ru_minflt - before.ru_minflt;
	printf("# REPORT: free of 1 GiB with %zu resident pages: %ld minor faults\n",
	       st.resident_pages, faults);
	ck_assert_int_le(faults, (long)st.resident_pages);
	ck_assert_uint_le(st.resident_pages, 2);
}
END_TEST

/*
 * Pages only read are resident as the zero page: wiping them would fault
 * in fresh pages.  Free may cost no more faults than pages written.
 */
START_TEST(free_leaves_read_pages_alone)
{
	size_t size = 64 * MiB, page = sbt_page(), i;
	unsigned char *p = secbuf_alloc_flags(size, sbt_flags(0));
	struct secbuf_stat st;
	struct rusage before, after;
	long faults;

	ck_assert_ptr_nonnull(p);
	p[0] = 1;
	for (i = 1; i <= 64; i++)
		(void)*(volatile unsigned char *)(p + i * page);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	ck_assert_uint_ge(st.resident_pages, 65);
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &before), 0);
	secbuf_free(p);
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &after), 0);
	faults = after.ru_minflt - before.ru_minflt;
	printf("# REPORT: free of 64 MiB with %zu resident pages (64 only read): "
	       "%ld minor faults\n", st.resident_pages, faults);
	/* At most the pages written (p[0] and the canary): those are resident. */
	ck_assert_int_le(faults, 2);
}
END_TEST

/* ---- threads ---- */

struct stress_arg {
	unsigned seed;
	int rounds;
};

#define LIVE 40	/* per thread: 320 live buffers make the registry grow */

/* Check that every byte of a live buffer still holds its own pattern. */
static long corrupt(const unsigned char *p, size_t n, unsigned char fill)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != fill)
			return 1;
	return 0;
}

static void *stress(void *arg)
{
	struct stress_arg *sa = arg;
	unsigned char *live[LIVE] = { 0 };
	size_t len[LIVE] = { 0 };
	unsigned seed = sa->seed;
	long bad = 0;
	int i;

	for (i = 0; i < sa->rounds; i++) {
		int k = rand_r(&seed) % LIVE;
		unsigned char fill = (unsigned char)(sa->seed * 31 + k);
		struct secbuf_stat st;

		if (live[k]) {
			bad += secbuf_protect(live[k], SECBUF_READONLY) != 0;
			bad += secbuf_size(live[k]) != len[k];
			bad += secbuf_stat(live[k], &st) != 0 || st.size != len[k];
			bad += corrupt(live[k], len[k], fill);
			secbuf_free(live[k]);
			live[k] = NULL;
			continue;
		}
		len[k] = 1 + rand_r(&seed) % 20000;
		live[k] = secbuf_alloc_flags(len[k], sbt_flags(0));
		if (!live[k]) {
			bad++;
			continue;
		}
		memset(live[k], fill, len[k]);
	}
	for (i = 0; i < LIVE; i++) {
		if (live[i])
			bad += corrupt(live[i], len[i], (unsigned char)(sa->seed * 31 + i));
		secbuf_free(live[i]);
	}
	return (void *)bad;
}

static long run_threads(void *(*fn)(void *), int rounds)
{
	struct stress_arg args[8];
	pthread_attr_t attr;
	pthread_t t[8];
	void *bad;
	long total = 0;
	int i;

	/* Small stacks stay in glibc's stack cache: no maps churn between runs. */
	ck_assert_int_eq(pthread_attr_init(&attr), 0);
	ck_assert_int_eq(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
	for (i = 0; i < 8; i++) {
		args[i] = (struct stress_arg){ i + 1, rounds };
		ck_assert_int_eq(pthread_create(&t[i], &attr, fn, &args[i]), 0);
	}
	pthread_attr_destroy(&attr);
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(pthread_join(t[i], &bad), 0);
		total += (long)bad;
	}
	return total;
}

/* One live buffer per thread: leaked regions would add maps lines. */
static void *churn(void *arg)
{
	struct stress_arg *sa = arg;
	unsigned seed = sa->seed;
	long bad = 0;
	int i;

	for (i = 0; i < sa->rounds; i++) {
		size_t n = 1 + rand_r(&seed) % 20000;
		unsigned char *p = secbuf_alloc_flags(n, sbt_flags(0));

		if (!p) {
			bad++;
			continue;
		}
		memset(p, i & 0xff, n);
		bad += secbuf_protect(p, SECBUF_READONLY) != 0;
		bad += p[n - 1] != (i & 0xff);
		bad += secbuf_protect(p, SECBUF_READWRITE) != 0;
		secbuf_free(p);
	}
	return (void *)bad;
}

START_TEST(threads_8_no_leak)
{
	int lines;

	/*
	 * Thread stacks stay cached after a warm-up; per-thread malloc arenas
	 * would not, so use one.  Valgrind maps memory for its threads as it
	 * likes: there, no line count.
	 */
	mallopt(M_ARENA_MAX, 1);
	ck_assert_int_eq(run_threads(churn, 20), 0);
	lines = sbt_maps_lines();
	ck_assert_int_eq(run_threads(churn, 300), 0);
	if (!sbt_under_valgrind())
		ck_assert_int_eq(sbt_maps_lines(), lines);
}
END_TEST

/* Up to 320 live buffers at once: the registry grows under contention. */
START_TEST(threads_8_stress)
{
	ck_assert_int_eq(run_threads(stress, 600), 0);
}
END_TEST

static const char *unsupported;	/* why the forced method can't run, or NULL */

/* ---- failures after the mapping exists (injected with seccomp) ---- */

struct inject {
	struct sbt_deny deny;
	unsigned flags;
	int err;	/* expected errno */
};

/* Exit code = failed step: the call must fail with err and unmap it all. */
static void injected_child(void *arg)
{
	const struct inject *in = arg;
	void *p = secbuf_alloc_flags(16, SECBUF_BEST_EFFORT);	/* registry warm-up */
	int lines;

	secbuf_free(p);
	lines = sbt_maps_lines();
	if (!p || sbt_deny_syscalls(&in->deny, 1) < 0)
		_exit(10);
	errno = 0;
	if (secbuf_alloc_flags(3 * 4096, in->flags))
		_exit(11);
	if (errno != in->err)
		_exit(12);
	_exit(sbt_maps_lines() == lines ? 0 : 13);
}

START_TEST(failure_after_mmap_unmaps)
{
	const struct inject cases[] = {
		{ { SYS_madvise, 2, MADV_DONTDUMP, ~0u, EPERM }, sbt_flags(0), EPERM },
		{ { SYS_madvise, 2, MADV_WIPEONFORK, ~0u, EPERM }, sbt_flags(0), EPERM },
		{ { SYS_prctl, 0, PR_SET_VMA, ~0u, EPERM }, sbt_flags(0), EPERM },
		{ { SYS_mlock2, -1, 0, 0, ENOMEM }, 0, ENOMEM },
		{ { SYS_mlock, -1, 0, 0, ENOMEM }, SECBUF_POPULATE, ENOMEM },
		{ { SYS_mmap, 3, 0x400000, 0x400000, EAGAIN }, 0, EAGAIN },
	};
	static const int lock_case[] = { -1, -1, -1, SECBUF_LOCK_MLOCK2_ONFAULT,
					  SECBUF_LOCK_MLOCK, SECBUF_LOCK_MAP_LOCKONFAULT };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char msg[256];
		int st;

		/* A lock failure only happens under the method that locks that way. */
		if (lock_case[i] >= 0 && lock_case[i] != sbt_method())
			continue;
		st = sbt_child(injected_child, (void *)&cases[i], msg, sizeof(msg));
		ck_assert_msg(exited_ok(st), "case %zu: status %#x (exit %d = failed step) %s",
			      i, st, WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	}
}
END_TEST

static const char *needs_method_and_seccomp(void)
{
	if (unsupported)
		return unsupported;
	return sbt_under_valgrind() ? "seccomp filters would also act on valgrind itself" : NULL;
}

/* ---- SECBUF_LOCK naming no method (checked in a fresh process) ---- */

/* Runs as "secbuf-tests --bogus-env" with SECBUF_LOCK=bogus. */
static int bogus_env_main(void)
{
	int lines = sbt_maps_lines();

	errno = 0;
	if (secbuf_lock_method() != -1 || errno != EINVAL)
		return 1;
	errno = 0;
	if (secbuf_alloc_flags(64, SECBUF_BEST_EFFORT) || errno != EINVAL)
		return 2;
	return sbt_maps_lines() == lines ? 0 : 3;
}

/* ---- first use from many threads, in a fresh process ---- */

struct first_use {
	pthread_barrier_t *go;
	int method;
	long bad;
};

static void *first_use(void *arg)
{
	struct first_use *fu = arg;
	void *p;

	pthread_barrier_wait(fu->go);
	fu->method = secbuf_lock_method();
	p = secbuf_alloc_flags(100, SECBUF_BEST_EFFORT);
	fu->bad = !p || secbuf_size(p) != 100;
	secbuf_free(p);
	return NULL;
}

/*
 * Runs as "secbuf-tests --first-use": 8 threads race the once-only probe;
 * all must see one method.  The parent's seccomp filter kills the process
 * if anything calls munlock2() or munlockall2() on a kernel that lacks
 * the series.
 */
static int first_use_main(void)
{
	struct first_use fu[8];
	pthread_barrier_t go;
	pthread_t t[8];
	int i, rc = 0;

	if (pthread_barrier_init(&go, NULL, 8))
		return 1;
	for (i = 0; i < 8; i++) {
		fu[i] = (struct first_use){ &go, -2, 1 };
		if (pthread_create(&t[i], NULL, first_use, &fu[i]))
			return 2;
	}
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		rc |= fu[i].bad || fu[i].method != fu[0].method ? 3 : 0;
	}
	pthread_barrier_destroy(&go);
	return fu[0].method == secbuf_lock_method() ? rc : 4;
}

static char *self;	/* argv[0]; not /proc/self/exe, which is valgrind under it */

struct self_exec {
	const char *mode;
	const char *secbuf_lock;	/* NULL: as inherited */
	int no_munlock2;		/* kill the process on munlock2/munlockall2 */
};

static void exec_self(void *arg)
{
	const struct self_exec *se = arg;
	const struct sbt_deny deny[] = {
		{ __NR_munlock2, -1, 0, 0, 0 },
		{ __NR_munlockall2, -1, 0, 0, 0 },
	};
	char *const argv[] = { self, (char *)se->mode, NULL };

	if (se->secbuf_lock && setenv("SECBUF_LOCK", se->secbuf_lock, 1) < 0)
		_exit(126);
	if (se->no_munlock2 && sbt_deny_syscalls(deny, 2) < 0)
		_exit(125);
	execvp(self, argv);
	_exit(127);
}

static void expect_self_exec(const struct self_exec *se)
{
	char msg[256];
	int st = sbt_child(exec_self, (void *)se, msg, sizeof(msg));

	ck_assert_msg(exited_ok(st), "%s: status %#x (exit %d = failed step) %s", se->mode,
		      st, WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}

START_TEST(bad_secbuf_lock_is_einval)
{
	const struct self_exec se = { "--bogus-env", "bogus", 0 };

	expect_self_exec(&se);
}
END_TEST

START_TEST(first_use_threads_no_munlock2)
{
	/* munlock2/munlockall2 exist only where the probe says so. */
	const struct self_exec se = { "--first-use", NULL,
				      sbt_method() != SECBUF_LOCK_MAP_LOCKONFAULT };

	expect_self_exec(&se);
}
END_TEST

/* ---- a forced method the kernel lacks ---- */

START_TEST(forced_method_missing_is_error)
{
	int lines = sbt_maps_lines();

	errno = 0;
	ck_assert_int_eq(secbuf_lock_method(), -1);
	ck_assert_int_eq(errno, ENOSYS);
	errno = 0;
	ck_assert_ptr_null(secbuf_alloc_flags(4096, SECBUF_BEST_EFFORT));
	ck_assert_int_eq(errno, ENOSYS);
	ck_assert_int_eq(sbt_maps_lines(), lines);
}
END_TEST

static const char *needs_method(void)
{
	return unsupported;
}

static const char *needs_missing_method(void)
{
	return unsupported ? NULL : "the forced method is supported";
}

static const char *needs_lazy_lock_gap(void)
{
	return unsupported ? unsupported : needs_no_lazy_lock() ? "this method locks lazy buffers" : NULL;
}

static const char *needs_root_and_method(void)
{
	return unsupported ? unsupported : needs_root();
}

static const char *needs_name_and_method(void)
{
	return unsupported ? unsupported : needs_anon_vma_name();
}

static const char *needs_method_no_valgrind(void)
{
	if (unsupported)
		return unsupported;
	return sbt_under_valgrind() ? "valgrind's shadow memory takes page faults of its own" : NULL;
}

int main(int argc, char **argv)
{
	static char why[128];
	const char *forced = getenv("SECBUF_LOCK");
	const struct sbt_test tests[] = {
		SBT(forced_method_missing_is_error, needs_missing_method),
		SBT(lock_method_expected, needs_method),
		SBT(method_names, NULL),
		SBT(bad_secbuf_lock_is_einval, NULL),
		SBT(first_use_threads_no_munlock2, needs_method_and_seccomp),
		SBT(alloc_zero_einval, needs_method),
		SBT(alloc_bad_flags_einval, needs_method),
		SBT(alloc_huge_enomem, needs_method),
		SBT(free_null_noop, NULL),
		SBT(no_lock_strict_fails, needs_lazy_lock_gap),
		SBT(size_align_and_stat, needs_method),
		SBT(overflow_faults, needs_method),
		SBT(underflow_guard_faults, needs_method),
		SBT(corruption_aborts, needs_method),
		SBT(memlock_limit_as_nobody, needs_root_and_method),
		SBT(lock_on_fault_256m, needs_method),
		SBT(populate_locks_all, needs_method),
		SBT(vmflags_dontdump_wipeonfork, needs_method),
		SBT(fork_child_sees_zeros, needs_method),
		SBT(maps_name_anon_secbuf, needs_name_and_method),
		SBT(protect_modes_enforced, needs_method),
		SBT(free_1g_costs_resident_only, needs_method_no_valgrind),
		SBT(free_leaves_read_pages_alone, needs_method_no_valgrind),
		SBT(failure_after_mmap_unmaps, needs_method_and_seccomp),
		SBT(threads_8_no_leak, needs_method),
		SBT(threads_8_stress, needs_method),
	};

	self = argv[0];
	if (argc == 2 && !strcmp(argv[1], "--bogus-env"))
		return bogus_env_main();
	if (argc == 2 && !strcmp(argv[1], "--first-use"))
		return first_use_main();
	if (secbuf_lock_method() < 0 && errno == ENOSYS) {
		snprintf(why, sizeof(why), "SECBUF_LOCK=%s: not supported by this %s", forced,
			 sbt_under_valgrind() ? "valgrind (no mlock2 syscall)" : "kernel");
		unsupported = why;
		printf("# SKIP: %s\n", why);
	}
	return sbt_run("libsecbuf", tests, sizeof(tests) / sizeof(tests[0]));
}
