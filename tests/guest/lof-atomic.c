// SPDX-License-Identifier: MIT
/*
 * A refused lock, by one call and by two.  mmap(MAP_LOCKONFAULT) either
 * maps the range locked or fails with nothing changed; mmap() followed by
 * mlock2(MLOCK_ONFAULT) can fail at the second call, leaving a mapping
 * that is not locked and that the caller must find and unmap (and over a
 * range with MAP_FIXED, the old mapping already gone).
 *
 * Refusals: RLIMIT_MEMLOCK of one page for a four-page range (without
 * CAP_IPC_LOCK, dropped here if held), and seccomp filters returning
 * EPERM.  A filter sees system calls, not what they do: one refusing
 * mlock(), mlock2() and mlockall() does not see a lock asked of mmap()
 * (as with MAP_LOCKED today); refusing that too means testing mmap()'s
 * flags.  Both filters are tried.
 *
 * Each case runs in a child of its own (limits and filters cannot be
 * undone) and reads /proc/self/smaps after the calls; the parent checks.
 * On a kernel without the series the one-call cases skip.
 *
 * usage: lof-atomic
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kfacts.h"
#include "tap.h"

#define NPAGES 4

#if defined(__x86_64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_AARCH64
#endif

enum refusal { LIMIT, FILTER_LOCK_CALLS, FILTER_LOCK_FLAGS };
static const char *const refusal_name[] = {
	"RLIMIT_MEMLOCK of 1 page",
	"seccomp refusing mlock/mlock2/mlockall",
	"seccomp refusing those and mmap() lock flags",
};

/* What a child saw; written to a shared page, read by the parent. */
struct outcome {
	bool done;
	int mmap_errno;	 /* 0: mmap() succeeded */
	int mlock_errno; /* 0: mlock2() succeeded or was not called */
	bool mapped;	 /* after the calls, the range is in smaps */
	bool locked, onfault;
	bool old_kept; /* over an old mapping: its data still reads back */
	bool gone_after_unmap;
};

static size_t len;

static bool drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return false;
	data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	data[CAP_TO_INDEX(CAP_IPC_LOCK)].permitted &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	return syscall(SYS_capset, &hdr, data) == 0;
}

#ifdef AUDIT_ARCH_NATIVE
/* The low word of mmap()'s flags argument. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MMAP_FLAGS_LO offsetof(struct seccomp_data, args[3])
#else
#define MMAP_FLAGS_LO (offsetof(struct seccomp_data, args[3]) + 4)
#endif
#define REFUSE_NR(nr) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, EPERM_RET)
#define EPERM_RET (SECCOMP_RET_ERRNO | EPERM)

static bool install_filter(bool lock_flags)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_NATIVE, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		REFUSE_NR(__NR_mlock),
		REFUSE_NR(__NR_mlock2),
		REFUSE_NR(__NR_mlockall),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, MMAP_FLAGS_LO),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, lock_flags ? MAP_LOCKED | MAP_LOCKONFAULT : 0,
			 0, 1),
		BPF_STMT(BPF_RET | BPF_K, EPERM_RET),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	       syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
}
#else
static bool install_filter(bool lock_flags)
{
	(void)lock_flags;
	errno = ENOSYS;
	return false;
}
#endif

static bool refuse(enum refusal r)
{
	struct rlimit one = { len / NPAGES, len / NPAGES };

	if (r == LIMIT)
		return setrlimit(RLIMIT_MEMLOCK, &one) == 0;
	return install_filter(r == FILTER_LOCK_FLAGS);
}

/* The calls of the case, at addr (free, or holding the old mapping). */
static void calls(bool one_call, bool over, char *addr, struct outcome *o)
{
	int fixed = over ? MAP_FIXED : MAP_FIXED_NOREPLACE;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | fixed | (one_call ? MAP_LOCKONFAULT : 0);
	struct smaps_vma v;

	if (mmap(addr, len, PROT_READ | PROT_WRITE, flags, -1, 0) != addr)
		o->mmap_errno = errno ? errno : EFAULT;
	else if (!one_call && syscall(SYS_mlock2, addr, len, MLOCK_ONFAULT))
		o->mlock_errno = errno;
	o->mapped = smaps_find(0, addr, &v) == 0;
	if (o->mapped) {
		o->locked = vmflag_has(&v, "lo");
		o->onfault = vmflag_has(&v, "lf");
		o->old_kept = over && addr[0] == 'O';
		munmap(addr, len);
		o->gone_after_unmap = smaps_find(0, addr, &v) < 0 && errno == ENOENT;
	}
	o->done = true;
}

