/*
 * The prekeys: SECBUF_SEAL_PREKEY random bytes each, one the process's
 * own (in memfd_secret memory where the kernel has it and RLIMIT_MEMLOCK
 * has room, else in a locked, non-dumpable, wipe-on-fork secbuf buffer)
 * and one that forked children keep (SECBUF_INHERIT: a locked buffer, as
 * secret memory cannot be inherited).  Each is made on first use and
 * replaced whole by rekey; sealed secrets name theirs by a generation.
 *
 * One read-write lock covers the prekeys and every sealed secret's bytes:
 * seals and opens read, rekey writes.  It prefers writers, so that a
 * stream of opens cannot starve a rekey or a fork.  No user callback runs
 * under it.  At fork, our handlers run before libsecbuf's (registered
 * after them), since we call into libsecbuf while holding our locks; the
 * child forgets its parent's own prekey without freeing it (it is gone
 * there, or zeros, and not the child's to free), so that its parent's
 * sealed secrets fail with ENOKEY rather than with a wrong key.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "seal.h"

struct prekey {
	unsigned char *bytes; /* a secbuf buffer, or NULL */
	uint64_t gen;	      /* what sealed secrets name it by; never 0 */
	pid_t pid;	      /* the process that made it */
	int method;	      /* SECBUF_LOCK_* of its memory */
};

static struct prekey prekeys[SBS_KINDS];
static uint64_t gens;		    /* under the write lock */
static unsigned sealers[SBS_KINDS]; /* seals between ensure and done */
static unsigned long rekeys;
static unsigned best_effort;
static int said; /* the fallback's line: once per process */
static pthread_rwlock_t lock;
static pthread_rwlockattr_t lock_attr;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_err;

void sbs_read_lock(void)
{
	pthread_rwlock_rdlock(&lock);
}

void sbs_read_unlock(void)
{
	pthread_rwlock_unlock(&lock);
}

void sbs_write_lock(void)
{
	pthread_rwlock_wrlock(&lock);
}

void sbs_write_unlock(void)
{
	pthread_rwlock_unlock(&lock);
}

static void fork_prepare(void)
{
	sbs_write_lock();
	sbs_handle_fork_prepare();
	sbs_keys_fork_prepare();
}

static void fork_parent(void)
{
	sbs_keys_fork_parent();
	sbs_handle_fork_parent();
	sbs_write_unlock();
}

static void fork_child(void)
{
	sbs_keys_fork_child();
	sbs_handle_fork_child();
	memset(&prekeys[SBS_OWN], 0, sizeof(prekeys[SBS_OWN]));
	/* The parent's seals under way are not the child's. */
	memset(sealers, 0, sizeof(sealers));
	/* Made anew: glibc's unlock would take the child's new thread id for a reader's. */
	pthread_rwlock_init(&lock, &lock_attr);
}

static void init(void)
{
	int saved = errno;

	if (sodium_init() < 0) {
		init_err = EIO; /* no randomness to draw from */
		return;
	}
	/* libsecbuf wires its fork handlers now, before ours (see above). */
	(void)secbuf_lock_method(); /* its answer is for the allocations to give */
	if (pthread_rwlockattr_init(&lock_attr) ||
	    pthread_rwlockattr_setkind_np(&lock_attr,
					  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP) ||
	    pthread_rwlock_init(&lock, &lock_attr) || sbs_handle_init() < 0 ||
	    pthread_atfork(fork_prepare, fork_parent, fork_child)) {
		init_err = ENOMEM;
		return;
	}
	errno = saved;
}

int sbs_init(void)
{
	pthread_once(&once, init);
	if (init_err) {
		errno = init_err;
		return -1;
	}
	return 0;
}

/* Whether this process has the kind's prekey (a raw clone() child has not its own). */
static int valid(enum sbs_kind kind)
{
	return prekeys[kind].bytes && (kind == SBS_INHERITED || prekeys[kind].pid == getpid());
}

