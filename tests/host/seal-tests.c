/*
 * libsecbuf-seal's API: round trips through each way of opening, the
 * plaintext wiped, every region of the sealed bytes tampered with and
 * truncated (EBADMSG, nothing handed out), the closure forms freeing what
 * they opened, forked children (ENOKEY, unless SECBUF_INHERIT; a fork
 * inside a callback), rekeys from 8 threads while others open and seal,
 * bad input, bytes from another process or boot, and misuse that aborts.
 * The test binary's main is here; seal-memory-tests.c has the memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sodium.h>
#include <secbuf-seal.h>
#include "kfacts.h"
#include "seal-tests.h"

unsigned seal_flags(unsigned flags)
{
	return (sbt_locks(SECBUF_POPULATE) ? 0 : SECBUF_BEST_EFFORT) | flags;
}

unsigned seal_flags_fresh(unsigned flags)
{
	int m = secbuf_lock_method();

	return (m < 0 || m == SECBUF_LOCK_NONE ? SECBUF_BEST_EFFORT : 0) | flags;
}

/* ChaCha20's stream under a fixed key, nonce i, from offset (a multiple of 64). */
void seal_pattern(unsigned char *p, size_t n, size_t i, size_t offset)
{
	static const unsigned char key[crypto_stream_chacha20_ietf_KEYBYTES] = "seal-tests pattern";
	unsigned char nonce[crypto_stream_chacha20_ietf_NONCEBYTES] = { 0 };

	memcpy(nonce, &i, sizeof(i) < sizeof(nonce) ? sizeof(i) : sizeof(nonce));
	memset(p, 0, n);
	crypto_stream_chacha20_ietf_xor_ic(p, p, n, nonce, (uint32_t)(offset / 64), key);
}

static int count_vma(const struct smaps_vma *v, void *arg)
{
	/* ASan's allocator maps as it likes: there, libsecbuf's and secret memory only. */
	if (sbt_under_asan())
		*(int *)arg += (vmflag_has(v, "dd") && vmflag_has(v, "wf")) ||
			       strstr(v->name, "/secretmem") != NULL;
	else
		*(int *)arg += strcmp(v->name, "[heap]") != 0;
	return 0;
}

/* The process's mappings but malloc's heap, which grows for the sealed bytes and stays. */
static int mappings(void)
{
	int n = 0;

	ck_assert_int_eq(smaps_each(0, count_vma, &n), 0);
	return n;
}

/* Whether an opened buffer is locked as the method in effect locks populated ones. */
static int locked_as_expected(const void *p)
{
	struct secbuf_stat st;

	if (secbuf_stat(p, &st) < 0)
		return 0;
	return !sbt_locks(SECBUF_POPULATE) ||
	       (st.lock_method != SECBUF_LOCK_NONE && st.locked_pages > 0);
}

/* What a callback saw. */
struct seen {
	size_t i, size, bytes, calls, secrets;
	int bad, unlocked;
	void *last;
};

static int check_whole(void *key, size_t n, void *arg)
{
	struct seen *s = arg;
	unsigned char *want = malloc(n);

	if (!want)
		abort(); /* not ck_assert: forked children call this too */
	seal_pattern(want, n, s->i, 0);
	s->bad += n != s->size || memcmp(key, want, n) != 0 || secbuf_size(key) != n;
	s->unlocked += !locked_as_expected(key);
	s->calls++;
	free(want);
	return 42;
}

static int check_chunk(void *chunk, size_t n, size_t offset, void *arg)
{
	struct seen *s = arg;
	unsigned char *want = malloc(n);

	if (!want)
		abort();
	seal_pattern(want, n, s->i, offset);
	s->bad += offset != s->bytes || n > SECBUF_SEAL_CHUNK || memcmp(chunk, want, n) != 0;
	s->unlocked += !locked_as_expected(chunk);
	s->bytes += n;
	s->calls++;
	free(want);
	return 0;
}

static const size_t sizes[] = { 1, 32, 4096, SECBUF_SEAL_CHUNK, SECBUF_SEAL_CHUNK + 1, MiB };

START_TEST(seal_round_trip)
{
	size_t k;

	sbt_need_method();
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k], chunks = (n + SECBUF_SEAL_CHUNK - 1) / SECBUF_SEAL_CHUNK;
		unsigned char *plain = malloc(n), *want = malloc(n), *p;
		struct seen whole = { .i = k, .size = n }, each = { .i = k, .size = n };
		secbuf_sealed *s;

		ck_assert_ptr_nonnull(plain);
		ck_assert_ptr_nonnull(want);
		seal_pattern(want, n, k, 0);
		memcpy(plain, want, n);
		s = secbuf_seal(plain, n, seal_flags(0));
		ck_assert_msg(s, "seal %zu: %s", n, strerror(errno));
		ck_assert_msg(!sbt_differs(plain, n, 0), "%zu bytes: the plaintext is not wiped",
			      n);
		ck_assert_uint_eq(secbuf_sealed_size(s), n);
		p = secbuf_sealed_open(s);
		ck_assert_msg(p, "open %zu: %s", n, strerror(errno));
		ck_assert_msg(!memcmp(p, want, n), "open %zu: other bytes", n);
		ck_assert_uint_eq(secbuf_size(p), n);
		ck_assert_msg(locked_as_expected(p), "open %zu: not locked", n);
		secbuf_free(p);
		ck_assert_int_eq(secbuf_sealed_use(s, check_whole, &whole), 42);
		ck_assert_msg(whole.calls == 1 && !whole.bad && !whole.unlocked,
			      "use %zu: %zu calls, %d bad, %d unlocked", n, whole.calls, whole.bad,
			      whole.unlocked);
		ck_assert_int_eq(secbuf_sealed_each(s, check_chunk, &each), 0);
		ck_assert_msg(each.calls == chunks && each.bytes == n && !each.bad &&
				      !each.unlocked,
			      "each %zu: %zu calls for %zu bytes, %d bad, %d unlocked", n,
			      each.calls, each.bytes, each.bad, each.unlocked);
		secbuf_sealed_free(s);
		free(plain);
		free(want);
	}
}
END_TEST

