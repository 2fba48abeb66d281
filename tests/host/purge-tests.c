/*
 * secbuf_purge() and the crash path: every live buffer and packed secret
 * reads as zeros after a purge and can still be freed; a crash purges,
 * names the guard page it hit, and ends as it would have without us (the
 * earlier handler runs, or the default action); a purge with other
 * threads allocating never waits; an exit purges when asked to.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "tests.h"

#define MARK 0xa5
#define NBUF 6

static unsigned char *bufs[NBUF];
static const size_t sizes[NBUF] = { 1, 112, 5000, 3 * 4096, 32, 256 };

/* Guarded and packed buffers full of MARK; one no-access, one read-only. */
static void fill_buffers(void)
{
	size_t i;

	for (i = 0; i < NBUF; i++) {
		unsigned flags = sizes[i] == 32 || sizes[i] == 256 ? SECBUF_PACKED : 0;

		if (sbt_method() == SECBUF_LOCK_MLOCK)
			flags |= SECBUF_POPULATE;
		bufs[i] = secbuf_alloc_flags(sizes[i], sbt_flags(flags));
		ck_assert_ptr_nonnull(bufs[i]);
		memset(bufs[i], MARK, sizes[i]);
	}
	ck_assert_int_eq(secbuf_protect(bufs[2], SECBUF_NOACCESS), 0);
	ck_assert_int_eq(secbuf_protect(bufs[3], SECBUF_READONLY), 0);
}

/* How many of the buffers still hold a byte that is not zero. */
static int unwiped(void)
{
	int n = 0;
	size_t i;

	for (i = 0; i < NBUF; i++)
		if (sbt_differs(bufs[i], sizes[i], 0))
			n++;
	return n;
}

START_TEST(purge_wipes_every_buffer)
{
	size_t i;

	sbt_need_method();
	fill_buffers();
	errno = 4242;
	secbuf_purge();
	ck_assert_int_eq(errno, 4242);
	/* Left readable: the no-access and read-only ones too. */
	ck_assert_int_eq(unwiped(), 0);
	for (i = 0; i < NBUF; i++)
		secbuf_free(bufs[i]); /* canaries and guard bytes intact */
}
END_TEST

/* The handler that was there first: it sees the buffers after the purge. */
static void earlier_handler(int sig)
{
	(void)sig;
	_exit(unwiped() ? 41 : 40);
}

struct crash {
	int earlier; /* install earlier_handler first */
	int sig;     /* 0: overflow into the guard page */
};

static void crash_child(void *arg)
{
	const struct crash *c = arg;
	volatile unsigned char *past;

	if (c->earlier && signal(c->sig ? c->sig : SIGSEGV, earlier_handler) == SIG_ERR)
		_exit(2);
	if (secbuf_purge_on_crash(0) < 0)
		_exit(3);
	fill_buffers();
	if (c->sig == SIGABRT)
		abort();
	if (c->sig)
		raise(c->sig);
	past = bufs[1] + sizes[1]; /* a multiple of 16: flush against the guard page */
	*past = 1;
	_exit(4);
}

START_TEST(crash_handler_purges_and_reraises)
{
	static const struct crash cases[] = {
		{ 1, 0 },	/* overflow, earlier handler: it runs, buffers wiped */
		{ 0, 0 },	/* overflow, default action: killed by SIGSEGV */
		{ 0, SIGABRT }, /* abort(): killed by SIGABRT */
		{ 1, SIGBUS },	/* a sent SIGBUS reaches the earlier handler */
	};
	char msg[512], want[64];
	size_t i;
	int st;

	sbt_need_method();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* memcheck reports the overflow and exits 1 instead of the handler's 40. */
		if (sbt_under_valgrind() && cases[i].earlier && !cases[i].sig) {
			printf("# REPORT: case %zu not run under valgrind: an exit after a "
			       "reported invalid write becomes --error-exitcode\n",
			       i);
			continue;
		}
		st = sbt_child(crash_child, (void *)&cases[i], msg, sizeof(msg));
		msg[strcspn(msg, "\n")] = 0;
		printf("# REPORT: case %zu: status %#x %s\n", i, st, msg);
		if (cases[i].earlier)
			ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 40,
				      "case %zu: status %#x (exit 41: not wiped) %s", i, st, msg);
		else
			ck_assert_msg(sbt_signalled(st, cases[i].sig ? cases[i].sig : SIGSEGV),
				      "case %zu: status %#x %s", i, st, msg);
		if (!cases[i].sig) {
			snprintf(want, sizeof(want), "guard page after the buffer 0x");
			ck_assert_msg(strstr(msg, want) &&
					      strstr(msg, "(112 bytes): a buffer overflow"),
				      "case %zu: no name for the overrun buffer: %s", i, msg);
		}
	}
}
END_TEST

