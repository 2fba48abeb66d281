/*
 * bench-seal [ROUNDS]: what a sealed 32-byte key (libsecbuf-seal) costs
 * per use, side by side in one run with an unsealed secbuf buffer and an
 * OpenSSH-style unshield (SHA-512 over a 16 KiB prekey each time), and
 * what sets that cost: the key's derivation for prekeys of 16, 32 and
 * 64 KiB, a derived key cached (which the library does not do), a rekey,
 * and opening a large secret chunk by chunk.  Each round times a batch of
 * each case in turn (so that a noisy neighbour slows them alike); the
 * table gives the median over the rounds, with min and max.  Prints
 * markdown (make -C bench seal keeps it in results/raw/seal.txt).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <secbuf-seal.h>
#include "common.h"

#define KEY	  32
#define BATCH	  1000
#define MAXROUNDS 101

static unsigned char *prekey16;		   /* the OpenSSH-style prekey, in a secbuf buffer */
static unsigned char *cached;		   /* a derived key kept resident: what we do not do */
static unsigned char sealed_key[KEY + 16]; /* under the cached key */
static unsigned char shielded[KEY + 16];   /* under the SHA-512 of prekey16 */
static unsigned char nonce[24];
static secbuf_sealed *sealed;
static unsigned char plain[KEY];

static void *must(void *p, const char *what)
{
	if (!p)
		die("%s: %s", what, strerror(errno));
	return p;
}

/* Today: a locked buffer for the key, used, wiped and freed. */
static void unsealed(void)
{
	unsigned char *p = must(secbuf_alloc(KEY), "secbuf_alloc");

	memcpy(p, plain, KEY);
	secbuf_free(p);
}

/*
 * OpenSSH's sshkey_unshield_private(), in libsodium's primitives: SHA-512
 * of the 16 KiB prekey into a locked buffer, then the key decrypted with
 * it into another (XChaCha20-Poly1305 standing for AES-256-CTR), then both
 * wiped and freed.
 */
static void unshield(void)
{
	unsigned char *h = must(secbuf_alloc(crypto_hash_sha512_BYTES), "secbuf_alloc");
	unsigned char *p = must(secbuf_alloc(KEY), "secbuf_alloc");

	crypto_hash_sha512(h, prekey16, 16 * KiB);
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(p, NULL, NULL, shielded, sizeof(shielded),
						       NULL, 0, nonce, h))
		die("unshield: no");
	secbuf_free(h);
	secbuf_free(p);
}

static void sealed_open(void)
{
	secbuf_free(must(secbuf_sealed_open(sealed), "secbuf_sealed_open"));
}

static int noop(void *key, size_t len, void *arg)
{
	(void)key;
	(void)len;
	(void)arg;
	return 0;
}

static void sealed_use(void)
{
	if (secbuf_sealed_use(sealed, noop, NULL))
		die("secbuf_sealed_use: %s", strerror(errno));
}

static void seal(void)
{
	unsigned char tmp[KEY];

	memcpy(tmp, plain, KEY);
	secbuf_sealed_free(must(secbuf_seal(tmp, KEY, 0), "secbuf_seal"));
}

/* An open whose key stayed resident from the last: no derivation. */
static void cached_open(void)
{
	unsigned char *p = must(secbuf_alloc(KEY), "secbuf_alloc");

	if (crypto_aead_xchacha20poly1305_ietf_decrypt(p, NULL, NULL, sealed_key,
						       sizeof(sealed_key), NULL, 0, nonce, cached))
		die("cached key: no");
	secbuf_free(p);
}

static unsigned char *prekeys[3]; /* 16, 32, 64 KiB */
static const size_t prekey_sizes[3] = { 16 * KiB, 32 * KiB, 64 * KiB };

static void derive(size_t k)
{
	unsigned char key[32];

	crypto_generichash_blake2b_salt_personal(key, sizeof(key), prekeys[k], prekey_sizes[k],
						 NULL, 0, nonce,
						 (const unsigned char *)"bench-seal-perso");
	sodium_memzero(key, sizeof(key));
}
static void derive16(void)
{
	derive(0);
}
static void derive32(void)
{
	derive(1);
}
static void derive64(void)
{
	derive(2);
}
static void sha512_16(void)
{
	unsigned char h[crypto_hash_sha512_BYTES];

	crypto_hash_sha512(h, prekey16, 16 * KiB);
	sodium_memzero(h, sizeof(h));
}

