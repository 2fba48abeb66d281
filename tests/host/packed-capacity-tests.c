/*
 * How many packed secrets fit, and what they cost: a million as root,
 * 100,000 as nobody under an 8 MiB RLIMIT_MEMLOCK, a mapping per 1,000
 * and 64 locked bytes each at most, and no malloc heap per secret.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <secbuf.h>
#include "kfacts.h"
#include "tests.h"

/* Locked kB and number of mappings over the whole process. */
struct census {
	long locked_kb;
	int vmas;
};

static int add_vma(const struct smaps_vma *v, void *arg)
{
	struct census *c = arg;

	c->locked_kb += v->locked_kb;
	c->vmas++;
	return 0;
}

static struct census census(void)
{
	struct census c = { 0, 0 };

	ck_assert_int_eq(smaps_each(0, add_vma, &c), 0);
	return c;
}

struct fill {
	long want;    /* secrets to allocate; stop at the first failure */
	long memlock; /* RLIMIT_MEMLOCK to set, or 0 */
	int nobody;
};

/*
 * Exit code = failed step.  Reports the count, the mappings and the locked
 * bytes they added, then checks contents and frees everything.
 */
static void fill_secrets(void *arg)
{
	const struct fill *f = arg;
	struct rlimit rl = { f->memlock, f->memlock };
	struct census before, after;
	unsigned char **p = malloc(f->want * sizeof(*p));
	long n, bad = 0;

	if (!p || (f->memlock && setrlimit(RLIMIT_MEMLOCK, &rl) < 0))
		_exit(2);
	if (f->nobody && (setgid(65534) < 0 || setuid(65534) < 0))
		_exit(2);
	/* The key page and thread state first (not a slab), so that they are not counted. */
	secbuf_free(secbuf_alloc_flags(32, sbt_flags(0)));
	before = census();
	for (n = 0; n < f->want; n++) {
		p[n] = secbuf_alloc_flags(32, packed_flags());
		if (!p[n])
			break;
		memcpy(p[n], &n, sizeof(n));
	}
	after = census();
	fprintf(stderr, "%ld secrets (%s), %d mappings, Locked %ld kB = %.1f bytes per secret", n,
		n < f->want ? strerror(errno) : "all", after.vmas - before.vmas,
		after.locked_kb - before.locked_kb,
		n ? (after.locked_kb - before.locked_kb) * 1024.0 / n : 0.0);
	if (n < f->want)
		_exit(3);
	if ((after.vmas - before.vmas) * 1000L > n)
		_exit(4); /* more than one mapping per 1,000 secrets */
	if (packed_locks() && (after.locked_kb - before.locked_kb) * 1024 > 64 * n)
		_exit(5); /* more than 64 locked bytes per secret */
	for (n = 0; n < f->want; n++) {
		long v;

		memcpy(&v, p[n], sizeof(v));
		bad += v != n;
		secbuf_free(p[n]);
	}
	free(p);
	_exit(bad ? 6 : 0);
}

/* A million live 32-byte secrets, at most one mapping per 1,000, at most 64 locked bytes each. */
START_TEST(packed_capacity_one_million)
{
	const struct fill f = { 1000000, 0, 0 };

	sbt_need_method();
	sbt_need_root(); /* 47 MiB locked: CAP_IPC_LOCK, not RLIMIT_MEMLOCK */
	run_reported(fill_secrets, (void *)&f, "1,000,000 packed 32-byte secrets as root");
}
END_TEST

/* As uid 65534 under the usual 8 MiB RLIMIT_MEMLOCK: 100,000 live 32-byte secrets. */
START_TEST(packed_nobody_8m_holds_100k)
{
	const struct fill f = { 100000, 8L << 20, 1 };

	sbt_need_method();
	sbt_need_root(); /* to become uid 65534 */
	run_reported(fill_secrets, (void *)&f,
		     "100,000 packed 32-byte secrets as uid 65534, RLIMIT_MEMLOCK 8 MiB");
}
END_TEST

/*
 * No registry entry (or other heap memory) per packed secret: 100,000 of
 * them may not grow the malloc heap by even a byte each.
 */
START_TEST(packed_no_heap_per_secret)
{
	enum { N = 100000 };
	struct mallinfo2 before, after;
	unsigned char **p;
	size_t i, grew;

	sbt_need_method();
	if (sbt_under_asan())
		sbt_skip("ASan's allocator does not report to mallinfo2");
	p = calloc(N, sizeof(*p));
	ck_assert_ptr_nonnull(p);
	secbuf_free(secbuf_alloc_flags(32, packed_flags()));
	before = mallinfo2();
	for (i = 0; i < N; i++)
		ck_assert_ptr_nonnull(p[i] = secbuf_alloc_flags(32, packed_flags()));
	after = mallinfo2();
	grew = (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd);
	printf("# REPORT: 100000 packed secrets grew the malloc heap by %zu bytes\n", grew);
	ck_assert_uint_lt(grew, N);
	for (i = 0; i < N; i++)
		secbuf_free(p[i]);
	free(p);
}
END_TEST

const struct sbt_test packed_capacity_tests[] = {
	SBT(packed_capacity_one_million),
	SBT(packed_nobody_8m_holds_100k),
	SBT_SLOW(packed_no_heap_per_secret),
	SBT_END,
};
