/*
 * Kernel capability probe, SECBUF_LOCK and the per-process secret: done once
 * per process (pthread_once), then read-only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif
#ifndef MLOCK_LOCKED
#define MLOCK_LOCKED 0x02
#endif

static struct sb_caps caps;
static pthread_once_t caps_once = PTHREAD_ONCE_INIT;

/*
 * mlock2 checks its flags before anything else, so EPERM (RLIMIT_MEMLOCK 0,
 * unprivileged) or ENOMEM (already over the limit) still proves the flag is
 * known; a stock kernel says EINVAL.
 * A zero length touches no page, so no mapping (and no mmap that could fail
 * and be cached as a failure for the life of the process) is needed.
 */
static int mlock2_accepts(int flags)
{
	if (syscall(SYS_mlock2, NULL, 0, flags) == 0)
		return 1;
	return errno == EPERM || errno == ENOMEM;
}

static void probe_kernel(void)
{
	caps.has_lockonfault_mmap = mlock2_accepts(MLOCK_LOCKED);
	caps.has_mlock2_onfault = mlock2_accepts(MLOCK_ONFAULT);
}

static int default_method(void)
{
	if (caps.has_lockonfault_mmap)
		return SECBUF_LOCK_MAP_LOCKONFAULT;
	if (caps.has_mlock2_onfault)
		return SECBUF_LOCK_MLOCK2_ONFAULT;
	return SECBUF_LOCK_MLOCK;
}

static int forced_method(const char *name)
{
	int m;

	for (m = SECBUF_LOCK_MAP_LOCKONFAULT; m <= SECBUF_LOCK_NONE; m++)
		if (strcmp(name, secbuf_lock_method_name(m)) == 0)
			break;
	if (m > SECBUF_LOCK_NONE) {
		errno = EINVAL;
		return -1;
	}
	if ((m == SECBUF_LOCK_MAP_LOCKONFAULT && !caps.has_lockonfault_mmap) ||
	    (m == SECBUF_LOCK_MLOCK2_ONFAULT && !caps.has_mlock2_onfault)) {
		errno = ENOSYS;
		return -1;
	}
	return m;
}

static int init_secret(void)
{
	unsigned char *p = (unsigned char *)caps.secret;
	size_t got = 0;

	while (got < sizeof(caps.secret)) {
		ssize_t n = getrandom(p + got, sizeof(caps.secret) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		got += n;
	}
	return 0;
}

static void caps_init(void)
{
	const char *force = secure_getenv("SECBUF_LOCK");
	int saved = errno;

	caps.page = sysconf(_SC_PAGESIZE);
	probe_kernel();
	if (init_secret() < 0) {
		caps.method = -1;
		caps.err = errno;
	} else {
		caps.method = force && *force ? forced_method(force) :
						default_method();
		caps.err = caps.method < 0 ? errno : 0;
	}
	errno = saved;
}

const struct sb_caps *sb_caps(void)
{
	pthread_once(&caps_once, caps_init);
	return &caps;
}

SB_API
int secbuf_lock_method(void)
{
	const struct sb_caps *c = sb_caps();

	if (c->method < 0)
		errno = c->err;
	return c->method;
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
