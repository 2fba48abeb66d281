/*
 * Advice and names for the library's mappings: out of core dumps, zeroed
 * (or dropped) in forked children, no huge pages, and a name in
 * /proc/PID/maps that secbuf-audit and the proofs look for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include "os.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
#ifndef MADV_KEEPONFORK
#define MADV_KEEPONFORK 19
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#endif
#ifndef PR_SET_VMA_ANON_NAME
#define PR_SET_VMA_ANON_NAME 0
#endif

int sb_advise_secret(void *start, size_t len, int inherit)
{
	int dropped = 0;

	if (madvise(start, len, MADV_DONTDUMP) < 0)
		return -1;
	/* A forked child sees zeros; before 4.14 it sees nothing at all. */
	if (!inherit && madvise(start, len, MADV_WIPEONFORK) < 0) {
		if (errno != EINVAL || madvise(start, len, MADV_DONTFORK) < 0)
			return -1;
		dropped = 1;
	}
	/* A huge page would make one touch lock 2 MiB; EINVAL: no THP here. */
	if (madvise(start, len, MADV_NOHUGEPAGE) < 0 && errno != EINVAL)
		return -1;
	return dropped;
}

int sb_advise_keep(void *start, size_t len, int dropped)
{
	return madvise(start, len, dropped ? MADV_DOFORK : MADV_KEEPONFORK);
}

int sb_name_range(void *start, size_t len, const char *name)
{
	/*
	 * A name is for the reader of /proc/PID/maps, not a protection: it may
	 * be missing (EINVAL: kernel built without CONFIG_ANON_VMA_NAME) or
	 * refused (EPERM: a seccomp profile that does not know PR_SET_VMA).
	 */
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)start, len,
		  (unsigned long)name) < 0 &&
	    errno != EINVAL && errno != EPERM)
		return -1;
	return 0;
}
