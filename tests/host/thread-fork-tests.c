/* Threads and fork: concurrent use, the first call racing, forked children. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <secbuf.h>
#include "kfacts.h"	/* __NR_munlock2, __NR_munlockall2 */
#include "tests.h"

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
	unsigned char *p;
	char msg[256];
	size_t i;

	sbt_need_method();
	p = secbuf_alloc_flags(3 * 4096, sbt_flags(0));
	ck_assert_ptr_nonnull(p);
	memset(p, 0xa5, 3 * 4096);
	ck_assert(sbt_exited_ok(sbt_child(child_reads_zeros, p, msg, sizeof(msg))));
	for (i = 0; i < 3 * 4096; i++)
		ck_assert_uint_eq(p[i], 0xa5);
	secbuf_free(p);
}
END_TEST

struct stress_arg {
	unsigned seed;
	int rounds;
};

#define LIVE 40	/* per thread: 320 live buffers make the registry grow */

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
			bad += sbt_differs(live[k], len[k], fill);
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
			bad += sbt_differs(live[i], len[i], (unsigned char)(sa->seed * 31 + i));
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

	sbt_need_method();
	/*
	 * Thread stacks stay cached after a warm-up; per-thread malloc arenas
	 * would not, so use one.  Valgrind maps memory for its threads as it
	 * likes, and ASan's heap grows with every thread it quarantines:
	 * there, no line count.
	 */
	mallopt(M_ARENA_MAX, 1);
	ck_assert_int_eq(run_threads(churn, 20), 0);
	lines = sbt_maps_lines();
	ck_assert_int_eq(run_threads(churn, 300), 0);
	if (!sbt_under_valgrind() && !sbt_under_asan())
		ck_assert_int_eq(sbt_maps_lines(), lines);
}
END_TEST

/* Up to 320 live buffers at once: the registry grows under contention. */
START_TEST(threads_8_stress)
{
	sbt_need_method();
	ck_assert_int_eq(run_threads(stress, 600), 0);
}
END_TEST

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
int first_use_main(void)
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

