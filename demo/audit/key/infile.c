/*
 * infile.c - a key or secret file read straight into secbuf memory: no
 * stdio buffer, no heap copy.  A regular file, or a pipe so that an
 * encrypted key can be given decrypted without touching the disk
 * (--key <(openssl pkey -in key.pem)); never standard input and never a
 * terminal, so that the audit cannot end up waiting for a person.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <secbuf.h>

#include "load.h"

#define PIPE_WAIT_MS 30000 /* a pipe that says nothing for this long is an error */

/* A secbuf buffer of size bytes, or the reason why not. */
static uint8_t *secret_alloc(size_t size, char *why, size_t wsize)
{
	uint8_t *p = secbuf_alloc(size);
	char line[300];

	if (!p) {
		secbuf_last_failure(line, sizeof(line));
		snprintf(why, wsize, "no secbuf memory to hold it: %s", line);
	}
	return p;
}

void key_blob_free(struct key_blob *b)
{
	secbuf_free(b->data); /* wipes what was resident */
	b->data = NULL;
	b->len = b->size = 0;
}

static int read_regular(int fd, const struct stat *st, struct key_blob *b, char *why, size_t wsize)
{
	ssize_t n;

	if (st->st_size == 0) {
		snprintf(why, wsize, "empty file");
		return -1;
	}
	if (st->st_size > KEY_FILE_MAX) {
		snprintf(why, wsize, "%lld bytes: too large for a key file (%d at most)",
			 (long long)st->st_size, KEY_FILE_MAX);
		return -1;
	}
	b->size = (size_t)st->st_size + 1;
	b->data = secret_alloc(b->size, why, wsize);
	if (!b->data)
		return -1;
	/* Up to the size fstat gave: a file that grows meanwhile is read as it was. */
	while (b->len < (size_t)st->st_size) {
		n = pread(fd, b->data + b->len, (size_t)st->st_size - b->len, (off_t)b->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(why, wsize, "read: %s", strerror(errno));
			return -1;
		}
		if (n == 0)
			break; /* truncated meanwhile: what is there is decoded, or refused */
		b->len += (size_t)n;
	}
	return 0;
}

/* A pipe, non-blocking: poll with a bound on each wait, grow by copying. */
static int read_pipe(int fd, struct key_blob *b, char *why, size_t wsize)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int rc;

	b->size = 64 << 10;
	b->data = secret_alloc(b->size, why, wsize);
	if (!b->data)
		return -1;
	for (;;) {
		if (b->len + 1 == b->size) {
			uint8_t *bigger;

			if (b->size >= KEY_FILE_MAX) {
				snprintf(why, wsize, "more than %d bytes: too large for a key file",
					 KEY_FILE_MAX);
				return -1;
			}
			bigger = secret_alloc(b->size * 2, why, wsize);
			if (!bigger)
				return -1;
			memcpy(bigger, b->data, b->len);
			secbuf_free(b->data);
			b->data = bigger;
			b->size *= 2;
		}
		n = read(fd, b->data + b->len, b->size - 1 - b->len);
		if (n > 0) {
			b->len += (size_t)n;
			continue;
		}
		if (n == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			snprintf(why, wsize, "read: %s", strerror(errno));
			return -1;
		}
		rc = poll(&pfd, 1, PIPE_WAIT_MS);
		if (rc == 0) {
			snprintf(why, wsize,
				 "a pipe that sent nothing for %d s (secbuf-audit never "
				 "waits for input)",
				 PIPE_WAIT_MS / 1000);
			return -1;
		}
		if (rc < 0 && errno != EINTR) {
			snprintf(why, wsize, "poll: %s", strerror(errno));
			return -1;
		}
	}
	if (!b->len) {
		snprintf(why, wsize, "empty (the pipe closed without a byte)");
		return -1;
	}
	return 0;
}

int key_file_read(const char *path, struct key_blob *b, char *why, size_t wsize)
{
	struct stat st, in;
	int fd, rc = -1;

	b->data = NULL;
	b->len = b->size = 0;
	b->path = path;
	/* O_NONBLOCK: opening a FIFO without a writer must not wait for one. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(why, wsize, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(why, wsize, "fstat: %s", strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		snprintf(why, wsize, "a directory, not a key file");
	} else if (S_ISREG(st.st_mode)) {
		rc = read_regular(fd, &st, b, why, wsize);
	} else if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) {
		snprintf(why, wsize,
			 "not a regular file or a pipe (a terminal or device is never "
			 "read: secbuf-audit does not prompt)");
	} else if (fstat(STDIN_FILENO, &in) == 0 && in.st_dev == st.st_dev &&
		   in.st_ino == st.st_ino) {
		snprintf(why, wsize,
			 "this is secbuf-audit's standard input, which it never "
			 "reads; give the key through a file or another pipe");
	} else {
		rc = read_pipe(fd, b, why, wsize);
	}
	close(fd);
	if (rc < 0) {
		key_blob_free(b);
		return -1;
	}
	b->data[b->len] = '\0';
	return 0;
}
