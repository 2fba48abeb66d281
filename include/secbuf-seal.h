/*
 * secbuf-seal.h - sealed secrets: keys encrypted while idle, opened into
 * locked memory only while in use (libsecbuf-seal, pkg-config secbuf-seal).
 *
 * secbuf_seal() encrypts a secret with XChaCha20-Poly1305 (libsodium) and
 * wipes the plaintext; the sealed bytes may live in ordinary memory, where
 * swap, a core dump or a read of the process finds only ciphertext.  The
 * key of each sealed secret is derived, at each open, from the process's
 * prekey (16 KiB of random bytes, in memfd_secret memory where the kernel
 * has it, else in a locked, non-dumpable, wipe-on-fork secbuf buffer) and
 * a random salt of its own: whoever wants one secret must read the whole
 * prekey without one bit wrong.  No derived key stays between opens.
 *
 * Opening puts the plaintext in a secbuf buffer (locked, guarded, wiped on
 * free); secbuf_sealed_use() opens, calls back and frees, so the common
 * case cannot forget to close, and secbuf_sealed_each() hands a secret of
 * any size over in locked chunks of SECBUF_SEAL_CHUNK bytes.
 *
 * A forked child cannot open its parent's sealed secrets (ENOKEY) unless
 * they were sealed with SECBUF_INHERIT.  Misuse (a double free, a use
 * after free, a pointer that is not a sealed secret) prints a message and
 * aborts, as libsecbuf does.  Thread-safe; not async-signal-safe.
 * Successful calls leave errno alone.  See secbuf_seal(3) for the threat
 * model.
 */
#ifndef SECBUF_SEAL_H
#define SECBUF_SEAL_H

#include <stddef.h>
#include <secbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A sealed secret: opaque, in ordinary memory. */
typedef struct secbuf_sealed secbuf_sealed;

/* The prekey's size, and the plaintext bytes of each separately sealed chunk. */
#define SECBUF_SEAL_PREKEY (16 * 1024)
#define SECBUF_SEAL_CHUNK  (16 * 1024)

/*
 * Seal len bytes at plain and wipe them; the flags say how opens allocate
 * (SECBUF_BEST_EFFORT, SECBUF_SECRET, SECBUF_PACKED, as
 * secbuf_alloc_flags()) and SECBUF_INHERIT seals it under a prekey that
 * forked children keep.  NULL with errno on failure, the plaintext
 * untouched: EINVAL (NULL, len 0, unknown flags), ENOMEM (too large),
 * or the error of allocating the prekey or the key's buffer (EAGAIN,
 * EPERM, EOPNOTSUPP: see secbuf_alloc_flags(3)).
 */
secbuf_sealed *secbuf_seal(void *plain, size_t len, unsigned flags);

/*
 * Seal len bytes that fill(chunk, n, offset, arg) writes, chunk by chunk,
 * into a locked buffer: a secret of any size without its plaintext ever
 * in ordinary memory.  A non-zero return of fill stops it (NULL; errno
 * ECANCELED unless fill set one).  Errors as secbuf_seal().
 */
secbuf_sealed *secbuf_seal_fill(size_t len,
				int (*fill)(void *chunk, size_t n, size_t offset, void *arg),
				void *arg, unsigned flags);

/*
 * Open into a new secbuf buffer of secbuf_sealed_size(s) bytes, which the
 * caller frees with secbuf_free() (which wipes it).  NULL with errno:
 * EINVAL (NULL), EBADMSG (tampered, truncated, or not sealed in this
 * process under its present prekey), ENOKEY (sealed by the parent of this
 * forked child without SECBUF_INHERIT), or the error of the allocation.
 */
void *secbuf_sealed_open(const secbuf_sealed *s);

/*
 * Open, call fn(plaintext, len, arg), wipe and free: fn's return value,
 * or -1 with errno (as secbuf_sealed_open()) when fn was not called.
 */
int secbuf_sealed_use(const secbuf_sealed *s, int (*fn)(void *key, size_t len, void *arg),
		      void *arg);

/*
 * Open chunk by chunk into one locked buffer of at most SECBUF_SEAL_CHUNK
 * bytes: fn(chunk, n, offset, arg) for each, in order; every chunk is
 * authenticated before the first is handed over.  0 when all were, fn's
 * first non-zero return value, or -1 with errno as secbuf_sealed_open().
 */
int secbuf_sealed_each(const secbuf_sealed *s,
		       int (*fn)(void *chunk, size_t n, size_t offset, void *arg), void *arg);

/* Free a sealed secret; NULL is a no-op, errno is kept.  Misuse aborts. */
void secbuf_sealed_free(secbuf_sealed *s);

/* The plaintext's size; 0 for NULL. */
size_t secbuf_sealed_size(const secbuf_sealed *s);

/*
 * Draw fresh prekeys and re-seal every sealed secret of this process under
 * them, then wipe the old ones: what was read of the old prekey opens
 * nothing any more.  Blocks opens and seals meanwhile.  0, or -1 with
 * errno (the error of allocating a prekey or buffer) and nothing changed.
 */
int secbuf_seal_rekey(void);

/*
 * The sealed bytes (secbuf_seal(3) gives their layout): copied into out
 * when len is at least their length, which is returned either way.
 */
size_t secbuf_sealed_export(const secbuf_sealed *s, void *out, size_t len);

/*
 * A sealed secret from exported bytes.  It opens only in the process that
 * sealed it, until its next rekey.  NULL with errno: EINVAL (NULL),
 * EBADMSG (not the layout, or truncated), ENOMEM.
 */
secbuf_sealed *secbuf_sealed_import(const void *data, size_t len);

struct secbuf_seal_stat {
	size_t sealed;		   /* live sealed secrets of this process */
	size_t bytes;		   /* their plaintext bytes */
	size_t sealed_bytes;	   /* their sealed bytes, in ordinary memory */
	int prekey_method;	   /* SECBUF_LOCK_* of the prekey; -1: none yet */
	int inherit_prekey_method; /* ... of the SECBUF_INHERIT prekey */
	unsigned long rekeys;	   /* secbuf_seal_rekey() calls that succeeded */
};

/* Fill *st: 0, or -1 with errno EINVAL (NULL). */
int secbuf_seal_stat(struct secbuf_seal_stat *st);

#ifdef __cplusplus
}
#endif

#endif /* SECBUF_SEAL_H */
