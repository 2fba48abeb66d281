/*
 * Pools: per size class and kind (locked, unlocked, secret), the slabs that
 * have slots to hand out, behind one lock.  Threads come here only when
 * their bin runs empty or full (packed.c), a batch at a time, so the lock
 * is taken once per SB_BIN_SLOTS / 2 secrets at most.  A slab whose every
 * slot has come back is wiped and unmapped at once.
 *
 * After fork() a child has a new key, and the slabs of its parent are no
 * use to it (their pages read as zeros there, and are not locked): the
 * pools forget them.  Their metadata stays, so that a parent's secret
 * used in the child is still recognised and named.
 */
#include <pthread.h>
#include "slab.h"

struct pool {
	pthread_mutex_t lock;
	uint64_t epoch;		     /* of the key its slabs were made under */
	struct sb_slab *head, *tail; /* slabs with slots to hand out */
};

static struct pool pools[SB_KINDS][SB_CLASSES] = {
	[0 ... SB_KINDS - 1] = { [0 ... SB_CLASSES - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER } }
};

static void forget_slabs(struct pool *pl)
{
	pl->head = pl->tail = NULL;
	pl->epoch = sb_key_epoch();
}

/* A child forked without the atfork handlers (a raw clone) is caught here. */
static struct pool *lock_pool(enum sb_pool_kind kind, unsigned int cls)
{
	struct pool *pl = &pools[kind][cls];

	pthread_mutex_lock(&pl->lock);
	if (pl->epoch != sb_key_epoch())
		forget_slabs(pl);
	return pl;
}

static void link_tail(struct pool *pl, struct sb_slab *s)
{
	s->next = NULL;
	s->prev = pl->tail;
	if (pl->tail)
		pl->tail->next = s;
	else
		pl->head = s;
	pl->tail = s;
	s->listed = 1;
}

static void unlink_slab(struct pool *pl, struct sb_slab *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		pl->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		pl->tail = s->prev;
	s->listed = 0;
}

/*
 * Up to max free slots of one slab, lowest address first; a new slab is
 * made when no slab has a slot left.  Returns how many, or -1 with errno.
 */
int sb_pool_take(enum sb_pool_kind kind, unsigned int cls, void **out, unsigned int max)
{
	struct pool *pl = lock_pool(kind, cls);
	struct sb_slab *s = pl->head;
	unsigned int n;

	if (!s) {
		s = sb_slab_make(cls, kind);
		if (!s) {
			pthread_mutex_unlock(&pl->lock);
			return -1;
		}
		link_tail(pl, s);
	}
	sb_slab_verify(s, (void *)s->block, "secbuf_alloc");
	n = sb_slab_take(s, out, max);
	if (sb_slab_exhausted(s))
		unlink_slab(pl, s);
	pthread_mutex_unlock(&pl->lock);
	return n;
}

/* Slots back to their slabs; a slab that gets its last one back is torn down. */
void sb_pool_give(enum sb_pool_kind kind, unsigned int cls, void *const *slots, unsigned int n)
{
	struct pool *pl = lock_pool(kind, cls);
	unsigned int k;

	for (k = 0; k < n; k++) {
		struct sb_slab *s = sb_slab_of(slots[k]);
		int empty = sb_slab_give(
			s, sb_slab_index(s, (uintptr_t)slots[k] - sb_slab_first(slots[k])));

		if (!s->listed)
			link_tail(pl, s);
		if (empty) {
			unlink_slab(pl, s);
			sb_slab_unmake(s);
		}
	}
	pthread_mutex_unlock(&pl->lock);
}

/* While held, no slab of the pool is torn down: 1 if taken now. */
int sb_pool_trylock(const struct sb_slab *s)
{
	return pthread_mutex_trylock(&pools[s->kind][s->cls].lock) == 0;
}

/* While held, no slab of the pool is torn down: secbuf_stat's mincore. */
void sb_pool_lock(const struct sb_slab *s)
{
	pthread_mutex_lock(&pools[s->kind][s->cls].lock);
}

void sb_pool_unlock(const struct sb_slab *s)
{
	pthread_mutex_unlock(&pools[s->kind][s->cls].lock);
}

void sb_pool_fork_prepare(void)
{
	unsigned int k, c;

	for (k = 0; k < SB_KINDS; k++)
		for (c = 0; c < SB_CLASSES; c++)
			pthread_mutex_lock(&pools[k][c].lock);
}

void sb_pool_fork_parent(void)
{
	unsigned int k, c;

	for (k = 0; k < SB_KINDS; k++)
		for (c = 0; c < SB_CLASSES; c++)
			pthread_mutex_unlock(&pools[k][c].lock);
}

/* A child that kept the key keeps the inherited kinds' slabs (packed.c locks them again). */
void sb_pool_fork_child(void)
{
	int kept = sb_key_kept();
	unsigned int k, c;

	for (k = 0; k < SB_KINDS; k++)
		for (c = 0; c < SB_CLASSES; c++) {
			if (!kept || !sb_kind_inherited(k))
				forget_slabs(&pools[k][c]);
			pthread_mutex_unlock(&pools[k][c].lock);
		}
}
