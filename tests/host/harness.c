/* Test harness: check runner to TAP + summary, /proc parsing, child runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "harness.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

static int method = -1;

int sbt_method(void)
{
	return method;
}

int sbt_locks(unsigned flags)
{
	if (method == SECBUF_LOCK_NONE)
		return 0;
	return method != SECBUF_LOCK_MLOCK || (flags & SECBUF_POPULATE);
}

unsigned sbt_flags(unsigned flags)
{
	return sbt_locks(flags) ? flags : flags | SECBUF_BEST_EFFORT;
}

int sbt_under_valgrind(void)
{
	return RUNNING_ON_VALGRIND;
}

size_t sbt_page(void)
{
	return sysconf(_SC_PAGESIZE);
}

size_t sbt_round16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

unsigned char *sbt_data_start(void *p)
{
	struct secbuf_stat st;

	if (secbuf_stat(p, &st) < 0)
		return NULL;
	return (unsigned char *)p + sbt_round16(st.size) - st.mapped_bytes;
}

/* Read a /proc file into buf without stdio (no malloc, no new mappings). */
static ssize_t slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return got;
}

static char procbuf[1 << 20];

int sbt_maps_lines(void)
{
	int n = 0;
	char *p;

	if (slurp("/proc/self/maps", procbuf, sizeof(procbuf)) < 0)
		return -1;
	for (p = procbuf; *p; p++)
		n += *p == '\n';
	return n;
}

static int holds(const char *line, const void *addr)
{
	unsigned long lo, hi;

	return sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
	       (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
}

int sbt_maps_line(const void *addr, char *line, size_t len)
{
	char *p, *nl;

	if (slurp("/proc/self/maps", procbuf, sizeof(procbuf)) < 0)
		return -1;
	for (p = procbuf; *p; p = nl + 1) {
		nl = strchrnul(p, '\n');
		if (holds(p, addr)) {
			snprintf(line, len, "%.*s", (int)(nl - p), p);
			return 0;
		}
		if (!*nl)
			break;
	}
	return -1;
}

int sbt_smaps(const void *addr, long *rss_kb, long *locked_kb, char *vmflags, size_t len)
{
	char *p, *nl;
	int in = 0, found = 0;

	if (slurp("/proc/self/smaps", procbuf, sizeof(procbuf)) < 0)
		return -1;
	for (p = procbuf; *p; p = nl + 1) {
		nl = strchrnul(p, '\n');
		unsigned long lo, hi;

		if (sscanf(p, "%lx-%lx ", &lo, &hi) == 2)	/* a new mapping */
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		if (in) {
			found = 1;
			sscanf(p, "Rss: %ld kB", rss_kb);
			sscanf(p, "Locked: %ld kB", locked_kb);
			if (!strncmp(p, "VmFlags:", 8) && vmflags)
				snprintf(vmflags, len, "%.*s", (int)(nl - p - 8), p + 8);
		}
		if (!*nl)
			break;
	}
	return found ? 0 : -1;
}

/* Low 32 bits of a syscall argument (little-endian), enough for flags. */
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))

int sbt_deny_syscalls(const struct sbt_deny *d, size_t n)
{
	struct sock_filter prog[64];
	struct sock_fprog fprog = { 0, prog };
	size_t i, k = 0;

	if (n * 5 + 1 > sizeof(prog) / sizeof(prog[0])) {
		errno = E2BIG;
		return -1;
	}
	/* One block per rule: nr matches, then the argument, then the verdict. */
	for (i = 0; i < n; i++) {
		unsigned ret = d[i].err ? SECCOMP_RET_ERRNO | (d[i].err & SECCOMP_RET_DATA) :
					  SECCOMP_RET_KILL_PROCESS;

		prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
							 offsetof(struct seccomp_data, nr));
		prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, d[i].nr,
							 0, d[i].arg < 0 ? 1 : 4);
		if (d[i].arg >= 0) {
			prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
								 ARG_LO(d[i].arg));
			prog[k++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K,
								 d[i].mask);
			prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								 d[i].val, 0, 1);
		}
		prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret);
	}
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	fprog.len = k;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog);
}

int sbt_child(void (*fn)(void *), void *arg, char *msg, size_t len)
{
	int fds[2], status = -1;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(fds) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		fn(arg);
		_exit(0);
	}
	close(fds[1]);
	while (pid > 0 && got + 1 < len && (n = read(fds[0], msg + got, len - 1 - got)) > 0)
		got += n;
	msg[got] = 0;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return status;
}

/*
 * One tcase per test, so that check's results name the test.  Skipped
 * tests are never added; they are reported as "# SKIP" with the reason.
 */
int sbt_run(const char *name, const struct sbt_test *t, size_t n)
{
	Suite *s = suite_create(name);
	SRunner *sr;
	TestResult **res;
	int pass = 0, fail = 0, skip = 0, nres;
	const char *why;
	size_t i;
	int j;

	method = secbuf_lock_method();
	for (i = 0; i < n; i++) {
		TCase *tc;

		if (t[i].skip && t[i].skip())
			continue;
		tc = tcase_create(t[i].name);
		tcase_set_timeout(tc, 120);
		tcase_add_test(tc, t[i].fn);
		suite_add_tcase(s, tc);
	}
	sr = srunner_create(s);
	srunner_run_all(sr, CK_SILENT);
	res = srunner_results(sr);
	nres = srunner_ntests_run(sr);
	for (i = 0; i < n; i++) {
		why = t[i].skip ? t[i].skip() : NULL;
		if (why) {
			printf("ok %zu %s # SKIP %s\n", i + 1, t[i].name, why);
			skip++;
			continue;
		}
		for (j = 0; j < nres; j++)
			if (!strcmp(tr_tcname(res[j]), t[i].name))
				break;
		if (j < nres && tr_rtype(res[j]) == CK_PASS) {
			printf("ok %zu %s\n", i + 1, t[i].name);
			pass++;
		} else {
			printf("not ok %zu %s\n", i + 1, t[i].name);
			if (j < nres)
				printf("# %s:%d: %s\n", tr_lfile(res[j]), tr_lno(res[j]),
				       tr_msg(res[j]));
			fail++;
		}
	}
	free(res);
	srunner_free(sr);
	printf("1..%zu\n%d passed, %d failed, %d skipped\n", n, pass, fail, skip);
	return fail ? 1 : 0;
}
