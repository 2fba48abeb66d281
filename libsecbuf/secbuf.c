/*
 * The public API: argument checks, the re-entry guard, and which part a
 * pointer belongs to (packed/ or guarded/), nothing more.  Each entry
 * point keeps errno as it found it unless it fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "init.h"

#define ALL_FLAGS \
	(SECBUF_POPULATE | SECBUF_BEST_EFFORT | SECBUF_PACKED | SECBUF_SECRET | SECBUF_INHERIT)

static void *alloc(size_t size, unsigned flags)
{
	if (size == 0 || (flags & ~ALL_FLAGS) ||
	    (flags & (SECBUF_SECRET | SECBUF_INHERIT)) == (SECBUF_SECRET | SECBUF_INHERIT)) {
		sb_refusal_clear(); /* an earlier allocation's refusal is not this failure's */
		errno = EINVAL;
		return NULL;
	}
	if (sb_ready(flags) < 0)
		return NULL;
	if ((flags & SECBUF_PACKED) && size <= SECBUF_PACKED_MAX)
		return sb_packed_alloc(size, flags);
	return sb_alloc_guarded(size, flags, SB_CANARY_SIZE, 0, NULL);
}

/*
 * This thread's last failed allocation, with the lock budget of that
 * moment and the refused call, if a refusal made it fail; the words are
 * made when asked for, by the diagnosis the drop-ins use too
 * (os/explain.c).  Small, as the other initial-exec TLS: static TLS is
 * scarce once the library is dlopen()ed.
 */
static __thread struct {
	const char *call;
	size_t size;
	unsigned flags;
	int err;
	struct sb_lockroom room;
	struct sb_refusal refusal;
} last __attribute__((tls_model("initial-exec")));
static int debug_printed;

/* The failure as "CALL(SIZE): ENAME: " and its cause with the fix. */
static void explain(char *buf, size_t len)
{
	const char *name = strerrorname_np(last.err);
	int call = last.refusal.call;
	size_t at;
	int n;

	n = snprintf(buf, len, "%s(%zu): %s: ", last.call, last.size, name ? name : "error");
	at = n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
	if (last.err == EINVAL && (last.size == 0 || (last.flags & ~ALL_FLAGS))) {
		snprintf(buf + at, len - at, "%s", last.size ? "unknown flags" : "size 0");
	} else if (call != SB_CALL_NONE) {
		sb_diagnose(&last.refusal, &last.room, buf, len, &at);
		snprintf(buf + at, len - at, "%s",
			 call == SB_CALL_MEMFD_SECRET || call == SB_CALL_SECRET_MMAP ?
				 "; SECBUF_BEST_EFFORT falls back to locked memory" :
				 "; or SECBUF_BEST_EFFORT for unlocked memory");
	} else if (sb_lock_unavailable(last.err) || last.err == EOPNOTSUPP || last.err == EINVAL) {
		snprintf(buf + at, len - at, "%s",
			 last.err == EOPNOTSUPP ? "no lazy lock: " : "no lock method: ");
		at += strlen(buf + at);
		sb_explain_method(buf + at, len - at);
	} else {
		snprintf(buf + at, len - at, "%s", strerror(last.err));
	}
}

static void note_failure(const char *call, size_t size, unsigned flags)
{
	const char *debug = secure_getenv("SECBUF_DEBUG");
	char line[700];
	int err = errno;

	last.call = call;
	last.size = size;
	last.flags = flags;
	last.err = err;
	sb_lockroom(&last.room);
	sb_refusal_of(flags, err, &last.refusal);
	if (debug && strcmp(debug, "1") == 0 &&
	    !__atomic_exchange_n(&debug_printed, 1, __ATOMIC_RELAXED)) {
		memcpy(line, "libsecbuf: ", 11);
		explain(line + 11, sizeof(line) - 12);
		strcat(line, "\n");
		(void)!write(STDERR_FILENO, line, strlen(line));
	}
	errno = err;
}

SB_API void *secbuf_alloc_flags(size_t size, unsigned flags)
{
	int saved = errno;
	void *p;

	sb_enter(__func__);
	p = alloc(size, flags);
	if (p)
		errno = saved;
	else
		note_failure(__func__, size, flags);
	sb_leave();
	return p;
}

