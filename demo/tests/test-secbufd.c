/*
 * test-secbufd - host tests of secbufd through its socket: round trips,
 * bad input, access control, load, readiness and the wipe on every signal
 * that ends it.
 * usage: test-secbufd BINDIR   (prints TAP)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <grp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "../secbufctl/client.h"
#include "spawn.h"
#include "kfacts.h"
#include "tap.h"

#define NOBODY		65534
#define NCLIENTS	50
#define ROUNDS		20

static char sock[256], errlog[256];

/* 4 MiB: with what the sealed keys need in use 4132 kB of RLIMIT_MEMLOCK, under the usual 8 MiB. */
#define BUFFER		(4 << 20)
static const char *const small[] = { "--buffer", "4M", NULL };

static struct kd_field fld(const void *p, size_t len)
{
	return (struct kd_field){ .p = p, .len = len };
}

static struct kd_field str(const char *s)
{
	return fld(s, strlen(s));
}

/* One request on a fresh connection; the reply status, or -1 on I/O error. */
static int call(uint8_t op, unsigned n, const struct kd_field *f, struct kd_reply *r)
{
	int fd = kd_connect(sock), rc = -1;

	if (fd >= 0 && kd_call(fd, op, n, f, r) == 0)
		rc = r->status;
	if (fd >= 0)
		close(fd);
	return rc;
}

static int call_status(uint8_t op, unsigned n, const struct kd_field *f)
{
	struct kd_reply r;
	int st = call(op, n, f, &r);

	if (st >= 0)
		kd_reply_free(&r);
	return st;
}

/* A request expected to fail: its status, its message copied into msg. */
static int call_error(uint8_t op, unsigned n, const struct kd_field *f, char *msg, size_t size)
{
	struct kd_reply r;
	int st = call(op, n, f, &r);

	snprintf(msg, size, "%s", st > 0 ? (const char *)r.f[0].p : "");
	if (st >= 0)
		kd_reply_free(&r);
	return st;
}

static int keygen(unsigned type, const char *name, uint8_t *pk)
{
	uint8_t t = type;
	struct kd_field f[2] = { fld(&t, 1), str(name) };
	struct kd_reply r;
	int st = call(KD_OP_KEYGEN, 2, f, &r);

	if (st == KD_OK && r.nf == 1 && r.f[0].len == 32)
		memcpy(pk, r.f[0].p, 32);
	else if (st == KD_OK)
		st = -1;
	if (st >= 0)
		kd_reply_free(&r);
	return st;
}

static void test_sign_verify(void)
{
	uint8_t pk[32], msg[1000], sig[64];
	struct kd_field f[3];
	struct kd_reply r;
	int st, got = 0;

	randombytes_buf(msg, sizeof(msg));
	tap_check(keygen(KD_KEY_ED25519, "signer", pk) == KD_OK, "keygen ed25519 returns a public key");
	f[0] = str("signer");
	f[1] = fld(msg, sizeof(msg));
	st = call(KD_OP_SIGN, 2, f, &r);
	if (st == KD_OK && r.nf == 1 && r.f[0].len == 64) {
		memcpy(sig, r.f[0].p, 64);
		got = 1;
	}
	if (st >= 0)
		kd_reply_free(&r);
	tap_check(got, "sign returns a 64-byte signature");
	tap_check(got && crypto_sign_verify_detached(sig, msg, sizeof(msg), pk) == 0,
	       "the signature verifies with libsodium and the returned public key");
	f[2] = fld(sig, 64);
	tap_check(call_status(KD_OP_VERIFY, 3, f) == KD_OK, "verify accepts the signature");
	msg[10] ^= 1;
	tap_check(call_status(KD_OP_VERIFY, 3, f) == KD_E_BADSIG, "verify rejects a changed message");
	msg[10] ^= 1;
	sig[0] ^= 0x80;
	tap_check(call_status(KD_OP_VERIFY, 3, f) == KD_E_BADSIG, "verify rejects a changed signature");
}

