// SPDX-License-Identifier: MIT
/* The allocators under test; see alloc.h. */
#define _GNU_SOURCE
#include "alloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <secbuf.h>
#include <sodium.h>

static int no_setup(size_t heap)
{
	(void)heap;
	return 0;
}

static void no_teardown(void)
{
}

/* secbuf: on-fault locking, guard pages, resident-only wipe on free. */
static void *sb_alloc(size_t size)
{
	return secbuf_alloc(size);
}

static void sb_free(void *ptr, size_t size)
{
	(void)size;
	secbuf_free(ptr);
}

static const char *sb_method(void)
{
	return secbuf_lock_method_name(secbuf_lock_method());
}

/* libsodium: guard pages and canary, mlock of the whole region. */
static int na_setup(size_t heap)
{
	(void)heap;
	if (sodium_init() < 0) {
		fprintf(stderr, "bench: sodium_init failed\n");
		return -1;
	}
	return 0;
}

static void *na_alloc(size_t size)
{
	return sodium_malloc(size);
}

static void na_free(void *ptr, size_t size)
{
	(void)size;
	sodium_free(ptr);
}

static const char *na_method(void)
{
	return "mlock";
}

/*
 * OpenSSL secure heap: one mlocked buddy arena whose size must be a power
 * of two, set at init.  Without init CRYPTO_secure_malloc silently falls
 * back to malloc, so every pointer is checked to come from the arena.
 */
static int os_setup(size_t heap)
{
	size_t arena = 64 * 1024;

	while (arena < heap)
		arena <<= 1;
	if (CRYPTO_secure_malloc_init(arena, 32) != 1) {
		fprintf(stderr, "bench: CRYPTO_secure_malloc_init(%zu) failed "
			"(mlock of the arena needs RLIMIT_MEMLOCK >= %zu kB)\n",
			arena, arena / 1024);
		return -1;
	}
	return 0;
}

static void *os_alloc(size_t size)
{
	void *p = CRYPTO_secure_malloc(size, __FILE__, __LINE__);

	if (p && !CRYPTO_secure_allocated(p)) {
		fprintf(stderr, "bench: CRYPTO_secure_malloc fell back to malloc\n");
		abort();
	}
	return p;
}

static void os_free(void *ptr, size_t size)
{
	CRYPTO_secure_clear_free(ptr, size, __FILE__, __LINE__);
}

static void os_teardown(void)
{
	CRYPTO_secure_malloc_done();
}

static const char *os_method(void)
{
	/* OpenSSL 3 on Linux locks its arena with mlock2(MLOCK_ONFAULT). */
	return "arena+mlock2-onfault";
}

/* malloc + mlock: what people write by hand; wipes all it may have used. */
static void *ml_alloc(size_t size)
{
	void *p = malloc(size);

	/* The raw syscall: glibc marks mlock's buffer read_only, and gcc then
	 * warns about fresh malloc memory, which mlock never reads. */
	if (p && syscall(SYS_mlock, p, size)) {
		int err = errno;

		free(p);
		errno = err;
		return NULL;
	}
	return p;
}

static void ml_free(void *ptr, size_t size)
{
	explicit_bzero(ptr, size);
	/* Unlocks whole pages, neighbours' too: a known flaw of the idiom. */
	munlock(ptr, size);
	free(ptr);
}

static const char *ml_method(void)
{
	return "mlock";
}

const struct allocator allocators[] = {
	{ "secbuf", no_setup, sb_alloc, sb_free, no_teardown, sb_method },
	{ "sodium_malloc", na_setup, na_alloc, na_free, no_teardown, na_method },
	{ "openssl_secure", os_setup, os_alloc, os_free, os_teardown, os_method },
	{ "malloc+mlock", no_setup, ml_alloc, ml_free, no_teardown, ml_method },
};
const int nallocators = sizeof(allocators) / sizeof(allocators[0]);
