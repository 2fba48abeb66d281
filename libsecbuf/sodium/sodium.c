/*
 * libsecbuf-sodium.so: libsodium's guarded heap (sodium_malloc() and its
 * five companions) on libsecbuf buffers, for LD_PRELOAD.  libsecbuf is
 * linked in, so the preload needs nothing else; only the sodium_* calls
 * are exported.  libsecbuf-sodium(7) says where it differs from libsodium
 * and why.
 *
 * Layout as libsodium's: the last byte flush against the trailing guard
 * page (no alignment), a 16-byte canary right in front of the pointer.
 * A pointer that is not ours goes to the next sodium_free() in the
 * lookup order, the real libsodium's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include "init.h"

/* SECBUF_STRICT and SECBUF_SECRET: yes/no switches, read at the first allocation. */
enum { SWITCH_UNREAD = -1, SWITCH_NO, SWITCH_YES, SWITCH_BAD };
struct env_switch {
	const char *name;
	int state;
	int complained; /* the one line about a bad value was printed */
};
static struct env_switch strict = { "SECBUF_STRICT", SWITCH_UNREAD, 0 };
static struct env_switch secret = { "SECBUF_SECRET", SWITCH_UNREAD, 0 };
static int warned;	  /* the one warning about unlocked memory was printed */
static int warned_secret; /* ... about memory outside the secret tier */

/* ASCII only: strcasecmp() follows the locale, where "I" need not fold to "i". */
static int same_word(const char *value, const char *word)
{
	for (; *value && *word; value++, word++)
		if ((*value >= 'A' && *value <= 'Z' ? *value - 'A' + 'a' : *value) != *word)
			return 0;
	return *value == *word;
}

static int parse_switch(const char *value)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "", "0", "false", "no", "off" };
	size_t i;

	if (!value)
		return SWITCH_NO;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (same_word(value, yes[i]))
			return SWITCH_YES;
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (same_word(value, no[i]))
			return SWITCH_NO;
	return SWITCH_BAD;
}

/*
 * A value that is neither a yes nor a no is a mistake, most likely a yes
 * misspelt: taking it for a no would hand out memory the user asked not
 * to get.  Say so once, on one line (what the environment holds is shown
 * printable and cut short).
 */
