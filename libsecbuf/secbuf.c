/*
 * The public API: argument checks and the order of the steps, nothing more.
 * Each entry point keeps errno as it found it unless it fails.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include "internal.h"

#define ALL_FLAGS (SECBUF_POPULATE | SECBUF_BEST_EFFORT | SECBUF_PACKED)

static uint64_t serial;	/* allocations so far */

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) & ~(to - 1);
}

void *sb_alloc_guarded(size_t size, unsigned flags, size_t align, int *method)
{
	size_t page = sb_caps()->page;
	struct sb_meta m = { .size = size, .flags = flags };
	int err;

	/* Canary, alignment and two guards must fit without wrapping. */
	if (size > SIZE_MAX - 4 * page) {
		errno = ENOMEM;
		return NULL;
	}
	if (sb_ready() < 0 || (m.region.method = sb_region_method(flags)) < 0)
		return NULL;
	if (sb_region_map(&m.region, round_up(round_up(size, align) + SB_CANARY_SIZE, page),
			  page, m.region.method, flags) < 0)
		return NULL;
	sb_resident_prepare(m.region.data_len);
	/* Flush against the trailing guard, rounded down to the alignment. */
	m.user = (unsigned char *)((uintptr_t)(m.region.data + m.region.data_len - size) &
				   ~(uintptr_t)(align - 1));
	m.serial = __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
	sb_canary_fill(&m);
	if (sb_registry_add(&m) < 0) {
		err = errno;
		sb_region_unmap(&m.region, "secbuf_alloc");
		errno = err;
		return NULL;
	}
	if (method)
		*method = m.region.method;
	return m.user;
}

static void *alloc(size_t size, unsigned flags)
{
	if (size == 0 || (flags & ~ALL_FLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	if ((flags & SECBUF_PACKED) && size <= SECBUF_PACKED_MAX)
		return sb_packed_alloc(size, flags);
	return sb_alloc_guarded(size, flags, SB_CANARY_SIZE, NULL);
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
	struct sb_meta m;
	int saved = errno;

	if (!ptr)
		return;
	sb_enter(__func__);
	if (s) {
		sb_packed_free(s, ptr, __func__);
		errno = saved;
		sb_leave();
		return;
	}
	sb_registry_take(ptr, &m, __func__);
	if (sb_region_protect(&m.region, PROT_READ | PROT_WRITE) < 0)
		sb_misuse("%s(%p): cannot make the buffer writable to wipe it: %m",
			  __func__, ptr);
	sb_canary_check(&m, __func__);
	/* mincore failing on our own mapping is unexpected: wipe it all. */
	if (sb_wipe_resident(m.region.data, m.region.data_len) < 0)
		sb_wipe(m.region.data, m.region.data_len);
#ifdef SECBUF_TEST_KEEP_MAPPING
	/* Wipe-proof test build only: leave the wiped pages readable. */
	if (sb_region_protect(&m.region, PROT_READ) < 0)
		sb_misuse("%s(%p): mprotect failed: %m", __func__, ptr);
#else
	sb_region_unmap(&m.region, __func__);
#endif
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
	struct sb_meta m;
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
	/* Pinned: a concurrent free waits, so the range is still this buffer's. */
	sb_registry_pin(ptr, &m, __func__);
	ret = sb_region_protect(&m.region, prot[access]);
	sb_registry_unpin(ptr);
	if (ret == 0)
		errno = saved;
	sb_leave();
	return ret;
}

SB_API size_t secbuf_size(const void *ptr)
{
	struct sb_slab *s = sb_slab_of(ptr);
	struct sb_meta m;
	int saved = errno;

	if (!ptr)
		return 0;
	sb_enter(__func__);
	if (s)
		m.size = sb_packed_size(s, ptr, __func__);
	else
		sb_registry_get(ptr, &m, __func__);
	errno = saved;
	sb_leave();
	return m.size;
}
