/* Locking: the probed or forced method, limits, lock on fault, populate. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "kfacts.h"
#include "tests.h"

/*
 * Independent of the library's proof (another call that must succeed):
 * what the kernel says the default must be.
 */
static int kernel_default_method(void)
{
	void *p = mmap(NULL, sbt_page(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int m = SECBUF_LOCK_MLOCK;

	if (p == MAP_FAILED)
		return -1;
	if (syscall(SYS_mlock2, p, 0, MLOCK_LOCKED) == 0)
		m = SECBUF_LOCK_MAP_LOCKONFAULT;
	else if (syscall(SYS_mlock2, p, 0, MLOCK_ONFAULT) == 0)
		m = SECBUF_LOCK_MLOCK2_ONFAULT;
	munmap(p, sbt_page());
	return m;
}

START_TEST(forced_method_missing_is_error)
{
	int lines;

	sbt_need_missing_method();
	lines = sbt_maps_lines();
	errno = 0;
	ck_assert_int_eq(secbuf_lock_method(), -1);
	ck_assert_int_eq(errno, ENOSYS);
	errno = 0;
	ck_assert_ptr_null(secbuf_alloc_flags(4096, SECBUF_BEST_EFFORT));
	ck_assert_int_eq(errno, ENOSYS);
	ck_assert_int_eq(sbt_maps_lines(), lines);
}
END_TEST

START_TEST(lock_method_expected)
{
	const char *forced = getenv("SECBUF_LOCK");
	const char *expect = getenv("SECBUF_EXPECT_METHOD");
	int m;

	sbt_need_method();
	m = secbuf_lock_method();
	ck_assert_int_ge(m, SECBUF_LOCK_MAP_LOCKONFAULT);
	if (forced && *forced)
		ck_assert_str_eq(secbuf_lock_method_name(m), forced);
	else
		ck_assert_int_eq(m, kernel_default_method());
	if (expect && *expect && !(forced && *forced))
		ck_assert_str_eq(secbuf_lock_method_name(m), expect);
	printf("# REPORT: libsecbuf lock method %s%s, %zu KiB pages\n", secbuf_lock_method_name(m),
	       forced && *forced ? " (forced)" : "", sbt_page() / 1024);
}
END_TEST

START_TEST(method_names)
{
	ck_assert_str_eq(secbuf_lock_method_name(SECBUF_LOCK_MAP_LOCKONFAULT), "maplockonfault");
	ck_assert_str_eq(secbuf_lock_method_name(SECBUF_LOCK_MLOCK2_ONFAULT), "mlock2");
	ck_assert_str_eq(secbuf_lock_method_name(SECBUF_LOCK_MLOCK), "mlock");
	ck_assert_str_eq(secbuf_lock_method_name(SECBUF_LOCK_NONE), "none");
	ck_assert_str_eq(secbuf_lock_method_name(SECBUF_LOCK_SECRETMEM), "secretmem");
	ck_assert_ptr_null(secbuf_lock_method_name(-1));
	ck_assert_ptr_null(secbuf_lock_method_name(SECBUF_LOCK_SECRETMEM + 1));
}
END_TEST

/* Runs as "secbuf-tests --bogus-env" with SECBUF_LOCK=bogus. */
int bogus_env_main(void)
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

/* "secretmem" names a tier of SECBUF_SECRET buffers, not a process's method. */
START_TEST(bad_secbuf_lock_is_einval)
{
	static const char *const bad[] = { "bogus", "secretmem" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct sbt_self se = { .mode = "--bogus-env", .secbuf_lock = bad[i] };
		char msg[256];
		int st = sbt_run_self(&se, msg, sizeof(msg));

		ck_assert_msg(sbt_exited_ok(st),
			      "SECBUF_LOCK=%s: status %#x (exit %d = failed step) %s", bad[i], st,
			      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	}
}
END_TEST

START_TEST(no_lock_strict_fails)
{
	sbt_need_method();
	if (sbt_locks(0))
		sbt_skip("this method locks lazy buffers");
	/* Under mlock and none, a lazy strict buffer has no lock to get. */
	expect_alloc_fails(4096, 0, EOPNOTSUPP, EOPNOTSUPP);
	if (sbt_method() == SECBUF_LOCK_NONE)
		expect_alloc_fails(4096, SECBUF_POPULATE, EOPNOTSUPP, EOPNOTSUPP);
}
END_TEST

/*
 * Child as nobody under a 16-page RLIMIT_MEMLOCK (64 KiB of 4 KiB pages,
 * 1 MiB of 64 KiB ones: still less than a MiB buffer and its canary page);
 * exit code = failed step.
 */
static void limited_child(void *arg)
{
	struct rlimit rl = { 16 * sbt_page(), 16 * sbt_page() };
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
	int st;

	sbt_need_method();
	sbt_need_root();
	st = sbt_child(limited_child, NULL, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "child status %#x (exit %d = failed step), stderr: %s",
		      st, WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

START_TEST(lock_on_fault_256m)
{
	size_t size = 256 * MiB, page = sbt_page();
	unsigned char *p;
	long rss0 = -1, locked0 = -1, rss = -1, locked = -1;
	struct secbuf_stat st;

	sbt_need_method();
	p = secbuf_alloc_flags(size, sbt_flags(0));
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
	unsigned f;
	unsigned char *p;
	long rss = -1, locked = -1;
	struct secbuf_stat st;

	sbt_need_method();
	f = sbt_flags(SECBUF_POPULATE);
	p = secbuf_alloc_flags(size, f);
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

const struct sbt_test lock_tests[] = {
	SBT(forced_method_missing_is_error),
	SBT(lock_method_expected),
	SBT(method_names),
	SBT(bad_secbuf_lock_is_einval),
	SBT(no_lock_strict_fails),
	SBT(memlock_limit_as_nobody),
	SBT(lock_on_fault_256m),
	SBT(populate_locks_all),
	SBT_END,
};
