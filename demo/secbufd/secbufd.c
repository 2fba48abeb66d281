/*
 * secbufd - a key daemon whose keys are sealed at rest (libsecbuf-seal)
 * and opened into secbuf memory only while used, and whose message buffer
 * lives in secbuf memory.  This file: options, the memory-locking policy,
 * and startup.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <sodium.h>

#include "arena.h"
#include "budget.h"
#include "keystore.h"
#include "../protocol/protocol.h"
#include "secbuf.h"
#include "server.h"

#define DEFAULT_BUFFER	(64UL << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: secbufd [-s SOCKET] [--mode OCTAL] [--buffer SIZE] [--allow-unlocked]\n"
		"               [--secret-memory=auto|required|off] [-v] [-h] [-V]\n"
		"  -s, --socket PATH     Unix socket (default $SECBUFD_SOCKET or " KD_DEFAULT_SOCKET
		")\n"
		"      --mode OCTAL      socket file mode (default 0600; peers are checked by uid anyway)\n"
		"      --buffer SIZE     working buffer for messages, e.g. 64M (default); the largest\n"
		"                        request is half of it, so that a request and its reply both fit\n"
		"      --allow-unlocked  run even when secrets cannot be locked in memory (they may then\n"
		"                        be swapped out); by default secbufd refuses to start\n"
		"      --secret-memory=WHEN  keys, while open for use, in memfd_secret memory, out of the\n"
		"                        kernel's direct map: auto (default: if the kernel has it),\n"
		"                        required, off (at rest they are sealed either way)\n"
		"  -v, --verbose         log one line per request (operation and size, never key bytes)\n"
		"  -h, --help            this text\n"
		"  -V, --version         print the version\n"
		"SIGTERM, SIGINT, SIGHUP and SIGQUIT wipe every key and the buffer, then exit 0.\n"
		"Exit status: 0 after a clean stop, 1 cannot start (memory cannot be locked, the\n"
		"socket cannot be made, no secret memory when required), 2 usage.\n");
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || v == 0 || v > (~0ULL >> shift))
		return -1;
	*out = (size_t)(v << shift);
	return 0;
}

/*
 * Map the working buffer.  Strict (the default): locked or not at all, and
 * only when the limit also leaves room for every key.  --allow-unlocked:
 * whatever the kernel grants, said plainly.
 */
