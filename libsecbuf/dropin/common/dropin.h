/*
 * dropin/common/: what the drop-ins share.  Each drop-in (dropin/sodium/,
 * dropin/openssl/) is a preloadable library that gives another library's
 * secure-memory calls libsecbuf memory; it names itself with a struct
 * sb_dropin, and these calls speak in that name.
 *
 * May use: init.h (the whole library), never a drop-in's folder.
 */
#ifndef SECBUF_DROPIN_H
#define SECBUF_DROPIN_H

#include "init.h"

struct sb_dropin {
	const char *lib;  /* "libsecbuf-sodium": the prefix of every message */
	const char *call; /* "sodium_malloc()": what the warnings say is affected */
};

/*
 * env.c: the allocation flags the environment asks for, read once:
 * SECBUF_BEST_EFFORT unless SECBUF_STRICT says yes, SECBUF_SECRET if
 * SECBUF_SECRET says yes.  -1 with errno EINVAL if either is neither a
 * yes nor a no.  At the first call, a bad value of these, of SECBUF_DEBUG
 * or of SECBUF_LOCK is said once on stderr, and the drop-in starts
 * listening for refusals (warn.c).
 */
SB_HIDDEN int sb_dropin_flags(const struct sb_dropin *d);
/*
 * SECBUF_PURGE_ON_CRASH=1 (crashes) or =exit (crashes and exit): the
 * purge handlers, installed from each drop-in's constructor.
 */
SB_HIDDEN void sb_dropin_purge_from_environment(const struct sb_dropin *d);

/*
 * warn.c: one line each, once per process, with the way out.  After an
 * allocation of size bytes with flags that got method: memory outside the
 * secret tier that SECBUF_SECRET asked for, or memory not locked at all.
 */
SB_HIDDEN void sb_dropin_warn_method(const struct sb_dropin *d, unsigned flags, int method,
				     size_t size);
/*
 * From now on, a failed allocation of d's that a refused lock made fail
 * (SECBUF_STRICT) is said on one line: once per process, or with every
 * (SECBUF_DEBUG says yes).  Called at every allocation; sets up once.
 */
SB_HIDDEN void sb_dropin_listen(const struct sb_dropin *d, int every);
/* The write(2) under the messages: not stdio, which may be what is broken. */
SB_HIDDEN void sb_dropin_say(const char *msg, int n, size_t cap);

#endif
