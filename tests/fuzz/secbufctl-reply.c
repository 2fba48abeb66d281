/*
 * secbufctl-reply: whatever answers on the socket, as secbufctl reads it.
 * The first byte picks the operation that was asked; the rest is the
 * stream kd_reply_recv() reads, then reply_check() and reply_print().
 */
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "../../demo/secbufctl/reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	struct kd_reply r;
	char path[64];
	uint8_t op;
	int fd;

	if (!quiet++)
		fuzz_quiet();
	if (size < 1)
		return 0;
	op = 1 + data[0] % KD_OP_MAX;
	fd = fuzz_file(data + 1, size - 1, path);
	if (kd_reply_recv(fd, &r) == 0) {
		if (r.status == KD_OK && reply_check(op, &r) == 0)
			reply_print(op, &r);
		kd_reply_free(&r);
	}
	close(fd);
	return 0;
}
