/*
 * Canaries: 16 bytes in front of the pointer, and the same bytes repeated
 * over the padding between the end of the data and the trailing guard.
 * They come from the keyed PRF over the address and the allocation's
 * serial number, so knowing any number of them (a buffer over-read, a
 * core of a child) tells nothing about the key or about another buffer's
 * canary, including a later buffer at the same address.
 */
#include <string.h>
#include "guarded.h"

static void canary_bytes(const struct sb_meta *m, unsigned char out[SB_CANARY_SIZE])
{
	uint64_t in[3] = { (uintptr_t)m->user, m->serial, 0 }, w[2];

	w[0] = sb_prf(SB_PRF_CANARY, in, 3);
	in[2] = 1;
	w[1] = sb_prf(SB_PRF_CANARY, in, 3);
	memcpy(out, w, SB_CANARY_SIZE);
	sb_wipe(w, sizeof(w));
}

static size_t tail_len(const struct sb_meta *m)
{
	return m->region.data + m->region.data_len - (m->user + m->size);
}

void sb_canary_fill(const struct sb_meta *m)
{
	unsigned char c[SB_CANARY_SIZE];
	unsigned char *tail = m->user + m->size;
	size_t i;

	canary_bytes(m, c);
	memcpy(m->user - SB_CANARY_SIZE, c, SB_CANARY_SIZE);
	for (i = 0; i < tail_len(m); i++)
		tail[i] = c[i % SB_CANARY_SIZE];
	sb_wipe(c, sizeof(c));
}

void sb_canary_check(const struct sb_meta *m, const char *fn)
{
	unsigned char c[SB_CANARY_SIZE];
	const unsigned char *tail = m->user + m->size;
	size_t i;

	canary_bytes(m, c);
	if (memcmp(m->user - SB_CANARY_SIZE, c, SB_CANARY_SIZE) != 0)
		sb_misuse("%s(%p): canary in front of the buffer is corrupted "
			  "(buffer underflow)",
			  fn, (void *)m->user);
	for (i = 0; i < tail_len(m); i++)
		if (tail[i] != c[i % SB_CANARY_SIZE])
			sb_misuse("%s(%p): padding after byte %zu is corrupted "
				  "(buffer overflow)",
				  fn, (void *)m->user, m->size);
	sb_wipe(c, sizeof(c));
}
