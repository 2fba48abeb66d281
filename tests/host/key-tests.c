/*
 * The key: SipHash-2-4 against the published vectors, the key page, a new
 * key in forked children, and the attacks that worked on the unkeyed mix
 * that came before it (recover the key from a canary; forge an entry).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "core/core.h"
#include "kfacts.h"
#include "tests.h"

/*
 * SipHash-2-4 of the messages 00, 00 01, ..., 00 01 .. 3e (lengths 0 to
 * 63) under the key 00 01 .. 0f, from the reference vectors published with
 * the paper.
 */
static const uint64_t sip24_vectors[64] = {
	0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
	0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
	0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
	0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee, 0xa129ca6149be45e5,
	0x3f2acc7f57c29bdb, 0x699ae9f52cbe4794, 0x4bc1b3f0968dd39c, 0xbb6dc91da77961bd,
	0xbed65cf21aa2ee98, 0xd0f2cbb02e3b67c7, 0x93536795e3a33e88, 0xa80c038ccd5ccec8,
	0xb8ad50c6f649af94, 0xbce192de8a85b8ea, 0x17d835b85bbb15f3, 0x2f2e6163076bcfad,
	0xde4daaaca71dc9a5, 0xa6a2506687956571, 0xad87a3535c49ef28, 0x32d892fad841c342,
	0x7127512f72f27cce, 0xa7f32346f95978e3, 0x12e0b01abb051238, 0x15e034d40fa197ae,
	0x314dffbe0815a3b4, 0x027990f029623981, 0xcadcd4e59ef40c4d, 0x9abfd8766a33735c,
	0x0e3ea96b5304a7d0, 0xad0c42d6fc585992, 0x187306c89bc215a9, 0xd4a60abcf3792b95,
	0xf935451de4f21df2, 0xa9538f0419755787, 0xdb9acddff56ca510, 0xd06c98cd5c0975eb,
	0xe612a3cb9ecba951, 0xc766e62cfcadaf96, 0xee64435a9752fe72, 0xa192d576b245165a,
	0x0a8787bf8ecb74b2, 0x81b3e73d20b49b6f, 0x7fa8220ba3b2ecea, 0x245731c13ca42499,
	0xb78dbfaf3a8d83bd, 0xea1ad565322a1a0b, 0x60e61c23a3795013, 0x6606d7e446282b93,
	0x6ca4ecb15c5f91e1, 0x9f626da15c9625f3, 0xe51b38608ef25f57, 0x958a324ceb064572,
};

static uint64_t le64(const unsigned char *p)
{
	uint64_t w = 0;
	int i;

	for (i = 7; i >= 0; i--)
		w = w << 8 | p[i];
	return w;
}

START_TEST(siphash24_reference_vectors)
{
	unsigned char msg[64];
	uint64_t key[2];
	size_t len, i;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = i;
	key[0] = le64(msg);
	key[1] = le64(msg + 8);
	for (len = 0; len < 64; len++)
		ck_assert_msg(sb_siphash24(key, msg, len) == sip24_vectors[len],
			      "length %zu: %#llx", len,
			      (unsigned long long)sb_siphash24(key, msg, len));
	/* The word interface, which the library uses, on whole words. */
	for (len = 0; len < 64; len += 8) {
		struct sb_siphash s;

		sb_siphash_init(&s, key);
		for (i = 0; i < len; i += 8)
			sb_siphash_word(&s, le64(msg + i));
		ck_assert_msg(sb_siphash_final(&s) == sip24_vectors[len], "words, length %zu",
			      len);
	}
}
END_TEST

/* ---- the key page ---- */

struct key_page_search {
	size_t page;
	int found;
	struct smaps_vma vma;
};

/*
 * The key page: one read-write page not dumped and wiped on fork, named
 * where the kernel names mappings.  With no buffer live, nothing else in
 * the process looks like it.
 */
static int is_key_page(const struct smaps_vma *v, void *arg)
{
	struct key_page_search *ks = arg;

	if (v->end - v->start != ks->page || strcmp(v->perms, "rw-p") ||
	    !strstr(v->vmflags, " dd ") || !strstr(v->vmflags, " wf "))
		return 0;
	if (v->name[0] && strcmp(v->name, "[anon:secbuf-key]"))
		return 0;
	ks->found++;
	ks->vma = *v;
	return 0;
}

