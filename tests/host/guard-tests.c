/* Guard pages, canaries, protection, and misuse that must abort. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <secbuf.h>
#include "tests.h"

START_TEST(overflow_faults)
{
	static const size_t sizes[] = { 16, 17, 4096, 100, 65536 };
	size_t i;

	sbt_need_method();
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = secbuf_alloc_flags(sizes[i], sbt_flags(0));

		ck_assert_ptr_nonnull(p);
		/* Last aligned byte is fine, the next one is in the guard. */
		ck_assert(sbt_exited_ok(sbt_poke(p + sbt_round16(sizes[i]) - 1, 1)));
		ck_assert_msg(sbt_signalled(sbt_poke(p + sbt_round16(sizes[i]), 1), SIGSEGV),
			      "one byte past size %zu did not fault", sizes[i]);
		secbuf_free(p);
	}
}
END_TEST

START_TEST(underflow_guard_faults)
{
	unsigned char *p, *start;

	sbt_need_method();
	p = secbuf_alloc_flags(5000, sbt_flags(0));
	ck_assert_ptr_nonnull(p);
	start = sbt_data_start(p);
	ck_assert_ptr_nonnull(start);
	ck_assert(sbt_exited_ok(sbt_poke(start, 1)));
	ck_assert(sbt_signalled(sbt_poke(start - 1, 0), SIGSEGV));
	ck_assert(sbt_signalled(sbt_poke(start - 1, 1), SIGSEGV));
	/* Whole pages of this machine's size: their far ends fault too. */
	ck_assert(sbt_signalled(sbt_poke(start - sbt_page(), 0), SIGSEGV));
	ck_assert(sbt_signalled(sbt_poke(p + sbt_round16(5000) + sbt_page() - 1, 0), SIGSEGV));
	printf("# REPORT: guards: a %zu KiB page each side of a buffer's data\n",
	       sbt_page() / 1024);
	secbuf_free(p);
}
END_TEST

enum misuse_kind {
	UNDERFLOW_INTO_CANARY,
	OVERFLOW_INTO_PADDING,
	DOUBLE_FREE,
	FREE_HEAP_POINTER,
	FREE_STACK_POINTER,
	FREE_INSIDE_BUFFER,
	SIZE_INSIDE_BUFFER,
	PROTECT_STACK_POINTER,
	STAT_CANARY_ADDRESS,
	CORRUPT_FIRST_CANARY_BYTE,
	FREE_AFTER_ADDRESS_REUSE,
	FREE_DEEP_INSIDE_UNALIGNED,
};

struct misuse {
	enum misuse_kind kind;
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
	struct secbuf_stat st;
	char local[32];

	if (!p)
		_exit(3);
	switch (mu->kind) {
	case UNDERFLOW_INTO_CANARY:
		p[-1] ^= 1;
		secbuf_free(p);
		break;
	case OVERFLOW_INTO_PADDING:
		p[mu->size] ^= 1;
		secbuf_free(p);
		break;
	case DOUBLE_FREE:
		secbuf_free(p);
		secbuf_free(p);
		break;
	case FREE_HEAP_POINTER:
		secbuf_free(malloc(64));
		break;
	case FREE_STACK_POINTER:
		secbuf_free(local);
		break;
	case FREE_INSIDE_BUFFER:
		secbuf_free(p + 16);
		break;
	case SIZE_INSIDE_BUFFER:
		(void)secbuf_size(p + 1);
		break;
	case PROTECT_STACK_POINTER:
		secbuf_protect(local, SECBUF_READONLY);
		break;
	case STAT_CANARY_ADDRESS:
		secbuf_stat(p - 16, &st);
		break;
	case CORRUPT_FIRST_CANARY_BYTE:
		p[-16] ^= 0x80;
		secbuf_free(p);
		break;
	case FREE_AFTER_ADDRESS_REUSE:
		reuse_then_free(p);
		break;
	case FREE_DEEP_INSIDE_UNALIGNED:
		secbuf_free(p + mu->size / 2 + 3);
		break;
	}
	_exit(0);
}

