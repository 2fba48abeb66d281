/* keystore.c - key lifecycle and the crypto that touches secret keys. */
#include "keystore.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secbuf.h"

static size_t sk_bytes(unsigned type)
{
	return type == KD_KEY_ED25519 ? crypto_sign_SECRETKEYBYTES : crypto_box_SECRETKEYBYTES;
}

/* Open a key's secret for one operation; every caller pairs it with sk_close(). */
static int sk_open(const struct key *k, int access)
{
	if (secbuf_protect(k->sk, access) == 0)
		return 0;
	fprintf(stderr, "secbufd: secbuf_protect: %s\n", strerror(errno));
	return -1;
}

static void sk_close(const struct key *k)
{
	if (secbuf_protect(k->sk, SECBUF_NOACCESS) != 0) {
		/* Leaving a secret readable would silently weaken every later run. */
		fprintf(stderr, "secbufd: cannot revoke access to key %s: %s\n", k->name, strerror(errno));
		abort();
	}
}

void ks_init(struct keystore *ks, unsigned secbuf_flags)
{
	memset(ks, 0, sizeof(*ks));
	ks->flags = secbuf_flags;
}

const struct key *ks_find(const struct keystore *ks, const uint8_t *name, size_t nlen)
{
	for (unsigned i = 0; i < ks->n; i++)
		if (strlen(ks->keys[i]->name) == nlen && !memcmp(ks->keys[i]->name, name, nlen))
			return ks->keys[i];
	return NULL;
}

/* A new, unfilled key with its secret buffer open for writing. */
static int key_new(struct keystore *ks, unsigned type, const uint8_t *name, size_t nlen, struct key **out)
{
	struct secbuf_stat st;
	struct key *k;

	if ((type != KD_KEY_ED25519 && type != KD_KEY_X25519) || !kd_name_valid(name, nlen))
		return KD_E_INVAL;
	if (ks_find(ks, name, nlen))
		return KD_E_EXISTS;
	if (ks->n == KEYSTORE_MAX)
		return KD_E_BUSY;
	k = calloc(1, sizeof(*k));
	if (!k)
		return KD_E_NOMEM;
	k->sk = secbuf_alloc_flags(sk_bytes(type), ks->flags);
	if (!k->sk) {
		free(k);
		return KD_E_NOMEM;
	}
	memcpy(k->name, name, nlen);
	if (ks->flags & SECBUF_BEST_EFFORT && secbuf_stat(k->sk, &st) == 0 && st.lock_method == SECBUF_LOCK_NONE)
		fprintf(stderr, "secbufd: key %s is UNLOCKED: it may be swapped out (--allow-unlocked)\n", k->name);
	k->type = type;
	*out = k;
	return KD_OK;
}

static const struct key *key_add(struct keystore *ks, struct key *k)
{
	sk_close(k);
	ks->keys[ks->n++] = k;
	return k;
}

int ks_generate(struct keystore *ks, unsigned type, const uint8_t *name, size_t nlen, const struct key **out)
{
	struct key *k;
	int st = key_new(ks, type, name, nlen, &k);

	if (st != KD_OK)
		return st;
	if (type == KD_KEY_ED25519)
		crypto_sign_keypair(k->pk, k->sk);
	else
		crypto_box_keypair(k->pk, k->sk);
	*out = key_add(ks, k);
	return KD_OK;
}

int ks_import(struct keystore *ks, unsigned type, const uint8_t *name, size_t nlen,
	      const uint8_t *secret, size_t slen, const struct key **out)
{
	struct key *k;
	int st;

	if (slen != KD_SECRET_BYTES)
		return KD_E_INVAL;
	st = key_new(ks, type, name, nlen, &k);
	if (st != KD_OK)
		return st;
	if (type == KD_KEY_ED25519) {
		crypto_sign_seed_keypair(k->pk, k->sk, secret);
	} else {
		memcpy(k->sk, secret, slen);
		crypto_scalarmult_base(k->pk, k->sk);
	}
	*out = key_add(ks, k);
	return KD_OK;
}

static void key_destroy(struct key *k)
{
	if (sk_open(k, SECBUF_READWRITE) == 0)
		sodium_memzero(k->sk, sk_bytes(k->type));
	secbuf_free(k->sk);
	free(k);
}

int ks_delete(struct keystore *ks, const uint8_t *name, size_t nlen)
{
	for (unsigned i = 0; i < ks->n; i++) {
		struct key *k = ks->keys[i];

		if (strlen(k->name) != nlen || memcmp(k->name, name, nlen))
			continue;
		key_destroy(k);
		ks->keys[i] = ks->keys[--ks->n];
		return KD_OK;
	}
	return KD_E_NOKEY;
}

int ks_sign(const struct key *k, const uint8_t *msg, size_t len, uint8_t *sig)
{
	int rc;

	if (k->type != KD_KEY_ED25519)
		return KD_E_KEYTYPE;
	if (sk_open(k, SECBUF_READONLY))
		return KD_E_NOMEM;
	rc = crypto_sign_detached(sig, NULL, msg, len, k->sk);
	sk_close(k);
	return rc == 0 ? KD_OK : KD_E_INVAL;
}

int ks_verify(const struct key *k, const uint8_t *msg, size_t len, const uint8_t *sig, size_t siglen)
{
	if (k->type != KD_KEY_ED25519)
		return KD_E_KEYTYPE;
	if (siglen != KD_SIG_BYTES)
		return KD_E_INVAL;
	return crypto_sign_verify_detached(sig, msg, len, k->pk) == 0 ? KD_OK : KD_E_BADSIG;
}

int ks_seal(const struct key *k, const uint8_t *msg, size_t len, uint8_t *out)
{
	if (k->type != KD_KEY_X25519)
		return KD_E_KEYTYPE;
	return crypto_box_seal(out, msg, len, k->pk) == 0 ? KD_OK : KD_E_INVAL;
}

int ks_open(const struct key *k, const uint8_t *box, size_t len, uint8_t *out)
{
	int rc;

	if (k->type != KD_KEY_X25519)
		return KD_E_KEYTYPE;
	if (len < KD_SEAL_BYTES)
		return KD_E_DECRYPT;
	if (sk_open(k, SECBUF_READONLY))
		return KD_E_NOMEM;
	rc = crypto_box_seal_open(out, box, len, k->pk, k->sk);
	sk_close(k);
	return rc == 0 ? KD_OK : KD_E_DECRYPT;
}

void ks_wipe(struct keystore *ks)
{
	for (unsigned i = 0; i < ks->n; i++) {
		struct key *k = ks->keys[i];

		if (sk_open(k, SECBUF_READWRITE) == 0)
			sodium_memzero(k->sk, sk_bytes(k->type));
	}
}

void ks_free(struct keystore *ks)
{
	for (unsigned i = 0; i < ks->n; i++)
		key_destroy(ks->keys[i]);
	ks->n = 0;
}
