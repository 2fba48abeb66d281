/*
 * values.c - a key's private values, and the forms a copy of each takes,
 * as patterns.  libcrypto hands them over (EVP_PKEY_get_bn_param(),
 * EVP_PKEY_get_raw_private_key()); no ASN.1 is parsed here.  Each value is
 * written once, plain, into a secbuf scratch buffer, masked into the
 * pattern store from there, and the scratch is wiped.
 *
 * A BIGNUM value (RSA's d, p, q, dP, dQ, qInv; an EC scalar) is searched
 * big-endian, as DER and BN_bn2bin() hold it (an EC scalar also zero-
 * padded to its field, as SEC1 and PKCS#8 hold it), and little-endian, as
 * OpenSSL's BIGNUM limbs hold it on this machine: 64-bit and 32-bit
 * little-endian words are the same bytes, told apart after a hit by the
 * alignment and the zero padding after the top word (match.c).  A raw key
 * (Ed25519, X25519, Ed448, X448) is searched as it is.  A PEM file's
 * base64 lines are searched too, each whole, but only those that encode
 * KEY_PRIVATE_MIN private bytes or more: a line of the header and the
 * public modulus alone would also be in the certificate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/objects.h>

#include <secbuf.h>

#include "load.h"

#define MAX_VALUES 32 /* RSA with 10 primes has 29 */

struct value {
	char name[40];
	size_t off, len; /* in the scratch buffer, big-endian (or raw) */
	size_t fixed;	 /* an EC scalar's field width */
	int raw;
};

/* Plain values, in secbuf memory, until they are masked. */
struct scratch {
	uint8_t *buf;
	size_t used, size;
	struct value v[MAX_VALUES];
	size_t n;
};

static struct value *new_value(struct scratch *sc, size_t len, const char *name, char *why,
			       size_t wsize)
{
	struct value *v;

	if (sc->n == MAX_VALUES || len > KEY_VALUE_MAX || sc->used + len > sc->size) {
		snprintf(why, wsize,
			 "more private values than secbuf-audit searches (%d of %d "
			 "bytes at most)",
			 MAX_VALUES, KEY_VALUE_MAX);
		return NULL;
	}
	v = &sc->v[sc->n++];
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->off = sc->used;
	v->len = len;
	sc->used += len;
	return v;
}

/* One BIGNUM parameter: 1 added, 0 absent, -1 error. */
static int bn_value(EVP_PKEY *pkey, const char *param, const char *name, size_t fixed,
		    struct scratch *sc, char *why, size_t wsize)
{
	BIGNUM *bn = NULL;
	struct value *v;
	int len;

	if (!EVP_PKEY_get_bn_param(pkey, param, &bn))
		return 0;
	len = BN_num_bytes(bn);
	/* Shorter would match by chance; no private value of these keys is. */
	if (len < KEY_SECRET_MIN) {
		BN_clear_free(bn);
		return 0;
	}
	v = new_value(sc, (size_t)len, name, why, wsize);
	if (v) {
		BN_bn2bin(bn, sc->buf + v->off);
		v->fixed = fixed;
	}
	BN_clear_free(bn); /* wiped, not just freed: it held the value */
	return v ? 1 : -1;
}

/* RSA's private values; the names OSSL_PKEY_PARAM_RSA_* stand for. */
static int rsa_values(EVP_PKEY *pkey, struct scratch *sc, char *why, size_t wsize)
{
	static const char *const series[][2] = { { "rsa-factor", "RSA prime" },
						 { "rsa-exponent", "RSA exponent" },
						 { "rsa-coefficient", "RSA coefficient" } };
	static const char *const usual[3][2] = { { "RSA p", "RSA q" },
						 { "RSA dP", "RSA dQ" },
						 { "RSA qInv", NULL } };
	char param[32], name[40];
	int rc = bn_value(pkey, OSSL_PKEY_PARAM_RSA_D, "RSA d", 0, sc, why, wsize);

	for (int s = 0; s < 3 && rc >= 0; s++) {
		for (int i = 1; i <= 10; i++) {
			snprintf(param, sizeof(param), "%s%d", series[s][0], i);
			if (i <= 2 && usual[s][i - 1])
				snprintf(name, sizeof(name), "%s", usual[s][i - 1]);
			else
				snprintf(name, sizeof(name), "%s %d", series[s][1], i);
			rc = bn_value(pkey, param, name, 0, sc, why, wsize);
			if (rc <= 0)
				break;
		}
	}
	return rc < 0 ? -1 : 0;
}

static int ec_values(EVP_PKEY *pkey, struct scratch *sc, char *why, size_t wsize)
{
	/* SEC1: the scalar is an OCTET STRING as wide as the group's order. */
	size_t fixed = (size_t)(EVP_PKEY_get_bits(pkey) + 7) / 8;

	return bn_value(pkey, OSSL_PKEY_PARAM_PRIV_KEY, "EC scalar", fixed, sc, why, wsize) < 0 ?
		       -1 :
		       0;
}

