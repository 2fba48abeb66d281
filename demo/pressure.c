/*
 * secbuf-pressure MB - allocate and touch MB MiB, twice over, then exit:
 * inside a cgroup with memory.max below MB this forces reclaim, which
 * pushes the group's evictable anonymous pages to swap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long mb = argc == 2 ? atol(argv[1]) : 0, psize = sysconf(_SC_PAGESIZE);
	unsigned char **chunk;

	if (mb <= 0) {
		fprintf(stderr, "usage: secbuf-pressure MB\n");
		return 2;
	}
	chunk = calloc(mb, sizeof(*chunk));
	if (!chunk)
		return 1;
	/* Non-zero, varying bytes so that no page is trivially shared or compressed. */
	for (int pass = 0; pass < 2; pass++) {
		for (long i = 0; i < mb; i++) {
			if (!chunk[i] && !(chunk[i] = malloc(1 << 20))) {
				fprintf(stderr, "secbuf-pressure: out of memory after %ld MiB\n", i);
				return 1;
			}
			for (long off = 0; off < (1 << 20); off += psize)
				chunk[i][off] = (unsigned char)(i + off / psize + pass + 1);
		}
	}
	printf("# secbuf-pressure: touched %ld MiB twice\n", mb);
	return 0;
}
