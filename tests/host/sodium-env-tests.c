/*
 * libsecbuf-sodium.so's environment (SECBUF_STRICT, SECBUF_SECRET,
 * SECBUF_PURGE_ON_CRASH, SECBUF_DEBUG, SECBUF_LOCK) and refusals by a
 * sandbox or RLIMIT_MEMLOCK, each in a fresh process, with what the
 * drop-in says about them; and the test binary's main (sodium-tests.c:
 * the memory).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sodium.h>
#include <secbuf.h>
#include "kfacts.h" /* lockonfault_series() */
#include "sodium-tests.h"

#ifndef MAP_LOCKONFAULT
#define MAP_LOCKONFAULT 0x400000
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

/* Fresh processes in which every lazy lock is refused. */
static const struct sbt_deny no_lock[] = {
	{ SYS_mlock2, -1, 0, 0, EPERM },
	{ SYS_mmap, 3, MAP_LOCKONFAULT, MAP_LOCKONFAULT, EPERM },
};

static void no_forced_method(void)
{
	unsetenv("SECBUF_LOCK");
}

static int refused_main(void)
{
	unsigned char *p[3];
	int i;

	for (i = 0; i < 3; i++) {
		p[i] = sodium_malloc(4096);
		if (!p[i])
			return 2;
		memset(p[i], i, 4096);
	}
	for (i = 0; i < 3; i++)
		sodium_free(p[i]);
	return 0;
}

static int strict_main(void)
{
	errno = 0;
	if (sodium_malloc(4096) || errno != EPERM)
		return 2;
	return 0;
}

static const unsigned char marker[16] = "sodium-secret-1";

/*
 * Under SECBUF_SECRET=1 (exit code = failed step): the memory is secret,
 * so /proc/self/mem cannot read it (the control, ordinary libsecbuf
 * memory, can), and the rest of the API works on it as on any buffer.
 */
static int secret_main(void)
{
	unsigned char *p = sodium_malloc(100), *c = secbuf_alloc_flags(100, SECBUF_BEST_EFFORT);

	if (!p || !c)
		return 2;
	memcpy(p, marker, sizeof(marker));
	memcpy(c, marker, sizeof(marker));
	errno = 0;
	if (sbt_mem_read_err(p, sizeof(marker)) != EIO)
		return 3;
	if (sbt_mem_read_err(c, sizeof(marker)) != 0)
		return 4;
	if (sodium_mprotect_readonly(p) < 0 || memcmp(p, marker, sizeof(marker)) ||
	    sodium_mprotect_readwrite(p) < 0)
		return 5;
	sodium_free(p);
	secbuf_free(c);
	return 0;
}

/* memfd_secret refused (exit code = failed step): strict fails with ENOSYS, else works. */
static int secret_refused_main(void)
{
	const char *strict = getenv("SECBUF_STRICT");
	unsigned char *p;

	errno = 0;
	p = sodium_malloc(100);
	if (strict && *strict)
		return p || errno != ENOSYS ? 2 : 0;
	if (!p)
		return 3;
	memcpy(p, marker, sizeof(marker));
	if (sbt_mem_read_err(p, sizeof(marker)) != 0) /* the fallback: ordinary locked memory */
		return 4;
	sodium_free(p);
	return 0;
}

/* One buffer, made and freed: exit 0. */
static int one_main(void)
{
	void *p = sodium_malloc(64);

	if (!p)
		return 2;
	sodium_free(p);
	return 0;
}

/* Two allocations that must fail alike: exit with their errno (100: one was made). */
static int fails_main(void)
{
	int err;

	errno = 0;
	if (sodium_malloc(4096))
		return 100;
	err = errno;
	errno = 0;
	if (sodium_malloc(4096))
		return 100;
	return errno == err ? err : 101;
}

/*
 * A buffer whose pages (with the canary's, 16 pages of 4 KiB) pass a
 * 64 KiB limit with the key's page locked, though its size alone (15
 * pages) would not: handed out unlocked, or strict, refused (exit 2: not
 * as the mode expects).
 */
