/*
 * keystore.h - named Ed25519 and X25519 keys whose secret halves are kept
 * sealed (libsecbuf-seal: encrypted, in ordinary memory, at no cost in
 * locked memory) and opened into a locked secbuf buffer only for the
 * operation that needs them, then wiped.  Functions return a KD_OK /
 * KD_E_* status from protocol.h.
 */
#ifndef SECBUFD_KEYSTORE_H
#define SECBUFD_KEYSTORE_H

#include <stddef.h>
#include <stdint.h>
#include <sodium.h>
#include <secbuf-seal.h>

#include "../protocol/protocol.h"

#define KEYSTORE_MAX	256
#define KD_PK_BYTES	32	/* both key types have 32-byte public keys */
#define KD_SECRET_BYTES	32	/* what import takes: an Ed25519 seed or an X25519 secret key */
#define KD_SIG_BYTES	crypto_sign_BYTES
#define KD_SEAL_BYTES	crypto_box_SEALBYTES

struct key {
	char name[KD_NAME_MAX + 1];
	uint8_t type;
	uint8_t pk[KD_PK_BYTES];
	secbuf_sealed *sk; /* libsodium's secret key, sealed */
};

struct keystore {
	unsigned flags; /* how keys are made and opened: SECBUF_BEST_EFFORT, SECBUF_SECRET */
	unsigned n;
	struct key *keys[KEYSTORE_MAX];
};

/*
 * secbuf_flags: SECBUF_BEST_EFFORT and SECBUF_SECRET, for the buffer a key
 * is made in and for every open of it.
 */
void ks_init(struct keystore *ks, unsigned secbuf_flags);

/* The bytes a key's secret takes when open (its type's libsodium secret key). */
size_t ks_secret_bytes(unsigned type);

/* New key from randomness, or from a secret: a 32-byte Ed25519 seed or X25519 secret key. */
int ks_generate(struct keystore *ks, unsigned type, const uint8_t *name, size_t nlen, const struct key **out);
int ks_import(struct keystore *ks, unsigned type, const uint8_t *name, size_t nlen,
	      const uint8_t *secret, size_t slen, const struct key **out);

const struct key *ks_find(const struct keystore *ks, const uint8_t *name, size_t nlen);
int ks_delete(struct keystore *ks, const uint8_t *name, size_t nlen);

int ks_sign(const struct key *k, const uint8_t *msg, size_t len, uint8_t *sig);
int ks_verify(const struct key *k, const uint8_t *msg, size_t len, const uint8_t *sig, size_t siglen);
int ks_seal(const struct key *k, const uint8_t *msg, size_t len, uint8_t *out);
int ks_open(const struct key *k, const uint8_t *box, size_t len, uint8_t *out);

/*
 * ks_wipe frees every key's sealed bytes (no plaintext is held between
 * operations, so there is none to zero); ks_free then frees the keys.
 */
void ks_wipe(struct keystore *ks);
void ks_free(struct keystore *ks);

#endif
