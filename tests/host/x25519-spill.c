/*
 * x25519-spill [none]: one X25519 derive by a program bound lazily, its
 * private scalar then looked for from outside (memscan, as root).
 *
 * Built with -z lazy (tests/host/Makefile), never -z now: the first call
 * of each of its functions goes through ld.so's trampoline
 * (_dl_runtime_resolve_xsavec), which saves the vector registers, the
 * scalar still in them after the derive, to the stack.  LD_BIND_NOW=1
 * (what secbuf-run sets) binds every call at start and skips it.
 *
 * Prints on standard output, one line each: "pid PID", "mask HEX" and
 * "masked HEX" (the raw private key XOR the mask), then does one derive
 * with a peer's key (none: no derive), prints "ready" and blocks reading
 * standard input until its end.  The plain key is never in a variable of
 * its own: it lands in a CRYPTO_secure_malloc() buffer (the drop-in's
 * locked memory when preloaded) and is masked there, a byte at a time,
 * so that the scan cannot find the program's own copy.
 *
 * Every call the program makes between the key's making and its masking
 * is made once before (on the peer's key), and the vector registers are
 * cleared after the masking: what the scan finds is the derive's.
 * Exit 0, or 1 if a call fails.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#define KEYLEN 32

static int say(const char *what, const unsigned char *bytes, size_t n)
{
	char line[16 + 2 * KEYLEN];
	size_t i, at;

	at = (size_t)snprintf(line, sizeof(line), "%s%s", what, bytes ? " " : "");
	for (i = 0; bytes && i < n; i++)
		at += (size_t)snprintf(line + at, sizeof(line) - at, "%02x", bytes[i]);
	line[at++] = '\n';
	return write(1, line, at) == (ssize_t)at ? 0 : -1;
}

/* Registers the key went through (memcpy, the keygen) hold nothing now. */
static void clear_vector_registers(void)
{
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx512f"))
		__asm__ volatile(
			"vpxord %%zmm16, %%zmm16, %%zmm16\n\tvpxord %%zmm17, %%zmm17, %%zmm17\n\t"
			"vpxord %%zmm18, %%zmm18, %%zmm18\n\tvpxord %%zmm19, %%zmm19, %%zmm19\n\t"
			"vpxord %%zmm20, %%zmm20, %%zmm20\n\tvpxord %%zmm21, %%zmm21, %%zmm21\n\t"
			"vpxord %%zmm22, %%zmm22, %%zmm22\n\tvpxord %%zmm23, %%zmm23, %%zmm23\n\t"
			"vpxord %%zmm24, %%zmm24, %%zmm24\n\tvpxord %%zmm25, %%zmm25, %%zmm25\n\t"
			"vpxord %%zmm26, %%zmm26, %%zmm26\n\tvpxord %%zmm27, %%zmm27, %%zmm27\n\t"
			"vpxord %%zmm28, %%zmm28, %%zmm28\n\tvpxord %%zmm29, %%zmm29, %%zmm29\n\t"
			"vpxord %%zmm30, %%zmm30, %%zmm30\n\tvpxord %%zmm31, %%zmm31, %%zmm31" ::
				: "memory");
	if (__builtin_cpu_supports("avx"))
		__asm__ volatile("vzeroall" ::
					 : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
					   "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
					   "xmm13", "xmm14", "xmm15", "memory");
	else
		__asm__ volatile(
			"pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\t"
			"pxor %%xmm3, %%xmm3\n\tpxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
			"pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\tpxor %%xmm8, %%xmm8\n\t"
			"pxor %%xmm9, %%xmm9\n\tpxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
			"pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\t"
			"pxor %%xmm14, %%xmm14\n\tpxor %%xmm15, %%xmm15" ::
				: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
				  "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
				  "xmm15", "memory");
#endif
}

int main(int argc, char **argv)
{
	unsigned char mask[KEYLEN], secret[64];
	char pid[24];
	volatile unsigned char *held;
	unsigned char *priv;
	EVP_PKEY *key, *peer;
	EVP_PKEY_CTX *ctx;
	size_t len = KEYLEN, i;
	char c;
	int derive = !(argc > 1 && !strcmp(argv[1], "none"));

	/* The peer's key, made and read the way ours is next: every call
	 * below between our keygen and the masking is bound by then. */
	priv = CRYPTO_secure_malloc(KEYLEN, __FILE__, __LINE__);
	peer = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
	if (!priv || !peer || !EVP_PKEY_get_raw_private_key(peer, priv, &len) || len != KEYLEN ||
	    RAND_bytes(mask, sizeof(mask)) != 1 || read(0, &c, 0) < 0)
		return 1;
	memset(priv, 0, KEYLEN);
	snprintf(pid, sizeof(pid), "pid %d", (int)getpid());
	if (say(pid, NULL, 0) < 0 || say("mask", mask, KEYLEN) < 0)
		return 1;

	key = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
	if (!key || !EVP_PKEY_get_raw_private_key(key, priv, &len) || len != KEYLEN)
		return 1;
	held = priv;
	for (i = 0; i < KEYLEN; i++)
		held[i] ^= mask[i];
	clear_vector_registers();

	if (say("masked", priv, KEYLEN) < 0)
		return 1;

	if (derive) {
		ctx = EVP_PKEY_CTX_new(key, NULL);
		len = sizeof(secret);
		if (!ctx || EVP_PKEY_derive_init(ctx) <= 0 ||
		    EVP_PKEY_derive_set_peer(ctx, peer) <= 0 ||
		    EVP_PKEY_derive(ctx, secret, &len) <= 0)
			return 1;
		/* The first calls after the derive: the trampoline runs here. */
		EVP_PKEY_CTX_free(ctx);
		OPENSSL_cleanse(secret, sizeof(secret));
	}
	if (say("ready", NULL, 0) < 0)
		return 1;
	while (read(0, &c, 1) > 0)
		;
	EVP_PKEY_free(key);
	EVP_PKEY_free(peer);
	CRYPTO_secure_free(priv, __FILE__, __LINE__);
	return 0;
}
