/*
 * libsecbuf-openssl.so: OpenSSL 3's secure heap (CRYPTO_secure_malloc()
 * and its nine companions) on libsecbuf, for LD_PRELOAD.  libcrypto calls
 * these through its own PLT, so the preload reaches every key OpenSSL
 * marks secret.  libsecbuf-openssl(7) says where it differs from OpenSSL.
 *
 * Ready without CRYPTO_secure_malloc_init(): small sizes are packed
 * secrets, larger ones guarded buffers, all inherited across fork()
 * (SECBUF_INHERIT: pre-fork servers load their keys in the parent).  A
 * pointer that is not ours goes to libcrypto's CRYPTO_free(), as
 * OpenSSL's own heap does with memory from before its init.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "dropin/common/dropin.h"

static const struct sb_dropin self = { "libsecbuf-openssl", "CRYPTO_secure_malloc()" };

/*
 * CRYPTO_secure_used(): the bytes of live allocations as
 * CRYPTO_secure_actual_size() counts them.  initialized: what
 * CRYPTO_secure_malloc_initialized() answers; the heap is ready from the
 * start, and only a successful CRYPTO_secure_malloc_done() says no.
 */
static size_t used;
static int initialized = 1;

/*
 * Large buffers start at blocks of their own (SB_BLOCK_SHIFT), so that
 * the block of any address inside one names it: CRYPTO_secure_allocated()
 * answers for interior pointers in constant time, as packed secrets'
 * slabs do.  Address space only: the rest of a block stays unmapped.
 */
static struct sb_blockmap spans;

/* Each block the buffer's mapping (guards included) touches names user, or NULL. */
static int set_span(const struct sb_meta *m, void *user)
{
	uintptr_t b, end = (uintptr_t)m->region.base + m->region.map_len;

	for (b = (uintptr_t)m->region.base; b < end; b += (uintptr_t)1 << SB_BLOCK_SHIFT) {
		if (!user)
			sb_blockmap_clear(&spans, b);
		else if (sb_blockmap_set(&spans, b, user) < 0)
			return -1;
	}
	return 0;
}

static void *alloc_large(size_t size, unsigned flags, int *method)
{
	void *p =
		sb_alloc_guarded(size, flags, SB_CANARY_SIZE, (size_t)1 << SB_BLOCK_SHIFT, method);
	struct sb_meta m;
	int err;

	if (!p)
		return NULL;
	if (!sb_registry_live(p, &m))
		sb_misuse("CRYPTO_secure_malloc: internal error: buffer %p not registered", p);
	if (set_span(&m, p) == 0)
		return p;
	err = errno;
	set_span(&m, NULL);
	sb_guarded_free(p, "CRYPTO_secure_malloc");
	errno = err;
	return NULL;
}

/* The large buffer p is inside, or NULL: p in [start, start + size). */
static void *large_holding(const void *p)
{
	unsigned char *user = sb_blockmap_get(&spans, p);
	struct sb_meta m;

	if (!user || !sb_registry_live(user, &m))
		return NULL;
	return (const unsigned char *)p >= user && (const unsigned char *)p < user + m.size ? user :
											      NULL;
}

#define API __attribute__((visibility("default")))

/* The size an allocation counts for: packed secrets take their class. */
static size_t actual(size_t size)
{
	return size <= SECBUF_PACKED_MAX ? (size + 15) & ~(size_t)15 : size;
}

