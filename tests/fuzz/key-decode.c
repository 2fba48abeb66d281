/*
 * key-decode: a key file's bytes as secbuf-audit --key reads them
 * (demo/audit/key/decode.c's key_decode(): PEM or DER, PKCS#8, PKCS#1,
 * SEC1, any type libcrypto's decoders take), then what the audit derives
 * from a key it could decode: its public name (key_fingerprint()) and its
 * patterns (values.c's key_values_add(): each private value big- and
 * little-endian or raw, and the PEM lines that encode private bytes, which
 * values.c finds by parsing the PEM block itself), indexed (patterns.c).
 * The same bytes as a secret file (key_secret_add()).
 *
 * Checked beyond memory safety: a decoded key has a name, a type and a
 * form; every pattern is within its limits, its anchor inside it; and
 * each PEM line made a pattern is found, whole, in the file it came from
 * (key_match() over the file's own bytes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include <secbuf.h>

#include "fuzz.h"
#include "../../demo/audit/key/load.h"

/* Once: libcrypto's allocations through decode.c's wiping functions, before any other call. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (key_crypto_init() < 0)
		abort();
	return 0;
}

struct found {
	const struct key_patterns *ps;
	unsigned char seen[1024]; /* per pattern: found whole */
};

static void on_hit(void *ctx, const struct key_hit *h)
{
	struct found *f = ctx;

	if (h->pattern >= f->ps->n)
		abort();
	if (h->whole && h->pattern < sizeof(f->seen))
		f->seen[h->pattern] = 1;
}

static void check_patterns(const struct key_patterns *ps, const struct key_blob *b)
{
	static struct found f;

	memset(&f, 0, sizeof(f));
	f.ps = ps;
	for (size_t k = 0; k < ps->n; k++) {
		const struct key_pattern *p = &ps->p[k];

		if (p->len < 8 || p->len > KEY_VALUE_MAX || p->alen < 8 || p->alen > p->len ||
		    p->at + p->alen > p->len || p->whole_off + p->len > ps->used ||
		    p->anchor_off + p->alen > ps->used || p->key != 0 ||
		    !memchr(p->value, 0, sizeof(p->value)))
			abort();
		/* The anchor is the encoding's bytes [at, at + alen), both masked alike. */
		for (size_t i = 0; i < p->alen; i++)
			if ((ps->store[p->anchor_off + i] ^ ps->mask[i]) !=
			    (ps->store[p->whole_off + p->at + i] ^ ps->mask[p->at + i]))
				abort();
	}
	key_match(ps, b->data, b->len, 0, 0, b->len, on_hit, &f);
	for (size_t k = 0; k < ps->n && k < sizeof(f.seen); k++)
		if (ps->p[k].order == ORDER_TEXT && !f.seen[k])
			abort(); /* a PEM line of this file, not found in it */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct key_blob b = { .path = "fuzz" };
	struct key_patterns ps;
	struct key_item item;
	EVP_PKEY *pkey = NULL;
	char form[32], why[300], name[80];

	if (size > KEY_FILE_MAX)
		return 0;
	/* As infile.c holds a file: secbuf memory, NUL after the last byte. */
	b.size = size + 1;
	b.data = secbuf_alloc(b.size);
	if (!b.data)
		return 0; /* no secbuf memory here: the harness's, not the decoder's */
	if (size)
		memcpy(b.data, data, size);
	b.data[size] = 0;
	b.len = size;

	if (key_decode(&b, &pkey, form, sizeof(form), why, sizeof(why)) == 0) {
		if (!pkey || (strncmp(form, "PEM ", 4) && strncmp(form, "DER ", 4)))
			abort();
		if (key_fingerprint(pkey, name, sizeof(name)) == 0 &&
		    (strncmp(name, "SHA256:", 7) || strlen(name) != 7 + 64))
			abort();
		if (key_patterns_init(&ps) == 0) {
			memset(&item, 0, sizeof(item));
			if (key_values_add(&ps, 0, pkey, &b, &item, 1, why, sizeof(why)) == 0) {
				if (!item.type[0] || item.patterns != ps.n || !ps.n ||
				    key_patterns_index(&ps) < 0)
					abort();
				check_patterns(&ps, &b);
			} else if (!why[0]) {
				abort(); /* a refusal says why */
			}
			key_patterns_free(&ps);
		}
		EVP_PKEY_free(pkey);
	} else if (pkey || !why[0]) {
		abort();
	}
	ERR_clear_error();

	/* The same bytes as --secret-file: one raw pattern, or a refusal that says why. */
	if (key_patterns_init(&ps) == 0) {
		memset(&item, 0, sizeof(item));
		why[0] = 0;
		if (key_secret_add(&ps, 0, &b, &item, why, sizeof(why)) == 0) {
			if (ps.n != 1 || item.secret_len < KEY_SECRET_MIN || item.secret_len > size)
				abort();
		} else if (!why[0]) {
			abort();
		}
		key_patterns_free(&ps);
	}
	key_blob_free(&b);
	return 0;
}
