/*
 * bench-openssl-heap MODE: OpenSSL's secure heap as a program sees it,
 * with or without libsecbuf-openssl.so preloaded (bench/openssl runs both).
 *   idle   CRYPTO_secure_malloc_init(16 MiB, 32), then the process's VmLck
 *   fill   the same, then live 32-byte secure allocations until one fails
 *          or MAX are live: how many, VmLck, ns per allocation
 *   load   PEM_read_bio_PrivateKey of FILE, ROUNDS times: median us
 * One line each, "key value" pairs, for bench/openssl to tabulate.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include "kfacts.h"

#define ARENA	 ((size_t)16 << 20)
#define MAX_LIVE 1500000

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static long vmlck(void)
{
	return proc_field_kb("/proc/self/status", "VmLck");
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int fill(void)
{
	static void *live[MAX_LIVE];
	double t0 = now_ns();
	long n;

	for (n = 0; n < MAX_LIVE; n++)
		if (!(live[n] = OPENSSL_secure_malloc(32)) || !CRYPTO_secure_allocated(live[n]))
			break;
	printf("live %ld ns_per_alloc %.0f vmlck_kb %ld used %zu\n", n,
	       n ? (now_ns() - t0) / n : 0.0, vmlck(), CRYPTO_secure_used());
	while (n-- > 0)
		if (live[n] && CRYPTO_secure_allocated(live[n]))
			OPENSSL_secure_free(live[n]);
	return 0;
}

static int load(const char *file, int rounds)
{
	double *us = calloc(rounds, sizeof(*us));
	int i;

	for (i = 0; us && i < rounds; i++) {
		BIO *b = BIO_new_file(file, "r");
		double t0 = now_ns();
		EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;

		us[i] = (now_ns() - t0) / 1e3;
		BIO_free(b);
		if (!k)
			return 1;
		EVP_PKEY_free(k);
	}
	if (!us)
		return 1;
	qsort(us, rounds, sizeof(*us), cmp);
	printf("load_us %.1f rounds %d\n", us[rounds / 2], rounds);
	free(us);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "load"))
		return load(argv[2], atoi(argv[3]) > 0 ? atoi(argv[3]) : 1);
	if (argc != 2 || (strcmp(argv[1], "idle") && strcmp(argv[1], "fill"))) {
		fprintf(stderr, "usage: bench-openssl-heap idle | fill | load FILE ROUNDS\n");
		return 2;
	}
	printf("init %d ", CRYPTO_secure_malloc_init(ARENA, 32));
	if (!strcmp(argv[1], "idle")) {
		printf("vmlck_kb %ld\n", vmlck());
		return 0;
	}
	return fill();
}
