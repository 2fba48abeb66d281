/*
 * The sealed bytes (seal.h has the layout): their length, their header,
 * the key's derivation and each chunk's AEAD.  Every secret is cut into
 * chunks so that one of any size opens through a locked buffer of one
 * chunk (secbuf_sealed_each()), and each chunk carries its own tag.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "seal.h"

static const unsigned char magic[4] = { 'S', 'B', 'S', '1' };
/* BLAKE2b's personalisation: these keys are for nothing but this. */
static const unsigned char personal[crypto_generichash_blake2b_PERSONALBYTES] = "secbuf-seal v1";

int sbs_sealed_len(size_t size, size_t *len)
{
	size_t room;

	if (size > SIZE_MAX - SBS_HEADER - SBS_NONCE) {
		errno = ENOMEM;
		return -1;
	}
	room = SIZE_MAX - SBS_HEADER - SBS_NONCE - size;
	if (sbs_chunks(size) > room / SBS_TAG) {
		errno = ENOMEM;
		return -1;
	}
	*len = SBS_HEADER + SBS_NONCE + size + sbs_chunks(size) * SBS_TAG;
	/* No object may be larger (pointer differences); malloc would refuse it anyway. */
	if (*len > PTRDIFF_MAX) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void sbs_header_write(unsigned char *blob, size_t size, unsigned flags)
{
	int i;

	memcpy(blob, magic, sizeof(magic));
	blob[4] = (unsigned char)flags;
	blob[5] = blob[6] = blob[7] = 0;
	for (i = 0; i < 8; i++)
		blob[8 + i] = (unsigned char)((uint64_t)size >> (8 * i));
}

int sbs_header_read(const unsigned char *blob, size_t len, size_t *size, unsigned *flags)
{
	uint64_t n = 0;
	size_t want;
	int i;

	if (len < SBS_HEADER + SBS_NONCE + SBS_TAG || memcmp(blob, magic, sizeof(magic)) ||
	    (blob[4] & ~SBS_FLAGS) || blob[5] || blob[6] || blob[7])
		goto bad;
	for (i = 0; i < 8; i++)
		n |= (uint64_t)blob[8 + i] << (8 * i);
	if (n == 0 || n > SIZE_MAX || sbs_sealed_len((size_t)n, &want) < 0 || want != len)
		goto bad;
	*size = (size_t)n;
	*flags = blob[4];
	return 0;
bad:
	errno = EBADMSG;
	return -1;
}

/*
 * The whole prekey goes through the hash for every key: a reader who got
 * any bit of it wrong gets an unrelated key.  The salt makes each sealed
 * secret's key its own, so chunk nonces may be counters under it.
 */
void sbs_derive(unsigned char key[SBS_KEY], const unsigned char *prekey,
		const unsigned char nonce[SBS_NONCE])
{
	/* Cannot fail: lengths within BLAKE2b's bounds, no key. */
	(void)crypto_generichash_blake2b_salt_personal(key, SBS_KEY, prekey, SECBUF_SEAL_PREKEY,
						       NULL, 0, nonce, personal);
}

static unsigned char *chunk_at(const unsigned char *blob, size_t i)
{
	return (unsigned char *)blob + SBS_HEADER + SBS_NONCE + i * (SECBUF_SEAL_CHUNK + SBS_TAG);
}

/* Chunk i's nonce and associated data (the header, then i). */
static void chunk_params(const unsigned char *blob, size_t i, const unsigned char *nonce,
			 unsigned char n[SBS_NONCE], unsigned char ad[SBS_HEADER + 8])
{
	int b;

	memcpy(n, nonce, SBS_NONCE);
	memcpy(ad, blob, SBS_HEADER);
	for (b = 0; b < 8; b++) {
		n[SBS_NONCE - 8 + b] ^= (unsigned char)((uint64_t)i >> (8 * b));
		ad[SBS_HEADER + b] = (unsigned char)((uint64_t)i >> (8 * b));
	}
}

void sbs_chunk_seal(unsigned char *blob, size_t size, size_t i, const unsigned char *nonce,
		    const unsigned char *m, const unsigned char *key)
{
	unsigned char n[SBS_NONCE], ad[SBS_HEADER + 8], *c = chunk_at(blob, i);
	size_t len = sbs_chunk_len(size, i);

	chunk_params(blob, i, nonce, n, ad);
	/* Cannot fail: a chunk is far below the cipher's limit. */
	(void)crypto_aead_xchacha20poly1305_ietf_encrypt_detached(c, c + len, NULL, m, len, ad,
								  sizeof(ad), NULL, n, key);
}

int sbs_chunk_open(const unsigned char *blob, size_t size, size_t i, const unsigned char *nonce,
		   unsigned char *m, const unsigned char *key)
{
	unsigned char n[SBS_NONCE], ad[SBS_HEADER + 8], *c = chunk_at(blob, i);
	size_t len = sbs_chunk_len(size, i);

	chunk_params(blob, i, nonce, n, ad);
	/*
	 * With m NULL, libsodium checks the tag and decrypts nothing; on a
	 * bad tag it never writes plaintext, and zeroes m.
	 */
	if (crypto_aead_xchacha20poly1305_ietf_decrypt_detached(m, NULL, c, len, c + len, ad,
								sizeof(ad), n, key) == 0)
		return 0;
	if (m)
		sodium_memzero(m, len);
	errno = EBADMSG;
	return -1;
}

int sbs_reseal(unsigned char *blob, size_t size, const unsigned char *prekey, unsigned char *keys,
	       unsigned char *scratch)
{
	unsigned char old[SBS_NONCE], *nonce = sbs_nonce(blob);
	size_t i, n = sbs_chunks(size);
	int ret = 0;

	/* All of it first: a secret that does not open is left for open to refuse. */
	for (i = 0; i < n; i++)
		if (sbs_chunk_open(blob, size, i, nonce, NULL, keys) < 0)
			return -1;
	memcpy(old, nonce, SBS_NONCE);
	randombytes_buf(nonce, SBS_NONCE);
	sbs_derive(keys + SBS_KEY, prekey, nonce);
	for (i = 0; i < n && ret == 0; i++) {
		/* Checked above: only a writer racing the lock could fail it here. */
		ret = sbs_chunk_open(blob, size, i, old, scratch, keys);
		if (ret == 0)
			sbs_chunk_seal(blob, size, i, nonce, scratch, keys + SBS_KEY);
		sodium_memzero(scratch, sbs_chunk_len(size, i));
	}
	sodium_memzero(keys + SBS_KEY, SBS_KEY);
	return ret;
}
