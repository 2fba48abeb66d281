/* protocol.c - frame encoding and validation for the secbufd protocol. */
#include "protocol.h"

#include <string.h>

void kd_put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

uint32_t kd_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put64(uint8_t *p, uint64_t v)
{
	kd_put32(p, v >> 32);
	kd_put32(p + 4, (uint32_t)v);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)kd_get32(p) << 32 | kd_get32(p + 4);
}

void kd_hdr_pack(uint8_t *hdr, uint8_t code, uint32_t body_len)
{
	hdr[0] = KD_PROTO_VERSION;
	hdr[1] = code;
	hdr[2] = 0;
	hdr[3] = 0;
	kd_put32(hdr + 4, body_len);
}

int kd_hdr_parse(const uint8_t *hdr, uint8_t *code, uint32_t *body_len)
{
	if (hdr[0] != KD_PROTO_VERSION || hdr[2] || hdr[3])
		return -1;
	*code = hdr[1];
	*body_len = kd_get32(hdr + 4);
	return 0;
}

size_t kd_frame_size(unsigned n, const uint32_t *lens)
{
	uint64_t total = KD_HDR_SIZE;

	for (unsigned i = 0; i < n; i++)
		total += KD_FIELD_HDR + (uint64_t)lens[i];
	if (total - KD_HDR_SIZE > UINT32_MAX)
		return 0;
	return total;
}

void kd_frame_layout(uint8_t *buf, uint8_t code, unsigned n, const uint32_t *lens, uint8_t **ptrs)
{
	uint8_t *p = buf + KD_HDR_SIZE;

	for (unsigned i = 0; i < n; i++) {
		kd_put32(p, lens[i]);
		ptrs[i] = p + KD_FIELD_HDR;
		p += KD_FIELD_HDR + lens[i];
	}
	kd_hdr_pack(buf, code, (uint32_t)(p - buf - KD_HDR_SIZE));
}

int kd_fields_parse(const uint8_t *body, size_t len, struct kd_field *f, unsigned want, unsigned max)
{
	unsigned n = 0;
	size_t off = 0;

	if (want)
		max = want;
	while (off < len) {
		uint32_t flen;

		if (n == max || len - off < KD_FIELD_HDR)
			return -1;
		flen = kd_get32(body + off);
		off += KD_FIELD_HDR;
		if (flen > len - off)
			return -1;
		f[n].p = body + off;
		f[n].len = flen;
		off += flen;
		n++;
	}
	if (want && n != want)
		return -1;
	return (int)n;
}

int kd_name_valid(const uint8_t *name, size_t len)
{
	if (len == 0 || len > KD_NAME_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

const char *kd_keytype_name(unsigned type)
{
	switch (type) {
	case KD_KEY_ED25519: return "ed25519";
	case KD_KEY_X25519: return "x25519";
	}
	return "?";
}

int kd_keytype_parse(const char *s)
{
	if (!strcmp(s, "ed25519"))
		return KD_KEY_ED25519;
	if (!strcmp(s, "x25519"))
		return KD_KEY_X25519;
	return -1;
}

static const char *const op_names[] = {
	[KD_OP_KEYGEN] = "keygen", [KD_OP_IMPORT] = "import", [KD_OP_PUBKEY] = "pubkey",
	[KD_OP_SIGN] = "sign", [KD_OP_VERIFY] = "verify", [KD_OP_SEAL] = "seal",
	[KD_OP_OPEN] = "open", [KD_OP_LIST] = "list", [KD_OP_DELETE] = "delete",
	[KD_OP_STATS] = "stats",
};

const char *kd_op_name(unsigned op)
{
	return op >= 1 && op <= KD_OP_MAX ? op_names[op] : "?";
}

static const char *const status_names[] = {
	[KD_OK] = "ok", [KD_E_MALFORMED] = "malformed request", [KD_E_TOOBIG] = "request too large",
	[KD_E_TRUNCATED] = "truncated request", [KD_E_DENIED] = "permission denied",
	[KD_E_NOKEY] = "no such key", [KD_E_EXISTS] = "key exists",
	[KD_E_KEYTYPE] = "wrong key type", [KD_E_BADSIG] = "bad signature",
	[KD_E_DECRYPT] = "sealed box does not open", [KD_E_INVAL] = "invalid argument",
	[KD_E_BUSY] = "daemon busy", [KD_E_NOMEM] = "out of secure memory",
	[KD_E_TIMEOUT] = "request timed out",
};

const char *kd_status_name(unsigned status)
{
	return status <= KD_STATUS_MAX ? status_names[status] : "unknown status";
}

size_t kd_stat_pack(uint8_t *out, const struct kd_stat_rec *r)
{
	size_t nlen = strnlen(r->name, KD_NAME_MAX);

	out[0] = r->type;
	out[1] = r->lock_method;
	put64(out + 2, r->capacity);
	put64(out + 10, r->resident_pages);
	put64(out + 18, r->locked_pages);
	put64(out + 26, r->page_size);
	memcpy(out + KD_STAT_FIXED, r->name, nlen);
	return KD_STAT_FIXED + nlen;
}

int kd_stat_unpack(const struct kd_field *f, struct kd_stat_rec *r)
{
	size_t nlen;

	if (f->len < KD_STAT_FIXED || f->len - KD_STAT_FIXED > KD_NAME_MAX)
		return -1;
	nlen = f->len - KD_STAT_FIXED;
	r->type = f->p[0];
	r->lock_method = f->p[1];
	r->capacity = get64(f->p + 2);
	r->resident_pages = get64(f->p + 10);
	r->locked_pages = get64(f->p + 18);
	r->page_size = get64(f->p + 26);
	memcpy(r->name, f->p + KD_STAT_FIXED, nlen);
	r->name[nlen] = '\0';
	return 0;
}