START_TEST(seal_wipes_plaintext)
{
	unsigned char stack[48], *locked = secbuf_alloc_flags(4096, sbt_flags(0));
	secbuf_sealed *a, *b;

	sbt_need_method();
	ck_assert_ptr_nonnull(locked);
	memset(stack, 0x5a, sizeof(stack));
	memset(locked, 0xa5, 4096);
	/* A refused seal leaves the caller's only copy alone. */
	errno = 0;
	ck_assert_ptr_null(secbuf_seal(stack, sizeof(stack), 0x8000u));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert(!sbt_differs(stack, sizeof(stack), 0x5a));
	a = secbuf_seal(stack, sizeof(stack), seal_flags(0));
	b = secbuf_seal(locked, 4096, seal_flags(0));
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_msg(!sbt_differs(stack, sizeof(stack), 0), "stack copy not wiped");
	ck_assert_msg(!sbt_differs(locked, 4096, 0), "secbuf copy not wiped");
	secbuf_free(locked);
	secbuf_sealed_free(a);
	secbuf_sealed_free(b);
}
END_TEST

struct fill {
	size_t i, stop_at, bytes;
	int err, unlocked;
};

static int fill_pattern(void *chunk, size_t n, size_t offset, void *arg)
{
	struct fill *f = arg;

	f->unlocked += !locked_as_expected(chunk);
	seal_pattern(chunk, n, f->i, offset);
	f->bytes += n;
	if (f->stop_at && offset >= f->stop_at) {
		errno = f->err;
		return 1;
	}
	return 0;
}

START_TEST(seal_fill_round_trip)
{
	size_t n = MiB + 5;
	struct fill f = { .i = 7 };
	struct seen each = { .i = 7, .size = n };
	struct secbuf_seal_stat st0, st1;
	struct secbuf_totals t0, t1;
	secbuf_sealed *s;
	int lines;

	sbt_need_method();
	s = secbuf_seal_fill(n, fill_pattern, &f, seal_flags(0));
	ck_assert_msg(s, "seal_fill: %s", strerror(errno));
	ck_assert_uint_eq(f.bytes, n);
	ck_assert_int_eq(f.unlocked, 0);
	ck_assert_int_eq(secbuf_sealed_each(s, check_chunk, &each), 0);
	ck_assert_msg(each.bytes == n && !each.bad, "each: %zu bytes, %d bad", each.bytes,
		      each.bad);
	/* A fill that stops: nothing sealed, nothing left; its errno, or ECANCELED. */
	ck_assert_int_eq(secbuf_seal_stat(&st0), 0);
	ck_assert_int_eq(secbuf_totals(&t0), 0);
	lines = mappings();
	f = (struct fill){ .i = 7, .stop_at = SECBUF_SEAL_CHUNK, .err = 0 };
	errno = 0;
	ck_assert_ptr_null(secbuf_seal_fill(n, fill_pattern, &f, seal_flags(0)));
	ck_assert_int_eq(errno, ECANCELED);
	f = (struct fill){ .i = 7, .stop_at = 1, .err = EIO };
	ck_assert_ptr_null(secbuf_seal_fill(n, fill_pattern, &f, seal_flags(0)));
	ck_assert_int_eq(errno, EIO);
	ck_assert_int_eq(secbuf_seal_stat(&st1), 0);
	ck_assert_int_eq(secbuf_totals(&t1), 0);
	ck_assert_uint_eq(st1.sealed, st0.sealed);
	ck_assert_uint_eq(t1.secrets, t0.secrets);
	ck_assert_int_eq(mappings(), lines);
	secbuf_sealed_free(s);
}
END_TEST

/* A callback that must never run: a failed open hands nothing over. */
static int never_whole(void *key, size_t n, void *arg)
{
	(void)key;
	(void)n;
	++*(int *)arg;
	return 0;
}

static int never_chunk(void *chunk, size_t n, size_t offset, void *arg)
{
	(void)chunk;
	(void)n;
	(void)offset;
	++*(int *)arg;
	return 0;
}

