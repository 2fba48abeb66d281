/* handlers.c - decode each operation's fields, run it, encode the reply. */
#include "handlers.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "secbuf.h"
#include "secbuf-seal.h"

#define STATS_MAX (KEYSTORE_MAX + 2)

static int fail(struct reply *r, uint8_t status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return status;
}

/* Allocate the reply frame for fields of these lengths and point ptrs at them. */
static int reply_alloc(struct reply *r, struct arena *ar, unsigned n, const uint32_t *lens, uint8_t **ptrs)
{
	size_t size = kd_frame_size(n, lens);

	r->frame = size ? arena_get(ar, size) : NULL;
	if (!r->frame)
		return fail(r, KD_E_BUSY, "working buffer full: reply of %zu bytes does not fit", size);
	kd_frame_layout(r->frame, KD_OK, n, lens, ptrs);
	r->len = size;
	return KD_OK;
}

static int reply_empty(struct reply *r, struct arena *ar)
{
	return reply_alloc(r, ar, 0, NULL, NULL);
}

static int lookup(const struct keystore *ks, const struct kd_field *name, struct reply *r, const struct key **k)
{
	if (!kd_name_valid(name->p, name->len))
		return fail(r, KD_E_INVAL, "bad key name: names are " KD_NAME_RULE);
	*k = ks_find(ks, name->p, name->len);
	if (!*k)
		return fail(r, KD_E_NOKEY, "no key named %.*s", (int)name->len, name->p);
	return KD_OK;
}

/* Say which of type, name and secret is wrong, and what the rules are. */
static int check_new_key(const struct kd_field *f, uint8_t op, struct reply *r)
{
	if (f[0].len != 1)
		return fail(r, KD_E_MALFORMED, "the key type field must be one byte, not %u", f[0].len);
	if (f[0].p[0] != KD_KEY_ED25519 && f[0].p[0] != KD_KEY_X25519)
		return fail(r, KD_E_INVAL, "unknown key type %u: %u for ed25519 (signing) or %u for x25519 (sealing)",
			    f[0].p[0], KD_KEY_ED25519, KD_KEY_X25519);
	if (!kd_name_valid(f[1].p, f[1].len))
		return fail(r, KD_E_INVAL, "bad key name: names are " KD_NAME_RULE);
	if (op == KD_OP_IMPORT && f[2].len != KD_SECRET_BYTES)
		return fail(r, KD_E_INVAL, "the secret is %u bytes; import takes exactly %d (an Ed25519 seed or "
			    "an X25519 secret key)", f[2].len, KD_SECRET_BYTES);
	return KD_OK;
}

static int new_key(struct keystore *ks, struct arena *ar, uint8_t op, const struct kd_field *f, struct reply *r)
{
	const struct key *k = NULL;
	uint32_t len = KD_PK_BYTES;
	uint8_t *pk;
	int st;

	if (check_new_key(f, op, r) != KD_OK)
		return r->status;
	if (op == KD_OP_KEYGEN)
		st = ks_generate(ks, f[0].p[0], f[1].p, f[1].len, &k);
	else
		st = ks_import(ks, f[0].p[0], f[1].p, f[1].len, f[2].p, f[2].len, &k);
	if (st == KD_E_EXISTS)
		return fail(r, st, "a key named %.*s exists already", (int)f[1].len, f[1].p);
	if (st == KD_E_BUSY)
		return fail(r, st, "the daemon holds %d keys, its maximum: delete one first", KEYSTORE_MAX);
	if (st == KD_E_NOMEM)
		return fail(r, st, "no locked memory for key %.*s: %s", (int)f[1].len, f[1].p, strerror(errno));
	if (st != KD_OK)
		return fail(r, st, "%s of key %.*s failed: %s", kd_op_name(op), (int)f[1].len, f[1].p,
			    kd_status_name(st));
	if (reply_alloc(r, ar, 1, &len, &pk) == KD_OK)
		memcpy(pk, k->pk, KD_PK_BYTES);
	return r->status;
}