struct bcase {
	const char *name, *what;
	void (*fn)(void);
	double us[MAXROUNDS];
};

static struct bcase per_key[] = {
	{ "unsealed", "secbuf_alloc(32), copy in, secbuf_free (today)", unsealed, { 0 } },
	{ "openssh-unshield",
	  "SHA-512 of a 16 KiB prekey, decrypt into secbuf, free both",
	  unshield,
	  { 0 } },
	{ "sealed open+close", "secbuf_sealed_open + secbuf_free", sealed_open, { 0 } },
	{ "sealed use", "secbuf_sealed_use with an empty callback", sealed_use, { 0 } },
	{ "seal", "secbuf_seal of 32 bytes + secbuf_sealed_free", seal, { 0 } },
	{ "cached key (not done)",
	  "open with a derived key kept resident: alloc, decrypt, free",
	  cached_open,
	  { 0 } },
};

static struct bcase derivation[] = {
	{ "BLAKE2b, 16 KiB prekey", "the key of one open (the library's)", derive16, { 0 } },
	{ "BLAKE2b, 32 KiB prekey", "", derive32, { 0 } },
	{ "BLAKE2b, 64 KiB prekey", "", derive64, { 0 } },
	{ "SHA-512, 16 KiB prekey", "OpenSSH's hash", sha512_16, { 0 } },
};

static void run_rounds(struct bcase *c, int n, int rounds)
{
	int r, i, j;

	for (i = 0; i < n; i++) /* warm: the process's set-up, caches */
		for (j = 0; j < BATCH / 10; j++)
			c[i].fn();
	for (r = 0; r < rounds; r++)
		for (i = 0; i < n; i++) {
			double t0 = now_ms();

			for (j = 0; j < BATCH; j++)
				c[i].fn();
			c[i].us[r] = (now_ms() - t0) * 1000 / BATCH;
		}
}

static void print_rows(struct bcase *c, int n, int rounds, double base)
{
	int i;

	for (i = 0; i < n; i++) {
		struct stats s = stats_of(c[i].us, rounds);

		printf("| %s | %.2f (%.2f–%.2f) | %.2f× | %s |\n", c[i].name, s.med, s.min, s.max,
		       base > 0 ? s.med / base : 1.0, c[i].what);
	}
}

static double median_of(struct bcase *c, int rounds)
{
	double copy[MAXROUNDS];

	memcpy(copy, c->us, sizeof(double) * rounds);
	return stats_of(copy, rounds).med;
}

/* A rekey with n sealed 32-byte keys live: ms, median of rounds. */
static double rekey_ms(int n, int rounds, double *lo, double *hi)
{
	secbuf_sealed **s = must(calloc(n, sizeof(*s)), "calloc");
	double ms[MAXROUNDS];
	struct stats st;
	int i, r;

	for (i = 0; i < n; i++) {
		unsigned char tmp[KEY];

		memcpy(tmp, plain, KEY);
		s[i] = must(secbuf_seal(tmp, KEY, 0), "secbuf_seal");
	}
	for (r = 0; r < rounds; r++) {
		double t0 = now_ms();

		if (secbuf_seal_rekey() < 0)
			die("secbuf_seal_rekey: %s", strerror(errno));
		ms[r] = now_ms() - t0;
	}
	for (i = 0; i < n; i++)
		secbuf_sealed_free(s[i]);
	free(s);
	st = stats_of(ms, rounds);
	*lo = st.min;
	*hi = st.max;
	return st.med;
}

static int fill_zero(void *chunk, size_t n, size_t offset, void *arg)
{
	(void)offset;
	(void)arg;
	memset(chunk, 0x5a, n);
	return 0;
}

static int touch(void *chunk, size_t n, size_t offset, void *arg)
{
	(void)offset;
	*(unsigned char *)arg ^= ((unsigned char *)chunk)[n - 1];
	return 0;
}

/* secbuf_sealed_each over a 64 MiB sealed secret: MB/s, median of rounds. */
static double each_mbs(int rounds, double *lo, double *hi)
{
	secbuf_sealed *big = must(secbuf_seal_fill(64 * MiB, fill_zero, NULL, 0), "seal_fill");
	double mbs[MAXROUNDS];
	unsigned char sink = 0;
	struct stats st;
	int r;

	for (r = 0; r < rounds; r++) {
		double t0 = now_ms();

		if (secbuf_sealed_each(big, touch, &sink))
			die("secbuf_sealed_each: %s", strerror(errno));
		mbs[r] = 64.0 / ((now_ms() - t0) / 1000);
	}
	secbuf_sealed_free(big);
	st = stats_of(mbs, rounds);
	*lo = st.min;
	*hi = st.max;
	return st.med;
}