#define BIG_BUT_NOT_QUITE (15 * 4096)
static int near_limit_main(void)
{
	const char *strict = getenv("SECBUF_STRICT");
	void *p;

	errno = 0;
	p = sodium_malloc(BIG_BUT_NOT_QUITE);
	if (strict && *strict)
		return p || (errno != ENOMEM && errno != EAGAIN) ? 2 : 0;
	if (!p)
		return 2;
	sodium_free(p);
	return 0;
}

/* A SECBUF_STRICT that is neither a yes nor a no: every call fails, EINVAL. */
static int bad_strict_main(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		errno = 0;
		if (sodium_malloc(4096) || errno != EINVAL)
			return 2;
	}
	errno = 0;
	if (sodium_allocarray(2, 64) || errno != EINVAL)
		return 3;
	return 0;
}

/*
 * Under SECBUF_PURGE_ON_CRASH=1: the drop-in's handler is in place before
 * main, and an overflow into the guard page is named before the process
 * dies of SIGSEGV as it would have.
 */
static int purge_env_main(void)
{
	struct sigaction sa;
	unsigned char *p;

	if (sigaction(SIGSEGV, NULL, &sa) < 0 || sa.sa_handler == SIG_DFL)
		return 2;
	p = sodium_malloc(64);
	if (!p)
		return 3;
	memset(p, 0x5a, 64);
	/* The last byte of a sodium_malloc() buffer is flush against its guard. */
	((volatile unsigned char *)p)[64] = 1;
	return 4;
}

START_TEST(purge_on_crash_from_environment)
{
	const struct sbt_self se = { .mode = "--purge-env", .env = "SECBUF_PURGE_ON_CRASH=1" };
	char msg[1024];
	int st;

	sbt_need_method();
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_signalled(st, SIGSEGV) &&
			      strstr(msg, "in the guard page after the buffer") &&
			      strstr(msg, "(64 bytes): a buffer overflow"),
		      "status %#x (exit 2: no handler before main): %s", st, msg);
}
END_TEST

