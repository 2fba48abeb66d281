/* Allocation: sizes, alignment, errors, stat, and the mapping's properties. */
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

void expect_alloc_fails(size_t size, unsigned flags, int err1, int err2)
{
	int lines = sbt_maps_lines();

	errno = 0;
	ck_assert_ptr_null(secbuf_alloc_flags(size, flags));
	ck_assert_msg(errno == err1 || errno == err2, "size %zu flags %#x: errno %d (%s)",
		      size, flags, errno, strerror(errno));
	ck_assert_int_eq(sbt_maps_lines(), lines);
}

START_TEST(alloc_zero_einval)
{
	int lines;

	sbt_need_method();
	lines = sbt_maps_lines();
	errno = 0;
	ck_assert_ptr_null(secbuf_alloc(0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(sbt_maps_lines(), lines);
	expect_alloc_fails(0, sbt_flags(0), EINVAL, EINVAL);
}
END_TEST

START_TEST(alloc_bad_flags_einval)
{
	sbt_need_method();
	expect_alloc_fails(64, 0x80, EINVAL, EINVAL);
}
END_TEST

START_TEST(alloc_huge_enomem)
{
	unsigned f;

	sbt_need_method();
	f = sbt_flags(0);
	expect_alloc_fails(SIZE_MAX, f, ENOMEM, ENOMEM);
	expect_alloc_fails(SIZE_MAX - sbt_page(), f, ENOMEM, ENOMEM);
	expect_alloc_fails(SIZE_MAX / 2, f, ENOMEM, ENOMEM);
	expect_alloc_fails((size_t)1 << 50, f, ENOMEM, ENOMEM);	/* beyond the address space */
}
END_TEST

START_TEST(free_null_noop)
{
	int lines = sbt_maps_lines();

	errno = 1234;
	secbuf_free(NULL);
	ck_assert_int_eq(errno, 1234);
	ck_assert_int_eq(sbt_maps_lines(), lines);
	ck_assert_uint_eq(secbuf_size(NULL), 0);
}
END_TEST

START_TEST(size_align_and_stat)
{
	static const size_t sizes[] = { 1, 15, 16, 17, 31, 4080, 4081, 4095, 4096, 4097,
					100000, 3 * MiB + 5 };
	size_t i, page = sbt_page();

	sbt_need_method();
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		unsigned char *p = secbuf_alloc_flags(n, sbt_flags(0));
		struct secbuf_stat st;

		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		ck_assert_uint_eq(secbuf_size(p), n);
		/* Flush: the 16-aligned end is the page end. */
		ck_assert_uint_eq((uintptr_t)(p + sbt_round16(n)) % page, 0);
		memset(p, 0x5a, n);
		ck_assert_int_eq(secbuf_stat(p, &st), 0);
		ck_assert_uint_eq(st.size, n);
		ck_assert_uint_eq(st.mapped_bytes % page, 0);
		ck_assert_uint_ge(st.mapped_bytes, sbt_round16(n) + 16);
		ck_assert_uint_lt(st.mapped_bytes, sbt_round16(n) + 16 + page);
		ck_assert_uint_ge(st.resident_pages, (n + page - 1) / page);
		ck_assert_uint_le(st.resident_pages, st.mapped_bytes / page);
		ck_assert_uint_eq(st.locked_pages, sbt_locks(0) ? st.resident_pages : 0);
		ck_assert_int_eq(st.lock_method, sbt_locks(0) ? sbt_method() : SECBUF_LOCK_NONE);
		ck_assert_uint_eq(st.flags, sbt_flags(0));
		secbuf_free(p);
	}
	errno = 0;
	ck_assert_int_eq(secbuf_stat(NULL, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(vmflags_dontdump_wipeonfork)
{
	unsigned char *p;
	char flags[256] = "";
	long rss, locked;

	sbt_need_method();
	p = secbuf_alloc_flags(8192, sbt_flags(0));
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sbt_smaps(p, &rss, &locked, flags, sizeof(flags)), 0);
	ck_assert_msg(strstr(flags, " dd"), "VmFlags:%s", flags);
	ck_assert_msg(strstr(flags, " wf"), "VmFlags:%s", flags);
	/* The guards are neither locked nor part of the data VMA. */
	ck_assert_int_eq(sbt_smaps(sbt_data_start(p) - 1, &rss, &locked, flags, sizeof(flags)), 0);
	ck_assert_int_eq(locked, 0);
	ck_assert_msg(!strstr(flags, " lo"), "guard VmFlags:%s", flags);
	secbuf_free(p);
}
END_TEST

/* The data is named after its lock method, the guards plainly. */
START_TEST(maps_name_anon_secbuf)
{
	struct secbuf_stat st;
	unsigned char *p;
	char line[512], name[64];

	sbt_need_method();
	sbt_need_anon_vma_name();
	p = secbuf_alloc_flags(100, sbt_flags(0));
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	snprintf(name, sizeof(name), "[anon:secbuf:%s]", secbuf_lock_method_name(st.lock_method));
	ck_assert_int_eq(sbt_maps_line(p, line, sizeof(line)), 0);
	ck_assert_msg(strstr(line, name), "maps: %s (expected %s)", line, name);
	ck_assert_int_eq(sbt_maps_line(sbt_data_start(p) - 1, line, sizeof(line)), 0);
	ck_assert_msg(strstr(line, "[anon:secbuf]"), "guard: %s", line);
	secbuf_free(p);
}
END_TEST

/* A call that succeeds leaves errno as it found it, whatever it tolerated. */
START_TEST(success_keeps_errno)
{
	static const unsigned flags[] = { 0, SECBUF_POPULATE, SECBUF_BEST_EFFORT };
	struct secbuf_stat st;
	unsigned char *p;
	size_t i;

	sbt_need_method();
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		errno = 4242;
		p = secbuf_alloc_flags(5000, sbt_flags(flags[i]));
		ck_assert_ptr_nonnull(p);
		ck_assert_msg(errno == 4242, "secbuf_alloc_flags(%#x) left errno %d (%s)",
			      sbt_flags(flags[i]), errno, strerror(errno));
		ck_assert_int_eq(secbuf_protect(p, SECBUF_READONLY), 0);
		ck_assert_int_eq(errno, 4242);
		ck_assert_uint_eq(secbuf_size(p), 5000);
		ck_assert_int_eq(errno, 4242);
		ck_assert_int_eq(secbuf_stat(p, &st), 0);
		ck_assert_int_eq(errno, 4242);
		ck_assert_int_ge(secbuf_lock_method(), 0);
		ck_assert_int_eq(errno, 4242);
		secbuf_free(p);
		ck_assert_int_eq(errno, 4242);
	}
	if (sbt_locks(0)) {
		errno = 4242;
		p = secbuf_alloc(100);
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(errno, 4242);
		secbuf_free(p);
	}
}
END_TEST

/* Exit code = failed step; the child fills its address space's map count. */
static void fill_map_count(void *arg)
{
	size_t n = 0, cap = 1 << 16, i;
	void **live = calloc(cap, sizeof(*live));
	void *p;

	(void)arg;
	if (!live)
		_exit(2);
	while ((p = secbuf_alloc_flags(32, sbt_flags(0)))) {
		if (n == cap)
			_exit(3);	/* vm.max_map_count above 2^17 */
		live[n++] = p;
	}
	if (errno != ENOMEM) {
		fprintf(stderr, "after %zu buffers: %s\n", n, strerror(errno));
		_exit(4);
	}
	/* One freed from the middle, and the last one: each makes room for one. */
	for (i = 0; i < 2; i++) {
		size_t k = i == 0 ? n / 2 : n - 1;

		secbuf_free(live[k]);
		live[k] = secbuf_alloc_flags(32, sbt_flags(0));
		if (!live[k]) {
			fprintf(stderr, "%zu buffers, freed #%zu, then: %s\n", n, k,
				strerror(errno));
			_exit(5 + i);
		}
	}
	fprintf(stderr, "%zu live 32-byte buffers at vm.max_map_count\n", n);
	for (i = 0; i < n; i++)
		secbuf_free(live[i]);
	free(live);
	_exit(0);
}

/*
 * Each buffer keeps its data page resident, so filling the map count takes
 * about max_map_count / 2 pages: 128 MiB of 4 KiB pages, 2 GiB of 64 KiB
 * ones.  Skip, saying so, where that is more than 3/4 of MemAvailable.
 */
static void need_memory_for_map_count(void)
{
	static char why[160];
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	long maps = -1, avail = meminfo_kb("MemAvailable"), need;

	if (f) {
		if (fscanf(f, "%ld", &maps) != 1)
			maps = -1;
		fclose(f);
	}
	ck_assert_msg(maps > 0 && avail > 0, "vm.max_map_count %ld, MemAvailable %ld kB", maps,
		      avail);
	need = maps / 2 * (long)(sbt_page() / 1024);
	if (need > avail / 4 * 3) {
		snprintf(why, sizeof(why),
			 "vm.max_map_count %ld: %ld MiB of pages, MemAvailable %ld MiB", maps,
			 need >> 10, avail >> 10);
		sbt_skip(why);
	}
}

START_TEST(max_map_count_free_makes_room)
{
	char msg[512];
	int st;

	sbt_need_method();
	sbt_need_no_valgrind("valgrind maps memory of its own as it likes");
	need_memory_for_map_count();
	st = sbt_child(fill_map_count, NULL, msg, sizeof(msg));
	msg[strcspn(msg, "\n")] = 0;
	printf("# REPORT: %s\n", msg);
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

const struct sbt_test alloc_tests[] = {
	SBT(alloc_zero_einval),
	SBT(alloc_bad_flags_einval),
	SBT(alloc_huge_enomem),
	SBT(free_null_noop),
	SBT(size_align_and_stat),
	SBT(vmflags_dontdump_wipeonfork),
	SBT(maps_name_anon_secbuf),
	SBT(success_keeps_errno),
	SBT_SLOW(max_map_count_free_makes_room),
	SBT_END,
};
