/*
 * The lock calls of each method.  Raw syscalls: the sanitizer runtimes
 * turn mlock()/munlock() into no-ops.  MAP_LOCKONFAULT ranges were locked
 * by mmap itself, and SECBUF_LOCK_NONE locks nothing.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>
#include "abi.h"
#include "os.h"

int sb_lock_range(void *start, size_t len, int method)
{
	switch (method) {
	case SECBUF_LOCK_MLOCK2_ONFAULT:
		return syscall(SYS_mlock2, start, len, MLOCK_ONFAULT);
	case SECBUF_LOCK_MLOCK:
		return syscall(SYS_mlock, start, len);
	default:
		return 0;
	}
}

int sb_relock_range(void *start, size_t len, int method)
{
	/* The child's mapping lost VM_LOCKONFAULT: mlock2 gives it back. */
	if (method == SECBUF_LOCK_MAP_LOCKONFAULT)
		method = SECBUF_LOCK_MLOCK2_ONFAULT;
	return sb_lock_range(start, len, method);
}

/* mlock may have locked part of a range before failing. */
int sb_unlock_range(void *start, size_t len)
{
	return syscall(SYS_munlock, start, len);
}