static void *secure_alloc(size_t num, const char *fn)
{
	int saved = errno, flags, method = SECBUF_LOCK_NONE;
	size_t size = num ? num : 1; /* a pointer of its own, as malloc(0) may give */
	void *p = NULL;

	sb_enter(fn);
	flags = sb_dropin_flags(&self);
	if (flags >= 0) {
		/* The secret tier is a shared mapping, which fork() cannot copy. */
		flags |= SECBUF_PACKED | (flags & SECBUF_SECRET ? 0 : SECBUF_INHERIT);
		if (sb_ready(flags) == 0) {
			if (size <= SECBUF_PACKED_MAX) {
				p = sb_packed_alloc(size, flags);
				if (p)
					method = sb_packed_method(sb_slab_of(p));
			} else {
				p = alloc_large(size, flags, &method);
			}
		}
	}
	if (p) {
		__atomic_add_fetch(&used, actual(size), __ATOMIC_RELAXED);
		__atomic_store_n(&initialized, 1, __ATOMIC_RELAXED);
		sb_dropin_warn_method(&self, flags, method, size);
		errno = saved;
	}
	sb_leave();
	return p;
}

API void *CRYPTO_secure_malloc(size_t num, const char *file, int line)
{
	(void)file;
	(void)line;
	return secure_alloc(num, __func__);
}

API void *CRYPTO_secure_zalloc(size_t num, const char *file, int line)
{
	void *p = secure_alloc(num, __func__);

	(void)file;
	(void)line;
	/* A guarded buffer is fresh pages, zero already: touching them would fault them in. */
	if (p && num <= SECBUF_PACKED_MAX)
		memset(p, 0, num);
	return p;
}

/* A live allocation of ours starts at p, or p is inside one: in constant time. */
static int live(const void *p)
{
	struct sb_slab *s = sb_slab_of(p);

	return s ? sb_packed_is_live(s, p) : !!large_holding(p);
}

/*
 * libcrypto's own function name, for memory that is not ours, which the
 * program gave to its call fn.  Nothing mapped at the pointer means
 * nobody's memory, most likely one of our guarded buffers freed twice:
 * malloc's free() would only crash on it.  Messages name fn, the call the
 * program made.
 */
static void *real(const char *fn_called, const char *name, void *ptr)
{
	unsigned char vec;
	void *fn, *crypto;

	if (mincore((void *)((uintptr_t)ptr & ~(uintptr_t)(sb_caps()->page - 1)), 1, &vec) < 0 &&
	    errno == ENOMEM)
		sb_misuse("%s(%p): not a live buffer: nothing is mapped there "
			  "(double free or foreign pointer)",
			  fn_called, ptr);
	fn = dlsym(RTLD_NEXT, name);
	/* libcrypto loaded with RTLD_LOCAL (Python's modules): by its name. */
	if (!fn && (crypto = dlopen("libcrypto.so.3", RTLD_LAZY | RTLD_NOLOAD))) {
		fn = dlsym(crypto, name);
		dlclose(crypto);
	}
	if (!fn)
		sb_misuse("%s(%p): not a buffer of libsecbuf-openssl, and no libcrypto is "
			  "loaded to hand it to (%s)",
			  fn_called, ptr, name);
	return fn;
}

/*
 * The live large buffer whose mapping (guards included) holds ptr, with
 * its metadata in *m; or NULL.  Exact, not by block: a large buffer maps
 * only the start of its last block, and the kernel places other mappings
 * in the rest (glibc's large chunks, jemalloc's extents), which are not
 * ours and go to CRYPTO_free().  Reserving the rest instead would cost a
 * mapping and up to 256 KiB of address space per buffer; the test is one
 * lookup that the free makes anyway.
 */
static void *large_mapping(const void *ptr, struct sb_meta *m)
{
	void *user = sb_blockmap_get(&spans, ptr);

	if (!user || !sb_registry_live(user, m) ||
	    (uintptr_t)ptr - (uintptr_t)m->region.base >= m->region.map_len)
		return NULL;
	return user;
}

/*
 * 1 if ptr was ours and is freed (wiped), 0 if it is someone else's.  In
 * a slab or a large buffer's mapping, it is ours: one that is not a live
 * allocation's start is misuse, which the size lookups name and abort on.
 */