/* Bytes that must not open: import refuses them, or each way of opening does. */
static void expect_refused(const unsigned char *c, size_t len, const char *what, char *fails,
			   size_t flen)
{
	struct secbuf_totals t0, t1;
	secbuf_sealed *s;
	int called = 0, r;
	void *p;

	ck_assert_int_eq(secbuf_totals(&t0), 0);
	errno = 0;
	s = secbuf_sealed_import(c, len);
	if (!s) {
		if (errno != EBADMSG)
			sbt_note(fails, flen, "%s: import: %s", what, strerror(errno));
		return;
	}
	errno = 0;
	p = secbuf_sealed_open(s);
	if (p || errno != EBADMSG)
		sbt_note(fails, flen, "%s: open: %p, %s", what, p, strerror(errno));
	secbuf_free(p);
	errno = 0;
	r = secbuf_sealed_use(s, never_whole, &called);
	if (r != -1 || errno != EBADMSG)
		sbt_note(fails, flen, "%s: use: %d, %s", what, r, strerror(errno));
	errno = 0;
	r = secbuf_sealed_each(s, never_chunk, &called);
	if (r != -1 || errno != EBADMSG)
		sbt_note(fails, flen, "%s: each: %d, %s", what, r, strerror(errno));
	if (called)
		sbt_note(fails, flen, "%s: plaintext handed to a callback", what);
	secbuf_sealed_free(s);
	ck_assert_int_eq(secbuf_totals(&t1), 0);
	if (t1.secrets != t0.secrets)
		sbt_note(fails, flen, "%s: %zu secrets left open", what, t1.secrets - t0.secrets);
}

static void flip(const unsigned char *blob, size_t len, size_t at, unsigned char bit,
		 const char *what, char *fails, size_t flen)
{
	unsigned char *c = malloc(len);
	char name[96];

	ck_assert_ptr_nonnull(c);
	memcpy(c, blob, len);
	c[at] ^= bit;
	snprintf(name, sizeof(name), "%s (byte %zu)", what, at);
	expect_refused(c, len, name, fails, flen);
	free(c);
}

/* An untouched copy imports and opens: the cases above fail for what they change. */
static void expect_opens(const unsigned char *blob, size_t len, size_t i)
{
	secbuf_sealed *s = secbuf_sealed_import(blob, len);
	struct seen whole;

	ck_assert_msg(s, "control import: %s", strerror(errno));
	whole = (struct seen){ .i = i, .size = secbuf_sealed_size(s) };
	ck_assert_int_eq(secbuf_sealed_use(s, check_whole, &whole), 42);
	ck_assert_int_eq(whole.bad, 0);
	secbuf_sealed_free(s);
}

static unsigned char *sealed_bytes(size_t n, size_t i, size_t *len, secbuf_sealed **keep)
{
	unsigned char *plain = malloc(n), *blob;
	secbuf_sealed *s;

	ck_assert_ptr_nonnull(plain);
	seal_pattern(plain, n, i, 0);
	s = secbuf_seal(plain, n, seal_flags(0));
	ck_assert_ptr_nonnull(s);
	free(plain);
	*len = secbuf_sealed_export(s, NULL, 0);
	blob = malloc(*len);
	ck_assert_ptr_nonnull(blob);
	ck_assert_uint_eq(secbuf_sealed_export(s, blob, *len), *len);
	*keep = s;
	return blob;
}

/* Every byte of a one-chunk secret: header, nonce, ciphertext, tag; and truncations. */
START_TEST(seal_tamper_small)
{
	char fails[4096] = "";
	secbuf_sealed *s;
	size_t len, at;
	unsigned char *blob;

	sbt_need_method();
	blob = sealed_bytes(32, 3, &len, &s);
	ck_assert_uint_eq(len, 16 + 24 + 32 + 16);
	expect_opens(blob, len, 3);
	for (at = 0; at < len; at++)
		flip(blob, len, at, at == 4 ? SECBUF_PACKED : 0x01,
		     at < 16 ? "header" :
		     at < 40 ? "nonce" :
		     at < 72 ? "ciphertext" :
			       "tag",
		     fails, sizeof(fails));
	for (at = 0; at < len; at++)
		expect_refused(blob, at, "truncated", fails, sizeof(fails));
	ck_assert_msg(!fails[0], "%s", fails);
	secbuf_sealed_free(s);
	free(blob);
}
END_TEST

/* Three chunks: each one's first and last bytes and tag, moved, dropped, re-sized. */
START_TEST(seal_tamper_chunks)
{
	const size_t n = 2 * SECBUF_SEAL_CHUNK + 7232, step = SECBUF_SEAL_CHUNK + 16;
	char fails[4096] = "";
	unsigned char *blob, *c;
	secbuf_sealed *s;
	size_t len, i;

	sbt_need_method();
	blob = sealed_bytes(n, 4, &len, &s);
	expect_opens(blob, len, 4);
	flip(blob, len, 4, SECBUF_PACKED, "header flags", fails, sizeof(fails));
	flip(blob, len, 8, 0x01, "header size", fails, sizeof(fails));
	flip(blob, len, 16, 0x01, "nonce (salt)", fails, sizeof(fails));
	flip(blob, len, 39, 0x80, "nonce (counter part)", fails, sizeof(fails));
	for (i = 0; i < 3; i++) {
		size_t at = 40 + i * step, clen = i < 2 ? SECBUF_SEAL_CHUNK : 7232;

		flip(blob, len, at, 0x01, "chunk's first byte", fails, sizeof(fails));
		flip(blob, len, at + clen - 1, 0x01, "chunk's last byte", fails, sizeof(fails));
		flip(blob, len, at + clen, 0x01, "tag's first byte", fails, sizeof(fails));
		flip(blob, len, at + clen + 15, 0x01, "tag's last byte", fails, sizeof(fails));
	}
	expect_refused(blob, len - 1, "one byte short", fails, sizeof(fails));
	expect_refused(blob, len - 16, "last tag cut", fails, sizeof(fails));
	expect_refused(blob, 40 + 2 * step, "last chunk cut", fails, sizeof(fails));
	c = malloc(len + 1);
	ck_assert_ptr_nonnull(c);
	memcpy(c, blob, len);
	c[len] = 0;
	expect_refused(c, len + 1, "one byte more", fails, sizeof(fails));
	/* The last chunk cut and the header's size to match: its tag still knows. */
	memcpy(c, blob, len);
	c[8] = 0;
	c[9] = 0x80; /* 32768, little-endian */
	expect_refused(c, 40 + 2 * step, "last chunk cut, size fixed", fails, sizeof(fails));
	/* The two full chunks swapped: each tag is bound to its place. */
	memcpy(c, blob, len);
	memcpy(c + 40, blob + 40 + step, step);
	memcpy(c + 40 + step, blob + 40, step);
	expect_refused(c, len, "chunks swapped", fails, sizeof(fails));
	ck_assert_msg(!fails[0], "%s", fails);
	free(c);
	free(blob);
	secbuf_sealed_free(s);
}
END_TEST

