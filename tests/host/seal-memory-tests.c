/*
 * Where libsecbuf-seal keeps what matters, each case in a fresh process:
 * the prekey in secret memory, or (memfd_secret refused) in locked memory
 * with one line said; the secret tier refused before RLIMIT_MEMLOCK would
 * be passed (on Debian's kernels a touch past it is SIGBUS); the budget
 * proof as nobody under 64 KiB of RLIMIT_MEMLOCK (100,000 sealed keys and
 * a sealed 256 MiB secret, all opened and checked, locked); and a partial
 * read of the prekey with 0.1% of its bits wrong, which opens nothing,
 * against plaintext read as badly, which an attacker mostly recovers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sodium.h>
#include <secbuf-seal.h>
#include "kfacts.h"
#include "seal-tests.h"

#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447 /* the same on x86_64 and arm64 */
#endif

/* Fresh processes without secret memory, as a kernel without it answers. */
static const struct sbt_deny no_secretmem[] = {
	{ SYS_memfd_secret, -1, 0, 0, ENOSYS },
};

/* Exit n from a mode, saying why on stderr for the parent's message. */
__attribute__((format(printf, 2, 3))) static int mode_fail(int n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return n;
}

static int locked(const void *p)
{
	struct secbuf_stat st;

	return secbuf_stat(p, &st) == 0 && st.lock_method != SECBUF_LOCK_NONE &&
	       st.locked_pages > 0;
}

static int method_of(const void *p)
{
	struct secbuf_stat st;

	return secbuf_stat(p, &st) == 0 ? st.lock_method : -1;
}

static int prekey_method(void)
{
	struct secbuf_seal_stat st;

	return secbuf_seal_stat(&st) == 0 ? st.prekey_method : -2;
}

/* The lines libsecbuf-seal said on stderr. */
static int said(const char *msg)
{
	int n = 0;

	for (; (msg = strstr(msg, "libsecbuf-seal: ")) != NULL; msg++)
		n++;
	return n;
}

/* Run a mode; with what, its stderr's last line as a "# REPORT:" line of the TAP. */
static void run_mode(const struct sbt_self *se, char *msg, size_t len, const char *what)
{
	int st = sbt_run_self(se, msg, len);
	char *last = msg + strlen(msg);

	while (last > msg && last[-1] == '\n')
		*--last = 0;
	while (last > msg && last[-1] != '\n')
		last--;
	if (what)
		printf("# REPORT: %s (%s): %s\n", what, secbuf_lock_method_name(sbt_method()),
		       last);

	ck_assert_msg(sbt_exited_ok(st), "%s: status %#x (exit %d = failed step) %s", se->mode, st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}

static secbuf_sealed *seal_pattern_as(size_t n, size_t i, unsigned flags)
{
	unsigned char *p = malloc(n);
	secbuf_sealed *s;

	if (!p)
		return NULL;
	seal_pattern(p, n, i, 0);
	s = secbuf_seal(p, n, flags);
	free(p);
	return s;
}

static int opens_as(const secbuf_sealed *s, size_t i)
{
	size_t n = secbuf_sealed_size(s);
	unsigned char *want = malloc(n), *p = secbuf_sealed_open(s);
	int ok = want && p && (seal_pattern(want, n, i, 0), !memcmp(p, want, n));

	free(want);
	secbuf_free(p);
	return ok;
}

START_TEST(seal_prekey_in_secret_memory)
{
	struct secbuf_seal_stat st;
	unsigned char key[32] = { 5 };
	secbuf_sealed *s;
	int found = 0;
	FILE *f;
	char line[512];

	sbt_need_method();
	sbt_need_secretmem();
	s = secbuf_seal(key, sizeof(key), seal_flags(0));
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(secbuf_seal_stat(&st), 0);
	ck_assert_int_eq(st.prekey_method, SECBUF_LOCK_SECRETMEM);
	f = fopen("/proc/self/maps", "re");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		found += strstr(line, " /secretmem") != NULL;
	fclose(f);
	ck_assert_int_ge(found, 1);
	secbuf_sealed_free(s);
}
END_TEST

/*
 * The prekey's secret-tier mapping cannot be read from outside the
 * process's own page tables, by root neither: /proc/PID/mem and
 * process_vm_readv() both fail on it, where they read a lock-on-fault
 * secbuf buffer (the control) without trouble.
 */
static int read_by_proc_mem(const void *at, void *out, size_t n)
{
	int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd < 0 ? -1 : pread(fd, out, n, (off_t)(uintptr_t)at);

	if (fd >= 0)
		close(fd);
	return got == (ssize_t)n ? 0 : -1;
}

static int read_by_vm_readv(const void *at, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)at, n };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

