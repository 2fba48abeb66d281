/*
 * Explanations: secbuf_lock_reason() tells "the kernel has none" from "the
 * budget is spent or RLIMIT_MEMLOCK is 0" and from "a sandbox refused",
 * each with its fix; secbuf_last_failure() gives a failed allocation's
 * limit and need (what the refused call asked for: a packed secret's
 * whole slab), and tells the secret tier's limit from its absence;
 * SECBUF_DEBUG=1 prints it once.  Each case runs in a
 * fresh process (a fresh probe) with the default method (SECBUF_LOCK="").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "secbuf.h"
#include "tests.h"

#ifndef MAP_LOCKONFAULT
#define MAP_LOCKONFAULT 0x400000 /* the series' value (libsecbuf/os/abi.h) */
#endif

/* Exit n from a mode, with what was seen on stderr for the parent's message. */
static int mode_fail(int n, const char *what, const char *text)
{
	fprintf(stderr, "%s: %s\n", what, text);
	return n;
}

static void nobody_with(rlim_t bytes)
{
	struct rlimit rl = { bytes, bytes };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(124);
}
static void nobody_no_memlock(void)
{
	nobody_with(0);
}
static void nobody_64k(void)
{
	nobody_with(64 * 1024);
}

/* As nobody with RLIMIT_MEMLOCK 0: the limit, not the kernel. */
int explain_limit_main(void)
{
	char text[512];
	int r = secbuf_lock_reason(text, sizeof(text));

	if (r != SECBUF_REASON_LIMIT || !strstr(text, "RLIMIT_MEMLOCK is 0") ||
	    !strstr(text, "ulimit -l") || strstr(text, "kernel has none"))
		return mode_fail(2, "lock reason", text);
	if (secbuf_alloc(4096) || secbuf_last_failure(text, sizeof(text)) != EPERM)
		return mode_fail(3, "alloc", "not refused with EPERM");
	if (!strstr(text, "secbuf_alloc(4096): EPERM:") || !strstr(text, "LimitMEMLOCK="))
		return mode_fail(4, "last failure", text);
	return 0;
}

/*
 * As nobody with 64 kB of RLIMIT_MEMLOCK: the method is proven, a 16 MiB
 * buffer is over the budget; the explanation names the limit and the
 * need; SECBUF_DEBUG=1 printed it for the first failure only.
 */
int explain_budget_main(void)
{
	char text[512], need[64];
	int r = secbuf_lock_reason(text, sizeof(text)), err;

	if (r != SECBUF_REASON_PROVEN)
		return mode_fail(2, "lock reason", text);
	if (secbuf_last_failure(text, sizeof(text)) != 0 || strcmp(text, "no failure"))
		return mode_fail(3, "before any failure", text);
	if (secbuf_alloc(16 * MiB) || secbuf_alloc(16 * MiB))
		return mode_fail(4, "alloc", "16 MiB locked under 64 kB of RLIMIT_MEMLOCK");
	err = secbuf_last_failure(text, sizeof(text));
	/* What the lock asked for: the data and the canary's page, not the size alone. */
	snprintf(need, sizeof(need), "%ld kB more were needed",
		 (long)((16 * MiB + sbt_page()) / 1024));
	if ((err != ENOMEM && err != EAGAIN) || err != errno)
		return mode_fail(5, "errno", strerror(err));
	if (!strstr(text, "secbuf_alloc(16777216): E") ||
	    !strstr(text, "RLIMIT_MEMLOCK is 64 kB") || !strstr(text, need) ||
	    !strstr(text, "ulimit -l"))
		return mode_fail(6, "last failure", text);
	return 0;
}

/* Lock-on-fault refused with room in the limit (as root: CAP_IPC_LOCK). */
int explain_sandbox_main(void)
{
	char text[512];
	int r = secbuf_lock_reason(text, sizeof(text));

	if (r != SECBUF_REASON_SANDBOX || !strstr(text, "sandbox refused") ||
	    !strstr(text, "seccomp filter is on"))
		return mode_fail(2, "lock reason", text);
	return 0;
}

/* No lock-on-fault call works (ENOSYS, as a kernel before 4.4 answers). */
int explain_no_kernel_main(void)
{
	char text[512];
	int r = secbuf_lock_reason(text, sizeof(text));

	if (r != SECBUF_REASON_NO_KERNEL || !strstr(text, "kernel has none") ||
	    !strstr(text, "ENOSYS"))
		return mode_fail(2, "lock reason", text);
	if (secbuf_alloc(4096) || secbuf_last_failure(text, sizeof(text)) != EOPNOTSUPP ||
	    !strstr(text, "no lazy lock: mlock"))
		return mode_fail(3, "last failure", text);
	return 0;
}

/* A slab of packed secrets: 256 KiB with its two guard pages, which are not locked. */
static long slab_kb(void)
{
	return (long)((256 * 1024 - 2 * sbt_page()) / 1024);
}

/*
 * As nobody with 64 kB of RLIMIT_MEMLOCK: a packed secret of 32 bytes
 * fails for want of a whole slab, and the explanation says so, with the
 * limit and the slab's size; not memory, not a sandbox.
 */
