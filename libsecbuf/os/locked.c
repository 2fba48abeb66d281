/*
 * What the kernel says of the library's memory in this process, from
 * /proc/self/smaps: the mappings with secbuf's signature (VmFlags dd and
 * wf, the data of every buffer and slab and the key page) and
 * memfd_secret memory.  Their size and their Locked: field, summed.  No
 * stdio, no allocation: read in blocks, one line at a time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "os.h"

struct walk {
	unsigned long long size_kb, locked_kb; /* of the mapping being read */
	int secret;			       /* /secretmem: counts whatever its flags */
	unsigned long long mapped_kb, total_locked_kb;
};

static void line(struct walk *w, const char *s)
{
	if (strncmp(s, "Size:", 5) == 0) {
		w->size_kb = strtoull(s + 5, NULL, 10);
	} else if (strncmp(s, "Locked:", 7) == 0) {
		w->locked_kb = strtoull(s + 7, NULL, 10);
	} else if (strncmp(s, "VmFlags:", 8) == 0) {
		/* The last field of a mapping: decide. */
		if ((strstr(s, " dd") && strstr(s, " wf")) || (w->secret && strstr(s, " dd"))) {
			w->mapped_kb += w->size_kb;
			w->total_locked_kb += w->locked_kb;
		}
	} else if (strchr(s, '-') && s[0] && strchr("0123456789abcdef", s[0])) {
		/* A mapping's first line: "start-end perms offset dev inode [name]". */
		w->size_kb = w->locked_kb = 0;
		w->secret = strstr(s, "/secretmem") != NULL;
	}
}

int sb_smaps_totals(size_t *mapped_bytes, size_t *locked_bytes)
{
	struct walk w = { 0 };
	char buf[4096];
	size_t have = 0;
	ssize_t n;
	int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *start = buf, *nl;

		have += (size_t)n;
		buf[have] = 0;
		while ((nl = memchr(start, '\n', have - (size_t)(start - buf))) != NULL) {
			*nl = 0;
			line(&w, start);
			start = nl + 1;
		}
		have -= (size_t)(start - buf);
		memmove(buf, start, have);
		if (have == sizeof(buf) - 1) /* a line longer than the buffer: a name; skip it */
			have = 0;
	}
	if (n < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	close(fd);
	*mapped_bytes = (size_t)w.mapped_kb * 1024;
	*locked_bytes = (size_t)w.total_locked_kb * 1024;
	return 0;
}
