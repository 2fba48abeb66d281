/*
 * The public API: argument checks, the re-entry guard, and which part a
 * pointer belongs to (packed/ or guarded/), nothing more.  Each entry
 * point keeps errno as it found it unless it fails.
 */
#include <errno.h>
#include <sys/mman.h>
#include "init.h"

#define ALL_FLAGS \
	(SECBUF_POPULATE | SECBUF_BEST_EFFORT | SECBUF_PACKED | SECBUF_SECRET | SECBUF_INHERIT)

static void *alloc(size_t size, unsigned flags)
{
	if (size == 0 || (flags & ~ALL_FLAGS) ||
	    (flags & (SECBUF_SECRET | SECBUF_INHERIT)) == (SECBUF_SECRET | SECBUF_INHERIT)) {
		errno = EINVAL;
		return NULL;
	}
	if (sb_ready(flags) < 0)
		return NULL;
	if ((flags & SECBUF_PACKED) && size <= SECBUF_PACKED_MAX)
		return sb_packed_alloc(size, flags);
	return sb_alloc_guarded(size, flags, SB_CANARY_SIZE, 0, NULL);
}

SB_API void *secbuf_alloc_flags(size_t size, unsigned flags)
{
	int saved = errno;
	void *p;

	sb_enter(__func__);
	p = alloc(size, flags);
	if (p)
		errno = saved;
	sb_leave();
	return p;
}

SB_API void *secbuf_alloc(size_t size)
{
	int saved = errno;
	void *p;

	sb_enter(__func__);
	p = alloc(size, 0);
	if (p)
		errno = saved;
	sb_leave();
	return p;
}

SB_API void secbuf_free(void *ptr)
{
	struct sb_slab *s = sb_slab_of(ptr);
	int saved = errno;

	if (!ptr)
		return;
	sb_enter(__func__);
	if (s)
		sb_packed_free(s, ptr, __func__);
	else
		sb_guarded_free(ptr, __func__);
	errno = saved;
	sb_leave();
}

SB_API int secbuf_protect(void *ptr, int access)
{
	static const int prot[] = {
		[SECBUF_NOACCESS] = PROT_NONE,
		[SECBUF_READONLY] = PROT_READ,
		[SECBUF_READWRITE] = PROT_READ | PROT_WRITE,
	};
	struct sb_slab *s = sb_slab_of(ptr);
	int saved = errno, ret;

	if (!ptr || access < SECBUF_NOACCESS || access > SECBUF_READWRITE) {
		errno = EINVAL;
		return -1;
	}
	sb_enter(__func__);
	/* A packed secret shares its pages: their protection is not its own to set. */
	if (s) {
		sb_packed_check_live(s, ptr, __func__);
		errno = EINVAL;
		sb_leave();
		return -1;
	}
	ret = sb_guarded_protect(ptr, prot[access], __func__);
	if (ret == 0)
		errno = saved;
	sb_leave();
	return ret;
}

SB_API size_t secbuf_size(const void *ptr)
{
	struct sb_slab *s = sb_slab_of(ptr);
	int saved = errno;
	size_t size;

	if (!ptr)
		return 0;
	sb_enter(__func__);
	if (s)
		size = sb_packed_size(s, ptr, __func__);
	else
		size = sb_guarded_size(ptr, __func__);
	errno = saved;
	sb_leave();
	return size;
}

/* What the kernel says about a buffer right now. */
SB_API int secbuf_stat(const void *ptr, struct secbuf_stat *st)
{
	struct sb_slab *s = sb_slab_of(ptr);
	int saved = errno, ret;

	if (!ptr || !st) {
		errno = EINVAL;
		return -1;
	}
	sb_enter(__func__);
	if (s)
		ret = sb_packed_stat(s, ptr, st, __func__);
	else
		ret = sb_guarded_stat(ptr, st, __func__);
	if (ret == 0)
		errno = saved;
	sb_leave();
	return ret;
}

/* No re-entry guard: a signal handler may purge while a call is running. */
SB_API void secbuf_purge(void)
{
	int saved = errno;

	sb_purge();
	errno = saved;
}

SB_API int secbuf_purge_on_crash(unsigned flags)
{
	int saved = errno, ret;

	if (flags & ~SECBUF_PURGE_AT_EXIT) {
		errno = EINVAL;
		return -1;
	}
	sb_enter(__func__);
	ret = sb_wired() < 0 ? -1 : sb_purge_on_crash(flags & SECBUF_PURGE_AT_EXIT);
	if (ret == 0)
		errno = saved;
	sb_leave();
	return ret;
}
