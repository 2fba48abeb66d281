/*
 * Live secrets and their bytes, for the whole process (secbuf_totals()):
 * guarded buffers and packed secrets, the drop-in's included.  Relaxed
 * atomics: a reader wants a figure, not an ordering.  A forked child
 * starts at zero: the buffers it inherits are not its to use.
 */
#include "core.h"

static size_t live_secrets, live_bytes;

void sb_count_add(size_t bytes)
{
	__atomic_add_fetch(&live_secrets, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&live_bytes, bytes, __ATOMIC_RELAXED);
}

void sb_count_sub(size_t bytes)
{
	__atomic_sub_fetch(&live_secrets, 1, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&live_bytes, bytes, __ATOMIC_RELAXED);
}

void sb_count_get(size_t *secrets, size_t *bytes)
{
	*secrets = __atomic_load_n(&live_secrets, __ATOMIC_RELAXED);
	*bytes = __atomic_load_n(&live_bytes, __ATOMIC_RELAXED);
}

void sb_count_fork_child(void)
{
	live_secrets = 0;
	live_bytes = 0;
}