/*
 * The handler's diagnosis for the faults that are not in a guard page: a
 * write to a read-only buffer, and a use of one freed before.  The same
 * as the program would want without the purge: the buffer and its size.
 */
enum misfault { WRITE_READONLY, USE_NOACCESS, USE_AFTER_FREE };

static void misfault_child(void *arg)
{
	volatile unsigned char *p = secbuf_alloc_flags(100, sbt_flags(0));

	if (!p || secbuf_purge_on_crash(0) < 0)
		_exit(3);
	p[0] = 1;
	switch (*(enum misfault *)arg) {
	case WRITE_READONLY:
		if (secbuf_protect((void *)p, SECBUF_READONLY) < 0)
			_exit(4);
		p[10] = 2;
		break;
	case USE_NOACCESS:
		if (secbuf_protect((void *)p, SECBUF_NOACCESS) < 0)
			_exit(4);
		(void)p[10];
		break;
	case USE_AFTER_FREE:
		secbuf_free((void *)p);
		p[10] = 2;
		break;
	}
	_exit(5);
}

START_TEST(crash_handler_names_protected_and_freed)
{
	static const struct {
		enum misfault kind;
		const char *says;
	} cases[] = {
		{ WRITE_READONLY, "(100 bytes), read-only or no-access (secbuf_protect): a write" },
		{ USE_NOACCESS, "(100 bytes), read-only or no-access (secbuf_protect): a write" },
		{ USE_AFTER_FREE, "(100 bytes), freed before: a use after free" },
	};
	char msg[512], fails[2048] = "";

	sbt_need_method();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum misfault kind = cases[i].kind;
		int st = sbt_child(misfault_child, &kind, msg, sizeof(msg));

		msg[strcspn(msg, "\n")] = 0;
		printf("# REPORT: fault %zu: status %#x %s\n", i, st, msg);
		if (!sbt_signalled(st, SIGSEGV) || !strstr(msg, cases[i].says) ||
		    !strstr(msg, "in the buffer 0x") || !strstr(msg, "every buffer was wiped"))
			sbt_note(fails, sizeof(fails), "case %zu: status %#x, expected \"%s\": %s",
				 i, st, cases[i].says, msg);
	}
	ck_assert_msg(!*fails, "%s", fails);
}
END_TEST

/*
 * An overflow into a buffer's padding faults nowhere and is caught only by
 * its free: with SECBUF_CHECK_ON_EXIT=1 the exit checks every live buffer
 * and aborts on it.  The mode: a 33-byte buffer (or a packed 33-byte
 * secret) overflowed by one byte, never freed, then exit(0).
 */
int check_on_exit_main(void)
{
	const char *packed = getenv("SBT_PACKED");
	/* Best effort: the check is of canaries, under every method (none too). */
	unsigned char *p =
		secbuf_alloc_flags(33, SECBUF_BEST_EFFORT | (packed ? SECBUF_PACKED : 0));

	if (!p)
		return 2;
	memset(p, 1, 33);
	p[33] ^= 0x5a; /* the padding after the last byte */
	return 0;
}

