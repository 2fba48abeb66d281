/*
 * BN_copy() and OSSL_PARAM_get_BN() for libsecbuf-openssl.so: a copy of a
 * secret value into a BIGNUM that has no storage yet is secret too.  OpenSSL 3.0 marks a private
 * key's values BN_FLG_SECURE, but the copies its RSA code keeps in plain
 * memory for as long as the key lives do not inherit the mark: each
 * Montgomery context (BN_MONT_CTX_set(), on a worker's first RSA
 * signature) holds p and q, and its BN_copy() allocates them with
 * OPENSSL_malloc().  Measured with Debian's nginx: without this, p and q
 * sit in every signing worker's heap, so in its swap and its core dump.
 *
 * libcrypto calls BN_copy() through its PLT, so the preload reaches it;
 * the real one then allocates from CRYPTO_secure_zalloc() (ours).  A
 * destination that already has plain storage keeps it (the copy goes
 * there): setting the mark then only means that its free goes through
 * CRYPTO_secure_clear_free(), which wipes it and hands a pointer that is
 * not ours to libcrypto's CRYPTO_clear_free(), as OpenSSL's own does.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dropin/common/dropin.h"

/*
 * <openssl/bn.h>'s and <openssl/params.h>'s, without their headers at
 * build time: the stable ABI of OpenSSL 3.
 */
typedef struct bignum_st BIGNUM;
#define BN_FLG_SECURE 0x08
typedef struct {
	const char *key;
	unsigned int data_type;
	void *data;
	size_t data_size;
	size_t return_size;
} OSSL_PARAM;

int CRYPTO_secure_allocated(const void *ptr); /* openssl.c's */

static void *crypto(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name), *lib;

	/* libcrypto loaded with RTLD_LOCAL (Python's modules): by its name. */
	if (!fn && (lib = dlopen("libcrypto.so.3", RTLD_LAZY | RTLD_NOLOAD))) {
		fn = dlsym(lib, name);
		dlclose(lib);
	}
	if (!fn)
		sb_misuse("libsecbuf-openssl: %s: not found in libcrypto", name);
	return fn;
}

__attribute__((visibility("default"))) BIGNUM *BN_copy(BIGNUM *a, const BIGNUM *b)
{
	static BIGNUM *(*real_copy)(BIGNUM *, const BIGNUM *);
	static int (*get_flags)(const BIGNUM *, int);
	static void (*set_flags)(BIGNUM *, int);
	BIGNUM *(*copy)(BIGNUM *, const BIGNUM *) = __atomic_load_n(&real_copy, __ATOMIC_ACQUIRE);

	/* Racing threads find the same three: the last store publishes them. */
	if (!copy) {
		*(void **)&get_flags = crypto("BN_get_flags");
		*(void **)&set_flags = crypto("BN_set_flags");
		*(void **)&copy = crypto("BN_copy");
		__atomic_store_n(&real_copy, copy, __ATOMIC_RELEASE);
	}
	if (a && b && a != b && get_flags(b, BN_FLG_SECURE) && !get_flags(a, BN_FLG_SECURE))
		set_flags(a, BN_FLG_SECURE);
	return copy(a, b);
}

/*
 * OpenSSL 3.0 reads a key's values out of its parameters into fresh
 * BIGNUMs with a plain BN_new(), whatever memory the parameters are in:
 * EVP_PKEY_get1_RSA() does so for the legacy RSA object it hands out
 * (python3-cryptography calls it for every RSA key), and so leaves d, p,
 * q and the CRT values in the heap even where the key itself is secret.
 * (Later OpenSSL releases allocate secure when the data is.)  A parameter
 * whose data is secure memory is read into a BN_secure_new() here; the
 * real call then fills it, as it fills any BIGNUM it is given.
 */
__attribute__((visibility("default"))) int OSSL_PARAM_get_BN(const OSSL_PARAM *p, BIGNUM **val)
{
	static int (*real_get)(const OSSL_PARAM *, BIGNUM **);
	static BIGNUM *(*secure_new)(void);
	static void (*clear_free)(BIGNUM *);
	int (*get)(const OSSL_PARAM *, BIGNUM **) = __atomic_load_n(&real_get, __ATOMIC_ACQUIRE);
	BIGNUM *fresh = NULL;
	int ok;

	if (!get) {
		*(void **)&secure_new = crypto("BN_secure_new");
		*(void **)&clear_free = crypto("BN_clear_free");
		*(void **)&get = crypto("OSSL_PARAM_get_BN");
		__atomic_store_n(&real_get, get, __ATOMIC_RELEASE);
	}
	if (p && val && !*val && p->data && CRYPTO_secure_allocated(p->data)) {
		fresh = secure_new();
		if (!fresh)
			return 0;
		*val = fresh;
	}
	ok = get(p, val);
	if (!ok && fresh) {
		clear_free(fresh);
		*val = NULL;
	}
	return ok;
}
