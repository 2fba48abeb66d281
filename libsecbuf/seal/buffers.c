/*
 * The secbuf buffers that plaintext and derived keys pass through, and
 * the secret tier's room.  Keys' buffers are kept for reuse, empty: each
 * key is wiped as soon as its chunks are sealed or opened, but mapping
 * and locking a fresh page per open would add about a third to its cost
 * (bench/results/seal.md).  Only strict ones (locked, not
 * secret memory) are kept, a few; a forked child forgets its parent's.
 * Secret memory past RLIMIT_MEMLOCK, which Debian's kernels would answer
 * with SIGBUS at the first write past it, libsecbuf itself refuses
 * (EAGAIN): it counts the process's own secret mappings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "seal.h"

#define KEYS_KEPT 8

static unsigned char *kept_keys[KEYS_KEPT];
static int nkept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

void *sbs_buffer(size_t size, unsigned flags)
{
	unsigned f = flags & SBS_OPEN_FLAGS;
	void *p;

	if (f & SECBUF_SECRET) {
		/* libsecbuf refuses secret memory past RLIMIT_MEMLOCK itself (EAGAIN). */
		if ((p = secbuf_alloc_flags(size, f & ~SECBUF_BEST_EFFORT)) != NULL)
			return p;
		if (!(f & SECBUF_BEST_EFFORT))
			return NULL;
		f &= ~SECBUF_SECRET;
	}
	/*
	 * Every byte is written at once: populated, which is also what plain
	 * mlock locks.  (Secret memory is left to that writing: some kernels
	 * refuse MADV_POPULATE_WRITE on it.)
	 */
	return secbuf_alloc_flags(size, f | SECBUF_POPULATE);
}

void sbs_buffer_free(void *p, pid_t pid)
{
	/* A forked child returning through our frame: the buffer is its parent's, zeros here. */
	if (getpid() != pid)
		return;
	secbuf_free(p);
}

unsigned char *sbs_keys_get(unsigned flags, int *kept)
{
	unsigned char *p = NULL;

	*kept = 0;
	if (!(flags & SECBUF_SECRET)) {
		pthread_mutex_lock(&kept_lock);
		if (nkept)
			p = kept_keys[--nkept];
		pthread_mutex_unlock(&kept_lock);
		/* Best effort tries no strict lock of its own: its refusal would be reported. */
		if (!p && !(flags & SECBUF_BEST_EFFORT))
			p = secbuf_alloc_flags(SBS_KEYS, SECBUF_POPULATE);
		if (p || !(flags & SECBUF_BEST_EFFORT)) {
			*kept = p != NULL;
			return p;
		}
	}
	return sbs_buffer(SBS_KEYS, flags);
}

void sbs_keys_put(unsigned char *p, int kept, pid_t pid)
{
	if (!p || getpid() != pid)
		return;
	sodium_memzero(p, SBS_KEYS);
	if (kept) {
		pthread_mutex_lock(&kept_lock);
		if (nkept < KEYS_KEPT) {
			kept_keys[nkept++] = p;
			p = NULL;
		}
		pthread_mutex_unlock(&kept_lock);
	}
	secbuf_free(p);
}

void sbs_keys_fork_prepare(void)
{
	pthread_mutex_lock(&kept_lock);
}

void sbs_keys_fork_parent(void)
{
	pthread_mutex_unlock(&kept_lock);
}

void sbs_keys_fork_child(void)
{
	/* Zeros here, and the parent's: libsecbuf would abort on their free. */
	nkept = 0;
	pthread_mutex_init(&kept_lock, NULL);
}
