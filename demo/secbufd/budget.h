/*
 * budget.h - what the daemon's secrets charge to RLIMIT_MEMLOCK, and
 * whether this process may lock that much.
 *
 * Its keys are sealed at rest (keystore.h): ciphertext in ordinary memory,
 * charged nothing however many there are.  What they charge is
 * libsecbuf-seal's prekey, once, and the one key open at a time.
 *
 * Both kernels charge a buffer's whole length when it is locked, not the
 * pages touched later: the patched one at mmap(MAP_LOCKONFAULT), a stock
 * one at mlock2(MLOCK_ONFAULT).  A 64 MiB working buffer therefore needs
 * 64 MiB of RLIMIT_MEMLOCK even if only a few pages of it are ever used.
 */
#ifndef SECBUFD_BUDGET_H
#define SECBUFD_BUDGET_H

#include <stddef.h>

struct lock_budget {
	size_t buffer;			/* bytes charged for the working buffer */
	size_t keys; /* bytes charged for the sealed keys: the prekey, one key open */
	size_t library;			/* libsecbuf's own key page, once per process */
	size_t need;			/* buffer + keys + library */
	unsigned long long limit;	/* RLIMIT_MEMLOCK (soft), in bytes */
	int unlimited;			/* RLIM_INFINITY, or CAP_IPC_LOCK ignores it */
};

/*
 * Bytes that secbuf_alloc(size) locks, as libsecbuf lays a buffer out: the
 * 16-byte canary and the size rounded up to 16 bytes, in whole pages.  The
 * guard pages on either side are never locked.
 */
size_t secbuf_charge(size_t size);

/* The budget of a daemon with a working buffer of bufsize bytes. */
void budget_compute(struct lock_budget *b, size_t bufsize);

/* Whether the limit leaves room for everything the daemon may lock. */
int budget_fits(const struct lock_budget *b);

/*
 * Explain on stderr why the secrets are not locked (what), with the limit,
 * the amount needed and the ways to fix it; opt_out also names
 * --allow-unlocked.
 */
void budget_explain(const struct lock_budget *b, const char *what, int opt_out);

#endif
