/* Test harness: check runner to TAP + summary, /proc parsing, child runs. */
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
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "harness.h"

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

/*
 * Valgrind grows executable mappings of its own (translations) as it runs;
 * libsecbuf never maps executable memory, so under valgrind they are left
 * out of the count.
 */
static int counted(const char *line)
{
	char perms[8];

	return !sbt_under_valgrind() || sscanf(line, "%*x-%*x %7s", perms) != 1 ||
	       !strchr(perms, 'x');
}

int sbt_maps_lines(void)
{
	int n = 0;
	char *p, *nl;

	if (slurp("/proc/self/maps", procbuf, sizeof(procbuf)) < 0)
		return -1;
	for (p = procbuf; *p; p = nl + 1) {
		nl = strchrnul(p, '\n');
		n += counted(p);
		if (!*nl)
			break;
	}
	return n;
}

long sbt_vmlck_kb(void)
{
	const char *at;
	long kb = -1;

	if (slurp("/proc/self/status", procbuf, sizeof(procbuf)) < 0)
		return -1;
	at = strstr(procbuf, "\nVmLck:");
	if (at && sscanf(at, "\nVmLck: %ld kB", &kb) != 1)
		kb = -1;
	return kb;
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

/* The header line of a mapping: range, permissions and name. */
static int vma_header(const char *line, const char *nl, struct sbt_vma *v)
{
	int name_at = 0;

	memset(v, 0, sizeof(*v));
	if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &v->lo, &v->hi, v->perms,
		   &name_at) < 3)
		return 0;
	if (name_at && line + name_at < nl)
		snprintf(v->name, sizeof(v->name), "%.*s", (int)(nl - line - name_at),
			 line + name_at);
	return 1;
}

int sbt_smaps_each(int (*fn)(const struct sbt_vma *v, void *arg), void *arg)
{
	struct sbt_vma v;
	int in = 0, ret;
	char *p, *nl;

	if (slurp("/proc/self/smaps", procbuf, sizeof(procbuf)) < 0)
		return -1;
	for (p = procbuf; *p; p = nl + 1) {
		nl = strchrnul(p, '\n');
		if (!strncmp(p, "VmFlags:", 8)) {	/* the last field of a mapping */
			snprintf(v.vmflags, sizeof(v.vmflags), "%.*s ", (int)(nl - p - 8), p + 8);
			if (in && (ret = fn(&v, arg)) != 0)
				return ret;
			in = 0;
		} else if (!in) {
			in = vma_header(p, nl, &v);
		} else {
			sscanf(p, "Rss: %ld kB", &v.rss_kb);
			sscanf(p, "Locked: %ld kB", &v.locked_kb);
		}
		if (!*nl)
			break;
	}
	return 0;
}

struct holding {
	uintptr_t addr;
	struct sbt_vma *out;
};

static int holds_addr(const struct sbt_vma *v, void *arg)
{
	struct holding *h = arg;

	if (h->addr < v->lo || h->addr >= v->hi)
		return 0;
	*h->out = *v;
	return 1;
}

int sbt_smaps(const void *addr, long *rss_kb, long *locked_kb, char *vmflags, size_t len)
{
	struct sbt_vma v;
	struct holding h = { (uintptr_t)addr, &v };

	if (sbt_smaps_each(holds_addr, &h) != 1)
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

int sbt_run_self(const struct sbt_self *se, char *msg, size_t len)
{
	return sbt_child(exec_self, (void *)se, msg, len);
}

static size_t count_tests(const struct sbt_test *const *groups)
{
	const struct sbt_test *t;
	size_t n = 0;

	for (; *groups; groups++)
		for (t = *groups; t->name; t++)
			n++;
	return n;
}

/* One tcase per test, so that check's results name the test. */
static int run(const char *name, const struct sbt_test *const *groups)
{
	Suite *s = suite_create(name);
	const struct sbt_test *const *g;
	const struct sbt_test *t;
	SRunner *sr;
	TestResult **res;
	int pass = 0, fail = 0, skip = 0, nres;
	size_t i = 0;
	int j;

	for (g = groups; *g; g++) {
		for (t = *g; t->name; t++) {
			TCase *tc = tcase_create(t->name);

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

			i++;
			for (j = 0; j < nres; j++)
				if (!strcmp(tr_tcname(res[j]), t->name))
					break;
			msg = j < nres ? tr_msg(res[j]) : "";
			if (j < nres && tr_rtype(res[j]) == CK_PASS) {
				printf("ok %zu %s\n", i, t->name);
				pass++;
			} else if (j < nres && !strncmp(msg, SKIP_TAG, strlen(SKIP_TAG))) {
				printf("ok %zu %s # SKIP %s\n", i, t->name, msg + strlen(SKIP_TAG));
				skip++;
			} else {
				printf("not ok %zu %s\n", i, t->name);
				if (j < nres)
					printf("# %s:%d: %s\n", tr_lfile(res[j]), tr_lno(res[j]), msg);
				fail++;
			}
		}
	}
	free(res);
	srunner_free(sr);
	printf("1..%zu\n%d passed, %d failed, %d skipped\n", count_tests(groups), pass, fail,
	       skip);
	return fail ? 1 : 0;
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