int explain_packed_main(void)
{
	char text[512], need[64];
	int err;

	if (secbuf_alloc_flags(32, SECBUF_PACKED))
		return mode_fail(2, "alloc", "a slab locked under 64 kB of RLIMIT_MEMLOCK");
	err = secbuf_last_failure(text, sizeof(text));
	snprintf(need, sizeof(need), "%ld kB more were needed", slab_kb());
	if (err != ENOMEM && err != EAGAIN)
		return mode_fail(3, "errno", strerror(err));
	if (!strstr(text, "secbuf_alloc_flags(32): E") ||
	    !strstr(text, "RLIMIT_MEMLOCK is 64 kB") || !strstr(text, need) ||
	    !strstr(text, "ulimit -l") || strstr(text, "out of memory") || strstr(text, "sandbox"))
		return mode_fail(4, "last failure", text);
	return 0;
}

/*
 * The same for the secret tier, whose pages count against RLIMIT_MEMLOCK
 * (EAGAIN from the mapping, on kernels that charge it there): the limit,
 * never "no secret memory here".  Exit 77: this kernel charges it later.
 */
int explain_secret_limit_main(void)
{
	char text[600], need[64];
	void *p = secbuf_alloc_flags(32, SECBUF_SECRET | SECBUF_PACKED);
	int err = errno;

	if (p)
		return 77;
	if (err != EAGAIN)
		return mode_fail(2, "errno", strerror(err));
	snprintf(need, sizeof(need), "%ld kB more were needed", slab_kb());
	if (secbuf_last_failure(text, sizeof(text)) != EAGAIN ||
	    !strstr(text, "memfd_secret memory counts against RLIMIT_MEMLOCK") ||
	    !strstr(text, "RLIMIT_MEMLOCK is 64 kB") || !strstr(text, need) ||
	    strstr(text, "secretmem.enable") || strstr(text, "out of memory"))
		return mode_fail(3, "last failure", text);
	return 0;
}

static void run(const struct sbt_self *se, int debug_lines)
{
	char msg[2048], *at = msg;
	int st, lines = 0;

	st = sbt_run_self(se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "%s: status %#x (exit %d = failed step) %s", se->mode, st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	while ((at = strstr(at, "libsecbuf: secbuf_alloc(")) != NULL) {
		lines++;
		at++;
	}
	ck_assert_msg(lines == debug_lines, "%s: %d SECBUF_DEBUG lines, %d expected: %s", se->mode,
		      lines, debug_lines, msg);
}

START_TEST(limit_is_not_the_kernel)
{
	const struct sbt_self se = { .mode = "--explain-limit",
				     .secbuf_lock = "",
				     .before_exec = nobody_no_memlock };

	sbt_need_root();
	run(&se, 0);
}
END_TEST

START_TEST(budget_names_limit_and_need)
{
	const struct sbt_self se = { .mode = "--explain-budget",
				     .secbuf_lock = "",
				     .env = "SECBUF_DEBUG=1",
				     .before_exec = nobody_64k };

	sbt_need_root();
	sbt_need_no_valgrind("valgrind's own locked pages change the budget");
	run(&se, 1);
}
END_TEST

START_TEST(packed_need_is_the_slab)
{
	const struct sbt_self se = { .mode = "--explain-packed",
				     .secbuf_lock = "",
				     .before_exec = nobody_64k };

	sbt_need_root();
	sbt_need_no_valgrind("valgrind's own locked pages change the budget");
	run(&se, 0);
}
END_TEST

START_TEST(secret_limit_is_not_absence)
{
	const struct sbt_self se = { .mode = "--explain-secret-limit",
				     .secbuf_lock = "",
				     .before_exec = nobody_64k };
	char msg[2048];
	int st;

	sbt_need_root();
	sbt_need_secretmem();
	sbt_need_no_valgrind("valgrind's own locked pages change the budget");
	st = sbt_run_self(&se, msg, sizeof(msg));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		sbt_skip("this kernel charges memfd_secret to RLIMIT_MEMLOCK at first touch");
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

START_TEST(sandbox_is_not_the_limit)
{
	const struct sbt_deny deny[] = {
		{ SYS_mlock2, -1, 0, 0, EPERM },
		{ SYS_mmap, 3, MAP_LOCKONFAULT, MAP_LOCKONFAULT, EPERM },
	};
	const struct sbt_self se = {
		.mode = "--explain-sandbox", .secbuf_lock = "", .deny = deny, .ndeny = 2
	};

	sbt_need_root();
	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	run(&se, 0);
}
END_TEST

START_TEST(no_kernel_is_not_the_limit)
{
	const struct sbt_deny deny[] = {
		{ SYS_mlock2, -1, 0, 0, ENOSYS },
		{ SYS_mmap, 3, MAP_LOCKONFAULT, MAP_LOCKONFAULT, EOPNOTSUPP },
	};
	const struct sbt_self se = {
		.mode = "--explain-no-kernel", .secbuf_lock = "", .deny = deny, .ndeny = 2
	};

	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	run(&se, 0);
}
END_TEST

const struct sbt_test explain_tests[] = {
	SBT(limit_is_not_the_kernel),
	SBT(budget_names_limit_and_need),
	SBT(packed_need_is_the_slab),
	SBT(secret_limit_is_not_absence),
	SBT(sandbox_is_not_the_limit),
	SBT(no_kernel_is_not_the_limit),
	SBT_END,
};
