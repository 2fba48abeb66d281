/*
 * SipHash-2-4, the keyed pseudo-random function of Aumasson and Bernstein
 * ("SipHash: a fast short-input PRF", INDOCRYPT 2012), written from the
 * paper.  Two compression rounds per 8-byte message word, four
 * finalization rounds, a 128-bit key, a 64-bit output.  Knowing outputs
 * for chosen inputs tells nothing about the key or about other outputs.
 *
 * The word interface hashes messages that are whole little-endian words,
 * which is all the library feeds it; sb_siphash24() takes any bytes and is
 * what the published test vectors check.
 *
 * The rounds can be run backwards: a state left in memory gives away the
 * key it started from.  A caller with a secret key wipes it (sb_prf does).
 */
#include <string.h>
#include "core.h"

static uint64_t rotl(uint64_t x, unsigned int b)
{
	return x << b | x >> (64 - b);
}

static void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[2] += v[3];
	v[1] = rotl(v[1], 13);
	v[3] = rotl(v[3], 16);
	v[1] ^= v[0];
	v[3] ^= v[2];
	v[0] = rotl(v[0], 32);
	v[2] += v[1];
	v[0] += v[3];
	v[1] = rotl(v[1], 17);
	v[3] = rotl(v[3], 21);
	v[1] ^= v[2];
	v[3] ^= v[0];
	v[2] = rotl(v[2], 32);
}

/* The four constants spell "somepseudorandomlygeneratedbytes". */
void sb_siphash_init(struct sb_siphash *s, const uint64_t key[2])
{
	s->v[0] = key[0] ^ 0x736f6d6570736575ull;
	s->v[1] = key[1] ^ 0x646f72616e646f6dull;
	s->v[2] = key[0] ^ 0x6c7967656e657261ull;
	s->v[3] = key[1] ^ 0x7465646279746573ull;
	s->len = 0;
}

static void compress(struct sb_siphash *s, uint64_t m)
{
	s->v[3] ^= m;
	sip_round(s->v);
	sip_round(s->v);
	s->v[0] ^= m;
}

void sb_siphash_word(struct sb_siphash *s, uint64_t m)
{
	compress(s, m);
	s->len += 8;
}

/* The last word holds the 0-7 bytes left over and the length mod 256. */
static uint64_t finish(struct sb_siphash *s, uint64_t tail)
{
	compress(s, tail | s->len << 56);
	s->v[2] ^= 0xff;
	sip_round(s->v);
	sip_round(s->v);
	sip_round(s->v);
	sip_round(s->v);
	return s->v[0] ^ s->v[1] ^ s->v[2] ^ s->v[3];
}

uint64_t sb_siphash_final(struct sb_siphash *s)
{
	return finish(s, 0);
}

static uint64_t load_le(const unsigned char *p, size_t n)
{
	uint64_t w = 0;
	size_t i;

	for (i = 0; i < n; i++)
		w |= (uint64_t)p[i] << (8 * i);
	return w;
}

uint64_t sb_siphash24(const uint64_t key[2], const void *msg, size_t len)
{
	const unsigned char *p = msg;
	struct sb_siphash s;

	sb_siphash_init(&s, key);
	for (; len >= 8; p += 8, len -= 8)
		sb_siphash_word(&s, load_le(p, 8));
	s.len += len;
	return finish(&s, load_le(p, len));
}
