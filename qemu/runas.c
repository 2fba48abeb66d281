// SPDX-License-Identifier: MIT
/*
 * runas UID[:GID] COMMAND [ARG]...
 *
 * Drop to an unprivileged uid/gid and exec.  The guest's busybox setpriv
 * lacks --reuid and su needs a password database with shells, so tests that
 * run as nobody use this.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long parse_id(const char *s, char **end)
{
	errno = 0;
	unsigned long v = strtoul(s, end, 10);

	if (errno || *end == s || v > 0xfffffffeUL) {
		fprintf(stderr, "runas: bad id '%s'\n", s);
		exit(125);
	}
	return v;
}

int main(int argc, char **argv)
{
	char *end;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID[:GID] COMMAND [ARG]...\n");
		return 125;
	}
	uid_t uid = (uid_t)parse_id(argv[1], &end);
	gid_t gid = (gid_t)uid;

	if (*end == ':')
		gid = (gid_t)parse_id(end + 1, &end);
	if (*end != '\0') {
		fprintf(stderr, "runas: bad id '%s'\n", argv[1]);
		return 125;
	}
	if (setgroups(0, NULL) || setgid(gid) || setuid(uid)) {
		perror("runas: dropping privileges");
		return 125;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "runas: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
