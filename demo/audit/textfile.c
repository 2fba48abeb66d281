/* textfile.c - a file replaced whole: temporary file, fsync, rename. */
#define _GNU_SOURCE
#include "textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		data += n;
		len -= n;
	}
	return 0;
}

int textfile_replace(const char *path, const char *data, size_t len)
{
	char dir[4096], base[256], tmp[4096 + 256 + 16];
	mode_t mask;
	int fd, err;

	/* dirname() and basename() may change their argument: copies. */
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dirname(dir), basename(base)) >=
	    (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -1;
	mask = umask(0);
	umask(mask);
	/* mkostemp() makes it 0600; the exporter runs as another user. */
	if (fchmod(fd, 0666 & ~mask) < 0 || write_all(fd, data, len) < 0 || fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto fail;
	return 0;
fail:
	err = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp); /* ours, half written: never leave it */
	errno = err;
	return -1;
}
