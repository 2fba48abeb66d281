/*
 * libsecbuf-openssl.so under misuse and refusal: a pointer that is not
 * ours goes to libcrypto's CRYPTO_free(), misuse aborts with libsecbuf's
 * message, and a refused lock (nobody under a 64 KiB RLIMIT_MEMLOCK, or
 * a seccomp filter on mlock2) gives one warning, or with SECBUF_STRICT=1
 * a NULL, never silently unlocked keys.  Either way the drop-in says why,
 * with the cause the kernel gave (a packed secret's whole slab against
 * the limit, the secret tier's limit apart from its absence), since
 * OpenSSL says only "malloc failure".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include "openssl-tests.h"

#ifndef MAP_LOCKONFAULT
#define MAP_LOCKONFAULT 0x400000
#endif

/* libcrypto's allocator, replaced before its first use: frees are counted. */
static int frees;

static void *count_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return malloc(n);
}

static void *count_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return realloc(p, n);
}

static void count_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	if (p)
		frees++;
	free(p);
}

/* OPENSSL_malloc memory through the drop-in's frees reaches CRYPTO_free. */
int ossl_foreign_free_main(void)
{
	void *a, *b;

	if (!CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free))
		return 2;
	a = OPENSSL_malloc(100);
	b = OPENSSL_malloc(100);
	if (!a || !b || CRYPTO_secure_allocated(a))
		return 3;
	OPENSSL_secure_free(a);
	if (frees != 1)
		return 4;
	OPENSSL_secure_clear_free(b, 100);
	return frees == 2 ? 0 : 5;
}

/*
 * A large secure buffer maps only the start of its 256 KiB block; the
 * kernel may place anyone's mapping in the rest (red team: glibc's 200
 * KiB chunks landed there 40 times of 40).  Such a pointer is not ours:
 * CRYPTO_secure_free() and _clear_free() give it to CRYPTO_free(), never
 * abort.  Here the foreign memory is put there on purpose: libcrypto's
 * allocator is replaced by one that maps its next block at a given place.
 */
#define BLOCK	((uintptr_t)1 << 18) /* libsecbuf's SB_BLOCK_SHIFT */
#define FOREIGN (16 * 1024)
static uintptr_t place_in; /* the next OPENSSL_malloc() maps in this block, or 0: malloc */
static void *placed[2];

/* FOREIGN bytes mapped anywhere free in the block, from its top down. */
static void *map_in_block(uintptr_t block)
{
	for (uintptr_t at = block + BLOCK - FOREIGN; at > block; at -= sbt_page()) {
		void *p = mmap((void *)at, FOREIGN, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p != MAP_FAILED)
			return p;
	}
	return NULL;
}

static void *placing_malloc(size_t n, const char *file, int line)
{
	uintptr_t block = place_in;

	(void)file;
	(void)line;
	place_in = 0;
	return block ? map_in_block(block) : malloc(n);
}

static void placing_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	if (p && (p == placed[0] || p == placed[1])) {
		frees++;
		munmap(p, FOREIGN);
		return;
	}
	free(p);
}

int ossl_foreign_in_block_main(void)
{
	unsigned char *large;
	uintptr_t block;

	if (!CRYPTO_set_mem_functions(placing_malloc, count_realloc, placing_free))
		return 2;
	large = OPENSSL_secure_malloc(1000);
	if (!large)
		return 3;
	block = (uintptr_t)large & ~(BLOCK - 1);
	for (int i = 0; i < 2; i++) {
		place_in = block;
		placed[i] = OPENSSL_malloc(FOREIGN);
		if (!placed[i] || ((uintptr_t)placed[i] & ~(BLOCK - 1)) != block) {
			fprintf(stderr, "no room for %d bytes in the block at %p\n", FOREIGN,
				(void *)block);
			return 4;
		}
		memset(placed[i], 0x5a, FOREIGN);
		if (CRYPTO_secure_allocated(placed[i]))
			return 5;
	}
	OPENSSL_secure_free(placed[0]);
	OPENSSL_secure_clear_free(placed[1], FOREIGN);
	if (frees != 2)
		return 6;
	/* The buffer itself is still ours, alive, and freed as such. */
	if (!CRYPTO_secure_allocated(large))
		return 7;
	OPENSSL_secure_free(large);
	return 0;
}

/*
 * The same as it happens: large secure buffers, then OPENSSL_malloc()s of
 * 200 KiB (glibc maps each; so does jemalloc, preloaded), all freed
 * through the secure calls.  Exit 0, and "landed N" on stderr: how many
 * foreign chunks fell in a secure buffer's block.
 */