/* The one-minute load average: how busy the machine was around the timing. */
static double loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "re");

	if (f && fscanf(f, "%lf", &l) != 1)
		l = -1;
	if (f)
		fclose(f);
	return l;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 15, i;
	struct secbuf_seal_stat st;
	double lo, hi, med, load_before;
	unsigned char tmp[KEY];

	if (rounds < 1 || rounds > MAXROUNDS)
		die("rounds: 1 to %d", MAXROUNDS);
	if (sodium_init() < 0)
		die("sodium_init");
	randombytes_buf(plain, sizeof(plain));
	randombytes_buf(nonce, sizeof(nonce));
	prekey16 = must(secbuf_alloc_flags(16 * KiB, SECBUF_POPULATE), "prekey");
	randombytes_buf(prekey16, 16 * KiB);
	for (i = 0; i < 3; i++) {
		prekeys[i] = must(secbuf_alloc_flags(prekey_sizes[i], SECBUF_POPULATE), "prekey");
		randombytes_buf(prekeys[i], prekey_sizes[i]);
	}
	cached = must(secbuf_alloc_flags(32, SECBUF_POPULATE), "cached key");
	randombytes_buf(cached, 32);
	crypto_aead_xchacha20poly1305_ietf_encrypt(sealed_key, NULL, plain, KEY, NULL, 0, NULL,
						   nonce, cached);
	{
		unsigned char *h = must(secbuf_alloc(crypto_hash_sha512_BYTES), "secbuf_alloc");

		crypto_hash_sha512(h, prekey16, 16 * KiB);
		crypto_aead_xchacha20poly1305_ietf_encrypt(shielded, NULL, plain, KEY, NULL, 0,
							   NULL, nonce, h);
		secbuf_free(h);
	}
	memcpy(tmp, plain, KEY);
	sealed = must(secbuf_seal(tmp, KEY, 0), "secbuf_seal");
	if (secbuf_seal_stat(&st) < 0)
		die("secbuf_seal_stat: %s", strerror(errno));

	load_before = loadavg();
	run_rounds(per_key, sizeof(per_key) / sizeof(per_key[0]), rounds);
	run_rounds(derivation, sizeof(derivation) / sizeof(derivation[0]), rounds);

	printf("Machine: %s.  \n", machine_desc());
	printf("Lock method: %s; the prekey is in %s memory.  \n",
	       secbuf_lock_method_name(secbuf_lock_method()),
	       secbuf_lock_method_name(st.prekey_method));
	printf("Median of %d rounds (min–max), each a batch of %d, the cases in turn; load "
	       "average %.1f before, %.1f after (2 CPUs shared).\n\n",
	       rounds, BATCH, load_before, loadavg());
	printf("### Per use of a 32-byte key\n\n");
	printf("| case | µs per key | × unsealed | what is timed |\n|---|---:|---:|---|\n");
	print_rows(per_key, sizeof(per_key) / sizeof(per_key[0]), rounds,
		   median_of(&per_key[0], rounds));
	printf("\n### The derivation alone (what a prekey's size costs per open)\n\n");
	printf("| hash | µs | × 16 KiB BLAKE2b | |\n|---|---:|---:|---|\n");
	print_rows(derivation, sizeof(derivation) / sizeof(derivation[0]), rounds,
		   median_of(&derivation[0], rounds));
	printf("\n### Rekey and large secrets\n\n| case | median (min–max) |\n|---|---:|\n");
	for (i = 100; i <= 10000; i *= 10) {
		med = rekey_ms(i, rounds < 5 ? rounds : 5, &lo, &hi);
		printf("| secbuf_seal_rekey, %d sealed 32-byte keys | %.1f ms (%.1f–%.1f) |\n", i,
		       med, lo, hi);
	}
	med = each_mbs(rounds < 5 ? rounds : 5, &lo, &hi);
	printf("| secbuf_sealed_each over 64 MiB (16 KiB chunks) | %.0f MB/s (%.0f–%.0f) |\n", med,
	       lo, hi);
	secbuf_sealed_free(sealed);
	return 0;
}
