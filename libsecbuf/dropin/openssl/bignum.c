/*
 * BN_copy() for libsecbuf-openssl.so: a copy of a secret BIGNUM into one
 * that has no storage yet is secret too.  OpenSSL 3.0 marks a private
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

/* <openssl/bn.h>'s, without its headers at build time: stable ABI of OpenSSL 3. */
typedef struct bignum_st BIGNUM;
#define BN_FLG_SECURE 0x08

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
