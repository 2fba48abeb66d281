/*
 * The drop-ins' messages: memory handed out that is not what was asked
 * for, and memory refused.  The replaced libraries hand unlocked memory
 * out without a word; we hand it out too (unless SECBUF_STRICT says yes),
 * but say so, once per process, with the way out.  Under SECBUF_STRICT
 * the allocation fails instead, and its caller says only "malloc
 * failure": the refusal is said here, once per process (each time under
 * SECBUF_DEBUG).  Every cause comes from os/explain.c's sb_diagnose(), as
 * secbuf_last_failure()'s does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dropin.h"

static int warned;	  /* the one warning about unlocked memory was printed */
static int warned_secret; /* ... about memory outside the secret tier */
static int said_refused;  /* ... about a refusal */
/* The drop-in whose allocations fail: one per library, as each carries its own libsecbuf. */
static const struct sb_dropin *listening;
static int say_every; /* SECBUF_DEBUG: every refusal, not the first only */

void sb_dropin_say(const char *msg, int n, size_t cap)
{
	if (n > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)n < cap ? (size_t)n : cap - 1);
}

/*
 * The refusal of this allocation in the tier asked for, as the kernel
 * call saw it; else (the memory came from a slab another thread could
 * not lock) what is known: the size asked for.
 */
static void refusal(int secret, size_t size, struct sb_refusal *f)
{
	if (sb_refusal_get(secret, f))
		return;
	f->call = SB_CALL_NONE;
	f->err = 0;
	f->len = size;
}

/* The memory is not locked: why, and the fix (size: the allocation's). */
static void warn_unlocked(const struct sb_dropin *d, size_t size)
{
	const struct sb_caps *caps = sb_caps();
	struct sb_lockroom room;
	struct sb_refusal f;
	char msg[900], why[700];
	size_t at = 0;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	/* The method cannot lock lazily (why: the probe's), or this lock was refused. */
	if (caps->method == SECBUF_LOCK_NONE || caps->method == SECBUF_LOCK_MLOCK) {
		sb_explain_method(why, sizeof(why));
	} else {
		refusal(0, size, &f);
		sb_lockroom(&room);
		sb_diagnose(&f, &room, why, sizeof(why), &at);
	}
	sb_dropin_say(msg,
		      snprintf(msg, sizeof(msg),
			       "%s: %s[%d]: warning: %s memory is NOT locked and may be swapped "
			       "(%s); SECBUF_STRICT=1 refuses instead\n",
			       d->lib, program_invocation_short_name, (int)getpid(), d->call, why),
		      sizeof(msg));
}

/* SECBUF_SECRET asked for what this kernel, its limit or a sandbox would not give. */
static void warn_not_secret(const struct sb_dropin *d, int method, size_t size)
{
	struct sb_lockroom room;
	struct sb_refusal f;
	char msg[900], why[700];
	size_t at = 0;

	if (__atomic_exchange_n(&warned_secret, 1, __ATOMIC_RELAXED))
		return;
	refusal(1, size, &f);
	if (f.call == SB_CALL_NONE) {
		snprintf(why, sizeof(why), "memfd_secret was refused earlier, in another thread");
	} else {
		sb_lockroom(&room);
		sb_diagnose(&f, &room, why, sizeof(why), &at);
	}
	sb_dropin_say(msg,
		      snprintf(msg, sizeof(msg),
			       "%s: %s[%d]: warning: %s memory is %s (%s), NOT secret memory "
			       "(%s); SECBUF_STRICT=1 refuses instead\n",
			       d->lib, program_invocation_short_name, (int)getpid(), d->call,
			       method == SECBUF_LOCK_NONE ? "plain memory" : "locked memory",
			       secbuf_lock_method_name(method), why),
		      sizeof(msg));
}

void sb_dropin_warn_method(const struct sb_dropin *d, unsigned flags, int method, size_t size)
{
	if ((flags & SECBUF_SECRET) && method != SECBUF_LOCK_SECRETMEM)
		warn_not_secret(d, method, size);
	if (method == SECBUF_LOCK_NONE)
		warn_unlocked(d, size);
}

