// SPDX-License-Identifier: MIT
/*
 * bench-audit - the cost of secbuf-audit --host against the number of
 * processes: N small sleeping processes, one in ten holding secbuf memory
 * (a 32-byte key and a 64 KiB buffer, every page used), and for each N
 * the audit's wall time and peak RSS against its floor, a plain
 * `cat /proc/STAR/smaps > /dev/null` over the same processes.  Floor and
 * audit alternate, RUNS times each; medians.
 *
 * Run it as PID 1 of a PID namespace of its own, so that /proc holds the
 * N processes and nothing else:
 *   unshare --pid --fork --mount-proc bench-audit AUDIT N...
 * When it exits, the kernel kills whatever of the namespace is left.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <secbuf.h>

#include "common.h"
#include "tap.h"

#define RUNS	      5
#define HOLDERS_EVERY 10 /* one process in ten holds secbuf memory */

/* A sleeper: secbuf memory if asked, a byte to say it is ready, then pause. */
static void sleeper(int ready, int holds)
{
	char one = 1;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (holds) {
		unsigned char *key = secbuf_alloc(32), *buf = secbuf_alloc(64 * KiB);

		if (!key || !buf)
			_exit(1);
		memset(key, 0x5a, 32);
		memset(buf, 0x5a, 64 * KiB);
	}
	if (write(ready, &one, 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

/* N sleepers, their pids in pids[]; 0 once every one is ready. */
static int spawn(pid_t *pids, int n)
{
	int p[2], got = 0;
	char buf[256];

	if (pipe(p) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return -1;
		if (pids[i] == 0) {
			close(p[0]);
			sleeper(p[1], i % HOLDERS_EVERY == 0);
		}
	}
	close(p[1]);
	while (got < n) {
		ssize_t r = read(p[0], buf, sizeof(buf));

		if (r <= 0)
			break; /* a sleeper died: every write end is gone */
		got += r;
	}
	close(p[0]);
	return got == n ? 0 : -1;
}

static void reap(pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
}

/* Run argv with stdout on /dev/null: its wall time in ms, its peak RSS in kB. */
static int timed(char *const argv[], double *ms, long *rss_kb)
{
	struct rusage ru;
	double t0 = now_ms();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return -1;
	*ms = now_ms() - t0;
	*rss_kb = ru.ru_maxrss;
	/* The audit exits 0 (clean) here; 127 is a failed exec. */
	return WIFEXITED(status) && WEXITSTATUS(status) != 127 ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv)
{
	char *floor[] = { "/bin/sh", "-c", "cat /proc/*/smaps > /dev/null", NULL };
	char *audit[] = { argc > 1 ? argv[1] : "", "--host", "--format=prometheus", NULL };

	if (argc < 3)
		die("usage: unshare --pid --fork --mount-proc bench-audit AUDIT N...");
	if (getpid() != 1)
		tap_diag("not PID 1 of a namespace: /proc holds the host's processes too");
	raise_memlock();
	tap_diag("%s", machine_desc());
	for (int a = 2; a < argc; a++) {
		int n = atoi(argv[a]), rc = 0;
		double fms[RUNS], ams[RUNS];
		long frss[RUNS], arss[RUNS];
		pid_t *pids = calloc(n, sizeof(*pids));
		struct stats f, m;
		double frs[RUNS], ars[RUNS];

		if (!pids || n <= 0)
			die("bad N %s", argv[a]);
		if (spawn(pids, n) < 0) {
			reap(pids, n);
			tap_check(false, "%d sleepers, %d holding secbuf memory: %s", n,
				  (n + HOLDERS_EVERY - 1) / HOLDERS_EVERY, strerror(errno));
			free(pids);
			continue;
		}
		for (int r = 0; r < RUNS && rc >= 0; r++) {
			rc = timed(floor, &fms[r], &frss[r]);
			if (rc >= 0)
				rc = timed(audit, &ams[r], &arss[r]);
			frs[r] = frss[r];
			ars[r] = arss[r];
		}
		reap(pids, n);
		free(pids);
		if (!tap_check(rc == 0,
			       "%d processes (%d holding secbuf memory): the audit ran clean "
			       "(exit %d)",
			       n, (n + HOLDERS_EVERY - 1) / HOLDERS_EVERY, rc))
			continue;
		f = stats_of(fms, RUNS);
		m = stats_of(ams, RUNS);
		record("audit n=%d holders=%d floor_ms=%.1f floor_min=%.1f floor_max=%.1f audit_ms=%.1f "
		       "audit_min=%.1f audit_max=%.1f ratio=%.2f us_per_proc=%.1f floor_us_per_proc=%.1f "
		       "audit_rss_kb=%.0f floor_rss_kb=%.0f",
		       n, (n + HOLDERS_EVERY - 1) / HOLDERS_EVERY, f.med, f.min, f.max, m.med,
		       m.min, m.max, m.med / f.med, m.med * 1000 / n, f.med * 1000 / n,
		       stats_of(ars, RUNS).med, stats_of(frs, RUNS).med);
	}
	return tap_done();
}
