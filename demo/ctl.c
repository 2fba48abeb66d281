/*
 * secbufctl - command-line client of secbufd.
 * Exit status: 0 success, 1 the daemon refused (bad signature, no such key,
 * ...), 2 usage, 3 no daemon, I/O or protocol error.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "client.h"
#include "secbuf.h"

#define EXIT_REFUSED	1
#define EXIT_USAGE	2
#define EXIT_IO		3
#define DEFAULT_SOCKET	"/run/secbufd.sock"

static const char *prog = "secbufctl";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: secbufctl [-s SOCKET] COMMAND [ARGS]\n"
		"  keygen ed25519|x25519 NAME   new key; prints its public key\n"
		"  import ed25519|x25519 NAME   secret (64 hex digits: Ed25519 seed or X25519 key) on stdin\n"
		"  pubkey NAME                  print the key's type and public key\n"
		"  sign NAME FILE [SIGFILE]     write the signature to SIGFILE, or as hex to stdout\n"
		"  verify NAME FILE SIGFILE     exit 0 if SIGFILE (raw or hex) signs FILE, else 1\n"
		"  seal NAME FILE OUT           encrypt FILE to the X25519 key NAME (crypto_box_seal)\n"
		"  open NAME FILE OUT           decrypt a sealed FILE into OUT ('-' for stdout)\n"
		"  list                         list keys\n"
		"  delete NAME                  wipe and forget a key\n"
		"  stats                        lock method and locked/resident pages per buffer\n"
		"SOCKET defaults to $SECBUFD_SOCKET or " DEFAULT_SOCKET ".\n"
		"Exit status: 0 ok, 1 refused by the daemon, 2 usage, 3 I/O or connection error.\n");
}

static int io_error(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	return EXIT_IO;
}

static int refused(const struct sb_reply *r)
{
	fprintf(stderr, "%s: %s: %s\n", prog, sb_status_name(r->status), (const char *)r->f[0].p);
	return EXIT_REFUSED;
}

static struct sb_field field(const void *p, size_t len)
{
	return (struct sb_field){ .p = p, .len = len };
}

static struct sb_field str(const char *s)
{
	return field(s, strlen(s));
}

static void print_hex(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		printf("%02x", p[i]);
	putchar('\n');
}

static int write_out(const char *path, const uint8_t *p, size_t len)
{
	int fd = strcmp(path, "-") ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : 1;

	if (fd < 0 || sb_write_full(fd, p, len) < 0 || (fd != 1 && close(fd) < 0)) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Send op with fields name and the whole of path, read straight into the frame. */
static int call_with_file(int fd, uint8_t op, const char *name, const char *path,
			  const struct sb_field *extra, struct sb_reply *r)
{
	uint32_t lens[3] = { strlen(name), 0, extra ? extra->len : 0 };
	uint8_t *ptrs[3], *frame;
	struct stat st;
	int in = open(path, O_RDONLY | O_CLOEXEC);

	if (in < 0 || fstat(in, &st) < 0)
		return io_error(path);
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > SB_REPLY_MAX) {
		fprintf(stderr, "%s: %s: not a regular file of at most %u bytes\n", prog, path, SB_REPLY_MAX);
		close(in);
		return EXIT_USAGE;
	}
	lens[1] = st.st_size;
	frame = sb_frame_new(op, extra ? 3 : 2, lens, ptrs);
	if (!frame) {
		close(in);
		return io_error("secure buffer for the request");
	}
	memcpy(ptrs[0], name, lens[0]);
	if (extra)
		memcpy(ptrs[2], extra->p, extra->len);
	if (sb_read_full(in, ptrs[1], lens[1]) < 0) {
		secbuf_free(frame);
		close(in);
		return io_error(path);
	}
	close(in);
	if (sb_request(fd, frame, r) < 0)
		return io_error("secbufd");
	return 0;
}