struct peek {
	size_t secrets;
	void *p;
	int locked, err;
};

static int peek_whole(void *key, size_t n, void *arg)
{
	struct peek *pk = arg;
	struct secbuf_totals t;

	(void)n;
	ck_assert_int_eq(secbuf_totals(&t), 0);
	pk->secrets = t.secrets;
	pk->p = key;
	pk->locked = locked_as_expected(key);
	errno = pk->err;
	return pk->err ? -1 : 5;
}

static int peek_chunk(void *chunk, size_t n, size_t offset, void *arg)
{
	(void)offset;
	return peek_whole(chunk, n, arg) == 5 ? 0 : -1;
}

/* The closures open, call, wipe and free: the process's secrets are as before. */
START_TEST(seal_closures_free_what_they_open)
{
	unsigned char key[4096];
	struct secbuf_totals t0, t1;
	struct peek pk = { 0 };
	secbuf_sealed *s;

	sbt_need_method();
	seal_pattern(key, sizeof(key), 1, 0);
	s = secbuf_seal(key, sizeof(key), seal_flags(0));
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(secbuf_totals(&t0), 0);
	ck_assert_int_eq(secbuf_sealed_use(s, peek_whole, &pk), 5);
	ck_assert_int_eq(secbuf_totals(&t1), 0);
	/* Inside: the plaintext's buffer alone (the key was wiped and given back before). */
	ck_assert_uint_eq(pk.secrets, t0.secrets + 1);
	ck_assert_int_eq(pk.locked, 1);
	ck_assert_uint_eq(t1.secrets, t0.secrets);
	ck_assert_uint_eq(t1.bytes, t0.bytes);
	ck_assert_msg(sbt_signalled(sbt_poke(pk.p, 0), SIGSEGV), "the buffer is still mapped");
	/* fn's failure and errno come back as they were. */
	pk.err = EDOM;
	errno = 0;
	ck_assert_int_eq(secbuf_sealed_use(s, peek_whole, &pk), -1);
	ck_assert_int_eq(errno, EDOM);
	/*
	 * Chunk by chunk: the chunk's buffer during, and the key's unless its
	 * page is one the library keeps (empty) for keys; nothing after.
	 */
	pk.err = 0;
	ck_assert_int_eq(secbuf_sealed_each(s, peek_chunk, &pk), 0);
	ck_assert_int_eq(secbuf_totals(&t1), 0);
	ck_assert_msg(pk.secrets == t0.secrets + 1 || pk.secrets == t0.secrets + 2,
		      "%zu secrets during, %zu before", pk.secrets, t0.secrets);
	ck_assert_uint_eq(t1.secrets, t0.secrets);
	ck_assert_msg(sbt_signalled(sbt_poke(pk.p, 0), SIGSEGV), "the chunk is still mapped");
	secbuf_sealed_free(s);
}
END_TEST

/* In a forked child: the parent's sealed secret fails with ENOKEY; its own work. */
static void child_cannot_open(void *arg)
{
	secbuf_sealed *s = arg, *own;
	unsigned char key[32];
	int called = 0;
	void *p;

	errno = 0;
	if (secbuf_sealed_open(s) || errno != ENOKEY)
		_exit(2);
	if (secbuf_sealed_use(s, never_whole, &called) != -1 || errno != ENOKEY)
		_exit(3);
	if (secbuf_sealed_each(s, never_chunk, &called) != -1 || errno != ENOKEY || called)
		_exit(4);
	seal_pattern(key, sizeof(key), 9, 0);
	own = secbuf_seal(key, sizeof(key), seal_flags(0));
	if (!own)
		_exit(5);
	p = secbuf_sealed_open(own);
	seal_pattern(key, sizeof(key), 9, 0);
	if (!p || memcmp(p, key, sizeof(key)))
		_exit(6);
	secbuf_free(p);
	/* Still the parent's after the child's own prekey came. */
	if (secbuf_sealed_open(s) || errno != ENOKEY)
		_exit(7);
	secbuf_sealed_free(own);
	secbuf_sealed_free(s); /* the child's copy of the handle is its own to free */
	_exit(0);
}

