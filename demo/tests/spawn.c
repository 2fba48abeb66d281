/* spawn.c - fork/exec helpers shared by the demo's host tests. */
#define _GNU_SOURCE
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../secbufctl/client.h"

const char *bindir = ".";

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void exec_prog(const char *prog, const char *const *args, const char *const *env)
{
	char path[4096];
	const char *argv[32];
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", bindir, prog);
	argv[n++] = path;
	for (; args && *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	for (; env && *env; env++)
		putenv((char *)*env);
	execv(path, (char *const *)argv);
	fprintf(stderr, "exec %s: %s\n", path, strerror(errno));
	_exit(127);
}

/* memfd_secret fails with ENOSYS from now on, in this process and what it execs. */
static int deny_memfd_secret(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_secret, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

pid_t daemon_spawn(const char *socket, const char *const *args, const char *const *env, const char *errlog,
		   const struct run_as *as)
{
	const char *argv[32] = { "-s", socket };
	int n = 2;
	pid_t pid;

	for (; args && *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		int log = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		/* Never hold the test's stdout open, and never outlive the test. */
		if (log >= 0) {
			dup2(log, 1);
			dup2(log, 2);
		}
		if (as) {
			struct rlimit rl = { as->memlock, as->memlock };

			if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0 || setgroups(0, NULL) < 0 ||
			    setgid(as->uid) < 0 || setuid(as->uid) < 0) {
				fprintf(stderr, "run as uid %u, RLIMIT_MEMLOCK %llu: %s\n", (unsigned)as->uid,
					as->memlock, strerror(errno));
				_exit(126);
			}
			if (as->no_secretmem && deny_memfd_secret() < 0) {
				fprintf(stderr, "seccomp filter: %s\n", strerror(errno));
				_exit(126);
			}
		}
		/* After setuid, which clears it. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		exec_prog("secbufd", argv, env);
	}
	return pid;
}

int daemon_ready(pid_t pid, const char *socket, int *status)
{
	*status = -1;
	for (int i = 0; pid > 0 && i < 500; i++) {
		int fd = kd_connect(socket);

		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (waitpid(pid, status, WNOHANG) == pid)
			return -1;
		sleep_ms(10);
	}
	return -1;
}

pid_t daemon_start(const char *socket, const char *const *args, const char *const *env, const char *errlog)
{
	pid_t pid = daemon_spawn(socket, args, env, errlog, NULL);
	int status;

	if (pid < 0)
		return -1;
	if (daemon_ready(pid, socket, &status) == 0)
		return pid;
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

int wait_exit(pid_t pid, int timeout_ms)
{
	int status;

	for (int t = 0; t <= timeout_ms; t += 10) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		sleep_ms(10);
	}
	return -1;
}

int daemon_stop(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	status = wait_exit(pid, 5000);
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return status;
}

/* run_capture()'s work; both: stderr into out too. */
static int capture(const char *prog, const char *const *args, char *out, size_t outsz, int both)
{
	char drain[4096];
	int p[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		if (both)
			dup2(p[1], 2);
		exec_prog(prog, args, NULL);
	}
	close(p[1]);
	while (pid > 0 && got < outsz - 1 && (n = read(p[0], out + got, outsz - 1 - got)) > 0)
		got += n;
	out[got] = '\0';
	/* Drain the rest so that a chatty child never blocks on the pipe. */
	while (pid > 0 && read(p[0], drain, sizeof(drain)) > 0)
		;
	close(p[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int run_capture(const char *prog, const char *const *args, char *out, size_t outsz)
{
	return capture(prog, args, out, outsz, 0);
}

int run_capture_both(const char *prog, const char *const *args, char *out, size_t outsz)
{
	return capture(prog, args, out, outsz, 1);
}

char *test_dir(void)
{
	static char dir[] = "/tmp/secbufd-test.XXXXXX";

	if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
		return NULL;
	return dir;
}

char *read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	while (fd >= 0 && got < size - 1 && (n = read(fd, buf + got, size - 1 - got)) > 0)
		got += n;
	if (fd >= 0)
		close(fd);
	buf[got] = '\0';
	return buf;
}
