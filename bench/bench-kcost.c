// SPDX-License-Identifier: MIT
/*
 * What the lock-on-fault patches cost work that never asks for them:
 * anonymous page-fault throughput, an mmap/munmap loop and an
 * mlock/munlock loop.  The same binary runs on the stock and the patched
 * kernel; bench/report sets the medians side by side with their spread.
 * One warm-up round is discarded, as in the 2015 cover letter.
 *
 * Three more loops show what MAP_LOCKONFAULT saves over the ways stock
 * kernels lock a new buffer on fault: map, lock on fault, write one page,
 * unmap, with mmap + mlock2(MLOCK_ONFAULT) (2 calls before the write), with
 * mmap(PROT_NONE) + mlock2(MLOCK_ONFAULT) + mprotect(PROT_READ|PROT_WRITE)
 * (3 calls, and no moment in which the mapping is usable unlocked), both
 * on both kernels, and with mmap(MAP_LOCKONFAULT) (1 call, patched only).
 *
 * The last loop is a cost of the syscall numbers 900 and 901: attaching a
 * seccomp filter makes the kernel run it once for every system call number
 * of each ABI, to cache which numbers it always allows, and the series
 * raises that count from about 450 to 902.
 */
#define _GNU_SOURCE
#include "common.h"
#include "tap.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long page_size;

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap %zu bytes: %s", len, strerror(errno));
	return p;
}

/* Write-faults per second on a fresh anonymous mapping of len bytes. */
static double faults_per_sec(size_t len)
{
	char *p = map_anon(len);
	double t0, t1;
	size_t off;

	/* 4 KiB faults, not one huge page per 512 of them. */
	madvise(p, len, MADV_NOHUGEPAGE);
	t0 = now_ms();
	for (off = 0; off < len; off += page_size)
		p[off] = 1;
	t1 = now_ms();
	munmap(p, len);
	return (len / page_size) / ((t1 - t0) / 1e3);
}

/* mmap + munmap pairs of 16 pages per second. */
static double mmap_per_sec(long iters)
{
	double t0 = now_ms();
	long i;

	for (i = 0; i < iters; i++)
		munmap(map_anon(16 * page_size), 16 * page_size);
	return iters / ((now_ms() - t0) / 1e3);
}

/* mlock + munlock pairs of 16 resident pages per second. */
static double mlock_per_sec(long iters)
{
	size_t len = 16 * page_size;
	char *p = map_anon(len);
	double t0;
	long i;

	memset(p, 1, len);
	t0 = now_ms();
	for (i = 0; i < iters; i++)
		if (mlock(p, len) || munlock(p, len))
			die("mlock/munlock: %s (RLIMIT_MEMLOCK?)", strerror(errno));
	t0 = iters / ((now_ms() - t0) / 1e3);
	munmap(p, len);
	return t0;
}

/* How a cycle below makes its buffer locked on fault */
enum lock_way { WAY_MLOCK2, WAY_PROT_NONE, WAY_MAP_FLAG };

/* Map 16 pages locked on fault, write one, unmap: cycles per second. */
static double lockonfault_per_sec(long iters, enum lock_way way)
{
	size_t len = 16 * page_size;
	int prot = way == WAY_PROT_NONE ? PROT_NONE : PROT_READ | PROT_WRITE;
	double t0 = now_ms();
	long i;

	for (i = 0; i < iters; i++) {
		char *p = mmap(NULL, len, prot,
			       MAP_PRIVATE | MAP_ANONYMOUS |
				       (way == WAY_MAP_FLAG ? MAP_LOCKONFAULT : 0),
			       -1, 0);

		if (p == MAP_FAILED)
			die("mmap: %s", strerror(errno));
		if (way != WAY_MAP_FLAG && syscall(SYS_mlock2, p, len, MLOCK_ONFAULT))
			die("mlock2: %s (RLIMIT_MEMLOCK?)", strerror(errno));
		if (way == WAY_PROT_NONE && mprotect(p, len, PROT_READ | PROT_WRITE))
			die("mprotect: %s", strerror(errno));
		p[0] = 1;
		munmap(p, len);
	}
	return iters / ((now_ms() - t0) / 1e3);
}

/*
 * A typical allow-list filter: the calls a small service needs; every
 * other call kills the process.
 */
