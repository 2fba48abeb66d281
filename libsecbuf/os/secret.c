/*
 * The secret-memory tier: pages of a memfd_secret(2) file, which the
 * kernel takes out of its direct map, never evicts and clears when they
 * are freed.  Kernels charge it to RLIMIT_MEMLOCK in one of two ways: at
 * mmap time, sparing CAP_IPC_LOCK (6.18: EAGAIN here), or per user at each
 * page's first touch, sparing nobody (Debian's 6.1 and 6.12: SIGBUS at the
 * page past the limit, and MADV_POPULATE_WRITE, which could charge it
 * ahead, is EINVAL on secret memory there).  No probe: the call that maps
 * a buffer is the proof, and its error is what a strict allocation fails
 * with.  ENOSYS means a kernel
 * without CONFIG_SECRETMEM, or one booted without secretmem.enable=1
 * (needed before 6.5).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "os.h"

#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447 /* the same on x86_64 and arm64 */
#endif

int sb_secret_map(void *start, size_t len)
{
	int fd = syscall(SYS_memfd_secret, O_CLOEXEC), err;

	if (fd < 0) {
		sb_refusal_note(SB_CALL_MEMFD_SECRET, errno, len);
		return -1;
	}
	/* The mapping keeps the file; the descriptor is not needed after it. */
	if (ftruncate(fd, len) < 0 ||
	    mmap(start, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		err = errno;
		close(fd);
		sb_refusal_note(SB_CALL_SECRET_MMAP, err, len);
		errno = err;
		return -1;
	}
	close(fd);
	return 0;
}
