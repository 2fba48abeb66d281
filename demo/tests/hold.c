/*
 * hold - a process that holds secret memory for the host audit's tests,
 * then waits to be killed (and dies with its parent).
 * usage: secbuf-hold [--name HEX] [--unlocked | --secretmem | --dontdump]
 *   default      a 16 KiB secbuf buffer, every page used (libsecbuf, locked)
 *   --unlocked   the same with SECBUF_LOCK=none: secbuf memory, never locked
 *   --secretmem  16 KiB of memfd_secret(2) memory instead (exit 77 without it)
 *   --dontdump   16 KiB locked and MADV_DONTDUMP, as sodium_malloc() makes it
 *   --name HEX   the process name (comm), as hex bytes: any bytes but NUL
 * Prints "ready" once the memory is held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <secbuf.h>
#include "kfacts.h"

#define SIZE (16 << 10)

static void *secretmem(void)
{
	void *p = secretmem_map(SIZE);

	return p == MAP_FAILED ? NULL : p;
}

static void *dontdump(void)
{
	void *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* The raw call: sanitizers make mlock() a no-op. */
	if (syscall(SYS_mlock, p, SIZE) < 0 || madvise(p, SIZE, MADV_DONTDUMP) < 0)
		return NULL;
	return p;
}

static int set_name(const char *hex)
{
	char name[16] = "";
	size_t n = 0;
	unsigned byte;

	while (n < sizeof(name) - 1 && sscanf(hex + 2 * n, "%2x", &byte) == 1)
		name[n++] = (char)byte;
	return prctl(PR_SET_NAME, name);
}

int main(int argc, char **argv)
{
	const char *kind = "", *name = NULL;
	unsigned char *p;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--name") && i + 1 < argc)
			name = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1] == '-')
			kind = argv[i] + 2;
		else
			return 2;
	}
	if (name && set_name(name) < 0) {
		perror("hold: prctl(PR_SET_NAME)");
		return 1;
	}
	if (!strcmp(kind, "secretmem")) {
		p = secretmem();
		if (!p) {
			fprintf(stderr, "hold: memfd_secret: %s\n", strerror(errno));
			return 77;
		}
	} else if (!strcmp(kind, "dontdump")) {
		p = dontdump();
	} else {
		if (!strcmp(kind, "unlocked"))
			setenv("SECBUF_LOCK", "none", 1); /* read at the first allocation */
		else if (kind[0])
			return 2;
		p = secbuf_alloc_flags(SIZE, kind[0] ? SECBUF_BEST_EFFORT : 0);
	}
	if (!p) {
		fprintf(stderr, "hold: %s memory: %s\n", kind[0] ? kind : "secbuf",
			strerror(errno));
		return 1;
	}
	memset(p, 0x5a, SIZE);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
