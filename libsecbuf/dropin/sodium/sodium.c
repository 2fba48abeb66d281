/*
 * libsecbuf-sodium.so: libsodium's guarded heap (sodium_malloc() and its
 * five companions) on libsecbuf buffers, for LD_PRELOAD.  libsecbuf is
 * linked in, so the preload needs nothing else; only the sodium_* calls
 * are exported.  libsecbuf-sodium(7) says where it differs from libsodium
 * and why.
 *
 * Layout as libsodium's: the last byte flush against the trailing guard
 * page (no alignment), a 16-byte canary right in front of the pointer.
 * A pointer that is not ours goes to the next sodium_free() in the
 * lookup order, the real libsodium's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include "dropin/common/dropin.h"

static const struct sb_dropin self = { "libsecbuf-sodium", "sodium_malloc()" };

__attribute__((visibility("default")))
void *sodium_malloc(size_t size)
{
	int saved = errno, flags, method;
	void *p = NULL;

	sb_enter(__func__);
	flags = sb_dropin_flags(&self);
	if (flags >= 0 && sb_ready(flags) == 0)
		p = sb_alloc_guarded(size, flags, 1, 0, &method);
	if (p) {
		sb_dropin_warn_method(&self, flags, method);
		errno = saved;
	}
	sb_leave();
	return p;
}

__attribute__((visibility("default")))
void *sodium_allocarray(size_t count, size_t size)
{
	/* libsodium's own bound, so that the same calls fail. */
	if (count > 0 && size >= SIZE_MAX / count) {
		errno = ENOMEM;
		return NULL;
	}
	return sodium_malloc(count * size);
}

static int ours(const void *ptr, const char *fn)
{
	int held;

	sb_enter(fn);
	held = sb_registry_holds(ptr);
	sb_leave();
	return held;
}

/*
 * The real libsodium's function, for a pointer we did not hand out.  Its
 * canary page must be mapped: otherwise the pointer is nobody's (most
 * likely one of ours, freed twice), and libsodium would only fault on it.
 */
static void *real(const char *name, void *ptr)
{
	uintptr_t canary_page = ((uintptr_t)ptr - SB_CANARY_SIZE) & ~(uintptr_t)(sb_caps()->page - 1);
	unsigned char vec;
	void *fn;

	if ((uintptr_t)ptr < SB_CANARY_SIZE ||
	    (mincore((void *)canary_page, 1, &vec) < 0 && errno == ENOMEM))
		sb_misuse("%s(%p): not a live buffer: nothing is mapped there "
			  "(double free or foreign pointer)", name, ptr);
	fn = dlsym(RTLD_NEXT, name);
	if (!fn)
		sb_misuse("%s(%p): not a buffer of libsecbuf-sodium, and no libsodium is "
			  "loaded to hand it to", name, ptr);
	return fn;
}

__attribute__((visibility("default")))
void sodium_free(void *ptr)
{
	void (*real_free)(void *);

	if (!ptr)
		return;
	if (ours(ptr, __func__)) {
		secbuf_free(ptr);	/* works at any protection: it makes the pages writable */
		return;
	}
	*(void **)&real_free = real(__func__, ptr);
	real_free(ptr);
}

static int protect(void *ptr, int access, const char *fn)
{
	int (*real_protect)(void *);

	if (!ptr || ours(ptr, fn))
		return secbuf_protect(ptr, access);
	*(void **)&real_protect = real(fn, ptr);
	return real_protect(ptr);
}

__attribute__((visibility("default")))
int sodium_mprotect_noaccess(void *ptr)
{
	return protect(ptr, SECBUF_NOACCESS, __func__);
}

__attribute__((visibility("default")))
int sodium_mprotect_readonly(void *ptr)
{
	return protect(ptr, SECBUF_READONLY, __func__);
}

__attribute__((visibility("default")))
int sodium_mprotect_readwrite(void *ptr)
{
	return protect(ptr, SECBUF_READWRITE, __func__);
}

/* SECBUF_PURGE_ON_CRASH, before main (dropin/common/env.c). */
__attribute__((constructor)) static void purge_from_environment(void)
{
	sb_dropin_purge_from_environment(&self);
}
