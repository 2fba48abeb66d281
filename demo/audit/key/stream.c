/*
 * stream.c - a range of a file, a device or /proc/PID/mem, read into one
 * secbuf buffer in chunks of KEY_CHUNK and searched once.  The chunks
 * overlap: the bytes kept from one chunk to the next are the longest
 * context a hit's check needs before its anchor (ps->back) and after it
 * (ps->fwd), so that a copy across a chunk boundary is found, and found
 * once: an anchor is searched only when the bytes after it are in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <secbuf.h>

#include "key.h"

int key_reader_init(struct key_reader *r, const struct key_patterns *ps)
{
	r->size = KEY_CHUNK + ps->back + ps->fwd + 8;
	r->dirty = 0;
	r->drop_cache = 0;
	r->buf = secbuf_alloc(r->size);
	return r->buf ? 0 : -1;
}

void key_reader_wipe(struct key_reader *r)
{
	explicit_bzero(r->buf, r->dirty);
	r->dirty = 0;
}

void key_reader_free(struct key_reader *r)
{
	secbuf_free(r->buf); /* wipes */
	r->buf = NULL;
}

int key_stream(struct key_reader *r, const struct key_patterns *ps, int fd, uint64_t start,
	       uint64_t end, uint64_t *stop, key_hit_fn *fn, void *ctx)
{
	uint64_t base = start; /* the offset of buf[0] */
	uint64_t pos = start;  /* the next byte to read */
	uint64_t done = start; /* anchors before this were searched */
	size_t tail = 0;       /* bytes kept at buf[0] from the chunk before */
	int rc = 0, err = 0;

	while (pos < end) {
		size_t want = r->size - tail, have;
		uint64_t bend, limit, keep;
		ssize_t n;

		if (want > KEY_CHUNK)
			want = KEY_CHUNK;
		if (want > end - pos)
			want = (size_t)(end - pos);
		n = pread(fd, r->buf + tail, want, (off_t)pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -1 : 1;
			err = errno;
			break;
		}
		/* Read once, then dropped: a swap area's bytes have no business in the cache. */
		if (r->drop_cache)
			(void)posix_fadvise(fd, (off_t)pos, n,
					    POSIX_FADV_DONTNEED); /* advice only */
		have = tail + (size_t)n;
		if (have > r->dirty)
			r->dirty = have;
		pos += (uint64_t)n;
		bend = base + have;
		limit = pos >= end ? bend : bend - done > ps->fwd ? bend - ps->fwd : done;
		key_match(ps, r->buf, have, base, done, limit, fn, ctx);
		done = limit;
		keep = done - base > ps->back ? done - ps->back : base;
		tail = (size_t)(bend - keep);
		memmove(r->buf, r->buf + (keep - base), tail);
		base = keep;
	}
	/* Cut short: what was read up to there is searched to its end. */
	if (rc != 0 && tail)
		key_match(ps, r->buf, tail, base, done, base + tail, fn, ctx);
	*stop = pos;
	errno = err;
	return rc;
}
