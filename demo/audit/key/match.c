/*
 * match.c - one pass over a buffer for every pattern at once.  Every
 * stride bytes (the shortest anchor less 7: 25 for 32-byte anchors) the
 * next 8 bytes, XORed with the mask's first 8, are hashed into the table
 * of every anchor's windows at its first stride offsets; a bucket's
 * probes name a pattern and where its copy would start, which is then
 * compared masked, byte for byte, over the whole anchor, so no hit rests
 * on the 8 bytes alone.
 * Memory is never unmasked into a copy: each byte is XORed with the mask
 * on its way to the comparison.  A hit on a window is then held against
 * the whole value around it, and named by its layout.
 */
#include <string.h>

#include "key.h"

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Whether mem holds what masked is, under mask; no plain copy made. */
static int same_masked(const uint8_t *mem, const uint8_t *masked, const uint8_t *mask, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((uint8_t)(mem[i] ^ mask[i]) != masked[i])
			return 0;
	return 1;
}

static int zeros(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/*
 * What the anchor hit at P (absolute) is: the whole encoding, where buf
 * holds it (then its layout: an EC scalar zero-padded to its field, or
 * BIGNUM limbs: aligned, zero-padded to the word), else the window alone.
 */
static void classify(const struct key_patterns *ps, size_t k, const uint8_t *buf, size_t have,
		     uint64_t base, uint64_t P, struct key_hit *h)
{
	const struct key_pattern *p = &ps->p[k];
	static const enum key_form plain_form[] = { [ORDER_BE] = FORM_BE,
						    [ORDER_LE] = FORM_LE,
						    [ORDER_RAW] = FORM_RAW,
						    [ORDER_TEXT] = FORM_TEXT };
	uint64_t s = P - p->at;
	size_t i = (size_t)(s - base), pad;

	memset(h, 0, sizeof(*h));
	h->pattern = (unsigned)k;
	h->last_line = p->line;
	h->form = plain_form[p->order];
	h->at = P;
	h->span = p->alen;
	if (P < base + p->at || i + p->len > have ||
	    !same_masked(buf + i, ps->store + p->whole_off, ps->mask, p->len))
		return;
	h->whole = 1;
	h->at = s;
	h->span = p->len;
	if (p->order == ORDER_BE && p->fixed > p->len) {
		pad = p->fixed - p->len;
		if (i >= pad && zeros(buf + i - pad, pad)) {
			h->form = FORM_BE_FIXED;
			h->at = s - pad;
			h->span = p->fixed;
		}
	} else if (p->order == ORDER_LE) {
		/* A BIGNUM's top word is zero-extended, and its words are aligned. */
		pad = (8 - p->len % 8) % 8;
		if (s % 8 == 0 && i + p->len + pad <= have && zeros(buf + i + p->len, pad)) {
			h->form = FORM_LIMBS64;
			h->span = p->len + pad;
			return;
		}
		pad = (4 - p->len % 4) % 4;
		if (s % 4 == 0 && i + p->len + pad <= have && zeros(buf + i + p->len, pad)) {
			h->form = FORM_LIMBS32;
			h->span = p->len + pad;
		}
	}
}

void key_match(const struct key_patterns *ps, const uint8_t *buf, size_t have, uint64_t base,
	       uint64_t from, uint64_t limit, key_hit_fn *fn, void *ctx)
{
	const uint64_t m64 = load64(ps->mask);
	const unsigned shift = 64 - ps->bits;
	const uint64_t st = ps->stride;
	uint64_t at, end;
	struct key_hit h;

	if (have < 8 || !ps->n || !st || from < base || from >= limit)
		return;
	/*
	 * Probes at the absolute offsets that are multiples of the stride, so
	 * that chunks agree: a copy that starts in [from, limit) is met by
	 * the probe in its first stride bytes, which may lie past limit.
	 */
	end = limit + st - 1 < base + have - 7 ? limit + st - 1 : base + have - 7;
	for (at = (from + st - 1) / st * st; at < end; at += st) {
		size_t i = (size_t)(at - base);
		uint64_t w = load64(buf + i) ^ m64;
		size_t b = (size_t)((w * 0x9e3779b97f4a7c15ULL) >> shift);

		if (!(ps->filter[b / 64] >> (b % 64) & 1))
			continue;
		for (int q = ps->heads[b]; q >= 0; q = ps->probe[q].next) {
			const struct key_probe *pr = &ps->probe[q];
			const struct key_pattern *p = &ps->p[pr->k];
			size_t s;

			if (pr->w != w || i < pr->off)
				continue;
			s = i - pr->off; /* where the copy would start, in buf */
			if (base + s < from || base + s >= limit || s + p->alen > have ||
			    !same_masked(buf + s, ps->store + p->anchor_off, ps->mask, p->alen))
				continue;
			classify(ps, pr->k, buf, have, base, base + s, &h);
			fn(ctx, &h);
		}
	}
}
