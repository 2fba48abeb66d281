/*
 * libsecbuf-openssl.so, preloaded into this program, which is linked
 * against Debian's libcrypto: OpenSSL's secure-heap contract as its own
 * test (test/secmemtest.c) checks it, and what libsecbuf-openssl(7)
 * adds.  Run by secbuf-run --openssl (make check); without the preload
 * the first test fails.  openssl-fault-tests.c: misuse and refusals;
 * openssl-fork-tests.c: fork and main.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <secbuf.h>
#include "openssl-tests.h"

int ossl_dontdump(const void *p)
{
	char vmflags[160];
	long rss, locked;

	return sbt_smaps(p, &rss, &locked, vmflags, sizeof(vmflags)) == 0 &&
	       strstr(vmflags, " dd ");
}

int ossl_mapped(const void *p)
{
	unsigned char vec;

	return mincore((void *)((uintptr_t)p & ~(uintptr_t)(sbt_page() - 1)), 1, &vec) == 0;
}

int ossl_locks(void)
{
	return sbt_method() == SECBUF_LOCK_MAP_LOCKONFAULT ||
	       sbt_method() == SECBUF_LOCK_MLOCK2_ONFAULT;
}

int ossl_count(const char *s, const char *needle)
{
	int n = 0;

	for (; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

START_TEST(preload_in_effect)
{
	unsigned char *small = OPENSSL_secure_malloc(20), *large = OPENSSL_secure_malloc(5000);

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	ck_assert_ptr_nonnull(small);
	ck_assert_ptr_nonnull(large);
	/* malloc's heap is never left out of core dumps; libsecbuf's memory always is. */
	ck_assert_msg(ossl_dontdump(small) && ossl_dontdump(large),
		      "secure memory is not libsecbuf's: is libsecbuf-openssl.so preloaded?");
	ck_assert_int_eq(CRYPTO_secure_allocated(small), 1);
	ck_assert_int_eq(CRYPTO_secure_allocated(large), 1);
	/* Ready without init, which OpenSSL's heap is not. */
	ck_assert_int_eq(CRYPTO_secure_malloc_initialized(), 1);
	OPENSSL_secure_free(small);
	OPENSSL_secure_free(large);
}
END_TEST

/* test/secmemtest.c's sequence from the init on, figures included. */
START_TEST(secmemtest_contract)
{
	char *p, *q, *s;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	ck_assert_uint_eq(CRYPTO_secure_used(), 0);
	ck_assert_int_eq(CRYPTO_secure_malloc_init(4096, 32), 1);
	p = OPENSSL_secure_malloc(20);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(CRYPTO_secure_allocated(p), 1);
	ck_assert_uint_eq(CRYPTO_secure_used(), 32); /* 20 -> a 32-byte unit */
	q = OPENSSL_malloc(20);
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(CRYPTO_secure_allocated(q), 0);
	s = OPENSSL_secure_malloc(20);
	ck_assert_int_eq(CRYPTO_secure_allocated(s), 1);
	ck_assert_uint_eq(CRYPTO_secure_used(), 64);
	OPENSSL_secure_free(p);
	ck_assert_uint_eq(CRYPTO_secure_used(), 32);
	OPENSSL_free(q);
	ck_assert_int_eq(CRYPTO_secure_malloc_done(), 0); /* s is still live */
	ck_assert_int_eq(CRYPTO_secure_malloc_initialized(), 1);
	OPENSSL_secure_free(s);
	ck_assert_uint_eq(CRYPTO_secure_used(), 0);
	ck_assert_int_eq(CRYPTO_secure_malloc_done(), 1);
	ck_assert_int_eq(CRYPTO_secure_malloc_initialized(), 0);
	ck_assert_int_eq(CRYPTO_secure_malloc_init(32768, 16), 1);
	ck_assert_ptr_null(OPENSSL_secure_malloc((size_t)-1));
	ck_assert_int_eq(CRYPTO_secure_malloc_done(), 1);
}
END_TEST

