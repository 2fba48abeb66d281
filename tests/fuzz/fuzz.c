/* fuzz.c - typed values from the fuzzer's bytes; files of given bytes. */
#define _GNU_SOURCE
#include "fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void take(struct fuzz_in *in, void *out, size_t n)
{
	size_t k = n < in->len ? n : in->len;

	memset(out, 0, n);
	memcpy(out, in->p, k);
	in->p += k;
	in->len -= k;
}

uint8_t fuzz_u8(struct fuzz_in *in)
{
	uint8_t v;

	take(in, &v, sizeof(v));
	return v;
}

uint32_t fuzz_u32(struct fuzz_in *in)
{
	uint32_t v;

	take(in, &v, sizeof(v));
	return v;
}

uint64_t fuzz_u64(struct fuzz_in *in)
{
	uint64_t v;

	take(in, &v, sizeof(v));
	return v;
}

unsigned fuzz_below(struct fuzz_in *in, unsigned n)
{
	return n <= 256 ? fuzz_u8(in) % n : fuzz_u32(in) % n;
}

const uint8_t *fuzz_bytes(struct fuzz_in *in, size_t max, size_t *len)
{
	const uint8_t *p;
	size_t n = fuzz_u8(in);

	if (n > max)
		n = max;
	if (n > in->len)
		n = in->len;
	p = in->p;
	in->p += n;
	in->len -= n;
	*len = n;
	return p;
}

int fuzz_file(const void *data, size_t len, char path[64])
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		perror("fuzz_file");
		abort();
	}
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

void fuzz_quiet(void)
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (null < 0 || dup2(null, STDOUT_FILENO) < 0) {
		perror("/dev/null");
		abort();
	}
	close(null);
}
