/*
 * The secbuf buffers that plaintext and derived keys pass through, and
 * the secret tier's room.  Keys' buffers are kept for reuse, empty: each
 * key is wiped as soon as its chunks are sealed or opened, but mapping
 * and locking a fresh page per open would add about a third to its cost
 * (bench/results/seal.md).  Only strict ones (locked, not
 * secret memory) are kept, a few; a forked child forgets its parent's.
 *  Debian's kernels charge memfd_secret pages to
 * RLIMIT_MEMLOCK per user at each page's first touch, sparing nobody: a
 * secret buffer mapped past the limit is handed out, and the write that
 * crosses it is SIGBUS.  Secret memory is therefore asked for only while
 * this process's own secret mappings plus the new one stay within the
 * limit (other processes of the user are not seen: the limit is per
 * process everywhere else, and the kernels that charge at mmap refuse
 * with EAGAIN themselves).
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

/* A packed secret in secret memory may need a new slab: a whole 256 KiB block. */
#define SECRET_SLAB ((size_t)256 << 10)
#define KEYS_KEPT   8

static unsigned char *kept_keys[KEYS_KEPT];
static int nkept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

/* Bytes of this process's memfd_secret mappings: 0, or -1 with errno. */
static int secret_bytes(size_t *bytes)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned long start, end;

	if (!f)
		return -1;
	*bytes = 0;
	while (getline(&line, &cap, f) > 0)
		if (strstr(line, " /secretmem") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			*bytes += end - start;
	free(line);
	fclose(f);
	return 0;
}

int sbs_secret_room(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), have, need;
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		return -1;
	if (rl.rlim_cur == RLIM_INFINITY)
		return 0;
	if (size > rl.rlim_cur) {
		errno = EAGAIN;
		return -1;
	}
	/* The data pages libsecbuf maps: the bytes and its 16-byte canary. */
	need = (size + 16 + page - 1) / page * page;
	if (secret_bytes(&have) < 0)
		return -1;
	if (have > rl.rlim_cur || need > rl.rlim_cur - have) {
		errno = EAGAIN;
		return -1;
	}
	return 0;
}

void *sbs_buffer(size_t size, unsigned flags)
{
	unsigned f = flags & SBS_OPEN_FLAGS;
	size_t need = (f & SECBUF_PACKED) && size <= SECBUF_PACKED_MAX ? SECRET_SLAB : size;
	void *p;

	if (f & SECBUF_SECRET) {
		if (sbs_secret_room(need) == 0 &&
		    (p = secbuf_alloc_flags(size, f & ~SECBUF_BEST_EFFORT)) != NULL)
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