static int raw_value(EVP_PKEY *pkey, const char *name, struct scratch *sc, char *why, size_t wsize)
{
	struct value *v;
	size_t len = 0;

	if (!EVP_PKEY_get_raw_private_key(pkey, NULL, &len) || len < KEY_SECRET_MIN)
		return 0;
	v = new_value(sc, len, name, why, wsize);
	if (!v)
		return -1;
	v->raw = 1;
	if (!EVP_PKEY_get_raw_private_key(pkey, sc->buf + v->off, &len) || len != v->len) {
		snprintf(why, wsize, "libcrypto gave no raw private key");
		return -1;
	}
	return 0;
}

/* "P-256" for prime256v1, else OpenSSL's name of the group. */
static void curve_name(EVP_PKEY *pkey, char *out, size_t size)
{
	char group[64] = "";
	const char *nist = NULL;

	if (EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
					   NULL))
		nist = EC_curve_nid2nist(OBJ_sn2nid(group));
	snprintf(out, size, "%s", nist ? nist : group[0] ? group : "unnamed curve");
}

/* The type, in item, and its values, in sc: 0, or -1 with why. */
static int collect(EVP_PKEY *pkey, struct key_item *item, struct scratch *sc, char *why,
		   size_t wsize)
{
	int id = EVP_PKEY_get_base_id(pkey), rc;
	char curve[64];

	switch (id) {
	case EVP_PKEY_RSA:
	case EVP_PKEY_RSA_PSS:
		snprintf(item->type, sizeof(item->type), "%s-%d",
			 id == EVP_PKEY_RSA ? "RSA" : "RSA-PSS", EVP_PKEY_get_bits(pkey));
		rc = rsa_values(pkey, sc, why, wsize);
		break;
	case EVP_PKEY_EC:
		curve_name(pkey, curve, sizeof(curve));
		snprintf(item->type, sizeof(item->type), "EC %.40s", curve);
		rc = ec_values(pkey, sc, why, wsize);
		break;
	case EVP_PKEY_ED25519:
	case EVP_PKEY_ED448:
		snprintf(item->type, sizeof(item->type),
			 id == EVP_PKEY_ED25519 ? "Ed25519" : "Ed448");
		rc = raw_value(pkey, id == EVP_PKEY_ED25519 ? "Ed25519 seed" : "Ed448 seed", sc,
			       why, wsize);
		break;
	case EVP_PKEY_X25519:
	case EVP_PKEY_X448:
		snprintf(item->type, sizeof(item->type), id == EVP_PKEY_X25519 ? "X25519" : "X448");
		rc = raw_value(pkey, id == EVP_PKEY_X25519 ? "X25519 key" : "X448 key", sc, why,
			       wsize);
		break;
	default:
		snprintf(why, wsize,
			 "unsupported key type %s (secbuf-audit knows RSA, EC, Ed25519, "
			 "X25519, Ed448 and X448)",
			 EVP_PKEY_get0_type_name(pkey));
		return -1;
	}
	if (rc == 0 && !sc->n) {
		snprintf(why, wsize, "%s without its private part: a public key?", item->type);
		return -1;
	}
	return rc;
}

/* Where needle is in hay, or -1; a plain loop: no search tables of the needle. */
static long find(const uint8_t *hay, size_t hlen, const uint8_t *needle, size_t nlen)
{
	for (size_t i = 0; nlen && i + nlen <= hlen; i++)
		if (hay[i] == needle[0] && !memcmp(hay + i, needle, nlen))
			return (long)i;
	return -1;
}

struct pem_line {
	const uint8_t *text;
	size_t len;
	size_t from, to; /* the DER bytes it encodes */
};

/* The base64 lines of the first PRIVATE KEY block, into lines; their count. */
static size_t pem_block(const struct key_blob *b, struct pem_line *lines, size_t max)
{
	const char *text = (const char *)b->data, *p = text, *eol;
	size_t n = 0;

	while ((p = strstr(p, "-----BEGIN ")) != NULL) {
		eol = strchr(p, '\n');
		if (!eol)
			return 0;
		if (memmem(p, (size_t)(eol - p), "PRIVATE KEY-----", 16))
			break;
		p = eol + 1;
	}
	if (!p)
		return 0;
	for (p = strchr(p, '\n') + 1; *p && strncmp(p, "-----END", 8) && n < max; p = eol + 1) {
		size_t len;

		eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		len = (size_t)(eol - p);
		if (len && p[len - 1] == '\r')
			len--;
		/* Headers (Proc-Type, DEK-Info) are not base64; blank lines end them. */
		if (len && !memchr(p, ':', len)) {
			lines[n].text = (const uint8_t *)p;
			lines[n++].len = len;
		}
		if (!*eol)
			break;
	}
	return n;
}