static void test_seal_open(void)
{
	size_t len = 1 << 20;
	uint8_t pk[32], *msg = malloc(len), *box = malloc(len + crypto_box_SEALBYTES);
	struct kd_field f[2];
	struct kd_reply r;
	int st, same = 0;

	randombytes_buf(msg, len);
	tap_check(keygen(KD_KEY_X25519, "sealer", pk) == KD_OK, "keygen x25519 returns a public key");
	f[0] = str("sealer");
	f[1] = fld(msg, len);
	st = call(KD_OP_SEAL, 2, f, &r);
	if (st == KD_OK && r.nf == 1 && r.f[0].len == len + crypto_box_SEALBYTES) {
		memcpy(box, r.f[0].p, r.f[0].len);
		same = 1;
	}
	if (st >= 0)
		kd_reply_free(&r);
	tap_check(same, "seal of 1 MiB returns a box of 1 MiB + %d bytes", crypto_box_SEALBYTES);
	f[1] = fld(box, len + crypto_box_SEALBYTES);
	st = call(KD_OP_OPEN, 2, f, &r);
	same = st == KD_OK && r.nf == 1 && r.f[0].len == len && !memcmp(r.f[0].p, msg, len);
	if (st >= 0)
		kd_reply_free(&r);
	tap_check(same, "open returns the original 1 MiB");

	/* A box sealed by libsodium itself opens too: the daemon is interoperable. */
	crypto_box_seal(box, msg, 100, pk);
	f[1] = fld(box, 100 + crypto_box_SEALBYTES);
	st = call(KD_OP_OPEN, 2, f, &r);
	same = st == KD_OK && r.f[0].len == 100 && !memcmp(r.f[0].p, msg, 100);
	if (st >= 0)
		kd_reply_free(&r);
	tap_check(same, "open accepts a box sealed locally with crypto_box_seal");
	box[50] ^= 1;
	tap_check(call_status(KD_OP_OPEN, 2, f) == KD_E_DECRYPT, "open rejects a corrupted box");
	free(msg);
	free(box);
}

static void test_import_and_errors(void)
{
	uint8_t seed[32], pk[32], sk[64], t = KD_KEY_ED25519, bad = 9;
	char msg[KD_ERRMSG_MAX + 1];
	struct kd_field f[3] = { fld(&t, 1), str("imported"), fld(seed, 32) };
	struct kd_reply r;
	int st;

	randombytes_buf(seed, sizeof(seed));
	crypto_sign_seed_keypair(pk, sk, seed);
	st = call(KD_OP_IMPORT, 3, f, &r);
	tap_check(st == KD_OK && r.f[0].len == 32 && !memcmp(r.f[0].p, pk, 32),
	       "import of an Ed25519 seed yields the public key libsodium derives");
	if (st >= 0)
		kd_reply_free(&r);
	tap_check(call_status(KD_OP_IMPORT, 3, f) == KD_E_EXISTS, "a second key of the same name is refused");
	f[2] = fld(seed, 31);
	f[1] = str("short");
	st = call_error(KD_OP_IMPORT, 3, f, msg, sizeof(msg));
	tap_check(st == KD_E_INVAL && strstr(msg, "secret is 31 bytes") && strstr(msg, "exactly 32"),
	       "a 31-byte secret is refused: \"%s\"", msg);
	f[0] = fld(&bad, 1);
	st = call_error(KD_OP_KEYGEN, 2, f, msg, sizeof(msg));
	tap_check(st == KD_E_INVAL && strstr(msg, "unknown key type 9") && strstr(msg, "1 for ed25519") &&
	       strstr(msg, "2 for x25519"), "an unknown key type is refused: \"%s\"", msg);
	f[0] = fld(&t, 1);
	f[1] = str("bad/name");
	st = call_error(KD_OP_KEYGEN, 2, f, msg, sizeof(msg));
	tap_check(st == KD_E_INVAL && strstr(msg, "bad key name") && strstr(msg, "1 to 64 characters of A-Z a-z 0-9 . _ -"),
	       "a key name with '/' is refused: \"%s\"", msg);
	f[0] = str("sealer");
	f[1] = fld(seed, 32);
	st = call_error(KD_OP_SIGN, 2, f, msg, sizeof(msg));
	tap_check(st == KD_E_KEYTYPE && !strcmp(msg, "sign needs an ed25519 key; sealer is an x25519 key"),
	       "signing with an X25519 key is refused: \"%s\"", msg);
	f[0] = str("nosuchkey");
	tap_check(call_status(KD_OP_SIGN, 2, f) == KD_E_NOKEY, "signing with a missing key is refused");
	f[0] = str("imported");
	tap_check(call_status(KD_OP_DELETE, 1, f) == KD_OK && call_status(KD_OP_PUBKEY, 1, f) == KD_E_NOKEY,
	       "delete removes the key");
	st = call(KD_OP_LIST, 0, NULL, &r);
	tap_check(st == KD_OK && r.nf == 2, "list shows the 2 remaining keys (got %u)", st == KD_OK ? r.nf : 0);
	if (st >= 0)
		kd_reply_free(&r);
}

/*
 * Send raw bytes (optionally half-closing), expect an error reply with
 * status want and then the end of the stream.
 */
