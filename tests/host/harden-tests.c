/*
 * Defects of the second red-team pass, each a fresh process so that the
 * probe and the key are made under the conditions of the attack:
 *  - a lock budget spent at the first call must not demote the process
 *    for life, nor leave its key unlocked;
 *  - a signal handler that calls the library while fork() holds its locks
 *    aborts, naming fork(), instead of deadlocking;
 *  - a refused prctl(PR_SET_VMA) costs the name, not the allocation;
 *  - without mlock at all (ENOSYS), best effort still allocates, unlocked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "tests.h"

/* 16 pages: 64 KiB of 4 KiB pages; room for a buffer and the key's page. */
#define BUDGET (16 * sbt_page())

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#endif

static void nobody_with_budget(void)
{
	struct rlimit rl = { BUDGET, BUDGET };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(124);
}

/*
 * Runs as "secbuf-tests --busy-budget", as nobody under a BUDGET
 * RLIMIT_MEMLOCK, with SECBUF_LOCK as the test runs.  Exit code = failed
 * step; the expected method comes in SBT_METHOD.
 */
int busy_budget_main(void)
{
	size_t page = sbt_page(), own = BUDGET;
	int want = atoi(getenv("SBT_METHOD") ? getenv("SBT_METHOD") : "-1");
	unsigned flags = want == SECBUF_LOCK_MLOCK ? SECBUF_POPULATE : 0;
	struct secbuf_stat st;
	long vmlck;
	void *mine, *p;

	mine = mmap(NULL, own, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mine == MAP_FAILED || syscall(SYS_mlock, mine, own) < 0)
		return 2;
	/* The whole budget is ours: the library's first call cannot lock. */
	errno = 0;
	if (secbuf_alloc_flags(100, flags))
		return 3;
	if (errno != ENOMEM && errno != EAGAIN && errno != EPERM) {
		fprintf(stderr, "refused with %s\n", strerror(errno));
		return 4;
	}
	if (syscall(SYS_munlock, mine, own) < 0)
		return 5;
	/* Budget back: the next call must get the method a calm start gets. */
	p = secbuf_alloc_flags(100, flags);
	if (!p) {
		fprintf(stderr, "after the budget came back: %s\n", strerror(errno));
		return 6;
	}
	if (secbuf_stat(p, &st) < 0 || st.lock_method != want || secbuf_lock_method() != want) {
		fprintf(stderr, "method %s, buffer %s, want %s\n",
			secbuf_lock_method_name(secbuf_lock_method()),
			secbuf_lock_method_name(st.lock_method), secbuf_lock_method_name(want));
		return 7;
	}
	/* The key's page is locked too: VmLck is the buffer's data and one page. */
	vmlck = sbt_vmlck_kb();
	if (vmlck != (long)((st.mapped_bytes + page) / 1024)) {
		fprintf(stderr, "VmLck %ld kB, buffer %zu kB + key page %zu kB\n", vmlck,
			st.mapped_bytes / 1024, page / 1024);
		return 8;
	}
	secbuf_free(p);
	return 0;
}

