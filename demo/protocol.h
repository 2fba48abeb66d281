/*
 * protocol.h - the secbufd wire format, shared by daemon, client and tests.
 *
 * A frame is an 8-byte header followed by a body of fields:
 *
 *   header: version(1) code(1) reserved(2, zero) body_len(4, big endian)
 *   body:   field*   where field = len(4, big endian) bytes[len]
 *
 * In a request the code is an SB_OP_ value, in a reply an SB_OK or SB_E_ status.
 * Error replies carry one field, a human-readable message.  The daemon
 * answers a malformed, oversized or truncated frame with an error reply and
 * then closes the connection, since the stream can no longer be trusted.
 */
#ifndef SECBUFD_PROTOCOL_H
#define SECBUFD_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#define SB_PROTO_VERSION	1
#define SB_DEFAULT_SOCKET	"/run/secbufd/secbufd.sock"	/* $SECBUFD_SOCKET overrides */
#define SB_HDR_SIZE		8
#define SB_FIELD_HDR		4
#define SB_NAME_MAX		64	/* key names: 1..64 of [A-Za-z0-9._-] */
#define SB_STR_(x)		#x
#define SB_STR(x)		SB_STR_(x)
#define SB_NAME_RULE		"1 to " SB_STR(SB_NAME_MAX) " characters of A-Z a-z 0-9 . _ -"
#define SB_REQ_FIELDS_MAX	4	/* no request has more fields */
#define SB_ERRMSG_MAX		160

enum sb_op {
	SB_OP_KEYGEN = 1,	/* type(1) name            -> pubkey */
	SB_OP_IMPORT,		/* type(1) name secret     -> pubkey */
	SB_OP_PUBKEY,		/* name                    -> type(1) pubkey */
	SB_OP_SIGN,		/* name message            -> signature(64) */
	SB_OP_VERIFY,		/* name message signature  -> (nothing) or SB_E_BADSIG */
	SB_OP_SEAL,		/* name message            -> sealed box */
	SB_OP_OPEN,		/* name sealed-box         -> message */
	SB_OP_LIST,		/* (nothing)               -> per key: type(1) name */
	SB_OP_DELETE,		/* name                    -> (nothing) */
	SB_OP_STATS,		/* (nothing)               -> struct sb_stat_rec fields */
	SB_OP_MAX = SB_OP_STATS
};

enum sb_status {
	SB_OK = 0,
	SB_E_MALFORMED,		/* bad version, op or field layout */
	SB_E_TOOBIG,		/* body larger than the daemon's limit */
	SB_E_TRUNCATED,		/* peer closed in the middle of a frame */
	SB_E_DENIED,		/* SO_PEERCRED uid is not the daemon's or root */
	SB_E_NOKEY,		/* no key of that name */
	SB_E_EXISTS,		/* a key of that name exists already */
	SB_E_KEYTYPE,		/* wrong key type for the operation */
	SB_E_BADSIG,		/* signature does not verify */
	SB_E_DECRYPT,		/* sealed box does not open */
	SB_E_INVAL,		/* bad name, type or secret length */
	SB_E_BUSY,		/* working buffer or connection table full */
	SB_E_NOMEM,		/* secure memory could not be allocated */
	SB_E_TIMEOUT,		/* frame not completed in time */
	SB_STATUS_MAX = SB_E_TIMEOUT
};

enum sb_keytype {
	SB_KEY_ED25519 = 1,	/* signing: crypto_sign */
	SB_KEY_X25519 = 2,	/* sealing: crypto_box_seal */
};

/* One STATS record, packed big endian into a field by sb_stat_pack(). */
struct sb_stat_rec {
	char name[SB_NAME_MAX + 1];	/* "*total", "*buffer" or a key name */
	uint8_t type;			/* enum sb_keytype, 0 for the totals */
	uint8_t lock_method;		/* SECBUF_LOCK_* */
	uint64_t capacity;		/* bytes mapped for data */
	uint64_t resident_pages;
	uint64_t locked_pages;
	uint64_t page_size;
};
#define SB_STAT_FIXED	(2 + 4 * 8)

struct sb_field {
	const uint8_t *p;
	uint32_t len;
};

void sb_put32(uint8_t *p, uint32_t v);
uint32_t sb_get32(const uint8_t *p);

/* Write a header.  sb_hdr_parse() returns -1 on a bad version or reserved bytes. */
void sb_hdr_pack(uint8_t *hdr, uint8_t code, uint32_t body_len);
int sb_hdr_parse(const uint8_t *hdr, uint8_t *code, uint32_t *body_len);

/*
 * Frame layout: sb_frame_size() is the whole frame for fields of these
 * lengths (0 if it would exceed UINT32_MAX); sb_frame_layout() writes the
 * header and length prefixes into buf and points ptrs[i] at each field's
 * data, so that callers fill fields in place (no extra copy of secrets).
 */
size_t sb_frame_size(unsigned n, const uint32_t *lens);
void sb_frame_layout(uint8_t *buf, uint8_t code, unsigned n, const uint32_t *lens, uint8_t **ptrs);

/*
 * Split a body into exactly `want` fields (-1 unless the body is exactly
 * that many well-formed fields), or, with want == 0, into up to max fields
 * returning how many.
 */
int sb_fields_parse(const uint8_t *body, size_t len, struct sb_field *f, unsigned want, unsigned max);

/* Key names and types as the daemon accepts them. */
int sb_name_valid(const uint8_t *name, size_t len);
const char *sb_keytype_name(unsigned type);
int sb_keytype_parse(const char *s);

const char *sb_op_name(unsigned op);
const char *sb_status_name(unsigned status);

size_t sb_stat_pack(uint8_t *out, const struct sb_stat_rec *r);
int sb_stat_unpack(const struct sb_field *f, struct sb_stat_rec *r);

#endif
