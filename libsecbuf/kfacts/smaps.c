// SPDX-License-Identifier: MIT
/* smaps, status and meminfo, read line by line without stdio. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kfacts.h"

/* A line reader over a file descriptor, in a caller's (stack) buffer. */
struct lines {
	int fd, err;	/* err: the errno of a failed read, else 0 */
	size_t len, off;
	char buf[4096];
};

/* The next line, NUL-terminated without its newline; NULL at the end. */
static char *next_line(struct lines *l)
{
	for (;;) {
		char *start = l->buf + l->off;
		char *nl = memchr(start, '\n', l->len - l->off);
		ssize_t n;

		if (nl) {
			*nl = '\0';
			l->off = nl + 1 - l->buf;
			return start;
		}
		/* Keep the partial line; a line longer than the buffer is cut. */
		memmove(l->buf, start, l->len - l->off);
		l->len -= l->off;
		l->off = 0;
		if (l->len == sizeof(l->buf) - 1)
			l->len = 0;
		n = read(l->fd, l->buf + l->len, sizeof(l->buf) - 1 - l->len);
		if (n < 0)
			l->err = errno;
		if (n <= 0) {
			if (n < 0 || l->len == 0)
				return NULL;
			l->buf[l->len] = '\0';	/* a last line without newline */
			l->off = l->len;
			return l->buf;
		}
		l->len += n;
	}
}

/* /proc/PID/file, or with pid 0 the path file. */
static int open_lines(struct lines *l, int pid, const char *file)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	else
		snprintf(path, sizeof(path), "%s", file);
	l->len = l->off = 0;
	l->err = 0;
	l->fd = open(path, O_RDONLY | O_CLOEXEC);
	return l->fd;
}

/* The header line of a mapping: range, permissions and name. */
static bool vma_header(const char *line, struct smaps_vma *v)
{
	int name_at = 0;

	memset(v, 0, sizeof(*v));
	if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &v->start, &v->end, v->perms,
		   &name_at) < 3)
		return false;
	if (name_at)
		snprintf(v->name, sizeof(v->name), "%s", line + name_at);
	return true;
}

int smaps_each_fd(int fd, int (*fn)(const struct smaps_vma *v, void *arg), void *arg)
{
	struct lines l = { .fd = fd };
	struct smaps_vma v;
	bool in = false;
	int ret = 0;
	char *line;

	while ((line = next_line(&l))) {
		if (!strncmp(line, "VmFlags:", 8)) {	/* the last field of a mapping */
			snprintf(v.vmflags, sizeof(v.vmflags), "%s ", line + 8);
			if (in && (ret = fn(&v, arg)) != 0)
				break;
			in = false;
		} else if (!in) {
			in = vma_header(line, &v);
		} else {
			sscanf(line, "Rss: %ld kB", &v.rss_kb);
			sscanf(line, "Locked: %ld kB", &v.locked_kb);
			sscanf(line, "Swap: %ld kB", &v.swap_kb);
		}
	}
	if (!line && l.err) {
		ret = -1;
		errno = l.err;
	}
	return ret;
}

int smaps_each(int pid, int (*fn)(const struct smaps_vma *v, void *arg), void *arg)
{
	char path[64];
	int fd, ret, err;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/smaps");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = smaps_each_fd(fd, fn, arg);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

struct holding {
	uintptr_t addr;
	struct smaps_vma *out;
};

static int holds_addr(const struct smaps_vma *v, void *arg)
{
	struct holding *h = arg;

	if (h->addr < v->start || h->addr >= v->end)
		return 0;
	*h->out = *v;
	return 1;
}

int smaps_find(int pid, const void *addr, struct smaps_vma *v)
{
	struct holding h = { (uintptr_t)addr, v };
	int ret = smaps_each(pid, holds_addr, &h);

	if (ret == 1)
		return 0;
	if (ret == 0)
		errno = ENOENT;
	return -1;
}

bool vmflag_has(const struct smaps_vma *v, const char *flag)
{
	char word[8];

	snprintf(word, sizeof(word), " %s ", flag);
	return strstr(v->vmflags, word) != NULL;
}

long proc_field_kb(const char *path, const char *field)
{
	size_t flen = strlen(field);
	struct lines l;
	long kb = -1;
	char *line;

	if (open_lines(&l, 0, path) < 0)
		return -1;
	while ((line = next_line(&l))) {
		if (!strncmp(line, field, flen) && line[flen] == ':') {
			kb = strtol(line + flen + 1, NULL, 10);
			break;
		}
	}
	close(l.fd);
	return kb;
}

long meminfo_kb(const char *field)
{
	/* Fold the per-CPU vmstat deltas first, or Mlocked lags by up to a
	 * threshold per CPU (mm/vmstat.c vmstat_refresh); only root may. */
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "1", 1) < 0)
			perror("stat_refresh");
		close(fd);
	}
	return proc_field_kb("/proc/meminfo", field);
}
