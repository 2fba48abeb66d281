/*
 * The secret-memory tier: pages of a memfd_secret(2) file, which the
 * kernel takes out of its direct map, never evicts and clears when they
 * are freed.  Kernels charge it to RLIMIT_MEMLOCK in one of two ways: at
 * mmap time, sparing CAP_IPC_LOCK (6.18: EAGAIN here), or per user at each
 * page's first touch, sparing nobody (Debian's 6.1 and 6.12: SIGBUS at the
 * page past the limit, and MADV_POPULATE_WRITE, which could charge it
 * ahead, is EINVAL on secret memory there): so this process's own secret
 * bytes are counted, and a mapping past the limit refused (EAGAIN).  No probe: the call that maps
 * a buffer is the proof, and its error is what a strict allocation fails
 * with.  ENOSYS means a kernel
 * without CONFIG_SECRETMEM, or one booted without secretmem.enable=1
 * (needed before 6.5).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "os.h"

#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447 /* the same on x86_64 and arm64 */
#endif

/*
 * This process's secret bytes mapped, so that a mapping that would take
 * them past RLIMIT_MEMLOCK is refused here, EAGAIN, before the kernels
 * that charge at first touch could answer a write with SIGBUS.  Other
 * processes of the same user are charged too on those kernels, and no
 * library can see them (secbuf(7)).  A forked child starts at zero: its
 * parent's secret mappings are not in it.
 */
static size_t mapped;

static int reserve(size_t len)
{
	struct rlimit rl;
	size_t now = __atomic_add_fetch(&mapped, len, __ATOMIC_RELAXED);

	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    now <= rl.rlim_cur)
		return 0;
	__atomic_sub_fetch(&mapped, len, __ATOMIC_RELAXED);
	errno = EAGAIN;
	return -1;
}

void sb_secret_unmapped(size_t len)
{
	__atomic_sub_fetch(&mapped, len, __ATOMIC_RELAXED);
}

void sb_secret_fork_child(void)
{
	mapped = 0;
}

int sb_secret_map(void *start, size_t len)
{
	int fd, err;

	if (reserve(len) < 0) {
		sb_refusal_note(SB_CALL_SECRET_MMAP, EAGAIN, len);
		return -1;
	}
	fd = syscall(SYS_memfd_secret, O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		sb_secret_unmapped(len);
		errno = err;
		sb_refusal_note(SB_CALL_MEMFD_SECRET, errno, len);
		return -1;
	}
	/* The mapping keeps the file; the descriptor is not needed after it. */
	if (ftruncate(fd, len) < 0 ||
	    mmap(start, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
		err = errno;
		close(fd);
		sb_secret_unmapped(len);
		sb_refusal_note(SB_CALL_SECRET_MMAP, err, len);
		errno = err;
		return -1;
	}
	close(fd);
	return 0;
}