/* The secret for import, hex on stdin, decoded into secure memory. */
static int read_secret(uint8_t *secret)
{
	const size_t max = 256;
	char *hex = secbuf_alloc_flags(max, SECBUF_BEST_EFFORT);
	size_t got = 0, binlen = 0;
	ssize_t n;
	int rc = -1;

	if (!hex)
		return -1;
	while (got < max - 1 && (n = read(0, hex + got, max - 1 - got)) > 0)
		got += n;
	if (sodium_hex2bin(secret, 32, hex, got, " \t\r\n", &binlen, NULL) == 0 && binlen == 32)
		rc = 0;
	secbuf_free(hex);
	if (rc < 0)
		fprintf(stderr, "%s: import: expected 64 hex digits on stdin\n", prog);
	return rc;
}

static int read_signature(const char *path, uint8_t *sig)
{
	uint8_t buf[2 * SB_SIG_BYTES + 2];
	size_t binlen = 0;
	int in = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = in < 0 ? -1 : read(in, buf, sizeof(buf));

	if (in >= 0)
		close(in);
	if (n == SB_SIG_BYTES) {
		memcpy(sig, buf, SB_SIG_BYTES);
		return 0;
	}
	if (n > 0 && sodium_hex2bin(sig, SB_SIG_BYTES, (const char *)buf, n, "\r\n", &binlen, NULL) == 0 &&
	    binlen == SB_SIG_BYTES)
		return 0;
	fprintf(stderr, "%s: %s: %s\n", prog, path, n < 0 ? strerror(errno) :
		"not a signature (64 bytes, or 128 hex digits)");
	return -1;
}

static void print_stats(const struct sb_reply *r)
{
	struct sb_stat_rec rec;

	for (unsigned i = 0; i < r->nf; i++) {
		if (sb_stat_unpack(&r->f[i], &rec) < 0)
			continue;
		if (i == 0)
			printf("# lock method %s, page size %llu\n%-24s %-8s %12s %9s %9s\n",
			       secbuf_lock_method_name(rec.lock_method), (unsigned long long)rec.page_size,
			       "name", "type", "capacity_kB", "resident", "locked");
		printf("%-24s %-8s %12llu %9llu %9llu\n", rec.name, rec.type ? sb_keytype_name(rec.type) : "-",
		       (unsigned long long)rec.capacity >> 10, (unsigned long long)rec.resident_pages,
		       (unsigned long long)rec.locked_pages);
	}
}

static int need(int argc, int n)
{
	if (argc == n)
		return 0;
	usage(stderr);
	return EXIT_USAGE;
}

