/*
 * handlers.h - one complete request in, one reply frame out.  Replies that
 * may hold secrets are built in place in the working buffer.
 */
#ifndef SECBUFD_HANDLERS_H
#define SECBUFD_HANDLERS_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "keystore.h"

#define KD_ERRFRAME_MAX (KD_HDR_SIZE + KD_FIELD_HDR + KD_ERRMSG_MAX)

struct reply {
	uint8_t *frame;		/* arena chunk on success */
	size_t len;
	uint8_t status;		/* KD_OK, else err holds the message */
	char err[KD_ERRMSG_MAX];
};

/* Fill r; returns r->status.  body is exactly the request's body. */
int handle_request(struct keystore *ks, struct arena *ar, uint8_t op,
		   const uint8_t *body, uint32_t len, struct reply *r);

/* An error frame carrying msg, written to buf (KD_ERRFRAME_MAX bytes); returns its length. */
size_t error_frame(uint8_t *buf, uint8_t status, const char *msg);

#endif
