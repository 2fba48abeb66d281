/* secbuf_stat: what the kernel says about a buffer right now. */
#include <errno.h>
#include "internal.h"

SB_API int secbuf_stat(const void *ptr, struct secbuf_stat *st)
{
	struct sb_slab *s = sb_slab_of(ptr);
	struct sb_meta m;
	size_t resident;
	int saved = errno, ret;

	if (!ptr || !st) {
		errno = EINVAL;
		return -1;
	}
	sb_enter(__func__);
	if (s) {
		ret = sb_packed_stat(s, ptr, st, __func__);
		if (ret == 0)
			errno = saved;
		sb_leave();
		return ret;
	}
	/* Pinned: a concurrent free waits, so mincore sees this buffer's pages. */
	sb_registry_pin(ptr, &m, __func__);
	ret = sb_resident_walk(m.region.data, m.region.data_len, NULL, &resident);
	sb_registry_unpin(ptr);
	if (ret == 0) {
		st->size = m.size;
		st->mapped_bytes = m.region.data_len;
		st->resident_pages = resident;
		st->locked_pages = m.region.method == SECBUF_LOCK_NONE ? 0 : resident;
		st->lock_method = m.region.method;
		st->flags = m.flags;
		errno = saved;
	}
	sb_leave();
	return ret;
}
