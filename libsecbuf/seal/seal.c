/*
 * The API of libsecbuf-seal: argument checks, handles checked (misuse
 * aborts), then the work of the other files.  Each entry point keeps
 * errno as it found it unless it fails; on failure nothing it made stays
 * mapped, and no plaintext is handed out.
 *
 * No lock is held while a caller's callback runs (it may take long, or
 * fork): a seal derives its key under the lock and seals without it,
 * catching up if a rekey came meanwhile; an open takes the lock per
 * chunk and derives the key again if a rekey re-sealed it in between.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "seal.h"

typedef int (*fill_fn)(void *chunk, size_t n, size_t offset, void *arg);

static size_t min_chunk(size_t size)
{
	return size < SECBUF_SEAL_CHUNK ? size : SECBUF_SEAL_CHUNK;
}

/*
 * Seal what plain holds, or what fill writes into a locked chunk: the
 * handle, or NULL with errno.  The plaintext is the caller's to wipe.
 */
static struct secbuf_sealed *seal(const unsigned char *plain, size_t len, fill_fn fill, void *arg,
				  unsigned flags)
{
	enum sbs_kind kind = sbs_kind_of(flags);
	unsigned char *blob = NULL, *keys = NULL, *chunk = NULL;
	struct secbuf_sealed *h = NULL;
	pid_t pid = getpid();
	uint64_t made = 0, gen;
	size_t sealed_len, i;
	int err, r, ensured = 0, kept = 0;

	if ((!plain && !fill) || len == 0 || (flags & ~SBS_FLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	if (sbs_sealed_len(len, &sealed_len) < 0 || sbs_init() < 0)
		return NULL;
	blob = malloc(sealed_len);
	/* The key and room for a new one (a rekey to catch up with), where plaintext goes. */
	keys = blob ? sbs_keys_get(flags, &kept) : NULL;
	if (keys && fill)
		chunk = sbs_buffer(min_chunk(len), flags);
	if (!keys || (fill && !chunk) || sbs_prekey_ensure(kind, flags, &made) < 0)
		goto fail;
	ensured = 1;
	sbs_best_effort_seen(flags);
	sbs_header_write(blob, len, flags);
	randombytes_buf(sbs_nonce(blob), SBS_NONCE);
	sbs_read_lock();
	gen = sbs_prekey_gen(kind);
	r = sbs_prekey_derive(kind, gen, sbs_nonce(blob), keys);
	sbs_read_unlock();
	if (r < 0)
		goto fail;
	for (i = 0; i < sbs_chunks(len); i++) {
		size_t at = i * SECBUF_SEAL_CHUNK, n = sbs_chunk_len(len, i);

		if (fill) {
			errno = 0;
			r = fill(chunk, n, at, arg);
			if (getpid() != pid) {
				/* A child forked in fill: our buffers are its parent's. */
				free(blob);
				errno = ENOKEY;
				return NULL;
			}
			if (r) {
				if (!errno)
					errno = ECANCELED;
				goto fail;
			}
		}
		sbs_chunk_seal(blob, len, i, sbs_nonce(blob), fill ? chunk : plain + at, keys);
		if (fill)
			sodium_memzero(chunk, n);
	}
	sbs_read_lock();
	if (sbs_prekey_gen(kind) != gen) {
		/* A rekey came meanwhile: what was sealed is sealed again under the new prekey. */
		if (!chunk)
			chunk = sbs_buffer(min_chunk(len), flags);
		r = chunk ? sbs_prekey_reseal(kind, blob, len, keys, chunk) : -1;
		gen = sbs_prekey_gen(kind);
	}
	if (r == 0)
		h = sbs_handle_new(blob, len, flags, gen);
	sbs_read_unlock();
	if (!h)
		goto fail;
	sbs_prekey_done(kind, 0);
	sbs_keys_put(keys, kept, pid);
	sbs_buffer_free(chunk, pid);
	return h;
fail:
	err = errno;
	sbs_keys_put(keys, kept, pid);
	sbs_buffer_free(chunk, pid);
	free(blob);
	if (ensured)
		sbs_prekey_done(kind, made);
	errno = err;
	return NULL;
}

SBS_API
secbuf_sealed *secbuf_seal(void *plain, size_t len, unsigned flags)
{
	int saved = errno;
	struct secbuf_sealed *h = seal(plain, len, NULL, NULL, flags);

	if (!h)
		return NULL;
	sodium_memzero(plain, len);
	errno = saved;
	return h;
}

SBS_API
secbuf_sealed *secbuf_seal_fill(size_t len, fill_fn fill, void *arg, unsigned flags)
{
	int saved = errno;
	struct secbuf_sealed *h;

	if (!fill) {
		errno = EINVAL;
		return NULL;
	}
	h = seal(NULL, len, fill, arg, flags);
	if (h)
		errno = saved;
	return h;
}

/* An open under way: the key it derived, and the prekey generation it is for. */
struct opening {
	const struct secbuf_sealed *h;
	unsigned char *key;
	uint64_t gen;
	int keyed, kept;
};

/* Chunk i into m (NULL: its tag only): 0, or -1 with errno; m is wiped on failure. */
static int open_chunk(struct opening *o, size_t i, unsigned char *m)
{
	const struct secbuf_sealed *h = o->h;
	int r = 0;

	sbs_read_lock();
	if (!o->keyed || o->gen != h->gen) {
		r = sbs_prekey_derive(sbs_kind_of(h->flags), h->gen, sbs_nonce(h->blob), o->key);
		o->gen = h->gen;
		o->keyed = r == 0;
	}
	if (r == 0)
		r = sbs_chunk_open(h->blob, h->size, i, sbs_nonce(h->blob), m, o->key);
	sbs_read_unlock();
	return r;
}

/* The plaintext in a new buffer, or NULL with errno; fn names the call for misuse. */
static void *open_whole(const struct secbuf_sealed *h, const char *fn)
{
	struct opening o = { h, NULL, 0, 0, 0 };
	unsigned char *out = NULL;
	pid_t pid = getpid();
	size_t i;
	int err;

	if (!h) {
		errno = EINVAL;
		return NULL;
	}
	sbs_handle_check(h, fn);
	out = sbs_buffer(h->size, h->flags);
	o.key = out ? sbs_keys_get(h->flags, &o.kept) : NULL;
	if (!o.key)
		goto fail;
	for (i = 0; i < sbs_chunks(h->size); i++)
		if (open_chunk(&o, i, out + i * SECBUF_SEAL_CHUNK) < 0)
			goto fail;
	sbs_keys_put(o.key, o.kept, pid);
	return out;
fail:
	err = errno;
	sbs_keys_put(o.key, o.kept, pid);
	sbs_buffer_free(out, pid); /* wiped: what opened before a bad chunk goes too */
	errno = err;
	return NULL;
}

SBS_API
void *secbuf_sealed_open(const secbuf_sealed *s)
{
	int saved = errno;
	void *p = open_whole(s, __func__);

	if (p)
		errno = saved;
	return p;
}

SBS_API
int secbuf_sealed_use(const secbuf_sealed *s, int (*fn)(void *key, size_t len, void *arg),
		      void *arg)
{
	pid_t pid = getpid();
	void *p;
	int r;

	if (!fn) {
		errno = EINVAL;
		return -1;
	}
	p = open_whole(s, __func__);
	if (!p)
		return -1;
	r = fn(p, s->size, arg);
	sbs_buffer_free(p, pid); /* secbuf_free() wipes, and keeps fn's errno */
	return r;
}

SBS_API
int secbuf_sealed_each(const secbuf_sealed *s, fill_fn fn, void *arg)
{
	struct opening o = { s, NULL, 0, 0, 0 };
	unsigned char *chunk = NULL;
	pid_t pid = getpid();
	size_t i, n;
	int r = -1, err;

	if (!s || !fn) {
		errno = EINVAL;
		return -1;
	}
	sbs_handle_check(s, __func__);
	n = sbs_chunks(s->size);
	chunk = sbs_buffer(min_chunk(s->size), s->flags);
	o.key = chunk ? sbs_keys_get(s->flags, &o.kept) : NULL;
	if (!o.key)
		goto fail;
	/*
	 * Every tag before the first chunk is handed over, so that a tampered
	 * secret yields nothing; a rekey in between only re-seals what
	 * opened, under a key derived again.
	 */
	for (i = 0; n > 1 && i < n; i++)
		if (open_chunk(&o, i, NULL) < 0)
			goto fail;
	for (i = 0, r = 0; i < n && r == 0; i++) {
		size_t len = sbs_chunk_len(s->size, i);

		if (open_chunk(&o, i, chunk) < 0)
			goto fail;
		r = fn(chunk, len, i * SECBUF_SEAL_CHUNK, arg);
		if (getpid() != pid)
			return r; /* a child forked in fn: the buffers are its parent's */
		sodium_memzero(chunk, len);
	}
	sbs_keys_put(o.key, o.kept, pid);
	sbs_buffer_free(chunk, pid);
	return r;
fail:
	err = errno;
	sbs_keys_put(o.key, o.kept, pid);
	sbs_buffer_free(chunk, pid);
	errno = err;
	return -1;
}

SBS_API
void secbuf_sealed_free(secbuf_sealed *s)
{
	int saved = errno;

	if (!s)
		return;
	free(sbs_handle_free(s, __func__));
	errno = saved;
}

SBS_API
size_t secbuf_sealed_size(const secbuf_sealed *s)
{
	if (!s)
		return 0;
	sbs_handle_check(s, __func__);
	return s->size;
}

SBS_API
int secbuf_seal_rekey(void)
{
	int saved = errno;

	if (sbs_init() < 0 || sbs_prekey_rekey() < 0)
		return -1;
	errno = saved;
	return 0;
}

SBS_API
size_t secbuf_sealed_export(const secbuf_sealed *s, void *out, size_t len)
{
	size_t sealed_len;

	if (!s) {
		errno = EINVAL;
		return 0;
	}
	sbs_handle_check(s, __func__);
	(void)sbs_sealed_len(s->size, &sealed_len); /* checked when it was sealed */
	if (out && len >= sealed_len) {
		sbs_read_lock(); /* a rekey rewrites the bytes in place */
		memcpy(out, s->blob, sealed_len);
		sbs_read_unlock();
	}
	return sealed_len;
}

SBS_API
secbuf_sealed *secbuf_sealed_import(const void *data, size_t len)
{
	struct secbuf_sealed *h;
	unsigned char *blob;
	unsigned flags;
	size_t size;
	int saved = errno;

	if (!data) {
		errno = EINVAL;
		return NULL;
	}
	if (sbs_header_read(data, len, &size, &flags) < 0 || sbs_init() < 0)
		return NULL;
	blob = malloc(len);
	if (!blob)
		return NULL;
	memcpy(blob, data, len);
	/*
	 * Named after this process's prekey of its kind, if it has one: a
	 * copy of its own opens, bytes from elsewhere fail their tags.
	 * Without one (0), it cannot have been sealed here.
	 */
	sbs_read_lock();
	h = sbs_handle_new(blob, size, flags, sbs_prekey_gen(sbs_kind_of(flags)));
	sbs_read_unlock();
	if (!h) {
		free(blob);
		return NULL;
	}
	errno = saved;
	return h;
}

SBS_API
int secbuf_seal_stat(struct secbuf_seal_stat *st)
{
	if (!st) {
		errno = EINVAL;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	if (sbs_init() < 0)
		return -1;
	sbs_handle_totals(&st->sealed, &st->bytes, &st->sealed_bytes);
	st->prekey_method = sbs_prekey_method(SBS_OWN);
	st->inherit_prekey_method = sbs_prekey_method(SBS_INHERITED);
	st->rekeys = sbs_rekeys();
	return 0;
}
