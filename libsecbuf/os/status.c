/*
 * Fields of /proc/self/status: the kernel's own account of this process
 * (VmLck, Seccomp, CapEff), for the proofs and the explanations.  No
 * stdio: this runs inside the first allocation and on failure paths.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "os.h"

long long sb_status_field(const char *field, int base)
{
	char buf[4096], key[32], *at;
	ssize_t n, got = 0;
	size_t klen = strlen(field);
	int fd;

	if (klen + 3 > sizeof(key))
		return -1;
	key[0] = '\n';
	memcpy(key + 1, field, klen);
	key[klen + 1] = ':';
	key[klen + 2] = 0;
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (got < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	at = strstr(buf, key);
	return at ? strtoll(at + klen + 2, NULL, base) : -1;
}
