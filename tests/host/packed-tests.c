/*
 * Packed secrets (SECBUF_PACKED), the calls: the flag and its limits,
 * sizes, alignment and stat, a size past SECBUF_PACKED_MAX, protect's
 * EINVAL and errno on success; and the helpers the packed-*-tests.c files
 * share.  Slabs, guard bytes and misuse, locking, capacity, and threads
 * and fork each have a packed-*-tests.c of their own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <secbuf.h>
#include "tests.h"

/* Flags for a packed secret that succeeds under every method. */
unsigned packed_flags(void)
{
	return sbt_flags(SECBUF_PACKED | (sbt_method() == SECBUF_LOCK_MLOCK ? SECBUF_POPULATE : 0));
}

/* Whether packed_flags() secrets are locked (mlock locks populated slabs). */
int packed_locks(void)
{
	return sbt_locks(packed_flags());
}

/* Run fn(arg) in a child whose stderr says what it found; it must exit 0. */
void run_reported(void (*fn)(void *), void *arg, const char *what)
{
	char msg[512];
	int st = sbt_child(fn, arg, msg, sizeof(msg));

	printf("# REPORT: %s (%s): %s\n", what, secbuf_lock_method_name(sbt_method()), msg);
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}

START_TEST(packed_max_and_flag)
{
	ck_assert_int_ge(SECBUF_PACKED_MAX, 256);
	ck_assert_uint_eq(SECBUF_PACKED & (SECBUF_POPULATE | SECBUF_BEST_EFFORT), 0);
	sbt_need_method();
	expect_alloc_fails(0, packed_flags(), EINVAL, EINVAL);
	expect_alloc_fails(32, packed_flags() | 0x80, EINVAL, EINVAL);
}
END_TEST

START_TEST(packed_sizes_align_and_stat)
{
	static const size_t sizes[] = { 1, 15, 16, 17, 31, 32, 33, 64, 100, 255, SECBUF_PACKED_MAX };
	size_t i, page = sbt_page();

	sbt_need_method();
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		unsigned char *p = secbuf_alloc_flags(n, packed_flags());
		struct secbuf_stat st;

		ck_assert_msg(p != NULL, "size %zu: %s", n, strerror(errno));
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		ck_assert_uint_eq(secbuf_size(p), n);
		memset(p, 0x5a, n);
		ck_assert_int_eq(secbuf_stat(p, &st), 0);
		ck_assert_uint_eq(st.size, n);
		ck_assert_uint_eq(st.flags, packed_flags());
		/* The page or two holding the slot: shared, resident, locked as the slab is. */
		ck_assert_uint_eq(st.mapped_bytes % page, 0);
		ck_assert_uint_ge(st.mapped_bytes, page);
		ck_assert_uint_le(st.mapped_bytes, 2 * page);
		ck_assert_uint_eq(st.resident_pages, st.mapped_bytes / page);
		ck_assert_uint_eq(st.locked_pages, packed_locks() ? st.resident_pages : 0);
		ck_assert_int_eq(st.lock_method, packed_locks() ? sbt_method() : SECBUF_LOCK_NONE);
		secbuf_free(p);
	}
}
END_TEST

struct poke {
	volatile unsigned char *at;
};

static void do_write(void *arg)
{
	*((struct poke *)arg)->at = 1;
}

/* Past SECBUF_PACKED_MAX the flag gives an ordinary buffer, flush against its guard. */
START_TEST(packed_over_max_is_guarded)
{
	size_t n = SECBUF_PACKED_MAX + 1;
	unsigned char *p;
	struct poke pk;
	char msg[256];

	sbt_need_method();
	p = secbuf_alloc_flags(n, packed_flags());
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(secbuf_size(p), n);
	pk.at = p + sbt_round16(n);
	ck_assert(sbt_signalled(sbt_child(do_write, &pk, msg, sizeof(msg)), SIGSEGV));
	/* It can be protected, which a packed secret cannot. */
	ck_assert_int_eq(secbuf_protect(p, SECBUF_READONLY), 0);
	secbuf_free(p);
}
END_TEST

START_TEST(packed_protect_einval_changes_nothing)
{
	static const int modes[] = { SECBUF_NOACCESS, SECBUF_READONLY, SECBUF_READWRITE };
	struct secbuf_stat before, after;
	unsigned char *p;
	size_t i;

	sbt_need_method();
	p = secbuf_alloc_flags(32, packed_flags());
	ck_assert_ptr_nonnull(p);
	memset(p, 0x42, 32);
	ck_assert_int_eq(secbuf_stat(p, &before), 0);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		errno = 0;
		ck_assert_int_eq(secbuf_protect(p, modes[i]), -1);
		ck_assert_int_eq(errno, EINVAL);
	}
	p[31] = 0x43;	/* still writable: NOACCESS did nothing */
	ck_assert_uint_eq(p[0], 0x42);
	ck_assert_int_eq(secbuf_stat(p, &after), 0);
	ck_assert_mem_eq(&before, &after, sizeof(before));
	secbuf_free(p);
}
END_TEST

START_TEST(packed_success_keeps_errno)
{
	struct secbuf_stat st;
	unsigned char *p;

	sbt_need_method();
	errno = 4242;
	p = secbuf_alloc_flags(32, packed_flags());
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(errno, 4242);
	ck_assert_uint_eq(secbuf_size(p), 32);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	ck_assert_int_eq(errno, 4242);
	secbuf_free(p);
	ck_assert_int_eq(errno, 4242);
}
END_TEST

/* clang-format off */
const struct sbt_test packed_tests[] = {
	SBT(packed_max_and_flag),
	SBT(packed_sizes_align_and_stat),
	SBT(packed_over_max_is_guarded),
	SBT(packed_protect_einval_changes_nothing),
	SBT(packed_success_keeps_errno),
	SBT_END,
};
/* clang-format on */
