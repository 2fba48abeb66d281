/* Wiping: a zeroing the compiler cannot drop, applied to resident pages only. */
#include <string.h>
#include "internal.h"

void sb_wipe(void *p, size_t len)
{
	memset(p, 0, len);
	/* The asm may read p's memory, so the stores above must happen. */
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

/* Pages never touched are not resident and hold nothing: skip them. */
int sb_wipe_resident(unsigned char *start, size_t len)
{
	return sb_resident_walk(start, len, sb_wipe, NULL);
}