START_TEST(seal_prekey_unreadable_from_outside)
{
	unsigned char key[32] = { 7 }, out[64];
	unsigned char *control;
	uintptr_t lo = 0, hi = 0;
	secbuf_sealed *s;
	char line[512];
	FILE *f;

	sbt_need_method();
	sbt_need_secretmem();
	s = secbuf_seal(key, sizeof(key), seal_flags(0));
	ck_assert_ptr_nonnull(s);
	f = fopen("/proc/self/maps", "re");
	ck_assert_ptr_nonnull(f);
	while (!lo && fgets(line, sizeof(line), f))
		if (strstr(line, " /secretmem") && sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			lo = 0;
	fclose(f);
	ck_assert_msg(lo && hi - lo >= sizeof(out), "no /secretmem mapping of the prekey");
	errno = 0;
	ck_assert_msg(read_by_proc_mem((void *)lo, out, sizeof(out)) < 0,
		      "/proc/self/mem read the prekey's secret memory");
	ck_assert_msg(read_by_vm_readv((void *)lo, out, sizeof(out)) < 0,
		      "process_vm_readv() read the prekey's secret memory");
	/* The control: the same reads of a secbuf buffer succeed, and see its bytes. */
	control = secbuf_alloc_flags(sizeof(out), sbt_flags(0));
	ck_assert_ptr_nonnull(control);
	memset(control, 0x3c, sizeof(out));
	ck_assert_int_eq(read_by_proc_mem(control, out, sizeof(out)), 0);
	ck_assert_int_eq(out[0], 0x3c);
	memset(out, 0, sizeof(out));
	ck_assert_int_eq(read_by_vm_readv(control, out, sizeof(out)), 0);
	ck_assert_int_eq(out[sizeof(out) - 1], 0x3c);
	secbuf_free(control);
	secbuf_sealed_free(s);
}
END_TEST

/* Under memfd_secret refused: the prekey in the process's locked memory, said once. */
int seal_fallback_main(void)
{
	unsigned flags = seal_flags_fresh(0);
	int method = secbuf_lock_method(), i;
	secbuf_sealed *s[3];

	for (i = 0; i < 3; i++) {
		s[i] = seal_pattern_as(32, i, flags);
		if (!s[i] || !opens_as(s[i], i))
			return mode_fail(2, "seal %d: %s", i, strerror(errno));
	}
	if (secbuf_seal_rekey() < 0)
		return mode_fail(3, "rekey: %s", strerror(errno));
	for (i = 0; i < 3; i++)
		if (!opens_as(s[i], i))
			return mode_fail(4, "open %d after rekey: %s", i, strerror(errno));
	if (prekey_method() != method)
		return mode_fail(5, "prekey in %d, the process's method is %d", prekey_method(),
				 method);
	for (i = 0; i < 3; i++)
		secbuf_sealed_free(s[i]);
	return 0;
}

START_TEST(seal_prekey_fallback_said_once)
{
	struct sbt_self se = { "--seal-fallback", NULL, no_secretmem, 1, NULL, NULL };
	char msg[2048];

	sbt_need_method();
	run_mode(&se, msg, sizeof(msg), NULL);
	ck_assert_msg(said(msg) == 1 && strstr(msg, "not secret memory: memfd_secret: ENOSYS"),
		      "not one line naming ENOSYS: %s", msg);
}
END_TEST

/*
 * As root (the kernel would charge nothing) under 64 KiB of RLIMIT_MEMLOCK,
 * with 48 KiB of secret memory taken: neither the prekey nor an opened
 * buffer goes to secret memory past the limit; once it is freed, both do.
 */
int seal_room_main(void)
{
	unsigned flags = seal_flags_fresh(0);
	unsigned char *other = secbuf_alloc_flags(48 * 1024, SECBUF_SECRET), *p;
	secbuf_sealed *small, *strict, *lenient;

	if (!other)
		return mode_fail(2, "48 KiB of secret memory: %s", strerror(errno));
	memset(other, 1, 48 * 1024);
	small = seal_pattern_as(32, 1, flags);
	if (!small || !opens_as(small, 1))
		return mode_fail(3, "seal: %s", strerror(errno));
	if (prekey_method() == SECBUF_LOCK_SECRETMEM)
		return mode_fail(4, "the prekey went to secret memory past the limit");
	lenient = seal_pattern_as(32768, 3, SECBUF_SECRET | SECBUF_BEST_EFFORT);
	if (!lenient)
		return mode_fail(5, "seal 32 KiB, best effort: %s", strerror(errno));
	p = secbuf_sealed_open(lenient);
	if (!p || method_of(p) == SECBUF_LOCK_SECRETMEM)
		return mode_fail(6, "best effort: %p, method %d", (void *)p, p ? method_of(p) : -1);
	secbuf_free(p);
	secbuf_free(other);
	strict = seal_pattern_as(32768, 2, SECBUF_SECRET);
	if (!strict)
		return mode_fail(7, "seal 32 KiB with room: %s", strerror(errno));
	other = secbuf_alloc_flags(48 * 1024, SECBUF_SECRET);
	if (!other)
		return mode_fail(8, "48 KiB of secret memory again: %s", strerror(errno));
	memset(other, 1, 48 * 1024);
	errno = 0;
	p = secbuf_sealed_open(strict);
	if (p || errno != EAGAIN)
		return mode_fail(9, "open into secret memory past the limit: %p, %s", (void *)p,
				 strerror(errno));
	secbuf_free(other);
	p = secbuf_sealed_open(strict);
	if (!p || method_of(p) != SECBUF_LOCK_SECRETMEM)
		return mode_fail(10, "open with room: %p, method %d", (void *)p,
				 p ? method_of(p) : -1);
	secbuf_free(p);
	if (secbuf_seal_rekey() < 0 || prekey_method() != SECBUF_LOCK_SECRETMEM ||
	    !opens_as(small, 1) || !opens_as(strict, 2) || !opens_as(lenient, 3))
		return mode_fail(11, "rekey with room: %s, prekey in %d", strerror(errno),
				 prekey_method());
	secbuf_sealed_free(small);
	secbuf_sealed_free(strict);
	secbuf_sealed_free(lenient);
	return 0;
}

static void memlock_64k(void)
{
	struct rlimit rl = { 64 * 1024, 64 * 1024 };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		_exit(124);
}

START_TEST(seal_secret_room)
{
	struct sbt_self se = { "--seal-room", NULL, NULL, 0, NULL, memlock_64k };
	char msg[2048];

	sbt_need_method();
	sbt_need_root();
	sbt_need_secretmem();
	run_mode(&se, msg, sizeof(msg), NULL);
	ck_assert_msg(said(msg) == 1 && strstr(msg, "memfd_secret: EAGAIN: RLIMIT_MEMLOCK"),
		      "not one line naming EAGAIN: %s", msg);
}
END_TEST

#define BUDGET_KEYS 100000
#define BUDGET_BIG  (256 * MiB)

struct big_check {
	crypto_generichash_state h;
	size_t bytes;
	int unlocked;
};

static int fill_big(void *chunk, size_t n, size_t offset, void *arg)
{
	struct big_check *b = arg;

	seal_pattern(chunk, n, 1, offset);
	crypto_generichash_update(&b->h, chunk, n);
	b->bytes += n;
	b->unlocked += !locked(chunk);
	return 0;
}

static int check_big(void *chunk, size_t n, size_t offset, void *arg)
{
	struct big_check *b = arg;

	(void)offset;
	crypto_generichash_update(&b->h, chunk, n);
	b->bytes += n;
	b->unlocked += !locked(chunk);
	return 0;
}

static int check_key(void *key, size_t n, void *arg)
{
	unsigned char want[32];

	seal_pattern(want, sizeof(want), *(size_t *)arg + 1000, 0);
	if (n != sizeof(want) || memcmp(key, want, n))
		return 1;
	return locked(key) ? 0 : 2;
}

/*
 * As nobody under 64 KiB of RLIMIT_MEMLOCK, strict (no best effort): all
 * live at once, each opened and checked, every buffer handed out locked,
 * no allocation refused.  Exit code = failed step.
 */
int seal_budget_main(void)
{
	secbuf_sealed **keys = calloc(BUDGET_KEYS, sizeof(*keys)), *big;
	struct big_check in = { .bytes = 0 }, out = { .bytes = 0 };
	unsigned char key[32], h_in[32], h_out[32];
	struct secbuf_seal_stat st;
	char why[600];
	size_t i;
	int r;

	if (!keys)
		return mode_fail(2, "calloc");
	for (i = 0; i < BUDGET_KEYS; i++) {
		seal_pattern(key, sizeof(key), i + 1000, 0);
		keys[i] = secbuf_seal(key, sizeof(key), 0);
		if (!keys[i]) {
			secbuf_last_failure(why, sizeof(why));
			return mode_fail(3, "seal %zu: %s (%s)", i, strerror(errno), why);
		}
	}
	crypto_generichash_init(&in.h, NULL, 0, sizeof(h_in));
	big = secbuf_seal_fill(BUDGET_BIG, fill_big, &in, 0);
	if (!big) {
		secbuf_last_failure(why, sizeof(why));
		return mode_fail(4, "seal 256 MiB: %s (%s)", strerror(errno), why);
	}
	crypto_generichash_final(&in.h, h_in, sizeof(h_in));
	if (secbuf_seal_stat(&st) < 0 || st.sealed != BUDGET_KEYS + 1 ||
	    st.prekey_method == SECBUF_LOCK_NONE || in.unlocked)
		return mode_fail(5, "%zu sealed, prekey in %d, %d unlocked chunks", st.sealed,
				 st.prekey_method, in.unlocked);
	for (i = 0; i < BUDGET_KEYS; i++) {
		r = secbuf_sealed_use(keys[i], check_key, &i);
		if (r) {
			secbuf_last_failure(why, sizeof(why));
			return mode_fail(6, "key %zu: %s", i,
					 r == 1 ? "other bytes" :
					 r == 2 ? "opened unlocked" :
						  strerror(errno));
		}
	}
	crypto_generichash_init(&out.h, NULL, 0, sizeof(h_out));
	r = secbuf_sealed_each(big, check_big, &out);
	if (r) {
		secbuf_last_failure(why, sizeof(why));
		return mode_fail(7, "open 256 MiB: %d, %s (%s)", r, strerror(errno), why);
	}
	crypto_generichash_final(&out.h, h_out, sizeof(h_out));
	if (out.bytes != BUDGET_BIG || memcmp(h_in, h_out, sizeof(h_in)) || out.unlocked)
		return mode_fail(8, "256 MiB: %zu bytes, %s, %d unlocked chunks", out.bytes,
				 memcmp(h_in, h_out, sizeof(h_in)) ? "other bytes" : "same bytes",
				 out.unlocked);
	fprintf(stderr, "prekey in %s, VmLck %ld kB\n", secbuf_lock_method_name(st.prekey_method),
		proc_field_kb("/proc/self/status", "VmLck"));
	for (i = 0; i < BUDGET_KEYS; i++)
		secbuf_sealed_free(keys[i]);
	secbuf_sealed_free(big);
	free(keys);
	return 0;
}

static void nobody_64k(void)
{
	memlock_64k();
	if (setgid(65534) < 0 || setuid(65534) < 0)
		_exit(124);
}

START_TEST(seal_budget_as_nobody)
{
	struct sbt_self se = { "--seal-budget", NULL, NULL, 0, NULL, nobody_64k };
	char msg[2048];

	sbt_need_method();
	sbt_need_root();
	sbt_need_no_valgrind("a minute under valgrind; its mappings count against RLIMIT_MEMLOCK");
	if (getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the budget is RLIMIT_MEMLOCK's, not the method's");
	run_mode(&se, msg, sizeof(msg), "100,000 sealed keys and 256 MiB as nobody, 64 KiB");
}
END_TEST

#define READ_KEYS 64
#define SEALED_32 (16 + 24 + 32 + 16)

/*
 * The attacker's side, from the layout secbuf_seal(3) documents: the key
 * from a prekey image and the salt, then chunk 0.  1 if it opens to want.
 */
static int attack(const unsigned char *prekey, const unsigned char *blob, const unsigned char *want)
{
	static const unsigned char personal[16] = "secbuf-seal v1";
	unsigned char key[32], ad[24] = { 0 }, out[32];
	int ok;

	crypto_generichash_blake2b_salt_personal(key, sizeof(key), prekey, SECBUF_SEAL_PREKEY, NULL,
						 0, blob + 16, personal);
	memcpy(ad, blob, 16);
	ok = crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
		     out, NULL, blob + 40, 32, blob + 72, ad, sizeof(ad), blob + 16, key) == 0 &&
	     !memcmp(out, want, sizeof(out));
	sodium_memzero(key, sizeof(key));
	return ok;
}

/* Flip a share of 1/1000 of the n bytes' bits, at distinct random places. */
static void flip_bits(unsigned char *p, size_t n)
{
	size_t bits = n * 8, want = bits / 1000, done = 0;
	unsigned char *hit = calloc(bits, 1);

	if (!hit)
		abort(); /* a mode's: check's asserts are for tests */
	while (done < want) {
		size_t b = randombytes_uniform((uint32_t)bits);

		if (hit[b])
			continue;
		hit[b] = 1;
		p[b / 8] ^= (unsigned char)(1u << (b % 8));
		done++;
	}
	free(hit);
}

/*
 * The secbuf mappings (not dumped, wiped on fork: VmFlags dd and wf; their
 * names need CONFIG_ANON_VMA_NAME) the size of the prekey's data pages.
 */
struct candidates {
	size_t len;
	unsigned char *at[8];
	int n;
};

static int find_prekey(const struct smaps_vma *v, void *arg)
{
	struct candidates *c = arg;

	if (vmflag_has(v, "dd") && vmflag_has(v, "wf") && !strncmp(v->perms, "rw", 2) &&
	    v->end - v->start == c->len && c->n < 8)
		c->at[c->n++] = (unsigned char *)v->end - SECBUF_SEAL_PREKEY;
	return 0;
}

static int recovered(const unsigned char *prekey, unsigned char (*blobs)[SEALED_32],
		     unsigned char (*keys)[32])
{
	int i, n = 0;

	for (i = 0; i < READ_KEYS; i++)
		n += attack(prekey, blobs[i], keys[i]);
	return n;
}

/*
 * A key read with a few bits wrong is still had by whoever can test a
 * guess (against a public key, a MAC it made): every one-bit correction.
 */
static int guessed(const unsigned char *read, const unsigned char *truth)
{
	unsigned char try[32], h[16], want[16];
	int b;

	crypto_generichash(want, sizeof(want), truth, 32, NULL, 0);
	for (b = -1; b < 256; b++) {
		memcpy(try, read, sizeof(try));
		if (b >= 0)
			try[b / 8] ^= (unsigned char)(1u << (b % 8));
		crypto_generichash(h, sizeof(h), try, sizeof(try), NULL, 0);
		if (!memcmp(h, want, sizeof(h)))
			return 1;
	}
	return 0;
}

/*
 * Under memfd_secret refused, so that the prekey is in an ordinary
 * (locked) secbuf buffer this process can read: its image and the sealed
 * bytes with 0.1% of their bits wrong open no secret, where a perfect image
 * opens all; the same keys unsealed, read as badly, are mostly recovered.
 * Exit code = failed step; the counts go to stderr.
 */
int seal_partial_read_main(void)
{
	static unsigned char keys[READ_KEYS][32], blobs[READ_KEYS][SEALED_32],
		image[SECBUF_SEAL_PREKEY + sizeof(blobs)], plain[sizeof(keys)];
	size_t page = sbt_page();
	struct candidates c = { (SECBUF_SEAL_PREKEY + 16 + page - 1) / page * page, { 0 }, 0 };
	unsigned char *prekey = NULL, *sealed = image + SECBUF_SEAL_PREKEY;
	secbuf_sealed *s[READ_KEYS];
	int i, sealed_ok, prekey_ok, plain_ok = 0;

	for (i = 0; i < READ_KEYS; i++) {
		seal_pattern(keys[i], 32, 500 + i, 0);
		memcpy(plain + 32 * i, keys[i], 32);
		s[i] = seal_pattern_as(32, 500 + i, seal_flags_fresh(0));
		if (!s[i] || secbuf_sealed_export(s[i], blobs[i], SEALED_32) != SEALED_32)
			return mode_fail(2, "seal %d: %s", i, strerror(errno));
	}
	if (prekey_method() == SECBUF_LOCK_SECRETMEM)
		return mode_fail(3, "the prekey is in secret memory: nothing to read");
	if (smaps_each(0, find_prekey, &c) < 0)
		return mode_fail(4, "smaps: %s", strerror(errno));
	/* The image that opens everything is the prekey: the attack works, so this can fail. */
	for (i = 0; i < c.n && !prekey; i++)
		if (recovered(c.at[i], blobs, keys) == READ_KEYS)
			prekey = c.at[i];
	if (!prekey)
		return mode_fail(5, "no exact image opens the secrets (%d candidates)", c.n);
	memcpy(image, prekey, SECBUF_SEAL_PREKEY);
	memcpy(sealed, blobs, sizeof(blobs));
	flip_bits(image, sizeof(image));
	sealed_ok = recovered(image, (unsigned char(*)[SEALED_32])sealed, keys);
	/* Only the prekey read badly, the sealed bytes intact: still nothing. */
	memcpy(image, prekey, SECBUF_SEAL_PREKEY);
	flip_bits(image, SECBUF_SEAL_PREKEY);
	prekey_ok = recovered(image, blobs, keys);
	flip_bits(plain, sizeof(plain));
	for (i = 0; i < READ_KEYS; i++)
		plain_ok += guessed(plain + 32 * i, keys[i]);
	fprintf(stderr,
		"0.1%% of bits wrong: %d/%d sealed keys opened (%d with the sealed bytes "
		"intact), %d/%d unsealed keys recovered\n",
		sealed_ok, READ_KEYS, prekey_ok, plain_ok, READ_KEYS);
	if (sealed_ok || prekey_ok)
		return mode_fail(6, "a key opened from a damaged prekey image");
	/* 16 flips over 64 keys: a key keeps at most one in all but a few draws. */
	if (plain_ok < READ_KEYS * 3 / 4)
		return mode_fail(7, "the unsealed control was not recovered");
	for (i = 0; i < READ_KEYS; i++)
		secbuf_sealed_free(s[i]);
	return 0;
}

START_TEST(seal_partial_read)
{
	struct sbt_self se = { "--seal-partial-read", NULL, no_secretmem, 1, NULL, NULL };
	char msg[2048];

	sbt_need_method();
	run_mode(&se, msg, sizeof(msg), "partial read");
}
END_TEST

const struct sbt_test seal_memory_tests[] = {
	SBT(seal_prekey_in_secret_memory),
	SBT(seal_prekey_unreadable_from_outside),
	SBT(seal_prekey_fallback_said_once),
	SBT(seal_secret_room),
	SBT(seal_budget_as_nobody),
	SBT(seal_partial_read),
	SBT_END,
};
