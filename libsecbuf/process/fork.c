/*
 * fork(): a child has only the thread that forked, so a lock another
 * thread held at that moment would stay held in the child for ever.  Every
 * lock of the library is taken before fork() and released on both sides;
 * the child then sets its own state straight (a new key on first use, the
 * parent's buffers and slabs set aside).  The hooks come from init.c, in
 * the order the library nests its locks.
 *
 * While the locks are held the thread counts as inside a call of the
 * library: a signal handler that calls it then aborts with a message
 * instead of deadlocking on a lock its own thread holds.
 */
#include <errno.h>
#include <pthread.h>
#include "process.h"

static const struct sb_fork_hooks *hooks;
static size_t nhooks;

static void prepare(void)
{
	size_t i;

	sb_enter("fork");
	for (i = 0; i < nhooks; i++)
		if (hooks[i].prepare)
			hooks[i].prepare();
}

static void parent(void)
{
	size_t i;

	for (i = nhooks; i-- > 0;)
		if (hooks[i].parent)
			hooks[i].parent();
	sb_leave();
}

static void child(void)
{
	size_t i;

	for (i = nhooks; i-- > 0;)
		if (hooks[i].child)
			hooks[i].child();
	sb_leave();
}

int sb_fork_init(const struct sb_fork_hooks *h, size_t n)
{
	int err;

	hooks = h;
	nhooks = n;
	err = pthread_atfork(prepare, parent, child);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
