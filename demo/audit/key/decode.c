/*
 * decode.c - libcrypto's part of --key: the file's bytes to an EVP_PKEY,
 * the key's public name, and the hygiene around them.  OpenSSL decodes
 * through buffers of its own (the PEM text's lines, the DER, the ASN.1
 * objects, the BIGNUMs); every one of them is wiped when freed, because
 * its allocations come through here, and the stack its functions used is
 * zeroed once they are done.  What is left is what the audit derives
 * itself, in secbuf memory.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/x509.h>

#include "load.h"

static void wiping_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	if (!p)
		return;
	/* The whole block: malloc may have given more than was asked for. */
	explicit_bzero(p, malloc_usable_size(p));
	free(p);
}

static void *plain_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return malloc(n);
}

/* Never realloc() in place: a block that moves would leave its old bytes behind. */
static void *wiping_realloc(void *p, size_t n, const char *file, int line)
{
	size_t old;
	void *q;

	if (!p)
		return malloc(n);
	if (!n) {
		wiping_free(p, file, line);
		return NULL;
	}
	q = malloc(n);
	if (!q)
		return NULL;
	old = malloc_usable_size(p);
	memcpy(q, p, old < n ? old : n);
	wiping_free(p, file, line);
	return q;
}

int key_crypto_init(void)
{
	return CRYPTO_set_mem_functions(plain_malloc, wiping_realloc, wiping_free) ? 0 : -1;
}

/*
 * The passphrase callback: never a prompt.  It notes that it was asked,
 * which is how an encrypted key is told from a damaged one.
 */
static int refuse_passphrase(char *pass, size_t size, size_t *len, const OSSL_PARAM params[],
			     void *asked)
{
	(void)pass;
	(void)size;
	(void)params;
	*len = 0;
	*(int *)asked = 1;
	return 0;
}

/* Decode, PEM or DER, any structure; the key or NULL. */
static EVP_PKEY *decode_any(const struct key_blob *b, int *asked)
{
	const unsigned char *data = b->data;
	size_t len = b->len;
	EVP_PKEY *pkey = NULL;
	OSSL_DECODER_CTX *ctx;

	ctx = OSSL_DECODER_CTX_new_for_pkey(&pkey, NULL, NULL, NULL, EVP_PKEY_KEYPAIR, NULL, NULL);
	if (!ctx)
		return NULL;
	if (!OSSL_DECODER_CTX_set_passphrase_cb(ctx, refuse_passphrase, asked) ||
	    !OSSL_DECODER_from_data(ctx, &data, &len)) {
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
	OSSL_DECODER_CTX_free(ctx);
	return pkey;
}

/* The label of the first PEM block ("RSA PRIVATE KEY"), or "" if there is none. */
static const char *pem_label(const struct key_blob *b, char *label, size_t size)
{
	const char *begin = strstr((const char *)b->data, "-----BEGIN "), *end;

	label[0] = '\0';
	if (!begin)
		return label;
	begin += strlen("-----BEGIN ");
	end = strstr(begin, "-----");
	if (end && (size_t)(end - begin) < size && !memchr(begin, '\n', (size_t)(end - begin)))
		snprintf(label, size, "%.*s", (int)(end - begin), begin);
	return label;
}

/* Why decoding failed, in words that name the way out. */
static void explain(const struct key_blob *b, int asked, char *why, size_t wsize)
{
	char label[64];

	pem_label(b, label, sizeof(label));
	if (asked)
		snprintf(why, wsize,
			 "encrypted: it needs a passphrase, and secbuf-audit never asks for one; "
			 "give it decrypted through a pipe, never a file: --key <(openssl pkey -in "
			 "%s)",
			 b->path);
	else if (strstr(label, "PRIVATE KEY"))
		snprintf(why, wsize, "PEM \"%s\" that OpenSSL cannot decode: truncated or damaged?",
			 label);
	else if (label[0])
		snprintf(why, wsize, "PEM \"%s\": not a private key", label);
	else if (strstr((const char *)b->data, "-----BEGIN"))
		snprintf(why, wsize, "a damaged PEM header: not a key OpenSSL can read");
	else if (b->data[0] == 0x30)
		snprintf(why, wsize,
			 "DER that is not a whole private key (PKCS#8, PKCS#1 or "
			 "SEC1): truncated or damaged?");
	else
		snprintf(why, wsize, "neither PEM nor DER: not a key file");
}

/*
 * The structure, for the report: a PEM label says it; DER is PKCS#8 when
 * OpenSSL reads it as a PrivateKeyInfo (the decoder of OpenSSL 3.0 does
 * not tell which structure it took), else the key type's own.
 */
static const char *structure(const struct key_blob *b, EVP_PKEY *pkey, const char *label)
{
	const unsigned char *p = b->data;
	PKCS8_PRIV_KEY_INFO *p8 = NULL;
	int pkcs8;

	if (label[0]) {
		pkcs8 = !strcmp(label, "PRIVATE KEY");
	} else {
		p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)b->len);
		pkcs8 = p8 != NULL;
		PKCS8_PRIV_KEY_INFO_free(p8); /* its key bytes are cleared, then wiped */
		ERR_clear_error();
	}
	if (pkcs8)
		return "PKCS#8";
	switch (EVP_PKEY_get_base_id(pkey)) {
	case EVP_PKEY_RSA:
		return "PKCS#1";
	case EVP_PKEY_EC:
		return "SEC1";
	}
	return "traditional";
}

int key_decode(const struct key_blob *b, EVP_PKEY **pkey, char *form, size_t fsize, char *why,
	       size_t wsize)
{
	int asked = 0;
	char label[64];

	*pkey = decode_any(b, &asked);
	/* Its reasons are in the words below; the queue would only grow. */
	ERR_clear_error();
	if (!*pkey) {
		explain(b, asked, why, wsize);
		return -1;
	}
	pem_label(b, label, sizeof(label));
	snprintf(form, fsize, "%s %s", label[0] ? "PEM" : "DER", structure(b, *pkey, label));
	return 0;
}

int key_fingerprint(EVP_PKEY *pkey, char *out, size_t size)
{
	unsigned char *der = NULL, md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int len = i2d_PUBKEY(pkey, &der);
	size_t at;

	if (len <= 0)
		return -1;
	if (!EVP_Digest(der, (size_t)len, md, &mdlen, EVP_sha256(), NULL)) {
		OPENSSL_free(der);
		return -1;
	}
	OPENSSL_free(der);
	at = (size_t)snprintf(out, size, "SHA256:");
	for (unsigned i = 0; i < mdlen && at + 2 < size; i++)
		at += (size_t)snprintf(out + at, size - at, "%02x", md[i]);
	return 0;
}

/*
 * 256 KiB below the caller: far deeper than OpenSSL's decoders and
 * EVP_PKEY_get_bn_param() (a 2 KiB buffer of its own) go.
 */
__attribute__((noinline)) void key_scrub_stack(void)
{
	unsigned char area[256 << 10];

	explicit_bzero(area, sizeof(area));
	__asm__ volatile("" : : "r"(area) : "memory");
}
