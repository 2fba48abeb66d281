/*
 * seal/: libsecbuf-seal, sealed secrets on top of libsecbuf.
 *
 * May use: libsecbuf's public API (include/secbuf.h) and nothing inside
 * it, libsodium and libc.  This is a library of its own, linked against
 * libsecbuf as any program is, so that libsecbuf keeps needing only libc.
 *
 * Files: format.c (the sealed bytes, chunk by chunk), prekey.c (the
 * prekeys, the lock over them and the sealed bytes, fork), handle.c (the
 * handles: their arena, checks and list), buffers.c (the locked buffers
 * plaintext and keys go in, and the secret tier's room), misuse.c (the
 * abort path), seal.c (the API).
 */
#ifndef SECBUF_SEAL_INTERNAL_H
#define SECBUF_SEAL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sodium.h>
#include <secbuf-seal.h>

#define SBS_HIDDEN __attribute__((visibility("hidden")))
#define SBS_API	   __attribute__((visibility("default")))

/* What opens allocate with, and the one flag that picks the prekey. */
#define SBS_OPEN_FLAGS (SECBUF_BEST_EFFORT | SECBUF_SECRET | SECBUF_PACKED)
#define SBS_FLAGS      (SBS_OPEN_FLAGS | SECBUF_INHERIT)

/* The process's own prekey, and the one forked children keep. */
enum sbs_kind { SBS_OWN, SBS_INHERITED, SBS_KINDS };

static inline enum sbs_kind sbs_kind_of(unsigned flags)
{
	return flags & SECBUF_INHERIT ? SBS_INHERITED : SBS_OWN;
}

/* misuse.c: the single abort path, in libsecbuf's words. */
SBS_HIDDEN __attribute__((noreturn, format(printf, 1, 2))) void sbs_misuse(const char *fmt, ...);

/*
 * format.c: the sealed bytes.
 *   header (16): "SBS1", flags, three zero bytes, size (64-bit LE)
 *   nonce (24):  random; its first 16 bytes salt the key's derivation
 *   chunk i:     ciphertext of min(SECBUF_SEAL_CHUNK, the rest) bytes, tag (16)
 * Chunk i is XChaCha20-Poly1305 under the nonce with i xored into its last
 * 8 bytes, with the header and i as associated data: a chunk cannot move,
 * and the header (the size) cannot change, without failing its tag.
 */
#define SBS_HEADER 16
#define SBS_NONCE  crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define SBS_TAG	   crypto_aead_xchacha20poly1305_ietf_ABYTES
#define SBS_KEY	   crypto_aead_xchacha20poly1305_ietf_KEYBYTES

static inline size_t sbs_chunks(size_t size)
{
	return size / SECBUF_SEAL_CHUNK + (size % SECBUF_SEAL_CHUNK != 0);
}

static inline size_t sbs_chunk_len(size_t size, size_t i)
{
	size_t left = size - i * SECBUF_SEAL_CHUNK;

	return left < SECBUF_SEAL_CHUNK ? left : SECBUF_SEAL_CHUNK;
}

/* The sealed length of size bytes: 0, or -1 with errno ENOMEM if it overflows. */
SBS_HIDDEN int sbs_sealed_len(size_t size, size_t *len);
SBS_HIDDEN void sbs_header_write(unsigned char *blob, size_t size, unsigned flags);
/* The header of len bytes: 0, or -1 with errno EBADMSG (not ours, or the wrong length). */
SBS_HIDDEN int sbs_header_read(const unsigned char *blob, size_t len, size_t *size,
			       unsigned *flags);
static inline unsigned char *sbs_nonce(unsigned char *blob)
{
	return blob + SBS_HEADER;
}
/* The key of a sealed secret: BLAKE2b of the whole prekey, salted by its nonce. */
SBS_HIDDEN void sbs_derive(unsigned char key[SBS_KEY], const unsigned char *prekey,
			   const unsigned char nonce[SBS_NONCE]);
SBS_HIDDEN void sbs_chunk_seal(unsigned char *blob, size_t size, size_t i,
			       const unsigned char *nonce, const unsigned char *m,
			       const unsigned char *key);
/*
 * Open chunk i into m (NULL: only check its tag): 0, or -1 with errno
 * EBADMSG, m wiped.
 */
SBS_HIDDEN int sbs_chunk_open(const unsigned char *blob, size_t size, size_t i,
			      const unsigned char *nonce, unsigned char *m,
			      const unsigned char *key);
/*
 * Seal blob again, under a fresh nonce and the key it derives from
 * prekey: keys holds the old key and room for the new one (2 * SBS_KEY
 * locked bytes), scratch a chunk.  0, or -1 with errno EBADMSG (it did not
 * open under the old key: left as it was).
 */
SBS_HIDDEN int sbs_reseal(unsigned char *blob, size_t size, const unsigned char *prekey,
			  unsigned char *keys, unsigned char *scratch);