START_TEST(seal_fork_child_cannot_open)
{
	unsigned char key[32];
	secbuf_sealed *s;
	char msg[512];
	int st;
	void *p;

	sbt_need_method();
	seal_pattern(key, sizeof(key), 8, 0);
	s = secbuf_seal(key, sizeof(key), seal_flags(0));
	ck_assert_ptr_nonnull(s);
	st = sbt_child(child_cannot_open, s, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "child: status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	p = secbuf_sealed_open(s);
	seal_pattern(key, sizeof(key), 8, 0);
	ck_assert_msg(p && !memcmp(p, key, sizeof(key)), "the parent's own no longer opens");
	secbuf_free(p);
	secbuf_sealed_free(s);
}
END_TEST

static int opens_as(secbuf_sealed *s, size_t i)
{
	struct seen whole = { .i = i, .size = secbuf_sealed_size(s) };

	return secbuf_sealed_use(s, check_whole, &whole) == 42 && !whole.bad;
}

/*
 * In a child of the test (SECBUF_INHERIT keeps libsecbuf's key across
 * fork for good): a grandchild opens the inheritable one, not the other,
 * and its rekey is its own.  Exit code = failed step.
 */
static void inherit_family(void *arg)
{
	unsigned char key[32];
	secbuf_sealed *inh, *own;
	struct secbuf_seal_stat st;
	int status;
	pid_t pid;

	(void)arg;
	seal_pattern(key, sizeof(key), 20, 0);
	inh = secbuf_seal(key, sizeof(key), seal_flags(SECBUF_INHERIT));
	seal_pattern(key, sizeof(key), 21, 0);
	own = secbuf_seal(key, sizeof(key), seal_flags(0));
	if (!inh || !own)
		_exit(2);
	if (secbuf_seal_stat(&st) < 0 || st.inherit_prekey_method < 0 ||
	    st.inherit_prekey_method == SECBUF_LOCK_SECRETMEM)
		_exit(3);
	pid = fork();
	if (pid == 0) {
		if (!opens_as(inh, 20))
			_exit(4);
		errno = 0;
		if (secbuf_sealed_open(own) || errno != ENOKEY)
			_exit(5);
		if (secbuf_seal_rekey() < 0 || !opens_as(inh, 20))
			_exit(6);
		secbuf_sealed_free(inh);
		secbuf_sealed_free(own);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		_exit(7);
	if (!sbt_exited_ok(status))
		_exit(10 + (WIFEXITED(status) ? WEXITSTATUS(status) : 9));
	if (!opens_as(inh, 20) || !opens_as(own, 21))
		_exit(8);
	_exit(0);
}

START_TEST(seal_inherit_child_opens)
{
	char msg[512];
	int st;

	sbt_need_method();
	st = sbt_child(inherit_family, NULL, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st),
		      "status %#x (exit %d = failed step; 1x: the grandchild's) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

struct forker {
	secbuf_sealed *s;
	pid_t test, child;
	int parent_ok;
};

/* fork() inside the callback: the child cannot open, and returns through the library. */
static int fork_in_use(void *key, size_t n, void *arg)
{
	struct forker *f = arg;
	unsigned char want[64];
	int called = 0;

	f->child = fork();
	if (f->child == 0) {
		errno = 0;
		if (secbuf_sealed_use(f->s, never_whole, &called) == -1 && errno == ENOKEY)
			return 77;
		return 78;
	}
	seal_pattern(want, n, 30, 0);
	f->parent_ok = n == sizeof(want) && !memcmp(key, want, n);
	return 5;
}

static int fork_in_chunk(void *chunk, size_t n, size_t offset, void *arg)
{
	int r = fork_in_use(chunk, n, arg);

	(void)offset;
	return r == 5 ? 0 : r;
}

static int fork_in_fill(void *chunk, size_t n, size_t offset, void *arg)
{
	struct forker *f = arg;

	seal_pattern(chunk, n, 31, offset);
	if (offset == 0)
		f->child = fork();
	return 0;
}

static void reap(struct forker *f, const char *what)
{
	int status;

	if (getpid() != f->test)
		_exit(1); /* not reached: the child left above */
	ck_assert_int_eq(waitpid(f->child, &status, 0), f->child);
	ck_assert_msg(sbt_exited_ok(status), "%s: the child's status %#x", what, status);
}

START_TEST(seal_fork_during_open)
{
	struct forker f = { .test = getpid() };
	struct secbuf_totals t0, t1;
	unsigned char key[64];
	secbuf_sealed *s;
	int r;

	sbt_need_method();
	seal_pattern(key, sizeof(key), 30, 0);
	f.s = s = secbuf_seal(key, sizeof(key), seal_flags(0));
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(secbuf_totals(&t0), 0);
	r = secbuf_sealed_use(s, fork_in_use, &f);
	if (getpid() != f.test)
		_exit(r == 77 ? 0 : 1);
	ck_assert_int_eq(r, 5);
	ck_assert(f.parent_ok);
	reap(&f, "use");
	r = secbuf_sealed_each(s, fork_in_chunk, &f);
	if (getpid() != f.test)
		_exit(r == 77 ? 0 : 1);
	ck_assert_int_eq(r, 0);
	reap(&f, "each");
	ck_assert_int_eq(secbuf_totals(&t1), 0);
	ck_assert_uint_eq(t1.secrets, t0.secrets);
	/* In a fill, the child gets nothing (ENOKEY), the parent its seal. */
	errno = 0;
	s = secbuf_seal_fill(3 * SECBUF_SEAL_CHUNK, fork_in_fill, &f, seal_flags(0));
	if (getpid() != f.test)
		_exit(!s && errno == ENOKEY ? 0 : 1);
	ck_assert_msg(s, "seal_fill: %s", strerror(errno));
	reap(&f, "fill");
	ck_assert(opens_as(s, 31));
	secbuf_sealed_free(s);
	secbuf_sealed_free(f.s);
}
END_TEST

#define POOL 64
static secbuf_sealed *pool[POOL];
static secbuf_sealed *big;
static int stop, failures;

static void seal_pool(void)
{
	unsigned char key[32], *large = malloc(40000);
	int i;

	ck_assert_ptr_nonnull(large);
	for (i = 0; i < POOL; i++) {
		seal_pattern(key, sizeof(key), 100 + i, 0);
		pool[i] = secbuf_seal(key, sizeof(key), seal_flags(0));
		ck_assert_ptr_nonnull(pool[i]);
	}
	seal_pattern(large, 40000, 99, 0);
	big = secbuf_seal(large, 40000, seal_flags(0));
	ck_assert_ptr_nonnull(big);
	free(large);
}

static void free_pool(void)
{
	int i;

	for (i = 0; i < POOL; i++)
		secbuf_sealed_free(pool[i]);
	secbuf_sealed_free(big);
}

static void *rekeyer(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 10; i++)
		if (secbuf_seal_rekey() < 0)
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *opener(void *arg)
{
	int i;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct seen each = { .i = 99, .size = 40000 };

		for (i = 0; i < POOL; i++)
			if (!opens_as(pool[i], 100 + i))
				__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
		if (secbuf_sealed_each(big, check_chunk, &each) != 0 || each.bad ||
		    each.bytes != 40000)
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *sealer(void *arg)
{
	unsigned char key[32];
	size_t i = 1000;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		secbuf_sealed *s;

		seal_pattern(key, sizeof(key), i, 0);
		s = secbuf_seal(key, sizeof(key), seal_flags(0));
		if (!s || !opens_as(s, i))
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
		secbuf_sealed_free(s);
		i++;
	}
	return NULL;
}

/* 8 threads rekey 10 times each while 3 open and verify and one seals, opens and frees. */
START_TEST(seal_rekey_from_threads)
{
	pthread_t rk[8], op[3], sl;
	struct secbuf_seal_stat st0, st1;
	unsigned char *old;
	size_t len;
	int i;

	sbt_need_method();
	seal_pool();
	len = secbuf_sealed_export(pool[0], NULL, 0);
	old = malloc(len);
	ck_assert_ptr_nonnull(old);
	secbuf_sealed_export(pool[0], old, len);
	ck_assert_int_eq(secbuf_seal_stat(&st0), 0);
	stop = failures = 0;
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&op[i], NULL, opener, NULL), 0);
	ck_assert_int_eq(pthread_create(&sl, NULL, sealer, NULL), 0);
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_create(&rk[i], NULL, rekeyer, NULL), 0);
	for (i = 0; i < 8; i++)
		pthread_join(rk[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 3; i++)
		pthread_join(op[i], NULL);
	pthread_join(sl, NULL);
	ck_assert_int_eq(failures, 0);
	ck_assert_int_eq(secbuf_seal_stat(&st1), 0);
	ck_assert_uint_eq(st1.rekeys, st0.rekeys + 80);
	for (i = 0; i < POOL; i++)
		ck_assert(opens_as(pool[i], 100 + i));
	/* What was sealed before, under the prekeys now wiped, opens nothing. */
	{
		char fails[256] = "";

		expect_refused(old, len, "sealed bytes from before the rekeys", fails,
			       sizeof(fails));
		ck_assert_msg(!fails[0], "%s", fails);
	}
	free(old);
	free_pool();
}
END_TEST

static void *forker_opener(void *arg)
{
	return opener(arg);
}

/* fork() 100 times while threads open and rekey: no deadlock, the children get ENOKEY. */
START_TEST(seal_fork_while_opening)
{
	int n = sbt_under_valgrind() ? 10 : 100, i, status;
	pthread_t op[2], rk;
	pid_t pid;

	sbt_need_method();
	seal_pool();
	stop = failures = 0;
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&op[i], NULL, forker_opener, NULL), 0);
	ck_assert_int_eq(pthread_create(&rk, NULL, rekeyer, NULL), 0);
	for (i = 0; i < n; i++) {
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			alarm(10);
			errno = 0;
			if (secbuf_sealed_open(pool[i % POOL]) || errno != ENOKEY)
				_exit(2);
			_exit(0);
		}
		ck_assert_int_ge(pid, 0);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(sbt_exited_ok(status), "fork %d: child status %#x", i, status);
	}
	pthread_join(rk, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++)
		pthread_join(op[i], NULL);
	ck_assert_int_eq(failures, 0);
	free_pool();
}
END_TEST

