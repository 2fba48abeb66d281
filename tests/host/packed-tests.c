/*
 * Packed secrets (SECBUF_PACKED): layout and stat, slabs and their
 * mapping, locking (strict never unlocked), guard bytes and misuse,
 * the wipe, capacity, and the metadata they must not cost.  Threads and
 * fork are in packed-thread-tests.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "kfacts.h"
#include "tests.h"

/* Flags for a packed secret that succeeds under every method. */
unsigned packed_flags(void)
{
	return sbt_flags(SECBUF_PACKED | (sbt_method() == SECBUF_LOCK_MLOCK ? SECBUF_POPULATE : 0));
}

/* Whether packed_flags() secrets are locked (mlock locks populated slabs). */
static int packed_locks(void)
{
	return sbt_locks(packed_flags());
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
	       "next to the one before\n", vmas, adjacent);
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
	unsigned char *p;
	char line[512];

	sbt_need_method();
	sbt_need_anon_vma_name();
	p = secbuf_alloc_flags(32, packed_flags());
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sbt_maps_line(p, line, sizeof(line)), 0);
	ck_assert_msg(strstr(line, "[anon:secbuf]"), "maps: %s", line);
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
		      e.before.locked_kb == 0, "before the slab: %lx-%lx %s", e.before.start,
		      e.before.end, e.before.perms);
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
		_exit(rss == (256 - 2 * KB(1)) && locked == rss ? 0 : 4);	/* eager: all of it */
	if (rss != KB(1))
		_exit(5);
	_exit(locked == (packed_locks() ? rss : 0) ? 0 : 6);
}

/* Run fn(arg) in a child whose stderr says what it found; it must exit 0. */
static void run_reported(void (*fn)(void *), void *arg, const char *what)
{
	char msg[512];
	int st = sbt_child(fn, arg, msg, sizeof(msg));

	printf("# REPORT: %s (%s): %s\n", what, secbuf_lock_method_name(sbt_method()), msg);
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}

START_TEST(packed_one_secret_one_page)
{
	sbt_need_method();
	run_reported(one_secret, NULL, "a slab holding one packed secret");
}
END_TEST

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
		a[47] ^= 1;	/* b's front guard: caught when b is freed */
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
	static const struct { enum packed_misuse kind; const char *says; } cases[] = {
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
			sbt_note(fails, sizeof(fails), "case %zu: status %#x, want '%s', stderr: %s",
				 i, st, cases[i].says, msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST

/* ---- the wipe, protect, errno ---- */

START_TEST(packed_free_zeroes_slot_at_once)
{
	unsigned char *a, *b, front[16], back[16];
	size_t i;

	sbt_need_method();
	a = secbuf_alloc_flags(20, packed_flags());
	b = secbuf_alloc_flags(20, packed_flags());	/* keeps the slab mapped */
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

/* ---- guard bytes ---- */

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

/* ---- locking: a strict secret is never unlocked ---- */

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

/* ---- capacity ---- */

struct fill {
	long want;	/* secrets to allocate; stop at the first failure */
	long memlock;	/* RLIMIT_MEMLOCK to set, or 0 */
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
	fprintf(stderr, "%ld secrets (%s), %d mappings, Locked %ld kB = %.1f bytes per secret",
		n, n < f->want ? strerror(errno) : "all", after.vmas - before.vmas,
		after.locked_kb - before.locked_kb,
		n ? (after.locked_kb - before.locked_kb) * 1024.0 / n : 0.0);
	if (n < f->want)
		_exit(3);
	if ((after.vmas - before.vmas) * 1000L > n)
		_exit(4);	/* more than one mapping per 1,000 secrets */
	if (packed_locks() && (after.locked_kb - before.locked_kb) * 1024 > 64 * n)
		_exit(5);	/* more than 64 locked bytes per secret */
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
	sbt_need_root();	/* 47 MiB locked: CAP_IPC_LOCK, not RLIMIT_MEMLOCK */
	run_reported(fill_secrets, (void *)&f, "1,000,000 packed 32-byte secrets as root");
}
END_TEST

/* As uid 65534 under the usual 8 MiB RLIMIT_MEMLOCK: 100,000 live 32-byte secrets. */
START_TEST(packed_nobody_8m_holds_100k)
{
	const struct fill f = { 100000, 8L << 20, 1 };

	sbt_need_method();
	sbt_need_root();	/* to become uid 65534 */
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

const struct sbt_test packed_tests[] = {
	SBT(packed_max_and_flag),
	SBT(packed_sizes_align_and_stat),
	SBT(packed_over_max_is_guarded),
	SBT(packed_secrets_share_pages),
	SBT(packed_slab_mapping),
	SBT(packed_slab_named),
	SBT(packed_slab_between_guard_pages),
	SBT(packed_one_secret_one_page),
	SBT(packed_misuse_aborts),
	SBT(packed_free_zeroes_slot_at_once),
	SBT(packed_protect_einval_changes_nothing),
	SBT(packed_success_keeps_errno),
	SBT(packed_guard_bytes_keyed),
	SBT(packed_strict_never_unlocked),
	SBT(packed_no_lock_strict_fails),
	SBT(packed_capacity_one_million),
	SBT(packed_nobody_8m_holds_100k),
	SBT_SLOW(packed_no_heap_per_secret),
	SBT_END,
};