static void say_fallback(int err, int method)
{
	const char *name = strerrorname_np(err), *why;
	char line[512];

	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	why = err == ENOSYS ? "no secret memory here (CONFIG_SECRETMEM; before Linux 6.5, "
			      "boot with secretmem.enable=1)" :
	      err == EAGAIN ? "RLIMIT_MEMLOCK has no room for it beside this process's "
			      "secret memory (raise it: ulimit -l, LimitMEMLOCK=)" :
	      err == EPERM  ? "refused, by a seccomp filter (systemd: SystemCallFilter=)" :
			      strerror(err);
	snprintf(line, sizeof(line),
		 "libsecbuf-seal: %s[%d]: the prekey is in %s memory (%s), not secret memory: "
		 "memfd_secret: %s: %s\n",
		 program_invocation_short_name, (int)getpid(),
		 method == SECBUF_LOCK_NONE ? "unlocked" : "locked",
		 secbuf_lock_method_name(method), name ? name : "error", why);
	(void)!write(STDERR_FILENO, line, strlen(line)); /* a notice: nothing to do if it fails */
}

/* A prekey of the kind, filled: NULL with errno (that of the strictest allocation tried). */
static unsigned char *alloc_prekey(enum sbs_kind kind, unsigned flags, int *method)
{
	unsigned inherit = kind == SBS_INHERITED ? SECBUF_INHERIT : 0;
	unsigned char *p = NULL;
	struct secbuf_stat st;
	int err = 0;

	if (kind == SBS_OWN) {
		/* libsecbuf refuses it (EAGAIN) where a write would be SIGBUS. */
		p = secbuf_alloc_flags(SECBUF_SEAL_PREKEY, SECBUF_SECRET);
		if (!p)
			err = errno;
	}
	if (!p)
		p = secbuf_alloc_flags(SECBUF_SEAL_PREKEY, SECBUF_POPULATE | inherit);
	if (!p && (flags & SECBUF_BEST_EFFORT))
		p = secbuf_alloc_flags(SECBUF_SEAL_PREKEY,
				       SECBUF_POPULATE | SECBUF_BEST_EFFORT | inherit);
	if (!p)
		return NULL;
	randombytes_buf(p, SECBUF_SEAL_PREKEY);
	*method = secbuf_stat(p, &st) == 0 ? st.lock_method : SECBUF_LOCK_NONE;
	if (err)
		say_fallback(err, *method);
	return p;
}

int sbs_prekey_ensure(enum sbs_kind kind, unsigned flags, uint64_t *made)
{
	unsigned char *p;
	int ok, method, err;

	*made = 0;
	__atomic_add_fetch(&sealers[kind], 1, __ATOMIC_RELAXED);
	sbs_read_lock();
	ok = valid(kind);
	sbs_read_unlock();
	if (ok)
		return 0;
	sbs_write_lock();
	if (!valid(kind)) {
		p = alloc_prekey(kind, flags, &method);
		if (!p) {
			err = errno;
			sbs_write_unlock();
			__atomic_sub_fetch(&sealers[kind], 1, __ATOMIC_RELAXED);
			errno = err;
			return -1;
		}
		prekeys[kind] = (struct prekey){ p, ++gens, getpid(), method };
		*made = prekeys[kind].gen;
	}
	sbs_write_unlock();
	return 0;
}

/*
 * A failed seal leaves no mapping behind: the prekey it made goes again
 * unless another seal is under way or a sealed secret uses it.
 */
void sbs_prekey_done(enum sbs_kind kind, uint64_t made)
{
	unsigned char *old = NULL;

	__atomic_sub_fetch(&sealers[kind], 1, __ATOMIC_RELAXED);
	if (!made)
		return;
	sbs_write_lock();
	if (valid(kind) && prekeys[kind].gen == made &&
	    !__atomic_load_n(&sealers[kind], __ATOMIC_RELAXED) && !sbs_handle_count(kind)) {
		old = prekeys[kind].bytes;
		memset(&prekeys[kind], 0, sizeof(prekeys[kind]));
	}
	sbs_write_unlock();
	secbuf_free(old);
}

uint64_t sbs_prekey_gen(enum sbs_kind kind)
{
	return valid(kind) ? prekeys[kind].gen : 0;
}

int sbs_prekey_derive(enum sbs_kind kind, uint64_t gen, const unsigned char *nonce,
		      unsigned char *key)
{
	if (!gen) {
		errno = EBADMSG;
		return -1;
	}
	if (!valid(kind) || prekeys[kind].gen != gen) {
		errno = ENOKEY;
		return -1;
	}
	sbs_derive(key, prekeys[kind].bytes, nonce);
	return 0;
}

