/*
 * protocol.h - the secbufd wire format, shared by daemon, client and tests.
 * Its names carry the prefix kd_ / KD_ (key daemon).
 *
 * A frame is an 8-byte header followed by a body of fields:
 *
 *   header: version(1) code(1) reserved(2, zero) body_len(4, big endian)
 *   body:   field*   where field = len(4, big endian) bytes[len]
 *
 * In a request the code is a KD_OP_ value, in a reply a KD_OK or KD_E_ status.
 * Error replies carry one field, a human-readable message.  The daemon
 * answers a malformed, oversized or truncated frame with an error reply and
 * then closes the connection, since the stream can no longer be trusted.
 */
#ifndef SECBUFD_PROTOCOL_H
#define SECBUFD_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#define KD_PROTO_VERSION	1
#define KD_DEFAULT_SOCKET	"/run/secbufd/secbufd.sock"	/* $SECBUFD_SOCKET overrides */
#define KD_HDR_SIZE		8
#define KD_FIELD_HDR		4
#define KD_NAME_MAX		64	/* key names: 1..64 of [A-Za-z0-9._-] */
#define KD_STR_(x)		#x
#define KD_STR(x)		KD_STR_(x)
#define KD_NAME_RULE		"1 to " KD_STR(KD_NAME_MAX) " characters of A-Z a-z 0-9 . _ -"
#define KD_REQ_FIELDS_MAX	4	/* no request has more fields */
#define KD_ERRMSG_MAX		160

enum kd_op {
	KD_OP_KEYGEN = 1,	/* type(1) name            -> pubkey */
	KD_OP_IMPORT,		/* type(1) name secret     -> pubkey */
	KD_OP_PUBKEY,		/* name                    -> type(1) pubkey */
	KD_OP_SIGN,		/* name message            -> signature(64) */
	KD_OP_VERIFY,		/* name message signature  -> (nothing) or KD_E_BADSIG */
	KD_OP_SEAL,		/* name message            -> sealed box */
	KD_OP_OPEN,		/* name sealed-box         -> message */
	KD_OP_LIST,		/* (nothing)               -> per key: type(1) name */
	KD_OP_DELETE,		/* name                    -> (nothing) */
	KD_OP_STATS,		/* (nothing)               -> struct kd_stat_rec fields */
	KD_OP_MAX = KD_OP_STATS
};

enum kd_status {
	KD_OK = 0,
	KD_E_MALFORMED,		/* bad version, op or field layout */
	KD_E_TOOBIG,		/* body larger than the daemon's limit */
	KD_E_TRUNCATED,		/* peer closed in the middle of a frame */
	KD_E_DENIED,		/* SO_PEERCRED uid is not the daemon's or root */
	KD_E_NOKEY,		/* no key of that name */
	KD_E_EXISTS,		/* a key of that name exists already */
	KD_E_KEYTYPE,		/* wrong key type for the operation */
	KD_E_BADSIG,		/* signature does not verify */
	KD_E_DECRYPT,		/* sealed box does not open */
	KD_E_INVAL,		/* bad name, type or secret length */
	KD_E_BUSY,		/* working buffer or connection table full */
	KD_E_NOMEM,		/* secure memory could not be allocated */
	KD_E_TIMEOUT,		/* frame not completed in time */
	KD_STATUS_MAX = KD_E_TIMEOUT
};

enum kd_keytype {
	KD_KEY_ED25519 = 1,	/* signing: crypto_sign */
	KD_KEY_X25519 = 2,	/* sealing: crypto_box_seal */
};

/* One STATS record, packed big endian into a field by kd_stat_pack(). */
struct kd_stat_rec {
	char name[KD_NAME_MAX + 1];	/* "*total", "*buffer" or a key name */
	uint8_t type;			/* enum kd_keytype, 0 for the totals */
	uint8_t lock_method;		/* SECBUF_LOCK_* */
	uint64_t capacity;		/* bytes mapped for data */
	uint64_t resident_pages;
	uint64_t locked_pages;
	uint64_t page_size;
};
#define KD_STAT_FIXED	(2 + 4 * 8)

struct kd_field {
	const uint8_t *p;
	uint32_t len;
};

void kd_put32(uint8_t *p, uint32_t v);
uint32_t kd_get32(const uint8_t *p);

/* Write a header.  kd_hdr_parse() returns -1 on a bad version or reserved bytes. */
void kd_hdr_pack(uint8_t *hdr, uint8_t code, uint32_t body_len);
int kd_hdr_parse(const uint8_t *hdr, uint8_t *code, uint32_t *body_len);

/*
 * Frame layout: kd_frame_size() is the whole frame for fields of these
 * lengths (0 if it would exceed UINT32_MAX); kd_frame_layout() writes the
 * header and length prefixes into buf and points ptrs[i] at each field's
 * data, so that callers fill fields in place (no extra copy of secrets).
 */
size_t kd_frame_size(unsigned n, const uint32_t *lens);
void kd_frame_layout(uint8_t *buf, uint8_t code, unsigned n, const uint32_t *lens, uint8_t **ptrs);

/*
 * Split a body into exactly `want` fields (-1 unless the body is exactly
 * that many well-formed fields), or, with want == 0, into up to max fields
 * returning how many.
 */
int kd_fields_parse(const uint8_t *body, size_t len, struct kd_field *f, unsigned want, unsigned max);

/* Key names and types as the daemon accepts them. */
int kd_name_valid(const uint8_t *name, size_t len);
const char *kd_keytype_name(unsigned type);
int kd_keytype_parse(const char *s);

const char *kd_op_name(unsigned op);
const char *kd_status_name(unsigned status);

size_t kd_stat_pack(uint8_t *out, const struct kd_stat_rec *r);
int kd_stat_unpack(const struct kd_field *f, struct kd_stat_rec *r);

#endif
