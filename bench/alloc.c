// SPDX-License-Identifier: MIT
/* The allocators under test; see alloc.h. */
#define _GNU_SOURCE
#include "alloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <secbuf.h>
#include <sodium.h>

#include "kfacts.h"

#define MIB (1024UL * 1024)

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

/* The probe, the key page and the thread's state (its mincore vector with it). */
static void sb_warmup(size_t heap)
{
	(void)heap;
	secbuf_free(secbuf_alloc(2 * MIB));
}

/* Packed: small secrets share locked slab pages, guard bytes between them. */
static void *pk_alloc(size_t size)
{
	return secbuf_alloc_flags(size, SECBUF_PACKED);
}

/* The secret tier: memfd_secret pages, out of the kernel's direct map. */
static void *st_alloc(size_t size)
{
	return secbuf_alloc_flags(size, SECBUF_SECRET);
}

static void *ps_alloc(size_t size)
{
	return secbuf_alloc_flags(size, SECBUF_SECRET | SECBUF_PACKED);
}

static const char *st_method(void)
{
	return "memfd_secret";
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

/*
 * The syscall floor of a lock-on-fault buffer: mmap, mlock2(MLOCK_ONFAULT),
 * and at free one mincore over the range, a wipe of the resident pages and
 * munmap.  No guard pages, canary or bookkeeping; its mincore vector is
 * made resident before the clock starts.
 */
static unsigned char *floor_vec;
static size_t floor_vec_len;

static void floor_warmup(size_t heap)
{
	size_t len = heap / sysconf(_SC_PAGESIZE);

	if (len <= floor_vec_len)
		return;
	free(floor_vec);
	floor_vec = malloc(len);
	if (!floor_vec) {
		fprintf(stderr, "bench: no memory for a %zu-byte mincore vector\n", len);
		abort();
	}
	/* Not 0: the compiler would make malloc + memset a calloc that touches nothing. */
	memset(floor_vec, 1, len);
	floor_vec_len = len;
}

static void *floor_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (syscall(SYS_mlock2, p, size, 1 /* MLOCK_ONFAULT */) < 0) {
		int err = errno;

		munmap(p, size);
		errno = err;
		return NULL;
	}
	return p;
}

static void floor_free(void *ptr, size_t size)
{
	size_t page = sysconf(_SC_PAGESIZE), n = size / page, i;
	unsigned char *p = ptr;
	uint64_t w;

	if (n > floor_vec_len || mincore(p, size, floor_vec) < 0) {
		fprintf(stderr, "bench: floor: mincore: %s\n", strerror(errno));
		abort();
	}
	/* Eight absent pages at a time, as secbuf scans. */
	for (i = 0; i < n; i++) {
		if (!(i & 7) && i + 8 <= n) {
			memcpy(&w, floor_vec + i, sizeof(w));
			if (!(w & 0x0101010101010101ull)) {
				i += 7;
				continue;
			}
		}
		if (floor_vec[i] & 1)
			explicit_bzero(p + i * page, page);
	}
	munmap(p, size);
}

static const char *floor_method(void)
{
	return "mlock2-onfault+1-mincore";
}

/*
 * The secret tier's floor: what any allocator on memfd_secret must do for
 * a buffer (the file, its size, the mapping; the kernel clears the pages
 * it frees, so no wipe).
 */
static void *sfloor_alloc(size_t size)
{
	void *p = secretmem_map(size);

	return p == MAP_FAILED ? NULL : p;
}

static void sfloor_free(void *ptr, size_t size)
{
	munmap(ptr, size);
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

static void na_warmup(size_t heap)
{
	if (na_setup(heap) < 0)
		abort();
}

#ifdef SODIUM_DROPIN
/*
 * libsodium's calls as libsecbuf-sodium.so defines them: the functions a
 * preloaded program runs, taken from the library by dlsym so that they
 * race the real libsodium in the same process and run.
 */
static void *(*dropin_malloc)(size_t);
static void (*dropin_free)(void *);

static void di_warmup(size_t heap)
{
	void *lib = dlopen(SODIUM_DROPIN, RTLD_NOW | RTLD_LOCAL);

	(void)heap;
	if (!lib || !(*(void **)&dropin_malloc = dlsym(lib, "sodium_malloc")) ||
	    !(*(void **)&dropin_free = dlsym(lib, "sodium_free"))) {
		fprintf(stderr, "bench: %s: %s\n", SODIUM_DROPIN, dlerror());
		abort();
	}
	/* The probe and the key page, as for secbuf. */
	dropin_free(dropin_malloc(2 * MIB));
}

static void *di_alloc(size_t size)
{
	return dropin_malloc(size);
}

static void di_free(void *ptr, size_t size)
{
	(void)size;
	dropin_free(ptr);
}
#endif

const struct allocator allocators[] = {
	{ "secbuf", 0, 0, sb_warmup, no_setup, sb_alloc, sb_free, no_teardown, sb_method },
	{ "secbuf_packed", SECBUF_PACKED_MAX, 0, sb_warmup, no_setup, pk_alloc, sb_free,
	  no_teardown, sb_method },
	{ "secbuf_secret", 0, 0, sb_warmup, no_setup, st_alloc, sb_free, no_teardown, st_method },
	{ "secbuf_packed_secret", SECBUF_PACKED_MAX, 0, sb_warmup, no_setup, ps_alloc, sb_free,
	  no_teardown, st_method },
	{ "sodium_malloc", 0, 0, na_warmup, na_setup, na_alloc, na_free, no_teardown, na_method },
#ifdef SODIUM_DROPIN
	/* Host only: a static guest binary cannot load the drop-in. */
	{ "sodium_dropin", 0, 1, di_warmup, no_setup, di_alloc, di_free, no_teardown, sb_method },
#endif
	{ "openssl_secure", 0, 0, NULL, os_setup, os_alloc, os_free, os_teardown, os_method },
	{ "malloc+mlock", 0, 0, NULL, no_setup, ml_alloc, ml_free, no_teardown, ml_method },
	{ "syscall_floor", 0, 1, floor_warmup, no_setup, floor_alloc, floor_free, no_teardown,
	  floor_method },
	{ "secret_floor", 0, 1, NULL, no_setup, sfloor_alloc, sfloor_free, no_teardown, st_method },
};
const int nallocators = sizeof(allocators) / sizeof(allocators[0]);
