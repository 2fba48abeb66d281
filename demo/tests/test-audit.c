/*
 * test-audit - secbuf-audit against mappings whose state the test controls,
 * and against a running secbufd.  Kernels without CONFIG_ANON_VMA_NAME (the
 * prctl fails with EINVAL) cannot name a mapping [anon:secbuf]; then the
 * test audits the same mappings by address with --range and says so.
 * usage: test-audit BINDIR   (prints TAP)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../client.h"
#include "spawn.h"
#include "tap.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT		0x01
#endif

#define PAGES 8

static int names_work;

/* The raw syscall: under ASan mlock() is intercepted and does nothing. */
static int lock(void *p, size_t len)
{
	return syscall(SYS_mlock, p, len);
}
static char out[1 << 16];

/* Audit this process's mapping at p, by name if the kernel names mappings. */
static int audit_self(void *p, size_t len, int json)
{
	char pid[16], range[64];
	const char *args[5];
	int n = 0;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(range, sizeof(range), "%lx-%lx", (unsigned long)p, (unsigned long)p + len);
	if (json)
		args[n++] = "--json";
	if (!names_work) {
		args[n++] = "--range";
		args[n++] = range;
	}
	args[n++] = pid;
	args[n] = NULL;
	return run_capture("secbuf-audit", args, out, sizeof(out));
}

static void *secret_mapping(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (names_work && prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, len, "secbuf") != 0) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

static long json_num(const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"summary\":{");
	p = strstr(out, pat);
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = p ? strstr(p, pat) : NULL;
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static void test_mappings(void)
{
	size_t len = PAGES * sysconf(_SC_PAGESIZE);
	char *unlocked, *locked, *onfault;
	int rc;

	unlocked = secret_mapping(len);
	if (!tap_ok(unlocked != NULL, "an unlocked \"secret\" mapping of %d pages", PAGES))
		return;
	memset(unlocked, 0x5a, len);
	rc = audit_self(unlocked, len, 0);
	tap_ok(rc == 1 && strstr(out, "LEAK"), "audit exits 1 on the unlocked secret mapping (exit %d)", rc);
	rc = audit_self(unlocked, len, 1);
	tap_ok(rc == 1 && json_num("evictable") == PAGES && json_num("locked") == 0,
	       "--json counts its %d pages evictable, 0 locked (got %ld, %ld)", PAGES,
	       json_num("evictable"), json_num("locked"));
	munmap(unlocked, len);

	locked = secret_mapping(len);
	if (!locked || lock(locked, len) != 0) {
		tap_ok(0, "an mlocked secret mapping: %s", strerror(errno));
		return;
	}
	rc = audit_self(locked, len, 1);
	tap_ok(rc == 0 && json_num("locked") == PAGES && json_num("swapped") == 0,
	       "audit exits 0 on an mlocked mapping, %d pages locked (exit %d, locked %ld)", PAGES, rc,
	       json_num("locked"));
	munmap(locked, len);

	/* Lock on fault: only the two pages touched are resident, both locked. */
	onfault = secret_mapping(len);
	if (!onfault || syscall(SYS_mlock2, onfault, len, MLOCK_ONFAULT) != 0) {
		tap_ok(0, "an mlock2(MLOCK_ONFAULT) secret mapping: %s", strerror(errno));
		return;
	}
	onfault[0] = 1;
	onfault[len - 1] = 1;
	rc = audit_self(onfault, len, 1);
	tap_ok(rc == 0 && json_num("resident") == 2 && json_num("locked") == 2,
	       "lock-on-fault mapping: clean, 2 of %d pages resident and locked (exit %d, %ld, %ld)", PAGES, rc,
	       json_num("resident"), json_num("locked"));
	munmap(onfault, len);
}

/* --all finds locked mappings of a process that knows nothing of secbuf. */
static void test_all(void)
{
	size_t len = 3 * sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char pid[16];
	const char *args[] = { "--all", "--json", pid, NULL };
	int rc;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (p == MAP_FAILED || lock(p, len) != 0) {
		tap_ok(0, "mlock for the --all test: %s", strerror(errno));
		return;
	}
	rc = run_capture("secbuf-audit", args, out, sizeof(out));
	tap_ok(rc == 0 && json_num("mappings") >= 1 && json_num("locked") >= 3,
	       "--all audits a plain mlocked mapping (exit %d, mappings %ld, locked %ld)", rc,
	       json_num("mappings"), json_num("locked"));
	munmap(p, len);
	{
		const char *bad[] = { "999999999", NULL };

		rc = run_capture("secbuf-audit", bad, out, sizeof(out));
		tap_ok(rc == 2, "a missing process is an error, exit 2 (exit %d)", rc);
	}
}

static void test_daemon(void)
{
	char dir[] = "/tmp/secbuf-audit-test.XXXXXX", sock[128], log[128], pid[16];
	const char *args[] = { "--json", names_work ? pid : "--all", pid, NULL };
	static const char *const dargs[] = { "--strict", NULL };
	uint8_t t = SB_KEY_ED25519;
	struct sb_field f[2] = { { &t, 1 }, { (const uint8_t *)"k", 1 } };
	struct sb_reply r;
	pid_t d;
	int fd, rc;

	if (!mkdtemp(dir))
		return;
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	d = daemon_start(sock, dargs, NULL, log);
	fd = d > 0 ? sb_connect(sock) : -1;
	if (fd < 0 || sb_call(fd, SB_OP_KEYGEN, 2, f, &r) < 0 || r.status != SB_OK) {
		tap_ok(0, "secbufd with one key for the audit");
	} else {
		sb_reply_free(&r);
		snprintf(pid, sizeof(pid), "%d", (int)d);
		if (names_work)
			args[2] = NULL;
		rc = run_capture("secbuf-audit", args, out, sizeof(out));
		tap_ok(rc == 0 && json_num("mappings") >= 2 && json_num("locked") >= 1,
		       "audit of secbufd%s exits 0: %ld mappings, %ld pages resident, %ld locked, %ld swapped",
		       names_work ? "" : " (--all)", json_num("mappings"), json_num("resident"),
		       json_num("locked"), json_num("swapped"));
	}
	if (fd >= 0)
		close(fd);
	if (d > 0)
		daemon_stop(d);
	unlink(log);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	void *probe;

	if (argc != 2) {
		fprintf(stderr, "usage: test-audit BINDIR\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	bindir = argv[1];
	probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	names_work = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, probe, 4096, "secbuf") == 0;
	munmap(probe, 4096);
	if (!names_work)
		printf("# this kernel cannot name anonymous mappings (prctl: %s): auditing by --range and --all\n",
		       strerror(errno));
	test_mappings();
	test_all();
	test_daemon();
	return tap_done();
}
