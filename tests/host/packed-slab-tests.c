/*
 * The slabs of packed secrets: thousands of secrets share a handful of
 * mappings; a slab is not dumped, wiped on fork, named, locked as the
 * method says and between guard pages; one secret costs one resident page.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <secbuf.h>
#include "kfacts.h"
#include "tests.h"

/* Mappings that overlap the slab blocks (256 KiB, aligned) of a set of secrets. */
struct slab_blocks {
	uintptr_t *block;
	size_t n;
	int vmas;
};

static int cmp_uintptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static int overlaps_a_block(const struct smaps_vma *v, void *arg)
{
	struct slab_blocks *sb = arg;
	size_t i;

	for (i = 0; i < sb->n; i++)
		if (v->start < sb->block[i] + (256 << 10) && v->end > sb->block[i]) {
			sb->vmas++;
			break;
		}
	return 0;
}

static int slab_mappings(unsigned char **p, size_t n)
{
	struct slab_blocks sb = { calloc(n, sizeof(uintptr_t)), 0, 0 };
	size_t i;

	ck_assert_ptr_nonnull(sb.block);
	for (i = 0; i < n; i++)
		sb.block[i] = (uintptr_t)p[i] & ~(uintptr_t)((256 << 10) - 1);
	qsort(sb.block, n, sizeof(uintptr_t), cmp_uintptr);
	for (i = 0; i < n; i++)
		if (!sb.n || sb.block[sb.n - 1] != sb.block[i])
			sb.block[sb.n++] = sb.block[i];
	ck_assert_int_eq(smaps_each(0, overlaps_a_block, &sb), 0);
	free(sb.block);
	return sb.vmas;
}

/* 10,000 secrets of 32 bytes: 48 bytes apart, in a handful of mappings, not 20,000. */
START_TEST(packed_secrets_share_pages)
{
	enum { N = 10000 };
	size_t i, adjacent = 0;
	unsigned char **p;
	int vmas;

	sbt_need_method();
	p = calloc(N, sizeof(*p));
	ck_assert_ptr_nonnull(p);
	for (i = 0; i < N; i++) {
		p[i] = secbuf_alloc_flags(32, packed_flags());
		ck_assert_msg(p[i] != NULL, "secret %zu: %s", i, strerror(errno));
		memset(p[i], (int)i, 32);
		adjacent += i && p[i] == p[i - 1] + 48;
	}
	vmas = slab_mappings(p, N);
	printf("# REPORT: 10000 packed 32-byte secrets: in %d mappings, %zu of 9999 allocated "
	       "next to the one before\n",
	       vmas, adjacent);
	ck_assert_int_le(vmas, N / 1000);
	ck_assert_uint_ge(adjacent, N * 9 / 10);
	for (i = 0; i < N; i++) {
		ck_assert_uint_eq(p[i][31], (unsigned char)i);
		secbuf_free(p[i]);
	}
	free(p);
}
END_TEST

/* The slab: not dumped, wiped on fork, named, locked as the method says, between guards. */
START_TEST(packed_slab_mapping)
{
	unsigned char *p;
	char flags[256] = "";
	long rss, locked;
	int onfault;

	sbt_need_method();
	p = secbuf_alloc_flags(32, packed_flags());
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sbt_smaps(p, &rss, &locked, flags, sizeof(flags)), 0);
	ck_assert_msg(strstr(flags, " dd ") && strstr(flags, " wf "), "VmFlags:%s", flags);
	ck_assert_msg(!!strstr(flags, " lo ") == packed_locks(), "VmFlags:%s", flags);
	onfault = sbt_method() == SECBUF_LOCK_MAP_LOCKONFAULT ||
		  sbt_method() == SECBUF_LOCK_MLOCK2_ONFAULT;
	if (sbt_kernel_names_lf() != 0)
		ck_assert_msg(!!strstr(flags, " lf ") == (packed_locks() && onfault), "VmFlags:%s",
			      flags);
	ck_assert_int_eq(locked, packed_locks() ? rss : 0);
	secbuf_free(p);
}
END_TEST

START_TEST(packed_slab_named)
{
	struct secbuf_stat st;
	unsigned char *p;
	char line[512], name[64];

	sbt_need_method();
	sbt_need_anon_vma_name();
	p = secbuf_alloc_flags(32, packed_flags());
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	snprintf(name, sizeof(name), "[anon:secbuf:%s]", secbuf_lock_method_name(st.lock_method));
	ck_assert_int_eq(sbt_maps_line(p, line, sizeof(line)), 0);
	ck_assert_msg(strstr(line, name), "maps: %s (expected %s)", line, name);
	secbuf_free(p);
}
END_TEST

struct slab_edges {
	uintptr_t addr;
	struct smaps_vma data, before, after;
	int found;
};

/* The mapping holding addr, and its neighbours (smaps lists them in order). */
static int find_edges(const struct smaps_vma *v, void *arg)
{
	struct slab_edges *e = arg;

	if (e->found) {
		e->after = *v;
		return 1;
	}
	if (e->addr >= v->start && e->addr < v->end) {
		e->data = *v;
		e->found = 1;
	} else {
		e->before = *v;
	}
	return 0;
}

START_TEST(packed_slab_between_guard_pages)
{
	struct slab_edges e = { 0 };
	unsigned char *p;

	sbt_need_method();
	p = secbuf_alloc_flags(16, packed_flags());
	ck_assert_ptr_nonnull(p);
	e.addr = (uintptr_t)p;
	ck_assert_int_eq(smaps_each(0, find_edges, &e), 1);
	ck_assert_msg(e.before.end == e.data.start && !strcmp(e.before.perms, "---p") &&
			      e.before.locked_kb == 0,
		      "before the slab: %lx-%lx %s", e.before.start, e.before.end, e.before.perms);
	ck_assert_msg(e.after.start == e.data.end && !strcmp(e.after.perms, "---p") &&
			      e.after.locked_kb == 0,
		      "after the slab: %lx-%lx %s", e.after.start, e.after.end, e.after.perms);
	/* The slab's data: its block less two guard pages. */
	ck_assert_uint_eq(e.data.end - e.data.start, (256 << 10) - 2 * sbt_page());
	secbuf_free(p);
}
END_TEST

/* Exit code = failed step: in a fresh pool, one secret costs one resident page. */
static void one_secret(void *arg)
{
	long rss = -1, locked = -1;
	unsigned char *p;

	(void)arg;
	p = secbuf_alloc_flags(32, packed_flags());
	if (!p)
		_exit(2);
	memset(p, 1, 32);
	if (sbt_smaps(p, &rss, &locked, NULL, 0) < 0)
		_exit(3);
	fprintf(stderr, "Rss %ld kB, Locked %ld kB", rss, locked);
	if (sbt_method() == SECBUF_LOCK_MLOCK && packed_locks())
		_exit(rss == (256 - 2 * KB(1)) && locked == rss ? 0 : 4); /* eager: all of it */
	if (rss != KB(1))
		_exit(5);
	_exit(locked == (packed_locks() ? rss : 0) ? 0 : 6);
}

START_TEST(packed_one_secret_one_page)
{
	sbt_need_method();
	run_reported(one_secret, NULL, "a slab holding one packed secret");
}
END_TEST

/* clang-format off */
const struct sbt_test packed_slab_tests[] = {
	SBT(packed_secrets_share_pages),
	SBT(packed_slab_mapping),
	SBT(packed_slab_named),
	SBT(packed_slab_between_guard_pages),
	SBT(packed_one_secret_one_page),
	SBT_END,
};
/* clang-format on */
