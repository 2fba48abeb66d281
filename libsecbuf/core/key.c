/*
 * The per-process key of the PRF behind canaries, metadata check values and
 * registry slots.  It lives alone in a page between two guard pages, locked
 * where the process may lock memory, left out of core dumps
 * (MADV_DONTDUMP) and zeroed in forked children (MADV_WIPEONFORK).  A child
 * that uses the library draws a key of its own, so a child's canaries tell
 * nothing about its parent's, nor the other way round.
 *
 * The page is named [anon:secbuf-key] and the key is its first 16 bytes:
 * the core-dump proof searches a core for them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>
#include "core.h"

struct key_page {
	uint64_t prf[2];
	uint64_t epoch;	 /* of this draw; 0 where the kernel zeroed the page */
	uint64_t mix[4]; /* sb_key_mix()'s keys, from the PRF key */
};

static struct key_page *key; /* NULL until mapped, and in children on old kernels */
const uint64_t *sb_mix_keys; /* key->mix once drawn: sb_key_mix() is inline */
static uint64_t last_epoch;  /* inherited: a child's first draw moves past it */
static int dropped_on_fork;  /* kernel < 4.14: children do not get the page at all */
static int key_locked;	     /* this process holds the page locked */
static int kept_on_fork;     /* children keep the key: sb_key_inherit() */
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;

static int map_key_page(void)
{
	size_t page = sysconf(_SC_PAGESIZE);
	unsigned char *base;
	int ret, err;

	base = mmap(NULL, 3 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -1;
	ret = mprotect(base + page, page, PROT_READ | PROT_WRITE);
	if (ret == 0)
		ret = sb_advise_secret(base + page, page, 0);
	if (ret >= 0) {
		dropped_on_fork = ret;
		ret = sb_name_range(base, 3 * page, "secbuf-key");
	}
	if (ret < 0) {
		err = errno;
		if (munmap(base, 3 * page) < 0)
			sb_misuse("key page: munmap(%p) failed: %m", (void *)base);
		errno = err;
		return -1;
	}
	__atomic_store_n(&key, (struct key_page *)(base + page), __ATOMIC_RELEASE);
	return 0;
}

/*
 * Lock the page before the key is written into it.  Locks are not
 * inherited, so a child locks again.  Refused (RLIMIT_MEMLOCK, no
 * privilege, no mlock at all): the key stays unlocked for now, and
 * sb_key_lock() tries again before each allocation until it holds.
 */
static int lock_key_page(void)
{
	int ret = sb_lock_range(key, sizeof(*key), SECBUF_LOCK_MLOCK);

	__atomic_store_n(&key_locked, ret == 0, __ATOMIC_RELAXED);
	if (ret == 0 || sb_lock_unavailable(errno))
		return 0;
	return -1;
}

int sb_key_lock(void)
{
	int ret = 0;

	if (__atomic_load_n(&key_locked, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&key_lock);
	if (!key_locked && sb_lock_range(key, sizeof(*key), SECBUF_LOCK_MLOCK) < 0)
		ret = -1;
	else
		__atomic_store_n(&key_locked, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&key_lock);
	return ret;
}

static int draw(void)
{
	uint64_t fresh[2];
	size_t got = 0;
	ssize_t n;

	if (!key && map_key_page() < 0)
		return -1;
	if (lock_key_page() < 0)
		return -1;
	/* Straight into the page: no copy of the key on the stack. */
	while (got < sizeof(fresh)) {
		n = getrandom((unsigned char *)key->prf + got, sizeof(fresh) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		got += n;
	}
	for (got = 0; got < 4; got++) {
		uint64_t in[2] = { SB_PRF_MIX, got };

		key->mix[got] = sb_siphash24(key->prf, in, sizeof(in));
	}
	key->mix[1] |= 1; /* multipliers: odd, so that each step is a bijection */
	key->mix[3] |= 1;
	__atomic_store_n(&sb_mix_keys, key->mix, __ATOMIC_RELEASE);
	__atomic_store_n(&last_epoch, last_epoch + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&key->epoch, last_epoch, __ATOMIC_RELEASE);
	return 0;
}

uint64_t sb_key_epoch(void)
{
	struct key_page *k = __atomic_load_n(&key, __ATOMIC_ACQUIRE);

	return k ? __atomic_load_n(&k->epoch, __ATOMIC_ACQUIRE) : 0;
}

int sb_key_ready(void)
{
	int ret = 0;

	if (sb_key_epoch())
		return 0;
	pthread_mutex_lock(&key_lock);
	if (!sb_key_epoch())
		ret = draw();
	pthread_mutex_unlock(&key_lock);
	return ret;
}

uint64_t sb_prf(enum sb_prf_use use, const uint64_t *w, size_t n)
{
	struct sb_siphash s;
	uint64_t out;
	size_t i;

	if (!sb_key_epoch())
		sb_misuse("internal error: the key was used before it was drawn");
	sb_siphash_init(&s, key->prf);
	sb_siphash_word(&s, use);
	for (i = 0; i < n; i++)
		sb_siphash_word(&s, w[i]);
	out = sb_siphash_final(&s);
	sb_wipe(&s, sizeof(s)); /* run backwards, it would give the key */
	return out;
}

/*
 * Inherited buffers are checked in the child with the keys they were made
 * under: from the first one on, children keep the key page.
 */
int sb_key_inherit(void)
{
	int ret = 0;

	if (__atomic_load_n(&kept_on_fork, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&key_lock);
	if (!kept_on_fork) {
		size_t page = sysconf(_SC_PAGESIZE);

		ret = key ? sb_advise_keep(key, page, dropped_on_fork) : (errno = EINVAL, -1);
		if (ret == 0) {
			dropped_on_fork = 0;
			__atomic_store_n(&kept_on_fork, 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&key_lock);
	return ret;
}

int sb_key_kept(void)
{
	return __atomic_load_n(&kept_on_fork, __ATOMIC_ACQUIRE);
}

void sb_key_fork_prepare(void)
{
	pthread_mutex_lock(&key_lock);
}

void sb_key_fork_parent(void)
{
	pthread_mutex_unlock(&key_lock);
}

/* The child finds the page zeroed (epoch 0), or on old kernels no page. */
void sb_key_fork_child(void)
{
	key_locked = 0; /* locks are not inherited */
	if (dropped_on_fork) {
		key = NULL;
		sb_mix_keys = NULL;
	}
	pthread_mutex_unlock(&key_lock);
}