static const int allowed[] = {
	SYS_read,	    SYS_write,	       SYS_close,      SYS_fstat,   SYS_lseek,
	SYS_mmap,	    SYS_mprotect,      SYS_munmap,     SYS_brk,	    SYS_rt_sigaction,
	SYS_rt_sigprocmask, SYS_rt_sigreturn,  SYS_ioctl,      SYS_pread64, SYS_pwrite64,
	SYS_readv,	    SYS_writev,	       SYS_madvise,    SYS_dup,	    SYS_dup2,
	SYS_nanosleep,	    SYS_getpid,	       SYS_socket,     SYS_connect, SYS_accept,
	SYS_sendto,	    SYS_recvfrom,      SYS_sendmsg,    SYS_recvmsg, SYS_shutdown,
	SYS_bind,	    SYS_listen,	       SYS_clone,      SYS_exit,    SYS_wait4,
	SYS_kill,	    SYS_fcntl,	       SYS_getuid,     SYS_futex,   SYS_epoll_wait,
	SYS_epoll_ctl,	    SYS_clock_gettime, SYS_exit_group, SYS_openat,  SYS_newfstatat,
	SYS_getrandom,	    SYS_seccomp,       SYS_prctl,
};
#define NALLOWED (sizeof(allowed) / sizeof(allowed[0]))

/*
 * The first filter a process attaches pays for every system call number:
 * the kernel runs it once per number and ABI to fill its cache.  Filters
 * stacked under it only revisit the numbers it allows.  So each of @n
 * children attaches one filter, and times that call alone; filters
 * attached per second of those calls, summed through a pipe.
 */
static double seccomp_attach_per_sec(int n)
{
	struct sock_filter insn[NALLOWED + 3];
	struct sock_fprog prog = { .filter = insn };
	double ms, total = 0;
	int fd[2], status, i, k = 0;
	pid_t pid;

	insn[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, nr));
	for (i = 0; i < (int)NALLOWED; i++)
		insn[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, allowed[i],
							 NALLOWED - i, 0);
	insn[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	insn[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = k;
	if (pipe(fd))
		die("pipe: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid) {
			double t0;

			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
				_exit(1);
			t0 = now_ms();
			if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
				_exit(2);
			ms = now_ms() - t0;
			_exit(write(fd[1], &ms, sizeof(ms)) == sizeof(ms) ? 0 : 3);
		}
		if (read(fd[0], &ms, sizeof(ms)) != sizeof(ms) || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			die("seccomp filter child failed (status %#x)", status);
		total += ms;
	}
	close(fd[0]);
	close(fd[1]);
	if (total <= 0)
		die("seccomp: no time measured");
	return n / (total / 1e3);
}

int main(int argc, char **argv)
{
	size_t fault_len = 64 * MiB;
	long iters = 20000;
	int runs = 7, opt, r, k;
	const char *names[7] = { "anon-fault",	    "mmap-munmap",
				 "mlock-munlock",   "map-mlock2-onfault",
				 "map-lockonfault", "map-protnone-mlock2-mprotect",
				 "seccomp-attach" };
	const char *units[7] = { "faults/s", "pairs/s",	 "pairs/s",  "cycles/s",
				 "cycles/s", "cycles/s", "filters/s" };
	int patched;

	while ((opt = getopt(argc, argv, "s:n:r:")) != -1) {
		switch (opt) {
		case 's': fault_len = parse_size(optarg); break;
		case 'n': iters = atol(optarg); break;
		case 'r': runs = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: bench-kcost [-s FAULT_SIZE] [-n ITERS] [-r RUNS]\n"
				"  defaults: -s 64M -n 20000 -r 7\n");
			return 2;
		}
	}
	if (runs < 1 || runs > 64 || iters < 1)
		die("runs must be 1..64 and iterations positive");
	page_size = sysconf(_SC_PAGESIZE);
	patched = lockonfault_series();
	record("machine %s", machine_desc());
	for (k = 0; k < 7; k++) {
		double v[65];
		char samples[65 * 16];
		struct stats st;
		int len = 0;

		if (k == 4 && !patched) {
			tap_skip("no MAP_LOCKONFAULT in this kernel", "kcost %s", names[k]);
			continue;
		}
		for (r = 0; r <= runs; r++) {
			v[r] = k == 0 ? faults_per_sec(fault_len) :
			       k == 1 ? mmap_per_sec(iters) :
			       k == 2 ? mlock_per_sec(iters) :
			       k == 3 ? lockonfault_per_sec(iters, WAY_MLOCK2) :
			       k == 4 ? lockonfault_per_sec(iters, WAY_MAP_FLAG) :
			       k == 5 ? lockonfault_per_sec(iters, WAY_PROT_NONE) :
					seccomp_attach_per_sec(100);
		}
		/* Raw samples too, so runs of several boots can be pooled. */
		for (r = 1; r <= runs; r++)
			len += snprintf(samples + len, sizeof(samples) - len,
					"%s%.0f", r > 1 ? "," : "", v[r]);
		st = stats_of(v + 1, runs);	/* v[0] was the warm-up */
		record("kcost test=%s unit=%s runs=%d med=%.0f min=%.0f max=%.0f samples=%s",
		       names[k], units[k], runs, st.med, st.min, st.max, samples);
		tap_check(true, "kcost %s %.0f %s (min %.0f, max %.0f)", names[k], st.med, units[k],
			  st.min, st.max);
	}
	return tap_done();
}
