/*
 * file.c - a core file, an image or a swap area, searched whole: a
 * regular file or a block device, read directly.  Every hit is exposed:
 * whatever a file holds is outside the process, on disk or on its way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "key.h"

struct file_scan {
	struct key_target *t;
	const struct key_patterns *ps;
};

static void hit(void *ctx, const struct key_hit *h)
{
	struct file_scan *s = ctx;
	struct key_hit mine = *h;

	mine.map = (size_t)-1;
	mine.exposed = 1;
	key_target_hit(s->t, s->ps, &mine);
}

/* Its size: a regular file's, a block device's; -1 with t->error for anything else. */
static int size_of(int fd, struct key_target *t)
{
	struct stat st;
	uint64_t bytes;

	if (fstat(fd, &st) < 0) {
		snprintf(t->error, sizeof(t->error), "fstat: %s", strerror(errno));
		return -1;
	}
	if (S_ISREG(st.st_mode)) {
		t->size = (uint64_t)st.st_size;
		return 0;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0) {
			snprintf(t->error, sizeof(t->error), "BLKGETSIZE64: %s", strerror(errno));
			return -1;
		}
		t->size = bytes;
		return 0;
	}
	snprintf(t->error, sizeof(t->error), "%s",
		 S_ISDIR(st.st_mode) ? "a directory" :
				       "not a regular file or a block device (never a pipe or "
				       "a terminal: the audit does not wait for input)");
	return -1;
}

int key_scan_file(struct key_target *t, struct key_reader *r, const struct key_patterns *ps)
{
	struct file_scan s = { .t = t, .ps = ps };
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t at = 0, stop;
	char why[120];
	int fd, rc = 0;

	/* O_NONBLOCK: a FIFO given by mistake is refused, not waited on. */
	fd = open(t->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(t->error, sizeof(t->error), "%s", strerror(errno));
		return -1;
	}
	if (size_of(fd, t) < 0) {
		close(fd);
		return -1;
	}
	r->drop_cache = 1;
	while (at < t->size) {
		rc = key_stream(r, ps, fd, at, t->size, &stop, hit, &s);
		t->read += stop - at;
		if (rc == 0)
			break;
		if (rc > 0) {
			t->vanished = 1; /* it shrank while it was read */
			break;
		}
		/* A bad sector: that page, counted and named, and on with the rest. */
		snprintf(why, sizeof(why), "read: %s", strerror(errno));
		stop &= ~(page - 1);
		at = stop + page < t->size ? stop + page : t->size;
		if (key_target_unread(t, stop, at, (size_t)-1, why) < 0) {
			snprintf(t->error, sizeof(t->error), "out of memory");
			rc = -1;
			break;
		}
	}
	r->drop_cache = 0;
	key_reader_wipe(r);
	close(fd);
	return rc < 0 ? -1 : 0;
}