/* check runs each test in a forked child: its first allocation draws its key. */
static void draw_key(void)
{
	void *p = secbuf_alloc_flags(16, sbt_flags(0));

	ck_assert_ptr_nonnull(p);
	secbuf_free(p);
}

static int find_key_page(struct smaps_vma *v)
{
	struct key_page_search ks = { sbt_page(), 0, { 0 } };

	if (smaps_each(0, is_key_page, &ks) < 0 || ks.found != 1)
		return -1;
	*v = ks.vma;
	return 0;
}

START_TEST(key_page_locked_and_guarded)
{
	struct smaps_vma v, guard;
	long rss, locked;
	char flags[160];

	sbt_need_method();
	draw_key();
	ck_assert_msg(find_key_page(&v) == 0, "no single key page in /proc/self/smaps");
	/* Locked (root may lock), not in core dumps, zeroed in children. */
	ck_assert_int_eq(v.locked_kb, (long)sbt_page() / 1024);
	ck_assert_msg(strstr(v.vmflags, " lo "), "VmFlags:%s", v.vmflags);
	/* Guard pages on both sides. */
	ck_assert_int_eq(sbt_smaps((void *)(v.start - 1), &rss, &locked, flags, sizeof(flags)), 0);
	ck_assert_int_eq(sbt_maps_line((void *)(v.start - 1), guard.name, sizeof(guard.name)), 0);
	ck_assert_msg(strstr(guard.name, " ---p "), "before the key page: %s", guard.name);
	ck_assert_int_eq(sbt_maps_line((void *)v.end, guard.name, sizeof(guard.name)), 0);
	ck_assert_msg(strstr(guard.name, " ---p "), "after the key page: %s", guard.name);
}
END_TEST

struct child_key {
	const unsigned char *page;
	unsigned char parent[16];
};

/* Exit code = failed step. */
static void child_redraws(void *arg)
{
	struct child_key *ck = arg;
	struct smaps_vma v;
	size_t i;
	void *p;

	for (i = 0; i < sbt_page(); i++)
		if (ck->page[i])
			_exit(2);	/* inherited, not wiped */
	p = secbuf_alloc_flags(64, sbt_flags(0));
	if (!p)
		_exit(3);
	if (!memcmp(ck->page, ck->parent, 16))
		_exit(4);	/* the parent's key again */
	for (i = 0; i < 16 && !ck->page[i]; i++)
		;
	if (i == 16)
		_exit(5);	/* no key drawn */
	secbuf_free(p);
	if (find_key_page(&v) < 0 || (unsigned char *)v.start != ck->page)
		_exit(6);
	if (v.locked_kb != (long)sbt_page() / 1024)
		_exit(7);	/* the child locked its page again */
	_exit(0);
}

START_TEST(fork_child_redraws_key)
{
	struct child_key ck;
	struct smaps_vma v;
	char msg[256];
	int st;

	sbt_need_method();
	draw_key();
	ck_assert_int_eq(find_key_page(&v), 0);
	ck.page = (const unsigned char *)v.start;
	memcpy(ck.parent, ck.page, 16);
	ck_assert_msg(memcmp(ck.parent, (unsigned char[16]){ 0 }, 16), "no key in the page");
	st = sbt_child(child_redraws, &ck, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "child status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	ck_assert_msg(!memcmp(ck.page, ck.parent, 16), "the parent's key changed");
}
END_TEST

/* ---- the attacks on the unkeyed mix of the first version ---- */

#define MIX_M1 0x9e3779b97f4a7c15ull
#define MIX_M2 0xbf58476d1ce4e5b9ull

static uint64_t old_mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= MIX_M1;
	h ^= h >> 31;
	h *= MIX_M2;
	return h ^ (h >> 29);
}

