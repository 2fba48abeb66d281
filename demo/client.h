/*
 * client.h - the client side of the secbufd protocol (secbufctl, tests).
 * Request and reply frames live in secbuf memory: they may carry secrets.
 */
#ifndef SECBUFD_CLIENT_H
#define SECBUFD_CLIENT_H

#include <stdint.h>

#include "keystore.h"
#include "protocol.h"

#define SB_REPLY_FIELDS_MAX	(KEYSTORE_MAX + 2)
#define SB_REPLY_MAX		(1U << 30)

struct sb_reply {
	uint8_t status;
	uint8_t *body;		/* secbuf, NULL when empty */
	uint32_t len;
	unsigned nf;
	struct sb_field f[SB_REPLY_FIELDS_MAX];
};

/* Connect to the daemon's socket; -1 with errno on failure. */
int sb_connect(const char *path);

/* A request frame with fields of these lengths for the caller to fill in place; NULL with errno. */
uint8_t *sb_frame_new(uint8_t op, unsigned n, const uint32_t *lens, uint8_t **ptrs);

/*
 * Send a frame (the length its header gives) from a secbuf buffer, then
 * wipe and free it; -1 with errno on failure.
 */
int sb_frame_send(int fd, uint8_t *frame);

/*
 * Read one reply: 0, or -1 with errno (EPROTO for a malformed reply,
 * ECONNRESET for end of stream).  Error replies come with their message
 * NUL-terminated in f[0].
 */
int sb_reply_recv(int fd, struct sb_reply *r);
void sb_reply_free(struct sb_reply *r);

/* Send a frame from sb_frame_new() (consuming it) and read the reply; -1 with errno. */
int sb_request(int fd, uint8_t *frame, struct sb_reply *r);

/* Send op with copies of the given fields and read the reply. */
int sb_call(int fd, uint8_t op, unsigned n, const struct sb_field *req, struct sb_reply *r);

/* Read or write exactly len bytes; -1 with errno (ECONNRESET for EOF).  Callers ignore SIGPIPE. */
int sb_read_full(int fd, void *buf, size_t len);
int sb_write_full(int fd, const void *buf, size_t len);

#endif
