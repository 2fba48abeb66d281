/*
 * keyplant - a process that holds a key where secbuf-audit --key's tests
 * ask, then waits to be killed (and dies with its parent).
 * usage: secbuf-keyplant FILE ENCODING PLACE...
 * FILE is loaded as the audit loads it (into secbuf memory, decoded by
 * libcrypto with every free wiped, the stack scrubbed after), so that the
 * only copies are the planted ones.  ENCODING, made by libcrypto:
 *   der     i2d_PrivateKey(): PKCS#1, SEC1 or PKCS#8, each value big-endian
 *   limbs   every BIGNUM value little-endian, zero-padded to 8 bytes, from
 *           an 8-aligned address: what OpenSSL's BIGNUMs hold on 64 bits
 *   raw     EVP_PKEY_get_raw_private_key() (Ed25519, X25519)
 *   bytes   the file as it is (PEM text, or a secret file's bytes)
 *   public  the public key, DER and PEM (i2d_PUBKEY, PEM_write_bio_PUBKEY)
 *   live    OpenSSL's own EVP_PKEY, kept loaded (PLACE is ignored)
 *   none    nothing
 * PLACE: heap, stack, anon (private anonymous mmap), file:PATH (MAP_SHARED
 * of a new file), secbuf (a secbuf buffer of 16 pages, only the first
 * touched), secret (memfd_secret; exit 77 without it), write:PATH (a file
 * of random bytes with the copy at offset AT: the env KEYPLANT_AT, else
 * 5000).  With write: places alone it exits once written.
 * Prints "ready len=BYTES PLACE=ADDRESS..." (write: the offset) once planted.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <secbuf.h>

#include "../audit/key/load.h"
#include "kfacts.h"

#define MAX_PAYLOAD (64 << 10)

/* What was planted stays referenced: the compiler may not drop a store. */
static volatile void *keep[16];
static size_t kept;

static void hold(void *p)
{
	if (kept < sizeof(keep) / sizeof(keep[0]))
		keep[kept++] = p;
}

/* Each BIGNUM of the key, little-endian, padded to 8 bytes: the length. */
static size_t limbs(EVP_PKEY *pkey, uint8_t *out)
{
	static const char *const params[] = { "d",
					      "rsa-factor1",
					      "rsa-factor2",
					      "rsa-exponent1",
					      "rsa-exponent2",
					      "rsa-coefficient1",
					      "priv" };
	size_t len = 0;

	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		BIGNUM *bn = NULL;
		int n;

		if (!EVP_PKEY_get_bn_param(pkey, params[i], &bn))
			continue;
		n = (BN_num_bytes(bn) + 7) / 8 * 8;
		if (len + (size_t)n <= MAX_PAYLOAD && BN_bn2lebinpad(bn, out + len, n) == n)
			len += (size_t)n;
		BN_clear_free(bn);
	}
	return len;
}

/* The public key's DER, then its PEM text. */
static size_t public_forms(EVP_PKEY *pkey, uint8_t *out)
{
	unsigned char *der = NULL;
	int n = i2d_PUBKEY(pkey, &der);
	BIO *mem = BIO_new(BIO_s_mem());
	size_t len = 0;
	char *text;
	long tlen;

	if (n > 0 && n <= MAX_PAYLOAD / 2) {
		memcpy(out, der, (size_t)n);
		len = (size_t)n;
	}
	OPENSSL_free(der);
	if (mem && PEM_write_bio_PUBKEY(mem, pkey) && (tlen = BIO_get_mem_data(mem, &text)) > 0 &&
	    len + (size_t)tlen <= MAX_PAYLOAD) {
		memcpy(out + len, text, (size_t)tlen);
		len += (size_t)tlen;
	}
	BIO_free(mem);
	return len;
}

/* The payload, in secbuf scratch memory; its length, or 0. */
static size_t make(const char *encoding, EVP_PKEY *pkey, const struct key_blob *file, uint8_t *out)
{
	unsigned char *der = NULL;
	size_t len = 0;
	int n;

	if (!strcmp(encoding, "der")) {
		n = i2d_PrivateKey(pkey, &der);
		if (n > 0 && n <= MAX_PAYLOAD) {
			memcpy(out, der, (size_t)n);
			len = (size_t)n;
		}
		OPENSSL_clear_free(der, n > 0 ? (size_t)n : 0);
	} else if (!strcmp(encoding, "limbs")) {
		len = limbs(pkey, out);
	} else if (!strcmp(encoding, "raw")) {
		len = MAX_PAYLOAD;
		if (!EVP_PKEY_get_raw_private_key(pkey, out, &len))
			len = 0;
	} else if (!strcmp(encoding, "bytes")) {
		len = file->len < MAX_PAYLOAD ? file->len : 0;
		memcpy(out, file->data, len);
	} else if (!strcmp(encoding, "public")) {
		len = public_forms(pkey, out);
	}
	return len;
}

