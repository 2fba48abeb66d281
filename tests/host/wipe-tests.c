/*
 * Proof of the wipe.  Linked against a test-only build of libsecbuf
 * (-DSECBUF_TEST_KEEP_MAPPING) whose free wipes but leaves the data mapped
 * read-only, so what free left behind can be read back.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <secbuf.h>
#include "harness.h"

#ifndef SECBUF_TEST_KEEP_MAPPING
#error "wipe-tests must be built against the SECBUF_TEST_KEEP_MAPPING library"
#endif

static size_t nonzero(const unsigned char *p, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += p[i] != 0;
	return n;
}

static size_t resident(unsigned char *p, size_t len)
{
	unsigned char vec[64];
	size_t i, n = 0, pages = len / sbt_page();

	ck_assert_uint_le(pages, sizeof(vec));
	ck_assert_int_eq(mincore(p, len, vec), 0);
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	return n;
}

/* Resident pages of a range of at most 64 pages. */
static size_t resident_range(unsigned char *p, size_t len)
{
	unsigned char vec[64];
	size_t i, n = 0;

	if (mincore(p, len, vec) < 0)
		return (size_t)-1;
	for (i = 0; i < len / sbt_page(); i++)
		n += vec[i] & 1;
	return n;
}

START_TEST(wipe_zeroes_what_was_written)
{
	size_t page = sbt_page(), size = 32 * page - 100;
	unsigned char *p, *start;
	struct secbuf_stat st;
	size_t before;

	sbt_need_method();
	p = secbuf_alloc_flags(size, sbt_flags(0));
	ck_assert_ptr_nonnull(p);
	start = sbt_data_start(p);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	memset(p, 0xa5, 2 * page);		/* first pages */
	memset(p + size - 300, 0x5a, 300);	/* and the last */
	/* Reading untouched pages would fault them in: count first. */
	before = resident(start, st.mapped_bytes);
	ck_assert_uint_lt(before, st.mapped_bytes / page);
	secbuf_free(p);
	/* Pages never touched were not faulted in by the wipe... */
	ck_assert_uint_eq(resident(start, st.mapped_bytes), before);
	/* ...and every byte written (and the canary, padding) is zero now. */
	ck_assert_uint_eq(nonzero(start, st.mapped_bytes), 0);
}
END_TEST

START_TEST(wipe_after_noaccess)
{
	unsigned char *p, *start;
	struct secbuf_stat st;

	sbt_need_method();
	p = secbuf_alloc_flags(17, sbt_flags(0));
	ck_assert_ptr_nonnull(p);
	start = sbt_data_start(p);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	memset(p, 0xff, 17);
	ck_assert_int_eq(secbuf_protect(p, SECBUF_NOACCESS), 0);
	secbuf_free(p);
	ck_assert_uint_eq(nonzero(start, st.mapped_bytes), 0);
}
END_TEST

START_TEST(wipe_populated)
{
	size_t size = 40 * sbt_page();
	unsigned char *p, *start;
	struct secbuf_stat st;

	sbt_need_method();
	p = secbuf_alloc_flags(size, sbt_flags(SECBUF_POPULATE));
	ck_assert_ptr_nonnull(p);
	start = sbt_data_start(p);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	memset(p, 0x11, size);
	secbuf_free(p);
	ck_assert_uint_eq(nonzero(start, st.mapped_bytes), 0);
}
END_TEST

/*
 * Four threads free large, sparse buffers at once: each walk (whose
 * mincore vector is per thread) must wipe its own buffer's written pages,
 * all of them, and fault in none of the others.
 */
#define WALKERS 4
#define WALK_SIZE (96UL << 20)
#define WALK_PAGES 40

struct walker {
	pthread_barrier_t *go;
	unsigned char *p, *start;
	size_t mapped, nonzero, faulted;
};

static size_t page_index(size_t k, size_t npages)
{
	return (k * 2654435761UL) % npages;
}

static void *walk_free(void *arg)
{
	struct walker *w = arg;
	size_t page = sbt_page(), npages, k;
	struct secbuf_stat st;

	w->p = secbuf_alloc_flags(WALK_SIZE, sbt_flags(0));
	if (!w->p || secbuf_stat(w->p, &st) < 0)
		return NULL;
	w->start = sbt_data_start(w->p);
	w->mapped = st.mapped_bytes;
	npages = w->mapped / page;
	for (k = 1; k <= WALK_PAGES; k++)
		memset(w->start + page_index(k, npages) * page, 0xc0 + (int)k, page);
	pthread_barrier_wait(w->go);
	secbuf_free(w->p);
	/* Only pages written (and the canary's) may be resident after the wipe. */
	for (k = 0; k < npages; k += 64)
		w->faulted += resident_range(w->start + k * page,
					     (npages - k < 64 ? npages - k : 64) * page);
	for (k = 1; k <= WALK_PAGES; k++)
		w->nonzero += nonzero(w->start + page_index(k, npages) * page, page);
	return NULL;
}

START_TEST(wipe_concurrent_large_frees)
{
	struct walker w[WALKERS] = { { 0 } };
	pthread_barrier_t go;
	pthread_t t[WALKERS];
	int i;

	sbt_need_method();
	ck_assert_int_eq(pthread_barrier_init(&go, NULL, WALKERS), 0);
	for (i = 0; i < WALKERS; i++) {
		w[i].go = &go;
		ck_assert_int_eq(pthread_create(&t[i], NULL, walk_free, &w[i]), 0);
	}
	for (i = 0; i < WALKERS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	for (i = 0; i < WALKERS; i++) {
		ck_assert_msg(w[i].p, "thread %d: no buffer", i);
		ck_assert_msg(w[i].nonzero == 0, "thread %d: %zu bytes left after free", i,
			      w[i].nonzero);
		/* The written pages, the canary's, nothing else. */
		ck_assert_msg(w[i].faulted <= WALK_PAGES + 1, "thread %d: %zu pages resident", i,
			      w[i].faulted);
	}
	pthread_barrier_destroy(&go);
}
END_TEST

static const struct sbt_test wipe_tests[] = {
	SBT(wipe_zeroes_what_was_written),
	SBT(wipe_after_noaccess),
	SBT(wipe_populated),
	SBT(wipe_concurrent_large_frees),
	SBT_END,
};

int main(int argc, char **argv)
{
	static const struct sbt_test *const groups[] = { wipe_tests, NULL };

	return sbt_main(argc, argv, "libsecbuf-wipe", groups, NULL);
}