/* Why an operation with key k failed, in words that name the key and the fix. */
static int op_failed(struct reply *r, int st, uint8_t op, const struct key *k)
{
	unsigned want = op == KD_OP_SIGN || op == KD_OP_VERIFY ? KD_KEY_ED25519 : KD_KEY_X25519;

	switch (st) {
	case KD_E_KEYTYPE:
		return fail(r, st, "%s needs an %s key; %s is an %s key", kd_op_name(op), kd_keytype_name(want),
			    k->name, kd_keytype_name(k->type));
	case KD_E_BADSIG:
		return fail(r, st, "bad signature: it does not verify with key %s", k->name);
	case KD_E_DECRYPT:
		return fail(r, st, "the sealed box does not open with key %s (corrupted, or sealed to another key)",
			    k->name);
	case KD_E_NOMEM:
		return fail(r, st, "key %s cannot be opened for use: %s", k->name, strerror(errno));
	}
	return fail(r, st, "%s with key %s failed: %s", kd_op_name(op), k->name, kd_status_name(st));
}

static int pubkey(const struct key *k, struct arena *ar, struct reply *r)
{
	uint32_t lens[2] = { 1, KD_PK_BYTES };
	uint8_t *p[2];

	if (reply_alloc(r, ar, 2, lens, p) != KD_OK)
		return r->status;
	p[0][0] = k->type;
	memcpy(p[1], k->pk, KD_PK_BYTES);
	return KD_OK;
}

/* sign, seal and open: one output field whose size follows from the input. */
static int transform(const struct key *k, struct arena *ar, uint8_t op, const struct kd_field *in, struct reply *r)
{
	uint32_t len;
	uint8_t *out;
	int st;

	if (op == KD_OP_SIGN)
		len = KD_SIG_BYTES;
	else if (op == KD_OP_SEAL)
		len = in->len + KD_SEAL_BYTES;
	else
		len = in->len >= KD_SEAL_BYTES ? in->len - KD_SEAL_BYTES : 0;
	if (len < in->len && op == KD_OP_SEAL)
		return fail(r, KD_E_TOOBIG, "a message of %u bytes is too large to seal", in->len);
	if (reply_alloc(r, ar, 1, &len, &out) != KD_OK)
		return r->status;
	if (op == KD_OP_SIGN)
		st = ks_sign(k, in->p, in->len, out);
	else if (op == KD_OP_SEAL)
		st = ks_seal(k, in->p, in->len, out);
	else
		st = ks_open(k, in->p, in->len, out);
	if (st != KD_OK) {
		arena_put(ar, r->frame);
		r->frame = NULL;
		return op_failed(r, st, op, k);
	}
	return KD_OK;
}

static int list(const struct keystore *ks, struct arena *ar, struct reply *r)
{
	uint32_t lens[KEYSTORE_MAX];
	uint8_t *p[KEYSTORE_MAX];

	for (unsigned i = 0; i < ks->n; i++)
		lens[i] = 1 + strlen(ks->keys[i]->name);
	if (reply_alloc(r, ar, ks->n, lens, p) != KD_OK)
		return r->status;
	for (unsigned i = 0; i < ks->n; i++) {
		p[i][0] = ks->keys[i]->type;
		memcpy(p[i] + 1, ks->keys[i]->name, lens[i] - 1);
	}
	return KD_OK;
}

static int stat_rec(const void *buf, const char *name, uint8_t type, struct kd_stat_rec *rec, struct reply *r)
{
	struct secbuf_stat st;

	if (secbuf_stat(buf, &st) != 0)
		return fail(r, KD_E_NOMEM, "secbuf_stat: %s", strerror(errno));
	memset(rec, 0, sizeof(*rec));
	snprintf(rec->name, sizeof(rec->name), "%s", name);
	rec->type = type;
	rec->lock_method = st.lock_method;
	rec->capacity = st.mapped_bytes;
	rec->resident_pages = st.resident_pages;
	rec->locked_pages = st.locked_pages;
	rec->page_size = sysconf(_SC_PAGESIZE);
	return KD_OK;
}

/*
 * A sealed key's record: no secbuf memory of its own between operations
 * (capacity and pages 0); the lock method is where its prekey is
 * (SECBUF_LOCK_SECRETMEM where the kernel has secret memory).
 */
static void key_rec(const struct key *k, const struct secbuf_seal_stat *ss, struct kd_stat_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	snprintf(rec->name, sizeof(rec->name), "%s", k->name);
	rec->type = k->type;
	rec->lock_method = ss->prekey_method < 0 ? SECBUF_LOCK_NONE : ss->prekey_method;
	rec->page_size = sysconf(_SC_PAGESIZE);
}

