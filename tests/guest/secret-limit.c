// SPDX-License-Identifier: MIT
/*
 * How memfd_secret meets RLIMIT_MEMLOCK on this kernel.  Debian's 6.1 and
 * 6.12 (since "mm/secretmem: properly account locked pages") charge each
 * page to the user's locked memory when it is first touched, with no
 * CAP_IPC_LOCK exception: mmap() succeeds whatever its length, and the
 * fault that goes over the limit is SIGBUS.  A lock-on-fault mapping is
 * charged its whole length at mmap() instead (EAGAIN there, nothing
 * mapped: lof-atomic.c), so a program learns of the limit from a return
 * value, not a signal.
 *
 * A child, as root with CAP_IPC_LOCK, under an RLIMIT_MEMLOCK of LIMIT
 * pages, maps twice as many secret pages and touches them in order,
 * counting in shared memory; the parent reads how far it got and how it
 * ended.  The checks are the claim kernel/evidence.md makes of these
 * kernels: one that charges at mmap() (6.18 does, and exempts
 * CAP_IPC_LOCK) fails them, and the claim must then be rewritten.
 *
 * usage: secret-limit
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kfacts.h"
#include "tap.h"

#define LIMIT 4 /* pages */

struct progress {
	int mmap_errno;
	int touched;
};

static void child(struct progress *pr)
{
	long page = sysconf(_SC_PAGESIZE);
	struct rlimit lim = { LIMIT * page, LIMIT * page };
	char *p;

	if (setrlimit(RLIMIT_MEMLOCK, &lim))
		_exit(2);
	p = secretmem_map(2 * LIMIT * page);
	if (p == MAP_FAILED) {
		pr->mmap_errno = errno;
		_exit(0);
	}
	for (int i = 0; i < 2 * LIMIT; i++) {
		p[i * page] = 1;
		__atomic_store_n(&pr->touched, i + 1, __ATOMIC_RELEASE);
	}
	_exit(0);
}

int main(void)
{
	struct progress *pr;
	int status;
	pid_t pid;

	tap_subject("secret-limit", "secretmem");
	if (geteuid() != 0) {
		tap_skip("not root: the point is that CAP_IPC_LOCK does not help",
			 "memfd_secret under RLIMIT_MEMLOCK");
		return tap_done();
	}
	if (!secretmem_works()) {
		tap_skip("no memfd_secret here", "memfd_secret under RLIMIT_MEMLOCK");
		return tap_done();
	}
	pr = mmap(NULL, sizeof(*pr), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pr == MAP_FAILED)
		tap_bail("mmap of the shared page: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (pid == 0)
		child(pr);
	if (waitpid(pid, &status, 0) != pid)
		tap_bail("waitpid: %s", strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
		tap_bail("setrlimit(RLIMIT_MEMLOCK) failed in the child");
	tap_diag("uid %d; %d secret pages mapped under a limit of %d: mmap %s, %d touched, "
		 "the child %s %d",
		 (int)getuid(), 2 * LIMIT, LIMIT, pr->mmap_errno ? strerror(pr->mmap_errno) : "ok",
		 pr->touched, WIFSIGNALED(status) ? "killed by signal" : "exited",
		 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	tap_check(pr->mmap_errno == 0,
		  "mmap() of %d secret pages under a limit of %d pages succeeds (mmap %s)",
		  2 * LIMIT, LIMIT, pr->mmap_errno ? strerror(pr->mmap_errno) : "ok");
	tap_check(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS && pr->touched <= LIMIT,
		  "the first touch beyond the limit is SIGBUS, even as root with CAP_IPC_LOCK "
		  "(%d of %d pages touched, %s %d)",
		  pr->touched, 2 * LIMIT, WIFSIGNALED(status) ? "signal" : "exit",
		  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return tap_done();
}
