// SPDX-License-Identifier: MIT
/*
 * proof-sparse: the worst case of a sparse buffer.  8 processes each
 * allocate a 512 MiB secbuf in a 1 GiB guest and use 1 MiB of it: all must
 * succeed, costing 8 MiB of locked memory.  The same with SECBUF_POPULATE
 * would need 4 GiB of locked RAM; it must fail cleanly (NULL with ENOMEM or
 * EAGAIN), not through the OOM killer.
 *
 * The kernel has no global limit on mlocked memory: a memory cgroup at its
 * limit with unevictable pages invokes the OOM killer, and root bypasses
 * RLIMIT_MEMLOCK through CAP_IPC_LOCK.  So the populate children drop to
 * uid 65534 with RLIMIT_MEMLOCK = guest RAM / 8 = 128 MiB, which makes the
 * kernel refuse.  The sparse children stay root: MAP_LOCKONFAULT and
 * mlock2(MLOCK_ONFAULT) charge the whole length against RLIMIT_MEMLOCK, so
 * an unprivileged process could not map 512 MiB under that limit either.
 * All children run in cgroup proof-sparse (no limit) so that its
 * memory.events oom_kill counts any OOM kill among them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib-cgroup.h"
#include "kfacts.h"
#include "tap.h"
#include "secbuf.h"

#define NPROC		8
#define BUF_SIZE	(512UL << 20)
#define USED		(1UL << 20)
#define MEMLOCK_LIMIT	(128UL << 20)
#define NOBODY		65534
#define CGROUP		"proof-sparse"

struct result {
	int err;		/* errno of a failed alloc, 0 on success */
	size_t locked_pages;
};