SB_API void *secbuf_alloc(size_t size)
{
	int saved = errno;
	void *p;

	sb_enter(__func__);
	p = alloc(size, 0);
	if (p)
		errno = saved;
	else
		note_failure(__func__, size, 0);
	sb_leave();
	return p;
}

SB_API int secbuf_last_failure(char *buf, size_t len)
{
	int saved = errno;

	if (buf && len && last.err)
		explain(buf, len);
	else if (buf && len)
		snprintf(buf, len, "no failure");
	errno = saved;
	return last.err;
}

SB_API int secbuf_lock_reason(char *buf, size_t len)
{
	char none[1];
	int saved = errno, reason;

	sb_enter(__func__);
	reason = buf && len ? sb_explain_method(buf, len) : sb_explain_method(none, sizeof(none));
	errno = saved;
	sb_leave();
	return reason;
}

SB_API void secbuf_free(void *ptr)
{
	struct sb_slab *s = sb_slab_of(ptr);
	int saved = errno;

	if (!ptr)
		return;
	sb_enter(__func__);
	if (s)
		sb_packed_free(s, ptr, __func__);
	else
		sb_guarded_free(ptr, __func__);
	errno = saved;
	sb_leave();
}

SB_API int secbuf_protect(void *ptr, int access)
{
	static const int prot[] = {
		[SECBUF_NOACCESS] = PROT_NONE,
		[SECBUF_READONLY] = PROT_READ,
		[SECBUF_READWRITE] = PROT_READ | PROT_WRITE,
	};
	struct sb_slab *s = sb_slab_of(ptr);
	int saved = errno, ret;

	if (!ptr || access < SECBUF_NOACCESS || access > SECBUF_READWRITE) {
		errno = EINVAL;
		return -1;
	}
	sb_enter(__func__);
	/* A packed secret shares its pages: their protection is not its own to set. */
	if (s) {
		sb_packed_check_live(s, ptr, __func__);
		errno = EINVAL;
		sb_leave();
		return -1;
	}
	ret = sb_guarded_protect(ptr, prot[access], __func__);
	if (ret == 0)
		errno = saved;
	sb_leave();
	return ret;
}

SB_API size_t secbuf_size(const void *ptr)
{
	struct sb_slab *s = sb_slab_of(ptr);
	int saved = errno;
	size_t size;

	if (!ptr)
		return 0;
	sb_enter(__func__);
	if (s)
		size = sb_packed_size(s, ptr, __func__);
	else
		size = sb_guarded_size(ptr, __func__);
	errno = saved;
	sb_leave();
	return size;
}

/* What the kernel says about a buffer right now. */
SB_API int secbuf_stat(const void *ptr, struct secbuf_stat *st)
{
	struct sb_slab *s = sb_slab_of(ptr);
	int saved = errno, ret;

	if (!ptr || !st) {
		errno = EINVAL;
		return -1;
	}
	sb_enter(__func__);
	if (s)
		ret = sb_packed_stat(s, ptr, st, __func__);
	else
		ret = sb_guarded_stat(ptr, st, __func__);
	if (ret == 0)
		errno = saved;
	sb_leave();
	return ret;
}

SB_API int secbuf_totals(struct secbuf_totals *t)
{
	size_t mapped, locked;
	int saved = errno;

	if (!t) {
		errno = EINVAL;
		return -1;
	}
	if (sb_smaps_totals(&mapped, &locked) < 0)
		return -1;
	sb_count_get(&t->secrets, &t->bytes);
	t->mapped_bytes = mapped;
	t->locked_pages = locked / sb_caps()->page;
	errno = saved;
	return 0;
}

/* No re-entry guard: a signal handler may purge while a call is running. */
SB_API void secbuf_purge(void)
{
	int saved = errno;

	sb_purge();
	errno = saved;
}

SB_API int secbuf_purge_on_crash(unsigned flags)
{
	int saved = errno, ret;

	if (flags & ~SECBUF_PURGE_AT_EXIT) {
		errno = EINVAL;
		return -1;
	}
	sb_enter(__func__);
	ret = sb_wired() < 0 ? -1 : sb_purge_on_crash(flags & SECBUF_PURGE_AT_EXIT);
	if (ret == 0)
		errno = saved;
	sb_leave();
	return ret;
}
