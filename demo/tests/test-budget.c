/*
 * test-budget - secbufd's memory-locking policy against the kernel's
 * RLIMIT_MEMLOCK accounting: strict by default, the limit and the amount
 * needed named on refusal, --allow-unlocked said plainly, and the whole
 * buffer length charged when it is locked (not the pages touched).
 * Runs the daemon as uid 65534 under chosen limits, so it needs root; the
 * guest runs it on the patched and the stock kernel.
 * usage: test-budget BINDIR   (prints TAP)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "../audit/scan.h"
#include "../secbufctl/client.h"
#include "kfacts.h"
#include "spawn.h"
#include "tap.h"

#define NOBODY		65534
#define KEYS		256 /* KEYSTORE_MAX: what test_sealed_keys makes under the budget */
#define PREKEY		(16UL << 10)	/* SECBUF_SEAL_PREKEY: libsecbuf-seal's prekey */
#define SMALL		(4UL << 20)	/* fits under an 8 MiB hard limit, as on CI hosts */

static char dir[256], sock[300], log_path[300], text[8192];
static long page_kb;

/*
 * What the documented formula says a buffer of n bytes (a page multiple)
 * charges: its pages plus one for the 16-byte canary in front of it.
 */
static unsigned long charge_kb(unsigned long n)
{
	return (n >> 10) + page_kb;
}

/*
 * The sealed keys' share, whatever their number: the prekey, and for the
 * one key open at a time its buffer and the page the key that opens it is
 * derived in.  A key at rest is ciphertext in ordinary memory: nothing.
 */
static unsigned long keys_kb(void)
{
	return charge_kb(PREKEY) + 2 * page_kb;
}

static unsigned long need_kb(unsigned long n)
{
	/* + libsecbuf's key page, locked once per process */
	return charge_kb(n) + keys_kb() + page_kb;
}

/*
 * Start secbufd as uid 65534 under memlock_kb; 0 when it answers, else its
 * exit code.  Its keys stay in the lock tier (--secret-memory=off): the
 * budget is that tier's, and only some kernels charge secret memory to
 * RLIMIT_MEMLOCK at all (6.18 does, Debian's 6.1 and 6.12 do not).
 */
static int start_as_nobody(unsigned long long memlock_kb, const char *const *args, pid_t *pid)
{
	struct run_as as = { NOBODY, memlock_kb << 10, 0 };
	const char *argv[8];
	int status, n = 0;

	while (args[n] && n < 6) {
		argv[n] = args[n];
		n++;
	}
	argv[n++] = "--secret-memory=off";
	argv[n] = NULL;
	*pid = daemon_spawn(sock, argv, NULL, log_path, &as);
	if (daemon_ready(*pid, sock, &status) == 0)
		return 0;
	if (status == -1) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
		return -1;
	}
	read_text(log_path, text, sizeof(text));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void stop(pid_t pid)
{
	daemon_stop(pid);
	read_text(log_path, text, sizeof(text));
}

static void show_log(void)
{
	for (const char *line = text, *end; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		printf("#   %.*s\n", (int)(end - line), line);
	}
}

static int has(const char *needle)
{
	return strstr(text, needle) != NULL;
}

/* pid's VmLck, in kB (what the kernel has charged to RLIMIT_MEMLOCK), or -1. */
static long vmlck_kb(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return proc_field_kb(path, "VmLck");
}

/* Locked bytes of pid as the kernel accounts them: its VM_LOCKED mappings. */
static long locked_kb(pid_t pid, unsigned long *resident)
{
	struct audit_select all = { .all = 1 };
	struct audit_map *m;
	size_t n;
	int kpf;
	long kb = 0;

	*resident = 0;
	if (audit_scan(pid, &all, &m, &n, &kpf) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!m[i].lo)
			continue;
		kb += (m[i].end - m[i].start) >> 10;
		*resident += m[i].resident;
	}
	free(m);
	return kb;
}

static void test_refusals(void)
{
	static const char *const dflt[] = { NULL };
	static const char *const strict[] = { "--strict", NULL };
	char want[128];
	pid_t pid;
	int rc;

	/* The operator's case: the usual 8 MiB limit, the default 64 MiB buffer. */
	rc = start_as_nobody(8192, dflt, &pid);
	if (rc == 0)
		stop(pid);
	snprintf(want, sizeof(want), "RLIMIT_MEMLOCK is 8192 kB, %lu kB needed", need_kb(64UL << 20));
	tap_check(rc == 1 && has(want), "by default secbufd refuses to start unlocked: exit 1, \"%s\" (exit %d)",
	       want, rc);
	show_log();
	tap_check(rc == 1 && has("LimitMEMLOCK=") && has("ulimit -l") && has("--buffer") && has("--allow-unlocked"),
	       "the refusal names LimitMEMLOCK=, ulimit -l, --buffer and --allow-unlocked");

	rc = start_as_nobody(8192, strict, &pid);
	if (rc == 0)
		stop(pid);
	tap_check(rc == 1 && has(want), "--strict (now the default) is still accepted and refuses the same way "
	       "(exit %d)", rc);
}

