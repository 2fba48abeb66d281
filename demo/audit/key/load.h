/*
 * load.h - a key's side of --key: its file read into secbuf memory
 * (infile.c), decoded by libcrypto (decode.c), its private values turned
 * into masked patterns (values.c).  Only these files see OpenSSL's types.
 */
#ifndef SECBUF_AUDIT_KEY_LOAD_H
#define SECBUF_AUDIT_KEY_LOAD_H

#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

#include "key.h"

/* A file's bytes in secbuf memory, NUL after the last. */
struct key_blob {
	uint8_t *data;
	size_t len, size;
	const char *path; /* as given, for messages */
};

/*
 * Read path, a regular file or a pipe (--key <(openssl pkey ...)), of
 * KEY_FILE_MAX bytes at most, into secbuf memory; never this process's
 * standard input, never a terminal, and a pipe that stays silent for
 * 30 s is an error rather than a wait.  0, or -1 with the reason in why.
 */
int key_file_read(const char *path, struct key_blob *b, char *why, size_t size);
/* Wipe and free. */
void key_blob_free(struct key_blob *b);

/*
 * Route libcrypto's allocations through functions that wipe each block
 * before it is freed, so that what decoding leaves behind holds no key.
 * Must come before any other libcrypto call: 0, or -1.
 */
int key_crypto_init(void);
/*
 * Decode a private key, PEM or DER, PKCS#8 or traditional (PKCS#1, SEC1),
 * with a passphrase callback that refuses: 0 with *pkey and its form
 * ("PEM PKCS#8"), or -1 with the reason in why ("encrypted: ...").
 */
int key_decode(const struct key_blob *b, EVP_PKEY **pkey, char *form, size_t fsize, char *why,
	       size_t wsize);
/* "SHA256:" and the hex of the SHA-256 of its DER public key: 0, or -1. */
int key_fingerprint(EVP_PKEY *pkey, char *out, size_t size);
/*
 * Zero the stack below the caller's frame, where libcrypto's frames were:
 * what its functions left in their locals is gone before any scan.
 */
void key_scrub_stack(void);

/*
 * Add key's patterns: each private value of pkey big- and little-endian
 * (RSA, EC) or raw (Ed25519, X25519, Ed448, X448), and the base64 lines
 * of a PEM file that encode private bytes.  item's type and counts are
 * filled; values == 0 adds the PEM lines alone (the same key in a second
 * file).  0, or -1 with the reason in why.
 */
int key_values_add(struct key_patterns *ps, unsigned key, EVP_PKEY *pkey,
		   const struct key_blob *file, struct key_item *item, int values, char *why,
		   size_t wsize);
/*
 * A secret file's bytes, less one trailing newline, as one raw pattern
 * (KEY_SECRET_MIN to KEY_VALUE_MAX bytes).  0, or -1 with why.
 */
int key_secret_add(struct key_patterns *ps, unsigned key, const struct key_blob *file,
		   struct key_item *item, char *why, size_t wsize);

#endif
