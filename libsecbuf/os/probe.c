/*
 * Kernel capability probe and SECBUF_LOCK.  It decides the method and
 * nothing else; init.c wires up the rest of the library after it.
 *
 * A feature counts as present only when a call that uses it succeeds
 * (prove.c).  What an error does tell is why a lock cannot be had: that
 * is what a strict allocation then fails with.  A refused proof (the lock
 * budget spent at that moment) proves nothing either way, so the probe is
 * made again at each allocation until every proof has an answer; a
 * process is not demoted for life by a busy moment at its first call.
 *
 * The result is published as a whole, by pointer, so a reader never sees
 * half of one probe and half of the next.  It changes only while proofs
 * are refused, at most once per proof and the final answer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "os.h"

#define VERSIONS 4 /* the first probe, one change per proof, and spare */

static struct sb_caps versions[VERSIONS];
static const struct sb_caps *current;
static unsigned int nversions;
static int pending; /* a proof was refused: probe again */
size_t sb_pagesize;
static pthread_once_t caps_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t reprobe_lock = PTHREAD_MUTEX_INITIALIZER;

static void probe_kernel(struct sb_caps *caps)
{
	caps->map_lockonfault = sb_prove_map_lockonfault(caps->page);
	caps->mlock2_onfault = sb_prove_mlock2_onfault(caps->page);
	/* Why lazy buffers cannot be locked if neither was proven. */
	if (sb_lock_refused(caps->mlock2_onfault))
		caps->lazy_err = caps->mlock2_onfault;
	else if (sb_lock_refused(caps->map_lockonfault))
		caps->lazy_err = caps->map_lockonfault;
	else
		caps->lazy_err = EOPNOTSUPP;
}

static int default_method(const struct sb_caps *caps)
{
	if (!caps->map_lockonfault)
		return SECBUF_LOCK_MAP_LOCKONFAULT;
	if (!caps->mlock2_onfault)
		return SECBUF_LOCK_MLOCK2_ONFAULT;
	return SECBUF_LOCK_MLOCK;
}

/* A forced method that was not proven is an error: ENOSYS, or why it was refused. */
static int forced_method(struct sb_caps *caps, const char *name)
{
	int m, err = 0;

	for (m = SECBUF_LOCK_MAP_LOCKONFAULT; m <= SECBUF_LOCK_NONE; m++)
		if (strcmp(name, secbuf_lock_method_name(m)) == 0)
			break;
	if (m > SECBUF_LOCK_NONE) {
		errno = EINVAL;
		return -1;
	}
	if (m == SECBUF_LOCK_MAP_LOCKONFAULT)
		err = caps->map_lockonfault;
	else if (m == SECBUF_LOCK_MLOCK2_ONFAULT)
		err = caps->mlock2_onfault;
	if (err) {
		errno = sb_lock_refused(err) ? err : ENOSYS;
		return -1;
	}
	/* Forced: lazy buffers under mlock or none are unsupported by choice. */
	caps->lazy_err = EOPNOTSUPP;
	return m;
}

/* Probe into c; whether a proof was refused (and may succeed later). */
static int probe(struct sb_caps *c)
{
	const char *force = secure_getenv("SECBUF_LOCK");

	c->page = sysconf(_SC_PAGESIZE);
	probe_kernel(c);
	c->method = force && *force ? forced_method(c, force) : default_method(c);
	c->err = c->method < 0 ? errno : 0;
	return sb_lock_refused(c->map_lockonfault) || sb_lock_refused(c->mlock2_onfault);
}

static void caps_init(void)
{
	int saved = errno;

	pending = probe(&versions[0]);
	nversions = 1;
	sb_pagesize = versions[0].page;
	__atomic_store_n(&current, &versions[0], __ATOMIC_RELEASE);
	errno = saved;
}

const struct sb_caps *sb_caps(void)
{
	const struct sb_caps *c = __atomic_load_n(&current, __ATOMIC_ACQUIRE);

	if (__builtin_expect(c != NULL, 1))
		return c;
	pthread_once(&caps_once, caps_init);
	return __atomic_load_n(&current, __ATOMIC_ACQUIRE);
}

static int same(const struct sb_caps *a, const struct sb_caps *b)
{
	return a->method == b->method && a->err == b->err && a->lazy_err == b->lazy_err &&
	       a->map_lockonfault == b->map_lockonfault && a->mlock2_onfault == b->mlock2_onfault;
}

/* A new answer is published only if it differs: readers keep theirs. */
static void reprobe(void)
{
	struct sb_caps c;
	int saved = errno, again;

	pthread_mutex_lock(&reprobe_lock);
	if (!pending)
		goto out;
	again = probe(&c);
	if (!same(&c, current)) {
		if (nversions == VERSIONS) /* cannot happen: each proof settles once */
			goto out;
		versions[nversions] = c;
		__atomic_store_n(&current, &versions[nversions++], __ATOMIC_RELEASE);
	}
	__atomic_store_n(&pending, again && nversions < VERSIONS, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&reprobe_lock);
	errno = saved;
}

int sb_caps_pending(void)
{
	return __atomic_load_n(&pending, __ATOMIC_ACQUIRE);
}

const struct sb_caps *sb_caps_refresh(void)
{
	const struct sb_caps *c = sb_caps();

	if (__builtin_expect(__atomic_load_n(&pending, __ATOMIC_ACQUIRE), 0)) {
		reprobe();
		c = sb_caps();
	}
	return c;
}

SB_API
const char *secbuf_lock_method_name(int method)
{
	static const char *const names[] = {
		[SECBUF_LOCK_MAP_LOCKONFAULT] = "maplockonfault",
		[SECBUF_LOCK_MLOCK2_ONFAULT] = "mlock2",
		[SECBUF_LOCK_MLOCK] = "mlock",
		[SECBUF_LOCK_NONE] = "none",
		[SECBUF_LOCK_SECRETMEM] = "secretmem",
	};

	if (method < 0 || method > SECBUF_LOCK_SECRETMEM)
		return NULL;
	return names[method];
}
