/*
 * The wiring: the one place that knows every part.  The probe decides the
 * method; then the parts that hold locks across fork() are handed to
 * process/fork.c in the order the library nests those locks, the packed
 * heap's thread-exit hook to process/thread.c, and the key is drawn.
 */
#include <errno.h>
#include <pthread.h>
#include "init.h"

static const struct sb_fork_hooks fork_hooks[] = {
	{ sb_key_fork_prepare, sb_key_fork_parent, sb_key_fork_child },
	{ sb_registry_fork_prepare, sb_registry_fork_parent, sb_registry_fork_child },
	{ NULL, NULL, sb_packed_fork_child }, /* bins: the forking thread's only */
	{ sb_pool_fork_prepare, sb_pool_fork_parent, sb_pool_fork_child },
	{ sb_meta_fork_prepare, sb_meta_fork_parent, sb_meta_fork_child },
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_err;

static void init(void)
{
	const struct sb_caps *caps = sb_caps();
	int saved = errno;

	if (caps->method < 0)
		init_err = caps->err;
	else if (sb_fork_init(fork_hooks, sizeof(fork_hooks) / sizeof(fork_hooks[0])) < 0 ||
		 sb_thread_on_exit(sb_packed_thread_exit) < 0)
		init_err = errno;
	else if (sb_key_ready() < 0)
		init_err = errno;
	errno = saved;
}

/* The process's wiring, without the key a forked child has yet to draw. */
static int wired(void)
{
	pthread_once(&init_once, init);
	if (init_err) {
		errno = init_err;
		return -1;
	}
	return 0;
}

int sb_ready(void)
{
	if (wired() < 0)
		return -1;
	/* A forked child draws its own key on its first allocation. */
	return sb_key_ready();
}

SB_API
int secbuf_lock_method(void)
{
	int saved = errno, method;

	sb_enter(__func__);
	method = wired() < 0 ? -1 : sb_caps()->method;
	if (method >= 0)
		errno = saved;
	sb_leave();
	return method;
}