/*
 * Whether a lock's refusal made an allocation with flags fail with err:
 * the refused call into *f (REFUSED_CALL), or none, the method not
 * locking lazily (REFUSED_LAZY); 0 if something else did (a refused
 * madvise, memory: a failed allocation like any other, which errno
 * tells).  Strict only: a refused lock under SECBUF_BEST_EFFORT falls
 * back, and SECBUF_LOCK's own failures are env.c's to say.  Cheap: no
 * /proc, since a refusal after the first is said only under SECBUF_DEBUG.
 */
enum { REFUSED_NOT, REFUSED_CALL, REFUSED_LAZY };
static int refused(unsigned flags, int err, struct sb_refusal *f)
{
	const struct sb_caps *caps = sb_caps();

	if (caps->method < 0 || (flags & SECBUF_BEST_EFFORT))
		return REFUSED_NOT;
	if (sb_refusal_of(flags, err, f))
		return REFUSED_CALL;
	if (!(flags & SECBUF_SECRET) && (err == EOPNOTSUPP || sb_lock_unavailable(err)) &&
	    (caps->method == SECBUF_LOCK_MLOCK || caps->method == SECBUF_LOCK_NONE))
		return REFUSED_LAZY;
	return REFUSED_NOT;
}

/* The cause of a refusal of that kind, into why, with the fix after it. */
static void refused_why(int kind, const struct sb_refusal *f, char *why, size_t len)
{
	struct sb_lockroom room;
	size_t at = 0;
	int n;

	if (kind == REFUSED_CALL) {
		sb_lockroom(&room);
		sb_diagnose(f, &room, why, len, &at);
		snprintf(why + at, len - at, "; or SECBUF_STRICT=0 for %s",
			 f->call == SB_CALL_MEMFD_SECRET || f->call == SB_CALL_SECRET_MMAP ?
				 "locked memory outside the secret tier" :
				 "unlocked memory");
		return;
	}
	/* No call was refused: the method cannot lock lazily, and the probe says why. */
	n = snprintf(why, len, "no lock on fault: ");
	sb_explain_method(why + n, len - n);
	at = n + strlen(why + n);
	snprintf(why + at, len - at, "; or SECBUF_STRICT=0 for unlocked memory");
}

/*
 * A failed allocation (core/report.c), size 0 when it failed before its
 * size mattered: at libsecbuf's key page, which must be locked before any
 * secret is, so that every allocation is refused until it can be.
 */
static void on_failure(size_t size, unsigned flags, int err)
{
	const struct sb_dropin *d = __atomic_load_n(&listening, __ATOMIC_ACQUIRE);
	char msg[1000], why[800], what[120];
	struct sb_refusal f;
	int kind;

	if (!d || !(kind = refused(flags, err, &f)))
		return;
	if (__atomic_exchange_n(&said_refused, 1, __ATOMIC_RELAXED) && !say_every)
		return;
	refused_why(kind, &f, why, sizeof(why));
	if (size)
		snprintf(what, sizeof(what), "%s of %zu bytes", d->call, size);
	else
		snprintf(what, sizeof(what), "%s", d->call);
	sb_dropin_say(msg,
		      snprintf(msg, sizeof(msg),
			       "%s: %s[%d]: %s refused (SECBUF_STRICT=1%s): %s%s\n", d->lib,
			       program_invocation_short_name, (int)getpid(), what,
			       flags & SECBUF_SECRET ? ", SECBUF_SECRET=1" : "",
			       size ? "" :
				      "libsecbuf's key page, which must be locked before any "
				      "secret is: ",
			       why),
		      sizeof(msg));
}

void sb_dropin_listen(const struct sb_dropin *d, int every)
{
	if (__atomic_load_n(&listening, __ATOMIC_ACQUIRE))
		return;
	say_every = every; /* before listening is published, which orders it */
	__atomic_store_n(&listening, d, __ATOMIC_RELEASE);
	sb_report_to(on_failure);
}