int ossl_foreign_large_chunks_main(void)
{
	enum { N = 40 };
	void *sec[N], *plain[N];
	int landed = 0;

	for (int i = 0; i < N; i++) {
		sec[i] = OPENSSL_secure_malloc(1000);
		plain[i] = OPENSSL_malloc(200 * 1024);
		if (!sec[i] || !plain[i])
			return 2;
		memset(plain[i], 0x5a, 200 * 1024);
		if (CRYPTO_secure_allocated(plain[i]))
			return 3;
	}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			landed += ((uintptr_t)plain[i] & ~(BLOCK - 1)) ==
				  ((uintptr_t)sec[j] & ~(BLOCK - 1));
	for (int i = 0; i < N; i++) {
		if (i % 2)
			OPENSSL_secure_free(plain[i]);
		else
			OPENSSL_secure_clear_free(plain[i], 200 * 1024);
		OPENSSL_secure_free(sec[i]);
	}
	fprintf(stderr, "landed %d of %d\n", landed, N);
	return 0;
}

START_TEST(foreign_pointer_in_a_large_buffers_block)
{
	const struct sbt_self se = { .mode = "--foreign-in-block" };
	char msg[1024];
	int st;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

/* glibc's own large chunks, then jemalloc's (an mmap-based allocator), preloaded. */
START_TEST(foreign_large_chunks_glibc_and_jemalloc)
{
	static const char jemalloc[] = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
	const char *preload = getenv("LD_PRELOAD");
	char env[1024], msg[1024];
	struct sbt_self se = { .mode = "--foreign-large-chunks" };
	int st;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "glibc: status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	printf("# REPORT: glibc's 200 KiB chunks through the secure frees: %s", msg);
	ck_assert_msg(access(jemalloc, R_OK) == 0,
		      "%s: %s (Debian's libjemalloc2, .ci/deps openssl)", jemalloc,
		      strerror(errno));
	snprintf(env, sizeof(env), "LD_PRELOAD=%s%s%s", preload ? preload : "", preload ? " " : "",
		 jemalloc);
	se.env = env;
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "jemalloc: status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	printf("# REPORT: jemalloc's 200 KiB extents through the secure frees: %s", msg);
}
END_TEST

START_TEST(foreign_pointers_go_to_crypto_free)
{
	const struct sbt_self se = { .mode = "--foreign-free" };
	char msg[1024];
	int st = sbt_run_self(&se, msg, sizeof(msg));

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

enum misuse {
	DOUBLE_FREE_SMALL,
	DOUBLE_FREE_LARGE,
	INTERIOR_SMALL,
	INTERIOR_LARGE,
	FREE_UNMAPPED,
	ACTUAL_SIZE_FOREIGN,
	OVERFLOW_SMALL,
};

static void misuse(void *arg)
{
	unsigned char *small = OPENSSL_secure_malloc(40), *large = OPENSSL_secure_malloc(9000);
	void *m;

	if (!small || !large)
		_exit(3);
	switch (*(enum misuse *)arg) {
	case DOUBLE_FREE_SMALL:
		OPENSSL_secure_free(small);
		OPENSSL_secure_free(small);
		break;
	case DOUBLE_FREE_LARGE:
		OPENSSL_secure_clear_free(large, 9000);
		OPENSSL_secure_free(large);
		break;
	case INTERIOR_SMALL:
		OPENSSL_secure_free(small + 8);
		break;
	case INTERIOR_LARGE:
		OPENSSL_secure_free(large + 5000);
		break;
	case FREE_UNMAPPED:
		m = mmap(NULL, 4 * sbt_page(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED || munmap(m, 4 * sbt_page()) < 0)
			_exit(3);
		OPENSSL_secure_clear_free((char *)m + 2 * sbt_page(), 16);
		break;
	case ACTUAL_SIZE_FOREIGN:
		CRYPTO_secure_actual_size(&m);
		break;
	case OVERFLOW_SMALL:
		small[40] ^= 0xff; /* the guard bytes after the class's padding */
		small[47] ^= 0xff;
		OPENSSL_secure_free(small);
		break;
	}
	_exit(0);
}

START_TEST(misuse_aborts_with_a_message)
{
	static const struct {
		enum misuse kind;
		const char *says;
	} cases[] = {
		{ DOUBLE_FREE_SMALL, "double free" },
		{ DOUBLE_FREE_LARGE, "CRYPTO_secure_free(0x" },
		{ INTERIOR_SMALL, "inside the live buffer" },
		{ INTERIOR_LARGE, "inside the live buffer" },
		{ FREE_UNMAPPED, "CRYPTO_secure_clear_free(0x" },
		{ ACTUAL_SIZE_FOREIGN, "not a live secbuf buffer" },
		{ OVERFLOW_SMALL, "CRYPTO_secure_free" },
	};
	char msg[1024], fails[2048] = "";
	size_t i;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum misuse kind = cases[i].kind;
		int st = sbt_child(misuse, &kind, msg, sizeof(msg));

		if (!sbt_signalled(st, SIGABRT) || !strstr(msg, cases[i].says) ||
		    !strstr(msg, "libsecbuf") || strstr(msg, "CRYPTO_free(") ||
		    strstr(msg, "CRYPTO_clear_free("))
			sbt_note(fails, sizeof(fails), "case %zu: status %#x, expected \"%s\": %s",
				 i, st, cases[i].says, msg);
	}
	ck_assert_msg(!*fails, "%s", fails);
}
END_TEST

/* Keys and buffers under a refused lock; exit code = failed step. */
int ossl_refused_main(void)
{
	void *p[40];
	EVP_PKEY *k;
	int i;

	for (i = 0; i < 40; i++) /* 40 x 8 KiB: well past 64 KiB */
		if (!(p[i] = OPENSSL_secure_zalloc(8192)))
			return 2;
	k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!k)
		return 3;
	EVP_PKEY_free(k);
	for (i = 0; i < 40; i++)
		OPENSSL_secure_free(p[i]);
	return 0;
}

/* Strict: the allocation past the limit fails, nothing unlocked is handed out. */
int ossl_strict_main(void)
{
	void *p[40];
	int i;

	for (i = 0; i < 40; i++) {
		errno = 0;
		p[i] = OPENSSL_secure_malloc(8192);
		if (!p[i])
			break;
	}
	if (i == 40 || (errno != EAGAIN && errno != ENOMEM && errno != EPERM))
		return 2;
	while (i-- > 0)
		OPENSSL_secure_free(p[i]);
	return 0;
}

/* Two packed secrets: handed out (exit 0), or strict, both refused (exit their errno). */
int ossl_packed_main(void)
{
	const char *strict = getenv("SECBUF_STRICT");
	void *p, *q;
	int err;

	errno = 0;
	p = OPENSSL_secure_malloc(32);
	err = errno;
	q = OPENSSL_secure_malloc(32);
	if (strict && *strict)
		return p || q ? 100 : err;
	if (!p || !q)
		return 2;
	OPENSSL_secure_free(p);
	OPENSSL_secure_free(q);
	return 0;
}

static void nobody_64k(void)
{
	struct rlimit rl = { 64 * 1024, 64 * 1024 };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(120);
	unsetenv("SECBUF_LOCK");
}

static void no_forced_method(void)
{
	unsetenv("SECBUF_LOCK");
}

static const struct sbt_deny no_mlock2[] = {
	{ SYS_mlock2, -1, 0, 0, EPERM },
	{ SYS_mmap, 3, MAP_LOCKONFAULT, MAP_LOCKONFAULT, EPERM },
};

static void expect_refusal_handled(const struct sbt_self *warn, const struct sbt_self *strict)
{
	char msg[2048];
	int st;

	st = sbt_run_self(warn, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	ck_assert_msg(ossl_count(msg, "warning") == 1 && strstr(msg, "libsecbuf-openssl") &&
			      strstr(msg, "NOT locked") && strstr(msg, "SECBUF_STRICT=1"),
		      "expected one warning: %s", msg);
	st = sbt_run_self(strict, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "strict: status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	ck_assert_msg(!strstr(msg, "warning"), "strict mode warned: %s", msg);
}

START_TEST(refused_lock_as_nobody)
{
	const struct sbt_self warn = { .mode = "--refused", .before_exec = nobody_64k };
	const struct sbt_self strict = { .mode = "--strict",
					 .before_exec = nobody_64k,
					 .env = "SECBUF_STRICT=1" };

	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from RLIMIT_MEMLOCK");
	sbt_need_root();
	sbt_need_no_valgrind("valgrind's own mappings count against RLIMIT_MEMLOCK");
	expect_refusal_handled(&warn, &strict);
}
END_TEST

START_TEST(mlock2_refused_by_seccomp)
{
	const struct sbt_self warn = {
		.mode = "--refused", .deny = no_mlock2, .ndeny = 2, .before_exec = no_forced_method
	};
	const struct sbt_self strict = { .mode = "--strict",
					 .deny = no_mlock2,
					 .ndeny = 2,
					 .env = "SECBUF_STRICT=1",
					 .before_exec = no_forced_method };

	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from a seccomp filter");
	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	expect_refusal_handled(&warn, &strict);
}
END_TEST

/* A slab of packed secrets: 256 KiB with its two guard pages, which are not locked. */
static long slab_kb(void)
{
	return (long)((256 * 1024 - 2 * sbt_page()) / 1024);
}

/*
 * As nobody under 64 KiB: a 32-byte secret needs a 248 kB slab, which
 * the limit cannot hold.  The warning says that (the limit, the slab's
 * kB), not "a sandbox ... SystemCallFilter=@memlock"; strict, the
 * refusal is one line with the allocation's size.
 */
START_TEST(small_limit_names_the_slab)
{
	struct sbt_self se = { .mode = "--packed", .before_exec = nobody_64k };
	char msg[2048], need[64];
	int st;

	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from RLIMIT_MEMLOCK");
	sbt_need_root();
	sbt_need_no_valgrind("valgrind's own mappings count against RLIMIT_MEMLOCK");
	snprintf(need, sizeof(need), "%ld kB more were needed", slab_kb());
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit 2: not handed out): %s", st, msg);
	ck_assert_msg(ossl_count(msg, "warning") == 1 && strstr(msg, "NOT locked") &&
			      strstr(msg, "RLIMIT_MEMLOCK is 64 kB") && strstr(msg, need) &&
			      !strstr(msg, "sandbox") && !strstr(msg, "SystemCallFilter"),
		      "want the limit and %s: %s", need, msg);
	se.env = "SECBUF_STRICT=1";
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(WIFEXITED(st) && (WEXITSTATUS(st) == ENOMEM || WEXITSTATUS(st) == EAGAIN),
		      "strict: status %#x (want exit ENOMEM or EAGAIN): %s", st, msg);
	ck_assert_msg(ossl_count(msg, "\n") == 1 &&
			      strstr(msg, "CRYPTO_secure_malloc() of 32 bytes refused "
					  "(SECBUF_STRICT=1)") &&
			      strstr(msg, "RLIMIT_MEMLOCK is 64 kB") && strstr(msg, need) &&
			      strstr(msg, "LimitMEMLOCK=") && strstr(msg, "SECBUF_STRICT=0"),
		      "strict: want one line with the size, the limit and %s: %s", need, msg);
}
END_TEST

static void secret_nobody_64k(void)
{
	nobody_64k();
	setenv("SECBUF_SECRET", "1", 1);
}

/*
 * SECBUF_SECRET=1 on a kernel with secret memory, as nobody under 64
 * KiB: memfd_secret's mapping is over the limit (EAGAIN), which the
 * fallback's warning says, with the slab's kB, never "boot with
 * secretmem.enable=1"; strict, the one line says the same.
 */
START_TEST(secret_over_limit_is_the_limit)
{
	struct sbt_self se = { .mode = "--packed", .before_exec = secret_nobody_64k };
	char msg[2048], need[64];
	int st;

	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the secret tier takes no lock method");
	sbt_need_root();
	sbt_need_secretmem();
	sbt_need_no_valgrind("valgrind's own mappings count against RLIMIT_MEMLOCK");
	snprintf(need, sizeof(need), "%ld kB more were needed", slab_kb());
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit 2: not handed out): %s", st, msg);
	if (!strstr(msg, "NOT secret memory"))
		sbt_skip("this kernel charges memfd_secret to RLIMIT_MEMLOCK at first touch");
	ck_assert_msg(strstr(msg, "NOT secret memory (memfd_secret memory counts against "
				  "RLIMIT_MEMLOCK: RLIMIT_MEMLOCK is 64 kB") &&
			      strstr(msg, need) && !strstr(msg, "secretmem.enable"),
		      "want the limit and %s, not the boot option: %s", need, msg);
	se.env = "SECBUF_STRICT=1";
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == EAGAIN,
		      "strict: status %#x (want exit EAGAIN): %s", st, msg);
	ck_assert_msg(ossl_count(msg, "\n") == 1 &&
			      strstr(msg, "CRYPTO_secure_malloc() of 32 bytes refused "
					  "(SECBUF_STRICT=1, SECBUF_SECRET=1): memfd_secret memory "
					  "counts against RLIMIT_MEMLOCK") &&
			      strstr(msg, need) && !strstr(msg, "secretmem.enable"),
		      "strict: want one line with the limit: %s", msg);
}
END_TEST