static void test_allow_unlocked(void)
{
	static const char *const args[] = { "--allow-unlocked", "--buffer", "4M", NULL };
	struct kd_reply r;
	pid_t pid;
	int rc, fd, method_none = 0;

	rc = start_as_nobody(64, args, &pid);
	if (!tap_check(rc == 0, "--allow-unlocked under a 64 kB limit starts (exit %d)", rc)) {
		show_log();
		return;
	}
	fd = kd_connect(sock);
	if (fd >= 0 && kd_call(fd, KD_OP_STATS, 0, NULL, &r) == 0) {
		struct kd_stat_rec rec;

		method_none = r.status == KD_OK && r.nf >= 2 && kd_stat_unpack(&r.f[1], &rec) == 0 &&
			      rec.lock_method == 3;	/* SECBUF_LOCK_NONE */
		kd_reply_free(&r);
	}
	if (fd >= 0)
		close(fd);
	stop(pid);
	tap_check(method_none, "its working buffer really is unlocked (stats: lock method none)");
	tap_check(has("UNLOCKED") && !has("locked as touched") && !has("memory locked with"),
	       "its startup line says UNLOCKED, and nothing that claims the memory is locked");
	show_log();
}

/* At the exact amount needed it starts, and the kernel has charged the whole buffer. */
static void test_whole_length(void)
{
	static const char *const args[] = { "--buffer", "4M", NULL };
	unsigned long resident = 0;
	long kb = -1;
	pid_t pid;
	int rc;

	rc = start_as_nobody(need_kb(SMALL), args, &pid);
	if (tap_check(
		    rc == 0,
		    "RLIMIT_MEMLOCK of exactly the %lu kB needed (4 MiB buffer + %lu kB for the sealed keys): "
		    "starts (exit %d)",
		    need_kb(SMALL), keys_kb(), rc)) {
		kb = locked_kb(pid, &resident);
		stop(pid);
	}
	/* VmLck also holds libsecbuf's key page, locked before the first buffer. */
	tap_check(kb == (long)(charge_kb(SMALL) + page_kb) && resident < charge_kb(SMALL) / page_kb / 2,
	       "the kernel charges the buffer's whole length at lock time: %ld kB locked (want %lu + the key "
	       "page) with %lu pages resident", kb, charge_kb(SMALL), resident);
	if (has("memory locked with "))
		printf("# REPORT: lock budget (%.*s): a 4 MiB buffer is charged %ld kB of RLIMIT_MEMLOCK at once, "
		       "%lu page(s) resident\n", (int)strcspn(strstr(text, "with ") + 5, ":"), strstr(text, "with ") + 5,
		       kb, resident);

	rc = start_as_nobody(need_kb(SMALL) - page_kb, args, &pid);
	if (rc == 0)
		stop(pid);
	tap_check(rc == 1, "one page less than needed: refuses, exit 1 (exit %d)", rc);
	show_log();
}

/* One request on conn: its status, or -1. */
static int request(int fd, uint8_t op, unsigned n, const struct kd_field *f)
{
	struct kd_reply r;
	int st;

	if (kd_call(fd, op, n, f, &r) < 0)
		return -1;
	st = r.status;
	kd_reply_free(&r);
	return st;
}

/*
 * A key at rest is sealed and charges nothing: under exactly the limit the
 * daemon asks for, strict, 256 keys are made and each used (a sign, or a
 * seal and an open), and what the kernel has charged (VmLck) is the same
 * after the last key as after the first, within the budget.
 */
