/*
 * The guard bytes around each packed secret: misuse they and the live
 * bitmap catch aborts, naming it; a freed slot is zeroed at once and its
 * guard bytes stay; the bytes are keyed per process, slot and class.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <secbuf.h>
#include "tests.h"

/* ---- misuse ---- */

enum packed_misuse {
	UNDERFLOW,
	OVERFLOW_PADDING,
	OVERFLOW_GUARD,
	OVERFLOW_INTO_NEXT,
	DOUBLE_FREE,
	FREE_INSIDE,
	FREE_IN_GUARD_BYTES,
	FREE_UNUSED_SLOT,
	SIZE_FREED,
	STAT_INSIDE,
	PROTECT_FREED,
	FREE_HEAP_POINTER,
};

static void do_packed_misuse(void *arg)
{
	enum packed_misuse kind = *(enum packed_misuse *)arg;
	unsigned char *a = secbuf_alloc_flags(20, packed_flags());
	unsigned char *b = secbuf_alloc_flags(20, packed_flags());
	struct secbuf_stat st;

	if (!a || !b || b != a + 48)
		_exit(3);
	memset(a, 1, 20);
	switch (kind) {
	case UNDERFLOW:
		a[-1] ^= 1;
		secbuf_free(a);
		break;
	case OVERFLOW_PADDING:
		a[20] ^= 1;
		secbuf_free(a);
		break;
	case OVERFLOW_GUARD:
		a[32] ^= 1;
		secbuf_free(a);
		break;
	case OVERFLOW_INTO_NEXT:
		a[47] ^= 1; /* b's front guard: caught when b is freed */
		secbuf_free(b);
		break;
	case DOUBLE_FREE:
		secbuf_free(a);
		secbuf_free(a);
		break;
	case FREE_INSIDE:
		secbuf_free(a + 16);
		break;
	case FREE_IN_GUARD_BYTES:
		secbuf_free(a + 32);
		break;
	case FREE_UNUSED_SLOT:
		secbuf_free(b + 48);
		break;
	case SIZE_FREED:
		secbuf_free(a);
		(void)secbuf_size(a);
		break;
	case STAT_INSIDE:
		secbuf_stat(a + 1, &st);
		break;
	case PROTECT_FREED:
		secbuf_free(a);
		secbuf_protect(a, SECBUF_READONLY);
		break;
	case FREE_HEAP_POINTER:
		secbuf_free(malloc(32));
		break;
	}
	_exit(0);
}

START_TEST(packed_misuse_aborts)
{
	static const struct {
		enum packed_misuse kind;
		const char *says;
	} cases[] = {
		{ UNDERFLOW, "underflow" },
		{ OVERFLOW_PADDING, "padding after byte 20 is corrupted (buffer overflow)" },
		{ OVERFLOW_GUARD, "after the packed secret are corrupted (buffer overflow)" },
		{ OVERFLOW_INTO_NEXT, "overflow of the secret before it" },
		{ DOUBLE_FREE, "double free" },
		{ FREE_INSIDE, "inside the live buffer" },
		{ FREE_IN_GUARD_BYTES, "not a live secbuf buffer" },
		{ FREE_UNUSED_SLOT, "not a live secbuf buffer" },
		{ SIZE_FREED, "secbuf_size" },
		{ STAT_INSIDE, "secbuf_stat" },
		{ PROTECT_FREED, "secbuf_protect" },
		{ FREE_HEAP_POINTER, "not a live secbuf buffer" },
	};
	char fails[2048] = "";
	size_t i;

	sbt_need_method();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum packed_misuse kind = cases[i].kind;
		char msg[512];
		int st = sbt_child(do_packed_misuse, &kind, msg, sizeof(msg));

		if (!sbt_signalled(st, SIGABRT) || !strstr(msg, cases[i].says))
			sbt_note(fails, sizeof(fails),
				 "case %zu: status %#x, want '%s', stderr: %s", i, st,
				 cases[i].says, msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST

/* ---- the wipe ---- */

START_TEST(packed_free_zeroes_slot_at_once)
{
	unsigned char *a, *b, front[16], back[16];
	size_t i;

	sbt_need_method();
	a = secbuf_alloc_flags(20, packed_flags());
	b = secbuf_alloc_flags(20, packed_flags()); /* keeps the slab mapped */
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	memset(a, 0xa5, 20);
	memcpy(front, a - 16, 16);
	memcpy(back, a + 32, 16);
	secbuf_free(a);
	for (i = 0; i < 32; i++)
		ck_assert_msg(a[i] == 0, "byte %zu of the freed slot is %#x", i, a[i]);
	/* The guard bytes stay, keyed and not zero: they are not the secret's. */
	ck_assert(!memcmp(a - 16, front, 16) && !memcmp(a + 32, back, 16));
	ck_assert(memcmp(front, (unsigned char[16]){ 0 }, 16));
	secbuf_free(b);
}
END_TEST

/* ---- keyed guard bytes ---- */

/* The 16 guard bytes in front of a fresh process's first packed secret. */
static void first_guard(void *arg)
{
	unsigned char *p = secbuf_alloc_flags(32, packed_flags());

	(void)arg;
	if (!p)
		_exit(2);
	(void)!write(STDERR_FILENO, p - 16, 16);
	_exit(0);
}

START_TEST(packed_guard_bytes_keyed)
{
	unsigned char g[3][16], zero[16] = { 0 };
	unsigned char *a, *b, *c;
	char msg[2][64];
	int i;

	sbt_need_method();
	/* Two processes (two keys), same slot of the same class. */
	for (i = 0; i < 2; i++) {
		memset(msg[i], 0, sizeof(msg[i]));
		ck_assert(sbt_exited_ok(sbt_child(first_guard, NULL, msg[i], sizeof(msg[i]))));
	}
	ck_assert_msg(memcmp(msg[0], msg[1], 16), "two processes, the same guard bytes");
	/* One process: neighbours differ, and so do slabs of two classes. */
	a = secbuf_alloc_flags(32, packed_flags());
	b = secbuf_alloc_flags(32, packed_flags());
	c = secbuf_alloc_flags(48, packed_flags());
	ck_assert(a && b && c);
	memcpy(g[0], a - 16, 16);
	memcpy(g[1], b - 16, 16);
	memcpy(g[2], c - 16, 16);
	for (i = 0; i < 3; i++)
		ck_assert(memcmp(g[i], zero, 16));
	ck_assert(memcmp(g[0], g[1], 16) && memcmp(g[0], g[2], 16) && memcmp(g[1], g[2], 16));
	secbuf_free(a);
	secbuf_free(b);
	secbuf_free(c);
}
END_TEST

const struct sbt_test packed_guard_tests[] = {
	SBT(packed_misuse_aborts),
	SBT(packed_free_zeroes_slot_at_once),
	SBT(packed_guard_bytes_keyed),
	SBT_END,
};
