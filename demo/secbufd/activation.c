/* activation.c - the LISTEN_FDS protocol of socket activation, written out. */
#include "activation.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LISTEN_FDS_START 3 /* the first passed fd, always */

/* A decimal number and nothing else: 0, or -1 for anything else. */
static int parse_ulong(const char *s, unsigned long *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int sockopt(int fd, int opt, int *val)
{
	socklen_t len = sizeof(*val);

	return getsockopt(fd, SOL_SOCKET, opt, val, &len);
}

/* fd is what secbufd serves on: a listening AF_UNIX stream socket. */
static int check_socket(int fd)
{
	int domain, type, listening, fl;
	const char *why = NULL;

	if (sockopt(fd, SO_DOMAIN, &domain) < 0 || sockopt(fd, SO_TYPE, &type) < 0 ||
	    sockopt(fd, SO_ACCEPTCONN, &listening) < 0) {
		fprintf(stderr, "secbufd: LISTEN_FDS=1 but fd %d is not a socket: %s\n", fd,
			strerror(errno));
		return ACTIVATION_ERROR;
	}
	if (domain != AF_UNIX)
		why = "not an AF_UNIX socket";
	else if (type != SOCK_STREAM)
		why = "not a stream socket";
	else if (!listening)
		why = "not listening";
	if (why) {
		fprintf(stderr,
			"secbufd: the socket passed as fd %d (LISTEN_FDS=1) is %s: the socket unit must "
			"have one ListenStream= of a file system path\n",
			fd, why);
		return ACTIVATION_ERROR;
	}
	/* As secbufd's own socket is made: accept4() in the loop never blocks. */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		fprintf(stderr, "secbufd: fd %d (LISTEN_FDS=1): fcntl: %s\n", fd, strerror(errno));
		return ACTIVATION_ERROR;
	}
	return fd;
}

int activation_socket(void)
{
	const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
	unsigned long pid, n;
	int fd = ACTIVATION_NONE;

	if (!fds_s)
		goto out;
	/* Inherited from a parent that was activated itself: not ours. */
	if (parse_ulong(pid_s, &pid) < 0 || pid != (unsigned long)getpid()) {
		fprintf(stderr,
			"secbufd: LISTEN_FDS is meant for pid %s, not this one (%d): ignored\n",
			pid_s ? pid_s : "(LISTEN_PID unset)", (int)getpid());
		goto out;
	}
	if (parse_ulong(fds_s, &n) < 0) {
		fprintf(stderr, "secbufd: LISTEN_FDS=%s is not a number of sockets\n", fds_s);
		fd = ACTIVATION_ERROR;
	} else if (n > 1) {
		fprintf(stderr,
			"secbufd: %lu sockets passed (LISTEN_FDS=%lu), secbufd serves one: "
			"give its socket unit a single ListenStream=\n",
			n, n);
		fd = ACTIVATION_ERROR;
	} else if (n == 1) {
		fd = check_socket(LISTEN_FDS_START);
	}
out:
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return fd;
}