static int buffer_init(struct arena *ar, size_t bufsize, int allow_unlocked)
{
	struct lock_budget b;
	struct secbuf_stat st;
	int method = secbuf_lock_method();

	if (method < 0) {
		fprintf(stderr, "secbufd: SECBUF_LOCK: %s\n", strerror(errno));
		return -1;
	}
	budget_compute(&b, bufsize);
	if (!allow_unlocked && method == SECBUF_LOCK_NONE) {
		fprintf(stderr, "secbufd: cannot lock memory: lock method \"none\" (SECBUF_LOCK=none); "
			"unset SECBUF_LOCK, or pass --allow-unlocked to run with secrets that may be swapped out\n");
		return -1;
	}
	if (!allow_unlocked && !budget_fits(&b)) {
		budget_explain(&b, "cannot lock the secrets", 1);
		return -1;
	}
	if (arena_init(ar, bufsize, allow_unlocked ? SECBUF_BEST_EFFORT : 0) < 0) {
		if (errno == EOPNOTSUPP)
			fprintf(stderr, "secbufd: cannot lock the working buffer: lock method \"%s\" cannot "
				"lock a buffer on fault; unset SECBUF_LOCK or pass --allow-unlocked\n",
				secbuf_lock_method_name(method));
		else if ((errno == EAGAIN || errno == EPERM || errno == ENOMEM) && !b.unlimited)
			budget_explain(&b, strerror(errno), 1);
		else
			fprintf(stderr, "secbufd: working buffer of %zu kB: %s\n", bufsize >> 10, strerror(errno));
		return -1;
	}
	if (secbuf_stat(ar->base, &st) < 0) {
		fprintf(stderr, "secbufd: secbuf_stat: %s\n", strerror(errno));
		arena_free(ar);
		return -1;
	}
	if (st.lock_method == SECBUF_LOCK_NONE) {
		fprintf(stderr, "secbufd: UNLOCKED: the working buffer (%zu kB) and the keys are not locked "
			"in memory and may be swapped out (--allow-unlocked)\n", bufsize >> 10);
		if (method == SECBUF_LOCK_NONE)
			fprintf(stderr, "secbufd: because SECBUF_LOCK=none\n");
		else if (method == SECBUF_LOCK_MLOCK)
			fprintf(stderr, "secbufd: because SECBUF_LOCK=mlock locks only populated buffers, "
				"not on fault\n");
		else if (!b.unlimited)
			budget_explain(&b, "the kernel refused to lock them", 0);
		return 0;
	}
	fprintf(stderr, "secbufd: memory locked with %s: working buffer %zu kB, %zu kB charged to "
		"RLIMIT_MEMLOCK, pages made resident as they are used\n",
		secbuf_lock_method_name(st.lock_method), bufsize >> 10, b.buffer >> 10);
	if (allow_unlocked && !budget_fits(&b))
		fprintf(stderr,
			"secbufd: RLIMIT_MEMLOCK (%llu kB) has no room for the sealed keys' prekey and "
			"an open key (%zu kB): keys may be UNLOCKED while in use (--allow-unlocked)\n",
			b.limit >> 10, b.keys >> 10);
	return 0;
}

enum { SECRET_OFF, SECRET_AUTO, SECRET_REQUIRED };

/*
 * Which tier holds the keys: SECBUF_SECRET if a key-sized secret buffer
 * can be had (a call that uses the tier and succeeds), else the lock
 * tier; under "required", its lack is an error that names the fix.
 * Returns the flags to add to the keys', or -1.
 */
