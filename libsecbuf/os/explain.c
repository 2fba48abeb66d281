/*
 * Why the lock method is what it is, and why a lock was refused, in words
 * that name the fix.  A feature is known present only from a call that
 * used it and succeeded (prove.c); the errors and /proc only say why a
 * lock was not had: RLIMIT_MEMLOCK against VmLck (the budget), or a
 * refusal with room in the budget (a sandbox: a seccomp filter, a
 * security module).  sb_diagnose() is the one place that reads a refusal
 * (refusal.c) into a cause and a fix: secbuf_last_failure(),
 * secbuf_lock_reason() and the drop-ins' messages all say what it says.
 * No stdio streams: this runs on failure paths and inside the drop-in's
 * sodium_malloc() (snprintf into the caller's buffer only).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
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

/* Whether need bytes more would pass RLIMIT_MEMLOCK (VmLck unknown: counted as 0). */
static int budget_short(const struct sb_lockroom *r, size_t need)
{
	long long kb = need_kb(need);

	if (r->unlimited || r->limit_kb < 0)
		return 0;
	return r->limit_kb == 0 || (r->locked_kb > 0 ? r->locked_kb : 0) + kb > r->limit_kb;
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

static const char *call_name(int call)
{
	switch (call) {
	case SB_CALL_MLOCK2:
		return "mlock2";
	case SB_CALL_MLOCK:
		return "mlock";
	case SB_CALL_MAP_LOCKONFAULT:
		return "mmap(MAP_LOCKONFAULT)";
	case SB_CALL_MEMFD_SECRET:
		return "memfd_secret";
	case SB_CALL_SECRET_MMAP:
		return "mmap of memfd_secret";
	}
	return "the lock";
}

static const char *err_name(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "an error";
}

static int secret_call(int call)
{
	return call == SB_CALL_MEMFD_SECRET || call == SB_CALL_SECRET_MMAP;
}

/*
 * Over the limit: by the budget (VmLck and the call's length against
 * RLIMIT_MEMLOCK), or because the call can mean nothing else.  EAGAIN
 * from a mapping that locks (MAP_LOCKONFAULT, memfd_secret's) is the
 * kernel's own check of the limit, whatever VmLck read a moment later.
 */
static int over_limit(const struct sb_refusal *f, const struct sb_lockroom *r)
{
	if (f->err == EAGAIN && !r->unlimited && r->limit_kb >= 0 &&
	    (f->call == SB_CALL_MAP_LOCKONFAULT || f->call == SB_CALL_SECRET_MMAP))
		return 1;
	return (f->call == SB_CALL_NONE || sb_lock_refused(f->err)) && budget_short(r, f->len);
}

static void limit_cause(const struct sb_refusal *f, const struct sb_lockroom *r, char *buf,
			size_t len, size_t *at)
{
	if (secret_call(f->call))
		add(buf, len, at, "memfd_secret memory counts against RLIMIT_MEMLOCK: ");
	if (r->limit_kb == 0)
		add(buf, len, at,
		    "RLIMIT_MEMLOCK is 0 kB: this process may lock nothing, and "
		    "%lld kB were needed",
		    need_kb(f->len));
	else if (r->locked_kb >= 0)
		add(buf, len, at,
		    "RLIMIT_MEMLOCK is %lld kB, %lld kB are locked already, %lld kB more "
		    "were needed",
		    r->limit_kb, r->locked_kb, need_kb(f->len));
	else
		add(buf, len, at, "RLIMIT_MEMLOCK is %lld kB, %lld kB more were needed",
		    r->limit_kb, need_kb(f->len));
	if (f->call != SB_CALL_NONE)
		add(buf, len, at, " (%s: %s)", call_name(f->call), err_name(f->err));
	add(buf, len, at, "; raise it: ulimit -l, or LimitMEMLOCK= in a systemd unit");
}

/* The room the refusal had: a sandbox's refusal is told from the limit's by it. */
static void room(const struct sb_refusal *f, const struct sb_lockroom *r, char *buf, size_t len,
		 size_t *at)
{
	if (r->unlimited)
		add(buf, len, at, "CAP_IPC_LOCK: no limit");
	else if (r->limit_kb < 0)
		add(buf, len, at, "unlimited");
	else if (r->locked_kb >= 0)
		add(buf, len, at, "%lld kB, %lld kB locked, %lld kB needed", r->limit_kb,
		    r->locked_kb, need_kb(f->len));
	else
		add(buf, len, at, "%lld kB, %lld kB needed", r->limit_kb, need_kb(f->len));
}

/*
 * A refusal with room in the limit that only a sandbox gives: EPERM
 * (RLIMIT_MEMLOCK's own EPERM is for a limit of 0), or ENOSYS from a
 * call the probe saw work, under a seccomp filter.
 */
static void sandbox_cause(const struct sb_refusal *f, const struct sb_lockroom *r, char *buf,
			  size_t len, size_t *at)
{
	add(buf, len, at, "a sandbox refused %s (%s) with room in RLIMIT_MEMLOCK (",
	    call_name(f->call), err_name(f->err));
	room(f, r, buf, len, at);
	if (r->seccomp == 2 && secret_call(f->call))
		add(buf, len, at,
		    "; a seccomp filter is on); allow memfd_secret in the filter "
		    "(systemd: SystemCallFilter=memfd_secret)");
	else if (r->seccomp == 2)
		add(buf, len, at,
		    "; a seccomp filter is on); allow mlock2 and mlock in the "
		    "filter (systemd: SystemCallFilter=@memlock)");
	else
		add(buf, len, at,
		    "; no seccomp filter is on); a security module (SELinux, "
		    "AppArmor) refused it: allow it in the module's policy");
}

/* Linux major.minor of the running kernel, as one number (6.18: 618), or -1. */
static int kernel_version(char *release, size_t len)
{
	struct utsname u;
	char *end;
	long major, minor;

	if (uname(&u) < 0)
		return -1;
	snprintf(release, len, "%s", u.release);
	major = strtol(u.release, &end, 10);
	if (*end != '.')
		return -1;
	minor = strtol(end + 1, NULL, 10);
	return (int)(major * 100 + minor);
}

/*
 * memfd_secret answered ENOSYS: no secret memory in this kernel, which
 * before Linux 6.5 had it off unless booted with secretmem.enable=1, and
 * since has it on unless booted with secretmem.enable=0; or a filter
 * that answers for it.
 */
static void secret_absent(const struct sb_lockroom *r, char *buf, size_t len, size_t *at)
{
	char release[65];
	int v = kernel_version(release, sizeof(release));

	add(buf, len, at, "memfd_secret is not available (ENOSYS): ");
	if (r->seccomp == 2)
		add(buf, len, at,
		    "this process's seccomp filter may refuse it (allow "
		    "memfd_secret; systemd: SystemCallFilter=memfd_secret), or ");
	if (v < 0)
		add(buf, len, at,
		    "this kernel has no secret memory (CONFIG_SECRETMEM; "
		    "secretmem.enable=1 on its command line before Linux 6.5)");
	else if (v >= 605)
		add(buf, len, at,
		    "this kernel (%s) was built without CONFIG_SECRETMEM, or "
		    "booted with secretmem.enable=0",
		    release);
	else
		add(buf, len, at,
		    "this kernel (%s) needs secretmem.enable=1 on its command "
		    "line (before Linux 6.5), and CONFIG_SECRETMEM",
		    release);
}

int sb_diagnose(const struct sb_refusal *f, const struct sb_lockroom *r, char *buf, size_t len,
		size_t *at)
{
	if (f->call == SB_CALL_MEMFD_SECRET && f->err == ENOSYS) {
		secret_absent(r, buf, len, at);
		return SECBUF_REASON_NO_KERNEL;
	}
	if (over_limit(f, r)) {
		limit_cause(f, r, buf, len, at);
		return SECBUF_REASON_LIMIT;
	}
	if (f->err == EPERM || (f->err == ENOSYS && r->seccomp == 2)) {
		sandbox_cause(f, r, buf, len, at);
		return SECBUF_REASON_SANDBOX;
	}
	if (f->call == SB_CALL_NONE) {
		/* Not this thread's refusal: what is known now, and nothing guessed. */
		add(buf, len, at,
		    "a lock was refused earlier, in another thread, with room in "
		    "RLIMIT_MEMLOCK now (");
		room(f, r, buf, len, at);
		add(buf, len, at, "%s)", r->seccomp == 2 ? "; a seccomp filter is on" : "");
		return SECBUF_REASON_MEMORY;
	}
	if (sb_lock_refused(f->err)) {
		add(buf, len, at, "%s: %s with room in RLIMIT_MEMLOCK (", call_name(f->call),
		    err_name(f->err));
		room(f, r, buf, len, at);
		add(buf, len, at, "): out of memory, or vm.max_map_count");
		return SECBUF_REASON_MEMORY;
	}
	add(buf, len, at, "%s: %s (%s)", call_name(f->call), err_name(f->err), strerror(f->err));
	return secret_call(f->call) ? SECBUF_REASON_NO_KERNEL : SECBUF_REASON_MEMORY;
}

char *sb_shown(char *dst, size_t cap, const char *value)
{
	size_t i;

	for (i = 0; value[i] && i + 4 < cap; i++)
		dst[i] = value[i] >= ' ' && value[i] <= '~' ? value[i] : '?';
	if (value[i])
		memcpy(dst + i, "...", 3), i += 3;
	dst[i] = 0;
	return dst;
}

/* The proof's refusal that says most: a refusal over a call that did not work. */
static struct sb_refusal lazy_refusal(const struct sb_caps *c)
{
	struct sb_refusal f = { SB_CALL_MLOCK2, c->mlock2_onfault, c->page };

	if (!sb_lock_refused(f.err) && sb_lock_refused(c->map_lockonfault)) {
		f.call = SB_CALL_MAP_LOCKONFAULT;
		f.err = c->map_lockonfault;
	}
	return f;
}

int sb_explain_method(char *buf, size_t len)
{
	const struct sb_caps *c = sb_caps();
	const char *force = secure_getenv("SECBUF_LOCK");
	struct sb_refusal f;
	struct sb_lockroom r;
	char shown[36];
	size_t at = 0;

	if (len)
		buf[0] = 0;
	if (force && *force) {
		if (c->method >= 0) {
			add(buf, len, &at, "%s: SECBUF_LOCK chose it",
			    secbuf_lock_method_name(c->method));
			return SECBUF_REASON_FORCED;
		}
		add(buf, len, &at, "SECBUF_LOCK=%s: ", sb_shown(shown, sizeof(shown), force));
		if (c->err == EINVAL) {
			add(buf, len, &at, "no such method (maplockonfault, mlock2, mlock, none)");
			return SECBUF_REASON_FORCED;
		}
		if (!sb_lock_refused(c->err)) {
			add(buf, len, &at, "no call of that method worked on this kernel");
			return SECBUF_REASON_NO_KERNEL;
		}
		/* Only the two lock-on-fault methods have a proof to refuse. */
		f.call = strcmp(force, "maplockonfault") ? SB_CALL_MLOCK2 : SB_CALL_MAP_LOCKONFAULT;
		f.err = c->err;
		f.len = c->page;
		sb_lockroom(&r);
		return sb_diagnose(&f, &r, buf, len, &at);
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
	f = lazy_refusal(c);
	sb_lockroom(&r);
	if (sb_lock_refused(f.err)) {
		add(buf, len, &at, "lock-on-fault was refused: ");
		return sb_diagnose(&f, &r, buf, len, &at);
	}
	add(buf, len, &at,
	    "no lock-on-fault call worked here (mlock2(MLOCK_ONFAULT): %s); "
	    "the kernel has none (before Linux 4.4)",
	    err_name(f.err));
	if (r.seccomp == 2)
		add(buf, len, &at, ", or this process's seccomp filter answers for it");
	return SECBUF_REASON_NO_KERNEL;
}