static int count(const char *s, const char *needle)
{
	int n = 0;

	for (; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

START_TEST(refused_lock_warns_once)
{
	const struct sbt_self se = {
		.mode = "--refused", .deny = no_lock, .ndeny = 2, .before_exec = no_forced_method
	};
	char msg[1024];
	int st;

	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from a seccomp filter");
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x: %s", st, msg);
	ck_assert_msg(count(msg, "warning") == 1 && strstr(msg, "NOT locked") &&
			      strstr(msg, "SECBUF_STRICT=1"),
		      "expected one warning: %s", msg);
	/* Root's limit does not apply: the filter is the cause, and the fix is its. */
	ck_assert_msg(strstr(msg, "sandbox refused") && strstr(msg, "SystemCallFilter=@memlock") &&
			      !strstr(msg, "cannot lock memory on fault"),
		      "the warning blames the filter: %s", msg);
}
END_TEST

static void nobody_without_memlock(void)
{
	struct rlimit none = { 0, 0 };

	unsetenv("SECBUF_LOCK");
	if (setrlimit(RLIMIT_MEMLOCK, &none) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(124);
}

/* As nobody with ulimit -l 0: the kernel can lock on fault, the limit is the cause. */
START_TEST(zero_limit_warning_blames_the_limit)
{
	const struct sbt_self se = { .mode = "--refused", .before_exec = nobody_without_memlock };
	char msg[1024];
	int st;

	sbt_need_root();
	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from the limit");
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x: %s", st, msg);
	ck_assert_msg(count(msg, "warning") == 1 && strstr(msg, "RLIMIT_MEMLOCK is 0") &&
			      strstr(msg, "ulimit -l") && strstr(msg, "LimitMEMLOCK=") &&
			      !strstr(msg, "kernel cannot"),
		      "the warning blames RLIMIT_MEMLOCK and names the fix: %s", msg);
}
END_TEST

START_TEST(strict_refused_lock_fails)
{
	const struct sbt_self se = { .mode = "--strict",
				     .deny = no_lock,
				     .ndeny = 2,
				     .env = "SECBUF_STRICT=1",
				     .before_exec = no_forced_method };
	char msg[1024];
	int st;

	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from a seccomp filter");
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit 2: not NULL/EPERM): %s", st, msg);
	ck_assert_msg(!strstr(msg, "warning"), "strict mode warned: %s", msg);
	/* One line says which call was refused, that the filter did it, and the ways out. */
	ck_assert_msg(
		count(msg, "\n") == 1 &&
			strstr(msg, "sodium_malloc() of 4096 bytes refused (SECBUF_STRICT=1)") &&
			strstr(msg, "sandbox refused") &&
			strstr(msg, "SystemCallFilter=@memlock") && strstr(msg, "SECBUF_STRICT=0"),
		"expected one line naming the refusal: %s", msg);
}
END_TEST

/* Every spelling of a yes makes a refused lock an error; every no, a warning. */
START_TEST(strict_spellings)
{
	static const char *const yes[] = { "SECBUF_STRICT=1", "SECBUF_STRICT=true",
					   "SECBUF_STRICT=YES", "SECBUF_STRICT=On" };
	static const char *const no[] = { "SECBUF_STRICT=0", "SECBUF_STRICT=False",
					  "SECBUF_STRICT=no", "SECBUF_STRICT=OFF",
					  "SECBUF_STRICT=" };
	struct sbt_self se = { .deny = no_lock, .ndeny = 2, .before_exec = no_forced_method };
	char msg[1024], fails[2048] = "";
	size_t i;
	int st;

	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from a seccomp filter");
	se.mode = "--strict";
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		se.env = yes[i];
		st = sbt_run_self(&se, msg, sizeof(msg));
		if (!sbt_exited_ok(st) || strstr(msg, "warning"))
			sbt_note(fails, sizeof(fails),
				 "%s: status %#x (exit 2: not NULL/EPERM): %s", yes[i], st, msg);
	}
	se.mode = "--refused";
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		se.env = no[i];
		st = sbt_run_self(&se, msg, sizeof(msg));
		if (!sbt_exited_ok(st) || count(msg, "warning") != 1)
			sbt_note(fails, sizeof(fails), "%s: status %#x, want one warning: %s",
				 no[i], st, msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST

/*
 * Neither a yes nor a no: EINVAL, whatever the method (before the probe's
 * own errors), and one line naming the value, shown printable.
 */
START_TEST(strict_bad_value_is_einval)
{
	static const struct {
		const char *env, *shown;
	} cases[] = {
		{ "SECBUF_STRICT=2", "\"2\"" },
		{ "SECBUF_STRICT=enable", "\"enable\"" },
		{ "SECBUF_STRICT= yes", "\" yes\"" },
		{ "SECBUF_STRICT=on\nno", "\"on?no\"" },
		{ "SECBUF_SECRET=maybe", "SECBUF_SECRET=\"maybe\"" },
	};
	struct sbt_self se = { .mode = "--bad-strict" };
	char msg[1024], fails[2048] = "";
	size_t i;
	int st;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		se.env = cases[i].env;
		st = sbt_run_self(&se, msg, sizeof(msg));
		if (!sbt_exited_ok(st) || count(msg, "\n") != 1 || !strstr(msg, cases[i].shown) ||
		    !strstr(msg, "1, true, yes, on") || !strstr(msg, "EINVAL"))
			sbt_note(fails, sizeof(fails),
				 "case %zu: status %#x (exit 2, 3: not EINVAL), "
				 "want one line naming %s: %s",
				 i, st, cases[i].shown, msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST

static void secret_env(void)
{
	unsetenv("SECBUF_LOCK");
	setenv("SECBUF_SECRET", "1", 1);
}

START_TEST(secret_from_environment)
{
	const struct sbt_self se = { .mode = "--secret", .before_exec = secret_env };
	char msg[1024];
	int st;

	sbt_need_secretmem();
	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the secret tier takes no lock method");
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	ck_assert_msg(!strstr(msg, "warning"), "warned: %s", msg);
}
END_TEST

/* memfd_secret refused by a filter: one warning and locked memory, or with SECBUF_STRICT=1 ENOSYS. */
START_TEST(secret_refused_warns_or_fails)
{
	static const struct sbt_deny no_secret = { SYS_memfd_secret, -1, 0, 0, ENOSYS };
	struct sbt_self se = { .mode = "--secret-refused",
			       .deny = &no_secret,
			       .ndeny = 1,
			       .before_exec = secret_env };
	char msg[1024];
	int st;

	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from a seccomp filter");
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	/* ENOSYS under a filter: the filter first, then what a kernel without it lacks. */
	ck_assert_msg(count(msg, "warning") == 1 && strstr(msg, "NOT secret memory") &&
			      strstr(msg, "memfd_secret is not available (ENOSYS)") &&
			      strstr(msg, "seccomp filter may refuse it") &&
			      strstr(msg, "secretmem.enable=") && !strstr(msg, "RLIMIT_MEMLOCK is"),
		      "expected one warning: %s", msg);
	se.env = "SECBUF_STRICT=1";
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "strict: status %#x (exit 2: not NULL/ENOSYS): %s", st,
		      msg);
	ck_assert_msg(!strstr(msg, "warning"), "strict mode warned: %s", msg);
	ck_assert_msg(count(msg, "\n") == 1 &&
			      strstr(msg, "sodium_malloc() of 100 bytes refused (SECBUF_STRICT=1, "
					  "SECBUF_SECRET=1)") &&
			      strstr(msg, "memfd_secret is not available (ENOSYS)"),
		      "strict: expected one line naming the refusal: %s", msg);
}
END_TEST

/*
 * Every variable the drop-in reads, given a value it does not accept:
 * one line, once, in SECBUF_STRICT's form (NAME="VALUE" is ...: what
 * happens instead), naming what is accepted; SECBUF_LOCK's used to fail
 * every call with EINVAL without a word.
 */
START_TEST(bad_values_are_named_once)
{
	static const struct {
		const char *lock, *env, *mode;
		int exit;
		const char *shown, *accepted, *instead;
	} cases[] = {
		{ "bogus", NULL, "--fails", EINVAL, "SECBUF_LOCK=\"bogus\"",
		  "(maplockonfault, mlock2, mlock, none;",
		  "every sodium_malloc() fails with EINVAL" },
		{ "mlock2\tx", NULL, "--fails", EINVAL, "SECBUF_LOCK=\"mlock2?x\"",
		  "(maplockonfault, mlock2, mlock, none;", "fails with EINVAL" },
		{ "maplockonfault", NULL, "--fails", ENOSYS, "SECBUF_LOCK=\"maplockonfault\"",
		  "a method this kernel lacks", "every sodium_malloc() fails with ENOSYS" },
		{ "", "SECBUF_DEBUG=verbose", "--one", 0, "SECBUF_DEBUG=\"verbose\"",
		  "(1, true, yes, on)", "taken for a no" },
		{ "", "SECBUF_PURGE_ON_CRASH=yes", "--one", 0, "SECBUF_PURGE_ON_CRASH=\"yes\"",
		  "neither 1, exit nor 0", "no crash handlers are installed" },
		{ "", "SECBUF_STRICT=enable", "--bad-strict", 0, "SECBUF_STRICT=\"enable\"",
		  "(1, true, yes, on)", "every sodium_malloc() fails with EINVAL" },
	};
	char msg[1024], fails[4096] = "";
	size_t i;
	int st;

	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: each case sets SECBUF_LOCK itself");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbt_self se = { .mode = cases[i].mode,
				       .secbuf_lock = cases[i].lock,
				       .env = cases[i].env };

		/* A kernel with the series has the method: nothing to say then. */
		if (!strcmp(cases[i].lock, "maplockonfault") && lockonfault_series())
			continue;
		st = sbt_run_self(&se, msg, sizeof(msg));
		if (!WIFEXITED(st) || WEXITSTATUS(st) != cases[i].exit || count(msg, "\n") != 1 ||
		    strncmp(msg, "libsecbuf-sodium: ", 18) || !strstr(msg, "]: ") ||
		    !strstr(msg, cases[i].shown) || !strstr(msg, cases[i].accepted) ||
		    !strstr(msg, cases[i].instead))
			sbt_note(fails, sizeof(fails),
				 "case %zu (%s): status %#x (want exit %d), want one line with %s, "
				 "%s and %s: %s",
				 i, cases[i].shown, st, cases[i].exit, cases[i].shown,
				 cases[i].accepted, cases[i].instead, msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST

static void nobody_64k(void)
{
	struct rlimit rl = { 64 * 1024, 64 * 1024 };

	unsetenv("SECBUF_LOCK");
	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(124);
}

/*
 * As nobody under 64 KiB of RLIMIT_MEMLOCK, a buffer whose pages do not
 * fit: the cause is the limit, with what was asked of it (its pages, not
 * its size, which would have fitted), never a sandbox; strict, the
 * refusal is said once, with its size.
 */
START_TEST(near_limit_names_the_pages)
{
	struct sbt_self se = { .mode = "--near-limit", .before_exec = nobody_64k };
	char msg[1024], need[64];
	int st;

	sbt_need_root();
	sbt_need_no_valgrind("valgrind's own locked pages change the budget");
	if (sbt_page() != 4096)
		sbt_skip("the sizes are worked out for 4 KiB pages");
	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from the limit");
	snprintf(need, sizeof(need), "%d kB more were needed", (BIG_BUT_NOT_QUITE + 4096) / 1024);
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit 2: not handed out): %s", st, msg);
	ck_assert_msg(count(msg, "warning") == 1 && strstr(msg, "NOT locked") &&
			      strstr(msg, "RLIMIT_MEMLOCK is 64 kB") && strstr(msg, need) &&
			      !strstr(msg, "sandbox") && !strstr(msg, "SystemCallFilter"),
		      "want the limit and %s: %s", need, msg);
	se.env = "SECBUF_STRICT=1";
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "strict: status %#x (exit 2: not refused): %s", st, msg);
	ck_assert_msg(
		count(msg, "\n") == 1 &&
			strstr(msg, "sodium_malloc() of 61440 bytes refused (SECBUF_STRICT=1)") &&
			strstr(msg, "RLIMIT_MEMLOCK is 64 kB") && strstr(msg, need) &&
			strstr(msg, "LimitMEMLOCK=") && strstr(msg, "SECBUF_STRICT=0"),
		"strict: want one line with the size, the limit and %s: %s", need, msg);
}
END_TEST

static void nobody_no_memlock_strict(void)
{
	nobody_without_memlock();
	setenv("SECBUF_STRICT", "1", 1);
}

/*
 * Strict, as nobody with RLIMIT_MEMLOCK 0: every sodium_malloc() fails
 * (the key's page cannot be locked), and one line says so, with the limit,
 * the need and the fixes; under SECBUF_DEBUG=1, one line per refusal.
 */
START_TEST(strict_zero_limit_is_said)
{
	struct sbt_self se = { .mode = "--fails", .before_exec = nobody_no_memlock_strict };
	char msg[2048];
	int st;

	sbt_need_root();
	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from the limit");
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == EPERM, "status %#x (want exit EPERM): %s",
		      st, msg);
	ck_assert_msg(count(msg, "\n") == 1 && strstr(msg, "libsecbuf-sodium: ") &&
			      strstr(msg, "sodium_malloc() refused (SECBUF_STRICT=1)") &&
			      strstr(msg, "RLIMIT_MEMLOCK is 0 kB") &&
			      strstr(msg, "kB were needed") && strstr(msg, "ulimit -l") &&
			      strstr(msg, "LimitMEMLOCK=") && strstr(msg, "SECBUF_STRICT=0"),
		      "want one line naming the refusal: %s", msg);
	se.env = "SECBUF_DEBUG=1";
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == EPERM && count(msg, "\n") == 2 &&
			      count(msg, "refused (SECBUF_STRICT=1)") == 2,
		      "SECBUF_DEBUG=1: status %#x, want a line per refusal: %s", st, msg);
}
END_TEST

static void secret_nobody_64k(void)
{
	nobody_64k();
	setenv("SECBUF_SECRET", "1", 1);
}

/*
 * SECBUF_SECRET=1 as nobody under 64 KiB, on a kernel that has secret
 * memory: its pages count against RLIMIT_MEMLOCK, and the fallback's
 * warning says that, not "boot with secretmem.enable=1".
 */
START_TEST(secret_over_limit_is_the_limit)
{
	const struct sbt_self se = { .mode = "--near-limit", .before_exec = secret_nobody_64k };
	char msg[2048];
	int st;

	sbt_need_root();
	sbt_need_secretmem();
	sbt_need_no_valgrind("valgrind's own locked pages change the budget");
	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from the limit");
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit 2: not handed out): %s", st, msg);
	if (!strstr(msg, "NOT secret memory"))
		sbt_skip("this kernel charges memfd_secret to RLIMIT_MEMLOCK at first touch");
	ck_assert_msg(strstr(msg, "NOT secret memory (memfd_secret memory counts against "
				  "RLIMIT_MEMLOCK: RLIMIT_MEMLOCK is 64 kB") &&
			      !strstr(msg, "secretmem.enable"),
		      "want the limit, not the boot option: %s", msg);
}
END_TEST