static void test_sealed_keys(void)
{
	static const char *const args[] = { "--buffer", "4M", NULL };
	static const uint8_t msg[] = "a message";
	uint8_t box[sizeof(msg) + 48], name[16];
	long first = -1, last = -1;
	int rc, fd = -1, made = 0, used = 0;
	pid_t pid;

	rc = start_as_nobody(need_kb(SMALL), args, &pid);
	if (!tap_check(rc == 0, "strict, under exactly the %lu kB it asks for: starts (exit %d)",
		       need_kb(SMALL), rc)) {
		show_log();
		return;
	}
	fd = kd_connect(sock);
	for (int i = 0; fd >= 0 && i < KEYS; i++) {
		uint8_t t = i % 2 ? KD_KEY_X25519 : KD_KEY_ED25519;
		struct kd_field f[2] = { { &t, 1 }, { name, 0 } };
		struct kd_reply r;
		uint32_t blen = 0;

		f[1].len = snprintf((char *)name, sizeof(name), "k%d", i);
		if (kd_call(fd, KD_OP_KEYGEN, 2, f, &r) < 0)
			break;
		if (r.status == KD_OK) {
			made++;
			if (t == KD_KEY_X25519 && r.nf == 1 && r.f[0].len == 32) {
				crypto_box_seal(box, msg, sizeof(msg), r.f[0].p);
				blen = sizeof(box);
			}
		}
		kd_reply_free(&r);
		f[0] = f[1];
		f[1] = (struct kd_field){ t == KD_KEY_ED25519 ? msg : box,
					  t == KD_KEY_ED25519 ? sizeof(msg) : blen };
		if (request(fd, t == KD_KEY_ED25519 ? KD_OP_SIGN : KD_OP_OPEN, 2, f) == KD_OK &&
		    (t == KD_KEY_ED25519 || request(fd, KD_OP_SEAL, 2, f) == KD_OK))
			used++;
		if (i == 0)
			first = vmlck_kb(pid);
	}
	last = vmlck_kb(pid);
	if (fd >= 0)
		close(fd);
	stop(pid);
	tap_check(made == KEYS && used == KEYS,
		  "%d keys made and %d used, strict, under that limit", made, used);
	tap_check(
		first > 0 && last == first && last <= (long)need_kb(SMALL),
		"VmLck with 1 key %ld kB, with %d keys %ld kB: a sealed key charges nothing (limit %lu kB)",
		first, KEYS, last, need_kb(SMALL));
	if (made != KEYS || used != KEYS)
		show_log();
}

/* The kernel itself refuses a buffer one page larger than the limit. */
static void test_kernel_refuses(void)
{
	static const char *const args[] = { "--allow-unlocked", "--buffer", "4M", NULL };
	static const char *const keygen_only[] = { "keygen", "ed25519", "k1", NULL };
	char out[256];
	pid_t pid;
	int rc;

	rc = start_as_nobody(charge_kb(SMALL) - page_kb, args, &pid);
	if (rc == 0)
		stop(pid);
	tap_check(rc == 0 && has("UNLOCKED"), "a limit one page below the buffer's length: the kernel refuses "
	       "to lock the 4 MiB buffer though no page of it is used yet (exit %d)", rc);

	rc = start_as_nobody(charge_kb(SMALL) + page_kb, args, &pid);
	if (rc == 0) {
		char env[320];
		const char *const *a = keygen_only;

		snprintf(env, sizeof(env), "SECBUFD_SOCKET=%s", sock);
		putenv(env);
		rc = run_capture("secbufctl", a, out, sizeof(out));
		stop(pid);
		unsetenv("SECBUFD_SOCKET");
	}
	tap_check(rc == 0 && has("memory locked with") && has("key k1 is UNLOCKED"),
	       "a limit of exactly the buffer and the key page: buffer locked, a key beyond it logged as UNLOCKED "
	       "(--allow-unlocked)");
	show_log();
}

int main(int argc, char **argv)
{
	char *base;

	if (argc != 2 || sodium_init() < 0) {
		fprintf(stderr, "usage: test-budget BINDIR\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	bindir = argv[1];
	page_kb = sysconf(_SC_PAGESIZE) >> 10;
	if (geteuid() != 0) {
		tap_skip("not root", "secbufd's locking policy as uid 65534 under chosen RLIMIT_MEMLOCKs");
		return tap_done();
	}
	base = test_dir();
	if (!base) {
		perror("test-budget: mkdtemp");
		return 2;
	}
	/* The daemon runs as nobody: its socket directory must be nobody's. */
	snprintf(dir, sizeof(dir), "%s/nobody", base);
	if (mkdir(dir, 0755) < 0 || chown(dir, NOBODY, NOBODY) < 0) {
		perror("test-budget: socket directory");
		return 2;
	}
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	snprintf(log_path, sizeof(log_path), "%s/secbufd.log", base);
	test_refusals();
	test_allow_unlocked();
	test_whole_length();
	test_sealed_keys();
	test_kernel_refuses();
	snprintf(text, sizeof(text), "rm -rf '%s'", base);
	if (system(text) != 0)
		printf("# could not remove %s\n", base);
	return tap_done();
}
