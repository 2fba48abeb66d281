/*
 * The drop-ins' environment: SECBUF_STRICT and SECBUF_SECRET, yes/no
 * switches read at the first allocation, and SECBUF_PURGE_ON_CRASH, read
 * when the drop-in is loaded.
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
	int state;
	int complained; /* the one line about a bad value was printed */
};
static struct env_switch strict = { "SECBUF_STRICT", SWITCH_UNREAD, 0 };
static struct env_switch secret = { "SECBUF_SECRET", SWITCH_UNREAD, 0 };

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
static void complain(const struct sb_dropin *d, struct env_switch *sw, const char *value)
{
	char shown[33], msg[400];
	size_t i;

	if (__atomic_exchange_n(&sw->complained, 1, __ATOMIC_RELAXED))
		return;
	for (i = 0; value[i] && i < sizeof(shown) - 1; i++)
		shown[i] = value[i] >= ' ' && value[i] <= '~' ? value[i] : '?';
	shown[i] = 0;
	sb_dropin_say(msg,
		      snprintf(msg, sizeof(msg),
			       "%s: %s[%d]: %s=\"%s%s\" is neither a yes (1, true, yes, on) "
			       "nor a no (0, false, no, off, empty): every %s fails with EINVAL\n",
			       d->lib, program_invocation_short_name, (int)getpid(), sw->name,
			       shown, value[i] ? "..." : "", d->call),
		      sizeof(msg));
}

static int switch_state(const struct sb_dropin *d, struct env_switch *sw)
{
	int s = __atomic_load_n(&sw->state, __ATOMIC_RELAXED);

	if (s == SWITCH_UNREAD) {
		const char *env = secure_getenv(sw->name);

		s = parse_switch(env);
		if (s == SWITCH_BAD)
			complain(d, sw, env);
		__atomic_store_n(&sw->state, s, __ATOMIC_RELAXED);
	}
	return s;
}

int sb_dropin_flags(const struct sb_dropin *d)
{
	int st = switch_state(d, &strict), se = switch_state(d, &secret);

	if (st == SWITCH_BAD || se == SWITCH_BAD) {
		errno = EINVAL;
		return -1;
	}
	return (st == SWITCH_YES ? 0 : SECBUF_BEST_EFFORT) | (se == SWITCH_YES ? SECBUF_SECRET : 0);
}

/*
 * Before main: a program that never heard of libsecbuf gets the crash
 * path, with its own handlers, installed later, first.
 */
void sb_dropin_purge_from_environment(const struct sb_dropin *d)
{
	const char *env = secure_getenv("SECBUF_PURGE_ON_CRASH");
	char msg[200];
	int saved = errno;

	if (!env || !*env || !strcmp(env, "0"))
		return;
	if (strcmp(env, "1") && strcmp(env, "exit"))
		sb_dropin_say(msg,
			      snprintf(msg, sizeof(msg),
				       "%s: SECBUF_PURGE_ON_CRASH must be 1, exit or 0; "
				       "no crash handlers installed\n",
				       d->lib),
			      sizeof(msg));
	else if (secbuf_purge_on_crash(strcmp(env, "exit") ? 0 : SECBUF_PURGE_AT_EXIT) < 0)
		sb_dropin_say(msg,
			      snprintf(msg, sizeof(msg),
				       "%s: SECBUF_PURGE_ON_CRASH: the crash handlers "
				       "could not be installed\n",
				       d->lib),
			      sizeof(msg));
	errno = saved;
}
