/*
 * The calls that prove a lock-on-fault feature present: each must succeed.
 * An error code proves nothing (a seccomp filter or a container runtime
 * answers EPERM for calls the kernel has never heard of).  Used by the
 * probe, and by libkfacts so that tests, demo and benchmarks ask the
 * kernel the same way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "abi.h"
#include "os.h"

/*
 * MAP_SHARED_VALIDATE rejects every flag the kernel does not know with
 * EOPNOTSUPP, where a private mapping would silently ignore it; a memfd
 * is the file to map.  Success: the kernel created a mapping locked on
 * fault.
 */
int sb_prove_map_lockonfault(size_t page)
{
	int fd = memfd_create("secbuf-probe", MFD_CLOEXEC), err = 0;
	void *p;

	if (fd < 0)
		return errno;
	p = mmap(NULL, page, PROT_READ, MAP_SHARED_VALIDATE | MAP_LOCKONFAULT, fd, 0);
	if (p == MAP_FAILED || p == NULL)
		err = p ? errno : EINVAL;
	else if (munmap(p, page) < 0)
		err = errno;
	close(fd);
	return err;
}

/*
 * Lock a real (inaccessible) page on fault.  A zero return is not enough:
 * a seccomp filter can answer 0 without running the call, and a sandbox
 * can make mlock do nothing.  The kernel's count of locked memory must
 * grow by the page (another thread's munlock at this very moment could
 * hide it, and the probe would then wrongly say no: the safe side).
 * Without /proc, the return is all there is to go on.
 */
int sb_prove_mlock2_onfault(size_t page)
{
	void *p = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long long before = sb_status_field("VmLck", 10), after;
	int err = 0;

	if (p == MAP_FAILED)
		return errno;
	if (syscall(SYS_mlock2, p, page, MLOCK_ONFAULT) < 0) {
		err = errno;
	} else {
		after = sb_status_field("VmLck", 10);
		if (before >= 0 && after >= 0 && after - before < (long long)(page / 1024))
			err = ENOSYS; /* the call returned, but nothing was locked */
	}
	if (munmap(p, page) < 0 && !err)
		err = errno;
	return err;
}
