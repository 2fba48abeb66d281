/*
 * A burst of buffers or secrets, all freed, gives its memory back: the
 * registry of guarded buffers shrinks again (it lives in the malloc heap),
 * and emptied slabs are unmapped.  The slabs' metadata blocks stay, for
 * reuse (core/metamem.c): at most an eighth of what the burst took with
 * 4 KiB pages, and more where larger pages give them more (kept_share()).  Each burst runs in a child, so that the tests before it
 * leave nothing in the counts.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kfacts.h"
#include "secbuf.h"
#include "packed/packed.h"
#include "tests.h"

#define GUARDED_BURST 20000 /* about 2 mappings each: well below vm.max_map_count */
#define PACKED_BURST  1000000
#define SLACK_KB      256

/* Bytes malloc has handed out and not had back, heap and mmapped chunks. */
static long heap_in_use_kb(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (long)((mi.uordblks + mi.hblkhd) / 1024);
}

/* Anonymous resident kB of this process: the slabs' pages among them. */
static long rss_anon_kb(void)
{
	return proc_field_kb("/proc/self/status", "RssAnon");
}

/*
 * What a slab's metadata block is of a slab's memory at most with pages of
 * this size: the block, rounded to whole pages, against the block and the
 * slab's pages between its two guards.  0.14 with 4 KiB pages; a third
 * with 64 KiB ones, where a slab has two pages of data and the block a page.
 */
static double meta_share(size_t page)
{
	double meta = (double)((SB_META_BLOCK + page - 1) / page * page);

	return meta / (meta + (double)((1UL << SB_SLAB_SHIFT) - 2 * page));
}

/* What may stay after a packed burst: an eighth at 4 KiB, scaled with meta_share(). */
static double kept_share(void)
{
	return meta_share(sbt_page()) / meta_share(4096) / 8;
}

/* Exit code = failed step; stderr says what was measured. */
static void burst(void *arg)
{
	const int packed = arg != NULL;
	const size_t n = packed ? PACKED_BURST : GUARDED_BURST;
	const unsigned flags = packed ? packed_flags() : sbt_flags(0);
	long (*measure)(void) = packed ? rss_anon_kb : heap_in_use_kb;
	void **live = calloc(n, sizeof(*live));
	long before, peak, after, limit;
	size_t i;

	/* The first allocation sets up the library (key page, thread state). */
	void *first = secbuf_alloc_flags(32, flags);

	if (!live || !first)
		_exit(2);
	for (i = 0; i < n; i++) /* resident before the first measure */
		((void *volatile *)live)[i] = NULL;
	before = measure();
	for (i = 0; i < n; i++)
		if (!(live[i] = secbuf_alloc_flags(32, flags))) {
			fprintf(stderr, "allocation %zu failed: %m\n", i);
			_exit(3);
		}
	peak = measure();
	for (i = 0; i < n; i++)
		secbuf_free(live[i]);
	after = measure();
	secbuf_free(first);
	free(live);
	limit = before + (packed ? (long)((double)(peak - before) * kept_share()) : SLACK_KB);
	fprintf(stderr,
		"%zu %s secrets: %s %ld kB before, %ld kB live, %ld kB after (at most %ld)\n", n,
		packed ? "packed" : "guarded", packed ? "RssAnon" : "malloc in use", before, peak,
		after, limit);
	if (before < 0 || peak < 0 || after < 0)
		_exit(4);
	if (peak - before < 1024) /* the measure must see the burst */
		_exit(5);
	if (after > limit)
		_exit(6);
	_exit(0);
}

static void expect_returned(void *packed)
{
	char msg[512];
	int st;

	sbt_need_method();
	st = sbt_child(burst, packed, msg, sizeof(msg));
	msg[strcspn(msg, "\n")] = 0;
	printf("# REPORT: %s\n", msg);
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}

START_TEST(registry_shrinks_after_burst)
{
	if (sbt_under_asan())
		sbt_skip("ASan's allocator does not report through mallinfo2");
	sbt_need_no_valgrind("valgrind's allocator does not report through mallinfo2");
	expect_returned(NULL);
}
END_TEST

START_TEST(slabs_unmapped_after_burst)
{
	sbt_need_no_valgrind("a million allocations under valgrind take minutes");
	expect_returned((void *)1);
}
END_TEST

const struct sbt_test burst_tests[] = {
	SBT_SLOW(registry_shrinks_after_burst),
	SBT_SLOW(slabs_unmapped_after_burst),
	SBT_END,
};