START_TEST(init_with_silly_sizes)
{
	static const struct {
		size_t size, minsize;
		int ok;
	} cases[] = {
		{ 0, 0, 0 },
		{ 3, 1, 0 },
		{ 4096, 8192, 0 },
		{ 4096, 24, 0 },
		{ SIZE_MAX, 16, 0 },
		/*
		 * As Debian's libcrypto 3.0 answers without the drop-in: a
		 * minsize up to 16 is rounded up to 16, and the arena must
		 * hold four minsize blocks (where it asserts, this refuses).
		 */
		{ 16, 16, 0 },
		{ 4096, 2048, 0 },
		{ 64, 16, 1 },
		{ 32768, 12, 1 },
		{ 4096, 3, 1 },
		{ 4096, 1024, 1 },
		{ 4096, 0, 1 },
		{ 4096, 32, 1 },
		{ (size_t)1 << 62, 16, 1 }, /* ignored: nothing is mapped for it */
	};
	char fails[1024] = "";
	size_t i;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret;

		errno = 0;
		ret = CRYPTO_secure_malloc_init(cases[i].size, cases[i].minsize);
		if (ret != cases[i].ok || (!ret && errno != EINVAL))
			sbt_note(fails, sizeof(fails), "init(%zu, %zu) = %d, errno %d",
				 cases[i].size, cases[i].minsize, ret, errno);
	}
	ck_assert_msg(!*fails, "%s", fails);
	/* A refused init changes nothing: memory is still there. */
	ck_assert_int_eq(CRYPTO_secure_malloc_initialized(), 1);
}
END_TEST

START_TEST(zero_and_impossible_sizes)
{
	static const size_t huge[] = { SIZE_MAX, SIZE_MAX - 4096, SIZE_MAX / 2, (size_t)1 << 62 };
	unsigned char *a = OPENSSL_secure_malloc(0), *b = OPENSSL_secure_zalloc(0);
	size_t i;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	ck_assert_msg(a && b && a != b, "malloc(0) and zalloc(0): %p, %p", (void *)a, (void *)b);
	ck_assert_int_eq(CRYPTO_secure_allocated(a), 1);
	ck_assert_uint_eq(CRYPTO_secure_actual_size(b), 16);
	OPENSSL_secure_free(a);
	OPENSSL_secure_clear_free(b, 0);
	for (i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		errno = 0;
		ck_assert_ptr_null(OPENSSL_secure_malloc(huge[i]));
		ck_assert_int_eq(errno, ENOMEM);
		ck_assert_ptr_null(OPENSSL_secure_zalloc(huge[i]));
	}
	ck_assert_uint_eq(CRYPTO_secure_used(), 0);
}
END_TEST

/* Truthful for any pointer, in constant time: interior ones included, as OpenSSL's. */
START_TEST(allocated_for_any_pointer)
{
	static const uintptr_t garbage[] = { 1,
					     4096,
					     0x123456789abcULL,
					     (uintptr_t)1 << 47,
					     ((uintptr_t)1 << 47) - 16,
					     ~(uintptr_t)0,
					     ~(uintptr_t)0 - 4095 };
	unsigned char *small = OPENSSL_secure_malloc(100), *large = OPENSSL_secure_malloc(300000);
	unsigned char *plain = OPENSSL_malloc(100);
	int on_stack;
	size_t i;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	ck_assert_int_eq(CRYPTO_secure_allocated(NULL), 0);
	ck_assert_int_eq(CRYPTO_secure_allocated(&on_stack), 0);
	ck_assert_int_eq(CRYPTO_secure_allocated(plain), 0);
	for (i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++)
		ck_assert_msg(!CRYPTO_secure_allocated((void *)garbage[i]), "%#lx",
			      (unsigned long)garbage[i]);
	ck_assert_int_eq(CRYPTO_secure_allocated(small + 99), 1);
	ck_assert_int_eq(CRYPTO_secure_allocated(large + 1), 1);
	ck_assert_int_eq(CRYPTO_secure_allocated(large + 299999), 1); /* past the first block */
	ck_assert_int_eq(CRYPTO_secure_allocated(large + 300000), 0);
	OPENSSL_secure_free(small);
	OPENSSL_secure_free(large);
	ck_assert_int_eq(CRYPTO_secure_allocated(small), 0);
	ck_assert_int_eq(CRYPTO_secure_allocated(large), 0);
	OPENSSL_free(plain);
}
END_TEST

START_TEST(actual_size_and_used)
{
	static const size_t sizes[] = { 1, 16, 17, 256, 257, 4096, 100000 };
	static const size_t actual[] = { 16, 16, 32, 256, 257, 4096, 100000 };
	void *p[sizeof(sizes) / sizeof(sizes[0])];
	size_t i, sum = 0;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		p[i] = OPENSSL_secure_malloc(sizes[i]);
		ck_assert_ptr_nonnull(p[i]);
		ck_assert_uint_eq(CRYPTO_secure_actual_size(p[i]), actual[i]);
		sum += actual[i];
	}
	ck_assert_uint_eq(CRYPTO_secure_used(), sum);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		OPENSSL_secure_clear_free(p[i], sizes[i]);
	ck_assert_uint_eq(CRYPTO_secure_used(), 0);
}
END_TEST

