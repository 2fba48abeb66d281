/*
 * env: the drop-ins' environment, as they parse it.  The input is up to
 * three values separated by NUL bytes: SECBUF_STRICT and SECBUF_SECRET
 * (the drop-ins' yes/no switches, dropin/common/env.c: a bad value refused
 * with a message) and SECBUF_LOCK (the method the probe forces,
 * os/probe.c).  Their parsers are static, so this file includes the two
 * sources: the real code, not a copy.
 *
 * Left out: SECBUF_PURGE_ON_CRASH, whose yes installs crash handlers,
 * which would take over libFuzzer's own.
 */
#include "dropin/common/env.c"
#include "os/probe.c"

#include "fuzz.h"

/* The next NUL-terminated value of the input, copied (setenv wants a string). */
static const char *value(struct fuzz_in *in, char *buf, size_t size)
{
	size_t n = 0;

	while (in->len && *in->p && n < size - 1) {
		buf[n++] = (char)*in->p++;
		in->len--;
	}
	if (in->len) { /* the separator, or the rest of a value too long */
		in->p++;
		in->len--;
	}
	buf[n] = '\0';
	return buf;
}

static const struct sb_dropin fuzzed = { "env-fuzz", "the fuzzed call" };

static void check_switch(struct env_switch *sw, const char *v)
{
	int s;

	sw->state = SWITCH_UNREAD;
	sw->complained = 0;
	if (setenv(sw->name, v, 1) < 0)
		abort();
	s = switch_state(&fuzzed, sw);
	/* The empty value is a no, as is an unset one; a bad value is never a yes. */
	if (s != SWITCH_YES && s != SWITCH_NO && s != SWITCH_BAD)
		abort();
	if (!*v && s != SWITCH_NO)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sb_caps proven;
	static int probed;
	struct fuzz_in in = { data, size };
	char st[512], se[512], lock[512];
	struct sb_caps c;
	int flags, m;

	if (!probed++)
		probe_kernel(&proven);
	check_switch(&strict, value(&in, st, sizeof(st)));
	check_switch(&secret, value(&in, se, sizeof(se)));
	flags = sb_dropin_flags(&fuzzed);
	if (flags < 0 ? errno != EINVAL : (flags & ~(SECBUF_BEST_EFFORT | SECBUF_SECRET)) != 0)
		abort();
	value(&in, lock, sizeof(lock));
	c = proven;
	m = *lock ? forced_method(&c, lock) : default_method(&c);
	/* Only a method's exact name forces it; anything else is EINVAL or the method's refusal. */
	if (m >= 0 && strcmp(lock, "") && strcmp(secbuf_lock_method_name(m), lock))
		abort();
	if (m < 0 && errno != EINVAL && errno != ENOSYS && !sb_lock_refused(errno))
		abort();
	return 0;
}