static void nobody_no_memlock_strict(void)
{
	struct rlimit none = { 0, 0 };

	unsetenv("SECBUF_LOCK");
	setenv("SECBUF_STRICT", "1", 1);
	if (setrlimit(RLIMIT_MEMLOCK, &none) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(124);
}

/* The lines of msg that name a strict refusal, each checked for the cause and the fixes. */
static int refusal_lines(const char *msg)
{
	int n = 0;

	for (const char *at = msg; (at = strstr(at, "refused (SECBUF_STRICT=1)")); at++) {
		const char *end = strchr(at, '\n');
		char line[1024];

		snprintf(line, sizeof(line), "%.*s", end ? (int)(end - at) : (int)strlen(at), at);
		if (!strstr(line, "RLIMIT_MEMLOCK is 0 kB") || !strstr(line, "kB were needed") ||
		    !strstr(line, "ulimit -l") || !strstr(line, "LimitMEMLOCK=") ||
		    !strstr(line, "SECBUF_STRICT=0"))
			return -1;
		n++;
	}
	return n;
}

/*
 * Strict, as nobody with RLIMIT_MEMLOCK 0: every secure allocation fails
 * and OpenSSL says "malloc failure" or "unsupported"; the drop-in's one
 * line says which call, why (the limit, the need) and the ways out, and
 * under SECBUF_DEBUG=1 one line per refusal.
 */
START_TEST(strict_zero_limit_is_said)
{
	struct sbt_self se = { .mode = "--packed", .before_exec = nobody_no_memlock_strict };
	char msg[4096];
	int st;

	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from RLIMIT_MEMLOCK");
	sbt_need_root();
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == EPERM, "status %#x (want exit EPERM): %s",
		      st, msg);
	ck_assert_msg(ossl_count(msg, "\n") == 1 && refusal_lines(msg) == 1 &&
			      strstr(msg, "libsecbuf-openssl: ") &&
			      strstr(msg, "CRYPTO_secure_malloc() refused"),
		      "want one line naming the refusal: %s", msg);
	se.env = "SECBUF_DEBUG=1";
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == EPERM && ossl_count(msg, "\n") == 2 &&
			      refusal_lines(msg) == 2,
		      "SECBUF_DEBUG=1: status %#x, want a line per refusal: %s", st, msg);
}
END_TEST

