/*
 * memscan PID MASK MASKED: where process PID holds a secret, read as root
 * through /proc/PID/mem.  The secret is given masked (hex of secret XOR
 * mask, mask repeated), so that neither this program's arguments nor its
 * memory hold it whole: each candidate is compared unmasked a byte at a
 * time.  Prints one line per hit:
 *   ADDRESS lo=0|1 dd=0|1 NAME
 * (VmFlags of the mapping holding it: locked, left out of core dumps) and
 * "hits N" last.  Exit 0, or 1 on a usage or read error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kfacts.h"

#define MAX_NEEDLE 256

static unsigned char mask[MAX_NEEDLE], masked[MAX_NEEDLE];
static size_t len, mask_len;
static int mem_fd, pid, hits;

static size_t unhex(const char *s, unsigned char *out)
{
	size_t n = 0;
	unsigned int b;

	while (s[0] && s[1] && n < MAX_NEEDLE && sscanf(s, "%2x", &b) == 1) {
		out[n++] = (unsigned char)b;
		s += 2;
	}
	return *s ? 0 : n;
}

static int matches(const unsigned char *at)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((at[i] ^ mask[i % mask_len]) != masked[i])
			return 0;
	return 1;
}

static int scan(const struct smaps_vma *v, void *arg)
{
	static unsigned char buf[1 << 20];
	unsigned long at;
	size_t i;
	ssize_t n;

	(void)arg;
	if (v->perms[0] != 'r' || !strcmp(v->name, "[vvar]") || !strcmp(v->name, "[vsyscall]"))
		return 0;
	/* Chunks overlap by len - 1 bytes, so that no hit straddles two unseen. */
	for (at = v->start; at < v->end; at += sizeof(buf) - (len - 1)) {
		size_t want = v->end - at < sizeof(buf) ? v->end - at : sizeof(buf);

		n = pread(mem_fd, buf, want, (off_t)at);
		if (n < (ssize_t)len)
			break; /* unreadable (a guard page, I/O memory): nothing there to see */
		for (i = 0; i + len <= (size_t)n; i++)
			if (buf[i] == (masked[0] ^ mask[0]) && matches(buf + i)) {
				printf("%#lx lo=%d dd=%d %s\n", at + i, vmflag_has(v, "lo"),
				       vmflag_has(v, "dd"), v->name[0] ? v->name : "[anon]");
				hits++;
			}
		if ((size_t)n < want)
			break;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[64];

	if (argc != 4 || (pid = atoi(argv[1])) <= 0 || !(mask_len = unhex(argv[2], mask)) ||
	    !(len = unhex(argv[3], masked)) || len < 8) {
		fprintf(stderr, "usage: memscan PID MASK-HEX MASKED-HEX (8 to %d bytes)\n",
			MAX_NEEDLE);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem_fd = open(path, O_RDONLY);
	if (mem_fd < 0 || smaps_each(pid, scan, NULL) < 0) {
		fprintf(stderr, "memscan: %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("hits %d\n", hits);
	return 0;
}
