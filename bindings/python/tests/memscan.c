/*
 * memscan.c - find a secret in this process's memory without ever holding
 * it: the caller passes it masked (secret XOR mask) with the mask, and a
 * window matches when window XOR mask equals the masked needle, byte by
 * byte.  The memory is read through /proc/self/mem (an unreadable page is
 * an error, not a fault) into a scratch mapping of our own, whose own
 * address is never reported.  Loaded by the tests with ctypes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHUNK	   (1u << 20)
#define NEEDLE_MAX 64

static unsigned char *scratch;

static int match(const unsigned char *p, const unsigned char *masked, const unsigned char *mask,
		 size_t k)
{
	for (size_t j = 0; j < k; j++)
		if ((unsigned char)(p[j] ^ mask[j]) != masked[j])
			return 0;
	return 1;
}

/*
 * Scan [start, end) through the open /proc/self/mem memfd for the masked
 * needle of k bytes; store up to max hit addresses in hits.  Returns the
 * number of hits (may exceed max), or -1 with errno (EINVAL: bad k).
 * Pages that cannot be read are skipped.
 */
long memscan(int memfd, uintptr_t start, uintptr_t end, const unsigned char *masked,
	     const unsigned char *mask, size_t k, uintptr_t *hits, long max)
{
	long found = 0;

	if (k == 0 || k > NEEDLE_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (!scratch) {
		scratch = mmap(NULL, CHUNK + NEEDLE_MAX, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (scratch == MAP_FAILED) {
			scratch = NULL;
			return -1;
		}
	}
	uintptr_t own = (uintptr_t)scratch, own_end = own + CHUNK + NEEDLE_MAX;

	/* Chunks overlap by k - 1 bytes, so a needle across a boundary is seen. */
	for (uintptr_t at = start; at < end; at += CHUNK) {
		size_t want = end - at < CHUNK + k - 1 ? end - at : CHUNK + k - 1;
		ssize_t got = pread(memfd, scratch, want, (off_t)at);

		if (got < (ssize_t)k)
			continue; /* unreadable (EIO): a guard, or memfd_secret */
		for (ssize_t i = 0; i + (ssize_t)k <= got; i++) {
			uintptr_t addr = at + (uintptr_t)i;

			if (match(scratch + i, masked, mask, k) &&
			    (addr < own || addr >= own_end)) {
				if (found < max)
					hits[found] = addr;
				found++;
			}
		}
	}
	explicit_bzero(scratch, CHUNK + NEEDLE_MAX);
	return found;
}
