/*
 * The lock this thread was refused in the allocation under way, as the
 * kernel call that refused it saw it.  The caller's errno alone cannot
 * say why: a packed secret of 32 bytes fails for want of a 248 kB slab,
 * and EAGAIN from memfd_secret's mapping is RLIMIT_MEMLOCK, not a kernel
 * without secret memory.  One record per tier, because a secret
 * allocation that falls back may be refused twice (its secret mapping,
 * then the lock of what it falls back to), and each warning explains its
 * own.  Initial-exec TLS: a plain store on the hot path that clears it.
 */
#include "os.h"

static __thread struct sb_refusal noted[2] __attribute__((tls_model("initial-exec")));

static int tier(int call)
{
	return call == SB_CALL_MEMFD_SECRET || call == SB_CALL_SECRET_MMAP;
}

void sb_refusal_note(int call, int err, size_t len)
{
	struct sb_refusal *f = &noted[tier(call)];

	f->call = call;
	f->err = err;
	f->len = len;
}

void sb_refusal_clear(void)
{
	noted[0].call = SB_CALL_NONE;
	noted[1].call = SB_CALL_NONE;
}

int sb_refusal_get(int secret, struct sb_refusal *f)
{
	*f = noted[!!secret];
	return f->call != SB_CALL_NONE;
}

/*
 * Only a strict allocation fails because of a refused lock: under
 * SECBUF_BEST_EFFORT the lock's refusal fell back, and what failed later
 * (madvise, memory) is something else.  The errno must be the refusal's
 * too: the record may hold a refusal that was survived (the key page's
 * first lock, tried again later).
 */
int sb_refusal_of(unsigned flags, int err, struct sb_refusal *f)
{
	f->call = SB_CALL_NONE;
	if (flags & SECBUF_BEST_EFFORT)
		return 0;
	if ((flags & SECBUF_SECRET) && sb_refusal_get(1, f) && f->err == err)
		return 1;
	if (sb_refusal_get(0, f) && f->err == err)
		return 1;
	f->call = SB_CALL_NONE;
	return 0;
}
