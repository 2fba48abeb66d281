/*
 * Why the lock method is what it is, and why a lock was refused, in words
 * that name the fix.  A feature is known present only from a call that
 * used it and succeeded (prove.c); the errors and /proc only say why a
 * lock was not had: RLIMIT_MEMLOCK against VmLck (the budget), or a
 * refusal with room in the budget (a sandbox: a seccomp filter, a
 * security module).  No stdio: this runs on failure paths and inside the
 * drop-in's sodium_malloc().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "os.h"

#define CAP_IPC_LOCK_BIT 14 /* linux/capability.h: locks beyond the limit */

void sb_lockroom(struct sb_lockroom *r)
{
	struct rlimit rl;
	long long cap = sb_status_field("CapEff", 16);

	r->limit_kb = -1;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		r->limit_kb = (long long)(rl.rlim_cur / 1024);
	r->locked_kb = sb_status_field("VmLck", 10);
	r->unlimited = cap >= 0 && (cap >> CAP_IPC_LOCK_BIT & 1);
	r->seccomp = (int)sb_status_field("Seccomp", 10);
}

/* Locks are by the page: what need bytes cost in kB. */
static long long need_kb(size_t need)
{
	size_t page = sb_caps()->page;

	if (need <= SIZE_MAX - page)
		need = (need + page - 1) / page * page;
	return (long long)((need + 1023) / 1024);
}

/* Whether need bytes more would pass RLIMIT_MEMLOCK. */
static int budget_short(const struct sb_lockroom *r, size_t need)
{
	long long kb = need_kb(need);

	if (r->unlimited || r->limit_kb < 0)
		return 0;
	return r->limit_kb == 0 || (r->locked_kb >= 0 && r->locked_kb + kb > r->limit_kb);
}

/* snprintf that appends at *at and never overruns len. */
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at = *at + (size_t)n < len ? *at + (size_t)n : len;
}

int sb_explain_refusal(const struct sb_lockroom *r, int err, size_t need, char *buf, size_t len,
		       size_t *at)
{
	if (budget_short(r, need)) {
		if (r->limit_kb == 0)
			add(buf, len, at, "RLIMIT_MEMLOCK is 0: this process may lock nothing");
		else
			add(buf, len, at,
			    "RLIMIT_MEMLOCK is %lld kB, %lld kB are locked already, %lld kB more "
			    "were needed",
			    r->limit_kb, r->locked_kb, need_kb(need));
		add(buf, len, at, "; raise it: ulimit -l, or LimitMEMLOCK= in a systemd unit");
		return SECBUF_REASON_LIMIT;
	}
	if (err == EPERM || err == 0) {
		add(buf, len, at, "a sandbox refused the lock with room in RLIMIT_MEMLOCK (");
		if (r->limit_kb < 0)
			add(buf, len, at, "unlimited");
		else
			add(buf, len, at, "%lld kB, %lld kB locked", r->limit_kb, r->locked_kb);
		add(buf, len, at,
		    "%s); allow mlock2 and mlock in the filter (systemd: "
		    "SystemCallFilter=@memlock) or the security module's policy",
		    r->seccomp == 2 ? "; a seccomp filter is on" : "");
		return SECBUF_REASON_SANDBOX;
	}
	add(buf, len, at, "%s with room in RLIMIT_MEMLOCK: out of memory, or vm.max_map_count",
	    strerrorname_np(err) ? strerrorname_np(err) : "refused");
	return SECBUF_REASON_MEMORY;
}

/* The proof's error that says most: a refusal over a call that did not work. */
static int lazy_error(const struct sb_caps *c)
{
	if (sb_lock_refused(c->mlock2_onfault))
		return c->mlock2_onfault;
	if (sb_lock_refused(c->map_lockonfault))
		return c->map_lockonfault;
	return c->mlock2_onfault;
}

int sb_explain_method(char *buf, size_t len)
{
	const struct sb_caps *c = sb_caps();
	const char *force = secure_getenv("SECBUF_LOCK");
	struct sb_lockroom r;
	size_t at = 0;
	int err;

	if (len)
		buf[0] = 0;
	if (force && *force) {
		if (c->method >= 0) {
			add(buf, len, &at, "%s: SECBUF_LOCK chose it",
			    secbuf_lock_method_name(c->method));
			return SECBUF_REASON_FORCED;
		}
		add(buf, len, &at, "SECBUF_LOCK=%s: ", force);
		if (c->err == EINVAL) {
			add(buf, len, &at, "no such method (maplockonfault, mlock2, mlock, none)");
			return SECBUF_REASON_FORCED;
		}
		if (!sb_lock_refused(c->err)) {
			add(buf, len, &at, "no call of that method worked on this kernel");
			return SECBUF_REASON_NO_KERNEL;
		}
		sb_lockroom(&r);
		return sb_explain_refusal(&r, c->err, c->page, buf, len, &at);
	}
	switch (c->method) {
	case SECBUF_LOCK_MAP_LOCKONFAULT:
		add(buf, len, &at,
		    "maplockonfault: the patched kernel's mmap(MAP_LOCKONFAULT) worked");
		return SECBUF_REASON_PROVEN;
	case SECBUF_LOCK_MLOCK2_ONFAULT:
		add(buf, len, &at,
		    "mlock2: mlock2(MLOCK_ONFAULT) worked (a stock kernel's "
		    "lock-on-fault; MAP_LOCKONFAULT needs the kernel patch)");
		return SECBUF_REASON_PROVEN;
	}
	add(buf, len, &at, "mlock (eager: it locks SECBUF_POPULATE buffers only): ");
	err = lazy_error(c);
	if (sb_lock_refused(err)) {
		add(buf, len, &at, "lock-on-fault was refused: ");
		sb_lockroom(&r);
		return sb_explain_refusal(&r, err, c->page, buf, len, &at);
	}
	add(buf, len, &at,
	    "no lock-on-fault call worked here (mlock2(MLOCK_ONFAULT): %s); "
	    "the kernel has none (before Linux 4.4)",
	    strerrorname_np(err) ? strerrorname_np(err) : "failed");
	sb_lockroom(&r);
	if (r.seccomp == 2)
		add(buf, len, &at, ", or this process's seccomp filter answers for it");
	return SECBUF_REASON_NO_KERNEL;
}