/* zalloc zeroes a slot a previous secret used; both frees wipe. */
START_TEST(zalloc_zeroes_and_frees_wipe)
{
	unsigned char *p = OPENSSL_secure_malloc(64), *q, *large;
	size_t i;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	memset(p, 0xff, 64);
	OPENSSL_secure_free(p);
	/* The slab stays mapped: the slot must read as zeros now. */
	for (i = 0; i < 64; i++)
		ck_assert_msg(p[i] == 0, "byte %zu of a freed secret: %#x", i, p[i]);
	q = OPENSSL_secure_malloc(64);
	memset(q, 0xee, 64);
	OPENSSL_secure_clear_free(q, 64);
	for (i = 0; i < 64; i++)
		ck_assert_msg(q[i] == 0, "byte %zu after clear_free: %#x", i, q[i]);
	q = OPENSSL_secure_zalloc(64);
	for (i = 0; i < 64; i++)
		ck_assert_int_eq(q[i], 0);
	OPENSSL_secure_free(q);
	large = OPENSSL_secure_zalloc(20000);
	for (i = 0; i < 20000; i++)
		ck_assert_int_eq(large[i], 0);
	OPENSSL_secure_clear_free(large, 20000);
	ck_assert_msg(!ossl_mapped(large), "a freed large buffer is still mapped");
}
END_TEST

/* OpenSSL's own secret-keeping calls land here: key generation counts in used(). */
START_TEST(keys_are_secure_allocations)
{
	static const char *const algs[] = { "RSA", "EC", "ED25519", "X25519" };
	char fails[1024] = "";
	size_t i;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	for (i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		size_t before = CRYPTO_secure_used(), during;
		EVP_PKEY *k = !strcmp(algs[i], "RSA") ?
				      EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048) :
			      !strcmp(algs[i], "EC") ?
				      EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256") :
				      EVP_PKEY_Q_keygen(NULL, NULL, algs[i]);

		ck_assert_msg(k, "%s key generation failed", algs[i]);
		during = CRYPTO_secure_used();
		EVP_PKEY_free(k);
		if (during <= before || CRYPTO_secure_used() >= during)
			sbt_note(fails, sizeof(fails), "%s: used %zu -> %zu -> %zu", algs[i],
				 before, during, CRYPTO_secure_used());
	}
	ck_assert_msg(!*fails, "%s", fails);
}
END_TEST

/* 8 threads at once: their secrets keep their bytes, and used() adds up. */
static void *hammer(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	unsigned char *live[32] = { 0 };
	size_t len[32] = { 0 };
	int i;

	for (i = 0; i < 3000; i++) {
		int k = rand_r(&seed) % 32;
		size_t j;

		if (live[k]) {
			for (j = 0; j < len[k]; j++)
				if (live[k][j] != (unsigned char)(k + (uintptr_t)arg))
					return (void *)1;
			if (i & 1)
				OPENSSL_secure_free(live[k]);
			else
				OPENSSL_secure_clear_free(live[k], len[k]);
		}
		len[k] = rand_r(&seed) % 8 ? 1 + rand_r(&seed) % 256 : 257 + rand_r(&seed) % 6000;
		live[k] = i % 3 ? OPENSSL_secure_malloc(len[k]) : OPENSSL_secure_zalloc(len[k]);
		if (!live[k] || !CRYPTO_secure_allocated(live[k]))
			return (void *)2;
		memset(live[k], (int)(k + (uintptr_t)arg), len[k]);
	}
	for (i = 0; i < 32; i++)
		OPENSSL_secure_free(live[i]);
	return NULL;
}

START_TEST(eight_threads_at_once)
{
	pthread_t t[8];
	void *ret;
	uintptr_t i;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, hammer, (void *)(i + 1)), 0);
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_msg(!ret, "thread %lu: step %ld failed", (unsigned long)i, (long)ret);
	}
	ck_assert_uint_eq(CRYPTO_secure_used(), 0);
}
END_TEST

const struct sbt_test openssl_contract_tests[] = {
	SBT(preload_in_effect),
	SBT(secmemtest_contract),
	SBT(init_with_silly_sizes),
	SBT(zero_and_impossible_sizes),
	SBT(allocated_for_any_pointer),
	SBT(actual_size_and_used),
	SBT(zalloc_zeroes_and_frees_wipe),
	SBT(keys_are_secure_allocations),
	SBT(eight_threads_at_once),
	SBT_END,
};
