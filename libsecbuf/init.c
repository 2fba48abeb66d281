/*
 * The wiring: the one place that knows every part.  Once per process, the
 * parts that hold locks across fork() are handed to process/fork.c in the
 * order the library nests those locks, the packed heap's thread-exit
 * hook to process/thread.c, and each part's purge to process/purge.c.  Before each allocation, the probe's answer
 * (which may still change while the lock budget is spent) and the key.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "init.h"

static const struct sb_fork_hooks fork_hooks[] = {
	{ sb_key_fork_prepare, sb_key_fork_parent, sb_key_fork_child },
	{ sb_registry_fork_prepare, sb_registry_fork_parent, sb_registry_fork_child },
	{ NULL, NULL, sb_packed_fork_child }, /* bins: the forking thread's only */
	{ sb_pool_fork_prepare, sb_pool_fork_parent, sb_pool_fork_child },
	{ sb_meta_fork_prepare, sb_meta_fork_parent, sb_meta_fork_child },
	{ sb_count_fork_prepare, sb_count_fork_parent, sb_count_fork_child }, /* a leaf */
	{ NULL, NULL, sb_secret_fork_child },
};

/* Each part that holds secrets, and how to name a fault in its guard pages. */
static const struct sb_purge_hooks purge_guarded = { sb_registry_purge, sb_registry_name_fault };
static const struct sb_purge_hooks purge_packed = { sb_packed_purge, NULL };

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_err;

/*
 * SECBUF_CHECK_ON_EXIT=1, a debugging aid: every live buffer's canaries
 * and every packed secret's guard bytes are checked when the process
 * exits, so that an overflow into padding (which only a free would catch)
 * of a buffer the program never frees is reported, and aborts.
 */
static void check_at_exit(void)
{
	sb_registry_check_all("at exit (SECBUF_CHECK_ON_EXIT): buffer");
	sb_packed_check_all("at exit (SECBUF_CHECK_ON_EXIT): packed secret");
}

static int check_on_exit(void)
{
	const char *v = secure_getenv("SECBUF_CHECK_ON_EXIT");

	if (!v || !*v || !strcmp(v, "0"))
		return 0;
	if (strcmp(v, "1")) {
		char line[200], shown[36];

		/* One line, as the drop-ins say a bad value (dropin/common/env.c). */
		snprintf(line, sizeof(line),
			 "libsecbuf: %s[%d]: SECBUF_CHECK_ON_EXIT=\"%s\" is neither 1 nor 0 (or "
			 "empty): buffers are not checked at exit\n",
			 program_invocation_short_name, (int)getpid(),
			 sb_shown(shown, sizeof(shown), v));
		(void)!write(STDERR_FILENO, line, strlen(line));
		return 0;
	}
	return atexit(check_at_exit) == 0 ? 0 : -1;
}

static void init(void)
{
	int saved = errno;

	if (sb_fork_init(fork_hooks, sizeof(fork_hooks) / sizeof(fork_hooks[0])) < 0 ||
	    sb_thread_on_exit(sb_packed_thread_exit) < 0 || sb_purge_register(&purge_guarded) < 0 ||
	    sb_purge_register(&purge_packed) < 0 || check_on_exit() < 0)
		init_err = errno ? errno : ENOMEM;
	errno = saved;
}

/* The process's wiring, made once. */
int sb_wired(void)
{
	pthread_once(&init_once, init);
	if (init_err) {
		errno = init_err;
		return -1;
	}
	return 0;
}

/*
 * Every condition below held at the last call and cannot have changed
 * since but for a fork (the child's key epoch is 0 until it draws): the
 * probe has its final answer, and the key's page is locked.
 */
static int settled;

static int ready_slow(unsigned flags)
{
	const struct sb_caps *caps;
	int locked;

	__atomic_store_n(&settled, 0, __ATOMIC_RELAXED);
	if (sb_wired() < 0)
		return -1;
	caps = sb_caps_refresh();
	if (caps->method < 0) {
		errno = caps->err;
		return -1;
	}
	/* A forked child draws its own key on its first allocation. */
	if (sb_key_ready() < 0)
		return -1;
	/* The key that guards locked buffers is locked with them, or they are not made. */
	locked = caps->method == SECBUF_LOCK_NONE || sb_key_lock() == 0;
	if (!locked && !(flags & SECBUF_BEST_EFFORT))
		return -1;
	__atomic_store_n(&settled, locked && !sb_caps_pending(), __ATOMIC_RELAXED);
	return 0;
}

int sb_ready(unsigned flags)
{
	/* The refusals noted from here on are this allocation's. */
	sb_refusal_clear();
	if (!__builtin_expect(__atomic_load_n(&settled, __ATOMIC_RELAXED) && sb_key_epoch(), 1) &&
	    ready_slow(flags) < 0) {
		sb_report_failure(0, flags);
		return -1;
	}
	return flags & SECBUF_INHERIT ? sb_key_inherit() : 0;
}

/* As an allocation would set up the process, so that the answer is the one it gets. */
SB_API
int secbuf_lock_method(void)
{
	int saved = errno, method;

	sb_enter(__func__);
	method = sb_ready(SECBUF_BEST_EFFORT) < 0 ? -1 : sb_caps()->method;
	if (method >= 0)
		errno = saved;
	sb_leave();
	return method;
}