/* Records: the totals, the working buffer, then every key. */
static int stats(const struct keystore *ks, struct arena *ar, struct reply *r)
{
	static struct kd_stat_rec rec[STATS_MAX];
	static uint32_t lens[STATS_MAX];
	struct secbuf_seal_stat ss;
	uint8_t *p[STATS_MAX];
	unsigned n = 2;

	if (stat_rec(ar->base, "*buffer", 0, &rec[1], r))
		return r->status;
	if (secbuf_seal_stat(&ss) != 0)
		return fail(r, KD_E_NOMEM, "secbuf_seal_stat: %s", strerror(errno));
	for (unsigned i = 0; i < ks->n; i++, n++)
		key_rec(ks->keys[i], &ss, &rec[n]);
	rec[0] = rec[1];
	snprintf(rec[0].name, sizeof(rec[0].name), "*total");
	for (unsigned i = 2; i < n; i++) {
		rec[0].capacity += rec[i].capacity;
		rec[0].resident_pages += rec[i].resident_pages;
		rec[0].locked_pages += rec[i].locked_pages;
	}
	for (unsigned i = 0; i < n; i++)
		lens[i] = KD_STAT_FIXED + strlen(rec[i].name);
	if (reply_alloc(r, ar, n, lens, p) != KD_OK)
		return r->status;
	for (unsigned i = 0; i < n; i++)
		kd_stat_pack(p[i], &rec[i]);
	return KD_OK;
}

/* Fields each operation takes. */
static const unsigned nfields[KD_OP_MAX + 1] = {
	[KD_OP_KEYGEN] = 2, [KD_OP_IMPORT] = 3, [KD_OP_PUBKEY] = 1, [KD_OP_SIGN] = 2,
	[KD_OP_VERIFY] = 3, [KD_OP_SEAL] = 2, [KD_OP_OPEN] = 2, [KD_OP_LIST] = 0,
	[KD_OP_DELETE] = 1, [KD_OP_STATS] = 0,
};

int handle_request(struct keystore *ks, struct arena *ar, uint8_t op,
		   const uint8_t *body, uint32_t len, struct reply *r)
{
	struct kd_field f[KD_REQ_FIELDS_MAX];
	const struct key *k;
	int st;

	memset(r, 0, sizeof(*r));
	if (op < 1 || op > KD_OP_MAX)
		return fail(r, KD_E_MALFORMED, "unknown operation %u", op);
	if (nfields[op] == 0 ? len != 0 : kd_fields_parse(body, len, f, nfields[op], 0) < 0)
		return fail(r, KD_E_MALFORMED, "%s takes %u fields", kd_op_name(op), nfields[op]);

	switch (op) {
	case KD_OP_KEYGEN:
	case KD_OP_IMPORT:
		return new_key(ks, ar, op, f, r);
	case KD_OP_LIST:
		return list(ks, ar, r);
	case KD_OP_STATS:
		return stats(ks, ar, r);
	case KD_OP_DELETE:
		if (lookup(ks, &f[0], r, &k) != KD_OK)
			return r->status;
		ks_delete(ks, f[0].p, f[0].len);
		return reply_empty(r, ar);
	}

	if (lookup(ks, &f[0], r, &k) != KD_OK)
		return r->status;
	switch (op) {
	case KD_OP_PUBKEY:
		return pubkey(k, ar, r);
	case KD_OP_VERIFY:
		if (f[2].len != KD_SIG_BYTES)
			return fail(r, KD_E_INVAL, "the signature is %u bytes; Ed25519 signatures are %d",
				    f[2].len, KD_SIG_BYTES);
		st = ks_verify(k, f[1].p, f[1].len, f[2].p, f[2].len);
		if (st != KD_OK)
			return op_failed(r, st, op, k);
		return reply_empty(r, ar);
	default:
		return transform(k, ar, op, &f[1], r);
	}
}

size_t error_frame(uint8_t *buf, uint8_t status, const char *msg)
{
	uint32_t len = strnlen(msg, KD_ERRMSG_MAX);
	uint8_t *p;

	kd_frame_layout(buf, status, 1, &len, &p);
	memcpy(p, msg, len);
	return KD_HDR_SIZE + KD_FIELD_HDR + len;
}
