/*
 * Failure injection: a syscall after the mmap fails; nothing stays mapped.
 * (A refused name is no failure: harden-tests.c.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "tests.h"

struct inject {
	struct sbt_deny deny;
	unsigned flags;
	int err;	/* expected errno */
};

/*
 * Exit code = failed step: the call must fail with err and unmap it all.
 * A packed secret fails the same way when its slab cannot be made.
 */
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
	if (secbuf_alloc_flags(in->flags & SECBUF_PACKED ? 32 : 3 * 4096, in->flags))
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
		{ { SYS_mlock2, -1, 0, 0, ENOMEM }, 0, ENOMEM },
		{ { SYS_mlock, -1, 0, 0, ENOMEM }, SECBUF_POPULATE, ENOMEM },
		{ { SYS_mmap, 3, 0x400000, 0x400000, EAGAIN }, 0, EAGAIN },
	};
	static const int lock_case[] = { -1, -1, SECBUF_LOCK_MLOCK2_ONFAULT, SECBUF_LOCK_MLOCK,
					 SECBUF_LOCK_MAP_LOCKONFAULT };
	size_t i;
	int packed;

	sbt_need_method();
	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	for (packed = 0; packed <= 1; packed++) {
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct inject in = cases[i];
			char msg[256];
			int st;

			/* A lock failure only happens under the method that locks that way. */
			if (lock_case[i] >= 0 && lock_case[i] != sbt_method())
				continue;
			if (packed)
				in.flags |= SECBUF_PACKED;
			st = sbt_child(injected_child, &in, msg, sizeof(msg));
			ck_assert_msg(sbt_exited_ok(st),
				      "case %zu%s: status %#x (exit %d = failed step) %s", i,
				      packed ? " (packed)" : "", st,
				      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
		}
	}
}
END_TEST

/* munmap refused from outside (here: seccomp) when free unmaps. */
static void unmap_refused(void *arg)
{
	struct sbt_deny deny = { SYS_munmap, -1, 0, 0, *(int *)arg };
	void *p = secbuf_alloc_flags(100, sbt_flags(0));

	if (!p || sbt_deny_syscalls(&deny, 1) < 0)
		_exit(10);
	secbuf_free(p);
	_exit(0);
}

START_TEST(munmap_failure_says_why)
{
	static const int errs[] = { EPERM, ENOMEM };
	char fails[1024] = "";
	size_t i;

	sbt_need_method();
	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		int err = errs[i], st;
		char msg[512];

		st = sbt_child(unmap_refused, &err, msg, sizeof(msg));
		if (!sbt_signalled(st, SIGABRT) || !strstr(msg, "munmap") ||
		    !strstr(msg, strerror(err)) || strstr(msg, "corrupt"))
			sbt_note(fails, sizeof(fails), "%s: status %#x, stderr: %s",
				 strerrorname_np(err), st, msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST

const struct sbt_test inject_tests[] = {
	SBT(failure_after_mmap_unmaps),
	SBT(munmap_failure_says_why),
	SBT_END,
};
