/*
 * secbufctl - command-line client of secbufd.
 * Exit status: 0 success, 1 the daemon refused (bad signature, no such key,
 * ...), 2 usage, 3 no daemon, I/O or protocol error.  Arguments and input
 * are checked before connecting, so that usage errors need no daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "client.h"
#include "reply.h"
#include "secbuf.h"

#define EXIT_REFUSED	1
#define EXIT_USAGE	2
#define EXIT_IO		3
#define STREAM_CHUNK	(64U << 10)	/* first read buffer for a pipe; doubles */

static const char *prog = "secbufctl";

struct command {
	const char *name;
	uint8_t op;
	int min_args, max_args;		/* after the command word */
	const char *args, *what;
};

static const struct command commands[] = {
	{ "keygen", KD_OP_KEYGEN, 2, 2, "ed25519|x25519 NAME", "new key; prints its public key" },
	{ "import", KD_OP_IMPORT, 2, 2, "ed25519|x25519 NAME",
	  "secret on stdin: 64 hex digits (Ed25519 seed or X25519 key)" },
	{ "pubkey", KD_OP_PUBKEY, 1, 1, "NAME", "print the key's type and public key" },
	{ "sign", KD_OP_SIGN, 2, 3, "NAME FILE [SIGFILE]", "signature to SIGFILE, or as hex to stdout" },
	{ "verify", KD_OP_VERIFY, 3, 3, "NAME FILE SIGFILE", "exit 0 if SIGFILE (raw or hex) signs FILE, else 1" },
	{ "seal", KD_OP_SEAL, 3, 3, "NAME FILE OUT", "encrypt FILE to the X25519 key NAME (crypto_box_seal)" },
	{ "open", KD_OP_OPEN, 3, 3, "NAME FILE OUT", "decrypt a sealed FILE into OUT" },
	{ "list", KD_OP_LIST, 0, 0, "", "list keys" },
	{ "delete", KD_OP_DELETE, 1, 1, "NAME", "wipe and forget a key" },
	{ "stats", KD_OP_STATS, 0, 0, "", "lock method and locked/resident pages per buffer" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: secbufctl [-s SOCKET] COMMAND [ARGS]\n");
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char left[40];

		snprintf(left, sizeof(left), "%s %s", commands[i].name, commands[i].args);
		fprintf(f, "  %-28s %s\n", left, commands[i].what);
	}
	fprintf(f,
		"FILE and SIGFILE may be '-' for stdin (one of them), OUT and SIGFILE '-' for stdout.\n"
		"  -s, --socket PATH  the daemon's socket (default $SECBUFD_SOCKET or " KD_DEFAULT_SOCKET ")\n"
		"  -h, --help         this text;  -V, --version  the version\n"
		"Options may come anywhere; '--' ends them.\n"
		"Exit status: 0 ok, 1 refused by the daemon, 2 usage, 3 I/O or connection error.\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; try %s --help\n", prog);
	return EXIT_USAGE;
}

static int io_error(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	return EXIT_IO;
}

static struct kd_field field(const void *p, size_t len)
{
	return (struct kd_field){ .p = p, .len = len };
}

static int open_input(const char *path)
{
	return strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
}