/* The PEM lines that encode private bytes, as patterns: 0, or -1 with errno. */
static int pem_lines(struct key_patterns *ps, unsigned key, const struct key_blob *b,
		     const struct scratch *sc, struct key_item *item)
{
	struct pem_line lines[512];
	size_t n = pem_block(b, lines, 512), dlen = 0, mapped = 0;
	struct key_pattern meta = { .key = key, .order = ORDER_TEXT };
	long pos[MAX_VALUES];
	uint8_t *der;
	int rc = 0;

	if (!n)
		return 0;
	der = secbuf_alloc(b->len + 4);
	if (!der)
		return -1;
	/* Each line decodes alone when it is a whole number of quads, as PEM writes it. */
	for (; mapped < n && lines[mapped].len % 4 == 0; mapped++) {
		const struct pem_line *l = &lines[mapped];
		int got = EVP_DecodeBlock(der + dlen, l->text, (int)l->len);

		if (got < 0)
			break;
		got -= (l->len && l->text[l->len - 1] == '=') +
		       (l->len > 1 && l->text[l->len - 2] == '=');
		lines[mapped].from = dlen;
		dlen += (size_t)got;
		lines[mapped].to = dlen;
	}
	for (size_t v = 0; v < sc->n; v++)
		pos[v] = find(der, dlen, sc->buf + sc->v[v].off, sc->v[v].len);
	for (size_t i = 0; i < mapped && rc == 0; i++) {
		size_t private = 0;

		for (size_t v = 0; v < sc->n; v++) {
			size_t a, z;

			if (pos[v] < 0)
				continue;
			a = (size_t)pos[v] > lines[i].from ? (size_t)pos[v] : lines[i].from;
			z = (size_t)pos[v] + sc->v[v].len < lines[i].to ?
				    (size_t)pos[v] + sc->v[v].len :
				    lines[i].to;
			private += z > a ? z - a : 0;
		}
		if (private < KEY_PRIVATE_MIN || lines[i].len < KEY_SECRET_MIN)
			continue;
		meta.line = (unsigned)i + 1;
		snprintf(meta.value, sizeof(meta.value), "PEM text");
		rc = key_patterns_add(ps, &meta, lines[i].text, lines[i].len, KEY_LINE_MAX);
		item->pem_lines += rc == 0;
	}
	secbuf_free(der); /* wipes the decoded key */
	return rc;
}

int key_values_add(struct key_patterns *ps, unsigned key, EVP_PKEY *pkey,
		   const struct key_blob *file, struct key_item *item, int values, char *why,
		   size_t wsize)
{
	struct scratch sc = { .size = 8 * KEY_VALUE_MAX };
	struct key_pattern meta = { .key = key };
	size_t before = ps->n;
	uint8_t *le;
	int rc = -1;

	sc.buf = secbuf_alloc(sc.size + KEY_VALUE_MAX);
	if (!sc.buf) {
		snprintf(why, wsize, "no secbuf memory for its values: %s", strerror(errno));
		return -1;
	}
	le = sc.buf + sc.size; /* one value reversed at a time */
	if (collect(pkey, item, &sc, why, wsize) < 0)
		goto out;
	for (size_t i = 0; values && i < sc.n; i++) {
		const struct value *v = &sc.v[i];

		snprintf(meta.value, sizeof(meta.value), "%s", v->name);
		meta.fixed = v->fixed;
		meta.order = v->raw ? ORDER_RAW : ORDER_BE;
		if (key_patterns_add(ps, &meta, sc.buf + v->off, v->len, KEY_WINDOW) < 0)
			goto fail;
		if (v->raw)
			continue;
		for (size_t j = 0; j < v->len; j++)
			le[j] = sc.buf[v->off + v->len - 1 - j];
		meta.fixed = 0;
		meta.order = ORDER_LE;
		if (key_patterns_add(ps, &meta, le, v->len, KEY_WINDOW) < 0)
			goto fail;
		explicit_bzero(le, v->len);
	}
	if (values)
		item->values += (unsigned)sc.n;
	if (pem_lines(ps, key, file, &sc, item) < 0)
		goto fail;
	item->patterns += (unsigned)(ps->n - before);
	rc = 0;
	goto out;
fail:
	snprintf(why, wsize, "cannot hold its patterns: %s", strerror(errno));
out:
	secbuf_free(sc.buf); /* wipes every plain value */
	return rc;
}

int key_secret_add(struct key_patterns *ps, unsigned key, const struct key_blob *file,
		   struct key_item *item, char *why, size_t wsize)
{
	struct key_pattern meta = { .key = key, .order = ORDER_RAW, .value = "secret" };
	size_t len = file->len;

	/* As a program reading it would take it: without the newline an editor adds. */
	if (len && file->data[len - 1] == '\n')
		len--;
	if (len && file->data[len - 1] == '\r')
		len--;
	if (len < KEY_SECRET_MIN || len > KEY_VALUE_MAX) {
		snprintf(why, wsize,
			 "%zu bytes: a secret of %d to %d bytes is needed (shorter ones "
			 "match by chance)",
			 len, KEY_SECRET_MIN, KEY_VALUE_MAX);
		return -1;
	}
	if (key_patterns_add(ps, &meta, file->data, len, KEY_WINDOW) < 0) {
		snprintf(why, wsize, "cannot hold its pattern: %s", strerror(errno));
		return -1;
	}
	snprintf(item->type, sizeof(item->type), "secret");
	item->secret_len = len;
	item->values = 1;
	item->patterns = 1;
	return 0;
}
