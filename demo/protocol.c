/* protocol.c - frame encoding and validation for the secbufd protocol. */
#include "protocol.h"

#include <string.h>

void sb_put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

uint32_t sb_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put64(uint8_t *p, uint64_t v)
{
	sb_put32(p, v >> 32);
	sb_put32(p + 4, (uint32_t)v);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)sb_get32(p) << 32 | sb_get32(p + 4);
}

void sb_hdr_pack(uint8_t *hdr, uint8_t code, uint32_t body_len)
{
	hdr[0] = SB_PROTO_VERSION;
	hdr[1] = code;
	hdr[2] = 0;
	hdr[3] = 0;
	sb_put32(hdr + 4, body_len);
}

int sb_hdr_parse(const uint8_t *hdr, uint8_t *code, uint32_t *body_len)
{
	if (hdr[0] != SB_PROTO_VERSION || hdr[2] || hdr[3])
		return -1;
	*code = hdr[1];
	*body_len = sb_get32(hdr + 4);
	return 0;
}

size_t sb_frame_size(unsigned n, const uint32_t *lens)
{
	uint64_t total = SB_HDR_SIZE;

	for (unsigned i = 0; i < n; i++)
		total += SB_FIELD_HDR + (uint64_t)lens[i];
	if (total - SB_HDR_SIZE > UINT32_MAX)
		return 0;
	return total;
}

void sb_frame_layout(uint8_t *buf, uint8_t code, unsigned n, const uint32_t *lens, uint8_t **ptrs)
{
	uint8_t *p = buf + SB_HDR_SIZE;

	for (unsigned i = 0; i < n; i++) {
		sb_put32(p, lens[i]);
		ptrs[i] = p + SB_FIELD_HDR;
		p += SB_FIELD_HDR + lens[i];
	}
	sb_hdr_pack(buf, code, (uint32_t)(p - buf - SB_HDR_SIZE));
}

int sb_fields_parse(const uint8_t *body, size_t len, struct sb_field *f, unsigned want, unsigned max)
{
	unsigned n = 0;
	size_t off = 0;

	if (want)
		max = want;
	while (off < len) {
		uint32_t flen;

		if (n == max || len - off < SB_FIELD_HDR)
			return -1;
		flen = sb_get32(body + off);
		off += SB_FIELD_HDR;
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

int sb_name_valid(const uint8_t *name, size_t len)
{
	if (len == 0 || len > SB_NAME_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

const char *sb_keytype_name(unsigned type)
{
	switch (type) {
	case SB_KEY_ED25519: return "ed25519";
	case SB_KEY_X25519: return "x25519";
	}
	return "?";
}

int sb_keytype_parse(const char *s)
{
	if (!strcmp(s, "ed25519"))
		return SB_KEY_ED25519;
	if (!strcmp(s, "x25519"))
		return SB_KEY_X25519;
	return -1;
}

static const char *const op_names[] = {
	[SB_OP_KEYGEN] = "keygen", [SB_OP_IMPORT] = "import", [SB_OP_PUBKEY] = "pubkey",
	[SB_OP_SIGN] = "sign", [SB_OP_VERIFY] = "verify", [SB_OP_SEAL] = "seal",
	[SB_OP_OPEN] = "open", [SB_OP_LIST] = "list", [SB_OP_DELETE] = "delete",
	[SB_OP_STATS] = "stats",
};

const char *sb_op_name(unsigned op)
{
	return op >= 1 && op <= SB_OP_MAX ? op_names[op] : "?";
}

static const char *const status_names[] = {
	[SB_OK] = "ok", [SB_E_MALFORMED] = "malformed request", [SB_E_TOOBIG] = "request too large",
	[SB_E_TRUNCATED] = "truncated request", [SB_E_DENIED] = "permission denied",
	[SB_E_NOKEY] = "no such key", [SB_E_EXISTS] = "key exists",
	[SB_E_KEYTYPE] = "wrong key type", [SB_E_BADSIG] = "bad signature",
	[SB_E_DECRYPT] = "sealed box does not open", [SB_E_INVAL] = "invalid argument",
	[SB_E_BUSY] = "daemon busy", [SB_E_NOMEM] = "out of secure memory",
	[SB_E_TIMEOUT] = "request timed out",
};

const char *sb_status_name(unsigned status)
{
	return status <= SB_STATUS_MAX ? status_names[status] : "unknown status";
}

size_t sb_stat_pack(uint8_t *out, const struct sb_stat_rec *r)
{
	size_t nlen = strnlen(r->name, SB_NAME_MAX);

	out[0] = r->type;
	out[1] = r->lock_method;
	put64(out + 2, r->capacity);
	put64(out + 10, r->resident_pages);
	put64(out + 18, r->locked_pages);
	put64(out + 26, r->page_size);
	memcpy(out + SB_STAT_FIXED, r->name, nlen);
	return SB_STAT_FIXED + nlen;
}

int sb_stat_unpack(const struct sb_field *f, struct sb_stat_rec *r)
{
	size_t nlen;

	if (f->len < SB_STAT_FIXED || f->len - SB_STAT_FIXED > SB_NAME_MAX)
		return -1;
	nlen = f->len - SB_STAT_FIXED;
	r->type = f->p[0];
	r->lock_method = f->p[1];
	r->capacity = get64(f->p + 2);
	r->resident_pages = get64(f->p + 10);
	r->locked_pages = get64(f->p + 18);
	r->page_size = get64(f->p + 26);
	memcpy(r->name, f->p + SB_STAT_FIXED, nlen);
	r->name[nlen] = '\0';
	return 0;
}
