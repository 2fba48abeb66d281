/* procfs.c - a process's identity from /proc/PID/stat, its name from comm. */
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * /proc/PID/stat: "pid (comm) state ..." with starttime the 22nd field.
 * The name may hold blanks and parentheses, so it ends at the last ')'.
 */
int proc_id_read(int fd, struct proc_id *id)
{
	char buf[1024], *open_paren, *close_paren, *p;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	size_t len;

	if (n <= 0) {
		if (n == 0)
			errno = ESRCH; /* an empty stat: the task is gone */
		return -1;
	}
	buf[n] = '\0';
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren || !close_paren[1]) {
		errno = EPROTO;
		return -1;
	}
	len = close_paren - open_paren - 1;
	if (len >= sizeof(id->comm))
		len = sizeof(id->comm) - 1;
	memcpy(id->comm, open_paren + 1, len);
	id->comm[len] = '\0';
	id->state = close_paren[2];
	/* Fields 3 (state) to 21, then starttime; a line cut short ends at its NUL. */
	p = close_paren + 2;
	for (int field = 3; field < 22 && p && *p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &id->starttime) != 1) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

int proc_id_of(pid_t pid, struct proc_id *id)
{
	char path[64];
	int fd, rc, err;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = proc_id_read(fd, id);
	err = errno;
	close(fd);
	errno = err;
	return rc;
}

void proc_comm_read(int fd, char *comm, size_t size)
{
	ssize_t n = fd >= 0 ? read(fd, comm, size - 1) : -1;

	if (n > 0 && comm[n - 1] == '\n')
		n--;
	if (n < 0)
		n = snprintf(comm, size, "?");
	comm[n] = '\0';
}

void proc_comm_of(long pid, char *comm, size_t size)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	proc_comm_read(fd, comm, size);
	if (fd >= 0)
		close(fd);
}
