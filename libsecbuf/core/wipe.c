/* Wiping: a zeroing the compiler cannot drop. */
#include <stdint.h>
#include <string.h>
#include "core.h"

void sb_wipe(void *p, size_t len)
{
	memset(p, 0, len);
	/* The asm may read p's memory, so the stores above must happen. */
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

int sb_is_zero(const void *p, size_t len)
{
	const unsigned char *c = p;
	uint64_t w;
	size_t i = 0;

	for (; i + sizeof(w) <= len; i += sizeof(w)) {
		memcpy(&w, c + i, sizeof(w));
		if (w)
			return 0;
	}
	for (; i < len; i++)
		if (c[i])
			return 0;
	return 1;
}

/*
 * A page only ever read is resident as the shared zero page: writing it
 * would fault in (and lock) a fresh page, so zero pages are left alone.
 */
void sb_wipe_page(void *page, size_t len, void *arg)
{
	(void)arg;
	if (!sb_is_zero(page, len))
		sb_wipe(page, len);
}