static int write_out(const char *path, const uint8_t *p, size_t len)
{
	int fd = strcmp(path, "-") ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : 1;

	if (fd == 1)
		fflush(stdout);
	if (fd < 0 || kd_write_full(fd, p, len) < 0 || (fd != 1 && close(fd) < 0)) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * A request frame: name, then the whole of the input (a file, '-' for
 * stdin, or a pipe), then extra if given.  The input is read straight into
 * the frame, which is secure memory: it may be a plaintext.  A regular file
 * gets a frame of its size; a stream one that doubles as it fills (the old
 * copy is wiped).  Returns 0, or an exit status.
 */
static int frame_with_input(uint8_t op, const char *name, const char *path, const struct kd_field *extra,
			    uint8_t **out)
{
	uint32_t lens[3] = { strlen(name), 0, extra ? extra->len : 0 };
	const size_t at = KD_HDR_SIZE + 2 * KD_FIELD_HDR + lens[0];	/* where the input goes */
	const size_t tail = extra ? KD_FIELD_HDR + extra->len : 0;
	uint8_t *ptrs[3], *frame = NULL;
	size_t cap, got = 0;
	struct stat st;
	int fd = open_input(path), rc = EXIT_IO;

	if (fd < 0 || fstat(fd, &st) < 0)
		return io_error(path);
	cap = S_ISREG(st.st_mode) ? (size_t)st.st_size : STREAM_CHUNK;
	/* One byte of room beyond cap tells "exactly cap bytes" from "more". */
	for (;;) {
		ssize_t n;

		if (!frame || got == cap + 1) {
			size_t ncap = !frame ? cap : 2 * cap > STREAM_CHUNK ? 2 * cap : STREAM_CHUNK;
			uint8_t *bigger;

			if (ncap > KD_REPLY_MAX) {
				fprintf(stderr, "%s: %s: larger than %u bytes\n", prog, path, KD_REPLY_MAX);
				rc = EXIT_USAGE;
				goto out;
			}
			bigger = secbuf_alloc_flags(at + ncap + 1 + tail, SECBUF_BEST_EFFORT);
			if (!bigger) {
				io_error("secure buffer for the request");
				goto out;
			}
			if (frame)
				memcpy(bigger + at, frame + at, got);
			secbuf_free(frame);
			frame = bigger;
			cap = ncap;
		}
		n = read(fd, frame + at + got, cap + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			io_error(path);
			goto out;
		}
		if (n == 0)
			break;
		got += n;
	}
	lens[1] = got;
	kd_frame_layout(frame, op, extra ? 3 : 2, lens, ptrs);
	memcpy(ptrs[0], name, lens[0]);
	if (extra)
		memcpy(ptrs[2], extra->p, extra->len);
	*out = frame;
	frame = NULL;
	rc = 0;
out:
	secbuf_free(frame);
	if (fd > 0)
		close(fd);
	return rc;
}

/* The secret for import: 64 hex digits on stdin, decoded into secure memory. */
static int read_secret(uint8_t *secret)
{
	const size_t max = 256;
	char *hex = secbuf_alloc_flags(max, SECBUF_BEST_EFFORT);
	size_t got = 0, binlen = 0;
	ssize_t n;
	int rc = EXIT_USAGE;

	if (!hex)
		return io_error("secure buffer");
	while (got < max - 1 && (n = read(0, hex + got, max - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = io_error("stdin");
			break;
		}
		got += n;
	}
	if (n >= 0 && sodium_hex2bin(secret, KD_SECRET_BYTES, hex, got, " \t\r\n", &binlen, NULL) == 0 &&
	    binlen == KD_SECRET_BYTES)
		rc = 0;
	secbuf_free(hex);
	if (rc == EXIT_USAGE)
		fprintf(stderr, "%s: import: expected %d hex digits (%d bytes) on stdin\n", prog,
			2 * KD_SECRET_BYTES, KD_SECRET_BYTES);
	return rc;
}

/* A signature file: 64 raw bytes or 128 hex digits.  0, or an exit status. */
static int read_signature(const char *path, uint8_t *sig)
{
	uint8_t buf[2 * KD_SIG_BYTES + 3];
	size_t got = 0, binlen = 0;
	int fd = open_input(path);
	ssize_t n = 0;

	if (fd < 0)
		return io_error(path);
	while (got < sizeof(buf) && (n = read(fd, buf + got, sizeof(buf) - got)) != 0) {
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0)
			got += n;
	}
	if (fd > 0)
		close(fd);
	if (n < 0)
		return io_error(path);
	if (got == KD_SIG_BYTES) {
		memcpy(sig, buf, KD_SIG_BYTES);
		return 0;
	}
	if (sodium_hex2bin(sig, KD_SIG_BYTES, (const char *)buf, got, "\r\n", &binlen, NULL) == 0 &&
	    binlen == KD_SIG_BYTES)
		return 0;
	fprintf(stderr, "%s: %s: not a signature (%d bytes, or %d hex digits)\n", prog, path, KD_SIG_BYTES,
		2 * KD_SIG_BYTES);
	return EXIT_USAGE;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* Everything that can be wrong with the arguments, before any I/O. */
static int check_args(const struct command *c, int argc, char **argv)
{
	int name_at = c->op == KD_OP_KEYGEN || c->op == KD_OP_IMPORT ? 1 : 0;

	if (argc < c->min_args || argc > c->max_args)
		return usage_error("%s takes %s", c->name, *c->args ? c->args : "no arguments");
	if (name_at && kd_keytype_parse(argv[0]) < 0)
		return usage_error("unknown key type %s: ed25519 (signing) or x25519 (sealing)", argv[0]);
	if (c->min_args > 0 && !kd_name_valid((const uint8_t *)argv[name_at], strlen(argv[name_at])))
		return usage_error("bad key name %s: names are " KD_NAME_RULE, argv[name_at]);
	if (c->op == KD_OP_VERIFY && !strcmp(argv[1], "-") && !strcmp(argv[2], "-"))
		return usage_error("verify: FILE and SIGFILE cannot both be stdin");
	return 0;
}

/* The request for c, with its input read (stdin, files).  0, or an exit status. */
static int build_request(const struct command *c, char **argv, uint8_t **frame)
{
	uint8_t type, sig[KD_SIG_BYTES], *secret;
	struct kd_field f[3], extra;
	uint32_t lens[3], n = 0;
	uint8_t *ptrs[3];
	int rc;

	switch (c->op) {
	case KD_OP_SIGN:
	case KD_OP_SEAL:
	case KD_OP_OPEN:
		return frame_with_input(c->op, argv[0], argv[1], NULL, frame);
	case KD_OP_VERIFY:
		if ((rc = read_signature(argv[2], sig)))
			return rc;
		extra = field(sig, sizeof(sig));
		return frame_with_input(c->op, argv[0], argv[1], &extra, frame);
	case KD_OP_KEYGEN:
	case KD_OP_IMPORT:
		type = kd_keytype_parse(argv[0]);
		f[n++] = field(&type, 1);
		f[n++] = field(argv[1], strlen(argv[1]));
		break;
	case KD_OP_PUBKEY:
	case KD_OP_DELETE:
		f[n++] = field(argv[0], strlen(argv[0]));
		break;
	}
	for (unsigned i = 0; i < n; i++)
		lens[i] = f[i].len;
	lens[n] = KD_SECRET_BYTES;
	*frame = kd_frame_new(c->op, n + (c->op == KD_OP_IMPORT), lens, ptrs);
	if (!*frame)
		return io_error("secure buffer for the request");
	for (unsigned i = 0; i < n; i++)
		memcpy(ptrs[i], f[i].p, f[i].len);
	if (c->op == KD_OP_IMPORT) {
		secret = ptrs[n];	/* decoded straight into the (secure) frame */
		if ((rc = read_secret(secret))) {
			secbuf_free(*frame);
			*frame = NULL;
			return rc;
		}
	}
	return 0;
}

/* The reply's data to its file (sign with SIGFILE, seal, open), or printed. */
static int output(const struct command *c, int argc, char **argv, const struct kd_reply *r)
{
	if (c->op == KD_OP_SEAL || c->op == KD_OP_OPEN || (c->op == KD_OP_SIGN && argc == 3))
		return write_out(argv[2], r->f[0].p, r->f[0].len) ? EXIT_IO : 0;
	reply_print(c->op, r);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	const char *env = getenv("SECBUFD_SOCKET");
	const char *path = env && *env ? env : KD_DEFAULT_SOCKET;
	const struct command *c;
	struct kd_reply r = { 0 };
	uint8_t *frame = NULL;
	int opt, fd, rc;

	opterr = 0;	/* our own messages */
	while ((opt = getopt_long(argc, argv, ":s:hV", opts, NULL)) != -1) {
		switch (opt) {
		case 's': path = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("secbufctl (secbuf) %s\n", SECBUF_VERSION); return 0;
		case ':': return usage_error("%s needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("unknown option -%c", optopt);
			return usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return usage_error("no command");
	c = find_command(argv[optind]);
	if (!c)
		return usage_error("unknown command %s", argv[optind]);
	argc -= optind + 1;
	argv += optind + 1;
	if ((rc = check_args(c, argc, argv)))
		return rc;

	signal(SIGPIPE, SIG_IGN);	/* a vanished daemon is an error return, not a kill */
	if (sodium_init() < 0)
		return io_error("sodium_init");
	if (c->op == KD_OP_LIST || c->op == KD_OP_STATS)
		frame = kd_frame_new(c->op, 0, NULL, NULL);
	else if ((rc = build_request(c, argv, &frame)))
		return rc;
	if (!frame)
		return io_error("secure buffer for the request");

	fd = kd_connect(path);
	if (fd < 0) {
		/* No socket, or nobody listening on it: the daemon is not there. */
		fprintf(stderr, "%s: cannot connect to secbufd at %s: %s%s\n", prog, path,
			strerror(errno),
			errno == ENOENT || errno == ECONNREFUSED ?
				" (is secbufd running? start it, or give its socket: -s PATH "
				"or SECBUFD_SOCKET)" :
				"");
		secbuf_free(frame);
		return EXIT_IO;
	}
	rc = kd_request(fd, frame, &r);
	close(fd);
	if (rc < 0)
		return io_error("secbufd");
	if (r.status != KD_OK) {
		fprintf(stderr, "%s: %s\n", prog, (const char *)r.f[0].p);
		rc = EXIT_REFUSED;
	} else if (reply_check(c->op, &r) < 0) {
		fprintf(stderr,
			"%s: secbufd's reply to %s is malformed: is it secbufd that listens at %s?\n",
			prog, c->name, path);
		rc = EXIT_IO;
	} else {
		rc = output(c, argc, argv, &r);
	}
	kd_reply_free(&r);
	if (fflush(stdout) != 0 && !rc)
		rc = io_error("stdout");
	return rc;
}