START_TEST(check_on_exit_reports_an_unfreed_overflow)
{
	static const struct {
		const char *env, *says;
		int packed;
	} cases[] = {
		{ "SECBUF_CHECK_ON_EXIT=0", NULL, 0 },
		{ "SECBUF_CHECK_ON_EXIT=1", "at exit (SECBUF_CHECK_ON_EXIT): buffer(0x", 0 },
		{ "SECBUF_CHECK_ON_EXIT=1", "at exit (SECBUF_CHECK_ON_EXIT): packed secret(0x", 1 },
	};
	char msg[1024], fails[2048] = "";

	sbt_need_method();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sbt_self se = { .mode = "--check-on-exit", .env = cases[i].env };
		int st;

		/* The child inherits the environment, and the mode reads SBT_PACKED. */
		if (cases[i].packed)
			setenv("SBT_PACKED", "1", 1);
		st = sbt_run_self(&se, msg, sizeof(msg));
		unsetenv("SBT_PACKED");
		msg[strcspn(msg, "\n")] = 0;
		printf("# REPORT: %s%s: status %#x %s\n", cases[i].env,
		       cases[i].packed ? ", packed" : "", st, msg);
		if (cases[i].says ? !sbt_signalled(st, SIGABRT) || !strstr(msg, cases[i].says) ||
					    !strstr(msg, "padding after byte 33 is corrupted") :
				    !sbt_exited_ok(st))
			sbt_note(fails, sizeof(fails), "case %zu: status %#x: %s", i, st, msg);
	}
	ck_assert_msg(!*fails, "%s", fails);
}
END_TEST

static volatile int stop;

static void *churn(void *arg)
{
	(void)arg;
	while (!stop) {
		void *p = secbuf_alloc_flags(64, sbt_flags(SECBUF_PACKED));
		void *q = secbuf_alloc_flags(5000, sbt_flags(0));

		secbuf_free(p);
		secbuf_free(q);
	}
	return NULL;
}

static void purge_while_churning(void *arg)
{
	pthread_t t[3];
	size_t i;
	int k;

	(void)arg;
	/*
	 * A purge that waits for a lock ends as SIGALRM: 20 s for one round,
	 * however slow the machine (a KASAN kernel under TCG takes more than
	 * that for all 200).  The default action, not check's handler, which
	 * this child inherits and which would kill the whole test instead.
	 */
	signal(SIGALRM, SIG_DFL);
	for (i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, churn, NULL))
			_exit(2);
	for (k = 0; k < 200; k++) {
		alarm(20);
		fill_buffers();
		secbuf_purge();
		if (unwiped())
			_exit(3);
		for (i = 0; i < NBUF; i++)
			secbuf_free(bufs[i]);
	}
	stop = 1;
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	_exit(0);
}

START_TEST(purge_with_threads_running)
{
	char msg[512];
	int st;

	sbt_need_method();
	st = sbt_child(purge_while_churning, NULL, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

/* After fork: the child's purge wipes the child's, the parent's stay. */
START_TEST(purge_after_fork)
{
	unsigned char *mine;
	pid_t pid;
	int st;

	sbt_need_method();
	fill_buffers();
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		mine = secbuf_alloc_flags(100, sbt_flags(0));
		if (!mine)
			_exit(2);
		memset(mine, MARK, 100);
		secbuf_purge();
		_exit(sbt_differs(mine, 100, 0) ? 3 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(sbt_exited_ok(st), "child: status %#x", st);
	ck_assert_int_eq(secbuf_protect(bufs[2], SECBUF_READWRITE), 0);
	ck_assert_int_eq(unwiped(), NBUF);
	for (st = 0; st < NBUF; st++)
		secbuf_free(bufs[st]);
}
END_TEST

/* Registered before the library's: runs after its purge at exit. */
static void check_at_exit(void)
{
	_exit(unwiped() ? 41 : 40);
}

static void exit_child(void *arg)
{
	(void)arg;
	if (atexit(check_at_exit) || secbuf_purge_on_crash(SECBUF_PURGE_AT_EXIT) < 0)
		_exit(2);
	fill_buffers();
	if (secbuf_protect(bufs[2], SECBUF_READWRITE) < 0)
		_exit(3);
	exit(0);
}

START_TEST(purge_at_exit_when_asked)
{
	char msg[512];
	int st;

	sbt_need_method();
	ck_assert_int_eq(secbuf_purge_on_crash(0x80), -1);
	ck_assert_int_eq(errno, EINVAL);
	st = sbt_child(exit_child, NULL, msg, sizeof(msg));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 40, "status %#x (41: not wiped) %s", st,
		      msg);
}
END_TEST

const struct sbt_test purge_tests[] = {
	SBT(purge_wipes_every_buffer),
	SBT(crash_handler_purges_and_reraises),
	SBT(crash_handler_names_protected_and_freed),
	SBT(check_on_exit_reports_an_unfreed_overflow),
	SBT(purge_with_threads_running),
	SBT(purge_after_fork),
	SBT(purge_at_exit_when_asked),
	SBT_END,
};
