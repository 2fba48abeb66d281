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
	switch (method) {
	case SECBUF_LOCK_MAP_LOCKONFAULT: /* the child's mapping lost VM_LOCKONFAULT */
	case SECBUF_LOCK_MLOCK2_ONFAULT:
		return syscall(SYS_mlock2, start, len, MLOCK_ONFAULT);
	case SECBUF_LOCK_MLOCK:
		return syscall(SYS_mlock, start, len);
	default:
		return 0;
	}
}

/* mlock may have locked part of a range before failing. */
int sb_unlock_range(void *start, size_t len)
{
	return syscall(SYS_munlock, start, len);
}
