/*
 * The probe: a lock method counts only when a call that uses it succeeds.
 * Under seccomp filters that answer mlock2, or mmap with MAP_LOCKONFAULT,
 * with an error, the method falls back and a strict buffer is either really
 * locked or refused with the error that says why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "kfacts.h"	/* MAP_LOCKONFAULT */
#include "tests.h"

/* A strict buffer of three data pages, touched: locked, or refused with want. */
static int strict_buffer_locked_or_refused(int want, const char **what)
{
	size_t page = sbt_page(), size = 3 * page - 16;
	struct secbuf_stat st;
	long rss = -1, locked = -1;
	char flags[160] = "";
	int lines = sbt_maps_lines();
	unsigned char *p;

	errno = 0;
	p = secbuf_alloc(size);
	if (!p) {
		*what = strerror(errno);
		if (errno != want)
			return 10;
		return sbt_maps_lines() == lines ? 0 : 11;
	}
	*what = "locked";
	memset(p, 1, size);
	if (sbt_smaps(p, &rss, &locked, flags, sizeof(flags)) < 0)
		return 12;
	if (rss != KB(3) || locked != rss || !strstr(flags, " lo ")) {
		fprintf(stderr, "Rss %ld kB, Locked %ld kB, VmFlags:%s\n", rss, locked, flags);
		return 13;
	}
	if (secbuf_stat(p, &st) < 0 || st.resident_pages != 3 || st.locked_pages != 3)
		return 14;
	secbuf_free(p);
	return 0;
}

/*
 * Runs as "secbuf-tests --probe-check" under a filter that answers
 * SBT_DENIED (mlock2 or mmap) with errno SBT_DENIED_ERRNO.
 */
int probe_check_main(void)
{
	const char *denied = getenv("SBT_DENIED");
	int err = atoi(getenv("SBT_DENIED_ERRNO") ? getenv("SBT_DENIED_ERRNO") : "0");
	int m = secbuf_lock_method(), rc;
	const char *what = "";

	if (m < 0)
		return 2;
	if (m == SECBUF_LOCK_MAP_LOCKONFAULT && denied && !strcmp(denied, "mmap"))
		return 3;	/* claims what the filter takes away */
	/* Refused only for a reason: EPERM if that is what the kernel said. */
	rc = strict_buffer_locked_or_refused(err == EPERM ? EPERM : EOPNOTSUPP, &what);
	fprintf(stderr, "method %s, strict buffer %s\n", secbuf_lock_method_name(m), what);
	return rc;
}

static const char *answer(int err)
{
	return err == SBT_FAKE ? "0 without running it" : strerrorname_np(err);
}

START_TEST(probe_trusts_only_success)
{
	static const struct {
		const char *what;
		struct sbt_deny deny;
	} cases[] = {
		{ "mlock2", { SYS_mlock2, -1, 0, 0, EPERM } },
		{ "mlock2", { SYS_mlock2, -1, 0, 0, ENOSYS } },
		{ "mlock2", { SYS_mlock2, -1, 0, 0, EINVAL } },
		/* Success without a lock: the kernel's own count must show one. */
		{ "mlock2", { SYS_mlock2, -1, 0, 0, SBT_FAKE } },
		{ "mmap", { SYS_mmap, 3, MAP_LOCKONFAULT, MAP_LOCKONFAULT, EPERM } },
		{ "mmap", { SYS_mmap, 3, MAP_LOCKONFAULT, MAP_LOCKONFAULT, ENOSYS } },
		{ "mmap", { SYS_mmap, 3, MAP_LOCKONFAULT, MAP_LOCKONFAULT, EINVAL } },
	};
	char fails[2048] = "";
	size_t i;

	sbt_need_method();
	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("the probe decides only the default method");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char denied[32], err[16], msg[512];
		struct sbt_self se = { .mode = "--probe-check", .deny = &cases[i].deny,
				       .ndeny = 1, .env = denied };
		int st;

		snprintf(denied, sizeof(denied), "SBT_DENIED=%s", cases[i].what);
		snprintf(err, sizeof(err), "%d", cases[i].deny.err);
		setenv("SBT_DENIED_ERRNO", err, 1);	/* inherited; the child adds SBT_DENIED */
		st = sbt_run_self(&se, msg, sizeof(msg));
		msg[strcspn(msg, "\n")] = 0;
		printf("# REPORT: %s answering %s: %s\n", cases[i].what, answer(cases[i].deny.err),
		       msg);
		if (!sbt_exited_ok(st))
			sbt_note(fails, sizeof(fails),
				 "%s answering %s: status %#x (exit %d = failed step) %s",
				 cases[i].what, answer(cases[i].deny.err), st,
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
		unsetenv("SBT_DENIED_ERRNO");
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST

static void nobody_without_memlock(void)
{
	struct rlimit none = { 0, 0 };

	if (setrlimit(RLIMIT_MEMLOCK, &none) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(124);
}

/* Runs as "secbuf-tests --no-memlock" as nobody with RLIMIT_MEMLOCK 0. */
int no_memlock_main(void)
{
	struct secbuf_stat st;
	const char *what;
	void *p;
	int rc;

	if (secbuf_lock_method() < 0)
		return 2;
	rc = strict_buffer_locked_or_refused(EPERM, &what);
	if (rc || strcmp(what, strerror(EPERM)))
		return rc ? rc : 3;
	errno = 0;
	if (secbuf_alloc_flags(4096, SECBUF_POPULATE) || errno != EPERM)
		return 4;
	p = secbuf_alloc_flags(4096, SECBUF_BEST_EFFORT);
	if (!p || secbuf_stat(p, &st) < 0 || st.lock_method != SECBUF_LOCK_NONE)
		return 5;
	secbuf_free(p);
	return 0;
}

START_TEST(no_memlock_right_is_eperm)
{
	const struct sbt_self se = { .mode = "--no-memlock", .before_exec = nobody_without_memlock };
	char msg[512];
	int st;

	sbt_need_method();
	sbt_need_root();
	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("the probe decides only the default method");
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

const struct sbt_test probe_tests[] = {
	SBT(probe_trusts_only_success),
	SBT(no_memlock_right_is_eperm),
	SBT_END,
};