static int raw_exchange(const void *bytes, size_t len, int half_close, uint8_t want)
{
	struct kd_reply r;
	char c;
	int fd = kd_connect(sock), ok = 0;

	if (fd < 0)
		return 0;
	if (kd_write_full(fd, bytes, len) == 0 && (!half_close || shutdown(fd, SHUT_WR) == 0) &&
	    kd_reply_recv(fd, &r) == 0) {
		ok = r.status == want && r.nf == 1 && r.f[0].len > 0;
		if (!ok)
			printf("# got status %u (%s), wanted %u\n", r.status, kd_status_name(r.status), want);
		kd_reply_free(&r);
		ok = ok && read(fd, &c, 1) == 0;	/* then the daemon closes */
	}
	close(fd);
	return ok;
}

static void test_bad_input(size_t max_body)
{
	uint8_t buf[64];
	struct kd_reply r;

	kd_hdr_pack(buf, KD_OP_LIST, 0);
	buf[0] = 7;
	tap_check(raw_exchange(buf, KD_HDR_SIZE, 0, KD_E_MALFORMED), "wrong protocol version: error reply, then close");
	kd_hdr_pack(buf, 200, 0);
	tap_check(raw_exchange(buf, KD_HDR_SIZE, 0, KD_E_MALFORMED), "unknown operation: error reply, then close");
	/* sign wants 2 fields; this body holds a field claiming 100 bytes but carrying 4. */
	kd_hdr_pack(buf, KD_OP_SIGN, 8);
	kd_put32(buf + 8, 100);
	memcpy(buf + 12, "abcd", 4);
	tap_check(raw_exchange(buf, 16, 0, KD_E_MALFORMED), "field length beyond the body: error reply, then close");
	kd_hdr_pack(buf, KD_OP_SIGN, 5);
	kd_put32(buf + 8, 1);
	buf[12] = 'a';
	tap_check(raw_exchange(buf, 13, 0, KD_E_MALFORMED), "one field where sign needs two: error reply, then close");
	kd_hdr_pack(buf, KD_OP_LIST, max_body + 1);
	tap_check(raw_exchange(buf, KD_HDR_SIZE, 0, KD_E_TOOBIG), "body of limit+1 bytes: too-large reply, then close");
	kd_hdr_pack(buf, KD_OP_SIGN, 0xffffffffu);
	tap_check(raw_exchange(buf, KD_HDR_SIZE, 0, KD_E_TOOBIG), "body of 4 GiB announced: too-large reply, then close");
	kd_hdr_pack(buf, KD_OP_SIGN, 100);
	tap_check(raw_exchange(buf, KD_HDR_SIZE + 10, 1, KD_E_TRUNCATED), "body cut short: truncated reply, then close");
	tap_check(raw_exchange(buf, 3, 1, KD_E_TRUNCATED), "header cut short: truncated reply, then close");
	tap_check(call(KD_OP_STATS, 0, NULL, &r) == KD_OK, "the daemon still serves after all of the above");
	kd_reply_free(&r);
}

