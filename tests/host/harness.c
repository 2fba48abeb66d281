/* Test harness: check runner to TAP + summary, /proc views (kfacts), child runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "harness.h"
#include "kfacts.h"
#include "tap.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

static int method = -1;
static const char *unsupported;	/* why the forced method cannot run, or NULL */
static char *self;		/* argv[0]; not /proc/self/exe, which is valgrind under it */

/* check knows pass and fail only: a skip is a failure with this prefix. */
#define SKIP_TAG "SBT-SKIP: "

void sbt_skip(const char *why)
{
	ck_abort_msg(SKIP_TAG "%s", why);
	abort();	/* not reached: check ends the test */
}

void sbt_need_method(void)
{
	if (unsupported)
		sbt_skip(unsupported);
}

void sbt_need_missing_method(void)
{
	if (!unsupported)
		sbt_skip("the forced method is supported");
}

void sbt_need_root(void)
{
	if (geteuid() != 0)
		sbt_skip("needs root to setuid(65534)");
}

void sbt_need_no_valgrind(const char *why)
{
	if (sbt_under_valgrind())
		sbt_skip(why);
}

void sbt_need_anon_vma_name(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int named;

	ck_assert_ptr_ne(p, MAP_FAILED);
	named = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, 4096, "t") == 0;
	munmap(p, 4096);
	if (!named)
		sbt_skip("kernel lacks CONFIG_ANON_VMA_NAME");
}

void sbt_need_secretmem(void)
{
	if (!secretmem_works())
		sbt_skip(errno == ENOSYS ?
				 "no memfd_secret here (CONFIG_SECRETMEM, secretmem.enable=1)" :
				 "memfd_secret refused here");
}

int sbt_mem_read_err(const void *p, size_t n)
{
	unsigned char buf[64];
	int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0 || n > sizeof(buf))
		return -1;
	if (pread(fd, buf, n, (off_t)(uintptr_t)p) != (ssize_t)n)
		err = errno ? errno : -1;
	else if (memcmp(buf, p, n))
		err = -1; /* read, but not what is there */
	close(fd);
	explicit_bzero(buf, sizeof(buf));
	return err;
}

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

int sbt_under_asan(void)
{
#ifdef __SANITIZE_ADDRESS__
	return 1;
#else
	return 0;
#endif
}

size_t sbt_page(void)
{
	return sysconf(_SC_PAGESIZE);
}

int sbt_differs(const unsigned char *p, size_t n, unsigned char fill)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != fill)
			return 1;
	return 0;
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

/*
 * Valgrind grows executable mappings of its own (translations) as it runs;
 * libsecbuf never maps executable memory, so under valgrind they are left
 * out of the count.
 */
static int count_vma(const struct smaps_vma *v, void *arg)
{
	*(int *)arg += !sbt_under_valgrind() || !strchr(v->perms, 'x');
	return 0;
}

int sbt_maps_lines(void)
{
	int n = 0;

	return smaps_each(0, count_vma, &n) < 0 ? -1 : n;
}

long sbt_vmlck_kb(void)
{
	return proc_field_kb("/proc/self/status", "VmLck");
}

int sbt_maps_line(const void *addr, char *line, size_t len)
{
	struct smaps_vma v;

	if (smaps_find(0, addr, &v) < 0)
		return -1;
	snprintf(line, len, "%lx-%lx %s %s", v.start, v.end, v.perms, v.name);
	return 0;
}