START_TEST(corruption_aborts)
{
	static const struct { struct misuse mu; const char *says; } cases[] = {
		{ { UNDERFLOW_INTO_CANARY, 64 }, "underflow" },
		{ { CORRUPT_FIRST_CANARY_BYTE, 4096 }, "underflow" },
		{ { OVERFLOW_INTO_PADDING, 17 }, "overflow" },
		{ { OVERFLOW_INTO_PADDING, 4095 }, "overflow" },
		{ { DOUBLE_FREE, 64 }, "double free" },
		{ { FREE_HEAP_POINTER, 64 }, "foreign pointer" },
		{ { FREE_STACK_POINTER, 64 }, "foreign pointer" },
		{ { FREE_INSIDE_BUFFER, 64 }, "inside the live buffer" },
		{ { FREE_DEEP_INSIDE_UNALIGNED, 3 * 4096 }, "inside the live buffer" },
		{ { FREE_AFTER_ADDRESS_REUSE, 64 }, "double free" },
		{ { SIZE_INSIDE_BUFFER, 64 }, "secbuf_size" },
		{ { PROTECT_STACK_POINTER, 64 }, "secbuf_protect" },
		{ { STAT_CANARY_ADDRESS, 64 }, "secbuf_stat" },
	};
	size_t i;

	sbt_need_method();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct misuse mu = cases[i].mu;
		char msg[512];
		int st = sbt_child(do_misuse, &mu, msg, sizeof(msg));

		ck_assert_msg(sbt_signalled(st, SIGABRT), "case %zu: status %#x, stderr: %s", i,
			      st, msg);
		ck_assert_msg(strstr(msg, cases[i].says), "case %zu: message '%s' lacks '%s'",
			      i, msg, cases[i].says);
	}
}
END_TEST

START_TEST(protect_modes_enforced)
{
	unsigned char *p;

	sbt_need_method();
	p = secbuf_alloc_flags(5000, sbt_flags(0));
	ck_assert_ptr_nonnull(p);
	p[0] = 7;
	ck_assert_int_eq(secbuf_protect(p, SECBUF_NOACCESS), 0);
	ck_assert(sbt_signalled(sbt_poke(p, 0), SIGSEGV));
	ck_assert(sbt_signalled(sbt_poke(p + 4999, 1), SIGSEGV));
	ck_assert_int_eq(secbuf_protect(p, SECBUF_READONLY), 0);
	ck_assert(sbt_exited_ok(sbt_poke(p + 4999, 0)));
	ck_assert(sbt_signalled(sbt_poke(p, 1), SIGSEGV));
	ck_assert_uint_eq(p[0], 7);
	ck_assert_int_eq(secbuf_protect(p, SECBUF_READWRITE), 0);
	ck_assert(sbt_exited_ok(sbt_poke(p, 1)));
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

/*
 * Runs as "secbuf-tests --free-one": freed buffers leave their slots
 * behind, then a pointer with the value 1 is freed.  Where the registry
 * matched a free-slot marker of the same value, the abort called it
 * corrupted metadata.
 */
int free_one_main(void)
{
	void *p[31];
	size_t i;

	for (i = 0; i < 31; i++)
		p[i] = secbuf_alloc_flags(16, SECBUF_BEST_EFFORT);
	for (i = 0; i < 31; i++)
		secbuf_free(p[i]);
	secbuf_free((void *)1);
	return 0;
}

START_TEST(free_pointer_one_is_not_live)
{
	const struct sbt_self se = { .mode = "--free-one" };
	int i;

	sbt_need_method();
	/* A fresh process each time: a new key places the slots anew. */
	for (i = 0; i < 12; i++) {
		char msg[512];
		int st = sbt_run_self(&se, msg, sizeof(msg));

		ck_assert_msg(sbt_signalled(st, SIGABRT), "run %d: status %#x, stderr: %s", i, st,
			      msg);
		ck_assert_msg(strstr(msg, "not a live secbuf buffer"), "run %d: %s", i, msg);
	}
}
END_TEST

static void on_sigprof(int sig)
{
	(void)sig;
	secbuf_free(secbuf_alloc_flags(32, sbt_flags(0)));
}

/* Alloc and free for up to 5 s with SIGPROF firing every 100 us of CPU time. */
static void interrupted_calls(void *arg)
{
	struct itimerval every = { { 0, 100 }, { 0, 100 } };
	struct timespec t0, t;

	(void)arg;
	/* A deadlock ends as SIGALRM (not check's handler, which kills the test). */
	signal(SIGALRM, SIG_DFL);
	alarm(30);
	if (signal(SIGPROF, on_sigprof) == SIG_ERR || setitimer(ITIMER_PROF, &every, NULL) < 0)
		_exit(2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		secbuf_free(secbuf_alloc_flags(32, sbt_flags(0)));
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 5);
	_exit(0);
}

START_TEST(signal_handler_reentry_aborts)
{
	char msg[512];
	int st;

	sbt_need_method();
	st = sbt_child(interrupted_calls, NULL, msg, sizeof(msg));
	ck_assert_msg(sbt_signalled(st, SIGABRT), "status %#x (%s), stderr: %s", st,
		      sbt_signalled(st, SIGALRM) ? "deadlocked" : "not caught", msg);
	ck_assert_msg(strstr(msg, "not async-signal-safe"), "message: %s", msg);
}
END_TEST

const struct sbt_test guard_tests[] = {
	SBT(overflow_faults),
	SBT(underflow_guard_faults),
	SBT(corruption_aborts),
	SBT(protect_modes_enforced),
	SBT(free_pointer_one_is_not_live),
	SBT(signal_handler_reentry_aborts),
	SBT_END,
};
