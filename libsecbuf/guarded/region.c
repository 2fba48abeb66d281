/*
 * Regions: [guard][data][guard].  Only the data pages are locked, advised
 * and protected; the guards stay PROT_NONE and unlocked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include "guarded.h"

int sb_region_method(unsigned flags)
{
	const struct sb_caps *caps = sb_caps();
	int m = caps->method, err = EOPNOTSUPP;

	if (flags & SECBUF_SECRET)
		return SECBUF_LOCK_SECRETMEM;

	/* mlock is eager: right only when the caller asked for every page. */
	if (m == SECBUF_LOCK_MLOCK && !(flags & SECBUF_POPULATE)) {
		m = SECBUF_LOCK_NONE;
		err = caps->lazy_err;
	}
	if (m == SECBUF_LOCK_NONE && !(flags & SECBUF_BEST_EFFORT)) {
		errno = err;
		return -1;
	}
	return m;
}

/*
 * Map the data over the reserved range.  A refused MAP_LOCKONFAULT is an
 * error, or with SECBUF_BEST_EFFORT an unlocked buffer.  Secret memory is
 * strict here: falling back to another tier is the caller's choice.
 */
static int map_data(struct sb_region *r, unsigned flags)
{
	int mflags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
	int prot = PROT_READ | PROT_WRITE;

	if (r->method == SECBUF_LOCK_SECRETMEM)
		return sb_secret_map(r->data, r->data_len);
	if (r->method == SECBUF_LOCK_MAP_LOCKONFAULT &&
	    sb_map_lockonfault(r->data, r->data_len) == 0)
		return 0;
	if (r->method == SECBUF_LOCK_MAP_LOCKONFAULT) {
		if (!(flags & SECBUF_BEST_EFFORT) || !sb_lock_refused(errno))
			return -1;
		r->method = SECBUF_LOCK_NONE;
	}
	if (mmap(r->data, r->data_len, prot, mflags, -1, 0) == MAP_FAILED)
		return -1;
	return 0;
}

/*
 * Lock the mapped data.  Called after advise(): an eager mlock populates
 * the range, and it must not do so with transparent huge pages.
 */
static int lock_mapped(struct sb_region *r, unsigned flags)
{
	if (sb_lock_range(r->data, r->data_len, r->method) == 0)
		return 0;
	if (!(flags & SECBUF_BEST_EFFORT) || !sb_lock_unavailable(errno))
		return -1;
	if (sb_unlock_range(r->data, r->data_len) < 0)
		return -1;
	r->method = SECBUF_LOCK_NONE;
	return 0;
}

/*
 * The data is named after the method that locked it, [anon:secbuf:mlock2]
 * say, so that an auditor reading /proc/PID/maps learns what the library
 * chose, and can hold it against the kernel's VmFlags.  Named once the
 * lock is in place: a best-effort buffer whose lock failed says "none".
 * Secret memory is a file mapping, which maps already call /secretmem.
 */
static int name_data(const struct sb_region *r)
{
	char name[32];

	if (r->method == SECBUF_LOCK_SECRETMEM)
		return 0;

	snprintf(name, sizeof(name), "secbuf:%s", secbuf_lock_method_name(r->method));
	return sb_name_range(r->data, r->data_len, name);
}

/* Write-fault every page, so lock-on-fault methods lock it now. */
static void populate(const struct sb_region *r)
{
	size_t page = sb_caps()->page, off;

	for (off = 0; off < r->data_len; off += page)
		*(volatile unsigned char *)(r->data + off) = 0;
}

/*
 * Reserve map_len bytes starting at a multiple of align (a power of two, at
 * least a page): map align - page bytes more, then trim both ends.
 */
static unsigned char *reserve(size_t map_len, size_t align)
{
	size_t page = sb_caps()->page, extra = align - page, head;
	unsigned char *p;

	if (map_len > SIZE_MAX - extra) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	p = mmap(NULL, map_len + extra, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
		 0);
	if (p == MAP_FAILED) {
		/* All else is constant, so EINVAL is about the length (valgrind). */
		if (errno == EINVAL)
			errno = ENOMEM;
		return MAP_FAILED;
	}
	head = -(uintptr_t)p & (align - 1);
	if ((head && munmap(p, head) < 0) ||
	    (extra - head && munmap(p + head + map_len, extra - head) < 0))
		sb_misuse("munmap of the unaligned ends of a reservation failed: %m");
	return p + head;
}

/* Our own mapping does not fail to unmap; if it does, say why and stop. */
static void unmap(const struct sb_region *r, const char *fn)
{
	if (munmap(r->base, r->map_len) < 0)
		sb_misuse("%s: munmap(%p, %zu) of the buffer's mapping failed: %m%s", fn,
			  (void *)r->base, r->map_len,
			  errno == ENOMEM ? " (the process is at vm.max_map_count)" : "");
}

/*
 * Reserve the whole range, name it, then map the data over its middle.
 * Named before the data is mapped, the reservation merges with the named
 * guards of neighbouring buffers at once; the split for the data then
 * needs no more VMAs than the buffer keeps.  Were it named last, an
 * allocation would briefly need two VMAs more than it keeps, and a free
 * at vm.max_map_count would not make room for the next allocation.
 */
int sb_region_map(struct sb_region *r, size_t data_len, size_t align, int method, unsigned flags)
{
	const struct sb_caps *caps = sb_caps();

	r->method = method;
	r->dropped = 0;
	r->inherit = !!(flags & SECBUF_INHERIT);
	r->data_len = data_len;
	r->map_len = data_len + 2 * caps->page;
	r->base = reserve(r->map_len, align);
	if (r->base == MAP_FAILED)
		return -1;
	r->data = r->base + caps->page;
	if (sb_name_range(r->base, r->map_len, "secbuf") < 0 || map_data(r, flags) < 0) {
		int err = errno;

		/* No data mapped: secret memory's room was not taken (or given back). */
		unmap(r, "secbuf_alloc");
		errno = err;
		return -1;
	}
	if ((r->dropped = sb_advise_secret(r->data, r->data_len, r->inherit)) < 0 ||
	    lock_mapped(r, flags) < 0 || name_data(r) < 0) {
		int err = errno;

		sb_region_unmap(r, "secbuf_alloc");
		errno = err;
		return -1;
	}
	if ((flags & SECBUF_POPULATE) && r->method != SECBUF_LOCK_MLOCK)
		populate(r);
	return 0;
}

void sb_region_hold_dropped(const struct sb_region *r)
{
	if (r->dropped != 1)
		return;
	/* NOREPLACE: whatever is there already stays (it cannot be ours). */
	(void)mmap(r->data, r->data_len, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
}

unsigned long sb_region_relock_failures;

void sb_region_relock(const struct sb_region *r)
{
	if (r->inherit && sb_relock_range(r->data, r->data_len, r->method) < 0)
		sb_region_relock_failures++;
}

int sb_region_protect(const struct sb_region *r, int prot)
{
	return mprotect(r->data, r->data_len, prot);
}

void sb_region_unmap(const struct sb_region *r, const char *fn)
{
	unmap(r, fn);
	if (r->method == SECBUF_LOCK_SECRETMEM)
		sb_secret_unmapped(r->data_len);
}
