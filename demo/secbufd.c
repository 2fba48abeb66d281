/*
 * secbufd - a key daemon whose keys and message buffer live in secbuf
 * memory.  This file: options, the memory-locking policy, and startup.
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
#include "keystore.h"
#include "secbuf.h"
#include "server.h"

#define DEFAULT_SOCKET	"/run/secbufd.sock"
#define DEFAULT_BUFFER	(64UL << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: secbufd [-s SOCKET] [--mode OCTAL] [--buffer SIZE] [--strict] [-v]\n"
		"  -s, --socket PATH  Unix socket (default $SECBUFD_SOCKET or " DEFAULT_SOCKET ")\n"
		"      --mode OCTAL   socket file mode (default 0600; peers are checked by uid anyway)\n"
		"      --buffer SIZE  working buffer for messages, e.g. 64M (default); the largest\n"
		"                     request is half of it, so that a request and its reply both fit\n"
		"      --strict       refuse to start unless all secret memory can be locked\n"
		"  -v, --verbose      log one line per request (operation and size, never key bytes)\n");
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

/* Say exactly why memory could not be locked and what fixes it. */
static void explain_lock_failure(size_t need, int err)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		fprintf(stderr,
			"secbufd: cannot lock the %zu kB working buffer (%s): RLIMIT_MEMLOCK is %llu kB.\n"
			"secbufd: raise RLIMIT_MEMLOCK (ulimit -l, LimitMEMLOCK= in systemd), shrink --buffer,\n"
			"secbufd: or drop --strict to run with unlocked (swappable) secrets.\n",
			need >> 10, strerror(err), (unsigned long long)rl.rlim_cur >> 10);
	else
		fprintf(stderr, "secbufd: cannot lock the %zu kB working buffer: %s (RLIMIT_MEMLOCK is unlimited)\n",
			need >> 10, strerror(err));
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'm' },
		{ "buffer", required_argument, NULL, 'b' },
		{ "strict", no_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *env = getenv("SECBUFD_SOCKET");
	struct server_config cfg = { .path = env && *env ? env : DEFAULT_SOCKET, .mode = 0600 };
	static struct arena ar;
	static struct keystore ks;
	struct secbuf_stat st;
	const struct rlimit nocore = { 0, 0 };
	size_t bufsize = DEFAULT_BUFFER;
	int strict = 0, method, opt;
	char *end;

	while ((opt = getopt_long(argc, argv, "s:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 's': cfg.path = optarg; break;
		case 'm':
			cfg.mode = strtoul(optarg, &end, 8);
			if (*end || cfg.mode & ~0777u) {
				fprintf(stderr, "secbufd: bad --mode %s\n", optarg);
				return 2;
			}
			break;
		case 'b':
			if (parse_size(optarg, &bufsize) < 0 || bufsize < 4096) {
				fprintf(stderr, "secbufd: bad --buffer %s (at least 4K)\n", optarg);
				return 2;
			}
			break;
		case 'S': strict = 1; break;
		case 'v': cfg.verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	cfg.max_body = bufsize / 2;

	if (sodium_init() < 0) {
		fprintf(stderr, "secbufd: sodium_init failed\n");
		return 1;
	}
	/* Secrets are excluded from dumps already; no core file at all is simpler to audit. */
	setrlimit(RLIMIT_CORE, &nocore);

	method = secbuf_lock_method();
	if (method < 0) {
		fprintf(stderr, "secbufd: SECBUF_LOCK: %s\n", strerror(errno));
		return 1;
	}
	if (strict && method == SECBUF_LOCK_NONE) {
		fprintf(stderr, "secbufd: --strict: no way to lock memory (lock method \"none\"); "
			"unset SECBUF_LOCK=none or drop --strict\n");
		return 1;
	}
	if (arena_init(&ar, bufsize, strict ? 0 : SECBUF_BEST_EFFORT) < 0) {
		if (errno == EAGAIN || errno == EPERM || errno == ENOMEM)
			explain_lock_failure(bufsize, errno);
		else
			fprintf(stderr, "secbufd: working buffer: %s\n", strerror(errno));
		return 1;
	}
	if (secbuf_stat(ar.base, &st) == 0 && st.lock_method == SECBUF_LOCK_NONE)
		fprintf(stderr, "secbufd: WARNING: memory locking refused (see RLIMIT_MEMLOCK): "
			"secrets may be swapped; use --strict to refuse instead\n");
	ks_init(&ks, strict ? 0 : SECBUF_BEST_EFFORT);
	fprintf(stderr, "secbufd: lock method %s, working buffer %zu kB (locked as touched)\n",
		secbuf_lock_method_name(st.lock_method), bufsize >> 10);

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