static void complain(struct env_switch *sw, const char *value)
{
	char shown[33], msg[400];
	size_t i;
	int n;

	if (__atomic_exchange_n(&sw->complained, 1, __ATOMIC_RELAXED))
		return;
	for (i = 0; value[i] && i < sizeof(shown) - 1; i++)
		shown[i] = value[i] >= ' ' && value[i] <= '~' ? value[i] : '?';
	shown[i] = 0;
	n = snprintf(msg, sizeof(msg),
		     "libsecbuf-sodium: %s[%d]: %s=\"%s%s\" is "
		     "neither a yes (1, true, yes, on) nor a no (0, false, no, off, empty): "
		     "every sodium_malloc() fails with EINVAL\n",
		     program_invocation_short_name, (int)getpid(), sw->name, shown,
		     value[i] ? "..." : "");
	if (n > 0)
		(void)!write(STDERR_FILENO, msg,
			     (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

static int switch_state(struct env_switch *sw)
{
	int s = __atomic_load_n(&sw->state, __ATOMIC_RELAXED);

	if (s == SWITCH_UNREAD) {
		const char *env = secure_getenv(sw->name);

		s = parse_switch(env);
		if (s == SWITCH_BAD)
			complain(sw, env);
		__atomic_store_n(&sw->state, s, __ATOMIC_RELAXED);
	}
	return s;
}

/*
 * 0 (strict) or SECBUF_BEST_EFFORT, with SECBUF_SECRET if asked for; -1
 * with errno EINVAL if a switch is neither a yes nor a no.
 */
static int alloc_flags(void)
{
	int st = switch_state(&strict), se = switch_state(&secret);

	if (st == SWITCH_BAD || se == SWITCH_BAD) {
		errno = EINVAL;
		return -1;
	}
	return (st == SWITCH_YES ? 0 : SECBUF_BEST_EFFORT) | (se == SWITCH_YES ? SECBUF_SECRET : 0);
}

/*
 * libsodium hands out memory whose lock failed without a word; we hand it
 * out too (unless SECBUF_STRICT says yes), but say so, once, with the way out.
 */
static void warn_unlocked(size_t size)
{
	const struct sb_caps *caps = sb_caps();
	struct sb_lockroom room;
	char msg[700], why[512];
	size_t at = 0;
	int n;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	/* The method cannot lock lazily (why: the probe's), or this lock was refused. */
	if (caps->method == SECBUF_LOCK_NONE || caps->method == SECBUF_LOCK_MLOCK) {
		sb_explain_method(why, sizeof(why));
	} else {
		sb_lockroom(&room);
		sb_explain_refusal(&room, 0, size, why, sizeof(why), &at);
	}
	n = snprintf(msg, sizeof(msg),
		     "libsecbuf-sodium: %s[%d]: warning: sodium_malloc() "
		     "memory is NOT locked and may be swapped (%s); "
		     "SECBUF_STRICT=1 refuses instead\n",
		     program_invocation_short_name, (int)getpid(), why);
	if (n > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

/* SECBUF_SECRET asked for what this kernel or sandbox would not give: say so, once. */
static void warn_not_secret(int method)
{
	char msg[300];
	int n;

	if (__atomic_exchange_n(&warned_secret, 1, __ATOMIC_RELAXED))
		return;
	n = snprintf(msg, sizeof(msg),
		     "libsecbuf-sodium: %s[%d]: warning: sodium_malloc() "
		     "memory is NOT secret memory but %s (memfd_secret failed; before Linux 6.5 "
		     "boot with secretmem.enable=1); SECBUF_STRICT=1 refuses instead\n",
		     program_invocation_short_name, (int)getpid(), secbuf_lock_method_name(method));
	if (n > 0)
		(void)!write(STDERR_FILENO, msg,
			     (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

__attribute__((visibility("default")))
void *sodium_malloc(size_t size)
{
	int saved = errno, flags, method;
	void *p = NULL;

	sb_enter(__func__);
	flags = alloc_flags();
	if (flags >= 0 && sb_ready(flags) == 0)
		p = sb_alloc_guarded(size, flags, 1, &method);
	if (p) {
		if ((flags & SECBUF_SECRET) && method != SECBUF_LOCK_SECRETMEM)
			warn_not_secret(method);
		if (method == SECBUF_LOCK_NONE)
			warn_unlocked(size);
		errno = saved;
	}
	sb_leave();
	return p;
}

__attribute__((visibility("default")))
void *sodium_allocarray(size_t count, size_t size)
{
	/* libsodium's own bound, so that the same calls fail. */
	if (count > 0 && size >= SIZE_MAX / count) {
		errno = ENOMEM;
		return NULL;
	}
	return sodium_malloc(count * size);
}

static int ours(const void *ptr, const char *fn)
{
	int held;

	sb_enter(fn);
	held = sb_registry_holds(ptr);
	sb_leave();
	return held;
}

/*
 * The real libsodium's function, for a pointer we did not hand out.  Its
 * canary page must be mapped: otherwise the pointer is nobody's (most
 * likely one of ours, freed twice), and libsodium would only fault on it.
 */
static void *real(const char *name, void *ptr)
{
	uintptr_t canary_page = ((uintptr_t)ptr - SB_CANARY_SIZE) & ~(uintptr_t)(sb_caps()->page - 1);
	unsigned char vec;
	void *fn;

	if ((uintptr_t)ptr < SB_CANARY_SIZE ||
	    (mincore((void *)canary_page, 1, &vec) < 0 && errno == ENOMEM))
		sb_misuse("%s(%p): not a live buffer: nothing is mapped there "
			  "(double free or foreign pointer)", name, ptr);
	fn = dlsym(RTLD_NEXT, name);
	if (!fn)
		sb_misuse("%s(%p): not a buffer of libsecbuf-sodium, and no libsodium is "
			  "loaded to hand it to", name, ptr);
	return fn;
}

__attribute__((visibility("default")))
void sodium_free(void *ptr)
{
	void (*real_free)(void *);

	if (!ptr)
		return;
	if (ours(ptr, __func__)) {
		secbuf_free(ptr);	/* works at any protection: it makes the pages writable */
		return;
	}
	*(void **)&real_free = real(__func__, ptr);
	real_free(ptr);
}

static int protect(void *ptr, int access, const char *fn)
{
	int (*real_protect)(void *);

	if (!ptr || ours(ptr, fn))
		return secbuf_protect(ptr, access);
	*(void **)&real_protect = real(fn, ptr);
	return real_protect(ptr);
}

__attribute__((visibility("default")))
int sodium_mprotect_noaccess(void *ptr)
{
	return protect(ptr, SECBUF_NOACCESS, __func__);
}

__attribute__((visibility("default")))
int sodium_mprotect_readonly(void *ptr)
{
	return protect(ptr, SECBUF_READONLY, __func__);
}

__attribute__((visibility("default")))
int sodium_mprotect_readwrite(void *ptr)
{
	return protect(ptr, SECBUF_READWRITE, __func__);
}

static void warn_purge_failed(void)
{
	static const char msg[] = "libsecbuf-sodium: SECBUF_PURGE_ON_CRASH: the crash handlers "
				  "could not be installed\n";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1); /* nothing else to do */
}

/*
 * SECBUF_PURGE_ON_CRASH=1 (crashes) or =exit (crashes and exit) when the
 * drop-in is loaded, before main: a program that never heard of libsecbuf
 * gets the crash path, with its own handlers, installed later, first.
 */
__attribute__((constructor)) static void purge_from_environment(void)
{
	const char *env = secure_getenv("SECBUF_PURGE_ON_CRASH");
	static const char bad[] = "libsecbuf-sodium: SECBUF_PURGE_ON_CRASH must be 1, exit or 0; "
				  "no crash handlers installed\n";
	int saved = errno;

	if (!env || !*env || !strcmp(env, "0"))
		return;
	if (strcmp(env, "1") && strcmp(env, "exit"))
		(void)!write(STDERR_FILENO, bad, sizeof(bad) - 1); /* nothing else to do */
	else if (secbuf_purge_on_crash(strcmp(env, "exit") ? 0 : SECBUF_PURGE_AT_EXIT) < 0)
		warn_purge_failed();
	errno = saved;
}
