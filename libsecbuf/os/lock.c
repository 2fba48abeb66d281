/*
 * The lock calls of each method.  Raw syscalls: the sanitizer runtimes
 * turn mlock()/munlock() into no-ops.  SECBUF_LOCK_NONE locks nothing.
 * A refused lock is noted (refusal.c) with the length it asked for: that,
 * not the caller's size, is what did not fit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "abi.h"
#include "os.h"

int sb_map_lockonfault(void *start, size_t len)
{
	if (mmap(start, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_LOCKONFAULT, -1, 0) != MAP_FAILED)
		return 0;
	sb_refusal_note(SB_CALL_MAP_LOCKONFAULT, errno, len);
	return -1;
}

/* MAP_LOCKONFAULT ranges were locked by sb_map_lockonfault() itself. */
int sb_lock_range(void *start, size_t len, int method)
{
	long ret;

	switch (method) {
	case SECBUF_LOCK_MLOCK2_ONFAULT:
		ret = syscall(SYS_mlock2, start, len, MLOCK_ONFAULT);
		break;
	case SECBUF_LOCK_MLOCK:
		ret = syscall(SYS_mlock, start, len);
		break;
	default:
		return 0;
	}
	if (ret < 0)
		sb_refusal_note(method == SECBUF_LOCK_MLOCK ? SB_CALL_MLOCK : SB_CALL_MLOCK2, errno,
				len);
	return (int)ret;
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