int sbs_prekey_reseal(enum sbs_kind kind, unsigned char *blob, size_t size, unsigned char *keys,
		      unsigned char *scratch)
{
	if (!valid(kind)) {
		errno = ENOKEY;
		return -1;
	}
	return sbs_reseal(blob, size, prekeys[kind].bytes, keys, scratch);
}

void sbs_best_effort_seen(unsigned flags)
{
	if (flags & SECBUF_BEST_EFFORT)
		__atomic_store_n(&best_effort, SECBUF_BEST_EFFORT, __ATOMIC_RELAXED);
}

int sbs_prekey_method(enum sbs_kind kind)
{
	int m;

	sbs_read_lock();
	m = valid(kind) ? prekeys[kind].method : -1;
	sbs_read_unlock();
	return m;
}

unsigned long sbs_rekeys(void)
{
	return __atomic_load_n(&rekeys, __ATOMIC_RELAXED);
}

struct rekey {
	struct prekey fresh[SBS_KINDS], old[SBS_KINDS];
	unsigned char *keys, *scratch;
};

static void reseal_one(struct secbuf_sealed *h, void *arg)
{
	struct rekey *r = arg;
	enum sbs_kind k = sbs_kind_of(h->flags);

	/* Not under a prekey of ours: its parent's (ENOKEY), or imported from elsewhere. */
	if (!r->fresh[k].bytes || !r->old[k].bytes || h->gen != r->old[k].gen)
		return;
	sbs_derive(r->keys, r->old[k].bytes, sbs_nonce(h->blob));
	/* One that does not open stays as it was, and fails under the new prekey as before. */
	(void)sbs_reseal(h->blob, h->size, r->fresh[k].bytes, r->keys, r->scratch);
	sodium_memzero(r->keys, SBS_KEY);
	h->gen = r->fresh[k].gen;
}

int sbs_prekey_rekey(void)
{
	unsigned be = __atomic_load_n(&best_effort, __ATOMIC_RELAXED);
	struct rekey r = { 0 };
	int k, have[SBS_KINDS], err, kept = 0;
	pid_t pid = getpid();

	sbs_read_lock();
	for (k = 0; k < SBS_KINDS; k++)
		have[k] = valid(k);
	sbs_read_unlock();
	if (!have[SBS_OWN] && !have[SBS_INHERITED]) {
		/* Nothing sealed here (or only by the parent): no prekey to replace. */
		__atomic_add_fetch(&rekeys, 1, __ATOMIC_RELAXED);
		return 0;
	}
	/* Everything that may fail, before the lock: a failed rekey changes nothing. */
	r.keys = sbs_keys_get(be, &kept);
	r.scratch = sbs_buffer(SECBUF_SEAL_CHUNK, be);
	if (!r.keys || !r.scratch)
		goto fail;
	for (k = 0; k < SBS_KINDS; k++) {
		if (!have[k])
			continue;
		r.fresh[k].bytes = alloc_prekey(k, be, &r.fresh[k].method);
		if (!r.fresh[k].bytes)
			goto fail;
		r.fresh[k].pid = getpid();
	}
	sbs_write_lock();
	for (k = 0; k < SBS_KINDS; k++) {
		/* One that went meanwhile (a failed seal's) sealed nothing. */
		if (r.fresh[k].bytes && valid(k)) {
			r.old[k] = prekeys[k];
			r.fresh[k].gen = ++gens;
		}
	}
	sbs_handle_each(reseal_one, &r);
	for (k = 0; k < SBS_KINDS; k++) {
		if (r.old[k].bytes) {
			prekeys[k] = r.fresh[k];
			r.fresh[k].bytes = NULL;
		}
	}
	__atomic_add_fetch(&rekeys, 1, __ATOMIC_RELAXED);
	sbs_write_unlock();
	for (k = 0; k < SBS_KINDS; k++) {
		secbuf_free(r.old[k].bytes); /* wiped: what was read of it opens nothing now */
		secbuf_free(r.fresh[k].bytes);
	}
	sbs_keys_put(r.keys, kept, pid);
	secbuf_free(r.scratch);
	return 0;
fail:
	err = errno;
	for (k = 0; k < SBS_KINDS; k++)
		secbuf_free(r.fresh[k].bytes);
	sbs_keys_put(r.keys, kept, pid);
	secbuf_free(r.scratch);
	errno = err;
	return -1;
}
