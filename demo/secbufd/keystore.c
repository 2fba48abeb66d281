/*
 * keystore.c - key lifecycle and the crypto that touches secret keys.
 *
 * A key's secret is made in a locked secbuf buffer, sealed there
 * (secbuf_seal() wipes it) and the buffer freed: at rest it is ciphertext
 * in ordinary memory.  sign and open open it with secbuf_sealed_use(),
 * which hands it to a callback in a new locked buffer and wipes and frees
 * that buffer when the callback returns; verify and seal need only the
 * public key and open nothing.
 */
#include "keystore.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secbuf.h"

/* Test hook (SECBUFD_TEST_STOP_IN_USE): stop while a key is open, so that a test reads it then. */
static int stop_in_use;

size_t ks_secret_bytes(unsigned type)
{
	return type == KD_KEY_ED25519 ? crypto_sign_SECRETKEYBYTES : crypto_box_SECRETKEYBYTES;
}

void ks_init(struct keystore *ks, unsigned secbuf_flags)
{
	memset(ks, 0, sizeof(*ks));
	ks->flags = secbuf_flags & (SECBUF_BEST_EFFORT | SECBUF_SECRET);
	stop_in_use = getenv("SECBUFD_TEST_STOP_IN_USE") != NULL;
}

const struct key *ks_find(const struct keystore *ks, const uint8_t *name, size_t nlen)
{
	for (unsigned i = 0; i < ks->n; i++)
		if (strlen(ks->keys[i]->name) == nlen && !memcmp(ks->keys[i]->name, name, nlen))
			return ks->keys[i];
	return NULL;
}

/*
 * A new key, unsealed: its secret's buffer, locked, for the caller to fill
 * and key_add() to seal.  KD_E_NOMEM keeps errno.
 */
static int key_new(struct keystore *ks, unsigned type, const uint8_t *name, size_t nlen,
		   struct key **out, unsigned char **sk)
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
	*sk = secbuf_alloc_flags(ks_secret_bytes(type), ks->flags);
	if (!*sk) {
		int err = errno;

		free(k);
		errno = err;
		return KD_E_NOMEM;
	}
	memcpy(k->name, name, nlen);
	/* With --allow-unlocked, what it is made in is what its opens get: said once, here. */
	if (ks->flags & SECBUF_BEST_EFFORT && secbuf_stat(*sk, &st) == 0 &&
	    st.lock_method == SECBUF_LOCK_NONE)
		fprintf(stderr,
			"secbufd: key %s is UNLOCKED while in use: it may be swapped out (--allow-unlocked)\n",
			k->name);
	k->type = type;
	*out = k;
	return KD_OK;
}

/*
 * Seal the secret sk holds (which wipes it), free its buffer and add the
 * key; or, when sealing fails, drop the key: KD_E_NOMEM with errno.
 */
static int key_add(struct keystore *ks, struct key *k, unsigned char *sk, const struct key **out)
{
	size_t len = ks_secret_bytes(k->type);
	int err;

	k->sk = secbuf_seal(sk, len, ks->flags);
	err = errno;
	secbuf_free(sk); /* wiped by the seal; if it failed, by secbuf_free */
	if (!k->sk) {
		free(k);
		errno = err;
		return KD_E_NOMEM;
	}
	ks->keys[ks->n++] = k;
	*out = k;
	return KD_OK;
}

int ks_generate(struct keystore *ks, unsigned type, const uint8_t *name, size_t nlen, const struct key **out)
{
	unsigned char *sk;
	struct key *k;
	int st = key_new(ks, type, name, nlen, &k, &sk);

	if (st != KD_OK)
		return st;
	if (type == KD_KEY_ED25519)
		crypto_sign_keypair(k->pk, sk);
	else
		crypto_box_keypair(k->pk, sk);
	return key_add(ks, k, sk, out);
}

int ks_import(struct keystore *ks, unsigned type, const uint8_t *name, size_t nlen,
	      const uint8_t *secret, size_t slen, const struct key **out)
{
	unsigned char *sk;
	struct key *k;
	int st;

	if (slen != KD_SECRET_BYTES)
		return KD_E_INVAL;
	st = key_new(ks, type, name, nlen, &k, &sk);
	if (st != KD_OK)
		return st;
	if (type == KD_KEY_ED25519) {
		crypto_sign_seed_keypair(k->pk, sk, secret);
	} else {
		memcpy(sk, secret, slen);
		crypto_scalarmult_base(k->pk, sk);
	}
	return key_add(ks, k, sk, out);
}

static void key_destroy(struct key *k)
{
	secbuf_sealed_free(k->sk);
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

/* One operation with a key open: its arguments, and libsodium's result. */
struct use {
	const uint8_t *in;
	size_t len;
	const uint8_t *pk;
	uint8_t *out;
	int rc;
};

static void in_use(void)
{
	if (stop_in_use)
		raise(SIGSTOP);
}

static int sign_with(void *sk, size_t len, void *arg)
{
	struct use *u = arg;

	(void)len;
	u->rc = crypto_sign_detached(u->out, NULL, u->in, u->len, sk);
	in_use();
	return 0;
}

static int open_with(void *sk, size_t len, void *arg)
{
	struct use *u = arg;

	(void)len;
	u->rc = crypto_box_seal_open(u->out, u->in, u->len, u->pk, sk);
	in_use();
	return 0;
}

/*
 * Open k's secret for fn (which sets u->rc): 0, or -1 with errno when it
 * cannot be opened (no locked memory for it; EBADMSG or ENOKEY would say
 * the daemon's own state is broken).
 */
static int key_use(const struct key *k, int (*fn)(void *, size_t, void *), struct use *u)
{
	int err;

	if (secbuf_sealed_use(k->sk, fn, u) == 0)
		return 0;
	err = errno;
	fprintf(stderr, "secbufd: key %s cannot be opened: %s\n", k->name, strerror(err));
	errno = err; /* for the reply's message */
	return -1;
}

int ks_sign(const struct key *k, const uint8_t *msg, size_t len, uint8_t *sig)
{
	struct use u = { .in = msg, .len = len, .out = sig };

	if (k->type != KD_KEY_ED25519)
		return KD_E_KEYTYPE;
	if (key_use(k, sign_with, &u) < 0)
		return KD_E_NOMEM;
	return u.rc == 0 ? KD_OK : KD_E_INVAL;
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
	struct use u = { .in = box, .len = len, .pk = k->pk, .out = out };

	if (k->type != KD_KEY_X25519)
		return KD_E_KEYTYPE;
	if (len < KD_SEAL_BYTES)
		return KD_E_DECRYPT;
	if (key_use(k, open_with, &u) < 0)
		return KD_E_NOMEM;
	return u.rc == 0 ? KD_OK : KD_E_DECRYPT;
}

void ks_wipe(struct keystore *ks)
{
	for (unsigned i = 0; i < ks->n; i++) {
		secbuf_sealed_free(ks->keys[i]->sk);
		ks->keys[i]->sk = NULL;
	}
}

void ks_free(struct keystore *ks)
{
	for (unsigned i = 0; i < ks->n; i++)
		key_destroy(ks->keys[i]);
	ks->n = 0;
}
