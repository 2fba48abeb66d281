/* client.c - connect, send a frame, receive and split a reply. */
#include "client.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "secbuf.h"

int kd_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

int kd_read_full(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (uint8_t *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			errno = ECONNRESET;
		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

int kd_write_full(int fd, const void *buf, size_t len)
{
	for (size_t put = 0; put < len;) {
		ssize_t n = write(fd, (const uint8_t *)buf + put, len - put);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		put += n;
	}
	return 0;
}

uint8_t *kd_frame_new(uint8_t op, unsigned n, const uint32_t *lens, uint8_t **ptrs)
{
	size_t size = kd_frame_size(n, lens);
	uint8_t *frame;

	if (!size) {
		errno = EMSGSIZE;
		return NULL;
	}
	frame = secbuf_alloc_flags(size, SECBUF_BEST_EFFORT);
	if (frame)
		kd_frame_layout(frame, op, n, lens, ptrs);
	return frame;
}

int kd_frame_send(int fd, uint8_t *frame)
{
	/* The header says how long the frame is; its buffer may be larger. */
	int rc = kd_write_full(fd, frame, KD_HDR_SIZE + (size_t)kd_get32(frame + 4));
	int err = errno;

	secbuf_free(frame);
	errno = err;
	return rc;
}

int kd_reply_recv(int fd, struct kd_reply *r)
{
	uint8_t hdr[KD_HDR_SIZE];
	int n;

	memset(r, 0, sizeof(*r));
	if (kd_read_full(fd, hdr, sizeof(hdr)) < 0)
		return -1;
	if (kd_hdr_parse(hdr, &r->status, &r->len) < 0 || r->len > KD_REPLY_MAX) {
		errno = EPROTO;
		return -1;
	}
	/* One spare byte NUL-terminates an error message. */
	r->body = secbuf_alloc_flags(r->len + 1, SECBUF_BEST_EFFORT);
	if (!r->body)
		return -1;
	if (kd_read_full(fd, r->body, r->len) < 0)
		goto fail;
	n = kd_fields_parse(r->body, r->len, r->f, 0, KD_REPLY_FIELDS_MAX);
	if (n < 0 || (r->status != KD_OK && n != 1)) {
		errno = EPROTO;
		goto fail;
	}
	r->nf = n;
	if (r->status != KD_OK) {
		uint32_t mlen = r->f[0].len;

		memmove(r->body, r->f[0].p, mlen);
		r->body[mlen] = '\0';
		r->f[0].p = r->body;
	}
	return 0;
fail:
	kd_reply_free(r);
	return -1;
}

void kd_reply_free(struct kd_reply *r)
{
	int err = errno;

	secbuf_free(r->body);
	r->body = NULL;
	r->nf = 0;
	errno = err;
}

int kd_call(int fd, uint8_t op, unsigned n, const struct kd_field *req, struct kd_reply *r)
{
	uint32_t lens[KD_REQ_FIELDS_MAX] = { 0 };
	uint8_t *ptrs[KD_REQ_FIELDS_MAX];
	uint8_t *frame;

	if (n > KD_REQ_FIELDS_MAX) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned i = 0; i < n; i++)
		lens[i] = req[i].len;
	frame = kd_frame_new(op, n, lens, ptrs);
	if (!frame)
		return -1;
	for (unsigned i = 0; i < n; i++)
		memcpy(ptrs[i], req[i].p, req[i].len);
	return kd_request(fd, frame, r);
}

int kd_request(int fd, uint8_t *frame, struct kd_reply *r)
{
	/* A daemon that refused us may have replied and closed before we wrote. */
	if (kd_frame_send(fd, frame) < 0 && errno != EPIPE && errno != ECONNRESET)
		return -1;
	return kd_reply_recv(fd, r);
}