static uint64_t mul_inverse(uint64_t a)	/* a odd: Newton's iteration mod 2^64 */
{
	uint64_t x = a;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

static uint64_t unshift(uint64_t y, int s)	/* inverts y = x ^ (x >> s) */
{
	uint64_t x = y;
	int i;

	for (i = s; i < 64; i += s)
		x = y ^ (x >> s);
	return x;
}

/* h such that old_mix(h, v) == out: the mix was a bijection. */
static uint64_t old_unmix(uint64_t out, uint64_t v)
{
	uint64_t h = unshift(out, 29) * mul_inverse(MIX_M2);

	return (unshift(h, 31) * mul_inverse(MIX_M1)) ^ v;
}

/* The first version's key from one buffer's 16 canary bytes. */
static void recover_old_key(const unsigned char *p, uint64_t key[2])
{
	uint64_t w[2];

	memcpy(w, p - 16, 16);
	key[0] = old_unmix(w[0], (uintptr_t)p);
	key[1] = old_unmix(w[1], ~(uintptr_t)p);
}

START_TEST(canary_key_recovery_fails)
{
	unsigned char *a, *b;
	uint64_t key[2], predicted[2], actual[2];

	sbt_need_method();
	a = secbuf_alloc_flags(64, sbt_flags(0));
	b = secbuf_alloc_flags(64, sbt_flags(0));
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	recover_old_key(a, key);
	predicted[0] = old_mix(key[0], (uintptr_t)b);
	predicted[1] = old_mix(key[1], ~(uintptr_t)b);
	memcpy(actual, b - 16, 16);
	ck_assert_msg(actual[0] || actual[1], "no canary");
	ck_assert_msg(memcmp(predicted, actual, 16),
		      "b's canary predicted from a's: the key was recovered");
	secbuf_free(a);
	secbuf_free(b);
}
END_TEST

/* The first version's layout of a registry entry and its check value. */
struct old_entry {
	uint64_t user, size;
	uint32_t flags, pad;
	uint64_t base, map_len, data, data_len;
	int32_t method, pad2;
	uint64_t mac;
};

static uint64_t old_mac(const struct old_entry *e, const uint64_t key[2])
{
	uint64_t h = key[0];

	h = old_mix(h, e->user);
	h = old_mix(h, e->size);
	h = old_mix(h, e->flags);
	h = old_mix(h, e->base);
	h = old_mix(h, e->map_len);
	h = old_mix(h, e->data);
	h = old_mix(h, e->data_len);
	h = old_mix(h, (uint64_t)(int64_t)e->method);
	return old_mix(h, key[1]);
}

struct forgery {
	const unsigned char *user;
	int recompute;		/* the check value, the old way */
	uint64_t key[2];
	int entries;
};

/* Rewrite the size of every copy of the entry in writable memory. */
__attribute__((no_sanitize_address))
static int forge_in(const struct smaps_vma *v, void *arg)
{
	struct forgery *f = arg;
	uintptr_t data = (uintptr_t)f->user & ~(uintptr_t)(sbt_page() - 1);
	struct old_entry *e;
	unsigned long a;

	/* Skip the stack and what no heap is as large as (sanitizer shadow). */
	if (strcmp(v->perms, "rw-p") || v->end - v->start > 256 * MiB || !strcmp(v->name, "[stack]"))
		return 0;
	for (a = v->start; a + sizeof(*e) <= v->end; a += 8) {
		e = (struct old_entry *)a;
		if (e->user != (uintptr_t)f->user || e->size != 100 ||
		    e->base != data - sbt_page() || e->map_len != 3 * sbt_page())
			continue;
		e->size = 200;
		if (f->recompute)
			e->mac = old_mac(e, f->key);
		f->entries++;
	}
	return 0;
}

/* Exit 0 = the forged size was believed; 2 = no entry found. */
static void forge(void *arg)
{
	struct forgery *f = arg;
	unsigned char *p = secbuf_alloc_flags(100, sbt_flags(0));

	if (!p)
		_exit(3);
	f->user = p;
	recover_old_key(p, f->key);
	if (smaps_each(0, forge_in, f) < 0 || !f->entries)
		_exit(2);
	fprintf(stderr, "size %zu after forging %d copies\n", secbuf_size(p), f->entries);
	_exit(0);
}

START_TEST(forged_registry_entry_aborts)
{
	char fails[1024] = "";
	int recompute;

	sbt_need_method();
	sbt_need_no_valgrind("valgrind's heap is not where /proc/self/maps says");
	for (recompute = 0; recompute <= 1; recompute++) {
		struct forgery f = { .recompute = recompute };
		char msg[512];
		int st = sbt_child(forge, &f, msg, sizeof(msg));

		if (!sbt_signalled(st, SIGABRT) || !strstr(msg, "metadata is corrupted"))
			sbt_note(fails, sizeof(fails), "%s: status %#x (exit %d), stderr: %s",
				 recompute ? "check value recomputed" : "size only", st,
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST

const struct sbt_test key_tests[] = {
	SBT(siphash24_reference_vectors),
	SBT(key_page_locked_and_guarded),
	SBT(fork_child_redraws_key),
	SBT(canary_key_recovery_fails),
	SBT(forged_registry_entry_aborts),
	SBT_END,
};