/* One case in a child; false if it could not be set up. */
static bool run(enum refusal r, bool one_call, bool over, struct outcome *o)
{
	char *addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	int status;

	memset(o, 0, sizeof(*o));
	if (addr == MAP_FAILED)
		return false;
	pid = fork();
	if (pid == 0) {
		if (over)
			memset(addr, 'O', len);
		else
			munmap(addr, len);
		if (!refuse(r)) {
			perror(refusal_name[r]);
			_exit(1);
		}
		calls(one_call, over, addr, o);
		_exit(0);
	}
	munmap(addr, len);
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0 && o->done;
}

static const char *err(int e)
{
	return e ? strerror(e) : "succeeded";
}

/* The case of one call: fails with nothing mapped, or (over) nothing changed. */
static void one_call_refused(enum refusal r, bool over, struct outcome *o)
{
	const char *what =
		over ? "mmap(MAP_FIXED|MAP_LOCKONFAULT) over a mapping" : "mmap(MAP_LOCKONFAULT)";

	if (!run(r, true, over, o))
		tap_bail("%s under %s: the child failed", what, refusal_name[r]);
	tap_diag("%s under %s: mmap %s; mapped after: %s", what, refusal_name[r],
		 err(o->mmap_errno), o->mapped ? "yes" : "no");
	if (over)
		tap_check(o->mmap_errno && o->mapped && !o->locked && o->old_kept,
			  "%s under %s fails (%s) and leaves the old mapping and its data as they "
			  "were",
			  what, refusal_name[r], err(o->mmap_errno));
	else
		tap_check(o->mmap_errno && !o->mapped, "%s under %s fails (%s) with nothing mapped",
			  what, refusal_name[r], err(o->mmap_errno));
}

/* Two calls: mmap() succeeds, mlock2() fails, a mapping is left unlocked. */
static void two_calls_refused(enum refusal r, bool over, struct outcome *o)
{
	const char *what =
		over ? "mmap(MAP_FIXED)+mlock2(ONFAULT) over a mapping" : "mmap()+mlock2(ONFAULT)";

	if (!run(r, false, over, o))
		tap_bail("%s under %s: the child failed", what, refusal_name[r]);
	tap_diag("%s under %s: mmap %s, mlock2 %s; mapped after: %s, locked: %s", what,
		 refusal_name[r], err(o->mmap_errno), err(o->mlock_errno), o->mapped ? "yes" : "no",
		 o->locked ? "yes" : "no");
	tap_check(!o->mmap_errno && o->mlock_errno && o->mapped && !o->locked &&
			  o->gone_after_unmap && !o->old_kept,
		  "%s under %s: mlock2 fails (%s) after mmap succeeded, leaving an unlocked "
		  "mapping%s that the caller must munmap()",
		  what, refusal_name[r], err(o->mlock_errno),
		  over ? " in place of the old one (its data lost)" : "");
}

int main(void)
{
	bool series = lockonfault_series();
	struct outcome *o;

	len = NPAGES * sysconf(_SC_PAGESIZE);
	o = mmap(NULL, sizeof(*o), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (o == MAP_FAILED)
		tap_bail("mmap of the shared page: %s", strerror(errno));
	tap_subject("atomic", "mmap+mlock2 vs MAP_LOCKONFAULT");
	if (!drop_ipc_lock())
		tap_bail("dropping CAP_IPC_LOCK: %s", strerror(errno));
	tap_diag("running as uid %d, without CAP_IPC_LOCK; %s", (int)getuid(),
		 series ? "the series is here" : "no series: one call skips");

	for (enum refusal r = LIMIT; r <= FILTER_LOCK_FLAGS; r++) {
		bool filter = r != LIMIT;

#ifndef AUDIT_ARCH_NATIVE
		if (filter) {
			tap_skip("no seccomp arch for this build", "%s", refusal_name[r]);
			continue;
		}
#endif
		/* The second filter differs only for mmap(): two calls as the first. */
		if (r != FILTER_LOCK_FLAGS) {
			two_calls_refused(r, false, o);
			if (!filter)
				two_calls_refused(r, true, o);
		}
		if (!series) {
			tap_skip("no MAP_LOCKONFAULT on this kernel", "one call under %s",
				 refusal_name[r]);
			continue;
		}
		if (r == FILTER_LOCK_CALLS) {
			/* Not a refusal: what the filter does not see. */
			if (!run(r, true, false, o))
				tap_bail("one call under %s: the child failed", refusal_name[r]);
			tap_check(!o->mmap_errno && o->mapped && o->locked && o->onfault,
				  "mmap(MAP_LOCKONFAULT) under %s is not refused: the filter sees "
				  "no lock call (mmap %s, locked on fault: %s)",
				  refusal_name[r], err(o->mmap_errno),
				  o->locked && o->onfault ? "yes" : "no");
			continue;
		}
		one_call_refused(r, false, o);
		if (!filter)
			one_call_refused(r, true, o);
	}
	return tap_done();
}