int sbt_smaps(const void *addr, long *rss_kb, long *locked_kb, char *vmflags, size_t len)
{
	struct smaps_vma v;

	if (smaps_find(0, addr, &v) < 0)
		return -1;
	*rss_kb = v.rss_kb;
	*locked_kb = v.locked_kb;
	if (vmflags)
		snprintf(vmflags, len, "%s", v.vmflags);
	return 0;
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
		unsigned ret = d[i].err == SBT_TRAP ? SECCOMP_RET_TRAP :
			       d[i].err == SBT_FAKE ? SECCOMP_RET_ERRNO :
			       d[i].err ? SECCOMP_RET_ERRNO | (d[i].err & SECCOMP_RET_DATA) :
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

void sbt_note(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	if (used)
		buf[used++] = '\n';
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

int sbt_signalled(int status, int sig)
{
	return status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

int sbt_exited_ok(int status)
{
	return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
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

static void exec_self(void *arg)
{
	const struct sbt_self *se = arg;
	char *const argv[] = { self, (char *)se->mode, NULL };

	if (se->secbuf_lock && setenv("SECBUF_LOCK", se->secbuf_lock, 1) < 0)
		_exit(126);
	if (se->env && putenv((char *)se->env) < 0)
		_exit(126);
	if (se->before_exec)
		se->before_exec();
	if (se->ndeny && sbt_deny_syscalls(se->deny, se->ndeny) < 0)
		_exit(125);
	execvp(self, argv);
	_exit(127);
}

int sbt_kernel_names_lf(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char flags[256] = "";
	long rss, locked;
	int named = -1;
	void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	if (mlock2(p, page, MLOCK_ONFAULT) == 0 &&
	    sbt_smaps(p, &rss, &locked, flags, sizeof(flags)) == 0)
		named = !!strstr(flags, " lf ");
	munmap(p, page);
	return named;
}

struct poke {
	volatile unsigned char *at;
	int write;
};

static void do_poke(void *arg)
{
	struct poke *pk = arg;

	if (pk->write)
		*pk->at = 1;
	else
		(void)*pk->at;
}

int sbt_poke(void *at, int write)
{
	struct poke pk = { at, write };
	char msg[512];

	return sbt_child(do_poke, &pk, msg, sizeof(msg));
}

int sbt_run_self(const struct sbt_self *se, char *msg, size_t len)
{
	return sbt_child(exec_self, (void *)se, msg, len);
}

/* One tcase per test, so that check's results name the test. */
static int run(const char *name, const struct sbt_test *const *groups)
{
	Suite *s = suite_create(name);
	const struct sbt_test *const *g;
	const struct sbt_test *t;
	SRunner *sr;
	TestResult **res;
	int nres, j, rc;
	/* The guest's passes with a forced method skip the slow stress tests. */
	int quick = getenv("SBT_QUICK") && !strcmp(getenv("SBT_QUICK"), "1");

	for (g = groups; *g; g++) {
		for (t = *g; t->name; t++) {
			TCase *tc;

			if (t->slow && quick)
				continue;
			tc = tcase_create(t->name);
			tcase_set_timeout(tc, 120);
			tcase_add_test(tc, *t->fn);
			suite_add_tcase(s, tc);
		}
	}
	sr = srunner_create(s);
	srunner_run_all(sr, CK_SILENT);
	res = srunner_results(sr);
	nres = srunner_ntests_run(sr);
	for (g = groups; *g; g++) {
		for (t = *g; t->name; t++) {
			const char *msg;

			if (t->slow && quick) {
				tap_skip("SBT_QUICK: a stress test the default method's pass runs",
					 "%s", t->name);
				continue;
			}
			for (j = 0; j < nres; j++)
				if (!strcmp(tr_tcname(res[j]), t->name))
					break;
			msg = j < nres ? tr_msg(res[j]) : "";
			if (j < nres && tr_rtype(res[j]) != CK_PASS &&
			    !strncmp(msg, SKIP_TAG, strlen(SKIP_TAG)))
				tap_skip(msg + strlen(SKIP_TAG), "%s", t->name);
			else if (!tap_check(j < nres && tr_rtype(res[j]) == CK_PASS, "%s", t->name) &&
				 j < nres)
				tap_diag("%s:%d: %s", tr_lfile(res[j]), tr_lno(res[j]), msg);
		}
	}
	free(res);
	srunner_free(sr);
	rc = tap_done();
	tap_totals();
	return rc;
}

int sbt_main(int argc, char **argv, const char *suite,
	     const struct sbt_test *const *groups, const struct sbt_mode *modes)
{
	static char why[128];
	const char *forced = getenv("SECBUF_LOCK");

	self = argv[0];
	for (; modes && modes->flag; modes++)
		if (argc == 2 && !strcmp(argv[1], modes->flag))
			return modes->main();
	method = secbuf_lock_method();
	if (method < 0) {
		if (errno == ENOSYS)
			snprintf(why, sizeof(why), "SECBUF_LOCK=%s: not supported by this %s",
				 forced, sbt_under_valgrind() ? "valgrind (no mlock2 syscall)" :
								"kernel");
		else
			snprintf(why, sizeof(why), "SECBUF_LOCK=%s: %s", forced, strerror(errno));
		unsupported = why;
		printf("# SKIP: %s\n", why);
	}
	return run(suite, groups);
}
