/*
 * The drop-ins' environment: SECBUF_STRICT, SECBUF_SECRET and
 * SECBUF_DEBUG, yes/no switches read at the first allocation;
 * SECBUF_LOCK, which the probe reads (os/probe.c) and this checks at the
 * first allocation; and SECBUF_PURGE_ON_CRASH, read when the drop-in is
 * loaded.  A value none of them accepts gets one line on standard error,
 * once per process, in one form: the variable, the value, what is
 * accepted and what the value does instead.  The programs these run in
 * never heard of libsecbuf; their own message would be "malloc failure".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dropin.h"

enum { SWITCH_UNREAD = -1, SWITCH_NO, SWITCH_YES, SWITCH_BAD };
struct env_switch {
	const char *name;
	const char *instead; /* what a bad value does */
	int state;
	int complained; /* the one line about a bad value was printed */
};
static struct env_switch strict = { "SECBUF_STRICT", NULL, SWITCH_UNREAD, 0 };
static struct env_switch secret = { "SECBUF_SECRET", NULL, SWITCH_UNREAD, 0 };
static struct env_switch debug = { "SECBUF_DEBUG",
				   "taken for a no: only the first refusal is printed",
				   SWITCH_UNREAD, 0 };
static int lock_checked; /* SECBUF_LOCK was held against the probe's answer */

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
 * The one line about a bad value: NAME="VALUE" is WHAT: INSTEAD.  What
 * the environment holds is shown printable and cut short, so that the
 * line stays one line.
 */
static void complain(const struct sb_dropin *d, const char *name, const char *value,
		     const char *what, const char *instead)
{
	char shown[36], msg[600];

	sb_dropin_say(msg,
		      snprintf(msg, sizeof(msg), "%s: %s[%d]: %s=\"%s\" is %s: %s\n", d->lib,
			       program_invocation_short_name, (int)getpid(), name,
			       sb_shown(shown, sizeof(shown), value), what, instead),
		      sizeof(msg));
}

/*
 * A value that is neither a yes nor a no is a mistake, most likely a yes
 * misspelt: taking it for a no would hand out memory the user asked not
 * to get (SECBUF_STRICT, SECBUF_SECRET: every allocation fails), or hide
 * what was asked to be shown (SECBUF_DEBUG: said, and taken for a no).
 */
static void complain_switch(const struct sb_dropin *d, struct env_switch *sw, const char *value)
{
	char instead[200];

	if (__atomic_exchange_n(&sw->complained, 1, __ATOMIC_RELAXED))
		return;
	if (sw->instead)
		snprintf(instead, sizeof(instead), "%s", sw->instead);
	else
		snprintf(instead, sizeof(instead), "every %s fails with EINVAL", d->call);
	complain(d, sw->name, value,
		 "neither a yes (1, true, yes, on) nor a no (0, false, no, off, empty)", instead);
}

static int switch_state(const struct sb_dropin *d, struct env_switch *sw)
{
	int s = __atomic_load_n(&sw->state, __ATOMIC_RELAXED);

	if (s == SWITCH_UNREAD) {
		const char *env = secure_getenv(sw->name);

		s = parse_switch(env);
		if (s == SWITCH_BAD)
			complain_switch(d, sw, env);
		__atomic_store_n(&sw->state, s, __ATOMIC_RELAXED);
	}
	return s;
}

/*
 * SECBUF_LOCK as the probe took it (os/probe.c reads it, this only
 * reports): a name that is no method, or a method this kernel lacks,
 * fails every allocation, best effort or not, for the life of the
 * process.  A forced method whose proof was refused is said here too: the
 * probe tries it again at each allocation, and the line says why until then.
 */
static void check_lock(const struct sb_dropin *d)
{
	const char *env = secure_getenv("SECBUF_LOCK");
	const struct sb_caps *c;
	char instead[600];

	if (__atomic_exchange_n(&lock_checked, 1, __ATOMIC_RELAXED) || !env || !*env)
		return;
	c = sb_caps();
	if (c->method >= 0)
		return;
	if (c->err == EINVAL) {
		snprintf(instead, sizeof(instead), "every %s fails with EINVAL", d->call);
		complain(d, "SECBUF_LOCK", env,
			 "not a lock method (maplockonfault, mlock2, mlock, none; unset or "
			 "empty: the best this kernel has)",
			 instead);
	} else if (!sb_lock_refused(c->err)) {
		snprintf(instead, sizeof(instead),
			 "every %s fails with %s; unset it for the best this kernel has", d->call,
			 strerrorname_np(c->err) ? strerrorname_np(c->err) : "an error");
		complain(d, "SECBUF_LOCK", env, "a method this kernel lacks (no call of it worked)",
			 instead);
	} else {
		char why[400];
		int n = snprintf(instead, sizeof(instead), "every %s fails with %s: ", d->call,
				 strerrorname_np(c->err) ? strerrorname_np(c->err) : "an error");

		sb_explain_method(why, sizeof(why));
		/* why is "SECBUF_LOCK=NAME: cause": the name is said already. */
		if (n > 0 && (size_t)n < sizeof(instead))
			snprintf(instead + n, sizeof(instead) - n, "%s",
				 strchr(why, ' ') ? strchr(why, ' ') + 1 : why);
		complain(d, "SECBUF_LOCK", env, "a method this process may not use now", instead);
	}
}

int sb_dropin_flags(const struct sb_dropin *d)
{
	int st = switch_state(d, &strict), se = switch_state(d, &secret);

	sb_dropin_listen(d, switch_state(d, &debug) == SWITCH_YES);
	if (st == SWITCH_BAD || se == SWITCH_BAD) {
		errno = EINVAL;
		return -1;
	}
	/* Only once the switches let allocations reach the method: one fault, one line. */
	check_lock(d);
	return (st == SWITCH_YES ? 0 : SECBUF_BEST_EFFORT) | (se == SWITCH_YES ? SECBUF_SECRET : 0);
}

/*
 * Before main: a program that never heard of libsecbuf gets the crash
 * path, with its own handlers, installed later, first.  Once per process
 * by nature: a constructor.
 */
void sb_dropin_purge_from_environment(const struct sb_dropin *d)
{
	const char *env = secure_getenv("SECBUF_PURGE_ON_CRASH");
	char msg[200];
	int saved = errno;

	if (!env || !*env || !strcmp(env, "0"))
		return;
	if (strcmp(env, "1") && strcmp(env, "exit"))
		complain(d, "SECBUF_PURGE_ON_CRASH", env, "neither 1, exit nor 0 (or empty)",
			 "no crash handlers are installed");
	else if (secbuf_purge_on_crash(strcmp(env, "exit") ? 0 : SECBUF_PURGE_AT_EXIT) < 0)
		sb_dropin_say(msg,
			      snprintf(msg, sizeof(msg),
				       "%s: %s[%d]: SECBUF_PURGE_ON_CRASH: the crash handlers "
				       "could not be installed\n",
				       d->lib, program_invocation_short_name, (int)getpid()),
			      sizeof(msg));
	errno = saved;
}
