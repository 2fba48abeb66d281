/*
 * secbufd-load - sign+verify rounds against a running secbufd, on one
 * connection, for a number of seconds: the load bench/secbufd-seal puts
 * on the daemon at two commits.  It speaks the wire format itself (8-byte
 * header: version 1, code, two zero bytes, body length big endian; then
 * fields of a 4-byte big-endian length and their bytes: demo/protocol/),
 * since bench/ uses no part of demo/ (HACKING.md).
 *
 * usage: secbufd-load SOCKET SECONDS [MSGLEN]
 * Prints one line: "rounds=N seconds=S rounds_per_s=R sign_us_med=A verify_us_med=B".
 * Exit 0, or 1 with a message when the daemon refuses or the socket fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* demo/protocol/protocol.h's values. */
enum { VERSION = 1, OP_KEYGEN = 1, OP_SIGN = 4, OP_VERIFY = 5, KEY_ED25519 = 1, STATUS_EXISTS = 6 };
#define SIG_BYTES 64
#define MSG_MAX	  (64 << 10)
#define SAMPLES	  (1 << 20)

static uint8_t frame[MSG_MAX + 256], reply[MSG_MAX + 256];

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int io_full(int fd, void *buf, size_t len, int writing)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = writing ? write(fd, (uint8_t *)buf + done, len - done) :
				      read(fd, (uint8_t *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

/*
 * Send op with n fields, read the reply: its status, its first field in
 * *f (len *flen), or -1 on I/O error.
 */
static int call(int fd, uint8_t op, unsigned n, const void *const *p, const uint32_t *len,
		const uint8_t **f, uint32_t *flen)
{
	size_t at = 8;
	uint32_t body;

	for (unsigned i = 0; i < n; i++) {
		put32(frame + at, len[i]);
		memcpy(frame + at + 4, p[i], len[i]);
		at += 4 + len[i];
	}
	frame[0] = VERSION;
	frame[1] = op;
	frame[2] = frame[3] = 0;
	put32(frame + 4, at - 8);
	if (io_full(fd, frame, at, 1) < 0 || io_full(fd, reply, 8, 0) < 0)
		return -1;
	body = get32(reply + 4);
	if (reply[0] != VERSION || body > sizeof(reply) - 8 || io_full(fd, reply + 8, body, 0) < 0)
		return -1;
	*f = NULL;
	*flen = 0;
	if (body >= 4 && get32(reply + 8) <= body - 4) {
		*f = reply + 12;
		*flen = get32(reply + 8);
	}
	return reply[1];
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static double sign_us[SAMPLES], verify_us[SAMPLES];
	static uint8_t msg[MSG_MAX], sig[SIG_BYTES];
	const uint8_t type = KEY_ED25519, *f;
	char name[32];
	double secs, start, end, t0, t1;
	size_t msglen = argc > 3 ? strtoul(argv[3], NULL, 10) : 256, rounds = 0;
	uint32_t flen;
	int fd, st;

	if (argc < 3 || (secs = atof(argv[2])) <= 0 || msglen > MSG_MAX ||
	    strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: secbufd-load SOCKET SECONDS [MSGLEN (at most %d)]\n",
			MSG_MAX);
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	/* A daemon just started binds before it listens: up to 5 s for it to accept. */
	for (int tries = 0;; tries++) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		if (fd < 0 || (errno != ENOENT && errno != ECONNREFUSED) || tries == 500) {
			fprintf(stderr, "secbufd-load: %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		close(fd);
		usleep(10000);
	}
	for (size_t i = 0; i < msglen; i++)
		msg[i] = (uint8_t)(i * 131);
	snprintf(name, sizeof(name), "load");
	{
		const void *p[2] = { &type, name };
		uint32_t len[2] = { 1, strlen(name) };

		st = call(fd, OP_KEYGEN, 2, p, len, &f, &flen);
		if (st != 0 && st != STATUS_EXISTS) {
			fprintf(stderr, "secbufd-load: keygen: status %d\n", st);
			return 1;
		}
	}
	start = now_us();
	end = start + secs * 1e6;
	do {
		const void *p[3] = { name, msg, sig };
		uint32_t len[3] = { strlen(name), msglen, SIG_BYTES };

		t0 = now_us();
		st = call(fd, OP_SIGN, 2, p, len, &f, &flen);
		if (st != 0 || flen != SIG_BYTES) {
			fprintf(stderr, "secbufd-load: sign: status %d\n", st);
			return 1;
		}
		memcpy(sig, f, SIG_BYTES);
		t1 = now_us();
		st = call(fd, OP_VERIFY, 3, p, len, &f, &flen);
		if (st != 0) {
			fprintf(stderr, "secbufd-load: verify: status %d\n", st);
			return 1;
		}
		if (rounds < SAMPLES) {
			sign_us[rounds] = t1 - t0;
			verify_us[rounds] = now_us() - t1;
		}
		rounds++;
	} while ((t1 = now_us()) < end);
	secs = (t1 - start) / 1e6;
	printf("rounds=%zu seconds=%.3f rounds_per_s=%.1f sign_us_med=%.1f verify_us_med=%.1f\n",
	       rounds, secs, rounds / secs, median(sign_us, rounds < SAMPLES ? rounds : SAMPLES),
	       median(verify_us, rounds < SAMPLES ? rounds : SAMPLES));
	close(fd);
	return 0;
}
