/*
 * env: the drop-ins' environment, as they parse it.  The input is up to
 * three values separated by NUL bytes: SECBUF_STRICT and SECBUF_SECRET
 * (libsodium's drop-in, sodium/sodium.c: yes/no switches, a bad value
 * refused with a message) and SECBUF_LOCK (the method the probe forces,
 * os/probe.c).  Their parsers are static, so this file includes the two
 * sources: the real code, not a copy.
 *
 * Left out: SECBUF_PURGE_ON_CRASH, read by a constructor that installs
 * crash handlers, which would take over libFuzzer's own.
 */
#include "os/probe.c"
#include "sodium/sodium.c"

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

static void check_switch(struct env_switch *sw, const char *v)
{
	int s;

	sw->state = SWITCH_UNREAD;
	sw->complained = 0;
	if (setenv(sw->name, v, 1) < 0)
		abort();
	s = switch_state(sw);
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
	flags = alloc_flags();
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
