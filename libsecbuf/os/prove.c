/*
 * The calls that prove a lock-on-fault feature present: each must succeed.
 * An error code proves nothing (a seccomp filter or a container runtime
 * answers EPERM for calls the kernel has never heard of).  Used by the
 * probe, and by libkfacts so that tests, demo and benchmarks ask the
 * kernel the same way.
 */
#define _GNU_SOURCE
#include <errno.h>
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

/* Lock a real (inaccessible) page on fault. */
int sb_prove_mlock2_onfault(size_t page)
{
	void *p = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int err = 0;

	if (p == MAP_FAILED)
		return errno;
	if (syscall(SYS_mlock2, p, page, MLOCK_ONFAULT) < 0)
		err = errno;
	if (munmap(p, page) < 0 && !err)
		err = errno;
	return err;
}
