/*
 * Walk the resident pages of a page-aligned range with mincore(2).  The
 * vector is small and on the stack so that walking a huge, mostly empty
 * buffer faults nothing in.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include "internal.h"

#define CHUNK_PAGES 256

int sb_resident_walk(unsigned char *start, size_t len, sb_page_fn fn, size_t *count)
{
	size_t page = sb_caps()->page, npages = len / page, done = 0, n = 0, i;
	unsigned char vec[CHUNK_PAGES];

	while (done < npages) {
		size_t chunk = npages - done < CHUNK_PAGES ? npages - done : CHUNK_PAGES;
		unsigned char *p = start + done * page;

		if (mincore(p, chunk * page, vec) < 0)
			return -1;
		for (i = 0; i < chunk; i++) {
			if (!(vec[i] & 1))
				continue;
			n++;
			if (fn)
				fn(p + i * page, page);
		}
		done += chunk;
	}
	if (count)
		*count = n;
	return 0;
}
