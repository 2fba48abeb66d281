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

static int page_is_zero(const void *page, size_t len)
{
	const uint64_t *w = page;
	size_t i;

	for (i = 0; i < len / sizeof(*w); i++)
		if (w[i])
			return 0;
	return 1;
}

/*
 * A page only ever read is resident as the shared zero page: writing it
 * would fault in (and lock) a fresh page, so zero pages are left alone.
 */
void sb_wipe_page(void *page, size_t len)
{
	if (!page_is_zero(page, len))
		sb_wipe(page, len);
}
