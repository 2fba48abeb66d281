/*
 * Per-thread state: the mincore vector for walking large buffers.  Made
 * on a thread's first need, kept in a metadata block, and given back when
 * the thread exits, after the exit hooks of the parts above (the packed
 * heap returns the thread's cached slots to their pools, so that emptied
 * slabs can be unmapped).
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include "process.h"

#define MAX_EXIT_HOOKS 4

static __thread struct sb_thread *self __attribute__((tls_model("initial-exec")));

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_err;
static void (*exit_hooks[MAX_EXIT_HOOKS])(void);
static unsigned int nexit_hooks;

/* Inside the library, as far as a signal handler is concerned: hooks take locks. */
static void thread_exit(void *arg)
{
	unsigned int i;

	sb_enter("pthread_exit");
	for (i = 0; i < nexit_hooks; i++)
		exit_hooks[i]();
	self = NULL;
	sb_meta_put(SB_META_THREAD, arg);
	sb_leave();
}

int sb_thread_on_exit(void (*fn)(void))
{
	if (nexit_hooks == MAX_EXIT_HOOKS) {
		errno = ENOSPC;
		return -1;
	}
	exit_hooks[nexit_hooks++] = fn;
	return 0;
}

static void make_exit_key(void)
{
	exit_key_err = pthread_key_create(&exit_key, thread_exit);
}

struct sb_thread *sb_thread_get(void)
{
	struct sb_thread *t = self;

	if (t)
		return t;
	pthread_once(&exit_key_once, make_exit_key);
	if (exit_key_err) {
		errno = exit_key_err;
		return NULL;
	}
	t = sb_meta_get(SB_META_THREAD);
	if (!t)
		return NULL;
	/* A recycled block: the flag; the bytes of the vector do not matter. */
	t->walk_ready = 0;
	if (pthread_setspecific(exit_key, t) != 0) {
		sb_meta_put(SB_META_THREAD, t);
		errno = ENOMEM;
		return NULL;
	}
	self = t;
	return t;
}