/* One child: allocate, use USED bytes, report, hold until released. */
static void __attribute__((noreturn)) child(int res_fd, int hold_fd, bool populate)
{
	struct rlimit lim = { MEMLOCK_LIMIT, MEMLOCK_LIMIT };
	struct result r = { 0, 0 };
	struct secbuf_stat st;
	unsigned char *p;
	char c;

	if (populate && (setrlimit(RLIMIT_MEMLOCK, &lim) < 0 || setgroups(0, NULL) < 0 ||
			 setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
			 setresuid(NOBODY, NOBODY, NOBODY) < 0))
		_exit(2);
	p = secbuf_alloc_flags(BUF_SIZE, populate ? SECBUF_POPULATE : 0);
	if (!p) {
		r.err = errno;
	} else {
		memset(p, 0xa5, USED);
		if (secbuf_stat(p, &st) == 0)
			r.locked_pages = st.locked_pages;
	}
	if (write(res_fd, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	while (read(hold_fd, &c, 1) > 0)
		;
	secbuf_free(p);
	_exit(0);
}

struct outcome {
	int allocated, refused_clean, refused_other, killed, bad_exit;
	size_t locked_pages;
	long mlocked_kb, avail_kb, oom_kills;
	int first_err;
};

static struct outcome run(bool populate)
{
	struct outcome o = { 0 };
	long oom0 = cgroup_field(CGROUP, "memory.events", "oom_kill");
	long mlocked0 = meminfo_kb("Mlocked");
	int res[2], hold[2], status;
	pid_t pids[NPROC];
	struct result r;

	if (pipe(res) < 0 || pipe(hold) < 0)
		tap_bail("pipe: %s", strerror(errno));
	for (int i = 0; i < NPROC; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			tap_bail("fork: %s", strerror(errno));
		if (pids[i] == 0) {
			close(res[0]);
			close(hold[1]);
			child(res[1], hold[0], populate);
		}
	}
	close(res[1]);
	close(hold[0]);
	/* Every child reports while all of them still hold their buffers. */
	for (int i = 0; i < NPROC && read(res[0], &r, sizeof(r)) == sizeof(r); i++) {
		if (!r.err) {
			o.allocated++;
			o.locked_pages += r.locked_pages;
		} else if (r.err == ENOMEM || r.err == EAGAIN) {
			o.refused_clean++;
		} else {
			o.refused_other++;
		}
		if (r.err && !o.first_err)
			o.first_err = r.err;
	}
	o.mlocked_kb = meminfo_kb("Mlocked") - mlocked0;
	o.avail_kb = meminfo_kb("MemAvailable");
	close(hold[1]);
	close(res[0]);
	for (int i = 0; i < NPROC; i++) {
		if (waitpid(pids[i], &status, 0) < 0)
			tap_bail("waitpid: %s", strerror(errno));
		if (WIFSIGNALED(status))
			o.killed++;
		else if (WEXITSTATUS(status) != 0)
			o.bad_exit++;
	}
	o.oom_kills = cgroup_field(CGROUP, "memory.events", "oom_kill") - oom0;
	return o;
}

int main(void)
{
	int method = secbuf_lock_method();
	const char *name = secbuf_lock_method_name(method);
	struct outcome a, b;
	size_t page;
	bool ok, pages_ok;

	tap_subject("sparse", getenv("SECBUF_LOCK"));
	if (!name)
		tap_bail("secbuf_lock_method: %s", strerror(errno));
	tap_subject("sparse", name);
	if (cgroup_enter(CGROUP, "max") < 0)
		tap_bail("cgroup " CGROUP ": %s", strerror(errno));
	tap_diag("lock method %s, MemTotal %ld kB", name, meminfo_kb("MemTotal"));

	a = run(false);
	ok = tap_check(a.allocated == NPROC && !a.killed && !a.bad_exit,
		       "sparse: %d/%d processes allocated 512 MiB and used 1 MiB (%d killed, %d bad exits, first errno %d)",
		       a.allocated, NPROC, a.killed, a.bad_exit, a.first_err);
	/*
	 * 1 MiB from the user pointer spans USED / page pages (256 of 4 KiB),
	 * one more with the canary page; each process also locks the page of
	 * its libsecbuf key.
	 */
	page = (size_t)sysconf(_SC_PAGESIZE);
	pages_ok = a.locked_pages >= NPROC * USED / page &&
		   a.locked_pages <= NPROC * (USED / page + 1);
	ok &= tap_check(pages_ok && a.mlocked_kb >= (long)(NPROC * USED / 1024) &&
				a.mlocked_kb <= (long)((a.locked_pages + NPROC) * (page / 1024)),
			"sparse: locked %zu pages by secbuf_stat, Mlocked +%ld kB for %lu kB used",
			a.locked_pages, a.mlocked_kb, NPROC * USED / 1024);
	tap_report("sparse %s: %d/%d x 512 MiB allocated as root, 1 MiB used each; Mlocked +%ld kB; MemAvailable %ld kB while held",
		   name, a.allocated, NPROC, a.mlocked_kb, a.avail_kb);
	tap_summary("sparse", name, ok, "%d/%d x 512 MiB ok, Mlocked +%ld kB", a.allocated, NPROC,
		    a.mlocked_kb);

	tap_diag("populate: children run as uid %d with RLIMIT_MEMLOCK %lu MiB (root's CAP_IPC_LOCK would bypass it and reach the OOM killer)",
		 NOBODY, MEMLOCK_LIMIT >> 20);
	b = run(true);
	ok = tap_check(b.refused_clean == NPROC && !b.allocated && !b.refused_other,
		       "populate: %d/%d refused with ENOMEM/EAGAIN (%d allocated, %d other errors, first: %s)",
		       b.refused_clean, NPROC, b.allocated, b.refused_other, strerror(b.first_err));
	ok &= tap_check(!b.killed && !b.bad_exit && b.oom_kills == 0,
			"populate: no child killed (%d), none exited badly (%d), memory.events oom_kill +%ld",
			b.killed, b.bad_exit, b.oom_kills);
	tap_report("sparse populate %s: %d/%d refused cleanly (%s), %d allocated, %d killed, oom_kill +%ld (uid %d, RLIMIT_MEMLOCK %lu MiB)",
		   name, b.refused_clean, NPROC, strerror(b.first_err), b.allocated, b.killed,
		   b.oom_kills, NOBODY, MEMLOCK_LIMIT >> 20);
	tap_summary("sparse-populate", name, ok, "%d/%d refused (%s), %d OOM kills", b.refused_clean,
		    NPROC, strerror(b.first_err), (int)b.oom_kills);
	return tap_done();
}
