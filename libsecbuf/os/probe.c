/*
 * Kernel capability probe and SECBUF_LOCK: done once per process
 * (pthread_once), then read-only.  It decides the method and nothing
 * else; init.c wires up the rest of the library after it.
 *
 * A feature counts as present only when a call that uses it succeeds
 * (prove.c).  What an error does tell is why a lock cannot be had: that
 * is what a strict allocation then fails with.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "os.h"

static struct sb_caps caps;
size_t sb_pagesize;
static pthread_once_t caps_once = PTHREAD_ONCE_INIT;

static void probe_kernel(void)
{
	caps.map_lockonfault = sb_prove_map_lockonfault(caps.page);
	caps.mlock2_onfault = sb_prove_mlock2_onfault(caps.page);
	/* Why lazy buffers cannot be locked if neither was proven. */
	if (sb_lock_refused(caps.mlock2_onfault))
		caps.lazy_err = caps.mlock2_onfault;
	else if (sb_lock_refused(caps.map_lockonfault))
		caps.lazy_err = caps.map_lockonfault;
	else
		caps.lazy_err = EOPNOTSUPP;
}

static int default_method(void)
{
	if (!caps.map_lockonfault)
		return SECBUF_LOCK_MAP_LOCKONFAULT;
	if (!caps.mlock2_onfault)
		return SECBUF_LOCK_MLOCK2_ONFAULT;
	return SECBUF_LOCK_MLOCK;
}

/* A forced method that was not proven is an error: ENOSYS, or why it was refused. */
static int forced_method(const char *name)
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
		err = caps.map_lockonfault;
	else if (m == SECBUF_LOCK_MLOCK2_ONFAULT)
		err = caps.mlock2_onfault;
	if (err) {
		errno = sb_lock_refused(err) ? err : ENOSYS;
		return -1;
	}
	/* Forced: lazy buffers under mlock or none are unsupported by choice. */
	caps.lazy_err = EOPNOTSUPP;
	return m;
}

static void caps_init(void)
{
	const char *force = secure_getenv("SECBUF_LOCK");
	int saved = errno;

	caps.page = sysconf(_SC_PAGESIZE);
	sb_pagesize = caps.page;
	probe_kernel();
	caps.method = force && *force ? forced_method(force) : default_method();
	caps.err = caps.method < 0 ? errno : 0;
	errno = saved;
}

const struct sb_caps *sb_caps(void)
{
	pthread_once(&caps_once, caps_init);
	return &caps;
}

SB_API
const char *secbuf_lock_method_name(int method)
{
	static const char *const names[] = {
		[SECBUF_LOCK_MAP_LOCKONFAULT] = "maplockonfault",
		[SECBUF_LOCK_MLOCK2_ONFAULT] = "mlock2",
		[SECBUF_LOCK_MLOCK] = "mlock",
		[SECBUF_LOCK_NONE] = "none",
	};

	if (method < 0 || method > SECBUF_LOCK_NONE)
		return NULL;
	return names[method];
}