/* What the child writes to stderr after this line, it writes under its filter. */
#define FILTERED "-- filter installed --\n"

/*
 * Exit code = failed step.  The first allocation draws the key and makes
 * the registry; the one under the filter must fail although the drop-in
 * is not strict here (strictness is about locks), leave nothing mapped
 * and print nothing.
 */
static void advice_refused(void *arg)
{
	const struct sbt_deny deny = { SYS_madvise, 2, *(int *)arg, ~0u, EPERM };
	void *p = sodium_malloc(100);
	int lines;

	sodium_free(p);
	lines = sbt_maps_lines();
	if (!p || write(STDERR_FILENO, FILTERED, strlen(FILTERED)) < 0 ||
	    sbt_deny_syscalls(&deny, 1) < 0)
		_exit(10);
	errno = 0;
	if (sodium_malloc(3 * 4096))
		_exit(11);
	if (errno != EPERM)
		_exit(12);
	_exit(sbt_maps_lines() == lines ? 0 : 13);
}

/*
 * libsecbuf-sodium(7): where madvise(2) is refused, sodium_malloc() returns
 * NULL with EPERM rather than memory that a core dump or a child could
 * read (libsodium ignores the refusal and returns it).
 */
START_TEST(madvise_refused_is_eperm)
{
	static const struct {
		int advice;
		const char *name;
	} cases[] = {
		{ MADV_DONTDUMP, "MADV_DONTDUMP" },
		{ MADV_WIPEONFORK, "MADV_WIPEONFORK" },
		{ MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE" },
	};
	char msg[1024], fails[2048] = "";
	const char *after;
	size_t i;
	int st;

	sbt_need_method();
	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		st = sbt_child(advice_refused, (void *)&cases[i].advice, msg, sizeof(msg));
		after = strstr(msg, FILTERED);
		if (!sbt_exited_ok(st) || !after || after[strlen(FILTERED)])
			sbt_note(fails, sizeof(fails),
				 "%s refused: status %#x (exit %d = failed step), stderr: %s",
				 cases[i].name, st, WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST

int main(int argc, char **argv)
{
	static const struct sbt_test tests[] = {
		SBT(refused_lock_warns_once),	      SBT(zero_limit_warning_blames_the_limit),
		SBT(strict_refused_lock_fails),	      SBT(strict_spellings),
		SBT(strict_bad_value_is_einval),      SBT(madvise_refused_is_eperm),
		SBT(purge_on_crash_from_environment), SBT(secret_from_environment),
		SBT(secret_refused_warns_or_fails),   SBT(bad_values_are_named_once),
		SBT(near_limit_names_the_pages),      SBT(strict_zero_limit_is_said),
		SBT(secret_over_limit_is_the_limit),  SBT_END,
	};
	static const struct sbt_test *const groups[] = { sodium_memory_tests, tests, NULL };
	static const struct sbt_mode modes[] = {
		{ "--refused", refused_main },
		{ "--strict", strict_main },
		{ "--bad-strict", bad_strict_main },
		{ "--purge-env", purge_env_main },
		{ "--secret", secret_main },
		{ "--secret-refused", secret_refused_main },
		{ "--one", one_main },
		{ "--fails", fails_main },
		{ "--near-limit", near_limit_main },
		{ NULL, NULL },
	};

	return sbt_main(argc, argv, "libsecbuf-sodium", groups, modes);
}
