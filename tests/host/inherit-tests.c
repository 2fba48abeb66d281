/*
 * SECBUF_INHERIT: a forked child keeps the buffer's bytes, may use and
 * free it, and holds the pages it writes locked again (the kernel drops
 * locks at fork), guarded and packed alike, also when other threads of
 * the parent allocate at the moment of fork().  The buffers are made in
 * a child of the test, so that the test process itself never keeps its
 * key across fork() (which SECBUF_INHERIT turns on for good).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "tests.h"

static const size_t inherit_sizes[] = { 48, 3 * 4096 };

/*
 * In the child: the bytes are the parent's, a written page is locked
 * (VmFlags lo, lf where the method locks on fault, Locked: > 0), and the
 * buffer frees.  Exit code = failed step.
 */
static int child_checks(unsigned char *p, size_t n, unsigned flags, unsigned char fill)
{
	char vmflags[160];
	long rss, locked;
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != fill)
			return 20;
	memset(p, fill ^ 0xff, n); /* copy on write: the child's own pages now */
	if (sbt_smaps(p, &rss, &locked, vmflags, sizeof(vmflags)) < 0)
		return 21;
	if (sbt_locks(flags)) {
		if (!strstr(vmflags, " lo ") || locked <= 0)
			return 22;
		if (sbt_method() != SECBUF_LOCK_MLOCK && sbt_kernel_names_lf() == 1 &&
		    !strstr(vmflags, " lf "))
			return 23;
	}
	secbuf_free(p);
	p = secbuf_alloc_flags(n, flags); /* the child's own, from the inherited pools */
	if (!p)
		return 24;
	memset(p, 1, n);
	secbuf_free(p);
	return 0;
}

/* Parent and child of one buffer; exit code = failed step. */
static void inherit_one(void *arg)
{
	size_t n = *(size_t *)arg;
	unsigned flags = sbt_flags(SECBUF_INHERIT | (n <= SECBUF_PACKED_MAX ? SECBUF_PACKED : 0));
	unsigned char *p = secbuf_alloc_flags(n, flags);
	pid_t pid;
	size_t i;
	int st;

	if (!p)
		_exit(10);
	memset(p, 0xa5, n);
	pid = fork();
	if (pid == 0)
		_exit(child_checks(p, n, flags, 0xa5));
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		_exit(11);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 12);
	for (i = 0; i < n; i++) /* the child's writes were its own */
		if (p[i] != 0xa5)
			_exit(13);
	secbuf_free(p);
	_exit(0);
}

START_TEST(inherited_buffer_kept_and_locked_in_child)
{
	char msg[1024], fails[2048] = "";
	size_t i;
	int st;

	sbt_need_method();
	for (i = 0; i < sizeof(inherit_sizes) / sizeof(inherit_sizes[0]); i++) {
		size_t n = inherit_sizes[i];

		st = sbt_child(inherit_one, &n, msg, sizeof(msg));
		if (!sbt_exited_ok(st))
			sbt_note(fails, sizeof(fails), "%zu bytes: status %#x (exit %d = failed step): %s",
				 n, st, WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST

/* A buffer without the flag, in a child whose parent made inherited ones. */
static void plain_in_keeping_child(void *arg)
{
	unsigned char *kept = secbuf_alloc_flags(64, sbt_flags(SECBUF_INHERIT | SECBUF_PACKED));
	unsigned char *plain = secbuf_alloc_flags(100, sbt_flags(0));
	pid_t pid;
	int st;

	(void)arg;
	if (!kept || !plain)
		_exit(10);
	memset(plain, 0x5a, 100);
	pid = fork();
	if (pid == 0) {
		if (plain[0] != 0) /* zeros, as ever */
			_exit(20);
		secbuf_free(plain); /* aborts: a parent's, not inherited */
		_exit(21);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		_exit(11);
	if (WIFSIGNALED(st))
		raise(WTERMSIG(st));
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 12);
}

START_TEST(plain_buffer_still_zeros_and_refused_in_child)
{
	char msg[1024];
	int st;

	sbt_need_method();
	st = sbt_child(plain_in_keeping_child, NULL, msg, sizeof(msg));
	ck_assert_msg(sbt_signalled(st, SIGABRT) && strstr(msg, "before fork"),
		      "status %#x (exit 20: not zeros): %s", st, msg);
}
END_TEST

START_TEST(inherit_with_secret_is_einval)
{
	errno = 0;
	ck_assert_ptr_null(secbuf_alloc_flags(64, SECBUF_INHERIT | SECBUF_SECRET));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* Made before the threads start; checked by every forked child. */
static unsigned char *kept_small, *kept_large;
static const size_t large_size = 2 * 4096;

static void *churn_inherited(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg;

	while (keep_churning()) {
		size_t n = 1 + rand_r(&seed) % 600;
		unsigned flags = sbt_flags(SECBUF_INHERIT | (seed & 1 ? SECBUF_PACKED : 0));
		unsigned char *p = secbuf_alloc_flags(n, flags);

		if (!p)
			return (void *)1;
		memset(p, 0x5a, n);
		secbuf_free(p);
	}
	return NULL;
}

static int child_of_threads(void)
{
	int ret = child_checks(kept_small, 64, sbt_flags(SECBUF_INHERIT | SECBUF_PACKED), 0x11);

	return ret ? ret : child_checks(kept_large, large_size, sbt_flags(SECBUF_INHERIT), 0x22);
}

static void fork_from_threads(void *arg)
{
	(void)arg;
	kept_small = secbuf_alloc_flags(64, sbt_flags(SECBUF_INHERIT | SECBUF_PACKED));
	kept_large = secbuf_alloc_flags(large_size, sbt_flags(SECBUF_INHERIT));
	if (!kept_small || !kept_large)
		_exit(10);
	memset(kept_small, 0x11, 64);
	memset(kept_large, 0x22, large_size);
	fork_while_churning(churn_inherited, child_of_threads);
	_exit(0);
}

START_TEST(inherited_from_a_multithreaded_parent)
{
	char msg[2048];
	int st;

	sbt_need_method();
	st = sbt_child(fork_from_threads, NULL, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

const struct sbt_test inherit_tests[] = {
	SBT(inherited_buffer_kept_and_locked_in_child),
	SBT(plain_buffer_still_zeros_and_refused_in_child),
	SBT(inherit_with_secret_is_einval),
	SBT_SLOW(inherited_from_a_multithreaded_parent),
	SBT_END,
};
