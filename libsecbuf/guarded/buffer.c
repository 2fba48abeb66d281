/*
 * The calls on one guarded buffer: make it, free it, protect it, and what
 * the kernel says about it.  Errors leave errno set; corruption aborts.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include "guarded.h"

static uint64_t serial; /* allocations so far */

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) & ~(to - 1);
}

/* Secret memory if asked for; under SECBUF_BEST_EFFORT, any lock if not to be had. */
static int map(struct sb_region *r, size_t data_len, size_t align, unsigned flags)
{
	int method = sb_region_method(flags);

	if (method < 0)
		return -1;
	if (sb_region_map(r, data_len, align, method, flags) == 0)
		return 0;
	if (method != SECBUF_LOCK_SECRETMEM || !(flags & SECBUF_BEST_EFFORT))
		return -1;
	flags &= ~SECBUF_SECRET;
	if ((method = sb_region_method(flags)) < 0)
		return -1;
	return sb_region_map(r, data_len, align, method, flags);
}

void *sb_alloc_guarded(size_t size, unsigned flags, size_t align, size_t region_align, int *method)
{
	size_t page = sb_caps()->page;
	struct sb_meta m = { .size = size, .flags = flags };
	int err;

	/* Canary, alignment and two guards must fit without wrapping. */
	if (size > SIZE_MAX - 4 * page) {
		errno = ENOMEM;
		return NULL;
	}
	if (map(&m.region, round_up(round_up(size, align) + SB_CANARY_SIZE, page),
		region_align > page ? region_align : page, flags) < 0) {
		sb_report_failure(size, flags);
		return NULL;
	}
	sb_walk_prepare(m.region.data_len);
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
	sb_count_add(size);
	return m.user;
}

/*
 * Secret memory needs no wipe of ours: the kernel clears each page as it
 * frees it, when the unmap releases the file.  Walking it would cost the
 * whole capacity: mincore of a file mapping looks every page up in the
 * page cache, where for anonymous memory it skips empty page tables.
 * (The test build that keeps the mapping never releases it: it wipes.)
 */
static int wipes_itself(const struct sb_region *r)
{
#ifdef SECBUF_TEST_KEEP_MAPPING
	(void)r;
	return 0;
#else
	return r->method == SECBUF_LOCK_SECRETMEM;
#endif
}

void sb_guarded_free(void *ptr, const char *fn)
{
	struct sb_meta m;

	sb_registry_take(ptr, &m, fn);
	sb_count_sub(m.size);
	if (sb_region_protect(&m.region, PROT_READ | PROT_WRITE) < 0)
		sb_misuse("%s(%p): cannot make the buffer writable to wipe it: %m", fn, ptr);
	sb_canary_check(&m, fn);
	if (!wipes_itself(&m.region) && sb_wipe_resident(m.region.data, m.region.data_len) < 0)
		sb_wipe(m.region.data, m.region.data_len); /* mincore failing here: wipe it all */
#ifdef SECBUF_TEST_KEEP_MAPPING
	/* Wipe-proof test build only: leave the wiped pages readable. */
	if (sb_region_protect(&m.region, PROT_READ) < 0)
		sb_misuse("%s(%p): mprotect failed: %m", fn, ptr);
#else
	sb_region_unmap(&m.region, fn);
#endif
}

/* Pinned: a concurrent free waits, so the range is still this buffer's. */
int sb_guarded_protect(void *ptr, int prot, const char *fn)
{
	struct sb_meta m;
	int ret;

	sb_registry_pin(ptr, &m, fn);
	ret = sb_region_protect(&m.region, prot);
	sb_registry_unpin(ptr, fn);
	return ret;
}

size_t sb_guarded_size(const void *ptr, const char *fn)
{
	struct sb_meta m;

	sb_registry_get(ptr, &m, fn);
	return m.size;
}

/* Pinned: a concurrent free waits, so mincore sees this buffer's pages. */
int sb_guarded_stat(const void *ptr, struct secbuf_stat *st, const char *fn)
{
	struct sb_meta m;
	size_t resident;
	int ret;

	sb_registry_pin(ptr, &m, fn);
	ret = sb_walk(m.region.data, m.region.data_len, NULL, &resident);
	sb_registry_unpin(ptr, fn);
	if (ret < 0)
		return -1;
	st->size = m.size;
	st->mapped_bytes = m.region.data_len;
	st->resident_pages = resident;
	st->locked_pages = m.region.method == SECBUF_LOCK_NONE ? 0 : resident;
	st->lock_method = m.region.method;
	st->flags = m.flags;
	return 0;
}