/* In a child as uid 65534: connect and report what happened as an exit code. */
static int nobody_connect(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct kd_reply r;
		int fd;

		if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
			_exit(10);
		fd = kd_connect(sock);
		if (fd < 0)
			_exit(errno == EACCES ? 20 : 11);
		if (kd_call(fd, KD_OP_LIST, 0, NULL, &r) < 0)
			_exit(12);
		_exit(r.status == KD_E_DENIED ? 30 : r.status == KD_OK ? 31 : 13);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void test_peercred(const char *dir)
{
	static const char *const wide[] = { "--buffer", "4M", "--mode", "0666", NULL };
	char text[4096];
	pid_t pid;
	int rc;

	if (geteuid() != 0) {
		tap_skip("not root", "uid 65534 cannot connect to the 0600 socket");
		tap_skip("not root", "uid 65534 is refused by SO_PEERCRED");
		tap_skip("not root", "a root daemon's refusal says it serves root only");
		return;
	}
	rc = nobody_connect();
	tap_check(rc == 20, "uid 65534 cannot connect to the 0600 socket (child code %d)", rc);
	snprintf(sock, sizeof(sock), "%s/wide.sock", dir);
	pid = daemon_start(sock, wide, NULL, errlog);
	rc = pid > 0 ? nobody_connect() : -1;
	tap_check(rc == 30, "uid 65534 is refused by SO_PEERCRED on a 0666 socket (child code %d)", rc);
	if (pid > 0)
		daemon_stop(pid);
	read_text(errlog, text, sizeof(text));
	tap_check(strstr(text, "uid 65534 may not use this daemon: it serves root only") && !strstr(text, "neither"),
	       "a root daemon's refusal says it serves root only");
	if (strstr(text, "secbufd: refused")) {
		const char *line = strstr(text, "secbufd: refused");

		printf("# %.*s\n", (int)(strchrnul(line, '\n') - line), line);
	}
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
}

/* NCLIENTS processes connect, wait until all are connected, then sign and verify. */
static void test_load(void)
{
	int ready[2], go[2], ok = 0;
	pid_t pids[NCLIENTS];
	char c;

	if (pipe(ready) < 0 || pipe(go) < 0) {
		tap_check(0, "pipes for the load test");
		return;
	}
	for (int i = 0; i < NCLIENTS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			uint8_t msg[256], sig[64];
			struct kd_field f[3] = { str("signer"), fld(msg, sizeof(msg)), fld(sig, 64) };
			struct kd_reply r;
			int fd = kd_connect(sock);

			close(ready[0]);
			close(go[1]);
			if (write(ready[1], "x", 1) != 1 || fd < 0 || read(go[0], &c, 1) != 0)
				_exit(1);
			/* Many requests on one connection, all clients at once. */
			for (int k = 0; k < ROUNDS; k++) {
				snprintf((char *)msg, sizeof(msg), "client %d round %d", i, k);
				if (kd_call(fd, KD_OP_SIGN, 2, f, &r) < 0 || r.status != KD_OK)
					_exit(2);
				memcpy(sig, r.f[0].p, 64);
				kd_reply_free(&r);
				if (kd_call(fd, KD_OP_VERIFY, 3, f, &r) < 0 || r.status != KD_OK)
					_exit(3);
				kd_reply_free(&r);
			}
			_exit(0);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (int i = 0; i < NCLIENTS && read(ready[0], &c, 1) == 1; i++)
		;
	close(go[1]);	/* all are connected: start */
	for (int i = 0; i < NCLIENTS; i++) {
		int status;

		if (pids[i] > 0 && waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)
			ok++;
	}
	close(ready[0]);
	tap_check(ok == NCLIENTS, "%d concurrent clients x %d sign+verify each: %d succeeded", NCLIENTS, ROUNDS, ok);
}

struct search {
	const uint8_t *needle;
	size_t len;
	uint8_t *buf;	/* CHUNK + len bytes */
	int mem;	/* /proc/PID/mem */
	long hits;
	long exposed; /* of them, in mappings not locked (lo, lf) and DONTDUMP (dd) */
};
enum { CHUNK = 1 << 20 };

/* Count the needle in one mapping, read in chunks. */
static int search_vma(const struct smaps_vma *v, void *arg)
{
	struct search *s = arg;
	size_t keep = 0;

	/* Skip kernel-provided pages and huge reservations (sanitizer shadow). */
	if (!strncmp(v->name, "[vvar", 5) || !strcmp(v->name, "[vsyscall]") ||
	    v->end - v->start > (1UL << 30))
		return 0;
	int protected = (vmflag_has(v, "lo") || vmflag_has(v, "lf")) && vmflag_has(v, "dd");

	/* Chunks overlap by len - 1 bytes so that no match is cut in two. */
	for (unsigned long at = v->start; at < v->end;) {
		size_t want = v->end - at < CHUNK ? v->end - at : CHUNK, n;
		ssize_t got = pread(s->mem, s->buf + keep, want, at);

		if (got <= 0)
			break;
		at += got;
		n = keep + got;
		for (size_t i = 0; i + s->len <= n; i++) {
			if (s->buf[i] == s->needle[0] && !memcmp(s->buf + i, s->needle, s->len)) {
				s->hits++;
				s->exposed += !protected;
			}
		}
		keep = n < s->len - 1 ? n : s->len - 1;
		memmove(s->buf, s->buf + n - keep, keep);
	}
	return 0;
}

/*
 * Hits of needle anywhere in pid's memory (/proc/PID/mem, every mapping);
 * with exposed, those outside locked, DONTDUMP mappings into it.
 */
static long mem_hits_exposed(pid_t pid, const uint8_t *needle, size_t len, long *exposed)
{
	struct search s = { needle, len, malloc(CHUNK + len), -1, 0, 0 };
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	s.mem = open(path, O_RDONLY | O_CLOEXEC);
	if (!s.buf || s.mem < 0 || smaps_each(pid, search_vma, &s) < 0)
		s.hits = -1;
	free(s.buf);
	if (s.mem >= 0)
		close(s.mem);
	if (exposed)
		*exposed = s.hits < 0 ? -1 : s.exposed;
	return s.hits;
}

static long mem_hits(pid_t pid, const uint8_t *needle, size_t len)
{
	return mem_hits_exposed(pid, needle, len, NULL);
}

/* Wait until pid stops (a test hook raised SIGSTOP): 0, or -1 if it ended or 5 s passed. */
static int wait_stopped(pid_t pid)
{
	int status;

	for (int i = 0; i < 500; i++) {
		pid_t got = waitpid(pid, &status, WUNTRACED | WNOHANG);

		if (got == pid)
			return WIFSTOPPED(status) ? 0 : -1;
		if (got < 0)
			return -1;
		usleep(10000);
	}
	return -1;
}

/*
 * On a new connection, ask for an operation that opens key name: a sign
 * for an Ed25519 key, the open of a box sealed to pk for an X25519 one.
 * The connection, or -1.
 */
static int send_use(const char *name, unsigned type, const uint8_t *pk)
{
	static const uint8_t msg[] = "a message";
	uint8_t box[sizeof(msg) + crypto_box_SEALBYTES], *frame, *p[2];
	const uint8_t *in = msg;
	uint32_t lens[2] = { strlen(name), sizeof(msg) };
	int fd = kd_connect(sock);

	if (type == KD_KEY_X25519) {
		crypto_box_seal(box, msg, sizeof(msg), pk);
		in = box;
		lens[1] = sizeof(box);
	}
	frame = fd >= 0 ?
			kd_frame_new(type == KD_KEY_ED25519 ? KD_OP_SIGN : KD_OP_OPEN, 2, lens, p) :
			NULL;
	if (!frame || (memcpy(p[0], name, lens[0]), memcpy(p[1], in, lens[1]),
		       kd_frame_send(fd, frame) < 0)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * The copies of needle (32 bytes) in pid's memory while its key name is
 * open: the daemon runs with SECBUFD_TEST_STOP_IN_USE, stops inside the
 * operation, is searched, continued, and must then answer KD_OK.  -1 on
 * any failure; *exposed as mem_hits_exposed().
 */
static long hits_in_use(pid_t pid, const char *name, unsigned type, const uint8_t *pk,
			const uint8_t *needle, long *exposed)
{
	struct kd_reply r;
	long hits = -1;
	int fd = send_use(name, type, pk);

	if (fd < 0)
		return -1;
	if (wait_stopped(pid) == 0) {
		hits = mem_hits_exposed(pid, needle, 32, exposed);
		kill(pid, SIGCONT);
		if (kd_reply_recv(fd, &r) == 0) {
			if (r.status != KD_OK)
				hits = -1;
			kd_reply_free(&r);
		} else {
			hits = -1;
		}
	}
	close(fd);
	return hits;
}

/* Import a secret of type under name; the public key into pk.  KD_OK or the status. */
static int import_key(unsigned type, const char *name, const uint8_t *secret, uint8_t *pk)
{
	uint8_t t = type;
	struct kd_field f[3] = { fld(&t, 1), str(name), fld(secret, 32) };
	struct kd_reply r;
	int st = call(KD_OP_IMPORT, 3, f, &r);

	if (st == KD_OK && r.nf == 1 && r.f[0].len == 32)
		memcpy(pk, r.f[0].p, 32);
	else if (st == KD_OK)
		st = -1;
	if (st >= 0)
		kd_reply_free(&r);
	return st;
}

/* secbuf-audit --secret-file on pid for the 32 bytes of secret: its exit status, its verdict line in verdict. */
static int audit_secret(const char *dir, pid_t pid, const uint8_t *secret, char *verdict,
			size_t size)
{
	char path[300], pidarg[32], out[8192];
	const char *args[] = { "--secret-file", path, pidarg, NULL };
	const char *line;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/secret.bin", dir);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, secret, 32) != 32) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	rc = run_capture("secbuf-audit", args, out, sizeof(out));
	unlink(path);
	line = strstr(out, "summary: ");
	snprintf(verdict, size, "%.*s", line ? (int)strcspn(line, "\n") : 0, line ? line : "");
	return rc;
}

/* One datagram from the notify socket within 5 s, NUL-terminated; "" if none. */
static const char *notify_recv(int fd, char *buf, size_t size)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n = poll(&p, 1, 5000) == 1 ? recv(fd, buf, size - 1, 0) : -1;

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Type=notify: READY=1 once the socket accepts connections, STOPPING=1 at the end. */
static void test_notify(const char *dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char env[300], msg[256];
	const char *const envs[] = { env, NULL };
	int nfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), fd = -1, ready = 0;
	pid_t pid;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", dir);
	snprintf(env, sizeof(env), "NOTIFY_SOCKET=%s", sa.sun_path);
	snprintf(sock, sizeof(sock), "%s/notified.sock", dir);
	if (nfd < 0 || bind(nfd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		tap_check(0, "a notify socket for the readiness test: %s", strerror(errno));
		return;
	}
	pid = daemon_spawn(sock, small, envs, errlog, NULL);
	ready = !strcmp(notify_recv(nfd, msg, sizeof(msg)), "READY=1");
	if (ready)
		fd = kd_connect(sock);
	tap_check(ready && fd >= 0, "with $NOTIFY_SOCKET the daemon sends READY=1 when its socket accepts (got \"%s\")",
	       msg);
	if (fd >= 0)
		close(fd);
	if (pid > 0)
		kill(pid, SIGTERM);
	tap_check(!strcmp(notify_recv(nfd, msg, sizeof(msg)), "STOPPING=1"), "and STOPPING=1 on SIGTERM (got \"%s\")",
	       msg);
	if (pid > 0 && wait_exit(pid, 5000) == -1)
		daemon_stop(pid);
	close(nfd);
}

/*
 * sig, arriving while a key is open for an operation: the operation ends
 * (its plaintext wiped), then every key is wiped (none left anywhere in
 * memory), the socket removed, and the daemon exits 0.  At rest the keys
 * are sealed (test_sealed_at_rest): the copies before the signal are
 * counted while each key is open.
 */
static void test_signal_wipe(const char *dir, int sig)
{
	static const char *const env[] = { "SECBUFD_TEST_STOP_AFTER_WIPE=1",
					   "SECBUFD_TEST_STOP_IN_USE=1", NULL };
	/* Keys a reader can see while open (secret memory it cannot). */
	static const char *const readable[] = { "--buffer", "4M", "--secret-memory=off", NULL };
	uint8_t seed[32], x[32], pk[32], xpk[32];
	const char *name = sigabbrev_np(sig);
	long before = -1, after, xbefore, xafter;
	int status, fd = -1;
	pid_t pid;

	snprintf(sock, sizeof(sock), "%s/sig%s.sock", dir, name);
	pid = daemon_start(sock, readable, env, errlog);
	randombytes_buf(seed, sizeof(seed));
	randombytes_buf(x, sizeof(x));
	if (pid < 0 || import_key(KD_KEY_ED25519, "doomed", seed, pk) != KD_OK ||
	    import_key(KD_KEY_X25519, "doomed-x", x, xpk) != KD_OK) {
		tap_check(0, "daemon with two imported keys for the SIG%s test", name);
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return;
	}
	xbefore = hits_in_use(pid, "doomed-x", KD_KEY_X25519, xpk, x, NULL);
	/* The signal comes while the Ed25519 key is open for a sign. */
	fd = send_use("doomed", KD_KEY_ED25519, NULL);
	if (fd >= 0 && wait_stopped(pid) == 0) {
		before = mem_hits(pid, seed, 32);
		kill(pid, sig);
		kill(pid, SIGCONT);
	}
	tap_check(before >= 1 && xbefore >= 1,
		  "before SIG%s the key bytes are in the daemon's memory while "
		  "each is open for use (%ld and %ld copies)",
		  name, before, xbefore);
	if (before < 0 || waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status)) {
		tap_check(0, "SIG%s: the daemon wipes, then stops (test hook), status 0x%x", name, status);
		if (fd >= 0)
			close(fd);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	after = mem_hits(pid, seed, 32);
	xafter = mem_hits(pid, x, 32);
	tap_check(after == 0 && xafter == 0,
		  "after the SIG%s wipe, which came during a sign, no copy is left "
		  "anywhere in its memory (%ld and %ld copies)",
		  name, after, xafter);
	kill(pid, SIGCONT);
	status = wait_exit(pid, 5000);
	close(fd);
	tap_check(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "SIG%s: the daemon then exits 0 "
	       "(status 0x%x)", name, status);
	tap_check(access(sock, F_OK) < 0 && errno == ENOENT, "SIG%s: the socket file is removed", name);
}

/*
 * Sealed at rest: an idle daemon's keys are in no byte of its memory
 * (root reads it all through /proc/PID/mem, and secbuf-audit --secret-file
 * says NOT FOUND), each is in locked, non-dumpable memory only while an
 * operation has it open (the control: the same reader finds it then), and
 * gone again once the operation is done.  --secret-memory=off, so that an
 * open key is readable at all.
 */
static void test_sealed_at_rest(const char *dir)
{
	static const char *const env[] = { "SECBUFD_TEST_STOP_IN_USE=1", NULL };
	static const char *const readable[] = { "--buffer", "4M", "--secret-memory=off", NULL };
	uint8_t seed[32], x[32], pk[32], xpk[32];
	long idle, xidle, used, xused, exposed = -1, xexposed = -1;
	char verdict[512], log[4096];
	int rc;
	pid_t pid;

	snprintf(sock, sizeof(sock), "%s/rest.sock", dir);
	pid = daemon_start(sock, readable, env, errlog);
	randombytes_buf(seed, sizeof(seed));
	randombytes_buf(x, sizeof(x));
	if (pid < 0 || import_key(KD_KEY_ED25519, "rest", seed, pk) != KD_OK ||
	    import_key(KD_KEY_X25519, "rest-x", x, xpk) != KD_OK) {
		tap_check(0, "a daemon with two imported keys for the sealed-at-rest test");
		if (pid > 0)
			daemon_stop(pid);
		return;
	}
	read_text(errlog, log, sizeof(log));
	tap_check(strstr(log, "keys sealed at rest (libsecbuf-seal)") != NULL,
		  "its startup says the keys are sealed at rest");
	idle = mem_hits(pid, seed, 32);
	xidle = mem_hits(pid, x, 32);
	tap_check(idle == 0 && xidle == 0,
		  "idle, neither key is anywhere in the daemon's memory: sealed at rest "
		  "(%ld and %ld copies; root reads it all through /proc/PID/mem)",
		  idle, xidle);
	rc = audit_secret(dir, pid, seed, verdict, sizeof(verdict));
	tap_check(rc == 0 && strstr(verdict, "NOT FOUND"),
		  "secbuf-audit --secret-file agrees: \"%s\" (exit %d)", verdict, rc);
	used = hits_in_use(pid, "rest", KD_KEY_ED25519, NULL, seed, &exposed);
	xused = hits_in_use(pid, "rest-x", KD_KEY_X25519, xpk, x, &xexposed);
	tap_check(
		used >= 1 && xused >= 1 && exposed == 0 && xexposed == 0,
		"the control: while a sign or an open has it, each key is found, in locked, non-dumpable "
		"memory only (%ld and %ld copies, %ld and %ld outside it)",
		used, xused, exposed, xexposed);
	idle = mem_hits(pid, seed, 32);
	xidle = mem_hits(pid, x, 32);
	tap_check(idle == 0 && xidle == 0,
		  "once the operations are done, no copy is left: wiped (%ld and %ld copies)", idle,
		  xidle);
	tap_check(call_status(KD_OP_LIST, 0, NULL) == KD_OK, "the daemon still serves");
	daemon_stop(pid);
}

/*
 * Import a fresh seed into a daemon started with args (as, unless NULL):
 * the copies of it a root reader finds through /proc/PID/mem while a
 * sign has the key open, or -1 if the daemon did not start, import or
 * sign; in *idle, those it finds before (sealed at rest: none).  Its log
 * in log.
 */
static long imported_copies(const char *dir, const char *const *args, const struct run_as *as,
			    long *idle, char *log, size_t size)
{
	static const char *const env[] = { "SECBUFD_TEST_STOP_IN_USE=1", NULL };
	uint8_t seed[32], pk[32];
	long hits = -1;
	int status;
	pid_t pid;

	*idle = -1;
	snprintf(sock, sizeof(sock), "%s/tier.sock", dir);
	randombytes_buf(seed, sizeof(seed));
	pid = daemon_spawn(sock, args, env, errlog, as);
	if (daemon_ready(pid, sock, &status) == 0 &&
	    import_key(KD_KEY_ED25519, "tier", seed, pk) == KD_OK) {
		*idle = mem_hits(pid, seed, 32);
		hits = hits_in_use(pid, "tier", KD_KEY_ED25519, NULL, seed, NULL);
	}
	if (pid > 0 && waitpid(pid, &status, WNOHANG) == 0)
		daemon_stop(pid);
	read_text(errlog, log, size);
	return hits;
}

/*
 * --secret-memory: where a key is while an operation has it open (at
 * rest it is sealed either way, and root reads no copy of it).  auto puts
 * it where root's /proc/PID/mem cannot read it, off in locked memory (the
 * negative control, same reader), required refuses to start without
 * secret memory and names the boot parameter; auto without it says so and
 * runs.
 */
static void test_secret_memory(const char *dir)
{
	static const char *const off[] = { "--buffer", "4M", "--secret-memory=off", NULL };
	static const char *const required[] = { "--buffer", "4M", "--secret-memory=required",
						NULL };
	static const char *const bad[] = { "--buffer", "4M", "--secret-memory=yes", NULL };
	struct run_as without = { 0, 0, 1 };
	int status;
	struct rlimit rl;
	char log[2048];
	long hits, idle;
	pid_t pid;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
		without.memlock = rl.rlim_max; /* as it is: raising it needs CAP_SYS_RESOURCE */

	hits = imported_copies(dir, off, NULL, &idle, log, sizeof(log));
	tap_check(
		hits >= 1 && idle == 0 &&
			strstr(log, "keys in locked memory (--secret-memory=off)"),
		"--secret-memory=off: the control, root reads the imported key while it signs (%ld copies; "
		"%ld at rest)",
		hits, idle);
	if (!secretmem_works()) {
		tap_skip("memfd_secret fails here",
			 "--secret-memory=auto: no copy of the key readable");
	} else {
		hits = imported_copies(dir, small, NULL, &idle, log, sizeof(log));
		tap_check(
			hits == 0 && idle == 0 &&
				strstr(log, "keys in secret memory (memfd_secret)"),
			"--secret-memory=auto (the default): root reads no copy of the imported key, "
			"even while it signs (%ld copies; %ld at rest)",
			hits, idle);
		hits = imported_copies(dir, required, NULL, &idle, log, sizeof(log));
		tap_check(hits == 0 && idle == 0,
			  "--secret-memory=required: the same (%ld copies; %ld at rest)", hits,
			  idle);
	}
	hits = imported_copies(dir, small, &without, &idle, log, sizeof(log));
	tap_check(
		hits >= 1 && idle == 0 && strstr(log, "keys in locked memory, not secret memory") &&
			strstr(log, "secretmem.enable=1"),
		"auto without memfd_secret (seccomp ENOSYS): runs, keys open in locked memory (%ld copies; "
		"%ld at rest), and says why",
		hits, idle);
	snprintf(sock, sizeof(sock), "%s/required.sock", dir);
	pid = daemon_spawn(sock, required, NULL, errlog, &without);
	status = wait_exit(pid, 5000);
	read_text(errlog, log, sizeof(log));
	tap_check(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
			  strstr(log, "cannot keep keys in secret memory") &&
			  strstr(log, "secretmem.enable=1"),
		  "required without memfd_secret: exits 1 naming secretmem.enable=1 (status 0x%x)",
		  status);
	if (status == -1)
		daemon_stop(pid);
	pid = daemon_spawn(sock, bad, NULL, errlog, NULL);
	status = wait_exit(pid, 5000);
	read_text(errlog, log, sizeof(log));
	tap_check(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 2 &&
			  strstr(log, "bad --secret-memory yes"),
		  "--secret-memory=yes: exits 2, a usage error (status 0x%x)", status);
	if (status == -1)
		daemon_stop(pid);
}

/* The other catchable ways to end it wipe and exit 0 too. */
static void test_signals(const char *dir)
{
	static const int sigs[] = { SIGINT, SIGQUIT };

	test_signal_wipe(dir, SIGTERM);
	test_signal_wipe(dir, SIGHUP);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		pid_t pid;
		int status = -1;

		snprintf(sock, sizeof(sock), "%s/end.sock", dir);
		pid = daemon_start(sock, small, NULL, errlog);
		if (pid > 0) {
			kill(pid, sigs[i]);
			status = wait_exit(pid, 5000);
			if (status == -1)
				daemon_stop(pid);
		}
		tap_check(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && access(sock, F_OK) < 0,
		       "SIG%s: exits 0 and removes the socket (status 0x%x)", sigabbrev_np(sigs[i]), status);
	}
}

int main(int argc, char **argv)
{
	const size_t max_body = BUFFER / 2;
	const char *dir;
	pid_t pid;

	if (argc != 2 || sodium_init() < 0) {
		fprintf(stderr, "usage: test-secbufd BINDIR\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	bindir = argv[1];
	dir = test_dir();
	if (!dir) {
		perror("test-secbufd: mkdtemp");
		return 2;
	}
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	snprintf(errlog, sizeof(errlog), "%s/secbufd.log", dir);
	pid = daemon_start(sock, small, NULL, errlog);
	if (!tap_check(pid > 0, "secbufd starts and answers on %s", sock))
		return tap_done();
	test_sign_verify();
	test_seal_open();
	test_import_and_errors();
	test_bad_input(max_body);
	test_peercred(dir);
	test_load();
	{
		int status = daemon_stop(pid);

		tap_check(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "SIGTERM: the daemon exits 0");
	}
	test_signals(dir);
	test_sealed_at_rest(dir);
	test_secret_memory(dir);
	test_notify(dir);
	snprintf(errlog, sizeof(errlog), "rm -rf '%s'", dir);
	if (system(errlog) != 0)
		printf("# could not remove %s\n", dir);
	return tap_done();
}