START_TEST(seal_bad_input)
{
	static const size_t huge[] = { SIZE_MAX, SIZE_MAX - 40, SIZE_MAX - 4096, SIZE_MAX / 2 + 1 };
	unsigned char key[32] = { 1 }, junk[100] = { 0 };
	struct secbuf_totals t0, t1;
	secbuf_sealed *s;
	int lines, called = 0;
	size_t i;

	sbt_need_method();
	/* The prekey and the handles' arena, made before counting mappings. */
	s = secbuf_seal(key, sizeof(key), seal_flags(0));
	ck_assert_ptr_nonnull(s);
	lines = mappings();
	ck_assert_int_eq(secbuf_totals(&t0), 0);
	errno = 0;
	ck_assert_ptr_null(secbuf_seal(NULL, 32, 0));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(secbuf_seal(key, 0, 0));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(secbuf_seal(key, 32, SECBUF_POPULATE));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(secbuf_seal_fill(32, NULL, NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	for (i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		errno = 0;
		ck_assert_ptr_null(secbuf_seal(key, huge[i], seal_flags(0)));
		ck_assert_msg(errno == ENOMEM, "seal(%zu): %s", huge[i], strerror(errno));
		errno = 0;
		ck_assert_ptr_null(secbuf_seal_fill(huge[i], never_chunk, &called, seal_flags(0)));
		ck_assert_msg(errno == ENOMEM, "seal_fill(%zu): %s", huge[i], strerror(errno));
	}
	errno = 0;
	ck_assert_ptr_null(secbuf_sealed_open(NULL));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(secbuf_sealed_use(NULL, never_whole, &called), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(secbuf_sealed_use(s, NULL, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(secbuf_sealed_each(NULL, never_chunk, &called), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(secbuf_sealed_each(s, NULL, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_uint_eq(secbuf_sealed_export(NULL, junk, sizeof(junk)), 0);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(secbuf_sealed_import(NULL, 88));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(secbuf_sealed_import(junk, sizeof(junk)));
	ck_assert_int_eq(errno, EBADMSG);
	errno = 0;
	ck_assert_int_eq(secbuf_seal_stat(NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(secbuf_sealed_size(NULL), 0);
	/* A header with an unknown flag is not ours. */
	ck_assert_uint_eq(secbuf_sealed_export(s, junk, sizeof(junk)), 88);
	junk[4] |= 0x80;
	errno = 0;
	ck_assert_ptr_null(secbuf_sealed_import(junk, 88));
	ck_assert_int_eq(errno, EBADMSG);
	/* Successful calls keep errno; NULL frees nothing. */
	errno = EXDEV;
	secbuf_sealed_free(NULL);
	secbuf_free(secbuf_sealed_open(s));
	ck_assert_int_eq(errno, EXDEV);
	ck_assert_int_eq(called, 0);
	ck_assert_int_eq(secbuf_totals(&t1), 0);
	ck_assert_uint_eq(t1.secrets, t0.secrets);
	ck_assert_int_eq(mappings(), lines);
	secbuf_sealed_free(s);
}
END_TEST

/* Sealed in a child, which then exits: its bytes fail here, as another boot's do. */
static void seal_and_send(void *arg)
{
	unsigned char key[32], blob[128];
	int fd = *(int *)arg;
	secbuf_sealed *s;
	size_t n;

	seal_pattern(key, sizeof(key), 40, 0);
	s = secbuf_seal(key, sizeof(key), seal_flags(0));
	if (!s)
		_exit(2);
	n = secbuf_sealed_export(s, blob, sizeof(blob));
	if (n > sizeof(blob) || write(fd, blob, n) != (ssize_t)n)
		_exit(3);
	_exit(0);
}

/*
 * A 32-byte secret sealed by a process of an earlier boot, whose prekey
 * died with it; with SECBUF_BEST_EFFORT, so that every method opens it
 * as far as its tag.
 */
static const unsigned char earlier_boot[88] = {
	0x53, 0x42, 0x53, 0x31, 0x02, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x30, 0x36, 0x96, 0x46, 0x4e, 0x3d, 0x6f, 0xa3, 0x54, 0x8d, 0xfd, 0x0f, 0x87, 0x9b,
	0xa7, 0x17, 0xb0, 0x51, 0xba, 0x57, 0x71, 0x03, 0x90, 0x93, 0x54, 0x45, 0xc7, 0xac, 0x52,
	0xa3, 0x31, 0x5a, 0x61, 0x6e, 0x9d, 0x00, 0x01, 0xcf, 0xfa, 0x75, 0x69, 0xa5, 0x7e, 0x81,
	0xf4, 0x3d, 0xed, 0xb9, 0xda, 0x12, 0xf1, 0x4a, 0xa6, 0x2a, 0x81, 0x67, 0xcb, 0xd2, 0x53,
	0x1b, 0xd5, 0xff, 0xcf, 0xd7, 0xcb, 0xa6, 0x00, 0x29, 0x8c, 0xbb, 0x1b, 0x2e,
};

START_TEST(seal_other_process_fails)
{
	unsigned char blob[128], key[32] = { 2 };
	char msg[256], fails[512] = "";
	secbuf_sealed *mine;
	int fds[2], st;
	ssize_t n;

	sbt_need_method();
	/* Before this process has a prekey, and after. */
	expect_refused(earlier_boot, sizeof(earlier_boot), "another boot's, no prekey here", fails,
		       sizeof(fails));
	mine = secbuf_seal(key, sizeof(key), seal_flags(0));
	ck_assert_ptr_nonnull(mine);
	expect_refused(earlier_boot, sizeof(earlier_boot), "another boot's", fails, sizeof(fails));
	ck_assert_int_eq(pipe(fds), 0);
	st = sbt_child(seal_and_send, &fds[1], msg, sizeof(msg));
	close(fds[1]);
	ck_assert_msg(sbt_exited_ok(st), "child: status %#x %s", st, msg);
	n = read(fds[0], blob, sizeof(blob));
	close(fds[0]);
	ck_assert_int_eq(n, 88);
	expect_refused(blob, (size_t)n, "another process's", fails, sizeof(fails));
	ck_assert_msg(!fails[0], "%s", fails);
	secbuf_sealed_free(mine);
}
END_TEST

static void double_free(void *arg)
{
	unsigned char key[32] = { 3 };
	secbuf_sealed *s = secbuf_seal(key, sizeof(key), *(unsigned *)arg);

	secbuf_sealed_free(s);
	secbuf_sealed_free(s);
}

static void use_after_free(void *arg)
{
	unsigned char key[32] = { 3 };
	secbuf_sealed *s = secbuf_seal(key, sizeof(key), *(unsigned *)arg), *t;
	int i;

	secbuf_sealed_free(s);
	/* Other seals meanwhile: a freed handle waits before its slot is reused. */
	for (i = 0; i < 100; i++) {
		key[0] = 3;
		t = secbuf_seal(key, sizeof(key), *(unsigned *)arg);
		secbuf_sealed_free(t);
	}
	secbuf_sealed_open(s);
}

static void foreign_handle(void *arg)
{
	struct {
		uint64_t words[8];
	} fake = { { 0 } };

	(void)arg;
	secbuf_sealed_free((secbuf_sealed *)&fake);
}

static void interior_handle(void *arg)
{
	unsigned char key[32] = { 3 };
	secbuf_sealed *s = secbuf_seal(key, sizeof(key), *(unsigned *)arg);

	secbuf_sealed_use((secbuf_sealed *)((char *)s + 8), never_whole, NULL);
}

static void corrupted_handle(void *arg)
{
	unsigned char key[32] = { 3 };
	secbuf_sealed *s = secbuf_seal(key, sizeof(key), *(unsigned *)arg);

	/* A stray write into the handle (the first byte: its check). */
	((volatile unsigned char *)s)[0] ^= 1;
	secbuf_sealed_size(s);
}

START_TEST(seal_misuse_aborts)
{
	static const struct {
		void (*fn)(void *);
		const char *says;
	} cases[] = {
		{ double_free, "secbuf_sealed_free(0x" },
		{ double_free, "): double free of a sealed secret" },
		{ use_after_free, "secbuf_sealed_open(0x" },
		{ use_after_free, "): use of a freed sealed secret" },
		{ foreign_handle, "): not a sealed secret (a foreign pointer)" },
		{ interior_handle, "secbuf_sealed_use(0x" },
		{ interior_handle, "): points inside a sealed secret, not at one" },
		{ corrupted_handle, "secbuf_sealed_size(0x" },
		{ corrupted_handle, "): sealed secret corrupted: its check does not match" },
	};
	unsigned flags = seal_flags(0);
	char msg[1024];
	size_t i;
	int st;

	sbt_need_method();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		st = sbt_child(cases[i].fn, &flags, msg, sizeof(msg));
		ck_assert_msg(sbt_signalled(st, SIGABRT), "case %zu: status %#x, %s", i, st, msg);
		ck_assert_msg(!strncmp(msg, "libsecbuf-seal: ", 16) && strstr(msg, cases[i].says),
			      "case %zu: \"%s\" not in \"%s\"", i, cases[i].says, msg);
	}
}
END_TEST

START_TEST(seal_stat_counts)
{
	struct secbuf_seal_stat st0, st1;
	unsigned char key[100] = { 4 };
	secbuf_sealed *s;

	sbt_need_method();
	ck_assert_int_eq(secbuf_seal_stat(&st0), 0);
	s = secbuf_seal(key, sizeof(key), seal_flags(0));
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(secbuf_seal_stat(&st1), 0);
	ck_assert_uint_eq(st1.sealed, st0.sealed + 1);
	ck_assert_uint_eq(st1.bytes, st0.bytes + 100);
	ck_assert_uint_eq(st1.sealed_bytes, st0.sealed_bytes + 16 + 24 + 100 + 16);
	ck_assert_uint_eq(secbuf_sealed_export(s, NULL, 0), 156);
	ck_assert_int_ge(st1.prekey_method, 0);
	secbuf_sealed_free(s);
	ck_assert_int_eq(secbuf_seal_stat(&st1), 0);
	ck_assert_uint_eq(st1.sealed, st0.sealed);
	ck_assert_uint_eq(st1.bytes, st0.bytes);
	ck_assert_uint_eq(st1.sealed_bytes, st0.sealed_bytes);
}
END_TEST

const struct sbt_test seal_api_tests[] = {
	SBT(seal_round_trip),
	SBT(seal_wipes_plaintext),
	SBT(seal_fill_round_trip),
	SBT(seal_tamper_small),
	SBT(seal_tamper_chunks),
	SBT(seal_closures_free_what_they_open),
	SBT(seal_fork_child_cannot_open),
	SBT(seal_inherit_child_opens),
	SBT(seal_fork_during_open),
	SBT(seal_rekey_from_threads),
	SBT(seal_fork_while_opening),
	SBT(seal_bad_input),
	SBT(seal_other_process_fails),
	SBT(seal_misuse_aborts),
	SBT(seal_stat_counts),
	SBT_END,
};

int main(int argc, char **argv)
{
	static const struct sbt_test *const groups[] = { seal_api_tests, seal_memory_tests, NULL };
	static const struct sbt_mode modes[] = {
		{ "--seal-fallback", seal_fallback_main },
		{ "--seal-room", seal_room_main },
		{ "--seal-budget", seal_budget_main },
		{ "--seal-partial-read", seal_partial_read_main },
		{ NULL, NULL },
	};

	return sbt_main(argc, argv, "libsecbuf-seal", groups, modes);
}
