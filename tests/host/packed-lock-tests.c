/*
 * Locking packed secrets: a strict secret is never unlocked, even when a
 * best-effort one had to go unlocked; without a lazy lock, strict fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <secbuf.h>
#include "tests.h"

/* Exit code = failed step; as nobody, RLIMIT_MEMLOCK: the key page and one slab. */
static void one_slab_budget(void *arg)
{
	size_t page = sbt_page(), slab = (256 << 10) - 2 * page;
	struct rlimit rl = { slab + 2 * page, slab + 2 * page };
	unsigned flags = sbt_method() == SECBUF_LOCK_MLOCK ? SECBUF_POPULATE : 0;
	unsigned char **p = calloc(20000, sizeof(*p)), *q, *r;
	struct secbuf_stat st;
	size_t n = 0, i;
	int lines;

	(void)arg;
	if (!p || setrlimit(RLIMIT_MEMLOCK, &rl) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(2);
	/* Strict secrets until the first refusal: one slab's worth. */
	while ((p[n] = secbuf_alloc_flags(32, SECBUF_PACKED | flags)) && n < 19999)
		n++;
	if (p[n] || (errno != EAGAIN && errno != ENOMEM)) {
		fprintf(stderr, "after %zu: %s\n", n, strerror(errno));
		_exit(3);
	}
	fprintf(stderr, "%zu strict secrets in one slab; ", n);
	/* Best effort: an unlocked slab; strict still refused, mapping nothing. */
	q = secbuf_alloc_flags(32, SECBUF_PACKED | SECBUF_BEST_EFFORT | flags);
	if (!q || secbuf_stat(q, &st) < 0 || st.lock_method != SECBUF_LOCK_NONE || st.locked_pages)
		_exit(4);
	lines = sbt_maps_lines();
	for (i = 0; i < 100; i++) {
		errno = 0;
		if (secbuf_alloc_flags(32, SECBUF_PACKED | flags) || sbt_maps_lines() != lines ||
		    (errno != EAGAIN && errno != ENOMEM)) {
			fprintf(stderr, "strict secret %zu after a best-effort one: %s\n", i,
				strerror(errno));
			_exit(5);
		}
	}
	/* A freed locked slot serves strict and best-effort secrets, locked. */
	secbuf_free(p[n / 2]);
	p[n / 2] = secbuf_alloc_flags(32, SECBUF_PACKED | flags);
	secbuf_free(p[n / 3]);
	r = secbuf_alloc_flags(32, SECBUF_PACKED | SECBUF_BEST_EFFORT | flags);
	if (!p[n / 2] || secbuf_stat(p[n / 2], &st) < 0 || st.lock_method == SECBUF_LOCK_NONE ||
	    !st.locked_pages)
		_exit(6);
	if (!r || secbuf_stat(r, &st) < 0 || st.lock_method == SECBUF_LOCK_NONE)
		_exit(7);
	for (i = 0; i < n; i++)
		if (i != n / 3 && (secbuf_stat(p[i], &st) < 0 || !st.locked_pages))
			_exit(8);
	fprintf(stderr, "then strict refused, best effort unlocked, freed slots reused locked");
	_exit(0);
}

START_TEST(packed_strict_never_unlocked)
{
	sbt_need_method();
	if (!packed_locks())
		sbt_skip("this method locks no packed secret");
	sbt_need_root();
	run_reported(one_slab_budget, NULL, "RLIMIT_MEMLOCK of one slab");
}
END_TEST

START_TEST(packed_no_lock_strict_fails)
{
	sbt_need_method();
	if (sbt_locks(0))
		sbt_skip("this method locks lazy buffers");
	/* As for buffers: under mlock and none, no lazy lock to be had. */
	expect_alloc_fails(32, SECBUF_PACKED, EOPNOTSUPP, EOPNOTSUPP);
	if (sbt_method() == SECBUF_LOCK_NONE)
		expect_alloc_fails(32, SECBUF_PACKED | SECBUF_POPULATE, EOPNOTSUPP, EOPNOTSUPP);
}
END_TEST

const struct sbt_test packed_lock_tests[] = {
	SBT(packed_strict_never_unlocked),
	SBT(packed_no_lock_strict_fails),
	SBT_END,
};
