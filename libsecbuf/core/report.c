/*
 * Where a failed allocation is reported, if anyone listens: the drop-ins,
 * whose callers (libcrypto, libsodium) turn a NULL into "malloc failure"
 * and say no more, print why on standard error.  The API keeps its own
 * account instead (secbuf_last_failure()).  One hook, set once by its
 * listener; the failing part calls it as it gives up, so that no part
 * below the drop-ins calls them by name.
 */
#include "core.h"

static sb_failure_fn listener;

void sb_report_to(sb_failure_fn fn)
{
	__atomic_store_n(&listener, fn, __ATOMIC_RELEASE);
}

void sb_report_failure(size_t size, unsigned flags)
{
	sb_failure_fn fn = __atomic_load_n(&listener, __ATOMIC_ACQUIRE);
	int err = errno;

	if (fn)
		fn(size, flags, err);
	errno = err;
}