static int secure_free(void *ptr, const char *fn)
{
	struct sb_slab *s = sb_slab_of(ptr);
	int saved = errno;
	struct sb_meta m;
	size_t size;
	void *user;

	sb_enter(fn);
	if (s) {
		size = sb_packed_size(s, ptr, fn);
		sb_packed_free(s, ptr, fn);
	} else if ((user = large_mapping(ptr, &m))) {
		if (user != ptr)
			sb_guarded_size(ptr, fn); /* aborts, saying what ptr is */
		set_span(&m, NULL);
		sb_guarded_free(ptr, fn);
		size = m.size;
	} else {
		sb_leave();
		return 0;
	}
	__atomic_sub_fetch(&used, actual(size), __ATOMIC_RELAXED);
	errno = saved;
	sb_leave();
	return 1;
}

API void CRYPTO_secure_free(void *ptr, const char *file, int line)
{
	void (*real_free)(void *, const char *, int);

	if (!ptr || secure_free(ptr, __func__))
		return;
	*(void **)&real_free = real(__func__, "CRYPTO_free", ptr);
	real_free(ptr, file, line);
}

API void CRYPTO_secure_clear_free(void *ptr, size_t num, const char *file, int line)
{
	void (*real_clear_free)(void *, size_t, const char *, int);

	if (!ptr || secure_free(ptr, __func__))
		return;
	*(void **)&real_clear_free = real(__func__, "CRYPTO_clear_free", ptr);
	real_clear_free(ptr, num, file, line);
}

API int CRYPTO_secure_allocated(const void *ptr)
{
	int ret;

	if (!ptr)
		return 0;
	sb_enter(__func__);
	ret = live(ptr);
	sb_leave();
	return ret;
}

/* Aborts, naming the misuse, for a pointer that is not a live allocation (as OpenSSL's). */
API size_t CRYPTO_secure_actual_size(void *ptr)
{
	struct sb_slab *s = sb_slab_of(ptr);
	size_t size;

	if (!ptr)
		return 0;
	sb_enter(__func__);
	size = s ? sb_packed_size(s, ptr, __func__) : sb_guarded_size(ptr, __func__);
	sb_leave();
	return actual(size);
}

API size_t CRYPTO_secure_used(void)
{
	return __atomic_load_n(&used, __ATOMIC_RELAXED);
}

static int power_of_two(size_t n)
{
	return n && !(n & (n - 1));
}

/*
 * The arena's size is not used: memory is mapped and locked as it is
 * asked for.  What OpenSSL 3.0's heap accepts is accepted and what it
 * refuses is refused, errno EINVAL: the size a power of two; a minsize of
 * at most 16 (its free-list node, which it rounds up to), else a power of
 * two; and at least four minsize blocks in the arena (its bit tables).
 * Where OpenSSL asserts (a minsize above 16 that is not a power of two),
 * this refuses.  1 otherwise, never OpenSSL's 2 (the arena could not be
 * locked): whether memory is locked is known per allocation, and the
 * drop-in warns when it is not.
 */
#define OPENSSL_MIN_MINSIZE 16

API int CRYPTO_secure_malloc_init(size_t size, size_t minsize)
{
	if (minsize <= OPENSSL_MIN_MINSIZE)
		minsize = OPENSSL_MIN_MINSIZE;
	if (!power_of_two(size) || !power_of_two(minsize) || size / minsize < 4) {
		errno = EINVAL;
		return 0;
	}
	__atomic_store_n(&initialized, 1, __ATOMIC_RELAXED);
	return 1;
}

/* As OpenSSL's: 0 while secure memory is in use, else 1 and "not initialized". */
API int CRYPTO_secure_malloc_done(void)
{
	if (CRYPTO_secure_used())
		return 0;
	__atomic_store_n(&initialized, 0, __ATOMIC_RELAXED);
	return 1;
}

API int CRYPTO_secure_malloc_initialized(void)
{
	return __atomic_load_n(&initialized, __ATOMIC_RELAXED);
}

/* SECBUF_PURGE_ON_CRASH, before main (dropin/common/env.c). */
__attribute__((constructor)) static void purge_from_environment(void)
{
	sb_dropin_purge_from_environment(&self);
}
