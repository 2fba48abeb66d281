/*
 * patterns.c - what --key looks for, held masked.  Every encoding and its
 * anchor is stored XORed with one random mask, both in secbuf memory
 * (locked, out of core dumps, wiped when freed); no plain copy of a
 * pattern exists once it is added.  The mask is the same for all of them
 * so that one masked word of memory can be looked up in a single hash
 * table: the search is one pass for every pattern (match.c).  Masking
 * keeps plain copies out of memory; it is not encryption (the mask sits
 * beside the patterns).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <secbuf.h>

#include "key.h"

int key_patterns_init(struct key_patterns *ps)
{
	size_t got = 0;
	ssize_t n;

	memset(ps, 0, sizeof(*ps));
	ps->mask = secbuf_alloc(KEY_VALUE_MAX);
	if (!ps->mask)
		return -1;
	/* getrandom() may return less than asked beyond 256 bytes. */
	while (got < KEY_VALUE_MAX) {
		n = getrandom(ps->mask + got, KEY_VALUE_MAX - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* Room for more bytes in the store: a new buffer, the masked bytes copied. */
static int store_room(struct key_patterns *ps, size_t more)
{
	size_t size = ps->size ? ps->size : 16 << 10;
	uint8_t *bigger;

	if (ps->used + more <= ps->size)
		return 0;
	while (size < ps->used + more)
		size *= 2;
	bigger = secbuf_alloc(size);
	if (!bigger)
		return -1;
	if (ps->used)
		memcpy(bigger, ps->store, ps->used);
	secbuf_free(ps->store);
	ps->store = bigger;
	ps->size = size;
	return 0;
}

static void put_masked(struct key_patterns *ps, const uint8_t *plain, size_t len)
{
	for (size_t i = 0; i < len; i++)
		ps->store[ps->used + i] = plain[i] ^ ps->mask[i];
	ps->used += len;
}

/* Whether a pattern of these plain bytes is there already (compared masked). */
static int known(const struct key_patterns *ps, enum key_order order, const uint8_t *plain,
		 size_t len)
{
	for (size_t k = 0; k < ps->n; k++) {
		const struct key_pattern *p = &ps->p[k];
		size_t i;

		if (p->order != order || p->len != len)
			continue;
		for (i = 0; i < len; i++)
			if ((plain[i] ^ ps->mask[i]) != ps->store[p->whole_off + i])
				break;
		if (i == len)
			return 1;
	}
	return 0;
}

int key_patterns_add(struct key_patterns *ps, const struct key_pattern *meta, const uint8_t *plain,
		     size_t len, size_t anchor_max)
{
	struct key_pattern p = *meta;

	if (len < 8 || len > KEY_VALUE_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (known(ps, meta->order, plain, len))
		return 0; /* the same key given twice, in two files */
	p.len = len;
	p.alen = len <= anchor_max ? len : KEY_WINDOW;
	p.at = (len - p.alen) / 2;
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 32;
		struct key_pattern *grown = realloc(ps->p, cap * sizeof(*grown));

		if (!grown)
			return -1;
		ps->p = grown;
		ps->cap = cap;
	}
	if (store_room(ps, len + p.alen) < 0)
		return -1;
	p.whole_off = ps->used;
	put_masked(ps, plain, len);
	p.anchor_off = ps->used;
	put_masked(ps, plain + p.at, p.alen);
	memcpy(&p.head, ps->store + p.anchor_off, sizeof(p.head));
	ps->p[ps->n++] = p;
	return 0;
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* At most this many bytes between probes: the table grows with the stride. */
#define KEY_STRIDE_MAX 24

int key_patterns_index(struct key_patterns *ps)
{
	const uint64_t m64 = load64(ps->mask);
	size_t buckets, nprobe, q = 0;

	/*
	 * A probe every stride bytes meets every copy of an anchor of alen
	 * bytes if each of the anchor's windows at offsets 0 to stride - 1
	 * is in the table and stride + 7 <= alen: the probe that falls in
	 * the copy's first stride bytes finds its window.  So the memory is
	 * hashed at one offset in stride, not at every one.
	 */
	ps->stride = KEY_STRIDE_MAX;
	for (size_t k = 0; k < ps->n; k++)
		if (ps->p[k].alen - 7 < ps->stride)
			ps->stride = ps->p[k].alen - 7;
	nprobe = ps->n * ps->stride;
	/*
	 * Sixty-four times as many buckets as probes, 65536 at least and 2^22
	 * at most: at almost every probe the bit of the bucket (the bitmap,
	 * 8 KiB to 512 KiB, in cache) says there is nothing to compare.
	 */
	for (ps->bits = 16; ps->bits < 22 && ((size_t)1 << ps->bits) < 64 * nprobe; ps->bits++)
		;
	buckets = (size_t)1 << ps->bits;
	free(ps->heads);
	free(ps->filter);
	free(ps->probe);
	ps->heads = malloc(buckets * sizeof(*ps->heads));
	ps->filter = calloc(buckets / 64, sizeof(*ps->filter));
	ps->probe = malloc((nprobe ? nprobe : 1) * sizeof(*ps->probe));
	if (!ps->heads || !ps->filter || !ps->probe)
		return -1;
	for (size_t b = 0; b < buckets; b++)
		ps->heads[b] = -1;
	ps->back = ps->fwd = 0;
	for (size_t k = ps->n; k-- > 0;) {
		struct key_pattern *p = &ps->p[k];
		/* Before the anchor: the encoding's start and an EC scalar's leading zeros. */
		size_t back = p->at + (p->fixed > p->len ? p->fixed - p->len : 0);
		/* After: the encoding's end and a BIGNUM's zero padding to 8 bytes. */
		size_t fwd = p->len - p->at + 8;

		for (size_t off = 0; off < ps->stride; off++, q++) {
			/* Masked as memory is at a probe: by the mask's first 8 bytes. */
			uint64_t w = load64(ps->store + p->anchor_off + off) ^
				     load64(ps->mask + off) ^ m64;
			size_t b = (size_t)((w * 0x9e3779b97f4a7c15ULL) >> (64 - ps->bits));

			ps->probe[q] =
				(struct key_probe){ w, (unsigned)k, (unsigned)off, ps->heads[b] };
			ps->heads[b] = (int)q;
			ps->filter[b / 64] |= 1ULL << (b % 64);
		}
		ps->back = back > ps->back ? back : ps->back;
		ps->fwd = fwd > ps->fwd ? fwd : ps->fwd;
	}
	return 0;
}

void key_patterns_free(struct key_patterns *ps)
{
	secbuf_free(ps->store);
	secbuf_free(ps->mask);
	free(ps->p);
	free(ps->heads);
	free(ps->filter);
	free(ps->probe);
	memset(ps, 0, sizeof(*ps));
}
