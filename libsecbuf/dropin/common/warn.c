/*
 * The drop-ins' warnings: memory handed out that is not what was asked
 * for.  The replaced libraries hand such memory out without a word; we
 * hand it out too (unless SECBUF_STRICT says yes), but say so, once per
 * process, with the way out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include "dropin.h"

static int warned;	  /* the one warning about unlocked memory was printed */
static int warned_secret; /* ... about memory outside the secret tier */

void sb_dropin_say(const char *msg, int n, size_t cap)
{
	if (n > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)n < cap ? (size_t)n : cap - 1);
}

/* The memory is not locked: why, and the fix. */
void sb_dropin_warn_unlocked(const struct sb_dropin *d)
{
	const struct sb_caps *caps = sb_caps();
	struct rlimit rl = { 0, 0 };
	char msg[400];
	const char *why;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	if (caps->method == SECBUF_LOCK_NONE || caps->method == SECBUF_LOCK_MLOCK)
		why = secure_getenv("SECBUF_LOCK") ? "SECBUF_LOCK names no method that locks on fault" :
			"this kernel cannot lock memory on fault";
	else
		why = "the lock was refused: RLIMIT_MEMLOCK is spent (raise it: ulimit -l, "
		      "LimitMEMLOCK=) or the process may not lock memory";
	getrlimit(RLIMIT_MEMLOCK, &rl);
	sb_dropin_say(msg,
		      snprintf(msg, sizeof(msg),
			       "%s: %s[%d]: warning: %s memory is NOT locked and may be swapped "
			       "(%s; RLIMIT_MEMLOCK %ld kB); SECBUF_STRICT=1 refuses instead\n",
			       d->lib, program_invocation_short_name, (int)getpid(), d->call, why,
			       rl.rlim_cur == RLIM_INFINITY ? -1L : (long)(rl.rlim_cur / 1024)),
		      sizeof(msg));
}

/* SECBUF_SECRET asked for what this kernel or sandbox would not give. */
void sb_dropin_warn_not_secret(const struct sb_dropin *d, int method)
{
	char msg[300];

	if (__atomic_exchange_n(&warned_secret, 1, __ATOMIC_RELAXED))
		return;
	sb_dropin_say(msg,
		      snprintf(msg, sizeof(msg),
			       "%s: %s[%d]: warning: %s memory is NOT secret memory but %s "
			       "(memfd_secret failed; before Linux 6.5 boot with secretmem.enable=1); "
			       "SECBUF_STRICT=1 refuses instead\n",
			       d->lib, program_invocation_short_name, (int)getpid(), d->call,
			       secbuf_lock_method_name(method)),
		      sizeof(msg));
}

void sb_dropin_warn_method(const struct sb_dropin *d, unsigned flags, int method)
{
	if ((flags & SECBUF_SECRET) && method != SECBUF_LOCK_SECRETMEM)
		sb_dropin_warn_not_secret(d, method);
	if (method == SECBUF_LOCK_NONE)
		sb_dropin_warn_unlocked(d);
}