START_TEST(first_use_threads_no_munlock2)
{
	static const struct sbt_deny no_munlock2[] = {
		{ __NR_munlock2, -1, 0, 0, 0 },
		{ __NR_munlockall2, -1, 0, 0, 0 },
	};
	/*
	 * A sandbox that kills the process on a call it does not know: the
	 * library proves MAP_LOCKONFAULT with mmap() alone and never issues
	 * munlock2/munlockall2, on a kernel with the series or without it.
	 */
	const struct sbt_self se = { .mode = "--first-use", .deny = no_munlock2, .ndeny = 2 };
	char msg[256];
	int st;

	sbt_need_method();
	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "%s: status %#x (exit %d = failed step) %s", se.mode,
		      st, WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

/* ---- fork() while other threads hold the library's locks ---- */

static int stop_churning;

int keep_churning(void)
{
	return !__atomic_load_n(&stop_churning, __ATOMIC_RELAXED);
}

void fork_while_churning(void *(*churn)(void *), int (*in_child)(void))
{
	/*
	 * Under ASan each fork copies the shadow's mappings while three
	 * threads contend for mmap_lock, and under QEMU's TCG a fork costs
	 * thirty times more: 1000 forks can outlast check's timeout there.
	 * So the loop stops after 30 s, but never before 100 forks.
	 */
	const int nforks = sbt_under_asan() ? 250 : 1000, min_forks = 100;
	struct timespec t0, now;
	int forks, status = 0;
	pthread_t t[3];
	void *bad;
	long i;

	__atomic_store_n(&stop_churning, 0, __ATOMIC_RELAXED);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, churn, (void *)(i + 1)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (forks = 0; forks < nforks; forks++) {
		pid_t pid;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (forks >= min_forks && now.tv_sec - t0.tv_sec >= 30)
			break;
		pid = fork();

		if (pid == 0) {
			/* A deadlocked child dies of SIGALRM (not check's handler). */
			signal(SIGALRM, SIG_DFL);
			alarm(10);
			_exit(in_child());
		}
		ck_assert_int_ge(pid, 0);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		if (!sbt_exited_ok(status))
			break;
	}
	__atomic_store_n(&stop_churning, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(pthread_join(t[i], &bad), 0);
		ck_assert_ptr_null(bad);
	}
	ck_assert_msg(sbt_exited_ok(status), "child %d: status %#x (%s)", forks + 1, status,
		      sbt_signalled(status, SIGALRM) ? "deadlocked" : "failed");
}

static void *churn_until_stopped(void *arg)
{
	unsigned seed = (uintptr_t)arg;

	while (keep_churning()) {
		size_t n = 1 + rand_r(&seed) % 5000;
		unsigned char *p = secbuf_alloc_flags(n, sbt_flags(0));

		if (!p)
			return (void *)1;
		memset(p, 0x5a, n);
		secbuf_free(p);
	}
	return NULL;
}

static int alloc_in_child(void)
{
	unsigned char *p = secbuf_alloc_flags(64, sbt_flags(0));

	if (!p)
		return 2;
	memset(p, 1, 64);
	secbuf_free(p);
	return 0;
}

START_TEST(fork_while_threads_allocate)
{
	sbt_need_method();
	fork_while_churning(churn_until_stopped, alloc_in_child);
}
END_TEST

struct inherited_use {
	unsigned char *p;
	int size;	/* secbuf_size instead of secbuf_free */
};

static void use_inherited(void *arg)
{
	struct inherited_use *iu = arg;

	if (iu->size)
		(void)secbuf_size(iu->p);
	else
		secbuf_free(iu->p);
	_exit(0);
}

START_TEST(fork_child_inherited_buffer_aborts)
{
	char fails[1024] = "";
	struct inherited_use iu;
	unsigned char *p;

	sbt_need_method();
	p = secbuf_alloc_flags(100, sbt_flags(0));
	ck_assert_ptr_nonnull(p);
	for (iu.size = 0; iu.size <= 1; iu.size++) {
		char msg[512];
		int st;

		iu.p = p;
		st = sbt_child(use_inherited, &iu, msg, sizeof(msg));
		if (!sbt_signalled(st, SIGABRT) ||
		    !strstr(msg, "allocated by a parent process before fork()"))
			sbt_note(fails, sizeof(fails), "%s: status %#x, stderr: %s",
				 iu.size ? "secbuf_size" : "secbuf_free", st, msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
	secbuf_free(p);
}
END_TEST

/* ---- a call using a mapping while another thread frees the buffer ---- */

/* The trapped call's arguments and its result, in this machine's registers. */
#if defined(__x86_64__)
#define TRAP_ARG(uc, i) ((uc)->uc_mcontext.gregs[(const int[]){ REG_RDI, REG_RSI, REG_RDX }[i]])
#define TRAP_RET(uc)	((uc)->uc_mcontext.gregs[REG_RAX])
#elif defined(__aarch64__)
#define TRAP_ARG(uc, i) ((uc)->uc_mcontext.regs[i])
#define TRAP_RET(uc)	((uc)->uc_mcontext.regs[0])
#endif

#if defined(TRAP_RET)
#include <time.h>
#include <ucontext.h>

static struct {
	unsigned char *p, *q;	/* the buffer under test; what B allocates after freeing it */
	size_t size;
	int in_call, reused;
} race;

/*
 * SIGSYS in the calling thread, inside its mprotect or mincore: give the
 * other thread 300 ms to free the buffer and allocate another of the same
 * size, then make the call, page by page (a length the filter lets by).
 */
static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	unsigned long addr = TRAP_ARG(uc, 0), len = TRAP_ARG(uc, 1), arg = TRAP_ARG(uc, 2), off;
	struct timespec ms = { 0, 1000000 };
	size_t page = sbt_page();
	long ret = 0;
	int i;

	(void)sig;
	__atomic_store_n(&race.in_call, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < 300 && !__atomic_load_n(&race.reused, __ATOMIC_SEQ_CST); i++)
		nanosleep(&ms, NULL);
	for (off = 0; off < len && ret == 0; off += page)
		ret = syscall(si->si_syscall, addr + off, page,
			      si->si_syscall == SYS_mincore ? arg + off / page : arg);
	TRAP_RET(uc) = ret < 0 ? -errno : 0;
}

static void *free_and_reuse(void *arg)
{
	struct timespec ms = { 0, 1000000 };

	(void)arg;
	while (!__atomic_load_n(&race.in_call, __ATOMIC_SEQ_CST))
		nanosleep(&ms, NULL);
	secbuf_free(race.p);
	race.q = secbuf_alloc_flags(race.size, sbt_flags(0));
	__atomic_store_n(&race.reused, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Exit code = failed step. */
static void racing_call(void *arg)
{
	int use_stat = *(int *)arg, ret;
	size_t page = sbt_page();
	struct sbt_deny trap = { use_stat ? SYS_mincore : SYS_mprotect, 1, 3 * page, ~0u,
				 SBT_TRAP };
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	struct secbuf_stat st = { 0 };
	char line[256];
	pthread_t b;

	race.size = 3 * page - 16;	/* three data pages */
	race.p = secbuf_alloc_flags(race.size, sbt_flags(0));
	if (!race.p)
		_exit(2);
	memset(race.p, 1, race.size);
	/* B first: the filter is for this thread only. */
	if (sigaction(SIGSYS, &sa, NULL) < 0 || pthread_create(&b, NULL, free_and_reuse, NULL) ||
	    sbt_deny_syscalls(&trap, 1) < 0)
		_exit(3);
	if (use_stat)
		ret = secbuf_stat(race.p, &st);
	else
		ret = secbuf_protect(race.p, SECBUF_READONLY);
	pthread_join(b, NULL);
	if (!race.q || sbt_maps_line(race.q, line, sizeof(line)) < 0)
		_exit(4);
	if (!strstr(line, " rw-p ")) {
		fprintf(stderr, "the next buffer's mapping: %s\n", line);
		_exit(5);
	}
	if (ret < 0 || (use_stat && (st.size != race.size || st.resident_pages != 3))) {
		fprintf(stderr, "returned %d (%s), %zu resident pages\n", ret, strerror(errno),
			st.resident_pages);
		_exit(6);
	}
	secbuf_free(race.q);
	_exit(0);
}

START_TEST(protect_stat_pin_buffer_against_free)
{
	char fails[1024] = "";
	int use_stat;

	sbt_need_method();
	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	for (use_stat = 0; use_stat <= 1; use_stat++) {
		char msg[512];
		int st = sbt_child(racing_call, &use_stat, msg, sizeof(msg));

		if (!sbt_exited_ok(st))
			sbt_note(fails, sizeof(fails), "%s: status %#x (exit %d = failed step) %s",
				 use_stat ? "secbuf_stat" : "secbuf_protect", st,
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST
#else
START_TEST(protect_stat_pin_buffer_against_free)
{
	sbt_skip("the syscall trap reads only x86-64's and arm64's registers");
}
END_TEST
#endif

const struct sbt_test thread_fork_tests[] = {
	SBT(first_use_threads_no_munlock2),
	SBT(fork_child_sees_zeros),
	SBT_SLOW(threads_8_no_leak),
	SBT_SLOW(threads_8_stress),
	SBT_SLOW(fork_while_threads_allocate),
	SBT(fork_child_inherited_buffer_aborts),
	SBT_SLOW(protect_stat_pin_buffer_against_free),
	SBT_END,
};
