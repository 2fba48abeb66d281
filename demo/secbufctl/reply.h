/*
 * reply.h - what secbufctl makes of a successful reply: its shape checked
 * against the request's operation, then printed.  A reply comes from
 * whatever listens on the socket, so nothing in it is trusted.
 */
#ifndef SECBUFCTL_REPLY_H
#define SECBUFCTL_REPLY_H

#include <stdint.h>

#include "client.h"

/* 0 if r (status KD_OK) has the fields op's reply must have, else -1 with errno EPROTO. */
int reply_check(uint8_t op, const struct kd_reply *r);

/* Print a checked reply of op to stdout; sign's, seal's and open's field as hex. */
void reply_print(uint8_t op, const struct kd_reply *r);

#endif
