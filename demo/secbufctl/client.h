/*
 * client.h - the client side of the secbufd protocol (secbufctl, tests).
 * Request and reply frames live in secbuf memory: they may carry secrets.
 */
#ifndef SECBUFD_CLIENT_H
#define SECBUFD_CLIENT_H

#include <stdint.h>

#include "../secbufd/keystore.h"
#include "../protocol/protocol.h"

#define KD_REPLY_FIELDS_MAX	(KEYSTORE_MAX + 2)
#define KD_REPLY_MAX		(1U << 30)

struct kd_reply {
	uint8_t status;
	uint8_t *body;		/* secbuf, NULL when empty */
	uint32_t len;
	unsigned nf;
	struct kd_field f[KD_REPLY_FIELDS_MAX];
};

/* Connect to the daemon's socket; -1 with errno on failure. */
int kd_connect(const char *path);

/* A request frame with fields of these lengths for the caller to fill in place; NULL with errno. */
uint8_t *kd_frame_new(uint8_t op, unsigned n, const uint32_t *lens, uint8_t **ptrs);

/*
 * Send a frame (the length its header gives) from a secbuf buffer, then
 * wipe and free it; -1 with errno on failure.
 */
int kd_frame_send(int fd, uint8_t *frame);

/*
 * Read one reply: 0, or -1 with errno (EPROTO for a malformed reply,
 * ECONNRESET for end of stream).  Error replies come with their message
 * NUL-terminated in f[0].
 */
int kd_reply_recv(int fd, struct kd_reply *r);
void kd_reply_free(struct kd_reply *r);

/* Send a frame from kd_frame_new() (consuming it) and read the reply; -1 with errno. */
int kd_request(int fd, uint8_t *frame, struct kd_reply *r);

/* Send op with copies of the given fields and read the reply. */
int kd_call(int fd, uint8_t op, unsigned n, const struct kd_field *req, struct kd_reply *r);

/* Read or write exactly len bytes; -1 with errno (ECONNRESET for EOF).  Callers ignore SIGPIPE. */
int kd_read_full(int fd, void *buf, size_t len);
int kd_write_full(int fd, const void *buf, size_t len);

#endif
