/*
 * replay: a harness's corpus and crash reproducers, without libFuzzer, for
 * make check.  Each input runs in a child of its own, so that one crash is
 * reported with its file and the rest still run; one TAP result per
 * directory.  usage: NAME-replay DIR...
 * FUZZ_MUST_RUN=1: a harness this host cannot run fails rather than skips
 * (the guest on the patched kernel, which must give the method asked for).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"
#include "tap.h"

/* What the child printed on stderr, shown only when the input failed. */
static void show(int fd)
{
	char buf[4096];
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		(void)!write(STDOUT_FILENO, buf, n);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * libFuzzer's -timeout arms SIGALRM, without SA_RESTART, every timeout/2 + 1
 * seconds: a harness's blocking call may fail with EINTR under the fuzzer.
 * The replay interrupts as often (every millisecond), so that such a
 * failure is found here too, and its fix kept.
 */
static void alarm_like_libfuzzer(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval every = { { 0, 1000 }, { 0, 1000 } };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0 || setitimer(ITIMER_REAL, &every, NULL) < 0)
		abort();
}

static int run_one(const char *path)
{
	static uint8_t buf[1 << 20];
	int fd = open(path, O_RDONLY | O_CLOEXEC), status, err, rc;
	ssize_t n;
	pid_t pid;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -1;
	err = memfd_create("stderr", MFD_CLOEXEC);
	fflush(stdout);
	pid = err < 0 ? -1 : fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(err, STDERR_FILENO);
		alarm_like_libfuzzer();
		uint8_t *copy = malloc(n ? n : 1); /* exactly n bytes: ASan sees an overread */

		memcpy(copy, buf, n);
		LLVMFuzzerTestOneInput(copy, n);
		free(copy);
		exit(0); /* not _exit(): a coverage build writes its profile at exit */
	}
	rc = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 :
												-1;
	if (rc < 0)
		show(err);
	close(err);
	return rc;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	bool must_run = getenv("FUZZ_MUST_RUN") != NULL;

	if (LLVMFuzzerInitialize) {
		fflush(stdout);
		pid_t pid = fork();
		int status;

		if (pid == 0) /* in a child: it may exit to say the host cannot run it */
			_exit(LLVMFuzzerInitialize(&argc, &argv));
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			tap_bail("%s: fork: %s", name, strerror(errno));
		if (WIFEXITED(status) && WEXITSTATUS(status) == FUZZ_UNAVAILABLE) {
			for (int i = 1; i < argc; i++)
				if (must_run)
					tap_check(false, "%s: %s: this host cannot run it", name,
						  argv[i]);
				else
					tap_skip("this host cannot run it (its message above)",
						 "%s: %s", name, argv[i]);
			return tap_done();
		}
		LLVMFuzzerInitialize(&argc, &argv);
	}

	for (int i = 1; i < argc; i++) {
		struct dirent **ents;
		int n = scandir(argv[i], &ents, NULL, by_name), inputs = 0, failed = 0;
		char path[4096];

		if (n < 0) {
			tap_check(false, "%s: %s: %s", name, argv[i], strerror(errno));
			continue;
		}
		for (int k = 0; k < n; k++) {
			struct stat st;

			snprintf(path, sizeof(path), "%s/%s", argv[i], ents[k]->d_name);
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				inputs++;
				if (run_one(path) < 0) {
					failed++;
					tap_diag("%s: %s fails", name, path);
				}
			}
			free(ents[k]);
		}
		free(ents);
		if (!inputs)
			tap_check(false, "%s: %s holds no input", name, argv[i]);
		else
			tap_check(!failed, "%s: %d inputs of %s replayed, %d failed", name, inputs,
				  argv[i], failed);
	}
	return tap_done();
}
