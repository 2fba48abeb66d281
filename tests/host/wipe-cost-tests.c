/*
 * What free costs: the wipe touches resident pages only.  (That it zeroes
 * them is proven by wipe-tests.c, against a build that keeps the mapping.)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <secbuf.h>
#include "tests.h"

/* A buffer whose free is to be measured in page faults (not under valgrind). */
static unsigned char *alloc_measured(size_t size)
{
	unsigned char *p;

	sbt_need_method();
	sbt_need_no_valgrind("valgrind's shadow memory takes page faults of its own");
	p = secbuf_alloc_flags(size, sbt_flags(0));
	ck_assert_ptr_nonnull(p);
	return p;
}

/* Minor faults taken by secbuf_free(p). */
static long free_faults(void *p)
{
	struct rusage before, after;

	ck_assert_int_eq(getrusage(RUSAGE_SELF, &before), 0);
	secbuf_free(p);
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &after), 0);
	return after.ru_minflt - before.ru_minflt;
}

START_TEST(free_1g_costs_resident_only)
{
	size_t size = 1024 * MiB;
	unsigned char *p;
	struct secbuf_stat st;
	long faults;

	if (sbt_under_asan())
		sbt_skip("ASan's shadow memory and fake stacks take page faults of their own");
	p = alloc_measured(size);
	memset(p + 12345, 0x77, 100);	/* one used page */
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	faults = free_faults(p);
	printf("# REPORT: free of 1 GiB with %zu resident pages: %ld minor faults\n",
	       st.resident_pages, faults);
	ck_assert_int_le(faults, (long)st.resident_pages);
	ck_assert_uint_le(st.resident_pages, 2);
}
END_TEST

/*
 * Pages only read are resident as the zero page: wiping them would fault
 * in fresh pages.  Free may cost no more faults than pages written.
 */
START_TEST(free_leaves_read_pages_alone)
{
	size_t size = 64 * MiB, page = sbt_page(), i;
	unsigned char *p;
	struct secbuf_stat st;
	long faults;

	if (sbt_under_asan())
		sbt_skip("ASan's shadow memory and fake stacks take page faults of their own");
	p = alloc_measured(size);
	p[0] = 1;
	for (i = 1; i <= 64; i++)
		(void)*(volatile unsigned char *)(p + i * page);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	ck_assert_uint_ge(st.resident_pages, 65);
	faults = free_faults(p);
	printf("# REPORT: free of 64 MiB with %zu resident pages (64 only read): "
	       "%ld minor faults\n", st.resident_pages, faults);
	/* At most the pages written (p[0] and the canary): those are resident. */
	ck_assert_int_le(faults, 2);
}
END_TEST

const struct sbt_test wipe_cost_tests[] = {
	SBT(free_1g_costs_resident_only),
	SBT(free_leaves_read_pages_alone),
	SBT_END,
};
