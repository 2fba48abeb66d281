/*
 * Per-thread state: the mincore vector for walking large buffers and the
 * cache of free packed slots.  Made on a thread's first need, kept in a
 * metadata block, and given back when the thread exits (its cached slots
 * return to their pools, so that emptied slabs can be unmapped).
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include "internal.h"

__thread struct sb_thread *sb_thread_self __attribute__((tls_model("initial-exec")));

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_err;

static void thread_exit(void *arg)
{
	struct sb_thread *t = arg;

	sb_packed_thread_exit(t);
	sb_thread_self = NULL;
	sb_meta_put(SB_META_THREAD, t);
}

static void make_exit_key(void)
{
	exit_key_err = pthread_key_create(&exit_key, thread_exit);
}

struct sb_thread *sb_thread_get(void)
{
	struct sb_thread *t = sb_thread_self;

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
	/* A recycled block: the counts; the bytes of the vector and bins do not matter. */
	memset(&t->walk_ready, 0, offsetof(struct sb_thread, bin) -
				  offsetof(struct sb_thread, walk_ready));
	if (pthread_setspecific(exit_key, t) != 0) {
		sb_meta_put(SB_META_THREAD, t);
		errno = ENOMEM;
		return NULL;
	}
	sb_thread_self = t;
	return t;
}

/* fork(): what the bins hold belongs to the parent's slabs. */
void sb_thread_fork_child(void)
{
	if (sb_thread_self)
		sb_packed_thread_forget(sb_thread_self);
}