START_TEST(busy_budget_at_first_call)
{
	char env[32], msg[512];
	const struct sbt_self se = { .mode = "--busy-budget",
				     .env = env,
				     .before_exec = nobody_with_budget };
	int st;

	sbt_need_method();
	sbt_need_root();
	sbt_need_no_valgrind("valgrind's own mappings count against RLIMIT_MEMLOCK");
	if (sbt_method() == SECBUF_LOCK_NONE)
		sbt_skip("SECBUF_LOCK=none locks nothing");
	snprintf(env, sizeof(env), "SBT_METHOD=%d", sbt_method());
	st = sbt_run_self(&se, msg, sizeof(msg));
	msg[strcspn(msg, "\n")] = 0;
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

static void alloc_in_handler(int sig)
{
	(void)sig;
	secbuf_free(secbuf_alloc(16));
}

/* Registered before the library's: runs after its prepare, locks held. */
static void signal_in_prepare(void)
{
	raise(SIGUSR1);
}

/* Runs as "secbuf-tests --fork-signal": must abort (SIGABRT), never hang. */
int fork_signal_main(void)
{
	pid_t pid;

	if (signal(SIGUSR1, alloc_in_handler) == SIG_ERR ||
	    pthread_atfork(signal_in_prepare, NULL, NULL) != 0)
		return 2;
	secbuf_free(secbuf_alloc(16)); /* the library registers its handlers */
	alarm(10);		       /* a deadlock ends as SIGALRM */
	pid = fork();
	if (pid == 0)
		_exit(0);
	return 3;
}

START_TEST(signal_during_fork_aborts)
{
	const struct sbt_self se = { .mode = "--fork-signal" };
	char msg[512];
	int st;

	sbt_need_method();
	st = sbt_run_self(&se, msg, sizeof(msg));
	msg[strcspn(msg, "\n")] = 0;
	printf("# REPORT: %s\n", msg);
	ck_assert_msg(sbt_signalled(st, SIGABRT) && strstr(msg, "while fork() was running"),
		      "status %#x: %s", st, msg);
}
END_TEST

/* Runs as "secbuf-tests --name-refused" under prctl(PR_SET_VMA) = EPERM. */
int name_refused_main(void)
{
	/* The name is what is refused, whatever the lock does. */
	void *p = secbuf_alloc_flags(100, SECBUF_BEST_EFFORT);
	void *q = secbuf_alloc_flags(32, SECBUF_PACKED | SECBUF_BEST_EFFORT);

	if (!p || !q) {
		fprintf(stderr, "%s\n", strerror(errno));
		return 2;
	}
	secbuf_free(p);
	secbuf_free(q);
	return 0;
}

START_TEST(name_refused_still_allocates)
{
	const struct sbt_deny deny = { SYS_prctl, 0, PR_SET_VMA, 0xffffffff, EPERM };
	const struct sbt_self se = { .mode = "--name-refused", .deny = &deny, .ndeny = 1 };
	char msg[512];
	int st;

	sbt_need_method();
	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	st = sbt_run_self(&se, msg, sizeof(msg));
	msg[strcspn(msg, "\n")] = 0;
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

/* Runs as "secbuf-tests --no-mlock" with mlock and mlock2 answering ENOSYS. */
int no_mlock_main(void)
{
	static const unsigned flags[] = { 0, SECBUF_POPULATE, SECBUF_PACKED };
	struct secbuf_stat st;
	int lines;
	size_t i;
	void *p;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		p = secbuf_alloc_flags(100, flags[i] | SECBUF_BEST_EFFORT);
		/* Unlocked, or on a patched kernel locked by mmap itself. */
		st.lock_method = -1;
		if (!p || secbuf_stat(p, &st) < 0 ||
		    (st.lock_method != SECBUF_LOCK_NONE &&
		     st.lock_method != SECBUF_LOCK_MAP_LOCKONFAULT)) {
			fprintf(stderr, "best effort %#x: %s (process method %s, buffer %s)\n",
				flags[i], p ? "locked?" : strerror(errno),
				secbuf_lock_method_name(secbuf_lock_method()),
				secbuf_lock_method_name(st.lock_method));
			return 2 + i;
		}
		secbuf_free(p);
	}
	/* Strict: refused (the key's page cannot be locked), nothing left mapped. */
	lines = sbt_maps_lines();
	errno = 0;
	if (secbuf_alloc_flags(100, SECBUF_POPULATE) || !errno || sbt_maps_lines() != lines)
		return 6;
	return 0;
}

START_TEST(no_mlock_best_effort_unlocked)
{
	const struct sbt_deny deny[] = {
		{ SYS_mlock, -1, 0, 0, ENOSYS },
		{ SYS_mlock2, -1, 0, 0, ENOSYS },
	};
	const struct sbt_self se = {
		.mode = "--no-mlock", .secbuf_lock = "", .deny = deny, .ndeny = 2
	};
	char msg[512];
	int st;

	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	st = sbt_run_self(&se, msg, sizeof(msg));
	msg[strcspn(msg, "\n")] = 0;
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

const struct sbt_test harden_tests[] = {
	SBT(busy_budget_at_first_call),
	SBT(signal_during_fork_aborts),
	SBT(name_refused_still_allocates),
	SBT(no_mlock_best_effort_unlocked),
	SBT_END,
};