/* A file of random bytes, the payload at offset at: 0, or -1. */
static int write_image(const char *path, const uint8_t *payload, size_t len, size_t at)
{
	size_t size = at + len + 4096;
	uint8_t *noise = malloc(size);
	int fd, rc = -1;

	if (!noise || getrandom(noise, size, 0) < 0)
		goto out;
	memcpy(noise + at, payload, len);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		rc = write(fd, noise, size) == (ssize_t)size ? 0 : -1;
		rc |= close(fd);
	}
	explicit_bzero(noise + at, len);
out:
	free(noise);
	return rc;
}

/* Plant len bytes at place; prints " place=address"; 0, 1 (wrote a file), -1, 77. */
static int plant(const char *place, const uint8_t *payload, size_t len, uint8_t *stack)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p = NULL;
	int fd;

	if (!strcmp(place, "heap")) {
		p = malloc(len);
	} else if (!strcmp(place, "stack")) {
		p = stack;
	} else if (!strcmp(place, "anon")) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		p = p == MAP_FAILED ? NULL : p;
	} else if (!strncmp(place, "file:", 5)) {
		fd = open(place + 5, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)len) < 0)
			return -1;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		p = p == MAP_FAILED ? NULL : p;
	} else if (!strcmp(place, "secbuf")) {
		/* Sixteen pages, one touched: the audit must leave the rest untouched. */
		p = secbuf_alloc(16 * page);
	} else if (!strcmp(place, "secret")) {
		p = secretmem_map(len);
		if (p == MAP_FAILED)
			return 77;
	} else if (!strncmp(place, "write:", 6)) {
		const char *at = getenv("KEYPLANT_AT");
		size_t off = at ? strtoul(at, NULL, 0) : 5000;

		if (write_image(place + 6, payload, len, off) < 0)
			return -1;
		printf(" %s=%zu", place, off);
		return 1;
	} else {
		fprintf(stderr, "keyplant: unknown place %s\n", place);
		return -1;
	}
	if (!p)
		return -1;
	memcpy(p, payload, len);
	hold(p);
	printf(" %s=%p", place, (void *)p);
	return 0;
}

int main(int argc, char **argv)
{
	/* The stack place: in main's frame, above what key_scrub_stack() zeroes. */
	uint8_t stack[MAX_PAYLOAD] __attribute__((aligned(16)));
	EVP_PKEY *pkey = NULL;
	struct key_blob file;
	char why[300], form[32];
	size_t len = 0;
	uint8_t *payload;
	int live, waits = 0, rc = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (argc < 3) {
		fprintf(stderr, "usage: secbuf-keyplant FILE ENCODING PLACE...\n");
		return 2;
	}
	live = !strcmp(argv[2], "live");
	payload = secbuf_alloc(MAX_PAYLOAD);
	if (key_crypto_init() < 0 || !payload ||
	    key_file_read(argv[1], &file, why, sizeof(why)) < 0) {
		fprintf(stderr, "keyplant: %s: %s\n", argv[1], payload ? why : "no secbuf memory");
		return 1;
	}
	if (strcmp(argv[2], "bytes") &&
	    key_decode(&file, &pkey, form, sizeof(form), why, sizeof(why)) < 0) {
		fprintf(stderr, "keyplant: %s: %s\n", argv[1], why);
		return 1;
	}
	if (!live && strcmp(argv[2], "none") && !(len = make(argv[2], pkey, &file, payload))) {
		fprintf(stderr, "keyplant: no %s payload from %s\n", argv[2], argv[1]);
		return 1;
	}
	if (!live) {
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
	key_blob_free(&file);
	key_scrub_stack();
	hold(pkey);
	printf("ready len=%zu", len);
	for (int i = 3; i < argc && len && rc >= 0 && rc != 77; i++) {
		rc = plant(argv[i], payload, len, stack);
		waits += rc == 0;
	}
	printf("\n");
	fflush(stdout);
	secbuf_free(payload);
	if (rc < 0 || rc == 77) {
		fprintf(stderr, "keyplant: cannot plant in %s\n", argv[argc - 1]);
		return rc < 0 ? 1 : 77;
	}
	/* Only files written: nothing to wait for. */
	if (!waits && !live && len && argc > 3)
		return 0;
	for (;;)
		pause();
}
