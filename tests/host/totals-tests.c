/*
 * secbuf_totals(): the whole process's secrets, guarded and packed, their
 * bytes and their locked pages, back to where they were once freed.
 */
#include <errno.h>
#include <string.h>
#include "secbuf.h"
#include "tests.h"

START_TEST(totals_count_every_secret)
{
	struct secbuf_totals before, during, after;
	unsigned flags = sbt_flags(0);
	size_t page = sbt_page();
	unsigned char *g, *p1, *p2;

	sbt_need_method();
	ck_assert_int_eq(secbuf_totals(&before), 0);
	g = secbuf_alloc_flags(3 * page, flags);
	p1 = secbuf_alloc_flags(24, packed_flags());
	p2 = secbuf_alloc_flags(100, packed_flags());
	ck_assert_msg(g && p1 && p2, "alloc: %s", strerror(errno));
	g[0] = g[2 * page] = 1;
	memset(p1, 1, 24);
	ck_assert_int_eq(secbuf_totals(&during), 0);
	ck_assert_uint_eq(during.secrets, before.secrets + 3);
	ck_assert_uint_eq(during.bytes, before.bytes + 3 * page + 24 + 100);
	ck_assert_uint_ge(during.mapped_bytes, before.mapped_bytes + 3 * page);
	/* The two touched pages of g are locked on fault, where the method locks. */
	if (sbt_locks(flags))
		ck_assert_uint_ge(during.locked_pages, before.locked_pages + 2);
	secbuf_free(g);
	secbuf_free(p1);
	secbuf_free(p2);
	ck_assert_int_eq(secbuf_totals(&after), 0);
	ck_assert_uint_eq(after.secrets, before.secrets);
	ck_assert_uint_eq(after.bytes, before.bytes);
	ck_assert_uint_le(after.mapped_bytes, during.mapped_bytes - 3 * page);
}
END_TEST

START_TEST(totals_null_is_einval)
{
	errno = 0;
	ck_assert_int_eq(secbuf_totals(NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

const struct sbt_test totals_tests[] = {
	SBT(totals_count_every_secret),
	SBT(totals_null_is_einval),
	SBT_END,
};