static int run(int fd, int argc, char **argv)
{
	const char *cmd = argv[0];
	struct sb_reply r;
	uint8_t *secret = NULL, sig[SB_SIG_BYTES], type;
	int type_arg, rc = 0;

	memset(&r, 0, sizeof(r));
	if (!strcmp(cmd, "keygen") || !strcmp(cmd, "import")) {
		if ((rc = need(argc, 3)))
			return rc;
		if ((type_arg = sb_keytype_parse(argv[1])) < 0) {
			fprintf(stderr, "%s: key type must be ed25519 or x25519\n", prog);
			return EXIT_USAGE;
		}
		type = type_arg;
		if (cmd[0] == 'k') {
			struct sb_field f[2] = { field(&type, 1), str(argv[2]) };

			rc = sb_call(fd, SB_OP_KEYGEN, 2, f, &r);
		} else {
			secret = secbuf_alloc_flags(32, SECBUF_BEST_EFFORT);
			if (!secret || read_secret(secret) < 0) {
				secbuf_free(secret);
				return secret ? EXIT_USAGE : io_error("secure buffer");
			}
			struct sb_field f[3] = { field(&type, 1), str(argv[2]), field(secret, 32) };

			rc = sb_call(fd, SB_OP_IMPORT, 3, f, &r);
			secbuf_free(secret);
		}
	} else if (!strcmp(cmd, "pubkey") || !strcmp(cmd, "delete")) {
		struct sb_field f = str(argv[1 % argc]);

		if ((rc = need(argc, 2)))
			return rc;
		rc = sb_call(fd, cmd[0] == 'p' ? SB_OP_PUBKEY : SB_OP_DELETE, 1, &f, &r);
	} else if (!strcmp(cmd, "list") || !strcmp(cmd, "stats")) {
		if ((rc = need(argc, 1)))
			return rc;
		rc = sb_call(fd, cmd[0] == 'l' ? SB_OP_LIST : SB_OP_STATS, 0, NULL, &r);
	} else if (!strcmp(cmd, "sign")) {
		if (argc != 3 && (rc = need(argc, 4)))
			return rc;
		rc = call_with_file(fd, SB_OP_SIGN, argv[1], argv[2], NULL, &r);
	} else if (!strcmp(cmd, "verify")) {
		if ((rc = need(argc, 4)))
			return rc;
		if (read_signature(argv[3], sig) < 0)
			return EXIT_USAGE;
		struct sb_field f = field(sig, sizeof(sig));

		rc = call_with_file(fd, SB_OP_VERIFY, argv[1], argv[2], &f, &r);
	} else if (!strcmp(cmd, "seal") || !strcmp(cmd, "open")) {
		if ((rc = need(argc, 4)))
			return rc;
		rc = call_with_file(fd, cmd[0] == 's' ? SB_OP_SEAL : SB_OP_OPEN, argv[1], argv[2], NULL, &r);
	} else {
		fprintf(stderr, "%s: unknown command %s\n", prog, cmd);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (rc < 0)
		return io_error("secbufd");
	if (rc > 0)
		return rc;
	if (r.status != SB_OK) {
		rc = refused(&r);
		sb_reply_free(&r);
		return rc;
	}

	if (!strcmp(cmd, "keygen") || !strcmp(cmd, "import")) {
		print_hex(r.f[0].p, r.f[0].len);
	} else if (!strcmp(cmd, "pubkey")) {
		printf("%s ", sb_keytype_name(r.f[0].p[0]));
		print_hex(r.f[1].p, r.f[1].len);
	} else if (!strcmp(cmd, "list")) {
		for (unsigned i = 0; i < r.nf; i++)
			printf("%-8s %.*s\n", sb_keytype_name(r.f[i].p[0]), (int)r.f[i].len - 1, r.f[i].p + 1);
	} else if (!strcmp(cmd, "stats")) {
		print_stats(&r);
	} else if (!strcmp(cmd, "sign")) {
		if (argc == 4)
			rc = write_out(argv[3], r.f[0].p, r.f[0].len) ? EXIT_IO : 0;
		else
			print_hex(r.f[0].p, r.f[0].len);
	} else if (!strcmp(cmd, "verify")) {
		printf("signature OK\n");
	} else if (!strcmp(cmd, "seal") || !strcmp(cmd, "open")) {
		rc = write_out(argv[3], r.f[0].p, r.f[0].len) ? EXIT_IO : 0;
	}
	sb_reply_free(&r);
	return rc;
}

int main(int argc, char **argv)
{
	const char *env = getenv("SECBUFD_SOCKET");
	const char *path = env && *env ? env : DEFAULT_SOCKET;
	int fd, rc, i = 1;

	if (argc > 2 && !strcmp(argv[1], "-s")) {
		path = argv[2];
		i = 3;
	}
	if (i >= argc || !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
		usage(i >= argc ? stderr : stdout);
		return i >= argc ? EXIT_USAGE : 0;
	}
	signal(SIGPIPE, SIG_IGN);	/* a vanished daemon is an error return, not a kill */
	if (sodium_init() < 0)
		return EXIT_IO;
	fd = sb_connect(path);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot connect to secbufd at %s: %s\n", prog, path, strerror(errno));
		return EXIT_IO;
	}
	rc = run(fd, argc - i, argv + i);
	close(fd);
	fflush(stdout);
	return rc;
}
