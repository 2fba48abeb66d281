// SPDX-License-Identifier: MIT
/* Marker generation, printing and search, and memfd_secret mappings. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib-mark.h"
#include "tap.h"

int mark_fill(void *p)
{
	ssize_t n = getrandom(p, MARK_LEN, 0);

	if (n != MARK_LEN) {
		if (n >= 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

void mark_keep(const char *label, const void *p)
{
	const volatile unsigned char *b = p;
	char hex[2 * MARK_LEN + 1];

	for (int i = 0; i < MARK_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	tap_keep("%s %s", label, hex);
}

size_t mark_count_n(const void *buf, size_t len, const void *needle, size_t n)
{
	const char *p = buf, *end = p + len;
	size_t hits = 0;

	while ((p = memmem(p, end - p, needle, n))) {
		hits++;
		p++;
	}
	return hits;
}

size_t mark_count(const void *buf, size_t len, const void *mark)
{
	return mark_count_n(buf, len, mark, MARK_LEN);
}

void *mark_slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t done = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !(buf = malloc(st.st_size + 1)))
		goto fail;
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, st.st_size - done);

		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			goto fail;
		}
		done += n;
	}
	close(fd);
	*len = done;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}