/*
 * prekey.c: the prekeys, made on first use; a read-write lock over them
 * and every sealed secret's bytes (rekey writes, the rest read); the fork
 * handlers.  sbs_init() once per process: 0, or -1 with errno.
 */
SBS_HIDDEN int sbs_init(void);
SBS_HIDDEN void sbs_read_lock(void);
SBS_HIDDEN void sbs_read_unlock(void);
SBS_HIDDEN void sbs_write_lock(void);
SBS_HIDDEN void sbs_write_unlock(void);
/*
 * Make the kind's prekey unless this process has one (the caller holds no
 * lock), counting the caller as a sealer until sbs_prekey_done().
 * 0, or -1 with errno (that of the allocation); *made is the generation
 * it made, or 0.
 */
SBS_HIDDEN int sbs_prekey_ensure(enum sbs_kind kind, unsigned flags, uint64_t *made);
/* A sealer is done; a prekey it made that nothing uses is freed (made != 0). */
SBS_HIDDEN void sbs_prekey_done(enum sbs_kind kind, uint64_t made);
/* Under the lock: the kind's generation in this process, 0 if it has none. */
SBS_HIDDEN uint64_t sbs_prekey_gen(enum sbs_kind kind);
/*
 * Under the lock: the key of nonce under prekey gen: 0, or -1 with errno
 * EBADMSG (gen 0: not sealed in this process) or ENOKEY (a prekey this
 * process does not have: its parent's).
 */
SBS_HIDDEN int sbs_prekey_derive(enum sbs_kind kind, uint64_t gen, const unsigned char *nonce,
				 unsigned char *key);
/* Under the lock: blob, sealed under the key in keys, sealed again under the prekey. */
SBS_HIDDEN int sbs_prekey_reseal(enum sbs_kind kind, unsigned char *blob, size_t size,
				 unsigned char *keys, unsigned char *scratch);
/* A seal asked for SECBUF_BEST_EFFORT: rekey's buffers may fall back as its did. */
SBS_HIDDEN void sbs_best_effort_seen(unsigned flags);
SBS_HIDDEN int sbs_prekey_method(enum sbs_kind kind);
SBS_HIDDEN unsigned long sbs_rekeys(void);
/* rekey's work, under the write lock: see secbuf_seal_rekey(). */
SBS_HIDDEN int sbs_prekey_rekey(void);

/*
 * handle.c: handles live in an arena of their own, never unmapped, so
 * that a freed or foreign one is told apart without touching the malloc
 * heap; each carries a check keyed per process.
 */
struct secbuf_sealed {
	uint64_t check;
	uint64_t serial;
	unsigned char *blob;
	size_t size;
	uint64_t gen; /* the prekey's, under the lock */
	struct secbuf_sealed *prev, *next;
	uint32_t flags;
	uint32_t state;
};
SBS_HIDDEN int sbs_handle_init(void);
/* A new handle owning blob, on the list: NULL with errno ENOMEM. */
SBS_HIDDEN struct secbuf_sealed *sbs_handle_new(unsigned char *blob, size_t size, unsigned flags,
						uint64_t gen);
/* Abort unless h is a live handle; fn names the call. */
SBS_HIDDEN void sbs_handle_check(const struct secbuf_sealed *h, const char *fn);
/* Off the list and freed (a double free aborts); its blob is returned to free. */
SBS_HIDDEN unsigned char *sbs_handle_free(struct secbuf_sealed *h, const char *fn);
/* Each live handle, with the list held. */
SBS_HIDDEN void sbs_handle_each(void (*fn)(struct secbuf_sealed *h, void *arg), void *arg);
SBS_HIDDEN size_t sbs_handle_count(enum sbs_kind kind);
SBS_HIDDEN void sbs_handle_totals(size_t *n, size_t *bytes, size_t *sealed_bytes);
SBS_HIDDEN void sbs_handle_fork_prepare(void);
SBS_HIDDEN void sbs_handle_fork_parent(void);
SBS_HIDDEN void sbs_handle_fork_child(void);

/*
 * buffers.c: the secbuf buffers plaintext and derived keys live in,
 * populated (every byte gets written at once), with the seal's flags.
 * NULL with errno.
 */
SBS_HIDDEN void *sbs_buffer(size_t size, unsigned flags);
/* Free (so wipe) a buffer made by process pid; in a forked child, leave it. */
SBS_HIDDEN void sbs_buffer_free(void *p, pid_t pid);
/*
 * A buffer for derived keys (SBS_KEYS bytes), and its return, wiped, by
 * process pid; *kept says whether it is one of the locked pages kept for
 * reuse.  NULL with errno.
 */
#define SBS_KEYS (2 * SBS_KEY)
SBS_HIDDEN unsigned char *sbs_keys_get(unsigned flags, int *kept);
SBS_HIDDEN void sbs_keys_put(unsigned char *p, int kept, pid_t pid);
SBS_HIDDEN void sbs_keys_fork_prepare(void);
SBS_HIDDEN void sbs_keys_fork_parent(void);
SBS_HIDDEN void sbs_keys_fork_child(void);

#endif