static const char *key_file;

static void pkey_as_nobody(void *arg)
{
	(void)arg;
	nobody_no_memlock_strict();
	execlp("openssl", "openssl", "pkey", "-in", key_file, "-noout", (char *)NULL);
	_exit(127);
}

/*
 * Debian's openssl, unmodified, under the drop-in this binary runs with:
 * "openssl pkey" as nobody with RLIMIT_MEMLOCK 0 and SECBUF_STRICT=1
 * fails to read the key, and the drop-in's line says why, before
 * OpenSSL's "unsupported".
 */
START_TEST(openssl_pkey_strict_says_why)
{
	char path[] = "/tmp/secbuf-pkey-XXXXXX", msg[4096];
	const char *preload = getenv("LD_PRELOAD");
	EVP_PKEY *k;
	FILE *f;
	int fd, st;

	if (getenv("SECBUF_LOCK") && *getenv("SECBUF_LOCK"))
		sbt_skip("one run is enough: the refusal comes from RLIMIT_MEMLOCK");
	sbt_need_root();
	sbt_need_no_valgrind("the program runs outside valgrind");
	if (!preload || !strstr(preload, "libsecbuf-openssl.so"))
		sbt_skip("not run under secbuf-run --openssl");
	if (access("/usr/bin/openssl", X_OK) < 0)
		sbt_skip("no /usr/bin/openssl (Debian's openssl, .ci/deps openssl)");
	k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	ck_assert_ptr_nonnull(k);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0644), 0); /* nobody reads it */
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
	ck_assert_int_eq(fclose(f), 0);
	EVP_PKEY_free(k);
	key_file = path;
	st = sbt_child(pkey_as_nobody, NULL, msg, sizeof(msg));
	unlink(path);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 127,
		      "status %#x (want openssl's failure): %s", st, msg);
	ck_assert_msg(refusal_lines(msg) == 1 && strstr(msg, "libsecbuf-openssl: openssl[") &&
			      strstr(msg, "CRYPTO_secure_malloc() refused"),
		      "want one line from the drop-in, naming the cause and the fix: %s", msg);
}
END_TEST

const struct sbt_test openssl_fault_tests[] = {
	SBT(foreign_pointers_go_to_crypto_free),
	SBT(foreign_pointer_in_a_large_buffers_block),
	SBT(foreign_large_chunks_glibc_and_jemalloc),
	SBT(misuse_aborts_with_a_message),
	SBT(refused_lock_as_nobody),
	SBT(mlock2_refused_by_seccomp),
	SBT(small_limit_names_the_slab),
	SBT(secret_over_limit_is_the_limit),
	SBT(strict_zero_limit_is_said),
	SBT(openssl_pkey_strict_says_why),
	SBT_END,
};