static int key_tier(int when)
{
	const char *why;
	void *probe;
	int err;

	if (when == SECRET_OFF) {
		fprintf(stderr, "secbufd: keys in locked memory (--secret-memory=off)\n");
		return 0;
	}
	probe = secbuf_alloc_flags(crypto_sign_SECRETKEYBYTES, SECBUF_SECRET);
	if (probe) {
		secbuf_free(probe);
		fprintf(stderr,
			"secbufd: keys in secret memory (memfd_secret): out of the kernel's "
			"direct map, unreadable through /proc/PID/mem\n");
		return SECBUF_SECRET;
	}
	err = errno;
	if (err == ENOSYS)
		why = "this kernel has no secret memory: it needs CONFIG_SECRETMEM and, before "
		      "Linux 6.5, secretmem.enable=1 on its command line";
	else if (err == EPERM)
		why = "memfd_secret was refused: a seccomp filter (SystemCallFilter=memfd_secret)";
	else if (err == EAGAIN)
		why = "RLIMIT_MEMLOCK has no room left: raise LimitMEMLOCK= or ulimit -l";
	else
		why = "memfd_secret failed";
	fprintf(stderr, "secbufd: %s: %s (%s)\n",
		when == SECRET_REQUIRED ? "cannot keep keys in secret memory" :
					  "keys in locked memory, not secret memory",
		why, strerror(err));
	return when == SECRET_REQUIRED ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "socket", required_argument, NULL, 's' },
					      { "mode", required_argument, NULL, 'm' },
					      { "buffer", required_argument, NULL, 'b' },
					      { "allow-unlocked", no_argument, NULL, 'U' },
					      { "strict", no_argument, NULL,
						'S' }, /* the default; kept for scripts */
					      { "secret-memory", required_argument, NULL, 'K' },
					      { "verbose", no_argument, NULL, 'v' },
					      { "version", no_argument, NULL, 'V' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	const char *env = getenv("SECBUFD_SOCKET");
	struct server_config cfg = { .path = env && *env ? env : KD_DEFAULT_SOCKET, .mode = 0600 };
	static struct arena ar;
	static struct keystore ks;
	const struct rlimit nocore = { 0, 0 };
	size_t bufsize = DEFAULT_BUFFER;
	int allow_unlocked = 0, strict = 0, secret = SECRET_AUTO, tier, opt;
	char *end;

	opterr = 0; /* one line of our own, not getopt's and the usage */
	while ((opt = getopt_long(argc, argv, ":s:vVh", opts, NULL)) != -1) {
		switch (opt) {
		case 's': cfg.path = optarg; break;
		case 'm':
			cfg.mode = strtoul(optarg, &end, 8);
			if (*end || cfg.mode & ~0777u) {
				fprintf(stderr, "secbufd: bad --mode %s (octal, at most 0777)\n", optarg);
				return 2;
			}
			break;
		case 'b':
			if (parse_size(optarg, &bufsize) < 0 || bufsize < 4096) {
				fprintf(stderr, "secbufd: bad --buffer %s (a size such as 64M, at least 4K)\n", optarg);
				return 2;
			}
			break;
		case 'U': allow_unlocked = 1; break;
		case 'S': strict = 1; break;
		case 'K':
			if (!strcmp(optarg, "auto"))
				secret = SECRET_AUTO;
			else if (!strcmp(optarg, "required"))
				secret = SECRET_REQUIRED;
			else if (!strcmp(optarg, "off"))
				secret = SECRET_OFF;
			else {
				fprintf(stderr,
					"secbufd: bad --secret-memory %s (auto, required or off)\n",
					optarg);
				return 2;
			}
			break;
		case 'v': cfg.verbose = 1; break;
		case 'V': printf("secbufd (secbuf) %s\n", SECBUF_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		case ':':
			fprintf(stderr, "secbufd: %s needs an argument; try secbufd --help\n",
				argv[optind - 1]);
			return 2;
		default:
			if (optopt)
				fprintf(stderr, "secbufd: unknown option -%c; try secbufd --help\n",
					optopt);
			else
				fprintf(stderr, "secbufd: unknown option %s; try secbufd --help\n",
					argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc || (strict && allow_unlocked)) {
		if (strict && allow_unlocked)
			fprintf(stderr, "secbufd: --strict and --allow-unlocked contradict each other\n");
		usage(stderr);
		return 2;
	}
	cfg.max_body = bufsize / 2;

	if (sodium_init() < 0) {
		fprintf(stderr, "secbufd: sodium_init failed\n");
		return 1;
	}
	/* Secrets are excluded from dumps already; no core file at all is simpler to audit. */
	if (setrlimit(RLIMIT_CORE, &nocore) < 0)
		fprintf(stderr, "secbufd: setrlimit(RLIMIT_CORE): %s\n", strerror(errno));

	if (buffer_init(&ar, bufsize, allow_unlocked) < 0)
		return 1;
	if ((tier = key_tier(secret)) < 0) {
		arena_free(&ar);
		return 1;
	}
	ks_init(&ks, (allow_unlocked ? SECBUF_BEST_EFFORT : 0) | tier);
	fprintf(stderr,
		"secbufd: keys sealed at rest (libsecbuf-seal): ciphertext in ordinary memory, "
		"opened into %s memory only for the operation that uses them\n",
		tier & SECBUF_SECRET ? "secret" : "locked");

	if (server_run(&cfg, &ks, &ar) < 0) {
		ks_wipe(&ks);
		arena_free(&ar);
		return 1;
	}
	/* Test hook: lets a test inspect the process between wipe and unmap. */
	if (getenv("SECBUFD_TEST_STOP_AFTER_WIPE"))
		raise(SIGSTOP);
	ks_free(&ks);
	arena_free(&ar);
	fprintf(stderr, "secbufd: keys wiped, exiting\n");
	return 0;
}
