/*
 * fork(): a child has only the thread that forked, so a lock another
 * thread held at that moment would stay held in the child for ever.  Every
 * lock of the library is taken before fork() and released on both sides;
 * the child then sets its own state straight (a new key on first use, the
 * parent's buffers and slabs set aside).  The order is the order the library nests
 * them in.
 */
#include <pthread.h>
#include "internal.h"

static void prepare(void)
{
	sb_key_fork_prepare();
	sb_registry_fork_prepare();
	sb_pool_fork_prepare();
	sb_meta_fork_prepare();
}

static void parent(void)
{
	sb_meta_fork_parent();
	sb_pool_fork_parent();
	sb_registry_fork_parent();
	sb_key_fork_parent();
}

static void child(void)
{
	sb_meta_fork_child();
	sb_pool_fork_child();
	sb_thread_fork_child();
	sb_registry_fork_child();
	sb_key_fork_child();
}

int sb_fork_init(void)
{
	return pthread_atfork(prepare, parent, child);
}
