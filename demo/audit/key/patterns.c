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
	p.next = -1;
	ps->p[ps->n++] = p;
	return 0;
}

int key_patterns_index(struct key_patterns *ps)
{
	size_t buckets;

	/*
	 * Sixty-four times as many buckets as patterns, 65536 at least: at
	 * almost every offset the bit of the bucket (a bitmap of 8 KiB, in
	 * the first-level cache) says there is nothing to compare, and the
	 * branch is predicted.
	 */
	for (ps->bits = 16; ((size_t)1 << ps->bits) < 64 * ps->n; ps->bits++)
		;
	buckets = (size_t)1 << ps->bits;
	free(ps->heads);
	free(ps->filter);
	ps->heads = malloc(buckets * sizeof(*ps->heads));
	ps->filter = calloc(buckets / 64, sizeof(*ps->filter));
	if (!ps->heads || !ps->filter)
		return -1;
	for (size_t b = 0; b < buckets; b++)
		ps->heads[b] = -1;
	ps->back = ps->fwd = 0;
	for (size_t k = ps->n; k-- > 0;) {
		struct key_pattern *p = &ps->p[k];
		size_t b = (size_t)((p->head * 0x9e3779b97f4a7c15ULL) >> (64 - ps->bits));
		/* Before the anchor: the encoding's start and an EC scalar's leading zeros. */
		size_t back = p->at + (p->fixed > p->len ? p->fixed - p->len : 0);
		/* After: the encoding's end and a BIGNUM's zero padding to 8 bytes. */
		size_t fwd = p->len - p->at + 8;

		p->next = ps->heads[b];
		ps->heads[b] = (int)k;
		ps->filter[b / 64] |= 1ULL << (b % 64);
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
	memset(ps, 0, sizeof(*ps));
}
